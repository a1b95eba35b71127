//! Where the plugin listens: a unix socket inside a fresh private temporary directory.
//!
//! Why unix and not tcp: go-plugin itself serves on a unix socket on every platform but
//! Windows, so Terraform's client handles it natively; the socket lives in a 0700 directory
//! that only our user can enter, which is a second lock besides mTLS; and there is no port
//! range to scan or share with the other provider processes Terraform starts in parallel.
//! go-plugin puts the socket file straight into the temp directory; we add a private directory
//! around it (removed when the listener is dropped). `PLUGIN_UNIX_SOCKET_DIR` chooses the parent
//! directory and `PLUGIN_UNIX_SOCKET_GROUP` (a group name or numeric id) makes the socket group
//! writable (0660) and the directory group-enterable (0710), as go-plugin does for the socket.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use tokio::net::UnixListener;

use super::error::PluginError;
use super::handshake::Endpoint;

/// Environment variable naming the directory for the socket.
pub const SOCKET_DIR_ENV: &str = "PLUGIN_UNIX_SOCKET_DIR";
/// Environment variable naming the group that may also connect.
pub const SOCKET_GROUP_ENV: &str = "PLUGIN_UNIX_SOCKET_GROUP";

/// A bound unix socket. Dropping it removes the socket and its directory.
#[derive(Debug)]
pub struct SocketListener {
    listener: UnixListener,
    path: PathBuf,
    // Held for its Drop, which removes the directory.
    _dir: tempfile::TempDir,
}

impl SocketListener {
    /// Binds a new socket, honouring `PLUGIN_UNIX_SOCKET_DIR` and `PLUGIN_UNIX_SOCKET_GROUP`.
    /// Must be called inside a tokio runtime.
    pub fn bind_from_env() -> Result<Self, PluginError> {
        let parent = std::env::var_os(SOCKET_DIR_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let group = std::env::var(SOCKET_GROUP_ENV).ok().filter(|v| !v.is_empty());
        Self::bind(parent.as_deref(), group.as_deref())
    }

    /// Binds a new socket in a fresh directory under `parent` (the system temp dir if `None`).
    pub fn bind(parent: Option<&Path>, group: Option<&str>) -> Result<Self, PluginError> {
        let mut builder = tempfile::Builder::new();
        builder
            .prefix("plugin")
            .permissions(fs::Permissions::from_mode(0o700));
        let dir = match parent {
            Some(p) => builder.tempdir_in(p),
            None => builder.tempdir(),
        }
        .map_err(PluginError::io("creating the plugin socket directory"))?;
        let path = dir.path().join("plugin.sock");
        let listener = UnixListener::bind(&path).map_err(PluginError::io(format!(
            "binding the unix socket {}",
            path.display()
        )))?;
        if let Some(group) = group {
            let gid = resolve_group(group)?;
            share_with_group(dir.path(), gid, 0o710)?;
            share_with_group(&path, gid, 0o660)?;
        }
        Ok(Self {
            listener,
            path,
            _dir: dir,
        })
    }

    /// How the handshake line and reattach JSON name this socket.
    pub fn endpoint(&self) -> Endpoint {
        Endpoint {
            network: "unix",
            address: self.path.to_string_lossy().into_owned(),
        }
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Separates the listener (for the accept loop) from the guard that removes the socket
    /// directory when dropped.
    pub fn split(self) -> (UnixListener, SocketDir) {
        (
            self.listener,
            SocketDir {
                _dir: self._dir,
                _path: self.path,
            },
        )
    }
}

/// Keeps the socket's directory alive; dropping it removes the directory and the socket.
#[derive(Debug)]
pub struct SocketDir {
    _dir: tempfile::TempDir,
    _path: PathBuf,
}

fn share_with_group(path: &Path, gid: u32, mode: u32) -> Result<(), PluginError> {
    std::os::unix::fs::chown(path, None, Some(gid)).map_err(PluginError::io(format!(
        "giving {} to group {gid}",
        path.display()
    )))?;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).map_err(PluginError::io(format!(
        "making {} group accessible",
        path.display()
    )))
}

/// A numeric group id, or a group name looked up in `/etc/group`.
fn resolve_group(group: &str) -> Result<u32, PluginError> {
    if let Ok(gid) = group.parse::<u32>() {
        return Ok(gid);
    }
    let table = fs::read_to_string("/etc/group").map_err(PluginError::io("reading /etc/group"))?;
    gid_in_group_table(&table, group).ok_or_else(|| PluginError::Io {
        context: format!("{SOCKET_GROUP_ENV}={group}"),
        source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such group"),
    })
}

/// Finds `name` in the text of an `/etc/group` file (`name:password:gid:members`).
fn gid_in_group_table(table: &str, name: &str) -> Option<u32> {
    table.lines().find_map(|line| {
        let mut fields = line.split(':');
        let n = fields.next()?;
        let _password = fields.next()?;
        let gid = fields.next()?;
        (n == name).then(|| gid.parse().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_table_lookup() {
        let table = "root:x:0:\nwheel:x:10:alice,bob\nbroken\nstaff:*:50:\n";
        assert_eq!(gid_in_group_table(table, "wheel"), Some(10));
        assert_eq!(gid_in_group_table(table, "staff"), Some(50));
        assert_eq!(gid_in_group_table(table, "root"), Some(0));
        assert_eq!(gid_in_group_table(table, "nobody"), None);
        assert_eq!(gid_in_group_table(table, "broken"), None);
    }

    #[tokio::test]
    async fn socket_lives_in_private_dir_and_is_removed_on_drop() {
        let parent = tempfile::tempdir().unwrap();
        let sock = SocketListener::bind(Some(parent.path()), None).unwrap();
        let path = sock.path().to_path_buf();
        let dir = path.parent().unwrap().to_path_buf();
        assert!(dir.starts_with(parent.path()));
        let mode = fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        assert_eq!(sock.endpoint().network, "unix");
        assert_eq!(sock.endpoint().address, path.to_string_lossy());
        drop(sock);
        assert!(!dir.exists());
    }

    #[tokio::test]
    async fn group_option_shares_socket() {
        let parent = tempfile::tempdir().unwrap();
        let gid = fs::metadata(parent.path()).unwrap();
        let gid = std::os::unix::fs::MetadataExt::gid(&gid);
        let sock = SocketListener::bind(Some(parent.path()), Some(&gid.to_string())).unwrap();
        let mode = fs::metadata(sock.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o660);
    }
}

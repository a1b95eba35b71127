//! Thin wrappers over the EC2 calls of the teardown that `force_destroy` runs when Karpenter is
//! gone: find and terminate the instances Karpenter launched (by tag), and find and delete the
//! launch templates it made. Each returns plain data or an [`AwsError`] naming the IAM action;
//! "does not exist" is success for the deletes. Every listing is paginated.

use std::collections::BTreeMap;

use aws_sdk_ec2::Client;
use aws_sdk_ec2::types::{Filter, Tag};

use super::error::{AwsError, AwsErrorKind};

/// An instance as the teardown sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceInfo {
    pub id: String,
    /// `pending`, `running`, `shutting-down`, `terminated`, `stopping`, `stopped`.
    pub state: String,
    pub tags: BTreeMap<String, String>,
}

/// A launch template as the teardown sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchTemplateInfo {
    pub id: String,
    pub name: String,
    pub tags: BTreeMap<String, String>,
}

/// A `tag:KEY = VALUE` filter.
pub fn tag_filter(key: &str, value: &str) -> Filter {
    Filter::builder().name(format!("tag:{key}")).values(value).build()
}

/// The EC2 calls of the teardown.
#[derive(Debug, Clone)]
pub struct Ec2 {
    client: Client,
    /// Where the calls go, for connection and TLS diagnostics.
    endpoint: String,
}

/// Codes EC2 answers when what a call names no longer exists.
/// An EC2 tag list as a map (a tag without a key is skipped, a missing value is empty).
fn tag_map(tags: &[Tag]) -> BTreeMap<String, String> {
    tags.iter()
        .filter_map(|t| Some((t.key()?.to_string(), t.value().unwrap_or_default().to_string())))
        .collect()
}

fn is_gone(code: Option<&str>) -> bool {
    matches!(
        code,
        Some(
            "InvalidInstanceID.NotFound"
                | "InvalidLaunchTemplateId.NotFound"
                | "InvalidLaunchTemplateName.NotFoundException"
                | "InvalidLaunchTemplateId.Malformed"
        )
    )
}

impl Ec2 {
    pub fn new(client: Client, endpoint: String) -> Self {
        Self { client, endpoint }
    }

    /// Instances matching every filter (all tag filters must hold), in any state but
    /// `terminated`.
    pub async fn instances(&self, filters: Vec<Filter>) -> Result<Vec<InstanceInfo>, AwsError> {
        let live = Filter::builder()
            .name("instance-state-name")
            .set_values(Some(
                ["pending", "running", "shutting-down", "stopping", "stopped"]
                    .map(String::from)
                    .to_vec(),
            ))
            .build();
        let mut filters = filters;
        filters.push(live);
        let mut found = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let out = self
                .client
                .describe_instances()
                .set_filters(Some(filters.clone()))
                .set_next_token(token.clone())
                .send()
                .await
                .map_err(|e| AwsError::from_sdk("ec2:DescribeInstances", &e).via(&self.endpoint))?;
            for reservation in out.reservations() {
                for i in reservation.instances() {
                    let Some(id) = i.instance_id() else { continue };
                    found.push(InstanceInfo {
                        id: id.to_string(),
                        state: i
                            .state()
                            .and_then(|s| s.name())
                            .map(|n| n.as_str().to_string())
                            .unwrap_or_default(),
                        tags: tag_map(i.tags()),
                    });
                }
            }
            token = out.next_token().filter(|t| !t.is_empty()).map(str::to_string);
            if token.is_none() {
                return Ok(found);
            }
        }
    }

    /// Terminates `ids` (at most 1000 per call, as EC2 takes them). Already gone is success.
    pub async fn terminate(&self, ids: &[String]) -> Result<(), AwsError> {
        for chunk in ids.chunks(1000) {
            let result = self
                .client
                .terminate_instances()
                .set_instance_ids(Some(chunk.to_vec()))
                .send()
                .await;
            if let Err(e) = result {
                let err = AwsError::from_sdk("ec2:TerminateInstances", &e).via(&self.endpoint);
                if !is_gone(err.code.as_deref()) {
                    return Err(err);
                }
            }
        }
        Ok(())
    }

    /// Launch templates matching every filter.
    pub async fn launch_templates(&self, filters: Vec<Filter>) -> Result<Vec<LaunchTemplateInfo>, AwsError> {
        let mut found = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let out = self
                .client
                .describe_launch_templates()
                .set_filters(Some(filters.clone()))
                .set_next_token(token.clone())
                .send()
                .await
                .map_err(|e| AwsError::from_sdk("ec2:DescribeLaunchTemplates", &e).via(&self.endpoint))?;
            for lt in out.launch_templates() {
                let (Some(id), Some(name)) = (lt.launch_template_id(), lt.launch_template_name()) else {
                    continue;
                };
                found.push(LaunchTemplateInfo {
                    id: id.to_string(),
                    name: name.to_string(),
                    tags: tag_map(lt.tags()),
                });
            }
            token = out.next_token().filter(|t| !t.is_empty()).map(str::to_string);
            if token.is_none() {
                return Ok(found);
            }
        }
    }

    /// Deletes the launch template `id`. Already gone is success.
    pub async fn delete_launch_template(&self, id: &str) -> Result<(), AwsError> {
        match self
            .client
            .delete_launch_template()
            .launch_template_id(id)
            .send()
            .await
        {
            Ok(_) => Ok(()),
            Err(e) => {
                let err = AwsError::from_sdk("ec2:DeleteLaunchTemplate", &e).via(&self.endpoint);
                if is_gone(err.code.as_deref()) || err.kind == AwsErrorKind::NotFound {
                    Ok(())
                } else {
                    Err(err)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gone_codes() {
        assert!(is_gone(Some("InvalidInstanceID.NotFound")));
        assert!(is_gone(Some("InvalidLaunchTemplateId.NotFound")));
        assert!(!is_gone(Some("UnauthorizedOperation")));
        assert!(!is_gone(None));
    }

    #[test]
    fn tag_filters_name_the_tag() {
        let f = tag_filter("karpenter.sh/nodepool", "default");
        assert_eq!(f.name(), Some("tag:karpenter.sh/nodepool"));
        assert_eq!(f.values(), ["default".to_string()]);
    }
}

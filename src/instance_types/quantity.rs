//! Kubernetes resource quantities (`100m`, `1.5Gi`, `2e3`, `4`) as numbers in base units
//! (cores, bytes, counts): the one reader of their value, for comparing a pool's `limits` with
//! what an instance type holds, the instance-type table's figures and volume sizes. Only what
//! a comparison needs: a value, not Kubernetes' canonical form. (Whether a text is a quantity
//! at all is the CRDs' pattern, `resources::kube::kind::rules::numbers::QUANTITY`.)

/// A quantity's signed number and its suffix (`-1.5`, `Gi`; `2`, `e3`), surrounding blanks
/// ignored; `None` when it does not start with a number.
pub fn split(s: &str) -> Option<(&str, &str)> {
    let s = s.trim();
    let at = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(s.len());
    let (number, suffix) = s.split_at(at);
    (!(number.is_empty() || number == "+" || number == "-")).then_some((number, suffix))
}

/// The value of a quantity in base units, `None` when `s` is not a quantity.
pub fn parse(s: &str) -> Option<f64> {
    let (number, suffix) = split(s)?;
    let value: f64 = number.parse().ok()?;
    // Fractions divide (so `940m` is exactly 0.94, as `0.94` would be).
    let divisor = match suffix {
        "n" => Some(1e9),
        "u" => Some(1e6),
        "m" => Some(1e3),
        _ => None,
    };
    if let Some(d) = divisor {
        return Some(value / d);
    }
    let factor = match suffix {
        "" => 1.0,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024.0 * 1024.0,
        "Gi" => 1024.0 * 1024.0 * 1024.0,
        "Ti" => 1024.0_f64.powi(4),
        "Pi" => 1024.0_f64.powi(5),
        "Ei" => 1024.0_f64.powi(6),
        exponent => {
            let e = exponent.strip_prefix(['e', 'E'])?;
            10f64.powi(e.parse::<i32>().ok()?)
        }
    };
    Some(value * factor)
}

/// `bytes` as a short human figure (`16 GiB`, `1.5 GiB`, `512 MiB`) for diagnostics.
pub fn bytes_text(bytes: f64) -> String {
    const GIB: f64 = 1024.0 * 1024.0 * 1024.0;
    if bytes >= GIB {
        let g = bytes / GIB;
        if (g - g.round()).abs() < 0.005 {
            format!("{} GiB", g.round())
        } else {
            format!("{g:.2} GiB")
        }
    } else {
        format!("{} MiB", (bytes / (1024.0 * 1024.0)).round())
    }
}

/// A figure of `resource` for diagnostics: bytes for memory, a plain number otherwise.
pub fn text(resource: &str, value: f64) -> String {
    if resource == "memory" {
        bytes_text(value)
    } else if (value - value.round()).abs() < 1e-9 {
        format!("{}", value.round())
    } else {
        format!("{value}")
    }
}

#[cfg(test)]
mod tests {
    use super::{bytes_text, parse, split};

    #[test]
    fn quantities_in_base_units() {
        assert_eq!(parse("4"), Some(4.0));
        assert_eq!(parse("940m"), Some(0.94));
        assert_eq!(parse("1392Mi"), Some(1392.0 * 1048576.0));
        assert_eq!(parse("17Gi"), Some(17.0 * 1073741824.0));
        assert_eq!(parse("1.5G"), Some(1.5e9));
        assert_eq!(parse("2e3"), Some(2000.0));
        assert_eq!(parse("+1k"), Some(1000.0));
        assert_eq!(parse("Gi"), None);
        assert_eq!(parse("4x"), None);
        assert_eq!(split(" -1.5Gi"), Some(("-1.5", "Gi")));
        assert_eq!(split("2e3"), Some(("2", "e3")));
        assert_eq!(split("-Gi"), None);
        assert_eq!(bytes_text(16.0 * 1073741824.0), "16 GiB");
        assert_eq!(bytes_text(512.0 * 1048576.0), "512 MiB");
    }
}

//! AWS naming rules, in one place: the EKS cluster name, IAM role, instance profile and
//! policy names and paths, SQS queue names and EventBridge rule names, account IDs, region
//! names and the partitions (which regions each holds, its DNS suffix). Each rule is one
//! function that returns a [`NameError`] whose text a diagnostic shows as it is, and the
//! Terraform validators built from them. Every check of such a name in the provider (schemas,
//! ARN parsing, import ids) calls these.
//!
//! The limits are those of the services' API references (EKS `CreateCluster`, IAM
//! `CreateRole`/`CreateInstanceProfile`/`PutRolePolicy`, SQS `CreateQueue`, EventBridge
//! `PutRule`); the partitions those of the AWS SDK's partition table. This module sits at the bottom of the Karpenter side, beside `settings` and
//! `policy` (which parses ARNs with it), so every layer may use it; it needs nothing but the
//! framework's validator type.

use thiserror::Error;

use crate::terraform::framework::validate::{self as v, Validator};

/// An EKS cluster name has at most this many characters.
pub const EKS_CLUSTER_NAME_MAX: usize = 100;
/// An IAM role name has at most this many characters.
pub const IAM_ROLE_NAME_MAX: usize = 64;
/// An IAM instance profile name has at most this many characters.
pub const IAM_INSTANCE_PROFILE_NAME_MAX: usize = 128;
/// An IAM policy name (managed or inline) has at most this many characters.
pub const IAM_POLICY_NAME_MAX: usize = 128;
/// An IAM path has at most this many characters.
pub const IAM_PATH_MAX: usize = 512;
/// An SQS queue name (with `.fifo`, for a FIFO queue) has at most this many characters.
pub const SQS_QUEUE_NAME_MAX: usize = 80;
/// An EventBridge rule name has at most this many characters.
pub const EVENTBRIDGE_RULE_NAME_MAX: usize = 64;

/// What is wrong with a name. The text is a sentence fragment a diagnostic can show as it is
/// (add a full stop): it names the value, the kind of name and the rule it breaks.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NameError {
    #[error("{what} must not be empty")]
    Empty { what: &'static str },
    #[error("{value:?} has {length} characters, but {what} has at most {max}")]
    TooLong {
        what: &'static str,
        value: String,
        length: usize,
        max: usize,
    },
    #[error("{value:?} starts with {found:?}, but {what} must start with {first}")]
    FirstCharacter {
        what: &'static str,
        value: String,
        found: char,
        first: &'static str,
    },
    #[error("{value:?} contains {found:?} (character {position}), but {what} may only contain {allowed}")]
    Character {
        what: &'static str,
        value: String,
        found: char,
        position: usize,
        allowed: &'static str,
    },
    #[error("{value:?} is not {what}: it must be \"/\", or start and end with \"/\" like \"/karpenter/\"")]
    PathShape { what: &'static str, value: String },
    #[error("{value:?} is not {what} such as {example:?}")]
    NotA {
        what: &'static str,
        value: String,
        example: &'static str,
    },
}

/// A rule on the first character: the test, and how a message names what it allows.
type FirstCharacter = (fn(char) -> bool, &'static str);

/// One rule: what the name is, its length limit, its first character and the characters it
/// may hold.
struct Rule {
    what: &'static str,
    max: usize,
    first: Option<FirstCharacter>,
    allowed: fn(char) -> bool,
    allowed_text: &'static str,
}

impl Rule {
    fn check(&self, value: &str) -> Result<(), NameError> {
        let length = value.chars().count();
        if length == 0 {
            return Err(NameError::Empty { what: self.what });
        }
        if length > self.max {
            return Err(NameError::TooLong {
                what: self.what,
                value: value.to_string(),
                length,
                max: self.max,
            });
        }
        if let (Some((first_ok, first)), Some(found)) = (self.first, value.chars().next())
            && !first_ok(found)
        {
            return Err(NameError::FirstCharacter {
                what: self.what,
                value: value.to_string(),
                found,
                first,
            });
        }
        match value.chars().enumerate().find(|(_, c)| !(self.allowed)(*c)) {
            Some((i, found)) => Err(NameError::Character {
                what: self.what,
                value: value.to_string(),
                found,
                position: i + 1,
                allowed: self.allowed_text,
            }),
            None => Ok(()),
        }
    }
}

/// `[\w+=,.@-]`: the characters of IAM names (`\w` is ASCII letters, digits and `_`).
fn iam_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_+=,.@-".contains(c)
}
const IAM_NAME_CHARS: &str = "letters, digits and `+=,.@_-`";

/// `[A-Za-z0-9_-]`: the characters of EKS cluster and SQS queue names.
fn word_or_hyphen(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}
const WORD_OR_HYPHEN: &str = "letters, digits, hyphens and underscores";

/// `[.\-_A-Za-z0-9]`: the characters of EventBridge rule names.
fn rule_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')
}
const RULE_NAME_CHARS: &str = "letters, digits, `.`, `-` and `_`";

/// An EKS cluster name: 1–100 letters, digits, hyphens and underscores, starting with a
/// letter or digit (`^[0-9A-Za-z][A-Za-z0-9\-_]*$`).
pub fn eks_cluster_name(name: &str) -> Result<(), NameError> {
    Rule {
        what: "an EKS cluster name",
        max: EKS_CLUSTER_NAME_MAX,
        first: Some((|c: char| c.is_ascii_alphanumeric(), "a letter or digit")),
        allowed: word_or_hyphen,
        allowed_text: WORD_OR_HYPHEN,
    }
    .check(name)
}

/// An IAM role name: 1–64 of `[\w+=,.@-]`.
pub fn iam_role_name(name: &str) -> Result<(), NameError> {
    Rule {
        what: "an IAM role name",
        max: IAM_ROLE_NAME_MAX,
        first: None,
        allowed: iam_name_char,
        allowed_text: IAM_NAME_CHARS,
    }
    .check(name)
}

/// The prefix of a generated IAM role name: the role name's characters, at most `max` of them
/// (the room a generated suffix leaves).
pub fn iam_role_name_prefix(prefix: &str, max: usize) -> Result<(), NameError> {
    Rule {
        what: "an IAM role name prefix",
        max: max.min(IAM_ROLE_NAME_MAX),
        first: None,
        allowed: iam_name_char,
        allowed_text: IAM_NAME_CHARS,
    }
    .check(prefix)
}

/// An IAM instance profile name: 1–128 of `[\w+=,.@-]`.
pub fn iam_instance_profile_name(name: &str) -> Result<(), NameError> {
    Rule {
        what: "an IAM instance profile name",
        max: IAM_INSTANCE_PROFILE_NAME_MAX,
        first: None,
        allowed: iam_name_char,
        allowed_text: IAM_NAME_CHARS,
    }
    .check(name)
}

/// An IAM policy name (a customer managed policy's, or an inline policy's): 1–128 of
/// `[\w+=,.@-]`.
pub fn iam_policy_name(name: &str) -> Result<(), NameError> {
    Rule {
        what: "an IAM policy name",
        max: IAM_POLICY_NAME_MAX,
        first: None,
        allowed: iam_name_char,
        allowed_text: IAM_NAME_CHARS,
    }
    .check(name)
}

/// An IAM path: `/` alone, or 1–512 characters that start and end with `/`, of the printable
/// ASCII characters `!` (0x21) to `~` (0x7E). The API reference's prose also names DEL (0x7F),
/// but its pattern stops at `~`, and IAM refuses DEL.
pub fn iam_path(path: &str) -> Result<(), NameError> {
    const WHAT: &str = "an IAM path";
    Rule {
        what: WHAT,
        max: IAM_PATH_MAX,
        first: None,
        allowed: |c| ('!'..='~').contains(&c),
        allowed_text: "printable ASCII characters without spaces",
    }
    .check(path)?;
    if path.starts_with('/') && path.ends_with('/') {
        Ok(())
    } else {
        Err(NameError::PathShape {
            what: WHAT,
            value: path.to_string(),
        })
    }
}

/// The two kinds of SQS queue, told apart by the name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueKind {
    Standard,
    /// The name ends with `.fifo`.
    Fifo,
}

/// An SQS queue name: 1–80 letters, digits, hyphens and underscores; a FIFO queue's name ends
/// with `.fifo` (counted in the 80). Returns which kind of queue the name is for.
pub fn sqs_queue_name(name: &str) -> Result<QueueKind, NameError> {
    let (base, kind) = match name.strip_suffix(".fifo") {
        Some(base) => (base, QueueKind::Fifo),
        None => (name, QueueKind::Standard),
    };
    let rule = Rule {
        what: "an SQS queue name",
        max: SQS_QUEUE_NAME_MAX,
        first: None,
        allowed: word_or_hyphen,
        allowed_text: "letters, digits, hyphens and underscores (and a final `.fifo` for a FIFO queue)",
    };
    let length = name.chars().count();
    if length > SQS_QUEUE_NAME_MAX {
        return Err(NameError::TooLong {
            what: rule.what,
            value: name.to_string(),
            length,
            max: SQS_QUEUE_NAME_MAX,
        });
    }
    rule.check(base).map_err(|e| match e {
        // Report on the whole name, not on what is left without `.fifo`.
        NameError::Empty { .. } if kind == QueueKind::Fifo => NameError::Character {
            what: rule.what,
            value: name.to_string(),
            found: '.',
            position: 1,
            allowed: rule.allowed_text,
        },
        NameError::Character {
            what,
            found,
            position,
            allowed,
            ..
        } => NameError::Character {
            what,
            value: name.to_string(),
            found,
            position,
            allowed,
        },
        other => other,
    })?;
    Ok(kind)
}

/// An EventBridge rule name: 1–64 of `[.\-_A-Za-z0-9]`.
pub fn eventbridge_rule_name(name: &str) -> Result<(), NameError> {
    Rule {
        what: "an EventBridge rule name",
        max: EVENTBRIDGE_RULE_NAME_MAX,
        first: None,
        allowed: rule_name_char,
        allowed_text: RULE_NAME_CHARS,
    }
    .check(name)
}

/// The prefix of generated EventBridge rule names: the rule name's characters, at most `max`
/// of them (the room the longest appended suffix leaves).
pub fn eventbridge_rule_name_prefix(prefix: &str, max: usize) -> Result<(), NameError> {
    Rule {
        what: "an EventBridge rule name prefix",
        max: max.min(EVENTBRIDGE_RULE_NAME_MAX),
        first: None,
        allowed: rule_name_char,
        allowed_text: RULE_NAME_CHARS,
    }
    .check(prefix)
}

/// Every AWS partition, as ARNs and the `partition` attributes name them.
pub const PARTITIONS: &[&str] = &[
    "aws",
    "aws-cn",
    "aws-us-gov",
    "aws-iso",
    "aws-iso-b",
    "aws-iso-e",
    "aws-iso-f",
    "aws-eusc",
];

/// A partition other than `aws`: how its region names start, and its DNS suffix (the
/// `dnsSuffix` of the AWS SDK's partition table: service principals are `<service>.<suffix>`).
/// Every region no other partition claims is `aws`'s, whose suffix is `amazonaws.com`.
const OTHER_PARTITIONS: &[(&str, &str, &str)] = &[
    ("aws-cn", "cn-", "amazonaws.com.cn"),
    ("aws-us-gov", "us-gov-", "amazonaws.com"),
    ("aws-iso", "us-iso-", "c2s.ic.gov"),
    ("aws-iso-b", "us-isob-", "sc2s.sgov.gov"),
    ("aws-iso-e", "eu-isoe-", "cloud.adc-e.uk"),
    ("aws-iso-f", "us-isof-", "csp.hci.ic.gov"),
    ("aws-eusc", "eusc-", "amazonaws.eu"),
];

/// The partition a region belongs to (`cn-north-1` → `aws-cn`, `us-iso-east-1` → `aws-iso`,
/// `eu-west-1` → `aws`).
pub fn partition_of_region(region: &str) -> &'static str {
    OTHER_PARTITIONS
        .iter()
        .find(|(_, prefix, _)| region.starts_with(prefix))
        .map_or("aws", |(partition, _, _)| partition)
}

/// The DNS suffix of a partition, as service principals use it (`ec2.amazonaws.com.cn`).
pub fn dns_suffix(partition: &str) -> &'static str {
    OTHER_PARTITIONS
        .iter()
        .find(|(p, _, _)| *p == partition)
        .map_or("amazonaws.com", |(_, _, suffix)| suffix)
}

/// An AWS region name: lowercase words joined by `-`, the first the two-letter area (`eusc`
/// for the European Sovereign Cloud), the last a number: `us-east-1`, `cn-northwest-1`,
/// `us-gov-west-1`, `us-isob-east-1`, `eusc-de-east-1`.
pub fn aws_region(name: &str) -> Result<(), NameError> {
    let parts: Vec<&str> = name.split('-').collect();
    let words = &parts[..parts.len() - 1];
    let ok = parts.len() >= 3
        && (parts[0].len() == 2 || parts[0] == "eusc")
        && words
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_lowercase()))
        && parts
            .last()
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if ok {
        Ok(())
    } else {
        Err(NameError::NotA {
            what: "an AWS region name",
            value: name.to_string(),
            example: "us-east-1",
        })
    }
}

/// An AWS account ID: exactly 12 digits.
pub fn aws_account_id(id: &str) -> Result<(), NameError> {
    if id.len() == 12 && id.bytes().all(|b| b.is_ascii_digit()) {
        Ok(())
    } else {
        Err(NameError::NotA {
            what: "a 12-digit AWS account ID",
            value: id.to_string(),
            example: "123456789012",
        })
    }
}

/// A Terraform validator from a rule: `description` is the sentence the docs show; the
/// error's text is the diagnostic's detail. Unknown and null values are not judged.
pub fn validator<T>(
    description: impl Into<String>,
    rule: impl Fn(&str) -> Result<T, NameError> + Send + Sync,
) -> impl Validator {
    v::check(description, move |value| {
        let s = value.as_str()?;
        rule(s).err().map(|e| format!("{e}."))
    })
}

/// The validator of an EKS cluster name attribute.
pub fn eks_cluster_name_validator() -> impl Validator {
    validator(
        "Must be an EKS cluster name: 1 to 100 letters, digits, hyphens and underscores, starting with a letter \
         or digit.",
        eks_cluster_name,
    )
}

/// The validator of an IAM role name attribute.
pub fn iam_role_name_validator() -> impl Validator {
    validator(
        "Must be an IAM role name: 1 to 64 letters, digits and `+=,.@_-`.",
        iam_role_name,
    )
}

/// The validator of an IAM path attribute.
pub fn iam_path_validator() -> impl Validator {
    validator(
        "Must be an IAM path: `/`, or start and end with `/` (at most 512 printable ASCII characters, no spaces).",
        iam_path,
    )
}

/// The validator of an IAM policy name (e.g. the keys of a map of inline policies).
pub fn iam_policy_name_validator() -> impl Validator {
    validator(
        "Must be an IAM policy name: 1 to 128 letters, digits and `+=,.@_-`.",
        iam_policy_name,
    )
}

/// The validator of an EventBridge rule name attribute.
pub fn eventbridge_rule_name_validator() -> impl Validator {
    validator(
        "Must be an EventBridge rule name: 1 to 64 letters, digits, `.`, `-` and `_`.",
        eventbridge_rule_name,
    )
}

/// The validator of an AWS region attribute.
pub fn aws_region_validator() -> impl Validator {
    validator("Must be an AWS region name such as `us-east-1`.", aws_region)
}

/// The validator of an AWS account ID attribute.
pub fn aws_account_id_validator() -> impl Validator {
    validator(
        "Must be a 12-digit AWS account ID such as `123456789012`.",
        aws_account_id,
    )
}

#[cfg(test)]
mod tests {
    use super::{
        NameError, PARTITIONS, QueueKind, aws_account_id, aws_region, dns_suffix, eks_cluster_name,
        eventbridge_rule_name, eventbridge_rule_name_prefix, iam_instance_profile_name, iam_path,
        iam_policy_name, iam_role_name, iam_role_name_prefix, partition_of_region, sqs_queue_name,
    };

    fn n(c: char, len: usize) -> String {
        std::iter::repeat_n(c, len).collect()
    }

    #[test]
    fn eks_cluster_names_length_first_character_and_characters() {
        assert!(eks_cluster_name("a").is_ok());
        assert!(eks_cluster_name("0demo_cluster-1").is_ok());
        assert!(eks_cluster_name(&n('a', 100)).is_ok());
        assert!(matches!(eks_cluster_name(""), Err(NameError::Empty { .. })));
        assert!(matches!(
            eks_cluster_name(&n('a', 101)),
            Err(NameError::TooLong {
                length: 101,
                max: 100,
                ..
            })
        ));
        for bad_first in ["-demo", "_demo"] {
            assert!(
                matches!(eks_cluster_name(bad_first), Err(NameError::FirstCharacter { .. })),
                "{bad_first}"
            );
        }
        for bad in ["demo.cluster", "demo cluster", "démo", "demo/x"] {
            assert!(
                matches!(eks_cluster_name(bad), Err(NameError::Character { .. })),
                "{bad}"
            );
        }
        let e = eks_cluster_name("my.cluster").unwrap_err().to_string();
        assert_eq!(
            e,
            "\"my.cluster\" contains '.' (character 3), but an EKS cluster name may only contain letters, digits, \
             hyphens and underscores"
        );
    }

    #[test]
    fn iam_names() {
        assert!(iam_role_name("KarpenterNodeRole-a_b+c=d,e.f@g").is_ok());
        assert!(iam_role_name(&n('r', 64)).is_ok());
        assert!(matches!(
            iam_role_name(&n('r', 65)),
            Err(NameError::TooLong { max: 64, .. })
        ));
        assert!(matches!(iam_role_name(""), Err(NameError::Empty { .. })));
        assert!(matches!(
            iam_role_name("a/b"),
            Err(NameError::Character { found: '/', .. })
        ));
        assert!(matches!(iam_role_name("a b"), Err(NameError::Character { .. })));
        // `-` and `_` may come first in IAM names.
        assert!(iam_role_name("-x").is_ok() && iam_role_name("_x").is_ok());

        assert!(iam_role_name_prefix(&n('p', 38), 38).is_ok());
        assert!(matches!(
            iam_role_name_prefix(&n('p', 39), 38),
            Err(NameError::TooLong { max: 38, .. })
        ));

        assert!(iam_instance_profile_name(&n('i', 128)).is_ok());
        assert!(matches!(
            iam_instance_profile_name(&n('i', 129)),
            Err(NameError::TooLong { max: 128, .. })
        ));
        assert!(iam_policy_name(&n('i', 128)).is_ok());
        assert!(matches!(
            iam_policy_name(&n('i', 129)),
            Err(NameError::TooLong { .. })
        ));
        assert!(matches!(
            iam_policy_name("a*b"),
            Err(NameError::Character { found: '*', .. })
        ));
    }

    #[test]
    fn iam_paths() {
        assert!(iam_path("/").is_ok());
        assert!(iam_path("/karpenter/").is_ok());
        assert!(iam_path("/a/b~!/").is_ok());
        let longest = format!("/{}/", n('p', 510));
        assert!(iam_path(&longest).is_ok());
        assert!(matches!(
            iam_path(&format!("/{}/", n('p', 511))),
            Err(NameError::TooLong { max: 512, .. })
        ));
        assert!(matches!(iam_path(""), Err(NameError::Empty { .. })));
        for bad in ["karpenter/", "/karpenter", "karpenter"] {
            assert!(matches!(iam_path(bad), Err(NameError::PathShape { .. })), "{bad}");
        }
        assert!(matches!(
            iam_path("/a b/"),
            Err(NameError::Character { found: ' ', .. })
        ));
        assert!(matches!(iam_path("/a\u{7f}/"), Err(NameError::Character { .. })));
    }

    #[test]
    fn sqs_queue_names_and_their_kind() {
        assert_eq!(sqs_queue_name("demo_queue-1"), Ok(QueueKind::Standard));
        assert_eq!(sqs_queue_name(&n('q', 80)), Ok(QueueKind::Standard));
        assert!(matches!(
            sqs_queue_name(&n('q', 81)),
            Err(NameError::TooLong { max: 80, .. })
        ));
        assert_eq!(sqs_queue_name("demo.fifo"), Ok(QueueKind::Fifo));
        // `.fifo` counts in the 80.
        assert_eq!(
            sqs_queue_name(&format!("{}.fifo", n('q', 75))),
            Ok(QueueKind::Fifo)
        );
        assert!(matches!(
            sqs_queue_name(&format!("{}.fifo", n('q', 76))),
            Err(NameError::TooLong { length: 81, .. })
        ));
        assert!(matches!(sqs_queue_name(""), Err(NameError::Empty { .. })));
        assert!(matches!(
            sqs_queue_name(".fifo"),
            Err(NameError::Character { .. })
        ));
        let e = sqs_queue_name("a.b").unwrap_err();
        assert!(
            matches!(
                e,
                NameError::Character {
                    found: '.',
                    position: 2,
                    ..
                }
            ),
            "{e}"
        );
        assert!(matches!(
            sqs_queue_name("a b.fifo"),
            Err(NameError::Character { found: ' ', .. })
        ));
    }

    #[test]
    fn eventbridge_rule_names() {
        assert!(eventbridge_rule_name("Karpenter-demo.Spot_Interruption").is_ok());
        assert!(eventbridge_rule_name(&n('r', 64)).is_ok());
        assert!(matches!(
            eventbridge_rule_name(&n('r', 65)),
            Err(NameError::TooLong { max: 64, .. })
        ));
        assert!(matches!(eventbridge_rule_name(""), Err(NameError::Empty { .. })));
        assert!(matches!(
            eventbridge_rule_name("a@b"),
            Err(NameError::Character { found: '@', .. })
        ));
        assert!(eventbridge_rule_name_prefix(&n('r', 40), 40).is_ok());
        assert!(matches!(
            eventbridge_rule_name_prefix(&n('r', 41), 40),
            Err(NameError::TooLong { .. })
        ));
        assert!(matches!(
            eventbridge_rule_name_prefix("a/b", 40),
            Err(NameError::Character { .. })
        ));
    }

    #[test]
    fn account_ids_are_twelve_digits() {
        assert!(aws_account_id("123456789012").is_ok());
        for bad in [
            "",
            "12345678901",
            "1234567890123",
            "12345678901a",
            " 123456789012",
            "１２３４５６７８９０１２",
        ] {
            assert!(aws_account_id(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            aws_account_id("1234").unwrap_err().to_string(),
            "\"1234\" is not a 12-digit AWS account ID such as \"123456789012\""
        );
    }

    #[test]
    fn region_names_of_every_partition() {
        for region in [
            "us-east-1",
            "ap-southeast-5",
            "mx-central-1",
            "cn-northwest-1",
            "us-gov-west-1",
            "us-iso-east-1",
            "us-isob-east-1",
            "eu-isoe-west-1",
            "us-isof-south-1",
            "eusc-de-east-1",
        ] {
            assert!(aws_region(region).is_ok(), "{region}");
        }
        for bad in [
            "",
            "useast1",
            "US-EAST-1",
            "us-east-",
            "us-east",
            "-east-1",
            "use-east-1",
            "us--1",
            "us-east-1a",
        ] {
            assert!(aws_region(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            aws_region("useast1").unwrap_err().to_string(),
            "\"useast1\" is not an AWS region name such as \"us-east-1\""
        );
    }

    #[test]
    fn every_region_is_in_one_partition_with_its_dns_suffix() {
        for (region, partition, suffix) in [
            ("eu-west-1", "aws", "amazonaws.com"),
            ("cn-north-1", "aws-cn", "amazonaws.com.cn"),
            ("us-gov-east-1", "aws-us-gov", "amazonaws.com"),
            ("us-iso-east-1", "aws-iso", "c2s.ic.gov"),
            ("us-isob-east-1", "aws-iso-b", "sc2s.sgov.gov"),
            ("eu-isoe-west-1", "aws-iso-e", "cloud.adc-e.uk"),
            ("us-isof-south-1", "aws-iso-f", "csp.hci.ic.gov"),
            ("eusc-de-east-1", "aws-eusc", "amazonaws.eu"),
        ] {
            assert_eq!(partition_of_region(region), partition, "{region}");
            assert_eq!(dns_suffix(partition), suffix, "{partition}");
            assert!(PARTITIONS.contains(&partition), "{partition}");
        }
        assert_eq!(PARTITIONS.len(), 8);
    }
}

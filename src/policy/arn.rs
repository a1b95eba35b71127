//! Amazon Resource Names: parsing (an ARN in any AWS partition, and the kinds the provider
//! takes: IAM roles, IAM policies, SQS queues), with the naming rules of [`crate::aws_names`]
//! (partitions, regions, account IDs, role and queue names), and the Terraform validator of
//! each kind's attributes ([`role_arn_validator`], [`policy_arn_validator`],
//! [`queue_arn_validator`], with the one sentence the docs show for it): every ARN the
//! provider checks is checked here.

use thiserror::Error;

use crate::aws_names::{self, PARTITIONS};
use crate::terraform::framework::validate::{self as v, Validator};

/// A parsed ARN: `arn:partition:service:region:account:resource`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arn {
    pub partition: String,
    pub service: String,
    pub region: String,
    pub account: String,
    pub resource: String,
}

#[derive(Debug, Error, PartialEq, Eq)]
pub enum ArnError {
    #[error("{0:?} is not an ARN: it must look like arn:<partition>:<service>:<region>:<account>:<resource>")]
    Shape(String),
    #[error("{arn:?} is in partition {partition:?}; the partitions are {known}", known = PARTITIONS.join(", "))]
    Partition { arn: String, partition: String },
    #[error("{arn:?} is not {expected}")]
    Kind { arn: String, expected: &'static str },
}

impl Arn {
    /// The five fields of `arn:<partition>:<service>:<region>:<account>:<resource>`, borrowed
    /// from `s`, unchecked (the region and account may be empty): `None` unless it has that
    /// shape.
    pub fn fields(s: &str) -> Option<[&str; 5]> {
        let mut parts = s.splitn(6, ':');
        let (Some("arn"), Some(partition), Some(service), Some(region), Some(account), Some(resource)) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return None;
        };
        Some([partition, service, region, account, resource])
    }

    pub fn parse(s: &str) -> Result<Arn, ArnError> {
        let Some([partition, service, region, account, resource]) = Self::fields(s) else {
            return Err(ArnError::Shape(s.to_string()));
        };
        if service.is_empty() || resource.is_empty() {
            return Err(ArnError::Shape(s.to_string()));
        }
        if !PARTITIONS.contains(&partition) {
            return Err(ArnError::Partition {
                arn: s.to_string(),
                partition: partition.to_string(),
            });
        }
        Ok(Arn {
            partition: partition.to_string(),
            service: service.to_string(),
            region: region.to_string(),
            account: account.to_string(),
            resource: resource.to_string(),
        })
    }

    /// An IAM role ARN: `arn:<p>:iam::<12 digits>:role/[path/]name`.
    pub fn parse_role(s: &str) -> Result<Arn, ArnError> {
        let arn = Arn::parse(s)?;
        let name = arn
            .resource
            .strip_prefix("role/")
            .and_then(|r| r.rsplit('/').next());
        let ok = arn.service == "iam"
            && arn.region.is_empty()
            && aws_names::aws_account_id(&arn.account).is_ok()
            && name.is_some_and(|n| aws_names::iam_role_name(n).is_ok());
        if ok {
            Ok(arn)
        } else {
            Err(ArnError::Kind {
                arn: s.to_string(),
                expected: "an IAM role ARN (arn:aws:iam::123456789012:role/NAME)",
            })
        }
    }

    /// An IAM policy ARN: AWS managed (`arn:<p>:iam::aws:policy/[path/]NAME`) or customer
    /// managed (`arn:<p>:iam::<12 digits>:policy/[path/]NAME`).
    pub fn parse_policy(s: &str) -> Result<Arn, ArnError> {
        let arn = Arn::parse(s)?;
        let ok = arn.service == "iam"
            && arn.region.is_empty()
            && (arn.account == "aws" || aws_names::aws_account_id(&arn.account).is_ok())
            && arn
                .resource
                .strip_prefix("policy/")
                .is_some_and(|p| !p.is_empty());
        if ok {
            Ok(arn)
        } else {
            Err(ArnError::Kind {
                arn: s.to_string(),
                expected: "an IAM policy ARN such as \"arn:aws:iam::aws:policy/NAME\" or \
                           \"arn:aws:iam::123456789012:policy/NAME\"",
            })
        }
    }

    /// An SQS queue ARN: `arn:<p>:sqs:<region>:<12 digits>:<queue name>`.
    pub fn parse_queue(s: &str) -> Result<Arn, ArnError> {
        let arn = Arn::parse(s)?;
        let ok = arn.service == "sqs"
            && aws_names::aws_region(&arn.region).is_ok()
            && aws_names::aws_account_id(&arn.account).is_ok()
            && aws_names::sqs_queue_name(&arn.resource).is_ok();
        if ok {
            Ok(arn)
        } else {
            Err(ArnError::Kind {
                arn: s.to_string(),
                expected: "an SQS queue ARN (arn:aws:sqs:us-east-1:123456789012:NAME)",
            })
        }
    }
}

/// The validator of an IAM role ARN attribute ([`Arn::parse_role`]).
pub fn role_arn_validator() -> impl Validator {
    validator(
        "an IAM role ARN such as `arn:aws:iam::123456789012:role/NAME`",
        Arn::parse_role,
    )
}

/// The validator of an IAM policy ARN attribute ([`Arn::parse_policy`]).
pub fn policy_arn_validator() -> impl Validator {
    validator(
        "an IAM policy ARN: AWS managed (`arn:aws:iam::aws:policy/NAME`) or customer managed \
         (`arn:aws:iam::123456789012:policy/NAME`)",
        Arn::parse_policy,
    )
}

/// The validator of an SQS queue ARN attribute ([`Arn::parse_queue`]).
pub fn queue_arn_validator() -> impl Validator {
    validator(
        "an SQS queue ARN such as `arn:aws:sqs:us-east-1:123456789012:NAME`",
        Arn::parse_queue,
    )
}

/// The validator of an ARN attribute, under the three above (each kind's docs sentence is
/// written once, there): `parse` is the kind it must be, `what` says it in the docs ("Must be
/// {what}."); the error names the partition, the shape or the kind that is wrong.
fn validator(what: &'static str, parse: fn(&str) -> Result<Arn, ArnError>) -> impl Validator {
    v::check(format!("Must be {what}."), move |value| {
        parse(value.as_str()?).err().map(|e| format!("{e}."))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_role_and_queue_arns() {
        let role = Arn::parse_role("arn:aws:iam::123456789012:role/KarpenterNodeRole-demo").expect("role");
        assert_eq!(role.account, "123456789012");
        assert!(Arn::parse_role("arn:aws-cn:iam::123456789012:role/path/to/Name").is_ok());
        let q = Arn::parse_queue("arn:aws-us-gov:sqs:us-gov-west-1:123456789012:demo").expect("queue");
        assert_eq!(q.region, "us-gov-west-1");
    }

    #[test]
    fn rejects_malformed_arns_with_reasons() {
        assert!(matches!(Arn::parse("not-an-arn"), Err(ArnError::Shape(_))));
        assert!(matches!(
            Arn::parse("arn:aws-moon:iam::123456789012:role/x"),
            Err(ArnError::Partition { .. })
        ));
        // Every partition's ARNs parse.
        for partition in PARTITIONS {
            let role = format!("arn:{partition}:iam::123456789012:role/r");
            assert_eq!(Arn::parse_role(&role).expect("role").partition, *partition);
        }
        assert!(Arn::parse_queue("arn:aws-eusc:sqs:eusc-de-east-1:123456789012:demo").is_ok());
        assert!(matches!(
            Arn::parse_role("arn:aws:iam::12345:role/x"),
            Err(ArnError::Kind { .. })
        ));
        assert!(matches!(
            Arn::parse_role("arn:aws:sqs:us-east-1:123456789012:q"),
            Err(ArnError::Kind { .. })
        ));
        assert!(matches!(
            Arn::parse_queue("arn:aws:sqs:us-east-1:123456789012:bad name"),
            Err(ArnError::Kind { .. })
        ));
    }

    #[test]
    fn policy_arns_aws_managed_or_customer_managed() {
        for ok in [
            "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",
            "arn:aws-iso-b:iam::123456789012:policy/team/Extra",
            "arn:aws-eusc:iam::aws:policy/service-role/AmazonEKSWorkerNodePolicy",
        ] {
            assert!(Arn::parse_policy(ok).is_ok(), "{ok}");
        }
        for bad in [
            "arn:aws:iam::123456789012:role/x",
            "arn:aws:iam::12345:policy/x",
            "arn:aws:iam:us-east-1:aws:policy/x",
            "arn:aws:iam::aws:policy/",
            "arn:aws:s3:::policy/x",
        ] {
            assert!(
                matches!(Arn::parse_policy(bad), Err(ArnError::Kind { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_validator_names_what_is_wrong() {
        use crate::terraform::tfvalue::{AttributePath, Value};
        let role = validator("an IAM role ARN", Arn::parse_role);
        assert_eq!(role.description(), "Must be an IAM role ARN.");
        let check = |value: &str| {
            let mut diags = crate::terraform::framework::Diagnostics::new();
            role.validate(
                &Value::string(value),
                &AttributePath::root().attr("a"),
                &mut diags,
            );
            diags.to_string()
        };
        assert!(check("arn:aws-iso-f:iam::123456789012:role/r").is_empty());
        assert!(check("arn:aws-moon:iam::123456789012:role/r").contains("the partitions are aws, aws-cn"));
        assert!(check("arn:aws:iam::123456789012:user/u").contains("is not an IAM role ARN"));
    }
}

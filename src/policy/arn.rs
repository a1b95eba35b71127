//! Amazon Resource Names: parsing (an ARN in any AWS partition, and the kinds the provider
//! takes: IAM roles, SQS queues), with the naming rules of [`crate::aws_names`] (partitions,
//! regions, account IDs, role and queue names).

use thiserror::Error;

use crate::aws_names::{self, PARTITIONS};

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
}

//! The account guards of the `aws {}` block, as hashicorp/aws has them: `allowed_account_ids`
//! and `forbidden_account_ids`. Before the provider's first AWS call that changes anything, the
//! credentials' account is asked of STS (`GetCallerIdentity`, once per provider process; see
//! [`crate::context::KarpenterContext::aws_to_change`]) and judged here. Nothing is asked when
//! neither guard is set.

use super::AwsClients;
use super::error::AwsError;

/// Why the provider may not change anything with these credentials.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccountError {
    #[error(
        "the AWS credentials belong to account {account}, which is not in aws.allowed_account_ids ({allowed}). \
         Nothing was changed. Use credentials of an allowed account (check the profile, the environment's keys \
         and any assumed role), or add {account} to aws.allowed_account_ids if it is meant to be managed here"
    )]
    NotAllowed { account: String, allowed: String },
    #[error(
        "the AWS credentials belong to account {account}, which is listed in aws.forbidden_account_ids. Nothing \
         was changed. Use credentials of another account (check the profile, the environment's keys and any \
         assumed role), or remove {account} from aws.forbidden_account_ids if it is meant to be managed here"
    )]
    Forbidden { account: String },
}

/// Judges `account` against the guards; empty lists allow everything.
pub fn check(account: &str, allowed: &[String], forbidden: &[String]) -> Result<(), AccountError> {
    if !allowed.is_empty() && !allowed.iter().any(|a| a == account) {
        let mut listed = allowed.to_vec();
        listed.sort();
        return Err(AccountError::NotAllowed {
            account: account.to_string(),
            allowed: listed.join(", "),
        });
    }
    if forbidden.iter().any(|a| a == account) {
        return Err(AccountError::Forbidden {
            account: account.to_string(),
        });
    }
    Ok(())
}

/// The account the clients' credentials belong to (STS `GetCallerIdentity`).
pub async fn caller_account(aws: &AwsClients) -> Result<String, AwsError> {
    const ACTION: &str = "sts:GetCallerIdentity";
    let out = aws
        .sts()
        .get_caller_identity()
        .send()
        .await
        .map_err(|e| AwsError::from_sdk(ACTION, &e).via(&aws.endpoint_for("sts")))?;
    out.account()
        .filter(|a| !a.is_empty())
        .map(str::to_string)
        .ok_or_else(|| {
            AwsError::new(
                ACTION,
                super::AwsErrorKind::Other,
                "the response names no account",
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn no_guard_allows_every_account() {
        assert_eq!(check("123456789012", &[], &[]), Ok(()));
    }

    #[test]
    fn an_account_outside_the_allowed_list_is_refused_by_name() {
        assert_eq!(check("123456789012", &ids(&["123456789012"]), &[]), Ok(()));
        let err = check("123456789012", &ids(&["210987654321", "111122223333"]), &[])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("account 123456789012"), "{err}");
        assert!(
            err.contains("aws.allowed_account_ids (111122223333, 210987654321)"),
            "{err}"
        );
    }

    #[test]
    fn a_forbidden_account_is_refused_by_name() {
        assert_eq!(check("123456789012", &[], &ids(&["210987654321"])), Ok(()));
        let err = check("123456789012", &[], &ids(&["123456789012"]))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("123456789012") && err.contains("aws.forbidden_account_ids"),
            "{err}"
        );
    }
}

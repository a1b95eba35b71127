//! Text from outside the process that is parsed without a schema type: ARNs (role and queue
//! ARNs from configuration, `Arn::parse` on values IAM returns), policy documents as IAM
//! returns them (percent-encoded JSON), and Go durations in `timeouts {}`.

use terraform_provider_karpenter::aws::iam::decode_document;
use terraform_provider_karpenter::policy::arn::Arn;
use terraform_provider_karpenter::terraform::framework::validate::parse_go_duration;

/// Runs one input; panics on a broken property (the fuzzer reports it as a crash).
pub fn policy_text(data: &[u8]) {
    let Some((selector, rest)) = data.split_first() else {
        return;
    };
    match selector % 3 {
        0 => {
            let Ok(text) = std::str::from_utf8(rest) else {
                return;
            };
            let parsed = [Arn::parse(text), Arn::parse_role(text), Arn::parse_queue(text)];
            for arn in parsed.into_iter().flatten() {
                let joined = format!(
                    "arn:{}:{}:{}:{}:{}",
                    arn.partition, arn.service, arn.region, arn.account, arn.resource
                );
                assert_eq!(joined, text, "the parts of a parsed ARN do not make the ARN");
            }
        }
        1 => {
            let _ = decode_document("GetRolePolicy", &String::from_utf8_lossy(rest));
        }
        _ => {
            if let Ok(text) = std::str::from_utf8(rest) {
                let _ = parse_go_duration(text);
            }
        }
    }
}

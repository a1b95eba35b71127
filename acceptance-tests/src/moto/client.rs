//! How a test reaches an AWS endpoint (moto or a fault proxy in front of it): the provider
//! block pointing every service there, a Terraform working directory with dummy credentials
//! cut off from the user's AWS configuration, and an SDK configuration for the test's checks.

use crate::Workdir;

/// The region the tests use.
pub const REGION: &str = "us-east-1";

/// Sets dummy credentials and the region on `work`, isolated from the user's AWS setup.
/// A working directory with `config` after `provider_block` (a provider block of another
/// endpoint, such as a fault proxy's), and the AWS environment of [`configure_env`].
pub fn workdir(provider_block: &str, config: &str) -> Workdir {
    let mut work = Workdir::new(&format!("{provider_block}\n{config}"));
    configure_env(&mut work);
    work
}

pub fn configure_env(work: &mut Workdir) {
    let missing = work.path().join("no-aws-config");
    let missing = missing.to_string_lossy().into_owned();
    work.env("AWS_ACCESS_KEY_ID", "testing")
        .env("AWS_SECRET_ACCESS_KEY", "testing")
        .env("AWS_SESSION_TOKEN", "testing")
        .env("AWS_REGION", REGION)
        .env("AWS_CONFIG_FILE", &missing)
        .env("AWS_SHARED_CREDENTIALS_FILE", &missing)
        .env("AWS_EC2_METADATA_DISABLED", "true");
}

/// The provider block with every AWS service endpoint at `endpoint`.
pub fn provider_block(endpoint: &str) -> String {
    format!(
        r#"provider "karpenter" {{
  aws {{
    region = "{REGION}"
    endpoints {{
      iam    = "{endpoint}"
      sqs    = "{endpoint}"
      events = "{endpoint}"
      sts    = "{endpoint}"
      ec2    = "{endpoint}"
      eks    = "{endpoint}"
    }}
  }}
}}
"#
    )
}

/// An SDK configuration (static dummy credentials, one retry attempt) for test checks.
pub fn sdk_config(endpoint: &str) -> aws_config::SdkConfig {
    aws_config::SdkConfig::builder()
        .behavior_version(aws_config::BehaviorVersion::latest())
        .region(aws_config::Region::new(REGION))
        .endpoint_url(endpoint)
        .credentials_provider(aws_sdk_sqs::config::SharedCredentialsProvider::new(
            aws_sdk_sqs::config::Credentials::new("testing", "testing", None, None, "moto-tests"),
        ))
        .retry_config(aws_config::retry::RetryConfig::standard().with_max_attempts(1))
        .build()
}

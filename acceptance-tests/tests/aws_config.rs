//! The provider's AWS configuration against moto, without terraform: per-service endpoint
//! overrides are used, and `assume_role` really assumes the role through STS (moto answers
//! AssumeRole and reports the assumed-role identity afterwards).
//!
//! This binary holds one test only, because it sets process environment variables (the
//! credential chain reads them).

use acceptance_tests::moto::Moto;
use terraform_provider_karpenter::context::KarpenterContext;
use terraform_provider_karpenter::settings::{AssumeRoleSettings, ProviderSettings};

#[tokio::test(flavor = "multi_thread")]
async fn endpoints_and_assume_role_reach_moto() {
    let moto = Moto::start();
    let missing = std::env::temp_dir().join("no-aws-config-for-tests");
    // SAFETY: the only test in this binary, set before any thread reads the environment.
    unsafe {
        std::env::set_var("AWS_ACCESS_KEY_ID", "testing");
        std::env::set_var("AWS_SECRET_ACCESS_KEY", "testing");
        std::env::set_var("AWS_CONFIG_FILE", &missing);
        std::env::set_var("AWS_SHARED_CREDENTIALS_FILE", &missing);
        std::env::set_var("AWS_EC2_METADATA_DISABLED", "true");
    }

    let mut plain = ProviderSettings::default();
    plain.aws.region = Some("us-east-1".into());
    for service in ["iam", "sqs", "events", "sts"] {
        plain.aws.endpoints.insert(service.into(), moto.endpoint().into());
    }
    let ctx = KarpenterContext::new(plain.clone());
    let aws = ctx.aws().await.unwrap();
    let me = aws.sts().get_caller_identity().send().await.unwrap();
    assert_eq!(me.account(), Some("123456789012"));
    assert!(me.arn().unwrap_or_default().ends_with(":user/moto"), "{me:?}");
    // every service client goes to its override
    aws.sqs().list_queues().send().await.unwrap();
    aws.events().list_rules().send().await.unwrap();
    aws.iam().list_roles().send().await.unwrap();

    let mut assuming = plain;
    assuming.aws.assume_role = Some(AssumeRoleSettings {
        role_arn: "arn:aws:iam::123456789012:role/karpenter-admin".into(),
        session_name: Some("acc-test".into()),
        external_id: Some("ext-1".into()),
        ..Default::default()
    });
    let ctx = KarpenterContext::new(assuming);
    let aws = ctx.aws().await.unwrap();
    let me = aws.sts().get_caller_identity().send().await.unwrap();
    assert_eq!(
        me.arn(),
        Some("arn:aws:sts::123456789012:assumed-role/karpenter-admin/acc-test"),
        "{me:?}"
    );
}

//! DescribeCluster against moto: the endpoint and CA data native EKS authentication fills
//! `host` and `cluster_ca_certificate` from.

use acceptance_tests::moto::Moto;
use terraform_provider_karpenter::k8s::eks::describe_cluster;

#[tokio::test(flavor = "multi_thread")]
async fn describe_cluster_returns_endpoint_and_ca_data() {
    let moto = Moto::start();
    let eks = aws_sdk_eks::Client::new(&moto.sdk_config());
    eks.create_cluster()
        .name("demo")
        .role_arn("arn:aws:iam::123456789012:role/eks")
        .resources_vpc_config(aws_sdk_eks::types::VpcConfigRequest::builder().build())
        .send()
        .await
        .expect("CreateCluster");

    let access = describe_cluster(&eks, "demo").await.expect("DescribeCluster");
    assert!(access.endpoint.starts_with("https://"), "{access:?}");
    assert!(access.endpoint.contains(".eks.amazonaws.com"), "{access:?}");
    assert!(!access.certificate_authority_data.is_empty());

    let e = describe_cluster(&eks, "missing")
        .await
        .expect_err("no such cluster");
    let e = e.to_string();
    assert!(e.contains("\"missing\"") && e.contains("DescribeCluster"), "{e}");
}

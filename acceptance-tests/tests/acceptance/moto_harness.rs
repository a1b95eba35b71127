//! The moto harness itself: a server starts, answers AWS calls, and the fault proxy fails
//! exactly the armed calls in the service's error shape (the SDK classifies them as AWS would).

use acceptance_tests::moto::{Fault, FaultProxy, Moto};
use aws_sdk_sqs::error::ProvideErrorMetadata;

#[tokio::test(flavor = "multi_thread")]
async fn moto_serves_sqs_and_the_proxy_injects_faults() {
    let moto = Moto::start();
    let direct = aws_sdk_sqs::Client::new(&moto.sdk_config());
    let created = direct
        .create_queue()
        .queue_name("harness-q")
        .send()
        .await
        .unwrap();
    assert!(
        created
            .queue_url()
            .unwrap_or_default()
            .ends_with("/123456789012/harness-q")
    );

    let proxy = FaultProxy::start(moto.port());
    let sqs = aws_sdk_sqs::Client::new(&acceptance_tests::moto::sdk_config(&proxy.endpoint()));
    proxy.arm(Fault::new(
        "AmazonSQS.GetQueueUrl",
        1,
        400,
        "AWS.SimpleQueueService.NonExistentQueue",
    ));
    let err = sqs
        .get_queue_url()
        .queue_name("harness-q")
        .send()
        .await
        .unwrap_err();
    let service = err.as_service_error().expect("a service error");
    assert!(service.is_queue_does_not_exist(), "{service:?}");
    assert_eq!(proxy.pending(), 0);
    // the fault fired once; the next call reaches moto
    let url = sqs.get_queue_url().queue_name("harness-q").send().await.unwrap();
    assert!(url.queue_url().is_some());

    proxy.arm(Fault::new("AmazonSQS.ListQueues", 1, 400, "ThrottlingException"));
    let err = sqs.list_queues().send().await.unwrap_err();
    assert_eq!(err.code(), Some("ThrottlingException"));
    let log = proxy.log();
    assert_eq!(log.iter().filter(|(_, failed)| *failed).count(), 2, "{log:?}");
}

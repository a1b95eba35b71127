//! Figure 7: `karpenter_interruption_queue` create → destroy against moto, through the fault
//! proxy (armed with nothing), which records each AWS call with its timing. The baseline is
//! the same sequence of calls made directly with the SDK from here, through the same proxy,
//! so both pay the same per-call cost; what differs is what the provider adds around them.

use std::collections::BTreeMap;
use std::time::Instant;

use acceptance_tests::Workdir;
use acceptance_tests::moto::{self, FaultProxy, Moto, ProxyCall};
use aws_sdk_eventbridge::types::Target;
use aws_sdk_sqs::error::DisplayErrorContext;
use aws_sdk_sqs::types::QueueAttributeName;

use crate::error::BenchError;
use crate::options::Options;
use crate::provider::ProviderDir;
use crate::stats::Samples;

/// The rules Karpenter's template has, in the provider's order: (suffix, source, detail-type).
const RULES: &[(&str, &str, &str)] = &[
    ("ScheduledChange", "aws.health", "AWS Health Event"),
    (
        "SpotInterruption",
        "aws.ec2",
        "EC2 Spot Instance Interruption Warning",
    ),
    ("Rebalance", "aws.ec2", "EC2 Instance Rebalance Recommendation"),
    (
        "InstanceStateChange",
        "aws.ec2",
        "EC2 Instance State-change Notification",
    ),
    (
        "CapacityReservationInterruption",
        "aws.ec2",
        "EC2 Capacity Reservation Instance Interruption Warning",
    ),
];

/// The fewest calls the parts need. Create: CreateQueue (retention, encryption and tags in
/// one call), one call for the policy (it names the queue's ARN, known only once the queue
/// exists, so it cannot ride on CreateQueue), and PutRule (with its tags) + PutTargets per
/// rule. Refresh: the queue's attributes and its tags, and per rule the rule, its targets and
/// its tags. Destroy: RemoveTargets + DeleteRule per rule and DeleteQueue.
pub const MIN_CREATE_CALLS: usize = 2 + 2 * 5;
pub const MIN_REFRESH_CALLS: usize = 2 + 3 * 5;
pub const MIN_DESTROY_CALLS: usize = 1 + 2 * 5;

#[derive(Debug, Clone, Default)]
pub struct QueueFigures {
    /// Seconds: `terraform apply` + `terraform destroy -refresh=false` wall time.
    pub terraform_s: Samples,
    /// Milliseconds from the provider's first AWS call to its last answer, create + delete.
    pub provider_aws_ms: Samples,
    /// Milliseconds for the same calls made with the SDK directly.
    pub sdk_ms: Samples,
    /// The provider's calls during apply (create), the plan after it (refresh) and
    /// `destroy -refresh=false` (delete).
    pub create_calls: Vec<String>,
    pub refresh_calls: Vec<String>,
    pub destroy_calls: Vec<String>,
}

impl QueueFigures {
    fn record(&mut self, calls: &ProviderCalls) {
        self.create_calls = ops(&calls.create);
        self.refresh_calls = ops(&calls.refresh);
        self.destroy_calls = ops(&calls.delete);
    }
}

fn span_ms(calls: &[ProxyCall]) -> f64 {
    match (calls.first(), calls.iter().map(|c| c.finished).max()) {
        (Some(first), Some(last)) => last.duration_since(first.started).as_secs_f64() * 1000.0,
        _ => 0.0,
    }
}

fn ops(calls: &[ProxyCall]) -> Vec<String> {
    calls.iter().map(|c| c.operation.clone()).collect()
}

/// The calls of one provider run: create, refresh, delete.
struct ProviderCalls {
    create: Vec<ProxyCall>,
    refresh: Vec<ProxyCall>,
    delete: Vec<ProxyCall>,
}

/// One provider create → refresh → destroy of the queue for `cluster`; the seconds are those
/// of apply and destroy.
fn provider_run(
    p: &ProviderDir,
    proxy: &FaultProxy,
    cluster: &str,
) -> Result<(f64, ProviderCalls), BenchError> {
    let mut work = Workdir::with_provider_dir(
        &format!(
            "{}\nresource \"karpenter_interruption_queue\" \"this\" {{\n  cluster_name = \"{cluster}\"\n  tags = {{ \"karpenter.sh/discovery\" = \"{cluster}\" }}\n}}\n",
            proxy.provider_block()
        ),
        &p.dir,
        &[],
    );
    moto::configure_env(&mut work);
    proxy.clear_log();
    let start = Instant::now();
    let run = work.apply();
    let apply_s = start.elapsed().as_secs_f64();
    if !run.success {
        return Err(BenchError::Terraform {
            what: "apply of the interruption queue".into(),
            output: run.output(),
        });
    }
    let create = proxy.calls();
    proxy.clear_log();
    let run = work.plan();
    if !run.success {
        return Err(BenchError::Terraform {
            what: "plan after apply of the interruption queue".into(),
            output: run.output(),
        });
    }
    let refresh = proxy.calls();
    proxy.clear_log();
    let start = Instant::now();
    let run = work.terraform(&[
        "destroy",
        "-no-color",
        "-input=false",
        "-auto-approve",
        "-refresh=false",
    ]);
    let destroy_s = start.elapsed().as_secs_f64();
    if !run.success {
        return Err(BenchError::Terraform {
            what: "destroy of the interruption queue".into(),
            output: run.output(),
        });
    }
    Ok((
        apply_s + destroy_s,
        ProviderCalls {
            create,
            refresh,
            delete: proxy.calls(),
        },
    ))
}

/// SDK clients pointed at the proxy.
struct Sdk {
    sqs: aws_sdk_sqs::Client,
    events: aws_sdk_eventbridge::Client,
}

/// What the replay knows so far.
#[derive(Default)]
struct ReplayState {
    url: Option<String>,
    arn: Option<String>,
    rule_arns: BTreeMap<String, String>,
    /// Per operation, how many times it ran (which rule is next).
    seen: BTreeMap<String, usize>,
}

fn aws_err<E: std::error::Error + 'static>(op: &str) -> impl FnOnce(E) -> BenchError + '_ {
    move |e| BenchError::Aws(format!("{op}: {}", DisplayErrorContext(&e)))
}

impl Sdk {
    /// Makes the call `op` (as the proxy names it) for the queue of `cluster`.
    async fn call(&self, op: &str, cluster: &str, st: &mut ReplayState) -> Result<(), BenchError> {
        let short = op.rsplit(['.', '=']).next().unwrap_or(op).to_string();
        let nth = {
            let n = st.seen.entry(short.clone()).or_insert(0);
            *n += 1;
            *n - 1
        };
        let (suffix, source, detail) = RULES[nth % RULES.len()];
        let rule = format!("Karpenter-{cluster}-{suffix}");
        let url = || {
            st.url
                .clone()
                .ok_or_else(|| BenchError::Aws(format!("{op} before the queue URL is known")))
        };
        match short.as_str() {
            "CreateQueue" => {
                let out = self
                    .sqs
                    .create_queue()
                    .queue_name(cluster)
                    .attributes(QueueAttributeName::MessageRetentionPeriod, "300")
                    .attributes(QueueAttributeName::SqsManagedSseEnabled, "true")
                    .tags("karpenter.sh/discovery", cluster)
                    .send()
                    .await
                    .map_err(aws_err(op))?;
                st.url = out.queue_url().map(str::to_string);
            }
            "GetQueueUrl" => {
                // Before CreateQueue this is the provider's existence check (it never adopts a
                // queue it did not create): "does not exist" is the expected answer.
                match self.sqs.get_queue_url().queue_name(cluster).send().await {
                    Ok(out) => st.url = out.queue_url().map(str::to_string),
                    Err(e) if e.as_service_error().is_some_and(|s| s.is_queue_does_not_exist()) => {}
                    Err(e) => return Err(aws_err(op)(e)),
                }
            }
            "ListRules" => {
                self.events
                    .list_rules()
                    .name_prefix(format!("Karpenter-{cluster}-"))
                    .send()
                    .await
                    .map_err(aws_err(op))?;
            }
            "GetQueueAttributes" => {
                let out = self
                    .sqs
                    .get_queue_attributes()
                    .queue_url(url()?)
                    .attribute_names(QueueAttributeName::All)
                    .send()
                    .await
                    .map_err(aws_err(op))?;
                st.arn = out
                    .attributes()
                    .and_then(|a| a.get(&QueueAttributeName::QueueArn))
                    .cloned();
            }
            "SetQueueAttributes" => {
                let arn = st.arn.clone().unwrap_or_default();
                let policy = serde_json::json!({
                    "Version": "2012-10-17",
                    "Id": "EC2InterruptionPolicy",
                    "Statement": [{
                        "Effect": "Allow",
                        "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]},
                        "Action": "sqs:SendMessage",
                        "Resource": arn,
                    }, {
                        "Sid": "DenyHTTP",
                        "Effect": "Deny",
                        "Action": "sqs:*",
                        "Resource": arn,
                        "Condition": {"Bool": {"aws:SecureTransport": "false"}},
                        "Principal": "*",
                    }]
                });
                self.sqs
                    .set_queue_attributes()
                    .queue_url(url()?)
                    .attributes(QueueAttributeName::Policy, policy.to_string())
                    .send()
                    .await
                    .map_err(aws_err(op))?;
            }
            "ListQueueTags" => {
                self.sqs
                    .list_queue_tags()
                    .queue_url(url()?)
                    .send()
                    .await
                    .map_err(aws_err(op))?;
            }
            "TagQueue" => {
                self.sqs
                    .tag_queue()
                    .queue_url(url()?)
                    .tags("karpenter.sh/discovery", cluster)
                    .send()
                    .await
                    .map_err(aws_err(op))?;
            }
            "DeleteQueue" => {
                self.sqs
                    .delete_queue()
                    .queue_url(url()?)
                    .send()
                    .await
                    .map_err(aws_err(op))?;
            }
            "PutRule" => {
                let pattern = serde_json::json!({"source": [source], "detail-type": [detail]});
                let out = self
                    .events
                    .put_rule()
                    .name(&rule)
                    .event_pattern(pattern.to_string())
                    .tags(
                        aws_sdk_eventbridge::types::Tag::builder()
                            .key("karpenter.sh/discovery")
                            .value(cluster)
                            .build()
                            .map_err(aws_err(op))?,
                    )
                    .send()
                    .await
                    .map_err(aws_err(op))?;
                if let Some(arn) = out.rule_arn() {
                    st.rule_arns.insert(rule, arn.to_string());
                }
            }
            "PutTargets" => {
                let target = Target::builder()
                    .id("KarpenterInterruptionQueueTarget")
                    .arn(st.arn.clone().unwrap_or_default())
                    .build()
                    .map_err(aws_err(op))?;
                self.events
                    .put_targets()
                    .rule(&rule)
                    .targets(target)
                    .send()
                    .await
                    .map_err(aws_err(op))?;
            }
            "DescribeRule" => {
                let out = self
                    .events
                    .describe_rule()
                    .name(&rule)
                    .send()
                    .await
                    .map_err(aws_err(op))?;
                if let Some(arn) = out.arn() {
                    st.rule_arns.insert(rule, arn.to_string());
                }
            }
            "ListTargetsByRule" => {
                self.events
                    .list_targets_by_rule()
                    .rule(&rule)
                    .send()
                    .await
                    .map_err(aws_err(op))?;
            }
            "ListTagsForResource" => {
                let arn = st.rule_arns.get(&rule).cloned().unwrap_or_default();
                self.events
                    .list_tags_for_resource()
                    .resource_arn(arn)
                    .send()
                    .await
                    .map_err(aws_err(op))?;
            }
            "RemoveTargets" => {
                self.events
                    .remove_targets()
                    .rule(&rule)
                    .ids("KarpenterInterruptionQueueTarget")
                    .send()
                    .await
                    .map_err(aws_err(op))?;
            }
            "DeleteRule" => {
                self.events
                    .delete_rule()
                    .name(&rule)
                    .send()
                    .await
                    .map_err(aws_err(op))?;
            }
            other => {
                return Err(BenchError::Aws(format!(
                    "the provider called {other}, which the SDK baseline does not know how to replay"
                )));
            }
        }
        Ok(())
    }
}

/// Replays `create` then `destroy` (operation names) with the SDK; milliseconds.
async fn sdk_run(sdk: &Sdk, cluster: &str, create: &[String], destroy: &[String]) -> Result<f64, BenchError> {
    let start = Instant::now();
    let mut st = ReplayState::default();
    for op in create {
        sdk.call(op, cluster, &mut st).await?;
    }
    st.seen.clear();
    for op in destroy {
        sdk.call(op, cluster, &mut st).await?;
    }
    Ok(start.elapsed().as_secs_f64() * 1000.0)
}

/// Figure 7.
pub fn measure(o: &Options, p: &ProviderDir) -> Result<QueueFigures, BenchError> {
    let moto = Moto::start();
    let proxy = FaultProxy::start(moto.port());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(BenchError::io("tokio runtime"))?;
    let config = moto::sdk_config(&proxy.endpoint());
    let sdk = Sdk {
        sqs: aws_sdk_sqs::Client::new(&config),
        events: aws_sdk_eventbridge::Client::new(&config),
    };
    let mut f = QueueFigures::default();
    // Untimed: learns the provider's call sequence, warms moto and the SDK's connections.
    let (_, calls) = provider_run(p, &proxy, "bench-warmup")?;
    f.record(&calls);
    rt.block_on(sdk_run(
        &sdk,
        "bench-sdk-warmup",
        &f.create_calls,
        &f.destroy_calls,
    ))?;
    for rep in 0..o.reps {
        let provider_first = rep % 2 == 0;
        for turn in 0..2 {
            if (turn == 0) == provider_first {
                let (secs, calls) = provider_run(p, &proxy, &format!("bench-p{rep}"))?;
                f.terraform_s.push(secs);
                f.provider_aws_ms
                    .push(span_ms(&calls.create) + span_ms(&calls.delete));
                f.record(&calls);
            } else {
                let cluster = format!("bench-s{rep}");
                let ms = rt.block_on(sdk_run(&sdk, &cluster, &f.create_calls, &f.destroy_calls))?;
                f.sdk_ms.push(ms);
            }
        }
    }
    Ok(f)
}

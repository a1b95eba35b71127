//! Thin wrappers over the SQS calls the interruption queue and its listing make. Each returns
//! plain data or an [`AwsError`] naming the IAM action; "does not exist" is classified with the
//! SDK's typed check, and deletes treat it as success.

use std::collections::BTreeMap;

use aws_sdk_sqs::Client;
use aws_sdk_sqs::types::QueueAttributeName;

use super::error::{AwsError, AwsErrorKind};

/// The code SQS sends when a queue name was deleted less than 60 s ago.
pub const QUEUE_DELETED_RECENTLY: &str = "AWS.SimpleQueueService.QueueDeletedRecently";

/// SQS calls for one client.
#[derive(Debug, Clone)]
pub struct Sqs {
    client: Client,
    /// Where the calls go, for connection and TLS diagnostics.
    endpoint: String,
}

fn attrs(map: &BTreeMap<String, String>) -> std::collections::HashMap<QueueAttributeName, String> {
    map.iter()
        .map(|(k, v)| (QueueAttributeName::from(k.as_str()), v.clone()))
        .collect()
}

impl Sqs {
    pub fn new(client: Client, endpoint: String) -> Self {
        Self { client, endpoint }
    }

    /// Creates the queue (idempotent when the attributes match) and returns its URL.
    pub async fn create_queue(
        &self,
        name: &str,
        attributes: &BTreeMap<String, String>,
        tags: &BTreeMap<String, String>,
    ) -> Result<String, AwsError> {
        let out = self
            .client
            .create_queue()
            .queue_name(name)
            .set_attributes(Some(attrs(attributes)))
            .set_tags((!tags.is_empty()).then(|| tags.clone().into_iter().collect()))
            .send()
            .await
            .map_err(|e| {
                let already = e.as_service_error().is_some_and(|s| s.is_queue_name_exists());
                let err = AwsError::from_sdk("sqs:CreateQueue", &e).via(&self.endpoint);
                if already {
                    err.with_kind(AwsErrorKind::AlreadyExists)
                } else {
                    err
                }
            })?;
        out.queue_url.ok_or_else(|| {
            AwsError::new(
                "sqs:CreateQueue",
                AwsErrorKind::Other,
                "no QueueUrl in the response",
            )
        })
    }

    /// The URL of the queue `name`.
    pub async fn get_queue_url(&self, name: &str) -> Result<String, AwsError> {
        let out = self
            .client
            .get_queue_url()
            .queue_name(name)
            .send()
            .await
            .map_err(|e| {
                let gone = e.as_service_error().is_some_and(|s| s.is_queue_does_not_exist());
                let err = AwsError::from_sdk("sqs:GetQueueUrl", &e).via(&self.endpoint);
                if gone {
                    err.with_kind(AwsErrorKind::NotFound)
                } else {
                    err
                }
            })?;
        out.queue_url.ok_or_else(|| {
            AwsError::new(
                "sqs:GetQueueUrl",
                AwsErrorKind::Other,
                "no QueueUrl in the response",
            )
        })
    }

    /// All attributes of the queue at `url`.
    pub async fn get_attributes(&self, url: &str) -> Result<BTreeMap<String, String>, AwsError> {
        let out = self
            .client
            .get_queue_attributes()
            .queue_url(url)
            .attribute_names(QueueAttributeName::All)
            .send()
            .await
            .map_err(|e| {
                let gone = e.as_service_error().is_some_and(|s| s.is_queue_does_not_exist());
                let err = AwsError::from_sdk("sqs:GetQueueAttributes", &e).via(&self.endpoint);
                if gone {
                    err.with_kind(AwsErrorKind::NotFound)
                } else {
                    err
                }
            })?;
        Ok(out
            .attributes
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k.as_str().to_string(), v))
            .collect())
    }

    /// Sets attributes (an empty `Policy` removes the policy).
    pub async fn set_attributes(
        &self,
        url: &str,
        attributes: &BTreeMap<String, String>,
    ) -> Result<(), AwsError> {
        self.client
            .set_queue_attributes()
            .queue_url(url)
            .set_attributes(Some(attrs(attributes)))
            .send()
            .await
            .map_err(|e| {
                let gone = e.as_service_error().is_some_and(|s| s.is_queue_does_not_exist());
                let err = AwsError::from_sdk("sqs:SetQueueAttributes", &e).via(&self.endpoint);
                if gone {
                    err.with_kind(AwsErrorKind::NotFound)
                } else {
                    err
                }
            })?;
        Ok(())
    }

    pub async fn list_tags(&self, url: &str) -> Result<BTreeMap<String, String>, AwsError> {
        let out = self
            .client
            .list_queue_tags()
            .queue_url(url)
            .send()
            .await
            .map_err(|e| {
                let gone = e.as_service_error().is_some_and(|s| s.is_queue_does_not_exist());
                let err = AwsError::from_sdk("sqs:ListQueueTags", &e).via(&self.endpoint);
                if gone {
                    err.with_kind(AwsErrorKind::NotFound)
                } else {
                    err
                }
            })?;
        Ok(out.tags.unwrap_or_default().into_iter().collect())
    }

    /// Makes the queue's tags exactly `tags`.
    pub async fn sync_tags(&self, url: &str, tags: &BTreeMap<String, String>) -> Result<(), AwsError> {
        let current = self.list_tags(url).await?;
        let changes = super::tags::diff(&current, tags);
        if !changes.remove.is_empty() {
            self.client
                .untag_queue()
                .queue_url(url)
                .set_tag_keys(Some(changes.remove))
                .send()
                .await
                .map_err(|e| AwsError::from_sdk("sqs:UntagQueue", &e).via(&self.endpoint))?;
        }
        if !changes.set.is_empty() {
            self.client
                .tag_queue()
                .queue_url(url)
                .set_tags(Some(changes.set.into_iter().collect()))
                .send()
                .await
                .map_err(|e| AwsError::from_sdk("sqs:TagQueue", &e).via(&self.endpoint))?;
        }
        Ok(())
    }

    /// The URLs of every queue in the account and region whose name starts with `prefix`
    /// (all queues when None), following every page of ListQueues.
    pub async fn list_queues(&self, prefix: Option<&str>) -> Result<Vec<String>, AwsError> {
        let mut urls = Vec::new();
        let mut token = None;
        loop {
            let out = self
                .client
                .list_queues()
                .set_queue_name_prefix(prefix.map(str::to_string))
                .max_results(1000)
                .set_next_token(token)
                .send()
                .await
                .map_err(|e| AwsError::from_sdk("sqs:ListQueues", &e).via(&self.endpoint))?;
            urls.extend(out.queue_urls.unwrap_or_default());
            token = out.next_token.filter(|t| !t.is_empty());
            if token.is_none() {
                return Ok(urls);
            }
        }
    }

    /// Deletes the queue; a queue that is already gone counts as deleted.
    pub async fn delete_queue(&self, url: &str) -> Result<(), AwsError> {
        match self.client.delete_queue().queue_url(url).send().await {
            Ok(_) => Ok(()),
            Err(e) if e.as_service_error().is_some_and(|s| s.is_queue_does_not_exist()) => Ok(()),
            Err(e) => {
                let err = AwsError::from_sdk("sqs:DeleteQueue", &e).via(&self.endpoint);
                if err.is_not_found() { Ok(()) } else { Err(err) }
            }
        }
    }
}

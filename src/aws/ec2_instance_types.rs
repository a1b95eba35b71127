//! The EC2 calls of `data "karpenter_instance_types"` with `source = "ec2"`: which instance
//! types a region (or some of its zones) offers (`DescribeInstanceTypeOfferings`), and what EC2
//! says about each (`DescribeInstanceTypes`), as the plain facts Karpenter reads
//! ([`Ec2Facts`]). Both listings are paginated.

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_ec2::Client;
use aws_sdk_ec2::types::{EbsOptimizedSupport, EphemeralNvmeSupport, Filter, InstanceTypeInfo, LocationType};

use super::error::AwsError;
use crate::instance_types::ec2::{Device, Ec2Facts};

/// At most this many instance types per `DescribeInstanceTypes` page (EC2's maximum).
const PAGE: i32 = 100;

/// The instance-type calls.
#[derive(Debug, Clone)]
pub struct Ec2InstanceTypes {
    client: Client,
    endpoint: String,
}

impl Ec2InstanceTypes {
    pub fn new(client: Client, endpoint: String) -> Self {
        Self { client, endpoint }
    }

    /// The instance types offered in the client's region (`zones` empty) or in those zones,
    /// each with the zones that offer it (empty for a region-wide answer).
    pub async fn offerings(&self, zones: &[String]) -> Result<BTreeMap<String, BTreeSet<String>>, AwsError> {
        let mut offered: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut token: Option<String> = None;
        loop {
            let mut call = self
                .client
                .describe_instance_type_offerings()
                .set_next_token(token.clone());
            call = if zones.is_empty() {
                call.location_type(LocationType::Region)
            } else {
                call.location_type(LocationType::AvailabilityZone).filters(
                    Filter::builder()
                        .name("location")
                        .set_values(Some(zones.to_vec()))
                        .build(),
                )
            };
            let out = call.send().await.map_err(|e| {
                AwsError::from_sdk("ec2:DescribeInstanceTypeOfferings", &e).via(&self.endpoint)
            })?;
            for o in out.instance_type_offerings() {
                let Some(name) = o.instance_type() else { continue };
                let entry = offered.entry(name.as_str().to_string()).or_default();
                if !zones.is_empty()
                    && let Some(zone) = o.location()
                {
                    entry.insert(zone.to_string());
                }
            }
            token = out.next_token().filter(|t| !t.is_empty()).map(str::to_string);
            if token.is_none() {
                return Ok(offered);
            }
        }
    }

    /// What EC2 says about every instance type of the region.
    pub async fn describe_all(&self) -> Result<Vec<Ec2Facts>, AwsError> {
        let mut found = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let out = self
                .client
                .describe_instance_types()
                .max_results(PAGE)
                .set_next_token(token.clone())
                .send()
                .await
                .map_err(|e| AwsError::from_sdk("ec2:DescribeInstanceTypes", &e).via(&self.endpoint))?;
            found.extend(out.instance_types().iter().filter_map(facts));
            token = out.next_token().filter(|t| !t.is_empty()).map(str::to_string);
            if token.is_none() {
                return Ok(found);
            }
        }
    }
}

/// The facts of one `InstanceTypeInfo` (`None` without a name).
fn facts(info: &InstanceTypeInfo) -> Option<Ec2Facts> {
    let name = info.instance_type()?.as_str().to_string();
    let processor = info.processor_info();
    let network = info.network_info();
    let default_card = network.and_then(|n| {
        let index = n.default_network_card_index().unwrap_or(0);
        n.network_cards()
            .iter()
            .find(|c| c.network_card_index().unwrap_or(0) == index)
    });
    let ebs = info.ebs_info();
    let storage = info.instance_storage_info();
    let device = |name: Option<&str>, manufacturer: Option<&str>, count: Option<i32>| Device {
        name: name.unwrap_or_default().to_string(),
        manufacturer: manufacturer.unwrap_or_default().to_string(),
        count: i64::from(count.unwrap_or(0)),
        memory_mib: None,
        cores: None,
    };
    Some(Ec2Facts {
        name,
        architectures: processor
            .map(|p| {
                p.supported_architectures()
                    .iter()
                    .map(|a| a.as_str().to_string())
                    .collect()
            })
            .unwrap_or_default(),
        vcpus: i64::from(info.v_cpu_info().and_then(|v| v.default_v_cpus()).unwrap_or(0)),
        memory_mib: info.memory_info().and_then(|m| m.size_in_mib()).unwrap_or(0),
        processor: processor.map(|p| {
            (
                p.manufacturer().unwrap_or_default().to_string(),
                p.sustained_clock_speed_in_ghz().unwrap_or(0.0),
            )
        }),
        hypervisor: info
            .hypervisor()
            .map(|h| h.as_str().to_string())
            .unwrap_or_default(),
        encryption_in_transit: network
            .and_then(|n| n.encryption_in_transit_supported())
            .unwrap_or(false),
        ebs_bandwidth_mbps: ebs
            .filter(|e| e.ebs_optimized_support() == Some(&EbsOptimizedSupport::Default))
            .and_then(|e| e.ebs_optimized_info())
            .and_then(|o| o.maximum_bandwidth_in_mbps())
            .map(i64::from),
        local_nvme_gb: storage
            .filter(|s| s.nvme_support() != Some(&EphemeralNvmeSupport::Unsupported))
            .and_then(|s| s.total_size_in_gb()),
        gpus: info
            .gpu_info()
            .map(|g| {
                g.gpus()
                    .iter()
                    .map(|d| Device {
                        memory_mib: d.memory_info().and_then(|m| m.size_in_mib()).map(i64::from),
                        ..device(d.name(), d.manufacturer(), d.count())
                    })
                    .collect()
            })
            .unwrap_or_default(),
        inference_accelerators: info
            .inference_accelerator_info()
            .map(|a| {
                a.accelerators()
                    .iter()
                    .map(|d| device(d.name(), d.manufacturer(), d.count()))
                    .collect()
            })
            .unwrap_or_default(),
        neuron: info.neuron_info().map(|n| {
            n.neuron_devices()
                .iter()
                .map(|d| Device {
                    cores: d.core_info().and_then(|c| c.count()).map(i64::from),
                    ..device(d.name(), Some("aws"), d.count())
                })
                .collect()
        }),
        max_network_interfaces: default_card
            .and_then(|c| c.maximum_network_interfaces())
            .map(i64::from),
        ipv4_per_interface: network
            .and_then(|n| n.ipv4_addresses_per_interface())
            .map(i64::from),
        max_efa_interfaces: network
            .and_then(|n| n.efa_info())
            .and_then(|e| e.maximum_efa_interfaces())
            .map(i64::from),
        zones: Vec::new(),
    })
}

//! The acceptance tests, one module per area, in one test binary: the harness, the provider
//! build and the shared helpers are compiled and linked once, and `--test-threads` keeps every
//! thread busy across all areas (separate binaries each waited for their own slowest test).
//! Run one area with `cargo test -p acceptance-tests --test acceptance -- <module>::`.
//! (`aws_config.rs` stays a binary of its own: it sets process environment variables.)

mod aws_credentials;
mod aws_errors;
mod bad_input_matrix;
mod being_deleted;
mod capacity_buffer;
mod concurrency;
mod control_plane;
mod controller_policy;
mod controller_role;
mod data_sources;
mod default_tags;
mod doc_snippets;
mod drift;
mod eks_auth;
mod eks_auto_mode;
mod eks_auto_mode_blueprints;
mod eks_auto_mode_node_role;
mod eks_describe;
mod examples_static;
mod examples_validate;
mod faults;
mod field_ownership;
mod health;
mod iam_common;
mod instance_types;
mod interruption_queue;
mod invalid_inputs;
mod k8s_errors;
mod karpenter_v1_15;
mod killed;
mod kube_settings;
mod least_privilege_aws;
mod least_privilege_kube;
mod legacy;
mod legacy_examples;
mod migrate_terraform_aws_eks;
mod misspelled_keys;
mod moto_harness;
mod moves;
mod node_overlay;
mod node_pool;
mod node_role;
mod plan_notes;
mod plan_parity;
mod protocol;
mod protocol_6_11;
mod protocol_identity_aws;
mod protocol_identity_kube;
mod provider_example;
mod quick_start;
mod readable_plans;
mod release;
mod secrets;
mod silent_mistakes;
mod state_upgrades;
mod status_plan;
mod taken_names_aws;
mod taken_names_kube;
mod teardown;
mod usage_stack;
mod version_matrix;

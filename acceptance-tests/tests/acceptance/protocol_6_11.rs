//! #28: protocol 6.11 (Terraform 1.16) beside 6.10 clients, over the real binary with mTLS.
//! 6.11 adds `Schema.Block.computed`, `ClientCapabilities.store_planned_private` and
//! `computed_blocks_allowed`, and `PlanResourceChange.Request.planned_private` (what an earlier
//! plan of the change returned, passed back when Terraform plans again during apply).
//!
//! - The schemas declare no computed block, so a client that does not allow them (6.10 and
//!   older) reads the same schema as one that does.
//! - A plan asked by a 6.11 client (both capabilities, and the planned private state of the
//!   earlier plan) answers exactly what a 6.10 client gets: the same planned state, private
//!   state and replacements, for an update and for the recreation of an object the last
//!   refresh found being deleted. The plan carries nothing that planned-private storage would
//!   make simpler: its one private fact, the being-deleted mark, already travels in
//!   `prior_private`.

use crate::protocol::{Session, has_errors, text, undv, value};
use acceptance_tests::kube::Cluster;
use serde_json::json;
use terraform_provider_karpenter::terraform::framework::private;
use terraform_provider_karpenter::terraform::plugin::proto::tfplugin6 as pb;
use terraform_provider_karpenter::terraform::tfvalue::Value;

fn computed_blocks(block: &pb::schema::Block, path: &str, out: &mut Vec<String>) {
    if block.computed {
        out.push(path.to_string());
    }
    for nested in &block.block_types {
        if let Some(b) = &nested.block {
            computed_blocks(b, &format!("{path}.{}", nested.type_name), out);
        }
    }
}

#[test]
fn a_6_11_client_gets_what_a_6_10_client_gets() {
    let cluster = Cluster::with_v1_crds();
    tokio::runtime::Runtime::new().expect("runtime").block_on(async {
        let mut s = Session::start(json!({"kubernetes": {
            "host": cluster.server.base_url(),
            "cluster_ca_certificate": cluster.server.ca_pem(),
            "token": cluster.server.token(),
        }}))
        .await;
        let mut computed = Vec::new();
        for (name, schema) in &s.schema.resource_schemas {
            computed_blocks(schema.block.as_ref().expect("block"), name, &mut computed);
        }
        assert!(computed.is_empty(), "computed blocks: {computed:?}");

        let type_name = "karpenter_node_pool";
        let ty = s.resource_type(type_name);
        let config = value(
            &ty,
            json!({"name": "p", "template": {"spec": {
                "node_class_ref": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "default"},
                "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}]
            }}}),
        );
        let (planned, identity, _, d) = s.plan(type_name, &Value::Null, &config, &Value::Null).await;
        assert!(!has_errors(&d), "{}", text(&d));
        let (state, _, d) = s.apply(type_name, &Value::Null, &planned, &config, &identity).await;
        assert!(!has_errors(&d), "{}", text(&d));

        let old_client = pb::ClientCapabilities {
            deferral_allowed: true,
            write_only_attributes_allowed: true,
            ..Default::default()
        };
        let new_client = pb::ClientCapabilities {
            store_planned_private: true,
            computed_blocks_allowed: true,
            ..old_client
        };
        let mut changed = config.clone();
        if let Value::Object(fields) = &mut changed {
            fields.insert("weight".into(), Value::number(7));
        }
        for (what, prior_private) in [("update", Vec::new()), ("recreate", private::being_deleted())] {
            let old = s.plan_raw(type_name, &state, &changed, &prior_private, old_client, &[]).await;
            assert!(!has_errors(&old.diagnostics), "{what}: {}", text(&old.diagnostics));
            let new = s.plan_raw(type_name, &state, &changed, &prior_private, new_client, &[]).await;
            // Planning again during apply, with the plan's private state (6.11).
            let again = s
                .plan_raw(type_name, &state, &changed, &prior_private, new_client, &new.planned_private)
                .await;
            for (label, answer) in [("6.11", &new), ("6.11 again", &again)] {
                assert_eq!(
                    undv(answer.planned_state.as_ref(), &ty),
                    undv(old.planned_state.as_ref(), &ty),
                    "{what}, {label}"
                );
                assert_eq!(answer.planned_private, old.planned_private, "{what}, {label}");
                assert_eq!(answer.requires_replace, old.requires_replace, "{what}, {label}");
                // the same notes (a pool whose class is in neither the configuration nor the cluster
                // is told so), nothing more
                assert_eq!(text(&answer.diagnostics), text(&old.diagnostics), "{what}, {label}");
            }
            let planned = undv(old.planned_state.as_ref(), &ty);
            let status_unknown = planned.get("status").is_some_and(Value::is_unknown);
            assert_eq!(status_unknown, what == "recreate", "{what}: {planned:?}");
            assert!(!private::is_being_deleted(&old.planned_private), "{what}");
        }
    });
}

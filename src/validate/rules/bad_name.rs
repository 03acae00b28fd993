//! `KV003` bad-name.
//!
//! ## What it checks
//! That every instancetype, preference and VirtualMachine (and every other KubeVirt kind) has
//! a `metadata.name`, and one the API server accepts: a DNS subdomain of at most 253
//! characters, lowercase letters, digits, `-` and `.`. A namespaced object's
//! `metadata.namespace`, when set, must be a DNS label: at most 63 lowercase letters, digits
//! and `-`, starting and ending with a letter or digit (`validate`, `build` and the KRM
//! function; `expand` leaves the namespace to the cluster).
//!
//! ## Why
//! The API server refuses an object without a name (these kinds take no `generateName` in a
//! GitOps tree) or with an invalid one, and nothing can reference it. `expand` and `build`
//! refuse such a VM with the same finding.
//!
//! ## Example
//! ```yaml
//! kind: VirtualMachineClusterInstancetype
//! metadata: {name: U1.Medium}
//! ```
//!
//! ## Fix
//! Give the object a valid `metadata.name`.

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::model::names::is_dns_label;
use crate::model::{Kind, Object};
use crate::pipeline;
use crate::validate::Rule;

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::BAD_NAME,
    name: "bad-name",
    summary: "An instancetype, preference or VirtualMachine has no `metadata.name`, or a name or namespace the API server refuses.",
    severity: Severity::Error,
};

/// Report a KubeVirt object without a valid name.
pub fn check(obj: &Object, out: &mut Vec<Diagnostic>) {
    if obj.kind() == Kind::Other {
        return;
    }
    let generate = || {
        obj.value
            .get("metadata")
            .and_then(|m| m.get("generateName"))
            .is_some()
    };
    if obj.name().is_empty() && obj.kind() == Kind::VirtualMachine && generate() {
        // `kubectl create` accepts generateName for VMs; nothing references such a VM.
        return;
    }
    out.extend(pipeline::name_diagnostic(obj));
    // A namespaced object's namespace is a DNS label; the API server clears the namespace of a
    // cluster-scoped one, so it does not matter there.
    if let Some(namespace) = obj.namespace().filter(|_| obj.kind().is_namespaced())
        && !is_dns_label(namespace.as_bytes())
    {
        let shown = format!("{:?}", crate::diagnostic::shortened(namespace));
        out.push(
            Diagnostic::error(
                RULE.code,
                obj.field_origin("metadata.namespace"),
                format!(
                    "namespace {shown} is not a valid Kubernetes namespace: at most 63 \
                     lowercase letters, digits and `-`, starting and ending with a letter or digit"
                ),
            )
            .with_object(obj.object_ref())
            .with_field("metadata.namespace"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;
    use serde_json::json;

    fn findings(kind: &str, metadata: serde_json::Value) -> Vec<Diagnostic> {
        let obj = Object::new(
            json!({"apiVersion": "kubevirt.io/v1", "kind": kind, "metadata": metadata}),
            Origin::new("c.yaml", 0, Some(1)),
        );
        let mut out = Vec::new();
        check(&obj, &mut out);
        out
    }

    #[test]
    fn a_namespace_must_be_a_dns_label() {
        for good in ["default", "team-a", "a", "0", &"n".repeat(63)] {
            let out = findings("VirtualMachine", json!({"name": "vm", "namespace": good}));
            assert_eq!(out, [], "{good}");
        }
        for bad in ["Team A", "team.a", "-a", "a-", &"n".repeat(64), "é"] {
            let out = findings("VirtualMachine", json!({"name": "vm", "namespace": bad}));
            assert_eq!(out.len(), 1, "{bad}: {out:?}");
            assert_eq!(out[0].field.as_deref(), Some("metadata.namespace"));
        }
    }

    #[test]
    fn cluster_scoped_and_other_kinds_keep_any_namespace() {
        let meta = json!({"name": "x", "namespace": "Team A"});
        assert_eq!(
            findings("VirtualMachineClusterPreference", meta.clone()),
            []
        );
        assert_eq!(findings("ConfigMap", meta), []);
    }
}

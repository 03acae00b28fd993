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
//! Every other object (tool configuration aside: kustomizations, Kptfiles, kvrender's own
//! catalog and configuration documents, anything marked `config.kubernetes.io/local-config:
//! "true"`) is held to what the API server asks of any kind: a `metadata.name` that is a string
//! (or a `generateName`), usable as a segment of the object's URL: not `.` or `..`, no `/` or
//! `%`; and, unless it is one of the built-in cluster-scoped kinds, a namespace that is a DNS
//! label when it has one.
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
use crate::model::{Kind, Object};
use crate::pipeline;
use crate::validate::Rule;

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::BAD_NAME,
    name: "bad-name",
    summary: "An instancetype, preference or VirtualMachine has no `metadata.name`, or a name or namespace the API server refuses; any other object has no name, one no kind accepts (`..`, a `/`), or a namespace that cannot exist.",
    severity: Severity::Error,
};

/// Report an object without a valid name: by the rules of KubeVirt's kinds for those, by what
/// every kind asks for any other.
pub fn check(obj: &Object, out: &mut Vec<Diagnostic>) {
    if obj.kind() == Kind::Other {
        if !obj.is_tool_config() {
            out.extend(any_kind_name(obj).or_else(|| any_kind_namespace(obj)));
        }
        return;
    }
    // A VM with only a `generateName` is refused here as `expand` and `build` refuse it (see
    // `pipeline::name_diagnostic`): a tree `validate` passes must build.
    out.extend(pipeline::name_diagnostic(obj));
}

/// The name of an object of any other kind, checked as the API server checks every kind's:
/// present (or a `generateName` in its place, for `kubectl create`), a string, and usable as a
/// segment of the object's URL (not `.` or `..`, no `/` or `%`). Which names a kind accepts
/// beyond that depends on the kind (most take DNS subdomains, RBAC roles take `:`), so nothing
/// more is asked of them.
fn any_kind_name(obj: &Object) -> Option<Diagnostic> {
    let name = obj.name();
    if name.is_empty() {
        return if pipeline::has_generate_name(obj) {
            None
        } else {
            pipeline::name_diagnostic(obj)
        };
    }
    let why = match name {
        "." | ".." => format!("it is `{name}`"),
        _ if name.contains('/') => "it contains `/`".to_string(),
        _ if name.contains('%') => "it contains `%`".to_string(),
        _ => return None,
    };
    let shown = format!("{:?}", crate::diagnostic::shortened(name));
    Some(
        Diagnostic::error(
            RULE.code,
            obj.field_origin("metadata.name"),
            format!(
                "{shown} is not a valid name for any kind of Kubernetes object: {why}; the API \
             server refuses the object"
            ),
        )
        .with_object(obj.object_ref())
        .with_field("metadata.name"),
    )
}

/// The namespace of an object of any other kind, which must be a DNS label as for KubeVirt's
/// kinds: the API server refuses a namespaced object of any kind in a namespace that cannot
/// exist. The built-in cluster-scoped kinds are left alone (the API server ignores their
/// namespace); any other kind counts as namespaced, as it does to kustomize.
fn any_kind_namespace(obj: &Object) -> Option<Diagnostic> {
    let namespace = obj.namespace()?;
    let (group, version) = obj
        .api_version()
        .rsplit_once('/')
        .unwrap_or(("", obj.api_version()));
    if crate::model::scope::is_builtin_cluster_scoped(group, version, obj.kind_str())
        || crate::model::names::is_dns_label(namespace.as_bytes())
    {
        return None;
    }
    let shown = format!("{:?}", crate::diagnostic::shortened(namespace));
    Some(
        Diagnostic::error(
            RULE.code,
            obj.field_origin("metadata.namespace"),
            format!(
                "namespace {shown} is not a valid Kubernetes namespace: at most 63 lowercase \
                 letters, digits and `-`, starting and ending with a letter or digit; the API \
                 server refuses the object"
            ),
        )
        .with_object(obj.object_ref())
        .with_field("metadata.namespace"),
    )
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
    fn cluster_scoped_kinds_keep_any_namespace() {
        let meta = json!({"name": "x", "namespace": "Team A"});
        for (api_version, kind) in [
            (
                "instancetype.kubevirt.io/v1beta1",
                "VirtualMachineClusterPreference",
            ),
            ("rbac.authorization.k8s.io/v1", "ClusterRole"),
        ] {
            let obj = Object::new(
                json!({"apiVersion": api_version, "kind": kind, "metadata": meta}),
                Origin::new("c.yaml", 0, Some(1)),
            );
            let mut out = Vec::new();
            check(&obj, &mut out);
            assert_eq!(out, [], "{kind}");
        }
    }

    /// Any other kind counts as namespaced, as it does to kustomize: the API server refuses
    /// it in a namespace that cannot exist.
    #[test]
    fn other_kinds_need_a_valid_namespace() {
        for good in ["default", "team-a"] {
            let out = findings("ConfigMap", json!({"name": "x", "namespace": good}));
            assert_eq!(out, [], "{good}");
        }
        for bad in ["Team_A", "../etc", "a.b"] {
            let out = findings("ConfigMap", json!({"name": "x", "namespace": bad}));
            assert_eq!(out.len(), 1, "{bad}: {out:?}");
            assert_eq!(out[0].field.as_deref(), Some("metadata.namespace"));
            assert!(out[0].message.contains("not a valid Kubernetes namespace"));
        }
        // The name's finding comes first and alone.
        let out = findings("ConfigMap", json!({"name": "a/b", "namespace": "Team_A"}));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].field.as_deref(), Some("metadata.name"));
    }

    #[test]
    fn any_other_object_needs_a_name_the_api_server_can_address() {
        for good in [
            json!({"name": "settings"}),
            json!({"name": "system:Controller_1"}),
            json!({"name": "...x"}),
            json!({"generateName": "job-"}),
        ] {
            assert_eq!(findings("ConfigMap", good.clone()), [], "{good}");
        }
        for (bad, says) in [
            (json!({}), "the ConfigMap has no `metadata.name`"),
            (json!({"name": ""}), "the ConfigMap has no `metadata.name`"),
            (
                json!({"generateName": ""}),
                "the ConfigMap has no `metadata.name`",
            ),
            (json!({"name": 12}), "must be a string, not an integer"),
            (json!({"name": [1]}), "must be a string, not a list"),
            (json!({"name": "../../etc/x"}), "it contains `/`"),
            (json!({"name": "a%2f"}), "it contains `%`"),
            (json!({"name": ".."}), "it is `..`"),
            (json!({"name": "."}), "it is `.`"),
        ] {
            let out = findings("ConfigMap", bad.clone());
            assert_eq!(out.len(), 1, "{bad}: {out:?}");
            assert_eq!(out[0].code, codes::BAD_NAME);
            assert_eq!(out[0].field.as_deref(), Some("metadata.name"));
            assert!(out[0].message.contains(says), "{bad}: {}", out[0].message);
        }
    }

    #[test]
    fn tool_configuration_is_not_checked() {
        let local = json!({"annotations": {"config.kubernetes.io/local-config": "true"}});
        assert_eq!(findings("ConfigMap", local), []);
        for (api_version, kind) in [
            ("kpt.dev/v1", "Kptfile"),
            ("kustomize.config.k8s.io/v1beta1", "Kustomization"),
            ("kvrender.io/v1alpha1", "Parts"),
            ("kvrender.io/v1alpha1", "KVRender"),
        ] {
            let obj = Object::new(
                json!({"apiVersion": api_version, "kind": kind, "metadata": {}}),
                Origin::new("tool.yaml", 0, Some(1)),
            );
            let mut out = Vec::new();
            check(&obj, &mut out);
            assert_eq!(out, [], "{kind}");
        }
    }
}

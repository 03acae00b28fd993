//! The instancetype's node selector (mirrors KubeVirt's `pkg/instancetype/apply/nodeselector.go`).
//!
//! A selector present in the instancetype, even an empty one, is owned by it: any selector
//! present in the VM, even `{}`, conflicts.

use serde_json::Value;

use crate::kubevirt::conflict::Conflict;
use crate::model::path;
use crate::model::path::Fields;

/// Copy `nodeSelector` into the template spec, or report the conflict.
pub(super) fn apply(instancetype: &Value, spec: &mut Value) -> Option<Conflict> {
    let selector = instancetype
        .field("nodeSelector")
        .filter(|v| !v.is_null())?;
    if path::is_set(spec, &["nodeSelector"]) {
        return Some(Conflict::spec("nodeSelector"));
    }
    // An empty selector is stored but omitted on output.
    if !path::is_zero(Some(selector)) {
        path::set(spec, &["nodeSelector"], selector.clone());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn copies_selector() {
        let mut spec = json!({});
        assert!(apply(&json!({"nodeSelector": {"a": "b"}}), &mut spec).is_none());
        assert_eq!(spec, json!({"nodeSelector": {"a": "b"}}));
    }

    #[test]
    fn empty_vm_selector_still_conflicts() {
        let mut spec = json!({"nodeSelector": {}});
        let c = apply(&json!({"nodeSelector": {"a": "b"}}), &mut spec);
        assert_eq!(c.unwrap().path, "spec.template.spec.nodeSelector");
    }

    #[test]
    fn empty_instancetype_selector_owns_but_writes_nothing() {
        let mut spec = json!({});
        assert!(apply(&json!({"nodeSelector": {}}), &mut spec).is_none());
        assert_eq!(spec, json!({}));
        let mut spec = json!({"nodeSelector": {}});
        assert!(apply(&json!({"nodeSelector": {}}), &mut spec).is_some());
    }

    #[test]
    fn absent_or_null_instancetype_selector_leaves_vm_alone() {
        let mut spec = json!({"nodeSelector": {"x": "y"}});
        assert!(apply(&json!({}), &mut spec).is_none());
        assert!(apply(&json!({"nodeSelector": null}), &mut spec).is_none());
        assert_eq!(spec, json!({"nodeSelector": {"x": "y"}}));
    }
}

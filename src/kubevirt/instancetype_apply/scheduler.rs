//! The instancetype's scheduler name (mirrors KubeVirt's `pkg/instancetype/apply/scheduler.go`).

use serde_json::Value;

use crate::kubevirt::conflict::Conflict;
use crate::model::path;
use crate::model::path::Fields;

/// Copy a non-empty `schedulerName` into the template spec, or report the conflict when the VM
/// names one too.
pub(super) fn apply(instancetype: &Value, spec: &mut Value) -> Option<Conflict> {
    let name = instancetype.field("schedulerName");
    if path::is_zero(name) {
        return None;
    }
    if !path::is_zero(spec.field("schedulerName")) {
        return Some(Conflict::spec("schedulerName"));
    }
    path::set(spec, &["schedulerName"], name?.clone());
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn copies_name_over_empty_vm_value() {
        let mut spec = json!({"schedulerName": ""});
        assert!(apply(&json!({"schedulerName": "s"}), &mut spec).is_none());
        assert_eq!(spec, json!({"schedulerName": "s"}));
    }

    #[test]
    fn conflicts_with_vm_name() {
        let mut spec = json!({"schedulerName": "mine"});
        let c = apply(&json!({"schedulerName": "s"}), &mut spec).unwrap();
        assert_eq!(c.path, "spec.template.spec.schedulerName");
    }

    #[test]
    fn empty_instancetype_name_owns_nothing() {
        let mut spec = json!({"schedulerName": "mine"});
        assert!(apply(&json!({"schedulerName": ""}), &mut spec).is_none());
        assert_eq!(spec, json!({"schedulerName": "mine"}));
    }
}

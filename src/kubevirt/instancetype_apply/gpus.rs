//! The instancetype's GPUs (mirrors KubeVirt's `pkg/instancetype/apply/gpu.go`).

use serde_json::Value;

use super::{domain_map, non_empty_list};
use crate::kubevirt::conflict::Conflict;
use crate::model::path;
use crate::model::path::Fields;

/// Copy a non-empty `gpus` list into `domain.devices`, or report the conflict when the VM
/// lists GPUs too.
pub(super) fn apply(instancetype: &Value, spec: &mut Value) -> Option<Conflict> {
    let list = instancetype
        .field("gpus")
        .filter(|v| non_empty_list(Some(v)))?;
    if non_empty_list(path::get(spec, &["domain", "devices", "gpus"])) {
        return Some(Conflict::spec("domain.devices.gpus"));
    }
    domain_map(spec, &["devices"])?.insert("gpus".to_string(), super::go_copy(list));
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn copies_list_over_empty_vm_list() {
        let it = json!({"gpus": [{"name": "a", "deviceName": "vendor/a"}]});
        let mut spec = json!({"domain": {"devices": {"gpus": [], "disks": []}}});
        assert!(apply(&it, &mut spec).is_none());
        assert_eq!(
            spec,
            json!({"domain": {"devices": {"gpus": [{"name": "a", "deviceName": "vendor/a"}], "disks": []}}})
        );
    }

    #[test]
    fn non_empty_vm_list_conflicts() {
        let it = json!({"gpus": [{"name": "a", "deviceName": "vendor/a"}]});
        let mut spec =
            json!({"domain": {"devices": {"gpus": [{"name": "b", "deviceName": "vendor/b"}]}}});
        assert_eq!(
            apply(&it, &mut spec).unwrap().path,
            "spec.template.spec.domain.devices.gpus"
        );
    }

    #[test]
    fn empty_instancetype_list_owns_nothing() {
        let mut spec =
            json!({"domain": {"devices": {"gpus": [{"name": "b", "deviceName": "vendor/b"}]}}});
        let before = spec.clone();
        assert!(apply(&json!({"gpus": []}), &mut spec).is_none());
        assert_eq!(spec, before);
    }
}

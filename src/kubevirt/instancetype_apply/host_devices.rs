//! The instancetype's host devices (mirrors KubeVirt's `pkg/instancetype/apply/hostdevices.go`).

use serde_json::Value;

use super::{domain_map, non_empty_list};
use crate::kubevirt::conflict::Conflict;
use crate::model::path;
use crate::model::path::Fields;

/// Copy a non-empty `hostDevices` list into `domain.devices`, or report the conflict when the VM
/// lists host devices too.
pub(super) fn apply(instancetype: &Value, spec: &mut Value) -> Option<Conflict> {
    let list = instancetype
        .field("hostDevices")
        .filter(|v| non_empty_list(Some(v)))?;
    if non_empty_list(path::get(spec, &["domain", "devices", "hostDevices"])) {
        return Some(Conflict::spec("domain.devices.hostDevices"));
    }
    domain_map(spec, &["devices"])?.insert("hostDevices".to_string(), super::go_copy(list));
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn copies_list_over_empty_vm_list() {
        let it = json!({"hostDevices": [{"name": "a", "deviceName": "vendor/a"}]});
        let mut spec = json!({"domain": {"devices": {"hostDevices": [], "disks": []}}});
        assert!(apply(&it, &mut spec).is_none());
        assert_eq!(
            spec,
            json!({"domain": {"devices": {"hostDevices": [{"name": "a", "deviceName": "vendor/a"}], "disks": []}}})
        );
    }

    #[test]
    fn non_empty_vm_list_conflicts() {
        let it = json!({"hostDevices": [{"name": "a", "deviceName": "vendor/a"}]});
        let mut spec = json!({"domain": {"devices": {"hostDevices": [{"name": "b", "deviceName": "vendor/b"}]}}});
        assert_eq!(
            apply(&it, &mut spec).unwrap().path,
            "spec.template.spec.domain.devices.hostDevices"
        );
    }

    #[test]
    fn empty_instancetype_list_owns_nothing() {
        let mut spec = json!({"domain": {"devices": {"hostDevices": [{"name": "b", "deviceName": "vendor/b"}]}}});
        let before = spec.clone();
        assert!(apply(&json!({"hostDevices": []}), &mut spec).is_none());
        assert_eq!(spec, before);
    }
}

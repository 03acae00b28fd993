//! The instancetype's launch security (mirrors KubeVirt's
//! `pkg/instancetype/apply/launchsecurity.go`).

use serde_json::Value;

use super::domain_map;
use crate::kubevirt::conflict::Conflict;
use crate::model::path;
use crate::model::path::Fields;

/// Copy `launchSecurity`, or report the conflict when the VM has one.
pub(super) fn apply(instancetype: &Value, spec: &mut Value) -> Option<Conflict> {
    let security = instancetype
        .field("launchSecurity")
        .filter(|v| !v.is_null())?;
    if path::is_set(spec, &["domain", "launchSecurity"]) {
        return Some(Conflict::spec("domain.launchSecurity"));
    }
    domain_map(spec, &[])?.insert("launchSecurity".to_string(), super::go_copy(security));
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn copies_even_an_empty_block() {
        let mut spec = json!({});
        assert!(apply(&json!({"launchSecurity": {"sev": {}}}), &mut spec).is_none());
        assert_eq!(spec, json!({"domain": {"launchSecurity": {"sev": {}}}}));
    }

    #[test]
    fn vm_block_conflicts() {
        let mut spec = json!({"domain": {"launchSecurity": {}}});
        let c = apply(&json!({"launchSecurity": {"sev": {}}}), &mut spec).unwrap();
        assert_eq!(c.path, "spec.template.spec.domain.launchSecurity");
        assert!(apply(&json!({}), &mut spec).is_none());
    }
}

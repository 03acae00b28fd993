//! Preferred launch security (mirrors `preference/apply/launchsecurity.go`): copied whole to
//! `domain.launchSecurity` when the VM has none.

use serde_json::Value;

use super::fill_ptr_go;
use crate::model::path::Fields;

/// Fill `domain.launchSecurity` from `preferredLaunchSecurity`.
pub(super) fn apply(preference: &Value, spec: &mut Value) {
    fill_ptr_go(
        spec,
        &["domain"],
        "launchSecurity",
        preference.field("preferredLaunchSecurity"),
        &["session", "dhCert"],
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn applied_when_vm_has_none() {
        let mut s = json!({"domain": {}});
        apply(&json!({"preferredLaunchSecurity": {"snp": {}}}), &mut s);
        assert_eq!(s, json!({"domain": {"launchSecurity": {"snp": {}}}}));
    }

    #[test]
    fn user_value_wins() {
        let mut s = json!({"domain": {"launchSecurity": {"sev": {}}}});
        apply(&json!({"preferredLaunchSecurity": {"tdx": {}}}), &mut s);
        assert_eq!(s, json!({"domain": {"launchSecurity": {"sev": {}}}}));
    }
}

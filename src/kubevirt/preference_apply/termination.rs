//! Preferred termination grace period (mirrors `preference/apply/termination.go`): fills
//! `spec.terminationGracePeriodSeconds` when the VM leaves it unset. It is a pointer, so the
//! VM's explicit `0` counts as set.

use serde_json::Value;

use super::fill_ptr;
use crate::model::path::Fields;

/// Fill `terminationGracePeriodSeconds` from `preferredTerminationGracePeriodSeconds`.
pub(super) fn apply(preference: &Value, spec: &mut Value) {
    fill_ptr(
        spec,
        &[],
        "terminationGracePeriodSeconds",
        preference.field("preferredTerminationGracePeriodSeconds"),
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fills_unset_and_keeps_user_zero() {
        let mut s = json!({});
        apply(
            &json!({"preferredTerminationGracePeriodSeconds": 0}),
            &mut s,
        );
        assert_eq!(s, json!({"terminationGracePeriodSeconds": 0}));
        let mut s = json!({"terminationGracePeriodSeconds": 0});
        apply(
            &json!({"preferredTerminationGracePeriodSeconds": 180}),
            &mut s,
        );
        assert_eq!(s, json!({"terminationGracePeriodSeconds": 0}));
    }
}

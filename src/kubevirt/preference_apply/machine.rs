//! Preferred machine type (mirrors `preference/apply/machine.go`): a non-empty
//! `machine.preferredMachineType` creates `domain.machine` when missing and fills an empty
//! `type`. An empty `machine` block does nothing.

use serde_json::Value;

use super::{fill_str, nonempty_str};

/// Fill `domain.machine.type` from `machine.preferredMachineType`.
pub(super) fn apply(preference: &Value, spec: &mut Value) {
    fill_str(
        spec,
        &["domain", "machine"],
        "type",
        nonempty_str(preference, &["machine", "preferredMachineType"]),
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn applied_where_unset() {
        let mut s = json!({"domain": {}});
        apply(
            &json!({"machine": {"preferredMachineType": "pc-q35-rhel9.4.0"}}),
            &mut s,
        );
        assert_eq!(
            s,
            json!({"domain": {"machine": {"type": "pc-q35-rhel9.4.0"}}})
        );
        let mut s = json!({"domain": {"machine": {"type": ""}}});
        apply(&json!({"machine": {"preferredMachineType": "q35"}}), &mut s);
        assert_eq!(s, json!({"domain": {"machine": {"type": "q35"}}}));
    }

    #[test]
    fn user_type_kept_and_empty_block_ignored() {
        let mut s = json!({"domain": {"machine": {"type": "pc"}}});
        apply(&json!({"machine": {"preferredMachineType": "q35"}}), &mut s);
        assert_eq!(s, json!({"domain": {"machine": {"type": "pc"}}}));
        let mut s = json!({"domain": {}});
        apply(&json!({"machine": {}}), &mut s);
        assert_eq!(s, json!({"domain": {}}));
    }
}

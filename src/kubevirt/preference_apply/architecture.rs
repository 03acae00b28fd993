//! Preferred architecture (mirrors `preference/apply/architecture.go`): a non-empty
//! `preferredArchitecture` fills an empty `spec.architecture`.

use serde_json::Value;

use super::{fill_str, nonempty_str};

/// Fill `architecture` from `preferredArchitecture`.
pub(super) fn apply(preference: &Value, spec: &mut Value) {
    fill_str(
        spec,
        &[],
        "architecture",
        nonempty_str(preference, &["preferredArchitecture"]),
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fills_empty_architecture() {
        let mut s = json!({"domain": {}});
        apply(&json!({"preferredArchitecture": "s390x"}), &mut s);
        assert_eq!(s, json!({"domain": {}, "architecture": "s390x"}));
        let mut s = json!({"architecture": ""});
        apply(&json!({"preferredArchitecture": "arm64"}), &mut s);
        assert_eq!(s, json!({"architecture": "arm64"}));
    }

    #[test]
    fn keeps_user_architecture_and_ignores_empty_preference() {
        let mut s = json!({"architecture": "amd64"});
        apply(&json!({"preferredArchitecture": "arm64"}), &mut s);
        assert_eq!(s, json!({"architecture": "amd64"}));
        let mut s = json!({});
        apply(&json!({"preferredArchitecture": ""}), &mut s);
        apply(&json!({"preferredArchitecture": null}), &mut s);
        assert_eq!(s, json!({}));
    }
}

//! Preferred subdomain (mirrors `preference/apply/subdomain.go`): fills an empty
//! `spec.subdomain`.

use serde_json::Value;

use super::{fill_str, nonempty_str};

/// Fill `subdomain` from `preferredSubdomain`.
pub(super) fn apply(preference: &Value, spec: &mut Value) {
    fill_str(
        spec,
        &[],
        "subdomain",
        nonempty_str(preference, &["preferredSubdomain"]),
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn fills_only_empty_subdomain() {
        let mut s = json!({});
        apply(&json!({"preferredSubdomain": "pref"}), &mut s);
        assert_eq!(s, json!({"subdomain": "pref"}));
        let mut s = json!({"subdomain": "user"});
        apply(&json!({"preferredSubdomain": "pref"}), &mut s);
        assert_eq!(s, json!({"subdomain": "user"}));
    }

    #[test]
    fn empty_preference_writes_nothing() {
        let mut s = json!({});
        apply(&json!({"preferredSubdomain": ""}), &mut s);
        assert_eq!(s, json!({}));
    }
}

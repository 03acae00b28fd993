//! Preference annotations (mirrors `preference/apply/annotations.go`): each annotation is copied
//! to the template's `metadata.annotations` unless the template already has that key.

use serde_json::Value;

use crate::model::path;
use crate::model::path::Fields;

/// Copy `annotations` of the preference into `template.metadata.annotations`, keeping the
/// template's own values.
pub(super) fn apply(preference: &Value, template: &mut Value) {
    let Some(wanted) = preference.field("annotations").and_then(Value::as_object) else {
        return;
    };
    if wanted.is_empty() {
        return;
    }
    let Some(target) = path::ensure_map(template, &["metadata", "annotations"]) else {
        return;
    };
    if target.is_empty() {
        // Every annotation goes in, in order: a clone copies the hash table instead of hashing
        // each key again.
        target.clone_from(wanted);
        return;
    }
    for (key, value) in wanted {
        if target.field(key).is_none() {
            target.insert(key.clone(), value.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn adds_missing_keys_and_keeps_user_values() {
        let mut t = json!({"metadata": {"annotations": {"a": "user", "z": ""}}, "spec": {}});
        apply(
            &json!({"annotations": {"a": "pref", "b": "pref", "z": "pref"}}),
            &mut t,
        );
        assert_eq!(
            t,
            json!({"metadata": {"annotations": {"a": "user", "z": "", "b": "pref"}}, "spec": {}})
        );
    }

    #[test]
    fn creates_metadata_and_annotations() {
        let mut t = json!({"spec": {}});
        apply(&json!({"annotations": {"b": "x"}}), &mut t);
        assert_eq!(
            t,
            json!({"spec": {}, "metadata": {"annotations": {"b": "x"}}})
        );
    }

    #[test]
    fn empty_or_absent_annotations_write_nothing() {
        let mut t = json!({"spec": {}});
        apply(&json!({"annotations": {}}), &mut t);
        apply(&json!({}), &mut t);
        assert_eq!(t, json!({"spec": {}}));
    }

    #[test]
    fn non_map_annotations_left_alone() {
        let mut t = json!({"metadata": {"annotations": "bad"}});
        apply(&json!({"annotations": {"b": "x"}}), &mut t);
        assert_eq!(t, json!({"metadata": {"annotations": "bad"}}));
    }
}

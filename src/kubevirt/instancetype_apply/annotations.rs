//! The instancetype's annotations (mirrors KubeVirt's `pkg/instancetype/apply/annotations.go`).
//!
//! Each instancetype annotation is added to the template's metadata unless the VM already has
//! that key; a different value there is a conflict reported as `annotations.<key>` (KubeVirt
//! gives this path no `spec.template` prefix). Values are Go strings there: `null` reads as `""`.

use serde_json::{Map, Value};

use crate::kubevirt::conflict::Conflict;
use crate::model::path;
use crate::model::path::Fields;

/// Merge the instancetype's `annotations` into `template.metadata.annotations`; `metadata` and
/// `annotations` are created only when an annotation is added.
pub(super) fn apply(instancetype: &Value, template: &mut Value) -> Vec<Conflict> {
    let mut conflicts = Vec::new();
    let Some(wanted) = instancetype.field("annotations").and_then(Value::as_object) else {
        return conflicts;
    };
    for (key, value) in wanted {
        let have = match path::get(template, &["metadata", "annotations"]) {
            Some(Value::Object(have)) => have.field(key),
            None | Some(Value::Null) => None,
            // Annotations of the wrong type: leave them alone.
            Some(_) => return conflicts,
        };
        if let Some(have) = have {
            if as_go_string(have) != as_go_string(value) {
                conflicts.push(Conflict::annotation(key));
            }
            continue;
        }
        if let Some(map) = annotations_mut(template) {
            let value = if value.is_null() {
                Value::String(String::new())
            } else {
                value.clone()
            };
            map.insert(key.clone(), value);
        }
    }
    conflicts
}

/// A map value as the Go string it decodes to: `null` is `""`; other values as they are.
fn as_go_string(v: &Value) -> Option<&Value> {
    (!v.is_null() && v.as_str() != Some("")).then_some(v)
}

fn annotations_mut(template: &mut Value) -> Option<&mut Map<String, Value>> {
    path::ensure_map(template, &["metadata", "annotations"])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn null_and_empty_values_are_the_same_go_string() {
        let mut t = json!({"metadata": {"annotations": {"a": ""}}});
        let c = apply(&json!({"annotations": {"a": null, "b": null}}), &mut t);
        assert!(c.is_empty());
        assert_eq!(t, json!({"metadata": {"annotations": {"a": "", "b": ""}}}));
        let c = apply(&json!({"annotations": {"a": "x"}}), &mut t);
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn adds_missing_annotations_creating_metadata() {
        let mut t = json!({"spec": {}});
        let c = apply(&json!({"annotations": {"a": "1", "b": "2"}}), &mut t);
        assert!(c.is_empty());
        assert_eq!(
            t,
            json!({"spec": {}, "metadata": {"annotations": {"a": "1", "b": "2"}}})
        );
    }

    #[test]
    fn same_value_is_fine_different_value_conflicts() {
        let mut t =
            json!({"metadata": {"labels": {"l": "x"}, "annotations": {"a": "1", "b": "other"}}});
        let c = apply(
            &json!({"annotations": {"a": "1", "b": "2", "c": "3"}}),
            &mut t,
        );
        assert_eq!(c, vec![Conflict::annotation("b")]);
        assert_eq!(c[0].path, "annotations.b");
        assert_eq!(
            t["metadata"]["annotations"],
            json!({"a": "1", "b": "other", "c": "3"})
        );
    }

    #[test]
    fn no_annotations_creates_nothing() {
        let mut t = json!({"spec": {}});
        assert!(apply(&json!({"annotations": {}}), &mut t).is_empty());
        assert!(apply(&json!({}), &mut t).is_empty());
        assert_eq!(t, json!({"spec": {}}));
    }
}

//! Deep merge of value trees, the one way catalog fragments combine.
//!
//! The rules are those of a JSON merge patch (RFC 7386), applied in order: mappings merge key
//! by key, recursively; any other value (string, number, boolean, list) replaces what was there;
//! `null` removes the key. New keys are appended, so the first fragment that mentions a key
//! decides where it appears in the output.

use serde_json::{Map, Value};

use crate::model::path::Fields;

/// Merge `overlay` into `base` in place.
pub fn deep_merge(base: &mut Value, overlay: &Value) {
    match (base, overlay) {
        (Value::Object(base), Value::Object(overlay)) => {
            for (key, value) in overlay {
                if value.is_null() {
                    base.shift_remove(key);
                    continue;
                }
                match base.get_mut(key) {
                    Some(existing) if existing.is_object() && value.is_object() => {
                        deep_merge(existing, value);
                    }
                    _ => {
                        base.insert(key.clone(), strip_nulls(value));
                    }
                }
            }
        }
        (base, overlay) => *base = strip_nulls(overlay),
    }
}

/// Merge `overlay` into `base` in place, taking ownership of the overlay (no copies).
pub fn deep_merge_owned(base: &mut Value, overlay: Value) {
    match (base, overlay) {
        (Value::Object(base), Value::Object(overlay)) => {
            for (key, value) in overlay {
                merge_entry(base, key, value);
            }
        }
        (base, overlay) => *base = strip_nulls_owned(overlay),
    }
}

/// Merge `value` into the entry `key` of `base`, as [`deep_merge_owned`] merges each entry of
/// a mapping: the same as merging `{key: value}` into `base`, without building that mapping.
pub fn merge_entry(base: &mut Map<String, Value>, key: String, value: Value) {
    if value.is_null() {
        base.shift_remove(&key);
        return;
    }
    match base.field_mut(&key) {
        Some(existing) if existing.is_object() && value.is_object() => {
            deep_merge_owned(existing, value);
        }
        Some(existing) => *existing = strip_nulls_owned(value),
        None => {
            base.insert(key, strip_nulls_owned(value));
        }
    }
}

/// `value` without `null` entries in its mappings, removed in place (no rebuilt mappings).
fn strip_nulls_owned(mut value: Value) -> Value {
    strip_nulls_in_place(&mut value);
    value
}

fn strip_nulls_in_place(value: &mut Value) {
    if let Value::Object(map) = value {
        map.retain(|_, v| !v.is_null());
        map.values_mut().for_each(strip_nulls_in_place);
    }
}

/// A copy of `value` whose mappings carry no `null` entries (a `null` asks for removal, so it
/// never reaches the output even when there was nothing to remove).
fn strip_nulls(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), strip_nulls(v)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn maps_merge_scalars_and_lists_replace_null_removes() {
        let mut base = json!({"a": {"x": 1, "y": [1, 2]}, "b": "keep", "c": true});
        deep_merge(
            &mut base,
            &json!({"a": {"y": [3], "z": {"n": null, "m": 1}}, "c": null, "d": 4}),
        );
        assert_eq!(
            base,
            json!({"a": {"x": 1, "y": [3], "z": {"m": 1}}, "b": "keep", "d": 4})
        );
    }

    #[test]
    fn first_mention_decides_key_order() {
        let mut base = json!({"spec": {"cpu": 1}});
        deep_merge(
            &mut base,
            &json!({"metadata": {}, "spec": {"memory": 2, "cpu": 3}}),
        );
        let keys: Vec<&String> = base["spec"].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["cpu", "memory"]);
        assert_eq!(base["spec"]["cpu"], 3);
    }

    #[test]
    fn owned_merge_agrees_with_borrowed_merge() {
        let base = json!({"a": {"x": 1, "y": [1, 2]}, "b": "keep", "c": true});
        let overlay = json!({"a": {"y": [3], "z": {"n": null, "m": 1}}, "c": null, "d": 4});
        let mut borrowed = base.clone();
        deep_merge(&mut borrowed, &overlay);
        let mut owned = base;
        deep_merge_owned(&mut owned, overlay);
        assert_eq!(owned, borrowed);
    }

    #[test]
    fn merging_an_entry_is_merging_a_one_entry_map() {
        let base = json!({"a": {"x": 1, "y": {"k": 1}}, "b": "keep", "c": {"d": 1}});
        let values = [
            json!({"y": {"k": null, "n": {"m": null, "o": 2}}, "x": null, "z": [null]}),
            json!(null),
            json!("text"),
            json!({"n": null}),
        ];
        for key in ["a", "b", "c", "new"] {
            for value in &values {
                let mut whole = base.clone();
                deep_merge_owned(&mut whole, json!({ key: value.clone() }));
                let mut entry = base.clone();
                merge_entry(
                    entry.as_object_mut().unwrap(),
                    key.to_string(),
                    value.clone(),
                );
                // The text compares key order too.
                assert_eq!(entry.to_string(), whole.to_string(), "{key}: {value}");
            }
        }
    }

    #[test]
    fn a_map_replaces_a_scalar() {
        let mut base = json!({"a": "text"});
        deep_merge(&mut base, &json!({"a": {"b": 1}}));
        assert_eq!(base, json!({"a": {"b": 1}}));
    }
}

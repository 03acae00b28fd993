//! Small helpers to read and write nested fields of a [`Value`] tree by key path.
//!
//! Go's KubeVirt code works on typed structs, where "the VM sets X" means "X is non-nil" (for
//! pointers) or "X is not the zero value" (for `omitempty` scalars, maps and lists). These
//! helpers give the rules the same vocabulary on an untyped tree.

use serde_json::{Map, Value};

/// Mappings up to this many entries are searched in order by [`lookup`].
const SCAN_MAX: usize = 8;

/// `map[key]`. A small mapping (most Kubernetes mappings are) is searched in order: comparing
/// a few keys costs less than hashing one.
pub fn lookup<'a>(map: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if map.len() <= SCAN_MAX {
        map.iter().find_map(|(k, v)| (k == key).then_some(v))
    } else {
        map.get(key)
    }
}

/// `map[key]`, mutably, found as [`lookup`] finds it.
pub fn lookup_mut<'a>(map: &'a mut Map<String, Value>, key: &str) -> Option<&'a mut Value> {
    if map.len() <= SCAN_MAX {
        map.iter_mut().find_map(|(k, v)| (k == key).then_some(v))
    } else {
        map.get_mut(key)
    }
}

/// The value at `path`, if every step exists.
pub fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut cur = v;
    for key in path {
        cur = lookup(cur.as_object()?, key)?;
    }
    Some(cur)
}

/// A mutable reference to the value at `path`, if every step exists.
pub fn get_mut<'a>(v: &'a mut Value, path: &[&str]) -> Option<&'a mut Value> {
    let mut cur = v;
    for key in path {
        cur = cur.as_object_mut()?.get_mut(*key)?;
    }
    Some(cur)
}

/// The mapping at `path`, created (as `{}`) where missing or null. Returns `None` when some step
/// exists but is not a mapping (a wrong type we must not overwrite).
pub fn ensure_map<'a>(v: &'a mut Value, path: &[&str]) -> Option<&'a mut Map<String, Value>> {
    let mut cur = v;
    if cur.is_null() {
        *cur = Value::Object(Map::new());
    }
    for key in path {
        let map = cur.as_object_mut()?;
        let entry = map
            .entry((*key).to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if entry.is_null() {
            *entry = Value::Object(Map::new());
        }
        cur = entry;
    }
    cur.as_object_mut()
}

/// Set `path` to `value`, creating parent mappings. Returns false when a parent is not a mapping.
pub fn set(v: &mut Value, path: &[&str], value: Value) -> bool {
    let Some((last, parents)) = path.split_last() else {
        *v = value;
        return true;
    };
    match ensure_map(v, parents) {
        Some(map) => {
            map.insert((*last).to_string(), value);
            true
        }
        None => false,
    }
}

/// Remove the key at `path`, returning its value.
pub fn remove(v: &mut Value, path: &[&str]) -> Option<Value> {
    let (last, parents) = path.split_last()?;
    get_mut(v, parents)?.as_object_mut()?.shift_remove(*last)
}

/// Whether `v` is what Go would treat as "unset" for an `omitempty` field: absent, null, `false`,
/// `0`, `""`, `{}` or `[]`.
pub fn is_zero(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Bool(b)) => !b,
        Some(Value::Number(n)) => n.as_f64() == Some(0.0),
        Some(Value::String(s)) => s.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::Object(m)) => m.is_empty(),
    }
}

/// Whether the field at `path` is set in Go's pointer sense: present and not null.
pub fn is_set(v: &Value, path: &[&str]) -> bool {
    get(v, path).is_some_and(|x| !x.is_null())
}

/// The string at `path`, if it is one.
pub fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    get(v, path).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_finds_what_get_finds_in_small_and_large_mappings() {
        for len in [0, 1, SCAN_MAX, SCAN_MAX + 1, 40] {
            let mut map: Map<String, Value> =
                (0..len).map(|i| (format!("k{i}"), i.into())).collect();
            for i in 0..len + 2 {
                let key = format!("k{i}");
                assert_eq!(lookup(&map, &key), map.get(&key), "{len} {key}");
                let expected = map.get(&key).cloned();
                assert_eq!(lookup_mut(&mut map, &key).cloned(), expected, "{len} {key}");
            }
        }
    }
}

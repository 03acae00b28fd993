//! Small helpers to read and write nested fields of a [`Value`] tree by key path.
//!
//! Go's KubeVirt code works on typed structs, where "the VM sets X" means "X is non-nil" (for
//! pointers) or "X is not the zero value" (for `omitempty` scalars, maps and lists). These
//! helpers give the rules the same vocabulary on an untyped tree.

use serde_json::{Map, Value};

/// Mappings up to this size are searched key by key instead of through their hash table.
const SCAN: usize = 12;

/// Field lookup for mappings and values, cheaper than `Map::get` on the small mappings
/// Kubernetes objects are made of: comparing a dozen short keys costs less than hashing one
/// (serde_json's maps hash the key of every lookup).
pub trait Fields {
    /// The value of field `key`, if this is a mapping that has it.
    fn field(&self, key: &str) -> Option<&Value>;
    /// The value of field `key`, mutable, if this is a mapping that has it.
    fn field_mut(&mut self, key: &str) -> Option<&mut Value>;
}

impl Fields for Map<String, Value> {
    #[inline]
    fn field(&self, key: &str) -> Option<&Value> {
        if self.len() <= SCAN {
            self.iter().find_map(|(k, v)| (k == key).then_some(v))
        } else {
            self.get(key)
        }
    }

    #[inline]
    fn field_mut(&mut self, key: &str) -> Option<&mut Value> {
        if self.len() <= SCAN {
            self.iter_mut().find_map(|(k, v)| (k == key).then_some(v))
        } else {
            self.get_mut(key)
        }
    }
}

impl Fields for Value {
    #[inline]
    fn field(&self, key: &str) -> Option<&Value> {
        self.as_object()?.field(key)
    }

    #[inline]
    fn field_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.as_object_mut()?.field_mut(key)
    }
}

/// Where a value sits in a walk: a path prefix, or a key or list index under its parent. Kept on
/// the stack while walking and spelled out as a dotted path (`a.b[0].c`) only for a finding.
#[derive(Clone, Copy)]
pub enum At<'a> {
    /// The path of the value a walk starts from (may be empty, or dotted).
    Root(&'a str),
    /// Field `key` of the parent mapping.
    Key(&'a At<'a>, &'a str),
    /// Item `index` of the parent list.
    Index(&'a At<'a>, usize),
}

impl At<'_> {
    fn write(&self, out: &mut String) {
        match *self {
            At::Root(path) => out.push_str(path),
            At::Key(parent, key) => {
                parent.write(out);
                push_key(out, key);
            }
            At::Index(parent, index) => {
                parent.write(out);
                out.push('[');
                out.push_str(&index.to_string());
                out.push(']');
            }
        }
    }

    /// The dotted path.
    pub fn path(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }
}

/// Append field `key` to the dotted path `out`: `.key`, or `["key"]` for a key a dot would
/// split (a label such as `app.kubernetes.io/name`), as [`crate::load::locate::parse_path`]
/// reads it back.
pub fn push_key(out: &mut String, key: &str) {
    if needs_brackets(key) {
        out.push_str("[\"");
        out.push_str(key);
        out.push_str("\"]");
    } else {
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(key);
    }
}

/// The dotted path of field `key` under `parent` (see [`push_key`]).
pub fn join(parent: &str, key: &str) -> String {
    let mut out = String::with_capacity(parent.len() + key.len() + 4);
    out.push_str(parent);
    push_key(&mut out, key);
    out
}

fn needs_brackets(key: &str) -> bool {
    key.is_empty() || key.contains(['.', '[', ']'])
}

/// The value at `path`, if every step exists.
pub fn get<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    let mut cur = v;
    for key in path {
        cur = cur.field(key)?;
    }
    Some(cur)
}

/// A mutable reference to the value at `path`, if every step exists.
pub fn get_mut<'a>(v: &'a mut Value, path: &[&str]) -> Option<&'a mut Value> {
    let mut cur = v;
    for key in path {
        cur = cur.field_mut(key)?;
    }
    Some(cur)
}

/// The value of field `key` of `map`, inserted (at the end, as `Map::entry` would) from
/// `default` when absent. Unlike `Map::entry`, the key is copied only when inserted, and a small
/// mapping is searched once, without hashing.
pub fn field_or_insert_with<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
    default: impl FnOnce() -> Value,
) -> &'a mut Value {
    let found = if map.len() <= SCAN {
        map.keys().position(|k| k == key)
    } else {
        map.contains_key(key).then_some(usize::MAX)
    };
    match found {
        Some(usize::MAX) => map.get_mut(key),
        Some(i) => map.values_mut().nth(i),
        None => {
            map.insert(key.to_string(), default());
            // A new key goes last.
            map.values_mut().next_back()
        }
    }
    .expect("the field was found or inserted")
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
        let entry = field_or_insert_with(map, key, || Value::Object(Map::new()));
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

/// Remove the fields `keys` from `v` when it is a mapping, keeping the order of the others: as
/// removing each in turn, with one pass over the mapping instead of hashing every key.
pub fn remove_fields(v: Option<&mut Value>, keys: &[&str]) {
    if let Some(map) = v.and_then(Value::as_object_mut)
        && map.keys().any(|k| keys.contains(&k.as_str()))
    {
        map.retain(|k, _| !keys.contains(&k.as_str()));
    }
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

/// Whether something on the way to `path` is neither a mapping nor `null` (a string where
/// `spec.cpu` belongs), so that the field has no place to be.
pub fn blocked(v: &Value, path: &[&str]) -> bool {
    let mut node = v;
    for key in path {
        match node {
            Value::Object(map) => match map.get(*key) {
                Some(next) => node = next,
                None => return false,
            },
            Value::Null => return false,
            _ => return true,
        }
    }
    false
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
    fn a_key_a_dot_would_split_is_written_in_brackets_and_read_back_whole() {
        use crate::load::locate::{Step, parse_path};
        let path = join(&join("metadata.labels", "app.kubernetes.io/name"), "x");
        assert_eq!(path, r#"metadata.labels["app.kubernetes.io/name"].x"#);
        assert_eq!(
            parse_path(&path),
            [
                Step::Key("metadata"),
                Step::Key("labels"),
                Step::Key("app.kubernetes.io/name"),
                Step::Key("x"),
            ]
        );
        assert_eq!(join("", "spec"), "spec");
        assert_eq!(join("", "a.b"), r#"["a.b"]"#);
    }

    #[test]
    fn fields_finds_what_get_finds_in_small_and_large_mappings() {
        for len in [0, 1, SCAN, SCAN + 1, 40] {
            let mut map: Map<String, Value> =
                (0..len).map(|i| (format!("k{i}"), i.into())).collect();
            for i in 0..len + 2 {
                let key = format!("k{i}");
                assert_eq!(map.field(&key), map.get(&key), "{len} {key}");
                let expected = map.get(&key).cloned();
                assert_eq!(map.field_mut(&key).cloned(), expected, "{len} {key}");
                let value = Value::Object(map.clone());
                assert_eq!(value.field(&key), map.get(&key), "{len} {key}");
            }
        }
        assert_eq!(Value::from(1).field("k0"), None);
    }

    #[test]
    fn field_or_insert_with_finds_or_appends() {
        for len in [0, 1, SCAN, SCAN + 1, 40] {
            let mut map: Map<String, Value> =
                (0..len).map(|i| (format!("k{i}"), i.into())).collect();
            for i in 0..len {
                let key = format!("k{i}");
                assert_eq!(*field_or_insert_with(&mut map, &key, || Value::Null), i);
            }
            *field_or_insert_with(&mut map, "new", || Value::Null) = true.into();
            assert_eq!(map.len(), len + 1);
            assert_eq!(
                map.iter().next_back(),
                Some((&"new".to_string(), &true.into()))
            );
            assert_eq!(*field_or_insert_with(&mut map, "new", || Value::Null), true);
        }
    }

    #[test]
    fn at_spells_dotted_paths() {
        let root = At::Root("spec");
        let list = At::Key(&root, "disks");
        let item = At::Index(&list, 2);
        assert_eq!(At::Key(&item, "name").path(), "spec.disks[2].name");
        let empty = At::Root("");
        assert_eq!(At::Key(&empty, "a").path(), "a");
        assert_eq!(At::Index(&empty, 0).path(), "[0]");
    }
}

//! Lines for the items `kpt fn render` read from a package's files.
//!
//! An item that names its file (`internal.config.kubernetes.io/path`) is placed in that file,
//! but the file on disk may not hold what the function was handed: an earlier function of the
//! pipeline may have changed the item, and kpt writes files only at the end. So such an item is
//! placed in its file without a line, unless the file still holds it as the function received
//! it: then it gets the file's text of its document, and its findings the lines of their
//! fields, as `build` gives them. Only `kpt fn render` says where the package is
//! (`internal.config.kubernetes.io/package-path`); other items are left as they are.
//!
//! An item and a document of its file are the same when their content is (the orchestration
//! annotations left out, the order of mapping keys not counted): each is reduced to a
//! fingerprint.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;
use serde_json::Value;

use super::annotations;
use crate::model::Object;

/// A document of a package's file: its index in the file, its fingerprint, and its object
/// (the value dropped, the text and lines kept).
struct Document {
    index: usize,
    fingerprint: u64,
    placed: Object,
}

/// The documents of one file, and where each fingerprint is among them.
struct File {
    documents: Vec<Document>,
    by_fingerprint: HashMap<u64, Vec<usize>>,
}

/// The documents of the files the items of a ResourceList name, by (package, file).
#[derive(Default)]
pub struct PackageFiles {
    files: HashMap<(String, String), File>,
}

impl PackageFiles {
    /// Read, in parallel, every file an item of `items` names in its package.
    pub fn of(items: &[Value]) -> PackageFiles {
        let mut wanted: Vec<(String, String)> = items
            .iter()
            .filter_map(|item| {
                let package = annotations::package_path(item)?;
                let path = annotations::file_path(item)?;
                Some((package.to_string(), path))
            })
            .collect();
        if wanted.is_empty() {
            return PackageFiles::default();
        }
        wanted.sort_unstable();
        wanted.dedup();
        let files = wanted
            .into_par_iter()
            .map(|(package, path)| {
                let documents = read_documents(&Path::new(&package).join(&path), &path);
                ((package, path), documents)
            })
            .collect();
        PackageFiles { files }
    }

    /// `item`, read from its file: the item with the file's text of its document and the line
    /// the document starts on, when its file still holds it; the item back otherwise.
    pub fn placed(&self, item: Value, origin: &crate::origin::Origin) -> Result<Object, Value> {
        let Some(file) = annotations::package_path(&item).and_then(|package| {
            self.files
                .get(&(package.to_string(), origin.path.to_string()))
        }) else {
            return Err(item);
        };
        let same = file
            .by_fingerprint
            .get(&fingerprint(&item))
            .map_or(&[][..], Vec::as_slice);
        let found = match same {
            [only] => Some(&file.documents[*only]),
            _ => same
                .iter()
                .map(|&i| &file.documents[i])
                .find(|d| d.index == origin.index),
        };
        let Some(document) = found else {
            return Err(item);
        };
        let mut object = Object::new(item, origin.at_line(document.placed.origin.line));
        object.source.clone_from(&document.placed.source);
        object.entry = document.placed.entry;
        Ok(object)
    }
}

/// The documents of the file at `file` (named `shown`), or none when it cannot be read or is
/// larger than a function's input may be.
fn read_documents(file: &Path, shown: &str) -> File {
    let documents = match std::fs::metadata(file) {
        Ok(meta) if meta.is_file() && meta.len() <= crate::commands::fn_cmd::MAX_INPUT => {
            std::fs::read_to_string(file)
                .map(|text| documents_of(shown, &text))
                .unwrap_or_default()
        }
        _ => Vec::new(),
    };
    let mut by_fingerprint: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, d) in documents.iter().enumerate() {
        by_fingerprint.entry(d.fingerprint).or_default().push(i);
    }
    File {
        documents,
        by_fingerprint,
    }
}

/// The documents of `text`, the file named `shown`.
fn documents_of(shown: &str, text: &str) -> Vec<Document> {
    crate::load::parse_text(&Arc::from(shown), text)
        .objects
        .into_iter()
        .map(|mut placed| {
            let value = std::mem::take(&mut placed.value);
            Document {
                index: placed.origin.index,
                fingerprint: fingerprint(&value),
                placed,
            }
        })
        .collect()
}

/// A fingerprint of `value`'s content, the same whatever the order of its mappings' keys and
/// without the annotations an orchestrator adds (an annotation mapping left empty by that
/// counts as none): the engine's `same_document`, hashed, so that a file's documents need
/// not be kept to be compared.
fn fingerprint(value: &Value) -> u64 {
    let mut hasher = DefaultHasher::new();
    hash_value(value, Place::Top, &mut hasher);
    hasher.finish()
}

/// Where a value is, for the annotations to leave out.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Top,
    Metadata,
    Annotations,
    Other,
}

fn hash_value(value: &Value, place: Place, state: &mut impl Hasher) {
    match value {
        Value::Null => 0u8.hash(state),
        Value::Bool(b) => (1u8, b).hash(state),
        Value::Number(n) => (2u8, n.to_string()).hash(state),
        Value::String(s) => (3u8, s).hash(state),
        Value::Array(items) => {
            (4u8, items.len()).hash(state);
            for item in items {
                hash_value(item, Place::Other, state);
            }
        }
        Value::Object(map) => {
            // Each entry hashed alone and the results summed: the order of keys does not count.
            let mut sum = 0u64;
            for (key, v) in map {
                let inner = match (place, key.as_str()) {
                    (Place::Top, "metadata") => Place::Metadata,
                    (Place::Metadata, "annotations") => Place::Annotations,
                    _ => Place::Other,
                };
                if place == Place::Annotations && annotations::is_orchestration(key) {
                    continue;
                }
                if inner == Place::Annotations
                    && v.as_object()
                        .is_some_and(|m| m.keys().all(|k| annotations::is_orchestration(k)))
                {
                    continue;
                }
                let mut entry = DefaultHasher::new();
                key.hash(&mut entry);
                hash_value(v, inner, &mut entry);
                sum = sum.wrapping_add(entry.finish());
            }
            (5u8, sum).hash(state);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fingerprints_ignore_key_order_and_orchestration_annotations() {
        let a = json!({"kind": "A", "metadata": {"name": "x", "annotations": {
            "internal.config.kubernetes.io/path": "a.yaml", "team": "web"}},
            "spec": {"a": 1, "b": [1, 2]}});
        let b = json!({"spec": {"b": [1, 2], "a": 1},
            "metadata": {"annotations": {"team": "web"}, "name": "x"}, "kind": "A"});
        assert_eq!(fingerprint(&a), fingerprint(&b));
        let only_theirs = json!({"kind": "A", "metadata": {"name": "x", "annotations": {
            "config.kubernetes.io/index": "0"}}});
        let none = json!({"kind": "A", "metadata": {"name": "x"}});
        assert_eq!(fingerprint(&only_theirs), fingerprint(&none));
    }

    #[test]
    fn fingerprints_tell_content_apart() {
        let a = json!({"kind": "A", "spec": {"a": 1, "b": [1, 2]}});
        for other in [
            json!({"kind": "A", "spec": {"a": 2, "b": [1, 2]}}),
            json!({"kind": "A", "spec": {"a": 1, "b": [2, 1]}}),
            json!({"kind": "A", "spec": {"a": "1", "b": [1, 2]}}),
            json!({"kind": "A", "spec": {"a": 1, "b": [1, 2], "c": null}}),
            json!({"kind": "A", "spec": {"b": [1, 2]}, "a": 1}),
            json!({"kind": "A", "metadata": {"annotations": {"team": "web"}},
                "spec": {"a": 1, "b": [1, 2]}}),
        ] {
            assert_ne!(fingerprint(&a), fingerprint(&other), "{other}");
        }
        // Annotations are only left out where they are the object's.
        let nested = json!({"kind": "A", "spec": {"metadata": {"annotations": {
            "config.kubernetes.io/index": "0"}}}});
        let bare = json!({"kind": "A", "spec": {"metadata": {}}});
        assert_ne!(fingerprint(&nested), fingerprint(&bare));
    }
}

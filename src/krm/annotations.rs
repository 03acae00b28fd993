//! The annotations orchestrators (kpt, kustomize) put on items, and what kvrender does with them.
//!
//! kpt and kustomize record where an item was read from (`internal.config.kubernetes.io/path`
//! and `index`, with the legacy `config.kubernetes.io/path`/`index` spellings), a per-run id
//! used to restore comments and field order (`internal.config.kubernetes.io/id`,
//! `config.k8s.io/id`), and kustomize's own bookkeeping (`kustomize.config.k8s.io/*`,
//! `config.kubernetes.io/origin`). kvrender reads the file annotations for the `file` of its
//! results, copies every orchestration annotation from an input item to the item that replaces
//! it, and names new items with both path spellings so `kpt fn eval` writes them to files.

use serde_json::{Map, Value};

use crate::model::{Kind, Object, path};
use crate::origin::Origin;

/// Where an item was read from (current spelling).
pub const PATH: &str = "internal.config.kubernetes.io/path";
/// The document index inside that file (current spelling).
pub const INDEX: &str = "internal.config.kubernetes.io/index";
/// Where an item was read from (legacy spelling, still written by kpt and read by kustomize).
pub const LEGACY_PATH: &str = "config.kubernetes.io/path";
/// The document index (legacy spelling).
pub const LEGACY_INDEX: &str = "config.kubernetes.io/index";
/// kustomize's `buildMetadata: [originAnnotations]`: a small YAML mapping with `path:`.
pub const ORIGIN: &str = "config.kubernetes.io/origin";
/// The package an item belongs to, as an absolute directory: `kpt fn render` sets it on every
/// item, whose path is then relative to that package (a subpackage's items included).
pub const PACKAGE_PATH: &str = "internal.config.kubernetes.io/package-path";
/// Objects the orchestrator keeps in the package but never applies to a cluster.
pub const LOCAL_CONFIG: &str = "config.kubernetes.io/local-config";

/// Whether an annotation key belongs to the orchestrator rather than to the object.
pub fn is_orchestration(key: &str) -> bool {
    key.starts_with("internal.config.kubernetes.io/")
        || key.starts_with("config.kubernetes.io/")
        || key.starts_with("config.k8s.io/")
        || key.starts_with("kustomize.config.k8s.io/")
}

/// The annotation mapping of an item, when it has one.
pub fn annotations(value: &Value) -> Option<&Map<String, Value>> {
    path::get(value, &["metadata", "annotations"]).and_then(Value::as_object)
}

fn annotation<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    annotations(value)?.get(key)?.as_str()
}

/// The file an item was read from: the path annotations, else kustomize's origin annotation.
/// An empty path names no file: the item is then placed like one without the annotations.
pub fn file_path(value: &Value) -> Option<String> {
    let named = |key| annotation(value, key).filter(|p| !p.trim().is_empty());
    if let Some(p) = named(PATH).or_else(|| named(LEGACY_PATH)) {
        return Some(p.to_string());
    }
    // `config.kubernetes.io/origin: "path: vm.yaml\n"` (plus `repo:`/`ref:` for remote bases).
    let origin = annotation(value, ORIGIN)?;
    origin.lines().find_map(|line| {
        let rest = line.strip_prefix("path:")?.trim();
        let rest = rest.trim_matches(|c| c == '"' || c == '\'');
        (!rest.is_empty()).then(|| rest.to_string())
    })
}

/// The package an item belongs to (`kpt fn render` only; see [`PACKAGE_PATH`]).
pub fn package_path(value: &Value) -> Option<&str> {
    annotation(value, PACKAGE_PATH)
}

/// The index of an item inside its file, from the index annotations.
pub fn file_index(value: &Value) -> Option<usize> {
    annotation(value, INDEX)
        .or_else(|| annotation(value, LEGACY_INDEX))?
        .trim()
        .parse()
        .ok()
}

/// The origin of item `position` of a ResourceList or stream: its file annotations when present
/// (`-` and the position otherwise, as for stdin on the command line).
pub fn origin_of(value: &Value, position: usize) -> Origin {
    match file_path(value) {
        Some(p) => Origin::new(p, file_index(value).unwrap_or(0), None),
        None => Origin::new("-", position, None),
    }
}

/// Copy every orchestration annotation of `from` onto `to`, byte for byte, replacing what `to`
/// has under the same keys. Other annotations of `to` are left as they are.
pub fn copy_orchestration(from: &Value, to: &mut Value) {
    let Some(source) = annotations(from) else {
        return;
    };
    let keep: Vec<(String, Value)> = source
        .iter()
        .filter(|(k, _)| is_orchestration(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if keep.is_empty() {
        return;
    }
    if let Some(target) = path::ensure_map(to, &["metadata", "annotations"]) {
        for (k, v) in keep {
            target.insert(k, v);
        }
    }
}

/// Mark an item as local configuration (kept in the package, never applied), unless it says
/// so already (or says `false` on purpose): whether the mark was added.
pub fn mark_local_config(value: &mut Value) -> bool {
    if annotation(value, LOCAL_CONFIG).is_some() {
        return false;
    }
    match path::ensure_map(value, &["metadata", "annotations"]) {
        Some(map) => {
            map.insert(LOCAL_CONFIG.to_string(), Value::String("true".into()));
            true
        }
        None => false,
    }
}

/// Set both spellings of the path and index annotations on a new item.
pub fn set_file(value: &mut Value, file: &str, index: usize) {
    if let Some(map) = path::ensure_map(value, &["metadata", "annotations"]) {
        for key in [PATH, LEGACY_PATH] {
            map.insert(key.to_string(), Value::String(file.to_string()));
        }
        for key in [INDEX, LEGACY_INDEX] {
            map.insert(key.to_string(), Value::String(index.to_string()));
        }
    }
}

/// Set both spellings of the index annotation (an item's place in its file).
pub fn set_index(value: &mut Value, index: usize) {
    if let Some(map) = path::ensure_map(value, &["metadata", "annotations"]) {
        for key in [INDEX, LEGACY_INDEX] {
            map.insert(key.to_string(), Value::String(index.to_string()));
        }
    }
}

/// Put a new item in the package at directory `package` (`kpt fn render`'s subpackages).
pub fn set_package(value: &mut Value, package: &str) {
    if let Some(map) = path::ensure_map(value, &["metadata", "annotations"]) {
        map.insert(PACKAGE_PATH.to_string(), Value::String(package.to_string()));
    }
}

/// The file a new object goes to: one file per object in a directory named after its kind,
/// e.g. `instancetypes/u1.medium.yaml`, `cluster-preferences/fedora.yaml`.
pub fn file_for(object: &Object) -> String {
    let dir = match object.kind() {
        Kind::Instancetype => "instancetypes".to_string(),
        Kind::ClusterInstancetype => "cluster-instancetypes".to_string(),
        Kind::Preference => "preferences".to_string(),
        Kind::ClusterPreference => "cluster-preferences".to_string(),
        Kind::VirtualMachine => "virtualmachines".to_string(),
        _ => {
            let kind = object.kind_str().to_ascii_lowercase();
            if kind.is_empty() {
                "objects".to_string()
            } else {
                format!("{kind}s")
            }
        }
    };
    let mut dir = file_name_part(&dir);
    if let Some(ns) = object.namespace() {
        dir = format!("{}/{dir}", file_name_part(ns));
    }
    format!("{dir}/{}.yaml", file_name_part(object.name()))
}

/// The file a new object goes to when a directory of its [`file_for`] path is a subpackage's:
/// that path as one file name at the top of the package, each `/` written `_`
/// (`shop_instancetypes_small.yaml` for `shop/instancetypes/small.yaml` when `shop/` holds a
/// `Kptfile`). A file at the top of a package is in no subpackage; Kubernetes names and
/// namespaces hold no `_`, so two objects of valid names never share it.
pub fn top_level_file_for(object: &Object) -> String {
    file_for(object).replace('/', "_")
}

/// A name made safe as one path component: no separators, no leading dot, no `..` anywhere
/// (kpt refuses a path that holds one: `x..small` is written `x._small`), never empty, and at
/// most 240 bytes, so that the file name with its `.yaml` keeps within common file-system
/// limits. Only an invalid name changes (a valid one is at most 253 characters of letters,
/// digits, `-` and `.`, with no two dots in a row; past 240 characters it is cut short): two
/// names made the same share a file, each at its own index.
fn file_name_part(name: &str) -> String {
    let mut s = String::with_capacity(name.len().min(240));
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() || matches!(c, '-' | '_') {
            c
        } else if c == '.' && !s.ends_with('.') {
            '.'
        } else {
            '_'
        };
        s.push(c);
    }
    if s.starts_with('.') || s.is_empty() {
        s.insert(0, '_');
    }
    // Every character is ASCII now: any byte is a boundary.
    s.truncate(240);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn path_prefers_internal_then_legacy_then_origin() {
        let v = json!({"metadata": {"annotations": {
            LEGACY_PATH: "old.yaml", PATH: "new.yaml", INDEX: "2"}}});
        assert_eq!(file_path(&v).as_deref(), Some("new.yaml"));
        assert_eq!(file_index(&v), Some(2));
        let v = json!({"metadata": {"annotations": {LEGACY_PATH: "old.yaml", LEGACY_INDEX: "1"}}});
        assert_eq!(file_path(&v).as_deref(), Some("old.yaml"));
        assert_eq!(file_index(&v), Some(1));
        let v = json!({"metadata": {"annotations": {ORIGIN: "path: base/vm.yaml\n"}}});
        assert_eq!(file_path(&v).as_deref(), Some("base/vm.yaml"));
        assert_eq!(origin_of(&json!({}), 4), Origin::new("-", 4, None));
    }

    #[test]
    fn an_empty_path_names_no_file() {
        let v = json!({"metadata": {"annotations": {PATH: "", INDEX: "0"}}});
        assert_eq!(file_path(&v), None);
        assert_eq!(origin_of(&v, 3), Origin::new("-", 3, None));
        let v = json!({"metadata": {"annotations": {PATH: " ", LEGACY_PATH: "old.yaml"}}});
        assert_eq!(file_path(&v).as_deref(), Some("old.yaml"));
    }

    #[test]
    fn copy_keeps_values_and_other_annotations() {
        let from = json!({"metadata": {"annotations": {
            "config.k8s.io/id": "3", PATH: "vm.yaml", "team": "a"}}});
        let mut to = json!({"metadata": {"annotations": {"team": "b"}}});
        copy_orchestration(&from, &mut to);
        assert_eq!(
            to["metadata"]["annotations"],
            json!({"team": "b", "config.k8s.io/id": "3", PATH: "vm.yaml"})
        );
    }

    #[test]
    fn new_file_names_are_safe() {
        let o = |v: Value| Object::new(v, Origin::default());
        let it = o(json!({"apiVersion": "instancetype.kubevirt.io/v1beta1",
            "kind": "VirtualMachineInstancetype", "metadata": {"name": "u1.medium"}}));
        assert_eq!(file_for(&it), "instancetypes/u1.medium.yaml");
        let cp = o(json!({"apiVersion": "instancetype.kubevirt.io/v1beta1",
            "kind": "VirtualMachineClusterPreference", "metadata": {"name": "../../etc"}}));
        assert_eq!(file_for(&cp), "cluster-preferences/_.__.__etc.yaml");
        let ns = o(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "x", "namespace": "team-a"}}));
        assert_eq!(file_for(&ns), "team-a/configmaps/x.yaml");
        assert_eq!(top_level_file_for(&ns), "team-a_configmaps_x.yaml");
        assert_eq!(top_level_file_for(&it), "instancetypes_u1.medium.yaml");
    }

    #[test]
    fn a_file_name_holds_no_two_dots_in_a_row_and_keeps_to_240_bytes() {
        assert_eq!(file_name_part("x..small"), "x._small");
        assert_eq!(file_name_part("..."), "_._.");
        assert_eq!(file_name_part("a/b\\c"), "a_b_c");
        assert_eq!(file_name_part("u1.medium"), "u1.medium");
        let long = "a".repeat(253);
        assert_eq!(file_name_part(&long), "a".repeat(240));
        assert_eq!(file_name_part(&"é".repeat(200)).len(), 200);
    }
}

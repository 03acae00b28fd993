//! `KV020` duplicate.
//!
//! ## What it checks
//! That no two documents of the inputs define the same object: same API group, kind, namespace
//! and name. An unset namespace is `default`, where `kubectl apply` puts the object, and the
//! namespace of a cluster-scoped kind (the cluster instancetypes and preferences, the built-in
//! kinds of [`crate::model::scope`]) does not count, as the API server ignores it. kustomize
//! refuses such pairs as the same object too. Documents that are never applied (tool
//! configuration such as a `Kptfile` or a kustomization, and anything marked
//! `config.kubernetes.io/local-config: "true"`) are not compared: each package of a kpt
//! blueprint may keep a `setters` ConfigMap of its own. kvrender's own catalog documents are
//! (two `Parts` documents of one name, even where a kpt run has marked them local-config).
//!
//! ## Why
//! Applied one after the other, the last silently wins; kustomize refuses the pair outright.
//! Either way one of the two definitions is dead, and which one depends on file order.
//!
//! ## Example
//! Two files both defining `VirtualMachineClusterInstancetype/u1.small`.
//!
//! ## Fix
//! Delete or rename one of them.

use foldhash::{HashMap, HashMapExt};
use std::collections::hash_map::Entry;

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::model::scope::is_builtin_cluster_scoped;
use crate::model::{Kind, Object};
use crate::origin::{ObjectRef, Origin};
use crate::validate::Rule;

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::DUPLICATE,
    name: "duplicate",
    summary: "The same kind, namespace and name is defined twice.",
    severity: Severity::Error,
};

/// API group, kind, namespace and name.
pub(crate) fn identity(obj: &Object) -> (&str, &str, &str, &str) {
    let api_version = obj.api_version();
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let namespace = match obj.kind() {
        Kind::ClusterInstancetype | Kind::ClusterPreference => "",
        Kind::Other if is_builtin_cluster_scoped(group, version, obj.kind_str()) => "",
        _ => obj.effective_namespace(),
    };
    (group, obj.kind_str(), namespace, obj.name())
}

/// Whether `obj` is a catalog family or preference, whose second definitions the renderer
/// reports.
fn is_catalog_definition(obj: &Object) -> bool {
    crate::render::is_catalog_kind(obj)
        && matches!(obj.kind_str(), "InstancetypeFamily" | "Preference")
}

/// Report every definition after the first of the same object.
pub fn check<'a>(objects: impl IntoIterator<Item = &'a Object>, out: &mut Vec<Diagnostic>) {
    out.extend(check_positions(objects).into_iter().map(|(_, d)| d));
}

/// Where a definition is pointed at: its `metadata.name`, the line to change.
pub fn name_origin(obj: &Object) -> crate::origin::Origin {
    obj.field_origin("metadata.name")
}

/// [`check`], with `named` saying where each definition's name is written (for objects kept
/// without their text, whose name's line is found elsewhere, and only for a duplicate).
pub fn check_with<'a>(
    objects: impl IntoIterator<Item = &'a Object>,
    named: &dyn Fn(&Object) -> crate::origin::Origin,
    out: &mut Vec<Diagnostic>,
) {
    out.extend(positions_with(objects, named).into_iter().map(|(_, d)| d));
}

/// [`check`], each finding with the position among `objects` of the definition it is about.
pub fn check_positions<'a>(
    objects: impl IntoIterator<Item = &'a Object>,
) -> Vec<(usize, Diagnostic)> {
    positions_with(objects, &name_origin)
}

fn positions_with<'a>(
    objects: impl IntoIterator<Item = &'a Object>,
    named: &dyn Fn(&Object) -> crate::origin::Origin,
) -> Vec<(usize, Diagnostic)> {
    let objects = objects.into_iter();
    let mut out = Vec::new();
    // Nearly every object is seen once: size the table once instead of growing it.
    let mut seen: HashMap<_, &Object> = HashMap::with_capacity(objects.size_hint().0);
    for (position, obj) in objects.enumerate() {
        // A family or preference defined twice is refused where the catalog is read
        // (`RenderError::Redefined`), which then renders only the first.
        // Tool configuration and local-config documents (a Kptfile, a kustomization, kpt's
        // `setters` ConfigMap in each package) are never applied: two of one name are two
        // packages' own, not one object defined twice. kvrender's own catalog documents, which
        // a kpt run marks local-config, are one catalog whatever their packages: still compared.
        if !compared(obj) {
            continue;
        }
        match seen.entry(identity(obj)) {
            Entry::Occupied(first) => {
                // Each definition is pointed at by its name, the line to change.
                out.push((
                    position,
                    defined_twice(obj.object_ref(), named(obj), named(first.get())),
                ));
            }
            Entry::Vacant(entry) => {
                entry.insert(obj);
            }
        }
    }
    out
}

/// Whether `obj` is compared with the others at all.
fn compared(obj: &Object) -> bool {
    !(obj.name().is_empty()
        || is_catalog_definition(obj)
        || (!crate::render::is_catalog_kind(obj)
            && crate::model::object::is_local_config(&obj.value)))
}

/// The finding about `what`, defined at `here` after a first definition at `first` (each
/// where its name is written).
fn defined_twice(what: ObjectRef, here: Origin, first: Origin) -> Diagnostic {
    let output = [&here, &first]
        .into_iter()
        .find_map(|at| earlier_output(&at.path))
        .map(|dir| {
            format!(
                " (`{dir}` holds the output of an earlier `kvrender build -o {dir}`: leave it \
                 out with `--exclude {dir}/`)"
            )
        })
        .unwrap_or_default();
    Diagnostic::error(
        RULE.code,
        here,
        format!(
            "{what} is defined twice: first at {first} (document {}){output}",
            first.index + 1
        ),
    )
    .with_object(what)
    .with_related(first)
}

/// The folder of the file at `path` when an earlier `build -o` wrote it there (the folder
/// holds [`crate::load::walk::OUTPUT_MARKER`]): named on its own, as a pre-commit hook names
/// staged files, such a file is read beside the sources it was built from.
fn earlier_output(path: &str) -> Option<String> {
    let folder = std::path::Path::new(path).parent()?;
    let marker = if folder.as_os_str().is_empty() {
        std::path::PathBuf::from(crate::load::walk::OUTPUT_MARKER)
    } else {
        folder.join(crate::load::walk::OUTPUT_MARKER)
    };
    (path != "-" && marker.is_file()).then(|| {
        let shown = folder.display().to_string();
        if shown.is_empty() { ".".into() } else { shown }
    })
}

/// A number two objects [`check`] takes for the same one always share (others may share it
/// too: it is their name's): for a command that does not keep the objects, to find the few
/// worth comparing again.
pub fn key(obj: &Object) -> u64 {
    use std::hash::BuildHasher;
    foldhash::fast::FixedState::default().hash_one(obj.name())
}

/// Of `keys` (each a [`key`] and a position of the caller's), the positions whose key another
/// shares, in order: the objects to compare again.
pub fn sharing_a_key(keys: impl IntoIterator<Item = (u64, usize)>) -> Vec<usize> {
    let mut keys: Vec<(u64, usize)> = keys.into_iter().collect();
    keys.sort_unstable();
    let mut again: Vec<usize> = keys
        .chunk_by(|a, b| a.0 == b.0)
        .filter(|same| same.len() > 1)
        .flatten()
        .map(|(_, position)| *position)
        .collect();
    again.sort_unstable();
    again
}

fn as_warnings(found: &mut [Diagnostic], note: &str) {
    for d in found {
        d.severity = crate::diagnostic::Severity::Warning;
        d.message.push_str(note);
    }
}

/// [`check`] for a command that goes on with the first definition: each second definition is a
/// warning, its message ending with `note` (what the command did with the first).
pub fn warnings<'a>(objects: impl IntoIterator<Item = &'a Object>, note: &str) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    check(objects, &mut found);
    as_warnings(&mut found, note);
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;
    use serde_json::json;

    fn obj(kind: &str, ns: Option<&str>, line: u32) -> Object {
        let mut meta = json!({"name": "a"});
        if let Some(ns) = ns {
            meta["namespace"] = json!(ns);
        }
        Object::new(
            json!({"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": kind,
                   "metadata": meta}),
            Origin::new("f.yaml", 0, Some(line)),
        )
    }

    /// Documents never applied are each a package's own: two `setters` ConfigMaps marked
    /// local-config, two Kptfiles, two kustomizations of one name. An applied ConfigMap
    /// twice is still a finding.
    #[test]
    fn documents_never_applied_are_not_compared() {
        let doc = |api_version: &str, kind: &str, local: bool, line: u32| {
            let mut value = json!({"apiVersion": api_version, "kind": kind,
                                   "metadata": {"name": "setters"}});
            if local {
                value["metadata"]["annotations"] =
                    json!({"config.kubernetes.io/local-config": "true"});
            }
            Object::new(value, Origin::new("f.yaml", 0, Some(line)))
        };
        let never_applied = [
            doc("v1", "ConfigMap", true, 1),
            doc("v1", "ConfigMap", true, 10),
            doc("kpt.dev/v1", "Kptfile", false, 20),
            doc("kpt.dev/v1", "Kptfile", false, 30),
            doc(
                "kustomize.config.k8s.io/v1beta1",
                "Kustomization",
                false,
                40,
            ),
            doc(
                "kustomize.config.k8s.io/v1beta1",
                "Kustomization",
                false,
                50,
            ),
        ];
        let mut out = Vec::new();
        check(&never_applied, &mut out);
        assert!(out.is_empty(), "{out:?}");
        // kvrender's own documents are compared, marked local-config or not.
        let parts = [
            doc("kvrender.io/v1alpha1", "Parts", false, 1),
            doc("kvrender.io/v1alpha1", "Parts", true, 10),
        ];
        check(&parts, &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        out.clear();
        let applied = [
            doc("v1", "ConfigMap", false, 1),
            doc("v1", "ConfigMap", false, 10),
        ];
        check(&applied, &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
    }

    #[test]
    fn unset_namespace_is_default_for_namespaced_kinds() {
        let objs = [
            obj("VirtualMachinePreference", None, 1),
            obj("VirtualMachinePreference", Some("default"), 9),
            obj("VirtualMachinePreference", Some("other"), 20),
        ];
        let mut out = Vec::new();
        check(&objs, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].origin.line, Some(9));
        assert!(out[0].message.contains("f.yaml:1"));
    }

    #[test]
    fn other_kinds_count_namespaces_as_the_api_server_does() {
        let other = |api_version: &str, kind: &str, ns: Option<&str>, line: u32| {
            let mut o = obj(kind, ns, line);
            o.value["apiVersion"] = json!(api_version);
            o
        };
        let objs = [
            // Namespaced: unset is `default`.
            other("v1", "ConfigMap", None, 1),
            other("v1", "ConfigMap", Some("default"), 5),
            other("v1", "ConfigMap", Some("shop"), 9),
            other("example.com/v1", "Widget", None, 13),
            other("example.com/v1", "Widget", Some("default"), 17),
            // Cluster-scoped: the namespace does not count.
            other("v1", "Namespace", None, 21),
            other("v1", "Namespace", Some("x"), 25),
            other("rbac.authorization.k8s.io/v1", "ClusterRole", Some("x"), 29),
            other("rbac.authorization.k8s.io/v1", "ClusterRole", Some("y"), 33),
            // Another group: another object.
            other("example.com/v1", "ConfigMap", None, 37),
        ];
        let mut out = Vec::new();
        check(&objs, &mut out);
        let mut lines: Vec<u32> = out.iter().filter_map(|d| d.origin.line).collect();
        lines.sort_unstable();
        assert_eq!(lines, [5, 17, 25, 33], "{out:?}");
    }

    #[test]
    fn different_kinds_are_different_objects() {
        let objs = [
            obj("VirtualMachinePreference", None, 1),
            obj("VirtualMachineInstancetype", None, 5),
        ];
        let mut out = Vec::new();
        check(&objs, &mut out);
        assert!(out.is_empty());
    }
}

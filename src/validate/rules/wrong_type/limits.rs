//! The constraints of KubeVirt's CRD schemas beyond types and required fields, which the API
//! server checks before any webhook is called: the values a field allows (`enum`), the most
//! items a list takes (`maxItems`), a list whose items must differ
//! (`x-kubernetes-list-type: set`), and the rules of a `containerPath` volume (validation
//! rules in CEL, and a longest path). Reported under [`super::RULE`], the schema's rule.
//!
//! `expand` and `vmi` do not refuse these: KubeVirt reads such a field without complaint; only
//! the API server refuses the object.

use serde_json::Value;

use crate::diagnostic::Diagnostic;
use crate::model::path::At;
use crate::model::{Kind, Object};

/// What a schema asks of a value beyond its type.
enum Limit {
    /// One of these strings.
    OneOf(&'static [&'static str]),
    /// A list of at most this many items.
    MaxItems(usize),
    /// A list whose items all differ.
    Unique,
    /// A `containerPath` volume's path: absolute, without `..`, at most 4096 bytes.
    ContainerPath,
    /// `true`, with the schema's message otherwise.
    True(&'static str),
    /// An integer of at least this much (`minimum`).
    AtLeast(i64),
}

use Limit::{AtLeast, ContainerPath, MaxItems, OneOf, True, Unique};

/// The limits of a VirtualMachineInstance's `spec` (a VM's `spec.template.spec`): the keys of
/// a path below it, `*` for every item of a list. The rows under `domain` hold for a preset's
/// `spec.domain` too.
const VMI_SPEC: &[(&[&str], Limit)] = &[
    (&["accessCredentials"], MaxItems(256)),
    (crate::kubevirt::vmi::GUEST_AGENT_USERS, Unique),
    (&["domain", "devices", "disks"], MaxItems(256)),
    (&["domain", "devices", "interfaces"], MaxItems(256)),
    (
        &["domain", "memory", "reservedOverhead", "memLock"],
        OneOf(&["NotRequired", "Required"]),
    ),
    (&["domain", "rebootPolicy"], OneOf(&["Reboot", "Terminate"])),
    (&["networks"], MaxItems(256)),
    (&["utilityVolumes"], MaxItems(256)),
    (&["volumes"], MaxItems(256)),
    (&["volumes", "*", "containerPath", "path"], ContainerPath),
    (
        &["volumes", "*", "containerPath", "readOnly"],
        True("readOnly must be true, write access is not supported"),
    ),
];

/// The limits of a VirtualMachine's `spec` outside its template.
const VM_SPEC: &[(&[&str], Limit)] = &[(
    &["dataVolumeTemplates", "*", "spec", "contentType"],
    OneOf(&["kubevirt", "archive"]),
)];

/// The limits of a VirtualMachinePool's `spec` outside the VM `spec` of its template.
const POOL_SPEC: &[(&[&str], Limit)] = &[
    (&["replicas"], AtLeast(0)),
    (&["autohealing", "startUpFailureThreshold"], AtLeast(1)),
    (
        &["scaleInStrategy", "opportunistic", "statePreservation"],
        OneOf(STATE_PRESERVATION),
    ),
    (
        &["scaleInStrategy", "proactive", "statePreservation"],
        OneOf(STATE_PRESERVATION),
    ),
    (
        &[
            "scaleInStrategy",
            "proactive",
            "selectionPolicy",
            "sortPolicy",
        ],
        OneOf(SORT_POLICIES),
    ),
    (
        &[
            "updateStrategy",
            "proactive",
            "selectionPolicy",
            "sortPolicy",
        ],
        OneOf(SORT_POLICIES),
    ),
];

/// What a pool keeps of the VMs it removes.
const STATE_PRESERVATION: &[&str] = &["Disabled", "Offline", "Online"];

/// The orders in which a pool picks the VMs to remove or update.
const SORT_POLICIES: &[&str] = &[
    "AscendingOrder",
    "DescendingOrder",
    "Newest",
    "Oldest",
    "Random",
];

/// The longest `containerPath` path the schema takes, in bytes.
const LONGEST_PATH: usize = 4096;

/// Report the values of a VirtualMachine, VirtualMachineInstance, preset, VirtualMachinePool or
/// VirtualMachineInstanceReplicaSet that the limits of its schema refuse.
pub fn check(obj: &Object, out: &mut Vec<Diagnostic>) {
    let Some(spec) = obj.value.get("spec").filter(|s| s.is_object()) else {
        return;
    };
    let mut found = Vec::new();
    match obj.kind() {
        _ if crate::kubevirt::pool::is_pool(obj) => {
            rows(spec, "spec", POOL_SPEC, false, &mut found);
            let at = "spec.virtualMachineTemplate.spec";
            if let Some(vm) = spec
                .get("virtualMachineTemplate")
                .and_then(|t| t.get("spec"))
            {
                rows(vm, at, VM_SPEC, false, &mut found);
                if let Some(template) = vm.get("template").and_then(|t| t.get("spec")) {
                    rows(
                        template,
                        &format!("{at}.template.spec"),
                        VMI_SPEC,
                        false,
                        &mut found,
                    );
                }
            }
        }
        _ if crate::kubevirt::replica_set::is_replica_set(obj) => {
            if let Some(template) = spec.get("template").and_then(|t| t.get("spec")) {
                rows(template, "spec.template.spec", VMI_SPEC, false, &mut found);
            }
        }
        Kind::VirtualMachine => {
            rows(spec, "spec", VM_SPEC, false, &mut found);
            if let Some(template) = spec.get("template").and_then(|t| t.get("spec")) {
                rows(template, "spec.template.spec", VMI_SPEC, false, &mut found);
            }
        }
        Kind::VirtualMachineInstance => rows(spec, "spec", VMI_SPEC, false, &mut found),
        Kind::VirtualMachineInstancePreset => rows(spec, "spec", VMI_SPEC, true, &mut found),
        _ => return,
    }
    for (field, problem) in found {
        out.push(
            Diagnostic::error(
                super::RULE.code,
                obj.origin.clone(),
                format!("{problem}: the API server refuses the object"),
            )
            .with_field(field)
            .with_object(obj.object_ref()),
        );
    }
}

/// Check the `rows` below `spec` (at `root`), or only those under `domain`.
fn rows(
    spec: &Value,
    root: &str,
    rows: &[(&[&str], Limit)],
    only_domain: bool,
    found: &mut Vec<(String, String)>,
) {
    let mut mask = 0u32;
    for (i, (path, _)) in rows.iter().enumerate() {
        if !only_domain || path.first() == Some(&"domain") {
            mask |= 1 << i;
        }
    }
    walk(spec, 0, mask, rows, &At::Root(root), found);
}

// A row is a bit of a `u32`.
const _: () = assert!(VMI_SPEC.len() <= 32 && VM_SPEC.len() <= 32 && POOL_SPEC.len() <= 32);

/// Walk `v` (at `at`, `depth` keys below the spec) for the rows in `mask`, whose first `depth`
/// keys led here. A mapping's own keys are gone through once, each compared with the rows'
/// next key, rather than each row's key looked up: the mappings of a spec are small, and most
/// rows name keys a spec does not have. Nothing is allocated unless a value breaks a limit.
fn walk(
    v: &Value,
    depth: usize,
    mask: u32,
    rows: &[(&[&str], Limit)],
    at: &At<'_>,
    found: &mut Vec<(String, String)>,
) {
    // The rows in `mask`, lowest first.
    let live = || {
        let mut left = mask;
        std::iter::from_fn(move || {
            let i = left.trailing_zeros() as usize;
            left &= left.wrapping_sub(1);
            (i < 32).then_some(i)
        })
    };
    match v {
        Value::Object(map) => {
            for (key, child) in map {
                if child.is_null() {
                    continue;
                }
                let mut deeper = 0u32;
                for i in live() {
                    let (path, limit) = &rows[i];
                    // Lengths first: most keys differ in length from every row's.
                    if path
                        .get(depth)
                        .is_none_or(|k| k.len() != key.len() || *k != key)
                    {
                        continue;
                    }
                    if path.len() == depth + 1 {
                        found.extend(judge(child, limit, &At::Key(at, key)));
                    } else {
                        deeper |= 1 << i;
                    }
                }
                if deeper != 0 {
                    walk(child, depth + 1, deeper, rows, &At::Key(at, key), found);
                }
            }
        }
        Value::Array(items) => {
            let deeper = live()
                .filter(|&i| rows[i].0.get(depth) == Some(&"*") && rows[i].0.len() > depth + 1)
                .fold(0u32, |m, i| m | 1 << i);
            if deeper != 0 {
                for (i, item) in items.iter().enumerate() {
                    walk(item, depth + 1, deeper, rows, &At::Index(at, i), found);
                }
            }
        }
        _ => {}
    }
}

/// The field and the problem, if `v` (at `at`) breaks `limit`. A value of the wrong type is
/// the type check's to report.
fn judge(v: &Value, limit: &Limit, at: &At<'_>) -> Option<(String, String)> {
    let here = |problem: String| Some((at.path(), problem));
    match (limit, v) {
        (OneOf(allowed), Value::String(s)) if !allowed.contains(&s.as_str()) => {
            let allowed: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
            here(format!(
                "Unsupported value: {s:?}: supported values: {}",
                allowed.join(", ")
            ))
        }
        (MaxItems(most), Value::Array(items)) if items.len() > *most => here(format!(
            "Too many: {}: must have at most {most} items",
            items.len()
        )),
        // The items are strings (guest-agent users): a set finds the first repeated one in
        // one pass, however long a hostile list is. Other items are the type check's.
        (Unique, Value::Array(items)) => {
            let mut seen = std::collections::HashSet::with_capacity(items.len());
            let (i, item) = items
                .iter()
                .enumerate()
                .find(|(_, item)| item.as_str().is_some_and(|s| !seen.insert(s)))?;
            Some((
                At::Index(at, i).path(),
                format!("Duplicate value: {}", serde_json::to_string(item).ok()?),
            ))
        }
        (ContainerPath, Value::String(path)) => {
            if path.len() > LONGEST_PATH {
                here(format!(
                    "Too long: may not be more than {LONGEST_PATH} bytes"
                ))
            } else if !path.starts_with('/') {
                here("Invalid value: \"string\": path must be absolute (start with '/')".into())
            } else if path.contains("..") {
                here("Invalid value: \"string\": path must not contain '..'".into())
            } else {
                None
            }
        }
        (AtLeast(least), Value::Number(n)) if n.as_i64().is_some_and(|n| n < *least) => {
            here(format!(
                "Invalid value: {n}: {} in body should be greater than or equal to {least}",
                at.path()
            ))
        }
        (True(message), Value::Bool(false)) => {
            here(format!("Invalid value: \"boolean\": {message}"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;
    use serde_json::json;

    fn findings(value: Value) -> Vec<String> {
        let obj = Object::new(value, Origin::new("f.yaml", 0, Some(1)));
        let mut out = Vec::new();
        check(&obj, &mut out);
        out.iter()
            .map(|d| format!("{}: {}", d.field.as_deref().unwrap_or(""), d.message))
            .collect()
    }

    #[test]
    fn values_outside_an_enum_are_refused() {
        let vm = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"name": "vm"}, "spec": {
            "dataVolumeTemplates": [{"spec": {"contentType": "raw"}},
                                    {"spec": {"contentType": "archive"}}],
            "template": {"spec": {"domain": {"rebootPolicy": "reboot",
                "memory": {"reservedOverhead": {"memLock": "Required"}}}}}}});
        assert_eq!(
            findings(vm),
            [
                "spec.dataVolumeTemplates[0].spec.contentType: Unsupported value: \"raw\": \
                 supported values: \"kubevirt\", \"archive\": the API server refuses the object",
                "spec.template.spec.domain.rebootPolicy: Unsupported value: \"reboot\": \
                 supported values: \"Reboot\", \"Terminate\": the API server refuses the object",
            ]
        );
    }

    #[test]
    fn long_lists_repeated_users_and_container_paths_are_refused() {
        let volumes: Vec<Value> = (0..257)
            .map(|i| json!({"name": format!("v{i}"), "emptyDisk": {"capacity": "1Gi"}}))
            .collect();
        let vmi = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "metadata": {"name": "v"}, "spec": {
            "domain": {"devices": {"disks": []}},
            "accessCredentials": [{"sshPublicKey": {"propagationMethod": {"qemuGuestAgent": {
                "users": ["root", "fedora", "root"]}}}}],
            "volumes": volumes}});
        assert_eq!(
            findings(vmi),
            [
                "spec.accessCredentials[0].sshPublicKey.propagationMethod.qemuGuestAgent.users[2]: \
                 Duplicate value: \"root\": the API server refuses the object",
                "spec.volumes: Too many: 257: must have at most 256 items: the API server \
                 refuses the object",
            ]
        );
        let paths = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "metadata": {"name": "v"}, "spec": {
            "volumes": [
                {"name": "a", "containerPath": {"path": "relative"}},
                {"name": "b", "containerPath": {"path": "/a/../etc", "readOnly": false}},
                {"name": "c", "containerPath": {"path": format!("/{}", "x".repeat(4096))}},
                {"name": "d", "containerPath": {"path": "/fine", "readOnly": true}}]}});
        assert_eq!(
            findings(paths),
            [
                "spec.volumes[0].containerPath.path: Invalid value: \"string\": path must be \
                 absolute (start with '/'): the API server refuses the object",
                "spec.volumes[1].containerPath.path: Invalid value: \"string\": path must not \
                 contain '..': the API server refuses the object",
                "spec.volumes[1].containerPath.readOnly: Invalid value: \"boolean\": readOnly \
                 must be true, write access is not supported: the API server refuses the object",
                "spec.volumes[2].containerPath.path: Too long: may not be more than 4096 bytes: \
                 the API server refuses the object",
            ]
        );
    }

    /// A preset is held to the rows of its `domain`; wrongly typed values and other kinds are
    /// left alone.
    #[test]
    fn presets_get_the_domain_rows_and_wrong_types_are_skipped() {
        let preset = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstancePreset", "metadata": {"name": "p"},
            "spec": {"domain": {"rebootPolicy": "Never"},
                     "volumes": [{"containerPath": {"path": "x"}}]}});
        assert_eq!(
            findings(preset),
            [
                "spec.domain.rebootPolicy: Unsupported value: \"Never\": supported values: \
              \"Reboot\", \"Terminate\": the API server refuses the object"
            ]
        );
        let typed = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance", "metadata": {"name": "v"},
            "spec": {"domain": {"rebootPolicy": 5}, "volumes": {"a": 1}}});
        assert!(findings(typed).is_empty());
        let other = json!({"kind": "ConfigMap", "metadata": {"name": "c"},
            "spec": {"domain": {"rebootPolicy": "x"}}});
        assert!(findings(other).is_empty());
    }
}

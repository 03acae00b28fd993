//! `KV004` wrong-type.
//!
//! ## What it checks
//! The types of the fields the schema of [`super::unknown_field`] covers: integers where Go has
//! them, each within the range of its Go type (`int32`, `uint32`, `uint`, `int64`), quantities
//! (strings or numbers) for memory, time stamps Go reads (RFC 3339, or `null`), booleans,
//! mappings and lists, and no `null` items in lists (the API server drops a mapping's `null`
//! fields but keeps and refuses those; a template's `metadata` and the items of
//! `dataVolumeTemplates` may hold them). The API server stores any
//! 64-bit integer where the schema says `integer`; KubeVirt cannot decode one out of its Go
//! type's range and refuses the object. In the `spec` of a VM, VMI or preset, a whole number
//! beyond 2^53-1 is refused too: KubeVirt's webhooks for those kinds read the object's numbers
//! as 64-bit floats to check it against their schema (those of instancetypes and preferences
//! check none below `spec`).
//! And the fields the schemas of KubeVirt's kinds require: an instancetype's
//! `spec.cpu.guest` and `spec.memory.guest`, the `name` of each of its GPUs and host devices,
//! a preference's `guest` under `requirements.cpu` and `requirements.memory` when those are
//! there, and the `name` of each preferred CPU feature; a VirtualMachine's `spec` and
//! `spec.template`, the `domain` of a template's `spec` and that domain's `devices`, the `name`
//! of every disk, interface, network and volume, a container disk's `image`, a claim's
//! `claimName`, a DataVolume template's `spec` and the references in it, and the other fields
//! KubeVirt's CRD schema marks required; the same for a VirtualMachineInstance's `spec`, and a
//! preset's `selector` and `domain`. A `null` counts as missing, also a `null` spec (KubeVirt's
//! instancetype and preference webhooks admit that one; the API server does not).
//! And the limits those schemas set beyond types ([`limits`]): the values of `rebootPolicy`,
//! `memLock` and a DataVolume template's `contentType`, at most 256 disks, interfaces,
//! networks, volumes, utility volumes and access credentials, guest-agent users listed once,
//! and a `containerPath` volume's path (absolute, without `..`, at most 4096 bytes) and
//! `readOnly` (true).
//!
//! ## Why
//! The API server validates these types and required fields and refuses the object. kvrender's
//! own rules skip a value of the wrong type, so without this check the problem would go
//! unnoticed offline. KubeVirt's own webhook does not check the required fields below `spec`
//! (the API server has refused the object before it is called).
//!
//! ## Example
//! ```yaml
//! kind: VirtualMachineClusterInstancetype
//! spec:
//!   cpu:
//!     guest: "2"      # must be an integer
//! ```
//!
//! ## Fix
//! Write the value with the expected type (no quotes around numbers, quotes around quantities
//! are fine).

use std::fmt::Write as _;

use serde_json::{Map, Value};

pub mod limits;

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::model::{Kind, Object};
use crate::validate::Rule;

/// How a finding of a required field that is missing begins.
const REQUIRED: &str = "required by the";

/// Whether `d` is this rule's finding of a field of the wrong type, not of one missing.
pub fn is_wrong_type(d: &Diagnostic) -> bool {
    d.code == RULE.code && !d.message.starts_with(REQUIRED)
}

/// The rule: wrong types are found by the walk in [`super::unknown_field`], missing fields by
/// [`check_required`].
pub const RULE: Rule = Rule {
    code: codes::WRONG_TYPE,
    name: "wrong-type",
    summary: "A field of an instancetype, preference, VM, VMI or preset, or of any object's `metadata`, has the wrong type (a string where a quantity belongs that is not one, such as `16GB` or `2 Gi`, counts), a field its schema requires is missing, or a value breaks its schema's limits (a `rebootPolicy`, `memLock` or DataVolume `contentType` the schema does not list, more than 256 disks, interfaces, networks, volumes or access credentials, a guest-agent user listed twice, a `containerPath` path that is relative or has `..`, a writable `containerPath`): the API server refuses it. Also an integer out of its Go type's range or a time stamp Go cannot read (where the API server stores it, KubeVirt cannot decode it), a `null` item of a list the schema checks, and in a VM's, VMI's or preset's `spec` a whole number beyond 2^53-1, which KubeVirt's webhook reads as a float and refuses.",
    severity: Severity::Error,
};

/// Fields a schema requires: the parent, a dotted path below the table's root where `*` is
/// every item of a list (`""` is the root itself), and the fields it requires. A parent that is
/// absent requires nothing, so the root's own rows are the only ones that report a parent.
type Required = &'static [(&'static str, &'static [&'static str])];

/// An instancetype's `spec`.
const INSTANCETYPE: Required = &[
    ("", &["cpu", "memory"]),
    ("cpu", &["guest"]),
    ("memory", &["guest"]),
    ("gpus.*", &["name"]),
    ("hostDevices.*", &["name"]),
];

/// A preference's `spec`.
const PREFERENCE: Required = &[
    ("requirements.cpu", &["guest"]),
    ("requirements.memory", &["guest"]),
    ("cpu.preferredCPUFeatures.*", &["name"]),
];

/// A VirtualMachine's `spec`, apart from its template's `spec` ([`VMI_SPEC`]): the template,
/// and what a DataVolume template's claim and sources need.
const VM_SPEC: Required = &[
    ("", &["template"]),
    ("dataVolumeTemplates.*", &["spec"]),
    (
        "dataVolumeTemplates.*.spec.checkpoints.*",
        &["current", "previous"],
    ),
    (
        "dataVolumeTemplates.*.spec.pvc.dataSource",
        &["kind", "name"],
    ),
    (
        "dataVolumeTemplates.*.spec.pvc.dataSourceRef",
        &["kind", "name"],
    ),
    (
        "dataVolumeTemplates.*.spec.pvc.selector.matchExpressions.*",
        &["key", "operator"],
    ),
    ("dataVolumeTemplates.*.spec.source.gcs", &["url"]),
    ("dataVolumeTemplates.*.spec.source.http", &["url"]),
    (
        "dataVolumeTemplates.*.spec.source.imageio",
        &["diskId", "url"],
    ),
    (
        "dataVolumeTemplates.*.spec.source.pvc",
        &["name", "namespace"],
    ),
    ("dataVolumeTemplates.*.spec.source.s3", &["url"]),
    (
        "dataVolumeTemplates.*.spec.source.snapshot",
        &["name", "namespace"],
    ),
    ("dataVolumeTemplates.*.spec.sourceRef", &["kind", "name"]),
    (
        "dataVolumeTemplates.*.spec.storage.dataSource",
        &["kind", "name"],
    ),
    (
        "dataVolumeTemplates.*.spec.storage.dataSourceRef",
        &["kind", "name"],
    ),
    (
        "dataVolumeTemplates.*.spec.storage.selector.matchExpressions.*",
        &["key", "operator"],
    ),
];

/// A VirtualMachineInstance's `spec`, which is also a VM's `spec.template.spec`. The rows under
/// `domain` hold for a preset's `spec.domain` too.
const VMI_SPEC: Required = &[
    ("", &["domain"]),
    (
        "accessCredentials.*.sshPublicKey",
        &["propagationMethod", "source"],
    ),
    (
        "accessCredentials.*.sshPublicKey.propagationMethod.qemuGuestAgent",
        &["users"],
    ),
    (
        "accessCredentials.*.sshPublicKey.source.secret",
        &["secretName"],
    ),
    (
        "accessCredentials.*.userPassword",
        &["propagationMethod", "source"],
    ),
    (
        "accessCredentials.*.userPassword.source.secret",
        &["secretName"],
    ),
    (
        "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution.*",
        &["preference", "weight"],
    ),
    (
        "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution.*.preference.matchExpressions.*",
        &["key", "operator"],
    ),
    (
        "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution.*.preference.matchFields.*",
        &["key", "operator"],
    ),
    (
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
        &["nodeSelectorTerms"],
    ),
    (
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.*.matchExpressions.*",
        &["key", "operator"],
    ),
    (
        "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.*.matchFields.*",
        &["key", "operator"],
    ),
    (
        "affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution.*",
        &["podAffinityTerm", "weight"],
    ),
    (
        "affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution.*.podAffinityTerm",
        &["topologyKey"],
    ),
    (
        "affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution.*.podAffinityTerm.labelSelector.matchExpressions.*",
        &["key", "operator"],
    ),
    (
        "affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution.*.podAffinityTerm.namespaceSelector.matchExpressions.*",
        &["key", "operator"],
    ),
    (
        "affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution.*",
        &["topologyKey"],
    ),
    (
        "affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution.*.labelSelector.matchExpressions.*",
        &["key", "operator"],
    ),
    (
        "affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution.*.namespaceSelector.matchExpressions.*",
        &["key", "operator"],
    ),
    (
        "affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution.*",
        &["podAffinityTerm", "weight"],
    ),
    (
        "affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution.*.podAffinityTerm",
        &["topologyKey"],
    ),
    (
        "affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution.*.podAffinityTerm.labelSelector.matchExpressions.*",
        &["key", "operator"],
    ),
    (
        "affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution.*.podAffinityTerm.namespaceSelector.matchExpressions.*",
        &["key", "operator"],
    ),
    (
        "affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution.*",
        &["topologyKey"],
    ),
    (
        "affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution.*.labelSelector.matchExpressions.*",
        &["key", "operator"],
    ),
    (
        "affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution.*.namespaceSelector.matchExpressions.*",
        &["key", "operator"],
    ),
    ("domain", &["devices"]),
    ("domain.cpu.features.*", &["name"]),
    ("domain.devices.disks.*", &["name"]),
    ("domain.devices.filesystems.*", &["name", "virtiofs"]),
    ("domain.devices.gpus.*", &["name"]),
    ("domain.devices.hostDevices.*", &["name"]),
    ("domain.devices.inputs.*", &["name", "type"]),
    ("domain.devices.interfaces.*", &["name"]),
    ("domain.devices.interfaces.*.binding", &["name"]),
    (
        "domain.devices.interfaces.*.dhcpOptions.privateOptions.*",
        &["option", "value"],
    ),
    (
        "domain.devices.interfaces.*.portRanges.*",
        &["end", "protocol", "start"],
    ),
    ("domain.devices.interfaces.*.ports.*", &["port"]),
    ("domain.devices.sound", &["name"]),
    ("domain.devices.watchdog", &["name"]),
    ("domain.firmware.kernelBoot.container", &["image"]),
    ("livenessProbe.httpGet", &["port"]),
    ("livenessProbe.httpGet.httpHeaders.*", &["name", "value"]),
    ("livenessProbe.tcpSocket", &["port"]),
    ("networks.*", &["name"]),
    ("networks.*.multus", &["networkName"]),
    ("readinessProbe.httpGet", &["port"]),
    ("readinessProbe.httpGet.httpHeaders.*", &["name", "value"]),
    ("readinessProbe.tcpSocket", &["port"]),
    ("resourceClaims.*", &["name"]),
    (
        "topologySpreadConstraints.*",
        &["maxSkew", "topologyKey", "whenUnsatisfiable"],
    ),
    (
        "topologySpreadConstraints.*.labelSelector.matchExpressions.*",
        &["key", "operator"],
    ),
    ("utilityVolumes.*", &["claimName", "name"]),
    ("volumes.*", &["name"]),
    ("volumes.*.containerDisk", &["image"]),
    ("volumes.*.containerPath", &["path"]),
    ("volumes.*.dataVolume", &["name"]),
    ("volumes.*.downwardAPI.fields.*", &["path"]),
    ("volumes.*.downwardAPI.fields.*.fieldRef", &["fieldPath"]),
    (
        "volumes.*.downwardAPI.fields.*.resourceFieldRef",
        &["resource"],
    ),
    ("volumes.*.emptyDisk", &["capacity"]),
    ("volumes.*.ephemeral.persistentVolumeClaim", &["claimName"]),
    ("volumes.*.hostDisk", &["path", "type"]),
    ("volumes.*.memoryDump", &["claimName"]),
    ("volumes.*.persistentVolumeClaim", &["claimName"]),
];

/// A VirtualMachineInstancePreset's `spec`, apart from its `domain` (the `domain` rows of
/// [`VMI_SPEC`]).
const PRESET_SPEC: Required = &[
    ("", &["selector"]),
    ("selector.matchExpressions.*", &["key", "operator"]),
];

/// A VirtualMachinePool's `spec`, apart from the VM `spec` of its template.
const POOL_SPEC: Required = &[
    ("", &["selector", "virtualMachineTemplate"]),
    ("selector.matchExpressions.*", &["key", "operator"]),
];

/// A VirtualMachineInstanceReplicaSet's `spec`, apart from the VMI `spec` of its template.
const REPLICA_SET_SPEC: Required = &[
    ("", &["selector", "template"]),
    ("selector.matchExpressions.*", &["key", "operator"]),
];

/// Report the fields the schema of an instancetype, preference, VirtualMachine,
/// VirtualMachineInstance, preset, VirtualMachinePool or VirtualMachineInstanceReplicaSet requires
/// and the object lacks (a `null` counts as
/// missing: the API server drops it first). An instancetype's or preference's missing `spec` is
/// the webhook's own refusal (`KV030`), and a `spec` of another type a wrong type.
pub fn check_required(obj: &Object, out: &mut Vec<Diagnostic>) {
    let kind = obj.kind();
    let pool = crate::kubevirt::pool::is_pool(obj);
    let replica_set = crate::kubevirt::replica_set::is_replica_set(obj);
    let spec_required =
        pool || replica_set || matches!(kind, Kind::VirtualMachine | Kind::VirtualMachineInstance);
    let mut missing = Vec::new();
    match obj.value.get("spec") {
        Some(Value::Object(spec)) => {
            fn vm_spec(spec: &Map<String, Value>, at: &str, missing: &mut Vec<String>) {
                missing.extend(trees::VM_SPEC.missing(spec, at));
                let template_spec = spec.get("template").and_then(|t| t.get("spec"));
                if let Some(Value::Object(template_spec)) = template_spec {
                    let at = format!("{at}.template.spec");
                    missing.extend(trees::VMI_SPEC.missing(template_spec, &at));
                }
            }
            if pool {
                let template = spec.get("virtualMachineTemplate");
                if let Some(Value::Object(vm)) = template.and_then(|t| t.get("spec")) {
                    vm_spec(vm, "spec.virtualMachineTemplate.spec", &mut missing);
                }
                missing.extend(trees::POOL_SPEC.missing(spec, "spec"));
            }
            if replica_set {
                let template = spec.get("template");
                if let Some(Value::Object(vmi)) = template.and_then(|t| t.get("spec")) {
                    missing.extend(trees::VMI_SPEC.missing(vmi, "spec.template.spec"));
                }
                missing.extend(trees::REPLICA_SET_SPEC.missing(spec, "spec"));
            }
            let mut check = |map: &Map<String, Value>, root: &str, tree: &Tree| {
                missing.extend(tree.missing(map, root));
            };
            match kind {
                _ if pool || replica_set => {}
                Kind::Instancetype | Kind::ClusterInstancetype => {
                    check(spec, "spec", &trees::INSTANCETYPE);
                }
                Kind::Preference | Kind::ClusterPreference => {
                    check(spec, "spec", &trees::PREFERENCE)
                }
                Kind::VirtualMachine => vm_spec(spec, "spec", &mut missing),
                Kind::VirtualMachineInstance => check(spec, "spec", &trees::VMI_SPEC),
                Kind::VirtualMachineInstancePreset => {
                    check(spec, "spec", &trees::PRESET_SPEC);
                    check(spec, "spec", &trees::PRESET_DOMAIN);
                }
                Kind::Other => return,
            }
        }
        // The webhooks let a `null` spec through; the API server drops the `null` and then
        // misses the field.
        Some(Value::Null)
            if pool
                || replica_set
                || (kind != Kind::Other && kind != Kind::VirtualMachineInstancePreset) =>
        {
            missing.push("spec".to_string());
        }
        None if spec_required => missing.push("spec".to_string()),
        _ => return,
    }
    for path in missing {
        out.push(
            Diagnostic::error(
                RULE.code,
                obj.origin.clone(),
                // The object's kind is named beside it: the message is the same for a
                // catalog's cluster-scoped and namespaced twins, which are reported as one.
                format!(
                    "{REQUIRED} schema of its kind: the API server refuses the object without it"
                ),
            )
            .with_field(path)
            .with_object(obj.object_ref()),
        );
    }
}

/// A table's rows as a tree of keys, so that each mapping is looked up once for all the rows
/// below it: a node holds the fields its mapping requires, each with its place in the table
/// (row, then field), and the nodes below it by key (`*` for every item of a list).
struct Tree {
    fields: Vec<((usize, usize), &'static str)>,
    children: Vec<(&'static str, Tree)>,
}

impl Tree {
    /// The tree of `rows`, or of those under `domain` alone.
    fn of(rows: Required, only_domain: bool) -> Tree {
        let mut root = Tree {
            fields: Vec::new(),
            children: Vec::new(),
        };
        for (row, (parent, fields)) in rows.iter().enumerate() {
            if only_domain && parent.split('.').next() != Some("domain") {
                continue;
            }
            let mut node = &mut root;
            for key in parent.split('.').filter(|k| !k.is_empty()) {
                let at = match node.children.iter().position(|(k, _)| *k == key) {
                    Some(at) => at,
                    None => {
                        node.children.push((
                            key,
                            Tree {
                                fields: Vec::new(),
                                children: Vec::new(),
                            },
                        ));
                        node.children.len() - 1
                    }
                };
                node = &mut node.children[at].1;
            }
            node.fields
                .extend(fields.iter().enumerate().map(|(i, f)| ((row, i), *f)));
        }
        root
    }

    /// The paths of the fields missing (or `null`) in `map`, whose path is `root`, and below
    /// it, in the table's order.
    fn missing(&self, map: &Map<String, Value>, root: &str) -> Vec<String> {
        let mut found = Vec::new();
        self.absent(map, &mut root.to_string(), &mut found);
        found.sort_by_key(|(order, _)| *order);
        found.into_iter().map(|(_, path)| path).collect()
    }

    /// The node below for every item of a list.
    fn items(&self) -> Option<&Tree> {
        self.children
            .iter()
            .find_map(|(key, node)| (*key == "*").then_some(node))
    }

    /// Collect into `out` the paths of the fields missing (or `null`) in `map` (whose path is
    /// `at`) and below it, each with its place in the table. Only the root's own fields are
    /// reported when their parent is absent: an absent parent requires nothing. `at` grows
    /// and shrinks back as the walk goes down and up, so that nothing is allocated for what is
    /// present.
    fn absent(
        &self,
        map: &Map<String, Value>,
        at: &mut String,
        out: &mut Vec<((usize, usize), String)>,
    ) {
        for (order, field) in &self.fields {
            if map.get(*field).is_none_or(Value::is_null) {
                out.push((*order, format!("{at}.{field}")));
            }
        }
        for (key, node) in &self.children {
            if *key == "*" {
                continue;
            }
            let len = at.len();
            match map.get(*key) {
                Some(Value::Object(child)) => {
                    at.push('.');
                    at.push_str(key);
                    node.absent(child, at, out);
                }
                Some(Value::Array(items)) => {
                    if let Some(each) = node.items() {
                        for (i, item) in items.iter().enumerate() {
                            if let Some(item) = item.as_object() {
                                let _ = write!(at, ".{key}[{i}]");
                                each.absent(item, at, out);
                                at.truncate(len);
                            }
                        }
                    }
                }
                _ => {}
            }
            at.truncate(len);
        }
    }
}

/// The tables as trees, each built on first use.
mod trees {
    use std::sync::LazyLock;

    use super::Tree;

    pub static INSTANCETYPE: LazyLock<Tree> =
        LazyLock::new(|| Tree::of(super::INSTANCETYPE, false));
    pub static PREFERENCE: LazyLock<Tree> = LazyLock::new(|| Tree::of(super::PREFERENCE, false));
    pub static VM_SPEC: LazyLock<Tree> = LazyLock::new(|| Tree::of(super::VM_SPEC, false));
    pub static VMI_SPEC: LazyLock<Tree> = LazyLock::new(|| Tree::of(super::VMI_SPEC, false));
    pub static PRESET_SPEC: LazyLock<Tree> = LazyLock::new(|| Tree::of(super::PRESET_SPEC, false));
    pub static POOL_SPEC: LazyLock<Tree> = LazyLock::new(|| Tree::of(super::POOL_SPEC, false));
    pub static REPLICA_SET_SPEC: LazyLock<Tree> =
        LazyLock::new(|| Tree::of(super::REPLICA_SET_SPEC, false));
    /// A preset's `spec.domain`, which the rows of a VMI's `domain` hold for.
    pub static PRESET_DOMAIN: LazyLock<Tree> = LazyLock::new(|| Tree::of(super::VMI_SPEC, true));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;
    use serde_json::json;

    /// The table read row by row, each parent path looked up anew: what the tree must say,
    /// in the same order.
    fn row_by_row(
        map: &Map<String, Value>,
        root: &str,
        rows: Required,
        only_domain: bool,
    ) -> Vec<String> {
        fn below(
            map: &Map<String, Value>,
            parent: &[&str],
            field: &str,
            at: &str,
            out: &mut Vec<String>,
        ) {
            let Some((first, rest)) = parent.split_first() else {
                if map.get(field).is_none_or(Value::is_null) {
                    out.push(format!("{at}.{field}"));
                }
                return;
            };
            match map.get(*first) {
                Some(Value::Object(child)) if *first != "*" => {
                    below(child, rest, field, &format!("{at}.{first}"), out);
                }
                Some(Value::Array(items)) if rest.first() == Some(&"*") => {
                    for (i, item) in items.iter().enumerate() {
                        if let Some(item) = item.as_object() {
                            below(item, &rest[1..], field, &format!("{at}.{first}[{i}]"), out);
                        }
                    }
                }
                _ => {}
            }
        }
        let mut out = Vec::new();
        for (parent, fields) in rows {
            let keys: Vec<&str> = parent.split('.').filter(|k| !k.is_empty()).collect();
            if only_domain && keys.first() != Some(&"domain") {
                continue;
            }
            for field in *fields {
                below(map, &keys, field, root, &mut out);
            }
        }
        out
    }

    /// Every mapping entry of `value` removed in turn, one copy each.
    fn each_entry_removed(value: &Value) -> Vec<Value> {
        fn paths(value: &Value, at: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
            match value {
                Value::Object(map) => {
                    for (k, v) in map {
                        at.push(json!(k));
                        out.push(at.clone());
                        paths(v, at, out);
                        at.pop();
                    }
                }
                Value::Array(items) => {
                    for (i, v) in items.iter().enumerate() {
                        at.push(json!(i));
                        paths(v, at, out);
                        at.pop();
                    }
                }
                _ => {}
            }
        }
        let mut all = Vec::new();
        paths(value, &mut Vec::new(), &mut all);
        all.into_iter()
            .map(|path| {
                let mut copy = value.clone();
                let (last, parents) = path.split_last().expect("a path has a key");
                let mut node = &mut copy;
                for step in parents {
                    node = match step {
                        Value::String(k) => &mut node[k.as_str()],
                        _ => &mut node[step.as_u64().map_or(0, |i| i as usize)],
                    };
                }
                if let (Some(map), Some(k)) = (node.as_object_mut(), last.as_str()) {
                    map.shift_remove(k);
                }
                copy
            })
            .collect()
    }

    /// The tree gives what the table read row by row gives, in the same order, for every
    /// checked object of the repository's test data and example catalog and for each of them
    /// with any one mapping entry removed (which leaves required fields missing at every depth,
    /// in lists too).
    #[test]
    fn the_tree_agrees_with_the_table_read_row_by_row() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut compared = 0usize;
        let mut missing_found = 0usize;
        let mut seen = std::collections::HashSet::new();
        for dir in [
            "testdata/conformance/validate",
            "testdata/validate",
            "testdata/expand",
            "testdata/vmi",
            "testdata/oracle",
            "examples",
        ] {
            for entry in walkdir::WalkDir::new(root.join(dir)).sort_by_file_name() {
                let entry = entry.expect("walk");
                let path = entry.path();
                if !entry.file_type().is_file()
                    || path.extension().and_then(|e| e.to_str()) != Some("yaml")
                {
                    continue;
                }
                let text = std::fs::read_to_string(path).expect("read");
                let loaded = crate::load::parse_text(&std::sync::Arc::from("t.yaml"), &text);
                for obj in loaded.objects {
                    let kind = obj.kind();
                    let tables: &[(&str, &str, Required, bool, &Tree)] = match kind {
                        Kind::VirtualMachine => &[
                            ("", "spec", VM_SPEC, false, &trees::VM_SPEC),
                            (
                                "template.spec",
                                "spec.template.spec",
                                VMI_SPEC,
                                false,
                                &trees::VMI_SPEC,
                            ),
                        ],
                        Kind::VirtualMachineInstance => {
                            &[("", "spec", VMI_SPEC, false, &trees::VMI_SPEC)]
                        }
                        Kind::VirtualMachineInstancePreset => &[
                            ("", "spec", PRESET_SPEC, false, &trees::PRESET_SPEC),
                            ("", "spec", VMI_SPEC, true, &trees::PRESET_DOMAIN),
                        ],
                        Kind::Instancetype | Kind::ClusterInstancetype => {
                            &[("", "spec", INSTANCETYPE, false, &trees::INSTANCETYPE)]
                        }
                        Kind::Preference | Kind::ClusterPreference => {
                            &[("", "spec", PREFERENCE, false, &trees::PREFERENCE)]
                        }
                        _ => continue,
                    };
                    let Some(spec) = obj.value.get("spec") else {
                        continue;
                    };
                    // Many cases share their objects: each is tried once.
                    if !seen.insert((kind, spec.to_string())) {
                        continue;
                    }
                    for variant in std::iter::once(spec.clone()).chain(each_entry_removed(spec)) {
                        for (below, at, rows, only_domain, tree) in tables {
                            let mut map = Some(&variant);
                            for key in below.split('.').filter(|k| !k.is_empty()) {
                                map = map.and_then(|m| m.get(key));
                            }
                            let Some(Value::Object(map)) = map else {
                                continue;
                            };
                            let found = tree.missing(map, at);
                            assert_eq!(
                                found,
                                row_by_row(map, at, rows, *only_domain),
                                "{}",
                                path.display()
                            );
                            compared += 1;
                            missing_found += found.len();
                        }
                    }
                }
            }
        }
        assert!(compared > 10_000, "{compared}");
        assert!(missing_found > 1_000, "{missing_found}");
    }

    fn missing(kind: &str, spec: Value) -> Vec<String> {
        missing_in(json!({"kind": kind, "metadata": {"name": "x"}, "spec": spec}))
    }

    fn missing_in(mut object: Value) -> Vec<String> {
        let kind = object["kind"].as_str().unwrap_or_default();
        let group = if kind.contains("Instancetype") || kind.contains("Preference") {
            "instancetype.kubevirt.io/v1beta1"
        } else {
            "kubevirt.io/v1"
        };
        object["apiVersion"] = json!(group);
        let obj = Object::new(object, Origin::new("c.yaml", 0, Some(1)));
        let mut out = Vec::new();
        check_required(&obj, &mut out);
        out.into_iter().filter_map(|d| d.field).collect()
    }

    #[test]
    fn an_instancetype_needs_its_guest_cpu_and_memory_and_device_names() {
        let kind = "VirtualMachineInstancetype";
        assert_eq!(missing(kind, json!({})), ["spec.cpu", "spec.memory"]);
        assert_eq!(missing(kind, Value::Null), ["spec"]);
        assert_eq!(
            missing(kind, json!({"cpu": {}, "memory": {"guest": null}})),
            ["spec.cpu.guest", "spec.memory.guest"]
        );
        assert_eq!(
            missing(
                kind,
                json!({"cpu": {"guest": 1}, "memory": {"guest": "1Gi"},
                       "gpus": [{"name": "a"}, {"deviceName": "d"}], "hostDevices": [{}]})
            ),
            ["spec.gpus[1].name", "spec.hostDevices[0].name"]
        );
        // A wrong type is the type check's to report.
        assert!(missing(kind, json!({"cpu": 2, "memory": []})).is_empty());
    }

    #[test]
    fn a_preference_needs_guest_only_in_the_requirements_it_has() {
        let kind = "VirtualMachineClusterPreference";
        assert!(missing(kind, json!({})).is_empty());
        assert_eq!(
            missing(
                kind,
                json!({"requirements": {"cpu": {}},
                       "cpu": {"preferredCPUFeatures": [{"policy": "require"}]}})
            ),
            [
                "spec.requirements.cpu.guest",
                "spec.cpu.preferredCPUFeatures[0].name"
            ]
        );
    }

    #[test]
    fn a_vm_needs_its_template_domain_devices_and_the_names_of_its_parts() {
        let vm = |spec: Value| missing("VirtualMachine", spec);
        assert_eq!(
            missing_in(json!({"kind": "VirtualMachine", "metadata": {"name": "x"}})),
            ["spec"]
        );
        assert_eq!(vm(Value::Null), ["spec"]);
        assert_eq!(vm(json!({"running": false})), ["spec.template"]);
        // The template's own `spec` is optional; below it, `domain` and its `devices` are not.
        assert!(vm(json!({"template": {}})).is_empty());
        assert_eq!(
            vm(json!({"template": {"spec": {"volumes": []}}})),
            ["spec.template.spec.domain"]
        );
        assert_eq!(
            vm(json!({"template": {"spec": {"domain": {"cpu": {"cores": 2}}}}})),
            ["spec.template.spec.domain.devices"]
        );
        assert_eq!(
            vm(json!({
                "dataVolumeTemplates": [
                    {"metadata": {"name": "a"}},
                    {"spec": {"sourceRef": {"name": "fedora"},
                              "source": {"pvc": {"name": "golden"}}}}
                ],
                "template": {"spec": {
                    "domain": {"devices": {"disks": [{"disk": {"bus": "virtio"}}],
                                           "interfaces": [{"name": "default"}, {"bridge": {}}]}},
                    "networks": [{"name": "m", "multus": {}}],
                    "volumes": [{"name": "a", "containerDisk": {}},
                                {"name": "b", "dataVolume": {"name": null}}],
                }}
            })),
            [
                "spec.dataVolumeTemplates[0].spec",
                "spec.dataVolumeTemplates[1].spec.source.pvc.namespace",
                "spec.dataVolumeTemplates[1].spec.sourceRef.kind",
                "spec.template.spec.domain.devices.disks[0].name",
                "spec.template.spec.domain.devices.interfaces[1].name",
                "spec.template.spec.networks[0].multus.networkName",
                "spec.template.spec.volumes[0].containerDisk.image",
                "spec.template.spec.volumes[1].dataVolume.name",
            ]
        );
        let valid = json!({"template": {"spec": {"domain": {"devices": {}}}}});
        assert!(vm(valid).is_empty());
    }

    #[test]
    fn a_vmi_and_a_preset_need_what_their_schemas_require() {
        assert_eq!(
            missing_in(json!({"kind": "VirtualMachineInstance", "metadata": {"name": "x"}})),
            ["spec"]
        );
        assert_eq!(
            missing("VirtualMachineInstance", json!({"domain": {}})),
            ["spec.domain.devices"]
        );
        // A preset's `spec` and `domain` are optional, its selector is not; a `domain` it has
        // needs `devices` like any other.
        assert!(
            missing_in(json!({"kind": "VirtualMachineInstancePreset", "metadata": {"name": "x"}}))
                .is_empty()
        );
        assert_eq!(
            missing(
                "VirtualMachineInstancePreset",
                json!({"selector": {"matchExpressions": [{"key": "a"}]},
                       "domain": {"cpu": {"cores": 2}}})
            ),
            [
                "spec.selector.matchExpressions[0].operator",
                "spec.domain.devices"
            ]
        );
        assert_eq!(
            missing(
                "VirtualMachineInstancePreset",
                json!({"domain": {"devices": {}}})
            ),
            ["spec.selector"]
        );
        // Other kinds' specs are theirs to know.
        assert!(missing("ConfigMap", json!({})).is_empty());
    }
}

//! The part of `KV034` that judges a VirtualMachineInstance as KubeVirt's VMI webhook sees it:
//! after the mutating webhook has applied the presets that select it and the VMI defaults. That
//! is the VMI a VirtualMachineInstance document becomes, and the one a VirtualMachine starts:
//! KubeVirt admits the VM without these checks, then refuses its VMI at every start.
//!
//! Only the VMI webhook checks that some memory is asked for
//! (`ValidateVirtualMachineInstanceMandatoryFields`), after the defaults have taken the guest
//! memory from the requests, the limits or the huge page size.

use std::sync::Mutex;

use serde_json::Value;

use crate::kubevirt::defaults::quantity_at;
use crate::kubevirt::presets::{self, PresetIndex, PresetRefusal};
use crate::kubevirt::profile::ClusterProfile;
use crate::kubevirt::{vmi, vmi_defaults};
use crate::model::Object;
use crate::model::path::{self, is_set};

type Found = Vec<(String, String)>;

/// A VirtualMachineInstance as KubeVirt's VMI webhook validates it, with the presets that
/// select it merged in name order, and the VMIs other orders give.
pub(super) struct Mutated {
    /// The VMI with its presets merged in name order and the VMI defaults applied.
    pub vmi: Value,
    /// The same for each other order of the presets that gives another VMI (an order whose
    /// VMI the defaults cannot take is left out).
    pub other_orders: Vec<Value>,
    /// The presets whose order KubeVirt leaves open, when `other_orders` is not empty.
    pub presets: Vec<String>,
}

/// Why KubeVirt's mutating webhook refuses a VirtualMachineInstance before its validating
/// webhook sees it.
#[derive(Debug)]
pub(super) enum Refused {
    /// The presets that select it conflict, or a preset of its namespace has a selector that
    /// does not parse.
    Presets(PresetRefusal),
    /// The VMI defaults cannot be applied: KubeVirt's message (a default interface the
    /// cluster refuses).
    Defaults(String),
    /// The API server refuses the annotations the presets left on it (a preset whose name is
    /// too long for an annotation key): its messages.
    Annotations(Vec<String>),
}

/// `vmi` (a VirtualMachineInstance document) as KubeVirt's VMI webhook validates it: the presets
/// of `namespace` that select it and the VMI defaults applied; or why KubeVirt refuses it
/// before that.
pub(super) fn mutated(
    mut vmi: Value,
    namespace: &str,
    presets: &Mutex<PresetIndex<'_>>,
    profile: &ClusterProfile,
) -> Result<Mutated, Refused> {
    vmi::null_strings_as_empty(&mut vmi);
    // The webhook gets the VMI as Go encodes it, without an empty map of requests or limits,
    // so that a preset's requests are copied into one (`vmi --stage presets` keeps it).
    vmi::omit_empty_resources_and_devices(&mut vmi);
    let mut presets = presets
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let (outcome, others) = presets
        .apply_in_other_orders(&mut vmi, namespace)
        .map_err(Refused::Presets)?;
    drop(presets);
    let refused = outcome.refused_annotations();
    if !refused.is_empty() {
        return Err(Refused::Annotations(refused));
    }
    let defaulted = |mut vmi: Value| {
        vmi::omit_empty_resources_and_devices(&mut vmi);
        // A VMI's spec is a Go struct, there even when not written: the defaults fill it.
        vmi::zero_field(&mut vmi, "spec", || Value::Object(serde_json::Map::new()));
        if let Some(spec) = vmi.get_mut("spec") {
            vmi_defaults::apply(profile, spec).map_err(|e| e.0)?;
        }
        Ok::<_, String>(vmi)
    };
    let other_orders: Vec<Value> = others
        .vmis
        .into_iter()
        .filter_map(|vmi| defaulted(vmi).ok())
        .collect();
    Ok(Mutated {
        vmi: defaulted(vmi).map_err(Refused::Defaults)?,
        presets: if other_orders.is_empty() {
            Vec::new()
        } else {
            others.presets
        },
        other_orders,
    })
}

/// The findings of a VMI whose presets KubeVirt may merge in other orders, in one list:
/// `name_order`'s (the presets merged in name order) and `others`' (one list per other order).
/// Those that every order gives stand as they are; the others say in which orders they hold.
pub(super) fn across_orders(name_order: Found, others: &[Found], presets: &[String]) -> Found {
    if others.is_empty() {
        return name_order;
    }
    let in_every = |f: &(String, String)| others.iter().all(|o| o.contains(f));
    let named = presets::named(presets);
    let mut out: Found = name_order
        .iter()
        .map(|(field, message)| {
            let f = (field.clone(), message.clone());
            if in_every(&f) {
                f
            } else {
                let note = format!(
                    ". This holds with the VirtualMachineInstancePresets {named} merged in name \
                     order, as `kvrender vmi` shows them; KubeVirt merges them in no fixed order \
                     (Go map order), and another order gives a VMI without this finding"
                );
                (f.0, f.1 + &note)
            }
        })
        .collect();
    for (field, message) in others.iter().flatten() {
        let f = (field.clone(), message.clone());
        if name_order.contains(&f) {
            continue;
        }
        let noted = format!(
            "{message}. This holds when KubeVirt merges the VirtualMachineInstancePresets \
             {named} in another order than their names' (it merges them in no fixed order, Go \
             map order); merged in name order, as `kvrender vmi` shows them, they give a VMI \
             without this finding"
        );
        if !out.iter().any(|(g, m)| *g == *field && *m == noted) {
            out.push((field.clone(), noted));
        }
    }
    out
}

/// The VMI the controller creates of `vm` (which reads its template and its status), with
/// `spec` (the template spec KubeVirt's VM webhook validated: instancetype, preference and
/// cluster defaults applied) for the template's, and the input device the controller attaches.
pub(super) fn from_applied(vm: &Object, spec: &Value) -> Value {
    let mut lean = serde_json::Map::new();
    for key in ["apiVersion", "kind", "metadata", "status"] {
        if let Some(v) = vm.value.get(key) {
            lean.insert(key.to_string(), v.clone());
        }
    }
    let mut template = serde_json::Map::new();
    if let Some(meta) = path::get(&vm.value, &["spec", "template", "metadata"]) {
        template.insert("metadata".to_string(), meta.clone());
    }
    template.insert("spec".to_string(), spec.clone());
    let mut vm_spec = serde_json::Map::new();
    vm_spec.insert("template".to_string(), Value::Object(template));
    lean.insert("spec".to_string(), Value::Object(vm_spec));
    let mut vmi = vmi::vm_to_vmi(&vm.with_value(Value::Object(lean)));
    if let Some(spec) = vmi.get_mut("spec") {
        vmi::autoattach_input_device(spec);
    }
    vmi
}

/// Whether the mutating webhook could change the VMI a VM of this spec starts in a way its
/// webhook judges otherwise: presets may change anything, the defaults of an architecture
/// other than amd64 put disks on `virtio`, amd64's put a disk without a bus on `sata`, which
/// cannot take some of its settings, nor a DownwardMetrics volume, and give a watchdog without
/// a model the architecture's own.
pub(super) fn changed_by_mutation(spec: &Value, profile: &ClusterProfile, presets: bool) -> bool {
    presets
        || super::settings::architecture(spec, profile) != "amd64"
        || is_set(spec, &["domain", "devices", "watchdog"])
        || path::get(spec, &["domain", "devices", "disks"])
            .and_then(Value::as_array)
            .is_some_and(|disks| disks.iter().any(not_for_sata) || metrics_without_bus(spec, disks))
}

/// Whether a hard disk without a bus is for a DownwardMetrics volume of the spec (the volumes'
/// names are gathered first: there is usually none, and a long list is not searched per disk).
fn metrics_without_bus(spec: &Value, disks: &[Value]) -> bool {
    let metrics: std::collections::HashSet<&str> = path::get(spec, &["volumes"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|v| is_set(v, &["downwardMetrics"]))
        .filter_map(|v| path::str_at(v, &["name"]))
        .collect();
    !metrics.is_empty()
        && disks.iter().any(|disk| {
            is_set(disk, &["disk"])
                && path::str_at(disk, &["disk", "bus"])
                    .unwrap_or("")
                    .is_empty()
                && path::str_at(disk, &["name"]).is_some_and(|n| metrics.contains(n))
        })
}

/// Whether the VMI a VM of this spec starts (the mutating webhook changing nothing that
/// matters) could be refused by a check the VM webhook does not make: it asks for no memory,
/// has Hyper-V features, a video device (each architecture takes its own), or a ContainerPath
/// volume. (A watchdog is [`changed_by_mutation`]'s.)
pub(super) fn worth_checking(spec: &Value) -> bool {
    no_memory(spec)
        || is_set(spec, &["domain", "features", "hyperv"])
        || is_set(spec, &["domain", "devices", "video"])
        || path::get(spec, &["volumes"])
            .and_then(Value::as_array)
            .is_some_and(|v| v.iter().any(|v| is_set(v, &["containerPath"])))
}

/// Whether a disk without a bus has what a SATA disk cannot have: a dedicated I/O thread, a
/// PCI address, a custom block size, or (a hard disk) read-only. A disk without a target is a
/// hard disk once the defaults have run.
fn not_for_sata(disk: &Value) -> bool {
    let target = ["disk", "lun", "cdrom"]
        .into_iter()
        .find(|t| is_set(disk, &[t]))
        .unwrap_or("disk");
    let bus = path::str_at(disk, &[target, "bus"]).unwrap_or("");
    bus.is_empty()
        && (path::get(disk, &["dedicatedIOThread"]) == Some(&Value::Bool(true))
            || is_set(disk, &[target, "pciAddress"])
            || is_set(disk, &["blockSize"])
            || path::get(disk, &["disk", "readonly"]) == Some(&Value::Bool(true)))
}

/// Whether a spec asks for no memory at all, once the defaults have run: no request, no
/// limit, no guest memory and no huge pages.
fn no_memory(spec: &Value) -> bool {
    let non_zero = |p: &[&str]| quantity_at(spec, p).is_some_and(|q| !q.is_zero());
    !non_zero(&["domain", "resources", "requests", "memory"])
        && !non_zero(&["domain", "resources", "limits", "memory"])
        && !is_set(spec, &["domain", "memory", "guest"])
        && !is_set(spec, &["domain", "memory", "hugepages"])
}

/// `ValidateVirtualMachineInstanceMandatoryFields` on the spec at `at`, once the defaults have
/// made a memory limit the guest memory: a request for memory, guest memory or huge pages.
/// KubeVirt names no field; the finding names the domain.
pub(super) fn memory(spec: &Value, at: &str, found: &mut Found) {
    if no_memory(spec) {
        found.push((
            format!("{at}.domain"),
            format!(
                "no memory requested, at least one of '{at}.domain.memory.guest', \
                 '{at}.domain.memory.hugepages.pageSize' or \
                 '{at}.domain.resources.requests.memory' must be set"
            ),
        ));
    }
}

/// The paths below which a ContainerPath volume may not expose the launcher's files: KubeVirt's
/// and libvirt's own sockets and state (compared as string prefixes, as KubeVirt does).
const RESERVED_CONTAINER_PATHS: [&str; 2] = ["/var/run/kubevirt", "/var/run/libvirt"];

/// What the VMI webhook alone checks of ContainerPath volumes (`virtiofs` shares of a path in
/// the launcher), on the spec at `at` once the defaults have given a disk to every volume
/// that no disk or filesystem names: each must be a filesystem, not a disk, and stay out of
/// the reserved paths. KubeVirt names the volume `{at}.domain.volumes[i]`; the finding names
/// `{at}.volumes[i]`.
pub(super) fn container_paths(spec: &Value, at: &str, found: &mut Found) {
    let volumes = path::get(spec, &["volumes"])
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    if !volumes.iter().any(|v| is_set(v, &["containerPath"])) {
        return;
    }
    let names = |spec: &'_ Value, list: &str| -> std::collections::HashSet<String> {
        path::get(spec, &["domain", "devices", list])
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|d| path::str_at(d, &["name"]).unwrap_or("").to_string())
            .collect()
    };
    let disks = names(spec, "disks");
    let filesystems = names(spec, "filesystems");
    for (i, volume) in volumes.iter().enumerate() {
        // KubeVirt passes over a memory dump volume here, whatever else it holds.
        let Some(source) = volume.get("containerPath").filter(|s| !s.is_null()) else {
            continue;
        };
        if is_set(volume, &["memoryDump"]) {
            continue;
        }
        let name = path::str_at(volume, &["name"]).unwrap_or("");
        let field = format!("{at}.volumes[{i}]");
        if disks.contains(name) {
            found.push((
                field.clone(),
                format!("ContainerPath volume '{name}' must be mapped to a filesystem, not a disk"),
            ));
        }
        if !filesystems.contains(name) {
            found.push((
                field.clone(),
                format!(
                    "ContainerPath volume '{name}' must have a matching filesystem defined in \
                     spec.domain.devices.filesystems"
                ),
            ));
        }
        let target = path::str_at(source, &["path"]).unwrap_or("");
        if let Some(prefix) = RESERVED_CONTAINER_PATHS
            .iter()
            .find(|p| target.starts_with(*p))
        {
            found.push((
                format!("{field}.containerPath.path"),
                format!("ContainerPath volume '{name}' uses reserved path prefix '{prefix}'"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// What `check` finds in a VMI of `spec` once the mutating webhook has run.
    fn findings_after_mutation(check: fn(&Value, &str, &mut Found), spec: Value) -> Found {
        let mut vmi = json!({"metadata": {"name": "v"}, "spec": spec});
        let presets = Mutex::new(PresetIndex::default());
        vmi = mutated(vmi, "default", &presets, &ClusterProfile::default())
            .expect("mutated")
            .vmi;
        let mut found = Vec::new();
        check(&vmi["spec"], "spec", &mut found);
        found
    }

    fn memory_findings(spec: Value) -> Found {
        findings_after_mutation(memory, spec)
    }

    fn container_path_findings(spec: Value) -> Found {
        findings_after_mutation(container_paths, spec)
    }

    #[test]
    fn findings_of_some_orders_of_the_presets_say_so() {
        let f = |field: &str, message: &str| (field.to_string(), message.to_string());
        let presets = ["a".to_string(), "b".to_string()];
        let every = f("spec.x", "every order");
        let named = f("spec.y", "the name order");
        let other = f("spec.z", "another order");
        // Without other orders the findings stand as they are.
        let alone = across_orders(vec![every.clone(), named.clone()], &[], &[]);
        assert_eq!(alone, [every.clone(), named.clone()]);
        let out = across_orders(
            vec![every.clone(), named.clone()],
            &[
                vec![every.clone(), other.clone()],
                vec![other.clone(), every.clone()],
            ],
            &presets,
        );
        let [first, second, third] = out.as_slice() else {
            panic!("three findings: {out:?}");
        };
        assert_eq!(*first, every);
        assert_eq!(second.0, "spec.y");
        assert!(
            second
                .1
                .starts_with("the name order. This holds with the VirtualMachineInstancePresets 'a' and 'b' merged in name order"),
            "{}",
            second.1
        );
        // One finding, however many other orders give it.
        assert_eq!(third.0, "spec.z");
        assert!(
            third.1.starts_with(
                "another order. This holds when KubeVirt merges the \
                 VirtualMachineInstancePresets 'a' and 'b' in another order"
            ),
            "{}",
            third.1
        );
        // However many presets share a part, the finding names five.
        let many: Vec<String> = (0..7).map(|i| format!("p{i}")).collect();
        let out = across_orders(vec![named.clone()], &[vec![]], &many);
        assert!(
            out[0]
                .1
                .contains("'p0', 'p1', 'p2', 'p3', 'p4' and 2 more merged in name order"),
            "{}",
            out[0].1
        );
    }

    #[test]
    fn a_vmi_whose_presets_request_one_resource_each_may_ask_for_no_memory() {
        let preset = |name: &str, requests: Value| {
            Object::new(
                json!({
                    "apiVersion": "kubevirt.io/v1",
                    "kind": "VirtualMachineInstancePreset",
                    "metadata": {"name": name, "namespace": "default"},
                    "spec": {
                        "selector": {"matchLabels": {"app": "web"}},
                        "domain": {"resources": {"requests": requests}}
                    }
                }),
                crate::origin::Origin::default(),
            )
        };
        let cpu = preset("cpu", json!({"cpu": "2"}));
        let mem = preset("memory", json!({"memory": "2Gi"}));
        let presets = Mutex::new(PresetIndex::new(&[&cpu, &mem]));
        let vmi =
            json!({"metadata": {"name": "v", "labels": {"app": "web"}}, "spec": {"domain": {}}});
        let out = mutated(vmi, "default", &presets, &ClusterProfile::default()).expect("mutated");
        assert_eq!(out.presets, ["cpu", "memory"]);
        let refused = |v: &Value| {
            let mut found = Vec::new();
            memory(&v["spec"], "spec", &mut found);
            found
        };
        // In name order the VMI has the CPU request only; in the other, the memory request.
        assert_eq!(refused(&out.vmi).len(), 1);
        let [other] = out.other_orders.as_slice() else {
            panic!("one other order: {:?}", out.other_orders);
        };
        assert_eq!(refused(other), []);
    }

    #[test]
    fn a_container_path_volume_must_be_a_filesystem_outside_the_reserved_paths() {
        let share = |name: &str, path: &str| json!({"name": name, "containerPath": {"path": path}});
        let found = container_path_findings(json!({
            "domain": {"devices": {
                "filesystems": [{"name": "shared", "virtiofs": {}}, {"name": "run", "virtiofs": {}}],
                "disks": [{"name": "as-disk", "disk": {"bus": "virtio"}}],
            }},
            "volumes": [
                share("shared", "/srv/data"),
                share("as-disk", "/srv/other"),
                // A prefix of the path's string, not of its directories.
                share("run", "/var/run/kubevirt-private/x"),
                // No disk or filesystem: the defaults give it a disk.
                share("bare", "/var/run/libvirt"),
                {"name": "plain", "emptyDisk": {"capacity": "1Gi"}},
                // Two sources (refused elsewhere), one a memory dump: not judged here.
                {"name": "dump", "containerPath": {"path": "/var/run/kubevirt"},
                 "memoryDump": {"claimName": "c"}},
            ],
        }));
        let found: Vec<String> = found.iter().map(|(f, m)| format!("{f}: {m}")).collect();
        assert_eq!(
            found,
            [
                "spec.volumes[1]: ContainerPath volume 'as-disk' must be mapped to a filesystem, \
                 not a disk",
                "spec.volumes[1]: ContainerPath volume 'as-disk' must have a matching filesystem \
                 defined in spec.domain.devices.filesystems",
                "spec.volumes[2].containerPath.path: ContainerPath volume 'run' uses reserved path \
                 prefix '/var/run/kubevirt'",
                "spec.volumes[3]: ContainerPath volume 'bare' must be mapped to a filesystem, not \
                 a disk",
                "spec.volumes[3]: ContainerPath volume 'bare' must have a matching filesystem \
                 defined in spec.domain.devices.filesystems",
                "spec.volumes[3].containerPath.path: ContainerPath volume 'bare' uses reserved \
                 path prefix '/var/run/libvirt'",
            ]
        );
        // Without a ContainerPath volume there is nothing to judge.
        let plain = json!({"volumes": [{"name": "d", "emptyDisk": {"capacity": "1Gi"}}]});
        assert!(container_path_findings(plain).is_empty());
    }

    #[test]
    fn a_vmi_without_memory_is_refused() {
        let found = memory_findings(json!({"domain": {"devices": {}}}));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, "spec.domain");
        assert!(
            found[0]
                .1
                .starts_with("no memory requested, at least one of ")
        );
        // A zero request is no request.
        let zero = json!({"domain": {"resources": {"requests": {"memory": "0"}}}});
        assert_eq!(memory_findings(zero).len(), 1);
    }

    #[test]
    fn a_limit_guest_memory_or_huge_pages_are_memory() {
        for domain in [
            json!({"resources": {"limits": {"memory": "1Gi"}}}),
            json!({"resources": {"requests": {"memory": "1Gi"}}}),
            json!({"memory": {"guest": "1Gi"}}),
            json!({"memory": {"guest": "0"}}),
            json!({"memory": {"hugepages": {"pageSize": "not a size"}}}),
        ] {
            assert!(memory_findings(json!({"domain": domain})).is_empty());
        }
    }

    #[test]
    fn only_the_checks_a_vm_webhook_skips_make_a_vmi_worth_checking() {
        let profile = ClusterProfile::default();
        let worth_checking = |spec: &Value, profile: &ClusterProfile, presets: bool| {
            worth_checking(spec) || changed_by_mutation(spec, profile, presets)
        };
        let with_memory = json!({"domain": {"memory": {"guest": "1Gi"}}});
        assert!(!worth_checking(&with_memory, &profile, false));
        assert!(worth_checking(&with_memory, &profile, true));
        assert!(worth_checking(&json!({"domain": {}}), &profile, false));
        let arm = json!({"architecture": "arm64", "domain": {"memory": {"guest": "1Gi"}}});
        assert!(worth_checking(&arm, &profile, false));
        let hyperv = json!({"domain": {"memory": {"guest": "1Gi"}, "features": {"hyperv": {}}}});
        assert!(worth_checking(&hyperv, &profile, false));
        assert!(!changed_by_mutation(&hyperv, &profile, false));
        let disk = |disk: Value| json!({"domain": {"memory": {"guest": "1Gi"}, "devices": {"disks": [disk]}}});
        let plain = disk(json!({"name": "d", "disk": {}, "dedicatedIOThread": false}));
        assert!(!worth_checking(&plain, &profile, false));
        let threaded = disk(json!({"name": "d", "lun": {}, "dedicatedIOThread": true}));
        assert!(worth_checking(&threaded, &profile, false));
        let on_virtio =
            disk(json!({"name": "d", "disk": {"bus": "virtio"}, "dedicatedIOThread": true}));
        assert!(!worth_checking(&on_virtio, &profile, false));
        let read_only = disk(json!({"name": "d", "disk": {"readonly": true}}));
        assert!(worth_checking(&read_only, &profile, false));
        let no_target = disk(json!({"name": "d", "dedicatedIOThread": true}));
        assert!(worth_checking(&no_target, &profile, false));
        // The amd64 defaults give a watchdog without a model `i6300esb`.
        let watchdog = json!({"domain": {"memory": {"guest": "1Gi"},
            "devices": {"watchdog": {"name": "w"}}}});
        assert!(changed_by_mutation(&watchdog, &profile, false));
        let shared = json!({
            "domain": {"memory": {"guest": "1Gi"}},
            "volumes": [{"name": "s", "containerPath": {"path": "/srv"}}],
        });
        assert!(worth_checking(&shared, &profile, false));
        assert!(!changed_by_mutation(&shared, &profile, false));
    }
}

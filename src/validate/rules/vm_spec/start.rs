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
use crate::kubevirt::presets::PresetIndex;
use crate::kubevirt::profile::ClusterProfile;
use crate::kubevirt::{vmi, vmi_defaults};
use crate::model::path::{self, is_set};

type Found = Vec<(String, String)>;

/// `vmi` (a VirtualMachineInstance document) as KubeVirt's VMI webhook validates it: the presets
/// of `namespace` that select it and the VMI defaults applied. `None` when KubeVirt refuses it
/// before that (conflicting presets, defaults it cannot apply), which other findings report.
pub(super) fn mutated(
    mut vmi: Value,
    namespace: &str,
    presets: &Mutex<PresetIndex<'_>>,
    profile: &ClusterProfile,
) -> Option<Value> {
    vmi::null_strings_as_empty(&mut vmi);
    // The webhook gets the VMI as Go encodes it, without an empty map of requests or limits,
    // so that a preset's requests are copied into one (`vmi --stage presets` keeps it).
    vmi::omit_empty_resources_and_devices(&mut vmi);
    presets
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .apply(&mut vmi, namespace)
        .ok()?;
    vmi::omit_empty_resources_and_devices(&mut vmi);
    vmi_defaults::apply(profile, vmi.get_mut("spec")?).ok()?;
    Some(vmi)
}

/// Whether the VMI a VM of this spec (admitted as it is) starts could be refused, so that it is
/// worth building: it asks for no memory, has Hyper-V features, a watchdog or a video device
/// (each architecture takes its own), runs on another architecture than amd64 (whose defaults
/// put disks on `virtio`), has a disk the defaults put on `sata` that cannot be there, or
/// presets may change any of that.
pub(super) fn worth_checking(spec: &Value, profile: &ClusterProfile, presets: bool) -> bool {
    presets
        || no_memory(spec)
        || is_set(spec, &["domain", "features", "hyperv"])
        || is_set(spec, &["domain", "devices", "watchdog"])
        || is_set(spec, &["domain", "devices", "video"])
        || super::settings::architecture(spec, profile) != "amd64"
        || path::get(spec, &["domain", "devices", "disks"])
            .and_then(Value::as_array)
            .is_some_and(|disks| disks.iter().any(not_for_sata))
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

/// Whether a spec has a volume without a disk or filesystem of its name (the controller adds a
/// disk for it).
pub(super) fn has_volume_without_disk(spec: &Value) -> bool {
    let names = |p: &[&str]| {
        path::get(spec, p)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|d| path::str_at(d, &["name"]))
            .collect::<Vec<_>>()
    };
    let (disks, filesystems) = (
        names(&["domain", "devices", "disks"]),
        names(&["domain", "devices", "filesystems"]),
    );
    names(&["volumes"])
        .iter()
        .any(|v| !disks.contains(v) && !filesystems.contains(v))
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

/// `ValidateVirtualMachineInstanceMandatoryFields` on the defaulted spec at `at`: a request for
/// memory, guest memory or huge pages. KubeVirt names no field; the finding names the domain.
pub(super) fn memory(spec: &Value, at: &str, found: &mut Found) {
    let requested = quantity_at(spec, &["domain", "resources", "requests", "memory"])
        .is_some_and(|q| !q.is_zero());
    let memory = path::get(spec, &["domain", "memory"]).filter(|m| !m.is_null());
    if !requested && memory.is_none_or(|m| !is_set(m, &["guest"]) && !is_set(m, &["hugepages"])) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn memory_findings(spec: Value) -> Found {
        let mut vmi = json!({"metadata": {"name": "v"}, "spec": spec});
        let presets = Mutex::new(PresetIndex::default());
        vmi = mutated(vmi, "default", &presets, &ClusterProfile::default()).expect("mutated");
        let mut found = Vec::new();
        memory(&vmi["spec"], "spec", &mut found);
        found
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
    fn only_the_checks_a_vm_webhook_skips_make_a_vmi_worth_building() {
        let profile = ClusterProfile::default();
        let with_memory = json!({"domain": {"memory": {"guest": "1Gi"}}});
        assert!(!worth_checking(&with_memory, &profile, false));
        assert!(worth_checking(&with_memory, &profile, true));
        assert!(worth_checking(&json!({"domain": {}}), &profile, false));
        let arm = json!({"architecture": "arm64", "domain": {"memory": {"guest": "1Gi"}}});
        assert!(worth_checking(&arm, &profile, false));
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
    }
}

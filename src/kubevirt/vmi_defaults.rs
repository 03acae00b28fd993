//! The defaults KubeVirt's VMI mutating webhook applies when a VirtualMachineInstance is created,
//! for `kvrender vmi`.
//!
//! Mirrors `SetDefaultVirtualMachineInstance` in KubeVirt's `pkg/defaults/defaults.go`
//! (d923fdb815): the spec defaults shared with expansion ([`crate::kubevirt::defaults`]), the
//! generated object defaults (`zz_generated.defaults.go`: feature and timer states enabled,
//! spinlock retries, disk targets, cdrom read-only and tray, input bus and type, probe
//! thresholds), the Hyper-V feature dependencies (`hyperv.go`), the per-architecture defaults
//! (`amd64.go`, `arm64.go`, `s390x.go`), the CPU model and, with the default `LiveUpdate`
//! rollout strategy, the CPU and memory hotplug limits.
//!
//! Differences, on purpose: a VMI written without `firmware.uuid` keeps none (KubeVirt draws a
//! random one, which would make the output change from run to run); VMIs made from a
//! VirtualMachine get the UUID KubeVirt derives from the VM's name.

use serde_json::{Map, Value, json};

use crate::kubevirt::defaults::{self, DefaultsError};
use crate::kubevirt::profile::{ClusterProfile, EVEN_PARITY_ANNOTATION, Hotplug};
use crate::model::path;
use crate::model::path::Fields;
use crate::model::quantity::{Format, Quantity};

/// Memory hotplug alignment: 2Mi, or 1Gi with 1Gi hugepages.
const HOTPLUG_ALIGNMENT: i64 = 0x20_0000;
const HOTPLUG_ALIGNMENT_1G: i64 = 0x4000_0000;
/// Memory hotplug needs at least 1Gi of guest memory.
const HOTPLUG_MIN_GUEST: i64 = 0x4000_0000;

/// The annotation that records which PCI topology scheme a VMI was created with.
pub const PCI_TOPOLOGY_ANNOTATION: &str = "kubevirt.io/pci-topology-version";
/// The version KubeVirt's webhooks write into [`PCI_TOPOLOGY_ANNOTATION`].
pub const PCI_TOPOLOGY_VERSION: &str = "v3";

/// The annotation with the TDX quote generation service's socket.
pub const QGS_SOCKET_ANNOTATION: &str = "kubevirt.io/qgs-socket-path";

/// What the VMI webhook writes in the metadata of a new VMI, after its defaults
/// (`ApplyNewVMIMutations`): the PCI topology version `v3` when the VMI supports PCIe hotplug
/// (amd64 or arm64, a `q35` or `virt` machine type) and names no version yet, the even-parity
/// annotation on a VMI that isolates its emulator thread when the cluster asks for it (see
/// [`ClusterProfile::emulator_thread_even_parity`]), and the cluster's quote generation socket
/// on a TDX VMI.
pub fn set_new_vmi_annotations(profile: &ClusterProfile, vmi: &mut Value) {
    let Some(spec) = vmi.get("spec") else {
        return;
    };
    let arch = path::str_at(spec, &["architecture"]).unwrap_or("");
    let machine_type = path::get(spec, &["domain", "machine"])
        .filter(|m| !m.is_null())
        .map(|m| path::str_at(m, &["type"]).unwrap_or(""));
    let supports_pcie_hotplug = supports_pcie_hotplug(arch, machine_type);
    let isolated = path::get(spec, &["domain", "cpu", "isolateEmulatorThread"])
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let tdx = path::get(spec, &["domain", "launchSecurity", "tdx"]).is_some_and(|t| !t.is_null());
    // In the webhook's order.
    if supports_pcie_hotplug
        && let Some(annotations) = path::ensure_map(vmi, &["metadata", "annotations"])
        && !annotations.contains_key(PCI_TOPOLOGY_ANNOTATION)
    {
        annotations.insert(
            PCI_TOPOLOGY_ANNOTATION.to_string(),
            json!(PCI_TOPOLOGY_VERSION),
        );
    }
    if isolated
        && profile.emulator_thread_even_parity
        && let Some(annotations) = path::ensure_map(vmi, &["metadata", "annotations"])
    {
        annotations.insert(EVEN_PARITY_ANNOTATION.to_string(), json!(""));
    }
    if tdx
        && !profile.qgs_socket_path.is_empty()
        && let Some(annotations) = path::ensure_map(vmi, &["metadata", "annotations"])
    {
        annotations.insert(
            QGS_SOCKET_ANNOTATION.to_string(),
            json!(profile.qgs_socket_path),
        );
    }
}

/// Whether a spec of architecture `arch` (`""` when unset) and machine type `machine_type`
/// (`None` without a `machine`) supports PCIe hotplug, as KubeVirt's webhooks judge it before
/// they write [`PCI_TOPOLOGY_ANNOTATION`].
pub fn supports_pcie_hotplug(arch: &str, machine_type: Option<&str>) -> bool {
    matches!(arch, "amd64" | "arm64" | "")
        && machine_type.is_none_or(|t| t.contains("q35") || t.starts_with("virt"))
}

/// Apply every VMI default to `spec` (a VMI's `spec`).
pub fn apply(profile: &ClusterProfile, spec: &mut Value) -> Result<(), DefaultsError> {
    defaults::apply(profile, spec)?;
    let arch = path::str_at(spec, &["architecture"])
        .unwrap_or("")
        .to_string();
    if arch == "s390x" {
        set_s390x_features(spec);
    }
    set_object_defaults(spec);
    set_hyperv_dependencies(spec);
    match arch.as_str() {
        "arm64" => set_arm64_defaults(spec),
        "s390x" => {
            set_disk_bus(spec, "virtio");
            set_watchdog_action(spec, "diag288");
        }
        _ => {
            set_disk_bus(spec, "sata");
            set_watchdog_action(spec, "i6300esb");
        }
    }
    set_cpu_model(profile, spec);
    if arch != "arm64"
        && let Some(hotplug) = &profile.hotplug
    {
        set_cpu_hotplug(hotplug, spec);
        set_memory_hotplug(hotplug, spec);
    }
    Ok(())
}

fn map_at<'a>(spec: &'a mut Value, p: &[&str]) -> Option<&'a mut Map<String, Value>> {
    path::get_mut(spec, p).and_then(Value::as_object_mut)
}

/// `enabled: true` where a feature state is present without `enabled`.
fn enable_state(state: &mut Value) {
    default_true(state, "enabled");
}

/// Set the pointer bool `key` of the struct `state` to true when it is unset (missing or
/// `null`), as the generated defaults do.
fn default_true(state: &mut Value, key: &str) {
    if let Some(m) = state.as_object_mut() {
        default_field(m, key, Value::Bool(true));
    }
}

/// Set the pointer field `key` of `map` to `value` when it is unset (missing or `null`).
fn default_field(map: &mut Map<String, Value>, key: &str, value: Value) {
    let slot = map.entry(key).or_insert(Value::Null);
    if slot.is_null() {
        *slot = value;
    }
}

fn set_object_defaults(spec: &mut Value) {
    for key in ["firmware", "features"] {
        if let Some(domain) = map_at(spec, &["domain"]) {
            let entry = domain
                .entry(key)
                .or_insert_with(|| Value::Object(Map::new()));
            if entry.is_null() {
                *entry = Value::Object(Map::new());
            }
        }
    }
    if let Some(timer) = map_at(spec, &["domain", "clock", "timer"]) {
        // A timer's `Enabled` field is spelled `present` in YAML.
        for t in ["hpet", "kvm", "pit", "rtc", "hyperv"] {
            if let Some(v) = timer.field_mut(t) {
                default_true(v, "present");
            }
        }
    }
    if let Some(features) = map_at(spec, &["domain", "features"]) {
        // ACPI is a plain struct: `null` is the empty one.
        let acpi = features.entry("acpi").or_insert(Value::Null);
        if acpi.is_null() {
            *acpi = Value::Object(Map::new());
        }
        enable_state(acpi);
        for f in ["apic", "smm", "pvspinlock"] {
            if let Some(v) = features.field_mut(f) {
                enable_state(v);
            }
        }
        if let Some(hyperv) = features.field_mut("hyperv").and_then(Value::as_object_mut) {
            set_hyperv_feature_defaults(hyperv);
        }
    }
    if let Some(disks) =
        path::get_mut(spec, &["domain", "devices", "disks"]).and_then(Value::as_array_mut)
    {
        for disk in disks.iter_mut().filter_map(Value::as_object_mut) {
            if !["disk", "cdrom", "lun"]
                .iter()
                .any(|t| disk.field(t).is_some_and(|v| !v.is_null()))
            {
                disk.insert("disk".into(), Value::Object(Map::new()));
            }
            if let Some(cdrom) = disk.field_mut("cdrom").and_then(Value::as_object_mut) {
                default_field(cdrom, "readonly", Value::Bool(true));
                if path::is_zero(cdrom.field("tray")) {
                    cdrom.insert("tray".into(), Value::String("closed".into()));
                }
            }
            if let Some(mv) = disk
                .field_mut("blockSize")
                .and_then(|b| b.field_mut("matchVolume"))
            {
                enable_state(mv);
            }
        }
    }
    if let Some(gpus) =
        path::get_mut(spec, &["domain", "devices", "gpus"]).and_then(Value::as_array_mut)
    {
        for gpu in gpus.iter_mut() {
            if let Some(ram_fb) = path::get_mut(gpu, &["virtualGPUOptions", "display", "ramFB"]) {
                enable_state(ram_fb);
            }
        }
    }
    if let Some(inputs) =
        path::get_mut(spec, &["domain", "devices", "inputs"]).and_then(Value::as_array_mut)
    {
        for input in inputs.iter_mut().filter_map(Value::as_object_mut) {
            if path::is_zero(input.field("bus")) {
                input.insert("bus".into(), Value::String("usb".into()));
            }
            if path::is_zero(input.field("type")) {
                input.insert("type".into(), Value::String("tablet".into()));
            }
        }
    }
    for probe in ["readinessProbe", "livenessProbe"] {
        if let Some(p) = map_at(spec, &[probe]) {
            for (field, min) in [
                ("timeoutSeconds", 1),
                ("periodSeconds", 10),
                ("successThreshold", 1),
                ("failureThreshold", 3),
            ] {
                if p.field(field).and_then(Value::as_i64).unwrap_or(0) < 1 {
                    p.insert(field.into(), json!(min));
                }
            }
        }
    }
}

/// The states the VMI defaults give the Hyper-V features a spec lists: `enabled: true` where it
/// is left out, spinlocks' count, the timers' and TLB flush's parts.
pub(crate) fn set_hyperv_feature_defaults(hyperv: &mut Map<String, Value>) {
    for f in [
        "relaxed",
        "vapic",
        "vpindex",
        "runtime",
        "synic",
        "reset",
        "vendorid",
        "frequencies",
        "reenlightenment",
        "ipi",
        "evmcs",
    ] {
        if let Some(v) = hyperv.field_mut(f) {
            enable_state(v);
        }
    }
    if let Some(spinlocks) = hyperv.field_mut("spinlocks").and_then(Value::as_object_mut) {
        default_field(spinlocks, "enabled", Value::Bool(true));
        if spinlocks.field("enabled") == Some(&Value::Bool(true)) {
            default_field(spinlocks, "spinlocks", json!(4096));
        }
    }
    if let Some(timer) = hyperv
        .field_mut("synictimer")
        .and_then(Value::as_object_mut)
    {
        default_field(timer, "enabled", Value::Bool(true));
        if let Some(direct) = timer.field_mut("direct") {
            enable_state(direct);
        }
    }
    if let Some(tlb) = hyperv.field_mut("tlbflush").and_then(Value::as_object_mut) {
        default_field(tlb, "enabled", Value::Bool(true));
        for f in ["direct", "extended"] {
            if let Some(v) = tlb.field_mut(f) {
                enable_state(v);
            }
        }
    }
}

fn set_s390x_features(spec: &mut Value) {
    if let Some(features) = path::ensure_map(spec, &["domain", "features"]) {
        let acpi = features.entry("acpi").or_insert(Value::Null);
        if acpi.is_null() {
            *acpi = Value::Object(Map::new());
        }
        if let Some(acpi) = acpi.as_object_mut() {
            default_field(acpi, "enabled", Value::Bool(false));
        }
    }
}

fn state_enabled(v: Option<&Value>) -> Option<bool> {
    v.filter(|v| !v.is_null())
        .map(|v| v.field("enabled").and_then(Value::as_bool))
        .unwrap_or(None)
}

/// Hyper-V features that need another one enabled (`hyperv.go`): a feature that is on turns
/// its requirement on when the VM left the requirement unset. A requirement the VM turned off is
/// left for admission to reject.
pub(crate) fn set_hyperv_dependencies(spec: &mut Value) {
    let Some(hyperv) = map_at(spec, &["domain", "features", "hyperv"]) else {
        return;
    };
    // (feature, requirement); order as upstream: evmcs, ipi, tlbflush, synictimer, synic.
    for (feature, requirement) in [
        ("evmcs", "vapic"),
        ("ipi", "vpindex"),
        ("tlbflush", "vpindex"),
        ("synictimer", "synic"),
        ("synic", "vpindex"),
    ] {
        if state_enabled(hyperv.field(feature)) != Some(true) {
            continue;
        }
        let req = hyperv.field(requirement).filter(|v| !v.is_null());
        if state_enabled(req).is_none() {
            let entry = hyperv
                .entry(requirement)
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(m) = entry.as_object_mut() {
                m.insert("enabled".into(), Value::Bool(true));
            } else {
                *entry = json!({"enabled": true});
            }
        } else if state_enabled(req) == Some(false) {
            return;
        }
    }
    let evmcs_on = hyperv
        .field("evmcs")
        .filter(|v| !v.is_null())
        .is_some_and(|v| v.field("enabled").and_then(Value::as_bool) != Some(false));
    if evmcs_on {
        require_cpu_feature(spec, "vmx", "require");
    }
}

fn require_cpu_feature(spec: &mut Value, name: &str, policy: &str) {
    let Some(cpu) = path::ensure_map(spec, &["domain", "cpu"]) else {
        return;
    };
    let features = cpu
        .entry("features")
        .or_insert_with(|| Value::Array(Vec::new()));
    // `features: null` is an empty list to Go.
    if features.is_null() {
        *features = Value::Array(Vec::new());
    }
    let Some(list) = features.as_array_mut() else {
        return;
    };
    for f in list.iter_mut() {
        if f.field("name").and_then(Value::as_str) == Some(name) {
            f["policy"] = Value::String(policy.into());
            return;
        }
    }
    list.push(json!({"name": name, "policy": policy}));
}

fn set_disk_bus(spec: &mut Value, bus: &str) {
    let Some(disks) =
        path::get_mut(spec, &["domain", "devices", "disks"]).and_then(Value::as_array_mut)
    else {
        return;
    };
    for disk in disks.iter_mut().filter_map(Value::as_object_mut) {
        for target in ["disk", "cdrom", "lun"] {
            if let Some(t) = disk.field_mut(target).and_then(Value::as_object_mut)
                && path::is_zero(t.field("bus"))
            {
                t.insert("bus".into(), Value::String(bus.into()));
            }
        }
    }
}

fn set_watchdog_action(spec: &mut Value, model: &str) {
    let Some(watchdog) = map_at(spec, &["domain", "devices", "watchdog"]) else {
        return;
    };
    let m = watchdog.entry(model).or_insert(Value::Null);
    if m.is_null() {
        *m = Value::Object(Map::new());
    }
    if let Some(m) = m.as_object_mut()
        && path::is_zero(m.field("action"))
    {
        m.insert("action".into(), Value::String("reset".into()));
    }
}

fn set_arm64_defaults(spec: &mut Value) {
    if let Some(cpu) = path::ensure_map(spec, &["domain", "cpu"])
        && path::is_zero(cpu.field("model"))
    {
        cpu.insert("model".into(), Value::String("host-passthrough".into()));
    }
    if !path::is_set(spec, &["domain", "firmware", "bootloader"]) {
        path::set(
            spec,
            &["domain", "firmware", "bootloader"],
            json!({"efi": {}}),
        );
    }
    if let Some(efi) = map_at(spec, &["domain", "firmware", "bootloader", "efi"]) {
        // A `null` is Go's nil, which gets the default as an absent key does.
        default_field(efi, "secureBoot", Value::Bool(false));
    }
    set_disk_bus(spec, "virtio");
}

fn set_cpu_model(profile: &ClusterProfile, spec: &mut Value) {
    if let Some(cpu) = path::ensure_map(spec, &["domain", "cpu"])
        && path::is_zero(cpu.field("model"))
    {
        let model = profile.cpu_model.as_deref().unwrap_or("host-model");
        cpu.insert("model".into(), Value::String(model.into()));
    }
}

fn cpu_u64(spec: &Value, field: &str) -> u64 {
    path::get(spec, &["domain", "cpu", field])
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

fn set_cpu_hotplug(hotplug: &Hotplug, spec: &mut Value) {
    if cpu_u64(spec, "maxSockets") != 0 {
        return;
    }
    // The topology is `uint32` in Go, and its products wrap around as Go's do: a billion
    // sockets times the ratio is 0, and no `maxSockets` is written. Cores and threads left at 0
    // make the product 0 too, so the 512-vCPU bound does not apply to them.
    let u32_of = |field| u32::try_from(cpu_u64(spec, field)).unwrap_or(u32::MAX);
    let sockets = u32_of("sockets");
    let cores = u32_of("cores");
    let threads = u32_of("threads");
    // The cluster's `maxCpuSockets`, raised to the VMI's own sockets; else sockets times the
    // ratio, with an upper bound of 512 vCPUs, as KubeVirt chooses.
    let mut max_sockets = hotplug.max_cpu_sockets;
    if max_sockets != 0 {
        max_sockets = max_sockets.max(sockets);
    } else {
        max_sockets = sockets.wrapping_mul(hotplug.ratio);
        if max_sockets.wrapping_mul(cores).wrapping_mul(threads) > 512 {
            let per_socket = cores.wrapping_mul(threads);
            max_sockets = 512u32.checked_div(per_socket).unwrap_or(0).max(sockets);
        }
    }
    if max_sockets != 0
        && let Some(cpu) = path::ensure_map(spec, &["domain", "cpu"])
    {
        cpu.insert("maxSockets".into(), json!(max_sockets));
    }
}

fn set_memory_hotplug(hotplug: &Hotplug, spec: &mut Value) {
    if path::is_set(spec, &["domain", "memory", "maxGuest"]) {
        return;
    }
    let Some(guest) = path::get(spec, &["domain", "memory", "guest"]).and_then(Quantity::from_json)
    else {
        return;
    };
    // The cluster's `maxGuest` as it is written, else the guest memory times the ratio (`int64`
    // in Go: a product past its range wraps around, below the guest memory).
    let max_guest = match hotplug.max_guest.as_deref().map(Quantity::parse) {
        Some(Ok(q)) => q,
        _ => Quantity::new(
            guest.value().wrapping_mul(i64::from(hotplug.ratio)),
            Format::BinarySi,
        ),
    };
    if path::is_set(spec, &["domain", "cpu", "realtime"])
        || path::is_set(spec, &["domain", "cpu", "numa", "guestMappingPassthrough"])
        || path::is_set(spec, &["domain", "launchSecurity"])
    {
        return;
    }
    let alignment =
        if path::str_at(spec, &["domain", "memory", "hugepages", "pageSize"]) == Some("1Gi") {
            HOTPLUG_ALIGNMENT_1G
        } else {
            HOTPLUG_ALIGNMENT
        };
    if guest.cmp_value(&max_guest) == std::cmp::Ordering::Greater
        || guest.value() % alignment != 0
        || max_guest.value() % alignment != 0
        || path::str_at(spec, &["architecture"]) != Some("amd64")
        || guest.value() < HOTPLUG_MIN_GUEST
    {
        return;
    }
    if let Some(memory) = path::ensure_map(spec, &["domain", "memory"]) {
        memory.insert("maxGuest".into(), max_guest.to_json());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_pointer_fields_are_defaulted_like_missing_ones() {
        let spec = defaulted(json!({"domain": {
            "features": {"hyperv": {
                "spinlocks": {"spinlocks": null},
                "synictimer": {"enabled": null},
                "tlbflush": {"enabled": null}
            }},
            "devices": {
                "disks": [{"name": "cd", "cdrom": {"readonly": null}}],
                "gpus": [{"name": "g", "deviceName": "d",
                          "virtualGPUOptions": {"display": {"ramFB": {}}}}]
            }
        }}));
        let hyperv = path::get(&spec, &["domain", "features", "hyperv"]).unwrap();
        assert_eq!(
            hyperv["spinlocks"],
            json!({"spinlocks": 4096, "enabled": true})
        );
        assert_eq!(hyperv["synictimer"]["enabled"], json!(true));
        assert_eq!(hyperv["tlbflush"]["enabled"], json!(true));
        let devices = path::get(&spec, &["domain", "devices"]).unwrap();
        assert_eq!(devices["disks"][0]["cdrom"]["readonly"], json!(true));
        assert_eq!(
            devices["gpus"][0]["virtualGPUOptions"]["display"]["ramFB"],
            json!({"enabled": true})
        );
    }

    #[test]
    fn a_null_acpi_is_the_empty_struct_and_enabled() {
        let spec = defaulted(json!({"domain": {"features": {"acpi": null}}}));
        assert_eq!(
            path::get(&spec, &["domain", "features", "acpi"]),
            Some(&json!({"enabled": true}))
        );
    }

    #[test]
    fn a_null_watchdog_model_gets_the_default_action() {
        let spec = defaulted(json!({"domain": {"devices": {
            "watchdog": {"name": "wd", "i6300esb": null}
        }}}));
        assert_eq!(
            path::get(&spec, &["domain", "devices", "watchdog"]),
            Some(&json!({"name": "wd", "i6300esb": {"action": "reset"}}))
        );
    }

    #[test]
    fn timers_are_present_unless_the_vmi_says_otherwise() {
        let spec = defaulted(json!({"domain": {"clock": {"timer": {
            "hpet": {"present": false},
            "kvm": {},
            "rtc": {"present": null, "tickPolicy": "catchup"}
        }}}}));
        assert_eq!(
            path::get(&spec, &["domain", "clock", "timer"]),
            Some(&json!({
                "hpet": {"present": false},
                "kvm": {"present": true},
                "rtc": {"present": true, "tickPolicy": "catchup"}
            }))
        );
    }

    #[test]
    fn a_tdx_vmi_names_the_quote_generation_socket() {
        let mut vmi = json!({"spec": {"domain": {"launchSecurity": {"tdx": {}}}}});
        set_new_vmi_annotations(&ClusterProfile::default(), &mut vmi);
        assert_eq!(
            vmi["metadata"]["annotations"][QGS_SOCKET_ANNOTATION],
            json!("/var/run/tdx-qgs/qgs.socket")
        );
        let mut plain = json!({"spec": {"domain": {"launchSecurity": {"sev": {}}}}});
        set_new_vmi_annotations(&ClusterProfile::default(), &mut plain);
        assert_eq!(
            plain["metadata"]["annotations"][QGS_SOCKET_ANNOTATION],
            Value::Null
        );
    }

    #[test]
    fn pci_topology_version_only_where_pcie_hotplug_is_supported() {
        let annotation = |spec: Value, annotations: Value| {
            let mut vmi = json!({"metadata": {"annotations": annotations}, "spec": spec});
            set_new_vmi_annotations(&ClusterProfile::default(), &mut vmi);
            vmi["metadata"]["annotations"][PCI_TOPOLOGY_ANNOTATION].clone()
        };
        let q35 = json!({"architecture": "amd64", "domain": {"machine": {"type": "q35"}}});
        assert_eq!(annotation(q35.clone(), json!({})), json!("v3"));
        assert_eq!(annotation(json!({}), json!({})), json!("v3"));
        assert_eq!(
            annotation(
                json!({"architecture": "arm64", "domain": {"machine": {"type": "virt"}}}),
                json!({})
            ),
            json!("v3")
        );
        assert_eq!(
            annotation(q35, json!({PCI_TOPOLOGY_ANNOTATION: "v2"})),
            json!("v2")
        );
        for spec in [
            json!({"architecture": "s390x"}),
            json!({"architecture": "amd64", "domain": {"machine": {"type": "pc-i440fx-2.10"}}}),
            json!({"domain": {"machine": {}}}),
        ] {
            assert_eq!(annotation(spec.clone(), json!({})), Value::Null, "{spec}");
        }
    }

    fn defaulted(spec: Value) -> Value {
        let mut spec = spec;
        apply(&ClusterProfile::default(), &mut spec).unwrap();
        spec
    }

    #[test]
    fn amd64_disks_get_sata_and_cdroms_are_read_only() {
        let spec = defaulted(json!({"domain": {"devices": {"disks": [
            {"name": "a"}, {"name": "b", "cdrom": {}}, {"name": "c", "disk": {"bus": "virtio"}}
        ]}}}));
        let disks = &spec["domain"]["devices"]["disks"];
        assert_eq!(disks[0]["disk"]["bus"], "sata");
        assert_eq!(
            disks[1]["cdrom"],
            json!({"bus": "sata", "readonly": true, "tray": "closed"})
        );
        assert_eq!(disks[2]["disk"]["bus"], "virtio");
    }

    #[test]
    fn cpu_model_and_hotplug_limits() {
        let spec = defaulted(json!({"domain": {
            "cpu": {"sockets": 2, "cores": 1, "threads": 1},
            "memory": {"guest": "2Gi"}
        }}));
        assert_eq!(spec["domain"]["cpu"]["model"], "host-model");
        assert_eq!(spec["domain"]["cpu"]["maxSockets"], 8);
        assert_eq!(spec["domain"]["memory"]["maxGuest"], "8Gi");
    }

    #[test]
    fn the_clusters_live_update_limits_and_rollout_strategy() {
        let with = |hotplug: Option<Hotplug>, spec: Value| {
            let profile = ClusterProfile {
                hotplug,
                ..ClusterProfile::default()
            };
            let mut spec = spec;
            apply(&profile, &mut spec).unwrap();
            (
                spec["domain"]["cpu"]["maxSockets"].clone(),
                spec["domain"]["memory"]["maxGuest"].clone(),
            )
        };
        let vm = json!({"domain": {
            "cpu": {"sockets": 2, "cores": 1, "threads": 1},
            "memory": {"guest": "2Gi"}
        }});
        // `Stage`: no limits at all.
        assert_eq!(with(None, vm.clone()), (Value::Null, Value::Null));
        // The cluster's own limits, the sockets raised to the VMI's when it has more.
        let limits = Hotplug {
            ratio: 4,
            max_cpu_sockets: 3,
            max_guest: Some("3Gi".into()),
        };
        assert_eq!(
            with(Some(limits.clone()), vm.clone()),
            (json!(3), json!("3Gi"))
        );
        let big = json!({"domain": {"cpu": {"sockets": 5, "cores": 1, "threads": 1}}});
        assert_eq!(with(Some(limits.clone()), big).0, json!(5));
        // A cluster maxGuest below the guest memory, or not 2Mi-aligned, gives none.
        let small = Hotplug {
            max_guest: Some("1Gi".into()),
            ..limits.clone()
        };
        assert_eq!(with(Some(small), vm.clone()).1, Value::Null);
        let unaligned = Hotplug {
            max_guest: Some("3001Mi".into()),
            ..limits
        };
        assert_eq!(with(Some(unaligned), vm.clone()).1, Value::Null);
        // Another ratio.
        let two = Hotplug {
            ratio: 2,
            ..Hotplug::default()
        };
        assert_eq!(with(Some(two), vm), (json!(4), json!("4Gi")));
    }

    #[test]
    fn even_parity_annotation_on_an_isolated_emulator_thread() {
        let asked = ClusterProfile {
            emulator_thread_even_parity: true,
            ..ClusterProfile::default()
        };
        let annotations = |profile: &ClusterProfile, isolate: bool| {
            let mut vmi = json!({"spec": {"domain": {"cpu": {"isolateEmulatorThread": isolate}}}});
            set_new_vmi_annotations(profile, &mut vmi);
            vmi["metadata"]["annotations"][EVEN_PARITY_ANNOTATION].clone()
        };
        assert_eq!(annotations(&asked, true), json!(""));
        assert_eq!(annotations(&asked, false), Value::Null);
        assert_eq!(annotations(&ClusterProfile::default(), true), Value::Null);
    }

    #[test]
    fn no_memory_hotplug_below_one_gibibyte() {
        let spec = defaulted(json!({"domain": {"memory": {"guest": "512Mi"}}}));
        assert!(spec["domain"]["memory"].field("maxGuest").is_none());
    }

    #[test]
    fn hyperv_requirements_are_switched_on() {
        let spec = defaulted(json!({"domain": {"features": {"hyperv": {
            "synic": {}, "evmcs": {}
        }}}}));
        let hv = &spec["domain"]["features"]["hyperv"];
        assert_eq!(hv["vpindex"]["enabled"], true);
        assert_eq!(hv["vapic"]["enabled"], true);
        assert_eq!(spec["domain"]["features"]["acpi"]["enabled"], true);
        assert_eq!(
            spec["domain"]["cpu"]["features"],
            json!([{"name": "vmx", "policy": "require"}])
        );
    }

    #[test]
    fn evmcs_adds_vmx_to_a_null_feature_list() {
        let spec = defaulted(json!({"domain": {
            "cpu": {"features": null},
            "features": {"hyperv": {"evmcs": {}}}
        }}));
        assert_eq!(
            spec["domain"]["cpu"]["features"],
            json!([{"name": "vmx", "policy": "require"}])
        );
    }

    #[test]
    fn arm64_gets_efi_and_host_passthrough() {
        let spec = defaulted(json!({"architecture": "arm64", "domain": {}}));
        assert_eq!(spec["domain"]["cpu"]["model"], "host-passthrough");
        assert_eq!(
            spec["domain"]["firmware"]["bootloader"],
            json!({"efi": {"secureBoot": false}})
        );
        assert_eq!(spec["domain"]["machine"]["type"], "virt");
        // A `null` is nil to Go: Secure Boot is turned off as for an absent key.
        let spec = defaulted(json!({"architecture": "arm64", "domain": {
            "firmware": {"bootloader": {"efi": {"secureBoot": null}}}
        }}));
        assert_eq!(
            spec["domain"]["firmware"]["bootloader"],
            json!({"efi": {"secureBoot": false}})
        );
    }
}

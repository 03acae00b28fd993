//! The part of `KV034` that judges NVIDIA Grace GPU passthrough: a GPU or host device whose
//! resource the cluster permits with a Grace GPU's PCI selector needs the
//! `GraceIOVirtualization` gate, arm64, a `virt` machine type, dedicated CPUs, the
//! `PCINUMAAwareTopology` and `IOMMUFD` gates, the 64-bit PCI hole and devices off the root
//! complex; with the gate on, an NVIDIA resource permitted for any device is refused.
//!
//! Mirrors `grace_io_virtualization.go` of KubeVirt's admitters and `pkg/util/hardware/grace.go`
//! at d923fdb815. Only a cluster configuration (`--cluster-config`) permits host devices, so
//! without one nothing here applies.

use serde_json::Value;

use super::settings::Item;
use crate::kubevirt::go_text::go_quote;
use crate::kubevirt::profile::{ClusterProfile, GateState};
use crate::model::path;

type Found = Vec<(String, String)>;

/// NVIDIA's PCI vendor ID.
const NVIDIA: &str = "10DE";

/// The PCI device IDs of the Grace Hopper and Grace Blackwell GPUs.
const GRACE_GPUS: [&str; 3] = ["2342", "2348", "2941"];

/// The annotation that puts PCI devices on the root complex, which Grace passthrough refuses.
const ROOT_COMPLEX: &str = "kubevirt.io/placePCIDevicesOnRootComplex";

/// The annotation that turns the 64-bit PCI hole off, which Grace passthrough needs.
const NO_PCI_HOLE64: &str = "kubevirt.io/disablePCIHole64";

/// What a permitted resource's PCI selector says about it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Selector {
    /// A Grace GPU.
    Grace,
    /// Any NVIDIA device (`10de:*`).
    AnyNvidia,
    /// Anything else, or a selector KubeVirt cannot read.
    Other,
}

/// Read a `vendor:device` selector as KubeVirt does: each part trimmed, upper-cased and
/// without a `0x`, the vendor four hex digits, the device four hex digits or `*`.
fn selector(text: &str) -> Selector {
    let normalized = |id: &str| {
        let id = id.trim().to_ascii_uppercase();
        id.strip_prefix("0X").map(str::to_string).unwrap_or(id)
    };
    let hex = |id: &str| id.len() == 4 && id.bytes().all(|b| b.is_ascii_hexdigit());
    let mut parts = text.split(':');
    let (Some(vendor), Some(device), None) = (parts.next(), parts.next(), parts.next()) else {
        return Selector::Other;
    };
    let (vendor, device) = (normalized(vendor), normalized(device));
    if !hex(&vendor) || !(device == "*" || hex(&device)) || vendor != NVIDIA {
        return Selector::Other;
    }
    if device == "*" {
        Selector::AnyNvidia
    } else if GRACE_GPUS.contains(&device.as_str()) {
        Selector::Grace
    } else {
        Selector::Other
    }
}

/// The GPUs and host devices of `spec` (at `at`) that ask for a resource whose permitted
/// selector reads as a Grace GPU or as any NVIDIA device: field of the device's name, resource
/// name and what its selector says, GPUs first.
fn requests(spec: &Value, at: &str, profile: &ClusterProfile) -> Vec<(String, String, Selector)> {
    let mut found = Vec::new();
    if profile.pci_selectors.is_empty() {
        return found;
    }
    for list in ["gpus", "hostDevices"] {
        let devices = path::get(spec, &["domain", "devices", list]).and_then(Value::as_array);
        for (index, device) in devices.into_iter().flatten().enumerate() {
            let name = path::str_at(device, &["deviceName"]).unwrap_or("");
            let Some(permitted) = profile.pci_selectors.get(name).filter(|_| !name.is_empty())
            else {
                continue;
            };
            let kind = selector(permitted);
            if kind != Selector::Other {
                let item = Item {
                    at,
                    list: if list == "gpus" {
                        "domain.devices.gpus"
                    } else {
                        "domain.devices.hostDevices"
                    },
                    index,
                };
                found.push((format!("{item}.deviceName"), name.to_string(), kind));
            }
        }
    }
    found
}

/// Whether the alpha feature gate `gate` is on; a configuration was read, since only it
/// permits host devices.
fn on(profile: &ClusterProfile, gate: &str) -> bool {
    profile.gate_on(gate, GateState::Alpha) == Some(true)
}

/// The Grace checks on the spec at `at` (`validateGraceIOVirtualization`).
pub(super) fn check(spec: &Value, at: &str, profile: &ClusterProfile, found: &mut Found) {
    let requests = requests(spec, at, profile);
    if requests.is_empty() {
        return;
    }
    let enabled = on(profile, "GraceIOVirtualization");
    if enabled {
        for (field, name, _) in requests.iter().filter(|r| r.2 == Selector::AnyNvidia) {
            found.push((
                field.clone(),
                format!(
                    "GraceIOVirtualization requires an exact pciVendorSelector for NVIDIA PCI \
                     host device resource {}",
                    go_quote(name)
                ),
            ));
        }
    }
    let grace: Vec<_> = requests.iter().filter(|r| r.2 == Selector::Grace).collect();
    if grace.is_empty() {
        return;
    }
    if !enabled {
        for (field, name, _) in grace {
            found.push((
                field.clone(),
                format!(
                    "GraceIOVirtualization feature gate must be enabled for NVIDIA Grace GPU \
                     passthrough resource {}",
                    go_quote(name)
                ),
            ));
        }
        return;
    }
    // The cluster's default stands in for an empty architecture here, even in a spec judged
    // as written.
    let arch = match path::str_at(spec, &["architecture"]) {
        Some(arch) if !arch.is_empty() => arch,
        _ => &profile.default_architecture,
    };
    if arch != "arm64" {
        found.push((
            format!("{at}.architecture"),
            "GraceIOVirtualization requires arm64 architecture".into(),
        ));
    }
    let machine = path::str_at(spec, &["domain", "machine", "type"])
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| profile.machine_type_for(arch));
    if !machine.starts_with("virt") {
        found.push((
            format!("{at}.domain.machine.type"),
            "GraceIOVirtualization requires \"virt\" machine type".into(),
        ));
    }
    if path::get(spec, &["domain", "cpu", "dedicatedCpuPlacement"]) != Some(&Value::Bool(true)) {
        found.push((
            format!("{at}.domain.cpu.dedicatedCpuPlacement"),
            "GraceIOVirtualization requires dedicated CPU placement".into(),
        ));
    }
    for gate in ["PCINUMAAwareTopology", "IOMMUFD"] {
        if !on(profile, gate) {
            found.push((
                format!("{at}.domain.devices"),
                format!("{gate} feature gate must be enabled when GraceIOVirtualization is used"),
            ));
        }
    }
}

/// The Grace checks on the annotations of `meta` (at `meta_at`), the metadata of the VMI or
/// of a VM's template, whose spec is `spec` (`validateGraceIOVirtualizationAnnotations`): made
/// whether the gate is on or not.
pub(super) fn annotations(
    meta: &Value,
    meta_at: &str,
    spec: &Value,
    profile: &ClusterProfile,
    found: &mut Found,
) {
    let Some(annotations) = meta.get("annotations").filter(|a| a.is_object()) else {
        return;
    };
    let says_true = |key: &str| annotations.get(key).and_then(Value::as_str) == Some("true");
    if !(says_true(ROOT_COMPLEX) || says_true(NO_PCI_HOLE64)) {
        return;
    }
    if !requests(spec, "spec", profile)
        .iter()
        .any(|r| r.2 == Selector::Grace)
    {
        return;
    }
    for (key, message) in [
        (
            ROOT_COMPLEX,
            "GraceIOVirtualization is not compatible with placing PCI devices on the root complex",
        ),
        (
            NO_PCI_HOLE64,
            "GraceIOVirtualization requires the 64-bit PCI hole",
        ),
    ] {
        if says_true(key) {
            found.push((format!("{meta_at}.annotations[{key}]"), message.to_string()));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn profile(gates: &[&str]) -> ClusterProfile {
        ClusterProfile::from_kubevirt(&json!({
            "permittedHostDevices": {"pciHostDevices": [
                {"resourceName": "nvidia.com/GH100", "pciVendorSelector": "10de:2342"},
                {"resourceName": "nvidia.com/any", "pciVendorSelector": "0x10DE:*"},
                {"resourceName": "intel.com/qat", "pciVendorSelector": "8086:4940"},
                {"resourceName": "nvidia.com/GB200", "pciVendorSelector": "bad"},
                {"resourceName": "nvidia.com/GB200", "pciVendorSelector": " 10de : 2941 "},
            ]},
            "developerConfiguration": {"featureGates": gates},
        }))
        .expect("a configuration")
    }

    fn findings(spec: Value, profile: &ClusterProfile) -> Vec<(String, String)> {
        let mut found = Vec::new();
        check(&spec, "spec", profile, &mut found);
        found
    }

    #[test]
    fn selectors_are_read_as_kubevirt_reads_them() {
        assert!(selector("10de:2342") == Selector::Grace);
        assert!(selector(" 0x10DE:0X2348") == Selector::Grace);
        assert!(selector("10de:*") == Selector::AnyNvidia);
        assert!(selector("10de:2330") == Selector::Other);
        assert!(selector("10de:2342:1") == Selector::Other);
        assert!(selector("10d:2342") == Selector::Other);
        assert!(selector("8086:*") == Selector::Other);
    }

    #[test]
    fn a_grace_gpu_needs_the_gate_then_arm64_virt_dedicated_cpus_and_two_more_gates() {
        let spec = json!({"domain": {"devices": {
            "gpus": [{"name": "g", "deviceName": "nvidia.com/GH100"}],
            "hostDevices": [
                {"name": "q", "deviceName": "intel.com/qat"},
                {"name": "h", "deviceName": "nvidia.com/GB200"},
                {"name": "a", "deviceName": "nvidia.com/any"},
            ],
        }}});
        let gate_off = |name: &str| {
            format!(
                "GraceIOVirtualization feature gate must be enabled for NVIDIA Grace GPU \
                 passthrough resource \"{name}\""
            )
        };
        assert_eq!(
            findings(spec.clone(), &profile(&[])),
            [
                (
                    "spec.domain.devices.gpus[0].deviceName".to_string(),
                    gate_off("nvidia.com/GH100")
                ),
                (
                    "spec.domain.devices.hostDevices[1].deviceName".to_string(),
                    gate_off("nvidia.com/GB200")
                ),
            ]
        );
        let found = findings(spec, &profile(&["GraceIOVirtualization", "IOMMUFD"]));
        let fields: Vec<&str> = found.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.domain.devices.hostDevices[2].deviceName",
                "spec.architecture",
                "spec.domain.machine.type",
                "spec.domain.cpu.dedicatedCpuPlacement",
                "spec.domain.devices",
            ]
        );
        assert!(found[4].1.starts_with("PCINUMAAwareTopology feature gate"));

        let ready = json!({"architecture": "arm64", "domain": {
            "cpu": {"dedicatedCpuPlacement": true},
            "devices": {"gpus": [{"name": "g", "deviceName": "nvidia.com/GH100"}]},
        }});
        let all = ["GraceIOVirtualization", "IOMMUFD", "PCINUMAAwareTopology"];
        assert!(findings(ready, &profile(&all)).is_empty());
    }

    #[test]
    fn nothing_applies_without_permitted_devices() {
        let spec = json!({"domain": {"devices": {
            "gpus": [{"name": "g", "deviceName": "nvidia.com/GH100"}],
        }}});
        assert!(findings(spec, &ClusterProfile::default()).is_empty());
    }

    #[test]
    fn annotations_a_grace_vmi_refuses_whatever_the_gate() {
        let spec = json!({"domain": {"devices": {
            "hostDevices": [{"name": "g", "deviceName": "nvidia.com/GH100"}],
        }}});
        let meta = json!({"annotations": {ROOT_COMPLEX: "true", NO_PCI_HOLE64: "true"}});
        let mut found = Vec::new();
        annotations(&meta, "metadata", &spec, &profile(&[]), &mut found);
        assert_eq!(
            found,
            [
                (
                    format!("metadata.annotations[{ROOT_COMPLEX}]"),
                    "GraceIOVirtualization is not compatible with placing PCI devices on the \
                     root complex"
                        .to_string()
                ),
                (
                    format!("metadata.annotations[{NO_PCI_HOLE64}]"),
                    "GraceIOVirtualization requires the 64-bit PCI hole".to_string()
                ),
            ]
        );
        let any = json!({"domain": {"devices": {
            "hostDevices": [{"name": "a", "deviceName": "nvidia.com/any"}],
        }}});
        found.clear();
        annotations(&meta, "metadata", &any, &profile(&[]), &mut found);
        assert!(found.is_empty());
    }
}

//! Cluster defaults applied to a VMI spec after expansion.
//!
//! Mirrors `SetDefaultVirtualMachineInstanceSpec` in KubeVirt's `pkg/defaults/defaults.go`, plus
//! `SetDefaultVolumeDisk` (`pkg/util/util.go`) and `SetDefaultNetworkInterface`
//! (`pkg/network/vmispec/defaults.go`), in upstream's order:
//!
//! 1. architecture, 2. machine type (for the final architecture), 3. cpu request copied from the
//!    cpu limit (and the cluster's `cpuRequest` when it is not the default), 4. guest memory from
//!    requests, limits or the hugepage size, 5. cpu topology from the cpu limit or request,
//! 6. container disk pull policies, 7. eviction strategy, 8. default pod network, 9. default
//!    disks.
//!
//! Not reproduced here, because expansion does not do them either: the CPU model, hotplug
//! `maxSockets`/`maxGuest`, hyperv dependencies and the arch-specific disk bus defaults. The
//! `vmi` view adds some of those separately.

use std::sync::OnceLock;

use serde_json::{Map, Value, json};

use crate::kubevirt::profile::ClusterProfile;
use crate::model::path;
use crate::model::path::Fields;
use crate::model::quantity::Quantity;

/// A failure KubeVirt itself would report while defaulting.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DefaultsError(pub String);

/// Apply the cluster defaults to a VMI spec (a VM's `spec.template.spec`).
pub fn apply(profile: &ClusterProfile, spec: &mut Value) -> Result<(), DefaultsError> {
    if !spec.is_object() {
        if spec.is_null() {
            *spec = Value::Object(Map::new());
        } else {
            return Err(DefaultsError(
                "`spec.template.spec` must be a mapping".into(),
            ));
        }
    }
    set_architecture(profile, spec);
    set_machine_type(profile, spec);
    set_resource_requests(profile, spec);
    set_guest_memory(spec);
    set_cpu_topology(spec);
    set_pull_policies(spec);
    set_eviction_strategy(profile, spec);
    set_default_network_interface(profile, spec)?;
    set_default_volume_disks(spec);
    Ok(())
}

fn set_architecture(profile: &ClusterProfile, spec: &mut Value) {
    if path::is_zero(spec.field("architecture")) {
        path::set(
            spec,
            &["architecture"],
            Value::String(profile.default_architecture.clone()),
        );
    }
}

fn set_machine_type(profile: &ClusterProfile, spec: &mut Value) {
    if !path::is_zero(path::get(spec, &["domain", "machine", "type"])) {
        return;
    }
    let arch = path::str_at(spec, &["architecture"]).unwrap_or("");
    let machine_type = profile.machine_type_for(arch).to_string();
    if let Some(machine) = path::ensure_map(spec, &["domain", "machine"]) {
        machine.insert("type".into(), Value::String(machine_type));
    }
}

/// The quantity at `p`, as Go decodes it (`None` when absent, null or not a quantity).
pub(crate) fn quantity_at(spec: &Value, p: &[&str]) -> Option<Quantity> {
    path::get(spec, p).and_then(Quantity::from_json)
}

fn non_zero_quantity(spec: &Value, p: &[&str]) -> Option<Quantity> {
    quantity_at(spec, p).filter(|q| !q.is_zero())
}

fn set_resource_requests(profile: &ClusterProfile, spec: &mut Value) {
    let limit = non_zero_quantity(spec, &["domain", "resources", "limits", "cpu"]);
    let request = non_zero_quantity(spec, &["domain", "resources", "requests", "cpu"]);
    if limit.is_some() && request.is_none() {
        let raw = path::get(spec, &["domain", "resources", "limits", "cpu"]).cloned();
        if let (Some(raw), Some(requests)) = (
            raw,
            path::ensure_map(spec, &["domain", "resources", "requests"]),
        ) {
            requests.insert("cpu".into(), raw);
        }
    }
    if let Some(cpu_request) = &profile.cpu_request {
        let exists = path::get(spec, &["domain", "resources", "requests", "cpu"]).is_some();
        let dedicated = path::get(spec, &["domain", "cpu", "dedicatedCpuPlacement"])
            .and_then(Value::as_bool)
            .unwrap_or(false);
        if !exists
            && !dedicated
            && let Some(requests) = path::ensure_map(spec, &["domain", "resources", "requests"])
        {
            requests.insert("cpu".into(), Value::String(cpu_request.clone()));
        }
    }
}

fn set_guest_memory(spec: &mut Value) {
    if path::is_set(spec, &["domain", "memory", "guest"]) {
        return;
    }
    let guest = non_zero_quantity(spec, &["domain", "resources", "requests", "memory"])
        .map(|_| path::get(spec, &["domain", "resources", "requests", "memory"]).cloned())
        .or_else(|| {
            non_zero_quantity(spec, &["domain", "resources", "limits", "memory"])
                .map(|_| path::get(spec, &["domain", "resources", "limits", "memory"]).cloned())
        })
        .flatten()
        .and_then(|v| Quantity::from_json(&v))
        .or_else(|| {
            if path::is_set(spec, &["domain", "memory", "hugepages"]) {
                path::str_at(spec, &["domain", "memory", "hugepages", "pageSize"])
                    .and_then(|s| Quantity::parse(s).ok())
            } else {
                None
            }
        });
    if let Some(memory) = path::ensure_map(spec, &["domain", "memory"])
        && let Some(guest) = guest
    {
        memory.insert("guest".into(), guest.to_json());
    }
}

fn cpu_count(spec: &Value, field: &str) -> u64 {
    path::get(spec, &["domain", "cpu", field])
        .and_then(Value::as_u64)
        .unwrap_or(0)
}

/// The sockets KubeVirt's defaults give a spec that sets none of `sockets`, `cores` and
/// `threads` (the CPU limit, else the request, else one; `None` when the spec sets a topology).
pub fn default_sockets(spec: &Value) -> Option<u64> {
    let cpu_present = path::is_set(spec, &["domain", "cpu"]);
    if cpu_present
        && (cpu_count(spec, "cores") != 0
            || cpu_count(spec, "sockets") != 0
            || cpu_count(spec, "threads") != 0)
    {
        return None;
    }
    // Go's Quantity.Value() rounds up; the result is truncated to uint32.
    let from = |p: &[&str]| {
        path::get(spec, p)
            .map(|v| Quantity::from_json(v).map_or(0, |q| u64::from(q.value() as u32)))
    };
    Some(
        from(&["domain", "resources", "limits", "cpu"])
            .or_else(|| from(&["domain", "resources", "requests", "cpu"]))
            .unwrap_or(1),
    )
}

fn set_cpu_topology(spec: &mut Value) {
    let Some(sockets) = default_sockets(spec) else {
        return;
    };
    if let Some(cpu) = path::ensure_map(spec, &["domain", "cpu"]) {
        // Go omits a zero uint32 (sockets 0 from a `0` limit).
        if sockets == 0 {
            cpu.shift_remove("sockets");
        } else {
            cpu.insert("sockets".into(), json!(sockets));
        }
        cpu.insert("cores".into(), json!(1));
        cpu.insert("threads".into(), json!(1));
    }
}

fn set_pull_policies(spec: &mut Value) {
    let Some(volumes) = spec.field_mut("volumes").and_then(Value::as_array_mut) else {
        return;
    };
    for volume in volumes {
        let Some(cd) = volume
            .field_mut("containerDisk")
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        if !path::is_zero(cd.field("imagePullPolicy")) {
            continue;
        }
        let image = cd.field("image").and_then(Value::as_str).unwrap_or("");
        let policy = if image.ends_with(":latest") || !image.contains([':', '@']) {
            "Always"
        } else {
            "IfNotPresent"
        };
        cd.insert("imagePullPolicy".into(), Value::String(policy.into()));
    }
}

fn set_eviction_strategy(profile: &ClusterProfile, spec: &mut Value) {
    if path::is_set(spec, &["evictionStrategy"]) {
        return;
    }
    if let Some(e) = &profile.eviction_strategy {
        path::set(spec, &["evictionStrategy"], Value::String(e.clone()));
    }
}

fn list_len(spec: &Value, p: &[&str]) -> usize {
    path::get(spec, p)
        .and_then(Value::as_array)
        .map_or(0, Vec::len)
}

/// Add the default pod network and its interface when the VM has neither networks nor
/// interfaces and does not turn `autoattachPodInterface` off (`SetDefaultNetworkInterface`).
pub fn set_default_network_interface(
    profile: &ClusterProfile,
    spec: &mut Value,
) -> Result<(), DefaultsError> {
    if !needs_default_interface(spec) {
        return Ok(());
    }
    let [bridge, masquerade, pod] = default_network();
    let iface = if default_binding(profile)? == "bridge" {
        bridge
    } else {
        masquerade
    };
    if let Some(devices) = path::ensure_map(spec, &["domain", "devices"]) {
        devices.insert("interfaces".into(), Value::Array(vec![iface.clone()]));
    }
    if let Some(map) = spec.as_object_mut() {
        map.insert("networks".into(), Value::Array(vec![pod.clone()]));
    }
    Ok(())
}

/// KubeVirt's refusal of the default interface it would add to `spec`, if it would add one
/// and the cluster's default is one it refuses: what [`set_default_network_interface`] fails
/// with, found without changing `spec`.
pub fn default_interface_refused(profile: &ClusterProfile, spec: &Value) -> Option<DefaultsError> {
    needs_default_interface(spec)
        .then(|| default_binding(profile).err())
        .flatten()
}

/// Whether KubeVirt adds the default interface: no networks, no interfaces, and
/// `autoattachPodInterface` not turned off.
pub(crate) fn needs_default_interface(spec: &Value) -> bool {
    path::get(spec, &["domain", "devices", "autoattachPodInterface"]).and_then(Value::as_bool)
        != Some(false)
        && list_len(spec, &["networks"]) == 0
        && list_len(spec, &["domain", "devices", "interfaces"]) == 0
}

/// The binding of the cluster's default interface, or KubeVirt's refusal of it.
fn default_binding(profile: &ClusterProfile) -> Result<&'static str, DefaultsError> {
    match profile.network_interface.as_str() {
        "bridge" if profile.permit_bridge_on_pod_network => Ok("bridge"),
        "bridge" => Err(DefaultsError(
            "bridge interface is not enabled in kubevirt-config".into(),
        )),
        "masquerade" => Ok("masquerade"),
        "slirp" => Err(DefaultsError(
            "slirp interface is deprecated as of v1.3".into(),
        )),
        other => Err(DefaultsError(format!(
            "unsupported default network interface `{other}`"
        ))),
    }
}

/// The default pod interface (bridge or masquerade binding) and the pod network, built once:
/// a clone copies a mapping's hash table where building it again would hash every key.
fn default_network() -> &'static [Value; 3] {
    static NETWORK: OnceLock<[Value; 3]> = OnceLock::new();
    NETWORK.get_or_init(|| {
        [
            json!({"name": "default", "bridge": {}}),
            json!({"name": "default", "masquerade": {}}),
            json!({"name": "default", "pod": {}}),
        ]
    })
}

/// A Go string: a list item without a name (or with `null`) is named "".
fn go_name(d: &Value) -> Option<&str> {
    match d.field("name") {
        None | Some(Value::Null) => d.is_object().then_some(""),
        Some(name) => name.as_str(),
    }
}

/// The names of the volumes of `spec` that no disk or filesystem names, in volume order: those
/// `SetDefaultVolumeDisk` gives a disk.
pub fn volumes_without_disk(spec: &Value) -> impl Iterator<Item = &str> {
    let list = |p: &[&str]| {
        path::get(spec, p)
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice)
    };
    let disks = list(&["domain", "devices", "disks"]);
    let filesystems = list(&["domain", "devices", "filesystems"]);
    // A few disks are searched in turn; thousands through a set, or the search is quadratic.
    let many: Option<std::collections::HashSet<&str>> = (disks.len() + filesystems.len() > 32)
        .then(|| {
            disks
                .iter()
                .chain(filesystems)
                .filter_map(go_name)
                .collect()
        });
    list(&["volumes"])
        .iter()
        .filter_map(go_name)
        .filter(move |volume| match &many {
            Some(names) => !names.contains(volume),
            None => !disks
                .iter()
                .chain(filesystems)
                .any(|d| go_name(d) == Some(volume)),
        })
}

/// Append a disk `{name}` for every volume that has no disk or filesystem of the same name, in
/// volume order (`SetDefaultVolumeDisk`). The disk of a volume without a name has none either:
/// `name: ""` is Go's zero value, which [`crate::kubevirt::vmi::write_go_zero_fields`] writes
/// where the whole of Go's answer is wanted.
pub fn set_default_volume_disks(spec: &mut Value) {
    let missing: Vec<String> = volumes_without_disk(spec).map(str::to_string).collect();
    if missing.is_empty() {
        return;
    }
    let Some(devices) = path::ensure_map(spec, &["domain", "devices"]) else {
        return;
    };
    let disks = path::field_or_insert_with(devices, "disks", || Value::Array(Vec::new()));
    if disks.is_null() {
        *disks = Value::Array(Vec::new());
    }
    if let Some(disks) = disks.as_array_mut() {
        for name in missing {
            disks.push(if name.is_empty() {
                json!({})
            } else {
                json!({ "name": name })
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Each volume without a disk or filesystem of its name gets a disk, in volume order,
    /// whether the VM has a few disks (searched in turn) or thousands (searched in a set).
    #[test]
    fn volumes_without_a_disk_get_one_few_or_many() {
        for have in [2_usize, 5_000] {
            let disks: Vec<Value> = (0..have)
                .map(|i| json!({"name": format!("d{i}")}))
                .collect();
            let mut volumes: Vec<Value> = (0..have)
                .rev()
                .map(|i| json!({"name": format!("d{i}")}))
                .collect();
            volumes.insert(1, json!({"name": "extra"}));
            volumes.push(json!({"name": "fs"}));
            volumes.push(json!({}));
            let mut spec = json!({
                "domain": {"devices": {"disks": disks, "filesystems": [{"name": "fs"}]}},
                "volumes": volumes,
            });
            set_default_volume_disks(&mut spec);
            let disks = spec["domain"]["devices"]["disks"].as_array().unwrap();
            assert_eq!(disks.len(), have + 2, "{have}");
            assert_eq!(disks[have], json!({"name": "extra"}));
            assert_eq!(disks[have + 1], json!({}));
        }
    }
}

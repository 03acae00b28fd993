//! The instancetype's CPU and the guest topology (mirrors KubeVirt's
//! `pkg/instancetype/apply/cpu.go`, plus the topology and spread helpers of
//! `pkg/instancetype/preference/apply/cpu.go`).
//!
//! Every CPU conflict is reported. Without conflicts the owned fields are copied (the VM spells
//! `dedicatedCpuPlacement` where the instancetype spells `dedicatedCPUPlacement`), `maxSockets`
//! is always overwritten, and the instancetype's vCPU count is laid out as sockets, cores and
//! threads according to the preference.

use serde_json::{Map, Value};

use super::{domain_map, set_omitempty};
use crate::kubevirt::conflict::Conflict;
use crate::model::path;
use crate::model::path::Fields;

/// The socket-to-core ratio used by the spread topology when the preference names none.
pub const DEFAULT_SPREAD_RATIO: u32 = 2;

/// Threads per core when spreading across sockets, cores and threads.
const THREADS_PER_CORE: u32 = 2;

/// Owned boolean/pointer-like fields: (instancetype key, VM key, conflict name).
const OWNED: [(&str, &str, &str); 5] = [
    ("model", "model", "model"),
    (
        "dedicatedCPUPlacement",
        "dedicatedCpuPlacement",
        "dedicatedCPUPlacement",
    ),
    (
        "isolateEmulatorThread",
        "isolateEmulatorThread",
        "isolateEmulatorThread",
    ),
    ("numa", "numa", "numa"),
    ("realtime", "realtime", "realtime"),
];

/// Whether the VM's field counts as set: `numa` and `realtime` are pointers, the others plain
/// values that count only when not zero.
fn vm_field_set(cpu: &Value, key: &str) -> bool {
    match key {
        "numa" | "realtime" => path::is_set(cpu, &[key]),
        _ => !path::is_zero(cpu.field(key)),
    }
}

/// Check the VM against the instancetype's CPU, then copy the CPU and lay out the topology.
pub(super) fn apply(
    instancetype: &Value,
    preference: Option<&Value>,
    spec: &mut Value,
) -> Vec<Conflict> {
    let conflicts = validate(instancetype, spec);
    if !conflicts.is_empty() {
        return conflicts;
    }
    let Some(cpu) = domain_map(spec, &["cpu"]) else {
        return conflicts;
    };
    let it_cpu = instancetype.field("cpu");
    for (it_key, vm_key, _) in OWNED {
        let Some(value) = it_cpu
            .and_then(|c| c.field(it_key))
            .filter(|v| !v.is_null())
        else {
            continue;
        };
        match vm_key {
            // Pointers in the VM: copied as they are, even when empty.
            "numa" | "realtime" => {
                cpu.insert(vm_key.to_string(), super::go_copy(value));
            }
            _ => set_omitempty(cpu, vm_key, value.clone()),
        }
    }
    if let Some(max) = it_cpu
        .and_then(|c| c.field("maxSockets"))
        .filter(|v| !v.is_null())
    {
        set_omitempty(cpu, "maxSockets", max.clone());
    }
    let vcpus = it_cpu.and_then(|c| c.field("guest")).map_or(0, as_u32);
    write_topology(cpu, topology(vcpus, preference));
    conflicts
}

fn validate(instancetype: &Value, spec: &Value) -> Vec<Conflict> {
    let mut conflicts = Vec::new();
    for list in ["requests", "limits"] {
        let has_cpu = path::get(spec, &["domain", "resources", list])
            .and_then(Value::as_object)
            .is_some_and(|m| m.contains_key("cpu"));
        if has_cpu {
            conflicts.push(Conflict::spec(&format!("domain.resources.{list}.cpu")));
        }
    }
    let empty = Value::Object(Map::new());
    let cpu = path::get(spec, &["domain", "cpu"]).unwrap_or(&empty);
    for key in ["sockets", "cores", "threads"] {
        if !path::is_zero(cpu.field(key)) {
            conflicts.push(Conflict::spec(&format!("domain.cpu.{key}")));
        }
    }
    for (it_key, vm_key, name) in OWNED {
        if vm_field_set(cpu, vm_key) && path::is_set(instancetype, &["cpu", it_key]) {
            conflicts.push(Conflict::spec(&format!("domain.cpu.{name}")));
        }
    }
    conflicts
}

/// A guest CPU layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Topology {
    sockets: u32,
    cores: u32,
    threads: u32,
}

fn write_topology(cpu: &mut Map<String, Value>, t: Topology) {
    set_omitempty(cpu, "cores", Value::from(t.cores));
    set_omitempty(cpu, "sockets", Value::from(t.sockets));
    set_omitempty(cpu, "threads", Value::from(t.threads));
}

/// Lay `vcpus` out as KubeVirt does for the preference's topology.
fn topology(vcpus: u32, preference: Option<&Value>) -> Topology {
    let mut t = Topology {
        sockets: 1,
        cores: 1,
        threads: 1,
    };
    if vcpus == 1 {
        return t;
    }
    match preferred_topology(preference) {
        "preferCores" | "cores" => t.cores = vcpus,
        "preferSockets" | "preferAny" | "sockets" | "any" => t.sockets = vcpus,
        "preferThreads" | "threads" => t.threads = vcpus,
        "preferSpread" | "spread" => {
            let (ratio, across) = spread_options(preference);
            // A ratio of 0 makes KubeVirt divide by zero; the affected count becomes 0 here, and
            // the expansion then fails (`ExpandError::SpreadByZero`).
            let div = |a: u32, b: u32| a.checked_div(b).unwrap_or(0);
            match across {
                "SocketsCores" => {
                    t.cores = ratio;
                    t.sockets = div(vcpus, ratio);
                }
                "CoresThreads" => {
                    t.threads = ratio;
                    t.cores = div(vcpus, ratio);
                }
                "SocketsCoresThreads" => {
                    t.threads = THREADS_PER_CORE;
                    t.cores = ratio;
                    t.sockets = div(vcpus / THREADS_PER_CORE, ratio);
                }
                _ => {}
            }
        }
        _ => {}
    }
    t
}

/// The preference's `cpu.preferredCPUTopology` (any spelling, deprecated ones included), or
/// `sockets` when there is no preference or it names none.
pub fn preferred_topology(preference: Option<&Value>) -> &str {
    preference
        .and_then(|p| path::str_at(p, &["cpu", "preferredCPUTopology"]))
        .unwrap_or("sockets")
}

/// The spread ratio and the `across` mode of a preference: `cpu.spreadOptions` wins over the
/// older `preferSpreadSocketToCoreRatio` (used when not 0); defaults are 2 and `SocketsCores`.
pub fn spread_options(preference: Option<&Value>) -> (u32, &str) {
    let mut ratio = DEFAULT_SPREAD_RATIO;
    let mut across = "SocketsCores";
    let Some(pref) = preference else {
        return (ratio, across);
    };
    let legacy = pref
        .field("preferSpreadSocketToCoreRatio")
        .map_or(0, as_u32);
    if legacy != 0 {
        ratio = legacy;
    }
    if let Some(a) = path::str_at(pref, &["cpu", "spreadOptions", "across"]) {
        across = a;
    }
    if let Some(r) = path::get(pref, &["cpu", "spreadOptions", "ratio"]).filter(|v| !v.is_null()) {
        ratio = as_u32(r);
    }
    (ratio, across)
}

/// A Go `uint32` field: the number if it is one that fits, else 0.
fn as_u32(v: &Value) -> u32 {
    v.as_u64().and_then(|n| u32::try_from(n).ok()).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(it: Value, pref: Option<Value>, spec: Value) -> (Vec<String>, Value) {
        let mut spec = spec;
        let c = apply(&it, pref.as_ref(), &mut spec);
        (c.into_iter().map(|c| c.path).collect(), spec)
    }

    fn topo(guest: u32, pref: Value) -> Value {
        let (c, spec) = run(json!({"cpu": {"guest": guest}}), Some(pref), json!({}));
        assert!(c.is_empty());
        spec["domain"]["cpu"].clone()
    }

    #[test]
    fn default_topology_is_sockets() {
        let (c, spec) = run(json!({"cpu": {"guest": 4}}), None, json!({}));
        assert!(c.is_empty());
        assert_eq!(
            spec,
            json!({"domain": {"cpu": {"cores": 1, "sockets": 4, "threads": 1}}})
        );
    }

    #[test]
    fn preferred_topologies_including_deprecated_names() {
        let pref = |t: &str| json!({"cpu": {"preferredCPUTopology": t}});
        assert_eq!(
            topo(4, pref("cores")),
            json!({"cores": 4, "sockets": 1, "threads": 1})
        );
        assert_eq!(
            topo(4, pref("preferCores")),
            json!({"cores": 4, "sockets": 1, "threads": 1})
        );
        assert_eq!(
            topo(4, pref("threads")),
            json!({"cores": 1, "sockets": 1, "threads": 4})
        );
        assert_eq!(
            topo(4, pref("preferThreads")),
            json!({"cores": 1, "sockets": 1, "threads": 4})
        );
        assert_eq!(
            topo(4, pref("preferAny")),
            json!({"cores": 1, "sockets": 4, "threads": 1})
        );
        assert_eq!(
            topo(4, pref("any")),
            json!({"cores": 1, "sockets": 4, "threads": 1})
        );
        assert_eq!(
            topo(4, pref("bogus")),
            json!({"cores": 1, "sockets": 1, "threads": 1})
        );
        // One vCPU is always 1/1/1.
        assert_eq!(
            topo(1, pref("cores")),
            json!({"cores": 1, "sockets": 1, "threads": 1})
        );
    }

    #[test]
    fn spread_variants() {
        let spread = json!({"cpu": {"preferredCPUTopology": "spread"}});
        assert_eq!(
            topo(6, spread.clone()),
            json!({"cores": 2, "sockets": 3, "threads": 1})
        );
        // Integer division loses vCPUs.
        assert_eq!(
            topo(5, spread),
            json!({"cores": 2, "sockets": 2, "threads": 1})
        );
        let legacy = json!({"cpu": {"preferredCPUTopology": "preferSpread"}, "preferSpreadSocketToCoreRatio": 3});
        assert_eq!(
            topo(6, legacy),
            json!({"cores": 3, "sockets": 2, "threads": 1})
        );
        let opts = json!({
            "preferSpreadSocketToCoreRatio": 3,
            "cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "CoresThreads", "ratio": 4}},
        });
        assert_eq!(
            topo(8, opts),
            json!({"cores": 2, "sockets": 1, "threads": 4})
        );
        let sct = json!({"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"across": "SocketsCoresThreads"}}});
        assert_eq!(
            topo(8, sct.clone()),
            json!({"cores": 2, "sockets": 2, "threads": 2})
        );
        // Too few vCPUs: sockets 0 is omitted.
        assert_eq!(topo(2, sct), json!({"cores": 2, "threads": 2}));
        let zero =
            json!({"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"ratio": 0}}});
        assert_eq!(topo(4, zero), json!({"threads": 1}));
    }

    #[test]
    fn every_cpu_conflict_in_order() {
        let it = json!({"cpu": {
            "guest": 2, "model": "host", "dedicatedCPUPlacement": true,
            "isolateEmulatorThread": true, "numa": {}, "realtime": {},
        }});
        let spec = json!({"domain": {
            "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}},
            "cpu": {
                "sockets": 1, "cores": 1, "threads": 1, "model": "x", "dedicatedCpuPlacement": true,
                "isolateEmulatorThread": true, "numa": {"guestMappingPassthrough": {}}, "realtime": {},
            },
        }});
        let (c, _) = run(it, None, spec);
        let expected: Vec<String> = [
            "resources.requests.cpu",
            "resources.limits.cpu",
            "cpu.sockets",
            "cpu.cores",
            "cpu.threads",
            "cpu.model",
            "cpu.dedicatedCPUPlacement",
            "cpu.isolateEmulatorThread",
            "cpu.numa",
            "cpu.realtime",
        ]
        .iter()
        .map(|s| format!("spec.template.spec.domain.{s}"))
        .collect();
        assert_eq!(c, expected);
    }

    #[test]
    fn vm_values_without_instancetype_counterpart_do_not_conflict() {
        let it = json!({"cpu": {"guest": 2}});
        let spec = json!({"domain": {
            "resources": {"requests": {"memory": "1Gi"}},
            "cpu": {"model": "x", "dedicatedCpuPlacement": true, "numa": {}, "sockets": 0, "maxSockets": 8},
        }});
        let (c, spec) = run(it, None, spec);
        assert!(c.is_empty());
        assert_eq!(
            spec["domain"]["cpu"],
            json!({"model": "x", "dedicatedCpuPlacement": true, "numa": {}, "sockets": 2, "maxSockets": 8, "cores": 1, "threads": 1})
        );
    }

    #[test]
    fn copies_owned_fields_and_overwrites_max_sockets() {
        let it = json!({"cpu": {
            "guest": 2, "model": "host-passthrough", "dedicatedCPUPlacement": true,
            "isolateEmulatorThread": false, "numa": {"guestMappingPassthrough": {}}, "realtime": {},
            "maxSockets": 4,
        }});
        let spec = json!({"domain": {"cpu": {"maxSockets": 16, "isolateEmulatorThread": false}}});
        let (c, spec) = run(it, None, spec);
        assert!(c.is_empty());
        assert_eq!(
            spec["domain"]["cpu"],
            json!({
                "maxSockets": 4, "model": "host-passthrough", "dedicatedCpuPlacement": true,
                "numa": {"guestMappingPassthrough": {}}, "realtime": {},
                "cores": 1, "sockets": 2, "threads": 1,
            })
        );
    }

    #[test]
    fn zero_max_sockets_removes_vm_value() {
        let (c, spec) = run(
            json!({"cpu": {"guest": 1, "maxSockets": 0}}),
            None,
            json!({"domain": {"cpu": {"maxSockets": 8}}}),
        );
        assert!(c.is_empty());
        assert!(spec["domain"]["cpu"].field("maxSockets").is_none());
    }

    #[test]
    fn empty_cpu_and_empty_requests_do_not_conflict() {
        let (c, _) = run(
            json!({"cpu": {"guest": 2}}),
            None,
            json!({"domain": {"cpu": {}, "resources": {"requests": {}, "limits": {}}}}),
        );
        assert!(c.is_empty());
    }
}

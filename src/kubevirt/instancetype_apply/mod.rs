//! Applying an instancetype to a VirtualMachine template.
//!
//! Mirrors the instancetype half of KubeVirt's `pkg/instancetype/apply` (`vmi.go`): every owned
//! field group is checked and copied in the upstream order (node selector, scheduler name, CPU,
//! memory, IO threads, IO thread policy, launch security, GPUs, host devices, annotations), and
//! the conflicts of all groups are collected. Applying the preference is the caller's job, and
//! only when this returns no conflict.
//!
//! Fields of the VM count as set exactly as they would in KubeVirt's Go structs: a pointer field
//! is set when present and not `null`; a plain scalar, map or list only when not its zero value.
//! Zero values that Go would omit on output are never written.

mod annotations;
mod cpu;
mod gpus;
mod host_devices;
mod io_threads;
mod launch_security;
mod memory;
mod node_selector;
mod scheduler;

use serde_json::{Map, Value};

use crate::kubevirt::conflict::Conflict;
use crate::model::path;
use crate::model::path::Fields;

pub use cpu::{DEFAULT_SPREAD_RATIO, preferred_topology, spread_options};
pub use memory::overcommitted_request;

/// Apply the instancetype `spec` (and the cpu topology preference of `preference`, a preference
/// `spec`) to `template` (the VM's `spec.template`: `{metadata, spec}`) in place. Returns every
/// conflict, in KubeVirt's order; on conflicts the template may be partly changed.
pub fn apply(
    instancetype: &Value,
    preference: Option<&Value>,
    template: &mut Value,
) -> Vec<Conflict> {
    let mut conflicts = Vec::new();
    if let Some(spec) = template_spec(template) {
        conflicts.extend(node_selector::apply(instancetype, spec));
        conflicts.extend(scheduler::apply(instancetype, spec));
        conflicts.extend(cpu::apply(instancetype, preference, spec));
        conflicts.extend(memory::apply(instancetype, spec));
        conflicts.extend(io_threads::apply_io_threads(instancetype, spec));
        conflicts.extend(io_threads::apply_policy(instancetype, spec));
        conflicts.extend(launch_security::apply(instancetype, spec));
        conflicts.extend(gpus::apply(instancetype, spec));
        conflicts.extend(host_devices::apply(instancetype, spec));
    }
    conflicts.extend(annotations::apply(instancetype, template));
    conflicts
}

/// The template's `spec`, created when missing. `None` when the template or its `spec` is not a
/// mapping (nothing is applied then).
fn template_spec(template: &mut Value) -> Option<&mut Value> {
    path::ensure_map(template, &["spec"])?;
    path::get_mut(template, &["spec"])
}

/// The mapping at `domain.<rest>` of the template spec, created where missing.
fn domain_map<'a>(spec: &'a mut Value, rest: &[&str]) -> Option<&'a mut Map<String, Value>> {
    // `["domain", rest..]` without allocating: `rest` is at most two steps.
    let mut full = ["domain"; 3];
    let full = &mut full[..=rest.len()];
    full[1..].copy_from_slice(rest);
    path::ensure_map(spec, full)
}

/// Store `value` under `key` as Go's `omitempty` would serialise a non-pointer field: a zero
/// value removes the key instead.
fn set_omitempty(map: &mut Map<String, Value>, key: &str, value: Value) {
    if path::is_zero(Some(&value)) {
        // Removing hashes the key; a zero value usually has nothing to remove.
        if map.field(key).is_some() {
            map.shift_remove(key);
        }
    } else {
        map.insert(key.to_string(), value);
    }
}

/// A copy of `v`, a struct the instancetype hands over whole (`realtime`, `numa`, `hugepages`,
/// GPUs, host devices, launch security), as Go writes it back after decoding it: a key set to
/// `null` is a nil pointer and is left out, and so is a key set to `""` (every string of these
/// structs is `omitempty` except `name`; that includes a claim's `claimName` and `requestName`).
fn go_copy(v: &Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, v)| !(v.is_null() || (v.as_str() == Some("") && k.as_str() != "name")))
                .map(|(k, v)| (k.clone(), go_copy(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(go_copy).collect()),
        other => other.clone(),
    }
}

/// Whether a Go list field is non-empty (a list with at least one element).
fn non_empty_list(v: Option<&Value>) -> bool {
    v.and_then(Value::as_array).is_some_and(|a| !a.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::path::Fields;
    use serde_json::json;

    fn paths(c: &[Conflict]) -> Vec<&str> {
        c.iter().map(|c| c.path.as_str()).collect()
    }

    #[test]
    fn whole_structs_are_copied_as_go_writes_them() {
        let it = json!({
            "cpu": {"guest": 2, "realtime": {"mask": ""}, "numa": {"guestMappingPassthrough": null}},
            "memory": {"guest": "1Gi", "hugepages": {"pageSize": ""}},
            "gpus": [{"name": "", "deviceName": "d", "tag": "", "claimName": "", "requestName": ""}],
            "launchSecurity": {"sev": null, "snp": {}}
        });
        let mut t = json!({"spec": {"domain": {}}});
        assert!(apply(&it, None, &mut t).is_empty());
        let domain = &t["spec"]["domain"];
        assert_eq!(domain["cpu"]["realtime"], json!({}));
        assert_eq!(domain["cpu"]["numa"], json!({}));
        assert_eq!(domain["memory"]["hugepages"], json!({}));
        assert_eq!(
            domain["devices"]["gpus"],
            json!([{"name": "", "deviceName": "d"}])
        );
        assert_eq!(domain["launchSecurity"], json!({"snp": {}}));
    }

    #[test]
    fn conflicts_come_in_upstream_order() {
        let it = json!({
            "cpu": {"guest": 2},
            "memory": {"guest": "1Gi"},
            "nodeSelector": {"a": "b"},
            "schedulerName": "s",
            "annotations": {"k": "v"},
            "gpus": [{"name": "g", "deviceName": "d"}],
        });
        let mut t = json!({
            "metadata": {"annotations": {"k": "other"}},
            "spec": {
                "nodeSelector": {},
                "schedulerName": "mine",
                "domain": {
                    "cpu": {"cores": 2, "sockets": 1},
                    "memory": {"guest": "2Gi"},
                    "devices": {"gpus": [{"name": "x", "deviceName": "y"}]},
                },
            },
        });
        let c = apply(&it, None, &mut t);
        assert_eq!(
            paths(&c),
            [
                "spec.template.spec.nodeSelector",
                "spec.template.spec.schedulerName",
                "spec.template.spec.domain.cpu.sockets",
                "spec.template.spec.domain.cpu.cores",
                "spec.template.spec.domain.memory.guest",
                "spec.template.spec.domain.devices.gpus",
                "annotations.k",
            ]
        );
    }

    #[test]
    fn minimal_instancetype_writes_topology_and_memory_only() {
        let it = json!({"cpu": {"guest": 2}, "memory": {"guest": "2Gi"}});
        let mut t = json!({"spec": {"domain": {"devices": {}}}});
        assert!(apply(&it, None, &mut t).is_empty());
        assert_eq!(
            t,
            json!({"spec": {"domain": {
                "devices": {},
                "cpu": {"cores": 1, "sockets": 2, "threads": 1},
                "memory": {"guest": "2Gi"},
            }}})
        );
    }

    #[test]
    fn empty_template_gets_spec_but_no_metadata() {
        let it = json!({"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}});
        let mut t = json!({});
        assert!(apply(&it, None, &mut t).is_empty());
        assert!(t.field("metadata").is_none());
        assert_eq!(
            t["spec"]["domain"]["cpu"],
            json!({"cores": 1, "sockets": 1, "threads": 1})
        );
    }

    #[test]
    fn wrong_types_are_skipped_without_panicking() {
        let it = json!({"cpu": {"guest": "x"}, "memory": {"guest": 5}, "gpus": "no"});
        let mut t = json!({"spec": {"domain": "nope"}});
        assert!(apply(&it, None, &mut t).is_empty());
        assert_eq!(t["spec"]["domain"], json!("nope"));
        let mut t = json!("not a map");
        assert!(apply(&it, None, &mut t).is_empty());
    }
}

//! Preference requirements (`pkg/instancetype/preference/requirements`): after the instancetype
//! and preference are applied and the cluster defaults set, the VM must provide the vCPUs, the
//! memory and the architecture the preference requires. Checked in the order cpu, memory,
//! architecture; only the first failure is reported.

use std::cmp::Ordering;

use serde_json::Value;

use super::{topology, uint32_at};
use crate::model::path;
use crate::model::path::Fields;
use crate::model::quantity::Quantity;

/// A failed requirement: the involved field paths and KubeVirt's reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// The paths KubeVirt lists (joined by `, ` in the cause's field).
    pub paths: Vec<String>,
    /// The reason, without the `failure checking preference requirements: ` prefix.
    pub reason: String,
}

const CPU: &str = "spec.template.spec.domain.cpu";

/// Check the preference's requirements against the instancetype `spec` (if any) and the VMI
/// spec (the VM's `spec.template.spec` after application and defaults).
pub fn check(
    instancetype: Option<&Value>,
    preference: Option<&Value>,
    vmi_spec: &Value,
) -> Option<Failure> {
    let requirements = preference?.field("requirements").filter(|v| !v.is_null())?;
    if requirements.field("cpu").is_some_and(|v| !v.is_null())
        && let Some(f) = check_cpu(instancetype, preference, requirements, vmi_spec)
    {
        return Some(f);
    }
    if requirements.field("memory").is_some_and(|v| !v.is_null())
        && let Some(f) = check_memory(instancetype, requirements, vmi_spec)
    {
        return Some(f);
    }
    if let Some(arch) = requirements.field("architecture").filter(|v| !v.is_null()) {
        let wanted = arch.as_str().unwrap_or("");
        let actual = path::str_at(vmi_spec, &["architecture"]).unwrap_or("");
        if wanted != actual {
            return Some(Failure {
                paths: vec!["spec.template.spec.architecture".into()],
                reason: format!(
                    "preference requires architecture {wanted} but {actual} is being requested"
                ),
            });
        }
    }
    None
}

fn check_cpu(
    instancetype: Option<&Value>,
    preference: Option<&Value>,
    requirements: &Value,
    vmi_spec: &Value,
) -> Option<Failure> {
    let required = uint32_at(Some(requirements), &["cpu", "guest"]);
    if let Some(it) = instancetype {
        let guest = uint32_at(Some(it), &["cpu", "guest"]);
        return (guest < required).then(|| Failure {
            paths: vec!["spec.instancetype".into()],
            reason: format!(
                "insufficient CPU resources of {guest} vCPU provided by instance type, \
                 preference requires {required} vCPU"
            ),
        });
    }
    let Some(cpu) = path::get(vmi_spec, &["domain", "cpu"]).filter(|v| !v.is_null()) else {
        return Some(Failure {
            paths: vec![CPU.into()],
            reason: format!(
                "no CPU resources provided by VirtualMachine, preference requires {required} vCPU"
            ),
        });
    };
    let count = |axis: &str| uint32_at(Some(cpu), &[axis]);
    let insufficient = |axes: &[&str], provided: u32, as_what: &str| {
        (provided < required).then(|| Failure {
            paths: axes.iter().map(|a| format!("{CPU}.{a}")).collect(),
            reason: format!(
                "insufficient CPU resources of {provided} vCPU provided by VirtualMachine, \
                 preference requires {required} vCPU provided as {as_what}"
            ),
        })
    };
    match topology::preferred(preference) {
        "threads" | "preferThreads" => insufficient(&["threads"], count("threads"), "threads"),
        "cores" | "preferCores" => insufficient(&["cores"], count("cores"), "cores"),
        "sockets" | "preferSockets" => insufficient(&["sockets"], count("sockets"), "sockets"),
        "any" | "preferAny" => insufficient(
            &["cores", "sockets", "threads"],
            count("cores")
                .wrapping_mul(count("sockets"))
                .wrapping_mul(count("threads")),
            "cores, sockets and threads",
        ),
        "spread" | "preferSpread" => {
            let (_, across) = topology::spread_options(preference.unwrap_or(&Value::Null));
            let axes: &[&str] = match across.as_str() {
                "SocketsCores" => &["sockets", "cores"],
                "CoresThreads" => &["cores", "threads"],
                "SocketsCoresThreads" => &["sockets", "cores", "threads"],
                _ => &[],
            };
            let provided = if axes.is_empty() {
                0
            } else {
                axes.iter().fold(1u32, |acc, a| acc.wrapping_mul(count(a)))
            };
            insufficient(axes, provided, &across)
        }
        _ => None,
    }
}

fn check_memory(
    instancetype: Option<&Value>,
    requirements: &Value,
    vmi_spec: &Value,
) -> Option<Failure> {
    // `None` is KubeVirt's zero quantity (`0Mi`, printed `0`).
    let quantity = |v: Option<&Value>| v.and_then(Quantity::from_json);
    let mut field = "spec.template.spec.domain.memory";
    let mut source = "VirtualMachine";
    let mut provided = None;
    if let Some(it) = instancetype {
        field = "spec.instancetype";
        source = "instance type";
        provided = quantity(path::get(it, &["memory", "guest"]));
    }
    if let Some(guest) =
        path::get(vmi_spec, &["domain", "memory", "guest"]).filter(|v| !v.is_null())
    {
        provided = quantity(Some(guest));
    }
    let required = quantity(path::get(requirements, &["memory", "guest"]));
    let show = |q: &Option<Quantity>| {
        q.as_ref()
            .map_or_else(|| "0".to_string(), Quantity::to_string)
    };
    (compare(provided.as_ref(), required.as_ref()) == Ordering::Less).then(|| Failure {
        paths: vec![field.into()],
        reason: format!(
            "insufficient Memory resources of {} provided by {source}, preference requires {}",
            show(&provided),
            show(&required)
        ),
    })
}

/// Compare two quantities by value, as Go's `Quantity.Cmp` (absent = 0).
fn compare(a: Option<&Quantity>, b: Option<&Quantity>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => a.cmp_value(b),
        (Some(a), None) if a.is_zero() => Ordering::Equal,
        (Some(a), None) => {
            if a.is_negative() {
                Ordering::Less
            } else {
                Ordering::Greater
            }
        }
        (None, Some(b)) if b.is_zero() => Ordering::Equal,
        (None, Some(b)) => {
            if b.is_negative() {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        (None, None) => Ordering::Equal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn memory_uses_the_vm_guest_after_application() {
        let pref = json!({"requirements": {"memory": {"guest": "2Gi"}}});
        let vmi = json!({"domain": {"memory": {"guest": "1024Mi"}}});
        let f = check(None, Some(&pref), &vmi).unwrap();
        assert_eq!(f.paths, ["spec.template.spec.domain.memory"]);
        assert_eq!(
            f.reason,
            "insufficient Memory resources of 1Gi provided by VirtualMachine, preference requires 2Gi"
        );
        let it = json!({"memory": {"guest": "4Gi"}});
        let vmi = json!({"domain": {"memory": {"guest": "4Gi"}}});
        assert!(check(Some(&it), Some(&pref), &vmi).is_none());
    }

    #[test]
    fn no_memory_counts_as_zero() {
        let pref = json!({"requirements": {"memory": {"guest": "1Mi"}}});
        let f = check(None, Some(&pref), &json!({"domain": {}})).unwrap();
        assert!(
            f.reason
                .starts_with("insufficient Memory resources of 0 provided")
        );
    }

    #[test]
    fn cpu_first_then_memory_then_architecture() {
        let pref = json!({"requirements": {"cpu": {"guest": 4}, "memory": {"guest": "8Gi"},
                                           "architecture": "arm64"}});
        let it = json!({"cpu": {"guest": 2}, "memory": {"guest": "1Gi"}});
        let f = check(Some(&it), Some(&pref), &json!({"architecture": "amd64"})).unwrap();
        assert_eq!(f.paths, ["spec.instancetype"]);
        assert!(f.reason.contains("CPU"));
    }

    #[test]
    fn any_topology_multiplies_and_lists_three_paths() {
        let pref = json!({"requirements": {"cpu": {"guest": 9}},
                          "cpu": {"preferredCPUTopology": "any"}});
        let vmi = json!({"domain": {"cpu": {"sockets": 2, "cores": 2, "threads": 2}}});
        let f = check(None, Some(&pref), &vmi).unwrap();
        assert_eq!(f.paths.len(), 3);
        assert!(f.reason.contains("of 8 vCPU"));
    }
}

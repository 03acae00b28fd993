//! `KV042` unmet-requirements.
//!
//! ## What it checks
//! That every preference's `spec.requirements` (`cpu.guest`, `memory.guest`) can be met by at
//! least one instancetype of the same catalog: one instancetype (cluster-scoped or namespaced)
//! with at least that many vCPUs and at least that much guest memory. The catalog is what
//! `kvrender build` rendered, or the inputs of `kvrender validate`; a set of objects without
//! any instancetype is not checked (its preferences are meant for instancetypes kept
//! elsewhere).
//!
//! ## Why
//! KubeVirt refuses every VM that pairs the preference with an instancetype too small for it
//! (`KV033`). When no instancetype of the catalog is large enough, the preference can only be
//! used with VMs that set their CPU and memory themselves, which is rarely what a catalog
//! means.
//!
//! ## Example
//! A preference requiring 16 vCPUs in a catalog whose largest instancetype has 8.
//!
//! ## Fix
//! Lower the requirements, or add a size to a family that meets them.

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::model::quantity::Quantity;
use crate::model::{Kind, Object, path};
use crate::validate::Rule;

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::UNMET_REQUIREMENTS,
    name: "unmet-requirements",
    summary: "No instancetype of the catalog meets a preference's cpu and memory requirements.",
    severity: Severity::Warning,
};

/// Warn about every preference among `objects` whose requirements no instancetype among
/// `objects` meets. Nothing is reported when `objects` holds no instancetype.
pub fn check<'a, I>(objects: I, out: &mut Vec<Diagnostic>)
where
    I: IntoIterator<Item = &'a Object> + Clone,
{
    let sizes: Vec<(Option<i64>, Option<Quantity>)> = objects
        .clone()
        .into_iter()
        .filter(|o| matches!(o.kind(), Kind::Instancetype | Kind::ClusterInstancetype))
        .map(|o| {
            (
                path::get(&o.value, &["spec", "cpu", "guest"]).and_then(|v| v.as_i64()),
                path::get(&o.value, &["spec", "memory", "guest"]).and_then(Quantity::from_json),
            )
        })
        .collect();
    if sizes.is_empty() {
        return;
    }
    for pref in objects
        .into_iter()
        .filter(|o| matches!(o.kind(), Kind::Preference | Kind::ClusterPreference))
    {
        let cpu = path::get(&pref.value, &["spec", "requirements", "cpu", "guest"])
            .and_then(|v| v.as_i64())
            .filter(|c| *c > 0);
        let memory = path::get(&pref.value, &["spec", "requirements", "memory", "guest"])
            .and_then(Quantity::from_json)
            .filter(|m| !m.is_zero());
        if cpu.is_none() && memory.is_none() {
            continue;
        }
        let met = sizes.iter().any(|(c, m)| {
            cpu.is_none_or(|want| c.is_some_and(|have| have >= want))
                && memory
                    .as_ref()
                    .is_none_or(|want| m.as_ref().is_some_and(|have| have.cmp_value(want).is_ge()))
        });
        if met {
            continue;
        }
        let wanted = match (cpu, &memory) {
            (Some(c), Some(m)) => format!("{c} vCPUs and {m} of memory"),
            (Some(c), None) => format!("{c} vCPUs"),
            (None, Some(m)) => format!("{m} of memory"),
            (None, None) => unreachable!("skipped above"),
        };
        out.push(
            Diagnostic::warning(
                RULE.code,
                pref.field_origin("spec.requirements"),
                format!(
                    "no instancetype in the catalog meets the requirements (at least {wanted}); \
                     every VM pairing this preference with one of them would be refused"
                ),
            )
            .with_object(pref.object_ref())
            .with_field("spec.requirements"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;
    use serde_json::{Value, json};

    fn obj(kind: &str, name: &str, spec: Value) -> Object {
        Object::new(
            json!({"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": kind,
                   "metadata": {"name": name}, "spec": spec}),
            Origin::new("c.yaml", 0, Some(1)),
        )
    }

    fn run(objects: &[Object]) -> Vec<String> {
        let mut out = Vec::new();
        check(objects, &mut out);
        out.into_iter()
            .map(|d| format!("{} {}", d.object.unwrap(), d.message))
            .collect()
    }

    #[test]
    fn one_instancetype_must_meet_both_requirements() {
        let objects = [
            obj(
                "VirtualMachineClusterInstancetype",
                "big-cpu",
                json!({"cpu": {"guest": 16}, "memory": {"guest": "2Gi"}}),
            ),
            obj(
                "VirtualMachineInstancetype",
                "big-mem",
                json!({"cpu": {"guest": 1}, "memory": {"guest": "64Gi"}}),
            ),
            obj(
                "VirtualMachineClusterPreference",
                "cpu-only",
                json!({"requirements": {"cpu": {"guest": 16}}}),
            ),
            obj(
                "VirtualMachinePreference",
                "mem-only",
                json!({"requirements": {"memory": {"guest": "65536Mi"}}}),
            ),
            obj(
                "VirtualMachineClusterPreference",
                "both",
                json!({"requirements": {"cpu": {"guest": 8}, "memory": {"guest": "8Gi"}}}),
            ),
            obj(
                "VirtualMachineClusterPreference",
                "too-much",
                json!({"requirements": {"memory": {"guest": "128Gi"}}}),
            ),
        ];
        let out = run(&objects);
        assert_eq!(out.len(), 2, "{out:#?}");
        assert!(out[0].contains("/both") && out[0].contains("8 vCPUs and 8Gi"));
        assert!(out[1].contains("/too-much") && out[1].contains("128Gi of memory"));
    }

    #[test]
    fn preferences_alone_are_not_checked() {
        let objects = [obj(
            "VirtualMachineClusterPreference",
            "p",
            json!({"requirements": {"cpu": {"guest": 64}}}),
        )];
        assert!(run(&objects).is_empty());
    }
}

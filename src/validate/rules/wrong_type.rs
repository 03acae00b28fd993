//! `KV004` wrong-type.
//!
//! ## What it checks
//! The types of the fields the schema of [`super::unknown_field`] covers: integers where Go has
//! `uint32`/`int`, quantities (strings or numbers) for memory, booleans, mappings and lists.
//! And the fields the instancetype and preference schemas require: an instancetype's
//! `spec.cpu.guest` and `spec.memory.guest`, the `name` of each of its GPUs and host devices,
//! a preference's `guest` under `requirements.cpu` and `requirements.memory` when those are
//! there, and the `name` of each preferred CPU feature. A `null` counts as missing, also a
//! `null` spec (KubeVirt's webhook admits that one; the API server does not).
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

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::model::{Kind, Object};
use crate::validate::Rule;

/// The rule: wrong types are found by the walk in [`super::unknown_field`], missing fields by
/// [`check_required`].
pub const RULE: Rule = Rule {
    code: codes::WRONG_TYPE,
    name: "wrong-type",
    summary: "A field of an instancetype, preference or VM, or of any object's `metadata`, has the wrong type (a string where a quantity belongs that is not one, such as `16GB` or `2 Gi`, counts), or a field its schema requires is missing: the API server refuses it.",
    severity: Severity::Error,
};

/// The fields below `spec` that the schema of an instancetype (`true`) or a preference
/// (`false`) requires: the parent, where `*` is every item of a list, and the field. A parent
/// that is absent requires nothing, except `spec.cpu` and `spec.memory` of an instancetype.
const REQUIRED: &[(bool, &[&str], &str)] = &[
    (true, &[], "cpu"),
    (true, &[], "memory"),
    (true, &["cpu"], "guest"),
    (true, &["memory"], "guest"),
    (true, &["gpus", "*"], "name"),
    (true, &["hostDevices", "*"], "name"),
    (false, &["requirements", "cpu"], "guest"),
    (false, &["requirements", "memory"], "guest"),
    (false, &["cpu", "preferredCPUFeatures", "*"], "name"),
];

/// Report the fields an instancetype's or preference's schema requires and the object lacks.
/// A missing `spec` is the webhook's own refusal (`KV030`) and a `spec` of another type a wrong
/// type, so only a `null` one is reported here.
pub fn check_required(obj: &Object, out: &mut Vec<Diagnostic>) {
    let instancetype = match obj.kind() {
        Kind::Instancetype | Kind::ClusterInstancetype => true,
        Kind::Preference | Kind::ClusterPreference => false,
        _ => return,
    };
    let mut missing = Vec::new();
    match obj.value.get("spec") {
        Some(Value::Object(spec)) => {
            let mut at = String::from("spec");
            for (kind, parent, field) in REQUIRED {
                if *kind == instancetype {
                    absent_below(spec, parent, field, &mut at, &mut missing);
                }
            }
        }
        // KubeVirt's webhook lets a `null` spec through; the API server drops the `null` and
        // then misses the field.
        Some(Value::Null) => missing.push("spec".to_string()),
        _ => return,
    }
    for path in missing {
        out.push(
            Diagnostic::error(
                RULE.code,
                obj.origin.clone(),
                format!(
                    "required by the {} schema: the API server refuses the object without it",
                    obj.kind_str()
                ),
            )
            .with_field(path)
            .with_object(obj.object_ref()),
        );
    }
}

/// Collect into `out` the paths of `field` missing (or `null`) in each mapping at `parent`
/// below `map` (whose path is `at`). An absent parent is only reported when it is `spec`'s
/// own field (`parent` empty, `field` itself is then what is required). `at` grows and shrinks
/// back as the walk goes down and up, so that nothing is allocated for what is present.
fn absent_below(
    map: &Map<String, Value>,
    parent: &[&str],
    field: &str,
    at: &mut String,
    out: &mut Vec<String>,
) {
    let Some((first, rest)) = parent.split_first() else {
        if map.get(field).is_none_or(Value::is_null) {
            out.push(format!("{at}.{field}"));
        }
        return;
    };
    let len = at.len();
    match map.get(*first) {
        Some(Value::Object(child)) if *first != "*" => {
            let _ = write!(at, ".{first}");
            absent_below(child, rest, field, at, out);
        }
        Some(Value::Array(items)) if rest.first() == Some(&"*") => {
            for (i, item) in items.iter().enumerate() {
                if let Some(item) = item.as_object() {
                    let _ = write!(at, ".{first}[{i}]");
                    absent_below(item, &rest[1..], field, at, out);
                    at.truncate(len);
                }
            }
        }
        _ => {}
    }
    at.truncate(len);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;
    use serde_json::json;

    fn missing(kind: &str, spec: Value) -> Vec<String> {
        let obj = Object::new(
            json!({"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": kind,
                   "metadata": {"name": "x"}, "spec": spec}),
            Origin::new("c.yaml", 0, Some(1)),
        );
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
}

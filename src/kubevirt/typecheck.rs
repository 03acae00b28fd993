//! Type checks of the fields expansion reads, run before any rule.
//!
//! KubeVirt never sees a wrongly typed field: the API server refuses to decode the object. Our
//! rules work on untyped trees and skip what they cannot read, so without this check a
//! `cpu.guest: "two"` in an instancetype would silently expand to a VM without its vCPUs. The
//! field types come from the schema `validate` uses (taken from KubeVirt's Go types); only wrong
//! types are reported here, unknown fields are `validate`'s business.

use serde_json::Value;

use crate::validate::schema::{self, Problem, Ty};

/// One field whose value has the wrong type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrongType {
    /// The dotted path of the field from the object's root, with list indices (`a.b[0].c`).
    pub field: String,
    /// What the field must be.
    pub expected: &'static str,
    /// What it is.
    pub found: &'static str,
}

impl std::fmt::Display for WrongType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` must be {}, not {}",
            self.field, self.expected, self.found
        )
    }
}

/// Whether `v` and everything below it fits `ty`, walked without allocating (the common case);
/// the same judgement as `schema::check`, which runs only when this says no, for the paths.
fn fits(v: &Value, ty: Ty) -> bool {
    if v.is_null() {
        return true;
    }
    let here = match ty {
        Ty::Str => v.is_string(),
        Ty::Bool => v.is_boolean(),
        Ty::Int => v.is_i64() || v.is_u64(),
        Ty::Uint32 => v.as_u64().is_some_and(|n| u32::try_from(n).is_ok()),
        Ty::Quantity => v.is_string() || v.is_number(),
        Ty::StrMap => v
            .as_object()
            .is_some_and(|m| m.values().all(Value::is_string)),
        Ty::QuantityMap => v
            .as_object()
            .is_some_and(|m| m.values().all(|q| q.is_string() || q.is_number())),
        Ty::Struct(_) | Ty::OpaqueMap => v.is_object(),
        Ty::List(_) => v.is_array(),
        Ty::Opaque => true,
    };
    here && match (ty, v) {
        (Ty::Struct(fields), Value::Object(map)) => map.iter().all(|(key, child)| {
            fields
                .iter()
                .find(|f| f.0 == key)
                .is_none_or(|f| fits(child, f.1))
        }),
        (Ty::List(item), Value::Array(items)) => items.iter().all(|c| fits(c, *item)),
        _ => true,
    }
}

fn wrong_types(v: &Value, ty: Ty, path: &str) -> Vec<WrongType> {
    if fits(v, ty) {
        return Vec::new();
    }
    let mut problems = Vec::new();
    schema::check(v, ty, path, &mut problems);
    problems
        .into_iter()
        .filter_map(|p| match p {
            Problem::WrongType {
                path,
                expected,
                found,
            } => Some(WrongType {
                field: path,
                expected,
                found,
            }),
            Problem::Unknown { .. } => None,
        })
        .collect()
}

/// The wrongly typed fields of a VirtualMachine: its matchers and the parts of its template
/// that instancetypes, preferences and defaults read.
pub fn virtual_machine(vm: &Value) -> Vec<WrongType> {
    wrong_types(vm, schema::VIRTUAL_MACHINE, "")
}

/// The wrongly typed fields of an instancetype `spec`, as paths from the object's root
/// (`spec.cpu.guest`).
pub fn instancetype_spec(spec: &Value) -> Vec<WrongType> {
    wrong_types(spec, Ty::Struct(schema::INSTANCETYPE_SPEC), "spec")
}

/// The wrongly typed fields of a preference `spec`, as paths from the object's root.
pub fn preference_spec(spec: &Value) -> Vec<WrongType> {
    wrong_types(spec, Ty::Struct(schema::PREFERENCE_SPEC), "spec")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn vm_fields_the_rules_read_are_checked() {
        let vm = json!({"spec": {"template": {"spec": {"domain": {
            "cpu": {"sockets": {"n": 1}},
            "memory": {"guest": ["1Gi"]},
            "devices": {"disks": [{"name": "a", "disk": {"bus": 5}}]}}}}}});
        let got: Vec<String> = virtual_machine(&vm)
            .iter()
            .map(|w| w.field.clone())
            .collect();
        assert_eq!(
            got,
            [
                "spec.template.spec.domain.cpu.sockets",
                "spec.template.spec.domain.memory.guest",
                "spec.template.spec.domain.devices.disks[0].disk.bus",
            ]
        );
    }

    #[test]
    fn spec_paths_start_at_the_object_root() {
        let w = instancetype_spec(&json!({"cpu": {"guest": "two"}}));
        assert_eq!(w.len(), 1);
        assert_eq!(
            w[0].to_string(),
            "`spec.cpu.guest` must be a non-negative integer, not a string"
        );
        let w = preference_spec(&json!({"devices": {"preferredDiskBus": true}, "extra": 1}));
        assert_eq!(w[0].field, "spec.devices.preferredDiskBus");
        assert_eq!(w.len(), 1, "unknown fields are not type errors");
    }

    #[test]
    fn well_typed_objects_and_nulls_pass() {
        let vm = json!({"spec": {"instancetype": {"name": "u1.small"},
            "template": {"spec": {"domain": {"cpu": {"cores": 2, "model": null}}}}}});
        assert!(virtual_machine(&vm).is_empty());
        assert!(
            instancetype_spec(&json!({"cpu": {"guest": 2}, "memory": {"guest": "2Gi"}})).is_empty()
        );
    }
}

//! Type checks of the fields expansion reads, run before any rule.
//!
//! KubeVirt never sees a wrongly typed field: the API server refuses to decode the object. Our
//! rules work on untyped trees and skip what they cannot read, so without this check a
//! `cpu.guest: "two"` in an instancetype would silently expand to a VM without its vCPUs. The
//! field types come from the schema `validate` uses (taken from KubeVirt's Go types); only wrong
//! types are reported here, unknown fields are `validate`'s business.

use std::borrow::Cow;

use serde_json::Value;

use crate::model::path::{At, Fields};
use crate::validate::schema::{
    self, Field, Ty, found_instead, go_reads_quantity, integer_fits, integer_range,
};

/// One field whose value has the wrong type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrongType {
    /// The dotted path of the field from the object's root, with list indices (`a.b[0].c`).
    pub field: String,
    /// What the field must be.
    pub expected: &'static str,
    /// What it is.
    pub found: Cow<'static, str>,
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

const QUANTITY: &str = "a quantity (a string like `2Gi`, or an integer)";

/// Whether `v` (not null) has type `ty` at its own level (the items of lists and the entries
/// of mappings are looked at by [`walk`]).
fn fits_here(v: &Value, ty: Ty) -> bool {
    match ty {
        Ty::Str => v.is_string(),
        Ty::Bool => v.is_boolean(),
        Ty::Int | Ty::Int32 | Ty::Uint | Ty::Uint32 => integer_fits(v, ty) == Some(true),
        Ty::IntOrString => v.is_string() || integer_fits(v, ty) == Some(true),
        Ty::Quantity => go_reads_quantity(v),
        Ty::Time => v.as_str().is_some_and(super::go_shape::go_reads_time),
        Ty::StrMap | Ty::QuantityMap | Ty::Struct(_) | Ty::Preserving(_) | Ty::OpaqueMap => {
            v.is_object()
        }
        Ty::List(_) => v.is_array(),
        Ty::Opaque => true,
    }
}

/// Check `v` against `ty`; `at` is where `v` sits. Nulls are accepted: Go reads them as unset.
/// Nothing is allocated unless a field is wrong.
fn walk(v: &Value, ty: Ty, at: &At<'_>, out: &mut Vec<WrongType>) {
    if v.is_null() {
        return;
    }
    let mut push = |at: &At<'_>, expected: &'static str, v: &Value, ty: Ty| {
        out.push(WrongType {
            field: at.path(),
            expected,
            found: found_instead(v, ty),
        });
    };
    if !fits_here(v, ty) {
        let expected = match (ty, v) {
            _ if integer_fits(v, ty) == Some(false) => integer_range(ty),
            (Ty::StrMap | Ty::QuantityMap, _) => "a mapping",
            (Ty::Quantity, _) => QUANTITY,
            _ => ty.describe(),
        };
        push(at, expected, v, ty);
        return;
    }
    match (ty, v) {
        (Ty::StrMap | Ty::QuantityMap, Value::Object(map)) => {
            for (key, item) in map {
                let ok = match ty {
                    Ty::StrMap => item.is_null() || item.is_string(),
                    _ => item.is_null() || go_reads_quantity(item),
                };
                if !ok {
                    let expected = if matches!(ty, Ty::StrMap) {
                        "a string"
                    } else {
                        QUANTITY
                    };
                    push(&At::Key(at, key), expected, item, ty);
                }
            }
        }
        (Ty::Struct(fields) | Ty::Preserving(fields), Value::Object(map)) => {
            for (key, child) in map {
                if let Some(f) = find_field(fields, key)
                    && needs_walk(child, f.1)
                {
                    walk(child, f.1, &At::Key(at, key), out);
                }
            }
        }
        (Ty::List(item), Value::Array(items)) => {
            for (i, child) in items.iter().enumerate() {
                if needs_walk(child, *item) {
                    walk(child, *item, &At::Index(at, i), out);
                }
            }
        }
        _ => {}
    }
}

/// Whether [`walk`] of `v` against `ty` could find anything: most fields are well-typed
/// scalars or opaque mappings, settled here without a call.
#[inline]
fn needs_walk(v: &Value, ty: Ty) -> bool {
    match ty {
        Ty::Struct(_) | Ty::Preserving(_) | Ty::List(_) | Ty::StrMap | Ty::QuantityMap => {
            !v.is_null()
        }
        _ => !v.is_null() && !fits_here(v, ty),
    }
}

/// The field named `key` among `fields`. Comparing the length and the first byte before the
/// whole name settles most candidates without a call to `memcmp`.
#[inline]
fn find_field<'f>(fields: &'f [Field], key: &str) -> Option<&'f Field> {
    let first = key.as_bytes().first();
    fields
        .iter()
        .find(|f| f.0.len() == key.len() && f.0.as_bytes().first() == first && f.0 == key)
}

fn wrong_types(v: &Value, ty: Ty, path: &str) -> Vec<WrongType> {
    let mut out = Vec::new();
    walk(v, ty, &At::Root(path), &mut out);
    out
}

/// The wrongly typed fields of a VirtualMachine: its matchers and the parts of its template
/// that instancetypes, preferences, presets and defaults read, list items included. The
/// object's and the template's metadata are included: Go decodes both as `ObjectMeta`.
pub fn virtual_machine(vm: &Value) -> Vec<WrongType> {
    object(vm, schema::VIRTUAL_MACHINE)
}

/// The wrongly typed fields of a VirtualMachineInstance: what [`virtual_machine`] checks of a
/// VM's template, at the VMI's own paths.
pub fn virtual_machine_instance(vmi: &Value) -> Vec<WrongType> {
    object(vmi, schema::VIRTUAL_MACHINE_INSTANCE)
}

/// The wrongly typed fields of a VirtualMachineInstancePreset: its selector and the domain it
/// copies into VMIs.
pub fn preset(preset: &Value) -> Vec<WrongType> {
    object(preset, schema::PRESET)
}

/// The wrongly typed fields of `obj`, of type `ty`. Nearly every object is well typed: a lean
/// pass says so, and only an object it finds wrong is walked again to name the fields.
fn object(obj: &Value, ty: Ty) -> Vec<WrongType> {
    if well_typed(obj, ty) {
        return Vec::new();
    }
    wrong_types(obj, ty, "")
}

/// Whether [`walk`] of `v` against `ty` finds nothing, found without keeping track of where
/// it is.
fn well_typed(v: &Value, ty: Ty) -> bool {
    if v.is_null() {
        return true;
    }
    if !fits_here(v, ty) {
        return false;
    }
    match (ty, v) {
        (Ty::StrMap, Value::Object(map)) => map.values().all(|i| i.is_null() || i.is_string()),
        (Ty::QuantityMap, Value::Object(map)) => {
            map.values().all(|i| i.is_null() || go_reads_quantity(i))
        }
        (Ty::Struct(fields) | Ty::Preserving(fields), Value::Object(map)) => {
            map.iter().all(|(key, child)| {
                find_field(fields, key)
                    .is_none_or(|f| !needs_walk(child, f.1) || well_typed(child, f.1))
            })
        }
        (Ty::List(item), Value::Array(items)) => items
            .iter()
            .all(|child| !needs_walk(child, *item) || well_typed(child, *item)),
        _ => true,
    }
}

/// The wrongly typed fields of the instancetype a ControllerRevision stores (its `data`).
pub fn instancetype_revision(data: &Value) -> Vec<WrongType> {
    revision_data(data, schema::INSTANCETYPE_SPEC)
}

/// The wrongly typed fields of the preference a ControllerRevision stores (its `data`).
pub fn preference_revision(data: &Value) -> Vec<WrongType> {
    revision_data(data, schema::PREFERENCE_SPEC)
}

/// `apiVersion` and `kind` are not looked at: reading them has already refused a wrong type.
fn revision_data(data: &Value, spec: &'static [Field]) -> Vec<WrongType> {
    let mut out = Vec::new();
    for (key, ty) in [
        ("metadata", Ty::Struct(schema::OBJECT_META)),
        ("spec", Ty::Struct(spec)),
    ] {
        if let Some(v) = data.field(key) {
            walk(v, ty, &At::Root(key), &mut out);
        }
    }
    out
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

    /// The paths of the fields `check` finds wrongly typed in `v`.
    fn fields(check: fn(&Value) -> Vec<WrongType>, v: &Value) -> Vec<String> {
        check(v).into_iter().map(|w| w.field).collect()
    }

    #[test]
    fn vm_fields_the_rules_read_are_checked() {
        let vm = json!({"spec": {"template": {"spec": {"domain": {
            "cpu": {"sockets": {"n": 1}},
            "memory": {"guest": ["1Gi"]},
            "devices": {"disks": [{"name": "a", "disk": {"bus": 5}}]}}}}}});
        assert_eq!(
            fields(virtual_machine, &vm),
            [
                "spec.template.spec.domain.cpu.sockets",
                "spec.template.spec.domain.memory.guest",
                "spec.template.spec.domain.devices.disks[0].disk.bus",
            ]
        );
    }

    #[test]
    fn every_list_the_rules_read_is_checked_item_by_item() {
        let vm = json!({"spec": {"template": {"spec": {
            "domain": {"devices": {
                "interfaces": [{"name": "a", "masquerade": {}, "ports": [{"port": "80"}]}],
                "inputs": [{"name": "t", "type": "tablet", "bus": 3}],
                "gpus": [{"name": "g", "deviceName": ["x"]}]},
                "cpu": {"features": [{"name": "vmx", "policy": true}]}},
            "networks": [{"name": "n", "multus": {"networkName": "x", "default": "yes"}}],
            "volumes": [{"name": 1, "containerDisk": {"image": 5}}]}}}});
        assert_eq!(
            fields(virtual_machine, &vm),
            [
                "spec.template.spec.domain.devices.interfaces[0].ports[0].port",
                "spec.template.spec.domain.devices.inputs[0].bus",
                "spec.template.spec.domain.devices.gpus[0].deviceName",
                "spec.template.spec.domain.cpu.features[0].policy",
                "spec.template.spec.networks[0].multus.default",
                "spec.template.spec.volumes[0].name",
                "spec.template.spec.volumes[0].containerDisk.image",
            ]
        );
    }

    #[test]
    fn vmis_and_presets_are_checked_at_their_own_paths() {
        let vmi = json!({"spec": {"domain": {"cpu": {"cores": "2"},
            "devices": {"interfaces": [{"name": "default", "bootOrder": "1"}]}},
            "networks": [{"name": 7}]}});
        assert_eq!(
            fields(virtual_machine_instance, &vmi),
            [
                "spec.domain.cpu.cores",
                "spec.domain.devices.interfaces[0].bootOrder",
                "spec.networks[0].name",
            ]
        );
        let preset = json!({"spec": {"selector": {"matchLabels": {"a": "b"}},
            "domain": {"memory": {"guest": true},
            "devices": {"inputs": [{"name": "tablet", "bus": 1}]}}}});
        assert_eq!(
            fields(super::preset, &preset),
            [
                "spec.domain.memory.guest",
                "spec.domain.devices.inputs[0].bus"
            ]
        );
        assert!(virtual_machine_instance(&json!({"spec": {"domain": {"devices": {}}}})).is_empty());
        assert!(super::preset(&json!({"spec": {"domain": {"cpu": {"cores": 2}}}})).is_empty());
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

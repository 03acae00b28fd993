//! Applying a preference to a VirtualMachine template, as KubeVirt's
//! `pkg/instancetype/preference/apply` does (`vmi.go` fixes the order of the steps).
//!
//! A preference only fills what the VM leaves unset, with two exceptions KubeVirt makes because
//! the VM fields are not pointers: `features.preferredAcpi` and `devices.preferredDisableHotplug`
//! replace the VM's value. "Unset" follows Go: a pointer field is unset when absent or null, a
//! string when absent, null or empty. CPU topology preferences are not handled here: they belong
//! to the instancetype step. Steps run in upstream order, except that the annotations (which
//! only touch `metadata`) come after launch security; the two are independent.

mod annotations;
mod architecture;
mod clock;
mod cpu;
mod devices;
mod disks;
mod features;
mod firmware;
mod interfaces;
mod launch_security;
mod machine;
mod subdomain;
mod termination;

pub use cpu::dereferences_missing_cpu;

use serde_json::{Map, Value};

use crate::model::path;
use crate::model::path::Fields;

/// Apply the preference `spec` to `template` (the VM's `spec.template`: `{metadata, spec}`) in
/// place, only where the VM is silent (with KubeVirt's few exceptions).
pub fn apply(preference: &Value, template: &mut Value) {
    let Some(tmpl) = template.as_object_mut() else {
        return;
    };
    if !preference.is_object() {
        return;
    }
    let mut spec = match tmpl.field_mut("spec") {
        Some(slot) => std::mem::take(slot),
        None => Value::Null,
    };
    let had_spec = !spec.is_null();
    if spec.is_null() {
        spec = Value::Object(Map::new());
    }
    if spec.is_object() {
        cpu::apply(preference, &mut spec);
        devices::apply(preference, &mut spec);
        features::apply(preference, &mut spec);
        firmware::apply(preference, &mut spec);
        machine::apply(preference, &mut spec);
        clock::apply(preference, &mut spec);
        subdomain::apply(preference, &mut spec);
        termination::apply(preference, &mut spec);
        architecture::apply(preference, &mut spec);
        launch_security::apply(preference, &mut spec);
    }
    let written = spec.as_object().is_none_or(|m| !m.is_empty());
    match tmpl.field_mut("spec") {
        Some(slot) if had_spec || written => *slot = spec,
        Some(slot) => *slot = Value::Null,
        None if written => {
            tmpl.insert("spec".to_string(), spec);
        }
        None => {}
    }
    annotations::apply(preference, template);
}

/// The value at `path` when it is set in Go's pointer sense (present and not null).
/// The preference's `autoattach*` flags alone, on the VMI spec `spec` (see
/// `devices::apply_autoattach`).
pub fn apply_autoattach(preference: &Value, spec: &mut Value) {
    if spec.is_object() {
        devices::apply_autoattach(preference, spec);
    }
}

fn present<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path::get(v, path).filter(|x| !x.is_null())
}

/// The string at `path` when it is a non-empty string (a set non-pointer Go string).
fn nonempty_str<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    path::str_at(v, path).filter(|s| !s.is_empty())
}

/// Whether a Go string field holds its zero value: absent, null or `""`. A value of another
/// type counts as set, so it is never overwritten.
fn str_unset(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(_) => false,
    }
}

/// Whether a Go pointer field is unset: absent or null.
fn ptr_unset(v: Option<&Value>) -> bool {
    v.is_none_or(Value::is_null)
}

/// A deep copy of a preference value as Go would write it back: null members (nil pointers)
/// are dropped.
fn copy(v: &Value) -> Value {
    copy_go(v, &[])
}

/// Like [`copy`], also dropping members named in `omit` (at any depth) that hold a zero scalar
/// (`false`, `""`, `0`): the non-pointer `omitempty` fields of the copied Go type, which Go
/// never writes when zero.
fn copy_go(v: &Value, omit: &[&str]) -> Value {
    if !drops_members(v, omit) {
        return v.clone();
    }
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, x)| {
                    let omitted = omit.contains(&k.as_str()) && is_zero_scalar(x);
                    !x.is_null() && !omitted
                })
                .map(|(k, x)| (k.clone(), copy_go(x, omit)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| copy_go(x, omit)).collect()),
        other => other.clone(),
    }
}

/// Whether [`copy_go`] leaves anything of `v` out (a null or omitted member at any depth).
fn drops_members(v: &Value, omit: &[&str]) -> bool {
    match v {
        Value::Object(m) => m.iter().any(|(k, x)| {
            x.is_null() || omit.contains(&k.as_str()) && is_zero_scalar(x) || drops_members(x, omit)
        }),
        Value::Array(a) => a.iter().any(|x| drops_members(x, omit)),
        _ => false,
    }
}

/// `false`, `""` or a numeric zero.
fn is_zero_scalar(v: &Value) -> bool {
    match v {
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        _ => false,
    }
}

/// Copy the preference value `pref` (when set) into `key` of the mapping at `parent` under
/// `target`, when that key is unset there. Parents are created as needed; a parent of the wrong
/// type is left alone.
fn fill_ptr(target: &mut Value, parent: &[&str], key: &str, pref: Option<&Value>) {
    fill_ptr_go(target, parent, key, pref, &[]);
}

/// [`fill_ptr`] for a value whose Go type has the non-pointer `omitempty` members `omit`
/// (see [`copy_go`]).
fn fill_ptr_go(
    target: &mut Value,
    parent: &[&str],
    key: &str,
    pref: Option<&Value>,
    omit: &[&str],
) {
    let Some(pref) = pref.filter(|p| !p.is_null()) else {
        return;
    };
    if !ptr_unset(path::get(target, parent).and_then(|m| m.field(key))) {
        return;
    }
    if let Some(map) = path::ensure_map(target, parent) {
        map.insert(key.to_string(), copy_go(pref, omit));
    }
}

/// [`fill_ptr_go`] on a mapping already at hand: copy the preference value `pref` (when set)
/// into `key` of `map` when that key is unset there.
fn fill_member_go(map: &mut Map<String, Value>, key: &str, pref: Option<&Value>, omit: &[&str]) {
    if let Some(pref) = pref.filter(|p| !p.is_null())
        && ptr_unset(map.field(key))
    {
        map.insert(key.to_string(), copy_go(pref, omit));
    }
}

/// Set the string `key` of the mapping at `parent` under `target` to the preference string
/// `pref`, when `pref` is non-empty and the key holds Go's zero string.
fn fill_str(target: &mut Value, parent: &[&str], key: &str, pref: Option<&str>) {
    let Some(pref) = pref.filter(|p| !p.is_empty()) else {
        return;
    };
    if !str_unset(path::get(target, parent).and_then(|m| m.field(key))) {
        return;
    }
    if let Some(map) = path::ensure_map(target, parent) {
        map.insert(key.to_string(), Value::String(pref.to_string()));
    }
}

/// Set the string `key` of `map` to `value` when `value` is given and the key holds Go's zero
/// string.
fn fill_key(map: &mut Map<String, Value>, key: &str, value: Option<&str>) {
    if let Some(value) = value.filter(|v| !v.is_empty())
        && str_unset(map.field(key))
    {
        map.insert(key.to_string(), Value::String(value.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn whole_preference_in_kubevirt_order() {
        let pref = json!({
            "cpu": {"preferredCPUFeatures": [{"name": "vmx"}]},
            "devices": {"preferredDiskBus": "virtio", "preferredInterfaceModel": "virtio"},
            "features": {"preferredSmm": {}},
            "firmware": {"preferredUseEfi": true},
            "machine": {"preferredMachineType": "pc-q35-rhel9"},
            "clock": {"preferredClockOffset": {"utc": {}}},
            "preferredSubdomain": "sub",
            "preferredTerminationGracePeriodSeconds": 30,
            "preferredArchitecture": "arm64",
            "annotations": {"a": "b"},
            "preferredLaunchSecurity": {"sev": {}}
        });
        let mut template = json!({
            "spec": {
                "domain": {
                    "cpu": {},
                    "devices": {
                        "disks": [{"name": "root"}],
                        "interfaces": [{"name": "default", "bridge": {}}]
                    }
                },
                "networks": [{"name": "default", "pod": {}}]
            }
        });
        apply(&pref, &mut template);
        assert_eq!(
            template,
            json!({
                "spec": {
                    "domain": {
                        "cpu": {"features": [{"name": "vmx"}]},
                        "devices": {
                            "disks": [{"name": "root", "disk": {"bus": "virtio"}}],
                            "interfaces": [{"name": "default", "bridge": {}, "model": "virtio"}]
                        },
                        "features": {"acpi": {}, "smm": {}},
                        "firmware": {"bootloader": {"efi": {}}},
                        "machine": {"type": "pc-q35-rhel9"},
                        "clock": {"utc": {}},
                        "launchSecurity": {"sev": {}}
                    },
                    "networks": [{"name": "default", "pod": {}}],
                    "subdomain": "sub",
                    "terminationGracePeriodSeconds": 30,
                    "architecture": "arm64"
                },
                "metadata": {"annotations": {"a": "b"}}
            })
        );
    }

    #[test]
    fn empty_preference_changes_nothing() {
        let original =
            json!({"metadata": {"labels": {"x": "y"}}, "spec": {"domain": {"devices": {}}}});
        let mut template = original.clone();
        apply(&json!({}), &mut template);
        assert_eq!(template, original);
    }

    #[test]
    fn template_without_spec_gets_one_only_when_written() {
        let mut template = json!({"metadata": {}});
        apply(&json!({"cpu": {}}), &mut template);
        assert_eq!(template, json!({"metadata": {}}));
        apply(&json!({"preferredSubdomain": "s"}), &mut template);
        assert_eq!(
            template,
            json!({"metadata": {}, "spec": {"subdomain": "s"}})
        );
    }

    #[test]
    fn wrong_types_are_skipped() {
        let mut template = json!({"spec": "nonsense"});
        apply(&json!({"preferredSubdomain": "s"}), &mut template);
        assert_eq!(template, json!({"spec": "nonsense"}));
        let mut template = json!([1]);
        apply(&json!({"preferredSubdomain": "s"}), &mut template);
        assert_eq!(template, json!([1]));
        let mut template = json!({"spec": {"domain": 3}});
        apply(
            &json!({"features": {}, "devices": {"preferredRng": {}}, "clock": {}}),
            &mut template,
        );
        assert_eq!(template, json!({"spec": {"domain": 3}}));
    }

    #[test]
    fn copy_go_drops_zero_non_pointer_members_only() {
        assert_eq!(
            copy_go(
                &json!({"hidden": false, "enabled": false, "vendorid": "", "x": {"vendorid": 0}}),
                &["hidden", "vendorid"]
            ),
            json!({"enabled": false, "x": {}})
        );
        assert_eq!(
            copy_go(&json!({"hidden": true}), &["hidden"]),
            json!({"hidden": true})
        );
    }

    #[test]
    fn copy_drops_nulls() {
        assert_eq!(
            copy(&json!({"a": null, "b": {"c": null, "d": 1}, "e": [{"f": null}]})),
            json!({"b": {"d": 1}, "e": [{}]})
        );
    }
}

//! Device preferences (mirrors `preference/apply/device.go`), applied only when the preference
//! has a `devices` block. Pointer fields (`useVirtioTransitional`, `blockMultiQueue`,
//! `networkInterfaceMultiqueue`, `rng`, `tpm`, the `autoattach*` flags) are filled when the VM
//! leaves them unset; `disableHotplug` is always replaced by `preferredDisableHotplug` (a `false`
//! preference removes the VM's `true`, as Go omits a false non-pointer bool). The sound model
//! only reaches an existing sound device; a preferred video type creates `video` when missing.
//! Then disks, interfaces, inputs and panic devices get their preferences, in that order.

use serde_json::{Map, Value};

use super::{copy, fill_key, fill_ptr, fill_str, nonempty_str, present, ptr_unset, str_unset};
use crate::model::path;
use crate::model::path::Fields;

const DEVICES: &[&str] = &["domain", "devices"];

/// Preference key and VM key of the pointer fields filled only when the VM leaves them unset,
/// in upstream order.
const POINTER_FIELDS: &[(&str, &str)] = &[
    ("preferredUseVirtioTransitional", "useVirtioTransitional"),
    ("preferredBlockMultiQueue", "blockMultiQueue"),
    (
        "preferredNetworkInterfaceMultiQueue",
        "networkInterfaceMultiqueue",
    ),
];

/// The `autoattach*` flags, in upstream order.
const AUTOATTACH_FIELDS: &[(&str, &str)] = &[
    (
        "preferredAutoattachGraphicsDevice",
        "autoattachGraphicsDevice",
    ),
    ("preferredAutoattachMemBalloon", "autoattachMemBalloon"),
    ("preferredAutoattachPodInterface", "autoattachPodInterface"),
    (
        "preferredAutoattachSerialConsole",
        "autoattachSerialConsole",
    ),
    ("preferredAutoattachInputDevice", "autoattachInputDevice"),
];

/// Apply the `devices` block of the preference.
pub(super) fn apply(preference: &Value, spec: &mut Value) {
    let Some(prefs) = present(preference, &["devices"]) else {
        return;
    };
    for (pref_key, key) in POINTER_FIELDS {
        fill_ptr(spec, DEVICES, key, prefs.field(pref_key));
    }
    disable_hotplug(prefs, spec);
    if let Some(model) = nonempty_str(prefs, &["preferredSoundModel"])
        && path::get(spec, &["domain", "devices", "sound"]).is_some_and(Value::is_object)
    {
        fill_str(spec, &["domain", "devices", "sound"], "model", Some(model));
    }
    fill_ptr(spec, DEVICES, "rng", prefs.field("preferredRng"));
    fill_ptr(spec, DEVICES, "tpm", prefs.field("preferredTPM"));
    video(prefs, spec);
    for (pref_key, key) in AUTOATTACH_FIELDS {
        fill_ptr(spec, DEVICES, key, prefs.field(pref_key));
    }
    super::disks::apply(prefs, spec);
    super::interfaces::apply(prefs, spec);
    inputs(prefs, spec);
    panic_devices(prefs, spec);
}

/// Only the `autoattach*` flags of the preference, filled where the VMI spec `spec` leaves them
/// unset: what KubeVirt's VM controller applies before it adds the default network interface
/// and input device (`ApplyAutoAttachPreferences`).
pub(super) fn apply_autoattach(preference: &Value, spec: &mut Value) {
    let Some(prefs) = present(preference, &["devices"]) else {
        return;
    };
    for (pref_key, key) in AUTOATTACH_FIELDS {
        fill_ptr(spec, DEVICES, key, prefs.field(pref_key));
    }
}

/// `preferredDisableHotplug` replaces the VM's value, whatever it is.
fn disable_hotplug(prefs: &Value, spec: &mut Value) {
    let Some(wanted) = prefs
        .field("preferredDisableHotplug")
        .and_then(Value::as_bool)
    else {
        return;
    };
    if wanted {
        path::set(
            spec,
            &["domain", "devices", "disableHotplug"],
            Value::Bool(true),
        );
    } else {
        path::remove(spec, &["domain", "devices", "disableHotplug"]);
    }
}

/// A set `preferredVideoType` creates `video` when missing and fills an empty `video.type`.
fn video(prefs: &Value, spec: &mut Value) {
    let Some(kind) = present(prefs, &["preferredVideoType"]) else {
        return;
    };
    let Some(video) = path::ensure_map(spec, &["domain", "devices", "video"]) else {
        return;
    };
    if let Some(kind) = kind.as_str().filter(|k| !k.is_empty())
        && str_unset(video.field("type"))
    {
        video.insert("type".to_string(), Value::String(kind.to_string()));
    }
}

/// Fill empty `bus` and `type` of every input device.
fn inputs(prefs: &Value, spec: &mut Value) {
    let bus = nonempty_str(prefs, &["preferredInputBus"]);
    let kind = nonempty_str(prefs, &["preferredInputType"]);
    let Some(inputs) =
        path::get_mut(spec, &["domain", "devices", "inputs"]).and_then(Value::as_array_mut)
    else {
        return;
    };
    for input in inputs.iter_mut().filter_map(Value::as_object_mut) {
        fill_key(input, "bus", bus);
        fill_key(input, "type", kind);
    }
}

/// A preferred panic device model creates one panic device when the VM has none, otherwise it
/// fills the model of every panic device without one.
fn panic_devices(prefs: &Value, spec: &mut Value) {
    let Some(model) = present(prefs, &["preferredPanicDeviceModel"]) else {
        return;
    };
    let Some(devices) = path::ensure_map(spec, DEVICES) else {
        return;
    };
    let entry = path::field_or_insert_with(devices, "panicDevices", || Value::Array(Vec::new()));
    if entry.is_null() {
        *entry = Value::Array(Vec::new());
    }
    let Some(list) = entry.as_array_mut() else {
        return;
    };
    if list.is_empty() {
        let mut device = Map::new();
        device.insert("model".to_string(), copy(model));
        list.push(Value::Object(device));
        return;
    }
    for device in list.iter_mut().filter_map(Value::as_object_mut) {
        if ptr_unset(device.field("model")) {
            device.insert("model".to_string(), copy(model));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn devices(s: &Value) -> &Value {
        path::get(s, &["domain", "devices"]).expect("devices")
    }

    #[test]
    fn no_devices_block_does_nothing() {
        let mut s = json!({"domain": {"devices": {"disks": [{"name": "a"}]}}});
        apply(&json!({}), &mut s);
        assert_eq!(
            s,
            json!({"domain": {"devices": {"disks": [{"name": "a"}]}}})
        );
    }

    #[test]
    fn pointer_fields_fill_only_unset() {
        let mut s = json!({"domain": {"devices": {
            "useVirtioTransitional": false,
            "blockMultiQueue": null,
            "rng": {},
            "autoattachGraphicsDevice": true
        }}});
        apply(
            &json!({"devices": {
                "preferredUseVirtioTransitional": true,
                "preferredBlockMultiQueue": false,
                "preferredNetworkInterfaceMultiQueue": true,
                "preferredRng": {},
                "preferredTPM": {"persistent": true},
                "preferredAutoattachGraphicsDevice": false,
                "preferredAutoattachMemBalloon": false,
                "preferredAutoattachPodInterface": false,
                "preferredAutoattachSerialConsole": true,
                "preferredAutoattachInputDevice": true
            }}),
            &mut s,
        );
        assert_eq!(
            devices(&s),
            &json!({
                "useVirtioTransitional": false,
                "blockMultiQueue": false,
                "rng": {},
                "autoattachGraphicsDevice": true,
                "networkInterfaceMultiqueue": true,
                "tpm": {"persistent": true},
                "autoattachMemBalloon": false,
                "autoattachPodInterface": false,
                "autoattachSerialConsole": true,
                "autoattachInputDevice": true
            })
        );
    }

    #[test]
    fn disable_hotplug_overrides_both_ways() {
        let mut s = json!({"domain": {"devices": {"disableHotplug": true}}});
        apply(
            &json!({"devices": {"preferredDisableHotplug": false}}),
            &mut s,
        );
        assert_eq!(devices(&s), &json!({}));
        apply(
            &json!({"devices": {"preferredDisableHotplug": true}}),
            &mut s,
        );
        assert_eq!(devices(&s), &json!({"disableHotplug": true}));
    }

    #[test]
    fn disable_hotplug_false_writes_nothing_when_absent() {
        let mut s = json!({"domain": {}});
        apply(
            &json!({"devices": {"preferredDisableHotplug": false}}),
            &mut s,
        );
        assert_eq!(s, json!({"domain": {}}));
    }

    #[test]
    fn sound_model_needs_a_sound_device() {
        let mut s = json!({"domain": {"devices": {}}});
        apply(&json!({"devices": {"preferredSoundModel": "ich9"}}), &mut s);
        assert_eq!(devices(&s), &json!({}));
        let mut s = json!({"domain": {"devices": {"sound": {"name": "snd"}}}});
        apply(&json!({"devices": {"preferredSoundModel": "ich9"}}), &mut s);
        assert_eq!(
            devices(&s),
            &json!({"sound": {"name": "snd", "model": "ich9"}})
        );
        let mut s = json!({"domain": {"devices": {"sound": {"name": "snd", "model": "ac97"}}}});
        apply(&json!({"devices": {"preferredSoundModel": "ich9"}}), &mut s);
        assert_eq!(
            devices(&s),
            &json!({"sound": {"name": "snd", "model": "ac97"}})
        );
    }

    #[test]
    fn video_type() {
        let mut s = json!({"domain": {"devices": {}}});
        apply(
            &json!({"devices": {"preferredVideoType": "virtio"}}),
            &mut s,
        );
        assert_eq!(devices(&s), &json!({"video": {"type": "virtio"}}));
        let mut s = json!({"domain": {"devices": {"video": {"type": "vga"}}}});
        apply(
            &json!({"devices": {"preferredVideoType": "virtio"}}),
            &mut s,
        );
        assert_eq!(devices(&s), &json!({"video": {"type": "vga"}}));
        let mut s = json!({"domain": {"devices": {}}});
        apply(&json!({"devices": {"preferredVideoType": ""}}), &mut s);
        assert_eq!(devices(&s), &json!({"video": {}}));
    }

    #[test]
    fn inputs_get_bus_and_type_where_empty() {
        let mut s = json!({"domain": {"devices": {"inputs": [
            {"name": "t1"},
            {"name": "t2", "bus": "usb", "type": "keyboard"}
        ]}}});
        apply(
            &json!({"devices": {"preferredInputBus": "virtio", "preferredInputType": "tablet"}}),
            &mut s,
        );
        assert_eq!(
            devices(&s),
            &json!({"inputs": [
                {"name": "t1", "bus": "virtio", "type": "tablet"},
                {"name": "t2", "bus": "usb", "type": "keyboard"}
            ]})
        );
        let mut s = json!({"domain": {"devices": {"inputs": [{"name": "t1"}]}}});
        apply(
            &json!({"devices": {"preferredInputType": "tablet"}}),
            &mut s,
        );
        assert_eq!(
            devices(&s),
            &json!({"inputs": [{"name": "t1", "type": "tablet"}]})
        );
    }

    #[test]
    fn panic_device_created_or_filled() {
        let mut s = json!({"domain": {"devices": {}}});
        apply(
            &json!({"devices": {"preferredPanicDeviceModel": "hyperv"}}),
            &mut s,
        );
        assert_eq!(devices(&s), &json!({"panicDevices": [{"model": "hyperv"}]}));
        let mut s = json!({"domain": {"devices": {"panicDevices": [{}, {"model": "isa"}]}}});
        apply(
            &json!({"devices": {"preferredPanicDeviceModel": "hyperv"}}),
            &mut s,
        );
        assert_eq!(
            devices(&s),
            &json!({"panicDevices": [{"model": "hyperv"}, {"model": "isa"}]})
        );
    }

    #[test]
    fn empty_devices_block_touches_nothing_but_default_disks() {
        let mut s = json!({"domain": {"devices": {"disks": [{"name": "a"}]}}});
        apply(&json!({"devices": {}}), &mut s);
        assert_eq!(devices(&s), &json!({"disks": [{"name": "a", "disk": {}}]}));
    }
}

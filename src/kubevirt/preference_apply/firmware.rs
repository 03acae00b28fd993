//! Firmware preferences (mirrors `preference/apply/firmware.go`). A `firmware` block in the
//! preference always gives the VM `firmware.bootloader` (possibly empty). Then, on a bootloader
//! with neither BIOS nor EFI: `preferredUseBios: true` picks BIOS, otherwise `preferredEfi` is
//! copied (and the deprecated EFI flags are then ignored), otherwise `preferredUseEfi: true`
//! picks EFI. `preferredUseBiosSerial` and `preferredUseSecureBoot` fill their field on a BIOS or
//! EFI bootloader that leaves it unset.

use serde_json::{Map, Value};

use super::{copy, present, ptr_unset};
use crate::model::path;
use crate::model::path::Fields;

/// Apply the `firmware` block of the preference.
pub(super) fn apply(preference: &Value, spec: &mut Value) {
    let Some(prefs) = present(preference, &["firmware"]) else {
        return;
    };
    let Some(boot) = path::ensure_map(spec, &["domain", "firmware", "bootloader"]) else {
        return;
    };
    let is_true = |key: &str| prefs.field(key).and_then(Value::as_bool) == Some(true);

    if is_true("preferredUseBios") && ptr_unset(boot.field("bios")) && ptr_unset(boot.field("efi"))
    {
        boot.insert("bios".to_string(), Value::Object(Map::new()));
    }
    if let Some(serial) = present(prefs, &["preferredUseBiosSerial"])
        && let Some(bios) = boot.field_mut("bios").and_then(Value::as_object_mut)
        && ptr_unset(bios.field("useSerial"))
    {
        bios.insert("useSerial".to_string(), serial.clone());
    }
    if ptr_unset(boot.field("efi"))
        && ptr_unset(boot.field("bios"))
        && let Some(efi) = present(prefs, &["preferredEfi"])
    {
        boot.insert("efi".to_string(), copy(efi));
        return;
    }
    if is_true("preferredUseEfi") && ptr_unset(boot.field("efi")) && ptr_unset(boot.field("bios")) {
        boot.insert("efi".to_string(), Value::Object(Map::new()));
    }
    if let Some(secure) = present(prefs, &["preferredUseSecureBoot"])
        && let Some(efi) = boot.field_mut("efi").and_then(Value::as_object_mut)
        && ptr_unset(efi.field("secureBoot"))
    {
        efi.insert("secureBoot".to_string(), secure.clone());
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn run(prefs: Value, firmware: Option<Value>) -> Value {
        let mut s = json!({"domain": {}});
        if let Some(f) = firmware {
            path::set(&mut s, &["domain", "firmware"], f);
        }
        apply(&json!({ "firmware": prefs }), &mut s);
        path::get(&s, &["domain", "firmware"])
            .cloned()
            .unwrap_or(Value::Null)
    }

    #[test]
    fn use_bios_false_leaves_empty_bootloader() {
        assert_eq!(
            run(json!({"preferredUseBios": false}), None),
            json!({"bootloader": {}})
        );
        assert_eq!(run(json!({}), None), json!({"bootloader": {}}));
    }

    #[test]
    fn no_block_no_firmware() {
        let mut s = json!({"domain": {}});
        apply(&json!({}), &mut s);
        assert_eq!(s, json!({"domain": {}}));
    }

    #[test]
    fn bios_with_serial() {
        assert_eq!(
            run(
                json!({"preferredUseBios": true, "preferredUseBiosSerial": false}),
                None
            ),
            json!({"bootloader": {"bios": {"useSerial": false}}})
        );
        assert_eq!(
            run(
                json!({"preferredUseBiosSerial": false}),
                Some(json!({"bootloader": {"bios": {"useSerial": true}}}))
            ),
            json!({"bootloader": {"bios": {"useSerial": true}}})
        );
    }

    #[test]
    fn deprecated_efi_and_secure_boot() {
        assert_eq!(
            run(
                json!({"preferredUseEfi": true, "preferredUseSecureBoot": true}),
                None
            ),
            json!({"bootloader": {"efi": {"secureBoot": true}}})
        );
    }

    #[test]
    fn preferred_efi_wins_over_deprecated_flags() {
        assert_eq!(
            run(
                json!({"preferredEfi": {"persistent": true}, "preferredUseEfi": true, "preferredUseSecureBoot": false}),
                None
            ),
            json!({"bootloader": {"efi": {"persistent": true}}})
        );
    }

    #[test]
    fn user_efi_kept_against_bios_and_preferred_efi() {
        assert_eq!(
            run(
                json!({"preferredUseBios": true, "preferredEfi": {"secureBoot": false}, "preferredUseSecureBoot": true}),
                Some(json!({"serial": "s", "bootloader": {"efi": {}}}))
            ),
            json!({"serial": "s", "bootloader": {"efi": {"secureBoot": true}}})
        );
    }

    #[test]
    fn bios_blocks_efi_preferences() {
        assert_eq!(
            run(
                json!({"preferredEfi": {}, "preferredUseEfi": true, "preferredUseSecureBoot": true}),
                Some(json!({"bootloader": {"bios": {}}}))
            ),
            json!({"bootloader": {"bios": {}}})
        );
    }
}

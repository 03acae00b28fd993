//! Feature preferences (mirrors `preference/apply/features.go`). A `features` block in the
//! preference always gives the VM a `domain.features`, and that always carries `acpi` (Go's
//! `Features.ACPI` is a non-pointer struct, so it is written as `acpi: {}` even when nobody
//! set it). `preferredAcpi` replaces the VM's `acpi`; `apic`, `kvm`, `pvspinlock`, `smm` and
//! each Hyper-V enlightenment are filled only where the VM leaves them unset.

use serde_json::{Map, Value};

use super::{copy, drops_members, fill_member_go, present};
use crate::model::path;
use crate::model::path::Fields;

const FEATURES: &[&str] = &["domain", "features"];

/// Preference key and VM key of the features filled only where unset, in upstream order
/// (Hyper-V sits between `apic` and `kvm`).
/// Each entry also names the non-pointer `omitempty` members of the Go type.
const BEFORE_HYPERV: &[(&str, &str, &[&str])] = &[("preferredApic", "apic", &["endOfInterrupt"])];
const AFTER_HYPERV: &[(&str, &str, &[&str])] = &[
    ("preferredKvm", "kvm", &["hidden"]),
    ("preferredPvspinlock", "pvspinlock", &[]),
    ("preferredSmm", "smm", &[]),
];

/// The Hyper-V enlightenments a preference can set, in upstream order.
const HYPERV_FIELDS: &[&str] = &[
    "evmcs",
    "frequencies",
    "ipi",
    "reenlightenment",
    "relaxed",
    "reset",
    "runtime",
    "spinlocks",
    "synic",
    "synictimer",
    "tlbflush",
    "vapic",
    "vpindex",
    "vendorid",
];

/// Apply the `features` block of the preference.
pub(super) fn apply(preference: &Value, spec: &mut Value) {
    let Some(prefs) = present(preference, &["features"]) else {
        return;
    };
    let Some(features) = path::ensure_map(spec, FEATURES) else {
        return;
    };
    match present(prefs, &["preferredAcpi"]) {
        Some(acpi) => {
            features.insert("acpi".to_string(), copy(acpi));
        }
        None => {
            let acpi = path::field_or_insert_with(features, "acpi", || Value::Object(Map::new()));
            if acpi.is_null() {
                *acpi = Value::Object(Map::new());
            }
        }
    }
    // Every step below works on this `features` mapping, found once.
    for (pref_key, key, omit) in BEFORE_HYPERV {
        fill_member_go(features, key, prefs.field(pref_key), omit);
    }
    if let Some(hyperv_prefs) = present(prefs, &["preferredHyperv"]) {
        let hyperv = path::field_or_insert_with(features, "hyperv", || Value::Object(Map::new()));
        if hyperv.is_null() {
            *hyperv = Value::Object(Map::new());
        }
        if let Some(hyperv) = hyperv.as_object_mut() {
            if hyperv.is_empty()
                && let Some(whole) = hyperv_copy(hyperv_prefs)
            {
                *hyperv = whole;
            } else {
                for key in HYPERV_FIELDS {
                    // Only the vendor id carries a non-pointer member (the id string itself).
                    fill_member_go(hyperv, key, hyperv_prefs.field(key), &["vendorid"]);
                }
            }
        }
    }
    for (pref_key, key, omit) in AFTER_HYPERV {
        fill_member_go(features, key, prefs.field(pref_key), omit);
    }
}

/// What filling each enlightenment of `prefs` into an empty `hyperv` gives, made as one copy of
/// the preference's mapping (a clone copies its hash table instead of hashing every key), when
/// that is the same: every member is a known enlightenment, none is null, nothing inside would
/// be dropped, and there is no `vendorid`, so that upstream order is alphabetical order.
fn hyperv_copy(prefs: &Value) -> Option<Map<String, Value>> {
    let members = prefs.as_object()?;
    let plain = members
        .iter()
        .all(|(k, v)| k != "vendorid" && HYPERV_FIELDS.contains(&k.as_str()) && !v.is_null())
        && !drops_members(prefs, &["vendorid"]);
    if !plain {
        return None;
    }
    let mut copy = members.clone();
    copy.sort_keys();
    Some(copy)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn features(s: &Value) -> &Value {
        path::get(s, FEATURES).expect("features")
    }

    #[test]
    fn hyperv_copied_whole_matches_member_by_member() {
        let sorted: Vec<&str> = HYPERV_FIELDS
            .iter()
            .copied()
            .filter(|k| *k != "vendorid")
            .collect();
        let mut alphabetical = sorted.clone();
        alphabetical.sort_unstable();
        assert_eq!(sorted, alphabetical, "upstream order is alphabetical");
        for prefs in [
            json!({"relaxed": {}, "vapic": {}, "spinlocks": {"spinlocks": 8191},
                   "synictimer": {"direct": {}}, "ipi": {}, "evmcs": {"enabled": false}}),
            json!({"relaxed": {}, "vendorid": {"vendorid": "kvm"}, "ipi": {}}),
            json!({"relaxed": null, "vapic": {}}),
            json!({"relaxed": {}, "bogus": {}}),
            json!({"vendorid": {"vendorid": ""}, "vapic": {}}),
        ] {
            let mut one_by_one = Map::new();
            for key in HYPERV_FIELDS {
                fill_member_go(&mut one_by_one, key, prefs.field(key), &["vendorid"]);
            }
            let mut whole = json!({"domain": {}});
            apply(&json!({"features": {"preferredHyperv": prefs}}), &mut whole);
            assert_eq!(
                serde_json::to_string(&features(&whole)["hyperv"]).unwrap(),
                serde_json::to_string(&Value::Object(one_by_one)).unwrap(),
                "{prefs}"
            );
        }
    }

    #[test]
    fn empty_block_creates_features_with_acpi() {
        let mut s = json!({"domain": {}});
        apply(&json!({"features": {}}), &mut s);
        assert_eq!(s, json!({"domain": {"features": {"acpi": {}}}}));
    }

    #[test]
    fn no_block_leaves_features_alone() {
        let mut s = json!({"domain": {"features": {"smm": {}}}});
        apply(&json!({}), &mut s);
        assert_eq!(features(&s), &json!({"smm": {}}));
    }

    #[test]
    fn acpi_preference_overrides_user() {
        let mut s = json!({"domain": {"features": {"acpi": {"enabled": false}}}});
        apply(
            &json!({"features": {"preferredAcpi": {"enabled": true}}}),
            &mut s,
        );
        assert_eq!(features(&s), &json!({"acpi": {"enabled": true}}));
        apply(&json!({"features": {"preferredAcpi": {}}}), &mut s);
        assert_eq!(features(&s), &json!({"acpi": {}}));
    }

    #[test]
    fn user_features_kept_and_acpi_emitted() {
        let mut s = json!({"domain": {"features": {
            "apic": {"enabled": false},
            "kvm": {"hidden": true},
            "smm": {"enabled": false}
        }}});
        apply(
            &json!({"features": {
                "preferredApic": {"enabled": true, "endOfInterrupt": true},
                "preferredKvm": {"hidden": false},
                "preferredSmm": {},
                "preferredPvspinlock": {"enabled": false}
            }}),
            &mut s,
        );
        assert_eq!(
            features(&s),
            &json!({
                "apic": {"enabled": false},
                "kvm": {"hidden": true},
                "smm": {"enabled": false},
                "acpi": {},
                "pvspinlock": {"enabled": false}
            })
        );
    }

    #[test]
    fn hyperv_fields_merge_one_by_one() {
        let mut s = json!({"domain": {"features": {"hyperv": {"relaxed": {"enabled": false}}}}});
        apply(
            &json!({"features": {"preferredHyperv": {
                "relaxed": {},
                "vapic": {},
                "spinlocks": {"spinlocks": 8191},
                "vendorid": {"vendorid": "kv"}
            }}}),
            &mut s,
        );
        assert_eq!(
            features(&s),
            &json!({
                "hyperv": {
                    "relaxed": {"enabled": false},
                    "spinlocks": {"spinlocks": 8191},
                    "vapic": {},
                    "vendorid": {"vendorid": "kv"}
                },
                "acpi": {}
            })
        );
    }

    #[test]
    fn go_omitted_zero_members_not_copied() {
        let mut s = json!({"domain": {}});
        apply(
            &json!({"features": {
                "preferredKvm": {"hidden": false},
                "preferredApic": {"enabled": false, "endOfInterrupt": false},
                "preferredHyperv": {"vendorid": {"enabled": false, "vendorid": ""}}
            }}),
            &mut s,
        );
        assert_eq!(
            features(&s),
            &json!({
                "acpi": {},
                "apic": {"enabled": false},
                "hyperv": {"vendorid": {"enabled": false}},
                "kvm": {}
            })
        );
    }

    #[test]
    fn empty_hyperv_preference_creates_empty_hyperv() {
        let mut s = json!({"domain": {}});
        apply(&json!({"features": {"preferredHyperv": {}}}), &mut s);
        assert_eq!(features(&s), &json!({"acpi": {}, "hyperv": {}}));
    }
}

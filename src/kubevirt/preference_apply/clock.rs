//! Clock preferences (mirrors `preference/apply/clock.go`). A `clock` block in the preference
//! always gives the VM a `domain.clock` (possibly empty). The preferred offset (`utc` or
//! `timezone`) is used only when the VM sets neither, so offsets are never mixed; the preferred
//! timer only when the VM has none.

use serde_json::Value;

use super::{copy, fill_ptr_go, present, ptr_unset};
use crate::model::path;
use crate::model::path::Fields;

/// Apply `clock.preferredClockOffset` and `clock.preferredTimer`.
pub(super) fn apply(preference: &Value, spec: &mut Value) {
    let Some(clock) = present(preference, &["clock"]) else {
        return;
    };
    let Some(target) = path::ensure_map(spec, &["domain", "clock"]) else {
        return;
    };
    if let Some(offset) = present(clock, &["preferredClockOffset"])
        && ptr_unset(target.field("utc"))
        && ptr_unset(target.field("timezone"))
    {
        for key in ["utc", "timezone"] {
            if let Some(v) = present(offset, &[key]) {
                target.insert(key.to_string(), copy(v));
            }
        }
    }
    fill_ptr_go(
        spec,
        &["domain", "clock"],
        "timer",
        clock.field("preferredTimer"),
        &["tickPolicy", "track"],
    );
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn empty_block_creates_empty_clock() {
        let mut s = json!({"domain": {}});
        apply(&json!({"clock": {}}), &mut s);
        assert_eq!(s, json!({"domain": {"clock": {}}}));
    }

    #[test]
    fn no_block_no_clock() {
        let mut s = json!({"domain": {}});
        apply(&json!({"clock": null}), &mut s);
        assert_eq!(s, json!({"domain": {}}));
    }

    #[test]
    fn offset_and_timer_fill_empty_clock() {
        let mut s = json!({"domain": {"clock": null}});
        apply(
            &json!({"clock": {
                "preferredClockOffset": {"timezone": "Europe/Paris"},
                "preferredTimer": {"hpet": {"present": false}}
            }}),
            &mut s,
        );
        assert_eq!(
            s,
            json!({"domain": {"clock": {"timezone": "Europe/Paris", "timer": {"hpet": {"present": false}}}}})
        );
    }

    #[test]
    fn user_offset_blocks_any_preferred_offset() {
        let mut s = json!({"domain": {"clock": {"utc": {"offsetSeconds": 5}, "timer": {}}}});
        apply(
            &json!({"clock": {
                "preferredClockOffset": {"timezone": "UTC"},
                "preferredTimer": {"rtc": {}}
            }}),
            &mut s,
        );
        assert_eq!(
            s,
            json!({"domain": {"clock": {"utc": {"offsetSeconds": 5}, "timer": {}}}})
        );
        let mut s = json!({"domain": {"clock": {"timezone": "X"}}});
        apply(
            &json!({"clock": {"preferredClockOffset": {"utc": {}}}}),
            &mut s,
        );
        assert_eq!(s, json!({"domain": {"clock": {"timezone": "X"}}}));
    }
}

//! The spread check of the VM webhook (`CheckSpreadCPUTopology` in
//! `pkg/instancetype/preference/validation/cpu.go`): with an instancetype and a spread topology,
//! the instancetype's guest vCPUs must split evenly over the preference's axes.

use serde_json::Value;

use super::{Cause, Reason, topology, uint32_at};

/// The field KubeVirt names in a spread failure.
pub const FIELD: &str = "instancetype.spec.cpu.guest";

/// Check the instancetype `spec` against the preference `spec`.
pub fn check(instancetype: Option<&Value>, preference: Option<&Value>) -> Option<Cause> {
    let instancetype = instancetype?;
    let preference = preference?;
    if !topology::is_spread(topology::preferred(Some(preference))) {
        return None;
    }
    let guest = uint32_at(Some(instancetype), &["cpu", "guest"]);
    let (ratio, across) = topology::spread_options(preference);
    let cause = |message: String| Cause {
        reason: Reason::Spread,
        field: FIELD.into(),
        message,
    };
    // Go's `%` by a zero ratio panics: the webhook call fails and the VM is refused. We say so
    // instead. `None` is that failure, `Some(false)` a remainder.
    let divides = |n: u32| n.checked_rem(ratio).map(|r| r == 0);
    let judge = |divides: Option<bool>, message: &dyn Fn() -> String| match divides {
        None => Some(cause(
            "the preference's spread ratio is 0: KubeVirt's webhook fails on it".into(),
        )),
        Some(false) => Some(cause(message())),
        Some(true) => None,
    };
    match across.as_str() {
        "SocketsCores" => judge(divides(guest), &|| {
            format!(
                "{guest} vCPUs provided by the instance type are not divisible by the \
                 Spec.PreferSpreadSocketToCoreRatio or Spec.CPU.PreferSpreadOptions.Ratio of \
                 {ratio} provided by the preference"
            )
        }),
        "CoresThreads" => judge(divides(guest), &|| {
            format!(
                "{guest} vCPUs provided by the instance type are not divisible by the number of \
                 threads per core {ratio}"
            )
        }),
        // An odd guest fails before Go divides by the ratio.
        "SocketsCoresThreads" => judge(
            if guest.is_multiple_of(2) {
                divides(guest / 2)
            } else {
                Some(false)
            },
            &|| {
                format!(
                    "{guest} vCPUs provided by the instance type are not divisible by the number of \
                     threads per core 2 and Spec.PreferSpreadSocketToCoreRatio or \
                     Spec.CPU.PreferSpreadOptions.Ratio of {ratio}"
                )
            },
        ),
        _ => None,
    }
}

const SPREADS: [&str; 3] = ["SocketsCores", "CoresThreads", "SocketsCoresThreads"];

/// Whether expanding a VM with the instancetype `spec` and the preference `spec` divides by a
/// spread ratio of 0, as KubeVirt's expansion does (and fails): a spread topology, a ratio of
/// 0, and any vCPU count but 1 (a single vCPU is laid out before any division; Go's integer
/// division by zero fails for 0 vCPUs too).
pub fn expansion_divides_by_zero(instancetype: &Value, preference: Option<&Value>) -> bool {
    let Some(preference) = preference else {
        return false;
    };
    if !topology::is_spread(topology::preferred(Some(preference))) {
        return false;
    }
    let (ratio, across) = topology::spread_options(preference);
    ratio == 0
        && SPREADS.contains(&across.as_str())
        && uint32_at(Some(instancetype), &["cpu", "guest"]) != 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn expansion_divides_by_a_zero_ratio_unless_one_vcpu() {
        let pref =
            json!({"cpu": {"preferredCPUTopology": "spread", "spreadOptions": {"ratio": 0}}});
        for (guest, divides) in [(0, true), (1, false), (2, true), (3, true)] {
            let it = json!({"cpu": {"guest": guest}});
            assert_eq!(
                expansion_divides_by_zero(&it, Some(&pref)),
                divides,
                "{guest}"
            );
        }
        let ratio_two = json!({"cpu": {"preferredCPUTopology": "spread"}});
        assert!(!expansion_divides_by_zero(
            &json!({"cpu": {"guest": 0}}),
            Some(&ratio_two)
        ));
    }

    #[test]
    fn guest_must_divide_by_ratio() {
        let it = json!({"cpu": {"guest": 3}});
        let pref = json!({"cpu": {"preferredCPUTopology": "spread"}});
        let c = check(Some(&it), Some(&pref)).unwrap();
        assert_eq!(c.field, FIELD);
        assert!(c.message.starts_with("3 vCPUs"));
        assert!(check(Some(&json!({"cpu": {"guest": 4}})), Some(&pref)).is_none());
    }

    #[test]
    fn sockets_cores_threads_needs_even_guest() {
        let pref = json!({"cpu": {"preferredCPUTopology": "preferSpread",
                                  "spreadOptions": {"across": "SocketsCoresThreads"}}});
        assert!(check(Some(&json!({"cpu": {"guest": 6}})), Some(&pref)).is_some());
        assert!(check(Some(&json!({"cpu": {"guest": 8}})), Some(&pref)).is_none());
    }

    #[test]
    fn zero_ratio_fails_the_webhook_unless_an_odd_guest_fails_first() {
        let pref = |across: &str| {
            json!({"cpu": {"preferredCPUTopology": "spread",
                           "spreadOptions": {"ratio": 0, "across": across}}})
        };
        let it = |guest: u32| json!({"cpu": {"guest": guest}});
        let message = |guest, across| {
            check(Some(&it(guest)), Some(&pref(across)))
                .unwrap()
                .message
        };
        assert_eq!(
            message(3, "SocketsCoresThreads"),
            "3 vCPUs provided by the instance type are not divisible by the number of threads \
             per core 2 and Spec.PreferSpreadSocketToCoreRatio or \
             Spec.CPU.PreferSpreadOptions.Ratio of 0"
        );
        for (guest, across) in [
            (4, "SocketsCoresThreads"),
            (3, "SocketsCores"),
            (3, "CoresThreads"),
        ] {
            assert!(
                message(guest, across).contains("ratio is 0"),
                "{guest} {across}"
            );
        }
    }

    #[test]
    fn no_instancetype_no_check() {
        let pref = json!({"cpu": {"preferredCPUTopology": "spread"}});
        assert!(check(None, Some(&pref)).is_none());
    }
}

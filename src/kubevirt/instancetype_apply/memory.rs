//! The instancetype's memory (mirrors KubeVirt's `pkg/instancetype/apply/memory.go`).
//!
//! Only the first memory conflict is reported, checked in the order guest, hugepages, maxGuest,
//! memory request, memory limit. Without a conflict the guest size (and hugepages and maxGuest
//! when the instancetype has them) is copied, and an overcommit percentage lowers the memory
//! request below the guest size using KubeVirt's single-precision arithmetic.

use serde_json::Value;

use super::domain_map;
use crate::kubevirt::conflict::Conflict;
use crate::model::path;
use crate::model::path::Fields;
use crate::model::quantity::Quantity;

/// Check the VM against the instancetype's memory, then copy it.
pub(super) fn apply(instancetype: &Value, spec: &mut Value) -> Option<Conflict> {
    if let Some(c) = validate(instancetype, spec) {
        return Some(c);
    }
    let it_mem = instancetype.field("memory");
    let owned = |key: &str| it_mem.and_then(|m| m.field(key)).filter(|v| !v.is_null());
    // The guest size is a required non-pointer quantity: absent means zero.
    let guest = owned("guest").map_or_else(|| Value::from("0"), canonical);
    let overcommit = owned("overcommitPercent")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if overcommit > 0 {
        // From the quantity as written: Go keeps the one it read, and the canonical text read
        // again is not always the same amount in Go's arithmetic (`-8Ei` is capped at
        // -(2^63 - 1), whose decimal text Go's `Value()` reads as 1).
        let written = owned("guest").unwrap_or(&guest);
        let request = overcommitted_request(written, overcommit);
        if let Some(requests) = domain_map(spec, &["resources", "requests"]) {
            requests.insert("memory".to_string(), Value::from(request));
        }
    }
    let memory = domain_map(spec, &["memory"])?;
    memory.insert("guest".to_string(), guest);
    if let Some(hugepages) = owned("hugepages") {
        memory.insert("hugepages".to_string(), super::go_copy(hugepages));
    }
    if let Some(max_guest) = owned("maxGuest") {
        memory.insert("maxGuest".to_string(), canonical(max_guest));
    }
    None
}

fn validate(instancetype: &Value, spec: &Value) -> Option<Conflict> {
    let it_has = |key: &str| path::is_set(instancetype, &["memory", key]);
    let vm_has = |key: &str| path::is_set(spec, &["domain", "memory", key]);
    if vm_has("guest") {
        return Some(Conflict::spec("domain.memory.guest"));
    }
    if vm_has("hugepages") && it_has("hugepages") {
        return Some(Conflict::spec("domain.memory.hugepages"));
    }
    if vm_has("maxGuest") && it_has("maxGuest") {
        return Some(Conflict::spec("domain.memory.maxGuest"));
    }
    for list in ["requests", "limits"] {
        let has_memory = path::get(spec, &["domain", "resources", list])
            .and_then(Value::as_object)
            .is_some_and(|m| m.contains_key("memory"));
        if has_memory {
            return Some(Conflict::spec(&format!("domain.resources.{list}.memory")));
        }
    }
    None
}

/// A quantity in canonical form; a value that does not parse is kept as written.
fn canonical(v: &Value) -> Value {
    if v.as_str().is_some_and(canonical_binary) {
        return v.clone();
    }
    Quantity::from_json(v).map_or_else(|| v.clone(), |q| q.to_json())
}

/// Whether `s` is a binary-SI quantity already in canonical form, as instancetypes write their
/// memory (`4Gi`, `512Mi`): a whole number without leading zeros that a larger suffix could
/// not express (not a multiple of 1024), and a suffix below `Ei`.
fn canonical_binary(s: &str) -> bool {
    let Some(digits) = ["Ki", "Mi", "Gi", "Ti", "Pi"]
        .iter()
        .find_map(|suffix| s.strip_suffix(suffix))
    else {
        return false;
    };
    if digits.is_empty()
        || digits.len() > 15
        || digits.starts_with('0')
        || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return false;
    }
    digits.parse::<u64>().is_ok_and(|n| n % 1024 != 0)
}

/// The memory request KubeVirt derives from a guest size and an overcommit percentage, in
/// canonical form: the guest's bytes (rounded up) times `1 - percent/100`, every step in `f32`,
/// truncated to an integer and printed in the guest quantity's format.
pub fn overcommitted_request(guest: &Value, percent: i64) -> String {
    let Some(guest) = Quantity::from_json(guest) else {
        return "0".to_string();
    };
    let bytes = guest.value() as f32;
    let keep = 1.0f32 - (percent as f32) / 100.0f32;
    let request = go_f32_to_i64(bytes * keep);
    Quantity::new(request, guest.format()).to_string()
}

/// Go's `int64(x)` of a `float32` on amd64, where KubeVirt's webhooks run: the value truncated
/// toward zero, and -2^63 when it does not fit (a huge product, or NaN) where Rust's `as`
/// would saturate.
fn go_f32_to_i64(x: f32) -> i64 {
    // 2^63 is exact in f32; every f32 below it in magnitude truncates to a fitting integer.
    const LIMIT: f32 = 9_223_372_036_854_775_808.0;
    if x.is_nan() || !(-LIMIT..LIMIT).contains(&x) {
        i64::MIN
    } else {
        x as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(it: Value, spec: Value) -> (Option<String>, Value) {
        let mut spec = spec;
        let c = apply(&it, &mut spec);
        (c.map(|c| c.path), spec)
    }

    #[test]
    fn copies_guest_canonical() {
        let (c, spec) = run(json!({"memory": {"guest": "1024Mi"}}), json!({}));
        assert!(c.is_none());
        assert_eq!(spec, json!({"domain": {"memory": {"guest": "1Gi"}}}));
    }

    #[test]
    fn copies_hugepages_and_max_guest() {
        let it = json!({"memory": {"guest": "2Gi", "hugepages": {"pageSize": "1Gi"}, "maxGuest": "4096Mi"}});
        let (c, spec) = run(it, json!({"domain": {"memory": {}}}));
        assert!(c.is_none());
        assert_eq!(
            spec["domain"]["memory"],
            json!({"guest": "2Gi", "hugepages": {"pageSize": "1Gi"}, "maxGuest": "4Gi"})
        );
    }

    #[test]
    fn only_first_conflict_is_reported() {
        let it = json!({"memory": {"guest": "1Gi", "hugepages": {"pageSize": "2Mi"}}});
        let spec = json!({"domain": {
            "memory": {"hugepages": {"pageSize": "2Mi"}},
            "resources": {"requests": {"memory": "1Gi"}},
        }});
        let (c, _) = run(it.clone(), spec);
        assert_eq!(
            c.as_deref(),
            Some("spec.template.spec.domain.memory.hugepages")
        );
        let spec = json!({"domain": {"resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "1Gi"}}}});
        let (c, _) = run(it.clone(), spec);
        assert_eq!(
            c.as_deref(),
            Some("spec.template.spec.domain.resources.requests.memory")
        );
        let spec = json!({"domain": {"memory": {"guest": "1Gi"}, "resources": {"limits": {"memory": "1Gi"}}}});
        let (c, _) = run(it, spec);
        assert_eq!(c.as_deref(), Some("spec.template.spec.domain.memory.guest"));
    }

    #[test]
    fn vm_hugepages_without_instancetype_hugepages_is_kept() {
        let (c, spec) = run(
            json!({"memory": {"guest": "1Gi"}}),
            json!({"domain": {"memory": {"hugepages": {"pageSize": "2Mi"}, "maxGuest": "2Gi"}}}),
        );
        assert!(c.is_none());
        assert_eq!(
            spec["domain"]["memory"],
            json!({"hugepages": {"pageSize": "2Mi"}, "maxGuest": "2Gi", "guest": "1Gi"})
        );
    }

    #[test]
    fn overcommit_starts_from_the_guest_as_written() {
        // The guest is capped at -(2^63 - 1) and copied as that decimal text; the request is
        // worked out from the quantity Go read, in the guest's binary format.
        let it = json!({"memory": {"guest": "-8Ei", "overcommitPercent": 50}});
        let (c, spec) = run(it, json!({}));
        assert!(c.is_none());
        assert_eq!(
            spec["domain"]["memory"]["guest"],
            json!("-9223372036854775807")
        );
        assert_eq!(
            spec["domain"]["resources"]["requests"]["memory"],
            json!("-4Ei")
        );
    }

    #[test]
    fn overcommit_uses_single_precision() {
        assert_eq!(overcommitted_request(&json!("128Mi"), 80), "26843544");
        // Out of range for int64: Go on amd64 gives -2^63, not a saturated value.
        assert_eq!(
            overcommitted_request(&json!("-8Ei"), 2_147_483_648),
            "-9223372036854775808"
        );
        assert_eq!(
            overcommitted_request(&json!("8Ei"), 2_147_483_648),
            "-9223372036854775808"
        );
        assert_eq!(overcommitted_request(&json!("-8Ei"), 50), "-4Ei");
        assert_eq!(overcommitted_request(&json!("1G"), 1), "990M");
        assert_eq!(overcommitted_request(&json!("1Gi"), 100), "0");
        // A pebibyte guest is held as a big decimal; its size in bytes is still exact.
        assert_eq!(overcommitted_request(&json!("1Pi"), 50), "512Ti");
        assert_eq!(overcommitted_request(&json!("2Gi"), 50), "1Gi");
        assert_eq!(overcommitted_request(&json!("4G"), 50), "2G");
    }

    #[test]
    fn overcommit_writes_request() {
        let (c, spec) = run(
            json!({"memory": {"guest": "2Gi", "overcommitPercent": 50}}),
            json!({"domain": {"resources": {"requests": {"cpu": "1"}}}}),
        );
        assert!(c.is_none());
        assert_eq!(
            spec["domain"]["resources"]["requests"],
            json!({"cpu": "1", "memory": "1Gi"})
        );
    }

    #[test]
    fn missing_guest_is_zero() {
        let (c, spec) = run(json!({}), json!({}));
        assert!(c.is_none());
        assert_eq!(spec["domain"]["memory"]["guest"], json!("0"));
    }

    #[test]
    fn canonical_binary_quantities_are_kept_as_the_parser_would_print_them() {
        for s in [
            "4Gi",
            "512Mi",
            "1Ki",
            "1023Pi",
            "1024Mi",
            "2048Gi",
            "0Gi",
            "01Gi",
            "1.5Gi",
            "1Ei",
            "1024Ei",
            "4G",
            "4gi",
            "Gi",
            "123456789012345Ki",
            "1e3Gi",
            "+4Gi",
        ] {
            let v = Value::from(s);
            let slow = Quantity::from_json(&v).map_or_else(|| v.clone(), |q| q.to_json());
            assert_eq!(canonical(&v), slow, "{s}");
            if canonical_binary(s) {
                assert_eq!(slow, v, "{s} is not canonical");
            }
        }
    }
}

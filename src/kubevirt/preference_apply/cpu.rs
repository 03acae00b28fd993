//! CPU preferences (mirrors `preference/apply/cpu.go`). Only `preferredCPUFeatures` is applied
//! here: each preferred feature is appended to `domain.cpu.features` unless the VM already lists
//! a feature of that name. Topology preferences are used by the instancetype step.
//!
//! KubeVirt reads `domain.cpu` without a nil check: when the VM has none and no instancetype
//! created it, its preference step fails on a nil dereference. Expansion and admission refuse
//! that case before this step runs ([`dereferences_missing_cpu`]); `apply` itself creates a
//! missing `cpu`.

use serde_json::Value;

use crate::model::path;
use crate::model::path::Fields;

/// Whether KubeVirt's preference step would read the `domain.cpu` of `template` (a VM's
/// `spec.template`) and find none: the preference prefers CPU features, and the template has
/// no `cpu` (which only an instancetype, applied first, would have created).
pub fn dereferences_missing_cpu(preference: &Value, template: &Value) -> bool {
    path::get(preference, &["cpu", "preferredCPUFeatures"])
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
        && path::get(template, &["spec", "domain", "cpu"]).is_none_or(Value::is_null)
}

/// Append the preferred CPU features the VM does not name.
pub(super) fn apply(preference: &Value, spec: &mut Value) {
    let Some(preferred) = path::get(preference, &["cpu", "preferredCPUFeatures"])
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
    else {
        return;
    };
    let Some(cpu) = path::ensure_map(spec, &["domain", "cpu"]) else {
        return;
    };
    let features = path::field_or_insert_with(cpu, "features", || Value::Array(Vec::new()));
    if features.is_null() {
        *features = Value::Array(Vec::new());
    }
    let Some(features) = features.as_array_mut() else {
        return;
    };
    // Only names the VM itself gave count: duplicates within the preference are all appended,
    // as upstream does.
    let user_names: Vec<String> = features
        .iter()
        .map(|f| feature_name(f).to_string())
        .collect();
    for feature in preferred {
        if !user_names.iter().any(|n| n == feature_name(feature)) {
            features.push(super::copy_go(feature, &["policy"]));
        }
    }
}

/// The `name` of a CPU feature entry (Go's zero string when absent).
fn feature_name(feature: &Value) -> &str {
    feature.field("name").and_then(Value::as_str).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn appends_features_not_named_by_user() {
        let mut s = json!({"domain": {"cpu": {"cores": 2, "features": [{"name": "vmx", "policy": "forbid"}]}}});
        apply(
            &json!({"cpu": {"preferredCPUFeatures": [
                {"name": "vmx", "policy": "require"},
                {"name": "pdpe1gb", "policy": "optional"}
            ]}}),
            &mut s,
        );
        assert_eq!(
            s,
            json!({"domain": {"cpu": {"cores": 2, "features": [
                {"name": "vmx", "policy": "forbid"},
                {"name": "pdpe1gb", "policy": "optional"}
            ]}}})
        );
    }

    #[test]
    fn empty_cpu_gets_features() {
        let mut s = json!({"domain": {"cpu": {}}});
        apply(
            &json!({"cpu": {"preferredCPUFeatures": [{"name": "a"}]}}),
            &mut s,
        );
        assert_eq!(s, json!({"domain": {"cpu": {"features": [{"name": "a"}]}}}));
    }

    #[test]
    fn missing_cpu_is_created() {
        let mut s = json!({"domain": {}});
        apply(
            &json!({"cpu": {"preferredCPUFeatures": [{"name": "a"}]}}),
            &mut s,
        );
        assert_eq!(s, json!({"domain": {"cpu": {"features": [{"name": "a"}]}}}));
    }

    #[test]
    fn duplicate_preferred_names_are_all_appended() {
        let mut s = json!({"domain": {"cpu": {}}});
        apply(
            &json!({"cpu": {"preferredCPUFeatures": [{"name": "a"}, {"name": "a", "policy": "x"}]}}),
            &mut s,
        );
        assert_eq!(
            s,
            json!({"domain": {"cpu": {"features": [{"name": "a"}, {"name": "a", "policy": "x"}]}}})
        );
    }

    #[test]
    fn no_features_or_topology_only_changes_nothing() {
        let mut s = json!({"domain": {}});
        apply(&json!({"cpu": {"preferredCPUTopology": "cores"}}), &mut s);
        apply(&json!({"cpu": {"preferredCPUFeatures": []}}), &mut s);
        assert_eq!(s, json!({"domain": {}}));
    }
}

//! The part of `KV034` that judges a VirtualMachineInstance's Hyper-V features, which only the
//! VMI webhook checks (a VM's are judged when it starts): the features each one needs are not
//! turned off, Hyper-V passthrough is not combined with single features, and enlightened VMCS
//! comes with the `vmx` CPU feature required.
//!
//! Mirrors `ValidateVirtualMachineInstanceHyperv` of KubeVirt d923fdb815, after the VMI
//! defaults turn on the features a spec lists without a state and the requirements it leaves
//! unset (as `vmi` prints them). KubeVirt
//! repeats `domain.features.hyperv` in the paths of unmet requirements; the findings name each
//! feature once.

use serde_json::{Map, Value};

use crate::kubevirt::vmi_defaults;
use crate::model::path;

type Found = Vec<(String, String)>;

/// Each feature and the one it needs, in KubeVirt's order.
const NEEDS: [(&str, &str); 5] = [
    ("evmcs", "vapic"),
    ("ipi", "vpindex"),
    ("tlbflush", "vpindex"),
    ("synictimer", "synic"),
    ("synic", "vpindex"),
];

/// Whether a feature's `enabled` is `true` (an absent one is not).
fn enabled(hyperv: &Value, feature: &str) -> bool {
    path::get(hyperv, &[feature, "enabled"]) == Some(&Value::Bool(true))
}

/// The Hyper-V checks on the VMI spec at `at`.
pub(super) fn check(spec: &Value, at: &str, found: &mut Found) {
    let Some(features @ Value::Object(_)) = path::get(spec, &["domain", "features"]) else {
        return;
    };
    let Some(Value::Object(listed)) = features.get("hyperv") else {
        return;
    };
    let passthrough = features
        .get("hypervPassthrough")
        .is_some_and(|p| !p.is_null());
    // Once the defaults have run, every feature listed is on unless it says `enabled: false`,
    // and so is every feature one of them needs: only a feature turned off, enlightened VMCS
    // (which needs a CPU feature) or passthrough can be refused.
    let turned_off = listed
        .values()
        .any(|f| f.get("enabled") == Some(&Value::Bool(false)));
    let evmcs = listed.get("evmcs").is_some_and(|e| !e.is_null());
    if !(passthrough || turned_off || evmcs) {
        return;
    }
    let hyperv_at = format!("{at}.domain.features.hyperv");
    if passthrough {
        found.push((
            hyperv_at.clone(),
            "Cannot explicitly set hyperV features if HypervPassthrough is being used. Please use \
             either HyperV or HypervPassthrough."
                .into(),
        ));
    }
    // The VMI defaults that read and write the Hyper-V features and the CPU's features, on a
    // copy of those alone.
    let mut hyperv = features["hyperv"].clone();
    if let Some(map) = hyperv.as_object_mut() {
        vmi_defaults::set_hyperv_feature_defaults(map);
    }
    let mut cpu = Map::new();
    if let Some(list) = path::get(spec, &["domain", "cpu", "features"]) {
        cpu.insert("features".into(), list.clone());
    }
    // Built by hand: `json!` would serialize the values it is given rather than move them.
    let mut features = Map::new();
    features.insert("hyperv".into(), hyperv);
    let mut domain = Map::new();
    domain.insert("features".into(), Value::Object(features));
    domain.insert("cpu".into(), Value::Object(cpu));
    let mut defaulted = Map::new();
    defaulted.insert("domain".into(), Value::Object(domain));
    let mut defaulted = Value::Object(defaulted);
    vmi_defaults::set_hyperv_dependencies(&mut defaulted);
    let hyperv = path::get(&defaulted, &["domain", "features", "hyperv"]).unwrap_or(&Value::Null);
    for (feature, needs) in NEEDS {
        if enabled(hyperv, feature) && !enabled(hyperv, needs) {
            found.push((
                format!("{hyperv_at}.{feature}"),
                format!(
                    "'{hyperv_at}.{feature}' requires '{hyperv_at}.{needs}', which was disabled."
                ),
            ));
        }
    }
    let evmcs = hyperv.get("evmcs").filter(|e| !e.is_null());
    if evmcs.is_none_or(|e| e.get("enabled") == Some(&Value::Bool(false))) {
        return;
    }
    let cpu_features =
        path::get(&defaulted, &["domain", "cpu", "features"]).and_then(Value::as_array);
    match cpu_features {
        Some(list) if !list.is_empty() => {
            for (i, feature) in list.iter().enumerate() {
                if path::str_at(feature, &["name"]) == Some("vmx")
                    && path::str_at(feature, &["policy"]).unwrap_or("") != "require"
                {
                    found.push((
                        format!("{at}.domain.cpu.features[{i}].policy"),
                        "vmx cpu feature has to be set to require policy".into(),
                    ));
                }
            }
        }
        _ => found.push((
            format!("{at}.domain.cpu.features"),
            "vmx cpu feature is required when evmcs is set".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(spec: Value) -> Vec<(String, String)> {
        let mut found = Vec::new();
        check(&spec, "spec", &mut found);
        found
    }

    #[test]
    fn requirements_left_unset_are_turned_on_and_turned_off_ones_refused() {
        let on = json!({"domain": {"features": {"hyperv": {
            "synictimer": {"enabled": true}, "ipi": {"enabled": true}}}}});
        assert_eq!(run(on), []);
        let off = json!({"domain": {"features": {"hyperv": {
            "synic": {"enabled": true}, "vpindex": {"enabled": false}}}}});
        assert_eq!(
            run(off),
            [(
                "spec.domain.features.hyperv.synic".to_string(),
                "'spec.domain.features.hyperv.synic' requires \
                 'spec.domain.features.hyperv.vpindex', which was disabled."
                    .to_string()
            )]
        );
    }

    #[test]
    fn passthrough_stands_alone_and_evmcs_needs_vmx() {
        let both =
            json!({"domain": {"features": {"hyperv": {}, "hypervPassthrough": {"enabled": true}}}});
        assert_eq!(
            run(both)[0].1,
            "Cannot explicitly set hyperV features if HypervPassthrough is being used. Please use \
             either HyperV or HypervPassthrough."
        );
        // The VMI defaults add vmx (and vapic) for an enlightened VMCS.
        let evmcs = json!({"domain": {"features": {"hyperv": {"evmcs": {"enabled": true}}}}});
        assert_eq!(run(evmcs), []);
        // A requirement turned off stops the defaults before vmx is added.
        let stuck = json!({"domain": {"features": {"hyperv": {
            "evmcs": {}, "synic": {"enabled": true}, "vpindex": {"enabled": false}}}}});
        let found = run(stuck);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(
            found[1],
            (
                "spec.domain.cpu.features".to_string(),
                "vmx cpu feature is required when evmcs is set".to_string()
            )
        );
    }
}

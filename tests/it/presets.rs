//! Snapshots of the documented preset examples, through the library. (Every case of the presets
//! conformance corpus runs through the binary in `tests/conformance.rs`.)

use std::sync::Arc;

use kvrender::kubevirt::presets::{self, PresetOutcome, StagedVmi};
use kvrender::load;
use serde_json::json;

// ---------------------------------------------------------------------------------------------
// The documented examples.

fn stage(yaml: &str) -> StagedVmi {
    let loaded = load::parse_text(&Arc::from("example.yaml"), yaml);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    let mut results = presets::vmi_stage_presets(&loaded.objects);
    assert_eq!(results.len(), 1);
    match results.remove(0) {
        Ok(staged) => staged,
        Err((who, refusal)) => panic!("{who} refused: {refusal}"),
    }
}

fn report(staged: &StagedVmi) -> String {
    let PresetOutcome {
        applied,
        skipped,
        warnings,
        ..
    } = &staged.outcome;
    let mut out = load::yaml::to_string(&staged.vmi);
    out.push_str(&format!("# applied: {applied:?}\n"));
    for s in skipped {
        out.push_str(&format!("# skipped: {s}\n"));
    }
    for w in warnings {
        out.push_str(&format!("# warning: {w}\n"));
    }
    out
}

fn snapshot_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings
}

#[test]
fn windows_10_preset_features() {
    let staged = stage(
        r#"
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstancePreset
metadata:
  name: windows-10
spec:
  selector:
    matchLabels:
      kubevirt.io/flavor: windows-10
  domain:
    features:
      acpi: {}
      apic: {}
      hyperv:
        relaxed: {}
        vapic: {}
        spinlocks:
          spinlocks: 8191
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: win
  namespace: desktops
spec:
  runStrategy: Always
  template:
    metadata:
      labels:
        kubevirt.io/flavor: windows-10
    spec:
      domain:
        devices: {}
"#,
    );
    // The preset lives in `default`, the VM in `desktops`: not applied.
    assert!(staged.outcome.applied.is_empty());

    let staged = stage(
        r#"
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstancePreset
metadata:
  name: windows-10
spec:
  selector:
    matchLabels:
      kubevirt.io/flavor: windows-10
  domain:
    features:
      acpi: {}
      apic: {}
      hyperv:
        relaxed: {}
        vapic: {}
        spinlocks:
          spinlocks: 8191
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: win
spec:
  runStrategy: Always
  template:
    metadata:
      labels:
        kubevirt.io/flavor: windows-10
    spec:
      domain:
        devices: {}
"#,
    );
    assert_eq!(staged.outcome.applied, ["windows-10"]);
    assert_eq!(
        staged.vmi["spec"]["domain"]["features"]["hyperv"]["spinlocks"]["spinlocks"],
        8191
    );
    snapshot_settings().bind(|| insta::assert_snapshot!("presets_windows_10", report(&staged)));
}

#[test]
fn conflicting_cpu_cores_keeps_the_vm_value() {
    let staged = stage(
        r#"
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstancePreset
metadata:
  name: small-cpu
spec:
  selector:
    matchLabels:
      kubevirt.io/flavor: default-features
  domain:
    cpu:
      cores: 4
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: big
spec:
  runStrategy: Always
  template:
    metadata:
      labels:
        kubevirt.io/flavor: default-features
    spec:
      domain:
        cpu:
          cores: 6
        devices: {}
"#,
    );
    assert_eq!(staged.vmi["spec"]["domain"]["cpu"], json!({"cores": 6}));
    assert!(staged.outcome.applied.is_empty());
    assert_eq!(staged.outcome.skipped.len(), 1);
    assert_eq!(staged.outcome.skipped[0].preset, "small-cpu");
    assert_eq!(staged.outcome.skipped[0].field, "spec.cpu");
    assert!(staged.outcome.warnings.is_empty());
    snapshot_settings().bind(|| insta::assert_snapshot!("presets_cpu_conflict", report(&staged)));
}

/// KubeVirt names every pair of conflicting presets; with hundreds of presets that all
/// conflict, that is a message of megabytes per VMI (gigabytes for thousands). The refusal
/// names the first 100 pairs, in KubeVirt's order, and says there are more.
#[test]
fn a_refusal_names_at_most_a_hundred_conflicting_pairs() {
    let mut yaml = String::new();
    for i in 0..300 {
        yaml.push_str(&format!(
            "---\napiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\n\
             metadata: {{name: p{i:03}}}\nspec:\n  selector: {{matchLabels: {{app: x}}}}\n  \
             domain: {{cpu: {{cores: {}}}}}\n",
            i % 4 + 1
        ));
    }
    yaml.push_str(
        "---\napiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata:\n  \
         name: vmi\n  labels: {app: x}\nspec:\n  domain: {devices: {}}\n",
    );
    let loaded = load::parse_text(&Arc::from("presets.yaml"), &yaml);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    let mut results = presets::vmi_stage_presets(&loaded.objects);
    let Err((_, refusal)) = results.remove(0) else {
        panic!("the VMI was admitted")
    };
    let message = refusal.to_string();
    assert_eq!(message.matches("conflict: ").count(), 100, "{message}");
    // KubeVirt's order: each preset against every one before it.
    assert!(
        message.contains(
            "VirtualMachinePresets cannot be applied due to conflicts: [presets 'p001' and \
             'p000' conflict: "
        ),
        "{message}"
    );
    assert!(
        message.ends_with(
            "] and more pairs (KubeVirt names every conflicting pair; the first 100 are listed)"
        ),
        "{message}"
    );
}

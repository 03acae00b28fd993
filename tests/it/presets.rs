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

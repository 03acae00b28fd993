//! `inferFromVolume` through `kvrender expand`: refusals as diagnostics, and the webhook's
//! preference-driven mutations only for VMs that ask for inference.

use std::io::Write;
use std::process::Command;

const CLUSTER: &str = r#"
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterPreference
metadata:
  name: storage-pref
spec:
  volumes:
    preferredStorageClassName: fast-ssd
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: root-pvc
  labels:
    instancetype.kubevirt.io/default-preference: storage-pref
---
"#;

/// VM `vm1` with the preference matcher `preference` and the rest of its `spec` (`rest`).
fn vm_with(preference: &str, rest: &str) -> String {
    format!(
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm1\nspec:\n  \
         preference: {preference}\n{rest}"
    )
}

fn vm(preference: &str, claim: &str) -> String {
    vm_with(
        preference,
        &format!(
            r#"  dataVolumeTemplates:
  - metadata:
      name: data
    spec:
      storage:
        resources:
          requests:
            storage: 1Gi
      source:
        blank: {{}}
  template:
    spec:
      domain:
        devices: {{}}
      volumes:
      - name: root
        persistentVolumeClaim:
          claimName: {claim}
"#
        ),
    )
}

fn expand(doc: &str) -> (i32, String, String) {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(CLUSTER.as_bytes()).unwrap();
    file.write_all(doc.as_bytes()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .args(["expand", "--no-default-catalog"])
        .arg(file.path())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn inferred_preference_fills_the_storage_class_of_data_volume_templates() {
    let (code, stdout, stderr) = expand(&vm("{inferFromVolume: root}", "root-pvc"));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("storageClassName: fast-ssd"), "{stdout}");
}

#[test]
fn named_preference_is_expanded_as_expand_spec_does() {
    let (code, stdout, stderr) = expand(&vm("{name: storage-pref}", "root-pvc"));
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains("storageClassName"), "{stdout}");
}

#[test]
fn failed_inference_names_volume_and_missing_object() {
    let (code, stdout, stderr) = expand(&vm(
        "{inferFromVolume: root, inferFromVolumeFailurePolicy: Ignore}",
        "absent-pvc",
    ));
    assert_ne!(code, 0);
    assert!(stdout.trim().is_empty(), "{stdout}");
    assert!(stderr.contains("KV013"), "{stderr}");
    assert!(stderr.contains("VirtualMachine/vm1"), "{stderr}");
    assert!(stderr.contains("volume `root`"), "{stderr}");
    assert!(
        stderr.contains("persistentvolumeclaims \"absent-pvc\" not found"),
        "{stderr}"
    );
}

#[test]
fn invalid_failure_policy_is_refused_with_the_field() {
    let (code, _, stderr) = expand(&vm(
        "{inferFromVolume: root, inferFromVolumeFailurePolicy: Bogus}",
        "root-pvc",
    ));
    assert_ne!(code, 0);
    assert!(
        stderr.contains("spec.preference.inferFromVolumeFailurePolicy"),
        "{stderr}"
    );
    assert!(stderr.contains("'Bogus'"), "{stderr}");
}

/// The exit code of kvrender run with `args`, then `file`, and its stdout and stderr together.
fn run_on(args: &[&str], file: &std::path::Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .args(args)
        .arg(file)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

/// A source that lives only in the cluster: the finding gives the command that exports it,
/// and the exported object passed with `--catalog` lets the inference go on.
#[test]
fn a_missing_source_gets_the_command_that_exports_it() {
    let dir = tempfile::tempdir().unwrap();
    let vm_file = dir.path().join("vm.yaml");
    let claim = "absent-pvc";
    std::fs::write(&vm_file, vm("{inferFromVolume: root}", claim)).unwrap();
    let run = |args: &[&str]| run_on(args, &vm_file);
    let hint = format!("save `kubectl get pvc -n default {claim} -o yaml` to a file");
    let (code, text) = run(&["expand", "--no-default-catalog"]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains(&hint), "{text}");
    let (code, text) = run(&["validate", "--no-default-catalog"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("warning[KV013]") && text.contains(&hint),
        "{text}"
    );
    // What that command prints, with the preference it names.
    let exported = dir.path().join("exported.yaml");
    std::fs::write(&exported, CLUSTER.replace("root-pvc", claim)).unwrap();
    let exported = exported.to_str().unwrap();
    let (code, text) = run(&["expand", "--no-default-catalog", "--catalog", exported]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("storageClassName: fast-ssd"), "{text}");
}

/// A DataSource reference that names an empty namespace is looked up in no namespace, where
/// the API server finds nothing, whatever the cluster or the inputs hold: `validate` refuses
/// the VM (not "the cluster may hold it") and neither command offers an export to pass.
#[test]
fn a_source_looked_up_in_no_namespace_is_never_found() {
    let text = "apiVersion: cdi.kubevirt.io/v1beta1\nkind: DataSource\n\
        metadata: {name: ds, namespace: vms, labels: \
        {instancetype.kubevirt.io/default-instancetype: it}}\n\
        spec: {source: {pvc: {name: p, namespace: vms}}}\n---\n\
        apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: vm, namespace: vms}\n\
        spec:\n  runStrategy: Always\n  instancetype: {inferFromVolume: root}\n  \
        dataVolumeTemplates:\n  - metadata: {name: root-dv}\n    spec:\n      \
        sourceRef: {kind: DataSource, name: ds, namespace: ''}\n      \
        storage: {resources: {requests: {storage: 1Gi}}}\n  \
        template:\n    spec:\n      domain: {devices: {}}\n      \
        volumes: [{name: root, dataVolume: {name: root-dv}}]\n";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("vm.yaml");
    std::fs::write(&file, text).unwrap();
    let why = "the reference to it names an empty namespace, where no cluster holds one";
    for command in ["validate", "expand"] {
        let (code, text) = run_on(&[command, "--no-default-catalog"], &file);
        assert_eq!(code, Some(1), "{command}: {text}");
        assert!(
            text.contains("error[KV013]") && text.contains(why),
            "{command}: {text}"
        );
        assert!(!text.contains("kubectl get"), "{command}: {text}");
    }
}

/// A DataVolume template's fields that Go writes whatever their value (a claim's `resources`, a
/// `sourceRef`'s `kind`, an http source's `url`, the template's `metadata`) come back only where
/// the VM wrote them, when its webhook took it through inference: the answer for such a VM
/// carries no field the VM did not have with nothing in it. Expanded without inference, the VM
/// gets them, as `expand-spec` writes it.
#[test]
fn inference_adds_no_empty_go_fields_to_data_volume_templates() {
    let templates = |matcher: &str| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm1\nspec:\n  \
             preference: {matcher}\n  dataVolumeTemplates:\n  - spec:\n      pvc: {{}}\n      \
             sourceRef: {{name: ds1}}\n  - metadata: {{name: two}}\n    spec:\n      \
             source: {{http: {{}}}}\n      storage: {{}}\n  template:\n    spec:\n      \
             domain:\n        devices: {{}}\n      volumes:\n      - name: root\n        \
             persistentVolumeClaim:\n          claimName: root-pvc\n"
        )
    };
    let (code, inferred, stderr) = expand(&templates("{inferFromVolume: root}"));
    assert_eq!(code, 0, "{stderr}");
    let (code, named, stderr) = expand(&templates("{name: storage-pref}"));
    assert_eq!(code, 0, "{stderr}");
    let templates_of = |out: &str| {
        let vm = kvrender::load::yaml::parse_document(out.trim_start_matches("---\n")).unwrap();
        vm["spec"]["dataVolumeTemplates"].clone()
    };
    assert_eq!(
        templates_of(&inferred),
        serde_json::json!([
            {"spec": {"pvc": {"storageClassName": "fast-ssd"}, "sourceRef": {"name": "ds1"}}},
            {"metadata": {"name": "two"},
             "spec": {"source": {"http": {}}, "storage": {"storageClassName": "fast-ssd"}}},
        ])
    );
    assert_eq!(
        templates_of(&named),
        serde_json::json!([
            {"metadata": {}, "spec": {"pvc": {"resources": {}}, "sourceRef": {"kind": "", "name": "ds1"}}},
            {"metadata": {"name": "two"},
             "spec": {"source": {"http": {"url": ""}}, "storage": {"resources": {}}}},
        ])
    );
}

/// What `validate` and `expand` advise for a VM whose matcher inference fills: the labels of
/// the object it came from, never the matcher's `kind` (which KubeVirt refuses beside
/// `inferFromVolume`); and for an inference that fails, the volume and object followed.
#[test]
fn advice_about_an_inferred_matcher_is_about_the_labels_it_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("vms.yaml");
    let vm = |name: &str, volume: &str, source: &str| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {{name: {name}}}\n\
             spec:\n  runStrategy: Always\n  instancetype: {{inferFromVolume: {volume}}}\n  \
             template:\n    spec:\n      domain: {{devices: {{}}}}\n      volumes:\n      \
             - name: root\n        persistentVolumeClaim: {{claimName: {source}}}\n---\n"
        )
    };
    let text = format!(
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: namespaced\n  labels:\n    \
         instancetype.kubevirt.io/default-instancetype: u1.small\n    \
         instancetype.kubevirt.io/default-instancetype-kind: VirtualMachineInstancetype\n---\n\
         apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: unlabelled\n---\n\
         apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: misspelt\n  labels:\n    \
         instancetype.kubevirt.io/default-instance-type: u1.small\n---\n\
         apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: elsewhere\n  \
         namespace: storage\n---\n{}{}{}{}{}",
        vm("kind-label", "root", "namespaced"),
        vm("no-label", "root", "unlabelled"),
        vm("no-volume", "rootdisk", "namespaced"),
        vm("typo", "root", "misspelt"),
        vm("other-namespace", "root", "elsewhere"),
    );
    std::fs::write(&file, text).unwrap();
    let label = "set the label `instancetype.kubevirt.io/default-instancetype-kind: \
                 VirtualMachineClusterInstancetype` on PersistentVolumeClaim default/namespaced";
    let (code, report) = run_on(&["validate"], &file);
    assert_eq!(code, Some(1), "{report}");
    let line_of = |vm: &str| {
        report
            .lines()
            .filter(|l| l.contains(&format!("VirtualMachine/{vm}:")))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let kind_label = line_of("kind-label");
    assert!(kind_label.contains("warning[KV011]"), "{report}");
    assert!(kind_label.contains(label), "{report}");
    assert!(!kind_label.contains("in the matcher"), "{report}");
    assert!(
        kind_label.contains("inferred from volume `root`"),
        "{report}"
    );
    let no_label = line_of("no-label");
    assert!(
        no_label.contains("error[KV013]")
            && no_label.contains("(looked at PersistentVolumeClaim default/unlabelled)"),
        "{report}"
    );
    let no_volume = line_of("no-volume");
    assert!(
        no_volume.contains("unable to find volume rootdisk")
            && no_volume.contains("the template's volumes are `root`"),
        "{report}"
    );
    let typo = line_of("typo");
    assert!(
        typo.contains(
            "it has the label `instancetype.kubevirt.io/default-instance-type`: did you mean \
             `instancetype.kubevirt.io/default-instancetype`?"
        ),
        "{report}"
    );
    let other = line_of("other-namespace");
    assert!(
        other.contains(
            "a PersistentVolumeClaim of that name is in namespace \"storage\", but KubeVirt \
             looks it up in \"default\""
        ),
        "{report}"
    );
    // `expand` gives the same advice about the label.
    let (code, report) = run_on(&["expand"], &file);
    assert_eq!(code, Some(1), "{report}");
    assert!(report.contains(label), "{report}");
    assert!(!report.contains("in the matcher"), "{report}");
}

/// A VM with an input device without a `type` and an empty disk without a `capacity`: Go
/// writes `type: ""` and `capacity: "0"` back for both, fields without `omitempty`.
fn vm_with_unset_fields(preference: &str) -> String {
    vm_with(
        preference,
        r#"  template:
    spec:
      domain:
        devices:
          inputs:
          - name: tablet
            bus: usb
      volumes:
      - name: root
        persistentVolumeClaim:
          claimName: root-pvc
      - name: scratch
        emptyDisk: {}
"#,
    )
}

/// KubeVirt's answer for a VM its webhook took through inference is compared without the zero
/// values nobody wrote (the corpora's normalization for inference), and the expansion of a VM
/// that names its preference keeps them, as `expand-spec` writes them.
#[test]
fn zero_values_go_writes_are_left_out_only_where_inference_ran() {
    let (code, inferred, stderr) = expand(&vm_with_unset_fields("{inferFromVolume: root}"));
    assert_eq!(code, 0, "{stderr}");
    assert!(!inferred.contains("type: \"\""), "{inferred}");
    assert!(!inferred.contains("capacity:"), "{inferred}");
    assert!(inferred.contains("bus: usb"), "{inferred}");
    assert!(inferred.contains("emptyDisk: {}"), "{inferred}");
    let (code, named, stderr) = expand(&vm_with_unset_fields("{name: storage-pref}"));
    assert_eq!(code, 0, "{stderr}");
    assert!(named.contains("type: \"\""), "{named}");
    assert!(named.contains("capacity: \"0\""), "{named}");
    // What the user wrote stays, zero or not.
    let written = vm_with_unset_fields("{inferFromVolume: root}")
        .replace("bus: usb", "bus: usb\n            type: \"\"");
    let (code, kept, stderr) = expand(&written);
    assert_eq!(code, 0, "{stderr}");
    assert!(kept.contains("type: \"\""), "{kept}");
}

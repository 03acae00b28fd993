//! `apiVersion` in every command (`KV021`): which objects are KubeVirt's, and that a group that
//! looks like a misspelt KubeVirt one is refused.

use std::path::Path;
use std::process::Output;
use std::sync::Arc;

use kvrender::load;
use serde_json::Value;

use crate::common::{describe, kvrender};

/// Every command that reads VirtualMachines.
const COMMANDS: [&str; 5] = ["build", "expand", "validate", "vmi", "diff"];

/// Kinds named as KubeVirt's, of other projects' API groups: vSphere's VM Operator, Azure
/// Service Operator, and a made-up instancetype group.
const FOREIGN: &str = "\
apiVersion: vmoperator.vmware.com/v1alpha1
kind: VirtualMachine
metadata:
  name: vsphere-vm
  namespace: ns
spec:
  className: best-effort-small
  imageName: ubuntu
  powerState: poweredOn
---
apiVersion: compute.azure.com/v1api20220301
kind: VirtualMachine
metadata:
  name: aso-vm
spec:
  location: westus
---
apiVersion: instancetype.example.com/v1
kind: VirtualMachineClusterInstancetype
metadata:
  name: example-small
spec:
  cpus: 2
";

/// A KubeVirt VirtualMachine that expands and starts a VMI without a finding.
const KUBEVIRT_VM: &str = "\
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: kubevirt-vm
spec:
  runStrategy: Always
  template:
    spec:
      domain:
        memory: {guest: 1Gi}
        devices: {}
";

/// Run `kvrender COMMAND --no-default-catalog FILE` in `dir`.
fn run(dir: &Path, command: &str, file: &str) -> Output {
    kvrender()
        .current_dir(dir)
        .args([command, "--no-default-catalog", file])
        .output()
        .expect("kvrender runs")
}

/// The values of the documents of a YAML stream, failing on any load finding.
fn values(text: &str) -> Vec<Value> {
    let loaded = load::parse_text(&Arc::from("stream"), text);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    loaded.objects.into_iter().map(|o| o.value).collect()
}

/// A VirtualMachine (or instancetype) of another project's API group is not KubeVirt's: `build`
/// passes it through unchanged, and no command reports it or refuses the run for it (every one
/// failed with `KV021` "VirtualMachine belongs to `kubevirt.io/v1`").
#[test]
fn a_kubevirt_kind_of_another_projects_group_passes_through_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("mixed.yaml"),
        format!("{FOREIGN}---\n{KUBEVIRT_VM}"),
    )
    .unwrap();
    for command in COMMANDS {
        let out = run(tmp.path(), command, "mixed.yaml");
        assert_eq!(out.status.code(), Some(0), "{command}: {}", describe(&out));
        assert!(out.stderr.is_empty(), "{command}: {}", describe(&out));
        let stdout = String::from_utf8(out.stdout).unwrap();
        match command {
            "build" => assert_eq!(
                values(&stdout),
                values(&format!("{FOREIGN}---\n{KUBEVIRT_VM}")),
                "{stdout}"
            ),
            "validate" => assert_eq!(stdout, "No problems found in 4 objects.\n"),
            _ => {
                assert!(stdout.contains("kubevirt-vm"), "{command}: {stdout}");
                for name in ["vsphere-vm", "aso-vm", "example-small"] {
                    assert!(!stdout.contains(name), "{command}: {stdout}");
                }
            }
        }
    }
}

/// A group a letter or two from KubeVirt's is taken for a typo and refused by every command.
#[test]
fn a_misspelt_kubevirt_group_fails_every_command() {
    let tmp = tempfile::tempdir().unwrap();
    let typo = |group: &str, name: &str| {
        KUBEVIRT_VM
            .replace("kubevirt.io/v1", &format!("{group}/v1"))
            .replace("kubevirt-vm", name)
    };
    std::fs::write(
        tmp.path().join("typo.yaml"),
        format!(
            "{}---\n{}",
            typo("kubevirt.i0", "zero"),
            typo("kubvirt.io", "short")
        ),
    )
    .unwrap();
    for command in COMMANDS {
        let out = run(tmp.path(), command, "typo.yaml");
        assert_eq!(out.status.code(), Some(1), "{command}: {}", describe(&out));
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        for (line, group, name) in [(1, "kubevirt.i0", "zero"), (13, "kubvirt.io", "short")] {
            let wanted = format!(
                "typo.yaml:{line}: error[KV021] VirtualMachine/{name}: apiVersion: \
                 VirtualMachine belongs to `kubevirt.io/v1`, not `{group}/v1`; use \
                 `apiVersion: kubevirt.io/v1`"
            );
            assert!(text.contains(&wanted), "{command}: {text}");
        }
    }
}

/// An instancetype KubeVirt no longer serves and a VirtualMachine of a version it never served:
/// `validate` and `build` refused them while `expand`, `vmi` and `diff` took them as they were
/// (`expand` printed `apiVersion: kubevirt.io/v2`) and exited 0. Every command now reports the
/// same two errors, and the VM is neither expanded nor started.
#[test]
fn every_command_refuses_an_apiversion_kubevirt_does_not_serve() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("unserved.yaml"),
        "\
apiVersion: instancetype.kubevirt.io/v1alpha1
kind: VirtualMachineClusterInstancetype
metadata:
  name: small
spec:
  cpu: {guest: 1}
  memory: {guest: 1Gi}
---
apiVersion: kubevirt.io/v2
kind: VirtualMachine
metadata:
  name: vm
spec:
  runStrategy: Always
  instancetype: {name: small}
  template: {spec: {domain: {devices: {}}}}
",
    )
    .unwrap();
    for command in COMMANDS {
        let out = run(tmp.path(), command, "unserved.yaml");
        assert_eq!(out.status.code(), Some(1), "{command}: {}", describe(&out));
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        // `validate` writes its report to stdout, the others their findings to stderr and
        // nothing else.
        let findings = if command == "validate" {
            &stdout
        } else {
            assert!(stdout.is_empty(), "{command}: {stdout}");
            &stderr
        };
        for wanted in [
            "unserved.yaml:1: error[KV021] VirtualMachineClusterInstancetype/small: apiVersion: \
             `instancetype.kubevirt.io/v1alpha1` is no longer served by KubeVirt; use \
             `apiVersion: instancetype.kubevirt.io/v1beta1`",
            "unserved.yaml:9: error[KV021] VirtualMachine/vm: apiVersion: KubeVirt does not \
             serve VirtualMachine as `kubevirt.io/v2`; use `apiVersion: kubevirt.io/v1`",
        ] {
            assert!(findings.contains(wanted), "{command}: {findings}");
        }
    }
}

/// An instancetype or preference of a version KubeVirt does not serve cannot be in the cluster,
/// so a VM naming it resolves as if it were not there (`KV011`, an error where the VM is
/// expanded, a warning in `validate`), with the reason; one that is deprecated but served
/// (`kubevirt.io/v1alpha3`) expands and starts as before.
#[test]
fn an_instancetype_kubevirt_does_not_serve_is_not_found() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("old.yaml"),
        "\
apiVersion: instancetype.kubevirt.io/v1alpha2
kind: VirtualMachineClusterInstancetype
metadata:
  name: small
spec:
  cpu: {guest: 1}
  memory: {guest: 1Gi}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: vm
spec:
  runStrategy: Always
  instancetype: {name: small}
  template: {spec: {domain: {devices: {}}}}
---
apiVersion: kubevirt.io/v1alpha3
kind: VirtualMachine
metadata:
  name: deprecated
spec:
  runStrategy: Always
  template: {spec: {domain: {memory: {guest: 1Gi}, devices: {}}}}
",
    )
    .unwrap();
    let reason = "virtualmachineclusterinstancetypes.instancetype.kubevirt.io \"small\" not \
                  found";
    let why = "VirtualMachineClusterInstancetype/small (at old.yaml:1) is of \
               `instancetype.kubevirt.io/v1alpha2`, an apiVersion KubeVirt does not serve, so \
               the cluster cannot hold it; give it `apiVersion: instancetype.kubevirt.io/v1beta1`";
    for command in COMMANDS {
        let out = run(tmp.path(), command, "old.yaml");
        assert_eq!(out.status.code(), Some(1), "{command}: {}", describe(&out));
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        let findings = if command == "validate" {
            &stdout
        } else {
            &stderr
        };
        let severity = if command == "validate" {
            "warning"
        } else {
            "error"
        };
        let not_found = findings
            .lines()
            .find(|l| l.starts_with(&format!("old.yaml:15: {severity}[KV011] VirtualMachine/vm")))
            .unwrap_or_else(|| panic!("{command}: {findings}"));
        assert!(
            not_found.contains(reason) && not_found.contains(why),
            "{command}: {not_found}"
        );
        // The inputs hold it: no word that they do not.
        assert!(
            !not_found.contains("not in the inputs"),
            "{command}: {not_found}"
        );
        if ["expand", "vmi", "diff"].contains(&command) {
            // Only the VM of the deprecated version is expanded or started.
            assert!(stdout.contains("deprecated"), "{command}: {stdout}");
            assert!(!stdout.contains("name: vm\n"), "{command}: {stdout}");
            assert!(
                !stdout.contains("VirtualMachine/vm "),
                "{command}: {stdout}"
            );
        }
    }
}

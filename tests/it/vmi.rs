//! `kvrender vmi`, `kvrender diff` and `kvrender migrate presets` through the binary.

use crate::common::{describe, kvrender, outcome, run_with_stdin, snapshot_settings, testdata};
use kvrender::load;

#[test]
fn full_vmi_with_presets_instancetype_and_defaults() {
    let _guard = snapshot_settings();
    insta::assert_snapshot!(outcome(kvrender().current_dir(testdata("vmi")).args([
        "vmi",
        "--no-default-catalog",
        "cluster.yaml"
    ])));
}

/// What `kvrender vmi --stage presets` makes of one file of `testdata/vmi/`, against nothing
/// else.
fn presets_stage(file: &str) -> String {
    outcome(kvrender().current_dir(testdata("vmi")).args([
        "vmi",
        "--no-default-catalog",
        "--stage",
        "presets",
        file,
    ]))
}

#[test]
fn presets_stage_only() {
    let _guard = snapshot_settings();
    insta::assert_snapshot!(presets_stage("cluster.yaml"));
}

/// The VM controller applies the preference, the webhook the presets, then its defaults: the
/// preset's cores win over the one-socket-one-core default instead of conflicting with it.
#[test]
fn presets_come_before_the_defaults_for_a_vm_with_a_preference() {
    let _guard = snapshot_settings();
    insta::assert_snapshot!(outcome(kvrender().current_dir(testdata("vmi")).args([
        "vmi",
        "--no-default-catalog",
        "preset-after-preference.yaml",
    ])));
}

/// The preference's autoattach flags decide, before the controller adds them, whether a VM gets
/// the default interface and an input device.
#[test]
fn autoattach_flags_come_before_the_default_interface_and_input_device() {
    let _guard = snapshot_settings();
    insta::assert_snapshot!(outcome(kvrender().current_dir(testdata("vmi")).args([
        "vmi",
        "--no-default-catalog",
        "autoattach.yaml",
    ])));
}

/// A completed memory dump's volume gets no disk, whether or not the VM names a preference, and a
/// migration receiver carries the controller's annotation.
#[test]
fn the_controller_reads_the_memory_dump_and_the_run_strategy() {
    let _guard = snapshot_settings();
    insta::assert_snapshot!(outcome(kvrender().current_dir(testdata("vmi")).args([
        "vmi",
        "--no-default-catalog",
        "controller-status.yaml",
    ])));
}

/// A VM KubeVirt's VM webhook refuses for its run strategy (none, both `running` and
/// `runStrategy`, one it does not take) is never created: its VMI is printed with a warning at
/// the field, and a VM with a good one gets none.
#[test]
fn a_vm_without_a_run_strategy_kubevirt_takes_is_printed_with_a_warning() {
    let vm = |name: &str, run: &str| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: {name}\nspec:\n\
             {run}  template:\n    spec:\n      domain:\n        devices: {{}}\n        \
             memory: {{guest: 1Gi}}\n"
        )
    };
    let text = [
        vm("none", ""),
        vm("both", "  running: true\n  runStrategy: Always\n"),
        vm("bogus", "  runStrategy: Sometimes\n"),
        vm("good", "  runStrategy: Halted\n"),
    ]
    .join("---\n");
    let out = run_on_text(&["vmi"], "vms.yaml", &text);
    assert!(out.status.success(), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.matches("kind: VirtualMachineInstance\n").count(), 4);
    for (at, name, field, message) in [
        (5, "none", "spec.running", "RunStrategy must be specified"),
        (
            17,
            "both",
            "spec.running",
            "Running and RunStrategy are mutually exclusive",
        ),
        (
            30,
            "bogus",
            "spec.runStrategy",
            "Invalid RunStrategy (Sometimes)",
        ),
    ] {
        let line = format!(
            "vms.yaml:{at}: warning[KV034] VirtualMachine/{name}: {field}: KubeVirt's VM webhook \
             refuses to create this VirtualMachine: {message}"
        );
        assert!(stderr.contains(&line), "{line}\n{stderr}");
    }
    assert!(!stderr.contains("VirtualMachine/good"), "{stderr}");
}

/// A VMI KubeVirt's VMI webhook refuses is printed with the refusal as a warning; `validate`
/// reports it on the VM, which KubeVirt admits. A preset that gives the VMI memory silences
/// both.
#[test]
fn a_vmi_without_memory_is_printed_with_the_refusal() {
    let _guard = snapshot_settings();
    let args = ["--no-default-catalog", "no-memory.yaml"];
    insta::assert_snapshot!(outcome(
        kvrender()
            .current_dir(testdata("vmi"))
            .arg("vmi")
            .args(args)
    ));
    insta::assert_snapshot!(outcome(
        kvrender()
            .current_dir(testdata("vmi"))
            .arg("validate")
            .args(args)
    ));
}

/// The VMI webhook's refusals of metadata are warnings too: reserved labels only on a VMI a user
/// creates (the controller may write them on the VMI a VM starts), gated annotations and the
/// annotations a Grace GPU cannot have on both.
#[test]
fn metadata_refusals_depend_on_who_creates_the_vmi() {
    let _guard = snapshot_settings();
    let out = outcome(kvrender().current_dir(testdata("vmi")).args([
        "vmi",
        "--no-default-catalog",
        "--cluster-config",
        "metadata-config.yaml",
        "metadata-refusals.yaml",
    ]));
    let warnings = |object: &str| {
        out.lines()
            .filter(|l| l.contains(&format!("VirtualMachine{object}")))
            .count()
    };
    assert_eq!(warnings("Instance/vms/by-hand"), 2, "{out}");
    assert_eq!(warnings("/vms/started"), 1, "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn preset_conflicting_with_the_vmi_is_skipped_with_a_warning() {
    let _guard = snapshot_settings();
    insta::assert_snapshot!(presets_stage("cpu-conflict.yaml"));
}

/// The conflict check is made once per set of matching presets: every VM matching the same
/// conflicting presets is refused, with the same report.
#[test]
fn every_vm_matching_conflicting_presets_is_refused() {
    let _guard = snapshot_settings();
    insta::assert_snapshot!(presets_stage("preset-conflict-two-vms.yaml"));
}

#[test]
fn diff_without_colour() {
    let _guard = snapshot_settings();
    insta::assert_snapshot!(outcome(kvrender().current_dir(testdata("vmi")).args([
        "diff",
        "--no-default-catalog",
        "--color",
        "never",
        "cluster.yaml",
    ])));
}

/// A VMI document has no template: its diff starts from its spec as written.
#[test]
fn diff_of_a_vmi_document_starts_from_its_spec_as_written() {
    let text = "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata:\n  name: v\n\
                spec:\n  domain:\n    devices: {}\n    memory: {guest: 1Gi}\n";
    let out = run_on_text(&["diff", "--color", "never"], "vmi.yaml", text);
    assert!(out.status.success(), "{}", describe(&out));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.starts_with(
            "--- VirtualMachineInstance/v (spec as written)\n\
             +++ VirtualMachineInstance/v (VirtualMachineInstance spec)\n"
        ),
        "{stdout}"
    );
}

#[test]
fn diff_colour_is_ansi_when_asked() {
    let out = kvrender()
        .current_dir(testdata("vmi"))
        .args([
            "diff",
            "--no-default-catalog",
            "--color",
            "always",
            "cluster.yaml",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\u{1b}[32m+"), "{text}");
}

#[test]
fn migrate_presets_to_preferences() {
    let _guard = snapshot_settings();
    insta::assert_snapshot!(outcome(kvrender().current_dir(testdata("vmi")).args([
        "migrate",
        "presets",
        "cluster.yaml",
        "cpu-conflict.yaml"
    ])));
}

/// `vmi` and `diff` of inputs without a VM or anything that starts VMIs say so, rather than
/// printing nothing without a word; exit code 0. With a VM, nothing more is said.
#[test]
fn vmi_and_diff_without_vms_say_so() {
    for command in ["vmi", "diff"] {
        let out = kvrender().args([command, "catalog/"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(out.stdout.is_empty());
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "no VirtualMachine, VirtualMachineInstance, VirtualMachinePool or \
                 VirtualMachineInstanceReplicaSet in the input: `{command}` has nothing to show\n"
            )
        );
        let out = kvrender()
            .args([command, "examples/vms/fedora-server.yaml"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(!out.stdout.is_empty(), "{command}");
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("has nothing to show"),
            "{command}"
        );
    }
}

/// Inputs without a preset are said to hold none, rather than printing nothing without a
/// word; exit code 0.
#[test]
fn migrate_presets_without_presets_says_so() {
    let out = kvrender()
        .args(["migrate", "presets", "examples/vms/"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "no VirtualMachineInstancePreset to migrate in the input\n"
    );
}

/// The presets example: a size preset and an operating system preset, a VM each selects, one
/// both select (which gets their preferences merged) and one whose own CPU layout the
/// instancetype would change.
#[test]
fn migrate_presets_example() {
    let _guard = snapshot_settings();
    insta::assert_snapshot!(outcome(kvrender().args([
        "migrate",
        "presets",
        "--with-vms",
        "examples/presets/"
    ])));
}

/// The same example under `--strict`: the VM whose CPU the instancetype would change is an
/// error, so nothing is printed and the exit status is 1; without it, the same findings are
/// warnings and the stream is printed.
#[test]
fn migrate_presets_strict_prints_nothing_when_a_vm_would_change() {
    let args = ["migrate", "presets", "--with-vms", "examples/presets/"];
    let lenient = kvrender().args(args).output().unwrap();
    assert!(lenient.status.success(), "{}", describe(&lenient));
    assert!(!lenient.stdout.is_empty());
    let strict = kvrender().args(args).arg("--strict").output().unwrap();
    let stderr = String::from_utf8_lossy(&strict.stderr);
    assert_eq!(strict.status.code(), Some(1), "{stderr}");
    assert!(strict.stdout.is_empty(), "{}", describe(&strict));
    assert!(
        stderr.contains(
            "error[KV014] VirtualMachine/lab/big-build-agent: spec.template.spec.domain.cpu: \
             has 8 vCPUs"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("warning["), "{stderr}");
}

/// A preset part KubeVirt skips for a VM is shown with both values as JSON, not as Go prints a
/// struct (`&{ <ptr> <nil>}`), which names no field.
#[test]
fn a_skipped_preset_part_is_shown_as_json() {
    let out = kvrender()
        .args(["migrate", "presets", "--with-vms", "examples/presets/"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.contains("KubeVirt skips its `spec.firmware`"))
        .unwrap_or_else(|| panic!("no skipped firmware in\n{stderr}"));
    assert!(
        line.contains(
            "(the preset has {\"bootloader\":{\"efi\":{}}}, the VirtualMachineInstance \
             {\"uuid\":\"1a3f5869-7ada-5c6a-b5e7-5e59ab5b676b\"})"
        ),
        "{line}"
    );
    assert!(!stderr.contains("&{"), "{stderr}");
}

/// A VM that names no instancetype or preference gets the name check `expand` makes: the
/// VMI's name and firmware UUID come from the VM's name.
#[test]
fn a_vm_without_a_valid_name_makes_no_vmi() {
    let out = run_on_text(
        &["vmi", "--no-default-catalog"],
        "vms.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  namespace: x\n\
         spec:\n  template: {}\n---\n\
         apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: n\n\
         spec:\n  template: {}\n",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        stderr.contains("vms.yaml:3: error[KV003] VirtualMachine/x/<no name>: metadata.name: the VirtualMachine has no `metadata.name`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("vms.yaml:11: error[KV003] VirtualMachine/<no name>: metadata.name: `metadata.name` must be a string, not a boolean; quote the name"),
        "{stderr}"
    );
}

/// What the API server refuses to create makes no VMI, with the error `validate` gives, in
/// `vmi` and `diff` alike: a VM without a template, a pool or a replica set of the wrong type
/// (a pool that is not one, a label that is not a string).
#[test]
fn objects_the_api_server_refuses_make_no_vmi() {
    let text = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: bare\n\
                spec:\n  runStrategy: Always\n---\n\
                apiVersion: pool.kubevirt.io/v1beta1\nkind: VirtualMachinePool\n\
                metadata:\n  name: p1\nspec:\n  selector:\n    matchLabels: {app: p}\n  \
                virtualMachineTemplate: oops\n---\n\
                apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstanceReplicaSet\n\
                metadata:\n  name: rs\nspec:\n  selector:\n    matchLabels: {app: yes}\n  \
                template:\n    metadata:\n      labels: {app: yes}\n    spec:\n      \
                domain:\n        devices: {}\n";
    for command in ["vmi", "diff"] {
        let out = run_on_text(&[command, "--no-default-catalog"], "refused.yaml", text);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{command}: {stderr}");
        assert!(
            out.stdout.is_empty(),
            "{command}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        for expected in [
            "refused.yaml:5: error[KV004] VirtualMachine/bare: spec.template: required by the \
             schema of its kind",
            "refused.yaml:15: error[KV004] VirtualMachinePool/p1: spec.virtualMachineTemplate: \
             must be a mapping, not a string",
            "refused.yaml:23: error[KV004] VirtualMachineInstanceReplicaSet/rs: \
             spec.selector.matchLabels.app: must be a string, not a boolean",
            "refused.yaml:26: error[KV004] VirtualMachineInstanceReplicaSet/rs: \
             spec.template.metadata.labels.app: must be a string, not a boolean",
        ] {
            assert!(stderr.contains(expected), "{command}: {expected}\n{stderr}");
        }
        assert!(!stderr.contains("no labels"), "{command}: {stderr}");
    }
}

/// A `null` the template writes where Go leaves the field out when it is unset is not in the
/// VMI KubeVirt stores; one that the defaults fill is filled.
#[test]
fn nulls_go_leaves_out_are_not_in_the_vmi() {
    let out = run_on_text(
        &["vmi", "--no-default-catalog"],
        "nulls.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: blank\n\
         spec:\n  runStrategy: Always\n  template:\n    spec:\n      domain:\n        \
         memory: {guest: null}\n        resources:\n          requests: {memory: 1Gi}\n        \
         devices: {disks: null}\n      volumes: null\n      \
         terminationGracePeriodSeconds: null\n",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(!stdout.contains("null"), "{stdout}");
    assert!(!stdout.contains("volumes:"), "{stdout}");
    assert!(
        !stdout.contains("terminationGracePeriodSeconds"),
        "{stdout}"
    );
    assert!(
        stdout.contains("    memory:\n      guest: 1Gi\n"),
        "{stdout}"
    );
}

/// KubeVirt writes the PCI topology version (its VM webhook, when the VM is created), the VM's
/// generation and a receiver's migration target (its controller) before the instancetype and
/// preference are applied: an instancetype that sets one otherwise conflicts, and the VM is
/// refused when it is created (the PCI topology version) or not started (the others); a
/// preference's does not replace it.
#[test]
fn annotations_kubevirt_writes_first_win_over_the_preference_and_conflict_with_the_instancetype() {
    let objects = "apiVersion: instancetype.kubevirt.io/v1beta1\n\
        kind: VirtualMachineClusterInstancetype\nmetadata: {name: gen}\nspec:\n  \
        cpu: {guest: 1}\n  memory: {guest: 1Gi}\n  \
        annotations: {kubevirt.io/vm-generation: '9'}\n---\n\
        apiVersion: instancetype.kubevirt.io/v1beta1\n\
        kind: VirtualMachineClusterInstancetype\nmetadata: {name: target}\nspec:\n  \
        cpu: {guest: 1}\n  memory: {guest: 1Gi}\n  \
        annotations: {kubevirt.io/create-migration-target: 'false'}\n---\n\
        apiVersion: instancetype.kubevirt.io/v1beta1\n\
        kind: VirtualMachineClusterInstancetype\nmetadata: {name: pci-it}\nspec:\n  \
        cpu: {guest: 1}\n  memory: {guest: 1Gi}\n  \
        annotations: {kubevirt.io/pci-topology-version: v2}\n---\n\
        apiVersion: instancetype.kubevirt.io/v1beta1\n\
        kind: VirtualMachineClusterPreference\nmetadata: {name: pci}\nspec:\n  \
        annotations: {kubevirt.io/pci-topology-version: v2, extra: x}\n";
    let vm = |name: &str, strategy: &str, matcher: &str| {
        format!(
            "---\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {{name: {name}}}\n\
             spec:\n  runStrategy: {strategy}\n  {matcher}\n  template:\n    spec:\n      \
             domain:\n        devices: {{}}\n"
        )
    };
    let text = format!(
        "{objects}{}{}{}{}",
        vm("a", "Always", "instancetype: {name: gen}"),
        vm("b", "WaitAsReceiver", "instancetype: {name: target}"),
        vm(
            "c",
            "Always",
            "preference: {name: pci}\n  instancetype: {name: target}"
        ),
        vm("p", "Always", "instancetype: {name: pci-it}"),
    );
    let out = run_on_text(&["vmi", "--no-default-catalog"], "vms.yaml", &text);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    for (vm, key, outcome) in [
        ("a", "kubevirt.io/vm-generation", "is not started"),
        ("b", "kubevirt.io/create-migration-target", "is not started"),
        (
            "p",
            "kubevirt.io/pci-topology-version",
            "is refused when it is created",
        ),
    ] {
        assert!(
            stderr.contains(&format!(
                "error[KV010] VirtualMachine/{vm}: annotations.{key}: KubeVirt writes the \
                 annotation `{key}` before it applies the instancetype, which sets it \
                 otherwise: the VM {outcome}"
            )),
            "{stderr}"
        );
    }
    // Only the third VM starts, its annotations KubeVirt's and the preference's other one.
    assert_eq!(
        stdout.matches("kind: VirtualMachineInstance\n").count(),
        1,
        "{stdout}"
    );
    assert!(stdout.contains("  name: c\n"), "{stdout}");
    assert!(
        stdout.contains("    kubevirt.io/pci-topology-version: v3\n"),
        "{stdout}"
    );
    assert!(stdout.contains("    extra: x\n"), "{stdout}");
    assert!(!stdout.contains(": v2"), "{stdout}");

    // The preset stage leaves out what KubeVirt writes, not what the template has; an
    // annotation of the wrong type is refused, not replaced.
    let own = vm("d", "Always", "preference: {name: pci}").replace(
        "  template:\n",
        "  template:\n    metadata:\n      annotations: {kubevirt.io/vm-generation: '3'}\n",
    );
    let none = vm("e", "Always", "instancetype: {name: target}");
    let wrong = vm("f", "Always", "instancetype: {name: target}").replace(
        "  template:\n",
        "  template:\n    metadata:\n      annotations: {kubevirt.io/vm-generation: 3}\n",
    );
    let text = format!("{objects}{own}{none}{wrong}");
    let out = run_on_text(
        &["vmi", "--no-default-catalog", "--stage", "presets"],
        "vms.yaml",
        &text,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "error[KV004] VirtualMachine/f: \
             spec.template.metadata.annotations[\"kubevirt.io/vm-generation\"]: must be a \
             string, not an integer"
        ),
        "{stderr}"
    );
    let vmis: Vec<&str> = stdout.split("---\n").filter(|d| !d.is_empty()).collect();
    assert_eq!(vmis.len(), 2, "{stdout}");
    assert!(
        vmis[0].contains("    kubevirt.io/vm-generation: \"3\"\n"),
        "{stdout}"
    );
    assert!(!vmis[0].contains("pci-topology"), "{stdout}");
    assert!(!vmis[1].contains("vm-generation"), "{stdout}");
    assert!(!vmis[1].contains("pci-topology"), "{stdout}");
}

/// A VM's VMI reaches the preset webhook through the API, its quantities in Go's canonical
/// form: `1024Mi` is then the preset's `1Gi` (no conflict), while a preset's `2048Mi`, which Go
/// does not remember as written, is not the VMI's `2Gi`. A VMI document is compared as written.
/// The VMI keeps the VM's spelling.
#[test]
fn a_vms_quantities_meet_the_presets_in_canonical_form() {
    let preset = |name: &str, app: &str, memory: &str| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\n\
             metadata: {{name: {name}}}\nspec:\n  selector: {{matchLabels: {{app: {app}}}}}\n  \
             domain:\n    resources: {{requests: {{memory: {memory}}}}}\n---\n"
        )
    };
    let vm = |kind: &str, name: &str, app: &str, memory: &str| {
        let (head, indent) = if kind == "VirtualMachine" {
            (
                "spec:\n  runStrategy: Always\n  template:\n    metadata: {labels: {app: APP}}\n    \
                 spec:\n",
                "      ",
            )
        } else {
            ("  labels: {app: APP}\nspec:\n", "  ")
        };
        format!(
            "---\napiVersion: kubevirt.io/v1\nkind: {kind}\nmetadata:\n  name: {name}\n{}\
             {indent}domain:\n{indent}  resources: {{requests: {{memory: {memory}}}}}\n\
             {indent}  devices: {{}}\n",
            head.replace("APP", app)
        )
    };
    let text = format!(
        "{}{}{}{}{}{}{}",
        preset("one-gi", "a", "1Gi"),
        preset("two-gi", "b", "2048Mi"),
        preset("one-g", "c", "1G"),
        vm("VirtualMachine", "spelled", "a", "1024Mi"),
        vm("VirtualMachine", "canonical", "b", "2048Mi"),
        vm("VirtualMachineInstance", "document", "a", "1024Mi"),
        vm("VirtualMachine", "number", "c", "1000000000"),
    );
    let out = run_on_text(
        &["vmi", "--no-default-catalog", "--stage", "presets"],
        "vms.yaml",
        &text,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{}", describe(&out));
    let not_applied: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("not applied"))
        .collect();
    assert_eq!(not_applied.len(), 2, "{stderr}");
    assert!(
        not_applied[0].contains("VirtualMachine/canonical:") && not_applied[0].contains("'two-gi'"),
        "{stderr}"
    );
    assert!(
        not_applied[1].contains("VirtualMachineInstance/document:")
            && not_applied[1].contains("'one-gi'"),
        "{stderr}"
    );
    let vmis: Vec<&str> = stdout.split("---\n").filter(|d| !d.is_empty()).collect();
    assert_eq!(vmis.len(), 4, "{stdout}");
    assert!(
        vmis[3].contains("virtualmachinepreset.kubevirt.io/one-g: kubevirt.io/v1"),
        "{stdout}"
    );
    assert!(vmis[3].contains("memory: 1000000000"), "{stdout}");
    assert!(
        vmis[0].contains("virtualmachinepreset.kubevirt.io/one-gi: kubevirt.io/v1"),
        "{stdout}"
    );
    assert!(vmis[0].contains("memory: 1024Mi"), "{stdout}");
    assert!(vmis[1].contains("memory: 2048Mi"), "{stdout}");
}

/// A preset without `spec.domain` is refused at creation: an error names it, and the VMI is
/// built as if it did not exist.
#[test]
fn a_preset_without_a_domain_is_refused_and_selects_nothing() {
    let _guard = snapshot_settings();
    insta::assert_snapshot!(presets_stage("preset-without-domain.yaml"));
}

/// A preset or a VMI with a field of the wrong type is refused by the API server: an error
/// names the field, the preset selects nothing and the VMI is not built, instead of the field
/// being copied as it is or dropped for a default.
#[test]
fn presets_and_vmis_of_the_wrong_type_are_refused() {
    let _guard = snapshot_settings();
    insta::assert_snapshot!(presets_stage("wrong-types.yaml"));
    let full = outcome(kvrender().current_dir(testdata("vmi")).args([
        "vmi",
        "--no-default-catalog",
        "wrong-types.yaml",
    ]));
    let (stdout, stderr) = full.split_once("----- stderr -----").expect("both streams");
    assert!(stdout.starts_with("exit: 1\n"), "{full}");
    assert_eq!(
        stdout.matches("kind: VirtualMachineInstance\n").count(),
        1,
        "{stdout}"
    );
    assert!(stdout.contains("  name: web\n"), "{stdout}");
    assert!(stdout.contains("      cores: 1\n"), "{stdout}");
    assert!(!stdout.contains("cores: two") && !stdout.contains("/two-cores"));
    assert!(
        stderr
            .contains("error[KV004] VirtualMachineInstancePreset/two-cores: spec.domain.cpu.cores"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "error[KV004] VirtualMachineInstance/typo: spec.domain.devices.interfaces[0].bootOrder"
        ),
        "{stderr}"
    );
}

/// `kvrender ARGS FILE` run beside `FILE`, a file named `file` holding `text`.
fn run_on_text(args: &[&str], file: &str, text: &str) -> std::process::Output {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join(file), text).unwrap();
    kvrender()
        .current_dir(tmp.path())
        .args(args)
        .arg(file)
        .output()
        .unwrap()
}

/// A halted VirtualMachine named `name`: `spec` is more of its spec, each line indented by two
/// (`"  instancetype: {name: u1.medium}\n"`), `domain` more of its domain, after `devices: {}`
/// (`"\n        cpu: {sockets: 2}"`).
fn halted_vm(name: &str, spec: &str, domain: &str) -> String {
    format!(
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: {name}\nspec:\n  \
         runStrategy: Halted\n{spec}  template:\n    spec:\n      domain:\n        \
         devices: {{}}{domain}\n"
    )
}

/// A preset named `name` whose `matchLabels` are `selector` (`"{size: s}"`) and whose domain
/// is `domain`, each line indented by four.
fn labelled_preset(name: &str, selector: &str, domain: &str) -> String {
    format!(
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
         name: {name}\nspec:\n  selector:\n    matchLabels: {selector}\n  domain:\n{domain}"
    )
}

/// A halted VirtualMachine named `name` whose template has the `labels` (`"{size: s}"`);
/// `domain` is more of its domain, after `devices: {}`.
fn labelled_vm(name: &str, labels: &str, domain: &str) -> String {
    format!(
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: {name}\nspec:\n  \
         runStrategy: Halted\n  template:\n    metadata:\n      labels: {labels}\n    \
         spec:\n      domain:\n        devices: {{}}{domain}\n"
    )
}

/// The stdout and stderr of `kvrender migrate presets --with-vms` on one file holding `text`,
/// which must succeed.
fn migrate_with_vms(text: &str) -> (String, String) {
    let out = run_on_text(&["migrate", "presets", "--with-vms"], "all.yaml", text);
    assert!(out.status.success(), "{}", describe(&out));
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The domain of each VMI `kvrender vmi` prints for a file `file` holding `text`, by name.
fn vmi_domains(text: &str, file: &str) -> std::collections::BTreeMap<String, serde_json::Value> {
    let out = run_on_text(&["vmi"], file, text);
    let stdout = String::from_utf8(out.stdout).unwrap();
    load::parse_text(&std::sync::Arc::from(file), &stdout)
        .objects
        .into_iter()
        .map(|o| (o.name().to_string(), o.value["spec"]["domain"].clone()))
        .collect()
}

/// The stderr of `kvrender migrate presets` on one file holding `text`.
fn migrate_stderr(text: &str) -> String {
    let out = run_on_text(&["migrate", "presets"], "all.yaml", text);
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Whatever CPU layout a preset has, what `migrate presets` writes passes KubeVirt's
/// instancetype and preference webhooks (as `validate` judges them): a layout no spread the
/// preference webhook admits gives back (3 threads a core, say) is left unmapped, not written
/// as a refused `CoresThreads` ratio.
#[test]
fn migrated_cpu_layouts_pass_the_preference_webhook() {
    let mut text = String::new();
    for sockets in 1..=3 {
        for cores in 1..=3 {
            for threads in 1..=4 {
                text.push_str(&format!(
                    "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
                     name: s{sockets}c{cores}t{threads}\nspec:\n  selector:\n    \
                     matchLabels: {{layout: s{sockets}c{cores}t{threads}}}\n  domain:\n    \
                     cpu: {{sockets: {sockets}, cores: {cores}, threads: {threads}}}\n    \
                     resources:\n      requests: {{memory: 1Gi}}\n---\n"
                ));
            }
        }
    }
    let out = run_on_text(&["migrate", "presets"], "presets.yaml", &text);
    assert!(out.status.success(), "{}", describe(&out));
    let migrated = String::from_utf8(out.stdout).unwrap();
    assert!(migrated.contains("across: CoresThreads"), "{migrated}");
    assert!(
        migrated.contains("across: SocketsCoresThreads"),
        "{migrated}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the topology cores=2,threads=3 has no exact equivalent"),
        "{stderr}"
    );
    let checked = run_on_text(
        &["validate", "--no-default-catalog"],
        "migrated.yaml",
        &migrated,
    );
    assert!(checked.status.success(), "{}", describe(&checked));
}

/// A preset the API server refuses for a field of the wrong type is not migrated: an error
/// names the field, and nothing is written for it.
#[test]
fn migrate_presets_refuses_a_preset_of_the_wrong_type() {
    let out = run_on_text(
        &["migrate", "presets"],
        "all.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
         name: typo\nspec:\n  selector:\n    matchLabels: {size: small}\n  domain:\n    \
         cpu: {cores: two}\n    resources:\n      requests: {memory: 1Gi}\n---\n\
         apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
         name: small\nspec:\n  selector:\n    matchLabels: {size: small}\n  domain:\n    \
         cpu: {cores: 2}\n    resources:\n      requests: {memory: 1Gi}\n",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "all.yaml:9: error[KV004] VirtualMachineInstancePreset/typo: spec.domain.cpu.cores: \
             must be a non-negative integer, not a string"
        ),
        "{stderr}"
    );
    assert!(!stdout.contains("name: typo"), "{stdout}");
    assert!(stdout.contains("  name: small\n"), "{stdout}");
}

/// A preset without a name, or with one the API server refuses, is never created: `vmi`
/// applies it to nothing (it would name an annotation after it) and `migrate presets` writes
/// nothing named after it.
#[test]
fn presets_without_a_valid_name_are_refused() {
    let text = "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
                name: \"Bad Name!\"\nspec:\n  selector: {}\n  domain:\n    cpu: {cores: 2}\n---\n\
                apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata: {}\n\
                spec:\n  selector: {}\n  domain:\n    cpu: {cores: 2}\n---\n\
                apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: v}\n\
                spec:\n  domain:\n    devices: {}\n    memory: {guest: 1Gi}\n";
    for args in [
        &["vmi", "--no-default-catalog"][..],
        &["migrate", "presets"],
    ] {
        let out = run_on_text(args, "all.yaml", text);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        for want in [
            "all.yaml:4: error[KV003] VirtualMachineInstancePreset/\"Bad Name!\": metadata.name: \
             \"Bad Name!\" is not a valid Kubernetes name",
            "all.yaml:12: error[KV003] VirtualMachineInstancePreset/<no name>: metadata.name: the \
             VirtualMachineInstancePreset has no `metadata.name`",
        ] {
            assert!(stderr.contains(want), "{args:?}: no `{want}` in {stderr}");
        }
        assert!(
            !stdout.contains("Bad Name") && !stdout.contains("name: \"\""),
            "{stdout}"
        );
        assert!(
            !stdout.contains("virtualmachinepreset.kubevirt.io/"),
            "{stdout}"
        );
        assert!(!stderr.contains("selected by preset"), "{stderr}");
    }
}

/// A bare VirtualMachineInstance a preset selects is not told to add matchers it cannot have:
/// only a VirtualMachine names an instancetype or preference.
#[test]
fn migrate_presets_advises_a_bare_vmi_differently() {
    let stderr = migrate_stderr(
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
         name: small\n  namespace: legacy\nspec:\n  selector:\n    matchLabels: {size: small}\n  \
         domain:\n    features:\n      acpi: {enabled: true}\n---\n\
         apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata:\n  name: raw\n  \
         namespace: legacy\n  labels: {size: small}\nspec:\n  domain:\n    devices: {}\n---\n\
         apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm\n  \
         namespace: legacy\nspec:\n  runStrategy: Halted\n  template:\n    metadata:\n      \
         labels: {size: small}\n    spec:\n      domain:\n        devices: {}\n",
    );
    assert!(
        stderr.contains(
            "VirtualMachineInstance/legacy/raw: selected by preset `small`; a \
             VirtualMachineInstance cannot name an instancetype or preference"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("VirtualMachine/legacy/vm: selected by preset `small`; add:"),
        "{stderr}"
    );
}

/// A VM written twice, each copy selected by two presets, gets the suggestions of each copy:
/// the copies are not counted as one VM selected by four presets (whose "more presets" line
/// once printed 18446744073709551615).
#[test]
fn migrate_presets_counts_two_copies_of_a_vm_apart() {
    let preset = |name: &str, cpu: u32| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
             name: {name}\nspec:\n  selector:\n    matchLabels: {{app: web}}\n  domain:\n    \
             cpu: {{cores: {cpu}}}\n---\n"
        )
    };
    let vm = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: web\nspec:\n  \
              runStrategy: Halted\n  template:\n    metadata:\n      labels: {app: web}\n    \
              spec:\n      domain:\n        devices: {}\n";
    let stderr = migrate_stderr(&format!(
        "{}{}{vm}---\n{vm}",
        preset("one", 1),
        preset("two", 2)
    ));
    assert!(!stderr.contains("more presets select it too"), "{stderr}");
    for name in ["one", "two"] {
        let wanted = format!("VirtualMachine/web: selected by preset `{name}`");
        assert_eq!(stderr.matches(&wanted).count(), 2, "{stderr}");
    }
}

/// A preset KubeVirt refuses (no `spec.domain`) is not dropped without a word.
#[test]
fn migrate_presets_reports_a_preset_without_a_domain() {
    let out = kvrender()
        .current_dir(testdata("vmi"))
        .args(["migrate", "presets", "preset-without-domain.yaml"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "warning[KV014] VirtualMachineInstancePreset/empty: spec.domain: no instancetype or \
             preference equivalent: the preset has no `spec.domain`: KubeVirt refuses it"
        ),
        "{stderr}"
    );
}

/// A preset part KubeVirt applies to a VM today that no matcher carries is named in that VM's
/// advice, or migrating would drop it from the VM without a word.
#[test]
fn migrate_presets_names_what_a_vm_must_keep() {
    let stderr = migrate_stderr(
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
         name: four\n  namespace: legacy\nspec:\n  selector:\n    matchLabels: {size: four}\n  \
         domain:\n    cpu: {cores: 4}\n    features:\n      acpi: {enabled: true}\n    \
         resources:\n      requests: {cpu: \"2\"}\n---\n\
         apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm\n  \
         namespace: legacy\nspec:\n  runStrategy: Halted\n  template:\n    metadata:\n      \
         labels: {size: four}\n    spec:\n      domain:\n        devices: {}\n",
    );
    assert!(
        stderr.contains(
            "and copy into its own spec the preset's spec.domain.resources.requests.cpu, \
             spec.domain.cpu (sockets/cores/threads): KubeVirt applies them to it today"
        ),
        "{stderr}"
    );
}

/// A VM that names an instancetype and a preference of its own is not told to swap them for
/// the preset's (a VM takes one of each: following that would resize it), and what the preset
/// gives it today that would end with the preset is named: here its memory request, which
/// u1.medium (4Gi, from the embedded catalog) leaves unset. What the preset sets and the
/// instancetype already decides (the CPU) is skipped today, so not named.
#[test]
fn migrate_presets_keeps_the_matchers_a_vm_has() {
    let preset = "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
                  name: small\nspec:\n  selector: {}\n  domain:\n    cpu: {cores: 2}\n    \
                  resources:\n      requests: {memory: 1Gi}\n";
    let vm = |matchers: &str| halted_vm("web", matchers, "");
    let both = "  instancetype: {name: u1.medium}\n  preference: {name: fedora}\n";
    let stderr = migrate_stderr(&format!("{preset}---\n{}", vm(both)));
    assert!(
        stderr.contains(
            "VirtualMachine/web: selected by preset `small`; it names its own instancetype \
             `u1.medium` and preference `fedora`, and a VM takes one of each: nothing to add"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("add:"), "{stderr}");
    assert!(
        stderr.contains(
            "all.yaml:18: warning[KV014] VirtualMachine/web: spec.instancetype: it names its own \
             instancetype `u1.medium` and preference `fedora`"
        ) && stderr.contains(
            "ends with the preset: spec.template.spec.domain.resources.requests.memory. "
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("domain.cpu."), "{stderr}");
    // With a preference of its own only, the instancetype is still suggested.
    let stderr = migrate_stderr(&format!(
        "{preset}---\n{}",
        vm("  preference: {name: fedora}\n")
    ));
    assert!(
        stderr.contains("      instancetype:\n        kind: VirtualMachineInstancetype\n")
            && !stderr.contains("      preference:\n")
            && stderr.contains("  (it keeps its own preference `fedora`: a VM takes one of each)"),
        "{stderr}"
    );
    // An instancetype that does not resolve is said to be left out of the advice.
    let out = run_on_text(
        &["migrate", "presets", "--no-default-catalog"],
        "all.yaml",
        &format!("{preset}---\n{}", vm(both)),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning[KV011] VirtualMachine/web")
            && stderr
                .contains("the advice for this VirtualMachine leaves out what its instancetype"),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // A VM no preset selects gets no advice, so nothing is said of its matchers.
    let elsewhere = preset.replace("name: small\n", "name: small\n  namespace: legacy\n");
    let out = run_on_text(
        &["migrate", "presets", "--no-default-catalog"],
        "all.yaml",
        &format!("{elsewhere}---\n{}", vm(both)),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("VirtualMachine/web"), "{stderr}");
}

/// KubeVirt copies a preset's requests only into a VMI that has none, and says nothing when it
/// passes them over: a VM with a CPU request of its own does not get the preset's memory
/// request today, so it is not told to copy it.
#[test]
fn migrate_presets_names_requests_only_where_kubevirt_copies_them() {
    let preset = "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
                  name: mem\nspec:\n  selector: {}\n  domain:\n    resources:\n      \
                  requests: {memory: 1Gi}\n";
    let vm = |resources: &str| halted_vm("web", "", resources);
    let copy = "and copy into its own spec the preset's spec.domain.resources.requests.memory";
    let stderr = migrate_stderr(&format!("{preset}---\n{}", vm("")));
    assert!(stderr.contains(copy), "{stderr}");
    let own = "\n        resources:\n          requests: {cpu: 500m}";
    let stderr = migrate_stderr(&format!("{preset}---\n{}", vm(own)));
    assert!(
        stderr.contains("selected by preset `mem`") && !stderr.contains(copy),
        "{stderr}"
    );
}

/// A preset part that reaches a VM today but that no VM may set beside an instancetype (a
/// memory request) is not one to copy into a VM that names an instancetype: KubeVirt would
/// refuse the VM. It is named as ending with the preset instead.
#[test]
fn migrate_presets_does_not_copy_what_an_instancetype_refuses() {
    let preset = "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
                  name: mem\nspec:\n  selector: {}\n  domain:\n    resources:\n      \
                  requests: {memory: 1Gi}\n    ioThreadsPolicy: shared\n";
    let vm = |matchers: &str| halted_vm("web", matchers, "");
    let stderr = migrate_stderr(&format!(
        "{preset}---\n{}",
        vm("  instancetype: {name: u1.medium}\n")
    ));
    assert!(
        stderr.contains(
            "warning[KV014] VirtualMachine/web: spec.instancetype: preset `mem` gives it \
             spec.domain.resources.requests.memory today, which a VM cannot set beside an \
             instancetype"
        ) && stderr
            .contains("and copy into its own spec the preset's spec.domain.ioThreadsPolicy:"),
        "{stderr}"
    );
    // Without an instancetype, the VM keeps both in its own spec.
    let stderr = migrate_stderr(&format!("{preset}---\n{}", vm("")));
    assert!(
        stderr.contains(
            "and copy into its own spec the preset's spec.domain.resources.requests.memory, \
             spec.domain.ioThreadsPolicy:"
        ) && !stderr.contains("cannot set beside"),
        "{stderr}"
    );
}

/// A preset part KubeVirt skips today because the VM sets it otherwise is not one to copy into
/// the VM (it would change what runs), and a preset written with `namespace: default` applies
/// to a VM written without a namespace as to one in `default`.
#[test]
fn migrate_presets_names_only_what_reaches_the_vm() {
    let preset = "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
                  name: four\n  namespace: default\nspec:\n  selector: {}\n  domain:\n    \
                  cpu: {cores: 4}\n    features:\n      acpi: {}\n";
    let vm = |cpu: &str| halted_vm("vm", "", cpu);
    let copy = "and copy into its own spec the preset's spec.domain.cpu (sockets/cores/threads)";
    let stderr = migrate_stderr(&format!("{preset}---\n{}", vm("")));
    assert!(stderr.contains(copy), "{stderr}");
    let stderr = migrate_stderr(&format!(
        "{preset}---\n{}",
        vm("\n        cpu: {sockets: 2}")
    ));
    assert!(
        stderr.contains("add:") && !stderr.contains(copy),
        "{stderr}"
    );
}

/// The findings of `migrate presets` about one VM, the lines naming it.
fn migrate_findings_of(stderr: &str, vm: &str) -> Vec<String> {
    let who = format!("VirtualMachine/{vm}:");
    stderr
        .lines()
        .filter(|l| l.contains("warning[KV014]") && l.contains(&who))
        .map(str::to_string)
        .collect()
}

/// A part of a preset KubeVirt skips for a VM today is a warning only where following the
/// advice would change it: where an object suggested for that VM carries it and, for a
/// preference, where the VM leaves it unset (a preference fills only those). A part no
/// suggested object carries (a CPU request, the preference of a VM that keeps its own), and a
/// CPU layout with no instancetype to lay out, stay as they run today.
#[test]
fn migrate_presets_warns_of_a_skipped_part_only_where_the_advice_changes_it() {
    let preset = "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
                  name: p\nspec:\n  selector: {}\n  domain:\n    cpu: {threads: 2}\n    \
                  resources:\n      requests: {cpu: \"2\"}\n    clock:\n      timer:\n        \
                  hpet: {present: false}\n    features:\n      apic: {}\n";
    let vms = [
        halted_vm(
            "own-preference",
            "  preference:\n    name: fedora\n",
            "\n        features:\n          smm: {}",
        ),
        halted_vm(
            "own-timer",
            "",
            "\n        clock:\n          timer:\n            rtc: {}",
        ),
        halted_vm(
            "own-request",
            "",
            "\n        resources:\n          requests: {cpu: \"1\"}",
        ),
        halted_vm("own-cpu", "", "\n        cpu: {sockets: 2}"),
        halted_vm(
            "no-apic",
            "",
            "\n        features:\n          kvm: {hidden: true}",
        ),
    ];
    let stderr = migrate_stderr(&format!("{preset}---\n{}", vms.join("---\n")));
    for quiet in ["own-preference", "own-timer", "own-request", "own-cpu"] {
        let found = migrate_findings_of(&stderr, quiet);
        assert!(
            found
                .iter()
                .all(|l| !l.contains("does not reach this today")),
            "{quiet}: {found:#?}\n{stderr}"
        );
    }
    let found = migrate_findings_of(&stderr, "no-apic");
    assert!(
        found.iter().any(|l| l
            .contains("spec.template.spec.domain.features: preset `p` does not reach this today")
            && l.contains("The preference `p` suggested for it carries it")),
        "{found:#?}\n{stderr}"
    );
}

/// A skipped part is judged on the VMI the VM starts, with the cluster's defaults: on an arm64
/// cluster every VMI gets EFI without Secure Boot, so the preference's `preferredEfi` that
/// replaces a preset's `efi: {}` changes nothing there and is not told, while on amd64 it
/// switches the VM from BIOS to EFI. A part the preference does change is told on both.
#[test]
fn migrate_presets_judges_a_skipped_part_on_the_vmi_with_the_cluster_defaults() {
    let preset = "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
                  name: p\nspec:\n  selector: {}\n  domain:\n    firmware:\n      \
                  bootloader:\n        efi: {}\n    features:\n      apic: {}\n";
    let vms = [
        halted_vm("plain", "", ""),
        halted_vm(
            "no-apic",
            "",
            "\n        features:\n          kvm: {hidden: true}",
        ),
    ];
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("all.yaml"),
        format!("{preset}---\n{}", vms.join("---\n")),
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("arm64.yaml"),
        "spec:\n  configuration:\n    architectureConfiguration:\n      \
         defaultArchitecture: arm64\n",
    )
    .unwrap();
    let stderr_on = |extra: &[&str]| {
        let out = kvrender()
            .current_dir(tmp.path())
            .args(["migrate", "presets", "all.yaml"])
            .args(extra)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let firmware = "spec.template.spec.domain.firmware: preset `p` does not reach this today";
    let features = "spec.template.spec.domain.features: preset `p` does not reach this today";
    let amd64 = stderr_on(&[]);
    let arm64 = stderr_on(&["--cluster-config", "arm64.yaml"]);
    for vm in ["plain", "no-apic"] {
        assert!(
            migrate_findings_of(&amd64, vm)
                .iter()
                .any(|l| l.contains(firmware)),
            "{vm}: {amd64}"
        );
        assert!(
            migrate_findings_of(&arm64, vm)
                .iter()
                .all(|l| !l.contains(firmware)),
            "{vm}: {arm64}"
        );
    }
    for stderr in [&amd64, &arm64] {
        assert!(
            migrate_findings_of(stderr, "no-apic")
                .iter()
                .any(|l| l.contains(features)),
            "{stderr}"
        );
    }
}

/// The CPU layout a VM sets beside a preset's is told whole: the instancetype gets the preset's
/// vCPU count and the preference lays it out, so the warning names the VM's layout, the
/// preset's and the one the VM would get. A VM whose layout comes out the same is not told.
/// Nor is a VM's own CPU request: no instancetype carries the preset's, and the advice removes
/// the VM's.
#[test]
fn migrate_presets_tells_a_cpu_layout_whole() {
    let preset = "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
                  name: p\nspec:\n  selector: {}\n  domain:\n    cpu: {threads: 2}\n    \
                  resources:\n      requests: {memory: 1Gi, cpu: 500m}\n";
    let own = "\n        resources:\n          requests: {memory: 1Gi, cpu: \"1\"}";
    let vms = [
        halted_vm(
            "four",
            "",
            &format!("\n        cpu: {{sockets: 1, cores: 4, threads: 1}}{own}"),
        ),
        halted_vm(
            "two-cores",
            "",
            &format!("\n        cpu: {{cores: 2}}{own}"),
        ),
        halted_vm(
            "two-threads",
            "",
            &format!("\n        cpu: {{threads: 2}}{own}"),
        ),
    ];
    let stderr = migrate_stderr(&format!("{preset}---\n{}", vms.join("---\n")));
    let told = |vm: &str| migrate_findings_of(&stderr, vm);
    assert!(
        told("four").iter().any(|l| l.contains(
            "spec.template.spec.domain.cpu: has 4 vCPUs (1 socket, 4 cores, 1 thread) where \
             preset `p` gives 2 vCPUs (1 socket, 1 core, 2 threads)"
        ) && l
            .contains("it would have 2 vCPUs (1 socket, 1 core, 2 threads)")),
        "{stderr}"
    );
    // As many vCPUs, laid out otherwise by the preference.
    assert!(
        told("two-cores").iter().any(|l| l
            .contains("has 2 vCPUs (1 socket, 2 cores, 1 thread) where preset `p` gives 2 vCPUs")
            && l.contains("it would have 2 vCPUs (1 socket, 1 core, 2 threads)")),
        "{stderr}"
    );
    assert!(told("two-threads").is_empty(), "{stderr}");
    for vm in ["four", "two-cores", "two-threads"] {
        assert!(
            told(vm).iter().all(|l| !l.contains("requests.cpu")),
            "{vm}: {stderr}"
        );
        assert!(
            stderr.contains(&format!(
                "VirtualMachine/{vm}: selected by preset `p`; add:"
            )),
            "{stderr}"
        );
    }
    assert!(
        stderr.contains(
            "remove what the instancetype now owns: spec.template.spec.domain.cpu.sockets"
        ),
        "{stderr}"
    );
    // The same four vCPUs, which the preset's two axes have the preference spread over 2
    // sockets of 2 cores: this VM has them on 4 sockets today, so the layout is told, and the
    // preset's CPU model, which KubeVirt skips with the rest of its `cpu` today, comes with
    // the instancetype.
    let preset = "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
                  name: p\nspec:\n  selector: {}\n  domain:\n    cpu: {sockets: 2, cores: 2, \
                  model: host-passthrough}\n    resources:\n      requests: {memory: 1Gi}\n";
    let stderr = migrate_stderr(&format!(
        "{preset}---\n{}",
        halted_vm("four-sockets", "", "\n        cpu: {sockets: 4}")
    ));
    let found = migrate_findings_of(&stderr, "four-sockets");
    assert!(
        found.iter().any(|l| l.contains(
            "spec.template.spec.domain.cpu: preset `p` does not reach this today: KubeVirt \
             skips its `spec.cpu`"
        ) && l.contains("suggested for it carry it")),
        "{stderr}"
    );
    assert!(
        found.iter().any(|l| l.contains(
            "has 4 vCPUs (4 sockets, 1 core, 1 thread) where preset `p` gives 4 vCPUs (2 \
             sockets, 2 cores, 1 thread)"
        )),
        "{stderr}"
    );
}

/// A preset's CPU layout over several axes becomes a spread preference, so the VM starts with
/// the layout it has today; one that no spread gives is told at the VM. Either way, the VMs
/// that set no sockets of their own are told, at the preset, of the CPU hotplug room the
/// instancetype gives them.
#[test]
fn migrate_presets_keeps_a_layout_over_several_axes() {
    for (cpu, kept) in [
        ("{sockets: 2, cores: 3}", true),
        ("{cores: 2, threads: 2}", true),
        ("{sockets: 2, cores: 2, threads: 2}", true),
        ("{sockets: 2, cores: 2, threads: 4}", false),
    ] {
        let text = format!(
            "{}---\n{}",
            labelled_preset(
                "size",
                "{size: s}",
                &format!("    cpu: {cpu}\n    resources:\n      requests: {{memory: 1Gi}}\n")
            ),
            labelled_vm("vm", "{size: s}", "")
        );
        let (stdout, stderr) = migrate_with_vms(&text);
        let today = vmi_domains(&text, "all.yaml")["vm"]["cpu"].clone();
        let after = vmi_domains(&stdout, "migrated.yaml")["vm"]["cpu"].clone();
        let layout = |cpu: &serde_json::Value| {
            ["sockets", "cores", "threads"].map(|axis| cpu[axis].as_u64().unwrap_or(1))
        };
        let told = migrate_findings_of(&stderr, "vm");
        if kept {
            assert_eq!(layout(&after), layout(&today), "{cpu}: {after}\n{stderr}");
            assert!(told.iter().all(|l| !l.contains("vCPUs")), "{cpu}: {stderr}");
        } else {
            assert_ne!(layout(&after), layout(&today), "{cpu}");
            assert!(
                told.iter()
                    .any(|l| l.contains("no preference spreads them that way")),
                "{cpu}: {stderr}"
            );
        }
        // Hotplug room comes from the sockets the VMI has when KubeVirt sizes it: a preset
        // without sockets gives none today, an instancetype always some, and a layout that
        // changes changes it too. Told at the preset exactly when it changes.
        let changed = today.get("maxSockets") != after.get("maxSockets");
        assert!(after.get("maxSockets").is_some(), "{cpu}: {after}");
        assert_eq!(
            changed,
            cpu.starts_with("{cores") || !kept,
            "{cpu}: {today} / {after}"
        );
        assert_eq!(
            stderr.lines().any(|l| l
                .contains("VirtualMachineInstancePreset/size: spec.domain.cpu")
                && l.contains("the CPU hotplug room of the VirtualMachineInstance of `vm`")),
            changed,
            "{cpu}: {stderr}"
        );
    }
}

/// An instancetype migrated from a preset takes its guest memory from the preset's memory
/// request. A VM that sets another guest memory runs with its own today (the preset only sets
/// the pod's request); the advice to remove it would resize the VM, so a warning names both
/// amounts. The same amount written otherwise (`0.5Gi` for `512Mi`) is no change. So is a
/// memory limit that sizes the guest because the preset's request does not reach the VM.
#[test]
fn migrate_presets_tells_a_guest_memory_the_instancetype_would_change() {
    let preset = "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
                  name: small\nspec:\n  selector: {}\n  domain:\n    cpu: {cores: 2}\n    \
                  resources:\n      requests: {memory: 512Mi}\n";
    let vms = [
        halted_vm("bigger", "", "\n        memory: {guest: 1Gi}"),
        halted_vm("same", "", "\n        memory: {guest: 0.5Gi}"),
        halted_vm(
            "limited",
            "",
            "\n        resources:\n          requests: {cpu: 100m}\n          \
             limits: {memory: 2Gi}",
        ),
        halted_vm(
            "limit-only",
            "",
            "\n        resources:\n          limits: {memory: 2Gi}",
        ),
    ];
    let stderr = migrate_stderr(&format!("{preset}---\n{}", vms.join("---\n")));
    // Requests of its own keep the preset's from a VM: its memory limit sizes the guest today.
    assert!(
        migrate_findings_of(&stderr, "limited")
            .iter()
            .any(|l| l.contains(
                "spec.template.spec.domain.resources.limits.memory: set to \"2Gi\", which sizes \
             the guest today: preset `small` requests \"512Mi\" of memory"
            )),
        "{stderr}"
    );
    // Without, the preset's request reaches it and sizes the guest, as the instancetype will.
    assert!(
        migrate_findings_of(&stderr, "limit-only")
            .iter()
            .all(|l| !l.contains("memory")),
        "{stderr}"
    );
    let found = migrate_findings_of(&stderr, "bigger");
    assert!(
        found.iter().any(|l| l.contains(
            "spec.template.spec.domain.memory.guest: set to \"1Gi\" where preset `small` \
             requests \"512Mi\" of memory"
        )),
        "{found:#?}\n{stderr}"
    );
    assert!(migrate_findings_of(&stderr, "same").is_empty(), "{stderr}");
    assert!(
        stderr.contains(
            "VirtualMachine/same: selected by preset `small`; add:\n    spec:\n      \
             instancetype:"
        ),
        "{stderr}"
    );
}

/// KubeVirt skips a preset's memory request that the VM writes another way (`1024Mi` for
/// `1Gi`), but the instancetype that replaces the preset gives the same amount: no warning.
/// The BIOS serial of a preset does reach a VM that chose a BIOS itself through the
/// preference, which fills the serial in, so that VM is told; one that chose EFI is not.
#[test]
fn migrate_presets_compares_amounts_and_the_bios_serial_as_kubevirt_applies_them() {
    let preset = "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
                  name: p\nspec:\n  selector: {}\n  domain:\n    cpu: {cores: 2}\n    \
                  resources:\n      requests: {memory: 1Gi}\n    firmware:\n      \
                  bootloader:\n        bios: {useSerial: true}\n";
    let vms = [
        halted_vm(
            "spelled",
            "",
            "\n        resources:\n          requests: {memory: 1024Mi}",
        ),
        halted_vm(
            "bios",
            "",
            "\n        firmware:\n          bootloader:\n            bios: {}",
        ),
        halted_vm(
            "efi",
            "",
            "\n        firmware:\n          bootloader:\n            efi: {}",
        ),
    ];
    let stderr = migrate_stderr(&format!("{preset}---\n{}", vms.join("---\n")));
    assert!(
        migrate_findings_of(&stderr, "spelled")
            .iter()
            .all(|l| !l.contains("resources.requests.memory")),
        "{stderr}"
    );
    assert!(
        migrate_findings_of(&stderr, "bios").iter().any(|l| l
            .contains("spec.template.spec.domain.firmware: preset `p` does not reach this today")),
        "{stderr}"
    );
    assert!(
        migrate_findings_of(&stderr, "efi")
            .iter()
            .all(|l| !l.contains("does not reach this today")),
        "{stderr}"
    );
}

/// Each VM is judged again as the advice leaves it, against the cluster after the migration
/// (the presets gone, the migrated objects there): what KubeVirt would refuse in it then and
/// admits today is a warning. A preset's EFI becomes a preference's: KubeVirt turns Secure
/// Boot on when EFI does not say, which needs SMM, so a VM that does not enable SMM would be
/// refused. A memory request copied from the preset into a VM whose preference requires more
/// is refused by the VM webhook, which never saw the preset's request.
#[test]
fn migrate_presets_tells_a_vm_the_advice_would_get_refused() {
    let efi = "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
               name: efi\nspec:\n  selector: {}\n  domain:\n    firmware:\n      \
               bootloader:\n        efi: {}\n";
    let vms = [
        halted_vm("plain", "", "\n        memory: {guest: 1Gi}"),
        halted_vm(
            "smm",
            "",
            "\n        memory: {guest: 1Gi}\n        features:\n          smm: {}",
        ),
    ];
    let stderr = migrate_stderr(&format!("{efi}---\n{}", vms.join("---\n")));
    assert!(
        migrate_findings_of(&stderr, "plain")
            .iter()
            .any(|l| l.contains(
                "spec.preference: KubeVirt admits it today, and would refuse it with the advice \
             for preset `efi` followed (KV034): spec.template.spec.domain has EFI SecureBoot \
             enabled. SecureBoot requires SMM"
            )),
        "{stderr}"
    );
    assert!(
        migrate_findings_of(&stderr, "smm")
            .iter()
            .all(|l| !l.contains("would refuse")),
        "{stderr}"
    );

    let small = "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
                 name: small\nspec:\n  selector: {}\n  domain:\n    resources:\n      \
                 requests: {memory: 512Mi}\n";
    let vm = halted_vm(
        "fedora",
        "  preference:\n    name: fedora\n",
        "\n        resources:\n          limits: {memory: 4Gi}",
    );
    let stderr = migrate_stderr(&format!("{small}---\n{vm}"));
    assert!(
        stderr.contains(
            "and copy into its own spec the preset's spec.domain.resources.requests.memory"
        ),
        "{stderr}"
    );
    assert!(
        migrate_findings_of(&stderr, "fedora")
            .iter()
            .any(|l| l.contains(
                "KubeVirt admits it today, and would refuse it with the advice for preset `small` \
             followed (KV033): failure checking preference requirements: insufficient Memory \
             resources of 512Mi provided by VirtualMachine"
            )),
        "{stderr}"
    );
    // Refused today already (no memory at all): that comes first, and is not told here.
    let vm = halted_vm("bare", "", "");
    let stderr = migrate_stderr(&format!("{efi}---\n{vm}"));
    assert!(!stderr.contains("would refuse"), "{stderr}");
}

/// `--with-vms` prints, after the new objects, each VM with its advice followed: the matchers
/// added, what the instancetype owns removed, the preset's parts no object carries copied into
/// the template. A VM two presets select gets the advice of both when it cannot clash (one
/// gives the matchers, the other a part to copy); one whose presets give the same part is
/// left out, with a warning; one the presets leave alone is not printed. Applied with the new
/// objects, the VMs pass `validate`, and each starts the VMI it starts today with the presets.
#[test]
fn migrate_presets_with_vms_prints_each_vm_with_its_advice_followed() {
    let preset = labelled_preset;
    let presets = [
        preset(
            "web",
            "{tier: web}",
            "    cpu: {cores: 2}\n    resources:\n      requests: {memory: 1Gi}\n",
        ),
        preset(
            "dog",
            "{watched: \"yes\"}",
            "    devices:\n      watchdog:\n        name: w\n        i6300esb: {action: poweroff}\n",
        ),
        preset("big", "{size: big}", "    cpu: {cores: 4}\n"),
    ];
    let vm = labelled_vm;
    let text = [
        presets.join("---\n"),
        vm("one", "{tier: web}", "\n        cpu: {cores: 2}"),
        vm("two", "{tier: web, watched: \"yes\"}", ""),
        vm("three", "{tier: web, size: big}", ""),
        vm("none", "{tier: db}", "\n        memory: {guest: 1Gi}"),
    ]
    .join("---\n");
    let (stdout, stderr) = migrate_with_vms(&text);
    let docs = load::parse_text(&std::sync::Arc::from("out"), &stdout).objects;
    let vms: Vec<&serde_json::Value> = docs
        .iter()
        .filter(|o| o.kind_str() == "VirtualMachine")
        .map(|o| &o.value)
        .collect();
    let names: Vec<&str> = vms
        .iter()
        .filter_map(|v| v["metadata"]["name"].as_str())
        .collect();
    assert_eq!(names, ["one", "two"], "{stdout}");
    let (one, two) = (vms[0], vms[1]);
    assert_eq!(one["spec"]["instancetype"]["name"], "web", "{stdout}");
    assert_eq!(one["spec"]["preference"]["name"], "web", "{stdout}");
    let domain = &one["spec"]["template"]["spec"]["domain"];
    assert!(domain["cpu"].get("cores").is_none(), "{stdout}");
    assert!(domain["devices"].get("watchdog").is_none(), "{stdout}");
    // Both presets' advice: the matchers of one, the watchdog of the other.
    assert_eq!(two["spec"]["instancetype"]["name"], "web", "{stdout}");
    assert_eq!(two["spec"]["preference"]["name"], "web", "{stdout}");
    let domain = &two["spec"]["template"]["spec"]["domain"];
    assert_eq!(
        domain["devices"]["watchdog"]["i6300esb"]["action"],
        "poweroff"
    );
    assert!(
        stderr.contains(
            "VirtualMachine/three: spec.template.metadata.labels: not printed with the advice \
             followed (`--with-vms`): several presets select it, and their advice clashes"
        ),
        "{stderr}"
    );
    // The new objects and the rewritten VMs, without the presets: nothing KubeVirt refuses,
    // and the VMIs they start are the ones they start today.
    let after = run_on_text(&["validate"], "after.yaml", &stdout);
    assert!(after.status.success(), "{}", describe(&after));
    let domains = vmi_domains;
    let (before, after) = (
        domains(&text, "before.yaml"),
        domains(&stdout, "after.yaml"),
    );
    let vcpus = |d: &serde_json::Value| {
        ["sockets", "cores", "threads"]
            .iter()
            .map(|k| d["cpu"][k].as_u64().unwrap_or(1))
            .product::<u64>()
    };
    for name in ["one", "two"] {
        let (before, after) = (&before[name], &after[name]);
        for at in ["memory", "features", "devices", "clock"] {
            assert_eq!(before[at], after[at], "{name}: {at}");
        }
        assert_eq!((vcpus(before), vcpus(after)), (2, 2), "{name}");
    }
}

/// A VM takes one preference: where two presets that select it give one each (a size preset's
/// CPU layout, an OS preset's features) and cannot clash, their preferences are merged into a
/// new one named after both, the advice says to name it, and `--with-vms` does. Where that
/// name is already taken, the VM is left out as before.
#[test]
fn migrate_presets_merges_the_preferences_of_presets_that_select_a_vm_together() {
    let preset = labelled_preset;
    let vm = |name: &str, labels: &str| labelled_vm(name, labels, "");
    let text = [
        preset(
            "sized",
            "{size: s}",
            "    cpu: {cores: 2}\n    resources:\n      requests: {memory: 1Gi}\n",
        ),
        preset(
            "win",
            "{os: win}",
            "    features:\n      hyperv: {relaxed: {}}\n    clock:\n      timer:\n        \
             hpet: {present: false}\n",
        ),
        preset("win2", "{os2: win}", "    features:\n      apic: {}\n"),
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachinePreference\n\
         metadata:\n  name: sized-win2\nspec: {}\n"
            .to_string(),
        vm("desk", "{size: s, os: win}"),
        vm("desk2", "{size: s, os2: win}"),
    ]
    .join("---\n");
    let (stdout, stderr) = migrate_with_vms(&text);
    let docs = load::parse_text(&std::sync::Arc::from("out"), &stdout).objects;
    let find = |kind: &str, name: &str| {
        docs.iter()
            .find(|o| o.kind_str() == kind && o.name() == name)
            .map(|o| o.value.clone())
    };
    let merged = find("VirtualMachinePreference", "sized-win").expect(&stdout);
    assert_eq!(merged["spec"]["cpu"]["preferredCPUTopology"], "cores");
    assert!(
        merged["spec"]["features"]["preferredHyperv"]["relaxed"].is_object(),
        "{stdout}"
    );
    assert_eq!(
        merged["spec"]["clock"]["preferredTimer"]["hpet"]["present"],
        false
    );
    let desk = find("VirtualMachine", "desk").expect(&stdout);
    assert_eq!(desk["spec"]["instancetype"]["name"], "sized", "{stdout}");
    assert_eq!(desk["spec"]["preference"]["name"], "sized-win", "{stdout}");
    assert!(
        stderr.contains(
            "note: a VM takes one preference, and presets `sized` and `win` give it one each: \
             `sized-win` merges theirs"
        ),
        "{stderr}"
    );
    // The advice names the merged preference itself, under each preset that selects the VM.
    assert_eq!(
        stderr
            .matches("      preference:\n        kind: VirtualMachinePreference\n        name: sized-win\n")
            .count(),
        2,
        "{stderr}"
    );
    // `sized-win2` is an input's name: no merge, and the VM is left to be merged by hand.
    assert!(find("VirtualMachine", "desk2").is_none(), "{stdout}");
    assert!(
        stderr.contains("VirtualMachine/desk2: spec.template.metadata.labels: not printed"),
        "{stderr}"
    );
    assert!(!stderr.contains("`sized-win2` instead"), "{stderr}");
    // Applied without the presets, the VM passes `validate` and starts the VMI it starts today.
    let after = run_on_text(&["validate"], "after.yaml", &stdout);
    assert!(after.status.success(), "{}", describe(&after));
    let domain = |text: &str, file: &str| vmi_domains(text, file)["desk"].clone();
    let (before, after) = (domain(&text, "before.yaml"), domain(&stdout, "after.yaml"));
    for at in ["features", "clock"] {
        assert_eq!(before[at], after[at], "{at}");
    }
    assert_eq!(before["cpu"]["cores"], 2);
    assert_eq!(after["cpu"]["cores"], 2);
    // Nor is a preference written under a name the API server refuses: two names of 200
    // characters make one of 401.
    let (long_a, long_b) = ("a".repeat(200), "b".repeat(200));
    let text = [
        preset(
            &long_a,
            "{size: s}",
            "    cpu: {cores: 2}\n    resources:\n      requests: {memory: 1Gi}\n",
        ),
        preset(&long_b, "{os: win}", "    features:\n      apic: {}\n"),
        vm("desk", "{size: s, os: win}"),
    ]
    .join("---\n");
    let (stdout, stderr) = migrate_with_vms(&text);
    assert!(!stdout.contains(&format!("{long_a}-{long_b}")), "{stdout}");
    assert!(
        stderr.contains("VirtualMachine/desk: spec.template.metadata.labels: not printed"),
        "{stderr}"
    );
}

/// Merged preferences are named by joining their presets' names with `-`, which two sets of
/// presets can share (`a-b` with `c`, `a` with `b-c`): each then gets a name of its own, and
/// every VM is rewritten to the one that merges its presets' preferences. A merged name the API
/// server refuses is said to be the reason the VM is left out, not a clash of the presets.
#[test]
fn migrate_presets_gives_merged_preferences_of_one_joined_name_names_of_their_own() {
    let preset = labelled_preset;
    let vm = |name: &str, labels: &str| labelled_vm(name, labels, "");
    let text = [
        preset("a-b", "{p1: x}", "    features:\n      apic: {}\n"),
        preset("c", "{p2: x}", "    clock:\n      utc: {}\n"),
        preset("a", "{p3: x}", "    features:\n      smm: {}\n"),
        preset(
            "b-c",
            "{p4: x}",
            "    clock:\n      timezone: Europe/Paris\n",
        ),
        vm("first", "{p1: x, p2: x}"),
        vm("second", "{p3: x, p4: x}"),
    ]
    .join("---\n");
    let (stdout, stderr) = migrate_with_vms(&text);
    let docs = load::parse_text(&std::sync::Arc::from("out"), &stdout).objects;
    let preference_of = |vm: &str| {
        let vm = docs
            .iter()
            .find(|o| o.kind_str() == "VirtualMachine" && o.name() == vm)
            .expect(&stdout);
        let name = vm.value["spec"]["preference"]["name"].as_str().unwrap();
        let named: Vec<_> = docs
            .iter()
            .filter(|o| o.kind_str() == "VirtualMachinePreference" && o.name() == name)
            .collect();
        assert_eq!(named.len(), 1, "one preference named {name}: {stdout}");
        (name.to_string(), named[0].value["spec"].clone())
    };
    let (first, first_spec) = preference_of("first");
    let (second, second_spec) = preference_of("second");
    assert_ne!(first, second, "{stdout}");
    assert!(
        first.starts_with("a-b-c-") && second.starts_with("a-b-c-"),
        "{stdout}"
    );
    assert!(
        first_spec["features"]["preferredApic"].is_object(),
        "{stdout}"
    );
    assert!(first_spec["clock"]["preferredClockOffset"]["utc"].is_object());
    assert!(
        second_spec["features"]["preferredSmm"].is_object(),
        "{stdout}"
    );
    assert_eq!(
        second_spec["clock"]["preferredClockOffset"]["timezone"],
        "Europe/Paris"
    );
    assert!(
        stderr.contains(&format!("`{first}` merges theirs")),
        "{stderr}"
    );
    // The name a VM's merge gets does not depend on the other VMs of the input.
    let alone = [
        preset("a-b", "{p1: x}", "    features:\n      apic: {}\n"),
        preset("c", "{p2: x}", "    clock:\n      utc: {}\n"),
        vm("first", "{p1: x, p2: x}"),
    ]
    .join("---\n");
    let (alone, _) = migrate_with_vms(&alone);
    assert!(alone.contains("name: a-b-c\n"), "{alone}");
    // Two names of 200 characters make one of 401, which the API server refuses.
    let (long_a, long_b) = ("a".repeat(200), "b".repeat(200));
    let text = [
        preset(&long_a, "{size: s}", "    features:\n      apic: {}\n"),
        preset(&long_b, "{os: win}", "    clock:\n      utc: {}\n"),
        vm("desk", "{size: s, os: win}"),
    ]
    .join("---\n");
    let (_, stderr) = migrate_with_vms(&text);
    assert!(
        stderr.contains(&format!(
            "the preference that merges theirs cannot be named `{long_a}-{long_b}`: the API \
             server refuses that name"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("their advice clashes"), "{stderr}");
}

/// A VM that keeps its own preference is not told to name the one migrated from its preset,
/// so the instancetype's vCPUs are laid out as its own preference says: where that is not the
/// preset's layout of today, a warning says so; where it is, nothing is said.
#[test]
fn migrate_presets_tells_a_cpu_layout_a_kept_preference_changes() {
    let text = |topology: &str| {
        [
            labelled_preset(
                "sized",
                "{size: s}",
                "    cpu: {cores: 4}\n    resources:\n      requests: {memory: 2Gi}\n",
            ),
            format!(
                "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachinePreference\n\
                 metadata:\n  name: mine\nspec:\n  cpu: {{preferredCPUTopology: {topology}}}\n"
            ),
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: desk\nspec:\n  \
             runStrategy: Halted\n  preference: {kind: VirtualMachinePreference, name: mine}\n  template:\n    metadata:\n      \
             labels: {size: s}\n    spec:\n      domain:\n        devices: {}\n"
                .to_string(),
        ]
        .join("---\n")
    };
    let stderr = migrate_stderr(&text("sockets"));
    assert!(
        stderr.contains(
            "all.yaml:26: warning[KV014] VirtualMachine/desk: spec.preference: it keeps its own \
             preference `mine`, which lays out its vCPUs otherwise than preset `sized` does: it \
             has 4 vCPUs (1 socket, 4 cores, 1 thread) today and would have 4 vCPUs (4 sockets, \
             1 core, 1 thread)"
        ),
        "{stderr}"
    );
    let stderr = migrate_stderr(&text("cores"));
    assert!(!stderr.contains("lays out its vCPUs"), "{stderr}");
    assert!(
        stderr.contains("(it keeps its own preference `mine`"),
        "{stderr}"
    );
}

/// The VMIs a pool or a replica set starts are selected by presets too: the advice does not
/// cover them, and a warning at their template's labels says what ends with the presets.
#[test]
fn migrate_presets_tells_the_pools_and_replica_sets_presets_select() {
    let text = [
        labelled_preset(
            "size",
            "{app: web}",
            "    cpu: {cores: 2}\n    resources:\n      requests: {memory: 2Gi}\n",
        ),
        "apiVersion: pool.kubevirt.io/v1beta1\nkind: VirtualMachinePool\nmetadata:\n  \
         name: web-pool\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: web}}\n  \
         virtualMachineTemplate:\n    metadata:\n      labels: {app: web}\n    spec:\n      \
         runStrategy: Always\n      template:\n        metadata:\n          labels: {app: web}\n\
         \x20       spec:\n          domain: {devices: {}}\n"
            .to_string(),
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstanceReplicaSet\nmetadata:\n  \
         name: web-set\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  \
         template:\n    metadata:\n      labels: {app: web}\n    spec:\n      \
         domain: {devices: {}}\n"
            .to_string(),
        // Neither is told where the presets select none of their VMIs.
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstanceReplicaSet\nmetadata:\n  \
         name: other-set\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: other}}\n  \
         template:\n    metadata:\n      labels: {app: other}\n    spec:\n      \
         domain: {devices: {}}\n"
            .to_string(),
    ]
    .join("---\n");
    let stderr = migrate_stderr(&text);
    assert!(
        stderr.contains(
            "all.yaml:27: warning[KV014] VirtualMachinePool/web-pool: \
             spec.virtualMachineTemplate.spec.template.metadata.labels: preset `size` selects \
             the VirtualMachineInstances it starts, and the advice leaves it out"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "all.yaml:40: warning[KV014] VirtualMachineInstanceReplicaSet/web-set: \
             spec.template.metadata.labels: preset `size` selects the VirtualMachineInstances it \
             starts, and the advice leaves it out"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("other-set"), "{stderr}");
}

/// The cluster holds one preset of a namespace and name: of two definitions, the first is
/// migrated and the second is a `KV020` warning, not a second preference of the same name.
#[test]
fn migrate_presets_migrates_the_first_of_two_presets_of_one_name() {
    let text = [
        labelled_preset("p", "{os: win}", "    features:\n      apic: {}\n"),
        labelled_preset("p", "{os: win}", "    features:\n      smm: {}\n"),
        labelled_vm("desk", "{os: win}", ""),
    ]
    .join("---\n");
    let out = run_on_text(&["migrate", "presets"], "all.yaml", &text);
    assert!(out.status.success(), "{}", describe(&out));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let docs = load::parse_text(&std::sync::Arc::from("out"), &stdout).objects;
    let preferences: Vec<_> = docs
        .iter()
        .filter(|o| o.kind_str() == "VirtualMachinePreference")
        .collect();
    assert_eq!(preferences.len(), 1, "{stdout}");
    assert!(
        preferences[0].value["spec"]["features"]["preferredApic"].is_object(),
        "{stdout}"
    );
    assert!(
        stderr.contains(
            "all.yaml:15: warning[KV020] VirtualMachineInstancePreset/p: \
             VirtualMachineInstancePreset/p is defined twice: first at all.yaml:4 (document 1); \
             the first is migrated, and the advice leaves this one out"
        ),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("selected by preset `p`").count(),
        1,
        "{stderr}"
    );
}

/// A preset with CPU features only becomes a preference with `preferredCPUFeatures`, which
/// KubeVirt writes into the VM's `domain.cpu`: a VM without one is told to add it, and with the
/// advice applied the VM passes `validate` (without it, `KV030`).
#[test]
fn migrate_presets_adds_the_cpu_a_preference_of_cpu_features_needs() {
    let preset = "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
                  name: vmx\nspec:\n  selector:\n    matchLabels: {nested: \"yes\"}\n  domain:\n    \
                  cpu:\n      features: [{name: vmx, policy: require}]\n";
    let vm = |cpu: &str| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm\nspec:\n  \
             runStrategy: Halted\n  template:\n    metadata:\n      labels: {{nested: \"yes\"}}\n    \
             spec:\n      domain:\n        devices: {{}}{cpu}\n"
        )
    };
    let cpu = "\n        cpu: {}";
    let advice = "      template:\n        spec:\n          domain:\n            cpu: {}\n";
    let stderr = migrate_stderr(&format!("{preset}---\n{}", vm("")));
    assert!(stderr.contains(advice), "{stderr}");
    // A VM with a cpu of its own needs nothing more.
    let stderr = migrate_stderr(&format!("{preset}---\n{}", vm(cpu)));
    assert!(
        stderr.contains("add:") && !stderr.contains(advice),
        "{stderr}"
    );

    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("presets.yaml"), preset).unwrap();
    let migrated = kvrender()
        .current_dir(tmp.path())
        .args(["migrate", "presets", "presets.yaml"])
        .output()
        .unwrap();
    std::fs::write(tmp.path().join("migrated.yaml"), &migrated.stdout).unwrap();
    let with_matcher = |cpu: &str| {
        vm(cpu).replace(
            "  runStrategy: Halted\n",
            "  runStrategy: Halted\n  preference: {kind: VirtualMachinePreference, name: vmx}\n",
        )
    };
    let validate = |text: String| {
        std::fs::write(tmp.path().join("vm.yaml"), text).unwrap();
        kvrender()
            .current_dir(tmp.path())
            .args(["validate", "migrated.yaml", "vm.yaml"])
            .output()
            .unwrap()
    };
    let applied = validate(with_matcher(cpu));
    assert_eq!(applied.status.code(), Some(0), "{applied:?}");
    let without = validate(with_matcher(""));
    assert_eq!(without.status.code(), Some(1), "{without:?}");
    assert!(String::from_utf8_lossy(&without.stdout).contains("error[KV030]"));
}

/// A preference or instancetype the migration writes that has the identity of an object
/// already among the inputs would replace it (or be replaced) when both are applied: an error
/// at the preset, naming the other definition. A preset whose objects are new passes.
#[test]
fn migrate_presets_refuses_to_shadow_an_existing_object() {
    let tmp = tempfile::tempdir().unwrap();
    let preset = "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
                  name: small\n  namespace: legacy\nspec:\n  selector:\n    \
                  matchLabels: {size: small}\n  domain:\n    cpu: {cores: 2}\n    \
                  resources: {requests: {memory: 2Gi}}\n";
    let existing = "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachinePreference\n\
                    metadata:\n  name: small\n  namespace: legacy\nspec:\n  \
                    cpu: {preferredCPUTopology: sockets}\n";
    std::fs::write(tmp.path().join("preset.yaml"), preset).unwrap();
    std::fs::write(tmp.path().join("existing.yaml"), existing).unwrap();
    let migrate = |files: &[&str]| {
        kvrender()
            .current_dir(tmp.path())
            .args(["migrate", "presets"])
            .args(files)
            .output()
            .unwrap()
    };
    let out = migrate(&["preset.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    let out = migrate(&["preset.yaml", "existing.yaml"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "preset.yaml:1: error[KV020] VirtualMachineInstancePreset/legacy/small: the \
             VirtualMachinePreference migrated from this preset is \
             VirtualMachinePreference/legacy/small, which is already defined at \
             existing.yaml:1 (document 1)"
        ),
        "{stderr}"
    );
    // Only the preference clashes: the instancetype of the same name is a kind of its own.
    assert_eq!(stderr.matches("error[KV020]").count(), 1, "{stderr}");
    // The advice is still printed in full.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("kind: VirtualMachineInstancetype"),
        "{stdout}"
    );
    assert!(
        stdout.contains("kind: VirtualMachinePreference"),
        "{stdout}"
    );
}

/// A VM the webhook refuses (here: too few vCPUs for its preference) still gets its VMI
/// printed, as the controller would make it, with the refusal as a warning: `vmi` and `diff`
/// do not stay silent about what `validate` calls an error.
#[test]
fn a_vm_the_webhook_refuses_is_a_warning_beside_its_vmi() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("win.yaml"),
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: win}\nspec:\n  \
         runStrategy: Always\n  instancetype: {name: u1.small}\n  preference: {name: windows.11}\n  \
         template: {spec: {domain: {devices: {}}}}\n",
    )
    .unwrap();
    for command in ["vmi", "diff"] {
        let out = kvrender()
            .current_dir(tmp.path())
            .arg(command)
            .args(if command == "diff" {
                &["--color", "never"][..]
            } else {
                &[]
            })
            .arg("win.yaml")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{command}: {stderr}");
        assert!(!out.stdout.is_empty(), "{command}");
        assert!(
            // At the line of the field KubeVirt names.
            stderr.starts_with("win.yaml:6: warning[KV033] VirtualMachine/win: spec.instancetype: failure checking preference requirements: insufficient CPU resources"),
            "{command}: {stderr}"
        );
        assert!(
            stderr.contains("refuses to create the VirtualMachine as written"),
            "{stderr}"
        );
    }
}

/// When many presets select the same VMs, `migrate presets` prints a few suggestions per VM and
/// names the rest on one line, instead of a block for every pair each naming every preset.
#[test]
fn migrate_presets_stays_short_when_many_presets_select_every_vm() {
    let tmp = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..40 {
        text.push_str(&format!(
            "---\napiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\n\
             metadata: {{name: p{i:02}}}\nspec:\n  selector: {{}}\n  domain:\n    \
             cpu: {{cores: 2}}\n"
        ));
    }
    for i in 0..2 {
        text.push_str(&format!(
            "---\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {{name: v{i}}}\n\
             spec:\n  runStrategy: Always\n  template: {{spec: {{domain: {{devices: {{}}}}}}}}\n"
        ));
    }
    std::fs::write(tmp.path().join("p.yaml"), text).unwrap();
    let out = kvrender()
        .current_dir(tmp.path())
        .args(["migrate", "presets", "p.yaml"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    for vm in ["v0", "v1"] {
        let blocks = stderr
            .lines()
            .filter(|l| l.starts_with(&format!("VirtualMachine/{vm}: selected by preset")))
            .count();
        assert_eq!(blocks, 3, "{stderr}");
        assert!(
            stderr.contains(&format!(
                "VirtualMachine/{vm}: 37 more presets select it too"
            )),
            "{stderr}"
        );
    }
    assert!(
        stderr.contains(
            "note: also selected by p01, p02, p03, p04, p05, p06, p07, p08, p09, p10 and 29 more"
        ),
        "{stderr}"
    );
    assert!(stderr.len() < 20_000, "{} bytes", stderr.len());
}

/// A VirtualMachinePool's VMI is the one its first VM starts: the same bytes as `vmi` of that
/// VM written out as the pool's controller creates it. Its findings are on the pool.
#[test]
fn a_pool_starts_the_vmi_of_its_first_vm() {
    let pool = std::fs::read_to_string(crate::common::root().join("examples/vms/web-pool.yaml"))
        .expect("the example pool");
    let template = pool
        .split_once("    spec:\n")
        .map(|(_, spec)| spec)
        .expect("a template spec");
    // The controller's VM: named by index, the template's labels, the template's spec, and on
    // the VM and its template the label naming the pool's revision (its name and generation).
    const REVISION: &str = "kubevirt.io/vm-pool-revision-name: web-pool-1";
    let vm = format!(
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: web-pool-0\n  \
         namespace: web\n  labels:\n    app: web-pool\n    {REVISION}\nspec:\n{}",
        template
            .lines()
            .map(|l| format!("{}\n", l.strip_prefix("    ").unwrap_or(l)))
            .collect::<String>()
            .replace(
                "      labels:\n        app: web-pool\n",
                &format!("      labels:\n        app: web-pool\n        {REVISION}\n"),
            )
    );
    assert!(vm.matches(REVISION).count() == 2, "{vm}");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (pool_path, vm_path) = (dir.path().join("pool.yaml"), dir.path().join("vm.yaml"));
    std::fs::write(&pool_path, &pool).unwrap();
    std::fs::write(&vm_path, &vm).unwrap();
    let vmi = |path: &std::path::Path| {
        let out = kvrender()
            .arg("vmi")
            .arg(path)
            .output()
            .expect("kvrender runs");
        assert!(out.status.success(), "{}", crate::common::describe(&out));
        String::from_utf8(out.stdout).expect("UTF-8")
    };
    let from_pool = vmi(&pool_path);
    assert!(from_pool.contains("  name: web-pool-0\n"), "{from_pool}");
    assert!(
        from_pool.contains(&format!("    {REVISION}\n")),
        "{from_pool}"
    );
    assert!(from_pool.contains("kubevirt.io/cluster-instancetype-name: u1.small"));
    assert_eq!(from_pool, vmi(&vm_path));

    // A typo in the template: the finding is the pool's, at the template's line.
    std::fs::write(
        &pool_path,
        pool.replace("name: u1.small\n", "name: u1.smal\n"),
    )
    .unwrap();
    let out = kvrender().arg("vmi").arg(&pool_path).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "pool.yaml:22: error[KV011] VirtualMachinePool/web/web-pool: \
             spec.virtualMachineTemplate.spec.instancetype: "
        ) && stderr.contains("did you mean \"u1.small\"?"),
        "{stderr}"
    );

    // A value the schema's limits refuse: the API server refuses the pool, no VM, no VMI.
    assert!(pool.contains("  replicas: 3\n"), "{pool}");
    std::fs::write(
        &pool_path,
        pool.replace("  replicas: 3\n", "  replicas: -1\n"),
    )
    .unwrap();
    let out = kvrender().arg("vmi").arg(&pool_path).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(
        stderr.contains("error[KV004] VirtualMachinePool/web/web-pool: spec.replicas: "),
        "{stderr}"
    );
}

/// A VirtualMachineInstanceReplicaSet prints the VMI its controller creates: the template's
/// labels and spec, the presets that select it applied, a generated name, and the same spec as
/// the VMI document written out by hand.
#[test]
fn a_replica_set_prints_the_vmi_its_controller_creates() {
    const PRESET: &str = "\
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstancePreset
metadata: {name: small, namespace: apps}
spec:
  selector: {matchLabels: {size: small}}
  domain:
    resources: {requests: {memory: 256Mi}}
";
    let set = format!(
        "{PRESET}---
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstanceReplicaSet
metadata: {{name: cache, namespace: apps}}
spec:
  replicas: 3
  selector: {{matchLabels: {{app: cache}}}}
  template:
    metadata:
      generateName: cache-
      labels: {{app: cache, size: small}}
    spec:
      domain:
        devices: {{}}
"
    );
    let vmi_document = format!(
        "{PRESET}---
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata:
  name: cache-xxxxx
  namespace: apps
  labels: {{app: cache, size: small}}
spec:
  domain:
    devices: {{}}
"
    );
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (set_path, vmi_path) = (dir.path().join("rs.yaml"), dir.path().join("vmi.yaml"));
    std::fs::write(&set_path, &set).unwrap();
    std::fs::write(&vmi_path, &vmi_document).unwrap();
    let vmi = |path: &std::path::Path| {
        let out = kvrender()
            .args(["vmi", "--no-default-catalog"])
            .arg(path)
            .output()
            .expect("kvrender runs");
        assert!(out.status.success(), "{}", crate::common::describe(&out));
        String::from_utf8(out.stdout).expect("UTF-8")
    };
    let from_set = vmi(&set_path);
    assert!(
        from_set.contains("metadata:\n  generateName: cache-\n"),
        "{from_set}"
    );
    assert!(from_set.contains("virtualmachinepreset.kubevirt.io/small: kubevirt.io/v1"));
    assert!(from_set.contains("memory: 256Mi"), "{from_set}");
    // The replica set's own: its controller creates it.
    let owner = "  ownerReferences:\n  - apiVersion: kubevirt.io/v1\n    \
                 kind: VirtualMachineInstanceReplicaSet\n    name: cache\n    \
                 controller: true\n    blockOwnerDeletion: true\n  finalizers:\n";
    assert!(from_set.contains(owner), "{from_set}");
    // The same VMI as the document, but for its name and owner.
    let by_hand = vmi(&vmi_path);
    assert_eq!(
        from_set
            .replace("  generateName: cache-\n", "")
            .replace(owner, "  finalizers:\n"),
        by_hand.replace("  name: cache-xxxxx\n", ""),
    );

    // Without the preset, its VMIs ask for no memory: said of the replica set.
    let large = set.replace("{app: cache, size: small}", "{app: cache, size: large}");
    std::fs::write(&set_path, large).unwrap();
    let out = kvrender()
        .args(["vmi", "--no-default-catalog"])
        .arg(&set_path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "warning[KV034] VirtualMachineInstanceReplicaSet/apps/cache: spec.template.spec.domain: "
        ) && stderr.contains("no memory requested"),
        "{stderr}"
    );
}

/// A VirtualMachineInstance document is checked as written by KubeVirt's mutating webhook, so
/// an empty probe scheme is refused there, though Go would leave it out of the VMI it prints;
/// a VM's template with the same value is the VM webhook's to refuse, not the VMI's.
#[test]
fn an_empty_schema_value_in_a_vmi_document_is_refused_as_written() {
    let spec = "spec:\n  domain:\n    devices: {}\n    memory: {guest: 1Gi}\n  readinessProbe:\n    \
                httpGet: {port: 80, scheme: \"\"}\n";
    let vmi = format!(
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {{name: i}}\n{spec}"
    );
    let mut cmd = kvrender();
    cmd.args(["vmi", "--no-default-catalog", "-"]);
    let out = run_with_stdin(cmd, vmi);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(
            "-:9: warning[KV034] VirtualMachineInstance/i: spec.readinessProbe.httpGet.scheme: \
             KubeVirt's VMI webhook refuses this VirtualMachineInstance: \
             spec.readinessProbe.httpGet.scheme in body should be one of [HTTP HTTPS]"
        ),
        "{stderr}"
    );

    let template = spec.replace('\n', "\n    ");
    let vm = format!(
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {{name: v}}\nspec:\n  \
         runStrategy: Always\n  template:\n    {template}"
    );
    let mut cmd = kvrender();
    cmd.args(["vmi", "--no-default-catalog", "-"]);
    let out = run_with_stdin(cmd, vm);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("KV034"), "{stderr}");
}

/// Presets given with `--catalog` (exported from the cluster, say) select VMIs as the inputs'
/// presets do, in `vmi`, `diff`, `validate` and `build`; an input preset shadows one of
/// `--catalog` with the same namespace and name.
#[test]
fn presets_of_the_catalog_select_vmis_and_input_presets_shadow_them() {
    let tmp = tempfile::tempdir().unwrap();
    let preset = |name: &str, domain: &str| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
             name: {name}\n  namespace: web\nspec:\n  selector:\n    matchLabels: {{size: \
             small}}\n  domain:\n    devices: {{}}\n{domain}"
        )
    };
    std::fs::write(
        tmp.path().join("cluster.yaml"),
        format!(
            "{}---\n{}",
            preset(
                "memory",
                "    resources:\n      requests:\n        memory: 1Gi\n"
            ),
            preset("cpu", "    cpu:\n      cores: 2\n"),
        ),
    )
    .unwrap();
    let vm = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm1\n  \
              namespace: web\nspec:\n  runStrategy: Halted\n  template:\n    metadata:\n      \
              labels: {size: small}\n    spec:\n      domain:\n        devices: {}\n";
    std::fs::write(
        tmp.path().join("vm.yaml"),
        format!("{vm}---\n{}", preset("cpu", "    cpu:\n      cores: 3\n")),
    )
    .unwrap();
    let run = |args: &[&str]| {
        kvrender()
            .current_dir(tmp.path())
            .args(args)
            .args([
                "--no-default-catalog",
                "--catalog",
                "cluster.yaml",
                "vm.yaml",
            ])
            .output()
            .unwrap()
    };

    let out = run(&["vmi"]);
    assert!(out.status.success(), "{}", describe(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let vmi: serde_json::Value = load::yaml::parse_document(stdout.trim_start_matches("---\n"))
        .unwrap_or_else(|e| panic!("{e:?}\n{stdout}"));
    assert_eq!(
        vmi["spec"]["domain"]["resources"]["requests"]["memory"], "1Gi",
        "{stdout}"
    );
    assert_eq!(vmi["spec"]["domain"]["cpu"]["cores"], 3, "{stdout}");
    let annotations = vmi["metadata"]["annotations"].as_object().unwrap();
    for name in ["memory", "cpu"] {
        assert_eq!(
            annotations[&format!("virtualmachinepreset.kubevirt.io/{name}")],
            "kubevirt.io/v1",
            "{stdout}"
        );
    }

    let out = run(&["diff"]);
    assert!(out.status.success(), "{}", describe(&out));
    let diff = String::from_utf8_lossy(&out.stdout);
    assert!(
        diff.contains("+  resources:\n+    requests:\n+      memory: 1Gi\n"),
        "{diff}"
    );

    // Without the cluster's memory preset the VMI would ask for no memory, which the VMI
    // webhook refuses (`KV034`).
    for args in [&["validate"][..], &["build"]] {
        let out = run(args);
        assert!(out.status.success(), "{}", describe(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("KV034"), "{args:?}: {stderr}");
    }
    let out = kvrender()
        .current_dir(tmp.path())
        .args(["validate", "--no-default-catalog", "vm.yaml"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("warning[KV034] VirtualMachine/web/vm1"),
        "{stdout}"
    );

    // `migrate presets` migrates the inputs' presets only, and says so of the others.
    let out = run(&["migrate", "presets"]);
    assert!(out.status.success(), "{}", describe(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("kind: VirtualMachinePreference\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  name: cpu\n") && !stdout.contains("  name: memory\n"),
        "{stdout}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    for (line, name) in [(1, "memory"), (15, "cpu")] {
        assert!(
            stderr.contains(&format!(
                "cluster.yaml:{line}: warning[KV014] VirtualMachineInstancePreset/web/{name}: a \
                 preset given with `--catalog` is not migrated"
            )),
            "{stderr}"
        );
    }
}

/// Two presets of one namespace and name: a cluster holds one of them, so the VMI gets the
/// first, with a warning, instead of being refused for a conflict of the preset with itself.
/// A second instancetype of a name is told the same way.
#[test]
fn a_second_definition_is_a_warning_and_the_first_is_used() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a.yaml");
    let preset = |cores: u32| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata: {{name: p}}\n\
             spec:\n  selector: {{matchLabels: {{app: web}}}}\n  domain: {{cpu: {{cores: {cores}}}}}\n"
        )
    };
    let instancetype = |guest: u32| {
        format!(
            "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
             metadata: {{name: it}}\nspec: {{cpu: {{guest: {guest}}}, memory: {{guest: 1Gi}}}}\n"
        )
    };
    std::fs::write(
        &file,
        [
            preset(1),
            preset(2),
            instancetype(3),
            instancetype(4),
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\n\
             metadata: {name: v, labels: {app: web}}\nspec: {domain: {devices: {}, memory: {guest: 1Gi}}}\n"
                .into(),
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: w}\n\
             spec: {runStrategy: Always, instancetype: {name: it}, template: {spec: {domain: {}}}}\n"
                .into(),
        ]
        .join("---\n"),
    )
    .unwrap();
    let out = kvrender()
        .args(["vmi", "--no-default-catalog"])
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    for (line, kind) in [
        (10, "VirtualMachineInstancePreset/p"),
        (22, "VirtualMachineClusterInstancetype/it"),
    ] {
        assert!(
            stderr.contains(&format!("a.yaml:{line}: warning[KV020] {kind}:"))
                && stderr.contains("built with the first"),
            "{stderr}"
        );
    }
    assert!(!stderr.contains("conflict"), "{stderr}");
    // The first preset's cores, the first instancetype's vCPUs.
    assert!(stdout.contains("virtualmachinepreset.kubevirt.io/p: kubevirt.io/v1"));
    assert!(stdout.contains("cores: 1\n"), "{stdout}");
    assert!(stdout.contains("sockets: 3\n"), "{stdout}");
}

/// The API server writes the schema's `readOnly: true` into a `containerPath` volume that
/// leaves it out, so the VMI a VM starts has it; the preset stage, before the API server,
/// does not.
#[test]
fn a_container_path_volume_gets_the_schemas_read_only() {
    let vm = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: cp}\n\
              spec:\n  runStrategy: Always\n  template:\n    spec:\n      domain:\n\
              \x20       memory: {guest: 1Gi}\n        devices:\n\
              \x20         filesystems: [{name: host, virtiofs: {}}]\n      volumes:\n\
              \x20     - {name: host, containerPath: {path: /var/run/x}}\n";
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("vm.yaml");
    std::fs::write(&file, vm).unwrap();
    let run = |stage: &str| {
        let out = kvrender()
            .args(["vmi", "--no-default-catalog", "--stage", stage])
            .arg(&file)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
        String::from_utf8(out.stdout).unwrap()
    };
    let full = run("full");
    assert!(
        full.contains("containerPath:\n      path: /var/run/x\n      readOnly: true\n"),
        "{full}"
    );
    assert!(!run("presets").contains("readOnly"));
}

/// KubeVirt's VM webhook gives a VM without an architecture the one the DataSource of its
/// first DataVolume template that names one holds (`template.kubevirt.io/architecture`),
/// unless its preference gives one first; the VMI then gets that architecture's defaults.
#[test]
fn a_data_source_gives_the_vm_its_architecture() {
    let data_source = |name: &str, labels: &str, source: &str| {
        format!(
            "apiVersion: cdi.kubevirt.io/v1beta1\nkind: DataSource\n\
             metadata: {{name: {name}, namespace: images, labels: {{{labels}}}}}\n\
             spec: {{source: {source}}}\n"
        )
    };
    let vm = |name: &str, sources: &[&str], extra: &str| {
        let templates: Vec<String> = sources
            .iter()
            .enumerate()
            .map(|(i, s)| {
                format!(
                    "  - metadata: {{name: {name}-{i}}}\n    spec:\n\
                     \x20     sourceRef: {{kind: {s}}}\n\
                     \x20     storage: {{resources: {{requests: {{storage: 1Gi}}}}}}\n"
                )
            })
            .collect();
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {{name: {name}}}\n\
             spec:\n  runStrategy: Always\n{extra}  dataVolumeTemplates:\n{}\
             \x20 template:\n    spec:\n      domain:\n        memory: {{guest: 1Gi}}\n\
             \x20       devices: {{}}\n",
            templates.concat()
        )
    };
    let documents = [
        data_source(
            "arm",
            "template.kubevirt.io/architecture: arm64",
            "{pvc: {name: p, namespace: images}}",
        ),
        data_source(
            "other",
            "template.kubevirt.io/architecture: ppc64le",
            "{pvc: {name: p, namespace: images}}",
        ),
        data_source(
            "s390x",
            "template.kubevirt.io/architecture: s390x",
            "{pvc: {name: p, namespace: images}}",
        ),
        // A DataSource that points at another: the other's label counts, not its own.
        data_source(
            "alias",
            "template.kubevirt.io/architecture: arm64",
            "{dataSource: {name: s390x, namespace: images}}",
        ),
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterPreference\n\
         metadata: {name: amd}\nspec: {preferredArchitecture: amd64}\n"
            .to_string(),
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterPreference\n\
         metadata: {name: plain}\nspec: {devices: {preferredDiskBus: virtio}}\n"
            .to_string(),
        vm("bare", &["DataSource, name: arm, namespace: images"], ""),
        vm(
            "skips",
            &[
                "DataSource, name: missing, namespace: images",
                "datasource, name: other, namespace: images",
                "DataSource, name: alias, namespace: images",
            ],
            "",
        ),
        vm(
            "plain",
            &["DataSource, name: arm, namespace: images"],
            "  preference: {name: plain}\n",
        ),
        vm(
            "preferred",
            &["DataSource, name: arm, namespace: images"],
            "  preference: {name: amd}\n",
        ),
        vm("elsewhere", &["DataSource, name: arm"], ""),
        // Go compares the kind with Unicode case folding, in which `ſ` is an `s`.
        vm("folded", &["Dataſource, name: arm, namespace: images"], ""),
    ];
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("vms.yaml");
    std::fs::write(&file, documents.join("---\n")).unwrap();
    let out = kvrender()
        .args(["vmi", "--no-default-catalog"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let vmis: Vec<serde_json::Value> = load::parse_text(&std::sync::Arc::from("out"), &stdout)
        .objects
        .into_iter()
        .map(|o| o.value)
        .collect();
    let arch = |name: &str| {
        let vmi = vmis
            .iter()
            .find(|v| v["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no VMI {name}:\n{stdout}"));
        (
            vmi["spec"]["architecture"].as_str().unwrap().to_string(),
            vmi["spec"]["domain"]["machine"]["type"]
                .as_str()
                .unwrap()
                .to_string(),
        )
    };
    let expect = |a: &str, m: &str| (a.to_string(), m.to_string());
    assert_eq!(arch("bare"), expect("arm64", "virt"));
    // Not found, then an architecture KubeVirt does not take, then an alias of s390x.
    assert_eq!(arch("skips"), expect("s390x", "s390-ccw-virtio"));
    assert_eq!(arch("plain"), expect("arm64", "virt"));
    assert_eq!(arch("preferred"), expect("amd64", "q35"));
    // Looked up in the VM's namespace, where there is none.
    assert_eq!(arch("elsewhere"), expect("amd64", "q35"));
    assert_eq!(arch("folded"), expect("arm64", "virt"));
    // The preset stage leaves out what the VM webhook writes: the VM without matchers has no
    // architecture there yet.
    let out = kvrender()
        .args(["vmi", "--no-default-catalog", "--stage", "presets"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let bare = load::parse_text(&std::sync::Arc::from("out"), &stdout)
        .objects
        .into_iter()
        .find(|o| o.name() == "bare")
        .unwrap_or_else(|| panic!("no VMI bare:\n{stdout}"));
    assert_eq!(bare.value["spec"].get("architecture"), None, "{stdout}");
}

/// KubeVirt's VM webhook checks the matchers before anything else: a VM whose matcher names
/// nothing, or both a name and a volume to infer from, is refused with the webhook's words
/// (as `validate` says), and there is no VMI.
#[test]
fn a_vm_with_a_matcher_the_webhook_refuses_gets_no_vmi() {
    let vm = |name: &str, matchers: &str| {
        format!(
            "---\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {{name: {name}}}\n\
             spec:\n  runStrategy: Always\n{matchers}  template:\n    spec:\n      domain:\n\
             \x20       devices: {{}}\n      volumes:\n      - name: root\n\
             \x20       persistentVolumeClaim: {{claimName: root}}\n"
        )
    };
    let text = [
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
         metadata: {name: small}\nspec: {cpu: {guest: 1}, memory: {guest: 1Gi}}\n"
            .to_string(),
        vm(
            "nameless",
            "  instancetype: {kind: VirtualMachineClusterInstancetype}\n",
        ),
        vm(
            "empty-preference",
            "  instancetype: {name: small}\n  preference: {}\n",
        ),
        vm(
            "both",
            "  instancetype: {name: small, inferFromVolume: root}\n",
        ),
        vm("fine", "  instancetype: {name: small}\n"),
    ]
    .concat();
    for command in ["vmi", "validate"] {
        let out = run_on_text(&[command, "--no-default-catalog"], "vms.yaml", &text);
        assert_eq!(out.status.code(), Some(1), "{command}: {}", describe(&out));
        let report = String::from_utf8_lossy(&out.stderr).to_string()
            + &String::from_utf8_lossy(&out.stdout);
        for wanted in [
            "vms.yaml:11: error[KV012] VirtualMachine/nameless: spec.instancetype: Either Name or \
             InferFromVolume should be provided within the InstancetypeMatcher",
            "vms.yaml:26: error[KV012] VirtualMachine/empty-preference: spec.preference: Either \
             Name or InferFromVolume should be provided within the PreferenceMatcher",
            "vms.yaml:40: error[KV012] VirtualMachine/both: spec.instancetype.name: Name already \
             set, should be cleared before setting inferFromVolume",
        ] {
            assert!(report.contains(wanted), "{command}: {wanted}\n{report}");
        }
        assert_eq!(report.matches("error[").count(), 3, "{command}: {report}");
        if command == "vmi" {
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert_eq!(
                stdout.matches("kind: VirtualMachineInstance\n").count(),
                1,
                "{stdout}"
            );
            assert!(stdout.contains("name: fine"), "{stdout}");
        }
    }
}

/// A VM a preset selects with a field of the wrong type where KubeVirt reads it is refused by
/// the API server today: `migrate presets` says so at the field, and `--with-vms` does not
/// print it with the advice followed, while a well-typed VM beside it is.
#[test]
fn migrate_presets_leaves_out_a_vm_of_the_wrong_types() {
    let vm = |name: &str, domain: &str| {
        format!(
            "---\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {{name: {name}}}\n\
             spec:\n  runStrategy: Always\n  template:\n    metadata: {{labels: {{app: web}}}}\n\
             \x20   spec:\n      domain:\n{domain}        devices: {{}}\n"
        )
    };
    let text = format!(
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata: {{name: p2}}\n\
         spec:\n  selector: {{matchLabels: {{app: web}}}}\n  domain:\n\
         \x20   firmware: {{bootloader: {{efi: {{}}}}}}\n{}{}",
        vm("bad", "        cpu: \"two\"\n        firmware: []\n"),
        vm("good", ""),
    );
    let out = run_on_text(
        &["migrate", "presets", "--with-vms", "--no-default-catalog"],
        "p.yaml",
        &text,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    for (line, field, says) in [
        (18, "cpu", "must be a mapping, not a string"),
        (19, "firmware", "must be a mapping, not a list"),
    ] {
        assert!(
            stderr.contains(&format!(
                "p.yaml:{line}: error[KV004] VirtualMachine/bad: spec.template.spec.domain.{field}: {says}"
            )) && stderr.contains("the advice for `p2` is not followed until this is fixed"),
            "{stderr}"
        );
    }
    assert!(
        stdout.contains("name: good") && !stdout.contains("name: bad"),
        "{stdout}"
    );
}

/// An instancetype whose memory the API server refuses (`1Gi1`) gives its `KV004` and no VMI;
/// `vmi` does not then also report the webhook's requirement check on it, as if it had no
/// memory at all.
#[test]
fn an_unreadable_instancetype_gives_no_follow_on_requirement_finding() {
    let vms = "apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata:
  name: bad
spec:
  cpu:
    guest: 1
  memory:
    guest: 1Gi1
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: vm
spec:
  runStrategy: Always
  instancetype: {name: bad}
  preference: {name: fedora}
  template:
    spec:
      domain:
        devices: {}
";
    let mut cmd = kvrender();
    cmd.args(["vmi", "-"]);
    let out = run_with_stdin(cmd, vms);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    let findings: Vec<&str> = stderr.lines().filter(|l| l.contains("[KV")).collect();
    assert_eq!(findings.len(), 1, "{stderr}");
    assert!(
        findings[0].starts_with("-:9: error[KV004] VirtualMachineClusterInstancetype/bad:"),
        "{stderr}"
    );
    assert!(!stderr.contains("KV033"), "{stderr}");
}

/// A preset whose name is too long for the annotation KubeVirt marks a VMI with: `vmi` prints
/// no VMI for what it selects and says why; the preset stage prints the webhook's VMI with a
/// warning; `validate` warns on the preset and on what it selects. The 63-character preset fits.
#[test]
fn a_preset_name_too_long_for_its_annotation() {
    let _guard = snapshot_settings();
    let run = |args: &[&str]| {
        outcome(
            kvrender()
                .current_dir(testdata("vmi"))
                .args(args)
                .args(["--no-default-catalog", "preset-name-too-long.yaml"]),
        )
    };
    insta::assert_snapshot!("preset_name_too_long_vmi", run(&["vmi"]));
    let presets = run(&["vmi", "--stage", "presets"]);
    assert!(presets.starts_with("exit: 0"), "{presets}");
    assert_eq!(
        presets
            .matches("virtualmachinepreset.kubevirt.io/long-")
            .count(),
        // long-vm and long-vmi each carry the annotation and get a warning naming it.
        4,
        "{presets}"
    );
    insta::assert_snapshot!("preset_name_too_long_validate", run(&["validate"]));
}

/// With `instancetype.referencePolicy: expand` (or `expandAll`) the VM controller writes the
/// expansion into a VM that names an instancetype or preference, and starts the VMI from that
/// VM: the VMI names neither, counts the update in its VM generation, and has the default
/// interface the expansion adds before the preference turns the pod interface off. The
/// expansion writes the CPU defaults into the VM, so a preset's CPU no longer reaches it. With
/// `expand`, a VM whose status records a ControllerRevision keeps its references.
#[test]
fn the_reference_policy_expands_the_vm_before_its_vmi_is_made() {
    let vmis = |extra: &[&str]| {
        let mut cmd = kvrender();
        cmd.current_dir(testdata("vmi"))
            .args(["vmi", "--no-default-catalog", "reference-policy.yaml"])
            .args(extra);
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", describe(&out));
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let docs = load::parse_text(&std::sync::Arc::from("out"), &stdout).objects;
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (
            docs.into_iter().map(|o| o.value).collect::<Vec<_>>(),
            stderr,
        )
    };
    let annotation = |vmi: &serde_json::Value, key: &str| {
        vmi["metadata"]["annotations"][key]
            .as_str()
            .map(str::to_string)
    };

    for extra in [
        &[][..],
        &["--cluster-config", "reference-policy-reference.yaml"],
    ] {
        let (vmis, stderr) = vmis(extra);
        let [sized, preset] = &vmis[..] else {
            panic!("{vmis:?}")
        };
        assert_eq!(
            annotation(sized, "kubevirt.io/cluster-instancetype-name").as_deref(),
            Some("small")
        );
        assert_eq!(
            annotation(sized, "kubevirt.io/vm-generation").as_deref(),
            Some("1")
        );
        assert!(
            sized["spec"]["domain"]["devices"]["interfaces"].is_null(),
            "{sized}"
        );
        assert!(sized["spec"]["networks"].is_null(), "{sized}");
        assert_eq!(preset["spec"]["domain"]["cpu"]["cores"], 4, "{preset}");
        assert!(!stderr.contains("not applied"), "{stderr}");
    }

    for policy in [
        "reference-policy-expand.yaml",
        "reference-policy-expandAll.yaml",
    ] {
        let (vmis, stderr) = vmis(&["--cluster-config", policy]);
        let [sized, preset] = &vmis[..] else {
            panic!("{vmis:?}")
        };
        for vmi in [sized, preset] {
            let annotations = vmi["metadata"]["annotations"].as_object().unwrap();
            assert!(
                annotations.keys().all(|k| !k.contains("preference-name")
                    && !k.contains("instancetype-name")
                    && !k.starts_with("virtualmachinepreset")),
                "{policy}: {vmi}"
            );
            assert_eq!(
                annotation(vmi, "kubevirt.io/vm-generation").as_deref(),
                Some("2")
            );
            assert_eq!(
                vmi["spec"]["domain"]["devices"]["interfaces"],
                serde_json::json!([{"name": "default", "bridge": {}}]),
                "{policy}"
            );
            assert_eq!(
                vmi["spec"]["domain"]["devices"]["autoattachPodInterface"],
                false
            );
        }
        assert_eq!(sized["spec"]["domain"]["cpu"]["sockets"], 2, "{sized}");
        assert_eq!(preset["spec"]["domain"]["cpu"]["cores"], 1, "{preset}");
        assert!(
            stderr.contains("VirtualMachineInstancePreset 'four-cores': spec.cpu not applied"),
            "{stderr}"
        );
    }

    // A ControllerRevision already taken: `expand` leaves the VM as it is, `expandAll` not.
    let text = std::fs::read_to_string(testdata("vmi").join("reference-policy.yaml")).unwrap();
    let with_revision = format!(
        "{text}status:\n  instancetypeRef:\n    name: small\n    kind: \
         VirtualMachineClusterInstancetype\n    controllerRevisionRef:\n      name: \
         preset-cores-small-1\n"
    );
    for (policy, generation) in [("expand", "1"), ("expandAll", "2")] {
        let mut cmd = kvrender();
        cmd.current_dir(testdata("vmi")).args([
            "vmi",
            "--no-default-catalog",
            "--cluster-config",
            &format!("reference-policy-{policy}.yaml"),
            "-",
        ]);
        let out = run_with_stdin(cmd, &with_revision);
        assert!(out.status.success(), "{}", describe(&out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let docs = load::parse_text(&std::sync::Arc::from("out"), &stdout).objects;
        assert_eq!(
            annotation(&docs[1].value, "kubevirt.io/vm-generation").as_deref(),
            Some(generation),
            "{policy}"
        );
    }

    // KubeVirt's schema takes three values.
    let out = run_with_stdin(
        {
            let mut cmd = kvrender();
            cmd.current_dir(testdata("vmi")).args([
                "vmi",
                "--no-default-catalog",
                "--cluster-config",
                "-",
                "reference-policy.yaml",
            ]);
            cmd
        },
        "spec:\n  configuration:\n    instancetype:\n      referencePolicy: Expand\n",
    );
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "invalid `spec.configuration.instancetype.referencePolicy`: `Expand` (KubeVirt \
             takes `reference`, `expand` or `expandAll`)"
        ),
        "{}",
        describe(&out)
    );
}

/// A VM whose presets conflict starts no VMI today: `migrate` says so at its labels, and its
/// advice does not claim that KubeVirt applies the presets' parts to it today.
#[test]
fn migrate_presets_says_a_vm_whose_presets_conflict_starts_nothing_today() {
    let dir = tempfile::tempdir().unwrap();
    let preset = |name: &str, label: &str, memory: &str| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata: \
             {{name: {name}}}\nspec:\n  selector: {{matchLabels: {{{label}}}}}\n  domain:\n    \
             devices: {{}}\n    resources: {{requests: {{memory: {memory}}}}}\n---\n"
        )
    };
    let vm = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: shop}\nspec:\n  \
              runStrategy: Always\n  template:\n    metadata:\n      labels: {tier: web, app: \
              shop}\n    spec:\n      domain: {devices: {}}\n";
    let file = dir.path().join("all.yaml");
    // `migrate presets` of `text`: its exit code and what it says.
    let migrate = |text: &str| {
        std::fs::write(&file, text).unwrap();
        let out = kvrender()
            .args(["migrate", "presets"])
            .arg(&file)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let both = [
        preset("small", "tier: web", "2Gi"),
        preset("big", "app: shop", "4Gi"),
    ];
    let (code, stderr) = migrate(&format!("{}{}{vm}", both[0], both[1]));
    assert_eq!(code, Some(0), "{stderr}");
    let warning = stderr
        .lines()
        .find(|l| l.contains("refuses every VirtualMachineInstance it starts today"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(
        warning.contains(
            "all.yaml:26: warning[KV014] VirtualMachine/shop: spec.template.metadata.labels: \
             KubeVirt refuses every VirtualMachineInstance it starts today (VirtualMachinePresets \
             cannot be applied due to conflicts: presets "
        ),
        "{warning}"
    );
    assert!(!stderr.contains("applies them to it today"), "{stderr}");
    // Without the conflict, the preset's part is one KubeVirt applies today.
    let (_, stderr) = migrate(&format!("{}{vm}", both[0]));
    assert!(stderr.contains("applies them to it today"), "{stderr}");
    assert!(!stderr.contains("refuses every"), "{stderr}");
}

/// A VirtualMachine defined twice gets a VMI (and a diff) for each definition, with a warning
/// at the second that points at the first.
#[test]
fn a_vm_defined_twice_gets_two_vmis_and_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let vm = |running: &str| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: twice\n\
             spec:\n  runStrategy: {running}\n  template:\n    spec:\n      domain:\n        \
             devices: {{}}\n        memory: {{guest: 1Gi}}\n"
        )
    };
    std::fs::write(tmp.path().join("a.yaml"), vm("Always")).unwrap();
    std::fs::write(
        tmp.path().join("b.yaml"),
        format!(
            "{}---\n{}",
            vm("Halted"),
            vm("Manual").replace("twice", "once")
        ),
    )
    .unwrap();
    for (command, printed) in [("vmi", "kind: VirtualMachineInstance\n"), ("diff", "+++ ")] {
        let out = kvrender()
            .current_dir(tmp.path())
            .args([command, "--no-default-catalog", "."])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{command}: {stderr}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout)
                .matches(printed)
                .count(),
            3,
            "{command}"
        );
        assert_eq!(
            stderr,
            "./b.yaml:4: warning[KV020] VirtualMachine/twice: VirtualMachine/twice is defined \
             twice: first at ./a.yaml:4 (document 1); both are printed, and a `kubectl apply` \
             of them keeps the last\n",
            "{command}"
        );
    }
}

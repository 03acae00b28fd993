//! `kvrender expand` through the binary: representative expansions and the diagnostics of
//! VMs that do not expand. The emitted text is snapshotted, so the emitter is covered too.

use std::fs;

use crate::common::{describe, kvrender, outcome, run_with_stdin, snapshot_settings, testdata};

#[test]
fn namespaced_instancetype_and_cluster_preference() {
    let _guard = snapshot_settings();
    insta::assert_snapshot!(outcome(kvrender().current_dir(testdata("expand")).args([
        "expand",
        "--no-default-catalog",
        "namespaced-instancetype.yaml"
    ])));
}

#[test]
fn conflicts_missing_references_and_bad_kinds() {
    let _guard = snapshot_settings();
    insta::assert_snapshot!(outcome(kvrender().current_dir(testdata("expand")).args([
        "expand",
        "--no-default-catalog",
        "failures.yaml"
    ])));
}

/// A reference that misses by a letter or names the wrong scope says what was probably meant,
/// among the user's objects and the embedded catalog's.
#[test]
fn near_misses_get_a_hint() {
    let _guard = snapshot_settings();
    insta::assert_snapshot!(outcome(
        kvrender()
            .current_dir(testdata("expand"))
            .args(["expand", "near-misses.yaml"])
    ));
}

#[test]
fn broken_yaml_names_file_line_and_column() {
    let _guard = snapshot_settings();
    insta::assert_snapshot!(outcome(kvrender().current_dir(testdata("expand")).args([
        "expand",
        "--no-default-catalog",
        "broken.yaml"
    ])));
}

#[test]
fn cluster_profile_from_a_kubevirt_resource() {
    let _guard = snapshot_settings();
    insta::assert_snapshot!(outcome(kvrender().current_dir(testdata("expand")).args([
        "expand",
        "--no-default-catalog",
        "--cluster-config",
        "kubevirt-cr.yaml",
        "failures.yaml",
    ])));
}

/// Every shape `--cluster-config` reads gives the same profile; any other file is a usage
/// error, never a silent fall back to KubeVirt's defaults.
#[test]
fn cluster_config_shapes() {
    let tmp = tempfile::tempdir().unwrap();
    let vm = tmp.path().join("vm.yaml");
    fs::write(
        &vm,
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
         metadata: {name: small}\nspec: {cpu: {guest: 1}, memory: {guest: 1Gi}}\n---\n\
         apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: v}\n\
         spec: {instancetype: {name: small}, template: {spec: {}}}\n",
    )
    .unwrap();
    let config = "{evictionStrategy: LiveMigrate, network: {defaultNetworkInterface: masquerade}}";
    let resource = format!(
        "apiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata: {{name: kubevirt, namespace: kubevirt}}\n\
         spec: {{configuration: {config}}}\n"
    );
    let indented: String = resource.lines().map(|l| format!("  {l}\n")).collect();
    let run = |name: &str, text: &str| {
        let file = tmp.path().join(name);
        fs::write(&file, text).unwrap();
        kvrender()
            .args(["expand", "--no-default-catalog", "--cluster-config"])
            .arg(&file)
            .arg(&vm)
            .output()
            .unwrap()
    };
    for (name, text) in [
        ("resource.yaml", resource.clone()),
        (
            "list.yaml",
            format!("apiVersion: v1\nkind: List\nitems:\n-{}", &indented[1..]),
        ),
        (
            "among-others.yaml",
            format!("kind: ConfigMap\napiVersion: v1\n---\n{resource}"),
        ),
        ("bare.yaml", format!("{config}\n")),
        ("configuration.yaml", format!("configuration: {config}\n")),
        (
            "no-kind.yaml",
            format!("spec: {{configuration: {config}}}\n"),
        ),
    ] {
        let out = run(name, &text);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains("masquerade: {}") && stdout.contains("evictionStrategy: LiveMigrate"),
            "{name}:\n{stdout}"
        );
    }
    for (name, text, says) in [
        (
            "a-vm.yaml",
            fs::read_to_string(&vm).unwrap(),
            "no KubeVirt resource among the documents",
        ),
        (
            "typo.yaml",
            "evictionStrategi: LiveMigrate\n".to_string(),
            "no KubeVirt configuration field",
        ),
        (
            "old-name.yaml",
            "networkConfiguration: {defaultNetworkInterface: masquerade}\n".to_string(),
            "KubeVirt's field is `network`",
        ),
        ("empty.yaml", String::new(), "the file is empty"),
        // A cluster has one KubeVirt resource: with two, which one is meant is not guessed.
        (
            "two.yaml",
            format!(
                "{resource}---\n{}",
                resource.replace("name: kubevirt,", "name: other,")
            ),
            "two KubeVirt resources (kubevirt/kubevirt at line 1, kubevirt/other at line 6)",
        ),
        // A field of the wrong type is named with its line, in a resource and a bare one.
        (
            "wrong-type.yaml",
            "apiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata: {name: kubevirt}\nspec:\n\
             \x20 configuration:\n    machineType: q35\n    network:\n\
             \x20     defaultNetworkInterface: [bridge]\n"
                .to_string(),
            "wrong-type.yaml: line 8: `spec.configuration.network.defaultNetworkInterface` must \
             be a string",
        ),
        (
            "bare-wrong-type.yaml",
            "developerConfiguration:\n  featureGates: [Snapshot]\n  memoryOvercommit: \"x\"\n"
                .to_string(),
            "bare-wrong-type.yaml: line 3: `spec.configuration.developerConfiguration.\
             memoryOvercommit` must be a positive integer",
        ),
    ] {
        let out = run(name, &text);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(
            stderr.contains(name) && stderr.contains(says),
            "{name}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{name}");
    }
}

/// Two definitions of an instancetype: `expand` warns that it took the first, where `build` and
/// `validate` refuse them.
#[test]
fn duplicate_instancetypes_are_kv020() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a.yaml");
    fs::write(
        &file,
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineInstancetype\n\
         metadata: {name: it2}\nspec: {cpu: {guest: 5}, memory: {guest: 1Gi}}\n---\n\
         apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: v2, namespace: default}\n\
         spec: {instancetype: {kind: VirtualMachineInstancetype, name: it2}, template: {spec: {}}}\n---\n\
         apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineInstancetype\n\
         metadata: {name: it2, namespace: default}\nspec: {cpu: {guest: 6}, memory: {guest: 1Gi}}\n",
    )
    .unwrap();
    let out = kvrender()
        .args(["expand", "--no-default-catalog"])
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // A warning: the output is what KubeVirt gives for the first definition.
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("a.yaml:13: warning[KV020]") && stderr.contains("used the first"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("sockets: 5"));
}

/// A VM defined twice is expanded and printed twice, with a warning at the second definition's
/// name that points at the first; a VM of the same name in another namespace is another VM.
#[test]
fn a_vm_defined_twice_is_printed_twice_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("a.yaml"), vms("p", 100, false)).unwrap();
    fs::write(
        tmp.path().join("b.yaml"),
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  namespace: other\n  \
         name: p-7\nspec: {template: {spec: {domain: {devices: {}}}}}\n---\n\
         apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  labels: {a: b}\n  \
         name: p-70\nspec: {template: {spec: {domain: {devices: {}}}}}\n",
    )
    .unwrap();
    for threads in ["1", "2"] {
        let out = kvrender()
            .current_dir(tmp.path())
            .args(["--threads", threads, "expand", "--no-default-catalog", "."])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert_eq!(stdout.matches("name: p-70\n").count(), 2);
        assert_eq!(stdout.matches("name: p-7\n").count(), 2);
        assert_eq!(
            stderr,
            "./b.yaml:12: warning[KV020] VirtualMachine/p-70: VirtualMachine/p-70 is defined \
             twice: first at ./a.yaml:915 (document 71); both are expanded and printed, and a \
             `kubectl apply` of them keeps the last\n"
        );
    }
}

/// A field KubeVirt does not know gets the `KV022` warning `validate` gives, at its line: the
/// rules never read it, so a misspelt one would otherwise be a silent no-op.
#[test]
fn unknown_fields_of_a_vm_are_warned_about_at_their_lines() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(
        tmp.path().join("vm.yaml"),
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: typo\nspec:\n  \
         runStrategy: Always\n  template:\n    spec:\n      domain:\n        cpu:\n          \
         dedicatedCPUPlacement: true\n        devices: {}\n        memory: {guest: 1Gi}\n",
    )
    .unwrap();
    let out = kvrender()
        .current_dir(tmp.path())
        .args(["expand", "--no-default-catalog", "vm.yaml"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.starts_with(
            "vm.yaml:11: warning[KV022] VirtualMachine/typo: \
             spec.template.spec.domain.cpu.dedicatedCPUPlacement: unknown field"
        ) && stderr.contains("did you mean `dedicatedCpuPlacement`?")
            && stderr.lines().count() == 1,
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("name: typo"));
}

/// Empty standard input is refused, as `kubectl apply -f -` refuses it: a command before the
/// pipe that failed leaves it so, and a check must not pass it as clean.
#[test]
fn empty_stdin_is_refused_by_every_command_that_reads_it() {
    for args in [
        &["expand", "-"][..],
        &["validate", "-"],
        &["build", "-"],
        &["vmi", "-"],
        &["build", "--catalog", "-", "../examples/vms"],
    ] {
        // Empty, or holding no object: only markers, comments or null documents.
        let empty = ") is empty: nothing to read";
        let no_object = ") holds no object (only comments, `---` or null documents)";
        for (input, says) in [
            (&b""[..], empty),
            (b"\n  \n", empty),
            (b"---\n", no_object),
            (b"# nothing\n---\n...\n", no_object),
            (b"~\n", no_object),
            (b"\xef\xbb\xbf", no_object),
        ] {
            let mut cmd = kvrender();
            cmd.current_dir(testdata("")).args(args);
            let out = run_with_stdin(cmd, input);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
            assert!(out.stdout.is_empty(), "{args:?}");
            assert!(
                stderr.contains("standard input (`-`, named as ") && stderr.contains(says),
                "{args:?}: {stderr}"
            );
        }
    }
}

/// A file named on its own that holds no object gets a note (a CI step naming a file a failed
/// command left empty must not look clean); one found in a folder does not.
#[test]
fn a_named_file_without_an_object_gets_a_note() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("empty.yaml"), "---\n# later\n").unwrap();
    for (arg, noted) in [("empty.yaml", true), (".", false)] {
        let out = kvrender()
            .current_dir(tmp.path())
            .args(["validate", arg])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{arg}: {stderr}");
        assert_eq!(
            stderr.contains("note: empty.yaml: no object in it (empty, or only comments"),
            noted,
            "{arg}: {stderr}"
        );
    }
}

#[test]
fn stdin_is_read_with_a_dash() {
    let input = std::fs::read(testdata("expand/namespaced-instancetype.yaml")).unwrap();
    let from_file = kvrender()
        .current_dir(testdata("expand"))
        .args([
            "expand",
            "--no-default-catalog",
            "namespaced-instancetype.yaml",
        ])
        .output()
        .unwrap();
    let mut cmd = kvrender();
    cmd.args(["expand", "--no-default-catalog", "-"]);
    let from_stdin = run_with_stdin(cmd, &input);
    assert!(from_stdin.status.success());
    assert_eq!(from_stdin.stdout, from_file.stdout);
}

#[test]
fn missing_input_file_is_exit_2() {
    let out = kvrender()
        .args(["expand", "does/not/exist.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("does/not/exist.yaml"), "{stderr}");
}

/// What `kvrender expand --no-default-catalog PATH...` prints when run in `dir`, which must
/// succeed.
fn expanded(dir: &std::path::Path, paths: &[&str]) -> String {
    let out = kvrender()
        .current_dir(dir)
        .args(["expand", "--no-default-catalog"])
        .args(paths)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Assert that `text` contains each of `lines`, naming the first one missing.
fn assert_contains_all(text: &str, lines: &[&str]) {
    for line in lines {
        assert!(text.contains(line), "missing {line:?} in:\n{text}");
    }
}

#[test]
fn catalog_families_in_the_inputs_resolve() {
    let stdout = expanded(
        crate::common::root(),
        &["examples/catalog", "examples/vms/vision-workstation.yaml"],
    );
    // g2.small brings a passthrough GPU and pinned vCPUs.
    assert!(
        stdout.contains("deviceName: nvidia.com/TU104GL_Tesla_T4"),
        "{stdout}"
    );
    assert!(stdout.contains("dedicatedCpuPlacement: true"), "{stdout}");
}

#[test]
fn fields_go_always_writes_come_back_with_their_zero_value() {
    let stdout = expanded(&testdata("expand"), &["go-zero-fields.yaml"]);
    let (with, without) = stdout
        .split_once("name: without-references")
        .expect("both VMs are printed");
    // With a preference: the input's bus from it, its type and the sound device's name empty,
    // the empty namespace the one the VM was looked at in.
    assert_contains_all(
        with,
        &[
            "namespace: default",
            "- name: tablet\n            bus: virtio\n            type: \"\"",
            "sound:\n            name: \"\"",
        ],
    );
    // Without references: a null label empty, ACPI on, a CPU feature's name and a binding's
    // name empty, a port 0.
    assert_contains_all(
        without,
        &[
            "team: \"\"",
            "acpi: {}",
            "- policy: require\n            name: \"\"",
            "binding:\n              name: \"\"",
            "- protocol: TCP\n              port: 0",
        ],
    );
}

#[test]
fn volumes_networks_and_data_volume_templates_carry_the_fields_go_always_writes() {
    let stdout = expanded(&testdata("expand"), &["go-zero-volumes.yaml"]);
    assert_contains_all(
        &stdout,
        &[
            // A DataVolume template's metadata and a claim's resources are plain structs; a data
            // source's API group is a pointer without `omitempty`.
            "apiGroup: null\n        resources: {}\n    metadata: {}",
            // An SSH key's source and propagation method are plain structs.
            "sshPublicKey:\n          source: {}\n          propagationMethod: {}",
            // A filesystem's `virtiofs` is a pointer without `omitempty`.
            "- name: shared\n            virtiofs: null",
            // A Multus network's name, a claim's name and a host disk's capacity (a zero quantity).
            "multus:\n          networkName: \"\"",
            "capacity: \"0\"",
            "persistentVolumeClaim:\n          claimName: \"\"",
        ],
    );
}

#[test]
fn quantities_written_as_decimal_numbers_come_back_as_integers_or_canonical_strings() {
    let stdout = expanded(&testdata("expand"), &["decimal-quantities.yaml"]);
    assert_contains_all(
        &stdout,
        &[
            // 1.5e9 and 3e9 bytes are whole numbers, so integers; 1.5 CPUs (also copied to
            // the request) and 2.5 bytes are not, so canonical strings. The guest memory is
            // computed, so canonical.
            "storage: 1500000000\n",
            "requests:\n            memory: 3000000000\n            cpu: 1500m",
            "limits:\n            cpu: 1500m",
            "guest: 3G",
            "capacity: 2500m",
            // 1.5 CPUs round up to two sockets.
            "sockets: 2",
        ],
    );
}

#[test]
fn a_vm_without_references_drops_what_go_omits_from_resources_and_devices() {
    let stdout = expanded(&testdata("expand"), &["no-references-empty-resources.yaml"]);
    // Empty requests and limits, `false` non-pointer bools and an empty disk list are omitted
    // by Go's encoder; the structs holding them are always written.
    assert!(
        stdout.contains("domain:\n        resources: {}\n        devices: {}"),
        "{stdout}"
    );
    for gone in [
        "limits",
        "requests",
        "overcommitGuestOverhead",
        "disableHotplug",
        "disks",
        "labels",
    ] {
        assert!(!stdout.contains(gone), "{gone} left in:\n{stdout}");
    }
}

/// `spec` and its `template` are not `omitempty` in Go: a VM that names nothing comes back with
/// `spec: {template: null}` when it has no template or no spec at all.
#[test]
fn a_vm_without_a_template_comes_back_with_a_null_template() {
    let tmp = tempfile::tempdir().unwrap();
    let vm = |name: &str, tail: &str| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: {name}\n{tail}"
        )
    };
    fs::write(
        tmp.path().join("vms.yaml"),
        [
            vm("no-spec", ""),
            vm("null-spec", "spec: null\n"),
            vm("no-template", "spec:\n  runStrategy: Halted\n"),
        ]
        .join("---\n"),
    )
    .unwrap();
    let stdout = expanded(tmp.path(), &["vms.yaml"]);
    assert_eq!(
        stdout.matches("spec:\n  template: null\n").count(),
        2,
        "{stdout}"
    );
    assert!(
        stdout.contains("spec:\n  runStrategy: Halted\n  template: null\n"),
        "{stdout}"
    );
}

#[test]
fn scheduling_constraints_probes_and_a_missing_domain_carry_what_go_always_writes() {
    let stdout = expanded(&testdata("expand"), &["go-zero-scheduling.yaml"]);
    let (first, second) = stdout
        .split_once("name: no-template-spec")
        .expect("both VMs are printed");
    assert_contains_all(
        first,
        &[
            // Kubernetes' node selector terms, requirement keys and operators, weights, spread
            // constraints and probe ports have no `omitempty`.
            "requiredDuringSchedulingIgnoredDuringExecution:\n            nodeSelectorTerms: null",
            "key: \"\"\n                operator: \"\"\n            weight: 0",
            "maxSkew: 0\n        topologyKey: \"\"\n        whenUnsatisfiable: \"\"",
            "tcpSocket:\n          port: 0",
            // The domain is a plain struct.
            "domain: {}",
        ],
    );
    // A template without a spec gets one, with its domain.
    assert!(
        second.contains("    spec:\n      domain: {}"),
        "missing spec in:\n{second}"
    );
}

#[test]
fn null_quantities_in_resource_lists_are_zero_and_a_null_bool_is_false() {
    let stdout = expanded(&testdata("expand"), &["null-quantities.yaml"]);
    assert_contains_all(
        &stdout,
        &[
            "requests:\n            memory: \"0\"",
            "limits:\n            cpu: \"0\"",
            // A zero memory request does not give the guest size: the hugepage size does.
            "guest: 2Mi",
        ],
    );
    assert!(!stdout.contains("overcommitGuestOverhead"), "{stdout}");
    // A present cpu limit of zero leaves no sockets.
    assert!(!stdout.contains("sockets"), "{stdout}");
}

#[test]
fn null_items_of_lists_of_structs_are_empty_structs_the_rules_fill() {
    let stdout = expanded(&testdata("expand"), &["null-list-items.yaml"]);
    let vm: serde_json::Value = serde_saphyr::from_str(&stdout).unwrap();
    let spec = &vm["spec"]["template"]["spec"];
    let devices = &spec["domain"]["devices"];
    let virtio = serde_json::json!({"bus": "virtio"});
    // The null disk is a disk named "" that gets the preferred bus; it also stands for the
    // null volume (named "" too), which therefore gets no default disk of its own.
    assert_eq!(devices["disks"][0]["name"], "", "{stdout}");
    assert_eq!(devices["disks"][0]["disk"], virtio, "{stdout}");
    assert_eq!(devices["disks"][1]["name"], "root", "{stdout}");
    assert_eq!(
        devices["disks"].as_array().map(Vec::len),
        Some(2),
        "{stdout}"
    );
    assert_eq!(devices["interfaces"][0]["name"], "", "{stdout}");
    assert_eq!(devices["interfaces"][0]["model"], "e1000", "{stdout}");
    assert_eq!(
        spec["volumes"][1],
        serde_json::json!({"name": ""}),
        "{stdout}"
    );
    assert_eq!(spec["tolerations"], serde_json::json!([{}]), "{stdout}");
}

#[test]
fn a_volume_without_a_name_gets_a_default_disk_named_empty() {
    let dir = tempfile::tempdir().unwrap();
    let input = std::fs::read_to_string(testdata("expand").join("null-list-items.yaml"))
        .unwrap()
        // No disks at all: every volume needs a default disk, the unnamed one included.
        .replace(
            "          disks:\n          - null\n          - name: root\n",
            "",
        );
    std::fs::write(dir.path().join("vm.yaml"), input).unwrap();
    let stdout = expanded(dir.path(), &["vm.yaml"]);
    let vm: serde_json::Value = serde_saphyr::from_str(&stdout).unwrap();
    let disks = &vm["spec"]["template"]["spec"]["domain"]["devices"]["disks"];
    let names: Vec<&str> = disks
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["root", ""], "{stdout}");
    assert_eq!(
        disks[1]["disk"],
        serde_json::json!({"bus": "virtio"}),
        "{stdout}"
    );
}

/// `count` VMs in namespace `default`, named `{prefix}-N`, each naming the namespaced
/// instancetype `tiny` when `tiny` is set, or setting its own memory otherwise.
fn vms(prefix: &str, count: usize, tiny: bool) -> String {
    let spec = if tiny {
        "  instancetype:\n    kind: VirtualMachineInstancetype\n    name: tiny\n  template:\n    \
         spec:\n      domain:\n        devices: {}\n"
    } else {
        "  template:\n    spec:\n      domain:\n        devices: {}\n        memory:\n          \
         guest: 1Gi\n"
    };
    (0..count)
        .map(|i| {
            format!(
                "---\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  \
                 name: {prefix}-{i}\n  namespace: default\nspec:\n{spec}"
            )
        })
        .collect()
}

#[test]
fn a_document_that_only_looks_like_a_vm_is_read_as_what_it_is() {
    // A flow mapping whose string spans lines: two of them start in column 0 and read like a
    // VM's top-level keys. The document is the instancetype a VM before it names, so it must be
    // indexed before that VM expands, while the many VMs before them are already written.
    let tricky = "---\n{\"apiVersion\": instancetype.kubevirt.io/v1beta1, \"kind\": VirtualMachineInstancetype,\n \
                  metadata: {name: tiny, namespace: default}, spec: {cpu: {guest: 3}, memory: {guest: 1Gi}},\n \
                  note: \"reads like a VM:\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\n\"}\n";
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("vms.yaml"),
        format!(
            "{}{}{tricky}",
            vms("plain", 300, false),
            vms("sized", 1, true)
        ),
    )
    .unwrap();
    for threads in ["1", "2"] {
        let out = kvrender()
            .current_dir(tmp.path())
            .args([
                "--threads",
                threads,
                "expand",
                "--no-default-catalog",
                "vms.yaml",
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(stdout.matches("kind: VirtualMachine\n").count(), 301);
        let sized = &stdout[stdout.find("name: sized-0\n").expect("the sized VM")..];
        assert!(sized.contains("\n          sockets: 3\n"), "{sized}");
    }
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    // `kvrender expand ... | head`: the output is written while the VMs expand, and a closed
    // pipe ends the writing, not the run's success.
    let tmp = tempfile::tempdir().unwrap();
    let tiny = "---\napiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineInstancetype\n\
                metadata:\n  name: tiny\n  namespace: default\nspec:\n  cpu:\n    guest: 1\n  \
                memory:\n    guest: 1Gi\n";
    std::fs::write(
        tmp.path().join("vms.yaml"),
        format!("{tiny}{}", vms("vm", 5000, true)),
    )
    .unwrap();
    let mut child = kvrender()
        .current_dir(tmp.path())
        .args(["expand", "--no-default-catalog", "vms.yaml"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 4];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    assert_eq!(&first, b"---\n");
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `--cluster-config -` reads the KubeVirt resource from stdin, as `kubectl get kubevirt -A -o
/// yaml | kvrender ...` pipes it; stdin is read once, so a PATH `-` beside it is a usage error.
#[test]
fn cluster_config_from_stdin() {
    let kubevirt = "apiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata:\n  name: kubevirt\n  \
                    namespace: kubevirt\nspec:\n  configuration:\n    \
                    architectureConfiguration:\n      amd64:\n        \
                    machineType: pc-q35-rhel9.4.0\n";
    let vm = crate::common::root().join("examples/vms/fedora-server.yaml");
    let mut cmd = kvrender();
    cmd.args(["expand", "--cluster-config", "-"]).arg(&vm);
    let out = run_with_stdin(cmd, kubevirt);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("machine:\n          type: pc-q35-rhel9.4.0\n"),
        "{text}"
    );

    // Standard input named twice: each use is said, once (two PATHs are one use).
    for (args, uses) in [
        (
            &["--cluster-config", "-", "-"][..],
            "as a PATH and as --cluster-config",
        ),
        (&["-", "--catalog", "-"], "as a PATH and as --catalog"),
        (&["-", "-"], "as a PATH"),
    ] {
        let mut cmd = kvrender();
        cmd.arg("expand").args(args);
        let out = run_with_stdin(cmd, kubevirt);
        assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
        assert!(out.stdout.is_empty());
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(&format!(
                "`-` (standard input) is named twice, {uses}: it can be read once"
            )),
            "{args:?}: {}",
            describe(&out)
        );
    }
}

/// A file that `--catalog` or `--cluster-config` names and that cannot be read is said to be
/// that option's, not taken for a PATH: exit code 2, nothing printed.
#[test]
fn an_option_file_that_cannot_be_read_names_the_option() {
    let tmp = tempfile::tempdir().unwrap();
    let vm = crate::common::root().join("examples/vms/fedora-server.yaml");
    for (option, command) in [
        ("--catalog", "expand"),
        ("--catalog", "build"),
        ("--catalog", "validate"),
        ("--cluster-config", "expand"),
        ("--cluster-config", "build"),
    ] {
        let out = kvrender()
            .current_dir(tmp.path())
            .args([command, option, "missing.yaml"])
            .arg(&vm)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
        assert!(out.stdout.is_empty(), "{}", describe(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(&format!(
                "kvrender: error: {option} `missing.yaml`: failed to read it: "
            )),
            "{option} {command}: {}",
            describe(&out)
        );
    }
}

/// `expand` of `vm_spec` (a VM template's spec, as flow YAML) against an instancetype with 4
/// vCPUs, a node selector and the annotation `"": a`, and a preference that spreads with a
/// ratio of 0: exit code and stderr.
fn expand_against_zero_ratio(template: &str) -> (Option<i32>, String) {
    let text = format!(
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
         metadata: {{name: it}}\n\
         spec: {{cpu: {{guest: 4}}, memory: {{guest: 1Gi}}, nodeSelector: {{a: b}}, \
         annotations: {{\"\": a}}}}\n---\n\
         apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterPreference\n\
         metadata: {{name: p}}\n\
         spec: {{cpu: {{preferredCPUTopology: spread, spreadOptions: {{ratio: 0}}}}}}\n---\n\
         apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {{name: vm}}\n\
         spec:\n  runStrategy: Halted\n  instancetype: {{name: it}}\n  preference: {{name: p}}\n\
         \x20 template: {template}\n"
    );
    let out = run_with_stdin(
        {
            let mut cmd = kvrender();
            cmd.args(["expand", "--no-default-catalog", "-"]);
            cmd
        },
        text,
    );
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// KubeVirt lays the vCPUs out while it applies the CPU group, before it returns any group's
/// conflicts: a zero spread ratio fails the expansion even when other groups conflict, unless
/// the CPU group conflicts itself. An empty annotation key is written as apimachinery writes a
/// path step without a name.
#[test]
fn a_zero_spread_ratio_fails_before_the_conflicts_of_other_groups_are_returned() {
    let (code, stderr) = expand_against_zero_ratio(
        "{metadata: {annotations: {\"\": b}}, spec: {nodeSelector: {c: d}, domain: {devices: {}}}}",
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("ratio of 0"), "{stderr}");
    assert!(!stderr.contains("conflicts with"), "{stderr}");

    let (code, stderr) = expand_against_zero_ratio(
        "{metadata: {annotations: {\"\": b}}, \
         spec: {nodeSelector: {c: d}, domain: {cpu: {sockets: 2}, devices: {}}}}",
    );
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "VM field(s) spec.template.spec.nodeSelector, spec.template.spec.domain.cpu.sockets, \
             annotations[] conflicts with selected instance type"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("ratio of 0"), "{stderr}");
}

/// Input with no VirtualMachine prints nothing and says so, naming `vmi` for a pool's VMs;
/// exit 0 (nothing failed).
#[test]
fn no_virtual_machine_to_expand_is_said() {
    let pool = "\
apiVersion: pool.kubevirt.io/v1beta1
kind: VirtualMachinePool
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  virtualMachineTemplate:
    metadata: {labels: {app: web}}
    spec:
      runStrategy: Always
      instancetype: {name: u1.small}
      template: {spec: {domain: {devices: {}}}}
";
    let config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n";
    for (input, says) in [
        (
            pool,
            "`kvrender vmi` prints the VirtualMachineInstances VirtualMachinePool `web` starts",
        ),
        (config_map, "no VirtualMachine to expand in the input"),
    ] {
        let mut cmd = kvrender();
        cmd.args(["expand", "-"]);
        let out = run_with_stdin(cmd, input);
        assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
        assert!(out.stdout.is_empty(), "{}", describe(&out));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(says),
            "{}",
            describe(&out)
        );
    }
}

/// A name client-go cannot put in a request's path (`.`, `..`, or one holding `/` or `%`) is
/// refused before any lookup, in KubeVirt's words, as an instancetype, preference, revision or
/// volume name: not "not found", and not found among objects that hold such a name either.
#[test]
fn a_name_no_request_can_carry_is_refused_before_the_lookup() {
    let instancetype = "apiVersion: instancetype.kubevirt.io/v1beta1\n\
         kind: VirtualMachineClusterInstancetype\nmetadata: {name: \"a/b\"}\n\
         spec: {cpu: {guest: 1}, memory: {guest: 1Gi}}\n---\n";
    let vm = |spec: &str| {
        format!(
            "{instancetype}apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n\
             metadata: {{name: vm}}\nspec:\n{spec}  template:\n    spec:\n      \
             domain: {{devices: {{}}}}\n      volumes:\n      - name: root\n        \
             persistentVolumeClaim: {{claimName: \"x%y\"}}\n"
        )
    };
    for (spec, said) in [
        (
            "  instancetype: {name: \"a/b\"}\n",
            "invalid resource name \"a/b\": [may not contain '/']",
        ),
        (
            "  preference: {name: \"..\"}\n",
            "invalid resource name \"..\": [may not be '..']",
        ),
        (
            "  instancetype: {name: \"%/\"}\n",
            "invalid resource name \"%/\": [may not contain '/' may not contain '%']",
        ),
        (
            "  instancetype: {name: it, revisionName: \".\"}\n",
            "invalid resource name \".\": [may not be '.']",
        ),
        (
            "  instancetype: {inferFromVolume: root, inferFromVolumeFailurePolicy: Ignore}\n",
            "invalid resource name \"x%y\": [may not contain '%']",
        ),
    ] {
        let mut cmd = kvrender();
        cmd.args(["expand", "--no-default-catalog", "-"]);
        let out = run_with_stdin(cmd, vm(spec));
        let shown = describe(&out);
        assert_eq!(out.status.code(), Some(1), "{spec}: {shown}");
        assert!(out.stdout.is_empty(), "{spec}: {shown}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(said), "{spec}: {shown}");
        assert!(!stderr.contains("not found"), "{spec}: {shown}");
    }
}

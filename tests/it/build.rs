//! `kvrender build` end to end: the printed stream, `-o DIR` and `--bundles`, what happens when
//! the output cannot be written or the catalog does not render, the catalog checks, the
//! shipped catalog against the upstream bundle, and the embedded catalog behind `expand`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Output;
use std::sync::Arc;

use kvrender::load;
use kvrender::model::Object;
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::common::{describe, kvrender, root, run_with_stdin, snapshot_settings, tool};

/// The upstream common-instancetypes bundle (kustomize's build of the release).
const BUNDLE: &str = "testdata/anchors/common-instancetypes-bundle.yaml";

/// Run kvrender from the repository root (so paths in findings are relative).
fn run(args: &[&str]) -> Output {
    kvrender()
        .current_dir(root())
        .args(args)
        .output()
        .expect("kvrender runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

/// Parse a YAML stream into objects, failing on any load finding.
fn parse(text: &str, name: &str) -> Vec<Object> {
    let loaded = load::parse_text(&Arc::from(name), text);
    assert!(
        loaded.diagnostics.is_empty(),
        "{name}: {:?}",
        loaded.diagnostics
    );
    loaded.objects
}

/// Every file under `dir`, relative, with its content, but for the marker `build -o` leaves there
/// (checked on its own).
fn tree(dir: &Path) -> BTreeMap<String, String> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n == ".kvrender-output") {
                continue;
            }
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                let rel = path
                    .strip_prefix(base)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    if dir.exists() {
        walk(dir, dir, &mut out);
    }
    out
}

fn hex_sha256(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .fold(String::new(), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

#[test]
fn example_catalog_and_vm() {
    let _guard = snapshot_settings();
    let out = run(&[
        "build",
        "examples/catalog",
        "examples/vms/vision-workstation.yaml",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    insta::assert_snapshot!(describe(&out));
}

/// The `storageClassName` of each DataVolume template of each VM in a printed stream, by
/// VM and template name (`None`: the claim names no class).
fn storage_classes(text: &str) -> Vec<(String, String, Option<String>)> {
    let mut out = Vec::new();
    for vm in parse(text, "out.yaml") {
        if vm.kind_str() != "VirtualMachine" {
            continue;
        }
        let templates = vm.value["spec"]["dataVolumeTemplates"].as_array().cloned();
        for dvt in templates.unwrap_or_default() {
            let spec = &dvt["spec"];
            let claim = if spec["storage"].is_object() {
                &spec["storage"]
            } else {
                &spec["pvc"]
            };
            out.push((
                vm.name().to_string(),
                dvt["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                claim["storageClassName"].as_str().map(str::to_string),
            ));
        }
    }
    out
}

/// `build` prints what the cluster will hold: KubeVirt's VM webhook gives a DataVolume
/// template without a storage class the class its VM's preference prefers, and the expanded VM
/// no longer names the preference, so `build` gives it the class itself (a `storage` or a
/// `pvc` claim alike; an explicit class, `""` included, stays). `expand` answers as
/// `expand-spec` does, without the webhook's step.
#[test]
fn build_gives_data_volume_templates_the_preferences_storage_class() {
    let file = "testdata/storage-class/vms.yaml";
    let built = run(&["build", "--no-default-catalog", file]);
    assert_eq!(built.status.code(), Some(0), "{}", describe(&built));
    let expanded = run(&["expand", "--no-default-catalog", file]);
    assert_eq!(expanded.status.code(), Some(0), "{}", describe(&expanded));
    let class = |c: Option<&str>| c.map(str::to_string);
    let row = |vm: &str, dvt: &str, c: Option<&str>| (vm.to_string(), dvt.to_string(), class(c));
    assert_eq!(
        storage_classes(&stdout(&built)),
        vec![
            row("db", "db-storage", Some("fast")),
            row("db", "db-pvc", Some("fast")),
            row("db", "db-default-class", Some("")),
            row("db", "db-slow", Some("slow")),
            row("web", "web-root", None),
        ]
    );
    assert_eq!(
        storage_classes(&stdout(&expanded)),
        vec![
            row("db", "db-storage", None),
            row("db", "db-pvc", None),
            row("db", "db-default-class", Some("")),
            row("db", "db-slow", Some("slow")),
            row("web", "web-root", None),
        ]
    );
}

/// Each VM's architecture and machine type in a printed stream, by name.
fn architectures(text: &str) -> Vec<(String, String, String)> {
    parse(text, "out.yaml")
        .iter()
        .filter(|vm| vm.kind_str() == "VirtualMachine")
        .map(|vm| {
            let spec = &vm.value["spec"]["template"]["spec"];
            let text = |v: &Value| v.as_str().unwrap_or("-").to_string();
            (
                vm.name().to_string(),
                text(&spec["architecture"]),
                text(&spec["domain"]["machine"]["type"]),
            )
        })
        .collect()
}

/// KubeVirt's VM webhook gives a VM whose template and preference name no architecture the one
/// the DataSource its DataVolume template clones names in its label; the expansion then picks
/// that architecture's machine type. `build` and the KRM function print the VM that replaces
/// the one applied, which would otherwise carry the cluster's default for good: they take the
/// label, for a named instancetype as for an inferred one. `expand` answers as `expand-spec`
/// does for a VM sent as written, and a VM that names nothing is left to the webhook.
#[test]
fn build_gives_a_vm_the_architecture_its_data_source_names() {
    let file = "testdata/data-source-arch/vms.yaml";
    let row = |vm: &str, arch: &str, machine: &str| {
        (vm.to_string(), arch.to_string(), machine.to_string())
    };
    let built = run(&["build", "--no-default-catalog", file]);
    assert_eq!(built.status.code(), Some(0), "{}", describe(&built));
    let expected = vec![
        row("named", "arm64", "virt"),
        row("inferred", "arm64", "virt"),
        row("preferred", "amd64", "q35"),
        row("plain", "-", "-"),
    ];
    assert_eq!(architectures(&stdout(&built)), expected);
    // The KRM function, as kustomize's legacy plugins run it: the same VMs.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("kvrender.yaml");
    std::fs::write(
        &config,
        "apiVersion: kvrender.io/v1alpha1\nkind: KVRender\nmetadata: {name: x}\n\
         defaultCatalog: false\n",
    )
    .unwrap();
    let mut cmd = kvrender();
    cmd.arg("fn").arg(&config);
    let stream = std::fs::read_to_string(root().join(file)).unwrap();
    let function = run_with_stdin(cmd, stream);
    assert_eq!(function.status.code(), Some(0), "{}", describe(&function));
    assert_eq!(architectures(&stdout(&function)), expected);
    let expanded = run(&["expand", "--no-default-catalog", file]);
    assert_eq!(expanded.status.code(), Some(0), "{}", describe(&expanded));
    assert_eq!(
        architectures(&stdout(&expanded)),
        vec![
            row("named", "amd64", "q35"),
            row("inferred", "amd64", "q35"),
            row("preferred", "amd64", "q35"),
            row("plain", "-", "-"),
        ]
    );
}

/// `-o DIR` names files as the real `kubectl kustomize -o DIR` does, namespace prefixes included.
#[test]
fn output_dir_names_match_kubectl_kustomize() {
    let objects = [
        (
            "instancetype.kubevirt.io/v1beta1",
            "VirtualMachineClusterInstancetype",
            "small",
            None,
        ),
        (
            "instancetype.kubevirt.io/v1beta1",
            "VirtualMachineInstancetype",
            "small",
            Some("team-a"),
        ),
        ("v1", "ConfigMap", "plain", None),
        // The API server refuses this name for a ConfigMap too, but kvrender only checks the
        // names of KubeVirt's kinds: the file name is lower-cased as kustomize does it.
        ("v1", "ConfigMap", "Upper", None),
        ("v1", "ConfigMap", "in-default", Some("default")),
        ("v1", "ConfigMap", "b", Some("team-b")),
        ("v1", "Namespace", "team-a", Some("ignored")),
        (
            "rbac.authorization.k8s.io/v1",
            "ClusterRole",
            "reader",
            None,
        ),
        ("storage.k8s.io/v1", "StorageClass", "fast", None),
        ("flowcontrol.apiserver.k8s.io/v1", "FlowSchema", "f", None),
    ];
    let mut stream = String::new();
    for (api_version, kind, name, namespace) in objects {
        let _ = write!(
            stream,
            "---\napiVersion: {api_version}\nkind: {kind}\nmetadata:\n  name: {name}\n"
        );
        if let Some(ns) = namespace {
            let _ = writeln!(stream, "  namespace: {ns}");
        }
        if kind.ends_with("Instancetype") {
            stream.push_str("spec:\n  cpu: {guest: 1}\n  memory: {guest: 1Gi}\n");
        }
    }
    let tmp = tempfile::tempdir().unwrap();
    // All in one namespace, then across several.
    for (case, text) in [
        (
            "one",
            stream
                .replace("team-a", "default")
                .replace("team-b", "default"),
        ),
        ("several", stream),
    ] {
        let input = tmp.path().join(case);
        std::fs::create_dir_all(&input).unwrap();
        std::fs::write(input.join("objects.yaml"), &text).unwrap();
        std::fs::write(
            input.join("kustomization.yaml"),
            "resources:\n- objects.yaml\n",
        )
        .unwrap();
        let ours = tmp.path().join(format!("{case}-kvrender"));
        let theirs = tmp.path().join(format!("{case}-kustomize"));
        std::fs::create_dir_all(&theirs).unwrap();
        let out = run(&[
            "build",
            "--no-default-catalog",
            input.join("objects.yaml").to_str().unwrap(),
            "-o",
            ours.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
        let out = std::process::Command::new(tool("kubectl"))
            .args(["kustomize", input.to_str().unwrap(), "-o"])
            .arg(&theirs)
            .output()
            .expect("kubectl runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let names = |dir: &Path| tree(dir).into_keys().collect::<Vec<String>>();
        assert_eq!(names(&ours), names(&theirs), "{case}");
        assert_eq!(names(&ours).len(), objects.len(), "{case}");
    }
}

#[test]
fn output_dir_is_kustomize_layout_and_idempotent() {
    let _guard = snapshot_settings();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("out");
    let dir_arg = dir.to_str().unwrap();
    let args = [
        "build",
        "examples/catalog",
        "examples/vms/vision-workstation.yaml",
        "-o",
        dir_arg,
    ];
    let first = run(&args);
    assert_eq!(first.status.code(), Some(0), "{}", describe(&first));
    assert!(first.stdout.is_empty(), "nothing printed with -o");
    let written = tree(&dir);
    let listing: Vec<&str> = written.keys().map(String::as_str).collect();
    let one = "instancetype.kubevirt.io_v1beta1_virtualmachineinstancetype_g2.small.yaml";
    insta::assert_snapshot!(format!(
        "{}\n----- stderr -----\n{}----- {one} -----\n{}",
        listing.join("\n"),
        String::from_utf8_lossy(&first.stderr),
        written[one]
    ));
    // The files are the printed stream, one object each.
    let stream = stdout(&run(&args[..3]));
    let mut from_files: Vec<Object> = written
        .iter()
        .flat_map(|(name, text)| parse(text, name))
        .collect();
    let mut from_stream = parse(&stream, "stream");
    let by_identity = |o: &Object| (o.kind_str().to_string(), o.name().to_string());
    from_files.sort_by_key(by_identity);
    from_stream.sort_by_key(by_identity);
    let values = |v: &[Object]| v.iter().map(|o| o.value.clone()).collect::<Vec<Value>>();
    assert_eq!(values(&from_files), values(&from_stream));

    let second = run(&args);
    assert_eq!(second.status.code(), Some(0), "{}", describe(&second));
    assert_eq!(tree(&dir), written, "a second run changes nothing");
    // No temporary files left behind by the atomic writes, beside or inside DIR.
    let siblings: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(siblings, ["out"]);
}

#[test]
fn bundles_and_checksums() {
    let _guard = snapshot_settings();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("release");
    let out = run(&[
        "build",
        "catalog",
        "--bundles",
        "--version-label",
        "v1.4.0",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let written = tree(&dir);
    let mut summary = String::new();
    for (name, text) in &written {
        if name == "CHECKSUMS.sha256" {
            continue;
        }
        let objects = parse(text, name);
        assert!(objects.iter().all(|o| {
            o.value["metadata"]["labels"]["instancetype.kubevirt.io/common-instancetypes-version"]
                == "v1.4.0"
        }));
        let _ = writeln!(summary, "{name}: {} objects", objects.len());
    }
    insta::assert_snapshot!(summary);
    // CHECKSUMS.sha256 is `sha256sum` output for every bundle, verified here independently:
    // named as upstream names its release assets, in the order `sha256sum *.yaml` gives.
    let mut expected = String::new();
    for name in [
        "common-clusterinstancetypes-bundle-v1.4.0.yaml",
        "common-clusterpreferences-bundle-v1.4.0.yaml",
        "common-instancetypes-all-bundle-v1.4.0.yaml",
        "common-instancetypes-bundle-v1.4.0.yaml",
        "common-preferences-bundle-v1.4.0.yaml",
    ] {
        let _ = writeln!(expected, "{}  {name}", hex_sha256(&written[name]));
    }
    assert_eq!(written["CHECKSUMS.sha256"], expected);
    // The all-in-one bundle is the upstream bundle, object for object and in its order.
    let all = parse(
        &written["common-instancetypes-all-bundle-v1.4.0.yaml"],
        "all",
    );
    let bundle = parse(
        &std::fs::read_to_string(root().join(BUNDLE)).unwrap(),
        BUNDLE,
    );
    let names = |objects: &[Object]| -> Vec<String> {
        objects
            .iter()
            .map(|o| format!("{}/{}", o.kind_str(), o.name()))
            .collect()
    };
    assert_eq!(names(&all), names(&bundle));
}

/// A field a part of a `--catalog` file writes by hand is reported at the part's line, once for
/// every size it affects, as when the file is a PATH: by `build` and by `validate`.
#[test]
fn a_finding_about_a_catalog_files_part_is_at_the_parts_line() {
    let tmp = tempfile::tempdir().unwrap();
    let parts = tmp.path().join("parts.yaml");
    let family = tmp.path().join("family.yaml");
    std::fs::write(
        &parts,
        "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nmetadata: {name: lib}\nparts:\n  shape:\n\
         \x20   spec:\n      cpu: {guest: \"{{ size.cpu }}\", dedicatedCPUPlacemnt: true}\n\
         \x20     memory: {guest: \"{{ size.memory }}\"}\n",
    )
    .unwrap();
    std::fs::write(
        &family,
        "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {name: t}\n\
         spec:\n  version: 1\n  parts: [shape]\n  sizes:\n    - [small, 1, 1Gi]\n    \
         - [large, 2, 2Gi]\n",
    )
    .unwrap();
    let (parts, family) = (parts.to_str().unwrap(), family.to_str().unwrap());
    for command in ["build", "validate"] {
        let out = run(&[command, "--no-default-catalog", family, "--catalog", parts]);
        let shown = describe(&out);
        let reported: Vec<&str> = shown
            .lines()
            .filter(|l| l.contains("KV022") && l.contains("dedicatedCPUPlacemnt"))
            .collect();
        assert_eq!(reported.len(), 1, "{command}: {shown}");
        assert!(
            reported[0].starts_with(&format!("{parts}:7: warning[KV022]")),
            "{command}: {shown}"
        );
    }
}

/// The all-in-one bundle lists the catalog in the stream's order: one name in several
/// namespaces by namespace, an object without one as in `default`.
#[test]
fn the_all_in_one_bundle_keeps_the_stream_order() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("c.yaml");
    let mut text = String::new();
    for namespace in ["namespace: zz", "", "namespace: aa"] {
        text.push_str(&format!(
            "---\napiVersion: kvrender.io/v1alpha1\nkind: Preference\n\
             metadata: {{name: p, {namespace}}}\n\
             spec: {{scopes: [namespaced], template: {{spec: {{devices: {{preferredDiskBus: virtio}}}}}}}}\n"
        ));
    }
    std::fs::write(&input, text).unwrap();
    let namespaces = |objects: &[Object]| -> Vec<String> {
        objects
            .iter()
            .map(|o| o.effective_namespace().to_string())
            .collect()
    };
    let input = input.to_str().unwrap();
    let out = run(&["build", "--no-default-catalog", "--catalog-only", input]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stream = parse(&String::from_utf8_lossy(&out.stdout), "stream");
    assert_eq!(namespaces(&stream), ["aa", "default", "zz"]);
    let dir = tmp.path().join("release");
    let out = run(&[
        "build",
        "--no-default-catalog",
        input,
        "--bundles",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let all = parse(&tree(&dir)["common-instancetypes-all-bundle.yaml"], "all");
    assert_eq!(namespaces(&all), namespaces(&stream));
}

/// Without a version, the bundles keep the names `make` gives them upstream. An instancetype
/// written out in full among the inputs takes its place in kind and name order, and a build
/// with no catalog object at all writes no empty release. VMs are neither bundled nor
/// checked: one that names an instancetype found nowhere does not hold up the release.
#[test]
fn bundles_sort_every_catalog_object_and_refuse_an_empty_release() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    std::fs::create_dir(&input).unwrap();
    std::fs::write(
        input.join("a.yaml"),
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
         metadata: {name: aa.small}\nspec: {cpu: {guest: 1}, memory: {guest: 1Gi}}\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n---\n\
         apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: vm, namespace: ns}\n\
         spec: {instancetype: {name: nowhere.small}, template: {spec: {domain: {devices: {}}}}}\n",
    )
    .unwrap();
    let dir = tmp.path().join("release");
    let out = run(&[
        "build",
        "examples/catalog",
        input.to_str().unwrap(),
        "--bundles",
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let written = tree(&dir);
    let all = parse(&written["common-instancetypes-all-bundle.yaml"], "all");
    let keys: Vec<(String, String)> = all
        .iter()
        .map(|o| (o.kind_str().to_string(), o.name().to_string()))
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    assert_eq!(keys[0].1, "aa.small", "{keys:?}");
    assert!(
        keys.iter()
            .all(|(kind, _)| kind != "ConfigMap" && kind != "VirtualMachine")
    );
    // The same inputs printed as a stream: the VM is an error there.
    let out = run(&["build", "examples/catalog", input.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("KV011"),
        "{}",
        describe(&out)
    );
    // Nothing to bundle: a usage error, and no directory.
    let empty = tmp.path().join("empty");
    std::fs::write(
        input.join("a.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n",
    )
    .unwrap();
    let out = run(&[
        "build",
        input.to_str().unwrap(),
        "--bundles",
        "-o",
        empty.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("every bundle would be empty"),
        "{}",
        describe(&out)
    );
    assert!(!empty.exists());
}

#[test]
fn output_path_that_is_a_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("taken");
    std::fs::write(&file, "keep me\n").unwrap();
    let out = run(&["build", "examples/catalog", "-o", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(out.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("taken"),
        "{}",
        describe(&out)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me\n");
    let entries: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, ["taken"], "nothing else written");
}

#[test]
fn hostile_names_stay_inside_the_output_dir() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.yaml");
    // Names no kind accepts are refused at their line, and nothing is written.
    std::fs::write(
        &input,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ../x\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a/b\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ..\n  namespace: ../../etc\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n  namespace: ../../etc\n",
    )
    .unwrap();
    let dir = tmp.path().join("deep").join("out");
    let build = |input: &std::path::Path| {
        run(&[
            "build",
            "--no-default-catalog",
            input.to_str().unwrap(),
            "-o",
            dir.to_str().unwrap(),
        ])
    };
    let out = build(&input);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for line in [4, 9, 14, 21] {
        let at = format!("in.yaml:{line}: error[KV003] ConfigMap/");
        assert!(stderr.contains(&at), "{at}: {stderr}");
    }
    assert!(!tmp.path().join("deep").exists(), "nothing written");

    // Names the API server may take for some kind still make one plain file each, in DIR.
    let long = "n".repeat(300);
    std::fs::write(
        &input,
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: '...'\n---\n\
             apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  \
             name: 'system:..:x'\n---\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {long}\n  namespace: etc\n",
        ),
    )
    .unwrap();
    let out = build(&input);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let written = tree(&dir);
    assert_eq!(written.len(), 3, "{:?}", written.keys());
    for name in written.keys() {
        // One plain file name each, directly in DIR.
        assert!(!name.contains('/') && name.ends_with(".yaml"), "{name}");
        assert!(name.len() < 255, "{name}");
    }
    // Nothing anywhere else in the temporary folder.
    let mut everything: Vec<String> = tree(tmp.path()).into_keys().collect();
    everything.retain(|p| !p.starts_with("deep/out/"));
    assert_eq!(everything, ["in.yaml"]);
}

#[test]
fn render_error_prints_and_writes_nothing() {
    let _guard = snapshot_settings();
    let tmp = tempfile::tempdir().unwrap();
    let catalog = tmp.path().join("broken.yaml");
    std::fs::write(
        &catalog,
        "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata:\n  name: z\n\
         spec:\n  sizes:\n    - [small, 1, 2Gi]\n  template:\n    spec:\n\
         \x20     cpu: {guest: \"{{ size.cpus }}\"}\n",
    )
    .unwrap();
    let printed = run(&["build", catalog.to_str().unwrap()]);
    assert_eq!(printed.status.code(), Some(1));
    assert!(printed.stdout.is_empty());
    let dir = tmp.path().join("out");
    let written = run(&[
        "build",
        catalog.to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(written.status.code(), Some(1));
    assert!(!dir.exists(), "nothing written");
    assert_eq!(printed.stderr, written.stderr);
    insta::assert_snapshot!(describe(&printed));
}

#[test]
fn every_catalog_file_that_does_not_render_is_reported() {
    let tmp = tempfile::tempdir().unwrap();
    for (file, family) in [("a.yaml", "p"), ("b.yaml", "q")] {
        std::fs::write(
            tmp.path().join(file),
            format!(
                "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata:\n  \
                 name: {family}\nspec:\n  sizes:\n    - [small, 1, 2Gi]\n    - [large, 2, 4Gi]\n  \
                 template:\n    spec:\n      cpu: {{guest: \"{{{{ size.cpus }}}}\"}}\n"
            ),
        )
        .unwrap();
    }
    let out = run(&["build", tmp.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("error[KV040]"))
        .collect();
    // One per file, for the first size only.
    assert_eq!(errors.len(), 2, "{stderr}");
    assert!(
        errors[0].contains("a.yaml:11:") && errors[0].contains("family `p` size `small`"),
        "{stderr}"
    );
    assert!(
        errors[1].contains("b.yaml:11:") && errors[1].contains("family `q` size `small`"),
        "{stderr}"
    );
}

#[test]
fn a_hand_written_object_of_a_rendered_name_is_kv020() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("catalog.yaml"),
        "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {name: team}\n\
         spec:\n  version: 1\n  scopes: [cluster]\n  sizes: [[small, 1, 2Gi]]\n  template:\n    \
         spec: {cpu: {guest: \"{{ size.cpu }}\"}, memory: {guest: \"{{ size.memory }}\"}}\n",
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("tuned.yaml"),
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
         metadata: {name: team1.small}\nspec: {cpu: {guest: 8}, memory: {guest: 32Gi}}\n",
    )
    .unwrap();
    let out = run(&["build", tmp.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("error[KV020]") && stderr.contains("tuned.yaml:3"),
        "{stderr}"
    );
}

#[test]
fn catalog_checks_name_file_and_line() {
    let _guard = snapshot_settings();
    // The checks' warnings, as errors: a catalog's CI holds its labels to the spec this way.
    let out = run(&["build", "--strict", "testdata/build/checks"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(out.stdout.is_empty());
    insta::assert_snapshot!(describe(&out));
}

#[test]
fn each_catalog_finding_is_reported_once() {
    let out = run(&[
        "build",
        "--no-default-catalog",
        "testdata/readme/kv041/catalog",
    ]);
    // A warning: the objects render, and `--strict` makes it an error.
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().collect();
    // One KV041 for the size row, naming both objects it renders (cluster-scoped and
    // namespaced), once.
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains(
            "warning[KV041] VirtualMachineClusterInstancetype/z1.large and 1 more \
             (VirtualMachineInstancetype/z1.large): metadata.labels"
        ),
        "{stderr}"
    );
}

/// A finding about a field a family template writes points at the template's line when the
/// value is the same in every combination (it reads no size, variant, trait or name), and at
/// the size row when the size makes it; a label whose field has no place (`spec.cpu` a
/// string) is left to the type check's finding.
#[test]
fn a_template_finding_points_at_the_template_unless_the_size_makes_the_value() {
    let dir = tempfile::tempdir().unwrap();
    let family = |cpu: &str| {
        format!(
            "\
apiVersion: kvrender.io/v1alpha1
kind: InstancetypeFamily
metadata:
  name: g
spec:
  version: 2
  displayName: GPU
  sizes:
    - [small, 4, 16Gi]
  template:
    metadata:
      labels:
        instancetype.kubevirt.io/cpu: \"{{{{ size.cpu }}}}\"
    spec:
      cpu: \"{cpu}\"
      memory:
        guest: \"{{{{ size.memory }}}}\"
"
        )
    };
    for (cpu, line) in [("cores {{ 1 }}", 15), ("{{ size.cpu }} cores", 9)] {
        std::fs::write(dir.path().join("g.yaml"), family(cpu)).unwrap();
        let out = kvrender()
            .current_dir(dir.path())
            .args(["build", "--no-default-catalog", "."])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
        assert!(out.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr.lines().collect();
        // The type check's error alone: no `KV041` saying the labelled `spec.cpu.guest` is unset.
        assert_eq!(lines.len(), 1, "{cpu}: {stderr}");
        assert!(
            lines[0].starts_with(&format!(
                "./g.yaml:{line}: error[KV004] VirtualMachineClusterInstancetype/g2.small and 1 more"
            )) && lines[0].contains("spec.cpu: must be a mapping, not a string"),
            "{cpu}: {stderr}"
        );
    }
}

/// Instancetypes no VM can use (`KV044`): a family variant whose huge pages do not fit some
/// sizes, reported at each size row for both scopes at once, and an instancetype written out,
/// at its field's line.
#[test]
fn unusable_instancetypes_are_kv044_at_the_size_row_or_the_field() {
    let _guard = snapshot_settings();
    let out = run(&["build", "testdata/build/unusable"]);
    // Warnings: the catalog is still printed (12 objects of the family, the one written out).
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(parse(&stdout(&out), "stdout").len(), 13);
    insta::assert_snapshot!(String::from_utf8_lossy(&out.stderr));
    let strict = run(&["build", "--strict", "testdata/build/unusable"]);
    assert_eq!(strict.status.code(), Some(1), "{}", describe(&strict));
    assert!(strict.stdout.is_empty());
}

#[test]
fn duplicates_across_catalog_files_are_kv020() {
    let _guard = snapshot_settings();
    let out = run(&["build", "testdata/build/duplicate"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    insta::assert_snapshot!(describe(&out));
}

/// A family copied from `catalog/` and edited, given beside the original: one finding naming
/// both definitions, in every command, not one more for each size the two both render, nor a
/// name not found because the catalog did not render.
#[test]
fn a_family_defined_twice_is_one_finding() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("u.yaml");
    let shipped = std::fs::read_to_string(root().join("catalog/instancetypes/u.yaml")).unwrap();
    std::fs::write(
        &copy,
        shipped.replace("- [medium,", "- [16xlarge, 64, 256Gi]\n    - [medium,"),
    )
    .unwrap();
    assert!(std::fs::read_to_string(&copy).unwrap().contains("16xlarge"));
    let vm = tmp.path().join("vm.yaml");
    std::fs::write(
        &vm,
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: big}\n\
         spec:\n  runStrategy: Halted\n  instancetype: {name: u1.16xlarge}\n  preference: {name: fedora}\n  \
         template: {spec: {domain: {devices: {}}}}\n",
    )
    .unwrap();
    let (copy, vm) = (copy.to_str().unwrap(), vm.to_str().unwrap());
    for args in [
        &["build", "catalog", copy, vm][..],
        &["validate", "catalog", copy, vm][..],
        &["expand", "--catalog", "catalog", "--catalog", copy, vm][..],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", describe(&out));
        // `validate` prints its findings on stdout, the others on stderr.
        let stderr = String::from_utf8_lossy(&out.stderr) + String::from_utf8_lossy(&out.stdout);
        let findings: Vec<&str> = stderr.lines().filter(|l| l.contains("]")).collect();
        assert_eq!(findings.len(), 1, "{args:?}: {stderr}");
        assert!(
            findings[0].contains("error[KV020] InstancetypeFamily/u")
                && findings[0].contains("first at catalog/instancetypes/u.yaml:2"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn shipped_catalog_is_the_upstream_bundle_and_passes_the_checks() {
    let out = run(&["build", "catalog/"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        out.stderr.is_empty(),
        "the shipped catalog has findings:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours = parse(&stdout(&out), "stdout");
    let theirs = parse(
        &std::fs::read_to_string(root().join(BUNDLE)).unwrap(),
        BUNDLE,
    );
    assert_eq!(ours.len(), 244);
    assert_eq!(theirs.len(), 244);
    let annotation_keys = |o: &Object| -> Vec<String> {
        let mut keys: Vec<String> = o.value["metadata"]["annotations"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        keys.sort();
        keys
    };
    // Same order too: kustomize sorts by kind, then name.
    for (got, want) in ours.iter().zip(&theirs) {
        let id = format!("{}/{}", want.kind_str(), want.name());
        assert_eq!(
            (got.kind_str(), got.name(), got.api_version()),
            (want.kind_str(), want.name(), want.api_version()),
            "{id}"
        );
        assert_eq!(got.value["spec"], want.value["spec"], "{id}: spec");
        assert_eq!(
            got.value["metadata"]["labels"], want.value["metadata"]["labels"],
            "{id}: labels"
        );
        assert_eq!(annotation_keys(got), annotation_keys(want), "{id}");
    }
}

/// A VM naming `u1.medium` and `fedora` (cluster-scoped, the defaults) in its own namespace.
const FEDORA_VM: &str = "examples/vms/fedora-server.yaml";

#[test]
fn embedded_catalog_expands_like_the_upstream_bundle() {
    let embedded = run(&["expand", FEDORA_VM]);
    assert_eq!(embedded.status.code(), Some(0), "{}", describe(&embedded));
    assert!(embedded.stderr.is_empty(), "{}", describe(&embedded));
    let bundle = run(&["expand", "--no-default-catalog", FEDORA_VM, BUNDLE]);
    assert_eq!(bundle.status.code(), Some(0), "{}", describe(&bundle));
    assert_eq!(stdout(&embedded), stdout(&bundle));
    // The expansion really used the catalog: u1.medium's vCPU and memory, fedora's disk bus.
    let vm = parse(&stdout(&embedded), "stdout").remove(0);
    let domain = &vm.value["spec"]["template"]["spec"]["domain"];
    assert_eq!(domain["cpu"]["sockets"], 1, "{domain}");
    assert_eq!(domain["memory"]["guest"], "4Gi", "{domain}");
    assert_eq!(domain["devices"]["disks"][0]["disk"]["bus"], "virtio");
}

#[test]
fn user_files_shadow_the_embedded_catalog() {
    let tmp = tempfile::tempdir().unwrap();
    let mine = tmp.path().join("mine.yaml");
    std::fs::write(
        &mine,
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
         metadata:\n  name: u1.medium\nspec:\n  cpu:\n    guest: 3\n  memory:\n    guest: 6Gi\n",
    )
    .unwrap();
    for command in ["expand", "build"] {
        let out = run(&[command, FEDORA_VM, mine.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{command}: {}", describe(&out));
        let vm = parse(&stdout(&out), "stdout")
            .into_iter()
            .find(|o| o.kind_str() == "VirtualMachine")
            .unwrap();
        let domain = &vm.value["spec"]["template"]["spec"]["domain"];
        assert_eq!(domain["cpu"]["sockets"], 3, "{command}: {domain}");
        assert_eq!(domain["memory"]["guest"], "6Gi", "{command}: {domain}");
        // The preference still comes from the embedded catalog.
        assert_eq!(domain["devices"]["disks"][0]["disk"]["bus"], "virtio");
    }
}

#[test]
fn no_default_catalog_turns_the_embedded_catalog_off() {
    for command in ["expand", "build"] {
        let out = run(&[command, "--no-default-catalog", FEDORA_VM]);
        assert_eq!(out.status.code(), Some(1), "{command}: {}", describe(&out));
        assert!(out.stdout.is_empty(), "{command}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("error[KV011]") && stderr.contains("\"u1.medium\" not found"),
            "{command}: {stderr}"
        );
    }
}

#[test]
fn a_version_label_the_api_server_would_refuse_is_a_usage_error() {
    for args in [
        [
            "build",
            "examples/catalog",
            "--version-label",
            "release 1.4",
        ],
        [
            "build",
            "examples/catalog",
            "--version-label-key",
            "Example.com/v",
        ],
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
        assert!(out.stdout.is_empty());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("not a valid label"), "{stderr}");
    }
    // An empty version (an unset `$VERSION`) would stamp an empty label on every object.
    let out = run(&["build", "examples/catalog", "--version-label", ""]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a version"));
    // A key without a version would stamp nothing.
    let out = run(&[
        "build",
        "examples/catalog",
        "--version-label-key",
        "example.com/v",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--version-label <VERSION>"));
}

/// Families and preferences under `--catalog` are rendered for resolution, by every command
/// and by the KRM function's `catalogs:`, and never printed.
#[test]
fn families_under_catalog_resolve_everywhere() {
    const VM: &str = "examples/vms/vision-workstation.yaml";
    for command in ["build", "expand", "validate"] {
        let out = run(&[command, "--catalog", "examples/catalog", VM]);
        assert_eq!(out.status.code(), Some(0), "{command}: {}", describe(&out));
    }
    let out = run(&["build", "--catalog", "examples/catalog", VM]);
    let objects = parse(&stdout(&out), "stdout");
    assert_eq!(objects.len(), 1, "only the VM is printed: {}", stdout(&out));
    let domain = &objects[0].value["spec"]["template"]["spec"]["domain"];
    // g2.small is a family size of the example catalog: its GPU is applied.
    assert!(
        domain["devices"]["gpus"]
            .as_array()
            .is_some_and(|g| !g.is_empty()),
        "{domain}"
    );

    let vm = std::fs::read_to_string(VM).unwrap();
    let catalog = std::fs::canonicalize("examples/catalog").unwrap();
    let mut items = String::new();
    for line in vm
        .lines()
        .skip_while(|l| l.starts_with('#') || l.is_empty())
    {
        let prefix = if items.is_empty() { "- " } else { "  " };
        items.push_str(&format!("{prefix}{line}\n"));
    }
    let input = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}\
         functionConfig:\n  apiVersion: kvrender.io/v1alpha1\n  kind: KVRender\n  \
         metadata: {{name: c}}\n  catalogs: [{}]\n",
        catalog.display()
    );
    let mut cmd = kvrender();
    cmd.arg("fn");
    let out = run_with_stdin(cmd, &input);
    assert_eq!(out.status.code(), Some(0), "fn: {}", describe(&out));
    assert!(stdout(&out).contains("gpus:"), "{}", stdout(&out));
}

/// A `--catalog` path that cannot be read stops `build` with exit code 2, as it does the other
/// commands and as a PATH argument does.
#[test]
fn unreadable_catalog_path_is_exit_code_2() {
    for command in ["build", "expand", "validate"] {
        let out = run(&[command, "--catalog", "no/such/dir", "examples/vms"]);
        assert_eq!(out.status.code(), Some(2), "{command}: {}", describe(&out));
        assert!(out.stdout.is_empty(), "{command}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("no/such/dir"),
            "{command}: {}",
            describe(&out)
        );
    }
}

/// A `kustomization.yaml` is kustomize's configuration, never a resource, and often has no
/// `apiVersion` or `kind`: no command reads it, whether found in a directory or named.
#[test]
fn kustomization_files_are_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("kustomization.yaml"),
        "resources:\n- vm.yaml\n",
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("kustomization.yml"),
        "- not even a mapping\n",
    )
    .unwrap();
    std::fs::copy(FEDORA_VM, tmp.path().join("vm.yaml")).unwrap();
    let dir = tmp.path().to_str().unwrap();
    let named = tmp.path().join("kustomization.yaml");
    for args in [
        vec!["build", dir],
        vec!["validate", dir],
        vec!["expand", dir],
        vec!["validate", dir, named.to_str().unwrap()],
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", describe(&out));
        let text = stdout(&out);
        assert!(!text.contains("resources:"), "{args:?}: {text}");
    }
    let out = run(&["build", dir]);
    let objects = parse(&stdout(&out), "stdout");
    assert_eq!(objects.len(), 1);
    assert_eq!(objects[0].kind_str(), "VirtualMachine");
}

/// A kustomize tree keeps patches and generator inputs beside its resources. A file that a
/// kustomization in its folder or above names as a patch or an input is not a resource: no
/// command reads it, walked or named, so a patch of a VM is neither a second definition of
/// it nor a broken VM. The overlay itself is what `kubectl kustomize` builds, and kvrender
/// reads that from stdin.
#[test]
fn files_a_kustomization_names_as_patches_or_inputs_are_not_read() {
    const TREE: &str = "testdata/build/kustomize-tree";
    const OVERLAY: &str = "testdata/build/kustomize-tree/overlays/prod";
    let out = run(&["validate", TREE]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(stdout(&out), "No problems found in 1 object.\n");

    let out = run(&["build", TREE]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let objects = parse(&stdout(&out), "stdout");
    assert_eq!(objects.len(), 1, "{}", stdout(&out));
    assert_eq!(objects[0].name(), "web");
    assert_eq!(objects[0].value["spec"]["runStrategy"], "Always");

    for file in ["instancetype.yaml", "halted.yaml", "settings.yaml"] {
        let path = format!("{OVERLAY}/{file}");
        let out = run(&["validate", &path]);
        assert_eq!(out.status.code(), Some(0), "{file}: {}", describe(&out));
        assert_eq!(stdout(&out), "No problems found in 0 objects.\n", "{file}");
        // Named on its own, it is said not to be read, so that its turn in a pre-commit hook
        // is not taken for a clean check.
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with(&format!(
                "note: {path}: not read: a kustomization in its folder"
            )),
            "{file}: {stderr}"
        );
        // The note's command builds the folder of that kustomization, as the file is written.
        assert!(
            stderr.contains(&format!(
                "(`kubectl kustomize {OVERLAY} | kvrender validate -`)"
            )),
            "{file}: {stderr}"
        );
    }
    // Named from the overlay itself, and from a folder below it.
    for (dir, file, folder) in [
        (OVERLAY.to_string(), "halted.yaml", "."),
        (
            format!("{OVERLAY}/../../base"),
            "../overlays/prod/halted.yaml",
            "../overlays/prod",
        ),
    ] {
        let out = kvrender()
            .current_dir(root().join(dir))
            .args(["validate", file])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!(
                "(`kubectl kustomize {folder} | kvrender validate -`)"
            )),
            "{file}: {stderr}"
        );
    }
    // Found in a walked directory, it is left out without a word of its own; a directory in
    // which nothing else was found gets one note, for the directory.
    let out = run(&["validate", OVERLAY]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{}", describe(&out));
    assert!(
        stderr.starts_with(&format!(
            "note: {OVERLAY}: nothing read but a kustomization"
        )) && !stderr.contains("halted.yaml"),
        "{}",
        describe(&out)
    );
    // A file no kustomization names is read as ever.
    let tmp = tempfile::tempdir().unwrap();
    let stray = tmp.path().join("halted.yaml");
    std::fs::copy(format!("{OVERLAY}/halted.yaml"), &stray).unwrap();
    let out = run(&["validate", stray.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));

    // The overlay as kustomize builds it: the patches applied, the ConfigMap generated.
    let built = std::process::Command::new(tool("kubectl"))
        .args(["kustomize", OVERLAY])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", describe(&built));
    let mut build = kvrender();
    build.args(["build", "-"]).current_dir(root());
    let out = run_with_stdin(build, &built.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let objects = parse(&stdout(&out), "stdout");
    let kinds: Vec<&str> = objects.iter().map(Object::kind_str).collect();
    assert_eq!(kinds, ["ConfigMap", "VirtualMachine"]);
    let spec = &objects[1].value["spec"];
    assert_eq!(spec["runStrategy"], "Halted");
    // u1.large: 2 vCPUs, 8Gi.
    assert_eq!(spec["template"]["spec"]["domain"]["memory"]["guest"], "8Gi");
}

/// A Helm chart is not manifests until Helm renders it: no command reads the files of a
/// directory holding `Chart.yaml`, walked or named (pre-commit names them one by one). Another
/// template that is not YAML yet gets a `KV001` that says to render it first.
#[test]
fn helm_charts_are_not_read_and_templates_are_named_as_such() {
    let tmp = tempfile::tempdir().unwrap();
    let chart = tmp.path().join("charts/web");
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: web\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(chart.join("values.yaml"), "replicas: 2\n").unwrap();
    let vm_template =
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: {{ .Values.name }}\n";
    let template = chart.join("templates/vm.yaml");
    std::fs::write(&template, vm_template).unwrap();
    std::fs::copy(FEDORA_VM, tmp.path().join("vm.yaml")).unwrap();
    let out = run(&["validate", tmp.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(stdout(&out), "No problems found in 1 object.\n");
    let named: Vec<String> = ["Chart.yaml", "values.yaml", "templates/vm.yaml"]
        .iter()
        .map(|f| chart.join(f).to_string_lossy().into_owned())
        .collect();
    let mut args = vec!["validate"];
    args.extend(named.iter().map(String::as_str));
    let out = run(&args);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(stdout(&out), "No problems found in 0 objects.\n");

    let elsewhere = tmp.path().join("vm.yaml.tmpl.yaml");
    std::fs::write(&elsewhere, vm_template).unwrap();
    let out = run(&["validate", elsewhere.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let report = stdout(&out);
    assert!(
        report.contains("vm.yaml.tmpl.yaml:4:") && report.contains("error[KV001]"),
        "{report}"
    );
    assert!(report.contains("render it first"), "{report}");
}

/// A `List` (or `VirtualMachineList`, as `kubectl get -o yaml` prints one) stands for its items,
/// as kustomize reads it: each is expanded, checked and printed in its own right, and findings
/// point at the item's own lines.
#[test]
fn list_documents_stand_for_their_items() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("vms.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: kubevirt.io/v1\n  kind: VirtualMachine\n  \
         metadata: {name: a}\n  spec:\n    instancetype: {name: u1.small}\n    \
         template: {spec: {domain: {devices: {}}}}\n- apiVersion: v1\n  kind: VirtualMachineList\n  \
         items:\n  - apiVersion: kubevirt.io/v1\n    kind: VirtualMachine\n    metadata:\n      \
         name: b\n    spec:\n      instancetype: {name: u1.small}\n      template:\n        \
         spec:\n          domain:\n            cpu: {sockets: 3}\n            devices: {}\n\
         ---\napiVersion: v1\nkind: List\nitems: null\n",
    )
    .unwrap();
    let path = file.to_str().unwrap();
    // The nested VM conflicts with its instancetype: reported at its `sockets` line, 22.
    for command in ["build", "expand", "validate"] {
        let out = run(&[command, path]);
        assert_eq!(out.status.code(), Some(1), "{command}: {}", describe(&out));
        let text = format!("{}{}", stdout(&out), String::from_utf8_lossy(&out.stderr));
        assert!(
            text.contains("vms.yaml:22: error[KV010] VirtualMachine/b:"),
            "{command}: {text}"
        );
    }
    let fixed = std::fs::read_to_string(&file)
        .unwrap()
        .replace("cpu: {sockets: 3}", "cpu: {}");
    std::fs::write(&file, fixed).unwrap();
    for command in ["build", "expand"] {
        let out = run(&[command, path]);
        assert_eq!(out.status.code(), Some(0), "{command}: {}", describe(&out));
        let objects = parse(&stdout(&out), "stdout");
        let names: Vec<&str> = objects.iter().map(|o| o.name()).collect();
        assert_eq!(names, ["a", "b"], "{command}");
        for vm in &objects {
            assert_eq!(vm.kind_str(), "VirtualMachine");
            // Expanded: u1.small's vCPU is in the domain.
            assert_eq!(
                vm.value["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"], 1,
                "{command}"
            );
        }
    }
}

/// The same for a `List` written as JSON, as `kubectl get vm -A -o json` prints it: a finding
/// about an item points at the line in that item, in a `.json` file and in a `.yaml` one.
#[test]
fn json_list_findings_point_at_the_items_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let vm = |name: &str, sockets: u32| {
        serde_json::json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"name": name},
            "spec": {"runStrategy": "Halted", "instancetype": {"name": "u1.small"},
                     "template": {"spec": {"domain": {"cpu": {"sockets": sockets},
                                                      "devices": {}}}}}})
    };
    let list = serde_json::json!({"apiVersion": "v1", "kind": "List",
        "items": [vm("a", 2), vm("b", 3)]});
    let text = serde_json::to_string_pretty(&list).unwrap();
    let lines = |needle: &str| -> Vec<usize> {
        text.lines()
            .enumerate()
            .filter(|(_, l)| l.contains(needle))
            .map(|(i, _)| i + 1)
            .collect()
    };
    let (a, b) = (lines("\"sockets\": 2")[0], lines("\"sockets\": 3")[0]);
    for name in ["vms.json", "vms.yaml"] {
        let file = tmp.path().join(name);
        std::fs::write(&file, &text).unwrap();
        let out = run(&["validate", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
        let found = stdout(&out);
        for (line, vm) in [(a, "a"), (b, "b")] {
            let at = format!("{name}:{line}: error[KV010] VirtualMachine/{vm}:");
            assert!(found.contains(&at), "{at}\n{found}");
        }
    }
}

/// A user's preference may name shipped parts and parts of a `--catalog` file: `build` renders
/// it and `expand` resolves a VM against it; with
/// `--no-default-catalog` the shipped parts are not there.
#[test]
fn a_users_catalog_borrows_shipped_and_catalog_parts() {
    let tmp = tempfile::tempdir().unwrap();
    let mine = tmp.path().join("mine.yaml");
    std::fs::write(
        &mine,
        "apiVersion: kvrender.io/v1alpha1\nkind: Preference\nmetadata: {name: office}\n\
         spec:\n  displayName: Office desktop\n  scopes: [cluster]\n  \
         parts: [windows, tpm, team]\n  vars: {cpu: 1, memory: 2Gi}\n---\n\
         apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: desk}\nspec:\n  \
         instancetype: {name: u1.medium}\n  preference: {name: office}\n  \
         template: {spec: {domain: {devices: {}}}}\n",
    )
    .unwrap();
    let team = tmp.path().join("team.yaml");
    std::fs::write(
        &team,
        "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nmetadata: {name: team}\nparts:\n  \
         team:\n    metadata: {labels: {example.com/team: desktops}}\n",
    )
    .unwrap();
    let (mine, team) = (mine.to_str().unwrap(), team.to_str().unwrap());

    let built = run(&["build", "--catalog", team, mine]);
    assert_eq!(built.status.code(), Some(0), "{}", describe(&built));
    let objects = parse(&stdout(&built), "built");
    let office = objects
        .iter()
        .find(|o| o.name() == "office")
        .expect("the preference is rendered");
    assert_eq!(
        office.value["metadata"]["labels"]["example.com/team"],
        "desktops"
    );
    assert_eq!(
        office.value["spec"]["devices"]["preferredDiskBus"], "sata",
        "from the shipped `windows` part"
    );
    let desk = objects.iter().find(|o| o.name() == "desk").unwrap();
    let devices = &desk.value["spec"]["template"]["spec"]["domain"]["devices"];
    assert_eq!(devices["tpm"]["persistent"], true, "{devices}");

    let expanded = run(&["expand", "--catalog", team, mine]);
    assert_eq!(expanded.status.code(), Some(0), "{}", describe(&expanded));
    let vm = parse(&stdout(&expanded), "expanded");
    assert_eq!(
        vm[0].value["spec"]["template"]["spec"]["domain"]["devices"]["tpm"]["persistent"],
        true
    );

    let hermetic = run(&["build", "--no-default-catalog", "--catalog", team, mine]);
    assert_eq!(hermetic.status.code(), Some(1));
    assert!(hermetic.stdout.is_empty());
    let errors = String::from_utf8_lossy(&hermetic.stderr);
    for part in ["windows", "tpm"] {
        assert!(
            errors.contains(&format!(
                "preference `office`: unknown part `{part}`: the shipped catalog has it, but is \
                 turned off here"
            )),
            "{errors}"
        );
    }
    assert!(!errors.contains("unknown part `team`"), "{errors}");
}

/// A catalog document that does not parse or a family that does not render is reported
/// alone: the names it would have defined are not also reported as not found, by `build`,
/// `validate` and `expand`. A broken VirtualMachine explains nothing and hides nothing.
#[test]
fn a_broken_catalog_is_not_followed_by_knock_on_findings() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = tmp.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let vm = write(
        "vm.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: vm}\nspec:\n  \
         runStrategy: Halted\n  instancetype: {name: g1.medium}\n  preference: {name: office}\n  \
         template: {spec: {domain: {devices: {}}}}\n",
    );
    let family = write(
        "family.yaml",
        "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {name: g}\n\
         spec:\n  version: 1\n  sizes:\n    - [medium, 2, 4Gi]\n  template:\n    spec:\n      \
         cpu: {guest: \"{{ size.cpus }}\"}\n      memory: {guest: \"{{ size.memory }}\"}\n---\n\
         apiVersion: kvrender.io/v1alpha1\nkind: Preference\nmetadata: {name: office}\n\
         spec:\n  parts: [mine]\n",
    );
    let parts = write(
        "parts.yaml",
        "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nmetadata: {name: p}\nparts:\n  \
         mine:\n    spec: {devices: {preferredDiskBus: virtio}\n",
    );
    let broken_vm = write(
        "broken-vm.yaml",
        "# Uses the shipped Preference objects.\napiVersion: kubevirt.io/v1\n\
         kind: VirtualMachine\nmetadata: {name: x\nspec:\n  instancetype:\n    \
         kind: VirtualMachineClusterInstancetype\n    name: u1.medium\n",
    );
    let codes = |out: &Output| {
        let text = String::from_utf8_lossy(&out.stderr).to_string()
            + &String::from_utf8_lossy(&out.stdout);
        let mut found: Vec<String> = text
            .lines()
            .filter_map(|l| Some(l.split_once("error[")?.1[..5].to_string()))
            .chain(
                text.lines()
                    .filter_map(|l| Some(l.split_once("warning[")?.1[..5].to_string())),
            )
            .collect();
        found.sort();
        found
    };
    let no_catalog = "--no-default-catalog";
    for command in ["build", "validate", "expand"] {
        // The preference names an unknown part (and the family's template would fail next):
        // that is reported, the two names the VM asks for are not.
        let out = run(&[command, no_catalog, &vm, &family]);
        assert_eq!(out.status.code(), Some(1), "{command}: {}", describe(&out));
        assert_eq!(codes(&out), ["KV040"], "{command}: {}", describe(&out));
        assert!(describe(&out).contains("unknown part `mine`"));
        // Without the preference, the family's template error is reported alone.
        let family_only = family.replace("family.yaml", "family-only.yaml");
        let text = std::fs::read_to_string(&family).unwrap();
        std::fs::write(&family_only, &text[..text.find("---").unwrap()]).unwrap();
        let out = run(&[command, no_catalog, &vm, &family_only]);
        assert_eq!(codes(&out), ["KV040"], "{command}: {}", describe(&out));
        assert!(describe(&out).contains("size.cpus"));
        // With the Parts document broken, only its syntax error is reported.
        let out = run(&[command, no_catalog, &vm, &family, &parts]);
        assert_eq!(codes(&out), ["KV001"], "{command}: {}", describe(&out));
    }
    // A broken VM hides nothing: the other VM's names are still not found.
    let out = run(&["validate", no_catalog, &vm, &broken_vm]);
    assert_eq!(
        codes(&out),
        ["KV001", "KV011", "KV011"],
        "{}",
        describe(&out)
    );
}

#[test]
fn a_template_that_does_not_compile_is_reported_in_a_part_nothing_uses() {
    let tmp = tempfile::tempdir().unwrap();
    let catalog = tmp.path().join("parts.yaml");
    // `base` is used through `linux`; `spare` and `broken-too` are used by nothing, and
    // `linux` itself holds a leaf that only fails when rendered with its values.
    std::fs::write(
        &catalog,
        "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nmetadata:\n  name: shared\nparts:\n  \
         base:\n    spec:\n      devices:\n        preferredDiskBus: virtio\n  \
         linux:\n    parts: [base]\n    spec:\n      devices:\n        \
         preferredInterfaceModel: \"{{ vars.model }}\"\n  \
         spare:\n    metadata:\n      labels:\n        os: \"{% if %}\"\n    spec:\n      \
         devices:\n        preferredCdromBus: \"{{ vars.bus \"\n  \
         fine:\n    spec:\n      devices:\n        preferredCdromBus: \"{{ vars.bus }}\"\n\
         ---\napiVersion: kvrender.io/v1alpha1\nkind: Preference\nmetadata:\n  name: fedora\n\
         spec:\n  parts: [linux]\n",
    )
    .unwrap();
    let out = run(&["build", "--no-default-catalog", catalog.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(out.stdout.is_empty(), "nothing printed");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error[")).collect();
    // The used part fails for the preference that renders it; the unused one fails for
    // each leaf that does not compile, at its own line; the unused part that compiles and the
    // part used through another are not named.
    assert_eq!(errors.len(), 3, "{stderr}");
    assert!(
        errors[0].contains("parts.yaml:14:") && errors[0].contains("preference `fedora`"),
        "{stderr}"
    );
    assert!(
        errors[1].contains("parts.yaml:18:")
            && errors[1].contains("part `spare`, which no family or preference uses"),
        "{stderr}"
    );
    assert!(
        errors[2].contains("parts.yaml:21:") && errors[2].contains("part `spare`"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("`fine`") && !stderr.contains("`base`"),
        "{stderr}"
    );
}

/// `build -o DIR` run where DIR lies inside a walked PATH (the default `.` at a repository's
/// root) does not read back what it wrote: the second run writes the same files instead of
/// finding every object defined twice, and neither does any other command walking `.` later
/// (DIR holds a marker file saying what it is).
#[test]
fn an_output_dir_inside_the_input_is_not_read_back() {
    let tmp = tempfile::tempdir().unwrap();
    let copy = |from: &str, to: &str| {
        std::fs::create_dir_all(tmp.path().join(to)).unwrap();
        for entry in std::fs::read_dir(root().join(from)).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, tmp.path().join(to).join(path.file_name().unwrap())).unwrap();
        }
    };
    copy("examples/catalog", "catalog");
    let build = |args: &[&str]| run_in(tmp.path(), args);
    for args in [
        &["build", "-o", "rendered"][..],
        &["build", ".", "-o", "./rendered"],
        &["build", "-o", "rendered"],
    ] {
        let out = build(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", describe(&out));
    }
    let written = tree(&tmp.path().join("rendered"));
    assert_eq!(written.len(), 6, "{:?}", written.keys());
    let marker = tmp.path().join("rendered/.kvrender-output");
    assert!(marker.is_file(), "DIR is marked as build output");
    // Named as a PATH, the directory is read like any other.
    let again = build(&["build", "rendered"]);
    assert_eq!(again.status.code(), Some(0), "{}", describe(&again));
    assert_eq!(
        String::from_utf8_lossy(&again.stdout)
            .matches("\nkind: ")
            .count(),
        6
    );
    // Every other command walking the repository leaves the output out as well, even when it
    // was written by a run that read only part of it.
    let only_catalog = build(&["build", "catalog", "-o", "rendered"]);
    assert_eq!(
        only_catalog.status.code(),
        Some(0),
        "{}",
        describe(&only_catalog)
    );
    for args in [
        &["validate", "."][..],
        &["validate", "--format", "json", "."],
        &["expand", "."],
        &["build", "."],
        &["build", "--catalog-only"],
    ] {
        let out = build(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", describe(&out));
        assert!(
            !describe(&out).contains("KV020"),
            "{args:?}: {}",
            describe(&out)
        );
    }
    // A file of it named on the command line is read: beside its source, a second definition.
    let named = build(&[
        "validate",
        "catalog",
        &format!("rendered/{}", written.keys().next().unwrap()),
    ]);
    assert_eq!(named.status.code(), Some(1), "{}", describe(&named));
    assert!(
        String::from_utf8_lossy(&named.stdout).contains("error[KV020]"),
        "{}",
        describe(&named)
    );
    // A file the marker does not list as written is a source all the same: walks read it,
    // and so under a marker that lists nothing, which would otherwise hide a whole folder.
    let vm = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: v}\nspec:\n  \
              runStrategy: Always\n  instancetype: {name: nope}\n  template: {spec: {domain: \
              {devices: {}}}}\n";
    std::fs::write(tmp.path().join("rendered/mine.yaml"), vm).unwrap();
    std::fs::create_dir_all(tmp.path().join("vms")).unwrap();
    std::fs::write(tmp.path().join("vms/.kvrender-output"), "").unwrap();
    std::fs::write(
        tmp.path().join("vms/vm.yaml"),
        vm.replace("name: v}", "name: w}"),
    )
    .unwrap();
    let out = build(&["validate", "--no-default-catalog", "."]);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("./rendered/mine.yaml:6: warning[KV011] VirtualMachine/v:")
            && report.contains("./vms/vm.yaml:6: warning[KV011] VirtualMachine/w:")
            && !report.contains("KV020"),
        "{report}"
    );
    std::fs::remove_file(tmp.path().join("rendered/mine.yaml")).unwrap();
    std::fs::remove_dir_all(tmp.path().join("vms")).unwrap();
    // Without its marker, the directory is an ordinary one again.
    std::fs::remove_file(&marker).unwrap();
    let unmarked = build(&["validate", "."]);
    assert_eq!(unmarked.status.code(), Some(1), "{}", describe(&unmarked));
    assert!(
        String::from_utf8_lossy(&unmarked.stdout).contains("error[KV020]"),
        "{}",
        describe(&unmarked)
    );
}

/// In `build`, an instancetype that is not found is an error even when another error (here the
/// preference's requirements, checked against the VM alone as KubeVirt does when the lookup
/// fails) keeps the VM from being expanded.
#[test]
fn a_missing_instancetype_is_an_error_beside_other_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("vm.yaml");
    std::fs::write(
        &file,
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachinePreference\n\
         metadata: {name: big}\nspec:\n  requirements:\n    cpu: {guest: 2}\n---\n\
         apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: vm}\nspec:\n  \
         instancetype: {kind: VirtualMachineInstancetype, name: nowhere}\n  \
         preference: {kind: VirtualMachinePreference, name: big}\n  \
         template: {spec: {domain: {devices: {}}}}\n",
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let out = run(&["build", "--no-default-catalog", file]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("error[KV011]"), "{stderr}");
    assert!(stderr.contains("error[KV033]"), "{stderr}");
    // `validate` reports what KubeVirt's admission does: the lookup is let fail (a warning),
    // the requirements refuse the VM.
    let out = run(&["validate", "--no-default-catalog", file]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string() + &stdout(&out);
    assert!(stderr.contains("warning[KV011]"), "{stderr}");
    assert!(stderr.contains("error[KV033]"), "{stderr}");
}

/// A catalog document that does not follow the format names itself as the finding's object,
/// in the data formats as in the human one.
#[test]
fn a_malformed_catalog_document_is_the_findings_object() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("family.yaml");
    std::fs::write(
        &file,
        "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {name: q}\n\
         spec:\n  parts: [instancetype]\n  displayName: Q\n  \
         traits: {dedicatedCpuPlacement: true}\n  sizes: [[small, 1, 1Gi]]\n",
    )
    .unwrap();
    let out = kvrender()
        .args(["validate", "--format", "json"])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let finding = &report["findings"][0];
    assert_eq!(finding["code"], "KV040");
    assert_eq!(finding["line"], 7);
    assert_eq!(finding["object"]["kind"], "InstancetypeFamily");
    assert_eq!(finding["object"]["name"], "q");
    let message = finding["message"].as_str().unwrap();
    assert!(
        message.contains("(did you mean `dedicatedCPUPlacement`?)"),
        "{message}"
    );
}

/// A shipped part's template that fails for the user's family (it reads a `displayName` the
/// family does not give) is reported in the user's file, at the family's `parts`, with the
/// shipped template's own place in the message.
#[test]
fn a_shipped_template_failing_for_a_users_family_points_at_the_family() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("family.yaml");
    std::fs::write(
        &file,
        "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {name: gn}\n\
         spec:\n  version: 1\n  parts: [instancetype]\n  sizes: [[huge, 8, 32Gi]]\n",
    )
    .unwrap();
    let out = kvrender().arg("build").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let first = stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(&format!("{}:6: error[KV040]", file.display())),
        "{stderr}"
    );
    assert!(
        stderr.contains("(a shipped template, at <shipped>/catalog/instancetypes/parts.yaml:"),
        "{stderr}"
    );
    assert!(
        stderr.contains("`family.displayName` is undefined"),
        "{stderr}"
    );
}

/// `build -o DIR --prune`: an object removed from the inputs loses its file; a file no run
/// wrote stays.
#[test]
fn prune_removes_the_files_of_objects_no_longer_built() {
    let tmp = tempfile::tempdir().unwrap();
    let cm = |name: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n");
    std::fs::write(
        tmp.path().join("in.yaml"),
        format!("{}---\n{}", cm("kept"), cm("gone")),
    )
    .unwrap();
    let build = |args: &[&str]| {
        kvrender()
            .current_dir(tmp.path())
            .args(["build", "--no-default-catalog", "in.yaml"])
            .args(args)
            .output()
            .unwrap()
    };
    let first = build(&["-o", "out"]);
    assert_eq!(first.status.code(), Some(0), "{}", describe(&first));
    assert_eq!(tree(&tmp.path().join("out")).len(), 2);
    std::fs::write(tmp.path().join("in.yaml"), cm("kept")).unwrap();
    let kept = build(&["-o", "out"]);
    assert_eq!(
        tree(&tmp.path().join("out")).len(),
        2,
        "no --prune, nothing removed"
    );
    assert_eq!(kept.status.code(), Some(0), "{}", describe(&kept));
    let pruned = build(&["-o", "out", "--prune"]);
    assert_eq!(pruned.status.code(), Some(0), "{}", describe(&pruned));
    assert!(
        String::from_utf8_lossy(&pruned.stderr)
            .contains("wrote 1 file to out, removed 1 stale file"),
        "{}",
        describe(&pruned)
    );
    let left: Vec<String> = tree(&tmp.path().join("out")).into_keys().collect();
    assert_eq!(left, ["v1_configmap_kept.yaml"]);

    // A directory of one's own: `-o` writes into it, and `--prune` later deletes only what a
    // run wrote there, never the files that were there before (a hand-written kustomization).
    std::fs::create_dir(tmp.path().join("mine")).unwrap();
    std::fs::write(
        tmp.path().join("mine/kustomization.yaml"),
        "resources: []\n",
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("in.yaml"),
        format!("{}---\n{}", cm("kept"), cm("gone")),
    )
    .unwrap();
    let first = build(&["-o", "mine", "--prune"]);
    assert_eq!(first.status.code(), Some(0), "{}", describe(&first));
    std::fs::write(tmp.path().join("in.yaml"), cm("kept")).unwrap();
    let pruned = build(&["-o", "mine", "--prune"]);
    assert_eq!(pruned.status.code(), Some(0), "{}", describe(&pruned));
    let left: Vec<String> = tree(&tmp.path().join("mine")).into_keys().collect();
    assert_eq!(left, ["kustomization.yaml", "v1_configmap_kept.yaml"]);
}

/// `build -o DIR --check` writes nothing: it names each file a run would create, change or
/// (with `--prune`) delete, and exits 1 when there is one; 0 when DIR is up to date.
#[test]
fn check_reports_an_out_of_date_output_dir_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let cm = |name: &str, v: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata: {{v: \"{v}\"}}\n"
        )
    };
    let write_input = |text: String| std::fs::write(tmp.path().join("in.yaml"), text).unwrap();
    let build = |args: &[&str]| {
        kvrender()
            .current_dir(tmp.path())
            .args(["build", "--no-default-catalog", "in.yaml", "-o", "out"])
            .args(args)
            .output()
            .unwrap()
    };
    let stderr = |out: &std::process::Output| String::from_utf8_lossy(&out.stderr).into_owned();
    write_input(format!("{}---\n{}", cm("a", "1"), cm("b", "1")));

    let missing = build(&["--check"]);
    assert_eq!(missing.status.code(), Some(1), "{}", describe(&missing));
    assert!(stderr(&missing).contains("out does not exist: 2 files to write"));
    assert!(!tmp.path().join("out").exists());
    write_input(cm("a", "1"));
    assert!(stderr(&build(&["--check"])).contains(
        "out does not exist: 1 file to write; run `kvrender build --no-default-catalog in.yaml \
         -o out` to write it"
    ));
    write_input(format!("{}---\n{}", cm("a", "1"), cm("b", "1")));

    assert_eq!(build(&[]).status.code(), Some(0));
    let up_to_date = build(&["--check", "--prune"]);
    assert_eq!(
        up_to_date.status.code(),
        Some(0),
        "{}",
        describe(&up_to_date)
    );
    assert_eq!(stderr(&up_to_date), "out is up to date\n");

    // `a` changes, `b` goes, `c` comes.
    write_input(format!("{}---\n{}", cm("a", "2"), cm("c", "1")));
    let before = tree(&tmp.path().join("out"));
    let stale = build(&["--check", "--prune"]);
    assert_eq!(stale.status.code(), Some(1), "{}", describe(&stale));
    let text = stderr(&stale);
    for line in [
        "out/v1_configmap_c.yaml: new\n",
        "out/v1_configmap_a.yaml: changed\n",
        "out/v1_configmap_b.yaml: stale\n",
        // The marker, which records the files written, changes with them.
        "out/.kvrender-output: changed\n",
        // The command to run, as this one was given but for `--check`.
        "out is out of date: 1 new, 2 changed, 1 stale; run `kvrender build \
         --no-default-catalog in.yaml -o out --prune` to update it\n",
    ] {
        assert!(text.contains(line), "no {line:?} in\n{text}");
    }
    assert_eq!(tree(&tmp.path().join("out")), before, "--check wrote");
    // Without --prune, a file the run would not write is no concern.
    let text = stderr(&build(&["--check"]));
    assert!(text.contains("1 new, 2 changed, 0 stale"), "{text}");

    assert_eq!(build(&["--prune"]).status.code(), Some(0));
    assert_eq!(build(&["--check", "--prune"]).status.code(), Some(0));
    // A directory whose marker is gone is not up to date: the run would write it again.
    let marker = tmp.path().join("out/.kvrender-output");
    let kept = std::fs::read(&marker).unwrap();
    std::fs::remove_file(&marker).unwrap();
    let unmarked = build(&["--check", "--prune"]);
    assert_eq!(unmarked.status.code(), Some(1), "{}", describe(&unmarked));
    assert!(stderr(&unmarked).contains("out/.kvrender-output: new\n"));
    std::fs::write(&marker, kept).unwrap();
    // An output path below a file is the run's usage error (exit 2), not an out-of-date one.
    std::fs::write(tmp.path().join("afile"), "x").unwrap();
    for args in [&["--check"][..], &[]] {
        let below = kvrender()
            .current_dir(tmp.path())
            .args([
                "build",
                "--no-default-catalog",
                "in.yaml",
                "-o",
                "afile/out",
            ])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(below.status.code(), Some(2), "{}", describe(&below));
        assert!(
            stderr(&below).contains("`afile` is not a directory"),
            "{}",
            describe(&below)
        );
    }
    // A broken input is a finding, not an out-of-date directory: exit 1, nothing compared.
    write_input("a: [".into());
    let broken = build(&["--check"]);
    assert_eq!(broken.status.code(), Some(1));
    assert!(
        stderr(&broken).contains("error[KV001]"),
        "{}",
        describe(&broken)
    );
    assert!(
        !stderr(&broken).contains("up to date"),
        "{}",
        describe(&broken)
    );
}

/// `build --catalog-only` prints the instancetypes and preferences among the inputs beside the
/// rendered ones, so it checks them as `build` does: two definitions of one object are refused,
/// and so is a wrongly typed spec. A VM it leaves out is not checked.
#[test]
fn catalog_only_checks_the_catalog_objects_it_prints() {
    let tmp = tempfile::tempdir().unwrap();
    let it = |name: &str, guest: &str| {
        format!(
            "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
             metadata: {{name: {name}}}\nspec: {{cpu: {{guest: {guest}}}, memory: {{guest: 1Gi}}}}\n"
        )
    };
    let vm = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: vm}\n\
              spec: {instancetype: {name: nowhere}, template: {spec: {domain: {devices: {}}}}}\n";
    let run = |text: String| {
        std::fs::write(tmp.path().join("in.yaml"), text).unwrap();
        kvrender()
            .current_dir(tmp.path())
            .args(["build", "--catalog-only", "--no-default-catalog", "in.yaml"])
            .output()
            .unwrap()
    };
    let twice = run(format!("{}---\n{}", it("small", "1"), it("small", "2")));
    assert_eq!(twice.status.code(), Some(1), "{}", describe(&twice));
    assert!(twice.stdout.is_empty());
    assert!(
        describe(&twice).contains("error[KV020]"),
        "{}",
        describe(&twice)
    );
    let typed = run(it("small", "\"2\""));
    assert_eq!(typed.status.code(), Some(1), "{}", describe(&typed));
    assert!(
        describe(&typed).contains("error[KV004]"),
        "{}",
        describe(&typed)
    );
    let fine = run(format!("{}---\n{vm}", it("small", "1")));
    assert_eq!(fine.status.code(), Some(0), "{}", describe(&fine));
    assert_eq!(
        String::from_utf8_lossy(&fine.stdout)
            .matches("kind: ")
            .count(),
        1
    );
}

/// Two objects whose file names come out the same (file names are lower-cased) stop the
/// write before anything is written, and the message names both objects and their lines.
#[test]
fn objects_sharing_a_file_name_are_named_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("roles.yaml");
    std::fs::write(
        &input,
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: Admin\n\
         ---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  \
         name: admin\n",
    )
    .unwrap();
    let dir = tmp.path().join("out");
    let out = run(&[
        "build",
        input.to_str().unwrap(),
        "-o",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "ClusterRole/Admin (at {0}:4) and ClusterRole/admin (at {0}:9) would be written to \
             the same file `rbac.authorization.k8s.io_v1_clusterrole_admin.yaml`",
            input.display()
        )),
        "{stderr}"
    );
    assert!(!dir.exists(), "nothing written");
}

/// A `build -o` stopped halfway leaves its staging folder and journal: `--check` and a run that
/// fails on its findings say so, rather than leave the half-written DIR unexplained.
#[test]
fn check_and_a_failing_run_tell_of_a_run_stopped_halfway() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("cm.yaml");
    std::fs::write(
        &input,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: \"1\"}\n",
    )
    .unwrap();
    let dir = tmp.path().join("out");
    let (input, out_dir) = (input.to_str().unwrap(), dir.to_str().unwrap());
    let out = run(&["build", input, "-o", out_dir]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let note = "was stopped halfway (or is running now), leaving `.kvrender-staging-";
    let out = run(&["build", input, "-o", out_dir, "--check"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains(note));
    // What a stopped run leaves: its staging folder, with the journal of what it was changing.
    let staging = dir.join(".kvrender-staging-0-4294967294");
    std::fs::create_dir_all(&staging).unwrap();
    std::fs::write(staging.join(".journal"), "v1_configmap_a.yaml\n").unwrap();
    let out = run(&["build", input, "-o", out_dir, "--check"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(note), "{stderr}");
    // A run that stops at an error finding writes nothing, and says so too.
    std::fs::write(
        tmp.path().join("vm.yaml"),
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: v}\nspec:\n  \
         instancetype: {name: nowhere}\n  template: {spec: {domain: {devices: {}}}}\n",
    )
    .unwrap();
    let vm = tmp.path().join("vm.yaml");
    let out = run(&["build", input, vm.to_str().unwrap(), "-o", out_dir]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(note),
        "{}",
        describe(&out)
    );
}

/// An object with only a `generateName` names no file: `-o DIR` stops before anything is
/// written and says which object, where, and why; printed as a stream it passes.
#[test]
fn an_object_without_a_name_stops_o_dir_and_nothing_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("jobs.yaml");
    std::fs::write(
        &input,
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: migrate-\nspec: {}\n",
    )
    .unwrap();
    let dir = tmp.path().join("out");
    let input = input.to_str().unwrap();
    let out = run(&["build", input, "-o", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "Job/<no name> (only `generateName: migrate-`, at {input}:3) has no \
             `metadata.name`: `-o DIR` writes each object to a file named after it"
        )),
        "{stderr}"
    );
    assert!(!dir.exists(), "nothing written");
    let out = run(&["build", input]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("generateName: migrate-"));
}

/// `--exclude` leaves other tools' YAML out of a walked tree, a named file and a `--catalog`
/// directory, by name at any depth or by a path from the walked directory; without it, such a
/// file is a `KV002` that says how to leave it out.
#[test]
fn exclude_leaves_out_other_tools_yaml_by_name_folder_or_path() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path();
    let write = |rel: &str, text: &str| {
        let file = repo.join(rel);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    };
    std::fs::create_dir_all(repo.join("vms")).unwrap();
    std::fs::copy(root().join(FEDORA_VM), repo.join("vms/fedora.yaml")).unwrap();
    write("ansible/site.yml", "- hosts: all\n  tasks: []\n");
    write("mkdocs.yml", "site_name: infra\n");
    write("docs/conf.yaml", "theme: dark\n");
    write(
        "docs/deep/namespace.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: web\n",
    );
    write(
        "catalog/db.yaml",
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
         metadata:\n  name: db.large\nspec:\n  cpu:\n    guest: 4\n  memory:\n    guest: 16Gi\n",
    );
    write("catalog/notes.yaml", "owner: platform-team\n");
    let kvrender_in_repo = |args: &[&str]| {
        kvrender()
            .current_dir(repo)
            .args(args)
            .output()
            .expect("kvrender runs")
    };

    let out = kvrender_in_repo(&["validate", "."]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let report = stdout(&out);
    for (file, name) in [
        ("ansible/site.yml", "site.yml"),
        ("mkdocs.yml", "mkdocs.yml"),
        ("docs/conf.yaml", "conf.yaml"),
        ("catalog/notes.yaml", "notes.yaml"),
    ] {
        let line = report
            .lines()
            .find(|l| l.starts_with(&format!("./{file}:1: error[KV002]")))
            .unwrap_or_else(|| panic!("no KV002 for {file}:\n{report}"));
        assert!(
            line.contains(&format!("leave it out with `--exclude {name}`")),
            "{line}"
        );
    }

    let excluding = [
        "--exclude",
        "ansible/",
        "--exclude",
        "mkdocs.yml",
        "--exclude",
        "docs/*.yaml",
        "--exclude",
        "notes.yaml",
    ];
    // The VM, the namespace (`*` stays in `docs/`) and the instancetype.
    let mut args = vec!["validate", "."];
    args.extend(excluding);
    let out = kvrender_in_repo(&args);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(stdout(&out), "No problems found in 3 objects.\n");
    // Walked from an absolute path, `docs/*.yaml` matches the path from the directory walked.
    let absolute = repo.to_str().unwrap();
    let mut args = vec!["validate", absolute];
    args.extend(excluding);
    let out = kvrender_in_repo(&args);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(stdout(&out), "No problems found in 3 objects.\n");

    // Named one by one, as pre-commit names changed files.
    let mut args = vec![
        "validate",
        "./ansible/site.yml",
        "mkdocs.yml",
        "docs/conf.yaml",
        "vms/fedora.yaml",
    ];
    args.extend(excluding);
    let out = kvrender_in_repo(&args);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(stdout(&out), "No problems found in 1 object.\n");

    // A `--catalog` directory is walked with the same patterns; `build` prints what is left.
    let mut args = vec!["build", "vms", "docs", "--catalog", "catalog"];
    args.extend(excluding);
    let out = kvrender_in_repo(&args);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let printed = parse(&stdout(&out), "build");
    let names: Vec<String> = printed
        .iter()
        .map(|o| format!("{}/{}", o.kind_str(), o.name()))
        .collect();
    assert_eq!(names, ["VirtualMachine/fedora-server", "Namespace/web"]);

    let out = kvrender_in_repo(&["validate", ".", "--exclude", "docs/[a"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--exclude \"docs/[a\": not a valid pattern"),
        "{}",
        describe(&out)
    );

    // A path copied from a finding (`./docs/conf.yaml`, or absolute when an absolute PATH is
    // walked) leaves that file out as it is.
    let conf = format!("{absolute}/docs/conf.yaml");
    for (walked, pattern) in [(".", "./docs/conf.yaml"), (absolute, conf.as_str())] {
        let out = kvrender_in_repo(&[
            "validate",
            walked,
            "--exclude",
            "ansible",
            "--exclude",
            "mkdocs.yml",
            "--exclude",
            "notes.yaml",
            "--exclude",
            pattern,
        ]);
        assert_eq!(out.status.code(), Some(0), "{pattern}: {}", describe(&out));
        assert_eq!(
            stdout(&out),
            "No problems found in 3 objects.\n",
            "{pattern}"
        );
    }
}

/// Run kvrender with `args` in `dir`.
fn run_in(dir: &Path, args: &[&str]) -> Output {
    kvrender()
        .current_dir(dir)
        .args(args)
        .output()
        .expect("kvrender runs")
}

/// `build -o DIR` refuses a DIR that is an input or holds one: it would write beside the
/// sources, mark them as output (so later walks skip them) and let `--prune` delete them. A DIR
/// inside the inputs is fine.
#[test]
fn output_directory_over_the_inputs_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path();
    std::fs::create_dir_all(repo.join("vms")).unwrap();
    std::fs::copy(root().join(FEDORA_VM), repo.join("vms/fedora.yaml")).unwrap();
    for (dir, args, says) in [
        (
            repo,
            &["build", "vms", "-o", "vms", "--bundles"][..],
            "-o `vms` is the input PATH `vms`",
        ),
        (
            repo,
            &["build", "vms", "-o", "vms", "--prune"][..],
            "-o `vms` is the input PATH `vms`",
        ),
        (
            &*repo.join("vms"),
            &["build", "-o", "."][..],
            "-o `.` is the input PATH `.`",
        ),
        (
            &*repo.join("vms"),
            &["build", ".", "-o", ".."][..],
            "-o `..` holds the input PATH `.`",
        ),
        (
            repo,
            &["build", "-", "--catalog", "vms", "-o", "vms"][..],
            "-o `vms` is the input PATH `vms`",
        ),
        (
            &*repo.join("vms"),
            &["build", "fedora.yaml", "-o", "."][..],
            "-o `.` holds the input PATH `fedora.yaml`",
        ),
    ] {
        let out = run_in(dir, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", describe(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(says) && stderr.contains("--prune"),
            "{args:?}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // Nothing was written or marked: the source is still the only file, and still read.
    let listed: Vec<_> = walkdir::WalkDir::new(repo)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap().path().strip_prefix(repo).unwrap().to_owned())
        .collect();
    assert_eq!(listed, [Path::new("vms"), Path::new("vms/fedora.yaml")]);
    let out = run_in(repo, &["validate", "."]);
    assert_eq!(
        stdout(&out),
        "No problems found in 1 object.\n",
        "{}",
        describe(&out)
    );

    // Inside the inputs: written, and left out of the next walk.
    let out = run_in(repo, &["build", ".", "-o", "rendered"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        repo.join("rendered/kubevirt.io_v1_virtualmachine_fedora-server.yaml")
            .is_file()
    );
    let out = run_in(repo, &["validate", "."]);
    assert_eq!(
        stdout(&out),
        "No problems found in 1 object.\n",
        "{}",
        describe(&out)
    );
}

/// A DIR that shows the inputs at a second path (a bind mount) is the inputs all the same:
/// refused, with nothing written through it. Needs a private mount namespace (`unshare -m`,
/// as root); where there is none, the test says so and checks nothing.
#[cfg(target_os = "linux")]
#[test]
fn output_directory_mounted_over_the_inputs_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path();
    std::fs::create_dir_all(repo.join("vms")).unwrap();
    std::fs::create_dir_all(repo.join("view")).unwrap();
    std::fs::create_dir_all(repo.join("outer/inner")).unwrap();
    std::fs::copy(root().join(FEDORA_VM), repo.join("vms/fedora.yaml")).unwrap();
    let probe = std::process::Command::new("unshare")
        .args(["-m", "mount", "--bind"])
        .arg(repo.join("vms"))
        .arg(repo.join("view"))
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: no private mount namespace here (`unshare -m` as root)");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_kvrender");
    // The inputs seen at `view`, and `outer` seen inside them at `vms/sub`.
    let script = format!(
        "mount --bind vms view && {bin} build vms -o view --prune; echo \"rc=$?\"; \
         mkdir -p vms/sub && mount --bind outer vms/sub && {bin} build vms/sub/inner -o outer; \
         echo \"rc=$?\""
    );
    let out = std::process::Command::new("unshare")
        .args(["-m", "sh", "-c", &script])
        .current_dir(repo)
        .output()
        .expect("unshare runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(stdout, "rc=2\nrc=2\n", "{stderr}");
    assert!(
        stderr.contains("-o `view` is the input PATH `vms`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("-o `outer` holds the input PATH `vms/sub/inner`"),
        "{stderr}"
    );
    let listed: Vec<_> = walkdir::WalkDir::new(repo.join("vms"))
        .min_depth(1)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap().file_name().to_owned())
        .collect();
    assert_eq!(listed, ["fedora.yaml", "sub"]);
}

/// A file reached twice, through a symbolic link to a folder already walked or by being named
/// twice, is read once: no object is defined twice (`KV020`).
#[cfg(unix)]
#[test]
fn a_file_reached_twice_is_read_once() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path();
    std::fs::create_dir_all(repo.join("releases/v2")).unwrap();
    std::fs::copy(root().join(FEDORA_VM), repo.join("releases/v2/vm.yaml")).unwrap();
    std::os::unix::fs::symlink("releases/v2", repo.join("current")).unwrap();
    for args in [
        &["validate", "."][..],
        &["validate", "current/vm.yaml", "releases/v2/vm.yaml"][..],
        &["validate", "releases", "current", "releases/v2/vm.yaml"][..],
    ] {
        let out = run_in(repo, args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", describe(&out));
        assert_eq!(stdout(&out), "No problems found in 1 object.\n", "{args:?}");
    }
}

/// A folder reached again through a link is walked once, unless `--exclude` left out something
/// below it by the path it was first reached by: by the other path that is read, as when every
/// way in was walked. A pattern of a name leaves the file out by any path.
#[cfg(unix)]
#[test]
fn a_folder_reached_twice_is_walked_again_only_for_what_a_path_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path();
    std::fs::create_dir_all(repo.join("real/sub")).unwrap();
    std::os::unix::fs::symlink("real", repo.join("link")).unwrap();
    for (file, name) in [("real/sub/deep.yaml", "deep"), ("real/top.yaml", "top")] {
        std::fs::write(
            repo.join(file),
            format!(
                "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: {name}\n\
                 spec:\n  template:\n    spec:\n      domain:\n        devices: {{}}\n"
            ),
        )
        .unwrap();
    }
    let warning = |path: &str, name: &str| {
        format!(
            "./{path}:5: warning[KV034] VirtualMachine/{name}: spec.running: RunStrategy must be \
             specified (`runStrategy: Always`, `Halted`, ...)\n"
        )
    };
    let shown_in_link = format!(
        "{}{}Found 0 errors and 2 warnings.\n",
        warning("link/sub/deep.yaml", "deep"),
        warning("link/top.yaml", "top")
    );
    let deep_in_real = format!(
        "{}{}Found 0 errors and 2 warnings.\n",
        warning("link/top.yaml", "top"),
        warning("real/sub/deep.yaml", "deep")
    );
    let top_only = format!(
        "{}Found 0 errors and 1 warning.\n",
        warning("link/top.yaml", "top")
    );
    let absolute = format!(
        "{}/link/sub/deep.yaml",
        repo.canonicalize().unwrap().display()
    );
    for (exclude, expected) in [
        (None, &shown_in_link),
        (Some("real/sub/deep.yaml"), &shown_in_link),
        (Some("link/sub/deep.yaml"), &deep_in_real),
        (Some("link/sub/"), &deep_in_real),
        (Some(absolute.as_str()), &deep_in_real),
        (Some("deep.yaml"), &top_only),
        (Some("sub"), &top_only),
    ] {
        let mut args = vec!["validate", "--no-default-catalog"];
        args.extend(exclude.iter().flat_map(|e| ["--exclude", e]));
        args.push(".");
        let out = run_in(repo, &args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", describe(&out));
        assert_eq!(&stdout(&out), expected, "{args:?}");
    }
}

/// Two catalog documents of one kind and name are a `KV020` for `build` as for `validate`,
/// even when what they render does not clash (two versions of one family).
#[test]
fn two_catalog_documents_of_one_name_are_refused_by_build_as_by_validate() {
    let tmp = tempfile::tempdir().unwrap();
    let family = |version: &str, size: &str| {
        format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {{name: d}}\n\
             spec:\n  version: \"{version}\"\n  sizes:\n    - [{size}, 1, 1Gi]\n  template:\n    \
             spec:\n      cpu: {{guest: \"{{{{ size.cpu }}}}\"}}\n      \
             memory: {{guest: \"{{{{ size.memory }}}}\"}}\n"
        )
    };
    std::fs::write(
        tmp.path().join("a.yaml"),
        format!("{}---\n{}", family("1", "small"), family("2", "large")),
    )
    .unwrap();
    let expected = "./a.yaml:13: error[KV020] InstancetypeFamily/d: InstancetypeFamily/d is defined \
                    twice: first at ./a.yaml:1 (document 1)";
    for command in ["build", "validate"] {
        let out = kvrender()
            .current_dir(tmp.path())
            .args([command, "--no-default-catalog", "."])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{command}: {}", describe(&out));
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(text.contains(expected), "{command}: {text}");
        if command == "build" {
            assert!(out.stdout.is_empty(), "build printed: {}", describe(&out));
        }
    }
}

/// `build --strict`: a warning (a misspelt field in a catalog template) is an error, and
/// nothing is printed; without it, the warning is shown and the objects printed.
#[test]
fn strict_build_stops_on_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("p.yaml"),
        "apiVersion: kvrender.io/v1alpha1\nkind: Preference\nmetadata: {name: typo}\nspec:\n  \
         scopes: [cluster]\n  template:\n    spec:\n      devices: {prefferedDiskBus: virtio}\n",
    )
    .unwrap();
    let build = |strict: bool| {
        let mut cmd = kvrender();
        cmd.current_dir(tmp.path())
            .args(["build", "--no-default-catalog", "p.yaml"]);
        if strict {
            cmd.arg("--strict");
        }
        cmd.output().unwrap()
    };
    let lenient = build(false);
    assert_eq!(lenient.status.code(), Some(0), "{}", describe(&lenient));
    assert!(String::from_utf8_lossy(&lenient.stderr).contains("warning[KV022]"));
    assert!(String::from_utf8_lossy(&lenient.stdout).contains("name: typo"));
    let strict = build(true);
    assert_eq!(strict.status.code(), Some(1), "{}", describe(&strict));
    assert!(
        String::from_utf8_lossy(&strict.stderr).contains("error[KV022]"),
        "{}",
        describe(&strict)
    );
    assert!(strict.stdout.is_empty(), "{}", describe(&strict));
}

/// A finding about a field of a rendered object is reported where the catalog writes the
/// field: a misspelt name of a family's template or of a part (in a file of its own) at its
/// line, shared by every size; a value a template makes from a size row at that row.
#[test]
fn a_rendered_objects_finding_is_at_the_line_that_writes_the_field() {
    let out = kvrender()
        .args(["validate", "--no-default-catalog", "--format", "json"])
        .arg("testdata/build/written")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut lines: BTreeMap<(String, String), BTreeMap<String, u64>> = BTreeMap::new();
    for f in report["findings"].as_array().unwrap() {
        let file = f["file"].as_str().unwrap();
        let file = file.rsplit('/').next().unwrap().to_string();
        let at = lines
            .entry((
                f["code"].as_str().unwrap().into(),
                f["field"].as_str().unwrap().into(),
            ))
            .or_default();
        *at.entry(format!("{file}:{}", f["line"])).or_default() += 1;
    }
    let at = |code: &str, field: &str| {
        let found = &lines[&(code.to_string(), field.to_string())];
        found
            .iter()
            .map(|(k, n)| format!("{k}×{n}"))
            .collect::<Vec<_>>()
    };
    // Both scopes of both sizes.
    assert_eq!(
        at("KV022", "spec.cpu.dedicatedCpuPlacement"),
        ["family.yaml:17×4"]
    );
    assert_eq!(at("KV022", "spec.ioThreadPolicy"), ["parts.yaml:10×4"]);
    assert_eq!(
        at("KV022", "spec.memory.hugepages.pageSzie"),
        ["parts.yaml:12×4"]
    );
    // Both scopes of the `large` row only.
    assert_eq!(at("KV004", "spec.cpu.guest"), ["family.yaml:12×2"]);
    // Both scopes of the preference, at the line that writes its requirements.
    assert_eq!(at("KV042", "spec.requirements"), ["preference.yaml:10×2"]);

    // `build` says each of the first three once, for the four objects.
    let out = run(&["build", "--no-default-catalog", "testdata/build/written"]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for line in [
        "family.yaml:17: warning[KV022]",
        "parts.yaml:10: warning[KV022]",
    ] {
        let found: Vec<&str> = stderr.lines().filter(|l| l.contains(line)).collect();
        assert_eq!(found.len(), 1, "{stderr}");
        assert!(found[0].contains("and 3 more"), "{stderr}");
    }
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.starts_with("testdata/build/written/preference.yaml:10: warning[KV042]"))
            .count(),
        2,
        "{stderr}"
    );
}

/// A template field missing from every scope of a size row is one finding per row, naming the
/// cluster-scoped object and its namespaced twin together.
#[test]
fn a_field_missing_from_both_scopes_of_a_size_is_said_once() {
    let tmp = tempfile::tempdir().unwrap();
    let family = tmp.path().join("family.yaml");
    std::fs::write(
        &family,
        "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata:\n  name: t\n\
         spec:\n  version: 1\n  sizes:\n  - [small, 1, 2Gi]\n  - [large, 2, 4Gi]\n  \
         template:\n    spec:\n      cpu:\n        guest: \"{{ size.cpu }}\"\n      \
         memroy:\n        guest: \"{{ size.memory }}\"\n",
    )
    .unwrap();
    let out = run(&["build", "--no-default-catalog", family.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let missing: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("error[KV004]") && l.contains("spec.memory:"))
        .collect();
    // One line per size row, naming the cluster-scoped object and its namespaced twin.
    assert_eq!(missing.len(), 2, "{stderr}");
    for (line, size) in [(8, "small"), (9, "large")] {
        assert!(
            missing.iter().any(|l| l.contains(&format!(
                "family.yaml:{line}: error[KV004] VirtualMachineClusterInstancetype/t1.{size} \
                 and 1 more (VirtualMachineInstancetype/t1.{size}): spec.memory: required by"
            ))),
            "{stderr}"
        );
    }
}

/// `build -o DIR` refuses a DIR inside a walked PATH that holds a source file: walks leave DIR
/// out, so the file would silently stop being read. Hidden entries (a staging folder an
/// interrupted run left) and the files an earlier run wrote there do not count. Once
/// the marker is gone, the message says so and how to start again.
#[test]
fn an_output_dir_holding_sources_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let vms = tmp.path().join("vms");
    std::fs::create_dir_all(&vms).unwrap();
    for name in ["database.yaml", "fedora-server.yaml"] {
        std::fs::copy(root().join("examples/vms").join(name), vms.join(name)).unwrap();
    }
    let build = |args: &[&str]| run_in(tmp.path(), args);
    let out = build(&["build", ".", "-o", "vms"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("holds `vms/database.yaml`"), "{stderr}");
    assert!(!vms.join(".kvrender-output").exists(), "nothing written");
    // An output directory of earlier runs, with a staging folder left behind, is fine.
    let out = build(&["build", ".", "-o", "rendered"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let staging = tmp.path().join("rendered/.kvrender-staging-1");
    std::fs::create_dir_all(&staging).unwrap();
    std::fs::write(staging.join("x.yaml"), "kind: ConfigMap\n").unwrap();
    let out = build(&["build", ".", "-o", "rendered"]);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    // A file of its own in it is not.
    std::fs::copy(
        vms.join("fedora-server.yaml"),
        tmp.path().join("rendered/mine.yaml"),
    )
    .unwrap();
    let out = build(&["build", ".", "-o", "rendered"]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("holds `rendered/mine.yaml`, which an earlier build did not write"));
    // Without the marker every file there reads as a source, and `--check` refuses as well.
    std::fs::remove_file(tmp.path().join("rendered/mine.yaml")).unwrap();
    std::fs::remove_file(tmp.path().join("rendered/.kvrender-output")).unwrap();
    for args in [
        &["build", ".", "-o", "rendered"][..],
        &["build", ".", "-o", "rendered", "--check"],
    ] {
        let out = build(args);
        assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr
                .contains("and no `.kvrender-output` marker, so walks of `.` read it as a source")
                && stderr.contains("delete `rendered` and build again"),
            "{stderr}"
        );
    }
    assert!(
        !tmp.path().join("rendered/.kvrender-output").exists(),
        "nothing written"
    );
}

/// An output directory the inputs reach through a symbolic link of another name
/// (`repo/shared -> ../out`) is left out of the walk as the output directory is wherever it
/// lies: a source file in it would be written over (when it bears an output file's name) or
/// never read again, so the build is refused, nothing written, until the file is moved.
#[test]
fn an_output_dir_the_inputs_reach_through_a_link_is_refused_while_it_holds_sources() {
    let tmp = tempfile::tempdir().unwrap();
    let (repo, out_dir) = (tmp.path().join("repo"), tmp.path().join("out"));
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::create_dir_all(&out_dir).unwrap();
    std::os::unix::fs::symlink("../out", repo.join("shared")).unwrap();
    let family = "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {name: t}\n\
                  spec:\n  version: 1\n  sizes: [[small, 1, 1Gi]]\n  template:\n    spec: {cpu: \
                  {guest: \"{{ size.cpu }}\"}, memory: {guest: \"{{ size.memory }}\"}}\n";
    // A source named as the file the build writes for its own object.
    let source = out_dir
        .join("instancetype.kubevirt.io_v1beta1_virtualmachineclusterinstancetype_t1.small.yaml");
    std::fs::write(&source, family).unwrap();
    let build = || {
        run_in(
            tmp.path(),
            &["build", "--no-default-catalog", "repo", "-o", "out"],
        )
    };
    let out = build();
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "which an earlier build did not write there, and the inputs reach the \
                         directory as `repo/shared`"
        ) && !stderr.contains("nothing in it to read"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&source).unwrap(),
        family,
        "not written over"
    );
    assert!(
        !out_dir.join(".kvrender-output").exists(),
        "nothing written"
    );
    // Moved into the repository, it builds; a source put there later is refused again.
    std::fs::rename(&source, repo.join("catalog.yaml")).unwrap();
    let out = build();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    std::fs::write(out_dir.join("mine.yaml"), family).unwrap();
    let out = build();
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("holds `out/mine.yaml`"));
}

/// A finding about a field a catalog document writes with no template is reported at that
/// field's line, not at the size row: the family's own `metadata.namespace`, and `labels`
/// written as a list where a mapping belongs.
#[test]
fn catalog_findings_on_literal_fields_name_their_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let family = |metadata: &str, template_metadata: &str| {
        format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata:\n  \
             name: t\n{metadata}spec:\n  scopes: [namespaced]\n  sizes:\n    - [small, 1, 2Gi]\n  \
             template:\n{template_metadata}    spec:\n      cpu: {{guest: 1}}\n      \
             memory: {{guest: 2Gi}}\n"
        )
    };
    for (name, text, line, code) in [
        ("ns.yaml", family("  namespace: Team_A\n", ""), 5, "KV003"),
        (
            "labels.yaml",
            family(
                "  namespace: team-a\n",
                "    metadata:\n      labels:\n        - team-a\n",
            ),
            12,
            "KV040",
        ),
    ] {
        std::fs::write(tmp.path().join(name), &text).unwrap();
        let out = run_in(tmp.path(), &["build", "--no-default-catalog", name]);
        assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with(&format!("{name}:{line}: error[{code}]")),
            "{name}:\n{text}\n{stderr}"
        );
    }
}

/// A repository of one folder per team, each kustomization giving its own `namespace:` to
/// objects written without one. kvrender reads the files as written, where two teams'
/// preferences of one name are one object defined twice: the finding names the kustomization
/// whose namespace explains it and the command that checks what kustomize builds, and that
/// command finds nothing.
#[test]
fn a_kustomizations_namespace_is_named_where_it_explains_a_finding() {
    const TREE: &str = "testdata/build/kustomize-namespaces";
    let out = run(&["validate", TREE]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let report = stdout(&out);
    let web = format!("{TREE}/teams/web");
    assert!(
        report.starts_with(&format!(
            "{web}/preference.yaml:4: error[KV020] VirtualMachinePreference/linux: \
             VirtualMachinePreference/linux is defined twice: first at \
             {TREE}/teams/data/preference.yaml:4 (document 1); {web}/kustomization.yaml sets \
             `namespace: team-web`, which kvrender does not apply to the files it reads (an \
             object written without a namespace is in \"default\" here): check what kustomize \
             builds instead (`kubectl kustomize {web} | kvrender validate -`)\n"
        )),
        "{report}"
    );

    // What the note says to run: each team's build, in its own namespace.
    let mut built = Vec::new();
    for team in ["web", "data"] {
        let out = std::process::Command::new(tool("kubectl"))
            .args(["kustomize", &format!("{TREE}/teams/{team}")])
            .current_dir(root())
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", describe(&out));
        built.extend_from_slice(b"---\n");
        built.extend_from_slice(&out.stdout);
    }
    let mut validate = kvrender();
    validate.args(["validate", "-"]).current_dir(root());
    let out = run_with_stdin(validate, &built);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(stdout(&out), "No problems found in 4 objects.\n");
}

/// A folder with nothing kvrender reads (a wrong path in a CI step, say) is not reported clean
/// without a word: a note names it, and the exit status stays 0, as for an empty folder of
/// manifests there is nothing wrong to report.
#[test]
fn a_folder_with_nothing_to_read_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("README.md"), "# notes\n").unwrap();
    std::fs::write(tmp.path().join("kustomization.yaml"), "resources: []\n").unwrap();
    let dir = tmp.path().to_str().unwrap();
    for command in ["validate", "build"] {
        let out = run(&[command, dir]);
        assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            format!(
                "note: {dir}: nothing in it to read: kvrender reads the `.yaml`, `.yml` and \
                 `.json` files in a folder and below it (kustomizations aside, and what \
                 `--exclude` leaves out)\n"
            ),
            "{command}"
        );
    }
    // One file to read, or a folder of files `--exclude` leaves out, changes that.
    std::fs::write(
        tmp.path().join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
    )
    .unwrap();
    let out = run(&["validate", dir]);
    assert!(out.stderr.is_empty(), "{}", describe(&out));
    let out = run(&["validate", "--exclude", "*.yaml", dir]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("nothing in it to read"),
        "{}",
        describe(&out)
    );
}

/// A value a part's template makes from one trait alone (`overcommitPercent`), which KubeVirt
/// refuses for every size: one finding, at the family's trait, naming every object it makes.
#[test]
fn a_trait_every_size_is_refused_for_is_reported_once_at_the_trait() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("o.yaml"),
        "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nmetadata: {name: p}\nparts:\n  it:\n    \
         defaults: {overcommitPercent: null}\n    spec:\n      cpu: {guest: \"{{ size.cpu }}\"}\n      \
         memory:\n        guest: \"{{ size.memory }}\"\n        \
         overcommitPercent: \"{{ traits.overcommitPercent or none }}\"\n---\n\
         apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {name: o}\nspec:\n  \
         version: 1\n  parts: [it]\n  traits:\n    overcommitPercent: 150\n  sizes:\n  \
         - [small, 1, 2Gi]\n  - [large, 2, 8Gi]\n",
    )
    .unwrap();
    let out = kvrender()
        .current_dir(dir.path())
        .args(["build", "."])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let findings: Vec<&str> = stderr.lines().filter(|l| l.contains("[KV030]")).collect();
    assert_eq!(findings.len(), 1, "{stderr}");
    assert!(
        findings[0].starts_with(
            "./o.yaml:20: error[KV030] VirtualMachineClusterInstancetype/o1.large and 3 more \
             (VirtualMachineClusterInstancetype/o1.small, VirtualMachineInstancetype/o1.large, \
             VirtualMachineInstancetype/o1.small): spec.memory.overcommitPercent: "
        ),
        "{stderr}"
    );
}

/// A catalog renders label and annotation values, never keys: a template in a key is refused by
/// the API server's rules, and the finding says that keys are not rendered. A plain object's
/// odd key gets no such word.
#[test]
fn a_template_in_a_catalog_label_key_is_said_to_stay_unrendered() {
    let tmp = tempfile::tempdir().unwrap();
    let family = tmp.path().join("family.yaml");
    std::fs::write(
        &family,
        "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {name: t}\n\
         spec:\n  version: 1\n  displayName: T\n  description: Test.\n  parts: [instancetype]\n  \
         labels:\n    \
         \"example.com/{{ size.name }}\": \"yes\"\n  annotations:\n    \
         \"{% if true %}a{% endif %}/b\": x\n  sizes:\n    - [small, 1, 1Gi]\n\
         ---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels:\n    \
         \"example.com/{{ x }}\": \"y\"\n",
    )
    .unwrap();
    let out = run(&["build", family.to_str().unwrap()]);
    let shown = describe(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    let findings: Vec<&str> = shown.lines().filter(|l| l.contains("KV006")).collect();
    assert_eq!(findings.len(), 3, "{shown}");
    let hinted = |l: &&str| l.contains("never their keys");
    assert!(
        findings
            .iter()
            .filter(|l| l.contains("InstancetypeFamily") || l.contains("t1.small"))
            .all(hinted),
        "{shown}"
    );
    assert!(
        findings
            .iter()
            .filter(|l| l.contains("ConfigMap/c"))
            .all(|l| !hinted(l)),
        "{shown}"
    );
}

/// `build` does not read a package's `KVRender` (kpt and kustomize hand it to the function):
/// a note names the file and the options that do what its settings do, and leaves out those
/// that only say what `build` does anyway; the output is the same as without it.
#[test]
fn a_packages_function_config_is_named_with_the_options_build_needs() {
    let out = run(&["build", "examples/krm/kpt"]);
    let shown = describe(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let note = stderr
        .lines()
        .find(|l| l.starts_with("note: examples/krm/kpt/kvrender.yaml:5: KVRender/kvrender"))
        .unwrap_or_else(|| panic!("{shown}"));
    for said in [
        "`build` does not read it",
        "`versionLabel` as `--version-label`",
        "`clusterConfig` as `--cluster-config FILE`",
        "`prune` as `--prune` with `-o DIR`",
    ] {
        assert!(note.contains(said), "{said}: {note}");
    }
    // `defaultCatalog: true` is what `build` does without an option.
    assert!(!note.contains("defaultCatalog"), "{note}");
    // The catalog and VMs alone, without the configuration, print the same.
    let alone = run(&[
        "build",
        "examples/krm/kpt/catalog.yaml",
        "examples/krm/kpt/vms",
    ]);
    assert_eq!(alone.status.code(), Some(0), "{}", describe(&alone));
    assert_eq!(alone.stdout, out.stdout);
    assert!(!String::from_utf8_lossy(&alone.stderr).contains("KVRender"));
}

/// A kustomization in a file's folder or above that renames or moves what it builds
/// (`namespace`, `namePrefix`, `nameSuffix`) gets one note from `build`, which prints the file's
/// objects as written: piped to `kubectl apply`, they would land under other names. The
/// output itself does not change, and a kustomization that only lists resources gets no note.
#[test]
fn build_notes_a_kustomization_that_renames_what_it_builds() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("kust");
    std::fs::create_dir_all(dir.join("vms")).unwrap();
    std::fs::write(
        dir.join("kustomization.yaml"),
        "namespace: prod\nnamePrefix: prod-\nresources:\n- vms\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("vms/kustomization.yaml"),
        "resources:\n- a.yaml\n- b.yaml\n",
    )
    .unwrap();
    for name in ["a", "b"] {
        std::fs::write(
            dir.join(format!("vms/{name}.yaml")),
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\ndata: {{k: v}}\n"
            ),
        )
        .unwrap();
    }
    let build = |path: &str| {
        kvrender()
            .current_dir(tmp.path())
            .args(["build", path])
            .output()
            .unwrap()
    };
    let out = build("kust");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(
        stderr.trim_end(),
        "note: kust/kustomization.yaml sets `namespace`, `namePrefix` for the files it builds, \
         which `build` prints as they are written; to print what kustomize builds, run \
         `kubectl kustomize kust | kvrender build -`",
        "{}",
        describe(&out)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("name: a\n") && !stdout.contains("prod"),
        "{stdout}"
    );
    // The inner kustomization alone renames nothing: no note.
    std::fs::write(dir.join("kustomization.yaml"), "resources:\n- vms\n").unwrap();
    let out = build("kust/vms");
    assert!(out.stderr.is_empty(), "{}", describe(&out));
}

/// A key written with nothing after it in a part's `spec` is a `null`, which removes what the
/// parts before it set (here every device setting of the shipped `linux` part): `build` and
/// `validate` warn at its line (`KV045`); a `null` written out is meant and not reported.
#[test]
fn an_empty_value_in_a_part_is_told_to_remove_what_the_parts_before_it_set() {
    let tmp = tempfile::tempdir().unwrap();
    let catalog = tmp.path().join("mine.yaml");
    std::fs::write(
        &catalog,
        "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nmetadata: {name: mine}\nparts:\n  \
         blockmq:\n    spec:\n      devices:\n      preferredBlockMultiQueue: true\n  \
         plain:\n    spec:\n      firmware: null\n---\napiVersion: kvrender.io/v1alpha1\n\
         kind: Preference\nmetadata: {name: debian.12}\nspec:\n  displayName: Debian 12\n  \
         parts: [linux, blockmq, plain]\n",
    )
    .unwrap();
    let catalog = catalog.to_str().unwrap();
    for command in ["build", "validate"] {
        let out = run(&[command, catalog]);
        assert!(out.status.success(), "{command}: {}", describe(&out));
        // `build` prints its findings on stderr, `validate` on stdout.
        let shown = describe(&out);
        let reported: Vec<&str> = shown.lines().filter(|l| l.contains("KV045")).collect();
        assert_eq!(
            reported,
            [format!(
                "{catalog}:7: warning[KV045] Parts/mine: parts.blockmq.spec.devices: `devices` has \
             no value: YAML reads it as `null`, and merged, a `null` removes `devices` and \
             whatever the parts before it put there from every object rendered; indent what \
             belongs under it, delete the line, or write `devices: null` where removing it is \
             meant"
            )],
            "{command}: {shown}"
        );
        if command == "build" {
            // What the warning says: the shipped `linux` part's devices are gone.
            let printed = String::from_utf8(out.stdout).unwrap();
            assert!(printed.contains("name: debian.12"), "{printed}");
            assert!(!printed.contains("preferredDiskBus"), "{printed}");
        }
    }
    let strict = run(&["build", "--strict", catalog]);
    assert_eq!(strict.status.code(), Some(1), "{}", describe(&strict));
}

/// A version label keyed as a label the catalog sets itself (the shipped catalog writes the
/// class version into `instancetype.kubevirt.io/version`) would replace what the catalog says:
/// an error at the line that writes the label, nothing printed; under its own key it stamps.
#[test]
fn a_version_label_never_replaces_a_label_the_catalog_sets() {
    let clash = run(&[
        "build",
        "catalog/",
        "--version-label",
        "v1.5.0",
        "--version-label-key",
        "instancetype.kubevirt.io/version",
    ]);
    assert_eq!(clash.status.code(), Some(1), "{}", describe(&clash));
    assert!(clash.stdout.is_empty(), "{}", describe(&clash));
    let stderr = String::from_utf8_lossy(&clash.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("catalog/instancetypes/parts.yaml:")
                && l.contains("error[KV040]")
                && l.ends_with(
                    "the catalog sets the label `instancetype.kubevirt.io/version` itself, and \
                 the version label (`v1.5.0`) would replace what it says; give the version \
                 label a key of its own (`--version-label-key`, or `versionLabelKey` in the \
                 function's configuration), or leave the label out of the catalog"
                )),
        "{stderr}"
    );
    let own = run(&["build", "catalog/", "--version-label", "v1.5.0"]);
    assert!(own.status.success(), "{}", describe(&own));
    let printed = stdout(&own);
    assert_eq!(
        printed
            .matches("instancetype.kubevirt.io/common-instancetypes-version: v1.5.0")
            .count(),
        244
    );
    // The class versions stay what the catalog says.
    let plain = stdout(&run(&["build", "catalog/"]));
    let versions = |text: &str| {
        text.matches("instancetype.kubevirt.io/version: \"1\"")
            .count()
    };
    assert!(versions(&plain) > 0);
    assert_eq!(versions(&printed), versions(&plain));
}

/// A catalog that extends the shipped one is judged with it: a preference no instancetype of
/// the catalog itself meets, but a cluster-scoped one of the embedded catalog does, gets no
/// `KV042`; without the embedded catalog, or where none of it meets the requirements either,
/// it does, and says what was looked at.
#[test]
fn unmet_requirements_count_the_embedded_catalogs_instancetypes() {
    let tmp = tempfile::tempdir().unwrap();
    let catalog = |cpu: u32| {
        let path = tmp.path().join(format!("c{cpu}.yaml"));
        std::fs::write(
            &path,
            format!(
                "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {{name: t}}\n\
                 spec:\n  version: 1\n  sizes:\n  - [nano, 1, 512Mi]\n  template:\n    spec:\n      \
                 cpu: {{guest: \"{{{{ size.cpu }}}}\"}}\n      \
                 memory: {{guest: \"{{{{ size.memory }}}}\"}}\n---\n\
                 apiVersion: kvrender.io/v1alpha1\nkind: Preference\nmetadata: {{name: big}}\n\
                 spec:\n  scopes: [cluster]\n  template:\n    spec:\n      requirements:\n        \
                 cpu: {{guest: {cpu}}}\n        memory: {{guest: 4Gi}}\n"
            ),
        )
        .unwrap();
        path.to_str().unwrap().to_string()
    };
    let kv042 = |args: &[&str]| {
        let out = run(args);
        assert!(out.status.success(), "{}", describe(&out));
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.contains("KV042"))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let fits = catalog(2);
    assert_eq!(kv042(&["build", &fits]), Vec::<String>::new());
    assert_eq!(
        kv042(&["build", "--no-default-catalog", &fits]),
        [format!(
            "{fits}:20: warning[KV042] VirtualMachineClusterPreference/big: spec.requirements: \
             no instancetype in the catalog meets the requirements (at least 2 vCPUs and 4Gi of \
             memory); every VM pairing this preference with one of them would be refused"
        )]
    );
    let huge = catalog(1000);
    assert_eq!(
        kv042(&["build", &huge]),
        [format!(
            "{huge}:20: warning[KV042] VirtualMachineClusterPreference/big: spec.requirements: \
             no instancetype in the catalog, nor any cluster-scoped one of the `--catalog` \
             files or the embedded catalog, meets the requirements (at least 1000 vCPUs and 4Gi \
             of memory); every VM pairing this preference with one of them would be refused"
        )]
    );
}

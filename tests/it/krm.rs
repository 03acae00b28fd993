//! kvrender as a KRM function and kustomize plugin: protocol tests on raw ResourceLists, and
//! end-to-end runs of the real `kpt` and `kubectl kustomize` on the packages in
//! `testdata/krm/`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::common::{root, run_with_stdin, tool, wait_at_most};

const BIN: &str = env!("CARGO_BIN_EXE_kvrender");

fn testdata(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/krm")
        .join(name)
}

/// Snapshot settings: the repository's `snapshots/`.
fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"));
    s.set_prepend_module_to_snapshot(false);
    s
}

/// Text for a snapshot: temp paths, the binary's path, timings and log prefixes filtered.
fn scrub(text: &str, tmp: Option<&Path>) -> String {
    let mut text = text.replace(BIN, "[KVRENDER]");
    if let Some(tmp) = tmp {
        text = text.replace(tmp.to_string_lossy().as_ref(), "[TMP]");
    }
    for (pattern, with) in [
        (r"/\S*/kust-plugin-config-\d+", "[PLUGIN-CONFIG]"),
        (r"in \d+(\.\d+)?(m|µ)?s\b", "in [TIME]"),
        (r"(?m)^E\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ ", "E[LOG] "),
    ] {
        text = regex::Regex::new(pattern)
            .unwrap()
            .replace_all(&text, with)
            .into_owned();
    }
    text
}

/// `kvrender fn` on a ResourceList: (exit code, stdout parsed, stdout text, stderr).
fn krm(input: &str) -> (i32, Value, String, String) {
    let mut cmd = Command::new(BIN);
    cmd.arg("fn");
    let out = run_with_stdin(cmd, input);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let parsed: Value = serde_saphyr::from_str(&stdout)
        .unwrap_or_else(|e| panic!("output is not YAML: {e}\n{stdout}"));
    (
        out.status.code().unwrap(),
        parsed,
        stdout,
        String::from_utf8(out.stderr).unwrap(),
    )
}

const VM_AND_SIZE: &str = r#"
- apiVersion: instancetype.kubevirt.io/v1beta1
  kind: VirtualMachineClusterInstancetype
  metadata:
    name: team.small
    annotations:
      config.kubernetes.io/path: 'sizes.yaml'
      internal.config.kubernetes.io/path: 'sizes.yaml'
  spec:
    cpu: {guest: 2}
    memory: {guest: 2Gi}
- apiVersion: kubevirt.io/v1
  kind: VirtualMachine
  metadata:
    name: worker
    namespace: shop
    annotations:
      config.kubernetes.io/index: '1'
      config.kubernetes.io/path: 'vms/worker.yaml'
      internal.config.kubernetes.io/index: '1'
      internal.config.kubernetes.io/path: 'vms/worker.yaml'
      internal.config.kubernetes.io/id: '7'
      config.k8s.io/id: '7'
  spec:
    runStrategy: Halted
    instancetype: {name: team.small}
    template:
      spec:
        domain:
          cpu: {sockets: 4, cores: 2}
          devices: {}
"#;

fn list(api_version: &str, items: &str, function_config: &str) -> String {
    format!("apiVersion: {api_version}\nkind: ResourceList\nitems:{items}\n{function_config}")
}

// ---------------------------------------------------------------------------------------------
// Protocol
// ---------------------------------------------------------------------------------------------

/// A `List` item is passed on as it is, with a warning that its VMs were not looked at:
/// `build` reads such a document as its items, the function does not.
#[test]
fn a_list_item_is_passed_on_with_a_warning() {
    let items = r#"
- apiVersion: v1
  kind: List
  metadata:
    name: mylist
    annotations: {config.kubernetes.io/path: list.yaml, config.kubernetes.io/index: '0'}
  items:
  - apiVersion: kubevirt.io/v1
    kind: VirtualMachine
    metadata: {name: v}
    spec: {instancetype: {name: u1.smal}, template: {spec: {domain: {devices: {}}}}}"#;
    let (code, out, _, stderr) = krm(&list("config.kubernetes.io/v1", items, ""));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        out["items"][0]["items"][0]["spec"]["instancetype"]["name"],
        "u1.smal"
    );
    let results = out["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["severity"], "warning");
    assert_eq!(results[0]["tags"]["code"], "KV002");
    assert_eq!(results[0]["resourceRef"]["name"], "mylist");
    assert!(
        results[0]["message"]
            .as_str()
            .unwrap()
            .contains("without reading its items"),
        "{results:?}"
    );
}

#[test]
fn untouched_items_keep_every_annotation_byte_for_byte() {
    let items = r#"
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: settings
    annotations:
      config.kubernetes.io/index: '0'
      config.kubernetes.io/path: 'dir/settings.yaml'
      internal.config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/path: 'dir/settings.yaml'
      internal.config.kubernetes.io/seqindent: 'compact'
      internal.config.kubernetes.io/annotations-migration-resource-id: '0'
      internal.config.kubernetes.io/id: '1'
      config.k8s.io/id: '1'
      kustomize.config.k8s.io/id: |
        kind: ConfigMap
        name: settings
        version: v1
      note: "  spaces, a trailing newline and ünïcödé\n"
      mode: '0644'
      yes-ish: 'on'
  data:
    big: '12345678901234567890'
    float: '1.10'
"#;
    let input = list("config.kubernetes.io/v1", items, "");
    let (code, out, text, stderr) = krm(&input);
    assert_eq!(code, 0, "{stderr}");
    // The item's text comes back verbatim: quoting, order and all.
    assert!(text.contains(items.trim_start()), "{text}");
    let expected: Value = serde_saphyr::from_str(&input).unwrap();
    assert_eq!(out["items"], expected["items"]);
    assert!(out.get("results").is_none());
}

/// kpt hands over every YAML file of a package, a `kustomization.yaml` written without
/// `apiVersion` and `kind` among them: such an item is no object of the function's and comes
/// back unchanged, while the VMs beside it are still expanded.
#[test]
fn items_without_api_version_and_kind_pass_through() {
    let kustomization = r#"
- resources:
  - vms/worker.yaml
  metadata:
    annotations:
      config.kubernetes.io/index: '0'
      config.kubernetes.io/path: 'kustomization.yaml'
      internal.config.kubernetes.io/index: '0'
      internal.config.kubernetes.io/path: 'kustomization.yaml'
"#;
    let items = format!(
        "{kustomization}{}",
        VM_AND_SIZE.replace("cpu: {sockets: 4, cores: 2}", "cpu: {}")
    );
    let (code, out, text, stderr) = krm(&list("config.kubernetes.io/v1", &items, ""));
    assert_eq!(code, 0, "{stderr}");
    assert!(text.contains(kustomization.trim_start()), "{text}");
    let items = out["items"].as_array().unwrap();
    assert_eq!(items.len(), 3, "{text}");
    let vm = items
        .iter()
        .find(|i| i["kind"] == "VirtualMachine")
        .unwrap();
    assert_eq!(
        vm["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"], 2,
        "{text}"
    );
    // An item with only one of the two is a broken object, and still an error.
    let (code, _, _, stderr) = krm(&list(
        "config.kubernetes.io/v1",
        "\n- kind: ConfigMap\n  metadata: {name: x}\n",
        "",
    ));
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("no `apiVersion`"), "{stderr}");
}

#[test]
fn expanded_vms_keep_their_orchestration_annotations() {
    let items = VM_AND_SIZE.replace("cpu: {sockets: 4, cores: 2}", "cpu: {}");
    let input = list("config.kubernetes.io/v1", &items, "");
    let (code, out, _, stderr) = krm(&input);
    assert_eq!(code, 0, "{stderr}");
    let vm = &out["items"][1];
    assert!(
        vm["spec"].get("instancetype").is_none(),
        "not expanded: {vm}"
    );
    assert_eq!(
        vm["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"],
        2
    );
    let before: Value = serde_saphyr::from_str(&input).unwrap();
    assert_eq!(
        vm["metadata"]["annotations"],
        before["items"][1]["metadata"]["annotations"]
    );
}

#[test]
fn conflict_results_name_the_vm_field_and_file() {
    let input = list("config.kubernetes.io/v1", VM_AND_SIZE, "");
    let (code, out, text, stderr) = krm(&input);
    assert_eq!(code, 1, "an error result exits 1");
    // The list is still written, the VM left as it was.
    assert_eq!(
        out["items"][1]["spec"]["instancetype"]["name"],
        "team.small"
    );
    let results = out["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "one result per conflicting path");
    for (result, field) in results.iter().zip(["cores", "sockets"]) {
        let path = format!("spec.template.spec.domain.cpu.{field}");
        assert_eq!(
            result,
            &json!({
                "message": format!(
                    "VM field(s) {path} conflicts with selected instance type (the instancetype \
                     \"team.small\" sets it: remove it from the VM, or choose an instancetype \
                     that fits what the VM needs)"
                ),
                "severity": "error",
                "resourceRef": {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                                "name": "worker", "namespace": "shop"},
                "field": {"path": path},
                "file": {"path": "vms/worker.yaml", "index": 1},
                "tags": {"code": "KV010"},
            })
        );
    }
    assert!(stderr.contains("vms/worker.yaml: error[KV010] VirtualMachine/shop/worker"));
    let _g = settings().bind_to_scope();
    insta::assert_snapshot!("krm_conflict_resource_list", text);
}

/// Under `kpt fn render` an item names its package as well as its file: while the file still
/// holds the item as kpt handed it over, its findings get the lines of their fields there, as
/// `build` gives them; once it holds something else (an earlier function changed the item, or
/// the file changed), the file alone.
#[test]
fn items_of_a_package_file_get_their_lines_while_the_file_holds_them() {
    let tmp = tempfile::tempdir().unwrap();
    let package = tmp.path().display().to_string();
    let items = VM_AND_SIZE.replace(
        "      config.k8s.io/id: '7'\n",
        &format!(
            "      config.k8s.io/id: '7'\n      internal.config.kubernetes.io/package-path: '{package}'\n"
        ),
    );
    assert_ne!(items, VM_AND_SIZE);
    let input = list("config.kubernetes.io/v1", &items, "");
    let file = |sockets: u32| {
        format!(
            "# The shop.\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n---\n\
             apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: worker\n  \
             namespace: shop\nspec:\n  runStrategy: Halted\n  instancetype:\n    name: team.small\n  \
             template:\n    spec:\n      domain:\n        cpu:\n          sockets: {sockets}\n          \
             cores: 2\n        devices: {{}}\n"
        )
    };
    std::fs::create_dir(tmp.path().join("vms")).unwrap();
    std::fs::write(tmp.path().join("vms/worker.yaml"), file(4)).unwrap();
    let (code, _, _, stderr) = krm(&input);
    assert_eq!(code, 1, "{stderr}");
    for (field, line) in [("cores", 21), ("sockets", 20)] {
        let expected = format!(
            "vms/worker.yaml:{line}: error[KV010] VirtualMachine/shop/worker: \
             spec.template.spec.domain.cpu.{field}:"
        );
        assert!(stderr.contains(&expected), "{expected}\nin\n{stderr}");
    }
    // The file no longer holds what kpt handed over: no line is better than a wrong one.
    std::fs::write(tmp.path().join("vms/worker.yaml"), file(6)).unwrap();
    let (code, _, _, stderr) = krm(&input);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("vms/worker.yaml: error[KV010] VirtualMachine/shop/worker"),
        "{stderr}"
    );
}

/// An item that names no file (a ResourceList written by hand, or by a tool that adds no
/// path annotations) is placed at its line on stdin: the line of the field at fault, counted
/// from the first line of the input. Its result names no file.
#[test]
fn items_without_a_file_are_placed_at_their_line_on_stdin() {
    let items = VM_AND_SIZE
        .lines()
        .filter(|l| !l.contains("kubernetes.io/") && !l.contains("k8s.io/id"))
        .map(|l| l.replace("    annotations:", "    labels: {}"))
        .collect::<Vec<_>>()
        .join("\n");
    let input = list("config.kubernetes.io/v1", &items, "");
    let (code, out, _, stderr) = krm(&input);
    assert_eq!(code, 1, "{stderr}");
    let results = out["results"].as_array().unwrap();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        results.iter().all(|r| r.get("file").is_none()),
        "{results:?}"
    );
    let line = |needle: &str| {
        1 + input
            .lines()
            .position(|l| l.trim_start().starts_with(needle))
            .unwrap()
    };
    for field in ["cores", "sockets"] {
        let expected = format!(
            "-:{}: error[KV010] VirtualMachine/shop/worker: spec.template.spec.domain.cpu.{field}:",
            line("cpu: {sockets")
        );
        assert!(stderr.contains(&expected), "{expected}\nin\n{stderr}");
    }
}

#[test]
fn v1beta1_in_v1beta1_out() {
    let input = list(
        "config.kubernetes.io/v1beta1",
        "\n- {apiVersion: v1, kind: Namespace, metadata: {name: shop}}",
        "",
    );
    let (code, out, _, _) = krm(&input);
    assert_eq!(code, 0);
    assert_eq!(out["apiVersion"], "config.kubernetes.io/v1beta1");
    assert_eq!(out["items"][0]["metadata"]["name"], "shop");
}

#[test]
fn empty_items_give_an_empty_list() {
    for input in [
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n",
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n",
    ] {
        let (code, out, _, _) = krm(input);
        assert_eq!(code, 0);
        assert_eq!(
            out,
            json!({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": []})
        );
    }
}

#[test]
fn function_config_as_config_map_or_kvrender() {
    let validate_cm = "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: x}\n  data: {expand: validate, severity: warning}\n";
    let input = list("config.kubernetes.io/v1", VM_AND_SIZE, validate_cm);
    let (code, out, _, _) = krm(&input);
    // The conflict is reported as a warning and the VM is kept.
    assert_eq!(code, 0);
    assert_eq!(out["results"][0]["severity"], "warning");
    assert_eq!(
        out["items"][1]["spec"]["instancetype"]["name"],
        "team.small"
    );

    let off = "functionConfig:\n  apiVersion: kvrender.io/v1alpha1\n  kind: KVRender\n  metadata: {name: x}\n  expand: 'off'\n";
    let (code, out, _, _) = krm(&list("config.kubernetes.io/v1", VM_AND_SIZE, off));
    assert_eq!(code, 0);
    assert!(out.get("results").is_none());
    let before: Value =
        serde_saphyr::from_str(&list("config.kubernetes.io/v1", VM_AND_SIZE, "")).unwrap();
    assert_eq!(out["items"], before["items"]);

    // kpt's functionConfig when none is given: no kind, empty data.
    let kpt = "functionConfig:\n  metadata: {name: function-input}\n  data: {}\n";
    let ok = VM_AND_SIZE.replace("cpu: {sockets: 4, cores: 2}", "cpu: {}");
    let (code, out, _, _) = krm(&list("config.kubernetes.io/v1", &ok, kpt));
    assert_eq!(code, 0);
    assert!(out["items"][1]["spec"].get("instancetype").is_none());
}

#[test]
fn the_function_config_item_stays_and_is_marked_local() {
    // kpt passes the --fn-config file among the items too; removing it would delete the file.
    let items = "\n- apiVersion: kvrender.io/v1alpha1\n  kind: KVRender\n  metadata:\n    name: cfg\n    annotations: {config.kubernetes.io/path: kvrender.yaml}\n  expand: replace\n";
    let (code, out, _, _) = krm(&list("config.kubernetes.io/v1", items, ""));
    assert_eq!(code, 0);
    let annotations = &out["items"][0]["metadata"]["annotations"];
    assert_eq!(annotations["config.kubernetes.io/local-config"], "true");
    assert_eq!(annotations["config.kubernetes.io/path"], "kvrender.yaml");
}

/// The entries of the `items:` of a ResourceList printed in block style, as text.
fn item_texts(list: &str) -> Vec<String> {
    let items = list.split_once("\nitems:\n").map_or("", |(_, rest)| rest);
    let items = items.split_once("\nresults:\n").map_or(items, |(i, _)| i);
    let mut entries: Vec<String> = Vec::new();
    for line in items.split_inclusive('\n') {
        match entries.last_mut() {
            Some(entry) if !line.starts_with("- ") => entry.push_str(line),
            _ => entries.push(line.to_string()),
        }
    }
    entries
}

/// `value` with the local-configuration mark added.
fn marked_local(value: &Value) -> Value {
    let mut value = value.clone();
    value["metadata"]["annotations"]["config.kubernetes.io/local-config"] = json!("true");
    value
}

/// Give each entry of `items` (block style, one `- ` line each) a comment line naming it.
fn tagged(items: &str, tag: &str) -> String {
    let mut out = String::new();
    let mut n = 0;
    for line in items.split_inclusive('\n') {
        out.push_str(line);
        if line.starts_with("- ") {
            out.push_str(&format!("  # {tag}-{n}\n"));
            n += 1;
        }
    }
    out
}

/// The function writes an item back in the text it was read from (its comments kept) exactly
/// when the item comes out as it went in, or with only the local-configuration mark added:
/// checked item by item over a list where some items change (VMs expanded, an earlier output
/// rendered anew with another value) and others do not (a VM that fails or names nothing, an
/// instancetype, a ConfigMap, a catalog document). On that output, run again, every item is
/// written back as read: an expanded VM expands to itself, and a rendered object that renders
/// the same is kept.
#[test]
fn items_keep_their_text_exactly_when_they_come_out_as_read() {
    // A VM with `spec` line `line` and `domain` entries `domain`.
    let vm = |name: &str, line: &str, domain: &str| {
        format!(
            "- apiVersion: kubevirt.io/v1\n  kind: VirtualMachine\n  metadata:\n    name: {name}\n  \
             spec:\n    {line}\n    template: {{spec: {{domain: {{{domain}devices: {{}}}}}}}}\n"
        )
    };
    let size = "instancetype: {name: team.small}";
    let vms = [
        vm("expands", size, ""),
        vm("conflicts", size, "cpu: {sockets: 4}, "),
        vm("names-nothing", "running: false", ""),
        vm("missing-size", "instancetype: {name: team.huge}", ""),
    ]
    .concat();
    let others = r#"- apiVersion: instancetype.kubevirt.io/v1beta1
  kind: VirtualMachineClusterInstancetype
  metadata:
    name: team.small
  spec:
    cpu: {guest: 2}
    memory: {guest: 2Gi}
- apiVersion: v1
  kind: ConfigMap
  metadata:
    name: settings
  data: {a: b}
"#;
    let items = family_and_item("cluster-instancetypes/team1.small.yaml", 8) + &vms + others;
    let input = list("config.kubernetes.io/v1", &tagged(&items, "first"), "");
    let parsed_input: Value = serde_saphyr::from_str(&input).unwrap();
    let (_, out, text, stderr) = krm(&input);
    let outputs = out["items"].as_array().unwrap();
    let texts = item_texts(&text);
    assert_eq!(texts.len(), outputs.len(), "{text}");
    let mut kept = 0;
    let mut changed = 0;
    for (n, item) in parsed_input["items"].as_array().unwrap().iter().enumerate() {
        let tag = format!("# first-{n}\n");
        let same = |o: &&Value| {
            o["kind"] == item["kind"] && o["metadata"]["name"] == item["metadata"]["name"]
        };
        let at = outputs.iter().position(|o| same(&o)).unwrap();
        let as_read = outputs[at] == *item || outputs[at] == marked_local(item);
        assert_eq!(
            texts[at].contains(&tag),
            as_read,
            "item {n}, as read: {as_read}\n{}\n{stderr}",
            texts[at]
        );
        if as_read {
            kept += 1;
        } else {
            changed += 1;
        }
    }
    // The catalog document (marked), the VMs that fail or name nothing or a missing size,
    // the instancetype and the ConfigMap are kept; the earlier output and the VM that expands
    // are not.
    assert_eq!((kept, changed), (6, 2), "{text}");
    // What changed is written as it now is, not as it was read.
    assert_eq!(team_small(&out)[0]["spec"]["cpu"]["guest"], 1, "{text}");
    let expanded = outputs.iter().find(|o| o["metadata"]["name"] == "expands");
    assert_eq!(
        expanded.unwrap()["spec"]["template"]["spec"]["domain"]["cpu"]["sockets"],
        2
    );

    // Run again on the output, its results left out: every item comes out as it went in.
    let again = list(
        "config.kubernetes.io/v1",
        &format!("\n{}", tagged(&texts.concat(), "again")),
        "",
    );
    let (_, out, text, stderr) = krm(&again);
    let texts = item_texts(&text);
    assert_eq!(texts.len(), outputs.len(), "{text}");
    for (n, entry) in texts.iter().enumerate() {
        assert!(
            entry.contains(&format!("# again-{n}\n")),
            "{entry}\n{stderr}"
        );
    }
    assert_eq!(out["items"].as_array().unwrap(), outputs);
}

#[test]
fn kustomize_exec_function_generator_protocol() {
    // kustomize sends a generator its own config, marked local, as the only item.
    let catalog = testdata("catalog/catalog.yaml");
    let config = format!(
        "apiVersion: kvrender.io/v1alpha1\n  kind: KVRender\n  metadata:\n    name: gen\n    annotations:\n      config.kubernetes.io/local-config: 'true'\n  paths: ['{}']\n",
        catalog.display()
    );
    let input = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {config}functionConfig:\n  {config}"
    );
    let (code, out, _, stderr) = krm(&input);
    assert_eq!(code, 0, "{stderr}");
    let items = out["items"].as_array().unwrap();
    assert_eq!(items[0]["kind"], "KVRender");
    let names: Vec<String> = items[1..]
        .iter()
        .map(|i| {
            format!(
                "{}/{}",
                i["kind"].as_str().unwrap(),
                i["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect();
    assert!(
        names.contains(&"VirtualMachineClusterInstancetype/team1.small".to_string()),
        "{names:?}"
    );
    assert!(
        names.contains(&"VirtualMachinePreference/team.linux".to_string()),
        "{names:?}"
    );
    assert!(items[1..].iter().all(|i| {
        i["metadata"]["annotations"]["internal.config.kubernetes.io/path"].is_string()
    }));
}

/// An item that is not a Kubernetes object comes back as it came, with its error at its line;
/// the other items are answered as ever, not dropped with it.
#[test]
fn an_item_that_is_no_object_comes_back_with_its_error() {
    let items = "\n- 5\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: keep-me} # mine\n  \
                 data: {a: b}\n";
    let (code, out, text, stderr) = krm(&list("config.kubernetes.io/v1", items, ""));
    assert_eq!(code, 1, "{stderr}");
    assert!(text.contains("\n- 5\n"), "{text}");
    assert!(text.contains(&items[5..]), "{text}");
    assert_eq!(out["items"].as_array().unwrap().len(), 2, "{text}");
    let results = out["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0]["severity"], "error");
    assert_eq!(results[0]["tags"]["code"], "KV002");
    assert!(
        stderr.contains("-:4: error[KV002] items[0]: not a Kubernetes object"),
        "{stderr}"
    );
    // Written as one flow sequence, the items have no text of their own: printed anew.
    let (code, out, text, stderr) =
        krm("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n\
         items: [[1], {apiVersion: v1, kind: ConfigMap, metadata: {name: keep-me}}]\n");
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(
        out["items"],
        json!([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "keep-me"}}, [1]]),
        "{text}"
    );
    // `items` that is not a list cannot be answered item by item: an error at its line.
    let (code, out, _, stderr) =
        krm("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n# none\nitems: {a: 1}\n");
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(out["items"], json!([]));
    assert!(
        stderr.contains("-:4: error[KV002] `items` must be a list"),
        "{stderr}"
    );
}

/// A `functionConfig` the function cannot use: the items come back as they came, each from its
/// own text, as untouched items do.
#[test]
fn a_bad_function_config_gives_the_items_back_as_they_came() {
    let items = "\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: keep-me}\n  \
                 data: {a: 'b'} # as written\n";
    let config = "functionConfig:\n  apiVersion: kvrender.io/v1alpha1\n  kind: KVRender\n  \
                  metadata: {name: c}\n  severity: loud\n";
    let (code, out, text, stderr) = krm(&list("config.kubernetes.io/v1", items, config));
    assert_eq!(code, 1, "{stderr}");
    assert!(text.contains(&items[1..]), "{text}");
    assert_eq!(out["results"][0]["tags"]["code"], "KV007", "{text}");
}

#[test]
fn malformed_input_is_an_error_result() {
    let cases = [
        (
            "not_a_resource_list",
            "apiVersion: v1\nkind: List\nitems: []\n",
        ),
        (
            "broken_yaml",
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [\n",
        ),
        (
            "unknown_config_key",
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\nfunctionConfig:\n  apiVersion: kvrender.io/v1alpha1\n  kind: KVRender\n  metadata: {name: x}\n  expnad: replace\n",
        ),
        ("empty", ""),
        (
            "bad_item",
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- just a string\n",
        ),
    ];
    let _g = settings().bind_to_scope();
    for (name, input) in cases {
        let (code, out, text, stderr) = krm(input);
        assert_eq!(code, 1, "{name}");
        assert_eq!(out["kind"], "ResourceList", "{name}");
        let results = out["results"].as_array().unwrap();
        assert_eq!(results[0]["severity"], "error", "{name}");
        assert!(stderr.contains("error["), "{name}: {stderr}");
        insta::assert_snapshot!(format!("krm_malformed_{name}"), text);
    }
}

#[test]
fn malformed_shapes_are_error_results() {
    let cases = [
        ("items_not_a_list", "items: {a: 1}\n"),
        ("item_not_a_mapping", "items:\n- [1, 2]\n"),
        (
            "function_config_scalar",
            "items: []\nfunctionConfig: hello\n",
        ),
        (
            "function_config_data_not_a_mapping",
            "items: []\nfunctionConfig: {apiVersion: v1, kind: ConfigMap, data: [1]}\n",
        ),
    ];
    for (name, body) in cases {
        let input = format!("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n{body}");
        let (code, out, _, stderr) = krm(&input);
        assert_eq!(code, 1, "{name}: {stderr}");
        assert_eq!(out["kind"], "ResourceList", "{name}");
        assert_eq!(out["results"][0]["severity"], "error", "{name}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
}

#[test]
fn huge_and_deep_input_is_answered() {
    let head = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n";
    // Nesting far beyond the parser's depth budget: an error result, not a stack overflow.
    let deep = format!(
        "{head}- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: a}}, data: {}{}}}\n",
        "[".repeat(200_000),
        "]".repeat(200_000)
    );
    let (code, out, _, stderr) = krm(&deep);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(out["results"][0]["tags"]["code"], "KV001");
    let json_deep = format!(
        "{{\"apiVersion\": \"config.kubernetes.io/v1\", \"kind\": \"ResourceList\", \"items\": [{}1{}]}}",
        "{\"a\": ".repeat(100_000),
        "}".repeat(100_000)
    );
    assert_eq!(krm(&json_deep).0, 1);
    // Aliases that multiply each other: refused, not expanded into gigabytes.
    let mut bomb = format!("{head}- apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: c}}\n");
    bomb.push_str("  a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (name, prev) in ["b", "c", "d", "e", "f", "g", "h", "i"]
        .iter()
        .zip(["a", "b", "c", "d", "e", "f", "g", "h"])
    {
        bomb.push_str(&format!(
            "  {name}: &{name} [{}]\n",
            vec![format!("*{prev}"); 10].join(", ")
        ));
    }
    let (code, out, _, _) = krm(&bomb);
    assert_eq!(code, 1);
    assert_eq!(out["results"][0]["severity"], "error");
    // Many items and a long value come back whole.
    let mut many = head.to_string();
    for i in 0..2000 {
        many.push_str(&format!(
            "- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: c{i}}}, data: {{k: v}}}}\n"
        ));
    }
    many.push_str(&format!(
        "- {{apiVersion: v1, kind: ConfigMap, metadata: {{name: long}}, data: {{k: {}}}}}\n",
        "x".repeat(4 << 20)
    ));
    let (code, out, _, stderr) = krm(&many);
    assert_eq!(code, 0, "{stderr}");
    let items = out["items"].as_array().unwrap();
    assert_eq!(items.len(), 2001);
    assert_eq!(items[2000]["data"]["k"].as_str().unwrap().len(), 4 << 20);
}

/// The function's output goes to the cluster, as `build`'s does: a DataVolume template without
/// a storage class gets the one its VM's preference prefers, which KubeVirt's VM webhook would
/// have given it had the VM still named the preference (`testdata/storage-class/`).
#[test]
fn expanded_vms_keep_the_storage_class_the_webhook_gives() {
    let text = std::fs::read_to_string(root().join("testdata/storage-class/vms.yaml")).unwrap();
    let mut items = String::new();
    for doc in text.split("\n---\n") {
        let body: Vec<&str> = doc.lines().filter(|l| !l.starts_with('#')).collect();
        items.push_str("\n- ");
        items.push_str(&body.join("\n  "));
    }
    let (code, out, _, stderr) = krm(&list("config.kubernetes.io/v1", &items, ""));
    assert_eq!(code, 0, "{stderr}");
    let vm = out["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["metadata"]["name"] == "db")
        .expect("the VM is among the items");
    assert!(vm["spec"].get("preference").is_none(), "not expanded: {vm}");
    let classes: Vec<&Value> = vm["spec"]["dataVolumeTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let spec = &t["spec"];
            let claim = spec.get("storage").unwrap_or(&spec["pvc"]);
            &claim["storageClassName"]
        })
        .collect();
    assert_eq!(
        classes,
        [&json!("fast"), &json!("fast"), &json!(""), &json!("slow")]
    );
}

#[test]
fn running_twice_changes_nothing() {
    let items = VM_AND_SIZE.replace("cpu: {sockets: 4, cores: 2}", "cpu: {}");
    let (_, _, first, _) = krm(&list("config.kubernetes.io/v1", &items, ""));
    let (code, _, second, _) = krm(&first);
    assert_eq!(code, 0);
    assert_eq!(first, second);
}

/// A family rendering `team1.small`, and an item of that identity in `file`.
fn family_and_item(file: &str, guest: u32) -> String {
    format!(
        r#"
- apiVersion: kvrender.io/v1alpha1
  kind: InstancetypeFamily
  metadata:
    name: team
    annotations:
      config.kubernetes.io/path: 'catalog.yaml'
      internal.config.kubernetes.io/path: 'catalog.yaml'
  spec:
    version: 1
    scopes: [cluster]
    template: {{spec: {{cpu: {{guest: "{{{{ size.cpu }}}}"}}, memory: {{guest: "{{{{ size.memory }}}}"}}}}}}
    sizes: [[small, 1, 2Gi]]
- apiVersion: instancetype.kubevirt.io/v1beta1
  kind: VirtualMachineClusterInstancetype
  metadata:
    name: team1.small
    annotations:
      config.kubernetes.io/path: '{file}'
      internal.config.kubernetes.io/path: '{file}'
  spec: {{cpu: {{guest: {guest}}}, memory: {{guest: 32Gi}}}}
"#
    )
}

/// The `team1.small` items of a function's output.
fn team_small(out: &Value) -> Vec<&Value> {
    out["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["metadata"]["name"] == "team1.small")
        .collect()
}

#[test]
fn a_users_own_object_of_a_rendered_name_is_a_second_definition() {
    // Written by hand in another file: never overwritten, reported as KV020 in every mode.
    for config in [
        "",
        "functionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {expand: 'off'}}",
    ] {
        let input = list(
            "config.kubernetes.io/v1",
            &family_and_item("tuned.yaml", 8),
            config,
        );
        let (code, out, _, stderr) = krm(&input);
        assert_eq!(code, 1, "{stderr}");
        let results = out["results"].as_array().unwrap();
        assert!(
            results.iter().any(|r| r["tags"]["code"] == "KV020"
                && r["message"].as_str().unwrap().contains("tuned.yaml")),
            "{results:?}"
        );
        let mine = team_small(&out);
        assert!(
            mine.iter().any(|i| i["spec"]["cpu"]["guest"] == 8),
            "{mine:?}"
        );
    }
}

#[test]
fn a_users_own_object_under_paths_is_a_second_definition_too() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("tuned.yaml"),
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
         metadata: {name: team1.small}\nspec: {cpu: {guest: 8}, memory: {guest: 32Gi}}\n",
    )
    .unwrap();
    let items = family_and_item("other.yaml", 8).replace("team1.small", "someone.else");
    let config = format!(
        "functionConfig: {{apiVersion: v1, kind: ConfigMap, metadata: {{name: c}}, \
         data: {{expand: 'off', paths: '{}'}}}}",
        tmp.path().display()
    );
    let (code, out, _, stderr) = krm(&list("config.kubernetes.io/v1", &items, &config));
    assert_eq!(code, 1, "{stderr}");
    let results = out["results"].as_array().unwrap();
    assert!(
        results.iter().any(|r| r["tags"]["code"] == "KV020"
            && r["message"].as_str().unwrap().contains("tuned.yaml")),
        "{results:?}"
    );
}

#[test]
fn an_earlier_runs_output_in_its_own_file_is_replaced() {
    let input = list(
        "config.kubernetes.io/v1",
        &family_and_item("cluster-instancetypes/team1.small.yaml", 8),
        "",
    );
    let (code, out, _, stderr) = krm(&input);
    assert_eq!(code, 0, "{stderr}");
    let mine = team_small(&out);
    assert_eq!(mine.len(), 1, "{mine:?}");
    assert_eq!(mine[0]["spec"]["cpu"]["guest"], 1);
}

/// The family of [`family_and_item`] (it renders `team1.small`), an earlier render's output of
/// a size it no longer has (`team1.large`, in its layout file), and a user's own instancetype
/// in a file of theirs (`team1.huge`).
fn family_and_stale_output() -> String {
    family_and_item("cluster-instancetypes/team1.small.yaml", 1)
        + r#"
- apiVersion: instancetype.kubevirt.io/v1beta1
  kind: VirtualMachineClusterInstancetype
  metadata:
    name: team1.large
    annotations:
      config.kubernetes.io/path: 'cluster-instancetypes/team1.large.yaml'
      internal.config.kubernetes.io/path: 'cluster-instancetypes/team1.large.yaml'
  spec: {cpu: {guest: 4}, memory: {guest: 8Gi}}
- apiVersion: instancetype.kubevirt.io/v1beta1
  kind: VirtualMachineClusterInstancetype
  metadata:
    name: team1.huge
    annotations:
      config.kubernetes.io/path: 'custom/huge.yaml'
      internal.config.kubernetes.io/path: 'custom/huge.yaml'
  spec: {cpu: {guest: 64}, memory: {guest: 256Gi}}
"#
}

fn names(out: &Value) -> Vec<&str> {
    out["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|i| i["metadata"]["name"].as_str())
        .collect()
}

fn stale_results(out: &Value) -> Vec<&Value> {
    out["results"]
        .as_array()
        .map(|r| r.iter().filter(|r| r["tags"]["code"] == "KV043").collect())
        .unwrap_or_default()
}

#[test]
fn a_rendered_object_no_longer_rendered_is_warned_about_or_pruned() {
    let config = |data: &str| {
        format!(
            "functionConfig: {{apiVersion: v1, kind: ConfigMap, metadata: {{name: c}}, data: {{{data}}}}}"
        )
    };
    // Without `prune`: kept, with a warning naming its file.
    let (code, out, _, stderr) = krm(&list(
        "config.kubernetes.io/v1",
        &family_and_stale_output(),
        "",
    ));
    assert_eq!(code, 0, "{stderr}");
    assert!(names(&out).contains(&"team1.large"), "{out:?}");
    let stale = stale_results(&out);
    assert_eq!(stale.len(), 1, "{out:?}");
    assert_eq!(stale[0]["severity"], "warning");
    assert_eq!(stale[0]["resourceRef"]["name"], "team1.large");
    assert!(
        stale[0]["message"]
            .as_str()
            .unwrap()
            .contains("set `prune: true`"),
        "{stale:?}"
    );

    // With `prune`: gone from the items (kpt deletes its file), an info result says so. The
    // rendered size and the user's own file stay.
    let (code, out, _, stderr) = krm(&list(
        "config.kubernetes.io/v1",
        &family_and_stale_output(),
        &config("prune: 'true'"),
    ));
    assert_eq!(code, 0, "{stderr}");
    let kept = names(&out);
    assert!(!kept.contains(&"team1.large"), "{kept:?}");
    assert!(
        kept.contains(&"team1.small") && kept.contains(&"team1.huge"),
        "{kept:?}"
    );
    let stale = stale_results(&out);
    assert_eq!(stale.len(), 1, "{out:?}");
    assert_eq!(stale[0]["severity"], "info");
    assert!(
        stale[0]["message"]
            .as_str()
            .unwrap()
            .starts_with("removed from `cluster-instancetypes/team1.large.yaml`"),
        "{stale:?}"
    );

    // A catalog that does not render decides nothing: the earlier output stays.
    let broken = family_and_stale_output().replace("size.cpu", "size.cpus");
    let (code, out, _, _) = krm(&list(
        "config.kubernetes.io/v1",
        &broken,
        &config("prune: 'true'"),
    ));
    assert_eq!(code, 1);
    assert!(names(&out).contains(&"team1.large"), "{out:?}");
    assert!(stale_results(&out).is_empty(), "{out:?}");

    // Nor does a step that does not render (a validator).
    let (code, out, _, stderr) = krm(&list(
        "config.kubernetes.io/v1",
        &family_and_stale_output(),
        &config("prune: 'true', render: 'false'"),
    ));
    assert_eq!(code, 0, "{stderr}");
    assert!(names(&out).contains(&"team1.large"), "{out:?}");
    assert!(stale_results(&out).is_empty(), "{out:?}");
}

/// Under `kpt fn eval` a subpackage is the directory of a `Kptfile` among the items, and its
/// catalog's objects are written under it; a `Kptfile` claiming a directory outside the package
/// is not followed.
#[test]
fn new_files_go_to_the_subpackage_of_their_catalog_and_never_outside() {
    let doc = |dir: &str, family: &str| {
        format!(
            r#"
- apiVersion: kpt.dev/v1
  kind: Kptfile
  metadata:
    name: {family}
    annotations: {{internal.config.kubernetes.io/path: '{dir}/Kptfile'}}
- apiVersion: kvrender.io/v1alpha1
  kind: InstancetypeFamily
  metadata:
    name: {family}
    annotations: {{internal.config.kubernetes.io/path: '{dir}/catalog.yaml'}}
  spec:
    version: 1
    scopes: [cluster]
    template: {{spec: {{cpu: {{guest: "{{{{ size.cpu }}}}"}}, memory: {{guest: "{{{{ size.memory }}}}"}}}}}}
    sizes: [[small, 1, 2Gi]]"#
        )
    };
    let items = [
        doc("teams/a", "a"),
        doc("teams/a/inner", "b"),
        doc("../evil", "c"),
        doc("/abs", "d"),
    ]
    .concat();
    let (code, out, _, stderr) = krm(&list("config.kubernetes.io/v1", &items, ""));
    assert_eq!(code, 0, "{stderr}");
    let path_of = |name: &str| {
        out["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["metadata"]["name"] == name)
            .and_then(|i| {
                i["metadata"]["annotations"]["internal.config.kubernetes.io/path"].as_str()
            })
            .unwrap_or_else(|| panic!("no {name} in {out:?}"))
            .to_string()
    };
    assert_eq!(
        path_of("a1.small"),
        "teams/a/cluster-instancetypes/a1.small.yaml"
    );
    assert_eq!(
        path_of("b1.small"),
        "teams/a/inner/cluster-instancetypes/b1.small.yaml"
    );
    assert_eq!(path_of("c1.small"), "cluster-instancetypes/c1.small.yaml");
    assert_eq!(path_of("d1.small"), "cluster-instancetypes/d1.small.yaml");
}

#[test]
fn the_embedded_catalog_gives_way_to_a_users_own_object() {
    let items = r#"
- apiVersion: instancetype.kubevirt.io/v1beta1
  kind: VirtualMachineClusterInstancetype
  metadata:
    name: u1.medium
    annotations:
      config.kubernetes.io/path: 'custom/u1-medium.yaml'
      internal.config.kubernetes.io/path: 'custom/u1-medium.yaml'
  spec: {cpu: {guest: 16}, memory: {guest: 64Gi}}
"#;
    let config = "functionConfig: {apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {emitDefaultCatalog: 'true'}}";
    let (code, out, _, stderr) = krm(&list("config.kubernetes.io/v1", items, config));
    assert_eq!(code, 0, "{stderr}");
    let all = out["items"].as_array().unwrap();
    let medium: Vec<&Value> = all
        .iter()
        .filter(|i| {
            i["metadata"]["name"] == "u1.medium" && i["kind"] == "VirtualMachineClusterInstancetype"
        })
        .collect();
    assert_eq!(medium.len(), 1, "{medium:?}");
    assert_eq!(medium[0]["spec"]["cpu"]["guest"], 16);
    // The rest of the catalog is there.
    assert!(all.iter().any(|i| i["metadata"]["name"] == "u1.large"));
}

#[test]
fn no_arguments_and_piped_stdin_is_the_function() {
    let input = list("config.kubernetes.io/v1", VM_AND_SIZE, "");
    let out = run_with_stdin(Command::new(BIN), &input);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let with_fn = krm(&input).2;
    assert_eq!(stdout, with_fn);
}

#[test]
fn legacy_plugin_reads_a_stream_and_writes_a_stream() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("kust-plugin-config-1");
    std::fs::write(
        &config,
        "apiVersion: kvrender.io/v1alpha1\nkind: KVRender\nmetadata: {name: t}\n",
    )
    .unwrap();
    let stream = std::fs::read_to_string(testdata("vms/sizes.yaml")).unwrap()
        + "---\n"
        + &std::fs::read_to_string(testdata("vms/web.yaml")).unwrap();
    let mut cmd = Command::new(BIN);
    cmd.arg("fn").arg(&config);
    let out = run_with_stdin(cmd, &stream);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("kind: ResourceList"));
    assert_eq!(text.matches("---\n").count(), 3);

    // The same under the plugin's own name, as kustomize starts it.
    let link = dir.path().join("KVRender");
    std::os::unix::fs::symlink(BIN, &link).unwrap();
    let mut cmd = Command::new(&link);
    cmd.arg(&config);
    let out = run_with_stdin(cmd, &stream);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), text);

    // And the same objects as `kvrender expand` gives for the VM.
    let expand = Command::new(BIN)
        .arg("expand")
        .arg(testdata("vms"))
        .output()
        .unwrap();
    let expanded: Vec<Value> = docs(&String::from_utf8(expand.stdout).unwrap());
    let web = expanded
        .iter()
        .find(|v| v["metadata"]["name"] == "web")
        .unwrap();
    assert_eq!(&docs(&text)[2], web);
}

fn docs(stream: &str) -> Vec<Value> {
    stream
        .split("---\n")
        .filter(|d| !d.trim().is_empty())
        .map(|d| serde_saphyr::from_str(d).unwrap())
        .collect()
}

// ---------------------------------------------------------------------------------------------
// End to end: kpt and kubectl kustomize
// ---------------------------------------------------------------------------------------------

/// Copy a package from testdata into a temp dir (kpt writes into it).
fn package(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dest = tmp.path().join(name.replace('/', "-"));
    copy_dir(&testdata(name), &dest);
    (tmp, dest)
}

/// A kpt package `pkg` in a scratch folder: its `Kptfile` ([`KPTFILE`]) and `files` (name,
/// text).
fn package_of(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("Kptfile"), KPTFILE).unwrap();
    for (name, text) in files {
        std::fs::write(pkg.join(name), text).unwrap();
    }
    (tmp, pkg)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// Every file of a directory, sorted, as `# path` and the content.
fn dump(dir: &Path) -> String {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    let mut out = String::new();
    for f in files {
        let rel = f.strip_prefix(dir).unwrap().to_string_lossy().to_string();
        out.push_str(&format!("# {rel}\n"));
        out.push_str(&std::fs::read_to_string(&f).unwrap());
        if !out.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

fn show(out: &Output) -> String {
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Run each of `runs` on `pkg` in turn: each succeeds and leaves every file as it was.
fn each_changes_nothing(pkg: &Path, runs: &[&dyn Fn() -> Output]) {
    let before = dump(pkg);
    for run in runs {
        let out = run();
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
        assert_eq!(dump(pkg), before, "{}", show(&out));
    }
}

/// `kpt fn render PKG --allow-exec`.
fn kpt_render(pkg: &Path) -> Output {
    Command::new(tool("kpt"))
        .args(["fn", "render"])
        .arg(pkg)
        .arg("--allow-exec")
        .output()
        .unwrap()
}

fn kpt_eval(pkg: &Path, extra: &[&str]) -> Output {
    Command::new(tool("kpt"))
        .args(["fn", "eval"])
        .arg(pkg)
        .arg("--exec")
        .arg(format!("{BIN} fn"))
        .args(extra)
        .output()
        .unwrap()
}

/// A catalog document with its metadata written as a flow mapping gets the local-config
/// annotation inside that mapping; the rest of the document keeps its style.
#[test]
fn kpt_fn_eval_marks_a_flow_style_catalog_document_in_place() {
    let text = "apiVersion: kvrender.io/v1alpha1\nkind: Preference\nmetadata: {name: a}\nspec:\n  \
                scopes: [cluster]\n  template: {spec: {devices: {preferredDiskBus: virtio}}}\n";
    let (_tmp, pkg) = package_of(&[("pref.yaml", text)]);
    let out = kpt_eval(&pkg, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let after = std::fs::read_to_string(pkg.join("pref.yaml")).unwrap();
    assert_eq!(
        after,
        text.replace(
            "metadata: {name: a}",
            "metadata: {name: a, annotations: {config.kubernetes.io/local-config: \"true\"}}"
        )
    );
}

/// Block metadata behind a comment, or holding its annotations as a flow mapping, gets the
/// local-config annotation added in place: no other line of the document changes, and kpt
/// keeps every comment where it was.
#[test]
fn kpt_fn_eval_marks_a_commented_catalog_document_in_place() {
    let head = "apiVersion: kvrender.io/v1alpha1\nkind: Preference\n";
    let tail = "spec:\n  scopes: [cluster] # one kind only\n  template:\n    spec:\n      \
                # the bus every disk gets\n      devices: {preferredDiskBus: virtio}\n";
    for (metadata, marked) in [
        (
            "metadata: # the preference\n  name: a\n",
            "metadata: # the preference\n  name: a\n  annotations:\n    \
             config.kubernetes.io/local-config: \"true\"\n",
        ),
        (
            "metadata:\n  name: a\n  annotations: {team: vm} # owner\n",
            "metadata:\n  name: a\n  annotations: {team: vm, \
             config.kubernetes.io/local-config: \"true\"} # owner\n",
        ),
    ] {
        let text = format!("{head}{metadata}{tail}");
        let (_tmp, pkg) = package_of(&[("pref.yaml", &text)]);
        let out = kpt_eval(&pkg, &[]);
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
        let after = std::fs::read_to_string(pkg.join("pref.yaml")).unwrap();
        assert_eq!(after, format!("{head}{marked}{tail}"));
    }
}

/// A rendered name with two dots in a row (which kvrender warns about) is written to a file
/// whose path holds no `..`, which kpt would refuse outright.
#[test]
fn kpt_fn_eval_writes_a_name_with_two_dots_in_a_row_to_a_path_kpt_takes() {
    let (_tmp, pkg) = package_of(&[(
        "catalog.yaml",
        "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata:\n  name: x\n\
         spec:\n  scopes: [cluster]\n  sizes:\n  - [.small, 1, 2Gi]\n  template:\n    spec:\n      \
         cpu: {guest: \"{{ size.cpu }}\"}\n      memory: {guest: \"{{ size.memory }}\"}\n",
    )]);
    // The invalid name is an error unless told to be a warning.
    let out = kpt_eval(&pkg, &["--", "severity=warning"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let written = pkg.join("cluster-instancetypes/x._small.yaml");
    let text = std::fs::read_to_string(&written).unwrap_or_else(|e| panic!("{e}\n{}", dump(&pkg)));
    assert!(text.contains("name: x..small"), "{text}");
}

#[test]
fn kpt_fn_eval_expands_a_package_with_fn_config() {
    let (tmp, pkg) = package("vms");
    let results = tmp.path().join("results");
    let out = kpt_eval(
        &pkg,
        &[
            "--fn-config",
            pkg.join("kvrender.yaml").to_str().unwrap(),
            "--results-dir",
            results.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let _g = settings().bind_to_scope();
    insta::assert_snapshot!(
        "krm_kpt_eval_vms_output",
        scrub(&show(&out), Some(tmp.path()))
    );
    insta::assert_snapshot!(
        "krm_kpt_eval_vms_package",
        scrub(&dump(&pkg), Some(tmp.path()))
    );
}

/// kpt hands over every file of a package that looks like a resource, the patches a
/// kustomization in the package applies among them. A patch of a VM is no VM of its own: the
/// function leaves it as it is (not checked, not a second definition) and expands the VM, and
/// kustomize still builds the package.
#[test]
fn kpt_fn_eval_leaves_a_kustomize_patch_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("pkg");
    copy_dir(&root().join("testdata/build/kustomize-tree/base"), &pkg);
    std::fs::write(
        pkg.join("Kptfile"),
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n",
    )
    .unwrap();
    let patch = "testdata/build/kustomize-tree/overlays/prod/instancetype.yaml";
    std::fs::copy(root().join(patch), pkg.join("bigger.yaml")).unwrap();
    std::fs::write(
        pkg.join("kustomization.yaml"),
        "resources:\n- vm.yaml\npatches:\n- path: bigger.yaml\n",
    )
    .unwrap();
    let out = kpt_eval(&pkg, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(
        std::fs::read_to_string(pkg.join("bigger.yaml")).unwrap(),
        std::fs::read_to_string(root().join(patch)).unwrap()
    );
    let vm = std::fs::read_to_string(pkg.join("vm.yaml")).unwrap();
    assert!(
        !vm.contains("u1.medium") && vm.contains("guest: 4Gi"),
        "{vm}"
    );
    let built = Command::new(tool("kubectl"))
        .arg("kustomize")
        .arg(&pkg)
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", show(&built));
    assert!(
        String::from_utf8_lossy(&built.stdout).contains("name: u1.large"),
        "{}",
        show(&built)
    );
}

#[test]
fn kpt_fn_eval_with_key_value_config_validates_only() {
    let (tmp, pkg) = package("conflict");
    let results = tmp.path().join("results");
    let out = kpt_eval(
        &pkg,
        &[
            "--results-dir",
            results.to_str().unwrap(),
            "--",
            "expand=validate",
            "severity=warning",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    // Nothing was changed but the files kpt reformats: the VM still names its instancetype.
    let vm = std::fs::read_to_string(pkg.join("bad-vm.yaml")).unwrap();
    assert!(vm.contains("name: team.small"));
    let results = std::fs::read_to_string(results.join("results.yaml")).unwrap();
    assert!(results.contains("severity: warning"), "{results}");
    assert!(results.contains("path: spec.template.spec.domain.cpu.sockets"));
}

/// `expand: off` written plain in a Kptfile's `configMap` or in a KVRender file is the string
/// `off` to kpt (YAML 1.2), which hands it over unquoted, and YAML 1.1's `false` as kvrender
/// reads YAML: either way the mode `off`, which leaves the VM with its conflict alone.
#[test]
fn kpt_fn_render_with_expand_off_written_plain_leaves_vms_alone() {
    for (pipeline, config) in [
        (
            "  - exec: {BIN} fn\n    configMap:\n      expand: off\n",
            None,
        ),
        (
            "  - exec: {BIN} fn\n    configPath: kvrender.yaml\n",
            Some(
                "apiVersion: kvrender.io/v1alpha1\nkind: KVRender\nmetadata:\n  name: k\n  \
                 annotations:\n    config.kubernetes.io/local-config: \"true\"\nexpand: off\n",
            ),
        ),
    ] {
        let (_tmp, pkg) = package("conflict");
        let kptfile = std::fs::read_to_string(pkg.join("Kptfile")).unwrap();
        std::fs::write(
            pkg.join("Kptfile"),
            format!(
                "{kptfile}pipeline:\n  mutators:\n{}",
                pipeline.replace("{BIN}", BIN)
            ),
        )
        .unwrap();
        if let Some(config) = config {
            std::fs::write(pkg.join("kvrender.yaml"), config).unwrap();
        }
        let out = kpt_render(&pkg);
        assert_eq!(out.status.code(), Some(0), "{pipeline}{}", show(&out));
        let vm = std::fs::read_to_string(pkg.join("bad-vm.yaml")).unwrap();
        assert!(vm.contains("name: team.small"), "{vm}");
    }
}

/// A part defined in a package and again in a subpackage whose pipeline does not run
/// kvrender: under `kpt fn render` the outer pipeline renders both catalogs as one, and the
/// message names the first definition's file from the outer package (`sub/parts.yaml`), not by
/// the absolute path kpt's annotations make of it.
#[test]
fn kpt_fn_render_names_a_subpackage_part_defined_twice_from_the_outer_package() {
    let parts = |name: &str| {
        format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nmetadata: {{name: {name}}}\n\
             parts:\n  sized: {{spec: {{cpu: {{guest: 1}}, memory: {{guest: 1Gi}}}}}}\n"
        )
    };
    let pipeline = format!("pipeline:\n  mutators:\n  - exec: {BIN} fn\n");
    let (_tmp, pkg) = package_of(&[("parts.yaml", &parts("outer"))]);
    std::fs::write(pkg.join("Kptfile"), format!("{KPTFILE}{pipeline}")).unwrap();
    std::fs::create_dir(pkg.join("sub")).unwrap();
    write_subpackage_kptfile(&pkg.join("sub"), "sub");
    std::fs::write(pkg.join("sub/parts.yaml"), parts("inner")).unwrap();
    let out = kpt_render(&pkg);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let text = show(&out);
    assert!(
        text.contains("part `sized` is defined twice, first at sub/parts.yaml"),
        "{text}"
    );
    assert!(!text.contains(&*pkg.to_string_lossy()), "{text}");
}

/// A subpackage whose own pipeline runs kvrender has rendered its catalog, with its own
/// configuration, by the time `kpt fn render` runs the parent's pipeline: the parent's step
/// leaves that catalog to it. The subpackage's version label stays, a part name both packages
/// use is no clash, and rendering the subpackage alone after the whole changes nothing.
#[test]
fn kpt_render_leaves_a_subpackage_running_kvrender_to_its_own_pipeline() {
    let catalog = |family: &str| {
        format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nmetadata: {{name: {family}-parts}}\n\
             parts:\n  sized:\n    spec: {{cpu: {{guest: \"{{{{ size.cpu }}}}\"}}, \
             memory: {{guest: \"{{{{ size.memory }}}}\"}}}}\n---\n\
             apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\n\
             metadata: {{name: {family}}}\nspec: {{version: 1, scopes: [cluster], \
             parts: [sized], sizes: [[small, 1, 2Gi]]}}\n"
        )
    };
    let (_tmp, pkg) = package_of(&[("catalog.yaml", &catalog("outer"))]);
    std::fs::write(
        pkg.join("Kptfile"),
        format!("{KPTFILE}pipeline:\n  mutators:\n  - exec: {BIN} fn\n"),
    )
    .unwrap();
    std::fs::create_dir(pkg.join("sub")).unwrap();
    std::fs::write(
        pkg.join("sub/Kptfile"),
        format!(
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\npipeline:\n  \
             mutators:\n  - exec: {BIN} fn\n    configMap: {{versionLabel: v2}}\n"
        ),
    )
    .unwrap();
    std::fs::write(pkg.join("sub/catalog.yaml"), catalog("inner")).unwrap();
    let out = kpt_render(&pkg);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let label = "instancetype.kubevirt.io/common-instancetypes-version: v2";
    let inner = std::fs::read_to_string(pkg.join("sub/cluster-instancetypes/inner1.small.yaml"))
        .unwrap_or_else(|e| panic!("{e}\n{}", dump(&pkg)));
    assert!(inner.contains(label), "{inner}");
    let outer = std::fs::read_to_string(pkg.join("cluster-instancetypes/outer1.small.yaml"))
        .unwrap_or_else(|e| panic!("{e}\n{}", dump(&pkg)));
    assert!(!outer.contains("common-instancetypes-version"), "{outer}");
    let sub = pkg.join("sub");
    each_changes_nothing(&pkg, &[&|| kpt_render(&pkg), &|| kpt_render(&sub)]);
}

/// `kvrender fn CONFIG` given a ResourceList answers with one whatever is wrong with CONFIG
/// (empty, not YAML, missing, a bad value): its items unchanged and the problem as an error
/// result, which kpt shows. Given a plain stream (kustomize's legacy plugin), a missing file is
/// a usage error as before.
/// A finding about the configuration of `kvrender fn CONFIG` names the file, for a plain
/// stream (a kustomize legacy plugin) as for a ResourceList.
#[test]
fn findings_about_a_config_file_name_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("cfg.yaml"),
        "apiVersion: kvrender.io/v1alpha1\nkind: KVRender\nmetadata: {name: k}\nexpand: 5\n",
    )
    .unwrap();
    for input in [
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n",
    ] {
        let mut cmd = Command::new(BIN);
        cmd.current_dir(dir.path()).args(["fn", "cfg.yaml"]);
        let out = run_with_stdin(cmd, input);
        assert_eq!(out.status.code(), Some(1), "{}", show(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("cfg.yaml:4: error[KV007] functionConfig `expand`: must be a string"),
            "{stderr}"
        );
    }
}

#[test]
fn fn_with_a_config_file_that_cannot_be_used_answers_with_a_resource_list() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("empty.yaml"), "").unwrap();
    std::fs::write(dir.path().join("broken.yaml"), "expand: [\n").unwrap();
    std::fs::write(
        dir.path().join("bad.yaml"),
        "kind: ConfigMap\ndata: {expand: bad}\n",
    )
    .unwrap();
    let list = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  \
                kind: ConfigMap\n  metadata: {name: keep}\n  data: {a: b}\n";
    for (file, message) in [
        ("empty.yaml", "the function config"),
        ("broken.yaml", "is not valid YAML at line 1"),
        ("missing.yaml", "cannot read the function config"),
        ("bad.yaml", "`bad` is not one of replace, validate, off"),
    ] {
        let mut cmd = Command::new(BIN);
        cmd.arg("fn").arg(dir.path().join(file));
        let out = run_with_stdin(cmd, list);
        assert_eq!(out.status.code(), Some(1), "{file}: {}", show(&out));
        let text = String::from_utf8(out.stdout).unwrap();
        // The item's own text, flow style and all.
        assert!(
            text.contains(&list[list.find("- ").unwrap()..]),
            "{file}: {text}"
        );
        let answer: Value = kvrender::load::yaml::parse_document(&text).unwrap();
        assert_eq!(answer["kind"], "ResourceList", "{file}");
        assert_eq!(answer["items"][0]["metadata"]["name"], "keep", "{file}");
        assert_eq!(answer["results"][0]["severity"], "error", "{file}");
        let result = answer["results"][0]["message"].as_str().unwrap();
        assert!(result.contains(message), "{file}: {result}");
        // The result points at the config file, not at stdin.
        let path = answer["results"][0]["file"]["path"].as_str().unwrap_or("");
        assert!(path.ends_with(file), "{file}: {text}");
    }
    let stream = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n";
    let mut cmd = Command::new(BIN);
    cmd.arg("fn").arg(dir.path().join("missing.yaml"));
    let out = run_with_stdin(cmd, stream);
    assert_eq!(out.status.code(), Some(2), "{}", show(&out));
    // Given a stream, a config file that cannot be used is named as the finding's file, with
    // the line of the key at fault when one is.
    for (file, at) in [
        ("empty.yaml", "empty.yaml"),
        ("broken.yaml", "broken.yaml"),
        ("bad.yaml", "bad.yaml:2"),
    ] {
        let mut cmd = Command::new(BIN);
        cmd.current_dir(dir.path()).args(["fn", file]);
        let out = run_with_stdin(cmd, stream);
        assert_eq!(out.status.code(), Some(1), "{file}: {}", show(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with(&format!("{at}: error[KV007] ")),
            "{file}: {stderr}"
        );
    }
}

/// `paths` naming the package itself reads the files an earlier run rendered into it: each is
/// one of the items already, read once, not a second object beside the one this run renders
/// anew (a `KV020`, and two items of one path and index that kpt refuses). Run after run, the
/// package stays as the first run left it.
#[test]
fn kpt_fn_eval_with_paths_naming_the_package_is_idempotent() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("pkg");
    copy_dir(&root().join("examples/krm/kpt"), &pkg);
    let eval = || {
        Command::new(tool("kpt"))
            .args(["fn", "eval"])
            .arg(&pkg)
            .arg("--exec")
            .arg(format!("{BIN} fn"))
            .args(["--", "paths=."])
            .current_dir(&pkg)
            .output()
            .unwrap()
    };
    let first = eval();
    assert_eq!(first.status.code(), Some(0), "{}", show(&first));
    assert!(pkg.join("cluster-instancetypes").is_dir(), "{}", dump(&pkg));
    let second = eval();
    assert_eq!(second.status.code(), Some(0), "{}", show(&second));
    each_changes_nothing(&pkg, &[&eval]);
}

#[test]
fn kpt_fn_eval_fails_on_an_instancetype_conflict() {
    let (tmp, pkg) = package("conflict");
    let results = tmp.path().join("results");
    let out = kpt_eval(&pkg, &["--results-dir", results.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let entries = kpt_results(&results);
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["resourceRef"]["name"], "worker");
    assert_eq!(entries[0]["file"]["path"], "bad-vm.yaml");
    assert!(
        show(&out).contains("VirtualMachine/shop/worker spec.template.spec.domain.cpu.sockets")
    );
    let results = std::fs::read_to_string(results.join("results.yaml")).unwrap();
    for expected in [
        "name: worker",
        "path: spec.template.spec.domain.cpu.sockets",
        "path: bad-vm.yaml",
        "severity: error",
    ] {
        assert!(results.contains(expected), "{expected}: {results}");
    }
    let _g = settings().bind_to_scope();
    insta::assert_snapshot!(
        "krm_kpt_eval_conflict_output",
        scrub(&show(&out), Some(tmp.path()))
    );
    insta::assert_snapshot!(
        "krm_kpt_eval_conflict_results",
        scrub(&results, Some(tmp.path()))
    );
}

/// What `kvrender vmi` gives each VM of a directory: its vCPU count, cores, guest memory (the
/// guest's amount, or the memory request that sizes it), clock and features, by name.
fn vmi_essentials(dir: &Path) -> std::collections::BTreeMap<String, Value> {
    let out = Command::new(BIN)
        .args(["vmi", "--no-default-catalog"])
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = String::from_utf8(out.stdout).unwrap();
    kvrender::load::parse_text(&std::sync::Arc::from("vmi"), &text)
        .objects
        .into_iter()
        .map(|o| {
            let domain = &o.value["spec"]["domain"];
            let axis = |a: &str| domain["cpu"][a].as_u64().unwrap_or(1);
            let memory = match &domain["memory"]["guest"] {
                Value::Null => domain["resources"]["requests"]["memory"].clone(),
                guest => guest.clone(),
            };
            let essentials = json!({
                "vcpus": axis("sockets") * axis("cores") * axis("threads"),
                "cores": axis("cores"),
                "memory": memory,
                "clock": domain["clock"],
                "features": domain["features"],
            });
            (o.name().to_string(), essentials)
        })
        .collect()
}

/// `migrate: presets` replaces each preset by the instancetype and preferences migrated from
/// it, in its place in its file, and rewrites the VMs the presets select with the advice
/// followed; kpt keeps the comments of what stays. The VMs start as they did with the presets.
#[test]
fn kpt_fn_eval_migrates_the_presets_of_a_package() {
    let (tmp, pkg) = package("migrate");
    let before = vmi_essentials(&pkg);
    let command = Command::new(BIN)
        .args(["migrate", "presets", "--with-vms", "--no-default-catalog"])
        .arg(&pkg)
        .output()
        .unwrap();
    assert_eq!(command.status.code(), Some(0), "{}", show(&command));
    let out = kpt_eval(&pkg, &["--", "migrate=presets"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let migrated = dump(&pkg);
    // The objects the command prints, and the VMs it prints with the advice followed, are
    // those the package now holds.
    let objects = |text: &str| {
        let mut all: Vec<Value> = kvrender::load::parse_text(&std::sync::Arc::from("x"), text)
            .objects
            .into_iter()
            .map(|o| {
                let mut v = o.value;
                if let Some(a) = v["metadata"].as_object_mut() {
                    a.remove("annotations");
                }
                v
            })
            .collect();
        all.sort_by_key(|v| (v["kind"].to_string(), v["metadata"]["name"].to_string()));
        all
    };
    let printed = objects(&String::from_utf8_lossy(&command.stdout));
    let files: Vec<String> = std::fs::read_dir(&pkg)
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
        .collect();
    assert_eq!(objects(&files.join("---\n")), printed);
    assert!(
        !migrated.contains("VirtualMachineInstancePreset"),
        "{migrated}"
    );
    for comment in [
        "runStrategy: Always # restarted whenever it stops",
        "# A CI runner: the size preset selects it.",
        "bus: sata # the installer has no virtio driver",
    ] {
        assert!(migrated.contains(comment), "{comment}: {migrated}");
    }
    assert_eq!(vmi_essentials(&pkg), before);
    // Nothing is left to migrate: a second run changes nothing.
    let again = kpt_eval(&pkg, &["--", "migrate=presets"]);
    assert_eq!(again.status.code(), Some(0), "{}", show(&again));
    assert_eq!(dump(&pkg), migrated);
    let validate = Command::new(BIN)
        .args(["validate", "--no-default-catalog"])
        .arg(&pkg)
        .output()
        .unwrap();
    assert_eq!(validate.status.code(), Some(0), "{}", show(&validate));
    let _g = settings().bind_to_scope();
    insta::assert_snapshot!(
        "krm_kpt_eval_migrate_package",
        scrub(&migrated, Some(tmp.path()))
    );
    insta::assert_snapshot!(
        "krm_kpt_eval_migrate_output",
        scrub(&show(&out), Some(tmp.path()))
    );
}

/// A replica set whose VMIs a preset selects stops `migrate: presets`, which would remove the
/// preset and leave those VMIs without what it gives them: an error names the replica set.
#[test]
fn migrate_presets_stops_at_a_replica_set_a_preset_selects() {
    let items = "\n- apiVersion: kubevirt.io/v1\n  kind: VirtualMachineInstancePreset\n  \
                 metadata:\n    name: p\n    namespace: lab\n  spec:\n    selector: \
                 {matchLabels: {app: web}}\n    domain:\n      resources: {requests: {memory: \
                 1Gi}}\n- apiVersion: kubevirt.io/v1\n  kind: VirtualMachineInstanceReplicaSet\n  \
                 metadata:\n    name: web\n    namespace: lab\n  spec:\n    replicas: 1\n    \
                 selector: {matchLabels: {app: web}}\n    template:\n      metadata:\n        \
                 labels: {app: web}\n      spec:\n        domain: {devices: {}}";
    let input = list(
        "config.kubernetes.io/v1",
        items,
        "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  \
         data: {migrate: presets}\n",
    );
    let (code, out, _, stderr) = krm(&input);
    assert_eq!(code, 1, "{stderr}");
    let kinds: Vec<_> = out["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["kind"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        kinds,
        [
            "VirtualMachineInstancePreset",
            "VirtualMachineInstanceReplicaSet"
        ]
    );
    let results = out["results"].as_array().unwrap();
    let told = results
        .iter()
        .find(|r| r["resourceRef"]["kind"] == "VirtualMachineInstanceReplicaSet")
        .unwrap_or_else(|| panic!("{results:?}"));
    assert_eq!(told["severity"], "error");
    assert!(
        told["message"]
            .as_str()
            .unwrap()
            .contains("the function cannot migrate it"),
        "{told:?}"
    );
}

/// Two presets of one name stop `migrate: presets`, which would replace both with what the first
/// gives: an error names the second, and the items come back as they were.
#[test]
fn migrate_presets_stops_at_two_presets_of_one_name() {
    let preset = |feature: &str, line: u32| {
        format!(
            "\n- apiVersion: kubevirt.io/v1\n  kind: VirtualMachineInstancePreset\n  metadata:\n    \
             name: p\n    namespace: lab\n    annotations:\n      \
             internal.config.kubernetes.io/path: presets.yaml\n      \
             internal.config.kubernetes.io/index: '{line}'\n  spec:\n    selector: {{}}\n    \
             domain:\n      features: {{{feature}: {{}}}}"
        )
    };
    let items = format!("{}{}", preset("apic", 0), preset("smm", 1));
    let input = list(
        "config.kubernetes.io/v1",
        &items,
        "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  \
         data: {migrate: presets}\n",
    );
    let (code, out, _, stderr) = krm(&input);
    assert_eq!(code, 1, "{stderr}");
    let items = out["items"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{out:?}");
    assert!(
        items
            .iter()
            .all(|i| i["kind"].as_str() == Some("VirtualMachineInstancePreset")),
        "{out:?}"
    );
    let results = out["results"].as_array().unwrap();
    let second = results
        .iter()
        .find(|r| {
            r["message"]
                .as_str()
                .is_some_and(|m| m.contains("defined twice"))
        })
        .unwrap_or_else(|| panic!("{results:?}"));
    assert_eq!(second["severity"].as_str(), Some("error"));
    assert!(
        second["message"]
            .as_str()
            .unwrap()
            .ends_with("remove or rename one of them, then migrate again"),
        "{second:?}"
    );
}

/// A VM the migration would change (its own CPU layout, which the preset's instancetype would
/// replace) stops `migrate: presets`: an error names it, and no file of the package changes.
#[test]
fn kpt_fn_eval_migrates_nothing_when_a_vm_would_change() {
    let (tmp, pkg) = package("migrate");
    std::fs::write(
        pkg.join("big.yaml"),
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: big\n  \
         namespace: lab\nspec:\n  runStrategy: Always\n  template:\n    metadata:\n      \
         labels:\n        lab.example.com/size: small\n    spec:\n      domain:\n        \
         cpu:\n          cores: 8\n        devices: {}\n",
    )
    .unwrap();
    let before = dump(&pkg);
    let results = tmp.path().join("results");
    let out = kpt_eval(
        &pkg,
        &[
            "--results-dir",
            results.to_str().unwrap(),
            "--",
            "migrate=presets",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert_eq!(dump(&pkg), before);
    let entries = kpt_results(&results);
    // The errors, and a warning at the preset: the VMs that set no sockets get CPU hotplug
    // room with its instancetype, which changes no vCPU they start with and stops nothing.
    let errors: Vec<_> = entries
        .iter()
        .filter(|e| e["severity"] == "error")
        .cloned()
        .collect();
    assert_eq!(errors.len(), 2, "{entries:?}");
    let warnings: Vec<_> = entries
        .iter()
        .filter(|e| e["severity"] == "warning")
        .collect();
    assert_eq!(warnings.len(), 1, "{entries:?}");
    assert_eq!(
        warnings[0]["resourceRef"]["kind"],
        "VirtualMachineInstancePreset"
    );
    assert!(
        warnings[0]["message"]
            .as_str()
            .unwrap()
            .contains("CPU hotplug room"),
        "{entries:?}"
    );
    let entries = errors;
    let run = entries[0]["message"].as_str().unwrap();
    assert!(run.contains("nothing was changed"), "{run}");
    assert_eq!(entries[1]["resourceRef"]["name"], "big");
    assert_eq!(entries[1]["file"]["path"], "big.yaml");
    let message = entries[1]["message"].as_str().unwrap();
    assert!(message.contains("has 8 vCPUs"), "{message}");
    assert!(
        message.ends_with("Make the preset and this VM agree, or migrate this VM by hand"),
        "{message}"
    );
}

#[test]
fn kpt_fn_eval_renders_a_catalog_into_files() {
    let (tmp, pkg) = package("catalog");
    let out = kpt_eval(
        &pkg,
        &["--fn-config", pkg.join("kvrender.yaml").to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    for file in [
        "instancetypes/team1.small.yaml",
        "cluster-instancetypes/team1.medium.yaml",
        "preferences/team.linux.yaml",
        "cluster-preferences/team.linux.yaml",
        "catalog.yaml",
    ] {
        assert!(pkg.join(file).is_file(), "{file} missing:\n{}", dump(&pkg));
    }
    let _g = settings().bind_to_scope();
    insta::assert_snapshot!(
        "krm_kpt_eval_catalog_package",
        scrub(&dump(&pkg), Some(tmp.path()))
    );
}

#[test]
fn kpt_fn_eval_prunes_the_files_of_sizes_removed_from_the_catalog() {
    let (_tmp, pkg) = package("catalog");
    let config = pkg.join("kvrender.yaml");
    let eval = || kpt_eval(&pkg, &["--fn-config", config.to_str().unwrap()]);
    let out = eval();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let medium = [
        "instancetypes/team1.medium.yaml",
        "cluster-instancetypes/team1.medium.yaml",
    ];
    for file in medium {
        assert!(pkg.join(file).is_file(), "{file} missing:\n{}", dump(&pkg));
    }
    // The size goes from the catalog: without `prune` its files stay, with a warning.
    let catalog = pkg.join("catalog.yaml");
    let text = std::fs::read_to_string(&catalog).unwrap();
    std::fs::write(&catalog, text.replace("  - [medium, 2, 4Gi]\n", "")).unwrap();
    let out = eval();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(show(&out).contains("set `prune: true`"), "{}", show(&out));
    for file in medium {
        assert!(pkg.join(file).is_file(), "{file} removed without prune");
    }
    // With `prune`, kpt deletes them; everything else stays.
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("prune: true\n");
    std::fs::write(&config, text).unwrap();
    let out = eval();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    for file in medium {
        assert!(!pkg.join(file).exists(), "{file} kept:\n{}", dump(&pkg));
    }
    for file in [
        "instancetypes/team1.small.yaml",
        "cluster-instancetypes/team1.small.yaml",
        "preferences/team.linux.yaml",
        "cluster-preferences/team.linux.yaml",
        "catalog.yaml",
        "kvrender.yaml",
    ] {
        assert!(pkg.join(file).is_file(), "{file} missing:\n{}", dump(&pkg));
    }
    // Running again changes nothing.
    let before = dump(&pkg);
    let out = eval();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(dump(&pkg), before);
}

/// `kpt fn eval` started in `dir`, as a user runs it from inside a package.
fn kpt_eval_in(dir: &Path, pkg: &str, extra: &[&str]) -> Output {
    Command::new(tool("kpt"))
        .current_dir(dir)
        .args(["fn", "eval", pkg, "--exec"])
        .arg(format!("{BIN} fn"))
        .args(extra)
        .output()
        .unwrap()
}

const KPTFILE: &str = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n";

/// A folder `shared` below `root` outside any package, holding `ext.yaml`: the cluster
/// instancetype `ext.big`, for `paths` to name.
fn shared_instancetype(root: &Path) -> PathBuf {
    let shared = root.join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::write(
        shared.join("ext.yaml"),
        "apiVersion: instancetype.kubevirt.io/v1beta1\n\
         kind: VirtualMachineClusterInstancetype\n\
         metadata:\n  name: ext.big\n\
         spec:\n  cpu:\n    guest: 4\n  memory:\n    guest: 8Gi\n",
    )
    .unwrap();
    shared
}

/// The objects of `paths` files outside the package are written into it where a render writes
/// objects of their kind, whatever the path looks like, and the next run replaces them there:
/// kpt refuses an item at a path outside the package, and two items at one path and index.
#[test]
fn kpt_fn_eval_places_the_objects_of_paths_in_the_package_and_replaces_them_later() {
    let tmp = tempfile::tempdir().unwrap();
    let shared = shared_instancetype(tmp.path());
    let pkg = tmp.path().join("pkgs/foo");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("Kptfile"), KPTFILE).unwrap();
    std::fs::write(
        pkg.join("vm.yaml"),
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm1\n\
         spec:\n  runStrategy: Halted\n  instancetype:\n    name: ext.big\n\
         \x20 template:\n    spec:\n      domain:\n        devices: {}\n",
    )
    .unwrap();
    let absolute = format!("paths={}", shared.display());
    // From the repository's root, from inside the package with `..`, and absolutely.
    let runs: [(&Path, &str, &str); 3] = [
        (tmp.path(), "pkgs/foo", "paths=shared"),
        (&pkg, ".", "paths=../../shared"),
        (tmp.path(), "pkgs/foo", &absolute),
    ];
    for (dir, target, paths) in runs {
        let before = dump(&pkg);
        for run in ["first", "second"] {
            let out = kpt_eval_in(dir, target, &["--", paths, "expand=validate"]);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{paths}, {run} run:\n{}",
                show(&out)
            );
        }
        let files = dump(&pkg);
        assert!(
            files.contains("# cluster-instancetypes/ext.big.yaml\n"),
            "{paths}:\n{files}"
        );
        assert_eq!(
            files.matches("name: ext.big\n").count(),
            2,
            "{paths}:\n{files}"
        );
        if before.contains("# cluster-instancetypes/ext.big.yaml\n") {
            assert_eq!(files, before, "{paths}: a later run changed the package");
        }
    }
    let mut entries: Vec<String> = walkdir::WalkDir::new(tmp.path())
        .into_iter()
        .map(|e| {
            e.unwrap()
                .path()
                .strip_prefix(tmp.path())
                .unwrap()
                .display()
                .to_string()
        })
        .collect();
    entries.sort();
    assert_eq!(
        entries,
        [
            "",
            "pkgs",
            "pkgs/foo",
            "pkgs/foo/Kptfile",
            "pkgs/foo/cluster-instancetypes",
            "pkgs/foo/cluster-instancetypes/ext.big.yaml",
            "pkgs/foo/vm.yaml",
            "shared",
            "shared/ext.yaml"
        ]
    );
}

/// Beside a catalog the package renders, the object of a `paths` file outside the package is
/// placed once and kept: run after run, with `prune: true`, it is neither removed as rendered no
/// more nor reported so (from the package's folder and from outside it).
#[test]
fn kpt_fn_eval_keeps_a_placed_paths_object_beside_a_rendered_catalog() {
    let tmp = tempfile::tempdir().unwrap();
    shared_instancetype(tmp.path());
    let pkg = tmp.path().join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(pkg.join("Kptfile"), KPTFILE).unwrap();
    std::fs::write(
        pkg.join("catalog.yaml"),
        "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata:\n  name: team\n\
         spec:\n  version: 1\n  template:\n    spec:\n      cpu: {guest: \"{{ size.cpu }}\"}\n\
         \x20     memory: {guest: \"{{ size.memory }}\"}\n  sizes:\n  - [small, 1, 2Gi]\n",
    )
    .unwrap();
    let mut after_first = None;
    for (dir, target, paths) in [
        (pkg.as_path(), ".", "paths=../shared"),
        (tmp.path(), "pkg", "paths=shared"),
        (pkg.as_path(), ".", "paths=../shared"),
    ] {
        for extra in [&["prune=true"][..], &["prune=true"], &["strict=true"]] {
            let out = kpt_eval_in(dir, target, &[&["--", paths][..], extra].concat());
            assert_eq!(
                out.status.code(),
                Some(0),
                "{paths} {extra:?}:\n{}",
                show(&out)
            );
            assert!(
                !show(&out).contains("KV043"),
                "{paths} {extra:?}:\n{}",
                show(&out)
            );
            let files = dump(&pkg);
            assert!(
                files.contains("# cluster-instancetypes/ext.big.yaml\n")
                    && files.contains("# cluster-instancetypes/team1.small.yaml\n"),
                "{paths} {extra:?}:\n{files}"
            );
            match &after_first {
                None => after_first = Some(files),
                Some(first) => assert_eq!(&files, first, "{paths} {extra:?}: the package changed"),
            }
        }
    }
}

/// A file of the package named in `paths` too is read once: its documents are not second
/// definitions of themselves, and nothing is added to the package.
#[test]
fn kpt_fn_eval_reads_a_package_file_named_in_paths_once() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("p");
    std::fs::create_dir_all(pkg.join("cat")).unwrap();
    std::fs::write(pkg.join("Kptfile"), KPTFILE).unwrap();
    std::fs::write(
        pkg.join("cat/catalog.yaml"),
        "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nmetadata:\n  name: team-parts\n\
         parts: {}\n---\n\
         apiVersion: instancetype.kubevirt.io/v1beta1\n\
         kind: VirtualMachineClusterInstancetype\n\
         metadata:\n  name: own.big\n\
         spec:\n  cpu:\n    guest: 4\n  memory:\n    guest: 8Gi\n",
    )
    .unwrap();
    for (dir, target, paths) in [
        (pkg.as_path(), ".", "paths=cat"),
        (tmp.path(), "p", "paths=p/cat"),
    ] {
        let out = kpt_eval_in(dir, target, &["--", paths]);
        assert_eq!(out.status.code(), Some(0), "{paths}:\n{}", show(&out));
        assert!(!show(&out).contains("KV020"), "{paths}:\n{}", show(&out));
        let files = dump(&pkg);
        assert_eq!(files.matches("\n# ").count() + 1, 2, "{paths}:\n{files}");
        assert_eq!(
            files.matches("name: own.big\n").count(),
            1,
            "{paths}:\n{files}"
        );
    }
}

/// A file that `paths` names twice (`vm.yaml` and `./vm.yaml`), or that two entries reach (a
/// folder and its subfolder), is read once, as `build` reads its PATHs: its VM is no second
/// definition of itself.
#[test]
fn a_file_paths_reaches_twice_is_read_once() {
    let tmp = tempfile::tempdir().unwrap();
    let sub = tmp.path().join("vms/team");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(
        sub.join("vm.yaml"),
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: once\n\
         spec:\n  runStrategy: Halted\n  instancetype:\n    name: u1.small\n  template:\n\
         \x20   spec:\n      domain:\n        devices: {}\n",
    )
    .unwrap();
    let root = tmp.path().display();
    for paths in [
        format!("{root}/vms/team/vm.yaml,{root}/vms/team/./vm.yaml"),
        format!("{root}/vms,{root}/vms/team"),
    ] {
        let function_config = format!(
            "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {{name: c}}\n  \
             data: {{paths: '{paths}'}}\n"
        );
        let (code, out, _, stderr) = krm(&list("config.kubernetes.io/v1", " []", &function_config));
        assert_eq!(code, 0, "{paths}: {stderr}");
        assert!(!stderr.contains("KV020"), "{paths}: {stderr}");
        let vms = out["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|item| item["metadata"]["name"] == "once")
            .count();
        assert_eq!(vms, 1, "{paths}: {out:?}");
    }
}

/// A rendered object whose file holds another object already takes the next index of that
/// file, where kpt writes it beside the other; the next run replaces it in place.
#[test]
fn kpt_fn_eval_adds_a_rendered_object_to_a_file_that_holds_another() {
    let (_tmp, pkg) = package("catalog");
    let config = pkg.join("kvrender.yaml");
    let file = pkg.join("cluster-instancetypes/team1.small.yaml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        "# kept by hand\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: note\ndata:\n  k: v\n",
    )
    .unwrap();
    let eval = || kpt_eval(&pkg, &["--fn-config", config.to_str().unwrap()]);
    let out = eval();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = std::fs::read_to_string(&file).unwrap();
    let (note, rendered) = text.split_once("\n---\n").expect("two documents");
    assert!(
        note.starts_with("# kept by hand\n") && note.contains("kind: ConfigMap"),
        "{text}"
    );
    assert!(
        rendered.contains("kind: VirtualMachineClusterInstancetype")
            && rendered.contains("name: team1.small"),
        "{text}"
    );
    let before = dump(&pkg);
    let out = eval();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(dump(&pkg), before, "the second run changed the package");
}

/// Point the package's Kptfile pipeline (`exec: kvrender fn`) at the binary under test.
fn run_binary_under_test(pkg: &Path) {
    let kptfile = pkg.join("Kptfile");
    let text = std::fs::read_to_string(&kptfile).unwrap();
    std::fs::write(
        &kptfile,
        text.replace("exec: kvrender fn", &format!("exec: {BIN} fn")),
    )
    .unwrap();
}

#[test]
fn kpt_fn_render_runs_the_kptfile_pipeline() {
    let (tmp, pkg) = package("pipeline");
    run_binary_under_test(&pkg);
    let results = tmp.path().join("results");
    let out = kpt_render_with_results(&pkg, &results);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let web = std::fs::read_to_string(pkg.join("web.yaml")).unwrap();
    assert!(!web.contains("instancetype:"), "not expanded:\n{web}");
    assert!(
        web.starts_with("# The web front end."),
        "comment lost:\n{web}"
    );
    let _g = settings().bind_to_scope();
    insta::assert_snapshot!(
        "krm_kpt_render_pipeline_output",
        scrub(&show(&out), Some(tmp.path()))
    );
    insta::assert_snapshot!("krm_kpt_render_pipeline_web", scrub(&web, Some(tmp.path())));
}

/// The pipeline's validator renders the catalog again: its finding about a rendered
/// instancetype names the catalog file, not the file kpt would have written the object to,
/// which a failing pipeline never writes.
#[test]
fn kpt_fn_render_validator_names_the_catalog_of_a_rendered_object() {
    let (tmp, pkg) = package("pipeline-finding");
    run_binary_under_test(&pkg);
    let before = dump(&pkg);
    let results = tmp.path().join("results");
    let out = kpt_render_with_results(&pkg, &results);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert_eq!(dump(&pkg), before, "a failing pipeline writes nothing");
    let errors: Vec<Value> = kpt_results(&results)
        .into_iter()
        .filter(|r| r["severity"] == "error")
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["tags"]["code"], "KV044", "{errors:?}");
    assert_eq!(
        errors[0]["resourceRef"]["name"], "team1.smallgi",
        "{errors:?}"
    );
    assert_eq!(errors[0]["file"]["path"], "catalog.yaml", "{errors:?}");
}

/// The entries of kvrender's step in a kpt results file (`--results-dir`).
fn kpt_results(results_dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(results_dir.join("results.yaml")).unwrap();
    let list: Value = serde_saphyr::from_str(&text).unwrap();
    assert_eq!(list["kind"], "FunctionResultList", "{text}");
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["exec"].as_str().is_some_and(|e| e.starts_with(BIN)))
        .flat_map(|i| i["results"].as_array().cloned().unwrap_or_default())
        .collect()
}

#[test]
fn kpt_fn_render_fails_on_an_instancetype_conflict() {
    let (tmp, pkg) = package("render-conflict");
    run_binary_under_test(&pkg);
    let before = dump(&pkg);
    let results = tmp.path().join("results");
    let out = kpt_render_with_results(&pkg, &results);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    // What kpt prints names the VM, the field and (in kvrender's stderr) the file and the
    // field's line: the file still holds the VM kpt handed over.
    let shown = show(&out);
    assert!(
        shown.contains("VirtualMachine/shop/worker spec.template.spec.domain.cpu.sockets"),
        "{shown}"
    );
    assert!(
        shown.contains("vms.yaml:29: error[KV010] VirtualMachine/shop/worker"),
        "{shown}"
    );
    // A failing pipeline writes nothing.
    assert_eq!(dump(&pkg), before);
    // The results file holds kvrender's result: the VM, the field, the file and document.
    let entries = kpt_results(&results);
    assert_eq!(
        entries,
        [json!({
            "message": "VM field(s) spec.template.spec.domain.cpu.sockets conflicts with \
                        selected instance type (the instancetype \"team.small\" sets it: remove \
                        it from the VM, or choose an instancetype that fits what the VM needs)",
            "severity": "error",
            "resourceRef": {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                            "name": "worker", "namespace": "shop"},
            "field": {"path": "spec.template.spec.domain.cpu.sockets"},
            "file": {"path": "vms.yaml", "index": 1},
            "tags": {"code": "KV010"},
        })]
    );
    let _g = settings().bind_to_scope();
    insta::assert_snapshot!(
        "krm_kpt_render_conflict_output",
        scrub(&shown, Some(tmp.path()))
    );
}

/// A kustomize plugin home holding the legacy exec plugin (a link to the binary).
fn plugin_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("kvrender.io/v1alpha1/kvrender");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(BIN, dir.join("KVRender")).unwrap();
    home
}

fn kustomize(dir: &Path) -> Output {
    let home = plugin_home();
    Command::new(tool("kubectl"))
        .args(["kustomize", "--enable-alpha-plugins"])
        .arg(dir)
        .env("KUSTOMIZE_PLUGIN_HOME", home.path())
        // kustomize hands a legacy plugin its configuration in a temporary file, which it
        // leaves behind when the plugin fails: keep it in the plugin home, removed below.
        .env("TMPDIR", home.path())
        .output()
        .unwrap()
}

/// A catalog document listed in a kustomization that renames (`namePrefix`, `nameSuffix`) is
/// renamed before kvrender renders it: what it makes is named as kustomize names the objects
/// it lists (`prod-team1.medium`, `team1.medium-prod`, never `team-prod1.medium`), and a VM
/// naming `team1.medium` finds it; with the references declared, kustomize renames the VM's
/// too, also under a `namespace:`.
#[test]
fn a_renamed_catalog_document_renders_objects_named_as_kustomize_names_them() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for (file, text) in [
        (
            "catalog.yaml",
            "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata:\n  name: team\n\
             spec:\n  version: 1\n  template:\n    spec:\n      cpu: {guest: \"{{ size.cpu }}\"}\n\
             \x20     memory: {guest: \"{{ size.memory }}\"}\n  sizes:\n  - [medium, 2, 4Gi]\n",
        ),
        (
            "vm.yaml",
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: web\nspec:\n  \
             runStrategy: Always\n  instancetype:\n    name: team1.medium\n  template:\n    \
             spec:\n      domain:\n        devices: {}\n",
        ),
        (
            "refs.yaml",
            "nameReference:\n- kind: VirtualMachineClusterInstancetype\n  \
             group: instancetype.kubevirt.io\n  fieldSpecs:\n  - {kind: VirtualMachine, \
             group: kubevirt.io, path: spec/instancetype/name}\n",
        ),
    ] {
        std::fs::write(dir.join(file), text).unwrap();
    }
    for (rename, expand, name, vm_names) in [
        (
            "namePrefix: prod-",
            "validate",
            "prod-team1.medium",
            "prod-team1.medium",
        ),
        (
            "nameSuffix: -prod",
            "validate",
            "team1.medium-prod",
            "team1.medium-prod",
        ),
        ("namePrefix: prod-", "replace", "prod-team1.medium", ""),
        // Under a namespace too: kustomize renames the reference to the cluster-scoped one
        // only in the VM's namespace, which it gives the object as to any kind it does not know.
        (
            "namePrefix: prod-\nnamespace: ns1",
            "validate",
            "prod-team1.medium",
            "prod-team1.medium",
        ),
        // A namespace without a prefix: the same namespaces, the names unchanged.
        ("namespace: ns1", "validate", "team1.medium", "team1.medium"),
    ] {
        std::fs::write(
            dir.join("kv.yaml"),
            format!(
                "apiVersion: kvrender.io/v1alpha1\nkind: KVRender\nmetadata:\n  name: x\n\
                 expand: {expand}\n"
            ),
        )
        .unwrap();
        std::fs::write(
            dir.join("kustomization.yaml"),
            format!(
                "resources: [catalog.yaml, vm.yaml]\nconfigurations: [refs.yaml]\n{rename}\n\
                 transformers: [kv.yaml]\n"
            ),
        )
        .unwrap();
        let out = kustomize(dir);
        assert_eq!(out.status.code(), Some(0), "{rename}:\n{}", show(&out));
        let built = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            built.matches(&format!("\n  name: {name}\n")).count(),
            2,
            "{rename}: both scopes\n{built}"
        );
        assert!(!built.contains("team-prod1"), "{rename}:\n{built}");
        if rename.contains("namespace: ns1") {
            // The VM and both rendered objects.
            assert_eq!(
                built.matches("\n  namespace: ns1\n").count(),
                3,
                "{rename}:\n{built}"
            );
        }
        assert!(!built.contains("internal.config"), "{rename}:\n{built}");
        if vm_names.is_empty() {
            // Expanded against the renamed instancetype: its size, and no reference left.
            assert!(
                built.contains("guest: 4Gi") && !built.contains("instancetype:\n    name"),
                "{rename}:\n{built}"
            );
        } else {
            assert!(
                built.contains(&format!("instancetype:\n    name: {vm_names}\n")),
                "{rename}:\n{built}"
            );
        }
    }
}

/// The annotation prefixes kpt and kustomize own.
const ORCHESTRATION: [&str; 4] = [
    "config.kubernetes.io/",
    "internal.config.kubernetes.io/",
    "config.k8s.io/",
    "kustomize.config.k8s.io/",
];

/// An object as data for comparing outputs: without the annotations orchestrators add
/// (kustomize's origin and ids, kpt's paths), and without an annotation map left empty.
fn without_orchestration(mut v: Value) -> Value {
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut)
        && let Some(Value::Object(a)) = meta.get_mut("annotations")
    {
        a.retain(|k, _| !ORCHESTRATION.iter().any(|p| k.starts_with(p)));
        if a.is_empty() {
            meta.remove("annotations");
        }
    }
    v
}

/// Objects as data, order ignored (kustomize sorts its output, `build` does not).
fn as_set(objects: Vec<Value>) -> Vec<String> {
    let mut keys: Vec<String> = objects
        .into_iter()
        .map(|v| sorted_json(&without_orchestration(v)))
        .collect();
    keys.sort();
    keys
}

/// JSON text with every mapping's keys sorted (kustomize reorders keys).
fn sorted_json(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), sorted_json(v)))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(sorted_json).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// `kvrender build ARGS DIR`: its objects, its stderr and exit code.
fn build(dir: &Path, args: &[&str]) -> (Vec<Value>, String, i32) {
    let out = Command::new(BIN)
        .arg("build")
        .args(args)
        .arg(dir)
        .output()
        .unwrap();
    (
        docs(&String::from_utf8(out.stdout).unwrap()),
        String::from_utf8(out.stderr).unwrap(),
        out.status.code().unwrap(),
    )
}

#[test]
fn kustomize_legacy_plugin_expands_vms() {
    let (tmp, dir) = package("kustomize/vms");
    let out = kustomize(&dir);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let built = docs(&format!("---\n{}", String::from_utf8_lossy(&out.stdout)));
    // The same objects as `kvrender build` on the same directory (the kustomization and the
    // plugin config are tool configuration, which `build` leaves out).
    let (expected, stderr, code) = build(&dir, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(expected.len(), 4);
    assert_eq!(as_set(built), as_set(expected));
    let _g = settings().bind_to_scope();
    insta::assert_snapshot!("krm_kustomize_vms", scrub(&show(&out), Some(tmp.path())));
}

#[test]
fn kustomize_legacy_plugin_fails_on_an_instancetype_conflict() {
    let (tmp, dir) = package("kustomize/conflict");
    let out = kustomize(&dir);
    assert_ne!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The VM, the field path, and the file (kustomize's origin annotation, relative to the
    // kustomization, the directory kustomize runs the plugin in) at the field's line.
    assert!(
        stderr.contains(
            "bad-vm.yaml:14: error[KV010] VirtualMachine/shop/worker: spec.template.spec.domain.cpu.sockets"
        ),
        "{stderr}"
    );
    // The same finding as `kvrender build` on the same directory.
    let (objects, built, code) = build(&dir, &[]);
    assert_eq!(code, 1);
    assert!(objects.is_empty());
    let finding = built
        .lines()
        .find_map(|l| l.split_once(" error[KV010] ").map(|(_, f)| f))
        .unwrap_or_else(|| panic!("{built}"));
    assert!(stderr.contains(finding), "{finding}\n{stderr}");
    let _g = settings().bind_to_scope();
    insta::assert_snapshot!(
        "krm_kustomize_conflict",
        scrub(&show(&out), Some(tmp.path()))
    );
}

/// An overlay's plugin meets a VM of its base, renamed by the overlay's `namePrefix`: the
/// finding names the base's file as the origin annotation gives it (relative to the overlay,
/// where kustomize runs the plugin), at the line of the field, found by the VM's first name.
#[test]
fn kustomize_legacy_plugin_names_the_line_of_a_bases_vm() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let base = root.join("base");
    let overlay = root.join("overlays/prod");
    std::fs::create_dir_all(&base).unwrap();
    std::fs::create_dir_all(&overlay).unwrap();
    std::fs::write(base.join("kustomization.yaml"), "resources: [vms.yaml]\n").unwrap();
    let vm = |name: &str, cpu: &str| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: {name}\n\
             spec:\n  runStrategy: Always\n  instancetype:\n    name: u1.large\n  \
             template:\n    spec:\n      domain:\n{cpu}        devices: {{}}\n"
        )
    };
    let vms = format!(
        "{}---\n{}",
        vm("web", ""),
        vm("db", "        cpu:\n          sockets: 3\n")
    );
    std::fs::write(base.join("vms.yaml"), &vms).unwrap();
    let line = vms.lines().position(|l| l.contains("sockets: 3")).unwrap() + 1;
    std::fs::write(
        overlay.join("kustomization.yaml"),
        "buildMetadata: [originAnnotations]\nnamePrefix: prod-\nresources: [../../base]\n\
         transformers: [kvrender.yaml]\n",
    )
    .unwrap();
    std::fs::write(
        overlay.join("kvrender.yaml"),
        "apiVersion: kvrender.io/v1alpha1\nkind: KVRender\nmetadata:\n  name: expand\n",
    )
    .unwrap();
    let out = kustomize(&overlay);
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "../../base/vms.yaml:{line}: error[KV010] VirtualMachine/prod-db: \
             spec.template.spec.domain.cpu.sockets"
        )),
        "{stderr}"
    );
    // A finding about what a catalog document renders names its file, without a line: the
    // rendered object's fields are not the document's.
    std::fs::write(
        overlay.join("catalog.yaml"),
        "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata:\n  name: z\n\
         spec:\n  version: 1\n  scopes: [cluster]\n  labels:\n    \
         instancetype.kubevirt.io/memory: 2Gi\n  template:\n    spec:\n      \
         cpu: {guest: \"{{ size.cpu }}\"}\n      memory: {guest: \"{{ size.memory }}\"}\n  \
         sizes:\n  - [small, 1, 4Gi]\n",
    )
    .unwrap();
    std::fs::write(
        overlay.join("kustomization.yaml"),
        "buildMetadata: [originAnnotations]\nnamePrefix: prod-\n\
         resources: [../../base, catalog.yaml]\ntransformers: [kvrender.yaml]\n",
    )
    .unwrap();
    std::fs::write(
        overlay.join("kvrender.yaml"),
        "apiVersion: kvrender.io/v1alpha1\nkind: KVRender\nmetadata:\n  name: expand\n\
         strict: true\n",
    )
    .unwrap();
    let out = kustomize(&overlay);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("\tcatalog.yaml: error[KV041] VirtualMachineClusterInstancetype/"),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("../../base/vms.yaml:{line}: error[KV010]")),
        "{stderr}"
    );
}

/// The legacy plugin migrating presets reports each finding at the line of the file kustomize
/// read the object from (its origin annotation, relative to the kustomization, where kustomize
/// runs the plugin), as it does when it expands.
#[test]
fn kustomize_legacy_plugin_migrating_presets_names_their_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for file in ["presets.yaml", "win-desktop.yaml"] {
        std::fs::copy(
            root().join("testdata/krm/migrate").join(file),
            dir.join(file),
        )
        .unwrap();
    }
    std::fs::write(
        dir.join("kustomization.yaml"),
        "buildMetadata: [originAnnotations]\nresources: [presets.yaml, win-desktop.yaml]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("kvrender.yaml"),
        "apiVersion: kvrender.io/v1alpha1\nkind: KVRender\nmetadata:\n  name: m\n\
         migrate: presets\n",
    )
    .unwrap();
    let built = Command::new(tool("kubectl"))
        .arg("kustomize")
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(built.status.code(), Some(0), "{}", show(&built));
    // kustomize starts a legacy plugin by its file name, `KVRender`, in the kustomization.
    std::os::unix::fs::symlink(BIN, dir.join("KVRender")).unwrap();
    let mut cmd = Command::new(dir.join("KVRender"));
    cmd.current_dir(dir).arg("kvrender.yaml");
    let out = run_with_stdin(cmd, &built.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line_of = |file: &str, text: &str| {
        std::fs::read_to_string(dir.join(file))
            .unwrap()
            .lines()
            .position(|l| l.contains(text))
            .unwrap()
            + 1
    };
    assert!(
        stderr.contains(&format!(
            "presets.yaml:{}: info[KV014] VirtualMachineInstancePreset/lab/windows: replaced",
            // The document's first line, `apiVersion:`, three above its name.
            line_of("presets.yaml", "name: windows") - 3
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("win-desktop.yaml:2: info[KV014] VirtualMachine/lab/win-desktop"),
        "{stderr}"
    );
    assert!(!stderr.contains("-: "), "{stderr}");
}

/// kustomize hands a legacy plugin a key-sorted copy of its configuration in a temporary file
/// it deletes afterwards: a configuration problem names the file the copy was made of and the
/// line there (found through the kustomization, or the origin annotation kustomize adds with
/// `buildMetadata: [originAnnotations]`), and an inline configuration its kind and name.
#[test]
fn kustomize_legacy_plugin_config_problems_name_the_users_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let config = "apiVersion: kvrender.io/v1alpha1\nkind: KVRender\nmetadata:\n  name: expand\n\
                  expnd: replace\n";
    std::fs::write(dir.join("plugin.yaml"), config).unwrap();
    std::fs::write(
        dir.join("vm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
    )
    .unwrap();
    for (kustomization, says) in [
        (
            "resources: [vm.yaml]\ntransformers: [plugin.yaml]\n",
            "plugin.yaml:5: error[KV007] functionConfig `expnd`: unknown key",
        ),
        (
            "resources: [vm.yaml]\ntransformers: [plugin.yaml]\n\
             buildMetadata: [originAnnotations]\n",
            "plugin.yaml:5: error[KV007] functionConfig `expnd`: unknown key",
        ),
        (
            "resources: [vm.yaml]\ntransformers:\n- |\n  apiVersion: kvrender.io/v1alpha1\n  \
             kind: KVRender\n  metadata:\n    name: inline\n  expnd: replace\n",
            "<kustomize's copy of KVRender/inline>: error[KV007] functionConfig `expnd`",
        ),
    ] {
        std::fs::write(dir.join("kustomization.yaml"), kustomization).unwrap();
        let out = kustomize(dir);
        assert_ne!(out.status.code(), Some(0));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{kustomization}\n{stderr}");
        // kustomize's own line names its copy; kvrender's finding does not.
        assert!(
            !stderr
                .lines()
                .any(|l| l.contains("kust-plugin-config-") && l.contains("KV007")),
            "{stderr}"
        );
    }
}

#[test]
fn kustomize_legacy_plugin_generates_a_catalog() {
    let (tmp, dir) = package("kustomize/catalog");
    let out = kustomize(&dir);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("name: team1.medium"), "{text}");
    assert!(
        !text.contains("kvrender.io"),
        "catalog documents leaked: {text}"
    );
    assert!(!text.contains("config.kubernetes.io/path"), "{text}");
    // The same objects as `kvrender build` with the flags that say what the plugin config says
    // (`versionLabel: v1.0.0`; its `paths: [catalog/]` is under the directory built).
    let built = docs(&format!("---\n{text}"));
    let (expected, stderr, code) = build(&dir, &["--version-label", "v1.0.0"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(expected.len(), 6);
    assert_eq!(as_set(built), as_set(expected));
    let _g = settings().bind_to_scope();
    insta::assert_snapshot!(
        "krm_kustomize_catalog",
        scrub(&show(&out), Some(tmp.path()))
    );
}

// ---------------------------------------------------------------------------------------------
// One pipeline, two doors: `kvrender build` and `kvrender fn`
// ---------------------------------------------------------------------------------------------

/// The ResourceList kpt would send for a directory: every document of every YAML file, with
/// its path (relative to `dir`) and index annotations. JSON, which is YAML.
fn resource_list_of(dir: &Path, function_config: Option<Value>) -> String {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    let mut items = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(dir)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, mut doc) in docs(&text).into_iter().enumerate() {
            let annotations = doc["metadata"]
                .as_object_mut()
                .unwrap()
                .entry("annotations")
                .or_insert_with(|| json!({}));
            for key in [
                "internal.config.kubernetes.io/path",
                "config.kubernetes.io/path",
            ] {
                annotations[key] = json!(rel);
            }
            for key in [
                "internal.config.kubernetes.io/index",
                "config.kubernetes.io/index",
            ] {
                annotations[key] = json!(i.to_string());
            }
            items.push(doc);
        }
    }
    let mut list = json!({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
                          "items": items});
    if let Some(config) = function_config {
        list["functionConfig"] = config;
    }
    list.to_string()
}

/// The findings a run printed on stderr, without their location (`file[:line]: `), sorted,
/// each with the file it names relative to `dir`.
fn findings(stderr: &str, dir: &Path) -> Vec<(String, String)> {
    let re = regex::Regex::new(r"^(\S+?)(:\d+)?: ((error|warning|info)\[KV\d+\] .*)$").unwrap();
    let prefix = format!("{}/", dir.display());
    let mut out: Vec<(String, String)> = stderr
        .lines()
        .filter_map(|l| re.captures(l))
        .map(|c| {
            let file = c[1].strip_prefix(&prefix).unwrap_or(&c[1]).to_string();
            (file, c[3].to_string())
        })
        .collect();
    out.sort();
    out
}

/// A message of `build` or `validate` as a function run words it: with the configuration's
/// settings where the command names its options.
fn in_settings(message: &str) -> String {
    message
        .replace("`--no-default-catalog`", "`defaultCatalog: false`")
        .replace("`--catalog`", "`catalogs`")
}

/// Every result about an object names the object, its file (path and index) and the field.
fn assert_results_are_complete(results: &[Value]) {
    for r in results {
        assert!(r["resourceRef"]["kind"].is_string(), "{r}");
        assert!(r["file"]["path"].is_string(), "no file.path: {r}");
        assert!(r["file"]["index"].is_u64(), "no file.index: {r}");
        assert!(r["field"]["path"].is_string(), "no field.path: {r}");
        assert!(r["tags"]["code"].is_string(), "{r}");
    }
}

#[test]
fn build_and_fn_give_the_same_objects_and_findings() {
    let dir = testdata("parity/clean");
    let (built, built_stderr, code) = build(&dir, &[]);
    assert_eq!(code, 0, "{built_stderr}");
    let (code, out, _, fn_stderr) = krm(&resource_list_of(&dir, None));
    assert_eq!(code, 0, "{fn_stderr}");
    // The same objects: the rendered catalog, the expanded VMs, the rest passed through. The
    // function also keeps the catalog documents, marked local (kpt would delete their files).
    let items: Vec<Value> = out["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| {
            i["metadata"]["annotations"]["config.kubernetes.io/local-config"] != json!("true")
        })
        .cloned()
        .collect();
    assert_eq!(built.len(), 10, "{built:#?}");
    assert_eq!(as_set(items), as_set(built.clone()));
    let app = built
        .iter()
        .find(|v| v["metadata"]["name"] == "app")
        .unwrap();
    assert_eq!(
        app["spec"]["template"]["spec"]["domain"]["memory"]["guest"],
        "4Gi"
    );
    // The same findings (warnings here: the pipeline goes on), the same words.
    let from_build = findings(&built_stderr, &dir);
    assert_eq!(from_build.len(), 2, "{built_stderr}");
    assert_eq!(findings(&fn_stderr, &dir), from_build);
    let results = out["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_results_are_complete(results);
}

#[test]
fn build_and_fn_fail_the_same_way() {
    let dir = testdata("parity/failing");
    let (built, built_stderr, code) = build(&dir, &[]);
    assert_eq!(code, 1);
    assert!(built.is_empty(), "build prints nothing half-done");
    let input = resource_list_of(&dir, None);
    let (code, out, _, fn_stderr) = krm(&input);
    assert_eq!(code, 1);
    let from_build = findings(&built_stderr, &dir);
    let codes: Vec<&str> = from_build
        .iter()
        .map(|(_, f)| &f[f.find('[').unwrap() + 1..f.find(']').unwrap()])
        .collect();
    assert_eq!(
        codes,
        // The six VMs set no run strategy (`KV034`, a warning).
        [
            "KV030", "KV003", "KV010", "KV011", "KV012", "KV013", "KV034", "KV034", "KV034",
            "KV034", "KV034", "KV034"
        ],
        "{built_stderr}"
    );
    let as_a_function: Vec<(String, String)> = from_build
        .iter()
        .map(|(file, finding)| (file.clone(), in_settings(finding)))
        .collect();
    assert_eq!(findings(&fn_stderr, &dir), as_a_function);
    let results = out["results"].as_array().unwrap();
    assert_eq!(results.len(), from_build.len());
    assert_results_are_complete(results);
    // The function still writes the list: the VMs it could not expand as they were, the one
    // it could expanded.
    let before: Value = serde_json::from_str(&input).unwrap();
    let items = out["items"].as_array().unwrap();
    for (old, new) in before["items"].as_array().unwrap().iter().zip(items) {
        if old["metadata"]["name"] == "fine" {
            assert!(new["spec"].get("instancetype").is_none(), "{new}");
        } else {
            assert_eq!(old, new);
        }
    }
}

/// `kvrender validate --format json` on `dir`: (severity, code, object, field, message) tuples,
/// one per field.
fn validate_findings(dir: &Path) -> Vec<(String, String, String, String, String)> {
    let out = Command::new(BIN)
        .args(["validate", "--format", "json"])
        .arg(dir)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut all = Vec::new();
    for f in report["findings"].as_array().unwrap() {
        let object = format!(
            "{}/{}/{}",
            f["object"]["kind"].as_str().unwrap_or(""),
            f["object"]["namespace"].as_str().unwrap_or(""),
            f["object"]["name"].as_str().unwrap_or("")
        );
        for field in f["field"].as_str().unwrap_or("").split(", ") {
            all.push((
                f["severity"].as_str().unwrap().to_string(),
                f["code"].as_str().unwrap().to_string(),
                object.clone(),
                field.to_string(),
                f["message"].as_str().unwrap().to_string(),
            ));
        }
    }
    all.sort();
    all
}

#[test]
fn validate_mode_reports_what_kvrender_validate_reports() {
    for dir in [testdata("parity/failing"), testdata("conflict")] {
        let config = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"},
                            "data": {"expand": "validate", "render": "false"}});
        let input = resource_list_of(&dir, Some(config));
        let (code, out, _, stderr) = krm(&input);
        assert_eq!(code, 1, "{stderr}");
        // Nothing changed: validate keeps the VMs.
        let before: Value = serde_json::from_str(&input).unwrap();
        assert_eq!(out["items"], before["items"]);
        let results = out["results"].as_array().unwrap();
        assert_results_are_complete(results);
        let mut from_fn: Vec<_> = results
            .iter()
            .map(|r| {
                let o = &r["resourceRef"];
                (
                    r["severity"].as_str().unwrap().to_string(),
                    r["tags"]["code"].as_str().unwrap().to_string(),
                    format!(
                        "{}/{}/{}",
                        o["kind"].as_str().unwrap(),
                        o["namespace"].as_str().unwrap_or(""),
                        o["name"].as_str().unwrap()
                    ),
                    r["field"]["path"].as_str().unwrap().to_string(),
                    r["message"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        from_fn.sort();
        let mut expected = validate_findings(&dir);
        for finding in &mut expected {
            finding.4 = in_settings(&finding.4);
        }
        expected.sort();
        assert!(!expected.is_empty());
        assert_eq!(from_fn, expected);
    }
}

// ---------------------------------------------------------------------------------------------
// Started with no arguments
// ---------------------------------------------------------------------------------------------

#[test]
fn no_arguments_on_a_terminal_prints_the_help() {
    // `script` gives the child a terminal as stdin, as an interactive shell does.
    let out = Command::new(tool("script"))
        .args(["-qec", BIN, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let plain = regex::Regex::new(r"\x1b\[[0-9;]*m")
        .unwrap()
        .replace_all(&text, "");
    assert!(
        plain.contains("Usage: kvrender [OPTIONS] <COMMAND>"),
        "{plain}"
    );
    assert!(plain.contains("build "), "{plain}");
    assert_eq!(out.status.code(), Some(2), "{plain}");
}

#[test]
fn no_arguments_and_empty_stdin_prints_the_usage() {
    // A CI step with stdin closed or /dev/null: no ResourceList, no hang, the usage.
    for stdin in [Stdio::null(), Stdio::piped()] {
        let mut child = Command::new(BIN)
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdin.take());
        let status = wait_at_most(&mut child, 30, "kvrender");
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(status.code(), Some(2), "{stderr}");
        assert!(out.stdout.is_empty());
        assert!(
            stderr.starts_with("kvrender: no command given and nothing on stdin"),
            "{stderr}"
        );
        assert!(stderr.contains("Usage: kvrender [OPTIONS] <COMMAND>"));
    }
    // `kvrender fn` asked for a function on purpose: an empty input is an error result.
    let out = Command::new(BIN)
        .arg("fn")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("the input is empty"));
}

#[test]
fn no_arguments_and_silent_stdin_says_what_it_waits_for() {
    let mut child = Command::new(BIN)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufRead::read_line(&mut stderr, &mut line);
        let _ = tx.send((line, stderr));
    });
    let (line, mut rest) = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("no word on stderr while waiting for stdin");
    assert!(
        line.starts_with("kvrender: waiting for a ResourceList on stdin"),
        "{line}"
    );
    // The input still counts when it comes late.
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(list("config.kubernetes.io/v1", VM_AND_SIZE, "").as_bytes())
        .unwrap();
    drop(stdin);
    let status = wait_at_most(&mut child, 30, "kvrender");
    let mut errors = String::new();
    std::io::Read::read_to_string(&mut rest, &mut errors).unwrap();
    assert_eq!(status.code(), Some(1), "{errors}");
    assert!(errors.contains("error[KV010]"), "{errors}");
}

#[test]
fn kubectl_kustomize_skips_exec_functions_as_documented() {
    // The README tells kubectl users to use the legacy plugin: kubectl's kustomize has no
    // --enable-exec and leaves an exec KRM function out silently. Should that change, so
    // should the docs.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("transformer");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/krm/kustomize-fn/transformer"),
        &dir,
    );
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = std::env::join_paths(std::iter::once(bin_dir.to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let out = Command::new(tool("kubectl"))
        .args(["kustomize", "--enable-alpha-plugins"])
        .arg(&dir)
        .env("PATH", path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("instancetype:"),
        "expanded after all:\n{text}"
    );
}

/// A `catalogs` path that cannot be read is the finding; the names it may have defined are not
/// also reported as not found.
#[test]
fn an_unreadable_catalog_path_hides_the_names_it_may_define() {
    let vm = r#"
- apiVersion: kubevirt.io/v1
  kind: VirtualMachine
  metadata: {name: vm}
  spec:
    runStrategy: Halted
    instancetype: {name: team.small}
    template: {spec: {domain: {devices: {}}}}
"#;
    let config = "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: x}\n  \
                  data: {catalogs: /nonexistent/kvrender-catalog}\n";
    let (code, out, _, stderr) = krm(&list("config.kubernetes.io/v1", vm, config));
    assert_eq!(code, 1, "{stderr}");
    let messages: Vec<&str> = out["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["message"].as_str())
        .collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].contains("/nonexistent/kvrender-catalog"),
        "{messages:?}"
    );
    assert!(!stderr.contains("KV011"), "{stderr}");
}

/// The function's own configuration sits in the package beside what it works on: the other
/// commands (and so the pre-commit hook) pass over it as `build` does, instead of reading it
/// as a catalog document of an unknown kind.
#[test]
fn every_command_passes_over_the_function_config_in_a_package() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for package in ["examples/krm/kpt", "examples/krm/kustomize-plugin/vms"] {
        for command in ["validate", "expand", "vmi", "diff", "build"] {
            let out = Command::new(BIN)
                .current_dir(root)
                .args([command, package])
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(0),
                "`kvrender {command} {package}`: {stderr}"
            );
            // `build` says once that it does not read the configuration (and which options do
            // what it says); the others pass over it without a word.
            let said = stderr.lines().filter(|l| l.contains("KVRender")).count();
            let note = stderr
                .lines()
                .all(|l| l.starts_with("note: ") && l.contains("`build` does not read it"));
            assert!(
                if command == "build" && package == "examples/krm/kpt" {
                    said == 1 && note
                } else {
                    said == 0
                },
                "{command} {package}: {stderr}"
            );
        }
        // And the configuration itself is not printed as an object.
        let out = Command::new(BIN)
            .current_dir(root)
            .args(["expand", package])
            .output()
            .unwrap();
        assert!(!String::from_utf8_lossy(&out.stdout).contains("kind: KVRender"));
    }
}

/// kustomize passes a legacy plugin config's `argsOneLiner` after the config file; a wrapper
/// script that hands every argument to `kvrender fn` must still work, as the link does.
#[test]
fn kustomize_legacy_plugin_script_ignores_args_one_liner() {
    use std::os::unix::fs::PermissionsExt;
    let (_tmp, dir) = package("kustomize/vms");
    let config = dir.join("kvrender.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{text}argsOneLiner: one --two\n")).unwrap();

    let home = tempfile::tempdir().unwrap();
    let plugin = home.path().join("kvrender.io/v1alpha1/kvrender");
    std::fs::create_dir_all(&plugin).unwrap();
    let script = plugin.join("KVRender");
    std::fs::write(&script, format!("#!/bin/sh\nexec '{BIN}' fn \"$@\"\n")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(tool("kubectl"))
        .args(["kustomize", "--enable-alpha-plugins"])
        .arg(&dir)
        .env("KUSTOMIZE_PLUGIN_HOME", home.path())
        .env("TMPDIR", home.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let linked = kustomize(&dir);
    assert_eq!(linked.status.code(), Some(0), "{}", show(&linked));
    assert_eq!(out.stdout, linked.stdout);
}

/// A ResourceList that is not text is reported as such, with where it stops being text.
#[test]
fn a_resource_list_that_is_not_utf8_says_so() {
    let mut cmd = Command::new(BIN);
    cmd.arg("fn");
    let out = run_with_stdin(
        cmd,
        b"apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- metadata: {name: \"\xff\"}\n",
    );
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.contains("stdin is not valid UTF-8 (invalid byte at offset 82)"),
        "{stdout}"
    );
    assert!(stdout.contains("code: KV001"), "{stdout}");
}

/// A copy of the example kpt package under `dir`, its pipeline running the binary under test.
fn example_kpt_package(dir: &Path, name: &str) -> PathBuf {
    let pkg = dir.join(name);
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/krm/kpt"),
        &pkg,
    );
    run_binary_under_test(&pkg);
    pkg
}

/// After `kpt fn render` wrote the rendered catalog into a package, `build` and `validate` on
/// the package (its directory, or changed files as a pre-commit hook passes them) read those
/// files as that render's output, not as second definitions: the same objects as a fresh
/// package. A hand-written copy elsewhere is still a second definition.
#[test]
fn build_and_validate_read_a_kpt_rendered_package_as_its_output() {
    let tmp = tempfile::tempdir().unwrap();
    let fresh = example_kpt_package(tmp.path(), "fresh");
    let pkg = example_kpt_package(tmp.path(), "pkg");
    let out = kpt_render(&pkg);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(pkg.join("instancetypes/team1.small.yaml").is_file());

    let (expected, stderr, code) = build(&fresh, &[]);
    assert_eq!(code, 0, "{stderr}");
    let (built, stderr, code) = build(&pkg, &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(built, expected);

    let validate = |dir: &Path, args: &[&str]| {
        Command::new(BIN)
            .current_dir(dir)
            .arg("validate")
            .args(args)
            .output()
            .unwrap()
    };
    let out = validate(&pkg, &["."]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let out = validate(&pkg, &["catalog.yaml", "instancetypes/team1.small.yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));

    // The same object written by hand in another file is a second definition.
    std::fs::copy(
        pkg.join("instancetypes/team1.small.yaml"),
        pkg.join("mine.yaml"),
    )
    .unwrap();
    let out = validate(&pkg, &["."]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("KV020"),
        "{}",
        show(&out)
    );
    let (_, stderr, code) = build(&pkg, &[]);
    assert_eq!(code, 1);
    assert!(stderr.contains("KV020"), "{stderr}");
}

/// The commands that read a kpt-rendered package from disk: `expand` resolves against the
/// catalog rendered now and does not call the rendered files second definitions; the files of
/// a size since removed from the catalog get a `KV043` warning from `expand`, `validate` and
/// `build`, which read them as they are (only the function's `prune` deletes them).
#[test]
fn commands_read_a_kpt_rendered_package_and_point_out_stale_files() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = example_kpt_package(tmp.path(), "pkg");
    let out = kpt_render(&pkg);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let run = |args: &[&str]| {
        Command::new(BIN)
            .current_dir(&pkg)
            .args(args)
            .arg(".")
            .output()
            .unwrap()
    };
    let out = run(&["expand"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(out.stderr.is_empty(), "{}", show(&out));

    let catalog = pkg.join("catalog.yaml");
    let text = std::fs::read_to_string(&catalog).unwrap();
    assert!(text.contains("  - [medium, 2, 4Gi]\n"));
    std::fs::write(&catalog, text.replace("  - [medium, 2, 4Gi]\n", "")).unwrap();
    for args in [&["expand"][..], &["validate"], &["build"]] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", show(&out));
        let text = show(&out);
        for file in [
            "instancetypes/team1.medium.yaml",
            "cluster-instancetypes/team1.medium.yaml",
        ] {
            let line = format!("./{file}:1: warning[KV043] ");
            assert!(
                text.lines().any(|l| l.starts_with(&line)
                    && l.contains(&format!("an earlier package render wrote `{file}`"))),
                "{args:?}: no {line}… in\n{text}"
            );
        }
        assert_eq!(text.matches("[KV").count(), 2, "{args:?}: {text}");
    }
    // `--strict` makes them errors, for a CI step that wants the package tidy.
    let out = run(&["validate", "--strict"]);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
}

/// `kpt fn render` hands a package's pipeline its subpackages' items as well, with paths
/// relative to their own package: a subpackage's file in the rendered layout is that
/// subpackage's business, never pruned by the parent's step. The parent's own stale file is.
#[test]
fn kpt_render_prunes_only_the_files_of_its_own_package() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = example_kpt_package(tmp.path(), "pkg");
    let orphan = "apiVersion: instancetype.kubevirt.io/v1beta1\n\
                  kind: VirtualMachineClusterInstancetype\nmetadata:\n  name: orphan\n\
                  spec:\n  cpu:\n    guest: 1\n  memory:\n    guest: 1Gi\n";
    std::fs::create_dir_all(pkg.join("sub/cluster-instancetypes")).unwrap();
    write_subpackage_kptfile(&pkg.join("sub"), "sub");
    std::fs::write(pkg.join("sub/cluster-instancetypes/orphan.yaml"), orphan).unwrap();
    std::fs::create_dir_all(pkg.join("cluster-instancetypes")).unwrap();
    std::fs::write(pkg.join("cluster-instancetypes/orphan.yaml"), orphan).unwrap();
    let out = kpt_render(&pkg);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        pkg.join("sub/cluster-instancetypes/orphan.yaml").is_file(),
        "the subpackage's file was pruned:\n{}",
        show(&out)
    );
    assert!(
        !pkg.join("cluster-instancetypes/orphan.yaml").exists(),
        "the package's own stale file was kept:\n{}",
        show(&out)
    );
    assert_eq!(show(&out).matches("KV043").count(), 1, "{}", show(&out));
    assert!(pkg.join("cluster-instancetypes/team1.small.yaml").is_file());
}

/// A subpackage's catalog renders into the subpackage, whether the parent's pipeline runs it
/// (`kpt fn render`, where each item carries its package) or `kpt fn eval` runs on the parent
/// (where a subpackage's paths sit under its `Kptfile`'s directory); running again, in either
/// way, changes nothing.
#[test]
fn kpt_renders_a_subpackages_catalog_into_the_subpackage() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = example_kpt_package(tmp.path(), "pkg");
    // `sub`, and `sub/inner` inside it, each a package with a family. Each catalog file has
    // the same name as the parent's, as kpt fn render gives them all the path `catalog.yaml`.
    for (dir, family) in [("sub", "sub"), ("sub/inner", "inner")] {
        std::fs::create_dir_all(pkg.join(dir)).unwrap();
        std::fs::write(
            pkg.join(dir).join("Kptfile"),
            format!(
                "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {family}\n  \
                 annotations:\n    config.kubernetes.io/local-config: \"true\"\n"
            ),
        )
        .unwrap();
        std::fs::write(
            pkg.join(dir).join("catalog.yaml"),
            format!(
                "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata:\n  \
                 name: {family}\nspec:\n  version: 1\n  scopes: [cluster]\n  template:\n    \
                 spec:\n      cpu: {{guest: \"{{{{ size.cpu }}}}\"}}\n      \
                 memory: {{guest: \"{{{{ size.memory }}}}\"}}\n  sizes:\n  - [small, 1, 2Gi]\n"
            ),
        )
        .unwrap();
    }
    let render = || kpt_render(&pkg);
    let eval = || {
        kpt_eval(
            &pkg,
            &["--fn-config", pkg.join("kvrender.yaml").to_str().unwrap()],
        )
    };
    let out = render();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(
        pkg.join("sub/cluster-instancetypes/sub1.small.yaml")
            .is_file(),
        "{}",
        dump(&pkg)
    );
    assert!(
        pkg.join("sub/inner/cluster-instancetypes/inner1.small.yaml")
            .is_file(),
        "{}",
        dump(&pkg)
    );
    assert!(!pkg.join("cluster-instancetypes/sub1.small.yaml").exists());
    assert!(
        !pkg.join("sub/cluster-instancetypes/inner1.small.yaml")
            .exists()
    );
    assert!(pkg.join("cluster-instancetypes/team1.small.yaml").is_file());
    let rendered = dump(&pkg);
    each_changes_nothing(&pkg, &[&render, &eval, &render]);

    // `kpt fn eval` on the parent of a package never rendered.
    std::fs::remove_dir_all(pkg.join("sub/cluster-instancetypes")).unwrap();
    std::fs::remove_dir_all(pkg.join("sub/inner/cluster-instancetypes")).unwrap();
    let out = eval();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(dump(&pkg), rendered, "{}", show(&out));
}

/// A package whose catalog renders into namespace `shop` and whose subpackage is the directory
/// `shop/`: the rendered instancetype would go to `shop/instancetypes/…`, inside the subpackage.
/// It is written at the top of its own package instead, and rendering again, in either way,
/// changes nothing (real kpt). An earlier output in the subpackage is moved out of it.
#[test]
fn kpt_render_writes_nothing_into_a_subpackage_named_after_a_namespace() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("pkg");
    std::fs::create_dir_all(pkg.join("shop")).unwrap();
    std::fs::write(
        pkg.join("Kptfile"),
        format!(
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n  annotations:\n    \
             config.kubernetes.io/local-config: \"true\"\npipeline:\n  mutators:\n  \
             - exec: {BIN} fn\n"
        ),
    )
    .unwrap();
    write_subpackage_kptfile(&pkg.join("shop"), "shop");
    std::fs::write(
        pkg.join("catalog.yaml"),
        "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata:\n  name: team\n  \
         namespace: shop\nspec:\n  version: 1\n  scopes: [namespaced, cluster]\n  template:\n    \
         spec:\n      cpu: {guest: \"{{ size.cpu }}\"}\n      \
         memory: {guest: \"{{ size.memory }}\"}\n  sizes:\n  - [small, 1, 2Gi]\n",
    )
    .unwrap();
    let render = || kpt_render(&pkg);
    let eval = || kpt_eval(&pkg, &["--exec", &format!("{BIN} fn")]);
    // What the subpackage holds: its Kptfile, and nothing the parent rendered.
    let subpackage_files = || {
        walkdir::WalkDir::new(pkg.join("shop"))
            .into_iter()
            .map(|e| e.unwrap().into_path())
            .filter(|p| p.is_file())
            .collect::<Vec<_>>()
    };
    let out = render();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(
        subpackage_files(),
        [pkg.join("shop/Kptfile")],
        "{}",
        dump(&pkg)
    );
    let top = pkg.join("shop_instancetypes_team1.small.yaml");
    let written = std::fs::read_to_string(&top).unwrap_or_else(|_| dump(&pkg));
    assert!(
        written.contains("kind: VirtualMachineInstancetype\n")
            && written.contains("  name: team1.small\n")
            && written.contains("  namespace: shop\n"),
        "{written}"
    );
    assert!(pkg.join("cluster-instancetypes/team1.small.yaml").is_file());
    let rendered = dump(&pkg);
    each_changes_nothing(&pkg, &[&render, &eval, &render]);
    // The commands that read the package from disk take the file for the render's output.
    let out = Command::new(BIN)
        .current_dir(&pkg)
        .args(["validate", "."])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));

    // An earlier render that wrote into the subpackage: its file there is that render's
    // output, moved back into the package, and an info result says so.
    for run in [&render as &dyn Fn() -> Output, &eval] {
        std::fs::create_dir_all(pkg.join("shop/instancetypes")).unwrap();
        std::fs::rename(&top, pkg.join("shop/instancetypes/team1.small.yaml")).unwrap();
        let out = run();
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
        assert!(
            show(&out).contains(
                "moved `shop/instancetypes/team1.small.yaml` to \
                 `shop_instancetypes_team1.small.yaml`"
            ),
            "{}",
            show(&out)
        );
        std::fs::remove_dir(pkg.join("shop/instancetypes")).ok();
        assert_eq!(dump(&pkg), rendered, "{}", show(&out));
    }
}

/// A later step (a namespace setter, or a hand edit) gave a rendered file's object another
/// namespace: the next render replaces it in its file instead of adding a second object at
/// the same path and index, which kpt refuses, and keeps that namespace, which its catalog
/// document does not name (the package is applied with it).
#[test]
fn kpt_render_replaces_its_output_whose_namespace_was_changed() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = example_kpt_package(tmp.path(), "pkg");
    let render = || kpt_render(&pkg);
    let out = render();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let file = pkg.join("instancetypes/team1.small.yaml");
    let first = std::fs::read_to_string(&file).unwrap();
    let moved = first.replace(
        "  name: team1.small\n",
        "  name: team1.small\n  namespace: prod\n",
    );
    assert_ne!(moved, first);
    std::fs::write(&file, &moved).unwrap();
    let out = render();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), moved);
    assert!(!pkg.join("prod").exists());
}

/// kvrender renders the catalog, and a later step (a namespace setter such as kpt's
/// `set-namespace`) puts the package's objects in `prod`: the next render keeps that namespace
/// on the rendered instancetype, which its catalog document does not name, so the VM moved to
/// `prod` with it still finds it, with no finding, in the mutator's step and in a strict check
/// run after the setter.
#[test]
fn kpt_render_keeps_the_namespace_a_setter_gave_the_rendered_objects() {
    let catalog = "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nmetadata: {name: team-parts}\n\
                   parts:\n  sized:\n    spec:\n      cpu: {guest: \"{{ size.cpu }}\"}\n      \
                   memory: {guest: \"{{ size.memory }}\"}\n---\n\
                   apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\n\
                   metadata: {name: team}\nspec:\n  version: 1\n  parts: [sized]\n  sizes:\n  \
                   - [medium, 2, 4Gi]\n";
    let vm = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: app\nspec:\n  \
              runStrategy: Always\n  instancetype:\n    kind: VirtualMachineInstancetype\n    \
              name: team1.medium\n  template:\n    spec:\n      domain:\n        devices: {}\n";
    let (_tmp, pkg) = package_of(&[("catalog.yaml", catalog), ("vm.yaml", vm)]);
    std::fs::write(
        pkg.join("Kptfile"),
        format!("{KPTFILE}pipeline:\n  mutators:\n  - exec: {BIN} fn\n    configMap:\n      expand: validate\n"),
    )
    .unwrap();
    let out = kpt_render(&pkg);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    // What the setter does to the two objects.
    let instancetype = pkg.join("instancetypes/team1.medium.yaml");
    for (file, name) in [
        (&instancetype, "team1.medium"),
        (&pkg.join("vm.yaml"), "app"),
    ] {
        let text = std::fs::read_to_string(file).unwrap();
        let moved = text.replacen(
            &format!("  name: {name}\n"),
            &format!("  name: {name}\n  namespace: prod\n"),
            1,
        );
        assert_ne!(moved, text);
        std::fs::write(file, moved).unwrap();
    }
    let set = std::fs::read_to_string(&instancetype).unwrap();
    for run in 1..=2 {
        let out = kpt_render(&pkg);
        let shown = show(&out);
        assert_eq!(out.status.code(), Some(0), "run {run}: {shown}");
        assert!(!shown.contains("KV011"), "run {run}: {shown}");
        assert_eq!(
            std::fs::read_to_string(&instancetype).unwrap(),
            set,
            "run {run}"
        );
    }
    let out = kpt_eval(&pkg, &["--", "expand=validate", "strict=true"]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(!show(&out).contains("KV011"), "{}", show(&out));
}

/// kustomize's `namePrefix` renames an instancetype and a preference, and its
/// `secretGenerator` adds a hash to a Secret's name, but neither renames the names a VM refers
/// to them by unless a `configurations:` file declares those references:
/// `examples/kustomize-names/` ships one. With it, the real `kubectl kustomize` output passes
/// `validate` and expands; without it, each reference to an instancetype or preference is a
/// `KV011` and the one to the Secret a `KV015`, each naming the renamed object and the README
/// section.
#[test]
fn a_name_prefix_renames_references_only_with_the_shipped_configuration() {
    let example = root().join("examples/kustomize-names");
    let build = |dir: &Path| {
        let out = Command::new(tool("kubectl"))
            .arg("kustomize")
            .arg(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", show(&out));
        out.stdout
    };
    let kvrender_on = |args: &[&str], stdin: Vec<u8>| {
        let mut cmd = Command::new(BIN);
        cmd.args(args);
        run_with_stdin(cmd, stdin)
    };

    let built = build(&example.join("overlays/prod"));
    let text = String::from_utf8_lossy(&built);
    assert!(
        text.contains("name: prod-app-medium\n  preference:\n    kind: VirtualMachinePreference\n    name: prod-app-linux"),
        "{text}"
    );
    let secret = text
        .lines()
        .find_map(|l| l.strip_prefix("  name: prod-app-userdata-"))
        .unwrap_or_else(|| panic!("no generated Secret:\n{text}"));
    assert!(
        text.contains(&format!(
            "secretRef:\n            name: prod-app-userdata-{secret}\n"
        )),
        "{text}"
    );
    let out = kvrender_on(&["validate", "-"], built.clone());
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "No problems found in 4 objects.\n"
    );
    let out = kvrender_on(&["expand", "-"], built);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let vm = String::from_utf8_lossy(&out.stdout);
    assert!(
        vm.contains("name: prod-app\n")
            && vm.contains("guest: 4Gi")
            && !vm.contains("instancetype:"),
        "{vm}"
    );
    // Walked as a tree, the configuration file is kustomize's input, not a manifest.
    let out = Command::new(BIN)
        .arg("validate")
        .arg(&example)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));

    // The same overlay without the configuration.
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&example, tmp.path());
    let overlay = tmp.path().join("overlays/prod");
    let base = tmp.path().join("base/kustomization.yaml");
    let kustomization = std::fs::read_to_string(&base).unwrap();
    let without = kustomization.replace("configurations:\n- kubevirt-references.yaml\n", "");
    assert_ne!(without, kustomization);
    std::fs::write(&base, without).unwrap();
    // Warnings: KubeVirt admits a VM whose instancetype is missing (`--strict` would fail).
    let out = kvrender_on(&["validate", "-"], build(&overlay));
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    for (side, kind, renamed) in [
        (
            "instancetype",
            "VirtualMachineInstancetype",
            "prod-app-medium",
        ),
        ("preference", "VirtualMachinePreference", "prod-app-linux"),
    ] {
        let line = report
            .lines()
            .find(|l| l.contains("warning[KV011]") && l.contains(&format!("spec.{side}:")))
            .unwrap_or_else(|| panic!("no KV011 for the {side}:\n{report}"));
        assert!(
            line.contains(&format!(
                "a {kind} named \"{renamed}\" exists: if kustomize's `namePrefix` or `nameSuffix` renamed it"
            )) && line.contains("\"Name prefixes and suffixes\" in kvrender's README"),
            "{line}"
        );
    }
    let line = report
        .lines()
        .find(|l| l.contains("warning[KV015]"))
        .unwrap_or_else(|| panic!("no KV015 for the Secret:\n{report}"));
    assert!(
        line.contains(
            "spec.template.spec.volumes[1].cloudInitNoCloud.secretRef.name: Secret \"app-userdata\" \
             is not among the inputs, but Secret \"prod-app-userdata-"
        ) && line.contains("\"Name prefixes and suffixes\" in kvrender's README"),
        "{line}"
    );
}

/// A copy of `examples/kustomize-names` whose base also lists `name`, written with `text`: the
/// temporary directory, the base's kustomization and its text with `name` listed.
fn kustomize_names_with(name: &str, text: &str) -> (tempfile::TempDir, PathBuf, String) {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&root().join("examples/kustomize-names"), tmp.path());
    let base = tmp.path().join("base");
    std::fs::write(base.join(name), text).unwrap();
    let kustomization = base.join("kustomization.yaml");
    let before = std::fs::read_to_string(&kustomization).unwrap();
    let listed = before.replace("- app.yaml\n", &format!("- app.yaml\n- {name}\n"));
    assert_ne!(listed, before);
    std::fs::write(&kustomization, &listed).unwrap();
    (tmp, kustomization, listed)
}

/// `kubectl kustomize` of the prod overlay of a copy of `examples/kustomize-names` at `root`.
fn build_prod(root: &Path) -> Vec<u8> {
    let out = Command::new(tool("kubectl"))
        .arg("kustomize")
        .arg(root.join("overlays/prod"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", show(&out));
    out.stdout
}

/// Write the copy's base `kustomization` as `listed` without the shipped `configurations:`.
fn drop_configuration(kustomization: &Path, listed: &str) {
    let without = listed.replace("configurations:\n- kubevirt-references.yaml\n", "");
    assert_ne!(without, listed);
    std::fs::write(kustomization, without).unwrap();
}

/// `validate` found nothing in `objects` objects.
fn assert_clean(out: &std::process::Output, objects: usize) {
    assert_eq!(out.status.code(), Some(0), "{}", show(out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("No problems found in {objects} objects.\n")
    );
}

/// `kvrender validate -` of a build's output.
fn validate_built(built: Vec<u8>) -> std::process::Output {
    let mut cmd = Command::new(BIN);
    cmd.args(["validate", "-"]);
    run_with_stdin(cmd, built)
}

/// The shipped `configurations:` file renames the references of a VirtualMachinePool's VM
/// template too (real kubectl): with it, `validate` of the build finds nothing; without it,
/// the pool's VMs name an instancetype and a Secret the build renamed.
#[test]
fn the_shipped_configuration_renames_a_pools_references_too() {
    let (tmp, kustomization, with_pool) = kustomize_names_with(
        "pool.yaml",
        "\
apiVersion: pool.kubevirt.io/v1beta1
kind: VirtualMachinePool
metadata:
  name: workers
spec:
  replicas: 2
  selector:
    matchLabels: {app: workers}
  virtualMachineTemplate:
    metadata:
      labels: {app: workers}
    spec:
      runStrategy: Always
      instancetype:
        kind: VirtualMachineInstancetype
        name: app-medium
      template:
        spec:
          domain:
            devices: {}
          volumes:
          - name: cloudinit
            cloudInitNoCloud:
              secretRef:
                name: app-userdata
",
    );
    let build = || build_prod(tmp.path());
    let built = build();
    let text = String::from_utf8_lossy(&built).into_owned();
    assert!(text.contains("name: prod-workers\n"), "{text}");
    assert!(
        text.contains("kind: VirtualMachineInstancetype\n        name: prod-app-medium\n"),
        "{text}"
    );
    assert!(
        text.contains("secretRef:\n                name: prod-app-userdata-"),
        "{text}"
    );
    assert_clean(&validate_built(built), 5);

    // Without the configuration, the pool keeps the old names.
    drop_configuration(&kustomization, &with_pool);
    let out = validate_built(build());
    let report = String::from_utf8_lossy(&out.stdout);
    let pool_lines: Vec<&str> = report
        .lines()
        .filter(|l| l.contains("VirtualMachinePool/prod/prod-workers"))
        .collect();
    assert!(
        pool_lines.iter().any(|l| l.contains("warning[KV011]")
            && l.contains("a VirtualMachineInstancetype named \"prod-app-medium\" exists")),
        "{report}"
    );
    assert!(
        pool_lines.iter().any(|l| l.contains("warning[KV015]")
            && l.contains("spec.virtualMachineTemplate.spec.template.spec.volumes[0].cloudInitNoCloud.secretRef.name")),
        "{report}"
    );
}

/// The shipped configuration renames the references of a VirtualMachineInstanceReplicaSet's
/// template and of a VirtualMachineInstance too (real `kubectl kustomize`); without it,
/// `validate` reports the old names, on the replica set at the template's field.
#[test]
fn the_shipped_configuration_renames_a_replica_sets_references_too() {
    let (tmp, kustomization, with_set) = kustomize_names_with(
        "replica-set.yaml",
        "\
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstanceReplicaSet
metadata:
  name: caches
spec:
  replicas: 2
  selector:
    matchLabels: {app: caches}
  template:
    metadata:
      labels: {app: caches}
    spec:
      domain:
        devices: {}
        memory: {guest: 1Gi}
      volumes:
      - name: cloudinit
        cloudInitNoCloud:
          secretRef:
            name: app-userdata
---
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata:
  name: scratch
spec:
  domain:
    devices: {}
    memory: {guest: 1Gi}
  volumes:
  - name: cloudinit
    cloudInitNoCloud:
      secretRef:
        name: app-userdata
",
    );
    let build = || build_prod(tmp.path());
    let built = build();
    let text = String::from_utf8_lossy(&built).into_owned();
    assert!(text.contains("name: prod-caches\n"), "{text}");
    assert!(
        text.contains("secretRef:\n            name: prod-app-userdata-"),
        "{text}"
    );
    assert!(
        text.contains("secretRef:\n        name: prod-app-userdata-"),
        "{text}"
    );
    assert_clean(&validate_built(built), 6);

    // Without the configuration, the replica set and the VMI keep the old name.
    drop_configuration(&kustomization, &with_set);
    let out = validate_built(build());
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.lines().any(|l| l
            .contains("warning[KV015] VirtualMachineInstanceReplicaSet/prod/prod-caches")
            && l.contains("spec.template.spec.volumes[0].cloudInitNoCloud.secretRef.name")),
        "{report}"
    );
    assert!(
        report.lines().any(|l| l
            .contains("warning[KV015] VirtualMachineInstance/prod/prod-scratch")
            && l.contains("spec.volumes[0].cloudInitNoCloud.secretRef.name")),
        "{report}"
    );
}

/// kvrender as the transformer of an overlay that renames (real kubectl): kustomize hands it
/// the objects renamed and the VM's references not yet, since it renames references only at
/// the end of the whole build. kvrender finds each referenced object by the name kustomize
/// recorded as its previous one, so the VM expands against the overlay's own instancetype and
/// preference, its Secret counts as found, and kustomize then renames the Secret's reference.
/// The same holds for a transformer in an overlay of that overlay.
#[test]
fn kustomize_transformer_finds_objects_an_overlay_renamed() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&root().join("examples/kustomize-names"), tmp.path());
    let config = "apiVersion: kvrender.io/v1alpha1\nkind: KVRender\nmetadata:\n  name: expand\n\
                  expand: replace\n";
    // The prod overlay with kvrender as its transformer, and an overlay of the prod overlay as
    // shipped (no transformer) that renames again and has kvrender as its own.
    let prod = tmp.path().join("overlays/prod-expanded");
    std::fs::create_dir_all(&prod).unwrap();
    std::fs::write(prod.join("kvrender.yaml"), config).unwrap();
    let text =
        std::fs::read_to_string(tmp.path().join("overlays/prod/kustomization.yaml")).unwrap();
    std::fs::write(
        prod.join("kustomization.yaml"),
        format!("{text}transformers: [kvrender.yaml]\n"),
    )
    .unwrap();
    let outer = tmp.path().join("overlays/outer");
    std::fs::create_dir_all(&outer).unwrap();
    std::fs::write(outer.join("kvrender.yaml"), config).unwrap();
    std::fs::write(
        outer.join("kustomization.yaml"),
        "resources: [../prod]\nnameSuffix: -blue\ntransformers: [kvrender.yaml]\n",
    )
    .unwrap();
    for (dir, vm, secret) in [
        (&prod, "prod-app", "prod-app-userdata-"),
        (&outer, "prod-app-blue", "prod-app-userdata-blue-"),
    ] {
        let out = kustomize(dir);
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
        let built = docs(&format!("---\n{}", String::from_utf8_lossy(&out.stdout)));
        let vm = built
            .iter()
            .find(|o| o["kind"] == "VirtualMachine" && o["metadata"]["name"] == vm)
            .unwrap_or_else(|| panic!("no VM {vm} in {}", show(&out)));
        // Expanded: the matchers are gone, the overlay's instancetype and preference applied.
        assert!(vm["spec"].get("instancetype").is_none(), "{vm}");
        let spec = &vm["spec"]["template"]["spec"];
        assert_eq!(spec["domain"]["memory"]["guest"], "4Gi", "{vm}");
        assert_eq!(
            spec["domain"]["devices"]["disks"][0]["disk"]["bus"],
            "virtio"
        );
        let reference = spec["volumes"][1]["cloudInitNoCloud"]["secretRef"]["name"]
            .as_str()
            .unwrap();
        assert!(reference.starts_with(secret), "{reference}");
        assert!(
            String::from_utf8_lossy(&out.stderr).is_empty(),
            "{}",
            show(&out)
        );
    }
}

/// Under `kpt fn render`, findings about a subpackage's files name them from the package the
/// pipeline runs on (`sub/vm.yaml`), as `kpt fn eval` does, whether the finding is about an
/// item (a VM's conflict) or a catalog document that does not render (real kpt).
#[test]
fn kpt_render_names_a_subpackages_files_from_the_outer_package() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = example_kpt_package(tmp.path(), "pkg");
    std::fs::create_dir_all(pkg.join("sub")).unwrap();
    write_subpackage_kptfile(&pkg.join("sub"), "sub");
    std::fs::write(
        pkg.join("sub/vm.yaml"),
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: subvm\nspec:\n  \
         instancetype: {name: u1.medium}\n  runStrategy: Always\n  template:\n    spec:\n      \
         domain:\n        cpu: {cores: 4}\n        devices: {}\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("sub/cat.yaml"),
        "apiVersion: kvrender.io/v1alpha1\nkind: Preference\nmetadata:\n  name: sub.pref\n\
         spec:\n  template:\n    spec:\n      devices:\n        preferredDiskBus: \"{{ nope }}\"\n",
    )
    .unwrap();
    let results = tmp.path().join("results");
    let out = kpt_render_with_results(&pkg, &results);
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    let shown = show(&out);
    assert!(shown.contains("\"sub/vm.yaml:11: error[KV010]"), "{shown}");
    assert!(shown.contains("\"sub/cat.yaml:9: error[KV040]"), "{shown}");
    let findings = shown.split("Stderr:").nth(1).unwrap_or_default();
    let findings = findings.split("Exit code").next().unwrap_or_default();
    assert!(
        !findings.contains(&tmp.path().display().to_string()),
        "{shown}"
    );
    let recorded = std::fs::read_to_string(results.join("results.yaml")).unwrap();
    for path in ["path: sub/vm.yaml", "path: sub/cat.yaml"] {
        assert!(recorded.contains(path), "no {path} in\n{recorded}");
    }
}

/// Under `kpt fn render`, a finding about an object rendered from a subpackage's catalog,
/// placed at its catalog document, names the subpackage's file (`sub/cat.yaml`), even where
/// the outer package has a file of the same name with a document at the same index (real kpt).
#[test]
fn kpt_render_names_a_subpackage_catalog_behind_a_rendered_object() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = example_kpt_package(tmp.path(), "pkg");
    std::fs::create_dir_all(pkg.join("sub")).unwrap();
    write_subpackage_kptfile(&pkg.join("sub"), "sub");
    let preference = |name: &str, field: &str| {
        format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: Preference\nmetadata:\n  name: {name}\n\
             spec:\n  scopes: [cluster]\n  template:\n    spec:\n      devices:\n        \
             {field}: virtio\n"
        )
    };
    std::fs::write(
        pkg.join("cat.yaml"),
        preference("outer.pref", "preferredDiskBus"),
    )
    .unwrap();
    std::fs::write(
        pkg.join("sub/cat.yaml"),
        preference("sub.pref", "preferredDiskBuz"),
    )
    .unwrap();
    let results = tmp.path().join("results");
    let out = kpt_render_with_results(&pkg, &results);
    let shown = show(&out);
    // The mutator's warning, and the validator's error (`strict`) about the same object
    // rendered again over the mutator's output. The two `cat.yaml` documents share their
    // place in their packages, so the line is the document's.
    for finding in ["warning", "error"] {
        assert!(
            shown.contains(&format!(
                "\"sub/cat.yaml:1: {finding}[KV022] VirtualMachineClusterPreference/sub.pref:"
            )),
            "{shown}"
        );
        assert!(
            !shown.contains(&format!("\"cat.yaml:1: {finding}[KV022]")),
            "{shown}"
        );
    }
    let recorded = std::fs::read_to_string(results.join("results.yaml")).unwrap();
    assert!(recorded.contains("path: sub/cat.yaml"), "{recorded}");
}

/// Under `kpt fn render`, a second definition in a subpackage names the first from the
/// package the pipeline runs on, in its message too: `first at sub/a.yaml`, never the
/// subpackage's own `a.yaml` or a catalog document's path in full (real kpt).
#[test]
fn kpt_render_names_the_first_of_two_definitions_from_the_outer_package() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = example_kpt_package(tmp.path(), "pkg");
    std::fs::create_dir_all(pkg.join("sub")).unwrap();
    write_subpackage_kptfile(&pkg.join("sub"), "sub");
    let vm = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: dup\nspec:\n  \
              runStrategy: Always\n  template:\n    spec:\n      domain:\n        \
              devices: {}\n        memory: {guest: 1Gi}\n";
    let family = "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata:\n  \
                  name: subf\nspec:\n  version: 1\n  scopes: [cluster]\n  template:\n    \
                  spec:\n      cpu: {guest: \"{{ size.cpu }}\"}\n      \
                  memory: {guest: \"{{ size.memory }}\"}\n  sizes:\n  - [small, 1, 2Gi]\n";
    for (file, text) in [("a", vm), ("b", vm), ("c1", family), ("c2", family)] {
        std::fs::write(pkg.join(format!("sub/{file}.yaml")), text).unwrap();
    }
    let out = kpt_render(&pkg);
    assert_ne!(out.status.code(), Some(0), "{}", show(&out));
    let shown = show(&out);
    for line in [
        "\"sub/b.yaml:4: error[KV020] VirtualMachine/dup: metadata.name: VirtualMachine/dup is \
         defined twice: first at sub/a.yaml:4 (document 1)\"",
        "\"sub/c2.yaml:1: error[KV020] InstancetypeFamily/subf: InstancetypeFamily/subf is \
         defined twice: first at sub/c1.yaml:1 (document 1)\"",
    ] {
        assert!(shown.contains(line), "no {line} in\n{shown}");
    }
    assert!(
        !shown.contains(&tmp.path().display().to_string()),
        "{shown}"
    );
}

/// `kpt fn render PKG --allow-exec --results-dir RESULTS`.
/// Each package of a blueprint keeps its own local-config `setters` ConfigMap, and a
/// subpackage may share its package's name: documents never applied, which `kpt fn render`
/// hands the outer pipeline side by side, are not one object defined twice.
#[test]
fn kpt_render_takes_each_packages_own_local_config_documents() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = example_kpt_package(tmp.path(), "pkg");
    std::fs::create_dir_all(pkg.join("sub")).unwrap();
    write_subpackage_kptfile(&pkg.join("sub"), "pkg");
    for dir in [pkg.clone(), pkg.join("sub")] {
        std::fs::write(
            dir.join("setters.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: setters\n  annotations:\n    \
             config.kubernetes.io/local-config: \"true\"\ndata:\n  namespace: team-a\n",
        )
        .unwrap();
    }
    let out = kpt_render(&pkg);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert!(!show(&out).contains("KV020"), "{}", show(&out));
    assert!(!show(&out).contains("defined twice"), "{}", show(&out));
}

fn kpt_render_with_results(pkg: &Path, results: &Path) -> Output {
    Command::new(tool("kpt"))
        .args(["fn", "render"])
        .arg(pkg)
        .arg("--allow-exec")
        .arg("--results-dir")
        .arg(results)
        .output()
        .unwrap()
}

/// A `Kptfile` (no pipeline) named `name` in `dir`, which makes `dir` a subpackage.
fn write_subpackage_kptfile(dir: &Path, name: &str) {
    std::fs::write(
        dir.join("Kptfile"),
        format!(
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n  annotations:\n    \
             config.kubernetes.io/local-config: \"true\"\n"
        ),
    )
    .unwrap();
}

/// kpt hands a function a plain `yes` as it was written, meaning the string `"yes"` (it reads
/// YAML 1.2): the function reads it so too. A label `enabled: yes` is then no boolean the API
/// server refuses, and `running: yes` is a string where a boolean belongs, said so with what
/// to write.
#[test]
fn kpt_fn_eval_reads_yes_as_the_text_kpt_reads() {
    let config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  labels:\n    \
                      enabled: yes\ndata:\n  debug: off\n";
    let vm = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm\nspec:\n  \
              running: yes\n  template:\n    spec:\n      domain:\n        devices: {}\n        \
              memory: {guest: 1Gi}\n";
    let (_tmp, pkg) = package_of(&[("settings.yaml", config_map)]);
    let out = kpt_eval(&pkg, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    assert_eq!(
        std::fs::read_to_string(pkg.join("settings.yaml")).unwrap(),
        config_map
    );

    std::fs::write(pkg.join("vm.yaml"), vm).unwrap();
    let out = kpt_eval(&pkg, &[]);
    let shown = show(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert!(
        shown.contains(
            "spec.running: must be a boolean, not a string (`yes` is text to kpt and kustomize, \
             which read YAML 1.2, and the boolean true only to `kubectl apply -f`: write `true`)"
        ),
        "{shown}"
    );
    assert!(!shown.contains("metadata.labels.enabled"), "{shown}");
}

/// A catalog whose templates pass the render watch's budget ends the process from the watch:
/// the function answered nothing on stdout then, and kpt, which shows only a list's results,
/// showed nothing at all. It answers with a list whose result is the error, as for any other
/// input it cannot process, in the input's apiVersion; the finding goes to stderr as well.
#[test]
fn a_render_the_watch_stops_is_answered_with_its_error() {
    // Each pass doubles the string: 2^43 bytes if nothing stops it.
    let family = r#"
- apiVersion: kvrender.io/v1alpha1
  kind: InstancetypeFamily
  metadata:
    name: g
    annotations:
      config.kubernetes.io/path: 'catalog/family.yaml'
      internal.config.kubernetes.io/path: 'catalog/family.yaml'
  spec:
    version: 1
    sizes:
      - [small, 1, 1Gi]
    template:
      metadata:
        annotations:
          grown: "{% set ns = namespace(s='xxxxxxxx') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}"
      spec:
        cpu: {guest: 1}
        memory: {guest: 1Gi}
"#;
    for api_version in ["config.kubernetes.io/v1", "config.kubernetes.io/v1beta1"] {
        let (code, out, text, stderr) = krm(&list(api_version, family, ""));
        assert_eq!(code, 1, "{stderr}");
        assert_eq!(out["apiVersion"], api_version, "{text}");
        assert_eq!(out["kind"], "ResourceList", "{text}");
        assert_eq!(out["items"], serde_json::json!([]), "{text}");
        let results = out["results"].as_array().expect("results");
        assert_eq!(results.len(), 1, "{text}");
        let result = &results[0];
        assert_eq!(result["severity"], "error", "{text}");
        assert_eq!(result["tags"]["code"], "KV040", "{text}");
        assert_eq!(result["file"]["path"], "catalog/family.yaml", "{text}");
        let message = result["message"].as_str().unwrap();
        assert!(
            message.starts_with(
                "cannot render family `g1` size `small`: its templates took more than"
            ),
            "{text}"
        );
        assert_eq!(
            result["resourceRef"]["kind"], "InstancetypeFamily",
            "{text}"
        );
        assert_eq!(result["resourceRef"]["name"], "g", "{text}");
        assert!(
            stderr.contains(&format!("error[KV040] InstancetypeFamily/g: {message}")),
            "{stderr}"
        );
    }
}

/// A `paths` or `catalogs` entry that cannot be read is an error result naming it, its key,
/// and the directory a relative entry is read from (kpt's, not the package's).
#[test]
fn a_missing_paths_entry_names_the_directory_it_was_read_from() {
    let dir = tempfile::tempdir().unwrap();
    let list = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n\
                functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  \
                data: {paths: missing/}\n";
    let mut cmd = Command::new(BIN);
    cmd.current_dir(dir.path()).arg("fn");
    let out = run_with_stdin(cmd, list);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let cwd = dir.path().canonicalize().unwrap();
    assert!(
        stderr.contains("error[KV005] failed to read `missing/`")
            && stderr.contains(&format!(
                "(a relative `paths` entry is read from the directory kvrender runs in, here \
                 `{}`)",
                cwd.display()
            )),
        "{stderr}"
    );
    // An absolute one, in `catalogs`: the message names the key it came from.
    let missing = dir.path().join("no-such-catalog");
    let list = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n\
         functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  \
         data: {{catalogs: {}}}\n",
        missing.display()
    );
    let mut cmd = Command::new(BIN);
    cmd.current_dir(dir.path()).arg("fn");
    let out = run_with_stdin(cmd, &list);
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "error[KV005] failed to read `{}`: No such file or directory (os error 2) (a \
             `catalogs` entry)",
            missing.display()
        )),
        "{stderr}"
    );
}

/// A function is configured, not given options: the findings of a function run name the
/// configuration's settings where the same finding of `build` names an option (`catalogs`,
/// `defaultCatalog: false`).
#[test]
fn function_findings_name_settings_not_options() {
    let vm = |config: &str| {
        format!(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n\
             - apiVersion: kubevirt.io/v1\n  kind: VirtualMachine\n  metadata:\n    name: vm\n    \
             annotations:\n      config.kubernetes.io/path: vm.yaml\n  spec:\n    \
             runStrategy: Always\n    instancetype: {{name: u1.nope}}\n    template:\n      \
             spec:\n        domain:\n          devices: {{}}\n{config}"
        )
    };
    for (config, said) in [
        (
            "",
            "it is not in the inputs, `catalogs` or the embedded catalog",
        ),
        (
            "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: c}\n  \
             data: {defaultCatalog: \"false\"}\n",
            "it is not in the inputs or `catalogs` (the embedded catalog is turned off)",
        ),
    ] {
        let (code, _, stdout, _) = krm(&vm(config));
        assert_eq!(code, 1, "{stdout}");
        assert!(stdout.contains(said), "{stdout}");
        assert!(
            !stdout.contains("--catalog") && !stdout.contains("--no-default"),
            "{stdout}"
        );
    }
}

//! `kvrender validate`: every output format on a small tree with one finding of every code
//! (`testdata/validate/`), and the pre-commit hook end to end.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{describe, run_with_stdin};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Keep snapshots in the top-level `snapshots/` folder while the guard lives.
fn snapshots() -> insta::internals::SettingsBindDropGuard {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"));
    settings.set_prepend_module_to_snapshot(true);
    settings.bind_to_scope()
}

/// Run `kvrender validate testdata/validate` with `args` from the crate root and describe the
/// result: exit code, stdout, stderr.
fn validate(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .current_dir(ROOT)
        .arg("validate")
        .args(args)
        .arg("testdata/validate")
        .output()
        .expect("kvrender runs");
    format!(
        "exit: {}\n----- stdout -----\n{}----- stderr -----\n{}",
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
    .replace(env!("CARGO_PKG_VERSION"), "[VERSION]")
}

#[test]
fn human() {
    let _guard = snapshots();
    insta::assert_snapshot!(validate(&["--no-default-catalog"]));
}

#[test]
fn json() {
    let _guard = snapshots();
    insta::assert_snapshot!(validate(&["--no-default-catalog", "--format", "json"]));
}

#[test]
fn github() {
    let _guard = snapshots();
    insta::assert_snapshot!(validate(&["--no-default-catalog", "--format", "github"]));
}

#[test]
fn sarif() {
    let _guard = snapshots();
    insta::assert_snapshot!(validate(&["--no-default-catalog", "--format", "sarif"]));
}

#[test]
fn gitlab() {
    let _guard = snapshots();
    insta::assert_snapshot!(validate(&["--no-default-catalog", "--format", "gitlab"]));
}

/// In a GitLab pipeline the tree is often named by its absolute path under the checkout
/// (`$CI_PROJECT_DIR/manifests`): the report is then the one a relative path gives, since
/// GitLab matches issues to the files of a merge request by their path in the repository.
/// Every issue has a fingerprint of its own, or GitLab would show only one of them.
#[test]
fn a_gitlab_report_names_files_from_the_project_root() {
    let run = |path: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
            .current_dir(ROOT)
            .env("CI_PROJECT_DIR", ROOT)
            .args([
                "validate",
                "--no-default-catalog",
                "--format",
                "gitlab",
                path,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        String::from_utf8(out.stdout).unwrap()
    };
    let relative = run("testdata/validate");
    let issues: Vec<serde_json::Value> = serde_json::from_str(&relative).unwrap();
    let absolute: Vec<serde_json::Value> =
        serde_json::from_str(&run(&format!("{ROOT}/testdata/validate"))).unwrap();
    assert_eq!(absolute.len(), issues.len());
    for (abs, rel) in absolute.iter().zip(&issues) {
        // A message that names another place (`defined twice: first at ...`) names it as given.
        let description = abs["description"].as_str().unwrap();
        if description.contains(ROOT) {
            let shown = description.replace(&format!("{ROOT}/"), "");
            assert_eq!(shown, rel["description"].as_str().unwrap());
            assert_eq!(abs["location"], rel["location"]);
        } else {
            assert_eq!(abs, rel);
        }
    }
    assert!(issues.len() > 20, "{relative}");
    let mut fingerprints: Vec<&str> = issues
        .iter()
        .map(|i| i["fingerprint"].as_str().unwrap())
        .collect();
    fingerprints.sort_unstable();
    fingerprints.dedup();
    assert_eq!(fingerprints.len(), issues.len());
    for issue in &issues {
        let path = issue["location"]["path"].as_str().unwrap();
        assert!(path.starts_with("testdata/validate/"), "{issue}");
    }
}

/// The place of every finding in the `github`, `gitlab` and `sarif` formats: the annotation's
/// file, the issue's path and fingerprint, the result's URI. `checkout` is the workspace of
/// the workflow or pipeline (`GITHUB_WORKSPACE`, `CI_PROJECT_DIR`), `dir` where kvrender runs.
fn ci_places(checkout: &Path, dir: &Path, paths: &[&str]) -> Vec<String> {
    let run = |format: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
            .current_dir(dir)
            .env("GITHUB_WORKSPACE", checkout)
            .env("CI_PROJECT_DIR", checkout)
            .args(["validate", "--no-default-catalog", "--format", format])
            .args(paths)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let mut places: Vec<String> = run("github")
        .lines()
        .map(|l| l.split(',').next().unwrap().to_owned())
        .collect();
    let gitlab: serde_json::Value = serde_json::from_str(&run("gitlab")).unwrap();
    for issue in gitlab.as_array().unwrap() {
        places.push(format!(
            "{} {}",
            issue["location"]["path"].as_str().unwrap(),
            issue["fingerprint"].as_str().unwrap()
        ));
    }
    let sarif: serde_json::Value = serde_json::from_str(&run("sarif")).unwrap();
    for result in sarif["runs"][0]["results"].as_array().unwrap() {
        let uri = &result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
        places.push(uri.as_str().unwrap().to_owned());
    }
    places
}

/// A CI script that names its folder `"$DIR/"` or `./vms/../vms` from the checkout's root gets
/// the paths of the files of the change (which GitHub and GitLab compare as strings), and the
/// fingerprints a plain `vms` gives.
#[test]
fn ci_formats_write_a_path_named_with_dots_or_doubled_slashes_plainly() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("vms")).unwrap();
    std::fs::write(
        tmp.path().join("vms/a.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"a%b\"}\n",
    )
    .unwrap();
    let plain = ci_places(tmp.path(), tmp.path(), &["vms"]);
    assert_eq!(plain[0], "::error file=vms/a.yaml");
    assert!(plain[1].starts_with("vms/a.yaml "), "{plain:?}");
    assert_eq!(plain[2], "vms/a.yaml");
    for spelt in ["vms//", "./vms/../vms", "vms/."] {
        assert_eq!(
            ci_places(tmp.path(), tmp.path(), &[spelt]),
            plain,
            "{spelt}"
        );
    }
}

/// A runner whose workspace is named through a symbolic link (a work directory on a linked
/// volume) and a step that runs in a folder of it: the system names that folder by its
/// resolved path, and the files there are still named from the checkout's root.
#[cfg(unix)]
#[test]
fn ci_formats_name_files_from_a_checkout_spelt_through_a_link() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    std::fs::create_dir_all(dir.join("real/vms")).unwrap();
    std::os::unix::fs::symlink(dir.join("real"), dir.join("link")).unwrap();
    std::fs::write(
        dir.join("real/vms/web.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"a%b\"}\n",
    )
    .unwrap();
    let resolved = ci_places(&dir.join("real"), &dir.join("real"), &["vms"]);
    assert_eq!(resolved[0], "::error file=vms/web.yaml");
    assert_eq!(resolved[2], "vms/web.yaml");
    for checkout in ["link", "real"] {
        for here in ["link/vms", "real/vms"] {
            assert_eq!(
                ci_places(&dir.join(checkout), &dir.join(here), &["web.yaml"]),
                resolved,
                "checkout {checkout}, in {here}"
            );
        }
    }
}

/// Findings whose message names another file (the first of two definitions, an instancetype
/// the API server refuses), in a tree whose names have spaces: the GitLab fingerprints, like
/// the paths, are the same however the tree is named and from whichever folder of the
/// checkout kvrender runs.
#[test]
fn ci_formats_are_the_same_from_any_folder_for_paths_with_spaces() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let vms = root.join("vms");
    std::fs::create_dir(&vms).unwrap();
    let instancetype = |name: &str, memory: &str| {
        format!(
            "apiVersion: instancetype.kubevirt.io/v1beta1\n\
             kind: VirtualMachineClusterInstancetype\nmetadata: {{name: {name}}}\n\
             spec: {{cpu: {{guest: 1}}, memory: {{guest: {memory}}}}}\n"
        )
    };
    std::fs::write(vms.join("it a.yaml"), instancetype("dup", "1Gi")).unwrap();
    std::fs::write(vms.join("it b.yaml"), instancetype("dup", "1Gi")).unwrap();
    std::fs::write(vms.join("bad it.yaml"), instancetype("bad", "lots")).unwrap();
    std::fs::write(
        vms.join("vm.yaml"),
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: vm}\nspec:\n  \
         runStrategy: Always\n  instancetype: {name: bad}\n  \
         template: {spec: {domain: {devices: {}}}}\n",
    )
    .unwrap();
    let plain = ci_places(&root, &root, &["vms"]);
    assert_eq!(plain.len(), 9, "{plain:?}");
    assert!(
        plain.contains(&"::error file=vms/it b.yaml".to_owned()),
        "{plain:?}"
    );
    let absolute = vms.to_str().unwrap();
    for (here, path) in [
        (&root, "./vms"),
        (&root, absolute),
        (&vms, "."),
        (&vms, "../vms"),
        (&vms, absolute),
    ] {
        assert_eq!(
            ci_places(&root, here, &[path]),
            plain,
            "{path} in {}",
            here.display()
        );
    }
}

#[test]
fn every_rule_fires_in_the_fixture_tree() {
    let out = validate(&["--no-default-catalog", "--format", "json"]);
    let json = out
        .split("----- stdout -----\n")
        .nth(1)
        .and_then(|s| s.split("----- stderr -----").next())
        .unwrap();
    let report: serde_json::Value = serde_json::from_str(json).unwrap();
    let mut codes: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    codes.sort_unstable();
    codes.dedup();
    let mut all: Vec<&str> = kvrender::validate::RULES.iter().map(|r| r.code).collect();
    all.sort_unstable();
    assert_eq!(codes, all);
}

#[test]
fn strict_turns_warnings_into_errors() {
    let out = validate(&["--no-default-catalog", "--strict"]);
    assert!(out.contains("error[KV011]"), "{out}");
    assert!(!out.contains("warning["), "{out}");
}

#[test]
fn broken_yaml_has_line_and_column_and_exit_1_in_every_format() {
    for format in ["human", "json", "github", "sarif", "gitlab"] {
        let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
            .current_dir(ROOT)
            .args([
                "validate",
                "--format",
                format,
                "testdata/validate/broken.yaml",
            ])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{format}: {stdout}");
        let has_position = match format {
            "human" => stdout.contains("broken.yaml:6:13:"),
            "json" => stdout.contains("\"line\": 6") && stdout.contains("column 13"),
            "github" => stdout.contains("line=6,col=13"),
            "gitlab" => stdout.contains("\"begin\": 6") && stdout.contains("column 13"),
            _ => stdout.contains("\"startLine\": 6") && stdout.contains("\"startColumn\": 13"),
        };
        assert!(has_position, "{format}: {stdout}");
    }
}

#[test]
fn a_missing_path_cannot_run() {
    let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .args(["validate", "/nonexistent/kvrender-input.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // Named with a line break, it is still one line of error, the break shown escaped.
    let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .args(["validate", "/nonexistent/kvrender\ninput.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "kvrender: error: failed to read `/nonexistent/kvrender\\ninput.yaml`: No such file or \
         directory (os error 2)\n"
    );
}

/// A new temporary directory holding one file, `name`, with `text`.
fn temp_file(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join(name);
    std::fs::write(&file, text).unwrap();
    (tmp, file)
}

/// The exit codes of `validate` and `expand` on `file`, both without the embedded catalog.
fn validate_and_expand_exits(file: &Path) -> (Option<i32>, Option<i32>) {
    let code = |command| {
        run_on(&[command, "--no-default-catalog"], file)
            .status
            .code()
    };
    (code("validate"), code("expand"))
}

/// Run kvrender with `args`, then `file`.
fn run_on(args: &[&str], file: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .args(args)
        .arg(file)
        .output()
        .unwrap()
}

/// Label and annotation values must be strings wherever Go reads an `ObjectMeta`: `validate`
/// names each wrong value, as `expand` refuses it, for VMs, their templates and instancetypes.
#[test]
fn label_and_annotation_values_that_are_not_strings_are_kv004() {
    let (_tmp, file) = temp_file(
        "meta.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm\n  labels:\n    \
         exposed: yes\n  annotations:\n    replicas: 5\nspec:\n  template:\n    metadata:\n      \
         labels: {tier: 1}\n    spec: {domain: {devices: {}}}\n---\n\
         apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
         metadata:\n  name: it\n  labels: {size: true}\n  lables: {a: b}\n\
         spec: {cpu: {guest: 1}, memory: {guest: 1Gi}}\n",
    );
    let out = run_on(&["validate", "--no-default-catalog"], &file);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    for (line, want) in [
        (
            6,
            "VirtualMachine/vm: metadata.labels.exposed: must be a string, not a boolean",
        ),
        (
            8,
            "VirtualMachine/vm: metadata.annotations.replicas: must be a string, not an integer",
        ),
        (
            12,
            "spec.template.metadata.labels.tier: must be a string, not an integer",
        ),
        (19, "metadata.labels.size: must be a string, not a boolean"),
    ] {
        let prefix = format!("meta.yaml:{line}: error[KV004] ");
        assert!(
            text.lines()
                .any(|l| l.contains(&prefix) && l.contains(want)),
            "no `{prefix}… {want}` in:\n{text}"
        );
    }
    // A misspelt metadata field is refused or dropped, never used: a warning.
    assert!(
        text.lines()
            .any(|l| l.contains("meta.yaml:20: warning[KV022]") && l.contains("lables")),
        "{text}"
    );
    let expand = run_on(&["expand", "--no-default-catalog"], &file);
    assert_eq!(expand.status.code(), Some(1));
    assert!(expand.stdout.is_empty());
}

/// KubeVirt answers with its deprecation warnings only when it admits an instancetype or a
/// preference: one refused for a wrong type gets the `KV004` error and no `KV031` warning.
#[test]
fn deprecation_warnings_only_for_objects_the_cluster_would_admit() {
    let doc = |kind: &str, name: &str, spec: &str| {
        format!(
            "---\napiVersion: instancetype.kubevirt.io/v1beta1\nkind: {kind}\n\
             metadata:\n  name: {name}\nspec: {spec}\n"
        )
    };
    let text = [
        doc(
            "VirtualMachineClusterPreference",
            "ok-pref",
            "{cpu: {preferredCPUTopology: preferCores}}",
        ),
        doc(
            "VirtualMachineClusterPreference",
            "bad-pref",
            "{cpu: {preferredCPUTopology: preferCores}, preferSpreadSocketToCoreRatio: x}",
        ),
        doc(
            "VirtualMachineClusterInstancetype",
            "ok-it",
            "{cpu: {guest: 1}, memory: {guest: 1Gi}, launchSecurity: {sev: {}}}",
        ),
        doc(
            "VirtualMachineClusterInstancetype",
            "bad-it",
            "{cpu: {guest: one}, memory: {guest: 1Gi}, launchSecurity: {sev: {}}}",
        ),
    ]
    .concat();
    let (_tmp, file) = temp_file("deprecated.yaml", &text);
    let out = run_on(&["validate", "--no-default-catalog"], &file);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let has = |code: &str, object: &str| {
        stdout
            .lines()
            .any(|l| l.contains(code) && l.contains(&format!("/{object}:")))
    };
    for object in ["ok-pref", "ok-it"] {
        assert!(has("warning[KV031]", object), "{object}:\n{stdout}");
    }
    for object in ["bad-pref", "bad-it"] {
        assert!(has("error[KV004]", object), "{object}:\n{stdout}");
        assert!(!has("KV031", object), "{object}:\n{stdout}");
    }
}

/// A name that is not found is reported at the line of the name, by `validate` and `expand`
/// alike, with the likeliest intent: the exact name in the other scope before a near name,
/// and a namespaced object of another namespace named as such.
#[test]
fn not_found_hints_prefer_exact_names() {
    let (_tmp, file) = temp_file(
        "ns.yaml",
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineInstancetype\n\
         metadata: {name: u1.smal, namespace: team-a}\nspec: {cpu: {guest: 1}, memory: {guest: 1Gi}}\n\
         ---\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: v, namespace: team-b}\n\
         spec:\n  instancetype:\n    kind: VirtualMachineInstancetype\n    name: u1.smal\n  \
         template: {spec: {domain: {devices: {}}}}\n---\napiVersion: kubevirt.io/v1\n\
         kind: VirtualMachine\nmetadata: {name: w, namespace: team-a}\nspec:\n  instancetype:\n    \
         name: u1.smal\n  template: {spec: {domain: {devices: {}}}}\n",
    );
    // A reference that misses is a warning for `validate`, an error for `expand`.
    let run = |command: &str, code: i32| {
        let out = run_on(&[command], &file);
        assert_eq!(out.status.code(), Some(code), "{command}");
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let validate = run("validate", 0);
    let expand = run("expand", 1);
    for text in [&validate, &expand] {
        // `u1.small` of the embedded catalog is a letter away, but the exact names win.
        assert!(
            text.lines().any(|l| l.contains("ns.yaml:12: ")
                && l.contains("VirtualMachine/team-b/v")
                && l.contains("exists in namespace \"team-a\"")),
            "{text}"
        );
        assert!(
            text.lines().any(|l| l.contains("ns.yaml:20: ")
                && l.contains("VirtualMachine/team-a/w")
                && l.contains("set `kind: VirtualMachineInstancetype` in the matcher")),
            "{text}"
        );
        assert!(!text.contains("did you mean"), "{text}");
    }
    // The object exists, in another namespace: the finding says which one it looked in.
    assert!(
        validate.contains(
            "not found in namespace \"team-b\": it is not in the inputs, `--catalog` or the \
             embedded catalog"
        ),
        "{validate}"
    );
}

/// A VM refused for its preference's requirements is told why in its own terms: the smallest
/// size of its instancetype's series that fits, or that its instancetype was not found (so the
/// VM's own CPU was counted); a conflict names the instancetype that owns the field.
#[test]
fn refusals_say_which_instancetype_and_what_would_fit() {
    let vm = |name: &str, spec: &str| {
        format!(
            "---\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {{name: {name}}}\n\
             spec:\n  runStrategy: Always\n{spec}  template: {{spec: {{domain: {{devices: {{}}}}}}}}\n"
        )
    };
    let text = [
        vm("small", "  instancetype: {name: u1.small}\n  preference: {name: windows.11}\n"),
        // The same series and size with other requirements: its own answer, not the one
        // worked out for the VM before it.
        vm("eight", "  instancetype: {name: u1.small}\n  preference: {name: needs-eight}\n"),
        vm("again", "  instancetype: {name: u1.small}\n  preference: {name: windows.11}\n"),
        vm("typo", "  instancetype: {name: u1.smal}\n  preference: {name: windows.11}\n"),
        vm("series", "  instancetype: {name: team.one}\n  preference: {name: windows.11}\n"),
        // Big enough, but the preference requires another architecture: no size helps.
        vm("arch", "  instancetype: {name: u1.2xlarge}\n  preference: {name: needs-arm}\n"),
        "---\napiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
         metadata: {name: team.one}\nspec: {cpu: {guest: 1}, memory: {guest: 8Gi}}\n\
         ---\napiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterPreference\n\
         metadata: {name: needs-arm}\nspec: {requirements: {architecture: arm64}}\n\
         ---\napiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterPreference\n\
         metadata: {name: needs-eight}\nspec: {requirements: {cpu: {guest: 8}}}\n"
            .to_string(),
    ]
    .concat();
    let (_tmp, file) = temp_file("vms.yaml", &text);
    let out = run_on(&["validate"], &file);
    assert_eq!(out.status.code(), Some(1));
    let shown =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    let finding = |vm: &str| {
        shown
            .lines()
            .find(|l| l.contains("error[KV033]") && l.contains(&format!("VirtualMachine/{vm}:")))
            .unwrap_or_else(|| panic!("no KV033 for {vm}: {shown}"))
            .to_string()
    };
    // windows.11 requires 2 vCPUs and 4Gi: u1.medium has 1 vCPU, u1.2xmedium is 2 and 4Gi.
    assert!(
        finding("small").ends_with(
            "provided by instance type, preference requires 2 vCPU (\"u1.2xmedium\" is the \
             smallest u1 instancetype that meets them)"
        ),
        "{shown}"
    );
    assert!(
        finding("eight").ends_with(
            "provided by instance type, preference requires 8 vCPU (\"u1.2xlarge\" is the \
             smallest u1 instancetype that meets them)"
        ),
        "{shown}"
    );
    assert_eq!(
        finding("again")
            .split_once(": ")
            .map(|(_, m)| m.replace("again", "small")),
        finding("small")
            .split_once(": ")
            .map(|(_, m)| m.to_string()),
        "{shown}"
    );
    assert!(
        finding("typo").ends_with(
            "(the instancetype \"u1.smal\" was not found, so KubeVirt counted the VM's own CPU \
             and memory: see the KV011 finding)"
        ),
        "{shown}"
    );
    assert!(
        finding("series").ends_with("(no team instancetype meets them)"),
        "{shown}"
    );
    assert!(
        finding("arch").ends_with("but amd64 is being requested"),
        "{shown}"
    );
}

/// A name that is not a string is reported once, by the name rule, not again as a wrong type.
#[test]
fn a_name_that_is_not_a_string_is_reported_once() {
    let (_tmp, file) = temp_file(
        "vm.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: 123\n\
         spec:\n  template: {spec: {domain: {devices: {}}}}\n",
    );
    let out = run_on(&["validate", "--no-default-catalog"], &file);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let findings: Vec<&str> = text.lines().filter(|l| l.contains("error[")).collect();
    assert_eq!(findings.len(), 1, "{text}");
    assert!(findings[0].contains("error[KV003]") && findings[0].contains("quote the name"));
}

#[test]
fn catalog_resolves_references_from_unchanged_files() {
    let vm = Path::new(ROOT).join("testdata/validate/vms.yaml");
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
            .current_dir(ROOT)
            .args(["validate", "--no-default-catalog", "--format", "json"])
            .args(extra)
            .arg(&vm)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // Without the catalog, `small` exists nowhere; with it, the conflict is found.
    let without = run(&[]);
    assert!(without.contains("\"code\": \"KV011\""), "{without}");
    assert!(!without.contains("\"code\": \"KV010\""), "{without}");
    let with = run(&["--catalog", "testdata/validate/catalog.yaml"]);
    assert!(with.contains("\"code\": \"KV010\""), "{with}");
    assert!(
        with.contains("conflicts with selected instance type"),
        "{with}"
    );
}

// ---------------------------------------------------------------------------------------------
// pre-commit, for real

fn on_path(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|p| p.is_file())
    })
}

fn git(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=kvrender",
            "-c",
            "user.email=kvrender@example.com",
        ])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .expect("git runs")
}

const INSTANCETYPE: &str = "\
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata:
  name: small
spec:
  cpu:
    guest: 2
  memory:
    guest: 2Gi
";

fn vm(name: &str, cpu: &str) -> String {
    format!(
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: {name}\nspec:\n  \
         instancetype:\n    name: small\n  template:\n    spec:\n      domain:\n{cpu}        \
         devices: {{}}\n"
    )
}

/// The hooks of this repository, installed by pre-commit from this checkout's HEAD (so it
/// builds kvrender with cargo inside pre-commit's cache: slow the first time). The validate
/// hook refuses a commit with a conflicting VM whose instancetype lives in an unchanged file,
/// and lets a good one in; the build-check hook refuses a commit whose committed `build -o`
/// output is missing or out of date.
#[test]
fn pre_commit_hook_blocks_a_bad_vm() {
    let Some(pre_commit) = on_path("pre-commit") else {
        // Under CI it must run: `.ci/run` installs pre-commit.
        assert!(
            std::env::var_os("CI").is_none_or(|v| v.is_empty()),
            "`pre-commit` is not on PATH, and under CI the pre-commit end-to-end test must run \
             (`.ci/run` installs it)"
        );
        println!("note: `pre-commit` is not on PATH; skipping the pre-commit end-to-end test");
        return;
    };
    let head = git(Path::new(ROOT), &["rev-parse", "HEAD"]);
    if !head.status.success() {
        println!("note: {ROOT} is not a git checkout; skipping the pre-commit end-to-end test");
        return;
    }
    let sha = String::from_utf8_lossy(&head.stdout).trim().to_string();
    let scratch = tempfile::tempdir().unwrap();
    let repo = scratch.path();
    assert!(git(repo, &["init", "-q"]).status.success());
    std::fs::create_dir_all(repo.join("catalog")).unwrap();
    std::fs::create_dir_all(repo.join("vms")).unwrap();
    std::fs::write(repo.join("catalog/small.yaml"), INSTANCETYPE).unwrap();
    std::fs::write(
        repo.join(".pre-commit-config.yaml"),
        format!(
            "repos:\n- repo: {ROOT}\n  rev: {sha}\n  hooks:\n  - id: kvrender-validate\n    \
             args: [--no-default-catalog, --catalog, catalog]\n"
        ),
    )
    .unwrap();
    // One cache for every run: pre-commit builds the hook once per revision, and a shared
    // target directory keeps the rebuilds incremental. Debug-level release builds are enough.
    let cache = Path::new(ROOT).join("target/pre-commit");
    let run = |args: &[&str]| {
        Command::new(&pre_commit)
            .current_dir(repo)
            .env("PRE_COMMIT_HOME", cache.join("home"))
            .env("CARGO_TARGET_DIR", cache.join("target"))
            .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
            .env("CARGO_PROFILE_RELEASE_LTO", "false")
            .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16")
            .args(args)
            .output()
            .expect("pre-commit runs")
    };
    let install = run(&["install"]);
    assert!(install.status.success(), "{install:?}");
    let commit = |files: &[&str], message: &str| {
        assert!(git(repo, &[&["add"], files].concat()).status.success());
        let mut cmd = Command::new("git");
        cmd.current_dir(repo)
            .env("PRE_COMMIT_HOME", cache.join("home"))
            .env("CARGO_TARGET_DIR", cache.join("target"))
            .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
            .env("CARGO_PROFILE_RELEASE_LTO", "false")
            .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "16")
            .args([
                "-c",
                "user.name=kvrender",
                "-c",
                "user.email=kvrender@example.com",
            ])
            .args(["-c", "commit.gpgsign=false", "commit", "-q", "-m", message]);
        let out = cmd.output().expect("git commit runs");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    };

    let (ok, log) = commit(
        &[".pre-commit-config.yaml", "catalog/small.yaml"],
        "catalog",
    );
    assert!(ok, "the catalog commit should pass:\n{log}");

    std::fs::write(
        repo.join("vms/bad.yaml"),
        vm("bad", "        cpu:\n          sockets: 4\n"),
    )
    .unwrap();
    let (ok, log) = commit(&["vms/bad.yaml"], "bad vm");
    assert!(!ok, "the bad VM must fail the commit:\n{log}");
    assert!(log.contains("error[KV010]"), "{log}");
    assert!(
        log.contains(
            "VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance \
             type"
        ),
        "{log}"
    );
    assert!(git(repo, &["reset", "-q", "vms/bad.yaml"]).status.success());
    std::fs::remove_file(repo.join("vms/bad.yaml")).unwrap();

    std::fs::write(repo.join("vms/good.yaml"), vm("good", "")).unwrap();
    let (ok, log) = commit(&["vms/good.yaml"], "good vm");
    assert!(ok, "the good VM should pass:\n{log}");

    // Other tools' configuration is not a manifest: the hook leaves it out.
    std::fs::create_dir_all(repo.join("web")).unwrap();
    for (file, text) in [
        (".gitlab-ci.yml", "stages: [test]\n"),
        ("renovate.json", "{\"extends\": [\"config:recommended\"]}\n"),
        ("web/package.json", "{\"name\": \"web\"}\n"),
        ("docs/mkdocs.yml", "site_name: VMs\n"),
        (".codecov.yml", "coverage: {precision: 2}\n"),
        (".vscode/settings.json", "{\"editor.tabSize\": 2}\n"),
        (
            ".devcontainer/devcontainer.json",
            "{\"image\": \"debian\"}\n",
        ),
        (".circleci/config.yml", "version: 2.1\n"),
    ] {
        std::fs::create_dir_all(repo.join(file).parent().unwrap()).unwrap();
        std::fs::write(repo.join(file), text).unwrap();
    }
    let (ok, log) = commit(
        &[
            ".gitlab-ci.yml",
            "renovate.json",
            "web/package.json",
            "docs/mkdocs.yml",
            ".codecov.yml",
            ".vscode/settings.json",
            ".devcontainer/devcontainer.json",
            ".circleci/config.yml",
        ],
        "tool configuration",
    );
    assert!(ok, "tool configuration should pass:\n{log}");
    // YAML that is neither is still read: a KV002 names the --exclude to add.
    std::fs::write(repo.join("web/site.yaml"), "title: VMs\n").unwrap();
    let (ok, log) = commit(&["web/site.yaml"], "other yaml");
    assert!(!ok && log.contains("error[KV002]"), "{log}");
    assert!(
        git(repo, &["reset", "-q", "web/site.yaml"])
            .status
            .success()
    );
    std::fs::remove_file(repo.join("web/site.yaml")).unwrap();

    // The second hook: the committed output of `kvrender build -o rendered` must be up to date.
    std::fs::write(
        repo.join(".pre-commit-config.yaml"),
        format!(
            "repos:\n- repo: {ROOT}\n  rev: {sha}\n  hooks:\n  - id: kvrender-validate\n    \
             args: [--no-default-catalog, --catalog, catalog, --exclude, rendered/]\n  \
             - id: kvrender-build-check\n    \
             args: [--no-default-catalog, catalog, vms, -o, rendered, --prune]\n"
        ),
    )
    .unwrap();
    let (ok, log) = commit(&[".pre-commit-config.yaml"], "check the output");
    assert!(!ok, "no rendered output yet:\n{log}");
    assert!(log.contains("rendered does not exist"), "{log}");
    let render = || {
        let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
            .current_dir(repo)
            .args([
                "build",
                "--no-default-catalog",
                "catalog",
                "vms",
                "-o",
                "rendered",
            ])
            .args(["--prune"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    };
    render();
    let (ok, log) = commit(&[".pre-commit-config.yaml", "rendered"], "rendered output");
    assert!(ok, "the rendered output is up to date:\n{log}");

    // A source changes and the output is not rebuilt: the commit stops, naming the file.
    std::fs::write(repo.join("vms/good.yaml"), vm("good", "        cpu: {}\n")).unwrap();
    let (ok, log) = commit(&["vms/good.yaml"], "good vm, changed");
    assert!(!ok, "stale output must fail the commit:\n{log}");
    assert!(log.contains("_good.yaml: changed"), "{log}");
    assert!(log.contains("rendered is out of date"), "{log}");
    render();
    let (ok, log) = commit(
        &["vms/good.yaml", "rendered"],
        "good vm, changed and rebuilt",
    );
    assert!(ok, "rebuilt output should pass:\n{log}");

    // A commit that only deletes a source leaves a stale file in the output: it stops too.
    std::fs::write(repo.join("vms/other.yaml"), vm("other", "")).unwrap();
    render();
    let (ok, log) = commit(&["vms/other.yaml", "rendered"], "other vm");
    assert!(ok, "a new VM with its output should pass:\n{log}");
    assert!(git(repo, &["rm", "-q", "vms/good.yaml"]).status.success());
    let (ok, log) = commit(&["-u"], "good vm, deleted");
    assert!(
        !ok,
        "a deletion without a rebuild must fail the commit:\n{log}"
    );
    assert!(log.contains("_good.yaml: stale"), "{log}");
    render();
    let (ok, log) = commit(&["-A", "rendered"], "good vm, deleted and rebuilt");
    assert!(ok, "rebuilt output should pass:\n{log}");
}

#[test]
fn docs_list_every_rule() {
    let docs = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    for rule in kvrender::validate::RULES {
        assert!(
            docs.contains(&format!("| `{}` | {} |", rule.code, rule.summary)),
            "the README's rule table lacks {}",
            rule.code
        );
    }
}

/// A finding in a JSON manifest points at the field's line, as in YAML.
#[test]
fn findings_in_json_files_name_the_fields_line() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("vm.json");
    std::fs::write(
        &file,
        r#"{
  "apiVersion": "kubevirt.io/v1",
  "kind": "VirtualMachine",
  "metadata": {"name": "j", "namespace": "ns"},
  "spec": {
    "instancetype": {"name": "u1.medium"},
    "template": {
      "spec": {
        "domain": {
          "cpu": {"sockets": 3}
        }
      }
    }
  }
}
"#,
    )
    .unwrap();
    let out = run_on(&["validate"], &file);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        format!("{stdout}{stderr}").contains("vm.json:10: error[KV010]"),
        "{stdout}{stderr}"
    );
}

/// A VirtualMachineInstance and a preset are typed as a VM's template is: a quantity that is
/// none is `KV004`, a misspelt field (`dedicatedCPUPlacement`, the instancetype spelling) `KV022`.
#[test]
fn vmis_and_presets_are_typed_like_a_vm_template() {
    let (_tmp, file) = temp_file(
        "vmi.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata: {name: p}\n\
         spec:\n  selector: {matchLabels: {app: web}}\n  domain:\n    devices: {}\n    \
         cpu: {dedicatedCPUPlacement: true}\n    resources:\n      requests: {memory: 1gi}\n\
         ---\napiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: v}\n\
         spec:\n  domain:\n    devices: {}\n    resources:\n      requests: {memory: 2 Gi}\n\
         ---\napiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata: {name: q}\n\
         spec:\n  selector:\n    matchLabel: {app: web}\n    \
         matchExpressions: [{key: app, operator: In, values: web}]\n  domain: {devices: {}}\n",
    );
    let out = run_on(&["validate", "--no-default-catalog"], &file);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    for (line, want) in [
        (
            8,
            "warning[KV022] VirtualMachineInstancePreset/p: spec.domain.cpu.dedicatedCPUPlacement: \
             unknown field",
        ),
        (
            10,
            "error[KV004] VirtualMachineInstancePreset/p: spec.domain.resources.requests.memory: \
             must be a quantity",
        ),
        (
            19,
            "error[KV004] VirtualMachineInstance/v: spec.domain.resources.requests.memory: must \
             be a quantity",
        ),
        // The selector is a label selector, typed and named as one.
        (
            26,
            "warning[KV022] VirtualMachineInstancePreset/q: spec.selector.matchLabel: unknown \
             field `matchLabel` in `spec.selector`",
        ),
        (
            27,
            "error[KV004] VirtualMachineInstancePreset/q: \
             spec.selector.matchExpressions[0].values: must be a list, not a string",
        ),
    ] {
        let prefix = format!("vmi.yaml:{line}: {want}");
        assert!(
            text.lines().any(|l| l.contains(&prefix)),
            "no `{prefix}` in:\n{text}"
        );
    }
}

/// A preset the API server refuses (a name it does not take, a field of the wrong type) is
/// reported once, and its fields are not applied to the VMIs judged with their presets.
#[test]
fn a_refused_preset_is_not_applied_when_vmis_are_judged() {
    let vmi = "---\napiVersion: kubevirt.io/v1\nkind: VirtualMachineInstance\nmetadata: {name: v}\n\
               spec:\n  domain:\n    devices: {}\n    memory: {guest: 1Gi}\n";
    for (preset, refusal) in [
        ("name: \"Bad Name!\"", "error[KV003]"),
        ("name: typed\n  labels: {cores: \"1\"}", ""),
    ] {
        for extra in ["", "    firmware: {serial: 7}\n"] {
            let text = format!(
                "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
                 {preset}\nspec:\n  selector: {{}}\n  domain:\n    devices: {{}}\n    \
                 cpu: {{sockets: 10, maxSockets: 2}}\n{extra}{vmi}"
            );
            let (_tmp, file) = temp_file("all.yaml", &text);
            let out = run_on(&["validate", "--no-default-catalog"], &file);
            let stdout = String::from_utf8_lossy(&out.stdout);
            let refused = !refusal.is_empty() || !extra.is_empty();
            // Applied, the preset's sockets exceed its maxSockets in the VMI.
            assert_eq!(
                stdout.contains("Number of sockets in CPU topology"),
                !refused,
                "{preset} {extra}: {stdout}"
            );
            assert_eq!(out.status.code(), Some(i32::from(refused)), "{stdout}");
            if !refusal.is_empty() {
                assert!(stdout.contains(refusal), "{stdout}");
            }
        }
    }
}

/// A preset whose selector does not parse is reported on the preset itself, at its selector,
/// with no VM or VMI among the inputs: KubeVirt takes it, then refuses every VMI of its
/// namespace. A preset with a valid selector gets nothing.
#[test]
fn a_preset_whose_selector_does_not_parse_is_reported_without_any_vm() {
    let preset = |selector: &str| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachineInstancePreset\nmetadata:\n  \
             name: p\n  namespace: lab\nspec:\n  selector:\n    {selector}\n  domain:\n    \
             devices: {{}}\n"
        )
    };
    let bad = "matchExpressions: [{key: tier, operator: in, values: [web]}]";
    let (_tmp, file) = temp_file("presets.yaml", &preset(bad));
    let out = run_on(&["validate", "--no-default-catalog"], &file);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains(
            "presets.yaml:7: warning[KV014] VirtualMachineInstancePreset/lab/p: spec.selector: \
             \"in\" is not a valid label selector operator: KubeVirt admits the preset, then its \
             mutating webhook refuses every VirtualMachineInstance created in namespace \"lab\""
        ),
        "{stdout}"
    );
    let (_tmp, file) = temp_file("presets.yaml", &preset("matchLabels: {tier: web}"));
    let out = run_on(&["validate", "--no-default-catalog"], &file);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("No problems found"), "{stdout}");
}

/// The presets' exclusion annotation on a VM's own metadata does nothing (the VMI takes the
/// template's annotations): a warning says where it belongs; in the template it is quiet.
#[test]
fn a_preset_exclusion_on_the_vms_own_metadata_is_a_warning() {
    let vm = |own: &str, template: &str| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: v\n{own}spec:\n  \
             runStrategy: Always\n  template:\n    metadata:\n{template}      labels: {{a: b}}\n    \
             spec:\n      domain:\n        devices: {{}}\n        memory: {{guest: 1Gi}}\n"
        )
    };
    let own = "  annotations:\n    virtualmachineinstancepresets.admission.kubevirt.io/exclude: \
               \"true\"\n";
    let template = "      annotations:\n        \
                    virtualmachineinstancepresets.admission.kubevirt.io/exclude: \"true\"\n";
    let (_tmp, file) = temp_file("vm.yaml", &vm(own, ""));
    let out = run_on(&["validate", "--no-default-catalog"], &file);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "vm.yaml:6: warning[KV014] VirtualMachine/v: metadata.annotations[\
             \"virtualmachineinstancepresets.admission.kubevirt.io/exclude\"]: "
        ) && stdout.contains("move it there"),
        "{stdout}"
    );
    let (_tmp, file) = temp_file("vm.yaml", &vm("", template));
    let out = run_on(&["validate", "--no-default-catalog"], &file);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("KV014"), "{stdout}");
}

/// A quantity string the API server's pattern refuses (`16GB`, `2 Gi`, `lots`) is KV004 with
/// the string quoted: in an instancetype, in a VM, and in a family's size table, where every
/// rendered object is named. `expand` and `build` refuse it and print nothing.
#[test]
fn strings_that_are_not_quantities_are_kv004() {
    let (_tmp, file) = temp_file(
        "q.yaml",
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
         metadata: {name: it}\nspec:\n  cpu: {guest: 1}\n  memory:\n    guest: lots\n---\n\
         apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: vm}\nspec:\n  \
         template:\n    spec:\n      domain:\n        devices: {}\n        \
         memory: {guest: 16GB}\n        resources:\n          requests: {memory: 2 Gi, cpu: 500m}\n",
    );
    let out = run_on(&["validate", "--no-default-catalog"], &file);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    for (line, want) in [
        (
            7,
            "VirtualMachineClusterInstancetype/it: spec.memory.guest: must be a quantity",
        ),
        (
            17,
            "VirtualMachine/vm: spec.template.spec.domain.memory.guest: must be a quantity",
        ),
        (
            19,
            "spec.template.spec.domain.resources.requests.memory: must be a quantity",
        ),
    ] {
        let prefix = format!("q.yaml:{line}: error[KV004] ");
        assert!(
            text.lines()
                .any(|l| l.contains(&prefix) && l.contains(want)),
            "no `{prefix}… {want}` in:\n{text}"
        );
    }
    for quoted in ["not \"lots\"", "not \"16GB\"", "not \"2 Gi\""] {
        assert!(text.contains(quoted), "no `{quoted}` in:\n{text}");
    }
    assert!(!text.contains("500m"), "{text}");
    for command in ["expand", "vmi", "diff"] {
        let out = run_on(&[command, "--no-default-catalog"], &file);
        assert_eq!(out.status.code(), Some(1), "{command}");
        assert!(out.stdout.is_empty(), "{command}");
    }

    // An unquoted decimal is neither an integer nor a string: the API server's schema refuses
    // it, though KubeVirt's Go types (and so `expand`, as `expand-spec`) read it.
    let (_tmp, decimal) = temp_file(
        "d.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: vm}\nspec:\n  \
         template:\n    spec:\n      domain:\n        devices: {}\n        \
         resources:\n          requests: {cpu: 1.5, memory: 2e9}\n",
    );
    let out = run_on(&["validate", "--no-default-catalog"], &decimal);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.matches("error[KV004]").count(), 1, "{text}");
    assert!(text.contains("requests.cpu: must be a quantity"), "{text}");
    let out = run_on(&["expand", "--no-default-catalog"], &decimal);
    assert_eq!(out.status.code(), Some(0));

    let (_tmp, family) = temp_file(
        "fam.yaml",
        "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {name: q}\n\
         spec:\n  version: 1\n  scopes: [cluster]\n  sizes:\n    - [small, 1, 2Gi]\n    \
         - [large, 2, 64GB]\n  template:\n    spec:\n      cpu: {guest: \"{{ size.cpu }}\"}\n      \
         memory: {guest: \"{{ size.memory }}\"}\n",
    );
    let out = run_on(&["validate", "--no-default-catalog"], &family);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.lines().any(|l| l.contains("error[KV004]")
            && l.contains("q1.large")
            && l.contains("not \"64GB\"")),
        "{text}"
    );
    assert!(!text.contains("q1.small"), "{text}");
    let tmp = tempfile::tempdir().unwrap();
    let build = Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .args(["build", "--no-default-catalog", "-o"])
        .arg(tmp.path().join("out"))
        .arg(&family)
        .output()
        .unwrap();
    assert_eq!(
        build.status.code(),
        Some(1),
        "{}",
        crate::common::describe(&build)
    );
    assert!(!tmp.path().join("out").exists());
}

/// An instancetype with a field of the wrong type cannot exist in a cluster: a VM naming it is
/// not checked against it, and its type error is the finding, once, whether it comes from the
/// inputs or from `--catalog`, in `validate` as in `build`. KubeVirt's webhook lets the failed
/// lookup pass and judges the VM without it: against its preference's requirements, with the
/// VM's own memory (none).
#[test]
fn a_wrongly_typed_instancetype_a_vm_names_is_reported_once_and_the_vm_told_it_will_not_start() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog");
    std::fs::create_dir(&catalog).unwrap();
    std::fs::write(
        catalog.join("it.yaml"),
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
         metadata:\n  name: big\nspec:\n  cpu:\n    guest: 8\n  memory:\n    guest: 32GB\n",
    )
    .unwrap();
    let vm = dir.path().join("vm.yaml");
    std::fs::write(
        &vm,
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: v\nspec:\n  \
         runStrategy: Halted\n  instancetype:\n    name: big\n  preference:\n    name: fedora\n  template:\n    \
         spec:\n      domain:\n        devices: {}\n",
    )
    .unwrap();
    let findings = |args: &[&std::ffi::OsStr]| {
        let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
            .arg("validate")
            .args(["--format", "json"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        report["findings"].as_array().unwrap().clone()
    };
    for args in [
        vec![
            std::ffi::OsStr::new("--catalog"),
            catalog.as_os_str(),
            vm.as_os_str(),
        ],
        vec![catalog.as_os_str(), vm.as_os_str()],
    ] {
        let found = findings(&args);
        assert_eq!(found.len(), 3, "{found:#?}");
        assert_eq!(found[0]["code"], "KV004");
        assert_eq!(found[0]["field"], "spec.memory.guest");
        assert_eq!(found[0]["line"], 9);
        assert_eq!(found[0]["object"]["name"], "big");
        // The VM is told why it will not start, at the name it gives.
        assert_eq!(found[1]["code"], "KV011");
        assert_eq!(found[1]["severity"], "warning");
        assert_eq!(found[1]["field"], "spec.instancetype");
        assert_eq!(found[1]["line"], 8);
        assert_eq!(found[1]["object"]["name"], "v");
        let message = found[1]["message"].as_str().unwrap();
        assert!(
            message.starts_with("VirtualMachineClusterInstancetype/big (at ")
                && message.contains("will not start"),
            "{message}"
        );
        assert_eq!(found[2]["code"], "KV033");
        assert_eq!(found[2]["severity"], "error");
        assert_eq!(found[2]["field"], "spec.template.spec.domain.memory");
        let message = found[2]["message"].as_str().unwrap();
        assert!(
            message.starts_with("failure checking preference requirements: insufficient Memory")
                && message.ends_with(
                    "(the instancetype \"big\" is refused by the API server, so KubeVirt \
                     counted the VM's own CPU and memory: see the KV011 finding)"
                ),
            "{message}"
        );
    }
    let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .arg("build")
        .arg("--catalog")
        .arg(&catalog)
        .arg(&vm)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("error[KV004]"), "{stderr}");
    assert!(
        stderr.contains("error[KV033]") && stderr.contains("\"big\" is refused by the API server"),
        "{stderr}"
    );
}

/// A preference the API server refuses is no preference in the cluster, and KubeVirt's webhook
/// still applies the instancetype the VM names: a VM field that conflicts with it is refused.
#[test]
fn a_vm_naming_a_refused_preference_is_still_judged_against_its_instancetype() {
    let (_tmp, file) = temp_file(
        "vm.yaml",
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
         metadata: {name: it1}\nspec: {cpu: {guest: 2}, memory: {guest: 1Gi}}\n---\n\
         apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterPreference\n\
         metadata: {name: pref1}\nspec: {preferredTerminationGracePeriodSeconds: thirty}\n---\n\
         apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: vm1}\nspec:\n  \
         instancetype: {name: it1}\n  preference: {name: pref1}\n  runStrategy: Always\n  \
         template:\n    spec:\n      domain:\n        devices: {}\n        cpu:\n          \
         sockets: 4\n",
    );
    let out = run_on(&["validate", "--no-default-catalog"], &file);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        crate::common::describe(&out)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = stdout.lines().filter(|l| l.contains("vm.yaml:")).collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert!(
        lines[0].ends_with(
            "vm.yaml:9: error[KV004] VirtualMachineClusterPreference/pref1: \
             spec.preferredTerminationGracePeriodSeconds: must be an integer, not a string: the \
             API server refuses the object"
        ),
        "{stdout}"
    );
    assert!(
        lines[1].contains("warning[KV011] VirtualMachine/vm1: spec.preference: "),
        "{stdout}"
    );
    assert!(
        lines[2].contains(
            "vm.yaml:23: error[KV010] VirtualMachine/vm1: spec.template.spec.domain.cpu.sockets: \
             VM field(s) spec.template.spec.domain.cpu.sockets conflicts with selected instance \
             type"
        ),
        "{stdout}"
    );
}

/// A field the KubeVirt configuration does not have is a warning naming the nearest one, in
/// every command that reads the cluster profile; the rest of the profile still applies.
#[test]
fn an_unknown_cluster_configuration_field_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let kubevirt = dir.path().join("kubevirt.yaml");
    std::fs::write(
        &kubevirt,
        "apiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata: {name: kubevirt}\nspec:\n  \
         configuration:\n    machineTyp: pc-q35-rhel9.2.0\n    cpuModel: Skylake\n",
    )
    .unwrap();
    let vm = Path::new(ROOT).join("examples/vms/fedora-server.yaml");
    for command in ["validate", "expand", "build", "vmi"] {
        let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
            .arg(command)
            .arg("--cluster-config")
            .arg(&kubevirt)
            .arg(&vm)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{command}");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            text.contains(
                "warning[KV007] unknown field `spec.configuration.machineTyp` (did you mean \
                 `machineType`?)"
            ),
            "{command}: {text}"
        );
        // At the line of the misspelt key.
        assert!(
            text.contains(&format!("{}:6: warning[KV007]", kubevirt.display())),
            "{command}: {text}"
        );
        if command == "vmi" {
            assert!(text.contains("model: Skylake"), "{command}: {text}");
        }
    }
    // A bare configuration, not wrapped in a KubeVirt resource: the key is at its top level.
    let bare = dir.path().join("configuration.yaml");
    std::fs::write(
        &bare,
        "developerConfiguration:\n  featureGates: []\n\nmachineTyp: pc-q35-rhel9.2.0\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .arg("validate")
        .arg("--cluster-config")
        .arg(&bare)
        .arg(&vm)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "{}:4: warning[KV007] unknown field `spec.configuration.machineTyp`",
            bare.display()
        )),
        "{text}"
    );
}

/// A cluster configuration with several mistakes gets them all in one run, each at its line, in
/// the order of the lines, and nothing is judged against it (exit 2).
#[test]
fn every_mistake_of_a_cluster_configuration_is_reported_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let kubevirt = dir.path().join("kubevirt.yaml");
    std::fs::write(
        &kubevirt,
        "apiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata: {name: kubevirt}\nspec:\n  \
         configuration:\n    imagePullPolicy: Sometimes\n    machineType: 5\n    network:\n      \
         defaultNetworkInterface: tap\n    developerConfiguration:\n      featureGates: Snapshot\n",
    )
    .unwrap();
    let vm = Path::new(ROOT).join("examples/vms/fedora-server.yaml");
    let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .arg("validate")
        .arg("--cluster-config")
        .arg(&kubevirt)
        .arg(&vm)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let expected = format!(
        "kvrender: error: --cluster-config {}: line 6: invalid \
         `spec.configuration.imagePullPolicy`: `Sometimes` (expected `Always`, `IfNotPresent` or \
         `Never`); line 7: `spec.configuration.machineType` must be a string; line 9: invalid \
         `spec.configuration.network.defaultNetworkInterface`: `tap`; line 11: \
         `spec.configuration.developerConfiguration.featureGates` must be a list\n",
        kubevirt.display()
    );
    assert_eq!(stderr, expected);
}

/// KubeVirt's VM webhook applies the cluster defaults to every VM before it admits it: where the
/// default interface it would add is one the cluster refuses (`slirp`, or `bridge` where the pod
/// network does not allow it), a VM that lists no interfaces or networks is refused, with an
/// instancetype and preference or without; a VM with its own interface is not.
#[test]
fn a_default_interface_the_cluster_refuses_refuses_the_vms_that_need_it() {
    let vms = "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
               metadata: {name: small}\nspec: {cpu: {guest: 1}, memory: {guest: 1Gi}}\n---\n\
               apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: sized}\n\
               spec:\n  runStrategy: Always\n  instancetype: {name: small}\n  template:\n    \
               spec:\n      domain: {devices: {}}\n---\n\
               apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: plain}\n\
               spec:\n  runStrategy: Always\n  template:\n    spec:\n      \
               domain: {devices: {}, memory: {guest: 1Gi}}\n---\n\
               apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: wired}\n\
               spec:\n  runStrategy: Always\n  instancetype: {name: small}\n  template:\n    \
               spec:\n      domain:\n        devices:\n          interfaces:\n          \
               - {name: default, masquerade: {}}\n      networks:\n      - {name: default, pod: {}}\n";
    let (dir, file) = temp_file("vms.yaml", vms);
    for (config, message) in [
        (
            "network: {defaultNetworkInterface: slirp}\n",
            "slirp interface is deprecated as of v1.3",
        ),
        (
            "network: {permitBridgeInterfaceOnPodNetwork: false}\n",
            "bridge interface is not enabled in kubevirt-config",
        ),
    ] {
        let cluster = dir.path().join("cluster.yaml");
        std::fs::write(&cluster, config).unwrap();
        let out = run_on(
            &[
                "validate",
                "--no-default-catalog",
                "--cluster-config",
                cluster.to_str().unwrap(),
            ],
            &file,
        );
        let report = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(out.status.code(), Some(1), "{config}: {report}");
        for name in ["sized", "plain"] {
            assert!(
                report.contains(&format!(
                    "error[KV012] VirtualMachine/{name}: spec.template.spec: {message}"
                )),
                "{config}: {report}"
            );
        }
        assert!(
            !report.contains("VirtualMachine/wired"),
            "{config}: {report}"
        );
    }
    // The default configuration's bridge is allowed.
    let out = run_on(&["validate", "--no-default-catalog"], &file);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// An unknown top-level field is an error on an instancetype or preference, which KubeVirt's
/// webhook refuses, and a warning on a VM (kubectl's strict field validation refuses it; a
/// client that does not validate fields has it dropped). `status` passes the webhook.
#[test]
fn unknown_top_level_fields_of_instancetypes_and_preferences_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let doc = |kind: &str, spec: &str| {
        format!(
            "apiVersion: {kind}\nmetadata: {{name: a}}\nspec: {spec}\nextra: {{a: 1}}\nstatus: {{}}\n"
        )
    };
    let it = "instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype";
    let pref = "instancetype.kubevirt.io/v1beta1\nkind: VirtualMachinePreference";
    let vm = "kubevirt.io/v1\nkind: VirtualMachine";
    for (name, kind, spec, errors) in [
        ("it.yaml", it, "{cpu: {guest: 1}, memory: {guest: 1Gi}}", 1),
        ("pref.yaml", pref, "{}", 1),
        (
            "vm.yaml",
            vm,
            "{template: {spec: {domain: {devices: {}}}}}",
            0,
        ),
    ] {
        std::fs::write(tmp.path().join(name), doc(kind, spec)).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
            .current_dir(tmp.path())
            .args(["validate", "--no-default-catalog", name])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            text.matches("error[KV022]").count(),
            errors,
            "{name}: {text}"
        );
        assert_eq!(
            out.status.code(),
            Some(i32::from(errors == 1)),
            "{name}: {text}"
        );
        if errors == 1 {
            assert!(
                text.contains(
                    "extra: unknown field `extra` at the top level: KubeVirt's webhook refuses"
                ),
                "{text}"
            );
        }
        // A VM has a status; the other two do not, and their webhook lets it pass.
        let status_warned = text.contains("status: unknown field `status`");
        assert_eq!(status_warned, errors == 1, "{name}: {text}");
    }
}

/// A whole number written with a fraction or an exponent (`2.0`, `1e0`) reaches the API server
/// as an integer, since every client sends JSON and JSON prints it so: it is taken wherever an
/// integer is, and printed as one. `2.5` stays a decimal and is refused.
#[test]
fn whole_floats_are_integers() {
    let (_tmp, file) = temp_file(
        "w.yaml",
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
         metadata: {name: it}\nspec:\n  cpu: {guest: 2.0}\n  memory: {guest: 1Gi}\n---\n\
         apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: vm}\nspec:\n  \
         instancetype: {name: it}\n  template:\n    spec:\n      \
         terminationGracePeriodSeconds: 3e1\n      domain:\n        devices: {}\n",
    );
    let out = run_on(&["validate", "--no-default-catalog"], &file);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = run_on(&["expand", "--no-default-catalog"], &file);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\n          sockets: 2\n"), "{text}");
    assert!(
        text.contains("terminationGracePeriodSeconds: 30\n"),
        "{text}"
    );
    assert!(!text.contains(".0"), "{text}");

    let (_tmp, half) = temp_file(
        "h.yaml",
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
         metadata: {name: it}\nspec:\n  cpu: {guest: 2.5}\n  memory: {guest: 1Gi}\n",
    );
    let out = run_on(&["validate", "--no-default-catalog"], &half);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("h.yaml:5: error[KV004] VirtualMachineClusterInstancetype/it: spec.cpu.guest: must be a non-negative integer, not a decimal number"),
        "{text}"
    );
}

/// Each integer field is read into its Go type: `bootOrder` is a `uint` (2^32 is fine), a
/// spread constraint's `maxSkew` an `int32` (the API server stores 2^31, KubeVirt cannot
/// decode it: `validate` and `expand` refuse it). And KubeVirt's VM webhook reads the numbers
/// of a VM's `spec` as 64-bit floats first, so a whole number beyond 2^53-1 is refused there
/// (while `expand-spec`, which does not, expands it); one a preference brings refuses the VMI.
#[test]
fn integers_are_read_as_kubevirt_reads_them() {
    let vm = |spec: &str| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {{name: vm}}\nspec:\n  \
             runStrategy: Always\n  template:\n    spec:\n{spec}      domain:\n        \
             memory: {{guest: 1Gi}}\n        devices:\n          disks:\n          \
             - name: d\n            bootOrder: 4294967296\n      volumes:\n      \
             - name: d\n        containerDisk: {{image: x}}\n"
        )
    };
    let (_tmp, fine) = temp_file("fine.yaml", &vm(""));
    let out = run_on(&["validate", "--no-default-catalog"], &fine);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let out = run_on(&["expand", "--no-default-catalog"], &fine);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("bootOrder: 4294967296\n"));

    let skew = "      topologySpreadConstraints:\n      - {maxSkew: 2147483648, \
                topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n";
    let (_tmp, narrow) = temp_file("narrow.yaml", &vm(skew));
    let out = run_on(&["validate", "--no-default-catalog"], &narrow);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("narrow.yaml:9: error[KV004] VirtualMachine/vm: spec.template.spec.topologySpreadConstraints[0].maxSkew: must be an integer from -2^31 to 2^31-1, not 2147483648: the API server stores it"),
        "{text}"
    );
    let out = run_on(&["expand", "--no-default-catalog"], &narrow);
    assert_eq!(out.status.code(), Some(1), "{out:?}");

    // A probe's port is a name or an `int32`.
    for (port, refused) in [
        ("http", false),
        ("8080", false),
        ("2147483648", true),
        ("true", true),
    ] {
        let probe = format!("      readinessProbe: {{httpGet: {{port: {port}}}}}\n");
        let (_tmp, file) = temp_file("port.yaml", &vm(&probe));
        let want = if refused { Some(1) } else { Some(0) };
        assert_eq!(validate_and_expand_exits(&file), (want, want), "{port}");
    }

    let (_tmp, big) = temp_file(
        "big.yaml",
        &vm("      terminationGracePeriodSeconds: 9007199254740992\n"),
    );
    let out = run_on(&["validate", "--no-default-catalog"], &big);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("big.yaml:8: error[KV004] VirtualMachine/vm: spec.template.spec.terminationGracePeriodSeconds: 9007199254740992 is beyond 2^53-1 (9007199254740991): KubeVirt's webhook reads"),
        "{text}"
    );
    let out = run_on(&["expand", "--no-default-catalog"], &big);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // One below is exact: nothing to say.
    let (_tmp, exact) = temp_file(
        "exact.yaml",
        &vm("      terminationGracePeriodSeconds: 9007199254740991\n"),
    );
    let out = run_on(&["validate", "--no-default-catalog"], &exact);
    assert_eq!(out.status.code(), Some(0), "{out:?}");

    // A preference's grace period: its own webhook checks no schema, the VM's passes, the VMI
    // it starts is refused.
    let preference = "apiVersion: instancetype.kubevirt.io/v1beta1\n\
                      kind: VirtualMachineClusterPreference\nmetadata: {name: p}\nspec:\n  \
                      preferredTerminationGracePeriodSeconds: 9223372036854775807\n---\n";
    let text = vm("").replace(
        "spec:\n  runStrategy",
        "spec:\n  preference: {name: p}\n  runStrategy",
    );
    let (_tmp, from_preference) = temp_file("p.yaml", &format!("{preference}{text}"));
    let out = run_on(&["validate", "--no-default-catalog"], &from_preference);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("warning[KV034] VirtualMachine/vm: spec.template.spec.terminationGracePeriodSeconds: 9223372036854775807 is beyond 2^53-1"),
        "{text}"
    );
    assert!(
        text.contains("then refuses the VirtualMachineInstance it starts"),
        "{text}"
    );
    assert_eq!(text.matches("KV0").count(), 1, "{text}");
    let out = run_on(&["vmi", "--no-default-catalog"], &from_preference);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("KubeVirt's VMI webhook refuses this VirtualMachineInstance: 9223372036854775807 is beyond 2^53-1"),
        "{text}"
    );
}

/// A time stamp is a `metav1.Time`: `null`, or a string Go's RFC 3339 layout reads. Where the
/// API server checks `metadata` it refuses any other; in a template's `metadata`, which it
/// keeps as written, KubeVirt cannot decode it: `validate` and `expand` refuse it alike.
#[test]
fn time_stamps_are_times_go_reads() {
    let vm = |template_time: &str| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm\n  \
             creationTimestamp: null\nspec:\n  runStrategy: Halted\n  template:\n    \
             metadata:\n      creationTimestamp: {template_time}\n    spec:\n      \
             domain:\n        devices: {{}}\n        memory: {{guest: 1Gi}}\n"
        )
    };
    for good in [
        "null",
        "2024-01-01T10:00:00.5+02:00",
        "\"2024-01-01T10:00:00Z\"",
    ] {
        let (_tmp, file) = temp_file("good.yaml", &vm(good));
        assert_eq!(
            validate_and_expand_exits(&file),
            (Some(0), Some(0)),
            "{good}"
        );
    }
    for bad in [
        "yesterday",
        "2024-01-01t10:00:00z",
        "2024-02-30T00:00:00Z",
        "5",
    ] {
        let (_tmp, file) = temp_file("bad.yaml", &vm(bad));
        let out = run_on(&["validate", "--no-default-catalog"], &file);
        assert_eq!(out.status.code(), Some(1), "{bad}: {out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("bad.yaml:10: error[KV004] VirtualMachine/vm: spec.template.metadata.creationTimestamp: must be a time like `2024-01-01T10:00:00Z` (RFC 3339)"),
            "{text}"
        );
        assert!(text.contains("KubeVirt cannot decode it"), "{text}");
        let out = run_on(&["expand", "--no-default-catalog"], &file);
        assert_eq!(out.status.code(), Some(1), "{bad}: {out:?}");
    }
    // Any object's own `metadata`, as the API server reads it: a date alone is no time.
    let (_tmp, file) = temp_file(
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  \
         creationTimestamp: 2024-01-01\n",
    );
    let out = run_on(&["validate", "--no-default-catalog"], &file);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("cm.yaml:5: error[KV004] ConfigMap/c: metadata.creationTimestamp: must be a time like `2024-01-01T10:00:00Z` (RFC 3339), not \"2024-01-01\": the API server refuses the object"),
        "{text}"
    );
}

/// The API server drops a `null` field of a mapping but keeps a list's `null` items, and
/// refuses them where its schema checks the list: not in a template's `metadata` (kept as
/// written), and not among a VM's DataVolume templates (the one list whose items may be null).
#[test]
fn null_items_of_lists_are_refused_where_the_schema_checks_them() {
    let (_tmp, file) = temp_file(
        "n.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: vm, finalizers: [null]}\n\
         spec:\n  runStrategy: Halted\n  dataVolumeTemplates: [null]\n  template:\n    \
         metadata: {finalizers: [null]}\n    spec:\n      \
         dnsConfig: {nameservers: [null], searches: [~]}\n      domain:\n        \
         memory: {guest: 1Gi}\n        devices:\n          disks: [null]\n          \
         interfaces: [{name: default, masquerade: {}}]\n      \
         networks: [{name: default, pod: {}}]\n      tolerations: [null]\n",
    );
    let out = run_on(&["validate", "--no-default-catalog"], &file);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let refused: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("error[KV004]"))
        .filter_map(|l| l.split(": ").nth(2))
        .collect();
    assert_eq!(
        refused,
        [
            "spec.template.spec.dnsConfig.nameservers[0]",
            "spec.template.spec.dnsConfig.searches[0]",
            "spec.template.spec.domain.devices.disks[0]",
            "spec.template.spec.tolerations[0]",
        ],
        "{text}"
    );
    assert!(
        text.contains("must be a mapping, not null: the API server keeps a list's `null` items and refuses them"),
        "{text}"
    );
}

/// The API server checks the metadata of every kind alike, so objects kvrender otherwise passes
/// through are held to it too: a name, field names and types of `ObjectMeta`, label and
/// annotation keys and values. `validate`, `build` and the KRM function say so at the line;
/// tool configuration, which is never applied, is left alone.
#[test]
fn any_objects_metadata_is_checked_as_the_api_server_checks_it() {
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n---\n\
         apiVersion: v1\nkind: Secret\nmetadata:\n  name: 0123\n---\n\
         apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ../../etc\n---\n\
         apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: [shop]\n  \
         labels:\n    tier: front end\n  annotations:\n    replicas: 3\n  lables: {a: b}\n---\n\
         apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: nightly-\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    \
         config.kubernetes.io/local-config: \"true\"\n  labels: [not, checked]\n";
    let (tmp, file) = temp_file("other.yaml", text);
    let wanted = [
        (
            3,
            "error[KV003] ConfigMap/<no name>: metadata.name: the ConfigMap has no",
        ),
        (
            8,
            "error[KV003] Secret/<no name>: metadata.name: `metadata.name` must be a string",
        ),
        (13, "error[KV003] Deployment/\"../../etc\": metadata.name:"),
        (
            19,
            "error[KV004] Service/web: metadata.namespace: must be a string, not a list",
        ),
        (
            21,
            "error[KV006] Service/web: metadata.labels[\"tier\"]: label value \"front end\"",
        ),
        (
            23,
            "error[KV004] Service/web: metadata.annotations.replicas: must be a string",
        ),
        (
            24,
            "warning[KV022] Service/web: metadata.lables: unknown field `lables`",
        ),
    ];
    let check = |what: &str, out: &std::process::Output, findings: &str| {
        assert_eq!(out.status.code(), Some(1), "{what}: {findings}");
        for (line, want) in wanted {
            let at = format!("other.yaml:{line}: {want}");
            assert!(findings.contains(&at), "{what}: no `{at}` in:\n{findings}");
        }
        let lines = findings.lines().filter(|l| l.contains("[KV")).count();
        assert_eq!(lines, wanted.len(), "{what}: only these:\n{findings}");
    };
    let out = run_on(&["validate", "--no-default-catalog"], &file);
    check("validate", &out, &String::from_utf8_lossy(&out.stdout));

    let dir = tmp.path().join("out");
    let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .current_dir(tmp.path())
        .args(["build", "other.yaml", "-o", "out"])
        .output()
        .unwrap();
    check("build", &out, &String::from_utf8_lossy(&out.stderr));
    assert!(!dir.exists(), "build wrote files despite errors");

    // The KRM function: each finding is a result naming the field and the file.
    let mut items = String::new();
    for doc in text.split("---\n") {
        let value: serde_json::Value = serde_saphyr::from_str(doc).unwrap();
        items.push_str(&format!("- {}\n", serde_json::to_string(&value).unwrap()));
    }
    let list = format!("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{items}");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kvrender"));
    cmd.arg("fn");
    let out = run_with_stdin(cmd, &list);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let parsed: serde_json::Value =
        serde_saphyr::from_str(&String::from_utf8_lossy(&out.stdout)).expect("a ResourceList");
    let results = parsed["results"].as_array().expect("results");
    let mut fields: Vec<(&str, &str)> = results
        .iter()
        .filter(|r| r["severity"] != "info")
        .map(|r| {
            (
                r["resourceRef"]["kind"].as_str().unwrap_or(""),
                r["field"]["path"].as_str().unwrap_or(""),
            )
        })
        .collect();
    fields.sort();
    assert_eq!(
        fields,
        [
            ("ConfigMap", "metadata.name"),
            ("Deployment", "metadata.name"),
            ("Secret", "metadata.name"),
            ("Service", "metadata.annotations.replicas"),
            ("Service", "metadata.labels[\"tier\"]"),
            ("Service", "metadata.lables"),
            ("Service", "metadata.namespace"),
        ],
        "{results:#?}"
    );
}

/// A VM the API server refuses for a field its schema requires (no `domain`, a disk without a
/// name) is an error at that field's line in `validate` and `build`, and `build -o` writes
/// nothing; the same VM with the fields is clean.
#[test]
fn a_vm_without_the_fields_its_schema_requires_is_refused() {
    let text = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: a\nspec:\n  \
         instancetype: {name: u1.small}\n  template:\n    spec:\n      volumes:\n      \
         - name: root\n        containerDisk: {image: quay.io/containerdisks/fedora:41}\n---\n\
         apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: b\nspec:\n  \
         template:\n    spec:\n      domain:\n        devices:\n          disks:\n          \
         - disk: {bus: virtio}\n";
    let (tmp, file) = temp_file("vms.yaml", text);
    let wanted = [
        "vms.yaml:8: error[KV004] VirtualMachine/a: spec.template.spec.domain: required by the \
         schema of its kind",
        "vms.yaml:23: error[KV004] VirtualMachine/b: spec.template.spec.domain.devices.disks[0].name: \
         required by the schema of its kind",
    ];
    let validate = run_on(&["validate"], &file);
    let out = tmp.path().join("out");
    let build = run_on(&["build", "-o", out.to_str().unwrap()], &file);
    for (what, run) in [("validate", &validate), ("build", &build)] {
        let findings = String::from_utf8_lossy(&run.stdout).to_string()
            + &String::from_utf8_lossy(&run.stderr);
        assert_eq!(run.status.code(), Some(1), "{what}: {findings}");
        for want in wanted {
            assert!(findings.contains(want), "{what}: {want}\n{findings}");
        }
    }
    assert!(!out.exists(), "build -o wrote files for refused VMs");

    let fixed = text
        .replace(
            "    spec:\n      volumes:",
            "    spec:\n      domain: {devices: {}}\n      volumes:",
        )
        .replace(
            "- disk: {bus: virtio}",
            "- {name: root, disk: {bus: virtio}}",
        );
    let (_tmp, file) = temp_file("vms.yaml", &fixed);
    let run = run_on(&["validate"], &file);
    assert_eq!(run.status.code(), Some(0), "{}", describe(&run));
}

/// The VM webhook's own checks of a spec (`KV034`): warnings at the field's line that name
/// KubeVirt's field, errors under `--strict`.
#[test]
fn a_vm_spec_the_vm_webhook_refuses_is_a_warning_and_strict_makes_it_an_error() {
    let text = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: web\nspec:\n  \
         running: true\n  runStrategy: Always\n  template:\n    spec:\n      domain:\n        \
         devices:\n          disks:\n          - name: root\n          - name: data\n          \
         interfaces:\n          - name: default\n            masquerade: {}\n      networks:\n      \
         - name: pod\n        pod: {}\n      volumes:\n      - name: root\n        \
         containerDisk: {image: quay.io/containerdisks/fedora:41}\n";
    let (_tmp, file) = temp_file("web.yaml", text);
    let wanted = [
        "web.yaml:6: warning[KV034] VirtualMachine/web: spec.running: Running and RunStrategy \
         are mutually exclusive",
        "web.yaml:14: warning[KV034] VirtualMachine/web: spec.template.spec.domain.devices.disks[1].name: \
         spec.template.spec.domain.devices.disks[1].Name 'data' not found",
        "web.yaml:16: warning[KV034] VirtualMachine/web: spec.template.spec.domain.devices.interfaces[0].name: \
         spec.template.spec.domain.devices.interfaces[0].name 'default' not found",
        "web.yaml:19: warning[KV034] VirtualMachine/web: spec.template.spec.networks[0].name: \
         spec.template.spec.networks[0].name 'pod' not found",
        // Without its network, the masquerade interface is not on the pod network either.
        "web.yaml:16: warning[KV034] VirtualMachine/web: spec.template.spec.domain.devices.interfaces[0].name: \
         Masquerade interface only implemented with pod network",
    ];
    let out = run_on(&["validate"], &file);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(0), "{text}");
    for want in wanted {
        assert!(text.contains(want), "{want}\n{text}");
    }
    assert!(text.contains("Found 0 errors and 5 warnings."), "{text}");
    let strict = run_on(&["validate", "--strict"], &file);
    let text = String::from_utf8_lossy(&strict.stdout).to_string();
    assert_eq!(strict.status.code(), Some(1), "{text}");
    for want in wanted {
        assert!(
            text.contains(&want.replace("warning[KV034]", "error[KV034]")),
            "{want}\n{text}"
        );
    }
}

/// Without a PATH, `validate` reads the current directory, as `build` does.
#[test]
fn without_a_path_the_current_directory_is_validated() {
    let (tmp, _file) = temp_file(
        "vm.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: v}\nspec:\n  \
         runStrategy: Always\n  instancetype: {name: u1.smal}\n  \
         template: {spec: {domain: {devices: {}}}}\n",
    );
    let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .current_dir(tmp.path())
        .args(["validate", "--strict"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.starts_with("./vm.yaml:6: error[KV011]"), "{text}");
}

/// The benchmarks' VMs are ones the cluster would admit: each has the `domain` and `devices`
/// the schema requires, and a size that meets its preference's requirements, whether an
/// instancetype gives it or the VM sets its own. A benchmark of VMs the cluster refuses would
/// time a path no real repository takes.
#[test]
fn the_benchmarks_generated_vms_are_admitted() {
    for seed in [7, 1, 2026] {
        let text = crate::vm_gen::generate(600, seed);
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kvrender"));
        cmd.args(["validate", "--strict", "-"]);
        let out = run_with_stdin(cmd, text);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "seed {seed}: {}",
            describe(&out)
        );
        assert!(
            stdout.contains("No problems found in 600 objects."),
            "seed {seed}: {stdout}"
        );
    }
}

/// KubeVirt validates a VM with its instancetype, preference and the cluster defaults applied:
/// `KV034` reports what the preference or instancetype brings (a CD-ROM bus, more sockets than
/// `maxSockets`), saying so, and not what the preference makes right (SMM for Secure Boot); a
/// VM whose instancetype and preference are not found is judged as written, as KubeVirt does.
#[test]
fn vm_spec_judges_the_vm_as_kubevirt_applies_its_instancetype_and_preference() {
    let vms = "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterPreference\n\
               metadata: {name: virtio-cdrom}\nspec: {devices: {preferredCdromBus: virtio}}\n---\n\
               apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
               metadata: {name: wide}\nspec: {cpu: {guest: 8, maxSockets: 2}, memory: {guest: 1Gi}}\n---\n\
               apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: iso}\n\
               spec:\n  runStrategy: Always\n  preference: {name: virtio-cdrom}\n  template:\n    \
               spec:\n      domain:\n        devices:\n          disks:\n          \
               - {name: iso, cdrom: {}}\n      volumes:\n      \
               - {name: iso, containerDisk: {image: example.com/iso}}\n---\n\
               apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: wide}\n\
               spec:\n  runStrategy: Always\n  instancetype: {name: wide}\n  \
               preference: {name: virtio-cdrom}\n  template:\n    spec:\n      domain: {devices: {}}\n---\n\
               apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: secure}\n\
               spec:\n  runStrategy: Always\n  instancetype: {name: u1.large}\n  \
               preference: {name: windows.11}\n  template:\n    spec:\n      domain: {devices: {}}\n---\n\
               apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: no-smm}\n\
               spec:\n  runStrategy: Always\n  instancetype: {name: u1.large}\n  \
               preference: {name: windows.11}\n  template:\n    spec:\n      \
               domain: {devices: {}, features: {smm: {enabled: false}}}\n---\n\
               apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: lost}\n\
               spec:\n  runStrategy: Always\n  instancetype: {name: nowhere}\n  \
               preference: {name: nothing}\n  template:\n    spec:\n      \
               domain: {devices: {}, cpu: {isolateEmulatorThread: true}, \
               firmware: {bootloader: {efi: {}}}}\n";
    let (_dir, file) = temp_file("vms.yaml", vms);
    let out = run_on(&["validate", "--strict"], &file);
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{report}");
    let note = "(KubeVirt checks the VM with its instancetype, preference and the cluster \
                defaults applied; the manifest alone would pass)";
    for expected in [
        format!(
            "error[KV034] VirtualMachine/iso: spec.template.spec.domain.devices.disks[0].cdrom.bus: \
             Bus type virtio is invalid for CD-ROM device {note}"
        ),
        format!(
            "error[KV034] VirtualMachine/wide: spec.template.spec.domain.cpu.sockets: Number of \
             sockets in CPU topology is greater than the maximum sockets allowed {note}"
        ),
        // The VM turns SMM off, the preference turns Secure Boot on.
        format!(
            "error[KV034] VirtualMachine/no-smm: spec.template.spec.domain: \
             spec.template.spec.domain has EFI SecureBoot enabled. SecureBoot requires SMM, \
             which is currently disabled. {note}"
        ),
    ] {
        assert!(report.contains(&expected), "{expected}\n---\n{report}");
    }
    // KubeVirt lets lookups fail and validates the VM as written (plus the defaults): no
    // preference brings SMM, no instancetype dedicated CPUs.
    for expected in [
        "error[KV034] VirtualMachine/lost: spec.template.spec.domain: spec.template.spec.domain \
         has EFI SecureBoot enabled. SecureBoot requires SMM, which is currently disabled.\n",
        "error[KV034] VirtualMachine/lost: spec.template.spec.domain.cpu.isolateEmulatorThread: \
         IsolateEmulatorThread should be only set in combination with DedicatedCPUPlacement\n",
    ] {
        assert!(report.contains(expected), "{expected}\n---\n{report}");
    }
    // windows.11 brings SMM with its Secure Boot.
    assert!(!report.contains("VirtualMachine/secure"), "{report}");
    assert_eq!(report.matches("[KV034]").count(), 5, "{report}");
}

/// A volume source's fields are checked like the rest of the VM. In a template's `metadata`,
/// which KubeVirt's schema leaves open, an unknown field is kept by the API server rather than
/// refused: the warning says so.
#[test]
fn volume_sources_are_checked_and_kept_fields_are_told_apart() {
    let (_tmp, file) = temp_file(
        "vm.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm\nspec:\n  \
         runStrategy: Always\n  template:\n    metadata:\n      lables: {app: web}\n    spec:\n      \
         domain:\n        devices: {disks: [{name: root, disk: {}}]}\n        \
         memory: {guest: 1Gi}\n      volumes:\n      - name: root\n        containerDisk:\n          \
         img: quay.io/containerdisks/fedora\n          imagePullPolicy: true\n",
    );
    let out = run_on(&["validate", "--no-default-catalog"], &file);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    for (line, want) in [
        (
            9,
            "warning[KV022] VirtualMachine/vm: spec.template.metadata.lables: unknown field \
             `lables` in `spec.template.metadata`: the API server keeps it (the schema \
             preserves unknown fields there), but KubeVirt does not read it",
        ),
        (
            17,
            "warning[KV022] VirtualMachine/vm: spec.template.spec.volumes[0].containerDisk.img: \
             unknown field `img` in `spec.template.spec.volumes[0].containerDisk`: `kubectl \
             apply` refuses the object",
        ),
        (
            18,
            "error[KV004] VirtualMachine/vm: \
             spec.template.spec.volumes[0].containerDisk.imagePullPolicy: must be a string, not \
             a boolean",
        ),
    ] {
        let prefix = format!("vm.yaml:{line}: {want}");
        assert!(text.contains(&prefix), "no `{prefix}` in:\n{text}");
    }
    // `expand` refuses the wrongly typed VM, as KubeVirt cannot decode it.
    let expand = run_on(&["expand", "--no-default-catalog"], &file);
    assert_eq!(expand.status.code(), Some(1));
    assert!(expand.stdout.is_empty());
}

/// A manifest kept for Flux's post-build substitution is not yet what the cluster gets: each
/// finding on a line with a `${...}` reference names it and says how to substitute first, the
/// other findings are left as they are, and the substituted manifest passes.
#[test]
fn findings_on_lines_with_flux_variables_say_to_substitute_first() {
    let vm = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  \
              name: ${cluster_name}-db\n  namespace: ${tenant}\nspec:\n  runStrategy: Always\n  \
              instancetype:\n    name: ${db_size:=u1.medium}\n  preference:\n    name: fedora\n  \
              template:\n    spec:\n      domain:\n        devices: {}\n      volumes:\n      \
              - name: root\n        containerDisk:\n          \
              image: quay.io/containerdisks/fedora:${fedora_version}\n";
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("vm.yaml");
    std::fs::write(&file, vm).unwrap();
    let path = file.to_str().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .args(["validate", path])
        .output()
        .expect("kvrender runs");
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let report = String::from_utf8(out.stdout).unwrap();
    let command = format!("(`flux envsubst --strict < {path} | kvrender validate -`)");
    let finding = |line: u32| {
        report
            .lines()
            .find(|l| l.starts_with(&format!("{path}:{line}: ")))
            .unwrap_or_else(|| panic!("no finding on line {line}:\n{report}"))
    };
    for (line, reference) in [(5, "${tenant}"), (9, "${db_size:=u1.medium}")] {
        let found = finding(line);
        assert!(
            found.contains(&format!("; `{reference}` is a variable reference"))
                && found.ends_with(&command),
            "{found}"
        );
    }
    // The memory the preference asks for is missing because the instancetype was not found:
    // its line holds no reference, so its finding says nothing of one.
    let memory = finding(14);
    assert!(
        memory.contains("[KV033]") && !memory.contains("variable reference"),
        "{memory}"
    );

    // What `flux envsubst` makes of it with `cluster_name=prod` and `tenant=team-a`.
    let substituted = vm
        .replace("${cluster_name}", "prod")
        .replace("${tenant}", "team-a")
        .replace("${db_size:=u1.medium}", "u1.medium")
        .replace("${fedora_version}", "40");
    let mut validate = Command::new(env!("CARGO_BIN_EXE_kvrender"));
    validate.args(["validate", "-"]);
    let out = run_with_stdin(validate, substituted);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "No problems found in 1 object.\n"
    );
}

/// `kvrender validate --format json -` of `text`.
fn validate_json(text: &str) -> std::process::Output {
    let mut cmd = crate::common::kvrender();
    cmd.args(["validate", "--format", "json", "-"]);
    run_with_stdin(cmd, text)
}

/// The findings of a `--format json` run on objects of `kind`: `"<code> <name>"`, the field,
/// the message and the line.
fn findings_on(out: &std::process::Output, kind: &str) -> Vec<(String, String, String, u64)> {
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["object"]["kind"] == kind)
        .map(|f| {
            (
                format!(
                    "{} {}",
                    f["code"].as_str().unwrap(),
                    f["object"]["name"].as_str().unwrap()
                ),
                f["field"].as_str().unwrap_or("").to_string(),
                f["message"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

/// A VirtualMachinePool as platform teams write one: KubeVirt admits it, and its VMs fail. The
/// findings about its VMs are on the pool, at the template's lines, once each; those of a pool
/// KubeVirt refuses stop at the pool.
#[test]
fn a_pool_is_checked_as_its_webhook_checks_it_and_its_vms_as_vms() {
    const POOLS: &str = "\
apiVersion: v1
kind: Secret
metadata: {name: keys-0}
---
apiVersion: pool.kubevirt.io/v1beta1
kind: VirtualMachinePool
metadata:
  name: web
spec:
  replicas: 2
  nameGeneration: {appendIndexToSecretRefs: true}
  selector:
    matchLabels: {app: web}
  virtualMachineTemplate:
    metadata:
      labels: {app: web}
    spec:
      runStrategy: Always
      instancetype:
        name: u1.mediumm
      preference:
        name: fedora
      template:
        spec:
          domain:
            devices: {}
            cpuu: {}
          volumes:
          - name: keys
            secret: {secretName: keys}
---
apiVersion: pool.kubevirt.io/v1beta1
kind: VirtualMachinePool
metadata:
  name: refused
spec:
  maxUnavailable: 0%
  selector:
    matchLabels: {app: db}
  virtualMachineTemplate:
    metadata:
      labels: {app: db}
    spec:
      runStrategy: Always
      instancetype:
        name: u1.mediumm
      template:
        spec:
          domain:
            devices: {}
";
    let out = validate_json(POOLS);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let findings = findings_on(&out, "VirtualMachinePool");
    let about = |code: &str| -> Vec<&(String, String, String, u64)> {
        findings.iter().filter(|f| f.0 == code).collect()
    };
    // The typo'd instancetype, at its line, about the VMs the pool creates.
    let missing = about("KV011 web");
    assert_eq!(missing.len(), 1, "{findings:#?}");
    assert_eq!(
        missing[0].1,
        "spec.virtualMachineTemplate.spec.instancetype"
    );
    assert_eq!(missing[0].3, 20);
    assert!(
        missing[0].2.contains("did you mean \"u1.medium\""),
        "{}",
        missing[0].2
    );
    assert!(missing[0].2.ends_with(
        "(about each VM the pool creates from its template, \"web-0\" the first: KubeVirt \
         admits the pool itself)"
    ));
    // The unknown field once, in the pool's words, not again for its VM.
    let unknown = about("KV022 web");
    assert_eq!(unknown.len(), 1, "{findings:#?}");
    assert_eq!(
        unknown[0].1,
        "spec.virtualMachineTemplate.spec.template.spec.domain.cpuu"
    );
    // The Secret the controller names `keys-0` is there: no renamed reference.
    assert!(about("KV015 web").is_empty(), "{findings:#?}");
    // The refused pool: its own finding, and nothing about VMs it never creates.
    let refused: Vec<_> = findings
        .iter()
        .filter(|f| f.0.ends_with(" refused"))
        .collect();
    assert_eq!(refused.len(), 1, "{findings:#?}");
    assert_eq!(refused[0].0, "KV035 refused");
    assert_eq!(refused[0].1, "spec.maxUnavailable");
    assert_eq!(
        refused[0].2,
        "maxUnavailable percentage value 0 must be between 1 and 100"
    );
}

/// A VirtualMachineInstanceReplicaSet is checked as its webhook checks it, and the VMI its
/// controller creates as a VMI, presets applied: the findings about the VMI are on the replica
/// set, at the template's lines; a replica set KubeVirt refuses, or whose controller creates
/// nothing, has none about VMIs.
#[test]
fn a_replica_set_is_checked_as_its_webhook_checks_it_and_its_vmis_as_vmis() {
    const SETS: &str = "\
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstancePreset
metadata: {name: a, namespace: apps}
spec:
  selector: {matchLabels: {tier: web}}
  domain:
    cpu: {cores: 2}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstancePreset
metadata: {name: b, namespace: apps}
spec:
  selector: {matchLabels: {app: web}}
  domain:
    cpu: {cores: 4}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstanceReplicaSet
metadata: {name: web, namespace: apps}
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web, tier: web, kubevirt.io/nodeName: n1}
    spec:
      domain:
        devices: {}
        memory: {guest: 1Gi}
        cpuu: {}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstanceReplicaSet
metadata: {name: refused, namespace: apps}
spec:
  selector:
    matchExpressions: [{key: app, operator: Near}]
  template:
    metadata:
      labels: {app: web}
    spec:
      domain:
        devices: {}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstanceReplicaSet
metadata: {name: idle, namespace: apps}
spec:
  selector: {}
  template:
    spec:
      domain:
        devices: {}
";
    let out = validate_json(SETS);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let findings = findings_on(&out, "VirtualMachineInstanceReplicaSet");
    let named = |name: &str| -> Vec<&(String, String, String, u64)> {
        findings
            .iter()
            .filter(|f| f.0.ends_with(&format!(" {name}")))
            .collect()
    };
    // The two presets select the VMI and conflict: refused at each start, said of the replica
    // set at the template's labels. The reserved label is the controller's to set, and the
    // unknown field is reported once, as the replica set's.
    let web = named("web");
    assert_eq!(web.len(), 2, "{findings:#?}");
    let unknown = web.iter().find(|f| f.0 == "KV022 web").expect("KV022");
    assert_eq!(unknown.1, "spec.template.spec.domain.cpuu");
    let conflict = web.iter().find(|f| f.0 == "KV034 web").expect("KV034");
    assert_eq!(conflict.1, "spec.template.metadata.labels");
    assert_eq!(conflict.3, 25, "{conflict:#?}");
    assert!(
        conflict.2.starts_with(
            "VirtualMachinePresets cannot be applied due to conflicts: presets 'a' and 'b' \
             conflict"
        ) || conflict.2.starts_with(
            "VirtualMachinePresets cannot be applied due to conflicts: presets 'b' and 'a' \
             conflict"
        ),
        "{}",
        conflict.2
    );
    assert!(conflict.2.ends_with(
        "(about each VMI the replica set creates from its template, named \"web\" and five \
         random characters: KubeVirt admits the replica set itself)"
    ));
    // The refused one: its selector, and nothing about VMIs it never creates.
    let refused = named("refused");
    assert_eq!(refused.len(), 1, "{findings:#?}");
    assert_eq!(refused[0].0, "KV036 refused");
    assert_eq!(refused[0].1, "spec.selector");
    assert!(
        refused[0]
            .2
            .contains("\"Near\" is not a valid label selector operator"),
        "{}",
        refused[0].2
    );
    // The idle one: admitted, and its controller creates nothing; no finding about the
    // memory its VMIs would lack.
    let idle = named("idle");
    assert_eq!(idle.len(), 1, "{findings:#?}");
    assert_eq!(idle[0].0, "KV036 idle");
    assert!(
        idle[0].2.contains("its template has no labels"),
        "{}",
        idle[0].2
    );
}

/// A preference's vCPU requirement that a VM without an instancetype misses only because of
/// how KubeVirt counts (the axis of the preference's topology alone, an axis left out as 0)
/// says what to change; a matcher whose kind KubeVirt does not take names the kinds it does,
/// and the requirement it then misses points at that finding.
#[test]
fn unmet_requirements_say_why_when_the_vm_counts_its_own_cpu() {
    let vm = |name: &str, matchers: &str, cpu: &str| {
        format!(
            "---\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: {name}\n\
             spec:\n  runStrategy: Always\n{matchers}  template:\n    spec:\n      domain:\n\
             {cpu}        memory: {{guest: 4Gi}}\n        devices: {{}}\n"
        )
    };
    let preference = |name: &str, topology: &str| {
        format!(
            "---\napiVersion: instancetype.kubevirt.io/v1beta1\n\
             kind: VirtualMachineClusterPreference\nmetadata:\n  name: {name}\nspec:\n{topology}\
             \x20 requirements:\n    cpu: {{guest: 2}}\n    memory: {{guest: 1Gi}}\n"
        )
    };
    let text = [
        preference("plain", ""),
        preference("any", "  cpu: {preferredCPUTopology: any}\n"),
        vm(
            "cores",
            "  preference: {name: plain}\n",
            "        cpu: {cores: 2}\n",
        ),
        vm(
            "sockets",
            "  preference: {name: plain}\n",
            "        cpu: {sockets: 2}\n",
        ),
        vm(
            "unset",
            "  preference: {name: plain}\n",
            "        cpu: {}\n",
        ),
        vm(
            "three",
            "  preference: {name: any}\n",
            "        cpu: {cores: 2, threads: 1}\n",
        ),
        vm(
            "one",
            "  preference: {name: plain}\n",
            "        cpu: {cores: 1, threads: 2}\n",
        ),
        vm(
            "kind",
            "  instancetype: {kind: InstanceType, name: u1.medium}\n  preference: {name: plain}\n",
            "",
        ),
    ]
    .concat();
    let out = validate_json(&text);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let found = findings_on(&out, "VirtualMachine");
    let message = |what: &str| {
        found
            .iter()
            .find(|(code, ..)| code == what)
            .map(|(_, _, m, _)| m.clone())
            .unwrap_or_else(|| panic!("no {what} in {found:#?}"))
    };
    assert!(
        message("KV033 cores").ends_with(
            "provided as sockets (the preference's CPU topology is `sockets`, the default, so \
             KubeVirt counts only `cpu.sockets`, not the VM's `cores: 2`: give its 2 vCPUs as \
             `sockets: 2`)"
        ),
        "{found:#?}"
    );
    // One vCPU in all: too few wherever KubeVirt counts them, so nothing to add.
    assert!(
        message("KV033 unset").ends_with("preference requires 2 vCPU provided as sockets"),
        "{found:#?}"
    );
    assert!(
        message("KV033 three").ends_with(
            "provided as cores, sockets and threads (the preference's CPU topology is `any` so \
             KubeVirt multiplies `cpu.sockets`, `cpu.cores` and `cpu.threads`, and the VM \
             leaves out `sockets`, which counts as 0: set it to 1)"
        ),
        "{found:#?}"
    );
    assert!(
        message("KV012 kind").ends_with(
            "(the kind is `VirtualMachineClusterInstancetype`, which a matcher without `kind` \
             means, or `VirtualMachineInstancetype`, in any case and singular or plural)"
        ),
        "{found:#?}"
    );
    assert!(
        message("KV033 kind").ends_with(
            "(the instancetype matcher could not be used, so KubeVirt counted the VM's own CPU \
             and memory: see the KV012 finding)"
        ),
        "{found:#?}"
    );
    assert!(
        message("KV033 one").ends_with(
            "so KubeVirt counts only `cpu.sockets`, not the VM's `threads: 2`: give its 2 vCPUs \
             as `sockets: 2`)"
        ),
        "{found:#?}"
    );
    // Two sockets meet the requirement.
    assert!(
        !found.iter().any(|(code, ..)| code == "KV033 sockets"),
        "{found:#?}"
    );
}

/// `kubectl kustomize DIR | kvrender validate --built-from DIR -`, with the real kubectl: each
/// finding about an object kustomize read from a file (`buildMetadata: [originAnnotations]`)
/// points at that file and at the line of its field there; one about a field a patch of the
/// overlay sets says so and where kustomize's output has it; one about a generated ConfigMap's
/// label points at that label in the generator's options. Without `--built-from` every finding
/// points at the stream.
#[test]
fn findings_about_kustomize_output_point_at_the_files_it_was_built_from() {
    let _guard = snapshots();
    const OVERLAY: &str = "testdata/built-from/overlays/prod";
    let built = Command::new(crate::common::tool("kubectl"))
        .args(["kustomize", OVERLAY])
        .current_dir(ROOT)
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", describe(&built));
    let validate = |args: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kvrender"));
        cmd.current_dir(ROOT).arg("validate").args(args).arg("-");
        run_with_stdin(cmd, &built.stdout)
    };
    let out = validate(&["--built-from", OVERLAY]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let report = String::from_utf8_lossy(&out.stdout).into_owned();
    // Each place is the line that holds what the finding is about.
    let line_of = |file: &str, line: usize| {
        std::fs::read_to_string(Path::new(ROOT).join(file))
            .unwrap()
            .lines()
            .nth(line - 1)
            .unwrap()
            .to_owned()
    };
    for (place, holds) in [
        ("testdata/built-from/base/vms.yaml:33:", "cores: 3"),
        // Where the stream's finding points: the matcher's `name:`.
        (
            "testdata/built-from/overlays/prod/cache.yaml:8:",
            "name: u1.smal",
        ),
        // The patched field's deepest parent in the base.
        ("testdata/built-from/base/vms.yaml:12:", "domain:"),
        (
            "testdata/built-from/overlays/prod/kustomization.yaml:16:",
            "tier: front end",
        ),
    ] {
        assert!(report.contains(place), "{place}\n{report}");
        let (file, line) = place.trim_end_matches(':').rsplit_once(':').unwrap();
        assert!(
            line_of(file, line.parse().unwrap()).contains(holds),
            "{place}"
        );
    }
    // The generated ConfigMap's name ends in a hash of its content, kustomize's to choose.
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r"prod-settings-[a-z0-9]+", "prod-settings-[HASH]");
    settings.bind(|| insta::assert_snapshot!(describe(&out)));

    // Without the directory, the stream's lines.
    let plain = validate(&[]);
    let plain = String::from_utf8_lossy(&plain.stdout);
    let places: Vec<&str> = plain
        .lines()
        .filter(|l| l.contains("[KV"))
        .filter_map(|l| l.split_once(": ").map(|(at, _)| at))
        .collect();
    assert_eq!(places.len(), 4, "{plain}");
    assert!(places.iter().all(|at| at.starts_with("-:")), "{plain}");
}

/// A finding about a field the overlay's patch changed points at the base's line of it, and
/// says that the patch changed it and where kustomize's output has what was judged: the base
/// reads `u1.medium`, the finding is about `u1.larg`.
#[test]
fn built_from_says_when_a_patch_changed_the_field_a_finding_is_about() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |file: &str, text: &str| {
        let path = tmp.path().join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "base/vm.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: app\nspec:\n  \
         runStrategy: Always\n  instancetype:\n    name: u1.medium\n  template:\n    spec:\n      \
         domain:\n        devices: {}\n",
    );
    write("base/kustomization.yaml", "resources:\n- vm.yaml\n");
    write(
        "prod/kustomization.yaml",
        "resources:\n- ../base\npatches:\n- path: patch.yaml\nbuildMetadata: [originAnnotations]\n",
    );
    write(
        "prod/patch.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: app\nspec:\n  \
         instancetype:\n    name: u1.larg\n",
    );
    let built = Command::new(crate::common::tool("kubectl"))
        .args(["kustomize", "prod"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", describe(&built));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kvrender"));
    cmd.current_dir(tmp.path())
        .args(["validate", "--built-from", "prod", "-"]);
    let out = run_with_stdin(cmd, &built.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    let finding = report
        .lines()
        .find(|l| l.contains("[KV011]"))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        finding
            .starts_with("base/vm.yaml:8: warning[KV011] VirtualMachine/app: spec.instancetype:"),
        "{finding}"
    );
    assert!(finding.contains("\"u1.larg\" not found"), "{finding}");
    assert!(
        finding.ends_with(
            "(`spec.instancetype` reads otherwise in this file: a patch or transformer of the \
             kustomization that was built changes it; kustomize's output has it at -:10)"
        ),
        "{finding}"
    );
}

/// `--built-from` reads the files kustomize's origin annotations name, which are input: a
/// device (`/dev/zero` never ends) or a directory is not read and the finding keeps its place.
/// A `--built-from` that is not a directory cannot run.
#[test]
fn built_from_reads_only_files() {
    let tmp = tempfile::tempdir().unwrap();
    let stream = tmp.path().join("built.yaml");
    std::fs::write(
        &stream,
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: x\n  annotations:\n    config.kubernetes.io/origin: |\n      path: /dev/zero\n---\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: y\n  annotations:\n    config.kubernetes.io/origin: |\n      path: ..\nspec: {runStrategy: Always, template: {spec: {domain: {cpu: {guest: ham}, devices: {}}}}}\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .args(["validate", "--no-default-catalog", "--built-from", "/"])
        .arg(&stream)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = crate::common::wait_at_most(&mut child, 60, "validate --built-from /");
    assert_eq!(status.code(), Some(1));
    let mut report = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut report).unwrap();
    let shown = stream.display().to_string();
    let places: Vec<&str> = report
        .lines()
        .filter(|l| l.contains("[KV"))
        .map(|l| l.split(": ").next().unwrap())
        .collect();
    assert!(!places.is_empty(), "{report}");
    assert!(places.iter().all(|p| p.starts_with(&shown)), "{report}");

    let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .args(["validate", "--built-from"])
        .arg(&stream)
        .arg(&stream)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a directory"),
        "{}",
        describe(&out)
    );
}

/// Thousands of objects kustomize read from one file, each renamed by a `namePrefix`, each name
/// in two namespaces (in the file, in an order the output does not keep), and of a length that
/// differs from its neighbours' (`vm-1` is in `prod-vm-10`, whose own name is `vm-10`): each
/// finding names its own document's line, the first, the middle and the last included.
#[test]
fn built_from_maps_each_of_many_objects_of_one_file_to_its_own_document() {
    use std::fmt::Write as _;
    const NAMES: usize = 2_000;
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("base")).unwrap();
    std::fs::create_dir_all(tmp.path().join("prod")).unwrap();
    let vm = |name: &str, namespace: &str, extra: &str| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n{extra}  name: {name}\n  \
             namespace: {namespace}\nspec:\n  template:\n    spec:\n      domain:\n        \
             devices: {{}}\n"
        )
    };
    let (mut base, mut built, mut expected) = (Vec::new(), Vec::new(), String::new());
    let mut line = 1;
    for i in 0..NAMES {
        let order = if i % 2 == 0 {
            ["blue", "green"]
        } else {
            ["green", "blue"]
        };
        for namespace in order {
            // Documents of one to three labels, so that no two findings share a line by chance.
            let labels: String = (0..=i % 3).map(|l| format!("    l{l}: x\n")).collect();
            let doc = vm(
                &format!("vm-{i}"),
                namespace,
                &format!("  labels:\n{labels}"),
            );
            let spec = line + doc.lines().position(|l| l == "spec:").unwrap();
            writeln!(
                expected,
                "base/vms.yaml:{spec}: warning[KV034] VirtualMachine/{namespace}/prod-vm-{i}: \
                 spec.running: RunStrategy must be specified (`runStrategy: Always`, `Halted`, ...)"
            )
            .unwrap();
            line += doc.lines().count() + 1;
            base.push(doc);
        }
        for namespace in ["blue", "green"] {
            let origin = "  annotations:\n    config.kubernetes.io/origin: |\n      \
                          path: ../base/vms.yaml\n";
            built.push(vm(&format!("prod-vm-{i}"), namespace, origin));
        }
    }
    writeln!(expected, "Found 0 errors and {} warnings.", 2 * NAMES).unwrap();
    std::fs::write(tmp.path().join("base/vms.yaml"), base.join("---\n")).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kvrender"));
    cmd.current_dir(tmp.path()).args([
        "validate",
        "--no-default-catalog",
        "--built-from",
        "prod",
        "-",
    ]);
    let out = run_with_stdin(cmd, built.join("---\n"));
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    for i in [0, NAMES / 2, NAMES - 1] {
        for namespace in ["blue", "green"] {
            let object = format!("VirtualMachine/{namespace}/prod-vm-{i}:");
            let finding = |report: &str| {
                report
                    .lines()
                    .find(|l| l.contains(&object))
                    .map(str::to_owned)
            };
            assert_eq!(finding(&report), finding(&expected), "{object}");
        }
    }
    assert!(
        report == expected,
        "the report differs from the one expected"
    );
}

/// A stream whose origin annotations name the stream's own file maps every finding to where it
/// already was: the field a finding points at is found again in the same document, whether the
/// finding names that field or its parent (a matcher for its `name:`), and of two objects of
/// one kind and name in a file, each finds its own. Run over the findings of every code
/// `testdata/validate/` has, each document marked as read from its own file.
#[test]
fn findings_mapped_onto_their_own_file_stay_where_they_are() {
    let tmp = tempfile::tempdir().unwrap();
    let names = [
        "vms.yaml",
        "catalog.yaml",
        "legacy.yaml",
        "replica-sets.yaml",
    ];
    for name in names {
        let text =
            std::fs::read_to_string(Path::new(ROOT).join("testdata/validate").join(name)).unwrap();
        let marked = text.replace(
            "\nmetadata:\n",
            &format!(
                "\nmetadata:\n  annotations: {{config.kubernetes.io/origin: 'path: {name}'}}\n"
            ),
        );
        assert_ne!(marked, text, "{name}");
        std::fs::write(tmp.path().join(name), marked).unwrap();
    }
    let validate = |built_from: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kvrender"));
        cmd.current_dir(tmp.path())
            .args(["validate", "--no-default-catalog"]);
        if built_from {
            cmd.args(["--built-from", "."]);
        }
        // Named as the annotations name them (a walk of `.` would show `./vms.yaml`).
        cmd.args(names).output().unwrap()
    };
    let (plain, mapped) = (validate(false), validate(true));
    let report = String::from_utf8_lossy(&plain.stdout);
    assert!(report.lines().count() > 20, "{report}");
    assert_eq!(String::from_utf8_lossy(&mapped.stdout), report);
    assert_eq!(mapped.status.code(), plain.status.code());
}

/// A VM read back from a cluster (`kubectl get vm -o yaml`) keeps the status that names its
/// instancetype's and preference's ControllerRevisions. The API server drops a VM's `status`
/// before the validating webhook sees it, so `validate` judges the VM against the objects its
/// matchers name: a conflict is still refused. `expand`, like `expand-spec`, follows the
/// status, and says how to get the revision it names.
#[test]
fn an_exported_vm_is_judged_without_its_status() {
    let vm = "\
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: exported, namespace: default}
spec:
  instancetype: {name: u1.medium}
  preference: {name: fedora}
  runStrategy: Always
  template:
    spec:
      domain:
        cpu: {cores: 4}
        devices: {}
status:
  instancetypeRef:
    kind: VirtualMachineClusterInstancetype
    name: u1.medium
    controllerRevisionRef: {name: exported-u1.medium-abc-1}
  preferenceRef:
    kind: VirtualMachineClusterPreference
    name: fedora
    controllerRevisionRef: {name: exported-fedora-abc-1}
";
    let run = |cmd: &str| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_kvrender"));
        c.args([cmd, "-"]);
        run_with_stdin(c, vm)
    };
    let validated = run("validate");
    assert_eq!(validated.status.code(), Some(1), "{}", describe(&validated));
    let stdout = String::from_utf8_lossy(&validated.stdout);
    assert!(
        stdout.contains("-:11: error[KV010]") && stdout.contains("cpu.cores conflicts"),
        "{}",
        describe(&validated)
    );
    assert!(!stdout.contains("controllerrevisions"), "{stdout}");

    let expanded = run("expand");
    assert_eq!(expanded.status.code(), Some(1), "{}", describe(&expanded));
    let stderr = String::from_utf8_lossy(&expanded.stderr);
    assert!(
        stderr.contains("controllerrevisions.apps \"exported-u1.medium-abc-1\" not found")
            && stderr.contains("`status.instancetypeRef.controllerRevisionRef` names it")
            && stderr
                .contains("kubectl get controllerrevision exported-u1.medium-abc-1 -n default"),
        "{stderr}"
    );
}

/// Findings that are notes only (a preference the `Ignore` policy drops) are shown, and the
/// summary still says there is no problem.
#[test]
fn notes_alone_end_in_no_problems_found() {
    let vm = "\
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: ign}
spec:
  runStrategy: Always
  preference:
    inferFromVolume: rootdisk
    inferFromVolumeFailurePolicy: Ignore
  template:
    spec:
      domain:
        memory: {guest: 1Gi}
        devices: {}
      volumes:
      - name: rootdisk
        containerDisk: {image: quay.io/containerdisks/fedora:40}
";
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kvrender"));
    cmd.args(["validate", "-"]);
    let out = run_with_stdin(cmd, vm);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("info[KV013]"), "{stdout}");
    assert!(
        stdout.ends_with("No problems found in 1 object (1 note above).\n"),
        "{stdout}"
    );
}

/// KubeVirt names a conflicting template annotation `annotations.<key>` and the VM's
/// `dedicatedCpuPlacement` with the instancetype's spelling, `dedicatedCPUPlacement`: the
/// finding still points at the line where the VM (or a pool's template) sets the field.
#[test]
fn conflicts_point_at_the_line_the_vm_sets_them_on() {
    let instancetype = "apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineClusterInstancetype
metadata: {name: it1}
spec:
  cpu: {guest: 2, dedicatedCPUPlacement: true}
  memory: {guest: 1Gi}
  annotations: {a: \"1\"}
";
    let vm = "apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: vm1
spec:
  runStrategy: Always
  instancetype: {name: it1}
  template:
    metadata:
      annotations:
        a: \"2\"
    spec:
      domain:
        cpu:
          sockets: 1
          dedicatedCpuPlacement: true
        devices: {}
";
    let pool = "apiVersion: pool.kubevirt.io/v1alpha1
kind: VirtualMachinePool
metadata:
  name: p
spec:
  replicas: 1
  selector:
    matchLabels: {app: x}
  virtualMachineTemplate:
    metadata:
      labels: {app: x}
    spec:
      runStrategy: Always
      instancetype: {name: it1}
      template:
        metadata:
          labels: {app: x}
          annotations:
            a: \"2\"
        spec:
          domain:
            devices: {}
";
    let tmp = tempfile::tempdir().unwrap();
    for (name, object) in [
        ("it.yaml", instancetype),
        ("vm.yaml", vm),
        ("pool.yaml", pool),
    ] {
        std::fs::write(tmp.path().join(name), object).unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .current_dir(tmp.path())
        .args([
            "validate",
            "--no-default-catalog",
            "it.yaml",
            "vm.yaml",
            "pool.yaml",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    for (at, field) in [
        ("vm.yaml:11", "annotations.a"),
        (
            "vm.yaml:16",
            "spec.template.spec.domain.cpu.dedicatedCPUPlacement",
        ),
        ("vm.yaml:15", "spec.template.spec.domain.cpu.sockets"),
        ("pool.yaml:19", "annotations.a"),
    ] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(&format!("{at}: error[KV010]")) && l.contains(field)),
            "{field} at {at}:\n{stdout}"
        );
    }
}

/// The validating webhook sees the VM after the mutating one gave it the architecture its
/// DataSource names (`template.kubevirt.io/architecture`): a preference's architecture
/// requirement is judged against that one.
#[test]
fn a_preference_requirement_sees_the_data_sources_architecture() {
    let file = |required: &str| {
        format!(
            "apiVersion: cdi.kubevirt.io/v1beta1\nkind: DataSource\n\
             metadata: {{name: arm, namespace: images, labels: {{template.kubevirt.io/architecture: arm64}}}}\n\
             spec: {{source: {{pvc: {{name: p, namespace: images}}}}}}\n---\n\
             apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterPreference\n\
             metadata: {{name: pref}}\nspec: {{requirements: {{architecture: {required}}}}}\n---\n\
             apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {{name: v}}\nspec:\n\
             \x20 runStrategy: Always\n  preference: {{name: pref}}\n  dataVolumeTemplates:\n\
             \x20 - metadata: {{name: root}}\n    spec:\n\
             \x20     sourceRef: {{kind: DataSource, name: arm, namespace: images}}\n\
             \x20     storage: {{resources: {{requests: {{storage: 1Gi}}}}}}\n\
             \x20 template:\n    spec:\n      domain:\n        memory: {{guest: 1Gi}}\n\
             \x20       devices: {{disks: [{{name: root, disk: {{}}}}]}}\n\
             \x20     volumes: [{{name: root, dataVolume: {{name: root}}}}]\n"
        )
    };
    let tmp = tempfile::tempdir().unwrap();
    for (required, code, says) in [
        ("arm64", Some(0), None),
        (
            "amd64",
            Some(1),
            Some("preference requires architecture amd64 but arm64 is being requested"),
        ),
    ] {
        let path = tmp.path().join(format!("{required}.yaml"));
        std::fs::write(&path, file(required)).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
            .args(["validate", "--no-default-catalog"])
            .arg(&path)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), code, "{required}: {}", describe(&out));
        if let Some(says) = says {
            assert!(
                stdout.contains("error[KV033]") && stdout.contains(says),
                "{stdout}"
            );
        }
    }
}

/// A VM whose every `inferFromVolume` matcher the `Ignore` policy drops is judged as KubeVirt's
/// validating webhook sees it, without instancetype or preference: what a preference could
/// have filled in (SMM for Secure Boot) is not assumed, and the DataSource's architecture
/// applies as to any VM without matchers.
#[test]
fn a_vm_whose_ignored_matchers_are_dropped_is_judged_without_them() {
    let text = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: vm}\nspec:\n\
        \x20 preference: {inferFromVolume: root, inferFromVolumeFailurePolicy: Ignore}\n\
        \x20 runStrategy: Always\n  template:\n    spec:\n      domain:\n        \
        devices: {}\n        firmware: {bootloader: {efi: {}}}\n        \
        resources: {requests: {memory: 1Gi}}\n      \
        volumes: [{name: root, containerDisk: {image: quay.io/containerdisks/fedora:41}}]\n";
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("vm.yaml");
    std::fs::write(&path, text).unwrap();
    let out = run_on(&["validate", "--no-default-catalog", "--strict"], &path);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(stdout.contains("info[KV013]"), "{stdout}");
    assert!(
        stdout.contains(
            "vm.yaml:9: error[KV034] VirtualMachine/vm: spec.template.spec.domain: \
             spec.template.spec.domain has EFI SecureBoot enabled. SecureBoot requires SMM, \
             which is currently disabled."
        ),
        "{stdout}"
    );
}

/// KubeVirt's VM webhook writes `kubevirt.io/pci-topology-version: v3` into the template of a
/// VM it creates where the template supports PCIe hotplug, before the validating webhook
/// applies the instancetype: an instancetype that sets the annotation otherwise then conflicts
/// with it. Not where the template has the annotation already, the instancetype sets `v3`, or
/// the machine type (its own or its preference's) takes no PCIe hotplug.
#[test]
fn an_instancetypes_pci_topology_version_conflicts_with_the_webhooks() {
    let file = |set: &str, template: &str, preference: &str| {
        format!(
            "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
             metadata: {{name: pci}}\n\
             spec: {{cpu: {{guest: 1}}, memory: {{guest: 1Gi}}, \
             annotations: {{kubevirt.io/pci-topology-version: {set}}}}}\n---\n\
             apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterPreference\n\
             metadata: {{name: pref}}\nspec: {{{preference}}}\n---\n\
             apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {{name: vm}}\nspec:\n\
             \x20 runStrategy: Always\n  instancetype: {{name: pci}}\n  preference: {{name: pref}}\n\
             \x20 template:\n    metadata: {{annotations: {{{template}}}}}\n\
             \x20   spec: {{domain: {{devices: {{}}}}}}\n"
        )
    };
    let i440fx = "machine: {preferredMachineType: pc-i440fx-rhel7.6.0}";
    let tmp = tempfile::tempdir().unwrap();
    for (name, set, template, preference, refused) in [
        ("refused", "v2", "", "", true),
        (
            "written",
            "v2",
            "kubevirt.io/pci-topology-version: v2",
            "",
            false,
        ),
        ("same", "v3", "", "", false),
        ("no-hotplug", "v2", "", i440fx, false),
    ] {
        let path = tmp.path().join(format!("{name}.yaml"));
        std::fs::write(&path, file(set, template, preference)).unwrap();
        let out = run_on(&["validate", "--no-default-catalog"], &path);
        let stdout = String::from_utf8_lossy(&out.stdout);
        if refused {
            assert_eq!(out.status.code(), Some(1), "{name}: {}", describe(&out));
            assert!(
                stdout.contains(
                    "error[KV010] VirtualMachine/vm: annotations.kubevirt.io/pci-topology-version: \
                     VM field(s) annotations.kubevirt.io/pci-topology-version conflicts with \
                     selected instance type (KubeVirt's VM webhook writes"
                ),
                "{stdout}"
            );
        } else {
            assert!(!stdout.contains("KV010"), "{name}: {stdout}");
        }
    }
}

/// A VM that names neither instancetype nor preference gets its DataSource's architecture from
/// the mutating webhook too, and the validating webhook judges its machine type and CPU against
/// it; the finding says where the architecture comes from. The same VM with its architecture
/// written, or without the label, is judged on amd64.
#[test]
fn a_vm_without_matchers_is_judged_on_the_architecture_its_data_source_names() {
    let file = |label: &str, arch: &str| {
        format!(
            "apiVersion: cdi.kubevirt.io/v1beta1\nkind: DataSource\n\
             metadata: {{name: img, namespace: images, labels: {{{label}}}}}\n\
             spec: {{source: {{pvc: {{name: p, namespace: images}}}}}}\n---\n\
             apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {{name: v, namespace: images}}\n\
             spec:\n  runStrategy: Always\n  dataVolumeTemplates:\n\
             \x20 - metadata: {{name: root}}\n    spec:\n\
             \x20     sourceRef: {{kind: DataSource, name: img}}\n\
             \x20     storage: {{resources: {{requests: {{storage: 1Gi}}}}}}\n\
             \x20 template:\n    spec:\n{arch}      domain:\n        machine: {{type: q35}}\n\
             \x20       memory: {{guest: 1Gi}}\n\
             \x20       devices: {{disks: [{{name: root, disk: {{}}}}]}}\n\
             \x20     volumes: [{{name: root, dataVolume: {{name: root}}}}]\n"
        )
    };
    let arm = "template.kubevirt.io/architecture: arm64";
    let tmp = tempfile::tempdir().unwrap();
    for (name, label, arch, refused) in [
        ("labelled", arm, "", true),
        ("written", arm, "      architecture: amd64\n", false),
        ("unlabelled", "team: a", "", false),
    ] {
        let path = tmp.path().join(format!("{name}.yaml"));
        std::fs::write(&path, file(label, arch)).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
            .args(["validate", "--no-default-catalog", "--strict"])
            .arg(&path)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        if refused {
            assert_eq!(out.status.code(), Some(1), "{name}: {}", describe(&out));
            assert!(
                stdout.contains(
                    "domain.machine.type is not supported: q35 (allowed values: [virt*]) \
                     (KubeVirt's VM webhook gives the VM the architecture `arm64` that the \
                     DataSource its DataVolume template clones names"
                ),
                "{stdout}"
            );
        } else {
            assert_eq!(out.status.code(), Some(0), "{name}: {}", describe(&out));
        }
    }
}

/// A catalog that does not render may define the instancetype a VM names: the VM's `KV011` is
/// left out until the catalog renders, and so is the `KV033` that counted the VM's own CPU and
/// memory instead of that instancetype's. Once the catalog renders, neither is there.
#[test]
fn a_catalog_that_does_not_render_leaves_out_what_follows_from_its_names() {
    let catalog = |memory: &str| {
        format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nmetadata: {{name: team-parts}}\n\
             parts:\n  sized:\n    spec:\n      cpu: {{guest: \"{{{{ size.cpu }}}}\"}}\n\
             \x20     memory: {{guest: \"{{{{ size.{memory} }}}}\"}}\n---\n\
             apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\n\
             metadata: {{name: team}}\nspec:\n  version: 1\n  parts: [sized]\n\
             \x20 sizes:\n  - [medium, 2, 4Gi]\n"
        )
    };
    let vm = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: web}\nspec:\n\
              \x20 runStrategy: Always\n  instancetype: {name: team1.medium}\n\
              \x20 preference: {name: fedora}\n  template:\n    spec:\n      domain:\n\
              \x20       devices: {}\n";
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("vm.yaml"), vm).unwrap();
    for (memory, code, codes) in [
        ("memry", Some(1), &["KV040"][..]),
        ("memory", Some(0), &[][..]),
    ] {
        std::fs::write(tmp.path().join("catalog.yaml"), catalog(memory)).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
            .args(["validate", "--format", "json"])
            .arg(tmp.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), code, "{memory}: {}", describe(&out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let found: Vec<&str> = stdout
            .match_indices("\"code\":")
            .map(|(at, _)| stdout[at + 7..].trim_start().get(1..6).unwrap_or(""))
            .collect();
        assert_eq!(found, codes, "{memory}: {stdout}");
    }
}

/// A kustomization that does not parse is reported where it breaks: kvrender cannot tell its
/// patches from resources until it does, and they would be blamed for what a patch lacks.
#[test]
fn a_kustomization_that_does_not_parse_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("k");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("kustomization.yaml"),
        "resources:\n- vm.yaml\npatches:\n- path: patch.yaml\n\tx: 1\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("patch.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
    )
    .unwrap();
    let run = || {
        Command::new(env!("CARGO_BIN_EXE_kvrender"))
            .current_dir(tmp.path())
            .args(["validate", "--no-default-catalog", "k"])
            .output()
            .unwrap()
    };
    let out = run();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        stdout.starts_with("k/kustomization.yaml:5:1: error[KV001] invalid YAML: ")
            && stdout.contains("until this kustomization parses"),
        "{stdout}"
    );
    // Once it parses, it is kustomize's configuration again, not a resource.
    std::fs::write(dir.join("kustomization.yaml"), "resources:\n- patch.yaml\n").unwrap();
    let out = run();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 object"),
        "{}",
        describe(&out)
    );
}

/// A kustomization that parses but that kustomize refuses for the type of a field kvrender
/// reads (a list where a mapping belongs, `patches` as a string, entries of the wrong type) is
/// named at that field, each problem at its line: until it is fixed, what it names is read as
/// resources, and a patch would otherwise be blamed for what it lacks, with no word of why.
/// Only its first document counts, as kustomize reads only that one.
#[test]
fn a_kustomization_of_the_wrong_shape_is_named_at_its_fields() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("k");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("patch.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n",
    )
    .unwrap();
    let run = |kustomization: &str| {
        std::fs::write(dir.join("kustomization.yaml"), kustomization).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
            .current_dir(tmp.path())
            .args(["validate", "--no-default-catalog", "k"])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    for (kustomization, findings) in [
        (
            "- patch.yaml\n",
            &[
                "k/kustomization.yaml:1: error[KV004] a kustomization is a mapping of fields \
               (`resources:`, `patches:`, ...), not a list (kustomize refuses it)",
            ][..],
        ),
        (
            "resources: []\npatches: patch.yaml\n",
            &["k/kustomization.yaml:2: error[KV004] `patches` must be a list, not a string"],
        ),
        (
            "patches:\n- path: {a: b}\n- 5\nnamespace: [x]\n",
            &[
                "k/kustomization.yaml:2: error[KV004] the `path` of an entry of `patches` must \
                 be a string, not a mapping",
                "k/kustomization.yaml:3: error[KV004] each entry of `patches` must be a \
                 mapping, not an integer",
                "k/kustomization.yaml:4: error[KV004] `namespace` must be a string, not a list",
            ],
        ),
        // A field kustomize does not know, most often misspelt; case aside, as Go reads it.
        (
            "Resources: []\npatchs:\n- path: patch.yaml\nextra: 1\n",
            &[
                "k/kustomization.yaml:2: error[KV022] unknown field `patchs` in a \
                 kustomization: kustomize refuses the file; did you mean `patches`?",
                "k/kustomization.yaml:4: error[KV022] unknown field `extra` in a \
                 kustomization: kustomize refuses the file;",
            ],
        ),
    ] {
        let (code, stdout) = run(kustomization);
        assert_eq!(code, Some(1), "{kustomization}: {stdout}");
        for finding in findings {
            assert!(stdout.contains(finding), "{finding}\nin\n{stdout}");
        }
        assert!(stdout.contains("are read as resources"), "{stdout}");
    }
    // A second document is not read, as kustomize does not read it: the patch is its own.
    let (code, stdout) = run("patches:\n- path: patch.yaml\n---\npatches: 5\n");
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("0 objects"), "{stdout}");
    // Every field kustomize knows, in any case, is one (`kubectl kustomize` builds this file
    // up to its empty `sortOptions`).
    let every = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n\
                 metadata: {name: k}\nopenapi: {}\nnamePrefix: a-\nnameSuffix: -b\n\
                 NAMESPACE: ns\ncommonLabels: {}\nlabels: []\ncommonAnnotations: {}\n\
                 patchesStrategicMerge: []\npatchesJson6902: []\npatches: [{path: patch.yaml}]\n\
                 images: []\nimageTags: []\nreplacements: []\nreplicas: []\nvars: []\n\
                 sortOptions: {}\nresources: []\ncomponents: []\ncrds: []\nbases: []\n\
                 configMapGenerator: []\nsecretGenerator: []\nhelmGlobals: {}\nhelmCharts: []\n\
                 helmChartInflationGenerator: []\ngeneratorOptions: {}\nconfigurations: []\n\
                 generators: []\ntransformers: []\nvalidators: []\n\
                 buildMetadata: []\n";
    let (code, stdout) = run(every);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("0 objects"), "{stdout}");
}

/// With the embedded catalog turned off, a name not found says so, and says when the embedded
/// catalog has it; with it on, such a name is found.
#[test]
fn a_name_not_found_says_whether_the_embedded_catalog_has_it() {
    let (_tmp, file) = temp_file(
        "vm.yaml",
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: v}\nspec:\n\
         \x20 runStrategy: Always\n  instancetype: {name: u1.medium}\n\
         \x20 preference: {name: no.such}\n  template: {spec: {domain: {devices: {}}}}\n",
    );
    let out = run_on(&["validate", "--no-default-catalog"], &file);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(
            "\"u1.medium\" not found: it is not in the inputs or `--catalog`; the embedded \
             catalog has it, but is turned off here;"
        ) && stdout.contains(
            "\"no.such\" not found: it is not in the inputs or `--catalog` (the embedded catalog \
             is turned off);"
        ),
        "{stdout}"
    );
    let out = run_on(&["validate"], &file);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!stdout.contains("u1.medium"), "{stdout}");
    assert!(
        stdout.contains(
            "\"no.such\" not found: it is not in the inputs, `--catalog` or the embedded catalog;"
        ),
        "{stdout}"
    );
}

/// A build without kustomize's origin annotations gives `--built-from` nothing to map: a
/// warning on stderr says what to add, and the findings stay at the stream's lines.
#[test]
fn built_from_warns_when_the_build_has_no_origin_annotations() {
    let tmp = tempfile::tempdir().unwrap();
    let stream = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n";
    let validate = |args: &[&str], input: &str| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kvrender"));
        cmd.args(["validate", "--no-default-catalog"])
            .args(args)
            .arg("-");
        run_with_stdin(cmd, input.as_bytes())
    };
    let dir = tmp.path().to_str().unwrap();
    let out = validate(&["--built-from", dir], stream);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    assert!(
        stderr.contains(&format!(
            "kvrender: warning: --built-from {dir}: no object of the input"
        )) && stderr.contains("`buildMetadata: [originAnnotations]`"),
        "{stderr}"
    );
    let annotated = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    \
                     config.kubernetes.io/origin: |\n      path: c.yaml\n";
    for (args, input) in [(&["--built-from", dir][..], annotated), (&[][..], stream)] {
        let out = validate(args, input);
        assert!(out.stderr.is_empty(), "{args:?}: {}", describe(&out));
    }
    // An empty build is refused before anything is mapped (as any empty stdin is).
    let out = validate(&["--built-from", dir], "");
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is empty: nothing to read"),
        "{}",
        describe(&out)
    );
}

/// The findings of `validate --no-default-catalog --format json` on `text`, as
/// `line field` pairs.
fn json_lines_and_fields(text: &str) -> Vec<String> {
    let (_tmp, file) = temp_file("in.yaml", text);
    let out = run_on(
        &["validate", "--no-default-catalog", "--format", "json"],
        &file,
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON report");
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| format!("{} {} {}", f["code"], f["line"], f["field"]))
        .collect()
}

/// A map key with dots in it (a label, a node selector, a resource name) is one step of the
/// field's path, written in brackets, and found at its own line.
#[test]
fn a_key_with_dots_is_one_step_of_the_field_at_its_line() {
    let found = json_lines_and_fields(
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm\n  \
         namespace: ns\n  labels:\n    app: web\n    app.kubernetes.io/version: 1.2\n\
         spec:\n  runStrategy: Always\n  template:\n    spec:\n      nodeSelector:\n        \
         kubernetes.io/arch: 64\n      domain:\n        cpu.cores: 2\n        devices: {}\n        \
         memory: {guest: 1Gi}\n",
    );
    assert_eq!(
        found,
        [
            r#""KV004" 8 "metadata.labels[\"app.kubernetes.io/version\"]""#,
            r#""KV004" 14 "spec.template.spec.nodeSelector[\"kubernetes.io/arch\"]""#,
            r#""KV022" 16 "spec.template.spec.domain[\"cpu.cores\"]""#,
        ]
    );
}

/// KubeVirt's deprecation warnings name the field they are about in `validate` as in `build`.
#[test]
fn a_deprecation_warning_names_its_field_and_line() {
    let found = json_lines_and_fields(
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachinePreference\n\
         metadata:\n  name: legacy\n  namespace: ns\nspec:\n  cpu:\n    \
         preferredCPUTopology: preferSockets\n---\n\
         apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineInstancetype\n\
         metadata:\n  name: sev\n  namespace: ns\nspec:\n  cpu: {guest: 1}\n  \
         memory: {guest: 1Gi}\n  launchSecurity:\n    sev: {}\n",
    );
    assert_eq!(
        found,
        [
            r#""KV031" 8 "spec.cpu.preferredCPUTopology""#,
            r#""KV031" 18 "spec.launchSecurity""#,
        ]
    );
}

/// A list item written as a `-` alone on its line, its mapping on the lines below: a finding
/// inside it is at the field's line, not the dash's.
#[test]
fn a_finding_in_an_item_below_a_lone_dash_is_at_its_field() {
    let found = json_lines_and_fields(
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm\n  \
         namespace: ns\nspec:\n  runStrategy: Always\n  template:\n    spec:\n      domain:\n        \
         memory: {guest: 1Gi}\n        devices:\n          disks:\n          -\n            \
         name: root\n            disk: {bus: virtio}\n            bootOrdr: 1\n      volumes:\n      \
         -\n        name: root\n        containerDisk:\n          image: x\n          \
         imagePullPolicyy: Always\n",
    );
    assert_eq!(
        found,
        [
            r#""KV022" 17 "spec.template.spec.domain.devices.disks[0].bootOrdr""#,
            r#""KV022" 23 "spec.template.spec.volumes[0].containerDisk.imagePullPolicyy""#,
        ]
    );
}

/// In a List whose first item is a flow mapping written over several lines, the next items'
/// findings are at their own lines.
#[test]
fn a_list_item_after_a_multi_line_flow_item_is_found_at_its_lines() {
    let found = json_lines_and_fields(
        "apiVersion: v1\nkind: List\nitems:\n- {\n  apiVersion: v1, kind: ConfigMap,\n  \
         metadata: {name: cm1, lables: {}}\n}\n- apiVersion: v1\n  kind: ConfigMap\n  \
         metadata:\n    name: cm2\n    lables: {x: z}\n",
    );
    assert_eq!(
        found,
        [
            r#""KV022" 6 "metadata.lables""#,
            r#""KV022" 12 "metadata.lables""#,
        ]
    );
}

/// Invalid YAML for a tab in the indentation is reported at the tab, in the file's lines: a
/// tab alone and a tab after spaces, in a document after another.
#[test]
fn a_tab_in_the_indentation_is_reported_at_the_tab() {
    for (text, position) in [
        (
            "a: 1\n---\nkind: ConfigMap\nmetadata:\n\tname: x\n",
            ":5:1: ",
        ),
        (
            "a: 1\n---\nkind: ConfigMap\nmetadata:\n  name: x\n  \tlabels: {}\n",
            ":6:3: ",
        ),
    ] {
        let (_tmp, file) = temp_file("in.yaml", text);
        let out = run_on(&["validate", "--no-default-catalog"], &file);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let finding = stdout
            .lines()
            .find(|l| l.contains("error[KV001]"))
            .unwrap_or_else(|| panic!("a KV001 finding: {stdout}"));
        assert!(
            finding.contains(&format!("in.yaml{position}error[KV001]")),
            "{text:?}: {finding}"
        );
    }
}

/// The embedded catalog stands for what KubeVirt's operator installs in every cluster, the
/// cluster-scoped instancetypes and preferences. A VM naming the namespaced `fedora` is not
/// judged by the embedded catalog's namespaced copy, which a cluster holds only where someone
/// applied it: KubeVirt admits such a VM when the lookup fails. Given the namespaced bundle
/// with `--catalog`, the VM is judged by it.
#[test]
fn the_embedded_catalog_answers_for_the_cluster_scoped_objects_only() {
    let vm = |kind: &str| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: f\nspec:\n  \
             preference:\n{kind}    name: fedora\n  runStrategy: Always\n  template:\n    \
             spec:\n      domain:\n        devices: {{}}\n        memory:\n          \
             guest: 1Gi\n"
        )
    };
    let (_tmp, namespaced) = temp_file("vm.yaml", &vm("    kind: VirtualMachinePreference\n"));
    let out = run_on(&["validate"], &namespaced);
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains(
            "warning[KV011] VirtualMachine/f: spec.preference: \
             virtualmachinepreferences.instancetype.kubevirt.io \"fedora\" not found in \
             namespace \"default\": it is not in the inputs or `--catalog`, and the embedded \
             catalog's `VirtualMachinePreference` of that name does not count: the embedded \
             catalog stands for what KubeVirt's operator installs, the cluster-scoped objects \
             only. If the namespace holds the namespaced bundle, pass it with `--catalog`; "
        ) && report.contains(
            "a VirtualMachineClusterPreference of that name exists: set `kind: \
             VirtualMachineClusterPreference` in the matcher"
        ) && !report.contains("KV033"),
        "{report}"
    );
    let out = run_on(&["expand"], &namespaced);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    // In another namespace the bundle's own files, which name none, would not do: an export.
    let (_tmp, in_web) = temp_file(
        "vm.yaml",
        &vm("    kind: VirtualMachinePreference\n")
            .replace("  name: f\n", "  name: f\n  namespace: web\n"),
    );
    let report = String::from_utf8_lossy(&run_on(&["validate"], &in_web).stdout).into_owned();
    assert!(
        report.contains(
            "If the namespace holds the namespaced bundle, save `kubectl get \
             virtualmachinepreferences.instancetype.kubevirt.io -n web -o yaml` to a file and \
             pass it with `--catalog`, since the bundle's own files name no namespace and so \
             stand for `default`"
        ),
        "{report}"
    );

    // The namespaced bundle, given: its `fedora` requires 2Gi.
    let catalog = format!("{ROOT}/catalog");
    let out = run_on(&["validate", "--catalog", &catalog], &namespaced);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("error[KV033]") && report.contains("preference requires 2Gi"),
        "{report}"
    );

    // The cluster-scoped `fedora`, which a matcher without `kind` names, is there.
    let (_tmp, cluster) = temp_file("vm.yaml", &vm(""));
    let out = run_on(&["validate"], &cluster);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("preference requires 2Gi"),
        "{}",
        describe(&out)
    );
}

/// What `KV044` says of an instancetype is what KubeVirt says of every VM naming it: a plain VM
/// naming each instancetype `KV044` reports gets a `KV034` with the message `KV044` quotes, and
/// a VM naming an instancetype it leaves alone gets none (where the VM can make it right, one
/// that does). The one exception, a guest memory of a few bytes, is admitted and its `KV044`
/// says so.
#[test]
fn kv044_quotes_the_refusal_every_vm_naming_the_instancetype_gets() {
    let instancetypes = [
        (
            "small-page",
            "memory: {guest: 512Mi, hugepages: {pageSize: 1Gi}}",
        ),
        (
            "odd-pages",
            "memory: {guest: 1536Mi, hugepages: {pageSize: 1Gi}}",
        ),
        ("no-page-size", "memory: {guest: 1Gi, hugepages: {}}"),
        (
            "bytes-overcommitted",
            "memory: {guest: 8, overcommitPercent: 10}",
        ),
        (
            "isolated-off",
            "cpu: {guest: 2, dedicatedCPUPlacement: false, isolateEmulatorThread: true}\n  \
             memory: {guest: 2Gi}",
        ),
        (
            "realtime-off",
            "cpu: {guest: 2, dedicatedCPUPlacement: false, realtime: {},\n    \
             numa: {guestMappingPassthrough: {}}}\n  \
             memory: {guest: 2Gi, hugepages: {pageSize: 1Gi}}",
        ),
        (
            "realtime-numa",
            "cpu: {guest: 2, dedicatedCPUPlacement: true, realtime: {}, numa: {}}\n  \
             memory: {guest: 2Gi, hugepages: {pageSize: 1Gi}}",
        ),
        (
            "io-policy",
            "memory: {guest: 1Gi}\n  ioThreadsPolicy: dedicated",
        ),
        (
            "io-pool",
            "memory: {guest: 1Gi}\n  ioThreadsPolicy: supplementalPool\n  \
             ioThreads: {supplementalPoolThreadCount: 0}",
        ),
    ];
    // Admitted: KubeVirt takes a VM naming these (that sets what the instancetype leaves to it).
    let usable = [
        ("bytes", "memory: {guest: 8}", ""),
        ("no-vcpus", "cpu: {guest: 0}\n  memory: {guest: 1Gi}", ""),
        (
            "pool-of-the-vm",
            "memory: {guest: 1Gi}\n  ioThreadsPolicy: supplementalPool",
            "ioThreads: {supplementalPoolThreadCount: 2}, ",
        ),
        (
            "isolated-unset",
            "cpu: {guest: 2, isolateEmulatorThread: true}\n  memory: {guest: 2Gi}",
            "cpu: {dedicatedCpuPlacement: true}, ",
        ),
    ];
    let mut text = String::new();
    let all = instancetypes.iter().map(|(name, spec)| (name, spec, &""));
    for (name, spec, domain) in all.chain(usable.iter().map(|(n, s, d)| (n, s, d))) {
        let spec = if spec.starts_with("cpu:") {
            spec.to_string()
        } else {
            format!("cpu: {{guest: 1}}\n  {spec}")
        };
        text.push_str(&format!(
            "---\napiVersion: instancetype.kubevirt.io/v1beta1\n\
             kind: VirtualMachineClusterInstancetype\nmetadata: {{name: {name}}}\n\
             spec:\n  {spec}\n\
             ---\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {{name: {name}}}\n\
             spec:\n  runStrategy: Always\n  instancetype: {{name: {name}}}\n  \
             template: {{spec: {{domain: {{{domain}devices: {{}}}}}}}}\n"
        ));
    }
    let out = validate_json(&text);
    let (admitted, unusable): (Vec<_>, Vec<_>) =
        findings_on(&out, "VirtualMachineClusterInstancetype")
            .into_iter()
            .partition(|(_, _, message, _)| message.contains("(KubeVirt admits a VM naming it"));
    assert_eq!(
        admitted
            .iter()
            .map(|(id, ..)| id.as_str())
            .collect::<Vec<_>>(),
        ["KV044 bytes"],
        "{admitted:#?}"
    );
    let refused = findings_on(&out, "VirtualMachine");
    assert!(
        unusable.iter().all(|(id, ..)| id.starts_with("KV044 ")),
        "{unusable:#?}"
    );
    assert!(
        refused.iter().all(|(id, ..)| id.starts_with("KV034 ")),
        "{refused:#?}"
    );
    let names = instancetypes.iter().map(|(n, _)| n);
    for name in names.chain(usable.iter().map(|(n, ..)| n)) {
        let says: Vec<&str> = unusable
            .iter()
            .filter(|(id, ..)| id == &format!("KV044 {name}"))
            .map(|(_, _, message, _)| message.as_str())
            .collect();
        let gets: Vec<&str> = refused
            .iter()
            .filter(|(id, ..)| id == &format!("KV034 {name}"))
            .map(|(_, _, message, _)| message.split(" (KubeVirt checks the VM").next().unwrap())
            .collect();
        assert_eq!(says.len(), gets.len(), "{name}: {says:#?}\n{gets:#?}");
        let quoted = |kubevirt: &&str| {
            says.iter().any(|s| {
                s.starts_with(&format!(
                    "no VirtualMachine can use it: KubeVirt refuses every VM that names it: \
                     {kubevirt} ("
                ))
            })
        };
        assert!(gets.iter().all(quoted), "{name}: {says:#?}\n{gets:#?}");
    }
    assert_eq!(unusable.len(), 10, "{unusable:#?}");
    for (name, ..) in usable {
        let about = |(id, ..): &(String, String, String, u64)| id.ends_with(&format!(" {name}"));
        assert!(!unusable.iter().any(about), "{name}: {unusable:#?}");
        assert!(!refused.iter().any(about), "{name}: {refused:#?}");
    }
}

/// A VM KubeVirt's webhook refuses while applying its instancetype gets those refusals alone,
/// as KubeVirt answers: judged as written, its spec would draw warnings the instancetype makes
/// untrue (NUMA without dedicated CPUs or huge pages, where `cx1.large` brings both). The
/// schema's enumerations, which KubeVirt checks first, still count.
#[test]
fn a_vm_refused_for_conflicts_gets_no_warnings_the_instancetype_makes_untrue() {
    let vm = |extra: &str| {
        format!(
            "\
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {{name: db, namespace: web}}
spec:
  runStrategy: Always
  instancetype: {{name: cx1.large}}
  template:
    spec:
      domain:
        cpu:
          numa: {{guestMappingPassthrough: {{}}}}
        memory:
          maxGuest: 16Gi
        resources:
          requests: {{cpu: \"1\"}}
        devices: {{}}
{extra}"
        )
    };
    let (_tmp, file) = temp_file("vm.yaml", &vm(""));
    let out = run_on(&["validate"], &file);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let codes: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.split_once("error[").or_else(|| l.split_once("warning[")))
        .map(|(_, rest)| &rest[..5])
        .collect();
    assert_eq!(codes, ["KV010", "KV010"], "{stdout}");
    // A value the schema does not take is refused before the instancetype is applied.
    let (_tmp, file) = temp_file(
        "vm.yaml",
        &vm(
            "      topologySpreadConstraints:\n      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Sometimes}\n",
        ),
    );
    let out = run_on(&["validate"], &file);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout
            .contains("whenUnsatisfiable in body should be one of [DoNotSchedule ScheduleAnyway]"),
        "{stdout}"
    );
}

/// A file of an earlier `build -o DIR`, named on its own beside its sources (as a pre-commit
/// hook names staged files), defines its object twice: the finding says where it comes from
/// and how to leave it out.
#[test]
fn a_second_definition_in_an_earlier_output_says_how_to_leave_it_out() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("it.yaml"),
        "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
         metadata: {name: tiny}\nspec: {cpu: {guest: 1}, memory: {guest: 1Gi}}\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_kvrender"))
            .current_dir(tmp.path())
            .args(args)
            .output()
            .unwrap()
    };
    let built = run(&["build", "--no-default-catalog", "it.yaml", "-o", "out"]);
    assert_eq!(built.status.code(), Some(0), "{}", describe(&built));
    let written = std::fs::read_dir(tmp.path().join("out"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find(|name| name.ends_with(".yaml"))
        .expect("a written file");
    let hint = "(`out` holds the output of an earlier `kvrender build -o out`: leave it out with \
                `--exclude out/`)";
    let beside_its_source = || {
        let out = run(&[
            "validate",
            "--no-default-catalog",
            "it.yaml",
            &format!("out/{written}"),
        ]);
        assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let stdout = beside_its_source();
    assert!(
        stdout.contains("is defined twice") && stdout.contains(hint),
        "{stdout}"
    );
    // Without the marker, the folder is one of the user's own: no such hint.
    std::fs::remove_file(tmp.path().join("out/.kvrender-output")).unwrap();
    let stdout = beside_its_source();
    assert!(
        stdout.contains("is defined twice") && !stdout.contains("earlier"),
        "{stdout}"
    );
}

/// A string where a list or a mapping belongs that is itself the YAML of one (a block written
/// with `|`, a Helm habit) is told apart from other strings: the finding says why it is one
/// string and what to write.
#[test]
fn yaml_written_as_text_where_a_list_belongs_is_named() {
    let vm = |disks: &str| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: g\nspec:\n  \
             runStrategy: Halted\n  template:\n    spec:\n      domain:\n        \
             memory: {{guest: 1Gi}}\n        devices:\n          disks: {disks}\n"
        )
    };
    let hint = "must be a list, not a string (the text is the YAML of a list: a block written \
                with `|` or `>`, or text a template wrote, stays one string; write the list \
                itself in YAML): the API server refuses the object";
    for (disks, hinted) in [
        ("|\n            - name: a\n              disk: {}", true),
        ("\"[]\"", true),
        ("virtio", false),
    ] {
        let (_tmp, file) = temp_file("vm.yaml", &vm(disks));
        let out = run_on(&["validate", "--no-default-catalog"], &file);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{stdout}");
        assert!(
            stdout
                .contains("spec.template.spec.domain.devices.disks: must be a list, not a string"),
            "{stdout}"
        );
        assert_eq!(stdout.contains(hint), hinted, "{disks}: {stdout}");
    }
}

/// A VM whose instancetype is in none of the inputs, and whose preference has requirements, is
/// refused as KubeVirt refuses it without the instancetype (its own CPU and memory counted); the
/// finding says how to give kvrender the cluster's copy when the name is not a near miss.
#[test]
fn requirements_against_an_instancetype_not_among_the_inputs_say_how_to_export_it() {
    let vm = |kind: &str, name: &str| {
        format!(
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {{name: vm1, namespace: lab}}\n\
             spec:\n  runStrategy: Always\n  instancetype: {{kind: {kind}, name: {name}}}\n  \
             preference: {{name: fedora}}\n  template:\n    spec:\n      domain: {{devices: {{}}}}\n"
        )
    };
    for (kind, name, export) in [
        (
            "VirtualMachineInstancetype",
            "team1.medium",
            Some("`kubectl get virtualmachineinstancetype team1.medium -n lab -o yaml`"),
        ),
        (
            "VirtualMachineClusterInstancetype",
            "team1.medium",
            Some("`kubectl get virtualmachineclusterinstancetype team1.medium -o yaml`"),
        ),
        ("VirtualMachineClusterInstancetype", "u1.medum", None),
    ] {
        let (_tmp, file) = temp_file("vm.yaml", &vm(kind, name));
        let out = run_on(&["validate"], &file);
        let shown = describe(&out);
        assert_eq!(out.status.code(), Some(1), "{shown}");
        let kv033: Vec<&str> = shown
            .lines()
            .filter(|l| l.contains("error[KV033]"))
            .collect();
        assert_eq!(kv033.len(), 1, "{shown}");
        assert!(
            kv033[0].contains("was not found, so KubeVirt counted the VM's own CPU and memory"),
            "{shown}"
        );
        match export {
            Some(command) => assert!(
                kv033[0].contains(command) && kv033[0].contains("pass it with `--catalog`"),
                "{shown}"
            ),
            None => assert!(!kv033[0].contains("kubectl get"), "{shown}"),
        }
        // `build` must expand the VM: its `KV011` is an error and says so, not what admission
        // would let through.
        let built = run_on(&["build"], &file);
        let shown = describe(&built);
        assert_eq!(built.status.code(), Some(1), "{shown}");
        let kv011: Vec<&str> = shown.lines().filter(|l| l.contains("[KV011]")).collect();
        assert_eq!(kv011.len(), 1, "{shown}");
        assert!(
            kv011[0].contains("error[KV011]") && !kv011[0].contains("admission"),
            "{shown}"
        );
    }
}

/// An overlay folder holds a kustomization and the patches it names, and nothing kvrender reads
/// as a resource; a kustomization named on its own is not read either. Both are said, with the
/// pipe that checks what kustomize builds, rather than passed as clean without a word.
#[test]
fn an_overlay_or_a_kustomization_alone_is_said_to_be_unread() {
    let tmp = tempfile::tempdir().unwrap();
    let overlay = tmp.path().join("overlays/prod");
    std::fs::create_dir_all(&overlay).unwrap();
    std::fs::create_dir_all(tmp.path().join("base")).unwrap();
    std::fs::write(
        overlay.join("kustomization.yaml"),
        "resources:\n- ../../base\npatches:\n- path: patch.yaml\n",
    )
    .unwrap();
    std::fs::write(
        overlay.join("patch.yaml"),
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: vm1}\n\
         spec:\n  runStrategy: Halted\n",
    )
    .unwrap();
    for (path, said) in [
        (
            "overlays/prod",
            "overlays/prod: nothing read but a kustomization",
        ),
        (
            "overlays/prod/kustomization.yaml",
            "overlays/prod/kustomization.yaml: a kustomization is not read",
        ),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
            .current_dir(tmp.path())
            .args(["validate", path])
            .output()
            .unwrap();
        let shown = describe(&out);
        assert_eq!(out.status.code(), Some(0), "{shown}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(&format!("note: {said}"))
                && stderr.contains("`kubectl kustomize overlays/prod | kvrender validate -`"),
            "{shown}"
        );
    }
    // A folder with resources of its own beside its kustomization gets no such note.
    std::fs::write(
        tmp.path().join("base/kustomization.yaml"),
        "resources:\n- vm.yaml\n",
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("base/vm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .current_dir(tmp.path())
        .args(["validate", "base"])
        .output()
        .unwrap();
    assert!(out.stderr.is_empty(), "{}", describe(&out));
}

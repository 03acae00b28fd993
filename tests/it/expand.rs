//! `kvrender expand` through the binary: representative expansions and the diagnostics of
//! VMs that do not expand. The emitted text is snapshotted, so the emitter is covered too.

use insta_cmd::assert_cmd_snapshot;

use crate::common::{kvrender, snapshot_settings, testdata};

#[test]
fn namespaced_instancetype_and_cluster_preference() {
    let _guard = snapshot_settings();
    assert_cmd_snapshot!(kvrender().current_dir(testdata("expand")).args([
        "expand",
        "--no-default-catalog",
        "namespaced-instancetype.yaml"
    ]));
}

#[test]
fn conflicts_missing_references_and_bad_kinds() {
    let _guard = snapshot_settings();
    assert_cmd_snapshot!(kvrender().current_dir(testdata("expand")).args([
        "expand",
        "--no-default-catalog",
        "failures.yaml"
    ]));
}

#[test]
fn broken_yaml_names_file_line_and_column() {
    let _guard = snapshot_settings();
    assert_cmd_snapshot!(kvrender().current_dir(testdata("expand")).args([
        "expand",
        "--no-default-catalog",
        "broken.yaml"
    ]));
}

#[test]
fn cluster_profile_from_a_kubevirt_resource() {
    let _guard = snapshot_settings();
    assert_cmd_snapshot!(kvrender().current_dir(testdata("expand")).args([
        "expand",
        "--no-default-catalog",
        "--cluster-config",
        "kubevirt-cr.yaml",
        "failures.yaml",
    ]));
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
    let mut child = kvrender()
        .args(["expand", "--no-default-catalog", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), &input).unwrap();
    let from_stdin = child.wait_with_output().unwrap();
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

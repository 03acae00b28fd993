//! The diagnostics the README shows are the ones kvrender prints.
//!
//! Every line of the README that reads as a whole diagnostic (`file:line: severity[KVnnn] …`)
//! has a row here: the directory under `testdata/readme/` and the command that prints it there.
//! The test runs each command in its directory and looks for the README's line, character for
//! character, in what it wrote (stdout for `validate`'s report, stderr otherwise); a README
//! line without a row fails too.

use crate::common::{describe, kvrender, root, testdata};

/// Directory under `testdata/readme/`, arguments, and the start of the README line.
const SAMPLES: &[(&str, &[&str], &str)] = &[
    (
        "kv011",
        &["expand", "vms/bad.yaml"],
        "vms/bad.yaml:17: error[KV011]",
    ),
    (
        "kv040",
        &["build", "--no-default-catalog", "bad/"],
        "bad/catalog.yaml:16: error[KV040]",
    ),
    (
        "kv041",
        &["build", "--no-default-catalog", "catalog/"],
        "catalog/z.yaml:15: warning[KV041]",
    ),
    ("kv013", &["expand", "vm.yaml"], "vm.yaml:9: error[KV013]"),
    ("kv014", &["vmi", "vm.yaml"], "vm.yaml:21: warning[KV014]"),
    (
        "kv014-preset",
        &["validate", "presets.yaml"],
        "presets.yaml:14: warning[KV014]",
    ),
    (
        "kv014-migrate",
        &["migrate", "presets", "--with-vms", "legacy.yaml"],
        "legacy.yaml:20: warning[KV014]",
    ),
    (
        "kv014-migrate",
        &["migrate", "presets", "--with-vms", "legacy.yaml"],
        "legacy.yaml:27: warning[KV014]",
    ),
    (
        "kv034-order",
        &["validate", "vm.yaml"],
        "vm.yaml:31: warning[KV034]",
    ),
];

/// Whether `line` reads as a whole diagnostic: `path:line[:col]: severity[KVnnn] `.
fn is_diagnostic(line: &str) -> bool {
    let Some((location, rest)) = line.split_once(": ") else {
        return false;
    };
    let mut parts = location.split(':');
    let path = parts.next().unwrap_or_default();
    let numbers: Vec<&str> = parts.collect();
    let located = !path.is_empty()
        && !path.contains([' ', '`', '|'])
        && (1..=2).contains(&numbers.len())
        && numbers
            .iter()
            .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let coded = ["error[KV", "warning[KV", "info[KV"]
        .iter()
        .any(|severity| rest.starts_with(severity));
    located && coded
}

#[test]
fn the_readme_shows_diagnostics_as_kvrender_prints_them() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let shown: Vec<&str> = readme.lines().filter(|l| is_diagnostic(l)).collect();
    for line in &shown {
        assert!(
            SAMPLES.iter().any(|(_, _, start)| line.starts_with(start)),
            "the README shows a diagnostic no sample checks; add its input under \
             testdata/readme/ and a row to SAMPLES:\n{line}"
        );
    }
    for (dir, args, start) in SAMPLES {
        let line = shown
            .iter()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("the README no longer shows `{start} …`: drop its row"));
        let out = kvrender()
            .args(*args)
            .current_dir(testdata("readme").join(dir))
            .output()
            .expect("kvrender runs");
        // `validate` prints its report on stdout, the other commands their diagnostics on
        // stderr.
        let printed = String::from_utf8_lossy(if args[0] == "validate" {
            &out.stdout
        } else {
            &out.stderr
        });
        assert!(
            printed.lines().any(|printed| printed == *line),
            "`kvrender {}` in testdata/readme/{dir} does not print the README's line\n\
             README:  {line}\nprinted: {printed}",
            args.join(" ")
        );
        // An error exits 1; warnings alone, 0.
        let code = if start.contains("error[") { 1 } else { 0 };
        assert_eq!(out.status.code(), Some(code), "{dir}: exit code");
    }
}

#[test]
fn only_whole_diagnostics_count_as_samples() {
    assert!(is_diagnostic(
        "vm.yaml:9: error[KV013] VirtualMachine/web/vm1: …"
    ));
    assert!(is_diagnostic("input.yaml:3:7: error[KV001] broken"));
    assert!(!is_diagnostic("`db.yaml:17: error[KV004] …`"));
    assert!(!is_diagnostic("| `KV041` | a label that disagrees |"));
    assert!(!is_diagnostic(
        "<kustomize build>: error[KV010] VirtualMachine/fedora: …"
    ));
    assert!(!is_diagnostic("vm.yaml:x: error[KV013] …"));
}

/// Every command that resolves references shows the options it shares with the others under
/// one heading, in one order, after its own options.
#[test]
fn shared_options_read_the_same_in_every_command_help() {
    let shared = [
        "--catalog <PATH>",
        "--no-default-catalog",
        "--cluster-config <FILE>",
        "--exclude <GLOB>",
        "--built-from <DIR>",
    ];
    for command in [
        &["build"][..],
        &["expand"],
        &["validate"],
        &["vmi"],
        &["diff"],
        &["migrate", "presets"],
    ] {
        let out = kvrender().args(command).arg("--help").output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{command:?}");
        let help = String::from_utf8(out.stdout).unwrap();
        let (own, rest) = help
            .split_once("\nInputs, references and cluster:\n")
            .unwrap_or_else(|| panic!("{command:?}: no shared heading in\n{help}"));
        assert!(own.contains("\nOptions:\n"), "{command:?}: {help}");
        let listed: Vec<&str> = rest
            .lines()
            .filter_map(|line| line.trim_start().split("  ").next())
            .filter(|option| option.starts_with("--"))
            .collect();
        assert_eq!(listed, shared, "{command:?}: {help}");
    }
}

/// The top-level help says how kvrender runs when kpt or kustomize start it with no arguments,
/// as the README's table of ways to start the function does.
#[test]
fn top_level_help_names_the_implicit_function() {
    let out = kvrender().arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", describe(&out));
    // clap wraps the help: compare it with its lines joined.
    let help = String::from_utf8(out.stdout)
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        help.contains(
            "With no arguments and a ResourceList piped on stdin, kvrender runs as a KRM \
             function (`kvrender fn`)"
        ),
        "{help}"
    );
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.contains("| `kvrender` with no arguments and a piped stdin"),
        "the README's row is gone"
    );
}

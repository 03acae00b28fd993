//! Findings as a GitLab Code Quality report: a JSON array of issues (`description`,
//! `check_name`, `fingerprint`, `severity`, `location.path`, `location.lines.begin`), the
//! subset of the Code Climate format that GitLab reads from a job's
//! `artifacts:reports:codequality` and shows in the merge request.
//!
//! GitLab matches an issue to a file by a path relative to the repository's root, so a leading
//! `./` is dropped and an absolute path under `CI_PROJECT_DIR` (the checkout) made relative.
//! It tells issues apart, and new ones from old, by their fingerprint: here a digest of the
//! code, the file, the object, the field and the message, without the line (nor the places
//! the message itself names, such as `first at a.yaml:12`), so that a finding moved by an edit
//! above it, or above what it names, is not reported as new; findings equal in all of those
//! are numbered in their order.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::Checkout;
use crate::diagnostic::{Diagnostic, Severity};

/// The directory report paths are relative to: `CI_PROJECT_DIR` in a pipeline, else the
/// current directory.
fn project_dir() -> Option<PathBuf> {
    std::env::var_os("CI_PROJECT_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
}

/// GitLab's scale is info, minor, major, critical, blocker. An error is what the cluster
/// refuses (`major`, above what it only warns about); none is `blocker`, which GitLab keeps
/// for what stops a release whatever else holds.
fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "major",
        Severity::Warning => "minor",
        Severity::Info => "info",
    }
}

/// `message` with the numbers that place something in a file (`a.yaml:12`, `line 12`,
/// `column 3`, `document 2`) written as `N`: they change with edits that leave the finding as
/// it was.
fn without_positions(message: &str) -> String {
    const BEFORE: [&str; 4] = [":", "line ", "column ", "document "];
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(start) = rest.find(|c: char| c.is_ascii_digit()) {
        let end = rest[start..]
            .find(|c: char| !c.is_ascii_digit())
            .map_or(rest.len(), |n| start + n);
        out.push_str(&rest[..start]);
        let placed = BEFORE.iter().any(|b| out.ends_with(b))
            // Not after another number (`v1:2`, `10:30`).
            && !out
                .trim_end_matches(|c: char| !c.is_alphanumeric())
                .ends_with(|c: char| c.is_ascii_digit());
        out.push_str(if placed { "N" } else { &rest[start..end] });
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The report, pretty-printed, with a final newline.
pub fn report(diags: &[Diagnostic]) -> String {
    let cwd = std::env::current_dir().ok();
    report_in(diags, project_dir().as_deref(), cwd.as_deref())
}

/// The message of `d` as its fingerprint counts it: without positions, and with the place
/// it names (`first at ./a.yaml:12`, its [`Diagnostic::related`]) named by its path from the
/// checkout, as the finding's own is, so that the fingerprint does not change with how the
/// files were named on the command line, or where the checkout is. The place is found by
/// the origin the finding carries, not by reading the message, whose paths may hold spaces.
fn fingerprinted_message(d: &Diagnostic, checkout: &Checkout) -> String {
    let renamed = d
        .related
        .as_deref()
        .and_then(|related| d.message_renaming_related(&checkout.relative(&related.path)));
    without_positions(renamed.as_deref().unwrap_or(&d.message))
}

/// [`report`], with paths made relative to `root`, relative ones taken from `cwd`.
fn report_in(diags: &[Diagnostic], root: Option<&Path>, cwd: Option<&Path>) -> String {
    let checkout = Checkout::new(root, cwd);
    let mut seen: HashMap<[u8; 32], u32> = HashMap::new();
    let issues: Vec<Value> = diags
        .iter()
        .map(|d| {
            let path = checkout.relative(&d.origin.path);
            let object = d.object.as_ref().map(ToString::to_string);
            let mut key = Sha256::new();
            for part in [
                d.code,
                &path,
                object.as_deref().unwrap_or(""),
                d.field.as_deref().unwrap_or(""),
                &fingerprinted_message(d, &checkout),
            ] {
                // Each part with its length, so that no two lists of parts join alike.
                key.update((part.len() as u64).to_le_bytes());
                key.update(part.as_bytes());
            }
            let key: [u8; 32] = key.finalize().into();
            let nth = seen.entry(key).or_insert(0);
            *nth += 1;
            let mut digest = Sha256::new();
            digest.update(key);
            digest.update(nth.to_le_bytes());
            let fingerprint: String = digest
                .finalize()
                .iter()
                .take(16)
                .map(|b| format!("{b:02x}"))
                .collect();
            let mut description = String::new();
            if let Some(object) = &object {
                description.push_str(object);
                description.push_str(": ");
            }
            if let Some(field) = &d.field {
                description.push_str(field);
                description.push_str(": ");
            }
            description.push_str(&d.message);
            if let (Some(line), Some(col)) = (d.origin.line, d.column) {
                description.push_str(&format!(" (line {line}, column {col})"));
            }
            json!({
                "description": description,
                "check_name": d.code,
                "fingerprint": fingerprint,
                "severity": severity(d.severity),
                "location": {
                    "path": path,
                    // GitLab requires a line; a finding about a whole file points at its first.
                    "lines": {"begin": d.origin.line.unwrap_or(1)},
                },
            })
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&issues).unwrap_or_else(|_| "[]".into());
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::ObjectRef;
    use crate::origin::Origin;

    fn vm(name: &str) -> ObjectRef {
        ObjectRef {
            api_version: "kubevirt.io/v1".into(),
            kind: "VirtualMachine".into(),
            namespace: Some("lab".into()),
            name: name.into(),
        }
    }

    fn issues(diags: &[Diagnostic], root: Option<&Path>) -> Vec<Value> {
        match serde_json::from_str(&report_in(diags, root, root)).unwrap() {
            Value::Array(issues) => issues,
            other => panic!("not an array: {other}"),
        }
    }

    #[test]
    fn an_issue_has_what_gitlab_reads() {
        let d = Diagnostic::error(
            "KV011",
            Origin::new("/builds/team/vms/web.yaml", 0, Some(7)),
            "no VirtualMachineClusterInstancetype named \"u1.huge\"",
        )
        .with_object(vm("web"))
        .with_field("spec.instancetype.name");
        let root = Path::new("/builds/team/vms");
        let issue = &issues(&[d], Some(root))[0];
        assert_eq!(issue["check_name"], "KV011");
        assert_eq!(issue["severity"], "major");
        assert_eq!(issue["location"]["path"], "web.yaml");
        assert_eq!(issue["location"]["lines"]["begin"], 7);
        assert_eq!(
            issue["description"],
            "VirtualMachine/lab/web: spec.instancetype.name: no VirtualMachineClusterInstancetype named \"u1.huge\""
        );
        let fingerprint = issue["fingerprint"].as_str().unwrap();
        assert_eq!(fingerprint.len(), 32);
        assert!(fingerprint.bytes().all(|b| b.is_ascii_hexdigit()));
    }

    #[test]
    fn paths_are_relative_to_the_project() {
        let root = Some(Path::new("/builds/team/vms"));
        let at = |path: &str| {
            let d = Diagnostic::warning("KV022", Origin::new(path, 0, None), "x");
            issues(&[d], root)[0]["location"].clone()
        };
        assert_eq!(
            at("/builds/team/vms/vms/web.yaml"),
            json!({"path": "vms/web.yaml", "lines": {"begin": 1}})
        );
        assert_eq!(at("./vms/web.yaml")["path"], "vms/web.yaml");
        assert_eq!(at("/etc/vm.yaml")["path"], "/etc/vm.yaml");
    }

    #[test]
    fn severities_follow_gitlabs_scale() {
        let o = || Origin::new("a.yaml", 0, Some(1));
        let got: Vec<Value> = issues(
            &[
                Diagnostic::error("KV001", o(), "e"),
                Diagnostic::warning("KV022", o(), "w"),
                Diagnostic {
                    severity: Severity::Info,
                    ..Diagnostic::error("KV030", o(), "i")
                },
            ],
            None,
        )
        .into_iter()
        .map(|i| i["severity"].clone())
        .collect();
        assert_eq!(got, [json!("major"), json!("minor"), json!("info")]);
    }

    /// A fingerprint does not change when the finding moves to another line, differs when
    /// anything else differs, and two findings alike in all but the line still get two.
    #[test]
    fn fingerprints_are_stable_and_unique() {
        let at = |line, message: &str, name| {
            Diagnostic::error("KV034", Origin::new("vms.yaml", 0, Some(line)), message)
                .with_object(vm(name))
        };
        let fp = |diags: &[Diagnostic]| -> Vec<String> {
            issues(diags, None)
                .iter()
                .map(|i| i["fingerprint"].as_str().unwrap().to_owned())
                .collect()
        };
        let before = fp(&[at(4, "bad bus", "a"), at(30, "bad bus", "b")]);
        let after = fp(&[at(9, "bad bus", "a"), at(35, "bad bus", "b")]);
        assert_eq!(before, after);
        assert_ne!(before[0], before[1]);
        assert_ne!(fp(&[at(4, "bad bus!", "a")])[0], before[0]);
        let twice = fp(&[at(4, "bad bus", "a"), at(8, "bad bus", "a")]);
        assert_eq!(twice[0], before[0]);
        assert_ne!(twice[0], twice[1]);
    }

    /// A message that names a place in a file keeps its fingerprint when that place moves.
    #[test]
    fn places_a_message_names_do_not_change_the_fingerprint() {
        assert_eq!(
            without_positions(
                "VirtualMachine/a is defined twice: first at st/a.yaml:12 (document 3)"
            ),
            "VirtualMachine/a is defined twice: first at st/a.yaml:N (document N)"
        );
        assert_eq!(
            without_positions("the `[` at line 4, column 17 is not closed"),
            "the `[` at line N, column N is not closed"
        );
        // Numbers that say what is wrong stay.
        for kept in [
            "cpu 4 is more than 2",
            "apiVersion kubevirt.io/v1:2",
            "at 10:30",
            "u1.medium needs 2Gi",
        ] {
            assert_eq!(without_positions(kept), kept);
        }
        let dup = |line| {
            Diagnostic::error(
                "KV020",
                Origin::new("b.yaml", 0, Some(1)),
                format!("VirtualMachine/x is defined twice: first at a.yaml:{line}"),
            )
        };
        let fp = |d| issues(&[d], None)[0]["fingerprint"].clone();
        assert_eq!(fp(dup(1)), fp(dup(3)));
    }

    /// The same finding has the same fingerprint however its files were named on the command
    /// line (`d/a.yaml`, `./d/a.yaml`, `d//a.yaml`, `d/../d/a.yaml`, an absolute path), where
    /// the checkout is, and from which of its folders kvrender ran; so does the place its
    /// message names, also when its path has a space.
    #[test]
    fn fingerprints_do_not_depend_on_how_files_were_named() {
        let report = |path: &str, first: &str, root: &str, cwd: &str| {
            let d = Diagnostic::error(
                "KV020",
                Origin::new(path, 0, Some(9)),
                format!("VirtualMachine/x is defined twice: first at {first}:3 (document 1)"),
            )
            .with_related(Origin::new(first, 0, Some(3)));
            let issue = &report_in(&[d], Some(Path::new(root)), Some(Path::new(cwd)));
            let issue: Value = serde_json::from_str(issue).unwrap();
            (
                issue[0]["location"]["path"].clone(),
                issue[0]["fingerprint"].clone(),
            )
        };
        for (d1, a, d2, b) in [
            ("d1", "a.yaml", "d2", "b.yaml"),
            ("d1", "it a.yaml", "d2", "it b.yaml"),
            ("d 1", "a.yaml", "d 2", "b c.yaml"),
        ] {
            let plain = report(
                &format!("{d2}/{b}"),
                &format!("{d1}/{a}"),
                "/builds/1/repo",
                "/builds/1/repo",
            );
            assert_eq!(plain.0, format!("{d2}/{b}"));
            for (path, first, root, cwd) in [
                (
                    "./{d2}/{b}",
                    "./{d1}/{a}",
                    "/builds/1/repo",
                    "/builds/1/repo",
                ),
                (
                    "/builds/7/repo/{d2}/{b}",
                    "/builds/7/repo/{d1}/{a}",
                    "/builds/7/repo",
                    "/builds/7/repo",
                ),
                (
                    "{b}",
                    "../{d1}/{a}",
                    "/builds/1/repo",
                    "/builds/1/repo/{d2}",
                ),
                (
                    "./{b}",
                    "./../{d1}/{a}",
                    "/builds/1/repo",
                    "/builds/1/repo/{d2}",
                ),
                (
                    "../{d2}/{b}",
                    "{a}",
                    "/builds/1/repo",
                    "/builds/1/repo/{d1}",
                ),
                (
                    "{d2}//{b}",
                    "{d1}/./{a}",
                    "/builds/1/repo",
                    "/builds/1/repo",
                ),
                (
                    "./{d2}/../{d2}/{b}",
                    "{d2}/../{d1}//{a}",
                    "/builds/1/repo",
                    "/builds/1/repo",
                ),
            ] {
                let fill = |s: &str| {
                    s.replace("{d1}", d1)
                        .replace("{d2}", d2)
                        .replace("{a}", a)
                        .replace("{b}", b)
                };
                let other = report(&fill(path), &fill(first), root, &fill(cwd));
                assert_eq!(
                    other,
                    plain,
                    "{} first at {} in {}",
                    fill(path),
                    fill(first),
                    fill(cwd)
                );
            }
        }
    }

    #[test]
    fn no_findings_is_an_empty_array() {
        assert_eq!(report_in(&[], None, None), "[]\n");
    }
}

//! Findings as GitHub Actions workflow commands
//! (`::error file=F,line=L,col=C,title=KVxxx::message`), which annotate the pull request diff.
//! Warnings become `::warning`, infos `::notice`. Values are escaped as the runner expects.
//! GitHub places an annotation on the diff only when its file is relative to the repository's
//! root, so a leading `./` is dropped and an absolute path under the workspace made relative.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use super::Checkout;

use crate::diagnostic::{Diagnostic, Severity};

/// Escape the message part of a workflow command. Control characters other than line breaks
/// (an escape sequence in an object's name, say) are written out as `\u{1b}`, as in the human
/// format: a CI log is a terminal.
fn escape_data(s: &str) -> String {
    let s = if s.chars().any(|c| c.is_control() && c != '\n' && c != '\r') {
        s.chars()
            .fold(String::with_capacity(s.len() + 8), |mut out, c| {
                if c.is_control() && c != '\n' && c != '\r' {
                    out.extend(c.escape_default());
                } else {
                    out.push(c);
                }
                out
            })
    } else {
        s.to_string()
    };
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escape a property value (also `:` and `,`).
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// The directory annotation paths are relative to: `GITHUB_WORKSPACE` in a workflow (the
/// checkout), else the current directory.
fn workspace() -> Option<PathBuf> {
    std::env::var_os("GITHUB_WORKSPACE")
        .map(PathBuf::from)
        .or_else(|| std::env::current_dir().ok())
}

/// One command per finding.
pub fn report(diags: &[Diagnostic]) -> String {
    let cwd = std::env::current_dir().ok();
    report_in(diags, workspace().as_deref(), cwd.as_deref())
}

/// [`report`], with annotation paths made relative to `workspace`.
fn report_in(diags: &[Diagnostic], workspace: Option<&Path>, cwd: Option<&Path>) -> String {
    let checkout = Checkout::new(workspace, cwd);
    let mut out = String::new();
    for d in diags {
        let command = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let _ = write!(
            out,
            "::{command} file={}",
            escape_property(&checkout.relative(&d.origin.path))
        );
        if let Some(line) = d.origin.line {
            let _ = write!(out, ",line={line}");
        }
        if let Some(col) = d.column {
            let _ = write!(out, ",col={col}");
        }
        let _ = write!(out, ",title={}::", escape_property(d.code));
        let mut message = String::new();
        if let Some(obj) = &d.object {
            let _ = write!(message, "{obj}: ");
        }
        if let Some(field) = &d.field {
            let _ = write!(message, "{field}: ");
        }
        message.push_str(&d.message);
        out.push_str(&escape_data(&message));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;

    fn annotation_path(path: &str, root: Option<&Path>, cwd: Option<&Path>) -> String {
        Checkout::new(root, cwd).relative(path).into_owned()
    }

    #[test]
    fn properties_and_data_are_escaped() {
        let d = Diagnostic::error("KV001", Origin::new("a,b:c.yaml", 0, Some(3)), "x\ny 100%")
            .with_column(Some(7));
        assert_eq!(
            report_in(&[d], None, None),
            "::error file=a%2Cb%3Ac.yaml,line=3,col=7,title=KV001::x%0Ay 100%25\n"
        );
    }

    #[test]
    fn control_characters_are_written_out() {
        let d = Diagnostic::error(
            "KV003",
            Origin::new("a\u{1b}[2J.yaml", 0, Some(1)),
            "name \"x\u{1b}]0;pwn\u{7}\ty\" is bad",
        );
        let out = report_in(&[d], None, None);
        assert!(!out.trim_end().chars().any(char::is_control), "{out:?}");
        assert_eq!(
            out,
            "::error file=a\\u{1b}[2J.yaml,line=1,title=KV003::name \"x\\u{1b}]0;pwn\\u{7}\\ty\" is bad\n"
        );
    }

    #[test]
    fn paths_are_relative_to_the_workspace() {
        let root = Some(Path::new("/home/runner/work/repo"));
        assert_eq!(
            annotation_path("./vms/web.yaml", root, root),
            "vms/web.yaml"
        );
        assert_eq!(
            annotation_path(".//vms/web.yaml", None, None),
            "vms/web.yaml"
        );
        assert_eq!(annotation_path("vms/web.yaml", root, root), "vms/web.yaml");
        assert_eq!(
            annotation_path("/home/runner/work/repo/vms/web.yaml", root, root),
            "vms/web.yaml"
        );
        // Outside the workspace, or the workspace itself: left as it is.
        assert_eq!(annotation_path("/etc/vm.yaml", root, root), "/etc/vm.yaml");
        assert_eq!(
            annotation_path("/home/runner/work/repository/vm.yaml", root, root),
            "/home/runner/work/repository/vm.yaml"
        );
        assert_eq!(annotation_path("<stdin>", root, root), "<stdin>");
        // A job that runs in a folder of the checkout (`working-directory: manifests`) names
        // its files from there; the annotation names them from the checkout's root.
        let manifests = Some(Path::new("/home/runner/work/repo/manifests"));
        assert_eq!(
            annotation_path("vms/web.yaml", root, manifests),
            "manifests/vms/web.yaml"
        );
        assert_eq!(
            annotation_path("../vms/web.yaml", root, manifests),
            "vms/web.yaml"
        );
        assert_eq!(annotation_path("<stdin>", root, manifests), "<stdin>");
        // Outside the checkout: left as it was given.
        assert_eq!(
            annotation_path("../../other/vm.yaml", root, manifests),
            "../../other/vm.yaml"
        );
        let d = Diagnostic::error(
            "KV011",
            Origin::new("/home/runner/work/repo/vm.yaml", 0, Some(2)),
            "x",
        );
        assert_eq!(
            report_in(&[d], root, root),
            "::error file=vm.yaml,line=2,title=KV011::x\n"
        );
    }
}

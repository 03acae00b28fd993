//! Printing diagnostics as concise lines for people and pre-commit logs.

use std::fmt::Write;

use crate::diagnostic::{Diagnostic, Severity};

/// One line: `file:line:col: severity[CODE] Kind/ns/name: field: message`.
pub fn human_line(d: &Diagnostic) -> String {
    line_naming(d, d.object.as_ref().map(ToString::to_string).as_deref())
}

/// [`human_line`] with `object` where the finding's object would stand.
fn line_naming(d: &Diagnostic, object: Option<&str>) -> String {
    let mut s = String::new();
    let _ = write!(s, "{}", d.origin.path);
    if let Some(line) = d.origin.line {
        let _ = write!(s, ":{line}");
        if let Some(col) = d.column {
            let _ = write!(s, ":{col}");
        }
    }
    let _ = write!(s, ": {}[{}] ", d.severity.as_str(), d.code);
    if let Some(obj) = object {
        let _ = write!(s, "{obj}: ");
    }
    if let Some(field) = &d.field {
        let _ = write!(s, "{field}: ");
    }
    s.push_str(&d.message);
    s
}

/// Whether `b` says what `a` says, at the same place, about another object: the objects one
/// catalog line renders (a size row gives both scopes of every variant) share their findings.
fn same_but_object(a: &Diagnostic, b: &Diagnostic) -> bool {
    a.object.is_some()
        && b.object.is_some()
        && a.code == b.code
        && a.severity == b.severity
        && a.origin.path == b.origin.path
        && a.origin.line == b.origin.line
        && a.column == b.column
        && a.field == b.field
        && a.message == b.message
}

/// Every diagnostic on its own line, then a summary line when there is anything to say. Findings
/// that differ only in their object, one after the other, share a line that names every object.
pub fn human(diags: &[Diagnostic], summary: bool) -> String {
    let mut out = String::new();
    let mut lines: Vec<&Diagnostic> = Vec::new();
    let mut rest = diags;
    while let Some((first, tail)) = rest.split_first() {
        let same = tail
            .iter()
            .take_while(|d| same_but_object(first, d))
            .count();
        if same == 0 {
            out.push_str(&human_line(first));
        } else {
            let others: Vec<String> = tail[..same]
                .iter()
                .filter_map(|d| d.object.as_ref().map(ToString::to_string))
                .collect();
            let object = first
                .object
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default();
            let objects = format!("{object} and {same} more ({})", others.join(", "));
            out.push_str(&line_naming(first, Some(&objects)));
        }
        out.push('\n');
        lines.push(first);
        rest = &tail[same..];
    }
    if summary {
        let errors = lines
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        let warnings = lines
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .count();
        if errors + warnings > 0 {
            let _ = writeln!(
                out,
                "Found {errors} error{} and {warnings} warning{}.",
                if errors == 1 { "" } else { "s" },
                if warnings == 1 { "" } else { "s" }
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::{ObjectRef, Origin};

    fn finding(name: &str, line: u32, message: &str) -> Diagnostic {
        Diagnostic::error("KV004", Origin::new("c.yaml", 0, Some(line)), message)
            .with_object(ObjectRef {
                api_version: "v1".into(),
                kind: "K".into(),
                namespace: None,
                name: name.into(),
            })
            .with_field("spec.x")
    }

    #[test]
    fn findings_that_differ_only_in_their_object_share_a_line() {
        let diags = [
            finding("a", 3, "bad"),
            finding("b", 3, "bad"),
            finding("c", 3, "bad"),
            finding("d", 3, "other"),
            finding("e", 4, "other"),
        ];
        assert_eq!(
            human(&diags, true),
            "c.yaml:3: error[KV004] K/a and 2 more (K/b, K/c): spec.x: bad\n\
             c.yaml:3: error[KV004] K/d: spec.x: other\n\
             c.yaml:4: error[KV004] K/e: spec.x: other\n\
             Found 3 errors and 0 warnings.\n"
        );
    }
}

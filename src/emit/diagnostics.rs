//! Printing diagnostics as concise lines for people and pre-commit logs.

use std::fmt::Write;

use crate::diagnostic::{Diagnostic, Severity};

/// One line: `file:line:col: severity[CODE] Kind/ns/name: field: message`.
pub fn human_line(d: &Diagnostic) -> String {
    let mut s = String::new();
    let _ = write!(s, "{}", d.origin.path);
    if let Some(line) = d.origin.line {
        let _ = write!(s, ":{line}");
        if let Some(col) = d.column {
            let _ = write!(s, ":{col}");
        }
    }
    let _ = write!(s, ": {}[{}] ", d.severity.as_str(), d.code);
    if let Some(obj) = &d.object {
        let _ = write!(s, "{obj}: ");
    }
    if let Some(field) = &d.field {
        let _ = write!(s, "{field}: ");
    }
    s.push_str(&d.message);
    s
}

/// Every diagnostic on its own line, then a summary line when there is anything to say.
pub fn human(diags: &[Diagnostic], summary: bool) -> String {
    let mut out = String::new();
    for d in diags {
        out.push_str(&human_line(d));
        out.push('\n');
    }
    if summary {
        let errors = diags
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        let warnings = diags
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

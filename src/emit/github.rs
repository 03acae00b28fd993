//! Findings as GitHub Actions workflow commands
//! (`::error file=F,line=L,col=C,title=KVxxx::message`), which annotate the pull request diff.
//! Warnings become `::warning`, infos `::notice`. Values are escaped as the runner expects.

use std::fmt::Write;

use crate::diagnostic::{Diagnostic, Severity};

/// Escape the message part of a workflow command.
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escape a property value (also `:` and `,`).
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// One command per finding.
pub fn report(diags: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diags {
        let command = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let _ = write!(out, "::{command} file={}", escape_property(&d.origin.path));
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

    #[test]
    fn properties_and_data_are_escaped() {
        let d = Diagnostic::error("KV001", Origin::new("a,b:c.yaml", 0, Some(3)), "x\ny 100%")
            .with_column(Some(7));
        assert_eq!(
            report(&[d]),
            "::error file=a%2Cb%3Ac.yaml,line=3,col=7,title=KV001::x%0Ay 100%25\n"
        );
    }
}

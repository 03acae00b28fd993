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
    // A finding about standard input as a whole (under kpt, a whole run of the function) has
    // no place to name: `-:` alone reads like a parse position.
    if &*d.origin.path != "-" || d.origin.line.is_some() {
        let _ = write!(s, "{}", d.origin.path);
        if let Some(line) = d.origin.line {
            let _ = write!(s, ":{line}");
            if let Some(col) = d.column {
                let _ = write!(s, ":{col}");
            }
        }
        s.push_str(": ");
    }
    let _ = write!(s, "{}[{}] ", d.severity.as_str(), d.code);
    if let Some(obj) = object {
        let _ = write!(s, "{obj}: ");
    }
    if let Some(field) = &d.field {
        let _ = write!(s, "{field}: ");
    }
    s.push_str(&d.message);
    one_line(s)
}

/// `line` with every control character escaped (`\n`, `\u{0}`), and every character that does
/// not show ([`unseen`]): a file, object or field name from hostile input must not break a
/// finding or an error over several lines, hide part of it, or reorder it on the screen (a
/// right-to-left override); a field name with a zero-width space must not look like the name
/// it fails to be.
pub fn one_line(line: String) -> String {
    if !line.chars().any(|c| c.is_control() || unseen(c)) {
        return line;
    }
    line.chars()
        .fold(String::with_capacity(line.len() + 8), |mut s, c| {
            if c.is_control() || unseen(c) {
                s.extend(c.escape_default());
            } else {
                s.push(c);
            }
            s
        })
}

/// Whether `c` is a character that a terminal shows as nothing or as a plain space, though it
/// is neither: zero-width and joining characters, direction marks and overrides, the byte
/// order mark, soft hyphens, variation selectors and tag characters, and the spaces that are
/// not the ASCII space (a key written with a no-break space after it reads as the key).
pub fn unseen(c: char) -> bool {
    matches!(
        c,
        '\u{a0}'
            | '\u{ad}'
            | '\u{34f}'
            | '\u{61c}'
            | '\u{115f}'..='\u{1160}'
            | '\u{1680}'
            | '\u{17b4}'..='\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{2000}'..='\u{200f}'
            | '\u{2028}'..='\u{202f}'
            | '\u{205f}'..='\u{206f}'
            | '\u{3000}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff0}'..='\u{fff8}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0000}'..='\u{e0fff}'
    )
}

/// Every diagnostic on its own line, then a summary line when there is anything to say. Findings
/// that differ only in their object share one line that names every object, at the place of
/// the first of them, however far apart the sort put them (a size row's two scopes, each with
/// several fields, alternate). Findings whose line is not known (items of a KRM ResourceList
/// without their text) are not one place, so each keeps its own line.
pub fn human(diags: &[Diagnostic], summary: bool) -> String {
    type Key<'d> = (
        &'d str,
        &'d str,
        Option<u32>,
        Option<u32>,
        Option<&'d str>,
        &'d str,
    );
    let mut out = String::new();
    // The later findings that join each line's first one.
    let mut joined: Vec<Vec<usize>> = vec![Vec::new(); diags.len()];
    let mut first_of: std::collections::HashMap<(Key<'_>, Severity), usize> =
        std::collections::HashMap::new();
    let mut shown = vec![true; diags.len()];
    for (i, d) in diags.iter().enumerate() {
        if d.object.is_none() || d.origin.line.is_none() {
            continue;
        }
        let k = (
            (
                d.code,
                &*d.origin.path,
                d.origin.line,
                d.column,
                d.field.as_deref(),
                d.message.as_str(),
            ),
            d.severity,
        );
        match first_of.get(&k) {
            Some(&first) => {
                joined[first].push(i);
                shown[i] = false;
            }
            None => {
                first_of.insert(k, i);
            }
        }
    }
    let mut lines = 0;
    for (i, d) in diags.iter().enumerate() {
        if !shown[i] {
            continue;
        }
        lines += 1;
        if joined[i].is_empty() {
            out.push_str(&human_line(d));
        } else {
            let others: Vec<String> = joined[i]
                .iter()
                .filter_map(|&j| diags[j].object.as_ref().map(ToString::to_string))
                .collect();
            let object = d
                .object
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default();
            // A part every family uses can join a hundred objects on one line: the first few
            // name the kinds and families involved, the count says the rest, and the other
            // formats list each.
            let named = others.len().min(NAMED);
            let rest = if others.len() > named { ", …" } else { "" };
            let objects = format!(
                "{object} and {} more ({}{rest})",
                others.len(),
                others[..named].join(", ")
            );
            out.push_str(&line_naming(d, Some(&objects)));
        }
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
            let grouped = if lines < diags.len() {
                format!(" ({lines} line{} above)", if lines == 1 { "" } else { "s" })
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "Found {errors} error{} and {warnings} warning{}{grouped}.",
                if errors == 1 { "" } else { "s" },
                if warnings == 1 { "" } else { "s" }
            );
        }
    }
    out
}

/// How many of the other objects a grouped human line names.
const NAMED: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::{ObjectRef, Origin};

    #[test]
    fn a_finding_about_all_of_stdin_names_no_place() {
        let whole = Diagnostic::error("KV014", Origin::new("-", 0, None), "not migrated");
        assert_eq!(human_line(&whole), "error[KV014] not migrated");
        let at = Diagnostic::error("KV001", Origin::new("-", 0, Some(3)), "bad");
        assert_eq!(human_line(&at), "-:3: error[KV001] bad");
        let file = Diagnostic::error("KV001", Origin::new("a.yaml", 0, None), "bad");
        assert_eq!(human_line(&file), "a.yaml: error[KV001] bad");
    }

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
    fn a_finding_stays_on_one_line_whatever_the_names_hold() {
        let mut d = finding("a\nb\u{0}c", 3, "bad\rly");
        d.origin.path = "dir/x\ty.yaml".into();
        let line = human_line(&d);
        assert_eq!(
            line,
            "dir/x\\ty.yaml:3: error[KV004] K/\"a\\nb\\0c\": spec.x: bad\\rly"
        );
        // The finding and the summary: two lines.
        assert_eq!(human(&[d], true).lines().count(), 2);
    }

    #[test]
    fn characters_that_do_not_show_are_written_out() {
        // A zero-width space after a field name, a right-to-left override in a message, a
        // no-break space: each written as its code point; other non-ASCII text is kept.
        let mut d = finding(
            "vm",
            3,
            "unknown field `runStrategy\u{200b}` near \u{202e}cba",
        );
        d.field = Some("spec.runStrategy\u{200b}\u{a0}".into());
        d.origin.path = "é/vm.yaml".into();
        assert_eq!(
            human_line(&d),
            "é/vm.yaml:3: error[KV004] K/vm: spec.runStrategy\\u{200b}\\u{a0}: unknown field \
             `runStrategy\\u{200b}` near \\u{202e}cba"
        );
        for c in ['a', 'é', '—', '中', ' ', '\u{1f600}'] {
            assert!(!unseen(c), "{c:?}");
        }
    }

    #[test]
    fn findings_that_differ_only_in_their_object_share_a_line() {
        // Sorted by object before message, the same finding of two objects can lie apart.
        let diags = [
            finding("a", 3, "bad"),
            finding("a", 3, "worse"),
            finding("b", 3, "bad"),
            finding("b", 3, "worse"),
            finding("c", 3, "bad"),
            finding("d", 3, "other"),
            finding("e", 4, "other"),
        ];
        assert_eq!(
            human(&diags, true),
            "c.yaml:3: error[KV004] K/a and 2 more (K/b, K/c): spec.x: bad\n\
             c.yaml:3: error[KV004] K/a and 1 more (K/b): spec.x: worse\n\
             c.yaml:3: error[KV004] K/d: spec.x: other\n\
             c.yaml:4: error[KV004] K/e: spec.x: other\n\
             Found 7 errors and 0 warnings (4 lines above).\n"
        );
        // Many objects: the first few are named, the count says the rest.
        let many: Vec<Diagnostic> = (0..12)
            .map(|n| finding(&format!("o{n:02}"), 5, "x"))
            .collect();
        assert_eq!(
            human(&many, false),
            "c.yaml:5: error[KV004] K/o00 and 11 more \
             (K/o01, K/o02, K/o03, K/o04, K/o05, K/o06, K/o07, K/o08, …): spec.x: x\n"
        );
        let nine: Vec<Diagnostic> = (0..9).map(|n| finding(&format!("o{n}"), 5, "x")).collect();
        assert!(
            human(&nine, false)
                .contains("K/o0 and 8 more (K/o1, K/o2, K/o3, K/o4, K/o5, K/o6, K/o7, K/o8): ")
        );
        // Nothing grouped: the summary counts what it shows.
        assert_eq!(
            human(&diags[5..], true),
            "c.yaml:3: error[KV004] K/d: spec.x: other\n\
             c.yaml:4: error[KV004] K/e: spec.x: other\n\
             Found 2 errors and 0 warnings.\n"
        );
        // All on one line: "1 line", not "1 lines".
        assert_eq!(
            human(&diags[..1], true).lines().count(),
            2,
            "one finding, one summary"
        );
        assert!(
            human(&[diags[0].clone(), diags[2].clone()], true)
                .ends_with("Found 2 errors and 0 warnings (1 line above).\n")
        );
        // Without a line (items of a ResourceList), the same finding of two objects is not
        // known to be at one place: a line each.
        let unplaced = |name| {
            let mut d = finding(name, 1, "no run strategy");
            d.origin = Origin::new("c.yaml", 0, None);
            d
        };
        assert_eq!(
            human(&[unplaced("a"), unplaced("b")], false),
            "c.yaml: error[KV004] K/a: spec.x: no run strategy\n\
             c.yaml: error[KV004] K/b: spec.x: no run strategy\n"
        );
    }
}

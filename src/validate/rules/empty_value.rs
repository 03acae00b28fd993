//! `KV045` empty-value.
//!
//! ## What it checks
//! A key written with nothing after it (`devices:` and no more-indented line below) in what a
//! catalog document merges into the objects it renders: a family's or preference's
//! `template`, the entries of its `labels` and `annotations`, and a part's `metadata` and
//! `spec`. A key whose value is written out as `null` or `~` says what it means and is not
//! reported.
//!
//! ## Why
//! YAML reads an empty value as `null`, and a merge reads `null` as "remove this key". So
//! `template.metadata.labels:` with its entries left out, or `devices:` with the line meant
//! for it indented one step too little, silently removes every label, or every device
//! setting, that the parts before it put into the object. The catalog still renders and every
//! check passes: the objects just lack what the parts set.
//!
//! ## Example
//! ```yaml
//! parts:
//!   blockmq:
//!     spec:
//!       devices:
//!       preferredBlockMultiQueue: true
//! ```
//!
//! ## Fix
//! Indent what belongs under the key, or delete the line; write `null` where removing what the
//! parts set is meant.

use serde_json::Value;

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::load::locate::Step;
use crate::model::Object;
use crate::validate::Rule;

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::EMPTY_VALUE,
    name: "empty-value",
    summary: "A key with nothing after it in what a catalog document merges into its objects (a `template`, a part's `metadata` or `spec`, a `labels` or `annotations` entry): YAML reads it as `null`, which removes what the parts before it set there (warning; write `null` where that is meant).",
    severity: Severity::Warning,
};

/// Report every empty value in the fragments of the catalog document `obj`.
pub fn check(obj: &Object, out: &mut Vec<Diagnostic>) {
    // Only a document read from a file has the text that tells `key:` from `key: null`.
    let Some((text, first_line)) = &obj.source else {
        return;
    };
    if !crate::render::is_catalog_kind(obj) {
        return;
    }
    let mut roots: Vec<(Vec<String>, &Value)> = Vec::new();
    match obj.kind_str() {
        "InstancetypeFamily" | "Preference" => {
            for key in ["template", "labels", "annotations"] {
                if let Some(value) = obj.value.get("spec").and_then(|s| s.get(key)) {
                    roots.push((vec!["spec".into(), key.into()], value));
                }
            }
        }
        "Parts" => {
            let parts = obj.value.get("parts").and_then(Value::as_object);
            for (name, part) in parts.into_iter().flatten() {
                for key in ["metadata", "spec"] {
                    if let Some(value) = part.get(key) {
                        roots.push((vec!["parts".into(), name.clone(), key.into()], value));
                    }
                }
            }
        }
        _ => return,
    }
    let mut empty: Vec<Vec<String>> = Vec::new();
    for (path, value) in roots {
        // The mappings themselves may not be `null` (`spec.labels:` is refused when the
        // catalog renders, and an empty part fragment merges nothing): only what is inside.
        let mut path = path;
        nulls_inside(value, &mut path, &mut empty);
    }
    for path in empty {
        let steps: Vec<Step<'_>> = path.iter().map(|k| Step::Key(k)).collect();
        let Some(line) = obj.steps_line(&steps) else {
            continue;
        };
        let Some(written) = line
            .checked_sub(*first_line)
            .and_then(|at| text.lines().nth(usize::try_from(at).ok()?))
        else {
            continue;
        };
        let key = path.last().map_or("", String::as_str);
        if !is_written_empty(written, key) {
            continue;
        }
        let Some(field) = super::yaml_boolean::field_of(obj, path.join(".")) else {
            continue;
        };
        out.push(
            Diagnostic::warning(
                RULE.code,
                obj.origin.at_line(Some(line)),
                format!(
                    "`{key}` has no value: YAML reads it as `null`, and merged, a `null` \
                     removes `{key}` and whatever the parts before it put there from every \
                     object rendered; indent what belongs under it, delete the line, or write \
                     `{key}: null` where removing it is meant"
                ),
            )
            .with_object(obj.object_ref())
            .with_field(field),
        );
    }
}

/// Push the path of every `null` value inside the mappings of `value` (at `path`).
fn nulls_inside(value: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let Some(map) = value.as_object() else {
        return;
    };
    for (key, value) in map {
        path.push(key.clone());
        if value.is_null() {
            out.push(path.clone());
        } else {
            nulls_inside(value, path, out);
        }
        path.pop();
    }
}

/// Whether `line` writes `key` with nothing after its colon but blanks or a comment.
fn is_written_empty(line: &str, key: &str) -> bool {
    let mut rest = line.trim_start();
    while let Some(after) = rest.strip_prefix("- ") {
        rest = after.trim_start();
    }
    let quoted = [format!("\"{key}\""), format!("'{key}'")];
    let Some(after_key) = std::iter::once(key)
        .chain(quoted.iter().map(String::as_str))
        .find_map(|written| rest.strip_prefix(written))
    else {
        return false;
    };
    let Some(value) = after_key.trim_start().strip_prefix(':') else {
        return false;
    };
    let value = value.trim();
    value.is_empty() || value.starts_with('#')
}

#[cfg(test)]
mod tests {
    use super::is_written_empty;

    /// Only a key with nothing but blanks or a comment after its colon is empty; a written
    /// `null`, a value or another key is not.
    #[test]
    fn only_a_key_with_nothing_after_its_colon_is_written_empty() {
        for line in [
            "      devices:",
            "      devices:   ",
            "  devices: # to be filled",
            "  - devices:",
            "  \"devices\":",
            "  'devices' :",
        ] {
            assert!(is_written_empty(line, "devices"), "{line}");
        }
        for line in [
            "      devices: null",
            "      devices: ~",
            "      devices: {}",
            "      devices: x",
            "      devicesx:",
            "      other:",
            "      devices",
        ] {
            assert!(!is_written_empty(line, "devices"), "{line}");
        }
    }
}

//! `KV008` yaml-boolean.
//!
//! ## What it checks
//! Values written as plain `yes`, `no`, `on`, `off`, `y` or `n` (in lower case, capitalized or
//! upper case), in any object read from a file, catalog documents included (they are tool
//! configuration, but what they render is applied). A tagged value (`!!bool yes`) or a quoted one
//! (`"yes"`) says what it is, and mapping keys are always read as text; neither is reported.
//!
//! ## Why
//! The word means two things. `kubectl apply -f` reads manifests as YAML 1.1, in which it is
//! a boolean; kustomize, kpt and `kubectl apply -k` read YAML 1.2, in which it is the string
//! `"yes"`. So `running: yes` starts a VM when the file is applied directly and is refused as
//! a string when the same file goes through a kustomization, and `enabled: "on"` in a
//! ConfigMap's data works only through kustomize. kvrender reads the word as `kubectl apply`
//! does; the warning says what each tool makes of it.
//!
//! ## Example
//! ```yaml
//! kind: ConfigMap
//! data:
//!   debug: off
//! ```
//!
//! ## Fix
//! Write `true` or `false` where a boolean is meant, and quote the word (`"off"`) where text
//! is.

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::load::yaml;
use crate::model::Object;
use crate::validate::Rule;

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::YAML_BOOLEAN,
    name: "yaml-boolean",
    summary: "A plain `yes`, `no`, `on`, `off`, `y` or `n` in a file: a boolean to `kubectl apply -f`, which reads YAML 1.1, and a string to kustomize, kpt and `kubectl apply -k`, which read YAML 1.2 (warning; see \"YAML\").",
    severity: Severity::Warning,
};

/// The field of `obj` at `field`, a path in `obj`'s text; `None` when the text holds more than
/// the object (the text of an item of a list document is its `- ` entry).
pub(super) fn field_of(obj: &Object, field: String) -> Option<String> {
    if !obj.entry {
        return Some(field);
    }
    let rest = field.strip_prefix("[0]")?;
    Some(rest.strip_prefix('.').unwrap_or(rest).to_string())
}

/// Report every plain value of `obj`'s text that YAML 1.1 and YAML 1.2 read differently.
pub fn check(obj: &Object, out: &mut Vec<Diagnostic>) {
    // Only a word read as a boolean is one of them, and an object read from no file (rendered
    // from a catalog, or handed over by kpt or kustomize, which quote such words) has no text
    // to look at.
    let Some((text, first_line)) = &obj.source else {
        return;
    };
    // A catalog document is tool configuration, but what it renders is applied: its words
    // make labels, annotations and specs that differ between `build` and kpt or kustomize.
    let applied = !obj.is_tool_config() || crate::render::is_catalog_kind(obj);
    if !applied || !yaml::holds_boolean(&obj.value) || !yaml::may_hold(text).0 {
        return;
    }
    for word in yaml::plain_booleans(text) {
        let Some(value) = word.yaml11 else { continue };
        let Some(field) = field_of(obj, word.field) else {
            continue;
        };
        let line = first_line + word.line - 1;
        out.push(
            Diagnostic::warning(
                RULE.code,
                obj.origin.at_line(Some(line)),
                format!(
                    "`{w}` is the boolean {value} to `kubectl apply -f` (YAML 1.1) and the \
                     string \"{w}\" to kustomize, kpt and `kubectl apply -k` (YAML 1.2); \
                     kvrender reads it as `kubectl apply -f` does: write `{value}` for a \
                     boolean, or quote it (`\"{w}\"`) for text",
                    w = word.word
                ),
            )
            .with_column(Some(word.column))
            .with_object(obj.object_ref())
            .with_field(field),
        );
    }
}

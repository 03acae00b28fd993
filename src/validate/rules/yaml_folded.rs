//! `KV009` yaml-folded.
//!
//! ## What it checks
//! Folded block scalars (`>`) in any object read from a file, where a more-indented line (one
//! that starts with a blank inside the block) follows a line that does not.
//!
//! ## Why
//! YAML keeps the line break before a more-indented line of a folded block as it is, and so do
//! `kubectl apply -f` and kvrender. The YAML reader of kustomize and kpt adds one more line
//! break there. So the same file gives the cluster two different texts: for the block below,
//! `"#cloud-config\n  indented: a\n"` with `kubectl apply -f`, and
//! `"#cloud-config\n\n  indented: a\n"` through a kustomization. In cloud-init user data, a
//! script or a configuration file that difference can matter.
//!
//! ## Example
//! ```yaml
//! userData: >
//!   #cloud-config
//!     indented: a
//! ```
//!
//! ## Fix
//! Write the block as a literal one (`|`), in which no reader folds or adds lines, with its
//! lines as they should read.

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::load::yaml;
use crate::model::Object;
use crate::validate::Rule;

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::YAML_FOLDED,
    name: "yaml-folded",
    summary: "A folded block scalar (`>`) with a more-indented line after a line that is not: kustomize and kpt read one more line break there than YAML, `kubectl apply -f` and kvrender (warning; see \"YAML\").",
    severity: Severity::Warning,
};

/// Report every folded block scalar of `obj`'s text that kustomize and kpt read otherwise.
pub fn check(obj: &Object, out: &mut Vec<Diagnostic>) {
    // Only text with a `>` may hold one, only a string with a line that starts with a blank can
    // come of one, and an object read from no file (rendered from a catalog, or handed over by
    // kpt or kustomize) has no text to look at.
    let Some((text, first_line)) = &obj.source else {
        return;
    };
    if obj.is_tool_config() || !yaml::may_fold(text) || !yaml::holds_indented_line(&obj.value) {
        return;
    }
    for block in yaml::folded_breaks(text) {
        let Some(field) = super::yaml_boolean::field_of(obj, block.field) else {
            continue;
        };
        let (lines, follow, is, it) = match block.added {
            1 => (
                "a more-indented line".to_string(),
                "follows a line",
                "is",
                "it",
            ),
            n => (
                format!("{n} more-indented lines"),
                "follow lines",
                "are",
                "each",
            ),
        };
        // At the field's key where it has one; the block itself starts on the line after it.
        let (origin, column) = match obj.field_line(&field) {
            Some(line) => (obj.origin.at_line(Some(line)), None),
            None => (
                obj.origin.at_line(Some(first_line + block.line - 1)),
                Some(block.column),
            ),
        };
        out.push(
            Diagnostic::warning(
                RULE.code,
                origin,
                format!(
                    "in this folded block (`>`), {lines} {follow} that {is} not: kustomize and \
                     kpt read one line break more before {it} than `kubectl apply -f` and \
                     kvrender, which read the block as YAML specifies; write it as a literal \
                     block (`|`) with its lines as they should read"
                ),
            )
            .with_column(column)
            .with_object(obj.object_ref())
            .with_field(field),
        );
    }
}

//! Output: YAML streams and diagnostics. Only this module (and `main`) writes.

pub mod diagnostics;
pub mod files;
pub mod github;
pub mod json;
pub mod sarif;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::load::yaml;

/// Print values as one YAML stream, each document introduced by `---`.
pub fn yaml_stream<'a>(values: impl IntoIterator<Item = &'a Value>) -> Result<String> {
    let mut out = String::new();
    for v in values {
        out.push_str(&stream_document(v)?);
    }
    Ok(out)
}

/// Print one value as a document of a YAML stream: `---`, the document, a final newline.
/// Documents printed in parallel and concatenated make the same stream as [`yaml_stream`].
pub fn stream_document(value: &Value) -> Result<String> {
    let doc = yaml::to_string(value).map_err(Error::Serialize)?;
    let mut out = String::with_capacity(doc.len() + 5);
    out.push_str("---\n");
    out.push_str(&doc);
    if !doc.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

/// Print one value as a YAML document without a leading `---`.
pub fn yaml_document(value: &Value) -> Result<String> {
    yaml::to_string(value).map_err(Error::Serialize)
}

/// A unified diff of two texts, with ANSI colours when `color` is set.
pub fn unified_diff(
    before: &str,
    after: &str,
    old_name: &str,
    new_name: &str,
    color: bool,
) -> String {
    let diff = similar::TextDiff::from_lines(before, after);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(old_name, new_name)
        .to_string();
    if !color {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let code = if line.starts_with("+++") || line.starts_with("---") {
            "\x1b[1m"
        } else if line.starts_with('+') {
            "\x1b[32m"
        } else if line.starts_with('-') {
            "\x1b[31m"
        } else if line.starts_with("@@") {
            "\x1b[36m"
        } else {
            ""
        };
        if code.is_empty() {
            out.push_str(line);
        } else {
            out.push_str(code);
            out.push_str(line.trim_end_matches('\n'));
            out.push_str("\x1b[0m\n");
        }
    }
    out
}

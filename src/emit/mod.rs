//! Output: YAML streams and diagnostics. Only this module (and `main`) writes.

pub mod diagnostics;
pub mod files;
pub mod github;
pub mod json;
pub mod sarif;

use rayon::prelude::*;
use serde_json::Value;

use crate::load::yaml;

/// Documents printed per parallel task: enough that the task costs more than handing it out.
const CHUNK: usize = 16;

/// Print values as one YAML stream, each document introduced by `---`. Documents are printed
/// in parallel and joined in order.
pub fn yaml_stream<'a>(values: impl IntoIterator<Item = &'a Value>) -> String {
    yaml_stream_parts(values).concat()
}

/// [`yaml_stream`] in pieces, in order, for a caller that writes them one after the other
/// instead of joining them.
pub fn yaml_stream_parts<'a>(values: impl IntoIterator<Item = &'a Value>) -> Vec<String> {
    let values: Vec<&Value> = values.into_iter().collect();
    values
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut out = String::with_capacity(chunk.len() * 1024);
            for v in chunk {
                write_stream_document(&mut out, v);
            }
            out
        })
        .collect()
}

/// Print one value as a document of a YAML stream: `---`, the document, a final newline.
/// Documents printed in parallel and concatenated make the same stream as [`yaml_stream`].
pub fn stream_document(value: &Value) -> String {
    let mut out = String::with_capacity(1024);
    write_stream_document(&mut out, value);
    out
}

fn write_stream_document(out: &mut String, value: &Value) {
    out.push_str("---\n");
    yaml::write(out, value);
}

/// Print one value as a YAML document without a leading `---`.
pub fn yaml_document(value: &Value) -> String {
    yaml::to_string(value)
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

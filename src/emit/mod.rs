//! Output: YAML streams and diagnostics. Only this module (and `main`) writes.

pub mod diagnostics;
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
        out.push_str("---\n");
        let doc = yaml::to_string(v).map_err(Error::Serialize)?;
        out.push_str(&doc);
        if !doc.ends_with('\n') {
            out.push('\n');
        }
    }
    Ok(out)
}

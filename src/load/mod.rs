//! Reading inputs: files, directories (walked recursively, `*.yaml`, `*.yml`, `*.json`, sorted by
//! path) and `-` for stdin. Multi-document streams are split at their boundaries and the
//! documents parsed in parallel; every object keeps its [`Origin`].

pub mod locate;
pub mod split;
pub mod walk;
pub mod yaml;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use serde_json::Value;

use crate::diagnostic::{Diagnostic, codes};
use crate::error::{Error, Result};
use crate::model::Object;
use crate::origin::Origin;

/// The text of one input file.
#[derive(Clone, Debug)]
pub struct Source {
    /// The path as shown to the user (`-` for stdin).
    pub path: Arc<str>,
    /// The raw bytes.
    pub bytes: Vec<u8>,
}

/// Objects and the findings made while parsing them.
#[derive(Clone, Debug, Default)]
pub struct Loaded {
    /// Parsed objects, in input order.
    pub objects: Vec<Object>,
    /// Syntax errors and documents that are not objects.
    pub diagnostics: Vec<Diagnostic>,
}

impl Loaded {
    /// Append another load result.
    pub fn extend(&mut self, other: Loaded) {
        self.objects.extend(other.objects);
        self.diagnostics.extend(other.diagnostics);
    }
}

fn display(path: &Path) -> Arc<str> {
    Arc::from(path.to_string_lossy().as_ref())
}

/// Read every input path: a file, a directory (walked) or `-` (stdin, read once).
pub fn read_paths(paths: &[PathBuf]) -> Result<Vec<Source>> {
    let mut sources = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            let mut bytes = Vec::new();
            std::io::stdin()
                .read_to_end(&mut bytes)
                .map_err(|source| Error::Read {
                    path: path.clone(),
                    source,
                })?;
            sources.push(Source {
                path: Arc::from("-"),
                bytes,
            });
            continue;
        }
        let meta = std::fs::metadata(path).map_err(|source| Error::Read {
            path: path.clone(),
            source,
        })?;
        let files = if meta.is_dir() {
            walk::walk(path)?
        } else {
            vec![path.clone()]
        };
        let read: Vec<Result<Source>> = files
            .par_iter()
            .map(|file| {
                let bytes = std::fs::read(file).map_err(|source| Error::Read {
                    path: file.clone(),
                    source,
                })?;
                Ok(Source {
                    path: display(file),
                    bytes,
                })
            })
            .collect();
        for source in read {
            sources.push(source?);
        }
    }
    Ok(sources)
}

/// Parse every source, documents in parallel, results in input order.
pub fn parse_sources(sources: &[Source]) -> Loaded {
    let per_file: Vec<Loaded> = sources
        .par_iter()
        .map(|s| parse_bytes(&s.path, &s.bytes))
        .collect();
    let mut loaded = Loaded::default();
    for l in per_file {
        loaded.extend(l);
    }
    loaded
}

/// Parse the bytes of one file.
pub fn parse_bytes(path: &Arc<str>, bytes: &[u8]) -> Loaded {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_text(path, text),
        Err(e) => {
            let valid = &bytes[..e.valid_up_to()];
            let line = u32::try_from(valid.iter().filter(|b| **b == b'\n').count() + 1).ok();
            let column = valid.iter().rev().take_while(|b| **b != b'\n').count();
            Loaded {
                objects: Vec::new(),
                diagnostics: vec![
                    Diagnostic::error(
                        codes::YAML_SYNTAX,
                        Origin::new(path.clone(), 0, line),
                        format!(
                            "the file is not valid UTF-8 (invalid byte at offset {})",
                            e.valid_up_to()
                        ),
                    )
                    .with_column(u32::try_from(column + 1).ok()),
                ],
            }
        }
    }
}

/// Parse the text of one file (a YAML stream, or JSON when the path ends in `.json`).
pub fn parse_text(path: &Arc<str>, text: &str) -> Loaded {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if path.ends_with(".json") {
        let parsed: std::result::Result<Value, _> = serde_json::from_str(text);
        let results: Vec<Parsed> = vec![match parsed {
            Ok(v) => Ok((v, Some(1), None)),
            Err(e) => Err(Diagnostic::error(
                codes::YAML_SYNTAX,
                Origin::new(path.clone(), 0, u32::try_from(e.line()).ok()),
                format!("invalid JSON: {e}"),
            )
            .with_column(u32::try_from(e.column()).ok())),
        }];
        return collect(path, results);
    }
    let chunks = split::split(text);
    let results: Vec<Parsed> = chunks
        .par_iter()
        .enumerate()
        .map(|(index, chunk)| match yaml::parse_document(chunk.text) {
            Ok(v) => Ok((
                v,
                chunk.content_line,
                Some((Arc::from(chunk.text), chunk.first_line)),
            )),
            Err(e) => {
                let line = e
                    .line
                    .map(|l| l + chunk.first_line - 1)
                    .or(chunk.content_line);
                Err(Diagnostic::error(
                    codes::YAML_SYNTAX,
                    Origin::new(path.clone(), index, line),
                    format!("invalid YAML: {}", e.message),
                )
                .with_column(e.column))
            }
        })
        .collect();
    collect(path, results)
}

/// A parsed document (value, content line, text and first line) or its syntax error.
type Parsed = std::result::Result<(Value, Option<u32>, Option<(Arc<str>, u32)>), Diagnostic>;

fn collect(path: &Arc<str>, results: Vec<Parsed>) -> Loaded {
    let mut loaded = Loaded::default();
    for (index, r) in results.into_iter().enumerate() {
        match r {
            Ok((value, line, source)) => {
                let origin = Origin::new(path.clone(), index, line);
                match check_object(&value) {
                    None => {
                        let mut obj = Object::new(value, origin);
                        obj.source = source;
                        loaded.objects.push(obj);
                    }
                    Some(problem) => loaded.diagnostics.push(Diagnostic::error(
                        codes::NOT_AN_OBJECT,
                        origin,
                        problem,
                    )),
                }
            }
            Err(d) => {
                let mut d = d;
                d.origin.index = index;
                loaded.diagnostics.push(d);
            }
        }
    }
    loaded
}

/// Why a parsed document is not a Kubernetes object, if it is not.
fn check_object(value: &Value) -> Option<String> {
    let Some(map) = value.as_object() else {
        let what = match value {
            Value::Array(_) => "a list",
            Value::Null => "empty",
            _ => "a scalar",
        };
        return Some(format!(
            "the document is {what}, not a Kubernetes object (a mapping with `apiVersion` and `kind`)"
        ));
    };
    for key in ["apiVersion", "kind"] {
        match map.get(key) {
            Some(Value::String(s)) if !s.is_empty() => {}
            Some(Value::String(_)) | None => {
                return Some(format!(
                    "the document has no `{key}`, so it is not a Kubernetes object"
                ));
            }
            Some(_) => return Some(format!("`{key}` must be a string")),
        }
    }
    if let Some(meta) = map.get("metadata")
        && !meta.is_object()
        && !meta.is_null()
    {
        return Some("`metadata` must be a mapping".to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(text: &str) -> Loaded {
        parse_text(&Arc::from("t.yaml"), text)
    }

    #[test]
    fn documents_keep_order_index_and_line() {
        let l = load("apiVersion: v1\nkind: A\n---\n\napiVersion: v1\nkind: B\n");
        assert_eq!(l.objects.len(), 2);
        assert_eq!(l.objects[1].kind_str(), "B");
        assert_eq!(l.objects[1].origin.index, 1);
        assert_eq!(l.objects[1].origin.line, Some(5));
    }

    #[test]
    fn syntax_error_line_is_relative_to_the_file() {
        let l = load("apiVersion: v1\nkind: A\n---\napiVersion: v1\nkind: [\n");
        assert_eq!(l.objects.len(), 1);
        let d = &l.diagnostics[0];
        assert_eq!(d.code, codes::YAML_SYNTAX);
        assert_eq!(d.origin.line, Some(5));
        assert_eq!(d.origin.index, 1);
    }

    #[test]
    fn lists_and_scalars_are_not_objects() {
        let l = load("- a\n---\nhello\n---\nkind: X\n");
        assert!(l.objects.is_empty());
        assert_eq!(l.diagnostics.len(), 3);
        assert!(l.diagnostics.iter().all(|d| d.code == codes::NOT_AN_OBJECT));
    }

    #[test]
    fn duplicate_keys_are_an_error() {
        let l = load("apiVersion: v1\nkind: A\nkind: B\n");
        assert_eq!(l.diagnostics.len(), 1);
        assert!(l.diagnostics[0].message.contains("duplicate"));
        assert_eq!(l.diagnostics[0].origin.line, Some(3));
    }

    #[test]
    fn non_utf8_is_a_diagnostic() {
        let l = parse_bytes(&Arc::from("x.yaml"), b"a: 1\nb: \xff\n");
        assert_eq!(l.diagnostics[0].origin.line, Some(2));
    }
}

//! Reading and writing `ResourceList`s, the KRM Functions Specification's wire format, and
//! turning diagnostics into its `results`.

use serde_json::{Map, Value, json};

use crate::diagnostic::{Diagnostic, codes};
use crate::error::{Error, Result};
use crate::load::{split, yaml};

/// The current ResourceList apiVersion.
pub const V1: &str = "config.kubernetes.io/v1";
/// The previous ResourceList apiVersion, still sent by older orchestrators.
pub const V1BETA1: &str = "config.kubernetes.io/v1beta1";
/// The ResourceList kind.
pub const KIND: &str = "ResourceList";

/// A parsed ResourceList.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceList {
    /// `config.kubernetes.io/v1` or `v1beta1`; the output uses the same.
    pub api_version: String,
    /// The items, untouched.
    pub items: Vec<Value>,
    /// The `functionConfig`, when present.
    pub function_config: Option<Value>,
}

/// Why an input is not a usable ResourceList.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// [`codes::YAML_SYNTAX`] for broken YAML, [`codes::NOT_AN_OBJECT`] otherwise.
    pub code: &'static str,
    /// What is wrong.
    pub message: String,
}

impl From<String> for ParseError {
    fn from(message: String) -> Self {
        ParseError {
            code: codes::NOT_AN_OBJECT,
            message,
        }
    }
}

/// Parse the text of a ResourceList (YAML or JSON).
///
/// # Errors
/// A message saying what is wrong: empty input, broken YAML, more than one document, not a
/// ResourceList, an unsupported apiVersion, `items` not a list or an item that is not an object.
pub fn parse(text: &str) -> std::result::Result<ResourceList, ParseError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let chunks = split::split(text);
    let chunk = match chunks.as_slice() {
        [] => {
            return Err(String::from("the input is empty: expected a ResourceList on stdin").into());
        }
        [one] => one,
        more => {
            return Err(format!(
                "the input has {} YAML documents: expected a single ResourceList",
                more.len()
            )
            .into());
        }
    };
    let doc = yaml::parse_document(chunk.text).map_err(|e| {
        let at = match (e.line, e.column) {
            (Some(l), Some(c)) => format!(" at line {}, column {c}", l + chunk.first_line - 1),
            (Some(l), None) => format!(" at line {}", l + chunk.first_line - 1),
            _ => String::new(),
        };
        ParseError {
            code: codes::YAML_SYNTAX,
            message: format!("the input is not valid YAML{at}: {}", e.message),
        }
    })?;
    let Some(map) = doc.as_object() else {
        return Err(String::from("the input is not a ResourceList (not a mapping)").into());
    };
    let kind = map.get("kind").and_then(Value::as_str).unwrap_or("");
    let api_version = map.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    if kind != KIND {
        return Err(format!(
            "the input is not a ResourceList (kind `{kind}`); kvrender fn reads a \
             `{V1}` ResourceList on stdin"
        )
        .into());
    }
    if api_version != V1 && api_version != V1BETA1 {
        return Err(format!(
            "unsupported ResourceList apiVersion `{api_version}` (expected `{V1}` or `{V1BETA1}`)"
        )
        .into());
    }
    let items = match map.get("items") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        Some(_) => return Err(String::from("`items` must be a list").into()),
    };
    for (i, item) in items.iter().enumerate() {
        if let Some(problem) = item_problem(item) {
            return Err(format!("items[{i}]: {problem}").into());
        }
    }
    let function_config = map.get("functionConfig").filter(|v| !v.is_null()).cloned();
    Ok(ResourceList {
        api_version: api_version.to_string(),
        items,
        function_config,
    })
}

/// Why an item is not a Kubernetes object, if it is not.
pub fn item_problem(item: &Value) -> Option<String> {
    let Some(map) = item.as_object() else {
        return Some("not a Kubernetes object (a mapping with `apiVersion` and `kind`)".into());
    };
    for key in ["apiVersion", "kind"] {
        match map.get(key) {
            Some(Value::String(s)) if !s.is_empty() => {}
            _ => return Some(format!("the object has no `{key}` string")),
        }
    }
    match map.get("metadata") {
        None | Some(Value::Null | Value::Object(_)) => None,
        Some(_) => Some("`metadata` must be a mapping".into()),
    }
}

/// Print a ResourceList with `items` and `results` (left out when empty).
///
/// # Errors
/// When the YAML cannot be printed.
pub fn write(api_version: &str, items: Vec<Value>, results: Vec<Value>) -> Result<String> {
    let mut map = Map::new();
    map.insert("apiVersion".into(), Value::String(api_version.to_string()));
    map.insert("kind".into(), Value::String(KIND.into()));
    map.insert("items".into(), Value::Array(items));
    if !results.is_empty() {
        map.insert("results".into(), Value::Array(results));
    }
    yaml::to_string(&Value::Object(map)).map_err(Error::Serialize)
}

/// The `results` entries for a diagnostic: one per field path (a conflict names several).
pub fn results(d: &Diagnostic) -> Vec<Value> {
    let fields: Vec<Option<&str>> = match d.field.as_deref() {
        Some(f) => f.split(", ").filter(|p| !p.is_empty()).map(Some).collect(),
        None => vec![None],
    };
    let fields = if fields.is_empty() {
        vec![None]
    } else {
        fields
    };
    fields
        .into_iter()
        .map(|field| {
            let mut r = Map::new();
            r.insert("message".into(), Value::String(d.message.clone()));
            r.insert("severity".into(), Value::String(d.severity.as_str().into()));
            if let Some(obj) = &d.object {
                let mut rr = Map::new();
                rr.insert("apiVersion".into(), json!(obj.api_version));
                rr.insert("kind".into(), json!(obj.kind));
                rr.insert("name".into(), json!(obj.name));
                if let Some(ns) = &obj.namespace {
                    rr.insert("namespace".into(), json!(ns));
                }
                r.insert("resourceRef".into(), Value::Object(rr));
            }
            if let Some(f) = field {
                r.insert("field".into(), json!({ "path": f }));
            }
            if d.origin.path.as_ref() != "-" && !d.origin.path.is_empty() {
                r.insert(
                    "file".into(),
                    json!({"path": d.origin.path.as_ref(), "index": d.origin.index}),
                );
            }
            r.insert("tags".into(), json!({ "code": d.code }));
            Value::Object(r)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::{ObjectRef, Origin};

    #[test]
    fn parses_both_versions_and_missing_items() {
        let rl = parse("apiVersion: config.kubernetes.io/v1beta1\nkind: ResourceList\n").unwrap();
        assert_eq!(rl.api_version, V1BETA1);
        assert!(rl.items.is_empty());
        assert!(rl.function_config.is_none());
        let rl = parse(
            r#"{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
                "items": [{"apiVersion": "v1", "kind": "A"}], "functionConfig": {}}"#,
        )
        .unwrap();
        assert_eq!(rl.items.len(), 1);
        assert_eq!(rl.function_config, Some(json!({})));
    }

    #[test]
    fn malformed_input_says_why() {
        assert!(parse("").unwrap_err().message.contains("empty"));
        assert!(
            parse("a: [\n")
                .unwrap_err()
                .message
                .contains("not valid YAML at line")
        );
        assert!(
            parse("apiVersion: v1\nkind: List\n")
                .unwrap_err()
                .message
                .contains("not a ResourceList")
        );
        assert!(
            parse("apiVersion: config.kubernetes.io/v2\nkind: ResourceList\n")
                .unwrap_err()
                .message
                .contains("unsupported ResourceList apiVersion")
        );
        assert!(
            parse("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: [1]\n")
                .unwrap_err()
                .message
                .starts_with("items[0]:")
        );
        assert!(
            parse("a: 1\n---\nb: 2\n")
                .unwrap_err()
                .message
                .contains("2 YAML documents")
        );
    }

    #[test]
    fn conflict_results_get_one_entry_per_path() {
        let d = Diagnostic::error(codes::CONFLICT, Origin::new("vm.yaml", 1, None), "conflict")
            .with_object(ObjectRef {
                api_version: "kubevirt.io/v1".into(),
                kind: "VirtualMachine".into(),
                namespace: Some("ns".into()),
                name: "vm".into(),
            })
            .with_field("spec.a, spec.b");
        let r = results(&d);
        assert_eq!(r.len(), 2);
        assert_eq!(r[1]["field"]["path"], "spec.b");
        assert_eq!(r[0]["file"], json!({"path": "vm.yaml", "index": 1}));
        assert_eq!(r[0]["resourceRef"]["namespace"], "ns");
        assert_eq!(r[0]["tags"]["code"], "KV010");
        let stdin = Diagnostic::error(codes::CONFLICT, Origin::new("-", 0, None), "x");
        assert!(results(&stdin)[0].get("file").is_none());
    }
}

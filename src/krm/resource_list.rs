//! Reading and writing `ResourceList`s, the KRM Functions Specification's wire format, and
//! turning diagnostics into its `results`.

use serde_json::{Map, Value, json};

use crate::diagnostic::{Diagnostic, codes};

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
    /// The text of each item as it appeared in the input (a `- ` sequence entry), when it
    /// could be cut out and parses to exactly the item: untouched items are written back from
    /// it, keeping their comments, quoting and flow style.
    pub raw_items: Vec<Option<String>>,
    /// The 1-based line of the input on which each item's `- ` entry begins, when the items
    /// could be told apart in block style (as kpt and kustomize print them).
    pub item_lines: Vec<Option<u32>>,
}

/// One output item: text kept from the input, or a value to print.
#[derive(Clone, Debug, PartialEq)]
pub enum OutItem {
    /// A `- ` sequence entry, verbatim, and the value it reads as.
    Raw {
        /// The entry's text.
        text: String,
        /// What the text parses to (the caller has checked, with [`raw_matches`]).
        value: Value,
    },
    /// A value to print.
    Value(Value),
}

/// Whether `raw` (a one-entry YAML sequence) parses to exactly `value`.
pub fn raw_matches(raw: &str, value: &Value) -> bool {
    match yaml::parse_node(raw) {
        Ok(Value::Array(a)) => a.len() == 1 && a[0] == *value,
        _ => false,
    }
}

/// The text of each item and the line it begins on, as [`slice_items`] finds them.
type Slices = (Vec<Option<String>>, Vec<Option<u32>>);

/// Cut the text of each item out of a ResourceList document as printed by kpt and kustomize
/// (block style), with the line of the input (`first_line` is the document's) on which each
/// begins. Any item that cannot be cut out cleanly, or whose text does not parse to the item,
/// gets no text; when the entries cannot be told apart at all, no item has a line either.
fn slice_items(doc: &str, first_line: u32, items: &[Value]) -> Slices {
    let none = || (vec![None; items.len()], vec![None; items.len()]);
    let lines: Vec<&str> = doc.split_inclusive('\n').collect();
    let Some(start) = lines.iter().position(|l| l.trim_end() == "items:") else {
        return none();
    };
    let mut slices: Vec<Vec<&str>> = Vec::new();
    let mut starts: Vec<Option<u32>> = Vec::new();
    let mut indent: Option<usize> = None;
    for (at, line) in lines.iter().enumerate().skip(start + 1) {
        let line_no = u32::try_from(at)
            .ok()
            .and_then(|at| first_line.checked_add(at));
        let content = line.trim_end_matches(['\n', '\r']);
        let trimmed = content.trim_start_matches(' ');
        let ind = content.len() - trimmed.len();
        if trimmed.is_empty() {
            if let Some(s) = slices.last_mut() {
                s.push(line);
            }
            continue;
        }
        let comment = trimmed.starts_with('#');
        if ind == 0 && !trimmed.starts_with('-') && !comment {
            break;
        }
        let entry = trimmed == "-" || trimmed.starts_with("- ");
        match indent {
            None if comment => {}
            None if entry => {
                indent = Some(ind);
                slices.push(vec![line]);
                starts.push(line_no);
            }
            None => return none(),
            Some(n) if entry && ind == n => {
                slices.push(vec![line]);
                starts.push(line_no);
            }
            Some(n) if ind < n && !comment => break,
            Some(_) => {
                if let Some(s) = slices.last_mut() {
                    s.push(line);
                }
            }
        }
    }
    if slices.len() != items.len() {
        return none();
    }
    let n = indent.unwrap_or(0);
    let texts = slices
        .into_iter()
        .zip(items)
        .map(|(slice, item)| {
            let mut text = String::new();
            for line in slice {
                if line.trim().is_empty() {
                    text.push('\n');
                    continue;
                }
                text.push_str(line.get(n..).filter(|_| line[..n].trim().is_empty())?);
            }
            if !text.ends_with('\n') {
                text.push('\n');
            }
            while text.ends_with("\n\n") {
                text.pop();
            }
            raw_matches(&text, item).then_some(text)
        })
        .collect();
    (texts, starts)
}

/// Add an annotation to the text of an item (a `- ` entry as `slice_items` cuts it), when
/// its metadata is in block style. The caller checks the result with [`raw_matches`].
pub fn raw_with_annotation(raw: &str, key: &str, value: &str) -> Option<String> {
    let lines: Vec<&str> = raw.split_inclusive('\n').collect();
    let meta = lines
        .iter()
        .position(|l| l.trim_end() == "  metadata:" || l.trim_end() == "- metadata:")?;
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_string()).collect();
    let entry = format!("{key}: {}\n", serde_json::to_string(value).ok()?);
    match lines
        .iter()
        .enumerate()
        .skip(meta + 1)
        .take_while(|(_, l)| l.starts_with("   ") || l.trim().is_empty())
        .find(|(_, l)| l.trim_end() == "    annotations:")
    {
        Some((i, _)) => {
            let next = lines.get(i + 1)?;
            let ind = next.len() - next.trim_start_matches(' ').len();
            if ind <= 4 {
                return None;
            }
            out.insert(i + 1, format!("{}{entry}", " ".repeat(ind)));
        }
        None => out.insert(meta + 1, format!("    annotations:\n      {entry}")),
    }
    Some(out.concat())
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
            return Err(
                String::from("the input is empty: expected a ResourceList on stdin").into(),
            );
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
    let mut doc = yaml::parse_document(chunk.text).map_err(|e| {
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
    let Some(map) = doc.as_object_mut() else {
        return Err(String::from("the input is not a ResourceList (not a mapping)").into());
    };
    let kind = map
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let api_version = map
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
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
    let items = match map.shift_remove("items") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items,
        Some(_) => return Err(String::from("`items` must be a list").into()),
    };
    for (i, item) in items.iter().enumerate() {
        if let Some(problem) = item_problem(item) {
            return Err(format!("items[{i}]: {problem}").into());
        }
    }
    let function_config = map.shift_remove("functionConfig").filter(|v| !v.is_null());
    let (raw_items, item_lines) = slice_items(chunk.text, chunk.first_line, &items);
    Ok(ResourceList {
        api_version,
        items,
        function_config,
        raw_items,
        item_lines,
    })
}

/// Whether an item is a mapping with neither `apiVersion` nor `kind`: not a Kubernetes object
/// at all but some other file of the package (kpt hands over a `kustomization.yaml` written
/// without them, for one). The function passes it through untouched.
pub fn is_foreign(item: &Value) -> bool {
    item.as_object()
        .is_some_and(|m| !m.contains_key("apiVersion") && !m.contains_key("kind"))
}

/// Why an item is neither a Kubernetes object nor [foreign](is_foreign), if it is not.
pub fn item_problem(item: &Value) -> Option<String> {
    let Some(map) = item.as_object() else {
        return Some("not a Kubernetes object (a mapping with `apiVersion` and `kind`)".into());
    };
    if is_foreign(item) {
        return None;
    }
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
pub fn write(api_version: &str, items: Vec<Value>, results: Vec<Value>) -> String {
    let mut map = Map::new();
    map.insert("apiVersion".into(), Value::String(api_version.to_string()));
    map.insert("kind".into(), Value::String(KIND.into()));
    map.insert("items".into(), Value::Array(items));
    if !results.is_empty() {
        map.insert("results".into(), Value::Array(results));
    }
    yaml::to_string(&Value::Object(map))
}

/// Print a ResourceList from output items, raw ones verbatim. Falls back to printing every
/// item as a value if the assembled text does not read back as the intended list.
pub fn write_items(api_version: &str, items: Vec<OutItem>, results: Vec<Value>) -> String {
    let mut out = format!("apiVersion: {api_version}\nkind: {KIND}\n");
    if items.is_empty() {
        out.push_str("items: []\n");
    } else {
        out.push_str("items:\n");
    }
    for item in &items {
        match item {
            OutItem::Raw { text, .. } => out.push_str(text),
            OutItem::Value(v) => {
                let doc = yaml::to_string(v);
                for (i, line) in doc.lines().enumerate() {
                    if i == 0 {
                        out.push_str("- ");
                    } else if !line.is_empty() {
                        out.push_str("  ");
                    }
                    out.push_str(line);
                    out.push('\n');
                }
            }
        }
    }
    if !results.is_empty() {
        let mut map = Map::new();
        map.insert("results".into(), Value::Array(results.clone()));
        out.push_str(&yaml::to_string(&Value::Object(map)));
    }
    let values: Vec<Value> = items
        .into_iter()
        .map(|i| match i {
            OutItem::Raw { value, .. } | OutItem::Value(value) => value,
        })
        .collect();
    let reads_back = yaml::parse_document(&out).is_ok_and(|doc| {
        doc.get("items").and_then(Value::as_array) == Some(&values)
            && doc
                .get("results")
                .cloned()
                .unwrap_or(Value::Array(Vec::new()))
                == Value::Array(results.clone())
    });
    if reads_back {
        out
    } else {
        write(api_version, values, results)
    }
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
    fn items_are_cut_out_verbatim() {
        let text = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- # first\n  apiVersion: v1\n  kind: A\n  metadata:\n    name: a\n    annotations:\n      x: 'on'\n  data: {k: [1, 2]}\n\n# between\n- apiVersion: v1\n  kind: B\n  metadata: {name: b}\n  text: |\n    line\n\n    more\nfunctionConfig: {}\n";
        let rl = parse(text).unwrap();
        let raw: Vec<&str> = rl.raw_items.iter().map(|r| r.as_deref().unwrap()).collect();
        assert!(raw[0].starts_with("- # first\n"));
        assert!(raw[0].contains("data: {k: [1, 2]}"));
        assert!(raw[1].contains("metadata: {name: b}"));
        // Each entry's line in the input: `- # first` is line 4, `- apiVersion: v1` line 14.
        assert_eq!(rl.item_lines, vec![Some(4), Some(14)]);
        // After a leading `---` and comment, the lines still count from the input's start.
        let shifted = parse(&format!("# list\n---\n{text}")).unwrap();
        assert_eq!(shifted.item_lines, vec![Some(6), Some(16)]);
        let with =
            raw_with_annotation(raw[0], "config.kubernetes.io/local-config", "true").unwrap();
        let mut expected = rl.items[0].clone();
        expected["metadata"]["annotations"]["config.kubernetes.io/local-config"] = json!("true");
        assert!(raw_matches(&with, &expected), "{with}");
        // Flow-style metadata cannot take the annotation textually.
        let with = raw_with_annotation(raw[1], "k", "v");
        assert!(with.is_none_or(|w| !raw_matches(&w, &rl.items[1])));
        let out = write_items(
            V1,
            vec![
                OutItem::Raw {
                    text: raw[0].to_string(),
                    value: rl.items[0].clone(),
                },
                OutItem::Value(rl.items[1].clone()),
            ],
            Vec::new(),
        );
        assert!(out.contains("- # first\n"));
        assert_eq!(parse(&out).unwrap().items, rl.items);
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

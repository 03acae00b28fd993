//! Reading and writing `ResourceList`s, the KRM Functions Specification's wire format, and
//! turning diagnostics into its `results`.

use rayon::prelude::*;
use serde_json::{Map, Value, json};

use crate::diagnostic::{Diagnostic, codes};

use crate::load::{split, yaml};

/// The current ResourceList apiVersion.
pub const V1: &str = "config.kubernetes.io/v1";
/// The previous ResourceList apiVersion, still sent by older orchestrators.
pub const V1BETA1: &str = "config.kubernetes.io/v1beta1";
/// The ResourceList kind.
pub const KIND: &str = "ResourceList";

/// How the items a function is handed are read: kpt and kustomize read every file as YAML 1.2,
/// and hand a plain `yes` over as it was written, meaning the string `"yes"`; so the function
/// reads it so too.
pub const ITEMS: yaml::Booleans = yaml::Booleans::Yaml12;

/// A parsed ResourceList.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceList {
    /// `config.kubernetes.io/v1` or `v1beta1`; the output uses the same.
    pub api_version: String,
    /// The items, untouched; an item that is not a Kubernetes object among them (see
    /// [`item_problem`]).
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

/// Whether `raw` (a one-entry YAML sequence) parses to exactly `value`.
pub fn raw_matches(raw: &str, value: &Value) -> bool {
    match yaml::parse_node_with(raw, ITEMS) {
        Ok(Value::Array(a)) => a.len() == 1 && a[0] == *value,
        _ => false,
    }
}

/// The text of each item and the line it begins on, as [`slice_items`] finds them.
type Slices = (Vec<Option<String>>, Vec<Option<u32>>);

/// The block of `- ` entries under a ResourceList's `items:` key, as kpt and kustomize print
/// it, found in the text alone.
struct Block {
    /// Where the `items:` line begins.
    key: usize,
    /// Where the block ends: the next line at a lesser indentation, or the end of the text.
    end: usize,
    /// The indentation of the entries' `- `.
    indent: usize,
    /// Each entry's text (its `- ` line up to the next entry or the end of the block, blank
    /// lines and comments after it included) and the line of the input it begins on.
    entries: Vec<(std::ops::Range<usize>, Option<u32>)>,
}

/// Find the `items:` block of a ResourceList document (`first_line` is the document's line in
/// the input), or `None` when it is not a block of `- ` entries.
fn find_block(doc: &str, first_line: u32) -> Option<Block> {
    let mut at = 0;
    let mut line_no = 0usize;
    let mut key = None;
    let mut lines = doc.split_inclusive('\n');
    for line in lines.by_ref() {
        let begins = at;
        at += line.len();
        line_no += 1;
        if line.trim_end() == "items:" {
            key = Some(begins);
            break;
        }
    }
    let key = key?;
    let mut block = Block {
        key,
        end: doc.len(),
        indent: 0,
        entries: Vec::new(),
    };
    let mut indent: Option<usize> = None;
    for line in lines {
        let begins = at;
        at += line.len();
        let this_line = u32::try_from(line_no)
            .ok()
            .and_then(|n| first_line.checked_add(n));
        line_no += 1;
        let content = line.trim_end_matches(['\n', '\r']);
        let trimmed = content.trim_start_matches(' ');
        let ind = content.len() - trimmed.len();
        if trimmed.is_empty() {
            continue;
        }
        let comment = trimmed.starts_with('#');
        if ind == 0 && !trimmed.starts_with('-') && !comment {
            block.end = begins;
            break;
        }
        let entry = trimmed == "-" || trimmed.starts_with("- ");
        match indent {
            None if comment => {}
            None if entry => {
                indent = Some(ind);
                block.entries.push((begins..begins, this_line));
            }
            None => return None,
            Some(n) if entry && ind == n => block.entries.push((begins..begins, this_line)),
            Some(n) if ind < n && !comment => {
                block.end = begins;
                break;
            }
            Some(_) => {}
        }
    }
    // Each entry runs to the next one, the last to the end of the block.
    let starts: Vec<usize> = block.entries.iter().map(|(r, _)| r.start).collect();
    for (i, (range, _)) in block.entries.iter_mut().enumerate() {
        range.end = starts.get(i + 1).copied().unwrap_or(block.end);
    }
    block.indent = indent.unwrap_or(0);
    Some(block)
}

/// An entry's text as written back: its lines without the block's indentation, blank lines
/// emptied and the blank lines at its end left out; `None` when a line sits to the left of the
/// entry.
fn entry_text(entry: &str, indent: usize) -> Option<String> {
    let mut text = String::with_capacity(entry.len());
    for line in entry.split_inclusive('\n') {
        if line.trim().is_empty() {
            text.push('\n');
            continue;
        }
        text.push_str(
            line.get(indent..)
                .filter(|_| line[..indent].trim().is_empty())?,
        );
    }
    if !text.ends_with('\n') {
        text.push('\n');
    }
    while text.ends_with("\n\n") {
        text.pop();
    }
    Some(text)
}

/// An entry's text as it is read: exactly the input's lines, moved left by the block's
/// indentation (a line of spaces only, shorter than that, is left empty, as blank as it was);
/// `None` when a line sits to the left of the entry.
fn entry_as_read(entry: &str, indent: usize) -> Option<std::borrow::Cow<'_, str>> {
    if indent == 0 {
        return Some(std::borrow::Cow::Borrowed(entry));
    }
    let mut text = String::with_capacity(entry.len());
    for line in entry.split_inclusive('\n') {
        match line
            .get(indent..)
            .filter(|_| line[..indent].bytes().all(|b| b == b' '))
        {
            Some(rest) => text.push_str(rest),
            None if line
                .trim_matches(' ')
                .trim_end_matches(['\n', '\r'])
                .is_empty() =>
            {
                text.push_str(&line[line.trim_end_matches(['\n', '\r']).len()..]);
            }
            None => return None,
        }
    }
    Some(std::borrow::Cow::Owned(text))
}

/// Cut the text of each item out of a ResourceList document as printed by kpt and kustomize
/// (block style), with the line of the input (`first_line` is the document's) on which each
/// begins. Any item that cannot be cut out cleanly, or whose text does not parse to the item,
/// gets no text; when the entries cannot be told apart at all, no item has a line either.
fn slice_items(doc: &str, first_line: u32, items: &[Value]) -> Slices {
    let none = || (vec![None; items.len()], vec![None; items.len()]);
    let Some(block) = find_block(doc, first_line) else {
        return none();
    };
    if block.entries.len() != items.len() {
        return none();
    }
    let starts = block.entries.iter().map(|(_, line)| *line).collect();
    let texts = block
        .entries
        .par_iter()
        .zip(items)
        .map(|((range, _), item)| {
            let text = entry_text(&doc[range.clone()], block.indent)?;
            raw_matches(&text, item).then_some(text)
        })
        .collect();
    (texts, starts)
}

/// What [`parse`] reads of a ResourceList document before it checks it: the top-level mapping
/// without `items`, the items, and their texts and lines as [`slice_items`] gives them.
type Read = (Map<String, Value>, Vec<Value>, Slices);

/// Read a ResourceList printed the usual way (the items a block of `- ` entries, each within
/// what the quick reader takes) in parts: the document with an empty `items`, then every entry
/// on its own, in parallel. `None` sends the document to be read whole, which gives the same
/// answer (and the error, if there is one) more slowly.
///
/// Reading an entry on its own gives what it reads as in the whole document: the quick reader
/// takes no anchors, aliases or tags, nothing an entry could share with the rest, and an
/// entry's lines moved left together keep their meaning. The document with `items: []` in
/// place of the block must have that empty list under `items`: then the line was the
/// top-level key, and the block its value.
fn read_in_parts(doc: &str, first_line: u32) -> Option<Read> {
    let block = find_block(doc, first_line)?;
    if block.entries.is_empty() {
        return None;
    }
    let rest = format!("{}items: []\n{}", &doc[..block.key], &doc[block.end..]);
    let Ok(Value::Object(mut map)) = yaml::parse_document_with(&rest, ITEMS) else {
        return None;
    };
    match map.shift_remove("items") {
        Some(Value::Array(empty)) if empty.is_empty() => {}
        _ => return None,
    }
    let read: Vec<Option<(Value, Option<String>)>> = block
        .entries
        .par_iter()
        .map(|(range, _)| {
            let entry = &doc[range.clone()];
            let as_read = entry_as_read(entry, block.indent)?;
            let Value::Array(mut one) = yaml::parse_quick(&as_read)? else {
                return None;
            };
            let item = one.pop().filter(|_| one.is_empty())?;
            let raw = entry_text(entry, block.indent)
                .filter(|text| *text == *as_read || raw_matches(text, &item));
            Some((item, raw))
        })
        .collect();
    let mut items = Vec::with_capacity(read.len());
    let mut raw_items = Vec::with_capacity(read.len());
    for one in read {
        let (item, raw) = one?;
        items.push(item);
        raw_items.push(raw);
    }
    let lines = block.entries.iter().map(|(_, line)| *line).collect();
    Some((map, items, (raw_items, lines)))
}

/// Add an annotation to the text of an item (a `- ` entry as `slice_items` cuts it), when
/// its metadata is in block style, or a flow mapping on one line (`metadata: {name: a,
/// annotations: {...}}`, as kpt hands over a document written so). The caller checks the
/// result with [`raw_matches`].
pub fn raw_with_annotation(raw: &str, key: &str, value: &str) -> Option<String> {
    let lines: Vec<&str> = raw.split_inclusive('\n').collect();
    if let Some(at) = lines
        .iter()
        .position(|l| l.starts_with("  metadata: {") || l.starts_with("- metadata: {"))
    {
        let entry = format!("{key}: {}", serde_json::to_string(value).ok()?);
        let line = lines[at];
        let body = line.trim_end();
        let edited = if let Some(open) = body.find(" annotations: {") {
            let after = open + " annotations: {".len();
            let rest = &body[after..];
            let sep = if rest.starts_with('}') { "" } else { ", " };
            format!("{}{entry}{sep}{rest}", &body[..after])
        } else {
            let inner = body.strip_suffix('}')?;
            let sep = if inner.trim_end().ends_with('{') {
                ""
            } else {
                ", "
            };
            format!("{inner}{sep}annotations: {{{entry}}}}}")
        };
        let mut out: Vec<String> = lines.iter().map(|l| (*l).to_string()).collect();
        out[at] = format!("{edited}{}", &line[body.len()..]);
        return Some(out.concat());
    }
    let meta = lines
        .iter()
        .position(|l| opens_block(l, "  metadata:") || opens_block(l, "- metadata:"))?;
    let mut out: Vec<String> = lines.iter().map(|l| (*l).to_string()).collect();
    let entry = format!("{key}: {}", serde_json::to_string(value).ok()?);
    match lines
        .iter()
        .enumerate()
        .skip(meta + 1)
        .take_while(|(_, l)| l.starts_with("   ") || l.trim().is_empty())
        .find(|(_, l)| l.starts_with("    annotations:"))
    {
        Some((i, line)) if opens_block(line, "    annotations:") => {
            let next = lines.get(i + 1)?;
            let ind = next.len() - next.trim_start_matches(' ').len();
            if ind <= 4 {
                return None;
            }
            out.insert(i + 1, format!("{}{entry}\n", " ".repeat(ind)));
        }
        // A flow mapping (`annotations: {a: b}`, perhaps running on over more lines): the
        // entry goes first inside it.
        Some((i, line)) => {
            let after = "    annotations:".len();
            let rest = line[after..].trim_start_matches(' ');
            let inner = rest.strip_prefix('{')?;
            let sep = if inner.trim_start().starts_with('}') {
                ""
            } else {
                ", "
            };
            out[i] = format!("{}{{{entry}{sep}{inner}", &line[..line.len() - rest.len()]);
        }
        None => out.insert(meta + 1, format!("    annotations:\n      {entry}\n")),
    }
    Some(out.concat())
}

/// Whether `line` is `key` (`  metadata:`) opening a block mapping: nothing after the colon but
/// spaces and perhaps a comment.
fn opens_block(line: &str, key: &str) -> bool {
    line.strip_prefix(key).is_some_and(|rest| {
        let rest = rest.trim_end();
        rest.is_empty() || (rest.starts_with([' ', '\t']) && rest.trim_start().starts_with('#'))
    })
}

/// Why an input is not a usable ResourceList.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// [`codes::YAML_SYNTAX`] for broken YAML, [`codes::NOT_AN_OBJECT`] otherwise.
    pub code: &'static str,
    /// What is wrong.
    pub message: String,
    /// The line of the input the problem is at, when it is one field's.
    pub line: Option<u32>,
}

impl From<String> for ParseError {
    fn from(message: String) -> Self {
        ParseError {
            code: codes::NOT_AN_OBJECT,
            message,
            line: None,
        }
    }
}

/// Read a ResourceList document whole.
fn read_whole(chunk: &split::Chunk<'_>) -> std::result::Result<Value, ParseError> {
    yaml::parse_document_with(chunk.text, ITEMS).map_err(|e| {
        let at = match (e.line, e.column) {
            (Some(l), Some(c)) => format!(" at line {}, column {c}", l + chunk.first_line - 1),
            (Some(l), None) => format!(" at line {}", l + chunk.first_line - 1),
            _ => String::new(),
        };
        ParseError {
            code: codes::YAML_SYNTAX,
            message: format!("the input is not valid YAML{at}: {}", e.message),
            line: None,
        }
    })
}

/// A ResourceList's `kind` and `apiVersion` (empty when missing or not strings).
fn identity(map: &Map<String, Value>) -> (String, String) {
    let text = |key: &str| {
        map.get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    (text("kind"), text("apiVersion"))
}

/// Parse the text of a ResourceList (YAML or JSON).
///
/// An item that is not a Kubernetes object is read like any other: the list can still be
/// answered item by item, that item handed back as it came (see [`item_problem`]).
///
/// # Errors
/// A message saying what is wrong: empty input, broken YAML, more than one document, not a
/// ResourceList, an unsupported apiVersion or `items` not a list.
pub fn parse(text: &str) -> std::result::Result<ResourceList, ParseError> {
    parse_with(text, true)
}

/// [`parse`], reading the document whole: the fuzzers and tests hold the reading in parts to
/// its answers.
#[doc(hidden)]
pub fn parse_whole(text: &str) -> std::result::Result<ResourceList, ParseError> {
    parse_with(text, false)
}

fn parse_with(text: &str, in_parts: bool) -> std::result::Result<ResourceList, ParseError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (chunks, skipped) = split::split_noting_skipped(text);
    // Text after a `...` end marker (with no `---` before it) is no document to kpt's or
    // kustomize's reader, and another to YAML's: either way not the ResourceList, whose items
    // it may have been meant to continue. Refused, rather than its items dropped in silence.
    if let Some(skipped) = skipped.first() {
        return Err(ParseError {
            code: codes::NOT_AN_OBJECT,
            message: format!(
                "text after the document end marker (`...`) on line {} is not read: expected \
                 a single ResourceList (remove the `...` line, or what follows it)",
                skipped.marker_line
            ),
            line: Some(skipped.content_line),
        });
    }
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
    // Read in parts when it can be, else whole.
    let parts = in_parts
        .then(|| read_in_parts(chunk.text, chunk.first_line))
        .flatten();
    let (mut map, items, slices) = match parts {
        Some((map, items, slices)) => (map, Some(items), Some(slices)),
        None => match read_whole(chunk)? {
            Value::Object(map) => (map, None, None),
            _ => {
                return Err(String::from("the input is not a ResourceList (not a mapping)").into());
            }
        },
    };
    let (kind, api_version) = identity(&map);
    if kind != KIND {
        let what = if kind.is_empty() {
            String::from("no kind")
        } else {
            format!("kind `{kind}`")
        };
        return Err(format!(
            "the input is not a ResourceList ({what}); kvrender fn reads a `{V1}` ResourceList \
             on stdin"
        )
        .into());
    }
    if api_version.is_empty() {
        return Err(
            format!("the ResourceList has no apiVersion (expected `{V1}` or `{V1BETA1}`)").into(),
        );
    }
    if api_version != V1 && api_version != V1BETA1 {
        return Err(format!(
            "unsupported ResourceList apiVersion `{api_version}` (expected `{V1}` or `{V1BETA1}`)"
        )
        .into());
    }
    let items = match items {
        Some(items) => items,
        None => match map.shift_remove("items") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items,
            Some(_) => {
                return Err(ParseError {
                    line: crate::load::locate::field_line(chunk.text, chunk.first_line, "items"),
                    ..String::from("`items` must be a list").into()
                });
            }
        },
    };
    let function_config = map.shift_remove("functionConfig").filter(|v| !v.is_null());
    let (raw_items, item_lines) =
        slices.unwrap_or_else(|| slice_items(chunk.text, chunk.first_line, &items));
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

/// The entry of an output item: `raw`, an entry's text that reads on its own as `value` (see
/// [`raw_matches`]), when it keeps to itself among other entries; otherwise `value`, printed.
///
/// An entry whose later lines all stand to the right of its `- ` (or are blank, or comments)
/// reads the same among the others: none of them can end the list or another entry, and an
/// alias in an entry that reads on its own names an anchor of that entry, which is still the
/// nearest one before it in the joined text. A printed entry always keeps to itself.
pub fn entry(raw: Option<String>, value: &Value) -> String {
    match raw {
        Some(text) if stands_alone(&text) => text,
        _ => value_entry(value),
    }
}

/// Print a ResourceList from the entries of its items (see [`entry`]) and `results` (left
/// out when empty).
pub fn write_entries(api_version: &str, entries: &[String], results: Vec<Value>) -> String {
    let mut out = String::with_capacity(entries.iter().map(String::len).sum::<usize>() + 128);
    out.push_str("apiVersion: ");
    out.push_str(api_version);
    out.push_str("\nkind: ");
    out.push_str(KIND);
    out.push_str(if entries.is_empty() {
        "\nitems: []\n"
    } else {
        "\nitems:\n"
    });
    for entry in entries {
        out.push_str(entry);
    }
    if !results.is_empty() {
        let mut map = Map::new();
        map.insert("results".into(), Value::Array(results));
        yaml::write(&mut out, &Value::Object(map));
    }
    out
}

/// A value printed as a `- ` entry of a list at the left margin.
pub(crate) fn value_entry(value: &Value) -> String {
    let doc = yaml::to_string(value);
    let mut out = String::with_capacity(doc.len() + doc.len() / 8 + 8);
    for (i, line) in doc.lines().enumerate() {
        if i == 0 {
            out.push_str("- ");
        } else if !line.is_empty() {
            out.push_str("  ");
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Whether an entry of a list at the left margin keeps to itself: it begins with `- ` (or is
/// a `-` line), ends with a line feed, and each later line is blank, a comment or indented.
fn stands_alone(entry: &str) -> bool {
    let mut lines = entry.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    (first.starts_with("- ") || first.trim_end_matches(['\n', '\r']) == "-")
        && entry.ends_with('\n')
        && lines.all(|line| {
            line.starts_with(' ')
                || line.starts_with('#')
                || line.trim_end_matches(['\n', '\r']).is_empty()
        })
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
            // kpt prints the message to a terminal: a control character a name brought in (an
            // escape sequence) is written out, as on stderr. The resource reference keeps the
            // name as it is, since it identifies the object.
            let message = crate::emit::diagnostics::one_line(d.message.clone());
            r.insert("message".into(), Value::String(message));
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
    fn text_after_a_document_end_marker_is_refused() {
        let text = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {apiVersion: \
                    v1, kind: ConfigMap, metadata: {name: a}}\n...\n- {apiVersion: v1, kind: \
                    ConfigMap, metadata: {name: b}}\n";
        let e = parse(text).unwrap_err();
        assert_eq!(e.line, Some(6));
        assert_eq!(
            e.message,
            "text after the document end marker (`...`) on line 5 is not read: expected a \
             single ResourceList (remove the `...` line, or what follows it)"
        );
        // A `...` that ends the stream ends the one document.
        let ended = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n...\n";
        assert!(parse(ended).is_ok());
    }

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
            parse(
                "kind: ResourceList
items: []
"
            )
            .unwrap_err()
            .message
            .contains("the ResourceList has no apiVersion")
        );
        assert!(
            parse(
                "items: []
"
            )
            .unwrap_err()
            .message
            .contains("the input is not a ResourceList (no kind)")
        );
        let not_a_list =
            parse("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n\nitems: {a: 1}\n")
                .unwrap_err();
        assert_eq!(
            (not_a_list.message.as_str(), not_a_list.line),
            ("`items` must be a list", Some(4))
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
        // Flow-style metadata on one line takes it inside the flow mapping, the rest as it is.
        let with = raw_with_annotation(raw[1], "k", "v").unwrap();
        assert!(
            with.contains("  metadata: {name: b, annotations: {k: \"v\"}}\n"),
            "{with}"
        );
        let mut expected = rl.items[1].clone();
        expected["metadata"]["annotations"] = json!({"k": "v"});
        assert!(raw_matches(&with, &expected), "{with}");
        for (metadata, annotated) in [
            (
                "{name: c, annotations: {a: b}}",
                "{name: c, annotations: {k: \"v\", a: b}}",
            ),
            (
                "{name: c, annotations: {}}",
                "{name: c, annotations: {k: \"v\"}}",
            ),
            ("{}", "{annotations: {k: \"v\"}}"),
        ] {
            let item = format!("- apiVersion: v1\n  kind: B\n  metadata: {metadata}\n");
            let with = raw_with_annotation(&item, "k", "v").unwrap();
            assert_eq!(with, item.replace(metadata, annotated));
        }
        // Block metadata behind a comment, and flow annotations inside block metadata, are
        // edited in place too: every other line stays as written.
        for metadata in [
            "  metadata: # the object\n    name: a\n",
            "  metadata:\n    name: a\n    annotations: {a: b} # kept\n",
            "  metadata:\n    name: a\n    annotations: {}\n",
            "  metadata:\n    annotations: {\n      a: b}\n    name: a\n",
            "  metadata:\n    annotations: # kept\n      a: b\n    name: a\n",
        ] {
            let text = format!(
                "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: v1\n  kind: B\n{metadata}  data: {{x: 1}}\n"
            );
            let rl = parse(&text).unwrap();
            let raw = rl.raw_items[0].as_deref().unwrap();
            let with = raw_with_annotation(raw, "k", "v").unwrap();
            let mut expected = rl.items[0].clone();
            expected["metadata"]["annotations"]["k"] = json!("v");
            assert!(raw_matches(&with, &expected), "{with}");
            let kept = raw
                .lines()
                .filter(|l| !with.lines().any(|w| w == *l))
                .count();
            assert!(kept <= 1, "more than the annotations line changed:\n{with}");
        }
        // Not one line: left to the caller, which writes the item anew.
        let noted = "- apiVersion: v1\n  kind: B\n  metadata: {name: c} # note\n";
        assert!(raw_with_annotation(noted, "k", "v").is_none());
        let entries = [
            entry(Some(raw[0].to_string()), &rl.items[0]),
            entry(None, &rl.items[1]),
        ];
        let out = write_entries(V1, &entries, Vec::new());
        assert!(out.contains("- # first\n"));
        assert_eq!(parse(&out).unwrap().items, rl.items);
    }

    /// The head of a ResourceList, for the cases below.
    const HEAD: &str = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n";

    /// Whether `text` is read in parts, and reads the same as read whole.
    fn read_in_parts_agreeing(text: &str) -> bool {
        assert_eq!(parse(text), parse_whole(text), "{text}");
        let chunks = split::split(text);
        read_in_parts(chunks[0].text, chunks[0].first_line).is_some()
    }

    #[test]
    fn an_item_key_past_the_implicit_key_limit_is_refused_either_way() {
        // Found by the `krm` fuzzer: an entry whose key is longer than YAML's 1024 characters
        // was read in parts while the whole document is refused.
        let text = format!(
            "{HEAD}items:\n- apiVersion:{}:\n    name: s\n",
            "A".repeat(1500)
        );
        assert!(!read_in_parts_agreeing(&text));
        assert!(parse(&text).is_err());
    }

    #[test]
    fn a_list_as_kpt_prints_it_is_read_in_parts_and_reads_the_same() {
        let items = "items:\n- apiVersion: v1\n  kind: A\n  metadata:\n    name: a\n  data:\n    k: v\n- apiVersion: v1\n  kind: B\n  metadata:\n    name: b\n";
        let config = "functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  data:\n    expand: \"false\"\n";
        for text in [
            format!("{HEAD}{items}"),
            format!("{HEAD}{items}{config}"),
            format!("{HEAD}{config}{items}"),
            // Entries indented under the key, comments and blank lines between them.
            format!(
                "{HEAD}items:\n  # the first\n  - apiVersion: v1\n    kind: A\n\n  # the second\n  - apiVersion: v1\n    kind: B\n{config}"
            ),
            // An entry whose object begins on the line after its `-`.
            format!("{HEAD}items:\n-\n  apiVersion: v1\n  kind: A\n"),
        ] {
            assert!(read_in_parts_agreeing(&text), "{text}");
            let read = parse(&text).unwrap();
            assert_eq!(read.items.len(), read.raw_items.len());
            assert!(read.raw_items.iter().all(Option::is_some), "{text}");
        }
    }

    #[test]
    fn a_list_read_in_parts_keeps_what_a_line_of_spaces_means() {
        // In a literal block, a line of spaces beyond the block's indentation is text (the
        // quick reader leaves such a list to be read whole); one no longer than it is an empty
        // line, and so is a line of spaces shorter than the entries' indentation, which an
        // entry moved left cannot keep.
        for (spaces, indent, in_parts) in [
            (4, 0, true),
            (6, 0, false),
            (1, 2, true),
            (6, 2, true),
            (8, 2, false),
        ] {
            let pad = " ".repeat(indent);
            let text = format!(
                "{HEAD}items:\n{pad}- apiVersion: v1\n{pad}  kind: A\n{pad}  data: |\n{pad}    one\n{}\n{pad}    two\n{pad}- apiVersion: v1\n{pad}  kind: B\n",
                " ".repeat(spaces)
            );
            assert_eq!(read_in_parts_agreeing(&text), in_parts, "{text}");
            let kept = " ".repeat(spaces.saturating_sub(indent + 4));
            assert_eq!(
                parse(&text).unwrap().items[0]["data"],
                json!(format!("one\n{kept}\ntwo\n"))
            );
        }
        // A kept final line break, then blank lines before the next entry: they belong to
        // the text of the block.
        let text = format!(
            "{HEAD}items:\n- apiVersion: v1\n  kind: A\n  data: |+\n    one\n\n\n- apiVersion: v1\n  kind: B\n"
        );
        read_in_parts_agreeing(&text);
        assert_eq!(parse(&text).unwrap().items[0]["data"], json!("one\n\n\n"));
    }

    #[test]
    fn a_list_the_quick_reader_does_not_take_is_read_whole() {
        for text in [
            // An anchor in one entry, its alias in another.
            format!("{HEAD}items:\n- apiVersion: v1\n  kind: A\n  data: &d {{k: v}}\n- apiVersion: v1\n  kind: B\n  data: *d\n"),
            // Tags, carriage returns, tabs, flow style, JSON.
            format!("{HEAD}items:\n- apiVersion: v1\n  kind: !!str A\n"),
            format!("{HEAD}items:\r\n- apiVersion: v1\r\n  kind: A\r\n"),
            format!("{HEAD}items:\n- apiVersion: v1\n\t\n- kind: A\n"),
            format!("{HEAD}items: [{{apiVersion: v1, kind: A}}]\n"),
            r#"{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [{"apiVersion": "v1", "kind": "A"}]}"#.to_string(),
            // The `items:` line inside a quoted text that runs over several lines.
            format!("{HEAD}note: \"one\nitems:\n- apiVersion: v1\n  kind: A\nmore\"\n"),
            // `items` twice, an entry broken, an entry that is not an object, no entries.
            format!("{HEAD}items:\n- apiVersion: v1\n  kind: A\nitems: []\n"),
            format!("{HEAD}items:\n- apiVersion: v1\n  kind: [A\n"),
            format!("{HEAD}items:\n# nothing\nfunctionConfig: {{}}\n"),
            // A comment to the left of an indented entry's lines.
            format!("{HEAD}items:\n  - apiVersion: v1\n# aside\n    kind: A\n"),
        ] {
            assert!(!read_in_parts_agreeing(&text), "{text}");
        }
    }

    #[test]
    fn an_entry_that_is_no_object_is_read_either_way_with_its_text() {
        let text = format!("{HEAD}items:\n- apiVersion: v1\n  kind: A\n- 1 # one\n");
        assert!(read_in_parts_agreeing(&text));
        let rl = parse(&text).unwrap();
        assert_eq!(rl.items[1], json!(1));
        assert!(item_problem(&rl.items[1]).is_some());
        assert_eq!(rl.raw_items[1].as_deref(), Some("- 1 # one\n"));
        assert_eq!(rl.item_lines[1], Some(6));
    }

    #[test]
    fn entries_that_keep_to_themselves_are_joined_and_the_others_printed_anew() {
        assert!(stands_alone("- a: 1\n  b: |\n    x\n\n# note\n  c: 2\n"));
        assert!(stands_alone("-\n  a: 1\n"));
        assert!(!stands_alone("- a: 1\nb: 2\n"));
        assert!(!stands_alone("- a: 1\n---\n"));
        assert!(!stands_alone("- a: 1"));
        assert!(!stands_alone("a: 1\n"));
        // A raw entry that would run into the next is not joined: its item is printed anew,
        // and the entries that keep to themselves are kept.
        let item = json!({"apiVersion": "v1", "kind": "A", "metadata": {"name": "a"}});
        let runs_on =
            "- apiVersion: v1\n  kind: A\n  metadata: {name: a}\nfunctionConfig: {}\n".to_string();
        let kept = "- apiVersion: v1 # kept\n  kind: A\n  metadata: {name: a}\n".to_string();
        let entries = [
            entry(Some(runs_on), &item),
            entry(Some(kept.clone()), &item),
            entry(None, &item),
        ];
        assert_eq!(entries[0], entries[2]);
        assert_eq!(entries[1], kept);
        let out = write_entries(V1, &entries, Vec::new());
        assert_eq!(
            parse_whole(&out).unwrap().items,
            vec![item.clone(), item.clone(), item.clone()]
        );
        // Printed entries join into what printing the whole list gives.
        let printed = [entries[0].clone(), entries[2].clone()];
        assert_eq!(
            write_entries(V1, &printed, Vec::new()),
            write(V1, vec![item.clone(), item], Vec::new())
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

    #[test]
    fn a_control_character_in_a_message_is_written_out_and_the_name_kept() {
        let name = "nope\u{1b}[2J";
        let d = Diagnostic::warning(
            codes::REFERENCE_NOT_FOUND,
            Origin::new("vm.yaml", 0, None),
            format!("instancetype \"{name}\" not found"),
        )
        .with_object(ObjectRef {
            api_version: "kubevirt.io/v1".into(),
            kind: "VirtualMachine".into(),
            namespace: None,
            name: name.into(),
        });
        let r = &results(&d)[0];
        assert_eq!(r["message"], "instancetype \"nope\\u{1b}[2J\" not found");
        assert_eq!(r["resourceRef"]["name"], name);
    }
}

//! The YAML layer. Every other module goes through these functions, so the YAML crate is an
//! implementation detail.
//!
//! Printing is our own (the `print` module): block style in the layout of
//! `kubectl get -o yaml`, with quoting that keeps every string a string for YAML 1.1 and 1.2
//! readers alike.
//!
//! For parsing we use `serde-saphyr`: it is maintained, written in safe Rust, reports line and
//! column for every error, rejects duplicate keys, and bounds alias expansion with a budget (so
//! an alias bomb is an error, not an out-of-memory kill).
//!
//! Comments do not survive: documents become [`Value`] trees. The KRM specification asks a
//! function to preserve comments where it can; kvrender leaves every item it does not change
//! untouched in KRM mode and says in the README that rewritten objects lose their comments.

mod escapes;
mod fast;
mod print;
mod tabs;
mod words;

pub use print::{write_document_marking, write_top_level_entry};
pub use tabs::{RefusedTab, refused_tabs};
pub use words::{
    FoldedBreaks, PlainBoolean, folded_breaks, holds_boolean, holds_indented_line, may_fold,
    may_hold, plain_booleans, yaml11_boolean,
};

use serde_json::Value;

/// A YAML parse failure with its position inside the parsed text (1-based).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YamlError {
    /// What is wrong, without position or snippet.
    pub message: String,
    /// 1-based line inside the parsed text, when known.
    pub line: Option<u32>,
    /// 1-based column, when known.
    pub column: Option<u32>,
}

/// What a byte order mark inside a document is said to be.
pub const BOM_INSIDE: &str = "a byte order mark (U+FEFF) inside a document, which kubectl, \
                              kustomize and kpt refuse there too: delete it";

/// Aliases a document may use, and nodes it may produce, before we call it a bomb.
const MAX_ALIASES: usize = 10_000;
const MAX_NODES: usize = 2_000_000;
/// The text of all the values of one document, in bytes: what the parser itself allows.
const MAX_SCALAR_BYTES: usize = 64 << 20;
/// Nesting deeper than this is not a Kubernetes object; refuse it instead of recursing.
const MAX_DEPTH: usize = 128;
/// Parser events that aliases may replay in one document. Each costs a value and an event
/// copy, about 200 bytes together: the parser's own default of a million let a 400-byte alias
/// bomb take 0.6 s and 220 MB before it was refused. A manifest that repeats a block with an
/// alias repeats tens of values, a few hundred times at most.
const MAX_REPEATED: usize = 100_000;
/// Parser events that anchors may hold in one document, counted once for every anchor open
/// around them (nested anchors copy what they hold), replayed ones included.
const MAX_ANCHORED: usize = 4 * MAX_REPEATED;

fn options() -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    budget.max_aliases = MAX_ALIASES;
    budget.max_nodes = MAX_NODES;
    // A node is one event (a scalar) or two (a mapping or list opens and closes): a document
    // within the node budget must not run out of events first.
    budget.max_events = 2 * MAX_NODES + 2;
    budget.max_depth = MAX_DEPTH;
    budget.max_total_scalar_bytes = MAX_SCALAR_BYTES;
    budget.max_recorded_anchor_events = MAX_ANCHORED;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options.alias_limits.max_total_replayed_events = MAX_REPEATED;
    // `0644` is the octal 420, as kubectl and kustomize read it (YAML 1.1), not 644.
    options.legacy_octal_numbers = true;
    options
}

/// Which plain words are booleans.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Booleans {
    /// YAML 1.1's, as `kubectl apply -f` reads a file: `true`, `false`, and `yes`, `no`,
    /// `on`, `off`, `y`, `n`, each in lower case, capitalized or upper case.
    Yaml11,
    /// YAML 1.2's, as kpt and kustomize read their inputs and hand them to a function: only
    /// `true` and `false` (lower case, capitalized or upper case); `yes` is text.
    Yaml12,
}

/// Parse one YAML document into a value tree, with YAML 1.1's booleans.
pub fn parse_document(text: &str) -> Result<Value, YamlError> {
    parse_document_with(text, Booleans::Yaml11)
}

/// Parse one YAML document into a value tree, with the given booleans.
///
/// # Errors
/// As [`parse_document`].
pub fn parse_document_with(text: &str, booleans: Booleans) -> Result<Value, YamlError> {
    // The quick reader takes `true` and `false` alone and hands every other word on.
    match fast::parse(text) {
        Some(value) => Ok(value),
        None => parse_full(text, booleans),
    }
}

/// Parse a document whose top-level node may also be a sequence (the text of one item of a
/// list, as a ResourceList's items are cut out): through the quick reader when it can, else
/// serde-saphyr; the same value either way.
///
/// # Errors
/// As [`parse_document`].
pub fn parse_node(text: &str) -> Result<Value, YamlError> {
    parse_node_with(text, Booleans::Yaml11)
}

/// [`parse_node`] with the given booleans.
///
/// # Errors
/// As [`parse_document`].
pub fn parse_node_with(text: &str, booleans: Booleans) -> Result<Value, YamlError> {
    match fast::parse_any(text) {
        Some(value) => Ok(value),
        None => parse_full(text, booleans),
    }
}

/// Parse a mapping or sequence with the quick reader alone: `None` for anything it leaves to
/// serde-saphyr (anchors, aliases, tags and the rest that [`fast`] lists), else what
/// [`parse_node`] gives.
pub(crate) fn parse_quick(text: &str) -> Option<Value> {
    fast::parse_any(text)
}

/// Parse with serde-saphyr alone, skipping the quick reader: the fuzzers and tests use it to
/// hold both paths to the same answers.
#[doc(hidden)]
pub fn parse_document_full(text: &str) -> Result<Value, YamlError> {
    parse_full(text, Booleans::Yaml11)
}

fn parse_full(text: &str, booleans: Booleans) -> Result<Value, YamlError> {
    let parse = |text: &str| {
        let mut options = options();
        options.strict_booleans = booleans == Booleans::Yaml12;
        serde_saphyr::from_str_with_options::<Value>(text, options)
            .map_err(|e| at_the_tab(text, convert_error(&e)))
    };
    let mut value = parse(text)?;
    if let Some(error) = escapes::surrogate_escape(text) {
        return Err(error);
    }
    // serde-saphyr takes the YAML 1.1 booleans in any case (`tRue`, `yEs`); Go's readers, as
    // PyYAML and the YAML 1.1 specification, only in lower case, capitalized or upper case.
    // Such a word is read again quoted, as the text every other reader makes of it.
    if booleans == Booleans::Yaml11 && words::holds_boolean(&value) && words::may_hold(text).1 {
        let found = words::plain_booleans(text);
        let mixed: Vec<&PlainBoolean> = found.iter().filter(|w| w.yaml11.is_none()).collect();
        if !mixed.is_empty() {
            value = parse(&words::quoted(text, &mixed))?;
        }
    }
    whole_floats_to_integers(&mut value);
    Ok(value)
}

/// The integer a whole float stands for (`2.0`, `1e3`, `-0.0`), if it is within the range of a
/// 64-bit integer.
///
/// Kubernetes clients read `2.0` into a float and write it to the API server as JSON, which
/// prints a whole float without a fraction: `guest: 2.0` reaches KubeVirt as `2`, an
/// integer, which the schema and the Go types take. kvrender reads such a number as that
/// integer, and prints one so too.
pub(crate) fn whole_integer(f: f64) -> Option<serde_json::Number> {
    // 2^64 and 2^63 are exact in f64; the comparisons keep `as` from saturating.
    const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if !f.is_finite() || f.fract() != 0.0 {
        return None;
    }
    if f >= 0.0 {
        (f < TWO_POW_64).then(|| serde_json::Number::from(f as u64))
    } else {
        (f >= -TWO_POW_63).then(|| serde_json::Number::from(f as i64))
    }
}

fn whole_floats_to_integers(value: &mut Value) {
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(i) = n.as_f64().and_then(whole_integer) {
                *n = i;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(whole_floats_to_integers),
        Value::Object(map) => map.values_mut().for_each(whole_floats_to_integers),
        _ => {}
    }
}

/// The parser's messages that speak of its Rust API (`Option<String>`, `Options`, weak
/// recursion types), said in terms of the YAML instead.
fn in_yaml_terms(message: &str) -> Option<&'static str> {
    const PLAIN: &[(&str, &str)] = &[
        (
            "cannot deserialize null into string",
            "a null (`~`, `null` or nothing) where a string is needed: a mapping key, most \
             likely; quote it if it is meant as text",
        ),
        (
            "!!binary scalar",
            "a `!!binary` value where text is needed: Kubernetes manifests carry binary data \
             as base64 text, without the tag",
        ),
        (
            "recursive references",
            "an alias used inside the node its anchor names: the value would contain itself",
        ),
        (
            "expected string scalar",
            "a mapping key that is not a plain value (a list or a mapping as a key, `? [a]`): \
             Kubernetes objects take only strings as keys",
        ),
        (
            "multiple YAML documents detected",
            "more than one YAML document where one was expected",
        ),
        ("a BOM must not appear inside a document", BOM_INSIDE),
    ];
    if let Some((_, plain)) = PLAIN.iter().find(|(raw, _)| message.starts_with(raw)) {
        return Some(plain);
    }
    // `!!int abc`, `!!float x`: the tag asks for a number the text is not.
    let number = [
        "invalid u64",
        "invalid i64",
        "invalid f64",
        "invalid u128",
        "invalid i128",
    ];
    number
        .contains(&message)
        .then_some("a value tagged as a number (`!!int`, `!!float`) whose text is not one")
}

fn convert_error(e: &serde_saphyr::Error) -> YamlError {
    let location = e.location();
    let line = location.map(|l| u32::try_from(l.line()).unwrap_or(u32::MAX));
    let column = location.map(|l| u32::try_from(l.column()).unwrap_or(u32::MAX));
    let full = e.to_string();
    let first = full.lines().next().unwrap_or("invalid YAML").trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    // "line L column C: message" -> "message"
    let message = match first.strip_prefix("line ") {
        Some(rest) => rest.split_once(": ").map_or(first, |(_, m)| m).to_string(),
        None => first.to_string(),
    };
    let message =
        if message.starts_with("budget breached: Depth") || message == "recursion limit exceeded" {
            format!("the document nests deeper than {MAX_DEPTH} levels")
        } else if message
            .strip_prefix("budget breached: ")
            .is_some_and(|d| d.starts_with("ScalarBytes"))
        {
            format!(
                "the document's values hold more than {} MiB of text, more than kvrender reads \
                 as one document: split it into several documents",
                MAX_SCALAR_BYTES >> 20
            )
        } else if message
            .strip_prefix("budget breached: ")
            .is_some_and(|d| ["Events", "Nodes"].iter().any(|k| d.starts_with(k)))
        {
            // The parser's own words are a Rust debug dump (`Nodes { nodes: 2000001 }`).
            format!(
                "the document is larger than kvrender reads as one document ({MAX_NODES} values): \
             split it into several documents, or a List into several Lists"
            )
        } else if let Some(detail) = message.strip_prefix("budget breached: ") {
            format!(
                "the document goes beyond kvrender's limits: {}",
                budget_in_words(detail)
            )
        } else if message.starts_with("alias replay limit exceeded") {
            format!(
                "the document goes beyond kvrender's limits: aliases (`*name`) that repeat \
                 anchored values more than {MAX_REPEATED} times"
            )
        } else if let Some(plain) = in_yaml_terms(&message) {
            plain.to_string()
        } else {
            message
                .replace(", set DuplicateKeyPolicy in Options if acceptable", "")
                .replace(" rejected by the configured policy", "")
        };
    YamlError {
        message,
        line: line.filter(|l| *l > 0),
        column: column.filter(|c| *c > 0),
    }
}

/// The parser's message for a tab in the indentation of a line of a block collection; it
/// reports it at the first character after the line's indentation.
const TAB_IN_INDENTATION: &str = "tabs disallowed within this context (block indentation)";
/// The parser's message for a tab in the indentation of a line that continues a plain scalar;
/// it reports it at the scalar's start, on an earlier line.
const TAB_IN_PLAIN_SCALAR: &str = "while scanning a plain scalar, found a tab";

/// `error` pointing at the tab it is about, where the parser reports it elsewhere (see
/// [`TAB_IN_INDENTATION`] and [`TAB_IN_PLAIN_SCALAR`]); any other error as it is.
fn at_the_tab(text: &str, mut error: YamlError) -> YamlError {
    let Some(line) = error
        .line
        .and_then(|l| usize::try_from(l).ok())
        .filter(|&l| l > 0)
    else {
        return error;
    };
    let found = if error.message == TAB_IN_INDENTATION {
        text.lines()
            .nth(line - 1)
            .and_then(|l| indentation_tab(l, usize::MAX))
            .map(|column| (line, column))
    } else if error.message == TAB_IN_PLAIN_SCALAR {
        // The scalar's continuation lines may hold a tab only beyond the indentation of the
        // node the scalar belongs to: at most the column of the first key or value on the
        // scalar's first line, after its dashes.
        text.lines().nth(line - 1).and_then(|first| {
            let mut rest = first.trim_start_matches(' ');
            while let Some(after) = rest.strip_prefix("- ") {
                rest = after.trim_start_matches(' ');
            }
            let own = first.len() - rest.len();
            text.lines()
                .enumerate()
                .skip(line)
                .find_map(|(i, l)| indentation_tab(l, own).map(|column| (i + 1, column)))
        })
    } else {
        None
    };
    if let Some((line, column)) = found {
        error.line = u32::try_from(line).ok();
        error.column = u32::try_from(column + 1).ok();
    }
    error
}

/// The 0-based column of the first tab in the indentation of `line` when it is at most
/// `limit` and the line holds more than blanks and a comment.
fn indentation_tab(line: &str, limit: usize) -> Option<usize> {
    let content = line.trim_start_matches([' ', '\t']);
    let blanks = line.len() - content.len();
    if content.trim_end().is_empty() || content.starts_with('#') {
        return None;
    }
    line[..blanks].find('\t').filter(|&column| column <= limit)
}

/// The parser names a breached limit as a Rust value (`Aliases { aliases: 10001 }`); say it in
/// the terms of the YAML instead, keeping the count it reached.
fn budget_in_words(detail: &str) -> String {
    let (name, count) = match detail.split_once(" {") {
        Some((name, rest)) => (
            name,
            rest.split(|c: char| !c.is_ascii_digit())
                .find(|d| !d.is_empty()),
        ),
        None => (detail, None),
    };
    let count = count.unwrap_or("?");
    match name {
        "Aliases" => format!("more than {MAX_ALIASES} aliases (`*name`)"),
        "Anchors" => format!("too many anchors (`&name`): {count}"),
        "AliasAnchorRatio" => "far more aliases (`*name`) than anchors (`&name`)".to_string(),
        "MergeKeys" => format!("too many merge keys (`<<`): {count}"),
        "RecordedAnchorEvents" => format!(
            "anchors (`&name`) that hold more than {MAX_ANCHORED} values in all (a value inside \
             nested anchors counts once for each)"
        ),
        "RecordedAnchorBytes" => {
            format!("aliases (`*name`) that repeat {count} bytes of anchored values or more")
        }
        "Documents" => format!("too many documents in one stream: {count}"),
        "InputBytes" => format!("more input than kvrender reads: {count} bytes"),
        "SequenceUnbalanced" => "a list or mapping closed that was never opened".to_string(),
        _ => detail.to_string(),
    }
}

/// Print one value as a YAML document (no leading `---`), ending in a newline.
pub fn to_string(value: &Value) -> String {
    print::document(value)
}

/// Append one value as a YAML document (no leading `---`), ending in a newline.
pub fn write(out: &mut String, value: &Value) {
    print::write_document(out, value);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A JSON list of 40,000 objects (`kubectl get -o json`, a KRM ResourceList) has more
    /// than a million parser events; within the node budget it must read.
    #[test]
    fn a_document_within_the_node_budget_has_events_enough() {
        let n = 1_000_500;
        let text = format!("[{}0]", "0,".repeat(n));
        let value = parse_document_full(&text).unwrap();
        assert_eq!(value.as_array().map(Vec::len), Some(n + 1));
    }

    /// A document past the node budget is refused in words even when its shape is one the
    /// quick reader takes (a plain flow list is), and the message holds no Rust value.
    #[test]
    fn a_document_past_the_node_budget_is_refused_in_words() {
        // One case only: serde-saphyr reading two million values takes seconds in a debug
        // build.
        let text = format!("k: [{}0]\n", "0,".repeat(MAX_NODES));
        let error = parse_document(&text).unwrap_err();
        assert_eq!(
            error.message,
            "the document is larger than kvrender reads as one document (2000000 values): split \
             it into several documents, or a List into several Lists"
        );
        assert_eq!(error.line, Some(1));
        // Just within the length the quick reader takes, it still reads.
        let within = format!("k: [{}0]\n", "0,".repeat(MAX_NODES / 2 - 4));
        assert!(within.len() <= MAX_NODES);
        assert!(parse_document(&within).is_ok());
    }

    /// A document of a few values whose text passes the parser's budget is said to be that,
    /// not a document of too many values.
    #[test]
    fn a_document_of_long_values_is_refused_for_their_length() {
        let long = "x".repeat(MAX_SCALAR_BYTES / 2 + 1);
        let text = format!("a: {long}\nb: {long}\n");
        let error = parse_document(&text).unwrap_err();
        assert_eq!(
            error.message,
            "the document's values hold more than 64 MiB of text, more than kvrender reads as \
             one document: split it into several documents"
        );
        assert!(parse_document(&format!("a: {long}\n")).is_ok());
    }

    /// Aliases that multiply each other are refused in words, not as the parser's Rust value.
    #[test]
    fn an_alias_bomb_is_refused_in_words() {
        let mut text = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
        for (name, previous) in ["b", "c", "d", "e", "f", "g", "h", "i"]
            .iter()
            .zip(["a", "b", "c", "d", "e", "f", "g", "h"])
        {
            let refs = vec![format!("*{previous}"); 9].join(", ");
            text.push_str(&format!("{name}: &{name} [{refs}]\n"));
        }
        let err = parse_document(&text).unwrap_err();
        assert!(
            err.message
                .contains("aliases (`*name`) that repeat anchored values more than 100000 times"),
            "{}",
            err.message
        );
        assert!(!err.message.contains('{'), "{}", err.message);
        assert_eq!(
            budget_in_words("Aliases { aliases: 10001 }"),
            "more than 10000 aliases (`*name`)"
        );
        assert_eq!(
            budget_in_words("SequenceUnbalanced"),
            "a list or mapping closed that was never opened"
        );
        assert_eq!(budget_in_words("Unknown { x: 1 }"), "Unknown { x: 1 }");
    }

    /// One anchor repeated by many aliases, without nesting, is refused once the values the
    /// aliases repeat pass the limit; just under it, the document reads.
    #[test]
    fn aliases_may_repeat_a_bounded_number_of_values() {
        let with_refs = |refs: usize| {
            let mut text = format!("a: &a [{}]\nrefs:\n", vec!["x"; 999].join(", "));
            text.push_str(&"- *a\n".repeat(refs));
            text
        };
        // Each replay of the anchor is 1,001 events: the list opens, 999 values, it closes.
        let fits = MAX_REPEATED / 1001;
        let value = parse_document(&with_refs(fits)).unwrap();
        assert_eq!(value["refs"].as_array().map(Vec::len), Some(fits));
        let err = parse_document(&with_refs(fits + 1)).unwrap_err();
        assert_eq!(
            err.message,
            "the document goes beyond kvrender's limits: aliases (`*name`) that repeat anchored \
             values more than 100000 times"
        );
        assert_eq!(err.line, Some(u32::try_from(fits + 3).unwrap()));
    }

    /// Anchors nested in anchors copy what they hold once for each: bounded too. Run on a
    /// thread with the workers' stack, as the binary parses: 100 levels of nesting take more
    /// than a test thread's 2 MiB in a debug build.
    #[test]
    fn nested_anchors_hold_a_bounded_number_of_values() {
        let depth = 100;
        let opens: String = (0..depth).map(|i| format!("&n{i} [")).collect();
        let text = format!(
            "a: {opens}{}{}\n",
            vec!["x"; 5000].join(","),
            "]".repeat(depth)
        );
        let err = std::thread::Builder::new()
            .stack_size(crate::workers::WORKER_STACK)
            .spawn(move || parse_document(&text).unwrap_err())
            .unwrap()
            .join()
            .unwrap();
        assert!(
            err.message
                .contains("anchors (`&name`) that hold more than 400000 values in all"),
            "{}",
            err.message
        );
    }

    /// A tab in the indentation is reported at the tab: in a block collection's line (the
    /// parser says the first character after the indentation) and in the line that continues
    /// a plain scalar (the parser says the scalar's start, on an earlier line).
    #[test]
    fn a_tab_in_the_indentation_is_reported_at_the_tab() {
        for (text, line, column) in [
            ("metadata:\n\tname: x\n", 2, 1),
            ("metadata:\n  labels:\n  \t a: b\n", 3, 3),
            ("metadata:\n  labels:\n\t\ta: b\n", 3, 1),
            ("metadata:\n  name: x\n  \tlabels: {}\n", 3, 3),
            ("metadata:\n  name: x\n\t  labels: {}\n", 3, 1),
            ("kind: A\n\tname: x\n", 2, 1),
            ("items:\n- a: 1\n \t\n\t b: 2\n", 4, 1),
            ("items:\n- - a: 1\n  \t\n    b\n   \tc\n", 5, 4),
        ] {
            let err = parse_document_full(text).unwrap_err();
            assert!(err.message.contains("tab"), "{text:?}: {err:?}");
            assert_eq!(
                (err.line, err.column),
                (Some(line), Some(column)),
                "{text:?}: {err:?}"
            );
        }
    }

    /// Each of these used to come out in terms of the parser's Rust API.
    #[test]
    fn parser_messages_speak_of_the_yaml() {
        for (text, wanted) in [
            (
                "data: {~: b}\n",
                "a null (`~`, `null` or nothing) where a string is needed",
            ),
            (
                "a: !!binary /w==\n",
                "a `!!binary` value where text is needed",
            ),
            (
                "m: &m {self: *m}\n",
                "an alias used inside the node its anchor names",
            ),
            ("a: !!int abc\n", "a value tagged as a number"),
            ("? [a]\n: b\n", "a mapping key that is not a plain value"),
        ] {
            let err = parse_document(text).unwrap_err();
            assert!(err.message.starts_with(wanted), "{text:?}: {}", err.message);
            assert!(
                !["Option", "Options", "u64", "weak"]
                    .iter()
                    .any(|api| err.message.contains(api)),
                "{}",
                err.message
            );
            assert!(err.line.is_some(), "{text:?}");
        }
    }
}

//! Plain values whose type depends on the YAML reader: the booleans of YAML 1.1 that YAML 1.2
//! reads as text (`yes`, `no`, `on`, `off`, `y`, `n` and their capitalized forms), and the
//! mixed-case spellings (`tRue`, `yEs`) that no reader takes for a boolean.
//!
//! `kubectl apply` reads manifests as YAML 1.1, so `running: yes` reaches the API server as
//! `true`; kustomize and kpt read YAML 1.2, so the same line reaches it as the string `"yes"`.
//! The parsed tree does not say how a value was written, so the document's text is read again,
//! as parser events, for the plain scalars in question. Only documents whose tree holds a
//! boolean are worth it, and only the full parser's: the quick reader hands every such word on.
//!
//! Folded block scalars (`>`) with more-indented lines are read again the same way: the YAML
//! reader of kustomize and kpt puts more line breaks into them than YAML does.

use std::ops::Range;

use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle};

use crate::model::path;

/// A plain value of a document's text that `classify` picks out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlainBoolean {
    /// The dotted path of the field (see [`crate::load::locate::parse_path`]); `[0]` first for
    /// a document that is a list.
    pub field: String,
    /// The 1-based line of the value in the text.
    pub line: u32,
    /// The 1-based column of the value.
    pub column: u32,
    /// The word as written.
    pub word: String,
    /// What a YAML 1.1 reader (`kubectl apply`) makes of it; `None` for a mixed-case spelling,
    /// which every reader keeps as text.
    pub yaml11: Option<bool>,
    /// Where the word is in the text, in bytes.
    pub(super) span: Range<usize>,
}

/// What a plain word means to a YAML 1.1 reader: `Some(Some(b))` for `y`, `yes`, `on`, `n`,
/// `no` or `off` in lower case, capitalized or upper case, as Go's reader spells the booleans
/// of YAML 1.1 that YAML 1.2 reads as text; `Some(None)` for a mixed-case spelling of one of
/// them or of `true` and `false` (text to every reader, a boolean to serde-saphyr); `None` for
/// anything else (`true`, `True` and `TRUE` are booleans to every reader).
fn classify(word: &str) -> Option<Option<bool>> {
    const WORDS: [(&str, bool); 8] = [
        ("y", true),
        ("yes", true),
        ("on", true),
        ("true", true),
        ("n", false),
        ("no", false),
        ("off", false),
        ("false", false),
    ];
    let &(lower, value) = WORDS.iter().find(|(w, _)| w.eq_ignore_ascii_case(word))?;
    let bytes = word.as_bytes();
    let usual = bytes.iter().all(u8::is_ascii_lowercase)
        || bytes.iter().all(u8::is_ascii_uppercase)
        || bytes[1..].iter().all(u8::is_ascii_lowercase);
    match (usual, lower) {
        (true, "true" | "false") => None,
        (true, _) => Some(Some(value)),
        (false, _) => Some(None),
    }
}

/// What a YAML 1.1 reader makes of `word` when YAML 1.2 reads it as text: `Some(b)` for one of
/// the words `classify` names so, else `None`.
pub fn yaml11_boolean(word: &str) -> Option<bool> {
    classify(word).flatten()
}

/// What the words of `text` may hold, read as runs of letters without parsing: whether one of
/// them is a YAML 1.1 boolean YAML 1.2 reads as text, and whether one is a mixed-case spelling
/// (see `classify`). A `false` is sure; a `true` only says that [`plain_booleans`] is worth
/// asking (the word may be quoted, a key or part of longer text).
pub fn may_hold(text: &str) -> (bool, bool) {
    let bytes = text.as_bytes();
    let (mut yaml11, mut mixed) = (false, false);
    let mut at = 0;
    while at < bytes.len() {
        if !bytes[at].is_ascii_alphanumeric() {
            at += 1;
            continue;
        }
        let start = at;
        while at < bytes.len() && bytes[at].is_ascii_alphanumeric() {
            at += 1;
        }
        if !(1..=5).contains(&(at - start)) {
            continue;
        }
        // Runs of ASCII letters and digits are text.
        let word = std::str::from_utf8(&bytes[start..at]).unwrap_or_default();
        match classify(word) {
            // A word inside prose (`runs on a host`) is no value of its own.
            Some(Some(_)) => yaml11 = yaml11 || stands_alone(bytes, start, at),
            Some(None) => mixed = true,
            None => {}
        }
        if yaml11 && mixed {
            break;
        }
    }
    (yaml11, mixed)
}

/// Whether the word at `start..end` of `bytes` may be a whole plain value: after an indicator
/// (`:`, `-`, `[`, `{`, `,`, `?`), an anchor or a tag, or first on its line, and last on its
/// line but for a comment, or before a flow collection's `,`, `]` or `}`.
fn stands_alone(bytes: &[u8], start: usize, end: usize) -> bool {
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let after = bytes[end..].iter().find(|b| !blank(b));
    if !after.is_none_or(|b| matches!(b, b'\n' | b'\r' | b'#' | b',' | b']' | b'}')) {
        return false;
    }
    let Some(before) = bytes[..start].iter().rposition(|b| !blank(b)) else {
        return true;
    };
    match bytes[before] {
        b'\n' | b'\r' | b':' | b'-' | b'[' | b'{' | b',' | b'?' => true,
        _ => {
            // The token before it: an anchor (`&x yes`) or a tag (`!t yes`) may stand there.
            let token = bytes[..=before]
                .iter()
                .rposition(|b| blank(b) || *b == b'\n' || *b == b'\r')
                .map_or(0, |p| p + 1);
            matches!(bytes[token], b'&' | b'!')
        }
    }
}

/// Where a node stands in its parent.
enum Frame {
    /// A mapping: the key of the value being read, or `None` while a key is read.
    Mapping { key: Option<String> },
    /// A list: the index of the item being read.
    List { index: usize },
}

/// The plain values of `text` (one YAML document) that `classify` picks out, in the order
/// written. Mapping keys are left out: kvrender reads every key as text. A value with a tag
/// (`!!bool yes`, `!!str on`) says what it is and is left out too. Reading stops at the first
/// error, which the caller's parse has already reported.
pub fn plain_booleans(text: &str) -> Vec<PlainBoolean> {
    let mut found = Vec::new();
    scalar_values(text, |stack, value, style, tagged, span| {
        if style == ScalarStyle::Plain
            && !tagged
            && let (Some(yaml11), Some(bytes)) = (classify(value), span.byte_range())
        {
            found.push(PlainBoolean {
                field: field_of(stack),
                line: u32::try_from(span.start.line()).unwrap_or(u32::MAX),
                column: u32::try_from(span.start.col() + 1).unwrap_or(u32::MAX),
                word: value.to_string(),
                yaml11,
                span: bytes,
            });
        }
    });
    found
}

/// A folded block scalar (`>`) that kustomize and kpt read with more line breaks than YAML
/// gives it (see [`folded_breaks`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoldedBreaks {
    /// The dotted path of the field, as in [`PlainBoolean::field`].
    pub field: String,
    /// The 1-based line and column where the block's text begins (the line after its `>`, or
    /// later past empty lines).
    pub line: u32,
    pub column: u32,
    /// How many line breaks those tools add: one for each more-indented line that follows a
    /// line that is not (blank lines between them aside).
    pub added: usize,
}

/// Where a folded block scalar of `text` (one YAML document) holds a more-indented line after
/// one that is not. YAML keeps the line break before such a line as it is; the YAML reader of
/// kustomize and kpt (go-yaml's version 3) adds another one there, while `kubectl apply -f`
/// (go-yaml's version 2) reads the block as YAML does. So `>` over `one`, `  two` is
/// `"one\n  two\n"` to `kubectl apply -f` and to kvrender, and `"one\n\n  two\n"` through a
/// kustomization. Mapping keys are left out, as in [`plain_booleans`].
pub fn folded_breaks(text: &str) -> Vec<FoldedBreaks> {
    let mut found = Vec::new();
    scalar_values(text, |stack, value, style, _, span| {
        if style != ScalarStyle::Folded {
            return;
        }
        let added = more_indented_runs(value);
        if added > 0 {
            found.push(FoldedBreaks {
                field: field_of(stack),
                line: u32::try_from(span.start.line()).unwrap_or(u32::MAX),
                column: u32::try_from(span.start.col() + 1).unwrap_or(u32::MAX),
                added,
            });
        }
    });
    found
}

/// In the text of a folded block scalar as YAML reads it, how many lines that start with a
/// blank (the block's more-indented lines) follow a line with text that does not, empty lines
/// between them aside.
fn more_indented_runs(value: &str) -> usize {
    let mut runs = 0;
    let mut after_text = false;
    for line in value.split('\n').filter(|l| !l.is_empty()) {
        let indented = line.starts_with([' ', '\t']);
        if indented && after_text {
            runs += 1;
        }
        after_text = !indented;
    }
    runs
}

/// Whether `text` may hold a folded block scalar: a `>` after a blank, with nothing but
/// indentation and chomping indicators between it and a blank or the end of its line. A `false`
/// is sure; a `true` says that [`folded_breaks`] is worth asking (the `>` may be in a string or
/// a comment).
pub fn may_fold(text: &str) -> bool {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'>', bytes).any(|at| {
        let after_blank = at > 0 && matches!(bytes[at - 1], b' ' | b'\t');
        let rest = &bytes[at + 1..];
        let indicators = rest
            .iter()
            .take(2)
            .take_while(|b| matches!(b, b'1'..=b'9' | b'+' | b'-'))
            .count();
        after_blank
            && rest
                .get(indicators)
                .is_none_or(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
    })
}

/// Whether `value` holds a string with a line that starts with a blank after a line break,
/// as a folded block scalar's more-indented line reads.
pub fn holds_indented_line(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::String(s) => s.contains("\n ") || s.contains("\n\t"),
        serde_json::Value::Array(items) => items.iter().any(holds_indented_line),
        serde_json::Value::Object(map) => map.values().any(holds_indented_line),
        _ => false,
    }
}

/// Call `visit` with every scalar value of `text` (one YAML document) that is no mapping key,
/// in the order written: the frames of its parents, its text, its style, whether it has a tag,
/// and where it is. Reading stops at the first error.
fn scalar_values(
    text: &str,
    mut visit: impl FnMut(&[Frame], &str, ScalarStyle, bool, &serde_saphyr::granit_parser::Span),
) {
    let mut stack: Vec<Frame> = Vec::new();
    for event in Parser::new_from_str(text) {
        let Ok((event, span)) = event else { break };
        match event {
            Event::Scalar(value, style, _, tag) => {
                let is_key = matches!(stack.last(), Some(Frame::Mapping { key: None }));
                if is_key {
                    if let Some(Frame::Mapping { key }) = stack.last_mut() {
                        *key = Some(value.into_owned());
                    }
                    continue;
                }
                visit(&stack, &value, style, tag.is_some(), &span);
                value_done(&mut stack);
            }
            Event::Alias(_) => {
                if matches!(stack.last(), Some(Frame::Mapping { key: None })) {
                    if let Some(Frame::Mapping { key }) = stack.last_mut() {
                        *key = Some(String::new());
                    }
                } else {
                    value_done(&mut stack);
                }
            }
            Event::MappingStart(..) => stack.push(Frame::Mapping { key: None }),
            Event::SequenceStart(..) => stack.push(Frame::List { index: 0 }),
            Event::MappingEnd | Event::SequenceEnd => {
                stack.pop();
                // A collection as a mapping key (`? [a]`): kvrender refuses it, and its
                // values are no field's.
                if matches!(stack.last(), Some(Frame::Mapping { key: None })) {
                    if let Some(Frame::Mapping { key }) = stack.last_mut() {
                        *key = Some(String::new());
                    }
                } else {
                    value_done(&mut stack);
                }
            }
            _ => {}
        }
    }
}

/// The parent of a value just read moves on: a mapping to its next key, a list to its next
/// item.
fn value_done(stack: &mut [Frame]) {
    match stack.last_mut() {
        Some(Frame::Mapping { key }) => *key = None,
        Some(Frame::List { index }) => *index += 1,
        None => {}
    }
}

fn field_of(stack: &[Frame]) -> String {
    let mut out = String::new();
    for frame in stack {
        match frame {
            Frame::Mapping { key } => path::push_key(&mut out, key.as_deref().unwrap_or("")),
            Frame::List { index } => {
                out.push('[');
                out.push_str(&index.to_string());
                out.push(']');
            }
        }
    }
    out
}

/// `text` with each of `words` put in single quotes, so that a reader takes it for text. The
/// words are plain scalars of one word, so their quoted forms need no escapes, and every line
/// keeps its number.
pub(super) fn quoted(text: &str, words: &[&PlainBoolean]) -> String {
    let mut out = String::with_capacity(text.len() + 2 * words.len());
    let mut at = 0;
    for w in words {
        out.push_str(&text[at..w.span.start]);
        out.push('\'');
        out.push_str(&text[w.span.clone()]);
        out.push('\'');
        at = w.span.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Whether `value` holds a boolean anywhere.
pub fn holds_boolean(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Bool(_) => true,
        serde_json::Value::Array(items) => items.iter().any(holds_boolean),
        serde_json::Value::Object(map) => map.values().any(holds_boolean),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_classified_as_go_reads_them() {
        for word in ["y", "Y", "yes", "Yes", "YES", "on", "On", "ON"] {
            assert_eq!(classify(word), Some(Some(true)), "{word}");
        }
        for word in ["n", "N", "no", "No", "NO", "off", "Off", "OFF"] {
            assert_eq!(classify(word), Some(Some(false)), "{word}");
        }
        for word in [
            "yEs", "YeS", "oN", "nO", "oFF", "tRue", "TRuE", "FaLSE", "fALSE",
        ] {
            assert_eq!(classify(word), Some(None), "{word}");
        }
        for word in [
            "true", "True", "TRUE", "false", "False", "FALSE", "yess", "o", "", "é",
        ] {
            assert_eq!(classify(word), None, "{word}");
        }
    }

    #[test]
    fn plain_values_are_found_with_their_field_and_position() {
        let text = "\
metadata:
  labels:
    enabled: yes
    quoted: \"yes\"
    app.kubernetes.io/part: 'on'
spec:
  running: Off
  list: [a, n, !!str y, {k: ON}]
  items:
  - x
  - tRue
  yes: key
  tagged: !!bool no
";
        let found = plain_booleans(text);
        let got: Vec<(&str, u32, u32, &str, Option<bool>)> = found
            .iter()
            .map(|w| {
                (
                    w.field.as_str(),
                    w.line,
                    w.column,
                    w.word.as_str(),
                    w.yaml11,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("metadata.labels.enabled", 3, 14, "yes", Some(true)),
                ("spec.running", 7, 12, "Off", Some(false)),
                ("spec.list[1]", 8, 13, "n", Some(false)),
                ("spec.list[3].k", 8, 29, "ON", Some(true)),
                ("spec.items[1]", 11, 5, "tRue", None),
            ]
        );
        assert_eq!(&text[found[0].span.clone()], "yes");
    }

    #[test]
    fn anchors_aliases_and_keys_do_not_shift_the_fields() {
        let text = "a: &x on\nb: *x\n? [k]\n: c\nd: - \ne:\n  <<: {f: n}\n  g: y\n";
        let text = text.replace("d: - \n", "d: [*x, no]\n");
        let got: Vec<(String, u32)> = plain_booleans(&text)
            .into_iter()
            .map(|w| (w.field, w.line))
            .collect();
        assert_eq!(
            got,
            [
                ("a".to_string(), 1),
                ("d[1]".to_string(), 5),
                ("e.<<.f".to_string(), 7),
                ("e.g".to_string(), 8)
            ]
        );
    }

    #[test]
    fn folded_blocks_with_more_indented_lines_after_text_are_found() {
        let text = "\
a: >
  one
    two
  three

    four
b: >2-
    one
  two
c: |
  one
    two
d:
- >
  one

  \ttwo
e: >
  one
  two
f: {g: x}
";
        let got: Vec<(String, u32, usize)> = folded_breaks(text)
            .into_iter()
            .map(|b| (b.field, b.line, b.added))
            .collect();
        assert_eq!(
            got,
            [("a".to_string(), 2, 2), ("d[0]".to_string(), 15, 1)],
            "a more-indented first line, a literal block and a block without such lines are \
             left out"
        );
        assert_eq!(more_indented_runs("one\n  two\n\n  three\nfour\n"), 1);
        assert_eq!(more_indented_runs("  one\ntwo\n"), 0);
        assert!(holds_indented_line(&serde_json::json!({"a": ["x\n\ty"]})));
        assert!(!holds_indented_line(&serde_json::json!({"a": [" x\ny "]})));
        for yes in ["a: >\n", "a: >-\n", "- >2+ # c\n", "a:\t>", "a: x > y"] {
            assert!(may_fold(yes), "{yes:?}");
        }
        for no in [
            "a: |\n",
            "a: x>y\n",
            "a: '>>'\n",
            ">\n",
            "a: >x\n",
            "a: >123\n",
        ] {
            assert!(!may_fold(no), "{no:?}");
        }
    }

    #[test]
    fn words_of_the_text_say_whether_to_look_further() {
        assert_eq!(may_hold("a: yes\n"), (true, false));
        assert_eq!(may_hold("a: [x,tRue]\n"), (false, true));
        // Quoted, in a comment or in prose: no value of its own.
        assert_eq!(may_hold("a: \"on\"\nb: FaLSE # n\n"), (false, true));
        assert_eq!(may_hold("d: runs on a host\n"), (false, false));
        // Wherever a plain value may stand.
        for text in [
            "a: yes\n",
            "- n\n",
            "a: [x, off]\n",
            "a: {b: Y}\n",
            "a: &x no # c\n",
            "a: !t On\n",
            "a:\n  yes\n",
            "? y\n",
            "on",
        ] {
            assert!(may_hold(text).0, "{text:?}");
        }
        assert_eq!(
            may_hold("a: true\nb: yesterday\nc: onward\nd: True\n"),
            (false, false)
        );
    }

    #[test]
    fn quoting_keeps_every_line_and_makes_text() {
        let text = "a: tRue\nb: [yEs, x]\nc: true\n";
        let found = plain_booleans(text);
        let mixed: Vec<&PlainBoolean> = found.iter().filter(|w| w.yaml11.is_none()).collect();
        assert_eq!(quoted(text, &mixed), "a: 'tRue'\nb: ['yEs', x]\nc: true\n");
    }
}

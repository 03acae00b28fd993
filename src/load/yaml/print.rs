//! kvrender's YAML printer: block style, two-space indentation, sequences written at the
//! indentation of their key (the layout of `kubectl get -o yaml`), and a scalar style chosen so
//! that any reader, YAML 1.1 or 1.2, reads back exactly the value that was printed.
//!
//! How a string is written:
//! - **plain** when nothing about it could be misread: not empty, no surrounding whitespace,
//!   no control characters, no leading indicator (`[`, `&`, `"`, `- `, ...), no `: ` or ` #`
//!   inside, not a document marker, and not a spelling that a resolver would turn into
//!   something other than a string (`on`, `no`, `~`, `0644`, `1e3`, `1_000`, `12:30`,
//!   `2024-01-01`, `.inf`, ...);
//! - as a **literal block** (`|`, `|-` or `|+` after how it ends, with an indentation
//!   indicator when its first line starts with a space) when it spans several lines and
//!   holds only characters a block can carry;
//! - **double-quoted** with escapes otherwise. The one-character strings `.`, `#` and `-` are
//!   single-quoted, which reads better.
//!
//! Mapping keys follow the plain rules, and also avoid `:` and the flow indicators `,[]{}`
//! so that a key reads the same in flow context. Long strings are never folded: a value
//! stays on one line, which keeps output greppable and diffs small.
//!
//! Printing is infallible: every JSON value has a YAML spelling.

use std::fmt::Write;

use serde_json::{Map, Value};

/// Indentation step of nested mappings.
const STEP: usize = 2;

/// Print `value` as one YAML document (no leading `---`), ending in a newline.
pub fn document(value: &Value) -> String {
    let mut out = String::with_capacity(1024);
    write_document(&mut out, value);
    out
}

/// Append `value` as one YAML document (no leading `---`), ending in a newline.
pub fn write_document(out: &mut String, value: &Value) {
    match value {
        Value::Object(map) if !map.is_empty() => mapping(out, map, 0, false),
        Value::Array(items) if !items.is_empty() => sequence(out, items, 0, false),
        scalar => {
            inline(out, scalar, STEP);
            out.push('\n');
        }
    }
}

/// `write_document`, also returning where the top-level entry `key` went in `out`, when
/// `value` is a mapping that has one. A top-level mapping prints as its entries one after the
/// other, each the same wherever it stands, so another mapping that differs from `value` only
/// in that entry prints as `out` with the range replaced by [`write_top_level_entry`].
pub fn write_document_marking(
    out: &mut String,
    value: &Value,
    key: &str,
) -> Option<std::ops::Range<usize>> {
    let map = match value {
        Value::Object(map) if !map.is_empty() => map,
        _ => {
            write_document(out, value);
            return None;
        }
    };
    let mut marked = None;
    for (k, v) in map {
        let start = out.len();
        entry(out, k, v, 0);
        if k == key {
            marked = Some(start..out.len());
        }
    }
    marked
}

/// One entry of a top-level mapping, as `write_document` prints it.
pub fn write_top_level_entry(out: &mut String, key: &str, value: &Value) {
    entry(out, key, value, 0);
}

fn indent(out: &mut String, n: usize) {
    const SPACES: &str = "                                                                ";
    let mut n = n;
    while n > 0 {
        let step = n.min(SPACES.len());
        out.push_str(&SPACES[..step]);
        n -= step;
    }
}

/// The entries of a non-empty mapping at column `at`; with `inline_first`, the first entry
/// continues the current line (after a sequence dash).
fn mapping(out: &mut String, map: &Map<String, Value>, at: usize, inline_first: bool) {
    for (i, (key, value)) in map.iter().enumerate() {
        if i > 0 || !inline_first {
            indent(out, at);
        }
        entry(out, key, value, at);
    }
}

/// One mapping entry whose key is already indented to column `at`.
fn entry(out: &mut String, key: &str, value: &Value, at: usize) {
    write_key(out, key);
    out.push(':');
    match value {
        Value::Object(inner) if !inner.is_empty() => {
            out.push('\n');
            mapping(out, inner, at + STEP, false);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            sequence(out, items, at, false);
        }
        scalar => {
            out.push(' ');
            inline(out, scalar, at + STEP);
            out.push('\n');
        }
    }
}

/// The items of a non-empty sequence, dashes at column `at`; with `inline_first`, the first
/// dash continues the current line (a sequence inside a sequence).
fn sequence(out: &mut String, items: &[Value], at: usize, inline_first: bool) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 || !inline_first {
            indent(out, at);
        }
        out.push_str("- ");
        match item {
            Value::Object(inner) if !inner.is_empty() => mapping(out, inner, at + STEP, true),
            Value::Array(inner) if !inner.is_empty() => sequence(out, inner, at + STEP, true),
            scalar => {
                inline(out, scalar, at + STEP);
                out.push('\n');
            }
        }
    }
}

/// A scalar (or an empty collection) that starts on the current line; a literal block's
/// lines go at column `body`. No final newline.
fn inline(out: &mut String, value: &Value, body: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => number(out, n),
        Value::String(s) => string(out, s, body),
        Value::Object(_) => out.push_str("{}"),
        Value::Array(_) => out.push_str("[]"),
    }
}

fn number(out: &mut String, n: &serde_json::Number) {
    if let Some(u) = n.as_u64() {
        decimal(out, u);
    } else if let Some(i) = n.as_i64() {
        out.push('-');
        decimal(out, i.unsigned_abs());
    } else if let Some(f) = n.as_f64() {
        match super::whole_integer(f) {
            Some(whole) => number(out, &whole),
            None => float(out, f),
        }
    }
}

/// The decimal digits of `n`, without the formatting machinery: numbers are most of what a
/// catalog prints besides strings.
fn decimal(out: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &digits[at..] {
        out.push(char::from(d));
    }
}

/// A float that is not a whole number within the range of a 64-bit integer (those print as
/// integers, as JSON prints them) always carries a dot and, with an exponent, its sign (`1.5`,
/// `1.0e+300`): YAML 1.1 readers do not take `1e300` for a number.
fn float(out: &mut String, f: f64) {
    let text = format!("{f:?}");
    let (mantissa, exponent) = match text.split_once('e') {
        Some((m, e)) => (m, Some(e)),
        None => (text.as_str(), None),
    };
    out.push_str(mantissa);
    if !mantissa.contains('.') {
        out.push_str(".0");
    }
    if let Some(e) = exponent {
        out.push('e');
        if !e.starts_with('-') {
            out.push('+');
        }
        out.push_str(e);
    }
}

fn string(out: &mut String, s: &str, body: usize) {
    if plain(s, false) {
        out.push_str(s);
    } else if matches!(s, "." | "#" | "-") {
        out.push('\'');
        out.push_str(s);
        out.push('\'');
    } else if s.contains('\n') && block_safe(s) {
        literal(out, s, body);
    } else {
        double_quoted(out, s);
    }
}

fn write_key(out: &mut String, key: &str) {
    if plain(key, true) {
        out.push_str(key);
    } else {
        double_quoted(out, key);
    }
}

/// A literal block scalar: header, then each line at column `body`. Empty lines stay empty
/// (no trailing spaces).
fn literal(out: &mut String, s: &str, body: usize) {
    out.push('|');
    // The reader takes the block's indentation from its first non-empty line; when that line
    // starts with a space, say the indentation instead.
    if s.split('\n')
        .find(|l| !l.is_empty())
        .is_some_and(|l| l.starts_with(' '))
    {
        let _ = write!(out, "{STEP}");
    }
    let content = s.trim_end_matches('\n');
    let trailing = s.len() - content.len();
    // Clip (`|`) keeps one final line break, strip (`|-`) none, keep (`|+`) all of them; a
    // block of nothing but line breaks needs keep.
    let extra = match (content.is_empty(), trailing) {
        (false, 0) => {
            out.push('-');
            0
        }
        (false, 1) => 0,
        (false, n) => {
            out.push('+');
            n - 1
        }
        (true, n) => {
            out.push('+');
            n
        }
    };
    out.push('\n');
    let lines = if content.is_empty() {
        None
    } else {
        Some(content.split('\n'))
    };
    let lines = lines
        .into_iter()
        .flatten()
        .chain(std::iter::repeat_n("", extra));
    for line in lines {
        if !line.is_empty() {
            indent(out, body);
            out.push_str(line);
        }
        out.push('\n');
    }
    // The caller ends the scalar with a newline; the block already did.
    out.pop();
}

/// Whether a literal block can carry `s` as it is (no escapes exist inside a block): line
/// breaks and tabs are the only control characters it may hold, and none of the characters
/// [`escaped_multibyte`] names. No line may start with a tab or hold only blanks with a tab
/// among them: the Go readers kubectl and kustomize use refuse a block whose first line starts
/// with one ("found a tab character where an indentation space is expected"), so such a
/// string is double-quoted, as they print it.
fn block_safe(s: &str) -> bool {
    let tab_led = |line: &str| {
        line.starts_with('\t') || (line.contains('\t') && line.trim_matches([' ', '\t']).is_empty())
    };
    if memchr::memchr(b'\t', s.as_bytes()).is_some() && s.split('\n').any(tab_led) {
        return false;
    }
    let bytes = s.as_bytes();
    bytes.iter().enumerate().all(|(i, &b)| match b {
        b'\n' | b'\t' => true,
        0x00..=0x1f | 0x7f => false,
        0x80.. => !escaped_multibyte(&bytes[i..]),
        _ => true,
    })
}

/// Whether the UTF-8 sequence starting `bytes` encodes a character that must be escaped:
/// the C1 controls (U+0080 to U+009F, NEL among them), the line and paragraph separators
/// (U+2028, U+2029), the byte order mark (U+FEFF) and the non-characters U+FFFE and U+FFFF.
fn escaped_multibyte(bytes: &[u8]) -> bool {
    matches!(
        bytes,
        [0xc2, 0x80..=0x9f, ..]
            | [0xe2, 0x80, 0xa8 | 0xa9, ..]
            | [0xef, 0xbb, 0xbf, ..]
            | [0xef, 0xbf, 0xbe | 0xbf, ..]
    )
}

/// Whether `c` must be escaped: it cannot appear in a plain or single-quoted scalar.
fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{feff}' | '\u{2028}' | '\u{2029}' | '\u{fffe}' | '\u{ffff}'
        )
}

fn double_quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\0' => out.push_str("\\0"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{b}' => out.push_str("\\v"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '\u{1b}' => out.push_str("\\e"),
            '\u{85}' => out.push_str("\\N"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            '\u{feff}' => out.push_str("\\uFEFF"),
            c if (c as u32) < 0x100 && needs_escape(c) => {
                let _ = write!(out, "\\x{:02X}", c as u32);
            }
            c if needs_escape(c) => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Bytes that need a closer look when scanning a value for plain style: control characters,
/// `:` and `#` (which may start a mapping or a comment) and the lead bytes of multi-byte
/// characters (which may need escaping).
const VALUE_STOPS: [bool; 256] = stops(b":#");
/// The same for a mapping key, which also avoids the flow indicators.
const KEY_STOPS: [bool; 256] = stops(b":#,[]{}");

const fn stops(extra: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = b < 0x20 || b >= 0x7f;
        b += 1;
    }
    let mut i = 0;
    while i < extra.len() {
        table[extra[i] as usize] = true;
        i += 1;
    }
    table
}

/// Whether `s` can be written as a plain scalar: in a block mapping value or sequence item
/// (scanned with [`VALUE_STOPS`]) or, with `key`, as a mapping key ([`KEY_STOPS`]).
fn plain(s: &str, key: bool) -> bool {
    let stops = if key { &KEY_STOPS } else { &VALUE_STOPS };
    let bytes = s.as_bytes();
    let (Some(&first), Some(&last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    if first.is_ascii_whitespace() || last.is_ascii_whitespace() || last == b':' {
        return false;
    }
    match first {
        b',' | b':' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|' | b'>'
        | b'\'' | b'"' | b'%' | b'@' | b'`' => return false,
        b'-' | b'?' if bytes.get(1).is_none_or(u8::is_ascii_whitespace) => return false,
        _ => {}
    }
    // Most strings hold no stop byte at all: a loop without an early exit finds that out
    // faster than the one below.
    if !bytes.iter().fold(false, |any, &b| any | stops[b as usize]) {
        return !document_marker(s) && !resolves_to_non_string(s);
    }
    // One pass over the bytes, looking closer only at the stop bytes: characters that need
    // escapes, `: ` (a mapping inside), `#` after whitespace (a comment), and in keys any
    // `:` or flow indicator.
    for (i, &b) in bytes.iter().enumerate() {
        if !stops[b as usize] {
            continue;
        }
        let unsafe_here = match b {
            0x00..=0x1f | 0x7f => true,
            b':' => key || bytes.get(i + 1) == Some(&b' '),
            b'#' => s[..i].chars().next_back().is_some_and(char::is_whitespace),
            0x80.. => escaped_multibyte(&bytes[i..]),
            _ => true,
        };
        if unsafe_here {
            return false;
        }
    }
    !document_marker(s) && !resolves_to_non_string(s)
}

fn document_marker(s: &str) -> bool {
    (s.starts_with("---") || s.starts_with("..."))
        && s.as_bytes().get(3).is_none_or(u8::is_ascii_whitespace)
}

/// Whether a YAML 1.1 or 1.2 reader would resolve the plain scalar `s` to something other
/// than a string (null, boolean, number, timestamp, merge key) or refuse it. Errs on the
/// side of "yes": a needless quote costs nothing.
fn resolves_to_non_string(s: &str) -> bool {
    const WORDS: [&str; 19] = [
        "null", "true", "false", "yes", "no", "y", "n", "on", "off", "nan", "inf", "+inf", "-inf",
        ".nan", ".inf", "+.inf", "-.inf", "<<", "=",
    ];
    let first = s.as_bytes()[0];
    // Every word starts with one of these bytes (in either case); most strings do not.
    if s.len() <= 5
        && matches!(
            first.to_ascii_lowercase(),
            b'~' | b'n' | b't' | b'f' | b'y' | b'o' | b'i' | b'+' | b'-' | b'.' | b'<' | b'='
        )
        && (s == "~" || WORDS.iter().any(|w| s.eq_ignore_ascii_case(w)))
    {
        return true;
    }
    match first {
        b'0'..=b'9' => number_like(s) || timestamp_like(s),
        b'+' | b'-' | b'.' | b'_' => number_like(s),
        _ => false,
    }
}

/// Integers in any base, floats and base-60 numbers as YAML 1.1 reads them (underscores
/// anywhere among the digits, a dot optional before an exponent), which covers YAML 1.2's.
fn number_like(s: &str) -> bool {
    // Every spelling below is made of these bytes; `2Gi` or `u1.medium` is not.
    if !s.bytes().all(|b| {
        b.is_ascii_hexdigit()
            || matches!(
                b,
                b'x' | b'X' | b'o' | b'O' | b'+' | b'-' | b'.' | b'_' | b':'
            )
    }) {
        return false;
    }
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    if sexagesimal(unsigned) {
        return true;
    }
    let (radix, digits) = match unsigned.as_bytes() {
        [b'0', b'b' | b'B', ..] => (2, &unsigned[2..]),
        [b'0', b'o' | b'O', ..] => (8, &unsigned[2..]),
        [b'0', b'x' | b'X', ..] => (16, &unsigned[2..]),
        _ => (10, ""),
    };
    if radix != 10 {
        // A sign may follow the prefix in some readers (`0b-1`).
        let digits = digits.strip_prefix(['+', '-']).unwrap_or(digits);
        let mut any = false;
        for b in digits.bytes() {
            if b == b'_' {
                continue;
            }
            if !char::from(b).is_digit(radix) {
                return false;
            }
            any = true;
        }
        return any || digits.bytes().any(|b| b == b'_');
    }
    let compact: std::borrow::Cow<'_, str> = if unsigned.contains('_') {
        unsigned
            .chars()
            .filter(|&c| c != '_')
            .collect::<String>()
            .into()
    } else {
        unsigned.into()
    };
    let (mantissa, exponent) = match compact.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e)),
        None => (&*compact, None),
    };
    if let Some(e) = exponent {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        if e.is_empty() || !e.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
    }
    match mantissa.split_once('.') {
        Some((whole, fraction)) => {
            whole.bytes().all(|b| b.is_ascii_digit())
                && fraction.bytes().all(|b| b.is_ascii_digit() || b == b'.')
                && !(whole.is_empty() && fraction.is_empty() && exponent.is_some())
        }
        None => !mantissa.is_empty() && mantissa.bytes().all(|b| b.is_ascii_digit()),
    }
}

/// YAML 1.1 base 60: `190:20:30` or `1:30.5` (the first group has no leading zero unless a
/// fraction follows; the others are one or two digits below 60).
fn sexagesimal(s: &str) -> bool {
    let (whole, fraction) = match s.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (s, None),
    };
    let Some((head, rest)) = whole.split_once(':') else {
        return false;
    };
    let head_ok = head.as_bytes().first().is_some_and(u8::is_ascii_digit)
        && (fraction.is_some() || !head.starts_with('0'))
        && head.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    let rest_ok = rest.split(':').all(|group| match group.as_bytes() {
        [d] => d.is_ascii_digit(),
        [t, d] => (b'0'..=b'5').contains(t) && d.is_ascii_digit(),
        _ => false,
    });
    head_ok
        && rest_ok
        && fraction.is_none_or(|f| f.bytes().all(|b| b.is_ascii_digit() || b == b'_'))
}

/// YAML 1.1 timestamps: `2001-12-14`, `2001-12-14t21:59:43.10-05:00`,
/// `2001-12-14 21:59:43.10 -5` (one-digit fields accepted, as Go's reader does).
fn timestamp_like(s: &str) -> bool {
    let mut rest = s;
    let digits = |min: usize, max: usize, rest: &mut &str| {
        let n = rest.bytes().take_while(u8::is_ascii_digit).count();
        *rest = &rest[n..];
        (min..=max).contains(&n)
    };
    let sep = |c: char, rest: &mut &str| match rest.strip_prefix(c) {
        Some(r) => {
            *rest = r;
            true
        }
        None => false,
    };
    if !(digits(4, 4, &mut rest)
        && sep('-', &mut rest)
        && digits(1, 2, &mut rest)
        && sep('-', &mut rest)
        && digits(1, 2, &mut rest))
    {
        return false;
    }
    if rest.is_empty() {
        return true;
    }
    if let Some(r) = rest.strip_prefix(['T', 't']) {
        rest = r;
    } else {
        let r = rest.trim_start_matches([' ', '\t']);
        if r.len() == rest.len() {
            return false;
        }
        rest = r;
    }
    if !(digits(1, 2, &mut rest)
        && sep(':', &mut rest)
        && digits(1, 2, &mut rest)
        && sep(':', &mut rest)
        && digits(1, 2, &mut rest))
    {
        return false;
    }
    if sep('.', &mut rest) || sep(',', &mut rest) {
        digits(0, usize::MAX, &mut rest);
    }
    rest = rest.trim_start_matches([' ', '\t']);
    if rest.is_empty() || rest == "Z" {
        return true;
    }
    if !(sep('+', &mut rest) || sep('-', &mut rest)) || !digits(1, 2, &mut rest) {
        return false;
    }
    if sep(':', &mut rest) && !digits(2, 2, &mut rest) {
        return false;
    }
    rest.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scalar(s: &str) -> String {
        let mut out = String::new();
        string(&mut out, s, 2);
        out
    }

    #[test]
    fn strings_a_reader_would_retype_are_quoted() {
        for s in [
            "",
            "~",
            "null",
            "NULL",
            "true",
            "False",
            "yes",
            "No",
            "y",
            "N",
            "on",
            "OFF",
            "0644",
            "1e3",
            "1_000",
            "0x1F",
            "0b1_",
            "12:30",
            "190:20:30",
            "1.",
            ".5",
            "+1",
            "-.inf",
            ".NaN",
            "2001-12-14",
            "2001-12-14 21:59:43.10 -5",
            "2001-12-14t21:59:43Z",
            "<<",
            "=",
            "---",
            "... x",
        ] {
            assert!(scalar(s).starts_with('"'), "{s:?} -> {}", scalar(s));
        }
    }

    #[test]
    fn ordinary_strings_stay_plain() {
        for s in [
            "u1.medium",
            "16Gi",
            "2Mi",
            "v1",
            "a:b",
            "http://x/y",
            "a#b",
            "-a",
            "--a",
            "0o",
            "+",
            "12e",
            "0:30",
            "01:30",
            "a,b",
            "a]",
            "...x",
            "a b",
            "é",
            "x:y:z",
        ] {
            assert_eq!(scalar(s), s);
        }
    }

    #[test]
    fn indicators_whitespace_and_controls_force_quotes() {
        assert_eq!(scalar("a: b"), "\"a: b\"");
        assert_eq!(scalar("x:"), "\"x:\"");
        assert_eq!(scalar("a #b"), "\"a #b\"");
        assert_eq!(scalar(" a"), "\" a\"");
        assert_eq!(scalar("- a"), "\"- a\"");
        assert_eq!(scalar("[a"), "\"[a\"");
        assert_eq!(scalar("a\tb"), "\"a\\tb\"");
        assert_eq!(scalar("a\r\nb"), "\"a\\r\\nb\"");
        assert_eq!(scalar("ab\u{7f}"), "\"ab\\x7F\"");
        assert_eq!(scalar("\u{2028}"), "\"\\L\"");
        assert_eq!(scalar("\"\\"), "\"\\\"\\\\\"");
        assert_eq!(scalar("."), "'.'");
        assert_eq!(scalar("-"), "'-'");
    }

    #[test]
    fn multi_line_strings_are_literal_blocks() {
        assert_eq!(scalar("a\nb"), "|-\n  a\n  b");
        assert_eq!(scalar("a\nb\n"), "|\n  a\n  b");
        assert_eq!(scalar("a\n\n"), "|+\n  a\n");
        assert_eq!(scalar("\n"), "|+\n");
        assert_eq!(scalar(" a\nb"), "|2-\n   a\n  b");
        assert_eq!(scalar("\n  a"), "|2-\n\n    a");
        assert_eq!(scalar("a\n\nb"), "|-\n  a\n\n  b");
        assert_eq!(scalar("a\r\nb"), "\"a\\r\\nb\"");
        // A tab inside a line is content; one that leads a line, or a blank line holding one,
        // is not something kubectl's and kustomize's readers take in a block.
        assert_eq!(scalar("a\tb\nc"), "|-\n  a\tb\n  c");
        assert_eq!(scalar("\tx\ny\n"), "\"\\tx\\ny\\n\"");
        assert_eq!(scalar("x\n\ty"), "\"x\\n\\ty\"");
        assert_eq!(scalar("x\n \t\ny"), "\"x\\n \\t\\ny\"");
    }

    #[test]
    fn keys_also_avoid_colons_and_flow_indicators() {
        let v = json!({"a b": 1, "a:b": 2, "a,b": 3, "on": 4, "1": 5, "<<": 6, "-a": 7});
        assert_eq!(
            document(&v),
            "a b: 1\n\"a:b\": 2\n\"a,b\": 3\n\"on\": 4\n\"1\": 5\n\"<<\": 6\n-a: 7\n"
        );
    }

    #[test]
    fn layout_matches_kubectl() {
        let v = json!({
            "a": [[1, 2], [{"c": "x\ny"}], {"x": 1, "y": []}, {}, null, 1.5, 1e300, 100.0],
            "b": {"c": {}, "d": "s"},
        });
        assert_eq!(
            document(&v),
            "a:\n- - 1\n  - 2\n- - c: |-\n      x\n      y\n- x: 1\n  \"y\": []\n- {}\n- null\n\
             - 1.5\n- 1.0e+300\n- 100\nb:\n  c: {}\n  d: s\n"
        );
        assert_eq!(document(&json!("x")), "x\n");
        assert_eq!(document(&json!({})), "{}\n");
    }
}

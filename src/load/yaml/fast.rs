//! A quick reader for the block YAML that Kubernetes manifests are written in.
//!
//! It reads block mappings and sequences, one-line plain and quoted scalars, literal and folded
//! block scalars and one-line flow collections, and answers `None` for anything else: anchors,
//! aliases, tags, multi-line plain, quoted or flow scalars, tabs, carriage returns, non-ASCII
//! text, plain scalars whose type it cannot resolve exactly as serde-saphyr does (`yes`, `01`,
//! `1.5`, `0x1F`, ...), duplicate keys, nesting deeper than [`MAX_DEPTH`]. A `None` sends the
//! document to serde-saphyr, which also reports every error, so a document reads the same
//! whichever path it takes; `tests::agrees_with_serde_saphyr` and the property test in
//! `tests/it` hold the two to that.

use serde_json::{Map, Number, Value};

/// Deeper documents go to the full parser, which enforces the real limit.
const MAX_DEPTH: usize = 100;

/// Keys longer than this (with their quotes and colon, in bytes) go to the full parser.
const MAX_KEY: usize = 1000;

/// Read one document, or `None` when it needs the full parser (or is not a mapping: a list or a
/// scalar where an object belongs is for the full parser to report).
pub fn parse(text: &str) -> Option<Value> {
    parse_any(text).filter(Value::is_object)
}

/// Read one document whose top-level node is a mapping or a sequence (the text of an item of a
/// list, say), or `None` when it needs the full parser.
pub fn parse_any(text: &str) -> Option<Value> {
    // A text too short to hold more than the full parser's budget of values (each takes at
    // least one character and a separator): a longer one meets that budget, and its message,
    // whatever its shape.
    if text.len() > super::MAX_NODES {
        return None;
    }
    // Printable ASCII and line feeds only: no tabs, carriage returns, byte order marks or
    // Unicode line breaks to think about.
    // (Folded without an early exit, which the compiler turns into vector instructions.)
    if !text.bytes().fold(true, |ok, b| {
        ok & ((b == b'\n') | (0x20..0x7f).contains(&b))
    }) {
        return None;
    }
    let lines = split_lines(text);
    let reader = Reader { lines };
    let mut first = reader.next_content(0);
    if let Some(rest) = reader.lines.get(first).and_then(|l| l.strip_prefix("---")) {
        if !is_blank_or_comment(rest) || !(rest.is_empty() || rest.starts_with(' ')) {
            return None;
        }
        first = reader.next_content(first + 1);
    }
    if first >= reader.lines.len() {
        return None;
    }
    let col = indent(reader.lines[first]);
    let (value, next) = reader.node(first, col, 0)?;
    (next >= reader.lines.len() && (value.is_object() || value.is_array())).then_some(value)
}

/// `text` split at every line feed, as `text.split('\n')` would, but found with `memchr`:
/// the standard splitter costs more per line than most lines are long.
fn split_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::with_capacity(text.len() / 32 + 1);
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', text.as_bytes()) {
        lines.push(&text[start..end]);
        start = end + 1;
    }
    lines.push(&text[start..]);
    lines
}

struct Reader<'a> {
    lines: Vec<&'a str>,
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_blank_or_comment(s: &str) -> bool {
    let t = s.trim_start_matches(' ');
    t.is_empty() || t.starts_with('#')
}

fn is_dash(content: &str) -> bool {
    content == "-" || content.starts_with("- ")
}

/// What is left after a scalar or flow collection must be nothing or a comment.
fn only_comment(rest: &str) -> bool {
    rest.is_empty() || (rest.starts_with(' ') && is_blank_or_comment(rest))
}

/// A plain scalar's text on one line: up to a comment, without trailing blanks.
fn strip_comment(s: &str) -> &str {
    let cut = comment_start(s).unwrap_or(s.len());
    s[..cut].trim_end_matches(' ')
}

/// Where ` #` first occurs in `s`.
fn comment_start(s: &str) -> Option<usize> {
    find_pair(s.as_bytes(), b' ', b'#')
}

/// Whether `: ` occurs in `s`.
fn has_colon_space(s: &str) -> bool {
    find_pair(s.as_bytes(), b':', b' ').is_some()
}

/// Where the two bytes `first` `second` first occur together in `bytes`. Most scalars are
/// shorter than what a search costs to set up, so they are scanned byte by byte; longer ones
/// are searched with `memchr` for the byte of the pair that is not a space, the rarer one.
fn find_pair(bytes: &[u8], first: u8, second: u8) -> Option<usize> {
    const SHORT: usize = 48;
    if bytes.len() < SHORT {
        return bytes
            .windows(2)
            .position(|w| w[0] == first && w[1] == second);
    }
    if first == b' ' {
        memchr::memchr_iter(second, bytes)
            .find(|&i| i > 0 && bytes[i - 1] == first)
            .map(|i| i - 1)
    } else {
        memchr::memchr_iter(first, bytes).find(|&i| bytes.get(i + 1) == Some(&second))
    }
}

impl<'a> Reader<'a> {
    /// The first line at or after `from` with content (not blank, not a comment).
    fn next_content(&self, mut from: usize) -> usize {
        while from < self.lines.len() && is_blank_or_comment(self.lines[from]) {
            from += 1;
        }
        from
    }

    /// The block node whose first line is `idx`, its content starting at column `col`.
    /// Returns the node and the next content line after it.
    fn node(&self, idx: usize, col: usize, depth: usize) -> Option<(Value, usize)> {
        if depth > MAX_DEPTH {
            return None;
        }
        let content = &self.lines[idx][col..];
        if is_dash(content) {
            self.sequence(idx, col, depth)
        } else if split_key(content).is_some() {
            self.mapping(idx, col, depth)
        } else {
            None
        }
    }

    fn sequence(&self, mut idx: usize, col: usize, depth: usize) -> Option<(Value, usize)> {
        let mut items = Vec::new();
        loop {
            let content = &self.lines[idx][col..];
            let rest = &content[1..];
            let after = rest.trim_start_matches(' ');
            let (item, next) = if is_blank_or_comment(rest) {
                let j = self.next_content(idx + 1);
                if j < self.lines.len() && indent(self.lines[j]) > col {
                    self.node(j, indent(self.lines[j]), depth + 1)?
                } else {
                    (Value::Null, j)
                }
            } else {
                let item_col = col + 1 + (rest.len() - after.len());
                self.entry(idx, item_col, col, depth + 1)?
            };
            items.push(item);
            if next >= self.lines.len() {
                return Some((Value::Array(items), next));
            }
            let line = self.lines[next];
            let ind = indent(line);
            if ind > col {
                return None;
            }
            if ind < col || !is_dash(&line[col..]) {
                return Some((Value::Array(items), next));
            }
            idx = next;
        }
    }

    /// A sequence item that starts on the dash's line: a nested block node or a value.
    fn entry(&self, idx: usize, col: usize, parent: usize, depth: usize) -> Option<(Value, usize)> {
        let content = &self.lines[idx][col..];
        if is_dash(content) || split_key(content).is_some() {
            self.node(idx, col, depth)
        } else {
            self.value(idx, col, parent, depth)
        }
    }

    fn mapping(&self, mut idx: usize, col: usize, depth: usize) -> Option<(Value, usize)> {
        let mut map = Map::new();
        loop {
            let content = &self.lines[idx][col..];
            let (key, rest) = split_key(content)?;
            let (value, next) = if is_blank_or_comment(rest) {
                let j = self.next_content(idx + 1);
                if j >= self.lines.len() {
                    (Value::Null, j)
                } else {
                    let line = self.lines[j];
                    let ind = indent(line);
                    if ind > col {
                        self.node(j, ind, depth + 1)?
                    } else if ind == col && is_dash(&line[col..]) {
                        self.sequence(j, col, depth + 1)?
                    } else {
                        (Value::Null, j)
                    }
                }
            } else {
                let value_col = col + (content.len() - rest.trim_start_matches(' ').len());
                self.value(idx, value_col, col, depth + 1)?
            };
            if map.insert(key, value).is_some() {
                return None;
            }
            if next >= self.lines.len() {
                return Some((Value::Object(map), next));
            }
            let line = self.lines[next];
            let ind = indent(line);
            if ind < col {
                return Some((Value::Object(map), next));
            }
            if ind > col || is_dash(&line[col..]) {
                return None;
            }
            idx = next;
        }
    }

    /// A value that starts at column `col` of line `idx`, inside a node indented by `parent`:
    /// a scalar, a flow collection or a block scalar.
    fn value(&self, idx: usize, col: usize, parent: usize, depth: usize) -> Option<(Value, usize)> {
        if depth > MAX_DEPTH {
            return None;
        }
        let s = &self.lines[idx][col..];
        let value = match s.as_bytes()[0] {
            b'"' | b'\'' => {
                let (text, rest) = quoted(s)?;
                only_comment(rest).then_some(Value::String(text))?
            }
            b'[' | b'{' => {
                let (value, rest) = flow(s, depth)?;
                only_comment(rest).then_some(value)?
            }
            b'|' | b'>' => return self.block_scalar(idx, s, parent),
            _ => {
                let text = strip_comment(s);
                if has_colon_space(text) || text.ends_with(':') {
                    return None;
                }
                plain(text)?
            }
        };
        Some((value, self.next_content(idx + 1)))
    }

    /// A literal (`|`, `|-`) or folded (`>`, `>-`) block scalar whose header is `header` on
    /// line `idx`; its lines must be indented deeper than `parent`.
    fn block_scalar(&self, idx: usize, header: &str, parent: usize) -> Option<(Value, usize)> {
        let (folded, strip) = match strip_comment(header) {
            "|" => (false, false),
            "|-" => (false, true),
            ">" => (true, false),
            ">-" => (true, true),
            _ => return None,
        };
        let blank = |line: &str| line.bytes().all(|b| b == b' ');
        // Leading blank lines, then the first line with text sets the indentation.
        let mut j = idx + 1;
        while j < self.lines.len() && blank(self.lines[j]) {
            if !self.lines[j].is_empty() {
                return None;
            }
            j += 1;
        }
        let leading = j - idx - 1;
        if j >= self.lines.len() || indent(self.lines[j]) <= parent {
            // Empty content.
            return (leading == 0).then(|| (Value::String(String::new()), self.next_content(j)));
        }
        let width = indent(self.lines[j]);
        if folded && leading > 0 {
            return None;
        }
        let mut body: Vec<&str> = vec![""; leading];
        while j < self.lines.len() {
            let line = self.lines[j];
            if blank(line) {
                if line.len() > width {
                    return None;
                }
                body.push("");
            } else if indent(line) >= width {
                let text = &line[width..];
                if folded && text.starts_with(' ') {
                    return None;
                }
                body.push(text);
            } else {
                break;
            }
            j += 1;
        }
        // The split at '\n' leaves an empty last line for text ending in a line feed; it is
        // not a line of the scalar.
        if j >= self.lines.len() && body.last() == Some(&"") {
            body.pop();
        }
        while body.last() == Some(&"") {
            body.pop();
        }
        let mut out = String::new();
        let mut blanks = 0usize;
        for (i, line) in body.iter().enumerate() {
            if line.is_empty() {
                if folded {
                    blanks += 1;
                } else {
                    out.push('\n');
                }
                continue;
            }
            if folded && i > 0 {
                if blanks == 0 {
                    out.push(' ');
                } else {
                    out.extend(std::iter::repeat_n('\n', blanks));
                }
            }
            blanks = 0;
            out.push_str(line);
            if !folded {
                out.push('\n');
            }
        }
        if strip {
            out.truncate(out.trim_end_matches('\n').len());
        } else if folded && !out.is_empty() {
            out.push('\n');
        }
        Some((Value::String(out), self.next_content(j)))
    }
}

/// `key: rest` → (key, rest after the colon), for plain and quoted keys.
fn split_key(content: &str) -> Option<(String, &str)> {
    let bytes = content.as_bytes();
    let (key, after) = match bytes.first()? {
        b'"' | b'\'' => {
            let (key, rest) = quoted(content)?;
            (key, rest.strip_prefix(':')?)
        }
        b if b.is_ascii_alphanumeric() || *b == b'_' || *b == b'/' => {
            // The key ends at the first `:` followed by a blank or the end of the line. Keys are
            // short: one pass over their bytes, which also notes a ` #` (a comment) in them.
            let mut comment = false;
            let mut colon = None;
            for (j, &c) in bytes.iter().enumerate() {
                match c {
                    b':' if bytes.get(j + 1).is_none_or(|&n| n == b' ') => {
                        colon = Some(j);
                        break;
                    }
                    b'#' if j > 0 && bytes[j - 1] == b' ' => comment = true,
                    _ => {}
                }
            }
            let colon = colon?;
            let key = content[..colon].trim_end_matches(' ');
            if comment || key.eq_ignore_ascii_case("null") {
                return None;
            }
            (key.to_string(), &content[colon + 1..])
        }
        _ => return None,
    };
    // A YAML implicit key is at most 1024 characters long; longer ones, and those near the
    // limit, go to the full parser, which refuses them where the spec says.
    if content.len() - after.len() > MAX_KEY {
        return None;
    }
    (after.is_empty() || after.starts_with(' ')).then_some((key, after))
}

/// A quoted scalar at the start of `s` (which starts with its quote), and what follows it.
fn quoted(s: &str) -> Option<(String, &str)> {
    let quote = s.as_bytes()[0];
    let body = &s[1..];
    let mut out = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' if quote == b'\'' => {
                if body[i + 1..].starts_with('\'') {
                    out.push('\'');
                    chars.next();
                } else {
                    return Some((out, &body[i + 1..]));
                }
            }
            '"' if quote == b'"' => return Some((out, &body[i + 1..])),
            '\\' if quote == b'"' => {
                let (_, e) = chars.next()?;
                out.push(match e {
                    '"' => '"',
                    '\\' => '\\',
                    '/' => '/',
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    ' ' => ' ',
                    _ => return None,
                });
            }
            c => out.push(c),
        }
    }
    None
}

/// A one-line flow collection at the start of `s`, and what follows it.
fn flow(s: &str, depth: usize) -> Option<(Value, &str)> {
    if depth > MAX_DEPTH {
        return None;
    }
    let close = if s.starts_with('[') { ']' } else { '}' };
    let mut rest = s[1..].trim_start_matches(' ');
    let mut seq = Vec::new();
    let mut map = Map::new();
    if let Some(after) = rest.strip_prefix(close) {
        return Some((collection(close, seq, map), after));
    }
    loop {
        if close == ']' {
            let (item, after) = flow_item(rest, depth)?;
            seq.push(item);
            rest = after;
        } else {
            let (key, after) = match rest.as_bytes().first()? {
                b'"' | b'\'' => quoted(rest)?,
                _ => {
                    let (text, after) = flow_plain(rest);
                    match plain(text)? {
                        Value::String(key) => (key, after),
                        _ => return None,
                    }
                }
            };
            let after = after.strip_prefix(": ")?.trim_start_matches(' ');
            let (value, after) = flow_item(after, depth)?;
            if map.insert(key, value).is_some() {
                return None;
            }
            rest = after;
        }
        rest = rest.trim_start_matches(' ');
        if let Some(after) = rest.strip_prefix(close) {
            return Some((collection(close, seq, map), after));
        }
        rest = rest.strip_prefix(',')?.trim_start_matches(' ');
        if rest.starts_with([']', '}']) {
            return None;
        }
    }
}

fn collection(close: char, seq: Vec<Value>, map: Map<String, Value>) -> Value {
    if close == ']' {
        Value::Array(seq)
    } else {
        Value::Object(map)
    }
}

fn flow_item(s: &str, depth: usize) -> Option<(Value, &str)> {
    match s.as_bytes().first()? {
        b'"' | b'\'' => quoted(s).map(|(text, rest)| (Value::String(text), rest)),
        b'[' | b'{' => flow(s, depth + 1),
        _ => {
            let (text, rest) = flow_plain(s);
            if rest.starts_with([':', '#']) {
                return None;
            }
            Some((plain(text)?, rest))
        }
    }
}

/// A plain scalar inside a flow collection: up to the next indicator.
fn flow_plain(s: &str) -> (&str, &str) {
    let end = s
        .find([',', '[', ']', '{', '}', ':', '#'])
        .unwrap_or(s.len());
    (s[..end].trim_end_matches(' '), &s[end..])
}

/// Quantity suffixes: `1Gi`, `512Mi`, `100m` are strings to any YAML reader.
const SUFFIXES: &[&str] = &[
    "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u", "m", "k", "M", "G", "T", "P", "E",
];

/// Resolve a plain scalar, or `None` when its type takes more than these rules.
fn plain(text: &str) -> Option<Value> {
    let b = text.as_bytes();
    let first = *b.first()?;
    if first.is_ascii_alphabetic() || first == b'_' || first == b'/' {
        if b.len() <= 8 {
            match text {
                "true" => return Some(Value::Bool(true)),
                "false" => return Some(Value::Bool(false)),
                "null" => return Some(Value::Null),
                _ => {}
            }
            const RETYPED: [&str; 12] = [
                "y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf",
                "infinity",
            ];
            if RETYPED.iter().any(|w| w.eq_ignore_ascii_case(text)) {
                return None;
            }
        }
        return Some(Value::String(text.to_string()));
    }
    let digits = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    if first.is_ascii_digit() {
        if digits(b) {
            if b.len() == 1 || (first != b'0' && b.len() <= 18) {
                return text.parse::<u64>().ok().map(|n| Value::Number(n.into()));
            }
            return None;
        }
        // Letters and digits with a letter no number notation uses (`2xlarge`, `1Gi`):
        // a string in every base and float syntax.
        if b.iter().all(u8::is_ascii_alphanumeric)
            && b.iter()
                .any(|c| c.is_ascii_alphabetic() && !b"abcdefABCDEFxXoObBeE".contains(c))
        {
            return Some(Value::String(text.to_string()));
        }
        // A quantity: digits, an optional fraction, a known suffix.
        let int_end = b
            .iter()
            .position(|c| !c.is_ascii_digit())
            .unwrap_or(b.len());
        let mut end = int_end;
        if b[end] == b'.' {
            let frac = b[end + 1..]
                .iter()
                .position(|c| !c.is_ascii_digit())
                .unwrap_or(b.len() - end - 1);
            if frac == 0 {
                return None;
            }
            end += 1 + frac;
        }
        return SUFFIXES
            .contains(&&text[end..])
            .then(|| Value::String(text.to_string()));
    }
    if first == b'-' && b.len() <= 19 && b.len() > 1 && b[1] != b'0' && digits(&b[1..]) {
        return text
            .parse::<i64>()
            .ok()
            .map(|n| Value::Number(Number::from(n)));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(text: &str) -> Value {
        serde_saphyr::from_str_with_options::<Value>(text, super::super::options())
            .expect("the full parser reads the case")
    }

    /// Each case either goes to the full parser or reads exactly as it does.
    #[test]
    fn agrees_with_serde_saphyr() {
        let cases = [
            "a: 1\nb: -7\nc: 0\nd: true\ne: false\nf: null\ng:\n",
            "h: ~\n",
            "a: 1Gi\nb: 512Mi\nc: 100m\nd: 1.5Gi\ne: 2E\nf: 0Gi\ni: 2xlarge\nj: 8xmedium\nk: 1k\nl: 3Dz\n",
            "a: 0o17\n",
            "a: 1e3\n",
            "a: 0xFFh\n",
            "a: 12ab\n",
            "g: 1e\nh: 1.5\n",
            "a: 01\nb: 0x1F\nc: yes\nd: No\ne: ON\nf: nan\ng: 1_000\nh: 12:30\n",
            "k: hello world # comment\nl: a#b\nm: /dev/sda\nn: kubevirt.io/v1\n",
            "k: 'it''s'\nl: \"a\\tb\\\"c\"\nm: ''\nn: \"\"\n",
            "k: |\n  a\n  b\n",
            "k: |-\n  a\n\n  b\n\n\nl: 1\n",
            "k: |\n\n  a\n   b\nl: x\n",
            "k: >-\n  a\n  b\n\n  c\n",
            "k: >\n  a\n  b\n\n\n  c\n",
            "k: >\n  a\n   b\n  c\n",
            "k: |\n  a",
            "k: |\nl: 1\n",
            "k: [a, 1, 'b', \"c\"]\nl: {a: 1, b: [x, {w: z}]}\nm: []\nn: {}\n",
            "k: [a, ]\n",
            "k: {a: 1, a: 2}\n",
            "a: 1\na: 2\n",
            "---\na:\n- b\n- c: d\n  e: f\n-\n  - g\n- - h\n  - i\n",
            "--- # start\na:\n  - 1\n  - x: w\n",
            "--- a\n",
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "a:\n  b\n",
            "a: b\n  c\n",
            "\"quoted key\": 1\n'single': 2\n",
            "1: a\ntrue: b\n",
            "null: a\n",
            "a b: c d\n",
            "a: b: c\n",
            "- a\n- b\n",
            "scalar\n",
            "a:\n\tb: 1\n",
            "a: caf\u{e9}\n",
            "a: b\r\n",
            "# only a comment\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels: {app: v}\ndata:\n  k: |\n    line one\n\n    line three\n",
            "a:\n  - b: 1\n    c:\n      - d\n  - e\n",
            "a: [1, [2, [3]]]\n",
            "a: {b: {c: {}}}\n",
            "a: -0\nb: +1\nc: -12\nd: 18446744073709551616\n",
        ];
        let mut fast = 0;
        for case in cases {
            if let Some(v) = parse(case) {
                fast += 1;
                assert_eq!(v, full(case), "{case:?}");
            }
        }
        assert!(fast >= 20, "only {fast} cases took the quick path");
        // The same documents as items of a list, as a ResourceList's items are cut out.
        let mut fast = 0;
        for case in cases {
            let item: String = case
                .split_inclusive('\n')
                .enumerate()
                .map(|(i, line)| {
                    let lead = if i == 0 {
                        "- "
                    } else if line == "\n" {
                        ""
                    } else {
                        "  "
                    };
                    format!("{lead}{line}")
                })
                .collect();
            for text in [case, item.as_str()] {
                if let Some(v) = parse_any(text) {
                    fast += 1;
                    assert_eq!(v, full(text), "{text:?}");
                }
            }
        }
        assert!(fast >= 40, "only {fast} cases took the quick path");
    }

    #[test]
    fn leaves_odd_documents_to_the_full_parser() {
        for case in [
            "a: yes\n",
            "a: 01\n",
            "a: 1.5\n",
            "a: &x 1\n",
            "a: *x\n",
            "a: !t 1\n",
            "a: b\n  c\n",
            "a: \"b\n  c\"\n",
            "a: [b,\n  c]\n",
            "- a\n",
            "a: 1\na: 2\n",
            "a:\tb\n",
            "a: b\r\n",
            "? a\n: b\n",
            "a: |+\n  b\n",
            "a: |2\n  b\n",
            "a: >\n\n  b\n",
            "--- a\n",
            "null: a\n",
            "a: x\n...\n",
        ] {
            assert_eq!(parse(case), None, "{case:?}");
        }
    }

    #[test]
    fn keys_past_the_implicit_key_limit_go_to_the_full_parser() {
        // YAML limits an implicit key to 1024 characters: serde-saphyr refuses a longer one.
        let long = format!("{}: b\n", "a".repeat(1500));
        assert_eq!(parse(&long), None);
        assert!(parse_document_full_refuses(&long));
        let quoted = format!("\"{}\": b\n", "a".repeat(1500));
        assert_eq!(parse(&quoted), None);
        let short = format!("{}: b\n", "a".repeat(900));
        assert_eq!(parse(&short), Some(full(&short)));
    }

    fn parse_document_full_refuses(text: &str) -> bool {
        super::super::parse_document_full(text).is_err()
    }

    #[test]
    fn nesting_past_the_limit_goes_to_the_full_parser() {
        let mut doc = String::new();
        for depth in 0..=MAX_DEPTH + 1 {
            doc.push_str(&" ".repeat(depth));
            doc.push_str("a:\n");
        }
        assert_eq!(parse(&doc), None);
        let flow = format!(
            "a: {}{}\n",
            "[".repeat(MAX_DEPTH + 2),
            "]".repeat(MAX_DEPTH + 2)
        );
        assert_eq!(parse(&flow), None);
    }

    /// Every document of the repository's test data and catalog reads the same on both paths;
    /// the full parser never rejects what the quick one accepts.
    #[test]
    fn agrees_on_every_document_in_the_repository() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let (mut quick, mut total) = (0usize, 0usize);
        let mut catalog_slow = Vec::new();
        for dir in ["testdata", "catalog"] {
            for entry in walkdir::WalkDir::new(root.join(dir)).sort_by_file_name() {
                let entry = entry.expect("walk");
                let path = entry.path();
                if !entry.file_type().is_file()
                    || !matches!(
                        path.extension().and_then(|e| e.to_str()),
                        Some("yaml" | "yml")
                    )
                {
                    continue;
                }
                let Ok(text) = std::fs::read_to_string(path) else {
                    continue;
                };
                for chunk in crate::load::split::split(&text) {
                    total += 1;
                    let Some(value) = parse(chunk.text) else {
                        if dir == "catalog" {
                            catalog_slow.push(format!("{}:{}", path.display(), chunk.first_line));
                        }
                        continue;
                    };
                    quick += 1;
                    let full = serde_saphyr::from_str_with_options::<Value>(
                        chunk.text,
                        super::super::options(),
                    );
                    match full {
                        Ok(full) => {
                            assert_eq!(value, full, "{}:{}", path.display(), chunk.first_line)
                        }
                        Err(e) => panic!(
                            "{}:{}: only the quick path reads it: {e}",
                            path.display(),
                            chunk.first_line
                        ),
                    }
                }
            }
        }
        eprintln!("{quick} of {total} documents took the quick path");
        assert!(
            catalog_slow.is_empty(),
            "catalog documents the quick path leaves: {catalog_slow:?}"
        );
        assert!(
            quick * 2 > total,
            "only {quick} of {total} documents took the quick path"
        );
    }

    /// Plain scalars that YAML readers resolve in many different ways.
    const WORDS: &[&str] = &[
        "a",
        "abc def",
        "y",
        "Y",
        "yes",
        "No",
        "on",
        "OFF",
        "true",
        "True",
        "false",
        "null",
        "NULL",
        "~",
        "0",
        "7",
        "01",
        "-1",
        "-0",
        "+1",
        "1.5",
        "1e3",
        "1E3",
        "1e",
        "2E",
        "0x1F",
        "0o17",
        "0b1",
        "1_000",
        "12:30",
        "2023-01-01",
        "1Gi",
        "1.5Gi",
        "100m",
        "2xlarge",
        "nan",
        ".inf",
        "inf",
        "a#b",
        "a #b",
        "a: b",
        "a:b",
        "http://x/y",
        "-a",
        "- a",
        "?a",
        "@a",
        "%a",
        "&a",
        "*a",
        "!a",
        "|",
        ">",
        "[a]",
        "{a: b}",
        "a,b",
        "a]b",
        "'x'",
        "\"x\"",
        "a\\b",
        "9223372036854775808",
        "18446744073709551616",
        "_x",
        "/x",
        ".x",
        "e",
        "E5",
        "0.",
        "00",
        "1__2",
        "0xFFh",
        "3Dz",
        "x ",
        "a  b",
        "#",
        "a:",
        "12ab",
    ];

    /// A small deterministic generator of YAML text, driven by one seed.
    struct Gen(u64);

    impl Gen {
        fn next(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }

        fn scalar(&mut self) -> String {
            let w = WORDS[self.next(WORDS.len())];
            match self.next(4) {
                0 => format!("'{}'", w.replace('\'', "''")),
                1 => format!("\"{}\"", w.replace('\\', "\\\\").replace('"', "\\\"")),
                _ => w.to_string(),
            }
        }

        fn key(&mut self) -> String {
            let keys = [
                "a", "b", "c d", "e.f/g", "1", "true", "yes", "null", "'q'", "\"r\"",
            ];
            keys[self.next(keys.len())].to_string()
        }

        fn flow(&mut self, depth: usize) -> String {
            let n = self.next(3);
            let items: Vec<String> = (0..n)
                .map(|_| {
                    if depth < 2 && self.next(4) == 0 {
                        self.flow(depth + 1)
                    } else {
                        self.scalar()
                    }
                })
                .collect();
            if self.next(2) == 0 {
                format!("[{}]", items.join(", "))
            } else {
                let pairs: Vec<String> = items
                    .iter()
                    .map(|v| format!("{}: {v}", self.key()))
                    .collect();
                format!("{{{}}}", pairs.join(", "))
            }
        }

        fn block_scalar(&mut self, indent: usize, out: &mut String) {
            let headers = ["|", "|-", ">", ">-", "|+", "|2"];
            out.push_str(headers[self.next(headers.len())]);
            out.push('\n');
            for _ in 0..self.next(4) {
                match self.next(5) {
                    0 => out.push('\n'),
                    1 => {
                        out.push_str(&" ".repeat(indent + 4));
                        out.push_str(WORDS[self.next(WORDS.len())]);
                        out.push('\n');
                    }
                    _ => {
                        out.push_str(&" ".repeat(indent + 2));
                        out.push_str(WORDS[self.next(WORDS.len())]);
                        out.push('\n');
                    }
                }
            }
        }

        /// A value after `key: ` or `- `, ending with its line break.
        fn value(&mut self, indent: usize, depth: usize, out: &mut String) {
            match self.next(if depth < 3 { 7 } else { 4 }) {
                0 | 1 => {
                    out.push_str(&self.scalar());
                    out.push('\n');
                }
                2 => {
                    let f = self.flow(0);
                    out.push_str(&f);
                    out.push('\n');
                }
                3 => self.block_scalar(indent, out),
                4 => {
                    out.push('\n');
                    self.mapping(indent + 2, depth + 1, out);
                }
                5 => {
                    out.push('\n');
                    let at = if self.next(2) == 0 {
                        indent
                    } else {
                        indent + 2
                    };
                    self.sequence(at, depth + 1, out);
                }
                _ => {
                    out.push_str("# note\n");
                    self.mapping(indent + 2, depth + 1, out);
                }
            }
        }

        fn mapping(&mut self, indent: usize, depth: usize, out: &mut String) {
            for i in 0..=self.next(3) {
                if i > 0 || !out.ends_with(": ") {
                    out.push_str(&" ".repeat(indent));
                }
                let k = self.key();
                out.push_str(&k);
                out.push_str(": ");
                self.value(indent, depth, out);
            }
        }

        fn sequence(&mut self, indent: usize, depth: usize, out: &mut String) {
            for _ in 0..=self.next(3) {
                out.push_str(&" ".repeat(indent));
                out.push_str("- ");
                if depth < 3 && self.next(3) == 0 {
                    let k = self.key();
                    out.push_str(&k);
                    out.push_str(": ");
                    self.value(indent + 2, depth + 1, out);
                } else {
                    self.value(indent, depth, out);
                }
            }
        }
    }

    proptest::proptest! {
        /// The byte searches find what a substring search finds.
        #[test]
        fn pair_searches_match_substring_search(s in "[ #:a]{0,12}|[ #:a]{40,120}") {
            proptest::prop_assert_eq!(comment_start(&s), s.find(" #"));
            proptest::prop_assert_eq!(has_colon_space(&s), s.contains(": "));
        }

        /// Lines are split exactly as `str::split` splits them.
        #[test]
        fn lines_split_as_str_split_does(s in "[a\n]{0,12}") {
            proptest::prop_assert_eq!(split_lines(&s), s.split('\n').collect::<Vec<_>>());
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// On generated documents full of ambiguous scalars, the quick path reads exactly what
        /// the full parser reads, or leaves the document to it.
        #[test]
        fn generated_documents_read_the_same(seed in 1u64..) {
            let mut g = Gen(seed);
            let mut doc = String::new();
            if g.next(3) == 0 {
                doc.push_str("---\n");
            }
            g.mapping(0, 0, &mut doc);
            if let Some(value) = parse(&doc) {
                let full = serde_saphyr::from_str_with_options::<Value>(&doc, super::super::options());
                proptest::prop_assert_eq!(full.ok(), Some(value), "{}", doc);
            }
        }
    }
}

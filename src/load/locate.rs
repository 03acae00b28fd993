//! Finding the line of a field inside a document's text, for diagnostics and for rendered
//! objects that point at the size row or template leaf they came from.
//!
//! The YAML layer gives us value trees without spans, so we walk the source text instead:
//! block mappings and block sequences are matched by indentation, each key searched only among
//! the entries of its parent. Flow collections (`{a: 1}`, `[a, 1]`) are not entered; the
//! search then stops at the deepest line it found. The lines that continue a flow collection,
//! a quoted scalar or a block scalar are no entries of the block collection around them. This
//! is a best-effort locator: it never fails, at worst it answers the line of the deepest
//! ancestor, or the document's first line.

use foldhash::HashMap;

/// One step of a path into a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    /// A mapping key.
    Key(&'a str),
    /// A position in a sequence.
    Index(usize),
}

struct Line<'t> {
    indent: usize,
    text: &'t str,
}

fn classify(raw: &str) -> Option<Line<'_>> {
    let trimmed = raw.trim_start_matches(' ');
    let text = trimmed.trim_end();
    if text.is_empty() || text.starts_with('#') {
        return None;
    }
    Some(Line {
        indent: raw.len() - trimmed.len(),
        text,
    })
}

/// What one line of a block collection leaves open for the lines after it: a flow collection
/// (`{`, `[`) or a quoted scalar written over several lines, or a block scalar (`|`, `>`)
/// whose text follows. Lines that continue one are no entries of the block collection, even
/// where their indentation says so (`- {` ... `}` with the `}` in the dash's column).
#[derive(Default)]
struct Carry {
    /// How many flow collections are open.
    depth: usize,
    /// The quote of a quoted scalar that is open.
    quote: Option<u8>,
    /// While in a block scalar's text: the column its lines are indented beyond.
    block: Option<usize>,
}

impl Carry {
    /// Whether `raw` continues what an earlier line left open; takes what it opens or closes
    /// into account either way.
    fn continues(&mut self, raw: &str) -> bool {
        let indent = raw.len() - raw.trim_start_matches(' ').len();
        if let Some(column) = self.block {
            if raw.trim().is_empty() || indent > column {
                return true;
            }
            self.block = None;
        }
        if self.depth > 0 || self.quote.is_some() {
            self.scan(raw.as_bytes());
            return true;
        }
        if let Some((column, value)) = value_of(raw) {
            match value.as_bytes().first() {
                Some(b'{' | b'[' | b'"' | b'\'') => self.scan(value.as_bytes()),
                Some(b'|' | b'>') if is_block_header(value) => self.block = Some(column),
                _ => {}
            }
        }
        false
    }

    /// Follow brackets and quotes through `bytes` until what is open closes or a comment
    /// starts. A quote opens a scalar only where a flow scalar can start.
    fn scan(&mut self, bytes: &[u8]) {
        let mut i = 0;
        // The last byte that is not a space or tab, outside quotes.
        let mut before: Option<u8> = None;
        while i < bytes.len() {
            let b = bytes[i];
            match self.quote {
                Some(b'"') if b == b'\\' => i += 1,
                Some(q) if b == q => {
                    if q == b'\'' && bytes.get(i + 1) == Some(&b'\'') {
                        i += 1;
                    } else {
                        self.quote = None;
                        if self.depth == 0 {
                            return;
                        }
                        before = Some(b);
                    }
                }
                Some(_) => {}
                None => {
                    match b {
                        b'"' | b'\''
                            if matches!(before, None | Some(b'{' | b'[' | b',' | b':' | b'?')) =>
                        {
                            self.quote = Some(b);
                        }
                        b'#' if i == 0 || matches!(bytes[i - 1], b' ' | b'\t') => return,
                        b'{' | b'[' => self.depth += 1,
                        b'}' | b']' => {
                            self.depth = self.depth.saturating_sub(1);
                            if self.depth == 0 {
                                return;
                            }
                        }
                        _ => {}
                    }
                    if !matches!(b, b' ' | b'\t') {
                        before = Some(b);
                    }
                }
            }
            i += 1;
        }
    }
}

/// The value a block line writes, after its dashes and its key, with the column of the node
/// that holds it (the key's, or the last dash's); `None` for a line with no value of its own
/// (a comment, a plain or quoted scalar closed on the line, a key alone).
fn value_of(raw: &str) -> Option<(usize, &str)> {
    let text = raw.trim_end();
    let mut at = text.len() - text.trim_start_matches(' ').len();
    let mut column = at;
    while let Some(rest) = text[at..].strip_prefix('-') {
        if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
            break;
        }
        column = at;
        at = text.len() - rest.trim_start_matches([' ', '\t']).len();
    }
    let rest = &text[at..];
    let key_end = match rest.as_bytes().first()? {
        b'#' => return None,
        b'{' | b'[' | b'|' | b'>' => return Some((column, rest)),
        b'"' | b'\'' => match quoted_end(rest) {
            // A quoted key, or a quoted scalar closed on this line or left open.
            Some(end) if ends_key(&rest[end + 1..]) => end + 1 + rest[end + 1..].find(':')?,
            Some(_) => return None,
            None => return Some((column, rest)),
        },
        _ => match rest.match_indices(':').find(|&(i, _)| ends_key(&rest[i..])) {
            Some((i, _)) => i,
            None => return Some((column, rest)),
        },
    };
    column = at;
    let value = without_properties(rest[key_end + 1..].trim_start_matches([' ', '\t']))?;
    Some((column, value))
}

/// The byte index of the quote that closes the quoted scalar `s` starts with, if it closes on
/// the line (`\"` inside double quotes and `''` inside single ones do not).
fn quoted_end(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let quote = *bytes.first()?;
    let mut i = 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 1,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 1,
            b if b == quote => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// Whether `value` is a block scalar's header: `|` or `>`, indicators, maybe a comment.
fn is_block_header(value: &str) -> bool {
    let header = value.split(" #").next().unwrap_or(value).trim_end();
    header
        .bytes()
        .skip(1)
        .all(|b| b.is_ascii_digit() || b == b'-' || b == b'+')
}

/// Text cut into lines, looked up by index: a slice of lines, or a text with the spans of its
/// lines (see [`Index`]).
trait Lines {
    /// How many lines there are.
    fn count(&self) -> usize;
    /// Line `i` (0-based); `""` past the end.
    fn line(&self, i: usize) -> &str;
}

impl Lines for [&str] {
    fn count(&self) -> usize {
        self.len()
    }
    fn line(&self, i: usize) -> &str {
        self.get(i).copied().unwrap_or("")
    }
}

/// A text and the byte spans of its lines.
struct Spans<'t> {
    text: &'t str,
    spans: &'t [(usize, usize)],
}

impl Lines for Spans<'_> {
    fn count(&self) -> usize {
        self.spans.len()
    }
    fn line(&self, i: usize) -> &str {
        self.spans
            .get(i)
            .and_then(|&(a, b)| self.text.get(a..b))
            .unwrap_or("")
    }
}

/// Whether `text`, a line without its line break, is a document marker (`---`, `...`). A
/// marker starts in the first column: an indented `---` is the text of a block scalar (a
/// cloud-init file inside `userData`, a rule in a description).
fn is_boundary(text: &str) -> bool {
    text == "---" || text == "..." || text.starts_with("--- ")
}

/// [`is_boundary`] for a classified line: a marker only at indentation 0.
fn is_boundary_line(line: &Line<'_>) -> bool {
    line.indent == 0 && is_boundary(line.text)
}

/// Whether `text` (a line's content) starts with the mapping key `key`.
fn starts_with_key(text: &str, key: &str) -> bool {
    let rest = if let Some(r) = text.strip_prefix(key) {
        r
    } else if let Some(r) = text
        .strip_prefix('"')
        .and_then(|t| t.strip_prefix(key))
        .and_then(|t| t.strip_prefix('"'))
    {
        r
    } else if let Some(r) = text
        .strip_prefix('\'')
        .and_then(|t| t.strip_prefix(key))
        .and_then(|t| t.strip_prefix('\''))
    {
        r
    } else {
        return false;
    };
    ends_key(rest)
}

/// Whether `rest`, what follows a key on its line, ends the key: a `:` at the end of the line
/// or before a space or tab, after any spaces (`key : value` and `key:<TAB>value` are YAML
/// too).
fn ends_key(rest: &str) -> bool {
    let rest = rest.trim_start_matches(' ');
    rest == ":" || rest.starts_with(": ") || rest.starts_with(":\t")
}

/// Where the plain key at the start of `text` ends: before the first `:` that ends a key
/// (see [`ends_key`]), spaces before it left out.
fn plain_key_end(text: &str) -> Option<usize> {
    text.match_indices(':')
        .map(|(at, _)| at)
        .find(|&at| ends_key(&text[at..]))
        .map(|at| text[..at].trim_end_matches(' ').len())
}

/// The 1-based line of the value at `path` in the document whose first content line is
/// `doc_line`, or the deepest ancestor found.
pub fn locate(text: &str, doc_line: u32, path: &[Step<'_>]) -> u32 {
    let lines: Vec<&str> = text.lines().collect();
    locate_in_lines(&lines, doc_line, path)
}

/// One step of the way to the place a JSON scan is at.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Here {
    Key(String),
    Index(usize),
}

/// A container the JSON scan is inside.
enum Frame {
    /// A mapping; `key` is whether a key comes next.
    Object { key: bool },
    /// A list; `index` is the position of the next item, `value` whether one comes next.
    Array { index: usize, value: bool },
}

/// Walk a document written as JSON token by token from line `doc_line`, calling `visit` with
/// the path of each key and list item it meets and the 1-based line that holds it; stops when
/// `visit` returns true or the document ends.
fn scan_json<L: Lines + ?Sized>(
    lines: &L,
    doc_line: u32,
    mut visit: impl FnMut(&[Here], u32) -> bool,
) {
    let mut frames: Vec<Frame> = Vec::new();
    let mut here: Vec<Here> = Vec::new();
    // Whether the innermost frame pushed a step onto `here` for its current entry.
    let mut pushed: Vec<bool> = Vec::new();
    let start = (doc_line as usize).saturating_sub(1);
    for offset in start..lines.count() {
        let line = lines.line(offset);
        let number = u32::try_from(offset + 1).unwrap_or(u32::MAX);
        let mut chars = line.char_indices().peekable();
        while let Some((_, c)) = chars.next() {
            if c.is_whitespace() {
                continue;
            }
            // An item of a list begins here: note its place.
            if let Some(Frame::Array { index, value }) = frames.last_mut()
                && *value
                && c != ']'
            {
                *value = false;
                here.push(Here::Index(*index));
                if let Some(p) = pushed.last_mut() {
                    *p = true;
                }
                if visit(&here, number) {
                    return;
                }
            }
            match c {
                '"' => {
                    let mut text = String::new();
                    let mut escaped = false;
                    for (_, c) in chars.by_ref() {
                        match (escaped, c) {
                            (true, _) => {
                                text.push(c);
                                escaped = false;
                            }
                            (false, '\\') => escaped = true,
                            (false, '"') => break,
                            (false, _) => text.push(c),
                        }
                    }
                    if let Some(Frame::Object { key }) = frames.last_mut()
                        && *key
                    {
                        *key = false;
                        here.push(Here::Key(text));
                        if let Some(p) = pushed.last_mut() {
                            *p = true;
                        }
                        if visit(&here, number) {
                            return;
                        }
                    }
                }
                '{' | '[' => {
                    frames.push(if c == '{' {
                        Frame::Object { key: true }
                    } else {
                        Frame::Array {
                            index: 0,
                            value: true,
                        }
                    });
                    pushed.push(false);
                }
                '}' | ']' => {
                    frames.pop();
                    if pushed.pop() == Some(true) {
                        here.pop();
                    }
                    if frames.is_empty() {
                        return;
                    }
                }
                ',' => {
                    if pushed.last() == Some(&true) {
                        here.pop();
                    }
                    if let Some(p) = pushed.last_mut() {
                        *p = false;
                    }
                    match frames.last_mut() {
                        Some(Frame::Object { key }) => *key = true,
                        Some(Frame::Array { index, value }) => {
                            *index += 1;
                            *value = true;
                        }
                        None => {}
                    }
                }
                _ => {}
            }
        }
    }
}

/// [`locate`] for a document written as JSON (its first content line starts with `{`): the
/// line of the deepest key or list item on `path` that the scan meets.
fn locate_json<L: Lines + ?Sized>(lines: &L, doc_line: u32, path: &[Step<'_>]) -> u32 {
    let matches = |here: &[Here]| {
        here.len() <= path.len()
            && here.iter().zip(path).all(|(h, p)| match (h, p) {
                (Here::Key(a), Step::Key(b)) => a == b,
                (Here::Index(a), Step::Index(b)) => a == b,
                _ => false,
            })
    };
    let (mut best, mut best_depth) = (doc_line, 0);
    scan_json(lines, doc_line, |here, number| {
        if matches(here) && here.len() > best_depth {
            (best, best_depth) = (number, here.len());
            return best_depth == path.len();
        }
        false
    });
    best
}

/// [`locate`] on a text already cut into lines: for callers that look up many paths in the
/// same text.
pub fn locate_in_lines(lines: &[&str], doc_line: u32, path: &[Step<'_>]) -> u32 {
    if is_json_at(lines, doc_line) {
        return locate_json(lines, doc_line, path);
    }
    walk(doc_line, path, |step, pos, first_after_dash| match step {
        Step::Key(key) => find_key(lines, pos, first_after_dash, key),
        Step::Index(n) => find_item(lines, pos, n),
    })
}

/// Whether the document whose first content line is `doc_line` is written as JSON.
fn is_json_at<L: Lines + ?Sized>(lines: &L, doc_line: u32) -> bool {
    let start = (doc_line as usize).saturating_sub(1);
    start < lines.count() && lines.line(start).trim_start().starts_with('{')
}

/// Follow `path` through a block-style document from line `doc_line`, asking `find` for each
/// step: given the step, the line to scan from and whether that line's first key sits after a
/// `- `, it answers the 0-based line of the step and whether the step's content starts on that
/// line after a `- ` (an item with something after its dash).
fn walk(
    doc_line: u32,
    path: &[Step<'_>],
    mut find: impl FnMut(Step<'_>, usize, bool) -> Option<(usize, bool)>,
) -> u32 {
    let mut found = doc_line;
    // The position to scan from; the indentation of the entries of the current node is
    // learnt from the first entry met there.
    let mut pos = (doc_line as usize).saturating_sub(1);
    // For an entry that begins on a `- ` line, the first key sits after the dash.
    let mut first_after_dash = false;
    for &step in path {
        let Some((line_index, dash_item)) = find(step, pos, first_after_dash) else {
            return found;
        };
        found = u32::try_from(line_index + 1).unwrap_or(found);
        first_after_dash = dash_item;
        pos = if dash_item {
            line_index
        } else {
            line_index + 1
        };
    }
    found
}

/// A document's text cut into lines once, remembering the entries of every mapping and list it
/// was asked about: many lookups in one document (a finding for each of thousands of disks)
/// then cost about one scan of it, not one scan each. It holds spans, not the text: every
/// lookup passes the text it was built from.
#[derive(Debug, Default)]
pub struct Index {
    /// The byte span of each line, without its line break (as [`str::lines`] cuts them).
    spans: Vec<(usize, usize)>,
    /// The 0-based index of the first content line, if any.
    content: Option<usize>,
    memo: std::sync::Mutex<Memo>,
}

/// What an [`Index`] has learnt so far.
#[derive(Debug, Default)]
struct Memo {
    /// The block mappings whose entries start at (line, first key after a `- `).
    keys: HashMap<(usize, bool), Keys>,
    /// The lines of the items of the block sequence that starts at a line.
    items: HashMap<usize, Vec<usize>>,
    /// For a JSON document starting at a line: the line of each key and item path in it.
    json: HashMap<u32, HashMap<Vec<Here>, u32>>,
}

/// What an [`Index`] knows of one block mapping.
#[derive(Debug, Default)]
struct Keys {
    /// How many lookups were answered by scanning.
    scans: u32,
    /// The keys asked about before the table exists, with what their scan found: a key asked
    /// again (`spec` of a family, for each of its sizes) is answered without scanning.
    asked: Vec<(Box<str>, Option<usize>)>,
    /// Each key with the line of its first entry, once the mapping was asked about often
    /// enough to be worth the table.
    table: Option<HashMap<String, usize>>,
}

impl Keys {
    /// Lookups in one mapping answered by scanning it before its keys are put in a table:
    /// most mappings are asked about once or twice, and a table costs a string per key.
    const SCANS: u32 = 8;
}

impl Index {
    /// Cut `text` into lines.
    pub fn new(text: &str) -> Self {
        let mut spans = Vec::new();
        let mut start = 0;
        for line in text.split_inclusive('\n') {
            let end = start + line.len();
            let body = line.strip_suffix('\n').unwrap_or(line);
            let body = if line.ends_with('\n') {
                body.strip_suffix('\r').unwrap_or(body)
            } else {
                body
            };
            spans.push((start, start + body.len()));
            start = end;
        }
        let lines = Spans {
            text,
            spans: &spans,
        };
        let content = (0..lines.count()).find(|&i| {
            let t = lines.line(i).trim();
            !(t.is_empty() || t.starts_with('#') || t.starts_with('%') || is_boundary(t))
        });
        Index {
            spans,
            content,
            memo: std::sync::Mutex::default(),
        }
    }

    /// [`field_line_of`] for the text this index was built from.
    pub fn field_line_of(&self, text: &str, first_line: u32, steps: &[Step<'_>]) -> Option<u32> {
        let doc_line = u32::try_from(self.content? + 1).ok()?;
        Some(self.locate(text, doc_line, steps) + first_line - 1)
    }

    /// [`locate`] for the text this index was built from.
    pub fn locate(&self, text: &str, doc_line: u32, path: &[Step<'_>]) -> u32 {
        let lines = Spans {
            text,
            spans: &self.spans,
        };
        // A lookup that panicked elsewhere leaves a memo that is still consistent.
        let mut memo = self
            .memo
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if is_json_at(&lines, doc_line) {
            let paths = memo.json.entry(doc_line).or_insert_with(|| {
                let mut paths = HashMap::default();
                scan_json(&lines, doc_line, |here, number| {
                    paths.entry(here.to_vec()).or_insert(number);
                    false
                });
                paths
            });
            let mut key: Vec<Here> = path
                .iter()
                .map(|step| match step {
                    Step::Key(k) => Here::Key((*k).to_owned()),
                    Step::Index(n) => Here::Index(*n),
                })
                .collect();
            while !key.is_empty() {
                if let Some(&line) = paths.get(&key) {
                    return line;
                }
                key.pop();
            }
            return doc_line;
        }
        walk(doc_line, path, |step, pos, first_after_dash| match step {
            Step::Key(key) => {
                let keys = memo.keys.entry((pos, first_after_dash)).or_default();
                if keys.table.is_none() {
                    if let Some((_, found)) = keys.asked.iter().find(|(k, _)| **k == *key) {
                        return found.map(|line| (line, false));
                    }
                    if keys.scans < Keys::SCANS {
                        keys.scans += 1;
                        let found = find_key(&lines, pos, first_after_dash, key);
                        keys.asked.push((key.into(), found.map(|(line, _)| line)));
                        return found;
                    }
                    keys.asked = Vec::new();
                    keys.table = Some(keys_at(&lines, pos, first_after_dash));
                }
                keys.table
                    .as_ref()
                    .and_then(|table| table.get(key))
                    .map(|&line| (line, false))
            }
            Step::Index(n) => memo
                .items
                .entry(pos)
                .or_insert_with(|| items(&lines, pos).collect())
                .get(n)
                .map(|&line| (line, !content_below(&lines, line))),
        })
    }
}

/// The entries of the block mapping whose entries start at `pos`: each entry's line and its
/// text from the key on. For an entry that begins on a `- ` line (`first_after_dash`), the
/// first key sits after the dash.
fn entries<L: Lines + ?Sized>(
    lines: &L,
    pos: usize,
    first_after_dash: bool,
) -> impl Iterator<Item = (usize, &str)> {
    let mut entry_indent: Option<usize> = None;
    let mut carry = Carry::default();
    let mut i = pos;
    std::iter::from_fn(move || {
        while i < lines.count() {
            let at = i;
            i += 1;
            // An item that is a flow collection (`- {`) is looked into line by line.
            let into_flow = first_after_dash
                && at == pos
                && lines
                    .line(at)
                    .trim_start_matches(' ')
                    .strip_prefix('-')
                    .is_some_and(|after| after.trim_start().starts_with(['{', '[']));
            if !into_flow && carry.continues(lines.line(at)) {
                continue;
            }
            let Some(line) = classify(lines.line(at)) else {
                continue;
            };
            if is_boundary_line(&line) {
                i = usize::MAX;
                return None;
            }
            let (indent, text) = if first_after_dash && at == pos {
                let Some(after) = line.text.strip_prefix('-') else {
                    i = usize::MAX;
                    return None;
                };
                let after = after.trim_start_matches(' ');
                (line.indent + (line.text.len() - after.len()), after)
            } else {
                (line.indent, line.text)
            };
            let want = *entry_indent.get_or_insert(indent);
            if indent < want {
                i = usize::MAX;
                return None;
            }
            if indent == want {
                return Some((at, text));
            }
        }
        None
    })
}

/// The lines of the items of the block sequence that starts at `pos`.
fn items<L: Lines + ?Sized>(lines: &L, pos: usize) -> impl Iterator<Item = usize> + '_ {
    let mut item_indent: Option<usize> = None;
    let mut carry = Carry::default();
    let mut i = pos;
    std::iter::from_fn(move || {
        while i < lines.count() {
            let at = i;
            i += 1;
            if carry.continues(lines.line(at)) {
                continue;
            }
            let Some(line) = classify(lines.line(at)) else {
                continue;
            };
            let want = *item_indent.get_or_insert(line.indent);
            if is_boundary_line(&line)
                || line.indent < want
                || (line.indent == want && !(line.text == "-" || line.text.starts_with("- ")))
            {
                i = usize::MAX;
                return None;
            }
            if line.indent == want {
                return Some(at);
            }
        }
        None
    })
}

/// The line of `key` among the entries that start at `pos`. Returns (line index, false).
fn find_key<L: Lines + ?Sized>(
    lines: &L,
    pos: usize,
    first_after_dash: bool,
    key: &str,
) -> Option<(usize, bool)> {
    entries(lines, pos, first_after_dash)
        .find(|(_, text)| starts_with_key(text, key))
        .map(|(i, _)| (i, false))
}

/// The line of item `n` of the block sequence that starts at `pos`. Returns (line index,
/// whether the item's content starts on that line, after the dash; see [`content_below`]).
fn find_item<L: Lines + ?Sized>(lines: &L, pos: usize, n: usize) -> Option<(usize, bool)> {
    items(lines, pos)
        .nth(n)
        .map(|i| (i, !content_below(lines, i)))
}

/// Whether the item of a block sequence whose dash is on line `at` starts its content on the
/// lines below: nothing but a comment or an anchor or tag follows the dash (`-`, `- # root`,
/// `- &a`), and the next line of content is indented deeper than the dash.
fn content_below<L: Lines + ?Sized>(lines: &L, at: usize) -> bool {
    let Some(line) = classify(lines.line(at)) else {
        return false;
    };
    let Some(after) = line.text.strip_prefix('-') else {
        return false;
    };
    if !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return false;
    }
    let alone = after
        .split_whitespace()
        .take_while(|word| !word.starts_with('#'))
        .all(|word| word.starts_with(['&', '!']));
    alone
        && (at + 1..lines.count())
            .find_map(|i| classify(lines.line(i)))
            .is_some_and(|next| next.indent > line.indent && !is_boundary_line(&next))
}

/// Every key of the block mapping whose entries start at `pos`, with the line of the first
/// entry that has it: what [`find_key`] would answer for each.
fn keys_at<L: Lines + ?Sized>(
    lines: &L,
    pos: usize,
    first_after_dash: bool,
) -> HashMap<String, usize> {
    let mut keys = HashMap::default();
    for (i, text) in entries(lines, pos, first_after_dash) {
        for key in key_candidates(text) {
            keys.entry(key.to_owned()).or_insert(i);
        }
    }
    keys
}

/// The keys an entry line can start with in the sense of [`starts_with_key`]: the plain key
/// before its first `: ` (or a final `:`), and the content of a quoted key.
fn key_candidates(text: &str) -> impl Iterator<Item = &str> {
    let plain = plain_key_end(text).map(|end| &text[..end]);
    let quoted = |quote: char| {
        let inner = text.strip_prefix(quote)?;
        inner
            .match_indices(quote)
            .find(|&(at, _)| ends_key(&inner[at + 1..]))
            .map(|(at, _)| &inner[..at])
    };
    plain.into_iter().chain(quoted('"')).chain(quoted('\''))
}

/// Whether the value at a key line is a block scalar (`key: |` or `key: >`), whose content
/// starts on the next line.
pub fn is_block_scalar(text: &str, line: u32) -> bool {
    let Some(raw) = text.lines().nth((line as usize).saturating_sub(1)) else {
        return false;
    };
    let trimmed = raw.trim_end();
    trimmed
        .match_indices(':')
        .map(|(at, _)| at)
        .find(|&at| ends_key(&trimmed[at..]))
        .and_then(|at| without_properties(trimmed[at + 1..].trim_start()))
        .is_some_and(|v| v.starts_with('|') || v.starts_with('>'))
}

/// `value` after the node properties before it, an anchor (`&x`) or a tag (`!!str`); `None`
/// when nothing follows them on the line.
fn without_properties(mut value: &str) -> Option<&str> {
    while value.starts_with(['&', '!']) {
        let end = value.find([' ', '\t'])?;
        value = value[end..].trim_start_matches([' ', '\t']);
    }
    Some(value)
}

/// The value of `value` at `steps` (see [`parse_path`]), if it has that field.
pub fn field_at<'v>(
    value: &'v serde_json::Value,
    steps: &[Step<'_>],
) -> Option<&'v serde_json::Value> {
    let mut at = value;
    for step in steps {
        at = match step {
            Step::Key(key) => at.get(*key),
            Step::Index(i) => at.get(*i),
        }?;
    }
    Some(at)
}

/// Split a dotted field path (`spec.template.spec.domain.devices.disks[0].disk.bus`, or with
/// quoted keys: `metadata.labels["instancetype.kubevirt.io/cpu"]`) into steps.
pub fn parse_path(field: &str) -> Vec<Step<'_>> {
    let mut steps = Vec::new();
    let mut rest = field;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            rest = r;
        } else if let Some(r) = rest.strip_prefix("[\"") {
            let Some(end) = r.find("\"]") else { break };
            steps.push(Step::Key(&r[..end]));
            rest = &r[end + 2..];
        } else if let Some(r) = rest.strip_prefix('[') {
            let Some(end) = r.find(']') else { break };
            match r[..end].parse() {
                Ok(n) => steps.push(Step::Index(n)),
                Err(_) => break,
            }
            rest = &r[end + 1..];
        } else {
            let end = rest.find(['.', '[']).unwrap_or(rest.len());
            steps.push(Step::Key(&rest[..end]));
            rest = &rest[end..];
        }
    }
    steps
}

/// The 1-based line (in the whole file) of `field`, a dotted path (see [`parse_path`]), or of
/// its deepest existing ancestor (the document's first content line when nothing matches),
/// inside `text`, a document whose first line is line `first_line` of the file. `None` for a
/// document without content.
pub fn field_line(text: &str, first_line: u32, field: &str) -> Option<u32> {
    field_line_of(text, first_line, &parse_path(field))
}

/// [`field_line`] of a path already split into steps.
pub fn field_line_of(text: &str, first_line: u32, steps: &[Step<'_>]) -> Option<u32> {
    let content = text.lines().position(|l| {
        let t = l.trim();
        !(t.is_empty() || t.starts_with('#') || t.starts_with('%') || is_boundary(t))
    })?;
    let doc_line = u32::try_from(content + 1).ok()?;
    Some(locate(text, doc_line, steps) + first_line - 1)
}

/// The items of the block sequence at `field` (a dotted path) in `text`, in one pass: for each,
/// the byte range of its entry (from its `- ` line to the next item's) and the 1-based line of
/// that `- ` line in `text`. Empty when the value at `field` is not a block sequence (a flow
/// `[...]`, say); stops where the text stops looking like one.
pub fn sequence_items(text: &str, field: &str) -> Vec<(std::ops::Range<usize>, u32)> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let Some(mut pos) = lines.iter().position(|l| {
        let t = l.trim();
        !(t.is_empty() || t.starts_with('#') || t.starts_with('%') || is_boundary(t))
    }) else {
        return Vec::new();
    };
    let mut first_after_dash = false;
    for step in parse_path(field) {
        let found = match step {
            Step::Key(key) => find_key(lines.as_slice(), pos, first_after_dash, key),
            Step::Index(n) => find_item(lines.as_slice(), pos, n),
        };
        let Some((line_index, dash_item)) = found else {
            return Vec::new();
        };
        first_after_dash = dash_item;
        pos = if dash_item {
            line_index
        } else {
            line_index + 1
        };
    }
    let mut starts = Vec::new();
    let mut item_indent = None;
    let mut end = lines.len();
    let mut carry = Carry::default();
    for (i, raw) in lines.iter().enumerate().skip(pos) {
        if carry.continues(raw) {
            continue;
        }
        let Some(line) = classify(raw) else { continue };
        let want = *item_indent.get_or_insert(line.indent);
        if is_boundary_line(&line) || line.indent < want {
            end = i;
            break;
        }
        if line.indent == want {
            if !(line.text == "-" || line.text.starts_with("- ")) {
                end = i;
                break;
            }
            starts.push(i);
        }
    }
    let offset = |line: usize| lines[..line].iter().map(|l| l.len()).sum::<usize>();
    let mut items = Vec::with_capacity(starts.len());
    let mut at = starts.first().map_or(0, |&i| offset(i));
    for (n, &start) in starts.iter().enumerate() {
        let next = starts.get(n + 1).copied().unwrap_or(end);
        let len: usize = lines[start..next].iter().map(|l| l.len()).sum();
        items.push((at..at + len, u32::try_from(start + 1).unwrap_or(u32::MAX)));
        at += len;
    }
    items
}

/// [`sequence_items`] for a document written as JSON (`kubectl get -o json` prints a `List`
/// so): the byte range and 1-based line of each item of the list at the top-level key `key`,
/// for the items that begin a line with their `{`. Each range runs to the line before the
/// next item (the last one to the end of the text); a scan of it stops at the item's closing
/// brace. Empty when the text is not JSON, or when an item shares its line with what comes
/// before it.
pub fn json_sequence_items(text: &str, key: &str) -> Vec<(std::ops::Range<usize>, u32)> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // The document's first line of content: after a `---`, comments and directives, as for
    // `field_line_of`.
    let Some(content) = lines.iter().position(|l| {
        let t = l.trim();
        !(t.is_empty() || t.starts_with('#') || t.starts_with('%') || is_boundary(t))
    }) else {
        return Vec::new();
    };
    let doc_line = u32::try_from(content + 1).unwrap_or(u32::MAX);
    if !is_json_at(lines.as_slice(), doc_line) {
        return Vec::new();
    }
    let mut starts: Vec<usize> = Vec::new();
    let mut fits = true;
    scan_json(lines.as_slice(), doc_line, |here, number| {
        if let [Here::Key(k), Here::Index(_)] = here
            && k == key
        {
            let line = number as usize - 1;
            fits &= lines[line].trim_start().starts_with('{') && starts.last() != Some(&line);
            starts.push(line);
        }
        !fits
    });
    if !fits {
        return Vec::new();
    }
    // The byte offset of each line, found once: a list of thousands of items is not summed
    // again from the top for each.
    let mut offsets = Vec::with_capacity(lines.len() + 1);
    let mut at = 0;
    for line in &lines {
        offsets.push(at);
        at += line.len();
    }
    offsets.push(at);
    starts
        .iter()
        .enumerate()
        .map(|(n, &start)| {
            let end = starts.get(n + 1).map_or(text.len(), |&next| offsets[next]);
            (
                offsets[start]..end,
                u32::try_from(start + 1).unwrap_or(u32::MAX),
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_json_list_after_a_marker_or_a_comment_has_its_items_found() {
        let list = "{\n  \"kind\": \"List\",\n  \"items\": [\n    {\n      \"kind\": \"A\"\n    },\n    {\n      \"kind\": \"B\"\n    }\n  ]\n}\n";
        for head in ["", "---\n", "# exported\n", "--- # c\n# exported\n\n"] {
            let text = format!("{head}{list}");
            let skip = head.lines().count();
            let lines: Vec<u32> = json_sequence_items(&text, "items")
                .into_iter()
                .map(|(_, line)| line)
                .collect();
            let expected: Vec<u32> = [4, 7]
                .iter()
                .map(|l| l + u32::try_from(skip).unwrap())
                .collect();
            assert_eq!(lines, expected, "{head:?}");
        }
    }

    #[test]
    fn json_documents_are_located_by_their_tokens() {
        let text = r#"{
  "apiVersion": "kubevirt.io/v1",
  "metadata": {"name": "j", "labels": {"a": "b,c"}},
  "spec": {
    "template": {
      "spec": {
        "domain": {"cpu": {"sockets": 3}},
        "volumes": [
          {"name": "root"},
          {
            "name": "data",
            "dataVolume": {"name": "x\"y"}
          }
        ]
      }
    }
  }
}
"#;
        let line = |field: &str| field_line(text, 1, field);
        assert_eq!(line("metadata.labels.a"), Some(3));
        assert_eq!(line("spec.template.spec.domain.cpu.sockets"), Some(7));
        assert_eq!(line("spec.template.spec.volumes[0].name"), Some(9));
        assert_eq!(line("spec.template.spec.volumes[1]"), Some(10));
        assert_eq!(
            line("spec.template.spec.volumes[1].dataVolume.name"),
            Some(12)
        );
        // A field that is not there: its deepest ancestor.
        assert_eq!(line("spec.template.spec.domain.memory"), Some(7));
        assert_eq!(line("status"), Some(1));
    }
    use super::*;

    #[test]
    fn sequence_items_are_found_in_one_pass() {
        let text = "apiVersion: v1\nkind: List\nitems:\n- a: 1\n  b:\n  - x\n\n- c: 2\n  # note\n\
                    -   d: 3\nmetadata: {}\n";
        let items = sequence_items(text, "items");
        let texts: Vec<&str> = items.iter().map(|(r, _)| &text[r.clone()]).collect();
        assert_eq!(
            texts,
            [
                "- a: 1\n  b:\n  - x\n\n",
                "- c: 2\n  # note\n",
                "-   d: 3\n"
            ]
        );
        let lines: Vec<u32> = items.iter().map(|(_, l)| *l).collect();
        assert_eq!(lines, [4, 8, 10]);
        // Nested: the items of the first item's own list.
        let nested = "- kind: List\n  items:\n    - a: 1\n    - b: 2\n";
        let items = sequence_items(nested, "[0].items");
        let texts: Vec<&str> = items.iter().map(|(r, _)| &nested[r.clone()]).collect();
        assert_eq!(texts, ["    - a: 1\n", "    - b: 2\n"]);
        // Not a block list: nothing.
        assert!(sequence_items("items: [{a: 1}]\n", "items").is_empty());
        assert!(sequence_items("kind: List\n", "items").is_empty());
    }

    const VM: &str = "apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: vm
spec:
  template:
    metadata:
      annotations:
        a: b
    spec:
      domain:
        cpu:
          cores: 2
        devices:
          disks:
          - name: root
            disk:
              bus: virtio
";

    #[test]
    fn finds_nested_fields() {
        assert_eq!(
            field_line(VM, 1, "spec.template.spec.domain.cpu.cores"),
            Some(13)
        );
        assert_eq!(
            field_line(VM, 10, "spec.template.spec.domain.cpu"),
            Some(21)
        );
    }

    /// A key may have spaces before its `:` and a tab after it, in the lines a field is
    /// looked up through and in the field's own.
    #[test]
    fn keys_with_a_space_before_or_a_tab_after_the_colon() {
        let text = "spec :\n  template:\t\n    spec:\n      domain:\n        cpu :\n          \
                    cores:\t2\n          sockets  : 1\n        memory: {guest: 1Gi}\n";
        assert_eq!(
            field_line(text, 1, "spec.template.spec.domain.cpu.cores"),
            Some(6)
        );
        assert_eq!(
            field_line(text, 1, "spec.template.spec.domain.cpu.sockets"),
            Some(7)
        );
        assert_eq!(
            field_line(text, 1, "spec.template.spec.domain.memory"),
            Some(8)
        );
        assert!(is_block_scalar("data:\t|\n  x\n", 1));
        assert!(is_block_scalar("data : >-\n  x\n", 1));
        assert!(!is_block_scalar("data: x|\n", 1));
        // After an anchor or a tag, as YAML allows.
        assert!(is_block_scalar("data: &x |\n  x\n", 1));
        assert!(is_block_scalar("data: !!str >-\n  x\n", 1));
        assert!(is_block_scalar("data: &x !!str |\n  x\n", 1));
        assert!(!is_block_scalar("data: &x y|\n", 1));
        assert!(!is_block_scalar("data: &x\n", 1));
    }

    /// An item written as a `-` alone on its line (or with only a comment, an anchor or a tag
    /// after it) holds the lines below it: its fields are found there, at any depth.
    #[test]
    fn an_item_whose_dash_is_alone_has_its_fields_below_it() {
        let text = "spec:\n  disks:\n  -\n    name: root\n    disk:\n      bus: virtio\n  \
                    - # second\n      name: data\n  - &third\n    name: third\n  -\n    -\n      \
                    a: 1\n    - b: 2\n  -\n  - name: sixth\nnext:\n-\nlast: 1\n";
        let line = |field: &str| field_line(text, 1, field);
        assert_eq!(line("spec.disks[0]"), Some(3));
        assert_eq!(line("spec.disks[0].name"), Some(4));
        assert_eq!(line("spec.disks[0].disk.bus"), Some(6));
        assert_eq!(line("spec.disks[1].name"), Some(8));
        assert_eq!(line("spec.disks[2].name"), Some(10));
        assert_eq!(line("spec.disks[3][0].a"), Some(13));
        assert_eq!(line("spec.disks[3][1].b"), Some(14));
        // A null item: the next item is not its content.
        assert_eq!(line("spec.disks[4].name"), Some(15));
        assert_eq!(line("spec.disks[5].name"), Some(16));
        // Nothing deeper below the dash: a key after it belongs to the parent.
        assert_eq!(line("next[0].last"), Some(18));
        let items = sequence_items(text, "spec.disks");
        let lines: Vec<u32> = items.iter().map(|(_, l)| *l).collect();
        assert_eq!(lines, [3, 7, 9, 11, 15, 16]);
    }

    /// The lines of a flow collection written over several lines, and of a block scalar, are
    /// no entries of the block collection around them, whatever their indentation: what
    /// follows them is found at its own line.
    #[test]
    fn lines_that_continue_a_flow_collection_are_no_entries() {
        let list = "items:\n- {\n  kind: A, metadata: {name: a}\n}\n- kind: B\n  metadata:\n    \
                    name: b\n- [\n  x,\ny]\n- kind: C\n";
        let line = |field: &str| field_line(list, 1, field);
        // Inside the collection, as before: its lines by their indentation.
        assert_eq!(line("items[0].kind"), Some(3));
        assert_eq!(line("items[1].metadata.name"), Some(7));
        assert_eq!(line("items[3].kind"), Some(11));
        let items = sequence_items(list, "items");
        let texts: Vec<&str> = items.iter().map(|(r, _)| &list[r.clone()]).collect();
        assert_eq!(
            texts,
            [
                "- {\n  kind: A, metadata: {name: a}\n}\n",
                "- kind: B\n  metadata:\n    name: b\n",
                "- [\n  x,\ny]\n",
                "- kind: C\n",
            ]
        );
        // In a mapping: quotes and a comment inside the collection, a quoted scalar over
        // several lines, a block scalar whose text has a bracket.
        let map = "a: {\nb: \"}\", # }\nc: '{''',\n}\nb: \"x\n{\"\nc: |\n  {\nd: [\n]\ne: 1\n";
        let line = |field: &str| field_line(map, 1, field);
        assert_eq!(line("b"), Some(5));
        assert_eq!(line("c"), Some(7));
        assert_eq!(line("d"), Some(9));
        assert_eq!(line("e"), Some(11));
    }

    #[test]
    fn missing_leaf_points_at_its_parent() {
        assert_eq!(
            field_line(VM, 1, "spec.template.spec.domain.cpu.sockets"),
            Some(12)
        );
    }

    #[test]
    fn list_items_are_walked() {
        assert_eq!(
            field_line(VM, 1, "spec.template.spec.domain.devices.disks[0].disk.bus"),
            Some(18)
        );
    }

    #[test]
    fn same_key_elsewhere_does_not_match() {
        assert_eq!(
            field_line(VM, 1, "spec.template.metadata.annotations.a"),
            Some(9)
        );
        assert_eq!(field_line(VM, 1, "metadata.name"), Some(4));
    }

    /// A `---` or `...` inside a block scalar is its text, not the end of the document: what
    /// follows it is still found (a cloud-init file in `userData`, a rule in a description).
    #[test]
    fn an_indented_marker_does_not_end_the_document() {
        const CLOUD_INIT: &str = "kind: VirtualMachine
spec:
  template:
    spec:
      volumes:
        - name: cloudinit
          cloudInitNoCloud:
            userData: |
              #cloud-config
              write_files:
                - content: |
                    ---
                    key: value
                  path: /etc/x.yaml
              ...
        - name: root
          containerDisk: {image: x}
  instancetype:
    name: u1.medium
---
kind: Next
";
        assert_eq!(
            field_line(CLOUD_INIT, 1, "spec.instancetype.name"),
            Some(19)
        );
        assert_eq!(
            field_line(CLOUD_INIT, 1, "spec.template.spec.volumes[1].containerDisk"),
            Some(17)
        );
        let items = sequence_items(CLOUD_INIT, "spec.template.spec.volumes");
        assert_eq!(
            items.iter().map(|(_, line)| *line).collect::<Vec<_>>(),
            [6, 16]
        );
        // A marker in the first column still ends it.
        assert_eq!(field_line(CLOUD_INIT, 1, "kind"), Some(1));
        let cut = CLOUD_INIT.replace("  instancetype:", "---\n  instancetype:");
        assert_eq!(field_line(&cut, 1, "spec.instancetype.name"), Some(2));
    }
}
#[cfg(test)]
mod more_tests {
    #[test]
    fn after_a_marker() {
        let t = "---\napiVersion: v1\nspec:\n  instancetype:\n    name: x\n";
        assert_eq!(super::field_line(t, 9, "spec.instancetype.name"), Some(13));
    }
}

#[cfg(test)]
mod locator_tests {
    use super::*;

    const DOC: &str = "\
# comment
apiVersion: x
kind: Family
spec:
  sizes:
  - [a, 1, 1Gi]
  # between rows
  - [b, 2, 2Gi]
  -   name: c
      cpu: 3
  template:
    metadata:
      labels:
        x: \"{{ a }}\"
    spec:
      description: |
        line one
        {{ oops }}
---
spec:
  other: 1
";

    #[test]
    fn finds_nested_keys() {
        let path = [
            Step::Key("spec"),
            Step::Key("template"),
            Step::Key("spec"),
            Step::Key("description"),
        ];
        assert_eq!(locate(DOC, 2, &path), 16);
        assert!(is_block_scalar(DOC, 16));
        assert!(!is_block_scalar(DOC, 14));
    }

    #[test]
    fn finds_sequence_items_and_keys_inside_them() {
        let sizes = [Step::Key("spec"), Step::Key("sizes")];
        assert_eq!(locate(DOC, 2, &[sizes[0], sizes[1], Step::Index(0)]), 6);
        assert_eq!(locate(DOC, 2, &[sizes[0], sizes[1], Step::Index(1)]), 8);
        assert_eq!(
            locate(
                DOC,
                2,
                &[sizes[0], sizes[1], Step::Index(2), Step::Key("cpu")]
            ),
            10
        );
    }

    #[test]
    fn stops_at_the_deepest_match_and_the_document_end() {
        assert_eq!(locate(DOC, 2, &[Step::Key("spec"), Step::Key("nope")]), 4);
        // `other` belongs to the next document.
        assert_eq!(locate(DOC, 2, &[Step::Key("spec"), Step::Key("other")]), 4);
        assert_eq!(
            locate(DOC, 20, &[Step::Key("spec"), Step::Key("other")]),
            21
        );
    }
}

#[cfg(test)]
mod index_tests {
    use super::*;
    use serde_json::Value;

    /// Every path into `value`, and beside each key a sibling key that is not there.
    fn paths(value: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        out.push(prefix.clone());
        match value {
            Value::Object(map) => {
                prefix.push("absent".into());
                out.push(prefix.clone());
                prefix.pop();
                for (k, v) in map {
                    prefix.push(format!("K{k}"));
                    paths(v, prefix, out);
                    prefix.pop();
                }
            }
            Value::Array(items) => {
                for (i, v) in items
                    .iter()
                    .enumerate()
                    .chain([(items.len(), &Value::Null)])
                {
                    prefix.push(format!("I{i}"));
                    paths(v, prefix, out);
                    prefix.pop();
                }
            }
            _ => {}
        }
    }

    fn steps(path: &[String]) -> Vec<Step<'_>> {
        path.iter()
            .map(|s| match s.split_at(1) {
                ("I", n) => Step::Index(n.parse().unwrap()),
                (_, k) => Step::Key(k),
            })
            .collect()
    }

    /// The index answers what one scan per lookup answers, for every path of the document and
    /// for paths that stop short, asked in an order that revisits nodes.
    fn same_as_scanning(text: &str) {
        let value = crate::load::yaml::parse_document(text).unwrap();
        let mut all = Vec::new();
        paths(&value, &mut Vec::new(), &mut all);
        assert!(all.len() > 5, "{all:?}");
        let index = Index::new(text);
        for path in all.iter().chain(all.iter().rev()) {
            let steps = steps(path);
            assert_eq!(
                index.field_line_of(text, 7, &steps),
                field_line_of(text, 7, &steps),
                "{path:?} in\n{text}"
            );
        }
    }

    #[test]
    fn an_index_answers_as_a_scan_does() {
        same_as_scanning(VM_WITH_LISTS);
        same_as_scanning(
            "# lead\n---\nkind: X\n\"quoted: key\": 1\n'single': 2\nurl://x: 3\nb::\n  c: 4\n",
        );
        same_as_scanning(
            "{\n  \"a\": {\"b\": [1, {\"c\": 2}],\n  \"d\": \"x\\\"y\"},\n  \"e\": []\n}\n",
        );
        same_as_scanning("a:\r\n  - b: 1\r\n    c: 2\r\n  -\r\n    d: 3\r\n");
        same_as_scanning(
            "a:\n- {\n  b: 1\n}\n-\n  c: [\n1]\n  d:\n  -\n    - e: 2\n- # f\n  f: {g: 1}\n",
        );
    }

    const VM_WITH_LISTS: &str = "apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: vm
  labels: {a: b}
spec:
  template:
    spec:
      domain:
        devices:
          disks:
          - name: root
            disk:
              bus: virtio
          -   name: data
              cdrom: {}
          # between
          - name: third

            lun:
              bus: scsi
      volumes:
        - name: root
          containerDisk:
            image: x
        - name: data
";
}

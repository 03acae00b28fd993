//! Tabs that the YAML reader of kubectl, kustomize and kpt refuses where YAML 1.2 takes them.
//!
//! That reader takes a tab as a blank only where no mapping key can start: inside a flow
//! collection (`[...]`, `{...}`), inside a quoted scalar, and after a key or value on its line
//! (`a:\tb`, `a: b\t# c`). Elsewhere in block context a tab stands where the reader looks for a
//! token and is refused: in the indentation of a line, also of a line that holds only blanks or
//! a comment, and after the `-` of a list entry or a `?`. It also refuses a tab in the
//! indentation of the lines that follow a plain scalar when the tab is less indented than the
//! scalar's mapping or list, and in the indentation of a block scalar (`|`, `>`), where the
//! first line of the block may not even go on with a tab after its spaces. A comment is read
//! together with the blank lines and comment lines right after it, so a tab before a comment
//! that follows another comment passes.
//!
//! [`refused_tabs`] follows the tokens of a text as that reader does, closely enough to tell
//! where each tab falls, and reports the first refused tab of each piece the tools read as a
//! document: they cut a stream at `---` lines and leave those lines out (so a comment on such a
//! line is not read with the comments after it), and after a `...` marker read on only to the
//! next token. Only a text that holds a tab is looked at.

use super::YamlError;

/// What the tools' reader says about a tab, by where it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rule {
    /// Where a token would start in block context.
    NoToken,
    /// In the indentation of a line after a plain scalar, less indented than the scalar's
    /// mapping or list.
    PlainIndentation,
    /// In the indentation of a block scalar whose header is on `header_line`; `first` when the
    /// block's indentation is still to be read from the line.
    BlockIndentation { header_line: u32, first: bool },
}

/// What the line of a refused tab holds besides it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// Only blanks.
    Blank,
    /// Blanks, then a comment.
    BeforeComment,
    /// Blanks, then content.
    Indentation,
    /// The indicator before the tab (`-`, `?`, `:`), on the same line.
    After(char),
}

/// A tab that kubectl, kustomize and kpt refuse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusedTab {
    /// 1-based line within the text looked at.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    rule: Rule,
    place: Place,
}

impl RefusedTab {
    /// What is wrong and what to do.
    pub fn message(&self) -> String {
        let theirs = match self.rule {
            Rule::NoToken => "found character that cannot start any token",
            Rule::PlainIndentation => "found a tab character that violates indentation",
            Rule::BlockIndentation { .. } => {
                "found a tab character where an indentation space is expected"
            }
        };
        let blank_fix = "delete it, or replace it with spaces";
        let (place, fix) = match (self.rule, self.place) {
            (_, Place::After(c)) => {
                let what = match c {
                    '-' => "the `-` of a list entry".to_string(),
                    '?' => "the `?` of a mapping key".to_string(),
                    other => format!("`{other}`"),
                };
                (format!("after {what}"), "put a space in its place")
            }
            (
                Rule::BlockIndentation {
                    header_line: header,
                    first,
                },
                place,
            ) => match (place, first) {
                (Place::Blank, _) => (
                    format!(
                        "on a line of blanks of the block scalar (`|` or `>`) on line {header}"
                    ),
                    blank_fix,
                ),
                (_, true) => (
                    format!(
                        "at the start of the first line of the block scalar (`|` or `>`) on \
                             line {header}, whose indentation is read from that line"
                    ),
                    "start the line with spaces only, or write the value as a double-quoted \
                         string with `\\t` for the tab",
                ),
                _ => (
                    format!("in the indentation of the block scalar (`|` or `>`) on line {header}"),
                    "indent the block's lines with spaces only",
                ),
            },
            (_, Place::Blank) => ("on a line that holds only blanks".to_string(), blank_fix),
            (_, Place::BeforeComment) => (
                "before a comment".to_string(),
                "replace it with spaces, or delete it",
            ),
            (_, Place::Indentation) => (
                "in the indentation of a line".to_string(),
                "indent with spaces only",
            ),
        };
        format!("a tab {place}: kubectl, kustomize and kpt refuse it (\"{theirs}\"); {fix}")
    }

    /// The tab as an error of the part of the text looked at that starts on line
    /// `first_line`, with its line counted from there.
    pub fn error(&self, first_line: u32) -> YamlError {
        YamlError {
            message: self.message(),
            line: Some(self.line.saturating_sub(first_line).saturating_add(1)),
            column: Some(self.column),
        }
    }
}

/// The first tab of each document of `text` that kubectl, kustomize and kpt refuse (see the
/// module's documentation), in order, with lines counted from 1 at the start of `text`. Nothing
/// for a text without a tab.
pub fn refused_tabs(text: &str) -> Vec<RefusedTab> {
    if memchr::memchr(b'\t', text.as_bytes()).is_none() {
        return Vec::new();
    }
    pieces(text)
        .filter(|(piece, _)| memchr::memchr(b'\t', piece.as_bytes()).is_some())
        .filter_map(|(piece, first_line)| Scanner::new(piece, first_line).scan().err()?.0)
        .collect()
}

/// `text` cut as kustomize and kpt cut a stream before reading it, each piece with the 1-based
/// line it starts on. They cut at every line that starts with `---` and ends in a line break,
/// except the first line, and leave the line out. The line break before such a line is part of
/// the cut, so a `---` line right after another is no cut: the reader takes it as a document
/// start marker, as it takes one on the first line.
fn pieces(text: &str) -> impl Iterator<Item = (&str, u32)> {
    let bytes = text.as_bytes();
    let mut start = 0;
    let mut start_line = 1u32;
    let mut offset = 0;
    let mut line = 1u32;
    let mut after_cut = false;
    let mut done = false;
    std::iter::from_fn(move || {
        while !done {
            let Some(end) = memchr::memchr(b'\n', &bytes[offset..]).map(|i| offset + i + 1) else {
                done = true;
                break;
            };
            let at = offset;
            offset = end;
            line = line.saturating_add(1);
            let cut = at > 0 && !after_cut && bytes[at..].starts_with(b"---");
            after_cut = cut;
            if cut {
                let piece = (&text[start..at], start_line);
                start = end;
                start_line = line;
                return Some(piece);
            }
        }
        (start < text.len()).then(|| {
            let piece = (&text[start..], start_line);
            start = text.len();
            piece
        })
    })
}

/// Why [`Scanner::scan`] stopped before the end: a refused tab, or `None` for text it does not
/// follow (left to the parser, which says what is wrong with it).
struct Stop(Option<RefusedTab>);

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn is_break(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

/// How far the reader looks ahead for a comment, in bytes.
const COMMENT_LOOKAHEAD: usize = 512;

/// The tokens of one document, followed as the tools' reader follows them.
struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// 1-based line and 0-based column (in characters) of `pos`.
    line: u32,
    column: u32,
    /// Where the line of `pos` starts.
    line_start: usize,
    /// How many flow collections are open.
    flow: usize,
    /// Whether a mapping key may start here: where it may, in block context, a tab is refused.
    key_allowed: bool,
    /// The columns of the open block collections, innermost last.
    indents: Vec<u32>,
    /// Per flow level, where a key that a `:` may yet follow on its line starts.
    keys: Vec<Option<(u32, u32)>>,
    /// Line breaks passed since the last character that is not a blank.
    newlines: u32,
}

impl<'a> Scanner<'a> {
    /// A scanner of `text`, whose first line is line `first_line`.
    fn new(text: &'a str, first_line: u32) -> Self {
        Scanner {
            bytes: text.as_bytes(),
            pos: 0,
            line: first_line,
            column: 0,
            line_start: 0,
            flow: 0,
            key_allowed: true,
            indents: Vec::new(),
            keys: vec![None],
            newlines: 0,
        }
    }

    /// The byte `ahead` bytes on, 0 past the end.
    fn at(&self, ahead: usize) -> u8 {
        self.bytes.get(self.pos + ahead).copied().unwrap_or(0)
    }

    fn at_end(&self) -> bool {
        self.pos >= self.bytes.len()
    }

    /// Whether the byte `ahead` bytes on is a blank, a line break or the end.
    fn blank_or_end(&self, ahead: usize) -> bool {
        self.pos + ahead >= self.bytes.len() || is_blank(self.at(ahead)) || is_break(self.at(ahead))
    }

    fn starts_with(&self, s: &[u8]) -> bool {
        self.bytes[self.pos.min(self.bytes.len())..].starts_with(s)
    }

    /// Pass one character (not a line break).
    fn advance(&mut self) {
        let Some(&b) = self.bytes.get(self.pos) else {
            return;
        };
        if !is_blank(b) {
            self.newlines = 0;
        }
        let width = match b {
            0xf0.. => 4,
            0xe0.. => 3,
            0xc0.. => 2,
            _ => 1,
        };
        self.pos = (self.pos + width).min(self.bytes.len());
        self.column += 1;
    }

    /// Pass one line break (`\r\n` is one).
    fn next_line(&mut self) {
        self.pos += if self.starts_with(b"\r\n") { 2 } else { 1 };
        self.pos = self.pos.min(self.bytes.len());
        self.line += 1;
        self.column = 0;
        self.line_start = self.pos;
        self.newlines += 1;
    }

    /// Pass the rest of the line, up to its line break.
    fn pass_line(&mut self) {
        while !self.at_end() && !is_break(self.at(0)) {
            self.advance();
        }
    }

    /// Pass blanks and line breaks up to `end`.
    fn pass_to(&mut self, end: usize) {
        while self.pos < end && !self.at_end() {
            if is_break(self.at(0)) {
                self.next_line();
            } else {
                self.advance();
            }
        }
    }

    fn refuse(&self, rule: Rule) -> Stop {
        let line_end = self.bytes[self.pos..]
            .iter()
            .position(|&b| is_break(b))
            .map_or(self.bytes.len(), |i| self.pos + i);
        let before = self.bytes[self.line_start..self.pos]
            .iter()
            .rev()
            .find(|&&b| !is_blank(b));
        let after = self.bytes[self.pos..line_end]
            .iter()
            .find(|&&b| !is_blank(b));
        let place = match (before, after) {
            (Some(&b), _) if rule == Rule::NoToken && b.is_ascii() => Place::After(char::from(b)),
            (_, None) => Place::Blank,
            (_, Some(b'#')) => Place::BeforeComment,
            _ => Place::Indentation,
        };
        Stop(Some(RefusedTab {
            line: self.line,
            column: self.column + 1,
            rule,
            place,
        }))
    }

    /// Follow the document to its end, or to the first refused tab.
    fn scan(&mut self) -> Result<(), Stop> {
        loop {
            self.pass_to_token()?;
            if self.at_end() {
                return Ok(());
            }
            let column = self.column;
            if self.flow == 0 {
                while self.indents.last().is_some_and(|&i| i > column) {
                    self.indents.pop();
                }
            }
            let b = self.at(0);
            if column == 0 && b == b'%' {
                // A directive, read to the end of its line.
                self.pass_line();
                self.forget_key();
                self.key_allowed = false;
                continue;
            }
            if column == 0
                && (self.starts_with(b"---") || self.starts_with(b"..."))
                && self.blank_or_end(3)
            {
                self.indents.clear();
                self.forget_key();
                self.key_allowed = false;
                for _ in 0..3 {
                    self.advance();
                }
                if b == b'.' {
                    // The reader goes on to the next token, and no further.
                    self.pass_to_token()?;
                    if self.at(0) == b'\t' {
                        return Err(self.refuse(Rule::NoToken));
                    }
                    return Ok(());
                }
                continue;
            }
            match b {
                b'[' | b'{' => {
                    self.save_key();
                    self.flow += 1;
                    self.keys.push(None);
                    self.key_allowed = true;
                    self.advance();
                }
                b']' | b'}' => {
                    self.forget_key();
                    if self.flow > 0 {
                        self.flow -= 1;
                        self.keys.pop();
                    }
                    self.key_allowed = false;
                    self.advance();
                }
                b',' => {
                    self.forget_key();
                    self.key_allowed = true;
                    self.advance();
                }
                b'-' if self.blank_or_end(1) => {
                    if self.flow == 0 {
                        self.open_block(column);
                    }
                    self.forget_key();
                    self.key_allowed = true;
                    self.advance();
                    // A list entry's dash takes no comment on its line.
                    continue;
                }
                b'?' if self.flow > 0 || self.blank_or_end(1) => {
                    if self.flow == 0 {
                        self.open_block(column);
                    }
                    self.forget_key();
                    self.key_allowed = self.flow == 0;
                    self.advance();
                }
                b':' if self.flow > 0 || self.blank_or_end(1) => {
                    let key = self.keys.last_mut().and_then(Option::take);
                    match key {
                        Some((line, key_column)) if line == self.line => {
                            if self.flow == 0 {
                                self.open_block(key_column);
                            }
                            self.key_allowed = false;
                        }
                        _ => {
                            if self.flow == 0 {
                                self.open_block(column);
                            }
                            self.key_allowed = self.flow == 0;
                        }
                    }
                    self.advance();
                }
                b'&' | b'*' => {
                    self.save_key();
                    self.key_allowed = false;
                    self.advance();
                    while self.at(0).is_ascii_alphanumeric() || matches!(self.at(0), b'_' | b'-') {
                        self.advance();
                    }
                }
                b'!' => {
                    self.save_key();
                    self.key_allowed = false;
                    while !(self.blank_or_end(0)
                        || (self.flow > 0 && matches!(self.at(0), b',' | b']' | b'}')))
                    {
                        self.advance();
                    }
                }
                b'|' | b'>' if self.flow == 0 => {
                    self.forget_key();
                    self.key_allowed = true;
                    self.block_scalar()?;
                }
                b'\'' | b'"' => {
                    self.save_key();
                    self.key_allowed = false;
                    self.quoted(b);
                }
                b'\t' => return Err(self.refuse(Rule::NoToken)),
                _ => {
                    self.save_key();
                    self.plain()?;
                }
            }
            self.line_comment();
        }
    }

    /// Pass blanks, comments and line breaks up to the next token. A tab there is a blank in a
    /// flow collection and where no key may start; elsewhere the token loop refuses it.
    fn pass_to_token(&mut self) -> Result<(), Stop> {
        loop {
            if self.column == 0 && self.starts_with("\u{feff}".as_bytes()) {
                self.advance();
            }
            while self.at(0) == b' '
                || (self.at(0) == b'\t' && (self.flow > 0 || !self.key_allowed))
            {
                self.advance();
            }
            if self.at(0) == b'#' {
                self.comments();
            }
            if self.at_end() || !is_break(self.at(0)) {
                return Ok(());
            }
            self.next_line();
            if self.flow == 0 {
                self.key_allowed = true;
            }
        }
    }

    /// At a `#`: pass the comment, and with it every comment that follows with only blanks
    /// and line breaks before it (within the reader's look-ahead).
    fn comments(&mut self) {
        loop {
            self.pass_line();
            let ahead = &self.bytes[self.pos..];
            let next = ahead
                .iter()
                .take(COMMENT_LOOKAHEAD)
                .position(|&b| !is_blank(b) && !is_break(b));
            match next {
                Some(at) if ahead.get(at) == Some(&b'#') => self.pass_to(self.pos + at),
                _ => return,
            }
        }
    }

    /// After a token: a comment on the rest of its line, tabs before it included.
    fn line_comment(&mut self) {
        if self.newlines > 0 {
            return;
        }
        let ahead = &self.bytes[self.pos..];
        let next = ahead
            .iter()
            .take(COMMENT_LOOKAHEAD)
            .position(|&b| !is_blank(b));
        if let Some(at) = next
            && ahead.get(at) == Some(&b'#')
        {
            self.pass_to(self.pos + at);
            self.pass_line();
        }
    }

    /// A block collection at `column`, unless one is open at it or deeper.
    fn open_block(&mut self, column: u32) {
        if self.indents.last().is_none_or(|&i| i < column) {
            self.indents.push(column);
        }
    }

    fn save_key(&mut self) {
        if self.key_allowed
            && let Some(key) = self.keys.last_mut()
        {
            *key = Some((self.line, self.column));
        }
    }

    fn forget_key(&mut self) {
        if let Some(key) = self.keys.last_mut() {
            *key = None;
        }
    }

    /// A single- or double-quoted scalar: a tab anywhere in it is its own.
    fn quoted(&mut self, quote: u8) {
        self.advance();
        while !self.at_end() {
            let b = self.at(0);
            if quote == b'\'' && b == b'\'' && self.at(1) == b'\'' {
                self.advance();
                self.advance();
            } else if b == quote {
                self.advance();
                return;
            } else if quote == b'"' && b == b'\\' {
                self.advance();
                if is_break(self.at(0)) {
                    self.next_line();
                } else {
                    self.advance();
                }
            } else if is_break(b) {
                self.next_line();
            } else {
                self.advance();
            }
        }
    }

    /// A plain scalar, with the lines that continue it. The indentation of each line after
    /// its first may hold a tab only as deep as the scalar's mapping or list, or deeper.
    fn plain(&mut self) -> Result<(), Stop> {
        let indent = self.indents.last().map_or(0, |&i| i + 1);
        let mut after_break = false;
        loop {
            if self.column == 0
                && (self.starts_with(b"---") || self.starts_with(b"..."))
                && self.blank_or_end(3)
            {
                break;
            }
            if self.at(0) == b'#' {
                break;
            }
            while !self.blank_or_end(0) {
                let b = self.at(0);
                if (b == b':' && self.blank_or_end(1))
                    || (self.flow > 0 && matches!(b, b',' | b'?' | b'[' | b']' | b'{' | b'}'))
                {
                    break;
                }
                after_break = false;
                self.advance();
            }
            if self.at_end() || !(is_blank(self.at(0)) || is_break(self.at(0))) {
                break;
            }
            while !self.at_end() && (is_blank(self.at(0)) || is_break(self.at(0))) {
                if is_break(self.at(0)) {
                    self.next_line();
                    after_break = true;
                } else if after_break && self.column < indent && self.at(0) == b'\t' {
                    return Err(self.refuse(Rule::PlainIndentation));
                } else {
                    self.advance();
                }
            }
            if self.flow == 0 && self.column < indent {
                break;
            }
        }
        self.key_allowed = after_break;
        Ok(())
    }

    /// A block scalar (`|`, `>`), from its indicator to its last line.
    fn block_scalar(&mut self) -> Result<(), Stop> {
        let header_line = self.line;
        let parent = self.indents.last().copied();
        self.advance();
        let mut increment = 0;
        for _ in 0..2 {
            match self.at(0) {
                b'+' | b'-' => self.advance(),
                digit @ b'1'..=b'9' => {
                    increment = u32::from(digit - b'0');
                    self.advance();
                }
                _ => break,
            }
        }
        while is_blank(self.at(0)) {
            self.advance();
        }
        if self.at(0) == b'#' {
            self.pass_line();
        }
        if self.at_end() {
            return Ok(());
        }
        if !is_break(self.at(0)) {
            // Not a header the reader takes: the parser says what is wrong.
            return Err(Stop(None));
        }
        self.next_line();
        let mut indent = match (increment, parent) {
            (0, _) => 0,
            (n, Some(parent)) => parent + n,
            (n, None) => n,
        };
        self.block_breaks(&mut indent, parent, header_line)?;
        while self.column == indent && !self.at_end() {
            self.pass_line();
            if self.at_end() {
                break;
            }
            self.next_line();
            self.block_breaks(&mut indent, parent, header_line)?;
        }
        Ok(())
    }

    /// The indentation and the empty lines before a line of a block scalar. With `indent` 0 the
    /// block's indentation is still to be read: from the deepest of these lines and the next,
    /// at least one deeper than the block's mapping or list.
    fn block_breaks(
        &mut self,
        indent: &mut u32,
        parent: Option<u32>,
        header_line: u32,
    ) -> Result<(), Stop> {
        let mut deepest = 0;
        loop {
            while (*indent == 0 || self.column < *indent) && self.at(0) == b' ' {
                self.advance();
            }
            deepest = deepest.max(self.column);
            if (*indent == 0 || self.column < *indent) && self.at(0) == b'\t' {
                return Err(self.refuse(Rule::BlockIndentation {
                    header_line,
                    first: *indent == 0,
                }));
            }
            if self.at_end() || !is_break(self.at(0)) {
                break;
            }
            self.next_line();
        }
        if *indent == 0 {
            *indent = deepest.max(parent.map_or(0, |p| p + 1)).max(1);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n";

    /// The first refused tab of `text` after [`HEAD`]: its line within the text, its column
    /// and what the tools say of it.
    fn refused(text: &str) -> Option<(u32, u32, &'static str)> {
        let text = format!("{HEAD}{text}");
        let tab = refused_tabs(&text).into_iter().next()?;
        let message = tab.message();
        let rule = [
            "cannot start any token",
            "violates indentation",
            "indentation space",
        ]
        .into_iter()
        .find(|r| message.contains(r))
        .unwrap();
        Some((tab.line, tab.column, rule))
    }

    const TOKEN: &str = "cannot start any token";
    const PLAIN: &str = "violates indentation";
    const BLOCK: &str = "indentation space";

    /// Each case was read by `kubectl kustomize` and `kpt fn source`, which both refuse it at
    /// the line the case names (their message names the line of the token before the tab).
    #[test]
    fn the_tabs_kustomize_and_kpt_refuse_are_found_at_their_place() {
        let cases: &[(&str, (u32, u32, &str))] = &[
            // Lines of blanks with a tab, after a plain value: too little indented.
            ("data:\n  k: v\n\t\n  j: w\n", (7, 1, PLAIN)),
            ("data:\n  k: v\n  \t\n  j: w\n", (7, 3, PLAIN)),
            ("list:\n- a\n\t\n- b\n", (7, 1, PLAIN)),
            ("list:\n- name: x\n  \t\n  image: y\n", (7, 3, PLAIN)),
            ("\t\n", (5, 1, PLAIN)),
            ("\t", (5, 1, PLAIN)),
            ("\t\n---\nkind: B\n", (5, 1, PLAIN)),
            // After a quoted value, a mapping key or a comment: where a token starts.
            ("data:\n  k: \"v\"\n    \t\n  j: w\n", (7, 5, TOKEN)),
            ("data:\n\t\n  k: v\n", (6, 1, TOKEN)),
            ("data:\n    \t\n  k: v\n", (6, 5, TOKEN)),
            ("data:\n  k: v\n# c\n \t\n  j: w\n", (8, 2, TOKEN)),
            ("---\n\t\nkind: B\n", (6, 1, TOKEN)),
            ("---\n\t# c\n---\nkind: B\n", (6, 1, TOKEN)),
            // A comment on a `---` line is left out with the line.
            ("---\t# c\n\t# d\nkind: B\n", (6, 1, TOKEN)),
            ("--- # c\n\t# d\nkind: B\n", (6, 1, TOKEN)),
            ("---\n---\n\t\nkind: B\n", (7, 1, TOKEN)),
            ("data:\n  \"k\": \"v\"\n   \t\n", (7, 4, TOKEN)),
            // Before a comment.
            ("data:\n  k: v\n\t# c\n  j: w\n", (7, 1, PLAIN)),
            ("data:\n  k: \"v\"\n    \t# c\n  j: w\n", (7, 5, TOKEN)),
            ("data:\n  k: v # c\n\t# d\n  j: w\n", (7, 1, TOKEN)),
            // After a list entry's dash, a `?`.
            ("list:\n-\ta\n- b\n", (6, 2, TOKEN)),
            ("list:\n- \ta\n", (6, 3, TOKEN)),
            ("list:\n- - \ta\n", (6, 5, TOKEN)),
            ("list:\n-\t# c\n  a\n", (6, 2, TOKEN)),
            ("list:\n- \tk: v\n", (6, 3, TOKEN)),
            ("data:\n  ?\tk\n  : v\n", (6, 4, TOKEN)),
            ("data:\n  ? k\n  :\tv\n", (7, 4, TOKEN)),
            // In the indentation.
            ("data:\n  k:\n\t  v\n", (7, 1, TOKEN)),
            ("data:\n  k: a\n\tb\n", (7, 1, PLAIN)),
            // Block scalars.
            ("data:\n  k: |\n    a\n\t\n    b\n", (8, 1, BLOCK)),
            ("data:\n  k: |\n    a\n  \t\n    b\n", (8, 3, BLOCK)),
            ("data:\n  k: |\n    a\n\t\n  j: w\n", (8, 1, BLOCK)),
            ("data:\n  k: |\n    a\n\t\n", (8, 1, BLOCK)),
            ("data:\n  k: |\n    a\n\t\n---\nkind: B\n", (8, 1, BLOCK)),
            ("data:\n  k: |\n\t\n    a\n", (7, 1, BLOCK)),
            ("data:\n  k: |\n  \t\n    a\n", (7, 3, BLOCK)),
            ("data:\n  k: |\n    \tx\n", (7, 5, BLOCK)),
            ("data:\n  k: |\n\n    \ta\n", (8, 5, BLOCK)),
            ("data:\n  k: >\n    a\n\t\n    b\n", (8, 1, BLOCK)),
            ("data:\n  k: | # c\n\t# d\n    a\n", (7, 1, BLOCK)),
            ("list:\n- |\n  a\n \t\n", (8, 2, BLOCK)),
            ("data:\n  k: |2\n    a\n   \tb\n", (8, 4, BLOCK)),
            // A comment more than the reader's look-ahead after the one before.
            (
                &format!("data:\n  k: \"v\"\n  # c\n{}\n\t# d\n", " ".repeat(600)),
                (9, 1, TOKEN),
            ),
            // Right after a `...`.
            ("...\n\t\n---\nkind: B\n", (6, 1, TOKEN)),
            ("...\n\t# c\n---\nkind: B\n", (6, 1, TOKEN)),
            // In a flow collection, a plain scalar going on to a line too little indented.
            ("list: [a\n\tb]\n", (6, 1, PLAIN)),
            // Line ends `\r\n`.
            ("data:\r\n  k: v\r\n  \t\r\n  j: w\r\n", (7, 3, PLAIN)),
        ];
        for (text, expected) in cases {
            assert_eq!(refused(text), Some(*expected), "{text:?}");
        }
    }

    /// Each case was read by `kubectl kustomize` and `kpt fn source`, which both take it.
    #[test]
    fn the_tabs_kustomize_and_kpt_take_pass() {
        let cases = [
            // After a key, a value, a tag, an anchor, a flow collection.
            "data:\n  k:\tv\n",
            "data:\n  k: \tv\n",
            "data:\n  k:\t\tv\n",
            "data:\t\n  k: v\n",
            "data:\t# c\n  k: v\n",
            "data:  \t\n  k: v\n",
            "data:\n  k: v\t# c\n",
            "data:\n  k: v \t# c\n",
            "data:\n  k: \"v\"\t# c\n",
            "data:\n  k: v\t\n",
            "data:\n  k\t: v\n",
            "data:\n  a\tb: v\n",
            "data:\n  \"k\":\tv\n",
            "data:\n  k: &x\tv\n",
            "data:\n  k: !!str\tv\n",
            "data:\n  !!str k:\tv\n",
            "data:\n  k: a\tb\n",
            "list:\n- k:\tv\n",
            "list:\n- &a\tb\n",
            "list:\n- a\t\n",
            "list:\n- \"a\"\t# c\n",
            "list: [a]\t# c\n",
            // As deep as the value's mapping or list, after a plain value.
            "data:\n  k: v\n   \t\n  j: w\n",
            "data:\n  k: v\n    \t\n  j: w\n",
            "data:\n  k: v\n    \t# c\n  j: w\n",
            "data:\n  k: a\n    \tb\n",
            "list:\n- a\n  \t\n- b\n",
            "list:\n- a\n  \tb\n",
            "list:\n- name: x\n   \t\n  image: y\n",
            "kind2: v\n \t\nkind3: w\n",
            // In a flow collection.
            "list: [a,\tb]\n",
            "list: [a,\n\tb,\n  \tc]\n",
            "list: [a,\n\t\n  b]\n",
            "data: {k: v,\n\tj: w}\n",
            "list: [a,\n\t]\n",
            "list: [a\n \tb]\n",
            "list: [a, # c\n\t# d\n  b]\n",
            // In quoted scalars.
            "data:\n  k: \"a\n\tb\"\n",
            "data:\n  k: 'a\n\tb'\n",
            "data:\n  k: \"a\n\t\n  b\"\n",
            // Block scalars: after the indentation of the block.
            "data:\n  k: |\n    a\n    \tb\n",
            "data:\n  k: |\n    a\n      \tb\n",
            "data:\n  k: |\n    a\n    \t\n    b\n",
            "data:\n  k: |+\n    a\n     \t\n",
            "data:\n  k: |\t# c\n    a\n",
            "data:\n  k: >\n    a\n    \tb\n    c\n",
            "list:\n- |\n  a\n  \t\n",
            "data: |1\n  a\n \tb\n",
            // Comments that follow a comment.
            "data:\n  k: v\n  # c\n\t# d\n  j: w\n",
            "data:\n  k: \"v\"\n  # c\n\t\n  # d\n  j: w\n",
            // A `---` line right after another is read as a marker, with its comment.
            "---\n--- # c\n\t# d\nkind: B\n",
            // After a document end marker, past the next token.
            "...\t\n---\nkind: B\n",
            "...\nfoo: bar\n\t\n---\nkind: B\n",
            "...\n# c\n\t# d\n---\nkind: B\n",
            // A top-level plain scalar document takes any indentation after it.
            "---\nnull\n\t\n",
        ];
        for text in cases {
            assert_eq!(refused(text), None, "{text:?}");
        }
        // At the start of a stream: a comment, then a comment after a tab; a marker with a
        // comment, then a comment after a tab.
        assert!(refused_tabs(&format!("# c\n\t# d\n{HEAD}")).is_empty());
        assert!(refused_tabs(&format!("--- # c\n\t# d\n{HEAD}")).is_empty());
    }

    /// Each document of a stream is looked at from its `---` line, and yields its first
    /// refused tab.
    #[test]
    fn each_document_yields_its_first_refused_tab() {
        let text = "a: \"1\"\n\t\n\t\n---\nb: 2\n---\nc: \"3\"\n \t\n";
        let lines: Vec<u32> = refused_tabs(text).iter().map(|t| t.line).collect();
        assert_eq!(lines, [2, 8]);
    }

    /// The message says where the tab is, what the tools say, and what to do; a block
    /// scalar's header is named at its line in the file.
    #[test]
    fn the_message_names_the_place_and_the_remedy() {
        let message = |text: &str| refused_tabs(text)[0].message();
        assert_eq!(
            message("a: \"b\"\n  \t\n"),
            "a tab on a line that holds only blanks: kubectl, kustomize and kpt refuse it \
             (\"found character that cannot start any token\"); delete it, or replace it with \
             spaces"
        );
        assert_eq!(
            message("l:\n-\ta\n"),
            "a tab after the `-` of a list entry: kubectl, kustomize and kpt refuse it (\"found \
             character that cannot start any token\"); put a space in its place"
        );
        assert_eq!(
            message("a: \"b\"\n\t# c\n"),
            "a tab before a comment: kubectl, kustomize and kpt refuse it (\"found character \
             that cannot start any token\"); replace it with spaces, or delete it"
        );
        assert_eq!(
            message("a:\n\tb: c\n"),
            "a tab in the indentation of a line: kubectl, kustomize and kpt refuse it (\"found \
             character that cannot start any token\"); indent with spaces only"
        );
        assert_eq!(
            message("a: b\nk: |\n  a\n \tb\n"),
            "a tab in the indentation of the block scalar (`|` or `>`) on line 2: kubectl, \
             kustomize and kpt refuse it (\"found a tab character where an indentation space \
             is expected\"); indent the block's lines with spaces only"
        );
        assert_eq!(
            message("a: b\n---\nk: |\n  \ta\n"),
            "a tab at the start of the first line of the block scalar (`|` or `>`) on line 3, \
             whose indentation is read from that line: kubectl, kustomize and kpt refuse it \
             (\"found a tab character where an indentation space is expected\"); start the line \
             with spaces only, or write the value as a double-quoted string with `\\t` for the \
             tab"
        );
        // The error of a document is placed within it, and names the header's line in the
        // file.
        let tab = &refused_tabs("a: b\n---\nk: |\n  \ta\n")[0];
        let error = tab.error(2);
        assert_eq!((error.line, error.column), (Some(3), Some(3)));
        assert!(error.message.contains("on line 3"));
    }

    /// Whatever the text, the scan ends without a panic.
    #[test]
    fn any_text_is_followed_to_its_end() {
        let parts = [
            "\t", " ", "\n", "\r", "-", "?", ":", "#", "[", "]", "{", "}", ",", "|", ">", "'",
            "\"", "\\", "&a", "*a", "!t", "---", "...", "%Y", "x", "é", "\u{feff}", "|2", "|-",
        ];
        let mut texts = vec![String::new()];
        for a in parts {
            for b in parts {
                for c in parts {
                    texts.push(format!("{a}{b}{c}\t"));
                    texts.push(format!("k: {a}\n{b}{c}\t{a}\n"));
                }
            }
        }
        for text in &texts {
            let _ = refused_tabs(text);
        }
    }
}

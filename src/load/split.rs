//! Splitting a multi-document YAML stream at its document boundaries, without parsing it, so
//! documents can be parsed in parallel and each keeps the line it starts on.
//!
//! YAML forbids a line that starts with `---` or `...` followed by a blank or the end of the line
//! anywhere but at a document boundary (the spec's `c-forbidden`), even inside block scalars, so
//! a line scan finds exactly the boundaries a parser would.
//!
//! What follows a `...` document end marker up to the next `---` is left out of the documents,
//! as kubectl, kustomize and kpt leave it out: their readers cut a stream at `---` lines only and
//! read one document from each piece, so an object written after a `...` with no `---` before it
//! is never applied. YAML would read it as another document. [`split_noting_skipped`] says where
//! such text is, so that the loader can warn about it (or report the error those tools give
//! when the `...` ends no document).
//!
//! A byte order mark may start a line of a document prefix (YAML 1.2, `l-document-prefix`):
//! before a later document's `---` or directives, as `cat a.yaml b.yaml` leaves it when
//! `b.yaml` begins with one, or before anything after a `...`. Such a mark is left out of the
//! document's text, as the one at the start of a file is; anywhere else it stays, and the
//! parser refuses it. (kubectl, kustomize and kpt take such a mark before a `---` only where
//! a piece of theirs begins: the loader reports the others, and the directives they cut off.)

/// One document's text and where it starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chunk<'a> {
    /// The document text, including its `---` line when it has one.
    pub text: &'a str,
    /// The 1-based line of `text`'s first line in the whole stream.
    pub first_line: u32,
    /// The 1-based line of the first line with content (not blank, comment or a bare marker).
    pub content_line: Option<u32>,
}

fn is_marker(line: &str, marker: &str) -> bool {
    line.strip_prefix(marker)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r']))
}

/// Whether `line` is a `---` line as kubectl, kustomize and kpt cut a stream at it: the dashes,
/// then nothing but white space (as Unicode counts it) and a comment.
pub(crate) fn is_separator(line: &str) -> bool {
    line.strip_prefix("---").is_some_and(|rest| {
        let rest = rest.trim();
        rest.is_empty() || rest.starts_with('#')
    })
}

/// Whether `line`, a separator to the tools (see [`is_separator`]), is one that YAML reads as a
/// marker with nothing after it: the dashes, then nothing but spaces, tabs and a comment led
/// by one of them. The others (`---#c`, or a no-break space or a vertical tab after the dashes)
/// YAML reads as content; the tools cut the stream there all the same.
fn is_plain_separator(line: &str) -> bool {
    is_marker(line, "---") && {
        let rest = line[3..].trim_start_matches([' ', '\t']);
        let rest = rest.strip_suffix('\r').unwrap_or(rest);
        rest.is_empty() || rest.starts_with('#')
    }
}

/// Whether `text`, a document, holds nothing but a plain null (`~`, `null`, `Null`, `NULL`) besides
/// comments, blank lines, markers and directives. kubectl, kustomize and kpt skip such a
/// document, as a YAML parser skips an empty one, so it yields no object here either.
fn is_null_document(text: &str) -> bool {
    // A null document is a line or two; anything longer holds more.
    if text.len() > 160 {
        return false;
    }
    let mut values = text.lines().filter_map(|line| {
        let line = line.trim_start_matches(BOM);
        let line = if is_marker(line, "---") {
            &line[3..]
        } else {
            line
        };
        let value = line.split(" #").next().unwrap_or(line).trim();
        has_content(value).then_some(value)
    });
    matches!(values.next(), Some("~" | "null" | "Null" | "NULL")) && values.next().is_none()
}

/// The byte order mark, as it starts a line in UTF-8.
pub(crate) const BOM: &str = "\u{feff}";

fn has_content(line: &str) -> bool {
    let t = line.trim();
    !(t.is_empty() || t.starts_with('#') || t == "---" || t == "..." || t.starts_with('%'))
}

/// Content that follows a `...` marker with no `---` between them, which the Kubernetes tools
/// never read (see the module's documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The 1-based line of the `...` marker.
    pub marker_line: u32,
    /// The 1-based line of the first line with content after it.
    pub content_line: u32,
    /// The marker ends no document: nothing but comments, blank lines and directives comes
    /// before it since the last `---` line (or the start). The Kubernetes tools' YAML reader
    /// then finds no document where it expects one, and refuses the file.
    pub ends_nothing: bool,
}

/// Split `text` into documents. Chunks without any content (only comments, blank lines or
/// markers) are dropped, as a YAML parser yields no object for them, and so is content after a
/// `...` marker up to the next `---`, which the Kubernetes tools do not read.
pub fn split(text: &str) -> Vec<Chunk<'_>> {
    split_noting_skipped(text).0
}

/// [`split`], also saying where content after a `...` marker was left out.
pub fn split_noting_skipped(text: &str) -> (Vec<Chunk<'_>>, Vec<Skipped>) {
    split_in(text, rayon::current_num_threads() * 4, PARALLEL_FROM)
}

/// Texts at least this long are cut into pieces that are split in parallel.
const PARALLEL_FROM: usize = 1 << 20;

/// [`split`], cutting `text` into up to `pieces` pieces when it is at least `min_len` bytes long.
///
/// A piece ends just before a `---` marker line, where a serial scan would end a document too:
/// YAML allows such a line only at a document boundary. Streams with directives (`%YAML`) are
/// split serially, since a directive belongs to the document that the next marker opens.
fn split_in(text: &str, pieces: usize, min_len: usize) -> (Vec<Chunk<'_>>, Vec<Skipped>) {
    use rayon::prelude::*;

    let cuts = if text.len() >= min_len && pieces > 1 && !has_directive(text) {
        cut_points(text, pieces)
    } else {
        Vec::new()
    };
    if cuts.is_empty() {
        let (chunks, skipped, _) = split_serial(text);
        return (chunks, skipped);
    }
    let bounds: Vec<(usize, usize)> = std::iter::once(0)
        .chain(cuts.iter().copied())
        .zip(cuts.iter().copied().chain(std::iter::once(text.len())))
        .collect();
    let parts: Vec<(Vec<Chunk<'_>>, Vec<Skipped>, u32)> = bounds
        .par_iter()
        .map(|&(from, to)| split_serial(&text[from..to]))
        .collect();
    let mut chunks = Vec::with_capacity(parts.iter().map(|(c, _, _)| c.len()).sum());
    let mut all_skipped = Vec::new();
    let mut lines_before = 0u32;
    for (part, skipped, lines) in parts {
        chunks.extend(part.into_iter().map(|mut c| {
            c.first_line += lines_before;
            c.content_line = c.content_line.map(|l| l + lines_before);
            c
        }));
        all_skipped.extend(skipped.into_iter().map(|s| Skipped {
            marker_line: s.marker_line + lines_before,
            content_line: s.content_line + lines_before,
            ..s
        }));
        lines_before += lines;
    }
    (chunks, all_skipped)
}

/// Whether a line of `text` starts with `%` (perhaps after a byte order mark).
fn has_directive(text: &str) -> bool {
    let bytes = text.as_bytes();
    text.trim_start_matches(BOM).starts_with('%')
        || memchr::memmem::find(bytes, b"\n%").is_some()
        || memchr::memmem::find(bytes, b"\n\xef\xbb\xbf%").is_some()
}

/// Up to `pieces - 1` offsets, increasing, each the start of a `---` marker line with nothing
/// but a comment after it.
fn cut_points(text: &str, pieces: usize) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut cuts = Vec::new();
    let mut from = 0usize;
    for i in 1..pieces {
        let target = (text.len() / pieces * i).max(from);
        let mut at = target;
        let found = loop {
            let Some(hit) = memchr::memmem::find(&bytes[at..], b"\n---") else {
                break None;
            };
            let line = at + hit + 1;
            if is_plain_separator(text[line..].split('\n').next().unwrap_or("")) {
                break Some(line);
            }
            at = line;
        };
        match found {
            Some(line) if line > from => {
                cuts.push(line);
                from = line;
            }
            Some(_) => {}
            None => break,
        }
    }
    cuts
}

/// Split serially; also returns the content left out after `...` markers and how many lines
/// `text` has.
///
/// Lines are looked at one by one only until a document has content; after that only a line
/// that starts with `-` or `.` can end it, and the scan jumps to the next such line with a
/// vectorised search, counting the line breaks it passes over.
fn split_serial(text: &str) -> (Vec<Chunk<'_>>, Vec<Skipped>, u32) {
    let bytes = text.as_bytes();
    let mut dash = Ahead::new(b"\n-");
    let mut dot = Ahead::new(b"\n.");
    let mut bom = Ahead::new(b"\n\xef\xbb\xbf");
    let mut documents = Documents::new(text);
    let mut offset = 0usize;
    let mut line_no = 0u32;
    while offset < text.len() {
        if documents.only_markers_matter() && !may_end_a_document(bytes[offset]) {
            let next = [
                dash.find(bytes, offset),
                dot.find(bytes, offset),
                bom.find(bytes, offset),
            ]
            .into_iter()
            .flatten()
            .min()
            .map_or(text.len(), |at| at + 1);
            let skipped = &bytes[offset..next];
            // A last line without a line break is a line too.
            let unterminated = u32::from(skipped.last() != Some(&b'\n'));
            line_no = line_no
                .saturating_add(count_breaks(skipped))
                .saturating_add(unterminated);
            offset = next;
            continue;
        }
        let end = memchr::memchr(b'\n', &bytes[offset..]).map_or(text.len(), |i| offset + i + 1);
        line_no = line_no.saturating_add(1);
        documents.line(offset, end, line_no);
        offset = end;
    }
    let (chunks, skipped) = documents.finish(offset);
    (chunks, skipped, line_no)
}

/// Whether a line that starts with `byte` may end the document it is in: a `---` or `...`
/// marker, or a byte order mark before a marker.
fn may_end_a_document(byte: u8) -> bool {
    matches!(byte, b'-' | b'.') || byte == BOM.as_bytes()[0]
}

/// The documents of a stream, found line by line.
struct Documents<'a> {
    text: &'a str,
    chunks: Vec<Chunk<'a>>,
    /// Where the current document starts, and on which line.
    start: usize,
    start_line: u32,
    /// The first line of the current document with content.
    content_line: Option<u32>,
    /// Directives have been seen since the last marker: the next `---` opens their document.
    in_doc_directives: bool,
    /// No document has begun since the start of the stream or the last `...`: a line here
    /// is part of a document prefix until one with content, a marker or a directive.
    in_prefix: bool,
    /// The line of a `...` marker with no `---` after it yet (what comes now is not read),
    /// and whether it ends no document (see [`Skipped::ends_nothing`]).
    after_end: Option<(u32, bool)>,
    skipped: Vec<Skipped>,
}

impl<'a> Documents<'a> {
    fn new(text: &'a str) -> Self {
        Documents {
            text,
            chunks: Vec::new(),
            start: 0,
            start_line: 1,
            content_line: None,
            in_doc_directives: false,
            in_prefix: true,
            after_end: None,
            skipped: Vec::new(),
        }
    }

    /// Once the current document has content, only a marker line can end it: other lines
    /// need not be looked at.
    fn only_markers_matter(&self) -> bool {
        self.content_line.is_some()
    }

    /// Whether a line that is `rest` after a byte order mark belongs to a document prefix, where
    /// YAML allows the mark: it is a `---` marker or a directive, or comes before any document
    /// has begun (after a `...`). Not after directives: they go right before their `---`.
    fn prefix_line(&self, rest: &str) -> bool {
        !self.in_doc_directives
            && (is_marker(rest, "---")
                || (self.content_line.is_none() && (self.in_prefix || rest.starts_with('%'))))
    }

    /// Take the line `text[offset..end]`, numbered `line_no`.
    fn line(&mut self, offset: usize, end: usize, line_no: u32) {
        let text = self.text;
        let line_start = offset;
        let mut bare = text[offset..end].trim_end_matches(['\n', '\r']);
        let mut offset = offset;
        if let Some(rest) = bare.strip_prefix(BOM)
            && self.prefix_line(rest)
        {
            // The line is read without its mark, and a document that begins on it begins
            // after the mark. Before any content, what came since the last document is blank
            // lines and comments: the next document begins here.
            bare = rest;
            offset += BOM.len();
            if self.content_line.is_none() {
                self.start = offset;
                self.start_line = line_no;
            }
        }
        if is_separator(bare)
            && !is_plain_separator(bare)
            && !text[..line_start].trim_start_matches(BOM).is_empty()
        {
            // The tools end a document here, and the line is no part of the next one: YAML
            // would read what follows the dashes as content. (On the stream's first line they
            // look for no separator, and refuse the line as YAML does.)
            if !self.in_doc_directives && offset > self.start {
                self.push(line_start);
            }
            self.start = end;
            self.start_line = line_no.saturating_add(1);
            self.content_line = None;
            self.in_doc_directives = false;
            self.in_prefix = false;
            self.after_end = None;
        } else if is_marker(bare, "---") {
            if !self.in_doc_directives && offset > self.start {
                self.push(line_start);
                self.start = offset;
                self.start_line = line_no;
                self.content_line = None;
            }
            self.in_doc_directives = false;
            self.in_prefix = false;
            self.after_end = None;
            // `--- value` carries content on the marker line itself.
            if has_content(&bare[3..]) && self.content_line.is_none() {
                self.content_line = Some(line_no);
            }
        } else if is_marker(bare, "...") {
            // Of markers with nothing between them, the first is the one that counts. It ends
            // no document when nothing since the last `---` (or the start) had content: content
            // before it would still be the current document's, or have met a `...` already.
            let counts = self.after_end.is_none() || self.content_line.is_some();
            let ends_nothing = self.content_line.is_none();
            self.push(end);
            if counts {
                self.after_end = Some((line_no, ends_nothing));
            }
            self.start = end;
            self.start_line = line_no.saturating_add(1);
            self.content_line = None;
            self.in_prefix = true;
        } else if bare.starts_with('%') && self.content_line.is_none() {
            // A directive belongs to the document that the next `---` opens.
            if offset > self.start && !self.in_doc_directives {
                self.push(line_start);
                self.start = offset;
                self.start_line = line_no;
            }
            self.in_doc_directives = true;
            self.in_prefix = false;
        } else if self.content_line.is_none() && has_content(bare) {
            self.content_line = Some(line_no);
            self.in_prefix = false;
        }
    }

    /// The current document, ending at `end`, when it has content (a parser yields no object
    /// for one that has none).
    fn push(&mut self, end: usize) {
        if let (Some(content_line), Some((marker_line, ends_nothing))) =
            (self.content_line, self.after_end)
        {
            self.skipped.push(Skipped {
                marker_line,
                content_line,
                ends_nothing,
            });
        } else if let Some(content_line) = self.content_line
            && !is_null_document(&self.text[self.start..end])
        {
            self.chunks.push(Chunk {
                text: &self.text[self.start..end],
                first_line: self.start_line,
                content_line: Some(content_line),
            });
        }
    }

    /// The documents, the last one ending at `end`, and the content left out after `...`.
    fn finish(mut self, end: usize) -> (Vec<Chunk<'a>>, Vec<Skipped>) {
        if end > self.start {
            self.push(end);
        }
        (self.chunks, self.skipped)
    }
}

/// The next occurrence of a needle at or after a position, remembered so that a stream of many
/// documents is searched once over, not once per document.
struct Ahead {
    finder: memchr::memmem::Finder<'static>,
    /// The last search: where it started and what it found (`None`: nothing after the start).
    last: Option<(usize, Option<usize>)>,
}

impl Ahead {
    fn new(needle: &'static [u8]) -> Self {
        Self {
            finder: memchr::memmem::Finder::new(needle),
            last: None,
        }
    }

    /// The first occurrence at or after `from`.
    fn find(&mut self, haystack: &[u8], from: usize) -> Option<usize> {
        match self.last {
            Some((searched, Some(at))) if searched <= from && at >= from => return Some(at),
            Some((searched, None)) if searched <= from => return None,
            _ => {}
        }
        let at = self.finder.find(&haystack[from..]).map(|i| from + i);
        self.last = Some((from, at));
        at
    }
}

/// The number of line breaks in `bytes`, counted in blocks the compiler vectorises.
fn count_breaks(bytes: &[u8]) -> u32 {
    let mut total = 0usize;
    // The sum over a block of at most 255 bytes fits a `u8`.
    for block in bytes.chunks(255) {
        let n = block
            .iter()
            .fold(0u8, |n, &b| n.wrapping_add(u8::from(b == b'\n')));
        total += usize::from(n);
    }
    u32::try_from(total).unwrap_or(u32::MAX)
}

/// Whether `text` has a `{` or `[` before byte `at` (anywhere: in a comment or a string too).
fn flow_before(text: &str, at: usize) -> bool {
    let head = &text.as_bytes()[..at.min(text.len())];
    memchr::memchr2(b'{', b'[', head).is_some()
}

/// A top-level key to read from many documents (see [`TopLevelKey::scalar`]). Its search is
/// prepared once: building a substring searcher costs more than running it over one document.
pub struct TopLevelKey {
    /// `key:`, what the first line of a document starts with when it is the key's line.
    first: String,
    /// Finds `\nkey:`, the start of any later line that is the key's.
    later: memchr::memmem::Finder<'static>,
}

impl TopLevelKey {
    /// Prepare the search for `key`.
    pub fn new(key: &str) -> Self {
        let first = format!("{key}:");
        let later = memchr::memmem::Finder::new(format!("\n{first}").as_bytes()).into_owned();
        TopLevelKey { first, later }
    }

    /// The value of the key in a block-style document, read from its lines without parsing:
    /// the one line that starts (in column 0) with `key:` followed by a plain or simply quoted
    /// scalar. `None` when there is no such line, more than one, the value is not a plain
    /// scalar, or a `{` or `[` comes before the line.
    ///
    /// Only a flow collection lets a parser read a line that starts in column 0 as anything but
    /// a top-level key: it accepts such a line inside a collection opened on an earlier line (in
    /// a string, say). Without one, the line is the key it looks like, and a document read as a
    /// given kind parses as that kind or not at all (a repeated key is an error).
    pub fn scalar<'a>(&self, text: &'a str) -> Option<&'a str> {
        let first = text.starts_with(&self.first).then_some(0);
        let later = self.later.find_iter(text.as_bytes()).map(|at| at + 1);
        let mut found = None;
        for at in first.into_iter().chain(later) {
            if found.is_some() || flow_before(text, at) {
                return None;
            }
            let line = &text[at + self.first.len()..];
            let (rest, after) = line.split_once('\n').unwrap_or((line, ""));
            if continues(after) {
                return None;
            }
            found = Some(line_scalar(rest)?);
        }
        found
    }
}

/// The value on the rest of a `key:` line when it is a plain or simply quoted scalar that
/// ends on that line: its comment and blanks dropped, its quotes taken off. `None` for
/// anything a parser might read otherwise (an escape, a flow collection, an anchor, an alias,
/// a tag, a block scalar) and for an empty value.
pub(crate) fn line_scalar(rest: &str) -> Option<&str> {
    let rest = rest.strip_suffix('\r').unwrap_or(rest);
    let value = rest.split(" #").next().unwrap_or(rest).trim();
    let value = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
        .unwrap_or(value);
    let doubtful =
        value.is_empty() || value.contains(['"', '\'', '\\', '{', '[', '&', '*', '!', '|', '>']);
    (!doubtful).then_some(value)
}

/// Whether `after`, the text after a line holding a plain scalar, goes on with that scalar: its
/// first line with anything but blanks on it is indented. YAML folds such a line into the value
/// (`kind: A` and then `  b` is the kind `A b`). An indented comment cannot, but is let go too.
fn continues(after: &str) -> bool {
    after
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .find(|l| !l.trim_matches([' ', '\t']).is_empty())
        .is_some_and(|l| l.starts_with([' ', '\t']))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_before_looks_only_before_the_offset() {
        let text = "a: 1\nb: {c: 2}\nd: [3]\n";
        assert!(!flow_before(text, 0));
        assert!(!flow_before(text, text.find('{').unwrap()));
        assert!(flow_before(text, text.find('{').unwrap() + 1));
        assert!(flow_before("x: [\n", 100));
        assert!(!flow_before("x: 1\n", 100));
    }

    #[test]
    fn splits_at_markers_and_keeps_lines() {
        let text = "# head\na: 1\n---\n# c\nb: 2\n--- {c: 3}\n...\n---\n";
        let chunks = split(text);
        let got: Vec<(u32, Option<u32>)> = chunks
            .iter()
            .map(|c| (c.first_line, c.content_line))
            .collect();
        assert_eq!(got, vec![(1, Some(2)), (3, Some(5)), (6, Some(6))]);
        assert_eq!(chunks[1].text, "---\n# c\nb: 2\n");
    }

    /// The lines of `text`, each with its line break (as `str::split_inclusive('\n')`).
    fn lines(text: &str) -> impl Iterator<Item = &str> {
        text.split_inclusive('\n')
    }

    /// The split that looks at every line, which the jumping [`split_serial`] must agree with.
    fn split_by_lines(text: &str) -> (Vec<Chunk<'_>>, Vec<Skipped>, u32) {
        let mut documents = Documents::new(text);
        let mut offset = 0;
        let mut line_no = 0u32;
        for line in lines(text) {
            line_no += 1;
            if !documents.only_markers_matter() || may_end_a_document(line.as_bytes()[0]) {
                documents.line(offset, offset + line.len(), line_no);
            }
            offset += line.len();
        }
        let (chunks, skipped) = documents.finish(offset);
        (chunks, skipped, line_no)
    }

    /// A stream with every construct the splitter looks at, many times over.
    fn tricky_stream(copies: usize) -> String {
        let mut text = String::from("# head\n");
        for i in 0..copies {
            match i % 9 {
                0 => text.push_str(&format!("---\na: {i}\nb: |\n  ---x\n  text\n")),
                1 => text.push_str(&format!("--- # c\n\n# only comments\nc: {i}\n...\n")),
                2 => text.push_str("---\n---\n"),
                3 => text.push_str(&format!("--- {{d: {i}}}\n")),
                4 => text.push_str(&format!("---\r\ne: {i}\r\n")),
                5 => text.push_str(&format!("----\nf: {i}\n--- \ng: 1\n")),
                6 => text.push_str(&format!("{BOM}---\nbom: {i}\n")),
                7 => text.push_str(&format!("---\nx: {i}\n...\n# gap\nlost: {i}\n")),
                _ => text.push_str(&format!("---\t\nh:\n  - {i}\n")),
            }
        }
        text
    }

    #[test]
    fn parallel_split_equals_serial_split() {
        let text = tricky_stream(500);
        let (chunks, skipped, _) = split_serial(&text);
        assert!(chunks.len() > 300);
        assert!(skipped.len() > 50);
        for pieces in [2, 3, 8, 64, 1000] {
            assert_eq!(
                split_in(&text, pieces, 0),
                (chunks.clone(), skipped.clone()),
                "{pieces} pieces"
            );
        }
        // Directives keep the split serial, and the result is the same.
        let with_directive = format!("{text}%YAML 1.2\n---\nz: 1\n");
        let (chunks, skipped, _) = split_serial(&with_directive);
        assert_eq!(split_in(&with_directive, 8, 0), (chunks, skipped));
        assert!(has_directive(&with_directive));
        assert!(!has_directive(&text));
    }

    #[test]
    fn jumping_split_equals_line_by_line_split() {
        for text in [
            tricky_stream(300),
            "a: 1".to_string(),
            "a: 1\n---".to_string(),
            "a: 1\nb: 2".to_string(),
            "\n".repeat(1000) + "a: 1\n" + &"\n".repeat(600) + "---\nb: 2",
            "items:\n- a\n- b\n...\n.x\n-\n---\n-- a\n".to_string(),
        ] {
            assert_eq!(split_serial(&text), split_by_lines(&text), "{text:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn any_mix_of_lines_splits_as_line_by_line(
            lines in proptest::collection::vec(
                proptest::sample::select(vec![
                    "---", "--- ", "---\t", "----", "--- a: 1", "...", "... ", "....", ".a",
                    "-", "- a", "-a", "%YAML 1.2", "# c", "", "  ", "a: 1", "b: |", "  ---",
                    "\r", "---\r", "...\r", "c: 2\r", "\u{feff}---", "\u{feff}--- a: 1",
                    "\u{feff}%YAML 1.2", "\u{feff}# c", "\u{feff}a: 1", "\u{feff}...",
                ]),
                0..60,
            ),
            newline_at_end in proptest::bool::ANY,
        ) {
            let mut text = lines.join("\n");
            if newline_at_end {
                text.push('\n');
            }
            proptest::prop_assert_eq!(split_serial(&text), split_by_lines(&text));
        }
    }

    #[test]
    fn line_breaks_are_counted_past_block_ends() {
        for n in [0, 1, 254, 255, 256, 1000] {
            assert_eq!(count_breaks("\n".repeat(n).as_bytes()), n as u32);
            assert_eq!(
                count_breaks(format!("x{}y", "\nab".repeat(n)).as_bytes()),
                n as u32
            );
        }
    }

    #[test]
    fn cut_points_start_marker_lines() {
        let text = tricky_stream(100);
        let cuts = cut_points(&text, 16);
        assert!(cuts.len() > 4);
        assert!(cuts.windows(2).all(|w| w[0] < w[1]));
        for at in cuts {
            assert_eq!(text.as_bytes()[at - 1], b'\n');
            assert!(is_marker(text[at..].lines().next().unwrap_or(""), "---"));
        }
    }

    /// `cat a.yaml b.yaml`, `b.yaml` saved with a byte order mark: the mark begins a document
    /// prefix, as at the start of a file, and is no part of the document's text.
    #[test]
    fn a_byte_order_mark_may_begin_a_document_prefix() {
        let texts = |text| -> Vec<(&str, u32, Option<u32>)> {
            split(text)
                .into_iter()
                .map(|c| (c.text, c.first_line, c.content_line))
                .collect()
        };
        assert_eq!(
            texts("a: 1\n# end of a\n\u{feff}---\nb: 2\n"),
            [
                ("a: 1\n# end of a\n", 1, Some(1)),
                ("---\nb: 2\n", 3, Some(4))
            ]
        );
        assert_eq!(
            texts("a: 1\n\u{feff}--- {b: 2}\n"),
            [("a: 1\n", 1, Some(1)), ("--- {b: 2}\n", 2, Some(2))]
        );
        // After `...`, before a document's directives or its first content.
        assert_eq!(
            texts("a: 1\n...\n\u{feff}%YAML 1.2\n---\nb: 2\n"),
            [
                ("a: 1\n...\n", 1, Some(1)),
                ("%YAML 1.2\n---\nb: 2\n", 3, Some(5))
            ]
        );
        // Content there is not read (see `content_after_an_end_marker_is_not_read`).
        assert_eq!(
            split_noting_skipped("a: 1\n...\n# c\n\u{feff}b: 2\n"),
            (
                vec![Chunk {
                    text: "a: 1\n...\n",
                    first_line: 1,
                    content_line: Some(1)
                }],
                vec![Skipped {
                    marker_line: 2,
                    content_line: 4,
                    ends_nothing: false
                }]
            )
        );
        assert_eq!(
            texts("# c\n\u{feff}# d\nb: 2\n"),
            [("# d\nb: 2\n", 2, Some(3))]
        );
        // Inside a document, or between its directives and its `---`, the mark stays in its
        // text, for the parser to refuse.
        for text in [
            "a: 1\n\u{feff}b: 2\n",
            "---\n\u{feff}b: 2\n",
            "a: 1\n\u{feff}%YAML 1.2\n",
            "%YAML 1.2\n\u{feff}---\nb: 2\n",
        ] {
            let chunks = split(text);
            assert_eq!(chunks.len(), 1, "{text:?}");
            assert_eq!(chunks[0].text, text);
        }
    }

    /// kubectl, kustomize and kpt cut a stream at `---` lines only and read one document of
    /// each piece: an object after a `...` with no `---` before it is never applied.
    #[test]
    fn content_after_an_end_marker_is_not_read() {
        let text = "a: 1\n...\n# gap\n\nb: 2\n...\nc: 3\n---\nd: 4\n...\n---\ne: 5\n...\n";
        let (chunks, skipped) = split_noting_skipped(text);
        let read: Vec<(&str, u32)> = chunks.iter().map(|c| (c.text, c.first_line)).collect();
        assert_eq!(
            read,
            [
                ("a: 1\n...\n", 1),
                ("---\nd: 4\n...\n", 8),
                ("---\ne: 5\n...\n", 11)
            ]
        );
        let at = |marker_line, content_line| Skipped {
            marker_line,
            content_line,
            ends_nothing: false,
        };
        assert_eq!(skipped, [at(2, 5), at(6, 7)]);
        // A marker that ends no document, then content: the tools' reader refuses the file.
        for (text, marker_line, content_line) in [
            ("...\nb: 2\n", 1, 2),
            ("# c\n...\n...\nb: 2\n", 2, 4),
            ("a: 1\n---\n# c\n...\nb: 2\n", 4, 5),
            ("--- # c\n...\nb: 2\n---\nc: 3\n", 2, 3),
        ] {
            let (_, skipped) = split_noting_skipped(text);
            let refused = Skipped {
                marker_line,
                content_line,
                ends_nothing: true,
            };
            assert_eq!(skipped, [refused], "{text:?}");
        }
        let (_, skipped) = split_noting_skipped("--- {a: 1}\n...\nb: 2\n");
        assert!(!skipped[0].ends_nothing);
        // Directives after the marker open the next document with their `---`.
        let (chunks, skipped) = split_noting_skipped("a: 1\n...\n%YAML 1.2\n---\nb: 2\n");
        assert_eq!(chunks.len(), 2);
        assert!(skipped.is_empty());
        // Only comments and blank lines after the marker: nothing is left out.
        assert!(split_noting_skipped("a: 1\n...\n# end\n\n").1.is_empty());
    }

    /// kubectl, kustomize and kpt skip a document that is only a null, as `yq` or
    /// `yaml.dump(None)` write one between objects.
    #[test]
    fn a_null_document_is_no_document() {
        for text in [
            "a: 1\n---\nnull\n---\nb: 2\n",
            "a: 1\n--- ~\nb: 2\n",
            "a: 1\n---\n# nothing\n~ # here\n---\nb: 2\n",
            "a: 1\n---\nNULL\n...\n---\nb: 2\n",
        ] {
            let texts: Vec<&str> = split(text).iter().map(|c| c.text.trim_end()).collect();
            assert_eq!(texts.len(), 2, "{text:?}: {texts:?}");
        }
        // Anything more is a document, for the parser to read.
        for (text, documents) in [
            ("a: 1\n---\nnull: 1\n", 2),
            ("---\nnuLL\n", 1),
            ("---\n~\nx\n", 1),
            ("--- null x\n", 1),
        ] {
            assert_eq!(split(text).len(), documents, "{text:?}");
        }
    }

    #[test]
    fn block_scalar_with_dashes_inside_is_not_a_boundary() {
        let text = "a: |\n  ---\n  x\nb: 1\n";
        assert_eq!(split(text).len(), 1);
    }

    #[test]
    fn marker_needs_a_blank_after_it() {
        assert_eq!(split("a: 1\n----\nb: 2\n").len(), 1);
        assert_eq!(split("a: 1\n---\t\nb: 2\n").len(), 2);
    }

    #[test]
    fn a_separator_yaml_takes_for_content_ends_a_document_and_is_left_out() {
        for separator in ["---#c", "---\u{a0}", "--- \u{a0}#c", "---\u{b}\r"] {
            let text = format!("# c\n{separator}\na: 1\n{separator}\n# c\nb: 2\n{separator}\n");
            let chunks = split(&text);
            let texts: Vec<&str> = chunks.iter().map(|c| c.text).collect();
            assert_eq!(texts, ["a: 1\n", "# c\nb: 2\n"], "{separator:?}");
            let lines: Vec<_> = chunks
                .iter()
                .map(|c| (c.first_line, c.content_line))
                .collect();
            assert_eq!(lines, [(3, Some(3)), (5, Some(6))], "{separator:?}");
            // On the first line it is no separator to the tools: the parser refuses it.
            let first = split(&text[4..]);
            assert!(first[0].text.starts_with(separator), "{separator:?}");
            let marked = format!("{BOM}{}", &text[4..]);
            let first = split(&marked);
            assert!(first[0].text.starts_with(separator), "{separator:?}");
        }
        for line in ["---", "--- # c", "---\t#c", "---\r"] {
            assert!(is_plain_separator(line), "{line:?}");
        }
        for line in ["---#c", "--- \u{a0}", "---\u{85}"] {
            assert!(is_separator(line) && !is_plain_separator(line), "{line:?}");
        }
    }

    #[test]
    fn empty_and_comment_only_streams_have_no_documents() {
        assert!(split("").is_empty());
        assert!(split("# nothing\n---\n---\n").is_empty());
    }

    fn top_level_scalar<'a>(text: &'a str, key: &str) -> Option<&'a str> {
        TopLevelKey::new(key).scalar(text)
    }

    #[test]
    fn top_level_scalars_are_read_from_column_zero() {
        let doc = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine # vm\nmetadata:\n  kind: x\n";
        assert_eq!(top_level_scalar(doc, "kind"), Some("VirtualMachine"));
        assert_eq!(top_level_scalar(doc, "apiVersion"), Some("kubevirt.io/v1"));
        assert_eq!(top_level_scalar("kind: 'A'\n", "kind"), Some("A"));
        assert_eq!(top_level_scalar("kinds: A\n", "kind"), None);
        assert_eq!(top_level_scalar("kind: A\nkind: B\n", "kind"), None);
        assert_eq!(top_level_scalar("kind: *a\n", "kind"), None);
        assert_eq!(top_level_scalar("{kind: A}\n", "kind"), None);
        assert_eq!(top_level_scalar("a:\n  kind: A\n", "kind"), None);
        assert_eq!(
            top_level_scalar("x: kind: A\nkind: B\r\n", "kind"),
            Some("B")
        );
        assert_eq!(
            top_level_scalar("kind: A # c\nakind: B\n", "kind"),
            Some("A")
        );
        assert_eq!(top_level_scalar("kind: A\r\nkind: B\r\n", "kind"), None);
        assert_eq!(top_level_scalar("a: 1\r\nkind: K\r\n", "kind"), Some("K"));
        assert_eq!(top_level_scalar("a: 1\nkind:", "kind"), None);
        // After a flow collection opens, a line in column 0 may belong to it.
        assert_eq!(top_level_scalar("a: {b: 1}\nkind: K\n", "kind"), None);
        assert_eq!(top_level_scalar("# [x]\nkind: K\n", "kind"), None);
        assert_eq!(top_level_scalar("kind: K\na: [1]\n", "kind"), Some("K"));
        // A plain scalar goes on over indented lines, after blank ones too.
        assert_eq!(top_level_scalar("kind: K\n  p\n", "kind"), None);
        assert_eq!(
            top_level_scalar("kind: K\n\n \r\n\tp\nx: 1\n", "kind"),
            None
        );
        assert_eq!(top_level_scalar("kind: K\n\nx: 1\n", "kind"), Some("K"));
        assert_eq!(top_level_scalar("kind: K\n", "kind"), Some("K"));
    }
}

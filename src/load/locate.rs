//! Finding the line of a field inside a document's text, for diagnostics and for rendered
//! objects that point at the size row or template leaf they came from.
//!
//! The YAML layer gives us value trees without spans, so we walk the source text instead:
//! block mappings and block sequences are matched by indentation, each key searched only among
//! the entries of its parent. Flow collections (`{a: 1}`, `[a, 1]`) are not entered; the
//! search then stops at the deepest line it found. This is a best-effort locator: it never
//! fails, at worst it answers the line of the deepest ancestor, or the document's first line.

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

fn is_boundary(text: &str) -> bool {
    text == "---" || text == "..." || text.starts_with("--- ")
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
    rest == ":" || rest.starts_with(": ")
}

/// The 1-based line of the value at `path` in the document whose first content line is
/// `doc_line`, or the deepest ancestor found.
pub fn locate(text: &str, doc_line: u32, path: &[Step<'_>]) -> u32 {
    let lines: Vec<&str> = text.lines().collect();
    locate_in_lines(&lines, doc_line, path)
}

/// One step of the way to the place a JSON scan is at.
#[derive(Debug, PartialEq)]
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

/// [`locate`] for a document written as JSON (its first content line starts with `{`): the
/// text is scanned token by token, the line of each key and list item noted against `path`.
fn locate_json(lines: &[&str], doc_line: u32, path: &[Step<'_>]) -> u32 {
    let matches = |here: &[Here]| {
        here.len() <= path.len()
            && here.iter().zip(path).all(|(h, p)| match (h, p) {
                (Here::Key(a), Step::Key(b)) => a == b,
                (Here::Index(a), Step::Index(b)) => a == b,
                _ => false,
            })
    };
    let (mut best, mut best_depth) = (doc_line, 0);
    let mut frames: Vec<Frame> = Vec::new();
    let mut here: Vec<Here> = Vec::new();
    // Whether the innermost frame pushed a step onto `here` for its current entry.
    let mut pushed: Vec<bool> = Vec::new();
    let start = (doc_line as usize).saturating_sub(1);
    for (offset, line) in lines.iter().enumerate().skip(start) {
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
                if matches(&here) && here.len() > best_depth {
                    (best, best_depth) = (number, here.len());
                    if best_depth == path.len() {
                        return best;
                    }
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
                        if matches(&here) && here.len() > best_depth {
                            (best, best_depth) = (number, here.len());
                            if best_depth == path.len() {
                                return best;
                            }
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
                        return best;
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
    best
}

/// [`locate`] on a text already cut into lines: for callers that look up many paths in the
/// same text.
pub fn locate_in_lines(lines: &[&str], doc_line: u32, path: &[Step<'_>]) -> u32 {
    let start = (doc_line as usize).saturating_sub(1);
    if lines
        .get(start)
        .is_some_and(|l| l.trim_start().starts_with('{'))
    {
        return locate_json(lines, doc_line, path);
    }
    let mut found = doc_line;
    // The position to scan from and the indentation of the entries of the current node, which
    // we learn from the first entry we meet.
    let mut pos = (doc_line as usize).saturating_sub(1);
    // For an entry that begins on a `- ` line, the first key sits after the dash.
    let mut first_after_dash = false;
    for step in path {
        let result = match step {
            Step::Key(key) => find_key(lines, pos, first_after_dash, key),
            Step::Index(n) => find_item(lines, pos, *n),
        };
        let Some((line_index, dash_item)) = result else {
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

/// The line of `key` among the entries that start at `pos`. Returns (line index, false).
fn find_key(
    lines: &[&str],
    pos: usize,
    first_after_dash: bool,
    key: &str,
) -> Option<(usize, bool)> {
    let mut entry_indent: Option<usize> = None;
    for (i, raw) in lines.iter().enumerate().skip(pos) {
        let Some(line) = classify(raw) else { continue };
        if is_boundary(line.text) {
            return None;
        }
        let (indent, text) = if first_after_dash && i == pos {
            let after = line.text.strip_prefix('-')?.trim_start_matches(' ');
            (line.indent + (line.text.len() - after.len()), after)
        } else {
            (line.indent, line.text)
        };
        let want = *entry_indent.get_or_insert(indent);
        if indent < want {
            return None;
        }
        if indent == want && starts_with_key(text, key) {
            return Some((i, false));
        }
    }
    None
}

/// The line of item `n` of the block sequence that starts at `pos`. Returns (line index, true).
fn find_item(lines: &[&str], pos: usize, n: usize) -> Option<(usize, bool)> {
    let mut item_indent: Option<usize> = None;
    let mut seen = 0usize;
    for (i, raw) in lines.iter().enumerate().skip(pos) {
        let Some(line) = classify(raw) else { continue };
        if is_boundary(line.text) {
            return None;
        }
        let want = *item_indent.get_or_insert(line.indent);
        if line.indent < want {
            return None;
        }
        if line.indent == want {
            if !(line.text == "-" || line.text.starts_with("- ")) {
                return None;
            }
            if seen == n {
                return Some((i, true));
            }
            seen += 1;
        }
    }
    None
}

/// Whether the value at a key line is a block scalar (`key: |` or `key: >`), whose content
/// starts on the next line.
pub fn is_block_scalar(text: &str, line: u32) -> bool {
    let Some(raw) = text.lines().nth((line as usize).saturating_sub(1)) else {
        return false;
    };
    raw.split_once(": ")
        .map(|(_, v)| v.trim_start())
        .or_else(|| raw.trim_end().strip_suffix(':').map(|_| ""))
        .is_some_and(|v| v.starts_with('|') || v.starts_with('>'))
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
            Step::Key(key) => find_key(&lines, pos, first_after_dash, key),
            Step::Index(n) => find_item(&lines, pos, n),
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
    for (i, raw) in lines.iter().enumerate().skip(pos) {
        let Some(line) = classify(raw) else { continue };
        let want = *item_indent.get_or_insert(line.indent);
        if is_boundary(line.text) || line.indent < want {
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

#[cfg(test)]
mod tests {

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

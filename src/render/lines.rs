//! Finding the line of a field inside a catalog file, so errors and rendered objects point at
//! the size row or template leaf they came from.
//!
//! The YAML layer gives us value trees without spans, so we walk the source text instead:
//! block mappings and block sequences are matched by indentation. Flow collections
//! (`{a: 1}`, `[a, 1]`) are not entered; the search then stops at the deepest line it found,
//! which is the line of the flow collection itself. This is a best-effort locator: it never
//! fails, at worst it returns the document's first line.

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
    let mut found = doc_line;
    // The position to scan from and the indentation of the entries of the current node, which
    // we learn from the first entry we meet.
    let mut pos = (doc_line as usize).saturating_sub(1);
    // For an entry that begins on a `- ` line, the first key sits after the dash.
    let mut first_after_dash = false;
    for step in path {
        let result = match step {
            Step::Key(key) => find_key(&lines, pos, first_after_dash, key),
            Step::Index(n) => find_item(&lines, pos, *n),
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

#[cfg(test)]
mod tests {
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

//! Findings on lines that hold a variable reference such as `${cluster_name}`, or a template
//! expression such as `{{ .Values.size }}`.
//!
//! Flux's post-build substitution and `envsubst` replace `${name}` (and Flux's `${name:=default}`)
//! before a manifest reaches the cluster, so a file kept for them is not yet what the cluster
//! gets: `name: ${cluster_name}-db` is not a valid name and `memory.guest: ${memory}` is not a
//! quantity. kvrender reads manifests as the cluster gets them; when a finding points at a line
//! that holds such a reference, it says so and how to substitute first.

use foldhash::HashMap;

use crate::diagnostic::Diagnostic;
use crate::load::Source;

/// Add to each finding whose line holds a variable reference a note naming the reference and
/// the command to run instead: `flux envsubst --strict < FILE | kvrender COMMAND -`.
pub fn note_variables<'s>(
    diags: &mut [Diagnostic],
    sources: impl IntoIterator<Item = &'s Source>,
    command: &str,
) {
    if diags.is_empty() {
        return;
    }
    // Only files that hold `${` or `{{` at all are looked at line by line. kvrender's own
    // catalog documents (`kvrender.io`) are templates by design: their `{{` is kvrender's.
    let mut files: HashMap<&str, (Lines<'_>, bool)> = sources
        .into_iter()
        .filter_map(|s| {
            let find = |needle: &[u8]| memchr::memmem::find(&s.bytes, needle).is_some();
            let expressions = find(b"{{") && !find(b"kvrender.io/");
            (find(b"${") || expressions).then(|| (&*s.path, (Lines::new(&s.bytes), expressions)))
        })
        .collect();
    if files.is_empty() {
        return;
    }
    for d in diags.iter_mut() {
        let Some(line) = d.origin.line else {
            continue;
        };
        let Some((lines, expressions)) = files.get_mut(&*d.origin.path) else {
            continue;
        };
        let Some(text) = lines.line(line) else {
            continue;
        };
        let Some(reference) = first_reference(text) else {
            // A syntax error already says that the document holds template markers.
            let told = d.message.contains("render it first");
            if let Some(expression) = first_expression(text).filter(|_| *expressions && !told) {
                d.message.push_str(&format!(
                    "; `{expression}` is a template expression, which Helm or another \
                     template engine fills in before the cluster sees the manifest: render it \
                     first and give kvrender the result (`helm template ... | kvrender \
                     {command} -`)"
                ));
            }
            continue;
        };
        let input = if &*d.origin.path == "-" {
            "FILE".to_string()
        } else {
            shell_word(&d.origin.path)
        };
        d.message.push_str(&format!(
            "; `{reference}` is a variable reference, which Flux's post-build substitution \
             or `envsubst` replaces before the cluster sees the manifest: substitute first \
             (`flux envsubst --strict < {input} | kvrender {command} -`)"
        ));
    }
}

/// The lines of one file, indexed on first use.
struct Lines<'a> {
    bytes: &'a [u8],
    starts: Option<Vec<usize>>,
}

impl<'a> Lines<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Lines {
            bytes,
            starts: None,
        }
    }

    /// Line `number` (1-based), without its line break.
    fn line(&mut self, number: u32) -> Option<&'a [u8]> {
        let bytes = self.bytes;
        let starts = self.starts.get_or_insert_with(|| {
            std::iter::once(0)
                .chain(memchr::memchr_iter(b'\n', bytes).map(|i| i + 1))
                .collect()
        });
        let index = usize::try_from(number).ok()?.checked_sub(1)?;
        let start = *starts.get(index)?;
        let end = starts.get(index + 1).map_or(bytes.len(), |next| next - 1);
        Some(&bytes[start..end])
    }
}

/// The first `${name...}` of `line`, as written (at most 64 bytes of it, up to its `}`): a `$`,
/// a `{`, then a letter or `_`.
fn first_reference(line: &[u8]) -> Option<String> {
    const LONGEST: usize = 64;
    for at in memchr::memmem::find_iter(line, b"${") {
        let rest = &line[at + 2..];
        if !rest
            .first()
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        {
            continue;
        }
        let Some(close) = rest.iter().take(LONGEST).position(|b| *b == b'}') else {
            continue;
        };
        let reference = &line[at..at + 2 + close + 1];
        // A reference is shown only when it is plain text: no backtick to break the quoting
        // and no control character.
        let text = std::str::from_utf8(reference).ok()?;
        if text.chars().any(|c| c == '`' || c.is_control()) {
            continue;
        }
        return Some(text.to_string());
    }
    None
}

/// The first `{{ ... }}` of `line`, as written (at most 64 bytes of it), when it is plain
/// text (no backtick, no control character).
fn first_expression(line: &[u8]) -> Option<String> {
    const LONGEST: usize = 64;
    let at = memchr::memmem::find(line, b"{{")?;
    let close = memchr::memmem::find(&line[at + 2..], b"}}")?;
    let expression = &line[at..at + 2 + close + 2];
    let text = std::str::from_utf8(expression).ok()?;
    (expression.len() <= LONGEST && !text.chars().any(|c| c == '`' || c.is_control()))
        .then(|| text.to_string())
}

/// `path` as one word of a shell command: as it is when it holds only characters no shell
/// treats specially, otherwise in single quotes.
pub(crate) fn shell_word(path: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c);
    if !path.is_empty() && path.chars().all(plain) {
        path.to_string()
    } else {
        format!("'{}'", path.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;

    fn source(path: &str, text: &str) -> Source {
        Source {
            path: path.into(),
            bytes: text.as_bytes().to_vec(),
        }
    }

    fn finding(path: &str, line: u32) -> Diagnostic {
        Diagnostic::error("KV003", Origin::new(path, 0, Some(line)), "bad")
    }

    #[test]
    fn a_finding_on_a_line_with_a_reference_names_it_and_the_command() {
        let sources = [source(
            "vms/db.yaml",
            "kind: VirtualMachine\nmetadata:\n  name: ${cluster_name}-db\n  namespace: ${ns:=a}\r\n",
        )];
        let mut diags = vec![
            finding("vms/db.yaml", 3),
            finding("vms/db.yaml", 4),
            finding("vms/db.yaml", 1),
            finding("other.yaml", 3),
        ];
        note_variables(&mut diags, &sources, "validate");
        assert_eq!(
            diags[0].message,
            "bad; `${cluster_name}` is a variable reference, which Flux's post-build \
             substitution or `envsubst` replaces before the cluster sees the manifest: \
             substitute first (`flux envsubst --strict < vms/db.yaml | kvrender validate -`)"
        );
        assert!(
            diags[1]
                .message
                .starts_with("bad; `${ns:=a}` is a variable reference")
        );
        assert_eq!(diags[2].message, "bad");
        assert_eq!(diags[3].message, "bad");
    }

    #[test]
    fn a_finding_on_a_line_with_a_template_expression_says_to_render_first() {
        let text = "metadata:\n  name: \"{{ .Release.Name }}-vm\"\n  ns: ${ns} {{ x }}\n\
                    a: \"{{ unclosed\"\n";
        let sources = [source("chart/vm.yaml", text)];
        let mut diags = vec![
            finding("chart/vm.yaml", 2),
            finding("chart/vm.yaml", 3),
            finding("chart/vm.yaml", 4),
        ];
        note_variables(&mut diags, &sources, "validate");
        assert_eq!(
            diags[0].message,
            "bad; `{{ .Release.Name }}` is a template expression, which Helm or another \
             template engine fills in before the cluster sees the manifest: render it first \
             and give kvrender the result (`helm template ... | kvrender validate -`)"
        );
        // A variable reference on the line is named instead.
        assert!(
            diags[1]
                .message
                .starts_with("bad; `${ns}` is a variable reference")
        );
        assert_eq!(diags[2].message, "bad");
        // A syntax error that says so already is not told twice.
        let said = "invalid; the document holds template markers: render it first";
        let mut diags = vec![finding("chart/vm.yaml", 2)];
        diags[0].message = said.to_string();
        note_variables(&mut diags, &sources, "validate");
        assert_eq!(diags[0].message, said);
        // kvrender's own catalog documents are templates by design.
        let catalog = "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nx: \"{{ size.cpu }}\"\n";
        let mut diags = vec![finding("catalog.yaml", 3)];
        note_variables(&mut diags, &[source("catalog.yaml", catalog)], "build");
        assert_eq!(diags[0].message, "bad");
        assert_eq!(first_expression(b"{{ a`b }}"), None);
        assert_eq!(
            first_expression(format!("{{{{ {} }}}}", "x".repeat(70)).as_bytes()),
            None
        );
    }

    #[test]
    fn what_is_not_a_reference_adds_nothing() {
        for line in [
            "  image: $HOME",
            "  name: ${}",
            "  name: ${1abc}",
            "  name: ${unclosed",
            "  name: $ {spaced}",
            "  name: ${a`b}",
        ] {
            assert_eq!(first_reference(line.as_bytes()), None, "{line}");
        }
        assert_eq!(
            first_reference(b"a: ${} then ${_b}").as_deref(),
            Some("${_b}")
        );
    }

    #[test]
    fn stdin_and_paths_a_shell_would_split_are_shown_as_a_command_can_use_them() {
        let sources = [
            source("-", "name: ${a}\n"),
            source("my vms/x.yaml", "${b}\n"),
        ];
        let mut diags = vec![finding("-", 1), finding("my vms/x.yaml", 1)];
        note_variables(&mut diags, &sources, "expand");
        assert!(
            diags[0]
                .message
                .ends_with("(`flux envsubst --strict < FILE | kvrender expand -`)")
        );
        assert!(
            diags[1]
                .message
                .ends_with("(`flux envsubst --strict < 'my vms/x.yaml' | kvrender expand -`)")
        );
    }

    #[test]
    fn a_line_past_the_end_of_the_file_adds_nothing() {
        let sources = [source("a.yaml", "${a}")];
        let mut diags = vec![finding("a.yaml", 2), finding("a.yaml", 0)];
        note_variables(&mut diags, &sources, "validate");
        assert!(diags.iter().all(|d| d.message == "bad"));
    }
}

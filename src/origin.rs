//! Where an object came from and how we name it.
//!
//! [`Origin`] mirrors the KRM internal annotations `internal.config.kubernetes.io/path` and
//! `internal.config.kubernetes.io/index`, plus the line the document starts on when we read it
//! from disk. [`ObjectRef`] is the one identity format used in every message:
//! `Kind/namespace/name` (or `Kind/name` for cluster-scoped objects).

use std::fmt;
use std::sync::Arc;

/// The place a document was read from.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Origin {
    /// The file path as the user gave it (`-` for stdin, a catalog path for rendered objects).
    pub path: Arc<str>,
    /// The index of the document inside its file (0-based).
    pub index: usize,
    /// The 1-based line where the document starts, when known.
    pub line: Option<u32>,
}

impl Origin {
    /// An origin for document `index` of `path`, starting at `line`.
    pub fn new(path: impl Into<Arc<str>>, index: usize, line: Option<u32>) -> Self {
        Origin {
            path: path.into(),
            index,
            line,
        }
    }

    /// The same origin pointing at another line (e.g. the line of a field).
    #[must_use]
    pub fn at_line(&self, line: Option<u32>) -> Self {
        Origin {
            line: line.or(self.line),
            ..self.clone()
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}", self.path, line),
            None => write!(f, "{}", self.path),
        }
    }
}

/// The identity of a Kubernetes object.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    /// `group/version` or `version`.
    pub api_version: String,
    /// The object's kind.
    pub kind: String,
    /// The namespace; `None` for cluster-scoped objects or when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The object's name (may be empty for a nameless object).
    pub name: String,
}

impl fmt::Display for ObjectRef {
    /// `kind/namespace/name`. A part longer than any Kubernetes name (253 characters) is shown
    /// shortened: it came from hostile input, and a diagnostic stays one readable line. A
    /// part with anything but letters, digits, `.`, `-`, `_` and `:` (a `/`, a space, a
    /// control character, `{{ }}` of a template), a shortened one, and `.` and `..` are shown
    /// quoted and escaped, in every finding alike.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let part = |text: &str, empty: &str| -> String {
            if text.is_empty() {
                return empty.to_string();
            }
            let long = text.len() > 253;
            let shown = if long {
                crate::diagnostic::shortened(text)
            } else {
                text.to_string()
            };
            let plain = !long
                && !matches!(text, "." | "..")
                && text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'));
            if plain { shown } else { format!("{shown:?}") }
        };
        let kind = part(&self.kind, "<no kind>");
        let name = part(&self.name, "<no name>");
        match &self.namespace {
            Some(ns) => write!(f, "{kind}/{}/{name}", part(ns, "")),
            None => write!(f, "{kind}/{name}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(kind: &str, namespace: Option<&str>, name: &str) -> String {
        ObjectRef {
            api_version: "v1".into(),
            kind: kind.into(),
            namespace: namespace.map(str::to_string),
            name: name.into(),
        }
        .to_string()
    }

    #[test]
    fn a_part_that_is_not_a_plain_name_is_quoted_in_every_finding() {
        assert_eq!(
            shown("VirtualMachine", None, "web-1.a_b"),
            "VirtualMachine/web-1.a_b"
        );
        assert_eq!(
            shown("ClusterRole", None, "system:node"),
            "ClusterRole/system:node"
        );
        assert_eq!(
            shown("VirtualMachine", Some("prod"), "Web"),
            "VirtualMachine/prod/Web"
        );
        assert_eq!(
            shown("VirtualMachine", None, "{{ .Release.Name }}-vm"),
            "VirtualMachine/\"{{ .Release.Name }}-vm\""
        );
        assert_eq!(
            shown("VirtualMachine", Some("../etc"), "a/b"),
            "VirtualMachine/\"../etc\"/\"a/b\""
        );
        assert_eq!(shown("VirtualMachine", None, ".."), "VirtualMachine/\"..\"");
        assert_eq!(
            shown("VirtualMachine", None, "nul\0"),
            "VirtualMachine/\"nul\\0\""
        );
        assert_eq!(shown("", None, ""), "<no kind>/<no name>");
        let long = "a".repeat(300);
        assert_eq!(
            shown("VirtualMachine", None, &long),
            format!("VirtualMachine/\"{}...\"", "a".repeat(64))
        );
    }
}

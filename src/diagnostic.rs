//! Findings about manifests, collected as values (never returned as `Err`).
//!
//! One [`Diagnostic`] type feeds every output format: the concise and human lines, JSON, GitHub
//! workflow commands, SARIF and KRM `results`. Printing lives in `emit`.

use std::cmp::Ordering;

use crate::origin::{ObjectRef, Origin};

mod near;

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The cluster would refuse the object, or kvrender could not process it.
    Error,
    /// Probably wrong, but the cluster would accept it.
    Warning,
    /// For information.
    Info,
}

impl Severity {
    /// The lowercase name used in every format.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// One finding about one object (or one document that is not an object yet).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Stable code, e.g. `KV001`.
    pub code: &'static str,
    /// Severity.
    pub severity: Severity,
    /// What is wrong, in one sentence.
    pub message: String,
    /// The object concerned, when the document parsed far enough to name it.
    pub object: Option<ObjectRef>,
    /// The field concerned, as a dotted path.
    pub field: Option<String>,
    /// Where: file, document index and line.
    pub origin: Origin,
    /// The 1-based column, when known (YAML syntax errors).
    pub column: Option<u32>,
    /// How the finding relates to others that may explain it (see [`sort`]).
    pub cascade: Cascade,
    /// Another place the message names, such as the first of two definitions
    /// (`first at a.yaml:3`): a step that renames files renames it in the message too.
    pub related: Option<Box<Origin>>,
}

/// How a finding relates to the findings that may explain it (see [`sort`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Cascade {
    /// Neither explains nor is explained.
    #[default]
    Independent,
    /// A name looked up and not found: an instancetype or preference (`KV011`), a part.
    Unresolved,
    /// A document that does not parse and whose text names an instancetype, preference or
    /// catalog kind: it may define a name that is then not found.
    MayDefine,
    /// A finding that follows from an instancetype not found (`KV033`: the VM's own CPU and
    /// memory counted instead): it goes where that `KV011` goes.
    FollowsUnresolved,
    /// A catalog mistake other than a `KV040` that stops the catalog from rendering (a family
    /// or preference defined twice, two entries rendering one object): as with a `KV040`,
    /// the names the catalog would define are not found meanwhile.
    StopsRender,
}

impl Diagnostic {
    /// A new error-severity diagnostic.
    pub fn error(code: &'static str, origin: Origin, message: impl Into<String>) -> Self {
        Diagnostic {
            code,
            severity: Severity::Error,
            message: message.into(),
            object: None,
            field: None,
            origin,
            column: None,
            cascade: if code == codes::REFERENCE_NOT_FOUND {
                Cascade::Unresolved
            } else {
                Cascade::Independent
            },
            related: None,
        }
    }

    /// A new warning.
    pub fn warning(code: &'static str, origin: Origin, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, origin, message)
        }
    }

    /// Attach the object this is about.
    #[must_use]
    pub fn with_object(mut self, object: ObjectRef) -> Self {
        self.object = Some(object);
        self
    }

    /// Attach the other place the message names (see [`Diagnostic::related`]).
    #[must_use]
    pub fn with_related(mut self, related: Origin) -> Self {
        self.related = Some(Box::new(related));
        self
    }

    /// Name `related`'s file as `path` in the message and in [`Diagnostic::related`]: the last
    /// place the message writes the old origin (after a space, as `first at a.yaml:3`) is
    /// rewritten. A message that does not write it is left as it is.
    pub fn rename_related(&mut self, path: &str) {
        if let Some(message) = self.message_renaming_related(path) {
            self.message = message;
        }
        if let Some(related) = self.related.as_deref_mut() {
            related.path = path.into();
        }
    }

    /// The message as [`Diagnostic::rename_related`] rewrites it, leaving the finding as it
    /// is; `None` when the message does not write a place of [`Diagnostic::related`].
    pub fn message_renaming_related(&self, path: &str) -> Option<String> {
        let related = self.related.as_deref()?;
        let old = format!(" {related}");
        let at = self.message.rfind(&old)?;
        let renamed = Origin {
            path: path.into(),
            ..related.clone()
        };
        let mut message = self.message.clone();
        message.replace_range(at..at + old.len(), &format!(" {renamed}"));
        Some(message)
    }

    /// Attach the field this is about.
    #[must_use]
    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// Point the finding at the line of the first field it names (KubeVirt names some fields
    /// together, joined with `, `), as `origin_of` finds it in the object's document; a finding
    /// without a field stays where it is.
    pub fn point_at_field(&mut self, origin_of: impl FnOnce(&str) -> Origin) {
        if let Some(field) = self.field.as_deref() {
            self.origin = origin_of(first_field(field));
        }
    }

    /// [`Diagnostic::point_at_field`] in `obj`'s document, or for an object rendered from a
    /// catalog, in the catalog document among `docs` that writes the field
    /// ([`crate::model::Object::finding_origin`]).
    pub fn point_at_field_of(
        &mut self,
        obj: &crate::model::Object,
        docs: &crate::model::written::CatalogDocs<'_>,
    ) {
        let key = self.code == codes::UNKNOWN_FIELD;
        self.point_at_field(|field| obj.finding_origin(field, key, docs));
    }

    /// Attach a column.
    #[must_use]
    pub fn with_column(mut self, column: Option<u32>) -> Self {
        self.column = column;
        self
    }

    /// Mark a finding about a document that does not parse as [`Cascade::MayDefine`] when
    /// its text looks like an instancetype, a preference or a catalog document: a top-level
    /// `kind:` line naming one of those kinds, or a top-level `apiVersion: kvrender.io/…`
    /// (in JSON, a `"kind"` naming one of those kinds). A VM that names an instancetype kind
    /// in its matcher, or a comment, does not count.
    #[must_use]
    pub fn may_define(mut self, text: &[u8]) -> Self {
        if defines_names(text) {
            self.cascade = Cascade::MayDefine;
        }
        self
    }

    /// Say how the finding relates to others (see [`sort`]).
    #[must_use]
    pub fn with_cascade(mut self, cascade: Cascade) -> Self {
        self.cascade = cascade;
        self
    }

    /// Set the severity.
    #[must_use]
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// Whether this is an error.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The order findings are printed in: file, line, code, then the rest, so output is the same
    /// at any thread count.
    pub fn sort_key_cmp(&self, other: &Self) -> Ordering {
        (
            &self.origin.path,
            self.origin.line,
            self.origin.index,
            self.column,
            self.code,
            &self.object,
            &self.field,
            &self.message,
        )
            .cmp(&(
                &other.origin.path,
                other.origin.line,
                other.origin.index,
                other.column,
                other.code,
                &other.object,
                &other.field,
                &other.message,
            ))
    }
}

/// The first of the fields a finding names: KubeVirt names some together, joined with `, `.
pub fn first_field(fields: &str) -> &str {
    fields.split(", ").next().unwrap_or(fields)
}

/// `text` cut to its first 64 characters, with `...` when something was cut: for showing an
/// input string (a name, a kind) that may be any length in a one-line message.
pub fn shortened(text: &str) -> String {
    let mut shown: String = text.chars().take(64).collect();
    if shown.len() < text.len() {
        shown.push_str("...");
    }
    shown
}

pub use near::{Near, edit_distance, nearest_name};

/// The kinds whose documents define names that others look up.
const DEFINING_KINDS: [&str; 7] = [
    "VirtualMachineClusterInstancetype",
    "VirtualMachineInstancetype",
    "VirtualMachineClusterPreference",
    "VirtualMachinePreference",
    "Parts",
    "InstancetypeFamily",
    "Preference",
];

/// See [`Diagnostic::may_define`].
fn defines_names(text: &[u8]) -> bool {
    let text = String::from_utf8_lossy(text);
    let unquote = |v: &str| {
        let v = v.split(" #").next().unwrap_or(v).trim();
        v.trim_matches(|c| c == '"' || c == '\'').to_string()
    };
    if text.trim_start().starts_with('{') {
        // JSON: every `"kind": "…"`.
        return text.match_indices("\"kind\"").any(|(at, key)| {
            let rest = text[at + key.len()..].trim_start();
            rest.strip_prefix(':').is_some_and(|rest| {
                let rest = rest.trim_start();
                rest.strip_prefix('"')
                    .and_then(|r| r.split_once('"'))
                    .is_some_and(|(kind, _)| DEFINING_KINDS.contains(&kind))
            })
        });
    }
    text.lines().any(|line| {
        if let Some(kind) = line.strip_prefix("kind:") {
            return DEFINING_KINDS.contains(&unquote(kind).as_str());
        }
        line.strip_prefix("apiVersion:")
            .is_some_and(|v| unquote(v).starts_with("kvrender.io/"))
    })
}

/// Sort diagnostics into their printing order, drop exact duplicates, and drop the findings
/// another one may explain, as a compiler leaves out its cascading errors: while a document
/// that may define instancetypes, preferences or parts does not parse, every name not found
/// (`KV011`, an unknown part); while a catalog does not render (`KV040`, or a `KV020` of
/// [`Cascade::StopsRender`]), every instancetype or preference not found (`KV011`). The
/// findings that follow from those go with them. They come back, if still true, once the
/// cause is fixed.
pub fn sort(diags: &mut Vec<Diagnostic>) {
    if diags.iter().any(|d| d.cascade == Cascade::MayDefine) {
        diags.retain(|d| !matches!(d.cascade, Cascade::Unresolved | Cascade::FollowsUnresolved));
    } else if diags
        .iter()
        .any(|d| d.code == codes::CATALOG_RENDER || d.cascade == Cascade::StopsRender)
    {
        diags.retain(|d| match d.cascade {
            Cascade::Unresolved => d.code != codes::REFERENCE_NOT_FOUND,
            Cascade::FollowsUnresolved => false,
            _ => true,
        });
    }
    diags.sort_by(Diagnostic::sort_key_cmp);
    diags.dedup();
}

/// Stable diagnostic codes. Each code means one thing forever; the README lists them.
pub mod codes {
    /// A YAML or JSON syntax error.
    pub const YAML_SYNTAX: &str = "KV001";
    /// A document that is not a Kubernetes object (not a mapping, or no apiVersion/kind).
    pub const NOT_AN_OBJECT: &str = "KV002";
    /// An object without `metadata.name`, or a name Kubernetes would refuse.
    pub const BAD_NAME: &str = "KV003";
    /// A field with the wrong type where kvrender's rules read it.
    pub const WRONG_TYPE: &str = "KV004";
    /// A file or directory that could not be read.
    pub const IO: &str = "KV005";
    /// A label or annotation the API server refuses (key, value or total size).
    pub const BAD_LABEL: &str = "KV006";
    /// kvrender's configuration as a KRM function or kustomize plugin is invalid (an unknown
    /// key or value in the `functionConfig`, a config file that does not parse), or the cluster
    /// profile has a field KubeVirt's configuration does not have.
    pub const BAD_CONFIG: &str = "KV007";
    /// A plain value that YAML 1.1 reads as a boolean and YAML 1.2 as a string (`yes`, `off`).
    pub const YAML_BOOLEAN: &str = "KV008";
    /// A folded block scalar (`>`) with more-indented lines, which kustomize and kpt read with
    /// more line breaks than YAML and `kubectl apply -f` give it.
    pub const YAML_FOLDED: &str = "KV009";
    /// The VM sets a field its instancetype owns.
    pub const CONFLICT: &str = "KV010";
    /// The instancetype or preference a VM names does not exist.
    pub const REFERENCE_NOT_FOUND: &str = "KV011";
    /// The instancetype or preference matcher is invalid (unknown kind, revision, ...).
    pub const BAD_MATCHER: &str = "KV012";
    /// `inferFromVolume` could not infer a matcher.
    pub const INFERENCE: &str = "KV013";
    /// VirtualMachineInstancePresets refused the VMI or were partly skipped.
    pub const PRESET: &str = "KV014";
    /// A VM names a ConfigMap, Secret, ... that the inputs hold only renamed.
    pub const RENAMED_REFERENCE: &str = "KV015";
    /// The same kind, namespace and name defined twice.
    pub const DUPLICATE: &str = "KV020";
    /// An unknown or outdated `apiVersion` for a kind kvrender knows.
    pub const API_VERSION: &str = "KV021";
    /// A field the KubeVirt API does not know (refused by a validating client, else dropped).
    pub const UNKNOWN_FIELD: &str = "KV022";
    /// An instancetype or preference spec KubeVirt's webhook refuses.
    pub const INVALID_SPEC: &str = "KV030";
    /// A deprecation warning KubeVirt's webhook returns with an admitted object.
    pub const DEPRECATED: &str = "KV031";
    /// The instancetype's vCPUs do not fit the preference's spread topology.
    pub const SPREAD: &str = "KV032";
    /// The VM does not meet its preference's requirements.
    pub const REQUIREMENTS: &str = "KV033";
    /// A VM or VMI spec KubeVirt's webhook refuses for itself (run strategy, disks without
    /// volumes, networks without interfaces, names used twice, ...).
    pub const VM_SPEC: &str = "KV034";
    /// A VirtualMachinePool KubeVirt's pool webhook refuses for its own settings (selector,
    /// `maxUnavailable`, strategies).
    pub const POOL_SPEC: &str = "KV035";
    /// A VirtualMachineInstanceReplicaSet KubeVirt refuses for its selector, or one its
    /// controller creates no VMI of.
    pub const REPLICA_SET_SPEC: &str = "KV036";
    /// A catalog (families, parts, preferences) that does not render: a malformed document,
    /// an unknown part or trait, a template error.
    pub const CATALOG_RENDER: &str = "KV040";
    /// An instancetype or preference label that disagrees with its spec.
    pub const LABEL_MISMATCH: &str = "KV041";
    /// A preference whose requirements no instancetype of the catalog meets.
    pub const UNMET_REQUIREMENTS: &str = "KV042";
    /// A file of the rendered layout in a kpt package that no catalog document renders any
    /// more (removed with the function's `prune`), or one an earlier render wrote into a
    /// subpackage, which the function moves out of it.
    pub const STALE_OUTPUT: &str = "KV043";
    /// An instancetype KubeVirt's VM webhook refuses every VirtualMachine that names it for.
    pub const UNUSABLE_INSTANCETYPE: &str = "KV044";
    /// A key with no value in what a catalog document merges into its objects: a `null`,
    /// which removes what the parts before it set.
    pub const EMPTY_VALUE: &str = "KV045";
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The place a message names is renamed where the message writes it last, and only there.
    #[test]
    fn rename_related_rewrites_the_place_the_message_names() {
        let first = Origin::new("a.yaml", 0, Some(3));
        let mut d = Diagnostic::error(
            codes::DUPLICATE,
            Origin::new("b.yaml", 0, Some(1)),
            "x/a.yaml is defined twice: first at a.yaml:3 (document 1)",
        )
        .with_related(first);
        d.rename_related("sub/a.yaml");
        assert_eq!(
            d.message,
            "x/a.yaml is defined twice: first at sub/a.yaml:3 (document 1)"
        );
        assert_eq!(d.related.as_deref().map(|o| &*o.path), Some("sub/a.yaml"));
        let mut plain = Diagnostic::error(codes::DUPLICATE, Origin::new("b.yaml", 0, None), "m");
        plain.rename_related("sub/a.yaml");
        assert_eq!(plain.message, "m");
    }

    /// A message can be read with the place it names renamed, whatever that place's path
    /// holds (a space, a word that looks like a path), the finding staying as it is.
    #[test]
    fn message_renaming_related_finds_the_place_by_its_origin() {
        let d = Diagnostic::error(
            codes::DUPLICATE,
            Origin::new("vms/it b.yaml", 0, Some(1)),
            "ConfigMap/x.yaml is defined twice: first at ./vms/it a.yaml:1 (document 1)",
        )
        .with_related(Origin::new("./vms/it a.yaml", 0, Some(1)));
        assert_eq!(
            d.message_renaming_related("it a.yaml").as_deref(),
            Some("ConfigMap/x.yaml is defined twice: first at it a.yaml:1 (document 1)")
        );
        assert_eq!(
            d.related.as_deref().map(|o| &*o.path),
            Some("./vms/it a.yaml")
        );
        let plain = Diagnostic::error(codes::DUPLICATE, Origin::new("b.yaml", 0, None), "m");
        assert_eq!(plain.message_renaming_related("a.yaml"), None);
    }

    /// A finding moves to the line of the first field it names; one without a field stays.
    #[test]
    fn a_finding_points_at_its_first_field() {
        let at = |line| Origin::new("f.yaml", 0, Some(line));
        let mut asked = Vec::new();
        let mut d = Diagnostic::error(codes::VM_SPEC, at(1), "refused")
            .with_field("spec.domain.cpu.sockets, spec.domain.cpu.cores");
        d.point_at_field(|field| {
            asked.push(field.to_string());
            at(7)
        });
        assert_eq!(
            (asked, d.origin.line),
            (vec!["spec.domain.cpu.sockets".into()], Some(7))
        );
        let mut d = Diagnostic::error(codes::VM_SPEC, at(1), "refused");
        d.point_at_field(|_| at(7));
        assert_eq!(d.origin.line, Some(1));
        assert_eq!(first_field("spec.a"), "spec.a");
    }

    #[test]
    fn findings_a_broken_document_or_catalog_may_explain_are_left_out() {
        let at = |line| Origin::new("f.yaml", 0, Some(line));
        let not_found = Diagnostic::warning(codes::REFERENCE_NOT_FOUND, at(9), "u1.x not found");
        let part = Diagnostic::error(codes::CATALOG_RENDER, at(5), "unknown part `p`")
            .with_cascade(Cascade::Unresolved);
        let template = Diagnostic::error(codes::CATALOG_RENDER, at(4), "cannot render");
        let vm_syntax = Diagnostic::error(codes::YAML_SYNTAX, at(1), "bad").may_define(
            b"kind: VirtualMachine # uses a Preference\nmetadata: {name: x\nspec:\n  \
              instancetype:\n    kind: VirtualMachineClusterInstancetype\n",
        );
        let parts_syntax = Diagnostic::error(codes::YAML_SYNTAX, at(2), "bad")
            .may_define(b"apiVersion: kvrender.io/v1alpha1\nkind: Parts\n");
        for (text, defines) in [
            (&b"kind: \"VirtualMachineInstancetype\"\nspec: ["[..], true),
            (b"apiVersion: 'kvrender.io/v1alpha1'\nkind: Parts\n", true),
            (b"kind: Preference # a catalog one\n", true),
            (b"# kind: Parts\nowner: platform\n", false),
            (b"{\"kind\" : \"Parts\", \"parts\": {", true),
            (b"{\"kind\": \"VirtualMachine\", \"spec\": [", false),
        ] {
            assert_eq!(
                defines_names(text),
                defines,
                "{}",
                String::from_utf8_lossy(text)
            );
        }
        assert_eq!(not_found.cascade, Cascade::Unresolved);
        assert_eq!(vm_syntax.cascade, Cascade::Independent);
        assert_eq!(parts_syntax.cascade, Cascade::MayDefine);
        let sorted = |diags: &[&Diagnostic]| {
            let mut diags: Vec<Diagnostic> = diags.iter().map(|d| (*d).clone()).collect();
            sort(&mut diags);
            diags
                .into_iter()
                .map(|d| d.origin.line.unwrap())
                .collect::<Vec<_>>()
        };
        // A broken VM explains nothing; a broken catalog document explains every name not
        // found; a catalog that does not render explains instancetypes and preferences.
        assert_eq!(sorted(&[&not_found, &part, &vm_syntax]), [1, 5]);
        assert_eq!(sorted(&[&not_found, &part, &parts_syntax]), [2]);
        assert_eq!(sorted(&[&not_found, &template]), [4]);
        assert_eq!(sorted(&[&not_found, &part]), [5]);
        assert_eq!(sorted(&[&not_found]), [9]);
        // What follows from an instancetype not found goes where its `KV011` goes.
        let own_size = Diagnostic::error(codes::REQUIREMENTS, at(12), "insufficient Memory")
            .with_cascade(Cascade::FollowsUnresolved);
        assert_eq!(sorted(&[&not_found, &own_size]), [9, 12]);
        assert_eq!(sorted(&[&not_found, &own_size, &template]), [4]);
        assert_eq!(sorted(&[&not_found, &own_size, &parts_syntax]), [2]);
        assert_eq!(sorted(&[&own_size, &vm_syntax]), [1, 12]);
    }

    #[test]
    fn long_text_is_shortened_for_a_message() {
        assert_eq!(shortened("short"), "short");
        let long = "é".repeat(100);
        assert_eq!(shortened(&long), format!("{}...", "é".repeat(64)));
    }
}

//! [`Object`]: one Kubernetes document and its origin.

use std::sync::Arc;

use serde_json::Value;

use crate::load::locate;
use crate::model::path::Fields;
use crate::model::written::{CatalogDocs, Written};
use crate::origin::{ObjectRef, Origin};

/// The API group of instancetypes and preferences.
pub const INSTANCETYPE_GROUP: &str = "instancetype.kubevirt.io";

/// The kinds kvrender reasons about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// `kubevirt.io` VirtualMachine.
    VirtualMachine,
    /// `kubevirt.io` VirtualMachineInstance.
    VirtualMachineInstance,
    /// `kubevirt.io` VirtualMachineInstancePreset.
    VirtualMachineInstancePreset,
    /// Namespaced instancetype.
    Instancetype,
    /// Cluster-scoped instancetype.
    ClusterInstancetype,
    /// Namespaced preference.
    Preference,
    /// Cluster-scoped preference.
    ClusterPreference,
    /// Any other kind.
    Other,
}

impl Kind {
    /// Classify a `kind` string.
    pub fn from_kind(kind: &str) -> Kind {
        match kind {
            "VirtualMachine" => Kind::VirtualMachine,
            "VirtualMachineInstance" => Kind::VirtualMachineInstance,
            "VirtualMachineInstancePreset" => Kind::VirtualMachineInstancePreset,
            "VirtualMachineInstancetype" => Kind::Instancetype,
            "VirtualMachineClusterInstancetype" => Kind::ClusterInstancetype,
            "VirtualMachinePreference" => Kind::Preference,
            "VirtualMachineClusterPreference" => Kind::ClusterPreference,
            _ => Kind::Other,
        }
    }

    /// Whether this is one of the four instancetype and preference kinds.
    pub fn is_catalog(self) -> bool {
        matches!(
            self,
            Kind::Instancetype
                | Kind::ClusterInstancetype
                | Kind::Preference
                | Kind::ClusterPreference
        )
    }

    /// Whether objects of this kind live in a namespace.
    pub fn is_namespaced(self) -> bool {
        !matches!(self, Kind::ClusterInstancetype | Kind::ClusterPreference)
    }

    /// The canonical `kind` string (empty for [`Kind::Other`]).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::VirtualMachine => "VirtualMachine",
            Kind::VirtualMachineInstance => "VirtualMachineInstance",
            Kind::VirtualMachineInstancePreset => "VirtualMachineInstancePreset",
            Kind::Instancetype => "VirtualMachineInstancetype",
            Kind::ClusterInstancetype => "VirtualMachineClusterInstancetype",
            Kind::Preference => "VirtualMachinePreference",
            Kind::ClusterPreference => "VirtualMachineClusterPreference",
            Kind::Other => "",
        }
    }

    /// Whether KubeVirt serves objects of this kind as `version` of their API group: the
    /// `kubevirt.io` kinds as `v1` and the deprecated `v1alpha3`, instancetypes and preferences
    /// as `v1beta1` only (KubeVirt no longer serves `v1alpha1` and `v1alpha2`). Never for
    /// [`Kind::Other`].
    pub fn is_served_as(self, version: &str) -> bool {
        match self {
            Kind::VirtualMachine
            | Kind::VirtualMachineInstance
            | Kind::VirtualMachineInstancePreset => matches!(version, "v1" | "v1alpha3"),
            Kind::Instancetype
            | Kind::ClusterInstancetype
            | Kind::Preference
            | Kind::ClusterPreference => version == "v1beta1",
            Kind::Other => false,
        }
    }

    /// The plural resource name used in Kubernetes NotFound messages.
    pub fn resource(self) -> &'static str {
        match self {
            Kind::Instancetype => "virtualmachineinstancetypes.instancetype.kubevirt.io",
            Kind::ClusterInstancetype => {
                "virtualmachineclusterinstancetypes.instancetype.kubevirt.io"
            }
            Kind::Preference => "virtualmachinepreferences.instancetype.kubevirt.io",
            Kind::ClusterPreference => "virtualmachineclusterpreferences.instancetype.kubevirt.io",
            Kind::VirtualMachine => "virtualmachines.kubevirt.io",
            Kind::VirtualMachineInstance => "virtualmachineinstances.kubevirt.io",
            Kind::VirtualMachineInstancePreset => "virtualmachineinstancepresets.kubevirt.io",
            Kind::Other => "",
        }
    }
}

/// Whether `api_version` (`group/version`) is in the API group of `kind`, one of KubeVirt's.
/// The group is what comes before the first `/`, so comparing the prefix up to and including
/// the `/` says the same without searching for it.
fn in_group_of(api_version: &str, kind: Kind) -> bool {
    let group = match kind {
        Kind::VirtualMachine
        | Kind::VirtualMachineInstance
        | Kind::VirtualMachineInstancePreset => "kubevirt.io",
        _ => INSTANCETYPE_GROUP,
    };
    api_version
        .strip_prefix(group)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// Whether a document is tool configuration rather than a cluster resource: a kustomization, a
/// kpt file or one of kvrender's own catalog and configuration documents (their API groups), or
/// anything marked `config.kubernetes.io/local-config: "true"`. kustomize and kpt never apply
/// such a document, so `build` does not print it and the API server's checks of names and
/// metadata do not concern it.
pub fn is_local_config(v: &Value) -> bool {
    let group = v
        .get("apiVersion")
        .and_then(Value::as_str)
        .and_then(|a| a.split_once('/'))
        .map_or("", |(g, _)| g);
    matches!(
        group,
        "kustomize.config.k8s.io" | "kpt.dev" | crate::render::CATALOG_GROUP
    ) || crate::model::path::str_at(
        v,
        &[
            "metadata",
            "annotations",
            "config.kubernetes.io/local-config",
        ],
    ) == Some("true")
}

/// One Kubernetes document with its origin.
#[derive(Clone, Debug, PartialEq)]
pub struct Object {
    /// The document; a mapping for every well-formed object.
    pub value: Value,
    /// Where it came from.
    pub origin: Origin,
    /// The document's text and the file line it starts on, when it was read from a file; used
    /// to point diagnostics at the line of a field.
    pub source: Option<(Arc<str>, u32)>,
    /// Whether `source` is the `- ` entry of an item of a list document rather than a document:
    /// the object's fields are then looked up below the entry's first item.
    pub entry: bool,
    /// The lines of `source`, cut on the first lookup of a field's line.
    lines: LineCache,
    /// For an object rendered from a catalog, where its fields are written.
    pub written: Option<Written>,
}

/// An [`Object`]'s [`locate::Index`] of its source text, built on first use and shared by its
/// clones. It remembers the text it was built from, so a replaced `source` is never looked up
/// in another text's lines. Not part of the object's value: any two compare equal.
#[derive(Clone, Default)]
struct LineCache(std::sync::OnceLock<Arc<(Arc<str>, locate::Index)>>);

impl PartialEq for LineCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for LineCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LineCache")
    }
}

impl Object {
    /// Wrap a document.
    pub fn new(value: Value, origin: Origin) -> Self {
        Object {
            value,
            origin,
            source: None,
            entry: false,
            lines: LineCache::default(),
            written: None,
        }
    }

    /// Remember the document's text (starting at file line `first_line`).
    #[must_use]
    pub fn with_source(mut self, text: Arc<str>, first_line: u32) -> Self {
        self.source = Some((text, first_line));
        self
    }

    /// Remember the text of the `- ` sequence entry that holds the document (starting at
    /// file line `first_line`), as for an item of a list: its fields are looked up below the
    /// entry.
    #[must_use]
    pub fn with_entry_source(mut self, text: Arc<str>, first_line: u32) -> Self {
        self.source = Some((text, first_line));
        self.entry = true;
        self
    }

    /// The same document from the same place, holding `value` instead.
    #[must_use]
    pub fn with_value(&self, value: Value) -> Self {
        Object {
            value,
            origin: self.origin.clone(),
            source: self.source.clone(),
            entry: self.entry,
            lines: self.lines.clone(),
            written: self.written.clone(),
        }
    }

    /// The file line of `field` (a dotted path), or of its deepest existing parent, falling back
    /// to the document's first line.
    pub fn field_line(&self, field: &str) -> Option<u32> {
        self.steps_line(&locate::parse_path(field))
            .or(self.origin.line)
    }

    /// The file line of the field at `steps` (or of its deepest existing parent, or the
    /// document's first line), found in the document's own text; `None` without a text.
    /// The text is cut into lines once, on the first lookup, and shared by every later one.
    pub fn steps_line(&self, steps: &[locate::Step<'_>]) -> Option<u32> {
        let (text, first) = self.source.as_ref()?;
        let entry_steps: Vec<locate::Step<'_>>;
        let steps = if self.entry {
            entry_steps = std::iter::once(locate::Step::Index(0))
                .chain(steps.iter().copied())
                .collect();
            &entry_steps
        } else {
            steps
        };
        let cached = self
            .lines
            .0
            .get_or_init(|| Arc::new((Arc::clone(text), locate::Index::new(text))));
        if Arc::ptr_eq(&cached.0, text) {
            cached.1.field_line_of(text, *first, steps)
        } else {
            locate::field_line_of(text, *first, steps)
        }
    }

    /// The origin pointing at the line of `field`.
    pub fn field_origin(&self, field: &str) -> Origin {
        self.origin.at_line(self.field_line(field))
    }

    /// Where a finding about `field` is best reported: [`Object::field_origin`], or for an
    /// object rendered from a catalog, the line of the catalog document among `docs` that
    /// writes the field (see [`Written::origin_of`]; `key` when the finding is about the
    /// field's name).
    pub fn finding_origin(&self, field: &str, key: bool, docs: &CatalogDocs<'_>) -> Origin {
        self.written
            .as_ref()
            .and_then(|w| w.origin_of(&locate::parse_path(field), key, docs))
            .unwrap_or_else(|| self.field_origin(field))
    }

    fn str_at(&self, a: &str, b: Option<&str>) -> &str {
        let v = self.value.field(a);
        let v = match b {
            Some(b) => v.and_then(|m| m.field(b)),
            None => v,
        };
        v.and_then(Value::as_str).unwrap_or("")
    }

    /// `apiVersion`, or `""`.
    pub fn api_version(&self) -> &str {
        self.str_at("apiVersion", None)
    }

    /// `kind`, or `""`.
    pub fn kind_str(&self) -> &str {
        self.str_at("kind", None)
    }

    /// The classified kind. Only objects of KubeVirt's API groups are classified; a
    /// `VirtualMachine` of some other group is [`Kind::Other`].
    pub fn kind(&self) -> Kind {
        let kind = Kind::from_kind(self.kind_str());
        if kind == Kind::Other || !in_group_of(self.api_version(), kind) {
            return Kind::Other;
        }
        kind
    }

    /// Whether the object is of a kind kvrender knows, in a version of its group KubeVirt
    /// serves ([`Kind::is_served_as`]). The API server has no other version of the kind, so the
    /// cluster cannot hold such an object (`KV021`): nothing resolves against it, and a VM of
    /// it is not expanded.
    pub fn is_served(&self) -> bool {
        let version = self.api_version().split_once('/').map_or("", |(_, v)| v);
        self.kind().is_served_as(version)
    }

    /// Whether the object is tool configuration of a kind kvrender does not otherwise know
    /// ([`is_local_config`]): never applied, so the API server's checks do not concern it.
    pub fn is_tool_config(&self) -> bool {
        self.kind() == Kind::Other && is_local_config(&self.value)
    }

    /// Whether the object is of kind `kind`: `kind() == kind`, without classifying the `kind`
    /// string first.
    pub fn is_kind(&self, kind: Kind) -> bool {
        kind != Kind::Other
            && self.kind_str() == kind.as_str()
            && in_group_of(self.api_version(), kind)
    }

    /// `metadata.name`, or `""`.
    pub fn name(&self) -> &str {
        self.str_at("metadata", Some("name"))
    }

    /// The names kustomize gave the object before its current one, within the build that is
    /// running now: a transformer (a kvrender KRM function or exec plugin under kustomize)
    /// sees the objects a `namePrefix`, `nameSuffix` or `namespace` of the same build renamed
    /// before kustomize renames the references to them, which it does at the very end. They
    /// are in kustomize's internal `previousNames` annotation, beside the kinds the object had
    /// then (`previousKinds`); a name recorded under another kind is not one of this object's.
    pub fn previous_names(&self) -> impl Iterator<Item = &str> {
        const NAMES: &str = "internal.config.kubernetes.io/previousNames";
        const KINDS: &str = "internal.config.kubernetes.io/previousKinds";
        let annotations = self
            .value
            .get("metadata")
            .and_then(|m| m.get("annotations"));
        let text = |key| annotations.and_then(|a| a.get(key)).and_then(Value::as_str);
        // Nearly every object has none: nothing more is looked up then.
        let names = text(NAMES).unwrap_or("");
        let (kinds, name, kind) = if names.is_empty() {
            (None, "", "")
        } else {
            let kinds: Option<Vec<&str>> = text(KINDS).map(|k| k.split(',').collect());
            (kinds, self.name(), self.kind_str())
        };
        names
            .split(',')
            .enumerate()
            .filter(move |(i, n)| {
                !n.is_empty()
                    && *n != name
                    && kinds
                        .as_ref()
                        .is_none_or(|k| k.get(*i).is_none_or(|k| *k == kind))
            })
            .map(|(_, n)| n)
    }

    /// `metadata.namespace` when set and non-empty.
    pub fn namespace(&self) -> Option<&str> {
        Some(self.str_at("metadata", Some("namespace"))).filter(|s| !s.is_empty())
    }

    /// The namespace an object of a namespaced kind lives in (`default` when unset).
    pub fn effective_namespace(&self) -> &str {
        self.namespace().unwrap_or("default")
    }

    /// The identity used in messages. A cluster-scoped object has no namespace there, whatever
    /// its `metadata.namespace` says: the API server ignores it (kustomize's `namespace:` sets
    /// it on kinds it does not know to be cluster-scoped).
    pub fn object_ref(&self) -> ObjectRef {
        let (api_version, kind) = (self.api_version(), self.kind_str());
        ObjectRef {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            namespace: self
                .namespace()
                .filter(|_| !crate::model::scope::is_cluster_scoped(api_version, kind))
                .map(str::to_string),
            name: self.name().to_string(),
        }
    }

    /// `spec` when it is a mapping.
    pub fn spec(&self) -> Option<&Value> {
        self.value.field("spec").filter(|v| v.is_object())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(api_version: &str, kind: &str) -> Object {
        let value = serde_json::json!({
            "apiVersion": api_version,
            "kind": kind,
            "metadata": {"name": "big", "namespace": "team-a"},
        });
        Object::new(value, Origin::new("a.yaml", 0, Some(1)))
    }

    /// The API server ignores the namespace of a cluster-scoped object (kustomize's
    /// `namespace:` sets one on kinds it does not know), so a finding does not name it.
    #[test]
    fn a_cluster_scoped_object_is_named_without_its_namespace() {
        let cluster = object(
            "instancetype.kubevirt.io/v1beta1",
            "VirtualMachineClusterInstancetype",
        );
        assert_eq!(cluster.object_ref().namespace, None);
        assert_eq!(
            cluster.object_ref().to_string(),
            "VirtualMachineClusterInstancetype/big"
        );
        assert_eq!(
            object("rbac.authorization.k8s.io/v1", "ClusterRole")
                .object_ref()
                .to_string(),
            "ClusterRole/big"
        );
        let namespaced = object(
            "instancetype.kubevirt.io/v1beta1",
            "VirtualMachineInstancetype",
        );
        assert_eq!(
            namespaced.object_ref().to_string(),
            "VirtualMachineInstancetype/team-a/big"
        );
    }
}

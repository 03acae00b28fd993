//! Catalog documents a kustomize build renamed before kvrender, one of its transformers, saw
//! them.
//!
//! A `namePrefix` or `nameSuffix` of the kustomization that lists a catalog document renames
//! the document itself (`team` becomes `prod-team`), and kustomize records the names it had
//! in its internal annotations. Rendered from the new name, a family would make
//! `prod-team1.medium`, and a suffix would land inside the name (`team-prod1.medium`), where
//! the objects, had they been listed as they are, would have been named `prod-team1.medium`
//! and `team1.medium-prod`, with the earlier name `team1.medium` recorded. So a renamed
//! document is rendered under its first name, and each object it makes is then renamed as
//! kustomize renamed the document, carrying the same record: a VM that names
//! `team1.medium` finds it (here, and in kustomize's own renaming of the references a
//! `configurations:` file declares). Under a `namespace:` of the same kustomization (with or
//! without a prefix or suffix), each such object is given the namespace as kustomize gives it
//! to every object of a kind it does not know, the cluster-scoped ones too (the API server
//! ignores it there), so that kustomize renames a VM's reference to one of them as it does for
//! a listed one.

use serde_json::{Map, Value};

use crate::model::Object;

const PREVIOUS_NAMES: &str = "internal.config.kubernetes.io/previousNames";
const PREVIOUS_KINDS: &str = "internal.config.kubernetes.io/previousKinds";
const PREVIOUS_NAMESPACES: &str = "internal.config.kubernetes.io/previousNamespaces";
const PREFIXES: &str = "internal.config.kubernetes.io/prefixes";
const SUFFIXES: &str = "internal.config.kubernetes.io/suffixes";

/// How kustomize renamed a catalog document: its first name, and the prefix and suffix of its
/// current name and of each name it had.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Renaming {
    /// The name the document was written with.
    pub original: String,
    /// Around `original` in the current name.
    around: (String, String),
    /// Each earlier name (the first is the original itself) as the text around `original`,
    /// with its namespace.
    history: Vec<(String, String, String)>,
    /// kustomize's record of the prefixes and suffixes applied, copied as they are.
    marks: Vec<(&'static str, String)>,
    /// The namespace kustomize's `namespace:` gave the document, if it gave one: kustomize
    /// sets it on every object of a kind it does not know, cluster-scoped or not, and renames
    /// a namespaced VM's reference only to an object in the VM's namespace.
    namespace: Option<String>,
}

/// The text before and after `original` in `name`, `prefix_len` long before it where that
/// fits (the prefixes kustomize recorded), else around its first occurrence.
fn around(name: &str, original: &str, prefix_len: usize) -> Option<(String, String)> {
    let at = if name
        .get(prefix_len..)
        .is_some_and(|rest| rest.starts_with(original))
    {
        prefix_len
    } else {
        name.find(original)?
    };
    Some((
        name[..at].to_string(),
        name[at + original.len()..].to_string(),
    ))
}

impl Renaming {
    /// The renaming kustomize recorded on `doc`; `None` when it was neither renamed nor moved
    /// to another namespace, or when its record does not say how (the first name is not inside
    /// the current one).
    pub fn of(doc: &Object) -> Option<Renaming> {
        let annotations = doc
            .value
            .get("metadata")
            .and_then(|m| m.get("annotations"))
            .and_then(Value::as_object)?;
        let text = |key: &str| annotations.get(key).and_then(Value::as_str).unwrap_or("");
        let names: Vec<&str> = text(PREVIOUS_NAMES).split(',').collect();
        let kinds: Vec<&str> = text(PREVIOUS_KINDS).split(',').collect();
        let namespaces: Vec<&str> = text(PREVIOUS_NAMESPACES).split(',').collect();
        let original = *names.first().filter(|n| !n.is_empty())?;
        let name = doc.name();
        let namespace = doc
            .namespace()
            .filter(|current| namespaces.iter().any(|earlier| earlier != current))
            .map(str::to_string);
        // A `namespace:` alone records the name unchanged: what the document makes is then
        // given the namespace, as a renamed document's is.
        if (name == original && namespace.is_none())
            || kinds
                .first()
                .is_some_and(|k| !k.is_empty() && *k != doc.kind_str())
        {
            return None;
        }
        let prefix_len = text(PREFIXES).split(',').map(str::len).sum();
        let history = names
            .iter()
            .enumerate()
            .map(|(i, earlier)| {
                let (before, after) = around(earlier, original, 0)?;
                let namespace = namespaces.get(i).copied().unwrap_or_default();
                Some((before, after, namespace.to_string()))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Renaming {
            namespace,
            original: original.to_string(),
            around: around(name, original, prefix_len)?,
            history,
            marks: [PREFIXES, SUFFIXES]
                .into_iter()
                .filter(|key| !text(key).is_empty())
                .map(|key| (key, text(key).to_string()))
                .collect(),
        })
    }

    /// `doc` under its first name, to be rendered from.
    pub fn restored(&self, doc: &Object) -> Object {
        let mut value = doc.value.clone();
        if let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.insert("name".into(), Value::String(self.original.clone()));
        }
        doc.with_value(value)
    }

    /// Rename `obj`, rendered from the restored document, as kustomize renamed the document,
    /// and record its earlier names as kustomize records them.
    pub fn apply(&self, obj: &mut Object) {
        let base = obj.name().to_string();
        let kind = obj.kind_str().to_string();
        let (before, after) = &self.around;
        let names: Vec<String> = self
            .history
            .iter()
            .map(|(b, a, _)| format!("{b}{base}{a}"))
            .collect();
        let kinds = vec![kind; self.history.len()];
        let namespaces: Vec<&str> = self.history.iter().map(|(_, _, n)| n.as_str()).collect();
        let Some(metadata) = obj.value.get_mut("metadata").and_then(Value::as_object_mut) else {
            return;
        };
        metadata.insert(
            "name".into(),
            Value::String(format!("{before}{base}{after}")),
        );
        if let Some(namespace) = &self.namespace {
            metadata
                .entry("namespace")
                .or_insert_with(|| Value::String(namespace.clone()));
        }
        let annotations = metadata
            .entry("annotations")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(annotations) = annotations.as_object_mut() {
            for (key, value) in [
                (PREVIOUS_NAMES, names.join(",")),
                (PREVIOUS_KINDS, kinds.join(",")),
                (PREVIOUS_NAMESPACES, namespaces.join(",")),
            ] {
                annotations.insert(key.into(), Value::String(value));
            }
            for (key, value) in &self.marks {
                annotations.insert((*key).into(), Value::String(value.clone()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;
    use serde_json::json;

    fn family(name: &str, annotations: Value) -> Object {
        Object::new(
            json!({"apiVersion": "kvrender.io/v1alpha1", "kind": "InstancetypeFamily",
                   "metadata": {"name": name, "annotations": annotations}}),
            Origin::default(),
        )
    }

    fn rendered(name: &str) -> Object {
        Object::new(
            json!({"apiVersion": "instancetype.kubevirt.io/v1beta1",
                   "kind": "VirtualMachineClusterInstancetype", "metadata": {"name": name}}),
            Origin::default(),
        )
    }

    /// A prefix and a suffix, then a namespace: the objects are named around the rendered
    /// name, with one earlier name for each of the document's.
    #[test]
    fn a_renamed_family_renders_under_its_first_name_and_renames_what_it_makes() {
        let mut doc = family(
            "prod-team-x",
            json!({
                PREFIXES: "prod-",
                SUFFIXES: "-x",
                PREVIOUS_NAMES: "team,team,prod-team",
                PREVIOUS_KINDS: "InstancetypeFamily,InstancetypeFamily,InstancetypeFamily",
                PREVIOUS_NAMESPACES: "default,ns1,ns1",
            }),
        );
        doc.value["metadata"]["namespace"] = json!("ns1");
        let renaming = Renaming::of(&doc).expect("renamed");
        assert_eq!(renaming.restored(&doc).name(), "team");
        let mut obj = rendered("team1.medium");
        renaming.apply(&mut obj);
        assert_eq!(obj.name(), "prod-team1.medium-x");
        assert_eq!(obj.namespace(), Some("ns1"));
        let notes = &obj.value["metadata"]["annotations"];
        assert_eq!(
            notes[PREVIOUS_NAMES],
            "team1.medium,team1.medium,prod-team1.medium"
        );
        assert_eq!(notes[PREVIOUS_NAMESPACES], "default,ns1,ns1");
        assert_eq!(notes[PREFIXES], "prod-");
        assert_eq!(notes[SUFFIXES], "-x");
        let previous: Vec<&str> = obj.previous_names().collect();
        assert_eq!(
            previous,
            ["team1.medium", "team1.medium", "prod-team1.medium"]
        );
    }

    /// The class's name inside the prefix (`team-team`): the recorded prefix places it.
    #[test]
    fn the_recorded_prefix_places_a_name_that_occurs_twice() {
        let doc = family(
            "team-team",
            json!({PREFIXES: "team-", PREVIOUS_NAMES: "team",
                   PREVIOUS_KINDS: "InstancetypeFamily", PREVIOUS_NAMESPACES: "default"}),
        );
        let mut obj = rendered("team1.small");
        Renaming::of(&doc).expect("renamed").apply(&mut obj);
        assert_eq!(obj.name(), "team-team1.small");
        // No `namespace:` in the build: none is given.
        assert_eq!(obj.namespace(), None);
    }

    /// A `namespace:` without a prefix or suffix: the names stay, and every object made gets
    /// the namespace, the cluster-scoped ones too, as with a prefix.
    #[test]
    fn a_namespace_alone_is_given_to_what_the_document_makes() {
        let mut doc = family(
            "team",
            json!({PREVIOUS_NAMES: "team", PREVIOUS_KINDS: "InstancetypeFamily",
                   PREVIOUS_NAMESPACES: "default"}),
        );
        doc.value["metadata"]["namespace"] = json!("ml");
        let mut obj = rendered("team1.small");
        Renaming::of(&doc).expect("moved").apply(&mut obj);
        assert_eq!(obj.name(), "team1.small");
        assert_eq!(obj.namespace(), Some("ml"));
        let notes = &obj.value["metadata"]["annotations"];
        assert_eq!(notes[PREVIOUS_NAMES], "team1.small");
        assert_eq!(notes[PREVIOUS_NAMESPACES], "default");
        // Recorded but not moved (kustomize keeps the record of an earlier step): nothing.
        doc.value["metadata"]["namespace"] = json!("default");
        assert_eq!(Renaming::of(&doc), None);
    }

    /// No record, a record of another kind or a name not inside the current one: no renaming.
    #[test]
    fn without_a_usable_record_nothing_is_renamed() {
        assert_eq!(Renaming::of(&family("team", json!({}))), None);
        let other_kind = family(
            "prod-team",
            json!({PREVIOUS_NAMES: "team", PREVIOUS_KINDS: "Preference"}),
        );
        assert_eq!(Renaming::of(&other_kind), None);
        let unrelated = family("x", json!({PREVIOUS_NAMES: "team"}));
        assert_eq!(Renaming::of(&unrelated), None);
    }
}

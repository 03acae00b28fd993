//! [`Written`]: where the fields of an object rendered from a catalog are written.
//!
//! A rendered instancetype or preference has no text of its own: its origin is the size row
//! or the preference document it was rendered for. A finding about one of its fields is more
//! use at the line that writes the field (a family's `template`, a part), which the same
//! mistake in every size then shares.
//!
//! A rendered object names the catalog documents it was rendered from by their origin; they are
//! looked up among the objects of the run ([`CatalogDocs`]) only when a finding is reported, so
//! rendering copies nothing for it.

use std::sync::Arc;

use foldhash::HashMap;
use serde_json::Value;

use crate::load::locate::Step;
use crate::model::Object;
use crate::model::path::Fields;
use crate::origin::Origin;
use crate::render::template::is_template;

/// The catalog fragments an object was rendered from, in the order they were merged into it.
/// Shared by every object rendered from the same family or preference; any two compare equal
/// (it is not part of the object's value).
#[derive(Clone)]
pub struct Written {
    fragments: Arc<[Fragment]>,
    /// The family or preference document, when it sets traits or vars.
    owner: Option<(Origin, Settings)>,
}

/// What the templates of a family or preference read as its settings: a value a template
/// makes from one of them alone is that setting's, and a finding about it belongs where the
/// family or preference sets it.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Where they are in the document, under `spec`: `traits` or `vars`.
    root: &'static str,
    /// The other variables templates see there.
    others: &'static [&'static str],
    /// Whether a family's variants may set them too (`spec.variants[].traits`).
    in_variants: bool,
}

impl Settings {
    /// A family's traits.
    pub const TRAITS: Settings = Settings {
        root: "traits",
        others: &["size", "variant", "family", "name"],
        in_variants: true,
    };
    /// A preference's vars.
    pub const VARS: Settings = Settings {
        root: "vars",
        others: &["preference", "name"],
        in_variants: false,
    };
}

/// The variables of a template whose values differ between the combinations of a family.
const COMBINATION: &[&str] = &["size", "variant", "traits", "name"];

/// One fragment merged into a rendered object.
pub struct Fragment {
    /// The origin of the catalog document that holds it.
    pub doc: Origin,
    /// Where it is in that document.
    pub at: At,
    /// Where it lands in the rendered object: the object itself (`[]`), its `spec`, or its
    /// `metadata.labels`.
    pub into: &'static [&'static str],
}

/// Where a fragment is in its document.
pub enum At {
    /// `spec.KEY` of a family or preference (`template`, `labels`, `annotations`).
    Own(&'static str),
    /// `parts.NAME.KEY` of a `Parts` document (`spec`, `metadata`).
    Part(Arc<str>, &'static str),
    /// `metadata.namespace` of a family or preference: the namespaced objects' namespace,
    /// unless a template names one.
    Namespace,
}

impl At {
    fn keys(&self) -> [&str; 3] {
        match self {
            At::Own(key) => ["spec", key, ""],
            At::Part(name, key) => ["parts", name, key],
            At::Namespace => ["metadata", "namespace", ""],
        }
    }
}

/// Origin key of a document: its file, index and first line.
type DocKey<'a> = (&'a str, usize, Option<u32>);

/// The catalog documents (families, preferences, parts) among the objects of a run, by origin,
/// looked up only when a finding about a rendered object is reported.
#[derive(Default)]
pub struct CatalogDocs<'a> {
    objects: Vec<&'a Object>,
    /// `None` for an origin two documents share: the files of two `kpt` packages may have the
    /// same path relative to their packages (`cat.yaml`), and neither is then told from the
    /// other.
    by_origin: std::sync::OnceLock<HashMap<DocKey<'a>, Option<&'a Object>>>,
}

impl<'a> CatalogDocs<'a> {
    /// The catalog documents among `objects`.
    pub fn new(objects: impl IntoIterator<Item = &'a Object>) -> Self {
        CatalogDocs {
            objects: objects.into_iter().collect(),
            by_origin: std::sync::OnceLock::new(),
        }
    }

    fn get(&self, origin: &Origin) -> Option<&'a Object> {
        self.by_origin
            .get_or_init(|| {
                let mut by_origin = HashMap::default();
                for o in self
                    .objects
                    .iter()
                    .filter(|o| crate::render::is_catalog_kind(o))
                {
                    by_origin
                        .entry((&*o.origin.path, o.origin.index, o.origin.line))
                        .and_modify(|found| *found = None)
                        .or_insert(Some(*o));
                }
                by_origin
            })
            .get(&(&*origin.path, origin.index, origin.line))
            .copied()
            .flatten()
    }
}

impl PartialEq for Written {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for Written {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Written({} fragments)", self.fragments.len())
    }
}

/// Whether any string under `v` is a template.
fn holds_template(v: &Value) -> bool {
    match v {
        Value::String(s) => is_template(s),
        Value::Array(items) => items.iter().any(holds_template),
        Value::Object(map) => map.values().any(holds_template),
        _ => false,
    }
}

/// How far a fragment writes a path.
enum Reach<'v> {
    /// It writes the whole path: the value there.
    Whole(&'v Value),
    /// A template at the first `n` steps makes the value that holds the rest.
    Template(usize),
    /// It does not write the path; an earlier fragment may.
    Not,
}

fn reach<'v>(mut v: &'v Value, steps: &[Step<'_>]) -> Reach<'v> {
    for (n, step) in steps.iter().enumerate() {
        if let Value::String(s) = v {
            return if is_template(s) {
                Reach::Template(n)
            } else {
                Reach::Not
            };
        }
        let next = match step {
            Step::Key(key) => v.field(key),
            Step::Index(i) => v.as_array().and_then(|items| items.get(*i)),
        };
        match next {
            Some(next) => v = next,
            None => return Reach::Not,
        }
    }
    Reach::Whole(v)
}

impl Written {
    /// The fragments, in merge order.
    pub fn new(fragments: Vec<Fragment>) -> Written {
        Written {
            fragments: fragments.into(),
            owner: None,
        }
    }

    /// The same, for objects of the family or preference at `owner`, which sets `settings`.
    pub fn with_owner(self, owner: Origin, settings: Settings) -> Written {
        Written {
            owner: Some((owner, settings)),
            ..self
        }
    }

    /// Whether there is anything to say about any field.
    pub fn is_empty(&self) -> bool {
        self.fragments.is_empty() && self.owner.is_none()
    }

    /// Where the field at `steps` of the rendered object is written, when one fragment's
    /// document (found in `docs`) says so and its text is at hand.
    ///
    /// The last fragment that writes the whole path wins, as it does in the merge. When the
    /// value there holds a template, the value comes from what the template reads (a size row,
    /// a trait) and only `key` (the finding is about the field's name, not its value) keeps
    /// it there; a value made from one trait or var alone is then at that trait or var. A
    /// template that makes the value holding the field (a string that renders to a mapping) is
    /// where a name is written when no fragment writes the whole path.
    pub fn origin_of(
        &self,
        steps: &[Step<'_>],
        key: bool,
        docs: &CatalogDocs<'_>,
    ) -> Option<Origin> {
        let mut made_by: Option<(&Object, Vec<Step<'_>>)> = None;
        for fragment in self.fragments.iter().rev() {
            let Some(rest) = strip_keys(steps, fragment.into) else {
                continue;
            };
            // A document not among them (the shipped catalog's) says nothing.
            let doc = docs.get(&fragment.doc)?;
            let keys = fragment.at.keys();
            let at: &[&str] = if keys[2].is_empty() {
                &keys[..2]
            } else {
                &keys
            };
            let Some(root) = crate::model::path::get(&doc.value, at) else {
                continue;
            };
            let mut path: Vec<Step<'_>> = at.iter().map(|k| Step::Key(k)).collect();
            match reach(root, rest) {
                Reach::Whole(value) => {
                    if !key && holds_template(value) {
                        let text = value.as_str();
                        if let Some(origin) = text.and_then(|t| self.setting_origin(t, docs)) {
                            return Some(origin);
                        }
                        // What a template makes of a size, a variant's traits or the object's
                        // name differs from one combination to the next, and the object's own
                        // line (its size row) says which. What it makes of none of them is the
                        // same in every combination: the template's line is where to fix it.
                        if text.is_none_or(|t| crate::render::reads_any(t, COMBINATION)) {
                            return None;
                        }
                        path.extend_from_slice(rest);
                        return line_in(doc, &path);
                    }
                    path.extend_from_slice(rest);
                    return line_in(doc, &path);
                }
                Reach::Template(n) if key && made_by.is_none() => {
                    path.extend_from_slice(&rest[..n]);
                    made_by = Some((doc, path));
                }
                Reach::Template(_) | Reach::Not => {}
            }
        }
        made_by.and_then(|(doc, path)| line_in(doc, &path))
    }

    /// Where the family or preference sets the one trait or var the template `text` makes
    /// its value from, when it reads one alone and no variant may set it otherwise.
    fn setting_origin(&self, text: &str, docs: &CatalogDocs<'_>) -> Option<Origin> {
        let (owner, settings) = self.owner.as_ref()?;
        let name = crate::render::reads_only(text, settings.root, settings.others)?;
        let owner = docs.get(owner)?;
        let spec = owner.value.get("spec")?;
        spec.get(settings.root)?.get(name)?;
        let in_variant = settings.in_variants
            && spec
                .get("variants")
                .and_then(Value::as_array)
                .is_some_and(|vs| {
                    vs.iter()
                        .any(|v| v.pointer("/traits").and_then(|t| t.get(name)).is_some())
                });
        if in_variant {
            return None;
        }
        line_in(
            owner,
            &[Step::Key("spec"), Step::Key(settings.root), Step::Key(name)],
        )
    }
}

/// `steps` after the keys `keys`, when it starts with them.
fn strip_keys<'s, 'p>(steps: &'s [Step<'p>], keys: &[&str]) -> Option<&'s [Step<'p>]> {
    if steps.len() < keys.len() {
        return None;
    }
    let (head, rest) = steps.split_at(keys.len());
    head.iter()
        .zip(keys)
        .all(|(step, key)| *step == Step::Key(key))
        .then_some(rest)
}

/// The origin of the field at `path` in `doc`, found in its text.
fn line_in(doc: &Object, path: &[Step<'_>]) -> Option<Origin> {
    doc.steps_line(path)
        .map(|line| doc.origin.at_line(Some(line)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::locate::parse_path;

    const FAMILY: &str = "\
apiVersion: kvrender.io/v1alpha1
kind: InstancetypeFamily
metadata: {name: g}
spec:
  sizes:
    - [small, 4, 16Gi]
  template:
    spec:
      cpu:
        guest: \"{{ size.cpu }}\"
        dedicatedCpuPlacement: true
      memory:
        hugepages: \"{{ {'pageSzie': '1Gi'} }}\"
";

    const PARTS: &str = "\
apiVersion: kvrender.io/v1alpha1
kind: Parts
metadata: {name: p}
parts:
  base:
    spec:
      cpu:
        guest: 1
        model: host-passthrough
        dedicatedCpuPlacement: false
      memory:
        hugepages: {pageSize: 2Mi}
";

    fn doc(path: &str, text: &str) -> Object {
        Object::new(yaml(text), Origin::new(path, 0, Some(1))).with_source(text.into(), 1)
    }

    fn yaml(text: &str) -> Value {
        crate::load::parse_text(&Arc::from("t.yaml"), text)
            .objects
            .into_iter()
            .next()
            .expect("one document")
            .value
    }

    fn at(field: &str, key: bool) -> Option<String> {
        let docs = [doc("parts.yaml", PARTS), doc("g.yaml", FAMILY)];
        let written = Written::new(vec![
            Fragment {
                doc: docs[0].origin.clone(),
                at: At::Part("base".into(), "spec"),
                into: &["spec"],
            },
            Fragment {
                doc: docs[1].origin.clone(),
                at: At::Own("template"),
                into: &[],
            },
        ]);
        written
            .origin_of(&parse_path(field), key, &CatalogDocs::new(&docs))
            .map(|o| o.to_string())
    }

    #[test]
    fn the_last_fragment_that_writes_a_field_says_where() {
        assert_eq!(
            at("spec.cpu.dedicatedCpuPlacement", true).as_deref(),
            Some("g.yaml:11")
        );
        // Written by the part only.
        assert_eq!(at("spec.cpu.model", false).as_deref(), Some("parts.yaml:9"));
    }

    #[test]
    fn a_templated_value_stays_with_what_it_reads_unless_the_name_is_at_fault() {
        assert_eq!(at("spec.cpu.guest", false), None);
        assert_eq!(at("spec.cpu.guest", true).as_deref(), Some("g.yaml:10"));
    }

    #[test]
    fn a_name_a_template_makes_is_at_the_template_when_nothing_writes_it_whole() {
        assert_eq!(
            at("spec.memory.hugepages.pageSzie", true).as_deref(),
            Some("g.yaml:13")
        );
        // The part writes this one whole.
        assert_eq!(
            at("spec.memory.hugepages.pageSize", true).as_deref(),
            Some("parts.yaml:12")
        );
        assert_eq!(at("spec.memory.hugepages.pageSzie", false), None);
    }

    #[test]
    fn a_field_no_fragment_writes_is_not_placed() {
        assert_eq!(at("spec.cpu.sockets", true), None);
        assert_eq!(at("metadata.labels.x", true), None);
    }

    #[test]
    fn documents_not_at_hand_place_nothing() {
        let docs = [doc("g.yaml", FAMILY)];
        let written = Written::new(vec![Fragment {
            doc: docs[0].origin.clone(),
            at: At::Own("template"),
            into: &[],
        }]);
        let steps = parse_path("spec.cpu.dedicatedCpuPlacement");
        assert!(
            written
                .origin_of(&steps, true, &CatalogDocs::default())
                .is_none()
        );
        assert!(
            written
                .origin_of(&steps, true, &CatalogDocs::new(&docs))
                .is_some()
        );
    }

    const TRAITED: &str = "\
apiVersion: kvrender.io/v1alpha1
kind: InstancetypeFamily
metadata: {name: o}
spec:
  traits:
    overcommitPercent: 150
    numa: true
  variants:
    - suffix: \"\"
    - suffix: n
      traits: {numa: false}
  template:
    spec:
      memory:
        overcommitPercent: \"{{ traits.overcommitPercent or none }}\"
        guest: \"{{ size.memory if traits.overcommitPercent else '1Gi' }}\"
      cpu:
        numa: \"{{ traits.numa }}\"
        model: \"{{ traits['overcommitPercent'] ~ traits.numa }}\"
";

    /// A value a template makes from one trait alone is that trait's: a finding about it is at
    /// the trait, once for every size, unless a variant may set the trait too or the template
    /// reads more than the trait.
    #[test]
    fn a_value_made_from_one_trait_is_at_the_trait() {
        let docs = [doc("o.yaml", TRAITED)];
        let written = Written::new(vec![Fragment {
            doc: docs[0].origin.clone(),
            at: At::Own("template"),
            into: &[],
        }]);
        let place = |written: &Written, field: &str, key: bool| {
            written
                .origin_of(&parse_path(field), key, &CatalogDocs::new(&docs))
                .map(|o| o.to_string())
        };
        // Without knowing its family, the value stays with the size.
        assert_eq!(
            place(&written, "spec.memory.overcommitPercent", false),
            None
        );
        let written = written.with_owner(docs[0].origin.clone(), Settings::TRAITS);
        assert_eq!(
            place(&written, "spec.memory.overcommitPercent", false).as_deref(),
            Some("o.yaml:6")
        );
        // The name is the template's, as before.
        assert_eq!(
            place(&written, "spec.memory.overcommitPercent", true).as_deref(),
            Some("o.yaml:15")
        );
        // A size read too; a trait a variant sets; two traits read.
        assert_eq!(place(&written, "spec.memory.guest", false), None);
        assert_eq!(place(&written, "spec.cpu.numa", false), None);
        assert_eq!(place(&written, "spec.cpu.model", false), None);
        // The same trait read twice is one.
        assert_eq!(
            crate::render::reads_only("{{ traits.a if traits.a else none }}", "traits", &["size"]),
            Some("a")
        );
        assert_eq!(
            crate::render::reads_only("{{ traits.a ~ size.name }}", "traits", &["size"]),
            None
        );
    }
}

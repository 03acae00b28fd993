//! Rendering kvrender's compact catalog: instancetype families × sizes × variants and
//! preferences composed from named parts, each emitted cluster-scoped and namespaced.
//!
//! The catalog kinds (`apiVersion: kvrender.io/v1alpha1`):
//! - `Parts`: named object fragments (`metadata`, `spec`) that may include other parts and
//!   give default `traits`/`vars`;
//! - `InstancetypeFamily`: a class prefix and version (`u` + `1` = `u1`), a size table and
//!   optional variants; every size × variant becomes an instancetype named
//!   `<class><version>.<size><suffix>`;
//! - `Preference`: a preference built from parts by name.
//!
//! An object is built by deep-merging (see [`merge`]) the parts in order (each part after the
//! parts it includes, every part once), then the inline `template`, then the `labels` and
//! `annotations` shorthands. Leaves are minijinja templates (see [`template`]) with the
//! combination in scope. Label and annotation values are turned into strings.
//!
//! Combinations render in parallel; the output is sorted by kind then name, so it is the same
//! at any thread count. The format is described for users in the README.

mod embedded;
mod error;
mod family;
pub mod merge;
mod parts;
mod preference;
pub mod template;
mod watch;

use std::sync::Arc;

use foldhash::HashMap;

use rayon::prelude::*;
use serde_json::{Map, Value, json};

use crate::load::Source;
use crate::model::Object;
use crate::model::written::{At, Fragment, Settings, Written};
use crate::origin::Origin;

pub use embedded::{
    embedded_catalog, embedded_lookup, embedded_names, embedded_sources, installed_lookup,
    installed_names, prepare_embedded, render_embedded,
};
pub use error::{Combination, RenderError, RenderErrors};
pub use watch::{Answering, answer_when_stopped};

use crate::load::locate::{self, Step};
use family::Family;
use merge::{deep_merge, deep_merge_owned, merge_entry};
use parts::{Part, PartLibrary};
use preference::Preference;
use template::{FieldStep, LeafError, LeafErrorKind, Templates, context, field_to_string};

/// The API group of kvrender's own catalog kinds.
pub const CATALOG_GROUP: &str = "kvrender.io";
/// The apiVersion of kvrender's own catalog kinds.
pub const CATALOG_API_VERSION: &str = "kvrender.io/v1alpha1";
/// The label stamped with the catalog version when one is given.
pub const VERSION_LABEL: &str = "instancetype.kubevirt.io/common-instancetypes-version";
/// The apiVersion of rendered instancetypes and preferences.
pub const OUTPUT_API_VERSION: &str = "instancetype.kubevirt.io/v1beta1";
/// The most size × variant combinations a catalog's families may render, all together.
///
/// Each combination is a pair of objects held until the output is written, and most leaves
/// are answered without minijinja and so without the watch: nothing else bounds what a small
/// file asks for (1,000 sizes × 1,000 variants, 40 KB, took 6 GB). One combination of the
/// shipped `u` family takes some 14 KiB through `validate`, so this many take under 300 MiB
/// and a few seconds, where the shipped catalog renders about 120 of them.
pub const MAX_COMBINATIONS: usize = 20_000;

/// The most text a catalog's families and preferences may copy into what they render, counted
/// before anything renders: each combination copies its templates' plain values (what no
/// template computes) into each of its objects. A 460 KB family of 20,000 sizes copying a
/// 20 KB annotation asked for 800 MB of output and took 1.7 GB; the shipped catalog copies
/// under 1 MiB.
pub const MAX_COPIED_BYTES: usize = 128 << 20;

/// Whether `object` is one of kvrender's catalog kinds (any kind of the `kvrender.io` group but
/// the function's own configuration, `KVRender`, which no command renders or checks).
pub fn is_catalog_kind(object: &Object) -> bool {
    object
        .api_version()
        .split_once('/')
        .is_some_and(|(group, _)| group == CATALOG_GROUP)
        && object.kind_str() != crate::krm::config::KIND
}

/// Options of a render run.
#[derive(Clone, Debug, Default)]
pub struct RenderOptions<'a> {
    /// When set, every rendered object gets the version label with this value.
    pub version: Option<&'a str>,
    /// The label key for `version`; [`VERSION_LABEL`] when unset.
    pub version_label: Option<&'a str>,
    /// The texts the objects were parsed from. Optional: with them, errors and origins point
    /// at the exact line of a size row or template leaf instead of the document's first line.
    pub sources: &'a [Source],
    /// Other catalog documents (the `--catalog` files) whose parts a family or preference may
    /// name when the catalog being rendered does not define them; nothing else of them is
    /// rendered here.
    pub more_parts: &'a [Object],
    /// The texts `more_parts` were parsed from (optional, as `sources`).
    pub more_sources: &'a [Source],
    /// Whether the shipped catalog's parts come last, after `more_parts`.
    pub shipped_parts: bool,
}

/// The result of a render run.
#[derive(Clone, Debug, Default)]
pub struct Rendered {
    /// The generated objects, sorted by kind then name.
    pub objects: Vec<Object>,
    /// What produced each object: `combinations[i]` belongs to `objects[i]`.
    pub combinations: Vec<Combination>,
    /// The positions among the input objects of those that are not catalog kinds, in input
    /// order: they pass through untouched. Positions, not copies: a repository's VMs are
    /// rendered beside its catalog, and copying each of their trees would double the memory a
    /// `validate` of them takes.
    pub passthrough: Vec<usize>,
}

/// Which kinds a family or preference is emitted as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scopes {
    /// `VirtualMachineCluster…`
    pub cluster: bool,
    /// `VirtualMachine…` (namespaced)
    pub namespaced: bool,
}

impl Scopes {
    fn parse(doc: &Doc<'_>, value: Option<&Value>) -> Result<Scopes, RenderError> {
        let at = [Step::Key("spec"), Step::Key("scopes")];
        let Some(value) = value else {
            return Ok(Scopes {
                cluster: true,
                namespaced: true,
            });
        };
        let mut scopes = Scopes {
            cluster: false,
            namespaced: false,
        };
        let items = value.as_array().filter(|a| !a.is_empty()).ok_or_else(|| {
            doc.invalid(
                &at,
                "`scopes` must be a non-empty list of `cluster` and `namespaced`".into(),
            )
        })?;
        for item in items {
            match item.as_str() {
                Some("cluster") => scopes.cluster = true,
                Some("namespaced") => scopes.namespaced = true,
                _ => {
                    return Err(doc.invalid(
                        &at,
                        format!("unknown scope {item} (expected `cluster` or `namespaced`)"),
                    ));
                }
            }
        }
        Ok(scopes)
    }
}

/// One catalog document and the text it came from (when known).
#[derive(Clone, Debug)]
pub(crate) struct Doc<'a> {
    obj: &'a Object,
    /// The text holding the document and the file line that text starts on: the whole file
    /// (line 1) when the caller passed the sources, else the document's own text.
    text: Option<(&'a str, u32)>,
    /// `text` cut into lines, once, when the first field is looked up.
    lines: std::sync::OnceLock<Vec<&'a str>>,
}

impl<'a> Doc<'a> {
    fn new(obj: &'a Object, file: Option<&'a str>) -> Doc<'a> {
        // An item of a list document is found through its own document's text (see `at`).
        let file = file.filter(|_| !obj.entry);
        let text = file
            .map(|t| (t, 1))
            .or_else(|| obj.source.as_ref().map(|(t, first)| (t.as_ref(), *first)));
        Doc {
            obj,
            text,
            lines: std::sync::OnceLock::new(),
        }
    }

    /// The origin of the field at `steps`, as precise as the source text allows.
    fn at(&self, steps: &[Step<'_>]) -> Origin {
        if steps.is_empty() {
            // The document itself: its own line, nothing to search.
            return self.obj.origin.clone();
        }
        // Found in the document's own text, whose lines its object cuts once for every
        // lookup: a family's thousands of size rows are not each searched from the file's top.
        if let Some(line) = self.obj.steps_line(steps) {
            return self.obj.origin.at_line(Some(line));
        }
        if let (true, Some((text, first))) = (self.obj.entry, self.text) {
            let path: Vec<Step<'_>> = std::iter::once(Step::Index(0))
                .chain(steps.iter().copied())
                .collect();
            let line = locate::field_line_of(text, first, &path);
            return self.obj.origin.at_line(line.or(self.obj.origin.line));
        }
        match (self.text, self.obj.origin.line) {
            (Some((text, first)), Some(line)) if line >= first => {
                let lines = self.lines.get_or_init(|| text.lines().collect());
                let found = locate::locate_in_lines(lines, line - first + 1, steps);
                self.obj.origin.at_line(Some(found + first - 1))
            }
            _ => self.obj.origin.clone(),
        }
    }

    /// The text of the line that holds the field at `steps`, when the source text is known.
    fn line_text(&self, steps: &[Step<'_>]) -> Option<&'a str> {
        let (text, first) = self.text?;
        let line = self.at(steps).line?;
        let lines = self.lines.get_or_init(|| text.lines().collect());
        let at = usize::try_from(line.checked_sub(first)?).ok()?;
        lines.get(at).copied()
    }

    /// Whether the file line `line` holds a key whose value is a block scalar (`|`, `>`).
    fn is_block_scalar(&self, line: u32) -> bool {
        self.text.is_some_and(|(text, first)| {
            line >= first && locate::is_block_scalar(text, line - first + 1)
        })
    }

    fn invalid(&self, steps: &[Step<'_>], message: String) -> RenderError {
        RenderError::Invalid {
            location: self.at(steps),
            object: self.object_ref(),
            message,
        }
    }

    /// The document as a finding names it, when it has a name.
    pub(crate) fn object_ref(&self) -> Option<Box<crate::origin::ObjectRef>> {
        (!self.obj.name().is_empty()).then(|| Box::new(self.obj.object_ref()))
    }

    /// `spec` as a mapping whose keys are all in `allowed`.
    /// Copy the display fields of `spec` into `info`, check that each of `maps` is a mapping
    /// where present, and read the `parts` list: what families and preferences share.
    fn common_fields(
        &self,
        spec: &'a Map<String, Value>,
        info: &mut Map<String, Value>,
        maps: &[&str],
    ) -> Result<Vec<(&'a str, usize)>, RenderError> {
        for key in ["displayName", "description"] {
            if let Some(v) = spec.get(key) {
                info.insert(key.into(), v.clone());
            }
        }
        for key in maps {
            if spec.get(*key).is_some_and(|v| !v.is_object()) {
                return Err(self.invalid(
                    &[Step::Key("spec"), Step::Key(key)],
                    format!("`{key}` must be a mapping"),
                ));
            }
        }
        if let Some(template) = spec.get("template").and_then(Value::as_object) {
            let at = |keys: &[&'a str]| -> Vec<Step<'a>> {
                [Step::Key("spec"), Step::Key("template")]
                    .into_iter()
                    .chain(keys.iter().map(|k| Step::Key(k)))
                    .collect()
            };
            for key in ["apiVersion", "kind"] {
                if template.contains_key(key) {
                    return Err(self.invalid(
                        &at(&[key]),
                        format!(
                            "`template.{key}` cannot be set: what is rendered is an instancetype \
                             or a preference of the API version kvrender writes, cluster-scoped, \
                             namespaced or both as `scopes` says"
                        ),
                    ));
                }
            }
            let metadata = template.get("metadata").and_then(Value::as_object);
            for key in ["name", "generateName"] {
                if metadata.is_some_and(|m| m.contains_key(key)) {
                    return Err(self.invalid(
                        &at(&["metadata", key]),
                        format!(
                            "`template.metadata.{key}` cannot be set: each object is named after \
                             its family and size, or after its preference"
                        ),
                    ));
                }
            }
        }
        parts::name_list(
            self,
            &[Step::Key("spec"), Step::Key("parts")],
            spec.get("parts"),
        )
    }

    fn spec_map(&self, allowed: &[&str]) -> Result<&'a Map<String, Value>, RenderError> {
        let kind = self.obj.kind_str();
        for key in self
            .obj
            .value
            .as_object()
            .into_iter()
            .flat_map(|m| m.keys())
        {
            if !matches!(key.as_str(), "apiVersion" | "kind" | "metadata" | "spec") {
                return Err(self.invalid(
                    &[Step::Key(key)],
                    format!("unknown field `{key}` in {kind} (its definition goes under `spec`)"),
                ));
            }
        }
        let spec = self
            .obj
            .value
            .get("spec")
            .and_then(Value::as_object)
            .ok_or_else(|| self.invalid(&[], format!("{kind} needs a `spec` mapping")))?;
        for key in spec.keys() {
            if !allowed.contains(&key.as_str()) {
                return Err(self.invalid(
                    &[Step::Key("spec"), Step::Key(key)],
                    format!(
                        "unknown field `spec.{key}` in {kind}{} (expected one of {})",
                        did_you_mean(key, allowed),
                        allowed.join(", ")
                    ),
                ));
            }
        }
        Ok(spec)
    }
}

/// What one unit of parallel work renders.
enum Job<'c, 'a> {
    Size {
        family: &'c Family<'a>,
        parts: &'c [&'c Part<'a>],
        scope: &'c FamilyScope,
        size: usize,
        variant: usize,
    },
    Preference {
        preference: &'c Preference<'a>,
        parts: &'c [&'c Part<'a>],
        vars: &'c Value,
    },
}

impl Job<'_, '_> {
    /// The name of the objects this combination renders.
    fn name(&self) -> String {
        match self {
            Job::Size {
                family,
                size,
                variant,
                ..
            } => format!(
                "{}.{}{}",
                family.id, family.sizes[*size].name, family.variants[*variant].suffix
            ),
            Job::Preference { preference, .. } => preference.name.to_string(),
        }
    }

    /// The family or preference document this job renders, when it has a name.
    fn owner(&self) -> Option<crate::origin::ObjectRef> {
        let doc = match self {
            Job::Size { family, .. } => &family.doc,
            Job::Preference { preference, .. } => &preference.doc,
        };
        (!doc.obj.name().is_empty()).then(|| doc.obj.object_ref())
    }

    /// The combination this job renders and where it is written: a family's size row, or a
    /// preference's document.
    fn site(&self) -> (Combination, Origin) {
        match self {
            Job::Size {
                family,
                size,
                variant,
                ..
            } => (
                Combination::Instancetype {
                    family: family.id.clone(),
                    size: family.sizes[*size].name.clone(),
                    variant: family.variants[*variant].suffix.clone(),
                },
                family
                    .doc
                    .at(&[Step::Key("spec"), Step::Key("sizes"), Step::Index(*size)]),
            ),
            Job::Preference { preference, .. } => (
                Combination::Preference {
                    name: preference.name.to_string(),
                },
                preference.doc.at(&[]),
            ),
        }
    }

    /// The kinds this combination is emitted as: (cluster-scoped, namespaced), each when its
    /// scope is on.
    fn kinds(&self) -> (Option<&'static str>, Option<&'static str>) {
        let (scopes, cluster, namespaced) = match self {
            Job::Size { family, .. } => (
                family.scopes,
                "VirtualMachineClusterInstancetype",
                "VirtualMachineInstancetype",
            ),
            Job::Preference { preference, .. } => (
                preference.scopes,
                "VirtualMachineClusterPreference",
                "VirtualMachinePreference",
            ),
        };
        (
            scopes.cluster.then_some(cluster),
            scopes.namespaced.then_some(namespaced),
        )
    }
}

/// A family's values as templates see them, converted once and shared (minijinja values
/// are reference-counted) by every size × variant combination.
struct FamilyScope {
    info: minijinja::Value,
    sizes: Vec<minijinja::Value>,
    /// Per variant: the variant's own fields and the traits in force for it.
    variants: Vec<(minijinja::Value, minijinja::Value)>,
}

impl FamilyScope {
    fn new(family: &Family<'_>, traits: &Value) -> FamilyScope {
        FamilyScope {
            info: context(&family.info),
            sizes: family.sizes.iter().map(|s| context(&s.value)).collect(),
            variants: family
                .variants
                .iter()
                .map(|v| {
                    let traits = match &v.traits {
                        Some(own) => {
                            let mut merged = traits.clone();
                            deep_merge(&mut merged, own);
                            context(&merged)
                        }
                        None => context(traits),
                    };
                    (context(&v.value), traits)
                })
                .collect(),
        }
    }
}

/// Render the catalog documents among `objects`; other objects pass through untouched.
///
/// # Errors
/// Every failure of the first step that fails (see [`RenderErrors`]): malformed documents,
/// unknown parts, templates that do not render, or two definitions of the same kind and name.
pub fn render<'o>(
    objects: impl IntoIterator<Item = &'o Object>,
    options: &RenderOptions<'_>,
) -> Result<Rendered, RenderErrors> {
    let texts: HashMap<&str, &str> = options
        .sources
        .iter()
        .filter_map(|s| Some((s.path.as_ref(), std::str::from_utf8(&s.bytes).ok()?)))
        .collect();
    let objects: Vec<&Object> = objects.into_iter().collect();
    let mut catalog = Catalog::read(&objects, &texts)?;
    catalog.add_fallbacks(options);
    let env = template::sandbox();
    let prepared = catalog.prepare(&env)?;
    if let Some(errors) =
        too_much_to_copy(&catalog, &prepared).and_then(|e| RenderErrors::of(vec![e]))
    {
        return Err(errors);
    }
    let jobs = prepared.jobs(&catalog);
    let (order, names) = output_order(&jobs);
    let written = written_of(&jobs);

    let watch = prepared.templates.watch();
    let results: Vec<JobResult> = watch::watched(
        watch,
        jobs.len(),
        |job| {
            let (combination, origin) = jobs[job].site();
            watch::Described {
                origin,
                combination: combination.to_string(),
                object: jobs[job].owner(),
            }
        },
        |running| {
            let one = |i: usize| {
                let _rendering = running.enter(i);
                render_job(
                    &prepared.templates,
                    &prepared.notes,
                    &jobs[i],
                    written[i].as_ref(),
                    options,
                )
            };
            // The memory watch sees the whole process: combinations that grow values render
            // one after the other, so that whether one passes its budget does not depend on
            // how many others happen to render beside it (or on `--threads`).
            if watch == watch::Watch::TimeAndMemory {
                (0..jobs.len()).map(one).collect()
            } else {
                (0..jobs.len()).into_par_iter().map(one).collect()
            }
        },
    );
    // Each job's objects, in the order of its kinds, to be taken into their places.
    let mut rendered: Vec<[Option<(Object, Combination)>; 2]> = Vec::with_capacity(jobs.len());
    let mut errors: Vec<RenderError> = Vec::new();
    for (job, result) in jobs.iter().zip(results) {
        let mut slots = [None, None];
        match result {
            Ok(objects) => {
                for (slot, item) in slots.iter_mut().zip(objects) {
                    *slot = Some(item);
                }
            }
            Err(failed) => {
                for mut e in failed {
                    e.set_object(job.owner());
                    // A leaf that fails for one size most likely fails for every size: it is
                    // reported once, naming the others.
                    match errors.iter_mut().find(|seen| same_leaf(seen, &e)) {
                        Some(first) => first.also_fails_for(&e),
                        None => errors.push(e),
                    }
                }
            }
        }
        rendered.push(slots);
    }
    errors.extend(prepared.unused_part_errors);
    if let Some(errors) = RenderErrors::of(std::mem::take(&mut errors)) {
        return Err(errors);
    }
    // Objects of one kind and name are next to each other in `order`; within such a run, two
    // in the same namespace (namespaced kinds) are two definitions of one object.
    let mut run_start = 0;
    for (at, place) in order.iter().enumerate() {
        let head = &order[run_start];
        if head.kind != place.kind || names[head.job] != names[place.job] {
            run_start = at;
            continue;
        }
        let Some((second, _)) = &rendered[place.job][place.slot] else {
            continue;
        };
        let first = order[run_start..at]
            .iter()
            .filter_map(|p| rendered[p.job][p.slot].as_ref().map(|(o, _)| o))
            .find(|o| {
                !o.kind().is_namespaced() || o.effective_namespace() == second.effective_namespace()
            });
        let Some(first) = first else { continue };
        // The two scopes of one pair of definitions clash alike: the first clash says it.
        let seen = errors.iter().any(|e| {
            matches!(e, RenderError::Duplicate { location, other, .. }
                if *location == second.origin && **other == first.origin)
        });
        if !seen {
            errors.push(RenderError::Duplicate {
                location: second.origin.clone(),
                kind: second.kind_str().to_string(),
                name: second.name().to_string(),
                other: Box::new(first.origin.clone()),
            });
        }
    }
    // Found in output order (kind, then name); reported in catalog order.
    errors.sort_by(|a, b| a.location().cmp(b.location()));
    if let Some(errors) = RenderErrors::of(errors) {
        return Err(errors);
    }
    // Objects of one kind and name in several namespaces: by namespace (a template may set
    // it, so it is known only now), whatever the order of the catalog's documents.
    let mut order = order;
    let namespace_of = |p: &Place| {
        rendered[p.job][p.slot]
            .as_ref()
            .map(|(o, _)| o.effective_namespace())
    };
    let mut start = 0;
    while start < order.len() {
        let head = &order[start];
        let end = start
            + order[start..]
                .iter()
                .take_while(|p| p.kind == head.kind && names[p.job] == names[head.job])
                .count();
        if end - start > 1 {
            order[start..end].sort_by(|a, b| namespace_of(a).cmp(&namespace_of(b)));
        }
        start = end;
    }
    let mut objects = Vec::with_capacity(order.len());
    let mut combinations = Vec::with_capacity(order.len());
    for place in &order {
        if let Some((object, combination)) = rendered[place.job][place.slot].take() {
            objects.push(object);
            combinations.push(combination);
        }
    }
    Ok(Rendered {
        objects,
        combinations,
        passthrough: catalog.passthrough,
    })
}

/// Where one rendered object goes: the `slot`-th object of job `job` (cluster-scoped first),
/// of kind `kind`.
struct Place {
    kind: &'static str,
    job: usize,
    slot: usize,
}

/// The output order of every object the jobs render, by kind then name, and the name of each
/// job's objects. Kinds and names are known before anything renders (templates cannot change
/// them), so the order is settled from the jobs and each object is moved once, into its
/// place. Objects of the same kind and name stay in job order here; once rendered, their
/// namespaces order them.
fn output_order(jobs: &[Job<'_, '_>]) -> (Vec<Place>, Vec<String>) {
    let names: Vec<String> = jobs.iter().map(Job::name).collect();
    let mut order = Vec::with_capacity(jobs.len() * 2);
    for (index, job) in jobs.iter().enumerate() {
        let (cluster, namespaced) = job.kinds();
        for (slot, kind) in cluster.into_iter().chain(namespaced).enumerate() {
            order.push(Place {
                kind,
                job: index,
                slot,
            });
        }
    }
    order.sort_by(|a, b| (a.kind, &names[a.job]).cmp(&(b.kind, &names[b.job])));
    (order, names)
}

/// The catalog documents among some objects, read: the parts, families and preferences they
/// define, and the objects that are not catalog kinds.
struct Catalog<'a> {
    library: PartLibrary<'a>,
    families: Vec<Family<'a>>,
    preferences: Vec<Preference<'a>>,
    passthrough: Vec<usize>,
}

/// A catalog ready to render any of its combinations: the parts of every family and
/// preference resolved, their defaults merged, and every template leaf compiled.
struct Prepared<'c, 'e, 'a> {
    /// Per family (in catalog order): its parts and its values as templates see them.
    family_parts: Vec<(Vec<&'c Part<'a>>, FamilyScope)>,
    /// Per preference (in catalog order): its parts and its merged `vars`.
    preference_parts: Vec<(Vec<&'c Part<'a>>, Value)>,
    templates: Templates<'e, 'a>,
    /// The template syntax errors of the catalog's own parts that nothing uses (what is used
    /// is reported when rendered).
    unused_part_errors: Vec<RenderError>,
    /// By part address: what a template error in that part adds, for the catalog's own parts
    /// that a borrowed part names (they replace the borrowed part's namesake).
    notes: HashMap<usize, String>,
}

impl<'a> Catalog<'a> {
    /// Read the documents (in parallel; every failure is kept, in input order).
    fn read(objects: &[&'a Object], texts: &HashMap<&str, &'a str>) -> Result<Self, RenderErrors> {
        let read: Vec<Result<Read<'_>, RenderError>> = objects
            .par_iter()
            .map(|obj| read_document(obj, texts))
            .collect();
        let mut catalog = Catalog {
            library: PartLibrary::default(),
            families: Vec::new(),
            preferences: Vec::new(),
            passthrough: Vec::new(),
        };
        let mut errors = Vec::new();
        // A second definition of a family or preference is refused here, at this step, so
        // that the objects the two would both render are not each reported again.
        let mut defined: HashMap<(&str, &str, &str), &Object> = HashMap::default();
        let mut first_definition = |obj: &'a Object, errors: &mut Vec<RenderError>| match defined
            .entry((obj.kind_str(), obj.effective_namespace(), obj.name()))
        {
            std::collections::hash_map::Entry::Occupied(first) => {
                errors.push(RenderError::Redefined {
                    location: obj.origin.clone(),
                    object: Box::new(obj.object_ref()),
                    other: Box::new(first.get().origin.clone()),
                    hint: family::versions_apart(first.get(), obj),
                });
                false
            }
            std::collections::hash_map::Entry::Vacant(entry) => {
                entry.insert(obj);
                true
            }
        };
        for (at, read) in read.into_iter().enumerate() {
            match read {
                Ok(Read::Passthrough) => catalog.passthrough.push(at),
                Ok(Read::Parts(doc)) => {
                    if let Err(e) = catalog.library.add(doc) {
                        errors.push(e);
                    }
                }
                Ok(Read::Family(family)) => {
                    if first_definition(objects[at], &mut errors) {
                        catalog.families.push(family);
                    }
                }
                Ok(Read::Preference(preference)) => {
                    if first_definition(objects[at], &mut errors) {
                        catalog.preferences.push(preference);
                    }
                }
                Err(e) => errors.push(e),
            }
        }
        errors.extend(too_many_combinations(&catalog.families));
        match RenderErrors::of(errors) {
            Some(errors) => Err(errors),
            None => Ok(catalog),
        }
    }

    /// When a family, preference or part names a part the catalog does not define, look such
    /// names up in `options.more_parts`, then (with `options.shipped_parts`) in the shipped
    /// catalog's parts. Their own mistakes are reported where they are rendered, not here: a
    /// `Parts` document that does not read is skipped.
    fn add_fallbacks(&mut self, options: &RenderOptions<'a>) {
        let named = self
            .families
            .iter()
            .flat_map(|f| &f.parts)
            .chain(self.preferences.iter().flat_map(|p| &p.parts))
            .map(|(name, _)| *name);
        if self.library.has_all(named) {
            return;
        }
        fn library<'a>(
            objects: impl Iterator<Item = &'a Object>,
            texts: &HashMap<&str, &'a str>,
        ) -> PartLibrary<'a> {
            let mut library = PartLibrary::default();
            for obj in objects {
                if obj.kind_str() == "Parts"
                    && let Ok(Read::Parts(doc)) = read_document(obj, texts)
                {
                    // A document with a mistake still lends the parts read before it.
                    let _ = library.add(doc);
                }
            }
            library
        }
        let texts: HashMap<&str, &str> = options
            .more_sources
            .iter()
            .filter_map(|s| Some((s.path.as_ref(), std::str::from_utf8(&s.bytes).ok()?)))
            .collect();
        let mut more = library(options.more_parts.iter(), &texts);
        if options.shipped_parts {
            let (objects, texts) = embedded::shipped_parts();
            more.set_fallback(library(objects.iter(), texts));
        } else {
            self.library.set_shipped_off();
        }
        self.library.set_fallback(more);
    }

    /// Resolve parts and defaults (in parallel; every failure is kept, in catalog order)
    /// while every template leaf is compiled once, to be evaluated for each combination.
    fn prepare<'c, 'e>(
        &'c self,
        env: &'e minijinja::Environment<'a>,
    ) -> Result<Prepared<'c, 'e, 'a>, RenderErrors> {
        let spec_parts = [Step::Key("spec"), Step::Key("parts")];
        let library = &self.library;
        let (resolved, templates) = rayon::join(
            || {
                let families: Vec<Result<_, Vec<RenderError>>> = self
                    .families
                    .par_iter()
                    .map(|family| {
                        let who = format!("family `{}`", family.id);
                        let parts =
                            library.resolve(&family.parts, &family.doc, &who, &spec_parts)?;
                        check_traits(family, &parts)?;
                        let traits = merged_defaults(&parts, family.traits);
                        let scope = FamilyScope::new(family, &traits);
                        Ok((parts, scope))
                    })
                    .collect();
                let preferences: Vec<Result<_, Vec<RenderError>>> = self
                    .preferences
                    .par_iter()
                    .map(|preference| {
                        let who = format!("preference `{}`", preference.name);
                        let parts = library.resolve(
                            &preference.parts,
                            &preference.doc,
                            &who,
                            &spec_parts,
                        )?;
                        check_vars(preference, &parts)?;
                        let vars = merged_defaults(&parts, preference.vars);
                        Ok((parts, vars))
                    })
                    .collect();
                (families, preferences)
            },
            || {
                let mut templates = Templates::new(env);
                for part in library.parts() {
                    part.metadata
                        .into_iter()
                        .chain(part.spec)
                        .for_each(|t| templates.add_tree(t));
                }
                for family in &self.families {
                    [family.template, family.labels, family.annotations]
                        .into_iter()
                        .flatten()
                        .for_each(|t| templates.add_tree(t));
                }
                for preference in &self.preferences {
                    [
                        preference.template,
                        preference.labels,
                        preference.annotations,
                    ]
                    .into_iter()
                    .flatten()
                    .for_each(|t| templates.add_tree(t));
                }
                templates
            },
        );
        let (family_parts, preference_parts) = resolved;
        let mut errors = Vec::new();
        let family_parts = keep_oks(family_parts, &mut errors);
        let preference_parts = keep_oks(preference_parts, &mut errors);
        let roots = (self.families.iter().flat_map(|f| &f.parts))
            .chain(self.preferences.iter().flat_map(|p| &p.parts))
            .map(|(name, _)| *name);
        errors.extend(library.unused_errors(roots));
        // One cycle met from several of its parts is one mistake.
        let mut seen: Vec<Vec<String>> = Vec::new();
        errors.retain(|e| match cycle_members(e) {
            Some(members) if seen.iter().any(|m| *m == members) => false,
            Some(members) => {
                seen.push(members.into_iter().map(str::to_string).collect());
                true
            }
            None => true,
        });
        if let Some(errors) = RenderErrors::of(errors) {
            return Err(errors);
        }
        // Every part some family or preference uses, each once, in first-use order.
        let mut used: Vec<&Part<'a>> = Vec::new();
        for part in family_parts
            .iter()
            .map(|(parts, _)| parts)
            .chain(preference_parts.iter().map(|(parts, _)| parts))
            .flatten()
        {
            if !used.iter().any(|p| std::ptr::eq(*p, *part)) {
                used.push(part);
            }
        }
        // Parts taken from a fallback library are compiled here, once, like the catalog's own.
        let mut templates = templates;
        let borrowed: Vec<&Part<'a>> = used
            .iter()
            .copied()
            .filter(|part| !library.defines(part))
            .collect();
        for part in &borrowed {
            part.metadata
                .into_iter()
                .chain(part.spec)
                .for_each(|t| templates.add_tree(t));
        }
        // A part nothing uses is never rendered; a template in it that does not compile is
        // still a broken catalog file.
        let mut unused: Vec<&Part<'a>> = library
            .parts()
            .filter(|part| !used.iter().any(|p| std::ptr::eq(*p, *part)))
            .collect();
        unused.sort_unstable_by_key(|part| part.name);
        let mut unused_part_errors = Vec::new();
        for part in unused {
            let combination = Combination::UnusedPart {
                name: part.name.to_string(),
            };
            for (key, tree) in [("metadata", part.metadata), ("spec", part.spec)] {
                let Some(tree) = tree else { continue };
                let site = Site {
                    doc: &part.doc,
                    steps: &[Step::Key("parts"), Step::Key(part.name), Step::Key(key)],
                    note: "",
                    relocate: None,
                };
                unused_part_errors.extend(
                    templates
                        .syntax_errors(tree)
                        .into_iter()
                        .map(|error| leaf_error(&site, error, &combination)),
                );
            }
        }
        // A borrowed part that names a part this catalog defines gets this catalog's part: an
        // error in it then comes from a list the catalog's own documents never wrote.
        let mut notes: HashMap<usize, String> = HashMap::default();
        for part in &borrowed {
            for (sub, _) in &part.parts {
                if let Some(own) = library.own(sub) {
                    notes
                        .entry(std::ptr::from_ref(own) as usize)
                        .or_insert_with(|| {
                            format!(
                                " (the part `{}` of {} names `{sub}`, and this catalog's own \
                                 `{sub}` stands in for its namesake there)",
                                part.name, part.doc.obj.origin.path
                            )
                        });
                }
            }
        }
        Ok(Prepared {
            family_parts,
            preference_parts,
            templates,
            unused_part_errors,
            notes,
        })
    }
}

impl<'c, 'a> Prepared<'c, '_, 'a> {
    /// Every combination of `catalog` (the catalog this was prepared from), in catalog order.
    fn jobs(&'c self, catalog: &'c Catalog<'a>) -> Vec<Job<'c, 'a>> {
        let mut jobs = Vec::new();
        for (family, (parts, scope)) in catalog.families.iter().zip(&self.family_parts) {
            for size in 0..family.sizes.len() {
                for variant in 0..family.variants.len() {
                    jobs.push(Job::Size {
                        family,
                        parts,
                        scope,
                        size,
                        variant,
                    });
                }
            }
        }
        for (preference, (parts, vars)) in catalog.preferences.iter().zip(&self.preference_parts) {
            jobs.push(Job::Preference {
                preference,
                parts,
                vars,
            });
        }
        jobs
    }
}

/// One input document, read.
enum Read<'a> {
    /// Not a catalog kind: passed through untouched.
    Passthrough,
    Parts(Doc<'a>),
    Family(Family<'a>),
    Preference(Preference<'a>),
}

/// The family whose combinations take the catalog's families past [`MAX_COMBINATIONS`] (in
/// catalog order), refused at its size table: each family under the limit (see
/// [`Family::parse`]) may still be one too many beside the others.
fn too_many_combinations(families: &[Family<'_>]) -> Option<RenderError> {
    let mut total = 0usize;
    for family in families {
        let own = family.sizes.len().saturating_mul(family.variants.len());
        total = total.saturating_add(own);
        if total > MAX_COMBINATIONS {
            return Some(family.doc.invalid(
                family::table_at(family.sizes.len(), family.variants.len()),
                format!(
                    "family `{}`: its {own} size × variant combinations bring the catalog's \
                     families to {total}, more than the {MAX_COMBINATIONS} a catalog may render",
                    family.id
                ),
            ));
        }
    }
    None
}

/// The family or preference whose copies take the catalog past [`MAX_COPIED_BYTES`] (in
/// catalog order), refused at its size table (a family) or its document (a preference): the
/// size of its own trees and its parts' is counted once for each object it renders.
fn too_much_to_copy(catalog: &Catalog<'_>, prepared: &Prepared<'_, '_, '_>) -> Option<RenderError> {
    let copied = |own: [Option<&Value>; 3], parts: &[&Part<'_>], scopes: Scopes| {
        let trees = own
            .into_iter()
            .chain(parts.iter().flat_map(|part| [part.metadata, part.spec]));
        let each = trees
            .flatten()
            .map(tree_bytes)
            .fold(0, usize::saturating_add);
        each.saturating_mul(usize::from(scopes.cluster) + usize::from(scopes.namespaced))
    };
    let mut total = 0usize;
    let over = |total: usize, what: String, doc: &Doc<'_>, steps: &[Step<'_>]| {
        doc.invalid(
            steps,
            format!(
                "{what} would copy about {} MiB of template values into the objects it renders, \
                 more than the {} MiB a catalog may render",
                total.div_ceil(1 << 20),
                MAX_COPIED_BYTES >> 20
            ),
        )
    };
    for (family, (parts, _)) in catalog.families.iter().zip(&prepared.family_parts) {
        let combinations = family.sizes.len().saturating_mul(family.variants.len());
        let own = [family.template, family.labels, family.annotations];
        let before = total;
        total =
            total.saturating_add(copied(own, parts, family.scopes).saturating_mul(combinations));
        if total > MAX_COPIED_BYTES {
            let others = if before > 0 {
                ", with the families before it,"
            } else {
                ""
            };
            let what = format!(
                "family `{}`: its {combinations} size × variant combinations{others}",
                family.id
            );
            let at = family::table_at(family.sizes.len(), family.variants.len());
            return Some(over(total, what, &family.doc, at));
        }
    }
    for (preference, (parts, _)) in catalog.preferences.iter().zip(&prepared.preference_parts) {
        let own = [
            preference.template,
            preference.labels,
            preference.annotations,
        ];
        total = total.saturating_add(copied(own, parts, preference.scopes));
        if total > MAX_COPIED_BYTES {
            let what = format!(
                "preference `{}`, with the families and preferences before it,",
                preference.name
            );
            return Some(over(total, what, &preference.doc, &[]));
        }
    }
    None
}

/// About how many bytes a value takes as text: its strings and keys, and a few for each node.
fn tree_bytes(value: &Value) -> usize {
    const NODE: usize = 4;
    match value {
        Value::String(s) => s.len().saturating_add(NODE),
        Value::Array(items) => items
            .iter()
            .map(tree_bytes)
            .fold(NODE, usize::saturating_add),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| k.len().saturating_add(tree_bytes(v)))
            .fold(NODE, usize::saturating_add),
        _ => NODE * 2,
    }
}

/// `: did you mean `displayName`?` for a field `key` near one of `allowed`, else nothing.
fn did_you_mean(key: &str, allowed: &[&str]) -> String {
    crate::diagnostic::nearest_name(key, allowed.iter().copied())
        .map(|near| format!(": did you mean `{near}`?"))
        .unwrap_or_default()
}

/// The parts of the cycle a [`RenderError::PartCycle`] names, sorted.
fn cycle_members(e: &RenderError) -> Option<Vec<&str>> {
    let RenderError::PartCycle { chain, .. } = e else {
        return None;
    };
    // The chain may lead into the cycle (`x -> a -> b -> a`): the cycle starts where its last
    // name first appears.
    let last = chain.last()?;
    let start = chain.iter().position(|n| n == last)?;
    let mut members: Vec<&str> = chain[start..].iter().map(String::as_str).collect();
    members.sort_unstable();
    members.dedup();
    Some(members)
}

/// The values of `results`; their errors go to `errors`.
fn keep_oks<T>(results: Vec<Result<T, Vec<RenderError>>>, errors: &mut Vec<RenderError>) -> Vec<T> {
    results
        .into_iter()
        .filter_map(|r| r.map_err(|e| errors.extend(e)).ok())
        .collect()
}

/// Whether two failures are the same template leaf failing for two sizes of one family (a
/// leaf of a part several preferences or families share is reported for each of them).
fn same_leaf(a: &RenderError, b: &RenderError) -> bool {
    let leaf = |e: &'_ RenderError| match e {
        RenderError::Template {
            location,
            field,
            combination,
            ..
        }
        | RenderError::Output {
            location,
            field,
            combination,
            ..
        } => Some((location.clone(), field.clone(), combination.owner())),
        _ => None,
    };
    let (Some((at_a, field_a, owner_a)), Some((at_b, field_b, owner_b))) = (leaf(a), leaf(b))
    else {
        return false;
    };
    // A shared part's leaf that fails alike for several families or preferences (a syntax
    // error, a misspelt name) is one mistake: one finding names them all.
    at_a == at_b && field_a == field_b && (owner_a == owner_b || a.same_cause(b))
}

fn read_document<'a>(
    obj: &'a Object,
    texts: &HashMap<&str, &'a str>,
) -> Result<Read<'a>, RenderError> {
    if !is_catalog_kind(obj) {
        return Ok(Read::Passthrough);
    }
    let doc = Doc::new(obj, texts.get(obj.origin.path.as_ref()).copied());
    if obj.api_version() != CATALOG_API_VERSION {
        return Err(doc.invalid(
            &[Step::Key("apiVersion")],
            format!(
                "unsupported apiVersion `{}` (expected `{CATALOG_API_VERSION}`)",
                obj.api_version()
            ),
        ));
    }
    if let Some(namespace) = obj.value.pointer("/metadata/namespace")
        && !(namespace.is_string() || namespace.is_null())
    {
        return Err(doc.invalid(
            &[Step::Key("metadata"), Step::Key("namespace")],
            "`metadata.namespace` must be a string".into(),
        ));
    }
    match obj.kind_str() {
        "Parts" => Ok(Read::Parts(doc)),
        "InstancetypeFamily" => Family::parse(doc).map(Read::Family),
        "Preference" => Preference::parse(doc).map(Read::Preference),
        other => Err(doc.invalid(
            &[Step::Key("kind")],
            format!(
                "unknown catalog kind `{other}` (expected Parts, InstancetypeFamily or Preference)"
            ),
        )),
    }
}

/// What the templates in `text` read of `vars`: the names they read as `vars.NAME`,
/// `vars['NAME']` or `vars["NAME"]` (spaces allowed between the parts), pushed onto `names`.
/// `false` when a template uses `vars` in any other way (`vars | dictsort`, `(vars).cpu`,
/// `vars[key]`, `vars.get('cpu')`): it may then read any var. Only the insides of `{{ }}`
/// and `{% %}` blocks count, and `x.vars` is some other value's attribute.
fn var_reads<'t>(text: &'t str, names: &mut Vec<&'t str>) -> bool {
    reads_of(text, "vars", names)
}

/// [`var_reads`] of the template variable `root` (`vars`, `traits`).
fn reads_of<'t>(text: &'t str, root: &str, names: &mut Vec<&'t str>) -> bool {
    scan_reads(text, root, &[], names)
}

/// The insides of the `{{ }}` and `{% %}` blocks of `text`, in order.
fn blocks(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    // The first `at` from `from` where `bytes[at]` is one of `firsts` and `bytes[at + 1]` one
    // of `seconds`: one pass, where two `find`s per block would scan the rest of the text
    // again for each block.
    let pair = move |from: usize, firsts: &[u8], seconds: &[u8]| -> Option<usize> {
        let mut at = from;
        loop {
            let found = at + bytes.get(at..)?.iter().position(|b| firsts.contains(b))?;
            if bytes.get(found + 1).is_some_and(|b| seconds.contains(b)) {
                return Some(found);
            }
            at = found + 1;
        }
    };
    let mut from = 0;
    std::iter::from_fn(move || {
        let open = pair(from, b"{", b"{%")?;
        let start = open + 2;
        let close = pair(start, b"}%", b"}").unwrap_or(text.len());
        from = close;
        Some(&text[start..close])
    })
}

/// Push what the templates in `text` read of `root` by a fixed name onto `names` (see
/// [`var_reads`]); `false` when they read `root` otherwise, or use any of the variables
/// `others` at all.
fn scan_reads<'t>(text: &'t str, root: &str, others: &[&str], names: &mut Vec<&'t str>) -> bool {
    let ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    for block in blocks(text) {
        let bytes = block.as_bytes();
        let mut at = 0;
        while at < bytes.len() {
            if !(bytes[at].is_ascii_alphabetic() || bytes[at] == b'_') {
                at += 1;
                continue;
            }
            let end = at + bytes[at..].iter().take_while(|b| ident(**b)).count();
            let word = &block[at..end];
            // `x.vars` is some other value's attribute; a word inside a longer one is none.
            let attribute = block[..at].trim_end_matches(' ').ends_with('.');
            let starts_word = at == 0 || !ident(bytes[at - 1]);
            if starts_word && !attribute {
                if word == root {
                    match static_var(&block[end..]) {
                        Some(name) => names.push(name),
                        None => return false,
                    }
                } else if others.contains(&word) {
                    return false;
                }
            }
            at = end;
        }
    }
    true
}

/// Whether a template reads any of the variables `words`, by any name or as a whole.
pub(crate) fn reads_any(text: &str, words: &[&str]) -> bool {
    // No word is empty, so none is taken for the root and every use of `words` counts.
    !scan_reads(text, "", words, &mut Vec::new())
}

/// The one name a template reads of `root` (`traits.numa`, however often) when it reads
/// nothing of `others` and no other name of `root`: its value is then that trait's or var's.
pub(crate) fn reads_only<'t>(text: &'t str, root: &str, others: &[&str]) -> Option<&'t str> {
    let mut names = Vec::new();
    if !scan_reads(text, root, others, &mut names) {
        return None;
    }
    let (first, rest) = names.split_first()?;
    rest.iter().all(|n| n == first).then_some(*first)
}

/// The name `tail` (the text after a `vars`) reads, when it reads one by a fixed name and does
/// not call it: `.NAME`, `['NAME']` or `["NAME"]`, spaces allowed.
fn static_var(tail: &str) -> Option<&str> {
    let t = tail.trim_start();
    let (name, after) = if let Some(t) = t.strip_prefix('.') {
        let t = t.trim_start();
        let end = t
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(t.len());
        (&t[..end], &t[end..])
    } else {
        let t = t.strip_prefix('[')?.trim_start();
        let quote = t.chars().next().filter(|q| *q == '\'' || *q == '"')?;
        let t = &t[1..];
        let end = t.find(quote)?;
        let after = t[end + 1..].trim_start().strip_prefix(']')?;
        (&t[..end], after)
    };
    // `vars.get('x')` or `vars.items()` call a method: any var may be read.
    (!name.is_empty() && !after.trim_start().starts_with('(')).then_some(name)
}

/// A preference's `vars` may set what its parts declare (`defaults`) and what its templates
/// read; a var neither declares nor any template reads (`vars.NAME`, `vars['NAME']`) changes
/// nothing, most likely a misspelt one. When a template uses `vars` as a whole, any may be read.
fn check_vars(preference: &Preference<'_>, parts: &[&Part<'_>]) -> Result<(), Vec<RenderError>> {
    let Some(vars) = preference.vars.and_then(Value::as_object) else {
        return Ok(());
    };
    let mut declared: Vec<&str> = parts
        .iter()
        .filter_map(|p| p.defaults.and_then(Value::as_object))
        .flat_map(|d| d.keys().map(String::as_str))
        .collect();
    declared.sort_unstable();
    declared.dedup();
    let mut texts: Vec<&str> = Vec::new();
    let trees = parts
        .iter()
        .flat_map(|p| [p.metadata, p.spec])
        .chain([
            preference.template,
            preference.labels,
            preference.annotations,
        ])
        .flatten();
    for tree in trees {
        collect_strings(tree, &mut texts);
    }
    // The names the templates read; a template that uses `vars` otherwise may read any.
    let mut read: Vec<&str> = Vec::new();
    for text in &texts {
        if !var_reads(text, &mut read) {
            return Ok(());
        }
    }
    let mentioned = |name: &str| read.contains(&name);
    // What the preference may set: the declared vars and those the templates read.
    let mut undeclared: Vec<&str> = read
        .iter()
        .copied()
        .filter(|name| !declared.contains(name))
        .collect();
    undeclared.sort_unstable();
    undeclared.dedup();
    let errors: Vec<RenderError> = vars
        .keys()
        .filter(|key| !declared.contains(&key.as_str()) && !mentioned(key))
        .map(|key| {
            let known = declared.iter().chain(&undeclared).copied();
            let hint = crate::diagnostic::nearest_name(key, known)
                .map(|near| format!(" (did you mean `{near}`?)"))
                .unwrap_or_default();
            let mut known = String::new();
            if !declared.is_empty() {
                known = format!("; its parts declare: {}", declared.join(", "));
            }
            if !undeclared.is_empty() {
                known.push_str(&format!(
                    "; its templates also read: {}",
                    undeclared.join(", ")
                ));
            }
            preference.doc.invalid(
                &[Step::Key("spec"), Step::Key("vars"), Step::Key(key)],
                format!(
                    "unknown var `{key}`{hint}: no part declares it and no template reads \
                     it{known}"
                ),
            )
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// Every string leaf of `tree`.
fn collect_strings<'v>(tree: &'v Value, out: &mut Vec<&'v str>) {
    match tree {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| collect_strings(v, out)),
        Value::Object(map) => map.values().for_each(|v| collect_strings(v, out)),
        _ => {}
    }
}

/// When the family's parts declare trait defaults, the family and its variants may only set
/// declared traits: a misspelt trait would otherwise be ignored without a word.
fn check_traits(family: &Family<'_>, parts: &[&Part<'_>]) -> Result<(), Vec<RenderError>> {
    let declared: Vec<&String> = parts
        .iter()
        .filter_map(|p| p.defaults.and_then(Value::as_object))
        .flat_map(|d| d.keys())
        .collect();
    if declared.is_empty() {
        return Ok(());
    }
    let mut sets: Vec<(Vec<Step<'_>>, &Value)> = Vec::new();
    if let Some(traits) = family.traits {
        sets.push((vec![Step::Key("spec"), Step::Key("traits")], traits));
    }
    for (i, variant) in family.variants.iter().enumerate() {
        if let Some(traits) = &variant.traits {
            sets.push((
                vec![
                    Step::Key("spec"),
                    Step::Key("variants"),
                    Step::Index(i),
                    Step::Key("traits"),
                ],
                traits,
            ));
        }
    }
    let mut names: Vec<&str> = declared.iter().map(|k| k.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let mut errors = Vec::new();
    for (steps, traits) in sets {
        for key in traits.as_object().into_iter().flat_map(|m| m.keys()) {
            if !declared.contains(&key) {
                let mut at = steps.clone();
                at.push(Step::Key(key));
                let near = crate::diagnostic::nearest_name(key, names.iter().copied());
                let hint = near
                    .map(|near| format!(" (did you mean `{near}`?)"))
                    .unwrap_or_default();
                // A new trait is declared by a default in a part, which its templates read.
                let new = if near.is_none() {
                    "; a new trait needs a default in a part's `defaults` (`null` for none)"
                } else {
                    ""
                };
                errors.push(family.doc.invalid(
                    &at,
                    format!(
                        "unknown trait `{key}`{hint}; the family's parts declare: {}{new}",
                        names.join(", ")
                    ),
                ));
            }
        }
    }
    // A variant's own fields are for its templates (`variant.pageSize`); one named like a
    // trait was almost surely meant as one, and changes nothing where it is.
    for (i, variant) in family.variants.iter().enumerate() {
        for key in variant.value.as_object().into_iter().flat_map(|m| m.keys()) {
            if key != "suffix" && declared.contains(&key) {
                let at = [
                    Step::Key("spec"),
                    Step::Key("variants"),
                    Step::Index(i),
                    Step::Key(key),
                ];
                errors.push(family.doc.invalid(
                    &at,
                    format!(
                        "`{key}` is a trait of this family: set it under the variant's \
                         `traits` (`traits: {{{key}: …}}`); written here it is only \
                         `variant.{key}` to the templates and changes no trait"
                    ),
                ));
            }
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// The parts' defaults in order, then the object's own traits or vars.
fn merged_defaults(parts: &[&Part<'_>], own: Option<&Value>) -> Value {
    let mut merged = Value::Object(Map::new());
    for part in parts {
        if let Some(defaults) = part.defaults {
            deep_merge(&mut merged, defaults);
        }
    }
    if let Some(own) = own {
        deep_merge(&mut merged, own);
    }
    merged
}

/// Where a fragment sits, for error messages: its document and the path to it there.
struct Site<'d, 'a> {
    doc: &'d Doc<'a>,
    steps: &'d [Step<'d>],
    /// Added to a template error's message (see [`RenderError::Template`]).
    note: &'d str,
    /// Where to report a failing leaf instead, when it is a shipped part's that the user's
    /// own family or preference renders: the user can fix what the template reads (their
    /// `parts` list, their `displayName`, their `vars`), not the shipped template. The leaf's
    /// own place goes into the message.
    relocate: Option<&'d Origin>,
}

/// The mapping `{key: value}`.
fn single(key: &str, value: Value) -> Value {
    let mut map = Map::with_capacity(1);
    map.insert(key.to_string(), value);
    Value::Object(map)
}

/// The objects one combination renders to (one per scope), or every way it failed.
type JobResult = Result<Vec<(Object, Combination)>, Vec<RenderError>>;

/// For each job, where the fields of its objects are written ([`Written`]): one value for
/// every job of a family or preference. Only documents read with their text are of use, and
/// the shipped catalog's are never reported on.
fn written_of(jobs: &[Job<'_, '_>]) -> Vec<Option<Written>> {
    let mut of_scope: HashMap<usize, Option<Written>> = HashMap::default();
    let origin = |doc: &Doc<'_>| -> Option<Origin> {
        let obj = doc.obj;
        (obj.source.is_some() && !embedded::is_shipped(&obj.origin.path))
            .then(|| obj.origin.clone())
    };
    jobs.iter()
        .map(|job| {
            let (scope, doc, parts, own, settings) = match job {
                Job::Size { family, parts, .. } => (
                    std::ptr::from_ref(*family) as usize,
                    &family.doc,
                    *parts,
                    [family.template, family.labels, family.annotations],
                    (family.traits.is_some()).then_some(Settings::TRAITS),
                ),
                Job::Preference {
                    preference, parts, ..
                } => (
                    std::ptr::from_ref(*preference) as usize,
                    &preference.doc,
                    *parts,
                    [
                        preference.template,
                        preference.labels,
                        preference.annotations,
                    ],
                    (preference.vars.is_some()).then_some(Settings::VARS),
                ),
            };
            of_scope
                .entry(scope)
                .or_insert_with(|| {
                    let mut fragments = Vec::with_capacity(2 * parts.len() + 4);
                    // First, so that a template naming a namespace is found before it.
                    if let Some(origin) = origin(doc)
                        && doc.obj.value.pointer("/metadata/namespace").is_some()
                    {
                        fragments.push(Fragment {
                            doc: origin,
                            at: At::Namespace,
                            into: &["metadata", "namespace"],
                        });
                    }
                    for part in parts {
                        let Some(doc) = origin(&part.doc) else {
                            continue;
                        };
                        let name: Arc<str> = Arc::from(part.name);
                        for (tree, key) in [(part.metadata, "metadata"), (part.spec, "spec")] {
                            if tree.is_some() {
                                fragments.push(Fragment {
                                    doc: doc.clone(),
                                    at: At::Part(Arc::clone(&name), key),
                                    into: if key == "spec" {
                                        &["spec"]
                                    } else {
                                        &["metadata"]
                                    },
                                });
                            }
                        }
                    }
                    if let Some(doc) = origin(doc) {
                        let places: [(&'static str, &'static [&'static str]); 3] = [
                            ("template", &[]),
                            ("labels", &["metadata", "labels"]),
                            ("annotations", &["metadata", "annotations"]),
                        ];
                        for (tree, (key, into)) in own.into_iter().zip(places) {
                            if tree.is_some() {
                                fragments.push(Fragment {
                                    doc: doc.clone(),
                                    at: At::Own(key),
                                    into,
                                });
                            }
                        }
                    }
                    let mut written = Written::new(fragments);
                    if let (Some(settings), Some(owner)) = (settings, origin(doc)) {
                        written = written.with_owner(owner, settings);
                    }
                    (!written.is_empty()).then_some(written)
                })
                .clone()
        })
        .collect()
}

fn render_job<'a>(
    templates: &Templates<'_, 'a>,
    notes: &HashMap<usize, String>,
    job: &Job<'_, 'a>,
    written: Option<&Written>,
    options: &RenderOptions<'_>,
) -> JobResult {
    let (combination, origin) = job.site();
    let (doc, name, ctx, parts, own) = match job {
        Job::Size {
            family,
            parts,
            scope,
            size,
            variant,
        } => {
            let (variant_value, traits) = &scope.variants[*variant];
            let name = job.name();
            let ctx = minijinja::context! {
                family => scope.info.clone(),
                size => scope.sizes[*size].clone(),
                variant => variant_value.clone(),
                traits => traits.clone(),
                name => name.clone(),
            };
            let own = [
                (family.template, "template"),
                (family.labels, "labels"),
                (family.annotations, "annotations"),
            ];
            (&family.doc, name, ctx, *parts, own)
        }
        Job::Preference {
            preference,
            parts,
            vars,
        } => {
            let name = job.name();
            let ctx = minijinja::context! {
                preference => context(&preference.info),
                vars => context(vars),
                name => name.clone(),
            };
            let own = [
                (preference.template, "template"),
                (preference.labels, "labels"),
                (preference.annotations, "annotations"),
            ];
            (&preference.doc, name, ctx, *parts, own)
        }
    };
    let mut object = Map::new();
    object.insert("apiVersion".into(), Value::from(OUTPUT_API_VERSION));
    object.insert("kind".into(), Value::from(""));
    object.insert(
        "metadata".into(),
        single("name", Value::from(name.as_str())),
    );
    // Every tree is rendered, so that every failing leaf of the object is reported.
    let mut errors: Vec<RenderError> = Vec::new();
    let declared = parts.iter().any(|part| part.defaults.is_some());
    let mut render = |tree: &'a Value, site: &Site<'_, '_>| -> Option<Value> {
        match templates.render_tree(tree, &ctx) {
            Ok(fragment) => fragment,
            Err(leaves) => {
                errors.extend(leaves.into_iter().map(|e| {
                    let hint = undefined_hint(&e, &ctx, declared);
                    let mut error = leaf_error(site, e, &combination);
                    error.add_hint(&hint);
                    error
                }));
                None
            }
        }
    };
    let mut shapes: Vec<RenderError> = Vec::new();
    // Where a shipped part's failures are said to be, when a user's document borrows it: its
    // `parts` list (looked up only for such a document).
    let user_doc = !embedded::is_shipped(&doc.obj.origin.path);
    let parts_origin = (user_doc
        && parts
            .iter()
            .any(|part| embedded::is_shipped(&part.doc.obj.origin.path)))
    .then(|| doc.at(&[Step::Key("spec"), Step::Key("parts")]));
    for part in parts {
        for (tree, key) in [(part.metadata, "metadata"), (part.spec, "spec")] {
            let Some(tree) = tree else { continue };
            let note = notes
                .get(&(std::ptr::from_ref(*part) as usize))
                .map_or("", String::as_str);
            let site = Site {
                doc: &part.doc,
                steps: &[Step::Key("parts"), Step::Key(part.name), Step::Key(key)],
                note,
                relocate: parts_origin
                    .as_ref()
                    .filter(|_| embedded::is_shipped(&part.doc.obj.origin.path)),
            };
            if let Some(fragment) = render(tree, &site) {
                if key == "metadata"
                    && let Err(e) = must_be_mapping(&site, &[], &fragment, &combination)
                {
                    shapes.push(e);
                    continue;
                }
                merge_entry(&mut object, key.to_string(), fragment);
            }
        }
    }
    let mut object = Value::Object(object);
    for (tree, key) in own {
        let Some(tree) = tree else { continue };
        let site = Site {
            doc,
            steps: &[Step::Key("spec"), Step::Key(key)],
            note: "",
            relocate: None,
        };
        let Some(fragment) = render(tree, &site) else {
            continue;
        };
        let fragment = match key {
            "template" => {
                let shape = must_be_mapping(&site, &[], &fragment, &combination)
                    .and_then(|()| must_be_mapping(&site, &["metadata"], &fragment, &combination));
                if let Err(e) = shape {
                    shapes.push(e);
                    continue;
                }
                fragment
            }
            _ => single("metadata", single(key, fragment)),
        };
        deep_merge_owned(&mut object, fragment);
    }
    errors.append(&mut shapes);
    if !errors.is_empty() {
        return Err(errors);
    }
    // Every instancetype and preference has a `spec` (the API requires it), if only an empty
    // one: a preference whose parts set only metadata prefers nothing.
    if let Some(map) = object.as_object_mut()
        && map.get("spec").is_none_or(Value::is_null)
    {
        map.insert("spec".into(), Value::Object(Map::new()));
    }
    // Identity is not the templates' to change.
    object["apiVersion"] = Value::from(OUTPUT_API_VERSION);
    object["metadata"]["name"] = Value::String(name);
    // Where the document writes the entry `entry` of its `key` (`labels` or `annotations`; the
    // whole mapping when `entry` is empty): its own or its template's line, else the last part
    // that writes it (a later part's entry wins the merge), else the document's first line (an
    // entry the templates made up).
    let entry_origin = |key: &str, entry: &str| -> Origin {
        // The whole mapping (`entry` empty) is at the key itself.
        let whole = usize::from(entry.is_empty());
        let own = &[Step::Key("spec"), Step::Key(key), Step::Key(entry)][..3 - whole];
        let template = &[
            Step::Key("spec"),
            Step::Key("template"),
            Step::Key("metadata"),
            Step::Key(key),
            Step::Key(entry),
        ][..5 - whole];
        let written = |document: &Value, steps: &[Step<'_>]| {
            let keys: Vec<&str> = steps
                .iter()
                .filter_map(|s| match s {
                    Step::Key(k) => Some(*k),
                    Step::Index(_) => None,
                })
                .collect();
            crate::model::path::get(document, &keys).is_some()
        };
        let in_part = || {
            parts.iter().rev().find_map(|part| {
                let steps = &[
                    Step::Key("parts"),
                    Step::Key(part.name),
                    Step::Key("metadata"),
                    Step::Key(key),
                    Step::Key(entry),
                ][..5 - whole];
                written(&part.doc.obj.value, steps).then(|| part.doc.at(steps))
            })
        };
        [own, template]
            .into_iter()
            .find(|steps| written(&doc.obj.value, steps))
            .map(|steps| doc.at(steps))
            .or_else(in_part)
            .unwrap_or_else(|| origin.clone())
    };
    for key in ["labels", "annotations"] {
        let wrong = stringify(&mut object, key);
        errors.extend(wrong.into_iter().map(|(entry, message)| {
            let location = entry_origin(key, &entry);
            RenderError::Output {
                location,
                combination: Box::new(combination.clone()),
                others: Vec::new(),
                object: None,
                field: field_to_string(
                    &["metadata", key, &entry]
                        .iter()
                        .filter(|k| !k.is_empty())
                        .map(|k| FieldStep::Key((*k).to_string()))
                        .collect::<Vec<_>>(),
                ),
                message,
            }
        }));
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    if let Some(version) = options.version {
        let label = options.version_label.unwrap_or(VERSION_LABEL);
        if let Some(labels) = crate::model::path::ensure_map(&mut object, &["metadata", "labels"]) {
            // A label the catalog sets itself is the catalog's to say: stamping over it (a
            // version label keyed `instancetype.kubevirt.io/cpu`) would change what the
            // catalog says without a word.
            if let Some(set) = labels.get(label).and_then(Value::as_str)
                && set != version
            {
                return Err(vec![RenderError::Output {
                    location: entry_origin("labels", label),
                    combination: Box::new(combination.clone()),
                    others: Vec::new(),
                    object: None,
                    field: field_to_string(&[
                        FieldStep::Key("metadata".into()),
                        FieldStep::Key("labels".into()),
                        FieldStep::Key(label.to_string()),
                    ]),
                    message: format!(
                        "the catalog sets the label `{label}` itself, and the version label \
                         (`{version}`) would replace what it says; give the version label a key of \
                         its own (`--version-label-key`, or `versionLabelKey` in the \
                         function's configuration), or leave the label out of the catalog"
                    ),
                }]);
            }
            labels.insert(label.to_string(), json!(version));
        }
    }
    let (cluster, namespaced) = job.kinds();
    let kinds: Vec<&str> = cluster.into_iter().chain(namespaced).collect();
    // The namespace of the catalog document (its own, or one kustomize's `namespace:` set on
    // it) is the namespaced object's, unless its template names one.
    let namespace = doc.obj.namespace();
    let mut out = Vec::with_capacity(kinds.len());
    let mut object = Some(object);
    for (i, kind) in kinds.iter().enumerate() {
        let mut value = if i + 1 == kinds.len() {
            object.take().unwrap_or_default()
        } else {
            object.clone().unwrap_or_default()
        };
        value["kind"] = Value::from(*kind);
        // A cluster-scoped object has no namespace, whatever a template set (the API server
        // would drop it; kustomize's namespace setting passes such kinds over).
        if namespaced != Some(*kind)
            && let Some(metadata) = value["metadata"].as_object_mut()
        {
            metadata.shift_remove("namespace");
        }
        if let Some(namespace) = namespace
            && namespaced == Some(*kind)
            && value["metadata"]
                .get("namespace")
                .is_none_or(Value::is_null)
            && let Some(metadata) = value["metadata"].as_object_mut()
        {
            metadata.shift_insert(1, "namespace".into(), Value::from(namespace));
        }
        let mut object = Object::new(value, origin.clone());
        object.written = written.cloned();
        out.push((object, combination.clone()));
    }
    Ok(out)
}

/// Refuse a rendered fragment that would take the place of a mapping the object needs: the
/// object itself (a `template`) or its `metadata` (a part's, or a template's), which must hold
/// the name. `path` is where the mapping is expected below the fragment's own site.
fn must_be_mapping(
    site: &Site<'_, '_>,
    path: &[&'static str],
    fragment: &Value,
    combination: &Combination,
) -> Result<(), RenderError> {
    let mut value = fragment;
    for key in path {
        match value.get(key) {
            Some(inner) => value = inner,
            None => return Ok(()),
        }
    }
    if value.is_object() || value.is_null() {
        return Ok(());
    }
    let mut steps = site.steps.to_vec();
    steps.extend(path.iter().map(|k| Step::Key(k)));
    let field = field_name(&steps);
    Err(RenderError::Output {
        location: site.doc.at(&steps),
        combination: Box::new(combination.clone()),
        others: Vec::new(),
        object: None,
        message: format!(
            "must render to a mapping, not {}",
            crate::validate::schema::found(value)
        ),
        field,
    })
}

/// Label and annotation values are strings in Kubernetes: turn numbers and booleans into
/// their text. What cannot be turned: each entry refused (its key, `""` for the whole map)
/// and why.
fn stringify(object: &mut Value, key: &str) -> Vec<(String, String)> {
    let Some(map) = object.get_mut("metadata").and_then(|m| m.get_mut(key)) else {
        return Vec::new();
    };
    let Some(map) = map.as_object_mut() else {
        return vec![(String::new(), format!("`metadata.{key}` must be a mapping"))];
    };
    let mut wrong = Vec::new();
    for (k, v) in map.iter_mut() {
        match v {
            Value::String(_) => {}
            Value::Number(n) => *v = Value::String(n.to_string()),
            Value::Bool(b) => *v = Value::String(b.to_string()),
            _ => wrong.push((
                k.clone(),
                format!("the value of `{k}` must be a string, number or boolean"),
            )),
        }
    }
    wrong
}

/// The dotted name of the field at `steps` (`spec.template.metadata`, `parts.linux.spec`).
fn field_name(steps: &[Step<'_>]) -> String {
    let field: Vec<FieldStep> = steps
        .iter()
        .map(|step| match step {
            Step::Key(k) => FieldStep::Key((*k).to_string()),
            Step::Index(i) => FieldStep::Index(*i),
        })
        .collect();
    field_to_string(&field)
}

/// For a template that reads a name its context does not have (`size.cpus`, `vars.cpu`):
/// the name nearest it there, or where to set it; empty otherwise. `declared`: whether the
/// parts merged declare trait or var `defaults`, so that only declared names may be set.
fn undefined_hint(error: &LeafError, ctx: &minijinja::Value, declared: bool) -> String {
    let LeafErrorKind::Template(source) = &error.kind else {
        return String::new();
    };
    if source.kind() != minijinja::ErrorKind::UndefinedError {
        return String::new();
    }
    // minijinja names the expression: "`size.cpus` is undefined".
    let Some(detail) = source.detail() else {
        return String::new();
    };
    // A misspelt name of the context itself (`trait.dedicated`, `sze`).
    if let Some(expr) = detail
        .strip_prefix('`')
        .and_then(|d| d.split_once('`'))
        .map(|(expr, _)| expr)
    {
        let root_end = expr
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(expr.len());
        let (root, rest) = expr.split_at(root_end);
        if !root.is_empty() && ctx.get_attr(root).is_ok_and(|v| v.is_undefined()) {
            let names = key_names(ctx);
            return crate::diagnostic::nearest_name(root, names.iter().map(String::as_str))
                .map(|near| format!("did you mean `{near}{rest}`?"))
                .unwrap_or_default();
        }
    }
    let Some((root, name)) = detail
        .strip_prefix('`')
        .and_then(|d| d.split_once('`'))
        .and_then(|(expr, _)| expr.split_once('.'))
        .filter(|(root, name)| {
            !name.contains(['.', '[', '(', ' '])
                && root.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    else {
        return String::new();
    };
    let Ok(scope) = ctx.get_attr(root) else {
        return String::new();
    };
    let keys = key_names(&scope);
    if let Some(near) = crate::diagnostic::nearest_name(name, keys.iter().map(String::as_str)) {
        return format!("did you mean `{root}.{near}`?");
    }
    match root {
        "vars" => format!(
            "the preference sets no var `{name}`: set it under `spec.vars`, or give it a default \
             in a part's `defaults`"
        ),
        // With declared defaults, a trait the parts do not declare may not be set: its default
        // is the one way in.
        "traits" if declared => format!(
            "no part of the family declares a trait `{name}`: give it a default in the \
             `defaults` of a part the family names, then set it under `spec.traits` where it \
             differs"
        ),
        "traits" => format!(
            "the family sets no trait `{name}`: set it under `spec.traits`, or give it a default \
             in a part's `defaults`"
        ),
        "size" => format!(
            "the size row has no field `{name}`: give it one among the row's extra fields \
             (`[name, cpu, memory, {{{name}: …}}]`)"
        ),
        "variant" => format!(
            "this variant has no field `{name}`: set it on every entry of `spec.variants` \
             (without `variants`, the one variant has only `suffix`)"
        ),
        _ => String::new(),
    }
}

/// The names of the keys of a template value (a map's), to look for a near one among.
fn key_names(value: &minijinja::Value) -> Vec<String> {
    value
        .try_iter()
        .map(|keys| {
            keys.filter_map(|k| k.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn leaf_error(site: &Site<'_, '_>, error: LeafError, combination: &Combination) -> RenderError {
    let mut steps = site.steps.to_vec();
    steps.extend(error.field.iter().map(|f| match f {
        FieldStep::Key(k) => Step::Key(k),
        FieldStep::Index(i) => Step::Index(*i),
    }));
    let mut location = site.doc.at(&steps);
    let field = field_name(&steps);
    match error.kind {
        LeafErrorKind::Template(source) => {
            // A block scalar's first template line is the line after its key.
            if let (Some(line), Some(n)) = (location.line, source.line())
                && n > 0
                && site.doc.is_block_scalar(line)
            {
                location.line = u32::try_from(n).ok().map(|n| line + n);
            }
            let mut note = site.note.to_string();
            if let Some(to) = site.relocate {
                note.push_str(&format!(" (a shipped template, at {location})"));
                location = to.clone();
            }
            RenderError::Template {
                location,
                combination: Box::new(combination.clone()),
                others: Vec::new(),
                object: None,
                field,
                note,
                source: Box::new(source),
            }
        }
        LeafErrorKind::TooLarge(size) => RenderError::Output {
            location,
            combination: Box::new(combination.clone()),
            others: Vec::new(),
            object: None,
            field,
            message: format!(
                "the output is {size} bytes, more than the limit of {}",
                template::MAX_LEAF_BYTES
            ),
        },
        LeafErrorKind::ValueTooLarge => RenderError::Output {
            location,
            combination: Box::new(combination.clone()),
            others: Vec::new(),
            object: None,
            field,
            message: format!(
                "the value is more than the limit of {} bytes or {} items",
                template::MAX_LEAF_BYTES,
                template::MAX_VALUE_ITEMS
            ),
        },
        LeafErrorKind::Convert(message) => RenderError::Output {
            location,
            combination: Box::new(combination.clone()),
            others: Vec::new(),
            object: None,
            field,
            message,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::var_reads;

    fn reads(text: &str) -> Option<Vec<&str>> {
        let mut names = Vec::new();
        var_reads(text, &mut names).then_some(names)
    }

    #[test]
    fn var_reads_names_the_vars_read_by_a_fixed_name() {
        assert_eq!(
            reads("{{ vars.a }}-{{ vars [ \"b\" ] }}{% if vars . c %}{{ vars['d'] }}{% endif %}"),
            Some(vec!["a", "b", "c", "d"])
        );
        // Other values' `vars`, longer names and text outside the blocks are not `vars`.
        assert_eq!(
            reads("vars.x {{ x.vars.y }} {{ myvars.z }} {{ vars_a }} {{ x . vars }}"),
            Some(vec![])
        );
        // Any other use may read any var.
        for whole in [
            "{{ vars | dictsort }}",
            "{{ (vars).a }}",
            "{{ vars[k] }}",
            "{{ vars.items() }}",
            "{% for k in vars %}{% endfor %}",
            "{{ vars }}",
            "{{ vars['a }}",
        ] {
            assert_eq!(reads(whole), None, "{whole}");
        }
    }
}

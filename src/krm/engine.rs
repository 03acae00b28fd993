//! What the function does to its items: the stages `kvrender build` runs (render the catalog
//! documents; check the cluster objects with the per-object rules of [`crate::validate`] and
//! its duplicate rule; expand the VirtualMachines the checks let through, against what was
//! rendered, the items, the extra catalogs and the embedded catalog), driven by a [`FnConfig`]
//! and keeping every item's place and orchestration annotations. Which checks run in which
//! mode is described in the README ("What runs in each mode").
//!
//! Output order: the items in input order (a VM replaced by its expanded form in place, a
//! rendered object replacing an item of the same kind, namespace and name in place, so running
//! the function twice changes nothing), then the objects read from `paths`, then the rendered
//! objects that are new. Catalog documents and kvrender's own configuration stay among the
//! items, marked `config.kubernetes.io/local-config: "true"`: kpt keeps them in the package and
//! never applies them, kustomize drops them from its output.

use foldhash::HashMap;
use std::borrow::Borrow;
use std::path::PathBuf;

use rayon::prelude::*;
use serde_json::Value;

use crate::diagnostic::{Cascade, Diagnostic, Severity, codes};
use crate::krm::annotations;
use crate::krm::config::{self, ExpandMode, FnConfig};
use crate::krm::renamed;
use crate::load::deferred::{DeferredVms, NotAVm};
use crate::load::{self, Loaded, Source};
use crate::model::written::CatalogDocs;
use crate::model::{Kind, Object};
use crate::pipeline;
use crate::render::{self, RenderError, RenderOptions};
use crate::resolve::Index;
use crate::validate;
use crate::validate::rules::admission::{ADMITTED_UNLESS_HELD, ADMITTED_UNRESOLVED};

/// The code of a catalog that does not render (a duplicate is [`codes::DUPLICATE`]).
pub const RENDER_CODE: &str = codes::CATALOG_RENDER;

/// How new objects are placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Give new objects path annotations (a ResourceList whose items map to files).
    Files,
    /// Leave new objects as they are (kustomize's legacy plugins: a stream, no files).
    Stream,
    /// `kvrender build`: rendered objects first, catalog documents and kvrender's own
    /// configuration dropped, no annotations added.
    Build,
}

/// The items after the function ran, and its findings.
#[derive(Debug, Default)]
pub struct Processed {
    /// The output items.
    pub items: Vec<Value>,
    /// Empty, or one entry per item: an item printed already, whose tree in
    /// [`Processed::items`] then holds only its `apiVersion`, `kind`, name, namespace and
    /// local-configuration mark. A VM expanded from the items is printed on its worker, and so
    /// is a VM left as text (see [`build_deferring_vms`]): under [`Placement::Files`] as a `- `
    /// entry of a ResourceList's items, otherwise as a document of a YAML stream (`---` and a
    /// final newline included).
    pub printed: Vec<Option<String>>,
    /// Empty but for [`Placement::Files`], then one entry per item: for an item that is an
    /// input item as it was read, its position among the inputs (see [`AsRead`]).
    pub as_read: Vec<Option<AsRead>>,
    /// Findings, sorted, severities adjusted by the configuration.
    pub diagnostics: Vec<Diagnostic>,
    /// Each object rendered from a subpackage's catalog under `kpt fn render`: the file and
    /// index of its catalog document as the subpackage names them, its kind and name, and the
    /// subpackage's directory. A finding placed at that document is named from the outer
    /// package with it.
    pub rendered_in_subpackages: Vec<RenderedIn>,
}

/// An object rendered from a subpackage's catalog (see [`Processed::rendered_in_subpackages`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderedIn {
    /// The file of its catalog document, relative to the subpackage.
    pub file: String,
    /// The document's index in that file.
    pub index: usize,
    /// The rendered object's kind.
    pub kind: String,
    /// The rendered object's name.
    pub name: String,
    /// The subpackage's directory, as kpt gives it.
    pub package: String,
}

impl RenderedIn {
    /// `obj`, rendered from a catalog document of the package at `package`.
    fn of(obj: &Object, package: &str) -> RenderedIn {
        RenderedIn {
            file: obj.origin.path.to_string(),
            index: obj.origin.index,
            kind: obj.kind_str().to_string(),
            name: obj.name().to_string(),
            package: package.to_string(),
        }
    }
}

/// An output item that is an input item as it was read, so that a function can write it back
/// in the text it was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsRead {
    /// Its position among the items the engine was given.
    pub input: usize,
    /// Whether the engine marked it local configuration: then it is the input item with
    /// that annotation added, and otherwise unchanged.
    pub marked_local: bool,
}

/// A VM expanded on a worker: what stands in its place, and whether it changed.
struct Expanded {
    /// The expanded tree, or, when it was printed on the worker, its stub (see [`stub_of`]).
    value: Value,
    /// The output, printed as the placement prints an item (see [`Processed::printed`]).
    printed: Option<String>,
    /// Whether it differs from the VM as read.
    changed: bool,
}

impl Expanded {
    /// A VM that expands to itself.
    fn as_read(value: Value) -> Self {
        Expanded {
            value,
            printed: None,
            changed: false,
        }
    }

    /// An expanded VM, kept as a tree.
    fn changed(value: Value) -> Self {
        Expanded {
            value,
            printed: None,
            changed: true,
        }
    }

    /// An expanded VM, printed now: a `- ` entry of a ResourceList's items for a function, a
    /// document of a YAML stream otherwise.
    fn printed(value: &Value, placement: Placement) -> Self {
        let printed = match placement {
            Placement::Files => super::resource_list::value_entry(value),
            Placement::Stream | Placement::Build => crate::emit::stream_document(value),
        };
        Expanded {
            value: stub_of(value),
            printed: Some(printed),
            changed: true,
        }
    }
}

/// What an input item is to the function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// kvrender's own configuration (`KVRender`): kept, marked local.
    Config,
    /// A catalog document: rendered, kept, marked local.
    Catalog,
    /// Under `kpt fn render`, a catalog document of a subpackage whose own pipeline runs
    /// kvrender: that pipeline rendered it, with its own configuration, before this step ran.
    /// Kept, marked local, not rendered again (what it rendered is among the items).
    SubpackageCatalog,
    /// Anything else: passed through, or replaced when rendered again or expanded.
    Object,
    /// `build`: a file an earlier package render wrote, of an object rendered again now;
    /// neither checked nor printed.
    Superseded,
    /// A file an earlier package render wrote, of an object rendered no more, under `prune`:
    /// neither checked nor written back, so kpt deletes it.
    Pruned,
    /// The file an earlier run wrote of an object read from `paths` now: neither checked nor
    /// written back; the object read takes its place (its file and index).
    Reread,
    /// An earlier run's output in a subpackage, of an object rendered again now: neither
    /// checked nor written back, so kpt deletes it; the object rendered now is written in its
    /// own package.
    Moved,
}

fn role(obj: &Object) -> Role {
    if obj.api_version() == config::API_VERSION && obj.kind_str() == config::KIND {
        Role::Config
    } else if render::is_catalog_kind(obj) {
        Role::Catalog
    } else {
        Role::Object
    }
}

/// Kind, namespace (empty for cluster-scoped kinds) and name.
type Key<'a> = (&'a str, &'a str, &'a str);

/// Where an identity is defined besides the rendered objects.
#[derive(Clone, Copy)]
enum Defined {
    /// By item `i` of the input.
    Item(usize),
    /// By object `j` read from `paths`.
    Path(usize),
}

/// What a rendered object meets among the items and `paths` objects.
enum Meeting {
    /// Nothing of its identity.
    Nothing,
    /// Item `i`, an earlier run's output: it is replaced.
    EarlierOutput(usize),
    /// The user's own definition, which an object of the embedded catalog gives way to.
    Shadowed,
    /// The user's own definition, which an object rendered from the inputs clashes with.
    Clash(Defined),
    /// Item `i`, an earlier run's output that landed in a subpackage (see
    /// [`Packages::in_subpackage`]): dropped, and the object written in its own package.
    Moved(usize),
}

/// Whether `item`, read from a file below one of the directories `walked`, sits where a
/// package render writes `rendered` (see [`annotations::file_for`]) relative to that directory:
/// the output of an earlier `kpt fn render` (or `fn eval`) of the same catalog document. Where
/// a subpackage (a directory with a `Kptfile`) holds that path, the render writes
/// [`annotations::top_level_file_for`] instead, and a file at the path is an earlier render's.
fn is_earlier_output_on_disk(item: &Object, rendered: &Object, walked: &[PathBuf]) -> bool {
    let path = std::path::Path::new(item.origin.path.as_ref());
    let file = annotations::file_for(rendered);
    walked.iter().any(|dir| {
        let Ok(relative) = path.strip_prefix(dir) else {
            return false;
        };
        if relative == std::path::Path::new(&file) {
            return true;
        }
        relative == std::path::Path::new(&annotations::top_level_file_for(rendered))
            && std::path::Path::new(&file)
                .ancestors()
                .skip(1)
                .filter(|a| !a.as_os_str().is_empty())
                .any(|a| dir.join(a).join("Kptfile").is_file())
    })
}

/// What a command that reads a package from disk (`build`, `validate`, `expand`, ...) makes of
/// the files an earlier `kpt fn render` of it wrote, given `rendered`, what the package's
/// catalog documents render to now.
pub struct ReadBack {
    /// For each item: the earlier output of an object rendered again now, which supersedes it
    /// (neither a second definition nor resolved against).
    pub superseded: Vec<bool>,
    /// `KV043` warnings for the items nothing renders any more (only when asked for).
    pub stale: Vec<Diagnostic>,
}

/// See [`ReadBack`]. An item is an earlier output when it sits in the file a package render
/// writes an object of its identity to, relative to a directory of `walked` or to the package
/// (the nearest `Kptfile` above) of the catalog document it came from. `judge_stale` is for a
/// render that went through without an error: one that failed says nothing of what is stale.
pub fn read_back(
    items: &[impl Borrow<Object>],
    rendered: &[Object],
    walked: &[PathBuf],
    judge_stale: bool,
) -> ReadBack {
    if rendered.is_empty() {
        return ReadBack {
            superseded: vec![false; items.len()],
            stale: Vec::new(),
        };
    }
    let packages = package_dirs(rendered);
    ReadBack {
        superseded: earlier_output_on_disk(items, rendered, walked, &packages),
        stale: if judge_stale {
            stale_on_disk(items, rendered, &packages)
        } else {
            Vec::new()
        },
    }
}

/// Which of `items` are the earlier output on disk of an object of `rendered` of the same
/// identity: in the file a package render writes that object to, relative to a directory of
/// `walked` or to one of `packages` (the [`package_dirs`] of `rendered`).
fn earlier_output_on_disk(
    items: &[impl Borrow<Object>],
    rendered: &[Object],
    walked: &[PathBuf],
    packages: &[PathBuf],
) -> Vec<bool> {
    let mut dirs = walked.to_vec();
    dirs.extend_from_slice(packages);
    let by_key: HashMap<Key<'_>, &Object> = rendered.iter().map(|r| (key(r), r)).collect();
    items
        .iter()
        .map(|item| {
            let item = item.borrow();
            by_key
                .get(&key(item))
                .is_some_and(|r| is_earlier_output_on_disk(item, r, &dirs))
        })
        .collect()
}

/// Warnings for the objects of `items` that an earlier `kpt fn render` of a package wrote and
/// that nothing of `rendered` (this render of the package's catalog documents) produces any
/// more: an instancetype or preference read from the very file, relative to one of
/// `packages` (the [`package_dirs`] of `rendered`), that a package render writes an object of
/// its kind, namespace and name to. `build`, `validate` and the other commands read such a
/// package as it is on disk; only the function, under `prune`, removes the file.
fn stale_on_disk(
    items: &[impl Borrow<Object>],
    rendered: &[Object],
    packages: &[PathBuf],
) -> Vec<Diagnostic> {
    if rendered.is_empty() || packages.is_empty() {
        return Vec::new();
    }
    let keys: foldhash::HashSet<Key<'_>> = rendered.iter().map(key).collect();
    items
        .iter()
        .map(Borrow::borrow)
        .filter(|item| {
            item.kind().is_catalog()
                && !keys.contains(&key(item))
                && is_earlier_output_on_disk(item, item, packages)
        })
        .map(|item| {
            Diagnostic::warning(
                codes::STALE_OUTPUT,
                item.origin.clone(),
                format!(
                    "an earlier package render wrote `{}`, and no catalog document renders it \
                     any more: delete the file (a kpt pipeline whose kvrender step sets \
                     `prune: true` removes it)",
                    annotations::file_for(item)
                ),
            )
            .with_object(item.object_ref())
        })
        .collect()
}

/// The kpt packages the catalog documents of `rendered` are in (for each document, the nearest
/// directory above it holding a `Kptfile`): where a package render wrote their objects,
/// whatever paths were given.
fn package_dirs(rendered: &[Object]) -> Vec<PathBuf> {
    // The directories the documents are in, each looked up once (a catalog has many files in
    // few directories).
    let mut parents: Vec<&std::path::Path> = rendered
        .iter()
        .filter_map(|o| std::path::Path::new(o.origin.path.as_ref()).parent())
        .collect();
    parents.sort_unstable();
    parents.dedup();
    let mut dirs: Vec<PathBuf> = parents
        .into_iter()
        .filter_map(|parent| {
            parent
                .ancestors()
                .find(|dir| dir.join("Kptfile").is_file())
                .map(std::path::Path::to_path_buf)
        })
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

/// Which package of a kpt run a catalog document belongs to, and so where the objects it
/// renders are written: `kpt fn render` gives every item its package's directory
/// ([`annotations::PACKAGE_PATH`]) and a path relative to it; `kpt fn eval` gives paths relative
/// to the package it runs on, a subpackage's under the directory of its `Kptfile`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct Home {
    /// The package directory of a subpackage under `kpt fn render`; `None` for the package
    /// the step runs on.
    package: Option<String>,
    /// The subpackage's directory under `kpt fn eval`, with a trailing `/`; empty otherwise.
    prefix: String,
}

/// The packages of a kpt run, read from its items.
struct Packages {
    /// The package the step runs on under `kpt fn render` (the outermost package path).
    outermost: Option<String>,
    /// Under `kpt fn eval`, the directories of the subpackages' `Kptfile`s, with a trailing `/`.
    eval_dirs: Vec<String>,
    /// The directory of every subpackage relative to the package the step runs on, with a
    /// trailing `/`: under `kpt fn render` those of the items' packages (kpt hands over each
    /// subpackage's `Kptfile`), under `kpt fn eval` [`Packages::eval_dirs`].
    sub_dirs: Vec<String>,
    /// Under `kpt fn render`, the package paths of the subpackages whose own pipeline runs
    /// kvrender as a mutator (see [`runs_kvrender`]). kpt renders a subpackage before its
    /// parent, so their catalog documents are rendered, with their own configuration, by the
    /// time the parent's step sees them.
    rendering_themselves: Vec<String>,
}

/// Whether a `Kptfile`'s pipeline runs kvrender as a mutator: an `exec` whose program's file
/// name begins with `kvrender`, or an `image` whose last path component does. A validator's
/// changes are not kept by kpt, so one that runs kvrender renders nothing.
fn runs_kvrender(kptfile: &Value) -> bool {
    let Some(mutators) = kptfile
        .get("pipeline")
        .and_then(|p| p.get("mutators"))
        .and_then(Value::as_array)
    else {
        return false;
    };
    mutators.iter().any(|m| {
        let program = m
            .get("exec")
            .and_then(Value::as_str)
            .and_then(|e| e.split_whitespace().next())
            .map(|p| p.rsplit('/').next().unwrap_or(p));
        let image = m.get("image").and_then(Value::as_str).map(|i| {
            let i = i.split('@').next().unwrap_or(i);
            let last = i.rsplit('/').next().unwrap_or(i);
            last.split(':').next().unwrap_or(last)
        });
        program
            .into_iter()
            .chain(image)
            .any(|name| name.starts_with("kvrender"))
    })
}

impl Packages {
    fn of(items: &[Object]) -> Packages {
        let outermost = outermost_package(items).map(str::to_string);
        let eval_dirs: Vec<String> = items
            .iter()
            .filter(|o| {
                o.kind_str() == "Kptfile"
                    && o.api_version().starts_with("kpt.dev/")
                    && annotations::package_path(&o.value).is_none()
            })
            .filter_map(|o| annotations::file_path(&o.value))
            .filter_map(|p| {
                let p = p.strip_prefix("./").unwrap_or(&p).to_string();
                p.strip_suffix("/Kptfile").map(|dir| format!("{dir}/"))
            })
            // A directory inside the package: new files are never placed anywhere else.
            .filter(|dir| !dir.starts_with('/') && !dir.split('/').any(|c| c == ".."))
            .collect();
        let mut packages = Packages {
            outermost,
            eval_dirs,
            sub_dirs: Vec::new(),
            rendering_themselves: Vec::new(),
        };
        packages.rendering_themselves = items
            .iter()
            .filter(|o| {
                o.kind_str() == "Kptfile"
                    && o.api_version().starts_with("kpt.dev/")
                    && annotations::file_path(&o.value)
                        .is_some_and(|p| p.strip_prefix("./").unwrap_or(&p) == "Kptfile")
                    && runs_kvrender(&o.value)
            })
            .filter_map(|o| packages.package_of(&o.value))
            .collect();
        let mut sub_dirs: Vec<String> = if packages.outermost.is_some() {
            items
                .iter()
                .filter_map(|o| packages.package_of(&o.value))
                .map(|package| packages.dir_of(Some(&package)))
                .collect()
        } else {
            packages.eval_dirs.clone()
        };
        sub_dirs.sort_unstable();
        sub_dirs.dedup();
        packages.sub_dirs = sub_dirs;
        packages
    }

    /// The directory of `package` (a subpackage's under `kpt fn render`, `None` for the one the
    /// step runs on) relative to the package the step runs on, with a trailing `/`; empty for
    /// that package itself.
    fn dir_of(&self, package: Option<&str>) -> String {
        let (Some(outermost), Some(package)) = (self.outermost.as_deref(), package) else {
            return String::new();
        };
        let relative = package
            .strip_prefix(outermost)
            .unwrap_or(package)
            .trim_matches('/');
        if relative.is_empty() {
            String::new()
        } else {
            format!("{relative}/")
        }
    }

    /// The directory of `home` relative to the package the step runs on (see
    /// [`Packages::dir_of`]).
    fn home_dir(&self, home: &Home) -> String {
        match &home.package {
            Some(package) => self.dir_of(Some(package)),
            None => home.prefix.clone(),
        }
    }

    /// Where an object of `home` that a render writes to `file` (relative to its package) would
    /// be relative to the package the step runs on, when a subpackage inside `home` holds that
    /// path: the subpackage's directory and that path. A rendered object never goes there.
    fn subpackage_holding(&self, home: &Home, file: &str) -> Option<(&str, String)> {
        let dir = self.home_dir(home);
        let path = format!("{dir}{file}");
        self.sub_dirs
            .iter()
            .filter(|sub| sub.len() > dir.len() && sub.starts_with(dir.as_str()))
            .find(|sub| path.starts_with(sub.as_str()))
            .map(|sub| (sub.as_str(), path.clone()))
    }

    /// The file an object rendered for `home` is written to, relative to that package: where
    /// [`annotations::file_for`] puts it, unless a subpackage holds that path; then
    /// [`annotations::top_level_file_for`], at the top of `home`, so that what a package renders
    /// stays in that package.
    fn file_for(&self, home: &Home, object: &Object) -> String {
        let file = annotations::file_for(object);
        if self.subpackage_holding(home, &file).is_some() {
            annotations::top_level_file_for(object)
        } else {
            file
        }
    }

    /// Whether `item`, of the identity of `rendered` (an object of `home`), is an earlier run's
    /// output that landed in a subpackage: at the [`annotations::file_for`] path of `rendered`,
    /// which a subpackage holds.
    fn in_subpackage(&self, item: &Object, home: &Home, rendered: &Object) -> bool {
        let Some((_, path)) = self.subpackage_holding(home, &annotations::file_for(rendered))
        else {
            return false;
        };
        annotations::file_path(&item.value).is_some_and(|file| {
            let file = file.strip_prefix("./").unwrap_or(&file);
            let package = self.package_of(&item.value);
            format!("{}{file}", self.dir_of(package.as_deref())) == path
        })
    }

    /// The package of an item, `None` for the one the step runs on. kpt gives the directory of
    /// a subpackage inside the outermost one; a path that climbs out with `..` or lies outside
    /// it is not a package of this run, and what the item's catalog renders stays in the
    /// package the step runs on.
    fn package_of(&self, item: &Value) -> Option<String> {
        let outermost = self.outermost.as_deref()?;
        annotations::package_path(item)
            .filter(|p| *p != outermost && plain_package_path(p))
            .filter(|p| {
                p.strip_prefix(outermost)
                    .is_some_and(|rest| rest.starts_with('/') || outermost.ends_with('/'))
            })
            .map(str::to_string)
    }

    /// The home of a catalog document read from `path` (relative, as its annotations say) in
    /// the package the step runs on: under `kpt fn eval`, the subpackage whose `Kptfile`
    /// directory holds it (the innermost); else that package itself.
    fn home_at(&self, path: &str) -> Home {
        let path = path.strip_prefix("./").unwrap_or(path);
        let prefix = self
            .eval_dirs
            .iter()
            .filter(|dir| path.starts_with(dir.as_str()))
            .max_by_key(|dir| dir.len())
            .cloned()
            .unwrap_or_default();
        Home {
            package: None,
            prefix,
        }
    }

    /// Whether `item` is in a subpackage that renders itself (see
    /// [`Packages::rendering_themselves`]), or in a package inside one: its pipeline, not this
    /// step, renders that package's catalog documents.
    fn rendered_by_subpackage(&self, item: &Value) -> bool {
        if self.rendering_themselves.is_empty() {
            return false;
        }
        self.package_of(item).is_some_and(|package| {
            self.rendering_themselves.iter().any(|sub| {
                package
                    .strip_prefix(sub.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
            })
        })
    }

    /// Whether `item` sits in the file `file` of package `home`.
    fn holds(&self, item: &Object, home: &Home, file: &str) -> bool {
        self.package_of(&item.value) == home.package
            && annotations::file_path(&item.value).is_some_and(|path| {
                let path = path.strip_prefix("./").unwrap_or(&path);
                path.strip_prefix(home.prefix.as_str()) == Some(file)
            })
    }
}

/// Under `kpt fn render`, the directory of the package the step runs on: the shortest package
/// path among the items (kpt gives each item its package's); `None` under `kpt fn eval` and
/// kustomize, which give none.
pub(crate) fn outermost_package(items: &[Object]) -> Option<&str> {
    items
        .iter()
        .filter_map(|o| annotations::package_path(&o.value))
        .filter(|p| plain_package_path(p))
        .min_by_key(|p| p.len())
}

/// A package path without `.` or `..` components, as kpt writes them.
fn plain_package_path(path: &str) -> bool {
    !path.split('/').any(|c| c == ".." || c == ".")
}

fn key(obj: &Object) -> Key<'_> {
    let ns = if obj.kind().is_namespaced() {
        obj.namespace().unwrap_or("")
    } else {
        ""
    };
    (obj.kind_str(), ns, obj.name())
}

/// The items of a package that an earlier render wrote and this one no longer produces: an
/// instancetype or preference in the very file kvrender writes an object of its kind,
/// namespace and name to, which no object rendered now replaces or shares an identity with (a
/// size or a preference since removed from the catalog). Under `prune` they become
/// [`Role::Pruned`] with an info finding, else a warning says what to do.
///
/// Only a render that went through without an error and had something to render (catalog
/// documents, or the embedded catalog to emit) decides what is stale: a catalog that fails
/// to render, or a path that cannot be read, must not delete what it rendered before.
fn stale_outputs(
    out: &[Object],
    roles: &mut [Role],
    rendered: &[Object],
    meets: &[Meeting],
    packages: &Packages,
    config: &FnConfig,
    diagnostics: &mut Vec<Diagnostic>,
) {
    if rendered.is_empty() || diagnostics.iter().any(Diagnostic::is_error) {
        return;
    }
    let mut replaced = vec![false; out.len()];
    for meeting in meets {
        if let Meeting::EarlierOutput(i) = *meeting {
            replaced[i] = true;
        }
    }
    let rendered_keys: foldhash::HashSet<Key<'_>> = rendered.iter().map(key).collect();
    for (i, item) in out.iter().enumerate() {
        if roles[i] != Role::Object
            || replaced[i]
            || !item.kind().is_catalog()
            || rendered_keys.contains(&key(item))
        {
            continue;
        }
        // Only the files of the package the step runs on are its to judge: `kpt fn render`
        // hands a package's pipeline its subpackages' items too, whose rendered files are
        // their own pipelines'.
        let file = packages.file_for(&Home::default(), item);
        if !packages.holds(item, &Home::default(), &file) {
            continue;
        }
        let finding = if config.prune {
            roles[i] = Role::Pruned;
            Diagnostic::warning(
                codes::STALE_OUTPUT,
                item.origin.clone(),
                format!(
                    "removed from `{file}`, where an earlier render wrote it: no catalog \
                     document renders it any more (kpt deletes the file when nothing else is \
                     left in it)"
                ),
            )
            .with_severity(Severity::Info)
        } else {
            Diagnostic::warning(
                codes::STALE_OUTPUT,
                item.origin.clone(),
                format!(
                    "an earlier render wrote it to `{file}`, and no catalog document renders \
                     it any more: delete it (the file, unless it holds other objects), or set \
                     `prune: true` in the function's configuration to have it removed"
                ),
            )
        };
        diagnostics.push(finding.with_object(item.object_ref()));
    }
}

/// Whether `read`, an object of `paths`, was read from the file `item` comes from: the same
/// file on disk where both paths lead to one from here, else a path of `paths` that ends with
/// the item's (`./cluster-instancetypes/x.yaml`, `pkg/cluster-instancetypes/x.yaml`; an item's
/// path is relative to its package, which need not be the directory kvrender runs in).
fn read_from(read: &Object, item: &Object) -> bool {
    let (read, held) = (
        std::path::Path::new(read.origin.path.as_ref()),
        std::path::Path::new(item.origin.path.as_ref()),
    );
    match (std::fs::canonicalize(read), std::fs::canonicalize(held)) {
        (Ok(read), Ok(held)) => read == held,
        _ => read.ends_with(held),
    }
}

/// Whether `item` is the document `read` from disk: equal but for the annotations an
/// orchestrator or an earlier run put on it (a file of the package named in `paths` too).
fn same_document(item: &Value, read: &Value) -> bool {
    fn bare(value: &Value) -> Value {
        let mut value = value.clone();
        if let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut)
            && let Some(Value::Object(notes)) = metadata.get_mut("annotations")
        {
            notes.retain(|k, _| !annotations::is_orchestration(k));
            if notes.is_empty() {
                metadata.remove("annotations");
            }
        }
        value
    }
    bare(item) == bare(read)
}

/// The places (package, file, index) the items of a kpt run hold, and the next free index of
/// a file for each new object placed there.
struct Places {
    taken: foldhash::HashSet<(Option<String>, String, usize)>,
}

impl Places {
    /// The places `items` hold (only under [`Placement::Files`], the one that names files).
    fn of(items: &[Value], packages: Option<&Packages>, placement: Placement) -> Places {
        let taken = items
            .iter()
            .filter(|_| placement == Placement::Files)
            .filter_map(|value| {
                let path = annotations::file_path(value)?;
                let path = path.strip_prefix("./").unwrap_or(&path).to_string();
                let package = packages.and_then(|p| p.package_of(value));
                Some((package, path, annotations::file_index(value).unwrap_or(0)))
            })
            .collect();
        Places { taken }
    }

    /// The first index of `file` in `package` that nothing holds, now held.
    fn next(&mut self, package: Option<&str>, file: &str) -> usize {
        let package = package.map(str::to_string);
        let file = file.to_string();
        let mut index = 0;
        while self.taken.contains(&(package.clone(), file.clone(), index)) {
            index += 1;
        }
        self.taken.insert((package, file, index));
        index
    }
}

/// Read `paths` from disk; failures become findings.
fn read(paths: &[String], diagnostics: &mut Vec<Diagnostic>) -> (Vec<Source>, Loaded) {
    let sources = read_sources("paths", paths, diagnostics);
    let loaded = load::parse_sources(&sources);
    (sources, loaded)
}

/// Read the files of `paths`, the entries of the configuration's `key` (`paths` or
/// `catalogs`); a path that cannot be read becomes a finding that names the key.
pub(crate) fn read_sources(
    key: &str,
    paths: &[String],
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Source> {
    let mut sources = Vec::new();
    // A file met again (named twice, `vm.yaml,./vm.yaml`, or inside two entries, `p,p/sub`) is
    // read once, where it is first met, as `kvrender build` reads its PATHs.
    let mut met = std::collections::HashSet::new();
    for p in paths {
        match load::read_paths(&[PathBuf::from(p)]) {
            Ok(s) => sources.extend(s.into_iter().filter(|source| {
                let path = std::path::Path::new(source.path.as_ref());
                met.insert(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()))
            })),
            Err(e) => {
                let mut message = e.to_string();
                if let Some(source) = std::error::Error::source(&e) {
                    message = format!("{message}: {source}");
                }
                // kpt runs an exec function in the directory it was started from, not in the
                // package: say which one a relative path was read from.
                match std::env::current_dir() {
                    Ok(cwd) if std::path::Path::new(p).is_relative() => {
                        message.push_str(&format!(
                            " (a relative `{key}` entry is read from the directory kvrender \
                             runs in, here `{}`)",
                            cwd.display()
                        ));
                    }
                    _ => message.push_str(&format!(" (a `{key}` entry)")),
                }
                // What the path holds may define the names then not found.
                diagnostics.push(
                    Diagnostic::error(
                        codes::IO,
                        crate::origin::Origin::new(p.as_str(), 0, None),
                        message,
                    )
                    .with_cascade(Cascade::MayDefine),
                );
            }
        }
    }
    sources
}

/// `text` (a template engine's message) without the ` (in <string>:1)` it adds: the name
/// it gives a template kvrender compiles from a value, and a line within that value, which the
/// finding's own file and line already say better.
fn without_template_name(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = ["<string>:", "<expression>:"]
        .iter()
        .filter_map(|name| {
            let at = rest.find(&format!(" (in {name}"))?;
            let digits = &rest[at + 5 + name.len()..];
            let n = digits.bytes().take_while(u8::is_ascii_digit).count();
            (n > 0 && digits[n..].starts_with(')')).then_some((at, 5 + name.len() + n + 1))
        })
        .min()
    {
        out.push_str(&rest[..at.0]);
        rest = &rest[at.0 + at.1..];
    }
    out.push_str(rest);
    out
}

/// A render failure as a finding at the catalog file and line.
pub fn render_diagnostic(err: &RenderError) -> Diagnostic {
    let location = err.location().clone();
    let full = err.to_string();
    let prefix = format!("{location}: ");
    let mut message = full.strip_prefix(&prefix).unwrap_or(&full).to_string();
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&without_template_name(&s.to_string()));
        source = s.source();
    }
    let mut diagnostic = Diagnostic::error(err.code(), location, message);
    if let RenderError::Invalid {
        object: Some(object),
        ..
    }
    | RenderError::Template {
        object: Some(object),
        ..
    }
    | RenderError::Output {
        object: Some(object),
        ..
    }
    | RenderError::PartRedefined {
        object: Some(object),
        ..
    }
    | RenderError::UnknownPart {
        object: Some(object),
        ..
    }
    | RenderError::PartCycle {
        object: Some(object),
        ..
    }
    | RenderError::Redefined { object, .. } = err
    {
        diagnostic = diagnostic.with_object((**object).clone());
    }
    if let RenderError::Redefined { other, .. }
    | RenderError::PartRedefined { other, .. }
    | RenderError::Duplicate { other, .. } = err
    {
        diagnostic = diagnostic.with_related((**other).clone());
    }
    match err {
        RenderError::UnknownPart { .. } => diagnostic.with_cascade(Cascade::Unresolved),
        RenderError::Redefined { .. } | RenderError::Duplicate { .. } => {
            diagnostic.with_cascade(Cascade::StopsRender)
        }
        _ => diagnostic,
    }
}

/// Which checks run (see the README, "What runs in each mode").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// `expand: off` with `render: true`: the rendered objects are checked.
    RenderedOnly,
    /// `expand: validate`: every cluster object is checked, nothing is changed.
    Validate,
    /// `expand: replace`: every cluster object is checked, then the VMs the checks let
    /// through are expanded.
    Replace,
}

impl Stage {
    fn of(config: &FnConfig) -> Option<Stage> {
        match config.expand {
            ExpandMode::Replace => Some(Stage::Replace),
            ExpandMode::Validate => Some(Stage::Validate),
            ExpandMode::Off if config.render => Some(Stage::RenderedOnly),
            ExpandMode::Off => None,
        }
    }
}

/// A checked object: an item, an object read from `paths`, or a new rendered object.
#[derive(Clone, Copy, Debug)]
enum Subject {
    Item(usize),
    Path(usize),
    New(usize),
}

impl Subject {
    fn get<'a>(self, items: &'a [Object], paths: &'a [Object], new: &'a [Object]) -> &'a Object {
        match self {
            Subject::Item(i) => &items[i],
            Subject::Path(i) => &paths[i],
            Subject::New(i) => &new[i],
        }
    }

    fn get_mut<'a>(
        self,
        items: &'a mut [Object],
        paths: &'a mut [Object],
        new: &'a mut [Object],
    ) -> &'a mut Object {
        match self {
            Subject::Item(i) => &mut items[i],
            Subject::Path(i) => &mut paths[i],
            Subject::New(i) => &mut new[i],
        }
    }
}

/// Keep on a namespaced object rendered anew (`value`) the namespace its earlier output
/// (`earlier`) was given by a later step of the pipeline (kpt's `set-namespace`, say), where
/// its catalog document names none: the package is applied with that namespace, and the VMs
/// beside it were given it too, so a VM naming the namespaced instancetype still finds it
/// when the pipeline runs again, or when a validator runs after the namespace setter.
fn keep_given_namespace(earlier: &Value, value: &mut Value) {
    let kind = value
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if crate::model::scope::is_kubevirt_cluster_scoped(kind) {
        return;
    }
    let Some(given) = earlier
        .get("metadata")
        .and_then(|m| m.get("namespace"))
        .filter(|n| n.as_str().is_some_and(|n| !n.is_empty()))
    else {
        return;
    };
    if let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut)
        && metadata.get("namespace").is_none_or(Value::is_null)
    {
        // After the name, where a rendered object's own namespace goes.
        let at = metadata.len().min(1);
        metadata.shift_insert(at, "namespace".to_string(), given.clone());
    }
}

/// Preferences rendered from the inputs whose requirements no instancetype rendered with them
/// meets, nor a cluster-scoped one `index` finds elsewhere (KV042); labels that disagree with
/// the spec (KV041) are among the per-object checks. Each is at the line that writes the
/// preference's requirements (see [`complete`]).
fn unmet_requirements(
    rendered: &[Subject],
    items: &[Object],
    paths: &[Object],
    new: &[Object],
    index: Option<&Index<'_>>,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let objects = || rendered.iter().map(|s| s.get(items, paths, new));
    validate::rules::unmet_requirements::check(objects(), index, &mut out);
    if !out.is_empty() {
        let docs = CatalogDocs::new(items.iter().chain(paths));
        for d in &mut out {
            let about = objects().find(|o| {
                o.origin == d.origin && d.object.as_ref().is_some_and(|r| *r == o.object_ref())
            });
            if let Some(obj) = about {
                complete(d, obj, &docs);
            }
        }
    }
    out
}

/// Point a finding about `obj` at the line of its field (when the text is known).
fn complete(d: &mut Diagnostic, obj: &Object, docs: &CatalogDocs<'_>) {
    if d.origin == obj.origin {
        d.point_at_field_of(obj, docs);
    }
}

/// Render the catalog families and preferences among `objects` and append what they produce,
/// so that they resolve like any other instancetype or preference. `options` says where the
/// objects were read from and where parts they do not define come from.
pub fn render_families(
    objects: &mut Vec<Object>,
    options: &RenderOptions<'_>,
    diags: &mut Vec<Diagnostic>,
) {
    if !objects.iter().any(render::is_catalog_kind) {
        return;
    }
    match render::render(objects.iter(), options) {
        Ok(rendered) => objects.extend(rendered.objects),
        Err(errors) => diags.extend(errors.iter().map(render_diagnostic)),
    }
}

/// The index the checks and the expansion resolve against: the rendered objects, the items
/// (`out`, those of role [`Role::Object`]), the `paths` objects and the `catalogs`' objects, then
/// the embedded catalog. VMs are not in it, so it is the same index after the VMs are taken out
/// of their places to be expanded.
fn index_of<'a>(
    roles: &[Role],
    out: &'a [Object],
    path_objects: &'a [Object],
    new_objects: &'a [Object],
    catalogs: &'a [Object],
    config: &FnConfig,
) -> Index<'a> {
    let item_objects: Vec<&Object> = out
        .iter()
        .zip(roles)
        .filter(|(_, r)| **r == Role::Object)
        .map(|(o, _)| o)
        .collect();
    let mut index = Index::new();
    index.add_layer(new_objects);
    index.add_layer(item_objects);
    index.add_layer(path_objects);
    index.add_layer(catalogs);
    if config.default_catalog {
        index.set_fallback(render::installed_lookup, render::installed_names);
    }
    index
}

/// Run the function over `items` (whose origins the caller set from their annotations).
pub fn process(items: Vec<Object>, config: &FnConfig, placement: Placement) -> Processed {
    let mut unread = Vec::new();
    let catalog_sources = read_sources("catalogs", &config.catalogs, &mut unread);
    let mut processed = process_read(items, config, placement, &catalog_sources);
    if !unread.is_empty() {
        processed.diagnostics.append(&mut unread);
        crate::diagnostic::sort(&mut processed.diagnostics);
    }
    processed
}

/// [`process`] with the files of `config.catalogs` already read (`catalog_sources`): a
/// caller that must stop on a file it cannot read reads them itself.
pub fn process_read(
    items: Vec<Object>,
    config: &FnConfig,
    placement: Placement,
    catalog_sources: &[Source],
) -> Processed {
    match run(items, &NoTexts, config, placement, catalog_sources) {
        Ok(processed) => processed,
        Err(never) => match never {},
    }
}

/// `build`'s [`process_read`] over items whose VirtualMachine documents were left as text
/// (`vms`, see [`crate::load::deferred`]). Each VM is parsed, checked, expanded and printed on
/// a worker, and only its printed document and its identity are kept
/// ([`Processed::printed`]): the trees of all the VMs are never held at once.
///
/// [`NotAVm`] when a VM document does not parse as a VM: the caller parses its inputs whole
/// and runs [`process_read`], whose findings say what the document is.
pub fn build_deferring_vms(
    items: Vec<Object>,
    vms: &DeferredVms<'_>,
    config: &FnConfig,
    catalog_sources: &[Source],
) -> Result<Processed, NotAVm> {
    run(items, vms, config, Placement::Build, catalog_sources)
}

/// Where the VMs among the items left as text are read from.
trait VmTexts: Sync {
    /// Why a VM's text is refused.
    type Refused: Send;
    /// The VM `item` stands for, parsed now, when it is a placeholder.
    fn parse(&self, item: &Object) -> Option<Result<Object, Self::Refused>>;
    /// Where the name of the VM `item` stands for is written, when it is a placeholder (or
    /// what is kept of it).
    fn name_origin(&self, _item: &Object) -> Option<crate::origin::Origin> {
        None
    }
}

/// Every VM parsed with the rest of the items.
struct NoTexts;

impl VmTexts for NoTexts {
    type Refused = std::convert::Infallible;
    fn parse(&self, _: &Object) -> Option<Result<Object, Self::Refused>> {
        None
    }
}

impl VmTexts for DeferredVms<'_> {
    type Refused = NotAVm;
    fn parse(&self, item: &Object) -> Option<Result<Object, NotAVm>> {
        DeferredVms::parse(self, item)
    }
    fn name_origin(&self, item: &Object) -> Option<crate::origin::Origin> {
        DeferredVms::name_origin(self, item)
    }
}

/// What is kept of a VM read from its text once it was checked and expanded on a worker.
struct FromText {
    /// Its `apiVersion`, `kind`, name and namespace as read, for the duplicate check.
    identity: Object,
    /// What stands in its place among the items (see [`stub_of`]); null when the expansion
    /// failed.
    stub: Value,
    /// The output document, printed; empty when the expansion failed (the run fails with it,
    /// and `build` prints nothing then).
    printed: String,
}

/// Under `expand: replace`, a reference that is not found stops the expansion of a VM as
/// surely as the errors that keep it from being tried: when the VM has an error finding, such
/// findings are errors too, as they are for a VM tried.
fn promote_unresolved(stage: Stage, obj: &Object, found: &mut [Diagnostic]) {
    if stage == Stage::Replace
        && obj.kind() == Kind::VirtualMachine
        && found.iter().any(Diagnostic::is_error)
    {
        for f in found
            .iter_mut()
            .filter(|f| f.code == codes::REFERENCE_NOT_FOUND || f.code == codes::BAD_MATCHER)
        {
            f.severity = Severity::Error;
            // Not what admission does but what `build` cannot do: expand the VM, as the
            // expansion's own failure says when it stands alone.
            let admitted = [
                [ADMITTED_UNRESOLVED, ADMITTED_UNLESS_HELD].concat(),
                ADMITTED_UNRESOLVED.to_string(),
            ];
            if let Some(said) = admitted.iter().find(|a| f.message.contains(a.as_str())) {
                f.message = f.message.replacen(said.as_str(), "", 1);
            }
        }
    }
}

/// Add the failure of a VM's expansion to its findings, where it supersedes a warning about the
/// same thing (a reference KubeVirt would admit but kvrender cannot expand without).
fn add_failure(found: &mut Vec<Diagnostic>, failure: Diagnostic) {
    found.retain(|f| f.is_error() || f.code != failure.code);
    found.push(failure);
}

/// The findings of the checks of `obj`, pointed at their fields' lines.
fn check(obj: &Object, ctx: &validate::Context<'_>) -> Vec<Diagnostic> {
    let mut found = validate::check_object(obj, ctx);
    for d in &mut found {
        complete(d, obj, &ctx.docs);
    }
    found
}

/// What `build` reads of an item it does not print itself: the output's identity (see
/// [`load::deferred::identity_of`]) and whether it is marked local configuration.
fn stub_of(value: &Value) -> Value {
    let mut stub = load::deferred::identity_of(value);
    let local = annotations::annotations(value).and_then(|a| a.get(annotations::LOCAL_CONFIG));
    if let (Some(local), Some(metadata)) = (local, stub.get_mut("metadata")) {
        metadata["annotations"] = serde_json::json!({ annotations::LOCAL_CONFIG: local });
    }
    stub
}

/// Check a VM read from its text, expand it under `expand: replace` when the checks let it
/// through, and print the result: its findings and what is kept of it.
fn from_text(
    vm: Object,
    stage: Stage,
    ctx: &validate::Context<'_>,
    profile: &crate::kubevirt::profile::ClusterProfile,
) -> (Vec<Diagnostic>, FromText) {
    let mut found = check(&vm, ctx);
    promote_unresolved(stage, &vm, &mut found);
    let identity = load::deferred::identity(&vm);
    let expand = stage == Stage::Replace && !found.iter().any(Diagnostic::is_error);
    let output = if expand {
        let mut orchestration = Value::Null;
        annotations::copy_orchestration(&vm.value, &mut orchestration);
        match pipeline::expand_vm_owned_to_apply(vm, ctx.index, profile) {
            Ok(mut value) => {
                annotations::copy_orchestration(&orchestration, &mut value);
                Some(value)
            }
            Err(d) => {
                add_failure(&mut found, d);
                None
            }
        }
    } else {
        Some(vm.value)
    };
    let kept = match output {
        Some(value) => FromText {
            identity,
            stub: stub_of(&value),
            printed: crate::emit::stream_document(&value),
        },
        None => FromText {
            identity,
            stub: Value::Null,
            printed: String::new(),
        },
    };
    (found, kept)
}

/// [`process_read`], with the VMs among `items` that `vms` has the text of read from it.
fn run<V: VmTexts>(
    items: Vec<Object>,
    vms: &V,
    config: &FnConfig,
    placement: Placement,
    catalog_sources: &[Source],
) -> Result<Processed, V::Refused> {
    let mut diagnostics = Vec::new();
    let mut roles: Vec<Role> = items.iter().map(role).collect();
    let (path_sources, from_paths) = read(&config.paths, &mut diagnostics);
    diagnostics.extend(from_paths.diagnostics);
    // Resolution-only catalogs: their families and preferences are rendered, never emitted.
    let mut catalogs = load::parse_sources(catalog_sources);
    diagnostics.append(&mut catalogs.diagnostics);
    let catalog_options = RenderOptions {
        sources: catalog_sources,
        shipped_parts: config.default_catalog,
        ..RenderOptions::default()
    };
    render_families(&mut catalogs.objects, &catalog_options, &mut diagnostics);
    let mut out: Vec<Object> = items;
    // The packages of a kpt run: a subpackage's catalog renders into that subpackage.
    let packages = (placement == Placement::Files).then(|| Packages::of(&out));
    if let Some(packages) = &packages {
        for (role, o) in roles.iter_mut().zip(&out) {
            if *role == Role::Catalog && packages.rendered_by_subpackage(&o.value) {
                *role = Role::SubpackageCatalog;
            }
        }
    }
    // For each `paths` object, the item an earlier run wrote of it, whose place it takes.
    let mut earlier_copies: Vec<Option<Value>> = Vec::new();
    // The items by identity, for the objects of `paths` to meet theirs.
    let mut by_key: HashMap<Key<'_>, Vec<usize>> = HashMap::default();
    if !from_paths.objects.is_empty() {
        for (i, o) in out.iter().enumerate() {
            by_key.entry(key(o)).or_default().push(i);
        }
    }
    let (path_catalog, mut path_objects): (Vec<Object>, Vec<Object>) = from_paths
        .objects
        .into_iter()
        .filter(|o| role(o) != Role::Config)
        .filter_map(|o| {
            let same_key = by_key.get(&key(&o)).map_or(&[][..], Vec::as_slice);
            // A file of the package named again in `paths` (`paths: [.]`, or a directory a
            // render writes to) is read once: its documents are among the items already. Asked
            // first, so that a file an earlier run rendered is not taken for a `paths` object
            // to place, beside the object this run renders anew.
            // An item where the package writes `o` is an earlier run's copy of it, unless `o`
            // was read from that very file: the copy is equal to what was read, and taking it
            // for the package's own file would leave `o` unplaced, and the copy pruned as
            // rendered no more.
            let at_place = |item: &Object| {
                packages.as_ref().is_some_and(|packages| {
                    role(&o) == Role::Object
                        && packages.holds(
                            item,
                            &Home::default(),
                            &packages.file_for(&Home::default(), &o),
                        )
                })
            };
            let read_already = same_key.iter().any(|&i| {
                matches!(
                    roles[i],
                    Role::Object | Role::Catalog | Role::SubpackageCatalog
                ) && same_document(&out[i].value, &o.value)
                    && (!at_place(&out[i]) || read_from(&o, &out[i]))
            });
            if read_already {
                return None;
            }
            if let Some(packages) = &packages
                && role(&o) == Role::Object
            {
                let file = packages.file_for(&Home::default(), &o);
                let earlier = same_key.iter().copied().find(|&i| {
                    roles[i] == Role::Object && packages.holds(&out[i], &Home::default(), &file)
                });
                if let Some(i) = earlier {
                    roles[i] = Role::Reread;
                    earlier_copies.push(Some(out[i].value.clone()));
                    return Some(o);
                }
            }
            if role(&o) == Role::Object {
                earlier_copies.push(None);
            }
            Some(o)
        })
        .partition(|o| role(o) == Role::Catalog);
    // Which items are no longer as they were read.
    let mut changed = vec![false; out.len()];

    // Render.
    let mut rendered = Vec::new();
    // How many of `rendered` come from the inputs (the embedded catalog follows them).
    let mut user_rendered = 0;
    // The package each object rendered from the inputs belongs to.
    let mut homes: Vec<Home> = Vec::new();
    if config.render {
        // Under `kpt fn render`, the paths of two packages' documents may be the same
        // (`catalog.yaml`): a subpackage's documents are rendered under their full path, so
        // that each rendered object can be told apart and sent home.
        let tagged: Vec<Option<Object>> = out
            .iter()
            .zip(&roles)
            .map(|(o, r)| {
                let package = packages.as_ref()?.package_of(&o.value)?;
                (*r == Role::Catalog).then(|| {
                    let mut doc = o.clone();
                    doc.origin.path = format!("{package}/{}", o.origin.path).into();
                    doc
                })
            })
            .collect();
        let catalog_docs: Vec<&Object> = out
            .iter()
            .zip(&roles)
            .zip(&tagged)
            .filter(|((_, r), _)| **r == Role::Catalog)
            .map(|((o, _), t)| t.as_ref().unwrap_or(o))
            .chain(&path_catalog)
            .collect();
        // A document a kustomize build renamed is rendered under its first name, and what it
        // makes is renamed after (see `renamed`).
        let renamings: Vec<Option<renamed::Renaming>> = catalog_docs
            .iter()
            .map(|d| renamed::Renaming::of(d))
            .collect();
        let restored: Vec<Option<Object>> = catalog_docs
            .iter()
            .zip(&renamings)
            .map(|(d, r)| r.as_ref().map(|r| r.restored(d)))
            .collect();
        let renamed_at: HashMap<(&str, usize), &renamed::Renaming> = catalog_docs
            .iter()
            .zip(&renamings)
            .filter_map(|(d, r)| Some(((d.origin.path.as_ref(), d.origin.index), r.as_ref()?)))
            .collect();
        let catalog_docs: Vec<&Object> = catalog_docs
            .iter()
            .zip(&restored)
            .map(|(d, r)| r.as_ref().unwrap_or(d))
            .collect();
        let subpackages: Vec<String> = tagged
            .iter()
            .flatten()
            .filter_map(|doc| packages.as_ref()?.package_of(&doc.value))
            .collect();
        let options = RenderOptions {
            version: config.version_label.as_deref(),
            version_label: config.version_label_key.as_deref(),
            sources: &path_sources,
            more_parts: &catalogs.objects,
            more_sources: catalog_sources,
            shipped_parts: config.default_catalog,
        };
        if !catalog_docs.is_empty() {
            // Two catalog documents of one kind and name (two families `d`, two `Parts` named
            // alike) are a mistake even when what they render does not clash: `validate` says so
            // of the files, and so does every run that renders them. A document read twice
            // (an item also named by `paths`) is one definition.
            let mut seen = std::collections::HashSet::new();
            let distinct = catalog_docs
                .iter()
                .copied()
                .filter(|d| seen.insert((d.origin.path.clone(), d.origin.index, d.origin.line)));
            validate::rules::duplicate::check(distinct, &mut diagnostics);
            match render::render(catalog_docs, &options) {
                Ok(r) => {
                    user_rendered = r.objects.len();
                    for mut obj in r.objects {
                        if let Some(renaming) =
                            renamed_at.get(&(obj.origin.path.as_ref(), obj.origin.index))
                        {
                            renaming.apply(&mut obj);
                        }
                        let home = match &packages {
                            None => Home::default(),
                            Some(packages) => {
                                // The longest: a package may hold another one.
                                let tag = subpackages
                                    .iter()
                                    .filter_map(|p| {
                                        let rest = obj.origin.path.strip_prefix(p.as_str())?;
                                        Some((p, rest.strip_prefix('/')?.to_string()))
                                    })
                                    .max_by_key(|(p, _)| p.len());
                                match tag {
                                    Some((package, path)) => {
                                        obj.origin.path = path.into();
                                        Home {
                                            package: Some(package.clone()),
                                            prefix: String::new(),
                                        }
                                    }
                                    None => packages.home_at(&obj.origin.path),
                                }
                            }
                        };
                        homes.push(home);
                        rendered.push(obj);
                    }
                }
                Err(errors) => diagnostics.extend(errors.iter().map(render_diagnostic)),
            }
        }
        if config.emit_default_catalog {
            match render::render_embedded(&options) {
                Ok(r) => rendered.extend(r.objects),
                Err(message) => diagnostics.push(Diagnostic::error(
                    RENDER_CODE,
                    crate::origin::Origin::new("<embedded catalog>", 0, None),
                    message,
                )),
            }
        }
    }
    // The embedded catalog's objects belong to the package the step runs on.
    homes.resize(rendered.len(), Home::default());

    // `build` over a package an earlier `kpt fn render` wrote into: the rendered files are that
    // render's output, superseded by this one (and printed with it), not second definitions.
    if placement == Placement::Build && user_rendered > 0 {
        let judge_stale = !diagnostics.iter().any(Diagnostic::is_error);
        let read_back = read_back(
            &out,
            &rendered[..user_rendered],
            &config.walked,
            judge_stale,
        );
        for (role, superseded) in roles.iter_mut().zip(read_back.superseded) {
            if *role == Role::Object && superseded {
                *role = Role::Superseded;
            }
        }
        diagnostics.extend(read_back.stale);
    }

    // A rendered object meets an item or a `paths` object of the same identity. In the file
    // kvrender gives it (kpt's package, Files placement), the item is an earlier run's output
    // and is replaced in place. Anywhere else it is the user's own definition: an object of
    // the embedded catalog gives way to it, one rendered from the inputs clashes with it.
    let meets: Vec<Meeting> = {
        let mut positions: HashMap<Key<'_>, Defined> = HashMap::default();
        for (i, o) in out.iter().enumerate() {
            if roles[i] == Role::Object {
                positions.entry(key(o)).or_insert(Defined::Item(i));
            }
        }
        for (j, o) in path_objects.iter().enumerate() {
            positions.entry(key(o)).or_insert(Defined::Path(j));
        }
        // In a package: the items by file, kind and name. An item in the file a rendered
        // object is written to, of its kind and name, is its earlier output even when a later
        // step of the pipeline (a namespace setter) gave it another namespace: replaced, not
        // joined by a second object at the same path and index, which kpt refuses.
        type InFile<'a> = (Option<String>, String, &'a str, &'a str);
        let mut in_files: HashMap<InFile<'_>, usize> = HashMap::default();
        if let Some(packages) = &packages {
            for (i, o) in out.iter().enumerate() {
                if roles[i] == Role::Object
                    && let Some(path) = annotations::file_path(&o.value)
                {
                    let path = path.strip_prefix("./").unwrap_or(&path).to_string();
                    let package = packages.package_of(&o.value);
                    in_files
                        .entry((package, path, o.kind_str(), o.name()))
                        .or_insert(i);
                }
            }
        }
        rendered
            .iter()
            .enumerate()
            .map(|(n, o)| match positions.get(&key(o)) {
                None if n < user_rendered && !in_files.is_empty() => {
                    let home = &homes[n];
                    let file = packages.as_ref().map(|p| p.file_for(home, o));
                    let file = format!("{}{}", home.prefix, file.unwrap_or_default());
                    in_files
                        .get(&(home.package.clone(), file, o.kind_str(), o.name()))
                        .map_or(Meeting::Nothing, |&i| Meeting::EarlierOutput(i))
                }
                None => Meeting::Nothing,
                Some(&Defined::Item(i))
                    if packages.as_ref().is_some_and(|p| {
                        p.holds(&out[i], &homes[n], &p.file_for(&homes[n], o))
                    }) =>
                {
                    Meeting::EarlierOutput(i)
                }
                Some(&Defined::Item(i))
                    if n < user_rendered
                        && packages
                            .as_ref()
                            .is_some_and(|p| p.in_subpackage(&out[i], &homes[n], o)) =>
                {
                    Meeting::Moved(i)
                }
                Some(_) if n >= user_rendered => Meeting::Shadowed,
                Some(&defined) => Meeting::Clash(defined),
            })
            .collect()
    };
    // An earlier run's output in a subpackage is dropped (kpt deletes its file) and the object
    // rendered now is written in its own package; an info result says where it went.
    if let Some(packages) = &packages {
        for (n, meeting) in meets.iter().enumerate() {
            let Meeting::Moved(i) = *meeting else {
                continue;
            };
            let Some((sub, from)) =
                packages.subpackage_holding(&homes[n], &annotations::file_for(&rendered[n]))
            else {
                continue;
            };
            roles[i] = Role::Moved;
            let to = format!(
                "{}{}",
                packages.home_dir(&homes[n]),
                packages.file_for(&homes[n], &rendered[n])
            );
            diagnostics.push(
                Diagnostic::warning(
                    codes::STALE_OUTPUT,
                    out[i].origin.clone(),
                    format!(
                        "moved `{from}` to `{to}`: an earlier render wrote it into `{sub}`, a \
                         subpackage, and what a package renders stays in that package"
                    ),
                )
                .with_severity(Severity::Info)
                .with_object(out[i].object_ref()),
            );
        }
    }
    if let Some(packages) = packages.as_ref().filter(|_| config.render) {
        stale_outputs(
            &out,
            &mut roles,
            &rendered,
            &meets,
            packages,
            config,
            &mut diagnostics,
        );
    }
    let mut new_objects = Vec::new();
    let mut replaced = Vec::new();
    // The user's own objects of the identity of an object rendered from the inputs.
    let mut clashing: Vec<Defined> = Vec::new();
    // Where each object rendered from the inputs went: replacing item i, or new object i.
    let mut from_inputs = Vec::with_capacity(user_rendered);
    // Where each new object goes.
    let mut new_homes: Vec<Home> = Vec::new();
    // The objects rendered from a subpackage's catalog (see `Processed`).
    let mut rendered_in_subpackages = Vec::new();
    for (n, ((obj, meeting), home)) in rendered.into_iter().zip(meets).zip(homes).enumerate() {
        let target = match meeting {
            Meeting::Shadowed => continue,
            Meeting::EarlierOutput(i) => Some(i),
            Meeting::Moved(_) => None,
            Meeting::Clash(defined) => {
                clashing.push(defined);
                None
            }
            Meeting::Nothing => None,
        };
        if n < user_rendered {
            from_inputs.push(match target {
                Some(i) => Subject::Item(i),
                None => Subject::New(new_objects.len()),
            });
        }
        match target {
            Some(i) => {
                if let Some(package) = &home.package {
                    rendered_in_subpackages.push(RenderedIn::of(&obj, package));
                }
                let mut value = obj.value;
                annotations::copy_orchestration(&out[i].value, &mut value);
                keep_given_namespace(&out[i].value, &mut value);
                changed[i] |= value != out[i].value;
                out[i].value = value;
                out[i].origin = obj.origin;
                out[i].source = obj.source;
                replaced.push(i);
            }
            None => {
                new_objects.push(obj);
                new_homes.push(home);
            }
        }
    }

    // The documents of the items printed already (VMs read from their text), by position.
    let mut printed: Vec<Option<String>> = Vec::new();
    // Check, then expand.
    if let Some(stage) = Stage::of(config) {
        // What is checked: every cluster object when VMs are processed, else only what was
        // rendered (a generator checks what it generates and passes the rest through).
        let subjects: Vec<Subject> = out
            .iter()
            .enumerate()
            .filter(|(i, o)| {
                roles[*i] == Role::Object
                    && (stage != Stage::RenderedOnly
                        || replaced.contains(i)
                        || (config.check_input_catalog && o.kind().is_catalog()))
            })
            .map(|(i, _)| Subject::Item(i))
            .chain(
                (0..path_objects.len())
                    .filter(|&j| {
                        stage != Stage::RenderedOnly
                            || (config.check_input_catalog && path_objects[j].kind().is_catalog())
                    })
                    .map(Subject::Path),
            )
            .chain((0..new_objects.len()).map(Subject::New))
            .collect();
        let checked: Vec<&Object> = subjects
            .iter()
            .map(|s| s.get(&out, &path_objects, &new_objects))
            .collect();
        let catalog = &catalogs.objects;
        let (mut findings, duplicates, to_expand, from_texts) = {
            let index = index_of(&roles, &out, &path_objects, &new_objects, catalog, config);
            let mut ctx = validate::Context::with_cluster(
                &index,
                &config.profile,
                checked.iter().copied(),
                catalog,
            );
            // The catalog documents are not checked, but the findings about what they render
            // are reported at their lines (a part of a `--catalog` file at its own).
            ctx.docs = CatalogDocs::new(out.iter().chain(&path_objects).chain(catalog));
            // Requirements no rendered instancetype meets (KV042) look at the rendered catalog
            // as a whole; they are checked while the per-object checks run.
            type PerSubject = (Vec<Diagnostic>, Option<FromText>);
            let (per_subject, unmet): (Result<Vec<PerSubject>, V::Refused>, Vec<Diagnostic>) =
                rayon::join(
                    || {
                        subjects
                            .par_iter()
                            .zip(&checked)
                            .map(|(subject, o)| {
                                // Only the items stand for VMs left as text.
                                let text = match subject {
                                    Subject::Item(_) => vms.parse(o),
                                    _ => None,
                                };
                                match text {
                                    None => Ok((check(o, &ctx), None)),
                                    Some(vm) => {
                                        let (found, kept) =
                                            from_text(vm?, stage, &ctx, &config.profile);
                                        Ok((found, Some(kept)))
                                    }
                                }
                            })
                            .collect()
                    },
                    || {
                        unmet_requirements(
                            &from_inputs,
                            &out,
                            &path_objects,
                            &new_objects,
                            Some(&index),
                        )
                    },
                );
            let (findings, from_texts): (Vec<Vec<Diagnostic>>, Vec<Option<FromText>>) =
                per_subject?.into_iter().unzip();
            diagnostics.extend(unmet);
            // Of the checks, a catalog document gets the ones about what it makes: a YAML 1.1
            // word renders otherwise here than under kpt or kustomize (KV008), and an empty
            // value removes what its parts set (KV045).
            for doc in out
                .iter()
                .zip(&roles)
                .filter(|(_, r)| **r == Role::Catalog)
                .map(|(o, _)| o)
                .chain(path_objects.iter().filter(|o| render::is_catalog_kind(o)))
            {
                validate::rules::yaml_boolean::check(doc, &mut diagnostics);
                validate::rules::empty_value::check(doc, &mut diagnostics);
            }
            let mut duplicates = Vec::new();
            // A user's object that clashes with a rendered one is a second definition even
            // where the user's objects are not checked (a generator's run).
            let unchecked_clashes = clashing
                .iter()
                .filter(|_| stage == Stage::RenderedOnly)
                .map(|defined| match *defined {
                    Defined::Item(i) => &out[i],
                    Defined::Path(j) => &path_objects[j],
                });
            // A VM read from its text is known by its identity.
            let identities = checked
                .iter()
                .zip(&from_texts)
                .map(|(o, kept)| kept.as_ref().map_or(*o, |k| &k.identity));
            // Its name's line is found in its text, for a duplicate only.
            let named = |o: &Object| {
                vms.name_origin(o)
                    .unwrap_or_else(|| validate::rules::duplicate::name_origin(o))
            };
            validate::rules::duplicate::check_with(
                unchecked_clashes.chain(identities),
                &named,
                &mut duplicates,
            );
            // Replace: expand the VMs the checks let through; a VM KubeVirt would refuse stays
            // as it was, its findings say why. Those read from their text are expanded already.
            // Only the VMs are handed to the workers: a catalog build has none.
            let to_expand: Vec<usize> = (0..checked.len())
                .filter(|&i| {
                    stage == Stage::Replace
                        && from_texts[i].is_none()
                        && !matches!(subjects[i], Subject::New(_))
                        && checked[i].kind() == Kind::VirtualMachine
                        && !findings[i].iter().any(Diagnostic::is_error)
                })
                .collect();
            let mut findings = findings;
            for ((found, kept), o) in findings.iter_mut().zip(&from_texts).zip(&checked) {
                if kept.is_none() {
                    promote_unresolved(stage, o, found);
                }
            }
            (findings, duplicates, to_expand, from_texts)
        };
        let mut expanded: Vec<Option<Result<Expanded, Diagnostic>>> =
            (0..subjects.len()).map(|_| None).collect();
        // A VM read from its text leaves its stub in its place, its document in `printed`.
        for (subject, kept) in subjects.iter().zip(from_texts) {
            if let (Subject::Item(i), Some(kept)) = (subject, kept) {
                if printed.is_empty() {
                    printed.resize(out.len(), None);
                }
                out[*i].value = kept.stub;
                printed[*i] = Some(kept.printed);
                changed[*i] = true;
            }
        }
        if !to_expand.is_empty() {
            // Each VM is taken out of its place (a null object stands there until its result
            // does) and expanded on a worker, which drops the VM as read once its result is
            // there: the trees of the VMs as read and as expanded are not all held at once.
            let taken: Vec<(usize, Object)> = to_expand
                .iter()
                .map(|&i| {
                    let place = subjects[i].get_mut(&mut out, &mut path_objects, &mut new_objects);
                    let stand_in = Object::new(Value::Null, place.origin.clone());
                    (i, std::mem::replace(place, stand_in))
                })
                .collect();
            let index = index_of(&roles, &out, &path_objects, &new_objects, catalog, config);
            let results: Vec<(usize, Result<Expanded, Diagnostic>, Object)> = taken
                .into_par_iter()
                .map(|(i, vm)| {
                    // What the result keeps of the VM besides its tree (see below).
                    let mut kept = vm.with_value(Value::Null);
                    annotations::copy_orchestration(&vm.value, &mut kept.value);
                    let result = if placement == Placement::Build {
                        // `build` prints nothing when a VM fails (every failure is an error):
                        // the VM's tree becomes its result.
                        pipeline::expand_vm_owned_to_apply(vm, &index, &config.profile).map(
                            |mut value| {
                                annotations::copy_orchestration(&kept.value, &mut value);
                                value
                            },
                        )
                    } else {
                        match pipeline::expand_vm_to_apply(&vm, &index, &config.profile) {
                            Ok(mut value) => {
                                annotations::copy_orchestration(&kept.value, &mut value);
                                // A function's output keeps a VM that expands to itself as
                                // it was read.
                                if placement == Placement::Files && value == vm.value {
                                    return (i, Ok(Expanded::as_read(value)), kept);
                                }
                                Ok(value)
                            }
                            // It keeps a VM that fails as it was, too.
                            Err(d) => return (i, Err(d), vm),
                        }
                    };
                    let result = result.map(|value| {
                        // The items' results are printed here, and only their stubs kept: the
                        // trees of all the expanded VMs are not held at once. (The objects of
                        // `paths` files are few, and are printed with the rest.)
                        match subjects[i] {
                            Subject::Item(_) => Expanded::printed(&value, placement),
                            _ => Expanded::changed(value),
                        }
                    });
                    (i, result, kept)
                })
                .collect();
            drop(index);
            for (i, result, kept) in results {
                *subjects[i].get_mut(&mut out, &mut path_objects, &mut new_objects) = kept;
                expanded[i] = Some(result);
            }
        }
        for ((subject, result), found) in subjects.iter().zip(expanded).zip(&mut findings) {
            match result {
                Some(Ok(result)) => {
                    let target = subject.get_mut(&mut out, &mut path_objects, &mut new_objects);
                    target.value = result.value;
                    if let Subject::Item(i) = *subject {
                        changed[i] |= result.changed;
                        if let Some(document) = result.printed {
                            if printed.is_empty() {
                                printed.resize(out.len(), None);
                            }
                            printed[i] = Some(document);
                        }
                    }
                }
                Some(Err(d)) => add_failure(found, d),
                None => {}
            }
        }
        diagnostics.extend(findings.into_iter().flatten());
        diagnostics.extend(duplicates.into_iter().map(|mut d| {
            if d.field.is_none() {
                d.field = Some("metadata.name".to_string());
            }
            d
        }));
    }

    if Stage::of(config).is_none() {
        diagnostics.extend(unmet_requirements(
            &from_inputs,
            &out,
            &path_objects,
            &new_objects,
            None,
        ));
    }

    // Assemble.
    let mut values: Vec<Value> = Vec::new();
    if placement == Placement::Build {
        values.extend(new_objects.drain(..).map(|o| o.value));
    }
    // `printed` follows the items from here, when it holds anything.
    let mut printed_items = printed.into_iter();
    let mut printed: Vec<Option<String>> = Vec::new();
    let mut any_printed = false;
    let mut as_read: Vec<Option<AsRead>> = Vec::new();
    for (input, ((o, r), changed)) in out.into_iter().zip(&roles).zip(changed).enumerate() {
        let document = printed_items.next().flatten();
        if matches!(r, Role::Pruned | Role::Reread | Role::Moved)
            || (placement == Placement::Build && *r != Role::Object)
        {
            continue;
        }
        let mut value = o.value;
        let marked_local = *r != Role::Object
            && (config.render || *r == Role::Config)
            && annotations::mark_local_config(&mut value);
        if placement == Placement::Files {
            // Aligned with `values`: under this placement nothing precedes the items.
            as_read.push((!changed && document.is_none()).then_some(AsRead {
                input,
                marked_local,
            }));
        }
        if document.is_some() && !any_printed {
            any_printed = true;
            printed.resize(values.len(), None);
        }
        if any_printed {
            printed.push(document);
        }
        values.push(value);
    }
    // New files go where a package render writes them (see `annotations::file_for`), in the
    // package the step runs on or the subpackage their catalog document is in, at the first
    // index no item of that file holds: kpt refuses two items at one path and index.
    let mut taken = Places::of(&values, packages.as_ref(), placement);
    for (obj, earlier) in path_objects.into_iter().zip(earlier_copies) {
        let file = packages.as_ref().map_or_else(
            || annotations::file_for(&obj),
            |p| p.file_for(&Home::default(), &obj),
        );
        let mut value = obj.value;
        if placement == Placement::Files {
            match earlier {
                Some(earlier) => annotations::copy_orchestration(&earlier, &mut value),
                None if annotations::file_path(&value).is_none() => {
                    let index = taken.next(None, &file);
                    annotations::set_file(&mut value, &file, index);
                }
                None => {}
            }
        }
        values.push(value);
    }
    for (obj, home) in new_objects.into_iter().zip(new_homes) {
        if let Some(package) = &home.package {
            rendered_in_subpackages.push(RenderedIn::of(&obj, package));
        }
        let file = packages
            .as_ref()
            .map_or_else(|| annotations::file_for(&obj), |p| p.file_for(&home, &obj));
        let file = format!("{}{file}", home.prefix);
        let mut value = obj.value;
        if placement == Placement::Files {
            let index = taken.next(home.package.as_deref(), &file);
            annotations::set_file(&mut value, &file, index);
            if let Some(package) = &home.package {
                annotations::set_package(&mut value, package);
            }
        }
        values.push(value);
    }

    config.adjust(&mut diagnostics);
    if any_printed {
        printed.resize(values.len(), None);
    }
    if placement == Placement::Files {
        as_read.resize(values.len(), None);
    }
    Ok(Processed {
        items: values,
        printed,
        as_read,
        diagnostics,
        rendered_in_subpackages,
    })
}

#[cfg(test)]
mod template_name_tests {
    use super::without_template_name;

    #[test]
    fn the_engines_name_for_a_value_is_left_out() {
        assert_eq!(
            without_template_name("undefined value: `x` is undefined (in <string>:1)"),
            "undefined value: `x` is undefined"
        );
        assert_eq!(
            without_template_name("syntax error: bad (in <expression>:12) and (in <string>:3)"),
            "syntax error: bad and"
        );
        // Anything else stays.
        for kept in [
            "a (in <string>:x)",
            "a (in file.yaml:3)",
            "(in <string>:",
            "",
        ] {
            assert_eq!(without_template_name(kept), kept);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::origin::Origin;

    #[test]
    fn a_kptfile_runs_kvrender_when_a_mutator_names_it() {
        let pipeline = |step: Value, kind: &str| json!({"pipeline": {kind: [step]}});
        for step in [
            json!({"exec": "kvrender fn"}),
            json!({"exec": "kvrender"}),
            json!({"exec": "/usr/local/bin/kvrender fn cfg.yaml"}),
            json!({"exec": "./bin/kvrender-0.4 fn"}),
            json!({"image": "ghcr.io/acme/kvrender:v1"}),
            json!({"image": "kvrender@sha256:0123"}),
        ] {
            assert!(runs_kvrender(&pipeline(step.clone(), "mutators")), "{step}");
            // kpt keeps no change a validator makes: it renders nothing.
            assert!(!runs_kvrender(&pipeline(step, "validators")));
        }
        for step in [
            json!({"exec": "set-labels kvrender"}),
            json!({"exec": "/opt/kvrender/bin/other fn"}),
            json!({"image": "ghcr.io/kvrender/set-namespace:v1"}),
            json!({"exec": 3}),
            json!({}),
        ] {
            assert!(
                !runs_kvrender(&pipeline(step.clone(), "mutators")),
                "{step}"
            );
        }
        assert!(!runs_kvrender(
            &json!({"pipeline": {"mutators": "kvrender"}})
        ));
        assert!(!runs_kvrender(&json!({})));
    }

    fn item(package: &str) -> Object {
        Object::new(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c",
                "annotations": {annotations::PACKAGE_PATH: package}}}),
            Origin::new("-", 0, None),
        )
    }

    #[test]
    fn a_rendered_object_never_goes_into_a_subpackage() {
        let instancetype = |namespace: &str| {
            Object::new(
                json!({"apiVersion": "instancetype.kubevirt.io/v1beta1",
                    "kind": "VirtualMachineInstancetype",
                    "metadata": {"name": "s", "namespace": namespace}}),
                Origin::new("-", 0, None),
            )
        };
        let items = [item("/p"), item("/p/shop"), item("/p/shop/inner")];
        let packages = Packages::of(&items);
        assert_eq!(packages.sub_dirs, ["shop/", "shop/inner/"]);
        let top = Home::default();
        let shop = Home {
            package: Some("/p/shop".to_string()),
            prefix: String::new(),
        };
        let placed =
            |home: &Home, namespace: &str| packages.file_for(home, &instancetype(namespace));
        assert_eq!(placed(&top, "shop"), "shop_instancetypes_s.yaml");
        assert_eq!(placed(&top, "other"), "other/instancetypes/s.yaml");
        assert_eq!(placed(&shop, "shop"), "shop/instancetypes/s.yaml");
        assert_eq!(placed(&shop, "inner"), "inner_instancetypes_s.yaml");

        // `kpt fn eval`: the directories of the subpackages' Kptfiles.
        let kptfile = |path: &str| {
            Object::new(
                json!({"apiVersion": "kpt.dev/v1", "kind": "Kptfile", "metadata": {"name": "k",
                    "annotations": {annotations::PATH: path}}}),
                Origin::new(path, 0, None),
            )
        };
        let packages = Packages::of(&[kptfile("Kptfile"), kptfile("shop/Kptfile")]);
        let placed =
            |home: &Home, namespace: &str| packages.file_for(home, &instancetype(namespace));
        assert_eq!(placed(&top, "shop"), "shop_instancetypes_s.yaml");
        let in_shop = Home {
            package: None,
            prefix: "shop/".to_string(),
        };
        assert_eq!(placed(&in_shop, "shop"), "shop/instancetypes/s.yaml");
    }

    #[test]
    fn a_package_is_a_directory_inside_the_outermost_one() {
        let items = [
            item("/work/pkg"),
            item("/work/pkg/sub"),
            item("/work/pkg/../../etc"),
            item("/work/pkgx"),
            item("/etc"),
            item("../up"),
        ];
        let packages = Packages::of(&items);
        assert_eq!(packages.outermost.as_deref(), Some("/etc"));
        let packages = Packages::of(&items[..4]);
        assert_eq!(packages.outermost.as_deref(), Some("/work/pkg"));
        let of: Vec<Option<String>> = items
            .iter()
            .map(|i| packages.package_of(&i.value))
            .collect();
        assert_eq!(
            of,
            [
                None,
                Some("/work/pkg/sub".to_string()),
                None,
                None,
                None,
                None
            ]
        );
    }
}

//! The common catalog shipped in the binary: the files under `catalog/` are embedded at build
//! time (see `build.rs`), read and compiled once, on first use, and each combination rendered
//! when it is first asked for.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use crate::load::{self, Source};
use crate::model::Object;
use crate::model::scope::is_kubevirt_cluster_scoped;
use crate::resolve::WordHasher;

use super::template::{Templates, sandbox};
use super::{Catalog, Combination, Job, Prepared, RenderOptions, Rendered, render, render_job};

include!(concat!(env!("OUT_DIR"), "/embedded_catalog.rs"));

/// The embedded catalog files as load sources, paths relative to the crate (`catalog/…`).
pub fn embedded_sources() -> Vec<Source> {
    FILES
        .iter()
        .map(|(path, text)| Source {
            path: Arc::from(*path),
            bytes: text.as_bytes().to_vec(),
        })
        .collect()
}

/// How the files of the shipped catalog are named where a user's catalog borrows its parts.
const SHIPPED_PREFIX: &str = "<shipped>/";

/// Whether `path` names a file of the shipped catalog.
pub(super) fn is_shipped(path: &str) -> bool {
    path.starts_with(SHIPPED_PREFIX)
}

/// Whether the shipped catalog defines a part named `name`.
pub(super) fn is_shipped_part(name: &str) -> bool {
    shipped_parts().0.iter().any(|doc| {
        doc.value
            .get("parts")
            .and_then(serde_json::Value::as_object)
            .is_some_and(|parts| parts.contains_key(name))
    })
}

/// The `Parts` documents of the shipped catalog and the texts of its files, parsed once: a
/// user's catalog may name these parts without defining them.
pub(super) fn shipped_parts()
-> &'static (Vec<Object>, foldhash::HashMap<&'static str, &'static str>) {
    static PARTS: OnceLock<(Vec<Object>, foldhash::HashMap<&'static str, &'static str>)> =
        OnceLock::new();
    PARTS.get_or_init(|| {
        // Named apart from the user's files: `catalog/…` could be a file of theirs.
        let named = |path: &str| format!("{SHIPPED_PREFIX}{path}");
        let sources: Vec<Source> = FILES
            .iter()
            .map(|(path, text)| Source {
                path: Arc::from(named(path)),
                bytes: text.as_bytes().to_vec(),
            })
            .collect();
        let objects = load::parse_sources(&sources)
            .objects
            .into_iter()
            .filter(|o| o.kind_str() == "Parts")
            .collect();
        let texts = FILES
            .iter()
            .map(|(path, text)| (&*Box::leak(named(path).into_boxed_str()), *text))
            .collect();
        (objects, texts)
    })
}

/// Render the embedded catalog sources with `options` (its `sources` field is ignored: the
/// embedded texts are used).
///
/// # Errors
/// When the embedded catalog does not parse or render, which its tests rule out.
pub fn render_embedded(options: &RenderOptions<'_>) -> Result<Rendered, String> {
    let sources = embedded_sources();
    let loaded = load::parse_sources(&sources);
    if let Some(d) = loaded.diagnostics.first() {
        return Err(format!("{}: {}", d.origin, d.message));
    }
    let options = RenderOptions {
        version: options.version,
        version_label: options.version_label,
        sources: &sources,
        ..RenderOptions::default()
    };
    render(&loaded.objects, &options).map_err(|e| e.to_string())
}

/// The rendered common catalog (instancetypes and preferences, cluster-scoped and namespaced),
/// sorted by kind then name. Every combination is rendered (in parallel) on the first call;
/// the objects are the ones [`embedded_lookup`] hands out.
pub fn embedded_catalog() -> &'static [&'static Object] {
    static CATALOG: OnceLock<Vec<&'static Object>> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let lazy = lazy();
        let mut all: Vec<&'static Object> = (0..lazy.jobs.len())
            .into_par_iter()
            .flat_map_iter(|job| lazy.rendered(job).iter().map(|(o, _)| o))
            .collect();
        all.sort_by(|a, b| (a.kind_str(), a.name()).cmp(&(b.kind_str(), b.name())));
        all
    })
}

/// Look an object up in the embedded catalog by kind, namespace and name, with the resolution
/// index's rules (namespaced objects live in `default`). Only the combination asked for is
/// rendered, once per process: a run that names two objects of the catalog renders two
/// combinations, not all of them. Resolution asks [`installed_lookup`], its cluster-scoped part.
pub fn embedded_lookup(kind: &str, namespace: &str, name: &str) -> Option<&'static Object> {
    let lazy = lazy();
    let (table, namespaced) = table_for(lazy, kind, namespace)?;
    let job = *table.get(name)?;
    // A combination renders its cluster-scoped object first, then its namespaced one, each
    // when its scope is on.
    let (cluster, namespaced_kind) = lazy.jobs[job].kinds();
    let position = if namespaced {
        namespaced_kind?;
        usize::from(cluster.is_some())
    } else {
        cluster?;
        0
    };
    lazy.rendered(job).get(position).map(|(o, _)| o)
}

/// The names of the embedded catalog's objects of `kind` in `namespace` (namespaced objects
/// live in `default`), to suggest from when a lookup finds nothing; [`installed_names`] is its
/// cluster-scoped part, which resolution suggests from.
pub fn embedded_names(kind: &str, namespace: &str) -> Vec<&'static str> {
    let lazy = lazy();
    let Some((table, namespaced)) = table_for(lazy, kind, namespace) else {
        return Vec::new();
    };
    table
        .iter()
        .filter(|(_, job)| {
            let (cluster, namespaced_kind) = lazy.jobs[**job].kinds();
            if namespaced {
                namespaced_kind.is_some()
            } else {
                cluster.is_some()
            }
        })
        .map(|(name, _)| name.as_str())
        .collect()
}

/// [`embedded_lookup`] for what a cluster holds without being told: the cluster-scoped
/// instancetypes and preferences, which KubeVirt's operator installs from the same catalog. Its
/// namespaced copies exist only where someone applied them, so a VM naming a namespaced
/// instancetype or preference is not answered from here. Pass this with [`installed_names`] to
/// [`crate::resolve::Index::set_fallback`].
pub fn installed_lookup(kind: &str, namespace: &str, name: &str) -> Option<&'static Object> {
    is_kubevirt_cluster_scoped(kind)
        .then(|| embedded_lookup(kind, namespace, name))
        .flatten()
}

/// [`embedded_names`] for [`installed_lookup`]: the cluster-scoped objects only.
pub fn installed_names(kind: &str, namespace: &str) -> Vec<&'static str> {
    if is_kubevirt_cluster_scoped(kind) {
        embedded_names(kind, namespace)
    } else {
        Vec::new()
    }
}

/// The names table a lookup of `kind` in `namespace` searches, and whether the kind is
/// namespaced; `None` for other kinds and for namespaces other than `default`.
fn table_for<'l>(lazy: &'l Lazy, kind: &str, namespace: &str) -> Option<(&'l Names, bool)> {
    let (table, namespaced) = match kind {
        "VirtualMachineClusterInstancetype" => (&lazy.instancetypes, false),
        "VirtualMachineInstancetype" => (&lazy.instancetypes, true),
        "VirtualMachineClusterPreference" => (&lazy.preferences, false),
        "VirtualMachinePreference" => (&lazy.preferences, true),
        _ => return None,
    };
    (!namespaced || namespace == "default").then_some((table, namespaced))
}

/// Read, resolve and compile the embedded catalog now, on this thread (it is otherwise done on
/// the first lookup), so that a caller can overlap it with other work. Only where no job that
/// looks the catalog up can run before it returns, as beside `expand`'s split of its input.
/// Elsewhere, a worker that built it here could take such a job while it waits for a parallel
/// step of the build, and that job would wait for the build for ever; the first lookup
/// therefore builds it on a thread and in a pool of their own.
pub fn prepare_embedded() {
    LAZY.get_or_init(build_lazy);
}

/// Names to jobs, hashed cheaply: every lookup of a VM's instancetype or preference that the
/// user's files do not answer comes here.
type Names = HashMap<String, usize, BuildHasherDefault<WordHasher>>;

/// The embedded catalog, prepared, with each combination rendered on first use.
struct Lazy {
    templates: &'static Templates<'static, 'static>,
    jobs: Vec<Job<'static, 'static>>,
    /// Instancetype and preference names: the job that renders each.
    instancetypes: Names,
    preferences: Names,
    rendered: Vec<OnceLock<Vec<(Object, Combination)>>>,
    /// What the catalog was built from, leaked to live as long as the process. Held here only
    /// so that it stays reachable from a static: a leak checker (the fuzz targets run under
    /// LeakSanitizer) then sees it as live, not lost.
    _sources: &'static [Source],
    _catalog: &'static Catalog<'static>,
}

impl Lazy {
    /// The objects of combination `job`, rendered on the first call.
    fn rendered(&self, job: usize) -> &[(Object, Combination)] {
        self.rendered[job].get_or_init(|| {
            // The shipped catalog borrows no parts: no notes.
            let notes = HashMap::default();
            match render_job(
                self.templates,
                &notes,
                &self.jobs[job],
                // Its objects are never reported on: where their fields are written is not
                // needed.
                None,
                &RenderOptions::default(),
            ) {
                Ok(objects) => objects,
                // The shipped catalog is covered by tests; failing here is a build defect.
                Err(e) => panic!("the embedded catalog does not render: {}", e[0]),
            }
        })
    }
}

/// The embedded catalog, once built.
static LAZY: OnceLock<Lazy> = OnceLock::new();

/// The embedded catalog, read, resolved and compiled once per process. What it is built from
/// lives as long as the process, as the objects handed out must.
///
/// Building it runs parallel steps (parsing, reading, compiling). A worker of a pool that waited
/// for those steps itself would take other jobs of its pool meanwhile, and one of them may look
/// the catalog up too: it would then wait for the very initialization its own thread is in the
/// middle of, for ever (seen with `diff` and `vmi` at 8 threads, a few runs in a hundred). So a
/// worker has it built on a thread of its own, in a pool of its own of the same size, and waits
/// for that thread, which takes no jobs; other workers that look it up meanwhile wait for the
/// initialization the same way.
fn lazy() -> &'static Lazy {
    if let Some(lazy) = LAZY.get() {
        return lazy;
    }
    if rayon::current_thread_index().is_none() {
        return LAZY.get_or_init(build_lazy);
    }
    let threads = rayon::current_num_threads();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            LAZY.get_or_init(|| {
                match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
                    Ok(pool) => pool.install(build_lazy),
                    // Then the global pool runs the parallel steps: this thread is none of
                    // its workers either.
                    Err(_) => build_lazy(),
                }
            });
        });
    });
    LAZY.get_or_init(build_lazy)
}

/// Read, resolve and compile the embedded catalog.
fn build_lazy() -> Lazy {
    // The shipped catalog is covered by tests; failing here is a build defect, not bad
    // input.
    let fail = |message: String| -> ! { panic!("the embedded catalog does not render: {message}") };
    let sources: &'static [Source] = Box::leak(embedded_sources().into_boxed_slice());
    let loaded = load::parse_sources(sources);
    if let Some(d) = loaded.diagnostics.first() {
        fail(format!("{}: {}", d.origin, d.message));
    }
    let objects: &'static [Object] = Box::leak(loaded.objects.into_boxed_slice());
    let texts: foldhash::HashMap<&str, &'static str> = FILES.iter().copied().collect();
    let refs: Vec<&'static Object> = objects.iter().collect();
    let catalog: &'static Catalog<'static> = Box::leak(Box::new(
        Catalog::read(&refs, &texts).unwrap_or_else(|e| fail(e.to_string())),
    ));
    let env: &'static minijinja::Environment<'static> = Box::leak(Box::new(sandbox()));
    let prepared: &'static Prepared<'static, 'static, 'static> = Box::leak(Box::new(
        catalog.prepare(env).unwrap_or_else(|e| fail(e.to_string())),
    ));
    let jobs = prepared.jobs(catalog);
    let mut instancetypes = Names::default();
    let mut preferences = Names::default();
    for (i, job) in jobs.iter().enumerate() {
        let table = match job {
            Job::Size { .. } => &mut instancetypes,
            Job::Preference { .. } => &mut preferences,
        };
        table.entry(job.name()).or_insert(i);
    }
    Lazy {
        templates: &prepared.templates,
        rendered: jobs.iter().map(|_| OnceLock::new()).collect(),
        jobs,
        instancetypes,
        preferences,
        _sources: sources,
        _catalog: catalog,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::watch::Watch;

    /// The shipped catalog's leaves only look values up and test them: its combinations may
    /// render in parallel (a catalog watched for memory renders them one at a time).
    #[test]
    fn the_shipped_catalog_is_not_watched_for_memory() {
        assert_eq!(lazy().templates.watch(), Watch::Time);
    }
}

//! Loading what every command needs: the user's objects, the extra catalogs, the embedded
//! catalog and the cluster profile, and the resolution index over them.

use std::path::PathBuf;

use serde_json::Value;

use crate::cli::ResolveArgs;
use crate::diagnostic::Diagnostic;
use crate::error::{Error, Result};
use crate::kubevirt::profile::ClusterProfile;
use crate::load::deferred::DeferredVms;
use crate::load::{self, Loaded, Source};
use crate::model::Object;
use crate::render::{self, RenderOptions};
use crate::resolve::Index;

/// Everything loaded for one run.
#[derive(Debug, Default)]
pub struct Inputs {
    /// The objects of the PATH arguments, in input order.
    pub objects: Vec<Object>,
    /// The objects of `--catalog` paths.
    pub catalog: Vec<Object>,
    /// The files of `--catalog` paths, as read.
    pub catalog_sources: Vec<Source>,
    /// Whether the embedded catalog takes part in resolution.
    pub embedded: bool,
    /// Parse findings.
    pub diagnostics: Vec<Diagnostic>,
    /// The cluster profile.
    pub profile: ClusterProfile,
}

impl Inputs {
    /// Read and parse the inputs.
    pub fn load(paths: &[PathBuf], resolve: &ResolveArgs) -> Result<Inputs> {
        let sources = load::read_inputs(paths, None, &resolve.exclude()?)?;
        let loaded = load::parse_sources(&sources);
        Inputs::from_loaded(paths, &sources, loaded, resolve)
    }

    /// [`Inputs::load`] with the files of `paths` already read (`sources`), leaving the
    /// VirtualMachine documents unparsed (see [`DeferredVms`]): nothing resolves against a VM,
    /// so a command that takes each VM on its own need not hold the trees of all of them.
    pub fn load_deferring_vms<'s>(
        paths: &[PathBuf],
        sources: &'s [Source],
        resolve: &ResolveArgs,
    ) -> Result<(Inputs, DeferredVms<'s>)> {
        let (loaded, deferred) = load::deferred::load_deferring_vms(sources);
        let inputs = Inputs::from_loaded(paths, sources, loaded, resolve)?;
        Ok((inputs, deferred))
    }

    /// [`Inputs::load`] with the files of `paths` already read (`sources`) and parsed
    /// (`loaded`).
    pub fn from_loaded(
        paths: &[PathBuf],
        sources: &[Source],
        loaded: Loaded,
        resolve: &ResolveArgs,
    ) -> Result<Inputs> {
        let Loaded {
            mut objects,
            mut diagnostics,
        } = loaded;
        let mut inputs = Inputs::resolution(resolve)?;
        let options = RenderOptions {
            sources,
            ..inputs.render_options()
        };
        let read = objects.len();
        crate::krm::engine::render_families(&mut objects, &options, &mut diagnostics);
        // In a package an earlier `kpt fn render` wrote into, the files it wrote are the output
        // of the catalog documents rendered again here, not second definitions.
        if objects.len() > read {
            let (before, rendered) = objects.split_at(read);
            let walked: Vec<PathBuf> = paths.iter().filter(|p| p.is_dir()).cloned().collect();
            // One answer per object read; the rendered ones after them are kept.
            let judge_stale = !diagnostics.iter().any(Diagnostic::is_error);
            let read_back = crate::krm::engine::read_back(before, rendered, &walked, judge_stale);
            diagnostics.extend(read_back.stale);
            let mut superseded = read_back.superseded.into_iter();
            objects.retain(|_| !superseded.next().unwrap_or(false));
        }
        inputs.objects = objects;
        inputs.diagnostics.splice(0..0, diagnostics);
        Ok(inputs)
    }

    /// Only what resolution needs besides the PATH arguments: `--catalog` objects, the embedded
    /// catalog switch and the cluster profile (`objects` stays empty).
    pub fn resolution(resolve: &ResolveArgs) -> Result<Inputs> {
        let sources = if resolve.catalogs.is_empty() {
            Vec::new()
        } else {
            load::read_option_inputs(&resolve.catalogs, &resolve.exclude()?, "--catalog")?
        };
        let mut inputs = Inputs::with_catalogs(sources, !resolve.no_default_catalog);
        if let Some(file) = &resolve.cluster_config {
            let (profile, warnings) = load_profile(file)?;
            inputs.profile = profile;
            inputs.diagnostics.extend(warnings);
        }
        Ok(inputs)
    }

    /// What resolution needs from catalog files already read (`sources`), their families and
    /// preferences rendered, with the embedded catalog or without it (`embedded`).
    pub fn with_catalogs(sources: Vec<Source>, embedded: bool) -> Inputs {
        let mut inputs = Inputs {
            embedded,
            ..Inputs::default()
        };
        if sources.is_empty() {
            return inputs;
        }
        let loaded = load::parse_sources(&sources);
        let mut catalog = loaded.objects;
        inputs.diagnostics.extend(loaded.diagnostics);
        let options = RenderOptions {
            sources: &sources,
            shipped_parts: embedded,
            ..RenderOptions::default()
        };
        crate::krm::engine::render_families(&mut catalog, &options, &mut inputs.diagnostics);
        inputs.catalog = catalog;
        inputs.catalog_sources = sources;
        inputs
    }

    /// How to render catalog families and preferences among the inputs: a part they do not
    /// define comes from the `--catalog` files, then (unless `--no-default-catalog`) from the
    /// shipped catalog.
    pub fn render_options(&self) -> RenderOptions<'_> {
        RenderOptions {
            more_parts: &self.catalog,
            more_sources: &self.catalog_sources,
            shipped_parts: self.embedded,
            ..RenderOptions::default()
        }
    }

    /// The resolution index: inputs, then `--catalog`, then the embedded catalog.
    pub fn index(&self) -> Index<'_> {
        self.index_with(&self.objects)
    }

    /// The resolution index with `objects` in place of [`Inputs::objects`].
    pub fn index_with<'a>(&'a self, objects: impl IntoIterator<Item = &'a Object>) -> Index<'a> {
        let mut index = Index::new();
        index.add_layer(objects);
        index.add_layer(&self.catalog);
        if self.embedded {
            index.set_fallback(render::installed_lookup, render::installed_names);
        }
        index
    }
}

/// The warnings about `profile`, read from `--cluster-config FILE`: its unknown fields.
fn profile_warnings(
    profile: &ClusterProfile,
    file: &std::path::Path,
    text: &str,
) -> Vec<Diagnostic> {
    let messages = profile.unknown_field_messages();
    if messages.is_empty() {
        return Vec::new();
    }
    // The lines are those of the document holding the KubeVirt resource, else the first.
    let chunks = load::split::split(text);
    let document = chunks
        .iter()
        .find(|c| c.text.lines().any(|l| l.trim_end() == "kind: KubeVirt"))
        .or_else(|| chunks.first());
    profile
        .unknown_fields
        .iter()
        .zip(messages)
        .map(|((field, _), message)| {
            let line = document.and_then(|c| {
                // A bare configuration (no KubeVirt resource around it) has the field at its
                // top level.
                let wrapped = c.text.lines().any(|l| l.trim_end() == "spec:");
                let field = match field.strip_prefix("spec.configuration.") {
                    Some(bare) if !wrapped => bare,
                    _ => field.as_str(),
                };
                load::locate::field_line(c.text, c.first_line, field)
            });
            Diagnostic::warning(
                crate::diagnostic::codes::BAD_CONFIG,
                crate::origin::Origin::new(file.display().to_string(), 0, line),
                message,
            )
        })
        .collect()
}

/// Read the cluster profile from `--cluster-config FILE`, with a warning for each field of
/// the configuration that KubeVirt does not know. The file is read once: it may be a pipe.
pub fn load_profile(file: &std::path::Path) -> Result<(ClusterProfile, Vec<Diagnostic>)> {
    let bytes = if file.as_os_str() == "-" {
        load::read_stdin("--cluster-config")?
    } else {
        load::read_whole(file).map_err(|source| {
            Error::Read {
                path: file.to_path_buf(),
                source,
            }
            .of_option("--cluster-config")
        })?
    };
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::Usage(format!(
            "--cluster-config {}: the file is not valid UTF-8",
            file.display()
        ))
    })?;
    let profile = read_profile(file, &text)?;
    let warnings = profile_warnings(&profile, file, &text);
    Ok((profile, warnings))
}

/// The cluster profile `text`, the contents of `file`, describes.
fn read_profile(file: &std::path::Path, text: &str) -> Result<ClusterProfile> {
    let usage = |msg: String| Error::Usage(format!("--cluster-config {}: {msg}", file.display()));
    // The file may hold a KubeVirt resource among other documents (or in a `List`, as
    // `kubectl get kubevirt -A -o yaml` prints it), or a bare configuration.
    let chunks = load::split::split(text);
    // Each document, with the text it was read from.
    let mut docs = Vec::new();
    for chunk in &chunks {
        let doc = load::yaml::parse_document(chunk.text).map_err(|e| {
            usage(format!(
                "line {}: {}",
                e.line
                    .map_or(chunk.first_line, |l| l + chunk.first_line - 1),
                e.message
            ))
        })?;
        let mut flat = Vec::new();
        flatten_lists(doc, 0, &mut flat);
        docs.extend(flat.into_iter().map(|doc| (doc, chunk)));
    }
    // The first field a message names (``spec.configuration.machineType` must be a string`,
    // `invalid `spec.configuration.imagePullPolicy`: …`) is found at its line.
    // A bare configuration holds it without `spec.configuration.` (or `spec.`).
    let at_line = |doc: &Value, chunk: &load::split::Chunk<'_>, message: &str| {
        let field = message
            .split_once('`')
            .and_then(|(_, rest)| rest.split_once('`'))
            .map(|(field, _)| field)
            .and_then(|field| {
                [
                    Some(field),
                    field.strip_prefix("spec."),
                    field.strip_prefix("spec.configuration."),
                ]
                .into_iter()
                .flatten()
                .find(|f| {
                    let keys: Vec<&str> = f.split('.').collect();
                    crate::model::path::get(doc, &keys).is_some()
                })
            });
        let line = field.and_then(|f| load::locate::field_line(chunk.text, chunk.first_line, f));
        let placed = match line {
            Some(line) => format!("line {line}: {message}"),
            None => message.to_string(),
        };
        (line, placed)
    };
    // Every error of the configuration at once, each at its line, in the order of the lines.
    let all_at_lines = |doc: &Value, chunk: &load::split::Chunk<'_>, messages: Vec<String>| {
        let mut placed: Vec<(Option<u32>, String)> =
            messages.iter().map(|m| at_line(doc, chunk, m)).collect();
        // Those without a line last.
        placed.sort_by_key(|(line, _)| line.unwrap_or(u32::MAX));
        let placed: Vec<String> = placed.into_iter().map(|(_, m)| m).collect();
        usage(placed.join("; "))
    };
    let kind = |doc: &Value| doc.get("kind").and_then(Value::as_str).map(str::to_owned);
    let resources: Vec<_> = docs
        .iter()
        .filter(|(d, _)| kind(d).as_deref() == Some("KubeVirt"))
        .collect();
    match resources.as_slice() {
        [] => {}
        [(kubevirt, chunk)] => {
            return ClusterProfile::read_kubevirt(kubevirt)
                .map_err(|m| all_at_lines(kubevirt, chunk, m));
        }
        // A cluster runs one KubeVirt; which of two a file means is not guessed.
        [first, second, ..] => {
            let place = |(doc, chunk): &(Value, &load::split::Chunk<'_>)| {
                let field = |f: &str| {
                    crate::model::path::get(doc, &["metadata", f])
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned()
                };
                let line = chunk.content_line.unwrap_or(chunk.first_line);
                format!("{}/{} at line {line}", field("namespace"), field("name"))
            };
            return Err(usage(format!(
                "{} KubeVirt resources ({}, {}{}); a cluster runs one, so keep only its own",
                match resources.len() {
                    2 => "two".to_owned(),
                    n => n.to_string(),
                },
                place(first),
                place(second),
                if resources.len() > 2 { ", …" } else { "" }
            )));
        }
    }
    match docs.as_slice() {
        [] => Err(usage("the file is empty".into())),
        [(doc, chunk)] => {
            ClusterProfile::read_document(doc).map_err(|m| all_at_lines(doc, chunk, m))
        }
        _ => Err(usage(format!(
            "no KubeVirt resource among the documents; {}",
            crate::kubevirt::profile::EXPECTED
        ))),
    }
}

/// `doc`, or the items of a `…List` (nested lists followed, as the loader does), appended to
/// `out`.
fn flatten_lists(doc: Value, depth: usize, out: &mut Vec<Value>) {
    let is_list = depth < 16
        && doc
            .get("kind")
            .and_then(Value::as_str)
            .is_some_and(|k| k.ends_with("List"))
        && doc.get("items").is_some_and(Value::is_array);
    if !is_list {
        out.push(doc);
        return;
    }
    if let Some(Value::Array(items)) = doc.get("items") {
        for item in items {
            flatten_lists(item.clone(), depth + 1, out);
        }
    }
}

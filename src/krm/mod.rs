//! kvrender as a KRM function (kpt, kustomize) and as a kustomize legacy exec plugin.
//!
//! Two wire formats, one engine ([`engine::process`], the stages `kvrender build` runs):
//!
//! - **ResourceList** ([`run_resource_list`]), the KRM Functions Specification: a
//!   `config.kubernetes.io/v1` (or `v1beta1`) `ResourceList` on stdin, the same on stdout, with
//!   every finding in `results` and exit code 1 when one is an error (the list is written
//!   first). This is what `kpt fn eval --exec`, a Kptfile `exec:` step and kustomize's exec KRM
//!   functions send.
//! - **Plain stream** ([`run_stream`]), kustomize's legacy exec plugins: the plugin's config
//!   file path in `argv[1]`, the resources as a YAML stream on stdin (empty for a generator), a
//!   YAML stream expected back; findings go to stderr, exit code 1 on errors.
//!
//! Malformed input (not a ResourceList, broken YAML, a bad functionConfig) is an error result
//! and exit code 1, never a crash. The function configuration is described in [`config`].

pub mod annotations;
pub mod config;
pub mod engine;
mod file_lines;
pub mod migrate;
pub mod renamed;
pub mod resource_list;

use std::collections::HashMap;
use std::sync::Arc;

use rayon::prelude::*;
use serde_json::Value;

use crate::diagnostic::{Diagnostic, codes};
use crate::emit;
use crate::error::Result;
use crate::load::{self, split, yaml};
use crate::model::Object;
use crate::origin::Origin;

use config::FnConfig;
use engine::AsRead;
use engine::Placement;

/// What a function run produced.
#[derive(Debug, Default)]
pub struct FnOutput {
    /// The ResourceList (or, for legacy plugins, the YAML stream) for stdout.
    pub stdout: String,
    /// The findings, for stderr.
    pub diagnostics: Vec<Diagnostic>,
    /// 0, or 1 when a finding is an error.
    pub exit: u8,
}

impl FnOutput {
    fn finish(stdout: String, diagnostics: Vec<Diagnostic>) -> FnOutput {
        let exit = u8::from(diagnostics.iter().any(Diagnostic::is_error));
        FnOutput {
            stdout,
            diagnostics,
            exit,
        }
    }
}

/// The options the findings of the shared checks name, and the settings of the function's
/// configuration that do the same.
const OPTIONS_AS_SETTINGS: [(&str, &str); 2] = [
    ("`--catalog`", "`catalogs`"),
    ("`--no-default-catalog`", "`defaultCatalog: false`"),
];

/// Name, in the findings of a function run, the configuration's settings where the shared
/// checks name `kvrender`'s options: a function is configured, not given options.
fn in_configuration_terms(diagnostics: &mut [Diagnostic]) {
    for d in diagnostics {
        for (option, setting) in OPTIONS_AS_SETTINGS {
            if d.message.contains(option) {
                d.message = d.message.replace(option, setting);
            }
        }
    }
}

/// A problem with the input as a whole (no object, no file).
fn input_error(origin: &str, message: String) -> Diagnostic {
    Diagnostic::error(codes::NOT_AN_OBJECT, Origin::new(origin, 0, None), message)
}

/// A problem with the function's configuration.
fn config_error(origin: &str, line: Option<u32>, message: String) -> Diagnostic {
    Diagnostic::error(codes::BAD_CONFIG, Origin::new(origin, 0, line), message)
}

/// A function configuration read from a file (`kvrender fn CONFIG`; the file kustomize names
/// for a legacy plugin).
pub struct ConfigFile<'a> {
    /// The file as findings name it.
    pub path: &'a str,
    /// Its text.
    pub text: &'a str,
    /// What [`parse_config_file`] read from it.
    pub value: Value,
}

/// Where a function configuration was written, for findings about it to give a line: its
/// file's text, or the ResourceList that holds it under `functionConfig`.
#[derive(Clone, Copy)]
struct ConfigText<'a> {
    text: &'a str,
    under: Option<&'a str>,
}

impl ConfigText<'_> {
    /// The line of the field at `path` (keys from the configuration's top), or of the nearest
    /// field above it that is written.
    fn line(self, path: &[String]) -> Option<u32> {
        let text = self.text.strip_prefix('\u{feff}').unwrap_or(self.text);
        let chunk = split::split(text).into_iter().next()?;
        let steps: Vec<load::locate::Step<'_>> = self
            .under
            .into_iter()
            .chain(path.iter().map(String::as_str))
            .map(load::locate::Step::Key)
            .collect();
        load::locate::field_line_of(chunk.text, chunk.first_line, &steps)
    }
}

/// The files an earlier `kvrender build -o` wrote into the folders of a package (those its
/// marker lists, see [`crate::load::walk::OUTPUT_MARKER`]), each folder's marker read once.
#[derive(Default)]
struct EarlierOutput(HashMap<std::path::PathBuf, Option<std::collections::BTreeSet<String>>>);

impl EarlierOutput {
    /// Whether `item` is such a file: as the walks of `build` and `validate` leave those out,
    /// the function passes it through unread rather than read it as a second definition of
    /// what it renders. kpt names the package only in `kpt fn render`.
    fn holds(&mut self, item: &Value) -> bool {
        let (Some(path), Some(package)) = (
            annotations::file_path(item),
            annotations::package_path(item),
        ) else {
            return false;
        };
        let path = std::path::Path::new(&path);
        // The package's own folder is read whole, as a walk reads the folder it starts from.
        let Some(folder) = path.parent().filter(|f| !f.as_os_str().is_empty()) else {
            return false;
        };
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            return false;
        };
        let dir = std::path::Path::new(package).join(folder);
        self.0
            .entry(dir)
            .or_insert_with_key(|dir| crate::emit::files::recorded_output(dir))
            .as_ref()
            .is_some_and(|recorded| recorded.contains(name))
    }
}

/// The file a `functionConfig` was read from, as kpt names it (`config.kubernetes.io/path`,
/// relative to the package at `internal.config.kubernetes.io/package-path`), and its text:
/// when it is a file of at most [`crate::commands::fn_cmd::MAX_INPUT`] bytes whose first
/// document has the configuration's `apiVersion`, `kind` and name. The path is given as kpt
/// names it.
fn config_file_of(function_config: &Value) -> Option<(String, String)> {
    let path = annotations::file_path(function_config)?;
    let package = annotations::package_path(function_config)?;
    let file = std::path::Path::new(package).join(&path);
    let meta = std::fs::metadata(&file).ok()?;
    if !meta.is_file() || meta.len() > crate::commands::fn_cmd::MAX_INPUT {
        return None;
    }
    let text = std::fs::read_to_string(&file).ok()?;
    let parsed = parse_config_file(&path, &text).ok()?;
    let identity = |v: &Value| {
        (
            v.get("apiVersion").cloned(),
            v.get("kind").cloned(),
            crate::model::path::get(v, &["metadata", "name"]).cloned(),
        )
    };
    (identity(&parsed) == identity(function_config)).then_some((path, text))
}

/// kpt hands over every file of a package that looks like a resource, the patches of VMs a
/// kustomization applies among them: for each item, whether a kustomization item of its
/// package names its file as a patch or another input rather than a resource (see
/// [`load::kustomize`]). Such an item is no object of the function's.
fn kustomize_inputs(items: &[Value]) -> Vec<bool> {
    use std::path::{Path, PathBuf};
    fn file_of(item: &Value) -> Option<(&str, PathBuf)> {
        let path = annotations::file_path(item)?;
        let package = annotations::package_path(item).unwrap_or_default();
        Some((package, load::kustomize::normalize(Path::new(&path))))
    }
    let kustomizations: Vec<(&str, PathBuf, load::kustomize::Named)> = items
        .iter()
        .filter_map(|item| {
            let (package, file) = file_of(item)?;
            let name = file.file_name()?.to_str()?;
            if !load::kustomize::is_kustomization_name(name) {
                return None;
            }
            let folder = file.parent().unwrap_or(Path::new("")).to_path_buf();
            let named = load::kustomize::named(&folder, item);
            Some((package, folder, named))
        })
        .collect();
    items
        .iter()
        .map(|item| {
            if kustomizations.is_empty() {
                return false;
            }
            let Some((package, file)) = file_of(item) else {
                return false;
            };
            let holding = kustomizations
                .iter()
                .filter(|(p, folder, _)| *p == package && file.starts_with(folder))
                .map(|(_, _, named)| named);
            load::kustomize::names_as_input(holding, &file)
        })
        .collect()
}

/// The warnings about fields of the config's `clusterConfig` KubeVirt's configuration does
/// not have, as `--cluster-config` gives them. `value` is the configuration as written, and
/// `written` where.
fn cluster_config_warnings(
    config: &FnConfig,
    origin: &str,
    value: Option<&Value>,
    written: ConfigText<'_>,
) -> Vec<Diagnostic> {
    let messages = config.profile.unknown_field_messages();
    if messages.is_empty() {
        return Vec::new();
    }
    let line = written.line(&FnConfig::path_to(value, "clusterConfig"));
    messages
        .into_iter()
        .map(|m| {
            Diagnostic::warning(
                codes::BAD_CONFIG,
                Origin::new(origin, 0, line),
                format!("functionConfig `clusterConfig`: {m}"),
            )
        })
        .collect()
}

/// Run on the text of a ResourceList. `config` (a function config file) replaces the list's
/// `functionConfig` when given; findings about it name the file.
///
/// # Errors
/// Only when the output cannot be serialized; every input problem is a result.
pub fn run_resource_list(input: &str, config: Option<&ConfigFile<'_>>) -> Result<FnOutput> {
    let list = match resource_list::parse(input) {
        Ok(list) => list,
        Err(e) => {
            return failed_list(Diagnostic::error(
                e.code,
                Origin::new("-", 0, e.line),
                e.message,
            ));
        }
    };
    // kpt hands over a `configPath` file's document with the file's path and package: findings
    // about it are placed in that file, when it can be read and still holds that document.
    let own_file = match config {
        None => list.function_config.as_ref().and_then(config_file_of),
        Some(_) => None,
    };
    let config_origin = match (config, &own_file) {
        (Some(c), _) => c.path,
        (None, Some((path, _))) => path.as_str(),
        (None, None) => "-",
    };
    let written = match (config, &own_file) {
        (Some(c), _) => ConfigText {
            text: c.text,
            under: None,
        },
        (None, Some((_, text))) => ConfigText { text, under: None },
        (None, None) => ConfigText {
            text: input,
            under: Some("functionConfig"),
        },
    };
    let config = config.map(|c| &c.value);
    let not_objects = not_objects(&list);
    let config = config.or(list.function_config.as_ref());
    let fn_config = match FnConfig::parse(config) {
        Ok(c) => c,
        Err(problems) => {
            let diags = problems
                .into_iter()
                .map(|p| config_error(config_origin, written.line(&p.path), p.message))
                .chain(not_objects.into_iter().flatten())
                .collect();
            return Ok(unchanged(list, diags));
        }
    };
    let cluster_warnings = cluster_config_warnings(&fn_config, config_origin, config, written);
    // Files of the package that are no Kubernetes objects go round the engine, unchanged, and
    // so do the patches and other inputs a kustomization of the package names, and the items
    // that are not objects at all (each with its error).
    let kustomize_inputs = kustomize_inputs(&list.items);
    let mut inputs = Vec::with_capacity(list.items.len());
    let mut raw_items = Vec::with_capacity(list.items.len());
    let mut item_lines = Vec::with_capacity(list.items.len());
    let mut foreign = Vec::new();
    let mut refused = Vec::new();
    let mut earlier = EarlierOutput::default();
    for ((((item, raw), line), kustomize_input), not_object) in list
        .items
        .into_iter()
        .zip(list.raw_items)
        .zip(list.item_lines)
        .zip(kustomize_inputs)
        .zip(not_objects)
    {
        if let Some(d) = not_object {
            refused.push(d);
            foreign.push((item, raw));
        } else if kustomize_input || resource_list::is_foreign(&item) || earlier.holds(&item) {
            foreign.push((item, raw));
        } else {
            inputs.push(item);
            raw_items.push(raw);
            item_lines.push(line);
        }
    }
    // The items are handed to the engine, not copied: it says which of its output items are
    // inputs as they were read, and those are written back from their text.
    let files = file_lines::PackageFiles::of(&inputs);
    let items: Vec<Object> = inputs
        .into_par_iter()
        .zip(&raw_items)
        .zip(&item_lines)
        .enumerate()
        .map(|(i, ((v, raw), line))| stdin_item(v, i, raw.as_deref(), *line, &files))
        .collect();
    // `build` reads a `List` document as its items; an item of a ResourceList is one object,
    // and what a List item holds is passed on unread: say so rather than say nothing.
    let lists: Vec<Diagnostic> = refused
        .into_iter()
        .chain(items.iter().filter(|o| load::is_list(o)).map(|o| {
            Diagnostic::warning(
                codes::NOT_AN_OBJECT,
                o.origin.clone(),
                format!(
                    "a {} item: the function passes it on without reading its items (no \
                     VirtualMachine in it is expanded or checked); write one object per document",
                    o.kind_str()
                ),
            )
            .with_object(o.object_ref())
        }))
        .collect();
    let mut subpackages = SubpackageFiles::of(&items);
    let (mut entries, mut diagnostics) = if fn_config.migrate {
        let migrated = migrate::migrate(&items, &fn_config, Placement::Files);
        let mut diagnostics = cluster_warnings;
        diagnostics.extend(lists);
        diagnostics.extend(migrated.diagnostics);
        let entries: Vec<String> = migrated
            .items
            .into_iter()
            .map(|item| match item {
                migrate::Item::Kept(i) => {
                    resource_list::entry(raw_items[i].clone(), &items[i].value)
                }
                migrate::Item::New(value) => resource_list::entry(None, &value),
            })
            .collect();
        (entries, diagnostics)
    } else {
        // A catalog whose templates pass the render watch's budget ends the process from the
        // watch: the answer is then a list whose result is that error, as for an input that
        // cannot be read at all.
        let api_version = list.api_version.clone();
        let _answering = crate::render::answer_when_stopped(move |d| {
            resource_list::write(&api_version, Vec::new(), resource_list::results(d))
        });
        let mut processed = engine::process(items, &fn_config, Placement::Files);
        subpackages.note_rendered(&processed.rendered_in_subpackages);
        processed
            .diagnostics
            .splice(0..0, cluster_warnings.into_iter().chain(lists));
        // Each output item becomes its entry of the output list, and its tree is dropped there.
        let count = processed.items.len();
        let mut printed = processed.printed;
        printed.resize(count, None);
        let mut as_read = processed.as_read;
        as_read.resize(count, None);
        let entries: Vec<String> = processed
            .items
            .into_par_iter()
            .zip(printed)
            .zip(as_read)
            .map(|((value, printed), as_read)| match printed {
                Some(entry) => entry,
                None => entry_of(value, as_read, &raw_items),
            })
            .collect();
        (entries, processed.diagnostics)
    };
    subpackages.relocate(&mut diagnostics);
    in_configuration_terms(&mut diagnostics);
    let results = diagnostics
        .iter()
        .flat_map(resource_list::results)
        .collect();
    entries.extend(
        foreign
            .into_iter()
            .map(|(value, raw)| resource_list::entry(raw, &value)),
    );
    let out = resource_list::write_entries(&list.api_version, &entries, results);
    Ok(FnOutput::finish(out, diagnostics))
}

/// Under `kpt fn render`, the items of a subpackage name their files relative to the
/// subpackage (`vm.yaml` for `sub/vm.yaml`), beside the subpackage's directory in full
/// (`internal.config.kubernetes.io/package-path`). Findings name every file relative to the
/// package the step runs on, as `kpt fn eval` has them: `sub/vm.yaml`.
#[derive(Default)]
struct SubpackageFiles {
    /// The directory of the package the step runs on, with a trailing `/`.
    outermost: Option<String>,
    /// (file, index in it, kind, name) of a subpackage's item, to the subpackage's directory
    /// relative to the outermost one; `None` where two items of different packages share the
    /// key.
    items: HashMap<(String, usize, String, String), Option<String>>,
}

impl SubpackageFiles {
    fn of(items: &[Object]) -> SubpackageFiles {
        let Some(outermost) = engine::outermost_package(items) else {
            return SubpackageFiles::default();
        };
        let mut files = SubpackageFiles {
            outermost: Some(format!("{}/", outermost.trim_end_matches('/'))),
            items: HashMap::new(),
        };
        for o in items {
            if let Some(package) = annotations::package_path(&o.value) {
                files.note(
                    (
                        o.origin.path.to_string(),
                        o.origin.index,
                        o.kind_str().to_string(),
                        o.name().to_string(),
                    ),
                    package,
                );
            }
        }
        files
    }

    /// Note the objects rendered from the catalogs of subpackages: a finding about one of them
    /// placed at its catalog document names the subpackage's file.
    fn note_rendered(&mut self, rendered: &[engine::RenderedIn]) {
        for r in rendered {
            let key = (r.file.clone(), r.index, r.kind.clone(), r.name.clone());
            self.note(key, &r.package);
        }
    }

    /// Note that the object of `key` is in the package at `package`: a subpackage's
    /// directory relative to the outermost package, or nothing where another object of the
    /// same key is in another package.
    fn note(&mut self, key: (String, usize, String, String), package: &str) {
        let Some(outermost) = &self.outermost else {
            return;
        };
        let relative = format!("{}/", package.trim_end_matches('/'))
            .strip_prefix(outermost.as_str())
            .map(|dir| dir.trim_end_matches('/').to_string())
            .filter(|dir| !dir.split('/').any(|c| c == ".." || c == "."));
        match self.items.entry(key) {
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(relative);
            }
            std::collections::hash_map::Entry::Occupied(mut e) => {
                if *e.get() != relative {
                    e.insert(None);
                }
            }
        }
    }

    /// Name the files of `diagnostics` relative to the outermost package.
    fn relocate(&self, diagnostics: &mut [Diagnostic]) {
        let Some(outermost) = &self.outermost else {
            return;
        };
        for d in diagnostics {
            let object = d.object.as_ref();
            if let Some(path) = self.relocated(outermost, &d.origin, object) {
                d.origin.path = path.into();
            }
            // The first definition a duplicate's message names: the same kind and name.
            if let Some(path) = d
                .related
                .as_deref()
                .and_then(|related| self.relocated(outermost, related, object))
            {
                d.rename_related(&path);
            }
        }
    }

    /// The file of `origin` relative to the outermost package, where it is a subpackage's:
    /// a catalog document (named in full when rendered) or an item of `object`.
    fn relocated(
        &self,
        outermost: &str,
        origin: &Origin,
        object: Option<&crate::origin::ObjectRef>,
    ) -> Option<String> {
        if let Some(rest) = origin.path.strip_prefix(outermost) {
            return Some(rest.to_string());
        }
        let object = object?;
        let key = (
            origin.path.to_string(),
            origin.index,
            object.kind.clone(),
            object.name.clone(),
        );
        let dir = self.items.get(&key)?.as_deref().filter(|d| !d.is_empty())?;
        Some(format!("{dir}/{}", origin.path))
    }
}

/// Item `position` of a ResourceList read on stdin, as an object. An item that names its file
/// (kpt's path annotations) is said to come from there, with the lines of its document in
/// the file when `kpt fn render` names its package and the file still holds it (see
/// [`file_lines`]), else with no line: the file on disk may not be what an earlier function in
/// the pipeline handed on. Any other item is said to come
/// from stdin, at the line of the input where its entry begins, with the entry's text for the
/// lines of its fields.
fn stdin_item(
    value: Value,
    position: usize,
    raw: Option<&str>,
    line: Option<u32>,
    files: &file_lines::PackageFiles,
) -> Object {
    let origin = annotations::origin_of(&value, position);
    if origin.path.as_ref() != "-" {
        return files
            .placed(value, &origin)
            .unwrap_or_else(|value| Object::new(value, origin));
    }
    let object = Object::new(value, origin.at_line(line));
    match (raw, line) {
        (Some(text), Some(line)) => object.with_entry_source(Arc::from(text), line),
        _ => object,
    }
}

/// For each item of `list`, the error when it is not a Kubernetes object (see
/// [`resource_list::item_problem`]), placed as a finding on the item would be (see
/// [`stdin_item`]).
fn not_objects(list: &resource_list::ResourceList) -> Vec<Option<Diagnostic>> {
    list.items
        .iter()
        .zip(&list.item_lines)
        .enumerate()
        .map(|(i, (item, line))| {
            let problem = resource_list::item_problem(item)?;
            let origin = annotations::origin_of(item, i);
            let origin = if origin.path.as_ref() == "-" {
                origin.at_line(*line)
            } else {
                origin
            };
            Some(Diagnostic::error(
                codes::NOT_AN_OBJECT,
                origin,
                format!("items[{i}]: {problem}"),
            ))
        })
        .collect()
}

/// The answer when the function does not run on `list` (its configuration is wrong): every
/// item as it came, from its own text where it has one (as an untouched item is written
/// back), with `diagnostics` as the results.
fn unchanged(list: resource_list::ResourceList, diagnostics: Vec<Diagnostic>) -> FnOutput {
    let entries: Vec<String> = list
        .items
        .iter()
        .zip(list.raw_items)
        .map(|(item, raw)| resource_list::entry(raw, item))
        .collect();
    let results = diagnostics
        .iter()
        .flat_map(resource_list::results)
        .collect();
    let out = resource_list::write_entries(&list.api_version, &entries, results);
    FnOutput::finish(out, diagnostics)
}

/// An empty ResourceList whose one result is `d`.
fn failed_list(d: Diagnostic) -> Result<FnOutput> {
    let results = resource_list::results(&d);
    let out = resource_list::write(resource_list::V1, Vec::new(), results);
    Ok(FnOutput::finish(out, vec![d]))
}

/// The answer to a ResourceList input that cannot be read at all (e.g. too large): an empty
/// list with `message` as its error result.
///
/// # Errors
/// Only when the output cannot be serialized.
pub fn failed_resource_list(message: String) -> Result<FnOutput> {
    failed_list(input_error("-", message))
}

/// The answer to a ResourceList that is not text (not valid UTF-8): an empty list with
/// `message` as its error result, a YAML syntax error as for a file.
///
/// # Errors
/// Only when the output cannot be serialized.
pub fn undecodable_resource_list(message: String) -> Result<FnOutput> {
    failed_list(Diagnostic::error(
        codes::YAML_SYNTAX,
        Origin::new("-", 0, None),
        message,
    ))
}

/// The answer to a ResourceList when the function configuration file kvrender was given
/// (`kvrender fn CONFIG`, shown as `config_path`) cannot be read or parsed: the items
/// unchanged and `message` as an error result, as for a configuration with a bad value, so
/// that kpt shows it.
///
/// # Errors
/// Only when the output cannot be serialized.
pub fn config_file_error(input: &str, config_path: &str, message: String) -> Result<FnOutput> {
    let diagnostic = config_error(config_path, None, message);
    match resource_list::parse(input) {
        Ok(list) => {
            let diagnostics = std::iter::once(diagnostic)
                .chain(not_objects(&list).into_iter().flatten())
                .collect();
            Ok(unchanged(list, diagnostics))
        }
        Err(_) => failed_list(diagnostic),
    }
}

/// The answer to a legacy plugin's stream that cannot be read at all: nothing on stdout,
/// `message` as an error.
pub fn failed_stream(message: String) -> FnOutput {
    FnOutput::finish(String::new(), vec![input_error("-", message)])
}

/// The entry of an output item the engine did not print: the input's text when the item is
/// an input as it was read, so its comments and style survive (with the local-configuration
/// mark added when the engine added it); otherwise the value, printed.
fn entry_of(value: Value, as_read: Option<AsRead>, raw_items: &[Option<String>]) -> String {
    let text = as_read.and_then(|a| {
        let raw = raw_items.get(a.input)?.as_deref()?;
        if !a.marked_local {
            return Some(raw.to_string());
        }
        resource_list::raw_with_annotation(raw, annotations::LOCAL_CONFIG, "true")
            .filter(|text| resource_list::raw_matches(text, &value))
    });
    resource_list::entry(text, &value)
}

/// Parse a function config file (the first document that is a mapping).
///
/// # Errors
/// A message naming the file when it is empty or not valid YAML.
pub fn parse_config_file(path: &str, text: &str) -> std::result::Result<Value, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let chunk = split::split(text)
        .into_iter()
        .next()
        .ok_or_else(|| format!("the function config `{path}` is empty"))?;
    yaml::parse_document_with(chunk.text, resource_list::ITEMS).map_err(|e| {
        format!(
            "the function config `{path}` is not valid YAML{}: {}",
            e.line
                .map(|l| format!(" at line {}", l + chunk.first_line - 1))
                .unwrap_or_default(),
            e.message
        )
    })
}

/// Where an object of a legacy plugin's stream that carries no origin annotation is said to
/// come from.
pub const STREAM: &str = "<kustomize build>";

/// Move the findings about the documents of a legacy plugin's stream `input` that kustomize
/// read from files (`by_origin`: by position in the stream, the file its origin annotation
/// names) to the line of their field in that file, relative to the directory kvrender runs in
/// (the kustomization's); what cannot be moved names the file only.
fn to_origin_files(
    diagnostics: &mut [Diagnostic],
    input: &str,
    by_origin: &HashMap<usize, Origin>,
) {
    if by_origin.is_empty() {
        return;
    }
    let stream = [load::Source {
        path: Arc::from("-"),
        bytes: input.as_bytes().to_vec(),
    }];
    load::built_from::map_to_sources(diagnostics, &stream, Some(std::path::Path::new(".")));
    for d in diagnostics {
        if &*d.origin.path == "-"
            && let Some(origin) = by_origin.get(&d.origin.index)
        {
            d.origin = origin.clone();
        }
    }
}

/// Run as a kustomize legacy exec plugin: `config` is the plugin's configuration (the file
/// kustomize passes in `argv[1]`, named `config_path` in findings), `input` the resources as a
/// YAML stream (empty for a generator). The output is a YAML stream.
///
/// # Errors
/// Only when the output cannot be serialized.
pub fn run_stream(config: &ConfigFile<'_>, input: &str) -> Result<FnOutput> {
    let config_path = config.path;
    let written = ConfigText {
        text: config.text,
        under: None,
    };
    let fn_config = match FnConfig::parse(Some(&config.value)) {
        Ok(c) => c,
        Err(problems) => {
            let diags = problems
                .into_iter()
                .map(|p| config_error(config_path, written.line(&p.path), p.message))
                .collect();
            return Ok(FnOutput::finish(String::new(), diags));
        }
    };
    let loaded = load::parse_text(&Arc::from("-"), input);
    let mut diagnostics = loaded.diagnostics;
    diagnostics.extend(cluster_config_warnings(
        &fn_config,
        config_path,
        Some(&config.value),
        written,
    ));
    // kustomize runs a legacy plugin in the directory of the kustomization that lists it, and
    // its origin annotations are relative to that directory: a finding about an object one
    // names moves to the line of the file it came from, as `--built-from .` would move it.
    // Until then the object keeps its place in the stream; what cannot be moved (a remote
    // base, a file not found), and a catalog document, falls back to the file the annotation
    // names, without a line.
    let mut by_origin: HashMap<usize, Origin> = HashMap::new();
    let items: Vec<Object> = loaded
        .objects
        .into_iter()
        .map(|mut o| {
            // A catalog document's findings (about what it renders) keep the file only: its
            // fields are not the rendered object's.
            let from_origin = !crate::render::is_catalog_kind(&o)
                && annotations::annotations(&o.value).is_some_and(|a| {
                    a.contains_key(annotations::ORIGIN)
                        && !a.contains_key(annotations::PATH)
                        && !a.contains_key(annotations::LEGACY_PATH)
                });
            match annotations::file_path(&o.value) {
                Some(p) => {
                    // The stream's line numbers mean nothing in the named file.
                    let file = Origin::new(p, annotations::file_index(&o.value).unwrap_or(0), None);
                    if from_origin {
                        by_origin.insert(o.origin.index, file);
                        o.origin = Origin::new("-", o.origin.index, None);
                    } else {
                        o.origin = file;
                    }
                }
                // Nor anywhere else: kustomize's stream is no file the user has. Findings then
                // name the object only.
                None => o.origin = Origin::new(STREAM, o.origin.index, None),
            }
            o.source = None;
            o
        })
        .collect();
    if diagnostics.iter().any(Diagnostic::is_error) {
        // Broken input: say so and give nothing back, so the build stops here.
        crate::diagnostic::sort(&mut diagnostics);
        return Ok(FnOutput::finish(String::new(), diagnostics));
    }
    if fn_config.migrate {
        let migrated = migrate::migrate(&items, &fn_config, Placement::Stream);
        diagnostics.extend(migrated.diagnostics);
        to_origin_files(&mut diagnostics, input, &by_origin);
        crate::diagnostic::sort(&mut diagnostics);
        let values: Vec<Value> = migrated
            .items
            .into_iter()
            .map(|item| match item {
                migrate::Item::Kept(i) => items[i].value.clone(),
                migrate::Item::New(value) => value,
            })
            .collect();
        return Ok(FnOutput::finish(emit::yaml_stream(&values), diagnostics));
    }
    let processed = engine::process(items, &fn_config, Placement::Stream);
    diagnostics.extend(processed.diagnostics);
    in_configuration_terms(&mut diagnostics);
    to_origin_files(&mut diagnostics, input, &by_origin);
    crate::diagnostic::sort(&mut diagnostics);
    let out = emit::yaml_stream_parts_printed(&processed.items, processed.printed).concat();
    Ok(FnOutput::finish(out, diagnostics))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` as the function config file `plugin.yaml`.
    fn config_file(text: &'static str) -> ConfigFile<'static> {
        ConfigFile {
            path: "plugin.yaml",
            text,
            value: parse_config_file("plugin.yaml", text).unwrap(),
        }
    }

    const LIST: &str = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- apiVersion: instancetype.kubevirt.io/v1beta1\n  kind: VirtualMachineClusterInstancetype\n  metadata:\n    name: s\n    annotations: {config.kubernetes.io/path: s.yaml, config.kubernetes.io/index: '0'}\n  spec: {cpu: {guest: 2}, memory: {guest: 2Gi}}\n- apiVersion: kubevirt.io/v1\n  kind: VirtualMachine\n  metadata: {name: vm, namespace: ns}\n  spec:\n    instancetype: {name: s}\n    template: {spec: {domain: {cpu: {sockets: 4}, devices: {}}}}\nfunctionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  data: {expand: replace, severity: error}\n";

    /// In a legacy plugin's stream, an object without origin annotations is named by itself:
    /// the stream's line numbers are no file's; with annotations, the file is named.
    #[test]
    fn stream_findings_name_no_line_of_the_stream() {
        let config =
            config_file("apiVersion: kvrender.io/v1alpha1\nkind: KVRender\nmetadata: {name: x}\n");
        let vm = |annotations: &str| {
            format!(
                "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterInstancetype\n\
                 metadata: {{name: s}}\nspec: {{cpu: {{guest: 2}}, memory: {{guest: 2Gi}}}}\n---\n\
                 apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm\n{annotations}\
                 spec:\n  instancetype: {{name: s}}\n  \
                 template: {{spec: {{domain: {{cpu: {{sockets: 4}}, devices: {{}}}}}}}}\n"
            )
        };
        let out = run_stream(&config, &vm("")).unwrap();
        let conflict = out.diagnostics.iter().find(|d| d.code == "KV010").unwrap();
        assert_eq!(conflict.origin.path.as_ref(), STREAM);
        assert_eq!(conflict.origin.line, None);
        let annotated = vm("  annotations: {config.kubernetes.io/origin: \"path: vms.yaml\\n\"}\n");
        let out = run_stream(&config, &annotated).unwrap();
        let conflict = out.diagnostics.iter().find(|d| d.code == "KV010").unwrap();
        // No `vms.yaml` here to find the line in: the file the annotation names, no line.
        assert!(!std::path::Path::new("vms.yaml").exists());
        assert_eq!(conflict.origin.path.as_ref(), "vms.yaml");
        assert_eq!(conflict.origin.line, None);
    }

    /// Whatever the input, the answer is a ResourceList that reads back, and an error result
    /// comes with exit code 1.
    fn check(input: &str) {
        let out = run_resource_list(input, None).expect("serializes");
        let list = resource_list::parse(&out.stdout)
            .unwrap_or_else(|e| panic!("output unreadable for {input:?}: {e:?}\n{}", out.stdout));
        assert_eq!(
            out.exit == 1,
            out.diagnostics.iter().any(Diagnostic::is_error)
        );
        // An item that is not an object comes back as it came, with its error.
        if list
            .items
            .iter()
            .any(|i| resource_list::item_problem(i).is_some())
        {
            assert_eq!(out.exit, 1, "{input:?}\n{}", out.stdout);
        }
    }

    #[test]
    fn every_truncation_and_mutation_is_answered() {
        check(LIST);
        let cut_points: Vec<usize> = LIST.char_indices().map(|(i, _)| i).collect();
        for &at in cut_points.iter().step_by(2) {
            check(&LIST[..at]);
        }
        for &at in cut_points.iter().step_by(9) {
            for with in [
                "", ":", "- ", "[", "{", "'", "\"", "\n", "&a ", "*a", "!!map ", "\t",
            ] {
                let mut text = LIST.to_string();
                text.replace_range(at..at + 1, with);
                check(&text);
            }
        }
    }

    #[test]
    fn shapes_a_reader_might_trip_over_are_errors() {
        let head = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n";
        for body in [
            "items: 5\n",
            "items: {a: 1}\n",
            "items: [[1]]\n",
            "items: [null]\n",
            "items: [{kind: A}]\n",
            "items: [{apiVersion: 1, kind: A}]\n",
            "items: [{apiVersion: v1, kind: A, metadata: [1]}]\n",
            "items: []\nfunctionConfig: hello\n",
            "items: []\nfunctionConfig: [1, 2]\n",
            "items: []\nfunctionConfig: 42\n",
            "items: []\nfunctionConfig: {kind: ConfigMap, data: [1]}\n",
            "items: []\nfunctionConfig: {kind: ConfigMap, data: {expand: 3}}\n",
            "items: []\nfunctionConfig: {kind: KVRender, paths: 7}\n",
        ] {
            let out = run_resource_list(&format!("{head}{body}"), None).unwrap();
            assert_eq!(out.exit, 1, "{body}: {}", out.stdout);
            assert!(out.stdout.contains("severity: error"), "{body}");
        }
        // Items whose inner shapes are odd are objects all the same: passed through.
        for body in [
            "items: [{apiVersion: v1, kind: A, metadata: {name: a, annotations: 5}}]\n",
            "items: [{apiVersion: v1, kind: A, metadata: {annotations: {config.kubernetes.io/index: 5, internal.config.kubernetes.io/path: [1]}}}]\n",
            "items: [{apiVersion: kubevirt.io/v1, kind: VirtualMachine, metadata: {name: a}, spec: 5}]\n",
            "items: [{apiVersion: kubevirt.io/v1, kind: VirtualMachine, metadata: {name: [a]}, spec: {instancetype: 7}}]\n",
        ] {
            check(&format!("{head}{body}"));
        }
    }

    /// A misspelt field of the config's `clusterConfig` is a warning, as with `--cluster-config`,
    /// in a ResourceList and in a legacy plugin's run alike.
    #[test]
    fn cluster_config_typos_are_warned_about() {
        let config = config_file(
            "apiVersion: kvrender.io/v1alpha1\nkind: KVRender\nmetadata: {name: x}\n\
             clusterConfig:\n  machineTyp: q35\n  machineType: pc\n",
        );
        // The warning gives the line of `clusterConfig` in the file.
        let typo = |d: &&Diagnostic| {
            d.code == codes::BAD_CONFIG
                && d.severity == crate::diagnostic::Severity::Warning
                && d.message
                    .contains("machineTyp` (did you mean `machineType`?)")
                && d.origin.line == Some(4)
                && d.origin.path.as_ref() == "plugin.yaml"
        };
        let list = run_resource_list(LIST, Some(&config)).unwrap();
        assert_eq!(
            list.diagnostics.iter().filter(typo).count(),
            1,
            "{:?}",
            list.diagnostics
        );
        assert!(list.stdout.contains("machineTyp"), "{}", list.stdout);
        let stream = run_stream(&config, "").unwrap();
        assert_eq!(
            stream.diagnostics.iter().filter(typo).count(),
            1,
            "{:?}",
            stream.diagnostics
        );
    }

    /// An item that an earlier `build -o` wrote into a folder of the package (its marker lists
    /// it) is passed through unread, as walks leave it out: not a second definition of what
    /// the package defines. A file the marker does not list is read as any other.
    #[test]
    fn earlier_build_output_in_the_package_is_not_read_again() {
        let package = tempfile::tempdir().unwrap();
        let object = "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: \
                      VirtualMachineClusterInstancetype\nmetadata: {name: s}\nspec: {cpu: \
                      {guest: 2}, memory: {guest: 2Gi}}\n";
        let written =
            std::collections::BTreeMap::from([("s.yaml".to_string(), object.to_string())]);
        crate::emit::files::write_all(&package.path().join("rendered"), &written, false).unwrap();
        let item = |path: &str| {
            format!(
                "- apiVersion: instancetype.kubevirt.io/v1beta1\n  kind: \
                 VirtualMachineClusterInstancetype\n  metadata:\n    name: s\n    \
                 annotations:\n      config.kubernetes.io/path: {path}\n      \
                 internal.config.kubernetes.io/package-path: '{}'\n  spec: {{cpu: {{guest: 2}}, \
                 memory: {{guest: 2Gi}}}}\n",
                package.path().display()
            )
        };
        let list = |second: &str| {
            format!(
                "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n{}{}",
                item("s.yaml"),
                item(second)
            )
        };
        let duplicates = |out: FnOutput| {
            out.diagnostics
                .iter()
                .filter(|d| d.code == codes::DUPLICATE)
                .count()
        };
        let out = run_resource_list(&list("rendered/s.yaml"), None).unwrap();
        assert_eq!(duplicates(out), 0);
        let out = run_resource_list(&list("rendered/other.yaml"), None).unwrap();
        assert_eq!(duplicates(out), 1);
        let out = run_resource_list(&list("other/s.yaml"), None).unwrap();
        assert_eq!(duplicates(out), 1);
    }

    /// A problem with the configuration gives the line of the key it is about: in the config
    /// file, and in a ResourceList's own `functionConfig`.
    #[test]
    fn config_problems_give_the_line_of_their_key() {
        let lines = |out: FnOutput| -> Vec<(String, Option<u32>)> {
            out.diagnostics
                .iter()
                .filter(|d| d.code == codes::BAD_CONFIG)
                .map(|d| (d.origin.path.to_string(), d.origin.line))
                .collect()
        };
        let config = config_file(
            "# settings\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  \
             expand: replac\n  strict: \"maybe\"\n",
        );
        let expected = [
            ("plugin.yaml".to_string(), Some(7)),
            ("plugin.yaml".to_string(), Some(8)),
        ];
        assert_eq!(lines(run_stream(&config, "").unwrap()), expected);
        assert_eq!(
            lines(run_resource_list(LIST, Some(&config)).unwrap()),
            expected
        );
        // A ResourceList's functionConfig is stdin's: the line is the list's.
        let list = LIST.replace("expand: replace", "expand: replac");
        assert_eq!(
            lines(run_resource_list(&list, None).unwrap()),
            [("-".to_string(), Some(19))]
        );
        // kpt's `configPath` document names its file and package: the file's line, when the
        // file still holds that document; the list's otherwise.
        let package = tempfile::tempdir().unwrap();
        let file = "# kvrender\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  \
                    expand: replac\n";
        std::fs::write(package.path().join("kvrender.yaml"), file).unwrap();
        let annotated = |name: &str| {
            LIST.replace(
                "  kind: ConfigMap\n  data: {expand: replace, severity: error}\n",
                &format!(
                    "  kind: ConfigMap\n  metadata:\n    name: {name}\n    annotations:\n      \
                     config.kubernetes.io/path: kvrender.yaml\n      \
                     internal.config.kubernetes.io/package-path: '{}'\n  \
                     data: {{expand: replac, severity: error}}\n",
                    package.path().display()
                ),
            )
        };
        assert_eq!(
            lines(run_resource_list(&annotated("c"), None).unwrap()),
            [("kvrender.yaml".to_string(), Some(6))]
        );
        assert_eq!(
            lines(run_resource_list(&annotated("other"), None).unwrap()),
            [("-".to_string(), Some(24))]
        );
        // A problem with the whole configuration gives its first line.
        let whole = config_file("\n# none\nrender: maybe\n");
        assert_eq!(
            lines(run_stream(&whole, "").unwrap()),
            [("plugin.yaml".to_string(), Some(3))]
        );
    }
}

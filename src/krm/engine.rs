//! What the function does to its items: the same stages as `kvrender build` (render the
//! catalog documents, expand the VirtualMachines against what was rendered, the items, the
//! extra catalogs and the embedded catalog), driven by a [`FnConfig`] and keeping every item's
//! place and orchestration annotations.
//!
//! Output order: the items in input order (a VM replaced by its expanded form in place, a
//! rendered object replacing an item of the same kind, namespace and name in place, so running
//! the function twice changes nothing), then the objects read from `paths`, then the rendered
//! objects that are new. Catalog documents and kvrender's own configuration stay among the
//! items, marked `config.kubernetes.io/local-config: "true"`: kpt keeps them in the package and
//! never applies them, kustomize drops them from its output.

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::krm::annotations;
use crate::krm::config::{self, ExpandMode, FnConfig};
use crate::load::{self, Loaded, Source};
use crate::model::{Kind, Object};
use crate::pipeline;
use crate::render::{self, RenderError, RenderOptions};
use crate::resolve::Index;

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
    /// Findings, sorted, severities adjusted by the configuration.
    pub diagnostics: Vec<Diagnostic>,
}

/// What an input item is to the function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// kvrender's own configuration (`KVRender`): kept, marked local.
    Config,
    /// A catalog document: rendered, kept, marked local.
    Catalog,
    /// Anything else: passed through, or replaced when rendered again or expanded.
    Object,
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

type Key = (String, String, String);

fn key(obj: &Object) -> Key {
    let ns = if obj.kind().is_namespaced() {
        obj.namespace().unwrap_or("").to_string()
    } else {
        String::new()
    };
    (obj.kind_str().to_string(), ns, obj.name().to_string())
}

/// Read `paths` from disk; failures become findings.
fn read(paths: &[String], diagnostics: &mut Vec<Diagnostic>) -> (Vec<Source>, Loaded) {
    let mut sources = Vec::new();
    for p in paths {
        match load::read_paths(&[PathBuf::from(p)]) {
            Ok(s) => sources.extend(s),
            Err(e) => {
                let mut message = e.to_string();
                if let Some(source) = std::error::Error::source(&e) {
                    message = format!("{message}: {source}");
                }
                diagnostics.push(Diagnostic::error(
                    codes::IO,
                    crate::origin::Origin::new(p.as_str(), 0, None),
                    message,
                ));
            }
        }
    }
    let loaded = load::parse_sources(&sources);
    (sources, loaded)
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
        message.push_str(&s.to_string());
        source = s.source();
    }
    Diagnostic::error(err.code(), location, message)
}

/// Run the function over `items` (whose origins the caller set from their annotations).
pub fn process(items: Vec<Object>, config: &FnConfig, placement: Placement) -> Processed {
    let mut diagnostics = Vec::new();
    let roles: Vec<Role> = items.iter().map(role).collect();
    let (path_sources, from_paths) = read(&config.paths, &mut diagnostics);
    diagnostics.extend(from_paths.diagnostics);
    let (_, catalogs) = read(&config.catalogs, &mut diagnostics);
    diagnostics.extend(catalogs.diagnostics);
    let (path_catalog, mut path_objects): (Vec<Object>, Vec<Object>) = from_paths
        .objects
        .into_iter()
        .filter(|o| role(o) != Role::Config)
        .partition(|o| role(o) == Role::Catalog);

    let mut out: Vec<Object> = items;

    // Render.
    let mut rendered = Vec::new();
    if config.render {
        let catalog_docs: Vec<Object> = out
            .iter()
            .zip(&roles)
            .filter(|(_, r)| **r == Role::Catalog)
            .map(|(o, _)| o.clone())
            .chain(path_catalog)
            .collect();
        let options = RenderOptions {
            version: config.version_label.as_deref(),
            version_label: config.version_label_key.as_deref(),
            sources: &path_sources,
        };
        if !catalog_docs.is_empty() {
            match render::render(&catalog_docs, &options) {
                Ok(r) => {
                    diagnostics.extend(r.diagnostics);
                    rendered.extend(r.objects);
                }
                Err(e) => diagnostics.push(render_diagnostic(&e)),
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

    // Rendered objects replace items of the same identity (an earlier run's output) in place.
    let positions: HashMap<Key, usize> = out
        .iter()
        .enumerate()
        .filter(|(i, _)| roles[*i] == Role::Object)
        .map(|(i, o)| (key(o), i))
        .collect();
    let mut new_objects = Vec::new();
    for obj in rendered {
        match positions.get(&key(&obj)) {
            Some(&i) => {
                let mut value = obj.value;
                annotations::copy_orchestration(&out[i].value, &mut value);
                out[i].value = value;
            }
            None => new_objects.push(obj),
        }
    }

    // Expand.
    if config.expand != ExpandMode::Off {
        let subjects: Vec<(bool, usize)> = out
            .iter()
            .enumerate()
            .filter(|(i, o)| roles[*i] == Role::Object && o.kind() == Kind::VirtualMachine)
            .map(|(i, _)| (true, i))
            .chain(
                path_objects
                    .iter()
                    .enumerate()
                    .filter(|(_, o)| o.kind() == Kind::VirtualMachine)
                    .map(|(i, _)| (false, i)),
            )
            .collect();
        let vms: Vec<Object> = subjects
            .iter()
            .map(|&(item, i)| {
                if item {
                    out[i].clone()
                } else {
                    path_objects[i].clone()
                }
            })
            .collect();
        let results = {
            let item_objects: Vec<&Object> = out
                .iter()
                .zip(&roles)
                .filter(|(_, r)| **r == Role::Object)
                .map(|(o, _)| o)
                .collect();
            let mut index = Index::new();
            index.add_layer(&new_objects);
            index.add_layer(item_objects);
            index.add_layer(&path_objects);
            index.add_layer(&catalogs.objects);
            if config.default_catalog {
                index.set_fallback(render::embedded_lookup);
            }
            pipeline::expand_all(&vms, &index, &config.profile)
        };
        for ((item, i), result) in subjects.into_iter().zip(results) {
            match result {
                Some(Ok(mut value)) if config.expand == ExpandMode::Replace => {
                    let target = if item {
                        &mut out[i]
                    } else {
                        &mut path_objects[i]
                    };
                    annotations::copy_orchestration(&target.value, &mut value);
                    target.value = value;
                }
                Some(Err(d)) => diagnostics.push(d),
                _ => {}
            }
        }
    }

    // Assemble.
    let mut values: Vec<Value> = Vec::new();
    if placement == Placement::Build {
        values.extend(new_objects.drain(..).map(|o| o.value));
    }
    values.extend(
        out.into_iter()
            .zip(&roles)
            .filter(|(_, r)| placement != Placement::Build || **r == Role::Object)
            .map(|(o, r)| {
                let mut value = o.value;
                if *r != Role::Object && (config.render || *r == Role::Config) {
                    annotations::mark_local_config(&mut value);
                }
                value
            }),
    );
    for obj in path_objects {
        let mut value = obj.value;
        if placement == Placement::Files && annotations::file_path(&value).is_none() {
            let file = obj.origin.path.to_string();
            annotations::set_file(&mut value, &file, obj.origin.index);
        }
        values.push(value);
    }
    for obj in new_objects {
        let file = annotations::file_for(&obj);
        let mut value = obj.value;
        if placement == Placement::Files {
            annotations::set_file(&mut value, &file, 0);
        }
        values.push(value);
    }

    for d in &mut diagnostics {
        if config.strict && d.severity == Severity::Warning {
            d.severity = Severity::Error;
        }
        if d.severity < config.severity {
            d.severity = config.severity;
        }
    }
    crate::diagnostic::sort(&mut diagnostics);
    Processed {
        items: values,
        diagnostics,
    }
}

//! `kvrender expand`: every VirtualMachine in the inputs, expanded, as one YAML stream.
//!
//! VirtualMachines are the bulk of a repository and nothing resolves against them, so their
//! documents are left unparsed while everything else is loaded and indexed; then each VM is
//! parsed, expanded and printed on a worker and its trees dropped at once. Only the input text
//! and the printed output are ever held for all VMs together. The VMs that expand are printed
//! whole, in input order, even when others fail (the exit code says so).

use rayon::prelude::*;

use crate::cli::ExpandArgs;
use crate::commands::Outcome;
use crate::commands::inputs::Inputs;
use crate::diagnostic::{self, Diagnostic};
use crate::emit;
use crate::error::{Error, Result};
use crate::load::{self, Document, Source};
use crate::model::{Kind, Object};
use crate::pipeline;
use crate::render;

/// What became of one document. Small (the diagnostic is boxed): there is one per document.
enum Step {
    /// Not a VirtualMachine.
    Skip,
    /// The printed expanded VM.
    Printed(String),
    /// Why the document is not an expanded VM.
    Failed(Box<Diagnostic>),
    /// A document guessed to be a VM parsed as something else: start again, parsing everything.
    Reparse,
}

/// Run `expand`.
pub fn run(args: &ExpandArgs) -> Result<Outcome> {
    let sources = load::read_paths(&args.paths)?;
    let inputs = Inputs::resolution(&args.resolve)?;
    expand_sources(&sources, &inputs)
}

/// Expand every VirtualMachine of `sources`, resolving against them and then `inputs`
/// (`--catalog` objects, the embedded catalog) with `inputs.profile`.
pub fn expand_sources(sources: &[Source], inputs: &Inputs) -> Result<Outcome> {
    // The embedded catalog is read and compiled while the inputs are split; each of its
    // combinations renders when a VM first names it.
    let (lazy, ()) = rayon::join(
        || {
            load::documents(sources, &|api, kind| {
                kind == "VirtualMachine" && api.starts_with("kubevirt.io/")
            })
        },
        || {
            if inputs.embedded {
                render::prepare_embedded();
            }
        },
    );
    if let Some(out) = expand_documents(&lazy, inputs)? {
        return Ok(out);
    }
    drop(lazy);
    let eager = load::documents(sources, &|_, _| false);
    expand_documents(&eager, inputs)?
        .ok_or_else(|| Error::Usage("internal error: a parsed document was deferred".into()))
}

/// Expand the VMs among `docs`; `None` when a deferred document turned out not to be a VM.
fn expand_documents(docs: &[Document<'_>], inputs: &Inputs) -> Result<Option<Outcome>> {
    let objects: Vec<&Object> = docs
        .iter()
        .filter_map(|d| match d {
            Document::Object(o) => Some(&**o),
            _ => None,
        })
        .collect();
    // Catalog families and preferences among the inputs resolve like any instancetype.
    let mut render_diags = Vec::new();
    let catalog_docs: Vec<&Object> = objects
        .iter()
        .copied()
        .filter(|o| render::is_catalog_kind(o))
        .collect();
    let rendered = if catalog_docs.is_empty() {
        Vec::new()
    } else {
        match render::render(catalog_docs, &render::RenderOptions::default()) {
            Ok(r) => r.objects,
            Err(e) => {
                render_diags.push(crate::krm::engine::render_diagnostic(&e));
                Vec::new()
            }
        }
    };
    let index = inputs.index_with(objects.iter().copied().chain(rendered.iter()));
    let steps: Vec<Step> = docs
        .par_iter()
        .map(|doc| {
            let result = match doc {
                Document::Problem(d) => return Step::Failed(d.clone()),
                Document::Object(vm) if vm.kind() == Kind::VirtualMachine => {
                    pipeline::expand_vm(vm, &index, &inputs.profile)
                }
                Document::Object(_) => return Step::Skip,
                Document::Deferred(text) => match text.parse() {
                    // Parsed here, used once: the expansion takes its tree.
                    Ok(vm) if vm.kind() == Kind::VirtualMachine => {
                        pipeline::expand_vm_owned(vm, &index, &inputs.profile)
                    }
                    Ok(_) => return Step::Reparse,
                    Err(d) => return Step::Failed(Box::new(d)),
                },
            };
            match result {
                Ok(v) => Step::Printed(emit::stream_document(&v)),
                Err(d) => Step::Failed(Box::new(d)),
            }
        })
        .collect();
    let mut out = Outcome {
        diagnostics: inputs.diagnostics.clone(),
        ..Outcome::default()
    };
    out.diagnostics.extend(render_diags);
    let mut printed = Vec::with_capacity(steps.len());
    for step in steps {
        match step {
            Step::Skip => {}
            Step::Printed(s) => printed.push(s),
            Step::Failed(d) => out.diagnostics.push(*d),
            Step::Reparse => return Ok(None),
        }
    }
    diagnostic::sort(&mut out.diagnostics);
    out.exit_from_diagnostics();
    out.stdout_parts = printed;
    Ok(Some(out))
}

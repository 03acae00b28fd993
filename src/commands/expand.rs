//! `kvrender expand`: every VirtualMachine in the inputs, expanded, as one YAML stream.
//!
//! VirtualMachines are the bulk of a repository and nothing resolves against them, so their
//! documents are left unparsed while everything else is loaded and indexed; then each VM is
//! parsed, expanded and printed on a worker and its trees dropped at once, and the printed VM is
//! written as soon as every VM before it is ([`crate::emit::ordered`]). Only the input text is
//! ever held for all VMs together. The VMs that expand are printed whole, in input order, even
//! when others fail (the exit code says so).

use std::io::Write;

use crate::cli::ExpandArgs;
use crate::commands::Outcome;
use crate::commands::inputs::Inputs;
use crate::diagnostic::{self, Diagnostic, codes};
use crate::emit::{self, ordered, ordered::Piece};
use crate::error::{Error, Result};
use crate::load::{self, Document, Source};
use crate::model::{Kind, Object};
use crate::pipeline;
use crate::render;
use crate::validate::rules::duplicate;

/// Run `expand`, writing the expanded VMs to `out` as they are ready.
pub fn run(args: &ExpandArgs, out: &mut (impl Write + Send)) -> Result<Outcome> {
    let built_from = args.resolve.built_from()?;
    let sources = load::read_inputs(&args.paths, None, &args.resolve.exclude()?)?;
    let inputs = Inputs::resolution(&args.resolve)?;
    let mut outcome = expand_sources(&sources, &inputs, out)?;
    load::note_variables(&mut outcome.diagnostics, &sources, "expand");
    load::note_kustomize_namespaces(&mut outcome.diagnostics, "expand");
    load::built_from::map_to_sources(&mut outcome.diagnostics, &sources, built_from);
    Ok(outcome)
}

/// Expand every VirtualMachine of `sources`, resolving against them and then `inputs`
/// (`--catalog` objects, the embedded catalog) with `inputs.profile`, and write them to `out`
/// in input order. The outcome carries the findings; its stdout is empty.
pub fn expand_sources(
    sources: &[Source],
    inputs: &Inputs,
    out: &mut (impl Write + Send),
) -> Result<Outcome> {
    // The embedded catalog is read and compiled while the inputs are split; each of its
    // combinations renders when a VM first names it.
    let (lazy, ()) = rayon::join(
        || load::documents(sources, &load::deferred::is_vm),
        || {
            if inputs.embedded {
                render::prepare_embedded();
            }
        },
    );
    if let Some(outcome) = expand_documents(&lazy, inputs, out)? {
        return Ok(outcome);
    }
    drop(lazy);
    let eager = load::documents(sources, &|_, _| false);
    expand_documents(&eager, inputs, out)?
        .ok_or_else(|| Error::Usage("internal error: a parsed document was deferred".into()))
}

/// Whether resolving or rendering would look at `object` had it been parsed up front: then a
/// document deferred as a VM that parses as `object` changes what the VMs expand to.
fn resolves_against(object: &Object) -> bool {
    crate::resolve::indexed(object) || render::is_catalog_kind(object)
}

/// Expand the VMs among `docs` and write them to `out`; `None` when a deferred document turned
/// out to be something the VMs resolve against, before anything was written.
fn expand_documents(
    docs: &[Document<'_>],
    inputs: &Inputs,
    out: &mut (impl Write + Send),
) -> Result<Option<Outcome>> {
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
        match render::render(catalog_docs, &inputs.render_options()) {
            Ok(r) => r.objects,
            Err(errors) => {
                render_diags.extend(errors.iter().map(crate::krm::engine::render_diagnostic));
                Vec::new()
            }
        }
    };
    // In a package an earlier `kpt fn render` wrote into, the files it wrote are the output of
    // the catalog documents rendered again here: resolved as rendered now, not as second
    // definitions. Those of names rendered no more are pointed out.
    let read_back =
        crate::krm::engine::read_back(&objects, &rendered, &[], render_diags.is_empty());
    let stale = read_back.stale;
    let objects: Vec<&Object> = objects
        .into_iter()
        .zip(read_back.superseded)
        .filter_map(|(o, superseded)| (!superseded).then_some(o))
        .collect();
    let index = inputs.index_with(objects.iter().copied().chain(rendered.iter()));
    let streamed = ordered::stream(docs, out, |doc| {
        let found = |d: Box<Diagnostic>| Piece::Keep(Kept::finding(*d));
        let (mut kept, result) = match doc {
            Document::Problem(d) => return found(d.clone()),
            Document::Object(obj) => match api_version_error(obj) {
                Some(d) => return found(d),
                None if obj.kind() == Kind::VirtualMachine => (
                    Kept::of(obj),
                    pipeline::expand_vm(obj, &index, &inputs.profile),
                ),
                None => return Piece::Skip,
            },
            Document::Deferred(text) => match text.parse() {
                // Parsed here, used once: the expansion takes its tree.
                Ok(vm) if vm.kind() == Kind::VirtualMachine => match api_version_error(&vm) {
                    Some(d) => return found(d),
                    None => (
                        Kept::of(&vm),
                        pipeline::expand_vm_owned(vm, &index, &inputs.profile),
                    ),
                },
                // Not a VM after all, and nothing any VM could refer to: parsed up front, it
                // would have been passed over just the same.
                Ok(other) if !resolves_against(&other) => {
                    return api_version_error(&other).map_or(Piece::Skip, found);
                }
                Ok(_) => return Piece::Stop,
                Err(d) => return found(Box::new(d)),
            },
        };
        match result {
            Ok(v) => Piece::PrintKeep(emit::stream_document(&v), kept),
            Err(d) => {
                kept.findings.push(d);
                Piece::Keep(kept)
            }
        }
    });
    if streamed.stopped {
        if streamed.wrote {
            // The line scan that defers a document only trusts plain top-level `kind:` and
            // `apiVersion:` lines (see `split::TopLevelKey::scalar`), which a parser reads the
            // same way.
            return Err(Error::Usage(
                "internal error: a document read as a VirtualMachine from its top-level lines \
                 parsed as something else after output was written"
                    .into(),
            ));
        }
        return Ok(None);
    }
    // A closed pipe (`kvrender expand ... | head`) is not a failure. Another failed write is,
    // said after the findings, which a full disk must not hide.
    let unwritten = streamed
        .error
        .filter(|e| e.kind() != std::io::ErrorKind::BrokenPipe);
    let mut outcome = Outcome {
        diagnostics: inputs.diagnostics.clone(),
        ..Outcome::default()
    };
    outcome.diagnostics.extend(render_diags);
    outcome.diagnostics.extend(stale);
    // Two definitions of what a VM resolves against: expansion takes the first, a `kubectl
    // apply` of the files the last. A warning (the output is KubeVirt's answer for the first);
    // `build` and `validate`, which check a repository, refuse it.
    outcome.diagnostics.extend(duplicate::warnings(
        objects
            .iter()
            .copied()
            .filter(|o| crate::resolve::indexed(o))
            .chain(rendered.iter()),
        "; expansion used the first",
    ));
    outcome
        .diagnostics
        .extend(second_definitions(docs, &streamed.kept));
    outcome.diagnostics.extend(
        streamed
            .kept
            .into_iter()
            .flat_map(|(_, kept)| kept.findings),
    );
    diagnostic::sort(&mut outcome.diagnostics);
    outcome.exit_from_diagnostics();
    if !streamed.wrote && outcome.diagnostics.is_empty() {
        outcome.stderr = nothing_to_expand(&objects);
    }
    if let Some(e) = unwritten {
        outcome.stderr = format!(
            "kvrender: error: {:#}\n",
            anyhow::Error::from(Error::Output(e))
        );
        outcome.exit = 2;
    }
    Ok(Some(outcome))
}

/// What `expand` keeps of a document besides its printed text: the findings about it, and
/// for a VM, its [`duplicate::key`].
struct Kept {
    findings: Vec<Diagnostic>,
    vm: Option<u64>,
}

impl Kept {
    fn finding(d: Diagnostic) -> Self {
        Kept {
            findings: vec![d],
            vm: None,
        }
    }

    /// What is kept of the VirtualMachine `vm` before it is expanded: its key, and a `KV022`
    /// warning at each field KubeVirt does not know, as `validate` gives it. Such a field does
    /// nothing (`kubectl apply` refuses the VM; a client that does not check fields has it
    /// dropped), and no rule reads a misspelt one (a VM's `dedicatedCPUPlacement`, which only
    /// an instancetype spells so): without the warning it would do nothing without a word.
    fn of(vm: &Object) -> Self {
        let mut findings = Vec::new();
        crate::validate::rules::unknown_field::check(vm, &mut findings);
        findings.retain(|d| d.code == codes::UNKNOWN_FIELD);
        for d in &mut findings {
            d.point_at_field(|field| vm.field_origin(field));
        }
        Kept {
            findings,
            vm: Some(duplicate::key(vm)),
        }
    }
}

/// A warning for each second definition of a VM among `docs` (whose [`Kept`] values are
/// `kept`): both are expanded and printed, and the cluster would hold one of them. The VMs
/// whose keys match are parsed again, to be compared whole and pointed at by their names.
fn second_definitions(docs: &[Document<'_>], kept: &[(usize, Kept)]) -> Vec<Diagnostic> {
    let again = duplicate::sharing_a_key(
        kept.iter()
            .filter_map(|(position, kept)| Some((kept.vm?, *position))),
    );
    if again.is_empty() {
        return Vec::new();
    }
    let vms: Vec<Object> = again
        .into_iter()
        .filter_map(|position| match &docs[position] {
            Document::Object(obj) => Some((**obj).clone()),
            Document::Deferred(text) => text.parse().ok(),
            Document::Problem(_) => None,
        })
        .collect();
    duplicate::warnings(
        &vms,
        "; both are expanded and printed, and a `kubectl apply` of them keeps the last",
    )
}

/// The `KV021` error `validate` reports for `obj`, if any: a kind KubeVirt's groups do not
/// have, most likely a misspelt VirtualMachine, which would otherwise vanish from the output
/// without a word; or an apiVersion KubeVirt does not serve for the kind (`kubevirt.io/v2`),
/// which the cluster cannot hold, so such a VM is not expanded. A deprecated version KubeVirt
/// still serves (`kubevirt.io/v1alpha3`, a warning there) is expanded as any other.
fn api_version_error(obj: &Object) -> Option<Box<Diagnostic>> {
    let mut found = Vec::new();
    crate::validate::rules::api_version::check(obj, &mut found);
    found.into_iter().find(Diagnostic::is_error).map(Box::new)
}

/// What to say when the inputs hold no VirtualMachine at all, rather than print nothing
/// without a word: where the VMs of a pool or replica set among them are shown instead.
fn nothing_to_expand(objects: &[&Object]) -> String {
    let holder = objects.iter().find(|o| {
        crate::kubevirt::pool::is_pool(o) || crate::kubevirt::replica_set::is_replica_set(o)
    });
    match holder {
        Some(o) => format!(
            "no VirtualMachine to expand: `expand` prints VirtualMachines only; `kvrender vmi` \
             prints the VirtualMachineInstances {} `{}` starts, and `kvrender validate` checks \
             it\n",
            o.kind_str(),
            o.name()
        ),
        None => "no VirtualMachine to expand in the input\n".to_string(),
    }
}

//! `kvrender validate`: run every rule of [`crate::validate`] on the inputs and print the
//! findings in the chosen format on stdout. Exit 1 when any finding is an error.
//!
//! VirtualMachines are the bulk of a repository and nothing resolves against them, so, as
//! `expand` does, their documents are left unparsed while everything else is loaded, rendered
//! and indexed. Each VM is then parsed and checked on a worker, and only what the checks of the
//! whole set need of it (its identity, for duplicates) is kept: the trees of every VM are never
//! held together. When a VM document does not parse, or parses as something else, the inputs are
//! parsed whole and checked as before, so that the findings are the same either way.

use foldhash::HashMap;
use rayon::prelude::*;

use crate::cli::{Format, ValidateArgs};
use crate::commands::Outcome;
use crate::commands::inputs::Inputs;
use crate::diagnostic::{Diagnostic, Severity};
use crate::emit;
use crate::error::Result;
use crate::load::deferred::NotAVm;
use crate::load::{self, Loaded, Source};
use crate::model::Object;
use crate::model::written::CatalogDocs;
use crate::validate::{self, Context, Options};

/// Run `validate`.
pub fn run(args: &ValidateArgs) -> Result<Outcome> {
    let built_from = args.resolve.built_from()?;
    // As `build`: without a PATH, the current directory.
    let paths = if args.paths.is_empty() {
        vec![std::path::PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let sources = load::read_inputs(&paths, None, &args.resolve.exclude()?)?;
    let (objects, diags) = match check_deferring_vms(&paths, &sources, args)? {
        Some(checked) => checked,
        None => check_whole(&paths, &sources, load::parse_sources(&sources), args)?,
    };
    let mut diags = validate::finish(
        diags,
        Options {
            strict: args.strict,
        },
    );
    load::note_variables(&mut diags, &sources, "validate");
    load::note_kustomize_namespaces(&mut diags, "validate");
    load::built_from::map_to_sources(&mut diags, &sources, built_from);
    let stdout = match args.format {
        Format::Human if diags.is_empty() => format!(
            "No problems found in {objects} object{}.\n",
            if objects == 1 { "" } else { "s" }
        ),
        Format::Human => {
            let mut text = emit::diagnostics::human(&diags, true);
            // Notes only: they are not problems, and the summary still says how it went.
            if diags.iter().all(|d| d.severity == Severity::Info) {
                let notes = diags.len();
                text.push_str(&format!(
                    "No problems found in {objects} object{} ({notes} note{} above).\n",
                    if objects == 1 { "" } else { "s" },
                    if notes == 1 { "" } else { "s" }
                ));
            }
            text
        }
        Format::Json => emit::json::report(&diags),
        Format::Github => emit::github::report(&diags),
        Format::Sarif => emit::sarif::report(&diags),
        Format::Gitlab => emit::gitlab::report(&diags),
    };
    let mut out = Outcome {
        stdout,
        diagnostics: diags,
        ..Outcome::default()
    };
    // Findings are moved to the overlay's files only through kustomize's origin annotations.
    if let Some(dir) = built_from
        && sources.iter().any(|s| !s.bytes.trim_ascii().is_empty())
        && !sources.iter().any(|s| {
            memchr::memmem::find(&s.bytes, crate::krm::annotations::ORIGIN.as_bytes()).is_some()
        })
    {
        out.stderr = format!(
            "kvrender: warning: --built-from {}: no object of the input has kustomize's \
             `{}` annotation, so every finding stays at its line of the input; add \
             `buildMetadata: [originAnnotations]` to the kustomization and build it again\n",
            dir.display(),
            crate::krm::annotations::ORIGIN
        );
    }
    out.exit_from_diagnostics();
    // The findings are the report on stdout; `main` must not print them again.
    out.diagnostics.clear();
    Ok(out)
}

/// One object's findings, and for a VM, what is kept of it once checked
/// ([`load::deferred::identity`]).
type Checked = (Vec<Diagnostic>, Option<Object>);

/// [`check_whole`], with the VM documents parsed, checked and dropped one at a time; `None`
/// when one of them does not parse as a VM, for [`check_whole`] to say what it is.
fn check_deferring_vms(
    paths: &[std::path::PathBuf],
    sources: &[Source],
    args: &ValidateArgs,
) -> Result<Option<(usize, Vec<Diagnostic>)>> {
    let (mut inputs, deferred) = Inputs::load_deferring_vms(paths, sources, &args.resolve)?;
    let mut unmet = Vec::new();
    let checked: std::result::Result<Vec<Checked>, NotAVm> = {
        let index = inputs.index();
        let ctx = Context::with_cluster(&index, &inputs.profile, &inputs.objects, &inputs.catalog);
        validate::rules::unmet_requirements::check(&inputs.objects, Some(&index), &mut unmet);
        inputs
            .objects
            .par_iter()
            .map(|o| {
                let Some(vm) = deferred.parse(o) else {
                    return Ok((validate::check_object(o, &ctx), None));
                };
                let vm = vm?;
                let mut found = validate::check_object(&vm, &ctx);
                // The VM's text is at hand only here: the findings about it are pointed at
                // their fields now, those about other objects with the rest.
                point_at_fields(std::slice::from_ref(&vm), &[], &mut found);
                Ok((found, Some(load::deferred::identity(&vm))))
            })
            .collect()
    };
    let Ok(checked) = checked else {
        return Ok(None);
    };
    // The findings in the order `check_whole` makes them (the sort keeps it among equals).
    let mut diags = std::mem::take(&mut inputs.diagnostics);
    for (object, (found, stands_in)) in inputs.objects.iter_mut().zip(checked) {
        if let Some(vm) = stands_in {
            *object = vm;
        }
        diags.extend(found);
    }
    // A VM is kept by its identity, without its text: its name's line is found in the text
    // left unparsed, for a duplicate only.
    let named = |o: &Object| {
        deferred
            .name_origin(o)
            .unwrap_or_else(|| validate::rules::duplicate::name_origin(o))
    };
    validate::rules::duplicate::check_with(&inputs.objects, &named, &mut diags);
    diags.extend(unmet);
    // A VM's own findings are at their fields' lines already, and pointing them again leaves
    // them there: only their document starts on their line, and its identity has no text.
    point_at_fields(&inputs.objects, &inputs.catalog, &mut diags);
    Ok(Some((inputs.objects.len(), diags)))
}

/// Check the objects of `sources`, parsed up front (`loaded`): how many objects there are,
/// and the findings (unsorted).
fn check_whole(
    paths: &[std::path::PathBuf],
    sources: &[Source],
    loaded: Loaded,
    args: &ValidateArgs,
) -> Result<(usize, Vec<Diagnostic>)> {
    let inputs = Inputs::from_loaded(paths, sources, loaded, &args.resolve)?;
    let index = inputs.index();
    let ctx = Context::with_cluster(&index, &inputs.profile, &inputs.objects, &inputs.catalog);
    let mut diags = inputs.diagnostics.clone();
    diags.extend(validate::validate(&inputs.objects, &ctx));
    point_at_fields(&inputs.objects, &inputs.catalog, &mut diags);
    Ok((inputs.objects.len(), diags))
}

/// Move findings that point at the start of their object to the line of their field, when the
/// field can be found in the document's text (for a rendered object, in the catalog documents
/// among `objects` or the `--catalog` ones, `catalog`).
fn point_at_fields(objects: &[Object], catalog: &[Object], diags: &mut [Diagnostic]) {
    // The items of a list document share its index: the line tells them apart.
    let by_origin: HashMap<(&str, usize, Option<u32>), &Object> = objects
        .iter()
        .map(|o| ((&*o.origin.path, o.origin.index, o.origin.line), o))
        .collect();
    let docs = CatalogDocs::new(objects.iter().chain(catalog));
    for d in diags.iter_mut() {
        if d.field.is_none() {
            continue;
        }
        let Some(obj) = by_origin.get(&(&*d.origin.path, d.origin.index, d.origin.line)) else {
            continue;
        };
        d.point_at_field_of(obj, &docs);
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::cli::Command;
    use crate::commands::testing::{cases, command, repo};

    fn args(paths: &[PathBuf], default_catalog: bool) -> ValidateArgs {
        let flags: &[&str] = if default_catalog {
            &["validate"]
        } else {
            &["validate", "--no-default-catalog"]
        };
        match command(flags, paths) {
            Command::Validate(args) => args,
            _ => unreachable!("a validate command"),
        }
    }

    /// The findings both ways, as `run` prints them; `None` for the deferring way when it
    /// handed the inputs back.
    type Both = (Option<(usize, Vec<Diagnostic>)>, (usize, Vec<Diagnostic>));

    fn both(paths: &[PathBuf], default_catalog: bool) -> Both {
        let args = args(paths, default_catalog);
        let sources = load::read_paths(paths).expect("the inputs read");
        let finish = |(n, diags): (usize, Vec<Diagnostic>)| {
            (n, validate::finish(diags, Options { strict: false }))
        };
        let deferring = check_deferring_vms(paths, &sources, &args)
            .expect("no usage error")
            .map(finish);
        let whole = check_whole(paths, &sources, load::parse_sources(&sources), &args)
            .map(finish)
            .expect("no usage error");
        (deferring, whole)
    }

    /// VMs whose findings point at their fields, VMs defined twice (the
    /// second time in a list, which is parsed up front, and in a later document), VMs of an
    /// older API version, and a VM named as a number.
    const MIXED: &str = "\
apiVersion: instancetype.kubevirt.io/v1beta1
kind: VirtualMachineInstancetype
metadata: {name: small, namespace: ns}
spec:
  cpu: {guest: two}
  memory: {guest: 1Gi}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: a, namespace: ns}
spec:
  instancetype: {name: small, kind: VirtualMachineInstancetype}
  template:
    spec:
      domain:
        cpu: {cores: 2}
        devices: {}
---
apiVersion: v1
kind: List
items:
- apiVersion: kubevirt.io/v1
  kind: VirtualMachine
  metadata: {name: b, namespace: ns}
  spec:
    preference: {name: nowhere}
    template: {spec: {domain: {devices: {}}}}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: b, namespace: ns}
spec:
  template: {spec: {domain: {devices: {}}}}
---
apiVersion: kubevirt.io/v1alpha3
kind: VirtualMachine
metadata: {name: a, namespace: ns}
spec:
  running: yes
  template: {spec: {domain: {devices: {disks: [{name: d, disk: {bus: floppy}}]}}}}
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: 0123}
spec:
  template: {spec: {domain: {memory: {guest: lots}}}}
";

    #[test]
    fn checking_vms_one_at_a_time_finds_what_checking_them_whole_finds() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mixed = dir.path().join("mixed.yaml");
        std::fs::write(&mixed, MIXED).expect("written");
        let mut sets: Vec<(Vec<PathBuf>, bool)> = vec![
            (vec![mixed.clone()], false),
            (vec![mixed], true),
            (vec![repo("testdata/validate/vms.yaml")], true),
            (vec![repo("testdata/build/duplicate")], true),
            (vec![repo("examples")], true),
            (vec![repo("catalog"), repo("examples")], true),
        ];
        sets.extend(
            cases("testdata/conformance/validate")
                .into_iter()
                .map(|case| (vec![case.join("input.yaml")], false)),
        );
        for (paths, default_catalog) in &sets {
            let (deferring, whole) = both(paths, *default_catalog);
            let deferring = deferring.unwrap_or_else(|| panic!("{paths:?} handed back"));
            assert_eq!(deferring, whole, "{paths:?}");
        }
        // What the mixed file must give: both second definitions, at their names' lines, and
        // VM findings at the lines of their fields, below their documents' first lines.
        let (_, (objects, found)) = both(&sets[0].0, false);
        assert_eq!(objects, 6);
        let duplicates: Vec<Option<u32>> = found
            .iter()
            .filter(|d| d.code == crate::diagnostic::codes::DUPLICATE)
            .map(|d| d.origin.line)
            .collect();
        assert_eq!(duplicates, [Some(31), Some(37)], "{found:#?}");
        let at_fields: Vec<Option<u32>> = found
            .iter()
            .filter(|d| d.code == crate::diagnostic::codes::WRONG_TYPE)
            .map(|d| d.origin.line)
            .collect();
        assert_eq!(at_fields, [Some(5), Some(46), Some(46)], "{found:#?}");
    }

    #[test]
    fn a_vm_document_that_does_not_parse_is_checked_with_the_whole_inputs() {
        let paths = [repo("testdata/validate/broken.yaml")];
        let (deferring, whole) = both(&paths, true);
        assert!(deferring.is_none());
        assert!(
            whole
                .1
                .iter()
                .any(|d| d.code == crate::diagnostic::codes::YAML_SYNTAX),
            "{whole:?}"
        );
    }
}

//! `kvrender build`: the main job. Render the catalog families and preferences found in PATH,
//! expand every VirtualMachine (against what was rendered, then the inputs, `--catalog`, and the
//! embedded catalog), pass every other object through, and print one YAML stream or write files.
//!
//! This runs the same engine as the KRM function ([`crate::krm::engine`]), so a package gives
//! the same objects and findings whichever door it came through.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::cli::BuildArgs;
use crate::commands::Outcome;
use crate::commands::inputs::load_profile;
use crate::diagnostic;
use crate::emit::{self, files};
use crate::error::Result;
use crate::krm::config::{ExpandMode, FnConfig};
use crate::krm::engine::{self, Placement};
use crate::load;

/// The release bundles, as the upstream catalog publishes them: file name and the kinds in it
/// (`None`: everything).
const BUNDLES: [(&str, Option<&str>); 5] = [
    ("common-instancetypes-all-bundle.yaml", None),
    (
        "common-clusterinstancetypes-bundle.yaml",
        Some("VirtualMachineClusterInstancetype"),
    ),
    (
        "common-instancetypes-bundle.yaml",
        Some("VirtualMachineInstancetype"),
    ),
    (
        "common-clusterpreferences-bundle.yaml",
        Some("VirtualMachineClusterPreference"),
    ),
    (
        "common-preferences-bundle.yaml",
        Some("VirtualMachinePreference"),
    ),
];

/// Run `build`.
pub fn run(args: &BuildArgs) -> Result<Outcome> {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    // What an earlier run wrote to the output directory is not read back as input.
    let sources = load::read_paths_skipping(&paths, args.output.as_deref())?;
    let loaded = load::parse_sources(&sources);
    // Read here, not by the engine: a file that cannot be read stops the run (exit code 2),
    // as a PATH argument does.
    let catalog_sources = load::read_paths(&args.resolve.catalogs)?;
    let mut config = FnConfig {
        render: true,
        expand: if args.catalog_only {
            ExpandMode::Off
        } else {
            ExpandMode::Replace
        },
        default_catalog: !args.resolve.no_default_catalog,
        version_label: args.version_label.clone(),
        version_label_key: Some(args.version_label_key.clone()),
        walked: paths.iter().filter(|p| p.is_dir()).cloned().collect(),
        check_input_catalog: args.catalog_only,
        ..FnConfig::default()
    };
    let mut profile_warnings = Vec::new();
    if let Some(file) = &args.resolve.cluster_config {
        config.profile = load_profile(file)?;
        profile_warnings = crate::commands::inputs::profile_warnings(&config.profile, file);
    }
    let processed =
        engine::process_read(loaded.objects, &config, Placement::Build, &catalog_sources);
    let mut out = Outcome {
        diagnostics: loaded.diagnostics,
        ..Outcome::default()
    };
    out.diagnostics.extend(profile_warnings);
    out.diagnostics.extend(processed.diagnostics);
    diagnostic::sort(&mut out.diagnostics);
    out.exit_from_diagnostics();
    // Tool configuration (kustomizations, Kptfiles, anything marked local) is not a cluster
    // resource: kustomize and kpt never apply it, and neither does `build` print it.
    let items: Vec<Value> = processed
        .items
        .into_iter()
        .filter(|v| !crate::model::object::is_local_config(v))
        .collect();
    let items: Vec<Value> = if args.catalog_only {
        items.into_iter().filter(is_catalog_object).collect()
    } else {
        items
    };
    // Nothing half-done: with an error finding, no output at all.
    if out.exit != 0 {
        return Ok(out);
    }
    match &args.output {
        None => out.stdout_parts = emit::yaml_stream_parts(&items),
        Some(dir) => {
            let tree = if args.bundles {
                bundles(&items)?
            } else {
                one_file_per_object(&items)?
            };
            let plural = |n: usize| if n == 1 { "" } else { "s" };
            if args.check {
                let changes = files::changes(dir, &tree, args.prune)?;
                report_changes(&mut out.stderr, dir, &changes);
                if !changes.is_empty() {
                    out.exit = 1;
                }
                return Ok(out);
            }
            let removed = files::write_all(dir, &tree, args.prune)?;
            let _ = write!(
                out.stderr,
                "wrote {} file{} to {}",
                tree.len(),
                plural(tree.len()),
                dir.display()
            );
            if args.prune {
                let _ = write!(
                    out.stderr,
                    ", removed {removed} stale file{}",
                    plural(removed)
                );
            }
            let _ = writeln!(out.stderr);
        }
    }
    out.printed_from = items;
    Ok(out)
}

/// `--check`: one line per file a run would create, change or delete, then a summary.
fn report_changes(stderr: &mut String, dir: &Path, changes: &files::Changes) {
    if !dir.exists() {
        let _ = writeln!(
            stderr,
            "{} does not exist: {} files to write; run the same command without --check to \
             write them",
            dir.display(),
            changes.created.len()
        );
        return;
    }
    let lines = [
        ("new", &changes.created),
        ("changed", &changes.changed),
        ("stale", &changes.removed),
    ];
    for (what, names) in lines {
        for name in names {
            let _ = writeln!(stderr, "{}: {what}", dir.join(name).display());
        }
    }
    if changes.is_empty() {
        let _ = writeln!(stderr, "{} is up to date", dir.display());
    } else {
        let _ = writeln!(
            stderr,
            "{} is out of date: {} new, {} changed, {} stale; run the same command without \
             --check to update it",
            dir.display(),
            changes.created.len(),
            changes.changed.len(),
            changes.removed.len()
        );
    }
}

fn is_catalog_object(v: &Value) -> bool {
    BUNDLES
        .iter()
        .filter_map(|(_, kind)| *kind)
        .any(|k| v.get("kind").and_then(Value::as_str) == Some(k))
}

fn one_file_per_object(items: &[Value]) -> Result<BTreeMap<String, String>> {
    let mut tree = BTreeMap::new();
    let mut first_of: BTreeMap<String, usize> = BTreeMap::new();
    for (i, (item, name)) in items
        .iter()
        .zip(files::kustomize_file_names(items))
        .enumerate()
    {
        if let Some(&first) = first_of.get(&name) {
            return Err(crate::error::Error::Usage(format!(
                "{} and {} would be written to the same file `{name}` (file names are \
                 lower-cased, every character outside `[a-z0-9._-]` becomes `_`, and a name \
                 is cut at 240 characters): rename one of them",
                describe(&items[first]),
                describe(item)
            )));
        }
        first_of.insert(name.clone(), i);
        tree.insert(name, emit::stream_document(item));
    }
    Ok(tree)
}

/// `Kind/namespace/name` of an output item, as diagnostics name objects.
fn describe(item: &Value) -> String {
    let field = |path: &[&str]| crate::model::path::str_at(item, path).unwrap_or("");
    let namespace = field(&["metadata", "namespace"]);
    crate::origin::ObjectRef {
        api_version: field(&["apiVersion"]).to_string(),
        kind: field(&["kind"]).to_string(),
        namespace: (!namespace.is_empty()).then(|| namespace.to_string()),
        name: field(&["metadata", "name"]).to_string(),
    }
    .to_string()
}

fn bundles(items: &[Value]) -> Result<BTreeMap<String, String>> {
    let mut tree = BTreeMap::new();
    let mut checksums = String::new();
    for (file, kind) in BUNDLES {
        let selected = items.iter().filter(|v| match kind {
            None => is_catalog_object(v),
            Some(k) => v.get("kind").and_then(Value::as_str) == Some(k),
        });
        let text = emit::yaml_stream(selected);
        let digest = Sha256::digest(text.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        let _ = writeln!(checksums, "{hex}  {file}");
        tree.insert(file.to_string(), text);
    }
    tree.insert("CHECKSUMS.sha256".to_string(), checksums);
    Ok(tree)
}

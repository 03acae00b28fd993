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

/// How `build` parses its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Parsing {
    /// The VirtualMachine documents one at a time on the workers, the rest up front.
    VmsOnWorkers,
    /// Everything up front.
    Whole,
}

/// Run `build`.
pub fn run(args: &BuildArgs) -> Result<Outcome> {
    run_parsing(args, Parsing::VmsOnWorkers)
}

fn run_parsing(args: &BuildArgs, parsing: Parsing) -> Result<Outcome> {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    if let Some(dir) = &args.output {
        // Before the walk, which would otherwise stumble on DIR's marker first.
        files::check_output_path(dir)?;
        refuse_output_over_inputs(dir, paths.iter().chain(&args.resolve.catalogs))?;
    }
    let built_from = args.resolve.built_from()?;
    // What an earlier run wrote to the output directory is not read back as input.
    let exclude = args.resolve.exclude()?;
    let mut met = Vec::new();
    let sources =
        load::read_inputs_noting_skip(&paths, args.output.as_deref(), &exclude, &mut met)?;
    if let Some(dir) = &args.output {
        refuse_output_met_by_a_walk(dir, &met)?;
    }
    // Read here, not by the engine: a file that cannot be read stops the run (exit code 2),
    // as a PATH argument does.
    let catalog_sources = load::read_option_inputs(&args.resolve.catalogs, &exclude, "--catalog")?;
    // The bundles hold the catalog only: VMs are neither written nor checked, as with
    // `--catalog-only`.
    let catalog_only = args.catalog_only || args.bundles;
    let mut config = FnConfig {
        render: true,
        expand: if catalog_only {
            ExpandMode::Off
        } else {
            ExpandMode::Replace
        },
        default_catalog: !args.resolve.no_default_catalog,
        version_label: args.version_label.clone(),
        version_label_key: Some(args.version_label_key.clone()),
        walked: paths.iter().filter(|p| p.is_dir()).cloned().collect(),
        check_input_catalog: catalog_only,
        ..FnConfig::default()
    };
    let mut profile_warnings = Vec::new();
    if let Some(file) = &args.resolve.cluster_config {
        (config.profile, profile_warnings) = load_profile(file)?;
    }
    let (processed, loading_findings) = process(&sources, &config, &catalog_sources, parsing);
    let mut out = Outcome {
        diagnostics: loading_findings,
        ..Outcome::default()
    };
    out.diagnostics.extend(profile_warnings);
    out.diagnostics.extend(processed.diagnostics);
    for note in load::notes_on_renaming(&sources.iter().map(|s| s.path.clone()).collect::<Vec<_>>())
    {
        out.stderr.push_str(&note);
        out.stderr.push('\n');
    }
    // The engine sets configuration aside; it is looked for again only in inputs that name it.
    if sources
        .iter()
        .any(|s| memchr::memmem::find(&s.bytes, KIND_BYTES).is_some())
    {
        let loaded = load::parse_sources(&sources);
        if let Some(obj) = loaded.objects.iter().find(|o| is_function_config(&o.value)) {
            let at = obj.field_origin("metadata.name").to_string();
            out.stderr
                .push_str(&function_config_note(&obj.value, Some(&at)));
        }
    }
    diagnostic::sort(&mut out.diagnostics);
    load::note_variables(
        &mut out.diagnostics,
        sources.iter().chain(&catalog_sources),
        "build",
    );
    load::note_kustomize_namespaces(&mut out.diagnostics, "build");
    load::built_from::map_to_sources(&mut out.diagnostics, &sources, built_from);
    if args.strict {
        out.warnings_as_errors();
    }
    out.exit_from_diagnostics();
    // Nothing half-done: with an error finding, no output at all.
    if out.exit != 0 {
        if let Some(dir) = &args.output {
            note_interrupted(&mut out.stderr, dir);
        }
        return Ok(out);
    }
    // Tool configuration (kustomizations, Kptfiles, anything marked local) is not a cluster
    // resource: kustomize and kpt never apply it, and neither does `build` print it.
    let mut printed = processed.printed.into_iter();
    let (items, printed): (Vec<Value>, Vec<Option<String>>) = processed
        .items
        .into_iter()
        .map(|v| (v, printed.next().flatten()))
        .filter(|(v, _)| !crate::model::object::is_local_config(v))
        .filter(|(v, _)| !catalog_only || is_catalog_object(v))
        .unzip();
    match &args.output {
        None => out.stdout_parts = emit::yaml_stream_parts_printed(&items, printed),
        Some(dir) => {
            let tree = if args.bundles {
                bundles(&items, args.version_label.as_deref())?
            } else {
                // Parsed again at most once, and only for an object that cannot be written.
                let reread = std::cell::OnceCell::new();
                let locate = |item: &Value| {
                    read_at(reread.get_or_init(|| load::parse_sources(&sources)), item)
                };
                one_file_per_object(&items, printed, &locate)?
            };
            let plural = |n: usize| if n == 1 { "" } else { "s" };
            if args.check {
                let changes = files::changes(dir, &tree, args.prune)?;
                report_changes(&mut out.stderr, dir, &changes);
                note_interrupted(&mut out.stderr, dir);
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

/// The kind of kvrender's function configuration, as bytes to look for in the inputs.
const KIND_BYTES: &[u8] = crate::krm::config::KIND.as_bytes();

/// Whether an item is kvrender's own KRM function configuration (`KVRender`).
fn is_function_config(item: &Value) -> bool {
    item.get("apiVersion").and_then(Value::as_str) == Some(crate::krm::config::API_VERSION)
        && item.get("kind").and_then(Value::as_str) == Some(crate::krm::config::KIND)
}

/// What `build` says of a `KVRender` among its inputs: kpt and kustomize hand it to the
/// function, `build` does not read it, and which of its options do what the settings it holds
/// do. A package built both ways gives the same objects only with those options.
fn function_config_note(config: &Value, at: Option<&str>) -> String {
    // Each setting, the value for which `build` needs an option (`None`: any value), and the
    // option.
    const OPTIONS: [(&str, Option<&str>, &str); 9] = [
        ("defaultCatalog", Some("false"), "`--no-default-catalog`"),
        ("paths", None, "PATH arguments"),
        ("catalogs", None, "`--catalog`"),
        (
            "clusterConfig",
            None,
            "`--cluster-config FILE` (the mapping saved to a file)",
        ),
        ("versionLabel", None, "`--version-label`"),
        ("versionLabelKey", None, "`--version-label-key`"),
        ("severity", Some("warning"), "`--strict`"),
        ("strict", Some("true"), "`--strict`"),
        ("prune", Some("true"), "`--prune` with `-o DIR`"),
    ];
    let set: Vec<String> = OPTIONS
        .iter()
        .filter(|(key, value, _)| match (config.get(key), value) {
            (None | Some(Value::Null), _) => false,
            (Some(_), None) => true,
            (Some(v), Some(wanted)) => match v {
                Value::String(s) => s == wanted,
                Value::Bool(b) => wanted.parse() == Ok(*b),
                _ => false,
            },
        })
        .map(|(key, _, option)| format!("`{key}` as {option}"))
        .collect();
    let name = config
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("<no name>");
    let at = at.map(|at| format!("{at}: ")).unwrap_or_default();
    let mut note = format!(
        "note: {at}KVRender/{name} configures kvrender as a KRM function (`kpt fn render`, \
         `kubectl kustomize`); `build` does not read it"
    );
    if !set.is_empty() {
        let _ = write!(note, ": give its settings as options, {}", set.join(", "));
    }
    note.push('\n');
    note
}

/// Refuse an output directory that is one of the input PATHs or holds one: `build` would
/// mark the sources as its output (so that later walks skip them), write beside them, and
/// with `--prune` remove them. A directory inside a PATH is fine, as long as it holds no
/// manifest but those an earlier run wrote there: walks leave it out, so such a file would
/// silently stop being read.
fn refuse_output_over_inputs<'a>(
    dir: &Path,
    inputs: impl Iterator<Item = &'a PathBuf>,
) -> Result<()> {
    let Ok(out) = std::fs::canonicalize(dir) else {
        // Not there yet: no input can be in it.
        return Ok(());
    };
    for input in inputs {
        if input.as_os_str() == "-" {
            continue;
        }
        let Ok(canonical) = std::fs::canonicalize(input) else {
            continue;
        };
        let placing = Placing::of(&out, &canonical, dir_identity);
        if placing == Placing::Inside
            && canonical.is_dir()
            && let Some(source) = files::unrecorded_manifest(&out)?
        {
            let source = dir.join(source);
            let (marker, dir, source, input) = (
                crate::load::walk::OUTPUT_MARKER,
                dir.display(),
                source.display(),
                input.display(),
            );
            return Err(crate::error::Error::Usage(if out.join(marker).exists() {
                format!(
                    "-o `{dir}` holds `{source}`, which an earlier build did not write there: \
                     walks of `{input}` leave the output directory out, so it would no longer \
                     be read; move it, or write to another directory"
                )
            } else {
                format!(
                    "-o `{dir}` holds `{source}` and no `{marker}` marker, so walks of \
                     `{input}` read it as a source; once this build wrote the marker they would \
                     leave the directory out and the file would no longer be read. If an \
                     earlier build wrote it and the marker was lost, delete `{dir}` and build \
                     again; otherwise move the file, or write to another directory"
                )
            }));
        }
        if matches!(placing, Placing::Same | Placing::Holds) {
            let how = if placing == Placing::Same {
                format!("is the input PATH `{}`", input.display())
            } else {
                format!("holds the input PATH `{}`", input.display())
            };
            return Err(crate::error::Error::Usage(format!(
                "-o `{}` {how}: build would write over the files it reads (and `--prune` \
                 would delete them); write to another directory (one inside the inputs is \
                 fine: later walks leave it out)",
                dir.display()
            )));
        }
    }
    Ok(())
}

/// The walks leave the output directory out wherever they meet it, also through a symbolic
/// link of another name (`repo/shared -> ../out`), which the comparison of the paths given
/// cannot see: a file there that no build wrote would be written over, or never read again.
fn refuse_output_met_by_a_walk(dir: &Path, met: &[PathBuf]) -> Result<()> {
    let Some(through) = met.first() else {
        return Ok(());
    };
    let Some(source) = files::unrecorded_manifest(dir)? else {
        return Ok(());
    };
    Err(crate::error::Error::Usage(format!(
        "-o `{}` holds `{}`, which an earlier build did not write there, and the inputs reach \
         the directory as `{}`: walks leave the output directory out, so the file would no \
         longer be read (or be written over); move it, or write to another directory",
        dir.display(),
        dir.join(source).display(),
        through.display()
    )))
}

/// Where an output directory stands to an input, both canonical paths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Placing {
    /// The same directory.
    Same,
    /// The output directory holds the input.
    Holds,
    /// The output directory is inside the input.
    Inside,
    /// Neither holds the other.
    Apart,
}

impl Placing {
    /// Compare by what the paths are, not by how they are spelt: two paths `identity` gives
    /// the same value are one directory (a bind mount shows one directory at a second path
    /// that canonicalizing does not undo). Paths with no identity compare by their text.
    fn of<I: PartialEq>(out: &Path, input: &Path, identity: impl Fn(&Path) -> Option<I>) -> Self {
        let same = |a: &Path, b: &Path| match (identity(a), identity(b)) {
            (Some(x), Some(y)) => x == y,
            _ => a == b,
        };
        if same(out, input) {
            Placing::Same
        } else if input.ancestors().skip(1).any(|a| same(a, out)) {
            Placing::Holds
        } else if out.ancestors().skip(1).any(|a| same(a, input)) {
            Placing::Inside
        } else {
            Placing::Apart
        }
    }
}

/// A directory's device and inode number, which tell it apart whatever path reaches it.
#[cfg(unix)]
fn dir_identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path).ok()?;
    meta.is_dir().then(|| (meta.dev(), meta.ino()))
}

/// Elsewhere paths are compared by their text.
#[cfg(not(unix))]
fn dir_identity(_: &Path) -> Option<(u64, u64)> {
    None
}

/// Say so when a `build -o` into `dir` was stopped halfway: some of its files are in place and
/// the rest are not, which the next run that writes undoes first.
fn note_interrupted(stderr: &mut String, dir: &Path) {
    let runs = files::interrupted_runs(dir);
    let Some(first) = runs.first() else {
        return;
    };
    let _ = writeln!(
        stderr,
        "note: a `build -o` into {} was stopped halfway (or is running now), leaving `{first}`: \
         some of the files it was writing are in place, the others not; the next `build -o` \
         into it puts every file back as it was before writing its own",
        dir.display()
    );
}

/// `--check`: one line per file a run would create, change or delete, then a summary.
fn report_changes(stderr: &mut String, dir: &Path, changes: &files::Changes) {
    if !dir.exists() {
        let (count, them) = match changes.created.len() {
            1 => ("1 file".to_string(), "it"),
            n => (format!("{n} files"), "them"),
        };
        let _ = writeln!(
            stderr,
            "{} does not exist: {count} to write; run `{}` to write {them}",
            dir.display(),
            without_check(),
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
            "{} is out of date: {} new, {} changed, {} stale; run `{}` to update it",
            dir.display(),
            changes.created.len(),
            changes.changed.len(),
            changes.removed.len(),
            without_check(),
        );
    }
}

/// This run's command without `--check`, to copy: under a pre-commit hook, which puts the
/// hook's arguments and no file names after `kvrender build --check`, the user never saw it.
fn without_check() -> String {
    std::iter::once("kvrender".to_string())
        .chain(
            std::env::args_os()
                .skip(1)
                .filter(|a| a != "--check")
                .map(|a| crate::load::shell_word(&a.to_string_lossy())),
        )
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_catalog_object(v: &Value) -> bool {
    BUNDLES
        .iter()
        .filter_map(|(_, kind)| *kind)
        .any(|k| v.get("kind").and_then(Value::as_str) == Some(k))
}

/// Load `sources` and run the engine over them: the engine's result and the loading
/// findings. Unless only the catalog is built, the VM documents are read one at a time on the
/// workers (see [`engine::build_deferring_vms`]), or, when one of them is not a VM after all,
/// with everything else.
fn process(
    sources: &[load::Source],
    config: &FnConfig,
    catalog_sources: &[load::Source],
    parsing: Parsing,
) -> (engine::Processed, Vec<diagnostic::Diagnostic>) {
    // Only VMs to expand are worth taking one at a time (`--catalog-only` expands none).
    let parsing = match config.expand {
        ExpandMode::Replace => parsing,
        _ => Parsing::Whole,
    };
    if parsing == Parsing::VmsOnWorkers {
        let (loaded, vms) = load::deferred::load_deferring_vms(sources);
        if let Ok(processed) =
            engine::build_deferring_vms(loaded.objects, &vms, config, catalog_sources)
        {
            return (processed, loaded.diagnostics);
        }
    }
    let loaded = load::parse_sources(sources);
    let processed = engine::process_read(loaded.objects, config, Placement::Build, catalog_sources);
    (processed, loaded.diagnostics)
}

/// The files of `-o DIR`, each object's document taken from `printed` when it was printed
/// already. An object that cannot be written is named with where `locate` finds it.
fn one_file_per_object(
    items: &[Value],
    printed: Vec<Option<String>>,
    locate: &dyn Fn(&Value) -> Option<String>,
) -> Result<BTreeMap<String, String>> {
    let named = |item: &Value| match locate(item) {
        Some(at) => format!("{} (at {at})", describe(item)),
        None => describe(item),
    };
    let mut printed = printed.into_iter();
    let mut tree = BTreeMap::new();
    let mut first_of: BTreeMap<String, usize> = BTreeMap::new();
    for (i, (item, name)) in items
        .iter()
        .zip(files::kustomize_file_names(items))
        .enumerate()
    {
        // A name given by the API server at creation names no file.
        if crate::model::path::str_at(item, &["metadata", "name"]).is_none_or(str::is_empty) {
            let notes: Vec<String> =
                crate::model::path::str_at(item, &["metadata", "generateName"])
                    .map(|g| format!("only `generateName: {g}`"))
                    .into_iter()
                    .chain(locate(item).map(|at| format!("at {at}")))
                    .collect();
            let notes = if notes.is_empty() {
                String::new()
            } else {
                format!(" ({})", notes.join(", "))
            };
            return Err(crate::error::Error::Usage(format!(
                "{}{notes} has no `metadata.name`: `-o DIR` writes each object to a file \
                 named after it (kustomize refuses an object without a name too); give it a \
                 name, or print the stream without `-o`",
                describe(item)
            )));
        }
        if let Some(&first) = first_of.get(&name) {
            let name_of = |v: &Value| {
                crate::model::path::str_at(v, &["metadata", "name"])
                    .unwrap_or("")
                    .to_string()
            };
            return Err(crate::error::Error::Usage(format!(
                "{} and {} would be written to the same file `{name}` (file names are \
                 lower-cased, every character outside `[a-z0-9._-]` becomes `_`, and a name \
                 is cut at 240 characters){}: rename one of them",
                named(&items[first]),
                named(item),
                where_they_differ(&name_of(&items[first]), &name_of(item))
            )));
        }
        first_of.insert(name.clone(), i);
        let document = match printed.next().flatten() {
            Some(document) => document,
            None => emit::stream_document(item),
        };
        tree.insert(name, document);
    }
    Ok(tree)
}

/// The file and line of the name of the input document `item` was read from (of its
/// `metadata` when it has no name), among the inputs parsed again (`loaded`), which only an
/// object `-o` cannot write asks for; `None` for a rendered object.
fn read_at(loaded: &load::Loaded, item: &Value) -> Option<String> {
    let wanted = describe(item);
    loaded
        .objects
        .iter()
        .find(|obj| describe(&obj.value) == wanted)
        .map(|obj| obj.field_origin("metadata.name").to_string())
}

/// Where two long object names first differ, since findings shorten a long name to its start:
/// `; the names differ from character 281 on (`...-one` and `...-two`)`. Nothing for names
/// findings print whole.
fn where_they_differ(one: &str, other: &str) -> String {
    if one.chars().count().max(other.chars().count()) <= 64 {
        return String::new();
    }
    let same = one
        .chars()
        .zip(other.chars())
        .take_while(|(a, b)| a == b)
        .count();
    let rest = |name: &str| -> String {
        let tail: String = name.chars().skip(same).take(40).collect();
        format!("...{}", tail.escape_debug())
    };
    format!(
        "; the names differ from character {} on (`{}` and `{}`)",
        same + 1,
        rest(one),
        rest(other)
    )
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

/// The release bundles of the catalog objects among `items`, sorted by kind, then name (then
/// namespace), as upstream's are. With a `version`, each bundle is named as upstream names its
/// release assets (`common-instancetypes-all-bundle-v1.4.0.yaml`), and `CHECKSUMS.sha256`
/// names them so; its lines follow the file names' order, as `sha256sum` over a glob writes
/// them.
fn bundles(items: &[Value], version: Option<&str>) -> Result<BTreeMap<String, String>> {
    fn str_at<'v>(v: &'v Value, path: &[&str]) -> &'v str {
        crate::model::path::get(v, path)
            .and_then(Value::as_str)
            .unwrap_or("")
    }
    let mut catalog: Vec<&Value> = items.iter().filter(|v| is_catalog_object(v)).collect();
    if catalog.is_empty() {
        return Err(crate::error::Error::Usage(
            "--bundles: no instancetype or preference among the inputs or rendered from them, \
             so every bundle would be empty; name the catalog (`kvrender build --bundles -o DIR \
             catalog/`)"
                .to_string(),
        ));
    }
    // In the stream's order: an object without a namespace counts as in `default`.
    catalog.sort_by_key(|v| {
        let namespace = str_at(v, &["metadata", "namespace"]);
        (
            str_at(v, &["kind"]),
            str_at(v, &["metadata", "name"]),
            if namespace.is_empty() {
                "default"
            } else {
                namespace
            },
        )
    });
    let mut tree = BTreeMap::new();
    for (file, kind) in BUNDLES {
        let selected = catalog.iter().copied().filter(|v| match kind {
            None => true,
            Some(k) => str_at(v, &["kind"]) == k,
        });
        let name = match version {
            Some(version) => file.replace(".yaml", &format!("-{version}.yaml")),
            None => file.to_string(),
        };
        tree.insert(name, emit::yaml_stream(selected));
    }
    let mut checksums = String::new();
    for (file, text) in &tree {
        let digest = Sha256::digest(text.as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        let _ = writeln!(checksums, "{hex}  {file}");
    }
    tree.insert("CHECKSUMS.sha256".to_string(), checksums);
    Ok(tree)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::cli::Command;
    use crate::commands::testing::{cases, command, repo};

    #[test]
    fn long_names_that_collide_are_told_apart() {
        let long = "a".repeat(280);
        let items = [
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("{long}-one")}}),
            serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("{long}-two")}}),
        ];
        let error = one_file_per_object(&items, vec![None, None], &|_| None)
            .unwrap_err()
            .to_string();
        // 280 `a`s and `-` are alike.
        assert!(
            error.contains(
                "; the names differ from character 282 on (`...one` and `...two`): rename"
            ),
            "{error}"
        );
        assert_eq!(where_they_differ("a", "b"), "");
    }

    fn args(paths: &[PathBuf], extra: &[&str]) -> BuildArgs {
        let flags: Vec<&str> = ["build"].into_iter().chain(extra.iter().copied()).collect();
        match command(&flags, paths) {
            Command::Build(args) => args,
            _ => unreachable!("a build command"),
        }
    }

    /// The files under `dir`, by relative path, with their text.
    fn files_under(dir: &Path) -> BTreeMap<String, String> {
        walkdir::WalkDir::new(dir)
            .sort_by_file_name()
            .into_iter()
            .map(|e| e.expect("an entry"))
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                let name = e.path().strip_prefix(dir).expect("below dir");
                let text = std::fs::read_to_string(e.path()).expect("a written file");
                (name.display().to_string(), text)
            })
            .collect()
    }

    #[test]
    fn building_vms_on_the_workers_gives_what_building_them_whole_gives() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).expect("written");
            path
        };
        let vm = |name: &str, more: &str| {
            format!(
                "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: {name}\n\
                 {more}spec:\n  instancetype: {{name: u1.small}}\n  preference: {{name: fedora}}\n\
                 \x20 template: {{spec: {{domain: {{devices: {{}}}}}}}}\n"
            )
        };
        // A VM document that does not parse: the run takes the inputs parsed whole.
        let broken = write(
            "broken.yaml",
            &format!(
                "{}---\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {{name: b}}\n\
                 spec: {{template: [oops\n",
                vm("a", "")
            ),
        );
        // Two VMs of one name, one of them inside a `List` (parsed up front), a VM marked
        // local configuration (expanded, never printed), and a VM among other objects.
        let mixed = write(
            "mixed.yaml",
            &format!(
                "{}---\n{}---\napiVersion: v1\nkind: List\nitems:\n- {}---\n\
                 apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\n---\n{}",
                vm("one", ""),
                vm(
                    "local",
                    "  annotations: {config.kubernetes.io/local-config: \"true\"}\n"
                ),
                vm("one", "").replace('\n', "\n  ").trim_end(),
                vm("two", "  namespace: other\n"),
            ),
        );
        // A VM whose reference is not found, and one with a field of the wrong type.
        let failing = write(
            "failing.yaml",
            &format!(
                "{}---\n{}",
                vm("lost", "").replace("u1.small", "u9.nothing"),
                vm("typed", "").replace("devices: {}", "devices: {disks: 3}"),
            ),
        );
        let mut sets: Vec<(Vec<PathBuf>, Vec<&str>)> = vec![
            (vec![repo("examples")], vec![]),
            (
                vec![
                    repo("catalog"),
                    repo("examples/catalog"),
                    repo("examples/vms"),
                ],
                vec![],
            ),
            (vec![broken], vec![]),
            (vec![mixed], vec![]),
            (vec![failing], vec![]),
            (vec![repo("examples")], vec!["--catalog-only"]),
        ];
        sets.extend(
            cases("testdata/conformance/expand")
                .into_iter()
                .map(|case| (vec![case.join("input.yaml")], vec!["--no-default-catalog"])),
        );
        let (mut printed, mut failed) = (0, 0);
        for (paths, extra) in &sets {
            let args = args(paths, extra);
            let on_workers = run(&args).expect("the run ends");
            let whole = run_parsing(&args, Parsing::Whole).expect("the run ends");
            let what = format!("{paths:?} {extra:?}");
            assert_eq!(
                on_workers.stdout_parts.concat(),
                whole.stdout_parts.concat(),
                "{what}"
            );
            assert_eq!(on_workers.diagnostics, whole.diagnostics, "{what}");
            assert_eq!(on_workers.exit, whole.exit, "{what}");
            printed += whole
                .stdout_parts
                .concat()
                .matches("kind: VirtualMachine\n")
                .count();
            failed += usize::from(whole.exit != 0);
        }
        assert!(printed > 200, "{printed} VMs printed");
        assert!(failed > 10, "{failed} runs failed");

        // Written one file per object, from the documents printed on the workers.
        let clean = write(
            "clean.yaml",
            &format!(
                "{}---\n{}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c}}\n---\n{}",
                vm("one", ""),
                vm(
                    "local",
                    "  annotations: {config.kubernetes.io/local-config: \"true\"}\n"
                ),
                vm("two", "  namespace: other\n"),
            ),
        );
        let out = dir.path().join("out");
        let whole_out = dir.path().join("whole");
        let to = |o: &Path| {
            args(
                std::slice::from_ref(&clean),
                &["-o", &o.display().to_string()],
            )
        };
        run(&to(&out)).expect("the run ends");
        run_parsing(&to(&whole_out), Parsing::Whole).expect("the run ends");
        let (files, whole_files) = (files_under(&out), files_under(&whole_out));
        assert_eq!(files, whole_files);
        assert_eq!(
            files.keys().map(String::as_str).collect::<Vec<_>>(),
            [
                ".kvrender-output",
                "default_kubevirt.io_v1_virtualmachine_one.yaml",
                "default_v1_configmap_c.yaml",
                "other_kubevirt.io_v1_virtualmachine_two.yaml",
            ]
        );
    }

    /// Directories are told apart by what they are: a second path to one directory (a bind
    /// mount) is that directory, and so are its ancestors' second paths.
    #[test]
    fn placing_follows_identity_not_spelling() {
        // `/mnt/view` shows `/repo/vms`: the two share an identity.
        let identity = |p: &Path| -> Option<&str> {
            match p.to_str()? {
                "/repo/vms" | "/mnt/view" => Some("vms"),
                "/repo" => Some("repo"),
                "/mnt" => Some("mnt"),
                "/" => Some("root"),
                _ => None,
            }
        };
        let placing =
            |out: &str, input: &str| Placing::of(Path::new(out), Path::new(input), identity);
        assert_eq!(placing("/mnt/view", "/repo/vms"), Placing::Same);
        assert_eq!(placing("/repo/vms", "/mnt/view"), Placing::Same);
        assert_eq!(
            placing("/mnt/view", "/repo/vms/fedora.yaml"),
            Placing::Holds
        );
        assert_eq!(placing("/mnt/view/out", "/repo/vms"), Placing::Inside);
        assert_eq!(placing("/repo", "/mnt/view"), Placing::Apart);
        assert_eq!(placing("/mnt/view", "/repo"), Placing::Apart);
        // Without identities, the text decides.
        let none = |_: &Path| -> Option<u8> { None };
        for (out, input, wanted) in [
            ("/a", "/a", Placing::Same),
            ("/a", "/a/b", Placing::Holds),
            ("/a/b", "/a", Placing::Inside),
            ("/a", "/b", Placing::Apart),
        ] {
            assert_eq!(
                Placing::of(Path::new(out), Path::new(input), none),
                wanted,
                "{out} {input}"
            );
        }
    }
}

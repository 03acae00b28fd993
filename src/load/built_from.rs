//! Findings about kustomize's output, moved to the files its objects came from.
//!
//! `kubectl kustomize overlays/prod | kvrender validate -` reads one stream, so every finding
//! points at a line of that stream (`-:35`), which is nowhere in the repository. A kustomization
//! with `buildMetadata: [originAnnotations]` marks each object it read from a file with
//! `config.kubernetes.io/origin: "path: ../../base/vm.yaml\n"`, relative to the directory that
//! was built. Given that directory (`--built-from overlays/prod`), each finding about such an
//! object moves to that file (`base/vm.yaml`), to the document of the same kind whose name the
//! output's name holds (a `namePrefix` or `nameSuffix` only adds to it), and to the line of the
//! finding's field there (or of its deepest parent the file has). A field the file does not
//! have although the output does came from the overlay (a patch, a transformer): the finding
//! says so. Objects from remote bases (`repo:`), generated ones and files that cannot be read
//! keep their place in the stream.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::{Source, locate, parse_bytes};
use crate::diagnostic::Diagnostic;
use crate::krm::annotations::ORIGIN;
use crate::model::Object;
use crate::origin::Origin;

/// `base` joined with `rel`, `.` and `..` resolved in the text; a `..` above the start is kept.
fn join(base: &Path, rel: &str) -> PathBuf {
    let mut parts: Vec<Component<'_>> = Vec::new();
    for part in base.components().chain(Path::new(rel).components()) {
        match part {
            Component::CurDir => {}
            Component::ParentDir => match parts.last() {
                Some(Component::Normal(_)) => {
                    parts.pop();
                }
                // `/..` is `/`.
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => parts.push(part),
            },
            // An absolute `rel` replaces what came before, as `Path::join` does.
            Component::RootDir | Component::Prefix(_) => {
                parts.clear();
                parts.push(part);
            }
            Component::Normal(_) => parts.push(part),
        }
    }
    let out: PathBuf = parts.iter().collect();
    if out.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        out
    }
}

/// The local file kustomize's origin annotation names: its `path:` line, unless it also names a
/// remote repository (`repo:`) or the object was generated (`configuredIn:`, no `path:`).
fn origin_path(value: &Value) -> Option<String> {
    let origin = value
        .get("metadata")?
        .get("annotations")?
        .get(ORIGIN)?
        .as_str()?;
    let field = |key: &str| {
        origin.lines().find_map(|line| {
            let rest = line.strip_prefix(key)?.strip_prefix(':')?.trim();
            let rest = rest.trim_matches(|c| c == '"' || c == '\'');
            (!rest.is_empty()).then_some(rest)
        })
    };
    if field("repo").is_some() {
        return None;
    }
    field("path").map(str::to_owned)
}

/// Whether `value` has the field at `steps`.
fn has_field(value: &Value, steps: &[locate::Step<'_>]) -> bool {
    let mut at = value;
    for step in steps {
        let next = match step {
            locate::Step::Key(key) => at.get(*key),
            locate::Step::Index(i) => at.get(*i),
        };
        match next {
            Some(v) => at = v,
            None => return false,
        }
    }
    true
}

/// The document of `objects` that `built` (an object of kustomize's output) was made from: the
/// one of its kind with its name; else the one of its kind whose name the output's name holds
/// (the longest such, as a prefix or suffix only adds to it); else the only one of its kind.
fn source_of<'a>(objects: &'a [Object], built: &Object) -> Option<&'a Object> {
    let same_kind: Vec<&Object> = objects
        .iter()
        .filter(|o| o.kind_str() == built.kind_str())
        .collect();
    if let Some(exact) = same_kind.iter().find(|o| o.name() == built.name()) {
        return Some(exact);
    }
    let held = same_kind
        .iter()
        .filter(|o| !o.name().is_empty() && built.name().contains(o.name()))
        .max_by_key(|o| o.name().len());
    match (held, same_kind.as_slice()) {
        (Some(o), _) => Some(o),
        (None, [only]) => Some(only),
        _ => None,
    }
}

/// Where the findings about one document of the stream go: the file's path as shown, the
/// file's document, and the stream's object.
type Move = (Arc<str>, Object, Object);

/// Move the findings about documents of `sources` that carry kustomize's origin annotation to
/// the files under `root` they came from (see the module's documentation), then put the
/// findings back in printing order.
pub fn map_to_sources(diags: &mut [Diagnostic], sources: &[Source], root: &Path) {
    // The documents findings are about, by file and position.
    let mut wanted: HashMap<&str, HashSet<usize>> = HashMap::new();
    for d in diags.iter() {
        wanted
            .entry(&d.origin.path)
            .or_default()
            .insert(d.origin.index);
    }
    // Each source file parsed once, and per document of the stream (by path and position) the
    // file's document it came from and the stream's object itself.
    let mut files: HashMap<PathBuf, Vec<Object>> = HashMap::new();
    let mut moves: HashMap<(Arc<str>, usize), Move> = HashMap::new();
    for source in sources {
        let Some(indexes) = wanted.get(&*source.path) else {
            continue;
        };
        if memchr::memmem::find(&source.bytes, ORIGIN.as_bytes()).is_none() {
            continue;
        }
        let stream = parse_bytes(&source.path, &source.bytes);
        for built in stream.objects {
            if !indexes.contains(&built.origin.index) {
                continue;
            }
            let Some(rel) = origin_path(&built.value) else {
                continue;
            };
            let file = join(root, &rel);
            let objects = files.entry(file.clone()).or_insert_with(|| {
                // Only a file, of a size the loader would read: the annotation is input, and
                // `path: /dev/zero` never ends.
                let readable = std::fs::metadata(&file)
                    .is_ok_and(|m| m.is_file() && m.len() <= super::MAX_STREAM);
                let shown: Arc<str> = file.to_string_lossy().into();
                readable
                    .then(|| std::fs::read(&file).ok())
                    .flatten()
                    .map(|bytes| parse_bytes(&shown, &bytes).objects)
                    .unwrap_or_default()
            });
            if let Some(found) = source_of(objects, &built) {
                let key = (Arc::clone(&source.path), built.origin.index);
                let shown = Arc::clone(&found.origin.path);
                moves.insert(key, (shown, found.clone(), built));
            }
        }
    }
    if moves.is_empty() {
        return;
    }
    for d in diags.iter_mut() {
        let key = (Arc::clone(&d.origin.path), d.origin.index);
        let Some((file, found, built)) = moves.get(&key) else {
            continue;
        };
        let was = d.origin.clone();
        let line = match &d.field {
            Some(field) => {
                let steps = locate::parse_path(field);
                if has_field(&built.value, &steps) && !has_field(&found.value, &steps) {
                    d.message.push_str(&format!(
                        " (`{field}` is not in this file: a patch or transformer of the \
                         kustomization that was built sets it; kustomize's output has it at \
                         {was})"
                    ));
                }
                found.steps_line(&steps).or(found.origin.line)
            }
            None => found.origin.line,
        };
        d.origin = Origin::new(Arc::clone(file), found.origin.index, line);
        d.column = None;
    }
    diags.sort_by(Diagnostic::sort_key_cmp);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_join_as_kustomize_wrote_them() {
        let j = |base: &str, rel: &str| join(Path::new(base), rel).display().to_string();
        assert_eq!(j("overlays/prod", "../../base/vm.yaml"), "base/vm.yaml");
        assert_eq!(j("overlays/prod", "extra.yaml"), "overlays/prod/extra.yaml");
        assert_eq!(j(".", "vm.yaml"), "vm.yaml");
        assert_eq!(j("prod", "../../shared/vm.yaml"), "../shared/vm.yaml");
        assert_eq!(
            j("/repo/overlays/prod", "../../base/vm.yaml"),
            "/repo/base/vm.yaml"
        );
        assert_eq!(j("/", "../vm.yaml"), "/vm.yaml");
    }

    #[test]
    fn the_origin_names_a_local_file_only() {
        let with =
            |origin: &str| serde_json::json!({"metadata": {"annotations": {ORIGIN: origin}}});
        assert_eq!(
            origin_path(&with("path: ../../base/vm.yaml\n")).as_deref(),
            Some("../../base/vm.yaml")
        );
        assert_eq!(
            origin_path(&with("path: \"a b.yaml\"\n")).as_deref(),
            Some("a b.yaml")
        );
        let remote = "path: examples/vm.yaml\nrepo: https://github.com/example/vms\nref: v1\n";
        assert_eq!(origin_path(&with(remote)), None);
        let generated =
            "configuredIn: kustomization.yaml\nconfiguredBy:\n  kind: ConfigMapGenerator\n";
        assert_eq!(origin_path(&with(generated)), None);
        assert_eq!(origin_path(&serde_json::json!({"metadata": {}})), None);
    }

    fn objects(text: &str) -> Vec<Object> {
        parse_bytes(&Arc::from("f.yaml"), text.as_bytes()).objects
    }

    #[test]
    fn the_source_document_is_found_by_kind_and_name() {
        let file = objects(
            "apiVersion: v1\nkind: VirtualMachine\nmetadata: {name: web}\n---\napiVersion: v1\nkind: VirtualMachine\nmetadata: {name: web-db}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: web-db}\n",
        );
        let built = |kind: &str, name: &str| {
            objects(&format!(
                "apiVersion: v1\nkind: {kind}\nmetadata: {{name: {name}}}\n"
            ))
            .remove(0)
        };
        let found = |kind, name| source_of(&file, &built(kind, name)).map(|o| o.origin.index);
        assert_eq!(found("VirtualMachine", "web"), Some(0));
        assert_eq!(found("VirtualMachine", "prod-web-db-v2"), Some(1));
        assert_eq!(found("VirtualMachine", "prod-web"), Some(0));
        assert_eq!(found("VirtualMachine", "other"), None);
        // The only Service of the file, whatever the output calls it.
        assert_eq!(found("Service", "renamed"), Some(2));
        assert_eq!(found("ConfigMap", "web"), None);
    }
}

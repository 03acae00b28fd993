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
//! says so. An object a `configMapGenerator` or `secretGenerator` made (`configuredIn:
//! kustomization.yaml`) moves to that generator's entry in the kustomization file, at its
//! `options.labels` or `options.annotations` key when the finding is about a label or an
//! annotation. Objects from remote bases (`repo:`) and files that cannot be read keep their
//! place in the stream.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, OnceLock};

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

/// What kustomize's origin annotation says of an object.
#[derive(Debug, PartialEq, Eq)]
enum Made {
    /// Read from this local file (its `path:`).
    Read(String),
    /// Made by a generator of this kustomization file (its `configuredIn:`), of this kind
    /// (`configuredBy.kind`, e.g. `ConfigMapGenerator`).
    Generated(String, String),
}

/// What the origin annotation of `value` says, unless it names a remote repository (`repo:`).
fn made(value: &Value) -> Option<Made> {
    let origin = value
        .get("metadata")?
        .get("annotations")?
        .get(ORIGIN)?
        .as_str()?;
    let origin = super::yaml::parse_document(origin).ok()?;
    let text = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    if origin.get("repo").is_some() {
        return None;
    }
    if let Some(path) = text(origin.get("path")) {
        return Some(Made::Read(path));
    }
    let file = text(origin.get("configuredIn"))?;
    let kind = text(origin.get("configuredBy").and_then(|b| b.get("kind"))).unwrap_or_default();
    Some(Made::Generated(file, kind))
}

/// The text of a file an origin annotation names: only a file, of a size the loader would read
/// (the annotation is input, and `path: /dev/zero` never ends).
fn read(file: &Path) -> Option<String> {
    let readable =
        std::fs::metadata(file).is_ok_and(|m| m.is_file() && m.len() <= super::MAX_STREAM);
    readable
        .then(|| std::fs::read_to_string(file).ok())
        .flatten()
}

/// Where in a kustomization file (`text`) the generator that made `built` is: the steps to its
/// entry (`configMapGenerator[1]`), and to the field of that entry the finding's `field` of the
/// generated object comes from (its labels and annotations: `options.labels.tier`).
fn generator_steps(text: &str, kind: &str, built: &Object, field: Option<&str>) -> Vec<String> {
    let list = match kind {
        "ConfigMapGenerator" => "configMapGenerator",
        "SecretGenerator" => "secretGenerator",
        _ => return Vec::new(),
    };
    let Ok(kustomization) = super::yaml::parse_document(text) else {
        return Vec::new();
    };
    let Some(entries) = kustomization.get(list).and_then(Value::as_array) else {
        return Vec::new();
    };
    // The entry whose name the generated name holds (a prefix, a suffix and a hash add to it).
    let entry = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| Some((i, e.get("name")?.as_str()?)))
        .filter(|(_, name)| !name.is_empty() && built.name().contains(name))
        .max_by_key(|(_, name)| name.len());
    let Some((i, _)) = entry else {
        return vec![list.to_owned()];
    };
    let mut steps = vec![list.to_owned(), format!("[{i}]")];
    if let Some(field) = field {
        let parts = locate::parse_path(field);
        if let [
            locate::Step::Key("metadata"),
            locate::Step::Key(map @ ("labels" | "annotations")),
            locate::Step::Key(key),
            ..,
        ] = parts.as_slice()
        {
            steps.extend([
                "options".to_owned(),
                (*map).to_owned(),
                format!("[{key:?}]"),
            ]);
        }
    }
    steps
}

/// A step of a field path, owned.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Owned {
    Key(String),
    Index(usize),
}

impl Owned {
    fn of(step: &locate::Step<'_>) -> Owned {
        match step {
            locate::Step::Key(k) => Owned::Key((*k).to_owned()),
            locate::Step::Index(i) => Owned::Index(*i),
        }
    }

    fn step(&self) -> locate::Step<'_> {
        match self {
            Owned::Key(k) => locate::Step::Key(k),
            Owned::Index(i) => locate::Step::Index(*i),
        }
    }
}

/// The most fields of a finding's subtree looked at to find the one its line is on.
const POINTED_SEARCH: usize = 256;

/// The path of the field a finding about `field` points at in the stream (its `line`): the
/// field itself, or one below it (a rule may point at a matcher's `name:` while naming the
/// matcher), found among the field's descendants, nearest first; the field itself when none
/// is on that line.
fn pointed_at(built: &Object, field: &[locate::Step<'_>], line: Option<u32>) -> Vec<Owned> {
    let start: Vec<Owned> = field.iter().map(Owned::of).collect();
    let Some(line) = line else {
        return start;
    };
    let line_of = |path: &[Owned]| {
        let steps: Vec<locate::Step<'_>> = path.iter().map(Owned::step).collect();
        built.steps_line(&steps)
    };
    let at = |path: &[Owned]| {
        path.iter().try_fold(&built.value, |v, step| match step {
            Owned::Key(k) => v.get(k.as_str()),
            Owned::Index(i) => v.get(*i),
        })
    };
    let mut queue = std::collections::VecDeque::from([start.clone()]);
    let mut looked = 0;
    while let Some(path) = queue.pop_front() {
        if line_of(&path) == Some(line) {
            return path;
        }
        looked += 1;
        if looked >= POINTED_SEARCH {
            break;
        }
        let child = |step: Owned| {
            let mut p = path.clone();
            p.push(step);
            p
        };
        match at(&path) {
            Some(Value::Object(map)) => {
                queue.extend(map.keys().map(|k| child(Owned::Key(k.clone()))))
            }
            Some(Value::Array(items)) => {
                queue.extend((0..items.len()).map(|i| child(Owned::Index(i))))
            }
            _ => {}
        }
    }
    start
}

/// The documents of one kind of a file, by name.
#[derive(Default)]
struct OfKind {
    /// Their positions in the file, in order.
    all: Vec<usize>,
    /// The documents of each name.
    names: HashMap<String, Named>,
    /// The lengths of the names other than the empty one, longest first.
    lengths: Vec<usize>,
}

/// The documents of one kind and name of a file.
#[derive(Default)]
struct Named {
    /// Their positions in the file, in order.
    all: Vec<usize>,
    /// Their positions in the file, in order, by namespace (those that have one).
    namespaces: HashMap<String, Vec<usize>>,
}

/// The documents of a file by kind, name and namespace: what [`Index::source_of`] looks up
/// for each object of kustomize's output, without going through the whole file each time.
struct Index {
    kinds: HashMap<String, OfKind>,
}

impl Index {
    /// The index of `objects`, the documents of one file.
    fn new(objects: &[Object]) -> Index {
        let mut kinds: HashMap<String, OfKind> = HashMap::new();
        for (at, object) in objects.iter().enumerate() {
            let kind = kinds.entry(object.kind_str().to_owned()).or_default();
            kind.all.push(at);
            let named = kind.names.entry(object.name().to_owned()).or_default();
            named.all.push(at);
            if let Some(namespace) = object.namespace() {
                named
                    .namespaces
                    .entry(namespace.to_owned())
                    .or_default()
                    .push(at);
            }
        }
        for kind in kinds.values_mut() {
            let lengths: BTreeSet<usize> = kind
                .names
                .keys()
                .map(String::len)
                .filter(|len| *len > 0)
                .collect();
            kind.lengths = lengths.into_iter().rev().collect();
        }
        Index { kinds }
    }

    /// The position in the file of the document that `built` (an object of kustomize's
    /// output) was made from: one of its kind with its name; else one of its kind whose name
    /// the output's name holds (the longest such, as a prefix or suffix only adds to it; of two
    /// as long, the one whose last document comes later); else the only one of its kind. Where
    /// several share that name (one per namespace, say), the one in the output's namespace;
    /// else the `rank`-th, `rank` being how many objects of the output came before `built`
    /// from the same file with its kind and name, as kustomize keeps the order of a file's
    /// documents.
    fn source_of(&self, built: &Object, rank: usize) -> Option<usize> {
        let kind = self.kinds.get(built.kind_str())?;
        let named = kind
            .names
            .get(built.name())
            .or_else(|| kind.held_by(built.name()));
        let Some(named) = named else {
            return match kind.all.as_slice() {
                [only] => Some(*only),
                _ => None,
            };
        };
        if let Some(namespace) = built.namespace()
            && let Some([one]) = named.namespaces.get(namespace).map(Vec::as_slice)
        {
            return Some(*one);
        }
        named.all.get(rank).or(named.all.first()).copied()
    }
}

impl OfKind {
    /// The documents of the longest name other than the empty one that `name` holds (of two
    /// as long, the one whose last document comes later). It is found the way that takes fewer
    /// steps: looking up each piece of `name` as long as some name of the file, the longest
    /// first (few steps for a short name), or looking for each name of the file in `name` (few
    /// for a file of few names).
    fn held_by(&self, name: &str) -> Option<&Named> {
        let lengths = || {
            self.lengths
                .iter()
                .copied()
                .filter(|len| *len <= name.len())
        };
        let pieces = lengths().fold(0usize, |sum, len| sum.saturating_add(name.len() - len + 1));
        let later = |named: &&Named| named.all.last().copied();
        if pieces < self.names.len() {
            // The names of the file are UTF-8: a piece that is not cannot be one of them.
            lengths().find_map(|len| {
                name.as_bytes()
                    .windows(len)
                    .filter_map(|piece| std::str::from_utf8(piece).ok())
                    .filter_map(|piece| self.names.get(piece))
                    .max_by_key(later)
            })
        } else {
            self.names
                .iter()
                .filter(|(held, _)| !held.is_empty() && name.contains(held.as_str()))
                .max_by_key(|(held, named)| (held.len(), later(named)))
                .map(|(_, named)| named)
        }
    }
}

/// A file an origin annotation names: its path as shown, its text, its documents, and their
/// [`Index`] (made when an object read from the file first needs it).
struct SourceFile {
    shown: Arc<str>,
    text: Arc<str>,
    objects: Vec<Object>,
    index: OnceLock<Index>,
}

/// Where the findings about one document of the stream go.
enum Move {
    /// To the document of a file it was read from (the file, the document's position there,
    /// and the stream's object).
    Read(Arc<SourceFile>, usize, Object),
    /// To the kustomization file whose generator made it: the file's path as shown, its text,
    /// and the dotted path of the generator's entry there (see [`generator_steps`]), by the
    /// finding's field.
    Generated(Arc<str>, Arc<str>, String, Object),
}

/// With `--built-from ROOT`, move the findings about documents of `sources` that carry
/// kustomize's origin annotation to the files under `root` they came from (see the module's
/// documentation), then put the findings back in printing order.
pub fn map_to_sources(diags: &mut [Diagnostic], sources: &[Source], root: Option<&Path>) {
    let Some(root) = root else {
        return;
    };
    // The documents findings are about, by file and position.
    let mut wanted: HashMap<&str, HashSet<usize>> = HashMap::new();
    for d in diags.iter() {
        wanted
            .entry(&d.origin.path)
            .or_default()
            .insert(d.origin.index);
    }
    // Each file read once (its text, and its documents parsed and indexed), and per document of
    // the stream (by path and position) where its findings go.
    let mut files: HashMap<PathBuf, Option<Arc<SourceFile>>> = HashMap::new();
    let mut moves: HashMap<(Arc<str>, usize), Move> = HashMap::new();
    for source in sources {
        let Some(indexes) = wanted.get(&*source.path) else {
            continue;
        };
        if memchr::memmem::find(&source.bytes, ORIGIN.as_bytes()).is_none() {
            continue;
        }
        let stream = parse_bytes(&source.path, &source.bytes);
        // How many objects of each file, kind and name came before, in the stream's order.
        let mut seen: HashMap<(String, String, String), usize> = HashMap::new();
        for built in stream.objects {
            let Some(made) = made(&built.value) else {
                continue;
            };
            let rank = {
                let (Made::Read(rel) | Made::Generated(rel, _)) = &made;
                let key = (
                    rel.clone(),
                    built.kind_str().to_owned(),
                    built.name().to_owned(),
                );
                let count = seen.entry(key).or_default();
                *count += 1;
                *count - 1
            };
            if !indexes.contains(&built.origin.index) {
                continue;
            }
            let (Made::Read(rel) | Made::Generated(rel, _)) = &made;
            let file = join(root, rel);
            let read = files.entry(file.clone()).or_insert_with(|| {
                let text: Arc<str> = read(&file)?.into();
                let shown: Arc<str> = file.to_string_lossy().into();
                let objects = parse_bytes(&shown, text.as_bytes()).objects;
                Some(Arc::new(SourceFile {
                    shown,
                    text,
                    objects,
                    index: OnceLock::new(),
                }))
            });
            let Some(read) = read else {
                continue;
            };
            let key = (Arc::clone(&source.path), built.origin.index);
            match made {
                Made::Read(_) => {
                    let index = read.index.get_or_init(|| Index::new(&read.objects));
                    if let Some(found) = index.source_of(&built, rank) {
                        moves.insert(key, Move::Read(Arc::clone(read), found, built));
                    }
                }
                Made::Generated(_, kind) => {
                    let (shown, text) = (Arc::clone(&read.shown), Arc::clone(&read.text));
                    moves.insert(key, Move::Generated(shown, text, kind, built));
                }
            }
        }
    }
    if moves.is_empty() {
        return;
    }
    for d in diags.iter_mut() {
        let key = (Arc::clone(&d.origin.path), d.origin.index);
        let was = d.origin.clone();
        d.origin = match moves.get(&key) {
            None => continue,
            Some(Move::Read(file, found, built)) => {
                let found = &file.objects[*found];
                let field = d.field.as_deref().unwrap_or("");
                let steps = locate::parse_path(field);
                match (
                    locate::field_at(&built.value, &steps),
                    locate::field_at(&found.value, &steps),
                ) {
                    (Some(_), None) => d.message.push_str(&format!(
                        " (`{field}` is not in this file: a patch or transformer of the \
                         kustomization that was built sets it; kustomize's output has it at \
                         {was})"
                    )),
                    // The line here reads otherwise than what was judged.
                    (Some(output), Some(here)) if !field.is_empty() && output != here => {
                        d.message.push_str(&format!(
                            " (`{field}` reads otherwise in this file: a patch or transformer \
                             of the kustomization that was built changes it; kustomize's output \
                             has it at {was})"
                        ));
                    }
                    _ => {}
                }
                let pointed = pointed_at(built, &steps, was.line);
                let pointed: Vec<locate::Step<'_>> = pointed.iter().map(Owned::step).collect();
                let line = found.steps_line(&pointed).or(found.origin.line);
                Origin::new(Arc::clone(&file.shown), found.origin.index, line)
            }
            Some(Move::Generated(file, text, kind, built)) => {
                let steps = generator_steps(text, kind, built, d.field.as_deref());
                let path = steps.join(".").replace(".[", "[");
                let line = locate::field_line(text, 1, &path).or(Some(1));
                Origin::new(Arc::clone(file), 0, line)
            }
        };
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
    fn the_origin_says_how_the_object_was_made() {
        let with =
            |origin: &str| serde_json::json!({"metadata": {"annotations": {ORIGIN: origin}}});
        let read = |path: &str| Some(Made::Read(path.to_owned()));
        assert_eq!(
            made(&with("path: ../../base/vm.yaml\n")),
            read("../../base/vm.yaml")
        );
        assert_eq!(made(&with("path: \"a b.yaml\"\n")), read("a b.yaml"));
        let remote = "path: examples/vm.yaml\nrepo: https://github.com/example/vms\nref: v1\n";
        assert_eq!(made(&with(remote)), None);
        let generated = "configuredIn: kustomization.yaml\nconfiguredBy:\n  apiVersion: builtin\n  kind: ConfigMapGenerator\n";
        assert_eq!(
            made(&with(generated)),
            Some(Made::Generated(
                "kustomization.yaml".into(),
                "ConfigMapGenerator".into()
            ))
        );
        assert_eq!(made(&with("[not, a, mapping]")), None);
        assert_eq!(made(&serde_json::json!({"metadata": {}})), None);
    }

    #[test]
    fn a_generated_object_points_at_its_generator() {
        let kustomization = "resources: [vm.yaml]\nconfigMapGenerator:\n- name: other\n  literals: [a=b]\n- name: settings\n  options:\n    labels:\n      tier: front end\n";
        let built = objects(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: prod-settings-5g2h8m4k7b}\n",
        )
        .remove(0);
        let line = |field: Option<&str>| {
            let steps = generator_steps(kustomization, "ConfigMapGenerator", &built, field);
            let path = steps.join(".").replace(".[", "[");
            locate::field_line(kustomization, 1, &path)
        };
        assert_eq!(line(Some("metadata.labels[\"tier\"]")), Some(8));
        assert_eq!(line(Some("metadata.name")), Some(5));
        assert_eq!(line(None), Some(5));
        // No such generator in the file: its first line.
        assert!(generator_steps(kustomization, "SecretGenerator", &built, None).is_empty());
        assert!(
            generator_steps(kustomization, "HelmChartInflationGenerator", &built, None).is_empty()
        );
    }

    fn objects(text: &str) -> Vec<Object> {
        parse_bytes(&Arc::from("f.yaml"), text.as_bytes()).objects
    }

    fn source_of<'a>(objects: &'a [Object], built: &Object, rank: usize) -> Option<&'a Object> {
        Index::new(objects)
            .source_of(built, rank)
            .map(|at| &objects[at])
    }

    /// What [`Index::source_of`] finds, found by going through every document of the file.
    fn scanned<'a>(objects: &'a [Object], built: &Object, rank: usize) -> Option<&'a Object> {
        let same_kind: Vec<&Object> = objects
            .iter()
            .filter(|o| o.kind_str() == built.kind_str())
            .collect();
        let named = |name: &str| -> Vec<&'a Object> {
            same_kind
                .iter()
                .copied()
                .filter(|o| o.name() == name)
                .collect()
        };
        let mut candidates = named(built.name());
        if candidates.is_empty()
            && let Some(held) = same_kind
                .iter()
                .map(|o| o.name())
                .filter(|name| !name.is_empty() && built.name().contains(name))
                .max_by_key(|name| name.len())
        {
            candidates = named(held);
        }
        if candidates.is_empty() {
            return match same_kind.as_slice() {
                [only] => Some(only),
                _ => None,
            };
        }
        let in_namespace: Vec<&Object> = candidates
            .iter()
            .copied()
            .filter(|o| o.namespace().is_some() && o.namespace() == built.namespace())
            .collect();
        if let [one] = in_namespace.as_slice() {
            return Some(one);
        }
        candidates.get(rank).or(candidates.first()).copied()
    }

    /// Every name of `letters` up to `longest` long, the empty one first.
    fn words(letters: &[&str], longest: usize) -> Vec<String> {
        let mut words = vec![String::new()];
        let mut last = words.clone();
        for _ in 0..longest {
            last = last
                .iter()
                .flat_map(|w| letters.iter().map(move |l| format!("{w}{l}")))
                .collect();
            words.extend(last.iter().cloned());
        }
        words
    }

    /// The index finds the document a pass over the whole file finds, for every output name of
    /// up to five letters of `a` and `é` (a piece of `é` is no name), in no namespace, in one
    /// the file has and in another, at several ranks: in a file that has every name of up to
    /// four letters (several in two namespaces, one without a name), where looking up the
    /// pieces of a name takes fewer steps, and in files of a few names, where looking for each
    /// of them does.
    #[test]
    fn the_index_finds_what_a_pass_over_the_file_finds() {
        let document = |kind: &str, name: &str, namespace: Option<&str>| {
            let namespace = namespace.map_or(String::new(), |ns| format!(", namespace: {ns}"));
            format!("apiVersion: v1\nkind: {kind}\nmetadata: {{name: \"{name}\"{namespace}}}\n")
        };
        let every: Vec<String> = words(&["a", "é"], 4)
            .iter()
            .enumerate()
            .flat_map(|(i, name)| {
                let mut docs = vec![document("VirtualMachine", name, None)];
                if i % 3 == 0 {
                    docs.push(document("VirtualMachine", name, Some("x")));
                    docs.push(document("VirtualMachine", name, Some("y")));
                }
                if i % 5 == 0 {
                    docs.push(document("VirtualMachine", name, Some("x")));
                }
                docs
            })
            .chain([document("Service", "aé", None)])
            .collect();
        let few = [
            document("VirtualMachine", "ée", Some("x")),
            document("VirtualMachine", "aa", None),
            document("VirtualMachine", "éé", None),
            document("VirtualMachine", "aa", Some("y")),
        ];
        let files = [
            every.join("---\n"),
            few.join("---\n"),
            few[1..].join("---\n"),
        ];
        let mut looked = 0;
        for file in &files {
            let file = objects(file);
            let index = Index::new(&file);
            for name in words(&["a", "é"], 5) {
                for namespace in [None, Some("x"), Some("z")] {
                    for kind in ["VirtualMachine", "Service", "ConfigMap"] {
                        let built = objects(&document(kind, &name, namespace)).remove(0);
                        for rank in 0..3 {
                            let found = index.source_of(&built, rank).map(|at| &file[at]);
                            let expected = scanned(&file, &built, rank);
                            assert_eq!(
                                found.map(|o| o.origin.index),
                                expected.map(|o| o.origin.index),
                                "{kind} {name:?} in {namespace:?}, rank {rank}"
                            );
                            looked += usize::from(expected.is_some());
                        }
                    }
                }
            }
        }
        assert!(looked > 1000, "{looked}");
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
        let found = |kind, name| source_of(&file, &built(kind, name), 0).map(|o| o.origin.index);
        assert_eq!(found("VirtualMachine", "web"), Some(0));
        assert_eq!(found("VirtualMachine", "prod-web-db-v2"), Some(1));
        assert_eq!(found("VirtualMachine", "prod-web"), Some(0));
        assert_eq!(found("VirtualMachine", "other"), None);
        // Of two of one name, the one in the output's namespace, else the one of the same rank.
        let twice = objects(
            "apiVersion: v1\nkind: VirtualMachine\nmetadata: {name: web, namespace: a}\n---\napiVersion: v1\nkind: VirtualMachine\nmetadata: {name: web, namespace: b}\n",
        );
        let in_b =
            objects("apiVersion: v1\nkind: VirtualMachine\nmetadata: {name: web, namespace: b}\n")
                .remove(0);
        assert_eq!(source_of(&twice, &in_b, 0).map(|o| o.origin.index), Some(1));
        let elsewhere = built("VirtualMachine", "web");
        assert_eq!(
            source_of(&twice, &elsewhere, 0).map(|o| o.origin.index),
            Some(0)
        );
        assert_eq!(
            source_of(&twice, &elsewhere, 1).map(|o| o.origin.index),
            Some(1)
        );
        assert_eq!(
            source_of(&twice, &elsewhere, 5).map(|o| o.origin.index),
            Some(0)
        );
        // The only Service of the file, whatever the output calls it.
        assert_eq!(found("Service", "renamed"), Some(2));
        assert_eq!(found("ConfigMap", "web"), None);
    }
}

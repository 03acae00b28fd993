//! The files a kustomization names that are not resources.
//!
//! A kustomize tree keeps its patches, replacement and transformer configurations, generator
//! inputs and Helm charts beside its resources, as `*.yaml` files. A patch of a VirtualMachine
//! looks like a VirtualMachine with most of it missing; read as one, it would be a second
//! definition of the VM and a broken one. kvrender therefore leaves out every file that a
//! `kustomization.yaml` (`.yml`, `Kustomization`) in the file's folder or above names in one
//! of those roles, wherever the file was found: in a walked directory or named on the command
//! line. A file that a kustomization also lists under `resources` (or `components`) stays.
//! So does it leave out the files of a Helm chart, which become manifests only once Helm
//! renders them.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

/// The kustomization file names kustomize looks for, in its order.
const NAMES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// The file that makes a folder a Helm chart: its `templates/` become manifests only once
/// Helm renders them, and `Chart.yaml` and `values.yaml` are Helm's own configuration.
const HELM_CHART: &str = "Chart.yaml";

/// The most bytes of a kustomization file read; a larger one is not a kustomization anyone
/// writes by hand, and is passed over.
const MAX_BYTES: u64 = 4 << 20;

/// What the kustomization of one folder names, its paths joined to that folder with `.` and
/// `..` resolved.
#[derive(Debug, Default)]
pub struct Named {
    /// Files that are not resources.
    files: HashSet<PathBuf>,
    /// Folders that are not resources (a Helm chart home).
    folders: Vec<PathBuf>,
    /// Files and folders listed as resources or components.
    resources: HashSet<PathBuf>,
    /// The namespace it gives every namespaced object it builds (`namespace:`).
    namespace: Option<String>,
    /// Which of the fields that rename or move what it builds it sets (`namespace`,
    /// `namePrefix`, `nameSuffix`), in that order.
    renames: Vec<&'static str>,
}

/// What kvrender knows of one folder.
#[derive(Debug)]
struct Folder {
    /// Its kustomization, read, or `None` when it has none (or one kvrender cannot read,
    /// which kustomize reports better).
    kustomization: Option<Named>,
    /// Whether it is a Helm chart (it holds [`HELM_CHART`]).
    chart: bool,
    /// Whether it or a folder above it has a kustomization or is a chart: when not, no file
    /// below it is another tool's, and nothing more needs looking at.
    tools: bool,
}

/// Decides, for the files of a run, which are other tools' files rather than resources: the
/// configuration a kustomization names, and the files of Helm charts. Each folder is looked
/// at once.
#[derive(Debug, Default)]
pub struct Kustomizations {
    by_folder: HashMap<PathBuf, Folder>,
    /// The working directory, which relative paths start from.
    cwd: Option<PathBuf>,
    /// The kustomization files met that are not YAML (see [`Kustomizations::broken`]).
    broken: Vec<PathBuf>,
}

impl Kustomizations {
    /// Whether `file` lies in a Helm chart (a folder above it holds `Chart.yaml`), or is named
    /// by a kustomization of its folder or a folder above as something other than a resource:
    /// a patch, a replacement, a transformer configuration, a generator's input, an OpenAPI
    /// schema, a Helm values file or a file in a Helm chart home.
    pub fn names_as_configuration(&mut self, file: &Path) -> bool {
        let file = self.absolute(file);
        let Some(parent) = file.parent() else {
            return false;
        };
        // Looks at the parent and every folder above it.
        self.folder(parent);
        let mut kustomizations = Vec::new();
        for folder in file.ancestors().skip(1) {
            let folder = &self.by_folder[folder];
            if !folder.tools {
                break;
            }
            if folder.chart {
                return true;
            }
            kustomizations.extend(folder.kustomization.as_ref());
        }
        names_as_input(kustomizations, &file)
    }

    /// The folder kustomize builds `file` from: the nearest one at or above the file's folder
    /// that holds a kustomization, as `file` is written (`base/patch.yaml` gives `base`, `..`
    /// when it lies above the current folder). `None` when there is none, or the file lies in
    /// a Helm chart. Asked after [`Self::names_as_configuration`].
    pub fn build_folder(&mut self, file: &Path) -> Option<PathBuf> {
        let absolute = self.absolute(file);
        let levels = absolute.ancestors().skip(1).position(|folder| {
            self.by_folder
                .get(folder)
                .is_some_and(|f| f.tools && !f.chart && f.kustomization.is_some())
        })?;
        let mut folder = file.parent().map(Path::to_path_buf).unwrap_or_default();
        for _ in 0..levels {
            if folder.file_name().is_some() {
                folder.pop();
            } else {
                folder.push("..");
            }
        }
        if folder.as_os_str().is_empty() {
            folder.push(".");
        }
        Some(folder)
    }

    /// `file` from the root, without `.` and `..`.
    fn absolute(&mut self, file: &Path) -> PathBuf {
        if file.is_absolute() {
            normalize(file)
        } else {
            let cwd = self.cwd.get_or_insert_with(|| {
                std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"))
            });
            normalize(&cwd.join(file))
        }
    }

    /// What kvrender knows of `folder`, looked at (with every folder above it) when first
    /// asked for.
    fn folder(&mut self, folder: &Path) -> &Folder {
        if !self.by_folder.contains_key(folder) {
            // The folders not yet looked at, outermost first, so that each knows what lies
            // above it.
            let new: Vec<PathBuf> = folder
                .ancestors()
                .take_while(|f| !self.by_folder.contains_key(*f))
                .map(Path::to_path_buf)
                .collect();
            for f in new.into_iter().rev() {
                let above = f
                    .parent()
                    .and_then(|p| self.by_folder.get(p))
                    .is_some_and(|p| p.tools);
                let kustomization = match read(&f) {
                    Read::Named(named) => Some(named),
                    Read::Broken(file) => {
                        self.broken.push(file);
                        None
                    }
                    Read::Nothing => None,
                };
                let chart = f.join(HELM_CHART).is_file();
                let tools = above || chart || kustomization.is_some();
                self.by_folder.insert(
                    f,
                    Folder {
                        kustomization,
                        chart,
                        tools,
                    },
                );
            }
        }
        &self.by_folder[folder]
    }

    /// The kustomization files above the files asked about that do not parse as YAML, in the
    /// order met. What they name is not known, so their patches may be read as resources and
    /// blamed for what they lack: the caller reads each of them too, so that its syntax error
    /// is reported where it is.
    pub fn broken(&self) -> &[PathBuf] {
        &self.broken
    }
}

/// What the kustomization file of a folder holds, as far as kvrender reads it.
pub(super) enum Read {
    /// What it names.
    Named(Named),
    /// A file that is not YAML.
    Broken(PathBuf),
    /// No kustomization, or one that cannot be read or is too large to be one.
    Nothing,
}

impl Named {
    /// Whether this kustomization lists `path` (a file, or the folder of another
    /// kustomization, joined and resolved as its own paths are) as a resource or component.
    pub fn builds(&self, path: &Path) -> bool {
        self.resources.contains(path)
    }

    /// The namespace it gives the namespaced objects it builds.
    pub fn namespace(&self) -> Option<&str> {
        self.namespace.as_deref()
    }

    /// Which of `namespace`, `namePrefix` and `nameSuffix` it sets.
    pub fn renames(&self) -> &[&'static str] {
        &self.renames
    }

    /// What this kustomization makes of `file` (joined and resolved as its own paths are):
    /// `Some(false)` a resource, `Some(true)` configuration (see
    /// [`Kustomizations::names_as_configuration`]), `None` nothing.
    pub fn role_of(&self, file: &Path) -> Option<bool> {
        if self.resources.contains(file) {
            Some(false)
        } else if self.files.contains(file)
            || self.folders.iter().any(|home| file.starts_with(home))
        {
            Some(true)
        } else {
            None
        }
    }
}

/// Whether `kustomizations` (those whose folders hold `file`) name `file` as a patch or
/// another input: one of them does, and none lists it as a resource.
pub fn names_as_input<'a>(
    kustomizations: impl IntoIterator<Item = &'a Named>,
    file: &Path,
) -> bool {
    let mut input = false;
    for named in kustomizations {
        match named.role_of(file) {
            Some(false) => return false,
            Some(true) => input = true,
            None => {}
        }
    }
    input
}

/// The kustomization file of `folder`, if it has one: the first of kustomize's names found.
pub(super) fn file_of(folder: &Path) -> Option<PathBuf> {
    NAMES
        .iter()
        .map(|name| folder.join(name))
        .find(|path| path.is_file())
}

/// Whether a file name is one kustomize reads as a kustomization.
pub fn is_kustomization_name(name: &str) -> bool {
    NAMES.contains(&name)
}

/// The kustomization of `folder`, if it has one kvrender can read.
pub(super) fn read(folder: &Path) -> Read {
    let Some(file) = file_of(folder) else {
        return Read::Nothing;
    };
    if std::fs::metadata(&file).is_ok_and(|meta| meta.len() > MAX_BYTES) {
        return Read::Nothing;
    }
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Read::Nothing;
    };
    match super::yaml::parse_document_full(first_document(&text)) {
        Ok(value) if shape_problems(&value).is_empty() && unknown_fields(&value).is_empty() => {
            Read::Named(named(folder, &value))
        }
        // Read as the manifests are, so that what is wrong is reported where it is.
        _ => Read::Broken(file),
    }
}

/// The first document of a kustomization file's `text`, the only one kustomize reads.
pub(super) fn first_document(text: &str) -> &str {
    super::split::split(text)
        .into_iter()
        .find(|chunk| chunk.content_line.is_some())
        .map_or(text, |chunk| chunk.text)
}

/// The fields of a kustomization that list its resources (paths of files or folders).
const RESOURCE_LISTS: [&str; 3] = ["resources", "components", "bases"];

/// The fields of a kustomization that list files it reads as something other than resources
/// (paths, or inline patches and configurations).
const FILE_LISTS: [&str; 6] = [
    "patchesStrategicMerge",
    "configurations",
    "crds",
    "generators",
    "transformers",
    "validators",
];

/// The fields of a kustomization kvrender reads that hold a list of mappings.
const MAPPING_LISTS: [&str; 6] = [
    "patches",
    "patchesJson6902",
    "replacements",
    "configMapGenerator",
    "secretGenerator",
    "helmCharts",
];

/// Every field of a kustomization (kustomize's `Kustomization`, which a `Component` shares).
/// kustomize refuses a file with any other, comparing names without regard to case as Go's
/// JSON decoder does. (`inventory`, which kubectl's kustomize v5.5 no longer takes, is let
/// pass: a finding about a field some kustomize reads would be the worse mistake.)
const FIELDS: [&str; 35] = [
    "apiVersion",
    "kind",
    "metadata",
    "openapi",
    "namePrefix",
    "nameSuffix",
    "namespace",
    "commonLabels",
    "labels",
    "commonAnnotations",
    "patchesStrategicMerge",
    "patchesJson6902",
    "patches",
    "images",
    "imageTags",
    "replacements",
    "replicas",
    "vars",
    "sortOptions",
    "resources",
    "components",
    "crds",
    "bases",
    "configMapGenerator",
    "secretGenerator",
    "helmGlobals",
    "helmCharts",
    "helmChartInflationGenerator",
    "generatorOptions",
    "configurations",
    "generators",
    "transformers",
    "validators",
    "inventory",
    "buildMetadata",
];

/// The top-level fields of `kustomization` that kustomize does not know, each with the known
/// field it is nearest to, if one is near.
pub fn unknown_fields(kustomization: &Value) -> Vec<(&str, Option<&'static str>)> {
    let Some(fields) = kustomization.as_object() else {
        return Vec::new();
    };
    fields
        .keys()
        .filter(|key| !FIELDS.iter().any(|f| f.eq_ignore_ascii_case(key)))
        .map(|key| {
            let near = crate::diagnostic::nearest_name(key, FIELDS);
            (key.as_str(), near)
        })
        .collect()
}

/// What kustomize would refuse in the shape of `kustomization` where kvrender reads it, each
/// as (the field, dotted, or `""` for the whole; what is wrong): a kustomization that is not a
/// mapping, a list field that is no list, an entry of the wrong type, a `namespace` that is
/// no string. kvrender cannot tell what such a kustomization names.
pub fn shape_problems(kustomization: &Value) -> Vec<(String, String)> {
    let found = crate::validate::schema::found;
    let Some(fields) = kustomization.as_object() else {
        return vec![(
            String::new(),
            format!(
                "a kustomization is a mapping of fields (`resources:`, `patches:`, ...), not {}",
                found(kustomization)
            ),
        )];
    };
    let mut problems = Vec::new();
    for (key, wanted, is_wanted) in RESOURCE_LISTS
        .iter()
        .chain(&FILE_LISTS)
        .map(|k| {
            (
                k,
                "a string (a path)",
                Value::is_string as fn(&Value) -> bool,
            )
        })
        .chain(
            MAPPING_LISTS
                .iter()
                .map(|k| (k, "a mapping", Value::is_object as fn(&Value) -> bool)),
        )
    {
        match fields.get(*key) {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                if let Some((i, item)) = items.iter().enumerate().find(|(_, item)| !is_wanted(item))
                {
                    problems.push((
                        format!("{key}[{i}]"),
                        format!(
                            "each entry of `{key}` must be {wanted}, not {}",
                            found(item)
                        ),
                    ));
                }
                if MAPPING_LISTS.contains(key)
                    && let Some((i, path)) = items.iter().enumerate().find_map(|(i, item)| {
                        item.get("path")
                            .filter(|p| !p.is_string() && !p.is_null())
                            .map(|p| (i, p))
                    })
                {
                    problems.push((
                        format!("{key}[{i}].path"),
                        format!(
                            "the `path` of an entry of `{key}` must be a string, not {}",
                            found(path)
                        ),
                    ));
                }
            }
            Some(other) => {
                problems.push((
                    (*key).to_string(),
                    format!("`{key}` must be a list, not {}", found(other)),
                ));
            }
        }
    }
    if let Some(other) = fields
        .get("namespace")
        .filter(|ns| !ns.is_null() && !ns.is_string())
    {
        problems.push((
            "namespace".to_string(),
            format!("`namespace` must be a string, not {}", found(other)),
        ));
    }
    problems
}

/// The paths `kustomization` (the parsed file of `folder`) names, sorted by role. `folder`
/// may be relative (a path inside a kpt package); the paths are then relative too.
pub fn named(folder: &Path, kustomization: &Value) -> Named {
    let mut named = Named {
        namespace: kustomization
            .get("namespace")
            .and_then(Value::as_str)
            .filter(|ns| !ns.is_empty())
            .map(str::to_string),
        renames: ["namespace", "namePrefix", "nameSuffix"]
            .into_iter()
            .filter(|key| {
                kustomization
                    .get(*key)
                    .and_then(Value::as_str)
                    .is_some_and(|v| !v.is_empty())
            })
            .collect(),
        ..Named::default()
    };
    let at = |path: &str| normalize(&folder.join(path));
    let strings = |key: &str| -> Vec<&str> {
        kustomization
            .get(key)
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    };
    let objects = |key: &str| -> Vec<&Value> {
        kustomization
            .get(key)
            .and_then(Value::as_array)
            .map(|items| items.iter().filter(|item| item.is_object()).collect())
            .unwrap_or_default()
    };
    // A string entry with a line break is an inline patch or configuration, not a path.
    let is_path = |entry: &&str| !entry.contains('\n') && !entry.trim().is_empty();

    for key in RESOURCE_LISTS {
        named
            .resources
            .extend(strings(key).into_iter().filter(is_path).map(at));
    }
    let mut files: Vec<&str> = Vec::new();
    for key in ["patches", "patchesJson6902", "replacements"] {
        files.extend(
            objects(key)
                .into_iter()
                .filter_map(|item| item.get("path").and_then(Value::as_str)),
        );
    }
    for key in FILE_LISTS {
        files.extend(strings(key));
    }
    if let Some(path) = kustomization
        .get("openapi")
        .and_then(|o| o.get("path"))
        .and_then(Value::as_str)
    {
        files.push(path);
    }
    for key in ["configMapGenerator", "secretGenerator"] {
        for generator in objects(key) {
            let list = |field: &str| {
                generator
                    .get(field)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
            };
            // `files` entries may give the key first: `key=path`.
            files.extend(list("files").map(|f| f.split_once('=').map_or(f, |(_, p)| p)));
            files.extend(list("envs"));
            files.extend(generator.get("env").and_then(Value::as_str));
        }
    }
    let charts = objects("helmCharts");
    for chart in &charts {
        files.extend(chart.get("valuesFile").and_then(Value::as_str));
        files.extend(
            chart
                .get("additionalValuesFiles")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str),
        );
    }
    if !charts.is_empty() {
        let home = kustomization
            .get("helmGlobals")
            .and_then(|g| g.get("chartHome"))
            .and_then(Value::as_str)
            .unwrap_or("charts");
        named.folders.push(at(home));
    }
    named
        .files
        .extend(files.into_iter().filter(is_path).map(at));
    named
}

/// `.` and `..` resolved in the text of a path, as kustomize resolves the paths a
/// kustomization gives (Go's `filepath.Clean`): no `.` segments or repeated separators, a `..`
/// that follows a folder takes it away, one at the start of a relative path stays, and one
/// right after the root goes (`/..` is `/`). Symbolic links are not followed.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A temporary folder holding `files` (path, text), their folders made.
    pub(in crate::load) fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn configuration(dir: &tempfile::TempDir, files: &[&str]) -> Vec<String> {
        let mut k = Kustomizations::default();
        files
            .iter()
            .filter(|f| k.names_as_configuration(&dir.path().join(f)))
            .map(|f| (*f).to_string())
            .collect()
    }

    #[test]
    fn patches_and_generator_inputs_are_configuration() {
        let dir = tree(&[(
            "overlay/kustomization.yaml",
            "resources: [../base, vm.yaml]\n\
             patches:\n- path: patches/cpu.yaml\n- patch: |\n    inline\n\
             patchesStrategicMerge: [smp.yaml, \"apiVersion: v1\\nkind: X\\n\"]\n\
             patchesJson6902:\n- path: ./json.yaml\n\
             replacements:\n- path: repl.yaml\n\
             configurations: [conf.yaml]\n\
             openapi: {path: schema.json}\n\
             configMapGenerator:\n- name: c\n  files: [key=data/a.yaml, data/b.yaml]\n  envs: [e.env]\n\
             transformers: [labels.yaml]\n",
        )]);
        // Each file, and whether it is configuration.
        let files = [
            ("overlay/vm.yaml", false),
            ("overlay/patches/cpu.yaml", true),
            ("overlay/smp.yaml", true),
            ("overlay/json.yaml", true),
            ("overlay/repl.yaml", true),
            ("overlay/conf.yaml", true),
            ("overlay/schema.json", true),
            ("overlay/data/a.yaml", true),
            ("overlay/data/b.yaml", true),
            ("overlay/labels.yaml", true),
            ("overlay/other.yaml", false),
            ("base/vm.yaml", false),
        ];
        let all: Vec<&str> = files.iter().map(|(f, _)| *f).collect();
        let expected: Vec<&str> = files.iter().filter(|(_, c)| *c).map(|(f, _)| *f).collect();
        assert_eq!(configuration(&dir, &all), expected);
    }

    #[test]
    fn a_kustomization_above_counts_and_a_resource_stays_one() {
        let dir = tree(&[
            (
                "kustomization.yaml",
                "patches:\n- path: sub/p.yaml\n- path: sub/both.yaml\n",
            ),
            ("sub/kustomization.yml", "resources: [both.yaml]\n"),
        ]);
        assert_eq!(
            configuration(&dir, &["sub/p.yaml", "sub/both.yaml", "sub/q.yaml"]),
            ["sub/p.yaml"]
        );
    }

    #[test]
    fn a_helm_chart_home_is_configuration() {
        let dir = tree(&[
            (
                "a/kustomization.yaml",
                "helmCharts:\n- name: c\n  valuesFile: values.yaml\n",
            ),
            (
                "b/kustomization.yaml",
                "helmGlobals: {chartHome: vendor}\nhelmCharts:\n- name: c\n",
            ),
        ]);
        assert_eq!(
            configuration(
                &dir,
                &[
                    "a/values.yaml",
                    "a/charts/c/templates/vm.yaml",
                    "a/vm.yaml",
                    "b/vendor/c/Chart.yaml",
                    "b/charts/x.yaml",
                ]
            ),
            [
                "a/values.yaml",
                "a/charts/c/templates/vm.yaml",
                "b/vendor/c/Chart.yaml",
            ]
        );
    }

    #[test]
    fn the_files_of_a_helm_chart_are_configuration() {
        let dir = tree(&[("web/Chart.yaml", "apiVersion: v2\nname: web\n")]);
        assert_eq!(
            configuration(
                &dir,
                &[
                    "web/values.yaml",
                    "web/templates/vm.yaml",
                    "web.yaml",
                    "other/vm.yaml"
                ]
            ),
            ["web/values.yaml", "web/templates/vm.yaml"]
        );
    }

    #[test]
    fn a_kustomization_kvrender_cannot_read_names_nothing() {
        let dir = tree(&[
            ("a/kustomization.yaml", "patches: [\n"),
            (
                "b/kustomization.yaml",
                "patches: 3\npatchesStrategicMerge: {a: b}\n",
            ),
            ("c/Kustomization", "- a list\n"),
        ]);
        assert!(configuration(&dir, &["a/p.yaml", "b/p.yaml", "c/p.yaml"]).is_empty());
    }
}

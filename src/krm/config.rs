//! The function configuration: kvrender's own `KVRender` kind, or a `ConfigMap` whose `data`
//! holds the same keys as strings (what `kpt fn eval -- key=value` builds).
//!
//! ```yaml
//! apiVersion: kvrender.io/v1alpha1
//! kind: KVRender
//! metadata:
//!   name: kvrender
//! render: true              # render the catalog families and preferences among the items
//! expand: replace           # replace | validate | off
//! defaultCatalog: true      # resolve against the embedded common catalog too
//! emitDefaultCatalog: false # add the embedded common catalog's objects to the output
//! paths: [catalog/]         # more inputs read from disk (relative to the working directory)
//! catalogs: [shared/]       # resolution-only inputs read from disk, never emitted
//! clusterConfig: {...}      # a KubeVirt resource or its spec.configuration
//! versionLabel: v1.4.0      # stamp this version on every rendered object
//! versionLabelKey: instancetype.kubevirt.io/common-instancetypes-version
//! severity: error           # the most severe a finding is reported: error | warning | info
//! strict: false             # report warnings as errors
//! prune: false              # drop earlier rendered objects no catalog document renders now
//! migrate: off               # presets: migrate the package's presets instead (runs alone)
//! ```
//!
//! Every key is optional; an unknown key, a wrong type or an unknown value is an error naming
//! the key. The README documents the keys for users.

use serde_json::Value;

use crate::diagnostic::Severity;
use crate::kubevirt::profile::ClusterProfile;
use crate::load::yaml;
use crate::validate::rules::bad_label;

/// The apiVersion of kvrender's function configuration kind.
pub const API_VERSION: &str = "kvrender.io/v1alpha1";
/// The kind of kvrender's function configuration.
pub const KIND: &str = "KVRender";

/// What to do with the VirtualMachines among the items.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExpandMode {
    /// Check every object, then replace each VM that passes by its expanded form (the
    /// default).
    #[default]
    Replace,
    /// Keep each VM as it is and only report what the checks find (what `kvrender validate`
    /// reports).
    Validate,
    /// Leave VMs alone.
    Off,
}

/// The parsed function configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct FnConfig {
    /// Render catalog families and preferences among the items.
    pub render: bool,
    /// What to do with VirtualMachines.
    pub expand: ExpandMode,
    /// Resolve against the embedded common catalog.
    pub default_catalog: bool,
    /// Emit the embedded common catalog's objects as new items.
    pub emit_default_catalog: bool,
    /// Files or directories whose objects are processed as if they were items.
    pub paths: Vec<String>,
    /// Files or directories used to resolve references only.
    pub catalogs: Vec<String>,
    /// The cluster profile.
    pub profile: ClusterProfile,
    /// The version stamped on rendered objects.
    pub version_label: Option<String>,
    /// The label key for `version_label`.
    pub version_label_key: Option<String>,
    /// The most severe a finding is reported with.
    pub severity: Severity,
    /// Report warnings as errors.
    pub strict: bool,
    /// Drop the items an earlier package render wrote that this render no longer produces.
    pub prune: bool,
    /// Migrate the package's VirtualMachineInstancePresets instead of rendering and expanding.
    pub migrate: bool,
    /// The directories `kvrender build` walked (never set from a function config): an object
    /// read from the file a package render writes a rendered object to, relative to one of
    /// them, is that render's earlier output, replaced as it is in a kpt package.
    pub walked: Vec<std::path::PathBuf>,
    /// With `expand: off` (never set from a function config): check the instancetypes and
    /// preferences among the inputs as well as the rendered objects (`build --catalog-only`,
    /// whose output holds them).
    pub check_input_catalog: bool,
}

impl Default for FnConfig {
    fn default() -> Self {
        FnConfig {
            render: true,
            expand: ExpandMode::Replace,
            default_catalog: true,
            emit_default_catalog: false,
            paths: Vec::new(),
            catalogs: Vec::new(),
            profile: ClusterProfile::default(),
            version_label: None,
            version_label_key: None,
            severity: Severity::Error,
            strict: false,
            prune: false,
            migrate: false,
            walked: Vec::new(),
            check_input_catalog: false,
        }
    }
}

/// The keys of the render and expand steps, which `migrate: presets` does not run.
const NOT_WITH_MIGRATE: [&str; 7] = [
    "render",
    "expand",
    "emitDefaultCatalog",
    "paths",
    "versionLabel",
    "versionLabelKey",
    "prune",
];

/// Keys kustomize's legacy exec plugins read from the same file; kvrender ignores them.
const KUSTOMIZE_KEYS: [&str; 2] = ["argsOneLiner", "argsFromFile"];

/// Where a key's value came from: a typed mapping or a ConfigMap string.
enum Raw<'a> {
    Typed(&'a Value),
    Text(&'a str),
}

/// One problem with a function configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigProblem {
    /// The keys from the configuration's top to the field the problem is about (`data`,
    /// `expand`), empty when it is about the whole configuration. Findings use it to give the
    /// line.
    pub path: Vec<String>,
    /// What is wrong, naming the key.
    pub message: String,
}

impl ConfigProblem {
    fn at(path: &[&str], message: String) -> Self {
        ConfigProblem {
            path: path.iter().map(|k| (*k).to_string()).collect(),
            message,
        }
    }
}

impl FnConfig {
    /// Parse a `functionConfig`. `None`, `null` and `{}` give the defaults. A mapping without
    /// `kind` but with `data` is read as a ConfigMap (kpt builds one like that when no
    /// configuration is given).
    ///
    /// # Errors
    /// Every problem found, one message each, naming the key.
    pub fn parse(value: Option<&Value>) -> Result<FnConfig, Vec<ConfigProblem>> {
        let Some(value) = value.filter(|v| !v.is_null()) else {
            return Ok(FnConfig::default());
        };
        let Some(map) = value.as_object() else {
            return Err(vec![ConfigProblem::at(
                &[],
                "`functionConfig` must be a mapping".into(),
            )]);
        };
        if map.is_empty() {
            return Ok(FnConfig::default());
        }
        let mut errors = Vec::new();
        for key in ["apiVersion", "kind"] {
            if map.get(key).is_some_and(|v| !v.is_string() && !v.is_null()) {
                errors.push(ConfigProblem::at(
                    &[key],
                    format!("functionConfig `{key}` must be a string"),
                ));
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let api_version = map.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let kind = map.get("kind").and_then(Value::as_str).unwrap_or("");
        let mut config = FnConfig::default();
        let mut keys: Vec<&str> = Vec::new();
        // Where the keys are: `data` in a ConfigMap.
        let mut under: &[&str] = &[];
        match kind {
            KIND if api_version == API_VERSION => {
                for (key, v) in map {
                    if matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                        continue;
                    }
                    keys.push(key);
                    config.set(&[], key, Raw::Typed(v), &mut errors);
                }
            }
            KIND => errors.push(ConfigProblem::at(
                &["apiVersion"],
                format!(
                    "unsupported apiVersion `{api_version}` for KVRender (expected `{API_VERSION}`)"
                ),
            )),
            "ConfigMap" | "" if kind == "ConfigMap" || map.contains_key("data") => {
                under = &["data"];
                if !matches!(api_version, "" | "v1") {
                    errors.push(ConfigProblem::at(
                        &["apiVersion"],
                        format!(
                            "unsupported apiVersion `{api_version}` for a ConfigMap \
                             functionConfig (expected `v1`)"
                        ),
                    ));
                }
                for key in map.keys() {
                    if !matches!(key.as_str(), "apiVersion" | "kind" | "metadata" | "data") {
                        errors.push(ConfigProblem::at(
                            &[key],
                            format!(
                                "unknown field `{key}` in the ConfigMap functionConfig (the keys \
                                 go under `data`)"
                            ),
                        ));
                    }
                }
                match map.get("data") {
                    None | Some(Value::Null) => {}
                    Some(Value::Object(data)) => {
                        for (key, v) in data {
                            keys.push(key);
                            match v {
                                Value::String(s) => {
                                    config.set(under, key, Raw::Text(s), &mut errors);
                                }
                                // `true` or `false` written plain: a boolean, read as the
                                // word it stands for.
                                Value::Bool(_) => {
                                    config.set(under, key, Raw::Typed(v), &mut errors);
                                }
                                _ => errors.push(ConfigProblem::at(
                                    &["data", key],
                                    format!("`data.{key}` must be a string"),
                                )),
                            }
                        }
                    }
                    Some(_) => errors.push(ConfigProblem::at(
                        &["data"],
                        "`data` must be a mapping of strings".into(),
                    )),
                }
            }
            _ => {
                let what = match (api_version, kind) {
                    ("", "") => "the functionConfig has no apiVersion and no kind".to_string(),
                    ("", _) => format!("the functionConfig of kind `{kind}` has no apiVersion"),
                    (_, "") => {
                        format!("the functionConfig of apiVersion `{api_version}` has no kind")
                    }
                    _ => format!("unsupported functionConfig `{api_version}, Kind={kind}`"),
                };
                let at: &[&str] = if kind.is_empty() { &[] } else { &["kind"] };
                errors.push(ConfigProblem::at(
                    at,
                    format!("{what} (expected `{API_VERSION}, Kind={KIND}` or a ConfigMap)"),
                ));
            }
        }
        if config.migrate {
            let beside: Vec<String> = keys
                .iter()
                .filter(|k| NOT_WITH_MIGRATE.contains(k))
                .map(|k| format!("`{k}`"))
                .collect();
            if !beside.is_empty() {
                errors.push(ConfigProblem::at(
                    &[under, &["migrate"]].concat(),
                    format!(
                        "`migrate: presets` runs alone, without rendering or expanding: leave \
                         out {}",
                        beside.join(", ")
                    ),
                ));
            }
        }
        if config.version_label_key.is_some() && config.version_label.is_none() {
            errors.push(ConfigProblem::at(
                &[under, &["versionLabelKey"]].concat(),
                "`versionLabelKey` is set without `versionLabel`: there is no version to stamp"
                    .into(),
            ));
        }
        if errors.is_empty() {
            Ok(config)
        } else {
            Err(errors)
        }
    }

    /// The keys from the top of `value`, a configuration [`FnConfig::parse`] accepted, to its
    /// key `key`: under `data` in a ConfigMap.
    pub fn path_to(value: Option<&Value>, key: &str) -> Vec<String> {
        let typed = value
            .and_then(|v| v.get("kind"))
            .and_then(Value::as_str)
            .is_some_and(|k| k == KIND);
        let data = value.is_some_and(|v| v.get("data").is_some_and(Value::is_object));
        if data && !typed {
            vec!["data".into(), key.into()]
        } else {
            vec![key.into()]
        }
    }

    /// Report `diagnostics` as the configuration asks (`strict`, `severity`), and sort them.
    pub fn adjust(&self, diagnostics: &mut Vec<crate::diagnostic::Diagnostic>) {
        for d in diagnostics.iter_mut() {
            if self.strict && d.severity == Severity::Warning {
                d.severity = Severity::Error;
            }
            if d.severity < self.severity {
                d.severity = self.severity;
            }
        }
        crate::diagnostic::sort(diagnostics);
    }

    /// Read `key` (found under `under`) into the configuration.
    fn set(&mut self, under: &[&str], key: &str, raw: Raw<'_>, errors: &mut Vec<ConfigProblem>) {
        const KEYS: &[&str] = &[
            "render",
            "expand",
            "defaultCatalog",
            "emitDefaultCatalog",
            "paths",
            "catalogs",
            "clusterConfig",
            "versionLabel",
            "versionLabelKey",
            "severity",
            "strict",
            "prune",
            "migrate",
        ];
        let result = match key {
            "render" => bool_value(&raw).map(|b| self.render = b),
            "expand" => mode_value(&raw).and_then(|s| {
                self.expand = match s.as_str() {
                    "replace" => ExpandMode::Replace,
                    "validate" => ExpandMode::Validate,
                    "off" => ExpandMode::Off,
                    _ => return Err(not_one_of(&s, &["replace", "validate", "off"])),
                };
                Ok(())
            }),
            "defaultCatalog" => bool_value(&raw).map(|b| self.default_catalog = b),
            "emitDefaultCatalog" => bool_value(&raw).map(|b| self.emit_default_catalog = b),
            "paths" => list_value(&raw).map(|l| self.paths = l),
            "catalogs" => list_value(&raw).map(|l| self.catalogs = l),
            "clusterConfig" => profile_value(&raw).map(|p| self.profile = p),
            "versionLabel" => string_value(&raw).and_then(|s| {
                bad_label::version_label_value(&s)
                    .map_err(|why| format!("not a valid label value: it {why}"))?;
                self.version_label = Some(s);
                Ok(())
            }),
            "versionLabelKey" => string_value(&raw).and_then(|s| {
                bad_label::label_key(&s)
                    .map_err(|why| format!("not a valid label key: it {why}"))?;
                self.version_label_key = Some(s);
                Ok(())
            }),
            "severity" => string_value(&raw).and_then(|s| {
                self.severity = match s.as_str() {
                    "error" => Severity::Error,
                    "warning" => Severity::Warning,
                    "info" => Severity::Info,
                    _ => return Err(not_one_of(&s, &["error", "warning", "info"])),
                };
                Ok(())
            }),
            "strict" => bool_value(&raw).map(|b| self.strict = b),
            "prune" => bool_value(&raw).map(|b| self.prune = b),
            "migrate" => mode_value(&raw).and_then(|s| {
                self.migrate = match s.as_str() {
                    "off" => false,
                    "presets" => true,
                    _ => return Err(not_one_of(&s, &["off", "presets"])),
                };
                Ok(())
            }),
            k if KUSTOMIZE_KEYS.contains(&k) => Ok(()),
            _ => Err(format!(
                "unknown key (expected one of {}){}",
                KEYS.join(", "),
                did_you_mean(key, KEYS)
            )),
        };
        if let Err(message) = result {
            errors.push(ConfigProblem::at(
                &[under, &[key]].concat(),
                format!("functionConfig `{key}`: {message}"),
            ));
        }
    }
}

/// A boolean: `true` or `false`, or a word YAML 1.1 reads as one (`yes`, `off`, ...), which kpt
/// and kustomize, reading YAML 1.2, hand over as text when it is written plain.
fn bool_value(raw: &Raw<'_>) -> Result<bool, String> {
    let text = match raw {
        Raw::Typed(Value::Bool(b)) => return Ok(*b),
        Raw::Typed(Value::String(s)) => s.as_str(),
        Raw::Text(s) => s,
        Raw::Typed(_) => return Err("must be `true` or `false`".into()),
    };
    match text {
        "true" | "True" | "TRUE" => Ok(true),
        "false" | "False" | "FALSE" => Ok(false),
        word => {
            yaml::yaml11_boolean(word).ok_or_else(|| format!("`{word}` is not `true` or `false`"))
        }
    }
}

/// The name of a mode (`expand`, `migrate`). The function reads its configuration as kpt and
/// kustomize read it (YAML 1.2), where `off` written plain is text; `false`, what YAML 1.1 makes
/// of the same word, means `off` too.
fn mode_value(raw: &Raw<'_>) -> Result<String, String> {
    match raw {
        Raw::Typed(Value::Bool(false)) => Ok("off".into()),
        _ => string_value(raw),
    }
}

fn string_value(raw: &Raw<'_>) -> Result<String, String> {
    match raw {
        Raw::Typed(Value::String(s)) => Ok(s.clone()),
        Raw::Text(s) => Ok((*s).to_string()),
        Raw::Typed(_) => Err("must be a string".into()),
    }
}

/// A list of strings; in a ConfigMap, comma-separated.
fn list_value(raw: &Raw<'_>) -> Result<Vec<String>, String> {
    match raw {
        Raw::Typed(Value::Array(items)) => items
            .iter()
            .map(|i| {
                i.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| "must be a list of strings".to_string())
            })
            .collect(),
        Raw::Typed(Value::String(s)) => Ok(split_list(s)),
        Raw::Text(s) => Ok(split_list(s)),
        Raw::Typed(_) => Err("must be a list of strings".into()),
    }
}

fn split_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect()
}

/// A KubeVirt resource or configuration: a mapping, or (in a ConfigMap) its YAML text.
fn profile_value(raw: &Raw<'_>) -> Result<ClusterProfile, String> {
    let parsed;
    let text = match raw {
        Raw::Text(s) => Some(*s),
        Raw::Typed(Value::String(s)) => Some(s.as_str()),
        _ => None,
    };
    let doc = match (raw, text) {
        (Raw::Typed(v @ Value::Object(_)), _) => *v,
        (_, Some(s)) => {
            parsed = yaml::parse_document(s).map_err(|e| match e.line {
                Some(l) => format!("line {l}: {}", e.message),
                None => e.message,
            })?;
            &parsed
        }
        _ => {
            return Err("must be a KubeVirt resource or its configuration mapping".into());
        }
    };
    ClusterProfile::from_document(doc)
}

/// A value outside `values`, with the nearest of them when one is near.
fn not_one_of(value: &str, values: &[&str]) -> String {
    format!(
        "`{value}` is not one of {}{}",
        values.join(", "),
        did_you_mean(value, values)
    )
}

/// ` (did you mean `x`?)` for the candidate near `word`, or nothing.
fn did_you_mean(word: &str, candidates: &[&str]) -> String {
    crate::diagnostic::nearest_name(word, candidates.iter().copied())
        .map_or_else(String::new, |near| format!(" (did you mean `{near}`?)"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(problems: Vec<ConfigProblem>) -> Vec<String> {
        problems.into_iter().map(|p| p.message).collect()
    }

    #[test]
    fn empty_and_absent_configs_are_the_defaults() {
        assert_eq!(FnConfig::parse(None).unwrap(), FnConfig::default());
        assert_eq!(
            FnConfig::parse(Some(&json!({}))).unwrap(),
            FnConfig::default()
        );
        // kpt's config when none is given: no kind, empty data.
        let kpt = json!({"metadata": {"name": "function-input"}, "data": {}});
        assert_eq!(FnConfig::parse(Some(&kpt)).unwrap(), FnConfig::default());
    }

    #[test]
    fn kvrender_kind_and_config_map_agree() {
        let typed = json!({"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "x"},
            "render": false, "expand": "validate", "defaultCatalog": false,
            "paths": ["a", "b"], "versionLabel": "v1", "severity": "warning", "strict": true,
            "clusterConfig": {"developerConfiguration": {"memoryOvercommit": 150}}});
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {
            "render": "false", "expand": "validate", "defaultCatalog": "false",
            "paths": "a, b", "versionLabel": "v1", "severity": "warning", "strict": "true",
            "clusterConfig": "developerConfiguration:\n  memoryOvercommit: 150\n"}});
        let a = FnConfig::parse(Some(&typed)).unwrap();
        let b = FnConfig::parse(Some(&cm)).unwrap();
        assert_eq!(a, b);
        assert!(!a.render);
        assert_eq!(a.expand, ExpandMode::Validate);
        assert_eq!(a.paths, ["a", "b"]);
        assert_eq!(a.profile.memory_overcommit, 150);
        assert_eq!(a.severity, Severity::Warning);
    }

    #[test]
    fn unknown_keys_and_bad_values_are_named() {
        let bad = json!({"apiVersion": API_VERSION, "kind": KIND,
            "rendr": true, "expand": "sometimes", "strict": 1});
        let errors = FnConfig::parse(Some(&bad)).map_err(messages).unwrap_err();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].contains("`rendr`: unknown key"));
        assert!(
            errors[0].ends_with(" (did you mean `render`?)"),
            "{}",
            errors[0]
        );
        assert!(errors[1].contains("`expand`: `sometimes` is not one of"));
        assert!(!errors[1].contains("did you mean"), "{}", errors[1]);
        assert!(errors[2].contains("`strict`: must be"));
        // A value a letter away from one the key takes is named.
        let bad = json!({"data": {"expand": "replac", "severity": "warn", "migrate": "preset"}});
        let errors = FnConfig::parse(Some(&bad)).map_err(messages).unwrap_err();
        assert_eq!(
            errors,
            [
                "functionConfig `expand`: `replac` is not one of replace, validate, off (did you \
                 mean `replace`?)",
                "functionConfig `severity`: `warn` is not one of error, warning, info",
                "functionConfig `migrate`: `preset` is not one of off, presets (did you mean \
                 `presets`?)",
            ]
        );
        // The kind and apiVersion are held to the same strictness for both kinds.
        for wrong in [
            json!({"kind": 5, "data": {"expand": "off"}}),
            json!({"apiVersion": "apps/v1", "kind": "ConfigMap", "data": {}}),
            json!({"apiVersion": ["v1"], "kind": "ConfigMap", "data": {}}),
        ] {
            let errors = FnConfig::parse(Some(&wrong)).map_err(messages).unwrap_err();
            assert!(
                errors[0].contains("must be a string")
                    || errors[0].contains("unsupported apiVersion"),
                "{wrong}: {errors:?}"
            );
        }
        let other = json!({"apiVersion": "v1", "kind": "Secret"});
        assert!(
            FnConfig::parse(Some(&other)).map_err(messages).unwrap_err()[0]
                .contains("unsupported functionConfig")
        );
        // A missing apiVersion or kind is said to be missing.
        for (config, says) in [
            (json!({"render": "maybe"}), "has no apiVersion and no kind"),
            (
                json!({"kind": "Secret"}),
                "of kind `Secret` has no apiVersion",
            ),
            (
                json!({"apiVersion": "v1"}),
                "of apiVersion `v1` has no kind",
            ),
        ] {
            let errors = FnConfig::parse(Some(&config))
                .map_err(messages)
                .unwrap_err();
            assert!(errors[0].contains(says), "{config}: {errors:?}");
        }
        let cm = json!({"kind": "ConfigMap", "data": {"render": "maybe", "x": "1"}});
        assert_eq!(
            FnConfig::parse(Some(&cm))
                .map_err(messages)
                .unwrap_err()
                .len(),
            2
        );
    }

    /// Each problem carries the keys that lead to what it is about, for findings to give its
    /// line: under `data` in a ConfigMap, at the top in the kind.
    #[test]
    fn problems_know_the_keys_they_are_about() {
        let paths = |config: Value| -> Vec<Vec<String>> {
            FnConfig::parse(Some(&config))
                .unwrap_err()
                .into_iter()
                .map(|p| p.path)
                .collect()
        };
        assert_eq!(
            paths(json!({"kind": "ConfigMap", "data": {"expand": "replac", "x": 1}, "extra": 1})),
            [vec!["extra"], vec!["data", "expand"], vec!["data", "x"]]
        );
        assert_eq!(
            paths(json!({"apiVersion": API_VERSION, "kind": KIND, "strict": 1,
                "versionLabelKey": "a/b"})),
            [vec!["strict"], vec!["versionLabelKey"]]
        );
        assert_eq!(
            paths(json!({"apiVersion": "v9", "kind": KIND})),
            [vec!["apiVersion"]]
        );
        assert_eq!(paths(json!({"render": "maybe"})), [Vec::<String>::new()]);
        assert_eq!(paths(json!({"kind": "Secret"})), [vec!["kind"]]);
        let cm = json!({"kind": "ConfigMap", "data": {}});
        assert_eq!(
            FnConfig::path_to(Some(&cm), "clusterConfig"),
            ["data", "clusterConfig"]
        );
        let typed = json!({"apiVersion": API_VERSION, "kind": KIND, "data": {}});
        assert_eq!(
            FnConfig::path_to(Some(&typed), "clusterConfig"),
            ["clusterConfig"]
        );
    }

    /// A boolean key takes `true` and `false` and the words YAML 1.1 reads as booleans, which a
    /// function is handed as text when they are written plain (kpt reads YAML 1.2), in the kind
    /// and in a ConfigMap alike; any other text is refused.
    #[test]
    fn boolean_keys_take_the_yaml11_words_as_text() {
        for (word, value) in [("yes", true), ("On", true), ("N", false), ("OFF", false)] {
            for config in [
                json!({"apiVersion": API_VERSION, "kind": KIND, "strict": word, "prune": value}),
                json!({"kind": "ConfigMap", "data": {"strict": word, "prune": value.to_string()}}),
            ] {
                let parsed = FnConfig::parse(Some(&config)).unwrap();
                assert_eq!((parsed.strict, parsed.prune), (value, value), "{config}");
            }
        }
        for word in ["yEs", "maybe", "1"] {
            let config = json!({"kind": "ConfigMap", "data": {"strict": word}});
            let errors = FnConfig::parse(Some(&config))
                .map_err(messages)
                .unwrap_err();
            assert!(errors[0].contains("is not `true` or `false`"), "{errors:?}");
        }
    }

    /// `false`, what YAML 1.1 makes of a plain `off`, is the mode `off` too, in the kind and in
    /// a ConfigMap alike.
    #[test]
    fn off_written_plain_is_the_mode_off() {
        for config in [
            json!({"apiVersion": API_VERSION, "kind": KIND, "expand": false, "migrate": false}),
            json!({"kind": "ConfigMap", "data": {"expand": false, "migrate": false}}),
        ] {
            let parsed = FnConfig::parse(Some(&config)).unwrap();
            assert_eq!(parsed.expand, ExpandMode::Off, "{config}");
            assert!(!parsed.migrate, "{config}");
        }
        // Booleans in a ConfigMap's data are read as the keys that take them read them.
        let cm = json!({"kind": "ConfigMap", "data": {"render": false, "strict": true}});
        let parsed = FnConfig::parse(Some(&cm)).unwrap();
        assert!(!parsed.render && parsed.strict);
        // `true` (`on`, `yes`) names no mode.
        let on = json!({"kind": "ConfigMap", "data": {"expand": true}});
        assert!(
            FnConfig::parse(Some(&on)).map_err(messages).unwrap_err()[0]
                .contains("`expand`: must be a string")
        );
    }

    #[test]
    fn migrate_runs_alone() {
        let cm = json!({"kind": "ConfigMap", "data": {"migrate": "presets", "strict": "true"}});
        let config = FnConfig::parse(Some(&cm)).unwrap();
        assert!(config.migrate && config.strict);
        let off = json!({"kind": "ConfigMap", "data": {"migrate": "off", "render": "false"}});
        assert!(!FnConfig::parse(Some(&off)).unwrap().migrate);
        let typed = json!({"apiVersion": API_VERSION, "kind": KIND, "migrate": "presets",
            "expand": "replace", "paths": ["a"], "catalogs": ["b"]});
        assert_eq!(
            FnConfig::parse(Some(&typed)).map_err(messages).unwrap_err(),
            [
                "`migrate: presets` runs alone, without rendering or expanding: leave out \
              `expand`, `paths`"
            ]
        );
        let bad = json!({"kind": "ConfigMap", "data": {"migrate": "instancetypes"}});
        assert_eq!(
            FnConfig::parse(Some(&bad)).map_err(messages).unwrap_err(),
            ["functionConfig `migrate`: `instancetypes` is not one of off, presets"]
        );
    }

    #[test]
    fn the_version_label_must_be_one_the_api_server_accepts() {
        let bad = json!({"apiVersion": API_VERSION, "kind": KIND,
            "versionLabel": "release 1.4", "versionLabelKey": "Example.com/version"});
        let errors = FnConfig::parse(Some(&bad)).map_err(messages).unwrap_err();
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].contains("`versionLabel`: not a valid label value"));
        assert!(errors[1].contains("`versionLabelKey`: not a valid label key"));
        let empty = json!({"kind": "ConfigMap", "data": {"versionLabelKey": ""}});
        assert!(
            FnConfig::parse(Some(&empty)).map_err(messages).unwrap_err()[0].contains("empty name")
        );
        let no_version = json!({"kind": "ConfigMap", "data": {"versionLabel": ""}});
        assert!(
            FnConfig::parse(Some(&no_version))
                .map_err(messages)
                .unwrap_err()[0]
                .contains("needs a version")
        );
        let key_alone = json!({"kind": "ConfigMap", "data": {"versionLabelKey": "example.com/v"}});
        assert_eq!(
            FnConfig::parse(Some(&key_alone))
                .map_err(messages)
                .unwrap_err(),
            ["`versionLabelKey` is set without `versionLabel`: there is no version to stamp"]
        );
        let good = json!({"kind": "ConfigMap",
            "data": {"versionLabel": "v1.4.0", "versionLabelKey": "example.com/version"}});
        let config = FnConfig::parse(Some(&good)).unwrap();
        assert_eq!(config.version_label.as_deref(), Some("v1.4.0"));
    }
}

//! The function's `migrate: presets`: a package's VirtualMachineInstancePresets replaced by the
//! instancetypes and preferences `kvrender migrate presets` writes, and its VirtualMachines
//! rewritten with that command's advice followed (as `--with-vms` prints them).
//!
//! Each new object takes the place of the preset it comes from, in the preset's file; a merged
//! preference goes where the first of its presets was. A VM keeps its orchestration annotations,
//! so kpt writes it back to its file with the comments it can keep. The package is migrated
//! whole or not at all: any error (a preset the API server refuses, a VM whose presets' advice
//! clashes, a VM the advice would change or KubeVirt would then refuse, a bare
//! VirtualMachineInstance a preset gives something to) leaves every item as it was.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use crate::commands::inputs::Inputs;
use crate::commands::migrate::{Rewrite, migrate_objects};
use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::krm::annotations;
use crate::krm::config::FnConfig;
use crate::krm::engine::Placement;
use crate::model::{Kind, Object, path};
use crate::origin::Origin;

/// What the migration made of the items.
pub struct Migrated {
    /// The output items, each either an input kept as it was or a new value.
    pub items: Vec<Item>,
    /// Findings, sorted, severities adjusted by the configuration.
    pub diagnostics: Vec<Diagnostic>,
}

/// One output item.
pub enum Item {
    /// Input item `n`, unchanged.
    Kept(usize),
    /// A new or rewritten item.
    New(Value),
}

/// Migrate the presets among `items` (whose origins the caller set from their annotations).
/// Under [`Placement::Files`] the new objects are given the file of their preset.
pub fn migrate(items: &[Object], config: &FnConfig, placement: Placement) -> Migrated {
    let mut diagnostics = Vec::new();
    let resolution = resolution(config, &mut diagnostics);
    let migration = migrate_objects(items, Vec::new(), &resolution, Some(Rewrite::Function));
    diagnostics.extend(migration.out.diagnostics);
    // With `strict`, a warning stops the migration as an error does.
    let stops = |d: &Diagnostic| d.is_error() || (config.strict && d.severity == Severity::Warning);
    let blocked = diagnostics.iter().any(stops);
    let items_out = if blocked {
        let errors = diagnostics.iter().filter(|d| stops(d)).count();
        diagnostics.push(Diagnostic::error(
            codes::PRESET,
            Origin::new("-", 0, None),
            format!(
                "the presets were not migrated, and nothing was changed: {} what the \
                 migration would change or break. Settle {} in the presets or the VMs, or \
                 migrate those VMs by hand (`kvrender migrate presets --with-vms` prints what \
                 it would write), then run it again",
                if errors == 1 {
                    "the other error names".to_string()
                } else {
                    format!("the {errors} other errors name")
                },
                if errors == 1 { "it" } else { "them" },
            ),
        ));
        (0..items.len()).map(Item::Kept).collect()
    } else {
        let files = placement == Placement::Files;
        let (out, told) = replace(
            items,
            migration.objects,
            migration.homes,
            migration.rewritten,
            files,
        );
        diagnostics.extend(told);
        out
    };
    config.adjust(&mut diagnostics);
    Migrated {
        items: items_out,
        diagnostics,
    }
}

/// What resolution needs besides the items: the `catalogs`, the embedded catalog switch and the
/// cluster profile.
fn resolution(config: &FnConfig, diagnostics: &mut Vec<Diagnostic>) -> Inputs {
    let sources = super::engine::read_sources("catalogs", &config.catalogs, diagnostics);
    let mut inputs = Inputs::with_catalogs(sources, config.default_catalog);
    diagnostics.append(&mut inputs.diagnostics);
    inputs.profile = config.profile.clone();
    inputs
}

/// The output items: each preset replaced by the objects migrated from it, each VM the
/// advice changes by its rewritten form, the rest kept; and an info finding for each change.
fn replace(
    items: &[Object],
    objects: Vec<Value>,
    homes: Vec<String>,
    rewritten: Vec<(usize, Value)>,
    files: bool,
) -> (Vec<Item>, Vec<Diagnostic>) {
    let mut told = Vec::new();
    // The position of each preset, by namespace and name.
    let mut preset_at: HashMap<(String, String), usize> = HashMap::new();
    for (i, o) in items.iter().enumerate() {
        if o.kind() == Kind::VirtualMachineInstancePreset {
            preset_at
                .entry((o.effective_namespace().to_string(), o.name().to_string()))
                .or_insert(i);
        }
    }
    // A new object goes where the preset it comes from was.
    let mut placed: BTreeMap<usize, Vec<Value>> = BTreeMap::new();
    for (object, home) in objects.into_iter().zip(homes) {
        let o = Object::new(object, Origin::default());
        let key = (o.effective_namespace().to_string(), home);
        let at = preset_at.get(&key).copied().unwrap_or(usize::MAX);
        placed.entry(at).or_default().push(o.value);
    }
    let mut vms: HashMap<usize, Value> = rewritten.into_iter().collect();
    let mut out = Vec::with_capacity(items.len());
    for (i, o) in items.iter().enumerate() {
        if o.kind() == Kind::VirtualMachineInstancePreset {
            let new = placed.remove(&i).unwrap_or_default();
            let names: Vec<String> = new
                .iter()
                .map(|v| {
                    Object::new(v.clone(), Origin::default())
                        .object_ref()
                        .to_string()
                })
                .collect();
            told.push(
                Diagnostic::warning(
                    codes::PRESET,
                    o.origin.clone(),
                    if names.is_empty() {
                        "removed: nothing of it maps to an instancetype or preference (the \
                         warnings say what its VMs now carry in their own spec)"
                            .to_string()
                    } else {
                        format!("replaced by {}", and_list(&names))
                    },
                )
                .with_severity(Severity::Info)
                .with_object(o.object_ref()),
            );
            for mut value in new {
                if files {
                    home_in(&mut value, &o.value);
                }
                out.push(Item::New(value));
            }
            continue;
        }
        match vms.remove(&i) {
            Some(vm) => {
                told.push(
                    Diagnostic::warning(codes::PRESET, o.origin.clone(), follows(&o.value, &vm))
                        .with_severity(Severity::Info)
                        .with_object(o.object_ref()),
                );
                out.push(Item::New(vm));
            }
            None => out.push(Item::Kept(i)),
        }
    }
    // Objects no preset is home to (none expected): at the end, in a file of their own.
    for mut value in placed.into_values().flatten() {
        if files {
            let file = annotations::file_for(&Object::new(value.clone(), Origin::default()));
            annotations::set_file(&mut value, &file, 0);
        }
        out.push(Item::New(value));
    }
    if files {
        renumber(&mut out, items);
    }
    (out, told)
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// What changed in a rewritten VM: what it now names, what was removed and what was added
/// (the outermost fields that differ, the matchers aside).
fn follows(before: &Value, vm: &Value) -> String {
    let named = |key: &str| {
        path::get(vm, &["spec", key, "name"])
            .and_then(Value::as_str)
            .map(|n| format!("{key} `{n}`"))
    };
    let names: Vec<String> = ["instancetype", "preference"]
        .iter()
        .filter_map(|k| named(k))
        .collect();
    let mut removed = Vec::new();
    let mut added = Vec::new();
    changed_fields(before, vm, "", &mut removed, &mut added);
    added.retain(|f| f != "spec.instancetype" && f != "spec.preference");
    let mut message = "rewritten with the advice of its presets followed".to_string();
    if !names.is_empty() {
        message.push_str(&format!(": it names {}", names.join(" and ")));
    }
    if !removed.is_empty() {
        message.push_str(&format!(
            "; removed, as the instancetype now owns it: {}",
            removed.join(", ")
        ));
    }
    if !added.is_empty() {
        message.push_str(&format!(
            "; set from its presets, which no matcher carries: {}",
            added.join(", ")
        ));
    }
    message
}

/// The outermost fields of mappings present in `before` only (`removed`) or in `after` only,
/// or set to another value there (`added`). Lists are compared whole.
fn changed_fields(
    before: &Value,
    after: &Value,
    at: &str,
    removed: &mut Vec<String>,
    added: &mut Vec<String>,
) {
    let field = |key: &str| {
        if at.is_empty() {
            key.to_string()
        } else {
            format!("{at}.{key}")
        }
    };
    match (before, after) {
        (Value::Object(b), Value::Object(a)) => {
            for (key, value) in b {
                match a.get(key) {
                    None => removed.push(field(key)),
                    Some(other) => changed_fields(value, other, &field(key), removed, added),
                }
            }
            added.extend(a.keys().filter(|k| !b.contains_key(*k)).map(|k| field(k)));
        }
        _ if before != after => added.push(at.to_string()),
        _ => {}
    }
}

/// Put a new object in the file (and package) of the preset it replaces.
fn home_in(value: &mut Value, preset: &Value) {
    let file = annotations::file_path(preset)
        .unwrap_or_else(|| annotations::file_for(&Object::new(value.clone(), Origin::default())));
    annotations::set_file(value, &file, 0);
    if let Some(package) = annotations::package_path(preset) {
        let package = package.to_string();
        annotations::set_package(value, &package);
    }
}

/// Number the items of every file that held a preset in output order, so that each index
/// is used once and the new objects sit where their presets were.
fn renumber(out: &mut [Item], items: &[Object]) {
    let mut files: Vec<String> = items
        .iter()
        .filter(|o| o.kind() == Kind::VirtualMachineInstancePreset)
        .filter_map(|o| annotations::file_path(&o.value))
        .collect();
    files.sort();
    files.dedup();
    let mut next: HashMap<&str, usize> = files.iter().map(|f| (f.as_str(), 0)).collect();
    for item in out.iter_mut() {
        let value = match item {
            Item::Kept(i) => &items[*i].value,
            Item::New(v) => &*v,
        };
        let Some(file) = annotations::file_path(value) else {
            continue;
        };
        let Some(n) = next.get_mut(file.as_str()) else {
            continue;
        };
        let index = *n;
        *n += 1;
        if annotations::file_index(value) == Some(index) {
            continue;
        }
        let mut value = value.clone();
        annotations::set_index(&mut value, index);
        *item = Item::New(value);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn item(mut value: Value, file: &str, index: usize) -> Object {
        annotations::set_file(&mut value, file, index);
        let origin = annotations::origin_of(&value, 0);
        Object::new(value, origin)
    }

    fn preset(name: &str, label: &str, domain: Value) -> Value {
        json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstancePreset",
               "metadata": {"name": name, "namespace": "lab"},
               "spec": {"selector": {"matchLabels": {label: "yes"}}, "domain": domain}})
    }

    fn vm(kind: &str, name: &str, labels: Value) -> Value {
        let template = json!({"metadata": {"labels": labels},
                              "spec": {"domain": {"devices": {}}}});
        match kind {
            "VirtualMachine" => json!({"apiVersion": "kubevirt.io/v1", "kind": kind,
                "metadata": {"name": name, "namespace": "lab"},
                "spec": {"runStrategy": "Halted", "template": template}}),
            _ => json!({"apiVersion": "kubevirt.io/v1", "kind": kind,
                "metadata": {"name": name, "namespace": "lab", "labels": labels},
                "spec": template["spec"]}),
        }
    }

    fn config() -> FnConfig {
        FnConfig {
            migrate: true,
            default_catalog: false,
            ..FnConfig::default()
        }
    }

    /// Where each output item is: its kind and name, file and index.
    fn placed(items: &[Object], out: &Migrated) -> Vec<String> {
        out.items
            .iter()
            .map(|item| {
                let value = match item {
                    Item::Kept(i) => &items[*i].value,
                    Item::New(v) => v,
                };
                let o = Object::new(value.clone(), Origin::default());
                format!(
                    "{}/{} {}:{}",
                    o.kind_str(),
                    o.name(),
                    annotations::file_path(value).unwrap_or_default(),
                    annotations::file_index(value).map_or(-1, |i| i as i64)
                )
            })
            .collect()
    }

    /// The errors about an object; the one error that says the run changed nothing is there
    /// too.
    fn vm_errors(out: &Migrated) -> Vec<&Diagnostic> {
        let (about, run): (Vec<&Diagnostic>, Vec<&Diagnostic>) = out
            .diagnostics
            .iter()
            .filter(|d| d.is_error())
            .partition(|d| d.object.is_some());
        assert_eq!(run.len(), 1, "{:?}", out.diagnostics);
        assert!(run[0].message.contains("nothing was changed: the "));
        about
    }

    #[test]
    fn each_preset_gives_way_to_its_objects_in_its_file() {
        let size = json!({"cpu": {"cores": 2}, "resources": {"requests": {"memory": "2Gi"}}});
        let os = json!({"features": {"acpi": {}, "apic": {}}});
        let items = vec![
            item(preset("small", "small", size), "presets.yaml", 0),
            item(
                vm("VirtualMachine", "a", json!({"small": "yes"})),
                "presets.yaml",
                1,
            ),
            item(preset("linux", "linux", os), "presets.yaml", 2),
            item(
                vm(
                    "VirtualMachine",
                    "b",
                    json!({"small": "yes", "linux": "yes"}),
                ),
                "b.yaml",
                0,
            ),
            item(
                vm("VirtualMachine", "c", json!({"other": "yes"})),
                "c.yaml",
                0,
            ),
        ];
        let out = migrate(&items, &config(), Placement::Files);
        assert!(
            !out.diagnostics.iter().any(Diagnostic::is_error),
            "{:?}",
            out.diagnostics
        );
        assert_eq!(
            placed(&items, &out),
            [
                "VirtualMachineInstancetype/small presets.yaml:0",
                "VirtualMachinePreference/small presets.yaml:1",
                "VirtualMachine/a presets.yaml:2",
                // The merged preference is named in migration order, and goes with the first.
                "VirtualMachinePreference/linux presets.yaml:3",
                "VirtualMachinePreference/linux-small presets.yaml:4",
                "VirtualMachine/b b.yaml:0",
                "VirtualMachine/c c.yaml:0",
            ]
        );
        // The VM no preset selects is the input item itself; the others name their objects.
        assert!(matches!(out.items[6], Item::Kept(4)));
        let Item::New(b) = &out.items[5] else {
            panic!("b is rewritten")
        };
        assert_eq!(b["spec"]["instancetype"]["name"], "small");
        assert_eq!(b["spec"]["preference"]["name"], "linux-small");
        let infos = out
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Info)
            .count();
        assert_eq!(infos, 4, "{:?}", out.diagnostics);
    }

    /// The info result of a rewritten VM names what was removed from it and what was set.
    #[test]
    fn a_rewritten_vm_is_told_what_changed_in_it() {
        let size = json!({"cpu": {"cores": 2}, "resources": {"requests": {"memory": "2Gi"}},
                          "devices": {"watchdog": {"name": "w", "i6300esb": {}}}});
        let mut own = vm("VirtualMachine", "a", json!({"small": "yes"}));
        own["spec"]["template"]["spec"]["domain"]["cpu"] = json!({"cores": 2});
        own["spec"]["template"]["spec"]["domain"]["resources"] =
            json!({"requests": {"memory": "2Gi"}});
        let items = vec![
            item(preset("small", "small", size), "presets.yaml", 0),
            item(own, "a.yaml", 0),
        ];
        let out = migrate(&items, &config(), Placement::Files);
        let told: Vec<&str> = out
            .diagnostics
            .iter()
            .filter(|d| d.object.as_ref().is_some_and(|o| o.name == "a"))
            .map(|d| d.message.as_str())
            .collect();
        assert_eq!(
            told,
            [
                "rewritten with the advice of its presets followed: it names instancetype `small` \
              and preference `small`; removed, as the instancetype now owns it: \
              spec.template.spec.domain.cpu, spec.template.spec.domain.resources; set from \
              its presets, \
              which no matcher carries: spec.template.spec.domain.devices.watchdog"
            ]
        );
    }

    /// With `strict`, a warning (a preset part no object carries) stops the migration too.
    #[test]
    fn strict_stops_the_migration_on_a_warning() {
        let size = json!({"cpu": {"cores": 2},
                          "resources": {"requests": {"memory": "2Gi", "cpu": "1"}}});
        let items = vec![
            item(preset("small", "small", size), "presets.yaml", 0),
            item(
                vm("VirtualMachine", "a", json!({"small": "yes"})),
                "a.yaml",
                0,
            ),
        ];
        let out = migrate(&items, &config(), Placement::Files);
        assert!(
            out.items.iter().any(|item| matches!(item, Item::New(_))),
            "{:?}",
            out.diagnostics
        );
        let strict = FnConfig {
            strict: true,
            ..config()
        };
        let out = migrate(&items, &strict, Placement::Files);
        assert!(out.items.iter().all(|item| matches!(item, Item::Kept(_))));
        assert!(
            out.diagnostics
                .iter()
                .any(|d| d.message.contains("nothing was changed")),
            "{:?}",
            out.diagnostics
        );
    }

    /// A VM's own instancetype found in `catalogs` lets the migration judge it.
    #[test]
    fn the_catalogs_resolve_what_a_vm_names_itself() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = dir.path().join("team.yaml");
        std::fs::write(
            &catalog,
            "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: \
             VirtualMachineClusterInstancetype\nmetadata:\n  name: team.small\nspec:\n  \
             cpu: {guest: 2}\n  memory: {guest: 2Gi}\n",
        )
        .unwrap();
        let os = json!({"features": {"acpi": {}, "apic": {}}});
        let mut named = vm("VirtualMachine", "a", json!({"linux": "yes"}));
        named["spec"]["instancetype"] = json!({"name": "team.small"});
        let items = vec![
            item(preset("linux", "linux", os), "presets.yaml", 0),
            item(named, "a.yaml", 0),
        ];
        let with_catalog = FnConfig {
            catalogs: vec![catalog.to_string_lossy().into_owned()],
            ..config()
        };
        let out = migrate(&items, &with_catalog, Placement::Files);
        assert!(
            !out.diagnostics.iter().any(Diagnostic::is_error),
            "{:?}",
            out.diagnostics
        );
        let Item::New(a) = &out.items[1] else {
            panic!("a is rewritten: {:?}", out.diagnostics)
        };
        assert_eq!(a["spec"]["instancetype"]["name"], "team.small");
        assert_eq!(a["spec"]["preference"]["name"], "linux");
    }

    /// What the presets give a VM that names an instancetype nobody has cannot be judged.
    #[test]
    fn a_vm_whose_own_instancetype_is_nowhere_stops_the_migration() {
        let os = json!({"features": {"acpi": {}, "apic": {}}});
        let mut named = vm("VirtualMachine", "a", json!({"linux": "yes"}));
        named["spec"]["instancetype"] = json!({"name": "nowhere"});
        let items = vec![
            item(preset("linux", "linux", os), "presets.yaml", 0),
            item(named, "a.yaml", 0),
        ];
        let out = migrate(&items, &config(), Placement::Files);
        let errors = vm_errors(&out);
        assert_eq!(errors.len(), 1, "{:?}", out.diagnostics);
        assert!(errors[0].message.contains("\"nowhere\" not found"));
        assert!(errors[0].message.contains("cannot be migrated"));
        assert!(out.items.iter().all(|item| matches!(item, Item::Kept(_))));
    }

    /// Two presets that each give one VM an instancetype: it takes one, so it cannot be
    /// migrated, and neither can the package.
    #[test]
    fn presets_whose_advice_clashes_stop_the_migration() {
        let size = |cores: u32| json!({"cpu": {"cores": cores}, "resources": {"requests": {"memory": "2Gi"}}});
        let items = vec![
            item(preset("small", "small", size(2)), "presets.yaml", 0),
            item(preset("large", "large", size(4)), "presets.yaml", 1),
            item(
                vm(
                    "VirtualMachine",
                    "a",
                    json!({"small": "yes", "large": "yes"}),
                ),
                "a.yaml",
                0,
            ),
        ];
        let out = migrate(&items, &config(), Placement::Files);
        let errors = vm_errors(&out);
        assert!(!errors.is_empty(), "{:?}", out.diagnostics);
        assert!(
            errors.iter().any(|d| d
                .message
                .starts_with("cannot be migrated: several presets select it")),
            "{errors:?}"
        );
        // Their CPUs conflict: KubeVirt starts no VMI of the VM today.
        assert!(
            errors.iter().any(|d| d
                .message
                .starts_with("KubeVirt refuses every VirtualMachineInstance it starts today")),
            "{errors:?}"
        );
        assert!(out.items.iter().all(|item| matches!(item, Item::Kept(_))));
    }

    #[test]
    fn a_vmi_a_preset_gives_something_to_stops_the_migration() {
        let size = json!({"cpu": {"cores": 2}, "resources": {"requests": {"memory": "2Gi"}}});
        let items = vec![
            item(preset("small", "small", size), "presets.yaml", 0),
            item(
                vm("VirtualMachine", "a", json!({"small": "yes"})),
                "a.yaml",
                0,
            ),
            item(
                vm("VirtualMachineInstance", "bare", json!({"small": "yes"})),
                "bare.yaml",
                0,
            ),
        ];
        let out = migrate(&items, &config(), Placement::Files);
        let errors = vm_errors(&out);
        assert_eq!(errors.len(), 1, "{:?}", out.diagnostics);
        assert_eq!(errors[0].object.as_ref().unwrap().name, "bare");
        assert!(errors[0].message.contains("cannot be migrated"));
        assert!(
            out.items
                .iter()
                .enumerate()
                .all(|(i, item)| matches!(item, Item::Kept(k) if *k == i))
        );
        // Reported as a warning, it still changes nothing.
        let lenient = FnConfig {
            severity: Severity::Warning,
            ..config()
        };
        let out = migrate(&items, &lenient, Placement::Files);
        assert!(!out.diagnostics.iter().any(Diagnostic::is_error));
        assert!(out.items.iter().all(|item| matches!(item, Item::Kept(_))));
    }
}

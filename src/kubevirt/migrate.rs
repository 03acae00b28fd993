//! `migrate presets`: turn VirtualMachineInstancePresets into instancetypes and preferences.
//!
//! Nothing upstream does this; the mapping is ours and is documented, field by field, in
//! the README. For every preset we write a namespaced `VirtualMachinePreference`
//! (when some part maps to one) and, when the preset fixes both the vCPU count and the memory, a
//! namespaced `VirtualMachineInstancetype` (an instancetype needs both). Every part of the
//! preset's domain that ends in neither is reported in [`MigrateResult::unmapped`] with the
//! reason, never dropped silently. For every VirtualMachine / VirtualMachineInstance a preset
//! selects (with the rules of [`crate::kubevirt::presets`]), [`MigrateResult::matchers`] gives
//! the matchers to add and the fields of the VM the new instancetype would conflict with.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::kubevirt::presets::selector::{self, Selector};
use crate::kubevirt::presets::{self, EXCLUDE_ANNOTATION, SkippedField};
use crate::kubevirt::vmi::vmi_for;
use crate::model::path;
use crate::model::path::Fields;
use crate::model::quantity::Quantity;
use crate::model::{Kind, Object};
use crate::origin::ObjectRef;

/// How the reason of an [`Unmapped`] part ends when KubeVirt applies that part of the preset
/// today: the VMs it selects lose it unless their own spec takes it.
pub const KEEP_IN_TEMPLATE: &str = "keep it in the VM template";

/// A part of a preset with no instancetype or preference equivalent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unmapped {
    /// The preset.
    pub preset: ObjectRef,
    /// The field, under the preset (`spec.domain.firmware.serial`).
    pub field: String,
    /// Why it was not carried over, and what to do instead.
    pub reason: String,
}

/// The matchers to add to a VM (or VMI) a preset selects.
#[derive(Clone, Debug, PartialEq)]
pub struct MatcherSuggestion {
    /// The VirtualMachine or VirtualMachineInstance.
    pub target: ObjectRef,
    /// The preset that selects it.
    pub preset: String,
    /// `spec.instancetype` to add, when an instancetype was written for the preset.
    pub instancetype: Option<Value>,
    /// `spec.preference` to add, when a preference was written for the preset.
    pub preference: Option<Value>,
    /// Fields of the target the instancetype also sets: KubeVirt refuses a VM that sets them,
    /// so they must be removed when the matcher is added.
    pub remove_fields: Vec<String>,
    /// Every preset selecting the target, this one included, in migration order: one list
    /// shared by all the target's suggestions (a VM that thousands of presets select would
    /// otherwise hold a copy for each). See [`Self::also_selected_by`].
    pub selected_by: Arc<[String]>,
    /// Fields of [`Self::remove_fields`] the target sets to another value than the preset:
    /// KubeVirt skips a preset's value the VMI already sets differently, so the target runs
    /// with its own value today, and would run with the instancetype's once migrated. Each is
    /// (field, the target's value, the preset's value). The CPU layout is one entry, at
    /// `…domain.cpu`, with `[sockets, cores, threads]` on both sides (an axis not set is 1);
    /// a CPU request or limit is none (the instancetype carries neither).
    pub overridden: Vec<(String, Value, Value)>,
    /// The parts of the preset KubeVirt skips for this target today, beyond those of
    /// [`Self::overridden`]: the VMI already sets them differently (every VM's VMI has a
    /// firmware UUID, so a preset's `firmware` never reaches a VM). The instancetype or
    /// preference written for the preset carries them, so migrating changes what runs. Each
    /// is (the field under the target, `spec.template.spec.domain.firmware`, and what KubeVirt
    /// says of it). Only a matcher suggested brings them back.
    pub not_applied: Vec<(String, SkippedField, Carrier)>,
    /// The matchers the target already has where the migration wrote an object of the same
    /// kind for the preset: a VM takes one instancetype and one preference, so that object is
    /// not suggested for it. Each is (`spec.instancetype` or `spec.preference`, the name it
    /// gives, or what it infers from).
    pub own_matchers: Vec<(&'static str, String)>,
    /// What the preset gives the target today through the fields that migrate to an object
    /// not suggested for it (see [`Self::own_matchers`]): lost with the preset. Fields under
    /// the target (`spec.template.spec.domain.resources.requests.memory`).
    pub lost: Vec<String>,
    /// The leaves of the VMI's domain the preset changes today, dotted
    /// (`resources.requests.memory`): what the target loses with the preset unless something
    /// carries it.
    pub applied_today: Vec<String>,
    /// Whether the target must get an empty `domain.cpu` with the preference matcher: the
    /// preference has `preferredCPUFeatures`, which KubeVirt writes into the VM's `cpu`, and
    /// neither the VM nor an instancetype provides one (KubeVirt fails on the missing `cpu`).
    pub needs_cpu: bool,
}

/// Which of the objects suggested for a target carries a part of the preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Carrier {
    /// The instancetype.
    Instancetype,
    /// The preference.
    Preference,
    /// Both.
    Both,
}

impl Carrier {
    /// How a message names it: `instancetype`, `preference`, `instancetype and preference`.
    pub fn describe(self) -> &'static str {
        match self {
            Carrier::Instancetype => "instancetype",
            Carrier::Preference => "preference",
            Carrier::Both => "instancetype and preference",
        }
    }
}

impl MatcherSuggestion {
    /// The other presets selecting the same target (a VM takes one instancetype and one
    /// preference: they must be merged by hand). A preset of the same name is not another.
    pub fn also_selected_by(&self) -> impl Iterator<Item = &str> {
        self.selected_by
            .iter()
            .map(String::as_str)
            .filter(|name| *name != self.preset)
    }
}

/// What [`migrate_presets`] produced.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MigrateResult {
    /// The new objects, per preset: the instancetype (if any), then the preference (if any).
    pub objects: Vec<Value>,
    /// Parts of presets with no equivalent.
    pub unmapped: Vec<Unmapped>,
    /// Matchers to add, per selected VM/VMI and preset.
    pub matchers: Vec<MatcherSuggestion>,
    /// The VirtualMachinePools and VirtualMachineInstanceReplicaSets whose VMIs presets select,
    /// each with those presets in migration order: no advice is worked out for them.
    pub owners: Vec<(ObjectRef, Vec<String>)>,
}

/// Migrate every VirtualMachineInstancePreset of `objects`.
///
/// `controller_vm(target)`, asked only of the targets a preset selects, is a VirtualMachine
/// that names an instancetype or preference as the VM controller has it when it creates the
/// VMI (both applied): what the presets meet today. Where it gives nothing, the target's own
/// spec stands for that.
pub fn migrate_presets(
    objects: &[Object],
    controller_vm: &dyn Fn(&Object) -> Option<Value>,
) -> MigrateResult {
    let mut result = MigrateResult::default();
    let mut presets: Vec<&Object> = objects
        .iter()
        .filter(|o| o.kind() == Kind::VirtualMachineInstancePreset)
        .collect();
    presets.sort_by(|a, b| {
        (a.effective_namespace(), a.name()).cmp(&(b.effective_namespace(), b.name()))
    });

    let mut written = Vec::new();
    for preset in &presets {
        // KubeVirt refuses a preset without a domain at creation: it never applies to anything.
        if path::get(&preset.value, &["spec", "domain"]).is_none_or(Value::is_null) {
            result.unmapped.push(Unmapped {
                preset: preset.object_ref(),
                field: "spec.domain".into(),
                reason: "the preset has no `spec.domain`: KubeVirt refuses it at creation \
                         (\"missing domain.\"), so it applies to nothing and there is nothing \
                         to migrate"
                    .into(),
            });
            continue;
        }
        let converted = convert(preset);
        result.unmapped.extend(converted.unmapped);
        let instancetype = converted.instancetype.map(|spec| {
            result
                .objects
                .push(object(preset, "VirtualMachineInstancetype", spec));
            json!({"kind": "VirtualMachineInstancetype", "name": preset.name()})
        });
        let preference = converted.preference.map(|spec| {
            result
                .objects
                .push(object(preset, "VirtualMachinePreference", spec));
            json!({"kind": "VirtualMachinePreference", "name": preset.name()})
        });
        written.push(Written {
            preset,
            instancetype,
            preference,
            owns: converted.instancetype_owns,
            preference_carries: converted.preference_carries,
            cpu_features: converted.cpu_features,
            cpu_topology: converted.cpu_topology,
        });
    }

    let selectors: Vec<Option<Selector>> = written
        .iter()
        .map(|w| selector::parse(path::get(&w.preset.value, &["spec", "selector"])).ok())
        .collect();
    let index = SelectorIndex::new(&written, &selectors);
    for target in objects {
        // The VMIs a pool or a replica set starts: which presets select them is told.
        let made = if crate::kubevirt::pool::is_pool(target) {
            crate::kubevirt::pool::vm_of(target, 0)
        } else if crate::kubevirt::replica_set::is_replica_set(target) {
            crate::kubevirt::replica_set::vmi_of(target)
        } else {
            None
        };
        if let Some(vmi) = made.as_ref().and_then(vmi_for) {
            let excluded = path::str_at(&vmi, &["metadata", "annotations", EXCLUDE_ANNOTATION])
                == Some("true");
            let labels = presets::vmi_labels(&vmi);
            let names: Vec<String> = index
                .selecting(target.effective_namespace(), &labels)
                .into_iter()
                .map(|i| written[i].preset.name().to_string())
                .collect();
            if !excluded && !names.is_empty() {
                result.owners.push((target.object_ref(), names));
            }
            continue;
        }
        let Some(vmi) = vmi_for(target) else {
            continue;
        };
        let own = |key: &str| -> Option<String> {
            if target.kind() != Kind::VirtualMachine {
                return None;
            }
            let matcher = path::get(&target.value, &["spec", key]).filter(|v| !v.is_null())?;
            Some(match path::str_at(matcher, &["name"]) {
                Some(name) if !name.is_empty() => format!("`{name}`"),
                _ => match path::str_at(matcher, &["inferFromVolume"]) {
                    Some(volume) => format!("the one inferred from volume `{volume}`"),
                    None => "an unnamed one".to_string(),
                },
            })
        };
        let (own_instancetype, own_preference) = (own("instancetype"), own("preference"));
        if path::str_at(&vmi, &["metadata", "annotations", EXCLUDE_ANNOTATION]) == Some("true") {
            continue;
        }
        let labels = presets::vmi_labels(&vmi);
        let selecting: Vec<&Written> = index
            .selecting(target.effective_namespace(), &labels)
            .into_iter()
            .map(|i| &written[i])
            .collect();
        if selecting.is_empty() {
            continue;
        }
        // The VMI the presets meet today: with the VM's own instancetype and preference.
        let mut base = controller_vm(target)
            .and_then(|vm| vmi_for(&target.with_value(vm)))
            .unwrap_or_else(|| vmi.clone());
        // As KubeVirt's webhook gets it: `null` strings as "", no empty requests or limits.
        crate::kubevirt::vmi::null_strings_as_empty(&mut base);
        crate::kubevirt::vmi::omit_empty_resources_and_devices(&mut base);
        let selected_by: Arc<[String]> = selecting
            .iter()
            .map(|w| w.preset.name().to_string())
            .collect();
        for w in &selecting {
            let Written {
                preset,
                instancetype,
                preference,
                owns,
                preference_carries,
                cpu_features,
                cpu_topology,
            } = w;
            // A VM takes one instancetype and one preference: its own stay.
            let mut own_matchers = Vec::new();
            let mut unsuggested: Vec<&[&str]> = Vec::new();
            let instancetype = match (instancetype, &own_instancetype) {
                (Some(_), Some(name)) => {
                    own_matchers.push(("spec.instancetype", name.clone()));
                    unsuggested.extend(owns.iter().copied());
                    unsuggested.push(&["cpu", "maxSockets"]);
                    &None
                }
                _ => instancetype,
            };
            let preference = match (preference, &own_preference) {
                (Some(_), Some(name)) => {
                    own_matchers.push(("spec.preference", name.clone()));
                    unsuggested.extend(preference_carries.iter().copied());
                    &None
                }
                _ => preference,
            };
            let domain = path::get(&vmi, &["spec", "domain"]);
            let set: Vec<&[&str]> = if instancetype.is_some() {
                owns.iter()
                    .filter(|at| domain.is_some_and(|d| path::is_set(d, at)))
                    .copied()
                    .collect()
            } else {
                Vec::new()
            };
            let prefix = if target.kind() == Kind::VirtualMachine {
                "spec.template.spec.domain"
            } else {
                "spec.domain"
            };
            let field = |at: &[&str]| format!("{prefix}.{}", at.join("."));
            let preset_domain = path::get(&preset.value, &["spec", "domain"]);
            // What the preset does to this target today, alone.
            let mut trial = base.clone();
            let skipped =
                presets::apply_presets(&mut trial, target.effective_namespace(), &[preset])
                    .map(|outcome| outcome.skipped)
                    .unwrap_or_default();
            // The CPU layout is one part: the instancetype's guest vCPUs are the preset's
            // sockets × cores × threads, laid out as the preference says, so no axis alone
            // says what the VM would run with.
            let axis = |at: &[&str]| matches!(at, ["cpu", "sockets" | "cores" | "threads"]);
            let cpu_override = set.iter().any(|at| axis(at)).then(|| {
                let mine = cpu_layout(domain.and_then(|d| d.get("cpu")));
                let theirs = cpu_layout(preset_domain.and_then(|d| d.get("cpu")));
                (mine != theirs).then(|| (field(&["cpu"]), json!(mine), json!(theirs)))
            });
            let overridden: Vec<(String, Value, Value)> = cpu_override
                .flatten()
                .into_iter()
                .chain(set.iter().filter_map(|at| {
                    // Neither the instancetype nor the preference carries a CPU request or a
                    // CPU limit: a VM drops its own beside an instancetype (the advice says
                    // so), and a preset's never reached it.
                    if axis(at) || matches!(at, ["resources", _, "cpu"]) {
                        return None;
                    }
                    let mine = path::get(domain?, at)?;
                    // The instancetype's guest memory is the preset's memory request. It
                    // replaces the VM's memory limit where that sizes the guest today: nothing
                    // else does (KubeVirt merges a preset's requests only into a VMI that has
                    // none).
                    let from: &[&str] = match at {
                        ["memory", "guest"] => &["resources", "requests", "memory"],
                        ["resources", "limits", "memory"] => {
                            let today = path::get(&trial, &["spec", "domain"]);
                            let sized = |at: &[&str]| {
                                today
                                    .and_then(|d| path::get(d, at))
                                    .is_some_and(|v| !v.is_null())
                            };
                            if sized(&["memory", "guest"])
                                || sized(&["resources", "requests", "memory"])
                            {
                                return None;
                            }
                            &["resources", "requests", "memory"]
                        }
                        _ => at,
                    };
                    let theirs = path::get(preset_domain?, from).filter(|v| !v.is_null())?;
                    (!same_value(mine, theirs)).then(|| (field(at), mine.clone(), theirs.clone()))
                }))
                .collect();
            let remove_fields = set.iter().map(|at| field(at)).collect();
            // What the preset changes in the VMI today, leaf by leaf (a preset part the VMI
            // already has, or one KubeVirt passes over, changes nothing).
            let mut changed = Vec::new();
            changed_leaves(
                path::get(&base, &["spec", "domain"]),
                path::get(&trial, &["spec", "domain"]),
                &mut Vec::new(),
                &mut changed,
            );
            let lost: Vec<String> = changed
                .iter()
                .filter(|at| {
                    unsuggested.iter().any(|carried| {
                        at.len() >= carried.len()
                            && at.iter().zip(carried.iter()).all(|(a, c)| a == c)
                    })
                })
                .map(|at| format!("{prefix}.{}", at.join(".")))
                .collect();
            let applied_today: Vec<String> = changed.into_iter().map(|at| at.join(".")).collect();
            // What the objects suggested for this target would apply: the instancetype's fields,
            // the preference's, and the preference's CPU topology wherever an instancetype (its
            // own or the suggested one) gives a vCPU count to lay out.
            // Not a CPU request or limit: the instancetype only makes a VM drop its own.
            let by_instancetype: Vec<&[&str]> = if instancetype.is_some() {
                owns.iter()
                    .copied()
                    .filter(|at| !matches!(at, ["resources", _, "cpu"]))
                    .collect()
            } else {
                Vec::new()
            };
            let base_domain = path::get(&base, &["spec", "domain"]);
            let by_preference = if preference.is_some() {
                // The instancetype's vCPUs are laid out as the preference says, whatever the
                // VM (one vCPU has one layout).
                let laid_out = instancetype.is_some()
                    || (own_instancetype.is_some() && vcpus(base_domain) > 1);
                preference_would_apply(
                    preference_carries,
                    base_domain,
                    preset_domain,
                    *cpu_topology && laid_out,
                )
            } else {
                Vec::new()
            };
            // A section with an override of its own is told as that override (a CPU layout
            // tells the whole `cpu` only where the preset's has nothing else the VM lacks); one
            // that neither suggested object carries stays as it is today.
            let beyond_layout = {
                let mine = without_layout(base_domain.and_then(|d| d.get("cpu")));
                without_layout(preset_domain.and_then(|d| d.get("cpu"))).is_some_and(|theirs| {
                    theirs
                        .iter()
                        .any(|(k, v)| mine.as_ref().and_then(|m| m.get(k)) != Some(v))
                })
            };
            let not_applied = skipped
                .into_iter()
                .filter_map(|skip| {
                    let at = skip.domain_path();
                    let section = at.split('.').next().unwrap_or_default();
                    let whole = format!("{prefix}.{section}");
                    let under = format!("{whole}.");
                    let told = overridden.iter().any(|(f, ..)| {
                        f.starts_with(&under)
                            || (*f == whole && !(section == "cpu" && beyond_layout))
                    });
                    // KubeVirt tells quantities apart by their spelling too (`1Gi`, `1024Mi`):
                    // the same amount changes nothing.
                    let parts: Vec<&str> = at.split('.').collect();
                    let same = base_domain
                        .and_then(|d| path::get(d, &parts))
                        .zip(preset_domain.and_then(|d| path::get(d, &parts)))
                        .is_some_and(|(mine, theirs)| same_value(mine, theirs));
                    if same {
                        return None;
                    }
                    let carrier = match (
                        by_instancetype.iter().any(|c| overlaps(&at, c)),
                        by_preference.iter().any(|c| overlaps(&at, c)),
                    ) {
                        (true, true) => Carrier::Both,
                        (true, false) => Carrier::Instancetype,
                        (false, true) => Carrier::Preference,
                        (false, false) => return None,
                    };
                    (!told).then(|| (format!("{prefix}.{at}"), skip, carrier))
                })
                .collect();
            result.matchers.push(MatcherSuggestion {
                target: target.object_ref(),
                preset: preset.name().to_string(),
                instancetype: instancetype.clone(),
                preference: preference.clone(),
                remove_fields,
                selected_by: Arc::clone(&selected_by),
                overridden,
                not_applied,
                own_matchers,
                lost,
                applied_today,
                needs_cpu: *cpu_features
                    && preference.is_some()
                    && instancetype.is_none()
                    && target.kind() == Kind::VirtualMachine
                    && path::get(&target.value, &["spec", "instancetype"])
                        .is_none_or(Value::is_null)
                    && domain.and_then(|d| d.get("cpu")).is_none_or(Value::is_null),
            });
        }
    }
    result
}

/// The migrated presets of every namespace, found from a target's labels without trying every
/// preset of the namespace on it (thousands of presets, each selecting its own VM, made that a
/// pass over every preset for every VM).
struct SelectorIndex<'s> {
    selectors: &'s [Option<Selector>],
    namespaces: HashMap<&'s str, NamespaceIndex<'s>>,
}

/// The presets of one namespace, by position in the migration order.
#[derive(Default)]
struct NamespaceIndex<'s> {
    /// Presets whose selector requires one of a few values of a label (`matchLabels`, or an `In`
    /// expression), under each (label, value): a target without one of them is not selected.
    by_label: HashMap<&'s str, HashMap<&'s str, Vec<usize>>>,
    /// Presets with no such requirement (`{}`, `NotIn`, `Exists`, ...): tried on every target.
    others: Vec<usize>,
}

impl<'s> SelectorIndex<'s> {
    /// `selectors[i]` is the parsed selector of `written[i]`, `None` when it does not parse (it
    /// selects nothing).
    fn new(written: &'s [Written<'_>], selectors: &'s [Option<Selector>]) -> Self {
        let mut namespaces: HashMap<&str, NamespaceIndex> = HashMap::new();
        for (i, (w, selector)) in written.iter().zip(selectors).enumerate() {
            let Some(selector) = selector else { continue };
            let ns = namespaces
                .entry(w.preset.effective_namespace())
                .or_default();
            let required = selector
                .requirements
                .iter()
                .find(|r| matches!(r.op, selector::Op::Equals | selector::Op::In));
            match required {
                Some(r) => {
                    let by_value = ns.by_label.entry(r.key.as_str()).or_default();
                    for value in &r.values {
                        by_value.entry(value.as_str()).or_default().push(i);
                    }
                }
                None => ns.others.push(i),
            }
        }
        SelectorIndex {
            selectors,
            namespaces,
        }
    }

    /// The positions of the presets of `namespace` whose selector matches `labels`, in order.
    fn selecting(&self, namespace: &str, labels: &[(String, String)]) -> Vec<usize> {
        let Some(ns) = self.namespaces.get(namespace) else {
            return Vec::new();
        };
        let mut found = ns.others.clone();
        for (key, value) in labels {
            if let Some(presets) = ns
                .by_label
                .get(key.as_str())
                .and_then(|by_value| by_value.get(value.as_str()))
            {
                found.extend(presets);
            }
        }
        // An `In` listing a value twice files its preset twice under it.
        found.sort_unstable();
        found.dedup();
        found.retain(|&i| {
            self.selectors[i]
                .as_ref()
                .is_some_and(|s| s.matches(labels))
        });
        found
    }
}

/// A `cpu` without its layout (`sockets`, `cores`, `threads`) and its null fields; `None` when
/// nothing else is set.
pub(crate) fn without_layout(cpu: Option<&Value>) -> Option<Map<String, Value>> {
    let mut rest = cpu?.as_object()?.clone();
    rest.retain(|k, v| !matches!(k.as_str(), "sockets" | "cores" | "threads") && !v.is_null());
    (!rest.is_empty()).then_some(rest)
}

/// Whether two values of one field are the same, quantities by value (`1Gi` is `1024Mi`).
pub(crate) fn same_value(a: &Value, b: &Value) -> bool {
    if a == b {
        return true;
    }
    match (Quantity::from_json(a), Quantity::from_json(b)) {
        (Some(a), Some(b)) => a.eq_value(&b),
        _ => false,
    }
}

/// A migrated preset.
struct Written<'a> {
    preset: &'a Object,
    /// The instancetype matcher, when an instancetype was written for it.
    instancetype: Option<Value>,
    /// The preference matcher, when a preference was written for it.
    preference: Option<Value>,
    /// The domain paths the instancetype owns.
    owns: Vec<&'static [&'static str]>,
    /// The domain paths of the preset the preference carries.
    preference_carries: Vec<&'static [&'static str]>,
    /// Whether the preference has `preferredCPUFeatures`.
    cpu_features: bool,
    /// Whether the preference lays out vCPUs other than the default way (`preferredCPUTopology`
    /// other than sockets).
    cpu_topology: bool,
}

/// The parts a preference carrying `carries` (domain paths of the preset) would change in a
/// VMI whose domain is `base`: those [`preference_fills`] lets it fill, and the CPU layout when
/// `lays_out_cpu` (the preference has a layout of its own and an instancetype gives it vCPUs
/// to lay out).
fn preference_would_apply<'a>(
    carries: &[&'a [&'a str]],
    base: Option<&Value>,
    preset: Option<&Value>,
    lays_out_cpu: bool,
) -> Vec<&'a [&'a str]> {
    let mut applies: Vec<&[&str]> = carries
        .iter()
        .copied()
        .filter(|at| preference_fills(base, preset, at))
        .collect();
    if lays_out_cpu {
        applies.extend([
            &["cpu", "sockets"][..],
            &["cpu", "cores"],
            &["cpu", "threads"],
        ]);
    }
    applies
}

/// The vCPUs of a VMI domain: its sockets, cores and threads multiplied, each 1 when unset.
fn vcpus(domain: Option<&Value>) -> u64 {
    layout_vcpus(cpu_layout(domain.and_then(|d| d.get("cpu"))))
}

/// The vCPUs of a layout, `[sockets, cores, threads]` multiplied (at most `u64::MAX`).
pub(crate) fn layout_vcpus(layout: [u64; 3]) -> u64 {
    layout.into_iter().fold(1, u64::saturating_mul)
}

/// The layout of a `cpu`, `[sockets, cores, threads]`: an axis unset or 0 counts as 1, as
/// KubeVirt lays vCPUs out.
pub(crate) fn cpu_layout(cpu: Option<&Value>) -> [u64; 3] {
    ["sockets", "cores", "threads"].map(|axis| {
        cpu.and_then(|c| c.get(axis))
            .and_then(Value::as_u64)
            .filter(|n| *n > 0)
            .unwrap_or(1)
    })
}

/// Whether a preference carrying the preset's part at `at` (a path of `preference_carries`)
/// would change a VMI whose domain is `base`, as KubeVirt applies preferences: each one where
/// the VMI leaves it unset, CPU features and Hyper-V enlightenments one by one, the BIOS serial
/// inside a BIOS the VM chose, and ACPI always (which changes something only where the two
/// disagree on whether it is on).
fn preference_fills(base: Option<&Value>, preset: Option<&Value>, at: &[&str]) -> bool {
    let unset = |at: &[&str]| {
        base.and_then(|d| path::get(d, at))
            .is_none_or(Value::is_null)
    };
    let from_preset = |at: &[&str]| preset.and_then(|d| path::get(d, at));
    match at {
        // Taken whatever the VMI has; ACPI is on unless a VMI turns it off.
        ["features", "acpi"] => {
            let enabled = |acpi: Option<&Value>| {
                acpi.and_then(|a| a.get("enabled"))
                    .and_then(Value::as_bool)
                    .unwrap_or(true)
            };
            enabled(from_preset(at)) != enabled(base.and_then(|d| path::get(d, at)))
        }
        ["features", "hyperv"] => {
            from_preset(at)
                .and_then(Value::as_object)
                .is_some_and(|hyperv| {
                    hyperv
                        .iter()
                        .any(|(k, v)| !v.is_null() && unset(&["features", "hyperv", k]))
                })
        }
        ["cpu", "features"] => {
            let name = |f: &Value| f.get("name").and_then(Value::as_str).map(str::to_string);
            let have: Vec<String> = base
                .and_then(|d| path::get(d, at))
                .and_then(Value::as_array)
                .map(|fs| fs.iter().filter_map(name).collect())
                .unwrap_or_default();
            from_preset(at)
                .and_then(Value::as_array)
                .is_some_and(|fs| fs.iter().filter_map(name).any(|n| !have.contains(&n)))
        }
        ["clock", "utc" | "timezone"] => unset(&["clock", "utc"]) && unset(&["clock", "timezone"]),
        ["firmware", "bootloader"] => {
            let chosen = !unset(&["firmware", "bootloader", "bios"])
                || !unset(&["firmware", "bootloader", "efi"]);
            // The serial reaches a BIOS the VM chose itself.
            let serial = from_preset(&["firmware", "bootloader", "bios", "useSerial"])
                .is_some_and(|v| !v.is_null())
                && !unset(&["firmware", "bootloader", "bios"])
                && unset(&["firmware", "bootloader", "bios", "useSerial"]);
            !chosen || serial
        }
        _ => unset(at),
    }
}

/// Whether a part of a preset KubeVirt skips, as [`SkippedField::domain_path`] names it
/// (`cpu`, `clock.clockoffset`, `resources.requests.memory`), and a domain path a migrated
/// object carries (`cpu.sockets`, `clock.utc`) meet: one lies under the other. KubeVirt
/// merges a clock's `utc` and `timezone` as one offset.
fn overlaps(skipped: &str, carried: &[&str]) -> bool {
    let skipped: Vec<&str> = skipped.split('.').collect();
    let carried: Vec<&str> = match carried {
        ["clock", "utc" | "timezone"] => vec!["clock", "clockoffset"],
        other => other.to_vec(),
    };
    skipped.iter().zip(&carried).all(|(a, b)| a == b)
}

/// The paths under `before` and `after` (two VMI domains) where they differ, leaf by leaf: a
/// mapping missing on one side is read as empty, so each path ends at a value.
fn changed_leaves(
    before: Option<&Value>,
    after: Option<&Value>,
    at: &mut Vec<String>,
    found: &mut Vec<Vec<String>>,
) {
    let empty = Map::new();
    match (before, after) {
        (Some(Value::Object(_)) | None, Some(Value::Object(_)) | None)
            if before.is_some() || after.is_some() =>
        {
            let b = before.and_then(Value::as_object).unwrap_or(&empty);
            let a = after.and_then(Value::as_object).unwrap_or(&empty);
            let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
            keys.sort_unstable();
            keys.dedup();
            // `apic: {}` where there was none is a change too.
            if keys.is_empty() && before != after {
                found.push(at.clone());
            }
            for key in keys {
                at.push(key.clone());
                changed_leaves(b.get(key), a.get(key), at, found);
                at.pop();
            }
        }
        _ if before != after => found.push(at.clone()),
        _ => {}
    }
}

/// The spread (`spreadOptions.across` and `ratio`) that lays a guest of `sockets` × `cores` ×
/// `threads` vCPUs out as exactly that layout, as KubeVirt spreads an instancetype's vCPUs:
/// across sockets and cores, `ratio` cores a socket; across cores and threads, `ratio` threads
/// a core; across all three, 2 threads a core and `ratio` cores a socket. `None` for a layout
/// no spread gives (three threads a core, say): KubeVirt's preference webhook refuses a spread
/// across cores and threads with any ratio but 2, and the other spreads put 2 threads on a core.
fn spread_for(sockets: u64, cores: u64, threads: u64) -> Option<(&'static str, u64)> {
    if threads == 1 {
        Some(("SocketsCores", cores))
    } else if threads != 2 {
        None
    } else if sockets == 1 {
        Some(("CoresThreads", 2))
    } else {
        Some(("SocketsCoresThreads", cores))
    }
}

fn object(preset: &Object, kind: &str, spec: Map<String, Value>) -> Value {
    let mut metadata = Map::new();
    metadata.insert("name".into(), json!(preset.name()));
    if let Some(ns) = preset.namespace() {
        metadata.insert("namespace".into(), json!(ns));
    }
    json!({
        "apiVersion": "instancetype.kubevirt.io/v1beta1",
        "kind": kind,
        "metadata": metadata,
        "spec": spec,
    })
}

struct Converted {
    instancetype: Option<Map<String, Value>>,
    preference: Option<Map<String, Value>>,
    /// Domain paths the instancetype sets (a VM setting them conflicts with it).
    instancetype_owns: Vec<&'static [&'static str]>,
    /// Domain paths of the preset the preference carries.
    preference_carries: Vec<&'static [&'static str]>,
    /// Whether the preference has `preferredCPUFeatures`.
    cpu_features: bool,
    /// Whether the preference lays out vCPUs other than the default way (`preferredCPUTopology`
    /// other than sockets).
    cpu_topology: bool,
    unmapped: Vec<Unmapped>,
}

/// CPU fields that move to the instancetype unchanged: preset name, instancetype name.
const CPU_TO_INSTANCETYPE: [(&str, &str); 5] = [
    ("model", "model"),
    ("dedicatedCpuPlacement", "dedicatedCPUPlacement"),
    ("numa", "numa"),
    ("isolateEmulatorThread", "isolateEmulatorThread"),
    ("realtime", "realtime"),
];

/// Feature fields and their preference names.
const FEATURES_TO_PREFERENCE: [(&str, &str); 6] = [
    ("acpi", "preferredAcpi"),
    ("apic", "preferredApic"),
    ("hyperv", "preferredHyperv"),
    ("kvm", "preferredKvm"),
    ("pvspinlock", "preferredPvspinlock"),
    ("smm", "preferredSmm"),
];

/// The domain paths of [`FEATURES_TO_PREFERENCE`]'s features.
const FEATURE_PATHS: [[&str; 2]; 6] = [
    ["features", "acpi"],
    ["features", "apic"],
    ["features", "hyperv"],
    ["features", "kvm"],
    ["features", "pvspinlock"],
    ["features", "smm"],
];

/// The seven domain parts KubeVirt merges from a preset.
const MERGED_PARTS: [&str; 7] = [
    "cpu",
    "resources",
    "firmware",
    "clock",
    "features",
    "devices",
    "ioThreadsPolicy",
];

/// Whether no two of `presets` give the same part of a VMI, as KubeVirt merges them: the CPU,
/// firmware, clock, features, resource requests and I/O threads policy whole and, of the
/// devices, the watchdog. Their advice can then be followed together.
pub fn parts_apart(presets: &[&Object]) -> bool {
    let mut seen: Vec<String> = Vec::new();
    for preset in presets {
        let Some(domain) = path::get(&preset.value, &["spec", "domain"]).and_then(Value::as_object)
        else {
            continue;
        };
        let mut parts: Vec<String> = Vec::new();
        for (key, value) in domain {
            if value.is_null() || !MERGED_PARTS.contains(&key.as_str()) {
                continue;
            }
            match key.as_str() {
                // KubeVirt copies a preset's requests only into a VMI that has none: the
                // first preset with requests gives all of them.
                "resources" => {
                    if path::get(value, &["requests"])
                        .and_then(Value::as_object)
                        .is_some_and(|requests| !requests.is_empty())
                    {
                        parts.push("resources.requests".into());
                    }
                }
                "devices" => {
                    if path::get(value, &["watchdog"]).is_some_and(|w| !w.is_null()) {
                        parts.push("devices.watchdog".into());
                    }
                }
                other => parts.push(other.to_string()),
            }
        }
        if parts.iter().any(|p| seen.contains(p)) {
            return false;
        }
        seen.extend(parts);
    }
    true
}

fn convert(preset: &Object) -> Converted {
    let who = preset.object_ref();
    let mut unmapped = Vec::new();
    let mut note = |field: String, reason: &str| {
        unmapped.push(Unmapped {
            preset: who.clone(),
            field,
            reason: reason.to_string(),
        });
    };
    let empty = Map::new();
    let domain = path::get(&preset.value, &["spec", "domain"])
        .and_then(Value::as_object)
        .unwrap_or(&empty);

    if let Err(e) = selector::parse(path::get(&preset.value, &["spec", "selector"])) {
        note(
            "spec.selector".into(),
            &format!("the selector is invalid ({e}); KubeVirt refuses every VMI of the namespace"),
        );
    }

    let mut it_cpu = Map::new();
    let mut it_memory = Map::new();
    let mut it_spec = Map::new();
    let mut owns: Vec<&'static [&'static str]> = Vec::new();
    let mut carries: Vec<&'static [&'static str]> = Vec::new();
    let mut pref = Map::new();
    let mut insert_pref = |group: &str, key: &str, v: Value| {
        let entry = pref
            .entry(group.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(m) = entry.as_object_mut() {
            m.insert(key.to_string(), v);
        }
    };

    for (key, value) in domain {
        if !MERGED_PARTS.contains(&key.as_str()) && !value.is_null() {
            note(
                format!("spec.domain.{key}"),
                "KubeVirt does not apply this part of a preset either (it merges only cpu, \
                 resources.requests, firmware, clock, features, devices.watchdog and \
                 ioThreadsPolicy); nothing to migrate",
            );
        }
    }

    // cpu
    if let Some(cpu) = domain.field("cpu").and_then(Value::as_object) {
        let axis = |k: &str| cpu.field(k).and_then(Value::as_u64).filter(|n| *n > 0);
        let (sockets, cores, threads) = (axis("sockets"), axis("cores"), axis("threads"));
        // An instancetype's guest vCPUs are a 32-bit count. (The axes are 32-bit too, as the
        // type check before has made sure; the product is checked all the same.)
        let laid_out = sockets.is_some() || cores.is_some() || threads.is_some();
        let product = [sockets, cores, threads]
            .into_iter()
            .try_fold(1u128, |product, n| {
                product.checked_mul(u128::from(n.unwrap_or(1)))
            });
        let guest = product
            .and_then(|p| u32::try_from(p).ok())
            .filter(|_| laid_out)
            .map(u64::from);
        if laid_out && guest.is_none() {
            note(
                "spec.domain.cpu".into(),
                &format!(
                    "the topology sockets={},cores={},threads={} gives {} vCPUs, more than an \
                     instancetype's spec.cpu.guest holds ({}); nothing to migrate",
                    sockets.unwrap_or(1),
                    cores.unwrap_or(1),
                    threads.unwrap_or(1),
                    product.map_or_else(|| "more than 2^128".to_string(), |p| p.to_string()),
                    u32::MAX
                ),
            );
        }
        if let Some(guest) = guest {
            it_cpu.insert("guest".into(), json!(guest));
            owns.extend([
                &["cpu", "sockets"][..],
                &["cpu", "cores"][..],
                &["cpu", "threads"][..],
            ]);
            let set: Vec<(&str, u64)> =
                [("sockets", sockets), ("cores", cores), ("threads", threads)]
                    .into_iter()
                    .filter_map(|(n, v)| v.filter(|v| *v > 1).map(|v| (n, v)))
                    .collect();
            match set.as_slice() {
                [] => {}
                // Sockets is how KubeVirt lays out an instancetype's vCPUs when no preference
                // says: a preference saying so would only repeat it.
                [("sockets", _)] => {}
                [(axis, _)] => insert_pref("cpu", "preferredCPUTopology", json!(axis)),
                _ => match spread_for(
                    sockets.unwrap_or(1),
                    cores.unwrap_or(1),
                    threads.unwrap_or(1),
                ) {
                    Some((across, ratio)) => {
                        insert_pref("cpu", "preferredCPUTopology", json!("spread"));
                        insert_pref(
                            "cpu",
                            "spreadOptions",
                            json!({"across": across, "ratio": ratio}),
                        );
                    }
                    None => note(
                        "spec.domain.cpu".into(),
                        &format!(
                            "the topology {} has no exact equivalent: the instancetype gets \
                             {guest} guest vCPUs, and a preference spreads them over sockets \
                             and cores, or puts exactly 2 threads on each core; set \
                             preferredCPUTopology by hand",
                            set.iter()
                                .map(|(n, v)| format!("{n}={v}"))
                                .collect::<Vec<_>>()
                                .join(",")
                        ),
                    ),
                },
            }
        }
        for (from, to) in CPU_TO_INSTANCETYPE {
            // `realtime` and `numa` are pointers in Go: an empty one is set (`realtime: {}`
            // turns real time on); the others are values, set when not their zero.
            let set = |v: &&Value| match from {
                "realtime" | "numa" => !v.is_null(),
                _ => !path::is_zero(Some(v)),
            };
            if let Some(v) = cpu.field(from).filter(set) {
                it_cpu.insert(to.into(), v.clone());
                owns.push(match from {
                    "model" => &["cpu", "model"],
                    "dedicatedCpuPlacement" => &["cpu", "dedicatedCpuPlacement"],
                    "numa" => &["cpu", "numa"],
                    "isolateEmulatorThread" => &["cpu", "isolateEmulatorThread"],
                    _ => &["cpu", "realtime"],
                });
            }
        }
        if let Some(v) = cpu.field("maxSockets").filter(|v| !path::is_zero(Some(v))) {
            it_cpu.insert("maxSockets".into(), v.clone());
        }
        if let Some(v) = cpu.field("features").filter(|v| !path::is_zero(Some(v))) {
            insert_pref("cpu", "preferredCPUFeatures", v.clone());
            carries.push(&["cpu", "features"]);
        }
        for key in cpu.keys() {
            let known = matches!(
                key.as_str(),
                "sockets" | "cores" | "threads" | "maxSockets" | "features"
            ) || CPU_TO_INSTANCETYPE.iter().any(|(f, _)| f == key);
            if !known {
                note(
                    format!("spec.domain.cpu.{key}"),
                    "not a field of a VMI cpu; KubeVirt ignores it",
                );
            }
        }
    }

    // resources.requests
    let mut requests_cpu = false;
    if let Some(requests) = path::get(&Value::Object(domain.clone()), &["resources", "requests"])
        .and_then(Value::as_object)
        .cloned()
    {
        for (key, value) in &requests {
            match key.as_str() {
                "memory" => {
                    let canonical =
                        Quantity::from_json(value).map_or_else(|| value.clone(), |q| q.to_json());
                    it_memory.insert("guest".into(), canonical);
                    owns.extend([
                        &["resources", "requests", "memory"][..],
                        &["memory", "guest"][..],
                    ]);
                }
                // Whether it can stay in the template depends on the instancetype (below).
                "cpu" => requests_cpu = true,
                _ => note(
                    format!("spec.domain.resources.requests.{key}"),
                    "an instancetype sets guest vCPUs and memory, not pod resource requests; \
                     keep it in the VM template",
                ),
            }
        }
    }
    if let Some(resources) = domain.field("resources").and_then(Value::as_object) {
        for key in resources.keys().filter(|k| *k != "requests") {
            note(
                format!("spec.domain.resources.{key}"),
                "KubeVirt does not apply this part of a preset (only resources.requests)",
            );
        }
    }

    // ioThreadsPolicy
    if let Some(v) = domain.field("ioThreadsPolicy").filter(|v| !v.is_null()) {
        it_spec.insert("ioThreadsPolicy".into(), v.clone());
        owns.push(&["ioThreadsPolicy"]);
    }

    // firmware
    if let Some(firmware) = domain.field("firmware").and_then(Value::as_object) {
        for (key, value) in firmware {
            match key.as_str() {
                "bootloader" => {
                    carries.push(&["firmware", "bootloader"]);
                    if let Some(bios) = value.field("bios").filter(|v| !v.is_null()) {
                        insert_pref("firmware", "preferredUseBios", json!(true));
                        if let Some(serial) = bios.field("useSerial").filter(|v| !v.is_null()) {
                            insert_pref("firmware", "preferredUseBiosSerial", serial.clone());
                        }
                    }
                    if let Some(efi) = value.field("efi").filter(|v| !v.is_null()) {
                        insert_pref("firmware", "preferredEfi", efi.clone());
                    }
                }
                "uuid" | "serial" => note(
                    format!("spec.domain.firmware.{key}"),
                    "identifies one machine; a preference is shared, so keep it in the VM \
                     template",
                ),
                _ => note(
                    format!("spec.domain.firmware.{key}"),
                    "no preference or instancetype field; keep it in the VM template",
                ),
            }
        }
    }

    // clock
    if let Some(clock) = domain.field("clock").and_then(Value::as_object) {
        let mut offset = Map::new();
        for (key, value) in clock {
            match key.as_str() {
                "utc" | "timezone" => {
                    offset.insert(key.clone(), value.clone());
                    carries.push(if key == "utc" {
                        &["clock", "utc"]
                    } else {
                        &["clock", "timezone"]
                    });
                }
                "timer" => {
                    insert_pref("clock", "preferredTimer", value.clone());
                    carries.push(&["clock", "timer"]);
                }
                _ => note(
                    format!("spec.domain.clock.{key}"),
                    "not a field of a VMI clock; KubeVirt ignores it",
                ),
            }
        }
        if !offset.is_empty() {
            insert_pref("clock", "preferredClockOffset", Value::Object(offset));
        }
    }

    // features
    if let Some(features) = domain.field("features").and_then(Value::as_object) {
        for (key, value) in features {
            match FEATURES_TO_PREFERENCE.iter().find(|(f, _)| f == key) {
                Some((from, to)) => {
                    insert_pref("features", to, value.clone());
                    carries.extend(
                        FEATURE_PATHS
                            .iter()
                            .find(|at| at[1] == *from)
                            .map(|at| &at[..]),
                    );
                }
                None => note(
                    format!("spec.domain.features.{key}"),
                    "no preference field; keep it in the VM template",
                ),
            }
        }
    }

    // devices
    if let Some(devices) = domain.field("devices").and_then(Value::as_object) {
        for key in devices.keys() {
            let reason = if key == "watchdog" {
                "preferences have no watchdog; keep it in the VM template"
            } else {
                "KubeVirt does not apply this part of a preset (only devices.watchdog)"
            };
            note(format!("spec.domain.devices.{key}"), reason);
        }
    }

    // The instancetype needs both guest vCPUs and memory.
    let has_cpu = it_cpu.contains_key("guest");
    let has_memory = it_memory.contains_key("guest");
    let instancetype = if has_cpu && has_memory {
        if requests_cpu {
            note(
                "spec.domain.resources.requests.cpu".into(),
                "KubeVirt refuses a VM that requests CPU beside an instancetype (a conflict: \
                 the instancetype's guest vCPUs decide), so the VMs that take the instancetype \
                 cannot keep it; not carried over",
            );
        }
        // KubeVirt refuses a VM that sets these beside any instancetype.
        owns.extend([
            &["resources", "requests", "cpu"][..],
            &["resources", "limits", "cpu"][..],
            &["resources", "limits", "memory"][..],
        ]);
        let mut spec = Map::new();
        spec.insert("cpu".into(), Value::Object(it_cpu));
        spec.insert("memory".into(), Value::Object(it_memory));
        spec.extend(it_spec);
        Some(spec)
    } else {
        let mut fields: Vec<String> = Vec::new();
        if has_cpu {
            fields.push("spec.domain.cpu (sockets/cores/threads)".into());
        }
        fields.extend(it_cpu.keys().filter(|k| *k != "guest").map(|k| {
            // The preset's own spelling (`dedicatedCpuPlacement`), not the instancetype's.
            let preset_name = CPU_TO_INSTANCETYPE
                .iter()
                .find(|(_, to)| to == k)
                .map_or(k.as_str(), |(from, _)| from);
            format!("spec.domain.cpu.{preset_name}")
        }));
        if has_memory {
            fields.push("spec.domain.resources.requests.memory".into());
        }
        fields.extend(it_spec.keys().map(|k| format!("spec.domain.{k}")));
        if requests_cpu {
            note(
                "spec.domain.resources.requests.cpu".into(),
                "an instancetype sets guest vCPUs and memory, not pod resource requests; keep it \
                 in the VM template",
            );
        }
        for field in fields {
            note(
                field,
                "belongs in an instancetype, but an instancetype needs both the vCPU count and \
                 the memory and the preset does not fix both; keep it in the VM template",
            );
        }
        owns.clear();
        None
    };
    let preference = (!pref.is_empty()).then_some(pref);
    let preference_cpu = |key: &str| {
        preference
            .as_ref()
            .and_then(|p| p.field("cpu"))
            .and_then(|cpu| cpu.get(key))
    };
    let cpu_features = preference_cpu("preferredCPUFeatures").is_some();
    // Sockets is how KubeVirt lays out an instancetype's vCPUs when no preference says.
    let cpu_topology = preference_cpu("preferredCPUTopology")
        .is_some_and(|t| !matches!(t.as_str(), Some("sockets" | "preferSockets")));
    Converted {
        instancetype,
        preference,
        instancetype_owns: owns,
        preference_carries: carries,
        cpu_features,
        cpu_topology,
        unmapped,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;

    fn obj(v: Value) -> Object {
        Object::new(v, Origin::default())
    }

    #[test]
    fn preset_becomes_instancetype_and_preference() {
        let preset = obj(json!({
            "apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachineInstancePreset",
            "metadata": {"name": "win", "namespace": "ns"},
            "spec": {
                "selector": {"matchLabels": {"os": "win"}},
                "domain": {
                    "cpu": {"cores": 4, "model": "host-passthrough"},
                    "resources": {"requests": {"memory": "4096Mi", "cpu": "2"}},
                    "features": {"apic": {}, "smm": {"enabled": true}},
                    "firmware": {"serial": "s1", "bootloader": {"efi": {"secureBoot": true}}},
                    "clock": {"utc": {}, "timer": {"rtc": {}}},
                    "devices": {"watchdog": {"name": "w"}},
                    "machine": {"type": "q35"}
                }
            }
        }));
        let vm = obj(json!({
            "apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachine",
            "metadata": {"name": "vm", "namespace": "ns"},
            "spec": {"template": {
                "metadata": {"labels": {"os": "win"}},
                "spec": {"domain": {"cpu": {"cores": 2}, "devices": {}}}
            }}
        }));
        let r = migrate_presets(&[preset, vm], &|_| None);
        assert_eq!(r.objects.len(), 2);
        assert_eq!(
            r.objects[0]["spec"],
            json!({"cpu": {"guest": 4, "model": "host-passthrough"}, "memory": {"guest": "4Gi"}})
        );
        assert_eq!(
            r.objects[1]["spec"],
            json!({
                "cpu": {"preferredCPUTopology": "cores"},
                "features": {"preferredApic": {}, "preferredSmm": {"enabled": true}},
                "firmware": {"preferredEfi": {"secureBoot": true}},
                "clock": {"preferredClockOffset": {"utc": {}}, "preferredTimer": {"rtc": {}}}
            })
        );
        let fields: Vec<&str> = r.unmapped.iter().map(|u| u.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.domain.machine",
                "spec.domain.firmware.serial",
                "spec.domain.devices.watchdog",
                "spec.domain.resources.requests.cpu"
            ]
        );
        // Beside an instancetype, a VM cannot keep a CPU request.
        assert!(
            !r.unmapped[3].reason.ends_with(KEEP_IN_TEMPLATE),
            "{}",
            r.unmapped[3].reason
        );
        assert_eq!(r.matchers.len(), 1);
        assert_eq!(
            r.matchers[0].remove_fields,
            ["spec.template.spec.domain.cpu.cores"]
        );
    }

    /// A VM with an instancetype and a preference of its own keeps them; what the preset gives
    /// its VMI today (beside what the VM's own instancetype and preference set, which the VM
    /// controller applies before the presets) through the fields that would have moved to the
    /// preset's instancetype and preference is named as lost with the preset.
    #[test]
    fn a_vm_with_its_own_matchers_keeps_them() {
        let preset = obj(json!({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstancePreset",
            "metadata": {"name": "small"},
            "spec": {"selector": {}, "domain": {
                "cpu": {"cores": 2},
                "resources": {"requests": {"memory": "1Gi"}},
                "features": {"smm": {}, "apic": {}}
            }}
        }));
        let vm = |matchers: Value| {
            let mut spec = json!({"template": {"spec": {"domain": {"devices": {}}}}});
            spec.as_object_mut()
                .unwrap()
                .extend(matchers.as_object().unwrap().clone());
            obj(json!({
                "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                "metadata": {"name": "vm"}, "spec": spec
            }))
        };
        let own = vm(json!({"instancetype": {"name": "it"}, "preference": {"name": "pref"}}));
        // As the controller has it: the instancetype's CPU and memory (so the preset's CPU is
        // skipped today), no features (so the preset's apply).
        let mut controller = own.value.clone();
        controller["spec"]["template"]["spec"]["domain"] = json!({
            "devices": {}, "cpu": {"sockets": 1, "cores": 1, "threads": 1},
            "memory": {"guest": "4Gi"}
        });
        let r = migrate_presets(&[preset.clone(), own], &|_| Some(controller.clone()));
        let m = &r.matchers[0];
        assert_eq!((&m.instancetype, &m.preference), (&None, &None));
        assert_eq!(
            m.own_matchers,
            [
                ("spec.instancetype", "`it`".to_string()),
                ("spec.preference", "`pref`".to_string())
            ]
        );
        assert!(m.remove_fields.is_empty());
        assert_eq!(
            m.lost,
            [
                "spec.template.spec.domain.features.apic",
                "spec.template.spec.domain.features.smm",
                "spec.template.spec.domain.resources.requests.memory"
            ]
        );
        // Only a preference of its own: the instancetype is suggested, and only what the
        // preference would have carried is lost.
        let own = vm(json!({"preference": {"name": "pref"}}));
        let r = migrate_presets(&[preset, own], &|_| Some(controller.clone()));
        let m = &r.matchers[0];
        assert!(m.instancetype.is_some() && m.preference.is_none());
        assert_eq!(m.own_matchers, [("spec.preference", "`pref`".to_string())]);
        assert_eq!(
            m.lost,
            [
                "spec.template.spec.domain.features.apic",
                "spec.template.spec.domain.features.smm"
            ]
        );
    }

    /// KubeVirt refuses a VM that sets a CPU request or a CPU or memory limit beside an
    /// instancetype: each is a field to remove with the instancetype matcher.
    #[test]
    fn the_resources_an_instancetype_refuses_are_removed() {
        let preset = obj(json!({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstancePreset",
            "metadata": {"name": "small"},
            "spec": {"selector": {}, "domain": {
                "cpu": {"cores": 2}, "resources": {"requests": {"memory": "1Gi"}}
            }}
        }));
        let vm = obj(json!({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"name": "vm"},
            "spec": {"template": {"spec": {"domain": {"resources": {
                "requests": {"cpu": "1"}, "limits": {"cpu": "1", "memory": "2Gi"}
            }}}}}
        }));
        let r = migrate_presets(&[preset, vm], &|_| None);
        assert_eq!(
            r.matchers[0].remove_fields,
            [
                "spec.template.spec.domain.resources.requests.cpu",
                "spec.template.spec.domain.resources.limits.cpu",
                "spec.template.spec.domain.resources.limits.memory"
            ]
        );
    }

    /// A preset of namespace `app` that sets `cpu` and 2Gi of memory for the VMIs labelled
    /// `size: m`.
    fn sized_preset(cpu: Value) -> Object {
        obj(json!({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstancePreset",
            "metadata": {"name": "size", "namespace": "app"},
            "spec": {"selector": {"matchLabels": {"size": "m"}},
                     "domain": {"cpu": cpu, "resources": {"requests": {"memory": "2Gi"}}}}
        }))
    }

    /// One axis above 1 becomes the preference's layout, except sockets, KubeVirt's own
    /// layout when no preference says: a preset with nothing else gets no preference.
    #[test]
    fn a_sockets_layout_needs_no_preference() {
        let preset = sized_preset;
        let kinds = |r: &MigrateResult| -> Vec<String> {
            r.objects
                .iter()
                .map(|o| o["kind"].as_str().unwrap_or_default().to_string())
                .collect()
        };
        let r = migrate_presets(&[preset(json!({"sockets": 2}))], &|_| None);
        assert_eq!(kinds(&r), ["VirtualMachineInstancetype"]);
        assert_eq!(r.objects[0]["spec"]["cpu"]["guest"], 2);
        let r = migrate_presets(&[preset(json!({"cores": 2}))], &|_| None);
        assert_eq!(
            kinds(&r),
            ["VirtualMachineInstancetype", "VirtualMachinePreference"]
        );
        assert_eq!(r.objects[1]["spec"]["cpu"]["preferredCPUTopology"], "cores");
    }

    /// A layout over several axes becomes a spread preference that gives back exactly that
    /// layout, where one does; the others are told.
    #[test]
    fn a_layout_over_several_axes_becomes_a_spread() {
        for (cpu, guest, spread) in [
            (
                json!({"sockets": 2, "cores": 3}),
                6,
                Some(("SocketsCores", 3)),
            ),
            (
                json!({"cores": 4, "threads": 2}),
                8,
                Some(("CoresThreads", 2)),
            ),
            (
                json!({"sockets": 2, "cores": 3, "threads": 2}),
                12,
                Some(("SocketsCoresThreads", 3)),
            ),
            (
                json!({"sockets": 3, "threads": 2}),
                6,
                Some(("SocketsCoresThreads", 1)),
            ),
            (json!({"sockets": 2, "cores": 2, "threads": 4}), 16, None),
            // The preference webhook refuses `CoresThreads` with a ratio other than 2.
            (json!({"cores": 2, "threads": 3}), 6, None),
            (json!({"cores": 2, "threads": 4}), 8, None),
        ] {
            let r = migrate_presets(&[sized_preset(cpu.clone())], &|_| None);
            assert_eq!(r.objects[0]["spec"]["cpu"]["guest"], guest, "{cpu}");
            match spread {
                Some((across, ratio)) => {
                    let pref = &r.objects[1]["spec"]["cpu"];
                    assert_eq!(pref["preferredCPUTopology"], "spread", "{cpu}");
                    assert_eq!(
                        pref["spreadOptions"],
                        json!({"across": across, "ratio": ratio}),
                        "{cpu}"
                    );
                    assert!(!r.unmapped.iter().any(|u| u.field == "spec.domain.cpu"));
                }
                None => {
                    assert!(
                        r.unmapped.iter().any(|u| u.field == "spec.domain.cpu"
                            && u.reason.contains("no exact equivalent")),
                        "{cpu}: {:?}",
                        r.unmapped
                    );
                }
            }
        }
    }

    /// A topology whose product is more than an instancetype's 32-bit guest count (or more than
    /// 64 bits) gives no instancetype and says why; the largest count that fits is kept.
    #[test]
    fn a_topology_beyond_the_guest_count_is_not_migrated() {
        let preset = sized_preset;
        let max = u64::from(u32::MAX);
        for cpu in [
            json!({"sockets": 2_147_483_648u64, "cores": 2_147_483_648u64, "threads": 2_147_483_648u64}),
            json!({"sockets": max, "cores": max, "threads": max}),
            json!({"sockets": 65_536, "cores": 65_536}),
        ] {
            let r = migrate_presets(&[preset(cpu.clone())], &|_| None);
            assert!(r.objects.is_empty(), "{cpu}: {:?}", r.objects);
            let told = r
                .unmapped
                .iter()
                .find(|u| u.field == "spec.domain.cpu")
                .unwrap_or_else(|| panic!("{cpu}: {:?}", r.unmapped));
            assert!(
                told.reason
                    .contains("more than an instancetype's spec.cpu.guest holds")
            );
        }
        let r = migrate_presets(&[preset(json!({"sockets": max}))], &|_| None);
        assert_eq!(r.objects[0]["spec"]["cpu"]["guest"], max);
    }

    #[test]
    fn a_vm_that_overrides_its_preset_is_told() {
        let preset = obj(json!({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstancePreset",
            "metadata": {"name": "big", "namespace": "app"},
            "spec": {"selector": {"matchLabels": {"size": "big"}},
                     "domain": {"cpu": {"cores": 4}, "resources": {"requests": {"memory": "8Gi"}}}}
        }));
        let vm = |cores: i64, memory: &str| {
            obj(json!({
                "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                "metadata": {"name": "vm", "namespace": "app"},
                "spec": {"template": {"metadata": {"labels": {"size": "big"}},
                         "spec": {"domain": {"cpu": {"cores": cores},
                                  "resources": {"requests": {"memory": memory}}}}}}
            }))
        };
        let r = migrate_presets(&[preset.clone(), vm(2, "2Gi")], &|_| None);
        let fields: Vec<&str> = r.matchers[0]
            .overridden
            .iter()
            .map(|(f, ..)| f.as_str())
            .collect();
        assert_eq!(
            fields,
            [
                "spec.template.spec.domain.cpu",
                "spec.template.spec.domain.resources.requests.memory"
            ]
        );
        // The CPU layout is told whole: [sockets, cores, threads], each unset axis 1.
        let (_, mine, theirs) = &r.matchers[0].overridden[0];
        assert_eq!((mine, theirs), (&json!([1, 2, 1]), &json!([1, 4, 1])));
        // The same values (a quantity written another way included) are no override.
        let r = migrate_presets(&[preset.clone(), vm(4, "8192Mi")], &|_| None);
        assert!(r.matchers[0].overridden.is_empty(), "{:?}", r.matchers[0]);
        assert_eq!(r.matchers[0].remove_fields.len(), 2);
        // Nor is a VM's own CPU request: no instancetype carries the preset's, which never
        // reached it (the advice removes the VM's, as KubeVirt refuses it beside one).
        let mut preset = preset;
        preset.value["spec"]["domain"]["resources"]["requests"]["cpu"] = json!("2");
        let mut own = vm(4, "8Gi");
        own.value["spec"]["template"]["spec"]["domain"]["resources"]["requests"]["cpu"] =
            json!("1");
        let r = migrate_presets(&[preset, own], &|_| None);
        assert!(r.matchers[0].overridden.is_empty(), "{:?}", r.matchers[0]);
        assert!(r.matchers[0].not_applied.is_empty(), "{:?}", r.matchers[0]);
        assert!(
            r.matchers[0]
                .remove_fields
                .iter()
                .any(|f| f.ends_with("requests.cpu"))
        );
    }

    #[test]
    fn a_preset_part_that_never_reaches_a_vm_is_told() {
        let preset = obj(json!({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstancePreset",
            "metadata": {"name": "efi", "namespace": "app"},
            "spec": {"selector": {"matchLabels": {"os": "win"}},
                     "domain": {"firmware": {"bootloader": {"efi": {"secureBoot": true}}},
                                "cpu": {"cores": 4},
                                "resources": {"requests": {"memory": "8Gi"}}}}
        }));
        let target = |kind: &str, cores: i64| {
            let domain = json!({"cpu": {"cores": cores}, "devices": {}});
            let mut o = json!({
                "apiVersion": "kubevirt.io/v1", "kind": kind,
                "metadata": {"name": "w", "namespace": "app", "labels": {"os": "win"}},
                "spec": {"domain": domain.clone()}
            });
            if kind == "VirtualMachine" {
                o["spec"] = json!({"template": {"metadata": {"labels": {"os": "win"}},
                                   "spec": {"domain": domain}}});
            }
            obj(o)
        };
        let fields = |r: &MigrateResult| -> Vec<String> {
            r.matchers[0]
                .not_applied
                .iter()
                .map(|(_, s, _)| s.field.clone())
                .collect()
        };
        // A VM's VMI always has a firmware UUID: the preset's firmware never applies. Its cpu
        // differs too, but that is told as an override of a field the instancetype owns.
        let r = migrate_presets(&[preset.clone(), target("VirtualMachine", 2)], &|_| None);
        assert_eq!(fields(&r), ["spec.firmware"]);
        assert_eq!(r.matchers[0].overridden.len(), 1, "{:?}", r.matchers[0]);
        // A VMI without firmware takes it.
        let r = migrate_presets(&[preset, target("VirtualMachineInstance", 4)], &|_| None);
        assert!(fields(&r).is_empty(), "{:?}", r.matchers[0]);
    }

    /// A preference fills a VMI as KubeVirt applies one: where the VMI leaves a part unset,
    /// ACPI always (a change only where one turns it off), Hyper-V enlightenments and CPU features one by one, the clock offset only
    /// when the VMI has none.
    #[test]
    fn a_preference_fills_what_kubevirt_lets_it() {
        let preset = json!({
            "features": {"acpi": {}, "apic": {}, "hyperv": {"relaxed": {}, "vapic": {}}},
            "cpu": {"features": [{"name": "vmx"}, {"name": "pdpe1gb"}]},
            "clock": {"utc": {}, "timer": {"hpet": {"present": false}}},
        });
        let fills = |base: Value, at: &[&str]| preference_fills(Some(&base), Some(&preset), at);
        let all_set = json!({
            "features": {"acpi": {"enabled": false}, "apic": {}, "hyperv": {"relaxed": {}, "vapic": {}}},
            "cpu": {"features": [{"name": "pdpe1gb"}, {"name": "vmx", "policy": "disable"}]},
            "clock": {"timezone": "UTC", "timer": {}},
        });
        assert!(fills(all_set.clone(), &["features", "acpi"]));
        assert!(!fills(
            json!({"features": {"acpi": {"enabled": true}}}),
            &["features", "acpi"]
        ));
        for at in [
            &["features", "apic"][..],
            &["features", "hyperv"],
            &["cpu", "features"],
            &["clock", "utc"],
            &["clock", "timer"],
        ] {
            assert!(!fills(all_set.clone(), at), "{at:?}");
            assert!(fills(json!({}), at), "{at:?}");
        }
        let partly = json!({
            "features": {"hyperv": {"relaxed": {}}},
            "cpu": {"features": [{"name": "vmx"}]},
        });
        assert!(fills(partly.clone(), &["features", "hyperv"]));
        assert!(fills(partly, &["cpu", "features"]));
    }

    /// A part KubeVirt skips meets what an object carries when one lies under the other; a
    /// clock's `utc` and `timezone` are the offset KubeVirt skips as one.
    #[test]
    fn a_skipped_part_meets_what_lies_under_it_or_above_it() {
        assert!(overlaps("cpu", &["cpu", "sockets"]));
        assert!(overlaps(
            "resources.requests.memory",
            &["resources", "requests", "memory"]
        ));
        assert!(overlaps("clock.clockoffset", &["clock", "utc"]));
        assert!(overlaps("clock.clockoffset", &["clock", "timezone"]));
        assert!(!overlaps("clock.timer", &["clock", "utc"]));
        assert!(!overlaps(
            "resources.requests.cpu",
            &["resources", "requests", "memory"]
        ));
        assert!(!overlaps("features", &["firmware", "bootloader"]));
    }

    /// The label index finds exactly the presets a pass over every preset of the namespace
    /// finds, in the same order, whatever the selectors require.
    #[test]
    fn the_selector_index_finds_what_trying_every_preset_finds() {
        let selectors = [
            json!({"matchLabels": {"app": "web"}}),
            json!({}),
            json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db", "web"]}]}),
            json!({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["db"]}]}),
            json!({"matchExpressions": [{"key": "tier", "operator": "Exists"}], "matchLabels": {"app": "db"}}),
            json!({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}),
            json!({"matchLabels": {"app": ["not", "a", "string"]}}),
            json!({"matchLabels": {"app": "web", "tier": "front"}}),
        ];
        let presets: Vec<Object> = ["a", "b"]
            .iter()
            .flat_map(|ns| {
                selectors.iter().enumerate().map(move |(i, selector)| {
                    obj(json!({
                        "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstancePreset",
                        "metadata": {"name": format!("p{i}"), "namespace": ns},
                        "spec": {"selector": selector, "domain": {"cpu": {"cores": 1}}}
                    }))
                })
            })
            .collect();
        let written: Vec<Written> = presets
            .iter()
            .map(|preset| Written {
                preset,
                instancetype: None,
                preference: None,
                owns: Vec::new(),
                preference_carries: Vec::new(),
                cpu_features: false,
                cpu_topology: false,
            })
            .collect();
        let parsed: Vec<Option<Selector>> = written
            .iter()
            .map(|w| selector::parse(path::get(&w.preset.value, &["spec", "selector"])).ok())
            .collect();
        let index = SelectorIndex::new(&written, &parsed);
        let label_sets: [&[(&str, &str)]; 6] = [
            &[],
            &[("app", "web")],
            &[("app", "db")],
            &[("app", "db"), ("tier", "back")],
            &[("app", "web"), ("tier", "front")],
            &[("other", "x")],
        ];
        for ns in ["a", "b", "c"] {
            for labels in label_sets {
                let labels: Vec<(String, String)> = labels
                    .iter()
                    .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                    .collect();
                let every: Vec<usize> = (0..written.len())
                    .filter(|&i| {
                        written[i].preset.effective_namespace() == ns
                            && parsed[i].as_ref().is_some_and(|s| s.matches(&labels))
                    })
                    .collect();
                assert_eq!(index.selecting(ns, &labels), every, "{ns} {labels:?}");
            }
        }
        // Not vacuous: the web VM of `a` is selected by p0, p1, p2, p3 and p5.
        let web = [("app".to_string(), "web".to_string())];
        assert_eq!(index.selecting("a", &web), [0, 1, 2, 3, 5]);
    }

    /// When many presets select the same VMs, each VM's suggestions share one list of them, and
    /// each suggestion still names the others in order, a namesake excluded.
    #[test]
    fn presets_selecting_the_same_vms_are_listed_once_per_vm() {
        let preset = |name: &str| {
            obj(json!({
                "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstancePreset",
                "metadata": {"name": name, "namespace": "app"},
                "spec": {"selector": {}, "domain": {"cpu": {"cores": 2}}}
            }))
        };
        let vm = |name: &str| {
            obj(json!({
                "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                "metadata": {"name": name, "namespace": "app"},
                "spec": {"template": {"spec": {"domain": {"devices": {}}}}}
            }))
        };
        // 25 presets, and a second `p03` (a duplicate definition), in no particular order.
        let mut objects: Vec<Object> = (0..25).rev().map(|i| preset(&format!("p{i:02}"))).collect();
        objects.push(preset("p03"));
        objects.extend([vm("v0"), vm("v1")]);
        let r = migrate_presets(&objects, &|_| None);
        assert_eq!(r.matchers.len(), 2 * 26);
        for (vm, suggestions) in ["v0", "v1"].iter().zip(r.matchers.chunks(26)) {
            assert!(suggestions.iter().all(|m| m.target.name == *vm));
            assert!(
                suggestions
                    .iter()
                    .all(|m| Arc::ptr_eq(&m.selected_by, &suggestions[0].selected_by))
            );
            let first = &suggestions[0];
            assert_eq!(first.preset, "p00");
            let others: Vec<&str> = first.also_selected_by().collect();
            assert_eq!(others.len(), 25);
            assert_eq!(
                others[..5],
                ["p01", "p02", "p03", "p03", "p04"],
                "{others:?}"
            );
            assert_eq!(others.last(), Some(&"p24"));
            let p03: Vec<&MatcherSuggestion> =
                suggestions.iter().filter(|m| m.preset == "p03").collect();
            assert_eq!(p03.len(), 2);
            for m in p03 {
                let others: Vec<&str> = m.also_selected_by().collect();
                assert_eq!(others.len(), 24);
                assert_eq!(others[..3], ["p00", "p01", "p02"]);
                assert!(!others.contains(&"p03"));
            }
        }
    }

    #[test]
    fn cpu_without_memory_stays_on_the_vm() {
        let preset = obj(json!({
            "apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachineInstancePreset",
            "metadata": {"name": "p"},
            "spec": {"selector": {}, "domain": {"cpu": {"cores": 2, "dedicatedCpuPlacement": true}}}
        }));
        let r = migrate_presets(&[preset], &|_| None);
        // Named as the preset spells it.
        assert!(
            r.unmapped
                .iter()
                .any(|u| u.field == "spec.domain.cpu.dedicatedCpuPlacement"),
            "{:?}",
            r.unmapped
        );
        assert!(
            r.objects
                .iter()
                .all(|o| o["kind"] != "VirtualMachineInstancetype")
        );
        assert!(
            r.unmapped
                .iter()
                .any(|u| u.field == "spec.domain.cpu (sockets/cores/threads)")
        );
    }

    /// Presets give the same part when KubeVirt would merge both into it: a whole CPU, clock,
    /// firmware or features, resource requests (of any resources: KubeVirt copies a preset's
    /// requests only into a VMI that has none), a watchdog. An empty `devices` or `requests`
    /// and parts KubeVirt never merges (`memory`) stay apart.
    #[test]
    fn presets_give_the_same_part_as_kubevirt_merges_them() {
        let preset = |domain: Value| {
            obj(json!({
                "apiVersion": "kubevirt.io/v1",
                "kind": "VirtualMachineInstancePreset",
                "metadata": {"name": "p"},
                "spec": {"selector": {}, "domain": domain}
            }))
        };
        let apart = |a: Value, b: Value| parts_apart(&[&preset(a), &preset(b)]);
        assert!(apart(
            json!({"resources": {"requests": {"cpu": "1"}}, "devices": {}, "memory": {"guest": "1Gi"}}),
            json!({"resources": {"requests": {}}, "devices": {}, "memory": {"guest": "2Gi"}}),
        ));
        assert!(apart(
            json!({"cpu": {"cores": 2}}),
            json!({"clock": {"utc": {}}})
        ));
        for (a, b) in [
            (
                json!({"cpu": {"cores": 2}}),
                json!({"cpu": {"model": "host-passthrough"}}),
            ),
            (
                json!({"resources": {"requests": {"cpu": "1"}}}),
                json!({"resources": {"requests": {"memory": "1Gi"}}}),
            ),
            (
                json!({"devices": {"watchdog": {"name": "w"}}}),
                json!({"devices": {"watchdog": {"name": "x"}}}),
            ),
            (
                json!({"features": {"acpi": {}}}),
                json!({"features": {"smm": {}}}),
            ),
        ] {
            assert!(!apart(a.clone(), b.clone()), "{a} {b}");
        }
    }

    /// An empty `realtime` turns real time on (Go keeps a pointer to it), and an empty `numa`
    /// is set too: both reach the instancetype, which owns them. A `false` or empty model is
    /// no setting at all.
    #[test]
    fn an_empty_realtime_or_numa_is_carried_over() {
        let preset = obj(json!({
            "apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachineInstancePreset",
            "metadata": {"name": "p"},
            "spec": {"selector": {}, "domain": {
                "cpu": {"cores": 2, "dedicatedCpuPlacement": true, "realtime": {}, "numa": {},
                        "isolateEmulatorThread": false, "model": ""},
                "resources": {"requests": {"memory": "1Gi"}},
            }}
        }));
        let r = migrate_presets(&[preset], &|_| None);
        let it = r
            .objects
            .iter()
            .find(|o| o["kind"] == "VirtualMachineInstancetype")
            .unwrap();
        assert_eq!(
            it["spec"]["cpu"],
            json!({"guest": 2, "dedicatedCPUPlacement": true, "numa": {}, "realtime": {}}),
            "{it}"
        );
        assert!(r.unmapped.is_empty(), "{:?}", r.unmapped);
    }
}

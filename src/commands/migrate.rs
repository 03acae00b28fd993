//! `kvrender migrate presets`: VirtualMachineInstancePresets to preferences (and instancetypes).

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;
use std::sync::{Arc, Mutex};

use crate::cli::{MigrateArgs, Stage};
use crate::commands::Outcome;
use crate::commands::inputs::Inputs;
use crate::diagnostic::{self, Diagnostic, codes};
use crate::emit;
use crate::error::Result;
use crate::kubevirt::migrate::{Carrier, KEEP_IN_TEMPLATE, MatcherSuggestion, Unmapped};
use crate::kubevirt::{expand, migrate, presets};
use crate::load;
use crate::model::{Kind, Object, path};
use crate::origin::{ObjectRef, Origin};
use crate::pipeline;
use crate::validate;
use crate::validate::rules::duplicate::{self, identity};
use crate::validate::rules::wrong_type;

/// Run `migrate presets`: the new objects on stdout; on stderr, for every VM or VMI a preset
/// selected, the matchers to add, and every preset field that has no equivalent.
pub fn run_presets(args: &MigrateArgs) -> Result<Outcome> {
    let built_from = args.resolve.built_from()?;
    let sources = load::read_inputs(&args.paths, None, &args.resolve.exclude()?)?;
    let loaded = load::parse_sources(&sources);
    let resolution = Inputs::resolution(&args.resolve)?;
    let rewrite = args.with_vms.then_some(Rewrite::WithVms);
    let migration = migrate_objects(&loaded.objects, loaded.diagnostics, &resolution, rewrite);
    let mut out = migration.out;
    out.stdout = emit::yaml_stream(&migration.objects);
    if !migration.rewritten.is_empty() {
        let vms: Vec<serde_json::Value> = migration.rewritten.into_iter().map(|(_, v)| v).collect();
        out.stdout.push_str(&emit::yaml_stream(&vms));
    }
    // Rather than print nothing without a word.
    if out.stdout.is_empty()
        && out.stderr.is_empty()
        && out.diagnostics.is_empty()
        && !loaded
            .objects
            .iter()
            .any(|o| o.kind() == Kind::VirtualMachineInstancePreset)
    {
        out.stderr = "no VirtualMachineInstancePreset to migrate in the input\n".to_string();
    }
    diagnostic::sort(&mut out.diagnostics);
    load::built_from::map_to_sources(&mut out.diagnostics, &sources, built_from);
    if args.strict {
        out.warnings_as_errors();
    }
    out.exit_from_diagnostics();
    // Under `--strict` the stream is all or nothing: a script applies it only as a whole.
    if args.strict && out.exit != 0 {
        out.stdout.clear();
    }
    Ok(out)
}

/// Who rewrites the VMs with the advice followed, named in the warning about a VM whose
/// presets' advice clashes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rewrite {
    /// `migrate presets --with-vms`: the VM is left out of the output (a warning).
    WithVms,
    /// The KRM function's `migrate: presets`: the VM cannot be migrated (an error).
    Function,
}

/// What the migration of a set of objects gives.
pub(crate) struct Migration {
    /// The findings (unsorted) and the advice for each VM (on `stderr`).
    pub out: Outcome,
    /// The new instancetypes and preferences, in output order.
    pub objects: Vec<serde_json::Value>,
    /// For each of [`Migration::objects`], the preset (of its namespace) it comes from: for a
    /// merged preference, the first of the presets whose preferences it merges.
    pub homes: Vec<String>,
    /// With a [`Rewrite`]: each VirtualMachine the advice changes, as the position of the
    /// object among the inputs and the VM with the advice followed, in the order of the
    /// suggestions.
    pub rewritten: Vec<(usize, serde_json::Value)>,
}

/// The migration of `objects` (parsed with the findings `parsed`), resolving the
/// instancetypes and preferences the VMs name against `resolution`.
pub(crate) fn migrate_objects(
    objects: &[Object],
    parsed: Vec<Diagnostic>,
    resolution: &Inputs,
    rewrite: Option<Rewrite>,
) -> Migration {
    // A preset the API server refuses (a name it does not take, a field of the wrong type)
    // never applies to anything, and what it holds is not migrated.
    let mut refused: Vec<(usize, Diagnostic)> = objects
        .iter()
        .enumerate()
        .filter(|(_, o)| o.kind() == Kind::VirtualMachineInstancePreset)
        .filter_map(|(i, o)| pipeline::preset_diagnostic(o).map(|d| (i, d)))
        .collect();
    // The cluster holds one preset of a namespace and name: the first is migrated, a second
    // definition is not (it would give objects of the same names).
    let presets: Vec<(usize, &Object)> = objects
        .iter()
        .enumerate()
        .filter(|(i, o)| {
            o.kind() == Kind::VirtualMachineInstancePreset && !refused.iter().any(|(r, _)| r == i)
        })
        .collect();
    let seconds = duplicate::check_positions(presets.iter().map(|(_, o)| *o));
    refused.extend(seconds.into_iter().map(|(at, mut d)| {
        // The function would replace both with what the first gives.
        if rewrite == Some(Rewrite::Function) {
            d.message
                .push_str("; remove or rename one of them, then migrate again");
        } else {
            d.severity = diagnostic::Severity::Warning;
            d.message
                .push_str("; the first is migrated, and the advice leaves this one out");
        }
        (presets[at].0, d)
    }));
    refused.sort_by_key(|(i, _)| *i);
    let admitted: Cow<'_, [Object]> = if refused.is_empty() {
        Cow::Borrowed(objects)
    } else {
        let mut left_out = refused.iter().map(|(i, _)| *i).peekable();
        let mut kept = Vec::with_capacity(objects.len() - refused.len());
        for (i, o) in objects.iter().enumerate() {
            if left_out.next_if_eq(&i).is_none() {
                kept.push(o.clone());
            }
        }
        Cow::Owned(kept)
    };
    let mut out = Outcome {
        diagnostics: parsed,
        ..Outcome::default()
    };
    out.diagnostics
        .extend(resolution.diagnostics.iter().cloned());
    // The presets of the files given to resolve against are the cluster's, not the inputs':
    // they are not migrated, and the advice does not weigh them.
    let given_with = if rewrite == Some(Rewrite::Function) {
        "`catalogs`"
    } else {
        "`--catalog`"
    };
    out.diagnostics.extend(
        resolution
            .catalog
            .iter()
            .filter(|o| o.kind() == Kind::VirtualMachineInstancePreset)
            .map(|o| {
                Diagnostic::warning(
                    codes::PRESET,
                    o.origin.clone(),
                    format!(
                        "a preset given with {given_with} is not migrated, and the advice for \
                         the VMs it selects leaves it out; give its file as an input to migrate \
                         it"
                    ),
                )
                .with_object(o.object_ref())
            }),
    );
    // What the presets meet today in a VM they select that names an instancetype or
    // preference: the VM as the controller has it, both applied. One that does not resolve is
    // told so, and its own spec stands for it.
    let index = resolution.index_with(admitted.iter());
    let unresolved = RefCell::new(Vec::new());
    let controller_vm = |o: &Object| {
        if o.kind() != Kind::VirtualMachine || !expand::has_matchers(&o.value) {
            return None;
        }
        match pipeline::controller_vm(o, &index, &resolution.profile) {
            Ok(vm) => Some(vm),
            Err(mut d) => {
                // The function would carry out advice that cannot see what they give the VM.
                if rewrite == Some(Rewrite::Function) {
                    d.severity = diagnostic::Severity::Error;
                    d.message = format!(
                        "{}; the VM cannot be migrated without knowing what its instancetype \
                         and preference set (`catalogs` adds files to resolve them)",
                        d.message
                    );
                } else {
                    d.severity = diagnostic::Severity::Warning;
                    d.message = format!(
                        "{}; the advice for this VirtualMachine leaves out what its \
                         instancetype and preference set (`--catalog` adds files to resolve \
                         them)",
                        d.message
                    );
                }
                unresolved.borrow_mut().push(d);
                None
            }
        }
    };
    let mut result = migrate::migrate_presets(&admitted, &controller_vm);
    out.diagnostics.extend(unresolved.into_inner());
    let preset_named: HashMap<(&str, &str), &Object> = admitted
        .iter()
        .filter(|o| o.kind() == Kind::VirtualMachineInstancePreset)
        .map(|o| ((o.effective_namespace(), o.name()), o))
        .collect();
    // A VM takes one preference: where several presets that select it give one each and
    // cannot clash, their preferences merged into one, written with the others.
    let merges = merge_preferences(&result, &preset_named, objects);
    let merged = &merges.merged;
    // Each with the first of the presets whose preferences it merges.
    let mut merged_objects: Vec<(serde_json::Value, String)> = merged
        .values()
        .map(|m| {
            (
                m.object.clone(),
                m.presets.first().cloned().unwrap_or_default(),
            )
        })
        .collect();
    merged_objects.sort_by(|(a, _), (b, _)| {
        fn key(v: &serde_json::Value) -> (Option<&str>, Option<&str>) {
            (
                path::get(v, &["metadata", "namespace"]).and_then(serde_json::Value::as_str),
                path::get(v, &["metadata", "name"]).and_then(serde_json::Value::as_str),
            )
        }
        key(a).cmp(&key(b))
    });
    merged_objects.dedup_by(|(a, _), (b, _)| a == b);
    // An object migrated from one preset has its name.
    let mut homes: Vec<String> = result
        .objects
        .iter()
        .map(|v| {
            path::get(v, &["metadata", "name"])
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    for (object, home) in merged_objects {
        result.objects.push(object);
        homes.push(home);
    }
    let merged_for = |m: &MatcherSuggestion| merged.get(&Arc::as_ptr(&m.selected_by).cast::<()>());
    let unnamed_for = |m: &MatcherSuggestion| {
        merges
            .unnamed
            .get(&Arc::as_ptr(&m.selected_by).cast::<()>())
    };
    // The cluster after the migration, to check each VM as the advice leaves it: the presets
    // gone, the migrated objects there.
    let migrated: Vec<Object> = result
        .objects
        .iter()
        .map(|v| Object::new(v.clone(), Origin::default()))
        .collect();
    let after: Vec<&Object> = admitted
        .iter()
        .filter(|o| o.kind() != Kind::VirtualMachineInstancePreset)
        .chain(&migrated)
        .collect();
    let index_after = resolution.index_with(after.iter().copied());
    let before_ctx = validate::Context::new(&index, &resolution.profile, admitted.iter());
    let after_ctx =
        validate::Context::new(&index_after, &resolution.profile, after.iter().copied());
    // The VMI each VM starts before (the presets applied) and after (none left): a part
    // KubeVirt skips today is told only where following the advice changes it there.
    let preset_objects: Vec<&Object> = admitted
        .iter()
        .filter(|o| o.kind() == Kind::VirtualMachineInstancePreset && presets::is_admitted(o))
        .collect();
    let presets_before = Mutex::new(presets::PresetIndex::new(&preset_objects));
    let presets_after = Mutex::new(presets::PresetIndex::new(&[]));
    let started_vmi =
        |o: &Object, index: &crate::resolve::Index<'_>, presets, found: &mut Vec<Diagnostic>| {
            crate::commands::vmi::build_one(o, resolution, index, Stage::Full, presets, found)
        };
    out.diagnostics.extend(refused.into_iter().map(|(_, d)| d));
    out.diagnostics
        .extend(clashes_with_inputs(&result.objects, objects));
    // The first input of each identity, to place a finding at its field.
    let mut by_ref = HashMap::with_capacity(objects.len());
    for o in objects {
        by_ref
            .entry((o.api_version(), o.kind_str(), o.namespace(), o.name()))
            .or_insert(o);
    }
    let input = |r: &ObjectRef| {
        by_ref
            .get(&(
                r.api_version.as_str(),
                r.kind.as_str(),
                r.namespace.as_deref(),
                r.name.as_str(),
            ))
            .copied()
    };
    let function = rewrite == Some(Rewrite::Function);
    let adjust = ADJUST[usize::from(function)];
    // The pools and replica sets whose VMIs presets select: what the presets give those VMIs
    // ends with them unless their templates carry it, which the migration does not work out.
    for (owner, presets) in &result.owners {
        let pool = owner.kind != crate::kubevirt::replica_set::KIND;
        let (which, them, give) = match presets.as_slice() {
            [one] => (format!("preset `{one}` selects"), "the preset", "gives"),
            many => (
                format!("presets {} select", quoted_list(many)),
                "the presets",
                "give",
            ),
        };
        let labels = if pool {
            "spec.virtualMachineTemplate.spec.template.metadata.labels"
        } else {
            "spec.template.metadata.labels"
        };
        let fix = if pool {
            format!(
                "Name the instancetype and preference migrated from {them} ({}) in \
                 `spec.virtualMachineTemplate.spec`, or copy what its VMs need into the template",
                quoted_list(presets)
            )
        } else {
            "A VMI names no instancetype or preference: copy what they need into \
             `spec.template.spec.domain`"
                .to_string()
        };
        let message = if function {
            format!(
                "{which} the VirtualMachineInstances it starts, and the function cannot \
                 migrate it: without {them}, they would no longer get what {them} {give}. \
                 {fix}, then migrate again"
            )
        } else {
            format!(
                "{which} the VirtualMachineInstances it starts, and the advice leaves it out: \
                 without {them}, they no longer get what {them} {give}. {fix}"
            )
        };
        let mut d = Diagnostic::warning(
            codes::PRESET,
            input(owner)
                .map(|o| o.field_origin(labels))
                .unwrap_or_default(),
            message,
        )
        .with_object(owner.clone())
        .with_field(labels);
        if function {
            d.severity = diagnostic::Severity::Error;
        }
        out.diagnostics.push(d);
    }
    // A warning at a field of a suggestion's target.
    let at_target = |m: &MatcherSuggestion, field: &str, message: String| {
        let origin = input(&m.target)
            .map(|o| o.field_origin(field))
            .unwrap_or_default();
        // The function carries the advice out: what it would change or break in a VM stops it.
        let mut d = Diagnostic::warning(codes::PRESET, origin, message)
            .with_object(m.target.clone())
            .with_field(field);
        if rewrite == Some(Rewrite::Function) {
            d.severity = diagnostic::Severity::Error;
        }
        d
    };
    let mut unmapped_of: HashMap<(&str, &str), Vec<&Unmapped>> = HashMap::new();
    for u in &result.unmapped {
        let origin = input(&u.preset)
            .map(|o| o.field_origin(&u.field))
            .unwrap_or_default();
        unmapped_of
            .entry((u.preset.name.as_str(), effective_namespace(&u.preset)))
            .or_default()
            .push(u);
        out.diagnostics.push(
            Diagnostic::warning(
                codes::PRESET,
                origin,
                format!("no instancetype or preference equivalent: {}", u.reason),
            )
            .with_object(u.preset.clone())
            .with_field(u.field.clone()),
        );
    }
    // Every preset that selects a target gets its own suggestion; past a few, the rest are
    // named on one line (a namespace whose presets all select every VM would otherwise print
    // a block for every pair, each naming every other preset).
    const SUGGESTIONS_PER_TARGET: usize = 3;
    // The suggestions of one target share its list of selecting presets; two copies of one
    // VM in the input are two targets of the same name, counted apart.
    let mut shown: Option<(&Arc<[String]>, usize)> = None;
    // `--with-vms`: the VMs with their advice followed, in the order of the suggestions.
    let mut rewritten: Vec<(usize, serde_json::Value)> = Vec::new();
    // The advice for the VM at hand, one entry per preset that selects it.
    let mut followed: Vec<Followed<'_>> = Vec::new();
    // The VMs that gain CPU hotplug room with a preset's instancetype, by preset.
    let mut hotplug: BTreeMap<ObjectRef, HotplugRoom> = BTreeMap::new();
    // Follow the advice gathered for one VM: judge the VM as it leaves it, and keep it for
    // `--with-vms`.
    let mut follow = |followed: &mut Vec<Followed<'_>>, out: &mut Outcome| {
        let mut group = std::mem::take(followed);
        // The warnings of parts KubeVirt skips today: told unless the VMI shows them unchanged
        // with the advice followed.
        let mut skipped: Vec<(String, Diagnostic)> = group
            .iter_mut()
            .flat_map(|f| std::mem::take(&mut f.skipped))
            .collect();
        let mut overrides: Vec<Override<'_>> = group
            .iter_mut()
            .flat_map(|f| std::mem::take(&mut f.overrides))
            .collect();
        let told = |skipped: &mut Vec<(String, Diagnostic)>,
                    overrides: &mut Vec<Override<'_>>,
                    out: &mut Outcome| {
            out.diagnostics
                .extend(std::mem::take(skipped).into_iter().map(|(_, d)| d));
            out.diagnostics
                .extend(std::mem::take(overrides).into_iter().map(|o| o.told(None)));
        };
        let Some(first) = group.first() else {
            return;
        };
        let m = first.m;
        let changes = group
            .iter()
            .any(|f| f.m.instancetype.is_some() || f.m.preference.is_some() || !f.keep.is_empty());
        if !changes {
            told(&mut skipped, &mut overrides, out);
            return;
        }
        let presets: Vec<&Object> = group
            .iter()
            .filter_map(|f| {
                preset_named
                    .get(&(effective_namespace(&f.m.target), f.m.preset.as_str()))
                    .copied()
            })
            .collect();
        let Some(vm) = input(&m.target) else {
            told(&mut skipped, &mut overrides, out);
            return;
        };
        // A field of the wrong type where KubeVirt reads it: the API server refuses the VM
        // today, and what the presets would give it cannot be judged. That comes first.
        let wrong_types: Vec<Diagnostic> = validate::check_object(vm, &before_ctx)
            .into_iter()
            .filter(|d| wrong_type::is_wrong_type(d) && d.is_error())
            .collect();
        if !wrong_types.is_empty() {
            let names = group
                .iter()
                .map(|f| format!("`{}`", f.m.preset))
                .collect::<Vec<_>>()
                .join(" and ");
            out.diagnostics.extend(wrong_types.into_iter().map(|mut d| {
                d.point_at_field(|field| vm.field_origin(field));
                d.message = format!(
                    "{}; the advice for {names} is not followed until this is fixed",
                    d.message
                );
                d
            }));
            return;
        }
        // Several presets' advice is followed together when it cannot clash: one
        // instancetype and one preference at most, and no part two of them give.
        let all_shown = group.len() == m.also_selected_by().count() + 1;
        let count =
            |carries: fn(&MatcherSuggestion) -> bool| group.iter().filter(|f| carries(f.m)).count();
        let merged = merged_for(m);
        let compatible = presets.len() == group.len()
            && all_shown
            && count(|m| m.instancetype.is_some()) <= 1
            && (count(|m| m.preference.is_some()) <= 1 || merged.is_some())
            && migrate::parts_apart(&presets);
        if !compatible {
            let clash = match unnamed_for(m) {
                Some(unnamed) => Cow::Owned(format!(
                    "several presets give it a preference each, and the preference that merges \
                     theirs cannot be named `{}`: {}",
                    unnamed.name, unnamed.reason
                )),
                None => Cow::Borrowed(
                    "several presets select it, and their advice clashes (two instancetypes or \
                     preferences, or a part two of them give)",
                ),
            };
            match rewrite {
                Some(Rewrite::WithVms) => out.diagnostics.push(at_target(
                    m,
                    "spec.template.metadata.labels",
                    format!(
                        "not printed with the advice followed (`--with-vms`): {clash}. Merge \
                         them by hand"
                    ),
                )),
                Some(Rewrite::Function) => out.diagnostics.push(at_target(
                    m,
                    "spec.template.metadata.labels",
                    format!("cannot be migrated: {clash}. Merge them by hand, then migrate again"),
                )),
                None => {}
            }
            told(&mut skipped, &mut overrides, out);
            return;
        }
        let mut value = vm.value.clone();
        for (f, preset) in group.iter().zip(&presets) {
            value = advised_vm(&value, f.m, preset, &f.keep, f.needs_cpu);
        }
        if let Some(merged) = merged {
            path::set(&mut value, &["spec", "preference"], merged.matcher.clone());
        }
        let advised = vm.with_value(value);
        // The VMI the VM starts today and the one it would start with the advice followed,
        // built once, when a check below first asks for them.
        let started = std::cell::OnceCell::new();
        let started = || {
            started.get_or_init(|| {
                (
                    started_vmi(vm, &index, &presets_before, &mut Vec::new()),
                    started_vmi(&advised, &index_after, &presets_after, &mut Vec::new()),
                )
            })
        };
        // A VM that keeps its own preference has the instancetype's vCPUs laid out as that
        // preference says, not as its preset lays them out today: told where that differs
        // (unless the VM's own layout is told below).
        let kept_preference = group.iter().find_map(|f| {
            f.m.own_matchers
                .iter()
                .find(|(field, _)| *field == "spec.preference")
                .map(|(_, name)| name)
        });
        let layout_preset = group.iter().zip(&presets).find_map(|(f, preset)| {
            let cpu = path::get(&preset.value, &["spec", "domain", "cpu"])?;
            ["sockets", "cores", "threads"]
                .iter()
                .any(|axis| cpu.get(axis).is_some_and(|v| !v.is_null()))
                .then_some(f.m.preset.as_str())
        });
        let layout_overridden = overrides
            .iter()
            .any(|o| matches!(o.part, OverriddenPart::Layout { .. }));
        if let Some(preset) = layout_preset
            && !layout_overridden
            && let (Some(before), Some(after)) = started()
            && vmi_layout(before) != vmi_layout(after)
        {
            let (field, message) = match kept_preference {
                Some(kept) => (
                    "spec.preference",
                    format!(
                        "it keeps its own preference {kept}, which lays out its vCPUs otherwise \
                         than preset `{preset}` does: it has {} today and would have {}. Give \
                         its preference the CPU topology it needs (`preferredCPUTopology`), or \
                         have it name the preference migrated from the preset",
                        described(vmi_layout(before)),
                        described(vmi_layout(after)),
                    ),
                ),
                // A layout no preference gives (the preset's note says which).
                None => (
                    "spec.instancetype",
                    format!(
                        "its vCPUs are laid out as preset `{preset}` says today, {}, and would \
                         be laid out as {} with the advice followed: no preference spreads them \
                         that way, and beside an instancetype the VM cannot lay them out itself. \
                         Keep its preset, or accept the new layout",
                        described(vmi_layout(before)),
                        described(vmi_layout(after)),
                    ),
                ),
            };
            out.diagnostics.push(at_target(m, field, message));
        }
        // KubeVirt sizes a VMI's CPU hotplug room (`maxSockets`) from the sockets it has once
        // its presets are applied, before the defaults fill the topology in: none where
        // neither the VM nor its preset sets sockets, while an instancetype always sets them.
        // The guest starts with the same vCPUs: told once per preset, below, and never a
        // reason to stop the function.
        if let Some((f, preset)) = group
            .iter()
            .zip(&presets)
            .find(|(f, _)| f.m.instancetype.is_some())
            && let (Some(before), Some(after)) = started()
        {
            let max_sockets = |vmi| {
                path::get(vmi, &["spec", "domain", "cpu", "maxSockets"])
                    .and_then(serde_json::Value::as_u64)
            };
            if let Some(gained) = max_sockets(after)
                && max_sockets(before) != Some(gained)
            {
                let [sockets, cores, threads] = vmi_layout(after);
                hotplug
                    .entry(preset.object_ref())
                    .or_insert_with(|| HotplugRoom {
                        origin: preset.field_origin("spec.domain.cpu"),
                        gained,
                        vcpus: gained.saturating_mul(cores).saturating_mul(threads),
                        sockets,
                        vms: Vec::new(),
                    })
                    .vms
                    .push((f.m.target.name.clone(), max_sockets(before)));
            }
        }
        if !skipped.is_empty() || !overrides.is_empty() {
            if let (Some(before), Some(after)) = started() {
                // A CPU layout told as an override leaves the rest of the `cpu` to judge.
                let layout_told = overrides
                    .iter()
                    .any(|o| matches!(o.part, OverriddenPart::Layout { .. }));
                skipped.retain(|(at, _)| {
                    if at == "cpu" && layout_told {
                        let cpu = |vmi| path::get(vmi, &["spec", "domain", "cpu"]);
                        migrate::without_layout(cpu(before)) != migrate::without_layout(cpu(after))
                    } else {
                        vmi_part(before, at) != vmi_part(after, at)
                    }
                });
                let layout_after = vmi_layout(after);
                for o in std::mem::take(&mut overrides) {
                    if !o.unchanged(before, after) {
                        out.diagnostics.push(o.told(Some(layout_after)));
                    }
                }
            }
            told(&mut skipped, &mut overrides, out);
        }
        // Judged as `validate` judges VMs (the VMI it starts included): what KubeVirt would
        // refuse in it then. A VM KubeVirt refuses today has that to fix first.
        let refusals = |o: &Object, ctx: &validate::Context<'_>| -> Vec<(&'static str, String)> {
            validate::check_object(o, ctx)
                .into_iter()
                .filter(|d| d.severity == diagnostic::Severity::Error || d.code == codes::VM_SPEC)
                .map(|d| (d.code, d.message))
                .collect()
        };
        if refusals(vm, &before_ctx).is_empty() {
            let names = group
                .iter()
                .map(|f| format!("`{}`", f.m.preset))
                .collect::<Vec<_>>();
            let which = match names.as_slice() {
                [one] => format!("preset {one}"),
                many => format!("presets {}", many.join(" and ")),
            };
            let field = if group.iter().any(|f| f.m.instancetype.is_some()) {
                "spec.instancetype"
            } else if group.iter().any(|f| f.m.preference.is_some()) {
                "spec.preference"
            } else {
                "spec.template.spec.domain"
            };
            for (code, message) in refusals(&advised, &after_ctx) {
                out.diagnostics.push(at_target(
                    m,
                    field,
                    format!(
                        "KubeVirt admits it today, and would refuse it with the advice for \
                         {which} followed ({code}): {message}"
                    ),
                ));
            }
        }
        if rewrite.is_some() {
            rewritten.extend(position_of(objects, vm).map(|at| (at, advised.value)));
        }
    };
    // Why KubeVirt refuses every VMI the target at hand starts today, if it does (its
    // presets conflict): what the advice says a preset gives it today, it does not.
    let mut refused_today: Option<String> = None;
    for m in &result.matchers {
        let count = match shown {
            Some((selected_by, n)) if Arc::ptr_eq(selected_by, &m.selected_by) => n + 1,
            _ => 1,
        };
        if count == 1 {
            follow(&mut followed, &mut out);
            refused_today = input(&m.target).and_then(|target| {
                let mut found = Vec::new();
                started_vmi(target, &index, &presets_before, &mut found);
                found
                    .into_iter()
                    .find(|d| d.code == codes::PRESET && d.is_error())
                    .map(|d| {
                        let why = d
                            .message
                            .strip_prefix("the VirtualMachineInstance would be refused: ");
                        why.unwrap_or(&d.message).to_string()
                    })
            });
            if let Some(why) = &refused_today {
                out.diagnostics.push(at_target(
                    m,
                    "spec.template.metadata.labels",
                    format!(
                        "KubeVirt refuses every VirtualMachineInstance it starts today ({why}): \
                         what the advice for each preset says it gives is what that preset \
                         alone would give; merge them by hand"
                    ),
                ));
            }
        }
        shown = Some((&m.selected_by, count));
        if count > SUGGESTIONS_PER_TARGET {
            if count == SUGGESTIONS_PER_TARGET + 1 {
                let rest =
                    (m.also_selected_by().count() + 1).saturating_sub(SUGGESTIONS_PER_TARGET);
                let _ = writeln!(
                    out.stderr,
                    "{}: {rest} more presets select it too; each would be suggested as above, under \
                     its own name",
                    m.target
                );
            }
            continue;
        }
        // What the target keeps of its own: `instancetype `u1.medium``, ...
        let kept_own = m
            .own_matchers
            .iter()
            .map(|(field, name)| format!("{} {name}", field.strip_prefix("spec.").unwrap_or(field)))
            .collect::<Vec<_>>()
            .join(" and ");
        let own_only = m.instancetype.is_none() && m.preference.is_none();
        if own_only && m.own_matchers.is_empty() {
            let _ = writeln!(
                out.stderr,
                "{}: selected by preset `{}`, which has nothing a matcher can carry",
                m.target, m.preset
            );
        } else if own_only {
            let _ = writeln!(
                out.stderr,
                "{}: selected by preset `{}`; it names its own {kept_own}, and a VM takes one \
                 of each: nothing to add",
                m.target, m.preset
            );
        } else if m.target.kind == "VirtualMachineInstance" {
            // Only a VirtualMachine names an instancetype or preference: a VMI has no such
            // field, and one added is dropped.
            let _ = writeln!(
                out.stderr,
                "{}: selected by preset `{}`; a VirtualMachineInstance cannot name an \
                 instancetype or preference: create it through a VirtualMachine whose spec has \
                 the matchers below, or write the preset's fields into its own spec:",
                m.target, m.preset
            );
            if rewrite == Some(Rewrite::Function) {
                out.diagnostics.push(at_target(
                    m,
                    "metadata.labels",
                    format!(
                        "cannot be migrated: preset `{}` gives it what no matcher can carry \
                         to a VirtualMachineInstance. Create it through a VirtualMachine, or \
                         write the preset's fields into its own spec, then migrate again",
                        m.preset
                    ),
                ));
            }
        } else {
            let _ = writeln!(
                out.stderr,
                "{}: selected by preset `{}`; add:",
                m.target, m.preset
            );
        }
        if !m.lost.is_empty() {
            let (field, _) = &m.own_matchers[0];
            out.diagnostics.push(at_target(m, field, {
                let kinds = m
                    .own_matchers
                    .iter()
                    .map(|(f, _)| f.strip_prefix("spec.").unwrap_or(f))
                    .collect::<Vec<_>>()
                    .join(" and ");
                let (takes, are, their, own) = if m.own_matchers.len() == 1 {
                    (format!("one {kinds}"), "is", "its", format!("own {kinds}"))
                } else {
                    (
                        "one of each".to_string(),
                        "are",
                        "their",
                        "own objects".into(),
                    )
                };
                format!(
                    "it names its own {kept_own}, and a VM takes {takes}: the {kinds} \
                     migrated from preset `{}` {are} not suggested for it, so what the \
                     preset gives it today through {their} fields ends with the preset: \
                     {}. Carry what it needs into its {own}, or into its spec where \
                     KubeVirt allows it",
                    m.preset,
                    m.lost.join(", ")
                )
            }));
        }
        let mut spec = serde_json::Map::new();
        if let Some(it) = &m.instancetype {
            spec.insert("instancetype".into(), it.clone());
        }
        if let Some(p) = &m.preference {
            // A VM that several presets give a preference takes the one that merges theirs.
            let mut p = p.clone();
            if let Some(merged) = merged_for(m)
                && let Some(name) = p.get_mut("name")
            {
                *name = merged.name.clone().into();
            }
            spec.insert("preference".into(), p);
        }
        let own = unmapped_of
            .get(&(m.preset.as_str(), effective_namespace(&m.target)))
            .map_or(&[][..], Vec::as_slice);
        let mut keep = kept_parts(own, m);
        // Beside an instancetype of its own, KubeVirt refuses a VM that sets these: what the
        // preset gives it there today ends with the preset.
        let own_instancetype = input(&m.target)
            .and_then(|o| o.value.get("spec"))
            .and_then(|spec| spec.get("instancetype"))
            .is_some_and(|v| !v.is_null());
        let refused: Vec<&str> = if own_instancetype {
            keep.extract_if(.., |f| REFUSED_BESIDE_AN_INSTANCETYPE.contains(f))
                .collect()
        } else {
            Vec::new()
        };
        if !refused.is_empty() {
            out.diagnostics.push(at_target(
                m,
                "spec.instancetype",
                format!(
                    "preset `{}` gives it {} today, which a VM cannot set beside an \
                     instancetype (KubeVirt refuses it as a conflict): it ends with the \
                     preset. Carry what it needs into its instancetype",
                    m.preset,
                    refused.join(", ")
                ),
            ));
        }
        // Unless the preset's own cpu is copied into the template below.
        let needs_cpu = m.needs_cpu && !keep.iter().any(|f| f.starts_with("spec.domain.cpu"));
        if needs_cpu {
            spec.insert(
                "template".into(),
                serde_json::json!({"spec": {"domain": {"cpu": {}}}}),
            );
        }
        if !spec.is_empty() {
            let snippet = emit::yaml_document(&serde_json::json!({ "spec": spec }));
            for line in snippet.lines() {
                let _ = writeln!(out.stderr, "    {line}");
            }
            if !m.own_matchers.is_empty() {
                let _ = writeln!(
                    out.stderr,
                    "  (it keeps its own {kept_own}: a VM takes one of each)"
                );
            }
        }
        if needs_cpu {
            let _ = writeln!(
                out.stderr,
                "  (an empty `cpu` receives the preference's CPU features: without an \
                 instancetype nothing else creates it, and KubeVirt fails on a VM without one)"
            );
        }
        if !m.remove_fields.is_empty() {
            let _ = writeln!(
                out.stderr,
                "  and remove what the instancetype now owns: {}",
                m.remove_fields.join(", ")
            );
        }
        if !keep.is_empty() {
            let today = if refused_today.is_some() {
                "no matcher carries them (KubeVirt refuses its VMIs today: see the warning at its \
                 labels)"
            } else {
                "KubeVirt applies them to it today, and no matcher carries them"
            };
            let _ = writeln!(
                out.stderr,
                "  and copy into its own spec the preset's {}: {today}",
                keep.join(", ")
            );
        }
        let mut overrides: Vec<Override<'_>> = Vec::with_capacity(m.overridden.len());
        for (field, mine, theirs) in &m.overridden {
            let domain_path = field
                .strip_prefix("spec.template.spec.domain.")
                .or_else(|| field.strip_prefix("spec.domain."))
                .unwrap_or(field);
            if let (Some(mine), Some(theirs)) = (layout(mine), layout(theirs))
                && domain_path == "cpu"
            {
                overrides.push(Override {
                    part: OverriddenPart::Layout { mine, theirs },
                    preset: &m.preset,
                    adjust,
                    diagnostic: at_target(m, field, String::new()),
                });
                continue;
            }
            let part = if field.ends_with(".resources.limits.memory")
                || field.ends_with(".memory.guest")
            {
                OverriddenPart::At("memory.guest".to_string())
            } else {
                OverriddenPart::At(domain_path.to_string())
            };
            let mut push = |d: Diagnostic| {
                overrides.push(Override {
                    part: part.clone(),
                    preset: &m.preset,
                    adjust,
                    diagnostic: d,
                });
            };
            if field.ends_with(".resources.limits.memory") {
                push(at_target(
                    m,
                    field,
                    format!(
                        "set to {mine}, which sizes the guest today: preset `{}` requests \
                         {theirs} of memory, but KubeVirt merges a preset's requests only into \
                         a VM that has none, so it does not reach this one. With the \
                         instancetype `{}` the guest would have {theirs}. {adjust}",
                        m.preset, m.preset
                    ),
                ));
                continue;
            }
            if field.ends_with(".memory.guest") {
                push(at_target(
                    m,
                    field,
                    format!(
                        "set to {mine} where preset `{}` requests {theirs} of memory: the \
                         preset only sets the pod's request, so the guest has {mine} today; \
                         with the instancetype `{}` it would have {theirs}. {adjust}",
                        m.preset, m.preset
                    ),
                ));
                continue;
            }
            push(at_target(
                m,
                field,
                format!(
                    "set to {mine} where preset `{}` sets {theirs}: KubeVirt skips the \
                     preset's value, so {mine} is what runs today; with the instancetype \
                     `{}` it would be the preset's. {adjust}",
                    m.preset, m.preset
                ),
            ));
        }
        // Only a matcher suggested brings back what KubeVirt skips today.
        let not_applied = if own_only {
            &[][..]
        } else {
            &m.not_applied[..]
        };
        let mut skipped_parts = Vec::with_capacity(not_applied.len());
        for (field, skipped, carrier) in not_applied {
            let what = carrier.describe();
            let (carry, from, own) = match carrier {
                Carrier::Both => ("carry", "them".to_string(), "objects of its own"),
                Carrier::Instancetype => (
                    "carries",
                    format!("the {what}"),
                    "an instancetype of its own",
                ),
                Carrier::Preference => {
                    ("carries", format!("the {what}"), "a preference of its own")
                }
            };
            skipped_parts.push((
                skipped.domain_path(),
                at_target(
                    m,
                    field,
                    format!(
                        "preset `{}` does not reach this today: KubeVirt skips its `{}`, which \
                         the VirtualMachineInstance sets differently ({}). The {what} `{}` \
                         suggested for it {carry} it and would apply it: {}",
                        m.preset,
                        skipped.field,
                        skipped.values_text(),
                        // A preference merged for this VM carries what its presets' do.
                        match (carrier, merged_for(m)) {
                            (Carrier::Preference, Some(merged)) => &merged.name,
                            _ => &m.preset,
                        },
                        if function {
                            "drop that part from the preset, since it does not reach this VM, \
                             or migrate this VM by hand"
                                .to_string()
                        } else {
                            format!("drop that part from {from}, or give this one {own}")
                        }
                    ),
                ),
            ));
        }
        // The VM as the advice leaves it, once every preset that selects it has had its say.
        if m.target.kind == "VirtualMachine" {
            followed.push(Followed {
                m,
                keep: keep.clone(),
                needs_cpu,
                skipped: skipped_parts,
                overrides,
            });
        } else {
            out.diagnostics
                .extend(skipped_parts.into_iter().map(|(_, d)| d));
            out.diagnostics
                .extend(overrides.into_iter().map(|o| o.told(None)));
        }
        if let Some(merged) = merged_for(m)
            && m.preference.is_some()
        {
            let _ = writeln!(
                out.stderr,
                "  note: a VM takes one preference, and presets {} give it one each: `{}` \
                 merges theirs (written with the new objects)",
                quoted_list(&merged.presets),
                merged.name
            );
        }
        if let Some(unnamed) = unnamed_for(m)
            && m.preference.is_some()
        {
            let _ = writeln!(
                out.stderr,
                "  note: a VM takes one preference, and presets {} give it one each; the \
                 preference that merges theirs cannot be named `{}` ({}): merge them by hand",
                quoted_list(&unnamed.presets),
                unnamed.name,
                unnamed.reason
            );
        }
        let others = m.also_selected_by().count();
        if others > 0 {
            const NAMED: usize = 10;
            let more = if others > NAMED {
                format!(" and {} more", others - NAMED)
            } else {
                String::new()
            };
            let _ = writeln!(
                out.stderr,
                "  note: also selected by {}{more}",
                m.also_selected_by()
                    .take(NAMED)
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    follow(&mut followed, &mut out);
    for (preset, room) in hotplug {
        out.diagnostics.push(room.told(preset));
    }
    Migration {
        out,
        objects: result.objects,
        homes,
        rewritten,
    }
}

/// What to do about a VM's own value that the migration would replace: for the command, whose
/// objects the user writes, and for the function, which writes them itself.
const ADJUST: [&str; 2] = [
    "Adjust the instancetype, or give this one an instancetype of its own",
    "Make the preset and this VM agree, or migrate this VM by hand",
];

/// A preference merged from those of the presets that select one VM.
struct MergedPreference {
    /// Its name: the presets' names joined by `-`.
    name: String,
    /// The matcher that names it.
    matcher: serde_json::Value,
    /// The preference.
    object: serde_json::Value,
    /// The presets whose preferences it merges, in migration order.
    presets: Vec<String>,
}

/// `names`, each in backquotes, joined by "and".
fn quoted_list(names: &[String]) -> String {
    names
        .iter()
        .map(|p| format!("`{p}`"))
        .collect::<Vec<_>>()
        .join(" and ")
}

/// Why the presets that select a VM, which could otherwise be followed together, get no merged
/// preference: the name it would have.
struct Unnamed {
    /// The name it would have had.
    name: String,
    /// The presets whose preferences it would merge, in migration order.
    presets: Vec<String>,
    /// Why it cannot have it.
    reason: &'static str,
}

/// The merged preferences of [`merge_preferences`], and the VMs whose merged preference could
/// not be named, each by its suggestions' shared list of presets.
#[derive(Default)]
struct Merges {
    merged: HashMap<*const (), MergedPreference>,
    unnamed: HashMap<*const (), Unnamed>,
}

/// The merged preference of each VM (by its suggestions' shared list of presets) that several
/// presets select, each giving it a preference, where their advice can be followed together:
/// at most one of them gives an instancetype, no two give one part as KubeVirt merges presets,
/// and the preferences have no field with two values. Its name is theirs joined by `-`; where
/// another set of presets' merged preference would have the same name (`a-b` with `c`, `a` with
/// `b-c`), each has that name followed by `-` and eight hexadecimal digits of a digest of its
/// presets' names, the same whatever else the inputs hold. None is made under a name the API
/// server refuses or that an input or another migrated object already has: that VM is in
/// [`Merges::unnamed`].
fn merge_preferences(
    result: &migrate::MigrateResult,
    preset_named: &HashMap<(&str, &str), &Object>,
    inputs: &[Object],
) -> Merges {
    // The migrated preferences' specs, and the names of the inputs' preferences, by namespace.
    let mut migrated: HashMap<(&str, &str), &serde_json::Value> = HashMap::new();
    for v in &result.objects {
        if v.get("kind").and_then(serde_json::Value::as_str) == Some("VirtualMachinePreference") {
            let at =
                |key: &str| path::get(v, &["metadata", key]).and_then(serde_json::Value::as_str);
            let namespace = at("namespace").unwrap_or("default");
            migrated.insert(
                (namespace, at("name").unwrap_or_default()),
                v.get("spec").unwrap_or(&serde_json::Value::Null),
            );
        }
    }
    let inputs: std::collections::HashSet<(&str, &str)> = inputs
        .iter()
        .filter(|o| o.kind() == Kind::Preference)
        .map(|o| (o.effective_namespace(), o.name()))
        .collect();
    let taken = |namespace: &str, name: &str| {
        migrated.contains_key(&(namespace, name)) || inputs.contains(&(namespace, name))
    };
    // Each VM's merge: its key, namespace, the namespace the presets name, presets and spec.
    struct Candidate<'r> {
        key: *const (),
        namespace: &'r str,
        written_in: Option<&'r str>,
        presets: Vec<String>,
        spec: serde_json::Map<String, serde_json::Value>,
    }
    let mut candidates: Vec<Candidate<'_>> = Vec::new();
    for group in result
        .matchers
        .chunk_by(|a, b| Arc::ptr_eq(&a.selected_by, &b.selected_by))
    {
        let first = &group[0];
        let namespace = effective_namespace(&first.target);
        let with_preference: Vec<&MatcherSuggestion> =
            group.iter().filter(|m| m.preference.is_some()).collect();
        if first.target.kind != "VirtualMachine"
            || with_preference.len() < 2
            || group.len() != first.also_selected_by().count() + 1
            || group.iter().filter(|m| m.instancetype.is_some()).count() > 1
        {
            continue;
        }
        let presets: Option<Vec<&Object>> = group
            .iter()
            .map(|m| preset_named.get(&(namespace, m.preset.as_str())).copied())
            .collect();
        let Some(presets) = presets.filter(|p| migrate::parts_apart(p)) else {
            continue;
        };
        let mut spec = serde_json::Map::new();
        let mut fits = true;
        for m in &with_preference {
            let name = m
                .preference
                .as_ref()
                .and_then(|p| p.get("name"))
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default();
            match migrated
                .get(&(namespace, name))
                .and_then(|spec| spec.as_object())
            {
                Some(theirs) => fits &= merge_into(&mut spec, theirs),
                None => fits = false,
            }
        }
        if !fits {
            continue;
        }
        candidates.push(Candidate {
            key: Arc::as_ptr(&first.selected_by).cast::<()>(),
            namespace,
            written_in: presets.first().and_then(|p| p.namespace()),
            presets: with_preference.iter().map(|m| m.preset.clone()).collect(),
            spec,
        });
    }
    // The sets of presets that would give each name.
    let mut sets_named: HashMap<(&str, String), std::collections::BTreeSet<&[String]>> =
        HashMap::new();
    for c in &candidates {
        sets_named
            .entry((c.namespace, c.presets.join("-")))
            .or_default()
            .insert(&c.presets);
    }
    let mut merges = Merges::default();
    let mut claimed: HashMap<(&str, String), &[String]> = HashMap::new();
    for c in &candidates {
        let joined = c.presets.join("-");
        let name = if sets_named[&(c.namespace, joined.clone())].len() > 1 {
            format!("{joined}-{}", digest_of(&c.presets))
        } else {
            joined
        };
        let refused = if crate::pipeline::check_name(&name).is_err() {
            Some("the API server refuses that name")
        } else if inputs.contains(&(c.namespace, name.as_str())) {
            Some("an input preference has that name")
        } else if taken(c.namespace, &name) {
            Some("a preference migrated from a preset has that name")
        } else if *claimed
            .entry((c.namespace, name.clone()))
            .or_insert(&c.presets)
            != c.presets.as_slice()
        {
            Some("the merged preference of other presets has that name")
        } else {
            None
        };
        if let Some(reason) = refused {
            merges.unnamed.insert(
                c.key,
                Unnamed {
                    name,
                    presets: c.presets.clone(),
                    reason,
                },
            );
            continue;
        }
        let mut metadata = serde_json::Map::new();
        metadata.insert("name".into(), serde_json::json!(name));
        // Written like the presets' own objects: in their namespace, as they name it.
        if let Some(ns) = c.written_in {
            metadata.insert("namespace".into(), serde_json::json!(ns));
        }
        merges.merged.insert(
            c.key,
            MergedPreference {
                matcher: serde_json::json!({"kind": "VirtualMachinePreference", "name": name}),
                object: serde_json::json!({
                    "apiVersion": "instancetype.kubevirt.io/v1beta1",
                    "kind": "VirtualMachinePreference",
                    "metadata": metadata,
                    "spec": c.spec,
                }),
                name,
                presets: c.presets.clone(),
            },
        );
    }
    merges
}

/// Eight hexadecimal digits of the SHA-256 digest of `names`, each ended by a NUL (which no
/// name holds).
fn digest_of(names: &[String]) -> String {
    use sha2::{Digest, Sha256};
    let mut digest = Sha256::new();
    for name in names {
        digest.update(name.as_bytes());
        digest.update([0]);
    }
    digest.finalize()[..4]
        .iter()
        .fold(String::with_capacity(8), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}

/// Merge `theirs` into `into`, mappings field by field; false where a field has two values.
fn merge_into(
    into: &mut serde_json::Map<String, serde_json::Value>,
    theirs: &serde_json::Map<String, serde_json::Value>,
) -> bool {
    let mut fits = true;
    for (key, value) in theirs {
        match (into.get_mut(key), value) {
            (None, _) => {
                into.insert(key.clone(), value.clone());
            }
            (Some(serde_json::Value::Object(mine)), serde_json::Value::Object(theirs)) => {
                fits &= merge_into(mine, theirs);
            }
            (Some(mine), _) => fits &= mine == value,
        }
    }
    fits
}

/// The advice for a VM from one preset that selects it: the suggestion, the preset's parts to
/// copy into the VM, whether it needs an empty `cpu`, and the warnings of the preset's parts
/// KubeVirt skips today that the suggested objects would apply (each with its path under the
/// VMI's `domain`).
struct Followed<'a> {
    m: &'a MatcherSuggestion,
    keep: Vec<&'a str>,
    needs_cpu: bool,
    skipped: Vec<(String, Diagnostic)>,
    overrides: Vec<Override<'a>>,
}

/// A field the VM sets where the preset's value is skipped today and the instancetype would
/// bring it: a warning, judged on the VMI the VM starts where the advice can be followed.
struct Override<'a> {
    part: OverriddenPart,
    /// The preset's name.
    preset: &'a str,
    /// What to do about it (see [`ADJUST`]).
    adjust: &'static str,
    /// The warning at the field (its message made by [`Override::told`] for a layout).
    diagnostic: Diagnostic,
}

/// What an [`Override`] compares in the VMI.
#[derive(Clone)]
enum OverriddenPart {
    /// The part at this path under the VMI's `domain` (`memory.guest`, ...).
    At(String),
    /// The CPU layout, `[sockets, cores, threads]`: the VM's and the preset's.
    Layout { mine: [u64; 3], theirs: [u64; 3] },
}

impl Override<'_> {
    /// The warning, with the layout the VMI would have once the advice is followed, where it
    /// is known.
    fn told(mut self, after: Option<[u64; 3]>) -> Diagnostic {
        if let OverriddenPart::Layout { mine, theirs } = self.part {
            let preset = self.preset;
            let then = match after {
                Some(after) => format!("it would have {}", described(after)),
                None if migrate::layout_vcpus(theirs) == migrate::layout_vcpus(mine) => {
                    format!(
                        "its {} vCPUs would be laid out as its preference says",
                        migrate::layout_vcpus(mine)
                    )
                }
                None => format!(
                    "it would have {} vCPUs, laid out as its preference says",
                    migrate::layout_vcpus(theirs)
                ),
            };
            self.diagnostic.message = format!(
                "has {} where preset `{preset}` gives {}: KubeVirt skips the preset's CPU, so \
                 its own layout is what runs today; with the instancetype `{preset}` {then}. \
                 {}",
                described(mine),
                described(theirs),
                self.adjust
            );
        }
        self.diagnostic
    }

    /// Whether the VMI shows this part the same before and after the advice is followed.
    fn unchanged(&self, before: &serde_json::Value, after: &serde_json::Value) -> bool {
        match &self.part {
            OverriddenPart::Layout { .. } => vmi_layout(before) == vmi_layout(after),
            OverriddenPart::At(at) => match (vmi_part(before, at), vmi_part(after, at)) {
                (Some(b), Some(a)) => migrate::same_value(&b, &a),
                (b, a) => b == a,
            },
        }
    }
}

/// `[sockets, cores, threads]` from a value [`crate::kubevirt::migrate`] wrote for a layout.
fn layout(v: &serde_json::Value) -> Option<[u64; 3]> {
    let axes = v.as_array()?;
    match axes.as_slice() {
        [s, c, t] => Some([s.as_u64()?, c.as_u64()?, t.as_u64()?]),
        _ => None,
    }
}

/// The VMs a preset's instancetype gives CPU hotplug room they do not have today.
struct HotplugRoom {
    /// Where the preset sets its CPU.
    origin: Origin,
    /// The `maxSockets` of their VMIs with the advice followed, and the vCPUs it allows.
    gained: u64,
    vcpus: u64,
    /// The instancetype's sockets.
    sockets: u64,
    /// Each VM and its VMI's `maxSockets` today.
    vms: Vec<(String, Option<u64>)>,
}

impl HotplugRoom {
    fn told(self, preset: ObjectRef) -> Diagnostic {
        const NAMED: usize = 3;
        let mut names: Vec<String> = self
            .vms
            .iter()
            .take(NAMED)
            .map(|(vm, today)| match today {
                Some(n) => format!("`{vm}` (maxSockets {n} today)"),
                None => format!("`{vm}` (none today)"),
            })
            .collect();
        if self.vms.len() > NAMED {
            names.push(format!("{} more", self.vms.len() - NAMED));
        }
        let plural = self.vms.len() > 1;
        Diagnostic::warning(
            codes::PRESET,
            self.origin,
            format!(
                "with the advice followed, the CPU hotplug room of the VirtualMachineInstance{} \
                 of {} becomes maxSockets {} (up to {} vCPUs): KubeVirt sizes that room from \
                 the sockets a VMI has before its defaults, which an instancetype always sets. \
                 The guest starts with the same vCPUs; to give it no room, set \
                 spec.cpu.maxSockets: {} in the instancetype",
                if plural { "s" } else { "" },
                names.join(", "),
                self.gained,
                self.vcpus,
                self.sockets,
            ),
        )
        .with_object(preset)
        .with_field("spec.domain.cpu")
    }
}

/// `4 vCPUs (1 socket, 4 cores, 1 thread)`.
fn described(layout: [u64; 3]) -> String {
    let [s, c, t] = layout;
    let plural = |n: u64, one: &str| {
        if n == 1 {
            format!("{n} {one}")
        } else {
            format!("{n} {one}s")
        }
    };
    format!(
        "{} ({}, {}, {})",
        plural(migrate::layout_vcpus(layout), "vCPU"),
        plural(s, "socket"),
        plural(c, "core"),
        plural(t, "thread")
    )
}

/// The CPU layout of a VMI (see [`migrate::cpu_layout`]).
fn vmi_layout(vmi: &serde_json::Value) -> [u64; 3] {
    migrate::cpu_layout(path::get(vmi, &["spec", "domain", "cpu"]))
}

/// The part of the VMI's domain at `at` (a [`presets::SkippedField`]'s path), as KubeVirt
/// compares it: `clock.clockoffset` is the clock without its timer.
fn vmi_part(vmi: &serde_json::Value, at: &str) -> Option<serde_json::Value> {
    let domain = path::get(vmi, &["spec", "domain"])?;
    if at == "clock.clockoffset" {
        let mut clock = domain.get("clock")?.clone();
        if let Some(clock) = clock.as_object_mut() {
            clock.shift_remove("timer");
        }
        return Some(clock);
    }
    let parts: Vec<&str> = at.split('.').collect();
    path::get(domain, &parts).cloned()
}

/// `vm` with the advice of `m` followed: the matchers added, the fields the instancetype owns
/// removed, the preset's parts `keep` names copied into its template, and an empty `cpu` where
/// the preference's CPU features need one.
fn advised_vm(
    vm: &serde_json::Value,
    m: &MatcherSuggestion,
    preset: &Object,
    keep: &[&str],
    needs_cpu: bool,
) -> serde_json::Value {
    let mut vm = vm.clone();
    if let Some(it) = &m.instancetype {
        set_matcher(&mut vm, "instancetype", it.clone());
    }
    if let Some(p) = &m.preference {
        set_matcher(&mut vm, "preference", p.clone());
    }
    let domain = ["spec", "template", "spec", "domain"];
    for field in &m.remove_fields {
        let at: Vec<&str> = field.split('.').collect();
        path::remove(&mut vm, &at);
        // A mapping the removal left empty (`cpu: {}` once its `cores` went) goes too, up to
        // the domain, which the schema requires.
        for end in (domain.len() + 1..at.len()).rev() {
            if !path::get(&vm, &at[..end])
                .is_some_and(|v| v.as_object().is_some_and(|m| m.is_empty()))
            {
                break;
            }
            path::remove(&mut vm, &at[..end]);
        }
    }
    for part in keep {
        // `spec.domain.cpu (sockets/cores/threads)`: the preset's topology.
        let (field, axes) = match part.split_once(" (") {
            Some((field, _)) => (field, &["sockets", "cores", "threads"][..]),
            None => (*part, &[][..]),
        };
        let Some(under) = field.strip_prefix("spec.domain.") else {
            continue;
        };
        let at: Vec<&str> = under.split('.').collect();
        let Some(value) = path::get(&preset.value, &[&["spec", "domain"][..], &at].concat()) else {
            continue;
        };
        if axes.is_empty() {
            path::set(&mut vm, &[&domain[..], &at].concat(), value.clone());
        } else {
            for axis in axes {
                if let Some(n) = value.get(*axis) {
                    path::set(&mut vm, &[&domain[..], &at, &[*axis]].concat(), n.clone());
                }
            }
        }
    }
    if needs_cpu {
        let cpu = [&domain[..], &["cpu"]].concat();
        if path::get(&vm, &cpu).is_none_or(serde_json::Value::is_null) {
            path::set(&mut vm, &cpu, serde_json::json!({}));
        }
    }
    vm
}

/// The position of `object` in `objects`, when it is one of them (found from its address, not
/// by a search: a package may hold thousands of VMs).
fn position_of(objects: &[Object], object: &Object) -> Option<usize> {
    let size = std::mem::size_of::<Object>().max(1);
    let offset = (std::ptr::from_ref(object) as usize).checked_sub(objects.as_ptr() as usize)?;
    let at = offset / size;
    objects
        .get(at)
        .filter(|o| std::ptr::eq(*o, object))
        .map(|_| at)
}

/// Set a matcher of `vm`: in its place when the VM has one, otherwise before `template`, where
/// people write it, instead of after everything else.
fn set_matcher(vm: &mut serde_json::Value, key: &str, matcher: serde_json::Value) {
    let before_template = path::get(vm, &["spec"])
        .and_then(serde_json::Value::as_object)
        .filter(|spec| !spec.contains_key(key))
        .and_then(|spec| spec.keys().position(|k| k == "template"));
    if let Some(at) = before_template
        && let Some(serde_json::Value::Object(spec)) = path::get_mut(vm, &["spec"])
    {
        spec.shift_insert(at, key.to_string(), matcher);
        return;
    }
    path::set(vm, &["spec", key], matcher);
}

/// The migrated objects that have the identity of an object among the inputs (a preference
/// already named after the preset): applied beside it, one would replace the other. An error
/// at the preset, naming where the other is.
fn clashes_with_inputs(migrated: &[serde_json::Value], inputs: &[Object]) -> Vec<Diagnostic> {
    // The first input of each identity, and the first preset of each namespace and name: one
    // table each instead of a pass over every input for every migrated object.
    let mut by_identity = HashMap::with_capacity(inputs.len());
    let mut presets = HashMap::new();
    for o in inputs {
        by_identity.entry(identity(o)).or_insert(o);
        if o.kind() == Kind::VirtualMachineInstancePreset {
            presets
                .entry((o.effective_namespace(), o.name()))
                .or_insert(o);
        }
    }
    let mut found = Vec::new();
    for value in migrated {
        let new = Object::new(value.clone(), Origin::default());
        let Some(existing) = by_identity.get(&identity(&new)) else {
            continue;
        };
        let preset = presets.get(&(new.effective_namespace(), new.name()));
        let mut d = Diagnostic::error(
            codes::DUPLICATE,
            preset.map(|p| p.origin.clone()).unwrap_or_default(),
            format!(
                "the {} migrated from this preset is {}, which is already defined at {} \
                 (document {}): applied together, one replaces the other. Rename the preset or \
                 the existing object, then migrate again",
                new.kind_str(),
                new.object_ref(),
                existing.origin,
                existing.origin.index + 1
            ),
        );
        if let Some(preset) = preset {
            d = d.with_object(preset.object_ref());
        }
        found.push(d);
    }
    found
}

/// The preset parts [`kept_parts`] may list that KubeVirt refuses in a VM beside an
/// instancetype, whatever the instancetype sets.
const REFUSED_BESIDE_AN_INSTANCETYPE: [&str; 3] = [
    "spec.domain.cpu (sockets/cores/threads)",
    "spec.domain.resources.requests.cpu",
    "spec.domain.resources.requests.memory",
];

/// The namespace an object of `r` is in: `default` when it names none, as `kubectl apply`
/// puts it (and as presets select).
fn effective_namespace(r: &ObjectRef) -> &str {
    r.namespace.as_deref().unwrap_or("default")
}

/// What the preset gives this target today that neither the instancetype nor the preference
/// carries: lost with the preset unless the target's own spec takes it. `unmapped` holds the
/// parts of the presets of the suggestion's name in the target's namespace.
fn kept_parts<'a>(unmapped: &[&'a Unmapped], m: &MatcherSuggestion) -> Vec<&'a str> {
    unmapped
        .iter()
        .copied()
        .filter(|u| {
            // `spec.domain.cpu (sockets/cores/threads)` is a part of `spec.domain.cpu`.
            let field = u.field.split(" (").next().unwrap_or_default();
            // A part KubeVirt skips or passes over for this target today, or that the VMI
            // already has, is not lost by migrating.
            let domain = field.strip_prefix("spec.domain.").unwrap_or(field);
            let applied = m
                .applied_today
                .iter()
                .any(|at| at == domain || at.starts_with(&format!("{domain}.")));
            u.preset.name == m.preset
                && effective_namespace(&u.preset) == effective_namespace(&m.target)
                && u.reason.ends_with(KEEP_IN_TEMPLATE)
                && applied
        })
        .map(|u| u.field.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_object_is_found_among_its_slice_by_its_address_only() {
        let object = |name: &str| {
            Object::new(
                serde_json::json!({"kind": "VirtualMachine", "metadata": {"name": name}}),
                Origin::default(),
            )
        };
        let objects = vec![object("a"), object("b"), object("c")];
        for (i, o) in objects.iter().enumerate() {
            assert_eq!(position_of(&objects, o), Some(i));
        }
        // An equal object elsewhere is not one of them.
        let copy = object("b");
        assert_eq!(position_of(&objects, &copy), None);
        assert_eq!(position_of(&objects[1..], &objects[0]), None);
    }
}

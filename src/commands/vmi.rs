//! `kvrender vmi` and `kvrender diff`: the VirtualMachineInstance each VirtualMachine produces.
//!
//! The order is KubeVirt's. The VM controller builds the VMI from the template (firmware UUID from
//! the VM name, default disks, the input device `autoattachInputDevice` asks for) and, for a VM
//! that names an instancetype or preference, takes the preference's autoattach flags, adds the
//! default network interface and applies them. The VMI webhook then applies the
//! VirtualMachineInstancePresets, and only after them its defaults. `--stage presets` stops
//! after the presets.

use std::io::IsTerminal;
use std::sync::Mutex;

use rayon::prelude::*;

use serde_json::Value;

use crate::cli::{DiffArgs, Stage, VmiArgs};
use crate::commands::Outcome;
use crate::commands::inputs::Inputs;
use crate::diagnostic::{self, Diagnostic, codes};
use crate::emit;
use crate::error::{Error, Result};
use crate::kubevirt::profile::ReferencePolicy;
use crate::kubevirt::{admission, expand, infer, presets, vmi, vmi_defaults};
use crate::load;
use crate::load::deferred::{DeferredVms, NotAVm};
use crate::model::{Kind, Object};
use crate::pipeline;
use crate::validate::rules::duplicate;

/// One object's findings, its printed VMI if it has one, and then its [`duplicate::key`].
type Built = (Vec<Diagnostic>, Option<(String, u64)>);

/// Build the VMI of each VirtualMachine (and take each VirtualMachineInstance) of `inputs`, in
/// input order, and hand it to `each` with the object it comes from: printed there and then,
/// so that no VMI's tree is held longer than it takes to print it. A VM left as text
/// (`deferred`) is parsed on the worker that builds its VMI and dropped there; when one does
/// not parse as a VM, nothing is added to `out`.
fn build_all(
    inputs: &Inputs,
    deferred: &DeferredVms<'_>,
    stage: Stage,
    out: &mut Outcome,
    each: impl Fn(&Object, Value) -> String + Sync,
) -> std::result::Result<(), NotAVm> {
    let index = inputs.index();
    let preset_objects: Vec<&Object> =
        presets::with_cluster_presets(&inputs.objects, &inputs.catalog)
            .into_iter()
            .filter(|o| {
                if let Some(d) = pipeline::preset_diagnostic(o) {
                    out.diagnostics.push(d);
                    return false;
                }
                let has_domain = presets::is_admitted(o);
                if !has_domain {
                    out.diagnostics.push(
                        Diagnostic::error(
                            codes::PRESET,
                            o.origin.clone(),
                            "KubeVirt refuses the preset (missing domain.), so it selects no \
                             VirtualMachineInstance",
                        )
                        .with_object(o.object_ref())
                        .with_field("spec.domain"),
                    );
                }
                has_domain
            })
            .collect();
    let preset_index = Mutex::new(presets::PresetIndex::new(&preset_objects).checking_order());
    out.diagnostics.extend(second_definitions(&inputs.objects));
    // Each VM on its own, in parallel; their findings and printed VMIs are then taken in input
    // order.
    let built: std::result::Result<Vec<Built>, NotAVm> = inputs
        .objects
        .par_iter()
        .map(|obj| {
            let parsed = deferred.parse(obj).transpose()?;
            let obj = parsed.as_ref().unwrap_or(obj);
            let mut diagnostics = Vec::new();
            let printed = build_one(obj, inputs, &index, stage, &preset_index, &mut diagnostics)
                .map(|vmi| (each(obj, vmi), duplicate::key(obj)));
            Ok((diagnostics, printed))
        })
        .collect();
    let mut keys = Vec::new();
    for (position, (diagnostics, printed)) in built?.into_iter().enumerate() {
        out.diagnostics.extend(diagnostics);
        if let Some((printed, key)) = printed {
            // Written piece by piece: not copied into one string first.
            out.stdout_parts.push(printed);
            keys.push((key, position));
        }
    }
    // An object printed for twice, its two definitions each shown: the cluster would hold
    // one. Those whose keys match are parsed again, to be compared whole.
    let again = duplicate::sharing_a_key(keys);
    if !again.is_empty() {
        let printed: Vec<Object> = again
            .into_iter()
            .filter_map(|position| {
                let obj = &inputs.objects[position];
                match deferred.parse(obj) {
                    Some(parsed) => parsed.ok(),
                    None => Some(obj.clone()),
                }
            })
            .collect();
        out.diagnostics.extend(duplicate::warnings(
            &printed,
            "; both are printed, and a `kubectl apply` of them keeps the last",
        ));
    }
    Ok(())
}

/// A warning for each second definition of an object a VMI is built with (an instancetype,
/// a preference, a preset, ...): the cluster holds one object of a kind, namespace and name,
/// and the VMI is built with the first, as `expand` expands with it.
fn second_definitions(objects: &[Object]) -> Vec<Diagnostic> {
    duplicate::warnings(
        objects.iter().filter(|o| {
            crate::resolve::indexed(o) || o.kind() == Kind::VirtualMachineInstancePreset
        }),
        "; the VirtualMachineInstance was built with the first",
    )
}

/// Load the inputs of `args` with their VM documents left as text, build every VMI with
/// `build` and return the outcome; when a VM document does not parse as a VM, load them
/// parsed whole and build again (see [`NotAVm`]). `command` names the command in findings.
fn load_and_build(
    args: &VmiArgs,
    command: &str,
    build: impl Fn(&Inputs, &DeferredVms<'_>, &mut Outcome) -> std::result::Result<(), NotAVm>,
) -> Result<Outcome> {
    let built_from = args.resolve.built_from()?;
    let sources = load::read_inputs(&args.paths, None, &args.resolve.exclude()?)?;
    let (inputs, deferred) = Inputs::load_deferring_vms(&args.paths, &sources, &args.resolve)?;
    let mut out = Outcome {
        diagnostics: inputs.diagnostics.clone(),
        ..Outcome::default()
    };
    // Deferred VMs stand among the objects as placeholders of their kind.
    let holds_vms = inputs.objects.iter().any(|o| {
        matches!(
            o.kind(),
            Kind::VirtualMachine | Kind::VirtualMachineInstance
        ) || crate::kubevirt::pool::is_pool(o)
            || crate::kubevirt::replica_set::is_replica_set(o)
    });
    if build(&inputs, &deferred, &mut out).is_err() {
        drop(inputs);
        let loaded = load::parse_sources(&sources);
        let inputs = Inputs::from_loaded(&args.paths, &sources, loaded, &args.resolve)?;
        out = Outcome {
            diagnostics: inputs.diagnostics.clone(),
            ..Outcome::default()
        };
        build(&inputs, &DeferredVms::default(), &mut out).map_err(|NotAVm| {
            Error::Usage("internal error: a parsed document was deferred".into())
        })?;
    }
    // Rather than print nothing without a word.
    if !holds_vms && out.diagnostics.is_empty() && out.stdout.is_empty() {
        out.stderr = format!(
            "no VirtualMachine, VirtualMachineInstance, VirtualMachinePool or \
             VirtualMachineInstanceReplicaSet in the input: `{command}` has nothing to show\n"
        );
    }
    diagnostic::sort(&mut out.diagnostics);
    load::note_variables(&mut out.diagnostics, &sources, command);
    load::note_kustomize_namespaces(&mut out.diagnostics, command);
    load::built_from::map_to_sources(&mut out.diagnostics, &sources, built_from);
    out.exit_from_diagnostics();
    Ok(out)
}

/// The errors of the wrong types (`KV004`), missing required fields and values out of its
/// schema's limits the API server refuses `obj` for, each at the line of its field.
fn schema_refusals(obj: &Object) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    crate::validate::rules::unknown_field::check(obj, &mut found);
    crate::validate::rules::wrong_type::check_required(obj, &mut found);
    // A value its schema's limits refuse (`replicas: -1`): refused the same way.
    crate::validate::rules::wrong_type::limits::check(obj, &mut found);
    found.retain(|d| d.code == codes::WRONG_TYPE && d.is_error());
    for d in &mut found {
        d.point_at_field(|field| obj.field_origin(field));
    }
    found
}

/// The refusal of a VirtualMachine without a `spec` or a `spec.template` (or with a `null`
/// one): the API server refuses it, KubeVirt's VM webhook too, and its controller has nothing
/// to make a VMI of.
fn missing_template(vm: &Object) -> Option<Diagnostic> {
    let mut found = Vec::new();
    crate::validate::rules::wrong_type::check_required(vm, &mut found);
    let mut d = found
        .into_iter()
        .find(|d| matches!(d.field.as_deref(), Some("spec" | "spec.template")))?;
    d.point_at_field(|field| vm.field_origin(field));
    Some(d)
}

/// `vm` with the annotations written into its template before the instancetype and preference
/// are applied to it: the PCI topology version KubeVirt's VM webhook gives a VM when it is
/// created (where the template, with the architecture and machine type the webhook gives it,
/// supports PCIe hotplug), then the VM's generation and, for `WaitAsReceiver`, the migration
/// target the controller writes when it starts the VMI. An instancetype that sets one of them
/// otherwise conflicts with it, and a preference's does not replace it. With the keys written
/// that the template did not have as they are now, each with the value it had, if any.
/// A VM whose preference is inferred gets the PCI topology version from the VMI webhook only
/// (the preference that says its architecture is not known before inference).
fn with_annotations_written_first(
    vm: &Object,
    index: &crate::resolve::Index<'_>,
    profile: &crate::kubevirt::profile::ClusterProfile,
) -> (Object, Vec<(String, Option<Value>)>) {
    use crate::model::path;
    let pcie_hotplug = pipeline::pci_topology_written_on_create(vm, index, profile);
    let mut value = vm.value.clone();
    let Some(annotations) =
        path::ensure_map(&mut value, &["spec", "template", "metadata", "annotations"])
    else {
        return (vm.clone(), Vec::new());
    };
    let mut written = serde_json::Map::new();
    if pcie_hotplug && !annotations.contains_key(vmi_defaults::PCI_TOPOLOGY_ANNOTATION) {
        written.insert(
            vmi_defaults::PCI_TOPOLOGY_ANNOTATION.into(),
            Value::from(vmi_defaults::PCI_TOPOLOGY_VERSION),
        );
    }
    let mut controller = serde_json::json!({"metadata": {}});
    vmi::controller_metadata(&vm.value, &mut controller);
    vmi::receiver_annotation(&vm.value, &mut controller);
    if let Some(Value::Object(by_controller)) = controller.pointer_mut("/metadata/annotations") {
        written.append(by_controller);
    }
    let mut keys = Vec::new();
    for (key, value) in written {
        match annotations.get(&key) {
            Some(had) if *had == value => {}
            had => keys.push((key.clone(), had.cloned())),
        }
        annotations.insert(key, value);
    }
    (vm.with_value(value), keys)
}

/// The VMI of one object of `inputs`, if it is a VirtualMachine or a VirtualMachineInstance and
/// nothing refuses it; findings go to `diagnostics`.
pub(crate) fn build_one(
    obj: &Object,
    inputs: &Inputs,
    index: &crate::resolve::Index<'_>,
    stage: Stage,
    preset_index: &Mutex<presets::PresetIndex<'_>>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Value> {
    let kind = obj.kind();
    let pool = crate::kubevirt::pool::is_pool(obj);
    let replica_set = crate::kubevirt::replica_set::is_replica_set(obj);
    if pool || replica_set {
        // The API server refuses one of the wrong types or without a field its schema
        // requires: it makes no VM and no VMI.
        let refused = schema_refusals(obj);
        if !refused.is_empty() {
            diagnostics.extend(refused);
            return None;
        }
    }
    if kind == Kind::VirtualMachine
        && let Some(d) = missing_template(obj)
    {
        diagnostics.push(d);
        return None;
    }
    if pool {
        // The VMI the pool's first VM starts: each of its VMs starts one of the same spec.
        let mut vm = crate::kubevirt::pool::vm_of(obj, 0)?;
        crate::kubevirt::pool::with_revision_label(obj, &mut vm);
        let mut found = Vec::new();
        let vmi = build_one(&vm, inputs, index, stage, preset_index, &mut found);
        let on_pool = |d| crate::validate::rules::pool::about_its_vms(obj, &vm, d);
        diagnostics.extend(found.into_iter().map(on_pool));
        return vmi;
    }
    if replica_set {
        // The VMI the replica set's controller creates, with a generated name; its findings
        // said of the replica set.
        let Some(vmi_object) = crate::kubevirt::replica_set::vmi_of(obj) else {
            if let Some(reason) = crate::kubevirt::replica_set::idle_reason(obj) {
                diagnostics.push(
                    Diagnostic::error(
                        codes::REPLICA_SET_SPEC,
                        obj.origin.clone(),
                        format!("the replica set creates no VirtualMachineInstance: {reason}"),
                    )
                    .with_object(obj.object_ref()),
                );
            }
            return None;
        };
        let mut found = Vec::new();
        let vmi = build_one(&vmi_object, inputs, index, stage, preset_index, &mut found);
        let on_set = |d| crate::validate::rules::replica_set::about_its_vmis(obj, &vmi_object, d);
        // The controller may write the labels KubeVirt keeps for itself.
        let reserved = crate::validate::rules::vm_spec::RESERVED_LABELS;
        found.retain(|d: &Diagnostic| !d.message.contains(reserved));
        diagnostics.extend(found.into_iter().map(on_set));
        return vmi.map(|mut vmi| {
            if let Some(meta) = vmi.get_mut("metadata").and_then(Value::as_object_mut) {
                // In the name's place.
                let base = crate::kubevirt::replica_set::base_name(obj);
                meta.shift_remove("name");
                meta.shift_insert(0, "generateName".into(), Value::String(base));
                if stage == Stage::Full {
                    // The replica set's controller creates it as the set's own.
                    let uid = crate::model::path::str_at(&obj.value, &["metadata", "uid"]);
                    let owner =
                        vmi::owner_reference("VirtualMachineInstanceReplicaSet", obj.name(), uid);
                    // Where Go writes it: before the finalizers.
                    let at = meta
                        .keys()
                        .position(|k| k == "finalizers")
                        .unwrap_or(meta.len());
                    meta.shift_insert(at, "ownerReferences".into(), Value::Array(vec![owner]));
                }
            }
            vmi
        });
    }
    // A misspelt VirtualMachine kind is reported instead of passed over in silence, and a VM
    // of an apiVersion KubeVirt does not serve starts no VMI: the cluster cannot hold it.
    let mut found = Vec::new();
    crate::validate::rules::api_version::check(obj, &mut found);
    if found.iter().any(Diagnostic::is_error) {
        diagnostics.extend(found);
        return None;
    }
    if kind != Kind::VirtualMachine && kind != Kind::VirtualMachineInstance {
        return None;
    }
    // A VM without a run strategy KubeVirt takes is not created: there is no VMI to start.
    if kind == Kind::VirtualMachine
        && let Some(spec @ Value::Object(_)) = obj.value.get("spec")
    {
        let refusals =
            crate::validate::rules::vm_spec::run_strategy_refusals(spec, &inputs.profile);
        diagnostics.extend(refusals.into_iter().map(|(field, message)| {
            Diagnostic::warning(
                codes::VM_SPEC,
                obj.field_origin(&field),
                format!(
                    "KubeVirt's VM webhook refuses to create this VirtualMachine: {message}; \
                     the VirtualMachineInstance is what the controller would start once it is \
                     admitted"
                ),
            )
            .with_object(obj.object_ref())
            .with_field(field)
        }));
    }
    // The instancetype and preference, applied as the VM controller does.
    // The annotations KubeVirt writes before the instancetype and preference, where the VM's
    // template did not have them: the preset stage shows them no more than for a VM without.
    let mut written_first = Vec::new();
    let source = if kind == Kind::VirtualMachine && expand::has_matchers(&obj.value) {
        // A VM KubeVirt's webhook refuses is not created (or not updated) as written; the
        // VMI is still what the controller makes of it, should it exist (its preference
        // changed after it was admitted, say): say so, as a warning.
        let refused = admission::admit(obj, index, &inputs.profile)
            .map(|r| r.causes)
            .unwrap_or_default();
        // A conflict, or a default KubeVirt refuses, stops the controller too: it is reported
        // below, as an error.
        let refused = refused.into_iter().filter(|c| {
            !matches!(
                c.reason,
                admission::Reason::Conflict | admission::Reason::Defaults
            )
        });
        let warnings: Vec<Diagnostic> = refused
            .map(|cause| {
                Diagnostic::warning(
                    crate::validate::rules::admission::code_of(cause.reason),
                    obj.field_origin(diagnostic::first_field(&cause.field)),
                    format!(
                        "{}: KubeVirt's webhook refuses to create the VirtualMachine as written \
                     (`kvrender validate` reports it as an error); the VirtualMachineInstance \
                     is what the controller would make of it",
                        cause.message
                    ),
                )
                .with_object(obj.object_ref())
                .with_field(cause.field)
            })
            .collect();
        // The VM as written must be of the right types: what is written first replaces
        // annotations that may not be.
        if let Some(d) = pipeline::vm_diagnostic(obj) {
            diagnostics.push(d);
            return None;
        }
        // The VM webhook checks the matchers first and refuses the VM for any fault: there
        // is no VM to start (`expand`, like the expand-spec API, looks up what they name).
        let refused = crate::validate::rules::admission::matcher_refusals(obj);
        if !refused.is_empty() {
            diagnostics.extend(refused.into_iter().map(|mut d| {
                d.point_at_field(|field| obj.field_origin(field));
                d
            }));
            return None;
        }
        if expanded_in_place(&obj.value, inputs.profile.reference_policy) {
            // The cluster's `instancetype.referencePolicy` has the VM controller write the
            // expansion into the VM first (an update: its generation goes up), and start the
            // VMI from that VM, which names no instancetype or preference any more.
            return match pipeline::expand_vm_to_apply(obj, index, &inputs.profile) {
                Ok(mut expanded) => {
                    diagnostics.extend(warnings);
                    vmi::bump_generation(&mut expanded);
                    let expanded = obj.with_value(expanded);
                    build_one(&expanded, inputs, index, stage, preset_index, diagnostics)
                }
                Err(d) => {
                    diagnostics.push(d);
                    None
                }
            };
        }
        let primed;
        (primed, written_first) = with_annotations_written_first(obj, index, &inputs.profile);
        match pipeline::controller_vm(&primed, index, &inputs.profile) {
            Ok(v) => {
                diagnostics.extend(warnings);
                obj.with_value(v)
            }
            // No VMI: what the webhook would say of the VM as written is beside the point,
            // and may follow from the same cause (an instancetype whose memory could not be
            // read is no instancetype of no memory).
            Err(mut d) => {
                let conflict = d
                    .field
                    .as_deref()
                    .and_then(|f| f.strip_prefix("annotations."));
                if d.code == codes::CONFLICT
                    && let Some(key) =
                        conflict.filter(|k| written_first.iter().any(|(w, _)| w == k))
                {
                    // The webhook writes the PCI topology version when it creates the VM,
                    // and its validating half refuses the conflict; the controller writes the
                    // others when it starts the VM, and does not start it.
                    let outcome = if key == vmi_defaults::PCI_TOPOLOGY_ANNOTATION {
                        "the VM is refused when it is created"
                    } else {
                        "the VM is not started"
                    };
                    d.message = format!(
                        "KubeVirt writes the annotation `{key}` before it applies the \
                         instancetype, which sets it otherwise: {outcome} (take the \
                         annotation out of the instancetype)"
                    );
                }
                diagnostics.push(d);
                return None;
            }
        }
    } else {
        // The checks `expand` makes (the VMI's name and firmware UUID come from the name;
        // a field of the wrong type would be replaced or copied as it is).
        let refused = if kind == Kind::VirtualMachine {
            pipeline::vm_diagnostic(obj)
        } else {
            pipeline::vmi_diagnostic(obj)
        };
        if let Some(d) = refused {
            diagnostics.push(d);
            return None;
        }
        // The VM webhook's architecture from a DataSource (see `controller_vm`); the preset
        // stage leaves out what that webhook writes, as for the annotations below.
        let arch = (kind == Kind::VirtualMachine && stage != Stage::Presets)
            .then(|| {
                infer::architecture_from_data_source(&obj.value, obj.effective_namespace(), index)
            })
            .flatten();
        match arch {
            Some(arch) => {
                let mut value = obj.value.clone();
                infer::set_architecture(&mut value, arch);
                obj.with_value(value)
            }
            None => obj.clone(),
        }
    };
    let mut vmi = vmi::vmi_for(&source)?;
    if stage == Stage::Presets
        && let Some(Value::Object(metadata)) = vmi.pointer_mut("/metadata")
        && let Some(Value::Object(annotations)) = metadata.get_mut("annotations")
    {
        for (key, had) in &written_first {
            match had {
                Some(had) => {
                    annotations.insert(key.clone(), had.clone());
                }
                None => {
                    annotations.shift_remove(key);
                }
            }
        }
        if annotations.is_empty() {
            metadata.shift_remove("annotations");
        }
    }
    vmi::null_strings_as_empty(&mut vmi);
    // The controller creates a VM's VMI through the API, so the webhook reads its quantities
    // in Go's canonical form (`1024Mi` as `1Gi`) and compares them so with the presets'; those
    // the presets leave as they were are printed as the VM spells them.
    let written = (kind == Kind::VirtualMachine)
        .then(|| vmi.get("spec"))
        .flatten()
        .and_then(|spec| match vmi::with_every_quantity_canonical(spec) {
            std::borrow::Cow::Owned(canonical) => Some((spec.clone(), canonical)),
            std::borrow::Cow::Borrowed(_) => None,
        })
        .map(|(written, canonical)| {
            vmi["spec"] = canonical;
            written
        });
    let applied = preset_index
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .apply(&mut vmi, obj.effective_namespace());
    if let (Some(written), Some(spec)) = (&written, vmi.get_mut("spec")) {
        vmi::restore_quantity_spellings(spec, written);
    }
    // A refusal of the presets is about the labels that select them.
    let labels = if kind == Kind::VirtualMachine {
        "spec.template.metadata.labels"
    } else {
        "metadata.labels"
    };
    match applied {
        Ok(outcome) => {
            let refused = outcome.refused_annotations();
            if !refused.is_empty() {
                // The webhook applies the presets; the API server then refuses the VMI for
                // the annotations they left. The preset stage shows the webhook's VMI.
                for message in refused {
                    let message = format!("the VirtualMachineInstance would be refused: {message}");
                    let at = obj.field_origin(labels);
                    diagnostics.push(
                        if stage == Stage::Presets {
                            Diagnostic::warning(codes::PRESET, at, message)
                        } else {
                            Diagnostic::error(codes::PRESET, at, message)
                        }
                        .with_object(obj.object_ref())
                        .with_field(labels),
                    );
                }
                if stage != Stage::Presets {
                    return None;
                }
            }
            for skipped in &outcome.skipped {
                // At the line where the VMI (or the VM's template) sets the field.
                let mut at = format!("spec.domain.{}", skipped.domain_path());
                if kind == Kind::VirtualMachine {
                    at = template_field(&at);
                }
                // KubeVirt's words, then the values where they print Go structs.
                let mut message = skipped.to_string();
                if skipped.detail_is_a_struct() {
                    message = format!("{message}: {}", skipped.values_text());
                }
                diagnostics.push(
                    Diagnostic::warning(codes::PRESET, obj.field_origin(&at), message)
                        .with_object(obj.object_ref())
                        .with_field(skipped.field.clone()),
                );
            }
            if let Some(order) = &outcome.order_dependence {
                let mut field = order.fields.first().cloned().unwrap_or_default();
                if kind == Kind::VirtualMachine {
                    field = template_field(&field);
                }
                diagnostics.push(
                    Diagnostic::warning(codes::PRESET, obj.origin.clone(), order.to_string())
                        .with_object(obj.object_ref())
                        .with_field(field),
                );
            }
            for warning in &outcome.warnings {
                diagnostics.push(
                    Diagnostic::warning(codes::PRESET, obj.origin.clone(), warning.clone())
                        .with_object(obj.object_ref()),
                );
            }
        }
        Err(refusal) => {
            diagnostics.push(
                Diagnostic::error(
                    codes::PRESET,
                    obj.field_origin(labels),
                    format!("the VirtualMachineInstance would be refused: {refusal}"),
                )
                .with_object(obj.object_ref())
                .with_field(labels),
            );
            return None;
        }
    }
    vmi::omit_empty_resources_and_devices(&mut vmi);
    if stage == Stage::Presets {
        // The preset stage shows what the presets did: no zero values nobody wrote.
        vmi::go_nulls_as_zero_values(&mut vmi);
    }
    // The VM controller's input device, which no preset touches, for a VM that is not
    // expanded (an expanded one has it already).
    if stage == Stage::Full
        && kind == Kind::VirtualMachine
        && let Some(spec) = vmi.get_mut("spec")
    {
        vmi::autoattach_input_device(spec);
    }
    if stage == Stage::Full
        && let Some(spec) = vmi.get_mut("spec")
    {
        vmi::schema_defaults(spec);
    }
    if stage == Stage::Full
        && let Some(spec) = vmi.get_mut("spec")
        && let Err(e) = vmi_defaults::apply(&inputs.profile, spec)
    {
        diagnostics.push(
            Diagnostic::error(codes::BAD_MATCHER, obj.origin.clone(), e.0)
                .with_object(obj.object_ref()),
        );
        return None;
    }
    if stage == Stage::Full {
        // Go writes the fields that are not `omitempty` with their zero values, also in the
        // disks the defaults add (a volume without a name gets a disk named "").
        vmi::write_go_zero_fields(&mut vmi);
        vmi::drop_go_omitted_nulls(&mut vmi);
        // Printed all the same, as the controller makes it; the cluster does not create it.
        // A VMI document is created by a user, the VMI a VM starts by KubeVirt's controller.
        let by_user = kind == Kind::VirtualMachineInstance;
        let mut refusals =
            crate::validate::rules::vm_spec::vmi_refusals(&vmi, by_user, &inputs.profile);
        if by_user && let Some(spec) = obj.value.get("spec") {
            refusals.extend(crate::validate::rules::vm_spec::vmi_document_refusals(spec));
        }
        for (field, message) in refusals {
            // Pointed at the field in the document the VMI comes from (a VM's template).
            let field = if by_user {
                field
            } else {
                template_field(&field)
            };
            diagnostics.push(
                Diagnostic::warning(
                    codes::VM_SPEC,
                    obj.field_origin(diagnostic::first_field(&field)),
                    format!(
                        "KubeVirt's VMI webhook refuses this VirtualMachineInstance: {message}"
                    ),
                )
                .with_object(obj.object_ref())
                .with_field(field),
            );
        }
    }
    if stage == Stage::Full {
        vmi_defaults::set_new_vmi_annotations(&inputs.profile, &mut vmi);
        if kind == Kind::VirtualMachine {
            vmi::receiver_annotation(&obj.value, &mut vmi);
            vmi::controller_metadata(&obj.value, &mut vmi);
        }
        vmi::webhook_finalizer(&mut vmi);
    }
    Some(vmi)
}

/// Whether the VM controller writes the expansion of `vm`'s instancetype and preference into
/// it before it starts it: with `expandAll` always, with `expand` unless the VM's status records
/// a ControllerRevision of either (one taken while the policy was `reference`).
fn expanded_in_place(vm: &Value, policy: ReferencePolicy) -> bool {
    let has_revision = |which: &str| {
        crate::model::path::str_at(vm, &["status", which, "controllerRevisionRef", "name"])
            .is_some_and(|name| !name.is_empty())
    };
    match policy {
        ReferencePolicy::Reference => false,
        ReferencePolicy::ExpandAll => true,
        ReferencePolicy::Expand => {
            !has_revision("instancetypeRef") && !has_revision("preferenceRef")
        }
    }
}

/// The field of a VM's template that becomes `field` of the VMI the VM starts: the VMI's spec
/// and metadata are the template's.
fn template_field(field: &str) -> String {
    if field.is_empty() {
        "spec.template.spec".to_string()
    } else if field.starts_with("spec") || field.starts_with("metadata") {
        format!("spec.template.{field}")
    } else {
        field.to_string()
    }
}

/// Run `vmi`.
pub fn run(args: &VmiArgs) -> Result<Outcome> {
    // A VMI is never printed from a twin (only catalog kinds are), so its documents one after
    // the other are the stream `emit::yaml_stream` would print.
    load_and_build(args, "vmi", |inputs, deferred, out| {
        build_all(inputs, deferred, args.stage, out, |_, vmi| {
            emit::stream_document(&vmi)
        })
    })
}

/// Run `diff`: for each VM, a unified diff from the template's spec to the VMI's spec.
pub fn run_diff(diff: &DiffArgs) -> Result<Outcome> {
    let args = &diff.vmi;
    let color = match diff.color.as_str() {
        "always" => true,
        "never" => false,
        _ => std::io::stdout().is_terminal(),
    };
    load_and_build(args, "diff", |inputs, deferred, out| {
        build_all(inputs, deferred, args.stage, out, |source, vmi| {
            let before = if source.kind() == Kind::VirtualMachine {
                crate::model::path::get(&source.value, &["spec", "template", "spec"])
            } else if crate::kubevirt::pool::is_pool(source) {
                let at = ["spec", "virtualMachineTemplate", "spec", "template", "spec"];
                crate::model::path::get(&source.value, &at)
            } else if crate::kubevirt::replica_set::is_replica_set(source) {
                crate::model::path::get(&source.value, &["spec", "template", "spec"])
            } else {
                source.value.get("spec")
            };
            let before = emit::yaml_document(before.unwrap_or(&Value::Null));
            let after = emit::yaml_document(vmi.get("spec").unwrap_or(&Value::Null));
            let name = source.object_ref().to_string();
            // A VMI document's own spec is no template: the diff is from it as written.
            let from = if source.kind() == Kind::VirtualMachineInstance {
                "spec as written"
            } else {
                "template spec"
            };
            emit::unified_diff(
                &before,
                &after,
                &format!("{name} ({from})"),
                &format!("{name} (VirtualMachineInstance spec)"),
                color,
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::cli::Command;
    use crate::commands::testing::{cases, command, repo};

    /// A refusal of the VMI a VM starts points at the template field it comes from.
    #[test]
    fn vmi_fields_are_found_in_the_template() {
        for (vmi, template) in [
            ("spec.domain.devices", "spec.template.spec.domain.devices"),
            ("spec[0]", "spec.template.spec[0]"),
            ("metadata.labels", "spec.template.metadata.labels"),
            ("", "spec.template.spec"),
            ("nameservers", "nameservers"),
        ] {
            assert_eq!(template_field(vmi), template, "{vmi}");
        }
    }

    fn args(paths: &[PathBuf], extra: &[&str]) -> VmiArgs {
        let flags: Vec<&str> = ["vmi"].into_iter().chain(extra.iter().copied()).collect();
        match command(&flags, paths) {
            Command::Vmi(args) => args,
            _ => unreachable!("a vmi command"),
        }
    }

    /// `vmi` with every input parsed up front: what [`run`] must give.
    fn run_whole(args: &VmiArgs) -> Outcome {
        let inputs = Inputs::load(&args.paths, &args.resolve).expect("the inputs load");
        let mut out = Outcome {
            diagnostics: inputs.diagnostics.clone(),
            ..Outcome::default()
        };
        build_all(
            &inputs,
            &DeferredVms::default(),
            args.stage,
            &mut out,
            |_, vmi| emit::stream_document(&vmi),
        )
        .expect("nothing was left as text");
        diagnostic::sort(&mut out.diagnostics);
        out.exit_from_diagnostics();
        out
    }

    #[test]
    fn building_vms_one_at_a_time_gives_what_building_them_whole_gives() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        // A VM document that does not parse: the run takes the inputs parsed whole.
        let broken = dir.path().join("broken.yaml");
        std::fs::write(
            &broken,
            "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: a}\n\
             spec: {template: [oops\n---\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\n\
             metadata: {name: b}\nspec: {template: {spec: {domain: {devices: {}}}}}\n",
        )
        .expect("written");
        let mut sets: Vec<(Vec<PathBuf>, Vec<&str>)> = vec![
            (vec![repo("testdata/vmi")], vec![]),
            (vec![repo("testdata/vmi")], vec!["--stage", "presets"]),
            (vec![repo("examples")], vec![]),
            (vec![broken], vec![]),
        ];
        sets.extend(
            cases("testdata/conformance/presets")
                .into_iter()
                .map(|case| {
                    (
                        vec![case.join("input.yaml")],
                        vec!["--stage", "presets", "--no-default-catalog"],
                    )
                }),
        );
        let mut printed = 0;
        for (paths, extra) in &sets {
            let args = args(paths, extra);
            let deferring = run(&args).expect("the run ends");
            let whole = run_whole(&args);
            assert_eq!(
                deferring.stdout_parts, whole.stdout_parts,
                "{paths:?} {extra:?}"
            );
            assert_eq!(
                deferring.diagnostics, whole.diagnostics,
                "{paths:?} {extra:?}"
            );
            assert_eq!(deferring.exit, whole.exit, "{paths:?} {extra:?}");
            assert!(whole.stdout.is_empty());
            printed += whole
                .stdout_parts
                .concat()
                .matches("kind: VirtualMachineInstance\n")
                .count();
        }
        assert!(printed > 200, "{printed} VMIs");
    }
}

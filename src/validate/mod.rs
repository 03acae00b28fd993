//! `kvrender validate`: KubeVirt's admission checks plus the repository-level checks a GitOps
//! tree needs, as a registry of rules with stable codes.
//!
//! Each rule lives in its own file under [`rules`] with a [`Rule`] describing it (code, name,
//! one-line summary, default severity) and rustdoc sections *What it checks*, *Why*, *Example*
//! and *Fix*; the README lists them. Some rules are found by the loader (YAML syntax,
//! documents that are not objects) and only documented here.
//!
//! [`validate`] runs the per-object rules in parallel and the cross-object ones once, then
//! [`finish`] applies `--strict` and sorts, so the output is the same at any thread count.

pub mod rules;
pub mod schema;

use rayon::prelude::*;

use crate::diagnostic::{self, Diagnostic, Severity};
use crate::kubevirt::presets::{self, PresetIndex};
use crate::kubevirt::profile::ClusterProfile;
use crate::kubevirt::vmi_defaults::{PCI_TOPOLOGY_ANNOTATION, PCI_TOPOLOGY_VERSION};
use crate::model::path::Fields;
use crate::model::written::CatalogDocs;
use crate::model::{Kind, Object};
use crate::resolve::Index;

/// A rule's identity and documentation summary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The stable code, e.g. `KV010`.
    pub code: &'static str,
    /// A short kebab-case name, e.g. `instancetype-conflict`.
    pub name: &'static str,
    /// What the rule checks, in one sentence.
    pub summary: &'static str,
    /// The severity of its findings without `--strict` (some rules use both).
    pub severity: Severity,
}

/// Every rule, in code order.
pub const RULES: &[Rule] = &[
    rules::yaml_syntax::RULE,
    rules::not_an_object::RULE,
    rules::bad_name::RULE,
    rules::wrong_type::RULE,
    rules::bad_label::RULE,
    rules::yaml_boolean::RULE,
    rules::yaml_folded::RULE,
    rules::instancetype_conflict::RULE,
    rules::reference_not_found::RULE,
    rules::bad_matcher::RULE,
    rules::infer_from_volume::RULE,
    rules::renamed_reference::RULE,
    rules::duplicate::RULE,
    rules::api_version::RULE,
    rules::unknown_field::RULE,
    rules::invalid_spec::RULE,
    rules::deprecated::RULE,
    rules::spread::RULE,
    rules::requirements::RULE,
    rules::vm_spec::RULE,
    rules::pool::RULE,
    rules::replica_set::RULE,
    rules::size_labels::RULE,
    rules::unmet_requirements::RULE,
    rules::unusable_instancetype::RULE,
    rules::empty_value::RULE,
];

/// The rule with this code.
pub fn rule(code: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.code == code)
}

/// What the rules look at besides the object itself.
pub struct Context<'a> {
    /// Resolution over the inputs, `--catalog` and the embedded catalog.
    pub index: &'a Index<'a>,
    /// The cluster profile (defaults applied before preference requirements).
    pub profile: &'a ClusterProfile,
    /// Answers worth keeping for the other objects of the run.
    pub memo: Memo,
    /// The VirtualMachineInstancePresets of the inputs and of `--catalog`: KubeVirt applies
    /// those that select a VirtualMachineInstance before its webhook validates it.
    pub presets: std::sync::Mutex<PresetIndex<'a>>,
    /// The ConfigMaps, Secrets, ... of the inputs, for `KV015`.
    pub referable: rules::renamed_reference::Referable<'a>,
    /// The catalog documents of the inputs: a finding about a rendered object's field is
    /// reported at the line of the one that writes it.
    pub docs: CatalogDocs<'a>,
}

impl<'a> Context<'a> {
    /// The context of a run over `objects` (the presets among them are the ones that count).
    pub fn new(
        index: &'a Index<'a>,
        profile: &'a ClusterProfile,
        objects: impl IntoIterator<Item = &'a Object>,
    ) -> Self {
        Context::with_cluster(index, profile, objects, [])
    }

    /// [`Context::new`], with the presets among `cluster` (the objects of `--catalog`, which
    /// are not checked) selecting VMIs too, unless one of `objects` has the same namespace
    /// and name.
    pub fn with_cluster(
        index: &'a Index<'a>,
        profile: &'a ClusterProfile,
        objects: impl IntoIterator<Item = &'a Object>,
        cluster: impl IntoIterator<Item = &'a Object>,
    ) -> Self {
        let objects: Vec<&'a Object> = objects.into_iter().collect();
        let cluster: Vec<&'a Object> = cluster.into_iter().collect();
        // The presets the cluster creates: a valid name, well-typed fields, and nothing the
        // preset webhook refuses (a missing domain among them).
        let presets: Vec<&Object> =
            presets::with_cluster_presets(objects.iter().copied(), cluster.iter().copied())
                .into_iter()
                .filter(|o| {
                    crate::pipeline::preset_diagnostic(o).is_none()
                        && presets::refusals(o).is_empty()
                })
                .collect();
        Context {
            index,
            profile,
            memo: Memo::default(),
            presets: std::sync::Mutex::new(PresetIndex::new(&presets)),
            // A part of a `--catalog` file writes fields of the objects rendered from it too.
            docs: CatalogDocs::new(objects.iter().chain(&cluster).copied()),
            referable: rules::renamed_reference::Referable::new(objects),
        }
    }
}

/// What the rules of one run work out once for every object that asks the same question.
#[derive(Debug, Default)]
pub struct Memo {
    /// The `KV033` hint by instancetype kind, namespace, series and the preference's
    /// requirements: which size of the series is the smallest that meets them.
    pub(crate) smallest_fit: std::sync::Mutex<std::collections::HashMap<String, String>>,
}

/// Options of a run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Turn every warning into an error.
    pub strict: bool,
}

/// Run every rule on every object of `objects` (the inputs, not the catalogs). The result is
/// unsorted.
pub fn validate(objects: &[Object], ctx: &Context<'_>) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = objects
        .par_iter()
        .flat_map_iter(|obj| check_object(obj, ctx))
        .collect();
    rules::duplicate::check(objects, &mut out);
    rules::unmet_requirements::check(objects, Some(ctx.index), &mut out);
    out
}

/// Run the per-object rules on one object (every rule but the cross-object ones).
pub fn check_object(obj: &Object, ctx: &Context<'_>) -> Vec<Diagnostic> {
    let mut d = Vec::new();
    rules::api_version::check(obj, &mut d);
    rules::bad_name::check(obj, &mut d);
    rules::bad_label::check(obj, &mut d);
    rules::yaml_boolean::check(obj, &mut d);
    rules::yaml_folded::check(obj, &mut d);
    rules::empty_value::check(obj, &mut d);
    rules::unknown_field::check(obj, &mut d);
    rules::wrong_type::check_required(obj, &mut d);
    rules::wrong_type::limits::check(obj, &mut d);
    preset_refusals(obj, &mut d);
    misplaced_preset_exclusion(obj, &mut d);
    // The webhooks and the controller judge the VM as the API server creates it.
    let stored = as_created(obj);
    let obj = stored.as_ref().unwrap_or(obj);
    let admitted = match with_pci_topology_version(obj, ctx) {
        None => rules::admission::check(obj, ctx, &mut d),
        Some(primed) => {
            let mut found = Vec::new();
            let admitted = rules::admission::check(&primed, ctx, &mut found);
            for mut f in found {
                if f.code == diagnostic::codes::CONFLICT
                    && f.field
                        .as_deref()
                        .and_then(|f| f.strip_prefix("annotations."))
                        == Some(PCI_TOPOLOGY_ANNOTATION)
                {
                    // KubeVirt's own words, then why: the VM does not set it, the webhook does.
                    const KUBEVIRT: &str = "conflicts with selected instance type";
                    if let Some(end) = f.message.find(KUBEVIRT) {
                        f.message.truncate(end + KUBEVIRT.len());
                    }
                    f.message.push_str(&format!(
                        " (KubeVirt's VM webhook writes `{PCI_TOPOLOGY_ANNOTATION}: \
                         {PCI_TOPOLOGY_VERSION}` into the template of a VM it creates, and the \
                         instancetype sets it otherwise: the VM is refused when it is created; \
                         take the annotation out of the instancetype)"
                    ));
                }
                d.push(f);
            }
            admitted
        }
    };
    // A VM whose every matcher the `Ignore` policy dropped is judged without them.
    let obj = admitted.unmatched.as_ref().unwrap_or(obj);
    // The VMI the controller creates of a VM, as `kvrender vmi` builds it.
    let build = |obj: &Object| {
        if crate::kubevirt::expand::has_matchers(&obj.value) {
            let vm = crate::pipeline::controller_vm(obj, ctx.index, ctx.profile).ok()?;
            crate::kubevirt::vmi::vmi_for(&obj.with_value(vm))
        } else {
            // Expansion attaches the input device; here the controller does.
            let mut vmi = crate::kubevirt::vmi::vmi_for(obj)?;
            crate::kubevirt::vmi::autoattach_input_device(vmi.get_mut("spec")?);
            Some(vmi)
        }
    };
    let preference = |arch: &str| {
        crate::kubevirt::expand::find_preference_spec(obj, ctx.index)
            .ok()
            .flatten()
            .is_some_and(|p| rules::vm_spec::preference_refusable(&p, arch))
    };
    let spec_findings = |obj: &Object, out: &mut Vec<Diagnostic>| {
        let build = || build(obj);
        let started = if admitted.never_starts {
            rules::vm_spec::Start::Never
        } else {
            rules::vm_spec::Start::Builds {
                vmi: &build,
                preference: &preference,
            }
        };
        rules::vm_spec::check(
            obj,
            ctx.profile,
            admitted.applied.as_ref(),
            admitted.refused,
            started,
            &ctx.presets,
            out,
        );
    };
    match with_data_source_architecture(obj, ctx) {
        None => spec_findings(obj, &mut d),
        Some((arch, mutated)) => {
            // What only the architecture explains says where it comes from.
            let mut own = Vec::new();
            spec_findings(obj, &mut own);
            let mut after = Vec::new();
            spec_findings(&mutated, &mut after);
            for mut f in after {
                if !own.contains(&f) {
                    f.message.push_str(&format!(
                        " (KubeVirt's VM webhook gives the VM the architecture `{arch}` that the \
                         DataSource its DataVolume template clones names in its label \
                         `template.kubevirt.io/architecture`; the manifest alone would pass)"
                    ));
                }
                d.push(f);
            }
        }
    }
    rules::size_labels::check(obj, &mut d);
    rules::unusable_instancetype::check(obj, &mut d);
    rules::renamed_reference::check(obj, ctx, &mut d);
    rules::pool::check(obj, ctx, &mut d);
    rules::replica_set::check(obj, ctx, &mut d);
    d
}

/// A VirtualMachine that names neither an instancetype nor a preference and has no
/// architecture, as KubeVirt's VM mutating webhook leaves it: with the architecture a DataSource
/// its DataVolume templates clone names (for a VM with matchers, the admission step gives its
/// copy of the template that architecture).
fn with_data_source_architecture(
    obj: &Object,
    ctx: &Context<'_>,
) -> Option<(&'static str, Object)> {
    if obj.kind() != Kind::VirtualMachine || crate::kubevirt::expand::has_matchers(&obj.value) {
        return None;
    }
    let arch = crate::kubevirt::infer::architecture_from_data_source(
        &obj.value,
        obj.effective_namespace(),
        ctx.index,
    )?;
    let mut value = obj.value.clone();
    crate::kubevirt::infer::set_architecture(&mut value, arch);
    Some((arch, obj.with_value(value)))
}

/// A VirtualMachine whose instancetype sets the PCI topology version annotation otherwise than
/// KubeVirt's VM mutating webhook writes it into the template of a VM it creates, with the
/// webhook's annotation in place, so that the validating webhook's conflict is found. `None`
/// where what the webhook writes cannot change the judgement (the template has the annotation,
/// the instancetype does not set it or sets it the same, or the template does not support
/// PCIe hotplug).
fn with_pci_topology_version(obj: &Object, ctx: &Context<'_>) -> Option<Object> {
    use crate::model::path;
    if obj.kind() != Kind::VirtualMachine
        || path::get(
            &obj.value,
            &[
                "spec",
                "template",
                "metadata",
                "annotations",
                PCI_TOPOLOGY_ANNOTATION,
            ],
        )
        .is_some()
    {
        return None;
    }
    let instancetype = crate::kubevirt::expand::find_instancetype_spec(obj, ctx.index)
        .ok()
        .flatten()?;
    let set = path::get(&instancetype, &["annotations", PCI_TOPOLOGY_ANNOTATION])?;
    if set.as_str() == Some(PCI_TOPOLOGY_VERSION)
        || !crate::pipeline::pci_topology_written_on_create(obj, ctx.index, ctx.profile)
    {
        return None;
    }
    let mut value = obj.value.clone();
    path::ensure_map(&mut value, &["spec", "template", "metadata", "annotations"])?.insert(
        PCI_TOPOLOGY_ANNOTATION.to_string(),
        serde_json::Value::from(PCI_TOPOLOGY_VERSION),
    );
    Some(obj.with_value(value))
}

/// A VirtualMachine as the API server passes it to the validating webhooks when it is created:
/// without its `status`, which a VirtualMachine changes only through its status subresource.
/// So a VM exported from a cluster (`kubectl get vm -o yaml`), whose status names the
/// ControllerRevisions of its instancetype and preference, is judged against the objects its
/// matchers name, as the webhook judges it, not against revisions that only that cluster holds.
/// `None` when there is nothing to take away (the object is judged as it is).
fn as_created(obj: &Object) -> Option<Object> {
    if obj.kind() != Kind::VirtualMachine {
        return None;
    }
    let status = obj.value.field("status")?;
    let names_revision = ["instancetypeRef", "preferenceRef"]
        .iter()
        .any(|side| status.field(side).is_some());
    if !names_revision {
        return None;
    }
    let mut value = obj.value.clone();
    value.as_object_mut()?.remove("status");
    Some(obj.with_value(value))
}

/// What KubeVirt's VirtualMachineInstancePreset webhook refuses in a well-typed preset (one
/// of the wrong types is `KV004`'s): `KV014` warnings, like the VM and VMI webhooks' `KV034`.
fn preset_refusals(obj: &Object, out: &mut Vec<Diagnostic>) {
    if obj.kind() != Kind::VirtualMachineInstancePreset
        || crate::pipeline::preset_diagnostic(obj).is_some()
    {
        return;
    }
    let refusals = presets::refusals(obj);
    // Taken with a selector that does not parse, it has KubeVirt refuse every VMI of its
    // namespace, whether or not any is among the inputs.
    if refusals.is_empty()
        && let Err(e) = crate::kubevirt::presets::selector::parse(crate::model::path::get(
            &obj.value,
            &["spec", "selector"],
        ))
    {
        out.push(
            Diagnostic::warning(
                crate::diagnostic::codes::PRESET,
                obj.field_origin("spec.selector"),
                format!(
                    "{e}: KubeVirt admits the preset, then its mutating webhook refuses every \
                     VirtualMachineInstance created in namespace \"{}\" while it is there, \
                     whatever its labels (all but those annotated `{}: \"true\"`, which a VM \
                     sets in its template)",
                    obj.effective_namespace(),
                    presets::EXCLUDE_ANNOTATION
                ),
            )
            .with_field("spec.selector")
            .with_object(obj.object_ref()),
        );
    }
    for (field, message) in refusals {
        // `kvrender vmi` leaves out a preset without a domain only (see `is_admitted`).
        let vmi = if presets::is_admitted(obj) {
            "; `kvrender vmi` applies it as given"
        } else {
            ""
        };
        out.push(
            Diagnostic::warning(
                crate::diagnostic::codes::PRESET,
                obj.field_origin(&field),
                format!(
                    "KubeVirt's preset webhook refuses the preset: {message} (it is never \
                     created, so it selects no VirtualMachineInstance{vmi})"
                ),
            )
            .with_field(field)
            .with_object(obj.object_ref()),
        );
    }
    // Taken, but every VMI it is applied to is then refused for the annotation it leaves.
    let name = obj.name();
    let (key, errors) = presets::applied_annotation(name);
    if !errors.is_empty() {
        out.push(
            Diagnostic::warning(
                crate::diagnostic::codes::PRESET,
                obj.field_origin("metadata.name"),
                format!(
                    "the API server refuses every VirtualMachineInstance this preset is applied \
                     to: it annotates it with `{key}`, and the key's {} (the name is {} \
                     characters)",
                    errors.join(", "),
                    name.len()
                ),
            )
            .with_field("metadata.name".to_string())
            .with_object(obj.object_ref()),
        );
    }
}

/// A VM that carries the presets' exclusion annotation on its own metadata, where KubeVirt
/// never reads it: the VMI it starts takes the template's annotations, not the VM's.
fn misplaced_preset_exclusion(obj: &Object, out: &mut Vec<Diagnostic>) {
    use crate::model::path;
    if obj.kind() != Kind::VirtualMachine {
        return;
    }
    let key = presets::EXCLUDE_ANNOTATION;
    let on_vm = path::get(&obj.value, &["metadata", "annotations", key]).is_some();
    let on_template = path::get(
        &obj.value,
        &["spec", "template", "metadata", "annotations", key],
    )
    .is_some();
    if on_vm && !on_template {
        let field = format!("metadata.annotations[\"{key}\"]");
        out.push(
            Diagnostic::warning(
                crate::diagnostic::codes::PRESET,
                obj.field_origin(&field),
                format!(
                    "`{key}` on the VirtualMachine's own metadata has no effect: KubeVirt reads \
                     it on the VirtualMachineInstance, which takes the annotations of \
                     `spec.template.metadata`; move it there to keep the presets off the VM"
                ),
            )
            .with_field(field)
            .with_object(obj.object_ref()),
        );
    }
}

/// Apply the options and sort into printing order.
pub fn finish(mut diags: Vec<Diagnostic>, options: Options) -> Vec<Diagnostic> {
    if options.strict {
        for d in &mut diags {
            if d.severity == Severity::Warning {
                d.severity = Severity::Error;
            }
        }
    }
    diagnostic::sort(&mut diags);
    diags
}

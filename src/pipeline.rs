//! The stages shared by every door into kvrender (CLI commands and the KRM function): expanding
//! the VirtualMachines among a set of objects and turning failures into diagnostics.

use rayon::prelude::*;
use serde_json::Value;

use crate::diagnostic::{Diagnostic, codes};
use crate::kubevirt::conflict::Conflict;
use crate::kubevirt::expand::{self, ExpandError, Stage};
use crate::kubevirt::infer::{self, InferError, Inference, Inferred};
use crate::kubevirt::profile::ClusterProfile;
use crate::kubevirt::typecheck::{self, WrongType};
use crate::model::names::{is_dns_label, is_dns_subdomain};
use crate::model::path::Fields;
use crate::model::{Kind, Object};
use crate::resolve::{Index, Lookups};

/// The diagnostic for a VM that could not be expanded.
pub fn expand_diagnostic(vm: &Object, err: &ExpandError) -> Diagnostic {
    let (code, field) = match err {
        ExpandError::NotFound { field, .. } => {
            (codes::REFERENCE_NOT_FOUND, Some((*field).to_string()))
        }
        ExpandError::Conflicts(c) => (
            codes::CONFLICT,
            Some(
                c.iter()
                    .map(|c| c.path.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        ),
        ExpandError::SpreadByZero => (codes::SPREAD, Some("spec.preference".to_string())),
        ExpandError::FeaturesWithoutCpu => {
            (codes::INVALID_SPEC, Some("spec.preference".to_string()))
        }
        ExpandError::Other { field, .. } => (codes::BAD_MATCHER, field.clone()),
    };
    // Point at the line of the (first) field concerned.
    let line_field = match err {
        ExpandError::Conflicts(c) => c.first().map(Conflict::vm_field),
        ExpandError::NotFound { field, .. } => Some(format!("{field}.name")),
        ExpandError::SpreadByZero | ExpandError::FeaturesWithoutCpu => {
            Some("spec.preference.name".to_string())
        }
        ExpandError::Other { field, .. } => field.clone(),
    };
    let origin = line_field.map_or_else(|| vm.origin.clone(), |f| vm.field_origin(&f));
    let mut message = err.to_string();
    if let ExpandError::Conflicts(c) = err {
        message.push_str(&conflict_hint(vm, c.len()));
    }
    let mut d = Diagnostic::error(code, origin, message).with_object(vm.object_ref());
    d.field = field;
    if let Some(elsewhere) = err.elsewhere() {
        d = d.with_related(elsewhere.clone());
    }
    d
}

/// [`expand_diagnostic`], a name not found that is near no other said where it was looked
/// for, as `validate` says it (the inputs, `--catalog`, the embedded catalog of `index` if it
/// is on). A near name, or the same name in the other scope, is the more useful hint alone.
fn expand_failure(vm: &Object, err: &ExpandError, index: &Index<'_>) -> Diagnostic {
    let mut d = expand_diagnostic(vm, err);
    if let ExpandError::NotFound {
        resource,
        name,
        namespace,
        hint: None,
        held_unserved: false,
        ..
    } = err
    {
        d.message = crate::validate::rules::admission::not_found_where(
            resource,
            name,
            namespace.as_deref(),
            index.has_fallback(),
            true,
        );
    }
    d
}

/// What to do about a field the instancetype owns, after KubeVirt's conflict message: the
/// same words from every command that reports it, for one field or for `fields` of them.
pub fn conflict_hint(vm: &Object, fields: usize) -> String {
    let them = if fields > 1 { "them" } else { "it" };
    crate::kubevirt::expand::instancetype_named(vm).map_or_else(String::new, |(_, name)| {
        format!(
            " (the instancetype \"{name}\" sets {them}: remove {them} from the VM, or choose \
             an instancetype that fits what the VM needs)"
        )
    })
}

/// The `KV003` finding for an object whose `metadata.name` is missing or is not a name the API
/// server accepts for KubeVirt's kinds (a DNS subdomain: at most 253 characters, lowercase
/// letters, digits, `-` and `.`, each `.`-separated part starting and ending with a letter or
/// digit). `expand`, `build` and `validate` report the same finding, so that a tree `validate`
/// passes does not fail to build.
pub fn name_diagnostic(obj: &Object) -> Option<Diagnostic> {
    let bad_name = |message: String| {
        Diagnostic::error(codes::BAD_NAME, obj.field_origin("metadata.name"), message)
            .with_object(obj.object_ref())
            .with_field("metadata.name")
    };
    let name = obj.name();
    if name.is_empty() {
        let given = obj.value.get("metadata").and_then(|m| m.get("name"));
        if let Some(v) = given.filter(|v| !v.is_null() && !v.is_string()) {
            // `name: n` or `name: 0123`: YAML read the unquoted name as another type.
            return Some(bad_name(format!(
                "`metadata.name` must be a string, not {}; quote the name",
                crate::validate::schema::found(v)
            )));
        }
        let generated = has_generate_name(obj);
        return Some(bad_name(format!(
            "the {} has no `metadata.name`{}",
            obj.kind_str(),
            if generated {
                ": a `generateName` serves `kubectl create` only; `kubectl apply`, kustomize \
                 and kvrender need the name"
            } else {
                ""
            }
        )));
    }
    if let Some(d) = namespace_diagnostic(obj) {
        return Some(d);
    }
    let why = check_name(name).err()?;
    // Shown quoted, escaped and shortened: the name may hold `/`, control characters or
    // hundreds of characters.
    let shown = format!("{:?}", crate::diagnostic::shortened(name));
    Some(bad_name(format!(
        "{shown} is not a valid Kubernetes name: {why}"
    )))
}

/// Whether `obj` has a non-empty `metadata.generateName`, for `kubectl create` to name it.
pub fn has_generate_name(obj: &Object) -> bool {
    obj.value
        .get("metadata")
        .and_then(|m| m.get("generateName"))
        .and_then(Value::as_str)
        .is_some_and(|g| !g.is_empty())
}

/// A namespaced KubeVirt object's namespace, which must be a DNS label. The API server clears
/// the namespace of a cluster-scoped object, so it does not matter there.
fn namespace_diagnostic(obj: &Object) -> Option<Diagnostic> {
    let namespace = obj
        .namespace()
        .filter(|_| obj.kind() != Kind::Other && obj.kind().is_namespaced())?;
    if is_dns_label(namespace.as_bytes()) {
        return None;
    }
    let shown = format!("{:?}", crate::diagnostic::shortened(namespace));
    Some(
        Diagnostic::error(
            codes::BAD_NAME,
            obj.field_origin("metadata.namespace"),
            format!(
                "namespace {shown} is not a valid Kubernetes namespace: at most 63 lowercase \
             letters, digits and `-`, starting and ending with a letter or digit"
            ),
        )
        .with_object(obj.object_ref())
        .with_field("metadata.namespace"),
    )
}

/// The checks `expand` makes of a VM itself before anything is applied: a valid name and
/// fields of the right type (for a VM with no instancetype or preference to expand).
pub fn vm_diagnostic(vm: &Object) -> Option<Diagnostic> {
    name_diagnostic(vm)
        .or_else(|| wrong_type_diagnostic(vm, &typecheck::virtual_machine(&vm.value), ""))
}

/// What stops a VirtualMachineInstance document before anything is applied to it: the checks
/// of [`vm_diagnostic`], at the VMI's own paths.
pub fn vmi_diagnostic(vmi: &Object) -> Option<Diagnostic> {
    name_diagnostic(vmi).or_else(|| {
        wrong_type_diagnostic(
            vmi,
            &typecheck::virtual_machine_instance(&vmi.value),
            ": the API server refuses the VirtualMachineInstance",
        )
    })
}

/// A VirtualMachineInstancePreset the API server refuses, for its name or a field of the
/// wrong type: it is never created, so it selects nothing.
pub fn preset_diagnostic(preset: &Object) -> Option<Diagnostic> {
    const NOTE: &str =
        ": the API server refuses the preset, so it selects no VirtualMachineInstance";
    if let Some(mut d) = name_diagnostic(preset) {
        d.message.push_str(NOTE);
        return Some(d);
    }
    wrong_type_diagnostic(preset, &typecheck::preset(&preset.value), NOTE)
}

/// Check what expansion needs of a VM before it runs: a valid name, and fields of the right
/// type in the VM and in the instancetype and preference it names (looked up through
/// `lookups`, so that expansion finds them there).
fn precheck<'a, 'k>(
    vm: &'k Object,
    index: &Index<'a>,
    lookups: &mut Lookups<'a, 'k>,
) -> Option<Diagnostic> {
    if let Some(d) = name_diagnostic(vm) {
        return Some(d);
    }
    let wrong = typecheck::virtual_machine(&vm.value);
    if let Some(d) = wrong_type_diagnostic(vm, &wrong, "") {
        return Some(d);
    }
    for (side, namespaced) in [
        ("instancetype", Kind::Instancetype),
        ("preference", Kind::Preference),
    ] {
        let Some(obj) = referenced(vm, index, lookups, side, namespaced) else {
            continue;
        };
        let Some(spec) = obj.value.field("spec") else {
            continue;
        };
        // Many VMs share an instancetype or preference: a well-typed one is checked once.
        let well_typed = if side == "instancetype" {
            instancetype_well_typed
        } else {
            preference_well_typed
        };
        if index.passes_once(obj, well_typed) {
            continue;
        }
        let wrong = if side == "instancetype" {
            typecheck::instancetype_spec(spec)
        } else {
            typecheck::preference_spec(spec)
        };
        if !wrong.is_empty() {
            let note = format!(" (the VirtualMachines using this {side} are not expanded)");
            return wrong_type_diagnostic(obj, &wrong, &note);
        }
    }
    None
}

/// The instancetype and the preference `vm` names, each when found, whose `spec` has a field
/// of the wrong type where the rules read it: what expansion refuses to use (see `precheck`),
/// and what admission checks cannot be run against.
pub fn ill_typed_references<'a>(vm: &Object, index: &Index<'a>) -> Vec<&'a Object> {
    let mut lookups = Lookups::default();
    let mut found = Vec::new();
    for (side, namespaced, well_typed) in [
        (
            "instancetype",
            Kind::Instancetype,
            instancetype_well_typed as fn(&Object) -> bool,
        ),
        ("preference", Kind::Preference, preference_well_typed),
    ] {
        if let Some(obj) = referenced(vm, index, &mut lookups, side, namespaced)
            && !index.passes_once(obj, well_typed)
        {
            found.push(obj);
        }
    }
    found
}

/// Whether the `spec` of an instancetype has no wrongly typed field.
fn instancetype_well_typed(obj: &Object) -> bool {
    obj.value
        .field("spec")
        .is_none_or(|spec| typecheck::instancetype_spec(spec).is_empty())
}

/// Whether the `spec` of a preference has no wrongly typed field.
fn preference_well_typed(obj: &Object) -> bool {
    obj.value
        .field("spec")
        .is_none_or(|spec| typecheck::preference_spec(spec).is_empty())
}

/// Why `name` is not a DNS-1123 subdomain (what Kubernetes accepts as an object name), if not.
pub(crate) fn check_name(name: &str) -> Result<(), &'static str> {
    // Every valid name takes this path; only an invalid one is looked at again to say why.
    if is_dns_subdomain(name) {
        return Ok(());
    }
    name_problem(name)
}

/// What is wrong with `name` as a DNS subdomain, found character by character.
fn name_problem(name: &str) -> Result<(), &'static str> {
    if name.len() > 253 {
        return Err("it is longer than 253 characters");
    }
    if let Some(c) = name
        .chars()
        .find(|c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '-' || *c == '.'))
    {
        return Err(match c {
            '/' => "it contains `/`",
            '\0' => "it contains a NUL character",
            c if c.is_ascii_uppercase() => "it contains an uppercase letter",
            _ => "only lowercase letters, digits, `-` and `.` are allowed",
        });
    }
    if name
        .as_bytes()
        .split(|b| *b == b'.')
        .any(|label| label.is_empty() || label.starts_with(b"-") || label.ends_with(b"-"))
    {
        return Err(
            "each `.`-separated part must be non-empty and start and end with a letter or digit",
        );
    }
    Ok(())
}

/// The instancetype or preference object a VM's matcher names by `name` (and `kind`), when the
/// index holds it. Revisions and inference are left to expansion.
fn referenced<'a, 'k>(
    vm: &'k Object,
    index: &Index<'a>,
    lookups: &mut Lookups<'a, 'k>,
    side: &str,
    namespaced: Kind,
) -> Option<&'a Object> {
    let matcher = vm.value.field("spec")?.field(side)?;
    let name = matcher.field("name")?.as_str()?;
    let kind = matcher.field("kind").and_then(Value::as_str).unwrap_or("");
    if names_kind(kind, namespaced) {
        index.get_remembered(lookups, namespaced, vm.effective_namespace(), name)
    } else {
        let cluster = match namespaced {
            Kind::Instancetype => Kind::ClusterInstancetype,
            _ => Kind::ClusterPreference,
        };
        index.get_remembered(lookups, cluster, "", name)
    }
}

/// Whether a matcher's `kind` names `kind`, singular or plural, in any case (as Go lowers it).
fn names_kind(matcher_kind: &str, kind: Kind) -> bool {
    let singular = match kind {
        Kind::Instancetype => "virtualmachineinstancetype",
        Kind::ClusterInstancetype => "virtualmachineclusterinstancetype",
        Kind::Preference => "virtualmachinepreference",
        Kind::ClusterPreference => "virtualmachineclusterpreference",
        _ => return false,
    };
    crate::kubevirt::go_lower_is(matcher_kind, singular)
        || matcher_kind
            .strip_suffix(['s', 'S'])
            .is_some_and(|k| crate::kubevirt::go_lower_is(k, singular))
}

/// A `WRONG_TYPE` error for the first of `wrong` (fields of `obj`), mentioning how many more.
fn wrong_type_diagnostic(obj: &Object, wrong: &[WrongType], note: &str) -> Option<Diagnostic> {
    let first = wrong.first()?;
    let mut message = format!("must be {}, not {}", first.expected, first.found);
    if wrong.len() > 1 {
        message.push_str(&format!(
            " (and {} more wrongly typed field{})",
            wrong.len() - 1,
            if wrong.len() == 2 { "" } else { "s" }
        ));
    }
    message.push_str(note);
    Some(
        Diagnostic::error(codes::WRONG_TYPE, obj.field_origin(&first.field), message)
            .with_object(obj.object_ref())
            .with_field(first.field.clone()),
    )
}

/// Expand one VirtualMachine, as a value or a diagnostic.
pub fn expand_vm(
    vm: &Object,
    index: &Index<'_>,
    profile: &ClusterProfile,
) -> Result<Value, Diagnostic> {
    expand_vm_to(vm, index, profile, Stage::Expanded)
}

/// Whether KubeVirt's VM mutating webhook writes the PCI topology version
/// (`kubevirt.io/pci-topology-version`) into the template of `vm` when it is created: where the
/// template, with the architecture and machine type the webhook gives it (its own, else its
/// preference's, else the one a DataSource names, else the cluster's), supports PCIe hotplug. A
/// VM whose preference is inferred gets it from the VMI webhook only (the preference that says
/// its architecture is not known before inference).
pub fn pci_topology_written_on_create(
    vm: &Object,
    index: &Index<'_>,
    profile: &ClusterProfile,
) -> bool {
    use crate::model::path;
    if infer::uses_inference(&vm.value) {
        return false;
    }
    let preference = expand::find_preference_spec(vm, index).ok().flatten();
    let preferred = |field: &[&str]| {
        preference
            .as_deref()
            .and_then(|p| path::str_at(p, field))
            .filter(|v| !v.is_empty())
    };
    let template_spec = path::get(&vm.value, &["spec", "template", "spec"]);
    let written = |field: &[&str]| {
        template_spec
            .and_then(|s| path::str_at(s, field))
            .filter(|v| !v.is_empty())
    };
    let arch = written(&["architecture"])
        .or_else(|| {
            preference
                .as_deref()
                .and_then(infer::preferred_architecture)
        })
        .map(str::to_string)
        .or_else(|| {
            infer::architecture_from_data_source(&vm.value, vm.effective_namespace(), index)
                .map(str::to_string)
        })
        .unwrap_or_else(|| profile.default_architecture.clone());
    let machine = written(&["domain", "machine", "type"])
        .or_else(|| preferred(&["machine", "preferredMachineType"]))
        .unwrap_or_else(|| profile.machine_type_for(&arch));
    crate::kubevirt::vmi_defaults::supports_pcie_hotplug(&arch, Some(machine))
}

/// The VM as the VM controller has it when it creates the VirtualMachineInstance: as
/// [`expand_vm`] without the VMI spec defaults, which the VMI webhook applies after the presets.
pub fn controller_vm(
    vm: &Object,
    index: &Index<'_>,
    profile: &ClusterProfile,
) -> Result<Value, Diagnostic> {
    expand_vm_to(vm, index, profile, Stage::Controller)
}

fn expand_vm_to(
    vm: &Object,
    index: &Index<'_>,
    profile: &ClusterProfile,
    stage: Stage,
) -> Result<Value, Diagnostic> {
    expand_vm_admitted(vm, index, profile, stage, stage == Stage::Controller)
}

/// As [`expand_vm_to`]; `admitted` when the VM went through KubeVirt's VM webhook first, whose
/// instancetype step gives it the preference's architecture and whose next step a
/// DataSource's.
fn expand_vm_admitted(
    vm: &Object,
    index: &Index<'_>,
    profile: &ClusterProfile,
    stage: Stage,
    admitted: bool,
) -> Result<Value, Diagnostic> {
    let mut lookups = Lookups::default();
    if let Some(d) = precheck(vm, index, &mut lookups) {
        return Err(d);
    }
    if !infer::uses_inference(&vm.value) {
        if admitted
            && let Some(arch) =
                infer::architecture_from_data_source(&vm.value, vm.effective_namespace(), index)
            && expand::find_preference_spec(vm, index)
                .ok()
                .flatten()
                .is_none_or(|p| infer::preferred_architecture(&p).is_none())
        {
            let mut value = vm.value.clone();
            infer::set_architecture(&mut value, arch);
            let vm = vm.with_value(value);
            return expand::expand_remembered(&vm, index, profile, stage, &mut lookups)
                .map_err(|e| expand_failure(&vm, &e, index));
        }
        return expand::expand_remembered(vm, index, profile, stage, &mut lookups)
            .map_err(|e| expand_failure(vm, &e, index));
    }
    let mut inferred = infer::infer_and_mutate(vm, index).map_err(|e| infer_diagnostic(vm, &e))?;
    if admitted
        && let Some(arch) =
            infer::architecture_from_data_source(&inferred.vm, vm.effective_namespace(), index)
    {
        infer::set_architecture(&mut inferred.vm, arch);
    }
    let mutated = Object::new(inferred.vm.clone(), vm.origin.clone());
    expand::expand_remembered(&mutated, index, profile, stage, &mut Lookups::default())
        .map(|mut expanded| {
            without_added_zeros(
                &mut expanded,
                &inferred.vm,
                &["spec", "dataVolumeTemplates"],
            );
            // Nor the template's zero values Go writes where the VM is silent (an input's
            // `type: ""`, an empty disk's `capacity: "0"`).
            if let Some(template) =
                crate::model::path::get_mut(&mut expanded, &["spec", "template"])
            {
                crate::kubevirt::vmi::drop_unwritten_go_zero_fields(
                    template,
                    crate::model::path::get(&vm.value, &["spec", "template"]),
                );
            }
            expanded
        })
        .map_err(|e| {
            let mut d = expand_failure(&mutated, &e, index);
            // Advice about an inferred matcher is advice about the labels it came from.
            let field = d.field.as_deref().unwrap_or_default();
            for (side, what) in [
                (infer::Side::Instancetype, &inferred.instancetype),
                (infer::Side::Preference, &inferred.preference),
            ] {
                if let Some(Inference::Inferred { object, .. }) = what
                    && field.starts_with(&format!("spec.{}", side.key()))
                {
                    let on = object
                        .as_ref()
                        .map_or_else(|| "the volume".to_string(), ToString::to_string);
                    d.message = infer::kind_hint_as_label(&d.message, side.kind_label(), &on);
                }
            }
            let notes = inference_notes(&inferred);
            if !notes.is_empty() {
                d.message = format!("{} ({notes})", d.message);
            }
            d
        })
}

/// Take out of `out`, below `path`, every field that `input` does not have there and whose value
/// is empty (`""`, `{}`, `[]`, `null`, `false` or 0): the fields Go writes whatever their value,
/// which KubeVirt's answer for a VM its webhook took through inference carries without meaning
/// (see `data_volume_templates_as_go_writes_them` in the expansion). Nothing below `path` but
/// what Go writes is added where the input is silent: the webhook only adds a storage class,
/// which is never empty.
fn without_added_zeros(out: &mut Value, input: &Value, path: &[&str]) {
    fn strip(out: &mut Value, input: Option<&Value>) {
        match out {
            Value::Object(fields) => {
                let had = input.and_then(Value::as_object);
                fields.retain(|k, v| {
                    had.is_some_and(|h| h.contains_key(k)) || !crate::model::path::is_zero(Some(v))
                });
                for (k, v) in fields.iter_mut() {
                    strip(v, had.and_then(|h| h.get(k)));
                }
            }
            Value::Array(items) => {
                let had = input.and_then(Value::as_array);
                for (i, v) in items.iter_mut().enumerate() {
                    strip(v, had.and_then(|h| h.get(i)));
                }
            }
            _ => {}
        }
    }
    if let Some(out) = crate::model::path::get_mut(out, path) {
        strip(out, crate::model::path::get(input, path));
    }
}

/// As [`expand_vm`], for a VM the caller drops afterwards: its tree becomes the result instead
/// of being copied.
pub fn expand_vm_owned(
    vm: Object,
    index: &Index<'_>,
    profile: &ClusterProfile,
) -> Result<Value, Diagnostic> {
    expand_owned(vm, index, profile, false)
}

/// As [`expand_vm_owned`], for a VM whose expansion goes to the cluster in its place (`build`,
/// the KRM function), with what KubeVirt's VM webhook writes into a VM it admits, ahead of any
/// expansion: the DataVolume templates without a storage class get the preference's
/// `preferredStorageClassName`. `expand-spec` leaves that out, as `expand` does; but the
/// expanded VM names no preference any more, so the webhook could not add it when the VM is
/// applied, and its disks would be made in the cluster's default class instead. So does the
/// architecture a DataSource's label names, which the webhook gives a VM whose template and
/// preference have none: once the expansion has written the cluster's default there, the
/// webhook would leave it. With both, the result is the VM a cluster whose KubeVirt sets
/// `instancetype.referencePolicy: expand` stores. A VM without matchers is left to the webhook.
pub fn expand_vm_owned_to_apply(
    vm: Object,
    index: &Index<'_>,
    profile: &ClusterProfile,
) -> Result<Value, Diagnostic> {
    expand_owned(vm, index, profile, true)
}

/// As [`expand_vm_owned_to_apply`], for a VM the caller keeps.
pub fn expand_vm_to_apply(
    vm: &Object,
    index: &Index<'_>,
    profile: &ClusterProfile,
) -> Result<Value, Diagnostic> {
    if infer::uses_inference(&vm.value) {
        return expand_vm_admitted(vm, index, profile, Stage::Expanded, true);
    }
    expand_owned(vm.clone(), index, profile, true)
}

fn expand_owned(
    mut vm: Object,
    index: &Index<'_>,
    profile: &ClusterProfile,
    admitted: bool,
) -> Result<Value, Diagnostic> {
    if infer::uses_inference(&vm.value) {
        return expand_vm_admitted(&vm, index, profile, Stage::Expanded, admitted);
    }
    let found = {
        let mut lookups = Lookups::default();
        if let Some(d) = precheck(&vm, index, &mut lookups) {
            return Err(d);
        }
        expand::find(&vm, index, &mut lookups)
    };
    let found = found.map_err(|e| expand_failure(&vm, &e, index))?;
    if admitted && found.has_matchers() {
        let preference = found.preference();
        if let Some(preference) = preference {
            infer::mutate_data_volume_templates(&mut vm.value, preference);
        }
        // The webhook's next step, as for the VM the controller starts (`expand_vm_to`).
        if preference.is_none_or(|p| infer::preferred_architecture(p).is_none())
            && let Some(arch) =
                infer::architecture_from_data_source(&vm.value, vm.effective_namespace(), index)
        {
            infer::set_architecture(&mut vm.value, arch);
        }
    }
    expand::expand_found(&mut vm, found, profile).map_err(|e| expand_failure(&vm, &e, index))
}

/// The diagnostic for a VM the instancetype step of the mutating webhook refuses (matcher
/// validation or `inferFromVolume`). The message keeps KubeVirt's text, which names the missing
/// object, label, volume or invalid value, and adds the volume and the object looked at.
pub fn infer_diagnostic(vm: &Object, err: &InferError) -> Diagnostic {
    let mut d = Diagnostic::error(codes::INFERENCE, vm.origin.clone(), String::new())
        .with_object(vm.object_ref());
    if err.causes.is_empty() {
        let side = err.side.map_or("matchers", |s| s.key());
        let mut msg = match &err.volume {
            Some(v) => format!("cannot infer the {side} from volume `{v}`: {}", err.message),
            None => format!("cannot infer the {side}: {}", err.message),
        };
        if let Some(obj) = &err.object {
            match obj.export_command() {
                Some(cmd) if err.message.ends_with(" not found") => msg.push_str(&format!(
                    " (looked at {obj}; if the cluster holds it, save `{cmd}` to a file and \
                     pass it with `--catalog`)"
                )),
                None if obj.in_no_namespace() && err.message.ends_with(" not found") => msg
                    .push_str(&format!(
                        " (looked at {obj}: {})",
                        infer::Looked::NO_NAMESPACE
                    )),
                _ => msg.push_str(&format!(" (looked at {obj})")),
            }
        }
        d.message = msg;
        if let Some(s) = err.side {
            d.field = Some(format!("spec.{}.inferFromVolume", s.key()));
        }
    } else {
        d.message = format!("the matchers are invalid: {}", err.message);
        d.field = Some(
            err.causes
                .iter()
                .map(|c| c.field.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        );
    }
    d.point_at_field(|field| vm.field_origin(field));
    d
}

/// What inference did, in words, for messages about the expansion that follows.
fn inference_notes(inferred: &Inferred) -> String {
    let mut notes = Vec::new();
    for (side, what) in [
        ("instancetype", &inferred.instancetype),
        ("preference", &inferred.preference),
    ] {
        match what {
            Some(Inference::Inferred { volume, object, .. }) => {
                let mut n = format!("{side} inferred from volume `{volume}`");
                if let Some(o) = object {
                    n.push_str(&format!(" via {o}"));
                }
                notes.push(n);
            }
            Some(Inference::Cleared { volume, .. }) => {
                notes.push(format!(
                    "{side} matcher dropped: nothing to infer from volume `{volume}`"
                ));
            }
            None => {}
        }
    }
    notes.join("; ")
}

/// Expand every VirtualMachine among `objects` in parallel. The result has one entry per object,
/// in order: `None` for objects that are not VirtualMachines.
pub fn expand_all(
    objects: &[Object],
    index: &Index<'_>,
    profile: &ClusterProfile,
) -> Vec<Option<Result<Value, Diagnostic>>> {
    objects
        .par_iter()
        .map(|o| (o.kind() == Kind::VirtualMachine).then(|| expand_vm(o, index, profile)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-pass check and the character-by-character one agree on every name of up to five
    /// characters drawn from letters, digits, `-`, `.` and a few invalid characters.
    #[test]
    fn the_quick_name_check_agrees_with_the_thorough_one() {
        let alphabet = ['a', '0', '-', '.', 'A', '/', '\0', 'é'];
        let mut names = vec![String::new()];
        let mut checked = 0;
        for _ in 0..5 {
            let mut longer = Vec::new();
            for name in &names {
                for c in alphabet {
                    let mut n = name.clone();
                    n.push(c);
                    longer.push(n);
                }
            }
            for name in &longer {
                assert_eq!(
                    is_dns_subdomain(name),
                    name_problem(name).is_ok(),
                    "{name:?}"
                );
                checked += 1;
            }
            names = longer;
        }
        assert!(checked > 30_000);
        assert!(is_dns_subdomain(&"a".repeat(253)));
        assert!(!is_dns_subdomain(&"a".repeat(254)));
        assert!(name_problem(&"a".repeat(254)).is_err());
        assert!(!is_dns_subdomain(""));
    }
}

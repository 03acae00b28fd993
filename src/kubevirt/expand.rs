//! Offline `expand-spec`: a VirtualMachine plus its instancetype and preference, merged as
//! KubeVirt merges them.
//!
//! Mirrors `pkg/instancetype/expand/expand.go` (KubeVirt d923fdb815) step by step:
//!
//! 1. a VM that references neither an instancetype nor a preference is returned unchanged;
//! 2. find the instancetype, then the preference (`find/spec.go`, `preference/find/spec.go`):
//!    the first failure is the result;
//! 3. add a disk for every volume without one, and the default pod network;
//! 4. apply the instancetype (collecting every conflict) and, without conflicts, the preference;
//! 5. apply the cluster defaults;
//! 6. drop the matchers and the status references.

use std::borrow::Cow;
use std::sync::LazyLock;

use serde_json::Value;

use crate::kubevirt::conflict::{self, Conflict};
use crate::kubevirt::go_shape::{GoTime, GoZero, Shape};
use crate::kubevirt::go_text::{path_segment_problems, refused_get};
use crate::kubevirt::profile::ClusterProfile;
use crate::kubevirt::{defaults, instancetype_apply, preference_apply, revision, vmi};
use crate::model::path::Fields;
use crate::model::{Kind, Object, path};
use crate::resolve::{Index, Lookups};

/// Why a VirtualMachine could not be expanded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    /// A referenced object does not exist (Kubernetes' NotFound), with a hint at what may have
    /// been meant, when something near it exists.
    #[error("{resource} \"{name}\" not found{}", hint_suffix(.hint.as_deref()))]
    NotFound {
        /// The plural resource, e.g. `virtualmachineclusterinstancetypes.instancetype.kubevirt.io`.
        resource: &'static str,
        /// The missing object's name.
        name: String,
        /// The namespace it was looked up in (for namespaced kinds).
        namespace: Option<String>,
        /// The matcher field that names it.
        field: &'static str,
        /// What may have been meant: a similar name of the same kind (`did you mean "x"?`), or
        /// the same name in the other scope (`a VirtualMachinePreference of that name exists:
        /// set ...`).
        hint: Option<String>,
        /// The inputs hold an object of that kind, namespace and name, at an apiVersion
        /// KubeVirt does not serve (the hint says so): not found in the cluster, but not
        /// missing from the inputs.
        held_unserved: bool,
        /// Where an object of that kind and name in another namespace is defined, when the
        /// inputs hold one (the hint names its namespace).
        elsewhere: Option<crate::origin::Origin>,
    },
    /// The VM sets fields the instancetype owns.
    #[error("{}", conflict::message(.0))]
    Conflicts(Vec<Conflict>),
    /// The preference spreads the vCPUs with a ratio of 0: KubeVirt's expansion divides by it
    /// and fails.
    #[error(
        "the preference spreads the vCPUs with a ratio of 0: KubeVirt divides by it, and its \
         expansion fails"
    )]
    SpreadByZero,
    /// The preference prefers CPU features and the VM, which has no instancetype, sets no
    /// `domain.cpu`: KubeVirt's preference step reads the missing `cpu` and fails.
    #[error(
        "the preference's `preferredCPUFeatures` need `spec.template.spec.domain.cpu`, which the \
         VM does not set and no instancetype creates: KubeVirt reads the missing `cpu` when it \
         applies the preference, and fails"
    )]
    FeaturesWithoutCpu,
    /// Any other failure, with KubeVirt's message where there is one.
    #[error("{message}")]
    Other {
        /// The message.
        message: String,
        /// The field concerned.
        field: Option<String>,
    },
}

/// `; <hint>` after a NotFound message, when there is a hint.
pub fn hint_suffix(hint: Option<&str>) -> String {
    hint.map_or_else(String::new, |h| format!("; {h}"))
}

/// What a VM naming a missing `kind` object `name` may have meant: an object of that kind with
/// a similar name, or else one of that name in the other scope (a namespaced preference where a
/// cluster-scoped one was asked for, say); or why the object of that name is not found (its
/// apiVersion). Only asked once a lookup has failed.
fn not_found_hint(index: &Index<'_>, kind: Kind, namespace: &str, name: &str) -> Option<String> {
    // The object is there, of an apiVersion the API server does not have for its kind.
    if let Some(unserved) = index.unserved(kind, namespace, name) {
        return Some(format!(
            "{} (at {}) is of `{}`, an apiVersion KubeVirt does not serve, so the cluster cannot \
             hold it; give it `apiVersion: {}`",
            unserved.object_ref(),
            unserved.origin,
            unserved.api_version(),
            crate::validate::rules::api_version::INSTANCETYPE_VERSION,
        ));
    }
    // The exact name of the other scope's kind is the likelier intent than a near name.
    let other = match kind {
        Kind::Instancetype => Some(Kind::ClusterInstancetype),
        Kind::ClusterInstancetype => Some(Kind::Instancetype),
        Kind::Preference => Some(Kind::ClusterPreference),
        Kind::ClusterPreference => Some(Kind::Preference),
        _ => None,
    };
    if let Some(other) = other
        && index.get(other, namespace, name).is_some()
    {
        let other = other.as_str();
        return Some(format!(
            "a {other} of that name exists: set `kind: {other}` in the matcher"
        ));
    }
    // A namespaced object serves only the VMs of its own namespace.
    if let Some(first) = index.other_namespace(kind, namespace, name) {
        return Some(format!(
            "a {} of that name exists in namespace \"{first}\", but a VM can only use one of its \
             own namespace, \"{namespace}\"",
            kind.as_str()
        ));
    }
    if let Some(renamed) = index.renamed(kind, namespace, name) {
        return Some(format!(
            "a {} named \"{renamed}\" exists: if kustomize's `namePrefix` or `nameSuffix` \
             renamed it, it left this reference as it was, since kustomize does not know the \
             names a VM refers to unless a `configurations:` file declares them (see \
             \"Name prefixes and suffixes\" in kvrender's README)",
            kind.as_str()
        ));
    }
    index
        .similar_name(kind, namespace, name)
        .map(|similar| format!("did you mean \"{similar}\"?"))
}

impl ExpandError {
    /// For a name not found, where an object of that kind and name in another namespace is
    /// defined, if the inputs hold one.
    pub fn elsewhere(&self) -> Option<&crate::origin::Origin> {
        match self {
            ExpandError::NotFound { elsewhere, .. } => elsewhere.as_ref(),
            _ => None,
        }
    }

    fn other(message: impl Into<String>, field: &str) -> Self {
        ExpandError::Other {
            message: message.into(),
            field: Some(field.to_string()),
        }
    }
}

/// Which matcher we are resolving.
#[derive(Clone, Copy)]
enum Side {
    Instancetype,
    Preference,
}

impl Side {
    fn field(self) -> &'static str {
        match self {
            Side::Instancetype => "instancetype",
            Side::Preference => "preference",
        }
    }
    fn status_ref(self) -> &'static str {
        match self {
            Side::Instancetype => "instancetypeRef",
            Side::Preference => "preferenceRef",
        }
    }
    fn matcher_name(self) -> &'static str {
        match self {
            Side::Instancetype => "InstancetypeMatcher",
            Side::Preference => "PreferenceMatcher",
        }
    }
    fn spec_field(self) -> &'static str {
        match self {
            Side::Instancetype => "spec.instancetype",
            Side::Preference => "spec.preference",
        }
    }
    /// The kind a matcher `kind` names (lowered as Go lowers it, then compared with the resource
    /// names).
    fn kind_for(self, kind: &str) -> Option<Kind> {
        let is = |names: &[&str]| names.iter().any(|n| super::go_lower_is(kind, n));
        match self {
            Side::Instancetype
                if is(&["virtualmachineinstancetype", "virtualmachineinstancetypes"]) =>
            {
                Some(Kind::Instancetype)
            }
            Side::Instancetype
                if is(&[
                    "virtualmachineclusterinstancetype",
                    "virtualmachineclusterinstancetypes",
                    "",
                ]) =>
            {
                Some(Kind::ClusterInstancetype)
            }
            Side::Preference if is(&["virtualmachinepreference", "virtualmachinepreferences"]) => {
                Some(Kind::Preference)
            }
            Side::Preference
                if is(&[
                    "virtualmachineclusterpreference",
                    "virtualmachineclusterpreferences",
                    "",
                ]) =>
            {
                Some(Kind::ClusterPreference)
            }
            _ => None,
        }
    }
}

/// Whether a VM references an instancetype or a preference (KubeVirt: the matcher is non-nil).
pub fn has_matchers(vm: &Value) -> bool {
    path::is_set(vm, &["spec", "instancetype"]) || path::is_set(vm, &["spec", "preference"])
}

/// The label KubeVirt puts on a ControllerRevision to say which object it holds.
const REVISION_OBJECT_NAME_LABEL: &str = "instancetype.kubevirt.io/object-name";

/// The kind and name of the instancetype a VM's matcher names, as the lookup reads them
/// (`None` without a matcher, a name, or a kind KubeVirt knows).
pub fn instancetype_named(vm: &Object) -> Option<(Kind, &str)> {
    let matcher = path::get(&vm.value, &["spec", "instancetype"])?;
    let name = path::str_at(matcher, &["name"]).filter(|n| !n.is_empty())?;
    let kind = Side::Instancetype.kind_for(path::str_at(matcher, &["kind"]).unwrap_or(""))?;
    Some((kind, name))
}

/// Find the spec the matcher of `side` points at (`None` when the VM has no such matcher).
/// Objects already looked up in `lookups` are not searched for again.
fn find_spec<'a, 'k>(
    side: Side,
    vm: &'k Object,
    index: &Index<'a>,
    lookups: &mut Lookups<'a, 'k>,
) -> Result<Option<Cow<'a, Value>>, ExpandError> {
    let Some(matcher) = path::get(&vm.value, &["spec", side.field()]).filter(|m| !m.is_null())
    else {
        return Ok(None);
    };
    let field = side.spec_field();
    if !matcher.is_object() {
        return Err(ExpandError::other(
            format!("`{field}` must be a mapping"),
            field,
        ));
    }
    let text = |key: &str| -> Result<&str, ExpandError> {
        match matcher.field(key) {
            None | Some(Value::Null) => Ok(""),
            Some(Value::String(s)) => Ok(s),
            Some(_) => Err(ExpandError::other(
                format!("`{field}.{key}` must be a string"),
                field,
            )),
        }
    };
    let name = text("name")?;
    let kind = text("kind")?;
    let revision_name = text("revisionName")?;
    let namespace = vm.effective_namespace();

    if let Some(spec) = find_revision(side, vm, name, revision_name, index)? {
        return Ok(Some(spec));
    }
    let Some(kind) = side.kind_for(kind) else {
        return Err(ExpandError::other(
            format!("got unexpected kind in {}: {kind}", side.matcher_name()),
            &format!("{field}.kind"),
        ));
    };
    // client-go refuses a name or a namespace it cannot put in the request's path before
    // anything is sent.
    let scope = if kind.is_namespaced() { namespace } else { "" };
    if let Some(message) = refused_get(scope, name) {
        let at = if path_segment_problems(scope).is_some() {
            "metadata.namespace".to_string()
        } else {
            format!("{field}.name")
        };
        return Err(ExpandError::other(message, &at));
    }
    match index.get_remembered(lookups, kind, namespace, name) {
        Some(obj) => Ok(Some(spec_of(obj.value.field("spec")))),
        None => Err(ExpandError::NotFound {
            resource: kind.resource(),
            name: name.to_string(),
            namespace: kind.is_namespaced().then(|| namespace.to_string()),
            field,
            hint: not_found_hint(index, kind, namespace, name),
            held_unserved: index.unserved(kind, namespace, name).is_some(),
            elsewhere: index
                .other_namespace(kind, namespace, name)
                .and_then(|other| index.get(kind, other, name))
                .map(|o| o.origin.clone()),
        }),
    }
}

/// KubeVirt first looks for a ControllerRevision: the matcher's `revisionName`, else the one in
/// `status.<side>Ref.controllerRevisionRef` when it holds the object the matcher names.
fn find_revision<'a>(
    side: Side,
    vm: &Object,
    name: &str,
    revision_name: &str,
    index: &Index<'a>,
) -> Result<Option<Cow<'a, Value>>, ExpandError> {
    let namespace = vm.effective_namespace();
    let lookup = |rev: &str, from_status: bool| {
        if let Some(message) = refused_get(namespace, rev) {
            return Err(ExpandError::other(message, side.spec_field()));
        }
        index
            .get_str("ControllerRevision", namespace, rev)
            .ok_or_else(|| ExpandError::NotFound {
                resource: "controllerrevisions.apps",
                name: rev.to_string(),
                namespace: Some(namespace.to_string()),
                field: side.spec_field(),
                hint: Some(revision_hint(side, rev, namespace, name, from_status)),
                held_unserved: false,
                elsewhere: None,
            })
    };
    let revision = if revision_name.is_empty() {
        let status_rev = path::str_at(
            &vm.value,
            &["status", side.status_ref(), "controllerRevisionRef", "name"],
        )
        .unwrap_or("");
        if status_rev.is_empty() {
            return Ok(None);
        }
        let cr = lookup(status_rev, true)?;
        let label = path::str_at(
            &cr.value,
            &["metadata", "labels", REVISION_OBJECT_NAME_LABEL],
        );
        if label != Some(name) {
            return Ok(None);
        }
        cr
    } else {
        lookup(revision_name, false)?
    };
    let holds = match side {
        Side::Instancetype => revision::Holds::Instancetype,
        Side::Preference => revision::Holds::Preference,
    };
    match revision::spec(revision.value.field("data"), holds) {
        Ok(spec) => Ok(Some(spec_of(spec))),
        Err(message) => Err(ExpandError::other(
            format!("{message} (ControllerRevision {})", revision.name()),
            side.spec_field(),
        )),
    }
}

/// What to do about a ControllerRevision that is not among the inputs: it exists only in the
/// cluster that made it, named by a VM read back from that cluster (`from_status`) or by the
/// matcher's `revisionName`.
fn revision_hint(side: Side, rev: &str, namespace: &str, name: &str, from_status: bool) -> String {
    let export = format!(
        "export it (`kubectl get controllerrevision {rev} -n {namespace} -o yaml`) and pass it \
         with --catalog"
    );
    if from_status {
        format!(
            "the VM's `status.{}.controllerRevisionRef` names it, as in a VM read back from a \
             cluster: {export}, or leave `status` out to use {name:?} as it is now",
            side.status_ref()
        )
    } else {
        format!(
            "the matcher's `revisionName` names it: {export}, or leave `revisionName` out to \
             use {name:?} as it is now"
        )
    }
}

/// The instancetype and preference specs a VM points at.
pub fn find_specs(
    vm: &Object,
    index: &Index<'_>,
) -> Result<(Option<Value>, Option<Value>), ExpandError> {
    let mut lookups = Lookups::default();
    let instancetype = find_spec(Side::Instancetype, vm, index, &mut lookups)?;
    let preference = find_spec(Side::Preference, vm, index, &mut lookups)?;
    Ok((
        instancetype.map(Cow::into_owned),
        preference.map(Cow::into_owned),
    ))
}

/// The instancetype spec a VM points at, looked up on its own: whatever its preference matcher
/// says, as KubeVirt's webhook looks each up apart so that one's failure cannot hide the other's.
pub fn find_instancetype_spec<'a>(
    vm: &Object,
    index: &Index<'a>,
) -> Result<Option<Cow<'a, Value>>, ExpandError> {
    find_spec(Side::Instancetype, vm, index, &mut Lookups::default())
}

/// The preference spec a VM points at, looked up on its own (see [`find_instancetype_spec`]).
pub fn find_preference_spec<'a>(
    vm: &Object,
    index: &Index<'a>,
) -> Result<Option<Cow<'a, Value>>, ExpandError> {
    find_spec(Side::Preference, vm, index, &mut Lookups::default())
}

/// A spec found in the index (borrowed) or a revision (`null` when the object has none).
type Spec<'a> = Option<Cow<'a, Value>>;

/// The instancetype and preference specs a VM points at, borrowed from the index; `None` when
/// the VM has no matchers (it expands to itself).
pub struct Found<'a>(Option<(Spec<'a>, Spec<'a>)>);

impl Found<'_> {
    /// Whether the VM has matchers, so that it expands to more than itself.
    pub fn has_matchers(&self) -> bool {
        self.0.is_some()
    }

    /// The spec of the preference the VM names, when it names one that was found.
    pub fn preference(&self) -> Option<&Value> {
        self.0
            .as_ref()
            .and_then(|(_, preference)| preference.as_deref())
    }
}

/// Find what a VM's matchers point at, reusing the answers of earlier lookups in `lookups`.
pub fn find<'a, 'k>(
    vm: &'k Object,
    index: &Index<'a>,
    lookups: &mut Lookups<'a, 'k>,
) -> Result<Found<'a>, ExpandError> {
    if !has_matchers(&vm.value) {
        return Ok(Found(None));
    }
    let instancetype = find_spec(Side::Instancetype, vm, index, lookups)?;
    let preference = find_spec(Side::Preference, vm, index, lookups)?;
    Ok(Found(Some((instancetype, preference))))
}

/// A found object's `spec`, borrowed from the index (`null` when it has none).
fn spec_of(spec: Option<&Value>) -> Cow<'_, Value> {
    spec.map_or(Cow::Owned(Value::Null), Cow::Borrowed)
}

/// How far an expansion goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// KubeVirt's `expand-spec`: everything, ending with the VMI spec defaults.
    Expanded,
    /// What the VM controller does before it creates the VMI: default disks and network
    /// interface, then the instancetype and preference. The VMI spec defaults are left to the
    /// VMI webhook, which applies them after the VirtualMachineInstancePresets.
    Controller,
}

/// Expand one VirtualMachine against the objects in `index`.
pub fn expand(
    vm: &Object,
    index: &Index<'_>,
    profile: &ClusterProfile,
) -> Result<Value, ExpandError> {
    expand_remembered(vm, index, profile, Stage::Expanded, &mut Lookups::default())
}

/// As [`expand`], reusing the answers of earlier lookups in `lookups`.
pub fn expand_remembered<'a, 'k>(
    vm: &'k Object,
    index: &Index<'a>,
    profile: &ClusterProfile,
    stage: Stage,
    lookups: &mut Lookups<'a, 'k>,
) -> Result<Value, ExpandError> {
    // Borrowed from the index: the specs are only read.
    let Found(Some((instancetype, preference))) = find(vm, index, lookups)? else {
        let mut out = vm.value.clone();
        as_go_writes_it(&mut out);
        omit_go_empty(&mut out);
        return Ok(out);
    };
    let mut out = vm.value.clone();
    expand_in_place(
        &mut out,
        instancetype.as_deref(),
        preference.as_deref(),
        profile,
        stage,
    )?;
    Ok(out)
}

/// As [`expand`], taking the VM's value out of `vm` instead of copying it (for a caller that
/// drops the VM afterwards). On failure `vm.value` may have been partly expanded; what names
/// the VM (`apiVersion`, `kind`, `metadata`) is left as it was.
pub fn expand_taking(
    vm: &mut Object,
    index: &Index<'_>,
    profile: &ClusterProfile,
) -> Result<Value, ExpandError> {
    let found = find(vm, index, &mut Lookups::default())?;
    expand_found(vm, found, profile)
}

/// As [`expand_taking`], with the specs already found by [`find`].
pub fn expand_found(
    vm: &mut Object,
    found: Found<'_>,
    profile: &ClusterProfile,
) -> Result<Value, ExpandError> {
    let Found(Some((instancetype, preference))) = found else {
        let mut out = std::mem::take(&mut vm.value);
        as_go_writes_it(&mut out);
        omit_go_empty(&mut out);
        return Ok(out);
    };
    expand_in_place(
        &mut vm.value,
        instancetype.as_deref(),
        preference.as_deref(),
        profile,
        Stage::Expanded,
    )?;
    Ok(std::mem::take(&mut vm.value))
}

/// Expand a VM with already-resolved specs (steps 3 to 6).
pub fn expand_with(
    vm: &Value,
    instancetype: Option<&Value>,
    preference: Option<&Value>,
    profile: &ClusterProfile,
) -> Result<Value, ExpandError> {
    let mut out = vm.clone();
    expand_in_place(&mut out, instancetype, preference, profile, Stage::Expanded)?;
    Ok(out)
}

/// [`expand_with`] on the VM value `out`, changed in place.
fn expand_in_place(
    out: &mut Value,
    instancetype: Option<&Value>,
    preference: Option<&Value>,
    profile: &ClusterProfile,
    stage: Stage,
) -> Result<(), ExpandError> {
    // The controller drops a completed memory dump's volume before it adds the default disks.
    let dump_claim = out
        .field("status")
        .filter(|_| stage == Stage::Controller)
        .and_then(vmi::completed_memory_dump_claim)
        .map(str::to_string);
    let template = match path::get_mut(out, &["spec", "template"]) {
        Some(t) if t.is_object() => t,
        _ => {
            return Err(ExpandError::other(
                "`spec.template` is required to expand a VirtualMachine",
                "spec.template",
            ));
        }
    };
    match template.field("spec") {
        Some(Value::Object(_)) => {}
        None | Some(Value::Null) => {
            path::set(template, &["spec"], Value::Object(serde_json::Map::new()));
        }
        Some(_) => {
            return Err(ExpandError::other(
                "`spec.template.spec` must be a mapping",
                "spec.template.spec",
            ));
        }
    }
    {
        let spec = template.field_mut("spec").expect("checked above");
        vmi::null_items_as_structs(spec);
        if let Some(claim) = &dump_claim {
            vmi::remove_volume(spec, claim);
        }
        defaults::set_default_volume_disks(spec);
        if stage == Stage::Controller {
            // The VM controller takes the preference's autoattach flags first, so that they
            // decide whether the default interface and input device are added.
            if let Some(pref) = preference {
                preference_apply::apply_autoattach(pref, spec);
            }
            vmi::autoattach_input_device(spec);
        }
        defaults::set_default_network_interface(profile, spec)
            .map_err(|e| ExpandError::other(e.0, "spec.template.spec"))?;
    }
    if stage == Stage::Controller && (instancetype.is_some() || preference.is_some()) {
        let names = name_annotations(out.field("spec").unwrap_or(&Value::Null));
        if !names.is_empty()
            && let Some(annotations) = path::get_mut(out, &["spec", "template"])
                .and_then(|t| path::ensure_map(t, &["metadata", "annotations"]))
        {
            for (key, name) in names {
                annotations.insert(key.to_string(), Value::String(name));
            }
        }
    }
    let template = path::get_mut(out, &["spec", "template"]).expect("checked above");
    if let Some(it) = instancetype {
        let conflicts = instancetype_apply::apply(it, preference, template);
        // KubeVirt lays the vCPUs out while it applies the CPU group, before it returns the
        // conflicts of any group: a zero spread ratio fails it there, unless the CPU group
        // conflicts itself (it returns before the layout).
        if !conflicts.iter().any(Conflict::is_cpu)
            && crate::kubevirt::admission::spread::expansion_divides_by_zero(it, preference)
        {
            return Err(ExpandError::SpreadByZero);
        }
        if !conflicts.is_empty() {
            return Err(ExpandError::Conflicts(conflicts));
        }
    }
    if let Some(pref) = preference {
        if instancetype.is_none() && preference_apply::dereferences_missing_cpu(pref, template) {
            return Err(ExpandError::FeaturesWithoutCpu);
        }
        preference_apply::apply(pref, template);
    }
    if stage == Stage::Expanded {
        let spec = template.field_mut("spec").expect("checked above");
        defaults::apply(profile, spec)
            .map_err(|e| ExpandError::other(e.0, "spec.template.spec"))?;
    }
    as_go_writes_it(out);
    omit_go_empty(out);
    path::remove_fields(out.field_mut("spec"), &["instancetype", "preference"]);
    path::remove_fields(
        out.field_mut("status"),
        &["instancetypeRef", "preferenceRef"],
    );
    Ok(())
}

/// The annotations with which the VM controller records, on the VMI it creates, the names of the
/// instancetype and preference: `kubevirt.io/instancetype-name` or
/// `kubevirt.io/cluster-instancetype-name` after the matcher's kind (an empty kind is the
/// cluster kind), likewise for the preference; a kind KubeVirt does not know gives none.
/// Keys and values, read from the VM's `spec`.
fn name_annotations(vm_spec: &Value) -> Vec<(&'static str, String)> {
    let mut names = Vec::new();
    for (matcher, namespaced, cluster, kinds) in [
        (
            "instancetype",
            "kubevirt.io/instancetype-name",
            "kubevirt.io/cluster-instancetype-name",
            (
                "virtualmachineinstancetype",
                "virtualmachineclusterinstancetype",
            ),
        ),
        (
            "preference",
            "kubevirt.io/preference-name",
            "kubevirt.io/cluster-preference-name",
            (
                "virtualmachinepreference",
                "virtualmachineclusterpreference",
            ),
        ),
    ] {
        let Some(m) = vm_spec.field(matcher).filter(|m| m.is_object()) else {
            continue;
        };
        let kind = path::str_at(m, &["kind"]).unwrap_or("");
        let is = |name: &str| {
            super::go_lower_is(kind, name)
                || kind
                    .strip_suffix(['s', 'S'])
                    .is_some_and(|k| super::go_lower_is(k, name))
        };
        let key = if is(kinds.0) {
            namespaced
        } else if kind.is_empty() || is(kinds.1) {
            cluster
        } else {
            continue;
        };
        names.push((key, path::str_at(m, &["name"]).unwrap_or("").to_string()));
    }
    names
}

/// What KubeVirt's answer, re-encoded from its Go types, carries whatever the VM said:
/// - `features.acpi` is a plain struct, so whenever a VM has `features` the answer has `acpi: {}`
///   (ACPI is on unless disabled), also where the VM wrote `acpi: null`;
/// - fields without `omitempty` are written with their zero value ([`vmi::write_go_zero_fields`]),
///   and a `null` in a map of strings (labels, annotations, node selector) as `""`;
/// - an empty namespace is the namespace `default`, where the VM was looked at.
fn as_go_writes_it(vm: &mut Value) {
    // Neither `spec` nor its `template` (a pointer) is `omitempty`: a VM without them comes
    // back as `spec: {template: null}`.
    if let Some(object) = vm.as_object_mut() {
        let spec =
            path::field_or_insert_with(object, "spec", || Value::Object(serde_json::Map::new()));
        if spec.is_null() {
            *spec = Value::Object(serde_json::Map::new());
        }
        if let Some(spec) = spec.as_object_mut()
            && !spec.contains_key("template")
        {
            spec.insert("template".to_string(), Value::Null);
        }
    }
    if let Some(features) = path::get_mut(vm, &["spec", "template", "spec", "domain", "features"])
        .and_then(Value::as_object_mut)
    {
        let acpi =
            path::field_or_insert_with(features, "acpi", || Value::Object(serde_json::Map::new()));
        if acpi.is_null() {
            *acpi = Value::Object(serde_json::Map::new());
        }
    }
    if let Some(template) = path::get_mut(vm, &["spec", "template"]).filter(|t| t.is_object()) {
        // The template's spec is a plain struct: written even when the VM has none.
        vmi::zero_field(template, "spec", || Value::Object(serde_json::Map::new()));
        vmi::write_go_zero_fields(template);
    }
    if let Some(templates) = path::get_mut(vm, &["spec", "dataVolumeTemplates"]) {
        data_volume_templates_as_go_writes_them(templates);
    }
    // Labels, annotations and node selectors are maps of Go strings: `null` is `""`.
    vmi::null_strings_as_empty_at(
        vm,
        &[
            &["metadata", "labels"],
            &["metadata", "annotations"],
            &["spec", "template", "metadata", "labels"],
            &["spec", "template", "metadata", "annotations"],
            &["spec", "template", "spec", "nodeSelector"],
        ],
    );
    if let Some(namespace) = path::get_mut(vm, &["metadata", "namespace"])
        && (namespace.is_null() || namespace.as_str() == Some(""))
    {
        *namespace = Value::from("default");
    }
    // Before the times are read: a zero `deletionTimestamp` is a set pointer Go writes as `null`.
    object_meta_omits_empty(vm);
    metadata_and_status_as_go_writes_them(vm);
}

/// Every field of Go's `ObjectMeta` but `creationTimestamp` is `omitempty` (the pointers among
/// them are left out when nil): Go does not write the VM's, its template's or its DataVolume
/// templates' `labels: {}`, `finalizers: []`, `uid: ""` or `generation: 0`.
fn object_meta_omits_empty(vm: &mut Value) {
    fn omit(meta: Option<&mut Value>) {
        let Some(meta) = meta.and_then(Value::as_object_mut) else {
            return;
        };
        meta.retain(|key, v| match key.as_str() {
            "name" | "generateName" | "namespace" | "selfLink" | "uid" | "resourceVersion"
            | "generation" | "labels" | "annotations" | "ownerReferences" | "finalizers"
            | "managedFields" => !path::is_zero(Some(v)),
            "deletionTimestamp" | "deletionGracePeriodSeconds" => !v.is_null(),
            _ => true,
        });
    }
    omit(vm.field_mut("metadata"));
    omit(path::get_mut(vm, &["spec", "template", "metadata"]));
    if let Some(templates) =
        path::get_mut(vm, &["spec", "dataVolumeTemplates"]).and_then(Value::as_array_mut)
    {
        for template in templates {
            omit(template.field_mut("metadata"));
        }
    }
}

/// The metadata (the VM's, its template's and its DataVolume templates') and the status of a VM
/// as Go re-encodes them: times in UTC to the second (see [`GoTime`]), and the fields without
/// `omitempty` of owner references, conditions and the status's requests written with their
/// zero value (a condition without times has `lastProbeTime: null`).
fn metadata_and_status_as_go_writes_them(vm: &mut Value) {
    static SHAPE: LazyLock<Shape> = LazyLock::new(|| {
        use GoZero::{False, Null, Text};
        let mut vm = Shape::default();
        for at in [
            &["metadata"][..],
            &["spec", "template", "metadata"],
            &["spec", "dataVolumeTemplates", "*", "metadata"],
        ] {
            let meta = vm.at(at);
            meta.time(&["creationTimestamp"], GoTime::OmitZero)
                .time(&["deletionTimestamp"], GoTime::Pointer)
                .struct_list(&["managedFields"])
                .time(&["managedFields", "*", "time"], GoTime::Pointer)
                .struct_list(&["ownerReferences"])
                .string_list(&["finalizers"]);
            for field in ["apiVersion", "kind", "name", "uid"] {
                meta.zero(&["ownerReferences", "*", field], Text);
            }
        }
        let status = vm.at(&["status"]);
        status.struct_list(&["conditions"]);
        let condition = status.at(&["conditions", "*"]);
        condition.zero(&["type"], Text).zero(&["status"], Text);
        for time in ["lastProbeTime", "lastTransitionTime"] {
            condition.zero(&[time], Null).time(&[time], GoTime::Plain);
        }
        status
            .struct_list(&["stateChangeRequests"])
            .zero(&["stateChangeRequests", "*", "action"], Text)
            .string_map(&["stateChangeRequests", "*", "data"])
            .struct_list(&["volumeRequests"]);
        let request = status.at(&["volumeRequests", "*"]);
        request
            .zero(&["addVolumeOptions", "name"], Text)
            .zero(&["addVolumeOptions", "disk"], Null)
            .zero(&["addVolumeOptions", "disk", "name"], Text)
            .zero(&["addVolumeOptions", "volumeSource"], Null)
            .zero(
                &[
                    "addVolumeOptions",
                    "volumeSource",
                    "persistentVolumeClaim",
                    "claimName",
                ],
                Text,
            )
            .zero(
                &["addVolumeOptions", "volumeSource", "dataVolume", "name"],
                Text,
            )
            .zero(&["removeVolumeOptions", "name"], Text);
        status
            .struct_list(&["volumeSnapshotStatuses"])
            .zero(&["volumeSnapshotStatuses", "*", "name"], Text)
            .zero(&["volumeSnapshotStatuses", "*", "enabled"], False)
            .time(&["startFailure", "retryAfterTimestamp"], GoTime::Pointer)
            .zero(&["memoryDumpRequest", "claimName"], Text)
            .zero(&["memoryDumpRequest", "phase"], Text)
            .time(&["memoryDumpRequest", "startTimestamp"], GoTime::Pointer)
            .time(&["memoryDumpRequest", "endTimestamp"], GoTime::Pointer);
        let migrated = [
            "volumeUpdateState",
            "volumeMigrationState",
            "migratedVolumes",
        ];
        status.struct_list(&migrated).zero(
            &[migrated[0], migrated[1], migrated[2], "*", "volumeName"],
            Text,
        );
        let tracking = status.at(&["changedBlockTracking"]);
        tracking
            .zero(&["state"], Text)
            .struct_list(&["backupStatus", "volumes"])
            .zero(&["backupStatus", "volumes", "*", "volumeName"], Text)
            .time(&["backupStatus", "startTimestamp"], GoTime::Pointer)
            .time(&["backupStatus", "endTimestamp"], GoTime::Pointer);
        vm
    });
    // Most VMs have none of it: a look at a few keys saves the walk.
    let meta_has_any = |meta: Option<&Value>| {
        meta.and_then(Value::as_object).is_some_and(|m| {
            m.keys().any(|k| {
                matches!(
                    k.as_str(),
                    "creationTimestamp"
                        | "deletionTimestamp"
                        | "managedFields"
                        | "ownerReferences"
                        | "finalizers"
                )
            })
        })
    };
    let spec = vm.field("spec");
    let needed = vm
        .field("status")
        .is_some_and(|s| s.as_object().is_some_and(|s| !s.is_empty()))
        || meta_has_any(vm.field("metadata"))
        || meta_has_any(spec.and_then(|s| s.field("template")?.field("metadata")))
        || spec
            .and_then(|s| s.field("dataVolumeTemplates")?.as_array())
            .is_some_and(|t| t.iter().any(|t| meta_has_any(t.field("metadata"))));
    if needed {
        SHAPE.apply(vm);
        // Every field of the status is `omitempty`: a `null` one is left out, and so is an
        // empty list, an empty string, a zero and `false` (its structs are pointers: `{}`
        // stays).
        if let Some(status) = vm.field_mut("status") {
            Shape::drop_omitted_nulls(SHAPE.get(&["status"]), status);
            if let Some(fields) = status.as_object_mut() {
                fields.retain(|_, v| {
                    !matches!(v, Value::Array(a) if a.is_empty())
                        && !matches!(v, Value::String(s) if s.is_empty())
                        && !matches!(v, Value::Bool(false))
                        && v.as_f64() != Some(0.0)
                });
            }
        }
    }
}

/// The DataVolume templates of a VM as the Go types of KubeVirt and CDI re-encode them: a
/// `null` template is an empty one, the fields without `omitempty` are written with their zero
/// value, the quantities of claim resources written as decimal numbers come back as
/// canonical strings, and a claim's `requests` or `limits` that is `null` or empty is left out
/// (a nil or empty map under `omitempty`), as is any other `null` among its resources.
fn data_volume_templates_as_go_writes_them(templates: &mut Value) {
    static SHAPE: LazyLock<Shape> = LazyLock::new(|| {
        use GoZero::{Null, Struct, Text};
        let mut list = Shape::default();
        let item = list.struct_list(&[]).at(&["*"]);
        item.zero(&["metadata"], Struct).zero(&["spec"], Struct);
        item.string_map(&["metadata", "labels"])
            .string_map(&["metadata", "annotations"]);
        let spec = item.at(&["spec"]);
        spec.string_list(&["source", "http", "extraHeaders"])
            .string_list(&["source", "http", "secretExtraHeaders"]);
        let sources: [(&str, &[&str]); 6] = [
            ("http", &["url"]),
            ("s3", &["url"]),
            ("gcs", &["url"]),
            ("pvc", &["namespace", "name"]),
            ("imageio", &["url", "diskId"]),
            ("snapshot", &["namespace", "name"]),
        ];
        for (source, fields) in sources {
            for field in fields {
                spec.zero(&["source", source, field], Text);
            }
        }
        spec.zero(&["sourceRef", "kind"], Text)
            .zero(&["sourceRef", "name"], Text);
        for claim in ["pvc", "storage"] {
            let claim = spec.at(&[claim]);
            claim
                .zero(&["resources"], Struct)
                .string_list(&["accessModes"])
                .quantity(&["resources", "requests", "*"])
                .quantity(&["resources", "limits", "*"]);
            for reference in ["dataSource", "dataSourceRef"] {
                claim
                    .zero(&[reference, "apiGroup"], Null)
                    .zero(&[reference, "kind"], Text)
                    .zero(&[reference, "name"], Text);
            }
            claim
                .string_map(&["selector", "matchLabels"])
                .struct_list(&["selector", "matchExpressions"])
                .zero(&["selector", "matchExpressions", "*", "key"], Text)
                .zero(&["selector", "matchExpressions", "*", "operator"], Text)
                .string_list(&["selector", "matchExpressions", "*", "values"]);
        }
        spec.struct_list(&["checkpoints"])
            .zero(&["checkpoints", "*", "previous"], Text)
            .zero(&["checkpoints", "*", "current"], Text);
        list
    });
    SHAPE.apply(templates);
    for template in templates.as_array_mut().into_iter().flatten() {
        for claim in ["pvc", "storage"] {
            if let Some(resources) = path::get_mut(template, &["spec", claim, "resources"])
                .and_then(Value::as_object_mut)
            {
                resources.retain(|key, v| match key.as_str() {
                    "requests" | "limits" => !path::is_zero(Some(v)),
                    _ => !v.is_null(),
                });
            }
        }
    }
}

/// KubeVirt answers with a Go re-serialization of the VM. Inside the plain structs that are
/// always printed (`domain.resources`, `domain.devices`) an empty map, an empty list or a
/// `false` non-pointer bool is dropped, and so must we drop it: left in,
/// `resources: {requests: {}}` would read as "set". (The metadata's empty fields are dropped by
/// [`as_go_writes_it`].)
fn omit_go_empty(vm: &mut Value) {
    if let Some(template) = path::get_mut(vm, &["spec", "template"]) {
        crate::kubevirt::vmi::omit_empty_resources_and_devices(template);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_vmi_records_the_names_of_its_instancetype_and_preference() {
        let annotations = |spec: Value| {
            let names = name_annotations(&spec);
            if names.is_empty() {
                return Value::Null;
            }
            Value::Object(
                names
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), Value::String(v)))
                    .collect(),
            )
        };
        assert_eq!(
            annotations(json!({
                "instancetype": {"name": "u1.medium"},
                "preference": {"kind": "VirtualMachinePreferences", "name": "mine"}
            })),
            json!({
                "kubevirt.io/cluster-instancetype-name": "u1.medium",
                "kubevirt.io/preference-name": "mine"
            })
        );
        assert_eq!(
            annotations(json!({
                "instancetype": {"kind": "virtualmachineinstancetype", "name": "a"},
                "preference": {"kind": "VirtualMachineClusterPreference", "name": "b"}
            })),
            json!({
                "kubevirt.io/instancetype-name": "a",
                "kubevirt.io/cluster-preference-name": "b"
            })
        );
        assert_eq!(
            annotations(json!({"instancetype": {"kind": "Flavor", "name": "a"}})),
            Value::Null
        );
        // Go lowers `İ` to a plain `i`.
        assert_eq!(
            annotations(
                json!({"instancetype": {"kind": "V\u{130}rtualMachineInstancetypeS", "name": "a"}})
            ),
            json!({"kubevirt.io/instancetype-name": "a"})
        );
    }

    #[test]
    fn matcher_kinds_are_lowered_as_go_lowers_them() {
        let it = Side::Instancetype;
        assert_eq!(it.kind_for(""), Some(Kind::ClusterInstancetype));
        assert_eq!(
            it.kind_for("VirtualMachineInstanceTypes"),
            Some(Kind::Instancetype)
        );
        assert_eq!(
            it.kind_for("V\u{130}rtualMachineInstancetype"),
            Some(Kind::Instancetype)
        );
        // The full mapping's `i` + combining dot is not a plain `i`.
        assert_eq!(it.kind_for("Vi\u{307}rtualMachineInstancetype"), None);
        assert_eq!(it.kind_for("VirtualMachinePreference"), None);
        assert_eq!(
            Side::Preference.kind_for("virtualmachineclusterpreferences"),
            Some(Kind::ClusterPreference)
        );
    }
}

//! The pass that runs KubeVirt's admission checks ([`crate::kubevirt::admission`]) on each
//! instancetype, preference and VirtualMachine and turns the webhook's answer into findings:
//! a refusal gives one error per cause under the code of the check that refused, a webhook
//! warning a `KV031` warning, and an instancetype or preference lookup that KubeVirt ignores a
//! `KV011`/`KV012` warning (the VM is admitted but will not start).
//!
//! Before the validating webhook, KubeVirt's mutating webhook validates the matchers themselves
//! (`pkg/instancetype/webhooks/vm/mutator.go`); a VM it refuses never reaches the checks after.

use serde_json::Value;

use super::{
    bad_matcher, deprecated, infer_from_volume, instancetype_conflict, invalid_spec,
    reference_not_found, requirements, spread,
};
use crate::diagnostic::{Cascade, Diagnostic};
use crate::kubevirt::admission::{self, Reason};
use crate::kubevirt::expand::{self, ExpandError};
use crate::kubevirt::infer;
use crate::model::{Kind, Object, path};
use crate::validate::Context;
use crate::validate::rules::unmet_requirements::{Requirements, Size};

/// What the admission checks of a VM hand on to the checks of its spec.
#[derive(Debug, Default)]
pub struct Admitted {
    /// The VM's template spec as KubeVirt's webhook goes on to validate it, when the
    /// instancetype steps built one ([`admission::Response::applied`]).
    pub applied: Option<Value>,
    /// A lookup of its instancetype or preference failed: KubeVirt's webhook lets that pass,
    /// but the VM does not start, so no VMI of it is ever judged.
    pub never_starts: bool,
    /// The VM as the mutating webhook's inference leaves it, where the `Ignore` policy dropped
    /// every matcher: the validating webhook judges a VM without instancetype or preference.
    pub unmatched: Option<Object>,
    /// The webhook refused the VM while applying its instancetype and preference (a conflict,
    /// unmet requirements, a spread that does not fit, a default it refuses): KubeVirt answers
    /// with those causes and does not go on to validate the VM's spec.
    pub refused: bool,
}

/// Check one object; objects of other kinds are skipped.
pub fn check(obj: &Object, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) -> Admitted {
    if obj.kind() == Kind::Other || obj.name().is_empty() {
        return Admitted::default();
    }
    if obj.kind() == Kind::VirtualMachine {
        let refused = matcher_refusals(obj);
        if !refused.is_empty() {
            out.extend(refused);
            return Admitted::default();
        }
    }
    // The mutating webhook infers the matchers first; the validating one sees its result.
    let inferred;
    let mut unmatched = None;
    let mut sources = Vec::new();
    let obj = if obj.kind() == Kind::VirtualMachine && infer::uses_inference(&obj.value) {
        match infer_from_volume::infer(obj, ctx, out) {
            Some((vm, from)) => {
                sources = from;
                if !expand::has_matchers(&vm.value) {
                    unmatched = Some(obj.with_value(vm.value.clone()));
                }
                inferred = vm;
                &inferred
            }
            None => return Admitted::default(),
        }
    } else {
        obj
    };
    // An instancetype or preference with a field of the wrong type cannot exist in a cluster
    // (the API server refuses it), so the VM is not judged against it: its own type errors are
    // the findings, the same ones (and so reported once) as when it is among the checked
    // objects, wherever it comes from (`--catalog`).
    // The VM itself gets a `KV011` warning, as for a name that is not found: the cluster would
    // not hold the object, so the VM does not start. KubeVirt's webhook lets that lookup fail
    // and judges the VM with the other side alone, as it is judged here: its matcher taken out.
    let mut unheld = false;
    let mut unheld_instancetype = None;
    let judged;
    let obj = if obj.kind() == Kind::VirtualMachine {
        let ill_typed = crate::pipeline::ill_typed_references(obj, ctx.index);
        if ill_typed.is_empty() {
            obj
        } else {
            let mut value = obj.value.clone();
            for referenced in ill_typed {
                unheld = true;
                let side = match referenced.kind() {
                    Kind::Instancetype | Kind::ClusterInstancetype => {
                        unheld_instancetype = Some(referenced.name().to_string());
                        "instancetype"
                    }
                    _ => "preference",
                };
                if let Some(spec) = value.get_mut("spec").and_then(Value::as_object_mut) {
                    spec.shift_remove(side);
                }
                let mut found = Vec::new();
                super::unknown_field::check(referenced, &mut found);
                out.extend(
                    found
                        .into_iter()
                        .filter(|d| d.code == super::wrong_type::RULE.code)
                        .map(|mut d| {
                            d.point_at_field_of(referenced, &ctx.docs);
                            d
                        }),
                );
                out.push(refused_reference(obj, referenced));
            }
            judged = obj.with_value(value);
            &judged
        }
    } else {
        obj
    };
    // An instancetype or preference with an error of its own so far (a wrong type, an unknown
    // top-level key, a bad name) is refused before its webhook could answer with warnings.
    let refused_before = obj.kind() != Kind::VirtualMachine && out.iter().any(Diagnostic::is_error);
    let Some(response) = admission::admit(obj, ctx.index, ctx.profile) else {
        return Admitted {
            applied: None,
            never_starts: unheld,
            unmatched,
            refused: false,
        };
    };
    let refused = obj.kind() == Kind::VirtualMachine && !response.causes.is_empty();
    for cause in &response.causes {
        let code = code_of(cause.reason);
        let hint = match cause.reason {
            Reason::InvalidSpec | Reason::Spread => String::new(),
            Reason::Defaults => DEFAULTS_HINT.to_string(),
            Reason::Conflict => crate::pipeline::conflict_hint(obj, 1),
            Reason::Requirements => match &unheld_instancetype {
                Some(name) => format!(
                    " (the instancetype \"{name}\" is refused by the API server, so KubeVirt \
                     counted the VM's own CPU and memory: see the {} finding)",
                    reference_not_found::RULE.code
                ),
                None => requirements_hint(obj, ctx, &cause.message, &response.ignored_lookups),
            },
        };
        // A conflict is found at the VM's own spelling of the field (KubeVirt names a template
        // annotation `annotations.<key>`, and `dedicatedCpuPlacement` with the instancetype's
        // spelling); other causes at their field, later.
        let origin = if cause.reason == Reason::Conflict {
            obj.field_origin(&crate::kubevirt::conflict::vm_field_of(&cause.field))
        } else {
            obj.origin.clone()
        };
        // Requirements checked against the VM's own CPU and memory because its instancetype
        // was not found follow from that `KV011`.
        let cascade = if cause.reason == Reason::Requirements
            && response.ignored_lookups.iter().any(|e| {
                matches!(e, ExpandError::NotFound { field, .. } if field.starts_with("spec.instancetype"))
            }) {
            Cascade::FollowsUnresolved
        } else {
            Cascade::Independent
        };
        out.push(
            Diagnostic::error(code, origin, format!("{}{hint}", cause.message))
                .with_object(obj.object_ref())
                .with_field(cause.field.clone())
                .with_cascade(cascade),
        );
    }
    if !refused_before {
        // KubeVirt's warnings are plain text; each kind has one deprecated field.
        let field = match obj.kind() {
            Kind::Instancetype | Kind::ClusterInstancetype => Some("spec.launchSecurity"),
            Kind::Preference | Kind::ClusterPreference => Some("spec.cpu.preferredCPUTopology"),
            _ => None,
        };
        for warning in &response.warnings {
            let mut d =
                Diagnostic::warning(deprecated::RULE.code, obj.origin.clone(), warning.clone())
                    .with_object(obj.object_ref());
            d.field = field.map(str::to_string);
            out.push(d);
        }
    }
    for err in &response.ignored_lookups {
        if let Some(mut d) = lookup_finding(obj, err, ctx.index.has_fallback()) {
            let field = d.field.as_deref().unwrap_or_default();
            if let Some(source) = sources
                .iter()
                .find(|s| field.starts_with(&format!("spec.{}", s.side.key())))
            {
                d.message = from_labels(&d.message, source);
            }
            out.push(d);
        }
    }
    Admitted {
        never_starts: unheld || !response.ignored_lookups.is_empty(),
        applied: response.applied,
        unmatched,
        refused,
    }
}

/// A lookup finding's `message` about a matcher inferred from `source`'s labels: the labels are
/// what to fix, not the matcher the VM does not write (whose `kind` KubeVirt refuses beside
/// `inferFromVolume`).
fn from_labels(message: &str, source: &infer_from_volume::Source) -> String {
    let (name_label, kind_label) = (source.side.name_label(), source.side.kind_label());
    let on = source
        .object
        .as_ref()
        .map_or_else(|| "the volume".to_string(), ToString::to_string);
    let mut message = infer::kind_hint_as_label(message, kind_label, &on);
    message.push_str(&format!(
        " (inferred from volume `{}`: the name and kind are the labels `{name_label}` and \
         `{kind_label}` of {on}, which are what to change)",
        source.volume
    ));
    message
}

/// The code of the check that refused the object.
pub fn code_of(reason: Reason) -> &'static str {
    match reason {
        Reason::InvalidSpec => invalid_spec::RULE.code,
        Reason::Spread => spread::RULE.code,
        Reason::Conflict => instancetype_conflict::RULE.code,
        Reason::Requirements => requirements::RULE.code,
        Reason::Defaults => bad_matcher::RULE.code,
    }
}

/// What to do about a cluster default KubeVirt refuses, after KubeVirt's message.
const DEFAULTS_HINT: &str = " (the cluster's default interface, which KubeVirt adds to a VM \
     that lists no interfaces or networks: give the VM its own, such as `masquerade` on the pod \
     network)";

/// Why a VM misses its preference's requirements, after KubeVirt's message: its instancetype
/// was not found (so the VM's own CPU and memory were counted), or which size of the same
/// series (`u1` of `u1.small`) is the smallest that meets the requirements.
fn requirements_hint(
    vm: &Object,
    ctx: &Context<'_>,
    message: &str,
    ignored: &[ExpandError],
) -> String {
    for e in ignored {
        match e {
            ExpandError::NotFound {
                field,
                name,
                resource,
                namespace,
                hint,
                ..
            } if field.starts_with("spec.instancetype") => {
                // A name close to a known one is most likely misspelt (the KV011 says which);
                // another may be the cluster's own.
                let export = if hint.is_some() {
                    String::new()
                } else {
                    let kind = resource.split('.').next().unwrap_or(resource);
                    let kind = kind.strip_suffix('s').unwrap_or(kind);
                    let namespace = namespace
                        .as_deref()
                        .map(|ns| format!(" -n {ns}"))
                        .unwrap_or_default();
                    format!(
                        "; if the cluster holds it, KubeVirt counts its CPU and memory instead: \
                         save `kubectl get {kind} {name}{namespace} -o yaml` to a file and pass \
                         it with `--catalog`"
                    )
                };
                return format!(
                    " (the instancetype \"{name}\" was not found, so KubeVirt counted the VM's \
                     own CPU and memory{export}{}see the {} finding)",
                    if export.is_empty() { ": " } else { "; " },
                    reference_not_found::RULE.code
                );
            }
            ExpandError::Other {
                field: Some(field), ..
            } if field.starts_with("spec.instancetype") => {
                return format!(
                    " (the instancetype matcher could not be used, so KubeVirt counted the VM's \
                     own CPU and memory: see the {} finding)",
                    bad_matcher::RULE.code
                );
            }
            _ => {}
        }
    }
    let Some((kind, name)) = expand::instancetype_named(vm) else {
        return if message.contains("vCPU provided by VirtualMachine") {
            own_cpu_hint(vm, ctx)
        } else {
            String::new()
        };
    };
    let Ok((Some(_), Some(preference))) = expand::find_specs(vm, ctx.index) else {
        return String::new();
    };
    let Some(wanted) = Requirements::of(Some(&preference)) else {
        return String::new();
    };
    let namespace = vm.effective_namespace();
    let Some(current) = ctx.index.get(kind, namespace, name) else {
        // A ControllerRevision's instancetype: no series to choose from.
        return String::new();
    };
    if wanted.met_by(&Size::of(current.value.get("spec"))) {
        // The cpu and memory fit: the architecture does not.
        return String::new();
    }
    let Some((series, _)) = name.split_once('.') else {
        return String::new();
    };
    // Every VM of the series that misses the same requirements gets the same answer.
    let key = format!("{}\0{namespace}\0{series}\0{}", kind.as_str(), wanted.key());
    let memo = || {
        ctx.memo
            .smallest_fit
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    };
    if let Some(hint) = memo().get(&key) {
        return hint.clone();
    }
    let mut fits: Vec<(Size, &str)> = ctx
        .index
        .names(kind, namespace)
        .into_iter()
        .filter(|n| n.split_once('.').is_some_and(|(s, _)| s == series))
        .filter_map(|n| {
            let size = Size::of(ctx.index.get(kind, namespace, n)?.value.get("spec"));
            wanted.met_by(&size).then_some((size, n))
        })
        .collect();
    fits.sort_by(|a, b| a.0.cmp_size(&b.0).then(a.1.cmp(b.1)));
    let hint = match fits.first() {
        Some((_, fit)) => {
            format!(" (\"{fit}\" is the smallest {series} instancetype that meets them)")
        }
        None => format!(" (no {series} instancetype meets them)"),
    };
    memo().insert(key, hint.clone());
    hint
}

/// Why a VM without an instancetype misses its preference's vCPU requirement although it
/// asks for enough vCPUs: KubeVirt counts only the axes of the preference's CPU topology, and
/// an axis the VM leaves out as 0.
fn own_cpu_hint(vm: &Object, ctx: &Context<'_>) -> String {
    const AXES: [&str; 3] = ["sockets", "cores", "threads"];
    let Ok((None, Some(preference))) = expand::find_specs(vm, ctx.index) else {
        return String::new();
    };
    let Some(cpu) = path::get(&vm.value, &["spec", "template", "spec", "domain", "cpu"]) else {
        return String::new();
    };
    let count = |axis: &str| path::get(cpu, &[axis]).and_then(Value::as_u64).unwrap_or(0);
    // The vCPUs the VM asks for, as the VMI will have them (an axis left out is 1 there).
    let total: u64 = AXES
        .iter()
        .map(|axis| count(axis).max(1))
        .fold(1, u64::saturating_mul);
    // Only a VM that asks for enough vCPUs in all, counted in the wrong place.
    let required = path::get(&preference, &["requirements", "cpu", "guest"])
        .and_then(Value::as_u64)
        .unwrap_or(0);
    if total < required {
        return String::new();
    }
    let topology = crate::kubevirt::admission::topology::preferred(Some(&preference));
    let how = match topology {
        "sockets" | "preferSockets" | "cores" | "preferCores" | "threads" | "preferThreads" => {
            let counted = AXES
                .into_iter()
                .find(|axis| topology.to_ascii_lowercase().ends_with(axis))
                .unwrap_or("sockets");
            if count(counted) >= total {
                return String::new();
            }
            let others: Vec<String> = AXES
                .iter()
                .filter(|axis| **axis != counted && count(axis) > 1)
                .map(|axis| format!("`{axis}: {}`", count(axis)))
                .collect();
            if others.is_empty() {
                format!("counts only `cpu.{counted}`, which the VM does not set: set it")
            } else {
                format!(
                    "counts only `cpu.{counted}`, not the VM's {}: give its {total} vCPUs as \
                     `{counted}: {total}`",
                    others.join(" and ")
                )
            }
        }
        "any" | "preferAny" => {
            let missing: Vec<String> = AXES
                .iter()
                .filter(|axis| count(axis) == 0)
                .map(|axis| format!("`{axis}`"))
                .collect();
            let (counts, them) = match missing.len() {
                0 => return String::new(),
                1 => ("counts", "it"),
                _ => ("count", "them"),
            };
            format!(
                "multiplies `cpu.sockets`, `cpu.cores` and `cpu.threads`, and the VM leaves out \
                 {}, which {counts} as 0: set {them} to 1",
                missing.join(" and ")
            )
        }
        _ => return String::new(),
    };
    let default =
        if path::get(&preference, &["cpu", "preferredCPUTopology"]).is_none_or(Value::is_null) {
            ", the default,"
        } else {
            ""
        };
    format!(" (the preference's CPU topology is `{topology}`{default} so KubeVirt {how})")
}

/// The kinds a matcher takes, after KubeVirt's message about one it does not.
fn kinds_hint(message: &str, field: &str) -> String {
    if !message.starts_with("got unexpected kind") {
        return String::new();
    }
    let (cluster, namespaced) = if field.starts_with("spec.preference") {
        (
            "VirtualMachineClusterPreference",
            "VirtualMachinePreference",
        )
    } else {
        (
            "VirtualMachineClusterInstancetype",
            "VirtualMachineInstancetype",
        )
    };
    format!(
        " (the kind is `{cluster}`, which a matcher without `kind` means, or `{namespaced}`, \
         in any case and singular or plural)"
    )
}

fn infers(obj: &Object, side: &str) -> bool {
    !path::is_zero(path::get(&obj.value, &["spec", side, "inferFromVolume"]))
}

/// Where a name not found was looked for: with the embedded catalog on, whether it holds only a
/// namespaced copy, which it does not answer for; turned off, whether it would have answered.
pub(crate) fn looked_in(
    resource: &str,
    namespace: Option<&str>,
    name: &str,
    embedded: bool,
) -> String {
    let kind = [
        Kind::ClusterInstancetype,
        Kind::Instancetype,
        Kind::ClusterPreference,
        Kind::Preference,
    ]
    .into_iter()
    .find(|k| k.resource() == resource)
    .map_or("", Kind::as_str);
    if embedded {
        // The embedded catalog stands for what KubeVirt's operator installs: the cluster-scoped
        // objects, not their namespaced copies.
        if !crate::model::scope::is_kubevirt_cluster_scoped(kind)
            && crate::render::embedded_lookup(kind, "default", name).is_some()
        {
            // The bundle's files name no namespace: they stand for `default` only.
            let pass = match namespace.filter(|ns| *ns != "default") {
                None => "pass it with `--catalog`".to_string(),
                Some(ns) => format!(
                    "save `kubectl get {resource} -n {ns} -o yaml` to a file and pass it with \
                     `--catalog`, since the bundle's own files name no namespace and so stand \
                     for `default`"
                ),
            };
            return format!(
                "it is not in the inputs or `--catalog`, and the embedded catalog's `{kind}` of \
                 that name does not count: the embedded catalog stands for what KubeVirt's \
                 operator installs, the cluster-scoped objects only. If the namespace holds the \
                 namespaced bundle, {pass}"
            );
        }
        return "it is not in the inputs, `--catalog` or the embedded catalog".to_string();
    }
    if crate::render::installed_lookup(kind, namespace.unwrap_or("default"), name).is_some() {
        "it is not in the inputs or `--catalog`; the embedded catalog has it, but is turned off \
         here"
            .to_string()
    } else {
        "it is not in the inputs or `--catalog` (the embedded catalog is turned off)".to_string()
    }
}

/// What a finding about a reference that does not resolve says of admission, after the
/// lookup's own error; a not-found one goes on with [`ADMITTED_UNLESS_HELD`]. Where a VM
/// must be expanded (`build`), the finding is an error and says neither.
pub const ADMITTED_UNRESOLVED: &str =
    "; KubeVirt's admission lets the lookup fail, but the VM will not start";

/// See [`ADMITTED_UNRESOLVED`].
pub const ADMITTED_UNLESS_HELD: &str = " unless the cluster holds it";

fn lookup_finding(obj: &Object, err: &ExpandError, embedded: bool) -> Option<Diagnostic> {
    let (code, field, message) = match err {
        ExpandError::NotFound {
            resource,
            name,
            namespace,
            field,
            hint,
            held_unserved,
            ..
        } => (
            reference_not_found::RULE.code,
            (*field).to_string(),
            // What was probably meant (a near name, the other scope) comes before what
            // admission does: it is the fix.
            format!(
                "{}{}{ADMITTED_UNRESOLVED}{ADMITTED_UNLESS_HELD}",
                // The inputs hold it, at an apiVersion the hint names: where it was looked for
                // is not the point.
                not_found_where(
                    resource,
                    name,
                    namespace.as_deref(),
                    embedded,
                    !held_unserved
                ),
                crate::kubevirt::expand::hint_suffix(hint.as_deref())
            ),
        ),
        ExpandError::Other { field, message } => (
            bad_matcher::RULE.code,
            field.clone().unwrap_or_default(),
            format!(
                "{message}{ADMITTED_UNRESOLVED}{}",
                kinds_hint(message, field.as_deref().unwrap_or_default())
            ),
        ),
        // The admission pass reports a zero ratio and features without a `cpu` itself.
        ExpandError::Conflicts(_) | ExpandError::SpreadByZero | ExpandError::FeaturesWithoutCpu => {
            return None;
        }
    };
    // With `inferFromVolume` the matcher has no name yet: inference fills it (KV013 checks it).
    if ["instancetype", "preference"]
        .iter()
        .any(|side| field.starts_with(&format!("spec.{side}")) && infers(obj, side))
    {
        return None;
    }
    // A name that is not found is reported at the name's line, as `expand` reports it.
    let origin = if code == reference_not_found::RULE.code {
        obj.field_origin(&format!("{field}.name"))
    } else {
        obj.origin.clone()
    };
    let mut d = Diagnostic::warning(code, origin, message)
        .with_object(obj.object_ref())
        .with_field(field);
    if let Some(elsewhere) = err.elsewhere() {
        d = d.with_related(elsewhere.clone());
    }
    Some(d)
}

/// KubeVirt's words for `name` not found (of `resource`, in `namespace`), with where it was
/// looked for when `looked` (see [`looked_in`]): the same from `validate`, `expand` and `build`.
pub(crate) fn not_found_where(
    resource: &str,
    name: &str,
    namespace: Option<&str>,
    embedded: bool,
    looked: bool,
) -> String {
    let looked = if looked {
        format!(": {}", looked_in(resource, namespace, name, embedded))
    } else {
        String::new()
    };
    let namespace = namespace
        .map(|ns| format!(" in namespace \"{ns}\""))
        .unwrap_or_default();
    format!("{resource} \"{name}\" not found{namespace}{looked}")
}

/// The `KV011` warning on `vm` for the instancetype or preference `referenced` it names, which
/// the API server refuses for a field of the wrong type or out of range (reported on
/// `referenced` itself as `KV004`).
fn refused_reference(vm: &Object, referenced: &Object) -> Diagnostic {
    let side = match referenced.kind() {
        Kind::Instancetype | Kind::ClusterInstancetype => "instancetype",
        _ => "preference",
    };
    let field = format!("spec.{side}");
    Diagnostic::warning(
        reference_not_found::RULE.code,
        vm.field_origin(&format!("{field}.name")),
        format!(
            "{} (at {}) is refused by the API server for a field it cannot take (its `KV004` \
             finding), so the cluster will not hold it; KubeVirt's admission lets the lookup \
             fail, but the VM will not start until that is fixed",
            referenced.object_ref(),
            referenced.origin
        ),
    )
    .with_object(vm.object_ref())
    .with_field(field)
    .with_related(referenced.origin.clone())
}

/// What the matcher checks of KubeVirt's VM mutating webhook refuse in a VirtualMachine: the
/// instancetype matcher's faults, else the preference matcher's (KubeVirt looks at the
/// preference matcher only when the instancetype one is fine). The webhook refuses such a VM
/// on create, whatever else it says: nothing of it is stored, and no VMI started.
pub fn matcher_refusals(obj: &Object) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    check_matcher(obj, "instancetype", "InstancetypeMatcher", &mut out);
    if out.is_empty() {
        check_matcher(obj, "preference", "PreferenceMatcher", &mut out);
    }
    out
}

/// The matcher checks of KubeVirt's VM mutating webhook.
fn check_matcher(obj: &Object, side: &str, go_name: &str, out: &mut Vec<Diagnostic>) {
    let Some(matcher) = path::get(&obj.value, &["spec", side]).filter(|m| m.is_object()) else {
        return;
    };
    let text = |key: &str| matcher.get(key).and_then(Value::as_str).unwrap_or("");
    let mut refuse = |field: String, message: String| {
        out.push(
            Diagnostic::error(bad_matcher::RULE.code, obj.origin.clone(), message)
                .with_object(obj.object_ref())
                .with_field(field),
        );
    };
    let (name, kind, infer) = (text("name"), text("kind"), text("inferFromVolume"));
    if name.is_empty() && infer.is_empty() {
        refuse(
            format!("spec.{side}"),
            format!("Either Name or InferFromVolume should be provided within the {go_name}"),
        );
    }
    if !infer.is_empty() {
        if !name.is_empty() {
            refuse(
                format!("spec.{side}.name"),
                "Name already set, should be cleared before setting inferFromVolume".into(),
            );
        }
        if !kind.is_empty() {
            refuse(
                format!("spec.{side}.kind"),
                "Kind already set, should be cleared before setting inferFromVolume".into(),
            );
        }
    }
    if let Some(policy) = matcher
        .get("inferFromVolumeFailurePolicy")
        .filter(|v| !v.is_null())
    {
        let policy = policy.as_str().unwrap_or("");
        if policy != "Ignore" && policy != "Reject" {
            refuse(
                format!("spec.{side}.inferFromVolumeFailurePolicy"),
                format!("Invalid value '{policy}' for InferFromVolumeFailurePolicy"),
            );
        }
    }
}

//! `KV013` infer-from-volume.
//!
//! ## What it checks
//! A matcher's `inferFromVolume`, followed as KubeVirt's mutating webhook does
//! ([`crate::kubevirt::infer`]): the named template volume, then the PVC, DataVolume (or
//! `dataVolumeTemplates` entry), DataSource or VolumeSnapshot behind it, whose labels name the
//! default instancetype and preference. A failure KubeVirt refuses the VM for is an error (no
//! such volume, an unsupported volume type or a missing label under the `Reject` policy); an
//! object that is not among the manifests is a warning (the cluster may hold it), unless its
//! reference names an empty namespace, where no cluster holds one (an error). A matcher
//! the `Ignore` policy drops is reported for information. The VM the inference produces is
//! what the admission checks then see.
//!
//! ## Why
//! Inference runs in the cluster when the VM is created; offline we can only follow it through
//! the manifests present. A source that is not among them is a warning: the cluster may hold
//! it, but kvrender cannot tell what the VM will get.
//!
//! ## Example
//! ```yaml
//! spec:
//!   instancetype: {inferFromVolume: rootdisk}
//!   template:
//!     spec:
//!       volumes: [{name: root-disk, dataVolume: {name: fedora}}]   # not `rootdisk`
//! ```
//!
//! ## Fix
//! Name an existing volume, or add the DataVolume/PVC (or its directory with `--catalog`). For
//! an object that lives in the cluster only, the warning gives the `kubectl get` command that
//! exports it.

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::kubevirt::infer::{self, InferError, Inference};
use crate::model::{Object, path};
use crate::validate::{Context, Rule};
use serde_json::Value;

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::INFERENCE,
    name: "infer-from-volume",
    summary: "An `inferFromVolume` KubeVirt cannot resolve (error), or whose source is not among the manifests (warning).",
    severity: Severity::Error,
};

/// Where an inferred matcher came from: the side, the volume and the object whose labels gave
/// it.
pub struct Source {
    /// The matcher inferred.
    pub side: infer::Side,
    /// The volume named by `inferFromVolume`.
    pub volume: String,
    /// The object whose labels gave the matcher.
    pub object: Option<infer::Looked>,
}

/// Infer the matchers of a VM that asks for it. Returns the VM as the mutating webhook leaves
/// it when inference succeeds (the admission checks run on that) and where each matcher it
/// inferred came from; `None` when the VM does not use inference or inference cannot go on
/// offline.
pub fn infer(
    obj: &Object,
    ctx: &Context<'_>,
    out: &mut Vec<Diagnostic>,
) -> Option<(Object, Vec<Source>)> {
    if !infer::uses_inference(&obj.value) {
        return None;
    }
    match infer::infer_and_mutate(obj, ctx.index) {
        Ok(inferred) => {
            let mut sources = Vec::new();
            for (side, what) in [
                (infer::Side::Instancetype, &inferred.instancetype),
                (infer::Side::Preference, &inferred.preference),
            ] {
                if let Some(Inference::Inferred { volume, object, .. }) = what {
                    sources.push(Source {
                        side,
                        volume: volume.clone(),
                        object: object.clone(),
                    });
                }
                if let Some(Inference::Cleared { volume, reason }) = what {
                    out.push(
                        Diagnostic::error(
                            RULE.code,
                            obj.origin.clone(),
                            format!(
                                "no {} inferred from volume {volume} ({reason}): the \
                                 `Ignore` policy drops the matcher",
                                side.key()
                            ),
                        )
                        .with_severity(Severity::Info)
                        .with_object(obj.object_ref())
                        .with_field(format!("spec.{}", side.key())),
                    );
                }
            }
            Some((Object::new(inferred.vm, obj.origin.clone()), sources))
        }
        Err(err) => {
            out.push(finding(obj, &err, ctx.index));
            None
        }
    }
}

/// For a label KubeVirt requires and `looked` lacks: the label of it that may have been meant.
fn label_hint(message: &str, looked: &infer::Looked, index: &crate::resolve::Index<'_>) -> String {
    let Some(required) = message
        .strip_prefix("unable to find required ")
        .and_then(|rest| rest.strip_suffix(" label on the volume"))
    else {
        return String::new();
    };
    let labels = index
        .get_str(looked.kind, &looked.namespace, &looked.name)
        .and_then(|o| path::get(&o.value, &["metadata", "labels"]))
        .and_then(Value::as_object);
    labels
        .and_then(|l| crate::diagnostic::nearest_name(required, l.keys().map(String::as_str)))
        .map(|near| format!("; it has the label `{near}`: did you mean `{required}`?"))
        .unwrap_or_default()
}

/// Where the namespace of a looked-up object of `kind` is set, for a hint.
fn namespace_hint(kind: &str) -> &'static str {
    match kind {
        "DataSource" => " (set the DataVolume's `sourceRef.namespace`)",
        "PersistentVolumeClaim" => {
            " (a VM's claims are its own namespace's; a DataVolume's `source.pvc` names its own)"
        }
        "VolumeSnapshot" => " (set the DataVolume's `source.snapshot.namespace`)",
        _ => "",
    }
}

/// Whether the VM's `dataVolumeTemplates` entry `name` carries a default instancetype or
/// preference label.
fn template_labels(vm: &Object, name: &str) -> bool {
    path::get(&vm.value, &["spec", "dataVolumeTemplates"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|t| path::str_at(t, &["metadata", "name"]) == Some(name))
        .filter_map(|t| path::get(t, &["metadata", "labels"]).and_then(Value::as_object))
        .any(|labels| {
            labels.contains_key(infer::DEFAULT_INSTANCETYPE_LABEL)
                || labels.contains_key(infer::DEFAULT_PREFERENCE_LABEL)
        })
}

/// For a volume `name` the VM's template does not have: the one it may have meant, or the
/// volumes it has.
fn volume_hint(vm: &Object, name: &str) -> String {
    let names: Vec<&str> = path::get(&vm.value, &["spec", "template", "spec", "volumes"])
        .and_then(Value::as_array)
        .map(|volumes| {
            volumes
                .iter()
                .filter_map(|v| v.get("name").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    if names.contains(&name) {
        return String::new();
    }
    if let Some(near) = crate::diagnostic::nearest_name(name, names.iter().copied()) {
        return format!("; did you mean `{near}`?");
    }
    match names.as_slice() {
        [] => "; the template has no volumes".to_string(),
        names if names.len() <= 8 => format!(
            "; the template's volumes are {}",
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => String::new(),
    }
}

fn finding(obj: &Object, err: &InferError, index: &crate::resolve::Index<'_>) -> Diagnostic {
    let field = err
        .side
        .map(|s| format!("spec.{}.inferFromVolume", s.key()))
        .or_else(|| err.causes.first().map(|c| c.field.clone()));
    // A missing PVC, DataVolume, DataSource or snapshot may exist in the cluster only, unless
    // it was looked up in no namespace.
    let missing = err.message.ends_with(" not found");
    let nowhere = err.object.as_ref().filter(|o| o.in_no_namespace());
    let d = if let (true, Some(looked)) = (missing, nowhere) {
        Diagnostic::error(
            RULE.code,
            obj.origin.clone(),
            format!(
                "{} (KubeVirt looks the {} up in no namespace: {})",
                err.message,
                looked.kind,
                infer::Looked::NO_NAMESPACE
            ),
        )
    } else if missing && err.object.is_some() {
        let export = err
            .object
            .as_ref()
            .and_then(|o| o.export_command())
            .map(|cmd| {
                format!(
                    "; to check it offline, save `{cmd}` to a file and pass it with `--catalog`"
                )
            })
            .unwrap_or_default();
        // The same name in another namespace is the likelier intent than an object the
        // manifests leave out.
        let elsewhere = err
            .object
            .as_ref()
            .filter(|o| !o.namespace.is_empty())
            .and_then(|o| {
                let ns = index.other_namespace_of(o.kind, &o.namespace, &o.name)?;
                Some(format!(
                    "; a {} of that name is in namespace \"{ns}\", but KubeVirt looks it up in \
                     \"{}\"{}",
                    o.kind,
                    o.namespace,
                    namespace_hint(o.kind)
                ))
            })
            .unwrap_or_default();
        Diagnostic::warning(
            RULE.code,
            obj.origin.clone(),
            format!(
                "cannot infer from the manifests present: {}{elsewhere} (the cluster may hold \
                 it; KubeVirt refuses the VM if it does not{export})",
                err.message
            ),
        )
    } else if err.causes.is_empty() {
        // KubeVirt's words name the label or volume; which volume and object were followed,
        // as `expand` says it.
        let mut message = match (&err.volume, err.side, &err.object) {
            (Some(v), Some(side), Some(looked)) => format!(
                "cannot infer the {} from volume `{v}`: {} (looked at {looked})",
                side.key(),
                err.message
            ),
            _ => err.message.clone(),
        };
        if let Some(v) = &err.volume {
            message.push_str(&volume_hint(obj, v));
        }
        if let Some(looked) = &err.object {
            message.push_str(&label_hint(&err.message, looked, index));
        }
        if let Some(looked) = &err.object
            && looked.kind == infer::DVT
            && template_labels(obj, &looked.name)
        {
            message.push_str(
                "; KubeVirt reads a dataVolumeTemplates entry's spec, never its labels: put the \
                 labels on the DataSource or PersistentVolumeClaim its source names",
            );
        }
        Diagnostic::error(RULE.code, obj.origin.clone(), message)
    } else {
        Diagnostic::error(RULE.code, obj.origin.clone(), err.message.clone())
    };
    let d = d.with_object(obj.object_ref());
    match field {
        Some(f) => d.with_field(f),
        None => d,
    }
}

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
use crate::model::Object;
use crate::validate::{Context, Rule};

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::INFERENCE,
    name: "infer-from-volume",
    summary: "An `inferFromVolume` KubeVirt cannot resolve (error), or whose source is not among the manifests (warning).",
    severity: Severity::Error,
};

/// Infer the matchers of a VM that asks for it. Returns the VM as the mutating webhook leaves
/// it when inference succeeds (the admission checks run on that), `None` when the VM does not
/// use inference or inference cannot go on offline.
pub fn infer(obj: &Object, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) -> Option<Object> {
    if !infer::uses_inference(&obj.value) {
        return None;
    }
    match infer::infer_and_mutate(obj, ctx.index) {
        Ok(inferred) => {
            for (side, what) in [
                ("instancetype", &inferred.instancetype),
                ("preference", &inferred.preference),
            ] {
                if let Some(Inference::Cleared { volume, reason }) = what {
                    out.push(
                        Diagnostic::error(
                            RULE.code,
                            obj.origin.clone(),
                            format!(
                                "no {side} inferred from volume {volume} ({reason}): the \
                                 `Ignore` policy drops the matcher"
                            ),
                        )
                        .with_severity(Severity::Info)
                        .with_object(obj.object_ref())
                        .with_field(format!("spec.{side}")),
                    );
                }
            }
            Some(Object::new(inferred.vm, obj.origin.clone()))
        }
        Err(err) => {
            out.push(finding(obj, &err));
            None
        }
    }
}

fn finding(obj: &Object, err: &InferError) -> Diagnostic {
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
        Diagnostic::warning(
            RULE.code,
            obj.origin.clone(),
            format!(
                "cannot infer from the manifests present: {} (the cluster may hold it; KubeVirt \
                 refuses the VM if it does not{export})",
                err.message
            ),
        )
    } else {
        Diagnostic::error(RULE.code, obj.origin.clone(), err.message.clone())
    };
    let d = d.with_object(obj.object_ref());
    match field {
        Some(f) => d.with_field(f),
        None => d,
    }
}

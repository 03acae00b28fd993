//! `KV013` infer-from-volume.
//!
//! ## What it checks
//! A matcher's `inferFromVolume`: the named volume must exist in `spec.template.spec.volumes`
//! (else KubeVirt refuses the VM whatever the failure policy), be a `persistentVolumeClaim` or
//! `dataVolume` volume (else the VM is refused unless the policy is `Ignore`), and the claim or
//! DataVolume it names should be among the manifests (a `dataVolumeTemplates` entry, a
//! DataVolume or a PersistentVolumeClaim).
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
//! Name an existing volume, or add the DataVolume/PVC (or its directory with `--catalog`).

use serde_json::Value;

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::model::{Kind, Object, path};
use crate::validate::{Context, Rule};

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::INFERENCE,
    name: "infer-from-volume",
    summary: "An `inferFromVolume` that names no volume, an unsupported one, or a source not among the manifests.",
    severity: Severity::Error,
};

/// Check both matchers of a VirtualMachine.
pub fn check(obj: &Object, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    if obj.kind() != Kind::VirtualMachine {
        return;
    }
    for side in ["instancetype", "preference"] {
        if let Some(d) = check_side(obj, ctx, side) {
            out.push(d.with_object(obj.object_ref()));
        }
    }
}

fn check_side(obj: &Object, ctx: &Context<'_>, side: &str) -> Option<Diagnostic> {
    let volume_name = path::str_at(&obj.value, &["spec", side, "inferFromVolume"])?;
    if volume_name.is_empty() {
        return None;
    }
    let field = format!("spec.{side}.inferFromVolume");
    let error = |message: String| {
        Some(Diagnostic::error(RULE.code, obj.origin.clone(), message).with_field(field.clone()))
    };
    let volumes = path::get(&obj.value, &["spec", "template", "spec", "volumes"])
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let Some(volume) = volumes
        .iter()
        .find(|v| v.get("name").and_then(Value::as_str) == Some(volume_name))
    else {
        return error(format!(
            "unable to find volume {volume_name} to infer defaults: `spec.template.spec.volumes` \
             has no volume of that name, so KubeVirt refuses the VM"
        ));
    };
    let policy = path::str_at(&obj.value, &["spec", side, "inferFromVolumeFailurePolicy"]);
    let namespace = obj.effective_namespace();
    let found = |kind: &str, name: &str| ctx.index.get_str(kind, namespace, name).is_some();
    let (what, name, present) =
        if let Some(claim) = path::str_at(volume, &["persistentVolumeClaim", "claimName"]) {
            (
                "PersistentVolumeClaim",
                claim,
                found("PersistentVolumeClaim", claim),
            )
        } else if let Some(dv) = path::str_at(volume, &["dataVolume", "name"]) {
            let templated = path::get(&obj.value, &["spec", "dataVolumeTemplates"])
                .and_then(Value::as_array)
                .is_some_and(|t| {
                    t.iter()
                        .any(|t| path::str_at(t, &["metadata", "name"]) == Some(dv))
                });
            (
                "DataVolume",
                dv,
                templated || found("DataVolume", dv) || found("PersistentVolumeClaim", dv),
            )
        } else {
            if policy == Some("Ignore") {
                return None;
            }
            return error(format!(
                "volume {volume_name} is neither a persistentVolumeClaim nor a dataVolume, so \
             nothing can be inferred from it and KubeVirt refuses the VM (set \
             `inferFromVolumeFailurePolicy: Ignore` to drop the matcher instead)"
            ));
        };
    if present {
        return None;
    }
    Some(
        Diagnostic::warning(
            RULE.code,
            obj.origin.clone(),
            format!(
                "cannot infer the {side} from volume {volume_name}: {what} `{name}` is not among \
                 the manifests (the cluster may hold it)"
            ),
        )
        .with_field(field),
    )
}

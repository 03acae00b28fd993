//! `KV036` replica-set-spec, and the VirtualMachineInstances of a
//! VirtualMachineInstanceReplicaSet.
//!
//! ## What it checks
//! A VirtualMachineInstanceReplicaSet (`kubevirt.io`) keeps a VMI template and keeps a number
//! of VMIs made of it running. KubeVirt's replica set webhook refuses one:
//! - whose `selector` does not parse, or does not select the labels of the template's
//!   `metadata` (`selector does not match labels.`);
//! - whose template has huge pages and neither `memory.guest` nor a memory request: the webhook
//!   fails on it (it reads the guest memory that is not there), and with it the request.
//!
//! Its controller creates no VMI, and says so only in its log, of a replica set it admitted
//! whose template has no labels (a `selector: {}` selects them all). These are this rule's.
//!
//! The webhook also checks the template's VMI `spec` as written, with the VMI webhook's own
//! checks, before any preset or default: those findings are `KV034`'s, at the template's
//! fields. The API server's schema of the replica set (types, required fields, unknown fields)
//! is `KV004`'s and `KV022`'s.
//!
//! A replica set KubeVirt admits can still create no working VMI: each VMI it creates goes
//! through the VMI webhooks, which apply the presets that select it and KubeVirt's defaults,
//! and check the result. So every check `validate` makes of a VMI document (`KV034` with its
//! presets applied, conflicting presets, ...) is made of the replica set's VMI too, and
//! reported on the replica set, at the template's field, saying it is about its VMIs.
//!
//! ## Why
//! `kubectl apply` of a replica set whose template no preset can be applied to, or that asks
//! for no memory once its presets are applied, succeeds. The replica set then creates no VMI
//! (it retries, and each attempt is refused), which only its events tell.
//!
//! ## Example
//! ```yaml
//! kind: VirtualMachineInstanceReplicaSet
//! spec:
//!   selector: {}
//!   template:
//!     metadata: {}          # no labels: the controller creates no VMI
//! ```
//!
//! ## Fix
//! Give the template labels and make the selector select them.

use serde_json::Value;

use super::{pool, templated, vm_spec};
use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::kubevirt::presets::selector;
use crate::kubevirt::replica_set;
use crate::model::{Object, path};
use crate::validate::{Context, Rule};

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::REPLICA_SET_SPEC,
    name: "replica-set-spec",
    summary: "KubeVirt's VirtualMachineInstanceReplicaSet webhook refuses the replica set: a selector that does not parse or does not select the labels of the VMI template, or a template with huge pages and no guest memory or memory request, on which the webhook fails; or KubeVirt admits it and its controller creates no VMI, because the template has no labels. (What the template and the VMIs made of it get wrong is reported on the replica set under the VMI rules' codes.)",
    severity: Severity::Error,
};

/// Check a VirtualMachineInstanceReplicaSet: its selector and template as its webhook does,
/// then, when nothing so far refuses it, the VMI its controller creates as `validate` checks a
/// VMI. `out` holds the findings about it so far (its schema's among them). Other objects are
/// skipped.
pub fn check(obj: &Object, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    if !replica_set::is_replica_set(obj) {
        return;
    }
    let Some(spec) = obj.spec() else {
        return;
    };
    let refused_before = out.iter().any(Diagnostic::is_error);
    let mut found: Vec<(&'static str, String, String)> = Vec::new();
    // A missing or `null` template is the schema's (`KV004`).
    if let Some(template) = spec.get("template").filter(|t| t.is_object()) {
        for (field, message) in
            vm_spec::vmi_template_refusals(template, "spec.template", ctx.profile)
        {
            found.push((vm_spec::RULE.code, field, message));
        }
        if let Some(template_spec) = template.get("spec")
            && pool::webhook_fails_on_huge_pages(template_spec)
        {
            found.push((
                RULE.code,
                format!("{}.domain.memory", replica_set::TEMPLATE_SPEC),
                "KubeVirt's replica set webhook fails on a template with huge pages and neither \
                 `memory.guest` nor `resources.requests.memory`: it reads the guest memory that \
                 is not there, and the API server refuses the replica set (`failed calling \
                 webhook`); set `domain.memory.guest`"
                    .into(),
            ));
        }
        let labels = path::get(template, &["metadata", "labels"])
            .and_then(Value::as_object)
            .map(|labels| {
                labels
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        // A missing selector is the schema's; Go's webhook would select nothing with it.
        if let Some(given) = spec.get("selector").filter(|s| !s.is_null()) {
            match selector::parse(Some(given)) {
                Err(e) => found.push((RULE.code, "spec.selector".into(), e)),
                Ok(s) if !s.matches(&labels) => found.push((
                    RULE.code,
                    "spec.selector".into(),
                    "selector does not match labels. (the replica set's `selector` must select \
                     the labels of `spec.template.metadata`: KubeVirt refuses the replica set)"
                        .into(),
                )),
                Ok(_) => {}
            }
        }
    }
    let refused = refused_before || !found.is_empty();
    templated::push_found(obj, RULE.code, found, out);
    if refused {
        // KubeVirt refuses the replica set: it creates no VMI.
        return;
    }
    if let Some(reason) = replica_set::idle_reason(obj) {
        let field = "spec.template.metadata.labels";
        out.push(
            Diagnostic::error(
                RULE.code,
                obj.field_origin("spec.template.metadata"),
                format!(
                    "KubeVirt admits the replica set, but its controller creates no \
                     VirtualMachineInstance: {reason}; give the template labels and a \
                     `selector` that selects them"
                ),
            )
            .with_field(field)
            .with_object(obj.object_ref()),
        );
        return;
    }
    let Some(vmi) = replica_set::vmi_of(obj) else {
        return;
    };
    let skip = |d: &Diagnostic| {
        // Its webhook checks the schema too (numbers beyond a float's range as well), and the
        // controller may write the labels KubeVirt keeps for itself.
        templated::OWNERS_OWN.contains(&d.code)
            || (d.code == vm_spec::RULE.code && d.message.starts_with(vm_spec::RESERVED_LABELS))
    };
    let said_of = |d| about_its_vmis(obj, &vmi, d);
    templated::report_made(&vmi, ctx, skip, said_of, out);
}

/// A finding about `vmi`, a VMI the replica set creates, said of the replica set: at the field
/// of the template it comes from, on that field's line, ending with a note that it is about the
/// VMIs the replica set creates.
pub fn about_its_vmis(rs: &Object, vmi: &Object, d: Diagnostic) -> Diagnostic {
    let base = vmi
        .name()
        .strip_suffix(replica_set::RANDOM_SUFFIX)
        .unwrap_or(vmi.name());
    let note = format!(
        " (about each VMI the replica set creates from its template, named \"{base}\" and five \
         random characters: KubeVirt admits the replica set itself)"
    );
    templated::said_of(rs, d, replica_set::rs_field, &note)
}

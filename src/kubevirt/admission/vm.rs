//! The instancetype/preference part of KubeVirt's VirtualMachine validating webhook
//! (`pkg/instancetype/webhooks/vm/admitter.go`, called from the VM admitter in
//! `pkg/virt-api/webhooks/validating-webhook/admitters/vms-admitter.go`), in upstream order:
//!
//! 1. look up the instancetype and the preference; a failed lookup is ignored (that side counts
//!    as absent) and neither found means admitted;
//! 2. the spread check;
//! 3. apply the instancetype (every conflict is a cause) and the preference to a copy of the
//!    template;
//! 4. the cluster defaults on the copy, for every VM, with or without an instancetype or
//!    preference (a default KubeVirt refuses is a cause);
//! 5. the preference requirements (first failure only).
//!
//! The copy is kept in the response ([`Response::applied`]): the webhook validates the rest of
//! the VM's spec on it.

use serde_json::{Map, Value};

use super::{Cause, Reason, Response, requirements, spread};
use crate::kubevirt::conflict;
use crate::kubevirt::expand::{self, ExpandError};
use crate::kubevirt::profile::ClusterProfile;
use crate::kubevirt::{defaults, infer, instancetype_apply, preference_apply};
use crate::model::path::Fields;
use crate::model::{Object, path};
use crate::resolve::Index;

/// Check a VirtualMachine's instancetype and preference as KubeVirt's webhook does on create.
pub fn admit<'a>(vm: &Object, index: &Index<'a>, profile: &ClusterProfile) -> Response {
    let mut response = Response::default();
    let mut found = |r: Result<Option<std::borrow::Cow<'a, Value>>, ExpandError>| match r {
        Ok(spec) => spec,
        Err(e) => {
            response.ignored_lookups.push(e);
            None
        }
    };
    // Each looked up on its own, so that one's failure cannot hide the other's.
    // Borrowed from the index: nothing below changes them.
    let instancetype = found(expand::find_instancetype_spec(vm, index));
    let preference = found(expand::find_preference_spec(vm, index));
    let (instancetype, preference) = (instancetype.as_deref(), preference.as_deref());
    if instancetype.is_none() && preference.is_none() && response.ignored_lookups.is_empty() {
        // Nothing to apply, but the defaults run on every VM; the only one that can fail is the
        // default interface, which needs no copy to find out. (A VM whose lookups failed goes
        // on: its copy, with the defaults only, is what the webhook validates next.)
        let spec = path::get(&vm.value, &["spec", "template", "spec"]).unwrap_or(&Value::Null);
        if (spec.is_object() || spec.is_null())
            && let Some(e) = defaults::default_interface_refused(profile, spec)
        {
            response.causes.push(defaults_failure(&e));
        }
        return response;
    }
    if let Some(cause) = spread::check(instancetype, preference) {
        response.causes.push(cause);
        return response;
    }
    let mut template = path::get(&vm.value, &["spec", "template"])
        .filter(|t| t.is_object())
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));
    // The VM reaches this webhook after the mutating one, which gives a VM without an
    // architecture its preference's, else the one its DataSource names.
    if preference.and_then(infer::preferred_architecture).is_none()
        && let Some(arch) =
            infer::architecture_from_data_source(&vm.value, vm.effective_namespace(), index)
    {
        path::set(
            &mut template,
            &["spec", "architecture"],
            Value::String(arch.into()),
        );
    }
    if let Some(it) = instancetype {
        let conflicts = instancetype_apply::apply(it, preference, &mut template);
        if !conflicts.is_empty() {
            response.causes = conflicts
                .iter()
                .map(|c| Cause {
                    reason: Reason::Conflict,
                    field: c.path.clone(),
                    message: conflict::message(std::slice::from_ref(c)),
                })
                .collect();
            return response;
        }
    }
    if let Some(pref) = preference {
        if instancetype.is_none() && preference_apply::dereferences_missing_cpu(pref, &template) {
            // The webhook fails on a nil dereference, and the API server refuses the request.
            response.causes.push(Cause {
                reason: Reason::InvalidSpec,
                field: "spec.preference".to_string(),
                message: ExpandError::FeaturesWithoutCpu.to_string(),
            });
            return response;
        }
        preference_apply::apply(pref, &mut template);
    }
    if path::ensure_map(&mut template, &["spec"]).is_none() {
        return response;
    }
    let Some(spec) = template.field_mut("spec") else {
        return response;
    };
    // KubeVirt refuses the request when defaulting fails, before the requirements.
    if let Err(cause) = defaults_cause(profile, spec) {
        response.causes.push(cause);
        return response;
    }
    if let Some(failure) = requirements::check(instancetype, preference, spec) {
        response.causes.push(Cause {
            reason: Reason::Requirements,
            field: failure.paths.join(", "),
            message: format!(
                "failure checking preference requirements: {}",
                failure.reason
            ),
        });
    }
    response.applied = Some(std::mem::take(spec));
    response
}

/// The cluster defaults on a copy of a VM's template spec, as the webhook applies them; a
/// default KubeVirt refuses for this VM is a cause. A template spec that is not a mapping is
/// left to the type checks.
fn defaults_cause(profile: &ClusterProfile, spec: &mut Value) -> Result<(), Cause> {
    if !(spec.is_object() || spec.is_null()) {
        return Ok(());
    }
    defaults::apply(profile, spec).map_err(|e| defaults_failure(&e))
}

/// The cause for a default KubeVirt refuses.
fn defaults_failure(e: &defaults::DefaultsError) -> Cause {
    Cause {
        reason: Reason::Defaults,
        field: "spec.template.spec".to_string(),
        message: e.to_string(),
    }
}

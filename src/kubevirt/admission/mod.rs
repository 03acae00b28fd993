//! KubeVirt's admission checks for instancetypes, preferences and VirtualMachines, offline.
//!
//! Mirrors the validating webhooks of KubeVirt (d923fdb815):
//!
//! - `pkg/instancetype/webhooks/admitter.go`: instancetype and cluster instancetype specs
//!   ([`instancetype`]);
//! - `pkg/instancetype/preference/webhooks/admitter.go` and `.../preference/validation/cpu.go`:
//!   preference specs and the spread check ([`preference`], [`spread`]);
//! - `pkg/instancetype/webhooks/vm/admitter.go` plus the part of
//!   `pkg/virt-api/webhooks/validating-webhook/admitters/vms-admitter.go` that calls it:
//!   the instancetype/preference checks of a VirtualMachine ([`vm`]);
//! - `pkg/instancetype/preference/requirements`: preference requirements ([`requirements`]).
//!
//! The rest of the VM webhook (disks, networks, feature gates, ...) is not reproduced. The
//! webhooks' OpenAPI schema check is approximated by `crate::validate`'s field rules.

pub mod instancetype;
pub mod preference;
pub mod requirements;
pub mod spread;
pub mod topology;
pub mod vm;

use serde_json::Value;

use crate::kubevirt::expand::ExpandError;
use crate::kubevirt::profile::ClusterProfile;
use crate::model::path::Fields;
use crate::model::{Kind, Object};
use crate::resolve::Index;

/// Which check refused the object: each maps to its own diagnostic code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// The instancetype or preference webhook refuses the spec itself.
    InvalidSpec,
    /// The instancetype's vCPUs do not fit the preference's spread topology.
    Spread,
    /// The VM sets a field the instancetype owns.
    Conflict,
    /// The VM does not meet the preference's requirements.
    Requirements,
    /// KubeVirt's defaulting of the VM fails: a cluster default it refuses (`slirp` as the
    /// default interface, or `bridge` where the pod network does not allow it) for a VM that
    /// lists no interfaces or networks.
    Defaults,
}

/// One reason the webhook refuses the object (KubeVirt's `metav1.StatusCause`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cause {
    /// Which check produced it.
    pub reason: Reason,
    /// The field path KubeVirt reports.
    pub field: String,
    /// KubeVirt's message.
    pub message: String,
}

/// The webhook's answer. The object is admitted when `causes` is empty.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Response {
    /// Why the object is refused.
    pub causes: Vec<Cause>,
    /// Warnings KubeVirt returns with an admitted object.
    pub warnings: Vec<String>,
    /// Lookups of the instancetype or preference that failed: KubeVirt's VM webhook ignores them
    /// (the side counts as absent), but the VM will not start.
    pub ignored_lookups: Vec<ExpandError>,
    /// A VM's template spec as the webhook goes on to validate it: with the instancetype, the
    /// preference and the cluster defaults applied. Set for a VM that names an instancetype or
    /// a preference (whether or not the lookups found them) when the instancetype steps and the
    /// defaults held.
    pub applied: Option<Value>,
}

impl Response {
    /// Whether the webhook admits the object.
    pub fn allowed(&self) -> bool {
        self.causes.is_empty()
    }
}

/// Run the validating webhook KubeVirt has for `obj`'s kind; `None` for kinds without one here.
pub fn admit(obj: &Object, index: &Index<'_>, profile: &ClusterProfile) -> Option<Response> {
    let spec = obj.value.field("spec");
    match obj.kind() {
        Kind::Instancetype
        | Kind::ClusterInstancetype
        | Kind::Preference
        | Kind::ClusterPreference
            if spec.is_none() =>
        {
            Some(spec_required())
        }
        Kind::Instancetype | Kind::ClusterInstancetype => Some(instancetype::admit(spec)),
        Kind::Preference | Kind::ClusterPreference => Some(preference::admit(spec)),
        Kind::VirtualMachine => Some(vm::admit(obj, index, profile)),
        _ => None,
    }
}

/// The webhooks of the four instancetype and preference kinds check the object against its
/// schema first, which requires `spec` (a `null` one passes): without it, that is the only cause.
fn spec_required() -> Response {
    Response {
        causes: vec![Cause {
            reason: Reason::InvalidSpec,
            field: "spec".into(),
            message: "spec in body is required".into(),
        }],
        ..Response::default()
    }
}

/// A Go `uint32` field: its value, or 0 when absent or not a number that fits.
pub(crate) fn uint32_at(v: Option<&serde_json::Value>, path: &[&str]) -> u32 {
    v.and_then(|v| crate::model::path::get(v, path))
        .and_then(serde_json::Value::as_u64)
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(0)
}

//! Applying an instancetype to a VirtualMachine template (mirrors KubeVirt's
//! `pkg/instancetype/apply`). Being written.

use serde_json::Value;

use crate::kubevirt::conflict::Conflict;

/// Apply the instancetype `spec` (and the cpu topology preference of `preference`, a preference
/// `spec`) to `template` (the VM's `spec.template`: `{metadata, spec}`) in place. Returns every
/// conflict, in KubeVirt's order; on conflicts the template may be partly changed.
pub fn apply(
    _instancetype: &Value,
    _preference: Option<&Value>,
    _template: &mut Value,
) -> Vec<Conflict> {
    Vec::new()
}

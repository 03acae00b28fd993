//! Applying a preference to a VirtualMachine template (mirrors KubeVirt's
//! `pkg/instancetype/preference/apply`). Being written.

use serde_json::Value;

/// Apply the preference `spec` to `template` (the VM's `spec.template`: `{metadata, spec}`) in
/// place, only where the VM is silent (with KubeVirt's few exceptions).
pub fn apply(_preference: &Value, _template: &mut Value) {}

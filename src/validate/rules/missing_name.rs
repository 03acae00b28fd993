//! `KV003` missing-name.
//!
//! ## What it checks
//! That every instancetype, preference and VirtualMachine has a `metadata.name`.
//!
//! ## Why
//! The API server refuses an object without a name (these kinds take no `generateName` in a
//! GitOps tree), and nothing can reference it.
//!
//! ## Example
//! ```yaml
//! kind: VirtualMachineClusterInstancetype
//! metadata: {labels: {size: small}}
//! ```
//!
//! ## Fix
//! Give the object a `metadata.name`.

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::model::{Kind, Object};
use crate::validate::Rule;

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::BAD_NAME,
    name: "missing-name",
    summary: "An instancetype, preference or VirtualMachine has no `metadata.name`.",
    severity: Severity::Error,
};

/// Report a KubeVirt object without a name.
pub fn check(obj: &Object, out: &mut Vec<Diagnostic>) {
    if obj.kind() == Kind::Other || !obj.name().is_empty() {
        return;
    }
    let generate = obj
        .value
        .get("metadata")
        .and_then(|m| m.get("generateName"))
        .is_some();
    if generate && obj.kind() == Kind::VirtualMachine {
        // `kubectl create` accepts generateName for VMs; nothing references such a VM.
        return;
    }
    out.push(
        Diagnostic::error(
            RULE.code,
            obj.origin.clone(),
            format!("the {} has no `metadata.name`", obj.kind_str()),
        )
        .with_object(obj.object_ref())
        .with_field("metadata.name"),
    );
}

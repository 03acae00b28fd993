//! `KV003` bad-name.
//!
//! ## What it checks
//! That every instancetype, preference and VirtualMachine (and every other KubeVirt kind) has
//! a `metadata.name`, and one the API server accepts: a DNS subdomain of at most 253
//! characters, lowercase letters, digits, `-` and `.`.
//!
//! ## Why
//! The API server refuses an object without a name (these kinds take no `generateName` in a
//! GitOps tree) or with an invalid one, and nothing can reference it. `expand` and `build`
//! refuse such a VM with the same finding.
//!
//! ## Example
//! ```yaml
//! kind: VirtualMachineClusterInstancetype
//! metadata: {name: U1.Medium}
//! ```
//!
//! ## Fix
//! Give the object a valid `metadata.name`.

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::model::{Kind, Object};
use crate::pipeline;
use crate::validate::Rule;

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::BAD_NAME,
    name: "bad-name",
    summary: "An instancetype, preference or VirtualMachine has no `metadata.name`, or one the API server refuses.",
    severity: Severity::Error,
};

/// Report a KubeVirt object without a valid name.
pub fn check(obj: &Object, out: &mut Vec<Diagnostic>) {
    if obj.kind() == Kind::Other {
        return;
    }
    let generate = || {
        obj.value
            .get("metadata")
            .and_then(|m| m.get("generateName"))
            .is_some()
    };
    if obj.name().is_empty() && obj.kind() == Kind::VirtualMachine && generate() {
        // `kubectl create` accepts generateName for VMs; nothing references such a VM.
        return;
    }
    out.extend(pipeline::name_diagnostic(obj));
}

//! `KV012` bad-matcher.
//!
//! ## What it checks
//! The matchers `spec.instancetype` and `spec.preference` as KubeVirt's mutating webhook does
//! (a name or `inferFromVolume`, not both, no `kind` with `inferFromVolume`, a failure policy
//! of `Ignore` or `Reject`): errors. A matcher the lookup cannot use (an unknown `kind`, a
//! ControllerRevision holding something else) is a warning: the webhook admits the VM, which
//! will not start.
//!
//! ## Why
//! The first kind is refused when applied; the second fails later, at start.
//!
//! ## Example
//! ```yaml
//! spec:
//!   instancetype: {name: u1.small, kind: VirtualMachineFlavor}
//! ```
//!
//! ## Fix
//! Use `VirtualMachineInstancetype`/`VirtualMachineClusterInstancetype` (or the preference
//! kinds), or leave `kind` out for the cluster-wide kind.

use crate::diagnostic::{Severity, codes};
use crate::validate::Rule;

/// The rule (found by [`super::admission`]).
pub const RULE: Rule = Rule {
    code: codes::BAD_MATCHER,
    name: "bad-matcher",
    summary: "An instancetype or preference matcher KubeVirt refuses or cannot resolve (unknown kind, missing name, ...), or another error KubeVirt's expansion or its VM webhook's defaulting fails with (a cluster default it refuses for a VM that lists no interfaces, such as slirp as the default interface).",
    severity: Severity::Error,
};

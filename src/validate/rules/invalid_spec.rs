//! `KV030` invalid-spec.
//!
//! ## What it checks
//! What KubeVirt's instancetype and preference webhooks check: `memory.overcommitPercent` in
//! 0..=100 and not with `memory.hugepages`; `cpu.preferredCPUTopology` one of `sockets`,
//! `cores`, `threads`, `spread`, `any` (or a deprecated `prefer*` name); with a spread topology,
//! `spreadOptions.across` one of `SocketsCores`, `CoresThreads`, `SocketsCoresThreads`, and a
//! ratio of 2 for `CoresThreads`. And, for a VirtualMachine, a preference KubeVirt fails to
//! apply: `cpu.preferredCPUFeatures` when the VM has no instancetype and no `domain.cpu`.
//!
//! ## Why
//! The webhook refuses the object with these messages. The VM webhook fails on the preference
//! (it reads the missing `cpu`), and the cluster refuses the VM.
//!
//! ## Example
//! ```yaml
//! kind: VirtualMachineClusterPreference
//! spec:
//!   cpu: {preferredCPUTopology: Cores}   # case-sensitive: cores
//! ```
//!
//! ## Fix
//! Use a value from the list in the message.

use crate::diagnostic::{Severity, codes};
use crate::validate::Rule;

/// The rule (found by [`super::admission`]).
pub const RULE: Rule = Rule {
    code: codes::INVALID_SPEC,
    name: "invalid-spec",
    summary: "An instancetype or preference spec KubeVirt's webhook refuses (overcommitPercent, preferredCPUTopology, spreadOptions), or a preference KubeVirt fails to apply to a VM (CPU features for a VM without `domain.cpu` or an instancetype).",
    severity: Severity::Error,
};

//! `KV030` invalid-spec.
//!
//! ## What it checks
//! What KubeVirt's instancetype and preference webhooks check: `memory.overcommitPercent` in
//! 0..=100 and not with `memory.hugepages`; `cpu.preferredCPUTopology` one of `sockets`,
//! `cores`, `threads`, `spread`, `any` (or a deprecated `prefer*` name); with a spread topology,
//! `spreadOptions.across` one of `SocketsCores`, `CoresThreads`, `SocketsCoresThreads`, and a
//! ratio of 2 for `CoresThreads`.
//!
//! ## Why
//! The webhook refuses the object with these messages.
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
    summary: "An instancetype or preference spec KubeVirt's webhook refuses (overcommitPercent, preferredCPUTopology, spreadOptions).",
    severity: Severity::Error,
};

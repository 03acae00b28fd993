//! `KV032` spread.
//!
//! ## What it checks
//! For a VM with an instancetype and a preference whose topology is `spread`/`preferSpread`:
//! the instancetype's `cpu.guest` must divide by the spread ratio (`spreadOptions.ratio`, else
//! `preferSpreadSocketToCoreRatio`, else 2), and for `SocketsCoresThreads` be even with half of
//! it divisible by the ratio. KubeVirt checks this before the conflicts.
//!
//! ## Why
//! KubeVirt's VM webhook refuses the VM (field `instancetype.spec.cpu.guest`).
//!
//! ## Example
//! A 3-vCPU instancetype with a `spread` preference (ratio 2).
//!
//! ## Fix
//! Pick an instancetype whose vCPU count fits, or another preference.

use crate::diagnostic::{Severity, codes};
use crate::validate::Rule;

/// The rule (found by [`super::admission`]).
pub const RULE: Rule = Rule {
    code: codes::SPREAD,
    name: "spread",
    summary: "The instancetype's vCPUs cannot be spread as the preference asks (KubeVirt refuses the VM).",
    severity: Severity::Error,
};

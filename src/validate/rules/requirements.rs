//! `KV033` requirements.
//!
//! ## What it checks
//! A preference's `requirements` (cpu, memory, architecture, in that order; first failure only)
//! against the VM after the instancetype and preference are applied and the cluster defaults
//! set: vCPUs of the instancetype, or of the VM's sockets/cores/threads as the preferred
//! topology counts them; guest memory; the architecture (default `amd64`).
//!
//! ## Why
//! KubeVirt's VM webhook refuses the VM with `failure checking preference requirements: ...`.
//!
//! ## Example
//! A preference requiring 4 vCPUs with a `u1.small` (1 vCPU) instancetype.
//!
//! ## Fix
//! Use a larger instancetype or VM topology, or a preference that fits.

use crate::diagnostic::{Severity, codes};
use crate::validate::Rule;

/// The rule (found by [`super::admission`]).
pub const RULE: Rule = Rule {
    code: codes::REQUIREMENTS,
    name: "requirements",
    summary: "The VM does not meet its preference's cpu, memory or architecture requirements (KubeVirt refuses it).",
    severity: Severity::Error,
};

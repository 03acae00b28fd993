//! `KV010` instancetype-conflict.
//!
//! ## What it checks
//! That a VirtualMachine with an instancetype does not set what the instancetype provides:
//! cpu topology, cpu and memory requests/limits, guest memory, hugepages, node selector,
//! scheduler name, IO threads, launch security, GPUs, host devices and the instancetype's
//! annotations with other values. One finding per field, in KubeVirt's order.
//!
//! ## Why
//! KubeVirt's VM webhook refuses the VM with `VM field(s) <path> conflicts with selected
//! instance type`.
//!
//! ## Example
//! ```yaml
//! spec:
//!   instancetype: {name: u1.medium}
//!   template:
//!     spec:
//!       domain:
//!         cpu: {sockets: 2}   # u1.medium already sets the vCPUs
//! ```
//!
//! ## Fix
//! Remove the field from the VM, or pick an instancetype that provides what you need.

use crate::diagnostic::{Severity, codes};
use crate::validate::Rule;

/// The rule (found by [`super::admission`]).
pub const RULE: Rule = Rule {
    code: codes::CONFLICT,
    name: "instancetype-conflict",
    summary: "The VM sets a field its instancetype owns (KubeVirt refuses the VM).",
    severity: Severity::Error,
};

//! `KV004` wrong-type.
//!
//! ## What it checks
//! The types of the fields the schema of [`super::unknown_field`] covers: integers where Go has
//! `uint32`/`int`, quantities (strings or numbers) for memory, booleans, mappings and lists.
//!
//! ## Why
//! The API server validates these types and refuses the object. kvrender's own rules skip a
//! value of the wrong type, so without this check the problem would go unnoticed offline.
//!
//! ## Example
//! ```yaml
//! kind: VirtualMachineClusterInstancetype
//! spec:
//!   cpu:
//!     guest: "2"      # must be an integer
//! ```
//!
//! ## Fix
//! Write the value with the expected type (no quotes around numbers, quotes around quantities
//! are fine).

use crate::diagnostic::{Severity, codes};
use crate::validate::Rule;

/// The rule (found by the walk in [`super::unknown_field`]).
pub const RULE: Rule = Rule {
    code: codes::WRONG_TYPE,
    name: "wrong-type",
    summary: "A field of an instancetype, preference or VM has the wrong type: the API server refuses it.",
    severity: Severity::Error,
};

//! `KV001` yaml-syntax.
//!
//! ## What it checks
//! That every file parses as YAML (or JSON for `*.json`): indentation, quoting, duplicate keys,
//! valid UTF-8. Found by the loader, with the line and column of the problem.
//!
//! ## Why
//! `kubectl apply` and GitOps controllers refuse the whole file; nothing in it reaches the
//! cluster.
//!
//! ## Example
//! ```yaml
//! spec:
//!   cpu: [guest: 2
//! ```
//!
//! ## Fix
//! Correct the syntax at the reported position.

use crate::diagnostic::{Severity, codes};
use crate::validate::Rule;

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::YAML_SYNTAX,
    name: "yaml-syntax",
    summary: "A file is not valid YAML or JSON (reported with line and column). Where the lines show the likely cause, the message names it: a bracket left open, a tab, a line indented where no mapping above it starts, a line indented under a key that has a value already, a value holding `: ` that wants quotes.",
    severity: Severity::Error,
};

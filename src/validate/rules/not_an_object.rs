//! `KV002` not-an-object.
//!
//! ## What it checks
//! That every document is a Kubernetes object: a mapping with string `apiVersion` and `kind`,
//! and a mapping (if any) as `metadata`. Found by the loader.
//!
//! ## Why
//! The API server refuses anything else; a stray list or scalar is usually a broken merge or
//! an indentation slip.
//!
//! ## Example
//! ```yaml
//! - name: u1.small
//! ```
//!
//! ## Fix
//! Add `apiVersion` and `kind`, or move the document out of the manifest tree.

use crate::diagnostic::{Severity, codes};
use crate::validate::Rule;

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::NOT_AN_OBJECT,
    name: "not-an-object",
    summary: "A document is not a Kubernetes object (no mapping with `apiVersion` and `kind`).",
    severity: Severity::Error,
};

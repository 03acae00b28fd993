//! `KV011` reference-not-found.
//!
//! ## What it checks
//! That the instancetype, preference or ControllerRevision a VirtualMachine names exists in the
//! inputs, in a `--catalog` path or in the embedded common catalog. An instancetype or
//! preference of an apiVersion KubeVirt does not serve (`KV021`) does not count: the cluster
//! cannot hold it, and the message says so.
//!
//! ## Why
//! KubeVirt's webhook ignores a failed lookup and admits the VM, which then fails to start. The
//! object may live in the cluster only, so this is a warning; `--strict` makes it an error.
//! pre-commit passes changed files only: give the unchanged catalog with `--catalog DIR`.
//!
//! ## Example
//! ```yaml
//! spec:
//!   instancetype: {name: u1.mediun}
//! ```
//!
//! ## Fix
//! Correct the name or kind, add the object, or pass its directory with `--catalog`.

use crate::diagnostic::{Severity, codes};
use crate::validate::Rule;

/// The rule (found by [`super::admission`]).
pub const RULE: Rule = Rule {
    code: codes::REFERENCE_NOT_FOUND,
    name: "reference-not-found",
    summary: "An instancetype or preference the VM names exists nowhere, or only as an object the API server refuses (`KV004`, or `KV021` for an apiVersion KubeVirt does not serve) (warning; error with --strict); the message names a near match when there is one: the same name in the other scope or another namespace, a name that holds it (what kustomize's `namePrefix` or `nameSuffix` made of it, see \"Name prefixes and suffixes\"), or a name a few edits away.",
    severity: Severity::Warning,
};

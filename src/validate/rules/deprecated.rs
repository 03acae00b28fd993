//! `KV031` deprecated.
//!
//! ## What it checks
//! The warnings KubeVirt's webhooks return with an admitted object: `launchSecurity` in an
//! instancetype, and the deprecated `preferSockets`, `preferCores`, `preferThreads`,
//! `preferSpread`, `preferAny` topology names in a preference.
//!
//! ## Why
//! These spellings will be removed in a future KubeVirt release.
//!
//! ## Example
//! ```yaml
//! spec:
//!   cpu: {preferredCPUTopology: preferSpread}
//! ```
//!
//! ## Fix
//! Use the name the message gives (`spread`), or move `launchSecurity` to a preference
//! (`preferredLaunchSecurity`).

use crate::diagnostic::{Severity, codes};
use crate::validate::Rule;

/// The rule (found by [`super::admission`]).
pub const RULE: Rule = Rule {
    code: codes::DEPRECATED,
    name: "deprecated",
    summary: "KubeVirt admits the object with a deprecation warning (launchSecurity in an instancetype, prefer* topologies).",
    severity: Severity::Warning,
};

//! The preference and cluster preference validating webhook
//! (`pkg/instancetype/preference/webhooks/admitter.go`, `.../preference/validation/cpu.go`).
//!
//! `cpu.preferredCPUTopology` must be one of the known values (case-sensitive); the deprecated
//! `prefer*` spellings are admitted with a warning. With a spread topology, `spreadOptions.across`
//! must name known axes, and spreading over cores and threads needs a ratio of 2. Requirements
//! are not checked here: KubeVirt checks them against each VM.

use serde_json::Value;

use super::{Cause, Reason, Response, topology};
use crate::model::path;

/// The topologies KubeVirt accepts, current names first.
pub const TOPOLOGIES: [&str; 10] = [
    "sockets",
    "cores",
    "threads",
    "spread",
    "any",
    "preferSockets",
    "preferCores",
    "preferThreads",
    "preferSpread",
    "preferAny",
];

/// The current name of a deprecated topology value.
pub fn replacement(topology: &str) -> Option<&'static str> {
    match topology {
        "preferSockets" => Some("sockets"),
        "preferCores" => Some("cores"),
        "preferThreads" => Some("threads"),
        "preferSpread" => Some("spread"),
        "preferAny" => Some("any"),
        _ => None,
    }
}

/// The axes `spreadOptions.across` may name.
pub const SPREAD_ACROSS: [&str; 3] = ["SocketsCores", "CoresThreads", "SocketsCoresThreads"];

fn set_topology(spec: &Value) -> Option<&str> {
    path::get(spec, &["cpu", "preferredCPUTopology"])
        .filter(|v| !v.is_null())
        .map(|v| v.as_str().unwrap_or(""))
}

/// Check a preference `spec` as KubeVirt's webhook does on create.
pub fn admit(spec: Option<&Value>) -> Response {
    let mut response = Response::default();
    let spec = spec.unwrap_or(&Value::Null);
    let set = set_topology(spec);
    if let Some(t) = set
        && !TOPOLOGIES.contains(&t)
    {
        response.causes.push(Cause {
            reason: Reason::InvalidSpec,
            field: "spec.cpu.preferredCPUTopology".into(),
            message: format!("unknown preferredCPUTopology {t}"),
        });
    }
    if set.is_some_and(topology::is_spread) {
        let (ratio, across) = topology::spread_options(spec);
        if !SPREAD_ACROSS.contains(&across.as_str()) {
            response.causes.push(Cause {
                reason: Reason::InvalidSpec,
                field: "spec.cpu.spreadOptions.across".into(),
                message: format!("across {across} is not supported"),
            });
        } else if across == "CoresThreads" && ratio != 2 {
            response.causes.push(Cause {
                reason: Reason::InvalidSpec,
                field: "spec.cpu.spreadOptions.ratio".into(),
                message: "only a ratio of 2 (1 core 2 threads) is allowed when spreading vCPUs \
                          over cores and threads"
                    .into(),
            });
        }
    }
    if response.causes.is_empty()
        && let Some(new) = set.and_then(replacement)
    {
        response.warnings.push(format!(
            "PreferredCPUTopology {} is deprecated for removal in a future release, please use \
             {new} instead",
            set.unwrap_or_default()
        ));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn topology_is_case_sensitive() {
        let r = admit(Some(&json!({"cpu": {"preferredCPUTopology": "Cores"}})));
        assert_eq!(r.causes[0].message, "unknown preferredCPUTopology Cores");
    }

    #[test]
    fn deprecated_topology_warns() {
        let r = admit(Some(&json!({"cpu": {"preferredCPUTopology": "preferAny"}})));
        assert!(r.allowed());
        assert_eq!(
            r.warnings,
            vec![
                "PreferredCPUTopology preferAny is deprecated for removal in a future release, \
                 please use any instead"
                    .to_string()
            ]
        );
    }

    #[test]
    fn cores_threads_needs_ratio_two_from_the_legacy_field_too() {
        let spec = json!({"preferSpreadSocketToCoreRatio": 3,
                          "cpu": {"preferredCPUTopology": "spread",
                                  "spreadOptions": {"across": "CoresThreads"}}});
        let r = admit(Some(&spec));
        assert_eq!(r.causes[0].field, "spec.cpu.spreadOptions.ratio");
        let spec = json!({"cpu": {"preferredCPUTopology": "preferSpread",
                                  "spreadOptions": {"across": "Sockets"}}});
        assert_eq!(
            admit(Some(&spec)).causes[0].message,
            "across Sockets is not supported"
        );
    }

    #[test]
    fn spread_options_without_spread_topology_are_ignored() {
        let spec = json!({"cpu": {"spreadOptions": {"across": "Nope"}}});
        assert!(admit(Some(&spec)).allowed());
    }
}

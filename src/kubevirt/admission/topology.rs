//! Reading a preference's CPU topology the way KubeVirt does
//! (`GetPreferredTopology` and `GetSpreadOptions` in `pkg/instancetype/preference/apply/cpu.go`).

use serde_json::Value;

use super::uint32_at;
use crate::model::path;
use crate::model::path::Fields;

/// The preferred topology: `spec.cpu.preferredCPUTopology`, `sockets` when unset.
pub fn preferred(preference: Option<&Value>) -> &str {
    preference
        .and_then(|p| path::get(p, &["cpu", "preferredCPUTopology"]))
        .filter(|v| !v.is_null())
        .map_or("sockets", |v| v.as_str().unwrap_or(""))
}

/// Whether a topology value spreads vCPUs (`spread` or the deprecated `preferSpread`).
pub fn is_spread(topology: &str) -> bool {
    matches!(topology, "spread" | "preferSpread")
}

/// The spread ratio and axes: `spreadOptions.ratio`, else `preferSpreadSocketToCoreRatio`,
/// else 2; `spreadOptions.across`, else `SocketsCores`.
pub fn spread_options(preference: &Value) -> (u32, String) {
    let mut ratio = uint32_at(Some(preference), &["preferSpreadSocketToCoreRatio"]);
    if ratio == 0 {
        ratio = 2;
    }
    let mut across = "SocketsCores".to_string();
    if let Some(options) = path::get(preference, &["cpu", "spreadOptions"]).filter(|v| !v.is_null())
    {
        if let Some(a) = options.field("across").filter(|v| !v.is_null()) {
            across = a.as_str().unwrap_or("").to_string();
        }
        if options.field("ratio").is_some_and(|v| !v.is_null()) {
            ratio = uint32_at(Some(options), &["ratio"]);
        }
    }
    (ratio, across)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spread_ratio_precedence() {
        let p = json!({"preferSpreadSocketToCoreRatio": 4});
        assert_eq!(spread_options(&p), (4, "SocketsCores".into()));
        let p = json!({"preferSpreadSocketToCoreRatio": 4,
                       "cpu": {"spreadOptions": {"ratio": 3, "across": "CoresThreads"}}});
        assert_eq!(spread_options(&p), (3, "CoresThreads".into()));
        assert_eq!(spread_options(&json!({})), (2, "SocketsCores".into()));
    }

    #[test]
    fn default_topology_is_sockets() {
        assert_eq!(preferred(None), "sockets");
        assert_eq!(preferred(Some(&json!({"cpu": {}}))), "sockets");
        assert_eq!(
            preferred(Some(&json!({"cpu": {"preferredCPUTopology": "any"}}))),
            "any"
        );
    }
}

//! The instancetype and cluster instancetype validating webhook
//! (`pkg/instancetype/webhooks/admitter.go`): the memory overcommit percentage must lie in
//! 0..=100 and must not be combined with hugepages; an admitted instancetype that sets
//! `launchSecurity` gets a deprecation warning (a refused one gets causes only).

use serde_json::Value;

use super::{Cause, Reason, Response};
use crate::model::path;

const OVERCOMMIT: &str = "spec.memory.overcommitPercent";
const HUGEPAGES: &str = "spec.memory.hugepages";

/// KubeVirt's warning for `launchSecurity` in an instancetype.
pub const LAUNCH_SECURITY_WARNING: &str =
    "launchSecurity is deprecated and will be removed in a future release. Use preference instead.";

/// Check an instancetype `spec` as KubeVirt's webhook does on create.
pub fn admit(spec: Option<&Value>) -> Response {
    let mut response = Response::default();
    let spec = spec.unwrap_or(&Value::Null);
    // Go's `int` zero value when absent; a non-integer is a schema error reported elsewhere.
    let percent = path::get(spec, &["memory", "overcommitPercent"])
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if !(0..=100).contains(&percent) {
        response.causes.push(Cause {
            reason: Reason::InvalidSpec,
            field: OVERCOMMIT.into(),
            message: format!("{OVERCOMMIT} '{percent}': must be in range between 0 and 100."),
        });
    }
    if percent != 0 && path::is_set(spec, &["memory", "hugepages"]) {
        response.causes.push(Cause {
            reason: Reason::InvalidSpec,
            field: OVERCOMMIT.into(),
            message: format!("{OVERCOMMIT} and {HUGEPAGES} should not be requested together."),
        });
    }
    if response.causes.is_empty() && path::is_set(spec, &["launchSecurity"]) {
        response.warnings.push(LAUNCH_SECURITY_WARNING.into());
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn out_of_range_and_hugepages_give_two_causes() {
        let spec = json!({"memory": {"guest": "1Gi", "overcommitPercent": -1,
                          "hugepages": {"pageSize": "2Mi"}}});
        let r = admit(Some(&spec));
        assert_eq!(r.causes.len(), 2);
        assert_eq!(
            r.causes[0].message,
            "spec.memory.overcommitPercent '-1': must be in range between 0 and 100."
        );
        assert!(
            r.causes[1]
                .message
                .contains("should not be requested together")
        );
    }

    #[test]
    fn launch_security_warns_only_when_admitted() {
        let ok = admit(Some(&json!({"launchSecurity": {}})));
        assert!(ok.allowed());
        assert_eq!(ok.warnings, vec![LAUNCH_SECURITY_WARNING.to_string()]);
        let bad = admit(Some(
            &json!({"launchSecurity": {}, "memory": {"overcommitPercent": 101}}),
        ));
        assert!(!bad.allowed());
        assert!(bad.warnings.is_empty());
    }

    #[test]
    fn hugepages_without_overcommit_is_fine() {
        let spec = json!({"memory": {"hugepages": {"pageSize": "1Gi"}}});
        assert!(admit(Some(&spec)).allowed());
    }
}

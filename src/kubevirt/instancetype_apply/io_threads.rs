//! The instancetype's IO threads (mirrors KubeVirt's `pkg/instancetype/apply/iothreads.go` and
//! `iothreadpolicy.go`).

use serde_json::Value;

use super::domain_map;
use crate::kubevirt::conflict::Conflict;
use crate::model::path;
use crate::model::path::Fields;

/// Copy `ioThreads.supplementalPoolThreadCount`, or report the conflict when the VM sets it.
pub(super) fn apply_io_threads(instancetype: &Value, spec: &mut Value) -> Option<Conflict> {
    let count = path::get(instancetype, &["ioThreads", "supplementalPoolThreadCount"])
        .filter(|v| !v.is_null())?;
    if path::is_set(
        spec,
        &["domain", "ioThreads", "supplementalPoolThreadCount"],
    ) {
        return Some(Conflict::spec(
            "domain.ioThreads.supplementalPoolThreadCount",
        ));
    }
    domain_map(spec, &["ioThreads"])?
        .insert("supplementalPoolThreadCount".to_string(), count.clone());
    None
}

/// Copy `ioThreadsPolicy`, or report the conflict when the VM sets one.
pub(super) fn apply_policy(instancetype: &Value, spec: &mut Value) -> Option<Conflict> {
    let policy = instancetype
        .field("ioThreadsPolicy")
        .filter(|v| !v.is_null())?;
    if path::is_set(spec, &["domain", "ioThreadsPolicy"]) {
        return Some(Conflict::spec("domain.ioThreadsPolicy"));
    }
    domain_map(spec, &[])?.insert("ioThreadsPolicy".to_string(), policy.clone());
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn copies_thread_count_next_to_vm_fields() {
        let it = json!({"ioThreads": {"supplementalPoolThreadCount": 4}});
        let mut spec = json!({"domain": {"ioThreads": {}}});
        assert!(apply_io_threads(&it, &mut spec).is_none());
        assert_eq!(
            spec,
            json!({"domain": {"ioThreads": {"supplementalPoolThreadCount": 4}}})
        );
    }

    #[test]
    fn thread_count_conflict_needs_both_counts() {
        let it = json!({"ioThreads": {"supplementalPoolThreadCount": 4}});
        let mut spec = json!({"domain": {"ioThreads": {"supplementalPoolThreadCount": 0}}});
        assert_eq!(
            apply_io_threads(&it, &mut spec).unwrap().path,
            "spec.template.spec.domain.ioThreads.supplementalPoolThreadCount"
        );
        let mut spec = json!({"domain": {"ioThreads": {"supplementalPoolThreadCount": 2}}});
        assert!(apply_io_threads(&json!({"ioThreads": {}}), &mut spec).is_none());
        assert_eq!(
            spec["domain"]["ioThreads"]["supplementalPoolThreadCount"],
            2
        );
    }

    #[test]
    fn policy_copied_or_conflicts() {
        let it = json!({"ioThreadsPolicy": "supplementalPool"});
        let mut spec = json!({});
        assert!(apply_policy(&it, &mut spec).is_none());
        assert_eq!(
            spec,
            json!({"domain": {"ioThreadsPolicy": "supplementalPool"}})
        );
        let mut spec = json!({"domain": {"ioThreadsPolicy": "auto"}});
        assert_eq!(
            apply_policy(&it, &mut spec).unwrap().path,
            "spec.template.spec.domain.ioThreadsPolicy"
        );
        assert!(apply_policy(&json!({}), &mut spec).is_none());
    }
}

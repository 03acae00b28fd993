//! `KV041` size-labels.
//!
//! ## What it checks
//! That the descriptive labels of an instancetype or preference say what its spec does, for
//! every such label the object carries:
//! - instancetypes: `instancetype.kubevirt.io/cpu` against `spec.cpu.guest`,
//!   `instancetype.kubevirt.io/memory` against `spec.memory.guest` (compared as quantities, so
//!   `1Gi` and `1024Mi` agree), `instancetype.kubevirt.io/hugepages` against
//!   `spec.memory.hugepages.pageSize`, and the flags `dedicatedCPUPlacement`,
//!   `isolateEmulatorThread`, `numa` (`spec.cpu.numa.guestMappingPassthrough`) and `realtime`
//!   (`spec.cpu.realtime`): `"true"` needs the feature set, `"false"` needs it unset;
//! - preferences: `instancetype.kubevirt.io/required-cpu` and `required-memory` against
//!   `spec.requirements.cpu.guest` and `spec.requirements.memory.guest`,
//!   `required-architecture` against `spec.requirements.architecture`, and `arch` and
//!   `preferred-architecture` against `spec.preferredArchitecture`.
//!
//! Objects without these labels are not checked. `kvrender build` runs the check on every
//! rendered object, `kvrender validate` on every input object.
//!
//! ## Why
//! Consoles and users pick instancetypes by these labels (`kubectl get
//! virtualmachineclusterinstancetypes -l instancetype.kubevirt.io/cpu=4`). KubeVirt never reads
//! them, so a label copied from another size goes unnoticed until someone gets a VM that is not
//! what the label promised.
//!
//! ## Example
//! ```yaml
//! kind: VirtualMachineClusterInstancetype
//! metadata:
//!   name: u1.large
//!   labels:
//!     instancetype.kubevirt.io/cpu: "4"     # copied from u1.xlarge
//! spec:
//!   cpu: {guest: 2}
//!   memory: {guest: 8Gi}
//! ```
//!
//! ## Fix
//! Correct the label or the spec; in a catalog family, take both from the same size cell
//! (`"{{ size.cpu }}"`).

use std::borrow::Cow;

use serde_json::Value;

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::model::path::Fields;
use crate::model::quantity::Quantity;
use crate::model::{Kind, Object, path};
use crate::validate::Rule;

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::LABEL_MISMATCH,
    name: "size-labels",
    summary: "An instancetype or preference label (cpu, memory, hugepages, dedicatedCPUPlacement, required-cpu, ...) disagrees with its spec (warning; KubeVirt admits it).",
    severity: Severity::Warning,
};

/// How a label's value is compared with the spec.
#[derive(Clone, Copy)]
enum Compare {
    /// A whole number (vCPUs).
    Count,
    /// A resource quantity.
    Quantity,
    /// A plain string.
    Text,
    /// `"true"`/`"false"`: whether the spec field is set (and not `false`).
    Flag,
}

/// Label, spec field, comparison.
const INSTANCETYPE_LABELS: &[(&str, &[&str], Compare)] = &[
    (
        "instancetype.kubevirt.io/cpu",
        &["spec", "cpu", "guest"],
        Compare::Count,
    ),
    (
        "instancetype.kubevirt.io/memory",
        &["spec", "memory", "guest"],
        Compare::Quantity,
    ),
    (
        "instancetype.kubevirt.io/hugepages",
        &["spec", "memory", "hugepages", "pageSize"],
        Compare::Quantity,
    ),
    (
        "instancetype.kubevirt.io/dedicatedCPUPlacement",
        &["spec", "cpu", "dedicatedCPUPlacement"],
        Compare::Flag,
    ),
    (
        "instancetype.kubevirt.io/isolateEmulatorThread",
        &["spec", "cpu", "isolateEmulatorThread"],
        Compare::Flag,
    ),
    (
        "instancetype.kubevirt.io/numa",
        &["spec", "cpu", "numa", "guestMappingPassthrough"],
        Compare::Flag,
    ),
    (
        "instancetype.kubevirt.io/realtime",
        &["spec", "cpu", "realtime"],
        Compare::Flag,
    ),
];

const PREFERENCE_LABELS: &[(&str, &[&str], Compare)] = &[
    (
        "instancetype.kubevirt.io/required-cpu",
        &["spec", "requirements", "cpu", "guest"],
        Compare::Count,
    ),
    (
        "instancetype.kubevirt.io/required-memory",
        &["spec", "requirements", "memory", "guest"],
        Compare::Quantity,
    ),
    (
        "instancetype.kubevirt.io/required-architecture",
        &["spec", "requirements", "architecture"],
        Compare::Text,
    ),
    (
        "instancetype.kubevirt.io/preferred-architecture",
        &["spec", "preferredArchitecture"],
        Compare::Text,
    ),
    (
        "instancetype.kubevirt.io/arch",
        &["spec", "preferredArchitecture"],
        Compare::Text,
    ),
];

/// Check one object's labels against its spec; other kinds are skipped.
pub fn check(obj: &Object, out: &mut Vec<Diagnostic>) {
    let table = match obj.kind() {
        Kind::Instancetype | Kind::ClusterInstancetype => INSTANCETYPE_LABELS,
        Kind::Preference | Kind::ClusterPreference => PREFERENCE_LABELS,
        _ => return,
    };
    let Some(labels) = path::get(&obj.value, &["metadata", "labels"]).and_then(Value::as_object)
    else {
        return;
    };
    for (key, field, compare) in table {
        let Some(label) = labels.field(key) else {
            continue;
        };
        let label: Cow<'_, str> = match label {
            Value::String(s) => Cow::Borrowed(s),
            Value::Number(n) => Cow::Owned(n.to_string()),
            Value::Bool(b) => Cow::Owned(b.to_string()),
            // A label that is not a scalar is the schema checks' business.
            _ => continue,
        };
        // A string where `spec.cpu` belongs is the type checks' finding; the label cannot be
        // judged against a field that has no place to be.
        if path::blocked(&obj.value, field) {
            continue;
        }
        let spec = path::get(&obj.value, field);
        // The label copies the field's own text: they agree, and if that text is not a valid
        // value, the field's type check says so (once, about the field).
        if spec.and_then(Value::as_str) == Some(label.trim()) {
            continue;
        }
        if let Some(problem) = disagreement(&label, spec, *compare) {
            let dotted = field.join(".");
            out.push(
                Diagnostic::warning(
                    RULE.code,
                    obj.field_origin(&dotted),
                    format!("label `{key}: {label}` disagrees with `{dotted}`: {problem}"),
                )
                .with_object(obj.object_ref())
                .with_field(format!("metadata.labels[\"{key}\"]")),
            );
        }
    }
}

/// Why `label` does not describe `spec`, or `None` when it does.
fn disagreement(label: &str, spec: Option<&Value>, compare: Compare) -> Option<String> {
    let shown = || spec.map_or_else(|| "unset".to_string(), show);
    match compare {
        Compare::Flag => {
            let set = spec.is_some_and(|v| !v.is_null() && v != &Value::Bool(false));
            match label {
                "true" if !set => Some("the label says true but the field is unset".into()),
                "false" if set => Some(format!("the label says false but it is {}", shown())),
                "true" | "false" => None,
                _ => Some("the label should be `true` or `false`".into()),
            }
        }
        Compare::Count => {
            let want = spec.and_then(Value::as_i64);
            match (label.trim().parse::<i64>().ok(), want) {
                (Some(l), Some(s)) if l == s => None,
                (None, _) => Some("the label is not a whole number".into()),
                // A field that is no whole number (`"4 "`) is the type check's finding.
                (Some(_), None) if is_set(spec) => None,
                _ => Some(format!("it is {}", shown())),
            }
        }
        Compare::Quantity => {
            // Rendered labels are mostly the spec's own spelling: one parse settles those.
            if spec.and_then(Value::as_str) == Some(label.trim())
                && Quantity::parse(label.trim()).is_ok()
            {
                return None;
            }
            let want = spec.and_then(Quantity::from_json);
            match (Quantity::parse(label.trim()).ok(), want) {
                (Some(l), Some(s)) if l.eq_value(&s) => None,
                (None, _) => Some("the label is not a quantity".into()),
                // A field that is no quantity (`16GB`) is the type check's finding.
                (Some(_), None) if is_set(spec) => None,
                _ => Some(format!("it is {}", shown())),
            }
        }
        Compare::Text => match spec.and_then(Value::as_str) {
            Some(s) if s == label => None,
            _ => Some(format!("it is {}", shown())),
        },
    }
}

/// Whether the spec field is there and not `null`.
fn is_set(spec: Option<&Value>) -> bool {
    spec.is_some_and(|v| !v.is_null())
}

fn show(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Object(m) if m.is_empty() => "set".to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;
    use serde_json::json;

    fn it(labels: Value, spec: Value) -> Vec<Diagnostic> {
        let obj = Object::new(
            json!({"apiVersion": "instancetype.kubevirt.io/v1beta1",
                   "kind": "VirtualMachineClusterInstancetype",
                   "metadata": {"name": "u1.large", "labels": labels}, "spec": spec}),
            Origin::new("c.yaml", 0, Some(3)),
        );
        let mut out = Vec::new();
        check(&obj, &mut out);
        out
    }

    #[test]
    fn agreeing_labels_pass_and_memory_compares_as_quantities() {
        let out = it(
            json!({"instancetype.kubevirt.io/cpu": "2", "instancetype.kubevirt.io/memory": "1Gi",
                   "instancetype.kubevirt.io/hugepages": "2Mi",
                   "instancetype.kubevirt.io/dedicatedCPUPlacement": "true",
                   "instancetype.kubevirt.io/numa": "true",
                   "instancetype.kubevirt.io/realtime": "false"}),
            json!({"cpu": {"guest": 2, "dedicatedCPUPlacement": true,
                           "numa": {"guestMappingPassthrough": {}}},
                   "memory": {"guest": "1024Mi", "hugepages": {"pageSize": "2048Ki"}}}),
        );
        assert!(out.is_empty(), "{out:?}");
    }

    #[test]
    fn a_label_copying_an_invalid_field_is_left_to_the_fields_type_check() {
        let out = it(
            json!({"instancetype.kubevirt.io/cpu": "four",
                   "instancetype.kubevirt.io/memory": "16GB"}),
            json!({"cpu": {"guest": "four"}, "memory": {"guest": "16GB"}}),
        );
        assert!(out.is_empty(), "{out:?}");
        // A label of its own that is no number still disagrees.
        let out = it(
            json!({"instancetype.kubevirt.io/cpu": "four"}),
            json!({"cpu": {"guest": 4}, "memory": {"guest": "1Gi"}}),
        );
        assert_eq!(out.len(), 1, "{out:?}");
    }

    #[test]
    fn a_field_with_no_place_for_the_labelled_one_is_left_to_the_type_check() {
        // `spec.cpu` a string: the type check reports it; "unset" would send the reader to
        // the wrong field.
        let out = it(
            json!({"instancetype.kubevirt.io/cpu": "4", "instancetype.kubevirt.io/hugepages": "2Mi",
                   "instancetype.kubevirt.io/memory": "1Gi"}),
            json!({"cpu": "4 cores", "memory": {"guest": "1Gi", "hugepages": [{"pageSize": "2Mi"}]}}),
        );
        assert!(out.is_empty(), "{out:?}");
        // A field of the wrong type (a stray blank in `"4 "`, a quantity misspelt) is the
        // type check's to report, and "it is 4 " would only puzzle.
        let out = it(
            json!({"instancetype.kubevirt.io/cpu": "4", "instancetype.kubevirt.io/memory": "16Gi"}),
            json!({"cpu": {"guest": "4 "}, "memory": {"guest": "16 GB"}}),
        );
        assert!(out.is_empty(), "{out:?}");
        // A `null` on the way is unset, and the label disagrees with it.
        let out = it(
            json!({"instancetype.kubevirt.io/cpu": "4"}),
            json!({"cpu": null}),
        );
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(out[0].message.ends_with("it is unset"), "{out:?}");
    }

    #[test]
    fn each_disagreement_is_one_warning_at_the_object() {
        let out = it(
            json!({"instancetype.kubevirt.io/cpu": "4", "instancetype.kubevirt.io/memory": "8Gi",
                   "instancetype.kubevirt.io/hugepages": "1Gi",
                   "instancetype.kubevirt.io/isolateEmulatorThread": "true",
                   "instancetype.kubevirt.io/realtime": "false"}),
            json!({"cpu": {"guest": 2, "realtime": {}}, "memory": {"guest": "4Gi"}}),
        );
        let messages: Vec<&str> = out.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(out.len(), 5, "{messages:#?}");
        assert!(out.iter().all(|d| d.code == "KV041" && !d.is_error()));
        assert!(out.iter().all(|d| d.origin.to_string() == "c.yaml:3"));
        assert!(
            messages[0].contains("`spec.cpu.guest`: it is 2"),
            "{}",
            messages[0]
        );
        assert!(messages[1].contains("it is 4Gi"), "{}", messages[1]);
        assert!(messages[2].contains("it is unset"), "{}", messages[2]);
        assert!(
            messages[4].contains("says false but it is set"),
            "{}",
            messages[4]
        );
    }

    #[test]
    fn preference_requirements_and_architecture() {
        let obj = Object::new(
            json!({"apiVersion": "instancetype.kubevirt.io/v1beta1",
                   "kind": "VirtualMachinePreference",
                   "metadata": {"name": "p", "labels": {
                       "instancetype.kubevirt.io/required-cpu": "2",
                       "instancetype.kubevirt.io/required-memory": "2Gi",
                       "instancetype.kubevirt.io/arch": "arm64"}},
                   "spec": {"requirements": {"cpu": {"guest": 1}, "memory": {"guest": "2Gi"}},
                            "preferredArchitecture": "arm64"}}),
            Origin::new("p.yaml", 0, Some(1)),
        );
        let mut out = Vec::new();
        check(&obj, &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        assert!(out[0].message.contains("required-cpu: 2"));
    }

    #[test]
    fn other_kinds_and_unlabelled_objects_are_skipped() {
        assert!(it(json!({}), json!({"cpu": {"guest": 2}})).is_empty());
        let vm = Object::new(
            json!({"kind": "VirtualMachine", "metadata": {"name": "v",
                   "labels": {"instancetype.kubevirt.io/cpu": "9"}}}),
            Origin::default(),
        );
        let mut out = Vec::new();
        check(&vm, &mut out);
        assert!(out.is_empty());
    }
}

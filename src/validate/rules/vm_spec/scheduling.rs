//! The part of `KV034` that judges where a VM may run: its affinity (node affinity, pod
//! affinity and anti-affinity) and its topology spread constraints, with Kubernetes' own rules
//! and words, which KubeVirt's webhook applies to the VMI spec.
//!
//! Mirrors `validate-k8s-utils.go` of KubeVirt d923fdb815 (its copy of Kubernetes' pod
//! validation) and the label selector checks it calls. Each message is a Kubernetes field
//! error, `<field>: <kind of error>: <value>: <detail>`. KubeVirt leaves `.affinity` out of the
//! field paths of affinity errors, names a pod affinity term's `namespaces` as `namespace`
//! (without an index), and a spread constraint's `labelSelector` below the list rather than
//! the constraint; the findings name the field that holds the value, in their field and their
//! message.
//!
//! A node selector operator or a `whenUnsatisfiable` that is not one Kubernetes knows (an
//! absent one included) is refused by the webhook's schema check first, in its words (`<field> in body should be one
//! of [...]`, which KubeVirt writes without list indices).
//!
//! Values of the wrong type are the API server's to refuse (its schema holds these fields);
//! they are not judged here.

use serde_json::Value;

use crate::kubevirt::go_text::{go_json, go_quote};

use crate::model::names;

type Found = Vec<(String, String)>;

/// `whenUnsatisfiable` values, in Kubernetes' (sorted) order.
const SCHEDULE_ACTIONS: [&str; 2] = ["DoNotSchedule", "ScheduleAnyway"];
/// Node selector operators, in Kubernetes' (sorted) order.
const NODE_OPERATORS: [&str; 6] = ["DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn"];

/// Whether the webhook's schema check refuses the string at `key` for not being one of
/// `allowed`, and then the finding, in its words. An absent value counts as `""`: KubeVirt's
/// mutating webhook writes the whole spec back, with these fields, which Go does not leave
/// out.
fn schema_enum(v: &Value, key: &str, allowed: &[&str], at: &str, found: &mut Found) -> bool {
    static ABSENT: Value = Value::String(String::new());
    let given = v.get(key).filter(|g| !g.is_null()).unwrap_or(&ABSENT);
    let field = || format!("{at}.{key}");
    super::enums::judge(
        Some(given),
        field,
        allowed,
        super::enums::Empty::Kept,
        found,
    )
}

/// The affinity and spread checks on the spec at `at`. A spec judged `as_written` (a pool's
/// template, which no schema check of KubeVirt's sees first) gets Kubernetes' own words for
/// an operator or a `whenUnsatisfiable` it does not know.
pub(super) fn check(spec: &Value, at: &str, as_written: bool, found: &mut Found) {
    if let Some(affinity @ Value::Object(_)) = spec.get("affinity") {
        let at = format!("{at}.affinity");
        if let Some(node @ Value::Object(_)) = affinity.get("nodeAffinity") {
            node_affinity(node, &format!("{at}.nodeAffinity"), as_written, found);
        }
        for kind in ["podAffinity", "podAntiAffinity"] {
            if let Some(pod @ Value::Object(_)) = affinity.get(kind) {
                pod_affinity(pod, &format!("{at}.{kind}"), found);
            }
        }
    }
    if let Some(constraints) = spec
        .get("topologySpreadConstraints")
        .and_then(Value::as_array)
    {
        spread_constraints(
            constraints,
            &format!("{at}.topologySpreadConstraints"),
            as_written,
            found,
        );
    }
}

/// A field error, as Kubernetes writes it: `<field>: <body>`.
fn push(found: &mut Found, field: String, body: String) {
    let message = format!("{field}: {body}");
    found.push((field, message));
}

/// A string field as Go reads it: absent or `null` is `""`; another type is not judged.
fn text(v: &Value, key: &str) -> Option<String> {
    match v.get(key) {
        None | Some(Value::Null) => Some(String::new()),
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => None,
    }
}

/// A list field's items (absent or `null` is empty; another type is not judged).
fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// An `int32` field as Go reads it: absent or `null` is 0; another type or a number out of
/// range is not judged.
fn int32(v: &Value, key: &str) -> Option<i64> {
    match v.get(key) {
        None | Some(Value::Null) => Some(0),
        Some(n) => n.as_i64().filter(|n| i32::try_from(*n).is_ok()),
    }
}

/// A weight from 1 to 100.
fn weight(term: &Value, at: &str, found: &mut Found) {
    if let Some(w) = int32(term, "weight")
        && !(1..=100).contains(&w)
    {
        push(
            found,
            format!("{at}.weight"),
            format!("Invalid value: {w}: must be in the range 1-100"),
        );
    }
}

/// Kubernetes' `field.Invalid` for a string `value`, once for each of `errors`.
fn invalid<E: std::fmt::Display>(found: &mut Found, field: &str, value: &str, errors: Vec<E>) {
    for error in errors {
        push(
            found,
            field.to_string(),
            format!("Invalid value: {}: {error}", go_quote(value)),
        );
    }
}

/// Each string of `items` (the list at `at`.`key`) judged by `errors`; other items are the
/// schema's to refuse.
fn string_items<E: std::fmt::Display>(
    items: &[Value],
    at: &str,
    key: &str,
    errors: fn(&str) -> Vec<E>,
    found: &mut Found,
) {
    for (i, item) in items.iter().enumerate() {
        if let Some(item) = item.as_str() {
            invalid(found, &format!("{at}.{key}[{i}]"), item, errors(item));
        }
    }
}

/// A label key, a topology key: a qualified name.
fn label_name(name: &str, field: &str, found: &mut Found) {
    invalid(found, field, name, names::qualified_name_errors(name));
}

fn node_affinity(node: &Value, at: &str, as_written: bool, found: &mut Found) {
    let required = node.get("requiredDuringSchedulingIgnoredDuringExecution");
    if let Some(selector @ Value::Object(_)) = required {
        let terms_at =
            format!("{at}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms");
        let terms = list(selector, "nodeSelectorTerms");
        if terms.is_empty() {
            push(
                found,
                terms_at,
                "Required value: must have at least one node selector term".into(),
            );
        } else {
            for (i, term) in terms.iter().enumerate() {
                node_selector_term(term, &format!("{terms_at}[{i}]"), as_written, found);
            }
        }
    }
    let term =
        |t: &Value, at: &str, found: &mut Found| node_selector_term(t, at, as_written, found);
    preferred(node, at, "preference", &term, found);
}

/// The values `operator` takes: some for `In` and `NotIn`, none for `Exists` and
/// `DoesNotExist`, and (`gt_lt`, node selectors) one for `Gt` and `Lt`. Whether the operator is
/// one of those.
fn operator_values(
    operator: &str,
    values: &[Value],
    gt_lt: bool,
    at: &str,
    found: &mut Found,
) -> bool {
    let problem = match operator {
        "In" | "NotIn" => values
            .is_empty()
            .then_some("Required value: must be specified when `operator` is 'In' or 'NotIn'"),
        "Exists" | "DoesNotExist" => (!values.is_empty()).then_some(
            "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        ),
        "Gt" | "Lt" if gt_lt => (values.len() != 1).then_some(
            "Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
        ),
        _ => return false,
    };
    if let Some(problem) = problem {
        push(found, format!("{at}.values"), problem.into());
    }
    true
}

/// Preferred terms: each with a weight from 1 to 100 and its term (at `inner`), which `judge`
/// checks.
fn preferred(
    affinity: &Value,
    at: &str,
    inner: &str,
    judge: &dyn Fn(&Value, &str, &mut Found),
    found: &mut Found,
) {
    let terms = list(affinity, "preferredDuringSchedulingIgnoredDuringExecution");
    for (i, term) in terms.iter().enumerate() {
        let term_at = format!("{at}.preferredDuringSchedulingIgnoredDuringExecution[{i}]");
        weight(term, &term_at, found);
        let inner_term = term.get(inner).unwrap_or(&Value::Null);
        judge(inner_term, &format!("{term_at}.{inner}"), found);
    }
}

fn node_selector_term(term: &Value, at: &str, as_written: bool, found: &mut Found) {
    for (j, requirement) in list(term, "matchExpressions").iter().enumerate() {
        let at = format!("{at}.matchExpressions[{j}]");
        let values = list(requirement, "values");
        if as_written {
            // Go reads an absent operator as "".
            let operator = text(requirement, "operator").unwrap_or_default();
            if !operator_values(&operator, values, true, &at, found) {
                not_an_operator(&operator, &at, found);
            }
        } else {
            let refused = schema_enum(requirement, "operator", &NODE_OPERATORS, &at, found);
            let operator = text(requirement, "operator").filter(|_| !refused);
            // The schema check lets only the operators Kubernetes knows through.
            if let Some(operator) = operator {
                operator_values(&operator, values, true, &at, found);
            }
        }
        if let Some(key) = text(requirement, "key") {
            label_name(&key, &format!("{at}.key"), found);
        }
    }
    for (j, requirement) in list(term, "matchFields").iter().enumerate() {
        let at = format!("{at}.matchFields[{j}]");
        let operator = if as_written {
            Some(text(requirement, "operator").unwrap_or_default())
        } else {
            let refused = schema_enum(requirement, "operator", &NODE_OPERATORS, &at, found);
            text(requirement, "operator").filter(|_| !refused)
        };
        let values = list(requirement, "values");
        match operator.as_deref() {
            None => {}
            Some("In" | "NotIn") if values.len() != 1 => push(
                found,
                format!("{at}.values"),
                "Required value: must be only one value when `operator` is 'In' or 'NotIn' for \
                 node field selector"
                    .into(),
            ),
            Some("In" | "NotIn") => {}
            Some(other) => not_an_operator(other, &at, found),
        }
        let Some(key) = text(requirement, "key") else {
            continue;
        };
        if key != "metadata.name" {
            push(
                found,
                format!("{at}.key"),
                format!(
                    "Invalid value: {}: not a valid field selector key",
                    go_quote(&key)
                ),
            );
            continue;
        }
        string_items(values, &at, "values", names::dns_subdomain_errors, found);
    }
}

fn pod_affinity(pod: &Value, at: &str, found: &mut Found) {
    let required = list(pod, "requiredDuringSchedulingIgnoredDuringExecution");
    for (i, term) in required.iter().enumerate() {
        let term_at = format!("{at}.requiredDuringSchedulingIgnoredDuringExecution[{i}]");
        pod_affinity_term(term, &term_at, found);
    }
    preferred(pod, at, "podAffinityTerm", &pod_affinity_term, found);
}

fn pod_affinity_term(term: &Value, at: &str, found: &mut Found) {
    label_selector(
        term.get("labelSelector"),
        &format!("{at}.labelSelector"),
        found,
    );
    label_selector(
        term.get("namespaceSelector"),
        &format!("{at}.namespaceSelector"),
        found,
    );
    let namespaces = list(term, "namespaces");
    string_items(namespaces, at, "namespaces", names::dns_label_errors, found);
    let Some(key) = text(term, "topologyKey") else {
        return;
    };
    if key.is_empty() {
        push(
            found,
            format!("{at}.topologyKey"),
            "Required value: can not be empty".into(),
        );
    }
    label_name(&key, &format!("{at}.topologyKey"), found);
}

/// A label selector: its labels, and each requirement's operator, key and values.
fn label_selector(selector: Option<&Value>, at: &str, found: &mut Found) {
    let Some(selector @ Value::Object(_)) = selector else {
        return;
    };
    if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
        let labels_at = format!("{at}.matchLabels");
        for (key, value) in labels {
            label_name(key, &labels_at, found);
            let value = match value {
                Value::String(s) => s.as_str(),
                Value::Null => "",
                _ => continue,
            };
            invalid(found, &labels_at, value, names::label_value_errors(value));
        }
    }
    for (i, requirement) in list(selector, "matchExpressions").iter().enumerate() {
        let at = format!("{at}.matchExpressions[{i}]");
        let Some(operator) = text(requirement, "operator") else {
            continue;
        };
        let values = list(requirement, "values");
        if !operator_values(&operator, values, false, &at, found) {
            not_an_operator(&operator, &at, found);
        }
        if let Some(key) = text(requirement, "key") {
            label_name(&key, &format!("{at}.key"), found);
        }
        string_items(values, &at, "values", names::label_value_errors, found);
    }
}

/// Kubernetes' refusal of a selector requirement's `operator` at `at`.
fn not_an_operator(operator: &str, at: &str, found: &mut Found) {
    push(
        found,
        format!("{at}.operator"),
        format!(
            "Invalid value: {}: not a valid selector operator",
            go_json(&Value::from(operator))
        ),
    );
}

/// Spread constraints: a positive `maxSkew`, a topology key that is a label name, a
/// `whenUnsatisfiable` Kubernetes knows, a good label selector, and no two constraints with the
/// same key and action.
fn spread_constraints(constraints: &[Value], at: &str, as_written: bool, found: &mut Found) {
    // Whether a later constraint has the same key and action, for each: found from the end
    // with a set, in one pass however long a hostile list is.
    let pairs: Vec<Option<(String, String)>> = constraints
        .iter()
        .map(|c| Some((text(c, "topologyKey")?, text(c, "whenUnsatisfiable")?)))
        .collect();
    let mut later = std::collections::HashSet::new();
    let mut repeated = vec![false; constraints.len()];
    for (i, pair) in pairs.iter().enumerate().rev() {
        if let Some(pair) = pair {
            repeated[i] = !later.insert(pair);
        }
    }
    for (i, constraint) in constraints.iter().enumerate() {
        let sub = format!("{at}[{i}]");
        if let Some(skew) = int32(constraint, "maxSkew")
            && skew <= 0
        {
            push(
                found,
                format!("{sub}.maxSkew"),
                format!("Invalid value: {skew}: must be greater than zero"),
            );
        }
        let key = text(constraint, "topologyKey");
        match key.as_deref() {
            Some("") => push(
                found,
                format!("{sub}.topologyKey"),
                "Required value: can not be empty".into(),
            ),
            Some(key) => label_name(key, &format!("{sub}.topologyKey"), found),
            None => {}
        }
        // The schema check leaves only the actions Kubernetes knows to the webhook.
        let action = text(constraint, "whenUnsatisfiable");
        if as_written {
            let given = action.as_deref().unwrap_or("");
            if !SCHEDULE_ACTIONS.contains(&given) {
                let supported: Vec<String> = SCHEDULE_ACTIONS.iter().map(|a| go_quote(a)).collect();
                push(
                    found,
                    format!("{sub}.whenUnsatisfiable"),
                    format!(
                        "Unsupported value: {}: supported values: {}",
                        go_quote(given),
                        supported.join(", ")
                    ),
                );
            }
        } else {
            schema_enum(
                constraint,
                "whenUnsatisfiable",
                &SCHEDULE_ACTIONS,
                &sub,
                found,
            );
        }
        label_selector(
            constraint.get("labelSelector"),
            &format!("{sub}.labelSelector"),
            found,
        );
        if let (Some(key), Some(action)) = (&key, &action)
            && repeated[i]
        {
            push(
                found,
                format!("{sub}.{{topologyKey, whenUnsatisfiable}}"),
                format!(
                    "Duplicate value: {}",
                    go_quote(&format!("{{{key}, {action}}}"))
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(spec: Value) -> Vec<(String, String)> {
        let mut found = Vec::new();
        check(&spec, "spec", false, &mut found);
        found
    }

    fn messages(spec: Value) -> Vec<String> {
        run(spec).into_iter().map(|(_, m)| m).collect()
    }

    #[test]
    fn node_affinity_terms_in_kubernetes_words() {
        let spec = json!({"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [
                    {"key": "zone", "operator": "In"},
                    {"key": "gpu", "operator": "Exists", "values": ["a"]},
                    {"key": "cores", "operator": "Gt", "values": ["1", "2"]},
                    {"key": "bad key", "operator": "Near"},
                ],
                 "matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": ["Node_1"]},
                    {"key": "spec.unschedulable", "operator": "Exists"},
                ]}
            ]},
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 0, "preference": {}},
                {"weight": 50, "preference": {"matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]}]}},
            ]
        }}});
        let at = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.\
                  nodeSelectorTerms[0]";
        assert_eq!(
            messages(spec),
            [
                format!(
                    "{at}.matchExpressions[0].values: Required value: must be specified when \
                     `operator` is 'In' or 'NotIn'"
                ),
                format!(
                    "{at}.matchExpressions[1].values: Forbidden: may not be specified when \
                     `operator` is 'Exists' or 'DoesNotExist'"
                ),
                format!(
                    "{at}.matchExpressions[2].values: Required value: must be specified single \
                     value when `operator` is 'Lt' or 'Gt'"
                ),
                format!(
                    "{at}.matchExpressions[3].operator in body should be one of [DoesNotExist \
                     Exists Gt In Lt NotIn]"
                ),
                format!(
                    "{at}.matchExpressions[3].key: Invalid value: \"bad key\": name part must \
                     consist of alphanumeric characters, '-', '_' or '.', and must start and end \
                     with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
                     '123-abc', regex used for validation is \
                     '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
                ),
                format!(
                    "{at}.matchFields[0].values[0]: Invalid value: \"Node_1\": {}",
                    names::DNS_SUBDOMAIN_MSG
                ),
                format!(
                    "{at}.matchFields[1].operator: Invalid value: \"Exists\": not a valid selector operator"
                ),
                format!(
                    "{at}.matchFields[1].key: Invalid value: \"spec.unschedulable\": not a valid field selector key"
                ),
                "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]\
                 .weight: Invalid value: 0: must be in the range 1-100"
                    .to_string(),
            ]
        );
        let empty = json!({"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}});
        assert_eq!(
            run(empty),
            [(
                "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.\
                 nodeSelectorTerms"
                    .to_string(),
                "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.\
                 nodeSelectorTerms: Required value: must have at least one node selector term"
                    .to_string()
            )]
        );
    }

    #[test]
    fn pod_affinity_terms_need_a_topology_key_and_good_selectors() {
        let spec = json!({"affinity": {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web server"}},
                 "namespaces": ["Prod", "a.b"], "topologyKey": ""},
            ],
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 101, "podAffinityTerm": {
                    "namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "Exists", "values": ["x"]}]},
                    "topologyKey": "kubernetes.io/hostname"}},
            ]
        }}});
        let req = "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]";
        let pref =
            "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]";
        let found = run(spec);
        let fields: Vec<&str> = found.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            fields,
            [
                format!("{req}.labelSelector.matchLabels"),
                format!("{req}.namespaces[0]"),
                format!("{req}.namespaces[1]"),
                format!("{req}.topologyKey"),
                format!("{req}.topologyKey"),
                format!("{req}.topologyKey"),
                format!("{pref}.weight"),
                format!("{pref}.podAffinityTerm.namespaceSelector.matchExpressions[0].values"),
            ]
        );
        for (i, says) in [
            (0, "Invalid value: \"web server\": a valid label must be"),
            (2, "Invalid value: \"a.b\": must not contain dots"),
            (3, "topologyKey: Required value: can not be empty"),
            (4, "Invalid value: \"\": name part must be non-empty"),
            (6, "Invalid value: 101: must be in the range 1-100"),
        ] {
            assert!(found[i].1.contains(says), "{i}: {}", found[i].1);
        }
    }

    #[test]
    fn spread_constraints_in_kubernetes_words() {
        let spec = json!({"topologySpreadConstraints": [
            {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "Sometimes",
             "labelSelector": {"matchExpressions": [{"key": "app", "operator": "in", "values": ["a"]}]}},
            {"maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Sometimes"},
        ]});
        let at = "spec.topologySpreadConstraints";
        assert_eq!(
            messages(spec),
            [
                format!("{at}[0].maxSkew: Invalid value: 0: must be greater than zero"),
                format!(
                    "{at}[0].whenUnsatisfiable in body should be one of [DoNotSchedule \
                     ScheduleAnyway]"
                ),
                format!(
                    "{at}[0].labelSelector.matchExpressions[0].operator: Invalid value: \"in\": \
                     not a valid selector operator"
                ),
                format!(
                    "{at}[0].{{topologyKey, whenUnsatisfiable}}: Duplicate value: \"{{zone, \
                     Sometimes}}\""
                ),
                format!("{at}[1].topologyKey: Required value: can not be empty"),
                format!(
                    "{at}[2].whenUnsatisfiable in body should be one of [DoNotSchedule \
                     ScheduleAnyway]"
                ),
            ]
        );
        let fine = json!({"topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": {"kubevirt.io/domain": "web"}}}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                {"nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}]}]}}}});
        assert_eq!(run(fine), []);
    }

    #[test]
    fn values_of_the_wrong_type_are_left_to_the_schema() {
        let spec = json!({"affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": "5", "podAffinityTerm": {"topologyKey": 7}}]}},
            "topologySpreadConstraints": [{"maxSkew": "1", "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]});
        assert_eq!(run(spec), []);
    }
}

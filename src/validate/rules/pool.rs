//! `KV035` pool-spec, and the VirtualMachines of a VirtualMachinePool.
//!
//! ## What it checks
//! A VirtualMachinePool (`pool.kubevirt.io`) keeps a VM template and creates its VMs from it.
//! KubeVirt's pool webhook refuses a pool:
//! - whose `selector` does not parse, or does not select the labels of the template's
//!   `metadata` (`selector does not match labels.`);
//! - whose `maxUnavailable` is a string that is not a percentage, a percentage outside 1 to
//!   100, or a count below 1;
//! - with more than one of `unmanaged`, `opportunistic` and `proactive` in its `updateStrategy`
//!   or its `scaleInStrategy`;
//! - whose template has huge pages and neither `memory.guest` nor a memory request: the webhook
//!   fails on it (it reads the guest memory that is not there), and with it the request.
//!
//! Those are this rule's. The webhook also checks the template's VM `spec` as written, with
//! the VM webhook's own checks: those findings are `KV034`'s, at the template's fields. The
//! API server's schema of the pool (types, required fields, enums, unknown fields) is `KV004`'s
//! and `KV022`'s.
//!
//! A pool KubeVirt admits can still create no working VM: its controller creates each VM from
//! the template (named `<pool>-0`, `<pool>-1`, ...), and the VM webhook then applies the
//! instancetype and preference the template names and checks the result. So every check
//! `validate` makes of a VM (`KV010` conflicts, `KV011` instancetypes and preferences that are
//! not found, `KV033` requirements, `KV034`, ...) is made of the pool's first VM too, and
//! reported on the pool, at the template's field, saying it is about the VMs the pool creates.
//!
//! ## Why
//! `kubectl apply` of a pool whose template names an instancetype that does not exist, or
//! sets the CPU its instancetype owns, succeeds. The pool then fails to create any VM, which
//! only its events tell.
//!
//! ## Example
//! ```yaml
//! kind: VirtualMachinePool
//! spec:
//!   selector:
//!     matchLabels: {app: web}
//!   virtualMachineTemplate:
//!     metadata:
//!       labels: {app: frontend}   # the selector does not select it
//! ```
//!
//! ## Fix
//! Make the selector select the template's labels; give `maxUnavailable` as a count or a
//! percentage like `25%`; keep one strategy of each kind.

use serde_json::Value;

use super::{templated, vm_spec, wrong_type};
use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::kubevirt::pool;
use crate::kubevirt::presets::selector;
use crate::model::quantity::Quantity;
use crate::model::{Object, path};
use crate::validate::{Context, Rule};

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::POOL_SPEC,
    name: "pool-spec",
    summary: "KubeVirt's VirtualMachinePool webhook refuses the pool: a selector that does not parse or does not select the labels of the VM template, a `maxUnavailable` that is not a count of at least 1 or a percentage from 1% to 100%, more than one update or scale-in strategy, or a template with huge pages and no guest memory or memory request, on which the webhook fails. (What the pool's template and the VMs it creates get wrong is reported on the pool under the VM rules' codes.)",
    severity: Severity::Error,
};

/// What the schema's finding of a number beyond a float's exact range says.
const BEYOND_FLOAT: &str = "is beyond 2^53-1";

/// Check a VirtualMachinePool: its own settings and template as the pool webhook does, then,
/// when nothing so far refuses it, the first VM it creates as `validate` checks a VM.
/// `out` holds the findings about the pool so far (its schema's among them). Other objects
/// are skipped.
pub fn check(obj: &Object, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    if !pool::is_pool(obj) {
        return;
    }
    let Some(spec) = obj.spec() else {
        return;
    };
    let refused_before = out.iter().any(Diagnostic::is_error);
    let mut found: Vec<(&'static str, String, String)> = Vec::new();
    let template = spec.get("virtualMachineTemplate").filter(|t| t.is_object());
    if let Some(template) = template {
        // Go reads a missing or `null` template `spec` as an empty VM spec.
        let empty = Value::Object(serde_json::Map::new());
        let vm_spec = template
            .get("spec")
            .filter(|s| s.is_object())
            .unwrap_or(&empty);
        let root = pool::TEMPLATE_SPEC;
        for (field, message) in vm_spec::template_refusals(vm_spec, root, ctx.profile) {
            let field = if field.starts_with(root) {
                field
            } else {
                pool::pool_field(&field)
            };
            found.push((vm_spec::RULE.code, field, message));
        }
        if let Some(template_spec) = path::get(vm_spec, &["template", "spec"])
            && webhook_fails_on_huge_pages(template_spec)
        {
            found.push((
                RULE.code,
                format!("{}.template.spec.domain.memory", pool::TEMPLATE_SPEC),
                "KubeVirt's pool webhook fails on a template with huge pages and neither \
                 `memory.guest` nor `resources.requests.memory`: it reads the guest memory that \
                 is not there, and the API server refuses the pool (`failed calling webhook`); \
                 set `domain.memory.guest`"
                    .into(),
            ));
        }
        let labels = template
            .get("metadata")
            .and_then(|m| m.get("labels"))
            .and_then(Value::as_object)
            .map(|labels| {
                labels
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        match selector::parse(spec.get("selector")) {
            Err(e) => found.push((RULE.code, "spec.selector".into(), e)),
            Ok(s) if !s.matches(&labels) => found.push((
                RULE.code,
                "spec.selector".into(),
                "selector does not match labels. (the pool's `selector` must select the \
                 labels of `spec.virtualMachineTemplate.metadata`: KubeVirt refuses the pool)"
                    .into(),
            )),
            Ok(_) => {}
        }
    }
    if let Some(problem) = max_unavailable(spec.get("maxUnavailable")) {
        found.push((RULE.code, "spec.maxUnavailable".into(), problem));
    }
    for key in ["updateStrategy", "scaleInStrategy"] {
        if let Some(problem) = strategies(spec.get(key)) {
            found.push((RULE.code, format!("spec.{key}"), problem));
        }
    }
    let refused = refused_before || !found.is_empty();
    templated::push_found(obj, RULE.code, found, out);
    if refused {
        // KubeVirt refuses the pool: it creates no VM.
        return;
    }
    let Some(vm) = pool::vm_of(obj, 0) else {
        return;
    };
    // The pool's webhook checks no schema of the numbers in it, the VM's webhook does.
    let skip = |d: &Diagnostic| {
        let beyond_float = d.code == wrong_type::RULE.code && d.message.contains(BEYOND_FLOAT);
        templated::OWNERS_OWN.contains(&d.code) && !beyond_float
    };
    let said_of = |d| about_its_vms(obj, &vm, d);
    templated::report_made(&vm, ctx, skip, said_of, out);
}

/// A finding about `vm`, the pool's first VM, said of the pool: at the field of the template it
/// comes from, on that field's line (a name that is not found on the name's line, as on a VM),
/// ending with a note that it is about the VMs the pool creates.
pub fn about_its_vms(pool: &Object, vm: &Object, d: Diagnostic) -> Diagnostic {
    let note = format!(
        " (about each VM the pool creates from its template, \"{}\" the first: KubeVirt \
         admits the pool itself)",
        vm.name()
    );
    templated::said_of(pool, d, pool::pool_field, &note)
}

/// Whether KubeVirt's pool webhook, checking the huge pages of the template `spec` as written,
/// dereferences a guest memory that is not there: huge pages with a page size that parses, no
/// memory request (or one of 0), and no `memory.guest`.
pub(crate) fn webhook_fails_on_huge_pages(spec: &Value) -> bool {
    let Some(memory) = path::get(spec, &["domain", "memory"]).filter(|m| m.is_object()) else {
        return false;
    };
    let page_size = path::str_at(memory, &["hugepages", "pageSize"]);
    let hugepages = memory.get("hugepages").is_some_and(Value::is_object);
    let requested = path::get(spec, &["domain", "resources", "requests", "memory"])
        .and_then(Quantity::from_json)
        .is_some_and(|q| q.value() != 0);
    hugepages
        && Quantity::parse(page_size.unwrap_or("")).is_ok()
        && !requested
        && memory.get("guest").is_none_or(Value::is_null)
}

/// What the pool webhook says of `maxUnavailable`: a string must be a percentage from 1 to 100,
/// an integer at least 1. A value of another type is the schema's.
fn max_unavailable(value: Option<&Value>) -> Option<String> {
    match value? {
        Value::String(s) => {
            let Some(percentage) = s.strip_suffix('%') else {
                return Some("maxUnavailable percentage must end with %".into());
            };
            match go_atoi(percentage) {
                Err(e) => Some(format!(
                    "maxUnavailable percentage value {percentage:?} is invalid: {e}"
                )),
                Ok(n) if !(1..=100).contains(&n) => Some(format!(
                    "maxUnavailable percentage value {n} must be between 1 and 100"
                )),
                Ok(_) => None,
            }
        }
        Value::Number(n) if n.as_i64().is_some_and(|n| n <= 0) => {
            Some("maxUnavailable must be greater than 0".into())
        }
        _ => None,
    }
}

/// Go's `strconv.Atoi`: an optional sign and decimal digits, within 64 bits; the error as Go
/// words it.
fn go_atoi(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("strconv.Atoi: parsing {s:?}: invalid syntax"));
    }
    s.parse::<i64>()
        .map_err(|_| format!("strconv.Atoi: parsing {s:?}: value out of range"))
}

/// What the pool webhook says of a strategy with more than one of its kinds set. Go lists
/// them in the random order of a map; they are listed here in the order of the API.
fn strategies(value: Option<&Value>) -> Option<String> {
    let strategy = value?.as_object()?;
    let set: Vec<&str> = ["unmanaged", "opportunistic", "proactive"]
        .into_iter()
        .filter(|k| strategy.get(*k).is_some_and(|v| !v.is_null()))
        .collect();
    (set.len() > 1).then(|| {
        format!(
            "only one strategy can be configured at a time: but found {} strategies",
            set.join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn max_unavailable_is_a_positive_count_or_a_percentage_from_1_to_100() {
        let say = |v: Value| max_unavailable(Some(&v));
        assert_eq!(say(json!("50%")), None);
        assert_eq!(say(json!("100%")), None);
        assert_eq!(say(json!(3)), None);
        assert_eq!(
            say(json!("50")).as_deref(),
            Some("maxUnavailable percentage must end with %")
        );
        assert_eq!(
            say(json!("0%")).as_deref(),
            Some("maxUnavailable percentage value 0 must be between 1 and 100")
        );
        assert_eq!(
            say(json!("101%")).as_deref(),
            Some("maxUnavailable percentage value 101 must be between 1 and 100")
        );
        assert_eq!(
            say(json!("x%")).as_deref(),
            Some(
                "maxUnavailable percentage value \"x\" is invalid: strconv.Atoi: parsing \"x\": \
                 invalid syntax"
            )
        );
        assert_eq!(
            say(json!(0)).as_deref(),
            Some("maxUnavailable must be greater than 0")
        );
        assert_eq!(
            say(json!(-2)).as_deref(),
            Some("maxUnavailable must be greater than 0")
        );
    }

    #[test]
    fn the_webhook_fails_on_huge_pages_without_guest_memory_or_a_memory_request() {
        let fails = |v: Value| webhook_fails_on_huge_pages(&v);
        let pages = json!({"hugepages": {"pageSize": "2Mi"}});
        assert!(fails(json!({"domain": {"memory": pages}})));
        assert!(fails(
            json!({"domain": {"memory": {"hugepages": {"pageSize": "2Mi"}, "guest": null}}})
        ));
        // A request of 0 counts as none.
        assert!(fails(
            json!({"domain": {"memory": pages, "resources": {"requests": {"memory": "0"}}}})
        ));
        assert!(!fails(
            json!({"domain": {"memory": {"hugepages": {"pageSize": "2Mi"}, "guest": "1Gi"}}})
        ));
        assert!(!fails(
            json!({"domain": {"memory": pages, "resources": {"requests": {"memory": "1Gi"}}}})
        ));
        // A page size that does not parse is refused before the guest memory is read.
        assert!(!fails(
            json!({"domain": {"memory": {"hugepages": {"pageSize": "big"}}}})
        ));
        assert!(!fails(json!({"domain": {"memory": {"hugepages": {}}}})));
        assert!(!fails(json!({"domain": {"memory": {"guest": "1Gi"}}})));
    }

    #[test]
    fn one_strategy_of_each_kind() {
        let say = |v: Value| strategies(Some(&v));
        assert_eq!(say(json!({"proactive": {}})), None);
        assert_eq!(say(json!({"proactive": {}, "unmanaged": null})), None);
        assert_eq!(
            say(json!({"proactive": {}, "unmanaged": {}})).as_deref(),
            Some(
                "only one strategy can be configured at a time: but found unmanaged, proactive \
                 strategies"
            )
        );
    }
}

//! `KV044` unusable-instancetype.
//!
//! ## What it checks
//! That an instancetype (`VirtualMachineClusterInstancetype`, `VirtualMachineInstancetype`) can
//! be used at all: that KubeVirt's VirtualMachine webhook does not refuse every VM naming it,
//! for a reason in the instancetype alone. The webhook (`VMsAdmitter.Admit` in KubeVirt's
//! `pkg/virt-api/webhooks/validating-webhook/admitters/vms-admitter.go`, at d923fdb815 as the
//! rest of kvrender's admission checks) applies the instancetype to a copy of the VM and
//! validates the result (`ValidateVirtualMachineInstanceSpec`, `vmi-create-admitter.go`), and
//! what the instancetype sets, the VM cannot change: a VM that sets such a field too is refused
//! for the conflict (`pkg/instancetype/apply/`). So these are refused whatever the VM, its
//! preference and the cluster say:
//! - `spec.memory.hugepages` whose `pageSize` is not a quantity (an empty or missing one
//!   included), is larger than `spec.memory.guest`, or does not divide it
//!   (`validateHugepagesMemoryRequests` in `vmi-create-admitter.go`: the guest memory is the
//!   amount compared, since the VM cannot ask for memory itself);
//! - an `overcommitPercent` that makes a memory request (the guest memory less that
//!   percentage, as `applyMemory` works it out) below 1M, or below 0 for a negative guest
//!   memory (`validateMemoryRequestsNegativeOrNull`);
//! - `isolateEmulatorThread: true`, NUMA `guestMappingPassthrough` or `realtime` beside
//!   `dedicatedCPUPlacement: false` (`validateCPUIsolatorThread`, `validateNUMA`,
//!   `validateCPURealtime`): the instancetype's `false` is applied, and a VM asking for
//!   dedicated CPUs conflicts with it;
//! - `realtime` beside a `numa` without `guestMappingPassthrough` (`validateMemoryRealtime`);
//! - an `ioThreadsPolicy` other than `shared`, `auto` and `supplementalPool`, or
//!   `supplementalPool` with an `ioThreads.supplementalPoolThreadCount` below 1
//!   (`validateIOThreadsPolicy`).
//!
//! One more case is reported though KubeVirt admits it: a guest memory below 1M, which no
//! guest boots in and which is nearly always a unit left out (`guest: 4`, a size table's
//! `[small, 1, 2]`: bytes). The message says the VM is admitted.
//!
//! Otherwise only what KubeVirt certainly refuses is reported. A `spec.cpu.guest` of 0 is not:
//! KubeVirt's VM webhook admits such a VM (whether it then starts is another matter). Neither is what a VM, a preference or the cluster can still
//! make right: huge pages a VM may add, NUMA without huge pages, an isolated emulator thread
//! with `dedicatedCPUPlacement` unset (the VM may set it), thread counts a preference lays
//! out, feature gates, or `maxGuest`, which KubeVirt checks only on clusters that roll changes
//! out live. An instancetype KubeVirt's instancetype webhook refuses (`KV030`) is left to that
//! finding. The checks read a few fields of each instancetype; nothing is expanded.
//!
//! ## Why
//! KubeVirt admits the instancetype itself, so nothing says anything until someone creates a VM
//! naming it, and then the VM is refused (`KV034` here) with a message about the VM's memory
//! request or CPU placement, which the VM does not set. In a catalog, a family variant (1Gi
//! huge pages, say) applied to a size it does not fit renders such instancetypes unnoticed.
//!
//! ## Example
//! ```yaml
//! kind: VirtualMachineClusterInstancetype
//! metadata:
//!   name: cx1.small1gi
//! spec:
//!   cpu: {guest: 1}
//!   memory:
//!     guest: 512Mi
//!     hugepages: {pageSize: 1Gi}   # a 1Gi page does not fit in 512Mi
//! ```
//!
//! ## Fix
//! Make the memory a whole number of pages (at least one), drop the variant for the sizes it
//! does not fit, or set the CPU placement the feature needs.

use serde_json::Value;

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::kubevirt::admission;
use crate::kubevirt::instancetype_apply::overcommitted_request;
use crate::model::path::{self, Fields, is_set};
use crate::model::quantity::{Format, Quantity};
use crate::model::{Kind, Object};
use crate::validate::Rule;
use crate::validate::rules::vm_spec::{self, HugepagesObjection};

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::UNUSABLE_INSTANCETYPE,
    name: "unusable-instancetype",
    summary: "An instancetype no VirtualMachine can use: KubeVirt's VM webhook refuses every VM naming it, whatever the VM sets (huge pages that are not a quantity, of size 0, larger than the guest memory or not dividing it, an overcommitted memory request below 1M, an isolated emulator thread, NUMA passthrough or realtime with `dedicatedCPUPlacement: false`, realtime without NUMA passthrough, an I/O threads policy KubeVirt does not take); or a guest memory below 1M, which KubeVirt admits but no guest boots in, nearly always a unit left out (`[small, 1, 2]` is 2 bytes) (warning).",
    severity: Severity::Warning,
};

/// Where KubeVirt's VM webhook validates the VM's spec: its messages name this path.
const AT: &str = "spec.template.spec";

/// One reason KubeVirt refuses every VM naming the instancetype.
#[derive(Debug, PartialEq, Eq)]
struct Refusal {
    /// The instancetype's field to change.
    field: &'static str,
    /// KubeVirt's message.
    message: String,
    /// The same in the instancetype's terms.
    why: String,
}

/// Warn about an instancetype every VM naming which KubeVirt refuses; other kinds are skipped.
pub fn check(obj: &Object, out: &mut Vec<Diagnostic>) {
    if !matches!(obj.kind(), Kind::Instancetype | Kind::ClusterInstancetype) {
        return;
    }
    let Some(spec) = obj.value.field("spec").filter(|s| s.is_object()) else {
        return;
    };
    let refusals = refusals(spec);
    // A refusal of the guest memory (huge pages that do not fit it, an overcommit) says more.
    let too_little = refusals
        .is_empty()
        .then(|| too_little_memory(spec))
        .flatten();
    // An instancetype its own webhook refuses never exists for a VM to name (`KV030`).
    if (refusals.is_empty() && too_little.is_none())
        || !admission::instancetype::admit(Some(spec)).allowed()
    {
        return;
    }
    if let Some(message) = too_little {
        let field = "spec.memory.guest";
        out.push(
            Diagnostic::warning(RULE.code, obj.field_origin(field), message)
                .with_object(obj.object_ref())
                .with_field(field),
        );
    }
    for Refusal {
        field,
        message,
        why,
    } in refusals
    {
        out.push(
            Diagnostic::warning(
                RULE.code,
                obj.field_origin(field),
                format!(
                    "no VirtualMachine can use it: KubeVirt refuses every VM that names it: \
                     {message} ({why})"
                ),
            )
            .with_object(obj.object_ref())
            .with_field(field),
        );
    }
}

/// Less than 1M of guest memory (KubeVirt's floor for a memory request). KubeVirt admits a VM naming such an instancetype
/// (its 1M floor is for a memory request, which an instancetype without an overcommit does not
/// set), yet no guest boots in it: it is nearly always a unit left out, `guest: 4` or
/// `[small, 1, 2]` in a catalog's size table being bytes.
fn too_little_memory(spec: &Value) -> Option<String> {
    let written = spec.field("memory")?.field("guest")?;
    let guest = Quantity::from_json(written)?.value();
    if guest <= 0 || guest >= ONE_M {
        return None;
    }
    let text = shown(written);
    let unit = if text.trim().bytes().all(|b| b.is_ascii_digit()) {
        format!(
            ": a quantity without a unit is bytes; `{}Gi` or `{}Mi` meant?",
            text.trim(),
            text.trim()
        )
    } else {
        String::new()
    };
    Some(format!(
        "no VirtualMachine can use it: a guest memory of `{text}` is {guest} bytes, and no guest \
         boots in less than 1M (KubeVirt admits a VM naming it, and the VM does not start){unit}"
    ))
}

/// 1M in bytes.
const ONE_M: i64 = 1_000_000;

/// Why KubeVirt refuses every VM naming an instancetype of `spec`, which its own webhook
/// admits.
fn refusals(spec: &Value) -> Vec<Refusal> {
    let mut found = Vec::new();
    memory(spec, &mut found);
    cpu(spec, &mut found);
    io_threads(spec, &mut found);
    found
}

/// A field's value as the manifest writes it.
fn shown(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Huge pages that do not fit the guest memory; an overcommitted request below KubeVirt's
/// bounds. The VM's spec then has the instancetype's guest memory and huge pages, and a memory
/// request only from the overcommit: a VM setting any of these conflicts.
fn memory(spec: &Value, found: &mut Vec<Refusal>) {
    let Some(memory) = spec.field("memory") else {
        return;
    };
    let hugepages = memory.field("hugepages").filter(|v| !v.is_null());
    let percent = memory
        .field("overcommitPercent")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    // Most instancetypes have neither: their guest memory is not even read.
    if hugepages.is_none() && percent <= 0 {
        return;
    }
    let written = memory.field("guest").filter(|v| !v.is_null());
    // A required quantity: absent is Go's zero. One that does not parse is `KV004`'s.
    let guest = match written {
        None => Quantity::new(0, Format::DecimalSi),
        Some(v) => match Quantity::from_json(v) {
            Some(q) => q,
            None => return,
        },
    };
    let guest_text = written.map_or_else(|| "0".to_string(), shown);
    if let Some(hugepages) = hugepages {
        // A page size that is not a string is `KV004`'s; an absent one is Go's "".
        let page = match hugepages.field("pageSize") {
            None | Some(Value::Null) => "",
            Some(Value::String(s)) => s.as_str(),
            Some(_) => return,
        };
        // The instancetype webhook refuses an overcommit beside huge pages: no request here.
        let no_request = Quantity::new(0, Format::DecimalSi);
        let Some(objection) = HugepagesObjection::of(page, guest.value()) else {
            return;
        };
        let (_, message) = objection.refusal(AT, &no_request, page);
        let (field, why) = match objection {
            HugepagesObjection::PageSize if page.is_empty() => (
                "spec.memory.hugepages.pageSize",
                "spec.memory.hugepages has no pageSize".to_string(),
            ),
            HugepagesObjection::PageSize => (
                "spec.memory.hugepages.pageSize",
                format!("spec.memory.hugepages.pageSize `{page}` is not a quantity"),
            ),
            HugepagesObjection::ZeroPageSize => (
                "spec.memory.hugepages.pageSize",
                format!("spec.memory.hugepages.pageSize `{page}` is 0"),
            ),
            HugepagesObjection::Smaller => (
                "spec.memory.guest",
                format!(
                    "spec.memory.guest {guest_text} is smaller than the hugepages page size \
                     {page}"
                ),
            ),
            HugepagesObjection::NotMultiple => (
                "spec.memory.guest",
                format!("spec.memory.guest {guest_text} is not a whole number of {page} hugepages"),
            ),
        };
        found.push(Refusal {
            field,
            message,
            why,
        });
        return;
    }
    if percent > 0 {
        let request = overcommitted_request(written.unwrap_or(&Value::Null), percent);
        let Ok(request) = Quantity::parse(&request) else {
            return;
        };
        if let Some((_, message)) = vm_spec::memory_request_refusal(AT, &request) {
            let least = if request.is_negative() { "0" } else { "1M" };
            found.push(Refusal {
                field: "spec.memory.guest",
                message,
                why: format!(
                    "spec.memory.guest {guest_text} less the {percent}% overcommit leaves a \
                     memory request of {} bytes; KubeVirt takes none below {least}",
                    request.value()
                ),
            });
        }
    }
}

/// CPU features that need dedicated CPUs beside `dedicatedCPUPlacement: false`, and realtime
/// beside a NUMA setting without passthrough. The instancetype's `false` is applied, and a VM
/// asking for dedicated CPUs (or NUMA) itself conflicts with the instancetype's.
fn cpu(spec: &Value, found: &mut Vec<Refusal>) {
    let Some(cpu) = spec.field("cpu") else {
        return;
    };
    let dedicated_off = cpu.field("dedicatedCPUPlacement") == Some(&Value::Bool(false));
    let numa = cpu.field("numa").filter(|n| n.is_object());
    let passthrough = numa.is_some_and(|n| is_set(n, &["guestMappingPassthrough"]));
    let realtime = cpu.field("realtime").is_some_and(Value::is_object);
    if dedicated_off {
        let mut refused = |(_, message): (String, String), what: &str| {
            found.push(Refusal {
                field: "spec.cpu.dedicatedCPUPlacement",
                message,
                why: format!(
                    "{what} needs dedicated CPUs; spec.cpu.dedicatedCPUPlacement is false, and \
                     a VM cannot turn it on"
                ),
            });
        };
        if cpu.field("isolateEmulatorThread") == Some(&Value::Bool(true)) {
            refused(
                vm_spec::isolate_without_dedicated(AT),
                "spec.cpu.isolateEmulatorThread",
            );
        }
        if passthrough {
            refused(
                vm_spec::numa_without_dedicated(AT),
                "spec.cpu.numa.guestMappingPassthrough",
            );
        }
        if realtime {
            refused(vm_spec::realtime_without_dedicated(AT), "spec.cpu.realtime");
        }
    }
    if realtime && numa.is_some() && !passthrough {
        let (_, message) = vm_spec::realtime_without_numa(AT);
        found.push(Refusal {
            field: "spec.cpu.numa",
            message,
            why: "spec.cpu.realtime needs spec.cpu.numa.guestMappingPassthrough, and a VM cannot \
                  add it to the instancetype's spec.cpu.numa"
                .to_string(),
        });
    }
}

/// An I/O threads policy KubeVirt does not take; `supplementalPool` with a thread count below
/// one. A VM setting either conflicts, but where the instancetype sets no count a VM may give
/// one: that refusal counts only with the instancetype's own count.
fn io_threads(spec: &Value, found: &mut Vec<Refusal>) {
    if spec.field("ioThreadsPolicy").is_none() {
        return;
    }
    // The instancetype writes these two fields as a VM's `domain` does.
    let mut refused = Vec::new();
    vm_spec::io_threads(spec, AT, &mut refused);
    let count = path::get(spec, &["ioThreads", "supplementalPoolThreadCount"]);
    for (field, message) in refused {
        let (field, why) = if field.ends_with(".ioThreadsPolicy") {
            let policy = spec.field("ioThreadsPolicy").map(shown).unwrap_or_default();
            (
                "spec.ioThreadsPolicy",
                format!(
                    "spec.ioThreadsPolicy `{policy}` is not one of `shared`, `auto` and \
                     `supplementalPool`"
                ),
            )
        } else if let Some(count) = count.filter(|c| c.is_number()) {
            (
                "spec.ioThreads.supplementalPoolThreadCount",
                format!(
                    "spec.ioThreads.supplementalPoolThreadCount is {}",
                    shown(count)
                ),
            )
        } else {
            continue;
        };
        found.push(Refusal {
            field,
            message,
            why,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;
    use serde_json::json;

    fn it(kind: &str, spec: Value) -> Vec<Diagnostic> {
        let obj = Object::new(
            json!({"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": kind,
                   "metadata": {"name": "u1.small"}, "spec": spec}),
            Origin::new("c.yaml", 0, Some(3)),
        );
        let mut out = Vec::new();
        check(&obj, &mut out);
        out
    }

    fn messages(spec: Value) -> Vec<String> {
        it("VirtualMachineClusterInstancetype", spec)
            .into_iter()
            .map(|d| format!("{}: {}", d.field.unwrap_or_default(), d.message))
            .collect()
    }

    fn with_memory(memory: Value) -> Value {
        json!({"cpu": {"guest": 1}, "memory": memory})
    }

    #[test]
    fn a_guest_memory_without_its_unit() {
        assert_eq!(
            messages(with_memory(json!({"guest": 48}))),
            [
                "spec.memory.guest: no VirtualMachine can use it: a guest memory of `48` is 48 \
                 bytes, and no guest boots in less than 1M (KubeVirt admits a VM naming it, \
                 and the VM does not start): a quantity without a unit is bytes; `48Gi` or \
                 `48Mi` meant?"
            ]
        );
        let out = messages(with_memory(json!({"guest": "500k"})));
        assert_eq!(out.len(), 1, "{out:#?}");
        assert!(out[0].ends_with("(KubeVirt admits a VM naming it, and the VM does not start)"));
        // 1M and more, 0 (`KV004`'s or the VM's business) and what does not parse: nothing.
        for guest in [
            json!("1M"),
            json!(1_000_000),
            json!("2Gi"),
            json!(0),
            json!("lots"),
        ] {
            assert!(
                messages(with_memory(json!({"guest": guest}))).is_empty(),
                "{guest}"
            );
        }
    }

    #[test]
    fn a_page_larger_than_the_guest_memory() {
        let out = messages(with_memory(
            json!({"guest": "512Mi", "hugepages": {"pageSize": "1Gi"}}),
        ));
        assert_eq!(
            out,
            [
                "spec.memory.guest: no VirtualMachine can use it: KubeVirt refuses every VM that \
              names it: spec.template.spec.domain.resources.requests.memory '0' must be equal to \
              or larger than page size spec.template.spec.domain.memory.hugepages.pageSize '1Gi' \
              (spec.memory.guest 512Mi is smaller than the hugepages page size 1Gi)"
            ]
        );
    }

    #[test]
    fn a_guest_memory_that_is_not_a_whole_number_of_pages() {
        let out = messages(with_memory(
            json!({"guest": "1536Mi", "hugepages": {"pageSize": "1Gi"}}),
        ));
        assert_eq!(out.len(), 1, "{out:#?}");
        assert!(
            out[0].contains(
                "requests.memory '0' is not a multiple of the page size \
                 spec.template.spec.domain.memory.hugepages.pageSize '1Gi' (spec.memory.guest \
                 1536Mi is not a whole number of 1Gi hugepages)"
            ),
            "{out:#?}"
        );
    }

    #[test]
    fn a_page_size_that_is_not_a_quantity() {
        for (hugepages, why) in [
            (
                json!({"pageSize": "huge"}),
                "(spec.memory.hugepages.pageSize `huge` is not a quantity)",
            ),
            (json!({}), "(spec.memory.hugepages has no pageSize)"),
            (
                json!({"pageSize": ""}),
                "(spec.memory.hugepages has no pageSize)",
            ),
        ] {
            let out = messages(with_memory(json!({"guest": "1Gi", "hugepages": hugepages})));
            assert_eq!(out.len(), 1, "{out:#?}");
            assert!(
                out[0].starts_with("spec.memory.hugepages.pageSize: ")
                    && out[0].contains("quantities must match the regular expression")
                    && out[0].ends_with(why),
                "{out:#?}"
            );
        }
    }

    /// A page size of 0 (however spelt) makes KubeVirt's VM webhook fail, dividing the memory
    /// by it: every VM naming the instancetype is refused.
    #[test]
    fn a_page_size_of_zero() {
        for page in ["0", "0Mi", "0.0", "0Ki"] {
            let out = messages(with_memory(
                json!({"guest": "1Gi", "hugepages": {"pageSize": page}}),
            ));
            assert_eq!(out.len(), 1, "{out:#?}");
            assert!(
                out[0].starts_with("spec.memory.hugepages.pageSize: ")
                    && out[0].contains("a page size of 0 makes KubeVirt's VM webhook fail")
                    && out[0].ends_with(&format!("(spec.memory.hugepages.pageSize `{page}` is 0)")),
                "{out:#?}"
            );
        }
    }

    #[test]
    fn pages_that_fit_are_fine() {
        for (guest, page) in [
            ("2Gi", "1Gi"),
            ("1Gi", "1Gi"),
            ("1024Mi", "1Gi"),
            ("512Mi", "2Mi"),
            ("0", "1Gi"),
        ] {
            let spec = with_memory(json!({"guest": guest, "hugepages": {"pageSize": page}}));
            assert!(messages(spec).is_empty(), "{guest} {page}");
        }
        // Without huge pages of the instancetype's, a VM may bring its own that fit.
        assert!(messages(with_memory(json!({"guest": "512Mi"}))).is_empty());
    }

    #[test]
    fn a_forgotten_unit_with_huge_pages_or_an_overcommit() {
        let out = messages(with_memory(
            json!({"guest": 8, "hugepages": {"pageSize": "2Mi"}}),
        ));
        assert_eq!(out.len(), 1, "{out:#?}");
        assert!(
            out[0].contains("(spec.memory.guest 8 is smaller than the hugepages page size 2Mi)"),
            "{out:#?}"
        );
        let out = messages(with_memory(json!({"guest": 8, "overcommitPercent": 10})));
        assert_eq!(
            out,
            [
                "spec.memory.guest: no VirtualMachine can use it: KubeVirt refuses every VM that \
              names it: spec.template.spec.domain.resources.requests.memory '7': must be \
              greater than or equal to 1M. (spec.memory.guest 8 less the 10% overcommit \
              leaves a memory request of 7 bytes; KubeVirt takes none below 1M)"
            ]
        );
        // A negative guest memory gives a negative request.
        let out = messages(with_memory(
            json!({"guest": "-1Gi", "overcommitPercent": 50}),
        ));
        assert_eq!(out.len(), 1, "{out:#?}");
        assert!(
            out[0].contains(
                "'-512Mi': must be greater than or equal to 0. (spec.memory.guest -1Gi less the \
                 50% overcommit leaves a memory request of -536870912 bytes; KubeVirt takes none \
                 below 0)"
            ),
            "{out:#?}"
        );
    }

    /// KubeVirt's VM webhook admits these: whatever fails later, it is not a refusal (a few
    /// bytes of memory get the warning of a unit left out, which says they are admitted).
    #[test]
    fn a_few_bytes_or_no_vcpus_alone_are_admitted() {
        let out = messages(with_memory(json!({"guest": 8})));
        assert!(
            out.len() == 1 && out[0].contains("KubeVirt admits a VM naming it"),
            "{out:#?}"
        );
        assert!(messages(json!({"cpu": {"guest": 0}, "memory": {"guest": "1Gi"}})).is_empty());
        assert!(
            messages(json!({"cpu": {"guest": 0, "dedicatedCPUPlacement": true},
                            "memory": {"guest": "1Gi"}}))
            .is_empty()
        );
        // An overcommit that leaves 1M or more, or nothing at all, is taken.
        for (guest, percent) in [("1Gi", 50), ("1Gi", 100), ("1M", 0), ("2M", 50)] {
            let spec = with_memory(json!({"guest": guest, "overcommitPercent": percent}));
            assert!(messages(spec).is_empty(), "{guest} {percent}");
        }
    }

    #[test]
    fn cpu_features_beside_dedicated_cpu_placement_false() {
        let out = messages(json!({
            "cpu": {"guest": 2, "dedicatedCPUPlacement": false, "isolateEmulatorThread": true,
                    "numa": {"guestMappingPassthrough": {}}, "realtime": {}},
            "memory": {"guest": "2Gi", "hugepages": {"pageSize": "1Gi"}}}));
        assert_eq!(out.len(), 3, "{out:#?}");
        assert!(
            out.iter()
                .all(|m| m.starts_with("spec.cpu.dedicatedCPUPlacement: "))
        );
        assert!(
            out[0].contains(
                "IsolateEmulatorThread should be only set in combination with \
                 DedicatedCPUPlacement (spec.cpu.isolateEmulatorThread needs dedicated CPUs; \
                 spec.cpu.dedicatedCPUPlacement is false, and a VM cannot turn it on)"
            ),
            "{out:#?}"
        );
        assert!(
            out[1].contains(
                "spec.template.spec.domain.cpu.dedicatedCpuPlacement must be set to true when \
                 NUMA topology strategy is set in \
                 spec.template.spec.domain.cpu.numa.guestMappingPassthrough"
            ),
            "{out:#?}"
        );
        assert!(
            out[2].contains(
                "spec.template.spec.domain.cpu.dedicatedCpuPlacement must be set to true when \
                 spec.template.spec.domain.cpu.realtime is used"
            ),
            "{out:#?}"
        );
    }

    /// Where the instancetype leaves `dedicatedCPUPlacement` unset, a VM may set it.
    #[test]
    fn cpu_features_a_vm_can_complete_are_fine() {
        let spec = json!({"cpu": {"guest": 2, "isolateEmulatorThread": true, "realtime": {},
                                  "numa": {"guestMappingPassthrough": {}}},
                          "memory": {"guest": "2Gi"}});
        assert!(messages(spec).is_empty());
        // Realtime without any `numa`: a VM may add one with passthrough.
        let spec = json!({"cpu": {"guest": 2, "dedicatedCPUPlacement": true, "realtime": {}},
                          "memory": {"guest": "2Gi"}});
        assert!(messages(spec).is_empty());
        // As the shipped catalog's realtime sizes are.
        let spec = json!({"cpu": {"guest": 2, "dedicatedCPUPlacement": true,
                                  "isolateEmulatorThread": true, "realtime": {},
                                  "numa": {"guestMappingPassthrough": {}}},
                          "memory": {"guest": "2Gi", "hugepages": {"pageSize": "1Gi"}}});
        assert!(messages(spec).is_empty());
    }

    #[test]
    fn realtime_beside_numa_without_passthrough() {
        let out = messages(json!({
            "cpu": {"guest": 2, "dedicatedCPUPlacement": true, "realtime": {}, "numa": {}},
            "memory": {"guest": "2Gi"}}));
        assert_eq!(
            out,
            [
                "spec.cpu.numa: no VirtualMachine can use it: KubeVirt refuses every VM that names \
              it: spec.template.spec.domain.cpu.numa.guestMappingPassthrough must be defined \
              when spec.template.spec.domain.cpu.realtime is used (spec.cpu.realtime needs \
              spec.cpu.numa.guestMappingPassthrough, and a VM cannot add it to the \
              instancetype's spec.cpu.numa)"
            ]
        );
    }

    #[test]
    fn io_threads_policies() {
        let spec = |extra: Value| {
            let mut spec = with_memory(json!({"guest": "1Gi"}));
            spec.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            spec
        };
        let out = messages(spec(json!({"ioThreadsPolicy": "dedicated"})));
        assert_eq!(
            out,
            [
                "spec.ioThreadsPolicy: no VirtualMachine can use it: KubeVirt refuses every VM \
              that names it: Invalid IOThreadsPolicy (dedicated) (spec.ioThreadsPolicy \
              `dedicated` is not one of `shared`, `auto` and `supplementalPool`)"
            ]
        );
        let out = messages(spec(json!({"ioThreadsPolicy": "supplementalPool",
                                        "ioThreads": {"supplementalPoolThreadCount": 0}})));
        assert_eq!(out.len(), 1, "{out:#?}");
        assert!(
            out[0].starts_with("spec.ioThreads.supplementalPoolThreadCount: ")
                && out[0].contains("(spec.ioThreads.supplementalPoolThreadCount is 0)"),
            "{out:#?}"
        );
        // Without a count of the instancetype's, a VM may give one.
        assert!(messages(spec(json!({"ioThreadsPolicy": "supplementalPool"}))).is_empty());
        for policy in ["shared", "auto"] {
            assert!(messages(spec(json!({"ioThreadsPolicy": policy}))).is_empty());
        }
        let taken = spec(json!({"ioThreadsPolicy": "supplementalPool",
                                "ioThreads": {"supplementalPoolThreadCount": 4}}));
        assert!(messages(taken).is_empty());
    }

    /// What the instancetype webhook refuses is `KV030`'s; wrong types are `KV004`'s.
    #[test]
    fn refused_or_mistyped_instancetypes_are_left_to_their_findings() {
        let spec = with_memory(json!({"guest": "512Mi", "overcommitPercent": 10,
                                      "hugepages": {"pageSize": "1Gi"}}));
        assert!(messages(spec).is_empty());
        let spec = with_memory(json!({"guest": "16GB", "hugepages": {"pageSize": "1Gi"}}));
        assert!(messages(spec).is_empty());
        let spec = with_memory(json!({"guest": "1Gi", "hugepages": {"pageSize": 2}}));
        assert!(messages(spec).is_empty());
        let spec = json!({"cpu": {"guest": 1, "dedicatedCPUPlacement": "false",
                                  "isolateEmulatorThread": true},
                          "memory": {"guest": "1Gi"}});
        assert!(messages(spec).is_empty());
    }

    /// The upstream bundle, which the shipped catalog renders object for object: every VM can
    /// use each of its instancetypes, those with huge pages, dedicated CPUs and realtime too.
    #[test]
    fn the_upstream_bundle_has_no_unusable_instancetype() {
        let bundle = include_str!("../../../testdata/anchors/common-instancetypes-bundle.yaml");
        let loaded = crate::load::parse_text(&std::sync::Arc::from("bundle.yaml"), bundle);
        let instancetypes: Vec<&Object> = loaded
            .objects
            .iter()
            .filter(|o| matches!(o.kind(), Kind::Instancetype | Kind::ClusterInstancetype))
            .collect();
        let with = |p: &[&str]| {
            instancetypes
                .iter()
                .filter(|o| path::get(&o.value, p).is_some())
                .count()
        };
        assert!(instancetypes.len() > 100, "{}", instancetypes.len());
        assert!(with(&["spec", "memory", "hugepages", "pageSize"]) > 10);
        assert!(with(&["spec", "cpu", "dedicatedCPUPlacement"]) > 10);
        assert!(with(&["spec", "cpu", "realtime"]) > 1);
        let mut out = Vec::new();
        for obj in instancetypes {
            check(obj, &mut out);
        }
        assert!(out.is_empty(), "{out:#?}");
    }

    #[test]
    fn both_scopes_are_checked_at_the_field_and_other_kinds_are_skipped() {
        let spec = with_memory(json!({"guest": "512Mi", "hugepages": {"pageSize": "1Gi"}}));
        for kind in [
            "VirtualMachineClusterInstancetype",
            "VirtualMachineInstancetype",
        ] {
            let out = it(kind, spec.clone());
            assert_eq!(out.len(), 1, "{out:?}");
            assert_eq!(out[0].code, "KV044");
            assert!(!out[0].is_error());
            assert_eq!(out[0].field.as_deref(), Some("spec.memory.guest"));
        }
        assert!(it("VirtualMachineClusterPreference", spec.clone()).is_empty());
        assert!(it("VirtualMachine", spec).is_empty());
    }
}

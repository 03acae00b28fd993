//! The part of `KV034` that judges string fields against the values KubeVirt's webhooks take
//! for them: the enumerations of KubeVirt's OpenAPI schema (Kubernetes' own types among them),
//! which the VM and VMI webhooks check the object against before anything else. The custom
//! resource definitions leave them out, so the API server stores any string there.
//!
//! The VM and VMI mutating webhooks check the object as the API server hands it over, as
//! written, so they refuse an empty string wherever it is. An object KubeVirt's own controllers
//! create (the VMI a VM starts, a pool's VMs) went through Go first, which leaves an empty
//! string out of a field it omits when empty (`omitempty`), but not out of a pointer or a list
//! item. The schema check names a field without list indices
//! (`spec.template.spec.tolerations.effect`); the findings keep them.

use serde_json::Value;

use crate::model::path;

type Found = Vec<(String, String)>;

/// `imagePullPolicy` of container disks and kernel boot containers.
const PULL_POLICIES: [&str; 3] = ["Always", "IfNotPresent", "Never"];
/// A toleration's `operator`.
const TOLERATION_OPERATORS: [&str; 2] = ["Equal", "Exists"];
/// A toleration's `effect`.
const TAINT_EFFECTS: [&str; 3] = ["NoExecute", "NoSchedule", "PreferNoSchedule"];
/// A spread constraint's `nodeAffinityPolicy` and `nodeTaintsPolicy`.
const INCLUSION_POLICIES: [&str; 2] = ["Honor", "Ignore"];
/// A probe's `httpGet.scheme`.
const SCHEMES: [&str; 2] = ["HTTP", "HTTPS"];
/// A DataVolume template's access modes, of its `storage` or its `pvc`.
const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];
/// A DataVolume template's volume mode, of its `storage` or its `pvc`.
const VOLUME_MODES: [&str; 3] = ["Block", "Filesystem", "FromStorageProfile"];

/// How Go writes an empty string in a field back.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Empty {
    /// Left out (`omitempty`): the check never sees it.
    Dropped,
    /// Kept (a pointer, a list item): the check refuses it like any other value.
    Kept,
    /// Left out by a write-back that has not happened yet: in a pass over the object as
    /// written that adds to a pass over it as written back, only the empty string is judged.
    Only,
}

/// Which object the check sees.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Pass {
    /// The object as KubeVirt's mutating webhooks write it back.
    WrittenBack,
    /// The object as written, before anything wrote it back.
    AsWritten,
    /// What [`Pass::AsWritten`] finds beyond [`Pass::WrittenBack`]: the empty strings of the
    /// fields Go leaves out when empty.
    EmptyAsWritten,
}

/// Whether the string `value` is not one of `allowed`, and then the finding at the field
/// `field` names (written out only then), in the schema check's words; other types are the
/// schema's (`KV004`).
pub(super) fn judge(
    value: Option<&Value>,
    field: impl FnOnce() -> String,
    allowed: &[&str],
    empty: Empty,
    found: &mut Found,
) -> bool {
    let Some(Value::String(given)) = value else {
        return false;
    };
    let judged = match empty {
        Empty::Dropped => !given.is_empty(),
        Empty::Kept => true,
        Empty::Only => given.is_empty(),
    };
    if !judged || allowed.contains(&given.as_str()) {
        return false;
    }
    let field = field();
    let message = format!("{field} in body should be one of [{}]", allowed.join(" "));
    found.push((field, message));
    true
}

/// The items of the list at `key` of `v`, with their index (absent or another type: none).
fn items<'a>(v: &'a Value, key: &str) -> impl Iterator<Item = (usize, &'a Value)> {
    v.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
}

/// The enumerated fields of the VMI spec at `at`: pull policies, tolerations, spread
/// constraints' inclusion policies and probes' schemes.
pub(super) fn check(spec: &Value, at: &str, found: &mut Found) {
    check_as(spec, at, Pass::WrittenBack, found);
}

/// What [`check`] leaves to the object as written: the empty strings Go would leave out, which
/// KubeVirt's mutating webhooks refuse in a VM's template or a VMI written by hand, before any
/// other check. The other values of these fields are [`check`]'s, on the spec as validated.
pub(super) fn empty_as_written(spec: &Value, at: &str, found: &mut Found) {
    check_as(spec, at, Pass::EmptyAsWritten, found);
}

/// [`check`], in one of the [`Pass`]es: of a spec as written (no mutating webhook wrote it
/// back first, so an empty string is judged wherever it is), as KubeVirt's mutating webhooks
/// write it back, or only for what the first finds beyond the second.
pub(super) fn check_as(spec: &Value, at: &str, pass: Pass, found: &mut Found) {
    // An empty string of an `omitempty` field is dropped only by a write-back; one of a
    // pointer is judged in both passes, so not again by the pass that adds to them.
    let (dropped, kept) = match pass {
        Pass::WrittenBack => (Empty::Dropped, Some(Empty::Kept)),
        Pass::AsWritten => (Empty::Kept, Some(Empty::Kept)),
        Pass::EmptyAsWritten => (Empty::Only, None),
    };
    for (i, volume) in items(spec, "volumes") {
        if let Some(disk) = volume.get("containerDisk") {
            let field = || format!("{at}.volumes[{i}].containerDisk.imagePullPolicy");
            let policy = disk.get("imagePullPolicy");
            judge(policy, field, &PULL_POLICIES, dropped, found);
        }
    }
    let kernel = ["domain", "firmware", "kernelBoot", "container"];
    if let Some(container) = path::get(spec, &kernel) {
        let field = || format!("{at}.domain.firmware.kernelBoot.container.imagePullPolicy");
        let policy = container.get("imagePullPolicy");
        judge(policy, field, &PULL_POLICIES, dropped, found);
    }
    for (i, toleration) in items(spec, "tolerations") {
        let field = |key: &str| format!("{at}.tolerations[{i}].{key}");
        let operator = toleration.get("operator");
        let (allowed, empty) = (&TOLERATION_OPERATORS, dropped);
        judge(operator, || field("operator"), allowed, empty, found);
        let effect = toleration.get("effect");
        judge(effect, || field("effect"), &TAINT_EFFECTS, dropped, found);
    }
    for (i, constraint) in items(spec, "topologySpreadConstraints") {
        let Some(kept) = kept else {
            break;
        };
        for key in ["nodeAffinityPolicy", "nodeTaintsPolicy"] {
            let field = || format!("{at}.topologySpreadConstraints[{i}].{key}");
            judge(constraint.get(key), field, &INCLUSION_POLICIES, kept, found);
        }
    }
    for probe in ["livenessProbe", "readinessProbe"] {
        if let Some(get) = path::get(spec, &[probe, "httpGet"]) {
            let field = || format!("{at}.{probe}.httpGet.scheme");
            judge(get.get("scheme"), field, &SCHEMES, dropped, found);
        }
    }
}

/// A kernel boot container's pull policy in the spec at `at`, as written: the one field of a
/// preset's domain that KubeVirt's schema lists values for.
pub(super) fn kernel_boot_pull_policy(spec: &Value, at: &str, found: &mut Found) {
    let kernel = ["domain", "firmware", "kernelBoot", "container"];
    if let Some(container) = path::get(spec, &kernel) {
        let field = || format!("{at}.domain.firmware.kernelBoot.container.imagePullPolicy");
        let policy = container.get("imagePullPolicy");
        judge(policy, field, &PULL_POLICIES, Empty::Kept, found);
    }
}

/// The access and volume modes of a VM's DataVolume templates (`vm_spec` is the VM's spec).
pub(super) fn data_volume_templates(vm_spec: &Value, found: &mut Found) {
    for (i, template) in items(vm_spec, "dataVolumeTemplates") {
        for claim in ["storage", "pvc"] {
            let Some(claim_spec) = path::get(template, &["spec", claim]) else {
                continue;
            };
            let at = |key: &str| format!("spec.dataVolumeTemplates[{i}].spec.{claim}.{key}");
            for (j, mode) in items(claim_spec, "accessModes") {
                let field = || format!("{}[{j}]", at("accessModes"));
                judge(Some(mode), field, &ACCESS_MODES, Empty::Kept, found);
            }
            let mode = claim_spec.get("volumeMode");
            judge(mode, || at("volumeMode"), &VOLUME_MODES, Empty::Kept, found);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(found: &Found) -> Vec<&str> {
        found.iter().map(|(f, _)| f.as_str()).collect()
    }

    #[test]
    fn values_outside_the_schema_are_refused_and_empty_ones_where_go_keeps_them() {
        let spec = json!({
            "volumes": [
                {"name": "a", "containerDisk": {"image": "x", "imagePullPolicy": "always"}},
                {"name": "b", "containerDisk": {"image": "x", "imagePullPolicy": ""}},
                {"name": "c", "containerDisk": {"image": "x", "imagePullPolicy": "Never"}},
            ],
            "domain": {"firmware": {"kernelBoot": {"container": {"imagePullPolicy": "Sometimes"}}}},
            "tolerations": [
                {"key": "k", "operator": "equal", "effect": "NoSchedule"},
                {"key": "k", "operator": "", "effect": ""},
                {"key": "k", "operator": "Exists", "effect": "noexecute"},
            ],
            "topologySpreadConstraints": [
                {"nodeAffinityPolicy": "Honor", "nodeTaintsPolicy": ""},
                {"nodeAffinityPolicy": "honor", "nodeTaintsPolicy": null},
            ],
            "livenessProbe": {"httpGet": {"port": 80, "scheme": "http"}},
            "readinessProbe": {"httpGet": {"port": 80, "scheme": ""}},
        });
        let mut found = Vec::new();
        check(&spec, "spec", &mut found);
        assert_eq!(
            fields(&found),
            [
                "spec.volumes[0].containerDisk.imagePullPolicy",
                "spec.domain.firmware.kernelBoot.container.imagePullPolicy",
                "spec.tolerations[0].operator",
                "spec.tolerations[2].effect",
                "spec.topologySpreadConstraints[0].nodeTaintsPolicy",
                "spec.topologySpreadConstraints[1].nodeAffinityPolicy",
                "spec.livenessProbe.httpGet.scheme",
            ]
        );
        assert_eq!(
            found[2].1,
            "spec.tolerations[0].operator in body should be one of [Equal Exists]"
        );
    }

    #[test]
    fn a_spec_as_written_adds_only_the_empty_strings_go_would_leave_out() {
        let spec = json!({
            "volumes": [
                {"name": "a", "containerDisk": {"image": "x", "imagePullPolicy": ""}},
                {"name": "b", "containerDisk": {"image": "x", "imagePullPolicy": "always"}},
            ],
            "tolerations": [{"key": "k", "operator": "", "effect": "NoSchedule"}],
            "topologySpreadConstraints": [{"nodeTaintsPolicy": ""}],
            "readinessProbe": {"httpGet": {"port": 80, "scheme": ""}},
        });
        let mut found = Vec::new();
        empty_as_written(&spec, "spec", &mut found);
        // `always` and the pointer's empty string are `check`'s, on the spec as validated.
        assert_eq!(
            fields(&found),
            [
                "spec.volumes[0].containerDisk.imagePullPolicy",
                "spec.tolerations[0].operator",
                "spec.readinessProbe.httpGet.scheme",
            ]
        );
        assert_eq!(
            found[2].1,
            "spec.readinessProbe.httpGet.scheme in body should be one of [HTTP HTTPS]"
        );
        let mut together = found.clone();
        check(&spec, "spec", &mut together);
        assert_eq!(together.len(), 5, "no finding twice: {together:?}");
    }

    #[test]
    fn data_volume_templates_take_known_access_and_volume_modes() {
        let vm_spec = json!({"dataVolumeTemplates": [
            {"spec": {"storage": {"accessModes": ["ReadWriteOnce", "RWO", ""], "volumeMode": ""}}},
            {"spec": {"pvc": {"accessModes": ["ReadWriteOncePod"], "volumeMode": "block"}}},
            {"spec": {"pvc": {"accessModes": "ReadWriteOnce", "volumeMode": "Filesystem"}}},
        ]});
        let mut found = Vec::new();
        data_volume_templates(&vm_spec, &mut found);
        let at = "spec.dataVolumeTemplates";
        assert_eq!(
            found,
            [
                (
                    format!("{at}[0].spec.storage.accessModes[1]"),
                    format!(
                        "{at}[0].spec.storage.accessModes[1] in body should be one of \
                         [ReadOnlyMany ReadWriteMany ReadWriteOnce ReadWriteOncePod]"
                    )
                ),
                (
                    format!("{at}[0].spec.storage.accessModes[2]"),
                    format!(
                        "{at}[0].spec.storage.accessModes[2] in body should be one of \
                         [ReadOnlyMany ReadWriteMany ReadWriteOnce ReadWriteOncePod]"
                    )
                ),
                (
                    format!("{at}[0].spec.storage.volumeMode"),
                    format!(
                        "{at}[0].spec.storage.volumeMode in body should be one of \
                         [Block Filesystem FromStorageProfile]"
                    )
                ),
                (
                    format!("{at}[1].spec.pvc.volumeMode"),
                    format!(
                        "{at}[1].spec.pvc.volumeMode in body should be one of \
                         [Block Filesystem FromStorageProfile]"
                    )
                ),
            ]
        );
    }
}

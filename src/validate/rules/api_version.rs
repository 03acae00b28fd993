//! `KV021` api-version.
//!
//! ## What it checks
//! The `apiVersion` of the kinds kvrender knows: instancetypes and preferences must be
//! `instancetype.kubevirt.io/v1beta1`, VirtualMachines (and VMIs, presets) `kubevirt.io/v1`.
//! The old `flavor.kubevirt.io` kinds are reported with their replacements, and a kind that
//! the `kubevirt.io` or `instancetype.kubevirt.io` group does not have (`VirtualMachin`) with
//! the nearest one it has.
//!
//! A known kind in another group is reported only when the group may be meant as KubeVirt's:
//! one that names KubeVirt (`kubevirt.io` and its subgroups such as `pool.kubevirt.io`,
//! `kubevirt.com`), a group a few edits from `kubevirt.io` or `instancetype.kubevirt.io`
//! (`kubvirt.io`, `instancetypes.kubevirt.io`), or a group without a dot (`kubevirt`,
//! `instancetype`, the core group, `apps`: no CRD defines such a group).
//! Other groups have kinds of the same names, such as the VirtualMachines of vSphere's VM
//! Operator (`vmoperator.vmware.com`) and of Azure Service Operator (`compute.azure.com`):
//! those objects are not KubeVirt's, and every command passes them through unchecked.
//!
//! A catalog document (`InstancetypeFamily`, `Preference`, `Parts`) whose group may be meant as
//! `kvrender.io` (one without a dot, one naming kvrender, one a few edits away) is reported
//! too: it is not rendered, and would pass through with its templates while the family or
//! preference goes missing from the output. Another project's `Preference` or `Parts` kind
//! (`settings.example.com`) is not kvrender's.
//!
//! Every command reports these errors. The cluster cannot hold an object of an apiVersion
//! KubeVirt does not serve for its kind ([`Object::is_served`]): nothing resolves against such
//! an instancetype or preference (a VM naming it gets `KV011`), and no command expands such a
//! VM or builds its VMI.
//!
//! ## Why
//! KubeVirt no longer serves `instancetype.kubevirt.io/v1alpha1` and `v1alpha2`, nor the
//! `flavor.kubevirt.io` group: applying such a manifest fails with "no matches for kind". A
//! wrong group on a known kind usually means a typo, and `kubevirt.io/v1alpha3` is deprecated.
//!
//! ## Example
//! ```yaml
//! apiVersion: instancetype.kubevirt.io/v1alpha1
//! kind: VirtualMachineClusterInstancetype
//! ```
//!
//! ## Fix
//! Use the apiVersion (and kind) the message names; the v1beta1 spec is a superset of the
//! alpha ones for the fields instancetypes set.

use std::fmt::Write;

use crate::diagnostic::{Diagnostic, Severity, codes, nearest_name};
use crate::model::Object;
use crate::model::object::INSTANCETYPE_GROUP;
use crate::validate::Rule;

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::API_VERSION,
    name: "api-version",
    summary: "An unknown or outdated apiVersion for a KubeVirt kind (e.g. `instancetype.kubevirt.io/v1alpha1`, `flavor.kubevirt.io`, a misspelt group such as `kubvirt.io`), or a kind KubeVirt's API groups do not have; a catalog document in a misspelt `kvrender.io` group (`kvrender.dev`), which would not be rendered. A kind of KubeVirt's name in another project's group (vSphere's `vmoperator.vmware.com` VirtualMachine) is not KubeVirt's and is not checked.",
    severity: Severity::Error,
};

/// The apiVersion of instancetypes and preferences.
pub const INSTANCETYPE_VERSION: &str = "instancetype.kubevirt.io/v1beta1";
const CORE_VERSION: &str = "kubevirt.io/v1";

/// The kinds KubeVirt serves in the two groups kvrender reads, as its CRDs define them.
const GROUP_KINDS: [(&str, &[&str]); 2] = [
    (
        "kubevirt.io",
        &[
            "VirtualMachine",
            "VirtualMachineInstance",
            "VirtualMachineInstancePreset",
            "VirtualMachineInstanceReplicaSet",
            "VirtualMachineInstanceMigration",
            "KubeVirt",
        ],
    ),
    (
        INSTANCETYPE_GROUP,
        &[
            "VirtualMachineInstancetype",
            "VirtualMachineClusterInstancetype",
            "VirtualMachinePreference",
            "VirtualMachineClusterPreference",
        ],
    ),
];

/// The kind of either group nearest to `kind`, to suggest for a misspelt one (see
/// [`nearest_name`]).
fn nearest_kind(kind: &str) -> Option<&'static str> {
    nearest_name(
        kind,
        GROUP_KINDS
            .iter()
            .flat_map(|(_, kinds)| kinds.iter().copied()),
    )
}

/// Whether `group` may be meant as one of KubeVirt's (see the module docs): a group without a
/// dot (the core group, `kubevirt` for `kubevirt.io`), one that names KubeVirt (`kubevirt.io`
/// and the groups under it, `kubevirt.com`), or a group [`nearest_name`] takes for a
/// misspelling of `kubevirt.io` or `instancetype.kubevirt.io`.
fn may_mean_kubevirt(group: &str) -> bool {
    // Every group a CRD defines has a dot: one without (`kubevirt`, `instancetype`, `apps`) is
    // a built-in group or a shortened one.
    !group.contains('.')
        || group.to_ascii_lowercase().contains("kubevirt")
        || nearest_name(group, ["kubevirt.io", INSTANCETYPE_GROUP]).is_some()
}

/// The kind that replaces an old `flavor.kubevirt.io` kind.
fn flavor_replacement(kind: &str) -> Option<&'static str> {
    match kind {
        "VirtualMachineFlavor" => Some("VirtualMachineInstancetype"),
        "VirtualMachineClusterFlavor" => Some("VirtualMachineClusterInstancetype"),
        _ => None,
    }
}

/// kvrender's own catalog kinds.
const CATALOG_KINDS: [&str; 3] = ["InstancetypeFamily", "Preference", "Parts"];

/// Whether `group` may be meant as kvrender's catalog group: one without a dot (no CRD defines
/// such a group), one that names kvrender, or one a few edits from `kvrender.io`.
fn may_mean_kvrender(group: &str) -> bool {
    !group.contains('.')
        || group.to_ascii_lowercase().contains("kvrender")
        || nearest_name(group, [crate::render::CATALOG_GROUP]).is_some()
}

/// Report an unknown or outdated apiVersion.
pub fn check(obj: &Object, out: &mut Vec<Diagnostic>) {
    let api_version = obj.api_version();
    let kind = obj.kind_str();
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let report = |severity: Severity, message: String| {
        Diagnostic::error(RULE.code, obj.origin.clone(), message)
            .with_severity(severity)
            .with_object(obj.object_ref())
            .with_field("apiVersion")
    };
    // A catalog document whose group is misspelt is not rendered: it would pass through, its
    // templates unrendered, and the family or preference would be missing from the output.
    if CATALOG_KINDS.contains(&kind)
        && group != crate::render::CATALOG_GROUP
        && may_mean_kvrender(group)
    {
        out.push(report(
            Severity::Error,
            format!(
                "`{}` is not kvrender's catalog group, so this {kind} is not rendered (it \
                 would be passed through as it is); use `apiVersion: {}`",
                crate::diagnostic::shortened(api_version),
                crate::render::CATALOG_API_VERSION
            ),
        ));
        return;
    }
    if group == "flavor.kubevirt.io"
        || (flavor_replacement(kind).is_some() && may_mean_kubevirt(group))
    {
        let message = match flavor_replacement(kind) {
            Some(new) => format!(
                "`{api_version}` {kind} no longer exists: flavors were renamed instancetypes; \
                 use `apiVersion: {INSTANCETYPE_VERSION}` and `kind: {new}`"
            ),
            None => format!(
                "the `flavor.kubevirt.io` group no longer exists: flavors were renamed \
                 instancetypes (`{INSTANCETYPE_VERSION}`)"
            ),
        };
        out.push(report(Severity::Error, message));
        return;
    }
    let known_anywhere = GROUP_KINDS.iter().any(|(_, kinds)| kinds.contains(&kind));
    if !known_anywhere && let Some((_, kinds)) = GROUP_KINDS.iter().find(|(g, _)| *g == group) {
        let mut message = format!(
            "KubeVirt's `{group}` group has no kind `{}`",
            crate::diagnostic::shortened(kind)
        );
        match nearest_kind(kind) {
            Some(near) => {
                let _ = write!(message, "; did you mean `{near}`?");
            }
            None => {
                let _ = write!(message, " (it has {})", kinds.join(", "));
            }
        }
        let mut d = report(Severity::Error, message);
        d.field = Some("kind".to_string());
        d.origin = obj.field_origin("kind");
        out.push(d);
        return;
    }
    let wanted = match kind {
        "VirtualMachineInstancetype"
        | "VirtualMachineClusterInstancetype"
        | "VirtualMachinePreference"
        | "VirtualMachineClusterPreference" => INSTANCETYPE_VERSION,
        "VirtualMachine" | "VirtualMachineInstance" | "VirtualMachineInstancePreset" => {
            CORE_VERSION
        }
        _ => return,
    };
    if api_version == wanted {
        return;
    }
    let wanted_group = wanted.split_once('/').map_or("", |(g, _)| g);
    if group != wanted_group && !may_mean_kubevirt(group) {
        // Another project's kind of the same name.
        return;
    }
    let message = if group == wanted_group {
        if obj.kind().is_served_as(version) {
            // Served, but not the current version: `kubevirt.io/v1alpha3`.
            out.push(report(
                Severity::Warning,
                format!(
                    "`{api_version}` is deprecated and will be removed; use `apiVersion: \
                     {wanted}`"
                ),
            ));
            return;
        }
        match (group, version) {
            (INSTANCETYPE_GROUP, "v1alpha1" | "v1alpha2") => format!(
                "`{api_version}` is no longer served by KubeVirt; use `apiVersion: \
                 {INSTANCETYPE_VERSION}`"
            ),
            _ => format!(
                "KubeVirt does not serve {kind} as `{api_version}`; use `apiVersion: {wanted}`"
            ),
        }
    } else {
        format!("{kind} belongs to `{wanted}`, not `{api_version}`; use `apiVersion: {wanted}`")
    };
    out.push(report(Severity::Error, message));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;
    use serde_json::json;

    fn run(api_version: &str, kind: &str) -> Vec<Diagnostic> {
        let obj = Object::new(
            json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}),
            Origin::default(),
        );
        let mut out = Vec::new();
        check(&obj, &mut out);
        out
    }

    #[test]
    fn current_versions_pass() {
        assert!(
            run(
                "instancetype.kubevirt.io/v1beta1",
                "VirtualMachinePreference"
            )
            .is_empty()
        );
        assert!(run("kubevirt.io/v1", "VirtualMachine").is_empty());
        assert!(run("v1", "ConfigMap").is_empty());
    }

    #[test]
    fn alpha_instancetypes_and_flavors_name_the_replacement() {
        let d = run(
            "instancetype.kubevirt.io/v1alpha1",
            "VirtualMachineInstancetype",
        );
        assert!(d[0].is_error());
        assert!(d[0].message.contains(INSTANCETYPE_VERSION));
        let d = run("flavor.kubevirt.io/v1alpha1", "VirtualMachineClusterFlavor");
        assert!(d[0].message.contains("VirtualMachineClusterInstancetype"));
    }

    #[test]
    fn a_kind_the_group_does_not_have_is_an_error_with_the_nearest_kind() {
        let d = run("kubevirt.io/v1", "VirtualMachin");
        assert!(d[0].is_error());
        assert_eq!(
            d[0].message,
            "KubeVirt's `kubevirt.io` group has no kind `VirtualMachin`; did you mean \
             `VirtualMachine`?"
        );
        assert_eq!(d[0].field.as_deref(), Some("kind"));
        let d = run(
            "instancetype.kubevirt.io/v1beta1",
            "virtualmachineclusterpreference",
        );
        assert!(
            d[0].message
                .ends_with("did you mean `VirtualMachineClusterPreference`?")
        );
        let d = run("instancetype.kubevirt.io/v1beta1", "Flavour");
        assert!(
            d[0].message
                .contains("(it has VirtualMachineInstancetype, ")
        );
        // The other KubeVirt groups are not checked, nor other groups.
        assert!(run("pool.kubevirt.io/v1beta1", "VirtualMachinePool").is_empty());
        assert!(run("example.com/v1", "VirtualMachin").is_empty());
        assert!(run("kubevirt.io/v1", "VirtualMachineInstanceMigration").is_empty());
    }

    /// vSphere's VM Operator, Azure Service Operator and others have kinds named as KubeVirt's;
    /// a group that looks like a misspelt KubeVirt one is still reported.
    #[test]
    fn a_known_kind_of_another_projects_group_is_not_checked() {
        for (api_version, kind) in [
            ("vmoperator.vmware.com/v1alpha1", "VirtualMachine"),
            ("compute.azure.com/v1api20220301", "VirtualMachine"),
            (
                "instancetype.example.com/v1",
                "VirtualMachineClusterInstancetype",
            ),
            ("example.com/v1", "VirtualMachineFlavor"),
        ] {
            assert!(run(api_version, kind).is_empty(), "{api_version} {kind}");
        }
        for (api_version, kind, wanted) in [
            ("kubevirt.i0/v1", "VirtualMachine", CORE_VERSION),
            ("kubvirt.io/v1", "VirtualMachine", CORE_VERSION),
            ("KubeVirt.io/v1", "VirtualMachine", CORE_VERSION),
            ("kubevirt.com/v1", "VirtualMachineInstance", CORE_VERSION),
            ("pool.kubevirt.io/v1beta1", "VirtualMachine", CORE_VERSION),
            ("v1", "VirtualMachine", CORE_VERSION),
            ("kubevirt/v1", "VirtualMachine", CORE_VERSION),
            ("apps/v1", "VirtualMachine", CORE_VERSION),
            ("kubevirt.x-k8s.io/v1", "VirtualMachine", CORE_VERSION),
            (
                "instancetype/v1beta1",
                "VirtualMachinePreference",
                INSTANCETYPE_VERSION,
            ),
            (
                "instancetypes.kubevirt.io/v1beta1",
                "VirtualMachinePreference",
                INSTANCETYPE_VERSION,
            ),
            (
                "kubevirt.io/v1",
                "VirtualMachineInstancetype",
                INSTANCETYPE_VERSION,
            ),
        ] {
            let d = run(api_version, kind);
            assert_eq!(d.len(), 1, "{api_version} {kind}");
            assert!(d[0].is_error());
            assert_eq!(
                d[0].message,
                format!(
                    "{kind} belongs to `{wanted}`, not `{api_version}`; use `apiVersion: \
                     {wanted}`"
                )
            );
        }
        let d = run("kubevirt.io/v1alpha1", "VirtualMachineFlavor");
        assert!(
            d[0].message.contains("flavors were renamed"),
            "{}",
            d[0].message
        );
    }

    #[test]
    fn a_hostile_kind_is_shown_shortened_and_costs_no_edit_count() {
        let kind = "V".repeat(1 << 20);
        let d = run("kubevirt.io/v1", &kind);
        assert!(d[0].is_error());
        assert!(d[0].message.len() < 400, "{}", d[0].message.len());
        let shown = d[0]
            .object
            .as_ref()
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(shown.len() < 100, "{}", shown.len());
    }

    #[test]
    fn a_catalog_kind_in_a_misspelt_group_is_an_error() {
        for api_version in [
            "kvrender.dev/v1alpha1",
            "kvrender/v1alpha1",
            "kvrendr.io/v1alpha1",
            "v1alpha1",
            "",
        ] {
            for kind in ["InstancetypeFamily", "Preference", "Parts"] {
                let d = run(api_version, kind);
                assert_eq!(d.len(), 1, "{api_version} {kind}: {d:?}");
                assert!(d[0].is_error());
                assert!(
                    d[0].message.contains(&format!(
                        "so this {kind} is not rendered (it would be passed through as it is); \
                         use `apiVersion: kvrender.io/v1alpha1`"
                    )),
                    "{}",
                    d[0].message
                );
            }
        }
        // kvrender's own group is the renderer's to judge; another project's `Preference` or
        // `Parts` is not kvrender's.
        for (api_version, kind) in [
            ("kvrender.io/v1alpha1", "InstancetypeFamily"),
            ("kvrender.io/v1alpha2", "Preference"),
            ("inventory.example.com/v1", "Parts"),
            ("settings.example.com/v1", "Preference"),
        ] {
            assert!(run(api_version, kind).is_empty(), "{api_version} {kind}");
        }
    }

    #[test]
    fn v1alpha3_vm_is_a_warning() {
        let d = run("kubevirt.io/v1alpha3", "VirtualMachine");
        assert_eq!(d[0].severity, Severity::Warning);
        assert_eq!(
            d[0].message,
            "`kubevirt.io/v1alpha3` is deprecated and will be removed; use `apiVersion: \
             kubevirt.io/v1`"
        );
    }

    /// The rule refuses exactly the objects [`Object::is_served`] says the cluster cannot
    /// hold, which nothing resolves against and no command expands.
    #[test]
    fn an_error_exactly_for_the_versions_kubevirt_does_not_serve() {
        for (group, kinds) in GROUP_KINDS {
            for kind in kinds {
                for version in [
                    "v1", "v1alpha1", "v1alpha2", "v1alpha3", "v1beta1", "v2", "",
                ] {
                    let api_version = format!("{group}/{version}");
                    let obj = Object::new(
                        json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}}),
                        Origin::default(),
                    );
                    if obj.kind() == crate::model::Kind::Other {
                        continue;
                    }
                    let d = run(&api_version, kind);
                    assert_eq!(
                        d.iter().any(Diagnostic::is_error),
                        !obj.is_served(),
                        "{api_version} {kind}: {d:?}"
                    );
                }
            }
        }
    }
}

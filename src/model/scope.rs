//! Which kinds are cluster-scoped, for objects of kinds kvrender does not otherwise know.
//!
//! The API server ignores `metadata.namespace` on a cluster-scoped object, and puts a namespaced
//! object without one where `kubectl apply` runs (here, as everywhere in kvrender, `default`).
//! Which kinds are which it learns from discovery; offline, kvrender knows what kustomize (v5)
//! knows: the built-in cluster-scoped kinds below. Any other kind, custom resources included,
//! counts as namespaced, as it does to kustomize.

/// kustomize's (v5) built-in cluster-scoped kinds: its API schema's, by API group, versions and
/// kinds.
const CLUSTER_SCOPED: &[(&str, &[&str], &[&str])] = &[
    (
        "",
        &["v1"],
        &["ComponentStatus", "Namespace", "Node", "PersistentVolume"],
    ),
    (
        "admissionregistration.k8s.io",
        &["v1", "v1beta1"],
        &[
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
        ],
    ),
    (
        "apiextensions.k8s.io",
        &["v1", "v1beta1"],
        &["CustomResourceDefinition"],
    ),
    (
        "apiregistration.k8s.io",
        &["v1", "v1beta1"],
        &["APIService"],
    ),
    (
        "certificates.k8s.io",
        &["v1", "v1beta1"],
        &["CertificateSigningRequest"],
    ),
    (
        "flowcontrol.apiserver.k8s.io",
        &["v1beta1"],
        &["FlowSchema", "PriorityLevelConfiguration"],
    ),
    ("networking.k8s.io", &["v1", "v1beta1"], &["IngressClass"]),
    ("node.k8s.io", &["v1", "v1beta1"], &["RuntimeClass"]),
    ("policy", &["v1beta1"], &["PodSecurityPolicy"]),
    (
        "rbac.authorization.k8s.io",
        &["v1", "v1beta1"],
        &["ClusterRole", "ClusterRoleBinding"],
    ),
    ("scheduling.k8s.io", &["v1", "v1beta1"], &["PriorityClass"]),
    (
        "storage.k8s.io",
        &["v1", "v1beta1"],
        &["CSIDriver", "CSINode", "StorageClass", "VolumeAttachment"],
    ),
];

/// Whether `kind` is one of KubeVirt's cluster-scoped kinds that VMs name:
/// `VirtualMachineClusterInstancetype` or `VirtualMachineClusterPreference`.
pub fn is_kubevirt_cluster_scoped(kind: &str) -> bool {
    matches!(
        kind,
        "VirtualMachineClusterInstancetype" | "VirtualMachineClusterPreference"
    )
}

/// Whether an object of `api_version` and `kind` is cluster-scoped: one of KubeVirt's cluster
/// instancetypes and preferences, or a built-in cluster-scoped kind.
pub fn is_cluster_scoped(api_version: &str, kind: &str) -> bool {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    is_kubevirt_cluster_scoped(kind) || is_builtin_cluster_scoped(group, version, kind)
}

/// Whether `kind` of `group` at `version` is one of the built-in cluster-scoped kinds.
pub fn is_builtin_cluster_scoped(group: &str, version: &str, kind: &str) -> bool {
    CLUSTER_SCOPED.iter().any(|(g, versions, kinds)| {
        *g == group && versions.contains(&version) && kinds.contains(&kind)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_cluster_scoped_kinds_by_group_and_version() {
        assert!(is_builtin_cluster_scoped("", "v1", "Namespace"));
        assert!(is_builtin_cluster_scoped(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRole"
        ));
        assert!(!is_builtin_cluster_scoped("", "v1", "ConfigMap"));
        assert!(!is_builtin_cluster_scoped(
            "rbac.authorization.k8s.io",
            "v1",
            "Role"
        ));
        assert!(!is_builtin_cluster_scoped("example.com", "v1", "Namespace"));
        assert!(!is_builtin_cluster_scoped("", "v2", "Namespace"));
    }
}

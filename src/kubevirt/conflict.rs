//! Conflicts between a VirtualMachine and its instancetype.
//!
//! Mirrors `pkg/instancetype/conflict` of KubeVirt: a conflict is a field path such as
//! `spec.template.spec.domain.cpu.cores` (or `annotations.<key>` for an annotation, without the
//! `spec.template` prefix, exactly as KubeVirt reports it).

use std::fmt;

/// One field the VM sets that the instancetype owns.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Conflict {
    /// The dotted field path, as KubeVirt prints it.
    pub path: String,
}

impl Conflict {
    /// A conflict at `spec.template.spec.<rest>`.
    pub fn spec(rest: &str) -> Self {
        Conflict {
            path: format!("spec.template.spec.{rest}"),
        }
    }

    /// A conflict on a template annotation (KubeVirt writes `annotations.<key>`; the empty key,
    /// a path step without a name, as apimachinery writes it: `annotations[]`).
    pub fn annotation(key: &str) -> Self {
        let path = if key.is_empty() {
            "annotations[]".to_string()
        } else {
            format!("annotations.{key}")
        };
        Conflict { path }
    }

    /// The VM field the conflict is about: its path, or for an annotation the template's
    /// `metadata.annotations` entry (the map itself for the empty key).
    pub fn vm_field(&self) -> String {
        vm_field_of(&self.path)
    }

    /// Whether KubeVirt's CPU group reported this conflict (the CPU requests and limits, and
    /// the fields of `domain.cpu`).
    pub fn is_cpu(&self) -> bool {
        self.path
            .strip_prefix("spec.template.spec.domain.")
            .is_some_and(|rest| {
                rest.starts_with("cpu.")
                    || (rest.starts_with("resources.") && rest.ends_with(".cpu"))
            })
    }
}

/// The VM field a conflict path of KubeVirt's is about, as the VM spells it: for an annotation
/// the template's `metadata.annotations` entry (the map itself for the empty key), for
/// `dedicatedCPUPlacement` (the instancetype's spelling, which KubeVirt's message uses) the
/// VM's `dedicatedCpuPlacement`; any other path as it is.
pub fn vm_field_of(path: &str) -> String {
    if path == "annotations[]" {
        return "spec.template.metadata.annotations".to_string();
    }
    if let Some(key) = path.strip_prefix("annotations.") {
        return format!("spec.template.metadata.annotations.{key}");
    }
    if let Some(cpu) = path.strip_suffix(".cpu.dedicatedCPUPlacement") {
        return format!("{cpu}.cpu.dedicatedCpuPlacement");
    }
    path.to_string()
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.path)
    }
}

/// KubeVirt's message for a list of conflicts.
pub fn message(conflicts: &[Conflict]) -> String {
    let paths: Vec<&str> = conflicts.iter().map(|c| c.path.as_str()).collect();
    format!(
        "VM field(s) {} conflicts with selected instance type",
        paths.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_annotation_key_is_a_step_without_a_name() {
        assert_eq!(Conflict::annotation("").path, "annotations[]");
        assert_eq!(Conflict::annotation("a.b/c").path, "annotations.a.b/c");
        assert_eq!(
            Conflict::annotation("").vm_field(),
            "spec.template.metadata.annotations"
        );
        assert_eq!(
            Conflict::annotation("a").vm_field(),
            "spec.template.metadata.annotations.a"
        );
        assert_eq!(
            Conflict::spec("nodeSelector").vm_field(),
            "spec.template.spec.nodeSelector"
        );
        assert_eq!(
            Conflict::spec("domain.cpu.dedicatedCPUPlacement").vm_field(),
            "spec.template.spec.domain.cpu.dedicatedCpuPlacement"
        );
    }

    #[test]
    fn the_cpu_group_owns_the_cpu_fields_and_the_cpu_requests_and_limits() {
        for rest in [
            "domain.cpu.sockets",
            "domain.cpu.numa",
            "domain.resources.requests.cpu",
            "domain.resources.limits.cpu",
        ] {
            assert!(Conflict::spec(rest).is_cpu(), "{rest}");
        }
        for rest in [
            "domain.memory.guest",
            "domain.resources.requests.memory",
            "nodeSelector",
            "domain.ioThreadsPolicy",
        ] {
            assert!(!Conflict::spec(rest).is_cpu(), "{rest}");
        }
        assert!(!Conflict::annotation("cpu").is_cpu());
    }
}

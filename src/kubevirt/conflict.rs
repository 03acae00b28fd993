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

    /// A conflict on a template annotation (KubeVirt writes `annotations.<key>`).
    pub fn annotation(key: &str) -> Self {
        Conflict {
            path: format!("annotations.{key}"),
        }
    }
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

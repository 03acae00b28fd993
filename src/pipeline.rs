//! The stages shared by every door into kvrender (CLI commands and the KRM function): expanding
//! the VirtualMachines among a set of objects and turning failures into diagnostics.

use rayon::prelude::*;
use serde_json::Value;

use crate::diagnostic::{Diagnostic, codes};
use crate::kubevirt::expand::{self, ExpandError};
use crate::kubevirt::profile::ClusterProfile;
use crate::model::{Kind, Object};
use crate::resolve::Index;

/// The diagnostic for a VM that could not be expanded.
pub fn expand_diagnostic(vm: &Object, err: &ExpandError) -> Diagnostic {
    let (code, field) = match err {
        ExpandError::NotFound { field, .. } => {
            (codes::REFERENCE_NOT_FOUND, Some((*field).to_string()))
        }
        ExpandError::Conflicts(c) => (
            codes::CONFLICT,
            Some(
                c.iter()
                    .map(|c| c.path.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
        ),
        ExpandError::Other { field, .. } => (codes::BAD_MATCHER, field.clone()),
    };
    // Point at the line of the (first) field concerned.
    let line_field = match err {
        ExpandError::Conflicts(c) => c.first().map(|c| {
            c.path.strip_prefix("annotations.").map_or_else(
                || c.path.clone(),
                |k| format!("spec.template.metadata.annotations.{k}"),
            )
        }),
        ExpandError::NotFound { field, .. } => Some(format!("{field}.name")),
        ExpandError::Other { field, .. } => field.clone(),
    };
    let origin = line_field.map_or_else(|| vm.origin.clone(), |f| vm.field_origin(&f));
    let mut d = Diagnostic::error(code, origin, err.to_string()).with_object(vm.object_ref());
    d.field = field;
    d
}

/// Check what expansion needs of a VM before it runs: a name.
fn precheck(vm: &Object) -> Option<Diagnostic> {
    if vm.name().is_empty() {
        return Some(
            Diagnostic::error(
                codes::BAD_NAME,
                vm.origin.clone(),
                "the VirtualMachine has no `metadata.name`",
            )
            .with_object(vm.object_ref())
            .with_field("metadata.name"),
        );
    }
    None
}

/// Expand one VirtualMachine, as a value or a diagnostic.
pub fn expand_vm(
    vm: &Object,
    index: &Index<'_>,
    profile: &ClusterProfile,
) -> Result<Value, Diagnostic> {
    if let Some(d) = precheck(vm) {
        return Err(d);
    }
    expand::expand(vm, index, profile).map_err(|e| expand_diagnostic(vm, &e))
}

/// Expand every VirtualMachine among `objects` in parallel. The result has one entry per object,
/// in order: `None` for objects that are not VirtualMachines.
pub fn expand_all(
    objects: &[Object],
    index: &Index<'_>,
    profile: &ClusterProfile,
) -> Vec<Option<Result<Value, Diagnostic>>> {
    objects
        .par_iter()
        .map(|o| (o.kind() == Kind::VirtualMachine).then(|| expand_vm(o, index, profile)))
        .collect()
}

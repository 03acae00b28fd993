//! KubeVirt's semantics, reproduced offline. One module per upstream concept; each opens with
//! the upstream file it mirrors.

pub mod admission;
pub mod conflict;
pub mod defaults;
pub mod expand;
pub mod go_shape;
pub mod infer;
pub mod instancetype_apply;
pub mod migrate;
pub mod preference_apply;
pub mod presets;
pub mod profile;
pub mod typecheck;
pub mod vmi;
pub mod vmi_defaults;

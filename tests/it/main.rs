//! The one integration-test binary: one module per area.

mod common;
mod determinism;
mod expand;
mod hostile;
mod infer;
mod krm;
mod presets;
mod props;
mod render;
mod validate;
mod vmi;
mod yaml;

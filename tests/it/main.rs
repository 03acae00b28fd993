//! The one integration-test binary: one module per area.

mod build;
mod common;
mod expand;
mod infer;
mod krm;
mod presets;
mod render;
mod validate;
mod vmi;
mod yaml;

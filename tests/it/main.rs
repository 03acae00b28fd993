//! The one integration-test binary: one module per area.

mod api_version;
mod binary;
mod build;
mod common;
mod completion;
mod determinism;
mod expand;
mod hostile;
mod infer;
mod krm;
mod presets;
mod props;
mod readme;
mod render;
mod validate;
mod vmi;
mod yaml;

/// The VM generator of the benchmarks.
#[path = "../../benches/support/gen.rs"]
#[allow(dead_code)]
mod vm_gen;

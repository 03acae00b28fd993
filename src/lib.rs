//! kvrender renders KubeVirt instancetype catalogs and expands VirtualMachines offline.
//!
//! The pipeline is **load → resolve → render/expand → validate → emit**:
//!
//! - [`load`] reads files, directories and stdin, splits multi-document streams and parses each
//!   document into an [`model::Object`] that remembers its [`origin::Origin`].
//! - [`resolve`] indexes instancetypes and preferences (the user's files, rendered catalog
//!   families and the embedded common catalog) and finds what a VirtualMachine points at.
//! - [`render`] turns compact instancetype families and composed preferences into objects.
//! - [`kubevirt`] reproduces KubeVirt's own rules: instancetype and preference application,
//!   conflicts, cluster defaults, presets, inference and admission checks.
//! - [`emit`] prints YAML streams, directory trees, KRM ResourceLists and diagnostics.
//!
//! Only `load` reads files and only `emit` writes; everything between is data in, data out.

pub mod cli;
pub mod commands;
pub mod diagnostic;
pub mod emit;
pub mod error;
pub mod krm;
pub mod kubevirt;
pub mod load;
pub mod model;
pub mod origin;
pub mod pipeline;
pub mod render;
pub mod resolve;
pub mod validate;
pub mod workers;

/// Every kvrender binary (the tool, the floor it is measured against, the tests) allocates with
/// mimalloc: trees of small maps and strings are most of what kvrender allocates, and mimalloc
/// hands those out in a fraction of the system allocator's instructions. It is built without
/// transparent huge pages: a run lasts milliseconds, and zeroing 2 MiB pages cost more than
/// they saved. It is mimalloc's version 2 line: version 3 sets up the bitmaps of a 1 GiB arena
/// when the process starts: `kvrender --version` faults in 240 pages with it, 184 with
/// version 2.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

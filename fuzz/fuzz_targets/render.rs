//! Catalog documents: any bytes as a YAML stream go through the engine as `kvrender build`
//! runs it (families, parts and preferences rendered, VirtualMachines expanded against what
//! was rendered and the other objects, no embedded catalog) and the result is printed.
//! Nothing may panic: a template that renders nonsense is a finding, never a crash.
//!
//! `build` leaves VM documents as text and parses each on a worker: that path must give the
//! findings, and for a run without errors the stream, of the path that parses everything up
//! front (unless a VM document is not a VM after all, when `build` takes that path itself).
#![no_main]

use std::sync::Arc;

use kvrender::krm::config::{ExpandMode, FnConfig};
use kvrender::krm::engine::{self, Placement};
use kvrender::{emit, load};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let sources = [load::Source {
        path: Arc::from("catalog.yaml"),
        bytes: data.to_vec(),
    }];
    let config = FnConfig {
        render: true,
        expand: ExpandMode::Replace,
        default_catalog: false,
        version_label: Some("v1.0.0".to_string()),
        ..FnConfig::default()
    };
    let loaded = load::parse_sources(&sources);
    let whole = engine::process(loaded.objects, &config, Placement::Build);
    // An expanded VM is printed on its worker: its item is then a stub, its text in `printed`.
    let stream = emit::yaml_stream_parts_printed(&whole.items, whole.printed.clone()).concat();
    for d in &whole.diagnostics {
        let _ = emit::diagnostics::human_line(d);
    }

    let (deferring, vms) = load::deferred::load_deferring_vms(&sources);
    let Ok(on_workers) = engine::build_deferring_vms(deferring.objects, &vms, &config, &[])
    else {
        return;
    };
    let mut found = loaded.diagnostics;
    found.extend(whole.diagnostics);
    kvrender::diagnostic::sort(&mut found);
    let mut found_on_workers = deferring.diagnostics;
    found_on_workers.extend(on_workers.diagnostics);
    kvrender::diagnostic::sort(&mut found_on_workers);
    assert_eq!(found_on_workers, found);
    if !found.iter().any(kvrender::diagnostic::Diagnostic::is_error) {
        let printed = emit::yaml_stream_parts_printed(&on_workers.items, on_workers.printed);
        assert_eq!(printed.concat(), stream);
    }
});

//! Catalog documents: any bytes as a YAML stream go through the engine as `kvrender build`
//! runs it (families, parts and preferences rendered, VirtualMachines expanded against what
//! was rendered and the other objects, no embedded catalog) and the result is printed.
//! Nothing may panic: a template that renders nonsense is a finding, never a crash.
#![no_main]

use std::sync::Arc;

use kvrender::krm::config::{ExpandMode, FnConfig};
use kvrender::krm::engine::{self, Placement};
use kvrender::{emit, load};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let loaded = load::parse_bytes(&Arc::from("catalog.yaml"), data);
    let config = FnConfig {
        render: true,
        expand: ExpandMode::Replace,
        default_catalog: false,
        version_label: Some("v1.0.0".to_string()),
        ..FnConfig::default()
    };
    let processed = engine::process(loaded.objects, &config, Placement::Build);
    let _ = emit::yaml_stream_parts(&processed.items);
    for d in &processed.diagnostics {
        let _ = emit::diagnostics::human_line(d);
    }
});

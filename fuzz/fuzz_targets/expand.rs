//! Arbitrary objects: parse the bytes as a YAML stream, then expand every VirtualMachine against
//! the other objects (no embedded catalog) and print the results. Nothing may panic. The same
//! bytes also go through `expand` as the command runs it (VM documents deferred, output written
//! as it is ready), which must never fail: writing to memory cannot, and a document deferred as
//! a VM must parse as one or not at all.
#![no_main]

use std::sync::Arc;

use kvrender::commands::{expand, inputs::Inputs};
use kvrender::kubevirt::profile::ClusterProfile;
use kvrender::resolve::Index;
use kvrender::{emit, load, pipeline};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let sources = [load::Source {
        path: Arc::from("in.yaml"),
        bytes: data.to_vec(),
    }];
    let mut written = Vec::new();
    if let Err(e) = expand::expand_sources(&sources, &Inputs::default(), &mut written) {
        panic!("expand failed: {e}");
    }
    let loaded = load::parse_bytes(&Arc::from("in.yaml"), data);
    let mut index = Index::new();
    index.add_layer(&loaded.objects);
    let profile = ClusterProfile::default();
    for result in pipeline::expand_all(&loaded.objects, &index, &profile)
        .into_iter()
        .flatten()
    {
        match result {
            Ok(v) => {
                emit::yaml_stream([&v]);
            }
            Err(d) => {
                let _ = emit::diagnostics::human_line(&d);
            }
        }
    }
});

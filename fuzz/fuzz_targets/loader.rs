//! Bytes → objects: the loader must turn any input into objects and diagnostics, never panic,
//! and every object it returns must print as YAML that parses back to the same value. Every
//! document must also read the same through the quick reader as through serde-saphyr alone (as
//! a document, and as a node that may be a sequence), and a
//! document that `load::documents` leaves as text for being a VirtualMachine must parse as one
//! or not at all.
#![no_main]

use std::sync::Arc;

use kvrender::load::{self, yaml};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte picks the file type the path claims.
    let (path, bytes): (Arc<str>, &[u8]) = match data.split_first() {
        Some((b, rest)) if b % 4 == 0 => (Arc::from("in.json"), rest),
        Some((_, rest)) => (Arc::from("in.yaml"), rest),
        None => (Arc::from("in.yaml"), data),
    };
    if let Ok(text) = std::str::from_utf8(bytes) {
        for chunk in load::split::split(text) {
            let quick = yaml::parse_document(chunk.text);
            let full = yaml::parse_document_full(chunk.text);
            assert_eq!(quick, full, "the two readers disagree on:\n{}", chunk.text);
            // A list's items as a ResourceList's are cut out: a top-level sequence.
            let node = yaml::parse_node(chunk.text);
            assert_eq!(node, full, "the two readers disagree on the node:\n{}", chunk.text);
        }
    }
    let sources = [load::Source {
        path: path.clone(),
        bytes: bytes.to_vec(),
    }];
    for doc in load::documents(&sources, &|_, kind| kind == "VirtualMachine") {
        if let load::Document::Deferred(d) = doc
            && let Ok(o) = d.parse()
        {
            assert_eq!(o.kind_str(), "VirtualMachine", "deferred as a VM: {o:?}");
        }
    }
    let loaded = load::parse_bytes(&path, bytes);
    for obj in &loaded.objects {
        let _ = obj.object_ref();
        let _ = obj.field_line("spec.template.spec.domain.cpu");
        let text = yaml::to_string(&obj.value);
        let back = yaml::parse_document(&text)
            .unwrap_or_else(|e| panic!("printed YAML does not parse: {e:?}\n{text}"));
        assert_eq!(back, obj.value, "round trip changed the value:\n{text}");
    }
    for d in &loaded.diagnostics {
        let _ = kvrender::emit::diagnostics::human_line(d);
    }
});

//! The floor `kvrender expand` is measured against: parse every document of the sources and
//! print it again as YAML, with no rule applied, on the same loader, emitter and thread pool
//! (each document parsed and printed on a worker, as `expand` does with VirtualMachines).

use kvrender::emit;
use kvrender::load::{self, Document, Source};
use rayon::prelude::*;

/// The re-emitted stream and the number of documents that did not parse.
pub fn parse_and_emit(sources: &[Source]) -> (String, usize) {
    let docs = load::documents(sources, &|_, _| true);
    let printed: Vec<Option<String>> = docs
        .par_iter()
        .map(|doc| match doc {
            Document::Object(o) => Some(emit::stream_document(&o.value)),
            Document::Deferred(d) => d.parse().ok().map(|o| emit::stream_document(&o.value)),
            Document::Problem(_) => None,
        })
        .collect();
    let mut out = String::new();
    let mut problems = 0;
    for p in printed {
        match p {
            Some(s) => out.push_str(&s),
            None => problems += 1,
        }
    }
    (out, problems)
}

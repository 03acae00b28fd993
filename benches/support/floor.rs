//! The floor `kvrender expand` is measured against: parse every document of the sources and
//! print it again as YAML, with no rule applied, on the same loader, emitter and thread pool
//! (each document parsed and printed on a worker, as `expand` does with VirtualMachines).

use kvrender::emit;
use kvrender::load::{self, Document, Source};
use rayon::prelude::*;

/// The re-emitted documents, in order, and the number of documents that did not parse.
pub fn parse_and_emit(sources: &[Source]) -> (Vec<String>, usize) {
    let docs = load::documents(sources, &|_, _| true);
    let printed: Vec<Option<String>> = docs
        .par_iter()
        .map(|doc| match doc {
            Document::Object(o) => Some(emit::stream_document(&o.value)),
            Document::Deferred(d) => d.parse().ok().map(|o| emit::stream_document(&o.value)),
            Document::Problem(_) => None,
        })
        .collect();
    let problems = printed.iter().filter(|p| p.is_none()).count();
    (printed.into_iter().flatten().collect(), problems)
}

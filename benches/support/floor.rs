//! The floor `kvrender expand` is measured against: parse every document of the sources and
//! print it again as YAML, with no rule applied, on the same loader, emitter and thread pool
//! (each document parsed and printed on a worker, as `expand` does with VirtualMachines).

use std::io::Write;

use kvrender::emit::{self, ordered, ordered::Piece};
use kvrender::load::{self, Document, Source};

/// Re-emit every document to `out` in order, written as `expand` writes (as soon as every
/// document before it is); returns the number of documents that did not parse, or the write
/// error.
pub fn parse_and_emit(sources: &[Source], out: impl Write + Send) -> std::io::Result<usize> {
    let docs = load::documents(sources, &|_, _| true);
    let streamed = ordered::stream(&docs, out, |doc| {
        let printed = match doc {
            Document::Object(o) => Some(emit::stream_document(&o.value)),
            Document::Deferred(d) => d.parse().ok().map(|o| emit::stream_document(&o.value)),
            Document::Problem(_) => None,
        };
        printed.map_or(Piece::Keep(()), Piece::Print)
    });
    match streamed.error {
        Some(e) => Err(e),
        None => Ok(streamed.kept.len()),
    }
}

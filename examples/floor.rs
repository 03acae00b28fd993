//! The floor `kvrender expand` is measured against: read the same files, parse every document
//! and print it again as YAML, with no rule applied. Same loader, same emitter, same thread pool.
//!
//! `cargo run --release --example floor -- [--threads N] PATH... > out.yaml`

use std::io::Write;
use std::path::PathBuf;

use kvrender::emit;
use kvrender::load::{self, Document};
use rayon::prelude::*;

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    let mut pool = rayon::ThreadPoolBuilder::new().stack_size(16 << 20);
    let mut paths = Vec::new();
    while let Some(a) = args.next() {
        if a == "--threads" {
            let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1);
            pool = pool.num_threads(n.max(1));
        } else {
            paths.push(PathBuf::from(a));
        }
    }
    if pool.build_global().is_err() {
        std::process::exit(2);
    }
    let sources = match load::read_paths(&paths) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("floor: {e}");
            std::process::exit(2);
        }
    };
    // Each document parsed and printed on a worker, as `expand` does with VirtualMachines.
    let docs = load::documents(&sources, &|_, _| true);
    let printed: Vec<Result<String, String>> = docs
        .par_iter()
        .map(|doc| match doc {
            Document::Object(o) => emit::stream_document(&o.value).map_err(|e| e.to_string()),
            Document::Deferred(d) => match d.parse() {
                Ok(o) => emit::stream_document(&o.value).map_err(|e| e.to_string()),
                Err(d) => Err(d.message),
            },
            Document::Problem(d) => Err(d.message.clone()),
        })
        .collect();
    let mut out = String::new();
    let mut problems = 0;
    for p in printed {
        match p {
            Ok(s) => out.push_str(&s),
            Err(_) => problems += 1,
        }
    }
    let mut stdout = std::io::stdout().lock();
    if stdout.write_all(out.as_bytes()).is_err() {
        std::process::exit(2);
    }
    if problems > 0 {
        eprintln!("floor: {problems} documents did not parse");
        std::process::exit(1);
    }
}

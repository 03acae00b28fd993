//! The floor `kvrender expand` is measured against: read the same files, parse every document
//! and print it again as YAML, with no rule applied. Same loader, same emitter, same thread pool.
//!
//! `cargo run --release --example floor -- [--threads N] PATH... > out.yaml`

#[path = "../benches/support/floor.rs"]
mod floor;

use std::path::PathBuf;

use kvrender::load;

fn main() {
    let mut args = std::env::args().skip(1);
    let mut threads = None;
    let mut paths = Vec::new();
    while let Some(a) = args.next() {
        if a == "--threads" {
            let n: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1);
            threads = Some(n);
        } else {
            paths.push(PathBuf::from(a));
        }
    }
    // The same pool as `kvrender`'s: the calling thread is its first worker.
    let Ok(pool) = kvrender::workers::pool(threads) else {
        std::process::exit(2);
    };
    let written = pool.install(|| {
        let sources = match load::read_paths(&paths) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("floor: {e}");
                std::process::exit(2);
            }
        };
        // Written as `kvrender expand` writes: each document once every one before it is.
        floor::parse_and_emit(&sources, std::io::stdout())
    });
    // The pool may still hold a worker's leftovers; the process is about to end.
    std::mem::forget(pool);
    match written {
        Ok(0) => {}
        Ok(problems) => {
            eprintln!("floor: {problems} documents did not parse");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("floor: {e}");
            std::process::exit(2);
        }
    }
}

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
    let (out, problems) = pool.install(|| {
        let sources = match load::read_paths(&paths) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("floor: {e}");
                std::process::exit(2);
            }
        };
        floor::parse_and_emit(&sources)
    });
    // Written and left to the system at exit, as `kvrender` does with its output.
    let mut stdout = std::io::stdout().lock();
    if kvrender::emit::write_parts(&mut stdout, &out).is_err() {
        std::process::exit(2);
    }
    std::mem::forget(out);
    if problems > 0 {
        eprintln!("floor: {problems} documents did not parse");
        std::process::exit(1);
    }
}

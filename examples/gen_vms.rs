//! Print COUNT generated VirtualMachines (default 1000) as one YAML stream, for benchmarks and
//! load tests: `cargo run --release --example gen_vms -- 10000 [SEED] > vms.yaml`.

#[path = "../benches/support/gen.rs"]
mod vm_gen;

use std::io::Write;

fn main() {
    let mut args = std::env::args().skip(1);
    let count = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let seed = args.next().and_then(|a| a.parse().ok()).unwrap_or(7);
    let text = vm_gen::generate(count, seed);
    let mut out = std::io::stdout().lock();
    if out.write_all(text.as_bytes()).is_err() {
        std::process::exit(1);
    }
}

//! Library benchmarks (divan): rendering the shipped catalog, expanding generated
//! VirtualMachines through the same function `kvrender expand` runs, and the floor: parsing and
//! re-emitting the same YAML with no rules.
//!
//! `cargo bench --bench pipeline`. Whole-command comparisons (kustomize, memory, threads) are
//! in `bench/compare.sh`.

#[path = "support/floor.rs"]
mod floor;
#[path = "support/gen.rs"]
mod vm_gen;

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use divan::Bencher;
use kvrender::commands::expand::expand_sources;
use kvrender::commands::inputs::Inputs;
use kvrender::load::{self, Source};

fn main() {
    divan::main();
}

/// The inputs `expand` resolves against: the upstream bundle as `--catalog` (so the numbers do
/// not depend on whether the embedded catalog is built in).
fn inputs() -> &'static Inputs {
    static INPUTS: OnceLock<Inputs> = OnceLock::new();
    INPUTS.get_or_init(|| {
        let bundle = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/anchors/common-instancetypes-bundle.yaml");
        let sources = load::read_paths(&[bundle]).expect("the bundle is readable");
        Inputs {
            catalog: load::parse_sources(&sources).objects,
            embedded: true,
            ..Inputs::default()
        }
    })
}

/// A writer that only counts the bytes it is given.
struct Counted(usize);

impl std::io::Write for Counted {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn vms(count: usize) -> Vec<Source> {
    vec![Source {
        path: Arc::from("vms.yaml"),
        bytes: vm_gen::generate(count, 7).into_bytes(),
    }]
}

#[divan::bench(args = [1_000, 10_000], sample_count = 10)]
fn expand(bencher: Bencher, count: usize) {
    let sources = vms(count);
    let inputs = inputs();
    bencher.bench(|| {
        let mut written = Counted(0);
        let out = expand_sources(&sources, inputs, &mut written).expect("expand runs");
        assert_eq!(out.exit, 0, "{:?}", out.diagnostics.first());
        written.0
    });
}

#[divan::bench(args = [1_000, 10_000], sample_count = 10)]
fn parse_emit_floor(bencher: Bencher, count: usize) {
    let sources = vms(count);
    bencher.bench(|| {
        let mut written = Counted(0);
        let problems = floor::parse_and_emit(&sources, &mut written).expect("written");
        assert_eq!(problems, 0);
        written.0
    });
}

#[divan::bench(sample_count = 10)]
fn load_catalog_bundle(bencher: Bencher) {
    let bundle = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/anchors/common-instancetypes-bundle.yaml");
    let sources = load::read_paths(&[bundle]).expect("the bundle is readable");
    bencher.bench(|| load::parse_sources(&sources).objects.len());
}

#[divan::bench(sample_count = 10)]
fn render_shipped_catalog() -> usize {
    let rendered = kvrender::render::render_embedded(&kvrender::render::RenderOptions::default())
        .expect("the shipped catalog renders");
    let text = kvrender::emit::yaml_stream(rendered.objects.iter().map(|o| &o.value));
    text.len()
}

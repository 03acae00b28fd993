//! The commands not covered by the other targets, as the binary runs them on a file: `validate`,
//! `vmi` (both stages), `diff` and `migrate presets --with-vms`, on any bytes (no embedded catalog, so that
//! each input is the whole cluster). Each must finish with an outcome or an error, never a
//! panic.
#![no_main]

use std::sync::OnceLock;

use clap::Parser;
use kvrender::cli::{Cli, Command, MigrateCommand};
use kvrender::commands;
use libfuzzer_sys::fuzz_target;

/// One input file per fuzzing process, written for every input and removed after it (libFuzzer
/// ends the process without running destructors, so nothing else would remove it).
fn input_path() -> &'static std::path::Path {
    static PATH: OnceLock<std::path::PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::temp_dir().join(format!("kvrender-fuzz-{}.yaml", std::process::id()))
    })
}

fn run(args: &[&str]) {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => panic!("{args:?} do not parse: {e}"),
    };
    let _ = match &cli.command {
        Command::Validate(a) => commands::validate::run(a),
        Command::Vmi(a) => commands::vmi::run(a),
        Command::Diff(a) => commands::vmi::run_diff(a),
        Command::Migrate(MigrateCommand::Presets(a)) => commands::migrate::run_presets(a),
        _ => unreachable!("only the commands listed below"),
    };
}

fuzz_target!(|data: &[u8]| {
    let path = input_path();
    std::fs::write(path, data).expect("the temporary file is writable");
    let file = path.to_str().expect("a UTF-8 temporary path");
    run(&["kvrender", "validate", "--no-default-catalog", file]);
    run(&["kvrender", "vmi", "--no-default-catalog", file]);
    run(&["kvrender", "vmi", "--stage", "presets", "--no-default-catalog", file]);
    run(&["kvrender", "diff", "--color", "never", "--no-default-catalog", file]);
    run(&[
        "kvrender",
        "migrate",
        "presets",
        "--with-vms",
        "--no-default-catalog",
        file,
    ]);
    let _ = std::fs::remove_file(path);
});

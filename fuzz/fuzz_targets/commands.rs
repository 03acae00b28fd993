//! The commands not covered by the other targets, as the binary runs them on a file: `validate`
//! (reading the file as kustomize's output, `--built-from` its folder), `vmi` (both stages),
//! `diff` and `migrate presets --with-vms`, on any bytes (no embedded catalog, so that
//! each input is the whole cluster); then `vmi` and `validate` again with the bytes split at
//! the last document separator, the documents before it given with `--catalog` (the cluster's
//! presets, instancetypes and volumes) and the last one as the input. Each must finish with an
//! outcome or an error, never a panic.
#![no_main]

use std::sync::OnceLock;

use clap::Parser;
use kvrender::cli::{Cli, Command, MigrateCommand};
use kvrender::commands;
use libfuzzer_sys::fuzz_target;

/// One folder per fuzzing process, holding the input as `input.yaml`, written for every input and
/// removed after it (libFuzzer ends the process without running destructors, so nothing else
/// would remove it). `validate` reads the input as kustomize's output built from that folder
/// (`--built-from`), so an origin annotation `path: input.yaml` names the input itself.
fn input_dir() -> &'static std::path::Path {
    static PATH: OnceLock<std::path::PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("kvrender-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("the temporary folder is writable");
        dir
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
    let dir = input_dir();
    let path = dir.join("input.yaml");
    std::fs::write(&path, data).expect("the temporary file is writable");
    let file = path.to_str().expect("a UTF-8 temporary path");
    let folder = dir.to_str().expect("a UTF-8 temporary path");
    run(&[
        "kvrender",
        "validate",
        "--no-default-catalog",
        "--built-from",
        folder,
        file,
    ]);
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
    let _ = std::fs::remove_file(&path);
    if let Some(at) = data.windows(4).rposition(|w| w == b"\n---") {
        let cluster = dir.join("cluster.yaml");
        std::fs::write(&cluster, &data[..=at]).expect("the temporary file is writable");
        std::fs::write(&path, &data[at + 1..]).expect("the temporary file is writable");
        let cluster = cluster.to_str().expect("a UTF-8 temporary path");
        for command in [&["vmi"][..], &["validate"]] {
            let mut args = vec!["kvrender"];
            args.extend(command);
            args.extend(["--no-default-catalog", "--catalog", cluster, file]);
            run(&args);
        }
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_file(cluster);
    }
});

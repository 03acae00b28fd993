//! Embeds the shipped catalog: lists every `*.yaml` file under `catalog/` (sorted by path) as
//! `include_str!` entries in `$OUT_DIR/embedded_catalog.rs`, so adding a file to the catalog
//! needs no code change.
//!
//! On Linux with glibc it also links GCC's unwinder statically (see [`static_unwinder`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let hidden = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('.'));
        if hidden {
            continue;
        }
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
}

/// Link GCC's unwinder (`libgcc_eh.a`) into the program instead of loading `libgcc_s.so.1`,
/// as `-static-libgcc` does for C++ programs. Loading that library runs its constructor, which
/// asks the processor for its features with a dozen `cpuid` instructions; on a virtual machine
/// each one traps to the hypervisor, and together they cost about 0.25 ms of every run, a
/// tenth of a short command. The unwinder itself is the same code, linked once; the program
/// loads no other library that unwinds. Only for a native build on `linux-gnu` whose C
/// compiler has the archive, and not where the C runtime is linked statically anyway
/// (`crt-static`, which brings the same archive).
fn static_unwinder() {
    println!("cargo:rerun-if-env-changed=CC");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let native = var("HOST") == var("TARGET");
    let gnu_linux = var("CARGO_CFG_TARGET_OS") == "linux" && var("CARGO_CFG_TARGET_ENV") == "gnu";
    let crt_static = var("CARGO_CFG_TARGET_FEATURE")
        .split(',')
        .any(|f| f == "crt-static");
    if !native || !gnu_linux || crt_static {
        return;
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let Ok(out) = std::process::Command::new(cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
    else {
        return;
    };
    let archive = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    // Without the archive the compiler prints the bare name back.
    if !out.status.success() || !archive.is_absolute() || !archive.is_file() {
        return;
    }
    if let Some(dir) = archive.parent() {
        println!("cargo:rustc-link-search=native={}", dir.display());
        // Not bundled into the library: passed to the final link where the library is, ahead
        // of the standard library's `-lgcc_s`, which the linker then leaves out as not needed.
        println!("cargo:rustc-link-lib=static:-bundle=gcc_eh");
    }
}

fn main() {
    static_unwinder();
    let root =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let catalog = root.join("catalog");
    println!("cargo:rerun-if-changed=catalog");
    let mut files = Vec::new();
    collect(&catalog, &mut files);
    files.sort();
    let mut code =
        String::from("/// The shipped catalog files: (path relative to the crate, text).\n");
    code.push_str("pub(crate) static FILES: &[(&str, &str)] = &[\n");
    for file in &files {
        let relative = file
            .strip_prefix(&root)
            .expect("catalog files are inside the crate")
            .to_string_lossy()
            .replace('\\', "/");
        // The text is read from the crate that compiles this code, not from where the build
        // script ran: two clones sharing one target directory may share this file.
        writeln!(
            code,
            "    ({relative:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), {:?}))),",
            format!("/{relative}")
        )
        .expect("writing to a String cannot fail");
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("embedded_catalog.rs"), code).expect("OUT_DIR is writable");
}

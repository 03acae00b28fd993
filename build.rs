//! Embeds the shipped catalog: lists every `*.yaml` file under `catalog/` (sorted by path) as
//! `include_str!` entries in `$OUT_DIR/embedded_catalog.rs`, so adding a file to the catalog
//! needs no code change.

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

fn main() {
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

//! The binary itself: what it loads when it starts.

/// On Linux with glibc, GCC's unwinder is linked into the binary (see `build.rs`), so that the
/// loader does not load `libgcc_s.so.1` and run its processor probe at every start. The loader
/// says which libraries it loads when `LD_DEBUG=libs` is set.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_binary_does_not_load_libgcc_s() {
    use std::process::Command;
    // As in `build.rs`: only where the C compiler has the archive.
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let archive = Command::new(cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
        .expect("the C compiler runs");
    let archive = String::from_utf8_lossy(&archive.stdout).trim().to_owned();
    if !std::path::Path::new(&archive).is_absolute() {
        eprintln!("no libgcc_eh.a here: the binary loads libgcc_s.so.1");
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .arg("--version")
        .env("LD_DEBUG", "libs")
        .output()
        .expect("kvrender runs");
    assert!(out.status.success());
    let loaded = String::from_utf8_lossy(&out.stderr);
    assert!(
        loaded.contains("libc.so.6"),
        "LD_DEBUG says nothing:\n{loaded}"
    );
    assert!(!loaded.contains("libgcc_s"), "{loaded}");
}

//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `kvrender` binary under test.
pub fn kvrender() -> Command {
    Command::new(env!("CARGO_BIN_EXE_kvrender"))
}

/// Exit code, stdout and stderr of a finished command, for snapshots.
pub fn describe(out: &Output) -> String {
    format!(
        "exit: {}\n----- stdout -----\n{}----- stderr -----\n{}",
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Wait for a child, failing the test (and killing the child) if it takes longer than `secs`:
/// a check that `what` ends at all, not a timing (its runs take a fraction of that).
pub fn wait_at_most(
    child: &mut std::process::Child,
    secs: u64,
    what: &str,
) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} still runs after {secs}s: it hangs");
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Run `cmd` with `stdin` written to its standard input, to its end.
pub fn run_with_stdin(mut cmd: Command, stdin: impl AsRef<[u8]>) -> Output {
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start kvrender");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), stdin.as_ref()).unwrap();
    child.wait_with_output().unwrap()
}

/// Run `cmd` to its end and [`describe`] what it did.
pub fn outcome(cmd: &mut Command) -> String {
    describe(&cmd.output().expect("the command runs"))
}

/// The repository root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A path under `testdata/`.
pub fn testdata(rel: &str) -> PathBuf {
    root().join("testdata").join(rel)
}

/// The path of a tool the end-to-end tests need; a clear failure when it is not installed.
pub fn tool(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "`{name}` is not installed: the KRM end-to-end tests run the real kpt and \
                 kubectl (kustomize); install them or put them on PATH"
            )
        })
}

/// insta settings for this repository: snapshots in the top-level `snapshots/` folder, and
/// absolute paths of the checkout and of temporary folders replaced by stable placeholders.
/// Keep the returned guard alive for the duration of the assertions.
pub fn snapshot_settings() -> insta::internals::SettingsBindDropGuard {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"));
    settings.set_prepend_module_to_snapshot(true);
    let root = regex_escape(env!("CARGO_MANIFEST_DIR"));
    settings.add_filter(&format!("{root}/"), "[ROOT]/");
    settings.add_filter(r"/tmp/\.tmp[A-Za-z0-9]+", "[TMP]");
    settings.add_filter(r"/tmp/[A-Za-z0-9_.-]*kvrender[A-Za-z0-9_.-]*", "[TMP]");
    settings.bind_to_scope()
}

fn regex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

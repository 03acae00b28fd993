//! The hostile-input corpus (`testdata/hostile/`) through the binary: each case gives a clear
//! diagnostic naming the file (and the line, where there is one), exits 1 or 2, never panics
//! and prints nothing but whole expanded VMs (of the documents that are fine) on stdout. Cases that cannot be committed are made in a temporary folder.

use std::fs;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output};

use kvrender::load::{self, yaml};

use crate::common::{kvrender, snapshot_settings, testdata};

/// The exit code, whether stdout stayed empty, and stderr: what each snapshot holds.
fn summary(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "kvrender panicked:\n{stderr}");
    let code = out.status.code().expect("kvrender exited normally");
    assert!(code == 1 || code == 2, "exit code {code}:\n{stderr}");
    // No partial output: stdout holds only whole expanded VMs (of the documents that are
    // fine), never a truncated document.
    let stdout = String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8");
    let mut names = Vec::new();
    for doc in load::split::split(&stdout) {
        let v = yaml::parse_document(doc.text).expect("stdout holds whole YAML documents");
        assert_eq!(v["kind"], "VirtualMachine", "{stdout}");
        names.push(v["metadata"]["name"].as_str().unwrap_or("?").to_string());
    }
    let printed = if names.is_empty() {
        "nothing".to_string()
    } else {
        names.join(", ")
    };
    format!("exit: {code}\nstdout: {printed}\n{stderr}")
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("kvrender runs")
}

fn expand_in(dir: &Path, args: &[&str]) -> Output {
    run(kvrender().current_dir(dir).arg("expand").args(args))
}

#[test]
fn every_committed_case() {
    let dir = testdata("hostile");
    let mut names: Vec<String> = fs::read_dir(&dir)
        .expect("testdata/hostile exists")
        .map(|e| {
            e.expect("readable entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n.ends_with(".yaml") || n.ends_with(".json"))
        .collect();
    names.sort();
    assert!(names.len() >= 13, "cases: {names:?}");
    let _guard = snapshot_settings();
    for name in names {
        let out = expand_in(&dir, &[&name]);
        let text = summary(&out);
        // Every finding names the file, and, for parse and type errors, the line.
        for line in text.lines().skip(2) {
            assert!(line.starts_with(&format!("{name}:")), "{name}: {line}");
        }
        let case = name.trim_end_matches(".yaml").replace(".json", "-json");
        insta::assert_snapshot!(case, text);
    }
}

#[test]
fn a_100_mb_file() {
    // A valid VM, then ~100 MB of comments (so the test stays fast in a debug build: the
    // splitter and the line counting see every byte, the parser only the documents), then a
    // broken document whose line must be reported exactly.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("big.yaml");
    let mut f = std::io::BufWriter::new(fs::File::create(&path).unwrap());
    f.write_all(
        b"apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: ok\nspec:\n  template:\n    spec: {}\n---\n",
    )
    .unwrap();
    let filler = format!("# {}\n", "x".repeat(97));
    let lines = 100 * 1024 * 1024 / filler.len();
    for _ in 0..lines {
        f.write_all(filler.as_bytes()).unwrap();
    }
    f.write_all(b"---\napiVersion: v1\nkind: [\n").unwrap();
    f.into_inner().unwrap().sync_all().unwrap();
    assert!(fs::metadata(&path).unwrap().len() >= 100 * 1024 * 1024);
    let out = expand_in(tmp.path(), &["big.yaml"]);
    let text = summary(&out);
    let broken_line = 8 + lines + 3;
    assert!(
        text.contains(&format!("big.yaml:{broken_line}:")),
        "expected line {broken_line}:\n{text}"
    );
    assert!(text.contains("exit: 1\nstdout: ok\n"), "{text}");
}

#[test]
fn ten_thousand_nested_block_lists() {
    let tmp = tempfile::tempdir().unwrap();
    // `- - - ... x`: ten thousand block sequences, each inside the previous one.
    let text = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n{}x\n",
        "- ".repeat(10_000)
    );
    fs::write(tmp.path().join("deep.yaml"), text).unwrap();
    let out = expand_in(tmp.path(), &["deep.yaml"]);
    let text = summary(&out);
    assert!(text.contains("deep.yaml:"), "{text}");
}

#[cfg(unix)]
#[test]
fn symlink_loop_under_a_walked_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("repo");
    fs::create_dir_all(dir.join("vms")).unwrap();
    fs::write(
        dir.join("vms/vm.yaml"),
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm\nspec: {}\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("..", dir.join("vms/loop")).unwrap();
    let out = expand_in(tmp.path(), &["repo"]);
    let _guard = snapshot_settings();
    insta::assert_snapshot!(summary(&out));
}

/// A loop whose link has a name the walk leaves out (hidden, or `--exclude`d) is passed over,
/// as nothing would be read through it; every command walks alike.
/// A named pipe or a device among the files of a walked directory is passed over: reading it
/// could wait forever. Nothing writes to the pipe, so a run that read it would not end.
#[cfg(unix)]
#[test]
fn pipes_and_devices_under_a_walked_directory_are_passed_over() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("repo");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n",
    )
    .unwrap();
    let made = Command::new("mkfifo")
        .arg(dir.join("pipe.yaml"))
        .status()
        .unwrap();
    assert!(made.success());
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.yaml")).unwrap();
    let out =
        run(kvrender()
            .current_dir(tmp.path())
            .args(["validate", "--no-default-catalog", "repo"]));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("No problems found in 1 object."),
        "{stdout}"
    );
}

/// The files options name are read as PATHs are: at most 512 MiB from a device or a pipe
/// (`/dev/zero` never ends), a regular file of more than that refused before it is read (a
/// sparse file costs no disk), and a named pipe read once, its warnings placed at their lines.
#[cfg(unix)]
#[test]
fn files_options_name_are_read_within_the_limits() {
    let tmp = tempfile::tempdir().unwrap();
    let vm = crate::common::root().join("examples/vms/fedora-server.yaml");
    let refused = |args: &[&str], says: &str| {
        let out = run(kvrender().current_dir(tmp.path()).args(args).arg(&vm));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    };
    let stream_limit = "more than 512 MiB from a stream";
    refused(
        &["validate", "--cluster-config", "/dev/zero"],
        &format!("--cluster-config `/dev/zero`: failed to read it: {stream_limit}"),
    );
    fs::File::create(tmp.path().join("sparse.yaml"))
        .unwrap()
        .set_len(600 << 20)
        .unwrap();
    refused(
        &["expand", "--cluster-config", "sparse.yaml"],
        "--cluster-config `sparse.yaml`: failed to read it: the file is 600 MiB, more than the \
         512 MiB kvrender reads from one file",
    );
    refused(
        &["validate", "sparse.yaml"],
        "failed to read `sparse.yaml`: the file is 600 MiB",
    );
    let out = run(kvrender()
        .args(["fn", "/dev/zero"])
        .stdin(fs::File::open(&vm).unwrap()));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains(stream_limit));

    // A named pipe with an unknown field: read once, the warning at its line.
    let pipe = tmp.path().join("kubevirt.pipe");
    assert!(
        Command::new("mkfifo")
            .arg(&pipe)
            .status()
            .unwrap()
            .success()
    );
    let mut child = kvrender()
        .current_dir(tmp.path())
        .args(["validate", "--cluster-config", "kubevirt.pipe"])
        .arg(&vm)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let writer = std::thread::spawn(move || {
        fs::write(
            &pipe,
            "apiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata: {name: kv}\nspec:\n  \
             configuration:\n    bogusField: 1\n",
        )
        .unwrap();
    });
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("validate went on waiting for the pipe");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    writer.join().unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains(
            "kubevirt.pipe:6: warning[KV007] unknown field `spec.configuration.bogusField`"
        ),
        "{stdout}"
    );
}

#[cfg(unix)]
#[test]
fn symlink_loop_with_a_left_out_name_is_passed_over() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("repo");
    fs::create_dir_all(dir.join("vms/deeper")).unwrap();
    fs::write(
        dir.join("vms/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n",
    )
    .unwrap();
    std::os::unix::fs::symlink("..", dir.join("vms/.up")).unwrap();
    std::os::unix::fs::symlink("../..", dir.join("vms/deeper/loop")).unwrap();
    let run_with = |command: &[&str], extra: &[&str]| {
        run(kvrender()
            .current_dir(tmp.path())
            .args(command)
            .args(["--no-default-catalog"])
            .args(extra)
            .arg("repo"))
    };
    // The visible link still stops the run, naming it and where it leads.
    let out = run_with(&["validate"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("`repo/vms/deeper/loop`: symbolic link loop: it leads back to `repo`,"),
        "{stderr}"
    );
    for command in [
        &["validate"][..],
        &["expand"],
        &["vmi"],
        &["diff"],
        &["migrate", "presets"],
        &["build"],
    ] {
        let out = run_with(command, &["--exclude", "vms/deeper/loop"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{command:?}: {stderr}");
        if command == ["validate"] {
            assert!(
                String::from_utf8_lossy(&out.stdout).contains("1 object"),
                "{command:?}"
            );
        }
    }
}

/// Folders `d0` to `d24`, each holding two links, `a` and `b`, to the next: no loop, but 2^24
/// paths down to the last. Each folder is walked once, so the run ends (walking every path
/// would take hours), and each file is named by the first of its paths in sorted order. A file
/// left out by its name (`--exclude mkdocs.yml`) does not make a folder be walked again.
#[cfg(unix)]
#[test]
fn folders_linked_twice_at_every_level_are_walked_once() {
    const LEVELS: usize = 24;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("dag");
    for i in 0..=LEVELS {
        let level = dir.join(format!("d{i}"));
        fs::create_dir_all(&level).unwrap();
        fs::write(level.join("mkdocs.yml"), "site_name: docs\n").unwrap();
        if i < LEVELS {
            for link in ["a", "b"] {
                std::os::unix::fs::symlink(format!("../d{}", i + 1), level.join(link)).unwrap();
            }
        }
    }
    // A VM without a run strategy (one warning each), halfway down and at the bottom.
    for (level, name) in [(LEVELS / 2, "middle"), (LEVELS, "bottom")] {
        fs::write(
            dir.join(format!("d{level}/{name}.yaml")),
            format!(
                "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: {name}\n\
                 spec:\n  template:\n    spec:\n      domain:\n        devices: {{}}\n"
            ),
        )
        .unwrap();
    }
    let mut child = kvrender()
        .current_dir(&dir)
        .args([
            "validate",
            "--no-default-catalog",
            "--exclude",
            "mkdocs.yml",
            "d0",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status = crate::common::wait_at_most(&mut child, 600, "validate of linked folders");
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.code(), Some(0), "{stdout}{stderr}");
    let warning = |level: usize, name: &str| {
        format!(
            "d0/{}{name}.yaml:5: warning[KV034] VirtualMachine/{name}: spec.running: \
             RunStrategy must be specified (`runStrategy: Always`, `Halted`, ...)\n",
            "a/".repeat(level)
        )
    };
    assert_eq!(
        stdout,
        format!(
            "{}{}Found 0 errors and 2 warnings.\n",
            warning(LEVELS, "bottom"),
            warning(LEVELS / 2, "middle")
        ),
        "{stderr}"
    );
}

/// A link to nothing under a walked directory stops the run only where a file would have been
/// read through it: an editor's lock (`.#vm.yaml`), a `README.md` or a link the user excluded
/// is passed over like the name itself.
#[cfg(unix)]
#[test]
fn links_to_nothing_the_walk_leaves_out() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("repo");
    fs::create_dir_all(dir.join("sub")).unwrap();
    fs::write(
        dir.join("vm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kept\n",
    )
    .unwrap();
    for (target, link) in [
        ("/nonexistent", ".#vm.yaml"),
        ("../nowhere", "README.md"),
        ("nowhere", "sub/x.txt"),
        ("nowhere", "sub/kustomization.yaml"),
        ("nowhere.yaml", "sub/old.yaml"),
    ] {
        std::os::unix::fs::symlink(target, dir.join(link)).unwrap();
    }
    let validate = |extra: &[&str]| {
        kvrender()
            .current_dir(tmp.path())
            .args(["validate", "--no-default-catalog"])
            .args(extra)
            .arg("repo")
            .output()
            .unwrap()
    };
    // The `.yaml` link would be read: it is still an error naming it.
    let out = validate(&[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("repo/sub/old.yaml"), "{stderr}");
    // Excluded, it is passed over with the rest.
    let out = validate(&["--exclude", "old.yaml"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 object"));
}

#[cfg(unix)]
#[test]
fn unreadable_files() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("repo");
    fs::create_dir_all(&dir).unwrap();
    // A link to nothing: found by the walk, impossible to read.
    std::os::unix::fs::symlink("nowhere.yaml", dir.join("dangling.yaml")).unwrap();
    let out = expand_in(tmp.path(), &["repo"]);
    let _guard = snapshot_settings();
    insta::assert_snapshot!("dangling_symlink", summary(&out));

    // Mode 000 stops everyone but root (these tests often run as root, which reads anyway:
    // then there is nothing to test and the case is skipped).
    let locked = tmp.path().join("locked.yaml");
    fs::write(
        &locked,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    )
    .unwrap();
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    if fs::read(&locked).is_ok() {
        eprintln!("unreadable_files: running as root, mode 000 does not stop reads; skipped");
        return;
    }
    let out = expand_in(tmp.path(), &["locked.yaml"]);
    let text = summary(&out);
    assert!(text.contains("locked.yaml"), "{text}");
    assert!(text.contains("exit: 2"), "{text}");
}

#[test]
fn output_directory_that_is_a_file() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("out"), "not a directory\n").unwrap();
    fs::write(
        tmp.path().join("vm.yaml"),
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm\nspec:\n  template:\n    spec:\n      domain: {devices: {}}\n",
    )
    .unwrap();
    let out = run(kvrender()
        .current_dir(tmp.path())
        .args(["build", "-o", "out", "vm.yaml"]));
    let text = summary(&out);
    assert!(text.contains("out"), "{text}");
    assert_eq!(
        fs::read_to_string(tmp.path().join("out")).unwrap(),
        "not a directory\n",
        "the file in the way is left alone"
    );
    let _guard = snapshot_settings();
    insta::assert_snapshot!(text);
    // The same refusal when the walked PATH holds the file in the way, with `--check` too.
    for args in [
        &["build", "-o", "out", "."][..],
        &["build", "-o", "out", ".", "--check"],
    ] {
        let again = summary(&run(kvrender().current_dir(tmp.path()).args(args)));
        assert_eq!(again, text, "{args:?}");
    }
}

/// The marker an earlier `build -o` left in DIR is read only when it is a plain file: one
/// that is a named pipe (which would block the open), a link to `/dev/zero` (which never ends)
/// or a directory stops the run with exit code 2, and DIR keeps what it had.
#[cfg(unix)]
#[test]
fn an_output_marker_that_is_not_a_plain_file() {
    let tmp = tempfile::tempdir().unwrap();
    // Any object will do: the marker is read before anything is written.
    let config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {k: v}\n";
    fs::write(tmp.path().join("cm.yaml"), config_map).unwrap();
    type Make<'a> = &'a dyn Fn(&Path);
    let cases: [(&str, Make); 3] = [
        ("a named pipe", &|marker| {
            let made = Command::new("mkfifo").arg(marker).status().unwrap();
            assert!(made.success());
        }),
        ("a symbolic link", &|marker| {
            std::os::unix::fs::symlink("/dev/zero", marker).unwrap();
        }),
        ("a directory", &|marker| fs::create_dir(marker).unwrap()),
    ];
    for (what, make) in cases {
        let out = tmp.path().join(what.replace(' ', "-"));
        fs::create_dir(&out).unwrap();
        make(&out.join(".kvrender-output"));
        let mut child = kvrender()
            .current_dir(tmp.path())
            .args(["build", "cm.yaml", "-o"])
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let status = crate::common::wait_at_most(&mut child, 60, "build -o");
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.code(), Some(2), "{what}: {stderr}");
        assert!(
            stderr.contains(".kvrender-output`: it is ") && stderr.contains("plain file"),
            "{what}: {stderr}"
        );
        let left: Vec<_> = fs::read_dir(&out).unwrap().collect();
        assert_eq!(left.len(), 1, "{what}: nothing is written");
    }
}

/// YAML reads a carriage return alone as a line break: findings in a file with old Mac line
/// endings, or one that mixes them in, are on the lines an editor shows.
#[test]
fn carriage_return_line_endings_count_as_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let vm = "apiVersion: kubevirt.io/v1\rkind: VirtualMachine\rmetadata:\r  name: cr\rspec:\r  \
              instancetype: {name: u1.smal}\r  template: {spec: {domain: {devices: {}}}}\r";
    fs::write(tmp.path().join("cr.yaml"), vm).unwrap();
    fs::write(tmp.path().join("mixed.yaml"), format!("# LF first\n{vm}")).unwrap();
    for (file, line) in [("cr.yaml", 6), ("mixed.yaml", 7)] {
        let out = run(kvrender().current_dir(tmp.path()).args(["expand", file]));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.starts_with(&format!("{file}:{line}: error[KV011] VirtualMachine/cr:")),
            "{stderr}"
        );
    }
}

/// An output path that is a link to nowhere is named as such, not as "File exists".
#[test]
fn output_directory_that_is_a_dangling_link() {
    let tmp = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("nowhere", tmp.path().join("out")).unwrap();
    fs::write(
        tmp.path().join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
    )
    .unwrap();
    let out = run(kvrender()
        .current_dir(tmp.path())
        .args(["build", "-o", "out", "cm.yaml"]));
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("`out` is a symbolic link to `nowhere`, which does not exist"),
        "{stderr}"
    );
    assert!(!tmp.path().join("nowhere").exists());
}

/// When one file of `build -o` may not be replaced (here: another user's file in a sticky
/// directory, as in `/tmp`), the files replaced before it are put back: either every file is
/// written or none changes. Needs root to set the scene up, and `setpriv` to run kvrender as
/// another user.
#[test]
fn build_output_that_fails_halfway_is_put_back() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let tmp = tempfile::tempdir().unwrap();
    if fs::metadata(tmp.path()).unwrap().uid() != 0
        || Command::new("setpriv").arg("--version").output().is_err()
    {
        eprintln!("skipped: needs root and setpriv");
        return;
    }
    let nobody = 65534;
    fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755)).unwrap();
    let dir = tmp.path().join("out");
    fs::create_dir(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o1777)).unwrap();
    let cm = |name: &str, value: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\ndata:\n  v: {value}\n")
    };
    let (first, last) = (
        dir.join("v1_configmap_a.yaml"),
        dir.join("v1_configmap_z.yaml"),
    );
    fs::write(&first, cm("a", "old")).unwrap();
    std::os::unix::fs::chown(&first, Some(nobody), Some(nobody)).unwrap();
    fs::write(&last, cm("z", "old")).unwrap();
    fs::write(dir.join(".kvrender-output"), "").unwrap();
    std::os::unix::fs::chown(dir.join(".kvrender-output"), Some(nobody), Some(nobody)).unwrap();
    let input = tmp.path().join("two.yaml");
    fs::write(&input, format!("{}---\n{}", cm("a", "new"), cm("z", "new"))).unwrap();
    let out = run(Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_kvrender"))
        .current_dir(tmp.path())
        .args(["build", "-o", "out", "two.yaml"]));
    let text = summary(&out);
    assert!(text.starts_with("exit: 2\n"), "{text}");
    assert!(text.contains("v1_configmap_z.yaml"), "{text}");
    assert_eq!(
        fs::read_to_string(&first).unwrap(),
        cm("a", "old"),
        "{text}"
    );
    assert_eq!(fs::read_to_string(&last).unwrap(), cm("z", "old"));
    let left: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with(".kvrender-staging"))
        .collect();
    assert!(left.is_empty(), "staging left behind: {left:?}");
}

#[test]
fn build_with_errors_writes_no_file() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(
        tmp.path().join("fine.yaml"),
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: fine\nspec:\n  template:\n    spec: {}\n",
    )
    .unwrap();
    fs::copy(
        testdata("hostile/wrong-type-vm.yaml"),
        tmp.path().join("wrong-type-vm.yaml"),
    )
    .unwrap();
    let out = run(kvrender().current_dir(tmp.path()).args([
        "build",
        "-o",
        "out",
        "fine.yaml",
        "wrong-type-vm.yaml",
    ]));
    let text = summary(&out);
    assert!(text.starts_with("exit: 1\nstdout: nothing\n"), "{text}");
    assert!(
        !tmp.path().join("out").exists(),
        "either every file is written or none"
    );
}

/// The `KV003` lines of a run's output, whichever stream they went to.
fn bad_name_findings(out: &Output) -> Vec<String> {
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| l.contains("error[KV003]"))
        .map(str::to_string)
        .collect();
    lines.sort();
    lines
}

/// `validate`, `build`, `vmi` and `diff` refuse the names and namespaces `expand` refuses
/// (a `generateName` alone among them), with the same findings: a tree that passes the
/// pre-commit check does not then fail to build.
#[test]
fn bad_names_fail_validate_and_build_as_they_fail_expand() {
    let dir = testdata("hostile");
    let expand = expand_in(&dir, &["bad-names.yaml"]);
    let wanted = bad_name_findings(&expand);
    assert_eq!(wanted.len(), 10, "{wanted:?}");
    assert!(
        wanted
            .iter()
            .any(|l| l.contains("namespace \"../../etc\" is not a valid"))
    );
    assert!(
        wanted
            .iter()
            .any(|l| l.contains("a `generateName` serves `kubectl create` only"))
    );
    for command in ["validate", "build", "vmi", "diff"] {
        let out = run(kvrender()
            .current_dir(&dir)
            .args([command, "bad-names.yaml"]));
        assert_eq!(out.status.code(), Some(1), "{command}");
        assert_eq!(bad_name_findings(&out), wanted, "{command}");
        if command != "validate" {
            assert!(out.stdout.is_empty(), "{command} printed something");
        }
    }
}

/// Instancetypes and preferences get the same name check as VMs.
#[test]
fn bad_names_of_instancetypes_and_preferences() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(
        tmp.path().join("catalog.yaml"),
        "apiVersion: instancetype.kubevirt.io/v1beta1\n\
         kind: VirtualMachineClusterInstancetype\n\
         metadata:\n  name: U1.Medium\n\
         spec: {cpu: {guest: 1}, memory: {guest: 1Gi}}\n\
         ---\n\
         apiVersion: instancetype.kubevirt.io/v1beta1\n\
         kind: VirtualMachinePreference\n\
         metadata:\n  name: team/fedora\n  namespace: web\n\
         spec: {}\n\
         ---\n\
         apiVersion: v1\n\
         kind: ConfigMap\n\
         metadata:\n  name: Not-Checked\n",
    )
    .unwrap();
    for command in ["validate", "build"] {
        let out = run(kvrender().current_dir(tmp.path()).args([
            command,
            "--no-default-catalog",
            "catalog.yaml",
        ]));
        assert_eq!(out.status.code(), Some(1), "{command}");
        assert_eq!(
            bad_name_findings(&out),
            [
                "catalog.yaml:10: error[KV003] VirtualMachinePreference/web/\"team/fedora\": \
                 metadata.name: \"team/fedora\" is not a valid Kubernetes name: it contains `/`",
                "catalog.yaml:4: error[KV003] VirtualMachineClusterInstancetype/U1.Medium: \
                 metadata.name: \"U1.Medium\" is not a valid Kubernetes name: it contains an \
                 uppercase letter",
            ],
            "{command}"
        );
    }
}

/// A misspelt VirtualMachine kind fails every command that reads VMs, naming the kind meant.
#[test]
fn misspelt_kinds_fail_every_command() {
    let dir = testdata("hostile");
    for command in ["expand", "validate", "build", "vmi", "diff"] {
        let out = run(kvrender()
            .current_dir(&dir)
            .args([command, "misspelt-kind.yaml"]));
        assert_eq!(out.status.code(), Some(1), "{command}");
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        for (line, kind) in [(5, "VirtualMachin"), (13, "virtualmachine")] {
            let wanted = format!(
                "misspelt-kind.yaml:{line}: error[KV021] {kind}/{name}: kind: KubeVirt's \
                 `kubevirt.io` group has no kind `{kind}`; did you mean `VirtualMachine`?",
                name = if line == 5 { "typo" } else { "lower" },
            );
            assert!(text.contains(&wanted), "{command}: {text}");
        }
    }
}

/// A kind that goes on over an indented line (`kind: VirtualMachine` then `  Pool` is the kind
/// `VirtualMachine Pool`) is that kind for every command. `expand`, which reads VMs late, took
/// the document for a VM from its first line and then dropped it without a word (found by the
/// `loader` fuzzer).
#[test]
fn a_kind_continued_on_the_next_line_is_the_whole_kind() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(
        tmp.path().join("vm.yaml"),
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n  Pool\nmetadata:\n  name: a\n\
         spec:\n  template:\n    spec:\n      domain: {devices: {}}\n",
    )
    .unwrap();
    for command in ["expand", "validate", "build", "vmi"] {
        let out = run(kvrender()
            .current_dir(tmp.path())
            .args([command, "vm.yaml"]));
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(1), "{command}: {text}");
        assert!(
            text.contains("vm.yaml:2: error[KV021] \"VirtualMachine Pool\"/a: kind:"),
            "{command}: {text}"
        );
    }
}

/// A family `g` of the size rows `sizes` whose annotation doubles an 8-byte string
/// `doublings` times.
fn growing_family(sizes: &str, doublings: u32) -> String {
    format!(
        r#"apiVersion: kvrender.io/v1alpha1
kind: InstancetypeFamily
metadata:
  name: g
spec:
  version: 1
  sizes:
{sizes}  template:
    metadata:
      annotations:
        grown: "{{% set ns = namespace(s='xxxxxxxx') %}}{{% for i in range({doublings}) %}}{{% set ns.s = ns.s ~ ns.s %}}{{% endfor %}}{{{{ ns.s | length }}}}"
    spec:
      cpu:
        guest: 1
      memory:
        guest: 1Gi
"#
    )
}

#[test]
fn a_template_that_grows_without_bound_is_stopped() {
    let tmp = tempfile::tempdir().unwrap();
    // Each pass doubles the string: 2^43 bytes if nothing stops it. No leaf prints it, so
    // only the memory bound can.
    fs::write(
        tmp.path().join("family.yaml"),
        growing_family("    - [small, 1, 1Gi]\n", 40),
    )
    .unwrap();
    let out = run(kvrender().current_dir(tmp.path()).args([
        "build",
        "--no-default-catalog",
        "-o",
        "out",
        "family.yaml",
    ]));
    let text = summary(&out);
    assert!(text.starts_with("exit: 1\nstdout: nothing\n"), "{text}");
    assert!(
        text.contains(
            "family.yaml:8: error[KV040] InstancetypeFamily/g: cannot render family `g1` size \
             `small`: its templates took more than"
        ),
        "{text}"
    );
    assert!(!tmp.path().join("out").exists(), "nothing is written");
}

/// Templates that reach arithmetic minijinja does not check (a zero divisor, `loop.cycle()`
/// with nothing to cycle) or name a filter's unguarded built-in through `map` are refused with
/// the leaf's line, in `build` and in the KRM function, and print no panic.
#[test]
fn templates_that_reach_a_panic_in_the_engine_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    for (i, expr) in [
        "1 is divisibleby 0",
        "[1]|map('string')|map('indent (built-in)', 18446744073709551615)|join",
    ]
    .into_iter()
    .enumerate()
    {
        let file = format!("family{i}.yaml");
        fs::write(tmp.path().join(&file), annotated_family(expr)).unwrap();
        let out =
            run(kvrender()
                .current_dir(tmp.path())
                .args(["build", "--no-default-catalog", &file]));
        let text = summary(&out);
        assert!(
            text.contains(&format!(
                "{file}:12: error[KV040] InstancetypeFamily/t: cannot render \
                 `spec.template.metadata.annotations.x` for family `t1` size `small`"
            )),
            "{text}"
        );
    }
    let cycling = "apiVersion: kvrender.io/v1alpha1\nkind: Preference\nmetadata: {name: p}\n\
        spec:\n  displayName: P\n  template:\n    metadata:\n      annotations:\n        \
        a: '{% for x in [1] %}{{ loop.cycle() }}{% endfor %}'\n";
    let list = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {}",
        cycling.trim_end().replace('\n', "\n  ")
    );
    let mut cmd = kvrender();
    cmd.arg("fn");
    let out = crate::common::run_with_stdin(cmd, list);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}\n{stdout}");
    assert!(
        stdout.contains("the template engine failed on this template"),
        "{stdout}"
    );
}

/// A family `t` whose one size renders the annotation `x: "{{ EXPR }}"`, on line 12.
fn annotated_family(expr: &str) -> String {
    format!(
        "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata:\n  name: t\n\
         spec:\n  version: 1\n  sizes:\n    - [small, 1, 1Gi]\n  template:\n    \
         metadata:\n      annotations:\n        x: \"{{{{ {expr} }}}}\"\n    spec:\n      \
         cpu: {{guest: 1}}\n      memory: {{guest: 1Gi}}\n"
    )
}

/// A catalog template with tens of thousands of operators in one expression (`1 + 1 + …`,
/// `not not …`) would nest minijinja's syntax tree deeper than any stack: every command that
/// renders refuses it with the leaf's line instead, in a part nothing uses as well.
#[test]
fn a_template_expression_tens_of_thousands_of_operators_long_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let chains = [
        vec!["1"; 20_000].join(" + "),
        vec!["true"; 20_000].join(" and "),
        format!("{}true", "not ".repeat(50_000)),
        format!("{}1", "-".repeat(50_000)),
    ];
    let part = format!(
        "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nmetadata:\n  name: p\nparts:\n  \
         spare:\n    metadata:\n      annotations:\n        x: '{{{{ {} }}}}'\n",
        chains[0]
    );
    fs::write(tmp.path().join("part.yaml"), &part).unwrap();
    let message = "syntax error: a block holds more than 1000 operators";
    for chain in &chains {
        fs::write(tmp.path().join("family.yaml"), annotated_family(chain)).unwrap();
        for args in [
            &["build", "--no-default-catalog", "family.yaml"][..],
            &["validate", "--no-default-catalog", "family.yaml"],
            &["build", "--catalog-only", "family.yaml"],
        ] {
            let out = run(kvrender().current_dir(tmp.path()).args(args));
            assert_eq!(out.status.code(), Some(1), "{args:?}");
            // `validate` reports on stdout; `build` prints nothing there.
            let text = if args[0] == "validate" {
                String::from_utf8(out.stdout).unwrap()
            } else {
                summary(&out)
            };
            assert!(
                text.contains("family.yaml:12: error[KV040] InstancetypeFamily/t: cannot render "),
                "{args:?}: {text}"
            );
            assert!(text.contains(message), "{args:?}: {text}");
        }
        let list = format!(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {}",
            annotated_family(chain).trim_end().replace('\n', "\n  ")
        );
        let mut cmd = kvrender();
        cmd.arg("fn");
        let out = crate::common::run_with_stdin(cmd, list);
        assert_eq!(out.status.code(), Some(1));
        let stdout = String::from_utf8(out.stdout).unwrap();
        assert!(
            stdout.starts_with("apiVersion: config.kubernetes.io/v1\n"),
            "{stdout}"
        );
        assert!(stdout.contains(message), "{stdout}");
    }
    // A part no family or preference uses is still compiled, and refused the same way.
    let out = run(kvrender().current_dir(tmp.path()).args([
        "validate",
        "--no-default-catalog",
        "part.yaml",
    ]));
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "part.yaml:9: error[KV040] cannot render `parts.spare.metadata.annotations.x`"
        ),
        "{text}"
    );
}

/// A catalog template can nest a value in itself in a loop, one level per instruction, as deep
/// as its fuel goes (here 72,000 levels): freeing such a value, or comparing it, recurses once
/// per level, and used to end the process with a stack overflow. It is freed and compared
/// without one, at any thread count and under a low hard stack limit, and printing it or
/// handing it to a filter is refused with the leaf's line, in every command that renders.
#[test]
fn a_value_nested_in_itself_in_a_loop_is_not_a_crash() {
    let tmp = tempfile::tempdir().unwrap();
    let set = format!(
        "{{% set ns.v = {}ns.v{} %}}",
        "[".repeat(60),
        "]".repeat(60)
    );
    let leaf = |tail: &str| {
        format!(
            "{{% set ns = namespace(v=1) %}}{{% for i in range(150) %}}{}{{% endfor %}}{tail}",
            set.repeat(8)
        )
    };
    let family =
        |tail: &str| annotated_family("1").replace("\"{{ 1 }}\"", &format!("\"{}\"", leaf(tail)));
    let refused = "family.yaml:12: error[KV040] InstancetypeFamily/t: cannot render";
    let too_deep = "the value nests deeper than 64 levels of mappings and lists";
    for (tail, wanted) in [
        ("x", None),
        ("{{ ns.v == ns.v }}", None),
        ("{{ ns.v }}", Some(too_deep)),
        ("{{ ns.v | string }}", Some(too_deep)),
        ("{{ [ns.v] | sort }}", Some(too_deep)),
    ] {
        fs::write(tmp.path().join("family.yaml"), family(tail)).unwrap();
        for threads in ["1", "2"] {
            for command in ["build", "validate"] {
                let out = run(kvrender().current_dir(tmp.path()).args([
                    "--threads",
                    threads,
                    command,
                    "--no-default-catalog",
                    "family.yaml",
                ]));
                let text = format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                match wanted {
                    None => assert_eq!(out.status.code(), Some(0), "{tail}: {text}"),
                    Some(message) => {
                        assert_eq!(out.status.code(), Some(1), "{tail}: {text}");
                        assert!(text.contains(refused) && text.contains(message), "{text}");
                    }
                }
            }
        }
        // Under a hard stack limit of 1 MiB, which the calling thread cannot raise, the
        // command runs on a thread of the workers' stack instead.
        if cfg!(target_os = "linux") {
            let out = run(Command::new("sh").current_dir(tmp.path()).args([
                "-c",
                "ulimit -Ss 1024 && ulimit -Hs 1024 && exec \"$0\" --threads 1 build \
                 --no-default-catalog family.yaml",
                env!("CARGO_BIN_EXE_kvrender"),
            ]));
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(if wanted.is_some() { 1 } else { 0 }),
                "{tail}, 1 MiB hard stack limit: {stderr}"
            );
        }
        let list = format!(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {}",
            family(tail).trim_end().replace('\n', "\n  ")
        );
        let mut cmd = kvrender();
        cmd.arg("fn");
        let out = crate::common::run_with_stdin(cmd, list);
        assert_eq!(
            out.status.code(),
            Some(if wanted.is_some() { 1 } else { 0 }),
            "{tail}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The default thread count is one per processor, within `--threads`' 1 to 256: rayon's own
/// `RAYON_NUM_THREADS`, which used to set it, could start thousands of threads for one VM.
#[test]
fn rayon_num_threads_does_not_raise_the_thread_count() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(
        tmp.path().join("vm.yaml"),
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm\nspec:\n  \
         runStrategy: Always\n  template:\n    spec:\n      domain:\n        devices: {}\n        \
         memory: {guest: 1Gi}\n",
    )
    .unwrap();
    let mut child = kvrender()
        .current_dir(tmp.path())
        .args(["validate", "vm.yaml"])
        .env("RAYON_NUM_THREADS", "100000")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let status = crate::common::wait_at_most(&mut child, 120, "validate of one VM");
    assert_eq!(status.code(), Some(0));
}

/// A filter that writes in proportion to an argument (`indent`'s width, `format`'s padding,
/// `replace`'s new text, `join`'s separator) asks for its whole output at once: a width of
/// `2**64 - 1` used to end the process with a panic, and one of 10^11 with an abort. Each is
/// refused with the leaf's line before the filter runs.
#[test]
fn a_filter_asked_for_a_huge_width_is_refused_not_a_crash() {
    let tmp = tempfile::tempdir().unwrap();
    for (expr, filter) in [
        ("'a' | indent(18446744073709551615)", "indent"),
        ("'a' | indent(100000000000)", "indent"),
        ("'%18446744073709551615s' | format('a')", "format"),
        ("('a' * 999999) | replace('a', 'aaaaaaaaaa')", "replace"),
        ("range(10000) | join('a' * 99999)", "join"),
    ] {
        fs::write(tmp.path().join("family.yaml"), annotated_family(expr)).unwrap();
        for args in [
            &["build", "--no-default-catalog", "family.yaml"][..],
            &["validate", "--no-default-catalog", "family.yaml"],
        ] {
            let out = run(kvrender().current_dir(tmp.path()).args(args));
            assert_eq!(out.status.code(), Some(1), "{expr}: {args:?}");
            let text = if args[0] == "validate" {
                String::from_utf8(out.stdout).unwrap()
            } else {
                assert!(out.stdout.is_empty(), "{expr}");
                summary(&out)
            };
            assert!(
                text.contains("family.yaml:12: error[KV040] InstancetypeFamily/t: cannot render ")
                    && text.contains(&format!("`{filter}` would write more than 4194304 bytes")),
                "{expr}: {args:?}: {text}"
            );
        }
    }
}

/// A leaf that builds nothing but compares large values on every instruction its fuel allows
/// runs for minutes: the time watch stops it after 10 s, as it stops one that grows a value.
#[test]
fn a_template_that_compares_large_values_for_minutes_is_stopped() {
    let tmp = tempfile::tempdir().unwrap();
    let slow = "{{ range(99999) == range(99999) }}".repeat(5_000);
    fs::write(
        tmp.path().join("family.yaml"),
        format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata:\n  name: s\n\
             spec:\n  version: 1\n  sizes:\n    - [small, 1, 1Gi]\n    - [large, 2, 2Gi]\n  \
             template:\n    metadata:\n      annotations:\n        x: '{slow}'\n    spec:\n      \
             cpu: {{guest: 1}}\n      memory: {{guest: 1Gi}}\n"
        ),
    )
    .unwrap();
    let mut child = kvrender()
        .current_dir(tmp.path())
        .args([
            "--threads",
            "1",
            "build",
            "--no-default-catalog",
            "family.yaml",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    crate::common::wait_at_most(&mut child, 120, "a slow render");
    let out = child.wait_with_output().unwrap();
    let text = summary(&out);
    assert!(
        text.starts_with(
            "exit: 1\nstdout: nothing\nfamily.yaml:8: error[KV040] InstancetypeFamily/s: cannot \
             render family `s1` size `small`: its templates ran for more than 10 s"
        ),
        "{text}"
    );
}

/// When every size of a family grows without bound, the report names the first size, whatever
/// the thread count and whichever sizes the threads had begun when the watch stopped them.
#[test]
fn a_stopped_render_reports_the_same_combination_at_any_thread_count() {
    let tmp = tempfile::tempdir().unwrap();
    let sizes: String = (0..24).map(|i| format!("    - [s{i}, 1, 1Gi]\n")).collect();
    fs::write(tmp.path().join("family.yaml"), growing_family(&sizes, 40)).unwrap();
    let reports: Vec<String> = ["1", "2", "8", "8", "2"]
        .into_iter()
        .map(|threads| summary(&build_family_at(tmp.path(), threads)))
        .collect();
    assert!(
        reports[0].starts_with(
            "exit: 1\nstdout: nothing\nfamily.yaml:8: error[KV040] InstancetypeFamily/g: cannot \
             render family `g1` size `s0`: its templates took more than"
        ),
        "{}",
        reports[0]
    );
    assert_eq!(reports[0].lines().count(), 3, "{}", reports[0]);
    for report in &reports[1..] {
        assert_eq!(report, &reports[0]);
    }
}

/// The memory watch sees the whole process. A combination that grows a value to some 200 MiB
/// and then prints only its length passes alone; two of them side by side passed the
/// 512 MiB budget together, so `--threads 2` refused a catalog `--threads 1` rendered.
/// Combinations whose templates may grow values now render one after the other: the same
/// output at any thread count.
#[test]
fn a_catalog_near_the_memory_budget_renders_alike_at_any_thread_count() {
    let tmp = tempfile::tempdir().unwrap();
    let sizes: String = ["a", "b", "c"]
        .iter()
        .map(|s| format!("    - [{s}, 1, 2Gi]\n"))
        .collect();
    // Eight bytes doubled 24 times: a 128 MiB string, and its half before it.
    fs::write(tmp.path().join("family.yaml"), growing_family(&sizes, 24)).unwrap();
    let outputs: Vec<String> = ["1", "2", "2"]
        .into_iter()
        .map(|threads| {
            let out = build_family_at(tmp.path(), threads);
            assert_eq!(out.status.code(), Some(0), "{}", summary(&out));
            String::from_utf8(out.stdout).unwrap()
        })
        .collect();
    assert_eq!(
        outputs[0].matches("grown: \"134217728\"").count(),
        6,
        "{}",
        outputs[0]
    );
    assert_eq!(outputs[1], outputs[0]);
    assert_eq!(outputs[2], outputs[0]);
}

/// A family `NAME` of `sizes` rows × `variants` variants whose templates only look values up,
/// in its own document: `sizes:` is its seventh line.
fn table_family(name: &str, sizes: usize, variants: usize) -> String {
    let mut text = format!(
        "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata:\n  name: {name}\n\
         spec:\n  version: 1\n  sizes:\n"
    );
    text.extend((0..sizes).map(|i| format!("    - [s{i}, 1, 1Gi]\n")));
    text.push_str("  variants:\n");
    text.extend((0..variants).map(|i| format!("    - {{suffix: v{i}}}\n")));
    text.push_str(
        "  template:\n    spec:\n      cpu: {guest: '{{ size.cpu }}'}\n      \
         memory: {guest: '{{ size.memory }}'}\n",
    );
    text
}

/// Sizes × variants multiply: 1,000 of each, in 40 KB, made a million pairs of objects (6 GB)
/// out of plain lookups, which no watch measures. A family past the limit, alone or with the
/// families before it, is refused at its table before anything renders.
#[test]
fn a_family_of_too_many_combinations_is_refused_before_it_renders() {
    let tmp = tempfile::tempdir().unwrap();
    // 150 × 150: 22,500 combinations; as many sizes as variants, so `sizes` is named.
    fs::write(tmp.path().join("one.yaml"), table_family("big", 150, 150)).unwrap();
    // 10,000 and 10,800 combinations: each fine, not the two together. The second has more
    // variants than sizes, so its `variants` is named.
    let two = format!(
        "{}---\n{}",
        table_family("a", 100, 100),
        table_family("b", 90, 120)
    );
    fs::write(tmp.path().join("two.yaml"), &two).unwrap();
    let second_variants = 1 + two
        .lines()
        .enumerate()
        .filter(|(_, l)| *l == "  variants:")
        .nth(1)
        .unwrap()
        .0;
    for (file, wanted) in [
        (
            "one.yaml",
            "one.yaml:7: error[KV040] InstancetypeFamily/big: family `big1`: 150 sizes × 150 \
             variants are 22500 combinations, more than the 20000 a catalog may render"
                .to_string(),
        ),
        (
            "two.yaml",
            format!(
                "two.yaml:{second_variants}: error[KV040] InstancetypeFamily/b: family `b1`: its \
                 10800 size × variant combinations bring the catalog's families to 20800, more \
                 than the 20000 a catalog may render"
            ),
        ),
    ] {
        refused_by_build_and_validate(tmp.path(), file, &wanted);
    }
}

/// `build` and `validate` of `file` in `dir` each fail with one error, `wanted`, and `build`
/// prints nothing.
fn refused_by_build_and_validate(dir: &std::path::Path, file: &str, wanted: &str) {
    for command in ["build", "validate"] {
        let out = run(kvrender()
            .current_dir(dir)
            .args([command, "--no-default-catalog", file]));
        let text = if command == "validate" {
            assert_eq!(out.status.code(), Some(1), "{file}");
            String::from_utf8(out.stdout).unwrap()
        } else {
            let text = summary(&out);
            assert!(text.starts_with("exit: 1\nstdout: nothing\n"), "{text}");
            text
        };
        assert!(text.contains(wanted), "{file}: {command}: {text}");
        assert_eq!(text.matches("error[").count(), 1, "{text}");
    }
}

/// A small file can ask for a great deal of output without a single template: 20,000 sizes
/// that each copy a 20 KB annotation come to 800 MB of YAML (the run took 1.7 GB). What the
/// families and preferences would copy into their objects is counted before anything renders
/// and refused past 128 MiB, at the family's table, or at the preference whose copies cross the
/// line after the families'.
#[test]
fn a_catalog_that_would_copy_too_much_is_refused_before_it_renders() {
    let tmp = tempfile::tempdir().unwrap();
    let family = |name: &str, sizes: usize, bytes: usize| {
        let rows: String = (0..sizes)
            .map(|i| format!("    - [s{i}, 1, 1Gi]\n"))
            .collect();
        format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata:\n  name: \
             {name}\nspec:\n  version: 1\n  sizes:\n{rows}  template:\n    metadata:\n      \
             annotations:\n        plain: {}\n    spec:\n      cpu: {{guest: 1}}\n      \
             memory: {{guest: 1Gi}}\n",
            "x".repeat(bytes)
        )
    };
    fs::write(tmp.path().join("family.yaml"), family("g", 20_000, 20_000)).unwrap();
    // About 98 MiB from the family, then preferences of 16 KiB in each of their two kinds:
    // `p954` is the first past 128 MiB.
    let preferences: String = (0..1500)
        .map(|i| {
            format!(
                "---\napiVersion: kvrender.io/v1alpha1\nkind: Preference\nmetadata:\n  name: \
                 p{i}\nspec:\n  template:\n    metadata:\n      annotations:\n        plain: \
                 {}\n",
                "y".repeat(16 << 10)
            )
        })
        .collect();
    fs::write(
        tmp.path().join("mixed.yaml"),
        family("h", 2_500, 20 << 10) + &preferences,
    )
    .unwrap();
    for (file, wanted) in [
        (
            "family.yaml",
            "family.yaml:7: error[KV040] InstancetypeFamily/g: family `g1`: its 20000 size × \
             variant combinations would copy about 767 MiB of template values into the objects \
             it renders, more than the 128 MiB a catalog may render",
        ),
        (
            "mixed.yaml",
            "mixed.yaml:12056: error[KV040] Preference/p954: preference `p954`, with the \
             families and preferences before it, would copy about 129 MiB of template values \
             into the objects it renders, more than the 128 MiB a catalog may render",
        ),
    ] {
        refused_by_build_and_validate(tmp.path(), file, wanted);
    }
}

/// `kvrender --threads THREADS build --no-default-catalog family.yaml` in `dir`.
fn build_family_at(dir: &std::path::Path, threads: &str) -> std::process::Output {
    run(kvrender().current_dir(dir).args([
        "--threads",
        threads,
        "build",
        "--no-default-catalog",
        "family.yaml",
    ]))
}

/// Run `validate` on `name` holding `text`, in a new temporary directory, and give its report:
/// failing if the run takes over a minute (a hang, not a timing: the runs take a fraction).
fn validate_long(name: &str, text: &str) -> (Option<i32>, String) {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join(name), text).unwrap();
    // Into a file, not a pipe: reading a pipe would wait for ever on a run that hangs.
    let report = fs::File::create(tmp.path().join("report.txt")).unwrap();
    let mut child = kvrender()
        .current_dir(tmp.path())
        .args(["validate", "--no-default-catalog", name])
        .stdout(report)
        .spawn()
        .unwrap();
    let status = crate::common::wait_at_most(&mut child, 60, &format!("validate of {name}"));
    let stdout = fs::read_to_string(tmp.path().join("report.txt")).unwrap();
    (status.code(), stdout)
}

/// A VM (JSON) whose template's `spec` holds `spec`, a JSON text.
fn vm_json(spec: &str) -> String {
    format!(
        "{{\"apiVersion\": \"kubevirt.io/v1\", \"kind\": \"VirtualMachine\", \"metadata\": \
         {{\"name\": \"vm\"}}, \"spec\": {{\"runStrategy\": \"Always\", \"template\": \
         {{\"spec\": {spec}}}}}}}"
    )
}

/// A list whose items must all differ (a guest agent's users), 200,000 long: the repeated
/// user at its end is found in one pass, not by comparing every pair (which took minutes).
#[test]
fn a_long_list_of_users_is_checked_in_one_pass() {
    let mut users: Vec<String> = (0..200_000).map(|i| format!("\"u{i}\"")).collect();
    users.push("\"u7\"".to_string());
    let vmi = format!(
        "{{\"apiVersion\": \"kubevirt.io/v1\", \"kind\": \"VirtualMachineInstance\", \
         \"metadata\": {{\"name\": \"v\"}}, \"spec\": {{\"domain\": {{\"devices\": {{}}, \
         \"memory\": {{\"guest\": \"1Gi\"}}}}, \"accessCredentials\": [{{\"sshPublicKey\": \
         {{\"source\": {{\"secret\": {{\"secretName\": \"s\"}}}}, \"propagationMethod\": \
         {{\"qemuGuestAgent\": {{\"users\": [{}]}}}}}}}}]}}}}",
        users.join(", ")
    );
    let (code, stdout) = validate_long("users.json", &vmi);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains(
            "users.json:1: error[KV004] VirtualMachineInstance/v: \
             spec.accessCredentials[0].sshPublicKey.propagationMethod.qemuGuestAgent.\
             users[200000]: Duplicate value: \"u7\""
        ),
        "{stdout}"
    );
}

/// 50,000 spread constraints, and 50,000 interfaces with their networks: each list is
/// judged in one pass (comparing every pair took 20 s and 4 s in a release build).
#[test]
fn long_lists_of_constraints_and_interfaces_are_judged_in_one_pass() {
    let mut constraints: Vec<String> = (0..50_000)
        .map(|i| {
            format!(
                "{{\"maxSkew\": 1, \"topologyKey\": \"k{i}\", \"whenUnsatisfiable\": \
                 \"DoNotSchedule\"}}"
            )
        })
        .collect();
    constraints.push(
        "{\"maxSkew\": 1, \"topologyKey\": \"k9\", \"whenUnsatisfiable\": \"DoNotSchedule\"}"
            .to_string(),
    );
    let vm = vm_json(&format!(
        "{{\"domain\": {{\"devices\": {{}}, \"memory\": {{\"guest\": \"1Gi\"}}}}, \
         \"topologySpreadConstraints\": [{}]}}",
        constraints.join(", ")
    ));
    let (_, stdout) = validate_long("spread.json", &vm);
    assert!(
        stdout.contains(
            "spec.template.spec.topologySpreadConstraints[9].{topologyKey, whenUnsatisfiable}: \
             "
        ),
        "{stdout}"
    );
    let interfaces: Vec<String> = (0..50_000)
        .map(|i| format!("{{\"name\": \"n{i}\", \"bridge\": {{}}}}"))
        .collect();
    let networks: Vec<String> = (0..50_000)
        .map(|i| format!("{{\"name\": \"n{i}\", \"multus\": {{\"networkName\": \"x\"}}}}"))
        .collect();
    let vm = vm_json(&format!(
        "{{\"domain\": {{\"devices\": {{\"interfaces\": [{}]}}, \"memory\": {{\"guest\": \
         \"1Gi\"}}}}, \"networks\": [{}]}}",
        interfaces.join(", "),
        networks.join(", ")
    ));
    let (code, stdout) = validate_long("interfaces.json", &vm);
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout.contains("Too many: 50000: must have at most 256 items"),
        "{stdout}"
    );
}

/// 3,000 disks of one name make 4.5 million pairs, each a cause in KubeVirt's answer: the
/// first thousand are listed and the rest counted, so the report stays a few thousand lines.
#[test]
fn disks_of_one_name_make_a_bounded_report() {
    let disks: Vec<&str> = (0..3000)
        .map(|_| "{\"name\": \"d\", \"disk\": {}}")
        .collect();
    let vm = vm_json(&format!(
        "{{\"domain\": {{\"devices\": {{\"disks\": [{}]}}, \"memory\": {{\"guest\": \
         \"1Gi\"}}}}, \"volumes\": [{{\"name\": \"d\", \"emptyDisk\": {{\"capacity\": \
         \"1Gi\"}}}}]}}",
        disks.join(", ")
    ));
    let (code, stdout) = validate_long("disks.json", &vm);
    assert_eq!(code, Some(1), "{stdout}");
    let pairs = stdout.matches("must not have the same Name.").count();
    assert_eq!(pairs, 1000);
    assert!(
        stdout.contains(
            "and 4497500 more pairs of disks with the same Name, from \
             spec.template.spec.domain.devices.disks[45] on"
        ),
        "{}",
        &stdout[stdout.len().saturating_sub(2000)..]
    );
}

/// Under a limit on the address space (`ulimit -v`) too tight for a large stack on every worker,
/// the workers get smaller ones and the run prints what it prints without the limit: it did
/// not stop with rayon's "already part of another thread pool", which the calling thread, left
/// a worker of the pool that failed half-started, could not join.
#[cfg(target_os = "linux")]
#[test]
fn a_limited_address_space_gives_the_workers_smaller_stacks() {
    let root = crate::common::root();
    let unlimited = run(kvrender()
        .current_dir(root)
        .args(["--threads", "8", "build", "catalog/"]));
    assert!(
        unlimited.status.success(),
        "{}",
        crate::common::describe(&unlimited)
    );
    for threads in ["8", "16"] {
        let limited = run(Command::new("bash")
            .current_dir(root)
            .arg("-c")
            .arg("ulimit -v 2500000 && exec \"$0\" --threads \"$1\" build catalog/")
            .arg(env!("CARGO_BIN_EXE_kvrender"))
            .arg(threads));
        assert!(
            limited.status.success(),
            "{threads}: {}",
            crate::common::describe(&limited)
        );
        assert!(
            limited.stdout == unlimited.stdout,
            "{threads}: output differs"
        );
    }
}

/// Output that cannot be written (a full disk) is an error, exit 2, said after the findings:
/// what is wrong with the VMs is not lost with it, whether the command writes as it goes
/// (`expand`, a VM it cannot expand) or at the end (`build`, a VM it warns about).
#[cfg(target_os = "linux")]
#[test]
fn a_full_disk_is_said_after_the_findings() {
    let tmp = tempfile::tempdir().unwrap();
    let vm = tmp.path().join("vm.yaml");
    fs::write(
        &vm,
        "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: web}\nspec:\n  \
         instancetype: {name: u1.medium}\n  template:\n    spec:\n      domain:\n        \
         devices: {}\n",
    )
    .unwrap();
    let vm = vm.to_str().unwrap();
    for (command, input, finding) in [
        (
            "expand",
            "examples/vms/",
            "examples/vms/vision-workstation.yaml:12: error[KV011] VirtualMachine/vision-1",
        ),
        (
            "build",
            vm,
            &*format!("{vm}:4: warning[KV034] VirtualMachine/web"),
        ),
    ] {
        let full = fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = run(kvrender()
            .current_dir(crate::common::root())
            .args([command, input])
            .stdout(full));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert!(
            lines.iter().any(|l| l.starts_with(finding)),
            "{command}: {stderr}"
        );
        assert_eq!(
            lines.last().copied(),
            Some("kvrender: error: failed to write output: No space left on device (os error 28)"),
            "{command}: {stderr}"
        );
    }
}

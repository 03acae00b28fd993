//! Output: YAML streams and diagnostics. Only this module (and `main`) writes.

pub mod diagnostics;
pub mod files;
pub mod github;
pub mod gitlab;
pub mod json;
pub mod ordered;
pub mod sarif;
mod twins;

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde_json::Value;

use crate::load::kustomize::normalize;
use crate::load::yaml;

/// Where the paths of the CI formats are taken from: the checkout (`GITHUB_WORKSPACE`,
/// `CI_PROJECT_DIR`) and the directory kvrender runs in, which a job may have moved into a
/// folder of the checkout (`working-directory: manifests`). Each is kept as it was given and,
/// where that differs, with its symbolic links resolved: the system names the directory
/// kvrender runs in by its resolved path, while a runner may name its workspace through a link
/// (a work directory on a linked volume; on macOS, `/var` is a link to `/private/var`).
#[derive(Debug)]
pub(crate) struct Checkout {
    /// The checkout and the directory kvrender runs in: as given, then resolved if that
    /// differs. A checkout that is not known, or not absolute, is `None`.
    spellings: Vec<(Option<PathBuf>, Option<PathBuf>)>,
}

impl Checkout {
    /// The checkout `root` (a relative one is taken from `cwd`), seen from `cwd`. What cannot
    /// be resolved (a folder that is not there) is used as given.
    pub(crate) fn new(root: Option<&Path>, cwd: Option<&Path>) -> Self {
        let root = root
            .map(|root| cwd.map_or_else(|| root.to_path_buf(), |cwd| cwd.join(root)))
            .filter(|root| root.is_absolute());
        let resolved = |p: &Option<PathBuf>| {
            p.as_deref()
                .map(|p| p.canonicalize().unwrap_or_else(|_| normalize(p)))
        };
        let resolved = (resolved(&root), resolved(&cwd.map(Path::to_path_buf)));
        let given = (root.as_deref().map(normalize), cwd.map(normalize));
        let mut spellings = vec![given];
        if resolved != spellings[0] {
            spellings.push(resolved);
        }
        Checkout { spellings }
    }

    /// `path` as a CI service matches it against the files of a change: written without `./`,
    /// `//`, `.` or a `..` that follows a folder (CI services compare paths as strings, so
    /// `vms//a.yaml` and `vms/../vms/a.yaml` match no file), and relative to the checkout when
    /// it is inside it. A relative path is taken from the directory kvrender runs in: `vm.yaml`
    /// in `manifests` is `manifests/vm.yaml`.
    pub(crate) fn relative<'p>(&self, path: &'p str) -> Cow<'p, str> {
        // What kvrender names itself (`<stdin>`, `-`) is no file of the checkout.
        if path.starts_with('<') || path == "-" {
            return Cow::Borrowed(path);
        }
        let given = Path::new(path);
        for (root, cwd) in &self.spellings {
            let absolute = if given.is_absolute() {
                Some(normalize(given))
            } else {
                cwd.as_deref().map(|cwd| normalize(&cwd.join(given)))
            };
            if let Some(inside) = root
                .as_deref()
                .zip(absolute)
                .and_then(|(root, absolute)| {
                    absolute
                        .strip_prefix(root)
                        .ok()
                        .and_then(Path::to_str)
                        .map(str::to_owned)
                })
                .filter(|inside| !inside.is_empty())
            {
                return Cow::Owned(forward_slashes(inside));
            }
        }
        match normalize(given).to_str().map(forward_slashes) {
            Some(normal) if normal != path && !normal.is_empty() => Cow::Owned(normal),
            _ => Cow::Borrowed(path),
        }
    }
}

/// A path as the CI services write it, with `/` between its folders: on Windows the system's
/// own separator is `\\`, which they would read as part of a name.
fn forward_slashes(path: impl Into<String>) -> String {
    let path = path.into();
    if cfg!(windows) {
        path.replace('\\', "/")
    } else {
        path
    }
}

/// Documents printed per parallel task: enough that the task costs more than handing it out.
const CHUNK: usize = 16;

/// Print values as one YAML stream, each document introduced by `---`. Documents are printed
/// in parallel and joined in order.
pub fn yaml_stream<'a>(values: impl IntoIterator<Item = &'a Value>) -> String {
    yaml_stream_parts(values).concat()
}

/// [`yaml_stream`] in pieces, in order, for a caller that writes them one after the other
/// instead of joining them.
pub fn yaml_stream_parts<'a>(values: impl IntoIterator<Item = &'a Value>) -> Vec<String> {
    let values: Vec<&Value> = values.into_iter().collect();
    let twin_of = twins::find(&values);
    if twin_of.iter().all(Option::is_none) {
        return values
            .par_chunks(CHUNK)
            .map(|chunk| {
                let mut out = String::with_capacity(chunk.len() * 1024);
                for v in chunk {
                    write_stream_document(&mut out, v);
                }
                out
            })
            .collect();
    }
    twins::print(&values, &twin_of)
}

/// The YAML stream of `items`, in pieces, each document taken from `printed` when it was
/// printed already (as [`stream_document`] prints them; see
/// [`crate::krm::engine::Processed::printed`]).
pub fn yaml_stream_parts_printed(items: &[Value], printed: Vec<Option<String>>) -> Vec<String> {
    if printed.iter().all(Option::is_none) {
        return yaml_stream_parts(items);
    }
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, document) in printed.into_iter().enumerate() {
        if let Some(document) = document {
            parts.extend(yaml_stream_parts(&items[start..i]));
            parts.push(document);
            start = i + 1;
        }
    }
    parts.extend(yaml_stream_parts(&items[start..]));
    parts
}

/// Print one value as a document of a YAML stream: `---`, the document, a final newline.
/// Documents printed in parallel and concatenated make the same stream as [`yaml_stream`].
pub fn stream_document(value: &Value) -> String {
    // Printed into a buffer each thread keeps, then copied once at its exact size: no string
    // grown by doubling (copying as it grows, and holding up to twice its length for as long
    // as the output is kept).
    thread_local! {
        static SCRATCH: std::cell::RefCell<String> = std::cell::RefCell::new(String::with_capacity(16 << 10));
    }
    SCRATCH.with(|scratch| {
        let mut scratch = scratch.borrow_mut();
        scratch.clear();
        write_stream_document(&mut scratch, value);
        scratch.as_str().to_owned()
    })
}

fn write_stream_document(out: &mut String, value: &Value) {
    out.push_str("---\n");
    yaml::write(out, value);
}

/// Write `parts` to `out` in order, many at a time (`writev`), without joining them.
pub fn write_parts(out: &mut impl std::io::Write, parts: &[String]) -> std::io::Result<()> {
    /// At most this many buffers per call (below every system's `IOV_MAX`).
    const BATCH: usize = 512;
    let mut rest = parts;
    // How much of `rest[0]` is already written.
    let mut done = 0usize;
    loop {
        while rest.first().is_some_and(|p| p.len() == done) {
            rest = &rest[1..];
            done = 0;
        }
        let Some(first) = rest.first() else { break };
        let mut slices = Vec::with_capacity(BATCH.min(rest.len()));
        slices.push(std::io::IoSlice::new(&first.as_bytes()[done..]));
        slices.extend(
            rest[1..]
                .iter()
                .take(BATCH - 1)
                .map(|p| std::io::IoSlice::new(p.as_bytes())),
        );
        let mut written = match out.write_vectored(&slices) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        // Skip the parts written whole, remember how far into the next one it got.
        while let Some(first) = rest.first() {
            let left = first.len() - done;
            if written < left {
                done += written;
                break;
            }
            written -= left;
            done = 0;
            rest = &rest[1..];
        }
    }
    out.flush()
}

/// Print one value as a YAML document without a leading `---`.
pub fn yaml_document(value: &Value) -> String {
    yaml::to_string(value)
}

/// A unified diff of two texts, with ANSI colours when `color` is set.
pub fn unified_diff(
    before: &str,
    after: &str,
    old_name: &str,
    new_name: &str,
    color: bool,
) -> String {
    let diff = similar::TextDiff::from_lines(before, after);
    let text = diff
        .unified_diff()
        .context_radius(3)
        .header(old_name, new_name)
        .to_string();
    if !color {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 64);
    for line in text.split_inclusive('\n') {
        let code = if line.starts_with("+++") || line.starts_with("---") {
            "\x1b[1m"
        } else if line.starts_with('+') {
            "\x1b[32m"
        } else if line.starts_with('-') {
            "\x1b[31m"
        } else if line.starts_with("@@") {
            "\x1b[36m"
        } else {
            ""
        };
        if code.is_empty() {
            out.push_str(line);
        } else {
            out.push_str(code);
            out.push_str(line.trim_end_matches('\n'));
            out.push_str("\x1b[0m\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_relative(path: &str, root: Option<&Path>, cwd: Option<&Path>) -> String {
        Checkout::new(root, cwd).relative(path).into_owned()
    }

    /// A path named with `//`, `.` or `..` is written as the one file it is, from the
    /// checkout's root as from a folder of it, so that it matches the file of the change.
    #[test]
    fn paths_are_written_without_dots_or_doubled_slashes() {
        let root = Path::new("/home/runner/work/repo");
        let manifests = root.join("manifests");
        for (path, cwd) in [
            ("vms/a.yaml", root),
            ("vms//a.yaml", root),
            ("./vms/../vms/a.yaml", root),
            ("vms/./a.yaml", root),
            ("/home/runner/work/repo//vms/./a.yaml", root),
            ("../vms//a.yaml", manifests.as_path()),
            ("./../vms/x/../a.yaml", manifests.as_path()),
        ] {
            assert_eq!(
                repo_relative(path, Some(root), Some(cwd)),
                "vms/a.yaml",
                "{path} from {}",
                cwd.display()
            );
        }
        // Without a checkout, or outside it, the path is still written plainly; a `..` that
        // leaves the folder it starts from stays.
        assert_eq!(repo_relative("vms//./a.yaml", None, None), "vms/a.yaml");
        assert_eq!(repo_relative("vms/../vms/a.yaml", None, None), "vms/a.yaml");
        assert_eq!(repo_relative("../x//a.yaml", None, None), "../x/a.yaml");
        assert_eq!(repo_relative("a/../../b.yaml", None, None), "../b.yaml");
        assert_eq!(
            repo_relative("/etc/../etc//vm.yaml", Some(root), Some(root)),
            "/etc/vm.yaml"
        );
        assert_eq!(
            repo_relative("../../other//vm.yaml", Some(root), Some(&manifests)),
            "../../other/vm.yaml"
        );
        assert_eq!(repo_relative("/../a.yaml", None, None), "/a.yaml");
        assert_eq!(repo_relative("<stdin>", Some(root), Some(root)), "<stdin>");
        assert_eq!(repo_relative("-", Some(root), Some(root)), "-");
    }

    /// A runner may name its workspace through a symbolic link, while the system names the
    /// directory kvrender runs in by its resolved path: a file of a folder of the checkout is
    /// still named from the checkout's root, however either is spelt.
    #[cfg(unix)]
    #[test]
    fn a_checkout_spelt_through_a_link_keeps_the_folder_kvrender_runs_in() {
        let tmp = tempfile::tempdir().unwrap();
        // Resolved, so that `real` is the name the system gives it (on macOS, the temporary
        // folder is itself under a link).
        let dir = tmp.path().canonicalize().unwrap();
        let real = dir.join("real");
        let link = dir.join("link");
        std::fs::create_dir_all(real.join("vms")).unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        for (root, cwd) in [
            (&link, real.join("vms")),
            (&real, link.join("vms")),
            (&link, link.join("vms")),
        ] {
            let at = |path: &str| repo_relative(path, Some(root), Some(&cwd));
            let from = format!("{} in {}", root.display(), cwd.display());
            assert_eq!(at("web.yaml"), "vms/web.yaml", "{from}");
            assert_eq!(at("./web.yaml"), "vms/web.yaml", "{from}");
            assert_eq!(at("../vms/web.yaml"), "vms/web.yaml", "{from}");
            for absolute in [root.join("vms/web.yaml"), real.join("vms/web.yaml")] {
                assert_eq!(at(absolute.to_str().unwrap()), "vms/web.yaml", "{from}");
            }
        }
    }
}

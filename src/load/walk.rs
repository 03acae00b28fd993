//! Turning the paths a user gives into a sorted list of files to read.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::load::Exclude;

/// The file `build -o DIR` leaves in DIR. A walk that meets a directory holding it leaves that
/// directory out: it is an earlier run's output, and reading it beside the files it was built
/// from would define every object twice. A PATH that names such a directory is read all the
/// same, and so is a file named on the command line.
pub const OUTPUT_MARKER: &str = ".kvrender-output";

/// Whether a file found while walking a directory is one kvrender reads.
pub fn is_manifest(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("yaml" | "yml" | "json")
    )
}

/// Whether a file is kustomize's own configuration (`kustomization.yaml`, `kustomization.yml`,
/// `Kustomization`), which is never a resource and is often written without `apiVersion` and
/// `kind`: kvrender does not read it, whether found in a directory or named.
pub fn is_kustomization(path: &Path) -> bool {
    matches!(
        path.file_name().and_then(|n| n.to_str()),
        Some("kustomization.yaml" | "kustomization.yml" | "Kustomization")
    )
}

/// Whether `path`, met below `root` and not readable, is a symbolic link to nothing whose own
/// name the walk leaves out (hidden, such as an editor's `.#vm.yaml` lock, not a manifest, or
/// excluded): nothing would have been read through it. A dangling `vm.yaml` stays an error.
fn is_left_out_link(root: &Path, path: &Path, exclude: &Exclude) -> bool {
    let dangling = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
        && std::fs::metadata(path).is_err();
    dangling
        && (path
            .file_name()
            .and_then(|n| n.to_str())
            .is_none_or(|n| n.starts_with('.'))
            || !is_manifest(path)
            || is_kustomization(path)
            || (!exclude.is_empty()
                && exclude.leaves_out_entry(
                    &crate::load::exclude::as_given(path),
                    path.strip_prefix(root).ok(),
                    false,
                )))
}

/// Whether `path`, met below `root` as a symbolic link back to a folder the walk is inside,
/// has a name the walk leaves out (hidden, such as `.up -> ..`, or excluded): nothing would
/// have been read through it. (The walker meets the loop before its filter sees the entry.)
fn is_left_out_loop(root: &Path, path: &Path, exclude: &Exclude) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_none_or(|n| n.starts_with('.'))
        || (!exclude.is_empty()
            && exclude.leaves_out_entry(
                &crate::load::exclude::as_given(path),
                path.strip_prefix(root).ok(),
                true,
            ))
}

/// The files below `root`, sorted by path, hidden entries (`.git`, ...) and directories holding
/// [`OUTPUT_MARKER`] skipped (`root` itself is always walked). Symbolic links are followed; a
/// loop is an error naming the link and the folder it leads back to, unless the link's own
/// name is hidden or excluded. (A file reached twice is read once: see
/// [`crate::load::read_inputs`].)
pub fn walk(root: &Path) -> Result<Vec<PathBuf>> {
    walk_skipping(root, None, &Exclude::default())
}

/// [`walk`], leaving out the directory `skip` (already canonical) wherever it is met below
/// `root` (`build -o DIR` does not read back what it wrote), and the files and folders
/// `exclude` matches (`root` itself is not matched).
pub fn walk_skipping(root: &Path, skip: Option<&Path>, exclude: &Exclude) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let skipped = |e: &walkdir::DirEntry| {
        skip.is_some_and(|skip| {
            e.file_type().is_dir()
                && e.file_name() == skip.file_name().unwrap_or_default()
                && std::fs::canonicalize(e.path()).is_ok_and(|p| p == skip)
        })
    };
    let walker = walkdir::WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            e.depth() == 0
                || !(e.file_name().to_str().is_some_and(|n| n.starts_with('.'))
                    || skipped(e)
                    || (!exclude.is_empty()
                        && exclude.leaves_out_entry(
                            &crate::load::exclude::as_given(e.path()),
                            e.path().strip_prefix(root).ok(),
                            e.file_type().is_dir(),
                        ))
                    || (e.file_type().is_dir() && e.path().join(OUTPUT_MARKER).exists()))
        });
    for entry in walker {
        if let Err(e) = &entry
            && let Some(path) = e.path()
            && if e.loop_ancestor().is_some() {
                is_left_out_loop(root, path, exclude)
            } else {
                is_left_out_link(root, path, exclude)
            }
        {
            continue;
        }
        let entry = entry.map_err(|e| {
            let path = e
                .path()
                .map_or_else(|| root.to_path_buf(), Path::to_path_buf);
            let ancestor = e.loop_ancestor().map(Path::to_path_buf);
            let source = match (e.into_io_error(), ancestor) {
                (Some(io), _) => io,
                (None, ancestor) => std::io::Error::other(format!(
                    "symbolic link loop: it leads back to `{}`, a folder the walk is inside \
                     (leave the link out with `--exclude`, or give it a hidden name)",
                    ancestor.unwrap_or_default().display()
                )),
            };
            Error::Read { path, source }
        })?;
        if entry.file_type().is_file()
            && is_manifest(entry.path())
            && !is_kustomization(entry.path())
        {
            files.push(entry.into_path());
        }
    }
    Ok(files)
}

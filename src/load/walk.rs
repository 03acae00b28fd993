//! Turning the paths a user gives into a sorted list of files to read.

use std::collections::HashSet;
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

/// What tells two paths to one folder apart from two folders: the device and the inode where
/// the system gives them, else the canonical path.
#[cfg(unix)]
#[derive(Clone, PartialEq, Eq, Hash)]
struct FolderId(u64, u64);
#[cfg(not(unix))]
#[derive(Clone, PartialEq, Eq, Hash)]
struct FolderId(PathBuf);

/// The identity of the folder at `path` (links followed), unless the system cannot say.
fn folder_id(path: &Path) -> Option<FolderId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path)
            .ok()
            .map(|m| FolderId(m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        std::fs::canonicalize(path).ok().map(FolderId)
    }
}

/// The folders a walk has entered. One reached again through another link is not walked
/// again: everything it holds was met the first time, and where each folder holds two links to
/// the next, walking every way down would double the time with each folder.
#[derive(Default)]
struct Folders {
    /// Each folder entered.
    entered: HashSet<FolderId>,
    /// The folders entered that held an entry left out by a pattern of its path (`--exclude
    /// docs/*.yaml`), at any depth below them: reached by another path, the same entry may be
    /// read, so such a folder is walked again.
    partial: HashSet<FolderId>,
    /// The folders the walk is inside, by depth (a deeper one may be left from an earlier
    /// branch: only those above the entry at hand count).
    above: Vec<Option<FolderId>>,
}

impl Folders {
    /// Whether to walk the folder at `path`, `depth` below the root: not when it was entered
    /// before and nothing below it was left out by its path.
    fn enter(&mut self, path: &Path, depth: usize) -> bool {
        let id = folder_id(path);
        if let Some(id) = &id
            && !self.entered.insert(id.clone())
            && !self.partial.contains(id)
        {
            return false;
        }
        self.above.truncate(depth);
        self.above.push(id);
        true
    }

    /// An entry `depth` below the root was left out by its path: the folders above it are
    /// partial.
    fn left_out_by_path(&mut self, depth: usize) {
        for id in self.above.iter().take(depth).flatten() {
            self.partial.insert(id.clone());
        }
    }
}

/// One walk of `root`: what it leaves out, and the folders it has entered.
struct Walk<'a> {
    root: &'a Path,
    exclude: &'a Exclude,
    folders: Folders,
}

impl Walk<'_> {
    /// Whether `--exclude` leaves out the entry at `path`, `depth` below the root. One left out
    /// by its path, not its name, makes the folders above it partial (see [`Folders`]).
    fn excludes(&mut self, path: &Path, depth: usize, is_folder: bool) -> bool {
        let exclude = self.exclude;
        if exclude.is_empty()
            || !exclude.leaves_out_entry(
                &crate::load::exclude::as_given(path),
                path.strip_prefix(self.root).ok(),
                is_folder,
            )
        {
            return false;
        }
        if !path
            .file_name()
            .is_some_and(|name| exclude.leaves_out_name(Path::new(name), is_folder))
        {
            self.folders.left_out_by_path(depth);
        }
        true
    }

    /// Whether `path`, met `depth` below the root and not readable, is a symbolic link to
    /// nothing whose own name the walk leaves out (hidden, such as an editor's `.#vm.yaml`
    /// lock, not a manifest, or excluded): nothing would have been read through it. A dangling
    /// `vm.yaml` stays an error.
    fn is_left_out_link(&mut self, path: &Path, depth: usize) -> bool {
        let dangling = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
            && std::fs::metadata(path).is_err();
        dangling
            && (path
                .file_name()
                .and_then(|n| n.to_str())
                .is_none_or(|n| n.starts_with('.'))
                || !is_manifest(path)
                || is_kustomization(path)
                || self.excludes(path, depth, false))
    }

    /// Whether `path`, met `depth` below the root as a symbolic link back to a folder the walk
    /// is inside, has a name the walk leaves out (hidden, such as `.up -> ..`, or excluded):
    /// nothing would have been read through it. (The walker meets the loop before the walk
    /// looks at the entry.)
    fn is_left_out_loop(&mut self, path: &Path, depth: usize) -> bool {
        path.file_name()
            .and_then(|n| n.to_str())
            .is_none_or(|n| n.starts_with('.'))
            || self.excludes(path, depth, true)
    }
}

/// The files below `root`, sorted by path, hidden entries (`.git`, ...) skipped, and of a
/// directory holding [`OUTPUT_MARKER`] only the manifests the marker does not list as an
/// earlier `build -o`'s output (`root` itself is always walked whole). Symbolic links are followed; a
/// loop is an error naming the link and the folder it leads back to, unless the link's own
/// name is hidden or excluded. A folder reached again through another link is walked once,
/// where first met. (A file reached twice is read once: see [`crate::load::read_inputs`].)
pub fn walk(root: &Path) -> Result<Vec<PathBuf>> {
    walk_skipping(root, None, &Exclude::default())
}

/// [`walk`], leaving out the directory `skip` (already canonical) wherever it is met below
/// `root` (`build -o DIR` does not read back what it wrote), and the files and folders
/// `exclude` matches (`root` itself is not matched).
pub fn walk_skipping(root: &Path, skip: Option<&Path>, exclude: &Exclude) -> Result<Vec<PathBuf>> {
    walk_noting_skip(root, skip, exclude, &mut Vec::new())
}

/// [`walk_skipping`], adding to `met` each path through which the walk met `skip`: under its
/// own name, or through a symbolic link of any name that leads to it.
pub fn walk_noting_skip(
    root: &Path,
    skip: Option<&Path>,
    exclude: &Exclude,
    met: &mut Vec<PathBuf>,
) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    let skipped = |e: &walkdir::DirEntry| {
        skip.is_some_and(|skip| {
            e.file_type().is_dir()
                && (e.file_name() == skip.file_name().unwrap_or_default() || e.path_is_symlink())
                && std::fs::canonicalize(e.path()).is_ok_and(|p| p == skip)
        })
    };
    let mut walk = Walk {
        root,
        exclude,
        folders: Folders::default(),
    };
    let mut walker = walkdir::WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter();
    while let Some(entry) = walker.next() {
        if let Err(e) = &entry
            && let Some(path) = e.path()
            && if e.loop_ancestor().is_some() {
                walk.is_left_out_loop(path, e.depth())
            } else {
                walk.is_left_out_link(path, e.depth())
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
        let is_dir = entry.file_type().is_dir();
        let hidden = entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with('.'));
        let is_skip = entry.depth() > 0 && !hidden && skipped(&entry);
        if is_skip {
            met.push(entry.path().to_path_buf());
        }
        let excluded = entry.depth() > 0
            && !hidden
            && !is_skip
            && walk.excludes(entry.path(), entry.depth(), is_dir);
        let output = entry.depth() > 0 && is_dir && entry.path().join(OUTPUT_MARKER).exists();
        let left_out = entry.depth() > 0 && (hidden || is_skip || excluded || output);
        if output && !hidden && !is_skip && !excluded {
            // An earlier `build -o` wrote there: what its marker does not list as written
            // (a file someone put there, or every file under a marker that lists none) is a
            // source all the same.
            if let Ok(unrecorded) = crate::emit::files::unrecorded_manifests(entry.path()) {
                for relative in unrecorded {
                    let file = entry.path().join(&relative);
                    let depth = entry.depth() + relative.components().count();
                    if !walk.excludes(&file, depth, false) {
                        files.push(file);
                    }
                }
            }
        }
        if is_dir {
            if left_out || !walk.folders.enter(entry.path(), entry.depth()) {
                walker.skip_current_dir();
            }
        } else if !left_out
            && entry.file_type().is_file()
            && is_manifest(entry.path())
            && !is_kustomization(entry.path())
        {
            files.push(entry.into_path());
        }
    }
    Ok(files)
}

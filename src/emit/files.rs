//! Writing objects as files under a directory, all or nothing.
//!
//! File names follow `kustomize build -o DIR`: `<group>_<version>_<kind>_<name>.yaml` in lower
//! case (an empty group is left out). When the namespaced objects span more than one namespace,
//! each of them is prefixed with `<namespace>_`, a namespaced object without a namespace counting
//! as `default`. Which kinds are cluster-scoped is what kustomize itself knows: the built-in
//! Kubernetes kinds of [`is_builtin_cluster_scoped`]. Any other kind, custom resources included, is
//! namespaced to kustomize, so a `VirtualMachineClusterInstancetype` gets the `default_` prefix
//! beside objects of two namespaces, as kustomize gives it.
//!
//! Every character outside `[a-z0-9._-]` becomes `_`, so no object name (`../x`, `a/b`, a NUL)
//! can reach outside DIR.
//!
//! Writing is atomic in the sense that matters for a CI step: every file is first written into
//! a staging folder inside DIR, and only when all of them are written are they moved into
//! place. A failure midway leaves DIR as it was. A run stopped while it moves files (a signal)
//! leaves its staging folder with the files it replaces kept aside and a journal of what it
//! was changing; the next run into DIR puts those files back before it does anything else.
//!
//! DIR also gets [`OUTPUT_MARKER`], which tells every later run that walks a directory holding
//! DIR to leave it out (see [`crate::load::walk`]). The marker lists the files kvrender wrote
//! there, and `--prune` deletes only files of that list: whatever else DIR holds (a
//! hand-written `kustomization.yaml`, a README) is never kvrender's to delete.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Result};
use crate::load::walk::OUTPUT_MARKER;
use crate::model::scope::is_builtin_cluster_scoped;

/// What [`OUTPUT_MARKER`] says to whoever opens it, before the list of the files written.
const MARKER_TEXT: &str = "\
# This directory holds what `kvrender build -o` wrote. A kvrender run that walks a directory
# containing this one leaves it out, so that `kvrender validate .` or `kvrender build .` at the
# top of a repository does not read every object a second time. Naming this directory as a
# PATH reads it; deleting this file makes it an ordinary directory again.
#
# The files kvrender wrote here, one per line. `kvrender build -o DIR --prune` deletes those a
# later run no longer writes, and no other file.
";

/// The text of [`OUTPUT_MARKER`] recording `names`.
fn marker_text<'a>(names: impl IntoIterator<Item = &'a str>) -> String {
    let mut text = MARKER_TEXT.to_string();
    for name in names {
        text.push_str(name);
        text.push('\n');
    }
    text
}

/// The files an earlier `build -o` recorded in `dir`'s marker: none when there is no marker.
/// A line that could not be a file kvrender writes directly in `dir` (a comment, a path with a
/// `/`, a hidden name: a marker edited by hand or by someone hostile) is passed over, so that
/// `--prune` never reaches outside `dir` or into what kvrender did not write.
///
/// The marker is only read when it is a regular file no larger than [`MAX_MARKER_BYTES`]: a
/// named pipe would block the run, and a link to a device such as `/dev/zero` never ends.
fn recorded_files(dir: &Path) -> Result<BTreeSet<String>> {
    let path = dir.join(OUTPUT_MARKER);
    let bytes = match read_marker(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeSet::new()),
        Err(e) => return Err(Error::Read { path, source: e }),
    };
    Ok(String::from_utf8_lossy(&bytes)
        .lines()
        .map(str::trim)
        .filter(|line| is_written_name(line))
        .map(str::to_string)
        .collect())
}

/// The files of `dir` an earlier `build -o` into it wrote (its marker lists them, or a run
/// stopped halfway was changing them): kvrender's output, not sources. `None` when `dir` holds
/// no marker.
pub fn recorded_output(dir: &Path) -> Option<BTreeSet<String>> {
    if !dir.join(OUTPUT_MARKER).is_file() {
        return None;
    }
    let mut recorded = recorded_files(dir).unwrap_or_default();
    recorded.extend(journaled_in(dir));
    Some(recorded)
}

/// The most bytes a marker may hold: a line per file written, for far more files than any
/// repository has.
const MAX_MARKER_BYTES: u64 = 64 << 20;

/// The bytes of the marker at `path`, which must be a regular file (not a link, a pipe or a
/// device) of at most [`MAX_MARKER_BYTES`].
fn read_marker(path: &Path) -> std::io::Result<Vec<u8>> {
    let not_a_marker = |what: &str| {
        std::io::Error::other(format!(
            "{what}; kvrender writes its marker as a plain file: delete `{OUTPUT_MARKER}` if \
             this directory is kvrender's output, or choose another directory"
        ))
    };
    let kind = std::fs::symlink_metadata(path)?.file_type();
    if !kind.is_file() {
        let what = if kind.is_symlink() {
            "it is a symbolic link"
        } else if kind.is_dir() {
            "it is a directory"
        } else {
            "it is not a regular file (a named pipe, socket or device)"
        };
        return Err(not_a_marker(what));
    }
    let bytes = read_regular(path).map_err(|e| match e.kind() {
        // Swapped for something else since the check above.
        std::io::ErrorKind::Other => not_a_marker("it is not a regular file"),
        _ => e,
    })?;
    if bytes.len() as u64 > MAX_MARKER_BYTES {
        return Err(not_a_marker(&format!(
            "it is larger than {} MiB",
            MAX_MARKER_BYTES >> 20
        )));
    }
    Ok(bytes)
}

/// The bytes of the regular file at `path` (at most one more than [`MAX_MARKER_BYTES`]), opened
/// without following a link or waiting on a pipe should it have been swapped for one since it
/// was looked at.
fn read_regular(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOFOLLOW);
    }
    let file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    let mut bytes = Vec::new();
    file.take(MAX_MARKER_BYTES + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The first manifest (in name order) under `dir`, relative to it, that `dir`'s marker does
/// not record as written by an earlier `build -o`: a source file that a walk leaving `dir`
/// out would no longer read. `None` when every manifest there is an earlier run's output.
///
/// # Errors
/// When the marker cannot be read.
pub fn unrecorded_manifest(dir: &Path) -> Result<Option<PathBuf>> {
    Ok(unrecorded_manifests(dir)?.next())
}

/// Every manifest under `dir` that [`unrecorded_manifest`] would name, relative to `dir`, in
/// name order.
///
/// # Errors
/// When the marker cannot be read.
pub fn unrecorded_manifests(dir: &Path) -> Result<impl Iterator<Item = PathBuf> + '_> {
    let mut recorded = recorded_files(dir)?;
    // What a run stopped halfway was changing is kvrender's too, until the next run undoes it.
    recorded.extend(journaled_in(dir));
    // What a walk reads: hidden entries (the marker, a staging folder an interrupted run
    // left) and kustomizations are not.
    Ok(walkdir::WalkDir::new(dir)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| !e.file_name().to_str().is_some_and(|n| n.starts_with('.')))
        .filter_map(std::result::Result::ok)
        .filter(|e| {
            e.file_type().is_file()
                && crate::load::walk::is_manifest(e.path())
                && !crate::load::walk::is_kustomization(e.path())
        })
        .filter_map(move |e| e.path().strip_prefix(dir).ok().map(Path::to_path_buf))
        .filter(move |relative| {
            relative
                .to_str()
                .is_none_or(|name| !recorded.contains(name))
        }))
}

/// Whether `name` is one kvrender could have written directly in an output directory: the
/// characters of [`sanitize`] (and the bundles' upper-case `CHECKSUMS.sha256`), not hidden.
fn is_written_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// An object's API group, version, kind, name and namespace, as strings (`""` when missing).
struct Id<'a> {
    group: &'a str,
    version: &'a str,
    kind: &'a str,
    name: &'a str,
    namespace: &'a str,
}

impl<'a> Id<'a> {
    fn of(obj: &'a Value) -> Self {
        let text = |v: Option<&'a Value>| v.and_then(Value::as_str).unwrap_or("");
        let api_version = text(obj.get("apiVersion"));
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let meta = obj.get("metadata");
        Id {
            group,
            version,
            kind: text(obj.get("kind")),
            name: text(meta.and_then(|m| m.get("name"))),
            namespace: text(meta.and_then(|m| m.get("namespace"))),
        }
    }

    /// The namespace kustomize files the object under: `None` for a cluster-scoped kind,
    /// `default` for a namespaced object without one.
    fn effective_namespace(&self) -> Option<&'a str> {
        let cluster_scoped = is_builtin_cluster_scoped(self.group, self.version, self.kind);
        match (cluster_scoped, self.namespace) {
            (true, _) => None,
            (false, "") => Some("default"),
            (false, namespace) => Some(namespace),
        }
    }
}

/// The file names kustomize would give `objects` written together, in their order.
pub fn kustomize_file_names(objects: &[Value]) -> Vec<String> {
    let ids: Vec<Id<'_>> = objects.iter().map(Id::of).collect();
    let namespaces: BTreeSet<&str> = ids.iter().filter_map(Id::effective_namespace).collect();
    let prefixed = namespaces.len() > 1;
    ids.iter()
        .map(|id| {
            let namespace = id.effective_namespace().filter(|_| prefixed);
            let parts: Vec<&str> = namespace
                .into_iter()
                .chain([id.group, id.version, id.kind, id.name])
                .filter(|p| !p.is_empty())
                .collect();
            format!("{}.yaml", sanitize(&parts.join("_")))
        })
        .collect()
}

/// Lower-case and replace anything but `[a-z0-9._-]` with `_`; never a name that starts with `.`.
fn sanitize(s: &str) -> String {
    let mut out: String = s
        .chars()
        .flat_map(char::to_lowercase)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    // Never `.` or `..`, and never a hidden name (an `apiVersion` of `.x/v1`): a walk would
    // pass it over, and `--prune` could never delete it.
    if out.is_empty() || out.starts_with('.') {
        out = format!("_{out}");
    }
    // Keep names within common file-system limits (255 bytes with the extension).
    out.truncate(240);
    out
}

/// The name of the folder a run stages its files in, before its process number.
const STAGING_PREFIX: &str = ".kvrender-staging-";

/// What names the runs that can tell each other's processes apart: a digest of the boot this
/// machine is in and of the PID namespace (a container has its own), on Linux; `None`
/// elsewhere. A staging folder is named after it and the process number
/// (`.kvrender-staging-<token>-<pid>`), and only a folder of this token is judged by its
/// process number and undone: one made in another container, before a reboot, or by hand (in a
/// pull request, say) is left as it is, whatever its journal says.
fn run_token() -> Option<&'static str> {
    static TOKEN: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    TOKEN
        .get_or_init(|| {
            use sha2::{Digest, Sha256};
            let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
            let namespace = std::fs::read_link("/proc/self/ns/pid").ok()?;
            let mut digest = Sha256::new();
            digest.update(boot.trim().as_bytes());
            digest.update([0]);
            digest.update(namespace.to_string_lossy().as_bytes());
            let hex: String = digest
                .finalize()
                .iter()
                .take(6)
                .map(|b| format!("{b:02x}"))
                .collect();
            Some(hex)
        })
        .as_deref()
}

/// The name of the staging folder of process `pid` of this machine's boot and PID namespace.
fn staging_name(pid: u32) -> String {
    format!("{STAGING_PREFIX}{}-{pid}", run_token().unwrap_or("0"))
}

/// The token and process number a staging folder's name gives (`None` for the token of a name
/// without one, as earlier versions named their folders), or `None` for another name.
fn staging_owner(name: &str) -> Option<(Option<&str>, u32)> {
    let rest = name.strip_prefix(STAGING_PREFIX)?;
    match rest.rsplit_once('-') {
        Some((token, pid)) => Some((Some(token), pid.parse().ok()?)),
        None => Some((None, rest.parse().ok()?)),
    }
}

/// The file in a staging folder that lists, one per line, the files of DIR a run is about to
/// replace, create or delete, written once the files it replaces are kept aside in `.before`
/// and before the first of them changes.
const JOURNAL: &str = ".journal";

/// Refuse an output path no run could write into: one that exists and is not a directory, a
/// symbolic link to nothing, or one below a file. `--check` refuses the same paths.
///
/// # Errors
/// [`Error::Usage`] naming the path, and what is in the way.
pub fn check_output_path(dir: &Path) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(Error::Usage(format!(
            "the output path `{}` exists and is not a directory",
            dir.display()
        )));
    }
    if let Ok(target) = std::fs::read_link(dir)
        && !dir.exists()
    {
        return Err(Error::Usage(format!(
            "the output path `{}` is a symbolic link to `{}`, which does not exist: create that \
             directory, or remove the link",
            dir.display(),
            target.display()
        )));
    }
    if let Some(blocking) = dir
        .ancestors()
        .skip(1)
        .filter(|d| !d.as_os_str().is_empty())
        .find(|d| d.symlink_metadata().is_ok())
        .filter(|d| !d.is_dir())
    {
        return Err(Error::Usage(format!(
            "cannot create the output directory `{}`: `{}` is not a directory",
            dir.display(),
            blocking.display()
        )));
    }
    Ok(())
}

/// Create this run's staging folder at `path`, a new directory. Whatever has that name already
/// (a run of an earlier process with the same number, or a link or file someone put there) is
/// never written through: a folder is undone and removed as an abandoned one, anything else
/// unlinked.
fn make_staging(path: &Path) -> std::io::Result<()> {
    match std::fs::create_dir(path) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            remove_staging(path);
            std::fs::create_dir(path)
        }
        other => other,
    }
}

/// Remove a staging folder no process is using, after undoing what its run had started to
/// change in DIR; a link or file of that name is unlinked, never followed.
fn remove_staging(path: &Path) {
    match path.symlink_metadata() {
        Ok(m) if m.is_dir() => {
            // Where no token tells this machine's folders apart, none is undone.
            if run_token().is_some() {
                // Best effort: a folder that cannot be undone now is not undone by any run.
                let _ = recover(path);
            }
            // The journal first, so that a folder that cannot be removed whole is not undone
            // again by every later run.
            let _ = std::fs::remove_file(path.join(JOURNAL));
            let _ = std::fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(path);
        }
        Err(_) => {}
    }
}

/// Undo the changes of a run that was stopped while it moved its files into DIR (the parent of
/// `staging`): every file its journal lists is put back from `.before` when it existed before
/// the run, and removed when the run had created it. A staging folder without a journal was
/// stopped before it changed anything. Only names a run writes directly in DIR are read from
/// the journal, so an edited one cannot reach elsewhere. The kept files stay in `.before` (each
/// is put back through a new link), so that undoing again, after a stop halfway through this,
/// gives the same result. Whether every file could be put back (or removed) as it was.
fn recover(staging: &Path) -> bool {
    let Some(dir) = staging.parent() else {
        return false;
    };
    // Only a folder of kvrender's own making is read: `.before` a directory, not a link to one
    // (whose files the renames would bring into DIR from elsewhere).
    let backup = staging.join(".before");
    let is_real_dir = |p: &Path| p.symlink_metadata().is_ok_and(|m| m.is_dir());
    if !is_real_dir(staging) {
        return false;
    }
    let has_backup = is_real_dir(&backup);
    let mut undone = true;
    for name in journal_names(staging) {
        let target = dir.join(&name);
        let kept = backup.join(&name);
        let kept_kind = has_backup
            .then(|| kept.symlink_metadata().ok())
            .flatten()
            .map(|m| m.file_type());
        if let Some(kind) = kept_kind {
            // A file the run kept aside (a link among them stays a link: the new link names
            // the link, never what it points to). Anything else is no file kvrender kept.
            if !(kind.is_file() || kind.is_symlink()) {
                continue;
            }
            // Still as it was (the run stopped before replacing it, or this file was the one
            // that could not be replaced): nothing to put back.
            if same_entry(&kept, &target, kind) {
                continue;
            }
            let restoring = staging.join(".restoring");
            let _ = std::fs::remove_file(&restoring);
            let linked = std::fs::hard_link(&kept, &restoring).or_else(|e| {
                if kind.is_file() {
                    std::fs::copy(&kept, &restoring).map(drop)
                } else {
                    Err(e)
                }
            });
            undone &= linked.is_ok() && std::fs::rename(&restoring, &target).is_ok();
        } else if staging.join(&name).symlink_metadata().is_err()
            && target.symlink_metadata().is_ok_and(|m| !m.is_dir())
        {
            // Not there before the run, and moved out of the staging folder: the run made it.
            undone &= std::fs::remove_file(&target).is_ok();
        }
    }
    undone
}

/// Whether `target` is what `kept` (of `kind`) holds: the same link's target, or a file of the
/// same bytes (the same file, linked twice, among them).
fn same_entry(kept: &Path, target: &Path, kind: std::fs::FileType) -> bool {
    let Ok(now) = target.symlink_metadata() else {
        return false;
    };
    if kind.is_symlink() {
        return now.file_type().is_symlink()
            && std::fs::read_link(kept)
                .ok()
                .is_some_and(|a| std::fs::read_link(target).ok() == Some(a));
    }
    if !now.file_type().is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let Ok(was) = kept.symlink_metadata()
            && (was.dev(), was.ino()) == (now.dev(), now.ino())
        {
            return true;
        }
    }
    match (std::fs::read(kept), std::fs::read(target)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// The names the journal of `staging` lists that a run writes directly in DIR (none when there
/// is no journal, or it is not a plain file of a sensible size).
fn journal_names(staging: &Path) -> Vec<String> {
    let Ok(bytes) = read_marker(&staging.join(JOURNAL)) else {
        return Vec::new();
    };
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter(|name| is_written_name(name) || *name == OUTPUT_MARKER)
        .map(str::to_string)
        .collect()
}

/// The staging folders in `dir` whose journal lists files being changed: a `build -o` into
/// `dir` stopped halfway (or running now), whose changes the next run puts back. Sorted.
pub fn interrupted_runs(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<String> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|n| n.starts_with(STAGING_PREFIX))
        .filter(|n| !journal_names(&dir.join(n)).is_empty())
        .collect();
    found.sort();
    found
}

/// The names the journals of the staging folders in `dir` list: files a run stopped halfway
/// was changing, kvrender's own whatever the marker says now.
fn journaled_in(dir: &Path) -> BTreeSet<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return BTreeSet::new();
    };
    entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(STAGING_PREFIX))
                && e.file_type().is_ok_and(|t| t.is_dir())
        })
        .flat_map(|e| journal_names(&e.path()))
        .collect()
}

/// Write `files` (relative names, already sanitized, to contents) under `dir`, all or nothing,
/// and record them in [`OUTPUT_MARKER`]. With `prune`, also delete the files an earlier run
/// recorded there that this one does not write, and return how many; no other file is ever
/// deleted, so a mistyped `-o` cannot empty someone's directory. Without `prune`, those stay
/// recorded, for a later `--prune`.
pub fn write_all(dir: &Path, files: &BTreeMap<String, String>, prune: bool) -> Result<usize> {
    let write_err = |path: &Path, source| Error::Write {
        path: path.to_path_buf(),
        source,
    };
    check_output_path(dir)?;
    // A run stopped halfway is undone first: its changes to the files and the marker go.
    remove_abandoned_staging(dir);
    let recorded = recorded_files(dir)?;
    // The directories this run creates, innermost first: removed again if it fails.
    let created: Vec<&Path> = dir
        .ancestors()
        .take_while(|d| !d.as_os_str().is_empty() && !d.exists())
        .collect();
    let undo = || {
        for d in &created {
            let _ = std::fs::remove_dir(d);
        }
    };
    std::fs::create_dir_all(dir).map_err(|e| {
        undo();
        write_err(dir, e)
    })?;
    let staging = dir.join(staging_name(std::process::id()));
    make_staging(&staging).map_err(|e| {
        undo();
        write_err(&staging, e)
    })?;
    // Set when a failed run could not put DIR back as it was: its staging folder (with the
    // journal and the files kept aside) is then left for the next run to undo.
    let mut half_written = false;
    let result = (|| {
        let stale = stale_files(dir, &recorded, files);
        // Recorded files that stay (without `prune`) stay recorded.
        let marker_text = planned_marker(files, if prune { &[] } else { &stale });
        let marker = (OUTPUT_MARKER, marker_text.as_str());
        let all = files
            .iter()
            .map(|(n, c)| (n.as_str(), c.as_str()))
            .chain(std::iter::once(marker));
        for (name, contents) in all.clone() {
            let path = staging.join(name);
            std::fs::write(&path, contents).map_err(|e| write_err(&path, e))?;
        }
        for (name, _) in all.clone() {
            let target: PathBuf = dir.join(name);
            if target.is_dir() {
                return Err(Error::Usage(format!(
                    "cannot write `{}`: a directory of that name exists",
                    target.display()
                )));
            }
        }
        let stale = if prune { stale } else { Vec::new() };
        // What is there now is copied aside first, so that a failure halfway (a file that may
        // not be replaced or deleted) puts every file back as it was.
        let backup = staging.join(".before");
        std::fs::create_dir(&backup).map_err(|e| write_err(&backup, e))?;
        let names: Vec<&OsStr> = all.map(|(name, _)| name.as_ref()).collect();
        let stale_names: Vec<&OsStr> = stale.iter().map(AsRef::as_ref).collect();
        for &name in names.iter().chain(&stale_names) {
            let target = dir.join(name);
            if target.symlink_metadata().is_ok() {
                // A second link to the file costs nothing; where links are not allowed (another
                // user's file), a copy.
                let kept = backup.join(name);
                // Keeping it is the first write of its replacement: a full disk fails here.
                std::fs::hard_link(&target, &kept)
                    .or_else(|_| std::fs::copy(&target, &kept).map(drop))
                    .map_err(|e| Error::Write {
                        path: target.clone(),
                        source: e,
                    })?;
            }
        }
        // The list of what is about to change, for the next run to undo it all should this one
        // be stopped while moving files into place (see [`recover`]).
        let mut journal = String::new();
        for name in names.iter().chain(&stale_names) {
            journal.push_str(&name.to_string_lossy());
            journal.push('\n');
        }
        let pending = staging.join(".journal.tmp");
        std::fs::write(&pending, journal).map_err(|e| write_err(&pending, e))?;
        let journal = staging.join(JOURNAL);
        std::fs::rename(&pending, &journal).map_err(|e| write_err(&journal, e))?;
        let changes = || -> Result<()> {
            for &name in &names {
                let to = dir.join(name);
                std::fs::rename(staging.join(name), &to).map_err(|e| write_err(&to, e))?;
            }
            for &name in &stale_names {
                let path = dir.join(name);
                std::fs::remove_file(&path).map_err(|e| write_err(&path, e))?;
            }
            Ok(())
        };
        if let Err(e) = changes() {
            // Undone as the next run would undo it, had this one been stopped here.
            if !recover(&staging) {
                half_written = true;
                return Err(Error::Usage(format!(
                    "{}; putting back the files of `{}` as they were failed too, so it holds \
                     some new files and some old ones: the files kept aside are in `{}`, and \
                     the next `kvrender build -o {}` undoes this run's changes first",
                    crate::emit::diagnostics::one_line(format!("{:#}", anyhow::Error::from(e))),
                    dir.display(),
                    staging.join(".before").display(),
                    dir.display(),
                )));
            }
            return Err(e);
        }
        Ok(stale.len())
    })();
    if half_written {
        return result;
    }
    // The journal goes first: once it is gone, the run is over (done or undone), and a stop
    // before the folder is removed leaves nothing for the next run to undo.
    let _ = std::fs::remove_file(staging.join(JOURNAL));
    let _ = std::fs::remove_dir_all(&staging);
    if result.is_err() {
        undo();
    }
    result
}

/// Remove the staging folders in `dir` that runs which were stopped halfway left behind: those
/// of this machine's boot and PID namespace (see [`run_token`]) named after a process that no
/// longer runs (or after this one, whose number an earlier process had), after undoing what
/// they had started to change. A folder of another token is left alone: its process cannot be
/// told from here, and its journal is not this machine's. One named as earlier versions named
/// them (no token, no journal) is removed once its process is gone. Where it cannot be told
/// whether a process runs (not on Unix), only this process's folder is removed; walks pass the
/// folders over either way (they are hidden). Anything else of such a name, a link say, is no
/// run's folder and is unlinked.
fn remove_abandoned_staging(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let own = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some((token, pid)) = name.to_str().and_then(staging_owner) else {
            continue;
        };
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if !is_dir {
            let _ = std::fs::remove_file(entry.path());
            continue;
        }
        let gone = || pid == own || process_runs(pid) == Some(false);
        match token {
            Some(token) if Some(token) == run_token() && gone() => remove_staging(&entry.path()),
            None if gone() => {
                let _ = std::fs::remove_dir_all(entry.path());
            }
            _ => {}
        }
    }
}

/// Whether a process of number `pid` runs: asked of the system with a signal that is not sent
/// (a process of another user counts as running), or `None` where that cannot be asked.
#[cfg(unix)]
fn process_runs(pid: u32) -> Option<bool> {
    use nix::errno::Errno;
    let Ok(pid) = i32::try_from(pid) else {
        return Some(false);
    };
    if pid <= 0 {
        // 0 and below name process groups, not a process.
        return Some(false);
    }
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
        Ok(()) | Err(Errno::EPERM) => Some(true),
        Err(Errno::ESRCH) => Some(false),
        Err(_) => None,
    }
}

#[cfg(not(unix))]
fn process_runs(_pid: u32) -> Option<bool> {
    None
}

/// What writing `files` into `dir` (with `prune`: and pruning it) would change, file by file.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Files that do not exist yet.
    pub created: Vec<String>,
    /// Files whose contents differ.
    pub changed: Vec<String>,
    /// With `prune`, files that would be deleted.
    pub removed: Vec<String>,
}

impl Changes {
    /// Whether nothing would change.
    pub fn is_empty(&self) -> bool {
        self.created.is_empty() && self.changed.is_empty() && self.removed.is_empty()
    }
}

/// Compare `files` with what `dir` holds, writing nothing: what [`write_all`] would change,
/// the marker of an existing directory included (a marker that is missing or lists other files
/// is `new` or `changed`, as the run would write it). An output path no run could write into is the same
/// usage error as for [`write_all`].
pub fn changes(dir: &Path, files: &BTreeMap<String, String>, prune: bool) -> Result<Changes> {
    let read_err = |path: &Path, source| Error::Read {
        path: path.to_path_buf(),
        source,
    };
    check_output_path(dir)?;
    let mut changes = Changes::default();
    if !dir.exists() {
        // Every file is new; that the marker is too goes without saying.
        changes.created = files.keys().cloned().collect();
        return Ok(changes);
    }
    for (name, contents) in files {
        let path = dir.join(name);
        let meta = match path.symlink_metadata() {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                changes.created.push(name.clone());
                continue;
            }
            Err(e) => return Err(read_err(&path, e)),
        };
        // What the run would replace by a plain file: a link (never read through: it may
        // lead outside DIR, to a device or a pipe), a directory (writing would fail), a file
        // of another size.
        if !meta.is_file() || meta.len() != contents.len() as u64 {
            changes.changed.push(name.clone());
            continue;
        }
        match read_regular(&path) {
            Ok(bytes) if bytes == contents.as_bytes() => {}
            Ok(_) => changes.changed.push(name.clone()),
            Err(e) => return Err(read_err(&path, e)),
        }
    }
    let stale = stale_files(dir, &recorded_files(dir)?, files);
    let marker = planned_marker(files, if prune { &[] } else { &stale });
    match read_marker(&dir.join(OUTPUT_MARKER)) {
        Ok(bytes) if bytes == marker.as_bytes() => {}
        Ok(_) => changes.changed.push(OUTPUT_MARKER.to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            changes.created.push(OUTPUT_MARKER.to_string());
        }
        Err(e) => return Err(read_err(&dir.join(OUTPUT_MARKER), e)),
    }
    if prune {
        changes.removed = stale;
    }
    Ok(changes)
}

/// The marker a run writing `files` leaves, recording them and `kept`: the recorded files that
/// stay because the run does not prune.
fn planned_marker(files: &BTreeMap<String, String>, kept: &[String]) -> String {
    let mut listed: Vec<&str> = files
        .keys()
        .map(String::as_str)
        .chain(kept.iter().map(String::as_str))
        .collect();
    listed.sort_unstable();
    marker_text(listed)
}

/// The files directly in `dir` that `--prune` deletes: recorded by an earlier run, not among
/// `files`, and still there as a file or a symbolic link (a directory of that name is left
/// alone). Sorted.
fn stale_files(
    dir: &Path,
    recorded: &BTreeSet<String>,
    files: &BTreeMap<String, String>,
) -> Vec<String> {
    recorded
        .iter()
        .filter(|name| !files.contains_key(*name))
        .filter(|name| {
            dir.join(name)
                .symlink_metadata()
                .is_ok_and(|m| m.is_file() || m.is_symlink())
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn names(objects: &[Value]) -> Vec<String> {
        kustomize_file_names(objects)
    }

    fn obj(api_version: &str, kind: &str, name: &str, namespace: Option<&str>) -> Value {
        let mut o = json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}});
        if let Some(ns) = namespace {
            o["metadata"]["namespace"] = json!(ns);
        }
        o
    }

    #[test]
    fn one_namespace_means_no_prefix() {
        let it = obj(
            "instancetype.kubevirt.io/v1beta1",
            "VirtualMachineClusterInstancetype",
            "u1.medium",
            None,
        );
        let cm = obj("v1", "ConfigMap", "X", Some("Apps"));
        assert_eq!(
            names(std::slice::from_ref(&it)),
            ["instancetype.kubevirt.io_v1beta1_virtualmachineclusterinstancetype_u1.medium.yaml"]
        );
        assert_eq!(names(std::slice::from_ref(&cm)), ["v1_configmap_x.yaml"]);
        // No namespace and `default` are the same namespace.
        let plain = obj("v1", "ConfigMap", "a", None);
        let default = obj("v1", "ConfigMap", "b", Some("default"));
        assert_eq!(
            names(&[plain, default]),
            ["v1_configmap_a.yaml", "v1_configmap_b.yaml"]
        );
    }

    #[test]
    fn several_namespaces_prefix_every_namespaced_object() {
        let objects = [
            obj(
                "instancetype.kubevirt.io/v1beta1",
                "VirtualMachineClusterInstancetype",
                "small",
                None,
            ),
            obj(
                "instancetype.kubevirt.io/v1beta1",
                "VirtualMachineInstancetype",
                "small",
                Some("ns1"),
            ),
            obj("v1", "ConfigMap", "plain", None),
            obj("v1", "Namespace", "ns1", None),
            obj(
                "rbac.authorization.k8s.io/v1",
                "ClusterRole",
                "cr",
                Some("ns1"),
            ),
        ];
        assert_eq!(
            names(&objects),
            [
                "default_instancetype.kubevirt.io_v1beta1_virtualmachineclusterinstancetype_small.yaml",
                "ns1_instancetype.kubevirt.io_v1beta1_virtualmachineinstancetype_small.yaml",
                "default_v1_configmap_plain.yaml",
                "v1_namespace_ns1.yaml",
                "rbac.authorization.k8s.io_v1_clusterrole_cr.yaml",
            ]
        );
    }

    #[test]
    fn cluster_scope_depends_on_group_and_version() {
        let in_two = |o: Value| {
            let other = obj("v1", "ConfigMap", "c", Some("b"));
            names(&[o, other, obj("v1", "ConfigMap", "d", Some("a"))])[0].clone()
        };
        assert_eq!(
            in_two(obj("storage.k8s.io/v1beta1", "StorageClass", "s", None)),
            "storage.k8s.io_v1beta1_storageclass_s.yaml"
        );
        assert_eq!(
            in_two(obj(
                "flowcontrol.apiserver.k8s.io/v1",
                "FlowSchema",
                "f",
                None
            )),
            "default_flowcontrol.apiserver.k8s.io_v1_flowschema_f.yaml"
        );
        assert_eq!(
            in_two(obj("example.com/v1", "Namespace", "n", None)),
            "default_example.com_v1_namespace_n.yaml"
        );
    }

    #[test]
    fn hostile_names_stay_inside_the_directory() {
        for name in ["../../etc/passwd", "a/b", "..", "x\u{0}y", &"n".repeat(300)] {
            for namespace in [None, Some(".."), Some("a/b")] {
                let objects = [
                    obj("v1", "ConfigMap", name, namespace),
                    obj("v1", "ConfigMap", "other", Some("x")),
                ];
                for file in names(&objects) {
                    assert!(!file.contains('/') && !file.contains('\u{0}'), "{file}");
                    assert!(file.len() <= 250, "{}", file.len());
                }
            }
        }
    }

    #[test]
    fn an_output_path_that_is_a_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out");
        std::fs::write(&file, "x").unwrap();
        let files = BTreeMap::from([("a.yaml".to_string(), "a: 1\n".to_string())]);
        assert!(write_all(&file, &files, false).is_err());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    }

    #[test]
    fn a_failed_write_removes_the_directories_it_created() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("new").join("out");
        // A name in a folder that does not exist cannot be written.
        let files = BTreeMap::from([
            ("a.yaml".to_string(), "a: 1\n".to_string()),
            ("missing/b.yaml".to_string(), "b: 1\n".to_string()),
        ]);
        assert!(write_all(&dir, &files, false).is_err());
        assert!(!tmp.path().join("new").exists(), "nothing left behind");
        // An existing directory stays, as it was.
        std::fs::create_dir(tmp.path().join("kept")).unwrap();
        assert!(write_all(&tmp.path().join("kept"), &files, false).is_err());
        assert!(tmp.path().join("kept").is_dir());
        assert_eq!(
            std::fs::read_dir(tmp.path().join("kept")).unwrap().count(),
            0
        );
    }

    /// The names directly in `dir`, sorted.
    fn listing(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn files(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(n, c)| (n.to_string(), c.to_string()))
            .collect()
    }

    #[test]
    fn a_staging_folder_of_a_run_that_stopped_halfway_is_removed() {
        if run_token().is_none() {
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        write_all(&dir, &files(&[("a.yaml", "a: 0\n")]), false).unwrap();
        // No process has this number (it is past any `pid_max`); process 1 always runs.
        let abandoned = dir.join(staging_name(u32::MAX - 1));
        let earlier = dir.join(format!("{STAGING_PREFIX}{}", u32::MAX - 1));
        let running = dir.join(staging_name(1));
        // Made elsewhere (another container, another boot, a pull request): left alone, and
        // its journal, which would delete `a.yaml`, is not followed.
        let foreign = dir.join(format!("{STAGING_PREFIX}0123456789ab-{}", u32::MAX - 1));
        for staging in [&abandoned, &earlier, &running, &foreign] {
            std::fs::create_dir_all(staging.join(".before")).unwrap();
            std::fs::write(staging.join("b.yaml"), "b: 0\n").unwrap();
        }
        std::fs::write(foreign.join(JOURNAL), "a.yaml\n").unwrap();
        write_all(&dir, &files(&[("b.yaml", "b: 1\n")]), false).unwrap();
        assert!(!abandoned.exists());
        assert!(
            !earlier.exists(),
            "a folder named as earlier versions named them"
        );
        assert!(
            running.join("b.yaml").exists(),
            "a running process's folder stays"
        );
        assert!(
            foreign.join(JOURNAL).exists(),
            "another machine's folder stays"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("a.yaml")).unwrap(),
            "a: 0\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("b.yaml")).unwrap(),
            "b: 1\n"
        );
    }

    #[test]
    fn prune_deletes_only_the_files_an_earlier_run_wrote() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        let first = files(&[("a.yaml", "a: 1\n"), ("b.yaml", "b: 1\n")]);
        assert_eq!(write_all(&dir, &first, true).unwrap(), 0, "a new directory");
        std::fs::create_dir(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/keep.yaml"), "k: 1\n").unwrap();
        std::fs::write(dir.join(".hidden"), "h\n").unwrap();
        std::fs::write(dir.join("kustomization.yaml"), "resources: []\n").unwrap();
        let second = files(&[("a.yaml", "a: 2\n")]);
        assert_eq!(write_all(&dir, &second, true).unwrap(), 1);
        assert_eq!(
            listing(&dir),
            [
                ".hidden",
                OUTPUT_MARKER,
                "a.yaml",
                "kustomization.yaml",
                "sub"
            ]
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("a.yaml")).unwrap(),
            "a: 2\n"
        );
        assert_eq!(
            recorded_files(&dir).unwrap(),
            BTreeSet::from(["a.yaml".to_string()])
        );
    }

    #[test]
    fn without_prune_a_file_no_longer_written_stays_and_stays_recorded() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        write_all(&dir, &files(&[("a.yaml", "a\n"), ("b.yaml", "b\n")]), false).unwrap();
        write_all(&dir, &files(&[("a.yaml", "a\n")]), false).unwrap();
        assert_eq!(listing(&dir), [OUTPUT_MARKER, "a.yaml", "b.yaml"]);
        // A later --prune still knows `b.yaml` as kvrender's, and deletes it.
        let only_c = files(&[("c.yaml", "c\n")]);
        let planned = changes(&dir, &only_c, true).unwrap();
        assert_eq!(planned.removed, ["a.yaml", "b.yaml"]);
        assert_eq!(write_all(&dir, &only_c, true).unwrap(), 2);
        assert_eq!(listing(&dir), [OUTPUT_MARKER, "c.yaml"]);
    }

    #[test]
    fn prune_never_deletes_what_no_build_wrote() {
        // An existing directory of someone's own: a plain -o marks it, and --prune afterwards
        // still leaves their files.
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("README.md"), "keep\n").unwrap();
        let one = files(&[("a.yaml", "a: 1\n")]);
        assert_eq!(write_all(tmp.path(), &one, true).unwrap(), 0);
        assert_eq!(write_all(tmp.path(), &one, false).unwrap(), 0);
        assert_eq!(write_all(tmp.path(), &files(&[]), true).unwrap(), 1);
        assert_eq!(listing(tmp.path()), [OUTPUT_MARKER, "README.md"]);
    }

    #[test]
    fn a_marker_edited_to_name_other_paths_deletes_none_of_them() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside.yaml");
        std::fs::write(&outside, "x\n").unwrap();
        let dir = tmp.path().join("out");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join(".hidden"), "h\n").unwrap();
        std::fs::write(
            dir.join(OUTPUT_MARKER),
            format!(
                "../outside.yaml\n{}\n.hidden\nsub\n# a.yaml\n./.hidden\n",
                outside.display()
            ),
        )
        .unwrap();
        assert_eq!(
            write_all(&dir, &files(&[("a.yaml", "a\n")]), true).unwrap(),
            0
        );
        assert!(outside.exists());
        assert_eq!(listing(&dir), [".hidden", OUTPUT_MARKER, "a.yaml", "sub"]);
    }

    #[test]
    fn a_hidden_file_name_is_never_written() {
        let objects = [
            obj(".hidden/v1", "Thing", "x", None),
            obj("v1", "ConfigMap", ".x", None),
            obj("", "", "", None),
        ];
        for file in names(&objects) {
            assert!(!file.starts_with('.'), "{file}");
            assert!(is_written_name(&file), "{file}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_link_where_the_staging_folder_goes_is_never_written_through() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        write_all(&dir, &files(&[("a.yaml", "a: 0\n")]), false).unwrap();
        // This process's own number, and a number no process has.
        for pid in [std::process::id(), u32::MAX - 1] {
            let link = dir.join(staging_name(pid));
            std::os::unix::fs::symlink(&outside, &link).unwrap();
        }
        write_all(&dir, &files(&[("a.yaml", "a: 1\n")]), false).unwrap();
        assert_eq!(listing(&outside), Vec::<String>::new());
        assert_eq!(listing(&dir), [OUTPUT_MARKER, "a.yaml"]);
        assert_eq!(
            std::fs::read_to_string(dir.join("a.yaml")).unwrap(),
            "a: 1\n"
        );
    }

    #[test]
    fn a_run_stopped_while_moving_files_in_is_undone_by_the_next() {
        if !Path::new("/proc/self").exists() {
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        let before = files(&[("a.yaml", "a: 0\n"), ("b.yaml", "b: 0\n")]);
        write_all(&dir, &before, false).unwrap();
        let marker = std::fs::read_to_string(dir.join(OUTPUT_MARKER)).unwrap();
        std::fs::write(tmp.path().join("outside.yaml"), "o\n").unwrap();
        // A run (of a process that no longer runs) writing a new `a.yaml` and `c.yaml` and
        // pruning `b.yaml`, stopped after it moved `a.yaml` and `c.yaml` into place.
        let staging = dir.join(staging_name(u32::MAX - 1));
        let kept = staging.join(".before");
        std::fs::create_dir_all(&kept).unwrap();
        for name in ["a.yaml", "b.yaml", OUTPUT_MARKER] {
            std::fs::hard_link(dir.join(name), kept.join(name)).unwrap();
        }
        std::fs::write(staging.join(OUTPUT_MARKER), "new marker\n").unwrap();
        std::fs::write(
            staging.join(JOURNAL),
            format!("a.yaml\nc.yaml\n{OUTPUT_MARKER}\nb.yaml\n../outside.yaml\n"),
        )
        .unwrap();
        // Moved in as a run moves them: new files in place of the old (whose links stay).
        for (name, text) in [("a.yaml", "a: 1\n"), ("c.yaml", "c: 1\n")] {
            std::fs::write(staging.join(name), text).unwrap();
            std::fs::rename(staging.join(name), dir.join(name)).unwrap();
        }
        // What an interrupted run with no journal yet left is only removed.
        let early = dir.join(staging_name(u32::MAX - 2));
        std::fs::create_dir_all(early.join(".before")).unwrap();
        std::fs::write(early.join("a.yaml"), "a: 2\n").unwrap();

        let planned = changes(&dir, &before, false).unwrap();
        assert_eq!(
            planned.changed,
            ["a.yaml"],
            "--check sees the half-moved files"
        );
        // Only the run that had started changing files is one to tell of.
        assert_eq!(interrupted_runs(&dir), [staging_name(u32::MAX - 1)]);
        remove_abandoned_staging(&dir);
        assert_eq!(listing(&dir), [OUTPUT_MARKER, "a.yaml", "b.yaml"]);
        assert!(interrupted_runs(&dir).is_empty());
        assert!(changes(&dir, &before, false).unwrap().is_empty());
        assert_eq!(
            std::fs::read_to_string(dir.join(OUTPUT_MARKER)).unwrap(),
            marker
        );
        assert!(tmp.path().join("outside.yaml").exists());
    }

    #[cfg(unix)]
    #[test]
    fn check_refuses_an_output_path_no_run_can_write_into() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let dangling = tmp.path().join("dangling");
        std::os::unix::fs::symlink(tmp.path().join("nowhere"), &dangling).unwrap();
        let one = files(&[("a.yaml", "a: 1\n")]);
        for dir in [file.clone(), file.join("below"), dangling] {
            for result in [
                changes(&dir, &one, false).map(drop),
                write_all(&dir, &one, false).map(drop),
            ] {
                assert!(
                    matches!(result, Err(Error::Usage(_))),
                    "{}: {result:?}",
                    dir.display()
                );
            }
        }
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    }

    #[test]
    fn check_compares_the_marker_too() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        let one = files(&[("a.yaml", "a: 1\n")]);
        assert_eq!(changes(&dir, &one, false).unwrap().created, ["a.yaml"]);
        write_all(
            &dir,
            &files(&[("a.yaml", "a: 1\n"), ("b.yaml", "b\n")]),
            false,
        )
        .unwrap();
        write_all(&dir, &one, false).unwrap();
        assert!(changes(&dir, &one, false).unwrap().is_empty());
        // `b.yaml` is still recorded: gone by hand, the run would rewrite the marker.
        std::fs::remove_file(dir.join("b.yaml")).unwrap();
        assert_eq!(changes(&dir, &one, false).unwrap().changed, [OUTPUT_MARKER]);
        write_all(&dir, &one, false).unwrap();
        assert!(changes(&dir, &one, false).unwrap().is_empty());
        std::fs::remove_file(dir.join(OUTPUT_MARKER)).unwrap();
        assert_eq!(changes(&dir, &one, false).unwrap().created, [OUTPUT_MARKER]);
    }

    /// A `--prune` run stopped while deleting: the next run puts the deleted file and the old
    /// marker back before it reads the marker, so it prunes the file after all; and until then
    /// the file counts as kvrender's. Undoing twice (a stop while undoing) gives the same.
    #[test]
    fn a_prune_stopped_halfway_is_undone_before_the_marker_is_read() {
        // `out` as a `--prune` run writing only `a.yaml` leaves it when stopped after it moved
        // its marker in and deleted `b.yaml`: the staging folder of a process that is gone.
        let stopped = |dir: &Path| {
            write_all(
                dir,
                &files(&[("a.yaml", "a: 0\n"), ("b.yaml", "b: 0\n")]),
                false,
            )
            .unwrap();
            let staging = dir.join(staging_name(u32::MAX - 1));
            let kept = staging.join(".before");
            std::fs::create_dir_all(&kept).unwrap();
            for name in ["a.yaml", "b.yaml", OUTPUT_MARKER] {
                std::fs::hard_link(dir.join(name), kept.join(name)).unwrap();
            }
            std::fs::write(
                staging.join(JOURNAL),
                format!("a.yaml\n{OUTPUT_MARKER}\nb.yaml\n"),
            )
            .unwrap();
            std::fs::write(staging.join(OUTPUT_MARKER), marker_text(["a.yaml"])).unwrap();
            std::fs::rename(staging.join(OUTPUT_MARKER), dir.join(OUTPUT_MARKER)).unwrap();
            std::fs::remove_file(dir.join("b.yaml")).unwrap();
            staging
        };
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        let staging = stopped(&dir);
        let before_marker = std::fs::read_to_string(staging.join(".before").join(OUTPUT_MARKER));
        assert!(recover(&staging));
        assert!(recover(&staging));
        let staged = staging.file_name().unwrap().to_str().unwrap();
        assert_eq!(listing(&dir), [OUTPUT_MARKER, staged, "a.yaml", "b.yaml"]);
        assert_eq!(
            std::fs::read_to_string(dir.join("b.yaml")).unwrap(),
            "b: 0\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join(OUTPUT_MARKER)).ok(),
            before_marker.ok()
        );

        // A file that cannot be put back (a folder took its name) is said.
        let dir = tmp.path().join("blocked");
        let staging = stopped(&dir);
        std::fs::create_dir_all(dir.join("b.yaml").join("inside")).unwrap();
        assert!(!recover(&staging));

        let dir = tmp.path().join("again");
        stopped(&dir);
        // Restored by hand while the staging folder is there, `b.yaml` is still kvrender's.
        std::fs::write(dir.join("b.yaml"), "b: 0\n").unwrap();
        assert_eq!(unrecorded_manifest(&dir).unwrap(), None);
        std::fs::remove_file(dir.join("b.yaml")).unwrap();
        assert_eq!(
            write_all(&dir, &files(&[("a.yaml", "a: 0\n")]), true).unwrap(),
            1
        );
        assert_eq!(listing(&dir), [OUTPUT_MARKER, "a.yaml"]);
        assert_eq!(
            std::fs::read_to_string(dir.join(OUTPUT_MARKER)).unwrap(),
            marker_text(["a.yaml"])
        );
    }

    /// A staging folder whose `.before` is a link: nothing is brought into DIR through it.
    /// And `--check` never reads an output file through a link: the run would replace it.
    #[cfg(unix)]
    #[test]
    fn links_in_a_staging_folder_or_among_the_outputs_are_not_followed() {
        if run_token().is_none() {
            return;
        }
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("out");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.yaml"), "s: 0\n").unwrap();
        write_all(&dir, &files(&[("a.yaml", "a: 0\n")]), false).unwrap();
        let staging = dir.join(staging_name(u32::MAX - 1));
        std::fs::create_dir_all(&staging).unwrap();
        std::os::unix::fs::symlink(&outside, staging.join(".before")).unwrap();
        std::fs::write(staging.join(JOURNAL), "secret.yaml\n").unwrap();
        remove_abandoned_staging(&dir);
        assert!(!staging.exists());
        assert!(outside.join("secret.yaml").exists());
        assert_eq!(listing(&dir), [OUTPUT_MARKER, "a.yaml"]);

        std::fs::remove_file(dir.join("a.yaml")).unwrap();
        std::fs::write(outside.join("a.yaml"), "a: 0\n").unwrap();
        std::os::unix::fs::symlink(outside.join("a.yaml"), dir.join("a.yaml")).unwrap();
        let planned = changes(&dir, &files(&[("a.yaml", "a: 0\n")]), false).unwrap();
        assert_eq!(planned.changed, ["a.yaml"]);
    }
}

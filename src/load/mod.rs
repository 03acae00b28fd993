//! Reading inputs: files, directories (walked recursively, `*.yaml`, `*.yml`, `*.json`, sorted by
//! path) and `-` for stdin. Multi-document streams are split at their boundaries and the
//! documents parsed in parallel; every object keeps its [`Origin`].

pub mod built_from;
pub mod deferred;
pub mod exclude;
mod json;
pub mod kustomize;
pub mod locate;
mod namespaces;
pub mod split;
mod variables;
pub mod walk;
pub mod yaml;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::iter::Either;
use rayon::prelude::*;
use serde_json::Value;

use crate::diagnostic::{Diagnostic, codes};
use crate::error::{Error, Result};
use crate::model::Object;
use crate::model::path::Fields;
use crate::origin::Origin;
use split::{BOM, is_separator};

pub use exclude::Exclude;
pub use namespaces::{note_kustomize_namespaces, notes_on_renaming};
pub use variables::note_variables;
pub(crate) use variables::shell_word;

/// The text of one input file.
#[derive(Clone, Debug)]
pub struct Source {
    /// The path as shown to the user (`-` for stdin).
    pub path: Arc<str>,
    /// The raw bytes.
    pub bytes: Vec<u8>,
}

/// Objects and the findings made while parsing them.
#[derive(Clone, Debug, Default)]
pub struct Loaded {
    /// Parsed objects, in input order.
    pub objects: Vec<Object>,
    /// Syntax errors and documents that are not objects.
    pub diagnostics: Vec<Diagnostic>,
}

impl Loaded {
    /// Append another load result.
    pub fn extend(&mut self, other: Loaded) {
        self.objects.extend(other.objects);
        self.diagnostics.extend(other.diagnostics);
    }
}

fn display(path: &Path) -> Arc<str> {
    Arc::from(path.to_string_lossy().as_ref())
}

/// Read every input path: a file, a directory (walked) or `-` (stdin, read once).
pub fn read_paths(paths: &[PathBuf]) -> Result<Vec<Source>> {
    read_inputs(paths, None, &Exclude::default())
}

/// Whether `bytes` hold no YAML document with anything in it: nothing but blanks, comments,
/// document markers (`---`, `...`), null documents (`~`, `null`) and a byte order mark. The
/// look is by line and cheap; anything else counts as something.
pub fn holds_nothing(bytes: &[u8]) -> bool {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    bytes.split(|&b| b == b'\n').all(|line| {
        let line = line.trim_ascii();
        let line = line
            .strip_prefix(b"---")
            .filter(|rest| rest.first().is_none_or(u8::is_ascii_whitespace))
            .map_or(line, <[u8]>::trim_ascii_start);
        line.is_empty()
            || line.starts_with(b"#")
            || matches!(line, b"..." | b"~" | b"null" | b"Null" | b"NULL")
    })
}

/// The text of a file that begins with a UTF-16 byte order mark (what Windows PowerShell 5.1's
/// `>` writes), as UTF-8 with its mark, as kustomize and kpt read such a file; any other bytes as
/// they are. Bytes that are not valid UTF-16 are left as they are too, for the UTF-8 check to
/// refuse.
pub fn utf16_as_utf8(bytes: Vec<u8>) -> Vec<u8> {
    let little = match bytes.get(..2) {
        Some([0xff, 0xfe]) => true,
        Some([0xfe, 0xff]) => false,
        _ => return bytes,
    };
    // `FF FE 00 00` is the mark of UTF-32LE, which nothing here reads.
    if !bytes.len().is_multiple_of(2) || (little && bytes.get(2..4) == Some(&[0, 0])) {
        return bytes;
    }
    let units = bytes.chunks_exact(2).map(|pair| {
        let pair = [pair[0], pair[1]];
        if little {
            u16::from_le_bytes(pair)
        } else {
            u16::from_be_bytes(pair)
        }
    });
    match char::decode_utf16(units).collect::<Result<String, _>>() {
        Ok(text) => text.into_bytes(),
        Err(_) => bytes,
    }
}

/// A file's bytes as every reader takes them: UTF-16 decoded ([`utf16_as_utf8`]) and lone
/// carriage returns made line feeds ([`line_breaks_as_lf`]).
fn as_read(bytes: Vec<u8>) -> Vec<u8> {
    let mut bytes = utf16_as_utf8(bytes);
    line_breaks_as_lf(&mut bytes);
    bytes
}

/// Turn every line break that is a carriage return alone (old Mac line endings, or a file
/// that mixes them with others) into a line feed, in place. YAML reads both as line breaks,
/// but every line number kvrender reports counts line feeds; a CR LF pair is left as it is.
/// The text keeps its length, so byte offsets and columns do not move.
pub fn line_breaks_as_lf(bytes: &mut [u8]) {
    if !bytes.contains(&b'\r') {
        return;
    }
    for i in 0..bytes.len() {
        if bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n') {
            bytes[i] = b'\n';
        }
    }
}

/// [`read_paths`], leaving out the directory `skip` wherever a walked directory holds it (a
/// PATH that names it is still read), and what `exclude` matches (see [`Exclude`]).
pub fn read_inputs(
    paths: &[PathBuf],
    skip: Option<&Path>,
    exclude: &Exclude,
) -> Result<Vec<Source>> {
    read_inputs_of(paths, skip, exclude, "a PATH", &mut Vec::new())
}

/// [`read_inputs`], adding to `met` each path through which a walk met the directory `skip`
/// and left it out (see [`walk::walk_noting_skip`]).
pub fn read_inputs_noting_skip(
    paths: &[PathBuf],
    skip: Option<&Path>,
    exclude: &Exclude,
    met: &mut Vec<PathBuf>,
) -> Result<Vec<Source>> {
    read_inputs_of(paths, skip, exclude, "a PATH", met)
}

/// [`read_inputs`] of the paths an option names (`--catalog`): an error names the option.
pub fn read_option_inputs(
    paths: &[PathBuf],
    exclude: &Exclude,
    option: &str,
) -> Result<Vec<Source>> {
    read_inputs_of(paths, None, exclude, option, &mut Vec::new()).map_err(|e| e.of_option(option))
}

fn read_inputs_of(
    paths: &[PathBuf],
    skip: Option<&Path>,
    exclude: &Exclude,
    what: &str,
    met: &mut Vec<PathBuf>,
) -> Result<Vec<Source>> {
    let skip = skip.and_then(|dir| std::fs::canonicalize(dir).ok());
    let mut kustomizations = kustomize::Kustomizations::default();
    let mut seen = std::collections::HashSet::new();
    let mut sources = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            let bytes = read_stdin(what)?;
            if holds_nothing(&bytes) {
                // As `kubectl apply -f -` refuses it ("no objects passed"): most often what a
                // failed command before the pipe left, which a check must not pass as clean.
                let empty = if bytes.iter().all(u8::is_ascii_whitespace) {
                    "is empty"
                } else {
                    "holds no object (only comments, `---` or null documents)"
                };
                return Err(Error::Usage(format!(
                    "standard input (`-`, named as {what}) {empty}: nothing to read (when a \
                     command pipes into kvrender and fails, it leaves it empty; `set -o \
                     pipefail` makes the pipeline fail with it)"
                )));
            }
            sources.push(Source {
                path: Arc::from("-"),
                bytes: as_read(bytes),
            });
            continue;
        }
        let meta = std::fs::metadata(path).map_err(|source| Error::Read {
            path: path.clone(),
            source,
        })?;
        let mut files = if meta.is_dir() {
            let before = met.len();
            let files = walk::walk_noting_skip(path, skip.as_deref(), exclude, met)?;
            // A folder whose only content is the output directory is what the caller says.
            if files.is_empty() && met.len() == before {
                // Most often a wrong folder: say so, rather than report it clean.
                eprintln!(
                    "note: {}: nothing in it to read: kvrender reads the `.yaml`, `.yml` and \
                     `.json` files in a folder and below it (kustomizations aside, and what \
                     `--exclude` leaves out)",
                    path.display()
                );
            }
            files
        } else if walk::is_kustomization(path) {
            // Named on its own: what it builds is not read from it.
            eprintln!(
                "note: {}: a kustomization is not read: kvrender reads manifest files, not \
                 what kustomize builds of them; check the build with `kubectl kustomize {} | \
                 kvrender validate -`",
                path.display(),
                path.parent()
                    .filter(|p| !p.as_os_str().is_empty())
                    .map_or_else(|| ".".to_string(), |p| p.display().to_string())
            );
            Vec::new()
        } else if exclude.leaves_out_named(path) {
            Vec::new()
        } else {
            vec![path.clone()]
        };
        let named_file = !meta.is_dir() && !files.is_empty();
        let walked = files.len();
        files.retain(|file| !kustomizations.names_as_configuration(file));
        if meta.is_dir() && walked > 0 && files.is_empty() && kustomize::file_of(path).is_some() {
            // An overlay: its kustomization names patches and resources elsewhere, and nothing
            // of it is a resource of its own. Say so, rather than report it clean.
            eprintln!(
                "note: {}: nothing read but a kustomization and the patches or other inputs it \
                 names: kvrender reads manifest files, not what kustomize builds of them; \
                 check the build with `kubectl kustomize {} | kvrender validate -`",
                path.display(),
                path.display()
            );
        }
        if named_file && files.is_empty() {
            // Named on its own (as a pre-commit hook names changed files): say why nothing of
            // it is checked, rather than report it clean.
            let folder = kustomizations
                .build_folder(path)
                .map_or_else(|| "DIR".to_string(), |f| f.display().to_string());
            eprintln!(
                "note: {}: not read: a kustomization in its folder or above names it as a \
                 patch or another input, not a resource (or it lies in a Helm chart); check \
                 what kustomize builds with it (`kubectl kustomize {folder} | kvrender \
                 validate -`)",
                path.display()
            );
        }
        let read: Vec<Result<(Source, Option<FileId>)>> = files
            .par_iter()
            .map(|file| {
                let (bytes, id) = read_file(file).map_err(|source| Error::Read {
                    path: file.clone(),
                    source,
                })?;
                let source = Source {
                    path: display(file),
                    bytes: as_read(bytes),
                };
                Ok((source, id))
            })
            .collect();
        for read in read {
            let (source, id) = read?;
            if named_file && holds_nothing(&source.bytes) {
                // Named on its own, as a CI step or a hook names a file: most often one a
                // failed command left empty. Say so, rather than report it clean.
                eprintln!(
                    "note: {}: no object in it (empty, or only comments, `---` or null \
                     documents)",
                    source.path
                );
            }
            // A file reached a second time (named twice, or through a symbolic link to a
            // folder already walked, such as `current -> releases/v2`) is kept once, where
            // first met. Its identity comes from the handle it was read through: no extra
            // look-up per file.
            if id.is_none_or(|id| seen.insert(id)) {
                sources.push(source);
            }
        }
    }
    // A kustomization that does not parse is read as the manifests are, so that its syntax
    // error names it: what it names is unknown, and its patches were read as resources.
    let relative = !paths.iter().any(|p| p.is_absolute());
    let cwd = (!kustomizations.broken().is_empty())
        .then(std::env::current_dir)
        .and_then(std::result::Result::ok);
    for file in kustomizations.broken() {
        let Ok((bytes, id)) = read_file(file) else {
            continue;
        };
        if id.is_none_or(|id| seen.insert(id)) {
            let bytes = as_read(bytes);
            let shown = cwd
                .as_deref()
                .filter(|_| relative)
                .and_then(|cwd| file.strip_prefix(cwd).ok())
                .unwrap_or(file);
            sources.push(Source {
                path: display(shown),
                bytes,
            });
        }
    }
    Ok(sources)
}

/// Read standard input, for `what` (a PATH, `--cluster-config`) that names it as `-`. It can
/// be read once in a run: a second `-` is a usage error naming both.
pub fn read_stdin(what: &str) -> Result<Vec<u8>> {
    static FIRST: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);
    let mut first = FIRST
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(first) = first.as_deref() {
        let how = if first == what {
            format!("as {what}")
        } else {
            format!("as {first} and as {what}")
        };
        return Err(Error::Usage(format!(
            "`-` (standard input) is named twice, {how}: it can be read once"
        )));
    }
    *first = Some(what.to_string());
    read_stream(std::io::stdin().lock(), Vec::new(), MAX_STREAM).map_err(|source| Error::Read {
        path: PathBuf::from("-"),
        source,
    })
}

/// Files at least this large are read in pieces by several threads (on Unix systems).
#[cfg_attr(not(unix), allow(dead_code))]
const PARALLEL_READ_FROM: u64 = 4 << 20;

/// Read a whole file. A large regular file is read in 1 MiB pieces in parallel: most of the
/// time of reading a file that the system has cached goes into giving the buffer its memory
/// pages, and that work spreads over the threads. Any other file is read from the handle
/// already open, into a buffer of the size the system reported.
fn read_file(path: &Path) -> std::io::Result<(Vec<u8>, Option<FileId>)> {
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    let id = file_id(&meta);
    read_open_file(&file, &meta).map(|bytes| (bytes, id))
}

/// Read the whole of the file at `path` as a PATH is read: a regular file up to
/// [`MAX_STREAM`] bytes, a pipe or a device up to as many, so that neither `/dev/zero` nor a
/// huge file runs the process out of memory. For the files an option names
/// (`--cluster-config`, a function config).
///
/// # Errors
/// When the file cannot be opened or read, or holds more than [`MAX_STREAM`] bytes.
pub fn read_whole(path: &Path) -> std::io::Result<Vec<u8>> {
    read_file(path).map(|(bytes, _)| bytes)
}

/// What tells two paths to one file apart from two files: the device and the inode.
type FileId = (u64, u64);

/// The identity of a file, where the system gives one.
fn file_id(meta: &std::fs::Metadata) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Some((meta.dev(), meta.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// Read the whole of `file`, whose metadata is `meta` (see [`read_file`]).
fn read_open_file(file: &std::fs::File, meta: &std::fs::Metadata) -> std::io::Result<Vec<u8>> {
    if meta.is_file() && meta.len() > MAX_STREAM {
        return Err(too_large(meta.len()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileExt;

        const PIECE: usize = 1 << 20;
        if meta.is_file()
            && meta.len() >= PARALLEL_READ_FROM
            && let Ok(len) = usize::try_from(meta.len())
        {
            let mut bytes = vec![0u8; len];
            let read = bytes
                .par_chunks_mut(PIECE)
                .enumerate()
                .try_for_each(|(i, piece)| file.read_exact_at(piece, (i * PIECE) as u64));
            // A file that grew or shrank meanwhile is read again, the ordinary way (these
            // reads did not move the handle's position).
            let mut probe = [0u8; 1];
            if read.is_ok() && file.read_at(&mut probe, meta.len())? == 0 {
                return Ok(bytes);
            }
        }
    }
    // One byte more than the reported size, so that the read that finds the end needs no
    // room of its own; `take` reads without asking the system for the size again.
    let hint = usize::try_from(meta.len()).unwrap_or(0);
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(hint.saturating_add(1))
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::OutOfMemory))?;
    if meta.is_file() {
        // One that grows while it is read stops at the limit too.
        Read::take(file, MAX_STREAM + 1).read_to_end(&mut bytes)?;
        if bytes.len() as u64 > MAX_STREAM {
            return Err(too_large(bytes.len() as u64));
        }
        return Ok(bytes);
    }
    // A device or a pipe has no size to trust: `/dev/zero` never ends.
    read_stream(file, bytes, MAX_STREAM)
}

/// The most kvrender reads from one file or stream (stdin, a pipe, a device): far more than
/// any repository's manifests (100,000 VirtualMachines take about 90 MB), and a bound on
/// what a file that is not a manifest (a disk image, a sparse file) costs before it is
/// refused.
pub const MAX_STREAM: u64 = 512 << 20;

/// The error for a regular file of `len` bytes, more than [`MAX_STREAM`].
fn too_large(len: u64) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!(
            "the file is {} MiB, more than the {} MiB kvrender reads from one file",
            len >> 20,
            MAX_STREAM >> 20
        ),
    )
}

/// Read `stream` to its end into `bytes`, failing past `limit` bytes ([`MAX_STREAM`]).
fn read_stream(stream: impl Read, mut bytes: Vec<u8>, limit: u64) -> std::io::Result<Vec<u8>> {
    stream.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "more than {} MiB from a stream (stdin, a pipe or a device), the most kvrender \
                 reads from one; give a file instead",
                limit >> 20
            ),
        ));
    }
    Ok(bytes)
}

/// Parse every source, documents in parallel, results in input order.
pub fn parse_sources(sources: &[Source]) -> Loaded {
    let per_file: Vec<Loaded> = sources
        .par_iter()
        .map(|s| parse_bytes(&s.path, &s.bytes))
        .collect();
    let mut loaded = Loaded::default();
    for l in per_file {
        loaded.extend(l);
    }
    loaded
}

/// Parse the bytes of one file.
pub fn parse_bytes(path: &Arc<str>, bytes: &[u8]) -> Loaded {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_text(path, text),
        Err(e) => {
            let valid = &bytes[..e.valid_up_to()];
            let line = u32::try_from(valid.iter().filter(|b| **b == b'\n').count() + 1).ok();
            let column = valid.iter().rev().take_while(|b| **b != b'\n').count();
            Loaded {
                objects: Vec::new(),
                diagnostics: vec![
                    Diagnostic::error(
                        codes::YAML_SYNTAX,
                        Origin::new(path.clone(), 0, line),
                        format!(
                            "the file is not valid UTF-8 (invalid byte at offset {})",
                            e.valid_up_to()
                        ),
                    )
                    .with_column(u32::try_from(column + 1).ok())
                    .may_define(bytes),
                ],
            }
        }
    }
}

/// What the loader says of a kustomization it reads (only one kvrender cannot read is read: see
/// [`kustomize::Kustomizations::broken`]) when its first document, the only one kustomize
/// reads, is YAML but not a kustomization kustomize builds: a field kvrender reads of the
/// wrong type, or a field kustomize does not know. `None` for a YAML syntax error, which the
/// usual parse reports.
fn kustomization_findings(path: &Arc<str>, text: &str) -> Option<Loaded> {
    let first = kustomize::first_document(text);
    let value = yaml::parse_document_full(first).ok()?;
    let problems = kustomize::shape_problems(&value);
    let unknown = kustomize::unknown_fields(&value);
    if problems.is_empty() && unknown.is_empty() {
        return None;
    }
    let start = split::split(first).first().and_then(|c| c.content_line);
    let unknown = unknown.into_iter().map(|(key, near)| {
        let near = near
            .map(|n| format!("; did you mean `{n}`?"))
            .unwrap_or_default();
        Diagnostic::error(
            codes::UNKNOWN_FIELD,
            Origin::new(path.clone(), 0, locate::field_line(first, 1, key)),
            format!(
                "unknown field `{key}` in a kustomization: kustomize refuses the file{near}; \
                 until it is fixed, the patches and other files it names cannot be told from \
                 resources, and are read as resources"
            ),
        )
    });
    let diagnostics = problems
        .into_iter()
        .map(|(field, message)| {
            let line = if field.is_empty() {
                start
            } else {
                locate::field_line(first, 1, &field)
            };
            Diagnostic::error(
                codes::WRONG_TYPE,
                Origin::new(path.clone(), 0, line),
                format!(
                    "{message} (kustomize refuses it); until kustomize can build it, the \
                     patches and other files it names cannot be told from resources, and are \
                     read as resources"
                ),
            )
        })
        .chain(unknown)
        .collect();
    Some(Loaded {
        objects: Vec::new(),
        diagnostics,
    })
}

/// Where serde_json's error at `line` and `column` is, as a finding gives it: serde_json says
/// column 0 for the start of a line (the end of the text after its last newline, say), which
/// is the end of the line before, just past its last character. A file that holds nothing but
/// blanks has its error at line 1, without a column.
fn json_position(text: &str, line: usize, column: usize) -> (u32, Option<u32>) {
    let to_u32 = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    if column > 0 {
        return (to_u32(line.max(1)), Some(to_u32(column)));
    }
    // The last line before `line` that holds something.
    let before = text
        .lines()
        .enumerate()
        .take(line.saturating_sub(1))
        .filter(|(_, l)| !l.trim().is_empty())
        .last();
    match before {
        Some((at, l)) => (to_u32(at + 1), Some(to_u32(l.chars().count() + 1))),
        None => (1, None),
    }
}

/// serde_json's message without the ` at line L column C` it ends with.
fn json_reason(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    text.strip_suffix(&suffix).unwrap_or(&text).to_string()
}

/// The finding for YAML `text` that holds a next line (U+0085), line separator (U+2028) or
/// paragraph separator (U+2029) character, at the first of them. YAML 1.2 reads them as
/// ordinary characters, and so does kvrender; the YAML reader of kubectl, kustomize and kpt
/// takes each for a line break. A comment ended by one hides the rest of the file from
/// kvrender while the tools read on, so the file is refused whole: nothing in it is read. On
/// a document separator after the first line they are white space (see [`split`]).
fn unicode_line_break(path: &Arc<str>, text: &str) -> Option<Diagnostic> {
    let bytes = text.as_bytes();
    // In UTF-8 the three are `C2 85`, `E2 80 A8` and `E2 80 A9`: found by their last byte.
    let mut from = 0;
    let (at, code, name) = loop {
        let found = from + memchr::memchr3(0x85, 0xA8, 0xA9, &bytes[from..])?;
        from = found + 1;
        let before = |n: usize| found.checked_sub(n).map(|i| bytes[i]);
        let (at, code, name) = match (bytes[found], before(1), before(2)) {
            (0x85, Some(0xC2), _) => (found - 1, "0085", "next line"),
            (0xA8, Some(0x80), Some(0xE2)) => (found - 2, "2028", "line separator"),
            (0xA9, Some(0x80), Some(0xE2)) => (found - 2, "2029", "paragraph separator"),
            _ => continue,
        };
        // After the first line, a `---` line whose rest is white space and a comment is a
        // separator to the tools, cut out before their YAML reader sees it, and so it is here.
        let start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
        if start > 0 && split::is_separator(&text[start..end]) {
            from = end;
            continue;
        }
        break (at, code, name);
    };
    let before = &text[..at];
    let line = memchr::memchr_iter(b'\n', before.as_bytes()).count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    Some(
        Diagnostic::error(
            codes::YAML_SYNTAX,
            Origin::new(path.clone(), 0, u32::try_from(line).ok()),
            format!(
                "U+{code} ({name}): kubectl, kustomize and kpt read it as a line break and YAML \
                 1.2 does not, so they and kvrender would read this file differently; write a \
                 line feed instead (or, in a double-quoted string, the escape `\\u{code}`)"
            ),
        )
        .with_column(u32::try_from(column).ok())
        .may_define(bytes),
    )
}

/// Parse the text of one file (a YAML stream, or JSON when the path ends in `.json`).
pub fn parse_text(path: &Arc<str>, text: &str) -> Loaded {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if walk::is_kustomization(Path::new(path.as_ref()))
        && let Some(loaded) = kustomization_findings(path, text)
    {
        return loaded;
    }
    if path.ends_with(".json") {
        // An empty file, or one that holds `null`, holds no object, as a YAML file of nothing
        // or a null document does (and as `kubectl apply -f` reads either): not a syntax
        // error, nor a document that is not an object.
        if text.trim().is_empty() {
            return Loaded::default();
        }
        let parsed = json::from_str(text);
        let mut loaded = Loaded::default();
        match parsed {
            Ok(Value::Null) => {}
            Ok(value) => {
                let origin = Origin::new(path.clone(), 0, Some(1));
                // Fields are found in the text as YAML's are (see `locate`); the items of a
                // list, through their own objects of the text.
                let object = Object::new(value, origin).with_source(Arc::from(text), 1);
                match check_object(&object.value) {
                    None => {
                        for r in inline_lists(object) {
                            match r {
                                Ok(obj) => loaded.objects.push(obj),
                                Err(d) => loaded.diagnostics.push(d),
                            }
                        }
                    }
                    Some(problem) => {
                        let hint = exclude_hint(path, &object.value);
                        loaded.diagnostics.push(
                            problem
                                .diagnostic(&object, |message| message + &hint)
                                .may_define(text.as_bytes()),
                        );
                    }
                }
            }
            Err(e) => {
                let (line, column) = json_position(text, e.line(), e.column());
                loaded.diagnostics.push(
                    Diagnostic::error(
                        codes::YAML_SYNTAX,
                        Origin::new(path.clone(), 0, Some(line)),
                        // The position is the finding's own; serde_json's text repeats it.
                        format!("invalid JSON: {}", json_reason(&e)),
                    )
                    .with_column(column)
                    .may_define(text.as_bytes()),
                );
            }
        }
        return loaded;
    }
    if let Some(refused) = unicode_line_break(path, text) {
        return Loaded {
            objects: Vec::new(),
            diagnostics: vec![refused],
        };
    }
    let (chunks, skipped) = split::split_noting_skipped(text);
    let alone = only_document(&chunks);
    let tabs = yaml::refused_tabs(text);
    let results: Vec<Result<Object, Diagnostic>> = chunks
        .par_iter()
        .enumerate()
        .flat_map_iter(|(index, chunk)| {
            match parse_chunk(path, index, chunk, alone, tab_in(&tabs, chunk)) {
                Ok(obj) if is_list(&obj) => Either::Right(inline_lists(obj).into_iter()),
                parsed => Either::Left(std::iter::once(parsed)),
            }
        })
        .collect();
    let mut loaded = Loaded::default();
    for r in results {
        match r {
            Ok(obj) => loaded.objects.push(obj),
            Err(d) => loaded.diagnostics.push(d),
        }
    }
    loaded
        .diagnostics
        .extend(skipped_findings(path, &chunks, &skipped));
    loaded.diagnostics.extend(separator_findings(path, &chunks));
    loaded
        .diagnostics
        .extend(prefix_findings(path, text, &chunks));
    loaded
        .diagnostics
        .extend(tab_findings(path, &tabs, &chunks));
    loaded
}

/// Errors for what YAML allows before a document and kubectl, kustomize and kpt refuse, in
/// `text` split into `chunks`. Their readers cut a stream at every `---` line and read each
/// piece on its own, so:
/// - a directive (`%YAML 1.1`, `%TAG ...`) at the start of the stream or right after a `---`
///   line is cut off from the `---` that would open its document, and is refused as a piece
///   with no document. (One after a `...` follows the piece's document and is not read.)
/// - a `---` line led by a byte order mark is no separator to them unless it begins a piece
///   (the stream, or the line after a `---` line), and is refused where it follows anything
///   else. YAML takes the mark for part of a document prefix.
fn prefix_findings(path: &Arc<str>, text: &str, chunks: &[split::Chunk<'_>]) -> Vec<Diagnostic> {
    let error = |index: usize, line: u32, message: String| {
        Diagnostic::error(
            codes::YAML_SYNTAX,
            Origin::new(path.clone(), index, Some(line)),
            format!("invalid YAML: {message}"),
        )
    };
    let mut found = Vec::new();
    for (index, chunk) in chunks.iter().enumerate() {
        // Where the chunk is in `text`, of which it is a part.
        let start = (chunk.text.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
        let Some(before) = text.get(..start) else {
            continue;
        };
        if let Some(before) = before.strip_suffix(BOM)
            && chunk.text.starts_with("---")
            && !before.is_empty()
            && !last_line(before).is_some_and(is_separator)
        {
            found.push(error(
                index,
                chunk.first_line,
                "a byte order mark (U+FEFF) before this `---`: kubectl, kustomize and kpt do \
                 not take the line for a document separator, and refuse the file; delete the \
                 mark (a file saved as \"UTF-8 with BOM\" and joined to another leaves it \
                 there)"
                    .to_string(),
            ));
        }
        let Some(directive) = chunk
            .text
            .lines()
            .find_map(written_line)
            .filter(|l| l.starts_with('%'))
        else {
            continue;
        };
        let after_end = before
            .trim_end_matches(BOM)
            .lines()
            .rev()
            .find_map(written_line)
            .is_some_and(|l| !is_separator(l));
        if !after_end {
            found.push(error(
                index,
                chunk.first_line,
                format!(
                    "the directive `{}` begins the stream or follows a `---` line: kubectl, \
                     kustomize and kpt cut a stream at every `---` line, which leaves the \
                     directive without its document, and refuse the file (\"did not find \
                     expected <document start>\"); delete it, as Kubernetes manifests need no \
                     directives",
                    crate::diagnostic::shortened(directive.trim_end())
                ),
            ));
        }
    }
    found
}

/// `text`, a document, without the byte order marks that start its lines up to its first line
/// with content, where kubectl, kustomize and kpt take them; `None` when it has none there or
/// has one anywhere else, which they refuse too.
fn without_prefix_marks(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut in_prefix = true;
    for line in text.split_inclusive('\n') {
        if !in_prefix {
            out.push_str(line);
            continue;
        }
        let line = line.strip_prefix(BOM).unwrap_or(line);
        let t = line.trim();
        in_prefix = t.is_empty() || t.starts_with('#') || is_separator(t);
        out.push_str(line);
    }
    (out.len() < text.len() && !out.contains(BOM)).then_some(out)
}

/// `line` without a leading byte order mark and a trailing carriage return, unless it holds only
/// blanks or a comment.
fn written_line(line: &str) -> Option<&str> {
    let line = line.trim_start_matches(BOM).trim_end_matches('\r');
    let text = line.trim_start();
    (!text.is_empty() && !text.starts_with('#')).then_some(line)
}

/// The last line of `text`, which ends with a line break or is empty, without its break.
fn last_line(text: &str) -> Option<&str> {
    let body = text.strip_suffix('\n')?;
    let body = body.strip_suffix('\r').unwrap_or(body);
    Some(body.rsplit('\n').next().unwrap_or(body))
}

/// The lines of the file that `chunk` spans.
fn lines_of(chunk: &split::Chunk<'_>) -> std::ops::Range<u32> {
    let lines = u32::try_from(memchr::memchr_iter(b'\n', chunk.text.as_bytes()).count())
        .unwrap_or(u32::MAX)
        .saturating_add(u32::from(!chunk.text.ends_with('\n')));
    chunk.first_line..chunk.first_line.saturating_add(lines)
}

/// The first of the file's refused tabs `tabs` (see [`yaml::refused_tabs`], in the order of
/// their lines) that is in `chunk`.
fn tab_in<'t>(
    tabs: &'t [yaml::RefusedTab],
    chunk: &split::Chunk<'_>,
) -> Option<&'t yaml::RefusedTab> {
    if tabs.is_empty() {
        return None;
    }
    let first = tabs.partition_point(|tab| tab.line < chunk.first_line);
    tabs.get(first)
        .filter(|tab| lines_of(chunk).contains(&tab.line))
}

/// An error for each tab that kubectl, kustomize and kpt refuse (`tabs`, see
/// [`yaml::refused_tabs`]) in text that is in no document: between `---` lines that have only
/// blank lines and comments between them, in a document that is only a null, or on the lines
/// right after a `...` marker. Those tools read that text too, and refuse the file. A refused
/// tab in a document is that document's error.
fn tab_findings(
    path: &Arc<str>,
    tabs: &[yaml::RefusedTab],
    chunks: &[split::Chunk<'_>],
) -> Vec<Diagnostic> {
    tabs.iter()
        .filter(|tab| {
            // The last document that starts on the tab's line or before it.
            let before = chunks.partition_point(|c| c.first_line <= tab.line);
            before
                .checked_sub(1)
                .is_none_or(|i| !lines_of(&chunks[i]).contains(&tab.line))
        })
        .map(|tab| {
            let index = chunks.partition_point(|c| c.first_line < tab.line);
            Diagnostic::error(
                codes::YAML_SYNTAX,
                Origin::new(path.clone(), index, Some(tab.line)),
                format!("invalid YAML: {}", tab.message()),
            )
            .with_column(Some(tab.column))
        })
        .collect()
}

/// An error for each `---` line after the first line that holds more than blanks and a comment
/// after the dashes (`--- {a: 1}`, `--- !!map`). YAML takes `--- value` for a document that
/// starts on the marker line, but kubectl and kustomize cut a stream at every line that starts
/// with `---` and refuse such a line as an invalid document separator. (On the first line
/// kustomize does not look for one, and kubectl does: the two disagree, and it is let pass. A
/// line such as `----` inside a document is not a marker, and the parser refuses it.) A marker
/// opens its document's text, so only the first line of each document is looked at.
fn separator_findings(path: &Arc<str>, chunks: &[split::Chunk<'_>]) -> Vec<Diagnostic> {
    chunks
        .iter()
        .enumerate()
        // Most markers are `---` alone on their line.
        .filter(|(_, c)| {
            c.first_line > 1 && c.text.starts_with("---") && !c.text[3..].starts_with('\n')
        })
        .filter_map(|(index, c)| {
            let first = c.text.lines().next()?.trim_end_matches('\r');
            (!is_separator(first)).then(|| {
                Diagnostic::error(
                    codes::YAML_SYNTAX,
                    Origin::new(path.clone(), index, Some(c.first_line)),
                    format!(
                        "invalid YAML: invalid document separator `{}`: kubectl and kustomize \
                         cut a stream at every line that starts with `---` and refuse one with \
                         anything but blanks or a comment after the dashes; put what follows on \
                         a line of its own",
                        crate::diagnostic::shortened(first)
                    ),
                )
            })
        })
        .collect()
}

/// A finding for each stretch of `path`'s text that follows a `...` marker with no `---` before
/// it: kubectl, kustomize and kpt never read it, so an object written there is never applied
/// (a warning). After a marker that ends no document, their YAML reader finds no document where
/// it expects one and they refuse the whole file (an error).
fn skipped_findings<'a>(
    path: &'a Arc<str>,
    chunks: &'a [split::Chunk<'_>],
    skipped: &'a [split::Skipped],
) -> impl Iterator<Item = Diagnostic> + 'a {
    skipped.iter().map(move |s| {
        let index = chunks.partition_point(|c| c.first_line < s.content_line);
        if s.ends_nothing {
            return Diagnostic::error(
                codes::YAML_SYNTAX,
                Origin::new(path.clone(), index, Some(s.marker_line)),
                format!(
                    "invalid YAML: this document end marker `...` ends no document, and text \
                     follows it (line {}) with no `---` between them: kubectl, kustomize and kpt \
                     refuse the file (\"did not find expected node content\"); put a `---` \
                     line in place of the `...`",
                    s.content_line
                ),
            );
        }
        Diagnostic::warning(
            codes::NOT_AN_OBJECT,
            Origin::new(path.clone(), index, Some(s.content_line)),
            format!(
                "this text is not read: it follows the document end marker `...` on line {} \
                 with no `---` between them, and kubectl, kustomize and kpt skip everything \
                 after a `...` up to the next `---` line; put a `---` line before it to make \
                 it a document, or delete it",
                s.marker_line
            ),
        )
    })
}

/// Whether `chunks` hold one document with content: a file of one document that is not a
/// Kubernetes object is most likely another tool's configuration (see [`exclude_hint`]).
fn only_document(chunks: &[split::Chunk<'_>]) -> bool {
    chunks.iter().filter(|c| c.content_line.is_some()).count() == 1
}

/// Parse document `index` of the file `path`: an object, or why it is not one. `alone` says
/// that it is the file's only document; `tab` is the first tab in it that kubectl, kustomize
/// and kpt refuse (see [`yaml::refused_tabs`]).
fn parse_chunk(
    path: &Arc<str>,
    index: usize,
    chunk: &split::Chunk<'_>,
    alone: bool,
    tab: Option<&yaml::RefusedTab>,
) -> Result<Object, Diagnostic> {
    // kubectl, kustomize and kpt read each piece of a stream after a `---` line on its own, and
    // their reader takes a byte order mark at the start of a line where a document may begin:
    // one that `cat` or a merge leaves after a `---` line reads as the start of a file does.
    let without_marks;
    let (text, parsed) = match yaml::parse_document(chunk.text) {
        Err(e) if e.message == yaml::BOM_INSIDE => match without_prefix_marks(chunk.text) {
            Some(text) => {
                without_marks = text;
                (without_marks.as_str(), yaml::parse_document(&without_marks))
            }
            None => (chunk.text, Err(e)),
        },
        parsed => (chunk.text, parsed),
    };
    // Those tools refuse the document at the tab, unless the parser finds something wrong
    // before it; at the same place, the tab's message says more.
    let parsed = match tab.map(|tab| tab.error(chunk.first_line)) {
        Some(tab) if parsed.as_ref().err().is_none_or(|e| !comes_before(e, &tab)) => Err(tab),
        _ => parsed,
    };
    match parsed {
        Ok(value) => {
            let origin = Origin::new(path.clone(), index, chunk.content_line);
            let object = Object::new(value, origin).with_source(Arc::from(text), chunk.first_line);
            match check_object(&object.value) {
                None => Ok(object),
                Some(problem) => {
                    let hint = if alone {
                        exclude_hint(path, &object.value)
                    } else {
                        String::new()
                    };
                    Err(problem
                        .diagnostic(&object, |message| message + &hint)
                        .may_define(chunk.text.as_bytes()))
                }
            }
        }
        Err(e) => {
            let line = e
                .line
                .map(|l| l + chunk.first_line - 1)
                .or(chunk.content_line);
            let diagnostic = Diagnostic::error(
                codes::YAML_SYNTAX,
                Origin::new(path.clone(), index, line),
                format!(
                    "invalid YAML: {}{}{}{}{}",
                    e.message,
                    unclosed_hint(chunk.text, e.line, chunk.first_line),
                    indent_hint(chunk.text, &e.message, e.line, chunk.first_line),
                    template_hint(chunk.text, e.line),
                    if walk::is_kustomization(Path::new(path.as_ref())) {
                        " (until this kustomization parses, the patches and other files it \
                         names cannot be told from resources, and are read as resources)"
                    } else {
                        ""
                    }
                ),
            )
            .with_column(e.column)
            .may_define(chunk.text.as_bytes());
            Err(match object_in_text(chunk.text) {
                Some(object) => diagnostic.with_object(object),
                None => diagnostic,
            })
        }
    }
}

/// Whether error `a` is at a place before error `b` (an error without a line before all; on
/// the same line, one without a column before the others).
fn comes_before(a: &yaml::YamlError, b: &yaml::YamlError) -> bool {
    let place = |e: &yaml::YamlError| (e.line.unwrap_or(0), e.column.unwrap_or(0));
    place(a) < place(b)
}

/// The object a document that does not parse says it is, read from its lines: its top-level
/// `apiVersion:` and `kind:`, and the `name:` of a block `metadata:` mapping, each a plain or
/// quoted scalar on its own line. `None` when any of the three cannot be read so.
fn object_in_text(text: &str) -> Option<crate::origin::ObjectRef> {
    let api_version = split::TopLevelKey::new("apiVersion").scalar(text)?;
    let kind = split::TopLevelKey::new("kind").scalar(text)?;
    let mut lines = text
        .lines()
        .skip_while(|l| l.trim_end() != "metadata:")
        .skip(1);
    let mut indent = None;
    let name = lines.find_map(|line| {
        let body = line.trim_start_matches(' ');
        let depth = line.len() - body.len();
        if body.is_empty() || body.starts_with('#') {
            return None;
        }
        if depth == 0 {
            return Some(None);
        }
        // Only the mapping's own keys, at the indentation of its first.
        if *indent.get_or_insert(depth) != depth {
            return None;
        }
        let value = split::line_scalar(body.strip_prefix("name:")?)
            .filter(|v| !v.starts_with(['%', '@', '`']) && !v.contains(['}', ']']));
        Some(value.map(str::to_string))
    })??;
    Some(crate::origin::ObjectRef {
        api_version: api_version.to_string(),
        kind: kind.to_string(),
        namespace: None,
        name,
    })
}

/// What to add to a YAML error that a flow collection opened on an earlier line and never
/// closed explains: the parser reports where it gave up, often the next key's line.
/// `first_line` is the file's line number of the text's first line.
fn unclosed_hint(text: &str, error_line: Option<u32>, first_line: u32) -> String {
    let Some(error_line) = error_line.and_then(|l| usize::try_from(l).ok()) else {
        return String::new();
    };
    match unclosed_flow(text, error_line) {
        Some((line, column, open)) => format!(
            "; the `{}` at line {}, column {column} is not closed before it",
            open as char,
            (line as u64) + u64::from(first_line) - 1
        ),
        None => String::new(),
    }
}

/// What the parser's words about a block mapping most often mean: a line indented where no
/// mapping above it is (`did not find expected key`), or a line indented under one that has a
/// value already, or a value holding `: ` (`mapping values are not allowed`). Empty when the
/// lines do not show one of those.
fn indent_hint(text: &str, message: &str, error_line: Option<u32>, first_line: u32) -> String {
    let Some(error_line) = error_line.and_then(|l| usize::try_from(l).ok()) else {
        return String::new();
    };
    let lines: Vec<&str> = text.lines().collect();
    let Some(at) = error_line.checked_sub(1).and_then(|i| lines.get(i)) else {
        return String::new();
    };
    let number = |i: usize| (i as u64) + u64::from(first_line);
    // The column a line's key starts at, after its indentation and any `- `.
    let column = |line: &str| {
        let rest = line.trim_start_matches(' ');
        let mut col = line.len() - rest.len();
        let mut rest = rest;
        while let Some(r) = rest.strip_prefix("- ") {
            let r2 = r.trim_start_matches(' ');
            col += 2 + (r.len() - r2.len());
            rest = r2;
        }
        col
    };
    let key_value = |line: &str| -> Option<(String, String)> {
        let body = line.trim_start_matches([' ', '-']);
        let (key, value) = body.split_once(": ")?;
        let value = value.split(" #").next().unwrap_or(value).trim();
        (!key.starts_with(['"', '\'', '{', '['])).then(|| (key.to_string(), value.to_string()))
    };
    if at.trim().is_empty() || at.trim_start().starts_with('#') {
        return String::new();
    }
    // The lines above in the same document, each with its key's column, and the columns of
    // the mappings still open at the error line. A block scalar's text is not YAML structure.
    let mut above: Vec<(usize, usize)> = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    let before = &lines[..error_line - 1];
    let mut i = 0;
    while i < before.len() {
        let line = before[i];
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed == "---" {
            i += 1;
            continue;
        }
        let col = column(line);
        while open.last().is_some_and(|&c| c > col) {
            open.pop();
        }
        if open.last() != Some(&col) {
            open.push(col);
        }
        above.push((i, col));
        i = if starts_block_scalar(line) {
            block_scalar_end(before, i)
        } else {
            i + 1
        };
    }
    let col = column(at);
    if message.contains("did not find expected key") {
        // A line deeper than the one before may start the mapping that one opens.
        let opens = above.last().is_some_and(|&(prev, prev_col)| {
            col > prev_col && key_value(lines[prev]).is_none_or(|(_, v)| v.is_empty())
        });
        // A list entry less indented than the entries of the list just above it: a new list,
        // where none can start, rather than another entry of that one.
        let indent = |line: &str| line.len() - line.trim_start_matches(' ').len();
        let is_entry = |line: &str| {
            let rest = &line[indent(line)..];
            rest.starts_with("- ") || rest.trim_end() == "-"
        };
        if is_entry(at) {
            let dash = indent(at);
            for &(i, _) in above.iter().rev() {
                let above_indent = indent(lines[i]);
                if above_indent <= dash {
                    break;
                }
                if is_entry(lines[i]) {
                    return format!(
                        "; line {} is a list entry (`- `) at column {}, but the entries of the \
                         list above it (line {}) are at column {}: indent it as they are",
                        number(error_line - 1),
                        dash + 1,
                        number(i),
                        above_indent + 1
                    );
                }
            }
        }
        if open.is_empty() || open.contains(&col) || opens {
            return String::new();
        }
        let columns: Vec<String> = open.iter().map(|c| (c + 1).to_string()).collect();
        let columns = match columns.split_last() {
            Some((last, [])) => format!("column {last}"),
            Some((last, rest)) => format!("columns {} and {last}", rest.join(", ")),
            None => return String::new(),
        };
        return format!(
            "; line {} starts at column {}, where no mapping above it does (they start at \
             {columns}): check its indentation against the lines above",
            number(error_line - 1),
            col + 1
        );
    }
    if message.contains("mapping values are not allowed") {
        if let Some(&(prev, prev_col)) = above.last()
            && col > prev_col
            && key_value(lines[prev]).is_some_and(|(_, v)| !v.is_empty())
        {
            return format!(
                "; line {} is indented deeper than line {} (`{}`), which has a value already: \
                 indent the two alike, or quote the value if line {} goes on with it",
                number(error_line - 1),
                number(prev),
                lines[prev].trim(),
                number(error_line - 1),
            );
        }
        if let Some((key, value)) = key_value(at)
            && (value.contains(": ") || value.ends_with(':'))
            && !value.starts_with(['"', '\'', '{', '['])
        {
            return format!(
                "; the value of `{key}` holds `: `, which YAML reads as another key: quote it \
                 (`{key}: \"{}\"`)",
                value.replace('\\', "\\\\").replace('"', "\\\"")
            );
        }
    }
    String::new()
}

/// The `[` or `{` (1-based line and column within `text`) that starts a flow collection as a
/// value on a line before `error_line` and is still open when that line is reached. Only a
/// bracket that begins a value (at the start of a line, after `- `, or after `: `) counts, so
/// brackets inside plain or block scalars are not taken for one.
fn unclosed_flow(text: &str, error_line: usize) -> Option<(usize, usize, u8)> {
    let lines: Vec<&str> = text.lines().take(error_line.saturating_sub(1)).collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].as_bytes();
        if starts_block_scalar(lines[i]) {
            i = block_scalar_end(&lines, i);
            continue;
        }
        let Some(start) = flow_start(line) else {
            i += 1;
            continue;
        };
        // Follow the collection until it closes, across lines.
        let mut stack: Vec<u8> = Vec::new();
        let mut quote: Option<u8> = None;
        let (mut row, mut col) = (i, start);
        let closed_at = loop {
            let bytes = lines[row].as_bytes();
            while col < bytes.len() {
                let b = bytes[col];
                match quote {
                    Some(q) if b == q => quote = None,
                    Some(_) => {}
                    None => match b {
                        b'"' | b'\'' => quote = Some(b),
                        b'#' if col == 0 || bytes[col - 1].is_ascii_whitespace() => break,
                        b'[' | b'{' => stack.push(b),
                        b']' | b'}' => {
                            stack.pop();
                            if stack.is_empty() {
                                break;
                            }
                        }
                        _ => {}
                    },
                }
                col += 1;
            }
            if stack.is_empty() {
                break Some(row);
            }
            row += 1;
            col = 0;
            if row >= lines.len() {
                break None;
            }
        };
        match closed_at {
            Some(row) => i = row + 1,
            None => return Some((i + 1, start + 1, line[start])),
        }
    }
    None
}

/// The index of the first line after the block scalar that `lines[start]` starts: its text is
/// the lines indented deeper than that one, and blank ones.
fn block_scalar_end(lines: &[&str], start: usize) -> usize {
    let indent = |line: &str| line.len() - line.trim_start_matches(' ').len();
    let own = indent(lines[start]);
    let mut i = start + 1;
    while i < lines.len() && (lines[i].trim().is_empty() || indent(lines[i]) > own) {
        i += 1;
    }
    i
}

/// Whether `line` ends with a block scalar's header (`|`, `>-`, `|2+`, ...) as its value.
fn starts_block_scalar(line: &str) -> bool {
    let value = line.split(" #").next().unwrap_or(line).trim_end();
    let header = value.trim_end_matches(|c: char| c.is_ascii_digit() || c == '-' || c == '+');
    let Some(before) = header
        .strip_suffix('|')
        .or_else(|| header.strip_suffix('>'))
    else {
        return false;
    };
    let before = before.trim_end();
    before.is_empty() || before.ends_with(':') || before.ends_with('-')
}

/// Where a flow collection begins a value on `line`: at the start (after indentation and
/// `- `), or right after the first `: ` outside quotes.
fn flow_start(line: &[u8]) -> Option<usize> {
    let mut at = line.iter().position(|b| *b != b' ')?;
    while line.get(at) == Some(&b'-') && line.get(at + 1) == Some(&b' ') {
        at += 2;
        while line.get(at) == Some(&b' ') {
            at += 1;
        }
    }
    if matches!(line.get(at), Some(b'[' | b'{')) {
        return Some(at);
    }
    if matches!(line.get(at), Some(b'"' | b'\'' | b'#' | b'|' | b'>')) {
        return None;
    }
    let colon = line[at..].windows(2).position(|w| w == b": ")? + at;
    let mut value = colon + 2;
    while line.get(value) == Some(&b' ') {
        value += 1;
    }
    matches!(line.get(value), Some(b'[' | b'{')).then_some(value)
}

/// What to add to a YAML error when the document holds template markers: a Helm chart's
/// `templates/` or a Jinja or Go template is YAML only once rendered.
///
/// kvrender's own catalog documents hold templates as values, in YAML that parses once they
/// are quoted: when the line `line` (1-based, of `text`) holds a template that is not, say so.
fn template_hint(text: &str, line: Option<u32>) -> &'static str {
    let catalog = split::TopLevelKey::new("apiVersion")
        .scalar(text)
        .is_some_and(|api| api.starts_with("kvrender.io/"));
    if catalog {
        let unquoted = line
            .and_then(|l| text.lines().nth(usize::try_from(l.checked_sub(1)?).ok()?))
            .and_then(|l| Some((l, l.find("{{").or_else(|| l.find("{%"))?)))
            .is_some_and(|(l, at)| !l[..at].trim_end().ends_with(['"', '\'', '|', '>']));
        return if unquoted {
            "; a template must be quoted to be a YAML value (`guest: \"{{ size.cpu }}\"`)"
        } else {
            ""
        };
    }
    if text.contains("{{") || text.contains("{%") {
        "; the document holds template markers (`{{`, `{%`): kvrender reads rendered \
         manifests, so render it first and give kvrender the result (for a Helm chart, \
         `helm template ... | kvrender validate -`)"
    } else {
        ""
    }
}

/// One document of the inputs, in input order: parsed, or kept as text to parse when needed.
///
/// The parsed object and the problem are boxed: a stream of thousands of VMs is mostly
/// deferred documents, and a list of them should cost their size, not that of the largest
/// variant (48 bytes each instead of 208).
#[derive(Debug)]
pub enum Document<'a> {
    /// A parsed object.
    Object(Box<Object>),
    /// A document that does not parse or is not an object.
    Problem(Box<Diagnostic>),
    /// A document left unparsed (see [`documents`]).
    Deferred(Deferred<'a>),
}

/// The text of a document that has not been parsed yet.
#[derive(Debug)]
pub struct Deferred<'a> {
    path: &'a Arc<str>,
    index: usize,
    chunk: split::Chunk<'a>,
}

impl<'a> Deferred<'a> {
    /// Parse the document now, exactly as [`parse_sources`] would have.
    pub fn parse(&self) -> Result<Object, Diagnostic> {
        // A deferred document names a kind to defer, so it is no other tool's configuration.
        // A document with a refused tab is never left as text (see `file_documents`).
        parse_chunk(self.path, self.index, &self.chunk, false, None)
    }

    /// The path of the file the document is in.
    pub fn path(&self) -> &'a str {
        self.path
    }

    /// Where the document is: what the origin of the object it parses to will be.
    pub fn origin(&self) -> Origin {
        Origin::new(self.path.clone(), self.index, self.chunk.content_line)
    }

    /// The file line of the field at `steps` (or of its deepest written parent), found in the
    /// document's text, as [`Object::field_line`] finds it in the object it parses to.
    pub fn field_line(&self, steps: &[locate::Step<'_>]) -> Option<u32> {
        locate::field_line_of(self.chunk.text, self.chunk.first_line, steps)
    }
}

/// Split every source into documents, in input order, and parse them in parallel, except the
/// YAML documents for which `defer(apiVersion, kind)` (read from the document's top-level lines
/// without parsing) says yes: those are left as text, so that a caller can parse, use and drop
/// them one at a time instead of holding every parsed tree at once.
///
/// The top-level line scan ([`split::TopLevelKey::scalar`]) reads only lines that are the
/// document's own keys, so a deferred document parses to the kind they say or not at all.
/// Still, a deferred document parses to whatever its text says, which a caller must check.
pub fn documents<'a>(
    sources: &'a [Source],
    defer: &(dyn Fn(&str, &str) -> bool + Sync),
) -> Vec<Document<'a>> {
    let mut per_file: Vec<Vec<Document<'a>>> = sources
        .par_iter()
        .map(|s| file_documents(s, defer))
        .collect();
    if per_file.len() == 1 {
        return per_file.pop().unwrap_or_default();
    }
    per_file.into_iter().flatten().collect()
}

fn file_documents<'a>(
    source: &'a Source,
    defer: &(dyn Fn(&str, &str) -> bool + Sync),
) -> Vec<Document<'a>> {
    let text = match std::str::from_utf8(&source.bytes) {
        Ok(text) if !source.path.ends_with(".json") => text,
        _ => {
            let Loaded {
                objects,
                diagnostics,
            } = parse_bytes(&source.path, &source.bytes);
            return objects
                .into_iter()
                .map(|o| Document::Object(Box::new(o)))
                .chain(
                    diagnostics
                        .into_iter()
                        .map(|d| Document::Problem(Box::new(d))),
                )
                .collect();
        }
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if walk::is_kustomization(Path::new(source.path.as_ref()))
        && let Some(loaded) = kustomization_findings(&source.path, text)
    {
        return loaded
            .diagnostics
            .into_iter()
            .map(|d| Document::Problem(Box::new(d)))
            .collect();
    }
    if let Some(refused) = unicode_line_break(&source.path, text) {
        return vec![Document::Problem(Box::new(refused))];
    }
    let (api_version, kind) = (
        split::TopLevelKey::new("apiVersion"),
        split::TopLevelKey::new("kind"),
    );
    let (chunks, skipped) = split::split_noting_skipped(text);
    let alone = only_document(&chunks);
    let tabs = yaml::refused_tabs(text);
    let findings: Vec<Document<'a>> = skipped_findings(&source.path, &chunks, &skipped)
        .chain(separator_findings(&source.path, &chunks))
        .chain(prefix_findings(&source.path, text, &chunks))
        .chain(tab_findings(&source.path, &tabs, &chunks))
        .map(|d| Document::Problem(Box::new(d)))
        .collect();
    let mut documents: Vec<Document<'a>> = chunks
        .into_par_iter()
        .enumerate()
        .flat_map_iter(|(index, chunk)| {
            let scanned = api_version.scalar(chunk.text).zip(kind.scalar(chunk.text));
            let tab = tab_in(&tabs, &chunk);
            let one = if tab.is_none() && scanned.is_some_and(|(api, kind)| defer(api, kind)) {
                Document::Deferred(Deferred {
                    path: &source.path,
                    index,
                    chunk,
                })
            } else {
                match parse_chunk(&source.path, index, &chunk, alone, tab) {
                    Ok(obj) if is_list(&obj) => {
                        return Either::Right(inline_lists(obj).into_iter().map(|r| match r {
                            Ok(obj) => Document::Object(Box::new(obj)),
                            Err(d) => Document::Problem(Box::new(d)),
                        }));
                    }
                    Ok(obj) => Document::Object(Box::new(obj)),
                    Err(d) => Document::Problem(Box::new(d)),
                }
            };
            Either::Left(std::iter::once(one))
        })
        .collect();
    documents.extend(findings);
    documents
}

/// Whether `obj` is a list of objects that kustomize reads as its items: a kind ending in
/// `List` (`List`, `VirtualMachineList`, ... as `kubectl get -o yaml` prints them) with an
/// `items` field. An object of such a kind without `items` is an object like any other.
pub fn is_list(obj: &Object) -> bool {
    obj.kind_str().ends_with("List") && obj.value.field("items").is_some()
}

/// The objects `obj` stands for: its items, each in its own right (and so on down, for a list
/// of lists), when it is a list ([`is_list`]); else `obj` itself. An item that is no object
/// is a finding at its line; `items: null` is an empty list.
fn inline_lists(obj: Object) -> Vec<Result<Object, Diagnostic>> {
    if !is_list(&obj) {
        return vec![Ok(obj)];
    }
    let mut out = Vec::new();
    inline_into(obj, &mut out, 0);
    out
}

/// Lists nested deeper than this are refused rather than followed.
const MAX_LIST_DEPTH: usize = 16;

fn inline_into(mut list: Object, out: &mut Vec<Result<Object, Diagnostic>>, depth: usize) {
    let Value::Object(map) = &mut list.value else {
        return;
    };
    let items = match map.get_mut("items").map(std::mem::take) {
        Some(Value::Array(items)) => items,
        None | Some(Value::Null) => return,
        Some(_) => {
            out.push(Err(Diagnostic::error(
                codes::NOT_AN_OBJECT,
                list.field_origin("items"),
                format!("`items` of a {} must be a list", list.kind_str()),
            )));
            return;
        }
    };
    // Each item's own entry of the list's text, found in one pass, becomes its source.
    let field = if list.entry { "[0].items" } else { "items" };
    // A list written as JSON has no `- ` entries: each item's own object is its source.
    let entries = list.source.as_ref().map(|(text, first)| {
        let yaml = locate::sequence_items(text, field);
        let json = (yaml.is_empty() && !list.entry)
            .then(|| locate::json_sequence_items(text, "items"))
            .filter(|json| json.len() == items.len());
        match json {
            Some(json) => (json, true, text, *first),
            None => (yaml, false, text, *first),
        }
    });
    for (i, item) in items.into_iter().enumerate() {
        let entry = entries.as_ref().and_then(|(spans, json, text, first)| {
            let (range, line) = spans.get(i)?;
            Some((
                Arc::<str>::from(&text[range.clone()]),
                line + first - 1,
                *json,
            ))
        });
        let line = entry
            .as_ref()
            .map(|(_, line, _)| *line)
            .or(list.origin.line);
        let origin = Origin::new(list.origin.path.clone(), list.origin.index, line);
        let mut obj = Object::new(item, origin);
        match entry {
            Some((text, line, true)) => obj = obj.with_source(text, line),
            Some((text, line, false)) => obj = obj.with_entry_source(text, line),
            None => {}
        }
        if let Some(problem) = check_object(&obj.value) {
            out.push(Err(problem.diagnostic(&obj, |message| {
                format!("`items[{i}]` of a {}: {message}", list.kind_str())
            })));
            continue;
        }
        if !is_list(&obj) {
            out.push(Ok(obj));
        } else if depth + 1 >= MAX_LIST_DEPTH {
            out.push(Err(Diagnostic::error(
                codes::NOT_AN_OBJECT,
                obj.origin.clone(),
                format!("lists nested more than {MAX_LIST_DEPTH} deep are not read"),
            )));
        } else {
            inline_into(obj, out, depth + 1);
        }
    }
}

/// What to add when the only document of a file is nothing like a Kubernetes object (a list,
/// a scalar, or a mapping with neither `apiVersion` nor `kind`): most often the file is
/// another tool's configuration, such as an Ansible playbook or `mkdocs.yml`, that a walk
/// found.
fn exclude_hint(path: &str, value: &Value) -> String {
    let foreign = match value {
        Value::Object(map) => !map.contains_key("apiVersion") && !map.contains_key("kind"),
        Value::Null => false,
        _ => true,
    };
    if !foreign || path == "-" {
        return String::new();
    }
    let name = Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| !n.chars().any(char::is_control))
        .map(variables::shell_word);
    match name {
        Some(name) => format!(
            "; if the file is another tool's configuration, leave it out with `--exclude \
             {name}` (or a folder or glob: see `--help`)"
        ),
        None => "; if the file is another tool's configuration, leave it out with `--exclude`"
            .to_string(),
    }
}

/// Why a parsed document is not a Kubernetes object: what to say, and the top-level field
/// at fault, when there is one.
#[derive(Debug)]
struct NotAnObject {
    message: String,
    field: Option<&'static str>,
}

impl NotAnObject {
    fn new(message: String, field: Option<&'static str>) -> Self {
        NotAnObject { message, field }
    }

    /// The finding about `object`, the document that is not an object, with the message
    /// `word` makes of ours: at the line of the field at fault (the document's first line
    /// without one), naming the object when its kind and name can be read
    /// ([`readable_ref`]).
    fn diagnostic(self, object: &Object, word: impl FnOnce(String) -> String) -> Diagnostic {
        let origin = match self.field {
            Some(field) => object.field_origin(field),
            None => object.origin.clone(),
        };
        let diagnostic = Diagnostic::error(codes::NOT_AN_OBJECT, origin, word(self.message));
        match readable_ref(&object.value) {
            Some(object) => diagnostic.with_object(object),
            None => diagnostic,
        }
    }
}

/// Why a parsed document is not a Kubernetes object, if it is not.
fn check_object(value: &Value) -> Option<NotAnObject> {
    let Some(map) = value.as_object() else {
        let what = match value {
            Value::Array(_) => "a list",
            Value::Null => "empty",
            _ => "a scalar",
        };
        return Some(NotAnObject::new(
            format!(
                "the document is {what}, not a Kubernetes object (a mapping with `apiVersion` \
                 and `kind`)"
            ),
            None,
        ));
    };
    for key in ["apiVersion", "kind"] {
        match map.get(key) {
            Some(Value::String(s)) if !s.is_empty() => {}
            None => {
                return Some(NotAnObject::new(
                    format!("the document has no `{key}`, so it is not a Kubernetes object"),
                    None,
                ));
            }
            Some(Value::String(_)) => {
                return Some(NotAnObject::new(
                    format!("the document has no `{key}`, so it is not a Kubernetes object"),
                    Some(key),
                ));
            }
            Some(_) => {
                return Some(NotAnObject::new(
                    format!("`{key}` must be a string"),
                    Some(key),
                ));
            }
        }
    }
    if let Some(meta) = map.get("metadata")
        && !meta.is_object()
        && !meta.is_null()
    {
        return Some(NotAnObject::new(
            "`metadata` must be a mapping".to_string(),
            Some("metadata"),
        ));
    }
    None
}

/// The identity of a document that is not an object, when it says it plainly: a `kind` and
/// a `metadata.name` that are non-empty strings, and a `metadata.namespace` that is one or
/// is not set. Nothing said rather than something guessed: any of them of another type, and
/// the document is not named. An `apiVersion` that is not a string is left empty.
fn readable_ref(value: &Value) -> Option<crate::origin::ObjectRef> {
    let text = |v: &Value| v.as_str().filter(|s| !s.is_empty()).map(str::to_string);
    let kind = text(value.get("kind")?)?;
    let meta = value.get("metadata")?.as_object()?;
    let name = text(meta.get("name")?)?;
    let namespace = match meta.get("namespace") {
        None | Some(Value::Null) => None,
        Some(Value::String(ns)) if ns.is_empty() => None,
        Some(ns) => Some(text(ns)?),
    };
    let api_version = value
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    // As in `Object::object_ref`: no namespace for a cluster-scoped kind.
    let namespace =
        namespace.filter(|_| !crate::model::scope::is_cluster_scoped(&api_version, &kind));
    Some(crate::origin::ObjectRef {
        api_version,
        kind,
        namespace,
        name,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn what_holds_nothing() {
        for nothing in [
            "",
            " \n\n",
            "---\n",
            "~\n",
            "# c\n",
            "...\n",
            "\u{feff}",
            "---\n---\n# c\n...\n",
            "--- # c\n",
            "--- ~\n",
            "null\n",
        ] {
            assert!(super::holds_nothing(nothing.as_bytes()), "{nothing:?}");
        }
        for something in [
            "a: 1\n",
            "---\nkind: X\n",
            "--- {}\n",
            "[]\n",
            "---x\n",
            "'~'\n",
        ] {
            assert!(!super::holds_nothing(something.as_bytes()), "{something:?}");
        }
    }

    use super::*;

    /// Marks are taken from the lines before a document's first content only, and only when
    /// that leaves none.
    #[test]
    fn byte_order_marks_before_the_first_content_are_left_out() {
        let b = BOM;
        assert_eq!(
            without_prefix_marks(&format!("---\n{b}# c\n\n{b}a: 1\nb: 2\n")).as_deref(),
            Some("---\n# c\n\na: 1\nb: 2\n")
        );
        assert_eq!(
            without_prefix_marks(&format!("{b}--- # c\r\n{b}a: 1\n")).as_deref(),
            Some("--- # c\r\na: 1\n")
        );
        assert_eq!(without_prefix_marks(&format!("a: 1\n{b}b: 2\n")), None);
        assert_eq!(without_prefix_marks(&format!("{b}a: |\n  {b}x\n")), None);
        assert_eq!(without_prefix_marks("a: 1\n"), None);
        assert_eq!(
            without_prefix_marks(&format!("--- {{a: 1}}\n{b}b: 2\n")),
            None
        );
    }

    #[test]
    fn separators_and_last_lines_are_read_as_the_tools_cut_a_stream() {
        for line in ["---", "--- ", "---\t# c", "--- # c", "---#c"] {
            assert!(is_separator(line), "{line:?}");
        }
        for line in ["--- a", "----", "-- -", "", "\u{feff}---"] {
            assert!(!is_separator(line), "{line:?}");
        }
        assert_eq!(last_line("a\n---\r\n"), Some("---"));
        assert_eq!(last_line("---\n"), Some("---"));
        assert_eq!(last_line("a\nb"), None);
        assert_eq!(last_line(""), None);
    }

    /// An empty `.json` file, or one of `null`, holds no object, as the same in a YAML file
    /// does: nothing to report (a file named alone gets a note from the reader). A list is
    /// still no object.
    #[test]
    fn an_empty_or_null_json_file_holds_no_object() {
        let path: Arc<str> = Arc::from("e.json");
        for text in ["", " \n", "null", " null\n", "\u{feff}"] {
            let loaded = parse_text(&path, text);
            assert!(loaded.objects.is_empty(), "{text:?}");
            assert!(
                loaded.diagnostics.is_empty(),
                "{text:?}: {:?}",
                loaded.diagnostics
            );
        }
        let loaded = parse_text(&path, "[]");
        assert_eq!(loaded.diagnostics.len(), 1);
        assert_eq!(loaded.diagnostics[0].code, codes::NOT_AN_OBJECT);
        let loaded = parse_text(&path, "nul");
        assert_eq!(loaded.diagnostics[0].code, codes::YAML_SYNTAX);
    }

    #[test]
    fn a_json_error_at_the_start_of_a_line_is_at_the_end_of_the_one_before() {
        let text = "{\"a\": {\n  \"b\": 1\n\n";
        let e = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
        assert_eq!(e.column(), 0, "the case this is about");
        assert_eq!(json_position(text, e.line(), e.column()), (2, Some(9)));
        assert_eq!(json_position("\n \n", 3, 0), (1, None));
        assert_eq!(json_position("", 1, 0), (1, None));
        assert_eq!(json_position("{x}", 1, 2), (1, Some(2)));
    }

    #[test]
    fn a_flow_collection_left_open_on_an_earlier_line_is_found() {
        let text = "a:\n  name: [fedora\n  template:\n    spec: {}\n";
        assert_eq!(unclosed_flow(text, 3), Some((2, 9, b'[')));
        assert_eq!(
            unclosed_hint(text, Some(3), 10),
            "; the `[` at line 11, column 9 is not closed before it"
        );
        // Closed on a later line, in a list item, with brackets in quotes and comments.
        let text = "a:\n  - [1,\n     2]\n  - {x: \"[\", y: '{'} # [\nb: 1\nc: [x\n";
        assert_eq!(unclosed_flow(text, 6), None);
        assert_eq!(unclosed_flow(text, 7), Some((6, 4, b'[')));
        // Brackets inside a plain or block scalar do not begin a collection.
        let text = "a: x [y\nb: |\n  {z\nc: 1\n";
        assert_eq!(unclosed_flow(text, 4), None);
        assert_eq!(unclosed_hint(text, None, 1), "");
    }

    #[test]
    fn a_mis_indented_line_is_named_with_the_columns_above_it() {
        const KEY: &str = "while parsing a block mapping, did not find expected key";
        const VALUE: &str = "mapping values are not allowed in this context";
        // One column short of its siblings: the open mappings are at 1, 3 and 5.
        let text = "a: 1\nspec:\n  it:\n    name: x\n   pref:\n";
        assert_eq!(
            indent_hint(text, KEY, Some(5), 10),
            "; line 14 starts at column 4, where no mapping above it does (they start at \
             columns 1, 3 and 5): check its indentation against the lines above"
        );
        // A list entry slipped left of the entries above it: named with theirs, not with the
        // column of its key (which an open mapping may well have).
        let text = "spec:\n  variants:\n    - suffix: a\n      x: 1\n  - suffix: b\n  sizes: []\n";
        assert_eq!(
            indent_hint(text, KEY, Some(5), 1),
            "; line 5 is a list entry (`- `) at column 3, but the entries of the list above it \
             (line 3) are at column 5: indent it as they are"
        );
        // At a column that is open, the parser's words mean something else: no hint; nor
        // for a block scalar's text, which is not structure.
        assert_eq!(indent_hint(text, KEY, Some(4), 1), "");
        let text = "a: |\n   x\n b: 1\n";
        assert_eq!(
            indent_hint(text, KEY, Some(3), 1),
            "; line 3 starts at column 2, where no mapping above it does (they start at \
             column 1): check its indentation against the lines above"
        );
        // Under a key that has a value already; a value holding `: `, in a list item too.
        let text = "metadata:\n  name: y\n    namespace: z\n";
        assert_eq!(
            indent_hint(text, VALUE, Some(3), 1),
            "; line 3 is indented deeper than line 2 (`name: y`), which has a value already: \
             indent the two alike, or quote the value if line 3 goes on with it"
        );
        let text = "data:\n  - cmd: echo \"a\": b # c\n";
        assert_eq!(
            indent_hint(text, VALUE, Some(2), 1),
            "; the value of `cmd` holds `: `, which YAML reads as another key: quote it \
             (`cmd: \"echo \\\"a\\\": b\"`)"
        );
        // Nothing to say: a quoted value, a blank line, a line past the end, no line.
        assert_eq!(indent_hint("a: 'b: c'\n", VALUE, Some(1), 1), "");
        assert_eq!(indent_hint("a: 1\n\n", KEY, Some(2), 1), "");
        assert_eq!(indent_hint("a: 1\n", KEY, Some(9), 1), "");
        assert_eq!(indent_hint("a: 1\n", KEY, None, 1), "");
        assert_eq!(indent_hint("a: 1\n", KEY, Some(0), 1), "");
    }

    #[test]
    fn a_stream_is_read_up_to_its_limit() {
        let read = |n: u64| read_stream(std::io::repeat(b'a').take(n), Vec::new(), 4 << 20);
        assert_eq!(read(4 << 20).unwrap().len(), 4 << 20);
        let err = read((4 << 20) + 1).unwrap_err();
        assert!(
            err.to_string().starts_with("more than 4 MiB from a stream"),
            "{err}"
        );
        // A stream that never ends stops at the limit.
        assert!(read_stream(std::io::repeat(0), Vec::new(), 1 << 20).is_err());
    }

    /// Windows PowerShell 5.1 writes `>` redirections as UTF-16 with a byte order mark;
    /// kustomize and kpt read such a file, and so does kvrender.
    #[test]
    fn utf16_with_a_byte_order_mark_is_read_as_its_text() {
        let text = "\u{feff}apiVersion: v1\nkind: A # é, 😀\n";
        let le: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(utf16_as_utf8(le), text.as_bytes());
        assert_eq!(utf16_as_utf8(be.clone()), text.as_bytes());
        // No mark, an odd length, an unpaired surrogate, UTF-32LE's mark: left as they are.
        for bytes in [
            be[2..].to_vec(),
            be[..be.len() - 1].to_vec(),
            vec![0xff, 0xfe, 0x00, 0xd8, 0x41, 0x00],
            vec![0xff, 0xfe, 0x00, 0x00, 0x41, 0x00, 0x00, 0x00],
            b"a: 1\n".to_vec(),
        ] {
            assert_eq!(utf16_as_utf8(bytes.clone()), bytes);
        }
    }

    #[test]
    fn lone_carriage_returns_become_line_feeds() {
        let mut bytes = b"a: 1\rb: 2\r\nc: 3\n\rd\r".to_vec();
        line_breaks_as_lf(&mut bytes);
        assert_eq!(bytes, b"a: 1\nb: 2\r\nc: 3\n\nd\n");
    }

    #[test]
    fn files_small_empty_and_large_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let large_len = usize::try_from(PARALLEL_READ_FROM).unwrap() + 12_345;
        let large: Vec<u8> = (0..large_len).map(|i| (i % 251) as u8).collect();
        for (name, bytes) in [
            ("small.yaml", b"a: 1\n".to_vec()),
            ("empty.yaml", Vec::new()),
            ("large.yaml", large),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, &bytes).unwrap();
            assert_eq!(read_file(&path).unwrap().0, bytes, "{name}");
        }
        assert!(read_file(&dir.path().join("missing.yaml")).is_err());
    }

    fn load(text: &str) -> Loaded {
        parse_text(&Arc::from("t.yaml"), text)
    }

    #[test]
    fn documents_keep_order_index_and_line() {
        let l = load("apiVersion: v1\nkind: A\n---\n\napiVersion: v1\nkind: B\n");
        assert_eq!(l.objects.len(), 2);
        assert_eq!(l.objects[1].kind_str(), "B");
        assert_eq!(l.objects[1].origin.index, 1);
        assert_eq!(l.objects[1].origin.line, Some(5));
    }

    #[test]
    fn syntax_error_line_is_relative_to_the_file() {
        let l = load("apiVersion: v1\nkind: A\n---\napiVersion: v1\nkind: [\n");
        assert_eq!(l.objects.len(), 1);
        let d = &l.diagnostics[0];
        assert_eq!(d.code, codes::YAML_SYNTAX);
        assert_eq!(d.origin.line, Some(5));
        assert_eq!(d.origin.index, 1);
    }

    #[test]
    fn a_template_that_is_not_yaml_yet_is_named_as_one() {
        let helm = load("apiVersion: v1\nkind: A\nmetadata:\n  name: {{ .Values.name }}\n");
        let message = &helm.diagnostics[0].message;
        assert!(message.contains("template markers"), "{message}");
        let jinja = load("kind: A\n{% if x %}\nb: 1\n{% endif %}\n");
        let message = &jinja.diagnostics[0].message;
        assert!(message.contains("template markers"), "{message}");
        let plain = load("kind: [\n");
        let message = &plain.diagnostics[0].message;
        assert!(!message.contains("template"), "{message}");
    }

    #[test]
    fn lists_and_scalars_are_not_objects() {
        let l = load("- a\n---\nhello\n---\nkind: X\n");
        assert!(l.objects.is_empty());
        assert_eq!(l.diagnostics.len(), 3);
        assert!(l.diagnostics.iter().all(|d| d.code == codes::NOT_AN_OBJECT));
    }

    #[test]
    fn a_field_of_the_wrong_type_is_reported_at_its_line() {
        let found = |l: &Loaded| {
            l.diagnostics
                .iter()
                .map(|d| {
                    let object = d.object.as_ref().map(ToString::to_string);
                    (d.origin.line, object, d.message.clone())
                })
                .collect::<Vec<_>>()
        };
        let l = load(
            "# c\napiVersion: v1\nmetadata:\n  name: a\n  namespace: ns\nkind: [A]\n---\n\
             kind: A\nmetadata: {name: b}\napiVersion: 5\n---\n\
             kind: A\napiVersion: v1\nmetadata: []\n",
        );
        assert_eq!(
            found(&l),
            [
                (Some(6), None, "`kind` must be a string".to_string()),
                (
                    Some(10),
                    Some("A/b".to_string()),
                    "`apiVersion` must be a string".to_string()
                ),
                (Some(14), None, "`metadata` must be a mapping".to_string()),
            ]
        );
        let l = parse_text(
            &Arc::from("t.json"),
            "{\"apiVersion\": \"v1\",\n \"metadata\": {\"name\": \"j\", \"namespace\": \"ns\"},\n \
             \"kind\": 5}\n",
        );
        assert_eq!(
            found(&l),
            [(Some(3), None, "`kind` must be a string".to_string())]
        );
        let l = parse_text(
            &Arc::from("t.json"),
            "{\"kind\": \"A\",\n \"metadata\": {\"name\": \"j\", \"namespace\": \"ns\"},\n \
             \"apiVersion\": null}\n",
        );
        assert_eq!(
            found(&l),
            [(
                Some(3),
                Some("A/ns/j".to_string()),
                "`apiVersion` must be a string".to_string()
            )]
        );
        // A namespace that is not a string: the object is not named at all.
        let l = load("kind: A\nmetadata: {name: n, namespace: 7}\napiVersion: 5\n");
        assert_eq!(
            found(&l),
            [(Some(3), None, "`apiVersion` must be a string".to_string())]
        );
    }

    #[test]
    fn duplicate_keys_are_an_error() {
        let l = load("apiVersion: v1\nkind: A\nkind: B\n");
        assert_eq!(l.diagnostics.len(), 1);
        assert!(l.diagnostics[0].message.contains("duplicate"));
        assert_eq!(l.diagnostics[0].origin.line, Some(3));
    }

    #[test]
    fn non_utf8_is_a_diagnostic() {
        let l = parse_bytes(&Arc::from("x.yaml"), b"a: 1\nb: \xff\n");
        assert_eq!(l.diagnostics[0].origin.line, Some(2));
    }

    #[test]
    fn a_document_that_does_not_parse_is_named_from_its_lines() {
        let named = |text: &str| object_in_text(text).map(|o| o.to_string());
        let head = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n";
        assert_eq!(
            named(&format!(
                "{head}metadata:\n  labels:\n    name: x\n  name: 'vm-1' # c\nspec: [\n"
            )),
            Some("VirtualMachine/vm-1".to_string())
        );
        assert_eq!(
            named(&format!("{head}metadata:\n    name: \"vm\"\n")),
            Some("VirtualMachine/vm".to_string())
        );
        // Nothing said rather than something guessed.
        for text in [
            format!("{head}metadata: {{name: vm}}\n"),
            format!("{head}metadata:\n  labels: {{}}\nname: vm\n"),
            format!("{head}metadata:\n  name: {{{{ .Values.name }}}}\n"),
            format!("{head}metadata:\n  name: *anchor\n"),
            format!("{head}kind: Other\nmetadata:\n  name: vm\n"),
            "kind: VirtualMachine\nmetadata:\n  name: vm\n".to_string(),
        ] {
            assert_eq!(named(&text), None, "{text}");
        }
        // kvrender's own catalog documents hold templates: no advice to render them first.
        let l = load(
            "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata:\n  name: t\n\
             spec:\n  sizes: [[small, 1e400, 1Gi]]\n  template: {a: '{{ size.cpu }}'}\n",
        );
        assert_eq!(
            l.diagnostics[0].message,
            "invalid YAML: non-finite float `1e400`"
        );
        // A template left unquoted, on the line the error names, is told to be quoted.
        let l = load(
            "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata:\n  name: t\n\
             spec:\n  sizes: [[small, 1, 1Gi]]\n  template:\n    spec:\n      memory:\n        \
             guest: {{ size.memory }}\n",
        );
        assert_eq!(l.diagnostics[0].origin.line, Some(10));
        assert!(
            l.diagnostics[0].message.ends_with(
                "; a template must be quoted to be a YAML value (`guest: \"{{ size.cpu }}\"`)"
            ),
            "{}",
            l.diagnostics[0].message
        );
        // In a finding, after the file and line.
        let l = load("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata: [\n");
        assert_eq!(
            l.diagnostics[0]
                .object
                .as_ref()
                .map(ToString::to_string)
                .as_deref(),
            Some("ConfigMap/cm")
        );
    }

    #[test]
    fn deferred_documents_parse_as_the_eager_loader_would() {
        let text = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: a\n---\n\
                    apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachinePreference\n\
                    metadata: {name: p}\n---\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\n\
                    metadata: [\n---\n- a\n...\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\n";
        let sources = [Source {
            path: Arc::from("s.yaml"),
            bytes: text.as_bytes().to_vec(),
        }];
        let eager = parse_sources(&sources);
        let docs = documents(&sources, &|_, kind| kind == "VirtualMachine");
        assert_eq!(docs.len(), 5);
        assert!(matches!(docs[0], Document::Deferred(_)));
        assert!(matches!(docs[1], Document::Object(_)));
        let mut objects = Vec::new();
        let mut diagnostics = Vec::new();
        for doc in docs {
            match doc {
                Document::Object(o) => objects.push(*o),
                Document::Problem(d) => diagnostics.push(*d),
                Document::Deferred(d) => match d.parse() {
                    Ok(o) => objects.push(o),
                    Err(d) => diagnostics.push(d),
                },
            }
        }
        assert_eq!(objects, eager.objects);
        assert_eq!(diagnostics, eager.diagnostics);
        assert_eq!(diagnostics.len(), 3);
    }

    /// A line after the first that starts with `---` and holds more than a comment is an
    /// invalid separator to kubectl and kustomize; on the first line, or with a comment after
    /// the dashes, it is not.
    #[test]
    fn a_separator_line_with_content_after_the_dashes_is_an_error() {
        let separators = |text: &str| -> Vec<Option<u32>> {
            load(text)
                .diagnostics
                .iter()
                .filter(|d| d.code == codes::YAML_SYNTAX && d.message.contains("separator"))
                .map(|d| d.origin.line)
                .collect()
        };
        let text = "--- {apiVersion: v1, kind: A, metadata: {name: a}}\n--- # fine\n\
                    apiVersion: v1\nkind: B\nmetadata: {name: b}\n--- !!map\n\
                    apiVersion: v1\nkind: C\nmetadata: {name: c}\n";
        assert_eq!(separators(text), [Some(6)]);
        let l = load(text);
        assert_eq!(l.objects.len(), 3);
        assert!(l.diagnostics[0].message.contains("separator `--- !!map`"));
        // Four dashes make no marker: the parser refuses the line.
        let dashes = load("a: 1\n----\n");
        assert!(separators("a: 1\n----\n").is_empty());
        assert_eq!(dashes.diagnostics[0].origin.line, Some(2));
        assert!(separators("a: 1\n---\t# c\nb: 2\n---\r\nc: 3\n---   \nd: 4\n").is_empty());
    }

    /// What follows a `...` with no `---` before it is read by no Kubernetes tool: it is not
    /// an object, and a warning says where it is and why.
    #[test]
    fn text_after_an_end_marker_is_left_out_with_a_warning() {
        let l = load(
            "apiVersion: v1\nkind: A\nmetadata: {name: a}\n...\n\
             apiVersion: v1\nkind: B\nmetadata: {name: b}\n---\n\
             apiVersion: v1\nkind: C\nmetadata: {name: c}\n",
        );
        let kinds: Vec<&str> = l.objects.iter().map(Object::kind_str).collect();
        assert_eq!(kinds, ["A", "C"]);
        assert_eq!(l.objects[1].origin.index, 1);
        let [d] = l.diagnostics.as_slice() else {
            panic!("{:?}", l.diagnostics)
        };
        assert_eq!(d.severity, crate::diagnostic::Severity::Warning);
        assert_eq!(d.code, codes::NOT_AN_OBJECT);
        assert_eq!((d.origin.line, d.origin.index), (Some(5), 1));
        assert!(
            d.message.contains("marker `...` on line 4"),
            "{}",
            d.message
        );

        // A marker that ends no document: the tools refuse the file.
        let l = load("# only a comment\n...\napiVersion: v1\nkind: B\nmetadata: {name: b}\n");
        assert!(l.objects.is_empty());
        let [d] = l.diagnostics.as_slice() else {
            panic!("{:?}", l.diagnostics)
        };
        assert_eq!(d.severity, crate::diagnostic::Severity::Error);
        assert_eq!((d.code, d.origin.line), (codes::YAML_SYNTAX, Some(2)));
        assert!(d.message.contains("ends no document"), "{}", d.message);
    }

    #[test]
    fn a_flow_collection_before_the_kind_line_keeps_a_document_from_being_deferred() {
        // Inside a flow collection a line in column 0 is not a top-level key: the second
        // document is an instancetype whose string has lines that read like a VM's.
        let text = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: a}\n---\n\
                    {\"apiVersion\": instancetype.kubevirt.io/v1beta1, \"kind\": VirtualMachineInstancetype,\n\
                    \x20metadata: {name: t}, note: \"\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\n\"}\n\
                    ---\n# {a comment}\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: b}\n";
        let sources = [Source {
            path: Arc::from("s.yaml"),
            bytes: text.as_bytes().to_vec(),
        }];
        let docs = documents(&sources, &|_, kind| kind == "VirtualMachine");
        assert_eq!(docs.len(), 3);
        // A flow mapping after both lines does not matter.
        assert!(matches!(docs[0], Document::Deferred(_)));
        let Document::Object(tricky) = &docs[1] else {
            panic!("the instancetype is parsed at once: {:?}", docs[1]);
        };
        assert_eq!(tricky.kind_str(), "VirtualMachineInstancetype");
        // A brace in a comment is enough to parse at once: the scan does not read comments.
        assert!(matches!(docs[2], Document::Object(_)));
    }
}

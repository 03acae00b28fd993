//! `kvrender fn [CONFIG]`: kvrender as a KRM function or a kustomize legacy exec plugin.
//!
//! Without CONFIG, stdin is a ResourceList and so is stdout. With CONFIG (what kustomize's
//! legacy exec plugins pass as `argv[1]`), the file is the function configuration and stdin is
//! either a ResourceList (answered with one) or a plain YAML stream (answered with a stream).
//! The same happens when the binary is started under the name `KVRender` (the layout
//! `$KUSTOMIZE_PLUGIN_HOME/kvrender.io/v1alpha1/kvrender/KVRender`), or with no arguments
//! and stdin not a terminal (how kpt and kustomize start an exec function). Started that way
//! with nothing on stdin (a CI step with stdin closed or `/dev/null`), kvrender prints its
//! usage and exits 2; when stdin stays open and silent, it says on stderr what it waits for.
//! Stdin is read up to [`MAX_INPUT`] bytes.

use std::ffi::OsString;
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use clap::CommandFactory;

use crate::cli::FnArgs;
use crate::commands::Outcome;
use crate::diagnostic::{Diagnostic, codes};
use crate::error::{Error, Result};
use crate::krm::{self, FnOutput};
use crate::load::{split, yaml};
use crate::origin::Origin;

/// The plugin file name kustomize looks for: the config's kind.
pub const PLUGIN_NAME: &str = "KVRender";

/// The function arguments implied by how the binary was started, when it was started as a
/// plugin or exec function rather than with a subcommand.
pub fn implicit(args: &[OsString]) -> Option<FnArgs> {
    let argv0 = args.first().map(Path::new)?;
    if argv0.file_name().is_some_and(|n| n == PLUGIN_NAME) {
        return Some(FnArgs {
            config: args.get(1).map(PathBuf::from),
            ignored: args.iter().skip(2).cloned().collect(),
        });
    }
    if args.len() == 1 && !std::io::stdin().is_terminal() {
        return Some(FnArgs {
            config: None,
            ignored: Vec::new(),
        });
    }
    None
}

/// Whether `text` is a single document whose kind is `ResourceList`.
fn is_resource_list(text: &str) -> bool {
    let chunks = split::split(text.strip_prefix('\u{feff}').unwrap_or(text));
    match chunks.as_slice() {
        [one] => yaml::parse_document(one.text)
            .ok()
            .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(str::to_string))
            .is_some_and(|k| k == krm::resource_list::KIND),
        _ => false,
    }
}

/// Run `fn` on `input` (stdin's bytes).
pub fn run_on(args: &FnArgs, input: &[u8]) -> Result<Outcome> {
    let fail = |origin: &str, code: &'static str, message: String| {
        let d = Diagnostic::error(code, Origin::new(origin, 0, None), message);
        Outcome {
            exit: 1,
            diagnostics: vec![d],
            ..Outcome::default()
        }
    };
    let text = match std::str::from_utf8(input) {
        Ok(text) => text,
        Err(e) => {
            let message = format!(
                "stdin is not valid UTF-8 (invalid byte at offset {})",
                e.valid_up_to()
            );
            return Ok(match &args.config {
                Some(_) => fail("-", codes::YAML_SYNTAX, message),
                None => into_outcome(krm::undecodable_resource_list(message)?),
            });
        }
    };
    let Some(path) = &args.config else {
        return Ok(into_outcome(krm::run_resource_list(text, None)?));
    };
    let resource_list = is_resource_list(text);
    let shown = path.to_string_lossy();
    // Given a ResourceList, a config that cannot be used is answered with one, the problem as
    // its result (kpt shows nothing else); given a stream, a file that cannot be read is a
    // usage error, as any other.
    let bytes = match crate::load::read_whole(path) {
        Err(source) if !resource_list => {
            return Err(Error::Read {
                path: path.clone(),
                source,
            });
        }
        Err(e) => Err(format!("cannot read the function config `{shown}`: {e}")),
        Ok(bytes) => Ok(bytes),
    };
    let config = bytes.and_then(|bytes| {
        let config_text = std::str::from_utf8(&bytes)
            .map_err(|_| format!("the function config `{shown}` is not valid UTF-8"))?;
        let value = krm::parse_config_file(&shown, config_text)?;
        let original = kustomize_copy_of(path, &value);
        let (shown, config_text) = match &original {
            Some(Original::File { path, text }) => (path.as_str(), text.as_str()),
            // Its lines are the copy's: none given.
            Some(Original::Unknown { named }) => (named.as_str(), ""),
            None => (&*shown, config_text),
        };
        let config = krm::ConfigFile {
            path: shown,
            text: config_text,
            value,
        };
        Ok(if resource_list {
            krm::run_resource_list(text, Some(&config))
        } else {
            krm::run_stream(&config, text)
        })
    });
    let out = match config {
        Ok(out) => out?,
        Err(message) if resource_list => {
            return Ok(into_outcome(krm::config_file_error(text, &shown, message)?));
        }
        Err(message) => return Ok(fail(&shown, codes::BAD_CONFIG, message)),
    };
    Ok(into_outcome(out))
}

/// What a finding about the configuration kustomize copied for a legacy plugin names instead
/// of the copy.
enum Original {
    /// The file the copy was made of, and its text.
    File { path: String, text: String },
    /// No such file was found: the configuration's kind and name.
    Unknown { named: String },
}

/// kustomize hands a legacy plugin a copy of its configuration in a temporary file
/// (`kust-plugin-config-…`), written anew with its keys sorted and deleted after the build, so
/// that a finding naming the copy and a line of it leads nowhere. kustomize runs the plugin in
/// the folder of the kustomization that lists it: the file the copy was made of is the one the
/// copy's origin annotation names (`buildMetadata: [originAnnotations]`), else the file among
/// that kustomization's generators, transformers and validators whose first document has the
/// copy's kind and name. `None` for any other file.
fn kustomize_copy_of(path: &Path, value: &serde_json::Value) -> Option<Original> {
    use serde_json::Value;
    let copy = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("kust-plugin-config-"));
    if !copy {
        return None;
    }
    let text_at = |path: &[&str]| -> &str {
        crate::model::path::get(value, path)
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let identity = |v: &Value| {
        let at = |path: &[&str]| {
            crate::model::path::get(v, path)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        (
            at(&["apiVersion"]),
            at(&["kind"]),
            at(&["metadata", "name"]),
        )
    };
    let wanted = identity(value);
    let from_origin = yaml::parse_document_full(text_at(&[
        "metadata",
        "annotations",
        "config.kubernetes.io/origin",
    ]))
    .ok()
    .filter(|origin| origin.get("repo").is_none())
    .and_then(|origin| origin.get("path")?.as_str().map(str::to_string));
    let listed = || {
        let kustomization = ["kustomization.yaml", "kustomization.yml", "Kustomization"]
            .iter()
            .find_map(|name| std::fs::read_to_string(name).ok())
            .and_then(|text| yaml::parse_document_full(&text).ok());
        let mut files = Vec::new();
        for key in ["generators", "transformers", "validators"] {
            let entries = kustomization
                .as_ref()
                .and_then(|k| k.get(key))
                .and_then(Value::as_array);
            files.extend(
                entries
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .filter(|e| !e.contains('\n') && !e.trim().is_empty())
                    .map(str::to_string),
            );
        }
        files
    };
    let found = from_origin.into_iter().chain(listed()).find_map(|file| {
        let text = std::fs::read_to_string(&file).ok()?;
        let parsed = krm::parse_config_file(&file, &text).ok()?;
        (identity(&parsed) == wanted).then_some(Original::File { path: file, text })
    });
    Some(found.unwrap_or_else(|| Original::Unknown {
        named: format!(
            "<kustomize's copy of {}/{}>",
            text_at(&["kind"]),
            text_at(&["metadata", "name"])
        ),
    }))
}

/// The most kvrender reads from stdin: far beyond any real package, small enough that an
/// endless stream (`/dev/zero`, a runaway generator) fails clearly instead of eating memory.
pub const MAX_INPUT: u64 = 256 << 20;

/// How long kvrender started with no arguments waits for stdin before saying what it waits for.
pub const HINT_AFTER: Duration = Duration::from_secs(2);

/// Whether the process was started with no arguments at all (not as the `KVRender` plugin):
/// the implicit function mode, where empty stdin means "nobody meant to run a function".
fn started_without_arguments() -> bool {
    let args: Vec<OsString> = std::env::args_os().collect();
    args.len() == 1
        && Path::new(&args[0])
            .file_name()
            .is_none_or(|n| n != PLUGIN_NAME)
}

/// Read stdin, at most [`MAX_INPUT`] bytes (plus one, to notice more). With `hint`, say on
/// stderr what kvrender waits for when nothing arrives within [`HINT_AFTER`]: a shell or CI
/// step that leaves stdin open would otherwise wait in silence.
fn read_stdin(hint: bool) -> std::io::Result<Vec<u8>> {
    let arrived = Arc::new(AtomicBool::new(false));
    if hint {
        let arrived = Arc::clone(&arrived);
        std::thread::spawn(move || {
            std::thread::sleep(HINT_AFTER);
            if !arrived.load(Ordering::SeqCst) {
                let _ = writeln!(
                    std::io::stderr(),
                    "kvrender: waiting for a ResourceList on stdin (started with no arguments \
                     and stdin not a terminal, so running as a KRM function); close stdin or \
                     run `kvrender --help` for usage"
                );
            }
        });
    }
    let mut stdin = std::io::stdin().lock().take(MAX_INPUT + 1);
    let mut input = Vec::new();
    let mut chunk = [0u8; 8192];
    let n = loop {
        match stdin.read(&mut chunk) {
            Ok(n) => break n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    };
    arrived.store(true, Ordering::SeqCst);
    input.extend_from_slice(&chunk[..n]);
    if n > 0 {
        stdin.read_to_end(&mut input)?;
    }
    Ok(input)
}

/// What kvrender started with no arguments says when stdin holds nothing: the usage, exit 2
/// (as for any other usage error).
fn usage() -> Outcome {
    let help = crate::cli::Cli::command().render_help().to_string();
    Outcome {
        stderr: format!(
            "kvrender: no command given and nothing on stdin (with no arguments and a piped \
             stdin, kvrender runs as a KRM function and reads a ResourceList)\n\n{help}"
        ),
        exit: 2,
        ..Outcome::default()
    }
}

/// Run `fn`, reading stdin.
pub fn run(args: &FnArgs) -> Result<Outcome> {
    let implicit = args.config.is_none() && started_without_arguments();
    let input = read_stdin(implicit).map_err(|source| Error::Read {
        path: PathBuf::from("-"),
        source,
    })?;
    if implicit && input.iter().all(u8::is_ascii_whitespace) {
        return Ok(usage());
    }
    if input.len() as u64 > MAX_INPUT {
        let message = format!(
            "stdin holds more than {} MiB: kvrender reads at most that much",
            MAX_INPUT >> 20
        );
        return Ok(match &args.config {
            Some(_) => into_outcome(krm::failed_stream(message)),
            None => into_outcome(krm::undecodable_resource_list(message)?),
        });
    }
    run_on(args, &input)
}

fn into_outcome(out: FnOutput) -> Outcome {
    Outcome {
        stdout: out.stdout,
        diagnostics: out.diagnostics,
        exit: out.exit,
        ..Outcome::default()
    }
}

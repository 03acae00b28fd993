//! `kvrender fn [CONFIG]`: kvrender as a KRM function or a kustomize legacy exec plugin.
//!
//! Without CONFIG, stdin is a ResourceList and so is stdout. With CONFIG (what kustomize's
//! legacy exec plugins pass as argv[1]), the file is the function configuration and stdin is
//! either a ResourceList (answered with one) or a plain YAML stream (answered with a stream).
//! The same happens when the binary is started under the name `KVRender` (the layout
//! `$KUSTOMIZE_PLUGIN_HOME/kvrender.io/v1alpha1/kvrender/KVRender`), or with no arguments
//! and stdin not a terminal (how kpt and kustomize start an exec function).

use std::ffi::OsString;
use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

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
        });
    }
    if args.len() == 1 && !std::io::stdin().is_terminal() {
        return Some(FnArgs { config: None });
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
    let fail = |message: String| {
        let d = Diagnostic::error(codes::NOT_AN_OBJECT, Origin::new("-", 0, None), message);
        Outcome {
            exit: 1,
            diagnostics: vec![d],
            ..Outcome::default()
        }
    };
    let Ok(text) = std::str::from_utf8(input) else {
        return Ok(match &args.config {
            Some(_) => fail("stdin is not valid UTF-8".into()),
            None => into_outcome(krm::run_resource_list("\u{0}", None)?),
        });
    };
    let Some(path) = &args.config else {
        return Ok(into_outcome(krm::run_resource_list(text, None)?));
    };
    let bytes = std::fs::read(path).map_err(|source| Error::Read {
        path: path.clone(),
        source,
    })?;
    let shown = path.to_string_lossy();
    let config = match std::str::from_utf8(&bytes)
        .map_err(|_| format!("the function config `{shown}` is not valid UTF-8"))
        .and_then(|t| krm::parse_config_file(&shown, t))
    {
        Ok(c) => c,
        Err(message) => return Ok(fail(message)),
    };
    let out = if is_resource_list(text) {
        krm::run_resource_list(text, Some(&config))?
    } else {
        krm::run_stream(&config, text)?
    };
    Ok(into_outcome(out))
}

/// Run `fn`, reading stdin.
pub fn run(args: &FnArgs) -> Result<Outcome> {
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .map_err(|source| Error::Read {
            path: PathBuf::from("-"),
            source,
        })?;
    run_on(args, &input)
}

fn into_outcome(out: FnOutput) -> Outcome {
    Outcome {
        stdout: out.stdout,
        diagnostics: out.diagnostics,
        stderr: String::new(),
        exit: out.exit,
    }
}

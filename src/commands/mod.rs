//! The subcommands. Each takes its parsed arguments and returns an [`Outcome`]: the bytes for
//! stdout, the diagnostics for stderr and the exit code. Nothing here prints; `main` does, except
//! that `expand` writes its VMs to the writer `main` hands it while they expand.

pub mod build;
pub mod expand;
pub mod fn_cmd;
pub mod inputs;
pub mod migrate;
pub mod validate;
pub mod vmi;

use crate::diagnostic::Diagnostic;

/// What a command produced.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Data for stdout.
    pub stdout: String,
    /// More data for stdout, printed after `stdout` piece by piece (large outputs are not
    /// copied into one string first).
    pub stdout_parts: Vec<String>,
    /// Findings for stderr (already sorted).
    pub diagnostics: Vec<Diagnostic>,
    /// Extra text for stderr (e.g. a summary), printed after the diagnostics.
    pub stderr: String,
    /// 0: clean; 1: error findings.
    pub exit: u8,
    /// The trees the output was printed or written from. They are handed back instead of freed
    /// so that the caller chooses when: the binary lets the process end without freeing them.
    pub printed_from: Vec<serde_json::Value>,
}

impl Outcome {
    /// `--strict`: every warning becomes an error.
    pub fn warnings_as_errors(&mut self) {
        for d in &mut self.diagnostics {
            if d.severity == crate::diagnostic::Severity::Warning {
                d.severity = crate::diagnostic::Severity::Error;
            }
        }
    }

    /// Set the exit code from the diagnostics: 1 when any is an error.
    pub fn exit_from_diagnostics(&mut self) {
        if self.diagnostics.iter().any(Diagnostic::is_error) {
            self.exit = self.exit.max(1);
        }
    }
}

/// `kvrender completion SHELL`: the completion script clap writes from the command line's own
/// definition, so that it knows every command, option and value the binary takes.
pub fn completion(args: &crate::cli::CompletionArgs) -> Outcome {
    use clap::CommandFactory;
    let mut script = Vec::new();
    clap_complete::generate(
        args.shell,
        &mut crate::cli::Cli::command(),
        "kvrender",
        &mut script,
    );
    Outcome {
        stdout: String::from_utf8_lossy(&script).into_owned(),
        ..Outcome::default()
    }
}

/// What the commands' tests share.
#[cfg(test)]
pub(crate) mod testing {
    use std::path::{Path, PathBuf};

    use clap::Parser;

    use crate::cli::{Cli, Command};

    /// A path in the repository.
    pub fn repo(path: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
    }

    /// The command `kvrender ARGS... PATHS...` parses to.
    pub fn command(args: &[&str], paths: &[PathBuf]) -> Command {
        let argv = ["kvrender"]
            .iter()
            .chain(args)
            .map(|a| (*a).to_string())
            .chain(paths.iter().map(|p| p.display().to_string()));
        Cli::try_parse_from(argv)
            .expect("the arguments parse")
            .command
    }

    /// The case directories of a corpus of the repository, in order.
    pub fn cases(corpus: &str) -> Vec<PathBuf> {
        let entries = std::fs::read_dir(repo(corpus)).expect("the corpus");
        let mut cases: Vec<PathBuf> = entries.map(|e| e.expect("an entry").path()).collect();
        cases.sort();
        cases
    }
}

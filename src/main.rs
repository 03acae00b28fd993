//! The `kvrender` binary: parse arguments, run the command, print, exit.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use kvrender::cli::{Cli, Command};
use kvrender::commands::{self, Outcome};
use kvrender::emit;

fn main() -> ExitCode {
    // Started as a kustomize plugin (`KVRender`) or an exec function (no arguments, piped
    // stdin): the function, without a subcommand.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(fn_args) = commands::fn_cmd::implicit(&args) {
        return match commands::fn_cmd::run(&fn_args) {
            Ok(outcome) => print(&outcome),
            Err(err) => {
                let _ = writeln!(std::io::stderr(), "kvrender: error: {err:#}");
                ExitCode::from(2)
            }
        };
    }
    let cli = Cli::parse();
    match run(&cli) {
        Ok(outcome) => print(&outcome),
        Err(err) => {
            let _ = writeln!(std::io::stderr(), "kvrender: error: {err:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: &Cli) -> anyhow::Result<Outcome> {
    if let Some(n) = cli.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build_global()?;
    }
    let outcome = match &cli.command {
        Command::Expand(args) => commands::expand::run(args)?,
        Command::Fn(args) => commands::fn_cmd::run(args)?,
        _ => anyhow::bail!("this subcommand is not available yet"),
    };
    Ok(outcome)
}

fn print(outcome: &Outcome) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(outcome.stdout.as_bytes())
        .and_then(|()| stdout.flush())
    {
        // A closed pipe (`kvrender ... | head`) is not a failure.
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            let _ = writeln!(
                std::io::stderr(),
                "kvrender: error: failed to write output: {e}"
            );
            return ExitCode::from(2);
        }
    }
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(emit::diagnostics::human(&outcome.diagnostics, false).as_bytes());
    let _ = stderr.write_all(outcome.stderr.as_bytes());
    ExitCode::from(outcome.exit)
}

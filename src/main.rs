//! The `kvrender` binary: parse arguments, run the command, print, exit.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use kvrender::cli::{Cli, Command, MigrateCommand};
use kvrender::commands::{self, Outcome};
use kvrender::emit;

fn main() -> ExitCode {
    if kvrender::workers::room_on_the_calling_thread() {
        return command();
    }
    // The system holds the calling thread's stack below the workers': run on a thread of
    // their size instead. A panic there has been printed; exit as Rust does after one.
    kvrender::workers::on_a_thread_with_room(command).unwrap_or(ExitCode::from(101))
}

/// Parse the arguments, run the command in a thread pool whose first worker is this thread,
/// and print.
fn command() -> ExitCode {
    // Started as a kustomize plugin (`KVRender`) or an exec function (no arguments, piped
    // stdin): the function, without a subcommand.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let result = match commands::fn_cmd::implicit(&args) {
        Some(fn_args) => in_pool(None, || {
            commands::fn_cmd::run(&fn_args).map_err(anyhow::Error::from)
        }),
        None => {
            let cli = Cli::parse();
            in_pool(cli.threads.map(usize::from), || run(&cli))
        }
    };
    match result {
        Ok(outcome) => {
            let code = print(&outcome);
            // The process ends here: the system takes the memory back at once, where freeing
            // the printed documents one by one would take a millisecond per 10,000.
            std::mem::forget(outcome);
            code
        }
        Err(err) => {
            let message = emit::diagnostics::one_line(format!("{err:#}"));
            let _ = writeln!(std::io::stderr(), "kvrender: error: {message}");
            ExitCode::from(2)
        }
    }
}

/// Run `job` in a new thread pool (`threads` workers, or one per processor) whose first worker
/// is the calling thread (see [`kvrender::workers`]).
fn in_pool<T: Send>(
    threads: Option<usize>,
    job: impl FnOnce() -> anyhow::Result<T> + Send,
) -> anyhow::Result<T> {
    let pool = kvrender::workers::pool(threads).map_err(|e| {
        let asked = threads.map_or("one per processor".to_string(), |n| n.to_string());
        anyhow::anyhow!(
            "cannot start the worker threads ({asked}): {e}; the system limits threads or \
             memory (`ulimit -u`, `ulimit -v`): try a lower `--threads`"
        )
    })?;
    let result = pool.install(job);
    // Workers may still be freeing what the command left them; the process is about to end.
    std::mem::forget(pool);
    result
}

fn run(cli: &Cli) -> anyhow::Result<Outcome> {
    let outcome = match &cli.command {
        Command::Build(args) => commands::build::run(args)?,
        Command::Expand(args) => commands::expand::run(args, &mut std::io::stdout())?,
        Command::Validate(args) => commands::validate::run(args)?,
        Command::Vmi(args) => commands::vmi::run(args)?,
        Command::Diff(args) => commands::vmi::run_diff(args)?,
        Command::Migrate(MigrateCommand::Presets(args)) => commands::migrate::run_presets(args)?,
        Command::Fn(args) => commands::fn_cmd::run(args)?,
        Command::Completion(args) => commands::completion(args),
    };
    Ok(outcome)
}

fn print(outcome: &Outcome) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_all(outcome.stdout.as_bytes())
        .and_then(|()| stdout.flush())
        .and_then(|()| emit::write_parts(&mut stdout, &outcome.stdout_parts));
    // The findings are said whether or not the output could be written (a full disk must not
    // hide why the VMs would be refused).
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(emit::diagnostics::human(&outcome.diagnostics, false).as_bytes());
    let _ = stderr.write_all(outcome.stderr.as_bytes());
    match written {
        // A closed pipe (`kvrender ... | head`) is not a failure.
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            let _ = writeln!(stderr, "kvrender: error: failed to write output: {e}");
            ExitCode::from(2)
        }
        _ => ExitCode::from(outcome.exit),
    }
}

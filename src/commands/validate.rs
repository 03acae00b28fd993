//! `kvrender validate`: run every rule of [`crate::validate`] on the inputs and print the
//! findings in the chosen format on stdout. Exit 1 when any finding is an error.

use crate::cli::{Format, ValidateArgs};
use crate::commands::Outcome;
use crate::commands::inputs::Inputs;
use crate::emit;
use crate::error::Result;
use crate::validate::{self, Context, Options};

/// Run `validate`.
pub fn run(args: &ValidateArgs) -> Result<Outcome> {
    let inputs = Inputs::load(&args.paths, &args.resolve)?;
    let index = inputs.index();
    let ctx = Context {
        objects: &inputs.objects,
        index: &index,
        profile: &inputs.profile,
    };
    let mut diags = inputs.diagnostics.clone();
    diags.extend(validate::validate(&ctx));
    let diags = validate::finish(
        diags,
        Options {
            strict: args.strict,
        },
    );
    let stdout = match args.format {
        Format::Human => emit::diagnostics::human(&diags, true),
        Format::Json => emit::json::report(&diags),
        Format::Github => emit::github::report(&diags),
        Format::Sarif => emit::sarif::report(&diags),
    };
    let mut out = Outcome {
        stdout,
        diagnostics: diags,
        ..Outcome::default()
    };
    out.exit_from_diagnostics();
    // The findings are the report on stdout; `main` must not print them again.
    out.diagnostics.clear();
    Ok(out)
}

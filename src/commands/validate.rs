//! `kvrender validate`: run every rule of [`crate::validate`] on the inputs and print the
//! findings in the chosen format on stdout. Exit 1 when any finding is an error.

use foldhash::HashMap;

use crate::cli::{Format, ValidateArgs};
use crate::commands::Outcome;
use crate::commands::inputs::Inputs;
use crate::diagnostic::Diagnostic;
use crate::emit;
use crate::error::Result;
use crate::model::Object;
use crate::validate::{self, Context, Options};

/// Run `validate`.
pub fn run(args: &ValidateArgs) -> Result<Outcome> {
    // As `build`: without a PATH, the current directory.
    let paths = if args.paths.is_empty() {
        vec![std::path::PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let inputs = Inputs::load(&paths, &args.resolve)?;
    let index = inputs.index();
    let ctx = Context {
        index: &index,
        profile: &inputs.profile,
        memo: validate::Memo::default(),
    };
    let mut diags = inputs.diagnostics.clone();
    diags.extend(validate::validate(&inputs.objects, &ctx));
    point_at_fields(&inputs.objects, &mut diags);
    let diags = validate::finish(
        diags,
        Options {
            strict: args.strict,
        },
    );
    let stdout = match args.format {
        Format::Human if diags.is_empty() => format!(
            "No problems found in {} object{}.\n",
            inputs.objects.len(),
            if inputs.objects.len() == 1 { "" } else { "s" }
        ),
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

/// Move findings that point at the start of their object to the line of their field, when the
/// field can be found in the document's text.
fn point_at_fields(objects: &[Object], diags: &mut [Diagnostic]) {
    // The items of a list document share its index: the line tells them apart.
    let by_origin: HashMap<(&str, usize, Option<u32>), &Object> = objects
        .iter()
        .map(|o| ((&*o.origin.path, o.origin.index, o.origin.line), o))
        .collect();
    for d in diags.iter_mut() {
        let Some(field) = d.field.as_deref() else {
            continue;
        };
        let Some(obj) = by_origin.get(&(&*d.origin.path, d.origin.index, d.origin.line)) else {
            continue;
        };
        let first = field.split(", ").next().unwrap_or(field);
        d.origin = obj.field_origin(first);
    }
}

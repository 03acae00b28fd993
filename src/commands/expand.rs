//! `kvrender expand`: every VirtualMachine in the inputs, expanded, as one YAML stream.

use crate::cli::ExpandArgs;
use crate::commands::Outcome;
use crate::commands::inputs::Inputs;
use crate::diagnostic;
use crate::emit;
use crate::error::Result;
use crate::pipeline;

/// Run `expand`.
pub fn run(args: &ExpandArgs) -> Result<Outcome> {
    let inputs = Inputs::load(&args.paths, &args.resolve)?;
    let index = inputs.index();
    let results = pipeline::expand_all(&inputs.objects, &index, &inputs.profile);
    let mut out = Outcome {
        diagnostics: inputs.diagnostics.clone(),
        ..Outcome::default()
    };
    let mut expanded = Vec::new();
    for r in results.into_iter().flatten() {
        match r {
            Ok(v) => expanded.push(v),
            Err(d) => out.diagnostics.push(d),
        }
    }
    out.stdout = emit::yaml_stream(&expanded)?;
    diagnostic::sort(&mut out.diagnostics);
    out.exit_from_diagnostics();
    Ok(out)
}

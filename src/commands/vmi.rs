//! `kvrender vmi` and `kvrender diff`: the VirtualMachineInstance each VirtualMachine produces.
//!
//! The order is KubeVirt's. The VM controller builds the VMI from the template (firmware UUID from
//! the VM name, default disks, the input device `autoattachInputDevice` asks for) and, for a VM
//! that names an instancetype or preference, takes the preference's autoattach flags, adds the
//! default network interface and applies them. The VMI webhook then applies the
//! VirtualMachineInstancePresets, and only after them its defaults. `--stage presets` stops
//! after the presets.

use std::io::IsTerminal;

use serde_json::Value;

use crate::cli::{DiffArgs, Stage, VmiArgs};
use crate::commands::Outcome;
use crate::commands::inputs::Inputs;
use crate::diagnostic::{self, Diagnostic, codes};
use crate::emit;
use crate::error::Result;
use crate::kubevirt::{admission, expand, presets, vmi, vmi_defaults};
use crate::model::{Kind, Object};
use crate::pipeline;

/// One VMI and what produced it.
struct Built {
    source: Object,
    vmi: Value,
}

fn build_all(inputs: &Inputs, stage: Stage, out: &mut Outcome) -> Vec<Built> {
    let index = inputs.index();
    // A preset without a domain is refused when it is created (`ValidateVMIPresetSpec`), so it
    // never selects a VMI.
    let preset_objects: Vec<&Object> = inputs
        .objects
        .iter()
        .filter(|o| o.kind() == Kind::VirtualMachineInstancePreset)
        .filter(|o| {
            let has_domain = crate::model::path::get(&o.value, &["spec", "domain"])
                .is_some_and(|d| !d.is_null());
            if !has_domain {
                out.diagnostics.push(
                    Diagnostic::error(
                        codes::PRESET,
                        o.origin.clone(),
                        "KubeVirt refuses the preset (missing domain.), so it selects no \
                         VirtualMachineInstance",
                    )
                    .with_object(o.object_ref())
                    .with_field("spec.domain"),
                );
            }
            has_domain
        })
        .collect();
    let mut preset_index = presets::PresetIndex::new(&preset_objects);
    let mut built = Vec::new();
    for obj in &inputs.objects {
        let kind = obj.kind();
        if kind == Kind::Other {
            // A misspelt VirtualMachine kind is reported instead of passed over in silence.
            crate::validate::rules::api_version::check(obj, &mut out.diagnostics);
        }
        if kind != Kind::VirtualMachine && kind != Kind::VirtualMachineInstance {
            continue;
        }
        // The instancetype and preference, applied as the VM controller does.
        let source = if kind == Kind::VirtualMachine && expand::has_matchers(&obj.value) {
            // A VM KubeVirt's webhook refuses is not created (or not updated) as written; the
            // VMI is still what the controller makes of it, should it exist (its preference
            // changed after it was admitted, say): say so, as a warning.
            let refused = admission::admit(obj, &index, &inputs.profile)
                .map(|r| r.causes)
                .unwrap_or_default();
            // A conflict stops the controller too: it is reported below, as an error.
            let refused = refused
                .into_iter()
                .filter(|c| c.reason != admission::Reason::Conflict);
            out.diagnostics.extend(refused.map(|cause| {
                Diagnostic::warning(
                    crate::validate::rules::admission::code_of(cause.reason),
                    obj.origin.clone(),
                    format!(
                        "{}: KubeVirt's webhook refuses to create the VirtualMachine as written \
                         (`kvrender validate` reports it as an error); the VirtualMachineInstance \
                         is what the controller would make of it",
                        cause.message
                    ),
                )
                .with_object(obj.object_ref())
                .with_field(cause.field)
            }));
            match pipeline::controller_vm(obj, &index, &inputs.profile) {
                Ok(v) => obj.with_value(v),
                Err(d) => {
                    out.diagnostics.push(d);
                    continue;
                }
            }
        } else {
            // The checks `expand` makes (the VMI's name and firmware UUID come from the name;
            // a field of the wrong type would be replaced or copied as it is).
            if kind == Kind::VirtualMachine
                && let Some(d) = pipeline::vm_diagnostic(obj)
            {
                out.diagnostics.push(d);
                continue;
            }
            obj.clone()
        };
        let Some(mut vmi) = vmi::vmi_for(&source) else {
            continue;
        };
        vmi::null_strings_as_empty(&mut vmi);
        match preset_index.apply(&mut vmi, obj.effective_namespace()) {
            Ok(outcome) => {
                for skipped in &outcome.skipped {
                    out.diagnostics.push(
                        Diagnostic::warning(codes::PRESET, obj.origin.clone(), skipped.to_string())
                            .with_object(obj.object_ref())
                            .with_field(skipped.field.clone()),
                    );
                }
                for warning in &outcome.warnings {
                    out.diagnostics.push(
                        Diagnostic::warning(codes::PRESET, obj.origin.clone(), warning.clone())
                            .with_object(obj.object_ref()),
                    );
                }
            }
            Err(refusal) => {
                out.diagnostics.push(
                    Diagnostic::error(
                        codes::PRESET,
                        obj.origin.clone(),
                        format!("the VirtualMachineInstance would be refused: {refusal}"),
                    )
                    .with_object(obj.object_ref()),
                );
                continue;
            }
        }
        vmi::omit_empty_resources_and_devices(&mut vmi);
        if stage == Stage::Full {
            vmi::write_go_zero_fields(&mut vmi);
        } else {
            // The preset stage shows what the presets did: no zero values nobody wrote.
            vmi::go_nulls_as_zero_values(&mut vmi);
        }
        // The VM controller's input device, which no preset touches, for a VM that is not
        // expanded (an expanded one has it already).
        if stage == Stage::Full
            && kind == Kind::VirtualMachine
            && let Some(spec) = vmi.get_mut("spec")
        {
            vmi::autoattach_input_device(spec);
        }
        if stage == Stage::Full
            && let Some(spec) = vmi.get_mut("spec")
            && let Err(e) = vmi_defaults::apply(&inputs.profile, spec)
        {
            out.diagnostics.push(
                Diagnostic::error(codes::BAD_MATCHER, obj.origin.clone(), e.0)
                    .with_object(obj.object_ref()),
            );
            continue;
        }
        if stage == Stage::Full {
            vmi_defaults::set_new_vmi_annotations(&inputs.profile, &mut vmi);
            if kind == Kind::VirtualMachine {
                vmi::receiver_annotation(&obj.value, &mut vmi);
            }
        }
        built.push(Built {
            source: obj.clone(),
            vmi,
        });
    }
    built
}

/// Run `vmi`.
pub fn run(args: &VmiArgs) -> Result<Outcome> {
    let inputs = Inputs::load(&args.paths, &args.resolve)?;
    let mut out = Outcome {
        diagnostics: inputs.diagnostics.clone(),
        ..Outcome::default()
    };
    let built = build_all(&inputs, args.stage, &mut out);
    out.stdout = emit::yaml_stream(built.iter().map(|b| &b.vmi));
    diagnostic::sort(&mut out.diagnostics);
    out.exit_from_diagnostics();
    Ok(out)
}

/// Run `diff`: for each VM, a unified diff from the template's spec to the VMI's spec.
pub fn run_diff(diff: &DiffArgs) -> Result<Outcome> {
    let args = &diff.vmi;
    let inputs = Inputs::load(&args.paths, &args.resolve)?;
    let mut out = Outcome {
        diagnostics: inputs.diagnostics.clone(),
        ..Outcome::default()
    };
    let color = match diff.color.as_str() {
        "always" => true,
        "never" => false,
        _ => std::io::stdout().is_terminal(),
    };
    let built = build_all(&inputs, args.stage, &mut out);
    for b in &built {
        let before = if b.source.kind() == Kind::VirtualMachine {
            crate::model::path::get(&b.source.value, &["spec", "template", "spec"])
        } else {
            b.source.value.get("spec")
        }
        .cloned()
        .unwrap_or(Value::Null);
        let after = b.vmi.get("spec").cloned().unwrap_or(Value::Null);
        let before = emit::yaml_document(&before);
        let after = emit::yaml_document(&after);
        let name = b.source.object_ref().to_string();
        out.stdout.push_str(&emit::unified_diff(
            &before,
            &after,
            &format!("{name} (template spec)"),
            &format!("{name} (VirtualMachineInstance spec)"),
            color,
        ));
    }
    diagnostic::sort(&mut out.diagnostics);
    out.exit_from_diagnostics();
    Ok(out)
}

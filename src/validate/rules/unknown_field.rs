//! `KV022` unknown-field (and the walk that also finds `KV004` wrong types).
//!
//! ## What it checks
//! Field names in instancetypes, preferences, VirtualMachines (their templates, volumes,
//! affinity and DataVolume templates included), VirtualMachineInstances and presets, against
//! the json names of KubeVirt's Go types (those of Kubernetes and CDI it embeds included) and
//! of Kubernetes' `ObjectMeta`.
//! The `metadata` of every other object (tool configuration aside) is checked against
//! `ObjectMeta` too: its names and types are the same whatever the kind. Names are
//! case-sensitive.
//!
//! An unknown field at the top level of an instancetype or preference (beside `apiVersion`,
//! `kind`, `metadata`, `spec` and `status`) is an error: KubeVirt's webhook refuses the object.
//!
//! ## Why
//! The API server prunes fields its schema does not know, without an error: the setting silently
//! does nothing. Three places of KubeVirt's schema keep unknown fields instead (a template's
//! `metadata`, a DataVolume template's `metadata` and the clock): there the API server stores the
//! field, and KubeVirt, reading the object into its Go types, ignores it. The classic case is the instancetype spelling `dedicatedCPUPlacement` in a VM's
//! `domain.cpu`, where the field is `dedicatedCpuPlacement`; another, a disk's `readOnly`, as a
//! Kubernetes volume mount spells it, where KubeVirt's field is `readonly`.
//!
//! ## Example
//! ```yaml
//! kind: VirtualMachine
//! spec:
//!   template:
//!     spec:
//!       domain:
//!         cpu:
//!           dedicatedCPUPlacement: true   # dropped: the VM field is dedicatedCpuPlacement
//! ```
//!
//! ## Fix
//! Use the field name the message suggests, or remove the field.

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::model::{Kind, Object};
use crate::validate::Rule;
use crate::validate::schema::{self, Misplaced, Problem, Ty};

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::UNKNOWN_FIELD,
    name: "unknown-field",
    summary: "A field KubeVirt does not know, or one of any object's `metadata` that Kubernetes does not know (e.g. a wrong case): `kubectl apply` refuses the object, a client that does not validate fields has it dropped; either way it does nothing. (In a template's or DataVolume template's `metadata` and in the clock, where KubeVirt's schema keeps unknown fields, the API server stores it and KubeVirt ignores it.) At the top level of an instancetype or preference it is an error: KubeVirt's webhook refuses the object. Where a field of that name belongs one level up or down (under an empty or a filled sibling), the message asks whether it is indented as meant; otherwise it names a near field name.",
    severity: Severity::Warning,
};

fn schema_for(kind: Kind) -> Option<Ty> {
    match kind {
        Kind::Instancetype | Kind::ClusterInstancetype => Some(schema::INSTANCETYPE),
        Kind::Preference | Kind::ClusterPreference => Some(schema::PREFERENCE),
        Kind::VirtualMachine => Some(schema::VIRTUAL_MACHINE),
        Kind::VirtualMachineInstance => Some(schema::VIRTUAL_MACHINE_INSTANCE),
        Kind::VirtualMachineInstancePreset => Some(schema::PRESET),
        _ => None,
    }
}

/// Whether `path` is inside a template's or a DataVolume template's `metadata`, which
/// KubeVirt's CRD schemas keep as written, checking nothing in it.
fn in_kept_metadata(path: &str) -> bool {
    // A pool's template, and the VM spec in it, keep theirs as a VM's do.
    if let Some(rest) = path.strip_prefix("spec.virtualMachineTemplate.") {
        return rest.starts_with("metadata.")
            || rest
                .strip_prefix("spec.")
                .is_some_and(|vm| in_kept_metadata(&format!("spec.{vm}")));
    }
    path.strip_prefix("spec.template.metadata.").is_some()
        || path
            .strip_prefix("spec.dataVolumeTemplates[")
            .and_then(|rest| rest.split_once("].metadata."))
            .is_some()
}

/// Report unknown fields (`KV022`) and wrong types (`KV004`) in a KubeVirt object, or in the
/// `metadata` of any other.
pub fn check(obj: &Object, out: &mut Vec<Diagnostic>) {
    let mut problems = Vec::new();
    let pool = crate::kubevirt::pool::is_pool(obj);
    let replica_set = crate::kubevirt::replica_set::is_replica_set(obj);
    let schema = if pool {
        Some(schema::VIRTUAL_MACHINE_POOL)
    } else if replica_set {
        Some(schema::VIRTUAL_MACHINE_INSTANCE_REPLICA_SET)
    } else {
        schema_for(obj.kind())
    };
    match schema {
        Some(ty) => schema::check(&obj.value, ty, "", &mut problems),
        // Every other object's `metadata` is Kubernetes' `ObjectMeta`, whatever its kind;
        // tool configuration is never sent to the API server.
        None if !obj.is_tool_config() => {
            if let Some(metadata) = obj.value.get("metadata") {
                let ty = Ty::Struct(schema::OBJECT_META);
                schema::check(metadata, ty, "metadata", &mut problems);
            }
        }
        None => return,
    }
    for p in problems {
        // A name that is not a string is the name rule's (`KV003`), which says to quote it.
        if matches!(&p, Problem::WrongType { path, .. } if path == "metadata.name") {
            continue;
        }
        let d = match p {
            Problem::Unknown {
                parent,
                key,
                suggestion,
                misplaced,
                kept,
            } => {
                let field = crate::model::path::join(&parent, &key);
                let place = if parent.is_empty() {
                    "at the top level".to_string()
                } else {
                    format!("in `{parent}`")
                };
                let mut message = if kept {
                    format!(
                        "unknown field `{key}` {place}: the API server keeps it (the schema \
                         preserves unknown fields there), but KubeVirt does not read it: it \
                         does nothing"
                    )
                } else {
                    format!(
                        "unknown field `{key}` {place}: `kubectl apply` refuses the object \
                         (strict field validation), a client that does not validate fields has \
                         it dropped; either way it does nothing"
                    )
                };
                // KubeVirt's webhook for instancetypes and preferences allows these five keys at
                // the top and refuses the object for any other (its schema check of the `spec`
                // itself finds no schema for these kinds, so deeper fields pass it).
                let refused = parent.is_empty()
                    && obj.kind().is_catalog()
                    && !matches!(
                        key.as_str(),
                        "apiVersion" | "kind" | "metadata" | "spec" | "status"
                    );
                if refused {
                    message = format!(
                        "unknown field `{key}` at the top level: KubeVirt's webhook refuses a {} \
                         with any top-level field but apiVersion, kind, metadata, spec and \
                         status",
                        obj.kind_str()
                    );
                }
                if let Some(hint) = misplaced {
                    // The indentation is the likelier mistake than the name.
                    message.push_str(&match hint {
                        Misplaced::Under(sibling) => format!(
                            "; `{sibling}` is empty and has a field `{key}`: is `{key}` meant \
                             to be indented under it?"
                        ),
                        Misplaced::Above(holder) if holder.is_empty() => format!(
                            "; `{key}` is a field of the top level: is it indented one level \
                             too deep?"
                        ),
                        Misplaced::Above(holder) => format!(
                            "; `{key}` is a field of `{holder}`: is it indented one level too \
                             deep?"
                        ),
                        Misplaced::Within(sibling) => format!(
                            "; `{key}` is a field of `{sibling}`: is it meant to be indented \
                             under it?"
                        ),
                    });
                } else if let Some(s) = suggestion {
                    message.push_str(&format!("; did you mean `{s}`?"));
                    let unseen: Vec<String> = key
                        .chars()
                        .filter(|&c| crate::emit::diagnostics::unseen(c))
                        .map(|c| format!("U+{:04X}", u32::from(c)))
                        .collect();
                    if !unseen.is_empty() {
                        message.push_str(&format!(
                            " (the name holds {}, which does not show: retype it)",
                            unseen.join(", ")
                        ));
                    }
                    if s.eq_ignore_ascii_case(&key) {
                        message.push_str(" (field names are case-sensitive)");
                    }
                }
                let severity = if refused {
                    Severity::Error
                } else {
                    Severity::Warning
                };
                Diagnostic::warning(RULE.code, obj.origin.clone(), message)
                    .with_severity(severity)
                    .with_field(field)
            }
            Problem::WrongType {
                path,
                expected,
                found,
                out_of_range,
            } => {
                let who = if out_of_range {
                    "the API server stores it (its schema takes any 64-bit integer), then \
                     KubeVirt cannot decode it into its Go type and refuses the object"
                } else if in_kept_metadata(&path) {
                    "the API server stores it (the schema keeps this `metadata` as written), \
                     then KubeVirt cannot decode it and refuses the object"
                } else {
                    "the API server refuses the object"
                };
                let written = (expected == "a boolean")
                    .then(|| yaml11_word(&obj.value, &path))
                    .flatten()
                    .map(|(word, value)| {
                        format!(
                            " (`{word}` is text to kpt and kustomize, which read YAML 1.2, and \
                             the boolean {value} only to `kubectl apply -f`: write `{value}`)"
                        )
                    })
                    .unwrap_or_else(|| yaml_in_text(&obj.value, &path, expected));
                Diagnostic::error(
                    super::wrong_type::RULE.code,
                    obj.origin.clone(),
                    format!("must be {expected}, not {found}{written}: {who}"),
                )
                .with_field(path)
            }
            Problem::NullItem { path, expected } => {
                // Left alone: the one list whose items the CRD marks `nullable` (a VM's
                // DataVolume templates); an object's own `metadata`, which the API server reads
                // as Go's `ObjectMeta`; a template's, kept as written. Go reads a `null` item
                // there as the zero value.
                let in_vm = path
                    .strip_prefix("spec.virtualMachineTemplate.")
                    .filter(|_| pool)
                    .unwrap_or(&path);
                let nullable = in_vm
                    .strip_prefix("spec.dataVolumeTemplates[")
                    .and_then(|rest| rest.strip_suffix(']'))
                    .is_some_and(|index| index.bytes().all(|b| b.is_ascii_digit()));
                if nullable || path.starts_with("metadata.") || in_kept_metadata(&path) {
                    continue;
                }
                Diagnostic::error(
                    super::wrong_type::RULE.code,
                    obj.origin.clone(),
                    format!(
                        "must be {expected}, not null: the API server keeps a list's `null` \
                         items and refuses them (it drops only the `null` fields of a mapping)"
                    ),
                )
                .with_field(path)
            }
            Problem::BeyondFloat { path, found } => {
                // KubeVirt's webhooks check the `spec` of these kinds against their schema,
                // reading its numbers as 64-bit floats; an instancetype's or preference's
                // webhook checks no schema below `spec`, and `metadata` is not checked.
                // A pool's webhook checks no such schema: the VMs it creates are refused
                // instead (the pool rule reports it on the pool). A replica set's does.
                let checked = (replica_set
                    || matches!(
                        obj.kind(),
                        Kind::VirtualMachine
                            | Kind::VirtualMachineInstance
                            | Kind::VirtualMachineInstancePreset
                    ))
                    && path.starts_with("spec.");
                if !checked {
                    continue;
                }
                Diagnostic::error(
                    super::wrong_type::RULE.code,
                    obj.origin.clone(),
                    schema::beyond_float_message(&found),
                )
                .with_field(path)
            }
        };
        out.push(d.with_object(obj.object_ref()));
    }
}

/// The string at `path` of `value` when it is a word YAML 1.1 reads as a boolean and YAML 1.2
/// as text (`yes`, `off`: see [`super::yaml_boolean`]), with the boolean it stands for there.
/// ` (the text is the YAML of a list: ...)` when the string at `path`, where `expected` (a
/// list or a mapping) belongs, is itself the YAML of one: a block written with `|` or `>`, or
/// what a catalog template wrote as text, is one string, not the list it spells.
fn yaml_in_text(value: &serde_json::Value, path: &str, expected: &str) -> String {
    let want: fn(&serde_json::Value) -> bool = match expected {
        "a list" => serde_json::Value::is_array,
        "a mapping" => serde_json::Value::is_object,
        _ => return String::new(),
    };
    let steps = crate::load::locate::parse_path(path);
    let Some(text) = crate::load::locate::field_at(value, &steps).and_then(|v| v.as_str()) else {
        return String::new();
    };
    match crate::load::yaml::parse_node(text) {
        Ok(parsed) if want(&parsed) => {
            let what = expected.trim_start_matches("a ");
            format!(
                " (the text is the YAML of a {what}: a block written with `|` or `>`, or text a \
                 template wrote, stays one string; write the {what} itself in YAML)"
            )
        }
        _ => String::new(),
    }
}

fn yaml11_word<'v>(value: &'v serde_json::Value, path: &str) -> Option<(&'v str, bool)> {
    let steps = crate::load::locate::parse_path(path);
    let word = crate::load::locate::field_at(value, &steps)?.as_str()?;
    crate::load::yaml::yaml11_boolean(word).map(|b| (word, b))
}

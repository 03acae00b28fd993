//! What the rules of objects that keep a template share ([`super::pool`] and
//! [`super::replica_set`]): their own findings, and those about the objects their controllers
//! create, said of them.

use std::collections::HashSet;

use crate::diagnostic::{Diagnostic, first_field};
use crate::model::Object;
use crate::validate::Context;

/// The codes whose findings about an object created from a template the template's owner's own
/// checks already make: the schema's, and the object's names (the created object's name is
/// made of the owner's).
pub(super) const OWNERS_OWN: [&str; 4] = [
    super::wrong_type::RULE.code,
    super::unknown_field::RULE.code,
    super::api_version::RULE.code,
    super::bad_name::RULE.code,
];

/// Report `found` (code, field, message) on `obj`: those of `own_code`, the object's rule, as
/// errors, the others (the template's `KV034`) as warnings.
pub(super) fn push_found(
    obj: &Object,
    own_code: &'static str,
    found: Vec<(&'static str, String, String)>,
    out: &mut Vec<Diagnostic>,
) {
    for (code, field, message) in found {
        let d = if code == own_code {
            Diagnostic::error(code, obj.origin.clone(), message)
        } else {
            Diagnostic::warning(code, obj.origin.clone(), message)
        };
        out.push(d.with_field(field).with_object(obj.object_ref()));
    }
}

/// Every finding `validate` makes of `made`, which a controller creates from a template, but
/// those `skip` says the template's own checks already make, said of the template's object by
/// `said_of`, once each.
pub(super) fn report_made(
    made: &Object,
    ctx: &Context<'_>,
    skip: impl Fn(&Diagnostic) -> bool,
    said_of: impl Fn(Diagnostic) -> Diagnostic,
    out: &mut Vec<Diagnostic>,
) {
    let mut seen = HashSet::new();
    for d in crate::validate::check_object(made, ctx) {
        if skip(&d) {
            continue;
        }
        let d = said_of(d);
        if seen.insert((d.code, d.field.clone(), d.message.clone())) {
            out.push(d);
        }
    }
}

/// A finding about an object created from `owner`'s template, said of `owner`: at the fields
/// of the template `field_of` gives, on the first one's line (a name that is not found on the
/// name's line, as on a VM), ending with `note`.
pub(super) fn said_of(
    owner: &Object,
    mut d: Diagnostic,
    field_of: fn(&str) -> String,
    note: &str,
) -> Diagnostic {
    let vm_field = d.field.clone();
    d.field = d
        .field
        .as_deref()
        .map(|f| f.split(", ").map(field_of).collect::<Vec<_>>().join(", "));
    d.message.push_str(note);
    d.origin = match &d.field {
        Some(field) if d.code == super::reference_not_found::RULE.code => {
            owner.field_origin(&format!("{field}.name"))
        }
        // A conflict at the template's own spelling of the field (see `vm_field_of`).
        Some(_) if d.code == super::instancetype_conflict::RULE.code => {
            let vm_field = vm_field.as_deref().map(first_field).unwrap_or_default();
            owner.field_origin(&field_of(&crate::kubevirt::conflict::vm_field_of(vm_field)))
        }
        Some(field) => owner.field_origin(first_field(field)),
        None => owner.origin.clone(),
    };
    d.object = Some(owner.object_ref());
    d
}

//! [`Preference`]: a `Preference` document, composed from parts by name.

use serde_json::{Map, Value, json};

use super::{Doc, RenderError, Scopes};
use crate::load::locate::Step;

/// A preference definition.
#[derive(Debug)]
pub struct Preference<'a> {
    /// The document.
    pub doc: Doc<'a>,
    /// The name of the rendered preference.
    pub name: &'a str,
    /// `{name, displayName, description}` as seen by templates.
    pub info: Value,
    /// Parts to merge, in order.
    pub parts: Vec<(&'a str, usize)>,
    /// Inline fragment merged after the parts.
    pub template: Option<&'a Value>,
    /// Labels added to the object (values may be templates).
    pub labels: Option<&'a Value>,
    /// Annotations added to the object (values may be templates).
    pub annotations: Option<&'a Value>,
    /// Variables for the templates (over the parts' defaults).
    pub vars: Option<&'a Value>,
    /// Which kinds to emit.
    pub scopes: Scopes,
}

const SPEC_KEYS: &[&str] = &[
    "displayName",
    "description",
    "parts",
    "template",
    "labels",
    "annotations",
    "vars",
    "scopes",
];

impl<'a> Preference<'a> {
    /// Read a `Preference` document.
    pub fn parse(doc: Doc<'a>) -> Result<Preference<'a>, RenderError> {
        let name = doc.obj.name();
        if name.is_empty() {
            let not_text = doc
                .obj
                .value
                .pointer("/metadata/name")
                .is_some_and(|v| !v.is_null() && !v.is_string());
            let message = if not_text {
                "`metadata.name` must be a string; quote it (YAML reads a bare `y`, `n` or \
                 `true` as a boolean, and `1.10` as a number)"
            } else {
                "a Preference needs `metadata.name`"
            };
            return Err(doc.invalid(&[Step::Key("metadata"), Step::Key("name")], message.into()));
        }
        let spec = doc.spec_map(SPEC_KEYS)?;
        let mut info = Map::new();
        info.insert("name".into(), json!(name));
        let parts = doc.common_fields(
            spec,
            &mut info,
            &["template", "labels", "annotations", "vars"],
        )?;
        let scopes = Scopes::parse(&doc, spec.get("scopes"))?;
        Ok(Preference {
            name,
            info: Value::Object(info),
            parts,
            template: spec.get("template"),
            labels: spec.get("labels"),
            annotations: spec.get("annotations"),
            vars: spec.get("vars"),
            scopes,
            doc,
        })
    }
}

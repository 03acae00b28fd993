//! [`Family`]: an `InstancetypeFamily` document, its size table and its variants.

use serde_json::{Map, Value, json};

use super::{Doc, RenderError, Scopes};
use crate::load::locate::Step;

/// One row of a size table.
#[derive(Debug)]
pub struct Size {
    /// The size's name, e.g. `medium`.
    pub name: String,
    /// `{name, cpu, memory, …extra}` as seen by templates.
    pub value: Value,
}

/// One variant: a name suffix and the traits it changes.
#[derive(Debug)]
pub struct Variant {
    /// Appended to the size name, e.g. `1gi`; empty for the plain variant.
    pub suffix: String,
    /// Traits this variant overrides.
    pub traits: Option<Value>,
    /// `{suffix, …extra}` as seen by templates.
    pub value: Value,
}

/// An instancetype family: one class and version, many sizes.
#[derive(Debug)]
pub struct Family<'a> {
    /// The document.
    pub doc: Doc<'a>,
    /// Class plus version, e.g. `u1`: the prefix of every object name.
    pub id: String,
    /// `{name, version, id, displayName, description}` as seen by templates.
    pub info: Value,
    /// Parts to merge, in order.
    pub parts: Vec<(&'a str, usize)>,
    /// Inline fragment merged after the parts.
    pub template: Option<&'a Value>,
    /// Labels added to every object (values may be templates).
    pub labels: Option<&'a Value>,
    /// Annotations added to every object (values may be templates).
    pub annotations: Option<&'a Value>,
    /// The family's traits (before part defaults and variant overrides).
    pub traits: Option<&'a Value>,
    /// The size table, in order.
    pub sizes: Vec<Size>,
    /// The variants, in order (at least one).
    pub variants: Vec<Variant>,
    /// Which kinds to emit.
    pub scopes: Scopes,
}

const SPEC_KEYS: &[&str] = &[
    "version",
    "displayName",
    "description",
    "parts",
    "template",
    "labels",
    "annotations",
    "traits",
    "sizes",
    "variants",
    "scopes",
];

impl<'a> Family<'a> {
    /// Read an `InstancetypeFamily` document.
    pub fn parse(doc: Doc<'a>) -> Result<Family<'a>, RenderError> {
        let name = doc.obj.name();
        if name.is_empty() {
            let message = if doc
                .obj
                .value
                .pointer("/metadata/name")
                .is_some_and(|v| !v.is_null() && !v.is_string())
            {
                "`metadata.name` must be a string; quote it (YAML reads a bare `y`, `n` or \
                 `true` as a boolean, and `1.10` as a number)"
            } else {
                "an InstancetypeFamily needs `metadata.name` (its class prefix, e.g. `u`)"
            };
            return Err(doc.invalid(&[Step::Key("metadata"), Step::Key("name")], message.into()));
        }
        let spec = doc.spec_map(SPEC_KEYS)?;
        let version = match spec.get("version") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            None => String::new(),
            Some(_) => {
                return Err(doc.invalid(
                    &[Step::Key("spec"), Step::Key("version")],
                    "`version` must be a string or a number".into(),
                ));
            }
        };
        let id = format!("{name}{version}");
        let mut info = Map::new();
        info.insert("name".into(), json!(name));
        info.insert("version".into(), json!(version));
        info.insert("id".into(), json!(id));
        let parts = doc.common_fields(
            spec,
            &mut info,
            &["template", "labels", "annotations", "traits"],
        )?;
        let sizes = parse_sizes(&doc, &id, spec.get("sizes"))?;
        let variants = parse_variants(&doc, &id, spec.get("variants"))?;
        let scopes = Scopes::parse(&doc, spec.get("scopes"))?;
        Ok(Family {
            id,
            info: Value::Object(info),
            parts,
            template: spec.get("template"),
            labels: spec.get("labels"),
            annotations: spec.get("annotations"),
            traits: spec.get("traits"),
            sizes,
            variants,
            scopes,
            doc,
        })
    }
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn parse_sizes(doc: &Doc<'_>, id: &str, value: Option<&Value>) -> Result<Vec<Size>, RenderError> {
    let at = [Step::Key("spec"), Step::Key("sizes")];
    let Some(rows) = value.and_then(Value::as_array).filter(|r| !r.is_empty()) else {
        return Err(doc.invalid(
            &at,
            format!("family `{id}`: `sizes` must be a non-empty list of rows `[name, cpu, memory]` or mappings"),
        ));
    };
    let mut sizes: Vec<Size> = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let here = [at[0], at[1], Step::Index(i)];
        let mut value = Map::new();
        match row {
            Value::Array(cells) if (3..=4).contains(&cells.len()) => {
                value.insert("name".into(), cells[0].clone());
                value.insert("cpu".into(), cells[1].clone());
                value.insert("memory".into(), cells[2].clone());
                if let Some(extra) = cells.get(3) {
                    let Some(extra) = extra.as_object() else {
                        return Err(doc.invalid(
                            &here,
                            format!("family `{id}`: the fourth cell of a size row must be a mapping of extra fields"),
                        ));
                    };
                    for (k, v) in extra {
                        value.insert(k.clone(), v.clone());
                    }
                }
            }
            Value::Object(map) => value.clone_from(map),
            _ => {
                return Err(doc.invalid(
                    &here,
                    format!("family `{id}`: a size row is `[name, cpu, memory]`, `[name, cpu, memory, {{extra}}]` or a mapping with `name`, `cpu` and `memory`"),
                ));
            }
        }
        for key in ["cpu", "memory"] {
            if !value.contains_key(key) {
                return Err(doc.invalid(&here, format!("family `{id}`: size row has no `{key}`")));
            }
        }
        let Some(name) = value
            .get("name")
            .and_then(scalar_text)
            .filter(|n| !n.is_empty())
        else {
            return Err(doc.invalid(&here, format!("family `{id}`: size row has no `name`")));
        };
        value.insert("name".into(), json!(name));
        if sizes.iter().any(|s| s.name == name) {
            return Err(doc.invalid(
                &here,
                format!("family `{id}`: size `{name}` is listed twice"),
            ));
        }
        sizes.push(Size {
            name,
            value: Value::Object(value),
        });
    }
    Ok(sizes)
}

fn parse_variants(
    doc: &Doc<'_>,
    id: &str,
    value: Option<&Value>,
) -> Result<Vec<Variant>, RenderError> {
    let at = [Step::Key("spec"), Step::Key("variants")];
    let Some(value) = value else {
        return Ok(vec![Variant {
            suffix: String::new(),
            traits: None,
            value: json!({"suffix": ""}),
        }]);
    };
    let Some(items) = value.as_array().filter(|i| !i.is_empty()) else {
        return Err(doc.invalid(
            &at,
            format!("family `{id}`: `variants` must be a non-empty list"),
        ));
    };
    let mut variants: Vec<Variant> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let here = [at[0], at[1], Step::Index(i)];
        let Some(map) = item.as_object() else {
            return Err(doc.invalid(
                &here,
                format!("family `{id}`: a variant must be a mapping with `suffix`"),
            ));
        };
        let suffix = match map.get("suffix") {
            Some(v) => scalar_text(v).ok_or_else(|| {
                doc.invalid(
                    &here,
                    format!("family `{id}`: a variant's `suffix` must be a string"),
                )
            })?,
            None => String::new(),
        };
        let traits = map.get("traits").cloned();
        if traits.as_ref().is_some_and(|t| !t.is_object()) {
            return Err(doc.invalid(
                &here,
                format!("family `{id}`: a variant's `traits` must be a mapping"),
            ));
        }
        if variants.iter().any(|v| v.suffix == suffix) {
            return Err(doc.invalid(
                &here,
                format!("family `{id}`: variant suffix `{suffix}` is used twice"),
            ));
        }
        let mut value = map.clone();
        value.shift_remove("traits");
        value.insert("suffix".into(), json!(suffix));
        variants.push(Variant {
            suffix,
            traits,
            value: Value::Object(value),
        });
    }
    Ok(variants)
}

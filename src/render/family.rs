//! [`Family`]: an `InstancetypeFamily` document, its size table and its variants.

use serde_json::{Map, Value, json};

use super::{Doc, MAX_COMBINATIONS, RenderError, Scopes};
use crate::load::locate::Step;
use crate::model::Object;

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
            None => String::new(),
            Some(v) => {
                let at = [Step::Key("spec"), Step::Key("version")];
                name_text(v, "`version`", Some("version"), || doc.line_text(&at))
                    .map_err(|message| doc.invalid(&at, message))?
            }
        };
        let id = format!("{name}{version}");
        // Every object is named `{id}.{size}{suffix}`: a class prefix no name may start with
        // is one finding at the field to change, not one per object at each size row.
        if let Err(why) = crate::pipeline::check_name(&format!("{id}.a")) {
            let culprit = if crate::pipeline::check_name(&format!("{name}.a")).is_err() {
                [Step::Key("metadata"), Step::Key("name")]
            } else {
                [Step::Key("spec"), Step::Key("version")]
            };
            let shown = format!("{:?}", crate::diagnostic::shortened(&format!("{id}.")));
            return Err(doc.invalid(
                &culprit,
                format!(
                    "family `{id}`: every object it renders is named {shown} and a size, which \
                     is not a valid Kubernetes name: {why}"
                ),
            ));
        }
        let mut info = Map::new();
        info.insert("name".into(), json!(name));
        info.insert("version".into(), json!(version));
        info.insert("id".into(), json!(id));
        let parts = doc.common_fields(
            spec,
            &mut info,
            &["template", "labels", "annotations", "traits"],
        )?;
        within_limit(&doc, &id, spec)?;
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

/// What to say of two InstancetypeFamily documents of one name whose `version`s differ (`u`
/// version 1 and `u` version 2): a catalog document is told by its kind and name, as kustomize
/// and kpt tell resources, so two versions of a class are two names. Empty for anything else.
pub(super) fn versions_apart(first: &Object, second: &Object) -> String {
    let version = |obj: &Object| {
        obj.value
            .get("spec")
            .and_then(|spec| spec.get("version"))
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
    };
    if first.kind_str() != "InstancetypeFamily" {
        return String::new();
    }
    match (version(first), version(second)) {
        (Some(one), Some(other)) if one != other => {
            let class = second.name();
            format!(
                "; a family document is told by its kind and name, as kustomize and kpt tell \
                 resources, so two versions of one class need two names: write `name: \
                 {class}{one}` and `name: {class}{other}` without `version`, and give each its \
                 `instancetype.kubevirt.io/version` in `labels`"
            )
        }
        _ => String::new(),
    }
}

/// The text of a name-like scalar (a version, a size name, a variant suffix): a string, or a
/// whole number written in decimal. Anything else says why it must be quoted: a fraction
/// (`1.10`) is read as the number 1.1, a bare `on`, `n` or `true` as a boolean, and a whole
/// number written otherwise on the line `written` gives (`010`, `0x10`, `1e1`, `1_0`) as a number
/// whose decimal text is not what was written.
fn name_text<'l>(
    v: &Value,
    what: &str,
    key: Option<&str>,
    written: impl FnOnce() -> Option<&'l str>,
) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) if n.is_i64() || n.is_u64() => {
            let text = n.to_string();
            match written().and_then(|line| spelled_otherwise(line, &text, key)) {
                Some(token) => Err(format!(
                    "{what} must be a string; quote it (YAML reads `{token}` as the number \
                     {text}, which loses how it was written: `\"{token}\"`)"
                )),
                None => Ok(text),
            }
        }
        Value::Number(n) => Err(format!(
            "{what} must be a string; quote it (YAML reads it as the number {n}, which loses \
             how it was written: `\"1.10\"`, not `1.10`)"
        )),
        Value::Bool(b) => Err(format!(
            "{what} must be a string; quote it (YAML reads it as the boolean {b}: a bare `y`, \
             `n`, `on`, `off`, `yes`, `no`, `true` or `false` is one)"
        )),
        _ => Err(format!("{what} must be a string")),
    }
}

/// A token of `line` that YAML reads as the whole number `decimal` but that is not written so:
/// with leading zeros, in hexadecimal, octal or binary, with `_` between digits, a `+` sign
/// or an exponent. What follows a ` #` is a comment and is passed over. The token looked at is
/// the value of `key` (`name: 010`, `{suffix: 0x1f}`), or with no key the first cell of a flow
/// sequence (`- [020, 16, 16Gi]`); where the line has no such place (the value is on a line
/// of its own) or that place holds another value, any token of the line that reads as the
/// number, unless `decimal` itself is there too.
fn spelled_otherwise<'l>(line: &'l str, decimal: &str, key: Option<&str>) -> Option<&'l str> {
    let code = line.find(" #").map_or(line, |at| &line[..at]);
    let wanted: i128 = decimal.parse().ok()?;
    let reads_as_wanted = |token: &str| token != decimal && integer_value(token) == Some(wanted);
    // The value's own place settles it when it holds the number; where it holds something else
    // (one line of several flow rows: the place found is the first row's), the line is looked
    // at as a whole.
    if let Some(token) = value_token(code, key) {
        if token == decimal {
            return None;
        }
        if reads_as_wanted(token) {
            return Some(token);
        }
    }
    let mut tokens = code
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | '[' | ']' | '{' | '}' | ':'))
        .filter(|token| !token.is_empty());
    if tokens.clone().any(|token| token == decimal) {
        return None;
    }
    tokens.find(|token| reads_as_wanted(token))
}

/// The plain scalar written right after `key:` in `code` (one line, without its comment), or
/// with no key right after its first `[` (and any more opening it); `None` when there is no
/// such place or nothing follows it there.
fn value_token<'l>(code: &'l str, key: Option<&str>) -> Option<&'l str> {
    let after = match key {
        Some(key) => {
            let pattern = format!("{key}:");
            let mut from = 0;
            loop {
                let at = from + code[from..].find(&pattern)?;
                let before = code[..at].chars().next_back();
                let rest = &code[at + pattern.len()..];
                if before.is_none_or(|c| c.is_whitespace() || matches!(c, '{' | ',' | '-'))
                    && rest.chars().next().is_none_or(char::is_whitespace)
                {
                    break rest;
                }
                from = at + pattern.len();
            }
        }
        None => &code[code.find('[')? + 1..],
    };
    let token = after
        .trim_start_matches(|c: char| c == '[' || c.is_whitespace())
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ']' | '}'))
        .next()?;
    (!token.is_empty()).then_some(token)
}

/// The whole number a YAML 1.1 integer token (or a float token with a whole value) stands for;
/// `None` for anything else.
fn integer_value(token: &str) -> Option<i128> {
    let (negative, digits) = match token.as_bytes().first()? {
        b'-' => (true, &token[1..]),
        b'+' => (false, &token[1..]),
        _ => (false, token),
    };
    let digits = digits.replace('_', "");
    let value = if let Some(hex) = digits.strip_prefix("0x") {
        i128::from_str_radix(hex, 16).ok()?
    } else if let Some(octal) = digits.strip_prefix("0o") {
        i128::from_str_radix(octal, 8).ok()?
    } else if let Some(binary) = digits.strip_prefix("0b") {
        i128::from_str_radix(binary, 2).ok()?
    } else if digits.len() > 1
        && digits.starts_with('0')
        && digits.bytes().all(|b| b.is_ascii_digit())
    {
        i128::from_str_radix(&digits, 8)
            .or_else(|_| digits.parse())
            .ok()?
    } else if digits.bytes().all(|b| b.is_ascii_digit()) && !digits.is_empty() {
        digits.parse().ok()?
    } else if digits.contains(['e', 'E']) && digits.bytes().next()?.is_ascii_digit() {
        let float: f64 = digits.parse().ok()?;
        if float.fract() != 0.0 || float.abs() > 1e30 {
            return None;
        }
        // A whole value well inside the range: the cast keeps it.
        #[allow(clippy::cast_possible_truncation)]
        let whole = float as i128;
        whole
    } else {
        return None;
    };
    Some(if negative { -value } else { value })
}

/// The field to name when a family's size table makes too many combinations: `sizes`, unless
/// the variants are more.
pub(super) fn table_at(sizes: usize, variants: usize) -> &'static [Step<'static>] {
    if variants > sizes {
        &[Step::Key("spec"), Step::Key("variants")]
    } else {
        &[Step::Key("spec"), Step::Key("sizes")]
    }
}

/// Refuse a family whose sizes × variants alone pass [`MAX_COMBINATIONS`], before its rows
/// are read: 1,000 sizes × 1,000 variants fit in 40 KB.
fn within_limit(doc: &Doc<'_>, id: &str, spec: &Map<String, Value>) -> Result<(), RenderError> {
    // What is no list is refused when it is read; here it counts as one.
    let count = |key: &str| {
        spec.get(key)
            .and_then(Value::as_array)
            .map_or(1, Vec::len)
            .max(1)
    };
    let (sizes, variants) = (count("sizes"), count("variants"));
    let combinations = sizes.saturating_mul(variants);
    if combinations <= MAX_COMBINATIONS {
        return Ok(());
    }
    let plural = |n: usize| if n == 1 { "" } else { "s" };
    Err(doc.invalid(
        table_at(sizes, variants),
        format!(
            "family `{id}`: {sizes} size{} × {variants} variant{} are {combinations} \
             combinations, more than the {MAX_COMBINATIONS} a catalog may render",
            plural(sizes),
            plural(variants)
        ),
    ))
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
                // `[small, 4, {gpu: …}]`: the extra fields where the memory belongs, a row
                // that forgot its memory (a template reading the extra cells would otherwise
                // fail far from this row).
                if let Some(k) = (1..3).find(|&k| cells[k].is_object() || cells[k].is_array()) {
                    let cell = ["", "cpu", "memory"][k];
                    return Err(doc.invalid(
                        &[at[0], at[1], Step::Index(i), Step::Index(k)],
                        format!(
                            "family `{id}`: the {} cell of a size row is its {cell}, not a {}: \
                             a row is `[name, cpu, memory]` or `[name, cpu, memory, {{extra}}]`",
                            ["first", "second", "third"][k],
                            if cells[k].is_object() {
                                "mapping"
                            } else {
                                "list"
                            }
                        ),
                    ));
                }
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
                        // The positional cells say these; a second say would silently win.
                        if ["name", "cpu", "memory"].contains(&k.as_str()) {
                            return Err(doc.invalid(
                                &[at[0], at[1], Step::Index(i), Step::Index(3), Step::Key(k)],
                                format!(
                                    "family `{id}`: `{k}` is the row's own cell; the fourth \
                                     cell holds only extra fields"
                                ),
                            ));
                        }
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
        let name = match value.get("name") {
            None | Some(Value::Null) => String::new(),
            Some(v) => {
                // A row `[name, cpu, memory]` writes the name first; a mapping row after
                // `name:`, on a line of its own or not.
                let (key, steps) = if row.is_array() {
                    (None, here.to_vec())
                } else {
                    (
                        Some("name"),
                        vec![here[0], here[1], here[2], Step::Key("name")],
                    )
                };
                name_text(v, "a size's `name`", key, || doc.line_text(&steps))
                    .map_err(|message| doc.invalid(&steps, format!("family `{id}`: {message}")))?
            }
        };
        if name.is_empty() {
            return Err(doc.invalid(&here, format!("family `{id}`: size row has no `name`")));
        }
        value.insert("name".into(), json!(name));
        if let Some(first) = sizes.iter().position(|s| s.name == name) {
            let first = doc.at(&[here[0], here[1], Step::Index(first)]).line;
            let first = first
                .map(|l| format!(" (first at line {l})"))
                .unwrap_or_default();
            return Err(doc.invalid(
                &here,
                format!("family `{id}`: size `{name}` is listed twice{first}"),
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
            Some(v) => {
                let steps = [here[0], here[1], here[2], Step::Key("suffix")];
                name_text(v, "a variant's `suffix`", Some("suffix"), || {
                    doc.line_text(&steps)
                })
                .map_err(|message| doc.invalid(&steps, format!("family `{id}`: {message}")))?
            }
            None => String::new(),
        };
        // Every object of the variant is named `{id}.{size}{suffix}`: a suffix no name may end
        // with is one finding at the suffix, not one per object at each size row.
        if let Err(why) = crate::pipeline::check_name(&format!("{id}.a{suffix}")) {
            let steps = [here[0], here[1], here[2], Step::Key("suffix")];
            let shown = format!(
                "{:?}",
                crate::diagnostic::shortened(&format!("{id}.SIZE{suffix}"))
            );
            return Err(doc.invalid(
                &steps,
                format!(
                    "family `{id}`: every object of variant `{suffix}` is named {shown}, which \
                     is not a valid Kubernetes name: {why}"
                ),
            ));
        }
        let traits = map.get("traits").cloned();
        if traits.as_ref().is_some_and(|t| !t.is_object()) {
            return Err(doc.invalid(
                &here,
                format!("family `{id}`: a variant's `traits` must be a mapping"),
            ));
        }
        if let Some(first) = variants.iter().position(|v| v.suffix == suffix) {
            let first = doc.at(&[at[0], at[1], Step::Index(first)]).line;
            let first = first
                .map(|l| format!(" (first at line {l})"))
                .unwrap_or_default();
            let what = if suffix.is_empty() {
                "the plain variant (no `suffix`) is listed twice".to_string()
            } else {
                format!("variant suffix `{suffix}` is used twice")
            };
            return Err(doc.invalid(&here, format!("family `{id}`: {what}{first}")));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_number_written_otherwise_than_in_decimal_is_found_on_its_line() {
        for (token, value) in [
            ("010", Some(8)),
            ("09", Some(9)),
            ("0x1F", Some(31)),
            ("0x1f", Some(31)),
            ("0o17", Some(15)),
            ("0b101", Some(5)),
            ("1_000", Some(1000)),
            ("+7", Some(7)),
            ("-0x10", Some(-16)),
            ("2e3", Some(2000)),
            ("1.5e1", Some(15)),
            ("1.25e1", None),
            ("1e99", None),
            ("small", None),
            ("1Gi", None),
            ("", None),
        ] {
            assert_eq!(integer_value(token), value, "{token}");
        }
        assert_eq!(
            spelled_otherwise("  - [010, 1, 1Gi]", "8", None),
            Some("010")
        );
        assert_eq!(
            spelled_otherwise("  version: 0x10  # sixteen", "16", Some("version")),
            Some("0x10")
        );
        // The name's own cell is judged, whatever the other cells hold.
        assert_eq!(spelled_otherwise("  - [8, 010, 1Gi]", "8", None), None);
        assert_eq!(
            spelled_otherwise("  - [020, 16, 16Gi]", "16", None),
            Some("020")
        );
        assert_eq!(
            spelled_otherwise("  sizes: [[010, 1, 1Gi]]", "8", None),
            Some("010")
        );
        // Several rows on one line: the second row's name is found on the line.
        assert_eq!(
            spelled_otherwise("  sizes: [[a, 1, 1Gi], [0x10, 2, 2Gi]]", "16", None),
            Some("0x10")
        );
        assert_eq!(
            spelled_otherwise("  version: 10", "10", Some("version")),
            None
        );
        assert_eq!(
            spelled_otherwise("    - {cpu: 8, name: 010}", "8", Some("name")),
            Some("010")
        );
        assert_eq!(
            spelled_otherwise("      name: 010", "8", Some("name")),
            Some("010")
        );
        assert_eq!(
            spelled_otherwise("    - {suffix: 0x1f, gpu: x}", "31", Some("suffix")),
            Some("0x1f")
        );
        // `name:` inside another key is not the key.
        assert_eq!(
            spelled_otherwise("    - {rename: 010, name: 8}", "8", Some("name")),
            None
        );
        // A comment is passed over.
        assert_eq!(
            spelled_otherwise("  version: 3 # was 0x3", "3", Some("version")),
            None
        );
        // The value on a line of its own: any token of the line.
        assert_eq!(
            spelled_otherwise("        0x10", "16", Some("version")),
            Some("0x10")
        );
    }
}

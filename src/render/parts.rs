//! [`PartLibrary`]: the named fragments of every `Parts` document, and how a list of part
//! names expands into the fragments to merge.

use foldhash::HashMap;

use serde_json::Value;

use super::{Doc, RenderError};
use crate::load::locate::Step;

/// One named fragment.
#[derive(Debug)]
pub struct Part<'a> {
    /// The part's name.
    pub name: &'a str,
    /// The document that defines it.
    pub doc: Doc<'a>,
    /// Parts applied before this one.
    pub parts: Vec<(&'a str, usize)>,
    /// Default traits (families) or vars (preferences).
    pub defaults: Option<&'a Value>,
    /// The `metadata` fragment, template leaves unrendered.
    pub metadata: Option<&'a Value>,
    /// The `spec` fragment, template leaves unrendered.
    pub spec: Option<&'a Value>,
}

impl Part<'_> {
    /// The path of a field of this part inside its document.
    pub fn steps<'s>(&'s self, rest: &'s [Step<'s>]) -> Vec<Step<'s>> {
        let mut steps = vec![Step::Key("parts"), Step::Key(self.name)];
        steps.extend_from_slice(rest);
        steps
    }
}

/// Every part of a catalog, by name.
#[derive(Debug, Default)]
pub struct PartLibrary<'a> {
    parts: HashMap<&'a str, Part<'a>>,
}

const PART_KEYS: &[&str] = &["parts", "defaults", "metadata", "spec"];

impl<'a> PartLibrary<'a> {
    /// Add the parts of one `Parts` document.
    pub fn add(&mut self, doc: Doc<'a>) -> Result<(), RenderError> {
        for key in doc.obj.value.as_object().into_iter().flat_map(|m| m.keys()) {
            if !matches!(key.as_str(), "apiVersion" | "kind" | "metadata" | "parts") {
                return Err(doc.invalid(
                    &[Step::Key(key)],
                    format!("unknown field `{key}` in a Parts document (expected `parts`)"),
                ));
            }
        }
        let Some(parts) = doc.obj.value.get("parts") else {
            return Ok(());
        };
        let Some(parts) = parts.as_object() else {
            return Err(doc.invalid(
                &[Step::Key("parts")],
                "`parts` must be a mapping from part name to fragment".into(),
            ));
        };
        for (name, body) in parts {
            let at = [Step::Key("parts"), Step::Key(name)];
            let Some(body) = body.as_object() else {
                return Err(doc.invalid(&at, format!("part `{name}` must be a mapping")));
            };
            for key in body.keys() {
                if !PART_KEYS.contains(&key.as_str()) {
                    return Err(doc.invalid(
                        &[at[0], at[1], Step::Key(key)],
                        format!(
                            "unknown field `{key}` in part `{name}` (expected one of {})",
                            PART_KEYS.join(", ")
                        ),
                    ));
                }
            }
            let sub = name_list(&doc, &[at[0], at[1], Step::Key("parts")], body.get("parts"))?;
            let defaults = body.get("defaults");
            if defaults.is_some_and(|d| !d.is_object()) {
                return Err(doc.invalid(
                    &[at[0], at[1], Step::Key("defaults")],
                    format!("`defaults` of part `{name}` must be a mapping"),
                ));
            }
            let part = Part {
                name,
                doc: doc.clone(),
                parts: sub,
                defaults,
                metadata: body.get("metadata"),
                spec: body.get("spec"),
            };
            if let Some(first) = self.parts.get(name.as_str()) {
                return Err(doc.invalid(
                    &at,
                    format!(
                        "part `{name}` is defined twice, first at {}",
                        first.doc.at(&part.steps(&[]))
                    ),
                ));
            }
            self.parts.insert(name, part);
        }
        Ok(())
    }

    /// Every part, in no particular order.
    pub fn parts(&self) -> impl Iterator<Item = &Part<'a>> {
        self.parts.values()
    }

    /// The parts named by `roots`, each preceded by the parts it names, each part once, in
    /// first-use order. `referrer` and `at` locate the list for error messages.
    pub fn resolve(
        &self,
        roots: &[(&'a str, usize)],
        referrer: &Doc<'a>,
        at: &[Step<'_>],
    ) -> Result<Vec<&Part<'a>>, RenderError> {
        let mut out: Vec<&Part<'a>> = Vec::new();
        let mut stack: Vec<&str> = Vec::new();
        for (name, index) in roots {
            let mut here = at.to_vec();
            here.push(Step::Index(*index));
            self.visit(name, referrer, &here, &mut stack, &mut out)?;
        }
        Ok(out)
    }

    fn visit<'s>(
        &'s self,
        name: &'s str,
        referrer: &Doc<'a>,
        at: &[Step<'_>],
        stack: &mut Vec<&'s str>,
        out: &mut Vec<&'s Part<'a>>,
    ) -> Result<(), RenderError> {
        if out.iter().any(|p| p.name == name) {
            return Ok(());
        }
        if stack.contains(&name) {
            stack.push(name);
            return Err(referrer.invalid(
                at,
                format!(
                    "parts include each other in a cycle: {}",
                    stack.join(" -> ")
                ),
            ));
        }
        let Some(part) = self.parts.get(name) else {
            let mut known: Vec<&&str> = self.parts.keys().collect();
            known.sort();
            let hint = closest(name, known.iter().map(|k| **k));
            return Err(referrer.invalid(
                at,
                match hint {
                    Some(h) => format!("unknown part `{name}` (did you mean `{h}`?)"),
                    None => format!("unknown part `{name}`"),
                },
            ));
        };
        stack.push(name);
        for (sub, index) in &part.parts {
            let rest = [Step::Key("parts"), Step::Index(*index)];
            let here = part.steps(&rest);
            self.visit(sub, &part.doc, &here, stack, out)?;
        }
        stack.pop();
        out.push(part);
        Ok(())
    }
}

/// A list of part names (with their positions, for messages).
pub fn name_list<'a>(
    doc: &Doc<'a>,
    at: &[Step<'_>],
    value: Option<&'a Value>,
) -> Result<Vec<(&'a str, usize)>, RenderError> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let Some(items) = value.as_array() else {
        return Err(doc.invalid(at, "`parts` must be a list of part names".into()));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item.as_str() {
            Some(s) => Ok((s, i)),
            None => {
                let mut here = at.to_vec();
                here.push(Step::Index(i));
                Err(doc.invalid(&here, "a part name must be a string".into()))
            }
        })
        .collect()
}

/// The known name closest to `name`, when it is close enough to be a typo.
fn closest<'k>(name: &str, known: impl Iterator<Item = &'k str>) -> Option<&'k str> {
    known
        .map(|k| (edit_distance(name, k), k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 4))
        .min()
        .map(|(_, k)| k)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typo_hints() {
        let known = ["linux", "windows", "efi"];
        assert_eq!(closest("linx", known.iter().copied()), Some("linux"));
        assert_eq!(closest("macos", known.iter().copied()), None);
    }
}

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

/// Every part of a catalog, by name, and where to look for a name the catalog does not
/// define: the parts of the `--catalog` files, then the shipped catalog's.
#[derive(Debug, Default)]
pub struct PartLibrary<'a> {
    parts: HashMap<&'a str, Part<'a>>,
    fallback: Option<Box<PartLibrary<'a>>>,
    /// Whether the shipped catalog's parts were left out of the fallbacks
    /// (`--no-default-catalog`): an unknown part of a shipped name then says so.
    shipped_off: bool,
}

const PART_KEYS: &[&str] = &["parts", "defaults", "metadata", "spec"];

/// How deep parts may build on parts.
const MAX_PART_DEPTH: usize = 64;

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
                            "unknown field `{key}` in part `{name}`{} (expected one of {})",
                            super::did_you_mean(key, PART_KEYS),
                            PART_KEYS.join(", ")
                        ),
                    ));
                }
            }
            let metadata = body.get("metadata").and_then(Value::as_object);
            for key in ["name", "generateName"] {
                if metadata.is_some_and(|m| m.contains_key(key)) {
                    return Err(doc.invalid(
                        &[at[0], at[1], Step::Key("metadata"), Step::Key(key)],
                        format!(
                            "`metadata.{key}` of part `{name}` cannot be set: each object is \
                             named after its family and size, or after its preference"
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
                return Err(RenderError::PartRedefined {
                    location: doc.at(&at),
                    object: (!doc.obj.name().is_empty()).then(|| Box::new(doc.obj.object_ref())),
                    name: name.clone(),
                    other: Box::new(first.doc.at(&part.steps(&[]))),
                });
            }
            self.parts.insert(name, part);
        }
        Ok(())
    }

    /// Every part this library defines (not its fallback's), in no particular order.
    pub fn parts(&self) -> impl Iterator<Item = &Part<'a>> {
        self.parts.values()
    }

    /// The part named `name` this library defines (not a fallback's).
    pub fn own(&self, name: &str) -> Option<&Part<'a>> {
        self.parts.get(name)
    }

    /// Whether `part` is one this library defines (not one of its fallback's).
    pub fn defines(&self, part: &Part<'a>) -> bool {
        self.own(part.name)
            .is_some_and(|own| std::ptr::eq(own, part))
    }

    /// Whether every part name the catalog's lists use (`names`, and those its parts
    /// use) is defined here.
    pub fn has_all<'n>(&self, mut names: impl Iterator<Item = &'n str>) -> bool {
        let ok = |name: &str| self.parts.contains_key(name);
        names.all(ok)
            && self
                .parts
                .values()
                .all(|p| p.parts.iter().all(|(n, _)| ok(n)))
    }

    /// Look names this library does not define up in `fallback` (which may have its own).
    pub fn set_fallback(&mut self, fallback: PartLibrary<'a>) {
        self.fallback = Some(Box::new(fallback));
    }

    /// Say, of an unknown part that the shipped catalog defines, that it is turned off.
    pub fn set_shipped_off(&mut self) {
        self.shipped_off = true;
    }

    /// The part named `name`: this library's, else a fallback's.
    fn find(&self, name: &str) -> Option<&Part<'a>> {
        match self.own(name) {
            Some(part) => Some(part),
            None => self.fallback.as_deref()?.find(name),
        }
    }

    /// What is wrong in the parts this library defines that no name of `roots` reaches
    /// (directly or through other parts): names no library defines and cycles, as
    /// [`Self::resolve`] reports them for a part in use. A shared library checked on its own
    /// would otherwise pass with a misspelt or circular reference. In document order.
    pub fn unused_errors<'r>(&self, roots: impl Iterator<Item = &'r str>) -> Vec<RenderError> {
        let mut reached: std::collections::HashSet<&str> = std::collections::HashSet::new();
        let mut todo: Vec<&str> = roots.collect();
        while let Some(name) = todo.pop() {
            if reached.insert(name)
                && let Some(part) = self.find(name)
            {
                todo.extend(part.parts.iter().map(|(n, _)| *n));
            }
        }
        let mut unused: Vec<&Part<'a>> =
            self.parts().filter(|p| !reached.contains(p.name)).collect();
        let place = |p: &Part<'a>| {
            let index = (p.doc.obj.value.get("parts").and_then(Value::as_object))
                .and_then(|parts| parts.keys().position(|k| k == p.name));
            (p.doc.obj.origin.clone(), index)
        };
        unused.sort_by_cached_key(|p| place(p));
        unused
            .into_iter()
            .filter_map(|part| {
                // The part itself is the root: a cycle is told from it (`a -> b -> a`). Its
                // own name is defined, so `at` is never reported.
                let who = format!("part `{}`", part.name);
                self.resolve(&[(part.name, 0)], &part.doc, &who, &part.steps(&[]))
                    .err()
            })
            .flatten()
            .collect()
    }

    /// Every name this library and its fallbacks define.
    fn known(&self) -> Vec<&str> {
        let mut known: Vec<&str> = self.parts.keys().copied().collect();
        if let Some(fallback) = &self.fallback {
            known.extend(fallback.known());
        }
        known.sort_unstable();
        known.dedup();
        known
    }

    /// The parts named by `roots`, each preceded by the parts it names, each part once, in
    /// first-use order. `referrer` (named `who` in messages) and `at` locate the list for
    /// error messages. Every unknown name is reported.
    ///
    /// Every name, the names inside borrowed parts included, is looked up here, then in the
    /// fallbacks: a part the catalog defines replaces a fallback's part of the same name
    /// everywhere, also where a borrowed part builds on it.
    pub fn resolve(
        &self,
        roots: &[(&'a str, usize)],
        referrer: &Doc<'a>,
        who: &str,
        at: &[Step<'_>],
    ) -> Result<Vec<&Part<'a>>, Vec<RenderError>> {
        let mut out: Vec<&Part<'a>> = Vec::new();
        let mut stack: Vec<&Part<'a>> = Vec::new();
        let mut errors = Vec::new();
        for (name, index) in roots {
            let mut here = at.to_vec();
            here.push(Step::Index(*index));
            let visit = Visit {
                name,
                referrer,
                who,
                at: &here,
            };
            // A failure leaves the parts it was inside of on the stack.
            stack.clear();
            if let Err(e) = self.visit(&visit, &mut stack, &mut out) {
                errors.push(e);
            }
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors)
        }
    }

    fn visit<'s>(
        &'s self,
        visit: &Visit<'_, 'a, '_>,
        stack: &mut Vec<&'s Part<'a>>,
        out: &mut Vec<&'s Part<'a>>,
    ) -> Result<(), RenderError> {
        let name = visit.name;
        let Some(part) = self.find(name) else {
            let known = self.known();
            let hint = closest(name, known.iter().copied());
            let who = visit.who;
            let message = if self.shipped_off && super::embedded::is_shipped_part(name) {
                format!(
                    "{who}: unknown part `{name}`: the shipped catalog has it, but is turned \
                     off here (`--no-default-catalog`)"
                )
            } else {
                match hint {
                    Some(h) => format!("{who}: unknown part `{name}` (did you mean `{h}`?)"),
                    None => format!("{who}: unknown part `{name}`"),
                }
            };
            return Err(RenderError::UnknownPart {
                location: visit.referrer.at(visit.at),
                object: visit.referrer.object_ref(),
                message,
            });
        };
        if out.iter().any(|p| std::ptr::eq(*p, part)) {
            return Ok(());
        }
        if stack.iter().any(|p| std::ptr::eq(*p, part)) {
            let mut chain: Vec<String> = stack.iter().map(|p| p.name.to_string()).collect();
            chain.push(name.to_string());
            // A cycle closed inside the shipped catalog's parts was opened by a part of the
            // user's that took a shipped one's name: reported where that part names the next
            // one, which is a line the user can open and change.
            let mut location = visit.referrer.at(visit.at);
            let mut object = visit.referrer.object_ref();
            if super::embedded::is_shipped(&location.path) {
                let own = (0..stack.len())
                    .rev()
                    .find(|&k| !super::embedded::is_shipped(&stack[k].doc.obj.origin.path));
                if let Some(k) = own {
                    let part = stack[k];
                    let next = stack.get(k + 1).map_or(name, |p| p.name);
                    if let Some((_, index)) = part.parts.iter().find(|(sub, _)| *sub == next) {
                        let rest = [Step::Key("parts"), Step::Index(*index)];
                        location = part.doc.at(&part.steps(&rest));
                        object = part.doc.object_ref();
                    }
                }
            }
            return Err(RenderError::PartCycle {
                location,
                object,
                chain,
            });
        }
        if stack.len() >= MAX_PART_DEPTH {
            return Err(visit.referrer.invalid(
                visit.at,
                format!("parts include each other more than {MAX_PART_DEPTH} deep"),
            ));
        }
        stack.push(part);
        let who = format!("part `{}`", part.name);
        for (sub, index) in &part.parts {
            let rest = [Step::Key("parts"), Step::Index(*index)];
            let here = part.steps(&rest);
            let inner = Visit {
                name: sub,
                referrer: &part.doc,
                who: &who,
                at: &here,
            };
            self.visit(&inner, stack, out)?;
        }
        stack.pop();
        out.push(part);
        Ok(())
    }
}

/// One name of a parts list being resolved, and where it is written.
struct Visit<'v, 'a, 's> {
    name: &'v str,
    referrer: &'v Doc<'a>,
    /// Who names it, for messages: ``preference `windows.11` ``, ``part `rhel` ``.
    who: &'v str,
    at: &'v [Step<'s>],
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

/// The known name closest to `name`, when it is close enough to be a typo: at most two edits
/// away, or one for every four bytes of the known name, whichever is more.
fn closest<'k>(name: &str, known: impl Iterator<Item = &'k str>) -> Option<&'k str> {
    let near = crate::diagnostic::Near::new(name);
    known
        .filter_map(|k| {
            // No hint for a name longer than any Kubernetes name: the count would take time
            // that grows with the square of the length.
            if k.len() > 253 || near.char_count() > 253 {
                return None;
            }
            near.within(k, 2.max(k.len() / 4)).map(|d| (d, k))
        })
        .min()
        .map(|(_, k)| k)
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

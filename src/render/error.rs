//! [`RenderError`]: why a catalog could not be rendered.

use std::fmt;

use crate::diagnostic::codes;
use crate::origin::Origin;

/// The combination being rendered when something failed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Combination {
    /// One size (and variant) of an instancetype family.
    Instancetype {
        /// The family with its version, e.g. `u1`.
        family: String,
        /// The size, e.g. `medium`.
        size: String,
        /// The variant suffix, empty for the plain variant.
        variant: String,
    },
    /// One preference.
    Preference {
        /// The preference's name.
        name: String,
    },
    /// A part that no family or preference uses: only its templates' syntax is checked.
    UnusedPart {
        /// The part's name.
        name: String,
    },
}

impl fmt::Display for Combination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Combination::Instancetype {
                family,
                size,
                variant,
            } if variant.is_empty() => write!(f, "family `{family}` size `{size}`"),
            Combination::Instancetype {
                family,
                size,
                variant,
            } => write!(f, "family `{family}` size `{size}` variant `{variant}`"),
            Combination::Preference { name } => write!(f, "preference `{name}`"),
            Combination::UnusedPart { name } => {
                write!(f, "part `{name}`, which no family or preference uses")
            }
        }
    }
}

impl Combination {
    /// The family (`u1`) or preference it belongs to.
    pub(super) fn owner(&self) -> String {
        match self {
            Combination::Instancetype { family, .. } => family.clone(),
            Combination::Preference { name } => format!("preference {name}"),
            Combination::UnusedPart { name } => format!("part {name}"),
        }
    }

    /// What tells this combination from the others of its family or preference: `size
    /// `medium``, `size `large` variant `1gi``, `preference `fedora``.
    fn within_owner(&self) -> String {
        match self {
            Combination::Instancetype { size, variant, .. } if variant.is_empty() => {
                format!("size `{size}`")
            }
            Combination::Instancetype { size, variant, .. } => {
                format!("size `{size}` variant `{variant}`")
            }
            other => other.to_string(),
        }
    }
}

/// How many of the other combinations a failing leaf lists by name.
const OTHERS_NAMED: usize = 3;

/// ` (and 2 more: size `large`, size `xlarge`)` for the other combinations a leaf fails
/// for besides `first`; empty when there are none. Those of other families are named with
/// their family, and the families are listed.
fn also(first: &Combination, others: &[Combination]) -> String {
    if others.is_empty() {
        return String::new();
    }
    let owner = first.owner();
    let mut named: Vec<String> = others
        .iter()
        .take(OTHERS_NAMED)
        .map(|c| {
            if c.owner() == owner {
                c.within_owner()
            } else {
                c.to_string()
            }
        })
        .collect();
    if others.len() > OTHERS_NAMED {
        named.push("…".into());
    }
    let mut families: Vec<&str> = Vec::new();
    for c in others {
        if let Combination::Instancetype { family, .. } = c
            && c.owner() != owner
            && !families.contains(&family.as_str())
        {
            families.push(family);
        }
    }
    let families = match families.as_slice() {
        [] => String::new(),
        [one] => format!("; family `{one}` too"),
        [init @ .., last] => format!(
            "; families {} and `{last}` too",
            init.iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!(
        " (and {} more: {}{families})",
        others.len(),
        named.join(", ")
    )
}

/// Why a catalog could not be rendered. Every variant names the catalog file and line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RenderError {
    /// A template leaf failed: an undefined variable, a syntax error, a runaway loop.
    #[error("{location}: cannot render `{field}` for {combination}{}{note}", also(.combination, .others))]
    Template {
        /// The file and line of the failing leaf.
        location: Origin,
        /// What was being rendered.
        combination: Box<Combination>,
        /// The other combinations the same leaf fails for, reported with this one.
        others: Vec<Combination>,
        /// The family or preference document being rendered (`InstancetypeFamily/u`), when
        /// it has a name.
        object: Option<Box<crate::origin::ObjectRef>>,
        /// The field holding the template, e.g. `parts.linux.spec.annotations`.
        field: String,
        /// How the leaf came to be rendered there, when that is not plain (a catalog's own
        /// part that a borrowed part names), with its leading blank; else empty.
        note: String,
        /// minijinja's own error.
        #[source]
        source: Box<minijinja::Error>,
    },
    /// A template leaf rendered to something we refuse to emit (too large, not representable).
    #[error("{location}: cannot render `{field}` for {combination}{}: {message}", also(.combination, .others))]
    Output {
        /// The file and line of the failing leaf.
        location: Origin,
        /// What was being rendered.
        combination: Box<Combination>,
        /// The other combinations the same leaf fails for, reported with this one.
        others: Vec<Combination>,
        /// The family or preference document being rendered (`InstancetypeFamily/u`), when
        /// it has a name.
        object: Option<Box<crate::origin::ObjectRef>>,
        /// The field holding the template.
        field: String,
        /// What is wrong with the output.
        message: String,
    },
    /// A catalog document does not follow the format.
    #[error("{location}: {message}")]
    Invalid {
        /// The file and line of the offending field.
        location: Origin,
        /// The catalog document (`InstancetypeFamily/u`), when it has a name.
        object: Option<Box<crate::origin::ObjectRef>>,
        /// What is wrong.
        message: String,
    },
    /// Parts that name each other in a circle.
    #[error("{location}: parts include each other in a cycle: {}", cycle_text(.chain))]
    PartCycle {
        /// The file and line of the name that closes the cycle.
        location: Origin,
        /// The `Parts` document (or family or preference) where that name is written, when it
        /// has a name.
        object: Option<Box<crate::origin::ObjectRef>>,
        /// The names from the list being resolved to the repeated one (`a -> b -> a`; it may
        /// lead into the cycle: `x -> a -> b -> a`).
        chain: Vec<String>,
    },
    /// A family, preference or part names a part that is defined nowhere: the catalog's
    /// documents, the `--catalog` files or the shipped catalog.
    #[error("{location}: {message}")]
    UnknownPart {
        /// The file and line of the name.
        location: Origin,
        /// The catalog document that names it (`Preference/fedora`), when it has a name.
        object: Option<Box<crate::origin::ObjectRef>>,
        /// What is wrong, with the nearest known name.
        message: String,
    },
    /// A family or preference defined twice (same kind, namespace and name): the duplicate
    /// rule's finding, reported here so that the second definition is not rendered too.
    #[error("{location}: {object} is defined twice: first at {other} (document {}){hint}", .other.index + 1)]
    Redefined {
        /// The second definition.
        location: Origin,
        /// The family or preference.
        object: Box<crate::origin::ObjectRef>,
        /// The first definition.
        other: Box<Origin>,
        /// What to do instead, where the two say what was meant (two versions of one class);
        /// empty, or beginning with `; `.
        hint: String,
    },
    /// Two `Parts` documents define a part of the same name.
    #[error("{location}: part `{name}` is defined twice, first at {other}")]
    PartRedefined {
        /// The second definition.
        location: Origin,
        /// The `Parts` document of the second definition, when it has a name.
        object: Option<Box<crate::origin::ObjectRef>>,
        /// The part's name.
        name: String,
        /// The first definition.
        other: Box<Origin>,
    },
    /// Two catalog entries render an object of the same kind and name.
    #[error("{location}: {kind} `{name}` is rendered twice, also from {other}")]
    Duplicate {
        /// The second definition.
        location: Origin,
        /// The kind.
        kind: String,
        /// The name.
        name: String,
        /// The first definition.
        other: Box<Origin>,
    },
}

/// A cycle's chain as a message shows it: the cycle itself (`a -> b -> a`), then the parts
/// that led into it, which are not part of the mistake (`(reached from x)`).
fn cycle_text(chain: &[String]) -> String {
    let start = chain
        .last()
        .and_then(|last| chain.iter().position(|n| n == last))
        .unwrap_or(0);
    let cycle = chain[start..].join(" -> ");
    if start == 0 {
        cycle
    } else {
        format!("{cycle} (reached from {})", chain[..start].join(" -> "))
    }
}

impl RenderError {
    /// The file and line the error is about.
    pub fn location(&self) -> &Origin {
        match self {
            RenderError::Template { location, .. }
            | RenderError::Output { location, .. }
            | RenderError::Invalid { location, .. }
            | RenderError::PartCycle { location, .. }
            | RenderError::UnknownPart { location, .. }
            | RenderError::Redefined { location, .. }
            | RenderError::PartRedefined { location, .. }
            | RenderError::Duplicate { location, .. } => location,
        }
    }

    /// Name the family or preference document being rendered, for an error of a template
    /// leaf ([`Template`](RenderError::Template) or [`Output`](RenderError::Output)).
    pub(super) fn set_object(&mut self, owner: Option<crate::origin::ObjectRef>) {
        if let RenderError::Template { object, .. } | RenderError::Output { object, .. } = self {
            *object = owner.map(Box::new);
        }
    }

    /// Add `hint` (what to do, when there is something to say) to a template error's note.
    pub(super) fn add_hint(&mut self, hint: &str) {
        if let RenderError::Template { note, .. } = self
            && !hint.is_empty()
        {
            note.push_str(&format!(" ({hint})"));
        }
    }

    /// Whether two errors of a leaf say the same, whatever they were rendering: a syntax error,
    /// or a name missing alike.
    pub(super) fn same_cause(&self, other: &RenderError) -> bool {
        match (self, other) {
            (
                RenderError::Template {
                    source: a, note: x, ..
                },
                RenderError::Template {
                    source: b, note: y, ..
                },
            ) => x == y && a.to_string() == b.to_string(),
            (RenderError::Output { message: a, .. }, RenderError::Output { message: b, .. }) => {
                a == b
            }
            _ => false,
        }
    }

    /// Record that the leaf of this error fails for the combination of `other` too (an error
    /// of the same leaf, [`Template`](RenderError::Template) or
    /// [`Output`](RenderError::Output)); a combination already named is not named again.
    pub(super) fn also_fails_for(&mut self, other: &RenderError) {
        let (RenderError::Template {
            combination: first,
            others,
            ..
        }
        | RenderError::Output {
            combination: first,
            others,
            ..
        }) = self
        else {
            return;
        };
        if let RenderError::Template { combination, .. } | RenderError::Output { combination, .. } =
            other
            && **combination != **first
            && !others.contains(combination)
        {
            others.push((**combination).clone());
        }
    }

    /// The diagnostic code the error is reported under: [`codes::DUPLICATE`] for two
    /// definitions of one object (the same finding `validate` gives for two files), else
    /// [`codes::CATALOG_RENDER`].
    pub fn code(&self) -> &'static str {
        match self {
            RenderError::Duplicate { .. } | RenderError::Redefined { .. } => codes::DUPLICATE,
            _ => codes::CATALOG_RENDER,
        }
    }
}

/// Every failure of one attempt to render a catalog, in catalog order; never empty.
///
/// Rendering goes through its steps (reading the documents, resolving parts, rendering the
/// combinations, looking for duplicates) and stops after the first step that fails, having
/// tried every document or combination of that step: a catalog with several mistakes shows
/// them all at once, without the knock-on failures of a later step. A template leaf that
/// fails for many combinations is reported once, for the first of them, naming the others.
#[derive(Debug)]
pub struct RenderErrors(Vec<RenderError>);

impl RenderErrors {
    /// The failures of one step, or `None` when there are none.
    pub(super) fn of(errors: Vec<RenderError>) -> Option<RenderErrors> {
        (!errors.is_empty()).then_some(RenderErrors(errors))
    }

    /// The first failure in catalog order.
    pub fn first(&self) -> &RenderError {
        &self.0[0]
    }

    /// Every failure, in catalog order.
    pub fn iter(&self) -> std::slice::Iter<'_, RenderError> {
        self.0.iter()
    }

    /// How many failures there are (at least one).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Always `false`: there is at least one failure.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<RenderError> for RenderErrors {
    fn from(error: RenderError) -> Self {
        RenderErrors(vec![error])
    }
}

impl<'a> IntoIterator for &'a RenderErrors {
    type Item = &'a RenderError;
    type IntoIter = std::slice::Iter<'a, RenderError>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl fmt::Display for RenderErrors {
    /// The first failure with its causes, and how many more there are.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let first = self.first();
        write!(f, "{first}")?;
        let mut source = std::error::Error::source(first);
        while let Some(s) = source {
            write!(f, ": {s}")?;
            source = s.source();
        }
        match self.0.len() {
            1 => Ok(()),
            2 => write!(f, " (and 1 more error)"),
            n => write!(f, " (and {} more errors)", n - 1),
        }
    }
}

impl std::error::Error for RenderErrors {}

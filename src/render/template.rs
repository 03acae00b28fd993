//! The template sandbox: one minijinja [`Environment`] per run and the rules that turn a
//! fragment tree with template strings in its leaves into a plain value tree.
//!
//! Leaf rules:
//! - a string without `{{`, `{%` or `{#` is kept as it is;
//! - a string that is exactly one `{{ expression }}` is evaluated and keeps the expression's
//!   type (number, boolean, string, mapping, list); when it evaluates to `none` the mapping
//!   entry or list item is dropped, and a mapping left empty by such drops is dropped too;
//! - any other string is rendered as template text.
//!
//! Mapping keys are never templated. The environment has no loader, no filesystem or
//! environment access, strict undefined handling (a misspelt field is an error, not an empty
//! string), no auto-escaping, and limits on fuel, recursion and output size.

use foldhash::{HashMap, HashMapExt};

use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use serde_json::{Map, Value};

/// Instructions one leaf may execute before it is stopped.
pub const FUEL: u64 = 100_000;
/// How deep templates may nest calls and data structures.
pub const RECURSION_LIMIT: usize = 64;
/// The most text one leaf may render to.
pub const MAX_LEAF_BYTES: usize = 256 * 1024;
/// The most items (entries and list items, at every depth together) a value may hold when a
/// leaf returns it, prints it or hands it to a filter that reads it whole.
pub const MAX_VALUE_ITEMS: usize = 100_000;
/// The most bytes (as a rough size in YAML) a value handed to a filter that reads it whole
/// may hold: far more than any leaf may print, far less than memory.
const MAX_FILTER_INPUT_BYTES: usize = 16 * MAX_LEAF_BYTES;

/// A failure inside one leaf.
#[derive(Debug)]
pub struct LeafError {
    /// The mapping keys (and list positions) leading to the leaf.
    pub field: Vec<FieldStep>,
    /// What went wrong.
    pub kind: LeafErrorKind,
}

/// One step of a field path inside a fragment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldStep {
    /// A mapping key.
    Key(String),
    /// A list position.
    Index(usize),
}

/// Why a leaf failed.
#[derive(Debug)]
pub enum LeafErrorKind {
    /// minijinja reported an error.
    Template(minijinja::Error),
    /// The leaf rendered to more than [`MAX_LEAF_BYTES`].
    TooLarge(usize),
    /// The leaf's value holds more than [`MAX_LEAF_BYTES`] or [`MAX_VALUE_ITEMS`] items.
    ValueTooLarge,
    /// The value could not become YAML (for example a non-finite float).
    Convert(String),
}

/// Dotted form of a field path, e.g. `spec.cpu.guest` or `spec.sizes[2]`.
pub fn field_to_string(field: &[FieldStep]) -> String {
    let mut out = String::new();
    for step in field {
        match step {
            // Label keys such as `example.com/tier` would make a dotted path ambiguous.
            FieldStep::Key(k) if k.contains(['.', '/', '[', ']', ' ']) => {
                out.push_str("[\"");
                out.push_str(k);
                out.push_str("\"]");
            }
            FieldStep::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            FieldStep::Index(i) => {
                out.push('[');
                out.push_str(&i.to_string());
                out.push(']');
            }
        }
    }
    out
}

/// The sandboxed environment of one run: strict undefined, no auto-escaping, no loader (so no
/// file access), no `debug()`, fuel and recursion limits.
pub fn sandbox<'s>() -> Environment<'s> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // A value is the text its template gives, final line break included: a `|` block keeps
    // its line break whether or not it holds `{{ }}`.
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .keep_trailing_newline(true)
            .build()
            .expect("the default delimiters are a valid syntax"),
    );
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_fuel(Some(FUEL));
    env.set_recursion_limit(RECURSION_LIMIT);
    // Name the undefined variable in errors in release builds too (minijinja only does it in
    // debug builds by default).
    env.set_debug(true);
    // `debug()` dumps the whole context; it has no place in a manifest.
    env.remove_global("debug");
    // Strict mode stops `{{ nope }}` but prints `{{ {'a': nope} }}` as `{'a': undefined}`.
    env.set_formatter(|out, state, value| {
        if !within(value, MAX_LEAF_BYTES) {
            return Err(too_large(MAX_LEAF_BYTES));
        }
        if nests_deeper(value, RECURSION_LIMIT) {
            return Err(nested_too_deep());
        }
        match undefined_inside(value) {
            Some(at) => Err(undefined_entry(&at)),
            None => minijinja::escape_formatter(out, state, value),
        }
    });
    // `[1] * 100000000` is one instruction and a lazy sequence: the filters that would make it
    // real (or a string of it) in one step, which fuel does not count, check its size first.
    // Each built-in stays reachable to its guard under a name no filter expression can spell
    // (and that no guarded filter takes as an argument).
    macro_rules! guarded {
        ($($name:literal => $builtin:path),* $(,)?) => {$(
            env.add_filter(concat!($name, " (built-in)"), $builtin);
            env.add_filter(
                $name,
                |state: &mut minijinja::State<'_, '_>,
                 args: minijinja::value::Rest<minijinja::value::ValueOrKwargs>| {
                    let args = args.into_values();
                    // `map` applies a filter named by a string, which can spell any name.
                    if args.iter().any(names_a_raw_builtin) {
                        return Err(raw_builtin_named());
                    }
                    if !args.iter().all(|a| within(a, MAX_FILTER_INPUT_BYTES)) {
                        return Err(too_large(MAX_FILTER_INPUT_BYTES));
                    }
                    if args.iter().any(|a| nests_deeper(a, RECURSION_LIMIT)) {
                        return Err(nested_too_deep());
                    }
                    if writes_more_than($name, &args, MAX_FILTER_INPUT_BYTES) {
                        return Err(writes_too_much($name, MAX_FILTER_INPUT_BYTES));
                    }
                    state.apply_filter(concat!($name, " (built-in)"), &args)
                },
            );
        )*};
    }
    use minijinja::filters;
    guarded! {
        "batch" => filters::batch,
        "chain" => filters::chain,
        "dictsort" => filters::dictsort,
        "format" => filters::format,
        "groupby" => filters::groupby,
        "indent" => filters::indent,
        "items" => filters::items,
        "join" => filters::join,
        "lines" => filters::lines,
        "list" => filters::list,
        "map" => filters::map,
        "max" => filters::max,
        "min" => filters::min,
        "pprint" => filters::pprint,
        "reject" => filters::reject,
        "rejectattr" => filters::rejectattr,
        "replace" => filters::replace,
        "reverse" => filters::reverse,
        "select" => filters::select,
        "selectattr" => filters::selectattr,
        "slice" => filters::slice,
        "sort" => filters::sort,
        "string" => filters::string,
        "sum" => filters::sum,
        "unique" => filters::unique,
        "zip" => filters::zip,
    }
    // minijinja's own divides by zero (and overflows on the smallest integer by -1).
    env.add_test("divisibleby", divisible_by);
    env
}

/// Whether `value` is a string naming a guarded filter's raw built-in, registered under its
/// name and ` (built-in)` (`map`'s first argument can be any string).
fn names_a_raw_builtin(value: &minijinja::Value) -> bool {
    value.as_str().is_some_and(|s| s.ends_with(" (built-in)"))
}

fn raw_builtin_named() -> minijinja::Error {
    minijinja::Error::new(
        minijinja::ErrorKind::InvalidOperation,
        "a built-in filter's unguarded form cannot be named",
    )
}

/// The `divisibleby` test: whether `value` is a multiple of `by`, for integers and floats (as
/// minijinja's), an error for a divisor of zero, as `%` is.
fn divisible_by(value: &minijinja::Value, by: &minijinja::Value) -> Result<bool, minijinja::Error> {
    use minijinja::value::ValueKind;
    let numeric = |v: &minijinja::Value| matches!(v.kind(), ValueKind::Number | ValueKind::Bool);
    if !numeric(value) || !numeric(by) {
        return Ok(false);
    }
    if !by.is_true() {
        return Err(minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            "divisibleby: the divisor is zero",
        ));
    }
    let int = |v: &minijinja::Value| {
        (v.is_integer() || v.kind() == ValueKind::Bool)
            .then(|| i128::try_from(v.clone()).ok())
            .flatten()
    };
    if let (Some(a), Some(b)) = (int(value), int(by)) {
        // `checked_rem` is `None` only for the smallest integer by -1, which divides it.
        return Ok(a.checked_rem(b).is_none_or(|r| r == 0));
    }
    let float = |v: &minijinja::Value| f64::try_from(v.clone()).ok();
    Ok(match (float(value), float(by)) {
        (Some(a), Some(b)) => a % b == 0.0,
        _ => false,
    })
}

/// The error for a value larger than `limit` bytes or [`MAX_VALUE_ITEMS`] items.
fn too_large(limit: usize) -> minijinja::Error {
    minijinja::Error::new(
        minijinja::ErrorKind::InvalidOperation,
        format!(
            "the value is too large: more than {limit} bytes or {MAX_VALUE_ITEMS} items (a \
             repeated sequence or string?)"
        ),
    )
}

/// The error for a value printed or handed to a filter that nests deeper than any rendered
/// object may: printing it, or a filter reading it whole, would recurse once per level.
fn nested_too_deep() -> minijinja::Error {
    minijinja::Error::new(
        minijinja::ErrorKind::InvalidOperation,
        format!(
            "the value nests deeper than {RECURSION_LIMIT} levels of mappings and lists (a \
             value set inside itself in a loop?)"
        ),
    )
}

/// The error for a filter whose arguments ask for more than `limit` bytes of output.
fn writes_too_much(filter: &str, limit: usize) -> minijinja::Error {
    minijinja::Error::new(
        minijinja::ErrorKind::InvalidOperation,
        format!(
            "`{filter}` would write more than {limit} bytes (a width or a repeated string too \
             large?)"
        ),
    )
}

/// Whether the filter `filter` may write more than `limit` bytes for `args` (its input first).
/// The filters that write more than they read do so in proportion to an argument: `indent`'s
/// width on every line, `replace`'s new text for every match, `join`'s separator between
/// items, `format`'s widths and precisions. Each of them asks for its whole output at once,
/// where no watch can stop it: a width of `2**64 - 1` would end the process. The bound is
/// taken before the filter runs, with saturating arithmetic.
fn writes_more_than(filter: &str, args: &[minijinja::Value], limit: usize) -> bool {
    use minijinja::value::ValueKind;
    let text = |v: Option<&minijinja::Value>| -> usize {
        match v {
            Some(v) if v.kind() == ValueKind::String => v.as_str().map_or(0, str::len),
            Some(v) if v.kind() == ValueKind::Undefined || v.is_none() => 0,
            // Every input is within the filter input bound: printing it costs little.
            Some(v) => v.to_string().len(),
            None => 0,
        }
    };
    // A number an argument gives, positional or by keyword; anything else counts as 0.
    let number = |v: &minijinja::Value| -> usize {
        if let Ok(n) = u64::try_from(v.clone()) {
            usize::try_from(n).unwrap_or(usize::MAX)
        } else {
            0
        }
    };
    let keyword = |name: &str| -> Option<minijinja::Value> {
        args.iter()
            .filter(|a| a.is_kwargs())
            .find_map(|a| a.get_attr(name).ok().filter(|v| !v.is_undefined()))
    };
    let bound = match filter {
        "indent" => {
            let input = args.first();
            let lines = input
                .and_then(minijinja::Value::as_str)
                .map_or(1, |s| s.bytes().filter(|&b| b == b'\n').count() + 1);
            let width = match args.get(1).filter(|a| !a.is_kwargs()) {
                Some(w) => number(w),
                None => keyword("width").as_ref().map_or(4, number),
            };
            text(input).saturating_add(lines.saturating_mul(width))
        }
        "replace" => {
            let input = text(args.first());
            let from = text(args.get(1));
            let to = text(args.get(2));
            // An empty pattern matches between every two bytes and at both ends.
            let matches = input.checked_div(from).unwrap_or(input.saturating_add(1));
            input.saturating_add(matches.saturating_mul(to))
        }
        "join" => {
            let items = args.first().and_then(|v| v.len()).unwrap_or(0);
            let joiner = args.get(1).filter(|a| !a.is_kwargs());
            let joiner = text(joiner).max(keyword("d").as_ref().map_or(0, |v| text(Some(v))));
            let items_text = args.first().map_or(0, |v| {
                v.try_iter()
                    .map(|it| {
                        it.map(|item| text(Some(&item)))
                            .fold(0, usize::saturating_add)
                    })
                    .unwrap_or(0)
            });
            items_text.saturating_add(items.saturating_mul(joiner))
        }
        "format" => {
            let spec = args
                .first()
                .and_then(minijinja::Value::as_str)
                .unwrap_or("");
            let rest = args[1.min(args.len())..]
                .iter()
                .map(|a| text(Some(a)))
                .fold(0, usize::saturating_add);
            spec.len()
                .saturating_add(printf_widths(spec))
                .saturating_add(rest)
        }
        _ => return false,
    };
    bound > limit
}

/// The sum of the widths and precisions of the `%` conversions in a printf-style format
/// string (`%-20s`, `%08.3f`, `%(name)10s`), saturating.
fn printf_widths(spec: &str) -> usize {
    let b = spec.as_bytes();
    let mut total = 0usize;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        i += 1;
        if b.get(i) == Some(&b'%') {
            i += 1;
            continue;
        }
        if b.get(i) == Some(&b'(') {
            while i < b.len() && b[i] != b')' {
                i += 1;
            }
            i += 1;
        }
        while i < b.len() && matches!(b[i], b'#' | b'0' | b'-' | b' ' | b'+') {
            i += 1;
        }
        loop {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let digits = &spec[start..i];
            if !digits.is_empty() {
                total = total.saturating_add(digits.parse().unwrap_or(usize::MAX));
            }
            if b.get(i) == Some(&b'.') {
                i += 1;
                continue;
            }
            break;
        }
    }
    total
}

/// Whether `value` holds at most [`MAX_VALUE_ITEMS`] items and about `limit` bytes as YAML.
/// The walk stops as soon as either is passed, and a sequence's known length is counted before
/// any of its items is read: a list repeated a hundred million times is refused at once.
fn within(value: &minijinja::Value, limit: usize) -> bool {
    use minijinja::value::ValueKind;
    fn walk(
        value: &minijinja::Value,
        depth: usize,
        items: &mut usize,
        bytes: &mut usize,
        limit: usize,
    ) -> bool {
        if depth > RECURSION_LIMIT {
            return true;
        }
        match value.kind() {
            ValueKind::String | ValueKind::Bytes => {
                *bytes += value.len().unwrap_or(0) + 2;
            }
            ValueKind::Seq | ValueKind::Map | ValueKind::Iterable => {
                if let Some(n) = value.len() {
                    *items = items.saturating_add(n);
                    *bytes = bytes.saturating_add(n.saturating_mul(2));
                    if *items > MAX_VALUE_ITEMS || *bytes > limit {
                        return false;
                    }
                }
                let is_map = value.kind() == ValueKind::Map;
                let Ok(iter) = value.try_iter() else {
                    return true;
                };
                for (seen, item) in iter.enumerate() {
                    if value.len().is_none() {
                        *items += 1;
                    }
                    if seen > MAX_VALUE_ITEMS || *items > MAX_VALUE_ITEMS || *bytes > limit {
                        return false;
                    }
                    if !walk(&item, depth + 1, items, bytes, limit) {
                        return false;
                    }
                    if is_map {
                        let entry = value.get_item(&item).unwrap_or_default();
                        if !walk(&entry, depth + 1, items, bytes, limit) {
                            return false;
                        }
                    }
                }
            }
            _ => *bytes += 8,
        }
        *items <= MAX_VALUE_ITEMS && *bytes <= limit
    }
    walk(value, 0, &mut 0, &mut 0, limit)
}

/// Whether `value` has mappings or lists nested more than `levels` deep. The checks below
/// and every reader of the rendered object stop looking that deep.
fn nests_deeper(value: &minijinja::Value, levels: usize) -> bool {
    use minijinja::value::ValueKind;
    match value.kind() {
        ValueKind::Map | ValueKind::Seq | ValueKind::Iterable => {
            let Some(levels) = levels.checked_sub(1) else {
                return true;
            };
            let is_map = value.kind() == ValueKind::Map;
            value.try_iter().into_iter().flatten().any(|item| {
                let item = if is_map {
                    value.get_item(&item).unwrap_or_default()
                } else {
                    item
                };
                nests_deeper(&item, levels)
            })
        }
        _ => false,
    }
}

/// Where an undefined value hides inside a mapping or list a template built, such as
/// `{'pageSize': traits.hugepage}` with a misspelt variable: `pageSize`, `[1].a`. Strict mode
/// only catches an undefined value on its own; inside a container it would print as
/// `undefined` or vanish from the YAML.
fn undefined_inside(value: &minijinja::Value) -> Option<String> {
    fn walk(value: &minijinja::Value, depth: usize, at: &mut String) -> bool {
        use minijinja::value::ValueKind;
        if depth > RECURSION_LIMIT {
            return false;
        }
        let mut check = |item: &minijinja::Value, step: String| {
            let len = at.len();
            at.push_str(&step);
            if item.is_undefined() || walk(item, depth + 1, at) {
                return true;
            }
            at.truncate(len);
            false
        };
        match value.kind() {
            ValueKind::Map => value.try_iter().into_iter().flatten().any(|key| {
                let item = value.get_item(&key).unwrap_or_default();
                let step = match key.as_str() {
                    Some(k) if variable_path(k).is_some_and(|p| p.len() == 1) => format!(".{k}"),
                    _ => format!("[{key:?}]"),
                };
                check(&item, step)
            }),
            ValueKind::Seq | ValueKind::Iterable => value
                .try_iter()
                .into_iter()
                .flatten()
                .enumerate()
                .any(|(i, item)| check(&item, format!("[{i}]"))),
            _ => false,
        }
    }
    let mut at = String::new();
    walk(value, 0, &mut at).then(|| at.trim_start_matches('.').to_string())
}

/// Where an infinite or NaN float is in `value` (`""` for the value itself), if anywhere. Only
/// called on values [`within`] the limits.
fn non_finite_inside(value: &minijinja::Value) -> Option<String> {
    use minijinja::value::ValueKind;
    /// The steps to the float, innermost first; built only on the way back from a find.
    fn walk(value: &minijinja::Value, depth: usize) -> Option<Vec<String>> {
        match value.kind() {
            ValueKind::Number => (!value.is_integer()
                && f64::try_from(value.clone()).is_ok_and(|f| !f.is_finite()))
            .then(Vec::new),
            ValueKind::Map | ValueKind::Seq | ValueKind::Iterable if depth <= RECURSION_LIMIT => {
                let is_map = value.kind() == ValueKind::Map;
                value
                    .try_iter()
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .find_map(|(i, key)| {
                        let mut steps = if is_map {
                            walk(&value.get_item(&key).unwrap_or_default(), depth + 1)?
                        } else {
                            walk(&key, depth + 1)?
                        };
                        steps.push(if is_map {
                            format!(".{key}")
                        } else {
                            format!("[{i}]")
                        });
                        Some(steps)
                    })
            }
            _ => None,
        }
    }
    let steps = walk(value, 0)?;
    let at: String = steps.into_iter().rev().collect();
    Some(at.trim_start_matches('.').to_string())
}

/// The error for an undefined value inside a mapping or list (see [`undefined_inside`]).
fn undefined_entry(at: &str) -> minijinja::Error {
    minijinja::Error::new(
        minijinja::ErrorKind::UndefinedError,
        format!(
            "`{at}` inside the value is undefined (a misspelt variable, or an `if` without \
             `else`? write `none` to leave an entry out)"
        ),
    )
}

/// One template leaf, compiled once and evaluated for every combination.
///
/// The shapes most catalog leaves have (`{{ size.cpu }}`, `{{ traits.numa or none }}`,
/// `{{ size.name }}{{ variant.suffix }}`) are also kept as [`Shortcut`]s, answered by looking
/// the variables up directly; whenever a shortcut cannot answer (a variable is missing, a value
/// is not a plain string or integer), minijinja evaluates the leaf, so results and errors are
/// minijinja's.
enum Leaf<'e, 's> {
    Expression(minijinja::Expression<'e, 's>),
    Text(minijinja::Template<'e, 's>),
    /// Does not compile; rendering it again reports the error with the combination.
    Broken,
    /// Not handed to minijinja at all: a block nests deeper than [`MAX_BLOCK_OPERATORS`]
    /// allows (see [`too_deep`]).
    TooDeep(Depth),
}

/// A leaf answered without minijinja when its variables are there (see [`Leaf`]).
enum Shortcut<'s> {
    /// `{{ a.b }}`.
    Path(Vec<&'s str>),
    /// `{{ a.b or none }}`.
    PathOrNone(Vec<&'s str>),
    /// Text and `{{ a.b }}` pieces on one line, printed as strings.
    Concat(Vec<Piece<'s>>),
}

/// A piece of a [`Shortcut::Concat`].
enum Piece<'s> {
    Text(&'s str),
    Path(Vec<&'s str>),
}

/// The template leaves of a catalog, compiled once per run.
pub struct Templates<'e, 's> {
    env: &'e Environment<'s>,
    /// Where each leaf text is in `compiled` (a text met twice is compiled once).
    leaves: HashMap<&'s str, usize>,
    compiled: Vec<(Leaf<'e, 's>, Option<Shortcut<'s>>)>,
    /// The trees given to [`Templates::add_tree`], by address, with their template leaves
    /// found: rendering walks these instead of testing every string again.
    trees: HashMap<usize, Node<'s>>,
    shortcuts: bool,
}

/// A fragment tree with its template leaves marked.
enum Node<'s> {
    /// A subtree without any template: copied as it is.
    Plain(&'s Value),
    Map(&'s Map<String, Value>, Vec<Node<'s>>),
    List(Vec<Node<'s>>),
    /// A template leaf and where it is in [`Templates::compiled`], if it was compiled.
    Leaf(&'s str, Option<usize>),
}

impl<'s> Node<'s> {
    fn of(tree: &'s Value, leaves: &HashMap<&'s str, usize>) -> Node<'s> {
        match tree {
            Value::String(s) if is_template(s) => Node::Leaf(s, leaves.get(s.as_str()).copied()),
            Value::Object(map) => {
                let nodes: Vec<Node<'s>> = map.values().map(|v| Node::of(v, leaves)).collect();
                if nodes.iter().all(|n| matches!(n, Node::Plain(_))) {
                    Node::Plain(tree)
                } else {
                    Node::Map(map, nodes)
                }
            }
            Value::Array(items) => {
                let nodes: Vec<Node<'s>> = items.iter().map(|v| Node::of(v, leaves)).collect();
                if nodes.iter().all(|n| matches!(n, Node::Plain(_))) {
                    Node::Plain(tree)
                } else {
                    Node::List(nodes)
                }
            }
            other => Node::Plain(other),
        }
    }
}

/// One step of the way to a leaf, borrowed while rendering ([`FieldStep`] once it failed).
#[derive(Clone, Copy)]
enum Step<'s> {
    Key(&'s str),
    Index(usize),
}

fn owned(steps: &[Step<'_>]) -> Vec<FieldStep> {
    steps
        .iter()
        .map(|s| match s {
            Step::Key(k) => FieldStep::Key((*k).to_string()),
            Step::Index(i) => FieldStep::Index(*i),
        })
        .collect()
}

impl<'e, 's> Templates<'e, 's> {
    /// An empty set of compiled leaves for `env`.
    pub fn new(env: &'e Environment<'s>) -> Self {
        Templates {
            env,
            leaves: HashMap::new(),
            compiled: Vec::new(),
            trees: HashMap::new(),
            shortcuts: true,
        }
    }

    /// Like [`Templates::new`], but every leaf goes through minijinja (to test the shortcuts).
    #[cfg(test)]
    fn without_shortcuts(env: &'e Environment<'s>) -> Self {
        Templates {
            shortcuts: false,
            ..Templates::new(env)
        }
    }

    /// Compile every template leaf of `tree`.
    pub fn add_tree(&mut self, tree: &'s Value) {
        self.add_leaves(tree);
        self.trees
            .entry(std::ptr::from_ref(tree) as usize)
            .or_insert_with(|| Node::of(tree, &self.leaves));
    }

    fn add_leaves(&mut self, tree: &'s Value) {
        match tree {
            Value::String(s) => self.add_leaf(s),
            Value::Object(map) => map.values().for_each(|v| self.add_leaves(v)),
            Value::Array(items) => items.iter().for_each(|v| self.add_leaves(v)),
            _ => {}
        }
    }

    fn add_leaf(&mut self, s: &'s str) {
        if is_template(s) && !self.leaves.contains_key(s) {
            let shortcut = if self.shortcuts { shortcut(s) } else { None };
            self.leaves.insert(s, self.compiled.len());
            self.compiled.push((self.compile(s), shortcut));
        }
    }

    fn compile(&self, s: &'s str) -> Leaf<'e, 's> {
        if let Some(depth) = too_deep(s) {
            return Leaf::TooDeep(depth);
        }
        // A leaf that is exactly `{{ … }}` keeps its type. If it does not parse as one
        // expression (`{{ a }} and {{ b }}`), it is ordinary template text.
        single_expression(s)
            .and_then(|inner| self.env.compile_expression(inner).ok())
            .map(Leaf::Expression)
            .or_else(|| self.env.template_from_str(s).ok().map(Leaf::Text))
            .unwrap_or(Leaf::Broken)
    }

    /// Whether a compiled leaf can grow a value beyond what it reads: one minijinja runs (no
    /// shortcut answers it) that joins, adds, repeats, filters or runs statements (`~`, `+`,
    /// `*`, `|`, `{%`). Without these a leaf only picks, compares and arranges values it was
    /// given, and prints them measured. The check may see such a character inside a string
    /// literal: it errs on the side of watching (see `watch.rs`).
    pub fn may_grow(&self) -> bool {
        self.leaves.iter().any(|(source, &i)| {
            self.compiled[i].1.is_none()
                && (source.contains(['~', '+', '*', '|']) || source.contains("{%"))
        })
    }

    /// What the render of these leaves needs watched: nothing, time, or time and memory.
    pub fn watch(&self) -> super::watch::Watch {
        use super::watch::Watch;
        if self.may_grow() {
            Watch::TimeAndMemory
        } else if self.compiled.iter().any(|(_, shortcut)| shortcut.is_none()) {
            Watch::Time
        } else {
            Watch::Nothing
        }
    }

    /// Render every template leaf of `tree` with `ctx` in scope. `None` means the whole tree
    /// was dropped (it was a single `{{ … }}` that gave `none`). When leaves fail, every
    /// failing leaf is reported, in tree order.
    pub fn render_tree(
        &self,
        tree: &'s Value,
        ctx: &minijinja::Value,
    ) -> Result<Option<Value>, Vec<LeafError>> {
        // A tree not given to `add_tree` is marked now (and its leaves compiled when met).
        let marked_now;
        let node = match self.trees.get(&(std::ptr::from_ref(tree) as usize)) {
            Some(node) => node,
            None => {
                marked_now = Node::of(tree, &self.leaves);
                &marked_now
            }
        };
        let mut field = Vec::new();
        let mut errors = Vec::new();
        let rendered = self.render_marked(node, ctx, &mut field, &mut errors);
        if errors.is_empty() {
            Ok(rendered)
        } else {
            Err(errors)
        }
    }

    /// Every template leaf of `tree` (given to [`Templates::add_tree`]) that does not compile,
    /// with minijinja's reason, in tree order. Rendering reports these too; this finds them in
    /// trees that nothing renders.
    pub fn syntax_errors(&self, tree: &'s Value) -> Vec<LeafError> {
        let mut field = Vec::new();
        let mut errors = Vec::new();
        self.find_broken(tree, &mut field, &mut errors);
        errors
    }

    fn find_broken(&self, tree: &'s Value, field: &mut Vec<Step<'s>>, errors: &mut Vec<LeafError>) {
        match tree {
            Value::String(s) => {
                let broken = self.leaves.get(s.as_str()).map(|&i| &self.compiled[i].0);
                let error = match broken {
                    Some(Leaf::Broken) => self.env.template_from_str(s).err(),
                    Some(Leaf::TooDeep(depth)) => Some(depth.error()),
                    _ => None,
                };
                if let Some(error) = error {
                    errors.push(LeafError {
                        field: owned(field),
                        kind: LeafErrorKind::Template(error),
                    });
                }
            }
            Value::Object(map) => {
                for (key, value) in map {
                    field.push(Step::Key(key));
                    self.find_broken(value, field, errors);
                    field.pop();
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    field.push(Step::Index(i));
                    self.find_broken(item, field, errors);
                    field.pop();
                }
            }
            _ => {}
        }
    }

    /// Render `node`; a failing leaf is added to `errors` and rendered as dropped, so the rest
    /// of the tree is still tried.
    fn render_marked(
        &self,
        node: &Node<'s>,
        ctx: &minijinja::Value,
        field: &mut Vec<Step<'s>>,
        errors: &mut Vec<LeafError>,
    ) -> Option<Value> {
        match node {
            Node::Plain(value) => Some((*value).clone()),
            Node::Leaf(s, compiled) => match self.render_leaf(s, *compiled, ctx) {
                Ok(value) => value,
                Err(kind) => {
                    errors.push(LeafError {
                        field: owned(field),
                        kind,
                    });
                    None
                }
            },
            Node::Map(map, nodes) => {
                let mut out = Map::with_capacity(nodes.len());
                for ((key, _), node) in map.iter().zip(nodes) {
                    field.push(Step::Key(key));
                    let rendered = self.render_marked(node, ctx, field, errors);
                    field.pop();
                    if let Some(v) = rendered {
                        out.insert(key.clone(), v);
                    }
                }
                if out.is_empty() && !map.is_empty() {
                    return None;
                }
                Some(Value::Object(out))
            }
            Node::List(nodes) => {
                let mut out = Vec::with_capacity(nodes.len());
                for (i, node) in nodes.iter().enumerate() {
                    field.push(Step::Index(i));
                    let rendered = self.render_marked(node, ctx, field, errors);
                    field.pop();
                    out.extend(rendered);
                }
                Some(Value::Array(out))
            }
        }
    }

    /// Render the template leaf `s` (its index in `compiled`, if it was compiled).
    fn render_leaf(
        &self,
        s: &'s str,
        compiled: Option<usize>,
        ctx: &minijinja::Value,
    ) -> Result<Option<Value>, LeafErrorKind> {
        let compiled_now;
        let leaf = match compiled.map(|i| &self.compiled[i]) {
            Some((leaf, shortcut)) => {
                if let Some(answer) = shortcut.as_ref().and_then(|sc| answer(sc, ctx)) {
                    return answer;
                }
                leaf
            }
            None => {
                compiled_now = self.compile(s);
                &compiled_now
            }
        };
        let text = match leaf {
            Leaf::Expression(expr) => {
                let value = unpanicked(|| expr.eval(ctx)).map_err(LeafErrorKind::Template)?;
                // An expression may evaluate to undefined without failing; rendering it as
                // text below raises the strict-mode error with minijinja's own message.
                if !value.is_undefined() {
                    return to_json(&value);
                }
                unpanicked(|| self.env.render_str(s, ctx))
            }
            Leaf::Text(template) => unpanicked(|| template.render(ctx)),
            Leaf::Broken => unpanicked(|| self.env.render_str(s, ctx)),
            Leaf::TooDeep(depth) => Err(depth.error()),
        }
        .map_err(LeafErrorKind::Template)?;
        if text.len() > MAX_LEAF_BYTES {
            return Err(LeafErrorKind::TooLarge(text.len()));
        }
        Ok(Some(Value::String(text)))
    }
}

/// Run `eval`, a template's evaluation, turning a panic inside minijinja into the leaf's error:
/// a template can reach arithmetic in the engine that the engine does not check (`loop.cycle()`
/// with nothing to cycle divides by zero). Such a panic is not printed.
fn unpanicked<T>(
    eval: impl FnOnce() -> Result<T, minijinja::Error>,
) -> Result<T, minijinja::Error> {
    use std::cell::Cell;
    thread_local! {
        /// How many evaluations this thread is inside whose panics are caught.
        static CATCHING: Cell<u32> = const { Cell::new(0) };
    }
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CATCHING.with(Cell::get) == 0 {
                previous(info);
            }
        }));
    });
    CATCHING.with(|c| c.set(c.get() + 1));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(eval));
    CATCHING.with(|c| c.set(c.get() - 1));
    result.unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Err(minijinja::Error::new(
            minijinja::ErrorKind::InvalidOperation,
            format!("the template engine failed on this template: {what}"),
        ))
    })
}

/// The shortcut for a leaf of one of the shapes [`Leaf`] names, if it has one.
fn shortcut(s: &str) -> Option<Shortcut<'_>> {
    if let Some(inner) = s.strip_prefix("{{").and_then(|r| r.strip_suffix("}}")) {
        if let Some(path) = variable_path(inner) {
            return Some(Shortcut::Path(path));
        }
        if let Some(path) = inner
            .trim_end()
            .strip_suffix(" or none")
            .and_then(variable_path)
        {
            return Some(Shortcut::PathOrNone(path));
        }
    }
    // Text pieces hold no braces and no line breaks.
    let mut pieces = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        match rest.find("{{") {
            Some(0) => {
                let end = rest.find("}}")?;
                pieces.push(Piece::Path(variable_path(&rest[2..end])?));
                rest = &rest[end + 2..];
            }
            found => {
                let end = found.unwrap_or(rest.len());
                let text = &rest[..end];
                if text.contains(['{', '}', '\n', '\r']) {
                    return None;
                }
                pieces.push(Piece::Text(text));
                rest = &rest[end..];
            }
        }
    }
    Some(Shortcut::Concat(pieces))
}

/// `a.b.c` between optional spaces: identifiers joined by dots, not starting with a word
/// minijinja reserves.
fn variable_path(expr: &str) -> Option<Vec<&str>> {
    let expr = expr.trim_matches(' ');
    let path: Vec<&str> = expr.split('.').collect();
    let ident = |p: &&str| {
        let mut chars = p.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    };
    let reserved = [
        "true", "false", "none", "True", "False", "None", "loop", "self",
    ];
    (path.iter().all(ident) && !reserved.contains(&path[0])).then_some(path)
}

/// Look `path` up in `ctx`; `None` when a step is missing.
fn lookup(ctx: &minijinja::Value, path: &[&str]) -> Option<minijinja::Value> {
    let mut value = ctx.clone();
    for step in path {
        value = value.get_attr(step).ok()?;
        if value.is_undefined() {
            return None;
        }
    }
    Some(value)
}

/// A shortcut's answer, or `None` when minijinja must evaluate the leaf.
fn answer(shortcut: &Shortcut<'_>, ctx: &minijinja::Value) -> Option<LeafResult> {
    match shortcut {
        Shortcut::Path(path) => Some(typed(&lookup(ctx, path)?)),
        Shortcut::PathOrNone(path) => {
            let value = lookup(ctx, path)?;
            Some(if value.is_true() {
                typed(&value)
            } else {
                Ok(None)
            })
        }
        Shortcut::Concat(pieces) => {
            let mut out = String::new();
            for piece in pieces {
                match piece {
                    Piece::Text(t) => out.push_str(t),
                    Piece::Path(path) => {
                        let value = lookup(ctx, path)?;
                        if let Some(s) = string(&value) {
                            out.push_str(s);
                        } else if value.is_integer()
                            && let Some(i) = value.as_i64()
                        {
                            out.push_str(&i.to_string());
                        } else {
                            return None;
                        }
                    }
                }
            }
            if out.len() > MAX_LEAF_BYTES {
                return Some(Err(LeafErrorKind::TooLarge(out.len())));
            }
            Some(Ok(Some(Value::String(out))))
        }
    }
}

/// The text of a string value (not of bytes, which minijinja prints differently).
fn string(value: &minijinja::Value) -> Option<&str> {
    (value.kind() == minijinja::value::ValueKind::String)
        .then(|| value.as_str())
        .flatten()
}

type LeafResult = Result<Option<Value>, LeafErrorKind>;

/// A single expression's value, typed as the leaf keeps it.
fn typed(value: &minijinja::Value) -> LeafResult {
    match string(value) {
        Some(s) if s.len() > MAX_LEAF_BYTES => Err(LeafErrorKind::TooLarge(s.len())),
        Some(s) => Ok(Some(Value::String(s.to_string()))),
        None => to_json(value),
    }
}

/// Whether a leaf is a template (holds `{{`, `{%` or `{#`).
pub(crate) fn is_template(s: &str) -> bool {
    s.as_bytes()
        .windows(2)
        .any(|w| w[0] == b'{' && matches!(w[1], b'{' | b'%' | b'#'))
}

/// The expression inside a leaf that is a single `{{ … }}`, whitespace control stripped.
/// The most operators, opening brackets and operator keywords one `{{ … }}` or `{% … %}`
/// block may hold. minijinja builds an expression such as `1 + 1 + …` or `not not …` into a
/// tree as deep as it has operators, and walks that tree recursively when it compiles and drops
/// it: some ten thousand of them overflow the stack. No hand-written template comes near the
/// limit.
pub const MAX_BLOCK_OPERATORS: usize = 1_000;

/// A block of a leaf that holds more than [`MAX_BLOCK_OPERATORS`] operators.
#[derive(Clone, Copy, Debug)]
pub struct Depth {
    /// The block's line within the leaf, from 1.
    line: usize,
}

impl Depth {
    fn error(self) -> minijinja::Error {
        let at = if self.line > 1 {
            format!(" on line {} of the template", self.line)
        } else {
            String::new()
        };
        minijinja::Error::new(
            minijinja::ErrorKind::SyntaxError,
            format!(
                "a block{at} holds more than {MAX_BLOCK_OPERATORS} operators, brackets and \
                 keywords such as `and`, the limit for one `{{{{ … }}}}` or `{{% … %}}`: split \
                 the expression up, or compute the value once in a trait or a size column"
            ),
        )
    }
}

/// The first block of `s` with more than [`MAX_BLOCK_OPERATORS`] operators, if any.
///
/// A lexical scan like minijinja's own, erring on the side of counting: string literals,
/// comments and `{% raw %}` sections are skipped; a block ends at `}}` or `%}` only outside
/// brackets, as minijinja ends it; every character of `+ - * / % ~ < > = ! . | ( [ {` and
/// every `and`, `or`, `not`, `in`, `is`, `if` counts once.
fn too_deep(s: &str) -> Option<Depth> {
    let b = s.as_bytes();
    let mut i = 0;
    while let Some(found) = b.get(i..)?.iter().position(|&c| c == b'{') {
        let open = i + found;
        i = open + 1;
        let close: &[u8] = match b.get(open + 1) {
            Some(b'{') => b"}}",
            Some(b'%') => b"%}",
            Some(b'#') => {
                i = s[open..].find("#}").map_or(b.len(), |end| open + end + 2);
                continue;
            }
            _ => continue,
        };
        let start = open + 2;
        if close == b"%}" {
            let head = s[start..].trim_start_matches(['-', '+', '~']).trim_start();
            if head.starts_with("raw") && !head[3..].starts_with(|c: char| c.is_alphanumeric()) {
                i = s[start..]
                    .find("endraw")
                    .map_or(b.len(), |end| start + end + 6);
                continue;
            }
        }
        let mut j = start;
        let mut balance = 0isize;
        let mut operators = 0usize;
        while j < b.len() {
            let c = b[j];
            if balance == 0 && b[j..].starts_with(close) {
                j += close.len();
                break;
            }
            match c {
                b'\'' | b'"' => {
                    j += 1;
                    while j < b.len() && b[j] != c {
                        j += if b[j] == b'\\' { 2 } else { 1 };
                    }
                }
                b'(' | b'[' | b'{' => {
                    balance += 1;
                    operators += 1;
                }
                b')' | b']' | b'}' => balance -= 1,
                b'+' | b'-' | b'*' | b'/' | b'%' | b'~' | b'<' | b'>' | b'=' | b'!' | b'.'
                | b'|' => operators += 1,
                c if c.is_ascii_alphabetic() || c == b'_' => {
                    let word = j;
                    while j + 1 < b.len() && (b[j + 1].is_ascii_alphanumeric() || b[j + 1] == b'_')
                    {
                        j += 1;
                    }
                    if matches!(
                        &b[word..=j],
                        b"and" | b"or" | b"not" | b"in" | b"is" | b"if"
                    ) {
                        operators += 1;
                    }
                }
                _ => {}
            }
            j += 1;
            if operators > MAX_BLOCK_OPERATORS {
                let line = 1 + b[..open].iter().filter(|&&c| c == b'\n').count();
                return Some(Depth { line });
            }
        }
        // A string's escape may step past the end.
        i = j.clamp(i, b.len());
    }
    None
}

fn single_expression(s: &str) -> Option<&str> {
    // Line breaks around it are how a `|` or `>` block ends, not text: they are ignored.
    // Spaces are text, as the quick path reads them (`" {{ size.cpu }}"` gives `" 1"`).
    let inner = s
        .trim_matches(['\n', '\r'])
        .strip_prefix("{{")?
        .strip_suffix("}}")?;
    let inner = inner.strip_prefix('-').unwrap_or(inner);
    let inner = inner.strip_suffix('-').unwrap_or(inner);
    Some(inner)
}

fn to_json(value: &minijinja::Value) -> Result<Option<Value>, LeafErrorKind> {
    if value.is_none() {
        return Ok(None);
    }
    if !within(value, MAX_LEAF_BYTES) {
        return Err(LeafErrorKind::ValueTooLarge);
    }
    if nests_deeper(value, RECURSION_LIMIT) {
        return Err(LeafErrorKind::Convert(format!(
            "the value nests deeper than {RECURSION_LIMIT} levels of mappings and lists (a \
             filter such as `batch` applied over and over?)"
        )));
    }
    // serde_json turns an infinite or NaN float into `null`, which would drop the field.
    if let Some(at) = non_finite_inside(value) {
        return Err(LeafErrorKind::Convert(format!(
            "{}{} is not a finite number (an overflow or a division of zero by zero?)",
            if at.is_empty() { "the value" } else { "`" },
            if at.is_empty() {
                String::new()
            } else {
                format!("{at}` of the value")
            },
        )));
    }
    if let Some(at) = undefined_inside(value) {
        return Err(LeafErrorKind::Template(undefined_entry(&at)));
    }
    let mut json =
        serde_json::to_value(value).map_err(|e| LeafErrorKind::Convert(e.to_string()))?;
    if let Value::String(s) = &json
        && s.len() > MAX_LEAF_BYTES
    {
        return Err(LeafErrorKind::TooLarge(s.len()));
    }
    Ok(keep_without_nones(&mut json).then_some(json))
}

/// Apply the leaf rules inside a value an expression gave: `none` entries and items are
/// dropped at any depth, and so is a mapping left empty by such drops (a mapping that was
/// empty to begin with stays). `false` when `value` itself is dropped.
fn keep_without_nones(value: &mut Value) -> bool {
    match value {
        Value::Null => false,
        Value::Object(map) if !map.is_empty() => {
            map.retain(|_, v| keep_without_nones(v));
            !map.is_empty()
        }
        Value::Array(items) => {
            items.retain_mut(keep_without_nones);
            true
        }
        _ => true,
    }
}

/// Turn a JSON context into a template context.
pub fn context(value: &Value) -> minijinja::Value {
    minijinja::Value::from(minijinja::value::Serde(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leaf_is_a_template_only_with_an_opening_pair() {
        for s in ["{{ x }}", "a{%- if y %}b", "{# note #}", "x{{"] {
            assert!(is_template(s), "{s}");
        }
        for s in ["", "{", "a { b } c", "}}", "%}{", "{ {x}}", "{}"] {
            assert!(!is_template(s), "{s}");
        }
    }
    use serde_json::json;

    fn render(tree: Value, ctx: Value) -> Result<Option<Value>, LeafError> {
        let env = sandbox();
        let mut templates = Templates::new(&env);
        templates.add_tree(&tree);
        let first = templates.render_tree(&tree, &context(&ctx));
        // Leaves that were not compiled up front render the same way.
        let uncompiled = Templates::new(&env).render_tree(&tree, &context(&ctx));
        assert_eq!(format!("{first:?}"), format!("{uncompiled:?}"));
        first.map_err(|mut errors| errors.remove(0))
    }

    #[test]
    fn every_failing_leaf_is_reported_in_tree_order() {
        let env = sandbox();
        let tree = json!({"a": "{{ nope }}", "b": [1, "{{ size.cpus }}"], "c": "{{ size.cpu }}",
                          "d": {"e": "x{{ also.nope }}"}});
        let errors = Templates::new(&env)
            .render_tree(&tree, &context(&json!({"size": {"cpu": 1}})))
            .unwrap_err();
        let fields: Vec<String> = errors.iter().map(|e| field_to_string(&e.field)).collect();
        assert_eq!(fields, ["a", "b[1]", "d.e"]);
    }

    /// Every shortcut gives what minijinja gives, value or error, whatever the context holds.
    #[test]
    fn shortcuts_answer_as_minijinja_does() {
        let leaves = [
            "{{ size.cpu }}",
            "{{size.cpu}}",
            "{{ size.name }}",
            "{{ size.missing }}",
            "{{ nope.x }}",
            "{{ size.cpu or none }}",
            "{{ traits.on or none }}",
            "{{ traits.off or none }}",
            "{{ traits.zero or none }}",
            "{{ traits.empty or none }}",
            "{{ traits.map or none }}",
            "{{ traits.list or none }}",
            "{{ traits.float or none }}",
            "{{ traits.missing or none }}",
            "{{ traits.nil }}",
            "{{ traits.float }}",
            "{{ traits.big }}",
            "{{ size.name }}{{ variant.suffix }}",
            "{{ size.name }}.{{ size.cpu }}x",
            "hidden,kubevirt,{{ size.name }}",
            "a {{ traits.on }} b",
            "a {{ traits.float }} b",
            "a {{ traits.nil }} b",
            "a {{ traits.map }} b",
            "{{ size.missing }} b",
            "{{ none }}",
            "{{ true }}",
            "{{ loop.index }}",
            "x{{ size.cpu }}\n",
            "{{ size.name }}}",
            "{{ size.name|upper }}",
            "{{- size.name }}",
        ];
        let contexts = [
            json!({"size": {"cpu": 4, "name": "large"}, "variant": {"suffix": "1gi"},
                   "traits": {"on": true, "off": false, "zero": 0, "empty": "", "map": {"a": 1},
                              "list": [1], "float": 1.0, "nil": null,
                              "big": 18_446_744_073_709_551_615_u64}}),
            json!({"size": {"cpu": "4", "name": 7}, "variant": {"suffix": ""},
                   "traits": {"on": "yes", "off": [], "zero": 0.0, "empty": {}, "map": {},
                              "list": [], "float": -2.5, "nil": false, "big": -1}}),
            json!({"size": "flat", "traits": 3}),
        ];
        let env = sandbox();
        for leaf in leaves {
            let tree = Value::String(leaf.to_string());
            let mut fast = Templates::new(&env);
            fast.add_tree(&tree);
            let mut slow = Templates::without_shortcuts(&env);
            slow.add_tree(&tree);
            for ctx in &contexts {
                let ctx = context(ctx);
                let (a, b) = (fast.render_tree(&tree, &ctx), slow.render_tree(&tree, &ctx));
                assert_eq!(format!("{a:?}"), format!("{b:?}"), "{leaf} with {ctx:?}");
            }
        }
    }

    #[test]
    fn the_common_shapes_have_shortcuts() {
        assert!(
            matches!(shortcut("{{ size.cpu }}"), Some(Shortcut::Path(p)) if p == ["size", "cpu"])
        );
        assert!(matches!(
            shortcut("{{ t.numa or none }}"),
            Some(Shortcut::PathOrNone(_))
        ));
        assert!(matches!(shortcut("{{ a }}.{{ b }}"), Some(Shortcut::Concat(p)) if p.len() == 3));
        assert!(shortcut("{{ a | upper }}").is_none());
        assert!(shortcut("{% if a %}x{% endif %}").is_none());
        assert!(shortcut("{{ a }}\n").is_none());
    }

    #[test]
    fn single_expressions_keep_their_type() {
        let out = render(
            json!({"cpu": "{{ size.cpu }}", "on": "{{ t.on }}", "numa": "{{ {'a': {}} if t.on else none }}"}),
            json!({"size": {"cpu": 4}, "t": {"on": true}}),
        )
        .unwrap()
        .unwrap();
        assert_eq!(out, json!({"cpu": 4, "on": true, "numa": {"a": {}}}));
    }

    /// Spaces around a `{{ … }}` are text, for every type of value alike (a boolean printed
    /// as Jinja prints it); line breaks around it (the end of a `|` block) are not.
    #[test]
    fn spaces_around_a_single_expression_make_it_text_for_every_value() {
        let ctx = json!({"s": {"str": "x", "int": 1, "float": 1.5, "bool": true}});
        for (key, text) in [
            ("str", "x"),
            ("int", "1"),
            ("float", "1.5"),
            ("bool", "True"),
        ] {
            let leaves = json!({
                "lead": format!(" {{{{ s.{key} }}}}"),
                "trail": format!("{{{{ s.{key} }}}} "),
                "tab": format!("\t{{{{ s.{key} }}}}"),
            });
            let out = render(leaves, ctx.clone()).unwrap().unwrap();
            assert_eq!(
                out,
                json!({"lead": format!(" {text}"), "trail": format!("{text} "), "tab": format!("\t{text}")}),
                "{key}"
            );
        }
        let out = render(
            json!({"block": "{{ s.float }}\n", "map": "\n{{ {'a': s.int} }}\n"}),
            ctx,
        )
        .unwrap()
        .unwrap();
        assert_eq!(out, json!({"block": 1.5, "map": {"a": 1}}));
    }

    #[test]
    fn none_drops_the_entry_and_emptied_maps() {
        let out = render(
            json!({"a": {"b": "{{ none }}"}, "keep": {}, "list": ["x", "{{ none }}"], "c": "{{ t.off or none }}"}),
            json!({"t": {"off": false}}),
        )
        .unwrap()
        .unwrap();
        assert_eq!(out, json!({"keep": {}, "list": ["x"]}));
    }

    #[test]
    fn none_inside_a_built_value_is_dropped_as_a_leaf_none_is() {
        let out = render(
            json!({
                "hugepages": "{{ {'pageSize': none} }}",
                "memory": "{{ {'guest': '1Gi', 'hugepages': {'pageSize': none}, 'x': {}} }}",
                "list": "{{ [1, none, {'a': none}, []] }}",
            }),
            json!({}),
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            out,
            json!({"memory": {"guest": "1Gi", "x": {}}, "list": [1, []]})
        );
    }

    #[test]
    fn mixed_text_renders_as_a_string_without_escaping() {
        let out = render(
            json!({"name": "{{ f }}.{{ s }}", "html": "{{ q }}", "plain": "a{b}"}),
            json!({"f": "u1", "s": "medium", "q": "<\"&'>"}),
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            out,
            json!({"name": "u1.medium", "html": "<\"&'>", "plain": "a{b}"})
        );
    }

    #[test]
    fn undefined_is_an_error_with_the_field_path() {
        let err = render(
            json!({"spec": {"list": [1, "{{ size.cpus }}"]}}),
            json!({"size": {"cpu": 1}}),
        )
        .unwrap_err();
        assert_eq!(field_to_string(&err.field), "spec.list[1]");
        assert!(matches!(err.kind, LeafErrorKind::Template(_)));
    }

    #[test]
    fn undefined_inside_a_built_value_is_an_error() {
        let ctx = json!({"traits": {"hugepages": true, "size": "2Mi"}, "l": [1]});
        for leaf in [
            "{{ {'pageSize': traits.hugepage} if traits.hugepages else none }}",
            "{{ [1, {'a': traits.nope}] }}",
            "x{{ {'a': traits.nope} }}",
            "{{ {'a': [traits.nope]} }}",
            "{{ [traits.nope] | reverse }}",
            "{{ {'a': traits.nope} | items }}",
            "{{ {'a': 1 if false} }}",
        ] {
            let err = render(json!({"spec": {"hugepages": leaf}}), ctx.clone()).unwrap_err();
            assert_eq!(field_to_string(&err.field), "spec.hugepages", "{leaf}");
            let LeafErrorKind::Template(e) = err.kind else {
                panic!("{leaf}: not a template error");
            };
            assert_eq!(e.kind(), minijinja::ErrorKind::UndefinedError, "{leaf}");
        }
        let err = render(json!("{{ [1, {'a': traits.nope}] }}"), ctx.clone()).unwrap_err();
        let LeafErrorKind::Template(e) = err.kind else {
            panic!("not a template error");
        };
        assert!(e.to_string().contains("`[1].a` inside the value"), "{e}");
        // Defined values, and text that prints nothing for a missing `else`, still render.
        let out = render(
            json!({"a": "{{ {'pageSize': traits.size} }}", "b": "x{{ 1 if false }}", "c": "{{ [l, {'k': none}] }}"}),
            ctx,
        )
        .unwrap()
        .unwrap();
        assert_eq!(out, json!({"a": {"pageSize": "2Mi"}, "b": "x", "c": [[1]]}));
    }

    #[test]
    fn default_filter_and_defined_test_work_under_strict() {
        let out = render(
            json!({"a": "{{ t.x | default(3) }}", "b": "{{ t.x is defined }}"}),
            json!({"t": {}}),
        )
        .unwrap()
        .unwrap();
        assert_eq!(out, json!({"a": 3, "b": false}));
    }

    #[test]
    fn leaves_that_can_grow_a_value_are_told_apart() {
        let env = sandbox();
        let grows = |leaf: &'static str| {
            let tree = Box::leak(Box::new(json!({ "a": leaf })));
            let mut templates = Templates::new(&env);
            templates.add_tree(tree);
            templates.may_grow()
        };
        let watch = |leaf: &'static str| {
            let tree = Box::leak(Box::new(json!({ "a": leaf })));
            let mut templates = Templates::new(&env);
            templates.add_tree(tree);
            templates.watch()
        };
        use crate::render::watch::Watch;
        // Answered without minijinja: nothing to watch.
        for leaf in ["plain", "{{ size.cpu }}", "{{ traits.numa or none }}"] {
            assert_eq!(watch(leaf), Watch::Nothing, "{leaf}");
        }
        // A leaf minijinja runs may compare or search large values for as long as its fuel
        // lasts, without growing any: its time is watched.
        for leaf in [
            "{{ range(99999) == range(99999) }}",
            "{{ traits.list == traits.list }}",
            "{{ 5 in range(99999) }}",
        ] {
            assert_eq!(watch(leaf), Watch::Time, "{leaf}");
        }
        assert_eq!(watch("{{ a ~ a }}"), Watch::TimeAndMemory);
        // What the shipped catalog writes: paths, `or none`, conditionals, literals.
        for leaf in [
            "plain",
            "{{ size.cpu }}",
            "{{ traits.numa or none }}",
            "{{ size.name }}{{ variant.suffix }}",
            "{{ {'pageSize': traits.hugepages} if traits.hugepages else none }}",
            "{{ size.cpu if traits.maxSockets == 'guest' else (traits.maxSockets or none) }}",
        ] {
            assert!(!grows(leaf), "{leaf}");
        }
        for leaf in [
            "{{ a ~ a }}",
            "{{ a + a }}",
            "{{ 'x' * 9 }}",
            "{{ a | join(',') }}",
            "{% for i in a %}{{ i }}{% endfor %}",
        ] {
            assert!(grows(leaf), "{leaf}");
        }
    }

    #[test]
    fn filters_that_write_in_proportion_to_an_argument_are_bounded_first() {
        let refused = [
            "{{ 'a' | indent(18446744073709551615) }}",
            "{{ 'a' | indent(width=100000000000) }}",
            "{{ ('a\n' * 1000) | indent(5000) }}",
            "{{ '%18446744073709551615s' | format('a') }}",
            "{{ '%(k)s %.99999999f' | format(k=1) }}",
            "{{ ('a' * 999999) | replace('a', 'aaaaaaaaaa') }}",
            "{{ ('a' * 999999) | replace('', 'bbbbbbbbbb') }}",
            "{{ range(10000) | join('a' * 99999) }}",
            "{{ range(10000) | join(d='a' * 99999) }}",
        ];
        for leaf in refused {
            let err = render(json!({"x": leaf}), json!({})).unwrap_err();
            let text = format!("{:?}", err.kind);
            assert!(
                text.contains("would write more than 4194304 bytes"),
                "{leaf}: {text}"
            );
        }
        // Within the bound, each filter writes what minijinja writes.
        let kept = json!({
            "i": "{{ 'x\ny' | indent(2, true) }}",
            "k": "{{ 'x\ny' | indent(width=3) }}",
            "f": "{{ '%-5s|%05.2f|%%|%3d' | format('ab', 3.14159, 7) }}",
            "r": "{{ 'abc' | replace('b', 'XY') }}",
            "e": "{{ 'ab' | replace('', '-') }}",
            "j": "{{ range(4) | join(d='-') }}",
        });
        let out = render(kept, json!({})).unwrap().unwrap();
        assert_eq!(
            out,
            json!({"i": "  x\n  y", "k": "x\n   y", "f": "ab   |03.14|%|  7", "r": "aXYc",
                   "e": "-a-b-", "j": "0-1-2-3"})
        );
        assert_eq!(
            printf_widths("%-20s %08.3f %(name)10s %% 99"),
            20 + 8 + 3 + 10
        );
        assert_eq!(printf_widths("%99999999999999999999999s"), usize::MAX);
    }

    #[test]
    fn blocks_with_too_many_operators_are_refused_before_minijinja_sees_them() {
        let at_limit = vec!["1"; MAX_BLOCK_OPERATORS + 1].join(" + ");
        let over = format!("{at_limit} + 1");
        assert!(too_deep(&format!("{{{{ {at_limit} }}}}")).is_none());
        // Many short blocks are fine: the limit is per block.
        assert!(too_deep(&format!("{{{{ 1 + 1 }}}}{}", "{{ a.b }}x".repeat(5_000))).is_none());
        // What a block quotes, comments out or marks raw is not counted.
        let quoted = "+".repeat(5_000);
        assert!(too_deep(&format!("{{{{ '{quoted}' ~ \"{quoted}\" }}}}")).is_none());
        assert!(too_deep(&format!("{{# {{{{ {over} }}}} #}}")).is_none());
        assert!(too_deep(&format!("{{% raw %}}{{{{ {over} }}}}{{% endraw %}}")).is_none());
        // A `}}` inside brackets does not end the block, as in minijinja.
        let inside = format!("{{{{ {{'a': {{'b': 1}}}} + {over} }}}}");
        assert!(too_deep(&inside).is_some());
        // Ends inside a string, after an escape: the scan stops at the end.
        for cut in ["{{ '\\", "{{ '\\é", "{{ \"a\\\"", "{% raw", "{#", "{{", "{"] {
            assert!(too_deep(cut).is_none(), "{cut}");
        }
        let chains = [
            format!("{{{{ {over} }}}}"),
            format!("{{{{ {}1 }}}}", "not ".repeat(20_000)),
            format!("{{{{ {}1 }}}}", "-".repeat(20_000)),
            format!("{{{{ x{} }}}}", "|list".repeat(20_000)),
            format!("{{{{ x{} }}}}", "[0]".repeat(20_000)),
            format!(
                "{{% if {} %}}x{{% endif %}}",
                vec!["a"; 20_000].join(" and ")
            ),
            format!("line\n\n{{{{ {} }}}}", vec!["a"; 20_000].join(" or ")),
        ];
        for leaf in &chains {
            let depth = too_deep(leaf).expect("refused");
            let error = render(json!({"x": leaf}), json!({"a": true, "x": [1]}))
                .expect_err("refused")
                .kind;
            let LeafErrorKind::Template(error) = error else {
                panic!("{error:?}")
            };
            assert!(
                error.to_string().contains("more than 1000 operators"),
                "{error}"
            );
            assert_eq!(depth.line, if leaf.starts_with("line") { 3 } else { 1 });
        }
        // A refused leaf is found in a tree nothing renders, too.
        let env = sandbox();
        let mut templates = Templates::new(&env);
        let tree = json!({"spare": chains[0]});
        templates.add_tree(&tree);
        let errors = templates.syntax_errors(&tree);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].field, vec![FieldStep::Key("spare".into())]);
    }

    #[test]
    fn a_value_nested_deeper_than_the_recursion_limit_is_refused() {
        let batched = |n: usize| format!("{{{{ [1]{} }}}}", "|batch(1)".repeat(n));
        // `[1]` is one level, and each `batch(1)` wraps it in one more.
        let fine = render(json!({"x": batched(RECURSION_LIMIT - 1)}), json!({})).unwrap();
        let mut depth = 0;
        let mut at = &fine.unwrap()["x"];
        while let Some(first) = at.get(0) {
            depth += 1;
            at = first;
        }
        assert_eq!(depth, RECURSION_LIMIT);
        let error = render(json!({"x": batched(RECURSION_LIMIT)}), json!({})).unwrap_err();
        let LeafErrorKind::Convert(message) = error.kind else {
            panic!("{:?}", error.kind)
        };
        assert!(message.contains("nests deeper than 64 levels"), "{message}");
    }

    /// Where minijinja's own arithmetic would panic, the leaf fails with an error instead: a
    /// zero divisor in `divisibleby`, `loop.cycle()` with nothing to cycle, and a guarded
    /// filter's raw built-in named through `map` (past its size checks).
    #[test]
    fn templates_cannot_reach_a_panic_in_the_engine() {
        for (leaf, says) in [
            ("{{ 1 is divisibleby 0 }}", "the divisor is zero"),
            ("{{ 1.5 is divisibleby false }}", "the divisor is zero"),
            (
                "{% for x in [1] %}{{ loop.cycle() }}{% endfor %}",
                "the template engine failed on this template",
            ),
            (
                "{{ ['a']|map('indent (built-in)', 18446744073709551615)|join }}",
                "unguarded form cannot be named",
            ),
        ] {
            let error = render(json!({"x": leaf}), json!({})).unwrap_err();
            let LeafErrorKind::Template(e) = &error.kind else {
                panic!("{leaf}: {:?}", error.kind)
            };
            assert!(e.to_string().contains(says), "{leaf}: {e}");
        }
        for (leaf, is) in [
            ("{{ 6 is divisibleby 3 }}", true),
            ("{{ 7 is divisibleby 2 }}", false),
            ("{{ 8 is divisibleby 2.0 }}", true),
            ("{{ 7.5 is divisibleby 2.5 }}", true),
            (
                "{{ (-170141183460469231731687303715884105727 - 1) is divisibleby -1 }}",
                true,
            ),
            ("{{ 'a' is divisibleby 0 }}", false),
            (
                "{% for x in [1, 2] %}{{ loop.cycle('a', 'b') }}{% endfor %}",
                false,
            ),
        ] {
            let value = render(json!({"x": leaf}), json!({})).unwrap().unwrap();
            match value["x"].as_bool() {
                Some(b) => assert_eq!(b, is, "{leaf}"),
                None => assert_eq!(value["x"], "ab", "{leaf}"),
            }
        }
    }

    #[test]
    fn runaway_templates_run_out_of_fuel() {
        let err = render(
            json!(
                "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}"
            ),
            json!({}),
        )
        .unwrap_err();
        assert!(matches!(err.kind, LeafErrorKind::Template(_)));
    }

    #[test]
    fn values_too_large_to_print_are_refused_before_they_are_built() {
        // A sequence repeated a hundred million times is lazy; returning it, printing it or
        // handing it to a filter that reads it whole would make it real.
        for leaf in [
            "{{ [1] * 100000000 }}",
            "x{{ [1] * 100000000 }}",
            "{{ [{'a': 'x' * 250000}] * 2000 }}",
            "{{ ([1] * 100000000) | join(',') }}",
            "{{ ([1] * 100000000) | list | length }}",
            "{{ ([1] * 100000000) | sort | first }}",
            "{{ (['x' * 1000000] * 100) | map('upper') | first }}",
        ] {
            let err = render(json!(leaf), json!({})).unwrap_err();
            let text = match &err.kind {
                LeafErrorKind::ValueTooLarge => "too large".to_string(),
                LeafErrorKind::Template(e) => e.to_string(),
                other => panic!("{leaf}: {other:?}"),
            };
            assert!(text.contains("too large"), "{leaf}: {text}");
        }
        // The guarded filters still do their job, keyword arguments included.
        assert_eq!(
            render(
                json!("{{ [3, 1, 2] | sort(reverse=true) | join('-') }} {{ {'b': 1, 'a': 2} | dictsort | map('first') | join }} {{ '%s!' | format('hi') }}"),
                json!({})
            )
            .unwrap(),
            Some(json!("3-2-1 ab hi!"))
        );
        assert_eq!(
            render(json!("{{ [1, 2] * 3 }}"), json!({})).unwrap(),
            Some(json!([1, 2, 1, 2, 1, 2]))
        );
    }

    #[test]
    fn a_float_that_is_not_finite_is_an_error_not_a_dropped_field() {
        for (leaf, at) in [
            ("{{ 1e308 * 10 }}", "the value"),
            ("{{ {'a': [1, 1e308 * 10]} }}", "`a[1]`"),
        ] {
            let err = render(json!(leaf), json!({})).unwrap_err();
            match err.kind {
                LeafErrorKind::Convert(m) => assert!(m.starts_with(at), "{leaf}: {m}"),
                other => panic!("{leaf}: {other:?}"),
            }
        }
        assert_eq!(
            render(json!("{{ 1.5 * 2 }}"), json!({})).unwrap(),
            Some(json!(3.0))
        );
    }

    #[test]
    fn environment_has_no_debug_or_loader() {
        assert!(render(json!("{{ debug() }}"), json!({})).is_err());
        assert!(render(json!("{% include 'x' %}"), json!({})).is_err());
    }
}

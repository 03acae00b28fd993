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

use std::collections::HashMap;

use minijinja::{AutoEscape, Environment, UndefinedBehavior};
use serde_json::{Map, Value};

/// Instructions one leaf may execute before it is stopped.
pub const FUEL: u64 = 100_000;
/// How deep templates may nest calls and data structures.
pub const RECURSION_LIMIT: usize = 64;
/// The most text one leaf may render to.
pub const MAX_LEAF_BYTES: usize = 256 * 1024;

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
    env.set_auto_escape_callback(|_| AutoEscape::None);
    env.set_fuel(Some(FUEL));
    env.set_recursion_limit(RECURSION_LIMIT);
    // Name the undefined variable in errors in release builds too (minijinja only does it in
    // debug builds by default).
    env.set_debug(true);
    // `debug()` dumps the whole context; it has no place in a manifest.
    env.remove_global("debug");
    env
}

/// One template leaf, compiled once and evaluated for every combination.
enum Leaf<'e, 's> {
    Expression(minijinja::Expression<'e, 's>),
    Text(minijinja::Template<'e, 's>),
    /// Does not compile; rendering it again reports the error with the combination.
    Broken,
}

/// The template leaves of a catalog, compiled once per run.
pub struct Templates<'e, 's> {
    env: &'e Environment<'s>,
    leaves: HashMap<&'s str, Leaf<'e, 's>>,
}

impl<'e, 's> Templates<'e, 's> {
    /// An empty set of compiled leaves for `env`.
    pub fn new(env: &'e Environment<'s>) -> Self {
        Templates {
            env,
            leaves: HashMap::new(),
        }
    }

    /// Compile every template leaf of `tree`.
    pub fn add_tree(&mut self, tree: &'s Value) {
        match tree {
            Value::String(s) => self.add_leaf(s),
            Value::Object(map) => map.values().for_each(|v| self.add_tree(v)),
            Value::Array(items) => items.iter().for_each(|v| self.add_tree(v)),
            _ => {}
        }
    }

    fn add_leaf(&mut self, s: &'s str) {
        if is_template(s) && !self.leaves.contains_key(s) {
            self.leaves.insert(s, self.compile(s));
        }
    }

    fn compile(&self, s: &'s str) -> Leaf<'e, 's> {
        // A leaf that is exactly `{{ … }}` keeps its type. If it does not parse as one
        // expression (`{{ a }} and {{ b }}`), it is ordinary template text.
        single_expression(s)
            .and_then(|inner| self.env.compile_expression(inner).ok())
            .map(Leaf::Expression)
            .or_else(|| self.env.template_from_str(s).ok().map(Leaf::Text))
            .unwrap_or(Leaf::Broken)
    }

    /// Render every template leaf of `tree` with `ctx` in scope. `None` means the whole tree
    /// was dropped (it was a single `{{ … }}` that gave `none`).
    pub fn render_tree(
        &self,
        tree: &'s Value,
        ctx: &minijinja::Value,
    ) -> Result<Option<Value>, LeafError> {
        let mut field = Vec::new();
        self.render_node(tree, ctx, &mut field)
            .map_err(|kind| LeafError { field, kind })
    }

    fn render_node(
        &self,
        node: &'s Value,
        ctx: &minijinja::Value,
        field: &mut Vec<FieldStep>,
    ) -> Result<Option<Value>, LeafErrorKind> {
        match node {
            Value::String(s) => self.render_leaf(s, ctx),
            Value::Object(map) => {
                let mut out = Map::new();
                for (key, value) in map {
                    field.push(FieldStep::Key(key.clone()));
                    let rendered = self.render_node(value, ctx, field)?;
                    field.pop();
                    if let Some(v) = rendered {
                        out.insert(key.clone(), v);
                    }
                }
                if out.is_empty() && !map.is_empty() {
                    return Ok(None);
                }
                Ok(Some(Value::Object(out)))
            }
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    field.push(FieldStep::Index(i));
                    let rendered = self.render_node(item, ctx, field)?;
                    field.pop();
                    out.extend(rendered);
                }
                Ok(Some(Value::Array(out)))
            }
            other => Ok(Some(other.clone())),
        }
    }

    fn render_leaf(
        &self,
        s: &'s str,
        ctx: &minijinja::Value,
    ) -> Result<Option<Value>, LeafErrorKind> {
        if !is_template(s) {
            return Ok(Some(Value::String(s.to_string())));
        }
        let compiled_now;
        let leaf = match self.leaves.get(s) {
            Some(leaf) => leaf,
            None => {
                compiled_now = self.compile(s);
                &compiled_now
            }
        };
        let text = match leaf {
            Leaf::Expression(expr) => {
                let value = expr.eval(ctx).map_err(LeafErrorKind::Template)?;
                // An expression may evaluate to undefined without failing; rendering it as
                // text below raises the strict-mode error with minijinja's own message.
                if !value.is_undefined() {
                    return to_json(&value);
                }
                self.env.render_str(s, ctx)
            }
            Leaf::Text(template) => template.render(ctx),
            Leaf::Broken => self.env.render_str(s, ctx),
        }
        .map_err(LeafErrorKind::Template)?;
        if text.len() > MAX_LEAF_BYTES {
            return Err(LeafErrorKind::TooLarge(text.len()));
        }
        Ok(Some(Value::String(text)))
    }
}

fn is_template(s: &str) -> bool {
    s.contains("{{") || s.contains("{%") || s.contains("{#")
}

/// The expression inside a leaf that is a single `{{ … }}`, whitespace control stripped.
fn single_expression(s: &str) -> Option<&str> {
    let inner = s.trim().strip_prefix("{{")?.strip_suffix("}}")?;
    let inner = inner.strip_prefix('-').unwrap_or(inner);
    let inner = inner.strip_suffix('-').unwrap_or(inner);
    Some(inner)
}

fn to_json(value: &minijinja::Value) -> Result<Option<Value>, LeafErrorKind> {
    if value.is_none() {
        return Ok(None);
    }
    let json = serde_json::to_value(value).map_err(|e| LeafErrorKind::Convert(e.to_string()))?;
    if let Value::String(s) = &json
        && s.len() > MAX_LEAF_BYTES
    {
        return Err(LeafErrorKind::TooLarge(s.len()));
    }
    Ok(Some(json))
}

/// Turn a JSON context into a template context.
pub fn context(value: &Value) -> minijinja::Value {
    minijinja::Value::from(minijinja::value::Serde(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn render(tree: Value, ctx: Value) -> Result<Option<Value>, LeafError> {
        let env = sandbox();
        let mut templates = Templates::new(&env);
        templates.add_tree(&tree);
        let first = templates.render_tree(&tree, &context(&ctx));
        // Leaves that were not compiled up front render the same way.
        let uncompiled = Templates::new(&env).render_tree(&tree, &context(&ctx));
        assert_eq!(format!("{first:?}"), format!("{uncompiled:?}"));
        first
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
    fn environment_has_no_debug_or_loader() {
        assert!(render(json!("{{ debug() }}"), json!({})).is_err());
        assert!(render(json!("{% include 'x' %}"), json!({})).is_err());
    }
}

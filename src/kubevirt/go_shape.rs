//! What Go's `encoding/json` does to a KubeVirt object on the way in and out, as a tree of the
//! fields concerned, walked once per object.
//!
//! KubeVirt answers with its Go types re-encoded, so:
//! - a field without `omitempty` is written with its zero value even when unset ([`GoZero`]);
//! - a quantity comes back as its canonical string (`3e9` is `3G`), and a `null` in a resource
//!   list as `"0"`;
//! - a `null` item of a list of structs is read as the empty struct (`disks: [null]` is a disk
//!   with no name), which the rules then treat like any other item.
//!
//! A [`Shape`] is built once from a table of field paths (`*` is every item of a list) and
//! walked along the object: each mapping is scanned once, its keys compared with the few
//! fields the shape knows there, instead of looking every path up from the root.

use serde_json::{Map, Value};

use crate::model::quantity::Quantity;

/// The zero value Go writes for a field without `omitempty`.
#[derive(Clone, Copy, Debug)]
pub enum GoZero {
    /// `""`, a string.
    Text,
    /// `0`, a number.
    Number,
    /// `"0"`, a zero `resource.Quantity`.
    Quantity,
    /// `{}`, a plain struct.
    Struct,
    /// `null`, a nil pointer, slice or map.
    Null,
}

impl GoZero {
    /// The value itself.
    pub fn value(self) -> Value {
        match self {
            GoZero::Text => Value::String(String::new()),
            GoZero::Number => Value::from(0),
            GoZero::Quantity => Value::String("0".into()),
            GoZero::Struct => Value::Object(Map::new()),
            GoZero::Null => Value::Null,
        }
    }
}

/// How the quantities at a place in a [`Shape`] are re-encoded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Quantities {
    #[default]
    None,
    /// The value here is a quantity.
    One,
    /// Every value of the mapping here is a quantity (a resource list).
    Values,
}

/// The fields Go treats specially below one place of an object (see the module doc).
#[derive(Debug, Default)]
pub struct Shape {
    /// The fields of the mapping here that matter, in table order.
    fields: Vec<(&'static str, Shape)>,
    /// The shape of every item, when the value here is a list.
    items: Option<Box<Shape>>,
    /// Written with this value where the mapping above lacks it or has `null`.
    zero: Option<GoZero>,
    quantities: Quantities,
    /// A `null` item of the list here is the empty struct.
    struct_items: bool,
}

/// The tables a [`Shape`] is built from; paths use `*` for every item of a list.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tables<'t> {
    /// Fields Go writes even when unset, with their zero value. A field is only written where
    /// its parent is present (a mapping); a parent listed before its children is written first.
    pub zero: &'t [(&'static [&'static str], GoZero)],
    /// Quantity fields; a path ending in `*` is every value of a mapping.
    pub quantities: &'t [&'static [&'static str]],
    /// Lists of structs, whose `null` items are read as `{}`.
    pub struct_lists: &'t [&'static [&'static str]],
}

impl Shape {
    /// The shape the tables describe.
    pub fn new(tables: Tables<'_>) -> Shape {
        let mut root = Shape::default();
        for (at, zero) in tables.zero {
            root.at(at).zero = Some(*zero);
        }
        for at in tables.quantities {
            root.quantity(at);
        }
        for at in tables.struct_lists {
            root.at(at).struct_items = true;
        }
        root
    }

    /// Write `path` with `zero` where it is unset (see [`Tables::zero`]).
    pub fn zero(&mut self, path: &[&'static str], zero: GoZero) -> &mut Shape {
        self.at(path).zero = Some(zero);
        self
    }

    /// Read the `null` items of the list at `path` as empty structs.
    pub fn struct_list(&mut self, path: &[&'static str]) -> &mut Shape {
        self.at(path).struct_items = true;
        self
    }

    /// Re-encode the quantity at `path` (see [`Tables::quantities`]).
    pub fn quantity(&mut self, path: &[&'static str]) -> &mut Shape {
        match path.split_last() {
            Some((&"*", parents)) => self.at(parents).quantities = Quantities::Values,
            _ => self.at(path).quantities = Quantities::One,
        }
        self
    }

    /// The node at `path`, made on the way: shapes that recur (a label selector, an affinity
    /// term) are described once and added at each place.
    pub fn at(&mut self, path: &[&'static str]) -> &mut Shape {
        let Some((first, rest)) = path.split_first() else {
            return self;
        };
        let next = if *first == "*" {
            self.items.get_or_insert_with(Box::default)
        } else {
            let i = match self.fields.iter().position(|(k, _)| k == first) {
                Some(i) => i,
                None => {
                    self.fields.push((first, Shape::default()));
                    self.fields.len() - 1
                }
            };
            &mut self.fields[i].1
        };
        next.at(rest)
    }

    /// Rewrite `v` (the value at this place) as Go would read and re-encode it.
    pub fn apply(&self, v: &mut Value) {
        self.walk(v, true);
    }

    /// As [`Shape::apply`], but only where `v` says something: a `null` field or item becomes
    /// its zero value and quantities are re-encoded, and no absent field is written.
    pub fn apply_to_present(&self, v: &mut Value) {
        self.walk(v, false);
    }

    fn walk(&self, v: &mut Value, write_absent: bool) {
        match v {
            Value::Array(items) => {
                for item in items {
                    if self.struct_items && item.is_null() {
                        *item = Value::Object(Map::new());
                    }
                    if let Some(shape) = &self.items {
                        shape.walk(item, write_absent);
                    }
                }
            }
            Value::Object(map) => {
                if !self.fields.is_empty() {
                    self.walk_fields(map, write_absent);
                }
                if self.quantities == Quantities::Values {
                    map.values_mut().for_each(quantity_in_a_list);
                }
            }
            _ => {}
        }
    }

    fn walk_fields(&self, map: &mut Map<String, Value>, write_absent: bool) {
        // Which fields the mapping has (the first 64; beyond, they are looked up).
        let mut seen = 0u64;
        for (key, value) in map.iter_mut() {
            let Some(i) = self.fields.iter().position(|(k, _)| k == key) else {
                continue;
            };
            if i < 64 {
                seen |= 1 << i;
            }
            let shape = &self.fields[i].1;
            if value.is_null()
                && let Some(zero) = shape.zero
            {
                *value = zero.value();
            }
            if shape.quantities == Quantities::One {
                canonical_float_quantity(value);
            }
            shape.walk(value, write_absent);
        }
        if !write_absent {
            return;
        }
        for (i, (key, shape)) in self.fields.iter().enumerate() {
            let Some(zero) = shape.zero else { continue };
            let present = if i < 64 {
                seen & (1 << i) != 0
            } else {
                map.contains_key(*key)
            };
            if !present {
                let mut value = zero.value();
                shape.apply(&mut value);
                map.insert((*key).to_string(), value);
            }
        }
    }
}

/// A quantity as Go re-encodes it, where kvrender's spelling would read differently: a
/// decimal number (not an integer) becomes its canonical string, and a string with blanks
/// around it loses them (Go trims a quantity before parsing it). Anything else is left alone:
/// an integer or another string is a spelling of the same amount.
pub fn canonical_float_quantity(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            if let Some(q) = Quantity::from_json(v) {
                *v = q.to_json();
            }
        }
        Value::String(s) if s.trim().len() != s.len() => {
            let trimmed = s.trim();
            if Quantity::parse(trimmed).is_ok() {
                *s = trimmed.to_string();
            }
        }
        _ => {}
    }
}

/// A quantity of a resource list (`requests`, `limits`) as Go re-encodes it: `null` reads as
/// the zero quantity, which is written `"0"`; a decimal number as its canonical string.
pub fn quantity_in_a_list(v: &mut Value) {
    if v.is_null() {
        *v = GoZero::Quantity.value();
    } else {
        canonical_float_quantity(v);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn quantities_lose_blanks_and_decimal_numbers_as_go_reads_them() {
        for (given, expected) in [
            (json!(" 1Gi"), json!("1Gi")),
            (json!("2Gi\t"), json!("2Gi")),
            (json!("1024Mi"), json!("1024Mi")),
            (json!(" not a quantity"), json!(" not a quantity")),
            (json!(1.5), json!("1500m")),
            (json!(3), json!(3)),
        ] {
            let mut v = given.clone();
            canonical_float_quantity(&mut v);
            assert_eq!(v, expected, "{given}");
        }
    }

    const ZERO: &[(&[&str], GoZero)] = &[
        (&["a"], GoZero::Struct),
        (&["a", "b"], GoZero::Text),
        (&["list", "*", "name"], GoZero::Text),
        (&["list", "*", "port"], GoZero::Number),
    ];
    const QUANTITIES: &[&[&str]] = &[&["res", "*"], &["list", "*", "size"]];
    const STRUCT_LISTS: &[&[&str]] = &[&["list"], &["plain"]];

    fn shape() -> Shape {
        Shape::new(Tables {
            zero: ZERO,
            quantities: QUANTITIES,
            struct_lists: STRUCT_LISTS,
        })
    }

    #[test]
    fn writes_zero_values_where_the_parent_is_present() {
        let mut v = json!({"other": 1});
        shape().apply(&mut v);
        // `a` is written, and then its own zero field.
        assert_eq!(v, json!({"other": 1, "a": {"b": ""}}));

        let mut v = json!({"a": null, "list": [{"port": null}, null, 3], "plain": [null, 1]});
        shape().apply(&mut v);
        assert_eq!(
            v,
            json!({
                "a": {"b": ""},
                "list": [{"port": 0, "name": ""}, {"name": "", "port": 0}, 3],
                "plain": [{}, 1]
            })
        );
    }

    #[test]
    fn keeps_set_values_and_their_order() {
        let mut v = json!({"list": [{"port": 8, "name": "x"}], "a": {"b": "set"}});
        let before = v.clone();
        shape().apply(&mut v);
        assert_eq!(v, before);
        let keys: Vec<&String> = v["list"][0].as_object().unwrap().keys().collect();
        assert_eq!(keys, ["port", "name"]);
    }

    #[test]
    fn re_encodes_quantities() {
        let mut v = json!({
            "a": {},
            "res": {"memory": 3e9, "cpu": 1.5, "gpu": null, "disk": 10, "x": "1Gi"},
            "list": [{"name": "n", "port": 1, "size": 0.5}]
        });
        shape().apply(&mut v);
        assert_eq!(
            v["res"],
            json!({"memory": "3G", "cpu": "1500m", "gpu": "0", "disk": 10, "x": "1Gi"})
        );
        assert_eq!(v["list"][0]["size"], json!("500m"));
    }

    #[test]
    fn null_items_of_other_lists_stay() {
        let shape = Shape::new(Tables {
            zero: ZERO,
            ..Tables::default()
        });
        let mut v = json!({"a": {"b": "x"}, "list": [null]});
        shape.apply(&mut v);
        assert_eq!(v["list"], json!([null]));
    }
}

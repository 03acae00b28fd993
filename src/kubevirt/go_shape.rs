//! What Go's `encoding/json` does to a KubeVirt object on the way in and out, as a tree of the
//! fields concerned, walked once per object.
//!
//! KubeVirt answers with its Go types re-encoded, so:
//! - a field without `omitempty` is written with its zero value even when unset ([`GoZero`]);
//! - a quantity written as a decimal number comes back as its canonical string (`1.5` is
//!   `1500m`; a whole one such as `3e9` was read as an integer), and a `null` in a resource
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
    /// `false`, a bool.
    False,
}

/// How a `metav1.Time` field is written back: always in UTC, to the second
/// (`2024-01-01T10:00:00.5+02:00` comes back as `2024-01-01T08:00:00Z`), and its zero value
/// (`null`, or the year 1 instant) as the field's kind has it. A value Go would not read is left
/// as it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoTime {
    /// A plain `metav1.Time` (conditions): the zero time is written `null`.
    Plain,
    /// `ObjectMeta.creationTimestamp` (`omitzero`): the zero time is left out.
    OmitZero,
    /// A `*metav1.Time` (`omitempty`): `null` is left out, the zero time is written `null`.
    Pointer,
}

impl GoZero {
    /// Whether `v` is this zero value (any spelling of a zero quantity).
    pub fn holds(self, v: &Value) -> bool {
        match (self, v) {
            (GoZero::Quantity, Value::String(s)) => {
                s == "0" || Quantity::parse(s).is_ok_and(|q| q.is_zero())
            }
            (GoZero::Struct, Value::Object(m)) => m.is_empty(),
            (GoZero::Text, Value::String(s)) => s.is_empty(),
            (GoZero::Number, Value::Number(n)) => n.as_f64() == Some(0.0),
            (GoZero::Null, Value::Null) => true,
            (GoZero::False, Value::Bool(b)) => !b,
            _ => false,
        }
    }

    /// The value itself.
    pub fn value(self) -> Value {
        match self {
            GoZero::Text => Value::String(String::new()),
            GoZero::Number => Value::from(0),
            GoZero::Quantity => Value::String("0".into()),
            GoZero::Struct => Value::Object(Map::new()),
            GoZero::Null => Value::Null,
            GoZero::False => Value::Bool(false),
        }
    }
}

/// Text KubeVirt's decoder rewrites into its canonical form where it reads as what it names,
/// and keeps as it is otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoIp {
    /// An IP address (a DNS nameserver, an NTP server).
    Address,
    /// A CIDR (a pod network's `vmNetworkCIDR`).
    Cidr,
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
    /// A `null` item of the list here is `""` (a list of strings).
    text_items: bool,
    /// A `null` value of the mapping here is `""` (a map of strings, such as labels).
    text_values: bool,
    /// The value here is a time.
    time: Option<GoTime>,
    /// The value here is an address or CIDR Go's decoder rewrites.
    ip: Option<GoIp>,
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
    /// Lists of strings, whose `null` items are read as `""`.
    pub string_lists: &'t [&'static [&'static str]],
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
        for at in tables.string_lists {
            root.string_list(at);
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

    /// Read the `null` items of the list of strings at `path` as `""`.
    pub fn string_list(&mut self, path: &[&'static str]) -> &mut Shape {
        self.at(path).text_items = true;
        self
    }

    /// Read the `null` values of the map of strings at `path` as `""`.
    pub fn string_map(&mut self, path: &[&'static str]) -> &mut Shape {
        self.at(path).text_values = true;
        self
    }

    /// Re-encode the time at `path` (see [`GoTime`]).
    pub fn time(&mut self, path: &[&'static str], time: GoTime) -> &mut Shape {
        self.at(path).time = Some(time);
        self
    }

    /// Rewrite the address or CIDR at `path` as Go's decoder does.
    pub fn ip(&mut self, path: &[&'static str], kind: GoIp) -> &mut Shape {
        self.at(path).ip = Some(kind);
        self
    }

    /// Rewrite every item of the list of addresses or CIDRs at `path` as Go's decoder does.
    pub fn ip_items(&mut self, path: &[&'static str], kind: GoIp) -> &mut Shape {
        self.at(path).items.get_or_insert_with(Box::default).ip = Some(kind);
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

    /// The node at `path`, if the shape has one.
    pub fn get(&self, path: &[&str]) -> Option<&Shape> {
        let Some((first, rest)) = path.split_first() else {
            return Some(self);
        };
        let next = if *first == "*" {
            self.items.as_deref()?
        } else {
            &self.fields.iter().find(|(k, _)| k == first)?.1
        };
        next.get(rest)
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

    /// Take out of `v` (the value at this place) each field Go writes whatever its value (see
    /// [`Tables::zero`]) that `input`, the same place as the user wrote it, does not have and
    /// that holds its zero value once the same is done below it. What is left is KubeVirt's
    /// answer without the zero values nobody wrote, which carry nothing: a non-pointer field's
    /// zero value decodes as the field left out.
    pub fn drop_unwritten_zeros(&self, v: &mut Value, input: Option<&Value>) {
        match v {
            Value::Object(map) => {
                if self.fields.is_empty() {
                    return;
                }
                let had = input.and_then(Value::as_object);
                map.retain(|key, value| {
                    let Some((_, shape)) = self.fields.iter().find(|(k, _)| k == key) else {
                        return true;
                    };
                    let before = had.and_then(|h| h.get(key));
                    shape.drop_unwritten_zeros(value, before);
                    before.is_some() || shape.zero.is_none_or(|zero| !zero.holds(value))
                });
            }
            Value::Array(items) => {
                let Some(shape) = self.items.as_deref() else {
                    return;
                };
                let had = input.and_then(Value::as_array);
                for (i, item) in items.iter_mut().enumerate() {
                    shape.drop_unwritten_zeros(item, had.and_then(|h| h.get(i)));
                }
            }
            _ => {}
        }
    }

    /// Drop every `null` under `v` that Go leaves out: a nil pointer, map or list of an
    /// `omitempty` field, or a zero number, string or bool one. A `null` the shape knows as a
    /// field Go always writes is kept (see [`Shape::apply_to_present`]).
    pub fn drop_omitted_nulls(shape: Option<&Shape>, v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.retain(|key, value| {
                    let child = shape.and_then(|s| s.fields.iter().find(|(k, _)| k == key));
                    let child = child.map(|(_, c)| c);
                    if value.is_null() {
                        return child.is_some_and(|c| c.zero.is_some());
                    }
                    Shape::drop_omitted_nulls(child, value);
                    true
                });
            }
            Value::Array(items) => {
                let child = shape.and_then(|s| s.items.as_deref());
                for item in items {
                    Shape::drop_omitted_nulls(child, item);
                }
            }
            _ => {}
        }
    }

    fn walk(&self, v: &mut Value, write_absent: bool) {
        match v {
            Value::Array(items) => {
                for item in items {
                    if item.is_null() {
                        if self.struct_items {
                            *item = Value::Object(Map::new());
                        } else if self.text_items {
                            *item = Value::String(String::new());
                        }
                    }
                    if let Some(shape) = &self.items {
                        shape.walk(item, write_absent);
                    }
                }
            }
            Value::Object(map) => {
                if self.text_values {
                    for value in map.values_mut().filter(|v| v.is_null()) {
                        *value = Value::String(String::new());
                    }
                }
                if !self.fields.is_empty() {
                    self.walk_fields(map, write_absent);
                }
                if self.quantities == Quantities::Values {
                    map.values_mut().for_each(quantity_in_a_list);
                }
            }
            Value::String(text) => {
                let rewritten = match self.ip {
                    Some(GoIp::Address) => crate::model::ip::sanitized(text),
                    Some(GoIp::Cidr) => crate::model::ip::sanitized_cidr(text),
                    None => None,
                };
                if let Some(rewritten) = rewritten {
                    *text = rewritten;
                }
            }
            _ => {}
        }
    }

    fn walk_fields(&self, map: &mut Map<String, Value>, write_absent: bool) {
        // Which fields the mapping has (the first 64; beyond, they are looked up).
        let mut seen = 0u64;
        // Times Go leaves out.
        let mut omitted: Vec<&'static str> = Vec::new();
        for (key, value) in map.iter_mut() {
            let Some(i) = self.fields.iter().position(|(k, _)| k == key) else {
                continue;
            };
            if i < 64 {
                seen |= 1 << i;
            }
            let shape = &self.fields[i].1;
            if let Some(time) = shape.time
                && !go_time(value, time)
            {
                omitted.push(self.fields[i].0);
                continue;
            }
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
        for key in omitted {
            map.shift_remove(key);
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

/// Rewrite the time `v` as Go writes back a `metav1.Time` of kind `kind` (see [`GoTime`]);
/// `false` when Go leaves the field out.
fn go_time(v: &mut Value, kind: GoTime) -> bool {
    let zero = match v {
        Value::Null => true,
        Value::String(s) => match parse_rfc3339(s) {
            Some(GoInstant::Zero) => true,
            Some(GoInstant::Utc(utc)) => {
                *s = utc;
                false
            }
            None => return true,
        },
        _ => return true,
    };
    if !zero {
        return true;
    }
    match kind {
        GoTime::Plain => {
            *v = Value::Null;
            true
        }
        GoTime::OmitZero => false,
        GoTime::Pointer if v.is_null() => false,
        GoTime::Pointer => {
            *v = Value::Null;
            true
        }
    }
}

/// A time as `time.Parse(time.RFC3339, ...)` reads it.
#[derive(Debug, PartialEq, Eq)]
enum GoInstant {
    /// January 1 of year 1, 00:00:00 UTC: Go's zero time.
    Zero,
    /// Any other instant, written as Go writes it back: in UTC, to the second.
    Utc(String),
}

/// Whether Go reads `s` as a `metav1.Time` and writes it back: KubeVirt cannot decode an
/// object with a time it does not (`yesterday`, `2024-02-30T00:00:00Z`, a lower-case `t`).
pub fn go_reads_time(s: &str) -> bool {
    parse_rfc3339(s).is_some()
}

/// Parse `s` as Go's `time.Parse` does with the RFC 3339 layout:
/// `YYYY-MM-DDTHH:MM:SS`, an optional fraction of a second (after `.` or `,`; nine digits
/// count), then `Z` or an offset `±HH:MM` (up to 24 hours and 60 minutes, as Go's general
/// parser allows). `None` for anything Go would refuse, or an instant Go cannot write back
/// (outside the years 0 to 9999).
fn parse_rfc3339(s: &str) -> Option<GoInstant> {
    let b = s.as_bytes();
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let digits = b.get(range)?;
        digits.iter().try_fold(0i64, |n, d| {
            d.is_ascii_digit().then(|| n * 10 + i64::from(d - b'0'))
        })
    };
    if b.len() < 20
        || b[4] != b'-'
        || b[7] != b'-'
        || b[10] != b'T'
        || b[13] != b':'
        || b[16] != b':'
    {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if day < 1 || day > month_days || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut rest = &b[19..];
    let mut fraction = false;
    if rest.len() >= 2 && matches!(rest[0], b'.' | b',') && rest[1].is_ascii_digit() {
        let digits = rest[1..].iter().take_while(|d| d.is_ascii_digit()).count();
        fraction = rest[1..=digits.min(9)].iter().any(|d| *d != b'0');
        rest = &rest[1 + digits..];
    }
    let offset = match rest {
        [b'Z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let two = |a: u8, b: u8| {
                (a.is_ascii_digit() && b.is_ascii_digit())
                    .then(|| i64::from(a - b'0') * 10 + i64::from(b - b'0'))
            };
            let (h, m) = (two(*h1, *h2)?, two(*m1, *m2)?);
            if h > 24 || m > 60 {
                return None;
            }
            let offset = (h * 60 + m) * 60;
            if *sign == b'-' { -offset } else { offset }
        }
        _ => return None,
    };
    let seconds =
        days_from_civil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second - offset;
    let (days, time) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    if year == 1 && month == 1 && day == 1 && time == 0 && !fraction {
        return Some(GoInstant::Zero);
    }
    if !(0..=9999).contains(&year) {
        return None;
    }
    Some(GoInstant::Utc(format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        time / 3_600,
        time % 3_600 / 60,
        time % 60
    )))
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date `days` days after 1970-01-01.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A quantity as Go re-encodes it, where kvrender's spelling would read differently: a
/// decimal number (not an integer) becomes its canonical string, a string whose amount Go
/// does not keep (finer than a nano-unit, or a binary amount beyond 2^63 - 1) becomes the
/// canonical string of the amount Go keeps, and a string with blanks around it loses them (Go
/// trims a quantity before parsing it). Anything else is left alone: an integer or another
/// string is a spelling of the same amount.
pub fn canonical_float_quantity(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            if let Some(q) = Quantity::from_json(v) {
                *v = q.to_json();
            }
        }
        Value::String(s) => {
            let trimmed = s.trim();
            if may_change(trimmed)
                && let Some(q) = Quantity::changed_by_go(trimmed)
            {
                // Not the amount written: what Go keeps, in its canonical form.
                *s = q.to_string();
            } else if trimmed.len() != s.len() && Quantity::parse(trimmed).is_ok() {
                *s = trimmed.to_string();
            }
        }
        _ => {}
    }
}

/// Whether Go could keep another amount than the quantity `s` writes, cheaply over-answered so
/// that the usual short quantities (`4Gi`, `512Mi`, `100m`) are not parsed here: rounding to a
/// nano-unit needs a fraction or an exponent (`.`, `e`), and the cap of a binary amount at
/// 2^63 - 1 an `Ei` suffix or at least six characters (`8192Pi`).
fn may_change(s: &str) -> bool {
    s.len() >= 6 || s.ends_with("Ei") || s.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
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
    fn quantities_lose_blanks_decimal_numbers_and_amounts_go_does_not_keep() {
        for (given, expected) in [
            (json!(" 1Gi"), json!("1Gi")),
            (json!("2Gi\t"), json!("2Gi")),
            (json!("1024Mi"), json!("1024Mi")),
            (json!(" not a quantity"), json!(" not a quantity")),
            (json!(1.5), json!("1500m")),
            (json!("1e-30"), json!("1e-9")),
            (json!(" 0.5n "), json!("1n")),
            (json!("-0.0000000001"), json!("-1n")),
            (json!("16Ei"), json!("9223372036854775807")),
            (
                json!("123456789012345678901234567890Ki"),
                json!("9223372036854775807"),
            ),
            (json!("1e30"), json!("1e30")),
            (json!("0.000000001"), json!("0.000000001")),
            (json!(3), json!(3)),
        ] {
            let mut v = given.clone();
            canonical_float_quantity(&mut v);
            assert_eq!(v, expected, "{given}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2048, ..Default::default() })]

        /// The quick filter never passes over a quantity whose amount Go changes.
        #[test]
        fn the_quick_filter_misses_no_quantity_go_changes(
            s in "[+-]?[0-9]{1,22}(\\.[0-9]{0,12})?(|n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?[0-9]{1,2})"
        ) {
            if Quantity::changed_by_go(&s).is_some() {
                proptest::prop_assert!(may_change(&s), "{}", s);
            }
        }
    }

    #[test]
    fn times_are_read_as_go_reads_rfc3339_and_written_in_utc_to_the_second() {
        let utc = |s: &str| Some(GoInstant::Utc(s.to_string()));
        for (given, expected) in [
            ("2024-01-01T10:00:00Z", utc("2024-01-01T10:00:00Z")),
            ("2024-01-01T10:00:00.999+02:00", utc("2024-01-01T08:00:00Z")),
            ("2024-02-29T23:30:00,5-01:15", utc("2024-03-01T00:45:00Z")),
            ("2024-01-01T00:00:00+24:60", utc("2023-12-30T23:00:00Z")),
            ("1970-01-01T00:00:00-00:00", utc("1970-01-01T00:00:00Z")),
            ("9999-12-31T23:59:59Z", utc("9999-12-31T23:59:59Z")),
            ("0001-01-01T00:00:00Z", Some(GoInstant::Zero)),
            ("0001-01-01T01:00:00+01:00", Some(GoInstant::Zero)),
            // Only nine digits of a fraction count.
            ("0001-01-01T00:00:00.0000000001Z", Some(GoInstant::Zero)),
            ("0001-01-01T00:00:00.5Z", utc("0001-01-01T00:00:00Z")),
            ("2023-02-29T00:00:00Z", None),
            ("2024-01-01T24:00:00Z", None),
            ("2024-01-01T10:00:60Z", None),
            ("2024-01-01T10:00:00+25:00", None),
            ("2024-01-01t10:00:00z", None),
            ("2024-01-01T10:00:00", None),
            ("2024-01-01T10:00:00.Z", None),
            ("9999-12-31T23:59:59-01:00", None),
            ("2024-1-01T10:00:00Z", None),
        ] {
            assert_eq!(parse_rfc3339(given), expected, "{given}");
        }
    }

    #[test]
    fn a_zero_time_is_null_or_left_out_as_its_field_says() {
        let mut shape = Shape::default();
        shape
            .time(&["plain"], GoTime::Plain)
            .time(&["omit"], GoTime::OmitZero)
            .time(&["pointer"], GoTime::Pointer)
            .time(&["nil"], GoTime::Pointer);
        let zero = "0001-01-01T00:00:00Z";
        let mut v = json!({"plain": zero, "omit": zero, "pointer": zero, "nil": null, "x": 1});
        shape.apply(&mut v);
        assert_eq!(v, json!({"plain": null, "pointer": null, "x": 1}));
        let mut v = json!({"omit": null, "plain": "soon", "pointer": "2024-01-01T01:00:00+01:00"});
        shape.apply(&mut v);
        assert_eq!(
            v,
            json!({"plain": "soon", "pointer": "2024-01-01T00:00:00Z"})
        );
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
            ..Tables::default()
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

    #[test]
    fn null_items_of_string_lists_are_empty_strings() {
        let shape = Shape::new(Tables {
            string_lists: &[&["names"], &["terms", "*", "values"]],
            ..Tables::default()
        });
        let mut v = json!({
            "names": [null, "a"],
            "terms": [{"values": [null]}, {"values": null}],
            "other": [null],
        });
        shape.apply_to_present(&mut v);
        assert_eq!(
            v,
            json!({
                "names": ["", "a"],
                "terms": [{"values": [""]}, {"values": null}],
                "other": [null],
            })
        );
    }

    #[test]
    fn null_values_of_string_maps_are_empty_strings() {
        let mut shape = Shape::default();
        shape.string_map(&["selector", "matchLabels"]);
        let mut v = json!({
            "selector": {"matchLabels": {"a": null, "b": "x"}},
            "other": {"c": null},
        });
        shape.apply_to_present(&mut v);
        assert_eq!(
            v,
            json!({
                "selector": {"matchLabels": {"a": "", "b": "x"}},
                "other": {"c": null},
            })
        );
    }
}

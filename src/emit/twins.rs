//! Twins: a rendered catalog holds every instancetype and preference twice, cluster-scoped and
//! namespaced, the two trees equal but for `kind`. The second of such a pair is printed by
//! copying the text of the first and printing only its `kind` entry anew: the same bytes as
//! printing it, for about a third of the work (the comparison that proves them twins included).

use std::collections::BTreeMap;
use std::ops::Range;

use rayon::prelude::*;
use serde_json::Value;

use super::CHUNK;
use crate::load::yaml;
use crate::model::path::Fields;

/// The kinds whose objects may be printed from a twin, each with the kind of that twin.
const PAIRS: [(&str, &str); 2] = [
    (
        "VirtualMachineInstancetype",
        "VirtualMachineClusterInstancetype",
    ),
    (
        "VirtualMachinePreference",
        "VirtualMachineClusterPreference",
    ),
];

fn kind(value: &Value) -> Option<&str> {
    value.field("kind")?.as_str()
}

fn name(value: &Value) -> Option<&str> {
    value.field("metadata")?.field("name")?.as_str()
}

/// For each value, the earlier value it equals in everything but `kind` (and that is not
/// itself printed from a twin), when it has one.
pub(super) fn find(values: &[&Value]) -> Vec<Option<usize>> {
    let mut twin_of = vec![None; values.len()];
    let is_twin_kind = |k: &str| PAIRS.iter().any(|(_, twin)| *twin == k);
    let mut first: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (i, v) in values.iter().enumerate() {
        if let (Some(k), Some(n)) = (kind(v), name(v))
            && is_twin_kind(k)
        {
            first.entry((k, n)).or_insert(i);
        }
    }
    if first.is_empty() {
        return twin_of;
    }
    let candidates: Vec<(usize, usize)> = values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let (k, n) = (kind(v)?, name(v)?);
            let (_, twin_kind) = PAIRS.iter().find(|(own, _)| *own == k)?;
            let j = *first.get(&(*twin_kind, n))?;
            (j < i).then_some((i, j))
        })
        .collect();
    let confirmed: Vec<bool> = candidates
        .par_iter()
        .map(|&(i, j)| same_but_kind(values[j], values[i]))
        .collect();
    for (&(i, j), ok) in candidates.iter().zip(confirmed) {
        if ok {
            twin_of[i] = Some(j);
        }
    }
    twin_of
}

/// Whether two mappings have the same keys in the same order and the same values, `kind`
/// aside: then they print the same but for the `kind` entry.
fn same_but_kind(a: &Value, b: &Value) -> bool {
    let (Value::Object(a), Value::Object(b)) = (a, b) else {
        return false;
    };
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((ka, va), (kb, vb))| ka == kb && (ka == "kind" || same(va, vb)))
}

/// Equal and printed the same: key order counts (it does not for `Value`'s `==`), and so does
/// the sign of a zero.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
        }
        (Value::Number(a), Value::Number(b)) => {
            a.as_u64() == b.as_u64()
                && a.as_i64() == b.as_i64()
                && a.as_f64().map(f64::to_bits) == b.as_f64().map(f64::to_bits)
        }
        _ => a == b,
    }
}

/// Where one document went in its chunk's text.
enum Placed {
    /// Printed: its range, and the range of its `kind` entry.
    Own(Range<usize>, Option<Range<usize>>),
    /// To be copied from a twin.
    Twin,
}

/// The stream in parts, as `yaml_stream_parts` prints it, the values with a twin copied from it.
pub(super) fn print(values: &[&Value], twin_of: &[Option<usize>]) -> Vec<String> {
    let printed: Vec<(String, Vec<Placed>)> = values
        .par_chunks(CHUNK)
        .zip(twin_of.par_chunks(CHUNK))
        .map(|(chunk, twins)| {
            let own = twins.iter().filter(|t| t.is_none()).count();
            let mut out = String::with_capacity(own * 1024);
            let mut placed = Vec::with_capacity(chunk.len());
            for (v, twin) in chunk.iter().zip(twins) {
                if twin.is_some() {
                    placed.push(Placed::Twin);
                    continue;
                }
                let start = out.len();
                out.push_str("---\n");
                let kind = yaml::write_document_marking(&mut out, v, "kind");
                placed.push(Placed::Own(start..out.len(), kind));
            }
            (out, placed)
        })
        .collect();
    let text_of = |i: usize| match &printed[i / CHUNK].1[i % CHUNK] {
        Placed::Own(range, kind) => Some((&printed[i / CHUNK].0, range, kind.as_ref())),
        Placed::Twin => None,
    };
    let rebuilt: Vec<Option<String>> = printed
        .par_iter()
        .enumerate()
        .map(|(c, (text, placed))| {
            if placed.iter().all(|p| matches!(p, Placed::Own(..))) {
                return None;
            }
            // Sized to what is copied (a `kind` entry printed anew is about as long as the one
            // it replaces), so the text is not grown by doubling.
            let size: usize = placed
                .iter()
                .enumerate()
                .map(|(k, p)| match p {
                    Placed::Own(range, _) => range.len(),
                    Placed::Twin => twin_of[c * CHUNK + k]
                        .and_then(text_of)
                        .map_or(0, |(_, range, _)| range.len() + 16),
                })
                .sum();
            let mut out = String::with_capacity(size);
            for (k, p) in placed.iter().enumerate() {
                let i = c * CHUNK + k;
                match p {
                    Placed::Own(range, _) => out.push_str(&text[range.clone()]),
                    Placed::Twin => {
                        let twin = twin_of[i].and_then(text_of);
                        match twin {
                            Some((twin_text, range, Some(kind))) => {
                                out.push_str(&twin_text[range.start..kind.start]);
                                let key_value = values[i].field("kind").unwrap_or(&Value::Null);
                                yaml::write_top_level_entry(&mut out, "kind", key_value);
                                out.push_str(&twin_text[kind.end..range.end]);
                            }
                            // Not reached: a twin is a mapping with a `kind` that was printed.
                            _ => {
                                out.push_str("---\n");
                                yaml::write(&mut out, values[i]);
                            }
                        }
                    }
                }
            }
            Some(out)
        })
        .collect();
    printed
        .into_iter()
        .zip(rebuilt)
        .map(|((text, _), rebuilt)| rebuilt.unwrap_or(text))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn one_by_one(values: &[Value]) -> String {
        values
            .iter()
            .map(|v| format!("---\n{}", yaml::to_string(v)))
            .collect()
    }

    fn pair(spec: &Value, twin_spec: &Value) -> Vec<Value> {
        [
            "VirtualMachineClusterInstancetype",
            "VirtualMachineInstancetype",
        ]
        .iter()
        .zip([spec, twin_spec])
        .map(|(kind, spec)| {
            json!({
                "apiVersion": "instancetype.kubevirt.io/v1beta1",
                "kind": kind,
                "metadata": {"name": "u1.small", "labels": {"a": "1"}},
                "spec": spec,
            })
        })
        .collect()
    }

    #[test]
    fn a_twin_is_printed_from_its_pair() {
        let values = pair(&json!({"cpu": {"guest": 1}}), &json!({"cpu": {"guest": 1}}));
        let refs: Vec<&Value> = values.iter().collect();
        assert_eq!(find(&refs), vec![None, Some(0)]);
        assert_eq!(print(&refs, &find(&refs)).concat(), one_by_one(&values));
    }

    #[test]
    fn near_twins_are_printed_on_their_own() {
        for (a, b) in [
            (json!({"cpu": {"guest": 1}}), json!({"cpu": {"guest": 2}})),
            (json!({"x": 0.0}), json!({"x": -0.0})),
            (json!({"a": 1, "b": 2}), json!({"b": 2, "a": 1})),
            (json!({"a": [1, 2]}), json!({"a": [2, 1]})),
        ] {
            let values = pair(&a, &b);
            let refs: Vec<&Value> = values.iter().collect();
            assert_eq!(find(&refs), vec![None, None], "{a} and {b}");
            assert_eq!(crate::emit::yaml_stream(&values), one_by_one(&values));
        }
    }

    #[test]
    fn a_namespaced_object_before_its_pair_is_printed_on_its_own() {
        let mut values = pair(&json!({"cpu": {"guest": 1}}), &json!({"cpu": {"guest": 1}}));
        values.reverse();
        let refs: Vec<&Value> = values.iter().collect();
        assert_eq!(find(&refs), vec![None, None]);
    }
}

//! Findings as a SARIF 2.1.0 log, for code-scanning UIs. The tool's rules are every rule of
//! [`crate::validate::RULES`], so rule indexes are stable across runs.

use serde_json::{Value, json};

use crate::diagnostic::{Diagnostic, Severity};
use crate::validate::RULES;

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

fn result(d: &Diagnostic) -> Value {
    let mut region = serde_json::Map::new();
    if let Some(line) = d.origin.line {
        region.insert("startLine".into(), json!(line));
        if let Some(col) = d.column {
            region.insert("startColumn".into(), json!(col));
        }
    }
    let mut physical = json!({"artifactLocation": {"uri": &*d.origin.path}});
    if !region.is_empty() {
        physical["region"] = Value::Object(region);
    }
    let mut location = json!({ "physicalLocation": physical });
    if let Some(obj) = &d.object {
        let mut logical = json!({"fullyQualifiedName": obj.to_string(), "kind": "object"});
        if let Some(field) = &d.field {
            logical["decoratedName"] = json!(field);
        }
        location["logicalLocations"] = json!([logical]);
    }
    let mut text = String::new();
    if let Some(field) = &d.field {
        text.push_str(field);
        text.push_str(": ");
    }
    text.push_str(&d.message);
    let mut r = json!({
        "ruleId": d.code,
        "level": level(d.severity),
        "message": {"text": text},
        "locations": [location],
    });
    if let Some(i) = RULES.iter().position(|r| r.code == d.code) {
        r["ruleIndex"] = json!(i);
    }
    r
}

/// The SARIF log, pretty-printed, with a final newline.
pub fn report(diags: &[Diagnostic]) -> String {
    let rules: Vec<Value> = RULES
        .iter()
        .map(|r| {
            json!({
                "id": r.code,
                "name": r.name,
                "shortDescription": {"text": r.summary},
                "defaultConfiguration": {"level": level(r.severity)},
            })
        })
        .collect();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "kvrender",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "results": diags.iter().map(result).collect::<Vec<_>>(),
        }],
    });
    let mut s = serde_json::to_string_pretty(&log).unwrap_or_default();
    s.push('\n');
    s
}

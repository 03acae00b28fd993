//! Findings as one JSON document: `{"findings": [{severity, code, message, field, object:
//! {apiVersion, kind, namespace, name}, file, line, column}]}`. Every key is always present;
//! what is unknown is `null`. The message also ends with the line and column when there is a
//! column, as a GitLab issue's description does.

use serde_json::{Value, json};

use crate::diagnostic::Diagnostic;

fn finding(d: &Diagnostic) -> Value {
    let object = d.object.as_ref().map_or(Value::Null, |o| {
        json!({
            "apiVersion": o.api_version,
            "kind": o.kind,
            "namespace": o.namespace,
            "name": o.name,
        })
    });
    let message = match (d.origin.line, d.column) {
        (Some(line), Some(col)) => format!("{} (line {line}, column {col})", d.message),
        _ => d.message.clone(),
    };
    json!({
        "severity": d.severity.as_str(),
        "code": d.code,
        "message": message,
        "field": d.field,
        "object": object,
        "file": &*d.origin.path,
        "line": d.origin.line,
        "column": d.column,
    })
}

/// The report, pretty-printed, with a final newline.
pub fn report(diags: &[Diagnostic]) -> String {
    let findings: Vec<Value> = diags.iter().map(finding).collect();
    let mut s = serde_json::to_string_pretty(&json!({ "findings": findings }))
        .unwrap_or_else(|_| "{\"findings\": []}".into());
    s.push('\n');
    s
}

//! Findings as a SARIF 2.1.0 log, for code-scanning UIs. The tool's rules are every rule of
//! [`crate::validate::RULES`] followed by the codes that are not per-object rules (unreadable
//! files, configuration, presets, catalog rendering), so rule indexes are stable across runs.
//! File locations are URI references (RFC 3986), as SARIF requires: relative paths with each
//! segment percent-encoded, absolute ones as `file://` URIs.

use std::path::Path;

use serde_json::{Value, json};

use super::Checkout;
use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::origin::Origin;
use crate::validate::{RULES, Rule};

/// The codes findings can carry that are not rules of [`RULES`].
const OTHER_CODES: &[Rule] = &[
    Rule {
        code: codes::IO,
        name: "unreadable-input",
        summary: "A path the KRM function's `paths` or `catalogs` names cannot be read.",
        severity: Severity::Error,
    },
    Rule {
        code: codes::BAD_CONFIG,
        name: "bad-function-config",
        summary: "kvrender's configuration as a KRM function or kustomize plugin is invalid: an unknown key or value in its `functionConfig`, or a config file that does not parse; or the cluster profile (`--cluster-config`) has a field KubeVirt's configuration does not have (a warning).",
        severity: Severity::Error,
    },
    Rule {
        code: codes::PRESET,
        name: "preset",
        summary: "VirtualMachineInstancePresets: a preset KubeVirt would refuse (`validate`, `vmi`), one whose selector does not parse, which has KubeVirt refuse every VMI of its namespace, the presets' exclusion annotation on a VM's own metadata, where it does nothing (`validate`), a part of one it would skip, presets whose merge order changes the VMI, or the deprecation warning (`vmi`, `diff`); a preset field with no instancetype or preference equivalent, advice that would change what a VM runs with, or a VM KubeVirt would refuse once the advice is followed (`migrate presets`).",
        severity: Severity::Warning,
    },
    Rule {
        code: codes::CATALOG_RENDER,
        name: "catalog-render",
        summary: "A catalog that does not render: a malformed catalog document, an unknown part or trait, a template error (see the catalog format).",
        severity: Severity::Error,
    },
    Rule {
        code: codes::STALE_OUTPUT,
        name: "stale-rendered-object",
        summary: "An object in a kpt package, in the file kvrender renders it to, that no catalog document renders any more (a size or preference removed): a warning, or removed with an info result under the function's `prune`.",
        severity: Severity::Warning,
    },
];

/// Every rule of the log, in its order.
fn rules() -> impl Iterator<Item = &'static Rule> {
    RULES.iter().chain(OTHER_CODES)
}

/// `path` as a URI reference: `./` dropped, each segment percent-encoded, an absolute path
/// as a `file://` URI.
fn uri(path: &str) -> String {
    let path = path.strip_prefix("./").unwrap_or(path);
    let mut out = String::with_capacity(path.len() + 8);
    if path.starts_with('/') {
        out.push_str("file://");
    }
    // A colon in the first segment of a relative reference would read as a scheme.
    let mut colon_ok = path.starts_with('/');
    for byte in path.bytes() {
        // RFC 3986 `pchar` without `%` (which must be escaped itself), plus the separator.
        if byte.is_ascii_alphanumeric()
            || b"-._~!$&'()*+,;=@/".contains(&byte)
            || (byte == b':' && colon_ok)
        {
            colon_ok |= byte == b'/';
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// The directory SARIF paths are relative to: the checkout of the workflow or pipeline
/// (`GITHUB_WORKSPACE`, `CI_PROJECT_DIR`), where code scanning resolves them; elsewhere, paths
/// are left as they were given.
fn checkout() -> Option<std::path::PathBuf> {
    ["GITHUB_WORKSPACE", "CI_PROJECT_DIR"]
        .iter()
        .find_map(std::env::var_os)
        .map(std::path::PathBuf::from)
}

/// A SARIF `physicalLocation` for `origin`, with the column where there is one.
fn physical(origin: &Origin, column: Option<u32>, checkout: &Checkout) -> Value {
    let mut region = serde_json::Map::new();
    if let Some(line) = origin.line {
        region.insert("startLine".into(), json!(line));
        if let Some(col) = column {
            region.insert("startColumn".into(), json!(col));
        }
    }
    let path = checkout.relative(&origin.path);
    let mut physical = json!({"artifactLocation": {"uri": uri(&path)}});
    if !region.is_empty() {
        physical["region"] = Value::Object(region);
    }
    physical
}

fn result(d: &Diagnostic, checkout: &Checkout) -> Value {
    let mut location = json!({ "physicalLocation": physical(&d.origin, d.column, checkout) });
    if let Some(obj) = &d.object {
        let mut logical = json!({"fullyQualifiedName": obj.to_string(), "kind": "object"});
        if let Some(field) = &d.field {
            logical["properties"] = json!({ "field": field });
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
    // The other place the message names, such as the first of two definitions.
    if let Some(related) = d.related.as_deref() {
        r["relatedLocations"] = json!([{
            "id": 1,
            "physicalLocation": physical(related, None, checkout),
        }]);
    }
    if let Some(i) = rules().position(|r| r.code == d.code) {
        r["ruleIndex"] = json!(i);
    }
    r
}

/// The SARIF log, pretty-printed, with a final newline.
pub fn report(diags: &[Diagnostic]) -> String {
    let cwd = std::env::current_dir().ok();
    report_in(diags, checkout().as_deref(), cwd.as_deref())
}

/// [`report`], with paths made relative to `root`, relative ones taken from `cwd`.
fn report_in(diags: &[Diagnostic], root: Option<&Path>, cwd: Option<&Path>) -> String {
    let checkout = Checkout::new(root, cwd);
    let rules: Vec<Value> = rules()
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
            // Columns count Unicode code points, not UTF-16 units.
            "columnKind": "unicodeCodePoints",
            "results": diags.iter().map(|d| result(d, &checkout)).collect::<Vec<_>>(),
        }],
    });
    let mut s = serde_json::to_string_pretty(&log).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_uri_references() {
        assert_eq!(uri("./vms/web 1.yaml"), "vms/web%201.yaml");
        assert_eq!(
            uri("dir/ünï/a,1:2%.yaml"),
            "dir/%C3%BCn%C3%AF/a,1:2%25.yaml"
        );
        assert_eq!(uri("/tmp/a b.yaml"), "file:///tmp/a%20b.yaml");
        // A colon in the first segment would read as a scheme.
        assert_eq!(uri("c:d.yaml"), "c%3Ad.yaml");
        assert_eq!(uri("-"), "-");
    }

    /// In a workflow that runs in a folder of the checkout, the URIs are still the
    /// checkout's; the run says how its columns count.
    #[test]
    fn uris_are_relative_to_the_checkout() {
        let d = Diagnostic::error(
            "KV011",
            crate::origin::Origin::new("vms/a b.yaml", 0, Some(3)),
            "x",
        )
        .with_column(Some(5));
        let root = Path::new("/home/runner/work/repo");
        let log: Value =
            serde_json::from_str(&report_in(&[d], Some(root), Some(&root.join("manifests"))))
                .unwrap();
        let run = &log["runs"][0];
        assert_eq!(run["columnKind"], "unicodeCodePoints");
        assert_eq!(
            run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            "manifests/vms/a%20b.yaml"
        );
    }

    /// The first of two definitions, which a `KV020` message names, is the result's related
    /// location, so that code scanning links to it; a finding that names no other place has
    /// none.
    #[test]
    fn the_place_a_message_names_is_a_related_location() {
        let second = Diagnostic::error(
            codes::DUPLICATE,
            Origin::new("vms/b.yaml", 0, Some(9)),
            "VirtualMachine/a is defined twice: first at vms/a.yaml:3 (document 1)",
        )
        .with_related(Origin::new("vms/a.yaml", 0, Some(3)));
        let alone = Diagnostic::error("KV011", Origin::new("vms/c.yaml", 0, Some(1)), "x");
        let root = Path::new("/r");
        let log: Value =
            serde_json::from_str(&report_in(&[second, alone], Some(root), Some(root))).unwrap();
        let results = &log["runs"][0]["results"];
        assert_eq!(
            results[0]["relatedLocations"],
            json!([{"id": 1, "physicalLocation": {
                "artifactLocation": {"uri": "vms/a.yaml"},
                "region": {"startLine": 3},
            }}])
        );
        assert!(
            results[1].get("relatedLocations").is_none(),
            "{}",
            results[1]
        );
    }

    #[test]
    fn every_code_is_a_rule_once() {
        let all: Vec<&str> = rules().map(|r| r.code).collect();
        let mut sorted = all.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), all.len(), "{all:?}");
        for code in [
            codes::IO,
            codes::BAD_CONFIG,
            codes::PRESET,
            codes::CATALOG_RENDER,
        ] {
            assert!(all.contains(&code), "{code}");
        }
    }

    /// The README's rules table has one row per code of the log, and each row says what the
    /// rule's summary says (SARIF viewers show the summary), so the two cannot drift apart.
    #[test]
    fn every_rule_is_a_row_of_the_readme_table() {
        let readme = include_str!("../../README.md");
        let rows: Vec<&str> = readme.lines().filter(|l| l.starts_with("| `KV")).collect();
        for rule in rules() {
            let row = format!("| `{}` | {} |", rule.code, rule.summary);
            assert!(rows.contains(&row.as_str()), "no README row:\n{row}");
        }
        assert_eq!(rows.len(), rules().count(), "a README row without a rule");
    }
}

//! `KV006` bad-label.
//!
//! ## What it checks
//! The labels and annotations of every object, as the API server checks the metadata of any
//! kind (tool configuration, which kustomize and kpt never apply, aside):
//! - a label or annotation key is an optional prefix and `/`, then a name. The name is 1 to 63
//!   characters: letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit.
//!   The prefix is a DNS subdomain of at most 253 characters (lowercase for a label; an
//!   annotation's key is checked lowercased);
//! - a label value is empty, or 1 to 63 characters with the same rules as a key's name;
//! - all annotations together (keys and values) take at most 256 KiB.
//!
//! A VirtualMachine's `spec.template.metadata` is held to the same rules: KubeVirt admits the
//! VM, but the VirtualMachineInstance it starts takes those labels and annotations, and the API
//! server refuses it at every start. (What a pool or a replica set creates is checked as made
//! and said of the pool or replica set.)
//!
//! Values that are not strings are the type checks' business (`KV004`). `kvrender validate`
//! and the KRM function run this check on every input object, and `kvrender build` also on
//! every rendered one; `expand` leaves labels to the cluster, as KubeVirt's expansion does.
//!
//! ## Why
//! The API server refuses the whole object, so the VM or the catalog entry never reaches the
//! cluster. The usual causes are a value longer than 63 characters (a long version or OS
//! name), a space or a `:` in a value, and an uppercase prefix.
//!
//! ## Example
//! ```yaml
//! kind: VirtualMachineClusterPreference
//! metadata:
//!   name: rhel.9
//!   labels:
//!     instancetype.kubevirt.io/os-type: Red Hat Enterprise Linux 9
//! ```
//!
//! ## Fix
//! Shorten or respell the value (`rhel.9`), and keep prose in an annotation, whose values may
//! be anything.

use serde_json::Value;

use crate::diagnostic::{Diagnostic, Severity, codes, shortened};
use crate::model::names::{is_dns_subdomain, is_name_part};
use crate::model::{Kind, Object, path};
use crate::validate::Rule;

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::BAD_LABEL,
    name: "bad-label",
    summary: "A label or annotation key, a label value, or the annotations' total size the API server refuses.",
    severity: Severity::Error,
};

/// The most all annotations of one object may take, keys and values together.
pub const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

/// Report the labels and annotations of an object the API server would refuse, and those of
/// the objects KubeVirt creates from its templates.
pub fn check(obj: &Object, out: &mut Vec<Diagnostic>) {
    if obj.is_tool_config() {
        return;
    }
    if let Some(metadata) = obj.value.get("metadata") {
        check_metadata(obj, metadata, "metadata", "", out);
    }
    // The VMI a VM starts takes its template's labels and annotations. (The objects a pool
    // or a replica set creates are checked as made, then said of it.)
    if obj.kind() == Kind::VirtualMachine
        && let Some(metadata) = path::get(&obj.value, &["spec", "template", "metadata"])
    {
        check_metadata(obj, metadata, "spec.template.metadata", VM_STARTS, out);
    }
}

/// What a finding about a VM template's labels or annotations adds to the message.
const VM_STARTS: &str = " (KubeVirt admits the VirtualMachine, then the API server refuses the \
     VirtualMachineInstance it starts, which takes the template's labels and annotations)";

/// Report the labels and annotations of `metadata`, at `at` in `obj`, each message followed by
/// `note`.
fn check_metadata(obj: &Object, metadata: &Value, at: &str, note: &str, out: &mut Vec<Diagnostic>) {
    let finding = |field: String, message: String| {
        Diagnostic::error(RULE.code, obj.field_origin(&field), message + note)
            .with_object(obj.object_ref())
            .with_field(field)
    };
    if let Some(Value::Object(labels)) = metadata.get("labels") {
        for (key, value) in labels {
            // Every valid label takes the quick path; only a bad one is looked at again.
            let value = value.as_str().unwrap_or("");
            if is_qualified_name(key.as_bytes())
                && (value.is_empty() || is_name_part(value.as_bytes()))
            {
                continue;
            }
            let field = format!("{at}.labels[\"{key}\"]");
            if let Err(why) = qualified_name(key, false) {
                let hint = key_template_hint(obj, key);
                out.push(finding(
                    field,
                    format!("label key {} {why}{hint}", quoted(key)),
                ));
            } else if let Err(why) = label_value(value) {
                out.push(finding(
                    field,
                    format!("label value {} {why}", quoted(value)),
                ));
            }
        }
    }
    if let Some(Value::Object(annotations)) = metadata.get("annotations") {
        let mut size = 0;
        for (key, value) in annotations {
            size += key.len() + value.as_str().map_or(0, str::len);
            // An uppercase prefix fails the quick check and is looked at again lowercased.
            if is_qualified_name(key.as_bytes()) {
                continue;
            }
            if let Err(why) = qualified_name(&key.to_ascii_lowercase(), true) {
                let hint = key_template_hint(obj, key);
                out.push(finding(
                    format!("{at}.annotations[\"{key}\"]"),
                    format!("annotation key {} {why}{hint}", quoted(key)),
                ));
            }
        }
        if size > ANNOTATIONS_MAX_BYTES {
            out.push(finding(
                format!("{at}.annotations"),
                format!(
                    "the annotations take {size} bytes; the API server allows at most \
                     {ANNOTATIONS_MAX_BYTES}"
                ),
            ));
        }
    }
}

/// What a finding about a key of a rendered object adds when the key looks like a template:
/// a catalog renders the values of labels and annotations, never their keys.
fn key_template_hint(obj: &Object, key: &str) -> &'static str {
    if obj.written.is_some() && (key.contains("{{") || key.contains("{%")) {
        " (a catalog renders the values of labels and annotations as templates, never their \
         keys: write the key out in full)"
    } else {
        ""
    }
}

/// The quick check: whether `key` is a qualified name (`[prefix/]name`) as a label key must
/// be.
fn is_qualified_name(key: &[u8]) -> bool {
    for known in KNOWN_PREFIXES {
        if key.len() > known.len() && key[known.len()] == b'/' && key.starts_with(known) {
            // The name part holds no `/`: `is_name_part` refuses one.
            return is_name_part(&key[known.len() + 1..]);
        }
    }
    // Keys are short: a plain search beats setting up a vectorised one.
    let (prefix, name) = match key.iter().position(|&b| b == b'/') {
        Some(at) => (Some(&key[..at]), &key[at + 1..]),
        None => (None, key),
    };
    is_name_part(name) && prefix.is_none_or(|p| std::str::from_utf8(p).is_ok_and(is_dns_subdomain))
}

/// Prefixes nearly every key of a catalog or a VM uses, valid as they are: a key that starts
/// with one of them and `/` needs only its name checked.
const KNOWN_PREFIXES: [&[u8]; 6] = [
    b"instancetype.kubevirt.io",
    b"kubevirt.io",
    b"vm.kubevirt.io",
    b"openshift.io",
    b"app.kubernetes.io",
    b"kubernetes.io",
];

/// A key or value as a message shows it: quoted, escaped, shortened.
fn quoted(text: &str) -> String {
    format!("{:?}", shortened(text))
}

/// Whether `key` is a qualified name: `[prefix/]name`. `annotation`: the prefix was lowercased
/// by the caller, as the API server does for annotation keys, so only the message differs.
fn qualified_name(key: &str, annotation: bool) -> Result<(), String> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        if name.contains('/') {
            return Err("has more than one `/`".to_string());
        }
        if prefix.is_empty() {
            return Err("has an empty prefix before `/`".to_string());
        }
        if prefix.len() > 253 {
            return Err("has a prefix longer than 253 characters".to_string());
        }
        if !is_dns_subdomain(prefix) {
            let lowercase = if annotation { "" } else { "lowercase " };
            return Err(format!(
                "has a prefix that is not a DNS subdomain ({lowercase}letters, digits, `-` \
                 and `.`, each `.`-separated part starting and ending with a letter or digit)"
            ));
        }
    }
    if name.is_empty() {
        return Err("has an empty name".to_string());
    }
    // With a prefix, say which part is wrong: the limits are the name's, not the whole key's.
    name_part(name).map_err(|why| match prefix {
        Some(_) => format!("has a name after `/` that {why}"),
        None => why,
    })
}

/// Whether `key` is a label key the API server accepts; else why not, as "it ..." completes it.
pub fn label_key(key: &str) -> Result<(), String> {
    qualified_name(key, false)
}

/// A label value: empty, or a name part; else why not, as "it ..." completes it.
pub fn label_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Ok(());
    }
    name_part(value)
}

/// The value of the version label a build stamps: a label value, and not empty, which the API
/// server would take but which stamps no version (most often a variable that was not set);
/// else why not, as "it ..." completes it.
pub fn version_label_value(value: &str) -> Result<(), String> {
    if value.is_empty() {
        return Err(
            "is empty: a version label needs a version (is the variable meant to \
                    hold it unset?)"
                .to_string(),
        );
    }
    label_value(value)
}

/// The rules shared by a key's name and a label value.
fn name_part(text: &str) -> Result<(), String> {
    let chars = text.chars().count();
    if chars > 63 {
        return Err(format!(
            "is {chars} characters long; at most 63 are allowed"
        ));
    }
    let bytes = text.as_bytes();
    if let Some(c) = text
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(format!(
            "contains {c:?}; only letters, digits, `-`, `_` and `.` are allowed"
        ));
    }
    if !bytes[0].is_ascii_alphanumeric() || !bytes[bytes.len() - 1].is_ascii_alphanumeric() {
        return Err("must start and end with a letter or digit".to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::origin::Origin;

    fn findings(yaml: &str) -> Vec<Diagnostic> {
        let value = crate::load::yaml::parse_document(yaml).expect("test YAML parses");
        let obj =
            Object::new(value, Origin::new("c.yaml", 0, Some(1))).with_source(Arc::from(yaml), 1);
        let mut out = Vec::new();
        check(&obj, &mut out);
        out
    }

    fn pref(metadata: &str) -> String {
        format!(
            "apiVersion: instancetype.kubevirt.io/v1beta1\nkind: VirtualMachineClusterPreference\n\
             metadata:\n  name: p\n{metadata}spec: {{}}\n"
        )
    }

    #[test]
    fn valid_labels_and_annotations_pass() {
        let yaml = pref(
            "  labels:\n    instancetype.kubevirt.io/os-type: linux\n    app: \"\"\n    \
             A_b.c-9: X.y_z-1\n  annotations:\n    Example.COM/Note: \"any text: at all\"\n    \
             openshift.io/display-name: Red Hat\n",
        );
        assert_eq!(findings(&yaml), []);
    }

    #[test]
    fn a_bad_label_value_names_its_key_and_line() {
        let yaml = pref("  labels:\n    os: Red Hat Enterprise Linux 9\n    ok: \"yes\"\n");
        let out = findings(&yaml);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].code, "KV006");
        assert_eq!(out[0].origin.to_string(), "c.yaml:6");
        assert_eq!(out[0].field.as_deref(), Some("metadata.labels[\"os\"]"));
        assert!(
            out[0].message.contains("contains ' '"),
            "{}",
            out[0].message
        );
    }

    #[test]
    fn label_values_longer_than_63_characters_are_refused() {
        let ok = "v".repeat(63);
        let long = "v".repeat(64);
        assert_eq!(findings(&pref(&format!("  labels:\n    a: {ok}\n"))), []);
        let out = findings(&pref(&format!("  labels:\n    a: {long}\n")));
        assert!(
            out[0].message.contains("64 characters"),
            "{}",
            out[0].message
        );
    }

    #[test]
    fn keys_follow_the_qualified_name_rules() {
        for bad in [
            "Example.com/x",
            "/x",
            "a/b/c",
            "example.com/",
            "-x",
            "x-",
            "ex ample",
            "a..b/c",
        ] {
            let out = findings(&pref(&format!("  labels:\n    \"{bad}\": v\n")));
            assert_eq!(out.len(), 1, "{bad}: {out:?}");
            assert!(
                out[0].message.starts_with("label key"),
                "{}",
                out[0].message
            );
        }
        // An annotation key's prefix is checked lowercased; the rest of the rules hold.
        assert_eq!(
            findings(&pref("  annotations:\n    Example.com/x: v\n")),
            []
        );
        assert_eq!(
            findings(&pref("  annotations:\n    \"a/b/c\": v\n")).len(),
            1
        );
    }

    #[test]
    fn the_quick_checks_agree_with_the_explaining_ones() {
        let prefixes = [
            "",
            "instancetype.kubevirt.io/",
            "kubevirt.io/",
            "Kubevirt.io/",
            "a.b-c.d/",
            "a..b/",
            "-a/",
            "a-/",
            "/",
            "a/b/",
            "x.example.com/",
        ];
        let names = [
            "", "a", "a.b", "A_b-9", "-a", "a-", "a b", "a/b", "é", "_a", "a_", ".a",
        ];
        for prefix in prefixes {
            for name in names {
                let key = format!("{prefix}{name}");
                assert_eq!(
                    is_qualified_name(key.as_bytes()),
                    qualified_name(&key, false).is_ok(),
                    "{key:?}"
                );
                // What passes as a label key passes as an annotation key.
                if is_qualified_name(key.as_bytes()) {
                    assert!(
                        qualified_name(&key.to_ascii_lowercase(), true).is_ok(),
                        "{key:?}"
                    );
                }
                assert_eq!(
                    name.is_empty() || is_name_part(name.as_bytes()),
                    label_value(name).is_ok(),
                    "{name:?}"
                );
            }
        }
        assert!(!is_name_part("a".repeat(64).as_bytes()));
        assert!(label_value(&"a".repeat(64)).is_err());
    }

    #[test]
    fn annotations_over_256_kib_in_total_are_refused() {
        let big = "x".repeat(ANNOTATIONS_MAX_BYTES / 2);
        let yaml = pref(&format!("  annotations:\n    a: {big}\n    b: {big}\n"));
        let out = findings(&yaml);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].field.as_deref(), Some("metadata.annotations"));
    }

    #[test]
    fn every_kind_is_checked_but_tool_configuration() {
        // The API server checks the metadata of every kind alike.
        let other = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  labels:\n    \
                     a: b c\n";
        let out = findings(other);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].field.as_deref(), Some("metadata.labels[\"a\"]"));
        // kustomize and kpt never send their own configuration to it.
        let local = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    \
                     config.kubernetes.io/local-config: \"true\"\n  labels:\n    a: b c\n";
        assert_eq!(findings(local), []);
        let kptfile = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: c\n  labels:\n    \
                       a: b c\n";
        assert_eq!(findings(kptfile), []);
    }

    #[test]
    fn a_vm_template_is_checked_as_the_vmi_it_starts() {
        let vm = "apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: web\n\
                  spec:\n  template:\n    metadata:\n      labels:\n        ok: \"yes\"\n        \
                  tier: front end\n      annotations:\n        a/b/c: x\n    spec: {}\n";
        let out = findings(vm);
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out.iter().all(|d| d.severity == Severity::Error), "{out:?}");
        assert_eq!(out[0].origin.to_string(), "c.yaml:10");
        assert_eq!(
            out[0].field.as_deref(),
            Some("spec.template.metadata.labels[\"tier\"]")
        );
        assert!(out[0].message.ends_with(VM_STARTS), "{}", out[0].message);
        assert_eq!(out[1].origin.to_string(), "c.yaml:12");
        assert!(
            out[1].message.starts_with("annotation key \"a/b/c\""),
            "{}",
            out[1].message
        );
        // The same metadata anywhere else is the object's own business, or none of this rule's.
        let other = vm.replace("kind: VirtualMachine", "kind: ConfigMap");
        assert_eq!(findings(&other), []);
    }

    #[test]
    fn non_string_values_are_left_to_the_type_checks() {
        assert_eq!(findings(&pref("  labels:\n    a: [1]\n    b: 5\n")), []);
    }
}

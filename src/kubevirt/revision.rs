//! Reading the object a ControllerRevision stores, as KubeVirt reads it.
//!
//! Mirrors `pkg/instancetype/compatibility/compatibility.go` (KubeVirt d923fdb815): the
//! revision's `data` is decoded with client-go's universal deserializer against KubeVirt's
//! scheme, which knows `instancetype.kubevirt.io/v1beta1` and no older version, and the object
//! must then be an instancetype (or a preference) of either scope. A revision stashed by an
//! older release (`v1alpha1`, `v1alpha2`), one whose fields have the wrong type, or one holding
//! another kind of object fails the expansion, with the decoder's message.

use serde_json::Value;

use crate::kubevirt::{go_equal_fold, typecheck};

/// What a revision must hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holds {
    /// A VirtualMachineInstancetype or VirtualMachineClusterInstancetype.
    Instancetype,
    /// A VirtualMachinePreference or VirtualMachineClusterPreference.
    Preference,
}

/// The scheme's name, as the decoder's messages give it.
const SCHEME: &str = "kubevirt.io/client-go/kubevirt/scheme/register.go:44";

/// The group and version the four kinds are decoded from.
const INSTANCETYPE_GROUP: &str = "instancetype.kubevirt.io";
const INSTANCETYPE_VERSION: &str = "v1beta1";

/// The kinds of both versions of `snapshot.kubevirt.io`.
const SNAPSHOT_KINDS: &[&str] = &[
    "VirtualMachineSnapshot",
    "VirtualMachineSnapshotContent",
    "VirtualMachineRestore",
];

/// The group versions KubeVirt's scheme registers, with their kinds (each also has its
/// `...List`). The Go package of each type is named after its version.
const REGISTERED: &[(&str, &str, &[&str])] = &[
    (
        "backup.kubevirt.io",
        "v1alpha1",
        &["VirtualMachineBackup", "VirtualMachineBackupTracker"],
    ),
    ("clone.kubevirt.io", "v1alpha1", &["VirtualMachineClone"]),
    ("clone.kubevirt.io", "v1beta1", &["VirtualMachineClone"]),
    (
        "kubevirt.io",
        "v1",
        &[
            "VirtualMachineInstance",
            "VirtualMachineInstanceReplicaSet",
            "VirtualMachineInstancePreset",
            "VirtualMachineInstanceMigration",
            "VirtualMachine",
            "KubeVirt",
        ],
    ),
    ("export.kubevirt.io", "v1beta1", &["VirtualMachineExport"]),
    ("export.kubevirt.io", "v1", &["VirtualMachineExport"]),
    (
        INSTANCETYPE_GROUP,
        INSTANCETYPE_VERSION,
        &[
            "VirtualMachineInstancetype",
            "VirtualMachineClusterInstancetype",
            "VirtualMachinePreference",
            "VirtualMachineClusterPreference",
        ],
    ),
    ("migrations.kubevirt.io", "v1alpha1", &["MigrationPolicy"]),
    ("plugin.kubevirt.io", "v1alpha1", &["Plugin"]),
    ("pool.kubevirt.io", "v1alpha1", &["VirtualMachinePool"]),
    ("pool.kubevirt.io", "v1beta1", &["VirtualMachinePool"]),
    ("snapshot.kubevirt.io", "v1alpha1", SNAPSHOT_KINDS),
    ("snapshot.kubevirt.io", "v1beta1", SNAPSHOT_KINDS),
    // Registered for the meta kinds below only.
    ("", "v1", &[]),
];

/// Kinds from `meta/v1` that every registered group version also knows.
const META_KINDS: &[&str] = &[
    "WatchEvent",
    "ListOptions",
    "GetOptions",
    "DeleteOptions",
    "CreateOptions",
    "UpdateOptions",
    "PatchOptions",
];

/// Kinds from `meta/v1` the scheme knows whatever the group and version.
const UNVERSIONED_KINDS: &[&str] = &[
    "Status",
    "APIVersions",
    "APIGroupList",
    "APIGroup",
    "APIResourceList",
];

/// The `spec` a revision holds (`None`: the object has none), or KubeVirt's message for why it
/// cannot be used.
pub fn spec(data: Option<&Value>, holds: Holds) -> Result<Option<&Value>, String> {
    // An empty `data` is not decoded, and what is left is no object at all.
    let Some(data) = data.filter(|d| !d.is_null()) else {
        return Err(unexpected("<nil>"));
    };
    let (group, version, kind) = group_version_kind(data).map_err(|e| decode_failed(&e))?;
    if kind.is_empty() {
        return Err(decode_failed(&format!(
            "Object 'Kind' is missing in '{}'",
            compact(data)
        )));
    }
    if version.is_empty() {
        return Err(decode_failed(&format!(
            "Object 'apiVersion' is missing in '{}'",
            compact(data)
        )));
    }
    let decodable = group == INSTANCETYPE_GROUP && version == INSTANCETYPE_VERSION;
    let own = match kind {
        "VirtualMachineInstancetype" | "VirtualMachineClusterInstancetype" if decodable => {
            Holds::Instancetype
        }
        "VirtualMachinePreference" | "VirtualMachineClusterPreference" if decodable => {
            Holds::Preference
        }
        _ => return Err(other_kind(group, version, kind)),
    };
    let wrong = match own {
        Holds::Instancetype => typecheck::instancetype_revision(data),
        Holds::Preference => typecheck::preference_revision(data),
    };
    if let Some(first) = wrong.first() {
        return Err(decode_failed(&format!(
            "{} {first}",
            if wrong.len() == 1 {
                "a field has the wrong type:"
            } else {
                "fields have the wrong type, first"
            }
        )));
    }
    if own != holds {
        return Err(unexpected(&format!("*v1beta1.{kind}")));
    }
    Ok(data.get("spec").filter(|s| !s.is_null()))
}

fn decode_failed(why: &str) -> String {
    format!("failed to decode object in ControllerRevision: {why}")
}

fn unexpected(go_type: &str) -> String {
    format!("unexpected type in ControllerRevision: {go_type}")
}

/// The failure for a decoded object that is not one of the four kinds, or for a kind the
/// scheme does not know.
fn other_kind(group: &str, version: &str, kind: &str) -> String {
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let registered = REGISTERED
        .iter()
        .find(|(g, v, _)| *g == group && *v == version);
    let known = registered.is_some_and(|(_, _, kinds)| {
        kinds
            .iter()
            .any(|k| kind == *k || kind.strip_suffix("List") == Some(k))
    });
    if known {
        return unexpected(&format!("*{version}.{kind}"));
    }
    if registered.is_some() && META_KINDS.contains(&kind) || UNVERSIONED_KINDS.contains(&kind) {
        return unexpected(&format!("*v1.{kind}"));
    }
    if version == "__internal" {
        return decode_failed(&format!(
            "no kind {kind:?} is registered for the internal version of group {group:?} in \
             scheme {SCHEME:?}"
        ));
    }
    decode_failed(&format!(
        "no kind {kind:?} is registered for version {group_version:?} in scheme {SCHEME:?}"
    ))
}

/// The group, version and kind the decoder reads from `data` before anything else: `apiVersion`
/// and `kind` matched as Go's `encoding/json` matches keys (exactly or case-insensitively; the
/// last match wins; `null` leaves a field unset).
fn group_version_kind(data: &Value) -> Result<(&str, &str, &str), String> {
    let Value::Object(map) = data else {
        return Err(format!(
            "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go \
             value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; \
             Kind string \"json:\\\"kind,omitempty\\\"\" }}",
            json_type(data)
        ));
    };
    let mut api_version = "";
    let mut kind = "";
    let mut first_error = None;
    for (key, value) in map {
        let (field, slot) = if go_equal_fold(key, "apiversion") {
            ("apiVersion", &mut api_version)
        } else if go_equal_fold(key, "kind") {
            ("kind", &mut kind)
        } else {
            continue;
        };
        match value {
            Value::String(s) => *slot = s,
            Value::Null => {}
            other => {
                first_error.get_or_insert_with(|| {
                    format!(
                        "couldn't get version/kind; json parse error: json: cannot unmarshal {} \
                         into Go struct field .{field} of type string",
                        json_type(other)
                    )
                });
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    let (group, version) = match api_version.split_once('/') {
        None => ("", api_version),
        Some((group, version)) if !version.contains('/') => (group, version),
        Some(_) => return Err(format!("unexpected GroupVersion string: {api_version}")),
    };
    Ok((group, version, kind))
}

/// How Go's JSON errors name a value's type.
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The stored JSON of `data`, as the decoder's messages quote it, cut after 2,048 characters.
fn compact(data: &Value) -> String {
    const SHOWN: usize = 2048;
    let text = serde_json::to_string(data).unwrap_or_default();
    match text.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn data(api_version: &str, kind: &str, spec: Value) -> Value {
        json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "x"}, "spec": spec})
    }

    #[test]
    fn a_v1beta1_instancetype_is_read() {
        let d = data(
            "instancetype.kubevirt.io/v1beta1",
            "VirtualMachineClusterInstancetype",
            json!({"cpu": {"guest": 2}}),
        );
        assert_eq!(
            spec(Some(&d), Holds::Instancetype),
            Ok(Some(&json!({"cpu": {"guest": 2}})))
        );
        let no_spec = json!({"apiVersion": "instancetype.kubevirt.io/v1beta1",
            "kind": "VirtualMachinePreference"});
        assert_eq!(spec(Some(&no_spec), Holds::Preference), Ok(None));
    }

    #[test]
    fn older_versions_are_not_in_the_scheme() {
        for version in ["v1alpha1", "v1alpha2"] {
            let d = data(
                &format!("instancetype.kubevirt.io/{version}"),
                "VirtualMachineInstancetype",
                json!({}),
            );
            assert_eq!(
                spec(Some(&d), Holds::Instancetype),
                Err(format!(
                    "failed to decode object in ControllerRevision: no kind \
                     \"VirtualMachineInstancetype\" is registered for version \
                     \"instancetype.kubevirt.io/{version}\" in scheme \"{SCHEME}\""
                ))
            );
        }
    }

    #[test]
    fn a_missing_kind_or_version_is_reported_before_the_scheme() {
        let d = json!({"apiVersion": "instancetype.kubevirt.io/v1beta1"});
        let e = spec(Some(&d), Holds::Instancetype).unwrap_err();
        assert!(
            e.contains("Object 'Kind' is missing in '{\"apiVersion\""),
            "{e}"
        );
        let d = json!({"kind": "VirtualMachineInstancetype"});
        let e = spec(Some(&d), Holds::Instancetype).unwrap_err();
        assert!(e.contains("Object 'apiVersion' is missing"), "{e}");
        let long = json!({"apiVersion": "instancetype.kubevirt.io/v1beta1",
            "metadata": {"name": "x".repeat(5000)}});
        let e = spec(Some(&long), Holds::Instancetype).unwrap_err();
        assert!(e.len() < 2200 && e.ends_with("...'"), "{}", e.len());
    }

    #[test]
    fn keys_match_as_go_matches_them() {
        let d = json!({"APIVERSION": "instancetype.kubevirt.io/v1beta1",
            "Kind": "VirtualMachineInstancetype", "kind": null});
        assert_eq!(spec(Some(&d), Holds::Instancetype), Ok(None));
        let d = json!({"apiVersion": "instancetype.kubevirt.io/v1beta1",
            "\u{212a}ind": "VirtualMachineInstancetype"});
        assert_eq!(spec(Some(&d), Holds::Instancetype), Ok(None));
        let d = json!({"apiver\u{17f}ion": "instancetype.kubevirt.io/v1beta1",
            "kind": "VirtualMachineInstancetype"});
        assert_eq!(spec(Some(&d), Holds::Instancetype), Ok(None));
        let d = json!({"apiVersion": 1, "kind": "VirtualMachineInstancetype"});
        let e = spec(Some(&d), Holds::Instancetype).unwrap_err();
        assert!(
            e.ends_with("cannot unmarshal number into Go struct field .apiVersion of type string"),
            "{e}"
        );
        let d = json!({"apiVersion": "a/b/c", "kind": "X"});
        assert_eq!(
            spec(Some(&d), Holds::Instancetype),
            Err(
                "failed to decode object in ControllerRevision: unexpected GroupVersion string: \
                 a/b/c"
                    .to_string()
            )
        );
    }

    #[test]
    fn other_objects_are_unexpected() {
        let d = data(
            "instancetype.kubevirt.io/v1beta1",
            "VirtualMachinePreference",
            json!({}),
        );
        assert_eq!(
            spec(Some(&d), Holds::Instancetype),
            Err("unexpected type in ControllerRevision: *v1beta1.VirtualMachinePreference".into())
        );
        let d = data("kubevirt.io/v1", "VirtualMachine", json!({}));
        assert_eq!(
            spec(Some(&d), Holds::Preference),
            Err("unexpected type in ControllerRevision: *v1.VirtualMachine".into())
        );
        let d = data("anything/v9", "Status", json!({}));
        assert_eq!(
            spec(Some(&d), Holds::Preference),
            Err("unexpected type in ControllerRevision: *v1.Status".into())
        );
        assert_eq!(
            spec(None, Holds::Preference),
            Err("unexpected type in ControllerRevision: <nil>".into())
        );
        let e = spec(Some(&json!(["a"])), Holds::Preference).unwrap_err();
        assert!(
            e.contains("cannot unmarshal array into Go value of type struct"),
            "{e}"
        );
    }

    #[test]
    fn wrongly_typed_fields_fail_the_decoding() {
        let d = data(
            "instancetype.kubevirt.io/v1beta1",
            "VirtualMachineInstancetype",
            json!({"cpu": {"guest": "2"}}),
        );
        let e = spec(Some(&d), Holds::Instancetype).unwrap_err();
        assert!(
            e.starts_with("failed to decode object in ControllerRevision"),
            "{e}"
        );
        assert!(e.contains("spec.cpu.guest"), "{e}");
        let d = json!({"apiVersion": "instancetype.kubevirt.io/v1beta1",
            "kind": "VirtualMachinePreference", "metadata": {"labels": ["a"]}});
        let e = spec(Some(&d), Holds::Preference).unwrap_err();
        assert!(e.contains("metadata.labels"), "{e}");
    }
}

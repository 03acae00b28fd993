//! Interface preferences (mirrors `preference/apply/interface.go`). Every interface without a
//! model gets the preferred model. The preferred masquerade binding goes only to interfaces
//! that have no binding at all (no binding method and no plugin `binding`) and whose network
//! (the first one of the same name) is the pod network.

use serde_json::Value;

use super::{copy, nonempty_str, present, ptr_unset, str_unset};
use crate::model::path;
use crate::model::path::Fields;

/// The binding-method keys of an interface (Go's inlined `InterfaceBindingMethod`) and the
/// plugin `binding`.
const BINDINGS: &[&str] = &[
    "bridge",
    "slirp",
    "masquerade",
    "sriov",
    "macvtap",
    "passt",
    "passtBinding",
    "binding",
];

/// Apply interface preferences; `prefs` is the preference's `devices` block.
pub(super) fn apply(prefs: &Value, spec: &mut Value) {
    let model = nonempty_str(prefs, &["preferredInterfaceModel"]);
    let masquerade = present(prefs, &["preferredInterfaceMasquerade"]);
    // Only a masquerade preference looks at the networks.
    let networks = if masquerade.is_some() {
        networks(spec)
    } else {
        Vec::new()
    };
    let Some(ifaces) =
        path::get_mut(spec, &["domain", "devices", "interfaces"]).and_then(Value::as_array_mut)
    else {
        return;
    };
    for iface in ifaces.iter_mut().filter_map(Value::as_object_mut) {
        if let Some(model) = model
            && str_unset(iface.field("model"))
        {
            iface.insert("model".to_string(), Value::String(model.to_string()));
        }
        if let Some(masquerade) = masquerade
            && BINDINGS.iter().all(|b| ptr_unset(iface.field(b)))
        {
            let name = iface.field("name").and_then(Value::as_str).unwrap_or("");
            if on_pod_network(&networks, name) {
                iface.insert("masquerade".to_string(), copy(masquerade));
            }
        }
    }
}

/// Each network's name and whether it is the pod network, in order.
fn networks(spec: &Value) -> Vec<(String, bool)> {
    path::get(spec, &["networks"])
        .and_then(Value::as_array)
        .map(|nets| {
            nets.iter()
                .map(|n| {
                    let name = n.field("name").and_then(Value::as_str).unwrap_or("");
                    (name.to_string(), !ptr_unset(n.field("pod")))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the first network named `name` is the pod network (false when there is none).
fn on_pod_network(networks: &[(String, bool)], name: &str) -> bool {
    networks
        .iter()
        .find(|(n, _)| n == name)
        .is_some_and(|(_, pod)| *pod)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn run(prefs: Value, ifaces: Value, networks: Value) -> Value {
        let mut s = json!({"domain": {"devices": {"interfaces": ifaces}}, "networks": networks});
        apply(&prefs, &mut s);
        path::get(&s, &["domain", "devices", "interfaces"])
            .cloned()
            .expect("interfaces")
    }

    #[test]
    fn model_only_where_unset() {
        assert_eq!(
            run(
                json!({"preferredInterfaceModel": "virtio"}),
                json!([{"name": "a", "bridge": {}}, {"name": "b", "model": "e1000e", "masquerade": {}}]),
                json!([])
            ),
            json!([
                {"name": "a", "bridge": {}, "model": "virtio"},
                {"name": "b", "model": "e1000e", "masquerade": {}}
            ])
        );
    }

    #[test]
    fn masquerade_only_for_unbound_pod_interfaces() {
        assert_eq!(
            run(
                json!({"preferredInterfaceMasquerade": {}}),
                json!([
                    {"name": "default"},
                    {"name": "br", "bridge": {}},
                    {"name": "plug", "binding": {"name": "passt"}},
                    {"name": "multus"},
                    {"name": "orphan"},
                    {"name": "nulls", "bridge": null}
                ]),
                json!([
                    {"name": "default", "pod": {}},
                    {"name": "br", "pod": {}},
                    {"name": "plug", "pod": {}},
                    {"name": "multus", "multus": {"networkName": "x"}},
                    {"name": "nulls", "pod": {}}
                ])
            ),
            json!([
                {"name": "default", "masquerade": {}},
                {"name": "br", "bridge": {}},
                {"name": "plug", "binding": {"name": "passt"}},
                {"name": "multus"},
                {"name": "orphan"},
                {"name": "nulls", "bridge": null, "masquerade": {}}
            ])
        );
    }

    #[test]
    fn first_network_of_the_name_decides() {
        assert_eq!(
            run(
                json!({"preferredInterfaceMasquerade": {}}),
                json!([{"name": "n"}]),
                json!([{"name": "n", "multus": {}}, {"name": "n", "pod": {}}])
            ),
            json!([{"name": "n"}])
        );
    }
}

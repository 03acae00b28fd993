//! VirtualMachineInstanceReplicaSets (`kubevirt.io`): the VirtualMachineInstances a replica
//! set's controller creates from its template, as `pkg/virt-controller/watch/replicaset`
//! makes them.
//!
//! Each VMI is created in the replica set's namespace with the template's `metadata` and
//! `spec` and a generated name: the template's `metadata.name`, else its `generateName`, else
//! the replica set's name, and five random characters. The controller creates none (and says
//! so only in its log) when the template or the selector is missing, when the template has no
//! labels, or when the selector does not select them.
//!
//! KubeVirt's VMI webhooks then judge each VMI as any other, presets applied; the controller
//! creates them, so the labels KubeVirt keeps for itself are allowed, and through Go's types,
//! so an empty map of resource requests or limits is gone. The owner reference it
//! adds is for nobody's checks, so [`vmi_of`] leaves it out.

use serde_json::{Map, Value, json};

use crate::kubevirt::presets::selector;
use crate::model::Object;

/// The kind.
pub const KIND: &str = "VirtualMachineInstanceReplicaSet";

/// Where a replica set keeps the spec of its VMIs.
pub const TEMPLATE_SPEC: &str = "spec.template.spec";

/// What stands in for the random characters of a VMI's generated name.
pub const RANDOM_SUFFIX: &str = "xxxxx";

/// Whether `obj` is a VirtualMachineInstanceReplicaSet of KubeVirt's API group.
pub fn is_replica_set(obj: &Object) -> bool {
    obj.kind_str() == KIND
        && obj
            .api_version()
            .strip_prefix("kubevirt.io")
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The start of the names of the replica set's VMIs.
pub fn base_name(rs: &Object) -> String {
    let meta = crate::model::path::get(&rs.value, &["spec", "template", "metadata"]);
    for key in ["name", "generateName"] {
        if let Some(name) = meta
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        {
            return name.to_string();
        }
    }
    rs.name().to_string()
}

/// The labels of the template, as strings (Go reads any other value as no label).
fn template_labels(rs: &Object) -> Vec<(String, String)> {
    crate::model::path::get(&rs.value, &["spec", "template", "metadata", "labels"])
        .and_then(Value::as_object)
        .map(|labels| {
            labels
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// Why the controller creates no VMI of an admitted replica set, or `None` when it does.
pub fn idle_reason(rs: &Object) -> Option<&'static str> {
    let spec = rs.value.get("spec")?;
    if !spec.get("template").is_some_and(Value::is_object) {
        return Some("it has no `template`");
    }
    let Some(selector) = spec.get("selector").filter(|s| s.is_object()) else {
        return Some("it has no `selector`");
    };
    let labels = template_labels(rs);
    if labels.is_empty() {
        return Some("its template has no labels");
    }
    match selector::parse(Some(selector)) {
        Ok(s) if s.matches(&labels) => None,
        _ => Some("its `selector` does not select the template's labels"),
    }
}

/// The VirtualMachineInstance the replica set's controller creates; `None` when it creates none.
/// Its name ends in [`RANDOM_SUFFIX`]. It has the replica set's origin and no text of its own:
/// a field's line is found in the replica set with [`rs_field`].
pub fn vmi_of(rs: &Object) -> Option<Object> {
    if idle_reason(rs).is_some() {
        return None;
    }
    let template = rs.value.get("spec")?.get("template")?;
    let mut metadata = Map::new();
    metadata.insert(
        "name".into(),
        json!(format!("{}{RANDOM_SUFFIX}", base_name(rs))),
    );
    if let Some(ns) = rs.namespace() {
        metadata.insert("namespace".into(), json!(ns));
    }
    let written = template.get("metadata").and_then(Value::as_object);
    for (key, value) in written.into_iter().flatten() {
        let own = ["name", "generateName", "namespace", "ownerReferences"];
        if !own.contains(&key.as_str()) {
            metadata.insert(key.clone(), value.clone());
        }
    }
    let mut spec = template.get("spec").cloned().unwrap_or_else(|| json!({}));
    // The controller creates it through the API, from Go's types.
    crate::kubevirt::vmi::drop_empty_resource_lists(&mut spec);
    let vmi = json!({
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachineInstance",
        "metadata": metadata,
        "spec": if spec.is_null() { json!({}) } else { spec },
    });
    Some(Object::new(vmi, rs.origin.clone()))
}

/// The field of the replica set that a field of its VMI comes from: the VMI's `spec` and
/// `metadata` are the template's, apart from its name and namespace.
pub fn rs_field(vmi_field: &str) -> String {
    if vmi_field == "spec" || vmi_field.starts_with("spec.") {
        return format!("spec.template.{vmi_field}");
    }
    let own = ["metadata.name", "metadata.namespace"];
    if !own.contains(&vmi_field) && vmi_field.starts_with("metadata.") {
        return format!("spec.template.{vmi_field}");
    }
    vmi_field.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rs(yaml: &str) -> Object {
        let mut loaded = crate::load::parse_text(&std::sync::Arc::from("rs.yaml"), yaml);
        loaded.objects.pop().expect("one object")
    }

    const RS: &str = "
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstanceReplicaSet
metadata: {name: web, namespace: apps}
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      generateName: web-
      labels: {app: web, tier: front}
      annotations: {note: x}
    spec:
      domain:
        devices: {}
        resources: {requests: {memory: 1Gi}}
";

    #[test]
    fn the_vmi_of_a_replica_set_has_its_template_and_a_generated_name() {
        let set = rs(RS);
        assert!(is_replica_set(&set));
        let vmi = vmi_of(&set).expect("a VMI");
        assert_eq!(vmi.name(), "web-xxxxx");
        assert_eq!(vmi.namespace(), Some("apps"));
        assert_eq!(vmi.kind_str(), "VirtualMachineInstance");
        assert_eq!(
            vmi.value["metadata"]["labels"],
            json!({"app": "web", "tier": "front"})
        );
        assert_eq!(vmi.value["metadata"]["annotations"], json!({"note": "x"}));
        assert!(vmi.value["metadata"].get("generateName").is_none());
        assert_eq!(
            vmi.value["spec"]["domain"]["resources"]["requests"]["memory"],
            "1Gi"
        );
    }

    #[test]
    fn empty_resource_lists_do_not_survive_the_controller() {
        let set = rs(&RS.replace(
            "resources: {requests: {memory: 1Gi}}",
            "resources: {requests: {}, limits: null}",
        ));
        let vmi = vmi_of(&set).expect("a VMI");
        assert_eq!(vmi.value["spec"]["domain"]["resources"], json!({}));
    }

    #[test]
    fn the_name_comes_from_the_template_then_the_replica_set() {
        let named = rs(&RS.replace("generateName: web-", "name: fixed"));
        assert_eq!(base_name(&named), "fixed");
        let plain = rs(&RS.replace("generateName: web-", "finalizers: []"));
        assert_eq!(base_name(&plain), "web");
    }

    #[test]
    fn the_controller_creates_nothing_of_a_template_it_cannot_select() {
        let unlabeled = rs(&RS.replace("labels: {app: web, tier: front}", "labels: {}"));
        assert_eq!(idle_reason(&unlabeled), Some("its template has no labels"));
        assert!(vmi_of(&unlabeled).is_none());
        let other = rs(&RS.replace("matchLabels: {app: web}", "matchLabels: {app: db}"));
        assert!(idle_reason(&other).is_some());
        let no_selector = rs(&RS.replace("  selector:\n    matchLabels: {app: web}\n", ""));
        assert_eq!(idle_reason(&no_selector), Some("it has no `selector`"));
        assert_eq!(idle_reason(&rs(RS)), None);
    }

    #[test]
    fn only_kubevirts_group_counts() {
        let other = rs(&RS.replace("kubevirt.io/v1", "example.com/v1"));
        assert!(!is_replica_set(&other));
    }

    #[test]
    fn fields_of_the_vmi_map_to_the_template() {
        assert_eq!(
            rs_field("spec.domain.cpu.sockets"),
            "spec.template.spec.domain.cpu.sockets"
        );
        assert_eq!(rs_field("spec"), "spec.template.spec");
        assert_eq!(
            rs_field("metadata.labels.app"),
            "spec.template.metadata.labels.app"
        );
        assert_eq!(rs_field("metadata.name"), "metadata.name");
    }
}

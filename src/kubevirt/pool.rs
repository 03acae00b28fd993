//! VirtualMachinePools (`pool.kubevirt.io`): the VirtualMachines a pool's controller creates
//! from its template, as `pkg/virt-controller/watch/pool/pool.go` makes them.
//!
//! A pool's VM `N` is named `<pool>-N`, in the pool's namespace, with the labels and
//! annotations of the template's `metadata` and the template's `spec`, in which:
//! - each DataVolume template's name gets `-N`, and so does every `persistentVolumeClaim` or
//!   `dataVolume` volume that names one of them;
//! - with `nameGeneration.appendIndexToConfigMapRefs: true`, every ConfigMap volume's name
//!   gets `-N`;
//! - with `nameGeneration.appendIndexToSecretRefs: true`, every Secret volume's name and the
//!   user and network data Secrets of the cloud-init volumes get `-N`.
//!
//! KubeVirt's VM webhooks then judge each such VM as any other. The controller also adds a
//! revision label, a finalizer and an owner reference, none of which the webhooks look at, so
//! [`vm_of`] leaves them out.

use serde_json::{Map, Value, json};

use crate::model::Object;

/// The API group of VirtualMachinePools.
pub const GROUP: &str = "pool.kubevirt.io";

/// Where a pool keeps the spec of its VMs.
pub const TEMPLATE_SPEC: &str = "spec.virtualMachineTemplate.spec";

/// Whether `obj` is a VirtualMachinePool of KubeVirt's pool API group.
pub fn is_pool(obj: &Object) -> bool {
    obj.kind_str() == "VirtualMachinePool"
        && obj
            .api_version()
            .strip_prefix(GROUP)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The name of the pool's VM `index`.
pub fn vm_name(pool: &str, index: u32) -> String {
    format!("{pool}-{index}")
}

/// The VirtualMachine the pool's controller creates as number `index`; `None` when the pool has
/// no template spec to make it of. It has the pool's origin and no text of its own: a field's
/// line is found in the pool with [`pool_field`].
pub fn vm_of(pool: &Object, index: u32) -> Option<Object> {
    let template = pool.value.get("spec")?.get("virtualMachineTemplate")?;
    let mut spec = template.get("spec").filter(|s| s.is_object())?.clone();
    let suffix = format!("-{index}");
    let flag = |key: &str| {
        crate::model::path::get(&pool.value, &["spec", "nameGeneration", key])
            == Some(&Value::Bool(true))
    };
    index_spec(
        &mut spec,
        &suffix,
        flag("appendIndexToConfigMapRefs"),
        flag("appendIndexToSecretRefs"),
    );
    let mut metadata = Map::new();
    metadata.insert("name".into(), json!(vm_name(pool.name(), index)));
    if let Some(ns) = pool.namespace() {
        metadata.insert("namespace".into(), json!(ns));
    }
    let template_meta = template.get("metadata").filter(|m| m.is_object());
    for key in ["labels", "annotations"] {
        if let Some(v) = template_meta
            .and_then(|m| m.get(key))
            .filter(|v| v.is_object())
        {
            metadata.insert(key.into(), v.clone());
        }
    }
    let vm = json!({
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachine",
        "metadata": metadata,
        "spec": spec,
    });
    Some(Object::new(vm, pool.origin.clone()))
}

/// The label the pool controller gives each VM it makes, and the VM's template, naming the
/// revision of the pool's spec the VM was made of.
pub const REVISION_LABEL: &str = "kubevirt.io/vm-pool-revision-name";

/// `vm` (made by [`vm_of`]) with the labels the pool controller adds: [`REVISION_LABEL`] with
/// the pool's name and generation (`metadata.generation`, or 1, a new pool's), on the VM and its
/// template, so on the VMI it starts.
pub fn with_revision_label(pool: &Object, vm: &mut Object) {
    let generation = crate::model::path::get(&pool.value, &["metadata", "generation"])
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let revision = Value::String(format!("{}-{generation}", pool.name()));
    let has_template =
        crate::model::path::get(&vm.value, &["spec", "template"]).is_some_and(Value::is_object);
    let mut at: Vec<&[&str]> = vec![&["metadata", "labels"]];
    if has_template {
        at.push(&["spec", "template", "metadata", "labels"]);
    }
    for labels_at in at {
        if let Some(labels) = crate::model::path::ensure_map(&mut vm.value, labels_at) {
            labels.insert(REVISION_LABEL.into(), revision.clone());
        }
    }
}

/// Rename what the controller renames in a VM's spec for the VM with `suffix`. A name Go reads
/// from a missing field is `""`, which is renamed like any other.
fn index_spec(spec: &mut Value, suffix: &str, config_maps: bool, secrets: bool) {
    let mut renamed: Vec<(String, String)> = Vec::new();
    if let Some(Value::Array(templates)) = spec.get_mut("dataVolumeTemplates") {
        for t in templates.iter_mut().filter_map(Value::as_object_mut) {
            let metadata = t.entry("metadata").or_insert_with(|| json!({}));
            if metadata.is_null() {
                *metadata = json!({});
            }
            let Some(metadata) = metadata.as_object_mut() else {
                continue;
            };
            let name = metadata.get("name").and_then(Value::as_str).unwrap_or("");
            let new = format!("{name}{suffix}");
            renamed.push((name.to_string(), new.clone()));
            metadata.insert("name".into(), Value::String(new));
        }
    }
    let Some(Value::Array(volumes)) = spec
        .get_mut("template")
        .and_then(|t| t.get_mut("spec"))
        .and_then(|s| s.get_mut("volumes"))
    else {
        return;
    };
    // The name at `key` of the source, renamed by `rename` (a missing name is Go's `""`).
    let set = |source: &mut Value, key: &str, rename: &dyn Fn(&str) -> Option<String>| {
        let Some(source) = source.as_object_mut() else {
            return;
        };
        let name = source.get(key).and_then(Value::as_str).unwrap_or("");
        if let Some(new) = rename(name) {
            source.insert(key.into(), Value::String(new));
        }
    };
    let from_templates = |name: &str| {
        // Two templates of one name are both renamed to the same `<name>-N`.
        renamed
            .iter()
            .find(|(old, _)| old == name)
            .map(|(_, new)| new.clone())
    };
    let append = |name: &str| Some(format!("{name}{suffix}"));
    for volume in volumes.iter_mut().filter_map(Value::as_object_mut) {
        // The controller's chain of cases, in its order: the first that holds applies.
        let cases: [(&str, bool); 6] = [
            ("persistentVolumeClaim", true),
            ("dataVolume", true),
            ("configMap", config_maps),
            ("secret", secrets),
            ("cloudInitNoCloud", secrets),
            ("cloudInitConfigDrive", secrets),
        ];
        let Some((source, _)) = cases
            .into_iter()
            .find(|(key, on)| *on && volume.get(*key).is_some_and(|v| v.is_object()))
        else {
            continue;
        };
        let Some(at) = volume.get_mut(source) else {
            continue;
        };
        match source {
            "persistentVolumeClaim" => set(at, "claimName", &from_templates),
            "dataVolume" => set(at, "name", &from_templates),
            "configMap" => set(at, "name", &append),
            "secret" => set(at, "secretName", &append),
            _ => {
                for key in ["secretRef", "networkDataSecretRef"] {
                    if let Some(secret) = at.get_mut(key).filter(|s| s.is_object()) {
                        set(secret, "name", &append);
                    }
                }
            }
        }
    }
}

/// The field of the pool that a field of its VM comes from: the VM's `spec` is the template's,
/// its labels and annotations the template's `metadata`.
pub fn pool_field(vm_field: &str) -> String {
    if vm_field == "spec" {
        return TEMPLATE_SPEC.to_string();
    }
    if let Some(rest) = vm_field.strip_prefix("spec.") {
        return format!("{TEMPLATE_SPEC}.{rest}");
    }
    for key in ["metadata.labels", "metadata.annotations"] {
        if vm_field
            .strip_prefix(key)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
        {
            return format!("spec.virtualMachineTemplate.{vm_field}");
        }
    }
    // The VM's name and namespace are the pool's own, or made of them.
    vm_field.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(yaml: &str) -> Object {
        let mut loaded = crate::load::parse_text(&std::sync::Arc::from("pool.yaml"), yaml);
        loaded.objects.pop().expect("one object")
    }

    const POOL: &str = "
apiVersion: pool.kubevirt.io/v1beta1
kind: VirtualMachinePool
metadata: {name: web, namespace: apps}
spec:
  nameGeneration: {appendIndexToSecretRefs: true}
  virtualMachineTemplate:
    metadata:
      labels: {app: web}
      annotations: {note: x}
    spec:
      runStrategy: Always
      dataVolumeTemplates:
      - metadata: {name: root}
      template:
        spec:
          volumes:
          - {name: a, dataVolume: {name: root}}
          - {name: b, persistentVolumeClaim: {claimName: root}}
          - {name: c, persistentVolumeClaim: {claimName: shared}}
          - {name: d, configMap: {name: settings}}
          - {name: e, secret: {secretName: keys}}
          - {name: f, cloudInitNoCloud: {secretRef: {name: ud}, networkDataSecretRef: {name: nd}}}
";

    #[test]
    fn the_vm_of_a_pool_is_named_by_index_and_renames_what_the_controller_renames() {
        let vm = vm_of(&pool(POOL), 2).expect("a VM");
        assert_eq!(vm.name(), "web-2");
        assert_eq!(vm.namespace(), Some("apps"));
        assert_eq!(vm.value["metadata"]["labels"], json!({"app": "web"}));
        assert_eq!(vm.value["metadata"]["annotations"], json!({"note": "x"}));
        let spec = &vm.value["spec"];
        assert_eq!(spec["dataVolumeTemplates"][0]["metadata"]["name"], "root-2");
        let volumes = &spec["template"]["spec"]["volumes"];
        assert_eq!(volumes[0]["dataVolume"]["name"], "root-2");
        assert_eq!(volumes[1]["persistentVolumeClaim"]["claimName"], "root-2");
        // A claim no DataVolume template makes keeps its name.
        assert_eq!(volumes[2]["persistentVolumeClaim"]["claimName"], "shared");
        // Only Secrets are indexed here.
        assert_eq!(volumes[3]["configMap"]["name"], "settings");
        assert_eq!(volumes[4]["secret"]["secretName"], "keys-2");
        assert_eq!(volumes[5]["cloudInitNoCloud"]["secretRef"]["name"], "ud-2");
        assert_eq!(
            volumes[5]["cloudInitNoCloud"]["networkDataSecretRef"]["name"],
            "nd-2"
        );
        assert_eq!(spec["runStrategy"], "Always");
    }

    #[test]
    fn a_pool_without_a_template_spec_makes_no_vm() {
        let p = pool(
            "apiVersion: pool.kubevirt.io/v1beta1\nkind: VirtualMachinePool\nmetadata: {name: p}\nspec: {virtualMachineTemplate: {}}\n",
        );
        assert!(is_pool(&p));
        assert!(vm_of(&p, 0).is_none());
    }

    #[test]
    fn only_the_pool_group_counts() {
        let other =
            pool("apiVersion: example.com/v1\nkind: VirtualMachinePool\nmetadata: {name: p}\n");
        assert!(!is_pool(&other));
        let close = pool("apiVersion: pool.kubevirt.iox/v1\nkind: VirtualMachinePool\n");
        assert!(!is_pool(&close));
    }

    #[test]
    fn fields_of_the_vm_map_to_the_template() {
        assert_eq!(
            pool_field("spec.template.spec.domain.cpu.sockets"),
            "spec.virtualMachineTemplate.spec.template.spec.domain.cpu.sockets"
        );
        assert_eq!(pool_field("spec"), "spec.virtualMachineTemplate.spec");
        assert_eq!(
            pool_field("metadata.labels.app"),
            "spec.virtualMachineTemplate.metadata.labels.app"
        );
        assert_eq!(
            pool_field("metadata.labels[\"a/b\"]"),
            "spec.virtualMachineTemplate.metadata.labels[\"a/b\"]"
        );
        assert_eq!(
            pool_field("metadata.annotations"),
            "spec.virtualMachineTemplate.metadata.annotations"
        );
        assert_eq!(pool_field("metadata.name"), "metadata.name");
        assert_eq!(pool_field("metadata.labelsx"), "metadata.labelsx");
    }
}

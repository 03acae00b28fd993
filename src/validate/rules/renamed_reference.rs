//! `KV015` renamed-reference.
//!
//! ## What it checks
//! The ConfigMaps, Secrets, PersistentVolumeClaims, ServiceAccounts and DataVolumes a
//! VirtualMachine (or VirtualMachineInstance) names in its volumes and access credentials. When
//! the inputs hold no object of that kind and name in the VM's namespace, but hold one whose name
//! is the reference with a prefix ending in `-` or `.`, a suffix starting with one, or both,
//! the reference is reported. A name the inputs do not hold in any form is not: the object may
//! be created elsewhere.
//!
//! ## Why
//! kustomize's `namePrefix` and `nameSuffix`, and the hash suffix its `configMapGenerator` and
//! `secretGenerator` add, rename objects and the references to them that kustomize knows of:
//! those of Pods and Deployments, not those of VirtualMachines. The built VM names a Secret
//! that does not exist, and the cluster admits it; it fails when it starts.
//!
//! ## Example
//! ```yaml
//! # kubectl kustomize output: the generator added a hash, the VM kept the old name
//! kind: Secret
//! metadata: {name: userdata-gtf9h2kfkg}
//! ---
//! kind: VirtualMachine
//! spec:
//!   template:
//!     spec:
//!       volumes:
//!       - name: cloudinit
//!         cloudInitNoCloud: {secretRef: {name: userdata}}
//! ```
//!
//! ## Fix
//! Declare the references to kustomize with a `configurations:` file (the README's "Name
//! prefixes and suffixes" has one), or set `generatorOptions: {disableNameSuffixHash: true}`.

use std::sync::Mutex;

use foldhash::{HashMap, HashSet};
use serde_json::Value;

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::model::{Kind, Object};
use crate::validate::{Context, Rule};

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::RENAMED_REFERENCE,
    name: "renamed-reference",
    summary: "A VM names a ConfigMap, Secret, PersistentVolumeClaim, ServiceAccount or DataVolume the inputs hold only under a longer name, as kustomize's `namePrefix`, `nameSuffix` or a generator's hash suffix renames it without renaming the VM's reference (warning).",
    severity: Severity::Warning,
};

/// The kinds a VM refers to by name, as the inputs hold them: (kind, namespace) to names.
#[derive(Debug, Default)]
pub struct Referable<'a> {
    names: HashMap<(&'static str, &'a str), HashSet<&'a str>>,
    /// The answers of [`Referable::renamed`] so far: thousands of VMs naming one missing
    /// Secret are answered once.
    answers: Mutex<HashMap<Question, Option<&'a str>>>,
}

/// A question [`Referable::renamed`] answered: kind, namespace and the name not found.
type Question = (&'static str, String, String);

/// The kinds [`Referable`] holds.
const KINDS: [&str; 5] = [
    "ConfigMap",
    "Secret",
    "PersistentVolumeClaim",
    "ServiceAccount",
    "DataVolume",
];

impl<'a> Referable<'a> {
    /// The objects of the referable kinds among `objects`.
    pub fn new(objects: impl IntoIterator<Item = &'a Object>) -> Self {
        let mut names: HashMap<(&'static str, &'a str), HashSet<&'a str>> = HashMap::default();
        for o in objects {
            let Some(kind) = KINDS.iter().copied().find(|k| *k == o.kind_str()) else {
                continue;
            };
            if o.name().is_empty() || o.is_tool_config() {
                continue;
            }
            let held = names.entry((kind, o.effective_namespace())).or_default();
            held.insert(o.name());
            // A name a kustomize build in progress will rename the reference from.
            held.extend(o.previous_names());
        }
        Referable {
            names,
            answers: Mutex::default(),
        }
    }

    /// Whether no object of a referable kind is held: then nothing can be renamed.
    fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// For a reference to `name`, the name of the object it should now name
    /// ([`crate::resolve::renaming_of`]): `None` when an object of that name is held, or none
    /// holds it renamed.
    fn renamed(&self, kind: &'static str, namespace: &str, name: &str) -> Option<&'a str> {
        let held = self.names.get(&(kind, namespace))?;
        if held.contains(name) {
            return None;
        }
        let key = (kind, namespace.to_string(), name.to_string());
        let mut answers = self
            .answers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *answers
            .entry(key)
            .or_insert_with(|| crate::resolve::renaming_of(held.iter().copied(), name))
    }
}

/// Where a VMI spec names each kind: the path below a volume or an access credential.
const VOLUME_REFERENCES: [(&str, &[&str]); 11] = [
    ("ConfigMap", &["configMap", "name"]),
    ("ConfigMap", &["sysprep", "configMap", "name"]),
    ("Secret", &["secret", "secretName"]),
    ("Secret", &["sysprep", "secret", "name"]),
    ("Secret", &["cloudInitNoCloud", "secretRef", "name"]),
    (
        "Secret",
        &["cloudInitNoCloud", "networkDataSecretRef", "name"],
    ),
    ("Secret", &["cloudInitConfigDrive", "secretRef", "name"]),
    (
        "Secret",
        &["cloudInitConfigDrive", "networkDataSecretRef", "name"],
    ),
    (
        "PersistentVolumeClaim",
        &["persistentVolumeClaim", "claimName"],
    ),
    ("ServiceAccount", &["serviceAccount", "serviceAccountName"]),
    ("DataVolume", &["dataVolume", "name"]),
];

/// The same for an access credential.
const CREDENTIAL_REFERENCES: [(&str, &[&str]); 2] = [
    (
        "Secret",
        &["sshPublicKey", "source", "secret", "secretName"],
    ),
    (
        "Secret",
        &["userPassword", "source", "secret", "secretName"],
    ),
];

/// Report the references of a VirtualMachine or VirtualMachineInstance that name an object
/// the inputs hold only renamed.
pub fn check(obj: &Object, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    if ctx.referable.is_empty() {
        return;
    }
    let (spec, at) = match obj.kind() {
        Kind::VirtualMachine => (
            crate::model::path::get(&obj.value, &["spec", "template", "spec"]),
            "spec.template.spec",
        ),
        Kind::VirtualMachineInstance => (obj.value.get("spec"), "spec"),
        _ => return,
    };
    let Some(spec) = spec else {
        return;
    };
    let namespace = obj.effective_namespace();
    // A VM's own DataVolume templates are what its `dataVolume` volumes usually name; kustomize
    // leaves their names alone.
    let templates: Vec<&str> = obj
        .value
        .get("spec")
        .and_then(|s| s.get("dataVolumeTemplates"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| crate::model::path::get(t, &["metadata", "name"])?.as_str())
        .collect();
    let mut report = |kind: &'static str, field: String, name: &str| {
        if kind == "DataVolume" && templates.contains(&name) {
            return;
        }
        let Some(renamed) = ctx.referable.renamed(kind, namespace, name) else {
            return;
        };
        out.push(
            Diagnostic::warning(
                codes::RENAMED_REFERENCE,
                obj.origin.clone(),
                format!(
                    "{kind} \"{name}\" is not among the inputs, but {kind} \"{renamed}\" is: \
                     kustomize's `namePrefix`, `nameSuffix` or a generator's hash suffix renamed \
                     it and left this reference as it was, so the VM will not start; declare \
                     the reference in a `configurations:` file (see \"Name prefixes and \
                     suffixes\" in kvrender's README)"
                ),
            )
            .with_object(obj.object_ref())
            .with_field(field),
        );
    };
    let mut each = |list: &str, references: &[(&'static str, &[&str])]| {
        let Some(items) = spec.get(list).and_then(Value::as_array) else {
            return;
        };
        for (i, item) in items.iter().enumerate() {
            for (kind, path) in references {
                if let Some(name) = crate::model::path::get(item, path).and_then(Value::as_str) {
                    report(kind, format!("{at}.{list}[{i}].{}", path.join(".")), name);
                }
            }
        }
    };
    each("volumes", &VOLUME_REFERENCES);
    each("accessCredentials", &CREDENTIAL_REFERENCES);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;
    use serde_json::json;

    fn object(kind: &str, namespace: &str, name: &str) -> Object {
        Object::new(
            json!({"apiVersion": "v1", "kind": kind,
                   "metadata": {"name": name, "namespace": namespace}}),
            Origin::default(),
        )
    }

    #[test]
    fn only_a_name_held_renamed_and_never_as_it_is_is_an_answer() {
        let objects = [
            object("Secret", "prod", "prod-userdata-gtf9h2kfkg"),
            object("Secret", "prod", "prod-userdata-v2-gtf9h2kfkg"),
            object("Secret", "prod", "keys"),
            object("Secret", "prod", "prod-keys"),
            object("ConfigMap", "dev", "app-config-4h2mbtbbt6"),
            object("Secret", "prod", "app-configs"),
        ];
        let held = Referable::new(&objects);
        assert_eq!(
            held.renamed("Secret", "prod", "userdata"),
            Some("prod-userdata-gtf9h2kfkg")
        );
        // Held as it is: nothing to say, whatever else is held.
        assert_eq!(held.renamed("Secret", "prod", "keys"), None);
        // Another namespace, another kind, a letter more, a name too short: nothing.
        assert_eq!(held.renamed("Secret", "dev", "userdata"), None);
        assert_eq!(
            held.renamed("ConfigMap", "dev", "app-config"),
            Some("app-config-4h2mbtbbt6")
        );
        assert_eq!(held.renamed("Secret", "prod", "app-config"), None);
        assert_eq!(held.renamed("Secret", "prod", "ke"), None);
        assert_eq!(held.renamed("ServiceAccount", "prod", "userdata"), None);
    }
}

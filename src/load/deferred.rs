//! VirtualMachine documents left as text while everything else is parsed: nothing resolves
//! against a VM, so a command that takes each VM on its own need not hold the trees of all of
//! them at once.

use serde_json::{Map, Value, json};

use super::{Deferred, Document, Loaded, Source};
use crate::model::{Kind, Object};

/// Whether the top-level lines of a document say it is a VirtualMachine: the documents the
/// commands that take VMs one at a time leave as text.
pub fn is_vm(api_version: &str, kind: &str) -> bool {
    kind == "VirtualMachine" && api_version.starts_with("kubevirt.io/")
}

/// Parse `sources` as [`super::parse_sources`] does, except their VirtualMachine documents:
/// each stands among the objects as a placeholder (its kind and origin, nothing else), and
/// its text is kept in the returned [`DeferredVms`].
pub fn load_deferring_vms(sources: &[Source]) -> (Loaded, DeferredVms<'_>) {
    let mut loaded = Loaded::default();
    let mut deferred = DeferredVms::default();
    for doc in super::documents(sources, &is_vm) {
        match doc {
            Document::Object(object) => loaded.objects.push(*object),
            Document::Problem(d) => loaded.diagnostics.push(*d),
            Document::Deferred(text) => {
                let origin = text.origin();
                let placeholder = Object::new(
                    json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine"}),
                    origin.clone(),
                );
                loaded.objects.push(placeholder);
                deferred.0.insert((text.path(), origin.index), text);
            }
        }
    }
    (loaded, deferred)
}

/// The VirtualMachine documents [`load_deferring_vms`] left as text, by file and place in it.
/// Each stands among the loaded objects as a placeholder that nothing renders, indexes or
/// replaces, until [`DeferredVms::parse`] reads it.
#[derive(Debug, Default)]
pub struct DeferredVms<'s>(foldhash::HashMap<(&'s str, usize), Deferred<'s>>);

/// A VM document left as text did not parse as a VirtualMachine: the command should take the
/// inputs parsed whole, which say what it is, and so give the findings it would have given
/// had nothing been left as text (an error found while loading changes what else is said).
#[derive(Debug)]
pub struct NotAVm;

impl DeferredVms<'_> {
    /// Where the name of the VM `object` stands for is written, when it is a placeholder (or
    /// what is kept of it, at the same origin): the line a duplicate's finding points at.
    pub fn name_origin(&self, object: &Object) -> Option<crate::origin::Origin> {
        let text = self.0.get(&(&*object.origin.path, object.origin.index))?;
        let steps = [
            crate::load::locate::Step::Key("metadata"),
            crate::load::locate::Step::Key("name"),
        ];
        Some(object.origin.at_line(text.field_line(&steps)))
    }

    /// The VirtualMachine `object` stands for, parsed now, when it is a placeholder; `None`
    /// for any other object.
    pub fn parse(&self, object: &Object) -> Option<Result<Object, NotAVm>> {
        let text = self.0.get(&(&*object.origin.path, object.origin.index))?;
        Some(
            text.parse()
                .ok()
                .filter(|vm| vm.kind() == Kind::VirtualMachine)
                .ok_or(NotAVm),
        )
    }
}

/// What the checks of a whole set of objects read of a VM once its own checks are done: its
/// identity (see [`identity_of`]), at its origin. (The line of its name, which a finding about
/// its identity points at, is found in its text only when asked: [`DeferredVms::name_origin`].)
pub fn identity(vm: &Object) -> Object {
    Object::new(identity_of(&vm.value), vm.origin.clone())
}

/// The `apiVersion`, `kind`, and `metadata` `name` and `namespace` of `value`, those it has.
pub fn identity_of(value: &Value) -> Value {
    let mut identity = Map::new();
    for key in ["apiVersion", "kind"] {
        if let Some(v) = value.get(key) {
            identity.insert(key.into(), v.clone());
        }
    }
    if let Some(metadata) = value.get("metadata").and_then(Value::as_object) {
        let kept: Map<String, Value> = ["name", "namespace"]
            .into_iter()
            .filter_map(|k| Some((k.to_string(), metadata.get(k)?.clone())))
            .collect();
        identity.insert("metadata".into(), Value::Object(kept));
    }
    Value::Object(identity)
}

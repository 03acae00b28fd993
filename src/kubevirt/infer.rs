//! `inferFromVolume`: choosing a VM's instancetype and preference from labels on its boot volume,
//! and the rest of the instancetype step of the VirtualMachine mutating webhook on create.
//!
//! Mirrors KubeVirt (d923fdb815) `pkg/instancetype/infer` (`handler.go`, `volume.go`,
//! `errors.go`) and `pkg/instancetype/webhooks/vm/mutator.go`:
//!
//! 1. matcher validation (HTTP 422 with causes): a matcher needs `name` or `inferFromVolume`,
//!    `inferFromVolume` excludes `name` and `kind`, and the failure policy is `Reject` or
//!    `Ignore`; the preference matcher is only checked when the instancetype matcher is fine;
//! 2. inference of the instancetype, then of the preference (HTTP 400 on failure): the template
//!    volume named by `inferFromVolume` leads to a PVC, a DataVolume (a `dataVolumeTemplates`
//!    entry first), a DataSource or a VolumeSnapshot whose labels name the default;
//!    "ignorable" failures under the `Ignore` policy drop the matcher instead;
//! 3. the preference found through the (possibly inferred) matcher fills the architecture, the
//!    machine type and the storage class of the `dataVolumeTemplates`.
//!
//! Lookups are made against the [`Index`] of the inputs; a missing object gives Kubernetes'
//! NotFound message, as the API server would.

use std::fmt;

use serde_json::{Map, Value};

use crate::kubevirt::expand;
use crate::model::path::Fields;
use crate::model::{Object, path};
use crate::resolve::Index;

/// Label naming the default instancetype of a volume.
pub const DEFAULT_INSTANCETYPE_LABEL: &str = "instancetype.kubevirt.io/default-instancetype";
/// Label naming the kind of the default instancetype.
pub const DEFAULT_INSTANCETYPE_KIND_LABEL: &str =
    "instancetype.kubevirt.io/default-instancetype-kind";
/// Label naming the default preference of a volume.
pub const DEFAULT_PREFERENCE_LABEL: &str = "instancetype.kubevirt.io/default-preference";
/// Label naming the kind of the default preference.
pub const DEFAULT_PREFERENCE_KIND_LABEL: &str = "instancetype.kubevirt.io/default-preference-kind";

/// The failure policy that turns ignorable inference failures into a dropped matcher.
const POLICY_IGNORE: &str = "Ignore";
/// The other valid failure policy (the default).
const POLICY_REJECT: &str = "Reject";

/// Which matcher of the VM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// `spec.instancetype`.
    Instancetype,
    /// `spec.preference`.
    Preference,
}

impl Side {
    /// The key under `spec`.
    pub fn key(self) -> &'static str {
        match self {
            Side::Instancetype => "instancetype",
            Side::Preference => "preference",
        }
    }

    /// The label of a volume's source that names the default instancetype or preference.
    pub fn name_label(self) -> &'static str {
        match self {
            Side::Instancetype => DEFAULT_INSTANCETYPE_LABEL,
            Side::Preference => DEFAULT_PREFERENCE_LABEL,
        }
    }

    /// The label of a volume's source that gives its kind.
    pub fn kind_label(self) -> &'static str {
        match self {
            Side::Instancetype => DEFAULT_INSTANCETYPE_KIND_LABEL,
            Side::Preference => DEFAULT_PREFERENCE_KIND_LABEL,
        }
    }

    fn matcher_type(self) -> &'static str {
        match self {
            Side::Instancetype => "InstancetypeMatcher",
            Side::Preference => "PreferenceMatcher",
        }
    }
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// One cause of a 422 refusal: the field and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cause {
    /// The dotted field path, e.g. `spec.instancetype.name`.
    pub field: String,
    /// KubeVirt's message.
    pub message: String,
}

/// An object inference looked at: kind, namespace and name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Looked {
    /// `PersistentVolumeClaim`, `DataVolume`, `DataSource`, `VolumeSnapshot`, or
    /// `dataVolumeTemplate` for an entry of the VM's own `dataVolumeTemplates`.
    pub kind: &'static str,
    /// The namespace (may be empty when the reference left it empty).
    pub namespace: String,
    /// The name (may be empty).
    pub name: String,
}

impl fmt::Display for Looked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.kind == DVT {
            return write!(f, "dataVolumeTemplates entry \"{}\"", self.name);
        }
        let name = if self.name.is_empty() {
            "<no name>"
        } else {
            &self.name
        };
        if self.namespace.is_empty() {
            write!(f, "{} {name} (no namespace)", self.kind)
        } else {
            write!(f, "{} {}/{name}", self.kind, self.namespace)
        }
    }
}

impl Looked {
    /// Whether the object was looked up in no namespace (a reference naming an empty one):
    /// the API server holds no namespaced object there, so the lookup fails whatever the
    /// cluster holds.
    pub fn in_no_namespace(&self) -> bool {
        self.kind != DVT && self.namespace.is_empty()
    }

    /// Why an object looked up in no namespace ([`Looked::in_no_namespace`]) is not found, and
    /// what to change.
    pub const NO_NAMESPACE: &str = "the reference to it names an empty namespace, where no \
        cluster holds one; name the namespace, or leave `namespace` out of a DataVolume's \
        `sourceRef` to use the VM's";

    /// The `kubectl` command that prints this object from a cluster, for a finding about it
    /// being missing: saved to a file and passed with `--catalog`, it lets the inference go on
    /// offline. `None` for a `dataVolumeTemplates` entry, an object without a name, or a name
    /// or namespace a shell would need quoting for.
    pub fn export_command(&self) -> Option<String> {
        if self.in_no_namespace() {
            return None;
        }
        let resource = match self.kind {
            "PersistentVolumeClaim" => "pvc",
            "DataVolume" => "datavolume",
            "DataSource" => "datasource",
            "VolumeSnapshot" => "volumesnapshot",
            _ => return None,
        };
        let plain = |s: &str| {
            s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        };
        if self.name.is_empty() || !plain(&self.name) || !plain(&self.namespace) {
            return None;
        }
        let namespace = if self.namespace.is_empty() {
            String::new()
        } else {
            format!(" -n {}", self.namespace)
        };
        Some(format!(
            "kubectl get {resource}{namespace} {} -o yaml",
            self.name
        ))
    }
}

/// The kind label of a `dataVolumeTemplates` entry in [`Looked`].
pub const DVT: &str = "dataVolumeTemplate";

/// Why the webhook refused the VM.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct InferError {
    /// The HTTP status KubeVirt answers with: 422 (matcher validation) or 400 (inference).
    pub code: u16,
    /// KubeVirt's message, verbatim.
    pub message: String,
    /// The causes of a 422 (empty for a 400).
    pub causes: Vec<Cause>,
    /// The matcher whose inference failed (400 only).
    pub side: Option<Side>,
    /// The volume named by `inferFromVolume` (400 only).
    pub volume: Option<String>,
    /// The last object looked at before the failure (400 only; none when the volume itself is
    /// missing or unsupported).
    pub object: Option<Looked>,
}

impl InferError {
    fn invalid(causes: Vec<Cause>) -> Self {
        let message = causes
            .iter()
            .take(10)
            .map(|c| c.message.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let message = if causes.len() > 10 {
            format!(
                "{message}, and {} more validation errors",
                causes.len() - 10
            )
        } else {
            message
        };
        InferError {
            code: 422,
            message,
            causes,
            side: None,
            volume: None,
            object: None,
        }
    }
}

/// What inference did to one matcher.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inference {
    /// The matcher was replaced by `{name, kind}` read from the labels of `object`.
    Inferred {
        /// The volume named by `inferFromVolume`.
        volume: String,
        /// The new matcher.
        matcher: Value,
        /// The object whose labels gave it.
        object: Option<Looked>,
    },
    /// An ignorable failure under the `Ignore` policy: the matcher was removed.
    Cleared {
        /// The volume named by `inferFromVolume`.
        volume: String,
        /// Why inference failed.
        reason: String,
    },
}

/// `message` about a matcher inferred from the labels of `on`, with its advice to set the
/// matcher's `kind` (which KubeVirt refuses beside `inferFromVolume`) turned into advice to set
/// the label `kind_label` there.
pub fn kind_hint_as_label(message: &str, kind_label: &str, on: &str) -> String {
    const SET: &str = "set `kind: ";
    const IN_MATCHER: &str = "` in the matcher";
    let mut message = message.to_string();
    if let Some(at) = message.find(SET)
        && let Some(end) = message[at..].find(IN_MATCHER)
    {
        let kind = message[at + SET.len()..at + end].to_string();
        message.replace_range(
            at..at + end + IN_MATCHER.len(),
            &format!("set the label `{kind_label}: {kind}` on {on}"),
        );
    }
    message
}

/// The VM after the webhook step, and what inference did.
#[derive(Clone, Debug, PartialEq)]
pub struct Inferred {
    /// The mutated VirtualMachine.
    pub vm: Value,
    /// What happened to the instancetype matcher (`None`: no inference asked).
    pub instancetype: Option<Inference>,
    /// What happened to the preference matcher (`None`: no inference asked).
    pub preference: Option<Inference>,
}

/// Whether a VM asks for inference: a matcher that is a mapping holding `inferFromVolume` or
/// `inferFromVolumeFailurePolicy`. Only such VMs go through [`infer_and_mutate`] in kvrender;
/// VMs that name their instancetype and preference are expanded as `expand-spec` does.
pub fn uses_inference(vm: &Value) -> bool {
    [Side::Instancetype, Side::Preference].iter().any(|side| {
        path::get(vm, &["spec", side.key()])
            .and_then(Value::as_object)
            .is_some_and(|m| {
                m.field("inferFromVolume").is_some_and(|v| !v.is_null())
                    || m.field("inferFromVolumeFailurePolicy")
                        .is_some_and(|v| !v.is_null())
            })
    })
}

/// Run the instancetype step of the VM mutating webhook on `vm` (a create): validate the
/// matchers, infer them from volumes, then apply the preference-driven mutations. Objects are
/// looked up in `index`.
pub fn infer_and_mutate(vm: &Object, index: &Index<'_>) -> Result<Inferred, InferError> {
    for side in [Side::Instancetype, Side::Preference] {
        let causes = validate_matcher(&vm.value, side);
        if !causes.is_empty() {
            return Err(InferError::invalid(causes));
        }
    }
    let mut out = vm.value.clone();
    let namespace = vm.effective_namespace().to_string();
    let instancetype = infer_side(&mut out, Side::Instancetype, &namespace, index)?;
    let preference = infer_side(&mut out, Side::Preference, &namespace, index)?;
    let pref_spec = find_preference(&out, vm, index);
    if let Some(pref) = pref_spec.as_ref() {
        mutate_architecture(&mut out, pref);
        mutate_machine_type(&mut out, pref);
        mutate_data_volume_templates(&mut out, pref);
    }
    Ok(Inferred {
        vm: out,
        instancetype,
        preference,
    })
}

// ---------------------------------------------------------------------------------------------
// Matcher validation

/// Read a string field of a matcher. `Err` carries the cause for a value of another type (the
/// API server's schema check would refuse it).
fn matcher_str(
    matcher: &Map<String, Value>,
    key: &str,
    field: &str,
) -> Result<Option<String>, Cause> {
    match matcher.field(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(type_cause(&format!("{field}.{key}"), other, "string")),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn type_cause(field: &str, got: &Value, want: &str) -> Cause {
    let t = type_name(got);
    Cause {
        field: field.to_string(),
        message: format!("Invalid value: \"{t}\": {field} in body must be of type {want}: \"{t}\""),
    }
}

/// The causes KubeVirt gives for one matcher (empty when it is fine or absent).
fn validate_matcher(vm: &Value, side: Side) -> Vec<Cause> {
    let field = format!("spec.{}", side.key());
    let matcher = match path::get(vm, &["spec", side.key()]) {
        None | Some(Value::Null) => return Vec::new(),
        Some(Value::Object(m)) => m,
        Some(other) => return vec![type_cause(&field, other, "object")],
    };
    let mut causes = Vec::new();
    let mut read = |key: &str| match matcher_str(matcher, key, &field) {
        Ok(v) => v.unwrap_or_default(),
        Err(c) => {
            causes.push(c);
            String::new()
        }
    };
    let name = read("name");
    let kind = read("kind");
    let infer_from = read("inferFromVolume");
    let policy = match matcher.field("inferFromVolumeFailurePolicy") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            causes.push(type_cause(
                &format!("{field}.inferFromVolumeFailurePolicy"),
                other,
                "string",
            ));
            None
        }
    };
    if !causes.is_empty() {
        return causes;
    }
    if name.is_empty() && infer_from.is_empty() {
        causes.push(Cause {
            field: field.clone(),
            message: format!(
                "Either Name or InferFromVolume should be provided within the {}",
                side.matcher_type()
            ),
        });
    }
    if !infer_from.is_empty() {
        if !name.is_empty() {
            causes.push(Cause {
                field: format!("{field}.name"),
                message: "Name already set, should be cleared before setting inferFromVolume"
                    .into(),
            });
        }
        if !kind.is_empty() {
            causes.push(Cause {
                field: format!("{field}.kind"),
                message: "Kind already set, should be cleared before setting inferFromVolume"
                    .into(),
            });
        }
    }
    if let Some(p) = policy
        && p != POLICY_IGNORE
        && p != POLICY_REJECT
    {
        causes.push(Cause {
            field: format!("{field}.inferFromVolumeFailurePolicy"),
            message: format!("Invalid value '{p}' for InferFromVolumeFailurePolicy"),
        });
    }
    causes
}

// ---------------------------------------------------------------------------------------------
// Inference (handler.go)

/// Infer one matcher in place. `Ok(None)`: the matcher is absent or does not ask for inference.
fn infer_side(
    vm: &mut Value,
    side: Side,
    namespace: &str,
    index: &Index<'_>,
) -> Result<Option<Inference>, InferError> {
    let Some(matcher) = path::get(vm, &["spec", side.key()]).and_then(Value::as_object) else {
        return Ok(None);
    };
    let volume = matcher
        .field("inferFromVolume")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if volume.is_empty() {
        return Ok(None);
    }
    let ignore = matcher
        .field("inferFromVolumeFailurePolicy")
        .and_then(Value::as_str)
        == Some(POLICY_IGNORE);

    let mut walk = Walk {
        vm,
        side,
        namespace,
        index,
        last: None,
    };
    let found = walk.follow_volumes(&volume);
    let last = walk.last.take();
    match found {
        Err(f) if f.ignorable && ignore => {
            path::remove(vm, &["spec", side.key()]);
            Ok(Some(Inference::Cleared {
                volume,
                reason: f.message,
            }))
        }
        Err(f) => Err(InferError {
            code: 400,
            message: f.message,
            causes: Vec::new(),
            side: Some(side),
            volume: Some(volume),
            object: last,
        }),
        Ok((name, kind)) => {
            if ignore && side == Side::Instancetype {
                path::remove(vm, &["spec", "template", "spec", "domain", "memory"]);
            }
            let mut m = Map::new();
            if !name.is_empty() {
                m.insert("name".into(), Value::String(name));
            }
            if !kind.is_empty() {
                m.insert("kind".into(), Value::String(kind));
            }
            let matcher = Value::Object(m);
            path::set(vm, &["spec", side.key()], matcher.clone());
            Ok(Some(Inference::Inferred {
                volume,
                matcher,
                object: last,
            }))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Following a volume to its labels (volume.go)

/// A failed inference step: KubeVirt's message and whether the failure policy may ignore it.
#[derive(Debug)]
struct Failure {
    ignorable: bool,
    message: String,
}

impl Failure {
    fn ignorable(message: impl Into<String>) -> Self {
        Failure {
            ignorable: true,
            message: message.into(),
        }
    }
    fn fatal(message: impl Into<String>) -> Self {
        Failure {
            ignorable: false,
            message: message.into(),
        }
    }
}

/// The `(name, kind)` a volume's labels give; kind is `""` when the kind label is absent.
type Found = Result<(String, String), Failure>;

/// Why a lookup failed: NotFound is told apart because a missing DataVolume falls back to the
/// PVC of the same name.
enum LookupError {
    NotFound(Failure),
    Other(Failure),
}

impl From<LookupError> for Failure {
    fn from(e: LookupError) -> Self {
        match e {
            LookupError::NotFound(f) | LookupError::Other(f) => f,
        }
    }
}

/// The kinds inference reads, with the resource names Kubernetes uses in NotFound messages.
#[derive(Clone, Copy)]
enum Target {
    Pvc,
    DataVolume,
    DataSource,
    Snapshot,
}

impl Target {
    fn kind(self) -> &'static str {
        match self {
            Target::Pvc => "PersistentVolumeClaim",
            Target::DataVolume => "DataVolume",
            Target::DataSource => "DataSource",
            Target::Snapshot => "VolumeSnapshot",
        }
    }
    fn resource(self) -> &'static str {
        match self {
            Target::Pvc => "persistentvolumeclaims",
            Target::DataVolume => "datavolumes.cdi.kubevirt.io",
            Target::DataSource => "datasources.cdi.kubevirt.io",
            Target::Snapshot => "volumesnapshots.snapshot.storage.k8s.io",
        }
    }
}

/// One walk from a volume to the labels naming a default.
struct Walk<'v, 'i, 'a> {
    vm: &'v Value,
    side: Side,
    namespace: &'v str,
    index: &'i Index<'a>,
    /// The last object looked at, for messages.
    last: Option<Looked>,
}

/// A string field of a reference (`""` when absent or of another type, as an unset Go string).
fn ref_str<'x>(v: &'x Value, key: &str) -> &'x str {
    v.field(key).and_then(Value::as_str).unwrap_or("")
}

/// Whether `v[key]` is set in Go's pointer sense.
fn has(v: &Value, key: &str) -> bool {
    v.field(key).is_some_and(|x| !x.is_null())
}

impl<'a> Walk<'_, '_, 'a> {
    fn follow_volumes(&mut self, volume_name: &str) -> Found {
        let volumes = path::get(self.vm, &["spec", "template", "spec", "volumes"])
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        for volume in volumes {
            if ref_str(volume, "name") != volume_name {
                continue;
            }
            if let Some(pvc) = volume
                .field("persistentVolumeClaim")
                .filter(|v| !v.is_null())
            {
                let ns = self.namespace.to_string();
                return self.follow_pvc(ref_str(pvc, "claimName"), &ns);
            }
            if let Some(dv) = volume.field("dataVolume").filter(|v| !v.is_null()) {
                return self.follow_data_volume(ref_str(dv, "name"));
            }
            return Err(Failure::ignorable(format!(
                "unable to infer defaults from volume {volume_name} as type is not supported"
            )));
        }
        Err(Failure::fatal(format!(
            "unable to find volume {volume_name} to infer defaults"
        )))
    }

    /// Look an object up as the API server would answer a GET.
    fn lookup(
        &mut self,
        target: Target,
        namespace: &str,
        name: &str,
    ) -> Result<&'a Object, LookupError> {
        self.last = Some(Looked {
            kind: target.kind(),
            namespace: namespace.to_string(),
            name: name.to_string(),
        });
        // client-go refuses what it cannot put in the request's path before sending it.
        if let Some(message) = crate::kubevirt::go_text::refused_get(namespace, name) {
            return Err(LookupError::Other(Failure::fatal(message)));
        }
        self.index
            .get_str(target.kind(), namespace, name)
            .ok_or_else(|| {
                LookupError::NotFound(Failure::fatal(format!(
                    "{} \"{name}\" not found",
                    target.resource()
                )))
            })
    }

    fn read_labels(&self, obj: &Value) -> Found {
        let labels = path::get(obj, &["metadata", "labels"]).and_then(Value::as_object);
        let label = |key: &str| labels.and_then(|l| l.field(key)).and_then(label_text);
        match label(self.side.name_label()) {
            Some(name) => Ok((name, label(self.side.kind_label()).unwrap_or_default())),
            None => Err(Failure::ignorable(format!(
                "unable to find required {} label on the volume",
                self.side.name_label()
            ))),
        }
    }

    fn follow_pvc(&mut self, name: &str, namespace: &str) -> Found {
        let pvc = self.lookup(Target::Pvc, namespace, name)?;
        self.read_labels(&pvc.value)
    }

    fn follow_snapshot(&mut self, name: &str, namespace: &str) -> Found {
        let snap = self.lookup(Target::Snapshot, namespace, name)?;
        self.read_labels(&snap.value)
    }

    fn follow_data_volume(&mut self, dv_name: &str) -> Found {
        let templates = path::get(self.vm, &["spec", "dataVolumeTemplates"])
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        if let Some(dvt) = templates
            .iter()
            .find(|t| path::str_at(t, &["metadata", "name"]).unwrap_or("") == dv_name)
        {
            self.last = Some(Looked {
                kind: DVT,
                namespace: self.namespace.to_string(),
                name: dv_name.to_string(),
            });
            return self.follow_data_volume_spec(dvt.field("spec"));
        }
        let ns = self.namespace.to_string();
        let dv = match self.lookup(Target::DataVolume, &ns, dv_name) {
            Ok(dv) => dv,
            // A garbage-collected DataVolume leaves its PVC behind under the same name.
            Err(LookupError::NotFound(_)) => return self.follow_pvc(dv_name, &ns),
            Err(LookupError::Other(f)) => return Err(f),
        };
        if let Ok(found) = self.read_labels(&dv.value) {
            return Ok(found);
        }
        self.follow_data_volume_spec(dv.value.field("spec"))
    }

    fn follow_data_volume_spec(&mut self, spec: Option<&Value>) -> Found {
        let spec = spec.unwrap_or(&Value::Null);
        if let Some(source) = spec.field("source").filter(|v| !v.is_null()) {
            if let Some(pvc) = source.field("pvc").filter(|v| !v.is_null()) {
                return self.follow_pvc(ref_str(pvc, "name"), ref_str(pvc, "namespace"));
            }
            if let Some(snap) = source.field("snapshot").filter(|v| !v.is_null()) {
                return self.follow_snapshot(ref_str(snap, "name"), ref_str(snap, "namespace"));
            }
        }
        if let Some(source_ref) = spec.field("sourceRef").filter(|v| !v.is_null()) {
            return self.follow_source_ref(source_ref);
        }
        Err(Failure::ignorable(
            "unable to infer defaults from DataVolumeSpec as DataVolumeSource is not supported",
        ))
    }

    fn follow_source_ref(&mut self, source_ref: &Value) -> Found {
        let kind = ref_str(source_ref, "kind");
        if kind != "DataSource" {
            return Err(Failure::ignorable(format!(
                "unable to infer defaults from DataVolumeSourceRef as Kind {kind} is not supported"
            )));
        }
        // An explicit namespace (even an empty one) wins over the VM's.
        let namespace = if has(source_ref, "namespace") {
            ref_str(source_ref, "namespace").to_string()
        } else {
            self.namespace.to_string()
        };
        self.follow_data_source(ref_str(source_ref, "name"), &namespace)
    }

    fn follow_data_source(&mut self, name: &str, namespace: &str) -> Found {
        let ds = self.lookup(Target::DataSource, namespace, name)?;
        if let Ok(found) = self.read_labels(&ds.value) {
            return Ok(found);
        }
        let source = path::get(&ds.value, &["spec", "source"]).unwrap_or(&Value::Null);
        if let Some(pvc) = source.field("pvc").filter(|v| !v.is_null()) {
            return self.follow_pvc(ref_str(pvc, "name"), ref_str(pvc, "namespace"));
        }
        if let Some(snap) = source.field("snapshot").filter(|v| !v.is_null()) {
            return self.follow_snapshot(ref_str(snap, "name"), ref_str(snap, "namespace"));
        }
        Err(Failure::ignorable(
            "unable to infer defaults from DataSource that doesn't provide DataVolumeSourcePVC or \
             DataVolumeSourceSnapshot",
        ))
    }
}

/// A label value as text. Label values are strings; a scalar of another type (an unquoted
/// `true` or `2` in YAML) is taken as the text the user wrote, and a `null` is `""`, as Go
/// reads it: the label is there, with an empty value.
fn label_text(v: &Value) -> Option<String> {
    match v {
        Value::Null => Some(String::new()),
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// Preference-driven mutations (mutator.go)

/// The preference spec the VM's (possibly inferred) preference matcher points at; a failed
/// lookup counts as no preference, as in the webhook.
fn find_preference(vm: &Value, original: &Object, index: &Index<'_>) -> Option<Value> {
    path::get(vm, &["spec", "preference"]).filter(|v| !v.is_null())?;
    let probe = Object::new(vm.clone(), original.origin.clone());
    expand::find_preference_spec(&probe, index)
        .ok()?
        .map(std::borrow::Cow::into_owned)
}

fn nonempty<'v>(v: &'v Value, p: &[&str]) -> Option<&'v str> {
    path::str_at(v, p).filter(|s| !s.is_empty())
}

/// A string field that Go would see as empty: absent, null or `""` (a value of another type is
/// left alone).
fn unset_str(v: &Value, p: &[&str]) -> bool {
    match path::get(v, p) {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(_) => false,
    }
}

/// A preference's `preferredArchitecture`, when it names one.
pub fn preferred_architecture(pref: &Value) -> Option<&str> {
    nonempty(pref, &["preferredArchitecture"])
}

/// `preferredArchitecture` fills an empty `spec.template.spec.architecture`.
fn mutate_architecture(vm: &mut Value, pref: &Value) {
    let Some(arch) = preferred_architecture(pref) else {
        return;
    };
    let Some(template) = path::get_mut(vm, &["spec", "template"]).filter(|t| t.is_object()) else {
        return;
    };
    if unset_str(template, &["spec", "architecture"]) {
        path::set(
            template,
            &["spec", "architecture"],
            Value::String(arch.into()),
        );
    }
}

/// The step of KubeVirt's VM webhook that follows the instancetype step: a VM whose template
/// has no architecture (its preference gave none) takes the one a DataSource its DataVolume
/// templates are cloned from says it holds, in the label `template.kubevirt.io/architecture`.
/// The DataVolume templates are taken in order, each `sourceRef` of kind `DataSource` (any
/// case) looked up in its namespace, else the VM's (`namespace`); a DataSource whose source is
/// another DataSource gives way to that one (looked up in the namespace it names). A template
/// whose DataSource is not found, has no such label or names an architecture other than
/// `amd64`, `arm64` or `s390x` is passed over, as KubeVirt passes it over; the first that names
/// one wins. Returns the architecture to write into the template, if any.
pub fn architecture_from_data_source(
    vm: &Value,
    namespace: &str,
    index: &Index<'_>,
) -> Option<&'static str> {
    const ARCH_LABEL: &str = "template.kubevirt.io/architecture";
    let template = path::get(vm, &["spec", "template"]).filter(|t| t.is_object())?;
    if !unset_str(template, &["spec", "architecture"]) {
        return None;
    }
    let lookup = |ns: &str, name: &str| {
        if ns.is_empty() || name.is_empty() {
            return None;
        }
        index.get_str("DataSource", ns, name)
    };
    let templates = path::get(vm, &["spec", "dataVolumeTemplates"]).and_then(Value::as_array)?;
    for dvt in templates {
        let Some(source_ref) = path::get(dvt, &["spec", "sourceRef"]).filter(|r| r.is_object())
        else {
            continue;
        };
        // Go's `strings.EqualFold`: `ſ` is an `s` to it.
        if !crate::kubevirt::go_equal_fold(ref_str(source_ref, "kind"), "datasource") {
            continue;
        }
        let ns = nonempty(source_ref, &["namespace"]).unwrap_or(namespace);
        let Some(mut ds) = lookup(ns, ref_str(source_ref, "name")) else {
            continue;
        };
        if let Some(next) =
            path::get(&ds.value, &["spec", "source", "dataSource"]).filter(|d| d.is_object())
        {
            match lookup(ref_str(next, "namespace"), ref_str(next, "name")) {
                Some(next) => ds = next,
                None => continue,
            }
        }
        match path::get(&ds.value, &["metadata", "labels", ARCH_LABEL]).and_then(Value::as_str) {
            Some("amd64") => return Some("amd64"),
            Some("arm64") => return Some("arm64"),
            Some("s390x") => return Some("s390x"),
            _ => {}
        }
    }
    None
}

/// Write `arch` into `spec.template.spec.architecture` of `vm`.
pub fn set_architecture(vm: &mut Value, arch: &str) {
    if let Some(template) = path::get_mut(vm, &["spec", "template"]) {
        path::set(
            template,
            &["spec", "architecture"],
            Value::String(arch.into()),
        );
    }
}

/// `machine.preferredMachineType` fills an empty `domain.machine.type`.
fn mutate_machine_type(vm: &mut Value, pref: &Value) {
    let Some(machine_type) = nonempty(pref, &["machine", "preferredMachineType"]) else {
        return;
    };
    let Some(template) = path::get_mut(vm, &["spec", "template"]).filter(|t| t.is_object()) else {
        return;
    };
    let p = ["spec", "domain", "machine", "type"];
    if unset_str(template, &p) {
        path::set(template, &p, Value::String(machine_type.into()));
    }
}

/// `volumes.preferredStorageClassName` fills `storageClassName` of every `dataVolumeTemplates`
/// `spec.pvc` / `spec.storage` that has none (an explicit `""` is kept). The webhook does this
/// for every VM that names a preference, inferred or not; `expand-spec` does not (see
/// [`crate::pipeline::expand_vm_owned_to_apply`]).
pub fn mutate_data_volume_templates(vm: &mut Value, pref: &Value) {
    let Some(class) = nonempty(pref, &["volumes", "preferredStorageClassName"]) else {
        return;
    };
    let Some(templates) =
        path::get_mut(vm, &["spec", "dataVolumeTemplates"]).and_then(Value::as_array_mut)
    else {
        return;
    };
    for dvt in templates {
        for key in ["pvc", "storage"] {
            if let Some(claim) = path::get_mut(dvt, &["spec", key]).and_then(Value::as_object_mut)
                && claim.field("storageClassName").is_none_or(Value::is_null)
            {
                claim.insert("storageClassName".into(), Value::String(class.into()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;
    use serde_json::json;

    fn obj(v: Value) -> Object {
        Object::new(v, Origin::default())
    }

    fn vm(spec: Value) -> Object {
        obj(
            json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                   "metadata": {"name": "vm1"}, "spec": spec}),
        )
    }

    fn pvc(name: &str, ns: &str, labels: Value) -> Object {
        obj(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                   "metadata": {"name": name, "namespace": ns, "labels": labels}}))
    }

    fn run(vm: &Object, objects: &[Object]) -> Result<Inferred, InferError> {
        let mut index = Index::new();
        index.add_layer(objects);
        infer_and_mutate(vm, &index)
    }

    fn both_labels() -> Value {
        json!({DEFAULT_INSTANCETYPE_LABEL: "u1.small", DEFAULT_PREFERENCE_LABEL: "fedora",
               DEFAULT_PREFERENCE_KIND_LABEL: "VirtualMachinePreference"})
    }

    fn template_with(volume: Value) -> Value {
        json!({"spec": {"domain": {"memory": {"guest": "1Gi"}}, "volumes": [volume]}})
    }

    #[test]
    fn pvc_labels_give_both_matchers() {
        let vm = vm(json!({
            "instancetype": {"inferFromVolume": "root"},
            "preference": {"inferFromVolume": "root"},
            "template": template_with(json!({"name": "root", "persistentVolumeClaim": {"claimName": "disk"}})),
        }));
        let out = run(&vm, &[pvc("disk", "default", both_labels())]).unwrap();
        assert_eq!(out.vm["spec"]["instancetype"], json!({"name": "u1.small"}));
        assert_eq!(
            out.vm["spec"]["preference"],
            json!({"name": "fedora", "kind": "VirtualMachinePreference"})
        );
        // Reject (the default) keeps the memory.
        assert_eq!(
            out.vm["spec"]["template"]["spec"]["domain"]["memory"],
            json!({"guest": "1Gi"})
        );
    }

    #[test]
    fn matcher_validation_reports_causes_instancetype_first() {
        let vm = vm(json!({
            "instancetype": {"inferFromVolume": "root", "name": "x", "kind": "y"},
            "preference": {"inferFromVolumeFailurePolicy": "Bogus"},
        }));
        let err = run(&vm, &[]).unwrap_err();
        assert_eq!(err.code, 422);
        let fields: Vec<_> = err.causes.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(fields, ["spec.instancetype.name", "spec.instancetype.kind"]);
        assert_eq!(
            err.message,
            "Name already set, should be cleared before setting inferFromVolume, \
             Kind already set, should be cleared before setting inferFromVolume"
        );

        let vm2 =
            super::tests::vm(json!({"preference": {"inferFromVolumeFailurePolicy": "Bogus"}}));
        let err = run(&vm2, &[]).unwrap_err();
        assert_eq!(err.causes.len(), 2);
        assert_eq!(err.causes[0].field, "spec.preference");
        assert_eq!(
            err.causes[1].message,
            "Invalid value 'Bogus' for InferFromVolumeFailurePolicy"
        );
    }

    #[test]
    fn missing_label_rejects_or_clears_and_ignore_drops_memory() {
        let spec = |policy: &str| {
            json!({
                "instancetype": {"inferFromVolume": "root", "inferFromVolumeFailurePolicy": policy},
                "template": template_with(json!({"name": "root", "persistentVolumeClaim": {"claimName": "disk"}})),
            })
        };
        let no_labels = [pvc("disk", "default", json!({}))];
        let err = run(&vm(spec("Reject")), &no_labels).unwrap_err();
        assert_eq!(err.code, 400);
        assert_eq!(
            err.message,
            "unable to find required instancetype.kubevirt.io/default-instancetype label on the volume"
        );
        assert_eq!(err.object.unwrap().name, "disk");

        let out = run(&vm(spec("Ignore")), &no_labels).unwrap();
        assert!(out.vm["spec"].field("instancetype").is_none());
        // Memory is only dropped after a successful inference.
        assert!(out.vm["spec"]["template"]["spec"]["domain"]["memory"].is_object());

        let labelled = [pvc("disk", "default", both_labels())];
        let out = run(&vm(spec("Ignore")), &labelled).unwrap();
        assert_eq!(out.vm["spec"]["instancetype"], json!({"name": "u1.small"}));
        assert!(
            out.vm["spec"]["template"]["spec"]["domain"]
                .field("memory")
                .is_none()
        );
    }

    #[test]
    fn not_found_and_missing_volume_are_fatal_even_under_ignore() {
        let spec = |claim: &str, volume: &str| {
            json!({
                "instancetype": {"inferFromVolume": volume, "inferFromVolumeFailurePolicy": "Ignore"},
                "template": template_with(json!({"name": "root", "persistentVolumeClaim": {"claimName": claim}})),
            })
        };
        let err = run(&vm(spec("absent", "root")), &[]).unwrap_err();
        assert_eq!(err.message, "persistentvolumeclaims \"absent\" not found");
        let err = run(&vm(spec("", "root")), &[]).unwrap_err();
        assert_eq!(err.message, "resource name may not be empty");
        let err = run(&vm(spec("disk", "nope")), &[]).unwrap_err();
        assert_eq!(err.message, "unable to find volume nope to infer defaults");
        assert_eq!(err.volume.as_deref(), Some("nope"));
    }

    #[test]
    fn data_volume_template_spec_is_followed_not_its_labels() {
        let vm = vm(json!({
            "instancetype": {"inferFromVolume": "root"},
            "dataVolumeTemplates": [{
                "metadata": {"name": "root-dv", "labels": both_labels()},
                "spec": {"sourceRef": {"kind": "DataSource", "name": "fedora"}},
            }],
            "template": template_with(json!({"name": "root", "dataVolume": {"name": "root-dv"}})),
        }));
        let ds = obj(
            json!({"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataSource",
            "metadata": {"name": "fedora"},
            "spec": {"source": {"pvc": {"name": "img", "namespace": "os-images"}}}}),
        );
        let img = pvc(
            "img",
            "os-images",
            json!({DEFAULT_INSTANCETYPE_LABEL: "u1.large"}),
        );
        let out = run(&vm, &[ds.clone(), img]).unwrap();
        assert_eq!(out.vm["spec"]["instancetype"], json!({"name": "u1.large"}));
        let err = run(&vm, &[ds]).unwrap_err();
        assert_eq!(err.message, "persistentvolumeclaims \"img\" not found");
        assert_eq!(
            err.object,
            Some(Looked {
                kind: "PersistentVolumeClaim",
                namespace: "os-images".into(),
                name: "img".into()
            })
        );
    }

    #[test]
    fn data_volume_labels_then_spec_then_pvc_of_same_name() {
        let spec = json!({
            "instancetype": {"inferFromVolume": "root"},
            "template": template_with(json!({"name": "root", "dataVolume": {"name": "dv"}})),
        });
        let dv = |labels: Value, spec: Value| {
            obj(
                json!({"apiVersion": "cdi.kubevirt.io/v1beta1", "kind": "DataVolume",
                "metadata": {"name": "dv", "labels": labels}, "spec": spec}),
            )
        };
        // Own labels first.
        let out = run(
            &vm(spec.clone()),
            &[dv(
                json!({DEFAULT_INSTANCETYPE_LABEL: "a"}),
                json!({"source": {"http": {}}}),
            )],
        )
        .unwrap();
        assert_eq!(out.vm["spec"]["instancetype"]["name"], "a");
        // Unsupported source without labels: ignorable error.
        let err = run(
            &vm(spec.clone()),
            &[dv(json!({}), json!({"source": {"http": {}}}))],
        )
        .unwrap_err();
        assert!(err.message.contains("DataVolumeSource is not supported"));
        // Unsupported sourceRef kind.
        let err = run(
            &vm(spec.clone()),
            &[dv(
                json!({}),
                json!({"sourceRef": {"kind": "DataImportCron", "name": "x"}}),
            )],
        )
        .unwrap_err();
        assert!(err.message.contains("Kind DataImportCron is not supported"));
        // No DataVolume: the PVC of the same name.
        let out = run(
            &vm(spec.clone()),
            &[pvc(
                "dv",
                "default",
                json!({DEFAULT_INSTANCETYPE_LABEL: "b"}),
            )],
        )
        .unwrap();
        assert_eq!(out.vm["spec"]["instancetype"]["name"], "b");
        let err = run(&vm(spec), &[]).unwrap_err();
        assert_eq!(err.message, "persistentvolumeclaims \"dv\" not found");
    }

    #[test]
    fn unsupported_volume_is_ignorable() {
        let spec = json!({
            "preference": {"inferFromVolume": "root", "inferFromVolumeFailurePolicy": "Ignore"},
            "template": template_with(json!({"name": "root", "containerDisk": {"image": "x"}})),
        });
        let out = run(&vm(spec), &[]).unwrap();
        assert!(out.vm["spec"].field("preference").is_none());
        assert!(matches!(out.preference, Some(Inference::Cleared { .. })));
        // The preference side never drops memory.
        assert!(out.vm["spec"]["template"]["spec"]["domain"]["memory"].is_object());
    }

    #[test]
    fn preference_mutations_fill_only_unset_fields() {
        let pref = obj(json!({"apiVersion": "instancetype.kubevirt.io/v1beta1",
            "kind": "VirtualMachineClusterPreference", "metadata": {"name": "p"},
            "spec": {"preferredArchitecture": "arm64",
                     "machine": {"preferredMachineType": "virt"},
                     "volumes": {"preferredStorageClassName": "fast"}}}));
        let disk = pvc("disk", "default", json!({DEFAULT_PREFERENCE_LABEL: "p"}));
        let vm = vm(json!({
            "preference": {"inferFromVolume": "root"},
            "dataVolumeTemplates": [
                {"metadata": {"name": "a"}, "spec": {"pvc": {}, "storage": {"storageClassName": ""}}},
                {"metadata": {"name": "b"}, "spec": {"storage": {"storageClassName": "slow"}}},
            ],
            "template": template_with(json!({"name": "root", "persistentVolumeClaim": {"claimName": "disk"}})),
        }));
        let out = run(&vm, &[pref, disk]).unwrap();
        let t = &out.vm["spec"]["template"]["spec"];
        assert_eq!(t["architecture"], "arm64");
        assert_eq!(t["domain"]["machine"]["type"], "virt");
        let dvts = &out.vm["spec"]["dataVolumeTemplates"];
        assert_eq!(dvts[0]["spec"]["pvc"]["storageClassName"], "fast");
        assert_eq!(dvts[0]["spec"]["storage"]["storageClassName"], "");
        assert_eq!(dvts[1]["spec"]["storage"]["storageClassName"], "slow");
    }

    #[test]
    fn uses_inference_looks_at_both_keys() {
        assert!(uses_inference(
            &json!({"spec": {"preference": {"inferFromVolume": "x"}}})
        ));
        assert!(uses_inference(
            &json!({"spec": {"instancetype": {"inferFromVolumeFailurePolicy": "Ignore"}}})
        ));
        assert!(!uses_inference(
            &json!({"spec": {"instancetype": {"name": "x"}}})
        ));
        assert!(!uses_inference(&json!({"spec": {"instancetype": "x"}})));
    }

    #[test]
    fn export_command_names_the_resource_and_leaves_out_what_a_shell_would_mangle() {
        let looked = |kind, namespace: &str, name: &str| Looked {
            kind,
            namespace: namespace.to_string(),
            name: name.to_string(),
        };
        assert_eq!(
            looked("DataSource", "os-images", "fedora").export_command(),
            Some("kubectl get datasource -n os-images fedora -o yaml".to_string())
        );
        assert_eq!(
            looked("PersistentVolumeClaim", "vms", "root.disk").export_command(),
            Some("kubectl get pvc -n vms root.disk -o yaml".to_string())
        );
        // Looked up in no namespace: no cluster holds it, so there is nothing to export.
        assert_eq!(
            looked("PersistentVolumeClaim", "", "root.disk").export_command(),
            None
        );
        assert_eq!(looked(DVT, "ns", "root").export_command(), None);
        assert_eq!(looked("DataVolume", "ns", "").export_command(), None);
        assert_eq!(
            looked("VolumeSnapshot", "ns", "a b;rm").export_command(),
            None
        );
        assert_eq!(
            looked("DataSource", "$(x)", "fedora").export_command(),
            None
        );
    }
}

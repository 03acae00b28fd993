//! The VirtualMachineInstance a VirtualMachine's controller creates when the VM starts, before
//! any admission webhook sees it.
//!
//! Mirrors `SetupVMIFromVM` of `pkg/virt-controller/watch/vm/vm.go` in KubeVirt: the VMI takes
//! the template's metadata and spec, the VM's name and namespace, a stable firmware UUID derived
//! from the VM name (`pkg/virt-controller/watch/vm/firmware.go`) and a default disk for every
//! volume that has neither a disk nor a filesystem (`SetDefaultVolumeDisk` of `pkg/util/util.go`).
//! A start request asking for a paused start sets `startStrategy: Paused`, and a completed memory
//! dump drops the dump volume, both read from the VM's status.

use std::sync::LazyLock;

use serde_json::{Map, Value, json};
use uuid::Uuid;

use crate::model::Object;
use crate::model::path;
use crate::model::path::Fields;

pub use crate::kubevirt::go_shape::GoZero;
use crate::kubevirt::go_shape::{GoIp, Shape, Tables};

/// The UUIDv5 namespace KubeVirt derives a VM's stable firmware UUID in.
pub const FIRMWARE_UUID_NAMESPACE: Uuid = Uuid::from_u128(0x6a1a24a1_4061_4607_8bf4_a3963d0c5895);

/// The stable firmware UUID KubeVirt gives a VM named `vm_name` whose template sets none.
pub fn firmware_uuid(vm_name: &str) -> String {
    Uuid::new_v5(&FIRMWARE_UUID_NAMESPACE, vm_name.as_bytes()).to_string()
}

/// Build the VirtualMachineInstance the controller creates from `vm` (a `VirtualMachine`).
///
/// The result has `apiVersion`, `kind`, `metadata` (the template's metadata with the VM's name
/// and namespace) and `spec` (the template's spec with the controller's additions). Nothing is
/// read from fields of the wrong type; they are carried over untouched or skipped.
pub fn vm_to_vmi(vm: &Object) -> Value {
    let template = path::get(&vm.value, &["spec", "template"]);
    let template_meta = template
        .and_then(|t| t.field("metadata"))
        .and_then(Value::as_object);

    let mut metadata = Map::new();
    metadata.insert("name".into(), Value::String(vm.name().to_string()));
    if let Some(ns) = vm.namespace() {
        metadata.insert("namespace".into(), Value::String(ns.to_string()));
    }
    if let Some(meta) = template_meta {
        for (k, v) in meta {
            if matches!(k.as_str(), "name" | "namespace" | "generateName") || v.is_null() {
                continue;
            }
            metadata.insert(k.clone(), v.clone());
        }
    }

    let mut spec = template
        .and_then(|t| t.field("spec"))
        .filter(|s| s.is_object())
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()));

    if has_paused_start_request(&vm.value) {
        path::set(&mut spec, &["startStrategy"], json!("Paused"));
    }
    if let Some(claim) = vm
        .value
        .field("status")
        .and_then(completed_memory_dump_claim)
    {
        remove_volume(&mut spec, claim);
    }
    drop_empty_resource_lists(&mut spec);
    set_stable_firmware_uuid(&mut spec, vm.name());
    // Go reads a `null` volume, disk, ... as an empty one: a `null` volume gets a disk too.
    null_items_as_structs(&mut spec);
    crate::kubevirt::defaults::set_default_volume_disks(&mut spec);

    let mut vmi = Map::new();
    vmi.insert("apiVersion".into(), json!("kubevirt.io/v1"));
    vmi.insert("kind".into(), json!("VirtualMachineInstance"));
    vmi.insert("metadata".into(), Value::Object(metadata));
    vmi.insert("spec".into(), spec);
    Value::Object(vmi)
}

/// The defaults of KubeVirt's VM and VMI schemas, which the API server writes into a stored
/// object where it leaves the field out: `readOnly: true` in a `containerPath` volume (the only
/// such default in a VMI spec; the schema refuses any other value).
pub fn schema_defaults(spec: &mut Value) {
    let Some(volumes) = spec.get_mut("volumes").and_then(Value::as_array_mut) else {
        return;
    };
    for volume in volumes {
        if let Some(source) = volume
            .get_mut("containerPath")
            .and_then(Value::as_object_mut)
            && source.get("readOnly").is_none_or(Value::is_null)
        {
            source.insert("readOnly".into(), Value::Bool(true));
        }
    }
}

/// What a KubeVirt controller that creates a VMI through the API does to its `spec` on the way:
/// Go drops an empty or `null` map of requests or limits (`omitempty`), so neither the presets
/// nor the webhooks see one.
pub fn drop_empty_resource_lists(spec: &mut Value) {
    if let Some(resources) =
        path::get_mut(spec, &["domain", "resources"]).and_then(Value::as_object_mut)
    {
        resources.retain(|key, v| {
            !matches!(key.as_str(), "requests" | "limits")
                || !(v.is_null() || v.as_object().is_some_and(Map::is_empty))
        });
    }
}

/// The VMI as it reaches the VMI admission webhook: for a `VirtualMachine` the one
/// [`vm_to_vmi`] builds, for a `VirtualMachineInstance` the object itself with `apiVersion`
/// and `kind` normalised and without `status`. `None` for other kinds.
pub fn vmi_for(object: &Object) -> Option<Value> {
    use crate::model::Kind;
    match object.kind() {
        Kind::VirtualMachine => Some(vm_to_vmi(object)),
        Kind::VirtualMachineInstance => {
            let mut vmi = Map::new();
            vmi.insert("apiVersion".into(), json!("kubevirt.io/v1"));
            vmi.insert("kind".into(), json!("VirtualMachineInstance"));
            if let Some(map) = object.value.as_object() {
                for (k, v) in map {
                    if !matches!(k.as_str(), "apiVersion" | "kind" | "status") {
                        vmi.insert(k.clone(), v.clone());
                    }
                }
            }
            if let Some(spec) = vmi.get_mut("spec") {
                null_items_as_structs(spec);
            }
            Some(Value::Object(vmi))
        }
        _ => None,
    }
}

/// Labels, annotations and the node selector of a VMI are maps of Go strings: a `null` value
/// reads as `""`, which is also what a preset's label selector sees.
pub fn null_strings_as_empty(vmi: &mut Value) {
    null_strings_as_empty_at(
        vmi,
        &[
            &["metadata", "labels"],
            &["metadata", "annotations"],
            &["spec", "nodeSelector"],
        ],
    );
}

/// The `null` values of the maps of Go strings at `maps` in `v` as `""`.
pub fn null_strings_as_empty_at(v: &mut Value, maps: &[&[&str]]) {
    for at in maps {
        if let Some(map) = path::get_mut(v, at).and_then(Value::as_object_mut) {
            for v in map.values_mut().filter(|v| v.is_null()) {
                *v = Value::String(String::new());
            }
        }
    }
}

/// With `autoattachInputDevice: true` and no input device, the VM controller adds one named
/// `default-0`, bus and type left to the preference and the VMI webhook
/// (`AutoAttachInputDevice`).
pub fn autoattach_input_device(spec: &mut Value) {
    let wanted = path::get(spec, &["domain", "devices", "autoattachInputDevice"])
        .and_then(Value::as_bool)
        == Some(true);
    let has_inputs = path::get(spec, &["domain", "devices", "inputs"])
        .and_then(Value::as_array)
        .is_some_and(|inputs| !inputs.is_empty());
    if !wanted || has_inputs {
        return;
    }
    if let Some(devices) = path::ensure_map(spec, &["domain", "devices"]) {
        devices.insert(
            "inputs".to_string(),
            serde_json::json!([{"name": "default-0"}]),
        );
    }
}

/// Set `domain.firmware.uuid` of a VMI spec to [`firmware_uuid`] when it is empty. A VMI built
/// this way always has a `firmware`.
pub fn set_stable_firmware_uuid(spec: &mut Value, vm_name: &str) {
    let Some(firmware) = path::ensure_map(spec, &["domain", "firmware"]) else {
        return;
    };
    if path::is_zero(firmware.field("uuid")) {
        firmware.insert("uuid".into(), Value::String(firmware_uuid(vm_name)));
    }
}

/// Drop from `spec.domain.resources` and `spec.domain.devices` of a VMI the values Go's
/// encoder omits (`omitempty` on a nil pointer, an empty list or map, a `false` non-pointer
/// bool). Those two are plain structs in KubeVirt's types, so once emptied they mean "unset";
/// leaving `requests: {}` in them would make them look set.
pub fn omit_empty_resources_and_devices(vmi: &mut Value) {
    if let Some(resources) =
        path::get_mut(vmi, &["spec", "domain", "resources"]).and_then(Value::as_object_mut)
    {
        resources.retain(|key, v| match key.as_str() {
            "requests" | "limits" => !path::is_zero(Some(v)),
            "overcommitGuestOverhead" => !matches!(v, Value::Bool(false) | Value::Null),
            _ => !v.is_null(),
        });
    }
    if let Some(devices) =
        path::get_mut(vmi, &["spec", "domain", "devices"]).and_then(Value::as_object_mut)
    {
        devices.retain(|key, v| match v {
            Value::Null => false,
            Value::Array(a) => !a.is_empty(),
            Value::Bool(false) => key != "disableHotplug",
            _ => true,
        });
    }
}

/// Write the fields of KubeVirt's Go types that have no `omitempty` where a VMI spec leaves them
/// out (or sets them to `null`): Go's encoder writes them whether or not they were ever set, so
/// KubeVirt's answer, re-encoded from those types, carries them with their zero value. An
/// input device without a type comes back with `type: ""`, a sound device without a name with
/// `name: ""`, a host disk without a capacity with `capacity: "0"` (a `resource.Quantity` is a
/// plain struct, which `omitempty` never drops). `vmi` is a VMI or a VM's template (the spec is
/// under `spec`). See [`GO_ZERO_FIELDS`] for the list.
///
/// A quantity written as a decimal number (`cpu: 1.5`, `memory: 2.5`) comes back as Go's
/// canonical string (`1500m`, `2500m`), as every quantity Go re-encodes.
pub fn write_go_zero_fields(vmi: &mut Value) {
    if let Some(spec) = vmi.field_mut("spec").filter(|s| s.is_object()) {
        GO_SHAPE.apply(spec);
    }
}

/// Take out of the spec of `vmi` the zero values [`write_go_zero_fields`] writes where
/// `input` (the VMI or template as the user wrote it) has no such field (see
/// [`Shape::drop_unwritten_zeros`]).
pub fn drop_unwritten_go_zero_fields(vmi: &mut Value, input: Option<&Value>) {
    if let Some(spec) = vmi.field_mut("spec").filter(|s| s.is_object()) {
        GO_SHAPE.drop_unwritten_zeros(spec, input.and_then(|i| i.get("spec")));
    }
}

/// Leave out of the spec of `vmi` the `null`s of fields Go leaves out when they are unset
/// (`volumes: null`, `guest: null`): KubeVirt decodes them as unset and stores the VMI without
/// them. For the zero values Go writes, see [`write_go_zero_fields`].
pub fn drop_go_omitted_nulls(vmi: &mut Value) {
    if let Some(spec) = vmi.field_mut("spec").filter(|s| s.is_object()) {
        Shape::drop_omitted_nulls(Some(&GO_SHAPE), spec);
    }
}

/// As [`write_go_zero_fields`], but only for the fields a VMI spec has: a `null` is written as
/// Go's zero value (or left out, where Go leaves it out), and a field the spec leaves out stays
/// out. This is KubeVirt's answer with
/// the zero values nobody wrote taken out, the form in which the preset stage is compared (an
/// input device without a type stays without one, where Go would write `type: ""`).
pub fn go_nulls_as_zero_values(vmi: &mut Value) {
    if let Some(spec) = vmi.field_mut("spec").filter(|s| s.is_object()) {
        GO_SHAPE.apply_to_present(spec);
        // Any other `null` is a field Go leaves out (`acpi: {enabled: null}` is `acpi: {}`).
        Shape::drop_omitted_nulls(Some(&GO_SHAPE), spec);
    }
}

/// The Go shape of a VMI spec: [`GO_ZERO_FIELDS`], [`QUANTITY_FIELDS`], [`STRUCT_LISTS`],
/// [`STRING_LISTS`] and the scheduling types.
static GO_SHAPE: LazyLock<Shape> = LazyLock::new(|| {
    let mut shape = Shape::new(Tables {
        zero: GO_ZERO_FIELDS,
        quantities: QUANTITY_FIELDS,
        struct_lists: STRUCT_LISTS,
        string_lists: STRING_LISTS,
    });
    scheduling(&mut shape, true);
    // The addresses KubeVirt's decoder writes in their canonical form.
    shape
        .ip_items(NAMESERVERS, GoIp::Address)
        .ip_items(NTP_SERVERS, GoIp::Address)
        .ip(&["networks", "*", "pod", "vmNetworkCIDR"], GoIp::Cidr);
    shape
});

/// Read the `null` items of the lists of structs of a VMI spec (see [`STRUCT_LISTS`]) as Go
/// does: as empty structs, which the rules then fill like any other item (a `null` disk gets
/// the preferred bus).
pub fn null_items_as_structs(spec: &mut Value) {
    static SHAPE: LazyLock<Shape> = LazyLock::new(|| {
        let mut shape = Shape::new(Tables {
            struct_lists: STRUCT_LISTS,
            ..Tables::default()
        });
        scheduling(&mut shape, false);
        shape
    });
    SHAPE.apply(spec);
}

/// The Kubernetes types a VMI spec embeds for scheduling and probing (affinity, topology
/// spread constraints, probes): their lists of structs and, with `zeros`, the fields they
/// always write.
fn scheduling(spec: &mut Shape, zeros: bool) {
    use GoZero::{Null, Number, Struct, Text};
    let zero = |shape: &mut Shape, path: &[&'static str], value: GoZero| {
        if zeros {
            shape.zero(path, value);
        }
    };
    // A label selector's or node selector term's requirement lists.
    let requirements = |shape: &mut Shape, lists: &[&'static str]| {
        for list in lists {
            let list = shape.struct_list(&[list]).at(&[list, "*"]);
            zero(list, &["key"], Text);
            zero(list, &["operator"], Text);
            list.string_list(&["values"]);
        }
    };
    let pod_affinity_term = |term: &mut Shape| {
        term.string_list(&["namespaces"])
            .string_list(&["matchLabelKeys"])
            .string_list(&["mismatchLabelKeys"]);
        zero(term, &["topologyKey"], Text);
        for selector in ["labelSelector", "namespaceSelector"] {
            let selector = term.at(&[selector]);
            selector.string_map(&["matchLabels"]);
            requirements(selector, &["matchExpressions"]);
        }
    };
    const REQUIRED: &str = "requiredDuringSchedulingIgnoredDuringExecution";
    const PREFERRED: &str = "preferredDuringSchedulingIgnoredDuringExecution";

    let node = spec.at(&["affinity", "nodeAffinity"]);
    zero(node, &[REQUIRED, "nodeSelectorTerms"], Null);
    let terms = node.struct_list(&[REQUIRED, "nodeSelectorTerms"]);
    requirements(
        terms.at(&[REQUIRED, "nodeSelectorTerms", "*"]),
        &["matchExpressions", "matchFields"],
    );
    let preferred = node.struct_list(&[PREFERRED]).at(&[PREFERRED, "*"]);
    zero(preferred, &["preference"], Struct);
    zero(preferred, &["weight"], Number);
    requirements(
        preferred.at(&["preference"]),
        &["matchExpressions", "matchFields"],
    );
    for kind in ["podAffinity", "podAntiAffinity"] {
        let pod = spec.at(&["affinity", kind]);
        pod_affinity_term(pod.struct_list(&[REQUIRED]).at(&[REQUIRED, "*"]));
        let preferred = pod.struct_list(&[PREFERRED]).at(&[PREFERRED, "*"]);
        zero(preferred, &["podAffinityTerm"], Struct);
        zero(preferred, &["weight"], Number);
        pod_affinity_term(preferred.at(&["podAffinityTerm"]));
    }

    let spread = spec
        .struct_list(&["topologySpreadConstraints"])
        .at(&["topologySpreadConstraints", "*"]);
    zero(spread, &["maxSkew"], Number);
    zero(spread, &["topologyKey"], Text);
    zero(spread, &["whenUnsatisfiable"], Text);
    spread.string_list(&["matchLabelKeys"]);
    let selector = spread.at(&["labelSelector"]);
    selector.string_map(&["matchLabels"]);
    requirements(selector, &["matchExpressions"]);

    for probe in ["livenessProbe", "readinessProbe"] {
        let probe = spec.at(&[probe]);
        probe.string_list(&["exec", "command"]);
        zero(probe, &["httpGet", "port"], Number);
        let header =
            probe
                .struct_list(&["httpGet", "httpHeaders"])
                .at(&["httpGet", "httpHeaders", "*"]);
        zero(header, &["name"], Text);
        zero(header, &["value"], Text);
        zero(probe, &["tcpSocket", "port"], Number);
    }
}

/// The lists of structs of a VMI spec: a `null` item is the empty struct to Go.
pub const STRUCT_LISTS: &[&[&str]] = &[
    &["domain", "cpu", "features"],
    &["domain", "devices", "disks"],
    &["domain", "devices", "interfaces"],
    &["domain", "devices", "interfaces", "*", "ports"],
    &["domain", "devices", "interfaces", "*", "portRanges"],
    &[
        "domain",
        "devices",
        "interfaces",
        "*",
        "dhcpOptions",
        "privateOptions",
    ],
    &["domain", "devices", "inputs"],
    &["domain", "devices", "gpus"],
    &["domain", "devices", "hostDevices"],
    &["domain", "devices", "filesystems"],
    &["domain", "devices", "panicDevices"],
    &["volumes"],
    &["volumes", "*", "downwardAPI", "fields"],
    &["networks"],
    &["accessCredentials"],
    &["resourceClaims"],
    &["utilityVolumes"],
    &["tolerations"],
    &["dnsConfig", "options"],
];

/// The users an SSH key is propagated to by the guest agent: a list of strings Go always writes.
pub(crate) const GUEST_AGENT_USERS: &[&str] = &[
    "accessCredentials",
    "*",
    "sshPublicKey",
    "propagationMethod",
    "qemuGuestAgent",
    "users",
];

/// The lists of strings of a VMI spec outside the scheduling types: a `null` item is `""` to Go.
pub const STRING_LISTS: &[&[&str]] = &[
    NAMESERVERS,
    &["dnsConfig", "searches"],
    GUEST_AGENT_USERS,
    NTP_SERVERS,
];

/// A VMI spec's DNS nameservers.
const NAMESERVERS: &[&str] = &["dnsConfig", "nameservers"];

/// The NTP servers of a VMI spec's interfaces.
const NTP_SERVERS: &[&str] = &[
    "domain",
    "devices",
    "interfaces",
    "*",
    "dhcpOptions",
    "ntpServers",
];

/// Fields of a VMI spec (`*` is every item of a list) that KubeVirt's Go types write even when
/// unset, and the zero value they are written with. They are only written where their parent
/// is present (a mapping).
pub const GO_ZERO_FIELDS: &[(&[&str], GoZero)] = &[
    (&["domain"], GoZero::Struct),
    (&["domain", "cpu", "features", "*", "name"], GoZero::Text),
    (&["domain", "machine", "type"], GoZero::Text),
    (
        &["domain", "firmware", "kernelBoot", "container", "image"],
        GoZero::Text,
    ),
    (&["domain", "devices", "disks", "*", "name"], GoZero::Text),
    (
        &["domain", "devices", "interfaces", "*", "name"],
        GoZero::Text,
    ),
    (
        &["domain", "devices", "interfaces", "*", "binding", "name"],
        GoZero::Text,
    ),
    (
        &["domain", "devices", "interfaces", "*", "ports", "*", "port"],
        GoZero::Number,
    ),
    (
        &[
            "domain",
            "devices",
            "interfaces",
            "*",
            "portRanges",
            "*",
            "protocol",
        ],
        GoZero::Text,
    ),
    (
        &[
            "domain",
            "devices",
            "interfaces",
            "*",
            "portRanges",
            "*",
            "start",
        ],
        GoZero::Number,
    ),
    (
        &[
            "domain",
            "devices",
            "interfaces",
            "*",
            "portRanges",
            "*",
            "end",
        ],
        GoZero::Number,
    ),
    (
        &[
            "domain",
            "devices",
            "interfaces",
            "*",
            "dhcpOptions",
            "privateOptions",
            "*",
            "option",
        ],
        GoZero::Number,
    ),
    (
        &[
            "domain",
            "devices",
            "interfaces",
            "*",
            "dhcpOptions",
            "privateOptions",
            "*",
            "value",
        ],
        GoZero::Text,
    ),
    (&["domain", "devices", "inputs", "*", "type"], GoZero::Text),
    (&["domain", "devices", "inputs", "*", "name"], GoZero::Text),
    (&["domain", "devices", "gpus", "*", "name"], GoZero::Text),
    (
        &["domain", "devices", "hostDevices", "*", "name"],
        GoZero::Text,
    ),
    (
        &["domain", "devices", "filesystems", "*", "name"],
        GoZero::Text,
    ),
    (
        &["domain", "devices", "filesystems", "*", "virtiofs"],
        GoZero::Null,
    ),
    (&["domain", "devices", "sound", "name"], GoZero::Text),
    (&["domain", "devices", "watchdog", "name"], GoZero::Text),
    (&["volumes", "*", "name"], GoZero::Text),
    (&["volumes", "*", "hostDisk", "path"], GoZero::Text),
    (&["volumes", "*", "hostDisk", "type"], GoZero::Text),
    (&["volumes", "*", "hostDisk", "capacity"], GoZero::Quantity),
    (
        &["volumes", "*", "persistentVolumeClaim", "claimName"],
        GoZero::Text,
    ),
    (
        &[
            "volumes",
            "*",
            "ephemeral",
            "persistentVolumeClaim",
            "claimName",
        ],
        GoZero::Text,
    ),
    (&["volumes", "*", "containerDisk", "image"], GoZero::Text),
    (&["volumes", "*", "emptyDisk", "capacity"], GoZero::Quantity),
    (&["volumes", "*", "dataVolume", "name"], GoZero::Text),
    (&["volumes", "*", "memoryDump", "claimName"], GoZero::Text),
    (&["volumes", "*", "containerPath", "path"], GoZero::Text),
    (
        &["volumes", "*", "downwardAPI", "fields", "*", "path"],
        GoZero::Text,
    ),
    (
        &[
            "volumes",
            "*",
            "downwardAPI",
            "fields",
            "*",
            "fieldRef",
            "fieldPath",
        ],
        GoZero::Text,
    ),
    (
        &[
            "volumes",
            "*",
            "downwardAPI",
            "fields",
            "*",
            "resourceFieldRef",
            "resource",
        ],
        GoZero::Text,
    ),
    (
        &[
            "volumes",
            "*",
            "downwardAPI",
            "fields",
            "*",
            "resourceFieldRef",
            "divisor",
        ],
        GoZero::Quantity,
    ),
    (&["networks", "*", "name"], GoZero::Text),
    (&["networks", "*", "multus", "networkName"], GoZero::Text),
    (
        &["accessCredentials", "*", "sshPublicKey", "source"],
        GoZero::Struct,
    ),
    (
        &[
            "accessCredentials",
            "*",
            "sshPublicKey",
            "source",
            "secret",
            "secretName",
        ],
        GoZero::Text,
    ),
    (
        &[
            "accessCredentials",
            "*",
            "sshPublicKey",
            "propagationMethod",
        ],
        GoZero::Struct,
    ),
    (GUEST_AGENT_USERS, GoZero::Null),
    (
        &["accessCredentials", "*", "userPassword", "source"],
        GoZero::Struct,
    ),
    (
        &[
            "accessCredentials",
            "*",
            "userPassword",
            "source",
            "secret",
            "secretName",
        ],
        GoZero::Text,
    ),
    (
        &[
            "accessCredentials",
            "*",
            "userPassword",
            "propagationMethod",
        ],
        GoZero::Struct,
    ),
    (&["resourceClaims", "*", "name"], GoZero::Text),
    (&["utilityVolumes", "*", "name"], GoZero::Text),
    (&["utilityVolumes", "*", "claimName"], GoZero::Text),
];

/// Quantity fields of a VMI spec (`*` last: every value of the mapping).
const QUANTITY_FIELDS: &[&[&str]] = &[
    &["domain", "resources", "requests", "*"],
    &["domain", "resources", "limits", "*"],
    &["domain", "memory", "guest"],
    &["domain", "memory", "maxGuest"],
    &["domain", "memory", "reservedOverhead", "addedOverhead"],
    &["volumes", "*", "emptyDisk", "capacity"],
    &["volumes", "*", "hostDisk", "capacity"],
    &[
        "volumes",
        "*",
        "downwardAPI",
        "fields",
        "*",
        "resourceFieldRef",
        "divisor",
    ],
];

/// `spec` (a VMI spec, or a VM's template spec) with every quantity written as a string
/// rewritten in Go's canonical form, where that changes it: what KubeVirt's validating webhooks
/// read, since the mutating webhook before them sends the object back through Go's JSON
/// (`-10.5Gi` arrives as `-10752Mi`, which Go's arithmetic reads otherwise). Borrowed when
/// nothing changes.
pub fn with_canonical_quantities(spec: &Value) -> std::borrow::Cow<'_, Value> {
    canonical_quantities(spec, false)
}

/// As [`with_canonical_quantities`], numbers too (`1000000000` is `"1G"`): the spec of a VMI
/// KubeVirt's controller creates through the API, as the webhooks then read it.
pub fn with_every_quantity_canonical(spec: &Value) -> std::borrow::Cow<'_, Value> {
    canonical_quantities(spec, true)
}

fn canonical_quantities(spec: &Value, numbers: bool) -> std::borrow::Cow<'_, Value> {
    let rewritten = |v: &Value| match v {
        Value::String(text) => crate::model::quantity::Quantity::from_json(v)
            .filter(|q| q.to_string() != *text)
            .map(|q| q.to_json()),
        Value::Number(_) if numbers => crate::model::quantity::canonicalize(v),
        _ => None,
    };
    let mut changed = false;
    for at in QUANTITY_FIELDS {
        each_at(spec, at, &mut |v| changed |= rewritten(v).is_some());
    }
    if !changed {
        return std::borrow::Cow::Borrowed(spec);
    }
    let mut owned = spec.clone();
    for at in QUANTITY_FIELDS {
        each_at_mut(&mut owned, at, &mut |v| {
            if let Some(canonical) = rewritten(v) {
                *v = canonical;
            }
        });
    }
    std::borrow::Cow::Owned(owned)
}

/// Put back into `spec` the spelling `written` (the spec before [`with_canonical_quantities`])
/// gave each quantity that is still the canonical form of what was written there: the same
/// amount, left as the user wrote it.
pub fn restore_quantity_spellings(spec: &mut Value, written: &Value) {
    fn at(v: &mut Value, written: &Value, path: &[&str]) {
        let Some((first, rest)) = path.split_first() else {
            if (written.is_string() || written.is_number())
                && crate::model::quantity::canonicalize(written).as_ref() == Some(&*v)
            {
                *v = written.clone();
            }
            return;
        };
        match (v, *first, written) {
            (Value::Array(items), "*", Value::Array(before)) => {
                for (item, was) in items.iter_mut().zip(before) {
                    at(item, was, rest);
                }
            }
            (Value::Object(map), "*", Value::Object(before)) => {
                for (key, item) in map.iter_mut() {
                    if let Some(was) = before.get(key) {
                        at(item, was, rest);
                    }
                }
            }
            (Value::Object(map), key, Value::Object(before)) => {
                if let (Some(next), Some(was)) = (map.get_mut(key), before.get(key)) {
                    at(next, was, rest);
                }
            }
            _ => {}
        }
    }
    for path in QUANTITY_FIELDS {
        at(spec, written, path);
    }
}

/// Call `f` on every value at `path` below `v` (`*` is every item of a list or every value of
/// a mapping).
fn each_at(v: &Value, path: &[&str], f: &mut impl FnMut(&Value)) {
    let Some((first, rest)) = path.split_first() else {
        f(v);
        return;
    };
    match (v, *first) {
        (Value::Array(items), "*") => items.iter().for_each(|item| each_at(item, rest, f)),
        (Value::Object(map), "*") => map.values().for_each(|item| each_at(item, rest, f)),
        (Value::Object(map), key) => {
            if let Some(next) = map.get(key) {
                each_at(next, rest, f);
            }
        }
        _ => {}
    }
}

/// [`each_at`], mutably.
fn each_at_mut(v: &mut Value, path: &[&str], f: &mut impl FnMut(&mut Value)) {
    let Some((first, rest)) = path.split_first() else {
        f(v);
        return;
    };
    match (v, *first) {
        (Value::Array(items), "*") => items.iter_mut().for_each(|item| each_at_mut(item, rest, f)),
        (Value::Object(map), "*") => map.values_mut().for_each(|item| each_at_mut(item, rest, f)),
        (Value::Object(map), key) => {
            if let Some(next) = map.get_mut(key) {
                each_at_mut(next, rest, f);
            }
        }
        _ => {}
    }
}

/// Set `key` of the mapping `v` to `zero()` when it is missing or `null`.
pub fn zero_field(v: &mut Value, key: &str, zero: impl Fn() -> Value) {
    let Some(map) = v.as_object_mut() else {
        return;
    };
    let slot = path::field_or_insert_with(map, key, &zero);
    if slot.is_null() {
        *slot = zero();
    }
}

/// Whether the first state change request of the VM's status is a start asking for a paused
/// start.
fn has_paused_start_request(vm: &Value) -> bool {
    let Some(first) = path::get(vm, &["status", "stateChangeRequests"])
        .and_then(Value::as_array)
        .and_then(|a| a.first())
    else {
        return false;
    };
    first.field("action").and_then(Value::as_str) == Some("Start")
        && path::str_at(first, &["data", "paused"]) == Some("true")
}

/// The finalizer the VM controller puts on the VMI it starts, to see the VMI before it goes.
pub const CONTROLLER_FINALIZER: &str = "kubevirt.io/virtualMachineControllerFinalize";

/// The finalizer KubeVirt's VMI webhook adds to every VMI it creates, after any it has.
pub const VMI_FINALIZER: &str = "kubevirt.io/foregroundDeleteVirtualMachine";

/// Append [`VMI_FINALIZER`] to the finalizers of `vmi`, as the VMI webhook does when the VMI is
/// created (a list of another type is the API server's refusal, reported elsewhere: left alone).
pub fn webhook_finalizer(vmi: &mut Value) {
    let Some(metadata) = vmi.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let finalizers = path::field_or_insert_with(metadata, "finalizers", || json!([]));
    if finalizers.is_null() {
        *finalizers = json!([]);
    }
    if let Some(list) = finalizers.as_array_mut() {
        list.push(json!(VMI_FINALIZER));
    }
}

/// The controlling owner reference of a VMI that `kind` named `name` (with `uid`, where the
/// owner's document has one) creates.
pub fn owner_reference(kind: &str, name: &str, uid: Option<&str>) -> Value {
    let mut owner = Map::new();
    owner.insert("apiVersion".into(), json!("kubevirt.io/v1"));
    owner.insert("kind".into(), json!(kind));
    owner.insert("name".into(), json!(name));
    if let Some(uid) = uid.filter(|u| !u.is_empty()) {
        owner.insert("uid".into(), json!(uid));
    }
    owner.insert("controller".into(), json!(true));
    owner.insert("blockOwnerDeletion".into(), json!(true));
    Value::Object(owner)
}

/// The annotation holding the generation of the VM a VMI was started from.
pub const GENERATION_ANNOTATION: &str = "kubevirt.io/vm-generation";

/// Count an update of `vm` in its `metadata.generation`, as the API server does when a spec
/// changes: a VM without one is a new VM, of generation 1, that becomes 2.
pub fn bump_generation(vm: &mut Value) {
    let Some(metadata) = vm.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let generation = metadata
        .get("generation")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    metadata.insert(
        "generation".into(),
        Value::from(generation.saturating_add(1)),
    );
}

/// What the VM controller writes into the metadata of the VMI it starts of `vm`: the VM as the
/// VMI's controlling owner (with the VM's `uid` where its document has one: the API server gives
/// a VM its own when it is created), the VM's generation (`metadata.generation`, or 1, a new
/// VM's) as an annotation, and its finalizer after the template's.
pub fn controller_metadata(vm: &Value, vmi: &mut Value) {
    let name = path::str_at(vm, &["metadata", "name"]).unwrap_or("");
    let uid = path::str_at(vm, &["metadata", "uid"]);
    let owner = owner_reference("VirtualMachine", name, uid);
    let generation = path::get(vm, &["metadata", "generation"])
        .and_then(Value::as_i64)
        .unwrap_or(1);
    if let Some(annotations) = path::ensure_map(vmi, &["metadata", "annotations"]) {
        annotations.insert(
            GENERATION_ANNOTATION.into(),
            Value::String(generation.to_string()),
        );
    }
    let Some(metadata) = vmi.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    metadata.insert("ownerReferences".into(), json!([owner]));
    let finalizers = path::field_or_insert_with(metadata, "finalizers", || json!([]));
    if !finalizers.is_array() {
        *finalizers = json!([]);
    }
    if let Some(list) = finalizers.as_array_mut() {
        list.push(json!(CONTROLLER_FINALIZER));
    }
}

/// The annotation with which the VM controller starts the VMI of a VM whose run strategy is
/// `WaitAsReceiver` as the target of a migration.
pub fn receiver_annotation(vm: &Value, vmi: &mut Value) {
    if path::str_at(vm, &["spec", "runStrategy"]) == Some("WaitAsReceiver")
        && let Some(annotations) = path::ensure_map(vmi, &["metadata", "annotations"])
    {
        annotations.insert(
            "kubevirt.io/create-migration-target".into(),
            Value::from("true"),
        );
    }
}

/// The claim of a memory dump request in a VM's `status` that is past its in-progress phases:
/// the volume the VM controller leaves out of the VMI.
pub fn completed_memory_dump_claim(status: &Value) -> Option<&str> {
    let request = status
        .field("memoryDumpRequest")
        .filter(|r| r.is_object())?;
    let phase = request.field("phase").and_then(Value::as_str).unwrap_or("");
    if matches!(phase, "Associating" | "InProgress") {
        return None;
    }
    Some(
        request
            .field("claimName")
            .and_then(Value::as_str)
            .unwrap_or(""),
    )
}

/// Remove the volume `name`; a list left empty goes (the controller's VMI reaches the API
/// without it).
pub fn remove_volume(spec: &mut Value, name: &str) {
    let Some(map) = spec.as_object_mut() else {
        return;
    };
    if let Some(volumes) = map.get_mut("volumes").and_then(Value::as_array_mut) {
        volumes.retain(|v| v.field("name").and_then(Value::as_str).unwrap_or("") != name);
        if volumes.is_empty() {
            map.shift_remove("volumes");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;

    #[test]
    fn the_controller_owns_the_vmi_and_records_the_vms_generation() {
        let vm = json!({"metadata": {"name": "vm", "uid": "1234", "generation": 7}});
        let mut vmi = json!({"metadata": {"name": "vm", "finalizers": ["example.com/keep"],
            "ownerReferences": [{"kind": "Other"}]}});
        controller_metadata(&vm, &mut vmi);
        assert_eq!(
            vmi["metadata"],
            json!({"name": "vm", "finalizers": ["example.com/keep", CONTROLLER_FINALIZER],
                "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                    "name": "vm", "uid": "1234", "controller": true,
                    "blockOwnerDeletion": true}],
                "annotations": {GENERATION_ANNOTATION: "7"}})
        );
        // A VM as written: no uid yet, and generation 1 once created.
        let mut vmi = json!({"metadata": {"name": "vm"}});
        controller_metadata(&json!({"metadata": {"name": "vm"}}), &mut vmi);
        assert_eq!(vmi["metadata"]["annotations"][GENERATION_ANNOTATION], "1");
        assert!(vmi["metadata"]["ownerReferences"][0].get("uid").is_none());
        assert_eq!(vmi["metadata"]["finalizers"], json!([CONTROLLER_FINALIZER]));
    }

    #[test]
    fn quantities_are_judged_as_go_sends_them_back() {
        let canonical = json!({"domain": {"resources": {"requests": {"memory": "1Gi", "cpu": "2"}}},
            "volumes": [{"name": "v", "emptyDisk": {"capacity": "1Gi"}}]});
        assert!(matches!(
            with_canonical_quantities(&canonical),
            std::borrow::Cow::Borrowed(_)
        ));
        let written = json!({"domain": {"resources": {"requests": {"memory": "-10.5Gi"},
            "limits": {"memory": 1073741824u64, "cpu": "2000m"}},
            "memory": {"guest": "-8Ei"}},
            "volumes": [{"name": "v", "emptyDisk": {"capacity": "1024Mi"}}, {"name": "w"}]});
        let judged = with_canonical_quantities(&written).into_owned();
        assert_eq!(
            judged,
            json!({"domain": {"resources": {"requests": {"memory": "-10752Mi"},
                "limits": {"memory": 1073741824u64, "cpu": "2"}},
                "memory": {"guest": "-9223372036854775807"}},
                "volumes": [{"name": "v", "emptyDisk": {"capacity": "1Gi"}}, {"name": "w"}]})
        );
    }

    #[test]
    fn a_container_path_volume_is_read_only_unless_it_says() {
        let mut spec = json!({"volumes": [
            {"name": "a", "containerPath": {"path": "/a"}},
            {"name": "b", "containerPath": {"path": "/b", "readOnly": null}},
            {"name": "c", "containerPath": {"path": "/c", "readOnly": false}},
            {"name": "d", "emptyDisk": {"capacity": "1Gi"}},
            {"name": "e", "containerPath": null}
        ]});
        schema_defaults(&mut spec);
        assert_eq!(
            spec,
            json!({"volumes": [
                {"name": "a", "containerPath": {"path": "/a", "readOnly": true}},
                {"name": "b", "containerPath": {"path": "/b", "readOnly": true}},
                {"name": "c", "containerPath": {"path": "/c", "readOnly": false}},
                {"name": "d", "emptyDisk": {"capacity": "1Gi"}},
                {"name": "e", "containerPath": null}
            ]})
        );
    }

    #[test]
    fn null_labels_annotations_and_node_selectors_are_empty_strings() {
        let mut vmi = json!({
            "metadata": {"labels": {"a": null, "b": "x"}, "annotations": {"c": null}},
            "spec": {"nodeSelector": {"d": null}, "domain": {"x": null}}
        });
        null_strings_as_empty(&mut vmi);
        assert_eq!(
            vmi,
            json!({
                "metadata": {"labels": {"a": "", "b": "x"}, "annotations": {"c": ""}},
                "spec": {"nodeSelector": {"d": ""}, "domain": {"x": null}}
            })
        );
    }

    #[test]
    fn an_input_device_is_added_only_when_asked_and_none_exists() {
        let mut asked = json!({"domain": {"devices": {"autoattachInputDevice": true}}});
        autoattach_input_device(&mut asked);
        assert_eq!(
            path::get(&asked, &["domain", "devices", "inputs"]),
            Some(&json!([{"name": "default-0"}]))
        );
        for spec in [
            json!({"domain": {"devices": {"autoattachInputDevice": false}}}),
            json!({"domain": {"devices": {}}}),
            json!({"domain": {"devices": {"autoattachInputDevice": true,
                "inputs": [{"name": "mine", "type": "tablet"}]}}}),
        ] {
            let mut changed = spec.clone();
            autoattach_input_device(&mut changed);
            assert_eq!(changed, spec);
        }
    }

    fn obj(v: Value) -> Object {
        Object::new(v, Origin::default())
    }

    /// A VM named `vm1` whose template's spec is `spec`.
    fn vm_with(spec: Value) -> Object {
        obj(json!({
            "apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachine",
            "metadata": {"name": "vm1"},
            "spec": {"template": {"spec": spec}}
        }))
    }

    #[test]
    fn go_zero_fields_fill_missing_and_null_and_keep_the_rest() {
        let mut vmi = json!({"spec": {
            "domain": {"devices": {
                "inputs": [{"name": "a", "type": "tablet"}, {"type": null}, "not a mapping"],
                "disks": [{"disk": {}}]
            }},
            "volumes": [{"name": "root"}]
        }});
        write_go_zero_fields(&mut vmi);
        assert_eq!(
            vmi,
            json!({"spec": {
                "domain": {"devices": {
                    "inputs": [{"name": "a", "type": "tablet"}, {"type": "", "name": ""}, "not a mapping"],
                    "disks": [{"disk": {}, "name": ""}]
                }},
                "volumes": [{"name": "root"}]
            }})
        );
    }

    #[test]
    fn null_items_of_struct_lists_become_structs_with_their_zero_fields() {
        let mut vmi = json!({"spec": {
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "In"}, null]}, null]
            }}},
            "tolerations": [null]
        }});
        write_go_zero_fields(&mut vmi);
        let spec = &vmi["spec"];
        let terms = &spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"];
        assert_eq!(
            terms,
            &json!([
                {"matchExpressions": [{"key": "a", "operator": "In"}, {"key": "", "operator": ""}]},
                {}
            ])
        );
        assert_eq!(spec["tolerations"], json!([{}]));
    }

    #[test]
    fn firmware_uuid_matches_kubevirt() {
        // Values taken from KubeVirt's answers in the presets corpus.
        assert_eq!(firmware_uuid("vm1"), "133bf63e-9459-5126-9b21-b56e9b3d17b3");
        assert_eq!(
            firmware_uuid("vm-disks"),
            "853258e6-fe53-5d07-8aac-430ea9d62ddb"
        );
    }

    #[test]
    fn vm_becomes_vmi_with_template_metadata_uuid_and_disks() {
        let vm = obj(json!({
            "apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachine",
            "metadata": {"name": "vm1", "namespace": "ns", "labels": {"vm": "label"}},
            "spec": {"template": {
                "metadata": {"labels": {"app": "web"}, "generateName": "x-"},
                "spec": {
                    "domain": {"devices": {"disks": [{"name": "root"}],
                                           "filesystems": [{"name": "fs"}]}},
                    "volumes": [{"name": "root"}, {"name": "fs"}, {"name": "ci"}]
                }
            }}
        }));
        let vmi = vm_to_vmi(&vm);
        assert_eq!(
            vmi,
            json!({
                "apiVersion": "kubevirt.io/v1",
                "kind": "VirtualMachineInstance",
                "metadata": {"name": "vm1", "namespace": "ns", "labels": {"app": "web"}},
                "spec": {
                    "domain": {
                        "devices": {"disks": [{"name": "root"}, {"name": "ci"}],
                                    "filesystems": [{"name": "fs"}]},
                        "firmware": {"uuid": "133bf63e-9459-5126-9b21-b56e9b3d17b3"}
                    },
                    "volumes": [{"name": "root"}, {"name": "fs"}, {"name": "ci"}]
                }
            })
        );
    }

    #[test]
    fn empty_requests_and_limits_do_not_reach_the_vmi() {
        let vm = vm_with(json!({"domain": {"resources": {
            "requests": {}, "limits": null, "overcommitGuestOverhead": true
        }}}));
        assert_eq!(
            path::get(&vm_to_vmi(&vm), &["spec", "domain", "resources"]),
            Some(&json!({"overcommitGuestOverhead": true}))
        );
        let vm = vm_with(json!({"domain": {"resources": {
            "requests": {"memory": "1Gi"}, "limits": {}
        }}}));
        assert_eq!(
            path::get(&vm_to_vmi(&vm), &["spec", "domain", "resources"]),
            Some(&json!({"requests": {"memory": "1Gi"}}))
        );
    }

    #[test]
    fn a_volume_without_a_name_gets_a_disk_without_one() {
        for volumes in [json!([null]), json!([{}]), json!([{"name": ""}])] {
            let vmi = vm_to_vmi(&vm_with(json!({"volumes": volumes})));
            assert_eq!(
                path::get(&vmi, &["spec", "domain", "devices", "disks"]),
                Some(&json!([{}])),
                "{volumes}"
            );
        }
    }

    #[test]
    fn only_the_nulls_of_a_spec_become_go_zero_values_when_absent_fields_stay_out() {
        let spec = json!({"spec": {"domain": {
            "devices": {"watchdog": {"i6300esb": {}}, "sound": {"name": null},
                        "inputs": [{"bus": "usb"}]},
            "machine": {},
            "features": {"acpi": {"enabled": null}},
            "cpu": {"cores": null}
        }}});
        let mut present = spec.clone();
        go_nulls_as_zero_values(&mut present);
        // Other nulls are fields Go leaves out.
        assert_eq!(
            present,
            json!({"spec": {"domain": {
                "devices": {"watchdog": {"i6300esb": {}}, "sound": {"name": ""},
                            "inputs": [{"bus": "usb"}]},
                "machine": {},
                "features": {"acpi": {}},
                "cpu": {}
            }}})
        );
        let mut all = spec;
        write_go_zero_fields(&mut all);
        assert_eq!(
            path::get(&all, &["spec", "domain", "devices", "watchdog", "name"]),
            Some(&json!(""))
        );
        assert_eq!(
            path::get(&all, &["spec", "domain", "machine", "type"]),
            Some(&json!(""))
        );
    }

    #[test]
    fn existing_uuid_is_kept_and_status_requests_are_honoured() {
        let vm = obj(json!({
            "apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachine",
            "metadata": {"name": "vm1"},
            "spec": {"template": {"spec": {
                "domain": {"firmware": {"uuid": "fixed"}},
                "volumes": [{"name": "dump"}]
            }}},
            "status": {
                "stateChangeRequests": [{"action": "Start", "data": {"paused": "true"}}],
                "memoryDumpRequest": {"claimName": "dump", "phase": "Completed"}
            }
        }));
        let vmi = vm_to_vmi(&vm);
        assert_eq!(
            path::str_at(&vmi, &["spec", "domain", "firmware", "uuid"]),
            Some("fixed")
        );
        assert_eq!(
            path::str_at(&vmi, &["spec", "startStrategy"]),
            Some("Paused")
        );
        // The dump volume was the only one, and Go drops the empty list on the way to the API.
        assert_eq!(path::get(&vmi, &["spec", "volumes"]), None);
        assert!(path::get(&vmi, &["metadata", "namespace"]).is_none());
    }

    #[test]
    fn wrong_types_do_not_panic() {
        let vm = obj(json!({
            "apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachine",
            "metadata": {"name": "vm1"},
            "spec": {"template": {"spec": {"domain": "oops", "volumes": [{"name": "a"}]}}}
        }));
        let vmi = vm_to_vmi(&vm);
        assert_eq!(path::get(&vmi, &["spec", "domain"]), Some(&json!("oops")));
    }
}

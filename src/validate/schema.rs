//! A small schema of the fields kvrender reasons about, taken from the Go types and their json
//! tags in KubeVirt's API (`staging/src/kubevirt.io/api/instancetype/v1beta1/types.go`,
//! `core/v1/types.go`, `core/v1/schema.go`, at d923fdb815).
//!
//! It covers instancetypes, preferences, VirtualMachines, VirtualMachineInstances and presets
//! whole, as KubeVirt's CRD schemas (generated from those types) do: the volume sources, the
//! affinity and tolerations of Kubernetes, the DataVolume templates of CDI. Only what a user
//! never writes is [`Ty::Opaque`] or [`Ty::OpaqueMap`]: `status` and the
//! managed fields of `metadata` (the time stamps are [`Ty::Time`]: a time Go reads, or `null`). Field names are case-sensitive, as the API server treats them:
//! an unknown field is refused under strict field validation (`kubectl`'s default) and pruned
//! without a word otherwise, except in a [`Ty::Preserving`] mapping, where it is kept.

use std::borrow::Cow;

use serde_json::Value;

use crate::model::path::At;

/// The type of a field.
#[derive(Clone, Copy, Debug)]
pub enum Ty {
    /// A string.
    Str,
    /// A boolean.
    Bool,
    /// A signed integer (Go `int`, `int64`).
    Int,
    /// A signed 32-bit integer (Go `int32`).
    Int32,
    /// An unsigned integer (Go `uint`, `uint64`).
    Uint,
    /// An unsigned 32-bit integer (Go `uint32`).
    Uint32,
    /// A port number (Go `int32`) or name (`intstr.IntOrString`).
    IntOrString,
    /// A resource quantity: a string or an integer.
    Quantity,
    /// A time (`metav1.Time`): a string Go's RFC 3339 layout reads, like
    /// `2024-01-01T10:00:00Z`.
    Time,
    /// A mapping of strings to strings.
    StrMap,
    /// A mapping of resource names to quantities.
    QuantityMap,
    /// A mapping with known fields.
    Struct(&'static [Field]),
    /// A mapping with known fields whose schema keeps unknown ones
    /// (`x-kubernetes-preserve-unknown-fields`): the API server stores an unknown key as
    /// written, and KubeVirt, reading the object into its Go types, ignores it.
    Preserving(&'static [Field]),
    /// A list whose items are all of one type.
    List(&'static Ty),
    /// A mapping we do not look into.
    OpaqueMap,
    /// Anything; not checked.
    Opaque,
}

impl Ty {
    /// How the type is named in messages.
    pub fn describe(self) -> &'static str {
        match self {
            Ty::Str => "a string",
            Ty::Bool => "a boolean",
            Ty::Int | Ty::Int32 => "an integer",
            Ty::Uint | Ty::Uint32 => "a non-negative integer",
            Ty::IntOrString => "an integer or a string",
            Ty::Quantity => "a quantity (a string like `2Gi`, or an integer)",
            Ty::Time => "a time like `2024-01-01T10:00:00Z` (RFC 3339)",
            Ty::StrMap => "a mapping of strings",
            Ty::QuantityMap => "a mapping of quantities",
            Ty::Struct(_) | Ty::Preserving(_) | Ty::OpaqueMap => "a mapping",
            Ty::List(_) => "a list",
            Ty::Opaque => "anything",
        }
    }
}

/// The largest whole number a 64-bit float holds exactly, and each one below it: KubeVirt's
/// webhooks read an object's numbers as such floats before they check its schema.
pub(crate) const MAX_EXACT_IN_FLOAT: u64 = (1 << 53) - 1;

/// Whether the whole number `v` fits the Go integer type `ty` stands for; `None` when `v` is
/// not a whole number or `ty` not an integer type. The API server takes any 64-bit signed
/// integer where KubeVirt's schema says `integer` (and refuses a larger one); KubeVirt,
/// decoding it into a narrower Go type, cannot read one out of that type's range.
pub(crate) fn integer_fits(v: &Value, ty: Ty) -> Option<bool> {
    let integer = matches!(
        ty,
        Ty::Int | Ty::Int32 | Ty::Uint | Ty::Uint32 | Ty::IntOrString
    );
    if !(v.is_i64() || v.is_u64()) || !integer {
        return None;
    }
    let Some(n) = v.as_i64() else {
        return Some(false);
    };
    Some(match ty {
        Ty::Int32 | Ty::IntOrString => i32::try_from(n).is_ok(),
        Ty::Uint => n >= 0,
        Ty::Uint32 => u32::try_from(n).is_ok(),
        _ => true,
    })
}

/// What a whole number out of the range of the Go integer type `ty` must be instead.
pub(crate) fn integer_range(ty: Ty) -> &'static str {
    match ty {
        Ty::Int32 => "an integer from -2^31 to 2^31-1",
        Ty::IntOrString => "a string, or an integer from -2^31 to 2^31-1",
        Ty::Uint => "a non-negative integer below 2^63",
        Ty::Uint32 => "a non-negative integer below 2^32",
        _ => "an integer from -2^63 to 2^63-1",
    }
}

/// What KubeVirt's webhooks make of `found`, a whole number beyond ±[`MAX_EXACT_IN_FLOAT`] in
/// an integer field of the `spec` of a VM, VMI or preset.
pub(crate) fn beyond_float_message(found: &str) -> String {
    format!(
        "{found} is beyond 2^53-1 (9007199254740991): KubeVirt's webhook reads the object's \
         numbers as 64-bit floats, which hold no larger whole number exactly, and refuses it as \
         not an integer"
    )
}

/// A VirtualMachineInstance's `spec` (a VM template's `spec`).
pub(crate) const VMI_SPEC_TY: Ty = Ty::Struct(VMI_SPEC);

/// Whether `v`, a whole number of an integer field, is one a 64-bit float does not hold
/// exactly (beyond ±[`MAX_EXACT_IN_FLOAT`]).
pub(crate) fn beyond_float(v: &Value) -> bool {
    match v.as_i64() {
        Some(n) => n.unsigned_abs() > MAX_EXACT_IN_FLOAT,
        None => v.is_u64(),
    }
}

/// A field: its json name and type.
#[derive(Clone, Copy, Debug)]
pub struct Field(pub &'static str, pub Ty);

/// What the walk found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// A key the type does not have.
    Unknown {
        /// The dotted path of the mapping holding the key.
        parent: String,
        /// The key.
        key: String,
        /// A known field of the same name in another case, if any.
        suggestion: Option<&'static str>,
        /// Where a field of that name is known nearby, when the key looks mis-indented.
        misplaced: Option<Misplaced>,
        /// Whether the API server keeps the key ([`Ty::Preserving`]) rather than refusing or
        /// dropping it.
        kept: bool,
    },
    /// A value of the wrong type.
    WrongType {
        /// The dotted path of the value.
        path: String,
        /// What the type should be.
        expected: &'static str,
        /// What it is.
        found: Cow<'static, str>,
        /// Whether it is a whole number out of the range of the field's Go type, which the
        /// API server stores (its schema takes any 64-bit integer) and KubeVirt cannot decode.
        out_of_range: bool,
    },
    /// A `null` item of a list. The API server drops a `null` field of a mapping, but keeps a
    /// list's items, and refuses one that is `null` where its schema checks the list.
    NullItem {
        /// The dotted path of the item.
        path: String,
        /// What it should be.
        expected: &'static str,
    },
    /// A whole number in an integer field beyond ±(2^53-1), which a 64-bit float does not
    /// hold exactly. KubeVirt's VM, VMI and preset webhooks read the object's numbers as such
    /// floats to check it against their schema, and refuse it.
    BeyondFloat {
        /// The dotted path of the value.
        path: String,
        /// The number.
        found: String,
    },
}

/// Where an unknown key is a known field nearby: the likelier mistake is its indentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Misplaced {
    /// An empty sibling mapping (`preference:` with nothing under it) has a field of that name:
    /// the key was meant one level deeper, under it. Holds the sibling's path.
    Under(String),
    /// The mapping that holds this one has a field of that name: the key was meant one level
    /// up. Holds that mapping's path (empty at the top level).
    Above(String),
    /// A sibling mapping that has fields, but not this one, takes a field of that name (`volumes`
    /// beside the template's `spec`): the key was meant one level deeper, among them. Holds
    /// the sibling's path.
    Within(String),
}

/// What a value is, as a diagnostic says it ("a boolean", "a list", ...).
pub(crate) fn found(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        // Whole, but read as a float: beyond what 64 bits hold (`1e308`).
        Value::Number(n)
            if n.as_f64()
                .is_some_and(|f| f.fract() == 0.0 && f.abs() >= 9.2e18) =>
        {
            "a whole number too large for 64 bits"
        }
        Value::Number(_) => "a decimal number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// Whether `v` is a quantity as the API server takes one: an integer (the schema says integer
/// or string, so `1.5` unquoted is refused while `2e9` passes), or a string that has the shape
/// KubeVirt's schema demands of a quantity (`2Gi`, `512M`, `1.5`, `2e9`, `.5`) and that the Go
/// quantity parser reads.
pub(crate) fn is_quantity(v: &Value) -> bool {
    match v {
        Value::Number(n) => {
            n.is_i64()
                || n.is_u64()
                || n.as_f64()
                    .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
        }
        Value::String(s) => {
            quantity_shaped(s) && crate::model::quantity::Quantity::parse(s).is_ok()
        }
        _ => false,
    }
}

/// Whether KubeVirt's Go types can decode `v` as a quantity: any number, or a string the Go
/// quantity parser reads (which takes a few the schema's pattern refuses, such as `Gi` for
/// zero). What `expand` needs, as the `expand-spec` API decodes without the schema.
pub(crate) fn go_reads_quantity(v: &Value) -> bool {
    match v {
        Value::Number(_) => true,
        Value::String(s) => crate::model::quantity::Quantity::parse(s).is_ok(),
        _ => false,
    }
}

/// The schema's pattern for a quantity string: an optional sign, a decimal number (`1`, `1.`,
/// `1.5`, `.5`), then nothing, a binary suffix (`Ki`..`Ei`), a decimal suffix (`n u m k M G T
/// P E`) or an exponent (`e3`, `E-2`).
fn quantity_shaped(s: &str) -> bool {
    /// The length of the decimal number at the start of `s`, if there is one.
    fn number(s: &[u8]) -> Option<usize> {
        let int = s.iter().take_while(|c| c.is_ascii_digit()).count();
        if s.get(int) != Some(&b'.') {
            return (int > 0).then_some(int);
        }
        let frac = s[int + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        (int > 0 || frac > 0).then_some(int + 1 + frac)
    }
    let b = s.as_bytes();
    let b = b
        .strip_prefix(b"+")
        .or_else(|| b.strip_prefix(b"-"))
        .unwrap_or(b);
    let Some(n) = number(b) else {
        return false;
    };
    match &b[n..] {
        [] | [b'n' | b'u' | b'm' | b'k' | b'M' | b'G' | b'T' | b'P' | b'E'] => true,
        [b'K' | b'M' | b'G' | b'T' | b'P' | b'E', b'i'] => true,
        [b'e' | b'E', rest @ ..] => {
            let rest = rest
                .strip_prefix(b"+")
                .or_else(|| rest.strip_prefix(b"-"))
                .unwrap_or(rest);
            number(rest) == Some(rest.len())
        }
        _ => false,
    }
}

/// What `v`, found where a `ty` belongs, is: [`found`], or for a string that is not a quantity,
/// the string itself (shortened).
pub(crate) fn found_instead(v: &Value, ty: Ty) -> Cow<'static, str> {
    match (ty, v) {
        (Ty::Quantity | Ty::QuantityMap | Ty::Time, Value::String(s)) => {
            const LONGEST: usize = 40;
            if s.chars().count() > LONGEST {
                let head: String = s.chars().take(LONGEST).collect();
                Cow::Owned(format!("{head:?}..."))
            } else {
                Cow::Owned(format!("{s:?}"))
            }
        }
        // A whole number out of range is shown as it is: "an integer" would read as if an
        // integer were not what is wanted.
        (Ty::Int | Ty::Int32 | Ty::Uint | Ty::Uint32 | Ty::IntOrString, Value::Number(n))
            if n.is_i64() || n.is_u64() =>
        {
            Cow::Owned(n.to_string())
        }
        _ => Cow::Borrowed(found(v)),
    }
}

fn fits(v: &Value, ty: Ty) -> bool {
    match ty {
        Ty::Str => v.is_string(),
        Ty::Bool => v.is_boolean(),
        Ty::Int | Ty::Int32 | Ty::Uint | Ty::Uint32 => integer_fits(v, ty) == Some(true),
        Ty::IntOrString => v.is_string() || integer_fits(v, ty) == Some(true),
        Ty::Quantity => is_quantity(v),
        Ty::Time => v
            .as_str()
            .is_some_and(crate::kubevirt::go_shape::go_reads_time),
        // A `null` value in a map reads as the zero value of its type (`""`, the zero
        // quantity): the API server takes it.
        Ty::StrMap => v
            .as_object()
            .is_some_and(|m| m.values().all(|s| s.is_string() || s.is_null())),
        Ty::QuantityMap => v
            .as_object()
            .is_some_and(|m| m.values().all(|q| q.is_null() || is_quantity(q))),
        Ty::Struct(_) | Ty::Preserving(_) | Ty::OpaqueMap => v.is_object(),
        Ty::List(_) => v.is_array(),
        Ty::Opaque => true,
    }
}

/// Check `v` against `ty`; `path` is where `v` sits. Nulls are accepted everywhere: the API
/// server drops them.
pub fn check(v: &Value, ty: Ty, path: &str, out: &mut Vec<Problem>) {
    walk(v, ty, &At::Root(path), None, out);
}

/// Where a key `key` that `fields` (of the mapping `map`, at `at`) does not know is a known
/// field nearby: under an empty sibling, or in `up`, the fields of the mapping holding `map`.
fn misplaced(
    key: &str,
    map: &serde_json::Map<String, Value>,
    fields: &[Field],
    at: &At<'_>,
    up: Option<&[Field]>,
) -> Option<Misplaced> {
    let empty = |v: &Value| v.is_null() || v.as_object().is_some_and(serde_json::Map::is_empty);
    let under = fields.iter().find(|f| {
        matches!(f.1, Ty::Struct(sub) | Ty::Preserving(sub) if sub.iter().any(|g| g.0 == key))
            && map.get(f.0).is_some_and(empty)
    });
    if let Some(sibling) = under {
        return Some(Misplaced::Under(At::Key(at, sibling.0).path()));
    }
    if let (At::Key(parent, _), Some(up)) = (at, up)
        && up.iter().any(|f| f.0 == key)
    {
        return Some(Misplaced::Above(parent.path()));
    }
    let within = fields.iter().find(|f| {
        matches!(f.1, Ty::Struct(sub) | Ty::Preserving(sub) if sub.iter().any(|g| g.0 == key))
            && map
                .get(f.0)
                .and_then(Value::as_object)
                .is_some_and(|sibling| !sibling.contains_key(key))
    });
    within.map(|sibling| Misplaced::Within(At::Key(at, sibling.0).path()))
}

/// [`check`] of the value at `at`; `up` holds the fields of the mapping that holds it.
fn walk(v: &Value, ty: Ty, at: &At<'_>, up: Option<&[Field]>, out: &mut Vec<Problem>) {
    if v.is_null() {
        return;
    }
    if let (Ty::StrMap | Ty::QuantityMap, Value::Object(map)) = (ty, v) {
        // A mapping of the wrong values: name each value, not the mapping.
        let (value_ty, expected) = match ty {
            Ty::StrMap => (Ty::Str, "a string"),
            _ => (Ty::Quantity, Ty::Quantity.describe()),
        };
        for (key, child) in map {
            if !child.is_null() && !fits(child, value_ty) {
                out.push(Problem::WrongType {
                    path: At::Key(at, key).path(),
                    expected,
                    found: found_instead(child, value_ty),
                    out_of_range: false,
                });
            }
        }
        return;
    }
    if !fits(v, ty) {
        let out_of_range = integer_fits(v, ty) == Some(false) && v.is_i64();
        let expected = if integer_fits(v, ty) == Some(false) {
            integer_range(ty)
        } else {
            ty.describe()
        };
        out.push(Problem::WrongType {
            path: at.path(),
            expected,
            found: found_instead(v, ty),
            out_of_range,
        });
        return;
    }
    match ty {
        Ty::Struct(fields) | Ty::Preserving(fields) => {
            let Some(map) = v.as_object() else { return };
            for (key, child) in map {
                match fields.iter().find(|f| f.0 == key) {
                    Some(f) => walk(child, f.1, &At::Key(at, key), Some(fields), out),
                    None => out.push(Problem::Unknown {
                        parent: at.path(),
                        key: key.clone(),
                        suggestion: crate::diagnostic::nearest_name(
                            key,
                            fields.iter().map(|f| f.0),
                        ),
                        misplaced: misplaced(key, map, fields, at, up),
                        kept: matches!(ty, Ty::Preserving(_)),
                    }),
                }
            }
        }
        Ty::List(item) => {
            if let Some(items) = v.as_array() {
                for (i, child) in items.iter().enumerate() {
                    if child.is_null() && !matches!(item, Ty::Opaque | Ty::OpaqueMap) {
                        out.push(Problem::NullItem {
                            path: At::Index(at, i).path(),
                            expected: item.describe(),
                        });
                    } else {
                        walk(child, *item, &At::Index(at, i), None, out);
                    }
                }
            }
        }
        Ty::Int | Ty::Uint if beyond_float(v) => out.push(Problem::BeyondFloat {
            path: at.path(),
            found: v.to_string(),
        }),
        _ => {}
    }
}

/// A struct without fields, written `{}` (`bridge`, `rng`, `guestAgentPing`, ...): any key in
/// it is unknown.
const EMPTY: Ty = Ty::Struct(&[]);

/// A DRA claim and request, inlined in GPUs and host devices and a network source.
const CLAIM_REQUEST: [Field; 2] = [Field("claimName", Ty::Str), Field("requestName", Ty::Str)];

/// A vGPU's options (`VGPUOptions`), in a GPU and a preference's preferred ones.
const VGPU_OPTIONS: Ty = Ty::Struct(&[Field(
    "display",
    Ty::Struct(&[
        Field("enabled", Ty::Bool),
        Field("ramFB", Ty::Struct(FEATURE_STATE)),
    ]),
)]);

/// `GPU`, for instancetypes and VMs alike.
const GPUS: Ty = Ty::List(&Ty::Struct(&[
    Field("name", Ty::Str),
    Field("deviceName", Ty::Str),
    CLAIM_REQUEST[0],
    CLAIM_REQUEST[1],
    Field("virtualGPUOptions", VGPU_OPTIONS),
    Field("tag", Ty::Str),
]));

/// `HostDevice`, for instancetypes and VMs alike.
const HOST_DEVICES: Ty = Ty::List(&Ty::Struct(&[
    Field("name", Ty::Str),
    Field("deviceName", Ty::Str),
    CLAIM_REQUEST[0],
    CLAIM_REQUEST[1],
    Field("tag", Ty::Str),
]));

/// `CPUFeature`, in a VM's CPU and a preference's preferred features.
const CPU_FEATURES: Ty = Ty::List(&Ty::Struct(&[
    Field("name", Ty::Str),
    Field("policy", Ty::Str),
]));

const NUMA: &[Field] = &[Field("guestMappingPassthrough", EMPTY)];

/// Launch security (`LaunchSecurity`): AMD SEV, SEV-SNP or Intel TDX.
const LAUNCH_SECURITY: Ty = Ty::Struct(&[
    Field(
        "sev",
        Ty::Struct(&[
            Field("policy", Ty::Struct(&[Field("encryptedState", Ty::Bool)])),
            Field("attestation", EMPTY),
            Field("session", Ty::Str),
            Field("dhCert", Ty::Str),
        ]),
    ),
    Field("snp", EMPTY),
    Field("tdx", EMPTY),
]);

/// A disk's block sizes (`BlockSize`): custom sizes, or those of the volume.
const BLOCK_SIZE: Ty = Ty::Struct(&[
    Field(
        "custom",
        Ty::Struct(&[
            Field("logical", Ty::Uint),
            Field("physical", Ty::Uint),
            Field("discardGranularity", Ty::Uint),
        ]),
    ),
    Field("matchVolume", Ty::Struct(FEATURE_STATE)),
]);
const REALTIME: &[Field] = &[Field("mask", Ty::Str)];
const HUGEPAGES: &[Field] = &[Field("pageSize", Ty::Str)];
const IO_THREADS: &[Field] = &[Field("supplementalPoolThreadCount", Ty::Uint32)];

const CPU_INSTANCETYPE: &[Field] = &[
    Field("guest", Ty::Uint32),
    Field("model", Ty::Str),
    Field("dedicatedCPUPlacement", Ty::Bool),
    Field("numa", Ty::Struct(NUMA)),
    Field("isolateEmulatorThread", Ty::Bool),
    Field("realtime", Ty::Struct(REALTIME)),
    Field("maxSockets", Ty::Uint32),
];

const MEMORY_INSTANCETYPE: &[Field] = &[
    Field("guest", Ty::Quantity),
    Field("hugepages", Ty::Struct(HUGEPAGES)),
    Field("overcommitPercent", Ty::Int),
    Field("maxGuest", Ty::Quantity),
];

/// `VirtualMachineInstancetypeSpec`.
pub const INSTANCETYPE_SPEC: &[Field] = &[
    Field("nodeSelector", Ty::StrMap),
    Field("schedulerName", Ty::Str),
    Field("cpu", Ty::Struct(CPU_INSTANCETYPE)),
    Field("memory", Ty::Struct(MEMORY_INSTANCETYPE)),
    Field("gpus", GPUS),
    Field("hostDevices", HOST_DEVICES),
    Field("ioThreadsPolicy", Ty::Str),
    Field("ioThreads", Ty::Struct(IO_THREADS)),
    Field("launchSecurity", LAUNCH_SECURITY),
    Field("annotations", Ty::StrMap),
];

const SPREAD_OPTIONS: &[Field] = &[Field("across", Ty::Str), Field("ratio", Ty::Uint32)];

const CPU_PREFERENCES: &[Field] = &[
    Field("preferredCPUTopology", Ty::Str),
    Field("spreadOptions", Ty::Struct(SPREAD_OPTIONS)),
    Field("preferredCPUFeatures", CPU_FEATURES),
];

const DEVICE_PREFERENCES: &[Field] = &[
    Field("preferredAutoattachGraphicsDevice", Ty::Bool),
    Field("preferredAutoattachMemBalloon", Ty::Bool),
    Field("preferredAutoattachPodInterface", Ty::Bool),
    Field("preferredAutoattachSerialConsole", Ty::Bool),
    Field("preferredAutoattachInputDevice", Ty::Bool),
    Field("preferredDisableHotplug", Ty::Bool),
    Field("preferredVirtualGPUOptions", VGPU_OPTIONS),
    Field("preferredSoundModel", Ty::Str),
    Field("preferredUseVirtioTransitional", Ty::Bool),
    Field("preferredInputBus", Ty::Str),
    Field("preferredInputType", Ty::Str),
    Field("preferredDiskBus", Ty::Str),
    Field("preferredLunBus", Ty::Str),
    Field("preferredCdromBus", Ty::Str),
    Field("preferredDiskDedicatedIoThread", Ty::Bool),
    Field("preferredDiskCache", Ty::Str),
    Field("preferredDiskIO", Ty::Str),
    Field("preferredDiskBlockSize", BLOCK_SIZE),
    Field("preferredInterfaceModel", Ty::Str),
    Field("preferredRng", EMPTY),
    Field("preferredBlockMultiQueue", Ty::Bool),
    Field("preferredNetworkInterfaceMultiQueue", Ty::Bool),
    Field("preferredTPM", Ty::Struct(TPM)),
    Field("preferredInterfaceMasquerade", EMPTY),
    Field("preferredPanicDeviceModel", Ty::Str),
    Field("preferredVideoType", Ty::Str),
];

const FEATURE_PREFERENCES: &[Field] = &[
    Field("preferredAcpi", Ty::Struct(FEATURE_STATE)),
    Field("preferredApic", Ty::Struct(APIC)),
    Field("preferredHyperv", Ty::Struct(HYPERV)),
    Field("preferredKvm", Ty::Struct(KVM)),
    Field("preferredPvspinlock", Ty::Struct(FEATURE_STATE)),
    Field("preferredSmm", Ty::Struct(FEATURE_STATE)),
];

const FIRMWARE_PREFERENCES: &[Field] = &[
    Field("preferredUseBios", Ty::Bool),
    Field("preferredUseBiosSerial", Ty::Bool),
    Field("preferredUseEfi", Ty::Bool),
    Field("preferredUseSecureBoot", Ty::Bool),
    Field("preferredEfi", Ty::Struct(EFI)),
];

const MACHINE_PREFERENCES: &[Field] = &[Field("preferredMachineType", Ty::Str)];
const CLOCK_PREFERENCES: &[Field] = &[
    Field("preferredClockOffset", Ty::Struct(CLOCK_OFFSET)),
    Field("preferredTimer", Ty::Struct(TIMERS)),
];
const VOLUME_PREFERENCES: &[Field] = &[Field("preferredStorageClassName", Ty::Str)];
const CPU_REQUIREMENT: &[Field] = &[Field("guest", Ty::Uint32)];
const MEMORY_REQUIREMENT: &[Field] = &[Field("guest", Ty::Quantity)];
const REQUIREMENTS: &[Field] = &[
    Field("cpu", Ty::Struct(CPU_REQUIREMENT)),
    Field("memory", Ty::Struct(MEMORY_REQUIREMENT)),
    Field("architecture", Ty::Str),
];

/// `VirtualMachinePreferenceSpec`.
pub const PREFERENCE_SPEC: &[Field] = &[
    Field("clock", Ty::Struct(CLOCK_PREFERENCES)),
    Field("cpu", Ty::Struct(CPU_PREFERENCES)),
    Field("devices", Ty::Struct(DEVICE_PREFERENCES)),
    Field("features", Ty::Struct(FEATURE_PREFERENCES)),
    Field("firmware", Ty::Struct(FIRMWARE_PREFERENCES)),
    Field("machine", Ty::Struct(MACHINE_PREFERENCES)),
    Field("volumes", Ty::Struct(VOLUME_PREFERENCES)),
    Field("preferredSubdomain", Ty::Str),
    Field("preferredTerminationGracePeriodSeconds", Ty::Int),
    Field("requirements", Ty::Struct(REQUIREMENTS)),
    Field("annotations", Ty::StrMap),
    Field("preferSpreadSocketToCoreRatio", Ty::Uint32),
    Field("preferredArchitecture", Ty::Str),
    Field("preferredLaunchSecurity", LAUNCH_SECURITY),
];

const VM_CPU: &[Field] = &[
    Field("cores", Ty::Uint32),
    Field("sockets", Ty::Uint32),
    Field("maxSockets", Ty::Uint32),
    Field("threads", Ty::Uint32),
    Field("model", Ty::Str),
    Field("features", CPU_FEATURES),
    Field("dedicatedCpuPlacement", Ty::Bool),
    Field("numa", Ty::Struct(NUMA)),
    Field("isolateEmulatorThread", Ty::Bool),
    Field("realtime", Ty::Struct(REALTIME)),
];

const VM_MEMORY: &[Field] = &[
    Field("hugepages", Ty::Struct(HUGEPAGES)),
    Field("guest", Ty::Quantity),
    Field("maxGuest", Ty::Quantity),
    Field(
        "reservedOverhead",
        Ty::Struct(&[
            Field("addedOverhead", Ty::Quantity),
            Field("memLock", Ty::Str),
        ]),
    ),
];

const RESOURCES: &[Field] = &[
    Field("requests", Ty::QuantityMap),
    Field("limits", Ty::QuantityMap),
    Field("overcommitGuestOverhead", Ty::Bool),
];

const DISK_TARGET: &[Field] = &[
    Field("bus", Ty::Str),
    Field("readonly", Ty::Bool),
    Field("pciAddress", Ty::Str),
];
const LUN_TARGET: &[Field] = &[
    Field("bus", Ty::Str),
    Field("readonly", Ty::Bool),
    Field("reservation", Ty::Bool),
];
const CDROM_TARGET: &[Field] = &[
    Field("bus", Ty::Str),
    Field("readonly", Ty::Bool),
    Field("tray", Ty::Str),
];

/// A disk (`Disk` with its inline `DiskDevice`): note `readonly`, all lower case, in its target,
/// where a Kubernetes volume mount says `readOnly`.
const DISK: &[Field] = &[
    Field("name", Ty::Str),
    Field("disk", Ty::Struct(DISK_TARGET)),
    Field("lun", Ty::Struct(LUN_TARGET)),
    Field("cdrom", Ty::Struct(CDROM_TARGET)),
    Field("bootOrder", Ty::Uint),
    Field("serial", Ty::Str),
    Field("dedicatedIOThread", Ty::Bool),
    Field("cache", Ty::Str),
    Field("io", Ty::Str),
    Field("tag", Ty::Str),
    Field("blockSize", BLOCK_SIZE),
    Field("shareable", Ty::Bool),
    Field("errorPolicy", Ty::Str),
    Field("changedBlockTracking", Ty::Bool),
];

/// A port, as `ports` lists them.
const PORT: &[Field] = &[
    Field("name", Ty::Str),
    Field("protocol", Ty::Str),
    Field("port", Ty::Int32),
];

/// A range of ports, as `portRanges` lists them.
const PORT_RANGE: &[Field] = &[
    Field("protocol", Ty::Str),
    Field("start", Ty::Int32),
    Field("end", Ty::Int32),
];

const DHCP_OPTIONS: &[Field] = &[
    Field("bootFileName", Ty::Str),
    Field("tftpServerName", Ty::Str),
    Field("ntpServers", Ty::List(&Ty::Str)),
    Field(
        "privateOptions",
        Ty::List(&Ty::Struct(&[
            Field("option", Ty::Int),
            Field("value", Ty::Str),
        ])),
    ),
];

/// A network interface, its binding method inlined.
const INTERFACE: &[Field] = &[
    Field("name", Ty::Str),
    Field("model", Ty::Str),
    Field("bridge", EMPTY),
    Field("slirp", EMPTY),
    Field("masquerade", EMPTY),
    Field("sriov", EMPTY),
    Field("macvtap", EMPTY),
    Field("passt", EMPTY),
    Field("passtBinding", EMPTY),
    Field("binding", Ty::Struct(&[Field("name", Ty::Str)])),
    Field("ports", Ty::List(&Ty::Struct(PORT))),
    Field("portRanges", Ty::List(&Ty::Struct(PORT_RANGE))),
    Field("macAddress", Ty::Str),
    Field("bootOrder", Ty::Uint),
    Field("pciAddress", Ty::Str),
    Field("dhcpOptions", Ty::Struct(DHCP_OPTIONS)),
    Field("tag", Ty::Str),
    Field("acpiIndex", Ty::Int),
    Field("state", Ty::Str),
];

/// A reference to an object of the same namespace (`LocalObjectReference`).
const LOCAL_REF: Ty = Ty::Struct(&[Field("name", Ty::Str)]);

/// Where cloud-init's user and network data are (NoCloud and ConfigDrive alike).
const CLOUD_INIT: &[Field] = &[
    Field("secretRef", LOCAL_REF),
    Field("userDataBase64", Ty::Str),
    Field("userData", Ty::Str),
    Field("networkDataSecretRef", LOCAL_REF),
    Field("networkDataBase64", Ty::Str),
    Field("networkData", Ty::Str),
];

/// A claim (Kubernetes' `PersistentVolumeClaimVolumeSource`) and KubeVirt's `hotpluggable`.
const CLAIM: [Field; 3] = [
    Field("claimName", Ty::Str),
    Field("readOnly", Ty::Bool),
    Field("hotpluggable", Ty::Bool),
];

/// A volume, its source inlined.
const VOLUME: &[Field] = &[
    Field("name", Ty::Str),
    Field(
        "hostDisk",
        Ty::Struct(&[
            Field("path", Ty::Str),
            Field("type", Ty::Str),
            Field("capacity", Ty::Quantity),
            Field("shared", Ty::Bool),
        ]),
    ),
    Field("persistentVolumeClaim", Ty::Struct(&CLAIM)),
    Field("cloudInitNoCloud", Ty::Struct(CLOUD_INIT)),
    Field("cloudInitConfigDrive", Ty::Struct(CLOUD_INIT)),
    Field(
        "sysprep",
        Ty::Struct(&[Field("secret", LOCAL_REF), Field("configMap", LOCAL_REF)]),
    ),
    Field(
        "containerDisk",
        Ty::Struct(&[
            Field("image", Ty::Str),
            Field("imagePullSecret", Ty::Str),
            Field("path", Ty::Str),
            Field("imagePullPolicy", Ty::Str),
        ]),
    ),
    Field(
        "ephemeral",
        Ty::Struct(&[Field(
            "persistentVolumeClaim",
            Ty::Struct(&[CLAIM[0], CLAIM[1]]),
        )]),
    ),
    Field("emptyDisk", Ty::Struct(&[Field("capacity", Ty::Quantity)])),
    Field(
        "dataVolume",
        Ty::Struct(&[Field("name", Ty::Str), CLAIM[2]]),
    ),
    Field(
        "configMap",
        Ty::Struct(&[
            Field("name", Ty::Str),
            Field("optional", Ty::Bool),
            Field("volumeLabel", Ty::Str),
        ]),
    ),
    Field(
        "secret",
        Ty::Struct(&[
            Field("secretName", Ty::Str),
            Field("optional", Ty::Bool),
            Field("volumeLabel", Ty::Str),
        ]),
    ),
    Field(
        "downwardAPI",
        Ty::Struct(&[
            Field(
                "fields",
                Ty::List(&Ty::Struct(&[
                    Field("path", Ty::Str),
                    Field(
                        "fieldRef",
                        Ty::Struct(&[Field("apiVersion", Ty::Str), Field("fieldPath", Ty::Str)]),
                    ),
                    Field(
                        "resourceFieldRef",
                        Ty::Struct(&[
                            Field("containerName", Ty::Str),
                            Field("resource", Ty::Str),
                            Field("divisor", Ty::Quantity),
                        ]),
                    ),
                    Field("mode", Ty::Int32),
                ])),
            ),
            Field("volumeLabel", Ty::Str),
        ]),
    ),
    Field(
        "serviceAccount",
        Ty::Struct(&[Field("serviceAccountName", Ty::Str)]),
    ),
    Field("downwardMetrics", EMPTY),
    Field("memoryDump", Ty::Struct(&CLAIM)),
    Field(
        "containerPath",
        Ty::Struct(&[Field("path", Ty::Str), Field("readOnly", Ty::Bool)]),
    ),
];

/// A typed reference (`TypedLocalObjectReference`, and with `namespace`,
/// `TypedObjectReference`).
const TYPED_REF: [Field; 4] = [
    Field("apiGroup", Ty::Str),
    Field("kind", Ty::Str),
    Field("name", Ty::Str),
    Field("namespace", Ty::Str),
];

/// What CDI's `storage` asks for; a `pvc` (Kubernetes' `PersistentVolumeClaimSpec`) also
/// takes `volumeAttributesClassName`.
const STORAGE: [Field; 8] = [
    Field("accessModes", Ty::List(&Ty::Str)),
    Field(
        "dataSource",
        Ty::Struct(&[TYPED_REF[0], TYPED_REF[1], TYPED_REF[2]]),
    ),
    Field("dataSourceRef", Ty::Struct(&TYPED_REF)),
    Field(
        "resources",
        Ty::Struct(&[
            Field("limits", Ty::QuantityMap),
            Field("requests", Ty::QuantityMap),
        ]),
    ),
    Field("selector", Ty::Struct(LABEL_SELECTOR)),
    Field("storageClassName", Ty::Str),
    Field("volumeMode", Ty::Str),
    Field("volumeName", Ty::Str),
];

/// Where a CDI import reads from, and the secret and CA bundle it may use.
const IMPORT_URL: [Field; 3] = [
    Field("url", Ty::Str),
    Field("secretRef", Ty::Str),
    Field("certConfigMap", Ty::Str),
];

/// A namespaced name (a PVC or a snapshot to clone).
const NAMESPACED_NAME: Ty = Ty::Struct(&[Field("namespace", Ty::Str), Field("name", Ty::Str)]);

/// The spec of a VM's data volume template: CDI's `DataVolumeSpec`, as KubeVirt's schema holds it.
const DATA_VOLUME_SPEC: &[Field] = &[
    Field(
        "source",
        Ty::Struct(&[
            Field(
                "http",
                Ty::Struct(&[
                    IMPORT_URL[0],
                    IMPORT_URL[1],
                    IMPORT_URL[2],
                    Field("extraHeaders", Ty::List(&Ty::Str)),
                    Field("secretExtraHeaders", Ty::List(&Ty::Str)),
                ]),
            ),
            Field("s3", Ty::Struct(&IMPORT_URL)),
            Field("gcs", Ty::Struct(&[IMPORT_URL[0], IMPORT_URL[1]])),
            Field(
                "registry",
                Ty::Struct(&[
                    IMPORT_URL[0],
                    Field("imageStream", Ty::Str),
                    Field("pullMethod", Ty::Str),
                    IMPORT_URL[1],
                    IMPORT_URL[2],
                    Field("platform", Ty::Struct(&[Field("architecture", Ty::Str)])),
                ]),
            ),
            Field("pvc", NAMESPACED_NAME),
            Field("upload", EMPTY),
            Field("blank", EMPTY),
            Field(
                "imageio",
                Ty::Struct(&[
                    IMPORT_URL[0],
                    Field("diskId", Ty::Str),
                    IMPORT_URL[1],
                    IMPORT_URL[2],
                    Field("insecureSkipVerify", Ty::Bool),
                ]),
            ),
            Field(
                "vddk",
                Ty::Struct(&[
                    IMPORT_URL[0],
                    Field("uuid", Ty::Str),
                    Field("backingFile", Ty::Str),
                    Field("thumbprint", Ty::Str),
                    IMPORT_URL[1],
                    Field("initImageURL", Ty::Str),
                    Field("extraArgs", Ty::Str),
                ]),
            ),
            Field("snapshot", NAMESPACED_NAME),
        ]),
    ),
    Field(
        "sourceRef",
        Ty::Struct(&[TYPED_REF[1], TYPED_REF[3], TYPED_REF[2]]),
    ),
    Field(
        "pvc",
        Ty::Struct(&[
            STORAGE[0],
            STORAGE[1],
            STORAGE[2],
            STORAGE[3],
            STORAGE[4],
            STORAGE[5],
            STORAGE[6],
            STORAGE[7],
            Field("volumeAttributesClassName", Ty::Str),
        ]),
    ),
    Field("storage", Ty::Struct(&STORAGE)),
    Field("priorityClassName", Ty::Str),
    Field("contentType", Ty::Str),
    Field(
        "checkpoints",
        Ty::List(&Ty::Struct(&[
            Field("previous", Ty::Str),
            Field("current", Ty::Str),
        ])),
    ),
    Field("finalCheckpoint", Ty::Bool),
    Field("preallocation", Ty::Bool),
];

/// A node selector's terms and a label selector's expressions (`NodeSelectorRequirement`,
/// `LabelSelectorRequirement`): the same three fields.
const REQUIREMENTS_LIST: Ty = Ty::List(&Ty::Struct(&[
    Field("key", Ty::Str),
    Field("operator", Ty::Str),
    Field("values", Ty::List(&Ty::Str)),
]));

/// `NodeSelectorTerm`.
const NODE_SELECTOR_TERM: Ty = Ty::Struct(&[
    Field("matchExpressions", REQUIREMENTS_LIST),
    Field("matchFields", REQUIREMENTS_LIST),
]);

/// `PodAffinityTerm`.
const POD_AFFINITY_TERM: Ty = Ty::Struct(&[
    Field("labelSelector", Ty::Struct(LABEL_SELECTOR)),
    Field("namespaces", Ty::List(&Ty::Str)),
    Field("topologyKey", Ty::Str),
    Field("namespaceSelector", Ty::Struct(LABEL_SELECTOR)),
    Field("matchLabelKeys", Ty::List(&Ty::Str)),
    Field("mismatchLabelKeys", Ty::List(&Ty::Str)),
]);

/// `PodAffinity` and `PodAntiAffinity`: the same fields.
const POD_AFFINITY: Ty = Ty::Struct(&[
    Field(
        "requiredDuringSchedulingIgnoredDuringExecution",
        Ty::List(&POD_AFFINITY_TERM),
    ),
    Field(
        "preferredDuringSchedulingIgnoredDuringExecution",
        Ty::List(&Ty::Struct(&[
            Field("weight", Ty::Int32),
            Field("podAffinityTerm", POD_AFFINITY_TERM),
        ])),
    ),
]);

/// Kubernetes' `Affinity`.
const AFFINITY: &[Field] = &[
    Field(
        "nodeAffinity",
        Ty::Struct(&[
            Field(
                "requiredDuringSchedulingIgnoredDuringExecution",
                Ty::Struct(&[Field("nodeSelectorTerms", Ty::List(&NODE_SELECTOR_TERM))]),
            ),
            Field(
                "preferredDuringSchedulingIgnoredDuringExecution",
                Ty::List(&Ty::Struct(&[
                    Field("weight", Ty::Int32),
                    Field("preference", NODE_SELECTOR_TERM),
                ])),
            ),
        ]),
    ),
    Field("podAffinity", POD_AFFINITY),
    Field("podAntiAffinity", POD_AFFINITY),
];

/// A liveness or readiness probe: its handler inlined (Kubernetes' exec, HTTP and TCP actions,
/// or a ping of the guest agent) and its timings. A port is a number or a name.
const PROBE: &[Field] = &[
    Field("exec", Ty::Struct(&[Field("command", Ty::List(&Ty::Str))])),
    Field("guestAgentPing", EMPTY),
    Field(
        "httpGet",
        Ty::Struct(&[
            Field("path", Ty::Str),
            Field("port", Ty::IntOrString),
            Field("host", Ty::Str),
            Field("scheme", Ty::Str),
            Field(
                "httpHeaders",
                Ty::List(&Ty::Struct(&[
                    Field("name", Ty::Str),
                    Field("value", Ty::Str),
                ])),
            ),
        ]),
    ),
    Field(
        "tcpSocket",
        Ty::Struct(&[Field("port", Ty::IntOrString), Field("host", Ty::Str)]),
    ),
    Field("initialDelaySeconds", Ty::Int32),
    Field("timeoutSeconds", Ty::Int32),
    Field("periodSeconds", Ty::Int32),
    Field("successThreshold", Ty::Int32),
    Field("failureThreshold", Ty::Int32),
];

/// Where an access credential's secret is.
const CREDENTIAL_SOURCE: &[Field] = &[Field("secret", Ty::Struct(&[Field("secretName", Ty::Str)]))];

/// An access credential: SSH public keys or a user's password, and how they reach the guest.
const ACCESS_CREDENTIAL: &[Field] = &[
    Field(
        "sshPublicKey",
        Ty::Struct(&[
            Field("source", Ty::Struct(CREDENTIAL_SOURCE)),
            Field(
                "propagationMethod",
                Ty::Struct(&[
                    Field("configDrive", EMPTY),
                    Field("noCloud", EMPTY),
                    Field(
                        "qemuGuestAgent",
                        Ty::Struct(&[Field("users", Ty::List(&Ty::Str))]),
                    ),
                ]),
            ),
        ]),
    ),
    Field(
        "userPassword",
        Ty::Struct(&[
            Field("source", Ty::Struct(CREDENTIAL_SOURCE)),
            Field(
                "propagationMethod",
                Ty::Struct(&[Field("qemuGuestAgent", EMPTY)]),
            ),
        ]),
    ),
];

/// A network, its source inlined.
const NETWORK: &[Field] = &[
    Field("name", Ty::Str),
    Field(
        "pod",
        Ty::Struct(&[
            Field("vmNetworkCIDR", Ty::Str),
            Field("vmIPv6NetworkCIDR", Ty::Str),
        ]),
    ),
    Field(
        "multus",
        Ty::Struct(&[Field("networkName", Ty::Str), Field("default", Ty::Bool)]),
    ),
    Field("resourceClaim", Ty::Struct(&CLAIM_REQUEST)),
];

const DEVICES: &[Field] = &[
    Field("useVirtioTransitional", Ty::Bool),
    Field("disableHotplug", Ty::Bool),
    Field("disks", Ty::List(&Ty::Struct(DISK))),
    Field("watchdog", Ty::Struct(WATCHDOG)),
    Field("interfaces", Ty::List(&Ty::Struct(INTERFACE))),
    Field(
        "inputs",
        Ty::List(&Ty::Struct(&[
            Field("bus", Ty::Str),
            Field("type", Ty::Str),
            Field("name", Ty::Str),
        ])),
    ),
    Field("autoattachPodInterface", Ty::Bool),
    Field("autoattachGraphicsDevice", Ty::Bool),
    Field("autoattachSerialConsole", Ty::Bool),
    Field("logSerialConsole", Ty::Bool),
    Field("autoattachMemBalloon", Ty::Bool),
    Field("autoattachInputDevice", Ty::Bool),
    Field("autoattachVSOCK", Ty::Bool),
    Field("rng", EMPTY),
    Field("blockMultiQueue", Ty::Bool),
    Field("networkInterfaceMultiqueue", Ty::Bool),
    Field("gpus", GPUS),
    Field("downwardMetrics", EMPTY),
    Field(
        "panicDevices",
        Ty::List(&Ty::Struct(&[Field("model", Ty::Str)])),
    ),
    Field(
        "filesystems",
        Ty::List(&Ty::Struct(&[
            Field("name", Ty::Str),
            Field("virtiofs", EMPTY),
        ])),
    ),
    Field("hostDevices", HOST_DEVICES),
    Field("clientPassthrough", EMPTY),
    Field(
        "sound",
        Ty::Struct(&[Field("name", Ty::Str), Field("model", Ty::Str)]),
    ),
    Field("tpm", Ty::Struct(TPM)),
    Field("video", Ty::Struct(&[Field("type", Ty::Str)])),
];

const MACHINE: &[Field] = &[Field("type", Ty::Str)];

/// `enabled`, alone (`FeatureState`) or inlined first in a larger feature.
const FEATURE_STATE: &[Field] = &[Field("enabled", Ty::Bool)];

const FIRMWARE: &[Field] = &[
    Field("uuid", Ty::Str),
    Field(
        "bootloader",
        Ty::Struct(&[
            Field("bios", Ty::Struct(&[Field("useSerial", Ty::Bool)])),
            Field("efi", Ty::Struct(EFI)),
        ]),
    ),
    Field("serial", Ty::Str),
    Field(
        "kernelBoot",
        Ty::Struct(&[
            Field("kernelArgs", Ty::Str),
            Field(
                "container",
                Ty::Struct(&[
                    Field("image", Ty::Str),
                    Field("imagePullSecret", Ty::Str),
                    Field("imagePullPolicy", Ty::Str),
                    Field("kernelPath", Ty::Str),
                    Field("initrdPath", Ty::Str),
                ]),
            ),
        ]),
    ),
    Field(
        "acpi",
        Ty::Struct(&[Field("slicNameRef", Ty::Str), Field("msdmNameRef", Ty::Str)]),
    ),
];

/// A timer: whether it is `present`, and the tick policy of those that have one.
const TIMER: &[Field] = &[Field("present", Ty::Bool), Field("tickPolicy", Ty::Str)];

/// The timers of a clock (`Timer`).
const TIMERS: &[Field] = &[
    Field("hpet", Ty::Struct(TIMER)),
    Field("kvm", Ty::Struct(&[Field("present", Ty::Bool)])),
    Field("pit", Ty::Struct(TIMER)),
    Field(
        "rtc",
        Ty::Struct(&[
            Field("present", Ty::Bool),
            Field("tickPolicy", Ty::Str),
            Field("track", Ty::Str),
        ]),
    ),
    Field("hyperv", Ty::Struct(&[Field("present", Ty::Bool)])),
];

/// A clock's offset (`ClockOffset`): `utc` or `timezone`.
const CLOCK_OFFSET: &[Field] = &[
    Field("utc", Ty::Struct(&[Field("offsetSeconds", Ty::Int)])),
    Field("timezone", Ty::Str),
];

/// A clock: its offset (inlined) and its timers.
const CLOCK: &[Field] = &[
    CLOCK_OFFSET[0],
    CLOCK_OFFSET[1],
    Field("timer", Ty::Struct(TIMERS)),
];

/// A Hyper-V feature with a `direct` mode besides its state (`synictimer`).
const FEATURE_WITH_DIRECT: &[Field] = &[
    Field("enabled", Ty::Bool),
    Field("direct", Ty::Struct(FEATURE_STATE)),
];

const HYPERV: &[Field] = &[
    Field("relaxed", Ty::Struct(FEATURE_STATE)),
    Field("vapic", Ty::Struct(FEATURE_STATE)),
    Field(
        "spinlocks",
        Ty::Struct(&[Field("enabled", Ty::Bool), Field("spinlocks", Ty::Uint32)]),
    ),
    Field("vpindex", Ty::Struct(FEATURE_STATE)),
    Field("runtime", Ty::Struct(FEATURE_STATE)),
    Field("synic", Ty::Struct(FEATURE_STATE)),
    Field("synictimer", Ty::Struct(FEATURE_WITH_DIRECT)),
    Field("reset", Ty::Struct(FEATURE_STATE)),
    Field(
        "vendorid",
        Ty::Struct(&[Field("enabled", Ty::Bool), Field("vendorid", Ty::Str)]),
    ),
    Field("frequencies", Ty::Struct(FEATURE_STATE)),
    Field("reenlightenment", Ty::Struct(FEATURE_STATE)),
    Field(
        "tlbflush",
        Ty::Struct(&[
            Field("enabled", Ty::Bool),
            Field("direct", Ty::Struct(FEATURE_STATE)),
            Field("extended", Ty::Struct(FEATURE_STATE)),
        ]),
    ),
    Field("ipi", Ty::Struct(FEATURE_STATE)),
    Field("evmcs", Ty::Struct(FEATURE_STATE)),
];

const APIC: &[Field] = &[
    Field("enabled", Ty::Bool),
    Field("endOfInterrupt", Ty::Bool),
];
const KVM: &[Field] = &[Field("hidden", Ty::Bool)];

const FEATURES: &[Field] = &[
    Field("acpi", Ty::Struct(FEATURE_STATE)),
    Field("apic", Ty::Struct(APIC)),
    Field("hypervPassthrough", Ty::Struct(FEATURE_STATE)),
    Field("hyperv", Ty::Struct(HYPERV)),
    Field("smm", Ty::Struct(FEATURE_STATE)),
    Field("kvm", Ty::Struct(KVM)),
    Field("pvspinlock", Ty::Struct(FEATURE_STATE)),
];

const EFI: &[Field] = &[Field("secureBoot", Ty::Bool), Field("persistent", Ty::Bool)];
const TPM: &[Field] = &[Field("enabled", Ty::Bool), Field("persistent", Ty::Bool)];

/// The action of a watchdog device (`i6300esb`, `diag288`).
const WATCHDOG_DEVICE: &[Field] = &[Field("action", Ty::Str)];

const WATCHDOG: &[Field] = &[
    Field("name", Ty::Str),
    Field("i6300esb", Ty::Struct(WATCHDOG_DEVICE)),
    Field("diag288", Ty::Struct(WATCHDOG_DEVICE)),
];

const CHASSIS: &[Field] = &[
    Field("manufacturer", Ty::Str),
    Field("version", Ty::Str),
    Field("serial", Ty::Str),
    Field("asset", Ty::Str),
    Field("sku", Ty::Str),
];

const DOMAIN: &[Field] = &[
    Field("resources", Ty::Struct(RESOURCES)),
    Field("cpu", Ty::Struct(VM_CPU)),
    Field("memory", Ty::Struct(VM_MEMORY)),
    Field("machine", Ty::Struct(MACHINE)),
    Field("firmware", Ty::Struct(FIRMWARE)),
    Field("clock", Ty::Preserving(CLOCK)),
    Field("features", Ty::Struct(FEATURES)),
    Field("devices", Ty::Struct(DEVICES)),
    Field("ioThreadsPolicy", Ty::Str),
    Field("ioThreads", Ty::Struct(IO_THREADS)),
    Field("chassis", Ty::Struct(CHASSIS)),
    Field("launchSecurity", LAUNCH_SECURITY),
    Field("rebootPolicy", Ty::Str),
];

const VMI_SPEC: &[Field] = &[
    Field("priorityClassName", Ty::Str),
    Field("domain", Ty::Struct(DOMAIN)),
    Field("nodeSelector", Ty::StrMap),
    Field("affinity", Ty::Struct(AFFINITY)),
    Field("schedulerName", Ty::Str),
    Field("serviceAccountName", Ty::Str),
    Field(
        "tolerations",
        Ty::List(&Ty::Struct(&[
            Field("key", Ty::Str),
            Field("operator", Ty::Str),
            Field("value", Ty::Str),
            Field("effect", Ty::Str),
            Field("tolerationSeconds", Ty::Int),
        ])),
    ),
    Field(
        "topologySpreadConstraints",
        Ty::List(&Ty::Struct(&[
            Field("maxSkew", Ty::Int32),
            Field("topologyKey", Ty::Str),
            Field("whenUnsatisfiable", Ty::Str),
            Field("labelSelector", Ty::Struct(LABEL_SELECTOR)),
            Field("minDomains", Ty::Int32),
            Field("nodeAffinityPolicy", Ty::Str),
            Field("nodeTaintsPolicy", Ty::Str),
            Field("matchLabelKeys", Ty::List(&Ty::Str)),
        ])),
    ),
    Field("evictionStrategy", Ty::Str),
    Field("startStrategy", Ty::Str),
    Field("terminationGracePeriodSeconds", Ty::Int),
    Field("volumes", Ty::List(&Ty::Struct(VOLUME))),
    Field("livenessProbe", Ty::Struct(PROBE)),
    Field("readinessProbe", Ty::Struct(PROBE)),
    Field("hostname", Ty::Str),
    Field("subdomain", Ty::Str),
    Field("networks", Ty::List(&Ty::Struct(NETWORK))),
    Field("dnsPolicy", Ty::Str),
    Field(
        "dnsConfig",
        Ty::Struct(&[
            Field("nameservers", Ty::List(&Ty::Str)),
            Field("searches", Ty::List(&Ty::Str)),
            Field(
                "options",
                Ty::List(&Ty::Struct(&[
                    Field("name", Ty::Str),
                    Field("value", Ty::Str),
                ])),
            ),
        ]),
    ),
    Field(
        "accessCredentials",
        Ty::List(&Ty::Struct(ACCESS_CREDENTIAL)),
    ),
    Field("architecture", Ty::Str),
    Field(
        "resourceClaims",
        Ty::List(&Ty::Struct(&[
            Field("name", Ty::Str),
            Field("resourceClaimName", Ty::Str),
            Field("resourceClaimTemplateName", Ty::Str),
        ])),
    ),
    Field(
        "utilityVolumes",
        Ty::List(&Ty::Struct(&[
            Field("name", Ty::Str),
            CLAIM[0],
            CLAIM[1],
            Field("type", Ty::Str),
        ])),
    ),
];

/// Go's `ObjectMeta`, every field of it: the API server refuses a wrongly typed one (a label
/// value `yes` read as a boolean) and prunes one it does not know (`lables`).
pub const OBJECT_META: &[Field] = &[
    Field("name", Ty::Str),
    Field("generateName", Ty::Str),
    Field("namespace", Ty::Str),
    Field("selfLink", Ty::Str),
    Field("uid", Ty::Str),
    Field("resourceVersion", Ty::Str),
    Field("generation", Ty::Int),
    Field("creationTimestamp", Ty::Time),
    Field("deletionTimestamp", Ty::Time),
    Field("deletionGracePeriodSeconds", Ty::Int),
    Field("labels", Ty::StrMap),
    Field("annotations", Ty::StrMap),
    Field(
        "ownerReferences",
        Ty::List(&Ty::Struct(&[
            Field("apiVersion", Ty::Str),
            Field("kind", Ty::Str),
            Field("name", Ty::Str),
            Field("uid", Ty::Str),
            Field("controller", Ty::Bool),
            Field("blockOwnerDeletion", Ty::Bool),
        ])),
    ),
    Field("finalizers", Ty::List(&Ty::Str)),
    Field("managedFields", Ty::List(&Ty::OpaqueMap)),
];

/// A VM's template. The CRD keeps unknown fields of its `metadata` and does not type them;
/// KubeVirt's webhook, decoding the VM, refuses a wrong type there.
const TEMPLATE: &[Field] = &[
    Field("metadata", Ty::Preserving(OBJECT_META)),
    Field("spec", Ty::Struct(VMI_SPEC)),
];

const MATCHER: &[Field] = &[
    Field("name", Ty::Str),
    Field("kind", Ty::Str),
    Field("revisionName", Ty::Str),
    Field("inferFromVolume", Ty::Str),
    Field("inferFromVolumeFailurePolicy", Ty::Str),
];

const VM_SPEC: &[Field] = &[
    Field("running", Ty::Bool),
    Field("runStrategy", Ty::Str),
    Field("instancetype", Ty::Struct(MATCHER)),
    Field("preference", Ty::Struct(MATCHER)),
    Field("template", Ty::Struct(TEMPLATE)),
    Field(
        "dataVolumeTemplates",
        Ty::List(&Ty::Struct(&[
            Field("apiVersion", Ty::Str),
            Field("kind", Ty::Str),
            Field("metadata", Ty::Preserving(OBJECT_META)),
            Field("spec", Ty::Struct(DATA_VOLUME_SPEC)),
            Field("status", EMPTY),
        ])),
    ),
    Field("updateVolumesStrategy", Ty::Str),
];

/// A whole instancetype or cluster instancetype.
pub const INSTANCETYPE: Ty = Ty::Struct(&[
    Field("apiVersion", Ty::Str),
    Field("kind", Ty::Str),
    Field("metadata", Ty::Struct(OBJECT_META)),
    Field("spec", Ty::Struct(INSTANCETYPE_SPEC)),
]);

/// A whole preference or cluster preference.
pub const PREFERENCE: Ty = Ty::Struct(&[
    Field("apiVersion", Ty::Str),
    Field("kind", Ty::Str),
    Field("metadata", Ty::Struct(OBJECT_META)),
    Field("spec", Ty::Struct(PREFERENCE_SPEC)),
]);

/// A whole VirtualMachine.
pub const VIRTUAL_MACHINE: Ty = Ty::Struct(&[
    Field("apiVersion", Ty::Str),
    Field("kind", Ty::Str),
    Field("metadata", Ty::Struct(OBJECT_META)),
    Field("spec", Ty::Struct(VM_SPEC)),
    Field("status", Ty::Opaque),
]);

/// A whole VirtualMachineInstance: its spec is a VM template's.
pub const VIRTUAL_MACHINE_INSTANCE: Ty = Ty::Struct(&[
    Field("apiVersion", Ty::Str),
    Field("kind", Ty::Str),
    Field("metadata", Ty::Struct(OBJECT_META)),
    Field("spec", Ty::Struct(VMI_SPEC)),
    Field("status", Ty::Opaque),
]);

/// A whole VirtualMachineInstancePreset: a label selector and a VMI's `domain`.
pub const PRESET: Ty = Ty::Struct(&[
    Field("apiVersion", Ty::Str),
    Field("kind", Ty::Str),
    Field("metadata", Ty::Struct(OBJECT_META)),
    Field(
        "spec",
        Ty::Struct(&[
            Field("selector", Ty::Struct(LABEL_SELECTOR)),
            Field("domain", Ty::Struct(DOMAIN)),
        ]),
    ),
]);

/// A whole VirtualMachineInstanceReplicaSet: a VMI's `spec` and `metadata` as a template and a
/// selector of its VMIs.
pub const VIRTUAL_MACHINE_INSTANCE_REPLICA_SET: Ty = Ty::Struct(&[
    Field("apiVersion", Ty::Str),
    Field("kind", Ty::Str),
    Field("metadata", Ty::Struct(OBJECT_META)),
    Field(
        "spec",
        Ty::Struct(&[
            Field("replicas", Ty::Int32),
            Field("selector", Ty::Struct(LABEL_SELECTOR)),
            Field(
                "template",
                Ty::Struct(&[
                    Field("metadata", Ty::Preserving(OBJECT_META)),
                    Field("spec", Ty::Struct(VMI_SPEC)),
                ]),
            ),
            Field("paused", Ty::Bool),
        ]),
    ),
    Field("status", Ty::Opaque),
]);

/// A whole VirtualMachinePool (`pool.kubevirt.io`): a VM's `spec` and `metadata` as a template,
/// a selector of its VMs and how the pool replaces, updates and removes them.
pub const VIRTUAL_MACHINE_POOL: Ty = Ty::Struct(&[
    Field("apiVersion", Ty::Str),
    Field("kind", Ty::Str),
    Field("metadata", Ty::Struct(OBJECT_META)),
    Field("spec", Ty::Struct(POOL_SPEC)),
    Field("status", Ty::Opaque),
]);

const POOL_SPEC: &[Field] = &[
    Field("replicas", Ty::Int32),
    Field("selector", Ty::Struct(LABEL_SELECTOR)),
    Field(
        "virtualMachineTemplate",
        Ty::Struct(&[
            Field("metadata", Ty::Preserving(OBJECT_META)),
            Field("spec", Ty::Struct(VM_SPEC)),
        ]),
    ),
    Field("paused", Ty::Bool),
    Field(
        "nameGeneration",
        Ty::Struct(&[
            Field("appendIndexToConfigMapRefs", Ty::Bool),
            Field("appendIndexToSecretRefs", Ty::Bool),
        ]),
    ),
    Field("maxUnavailable", Ty::IntOrString),
    Field(
        "scaleInStrategy",
        Ty::Struct(&[
            Field("unmanaged", EMPTY),
            Field(
                "opportunistic",
                Ty::Struct(&[Field("statePreservation", Ty::Str)]),
            ),
            Field(
                "proactive",
                Ty::Struct(&[
                    Field("selectionPolicy", Ty::Struct(POOL_SELECTION_POLICY)),
                    Field("statePreservation", Ty::Str),
                ]),
            ),
        ]),
    ),
    Field(
        "updateStrategy",
        Ty::Struct(&[
            Field("unmanaged", EMPTY),
            Field("opportunistic", EMPTY),
            Field(
                "proactive",
                Ty::Struct(&[Field("selectionPolicy", Ty::Struct(POOL_SELECTION_POLICY))]),
            ),
        ]),
    ),
    Field(
        "autohealing",
        Ty::Struct(&[
            Field("minFailingToStartDuration", Ty::Str),
            Field("startUpFailureThreshold", Ty::Uint32),
        ]),
    ),
];

/// Which of a pool's VMs go first when it scales in or updates.
const POOL_SELECTION_POLICY: &[Field] = &[
    Field("sortPolicy", Ty::Str),
    Field(
        "selectors",
        Ty::Struct(&[
            Field("labelSelector", Ty::Struct(LABEL_SELECTOR)),
            Field(
                "nodeSelectorRequirementMatcher",
                Ty::List(&Ty::Struct(&[
                    Field("key", Ty::Str),
                    Field("operator", Ty::Str),
                    Field("values", Ty::List(&Ty::Str)),
                ])),
            ),
        ]),
    ),
];

/// A Kubernetes label selector (`metav1.LabelSelector`).
const LABEL_SELECTOR: &[Field] = &[
    Field("matchLabels", Ty::StrMap),
    Field("matchExpressions", REQUIREMENTS_LIST),
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Each integer type takes what its Go type decodes, and the API server nothing beyond a
    /// 64-bit signed integer.
    #[test]
    fn integers_fit_their_go_types() {
        let fits = |v: Value, ty| integer_fits(&v, ty);
        assert_eq!(fits(json!(2_147_483_647), Ty::Int32), Some(true));
        assert_eq!(fits(json!(2_147_483_648_u64), Ty::Int32), Some(false));
        assert_eq!(fits(json!(-2_147_483_649_i64), Ty::Int32), Some(false));
        assert_eq!(fits(json!(4_294_967_296_u64), Ty::Uint), Some(true));
        assert_eq!(fits(json!(-1), Ty::Uint), Some(false));
        assert_eq!(fits(json!(4_294_967_296_u64), Ty::Uint32), Some(false));
        assert_eq!(fits(json!(i64::MIN), Ty::Int), Some(true));
        // Past 2^63 the API server refuses it, whatever the Go type.
        assert_eq!(fits(json!(1_u64 << 63), Ty::Uint), Some(false));
        assert_eq!(fits(json!(1.5), Ty::Int), None);
        assert_eq!(fits(json!("1"), Ty::Int), None);
        assert_eq!(fits(json!(1), Ty::Str), None);
    }

    #[test]
    fn whole_numbers_beyond_2_to_the_53_are_found_in_integer_fields_only() {
        assert!(!beyond_float(&json!(9_007_199_254_740_991_u64)));
        assert!(beyond_float(&json!(9_007_199_254_740_992_u64)));
        assert!(!beyond_float(&json!(-9_007_199_254_740_991_i64)));
        assert!(beyond_float(&json!(-9_007_199_254_740_992_i64)));
        let spec = json!({
            "terminationGracePeriodSeconds": 9_007_199_254_740_993_u64,
            "domain": {"devices": {"disks": [{"name": "d", "bootOrder": 1_u64 << 60}]},
                "resources": {"requests": {"memory": 9_007_199_254_740_993_u64}}},
            "readinessProbe": {"periodSeconds": 9_007_199_254_740_993_u64}});
        let mut out = Vec::new();
        check(&spec, VMI_SPEC_TY, "spec", &mut out);
        let got: Vec<(&str, bool)> = out
            .iter()
            .map(|p| match p {
                Problem::BeyondFloat { path, .. } => (path.as_str(), true),
                Problem::WrongType { path, .. }
                | Problem::NullItem { path, .. }
                | Problem::Unknown { key: path, .. } => (path.as_str(), false),
            })
            .collect();
        // A quantity may be any number; an `int32` this large is out of its range first.
        assert_eq!(
            got,
            [
                ("spec.terminationGracePeriodSeconds", true),
                ("spec.domain.devices.disks[0].bootOrder", true),
                ("spec.readinessProbe.periodSeconds", false),
            ]
        );
    }

    #[test]
    fn a_whole_number_out_of_range_is_shown_as_it_is() {
        assert_eq!(found_instead(&json!(-2), Ty::Uint32), "-2");
        assert_eq!(
            found_instead(&json!(4_294_967_296_u64), Ty::Uint32),
            "4294967296"
        );
        assert_eq!(found_instead(&json!(1.5), Ty::Uint32), "a decimal number");
        assert_eq!(
            found_instead(&json!(1e308), Ty::Int),
            "a whole number too large for 64 bits"
        );
        assert_eq!(found_instead(&json!(30.0), Ty::Int), "a decimal number");
        assert_eq!(found_instead(&json!("2"), Ty::Uint32), "a string");
    }

    #[test]
    fn instancetype_spelling_in_a_vm_cpu_is_unknown_with_a_suggestion() {
        let vm = json!({"spec": {"template": {"spec": {"domain": {
            "cpu": {"dedicatedCPUPlacement": true}}}}}});
        let mut out = Vec::new();
        check(&vm, VIRTUAL_MACHINE, "", &mut out);
        assert_eq!(
            out,
            vec![Problem::Unknown {
                parent: "spec.template.spec.domain.cpu".into(),
                key: "dedicatedCPUPlacement".into(),
                suggestion: Some("dedicatedCpuPlacement"),
                misplaced: None,
                kept: false,
            }]
        );
    }

    #[test]
    fn a_disk_is_read_only_in_lower_case() {
        // `readOnly`, as a Kubernetes volume mount spells it, is not a disk target's field.
        let vm = json!({"spec": {"template": {"spec": {"domain": {"devices": {"disks": [
            {"name": "a", "disk": {"bus": "virtio", "readonly": true}},
            {"name": "b", "cdrom": {"readOnly": true}, "bootorder": 1}]}}}}}});
        let mut out = Vec::new();
        check(&vm, VIRTUAL_MACHINE, "", &mut out);
        assert_eq!(
            out,
            vec![
                Problem::Unknown {
                    parent: "spec.template.spec.domain.devices.disks[1].cdrom".into(),
                    key: "readOnly".into(),
                    suggestion: Some("readonly"),
                    misplaced: None,
                    kept: false,
                },
                Problem::Unknown {
                    parent: "spec.template.spec.domain.devices.disks[1]".into(),
                    key: "bootorder".into(),
                    suggestion: Some("bootOrder"),
                    misplaced: None,
                    kept: false,
                },
            ]
        );
    }

    #[test]
    fn a_mis_indented_field_is_placed_where_it_is_known() {
        // `name` one level too shallow, beside an empty `preference`; `volumes` one level too
        // deep, inside `domain`; `name` beside a `preference` that has one is just unknown.
        let vm = json!({"spec": {"preference": null, "name": "fedora",
            "template": {"spec": {"domain": {"volumes": []}}}}});
        let mut out = Vec::new();
        check(&vm, VIRTUAL_MACHINE, "", &mut out);
        let placed: Vec<(String, Option<Misplaced>)> = out
            .into_iter()
            .filter_map(|p| match p {
                Problem::Unknown { key, misplaced, .. } => Some((key, misplaced)),
                Problem::WrongType { .. }
                | Problem::BeyondFloat { .. }
                | Problem::NullItem { .. } => None,
            })
            .collect();
        assert_eq!(
            placed,
            [
                (
                    "name".to_string(),
                    Some(Misplaced::Under("spec.preference".into()))
                ),
                (
                    "volumes".to_string(),
                    Some(Misplaced::Above("spec.template.spec".into()))
                ),
            ]
        );
        // `volumes` one level too shallow, beside the template's `spec` that has other fields.
        let vm = json!({"spec": {"template": {"spec": {"domain": {}}, "volumes": []}}});
        let mut out = Vec::new();
        check(&vm, VIRTUAL_MACHINE, "", &mut out);
        assert!(
            matches!(
                &out[..],
                [Problem::Unknown { key, misplaced: Some(Misplaced::Within(sibling)), .. }]
                    if key == "volumes" && sibling == "spec.template.spec"
            ),
            "{out:?}"
        );
        let vm = json!({"spec": {"preference": {"name": "a"}, "name": "b"}});
        let mut out = Vec::new();
        check(&vm, VIRTUAL_MACHINE, "", &mut out);
        assert!(
            matches!(
                &out[..],
                [Problem::Unknown {
                    misplaced: None,
                    kept: false,
                    ..
                }]
            ),
            "{out:?}"
        );
    }

    #[test]
    fn features_firmware_clock_and_devices_are_typed() {
        // What presets copy into VMIs and preferences fill in: their names and types are
        // known down to the leaves.
        let vm = json!({"spec": {"template": {"spec": {"domain": {
            "features": {"hyperV": {}, "hyperv": {"spinlocks": {"spinlocks": "8191"},
                "synictimer": {"direct": {"enabled": true}}}},
            "firmware": {"serial": 7, "bootloader": {"efi": {"secureBoot": false}}},
            "clock": {"utc": {"offsetSeconds": 60}, "timer": {"rtc": {"track": "guest",
                "present": "yes"}}},
            "devices": {"watchdog": {"name": "w", "i6300ESB": {}}, "rng": {"x": 1},
                "tpm": {"persistent": true}}}}}}});
        let mut out = Vec::new();
        check(&vm, VIRTUAL_MACHINE, "", &mut out);
        let got: Vec<String> = out
            .iter()
            .map(|p| match p {
                Problem::Unknown {
                    parent,
                    key,
                    suggestion,
                    ..
                } => format!("unknown {parent}.{key} {suggestion:?}"),
                Problem::WrongType { path, .. }
                | Problem::BeyondFloat { path, .. }
                | Problem::NullItem { path, .. } => {
                    format!("wrong {path}")
                }
            })
            .collect();
        let domain = "spec.template.spec.domain";
        assert_eq!(
            got,
            [
                format!("unknown {domain}.features.hyperV Some(\"hyperv\")"),
                format!("wrong {domain}.features.hyperv.spinlocks.spinlocks"),
                format!("wrong {domain}.firmware.serial"),
                format!("wrong {domain}.clock.timer.rtc.present"),
                format!("unknown {domain}.devices.watchdog.i6300ESB Some(\"i6300esb\")"),
                format!("unknown {domain}.devices.rng.x None"),
            ]
        );
        let preference = json!({"features": {"preferredHyperv": {"relaxed": {"enabled": 1}}},
            "clock": {"preferredTimer": {"hpet": {"present": false}}},
            "firmware": {"preferredEfi": {"secureboot": true}}});
        let mut out = Vec::new();
        check(&preference, Ty::Struct(PREFERENCE_SPEC), "spec", &mut out);
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(matches!(&out[0], Problem::WrongType { path, .. }
            if path == "spec.features.preferredHyperv.relaxed.enabled"));
        assert!(
            matches!(&out[1], Problem::Unknown { key, suggestion: Some("secureBoot"), .. }
            if key == "secureboot")
        );
    }

    #[test]
    fn a_misspelt_field_is_unknown_with_the_nearest_known_one() {
        let vm = json!({"spec": {"template": {"spec": {"domain": {
            "cpuu": {"cores": 2}, "devicez": {}, "xyz": 1}}}}});
        let mut out = Vec::new();
        check(&vm, VIRTUAL_MACHINE, "", &mut out);
        let suggestions: Vec<(String, Option<&str>)> = out
            .into_iter()
            .filter_map(|p| match p {
                Problem::Unknown {
                    key, suggestion, ..
                } => Some((key, suggestion)),
                Problem::WrongType { .. }
                | Problem::BeyondFloat { .. }
                | Problem::NullItem { .. } => None,
            })
            .collect();
        assert_eq!(
            suggestions,
            [
                ("cpuu".to_string(), Some("cpu")),
                ("devicez".to_string(), Some("devices")),
                ("xyz".to_string(), None),
            ]
        );
    }

    #[test]
    fn null_values_in_maps_are_the_zero_value_not_a_wrong_type() {
        let vm = json!({"spec": {"template": {"spec": {
            "nodeSelector": {"zone": null},
            "domain": {"resources": {"requests": {"memory": null}, "limits": {"cpu": 2}}}}}}});
        let mut out = Vec::new();
        check(&vm, VIRTUAL_MACHINE, "", &mut out);
        assert_eq!(out, vec![]);
        let vm = json!({"spec": {"template": {"spec": {
            "domain": {"resources": {"requests": {"memory": [1]}}}}}}});
        check(&vm, VIRTUAL_MACHINE, "", &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
    }

    #[test]
    fn wrong_types_are_reported_with_their_path() {
        let it = json!({"spec": {"cpu": {"guest": "2"}, "memory": {"guest": true},
                                 "gpus": [{"name": "a"}, "b"]}});
        let mut out = Vec::new();
        check(&it, INSTANCETYPE, "", &mut out);
        let paths: Vec<String> = out
            .iter()
            .map(|p| match p {
                Problem::WrongType { path, .. }
                | Problem::BeyondFloat { path, .. }
                | Problem::NullItem { path, .. } => path.clone(),
                Problem::Unknown { key, .. } => key.clone(),
            })
            .collect();
        assert_eq!(
            paths,
            ["spec.cpu.guest", "spec.memory.guest", "spec.gpus[1]"]
        );
    }

    #[test]
    fn strings_that_are_not_quantities_are_wrong_types_quoted() {
        let vm = json!({"spec": {"template": {"spec": {"domain": {
            "memory": {"guest": "16GB"},
            "resources": {"requests": {"memory": "2 Gi", "cpu": "500m"}, "limits": {"memory": 2e9}}}}}}});
        let mut out = Vec::new();
        check(&vm, VIRTUAL_MACHINE, "", &mut out);
        let found: Vec<(String, String)> = out
            .iter()
            .map(|p| match p {
                Problem::WrongType { path, found, .. } => (path.clone(), found.to_string()),
                Problem::BeyondFloat { path, found } => (path.clone(), found.clone()),
                Problem::NullItem { path, .. } => (path.clone(), "null".to_string()),
                Problem::Unknown { key, .. } => (key.clone(), String::new()),
            })
            .collect();
        assert_eq!(
            found,
            [
                (
                    "spec.template.spec.domain.memory.guest".to_string(),
                    "\"16GB\"".to_string()
                ),
                (
                    "spec.template.spec.domain.resources.requests.memory".to_string(),
                    "\"2 Gi\"".to_string()
                ),
            ]
        );
        let long = "x".repeat(100);
        assert_eq!(
            found_instead(&json!(long), Ty::Quantity),
            format!("\"{}\"...", "x".repeat(40))
        );
        assert!(go_reads_quantity(&json!(1.5)) && go_reads_quantity(&json!("Gi")));
        assert!(!go_reads_quantity(&json!("16GB")));
        assert!(is_quantity(&json!(2e9)) && is_quantity(&json!(3)));
        assert!(!is_quantity(&json!(1.5)) && !is_quantity(&json!(0.5)));
        assert_eq!(found_instead(&json!(1.5), Ty::Quantity), "a decimal number");
        for good in [
            "2Gi", "512M", "1.5", "2e9", "100m", "0", ".5", "5.", "+1", "-0", "1E-3", "3Ei",
        ] {
            assert!(is_quantity(&json!(good)), "{good}");
        }
        // `Gi`, `e3` and `.` read as zero in Go, but the schema's pattern refuses them;
        // `1e1.5` fits the pattern, but Go cannot read it.
        for bad in [
            "16GB", "2 Gi", "", "Gi", "1.2.3", "lots", "e3", ".", "M", "1e", "1e1.5", "1Ki2", "- 1",
        ] {
            assert!(!is_quantity(&json!(bad)), "{bad}");
        }
    }

    #[test]
    fn paths_start_at_the_given_root() {
        const ITEM: Ty = Ty::Struct(&[Field("a", EMPTY)]);
        let list = json!([{"a": {"x": 1}}, {"a": 2}]);
        for (root, parent, path) in [("", "[0].a", "[1].a"), ("r", "r[0].a", "r[1].a")] {
            let mut out = Vec::new();
            check(&list, Ty::List(&ITEM), root, &mut out);
            assert_eq!(
                out,
                vec![
                    Problem::Unknown {
                        parent: parent.into(),
                        key: "x".into(),
                        suggestion: None,
                        misplaced: None,
                        kept: false,
                    },
                    Problem::WrongType {
                        path: path.into(),
                        expected: "a mapping",
                        found: "an integer".into(),
                        out_of_range: false,
                    },
                ]
            );
        }
    }

    /// The paths of the unknown keys `check` finds in `v`, each with whether it is kept, and
    /// the paths of the wrongly typed values.
    fn problems(v: &Value, ty: Ty) -> (Vec<(String, bool)>, Vec<String>) {
        let mut out = Vec::new();
        check(v, ty, "", &mut out);
        let (mut unknown, mut wrong) = (Vec::new(), Vec::new());
        for p in out {
            match p {
                Problem::Unknown {
                    parent, key, kept, ..
                } => unknown.push((format!("{parent}.{key}"), kept)),
                Problem::WrongType { path, .. }
                | Problem::BeyondFloat { path, .. }
                | Problem::NullItem { path, .. } => {
                    wrong.push(path);
                }
            }
        }
        (unknown, wrong)
    }

    /// Where KubeVirt's CRD keeps unknown fields (a template's and a DataVolume template's
    /// `metadata`, the clock), an unknown key is kept; one level deeper, in a typed mapping, it
    /// is not.
    #[test]
    fn preserving_mappings_keep_unknown_fields() {
        let vm = json!({"metadata": {"lables": {}},
            "spec": {"template": {"metadata": {"lables": {}},
                "spec": {"domain": {"clock": {"utcc": {}, "timer": {"hpet": {"presnt": true}}}}}},
            "dataVolumeTemplates": [{"metadata": {"lables": {}, "labels": {"a": 1}}}]}});
        let (unknown, wrong) = problems(&vm, VIRTUAL_MACHINE);
        assert_eq!(
            unknown,
            [
                ("metadata.lables".to_string(), false),
                ("spec.template.metadata.lables".to_string(), true),
                ("spec.template.spec.domain.clock.utcc".to_string(), true),
                (
                    "spec.template.spec.domain.clock.timer.hpet.presnt".to_string(),
                    false
                ),
                (
                    "spec.dataVolumeTemplates[0].metadata.lables".to_string(),
                    true
                ),
            ]
        );
        // The types are still checked: KubeVirt's webhook decodes them.
        assert_eq!(wrong, ["spec.dataVolumeTemplates[0].metadata.labels.a"]);
    }

    /// Volume sources, affinity, DataVolume templates, launch security and block sizes are
    /// typed as KubeVirt's CRD types them.
    #[test]
    fn the_parts_users_write_by_hand_are_typed_throughout() {
        let vm = json!({"spec": {
            "dataVolumeTemplates": [{"spec": {
                "source": {"http": {"url": 5}, "registry": {"uri": "docker://x"}},
                "storage": {"resources": {"requests": {"storage": "10GB"}}}}}],
            "template": {"spec": {
                "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [
                        {"key": "k", "operator": "In", "value": ["a"]}]}]}}},
                "domain": {"devices": {"disks": [{"name": "d", "blockSize": {
                    "custom": {"logical": "512"}}}]},
                    "launchSecurity": {"sev": {"policy": {"encryptedState": "yes"}}}},
                "volumes": [
                    {"name": "a", "containerDisk": {"img": "quay.io/x"}},
                    {"name": "b", "cloudInitNoCloud": {"userDataSecretRef": {"name": "s"}}},
                    {"name": "c", "emptyDisk": {"capacity": "lots"}},
                    {"name": "d", "persistentVolumeClaim": {"claimName": "c", "readOnly": "no"}}]}}}});
        let (unknown, wrong) = problems(&vm, VIRTUAL_MACHINE);
        let unknown: Vec<&str> = unknown.iter().map(|(path, _)| path.as_str()).collect();
        assert_eq!(
            unknown,
            [
                "spec.dataVolumeTemplates[0].spec.source.registry.uri",
                "spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].value",
                "spec.template.spec.volumes[0].containerDisk.img",
                "spec.template.spec.volumes[1].cloudInitNoCloud.userDataSecretRef",
            ]
        );
        assert_eq!(
            wrong,
            [
                "spec.dataVolumeTemplates[0].spec.source.http.url",
                "spec.dataVolumeTemplates[0].spec.storage.resources.requests.storage",
                "spec.template.spec.domain.devices.disks[0].blockSize.custom.logical",
                "spec.template.spec.domain.launchSecurity.sev.policy.encryptedState",
                "spec.template.spec.volumes[2].emptyDisk.capacity",
                "spec.template.spec.volumes[3].persistentVolumeClaim.readOnly",
            ]
        );
    }

    #[test]
    fn opaque_parts_and_nulls_are_not_checked() {
        let vm = json!({"metadata": {"managedFields": [{"fieldsV1": {"f:spec": {}}}]},
                        "spec": {"template": {"spec": {"hostname": null,
                        "volumes": [{"name": "x", "containerDisk": null}]}}}});
        let mut out = Vec::new();
        check(&vm, VIRTUAL_MACHINE, "", &mut out);
        assert!(out.is_empty());
        // Tolerations are Kubernetes' own, typed as the API server types them.
        let vm = json!({"spec": {"template": {"spec": {"tolerations": [
            {"key": "k", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": "60"},
            {"key": "k", "Effect": "NoSchedule"}]}}}});
        let mut out = Vec::new();
        check(&vm, VIRTUAL_MACHINE, "", &mut out);
        assert!(
            matches!(&out[..], [Problem::WrongType { path, .. }, Problem::Unknown { key, .. }]
                if path == "spec.template.spec.tolerations[0].tolerationSeconds" && key == "Effect"),
            "{out:?}"
        );
        // A user's password reaches the guest through its agent only.
        let vm = json!({"spec": {"template": {"spec": {"accessCredentials": [
            {"sshPublicKey": {"source": {"secret": {"secretName": "k"}},
                "propagationMethod": {"qemuGuestAgent": {"users": ["fedora"]}}}},
            {"userPassword": {"source": {"secret": {"secretName": "p"}},
                "propagationMethod": {"noCloud": {}}}}]}}}});
        let mut out = Vec::new();
        check(&vm, VIRTUAL_MACHINE, "", &mut out);
        assert!(
            matches!(&out[..], [Problem::Unknown { parent, key, .. }]
                if parent == "spec.template.spec.accessCredentials[1].userPassword.propagationMethod"
                    && key == "noCloud"),
            "{out:?}"
        );
        // A probe's port is a number or a name; its timings are numbers.
        let vm = json!({"spec": {"template": {"spec": {
            "readinessProbe": {"httpGet": {"port": "http", "Path": "/"}, "periodSeconds": "10"},
            "livenessProbe": {"tcpSocket": {"port": 22}, "guestAgentPing": {}}}}}});
        let mut out = Vec::new();
        check(&vm, VIRTUAL_MACHINE, "", &mut out);
        assert!(
            matches!(&out[..], [Problem::Unknown { key, suggestion: Some("path"), .. },
                Problem::WrongType { path, .. }]
                if key == "Path" && path == "spec.template.spec.readinessProbe.periodSeconds"),
            "{out:?}"
        );
        // Kubernetes' DNS configuration and spread constraints, with their label selector.
        let vm = json!({"spec": {"template": {"spec": {
            "dnsConfig": {"nameservers": "1.1.1.1", "options": [{"name": "ndots", "value": "2"}]},
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "web"}, "matchLabel": {}}}]}}}});
        let mut out = Vec::new();
        check(&vm, VIRTUAL_MACHINE, "", &mut out);
        assert!(
            matches!(&out[..], [Problem::WrongType { path, .. }, Problem::Unknown { key, .. }]
                if path == "spec.template.spec.dnsConfig.nameservers" && key == "matchLabel"),
            "{out:?}"
        );
        // A volume's sources are known by name, not looked into.
        let vm = json!({"spec": {"template": {"spec": {
                        "volumes": [{"name": "x", "containerdisk": {"image": "i"}}]}}}});
        let mut out = Vec::new();
        check(&vm, VIRTUAL_MACHINE, "", &mut out);
        assert!(
            matches!(&out[..], [Problem::Unknown { key, suggestion: Some("containerDisk"), .. }]
                if key == "containerdisk"),
            "{out:?}"
        );
    }
}

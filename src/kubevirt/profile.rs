//! The cluster profile: the part of a `KubeVirt` custom resource's configuration that changes
//! what expansion and VMI defaulting produce.
//!
//! Mirrors `pkg/virt-config` (`configuration.go`'s default configuration and the getters in
//! `virt-config.go`) of KubeVirt d923fdb815. KubeVirt unmarshals `spec.configuration` over its
//! defaults, so a field the resource leaves out keeps its default; we do the same field by field.
//! The default architecture is `architectureConfiguration.defaultArchitecture` when the
//! configuration sets it (KubeVirt's operator copies it into the status), else the resource's
//! `status.defaultArchitecture`, which a real cluster sets to its control plane's architecture;
//! without either we assume amd64.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::model::path;
use crate::model::path::Fields;
use crate::model::quantity::Quantity;

/// Everything expansion needs to know about the cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterProfile {
    /// `architectureConfiguration.defaultArchitecture` (from the configuration, else from the
    /// resource's status).
    pub default_architecture: String,
    /// The deprecated cluster-wide `machineType`, which wins over the per-architecture ones.
    pub machine_type: Option<String>,
    /// Machine type for amd64.
    pub machine_type_amd64: String,
    /// Machine type for arm64.
    pub machine_type_arm64: String,
    /// Machine type for s390x.
    pub machine_type_s390x: String,
    /// The deprecated cluster-wide `emulatedMachines`, which wins over the per-architecture
    /// ones (an empty list counts as unset).
    pub emulated_machines: Option<Vec<String>>,
    /// The machine type patterns amd64 VMs may ask for.
    pub emulated_machines_amd64: Vec<String>,
    /// The machine type patterns arm64 VMs may ask for.
    pub emulated_machines_arm64: Vec<String>,
    /// The machine type patterns s390x VMs may ask for.
    pub emulated_machines_s390x: Vec<String>,
    /// `cpuModel`, applied to VMIs without a model (VMI view only).
    pub cpu_model: Option<String>,
    /// `cpuRequest`, applied to VMIs without a cpu request when it differs from `100m`.
    pub cpu_request: Option<String>,
    /// `evictionStrategy`.
    pub eviction_strategy: Option<String>,
    /// `network.defaultNetworkInterface` (`bridge`, `masquerade`, or the deprecated `slirp`,
    /// which fails a VM that needs the default interface).
    pub network_interface: String,
    /// `network.permitBridgeInterfaceOnPodNetwork`.
    pub permit_bridge_on_pod_network: bool,
    /// `developerConfiguration.memoryOvercommit` (percent).
    pub memory_overcommit: i64,
    /// `confidentialCompute.tdx.attestation.qgsSocketPath`, the socket of the TDX quote
    /// generation service, which the VMI webhook writes on TDX VMIs.
    pub qgs_socket_path: String,
    /// `instancetype.referencePolicy`: with `expand` or `expandAll`, the VM controller writes
    /// the expansion into a VM that names an instancetype or preference before it starts it.
    pub reference_policy: ReferencePolicy,
    /// The CPU and memory hotplug limits VMIs get, `None` when `vmRolloutStrategy` is not
    /// `LiveUpdate` (VMIs then get none).
    pub hotplug: Option<Hotplug>,
    /// Whether a VMI that isolates its emulator thread gets the
    /// `alpha.kubevirt.io/EmulatorThreadCompleteToEvenParity` annotation: the resource carries
    /// that annotation and the `AlignCPUs` feature gate is on.
    pub emulator_thread_even_parity: bool,
    /// Whether the beta feature gate `DecentralizedLiveMigration` is on (it is unless
    /// `disabledFeatureGates` lists it): the VM webhook takes `runStrategy: WaitAsReceiver` only
    /// then.
    pub wait_as_receiver: bool,
    /// `developerConfiguration.featureGates` and `disabledFeatureGates`, when a configuration
    /// was read; `None` (no configuration) leaves the alpha gates unknown.
    pub gates: Option<Gates>,
    /// `permittedHostDevices.pciHostDevices`: the PCI vendor selector (`vendor:device`) of
    /// each resource name the cluster offers, the last entry of a name winning, entries
    /// without either left out (KubeVirt's NVIDIA Grace checks read them).
    pub pci_selectors: BTreeMap<String, String>,
    /// Fields of the configuration KubeVirt does not have, each with the nearest one it has:
    /// ignored, and reported as warnings by the commands that read the file.
    pub unknown_fields: Vec<(String, Option<&'static str>)>,
    /// Not read from the cluster: whether a spec is judged as written, before KubeVirt's
    /// defaults, as KubeVirt's VirtualMachinePool webhook judges a pool's template (no default
    /// architecture, machine type or interface, and an empty list is still a list). `validate`
    /// sets it for that check alone.
    pub as_written: bool,
    /// Not read from the cluster either: with `as_written`, whether the webhook first checks
    /// the spec against KubeVirt's OpenAPI schema as written, before any mutating webhook
    /// writes it back (so an empty string in an enumerated field is refused), as the
    /// VirtualMachineInstanceReplicaSet webhook does and the pool webhook does not.
    pub schema_as_written: bool,
}

/// `liveUpdateConfiguration`: how `maxSockets` and `maxGuest` are chosen for a VMI that sets
/// neither.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hotplug {
    /// `maxHotplugRatio`: sockets and guest memory times this (4 unless set).
    pub ratio: u32,
    /// `maxCpuSockets`, used instead of the ratio when set (0 counts as unset).
    pub max_cpu_sockets: u32,
    /// `maxGuest` in canonical form, used instead of the ratio when set.
    pub max_guest: Option<String>,
}

impl Default for Hotplug {
    fn default() -> Self {
        Hotplug {
            ratio: 4,
            max_cpu_sockets: 0,
            max_guest: None,
        }
    }
}

/// The feature gates a configuration lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Gates {
    /// `developerConfiguration.featureGates`.
    pub enabled: Vec<String>,
    /// `developerConfiguration.disabledFeatureGates`.
    pub disabled: Vec<String>,
    /// `persistentReservationConfiguration.enabled`, which wins over the
    /// `PersistentReservation` gate when set.
    pub persistent_reservation: Option<bool>,
}

/// How far along a feature gate is, which decides whether it is on when nothing lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateState {
    /// Off unless `featureGates` lists it.
    Alpha,
    /// On unless `disabledFeatureGates` lists it (and `featureGates` does not).
    Beta,
}

/// The annotation a KubeVirt resource carries to ask for even CPU parity with an isolated
/// emulator thread, copied to such VMIs.
pub const EVEN_PARITY_ANNOTATION: &str = "alpha.kubevirt.io/EmulatorThreadCompleteToEvenParity";

/// KubeVirt's default `qgsSocketPath`.
pub const DEFAULT_QGS_SOCKET_PATH: &str = "/var/run/tdx-qgs/qgs.socket";

impl Default for ClusterProfile {
    /// KubeVirt's defaults on an amd64 cluster.
    fn default() -> Self {
        ClusterProfile {
            default_architecture: "amd64".into(),
            machine_type: None,
            machine_type_amd64: "q35".into(),
            machine_type_arm64: "virt".into(),
            machine_type_s390x: "s390-ccw-virtio".into(),
            emulated_machines: None,
            emulated_machines_amd64: vec!["q35*".into(), "pc-q35*".into()],
            emulated_machines_arm64: vec!["virt*".into()],
            emulated_machines_s390x: vec!["s390-ccw-virtio*".into()],
            cpu_model: None,
            cpu_request: None,
            eviction_strategy: Some("None".into()),
            network_interface: "bridge".into(),
            permit_bridge_on_pod_network: true,
            memory_overcommit: 100,
            qgs_socket_path: DEFAULT_QGS_SOCKET_PATH.into(),
            reference_policy: ReferencePolicy::Reference,
            hotplug: Some(Hotplug::default()),
            emulator_thread_even_parity: false,
            wait_as_receiver: true,
            gates: None,
            pci_selectors: BTreeMap::new(),
            unknown_fields: Vec::new(),
            as_written: false,
            schema_as_written: false,
        }
    }
}

/// How a VM that names an instancetype or preference keeps it once KubeVirt has it
/// (`instancetype.referencePolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReferencePolicy {
    /// It keeps naming them, with copies stashed in ControllerRevisions (the default).
    Reference,
    /// The VM controller expands them into a VM that has no ControllerRevision of them yet.
    Expand,
    /// The VM controller expands them into every VM.
    ExpandAll,
}

/// What a cluster profile is read from, for error messages.
pub const EXPECTED: &str = "expected a `kind: KubeVirt` document, as `kubectl get kubevirt -n \
                            kubevirt -o yaml` prints it, or a bare `spec.configuration` mapping";

/// The fields of KubeVirt's `KubeVirtConfiguration` (`spec.configuration`), to recognise a
/// bare configuration mapping.
const CONFIGURATION_FIELDS: &[&str] = &[
    "cpuModel",
    "cpuRequest",
    "developerConfiguration",
    "emulatedMachines",
    "imagePullPolicy",
    "migrations",
    "machineType",
    "network",
    "ovmfPath",
    "selinuxLauncherType",
    "defaultRuntimeClass",
    "smbios",
    "architectureConfiguration",
    "evictionStrategy",
    "additionalGuestMemoryOverheadRatio",
    "supportContainerResources",
    "supportedGuestAgentVersions",
    "memBalloonStatsPeriod",
    "permittedHostDevices",
    "mediatedDevicesConfiguration",
    "minCPUModel",
    "obsoleteCPUModels",
    "virtualMachineInstancesPerNode",
    "apiConfiguration",
    "webhookConfiguration",
    "controllerConfiguration",
    "handlerConfiguration",
    "tlsConfiguration",
    "seccompConfiguration",
    "vmStateStorageClass",
    "virtualMachineOptions",
    "ksmConfiguration",
    "autoCPULimitNamespaceLabelSelector",
    "liveUpdateConfiguration",
    "vmRolloutStrategy",
    "commonInstancetypesDeployment",
    "virtTemplateDeployment",
    "instancetype",
    "hypervisors",
    "changedBlockTrackingLabelSelectors",
    "persistentReservationConfiguration",
    "confidentialCompute",
    "roleAggregationStrategy",
];

impl ClusterProfile {
    /// What to say about each field of the configuration KubeVirt does not have.
    pub fn unknown_field_messages(&self) -> Vec<String> {
        self.unknown_fields
            .iter()
            .map(|(field, near)| {
                let hint = near
                    .map(|n| format!(" (did you mean `{n}`?)"))
                    .unwrap_or_default();
                format!(
                    "unknown field `{field}`{hint}: KubeVirt's configuration has no such field \
                     (the API server drops it), so kvrender ignores it"
                )
            })
            .collect()
    }

    /// Whether the feature gate `gate` is on (`featuregate.IsEnabled`): `None` when it is an
    /// alpha gate and no configuration was read, since clusters that use the feature turn it on.
    pub fn gate_on(&self, gate: &str, state: GateState) -> Option<bool> {
        let Some(gates) = &self.gates else {
            return (state == GateState::Beta).then_some(true);
        };
        let listed = |list: &[String]| list.iter().any(|g| g == gate);
        Some(listed(&gates.enabled) || (state == GateState::Beta && !listed(&gates.disabled)))
    }

    /// Whether SCSI persistent reservation is on (`PersistentReservationEnabled`): the
    /// configuration's `persistentReservationConfiguration.enabled`, else whether
    /// `featureGates` lists `PersistentReservation` (a graduated gate KubeVirt still asks for);
    /// `None` when no configuration was read.
    pub fn persistent_reservation_on(&self) -> Option<bool> {
        let gates = self.gates.as_ref()?;
        Some(
            gates
                .persistent_reservation
                .unwrap_or_else(|| gates.enabled.iter().any(|g| g == "PersistentReservation")),
        )
    }

    /// The machine type for `arch` (KubeVirt's `GetMachineType`).
    pub fn machine_type_for(&self, arch: &str) -> &str {
        if let Some(m) = self.machine_type.as_deref() {
            return m;
        }
        match arch {
            "arm64" => &self.machine_type_arm64,
            "s390x" => &self.machine_type_s390x,
            _ => &self.machine_type_amd64,
        }
    }

    /// The machine type patterns a VM of `arch` may ask for (KubeVirt's `GetEmulatedMachines`).
    pub fn emulated_machines_for(&self, arch: &str) -> &[String] {
        if let Some(m) = &self.emulated_machines {
            return m;
        }
        match arch {
            "arm64" => &self.emulated_machines_arm64,
            "s390x" => &self.emulated_machines_s390x,
            _ => &self.emulated_machines_amd64,
        }
    }

    /// Read one document that must be a KubeVirt resource or its configuration: a `KubeVirt`
    /// resource, the same without its `kind` (a mapping with `spec`), a mapping with the
    /// `configuration` key, or the configuration mapping itself (with at least one of its
    /// fields, or empty). Anything else is an error, never a silent fall back to the defaults.
    pub fn from_document(doc: &Value) -> Result<ClusterProfile, String> {
        Self::read_document(doc).map_err(|errors| errors.join("; "))
    }

    /// [`ClusterProfile::from_document`], with every error found (see
    /// [`ClusterProfile::read_kubevirt`]).
    pub fn read_document(doc: &Value) -> Result<ClusterProfile, Vec<String>> {
        let kind = doc.field("kind").and_then(Value::as_str);
        if kind == Some("KubeVirt") {
            return ClusterProfile::read_kubevirt(doc);
        }
        if let Some(kind) = kind {
            return Err(vec![format!(
                "a {kind} is not a KubeVirt resource; {EXPECTED}"
            )]);
        }
        let Some(map) = doc
            .as_object()
            .filter(|_| doc.field("apiVersion").is_none())
        else {
            return Err(vec![format!("not a KubeVirt resource; {EXPECTED}")]);
        };
        if let Some(spec) = map.get("spec") {
            let mut resource = serde_json::json!({"kind": "KubeVirt", "spec": spec});
            if let Some(status) = map.get("status") {
                resource["status"] = status.clone();
            }
            return ClusterProfile::read_kubevirt(&resource);
        }
        if let Some(config) = map.get("configuration") {
            return ClusterProfile::read_kubevirt(config);
        }
        // `networkConfiguration` gets its own hint from the field reader.
        let known =
            |k: &String| CONFIGURATION_FIELDS.contains(&k.as_str()) || k == "networkConfiguration";
        if !map.is_empty() && !map.keys().any(known) {
            // Each key with the field it may misspell: the likelier mistake than a document
            // of another kind.
            let keys: Vec<String> = map
                .keys()
                .map(|k| {
                    match crate::diagnostic::nearest_name(k, CONFIGURATION_FIELDS.iter().copied()) {
                        Some(near) => format!("`{k}` (did you mean `{near}`?)"),
                        None => format!("`{k}`"),
                    }
                })
                .collect();
            return Err(vec![format!(
                "no KubeVirt configuration field among {}; {EXPECTED}",
                keys.join(", ")
            )]);
        }
        ClusterProfile::read_kubevirt(doc)
    }

    /// Read a `KubeVirt` custom resource (as `kubectl get kubevirt -o yaml` prints it), or a bare
    /// `KubeVirtConfiguration` mapping. Unknown fields are ignored; wrong types are errors naming
    /// the field, joined by `; ` when there are several (see [`ClusterProfile::read_kubevirt`]).
    pub fn from_kubevirt(doc: &Value) -> Result<ClusterProfile, String> {
        Self::read_kubevirt(doc).map_err(|errors| errors.join("; "))
    }

    /// [`ClusterProfile::from_kubevirt`], with every error found: each field is read on its
    /// own, so that one mistake does not hide the next. A `spec` or `spec.configuration` that is
    /// not a mapping, or one of the sections read from it, stops the reading at once.
    pub fn read_kubevirt(doc: &Value) -> Result<ClusterProfile, Vec<String>> {
        let (config, status) = if doc.field("kind").and_then(Value::as_str) == Some("KubeVirt") {
            (
                path::get(doc, &["spec", "configuration"]).cloned(),
                doc.field("status"),
            )
        } else {
            (Some(doc.clone()), None)
        };
        if let Some(spec) = doc.field("spec")
            && doc.field("kind").and_then(Value::as_str) == Some("KubeVirt")
            && !spec.is_object()
            && !spec.is_null()
        {
            return Err(vec!["`spec` must be a mapping".into()]);
        }
        let config = config.unwrap_or(Value::Null);
        if !config.is_object() && !config.is_null() {
            return Err(vec!["`spec.configuration` must be a mapping".into()]);
        }
        // The structs the profile reads fields of: one of another type would otherwise hide
        // those fields without a word.
        for at in [
            &["developerConfiguration"][..],
            &["architectureConfiguration"],
            &["architectureConfiguration", "amd64"],
            &["architectureConfiguration", "arm64"],
            &["architectureConfiguration", "ppc64le"],
            &["architectureConfiguration", "s390x"],
            &["network"],
            &["confidentialCompute"],
            &["confidentialCompute", "tdx"],
            &["confidentialCompute", "tdx", "attestation"],
            &["persistentReservationConfiguration"],
        ] {
            if path::get(&config, at).is_some_and(|v| !v.is_object() && !v.is_null()) {
                return Err(vec![format!(
                    "`spec.configuration.{}` must be a mapping",
                    at.join(".")
                )]);
            }
        }
        // A field name from another tool's schema would otherwise be ignored without a word.
        if config.field("networkConfiguration").is_some() {
            return Err(vec![
                "unknown field `spec.configuration.networkConfiguration`: \
                 KubeVirt's field is `network` (`network.defaultNetworkInterface`)"
                    .into(),
            ]);
        }
        let mut p = ClusterProfile::default();
        let mut errors: Vec<String> = Vec::new();
        // The value read, or the type's default with the error kept.
        macro_rules! take {
            ($read:expr) => {
                match $read {
                    Ok(value) => value,
                    Err(e) => {
                        errors.push(e.into());
                        Default::default()
                    }
                }
            };
        }
        for key in config.as_object().into_iter().flat_map(|m| m.keys()) {
            if !CONFIGURATION_FIELDS.contains(&key.as_str()) {
                let near =
                    crate::diagnostic::nearest_name(key, CONFIGURATION_FIELDS.iter().copied());
                p.unknown_fields
                    .push((format!("spec.configuration.{key}"), near));
            }
        }
        let text = |path: &[&str]| -> Result<Option<String>, String> {
            match path::get(&config, path) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if s.is_empty() => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(_) => Err(format!(
                    "`spec.configuration.{}` must be a string",
                    path.join(".")
                )),
            }
        };
        // The operator writes the configured architecture into the status; a resource kept in
        // Git has no status, and a stale one is overwritten.
        if let Some(arch) = take!(text(&["architectureConfiguration", "defaultArchitecture"])) {
            p.default_architecture = arch;
        } else if let Some(arch) = status
            .and_then(|s| s.field("defaultArchitecture"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            p.default_architecture = arch.to_string();
        }
        p.machine_type = take!(text(&["machineType"]));
        take!(per_architecture(
            [
                &mut p.machine_type_amd64,
                &mut p.machine_type_arm64,
                &mut p.machine_type_s390x,
            ],
            |arch| text(&["architectureConfiguration", arch, "machineType"]),
        ));
        let patterns = |path: &[&str]| -> Result<Option<Vec<String>>, String> {
            match path::get(&config, path) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Array(items)) if items.is_empty() => Ok(None),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|i| i.as_str().map(str::to_string))
                    .collect::<Option<Vec<_>>>()
                    .map(Some)
                    .ok_or(format!(
                        "`spec.configuration.{}` must be a list of strings",
                        path.join(".")
                    )),
                Some(_) => Err(format!(
                    "`spec.configuration.{}` must be a list of strings",
                    path.join(".")
                )),
            }
        };
        p.emulated_machines = take!(patterns(&["emulatedMachines"]));
        take!(per_architecture(
            [
                &mut p.emulated_machines_amd64,
                &mut p.emulated_machines_arm64,
                &mut p.emulated_machines_s390x,
            ],
            |arch| patterns(&["architectureConfiguration", arch, "emulatedMachines"]),
        ));
        p.cpu_model = take!(text(&["cpuModel"]));
        if let Some(req) = path::get(&config, &["cpuRequest"]).filter(|v| !v.is_null()) {
            match Quantity::from_json(req) {
                Some(q) => {
                    if Quantity::parse("100m").map_or(true, |default| !q.eq_value(&default)) {
                        p.cpu_request = Some(q.to_string());
                    }
                }
                None => errors.push("`spec.configuration.cpuRequest` is not a quantity".into()),
            }
        }
        // A pointer in Go: an empty strategy is one, which every VMI then gets (and its
        // webhook refuses).
        match path::get(&config, &["evictionStrategy"]) {
            None | Some(Value::Null) => {}
            Some(Value::String(e)) => p.eviction_strategy = Some(e.clone()),
            Some(_) => errors.push("`spec.configuration.evictionStrategy` must be a string".into()),
        }
        // A pointer in Go: an empty path is one, and means no socket annotation at all.
        match path::get(
            &config,
            &["confidentialCompute", "tdx", "attestation", "qgsSocketPath"],
        ) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => p.qgs_socket_path = s.clone(),
            Some(_) => errors.push(
                "`spec.configuration.confidentialCompute.tdx.attestation.qgsSocketPath` \
                 must be a string"
                    .into(),
            ),
        }
        if let Some(policy) = take!(text(&["instancetype", "referencePolicy"])) {
            match policy.as_str() {
                "reference" => p.reference_policy = ReferencePolicy::Reference,
                "expand" => p.reference_policy = ReferencePolicy::Expand,
                "expandAll" => p.reference_policy = ReferencePolicy::ExpandAll,
                other => errors.push(format!(
                    "invalid `spec.configuration.instancetype.referencePolicy`: `{other}` \
                     (KubeVirt takes `reference`, `expand` or `expandAll`)"
                )),
            }
        }
        if let Some(n) = take!(text(&["network", "defaultNetworkInterface"])) {
            match n.as_str() {
                "bridge" | "masquerade" => p.network_interface = n,
                // Accepted in the configuration; only a VM that needs the default interface
                // fails.
                "slirp" => p.network_interface = n,
                other => errors.push(format!(
                    "invalid `spec.configuration.network.defaultNetworkInterface`: `{other}`"
                )),
            }
        }
        match path::get(&config, &["network", "permitBridgeInterfaceOnPodNetwork"]) {
            None | Some(Value::Null) => {}
            Some(Value::Bool(b)) => p.permit_bridge_on_pod_network = *b,
            Some(_) => errors.push(
                "`spec.configuration.network.permitBridgeInterfaceOnPodNetwork` must be a boolean"
                    .into(),
            ),
        }
        match path::get(&config, &["developerConfiguration", "memoryOvercommit"]) {
            None | Some(Value::Null) => {}
            // Go leaves a 0 out when it copies the configuration over its defaults (the field
            // is `omitempty`): the default stays.
            Some(v) => match v.as_i64() {
                Some(0) => {}
                Some(n) if n > 0 => p.memory_overcommit = n,
                _ => errors.push(
                    "`spec.configuration.developerConfiguration.memoryOvercommit` must be a positive integer"
                        .into(),
                ),
            },
        }
        // KubeVirt drops a configuration with any of these for its defaults; here it is an
        // error to fix.
        let integer = |path: &[&str]| match path::get(&config, path) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or(format!(
                "`spec.configuration.{}` must be an integer",
                path.join(".")
            )),
        };
        // A 0 is left out over the default as `memoryOvercommit`'s is.
        if let Some(ratio) = take!(integer(&["developerConfiguration", "cpuAllocationRatio"]))
            && ratio < 0
        {
            errors.push(
                "`spec.configuration.developerConfiguration.cpuAllocationRatio` must be a \
                 positive integer"
                    .into(),
            );
        }
        // Go's `LessPVCSpaceToleration`, written so in KubeVirt's own error message.
        if let Some(tolerance) = take!(integer(&[
            "developerConfiguration",
            "pvcTolerateLessSpaceUpToPercent"
        ])) && !(0..=100).contains(&tolerance)
        {
            errors.push(
                "`spec.configuration.developerConfiguration.pvcTolerateLessSpaceUpToPercent` \
                 must be a percentage, 0 to 100"
                    .into(),
            );
        }
        if let Some(policy) = take!(text(&["imagePullPolicy"]))
            && !["Always", "IfNotPresent", "Never"].contains(&policy.as_str())
        {
            errors.push(format!(
                "invalid `spec.configuration.imagePullPolicy`: `{policy}` (expected `Always`, \
                 `IfNotPresent` or `Never`)"
            ));
        }
        p.hotplug = take!(hotplug(&config, &text));
        let annotated = doc.field("kind").and_then(Value::as_str) == Some("KubeVirt")
            && path::get(doc, &["metadata", "annotations"])
                .and_then(Value::as_object)
                .is_some_and(|a| a.contains_key(EVEN_PARITY_ANNOTATION));
        p.emulator_thread_even_parity = annotated && take!(feature_gate_on(&config, "AlignCPUs"));
        p.wait_as_receiver = take!(beta_gate_on(&config, "DecentralizedLiveMigration"));
        let persistent_reservation =
            match path::get(&config, &["persistentReservationConfiguration", "enabled"]) {
                None | Some(Value::Null) => None,
                Some(Value::Bool(b)) => Some(*b),
                Some(_) => {
                    errors.push(
                        "`spec.configuration.persistentReservationConfiguration.enabled` \
                         must be a boolean"
                            .into(),
                    );
                    None
                }
            };
        p.pci_selectors = take!(pci_selectors(&config));
        p.gates = Some(Gates {
            enabled: take!(gate_list(&config, "featureGates")),
            disabled: take!(gate_list(&config, "disabledFeatureGates")),
            persistent_reservation,
        });
        if errors.is_empty() {
            return Ok(p);
        }
        // A list the gate checks read more than once is reported once.
        let mut seen = std::collections::HashSet::new();
        errors.retain(|e| seen.insert(e.clone()));
        Err(errors)
    }
}

/// Set each of the amd64, arm64 and s390x `slots` to what `read` finds for its architecture,
/// where it finds something.
fn per_architecture<T>(
    slots: [&mut T; 3],
    read: impl Fn(&str) -> Result<Option<T>, String>,
) -> Result<(), String> {
    for (arch, slot) in ["amd64", "arm64", "s390x"].into_iter().zip(slots) {
        if let Some(value) = read(arch)? {
            *slot = value;
        }
    }
    Ok(())
}

type TextAt<'t> = dyn Fn(&[&str]) -> Result<Option<String>, String> + 't;

/// `vmRolloutStrategy` and `liveUpdateConfiguration` (`IsVMRolloutStrategyLiveUpdate`,
/// `GetMaxHotplugRatio`, `GetMaximumCpuSockets`, `GetMaximumGuestMemory`).
fn hotplug(config: &Value, text: &TextAt<'_>) -> Result<Option<Hotplug>, String> {
    if let Some(strategy) = text(&["vmRolloutStrategy"])? {
        match strategy.as_str() {
            "LiveUpdate" => {}
            "Stage" => return Ok(None),
            other => {
                return Err(format!(
                    "invalid `spec.configuration.vmRolloutStrategy`: `{other}` (expected \
                     `LiveUpdate` or `Stage`)"
                ));
            }
        }
    }
    let mut h = Hotplug::default();
    let field = |name: &str| path::get(config, &["liveUpdateConfiguration", name]);
    let uint32 = |name: &str| -> Result<u32, String> {
        match field(name) {
            None | Some(Value::Null) => Ok(0),
            Some(v) => v
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or(format!(
                    "`spec.configuration.liveUpdateConfiguration.{name}` must be an integer \
                     from 0 to 4294967295"
                )),
        }
    };
    // Go leaves an unset or zero ratio at the default (the field is `omitempty`).
    let ratio = uint32("maxHotplugRatio")?;
    if ratio != 0 {
        h.ratio = ratio;
    }
    h.max_cpu_sockets = uint32("maxCpuSockets")?;
    if let Some(q) = field("maxGuest").filter(|v| !v.is_null()) {
        let q = Quantity::from_json(q)
            .ok_or("`spec.configuration.liveUpdateConfiguration.maxGuest` is not a quantity")?;
        h.max_guest = Some(q.to_string());
    }
    Ok(Some(h))
}

/// `permittedHostDevices.pciHostDevices`, resource name to PCI vendor selector.
fn pci_selectors(config: &Value) -> Result<BTreeMap<String, String>, String> {
    const AT: &str = "spec.configuration.permittedHostDevices.pciHostDevices";
    let mut selectors = BTreeMap::new();
    let devices = match path::get(config, &["permittedHostDevices", "pciHostDevices"]) {
        None | Some(Value::Null) => return Ok(selectors),
        Some(Value::Array(devices)) => devices,
        Some(_) => return Err(format!("`{AT}` must be a list")),
    };
    for (i, device) in devices.iter().enumerate() {
        let text = |key: &str| match device.get(key) {
            None | Some(Value::Null) => Ok(""),
            Some(Value::String(s)) => Ok(s.as_str()),
            Some(_) => Err(format!("`{AT}[{i}].{key}` must be a string")),
        };
        if !device.is_object() && !device.is_null() {
            return Err(format!("`{AT}[{i}]` must be a mapping"));
        }
        let (name, selector) = (text("resourceName")?, text("pciVendorSelector")?);
        if !name.is_empty() && !selector.is_empty() {
            selectors.insert(name.to_string(), selector.to_string());
        }
    }
    Ok(selectors)
}

/// The gate names in `developerConfiguration.<field>` (other items are not names of gates).
fn gate_list(config: &Value, field: &str) -> Result<Vec<String>, String> {
    match path::get(config, &["developerConfiguration", field]) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(gates)) => Ok(gates
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()),
        Some(_) => Err(format!(
            "`spec.configuration.developerConfiguration.{field}` must be a list"
        )),
    }
}

/// Whether the alpha feature gate `gate` is on: listed in
/// `developerConfiguration.featureGates` (`featuregate.IsEnabled`).
fn feature_gate_on(config: &Value, gate: &str) -> Result<bool, String> {
    match path::get(config, &["developerConfiguration", "featureGates"]) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Array(gates)) => Ok(gates.iter().any(|g| g.as_str() == Some(gate))),
        Some(_) => {
            Err("`spec.configuration.developerConfiguration.featureGates` must be a list".into())
        }
    }
}

/// Whether the beta feature gate `gate` is on: listed in `featureGates`, or else not listed in
/// `disabledFeatureGates` (`featuregate.IsEnabled`).
fn beta_gate_on(config: &Value, gate: &str) -> Result<bool, String> {
    if feature_gate_on(config, gate)? {
        return Ok(true);
    }
    match path::get(config, &["developerConfiguration", "disabledFeatureGates"]) {
        None | Some(Value::Null) => Ok(true),
        Some(Value::Array(gates)) => Ok(!gates.iter().any(|g| g.as_str() == Some(gate))),
        Some(_) => Err(
            "`spec.configuration.developerConfiguration.disabledFeatureGates` must be a list"
                .into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_are_kubevirts_amd64_defaults() {
        let p = ClusterProfile::default();
        assert_eq!(p.machine_type_for("amd64"), "q35");
        assert_eq!(p.machine_type_for("arm64"), "virt");
        assert_eq!(p.machine_type_for("s390x"), "s390-ccw-virtio");
        assert_eq!(p.eviction_strategy.as_deref(), Some("None"));
    }

    #[test]
    fn kubevirt_resource_overrides_field_by_field() {
        let cr = json!({
            "apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
            "spec": {"configuration": {
                "architectureConfiguration": {"arm64": {"machineType": "virt-9.0"}},
                "evictionStrategy": "LiveMigrate",
                "network": {"defaultNetworkInterface": "masquerade"},
                "confidentialCompute": {"tdx": {"attestation": {"qgsSocketPath": "/run/q.sock"}}}
            }},
            "status": {"defaultArchitecture": "arm64"}
        });
        let p = ClusterProfile::from_kubevirt(&cr).unwrap();
        assert_eq!(p.default_architecture, "arm64");
        assert_eq!(p.machine_type_for("arm64"), "virt-9.0");
        assert_eq!(p.machine_type_for("amd64"), "q35");
        assert_eq!(p.eviction_strategy.as_deref(), Some("LiveMigrate"));
        assert_eq!(p.network_interface, "masquerade");
        // An empty socket path is set, to nothing: no annotation names a socket.
        let mut empty = cr.clone();
        empty["spec"]["configuration"]["confidentialCompute"]["tdx"]["attestation"]["qgsSocketPath"] =
            json!("");
        assert_eq!(
            ClusterProfile::from_kubevirt(&empty)
                .unwrap()
                .qgs_socket_path,
            ""
        );
        assert_eq!(p.qgs_socket_path, "/run/q.sock");
        assert_eq!(
            ClusterProfile::default().qgs_socket_path,
            DEFAULT_QGS_SOCKET_PATH
        );
    }

    #[test]
    fn documents_that_hold_no_configuration_are_refused() {
        let vm = json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine"});
        assert!(ClusterProfile::from_document(&vm).is_err());
        // Each key that misspells a field is named with it.
        let err =
            ClusterProfile::from_document(&json!({"evictionStrategi": "x", "zzz": 1})).unwrap_err();
        assert!(
            err.starts_with(
                "no KubeVirt configuration field among `evictionStrategi` (did you mean \
                 `evictionStrategy`?), `zzz`; expected"
            ),
            "{err}"
        );
        let nested = json!({"configuration": {"evictionStrategy": "LiveMigrate"}});
        assert_eq!(
            ClusterProfile::from_document(&nested)
                .unwrap()
                .eviction_strategy
                .as_deref(),
            Some("LiveMigrate")
        );
    }

    #[test]
    fn cluster_wide_machine_type_wins() {
        let p = ClusterProfile::from_kubevirt(&json!({"machineType": "pc-q35-rhel9"})).unwrap();
        assert_eq!(p.machine_type_for("arm64"), "pc-q35-rhel9");
    }

    #[test]
    fn wrong_types_are_errors() {
        assert!(ClusterProfile::from_kubevirt(&json!({"machineType": 3})).is_err());
        // The structs whose fields the profile reads are mappings, at every level.
        for (doc, message) in [
            (
                json!({"kind": "KubeVirt", "spec": 5}),
                "`spec` must be a mapping",
            ),
            (
                json!({"kind": "KubeVirt", "spec": [1]}),
                "`spec` must be a mapping",
            ),
            (
                json!({"developerConfiguration": 5}),
                "`spec.configuration.developerConfiguration` must be a mapping",
            ),
            (
                json!({"architectureConfiguration": {"arm64": "virt"}}),
                "`spec.configuration.architectureConfiguration.arm64` must be a mapping",
            ),
            (
                json!({"network": []}),
                "`spec.configuration.network` must be a mapping",
            ),
        ] {
            assert_eq!(
                ClusterProfile::from_kubevirt(&doc).unwrap_err(),
                message,
                "{doc}"
            );
        }
        assert!(ClusterProfile::from_kubevirt(&json!({"kind": "KubeVirt", "spec": null})).is_ok());
        // Fields are read one by one: every mistake is reported, a list read twice once.
        let several = json!({
            "machineType": 5,
            "evictionStrategy": [],
            "developerConfiguration": {"featureGates": "Snapshot", "memoryOvercommit": -5},
        });
        assert_eq!(
            ClusterProfile::read_kubevirt(&several).unwrap_err(),
            [
                "`spec.configuration.machineType` must be a string",
                "`spec.configuration.evictionStrategy` must be a string",
                "`spec.configuration.developerConfiguration.memoryOvercommit` must be a positive integer",
                "`spec.configuration.developerConfiguration.featureGates` must be a list",
            ]
        );
        assert_eq!(
            ClusterProfile::from_document(&json!({"cpuModel": 1, "machineType": 2})).unwrap_err(),
            "`spec.configuration.machineType` must be a string; \
             `spec.configuration.cpuModel` must be a string"
        );
        assert!(
            ClusterProfile::from_kubevirt(&json!({"network": {"defaultNetworkInterface": "tap"}}))
                .is_err()
        );
        assert!(ClusterProfile::from_kubevirt(&json!({"vmRolloutStrategy": "Later"})).is_err());
        assert!(
            ClusterProfile::from_kubevirt(
                &json!({"liveUpdateConfiguration": {"maxCpuSockets": -1}})
            )
            .is_err()
        );
        assert!(
            ClusterProfile::from_kubevirt(
                &json!({"liveUpdateConfiguration": {"maxGuest": "2 Gi"}})
            )
            .is_err()
        );
        let devices = |list: Value| {
            ClusterProfile::from_kubevirt(
                &json!({"permittedHostDevices": {"pciHostDevices": list}}),
            )
        };
        let at = "spec.configuration.permittedHostDevices.pciHostDevices";
        assert_eq!(
            devices(json!("10de:2342")),
            Err(format!("`{at}` must be a list"))
        );
        assert_eq!(
            devices(json!([{"resourceName": "a", "pciVendorSelector": 4}])),
            Err(format!("`{at}[0].pciVendorSelector` must be a string"))
        );
        assert_eq!(
            devices(json!([{}, "a"])),
            Err(format!("`{at}[1]` must be a mapping"))
        );
    }

    #[test]
    fn permitted_pci_devices_map_a_resource_to_its_last_selector() {
        let profile = ClusterProfile::from_kubevirt(&json!({"permittedHostDevices": {
            "pciHostDevices": [
                {"resourceName": "nvidia.com/GH100", "pciVendorSelector": "10de:2330"},
                {"resourceName": "nvidia.com/GH100", "pciVendorSelector": "10de:2342"},
                {"resourceName": "nvidia.com/GH100", "pciVendorSelector": ""},
                {"resourceName": "", "pciVendorSelector": "10de:2348"},
                {"pciVendorSelector": "10de:2941", "externalResourceProvider": true},
            ],
        }}))
        .expect("a configuration");
        let expected: BTreeMap<String, String> =
            [("nvidia.com/GH100".to_string(), "10de:2342".to_string())].into();
        assert_eq!(profile.pci_selectors, expected);
    }

    #[test]
    fn slirp_is_accepted_in_the_configuration() {
        let p = ClusterProfile::from_kubevirt(
            &json!({"network": {"defaultNetworkInterface": "slirp"}}),
        )
        .unwrap();
        assert_eq!(p.network_interface, "slirp");
    }

    #[test]
    fn the_configured_architecture_wins_over_the_status() {
        let cr = |config: Value, status: Value| {
            ClusterProfile::from_kubevirt(&json!({
                "kind": "KubeVirt", "spec": {"configuration": config}, "status": status
            }))
            .unwrap()
            .default_architecture
        };
        let arm = json!({"architectureConfiguration": {"defaultArchitecture": "arm64"}});
        assert_eq!(
            cr(arm.clone(), json!({"defaultArchitecture": "amd64"})),
            "arm64"
        );
        assert_eq!(cr(arm, json!({})), "arm64");
        assert_eq!(
            cr(json!({}), json!({"defaultArchitecture": "s390x"})),
            "s390x"
        );
        assert_eq!(cr(json!({}), json!({})), "amd64");
        let bare = json!({"architectureConfiguration": {"defaultArchitecture": "arm64"}});
        assert_eq!(
            ClusterProfile::from_document(&bare)
                .unwrap()
                .default_architecture,
            "arm64"
        );
    }

    #[test]
    fn rollout_strategy_and_live_update_limits() {
        let p = ClusterProfile::default();
        assert_eq!(p.hotplug, Some(Hotplug::default()));
        assert_eq!(Hotplug::default().ratio, 4);
        let stage = ClusterProfile::from_kubevirt(&json!({"vmRolloutStrategy": "Stage"})).unwrap();
        assert_eq!(stage.hotplug, None);
        let live = ClusterProfile::from_kubevirt(&json!({
            "vmRolloutStrategy": "LiveUpdate",
            "liveUpdateConfiguration": {"maxCpuSockets": 3, "maxGuest": "2048Mi"}
        }))
        .unwrap();
        assert_eq!(
            live.hotplug,
            Some(Hotplug {
                ratio: 4,
                max_cpu_sockets: 3,
                max_guest: Some("2Gi".into())
            })
        );
        // A zero ratio is Go's unset `omitempty` field: the default stays.
        let zero = ClusterProfile::from_kubevirt(
            &json!({"liveUpdateConfiguration": {"maxHotplugRatio": 0}}),
        )
        .unwrap();
        assert_eq!(zero.hotplug.unwrap().ratio, 4);
        let two = ClusterProfile::from_kubevirt(
            &json!({"liveUpdateConfiguration": {"maxHotplugRatio": 2}}),
        )
        .unwrap();
        assert_eq!(two.hotplug.unwrap().ratio, 2);
    }

    #[test]
    fn even_parity_needs_the_annotation_and_the_gate() {
        let cr = |annotations: Value, gates: Value| {
            ClusterProfile::from_kubevirt(&json!({
                "kind": "KubeVirt",
                "metadata": {"name": "kubevirt", "annotations": annotations},
                "spec": {"configuration": {"developerConfiguration": {"featureGates": gates}}}
            }))
            .unwrap()
            .emulator_thread_even_parity
        };
        let asked = json!({EVEN_PARITY_ANNOTATION: ""});
        assert!(cr(asked.clone(), json!(["AlignCPUs"])));
        assert!(!cr(asked, json!(["CPUManager"])));
        assert!(!cr(json!({}), json!(["AlignCPUs"])));
        // A bare configuration has no annotations.
        assert!(
            !ClusterProfile::from_kubevirt(
                &json!({"developerConfiguration": {"featureGates": ["AlignCPUs"]}})
            )
            .unwrap()
            .emulator_thread_even_parity
        );
    }

    #[test]
    fn a_beta_gate_is_on_unless_disabled() {
        let dev = |config: Value| {
            ClusterProfile::from_kubevirt(&json!({"developerConfiguration": config}))
                .map(|p| p.wait_as_receiver)
        };
        assert!(ClusterProfile::default().wait_as_receiver);
        assert_eq!(dev(json!({})), Ok(true));
        assert_eq!(
            dev(json!({"disabledFeatureGates": ["CPUManager"]})),
            Ok(true)
        );
        assert_eq!(
            dev(json!({"disabledFeatureGates": ["DecentralizedLiveMigration"]})),
            Ok(false)
        );
        assert_eq!(
            dev(json!({"featureGates": ["DecentralizedLiveMigration"],
                       "disabledFeatureGates": ["DecentralizedLiveMigration"]})),
            Ok(true)
        );
        assert!(dev(json!({"disabledFeatureGates": "DecentralizedLiveMigration"})).is_err());
    }

    #[test]
    fn persistent_reservation_follows_its_setting_then_the_gate() {
        let on = |config: Value| {
            ClusterProfile::from_kubevirt(&config).map(|p| p.persistent_reservation_on())
        };
        assert_eq!(ClusterProfile::default().persistent_reservation_on(), None);
        assert_eq!(on(json!({})), Ok(Some(false)));
        let gate = json!({"featureGates": ["PersistentReservation"]});
        assert_eq!(
            on(json!({"developerConfiguration": gate.clone()})),
            Ok(Some(true))
        );
        assert_eq!(
            on(json!({"developerConfiguration": gate,
                      "persistentReservationConfiguration": {"enabled": false}})),
            Ok(Some(false))
        );
        assert_eq!(
            on(json!({"persistentReservationConfiguration": {"enabled": true}})),
            Ok(Some(true))
        );
        assert!(on(json!({"persistentReservationConfiguration": {"enabled": "yes"}})).is_err());
    }

    #[test]
    fn configurations_kubevirt_would_drop_for_its_defaults_are_refused() {
        let read = |config: Value| ClusterProfile::from_kubevirt(&config);
        for bad in [
            json!({"developerConfiguration": {"cpuAllocationRatio": -1}}),
            json!({"developerConfiguration": {"cpuAllocationRatio": "10"}}),
            json!({"developerConfiguration": {"pvcTolerateLessSpaceUpToPercent": 101}}),
            json!({"developerConfiguration": {"pvcTolerateLessSpaceUpToPercent": -1}}),
            json!({"imagePullPolicy": "always"}),
            json!({"developerConfiguration": {"memoryOvercommit": -1}}),
            json!({"network": {"defaultNetworkInterface": "macvtap"}}),
        ] {
            assert!(read(bad.clone()).is_err(), "{bad}");
        }
        for good in [
            json!({"developerConfiguration": {"cpuAllocationRatio": 10,
                                              "pvcTolerateLessSpaceUpToPercent": 0}}),
            json!({"developerConfiguration": {"pvcTolerateLessSpaceUpToPercent": 100}}),
            // Not a field of KubeVirt's configuration (its Go name is): never read.
            json!({"developerConfiguration": {"lessPVCSpaceToleration": 101}}),
            json!({"imagePullPolicy": "IfNotPresent"}),
            json!({"imagePullPolicy": ""}),
        ] {
            assert!(read(good.clone()).is_ok(), "{good}");
        }
    }

    #[test]
    fn a_zero_overcommit_or_allocation_ratio_leaves_the_default() {
        let read = |config: Value| ClusterProfile::from_kubevirt(&config).unwrap();
        let zero = read(json!({"developerConfiguration": {
            "memoryOvercommit": 0, "cpuAllocationRatio": 0}, "machineType": "custom"}));
        let default = ClusterProfile::default();
        assert_eq!(zero.memory_overcommit, default.memory_overcommit);
        assert_eq!(zero.memory_overcommit, 100);
        assert_eq!(zero.machine_type.as_deref(), Some("custom"));
        let set = read(json!({"developerConfiguration": {"memoryOvercommit": 150}}));
        assert_eq!(set.memory_overcommit, 150);
    }

    #[test]
    fn an_empty_eviction_strategy_is_one() {
        let read = |config: Value| ClusterProfile::from_kubevirt(&config).unwrap();
        assert_eq!(
            read(json!({"evictionStrategy": ""}))
                .eviction_strategy
                .as_deref(),
            Some("")
        );
        assert_eq!(
            read(json!({"evictionStrategy": null}))
                .eviction_strategy
                .as_deref(),
            Some("None")
        );
        assert!(ClusterProfile::from_kubevirt(&json!({"evictionStrategy": 1})).is_err());
    }
}

//! The part of `KV034` that judges a spec's settings outside its disks, networks, CPUs and
//! memory: host name and subdomain, start strategy, I/O threads, CPU feature policies,
//! firmware, sound, video and panic devices, launch security, the devices behind feature
//! gates, and (for VirtualMachineInstances) what each architecture supports.
//!
//! Mirrors `ValidateVirtualMachineInstanceSpec`, `ValidateLaunchSecurityAmd64` and
//! `ValidateVirtualMachineInstancePerArch` of KubeVirt d923fdb815. Where KubeVirt's field path
//! is not where the setting lives (`spec.template.spec.acpi` for the firmware's ACPI tables,
//! `spec.template.spec.Sound`, `spec.template.spec.video`, `spec.template.spec.HostDevices`,
//! `spec.template.spec.launchSecurity`, `domain.ioThreads.count`), the finding names the
//! field that holds it.

use serde_json::Value;

use crate::kubevirt::defaults;
use crate::kubevirt::go_text::go_quote;
use crate::kubevirt::profile::{ClusterProfile, GateState};
use crate::model::glob;
use crate::model::ip;
use crate::model::names;
use crate::model::path::{self, is_set};
use crate::model::quantity::Quantity;

/// `ioThreadsPolicy` values.
const IO_THREADS_POLICIES: [&str; 3] = ["shared", "auto", "supplementalPool"];
/// CPU feature policies (an absent one is `""`).
const CPU_FEATURE_POLICIES: [&str; 6] = ["", "force", "require", "optional", "disable", "forbid"];
/// Panic device models.
const PANIC_DEVICE_MODELS: [&str; 3] = ["hyperv", "isa", "pvpanic"];
/// Eviction strategies.
const EVICTION_STRATEGIES: [&str; 4] = ["LiveMigrate", "LiveMigrateIfPossible", "None", "External"];
type Found = Vec<(String, String)>;

/// An item of a list in a spec (`spec.volumes[2]`), written out only for a finding.
#[derive(Clone, Copy)]
pub(super) struct Item<'a> {
    /// The spec's path.
    pub at: &'a str,
    /// The list's path below it.
    pub list: &'static str,
    /// The item's index.
    pub index: usize,
}

impl std::fmt::Display for Item<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}[{}]", self.at, self.list, self.index)
    }
}

/// The architecture a spec runs on: its own, else the cluster's default (KubeVirt's mutating
/// webhooks write it in).
pub(super) fn architecture<'a>(spec: &'a Value, profile: &'a ClusterProfile) -> &'a str {
    match path::str_at(spec, &["architecture"]) {
        Some(arch) if !arch.is_empty() => arch,
        // Judged as written, nothing has filled it in: KubeVirt reads an empty one.
        _ if profile.as_written => "",
        _ => &profile.default_architecture,
    }
}

/// The settings checks of `ValidateVirtualMachineInstanceSpec`, on the spec at `at`. `exact`
/// says the spec is what KubeVirt validates; otherwise a preference or preset may still give it
/// UEFI, and its absence is not judged.
pub(super) fn check(
    spec: &Value,
    at: &str,
    profile: &ClusterProfile,
    exact: bool,
    found: &mut Found,
) {
    let domain = spec.get("domain").unwrap_or(&Value::Null);
    let devices = domain.get("devices").unwrap_or(&Value::Null);
    names_in_dns(spec, at, found);
    machine_type(spec, at, profile, found);
    firmware_acpi(spec, at, found);
    cpu_feature_policies(domain, at, found);
    start_strategy(spec, at, found);
    io_threads(domain, at, found);
    probes(spec, at, profile.as_written, found);
    firmware(domain, at, found);
    gated_devices(domain, at, profile, found);
    virtiofs_storage(spec, devices, at, profile, found);
    if is_set(devices, &["downwardMetrics"]) && off(profile, "DownwardMetrics", GateState::Alpha) {
        found.push((
            format!("{at}.domain.devices.downwardMetrics"),
            "downwardMetrics virtio serial is not allowed: DownwardMetrics feature gate is not \
             enabled"
                .into(),
        ));
    }
    volumes(spec, at, profile, found);
    // An empty list is left out when KubeVirt decodes and encodes the VM on its way.
    let utility = path::get(spec, &["utilityVolumes"]).and_then(Value::as_array);
    if utility.is_some_and(|l| !l.is_empty()) {
        found.push((
            format!("{at}.utilityVolumes"),
            "cannot create VMI with utility volumes in spec, utility volumes can only be added \
             via hotplug"
                .into(),
        ));
    }
    access_credentials(spec, at, found);
    dns(spec, at, profile, found);
    if let Some(sound @ Value::Object(_)) = devices.get("sound") {
        let field = format!("{at}.domain.devices.sound");
        let model = path::str_at(sound, &["model"]).unwrap_or("");
        if !["", "ich9", "ac97"].contains(&model) {
            found.push((
                field.clone(),
                "Sound device type is not supported. Options: 'ich9' or 'ac97'".into(),
            ));
        }
        // Without a name at all, the API server refuses the object first (`KV004`).
        if path::str_at(sound, &["name"]) == Some("") {
            found.push((field, "Sound device requires a name field.".into()));
        }
    }
    // Without one of its own, the spec gets the cluster's (`--cluster-config`), which KubeVirt
    // does not check when it reads its configuration.
    // A spec judged as written has not been given the default yet: the webhook, naming the
    // strategy in its refusal, reads the one the spec does not have and fails.
    let (strategy, note) = match spec.get("evictionStrategy") {
        None | Some(Value::Null) if profile.as_written => (
            profile.eviction_strategy.as_deref(),
            " (the cluster configuration's default, which the spec does not override: \
             KubeVirt's webhook fails on it, reading the strategy the spec does not set, and \
             the API server refuses the object)",
        ),
        None | Some(Value::Null) => (
            profile.eviction_strategy.as_deref(),
            " (the cluster configuration's default, which the spec does not override)",
        ),
        Some(strategy) => (strategy.as_str(), ""),
    };
    if let Some(strategy) = strategy
        && !EVICTION_STRATEGIES.contains(&strategy)
    {
        let field = format!("{at}.evictionStrategy");
        let message = format!("{field} is set with an unrecognized option: {strategy}{note}");
        found.push((field, message));
    }
    launch_security(spec, domain, at, profile, exact, found);
    if is_set(devices, &["video"]) && devices.get("autoattachGraphicsDevice") == Some(&false.into())
    {
        found.push((
            format!("{at}.domain.devices.video"),
            "Video configuration is not allowed when autoattachGraphicsDevice is set to false"
                .into(),
        ));
    }
    panic_devices(spec, devices, at, profile, found);
    ramfb_displays(devices, at, found);
    service_account(spec, at, found);
}

/// At most one GPU may show its display through ramfb. A display, and its ramfb, is on unless
/// it says `enabled: false` (KubeVirt's `validateMDEVRamFB`).
fn ramfb_displays(devices: &Value, at: &str, found: &mut Found) {
    let on = |v: Option<&Value>| v.is_none_or(|v| v.get("enabled").is_none_or(|e| *e != false));
    let count = devices
        .get("gpus")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|gpu| path::get(gpu, &["virtualGPUOptions", "display"]))
        .filter(|display| display.is_object())
        .filter(|display| on(Some(display)) && on(display.get("ramFB").filter(|r| !r.is_null())))
        .count();
    if count > 1 {
        found.push((
            format!("{at}.domain.devices.gpus"),
            // KubeVirt's words, its trailing space aside.
            "configuring multiple displays with ramfb is not valid".into(),
        ));
    }
}

/// A service account's name is a DNS subdomain, and every `serviceAccount` volume names the
/// same account as the spec (KubeVirt's `validateServiceAccountName`).
fn service_account(spec: &Value, at: &str, found: &mut Found) {
    let Some(account) = path::str_at(spec, &["serviceAccountName"]).filter(|a| !a.is_empty())
    else {
        return;
    };
    let field = format!("{at}.serviceAccountName");
    let errors = names::dns_subdomain_errors(account);
    if !errors.is_empty() {
        let message = format!(
            "{field} is not a valid service account name: {}",
            errors.join("; ")
        );
        found.push((field.clone(), message));
    }
    let other = path::get(spec, &["volumes"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|volume| volume.get("serviceAccount").filter(|v| !v.is_null()))
        .map(|source| path::str_at(source, &["serviceAccountName"]).unwrap_or(""))
        .find(|name| *name != account);
    if let Some(other) = other {
        let message = format!(
            "spec.serviceAccountName {} and serviceAccount volume {} must reference the same \
             service account",
            go_quote(account),
            go_quote(other)
        );
        found.push((field, message));
    }
}

/// `hostname` is a DNS label and `subdomain` a DNS subdomain, in Kubernetes' words.
fn names_in_dns(spec: &Value, at: &str, found: &mut Found) {
    if let Some(host) = path::str_at(spec, &["hostname"]).filter(|h| !h.is_empty()) {
        let errors = names::dns_label_errors(host);
        dns_rules(format!("{at}.hostname"), "DNS_LABEL", &errors, found);
    }
    if let Some(sub) = path::str_at(spec, &["subdomain"]).filter(|s| !s.is_empty()) {
        let errors = names::dns_subdomain_errors(sub);
        dns_rules(format!("{at}.subdomain"), "DNS_SUBDOMAIN", &errors, found);
    }
}

/// The finding for a name that breaks the DNS `rules`, if it does.
fn dns_rules(field: String, rules: &str, errors: &[&str], found: &mut Found) {
    if !errors.is_empty() {
        let message = format!(
            "{field} does not conform to the kubernetes {rules} rules : {}",
            errors.join(", ")
        );
        found.push((field, message));
    }
}

/// The machine type (the spec's, else the cluster's default for the architecture, which
/// KubeVirt's defaults write in) is one of the patterns the cluster allows.
fn machine_type(spec: &Value, at: &str, profile: &ClusterProfile, found: &mut Found) {
    let arch = architecture(spec, profile);
    let machine = match path::str_at(spec, &["domain", "machine", "type"]) {
        Some(m) if !m.is_empty() => m,
        _ if profile.as_written => return,
        _ => profile.machine_type_for(arch),
    };
    let allowed = profile.emulated_machines_for(arch);
    if machine.is_empty() || allowed.iter().any(|p| glob::matches(p, machine)) {
        return;
    }
    let field = format!("{at}.domain.machine.type");
    let message = format!(
        "{field} is not supported: {machine} (allowed values: [{}])",
        allowed.join(" ")
    );
    found.push((field, message));
}

/// Each probe has one handler, and HTTP and TCP probes need the pod network (which a spec without
/// networks gets by default, unless it is judged `as_written`).
fn probes(spec: &Value, at: &str, as_written: bool, found: &mut Found) {
    // The defaults add the pod network to a spec with no networks and no interfaces.
    let pod_network = (defaults::needs_default_interface(spec) && !as_written)
        || path::get(spec, &["networks"])
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|n| is_set(n, &["pod"]));
    for kind in ["readinessProbe", "livenessProbe"] {
        let Some(probe @ Value::Object(_)) = spec.get(kind) else {
            continue;
        };
        let field = format!("{at}.{kind}");
        let handlers = ["httpGet", "tcpSocket", "exec", "guestAgentPing"]
            .iter()
            .filter(|h| is_set(probe, &[h]))
            .count();
        if handlers > 1 {
            let message = format!("{field} must have exactly one probe type set");
            found.push((field.clone(), message));
        }
        if handlers < 1 {
            let message = format!(
                "either {field}.tcpSocket, {field}.exec or {field}.httpGet must be set if a \
                 {field} is specified"
            );
            found.push((field.clone(), message));
        }
        if !pod_network {
            for handler in ["httpGet", "tcpSocket"] {
                if is_set(probe, &[handler]) {
                    let field = format!("{field}.{handler}");
                    let message = format!("{field} is only allowed if the Pod Network is attached");
                    found.push((field, message));
                }
            }
        }
    }
}

/// The firmware of the domain: a boot loader that is not both EFI and BIOS, and a kernel boot
/// (KubeVirt's `validateFirmware`, which its preset webhook runs too).
pub(super) fn firmware(domain: &Value, at: &str, found: &mut Found) {
    if let Some(bootloader) = path::get(domain, &["firmware", "bootloader"])
        && is_set(bootloader, &["efi"])
        && is_set(bootloader, &["bios"])
    {
        let field = format!("{at}.domain.firmware.bootloader");
        found.push((
            field.clone(),
            format!("{field} has both EFI and BIOS configured, but they are mutually exclusive."),
        ));
    }
    kernel_boot(domain, at, found);
}

/// A kernel boot from a container names the image and a kernel or an initrd at absolute
/// paths; kernel arguments need that container.
fn kernel_boot(domain: &Value, at: &str, found: &mut Found) {
    let Some(kernel_boot @ Value::Object(_)) = path::get(domain, &["firmware", "kernelBoot"])
    else {
        return;
    };
    let field = format!("{at}.domain.firmware.kernelBoot");
    let Some(container @ Value::Object(_)) = kernel_boot.get("container") else {
        if !path::str_at(kernel_boot, &["kernelArgs"])
            .unwrap_or("")
            .is_empty()
        {
            found.push((
                format!("{field}.kernelArgs"),
                "kernel arguments cannot be provided without an external kernel".into(),
            ));
        }
        return;
    };
    let container_at = format!("{field}.container");
    if path::str_at(container, &["image"]).unwrap_or("").is_empty() {
        found.push((
            format!("{container_at}.image"),
            format!("{container_at} must be defined with an image"),
        ));
    }
    let kernel = path::str_at(container, &["kernelPath"]).unwrap_or("");
    let initrd = path::str_at(container, &["initrdPath"]).unwrap_or("");
    if kernel.is_empty() && initrd.is_empty() {
        found.push((
            container_at.clone(),
            format!(
                "{container_at} must be defined with at least one of the following: \
                 kernelPath, initrdPath"
            ),
        ));
    }
    for (key, file) in [("kernelPath", kernel), ("initrdPath", initrd)] {
        if !file.is_empty() {
            absolute_path(&format!("{container_at}.{key}"), file, found);
        }
    }
}

/// A path into a container image is absolute, not `/`, and already clean
/// (`storageadmitters.ValidatePath`).
fn absolute_path(field: &str, file: &str, found: &mut Found) {
    if file == "/" {
        found.push((field.into(), format!("{field} must not point to root")));
        return;
    }
    // Go's `filepath.Join("/", file)`: the path cleaned, from the root.
    let mut parts: Vec<&str> = Vec::new();
    for part in file.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    let cleaned = format!("/{}", parts.join("/"));
    if cleaned != file.strip_suffix('/').unwrap_or(file) {
        found.push((
            field.into(),
            format!("{field} must be an absolute path to a file without relative components"),
        ));
    }
}

/// ACPI tables name at least one volume, and each named one is a Secret volume.
fn firmware_acpi(spec: &Value, at: &str, found: &mut Found) {
    let Some(acpi @ Value::Object(_)) = path::get(spec, &["domain", "firmware", "acpi"]) else {
        return;
    };
    let field = format!("{at}.domain.firmware.acpi");
    let refs: Vec<(&str, &str)> = ["slicNameRef", "msdmNameRef"]
        .into_iter()
        .filter_map(|key| Some((key, path::str_at(acpi, &[key]).filter(|r| !r.is_empty())?)))
        .collect();
    if refs.is_empty() {
        found.push((
            field,
            "ACPI was set but no SLIC nor MSDM volume reference was set".into(),
        ));
        return;
    }
    let volumes = path::get(spec, &["volumes"]).and_then(Value::as_array);
    for (key, name) in refs {
        // The first volume of the name decides.
        let volume = volumes
            .into_iter()
            .flatten()
            .find(|v| path::str_at(v, &["name"]).unwrap_or("") == name);
        let message = match volume {
            Some(v) if is_set(v, &["secret"]) => continue,
            Some(_) => format!("{field} refers to Volume of unsupported type."),
            None => format!("{field} does not have a matching Volume."),
        };
        found.push((format!("{field}.{key}"), message));
    }
}

/// Each CPU feature's policy is one libvirt knows.
fn cpu_feature_policies(domain: &Value, at: &str, found: &mut Found) {
    let features = path::get(domain, &["cpu", "features"]).and_then(Value::as_array);
    for (i, feature) in features.into_iter().flatten().enumerate() {
        let policy = path::str_at(feature, &["policy"]).unwrap_or("");
        if !CPU_FEATURE_POLICIES.contains(&policy) {
            let name = path::str_at(feature, &["name"]).unwrap_or("");
            found.push((
                format!("{at}.domain.cpu.features[{i}].policy"),
                format!("CPU feature {name} uses policy {policy} that is not supported."),
            ));
        }
    }
}

/// `startStrategy` is `Paused`, and a paused VM has no liveness probe.
fn start_strategy(spec: &Value, at: &str, found: &mut Found) {
    let Some(strategy) = spec.get("startStrategy").and_then(Value::as_str) else {
        return;
    };
    let field = format!("{at}.startStrategy");
    if strategy != "Paused" {
        let message = format!("{field} is set with an unrecognized option: {strategy}");
        found.push((field, message));
    } else if is_set(spec, &["livenessProbe"]) {
        let message = format!(
            "either {field} or {at}.livenessProbe should be provided.Pausing VMI with \
             LivenessProbe is not supported"
        );
        found.push((field, message));
    }
}

/// `ioThreadsPolicy` is one KubeVirt knows, and `supplementalPool` comes with a thread count.
pub(crate) fn io_threads(domain: &Value, at: &str, found: &mut Found) {
    let Some(policy) = domain.get("ioThreadsPolicy").and_then(Value::as_str) else {
        return;
    };
    if !IO_THREADS_POLICIES.contains(&policy) {
        found.push((
            format!("{at}.domain.ioThreadsPolicy"),
            format!("Invalid IOThreadsPolicy ({policy})"),
        ));
    }
    let count = path::get(domain, &["ioThreads", "supplementalPoolThreadCount"])
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if policy == "supplementalPool" && count < 1 {
        found.push((
            format!("{at}.domain.ioThreads.supplementalPoolThreadCount"),
            "the number of iothreads needs to be set and positive for the dedicated policy".into(),
        ));
    }
}

/// Whether the cluster profile says the feature gate `gate` is off (not when it is unknown).
pub(super) fn off(profile: &ClusterProfile, gate: &str, state: GateState) -> bool {
    profile.gate_on(gate, state) == Some(false)
}

/// Downward metrics and host disk volumes need their feature gates, and a host disk names a
/// path, a type KubeVirt knows, and a capacity only when it may create the image.
fn volumes(spec: &Value, at: &str, profile: &ClusterProfile, found: &mut Found) {
    let volumes = path::get(spec, &["volumes"]).and_then(Value::as_array);
    for (kind, what) in [
        ("serviceAccount", "serviceAccount volume"),
        ("downwardMetrics", "downwardMetric volume"),
        ("memoryDump", "memory dump volume"),
    ] {
        if volumes
            .into_iter()
            .flatten()
            .filter(|v| is_set(v, &[kind]))
            .count()
            > 1
        {
            found.push((
                format!("{at}.volumes"),
                format!("{at}.volumes must have max one {what} set"),
            ));
        }
    }
    for (i, volume) in volumes.into_iter().flatten().enumerate() {
        let volume_at = Item {
            at,
            list: "volumes",
            index: i,
        };
        volume_sources(volume, volume_at, found);
        if let Some(file) =
            path::str_at(volume, &["containerDisk", "path"]).filter(|p| !p.is_empty())
        {
            absolute_path(&format!("{volume_at}.containerDisk"), file, found);
        }
        if is_set(volume, &["downwardMetrics"]) && off(profile, "DownwardMetrics", GateState::Alpha)
        {
            found.push((
                volume_at.to_string(),
                "downwardMetrics disks are not allowed: DownwardMetrics feature gate is not \
                 enabled."
                    .into(),
            ));
        }
        let Some(host_disk @ Value::Object(_)) = volume.get("hostDisk") else {
            continue;
        };
        if off(profile, "HostDisk", GateState::Alpha) {
            found.push((
                volume_at.to_string(),
                "HostDisk feature gate is not enabled".into(),
            ));
        }
        // Without `path` or `type` at all, the API server refuses the object first (`KV004`).
        if path::str_at(host_disk, &["path"]) == Some("") {
            let field = format!("{volume_at}.hostDisk.path");
            let message = format!("{field} is required for hostDisk volume");
            found.push((field, message));
        }
        let kind = path::str_at(host_disk, &["type"]);
        let type_at = || format!("{volume_at}.hostDisk.type");
        if let Some(kind) = kind.filter(|k| !["Disk", "DiskOrCreate"].contains(k)) {
            let type_at = type_at();
            found.push((
                type_at.clone(),
                format!(
                    "{type_at} has invalid value '{kind}', allowed are 'Disk' or 'DiskOrCreate'"
                ),
            ));
        }
        let capacity = host_disk.get("capacity").and_then(Quantity::from_json);
        if kind == Some("Disk") && capacity.is_some_and(|c| !c.is_zero()) {
            let field = format!("{volume_at}.hostDisk.capacity");
            let message = format!(
                "{field} is allowed to pass only with {} equal to 'DiskOrCreate'",
                type_at()
            );
            found.push((field, message));
        }
    }
}

/// What a volume's source must name, and the size and spelling of cloud-init data.
fn volume_sources(volume: &Value, volume_at: Item<'_>, found: &mut Found) {
    if is_set(volume, &["dataVolume"])
        && path::str_at(volume, &["dataVolume", "name"])
            .unwrap_or("")
            .is_empty()
    {
        found.push((
            format!("{volume_at}.name"),
            "DataVolume 'name' must be set".into(),
        ));
    }
    let cloud_init = ["cloudInitNoCloud", "cloudInitConfigDrive"]
        .into_iter()
        .find(|kind| is_set(volume, &[kind]));
    if let Some(kind) = cloud_init {
        cloud_init_data(&volume[kind], &format!("{volume_at}.{kind}"), kind, found);
    }
    for (source, key) in [
        ("configMap", "name"),
        ("secret", "secretName"),
        ("serviceAccount", "serviceAccountName"),
    ] {
        if is_set(volume, &[source])
            && path::str_at(volume, &[source, key])
                .unwrap_or("")
                .is_empty()
        {
            let field = format!("{volume_at}.{source}.{key}");
            let message = format!("{field} is a required field");
            found.push((field, message));
        }
    }
}

/// Cloud-init user data and network data: one source each, at least one of the two, valid
/// base64 where encoded, and at most 2048 bytes inline.
fn cloud_init_data(source: &Value, field: &str, kind: &str, found: &mut Found) {
    let mut counts = [0, 0];
    // The user data's Secret is `secretRef` (`UserDataSecretRef` in Go).
    for (n, (data, label, ref_key, secret_ref)) in [
        ("userData", "userdata", "secretRef", "UserDataSecretRef"),
        (
            "networkData",
            "networkdata",
            "networkDataSecretRef",
            "NetworkDataSecretRef",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let text = |key: &str| path::str_at(source, &[key]).unwrap_or("");
        let mut len = 0;
        if !path::str_at(source, &[ref_key, "name"])
            .unwrap_or("")
            .is_empty()
        {
            counts[n] += 1;
        }
        let encoded = text(&format!("{data}Base64"));
        if !encoded.is_empty() {
            counts[n] += 1;
            let (decoded, valid) = base64_decoded_len(encoded);
            if !valid {
                let at = format!("{field}.{data}Base64");
                found.push((
                    at.clone(),
                    format!("{at}.{kind}.{data}Base64 is not a valid base64 value."),
                ));
            }
            len = decoded;
        }
        if !text(data).is_empty() {
            counts[n] += 1;
            len = text(data).len();
        }
        if counts[n] > 1 {
            let what = if n == 0 {
                "userdatasource"
            } else {
                "networkdata source"
            };
            found.push((
                field.into(),
                format!("{field} must have only one {what} set."),
            ));
        }
        if len > 2048 {
            found.push((
                field.into(),
                format!(
                    "{field} {label} exceeds 2048 byte limit. Should use {secret_ref} for larger \
                     data."
                ),
            ));
        }
    }
    if counts == [0, 0] {
        found.push((
            field.into(),
            format!("{field} must have at least one userdatasource or one networkdatasource set."),
        ));
    }
}

/// The length Go's `base64.StdEncoding.DecodeString` decodes `text` to, and whether it is
/// valid: padded standard base64, line breaks ignored. On an error, the length decoded before
/// it.
fn base64_decoded_len(text: &str) -> (usize, bool) {
    let value = |b: u8| b.is_ascii_alphanumeric() || b == b'+' || b == b'/';
    let chars: Vec<u8> = text
        .bytes()
        .filter(|b| *b != b'\n' && *b != b'\r')
        .collect();
    let mut len = 0;
    for (q, quantum) in chars.chunks(4).enumerate() {
        let last = (q + 1) * 4 >= chars.len();
        let pads = quantum.iter().rev().take_while(|b| **b == b'=').count();
        let data = &quantum[..quantum.len() - pads];
        let valid = quantum.len() == 4
            && pads <= 2
            && (pads == 0 || last)
            && data.iter().all(|b| value(*b));
        if !valid {
            return (len, false);
        }
        len += 3 - pads;
    }
    (len, true)
}

/// The DNS policy is one Kubernetes knows (the webhook's schema check says so), and the DNS
/// configuration has nameservers when the
/// policy is `None`, at most three of them, IP addresses, at most six search domains in 256
/// characters, each a DNS subdomain, and options with names. KubeVirt names the fields
/// `nameservers`, `searchDomains` and `options`; the findings name them below `dnsConfig`.
fn dns(spec: &Value, at: &str, profile: &ClusterProfile, found: &mut Found) {
    let given = path::str_at(spec, &["dnsPolicy"]);
    let policy = given.unwrap_or("");
    // An empty policy is left out when a mutating webhook writes the spec back first.
    let empty_refused = profile.schema_as_written && given == Some("");
    if empty_refused
        || ![
            "",
            "ClusterFirstWithHostNet",
            "ClusterFirst",
            "Default",
            "None",
        ]
        .contains(&policy)
    {
        // The webhook's schema check refuses it first, in these words; a pool's template, which
        // it does not see, is refused in the words of KubeVirt's own check.
        let field = format!("{at}.dnsPolicy");
        let message = if profile.as_written && !profile.schema_as_written {
            format!(
                "DNSPolicy: {policy} is not supported, valid values: [ClusterFirstWithHostNet \
                 ClusterFirst Default None ]"
            )
        } else {
            format!(
                "{field} in body should be one of [ClusterFirst ClusterFirstWithHostNet Default \
                 None]"
            )
        };
        found.push((field, message));
    }
    let config = spec.get("dnsConfig").filter(|c| !c.is_null());
    let list = |key: &str| -> Vec<&str> {
        let items = config.and_then(|c| c.get(key)).and_then(Value::as_array);
        items
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect()
    };
    // KubeVirt's decoder writes the nameservers that parse in canonical form.
    let nameservers: Vec<(&str, Option<String>)> = list("nameservers")
        .into_iter()
        .map(|ns| (ns, ip::sanitized(ns)))
        .collect();
    let field = |key: &str| format!("{at}.dnsConfig.{key}");
    if policy == "None" {
        if config.is_none() {
            found.push((
                format!("{at}.dnsConfig"),
                "must provide `dnsConfig` when `dnsPolicy` is None".into(),
            ));
            return;
        }
        if nameservers.is_empty() {
            found.push((
                field("nameservers"),
                "must provide at least one DNS nameserver when `dnsPolicy` is None".into(),
            ));
            return;
        }
    }
    if config.is_none() {
        return;
    }
    if nameservers.len() > 3 {
        let shown: Vec<&str> = nameservers
            .iter()
            .map(|(ns, canonical)| canonical.as_deref().unwrap_or(ns))
            .collect();
        found.push((
            field("nameservers"),
            format!(
                "must not have more than 3 nameservers: [{}]",
                shown.join(" ")
            ),
        ));
    }
    for (ns, canonical) in &nameservers {
        if canonical.is_none() {
            found.push((
                field("nameservers"),
                format!("must be valid IP address: {ns}"),
            ));
        }
    }
    let searches = list("searches");
    if searches.len() > 6 {
        found.push((
            field("searches"),
            "must not have more than 6 search paths".into(),
        ));
    }
    if searches.iter().map(|s| s.len()).sum::<usize>() + searches.len().saturating_sub(1) > 256 {
        found.push((
            field("searches"),
            "must not have more than 256 characters (including spaces) in the search list".into(),
        ));
    }
    for search in &searches {
        for error in names::dns_subdomain_errors(search) {
            found.push((field("searches"), error.into()));
        }
    }
    let options = config
        .and_then(|c| c.get("options"))
        .and_then(Value::as_array);
    for option in options.into_iter().flatten() {
        if path::str_at(option, &["name"]).unwrap_or("").is_empty() {
            found.push((field("options"), "Option.Name must not be empty".into()));
        }
    }
}

/// Access credentials: one type each, with one source and one propagation method, and the
/// cloud-init volume or the users that method needs.
fn access_credentials(spec: &Value, at: &str, found: &mut Found) {
    let volumes = path::get(spec, &["volumes"]).and_then(Value::as_array);
    let has = |kind: &str| volumes.into_iter().flatten().any(|v| is_set(v, &[kind]));
    let credentials = path::get(spec, &["accessCredentials"]).and_then(Value::as_array);
    for (i, credential) in credentials.into_iter().flatten().enumerate() {
        let cred_at = format!("{at}.accessCredentials[{i}]");
        let mut count = 0;
        if let Some(ssh) = credential.get("sshPublicKey").filter(|v| !v.is_null()) {
            count += 1;
            let method_at = format!("{cred_at}.sshPublicKey.propagationMethod");
            let method = ssh.get("propagationMethod").unwrap_or(&Value::Null);
            let mut methods = 0;
            for (key, volume, name) in [
                ("noCloud", "cloudInitNoCloud", "noCloud"),
                ("configDrive", "cloudInitConfigDrive", "configDrive"),
            ] {
                if is_set(method, &[key]) {
                    methods += 1;
                    if !has(volume) {
                        found.push((
                            method_at.clone(),
                            format!(
                                "{cred_at} requires a {name} volume to exist when the {name} \
                                 propagationMethod is in use."
                            ),
                        ));
                    }
                }
            }
            if let Some(agent) = method.get("qemuGuestAgent").filter(|v| !v.is_null()) {
                let users = agent.get("users").and_then(Value::as_array);
                if users.is_none_or(Vec::is_empty) {
                    found.push((
                        format!("{method_at}.qemuGuestAgent.users"),
                        format!(
                            "{cred_at} requires at least one user to be present in the users list"
                        ),
                    ));
                }
                methods += 1;
            }
            one_source_and_method(ssh, &cred_at, "sshPublicKey", methods, found);
        }
        if let Some(password) = credential.get("userPassword").filter(|v| !v.is_null()) {
            count += 1;
            let methods = usize::from(is_set(password, &["propagationMethod", "qemuGuestAgent"]));
            one_source_and_method(password, &cred_at, "userPassword", methods, found);
        }
        if count != 1 {
            found.push((
                cred_at.clone(),
                format!("{cred_at} must have exactly one access credential type set"),
            ));
        }
    }
}

/// An access credential's one Secret source and one propagation method.
fn one_source_and_method(
    credential: &Value,
    cred_at: &str,
    kind: &str,
    methods: usize,
    found: &mut Found,
) {
    if !is_set(credential, &["source", "secret"]) {
        found.push((
            format!("{cred_at}.{kind}.source"),
            format!("{cred_at} must have exactly one source set"),
        ));
    }
    if methods != 1 {
        found.push((
            format!("{cred_at}.{kind}.propagationMethod"),
            format!("{cred_at} must have exactly one propagationMethod set"),
        ));
    }
}

/// Devices and settings that need a feature gate, when the cluster profile says it is off.
fn gated_devices(domain: &Value, at: &str, profile: &ClusterProfile, found: &mut Found) {
    // An empty list is left out when KubeVirt decodes and encodes the VM on its way, not when
    // it judges a pool's template as written.
    let host_devices = path::get(domain, &["devices", "hostDevices"]).and_then(Value::as_array);
    if host_devices.is_some_and(|l| profile.as_written || !l.is_empty())
        && off(profile, "HostDevices", GateState::Alpha)
    {
        found.push((
            format!("{at}.domain.devices.hostDevices"),
            "Host Devices feature gate is not enabled in kubevirt-config".into(),
        ));
    }
    if path::get(domain, &["devices", "autoattachVSOCK"]) == Some(&true.into())
        && off(profile, "VSOCK", GateState::Alpha)
    {
        found.push((
            format!("{at}.domain.devices.autoattachVSOCK"),
            "VSOCK feature gate is not enabled in kubevirt-config".into(),
        ));
    }
    if is_set(domain, &["rebootPolicy"]) && off(profile, "RebootPolicy", GateState::Beta) {
        found.push((
            format!("{at}.domain.rebootPolicy"),
            "RebootPolicy is specified but the RebootPolicy feature gate is not enabled".into(),
        ));
    }
    if is_set(domain, &["memory", "reservedOverhead"])
        && off(profile, "ReservedOverheadMemlock", GateState::Alpha)
    {
        found.push((
            format!("{at}.domain.memory.reservedOverhead"),
            "Reserved overhead memlock feature gate is not enabled in kubevirt-config".into(),
        ));
    }
    let disks = path::get(domain, &["devices", "disks"]).and_then(Value::as_array);
    let reserving = disks
        .into_iter()
        .flatten()
        .position(|d| path::get(d, &["lun", "reservation"]) == Some(&true.into()));
    if let Some(i) = reserving
        && profile.persistent_reservation_on() == Some(false)
    {
        found.push((
            format!("{at}.domain.devices.disks[{i}].lun.reservation"),
            "persistent reservation is not enabled in kubevirt config".into(),
        ));
    }
}

/// Labels KubeVirt keeps for itself: only its own service accounts may set them on a VMI.
const RESTRICTED_LABELS: [&str; 6] = [
    "kubevirt.io/created-by",
    "kubevirt.io/migrationJobUID",
    "kubevirt.io/nodeName",
    "kubevirt.io/migrationTargetNodeName",
    "kubevirt.io/schedulable",
    "kubevirt.io/install-strategy",
];

/// KubeVirt's refusal of a VMI that a user creates with labels KubeVirt keeps for itself.
pub const RESERVED_LABELS: &str =
    "creation of the following reserved kubevirt.io/ labels on a VMI object is prohibited";

/// The VMI's metadata (a VM's template's): none of the labels KubeVirt keeps for itself unless
/// KubeVirt's own controller writes it (`by_user` false: the VMI a VM starts), and Ignition data
/// or sidecar hooks only with their alpha gates (`ValidateVirtualMachineInstanceMetadata`).
pub(super) fn metadata(
    meta: &Value,
    at: &str,
    by_user: bool,
    profile: &ClusterProfile,
    found: &mut Found,
) {
    if by_user
        && let Some(labels) = meta.get("labels").and_then(Value::as_object)
        && labels
            .keys()
            .any(|k| RESTRICTED_LABELS.contains(&k.as_str()))
    {
        found.push((format!("{at}.labels"), RESERVED_LABELS.into()));
    }
    let annotations = meta.get("annotations").unwrap_or(&Value::Null);
    for (key, gate, what) in [
        (
            "kubevirt.io/ignitiondata",
            "ExperimentalIgnitionSupport",
            "ExperimentalIgnitionSupport",
        ),
        ("hooks.kubevirt.io/hookSidecars", "Sidecar", "sidecar"),
    ] {
        let given = annotations.get(key).and_then(Value::as_str);
        if given.is_some_and(|v| !v.is_empty()) && off(profile, gate, GateState::Alpha) {
            found.push((
                format!("{at}.annotations"),
                format!(
                    "{what} feature gate is not enabled in kubevirt-config, invalid entry \
                     {at}.annotations.{key}"
                ),
            ));
        }
    }
}

/// A filesystem shared over virtiofs from a claim or a DataVolume needs the
/// `EnableVirtioFsStorageVolumes` gate (one finding per such filesystem, as KubeVirt gives).
fn virtiofs_storage(
    spec: &Value,
    devices: &Value,
    at: &str,
    profile: &ClusterProfile,
    found: &mut Found,
) {
    let Some(filesystems) = devices.get("filesystems").and_then(Value::as_array) else {
        return;
    };
    if !off(profile, "EnableVirtioFsStorageVolumes", GateState::Alpha) {
        return;
    }
    let volumes = path::get(spec, &["volumes"]).and_then(Value::as_array);
    for fs in filesystems {
        let name = path::str_at(fs, &["name"]).unwrap_or("");
        // The last volume of the name counts, as in KubeVirt's map of volumes by name.
        let volume = volumes
            .into_iter()
            .flatten()
            .rfind(|v| path::str_at(v, &["name"]).unwrap_or("") == name);
        if volume
            .is_some_and(|v| is_set(v, &["persistentVolumeClaim"]) || is_set(v, &["dataVolume"]))
        {
            found.push((
                format!("{at}.domain.devices.filesystems"),
                "virtiofs is not allowed: virtiofs feature gate is not enabled for PVC".into(),
            ));
        }
    }
}

/// SEV, SNP and TDX: one at a time, on amd64 (or s390x, which needs nothing more), with its
/// feature gate, with UEFI, and with the firmware settings and boot devices each supports.
fn launch_security(
    spec: &Value,
    domain: &Value,
    at: &str,
    profile: &ClusterProfile,
    exact: bool,
    found: &mut Found,
) {
    let Some(ls @ Value::Object(_)) = domain.get("launchSecurity") else {
        return;
    };
    let field = format!("{at}.domain.launchSecurity");
    match architecture(spec, profile) {
        "amd64" => {}
        "s390x" => return,
        arch => {
            found.push((
                format!("{at}.architecture"),
                format!("No launchSecurity support for architecture: {arch}"),
            ));
            return;
        }
    }
    let (sev, snp, tdx) = (
        is_set(ls, &["sev"]),
        is_set(ls, &["snp"]),
        is_set(ls, &["tdx"]),
    );
    let chosen = match (sev, snp, tdx) {
        (true, false, false) => "SEV",
        (false, true, false) => "SNP",
        (false, false, true) => "TDX",
        _ => {
            let mut message = String::from("One and only one launchSecurity type can be set");
            // An empty `launchSecurity: {}` is how IBM Secure Execution is asked for on s390x;
            // on amd64 it names no type. Say so when the amd64 came from the cluster's default.
            let unnamed = path::str_at(spec, &["architecture"]).is_none_or(str::is_empty);
            if ls.as_object().is_some_and(serde_json::Map::is_empty) && unnamed {
                message.push_str(
                    " (an empty `launchSecurity` asks for IBM Secure Execution, which needs \
                     s390x: this VM names no `architecture`, so the cluster's default, amd64, \
                     applies; set `architecture: s390x`, or give the cluster's default with \
                     --cluster-config)",
                );
            }
            found.push((field, message));
            return;
        }
    };
    let (gate, state) = if tdx {
        ("WorkloadEncryptionTDX", GateState::Alpha)
    } else {
        ("WorkloadEncryptionSEV", GateState::Beta)
    };
    if profile.gate_on(gate, state) == Some(false) {
        found.push((
            field,
            format!("{gate} feature gate is not enabled in kubevirt-config"),
        ));
        return;
    }
    let smm = path::get(domain, &["features", "smm"]).filter(|v| !v.is_null());
    if tdx && smm.is_some_and(|s| s.get("enabled") != Some(&false.into())) {
        found.push((field.clone(), "TDX does not work along with SMM".into()));
    }
    match path::get(domain, &["firmware", "bootloader", "efi"]).filter(|v| !v.is_null()) {
        None if exact => found.push((field.clone(), format!("{chosen} requires OVMF (UEFI)"))),
        None => {}
        Some(efi) => {
            if (sev || snp) && efi.get("secureBoot") != Some(&false.into()) {
                found.push((
                    field.clone(),
                    format!("{chosen} does not work along with SecureBoot"),
                ));
            }
            if (snp || tdx) && efi.get("persistent") == Some(&true.into()) {
                found.push((
                    field.clone(),
                    format!("{chosen} does not work along with Persistent EFI variables"),
                ));
            }
        }
    }
    if sev
        && spec.get("startStrategy").and_then(Value::as_str) != Some("Paused")
        && is_set(ls, &["sev", "attestation"])
    {
        found.push((
            field.clone(),
            "SEV attestation requires VMI StartStrategy 'Paused'".into(),
        ));
    }
    let interfaces = path::get(domain, &["devices", "interfaces"]).and_then(Value::as_array);
    for iface in interfaces.into_iter().flatten() {
        if is_set(iface, &["bootOrder"]) {
            let name = path::str_at(iface, &["name"]).unwrap_or("");
            found.push((
                field.clone(),
                format!("{chosen} does not work with bootable NICs: {name}"),
            ));
        }
    }
}

/// Panic devices are not for s390x, and each model is one KubeVirt knows.
fn panic_devices(
    spec: &Value,
    devices: &Value,
    at: &str,
    profile: &ClusterProfile,
    found: &mut Found,
) {
    let Some(list) = devices
        .get("panicDevices")
        .and_then(Value::as_array)
        .filter(|l| !l.is_empty())
    else {
        return;
    };
    let field = format!("{at}.domain.devices.panicDevices");
    if architecture(spec, profile) == "s390x" {
        found.push((
            field.clone(),
            "custom panic devices are not supported on s390x architecture".into(),
        ));
    }
    for (i, device) in list.iter().enumerate() {
        if let Some(model) = path::str_at(device, &["model"])
            && !PANIC_DEVICE_MODELS.contains(&model)
        {
            found.push((
                format!("{field}[{i}].model"),
                format!("invalid PanicDeviceModel({model})"),
            ));
        }
    }
}

/// The sources a DataVolume may import from, exactly one at a time (CDI's
/// `DataVolumeSource`).
const DATA_VOLUME_SOURCES: [&str; 10] = [
    "http", "s3", "gcs", "registry", "pvc", "upload", "blank", "imageio", "vddk", "snapshot",
];

/// A DataVolume template that names a namespace names the VM's (when the VM names one; else
/// the namespace it is created in, unknown here). KubeVirt's storage admitter checks this
/// after every other check of the VM webhook has passed.
pub(super) fn data_volume_namespaces(vm: &Value, found: &mut Found) {
    let Some(namespace) = path::str_at(vm, &["metadata", "namespace"]).filter(|n| !n.is_empty())
    else {
        return;
    };
    let templates = path::get(vm, &["spec", "dataVolumeTemplates"]).and_then(Value::as_array);
    for (i, template) in templates.into_iter().flatten().enumerate() {
        if let Some(theirs) = path::str_at(template, &["metadata", "namespace"])
            && !theirs.is_empty()
            && theirs != namespace
        {
            found.push((
                format!("spec.dataVolumeTemplates[{i}]"),
                format!(
                    "Embedded DataVolume namespace {theirs} differs from VM namespace {namespace}"
                ),
            ));
        }
    }
}

/// A VM's `dataVolumeTemplates` (`ValidateDataVolumeTemplate`): each is named, has a `pvc` or
/// a `storage` (not both), one import source or an external populator (not both), and is used
/// by a volume of the template. KubeVirt names the list `spec.dataVolumeTemplate`, and the
/// storage and source fields `PVC.Storage` and `source.sourceRef`; the findings name the
/// fields as they are spelled.
pub(super) fn data_volume_templates(vm_spec: &Value, found: &mut Found) {
    let Some(templates) = vm_spec.get("dataVolumeTemplates").and_then(Value::as_array) else {
        return;
    };
    // A template without a spec has no volumes to Go; without a template at all, the API
    // server refuses the VM first (`KV004`).
    if !vm_spec.get("template").is_some_and(Value::is_object) {
        return;
    }
    let volumes = path::get(vm_spec, &["template", "spec", "volumes"]).and_then(Value::as_array);
    for (i, template) in templates.iter().enumerate() {
        let at = format!("spec.dataVolumeTemplates[{i}]");
        let name = path::str_at(template, &["metadata", "name"]).unwrap_or("");
        if let Some(cause) = data_volume_template(template, name, &at) {
            found.push(cause);
            continue;
        }
        let used = volumes.into_iter().flatten().any(|v| {
            path::str_at(v, &["persistentVolumeClaim", "claimName"]) == Some(name)
                || path::str_at(v, &["dataVolume", "name"]) == Some(name)
        });
        if !used {
            found.push((
                at.clone(),
                format!(
                    "DataVolumeTemplate entry {at} must be referenced in the VMI template's \
                     'volumes' list"
                ),
            ));
        }
    }
}

/// The first thing KubeVirt finds wrong with one DataVolume template.
fn data_volume_template(template: &Value, name: &str, at: &str) -> Option<(String, String)> {
    if name.is_empty() {
        return Some((
            format!("{at}.metadata.name"),
            format!("'name' field must not be empty for DataVolumeTemplate entry {at}.name."),
        ));
    }
    let spec = template.get("spec").unwrap_or(&Value::Null);
    let storage = match (is_set(spec, &["pvc"]), is_set(spec, &["storage"])) {
        (false, false) => {
            return Some((
                format!("{at}.spec"),
                "Missing Data volume PVC or Storage".into(),
            ));
        }
        (true, true) => {
            return Some((
                format!("{at}.spec"),
                "Duplicate storage definition, both target storage and target pvc defined".into(),
            ));
        }
        (true, false) => &spec["pvc"],
        (false, true) => &spec["storage"],
    };
    let external = is_set(storage, &["dataSourceRef"]) || is_set(storage, &["dataSource"]);
    let source = spec.get("source").filter(|v| !v.is_null());
    let sourced = source.is_some() || is_set(spec, &["sourceRef"]);
    if external && sourced {
        return Some((
            format!("{at}.spec.source"),
            "External population is incompatible with Source and SourceRef".into(),
        ));
    }
    if !external && !sourced {
        return Some((
            format!("{at}.spec"),
            "Data volume should have either Source, SourceRef, or be externally populated".into(),
        ));
    }
    let count = source.map(|s| {
        DATA_VOLUME_SOURCES
            .iter()
            .filter(|k| is_set(s, &[k]))
            .count()
    });
    match count {
        Some(0) => Some((
            format!("{at}.spec.source"),
            "Missing dataVolume valid source".into(),
        )),
        Some(n) if n > 1 => Some((
            format!("{at}.spec.source"),
            "Multiple dataVolume sources".into(),
        )),
        _ => None,
    }
}

/// What the VirtualMachineInstance webhook alone checks for each architecture
/// (`ValidateVirtualMachineInstancePerArch`): watchdogs, video models, and on arm64 the boot
/// firmware, CPU model, disk buses and sound.
pub(super) fn per_architecture(
    spec: &Value,
    at: &str,
    profile: &ClusterProfile,
    found: &mut Found,
) {
    let devices = path::get(spec, &["domain", "devices"]).unwrap_or(&Value::Null);
    let watchdog = devices.get("watchdog").filter(|w| w.is_object());
    let video = devices
        .get("video")
        .filter(|v| v.is_object())
        .map(|v| path::str_at(v, &["type"]).unwrap_or(""));
    let arch = architecture(spec, profile);
    let video_types: &[&str] = match arch {
        "amd64" => &["vga", "cirrus", "virtio", "ramfb", "bochs"],
        "arm64" => &["virtio", "ramfb"],
        "s390x" => &["virtio"],
        other => {
            found.push((
                format!("{at}.architecture"),
                format!("unsupported architecture: {other}"),
            ));
            return;
        }
    };
    let watchdog_at = format!("{at}.domain.devices.watchdog");
    if let Some(w) = watchdog {
        let (i6300, diag) = (is_set(w, &["i6300esb"]), is_set(w, &["diag288"]));
        match arch {
            "amd64" if !i6300 || diag => found.push((
                watchdog_at,
                "amd64 only supports I6300ESB watchdog device".into(),
            )),
            "s390x" if !diag || i6300 => found.push((
                watchdog_at,
                "s390x only supports Diag288 watchdog device".into(),
            )),
            _ => {}
        }
    }
    if arch == "arm64" {
        arm64(spec, devices, at, found);
    }
    if let Some(kind) = video
        && !video_types.contains(&kind)
    {
        found.push((
            format!("{at}.domain.devices.video.type"),
            format!("video model '{kind}' is not supported on {arch} architecture"),
        ));
    }
}

/// `ValidateVirtualMachineInstanceArm64Setting`, but for the video model.
fn arm64(spec: &Value, devices: &Value, at: &str, found: &mut Found) {
    if is_set(spec, &["domain", "firmware", "bootloader", "bios"]) {
        found.push((
            format!("{at}.domain.firmware.bootloader.bios"),
            "Arm64 does not support bios boot, please change to uefi boot".into(),
        ));
    }
    let model = path::str_at(spec, &["domain", "cpu", "model"]).unwrap_or("");
    if !model.is_empty() && model != "host-passthrough" {
        found.push((
            format!("{at}.domain.cpu.model"),
            "currently, host-passthrough is the only model supported on Arm64".into(),
        ));
    }
    let disks = devices.get("disks").and_then(Value::as_array);
    for (i, disk) in disks.into_iter().flatten().enumerate() {
        for target in ["disk", "cdrom", "lun"] {
            let Some(t) = disk.get(target).filter(|t| !t.is_null()) else {
                continue;
            };
            let bus = path::str_at(t, &["bus"]).unwrap_or("");
            if !["", "virtio", "scsi"].contains(&bus) {
                found.push((
                    format!("{at}.domain.devices.disks[{i}].{target}.bus"),
                    "Arm64 not support this disk bus type, please use virtio or scsi".into(),
                ));
            }
        }
    }
    if devices.get("watchdog").is_some_and(|w| !w.is_null()) {
        found.push((
            format!("{at}.domain.devices.watchdog"),
            "Arm64 not support Watchdog device".into(),
        ));
    }
    if devices.get("sound").is_some_and(|s| !s.is_null()) {
        found.push((
            format!("{at}.domain.devices.sound"),
            "Arm64 not support sound device".into(),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::names::DNS_SUBDOMAIN_MSG;
    use serde_json::json;

    fn run(spec: Value, profile: &ClusterProfile) -> Vec<(String, String)> {
        let mut found = Vec::new();
        check(&spec, "spec", profile, true, &mut found);
        found
    }

    fn configured(gates: &[&str], disabled: &[&str]) -> ClusterProfile {
        let config = json!({"developerConfiguration": {
            "featureGates": gates, "disabledFeatureGates": disabled}});
        ClusterProfile::from_kubevirt(&config).expect("a configuration")
    }

    #[test]
    fn host_names_follow_kubernetes_dns_rules_and_words() {
        let found = run(
            json!({"hostname": "web.example"}),
            &ClusterProfile::default(),
        );
        assert_eq!(
            found,
            [(
                "spec.hostname".to_string(),
                "spec.hostname does not conform to the kubernetes DNS_LABEL rules : must not \
                 contain dots"
                    .to_string()
            )]
        );
        let long = "a".repeat(64);
        let found = run(json!({"hostname": long}), &ClusterProfile::default());
        assert!(found[0].1.ends_with(": must be no more than 63 characters"));
        let found = run(json!({"subdomain": "Web"}), &ClusterProfile::default());
        assert!(found[0].1.contains(DNS_SUBDOMAIN_MSG), "{found:?}");
        for fine in [
            json!({"hostname": "web-1", "subdomain": "a.b"}),
            json!({"hostname": ""}),
        ] {
            assert_eq!(run(fine, &ClusterProfile::default()), []);
        }
    }

    #[test]
    fn acpi_tables_name_secret_volumes() {
        let spec = |acpi: Value| {
            json!({"domain": {"firmware": {"acpi": acpi}},
                   "volumes": [{"name": "slic", "secret": {"secretName": "s"}},
                               {"name": "msdm", "configMap": {"name": "c"}}]})
        };
        let p = ClusterProfile::default();
        assert_eq!(run(spec(json!({"slicNameRef": "slic"})), &p), []);
        let found = run(spec(json!({})), &p);
        assert_eq!(found[0].0, "spec.domain.firmware.acpi");
        let found = run(
            spec(json!({"slicNameRef": "gone", "msdmNameRef": "msdm"})),
            &p,
        );
        let fields: Vec<&str> = found.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.domain.firmware.acpi.slicNameRef",
                "spec.domain.firmware.acpi.msdmNameRef"
            ]
        );
        assert!(found[0].1.ends_with("does not have a matching Volume."));
        assert!(
            found[1]
                .1
                .ends_with("refers to Volume of unsupported type.")
        );
    }

    #[test]
    fn alpha_gates_count_only_when_a_configuration_says_so() {
        let spec = json!({"domain": {"launchSecurity": {"tdx": {}},
                                     "firmware": {"bootloader": {"efi": {"secureBoot": false}}},
                                     "devices": {"autoattachVSOCK": true}}});
        // Unknown without a configuration: the checks behind the gate run, and pass.
        assert_eq!(run(spec.clone(), &ClusterProfile::default()), []);
        let found = run(spec.clone(), &configured(&[], &[]));
        let messages: Vec<&str> = found.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(
            messages,
            [
                "VSOCK feature gate is not enabled in kubevirt-config",
                "WorkloadEncryptionTDX feature gate is not enabled in kubevirt-config"
            ]
        );
        assert_eq!(
            run(spec, &configured(&["VSOCK", "WorkloadEncryptionTDX"], &[])),
            []
        );
        // A beta gate is on unless disabled, with or without a configuration.
        let sev = json!({"domain": {"launchSecurity": {"sev": {}}}});
        let found = run(sev.clone(), &ClusterProfile::default());
        assert_eq!(found[0].1, "SEV requires OVMF (UEFI)");
        let found = run(sev, &configured(&[], &["WorkloadEncryptionSEV"]));
        assert_eq!(
            found[0].1,
            "WorkloadEncryptionSEV feature gate is not enabled in kubevirt-config"
        );
    }

    #[test]
    fn launch_security_wants_one_type_uefi_and_what_each_supports() {
        let p = ClusterProfile::default();
        let messages =
            |spec: Value| -> Vec<String> { run(spec, &p).into_iter().map(|(_, m)| m).collect() };
        assert_eq!(
            messages(json!({"domain": {"launchSecurity": {"sev": {}, "snp": {}}}})),
            ["One and only one launchSecurity type can be set"]
        );
        // IBM Secure Execution's empty `launchSecurity`, on the default amd64: the message
        // says where the amd64 came from; with the architecture written, it is KubeVirt's own.
        let secure_execution = messages(json!({"domain": {"launchSecurity": {}}}));
        assert!(
            secure_execution[0].starts_with("One and only one launchSecurity type can be set (")
                && secure_execution[0].contains("the cluster's default, amd64"),
            "{secure_execution:?}"
        );
        assert_eq!(
            messages(json!({"architecture": "amd64", "domain": {"launchSecurity": {}}})),
            ["One and only one launchSecurity type can be set"]
        );
        assert!(
            messages(json!({"architecture": "s390x", "domain": {"launchSecurity": {}}})).is_empty()
        );
        assert_eq!(
            messages(json!({"domain": {
                "launchSecurity": {"snp": {}},
                "firmware": {"bootloader": {"efi": {"persistent": true}}},
                "devices": {"interfaces": [{"name": "default", "bootOrder": 1}]}}})),
            [
                "SNP does not work along with SecureBoot",
                "SNP does not work along with Persistent EFI variables",
                "SNP does not work with bootable NICs: default"
            ]
        );
        assert_eq!(
            messages(json!({"startStrategy": "Paused", "domain": {
                "launchSecurity": {"sev": {"attestation": {}}},
                "firmware": {"bootloader": {"efi": {"secureBoot": false}}}}})),
            Vec::<String>::new()
        );
        assert_eq!(
            messages(json!({"architecture": "arm64",
                            "domain": {"launchSecurity": {"sev": {}}}})),
            ["No launchSecurity support for architecture: arm64"]
        );
        assert_eq!(
            messages(json!({"architecture": "s390x", "domain": {"launchSecurity": {}}})),
            Vec::<String>::new()
        );
    }

    #[test]
    fn start_strategy_io_threads_cpu_features_firmware_and_devices() {
        let spec = json!({
            "startStrategy": "Paused",
            "livenessProbe": {"tcpSocket": {"port": 22}},
            "domain": {
                "ioThreadsPolicy": "supplementalPool",
                "cpu": {"features": [{"name": "vmx", "policy": "require"},
                                     {"name": "pcid", "policy": "Require"}]},
                "firmware": {"bootloader": {"bios": {}, "efi": {}}},
                "devices": {"sound": {"name": "", "model": "ich9"},
                            "video": {"type": "vga"}, "autoattachGraphicsDevice": false,
                            "panicDevices": [{"model": "isa"}, {"model": "pvpanic2"}]}
            },
            "volumes": [{"name": "h", "hostDisk": {"path": "", "type": "Disk", "capacity": "1Gi"}}]
        });
        let found = run(spec, &ClusterProfile::default());
        let fields: Vec<&str> = found.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.domain.cpu.features[1].policy",
                "spec.startStrategy",
                "spec.domain.ioThreads.supplementalPoolThreadCount",
                "spec.domain.firmware.bootloader",
                "spec.volumes[0].hostDisk.path",
                "spec.volumes[0].hostDisk.capacity",
                "spec.domain.devices.sound",
                "spec.domain.devices.video",
                "spec.domain.devices.panicDevices[1].model",
            ]
        );
        assert_eq!(
            found[1].1,
            "either spec.startStrategy or spec.livenessProbe should be provided.Pausing VMI \
             with LivenessProbe is not supported"
        );
    }

    #[test]
    fn claims_over_virtiofs_need_their_gate() {
        let spec = json!({
            "domain": {"devices": {"filesystems": [{"name": "data", "virtiofs": {}},
                                                   {"name": "cfg", "virtiofs": {}}]}},
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "c"}},
                        {"name": "cfg", "configMap": {"name": "c"}}]
        });
        assert_eq!(run(spec.clone(), &ClusterProfile::default()), []);
        let found = run(spec.clone(), &configured(&[], &[]));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, "spec.domain.devices.filesystems");
        assert_eq!(
            run(spec, &configured(&["EnableVirtioFsStorageVolumes"], &[])),
            []
        );
    }

    #[test]
    fn machine_types_are_among_the_clusters_patterns() {
        let machine = |m: &str| json!({"domain": {"machine": {"type": m}}});
        let p = ClusterProfile::default();
        assert_eq!(run(machine("pc-q35-rhel9.6.0"), &p), []);
        assert_eq!(
            run(machine("pc-i440fx-2.12"), &p),
            [(
                "spec.domain.machine.type".to_string(),
                "spec.domain.machine.type is not supported: pc-i440fx-2.12 (allowed values: \
                 [q35* pc-q35*])"
                    .to_string()
            )]
        );
        let s390x = json!({"architecture": "s390x", "domain": {"machine": {"type": "q35"}}});
        assert!(run(s390x, &p)[0].1.ends_with("[s390-ccw-virtio*])"));
        // The deprecated cluster-wide list wins; an empty one counts as unset.
        let config = json!({"emulatedMachines": ["pc-i440fx*"],
                            "architectureConfiguration": {"arm64": {"emulatedMachines": []}}});
        let p = ClusterProfile::from_kubevirt(&config).expect("a configuration");
        assert_eq!(run(machine("pc-i440fx-2.12"), &p), []);
        assert_eq!(run(machine("q35"), &p).len(), 1);
        // Without a type of its own, the VM gets the cluster's default, which must be allowed.
        let config = json!({"machineType": "pc-i440fx-2.12"});
        let p = ClusterProfile::from_kubevirt(&config).expect("a configuration");
        assert_eq!(run(json!({}), &p).len(), 1);
    }

    #[test]
    fn probes_have_one_handler_and_network_probes_the_pod_network() {
        let p = ClusterProfile::default();
        let messages =
            |spec: Value| -> Vec<String> { run(spec, &p).into_iter().map(|(_, m)| m).collect() };
        // No networks and no interfaces: the defaults attach the pod network.
        assert_eq!(
            messages(json!({"readinessProbe": {"httpGet": {"port": 80}}})),
            Vec::<String>::new()
        );
        assert_eq!(
            messages(json!({
                "readinessProbe": {"httpGet": {"port": 80}, "exec": {"command": ["true"]}},
                "livenessProbe": {"initialDelaySeconds": 5},
                "networks": [{"name": "m", "multus": {"networkName": "n"}}],
            })),
            [
                "spec.readinessProbe must have exactly one probe type set",
                "spec.readinessProbe.httpGet is only allowed if the Pod Network is attached",
                "either spec.livenessProbe.tcpSocket, spec.livenessProbe.exec or \
                 spec.livenessProbe.httpGet must be set if a spec.livenessProbe is specified",
            ]
        );
        let unattached = json!({"readinessProbe": {"tcpSocket": {"port": 22}},
                                "domain": {"devices": {"autoattachPodInterface": false}}});
        assert_eq!(messages(unattached).len(), 1);
    }

    #[test]
    fn kernel_boot_and_container_disk_paths_are_absolute_and_clean() {
        let p = ClusterProfile::default();
        let boot =
            |kernel_boot: Value| json!({"domain": {"firmware": {"kernelBoot": kernel_boot}}});
        assert_eq!(
            run(boot(json!({"kernelArgs": "console=ttyS0"})), &p)[0].1,
            "kernel arguments cannot be provided without an external kernel"
        );
        let found = run(boot(json!({"container": {"image": ""}})), &p);
        let fields: Vec<&str> = found.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.domain.firmware.kernelBoot.container.image",
                "spec.domain.firmware.kernelBoot.container"
            ]
        );
        for (file, fine) in [
            ("/boot/vmlinuz", true),
            ("/boot/", true),
            ("boot/vmlinuz", false),
            ("/boot/../vmlinuz", false),
            ("/boot//vmlinuz", false),
            ("/boot/./vmlinuz", false),
            ("/boot//", false),
        ] {
            let spec =
                json!({"volumes": [{"name": "d", "containerDisk": {"image": "x", "path": file}}]});
            let found = run(spec, &p);
            assert_eq!(found.is_empty(), fine, "{file}: {found:?}");
        }
        let root =
            json!({"volumes": [{"name": "d", "containerDisk": {"image": "x", "path": "/"}}]});
        assert_eq!(
            run(root, &p)[0].1,
            "spec.volumes[0].containerDisk must not point to root"
        );
    }

    #[test]
    fn base64_is_padded_and_line_breaks_do_not_count() {
        assert_eq!(base64_decoded_len("YWJj"), (3, true));
        assert_eq!(base64_decoded_len("YWI="), (2, true));
        assert_eq!(base64_decoded_len("YQ=="), (1, true));
        assert_eq!(base64_decoded_len("YWJj\nYWJj\r\n"), (6, true));
        assert_eq!(base64_decoded_len(""), (0, true));
        for bad in ["YWJ", "Y===", "YQ==YWJj", "YW!j", "====", "A=B="] {
            assert!(!base64_decoded_len(bad).1, "{bad}");
        }
        assert_eq!(base64_decoded_len("YWJjYW!j"), (3, false));
    }

    #[test]
    fn cloud_init_data_has_one_source_each_within_the_limits() {
        let p = ClusterProfile::default();
        let messages = |source: Value| -> Vec<String> {
            let spec = json!({"volumes": [{"name": "ci", "cloudInitNoCloud": source}]});
            run(spec, &p).into_iter().map(|(_, m)| m).collect()
        };
        let at = "spec.volumes[0].cloudInitNoCloud";
        assert_eq!(
            messages(json!({"userData": "#cloud-config"})),
            Vec::<String>::new()
        );
        assert_eq!(
            messages(json!({"secretRef": {"name": "s"}, "networkDataSecretRef": {"name": "n"}})),
            Vec::<String>::new()
        );
        assert_eq!(
            messages(json!({})),
            [format!(
                "{at} must have at least one userdatasource or one networkdatasource set."
            )]
        );
        assert_eq!(
            messages(json!({"userData": "x".repeat(2049), "secretRef": {"name": "s"}})),
            [
                format!("{at} must have only one userdatasource set."),
                format!(
                    "{at} userdata exceeds 2048 byte limit. Should use UserDataSecretRef for \
                     larger data."
                )
            ]
        );
        assert_eq!(
            messages(json!({"networkDataBase64": "bm90!"})),
            [format!(
                "{at}.networkDataBase64.cloudInitNoCloud.networkDataBase64 is not a valid \
                 base64 value."
            )]
        );
        // 2,736 base64 characters decode to 2,052 bytes.
        let long = format!("{}==", "A".repeat(2734));
        assert_eq!(messages(json!({"userDataBase64": long})).len(), 1);
    }

    #[test]
    fn one_gpu_at_most_shows_its_display_through_ramfb() {
        let gpu = |display: Value| {
            json!({"name": "g", "deviceName": "nvidia.com/x",
                   "virtualGPUOptions": {"display": display}})
        };
        let with = |displays: Vec<Value>| {
            let gpus: Vec<Value> = displays.into_iter().map(gpu).collect();
            run(
                json!({"domain": {"devices": {"gpus": gpus}}}),
                &ClusterProfile::default(),
            )
        };
        let refused = [(
            "spec.domain.devices.gpus".to_string(),
            "configuring multiple displays with ramfb is not valid".to_string(),
        )];
        // Unset, null and `true` all count as on.
        assert_eq!(with(vec![json!({}), json!({"enabled": null})]), refused);
        assert_eq!(
            with(vec![
                json!({"ramFB": {}}),
                json!({"enabled": true, "ramFB": null})
            ]),
            refused
        );
        assert!(with(vec![json!({}), json!({"enabled": false})]).is_empty());
        assert!(with(vec![json!({}), json!({"ramFB": {"enabled": false}})]).is_empty());
        assert!(with(vec![json!({}), Value::Null]).is_empty());
        assert!(with(vec![json!({})]).is_empty());
    }

    #[test]
    fn a_service_account_is_a_dns_name_that_its_volumes_repeat() {
        let spec = |account: &str, volumes: Value| {
            run(
                json!({"serviceAccountName": account, "volumes": volumes}),
                &ClusterProfile::default(),
            )
        };
        let mismatch = |named: &str| {
            (
                "spec.serviceAccountName".to_string(),
                format!(
                    "spec.serviceAccountName \"build\" and serviceAccount volume \"{named}\" \
                     must reference the same service account"
                ),
            )
        };
        let sa =
            |name: Value| json!({"name": "sa", "serviceAccount": {"serviceAccountName": name}});
        assert!(spec("build", json!([sa(json!("build"))])).is_empty());
        assert!(spec("", json!([sa(json!("other"))])).is_empty());
        assert_eq!(
            spec("build", json!([sa(json!("other"))])),
            [mismatch("other")]
        );
        // A volume without a name names the empty account: a mismatch too.
        let unnamed = spec("build", json!([{"name": "sa", "serviceAccount": {}}]));
        assert_eq!(unnamed.last(), Some(&mismatch("")), "{unnamed:?}");
        let found = spec("Build_1", json!([]));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, "spec.serviceAccountName");
        assert!(
            found[0]
                .1
                .starts_with("spec.serviceAccountName is not a valid service account name: a lowercase RFC 1123 subdomain"),
            "{found:?}"
        );
    }

    #[test]
    fn volume_sources_name_what_they_mount_and_some_come_once() {
        let spec = json!({"volumes": [
            {"name": "a", "configMap": {}},
            {"name": "b", "secret": {"secretName": ""}},
            {"name": "c", "dataVolume": {"name": ""}},
            {"name": "d", "serviceAccount": {"serviceAccountName": "x"}},
            {"name": "e", "serviceAccount": {"serviceAccountName": "y"}},
        ]});
        let found = run(spec, &ClusterProfile::default());
        let messages: Vec<&str> = found.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(
            messages,
            [
                "spec.volumes must have max one serviceAccount volume set",
                "spec.volumes[0].configMap.name is a required field",
                "spec.volumes[1].secret.secretName is a required field",
                "DataVolume 'name' must be set",
            ]
        );
    }

    #[test]
    fn access_credentials_have_one_type_source_and_method() {
        let p = ClusterProfile::default();
        let found = |credentials: Value, volumes: Value| -> Vec<(String, String)> {
            run(
                json!({"accessCredentials": credentials, "volumes": volumes}),
                &p,
            )
        };
        let secret = json!({"secret": {"secretName": "keys"}});
        let ok = json!([{"sshPublicKey": {"source": secret,
                                          "propagationMethod": {"noCloud": {}}}}]);
        let no_cloud = json!([{"name": "ci", "cloudInitNoCloud": {"userData": "x"}}]);
        assert_eq!(found(ok.clone(), no_cloud), []);
        assert_eq!(
            found(ok, json!([])),
            [(
                "spec.accessCredentials[0].sshPublicKey.propagationMethod".to_string(),
                "spec.accessCredentials[0] requires a noCloud volume to exist when the noCloud \
                 propagationMethod is in use."
                    .to_string()
            )]
        );
        let agent = json!([{"sshPublicKey": {"propagationMethod": {"qemuGuestAgent": {}}}},
                           {"userPassword": {"source": secret, "propagationMethod": {}}},
                           {}]);
        let fields: Vec<String> = found(agent, json!([]))
            .into_iter()
            .map(|(f, _)| f)
            .collect();
        assert_eq!(
            fields,
            [
                "spec.accessCredentials[0].sshPublicKey.propagationMethod.qemuGuestAgent.users",
                "spec.accessCredentials[0].sshPublicKey.source",
                "spec.accessCredentials[1].userPassword.propagationMethod",
                "spec.accessCredentials[2]",
            ]
        );
    }

    #[test]
    fn data_volume_templates_are_whole_and_used() {
        let template = |name: &str, spec: Value| json!({"metadata": {"name": name}, "spec": spec});
        let storage = json!({"resources": {"requests": {"storage": "10Gi"}}});
        let vm = json!({
            "dataVolumeTemplates": [
                template("root", json!({"storage": storage, "sourceRef": {"kind": "DataSource", "name": "fedora"}})),
                template("", json!({})),
                template("b", json!({"pvc": storage, "storage": storage})),
                template("c", json!({"storage": storage})),
                template("d", json!({"storage": storage, "source": {"blank": {}, "http": {"url": "u"}}})),
                template("e", json!({"storage": {"dataSourceRef": {"kind": "X", "name": "x"}}, "source": {}})),
                template("f", json!({"storage": storage, "source": {"blank": {}}})),
            ],
            "template": {"spec": {"volumes": [
                {"name": "root", "dataVolume": {"name": "root"}},
            ]}}
        });
        let mut found = Vec::new();
        data_volume_templates(&vm, &mut found);
        let at = |i: usize, rest: &str| format!("spec.dataVolumeTemplates[{i}]{rest}");
        assert_eq!(
            found,
            [
                (
                    at(1, ".metadata.name"),
                    format!(
                        "'name' field must not be empty for DataVolumeTemplate entry {}.",
                        at(1, ".name")
                    )
                ),
                (
                    at(2, ".spec"),
                    "Duplicate storage definition, both target storage and target pvc defined"
                        .into()
                ),
                (
                    at(3, ".spec"),
                    "Data volume should have either Source, SourceRef, or be externally populated"
                        .into()
                ),
                (at(4, ".spec.source"), "Multiple dataVolume sources".into()),
                (
                    at(5, ".spec.source"),
                    "External population is incompatible with Source and SourceRef".into()
                ),
                (
                    at(6, ""),
                    format!(
                        "DataVolumeTemplate entry {} must be referenced in the VMI template's 'volumes' list",
                        at(6, "")
                    )
                ),
            ]
        );
    }

    #[test]
    fn dns_policy_and_configuration() {
        let p = ClusterProfile::default();
        let messages =
            |spec: Value| -> Vec<String> { run(spec, &p).into_iter().map(|(_, m)| m).collect() };
        assert_eq!(
            messages(json!({"dnsPolicy": "Bogus"})),
            [
                "spec.dnsPolicy in body should be one of [ClusterFirst ClusterFirstWithHostNet \
              Default None]"
            ]
        );
        assert_eq!(
            messages(json!({"dnsPolicy": "None"})),
            ["must provide `dnsConfig` when `dnsPolicy` is None"]
        );
        assert_eq!(
            messages(json!({"dnsPolicy": "None", "dnsConfig": {"searches": ["a.b"]}})),
            ["must provide at least one DNS nameserver when `dnsPolicy` is None"]
        );
        assert_eq!(
            messages(json!({"dnsPolicy": "None", "dnsConfig": {
                "nameservers": ["8.8.8.8", "::1", "010.1.1.1", "dns.example.com"],
                "searches": ["Bad_Domain"],
                "options": [{"value": "2"}]}})),
            [
                "must not have more than 3 nameservers: [8.8.8.8 ::1 10.1.1.1 dns.example.com]",
                "must be valid IP address: dns.example.com",
                DNS_SUBDOMAIN_MSG,
                "Option.Name must not be empty",
            ]
        );
        let many: Vec<String> = (0..7)
            .map(|i| format!("{i}{}.example", "x".repeat(40)))
            .collect();
        assert_eq!(
            messages(json!({"dnsConfig": {"searches": many}})),
            [
                "must not have more than 6 search paths",
                "must not have more than 256 characters (including spaces) in the search list",
            ]
        );
    }

    #[test]
    fn each_architecture_takes_its_own_devices() {
        let p = ClusterProfile::default();
        let per_arch = |spec: Value| {
            let mut found = Vec::new();
            per_architecture(&spec, "spec", &p, &mut found);
            found.into_iter().map(|(_, m)| m).collect::<Vec<_>>()
        };
        assert_eq!(
            per_arch(json!({"domain": {"devices": {
                "watchdog": {"name": "w", "diag288": {}}, "video": {"type": "qxl"}}}})),
            [
                "amd64 only supports I6300ESB watchdog device",
                "video model 'qxl' is not supported on amd64 architecture"
            ]
        );
        assert_eq!(
            per_arch(json!({"architecture": "arm64", "domain": {
                "cpu": {"model": "Haswell"},
                "firmware": {"bootloader": {"bios": {}}},
                "devices": {"disks": [{"name": "d", "disk": {"bus": "sata"}},
                                      {"name": "c", "cdrom": {}}],
                            "sound": {"name": "s"}, "video": {"type": "vga"}}}})),
            [
                "Arm64 does not support bios boot, please change to uefi boot",
                "currently, host-passthrough is the only model supported on Arm64",
                "Arm64 not support this disk bus type, please use virtio or scsi",
                "Arm64 not support sound device",
                "video model 'vga' is not supported on arm64 architecture"
            ]
        );
        assert_eq!(
            per_arch(json!({"architecture": "s390x", "domain": {"devices": {
                "watchdog": {"name": "w", "diag288": {}}, "video": {"type": "virtio"}}}})),
            Vec::<String>::new()
        );
        assert_eq!(
            per_arch(json!({"architecture": "ppc64le"})),
            ["unsupported architecture: ppc64le"]
        );
    }

    #[test]
    fn reserved_labels_and_gated_annotations_in_metadata() {
        let meta = json!({
            "labels": {"kubevirt.io/domain": "web", "kubevirt.io/nodeName": "n1"},
            "annotations": {"kubevirt.io/ignitiondata": "{}", "hooks.kubevirt.io/hookSidecars": ""}
        });
        let mut found = Vec::new();
        metadata(
            &meta,
            "spec.template.metadata",
            true,
            &configured(&[], &[]),
            &mut found,
        );
        assert_eq!(
            found,
            [
                (
                    "spec.template.metadata.labels".to_string(),
                    "creation of the following reserved kubevirt.io/ labels on a VMI object is \
                     prohibited"
                        .to_string()
                ),
                (
                    "spec.template.metadata.annotations".to_string(),
                    "ExperimentalIgnitionSupport feature gate is not enabled in kubevirt-config, \
                     invalid entry spec.template.metadata.annotations.kubevirt.io/ignitiondata"
                        .to_string()
                ),
            ]
        );
        let mut found = Vec::new();
        let gates = configured(&["ExperimentalIgnitionSupport"], &[]);
        metadata(&meta, "metadata", true, &gates, &mut found);
        assert_eq!(found.len(), 1, "{found:?}");
        // KubeVirt's controller may write its own labels.
        let mut found = Vec::new();
        metadata(&meta, "metadata", false, &gates, &mut found);
        assert_eq!(found, []);
        // Without a configuration the alpha gates are unknown.
        let mut found = Vec::new();
        let sidecar = json!({"annotations": {"hooks.kubevirt.io/hookSidecars": "[]"}});
        metadata(
            &sidecar,
            "metadata",
            true,
            &ClusterProfile::default(),
            &mut found,
        );
        assert_eq!(found, []);
        metadata(
            &sidecar,
            "metadata",
            false,
            &configured(&[], &[]),
            &mut found,
        );
        assert_eq!(
            found[0].1,
            "sidecar feature gate is not enabled in kubevirt-config, invalid entry \
             metadata.annotations.hooks.kubevirt.io/hookSidecars"
        );
    }

    #[test]
    fn persistent_reservation_needs_the_configuration_or_the_gate() {
        let spec = json!({"domain": {"devices": {"disks": [
            {"name": "a", "lun": {"reservation": false}},
            {"name": "b", "lun": {"reservation": true}},
        ]}}, "volumes": [
            {"name": "a", "persistentVolumeClaim": {"claimName": "a"}},
            {"name": "b", "persistentVolumeClaim": {"claimName": "b"}},
        ]});
        let refused = [(
            "spec.domain.devices.disks[1].lun.reservation".to_string(),
            "persistent reservation is not enabled in kubevirt config".to_string(),
        )];
        assert_eq!(run(spec.clone(), &configured(&[], &[])), refused);
        assert_eq!(run(spec.clone(), &ClusterProfile::default()), []);
        assert_eq!(
            run(spec.clone(), &configured(&["PersistentReservation"], &[])),
            []
        );
        let config = |enabled: bool| {
            let config = json!({"persistentReservationConfiguration": {"enabled": enabled},
                                "developerConfiguration": {"featureGates": ["PersistentReservation"]}});
            ClusterProfile::from_kubevirt(&config).expect("a configuration")
        };
        assert_eq!(run(spec.clone(), &config(true)), []);
        assert_eq!(run(spec, &config(false)), refused);
    }

    #[test]
    fn nameservers_are_read_leniently_and_quoted_canonically() {
        let spec = json!({"dnsConfig": {"nameservers":
            ["01.2.3.4", "::ffff:1.2.3.4", "2001:DB8::1", "9.9.9.9", "1.2.3"]}});
        let found = run(spec, &ClusterProfile::default());
        assert_eq!(
            found,
            [
                (
                    "spec.dnsConfig.nameservers".to_string(),
                    "must not have more than 3 nameservers: [1.2.3.4 1.2.3.4 2001:db8::1 \
                     9.9.9.9 1.2.3]"
                        .to_string()
                ),
                (
                    "spec.dnsConfig.nameservers".to_string(),
                    "must be valid IP address: 1.2.3".to_string()
                ),
            ]
        );
    }

    #[test]
    fn utility_volumes_come_only_by_hotplug() {
        let refused = [(
            "spec.utilityVolumes".to_string(),
            "cannot create VMI with utility volumes in spec, utility volumes can only be added \
             via hotplug"
                .to_string(),
        )];
        let profile = ClusterProfile::default();
        let one = json!({"utilityVolumes": [{"name": "dump", "claimName": "pvc"}]});
        assert_eq!(run(one, &profile), refused);
        assert_eq!(run(json!({"utilityVolumes": []}), &profile), []);
        assert_eq!(run(json!({"utilityVolumes": null}), &profile), []);
    }

    #[test]
    fn data_volume_templates_stay_in_the_vms_namespace() {
        let vm = |ns: Value| {
            json!({"metadata": {"name": "vm", "namespace": ns},
                   "spec": {"dataVolumeTemplates": [
                       {"metadata": {"name": "a", "namespace": "team-a"}},
                       {"metadata": {"name": "b", "namespace": "team-b"}},
                       {"metadata": {"name": "c"}}]}})
        };
        let mut found = Vec::new();
        data_volume_namespaces(&vm(json!("team-a")), &mut found);
        assert_eq!(
            found,
            [(
                "spec.dataVolumeTemplates[1]".to_string(),
                "Embedded DataVolume namespace team-b differs from VM namespace team-a".to_string()
            )]
        );
        let mut found = Vec::new();
        data_volume_namespaces(&vm(Value::Null), &mut found);
        assert_eq!(found, []);
    }
}

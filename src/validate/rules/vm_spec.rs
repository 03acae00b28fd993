//! `KV034` vm-spec.
//!
//! ## What it checks
//! A part of the checks KubeVirt's VirtualMachine webhook runs on every VM, beyond the
//! instancetype and preference (and the VirtualMachineInstance webhook on every VMI): the
//! mistakes that come from editing a manifest by hand.
//! - A VM sets `running` or `runStrategy`, not both, and a `runStrategy` is one of `Always`,
//!   `RerunOnFailure`, `Manual`, `Halted` and `Once`, or `WaitAsReceiver` while the beta
//!   feature gate `DecentralizedLiveMigration` is on (unless the cluster profile disables it).
//! - Every disk has a volume of its name (a CD-ROM without one needs a feature gate and is
//!   left alone), no two disks share a name, and a disk has at most one of `disk`, `lun` and
//!   `cdrom`. KubeVirt names each pair of disks of one name; past the first thousand pairs
//!   (45 disks of one name), the rest are counted in one finding.
//! - No two volumes share a name, and each volume has exactly one source (`containerDisk`,
//!   `persistentVolumeClaim`, `dataVolume`, `cloudInitNoCloud`, ...).
//! - Every interface has a network of its name and every network an interface, and no two
//!   networks or interfaces share a name.
//! - Every interface has exactly one binding method (`bridge`, `masquerade`, `sriov`,
//!   `passtBinding`) or binding plugin (`binding`).
//! - At most one network is the pod network, at most one is Multus's default network, and not
//!   both kinds at once.
//! - No disk asks for the `ide` bus or one KubeVirt does not know, no CD-ROM for `virtio`, no
//!   SATA hard disk is read-only, and a disk with a dedicated I/O thread is on `virtio` (a disk
//!   without a bus yet is not judged).
//! - A LUN's volume is a PersistentVolumeClaim or a DataVolume, and the boot orders of disks
//!   and interfaces are at least 1 and distinct.
//! - A disk's name is a DNS label (it names a container too); a hard disk's PCI address is on
//!   the virtio bus and well formed; a serial number has at most 256 of `[A-Za-z0-9_.+-]`; the
//!   cache mode, I/O mode and error policy are ones KubeVirt knows; custom block sizes are not
//!   combined with volume matching, logical at most physical (512 on SATA), powers of two from
//!   512 bytes to 2 MiB, with a discard granularity that is a multiple of the logical size (in
//!   `disks`).
//! - An input device is a `tablet` on the `virtio` or `usb` bus, where the VM says.
//! - A VM with a `maxSockets` has no more CPU sockets than that, counting the sockets KubeVirt's
//!   defaults give a spec without a topology (one per CPU of the limit, else of the request).
//! - EFI Secure Boot (on unless `secureBoot: false`) comes with the SMM feature present and not
//!   turned off, outside TDX.
//! - `isolateEmulatorThread` comes with `dedicatedCpuPlacement`.
//! - CPU and memory requests are not negative or above their limits, and a memory request is
//!   at least 1M; the memory holds a whole number of huge pages, one at least.
//! - Dedicated CPUs come with memory, whole CPU counts, a request equal to the limit (and to
//!   the topology's vCPUs, where both are given) and at most two threads (one on arm64); NUMA passthrough
//!   with dedicated CPUs and huge pages; realtime with dedicated CPUs and NUMA passthrough.
//! - A `maxGuest` (memory hotplug, on a cluster that rolls changes out live, as KubeVirt does
//!   unless told otherwise) comes with guest memory of at least 1Gi, at most `maxGuest`, both
//!   aligned to 2Mi (1Gi with 1Gi huge pages), on amd64, without realtime, NUMA passthrough or
//!   launch security; without live updates, the guest memory stays within the memory limit.
//!   These and the two items above are judged with KubeVirt's defaults applied (a CPU limit
//!   alone is the request too), on VMs only: presets may still add to a
//!   VirtualMachineInstance's.
//! - `hostname` is a DNS label and `subdomain` a DNS subdomain; `startStrategy` is `Paused`,
//!   without a liveness probe; `ioThreadsPolicy` is `shared`, `auto` or `supplementalPool`
//!   (with a thread count); CPU feature policies are libvirt's; the boot loader is EFI or BIOS,
//!   not both; ACPI tables name Secret volumes; a sound device is `ich9` or `ac97` and named;
//!   no video settings with the graphics device off; panic devices are `hyperv`, `isa` or
//!   `pvpanic`, and not on s390x; a host disk volume has a path, a type KubeVirt knows, and a
//!   capacity only with `DiskOrCreate`; the machine type (the VM's, else the cluster's
//!   default) is one the cluster's `emulatedMachines` patterns allow; an eviction strategy is
//!   one KubeVirt knows; a probe has one handler, and an HTTP or TCP one the pod network; a
//!   kernel boot container has an image and a kernel or initrd, and kernel arguments need it;
//!   paths into container images are absolute and clean.
//! - Cloud-init volumes have user or network data, each from one source (inline, base64 that
//!   decodes, or a Secret), inline at most 2048 bytes; ConfigMap, Secret, service account and
//!   DataVolume volumes name theirs; at most one service account, downward metrics and memory
//!   dump volume; access credentials have one type, one Secret source and one propagation
//!   method, with the cloud-init volume or the users it needs; a VM's DataVolume templates are
//!   in its namespace (when it names one), named, have a `pvc` or a `storage`, one import source or an external populator, and are
//!   used by a volume; the DNS policy is one Kubernetes knows, and the DNS configuration has
//!   nameservers with `dnsPolicy: None`, at most three, IP addresses, at most six search
//!   domains in 256 characters, each a DNS subdomain, and named options (in `settings`).
//! - Each network has one source (a Multus one names its network); an interface's state is
//!   `up`, `down` or `absent` (`absent` only for a bridge off the default network, neither of
//!   the others for SR-IOV); masquerade and passt are on the pod network, a bridge there only
//!   where the cluster permits it, passt with its gate; masquerade does not take the in-pod
//!   bridge's MAC address; no interface uses a binding KubeVirt dropped in v1.3 (`slirp`,
//!   `passt`, `macvtap`); names, models, MAC and PCI addresses and forwarded ports are ones
//!   KubeVirt takes; port ranges (behind the `PortRangesSpec` gate) are on masquerade
//!   interfaces without `ports`, at most ten, TCP or UDP, within port numbers and without
//!   overlaps; DHCP private options are distinct and from 224 to 254, and NTP servers IPv4
//!   addresses (in `interfaces`).
//! - Affinity and topology spread constraints follow Kubernetes' rules, in its words: node
//!   selector terms (at least one when required) with operators Kubernetes knows and the
//!   values each takes, field selectors on `metadata.name` only, weights from 1 to 100, pod
//!   affinity terms with a topology key, valid label selectors and namespaces, spread
//!   constraints with a positive `maxSkew`, a topology key, a known `whenUnsatisfiable` and no
//!   two alike (in `scheduling`).
//! - GPUs and host devices name a device or a claim request (GPUs not both kinds in one
//!   list), DRA ones with a claim and a request, used once, behind their beta gates; networks
//!   from a resource claim sit behind the alpha gate `NetworkDevicesWithDRA`, not beside Multus
//!   networks, on SR-IOV or binding plugin interfaces; every claim they use is listed in
//!   `resourceClaims`, each of which is named (a DNS label, once) with one claim or claim
//!   template name (in `devices`).
//! - No utility volumes at creation: they come by hotplug only.
//! - The template's labels (a VMI's own) hold none of those KubeVirt keeps for itself
//!   (`kubevirt.io/created-by`, `kubevirt.io/nodeName`, ...), and Ignition data and sidecar
//!   hooks come with their gates; a LUN's SCSI persistent reservation needs the cluster to
//!   allow it.
//! - Launch security is one of SEV, SNP and TDX, on amd64 (s390x needs nothing more), with
//!   UEFI, without Secure Boot for SEV and SNP, without persistent EFI variables for SNP and
//!   TDX, without SMM for TDX, without bootable NICs, and with `startStrategy: Paused` for SEV
//!   attestation.
//! - Features behind feature gates (TDX, SEV, host devices, VSOCK, the reboot policy, reserved
//!   memlock overhead, downward metrics, host disks, claims over virtiofs, Ignition, sidecars,
//!   port ranges, persistent reservation) are refused when the
//!   cluster configuration (`--cluster-config`) leaves the gate off. Without a configuration the
//!   beta gates count as on, as in KubeVirt, and the alpha ones as unknown: nothing is reported
//!   for them, and what KubeVirt checks behind the gate is judged.
//! - A VirtualMachineInstance also gets what the VMI webhook alone checks: some memory asked
//!   for (a request, a limit, guest memory or huge pages); for its architecture, the watchdog
//!   and video model each takes, and on arm64 UEFI, `host-passthrough`, virtio or SCSI disks
//!   and no sound device; and its Hyper-V features: none needs a
//!   feature that is turned off, passthrough is not combined with single features, and an
//!   enlightened VMCS has the `vmx` CPU feature required (in `hyperv`). It is judged as the VMI
//!   webhook sees it, with the presets that select it and the VMI defaults applied (in
//!   `start`).
//! - A VM KubeVirt admits is refused again, in effect, when the VMI it starts is: where that VMI
//!   could be (no memory, Hyper-V features, a watchdog or video device, an architecture other
//!   than amd64, a disk the defaults put on a bus it cannot use, presets, or a preference that
//!   sets the bus of the disks the controller adds), it is built as `vmi` builds it, its
//!   presets and defaults applied, and judged as a VMI document is.
//!
//! KubeVirt's webhook validates a copy of the VM with its instancetype, its preference and the
//! cluster defaults applied, and so does this rule whenever the instancetype checks built that
//! copy: a CD-ROM bus, a socket count or an SMM setting that comes from the preference or the
//! instancetype is judged, and the finding says that the manifest alone would pass. A VM
//! that names neither is judged on its own spec, with the cluster defaults counted where they
//! matter (sockets, CPU requests). When KubeVirt refuses the VM before that step (a conflict,
//! say) it answers with that refusal alone, and only the schema's enumerations, which it checks
//! first, are judged here. A VM whose instancetype or preference is not found is judged as
//! written, and then SMM, which the preference may fill in, only where the VM turns it off
//! itself. A VirtualMachineInstance is judged with its presets and
//! the VMI defaults applied (as written when its presets conflict). Presets that conflict, or a
//! preset of the namespace whose selector does not parse, have KubeVirt's mutating webhook
//! refuse the VMI first: that refusal is a finding of its own, at the labels. So is the
//! refusal of the cluster's default interface by the VMI defaults that follow, for a VMI
//! that lists no interfaces or networks, at its spec.
//!
//! KubeVirt merges presets in Go map order, which is unspecified. Where presets set a part in
//! common, the VMI of each other order is judged too: a finding that only some orders give
//! says so, and names the presets (a finding of the name order, which `vmi` shows, or of an
//! order it does not show).
//!
//! A volume without a disk is fine: KubeVirt adds a disk for it, as `expand` shows. Networks
//! and interfaces that are both missing get the default pod network, so they pair up too.
//!
//! ## Why
//! KubeVirt's webhook refuses the VM with the same field and a message of the same form; the
//! finding quotes it. It is a warning, not an error: KubeVirt checks much more of a VM's spec
//! than this (and some of it against the cluster), and kvrender keeps its errors to the checks
//! it makes in full, the instancetype and preference ones. `--strict` (as in CI) makes it an
//! error.
//!
//! ## Example
//! ```yaml
//! spec:
//!   runStrategy: Always
//!   template:
//!     spec:
//!       domain:
//!         devices:
//!           disks:
//!           - name: root      # no volume is called `root`
//!       volumes:
//!       - name: rootdisk
//!         containerDisk: {image: quay.io/containerdisks/fedora:41}
//! ```
//!
//! ## Fix
//! Name the disk and its volume alike (and each interface and its network), drop `running` in
//! favour of `runStrategy`, and give each volume one source. Give a second network a Multus
//! source instead of another `pod: {}`, put CD-ROMs on `sata` or `scsi`, keep dedicated I/O
//! threads to virtio disks and LUNs to claims, number the boot order from 1 without repeats,
//! keep `sockets` at or below `maxSockets`, requests at or below limits (equal, and whole CPUs,
//! with dedicated CPUs), and give dedicated CPUs memory, NUMA passthrough huge pages and
//! realtime both. A VM without an instancetype needs memory of its own (`domain.memory.guest`
//! or a memory request): KubeVirt admits it without, and refuses every VMI it starts.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use serde_json::Value;

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::kubevirt::defaults::{self, quantity_at};
use crate::kubevirt::presets::PresetIndex;
use crate::kubevirt::profile::ClusterProfile;
use crate::kubevirt::vmi;
use crate::model::path::{self, is_set};
use crate::model::quantity::{Format, Quantity};
use crate::model::{Kind, Object};
use crate::validate::Rule;
use crate::validate::schema;

mod devices;
mod disks;
mod enums;
mod grace;
mod hyperv;
mod interfaces;
mod scheduling;
mod settings;
pub use settings::RESERVED_LABELS;
pub(crate) use settings::io_threads;
mod start;

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::VM_SPEC,
    name: "vm-spec",
    summary: "KubeVirt's VM webhook refuses the VM's spec: both or neither of `running` and `runStrategy`, an unknown run strategy, a disk without a volume of its name, an interface and a network that do not pair up, two disks, volumes, interfaces or networks of one name, a volume with no source or two, two pod networks, a disk bus KubeVirt does not take (ide, unknown, virtio for a CD-ROM) or that does not fit the disk (read-only SATA, a dedicated I/O thread off virtio), a LUN that is not a claim, a DownwardMetrics volume not on a virtio disk, a boot order below 1 or used twice, a disk name that is not a DNS label (also of the disk KubeVirt adds for a volume that no disk or filesystem names), a disk PCI address, serial number, cache or I/O mode, error policy or block size KubeVirt does not take, an input device that is not a tablet, more sockets than `maxSockets`, Secure Boot without SMM, an isolated emulator thread without dedicated CPUs, an interface without exactly one binding, CPU or memory requests out of bounds, huge pages of size 0 or that do not divide the memory, dedicated CPUs, NUMA passthrough or realtime without what they need, memory hotplug without what it needs, a host name, start strategy, I/O threads policy, CPU feature policy, boot loader, ACPI table, sound, video, panic device, host disk, machine type, eviction strategy, probe or kernel boot KubeVirt does not take, cloud-init data missing, doubled or over 2048 bytes, a volume source, access credential or DataVolume template without what it needs, a network without one source, an interface state, binding, name, model, MAC or PCI address or port KubeVirt does not take, a discontinued binding, port ranges or DHCP options KubeVirt does not take, affinity or topology spread constraints Kubernetes does not take, a pull policy, toleration operator or effect, node inclusion policy, probe scheme or DataVolume template access or volume mode outside the values KubeVirt's schema lists, GPUs, host devices, DRA networks or resource claims without what they need, utility volumes at creation, a VMI's Hyper-V features without what they need, a DNS policy or configuration Kubernetes does not take, launch security without what it needs, NVIDIA Grace GPU passthrough without what it needs, labels KubeVirt keeps for itself, a feature whose gate the cluster configuration leaves off, the gate of a discontinued binding the configuration still lists while the binding is used; and on a VMI with its presets and defaults applied (a VMI document, or the one a VM starts) the same, no memory asked for, a ContainerPath volume that is not a filesystem or lies below a reserved path, devices its architecture does not take, presets that select it and conflict, a preset of its namespace whose selector does not parse, or an applied preset whose name is too long for the annotation KubeVirt marks the VMI with; and on a VMI document that lists no interfaces or networks, a default interface the cluster refuses (as `KV012` reports it for a VM). A warning: these are only part of KubeVirt's checks of a VM's spec (`--strict` makes it an error).",
    severity: Severity::Warning,
};

/// The run strategies KubeVirt takes without a feature gate.
const RUN_STRATEGIES: [&str; 5] = ["Halted", "Manual", "Always", "RerunOnFailure", "Once"];

/// The sources a volume may have, exactly one at a time.
const VOLUME_SOURCES: [&str; 16] = [
    "persistentVolumeClaim",
    "sysprep",
    "cloudInitNoCloud",
    "cloudInitConfigDrive",
    "containerDisk",
    "ephemeral",
    "emptyDisk",
    "hostDisk",
    "dataVolume",
    "configMap",
    "secret",
    "downwardAPI",
    "serviceAccount",
    "downwardMetrics",
    "memoryDump",
    "containerPath",
];

/// What a finding that only the applied spec has adds to KubeVirt's message.
const APPLIED_NOTE: &str = " (KubeVirt checks the VM with its instancetype, preference and the \
     cluster defaults applied; the manifest alone would pass)";

/// The same for a VirtualMachineInstance, whose presets and defaults are applied first.
const MUTATED_NOTE: &str = " (KubeVirt checks the VMI with its presets and defaults applied; \
     the manifest alone would pass)";

/// What a finding about the VMI a VM starts adds to KubeVirt's message.
const START_NOTE: &str = " (KubeVirt admits the VirtualMachine, then refuses the \
     VirtualMachineInstance it starts, with its presets and defaults applied)";

/// What the refusal of a VirtualMachineInstance's default interface adds to KubeVirt's message.
const VMI_DEFAULTS_HINT: &str = " (the cluster's default interface, which KubeVirt adds to a \
     VirtualMachineInstance that lists no interfaces or networks: give it its own, such as \
     `masquerade` on the pod network)";

/// Check a VirtualMachine or VirtualMachineInstance against what a cluster of `profile` takes.
/// `applied` is a VM's template spec as KubeVirt's webhook validates it (instancetype,
/// preference and cluster defaults applied), when the admission checks built one; a VM without
/// it is judged on its own spec; one KubeVirt `refused` while applying its instancetype and
/// preference only by the schema check that comes before (KubeVirt validates no more of it,
/// and its spec as written lacks what they would set). A VM that `never_starts` (its instancetype or preference is not
/// found) has no VMI to judge; otherwise `started` builds, when asked, the VMI the VM controller
/// creates of it (before presets and VMI defaults). `presets` are those KubeVirt applies to a
/// VMI before its webhook validates it.
pub fn check(
    obj: &Object,
    profile: &ClusterProfile,
    applied: Option<&Value>,
    refused: bool,
    started: Start<'_>,
    presets: &Mutex<PresetIndex<'_>>,
    out: &mut Vec<Diagnostic>,
) {
    const AT: &str = "spec.template.spec";
    let mut found = Vec::new();
    match obj.kind() {
        Kind::VirtualMachine => {
            let Some(spec @ Value::Object(_)) = obj.value.get("spec") else {
                return;
            };
            run_strategy(spec, profile, &mut found);
            // A template without a spec (or a `null` one) is validated, and starts a VMI, as
            // an empty spec: Go decodes nothing into the struct.
            let no_spec = Value::Object(serde_json::Map::new());
            let template_spec = match path::get(spec, &["template", "spec"]) {
                Some(s @ Value::Object(_)) => Some(s),
                None | Some(Value::Null) if spec.get("template").is_some_and(Value::is_object) => {
                    Some(&no_spec)
                }
                _ => None,
            };
            // The validating webhook reads the quantities as the mutating one sent them back.
            let canonical_template = template_spec.map(vmi::with_canonical_quantities);
            let template_spec = canonical_template.as_deref();
            let canonical_applied = applied.map(vmi::with_canonical_quantities);
            let applied = canonical_applied.as_deref();
            if let Some(meta) = path::get(spec, &["template", "metadata"]) {
                settings::metadata(meta, "spec.template.metadata", true, profile, &mut found);
                if let Some(judged) = applied.or(template_spec) {
                    let at = "spec.template.metadata";
                    grace::annotations(meta, at, judged, profile, &mut found);
                }
            }
            settings::data_volume_templates(spec, &mut found);
            enums::data_volume_templates(spec, &mut found);
            if let Some(template_spec) = template_spec {
                enums::empty_as_written(template_spec, AT, &mut found);
            }
            if let Some(applied) = applied {
                let mut after = Vec::new();
                vm_checks(applied, AT, profile, &mut after);
                // When KubeVirt refuses nothing, what the manifest alone shows does not count;
                // otherwise it says which findings need no note.
                if !after.is_empty() {
                    let mut own = Vec::new();
                    if let Some(template_spec) = template_spec {
                        vm_checks(&with_volume_disks(template_spec), AT, profile, &mut own);
                        name_volume_disks(template_spec, AT, &mut after);
                        name_volume_disks(template_spec, AT, &mut own);
                    }
                    add_noted(after, &own, APPLIED_NOTE, &mut found);
                }
            } else if let Some(template_spec) = template_spec
                && refused
            {
                // KubeVirt answers with the refusal alone; its schema check came first (the
                // enumerations, among them the scheduling ones, whose other checks judge what
                // no instancetype or preference sets). Judged as written, the rest would miss
                // what the instancetype sets (a warning that dedicated CPUs are needed beside
                // an instancetype that brings them).
                enums::check(template_spec, AT, &mut found);
                scheduling::check(template_spec, AT, false, &mut found);
            } else if let Some(template_spec) = template_spec {
                // A preference KubeVirt could not apply here (the VM is refused before this
                // check) may still fill in SMM: leave it out of the judgement then.
                let written = if is_set(spec, &["preference"]) {
                    Written::Only
                } else {
                    Written::Exact
                };
                // KubeVirt validates the VM with a disk added for each volume without one: its
                // name must suit a container, two volumes of one name give two such disks.
                let with_disks = with_volume_disks(template_spec);
                let from = found.len();
                instance_spec(&with_disks, AT, written, &mut found);
                name_volume_disks(template_spec, AT, &mut found[from..]);
                let exact = written == Written::Exact;
                settings::check(template_spec, AT, profile, exact, &mut found);
                interfaces::check(template_spec, AT, profile, &mut found);
                scheduling::check(template_spec, AT, false, &mut found);
                enums::check(template_spec, AT, &mut found);
                devices::check(template_spec, AT, profile, &mut found);
                // An instancetype may set what the VM leaves out (dedicated CPUs).
                if !is_set(spec, &["instancetype"]) {
                    cpu_placement(template_spec, AT, &mut found);
                }
                defaulted_resources(template_spec, profile, AT, &mut found);
            }
            // KubeVirt's storage admitter, the last stage of the VM webhook, judges the
            // DataVolume templates' namespaces only once every other check has passed.
            if found.is_empty() {
                settings::data_volume_namespaces(&obj.value, &mut found);
            }
            // A VM KubeVirt admits may still start a VMI its webhook refuses. An instancetype
            // or preference that could not be applied here would have filled in the VMI's
            // memory, buses or SMM: not judged then.
            let base = applied.or(template_spec);
            if found.is_empty()
                && let Start::Builds {
                    vmi: build,
                    preference,
                } = started
                && (applied.is_some()
                    || !(is_set(spec, &["instancetype"]) || is_set(spec, &["preference"])))
                && let Some(base) = base
            {
                let presets_here = presets
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .has_namespace(obj.effective_namespace());
                // A preference's grace period beyond what the VMI webhook reads exactly
                // (the VM's own is `KV004`'s).
                let grace = "terminationGracePeriodSeconds";
                if let Some(n) = base.get(grace).filter(|n| schema::beyond_float(n))
                    && template_spec.is_none_or(|t| t.get(grace).is_none())
                {
                    let message = schema::beyond_float_message(&n.to_string());
                    found.push((format!("{AT}.{grace}"), message + START_NOTE));
                }
                // The controller adds a disk for each volume without one (and the default
                // interface), set up as the preference says: where that could be refused, the
                // VMI is built as the controller builds it; otherwise the spec KubeVirt's VM
                // webhook judged stands for it.
                let arch = settings::architecture(base, profile);
                let vmi = if is_set(spec, &["preference"]) && preference(arch) {
                    build()
                } else if presets_here && applied.is_some() {
                    // The spec KubeVirt's VM webhook judged has the VMI defaults applied,
                    // which the VMI webhook applies only after the presets: a preset's request
                    // would meet the default one and be skipped.
                    build()
                } else if start::changed_by_mutation(base, profile, presets_here) {
                    Some(start::from_applied(obj, base))
                } else {
                    // What the VMI webhook alone checks, which the defaults of an amd64 VMI
                    // without presets do not change.
                    let mut refused = Vec::new();
                    if start::worth_checking(base) {
                        start::container_paths(&with_volume_disks(base), AT, &mut refused);
                        start::memory(base, AT, &mut refused);
                        settings::per_architecture(base, AT, profile, &mut refused);
                        hyperv::check(base, AT, &mut refused);
                    }
                    found.extend(refused.into_iter().map(|(f, m)| (f, m + START_NOTE)));
                    None
                };
                let mutated =
                    vmi.map(|vmi| start::mutated(vmi, obj.effective_namespace(), presets, profile));
                if let Some(Err(start::Refused::Presets(refusal))) = &mutated {
                    // KubeVirt's mutating webhook refuses the VMI at every start.
                    let at = "spec.template.metadata.labels";
                    found.push((at.to_string(), format!("{refusal}{START_NOTE}")));
                }
                if let Some(Err(start::Refused::Annotations(refused))) = &mutated {
                    // The API server refuses the VMI the presets made, at every start.
                    let at = "spec.template.metadata.labels";
                    found.extend(
                        refused
                            .iter()
                            .map(|m| (at.to_string(), format!("{m}{START_NOTE}"))),
                    );
                }
                if let Some(Ok(mutated)) = mutated {
                    let judge = |vmi: &Value| {
                        let mut refused = Vec::new();
                        if let Some(spec) = vmi.get("spec") {
                            vmi_checks(spec, AT, profile, &mut refused);
                            if let Some(template_spec) = template_spec {
                                name_volume_disks(template_spec, AT, &mut refused);
                            }
                        }
                        refused
                            .into_iter()
                            .map(|(f, m)| (f, m + START_NOTE))
                            .collect()
                    };
                    let others: Vec<_> = mutated.other_orders.iter().map(judge).collect();
                    let refused =
                        start::across_orders(judge(&mutated.vmi), &others, &mutated.presets);
                    found.extend(refused);
                }
            }
        }
        Kind::VirtualMachineInstance => {
            if let Some(meta) = obj.value.get("metadata") {
                settings::metadata(meta, "metadata", true, profile, &mut found);
            }
            if let Some(spec @ Value::Object(_)) = obj.value.get("spec") {
                enums::empty_as_written(spec, "spec", &mut found);
                let namespace = obj.effective_namespace();
                let vmi = crate::kubevirt::vmi::vmi_for(obj)
                    .map(|vmi| start::mutated(vmi, namespace, presets, profile));
                match &vmi {
                    Some(Err(start::Refused::Presets(refusal))) => {
                        found.push(("metadata.labels".to_string(), refusal.to_string()));
                    }
                    Some(Err(start::Refused::Defaults(message))) => {
                        found.push(("spec".to_string(), format!("{message}{VMI_DEFAULTS_HINT}")));
                    }
                    Some(Err(start::Refused::Annotations(refused))) => {
                        found.extend(
                            refused
                                .iter()
                                .map(|m| ("metadata.labels".to_string(), m.clone())),
                        );
                    }
                    _ => {}
                }
                let vmi = vmi.and_then(Result::ok);
                let mutated = vmi.as_ref().and_then(|m| m.vmi.get("spec"));
                if let Some(meta) = obj.value.get("metadata") {
                    grace::annotations(
                        meta,
                        "metadata",
                        mutated.unwrap_or(spec),
                        profile,
                        &mut found,
                    );
                }
                if let Some(vmi) = &vmi
                    && let Some(mutated) = mutated
                {
                    // Judged as KubeVirt judges it, with its presets and defaults applied, in
                    // each order of the presets that gives another VMI.
                    let judge = |mutated: &Value| {
                        let mut after = Vec::new();
                        vmi_checks(mutated, "spec", profile, &mut after);
                        name_volume_disks(spec, "spec", &mut after);
                        after
                    };
                    let after = judge(mutated);
                    let others: Vec<_> = vmi
                        .other_orders
                        .iter()
                        .filter_map(|v| v.get("spec"))
                        .map(judge)
                        .collect();
                    if !after.is_empty() || others.iter().any(|o| !o.is_empty()) {
                        let mut own = Vec::new();
                        vmi_checks(spec, "spec", profile, &mut own);
                        let noted = |after: Vec<(String, String)>| {
                            let mut found = Vec::new();
                            add_noted(after, &own, MUTATED_NOTE, &mut found);
                            found
                        };
                        let others: Vec<_> = others.into_iter().map(noted).collect();
                        found.extend(start::across_orders(noted(after), &others, &vmi.presets));
                    }
                } else {
                    // KubeVirt refuses it before (conflicting presets, or a default interface
                    // the cluster refuses): its CPU and memory are not judged, presets and
                    // defaults would have added to them.
                    instance_spec(spec, "spec", Written::Only, &mut found);
                    settings::check(spec, "spec", profile, false, &mut found);
                    interfaces::check(spec, "spec", profile, &mut found);
                    scheduling::check(spec, "spec", false, &mut found);
                    enums::check(spec, "spec", &mut found);
                    devices::check(spec, "spec", profile, &mut found);
                    settings::per_architecture(spec, "spec", profile, &mut found);
                    hyperv::check(spec, "spec", &mut found);
                    cpu_placement(spec, "spec", &mut found);
                }
            }
        }
        _ => return,
    }
    for (field, message) in found {
        out.push(
            Diagnostic::warning(RULE.code, obj.origin.clone(), message)
                .with_field(field)
                .with_object(obj.object_ref()),
        );
    }
}

/// Whether a VM starts, and how to build the VMI the controller creates of it when it does.
#[derive(Clone, Copy)]
pub enum Start<'a> {
    /// Its instancetype or preference is not found: the controller creates no VMI.
    Never,
    /// The VMI the controller creates (its metadata and spec, before the presets and the VMI
    /// defaults), or `None` when the controller refuses; and whether the VM's preference is
    /// found and sets up what the controller adds in a way that could be refused
    /// ([`preference_refusable`]).
    Builds {
        /// The VMI.
        vmi: &'a dyn Fn() -> Option<Value>,
        /// Whether the preference could have the VMI refused, given the VMI's architecture.
        preference: &'a dyn Fn(&str) -> bool,
    },
}

/// Whether the disks and interface the VM controller adds to a VMI of architecture `arch`
/// could be refused once a preference of this spec has set them up: a disk bus other than
/// virtio, SCSI, SATA and USB (on arm64, other than virtio and SCSI), a dedicated I/O thread
/// off virtio, a block size, cache or I/O mode, or an interface model KubeVirt does not take.
pub fn preference_refusable(preference: &Value, arch: &str) -> bool {
    let devices = preference.get("devices").unwrap_or(&Value::Null);
    let chosen = path::str_at(devices, &["preferredDiskBus"]);
    let bus = chosen.unwrap_or("sata");
    !["virtio", "scsi", "sata", "usb"].contains(&bus)
        || (arch == "arm64" && chosen.is_some_and(|b| !["virtio", "scsi"].contains(&b)))
        || (bus != "virtio"
            && path::get(devices, &["preferredDiskDedicatedIoThread"]) == Some(&Value::Bool(true)))
        || [
            "preferredDiskBlockSize",
            "preferredDiskCache",
            "preferredDiskIO",
        ]
        .iter()
        .any(|k| is_set(devices, &[k]))
        || path::str_at(devices, &["preferredInterfaceModel"])
            .is_some_and(|m| !interfaces::MODELS.contains(&m))
}

/// Add `after`'s findings to `found`, with `note` after the message of each that the manifest
/// as written (`own`) does not show.
fn add_noted(
    after: Vec<(String, String)>,
    own: &[(String, String)],
    note: &str,
    found: &mut Vec<(String, String)>,
) {
    for (field, message) in after {
        let message = if own.iter().any(|(f, m)| *f == field && *m == message) {
            message
        } else {
            format!("{message}{note}")
        };
        found.push((field, message));
    }
}

/// The checks the VM and VMI webhooks both make on the spec at `at`, which is what KubeVirt
/// validates (defaults applied).
fn shared_checks(
    spec: &Value,
    at: &str,
    profile: &ClusterProfile,
    found: &mut Vec<(String, String)>,
) {
    instance_spec(spec, at, Written::Exact, found);
    settings::check(spec, at, profile, true, found);
    interfaces::check(spec, at, profile, found);
    // A pool's template, which no schema check of KubeVirt's sees first, gets Kubernetes'
    // own words for an operator or an action it does not know.
    let kubernetes_words = profile.as_written && !profile.schema_as_written;
    scheduling::check(spec, at, kubernetes_words, found);
    if !profile.as_written {
        enums::check(spec, at, found);
    } else if profile.schema_as_written {
        enums::check_as(spec, at, enums::Pass::AsWritten, found);
    }
    devices::check(spec, at, profile, found);
    cpu_placement(spec, at, found);
    resources(spec, at, found);
}

/// Every check of the VM webhook on the spec at `at` of a VM's template, as KubeVirt validates
/// it (instancetype, preference and cluster defaults applied).
fn vm_checks(spec: &Value, at: &str, profile: &ClusterProfile, found: &mut Vec<(String, String)>) {
    shared_checks(spec, at, profile, found);
    memory_hotplug(spec, at, profile, found);
}

/// What KubeVirt's VirtualMachinePool webhook refuses in the VM `spec` of a pool's template
/// (at `root`), as written: the VM webhook's checks of a VM's spec, without the instancetype,
/// preference and defaults the VM webhook applies before them. The fields of the template are
/// below `root`; the few checks of the VM's own fields name them as on a VM (`spec.running`).
pub fn template_refusals(
    spec: &Value,
    root: &str,
    profile: &ClusterProfile,
) -> Vec<(String, String)> {
    let as_written = ClusterProfile {
        as_written: true,
        ..profile.clone()
    };
    let profile = &as_written;
    let mut found = Vec::new();
    let Some(template) = spec.get("template").filter(|t| t.is_object()) else {
        found.push((
            format!("{root}.template"),
            "missing virtual machine template.".to_string(),
        ));
        return found;
    };
    run_strategy(spec, profile, &mut found);
    let no_spec = Value::Object(serde_json::Map::new());
    let template_spec = match template.get("spec") {
        Some(s @ Value::Object(_)) => s,
        _ => &no_spec,
    };
    if let Some(meta) = template.get("metadata") {
        let at = format!("{root}.template.metadata");
        settings::metadata(meta, &at, true, profile, &mut found);
        grace::annotations(meta, &at, template_spec, profile, &mut found);
    }
    // The enumerations of KubeVirt's schema (`enums`) are the VM webhook's, not the pool's.
    settings::data_volume_templates(spec, &mut found);
    vm_checks(
        template_spec,
        &format!("{root}.template.spec"),
        profile,
        &mut found,
    );
    found
}

/// What KubeVirt's VirtualMachineInstancePreset webhook refuses in a preset's `spec`, in its
/// order: its schema check of the preset as written (a kernel boot container's pull policy, an
/// empty one too), a preset without a `domain`, then the checks it shares with the VMI webhook
/// on the domain's disks (names, one target, boot order, bus, PCI address, serial, cache, I/O
/// and error modes, block sizes) and firmware (boot loader, kernel boot). Each check stops the
/// webhook at its stage, so a later stage is not judged when an earlier one refuses.
pub fn preset_refusals(spec: &Value) -> Vec<(String, String)> {
    const AT: &str = "spec";
    let mut found = Vec::new();
    enums::kernel_boot_pull_policy(spec, AT, &mut found);
    if !found.is_empty() {
        return found;
    }
    let Some(domain) = spec.get("domain").filter(|d| !d.is_null()) else {
        found.push((format!("{AT}.domain"), "missing domain.".to_string()));
        return found;
    };
    let disks = items(spec, &["domain", "devices", "disks"]);
    disk_names_and_targets(AT, &disks, &mut found);
    for (i, disk) in &disks {
        if path::get(disk, &["bootOrder"]).and_then(Value::as_u64) == Some(0) {
            let disk_at = format!("{AT}.domain.devices.disks[{i}]");
            found.push((
                format!("{disk_at}.bootOrder"),
                format!("{disk_at} must have a boot order > 0, if supplied"),
            ));
        }
    }
    buses(AT, &disks, &mut found);
    disks::check(AT, &disks, true, &mut found);
    settings::firmware(domain, AT, &mut found);
    found
}

/// What KubeVirt's VirtualMachineInstanceReplicaSet webhook refuses in the VMI template at
/// `root` of a replica set, as written: the VMI webhook's checks of a VMI's spec, without the
/// presets and defaults the VMI webhook applies before them, and of the template's annotations;
/// not those of its labels (the controller creates the VMIs).
pub fn vmi_template_refusals(
    template: &Value,
    root: &str,
    profile: &ClusterProfile,
) -> Vec<(String, String)> {
    let as_written = ClusterProfile {
        as_written: true,
        schema_as_written: true,
        ..profile.clone()
    };
    let profile = &as_written;
    let mut found = Vec::new();
    let no_spec = Value::Object(serde_json::Map::new());
    let spec = match template.get("spec") {
        Some(s @ Value::Object(_)) => s,
        _ => &no_spec,
    };
    if let Some(meta) = template.get("metadata") {
        grace::annotations(meta, &format!("{root}.metadata"), spec, profile, &mut found);
    }
    let at = format!("{root}.spec");
    shared_checks(spec, &at, profile, &mut found);
    if profile.hotplug.is_none() {
        guest_within_limit(spec, &at, &mut found);
    }
    found
}

/// What KubeVirt's VMI webhook refuses in `vmi`, a VirtualMachineInstance with its presets and
/// the VMI defaults applied (as `kvrender vmi` builds it): field and message. `by_user` says
/// who creates it: a user (a VMI document), or KubeVirt's VM controller (the VMI a VM starts),
/// which may write the labels KubeVirt keeps for itself.
pub fn vmi_refusals(vmi: &Value, by_user: bool, profile: &ClusterProfile) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let spec = vmi.get("spec").unwrap_or(&Value::Null);
    if spec.is_object() {
        vmi_checks(spec, "spec", profile, &mut found);
        // Whole numbers the webhook cannot read exactly, wherever they come from.
        let mut problems = Vec::new();
        schema::check(spec, schema::VMI_SPEC_TY, "spec", &mut problems);
        for p in problems {
            if let schema::Problem::BeyondFloat { path, found: n } = p {
                found.push((path, schema::beyond_float_message(&n)));
            }
        }
    }
    if let Some(meta) = vmi.get("metadata") {
        settings::metadata(meta, "metadata", by_user, profile, &mut found);
        grace::annotations(meta, "metadata", spec, profile, &mut found);
    }
    found
}

/// What KubeVirt's VMI mutating webhook refuses in a VirtualMachineInstance document's `spec`
/// as written, before its presets and defaults are applied: an empty value in a field whose
/// values its schema lists (the others are [`vmi_refusals`]'s).
pub fn vmi_document_refusals(spec: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    if spec.is_object() {
        enums::empty_as_written(spec, "spec", &mut found);
    }
    found
}

/// Every check of the VMI webhook on the spec at `at` of a VirtualMachineInstance, presets and
/// defaults applied: those of the VM webhook and those it alone makes (some memory asked for,
/// what each architecture takes, Hyper-V features).
fn vmi_checks(spec: &Value, at: &str, profile: &ClusterProfile, found: &mut Vec<(String, String)>) {
    // The validating webhook reads the quantities as the mutating one sent them back.
    let spec = &*vmi::with_canonical_quantities(spec);
    shared_checks(spec, at, profile, found);
    // Memory hotplug's own checks are the VM webhook's; this one is shared.
    if profile.hotplug.is_none() {
        guest_within_limit(spec, at, found);
    }
    start::container_paths(spec, at, found);
    start::memory(spec, at, found);
    settings::per_architecture(spec, at, profile, found);
    hyperv::check(spec, at, found);
}

/// The spec KubeVirt validates for a VM's template as far as disks go: with a disk `{name}`
/// added for each volume no disk or filesystem names (`SetDefaultVolumeDisk`).
fn with_volume_disks(spec: &Value) -> Cow<'_, Value> {
    if defaults::volumes_without_disk(spec).next().is_none() {
        return Cow::Borrowed(spec);
    }
    let mut copy = spec.clone();
    defaults::set_default_volume_disks(&mut copy);
    Cow::Owned(copy)
}

/// Name the volume behind each finding about a disk KubeVirt added to the spec at `at` (one
/// past the spec's own disks, see [`with_volume_disks`]): the manifest has no such disk.
fn name_volume_disks(spec: &Value, at: &str, found: &mut [(String, String)]) {
    if found.is_empty() {
        return;
    }
    let added: Vec<&str> = defaults::volumes_without_disk(spec).collect();
    if added.is_empty() {
        return;
    }
    let own = path::get(spec, &["domain", "devices", "disks"])
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let disks = format!("{at}.domain.devices.disks[");
    for (field, message) in found {
        let index = field
            .strip_prefix(&*disks)
            .and_then(|rest| rest.split_once(']'))
            .and_then(|(i, _)| i.parse::<usize>().ok());
        if let Some(volume) = index
            .and_then(|i| i.checked_sub(own))
            .and_then(|k| added.get(k))
        {
            message.push_str(&format!(
                " (the disk KubeVirt adds for volume `{volume}`, which no disk or filesystem \
                 names)"
            ));
        }
    }
}

/// How a spec's absent values are read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Written {
    /// The spec is what KubeVirt validates: an absent SMM feature is SMM turned off.
    Exact,
    /// Something may still fill in what the spec leaves out (a preference, the VMI
    /// defaults): only values it writes are judged.
    Only,
}

/// What KubeVirt's VM webhook refuses in the run strategy of a VM's `spec`: neither or both of
/// `running` and `runStrategy`, or a strategy it does not take (field, message).
pub fn run_strategy_refusals(spec: &Value, profile: &ClusterProfile) -> Vec<(String, String)> {
    let mut found = Vec::new();
    run_strategy(spec, profile, &mut found);
    found
}

fn run_strategy(spec: &Value, profile: &ClusterProfile, found: &mut Vec<(String, String)>) {
    let (running, strategy) = (is_set(spec, &["running"]), is_set(spec, &["runStrategy"]));
    if running && strategy {
        found.push((
            "spec.running".into(),
            "Running and RunStrategy are mutually exclusive. Note that Running is deprecated, \
             please use RunStrategy instead"
                .into(),
        ));
    }
    if !running && !strategy {
        found.push((
            "spec.running".into(),
            "RunStrategy must be specified (`runStrategy: Always`, `Halted`, ...)".into(),
        ));
    }
    match spec.get("runStrategy").and_then(Value::as_str) {
        Some("WaitAsReceiver") if profile.wait_as_receiver => {}
        Some("WaitAsReceiver") => found.push((
            "spec.runStrategy".into(),
            "Invalid RunStrategy (WaitAsReceiver), DecentralizedLiveMigration feature gate is \
             not enabled in kubevirt resource"
                .into(),
        )),
        Some(s) if !RUN_STRATEGIES.contains(&s) => found.push((
            "spec.runStrategy".into(),
            format!(
                "Invalid RunStrategy ({s}) (KubeVirt knows {})",
                RUN_STRATEGIES.join(", ")
            ),
        )),
        _ => {}
    }
}

/// The items of the list at `at` below `spec` that are mappings, with their index (an item of
/// another type is the type check's to report).
fn items<'a>(spec: &'a Value, at: &[&str]) -> Vec<(usize, &'a Value)> {
    path::get(spec, at)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, v)| v.is_object())
        .collect()
}

/// A name as Go reads it: a missing or `null` name is `""`.
fn name(item: &Value) -> &str {
    path::str_at(item, &["name"]).unwrap_or("")
}

/// The most pairs of same-named disks listed one by one; the rest are counted in one finding.
const MOST_PAIRS_LISTED: usize = 1000;

/// No two disks of the spec at `at` share a name, and each has at most one target.
fn disk_names_and_targets(at: &str, disks: &[(usize, &Value)], found: &mut Vec<(String, String)>) {
    let disk_at = |i: usize| format!("{at}.domain.devices.disks[{i}]");
    // KubeVirt names every earlier disk of the same name; found through the disks of each
    // name, so that thousands of distinct names are not compared with each other. n disks of
    // one name make n(n-1)/2 pairs: past the first thousand, the rest are counted, not
    // listed (a hostile list of 3,000 would print 4.5 million lines).
    let mut same_name: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut pairs_unlisted = 0usize;
    let mut first_unlisted = None;
    let mut pairs_listed = 0usize;
    for (i, disk) in disks {
        let earlier = same_name.entry(name(disk)).or_default();
        let listed = earlier.len().min(MOST_PAIRS_LISTED - pairs_listed);
        if listed < earlier.len() {
            pairs_unlisted += earlier.len() - listed;
            first_unlisted.get_or_insert(*i);
        }
        pairs_listed += listed;
        for j in &earlier[..listed] {
            found.push((
                format!("{}.name", disk_at(*i)),
                format!(
                    "{} and {} must not have the same Name.",
                    disk_at(*i),
                    disk_at(*j)
                ),
            ));
        }
        earlier.push(*i);
        if ["disk", "lun", "cdrom"]
            .iter()
            .filter(|t| is_set(disk, &[t]))
            .count()
            > 1
        {
            found.push((
                disk_at(*i),
                format!("{} can only have a single target type defined", disk_at(*i)),
            ));
        }
    }
    if let Some(i) = first_unlisted {
        found.push((
            format!("{}.name", disk_at(i)),
            format!(
                "and {pairs_unlisted} more pairs of disks with the same Name, from {} on (KubeVirt \
                 names each pair; the first {MOST_PAIRS_LISTED} are listed)",
                disk_at(i)
            ),
        ));
    }
}

fn instance_spec(spec: &Value, at: &str, written: Written, found: &mut Vec<(String, String)>) {
    let disks = items(spec, &["domain", "devices", "disks"]);
    let volumes = items(spec, &["volumes"]);
    let interfaces = items(spec, &["domain", "devices", "interfaces"]);
    let networks = items(spec, &["networks"]);
    let disk_at = |i: usize| format!("{at}.domain.devices.disks[{i}]");
    let volume_at = |i: usize| format!("{at}.volumes[{i}]");
    let iface_at = |i: usize| format!("{at}.domain.devices.interfaces[{i}]");
    let network_at = |i: usize| format!("{at}.networks[{i}]");

    // Disks: unique names, one target, a volume of their name.
    disk_names_and_targets(at, &disks, found);
    let volume_names: HashSet<&str> = volumes.iter().map(|(_, v)| name(v)).collect();
    for (i, disk) in &disks {
        if !volume_names.contains(name(disk)) && !is_set(disk, &["cdrom"]) {
            found.push((
                format!("{}.name", disk_at(*i)),
                format!(
                    "{}.Name '{}' not found: no volume has that name",
                    disk_at(*i),
                    name(disk)
                ),
            ));
        }
    }

    // Volumes: unique names, exactly one source.
    let mut first_of: HashMap<&str, usize> = HashMap::new();
    for (i, volume) in &volumes {
        if let Some(j) = first_of.get(name(volume)) {
            found.push((
                format!("{}.name", volume_at(*i)),
                format!(
                    "{} and {} must not have the same Name.",
                    volume_at(*i),
                    volume_at(*j)
                ),
            ));
        } else {
            first_of.insert(name(volume), *i);
        }
        if VOLUME_SOURCES
            .iter()
            .filter(|s| is_set(volume, &[s]))
            .count()
            != 1
        {
            found.push((
                volume_at(*i),
                format!("{} must have exactly one source type set", volume_at(*i)),
            ));
        }
    }

    // Networks and interfaces pair up by name, each name once.
    let mut network_names = HashSet::new();
    for (i, network) in &networks {
        if !network_names.insert(name(network)) {
            found.push((
                format!("{}.name", network_at(*i)),
                format!(
                    "Network with name {:?} already exists, every network must have a unique name",
                    name(network)
                ),
            ));
        }
    }
    let iface_names: HashSet<&str> = interfaces.iter().map(|(_, v)| name(v)).collect();
    for (i, network) in &networks {
        if !iface_names.contains(name(network)) {
            found.push((
                format!("{}.name", network_at(*i)),
                format!(
                    "{}.name '{}' not found: no interface has that name",
                    network_at(*i),
                    name(network)
                ),
            ));
        }
    }
    let mut seen = HashSet::new();
    for (i, iface) in &interfaces {
        // The binding methods KubeVirt takes (`slirp`, `macvtap` and `passt` are gone).
        let bindings = ["bridge", "masquerade", "sriov", "passtBinding", "binding"]
            .iter()
            .filter(|b| is_set(iface, &[b]))
            .count();
        if bindings != 1 {
            found.push((
                iface_at(*i),
                format!(
                    "logical {} interface must have exactly one binding method or binding plugin",
                    name(iface)
                ),
            ));
        }
        if !seen.insert(name(iface)) {
            found.push((
                format!("{}.name", iface_at(*i)),
                "Only one interface can be connected to one specific network".into(),
            ));
        }
        if !network_names.contains(name(iface)) {
            found.push((
                format!("{}.name", iface_at(*i)),
                format!(
                    "{}.name '{}' not found: no network has that name",
                    iface_at(*i),
                    name(iface)
                ),
            ));
        }
    }
    network_sources(at, &networks, found);
    buses(at, &disks, found);
    disks::check(at, &disks, written == Written::Exact, found);
    disk_volumes_and_boot_order(at, &disks, &volumes, &interfaces, found);
    inputs(spec, at, found);
    sockets(spec, at, found);
    secure_boot(spec, at, written, found);
}

/// EFI Secure Boot (on unless `secureBoot: false`) with SMM turned off, outside TDX.
fn secure_boot(spec: &Value, at: &str, written: Written, found: &mut Vec<(String, String)>) {
    let efi = path::get(spec, &["domain", "firmware", "bootloader", "efi"]);
    let secure_boot = efi.is_some_and(|efi| {
        !efi.is_null() && path::get(efi, &["secureBoot"]) != Some(&Value::Bool(false))
    });
    let smm_present = is_set(spec, &["domain", "features", "smm"]);
    let smm_disabled =
        path::get(spec, &["domain", "features", "smm", "enabled"]) == Some(&Value::Bool(false));
    // KubeVirt counts SMM on only where `smm` is present and not `enabled: false`.
    let smm_off = match written {
        Written::Exact => !smm_present || smm_disabled,
        Written::Only => smm_present && smm_disabled,
    };
    let tdx = is_set(spec, &["domain", "launchSecurity", "tdx"]);
    if secure_boot && smm_off && !tdx {
        found.push((
            format!("{at}.domain"),
            format!(
                "{at}.domain has EFI SecureBoot enabled. SecureBoot requires SMM, which is \
                 currently disabled."
            ),
        ));
    }
}

/// `isolateEmulatorThread` needs `dedicatedCpuPlacement`.
fn cpu_placement(spec: &Value, at: &str, found: &mut Vec<(String, String)>) {
    let flag = |key: &str| path::get(spec, &["domain", "cpu", key]) == Some(&Value::Bool(true));
    if flag("isolateEmulatorThread") && !flag("dedicatedCpuPlacement") {
        found.push(isolate_without_dedicated(at));
    }
}

/// KubeVirt's refusal of an isolated emulator thread without dedicated CPUs, for the spec at
/// `at`: field and message.
pub(crate) fn isolate_without_dedicated(at: &str) -> (String, String) {
    (
        format!("{at}.domain.cpu.isolateEmulatorThread"),
        "IsolateEmulatorThread should be only set in combination with DedicatedCPUPlacement".into(),
    )
}

/// KubeVirt's refusal of NUMA guest mapping passthrough without dedicated CPUs.
pub(crate) fn numa_without_dedicated(at: &str) -> (String, String) {
    let passthrough = format!("{at}.domain.cpu.numa.guestMappingPassthrough");
    let message = format!(
        "{at}.domain.cpu.dedicatedCpuPlacement must be set to true when NUMA topology strategy \
         is set in {passthrough}"
    );
    (passthrough, message)
}

/// KubeVirt's refusal of realtime without dedicated CPUs.
pub(crate) fn realtime_without_dedicated(at: &str) -> (String, String) {
    let placement = format!("{at}.domain.cpu.dedicatedCpuPlacement");
    let message = format!("{placement} must be set to true when {at}.domain.cpu.realtime is used");
    (placement, message)
}

/// KubeVirt's refusal of realtime without NUMA guest mapping passthrough.
pub(crate) fn realtime_without_numa(at: &str) -> (String, String) {
    let passthrough = format!("{at}.domain.cpu.numa.guestMappingPassthrough");
    let message = format!("{passthrough} must be defined when {at}.domain.cpu.realtime is used");
    (passthrough, message)
}

/// One pod network at most, one Multus default network at most, and not one of each.
fn network_sources(at: &str, networks: &[(usize, &Value)], found: &mut Vec<(String, String)>) {
    let pod = networks.iter().filter(|(_, n)| is_set(n, &["pod"])).count();
    let multus_default = networks
        .iter()
        .filter(|(_, n)| path::get(n, &["multus", "default"]) == Some(&Value::Bool(true)))
        .count();
    if pod > 1 {
        found.push((
            format!("{at}.interfaces"),
            format!("more than one interface is connected to a pod network in {at}.interfaces"),
        ));
    }
    if multus_default > 1 {
        found.push((
            format!("{at}.networks"),
            "Multus CNI should only have one default network".into(),
        ));
    }
    if pod > 0 && multus_default > 0 {
        found.push((
            format!("{at}.networks"),
            "Pod network cannot be defined when Multus default network is defined".into(),
        ));
    }
}

/// The buses a disk may name (`ide` is refused on its own).
const DISK_BUSES: [&str; 5] = ["virtio", "scsi", "sata", "usb", "ide"];

/// Buses and bus-bound settings a disk of its type cannot have: `ide` or a bus KubeVirt does not
/// know for any, `virtio` for a CD-ROM, `readOnly` for a SATA hard disk, a dedicated I/O thread
/// off the virtio bus. A disk without a bus is not judged here (KubeVirt picks one later).
fn buses(at: &str, disks: &[(usize, &Value)], found: &mut Vec<(String, String)>) {
    for (i, disk) in disks {
        // KubeVirt reads the bus of the first target the disk has, in this order.
        let Some(target) = ["disk", "lun", "cdrom"]
            .into_iter()
            .find(|t| is_set(disk, &[t]))
        else {
            continue;
        };
        let disk_at = format!("{at}.domain.devices.disks[{i}]");
        let field = format!("{disk_at}.{target}.bus");
        let bus = path::str_at(disk, &[target, "bus"]).unwrap_or("");
        if bus.is_empty() {
            continue;
        }
        match bus {
            "ide" => found.push((field, "IDE bus is not supported".into())),
            "virtio" if target == "cdrom" => {
                found.push((field, "Bus type virtio is invalid for CD-ROM device".into()));
            }
            "sata"
                if target == "disk"
                    && path::get(disk, &["disk", "readonly"]) == Some(&Value::Bool(true)) =>
            {
                found.push((field, "sata hard-disks do not support read-only.".into()));
            }
            _ if !DISK_BUSES.contains(&bus) => found.push((
                field,
                format!(
                    "{disk_at} is set with an unrecognized bus {bus}, must be one of: [virtio \
                     scsi sata usb]"
                ),
            )),
            _ => {}
        }
        if bus != "virtio" && path::get(disk, &["dedicatedIOThread"]) == Some(&Value::Bool(true)) {
            // KubeVirt's own field for this one repeats the list's path; the disk is meant.
            found.push((
                disk_at,
                format!("IOThreads are not supported for disks on a {bus} bus"),
            ));
        }
    }
}

/// A LUN needs a PersistentVolumeClaim or DataVolume behind it, a DownwardMetrics volume a
/// disk target on the virtio bus, and a disk's or interface's boot order is at least 1 and its
/// own (disks first, as KubeVirt counts them).
fn disk_volumes_and_boot_order(
    at: &str,
    disks: &[(usize, &Value)],
    volumes: &[(usize, &Value)],
    interfaces: &[(usize, &Value)],
    found: &mut Vec<(String, String)>,
) {
    // KubeVirt keeps the last volume of each name.
    let by_name: HashMap<&str, &Value> = volumes.iter().map(|(_, v)| (name(v), *v)).collect();
    let mut orders = HashSet::new();
    for (i, disk) in disks {
        let disk_at = format!("{at}.domain.devices.disks[{i}]");
        if is_set(disk, &["lun"])
            && let Some(volume) = by_name.get(name(disk))
            && !is_set(volume, &["persistentVolumeClaim"])
            && !is_set(volume, &["dataVolume"])
        {
            found.push((
                format!("{disk_at}.lun"),
                format!(
                    "{disk_at}.lun can only be mapped to a DataVolume or PersistentVolumeClaim \
                     volume."
                ),
            ));
        }
        if by_name
            .get(name(disk))
            .is_some_and(|v| is_set(v, &["downwardMetrics"]))
        {
            match path::get(disk, &["disk"]).filter(|t| !t.is_null()) {
                None => found.push((
                    format!("{disk_at}.disk"),
                    format!(
                        "DownwardMetrics volume must be mapped to a disk, but disk is not set on \
                         {disk_at}.disk."
                    ),
                )),
                Some(target) => {
                    if let Some(bus) = path::str_at(target, &["bus"])
                        && !["", "virtio"].contains(&bus)
                    {
                        found.push((
                            format!("{disk_at}.disk.bus"),
                            format!(
                                "DownwardMetrics volume must be mapped to virtio bus, but \
                                 {disk_at}.disk.bus is set to {bus}"
                            ),
                        ));
                    }
                }
            }
        }
        let Some(order) = path::get(disk, &["bootOrder"]).and_then(Value::as_u64) else {
            continue;
        };
        if order < 1 {
            found.push((
                format!("{disk_at}.bootOrder"),
                format!("{disk_at} must have a boot order > 0, if supplied"),
            ));
        }
        if !orders.insert(order) {
            found.push((
                format!("{disk_at}.bootOrder"),
                format!("Boot order for {disk_at}.bootOrder already set for a different device."),
            ));
        }
    }
    for (i, iface) in interfaces {
        let Some(order) = path::get(iface, &["bootOrder"]).and_then(Value::as_u64) else {
            continue;
        };
        let iface_at = format!("{at}.domain.devices.interfaces[{i}]");
        if order < 1 {
            // KubeVirt's field and message here name `{at}[i]`; the interface is meant.
            found.push((
                format!("{iface_at}.bootOrder"),
                format!("{iface_at} must have a boot order > 0, if supplied"),
            ));
        } else if !orders.insert(order) {
            found.push((
                format!("{iface_at}.bootOrder"),
                format!("Boot order for {iface_at}.bootOrder already set for a different device."),
            ));
        }
    }
}

/// Input devices: a tablet, on the virtio or USB bus (where the manifest says).
fn inputs(spec: &Value, at: &str, found: &mut Vec<(String, String)>) {
    for (i, input) in items(spec, &["domain", "devices", "inputs"]) {
        let input_at = format!("{at}.domain.devices.inputs[{i}]");
        if let Some(bus) = path::str_at(input, &["bus"])
            && !matches!(bus, "virtio" | "usb" | "")
        {
            found.push((
                format!("{input_at}.bus"),
                "Input device can have only virtio or usb bus.".into(),
            ));
        }
        if let Some(kind) = path::str_at(input, &["type"])
            && kind != "tablet"
        {
            found.push((
                format!("{input_at}.type"),
                "Input device can have only tablet type.".into(),
            ));
        }
    }
}

/// CPU sockets within `maxSockets`, when the manifest sets the latter. Sockets nobody set are
/// the ones KubeVirt's defaults give (from the CPU limit or request when the spec sets no
/// topology at all).
fn sockets(spec: &Value, at: &str, found: &mut Vec<(String, String)>) {
    let count = |key: &str| path::get(spec, &["domain", "cpu", key]).and_then(Value::as_u64);
    let Some(max) = count("maxSockets").filter(|max| *max != 0) else {
        return;
    };
    let sockets = defaults::default_sockets(spec).or_else(|| count("sockets"));
    if sockets.is_some_and(|sockets| sockets > max) {
        found.push((
            format!("{at}.domain.cpu.sockets"),
            "Number of sockets in CPU topology is greater than the maximum sockets allowed".into(),
        ));
    }
}

/// Whether [`resources`] or [`memory_hotplug`] could find anything in `spec`, so that it is
/// worth a copy with KubeVirt's defaults applied (the CPU request comes from the limit, the
/// topology from either, the guest memory from the request): a spec without resources, huge
/// pages, a `maxGuest` or a dedicated, NUMA or realtime CPU has nothing they judge.
fn reads_defaulted_resources(spec: &Value) -> bool {
    is_set(spec, &["domain", "resources"])
        || is_set(spec, &["domain", "memory", "hugepages"])
        || is_set(spec, &["domain", "memory", "maxGuest"])
        || ["dedicatedCpuPlacement", "realtime", "numa"]
            .iter()
            .any(|k| is_set(spec, &["domain", "cpu", k]))
}

/// The memory a VM asks for (its request, else its guest memory, else its limit) holds a whole
/// number of its huge pages, one at least.
fn hugepages(spec: &Value, at: &str, req_mem: &Quantity, found: &mut Vec<(String, String)>) {
    let Some(hugepages) =
        path::get(spec, &["domain", "memory", "hugepages"]).filter(|v| !v.is_null())
    else {
        return;
    };
    let page = path::str_at(hugepages, &["pageSize"]).unwrap_or("");
    let value = |p: &[&str]| quantity_at(spec, p).map_or(0, |q| q.value());
    let mut memory = req_mem.value();
    if memory == 0 {
        memory = value(&["domain", "memory", "guest"]);
    }
    if memory == 0 {
        memory = value(&["domain", "resources", "limits", "memory"]);
    }
    if let Some(objection) = HugepagesObjection::of(page, memory) {
        found.push(objection.refusal(at, req_mem, page));
    }
}

/// Why KubeVirt's VMI webhook refuses huge pages of a page size for an amount of memory
/// (`validateHugepagesMemoryRequests`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HugepagesObjection {
    /// The page size is not a quantity.
    PageSize,
    /// The page size is 0 (`0`, `0Mi`, `0.0`): KubeVirt divides the memory by it, and its
    /// webhook fails.
    ZeroPageSize,
    /// The memory is less than one page.
    Smaller,
    /// The memory is not a whole number of pages.
    NotMultiple,
}

impl HugepagesObjection {
    /// KubeVirt's objection to pages of `page` for `memory` bytes (the memory request, else the
    /// guest memory, else the memory limit; 0 when none is set), if any.
    pub(crate) fn of(page: &str, memory: i64) -> Option<HugepagesObjection> {
        let Ok(size) = Quantity::parse(page) else {
            return Some(HugepagesObjection::PageSize);
        };
        let size = size.value();
        if size == 0 {
            Some(HugepagesObjection::ZeroPageSize)
        } else if memory != 0 && memory < size {
            Some(HugepagesObjection::Smaller)
        } else if memory.wrapping_rem(size) != 0 {
            Some(HugepagesObjection::NotMultiple)
        } else {
            None
        }
    }

    /// KubeVirt's refusal for the spec at `at`, whose memory request is `req_mem`: field and
    /// message. The message prints the request, whichever amount was compared.
    pub(crate) fn refusal(self, at: &str, req_mem: &Quantity, page: &str) -> (String, String) {
        let page_at = format!("{at}.domain.memory.hugepages.pageSize");
        let request_at = format!("{at}.domain.resources.requests.memory");
        match self {
            HugepagesObjection::PageSize => {
                let message = format!(
                    "{page_at} '{page}': quantities must match the regular expression \
                     '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
                );
                (page_at, message)
            }
            HugepagesObjection::ZeroPageSize => {
                let message = format!(
                    "{page_at} '{page}': a page size of 0 makes KubeVirt's VM webhook fail (it \
                     divides the memory by the page size: integer divide by zero), so the object \
                     is refused"
                );
                (page_at, message)
            }
            HugepagesObjection::Smaller => {
                let message = format!(
                    "{request_at} '{req_mem}' must be equal to or larger than page size \
                     {page_at} '{page}'"
                );
                (request_at, message)
            }
            HugepagesObjection::NotMultiple => {
                let message = format!(
                    "{request_at} '{req_mem}' is not a multiple of the page size {page_at} \
                     '{page}'"
                );
                (request_at, message)
            }
        }
    }
}

/// Without live updates, the guest memory stays within the memory limit.
fn guest_within_limit(spec: &Value, at: &str, found: &mut Vec<(String, String)>) {
    let Some(guest) = quantity_at(spec, &["domain", "memory", "guest"]) else {
        return;
    };
    let limit = quantity_at(spec, &["domain", "resources", "limits", "memory"])
        .unwrap_or_else(|| Quantity::new(0, Format::DecimalSi));
    if limit.value() != 0 && limit.value() < guest.value() {
        found.push((
            format!("{at}.domain.memory.guest"),
            format!(
                "{at}.domain.memory.guest '{guest}' must be equal to or less than the memory \
                 limit {at}.domain.resources.limits.memory '{limit}'"
            ),
        ));
    }
}

/// What a VM that can have memory hotplugged (a `maxGuest`, on a cluster that rolls changes
/// out live) needs: KubeVirt's first objection, if any. `spec` has the defaults applied.
fn memory_hotplug(
    spec: &Value,
    at: &str,
    profile: &ClusterProfile,
    found: &mut Vec<(String, String)>,
) {
    const MIB_2: i64 = 2 << 20;
    const GIB: i64 = 1 << 30;
    if profile.hotplug.is_none() {
        guest_within_limit(spec, at, found);
        return;
    }
    let Some(max_guest) = quantity_at(spec, &["domain", "memory", "maxGuest"]) else {
        return;
    };
    let guest = quantity_at(spec, &["domain", "memory", "guest"]);
    let alignment =
        if path::str_at(spec, &["domain", "memory", "hugepages", "pageSize"]) == Some("1Gi") {
            GIB
        } else {
            MIB_2
        };
    let aligned = |what: &str| {
        let size = if alignment == GIB { "1Gi" } else { "2Mi" };
        format!("{what} must be {size} aligned")
    };
    let objection = if is_set(spec, &["domain", "cpu", "realtime"]) {
        "Memory hotplug is not compatible with realtime VMs".to_string()
    } else if is_set(spec, &["domain", "cpu", "numa", "guestMappingPassthrough"]) {
        "Memory hotplug is not compatible with guest mapping passthrough".to_string()
    } else if is_set(spec, &["domain", "launchSecurity"]) {
        "Memory hotplug is not compatible with encrypted VMs".to_string()
    } else if let Some(guest) = guest {
        if guest.cmp_value(&max_guest).is_gt() {
            "Guest memory is greater than the configured maxGuest memory".to_string()
        } else if guest.value() % alignment != 0 {
            aligned("Guest memory")
        } else if max_guest.value() % alignment != 0 {
            aligned("MaxGuest")
        } else if path::str_at(spec, &["architecture"]).unwrap_or("") != "amd64" {
            "Memory hotplug is only available for x86_64 VMs".to_string()
        } else if guest.value() < GIB {
            "Memory hotplug is only available for VMs with at least 1Gi of guest memory".to_string()
        } else {
            return;
        }
    } else {
        "Guest memory must be configured when memory hotplug is enabled".to_string()
    };
    found.push((format!("{at}.domain.memory.guest"), objection));
}

/// [`resources`] on a copy of `spec` with KubeVirt's defaults applied, when they could change
/// what it reads (and hold).
fn defaulted_resources(
    spec: &Value,
    profile: &ClusterProfile,
    at: &str,
    found: &mut Vec<(String, String)>,
) {
    if !reads_defaulted_resources(spec) {
        return;
    }
    let mut copy = spec.clone();
    if defaults::apply(profile, &mut copy).is_ok() {
        resources(&copy, at, found);
        memory_hotplug(&copy, at, profile, found);
    }
}

/// KubeVirt's refusal of the memory request `req_mem` of the spec at `at` (negative, or above
/// zero and below 1M), if any: field and message.
pub(crate) fn memory_request_refusal(at: &str, req_mem: &Quantity) -> Option<(String, String)> {
    let field = format!("{at}.domain.resources.requests.memory");
    if req_mem.value() < 0 {
        let message = format!("{field} '{req_mem}': must be greater than or equal to 0.");
        Some((field, message))
    } else if req_mem.value() > 0
        && Quantity::parse("1M").is_ok_and(|m| req_mem.cmp_value(&m).is_lt())
    {
        let message = format!("{field} '{req_mem}': must be greater than or equal to 1M.");
        Some((field, message))
    } else {
        None
    }
}

/// CPU and memory requests and limits within their bounds, and what dedicated CPUs, a NUMA
/// topology and realtime need. `spec` is the spec with KubeVirt's defaults applied.
fn resources(spec: &Value, at: &str, found: &mut Vec<(String, String)>) {
    let quantity =
        |kind: &str, resource: &str| quantity_at(spec, &["domain", "resources", kind, resource]);
    // Go reads an absent resource as a zero quantity, printed `0`.
    let zero = Quantity::new(0, Format::DecimalSi);
    let (req_cpu, lim_cpu) = (quantity("requests", "cpu"), quantity("limits", "cpu"));
    let (req_mem, lim_mem) = (quantity("requests", "memory"), quantity("limits", "memory"));
    let (req_cpu, lim_cpu) = (
        req_cpu.as_ref().unwrap_or(&zero),
        lim_cpu.as_ref().unwrap_or(&zero),
    );
    let (req_mem, lim_mem) = (
        req_mem.as_ref().unwrap_or(&zero),
        lim_mem.as_ref().unwrap_or(&zero),
    );
    let field = |kind: &str, resource: &str| format!("{at}.domain.resources.{kind}.{resource}");
    let at_least_zero = |kind: &str, resource: &str, q: &Quantity| {
        (
            field(kind, resource),
            format!(
                "{} '{q}': must be greater than or equal to 0.",
                field(kind, resource)
            ),
        )
    };
    let greater = |resource: &str, req: &Quantity, lim: &Quantity| {
        (
            field("requests", resource),
            format!(
                "{} '{req}' is greater than {} '{lim}'",
                field("requests", resource),
                field("limits", resource)
            ),
        )
    };

    found.extend(memory_request_refusal(at, req_mem));
    if lim_mem.value() < 0 {
        found.push(at_least_zero("limits", "memory", lim_mem));
    }
    hugepages(spec, at, req_mem, found);
    if lim_mem.value() > 0 && req_mem.value() > lim_mem.value() {
        found.push(greater("memory", req_mem, lim_mem));
    }
    if req_cpu.milli_value() < 0 {
        found.push(at_least_zero("requests", "cpu", req_cpu));
    }
    if lim_cpu.milli_value() < 0 {
        found.push(at_least_zero("limits", "cpu", lim_cpu));
    }
    if lim_cpu.milli_value() > 0 && req_cpu.milli_value() > lim_cpu.milli_value() {
        found.push(greater("cpu", req_cpu, lim_cpu));
    }

    let cpu = |key: &str| path::get(spec, &["domain", "cpu", key]).filter(|v| !v.is_null());
    let count = |key: &str| cpu(key).and_then(Value::as_i64).unwrap_or(0);
    let cpu_at = |key: &str| format!("{at}.domain.cpu.{key}");
    let dedicated = cpu("dedicatedCpuPlacement") == Some(&Value::Bool(true));
    let memory = |key: &str| path::get(spec, &["domain", "memory", key]).filter(|v| !v.is_null());
    let numa = cpu("numa")
        .and_then(|n| n.get("guestMappingPassthrough"))
        .filter(|v| !v.is_null());
    if dedicated {
        let guest = quantity_at(spec, &["domain", "memory", "guest"]);
        if lim_mem.is_zero()
            && req_mem.is_zero()
            && memory("hugepages").is_none()
            && guest.is_none_or(|g| g.is_zero())
        {
            found.push((
                field("limits", "memory"),
                format!(
                    "{}, {}, {at}.domain.memory.hugepages or {at}.domain.memory.guest should be \
                     provided",
                    field("requests", "memory"),
                    field("limits", "memory")
                ),
            ));
        }
        // Go multiplies as `int64`s, wrapping past 2^63 (`value()` and `milli_value()` wrap
        // the same way), so a huge request compares as KubeVirt's check compares it.
        let whole =
            |q: &Quantity| q.value() <= 0 || q.value().wrapping_mul(1000) == q.milli_value();
        if !whole(req_cpu) {
            found.push((
                field("requests", "cpu"),
                "provided resources CPU requests must be an interger".into(),
            ));
        }
        if !whole(lim_cpu) {
            found.push((
                field("limits", "cpu"),
                "provided resources CPU limits must be an interger".into(),
            ));
        }
        if req_mem.value() > 0 && lim_mem.value() > 0 && req_mem.value() != lim_mem.value() {
            found.push((
                field("requests", "memory"),
                format!(
                    "{} must be equal to {}",
                    field("requests", "memory"),
                    field("limits", "memory")
                ),
            ));
        }
        // KubeVirt's vCPU count: the product of the topology's non-zero parts, multiplied as
        // Go's `uint32`s, so a product of 2^32 or more wraps around (to 0 for 2^31 sockets of
        // two threads). Counts beyond `uint32` are the schema's refusal.
        let vcpus = i64::from(
            ["cores", "sockets", "threads"]
                .iter()
                .map(|k| count(k) as u32)
                .filter(|n| *n != 0)
                .fold(
                    0u32,
                    |acc, n| {
                        if acc == 0 { n } else { acc.wrapping_mul(n) }
                    },
                ),
        );
        let (req, lim) = (req_cpu.value(), lim_cpu.value());
        let (req_f, lim_f) = (field("requests", "cpu"), field("limits", "cpu"));
        let placement = cpu_at("dedicatedCpuPlacement");
        if req == 0 && lim == 0 && vcpus == 0 {
            found.push((
                placement.clone(),
                format!(
                    "either {req_f} or {lim_f} or {} must be provided when \
                     DedicatedCPUPlacement is true ",
                    cpu_at("cores")
                ),
            ));
        }
        if req > 0 && lim > 0 && req != lim {
            found.push((
                placement.clone(),
                format!("{req_f} or {lim_f} must be equal when DedicatedCPUPlacement is true "),
            ));
        }
        if (req > 0 || lim > 0) && vcpus > 0 && req != vcpus && lim != vcpus {
            found.push((
                placement.clone(),
                format!(
                    "{req_f} or {lim_f} must not be provided at the same time with {} when \
                     DedicatedCPUPlacement is true ",
                    cpu_at("cores")
                ),
            ));
        }
        let threads = count("threads");
        // The defaults have written the architecture.
        if threads > 1 && path::str_at(spec, &["architecture"]) == Some("arm64") {
            found.push((
                format!("{at}.architecture"),
                format!(
                    "threads must not be greater than 1 at {} (got {threads}) when \
                     {at}.architecture is arm64",
                    cpu_at("threads")
                ),
            ));
        }
        if threads > 2 {
            found.push((
                placement,
                format!(
                    "Not more than two threads must be provided at {} (got {threads}) when \
                     DedicatedCPUPlacement is true",
                    cpu_at("threads")
                ),
            ));
        }
    }
    if numa.is_some() {
        if !dedicated {
            found.push(numa_without_dedicated(at));
        }
        if memory("hugepages").is_none() {
            let passthrough = cpu_at("numa.guestMappingPassthrough");
            found.push((
                passthrough.clone(),
                format!(
                    "{at}.domain.memory.hugepages must be requested when NUMA topology strategy \
                     is set in {passthrough}"
                ),
            ));
        }
    }
    if cpu("realtime").is_some() {
        if !dedicated {
            found.push(realtime_without_dedicated(at));
        }
        if numa.is_none() {
            found.push(realtime_without_numa(at));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;
    use serde_json::json;

    fn findings(kind: &str, spec: Value) -> Vec<(String, String)> {
        let obj = Object::new(
            json!({"apiVersion": "kubevirt.io/v1", "kind": kind, "metadata": {"name": "x"},
                   "spec": spec}),
            Origin::new("vm.yaml", 0, Some(1)),
        );
        findings_with(&obj, &ClusterProfile::default())
    }

    /// The findings on `obj`, but that it asks for no memory: most specs here leave memory out
    /// to keep to the point ([`a_vmi_asks_for_memory_once_its_presets_are_applied`] tests that).
    fn findings_with(obj: &Object, profile: &ClusterProfile) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let (vmi, preference) = (|| crate::kubevirt::vmi::vmi_for(obj), |_: &str| false);
        let start = Start::Builds {
            vmi: &vmi,
            preference: &preference,
        };
        check(
            obj,
            profile,
            None,
            false,
            start,
            &Mutex::default(),
            &mut out,
        );
        to_pairs(out)
    }

    fn to_pairs(out: Vec<Diagnostic>) -> Vec<(String, String)> {
        out.into_iter()
            .filter(|d| !d.message.starts_with("no memory requested"))
            .map(|d| (d.field.unwrap_or_default(), d.message))
            .collect()
    }

    #[test]
    fn the_preset_webhook_stops_at_its_schema_then_at_a_missing_domain() {
        let fields = |found: Vec<(String, String)>| -> Vec<String> {
            found.into_iter().map(|(f, _)| f).collect()
        };
        let kernel =
            json!({"container": {"image": "k", "kernelPath": "/k", "imagePullPolicy": ""}});
        // The schema check comes first and is all KubeVirt says then.
        let spec = json!({"domain": {"firmware": {"kernelBoot": kernel,
            "bootloader": {"bios": {}, "efi": {}}}}});
        assert_eq!(
            fields(preset_refusals(&spec)),
            ["spec.domain.firmware.kernelBoot.container.imagePullPolicy"]
        );
        assert_eq!(
            preset_refusals(&json!({"selector": {}})),
            [("spec.domain".to_string(), "missing domain.".to_string())]
        );
        assert_eq!(
            fields(preset_refusals(&json!({"domain": null}))),
            ["spec.domain"]
        );
        // Then the disks and the firmware, as the VMI webhook judges them.
        let spec = json!({"domain": {
            "devices": {"disks": [
                {"name": "a", "bootOrder": 0, "cdrom": {"bus": "virtio"}},
                {"name": "a", "disk": {}, "lun": {}},
            ]},
            "firmware": {"bootloader": {"bios": {}, "efi": {}}},
        }});
        assert_eq!(
            fields(preset_refusals(&spec)),
            [
                "spec.domain.devices.disks[1].name",
                "spec.domain.devices.disks[1]",
                "spec.domain.devices.disks[0].bootOrder",
                "spec.domain.devices.disks[0].cdrom.bus",
                "spec.domain.firmware.bootloader",
            ]
        );
        // Resources, CPU and the rest of a preset's domain are the VMI's to judge.
        let spec =
            json!({"domain": {"cpu": {"cores": 0}, "resources": {"requests": {"memory": "1"}}}});
        assert!(preset_refusals(&spec).is_empty());
    }

    #[test]
    fn a_vmi_asks_for_memory_once_its_presets_are_applied() {
        let object = |kind: &str, spec: Value| {
            Object::new(
                json!({"apiVersion": "kubevirt.io/v1", "kind": kind,
                       "metadata": {"name": "x", "labels": {"size": "small"}}, "spec": spec}),
                Origin::new("vm.yaml", 0, Some(1)),
            )
        };
        let preset = Object::new(
            json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstancePreset",
                   "metadata": {"name": "small"},
                   "spec": {"selector": {"matchLabels": {"size": "small"}},
                            "domain": {"resources": {"requests": {"memory": "1Gi"}}}}}),
            Origin::default(),
        );
        let run = |obj: &Object, presets: &[&Object]| {
            let mut out = Vec::new();
            let presets = Mutex::new(PresetIndex::new(presets));
            let (vmi, preference) = (|| crate::kubevirt::vmi::vmi_for(obj), |_: &str| false);
            let start = Start::Builds {
                vmi: &vmi,
                preference: &preference,
            };
            check(
                obj,
                &ClusterProfile::default(),
                None,
                false,
                start,
                &presets,
                &mut out,
            );
            out.into_iter()
                .map(|d| (d.field.unwrap_or_default(), d.message))
                .collect::<Vec<_>>()
        };
        let domain = json!({"domain": {"devices": {}}});
        let vmi = object("VirtualMachineInstance", domain.clone());
        let refused = run(&vmi, &[]);
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert_eq!(refused[0].0, "spec.domain");
        // The manifest alone is refused too: no note.
        assert_eq!(
            refused[0].1,
            "no memory requested, at least one of 'spec.domain.memory.guest', \
             'spec.domain.memory.hugepages.pageSize' or 'spec.domain.resources.requests.memory' \
             must be set"
        );
        assert!(run(&vmi, &[&preset]).is_empty());

        // A VM is admitted without memory; the VMI it starts is not.
        let mut vm_spec = vm(domain);
        vm_spec["template"]["metadata"] = json!({"labels": {"size": "small"}});
        let machine = object("VirtualMachine", vm_spec);
        let refused = run(&machine, &[]);
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert_eq!(refused[0].0, "spec.template.spec.domain");
        assert!(refused[0].1.ends_with(START_NOTE), "{}", refused[0].1);
        assert!(run(&machine, &[&preset]).is_empty());
        // A limit is memory too, once the defaults have made it the guest's.
        let limited = json!({"domain": {"resources": {"limits": {"memory": "2Gi"}}}});
        assert!(run(&object("VirtualMachine", vm(limited)), &[]).is_empty());

        // Presets that conflict: the mutating webhook refuses the VMI first, at the labels.
        let mut other = preset.clone();
        other.value["metadata"]["name"] = json!("large");
        other.value["spec"]["domain"]["resources"]["requests"]["memory"] = json!("2Gi");
        let refused = run(&machine, &[&preset, &other]);
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert_eq!(refused[0].0, "spec.template.metadata.labels");
        assert!(
            refused[0].1.starts_with(
                "VirtualMachinePresets cannot be applied due to conflicts: presets 'small' and \
                 'large' conflict: spec.resources.requests[memory]"
            ),
            "{}",
            refused[0].1
        );
        assert!(refused[0].1.ends_with(START_NOTE), "{}", refused[0].1);
        // A VMI document is refused at creation, the manifest judged as written beside it.
        let refused = run(&vmi, &[&preset, &other]);
        let fields: Vec<&str> = refused.iter().map(|(f, _)| f.as_str()).collect();
        assert!(fields.contains(&"metadata.labels"), "{refused:?}");
    }

    #[test]
    fn a_preference_matters_at_start_only_where_it_could_have_the_vmi_refused() {
        let refusable =
            |devices: Value| preference_refusable(&json!({"devices": devices}), "amd64");
        assert!(!refusable(json!({})));
        assert!(!refusable(
            json!({"preferredDiskBus": "virtio", "preferredInterfaceModel": "e1000e"})
        ));
        assert!(!refusable(
            json!({"preferredDiskBus": "virtio", "preferredDiskDedicatedIoThread": true})
        ));
        assert!(refusable(json!({"preferredDiskBus": "ide"})));
        assert!(refusable(json!({"preferredDiskDedicatedIoThread": true})));
        assert!(refusable(json!({"preferredDiskIO": "native"})));
        assert!(refusable(json!({"preferredInterfaceModel": "e1000x"})));
        // On arm64 only virtio and SCSI disks are taken; a disk left without a bus gets virtio.
        let on_arm64 = |bus: Value| preference_refusable(&json!({"devices": bus}), "arm64");
        assert!(on_arm64(json!({"preferredDiskBus": "sata"})));
        assert!(on_arm64(json!({"preferredDiskBus": "usb"})));
        assert!(!on_arm64(json!({"preferredDiskBus": "scsi"})));
        assert!(!on_arm64(json!({})));
    }

    #[test]
    fn dedicated_cpus_on_arm64_have_one_thread_each() {
        let on = |arch: &str| {
            let spec = json!({"architecture": arch, "domain": {
                "cpu": {"dedicatedCpuPlacement": true, "cores": 1, "threads": 2},
                "memory": {"guest": "1Gi"}}});
            let mut found = Vec::new();
            resources(&spec, "spec", &mut found);
            found
        };
        let arm = (
            "spec.architecture".to_string(),
            "threads must not be greater than 1 at spec.domain.cpu.threads (got 2) when \
             spec.architecture is arm64"
                .to_string(),
        );
        assert!(on("arm64").contains(&arm), "{:?}", on("arm64"));
        assert!(!on("amd64").iter().any(|(f, _)| f == "spec.architecture"));
    }

    #[test]
    fn the_vmi_a_vm_starts_gets_the_defaults_and_the_vmi_checks() {
        let obj = |template_spec: Value| {
            Object::new(
                json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                       "metadata": {"name": "x"}, "spec": vm(template_spec)}),
                Origin::new("vm.yaml", 0, Some(1)),
            )
        };
        let memory = json!({"guest": "1Gi"});
        // On arm64 the defaults put a CD-ROM without a bus on virtio, which it cannot take.
        let arm = obj(json!({"architecture": "arm64", "domain": {"memory": memory,
            "devices": {"disks": [{"name": "iso", "cdrom": {}}]}},
            "volumes": [{"name": "iso", "containerDisk": {"image": "i"}}]}));
        let at_start = |field: &str, message: &str| {
            vec![(field.to_string(), format!("{message}{START_NOTE}"))]
        };
        assert_eq!(
            findings_with(&arm, &ClusterProfile::default()),
            at_start(
                "spec.template.spec.domain.devices.disks[0].cdrom.bus",
                "Bus type virtio is invalid for CD-ROM device"
            )
        );
        // On amd64 they put a LUN without a bus on sata, where it has no I/O thread of its own.
        let lun = obj(json!({"domain": {"memory": memory,
            "devices": {"disks": [{"name": "l", "lun": {}, "dedicatedIOThread": true}]}},
            "volumes": [{"name": "l", "persistentVolumeClaim": {"claimName": "c"}}]}));
        assert_eq!(
            findings_with(&lun, &ClusterProfile::default()),
            at_start(
                "spec.template.spec.domain.devices.disks[0]",
                "IOThreads are not supported for disks on a sata bus"
            )
        );
        // Hyper-V features the VM webhook does not look at.
        let hyperv = obj(json!({"domain": {"memory": memory, "devices": {},
            "features": {"hyperv": {"synic": {}, "vpindex": {"enabled": false}}}}}));
        let found = findings_with(&hyperv, &ClusterProfile::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].1.contains("requires"), "{}", found[0].1);
        // A ContainerPath volume that no filesystem names gets a disk, which it cannot be; one
        // shared as a filesystem passes.
        let shares = |filesystems: Value| {
            obj(
                json!({"domain": {"memory": memory, "devices": {"filesystems": filesystems}},
                "volumes": [{"name": "s", "containerPath": {"path": "/srv"}}]}),
            )
        };
        let field = "spec.template.spec.volumes[0]";
        let found = findings_with(&shares(json!([])), &ClusterProfile::default());
        assert_eq!(
            found,
            [
                at_start(
                    field,
                    "ContainerPath volume 's' must be mapped to a filesystem, not a disk"
                ),
                at_start(
                    field,
                    "ContainerPath volume 's' must have a matching filesystem defined in \
                     spec.domain.devices.filesystems"
                )
            ]
            .concat()
        );
        let shared = shares(json!([{"name": "s", "virtiofs": {}}]));
        assert_eq!(findings_with(&shared, &ClusterProfile::default()), []);
        // The amd64 defaults make a watchdog without a model an `i6300esb`; `diag288` stays.
        let watchdog =
            |w: Value| obj(json!({"domain": {"memory": memory, "devices": {"watchdog": w}}}));
        let plain = watchdog(json!({"name": "w"}));
        assert_eq!(findings_with(&plain, &ClusterProfile::default()), []);
        let diag = watchdog(json!({"name": "w", "diag288": {}}));
        assert_eq!(
            findings_with(&diag, &ClusterProfile::default()),
            at_start(
                "spec.template.spec.domain.devices.watchdog",
                "amd64 only supports I6300ESB watchdog device"
            )
        );
    }

    fn fields(kind: &str, spec: Value) -> Vec<String> {
        findings(kind, spec).into_iter().map(|(f, _)| f).collect()
    }

    fn vm(template_spec: Value) -> Value {
        json!({"runStrategy": "Always", "template": {"spec": template_spec}})
    }

    #[test]
    fn a_vm_sets_one_known_run_strategy() {
        let template = json!({"spec": {"domain": {"devices": {}}}});
        let run = |extra: Value| {
            let mut spec = extra;
            spec["template"] = template.clone();
            findings("VirtualMachine", spec)
        };
        assert!(run(json!({"runStrategy": "Halted"})).is_empty());
        assert!(run(json!({"running": false})).is_empty());
        // `null` is no value, as for a Go pointer.
        assert!(run(json!({"running": true, "runStrategy": null})).is_empty());
        let both = run(json!({"running": false, "runStrategy": "Always"}));
        assert_eq!(both.len(), 1);
        assert_eq!(both[0].0, "spec.running");
        assert!(both[0].1.contains("mutually exclusive"), "{both:?}");
        let neither = run(json!({}));
        assert_eq!(neither[0].0, "spec.running");
        assert!(neither[0].1.starts_with("RunStrategy must be specified"));
        let unknown = run(json!({"runStrategy": "always"}));
        assert_eq!(unknown[0].0, "spec.runStrategy");
        assert!(unknown[0].1.starts_with("Invalid RunStrategy (always)"));
        // A beta feature gate, on unless the cluster disables it.
        assert!(run(json!({"runStrategy": "WaitAsReceiver"})).is_empty());
        let vm = Object::new(
            json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                   "metadata": {"name": "x"},
                   "spec": {"runStrategy": "WaitAsReceiver", "template": template}}),
            Origin::new("vm.yaml", 0, Some(1)),
        );
        let gate_off = ClusterProfile {
            wait_as_receiver: false,
            ..ClusterProfile::default()
        };
        let gated = findings_with(&vm, &gate_off);
        assert!(gated[0].1.contains("feature gate"), "{gated:?}");
    }

    /// n disks of one name make n(n-1)/2 pairs, each a finding in KubeVirt: the first
    /// thousand are listed, the rest counted in one finding at the first disk left out.
    #[test]
    fn pairs_of_same_named_disks_past_a_thousand_are_counted() {
        let disks: Vec<Value> = (0..50).map(|_| json!({"name": "d", "disk": {}})).collect();
        let spec = vm(json!({"domain": {"devices": {"disks": disks}},
            "volumes": [{"name": "d", "emptyDisk": {"capacity": "1Gi"}}]}));
        let found = findings("VirtualMachine", spec);
        let pairs: Vec<&(String, String)> = found
            .iter()
            .filter(|(_, m)| m.ends_with("must not have the same Name."))
            .collect();
        let at = "spec.template.spec.domain.devices.disks";
        assert_eq!(pairs.len(), 1000);
        // Disks 1 to 45 make 1,035 pairs: the thousandth is the 10th of disk 45's 45.
        assert_eq!(
            pairs[999],
            &(
                format!("{at}[45].name"),
                format!("{at}[45] and {at}[9] must not have the same Name.")
            )
        );
        let rest: Vec<&(String, String)> = found
            .iter()
            .filter(|(_, m)| m.contains("more pairs"))
            .collect();
        assert_eq!(
            rest,
            [&(
                format!("{at}[45].name"),
                format!(
                    "and 225 more pairs of disks with the same Name, from {at}[45] on (KubeVirt \
                     names each pair; the first 1000 are listed)"
                )
            )]
        );
    }

    #[test]
    fn disks_need_a_volume_a_name_of_their_own_and_one_target() {
        let spec = vm(json!({
            "domain": {"devices": {"disks": [
                {"name": "root", "disk": {}},
                {"name": "data", "disk": {}, "cdrom": {}},
                {"name": "root"},
                {"name": "iso", "cdrom": {}},
                {"disk": {}},
            ]}},
            "volumes": [
                {"name": "root", "containerDisk": {"image": "x"}},
                {"name": "data", "persistentVolumeClaim": {"claimName": "d"}},
                {"name": "extra", "emptyDisk": {"capacity": "1Gi"}},
            ],
        }));
        let found = findings("VirtualMachine", spec);
        let at = "spec.template.spec.domain.devices.disks";
        assert_eq!(
            found,
            [
                (
                    format!("{at}[1]"),
                    format!("{at}[1] can only have a single target type defined")
                ),
                (
                    format!("{at}[2].name"),
                    format!("{at}[2] and {at}[0] must not have the same Name.")
                ),
                (
                    format!("{at}[4].name"),
                    format!("{at}[4].Name '' not found: no volume has that name")
                ),
                // A disk's name names a container too.
                (
                    format!("{at}[4].name"),
                    crate::model::names::DNS_LABEL_MSG.to_string()
                ),
            ]
        );
    }

    #[test]
    fn the_disks_kubevirt_adds_for_volumes_are_judged_and_name_their_volume() {
        let at = "spec.template.spec.domain.devices.disks";
        let note = |v: &str| {
            format!(" (the disk KubeVirt adds for volume `{v}`, which no disk or filesystem names)")
        };
        // A DownwardMetrics volume behind the given disks (none: the one KubeVirt adds), beside
        // a volume shared through a filesystem and one without a disk of its own.
        let run = |disks: Value| {
            let spec = vm(json!({
                "domain": {"devices": {
                    "disks": disks,
                    "filesystems": [{"name": "Share", "virtiofs": {}}],
                }},
                "volumes": [
                    {"name": "Share", "persistentVolumeClaim": {"claimName": "c"}},
                    {"name": "m", "downwardMetrics": {}},
                    {"name": "fine", "emptyDisk": {"capacity": "1Gi"}},
                ],
            }));
            findings("VirtualMachine", spec)
        };
        let to_a_disk = |i: usize| {
            format!(
                "DownwardMetrics volume must be mapped to a disk, but disk is not set on {at}[{i}].disk."
            )
        };
        assert_eq!(run(json!([{"name": "m", "disk": {"bus": "virtio"}}])), []);
        let on_sata = format!(
            "DownwardMetrics volume must be mapped to virtio bus, but {at}[0].disk.bus is set to sata"
        );
        assert_eq!(
            run(json!([{"name": "m", "disk": {"bus": "sata"}}])),
            [(format!("{at}[0].disk.bus"), on_sata.clone())]
        );
        // The VM is admitted; the defaults of its amd64 VMI put the disk on SATA.
        assert_eq!(
            run(json!([{"name": "m", "disk": {}}])),
            [(format!("{at}[0].disk.bus"), on_sata + START_NOTE)]
        );
        assert_eq!(
            run(json!([{"name": "m", "cdrom": {"bus": "sata"}}])),
            [(format!("{at}[0].disk"), to_a_disk(0))]
        );
        assert_eq!(
            run(json!([{"name": "fine", "disk": {}}])),
            [(format!("{at}[1].disk"), to_a_disk(1) + &note("m"))]
        );
        // The name of a disk KubeVirt adds must suit a container, as any disk's.
        let spec = vm(json!({
            "domain": {"devices": {"disks": [{"name": "root", "disk": {}}]}},
            "volumes": [
                {"name": "root", "containerDisk": {"image": "x"}},
                {"name": "ok", "emptyDisk": {"capacity": "1Gi"}},
                {"name": "Data_1", "emptyDisk": {"capacity": "1Gi"}},
            ],
        }));
        assert_eq!(
            findings("VirtualMachine", spec),
            [(
                format!("{at}[2].name"),
                format!("{}{}", crate::model::names::DNS_LABEL_MSG, note("Data_1"))
            )]
        );
    }

    #[test]
    fn a_template_without_a_spec_is_judged_as_an_empty_one() {
        let dv = json!([{"metadata": {"name": "d"},
                         "spec": {"pvc": {"resources": {"requests": {"storage": "1Gi"}}},
                                  "source": {"blank": {}}}}]);
        for template in [json!({}), json!({"spec": null}), json!({"metadata": {}})] {
            let spec = json!({"runStrategy": "Halted", "template": template,
                              "dataVolumeTemplates": dv});
            assert_eq!(
                findings("VirtualMachine", spec),
                [(
                    "spec.dataVolumeTemplates[0]".to_string(),
                    "DataVolumeTemplate entry spec.dataVolumeTemplates[0] must be referenced in \
                     the VMI template's 'volumes' list"
                        .to_string()
                )]
            );
        }
        // Admitted, it starts a VMI that asks for no memory.
        let obj = Object::new(
            json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                   "metadata": {"name": "x"}, "spec": {"runStrategy": "Halted", "template": {}}}),
            Origin::new("vm.yaml", 0, Some(1)),
        );
        let mut out = Vec::new();
        let (vmi, preference) = (|| crate::kubevirt::vmi::vmi_for(&obj), |_: &str| false);
        let start = Start::Builds {
            vmi: &vmi,
            preference: &preference,
        };
        check(
            &obj,
            &ClusterProfile::default(),
            None,
            false,
            start,
            &Mutex::default(),
            &mut out,
        );
        let found: Vec<(Option<String>, String)> =
            out.into_iter().map(|d| (d.field, d.message)).collect();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].0.as_deref(), Some("spec.template.spec.domain"));
        assert!(found[0].1.starts_with("no memory requested"), "{found:?}");
        assert!(found[0].1.ends_with(START_NOTE), "{found:?}");
    }

    #[test]
    fn a_data_volume_templates_namespace_is_judged_once_the_rest_passes() {
        let vm = |volume: &str| {
            Object::new(
                json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                    "metadata": {"name": "x", "namespace": "team-a"},
                    "spec": {"runStrategy": "Halted",
                        "dataVolumeTemplates": [{"metadata": {"name": "root", "namespace": "team-b"},
                            "spec": {"storage": {}, "source": {"blank": {}}}}],
                        "template": {"spec": {"domain": {"memory": {"guest": "1Gi"}, "devices": {}},
                            "volumes": [{"name": "root", "dataVolume": {"name": volume}}]}}}}),
                Origin::new("vm.yaml", 0, Some(1)),
            )
        };
        let found = findings_with(&vm("root"), &ClusterProfile::default());
        assert_eq!(
            found,
            [(
                "spec.dataVolumeTemplates[0]".to_string(),
                "Embedded DataVolume namespace team-b differs from VM namespace team-a".to_string()
            )]
        );
        // A template no volume uses stops KubeVirt before its storage admitter.
        let found = findings_with(&vm("other"), &ClusterProfile::default());
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0]
                .1
                .ends_with("must be referenced in the VMI template's 'volumes' list")
        );
    }

    #[test]
    fn the_clusters_eviction_strategy_is_judged_where_the_spec_has_none() {
        let profile = ClusterProfile::from_kubevirt(&json!({"evictionStrategy": "Sometimes"}))
            .expect("a configuration");
        let run = |template_spec: Value| {
            let obj = Object::new(
                json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                       "metadata": {"name": "x"}, "spec": vm(template_spec)}),
                Origin::new("vm.yaml", 0, Some(1)),
            );
            findings_with(&obj, &profile)
        };
        let field = "spec.template.spec.evictionStrategy";
        assert_eq!(
            run(json!({"domain": {"devices": {}}})),
            [(
                field.to_string(),
                format!(
                    "{field} is set with an unrecognized option: Sometimes (the cluster \
                     configuration's default, which the spec does not override)"
                )
            )]
        );
        assert_eq!(
            run(json!({"domain": {"devices": {}}, "evictionStrategy": "LiveMigrate"})),
            []
        );
        // A template judged as written (a replica set's) has no default yet: the webhook fails.
        let template = json!({"metadata": {}, "spec": {"domain": {"devices": {}}}});
        let found = vmi_template_refusals(&template, "spec.template", &profile);
        let (at, message) = found
            .iter()
            .find(|(f, _)| f == field)
            .expect("the strategy's refusal");
        assert_eq!(at, field);
        assert!(
            message.ends_with("KubeVirt's webhook fails on it, reading the strategy the spec does not set, and the API server refuses the object)"),
            "{message}"
        );
    }

    #[test]
    fn volumes_without_a_disk_get_one_among_few_and_many_disks() {
        for count in [2, 16, 17, 40] {
            let disks: Vec<Value> = (0..count)
                .map(|i| json!({"name": format!("v{i}")}))
                .collect();
            let mut volumes: Vec<Value> = (0..count)
                .map(|i| json!({"name": format!("v{i}")}))
                .collect();
            let spec = json!({"domain": {"devices": {"disks": disks}}, "volumes": volumes});
            assert!(
                matches!(with_volume_disks(&spec), Cow::Borrowed(_)),
                "{count}"
            );
            volumes.push(json!("not a volume"));
            volumes.push(json!({"name": "Extra"}));
            volumes.push(json!({"name": "Extra"}));
            let spec = json!({"domain": {"devices": {"disks": disks}}, "volumes": volumes});
            let with = with_volume_disks(&spec);
            let added = &with["domain"]["devices"]["disks"].as_array().unwrap()[count..];
            assert_eq!(
                added,
                [json!({"name": "Extra"}), json!({"name": "Extra"})],
                "{count}"
            );
        }
        let fs = json!({"domain": {"devices": {"filesystems": [{"name": "share"}]}},
                        "volumes": [{"name": "share"}]});
        assert!(matches!(with_volume_disks(&fs), Cow::Borrowed(_)));
        assert!(matches!(
            with_volume_disks(&json!({"volumes": "none"})),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn volumes_have_a_name_of_their_own_and_one_source() {
        let spec = vm(json!({
            "domain": {"devices": {}},
            "volumes": [
                {"name": "a", "containerDisk": {"image": "x"}},
                {"name": "a", "emptyDisk": {"capacity": "1Gi"}},
                {"name": "b"},
                {"name": "c", "containerDisk": {"image": "x"}, "dataVolume": {"name": "c"}},
                {"name": "d", "containerDisk": {"image": "x"}, "secret": null},
            ],
        }));
        // KubeVirt gives each volume without a disk one of its name, so the two `a` volumes
        // make two `a` disks as well.
        assert_eq!(
            fields("VirtualMachine", spec),
            [
                "spec.template.spec.domain.devices.disks[1].name",
                "spec.template.spec.volumes[1].name",
                "spec.template.spec.volumes[2]",
                "spec.template.spec.volumes[3]",
            ]
        );
    }

    #[test]
    fn interfaces_and_networks_pair_up_by_name() {
        let spec = vm(json!({
            "domain": {"devices": {"interfaces": [
                {"name": "default", "masquerade": {}},
                {"name": "default", "bridge": {}},
                {"name": "other", "bridge": {}},
            ]}},
            "networks": [
                {"name": "default", "pod": {}},
                {"name": "lan", "multus": {"networkName": "lan"}},
                {"name": "lan", "multus": {"networkName": "lan2"}},
            ],
        }));
        let at = "spec.template.spec";
        assert_eq!(
            findings("VirtualMachine", spec),
            [
                (
                    format!("{at}.networks[2].name"),
                    "Network with name \"lan\" already exists, every network must have a unique name"
                        .to_string()
                ),
                (
                    format!("{at}.networks[1].name"),
                    format!("{at}.networks[1].name 'lan' not found: no interface has that name")
                ),
                (
                    format!("{at}.networks[2].name"),
                    format!("{at}.networks[2].name 'lan' not found: no interface has that name")
                ),
                (
                    format!("{at}.domain.devices.interfaces[1].name"),
                    "Only one interface can be connected to one specific network".to_string()
                ),
                (
                    format!("{at}.domain.devices.interfaces[2].name"),
                    format!(
                        "{at}.domain.devices.interfaces[2].name 'other' not found: no network \
                         has that name"
                    )
                ),
            ]
        );
        // Neither networks nor interfaces: KubeVirt adds the pod network and its interface.
        assert!(findings("VirtualMachine", vm(json!({"domain": {"devices": {}}}))).is_empty());
    }

    #[test]
    fn one_pod_network_and_one_multus_default_network_at_most() {
        let at = "spec.template.spec";
        let pair = |names: &[(&str, Value)]| {
            let networks: Vec<Value> = names
                .iter()
                .map(|(n, source)| {
                    let mut network = source.clone();
                    network["name"] = json!(n);
                    network
                })
                .collect();
            let interfaces: Vec<Value> = names
                .iter()
                // A bridge binding fits every network (masquerade only the pod network).
                .map(|(n, _)| json!({"name": n, "bridge": {}}))
                .collect();
            findings(
                "VirtualMachine",
                vm(
                    json!({"domain": {"devices": {"interfaces": interfaces}}, "networks": networks}),
                ),
            )
        };
        let pod = json!({"pod": {}});
        let multus = |default: bool| json!({"multus": {"networkName": "lan", "default": default}});
        assert_eq!(
            pair(&[("a", pod.clone()), ("b", pod.clone())]),
            [(
                format!("{at}.interfaces"),
                format!("more than one interface is connected to a pod network in {at}.interfaces")
            )]
        );
        assert_eq!(
            pair(&[("a", multus(true)), ("b", multus(true))]),
            [(
                format!("{at}.networks"),
                "Multus CNI should only have one default network".to_string()
            )]
        );
        assert_eq!(
            pair(&[("a", pod.clone()), ("b", multus(true))]),
            [(
                format!("{at}.networks"),
                "Pod network cannot be defined when Multus default network is defined".to_string()
            )]
        );
        // One pod network beside Multus networks that are not the default is the usual case.
        assert!(pair(&[("a", pod), ("b", multus(false)), ("c", multus(false))]).is_empty());
    }

    #[test]
    fn disks_and_inputs_use_buses_and_types_kubevirt_takes_where_the_manifest_names_them() {
        let at = "spec.template.spec";
        let volumes: Vec<Value> = ["a", "b", "c", "d", "e"]
            .iter()
            .map(|n| json!({"name": n, "containerDisk": {"image": "x"}}))
            .collect();
        let spec = vm(json!({
            "domain": {"devices": {
                "disks": [
                    {"name": "a", "cdrom": {"bus": "virtio"}},
                    {"name": "b", "disk": {"bus": "ide"}},
                    {"name": "c", "cdrom": {"bus": "sata"}},
                    {"name": "d", "disk": {"bus": "virtio"}},
                    {"name": "e", "cdrom": {}},
                ],
                "inputs": [
                    {"name": "i0", "type": "keyboard", "bus": "ps2"},
                    {"name": "i1", "type": "tablet", "bus": "usb"},
                    {"name": "i2"},
                ],
            }},
            "volumes": volumes,
        }));
        assert_eq!(
            findings("VirtualMachine", spec),
            [
                (
                    format!("{at}.domain.devices.disks[0].cdrom.bus"),
                    "Bus type virtio is invalid for CD-ROM device".to_string()
                ),
                (
                    format!("{at}.domain.devices.disks[1].disk.bus"),
                    "IDE bus is not supported".to_string()
                ),
                (
                    format!("{at}.domain.devices.inputs[0].bus"),
                    "Input device can have only virtio or usb bus.".to_string()
                ),
                (
                    format!("{at}.domain.devices.inputs[0].type"),
                    "Input device can have only tablet type.".to_string()
                ),
            ]
        );
    }

    #[test]
    fn disk_settings_fit_their_bus_luns_their_volume_and_boot_orders_are_distinct() {
        let at = "spec.template.spec.domain.devices.disks";
        let spec = vm(json!({
            "domain": {"devices": {"disks": [
                {"name": "a", "disk": {"bus": "floppy"}},
                {"name": "b", "disk": {"bus": "sata", "readonly": true}, "dedicatedIOThread": true},
                {"name": "c", "disk": {"bus": "virtio", "readonly": true}, "dedicatedIOThread": true},
                {"name": "d", "lun": {}, "bootOrder": 0},
                {"name": "e", "lun": {"bus": "scsi"}, "bootOrder": 1},
                {"name": "f", "cdrom": {"bus": "sata", "readonly": true}, "bootOrder": 1},
                // No bus yet: KubeVirt judges it once one is chosen.
                {"name": "g", "disk": {}, "dedicatedIOThread": true},
            ]}},
            "volumes": [
                {"name": "a", "containerDisk": {"image": "x"}},
                {"name": "b", "containerDisk": {"image": "x"}},
                {"name": "c", "containerDisk": {"image": "x"}},
                {"name": "d", "containerDisk": {"image": "x"}},
                {"name": "e", "persistentVolumeClaim": {"claimName": "e"}},
                {"name": "f", "containerDisk": {"image": "x"}},
                {"name": "g", "containerDisk": {"image": "x"}},
            ],
        }));
        let expected: Vec<(String, String)> = [
            (
                "[0].disk.bus",
                format!("{at}[0] is set with an unrecognized bus floppy, must be one of: [virtio scsi sata usb]"),
            ),
            ("[1].disk.bus", "sata hard-disks do not support read-only.".into()),
            ("[1]", "IOThreads are not supported for disks on a sata bus".into()),
            (
                "[3].lun",
                format!("{at}[3].lun can only be mapped to a DataVolume or PersistentVolumeClaim volume."),
            ),
            ("[3].bootOrder", format!("{at}[3] must have a boot order > 0, if supplied")),
            (
                "[5].bootOrder",
                format!("Boot order for {at}[5].bootOrder already set for a different device."),
            ),
        ]
        .into_iter()
        .map(|(f, m)| (format!("{at}{f}"), m))
        .collect();
        assert_eq!(findings("VirtualMachine", spec), expected);

        // Interfaces count after the disks.
        let spec = vm(json!({
            "domain": {"devices": {
                "disks": [{"name": "a", "disk": {}, "bootOrder": 2}],
                "interfaces": [
                    {"name": "p", "masquerade": {}, "bootOrder": 2},
                    {"name": "q", "bridge": {}, "bootOrder": 0},
                    {"name": "r", "bridge": {}, "bootOrder": 3},
                ],
            }},
            "volumes": [{"name": "a", "containerDisk": {"image": "x"}}],
            "networks": [{"name": "p", "pod": {}}, {"name": "q", "multus": {"networkName": "q"}},
                         {"name": "r", "multus": {"networkName": "r"}}],
        }));
        let at = "spec.template.spec.domain.devices.interfaces";
        assert_eq!(
            findings("VirtualMachine", spec),
            [
                (
                    format!("{at}[0].bootOrder"),
                    format!("Boot order for {at}[0].bootOrder already set for a different device.")
                ),
                (
                    format!("{at}[1].bootOrder"),
                    format!("{at}[1] must have a boot order > 0, if supplied")
                ),
            ]
        );
    }

    #[test]
    fn cpu_and_memory_stay_in_bounds_and_dedicated_cpus_get_what_they_need() {
        let domain = |domain: Value| findings("VirtualMachine", vm(json!({"domain": domain})));
        let at = "spec.template.spec.domain";
        let one = |field: &str, message: String| vec![(format!("{at}.{field}"), message)];
        // Requests within limits, memory above 1M, nothing negative.
        assert_eq!(
            domain(json!({"resources": {"requests": {"cpu": "2500m"}, "limits": {"cpu": 2}}})),
            one(
                "resources.requests.cpu",
                format!(
                    "{at}.resources.requests.cpu '2500m' is greater than {at}.resources.limits.cpu '2'"
                )
            )
        );
        assert_eq!(
            domain(
                json!({"resources": {"requests": {"memory": "2Gi"}, "limits": {"memory": "1Gi"}}})
            ),
            one(
                "resources.requests.memory",
                format!(
                    "{at}.resources.requests.memory '2Gi' is greater than {at}.resources.limits.memory '1Gi'"
                )
            )
        );
        assert_eq!(
            domain(json!({"resources": {"requests": {"memory": "500k"}}})),
            one(
                "resources.requests.memory",
                format!(
                    "{at}.resources.requests.memory '500k': must be greater than or equal to 1M."
                )
            )
        );
        // A limit without a request is the request too (KubeVirt's defaults).
        assert_eq!(
            domain(json!({"resources": {"limits": {"cpu": "-1"}}, "memory": {"guest": "1Gi"}})),
            [
                (
                    format!("{at}.resources.requests.cpu"),
                    format!(
                        "{at}.resources.requests.cpu '-1': must be greater than or equal to 0."
                    )
                ),
                (
                    format!("{at}.resources.limits.cpu"),
                    format!("{at}.resources.limits.cpu '-1': must be greater than or equal to 0.")
                ),
            ]
        );
        assert!(
            domain(
                json!({"resources": {"requests": {"cpu": 1, "memory": "1Gi"},
                                        "limits": {"cpu": 2, "memory": "2Gi"}}})
            )
            .is_empty()
        );
        // Dedicated CPUs: memory, whole and equal CPU counts, at most two threads. A limit
        // alone is fine: KubeVirt's defaults copy it to the request.
        let dedicated = |extra: Value| {
            let mut d = json!({"cpu": {"dedicatedCpuPlacement": true}});
            merge(&mut d, extra);
            domain(d)
        };
        let placement = format!("{at}.cpu.dedicatedCpuPlacement");
        assert_eq!(
            dedicated(json!({"resources": {"limits": {"cpu": 2}}})),
            one(
                "resources.limits.memory",
                format!(
                    "{at}.resources.requests.memory, {at}.resources.limits.memory, \
                     {at}.memory.hugepages or {at}.memory.guest should be provided"
                )
            )
        );
        assert!(
            dedicated(json!({"resources": {"limits": {"cpu": 2, "memory": "2Gi"}}})).is_empty()
        );
        assert!(dedicated(json!({"memory": {"guest": "1Gi"}})).is_empty());
        assert_eq!(
            dedicated(json!({"resources": {"requests": {"cpu": "1500m", "memory": "1Gi"}}}))
                .into_iter()
                .map(|(_, m)| m)
                .collect::<Vec<_>>(),
            ["provided resources CPU requests must be an interger"]
        );
        assert_eq!(
            dedicated(
                json!({"resources": {"requests": {"cpu": 2, "memory": "1Gi"},
                                           "limits": {"cpu": 4, "memory": "2Gi"}}})
            ),
            [
                (
                    format!("{at}.resources.requests.memory"),
                    format!(
                        "{at}.resources.requests.memory must be equal to {at}.resources.limits.memory"
                    )
                ),
                (
                    placement.clone(),
                    format!(
                        "{at}.resources.requests.cpu or {at}.resources.limits.cpu must be equal \
                         when DedicatedCPUPlacement is true "
                    )
                ),
            ]
        );
        assert_eq!(
            dedicated(
                json!({"cpu": {"cores": 4}, "resources": {"requests": {"cpu": 2}},
                             "memory": {"guest": "1Gi"}})
            ),
            [(
                placement.clone(),
                format!(
                    "{at}.resources.requests.cpu or {at}.resources.limits.cpu must not be provided \
                     at the same time with {at}.cpu.cores when DedicatedCPUPlacement is true "
                )
            )]
        );
        // Go multiplies the topology as `uint32`s: 2^31 sockets of two threads make 0 vCPUs,
        // which no request contradicts.
        assert!(
            dedicated(json!({"cpu": {"sockets": 2_147_483_648_u64, "threads": 2},
                       "resources": {"requests": {"cpu": 2}}, "memory": {"guest": "1Gi"}}))
            .iter()
            .all(|(_, m)| !m.contains("at the same time")),
        );
        assert_eq!(
            dedicated(json!({"cpu": {"threads": 4}, "memory": {"guest": "1Gi"}})),
            [(
                placement,
                format!(
                    "Not more than two threads must be provided at {at}.cpu.threads (got 4) when \
                     DedicatedCPUPlacement is true"
                )
            )]
        );
        // NUMA passthrough and realtime need dedicated CPUs, hugepages and each other.
        let passthrough = format!("{at}.cpu.numa.guestMappingPassthrough");
        assert_eq!(
            domain(json!({"cpu": {"realtime": {}}, "memory": {"guest": "1Gi"}})),
            [
                (
                    format!("{at}.cpu.dedicatedCpuPlacement"),
                    format!(
                        "{at}.cpu.dedicatedCpuPlacement must be set to true when {at}.cpu.realtime is used"
                    )
                ),
                (
                    passthrough.clone(),
                    format!("{passthrough} must be defined when {at}.cpu.realtime is used")
                ),
            ]
        );
        assert_eq!(
            dedicated(json!({"cpu": {"numa": {"guestMappingPassthrough": {}}},
                             "memory": {"guest": "1Gi"}})),
            [(
                passthrough.clone(),
                format!(
                    "{at}.memory.hugepages must be requested when NUMA topology strategy is set \
                     in {passthrough}"
                )
            )]
        );
        // Hugepages: the memory holds a whole number of pages, one at least.
        let pages = |memory: Value| domain(json!({"memory": memory}));
        assert!(pages(json!({"guest": "4Gi", "hugepages": {"pageSize": "1Gi"}})).is_empty());
        assert_eq!(
            pages(json!({"guest": "512Mi", "hugepages": {"pageSize": "1Gi"}})),
            one(
                "resources.requests.memory",
                format!(
                    "{at}.resources.requests.memory '0' must be equal to or larger than page size \
                     {at}.memory.hugepages.pageSize '1Gi'"
                )
            )
        );
        assert_eq!(
            pages(json!({"guest": "3Mi", "hugepages": {"pageSize": "2Mi"}})),
            one(
                "resources.requests.memory",
                format!(
                    "{at}.resources.requests.memory '0' is not a multiple of the page size \
                     {at}.memory.hugepages.pageSize '2Mi'"
                )
            )
        );
        // A page size of 0 (however spelt) fails KubeVirt's webhook, which divides by it,
        // whatever the memory.
        for (memory, page) in [("1Gi", "0"), ("1Gi", "0Mi"), ("0", "0.0"), ("2Mi", "0Ki")] {
            let found = pages(json!({"guest": memory, "hugepages": {"pageSize": page}}));
            assert_eq!(found.len(), 1, "{page}: {found:?}");
            assert_eq!(found[0].0, format!("{at}.memory.hugepages.pageSize"));
            assert!(found[0].1.contains("a page size of 0"), "{found:?}");
        }
        assert_eq!(
            pages(json!({"guest": "1Gi", "hugepages": {"pageSize": "big"}}))[0].0,
            format!("{at}.memory.hugepages.pageSize")
        );
    }

    #[test]
    fn memory_hotplug_needs_aligned_guest_memory_within_max_guest() {
        let at = "spec.template.spec.domain.memory.guest";
        let memory = |memory: Value, profile: &ClusterProfile| {
            let obj = Object::new(
                json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                       "metadata": {"name": "x"},
                       "spec": vm(json!({"domain": {"memory": memory,
                                                    "resources": {"limits": {"memory": "2Gi"}}}}))}),
                Origin::new("vm.yaml", 0, Some(1)),
            );
            findings_with(&obj, profile)
        };
        let live = ClusterProfile::default();
        assert!(
            live.hotplug.is_some(),
            "live updates are KubeVirt's default"
        );
        let objection = |guest: Value, max_guest: &str| {
            memory(json!({"guest": guest, "maxGuest": max_guest}), &live)
                .into_iter()
                .map(|(f, m)| {
                    assert_eq!(f, at);
                    m
                })
                .collect::<Vec<_>>()
        };
        assert!(objection(json!("2Gi"), "8Gi").is_empty());
        assert_eq!(
            objection(json!("4Gi"), "2Gi"),
            ["Guest memory is greater than the configured maxGuest memory"]
        );
        assert_eq!(
            objection(json!("1001Mi"), "8Gi"),
            ["Guest memory must be 2Mi aligned"]
        );
        assert_eq!(
            objection(json!("2Gi"), "4097Mi"),
            ["MaxGuest must be 2Mi aligned"]
        );
        assert_eq!(
            objection(json!("512Mi"), "8Gi"),
            ["Memory hotplug is only available for VMs with at least 1Gi of guest memory"]
        );
        // Without a guest size, the limit is the guest memory (KubeVirt's defaults).
        assert_eq!(
            memory(json!({"maxGuest": "1Gi"}), &live),
            [(
                at.to_string(),
                "Guest memory is greater than the configured maxGuest memory".to_string()
            )]
        );
        // Without live updates: no hotplug, but the guest memory stays within the limit.
        let stage = ClusterProfile {
            hotplug: None,
            ..ClusterProfile::default()
        };
        assert!(memory(json!({"guest": "4Gi", "maxGuest": "2Gi"}), &live).len() == 1);
        assert_eq!(
            memory(json!({"guest": "4Gi", "maxGuest": "2Gi"}), &stage),
            [(
                at.to_string(),
                format!(
                    "{at} '4Gi' must be equal to or less than the memory limit \
                     spec.template.spec.domain.resources.limits.memory '2Gi'"
                )
            )]
        );
        assert!(memory(json!({"guest": "1Gi"}), &stage).is_empty());
    }

    #[test]
    fn sockets_stay_within_max_sockets() {
        let cpu = |cpu: Value| fields("VirtualMachine", vm(json!({"domain": {"cpu": cpu}})));
        assert_eq!(
            cpu(json!({"sockets": 8, "maxSockets": 4})),
            ["spec.template.spec.domain.cpu.sockets"]
        );
        assert!(cpu(json!({"sockets": 4, "maxSockets": 4})).is_empty());
        // Unset (0) means no limit.
        assert!(cpu(json!({"sockets": 8, "maxSockets": 0})).is_empty());
        assert!(cpu(json!({"maxSockets": 4})).is_empty());
        // Without any topology, KubeVirt's defaults give one socket per CPU of the limit, else
        // of the request (rounded up).
        let resources = |cpu: Value, resources: Value| {
            fields(
                "VirtualMachine",
                vm(json!({"domain": {"cpu": cpu, "resources": resources}})),
            )
            .into_iter()
            .filter(|f| f.ends_with("cpu.sockets"))
            .collect::<Vec<_>>()
        };
        let refused = ["spec.template.spec.domain.cpu.sockets"];
        assert_eq!(
            resources(json!({"maxSockets": 2}), json!({"limits": {"cpu": "4"}})),
            refused
        );
        assert_eq!(
            resources(
                json!({"maxSockets": 2}),
                json!({"requests": {"cpu": "2500m"}})
            ),
            refused
        );
        assert!(resources(json!({"maxSockets": 2}), json!({"requests": {"cpu": 2}})).is_empty());
        // The limit wins over the request.
        assert!(
            resources(
                json!({"maxSockets": 2}),
                json!({"requests": {"cpu": 4}, "limits": {"cpu": 2}})
            )
            .is_empty()
        );
        // Any topology the spec sets is kept as it is.
        assert!(
            resources(
                json!({"maxSockets": 2, "cores": 4}),
                json!({"limits": {"cpu": 4}})
            )
            .is_empty()
        );
    }

    #[test]
    fn secure_boot_needs_smm_and_an_isolated_emulator_thread_dedicated_cpus() {
        let domain = |domain: Value| fields("VirtualMachine", vm(json!({"domain": domain})));
        let efi = |efi: Value, smm: Value| {
            domain(json!({"firmware": {"bootloader": {"efi": efi}}, "features": {"smm": smm}}))
        };
        assert_eq!(
            efi(json!({}), json!({"enabled": false})),
            ["spec.template.spec.domain"]
        );
        assert!(efi(json!({"secureBoot": false}), json!({"enabled": false})).is_empty());
        assert!(efi(json!({}), json!({})).is_empty());
        // No SMM feature at all is SMM off: nothing else turns it on for a VM without a
        // preference.
        assert_eq!(
            domain(json!({"firmware": {"bootloader": {"efi": {}}}})),
            ["spec.template.spec.domain"]
        );
        // A preference may: a VM naming one is judged on what KubeVirt applies (below), and
        // on its own only where it turns SMM off itself.
        let mut spec = vm(json!({"domain": {"firmware": {"bootloader": {"efi": {}}}}}));
        spec["preference"] = json!({"name": "windows.11"});
        assert!(fields("VirtualMachine", spec.clone()).is_empty());
        spec["template"]["spec"]["domain"]["features"] = json!({"smm": {"enabled": false}});
        assert_eq!(
            fields("VirtualMachine", spec),
            ["spec.template.spec.domain"]
        );
        assert!(
            domain(json!({"firmware": {"bootloader": {"efi": {}}},
                          "features": {"smm": {"enabled": false}},
                          "launchSecurity": {"tdx": {}}}))
            .is_empty()
        );

        let cpu = |cpu: Value| domain(json!({"cpu": cpu, "memory": {"guest": "1Gi"}}));
        assert_eq!(
            cpu(json!({"isolateEmulatorThread": true})),
            ["spec.template.spec.domain.cpu.isolateEmulatorThread"]
        );
        assert!(
            cpu(json!({"isolateEmulatorThread": true, "dedicatedCpuPlacement": true})).is_empty()
        );
        // With an instancetype, which may place the CPUs, the VM's part is not judged alone.
        let mut spec = vm(json!({"domain": {"cpu": {"isolateEmulatorThread": true}}}));
        spec["instancetype"] = json!({"name": "cx1.large"});
        assert!(fields("VirtualMachine", spec).is_empty());
        assert_eq!(
            fields(
                "VirtualMachineInstance",
                json!({"domain": {"cpu": {"isolateEmulatorThread": true}}})
            ),
            ["spec.domain.cpu.isolateEmulatorThread"]
        );
    }

    #[test]
    fn every_interface_has_exactly_one_binding() {
        let iface = |iface: Value| {
            findings(
                "VirtualMachine",
                vm(json!({"domain": {"devices": {"interfaces": [iface]}},
                          "networks": [{"name": "default", "pod": {}}]})),
            )
        };
        for binding in ["bridge", "masquerade", "sriov", "passtBinding"] {
            assert!(
                iface(json!({"name": "default", binding: {}})).is_empty(),
                "{binding}"
            );
        }
        assert!(iface(json!({"name": "default", "binding": {"name": "passt"}})).is_empty());
        let refused = vec![(
            "spec.template.spec.domain.devices.interfaces[0]".to_string(),
            "logical default interface must have exactly one binding method or binding plugin"
                .to_string(),
        )];
        // None, two, or only a binding KubeVirt no longer has.
        assert_eq!(iface(json!({"name": "default"})), refused);
        assert_eq!(
            iface(json!({"name": "default", "bridge": {}, "masquerade": {}})),
            refused
        );
        let mut discontinued = refused.clone();
        discontinued.push((
            "spec.template.spec.domain.devices.interfaces[0].slirp".to_string(),
            "Slirp interface support has been discontinued since v1.3".to_string(),
        ));
        assert_eq!(iface(json!({"name": "default", "slirp": {}})), discontinued);
    }

    #[test]
    fn a_vmi_is_checked_at_its_spec_and_other_kinds_not_at_all() {
        let spec = json!({
            "domain": {"devices": {"disks": [{"name": "root"}]}},
            "volumes": [],
        });
        assert_eq!(
            fields("VirtualMachineInstance", spec.clone()),
            ["spec.domain.devices.disks[0].name"]
        );
        assert!(fields("VirtualMachineInstancePreset", spec).is_empty());
    }

    /// `extra`'s mappings merged into `into`'s, key by key.
    fn merge(into: &mut Value, extra: Value) {
        match (into, extra) {
            (Value::Object(into), Value::Object(extra)) => {
                for (k, v) in extra {
                    match into.get_mut(&k) {
                        Some(slot) => merge(slot, v),
                        None => {
                            into.insert(k, v);
                        }
                    }
                }
            }
            (into, extra) => *into = extra,
        }
    }

    fn applied_findings(template_spec: Value, applied: Value) -> Vec<(String, String)> {
        let mut spec = vm(template_spec);
        spec["preference"] = json!({"name": "p"});
        let obj = Object::new(
            json!({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
                   "metadata": {"name": "x"}, "spec": spec}),
            Origin::new("vm.yaml", 0, Some(1)),
        );
        let mut out = Vec::new();
        check(
            &obj,
            &ClusterProfile::default(),
            Some(&applied),
            false,
            Start::Never,
            &Mutex::default(),
            &mut out,
        );
        to_pairs(out)
    }

    #[test]
    fn a_vm_with_an_instancetype_or_preference_is_judged_as_kubevirt_applies_them() {
        let cdrom = |bus: Value| {
            json!({"domain": {"devices": {"disks": [{"name": "iso", "cdrom": bus}]}},
                   "volumes": [{"name": "iso", "containerDisk": {"image": "iso"}}]})
        };
        // The preference's bus: KubeVirt refuses it, and the finding says where it came from.
        let found = applied_findings(cdrom(json!({})), cdrom(json!({"bus": "virtio"})));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(
            found[0].0,
            "spec.template.spec.domain.devices.disks[0].cdrom.bus"
        );
        assert!(
            found[0]
                .1
                .starts_with("Bus type virtio is invalid for CD-ROM device (KubeVirt checks"),
            "{}",
            found[0].1
        );
        // The manifest's own bus: KubeVirt's message alone.
        let found = applied_findings(
            cdrom(json!({"bus": "virtio"})),
            cdrom(json!({"bus": "virtio"})),
        );
        assert_eq!(
            found,
            [(
                "spec.template.spec.domain.devices.disks[0].cdrom.bus".to_string(),
                "Bus type virtio is invalid for CD-ROM device".to_string()
            )]
        );
        // What the preference fills in (SMM here) clears what the manifest alone would show.
        let efi = json!({"domain": {"firmware": {"bootloader": {"efi": {}}}}});
        let mut with_smm = efi.clone();
        with_smm["domain"]["features"] = json!({"smm": {}});
        assert!(applied_findings(efi.clone(), with_smm).is_empty());
        assert_eq!(applied_findings(efi.clone(), efi).len(), 1);
        // The instancetype's dedicated CPUs go with an isolated emulator thread.
        let cpu = |cpu: Value| json!({"domain": {"cpu": cpu, "memory": {"guest": "1Gi"}}});
        assert!(
            applied_findings(
                cpu(json!({})),
                cpu(
                    json!({"isolateEmulatorThread": true, "dedicatedCpuPlacement": true,
                          "sockets": 1})
                )
            )
            .is_empty()
        );
        assert_eq!(
            applied_findings(cpu(json!({})), cpu(json!({"isolateEmulatorThread": true})))
                .into_iter()
                .map(|(f, _)| f)
                .collect::<Vec<_>>(),
            ["spec.template.spec.domain.cpu.isolateEmulatorThread"]
        );
    }
}

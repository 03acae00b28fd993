//! The part of `KV034` that judges networks and interfaces beyond their pairing and binding
//! count: each network's source, each interface's state, the networks its binding needs, the
//! bindings KubeVirt no longer has, and its name, model, MAC address, PCI address, forwarded
//! ports and port ranges, and DHCP options.
//!
//! Mirrors `pkg/network/admitter` (`netsource.go`, `admit.go`, `binding.go`, `passt.go`,
//! `discontinued.go`, `netiface.go`) of KubeVirt d923fdb815. Where KubeVirt names the spec for
//! a DHCP private option, the finding names the option.

use serde_json::Value;

use super::settings::{self, Item};
use crate::kubevirt::profile::{ClusterProfile, GateState};
use crate::model::ip;
use crate::model::path::{self, is_set};

type Found = Vec<(String, String)>;

/// The interface models KubeVirt offers.
pub(super) const MODELS: [&str; 7] = [
    "e1000", "e1000e", "igb", "ne2k_pci", "pcnet", "rtl8139", "virtio",
];

/// The MAC address KubeVirt keeps for the in-pod bridge of masquerade interfaces.
const RESERVED_MAC: &str = "02:00:00:00:00:00";

/// The most networks searched one by one for an interface's; past it, they are put in a map.
const FEW_NETWORKS: usize = 16;

/// The network and interface checks on the spec at `at`.
pub(super) fn check(spec: &Value, at: &str, profile: &ClusterProfile, found: &mut Found) {
    let networks = path::get(spec, &["networks"]).and_then(Value::as_array);
    let networks = networks.map(Vec::as_slice).unwrap_or_default();
    network_sources(networks, at, found);
    let interfaces =
        path::get(spec, &["domain", "devices", "interfaces"]).and_then(Value::as_array);
    let interfaces = interfaces.map(Vec::as_slice).unwrap_or_default();
    // The first network that is the pod network or Multus's default one.
    let default_network = networks.iter().find(|n| {
        is_set(n, &["pod"]) || path::get(n, &["multus", "default"]) == Some(&true.into())
    });
    // The discontinued gates already reported.
    let mut gates_reported = Vec::new();
    // The last network of each name, as KubeVirt indexes them: a later one replaces an
    // earlier one of its name. A VM has a network or two, searched; a long (hostile) list is
    // looked up in a map instead, so that the cost does not grow with the square of it.
    let mut by_name = std::collections::HashMap::new();
    if networks.len() > FEW_NETWORKS && !interfaces.is_empty() {
        by_name.reserve(networks.len());
        for network in networks {
            by_name.insert(path::str_at(network, &["name"]).unwrap_or(""), network);
        }
    }
    let network_named = |name: &str| {
        if networks.len() > FEW_NETWORKS {
            by_name.get(name).copied()
        } else {
            networks
                .iter()
                .rfind(|n| path::str_at(n, &["name"]).unwrap_or("") == name)
        }
    };
    for (i, iface) in interfaces.iter().enumerate() {
        let name = path::str_at(iface, &["name"]).unwrap_or("");
        let iface_at = Item {
            at,
            list: "domain.devices.interfaces",
            index: i,
        };
        let network = network_named(name);
        let on_pod = network.is_some_and(|n| is_set(n, &["pod"]));
        // Few interfaces have any of these: one pass over the keys says whether to look.
        let rare = iface.as_object().is_some_and(|m| {
            m.keys().any(|k| {
                matches!(
                    k.as_str(),
                    "slirp" | "passt" | "macvtap" | "portRanges" | "dhcpOptions"
                )
            })
        });
        if rare {
            // The VM webhook's check on creation, which the pool webhook does not make.
            if !profile.as_written {
                discontinued(iface, iface_at, found);
            }
            discontinued_gates(iface, iface_at, profile, &mut gates_reported, found);
        }
        state(iface, name, iface_at, default_network, found);
        binding(iface, iface_at, on_pod, profile, found);
        fields(iface, iface_at, on_pod, found);
        if rare {
            port_ranges(iface, iface_at, on_pod, profile, found);
            dhcp_options(iface, iface_at, found);
        }
    }
}

/// The bindings KubeVirt dropped in v1.3: the interface's key, what KubeVirt calls it, and the
/// feature gate that covered it, when KubeVirt still checks a spec against that gate.
const DROPPED_BINDINGS: [(&str, &str, Option<&str>); 3] = [
    ("slirp", "Slirp interface support", None),
    ("passt", "Passt network binding", Some("Passt")),
    ("macvtap", "Macvtap network binding", Some("Macvtap")),
];

/// The bindings KubeVirt dropped in v1.3, which it refuses on a new VM before any other check.
fn discontinued(iface: &Value, at: Item<'_>, found: &mut Found) {
    for (key, what, _) in DROPPED_BINDINGS {
        if is_set(iface, &[key]) {
            found.push((
                format!("{at}.{key}"),
                format!("{what} has been discontinued since v1.3"),
            ));
        }
    }
}

/// The gates of the bindings KubeVirt dropped in v1.3, which it refuses a spec for using while
/// the configuration's `featureGates` still lists them (`featuregate.ValidateFeatureGates`):
/// one finding per gate, at the first interface that uses its binding.
fn discontinued_gates(
    iface: &Value,
    at: Item<'_>,
    profile: &ClusterProfile,
    reported: &mut Vec<&'static str>,
    found: &mut Found,
) {
    let Some(gates) = &profile.gates else {
        return;
    };
    for (key, what, gate) in DROPPED_BINDINGS {
        let Some(gate) = gate else { continue };
        if is_set(iface, &[key])
            && !reported.contains(&gate)
            && gates.enabled.iter().any(|g| g == gate)
        {
            reported.push(gate);
            found.push((
                format!("{at}.{key}"),
                format!(
                    "{what} is discontinued since v1.3. Please refer to Kubevirt user guide for \
                     alternatives."
                ),
            ));
        }
    }
}

/// Port ranges: behind the alpha gate `PortRangesSpec`; on the pod network, not with `ports`,
/// on masquerade only, at most ten, each TCP or UDP from a port to a port not below it, and
/// none overlapping another of its protocol.
fn port_ranges(
    iface: &Value,
    at: Item<'_>,
    on_pod: bool,
    profile: &ClusterProfile,
    found: &mut Found,
) {
    if !is_set(iface, &["portRanges"]) {
        return;
    }
    let name_at = || format!("{at}.name");
    if settings::off(profile, "PortRangesSpec", GateState::Alpha) {
        found.push((
            name_at(),
            "portRanges is specified on interface but the PortRangesSpec feature gate is not \
             enabled"
                .into(),
        ));
        return;
    }
    if !on_pod {
        return;
    }
    if is_set(iface, &["ports"]) {
        found.push((
            name_at(),
            "Cannot define both ports and portRanges on interface".into(),
        ));
    }
    if !is_set(iface, &["masquerade"]) {
        found.push((
            name_at(),
            "portRanges are only supported on masquerade interfaces".into(),
        ));
    }
    let ranges = iface.get("portRanges").and_then(Value::as_array);
    let ranges = ranges.map(Vec::as_slice).unwrap_or_default();
    if ranges.len() > 10 {
        found.push((
            format!("{at}.portRanges"),
            "No more than 10 portRanges are allowed".into(),
        ));
        return;
    }
    let mut by_protocol: [(&str, Vec<(i64, i64)>); 2] = [("TCP", Vec::new()), ("UDP", Vec::new())];
    for (i, range) in ranges.iter().enumerate() {
        let range_at = |field: &str| format!("{at}.portRanges[{i}].{field}");
        let protocol = path::str_at(range, &["protocol"]).unwrap_or("");
        let number = |field: &str| range.get(field).and_then(Value::as_i64).unwrap_or(0);
        let (start, end) = (number("start"), number("end"));
        let problem = if !["TCP", "UDP"].contains(&protocol) {
            Some(("protocol", "Unknown protocol, only TCP or UDP allowed"))
        } else if !(1..65536).contains(&start) {
            Some(("start", "Start must be a valid port number, 0 < x < 65536"))
        } else if !(1..65536).contains(&end) {
            Some(("end", "End must be a valid port number, 0 < x < 65536"))
        } else if start > end {
            Some(("start", "Start must be less than or equal to end"))
        } else {
            None
        };
        match problem {
            Some((field, message)) => found.push((range_at(field), message.into())),
            None => {
                let slot = by_protocol.iter_mut().find(|(p, _)| *p == protocol);
                if let Some((_, intervals)) = slot {
                    intervals.push((start, end));
                }
            }
        }
    }
    for (protocol, mut intervals) in by_protocol {
        intervals.sort_unstable();
        for pair in intervals.windows(2) {
            let ((s1, e1), (s2, e2)) = (pair[0], pair[1]);
            if s2 <= e1 {
                found.push((
                    format!("{at}.portRanges"),
                    format!("{protocol} portRanges [{s1}-{e1}] and [{s2}-{e2}] overlap"),
                ));
            }
        }
    }
}

/// DHCP options: private options distinct and from 224 to 254, NTP servers IPv4 addresses
/// (IPv4-mapped IPv6 included; KubeVirt's decoder has already read them leniently).
fn dhcp_options(iface: &Value, at: Item<'_>, found: &mut Found) {
    let Some(options @ Value::Object(_)) = iface.get("dhcpOptions") else {
        return;
    };
    let private = options.get("privateOptions").and_then(Value::as_array);
    let private = private.map(Vec::as_slice).unwrap_or_default();
    // Go reads an absent option as 0.
    let option = |o: &Value| o.get("option").and_then(Value::as_i64).unwrap_or(0);
    let distinct: std::collections::HashSet<i64> = private.iter().map(option).collect();
    if distinct.len() < private.len() {
        found.push((
            format!("{at}.dhcpOptions.privateOptions"),
            "Found Duplicates: you have provided duplicate DHCPPrivateOptions".into(),
        ));
    }
    for (i, o) in private.iter().enumerate() {
        if !(224..=254).contains(&option(o)) {
            found.push((
                format!("{at}.dhcpOptions.privateOptions[{i}].option"),
                "provided DHCPPrivateOptions are out of range, must be in range 224 to 254".into(),
            ));
        }
    }
    let servers = options.get("ntpServers").and_then(Value::as_array);
    for (i, server) in servers.into_iter().flatten().enumerate() {
        let text = server.as_str().unwrap_or("");
        if !ip::parse_lenient(text).is_some_and(ip::is_v4) {
            found.push((
                format!("{at}.dhcpOptions.ntpServers[{i}]"),
                "NTP servers must be a list of valid IPv4 addresses.".into(),
            ));
        }
    }
}

/// Each network has one source, and a Multus one names its network (only the first that does
/// not is reported).
fn network_sources(networks: &[Value], at: &str, found: &mut Found) {
    for (i, network) in networks.iter().enumerate() {
        let sources = ["pod", "multus", "resourceClaim"]
            .iter()
            .filter(|s| is_set(network, &[s]))
            .count();
        let message = match sources {
            0 => "should have a network type",
            1 => continue,
            _ => "should have only one network type",
        };
        found.push((format!("{at}.networks[{i}]"), message.into()));
    }
    let unnamed = networks.iter().position(|n| {
        is_set(n, &["multus"])
            && path::str_at(n, &["multus", "networkName"])
                .unwrap_or("")
                .is_empty()
    });
    if let Some(i) = unnamed {
        found.push((
            format!("{at}.networks[{i}]"),
            "CNI delegating plugin must have a networkName".into(),
        ));
    }
}

/// An interface's `state` is `up`, `down` or `absent`; SR-IOV takes neither `up` nor `down`,
/// and `absent` needs a bridge binding off the default network.
fn state(iface: &Value, name: &str, at: Item<'_>, default: Option<&Value>, found: &mut Found) {
    let state = path::str_at(iface, &["state"]).unwrap_or("");
    if state.is_empty() {
        return;
    }
    let field = format!("{at}.state");
    if !["", "absent", "down", "up"].contains(&state) {
        found.push((
            field.clone(),
            format!("logical {name} interface state value is unsupported: {state}"),
        ));
    }
    if is_set(iface, &["sriov"]) && (state == "down" || state == "up") {
        found.push((
            field.clone(),
            format!("{name:?} interface's state {state:?} is not supported for SR-IOV NICs"),
        ));
    }
    if state == "absent" {
        if !is_set(iface, &["bridge"]) {
            found.push((
                field.clone(),
                format!(
                    "{name:?} interface's state {state:?} is supported only for bridge binding"
                ),
            ));
        }
        if default.is_some_and(|n| path::str_at(n, &["name"]).unwrap_or("") == name) {
            found.push((
                field,
                format!(
                    "{name:?} interface's state {state:?} is not supported on default networks"
                ),
            ));
        }
    }
}

/// Masquerade and passt need the pod network, masquerade a MAC address of its own, bridge on the
/// pod network the cluster's permission, and passt its feature gate.
fn binding(iface: &Value, at: Item<'_>, on_pod: bool, profile: &ClusterProfile, found: &mut Found) {
    let name_at = || format!("{at}.name");
    if is_set(iface, &["masquerade"]) {
        if !on_pod {
            found.push((
                name_at(),
                "Masquerade interface only implemented with pod network".into(),
            ));
        }
        if path::str_at(iface, &["macAddress"]) == Some(RESERVED_MAC) {
            found.push((
                format!("{at}.macAddress"),
                "The requested MAC address is reserved for the in-pod bridge. Please choose \
                 another one."
                    .into(),
            ));
        }
    }
    if is_set(iface, &["bridge"]) && on_pod && !profile.permit_bridge_on_pod_network {
        found.push((
            name_at(),
            "Bridge on pod network configuration is not enabled under kubevirt-config".into(),
        ));
    }
    if is_set(iface, &["passtBinding"]) {
        if settings::off(profile, "PasstBinding", GateState::Beta) {
            found.push((name_at(), "PasstBinding feature gate is not enabled".into()));
        }
        if !on_pod {
            found.push((
                name_at(),
                "PasstBinding interface only implemented with pod network".into(),
            ));
        }
    }
}

/// The interface's name, model, MAC address, PCI address, and on the pod network its ports.
fn fields(iface: &Value, at: Item<'_>, on_pod: bool, found: &mut Found) {
    let name_at = || format!("{at}.name");
    let name = path::str_at(iface, &["name"]).unwrap_or("");
    let name_ok = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    if name.is_empty() || !name.bytes().all(name_ok) {
        found.push((
            name_at(),
            "Network interface name can only contain alphabetical characters, numbers, dashes \
             (-) or underscores (_)"
                .into(),
        ));
    }
    if let Some(model) = path::str_at(iface, &["model"]).filter(|m| !m.is_empty())
        && !MODELS.contains(&model)
    {
        found.push((
            format!("{at}.model"),
            format!(
                "interface {} uses model {model} that is not supported.",
                name_at()
            ),
        ));
    }
    if let Some(mac) = path::str_at(iface, &["macAddress"]).filter(|m| !m.is_empty()) {
        let problem = match mac_len(mac) {
            None => Some("malformed"),
            Some(n) if n > 6 => Some("too long"),
            Some(_) => None,
        };
        if let Some(problem) = problem {
            found.push((
                format!("{at}.macAddress"),
                format!("interface {} has {problem} MAC address ({mac}).", name_at()),
            ));
        }
    }
    if let Some(pci) = path::str_at(iface, &["pciAddress"]).filter(|p| !p.is_empty())
        && !is_pci_address(pci)
    {
        found.push((
            format!("{at}.pciAddress"),
            format!("interface {} has malformed PCI address ({pci}).", name_at()),
        ));
    }
    if on_pod && let Some(ports) = iface.get("ports").and_then(Value::as_array) {
        ports_of(ports, at, found);
    }
}

/// Forwarded ports: names unique and valid port names, numbers from 1 to 65535, TCP or UDP.
fn ports_of(ports: &[Value], at: Item<'_>, found: &mut Found) {
    let mut names = std::collections::HashSet::new();
    for (i, port) in ports.iter().enumerate() {
        let port_at = format!("{at}.ports[{i}]");
        let name = path::str_at(port, &["name"]).unwrap_or("");
        if !name.is_empty() {
            if !names.insert(name) {
                found.push((
                    format!("{port_at}.name"),
                    format!("Duplicate name of the port: {name}"),
                ));
            }
            if !is_port_name(name) {
                found.push((
                    format!("{port_at}.name"),
                    format!("Invalid name of the port: {name}"),
                ));
            }
        }
    }
    for (i, port) in ports.iter().enumerate() {
        let port_at = format!("{at}.ports[{i}]");
        let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
        if number == 0 {
            found.push((format!("{port_at}.port"), "Port field is mandatory.".into()));
        }
        if !(0..65536).contains(&number) {
            found.push((
                format!("{port_at}.port"),
                "Port field must be in range 0 < x < 65536.".into(),
            ));
        }
        let protocol = path::str_at(port, &["protocol"]).unwrap_or("");
        if !["", "TCP", "UDP"].contains(&protocol) {
            found.push((
                format!("{port_at}.protocol"),
                "Unknown protocol, only TCP or UDP allowed".into(),
            ));
        }
    }
}

/// A port name as Kubernetes takes it: at most 15 lowercase letters, digits and single
/// hyphens, with a letter, not starting or ending with a hyphen.
fn is_port_name(name: &str) -> bool {
    name.len() <= 15
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && name.bytes().any(|b| b.is_ascii_lowercase())
        && !name.contains("--")
        && !name.starts_with('-')
        && !name.ends_with('-')
}

/// The number of bytes in a MAC address as Go's `net.ParseMAC` reads it (6, 8 or 20, in pairs
/// of hex digits split by `:` or `-`, or groups of four split by `.`), or `None` when it does
/// not parse.
fn mac_len(mac: &str) -> Option<usize> {
    let b = mac.as_bytes();
    if b.len() < 14 {
        return None;
    }
    let hex = |s: &[u8]| s.iter().all(u8::is_ascii_hexdigit);
    let (group, sep) = if b[2] == b':' || b[2] == b'-' {
        (2, b[2])
    } else if b[4] == b'.' {
        (4, b'.')
    } else {
        return None;
    };
    if !(b.len() + 1).is_multiple_of(group + 1) {
        return None;
    }
    let groups = (b.len() + 1) / (group + 1);
    let bytes = groups * group / 2;
    if ![6, 8, 20].contains(&bytes) {
        return None;
    }
    for (g, chunk) in b.chunks(group + 1).enumerate() {
        let (digits, rest) = chunk.split_at(group.min(chunk.len()));
        let last = g + 1 == groups;
        if !hex(digits) || digits.len() != group || (last != rest.is_empty()) {
            return None;
        }
        if !last && rest != [sep] {
            return None;
        }
    }
    Some(bytes)
}

/// `dddd:bb:ss.f` in hex (the function 0 to 7).
pub(super) fn is_pci_address(pci: &str) -> bool {
    let b = pci.as_bytes();
    let hex = |s: &[u8]| s.iter().all(u8::is_ascii_hexdigit);
    b.len() == 12
        && hex(&b[0..4])
        && b[4] == b':'
        && hex(&b[5..7])
        && b[7] == b':'
        && hex(&b[8..10])
        && b[10] == b'.'
        && (b'0'..=b'7').contains(&b[11])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(spec: Value, profile: &ClusterProfile) -> Vec<(String, String)> {
        let mut found = Vec::new();
        check(&spec, "spec", profile, &mut found);
        found
    }

    #[test]
    fn mac_addresses_parse_as_go_parses_them() {
        for (mac, len) in [
            ("02:00:5e:00:53:01", Some(6)),
            ("02-00-5E-00-53-01", Some(6)),
            ("0200.5e00.5301", Some(6)),
            ("02:00:5e:10:00:00:00:01", Some(8)),
            ("0200.5e10.0000.0001", Some(8)),
            ("02:00:5e:00:53", None),
            ("02:00-5e:00:53:01", None),
            ("02:00:5e:00:53:0g", None),
            ("02:00:5e:00:53:011", None),
            ("0200.5e00.530", None),
            ("zz", None),
        ] {
            assert_eq!(mac_len(mac), len, "{mac}");
        }
    }

    #[test]
    fn pci_addresses_and_port_names() {
        assert!(is_pci_address("0000:81:00.1"));
        for bad in ["0000:81:00.8", "000:81:00.1", "0000:81:00", "0000-81:00.1"] {
            assert!(!is_pci_address(bad), "{bad}");
        }
        assert!(is_port_name("http-8080"));
        for bad in ["HTTP", "8080", "a--b", "-a", "a-", "abcdefghijklmnop"] {
            assert!(!is_port_name(bad), "{bad}");
        }
    }

    #[test]
    fn bindings_need_their_networks_and_fields_their_shape() {
        let spec = json!({
            "domain": {"devices": {"interfaces": [
                {"name": "default", "masquerade": {}, "macAddress": "02:00:00:00:00:00",
                 "model": "virtio", "ports": [{"name": "web", "port": 80},
                                              {"name": "web", "port": 0, "protocol": "SCTP"}]},
                {"name": "sec", "masquerade": {}, "model": "e1000x", "state": "absent",
                 "pciAddress": "0000:81:00.9"},
                {"name": "bad.name", "bridge": {}, "macAddress": "02:00:5e:10:00:00:00:01",
                 "state": "sideways"},
            ]}},
            "networks": [
                {"name": "default", "pod": {}},
                {"name": "sec", "multus": {}},
                {"name": "bad.name", "pod": {}, "multus": {"networkName": "n"}},
            ]
        });
        let found = run(spec, &ClusterProfile::default());
        let at = |rest: &str| format!("spec.{rest}");
        assert_eq!(
            found,
            [
                (
                    at("networks[2]"),
                    "should have only one network type".into()
                ),
                (
                    at("networks[1]"),
                    "CNI delegating plugin must have a networkName".into()
                ),
                (
                    at("domain.devices.interfaces[0].macAddress"),
                    "The requested MAC address is reserved for the in-pod bridge. Please \
                     choose another one."
                        .into()
                ),
                (
                    at("domain.devices.interfaces[0].ports[1].name"),
                    "Duplicate name of the port: web".into()
                ),
                (
                    at("domain.devices.interfaces[0].ports[1].port"),
                    "Port field is mandatory.".into()
                ),
                (
                    at("domain.devices.interfaces[0].ports[1].protocol"),
                    "Unknown protocol, only TCP or UDP allowed".into()
                ),
                (
                    at("domain.devices.interfaces[1].state"),
                    "\"sec\" interface's state \"absent\" is supported only for bridge binding"
                        .into()
                ),
                (
                    at("domain.devices.interfaces[1].name"),
                    "Masquerade interface only implemented with pod network".into()
                ),
                (
                    at("domain.devices.interfaces[1].model"),
                    "interface spec.domain.devices.interfaces[1].name uses model e1000x that is \
                     not supported."
                        .into()
                ),
                (
                    at("domain.devices.interfaces[1].pciAddress"),
                    "interface spec.domain.devices.interfaces[1].name has malformed PCI address \
                     (0000:81:00.9)."
                        .into()
                ),
                (
                    at("domain.devices.interfaces[2].state"),
                    "logical bad.name interface state value is unsupported: sideways".into()
                ),
                (
                    at("domain.devices.interfaces[2].name"),
                    "Network interface name can only contain alphabetical characters, numbers, \
                     dashes (-) or underscores (_)"
                        .into()
                ),
                (
                    at("domain.devices.interfaces[2].macAddress"),
                    "interface spec.domain.devices.interfaces[2].name has too long MAC address \
                     (02:00:5e:10:00:00:00:01)."
                        .into()
                ),
            ]
        );
    }

    #[test]
    fn bridge_on_the_pod_network_and_passt_follow_the_cluster() {
        let spec = |binding: &str| {
            json!({"domain": {"devices": {"interfaces": [{"name": "default", binding: {}}]}},
                   "networks": [{"name": "default", "pod": {}}]})
        };
        let config = json!({"network": {"permitBridgeInterfaceOnPodNetwork": false},
                            "developerConfiguration": {"disabledFeatureGates": ["PasstBinding"]}});
        let strict = ClusterProfile::from_kubevirt(&config).expect("a configuration");
        assert_eq!(run(spec("bridge"), &ClusterProfile::default()), []);
        assert_eq!(run(spec("passtBinding"), &ClusterProfile::default()), []);
        assert_eq!(
            run(spec("bridge"), &strict)[0].1,
            "Bridge on pod network configuration is not enabled under kubevirt-config"
        );
        assert_eq!(
            run(spec("passtBinding"), &strict)[0].1,
            "PasstBinding feature gate is not enabled"
        );
    }

    #[test]
    fn discontinued_bindings_are_named() {
        let spec = json!({"domain": {"devices": {"interfaces": [
            {"name": "default", "masquerade": {}, "slirp": {}},
            {"name": "a", "macvtap": {}, "passt": {}},
        ]}}, "networks": [{"name": "default", "pod": {}}, {"name": "a", "multus": {"networkName": "n"}}]});
        let found = run(spec, &ClusterProfile::default());
        let named: Vec<&str> = found
            .iter()
            .filter(|(_, m)| m.ends_with("discontinued since v1.3"))
            .map(|(f, _)| f.as_str())
            .collect();
        assert_eq!(
            named,
            [
                "spec.domain.devices.interfaces[0].slirp",
                "spec.domain.devices.interfaces[1].passt",
                "spec.domain.devices.interfaces[1].macvtap",
            ]
        );
    }

    #[test]
    fn a_listed_gate_of_a_dropped_binding_is_named_once_at_its_first_user() {
        let spec = json!({"domain": {"devices": {"interfaces": [
            {"name": "a", "passt": {}},
            {"name": "b", "passt": {}, "macvtap": {}},
        ]}}, "networks": [
            {"name": "a", "multus": {"networkName": "n"}},
            {"name": "b", "multus": {"networkName": "m"}},
        ]});
        let gate_findings = |gates: Value| {
            let config = json!({"developerConfiguration": {"featureGates": gates}});
            let profile = ClusterProfile::from_kubevirt(&config).expect("a configuration");
            run(spec.clone(), &profile)
                .into_iter()
                .filter(|(_, m)| m.contains("is discontinued since v1.3. Please refer"))
                .map(|(f, _)| f)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            gate_findings(json!(["Passt", "Macvtap", "Passt"])),
            [
                "spec.domain.devices.interfaces[0].passt",
                "spec.domain.devices.interfaces[1].macvtap",
            ]
        );
        assert!(gate_findings(json!(["Sidecar"])).is_empty());
        // Without a configuration nothing is listed.
        assert!(
            run(spec.clone(), &ClusterProfile::default())
                .iter()
                .all(|(_, m)| !m.contains("Please refer"))
        );
    }

    #[test]
    fn port_ranges_wait_for_their_gate_and_are_checked_behind_it() {
        let spec = |iface: Value| {
            json!({"domain": {"devices": {"interfaces": [iface]}},
                   "networks": [{"name": "default", "pod": {}}]})
        };
        let ranges = json!([
            {"protocol": "TCP", "start": 100, "end": 200},
            {"protocol": "TCP", "start": 150, "end": 300},
            {"protocol": "UDP", "start": 100, "end": 200},
            {"protocol": "SCTP", "start": 1, "end": 2},
            {"protocol": "UDP", "start": 0, "end": 2},
            {"protocol": "UDP", "start": 5, "end": 70000},
            {"protocol": "UDP", "start": 9, "end": 8},
        ]);
        let iface = json!({"name": "default", "masquerade": {}, "portRanges": ranges});
        let off = ClusterProfile::from_kubevirt(&json!({})).expect("a configuration");
        assert_eq!(
            run(spec(iface.clone()), &off),
            [(
                "spec.domain.devices.interfaces[0].name".to_string(),
                "portRanges is specified on interface but the PortRangesSpec feature gate is \
                 not enabled"
                    .to_string()
            )]
        );
        // Without a configuration the alpha gate is unknown: what it guards is judged.
        let found = run(spec(iface), &ClusterProfile::default());
        let at = |rest: &str| format!("spec.domain.devices.interfaces[0].portRanges{rest}");
        assert_eq!(
            found,
            [
                (
                    at("[3].protocol"),
                    "Unknown protocol, only TCP or UDP allowed".into()
                ),
                (
                    at("[4].start"),
                    "Start must be a valid port number, 0 < x < 65536".into()
                ),
                (
                    at("[5].end"),
                    "End must be a valid port number, 0 < x < 65536".into()
                ),
                (
                    at("[6].start"),
                    "Start must be less than or equal to end".into()
                ),
                (
                    at(""),
                    "TCP portRanges [100-200] and [150-300] overlap".into()
                ),
            ]
        );
        let both = json!({"name": "default", "bridge": {}, "ports": [{"port": 80}],
                          "portRanges": [{"protocol": "TCP", "start": 1, "end": 2}]});
        let messages: Vec<String> = run(spec(both), &ClusterProfile::default())
            .into_iter()
            .map(|(_, m)| m)
            .collect();
        assert_eq!(
            messages,
            [
                "Cannot define both ports and portRanges on interface",
                "portRanges are only supported on masquerade interfaces"
            ]
        );
        let many = json!({"name": "default", "masquerade": {},
                          "portRanges": vec![json!({"protocol": "TCP", "start": 1, "end": 1}); 11]});
        assert_eq!(
            run(spec(many), &ClusterProfile::default())[0].1,
            "No more than 10 portRanges are allowed"
        );
    }

    #[test]
    fn dhcp_options_are_private_and_ntp_servers_ipv4() {
        let spec = json!({"domain": {"devices": {"interfaces": [
            {"name": "default", "masquerade": {}, "dhcpOptions": {
                "privateOptions": [{"option": 240, "value": "a"}, {"option": 240, "value": "b"},
                                   {"option": 12, "value": "c"}],
                "ntpServers": ["01.2.3.4", "::ffff:1.2.3.4", "::1", "ntp.example.com"]}},
        ]}}, "networks": [{"name": "default", "pod": {}}]});
        let at = |rest: &str| format!("spec.domain.devices.interfaces[0].dhcpOptions.{rest}");
        assert_eq!(
            run(spec, &ClusterProfile::default()),
            [
                (
                    at("privateOptions"),
                    "Found Duplicates: you have provided duplicate DHCPPrivateOptions".into()
                ),
                (
                    at("privateOptions[2].option"),
                    "provided DHCPPrivateOptions are out of range, must be in range 224 to 254"
                        .into()
                ),
                (
                    at("ntpServers[2]"),
                    "NTP servers must be a list of valid IPv4 addresses.".into()
                ),
                (
                    at("ntpServers[3]"),
                    "NTP servers must be a list of valid IPv4 addresses.".into()
                ),
            ]
        );
    }
}

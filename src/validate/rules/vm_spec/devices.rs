//! The part of `KV034` that judges GPUs, host devices and networks and the resource claims they
//! use through dynamic resource allocation (DRA): each device names a device or a claim
//! request, the claims it uses are listed in `resourceClaims`, and each of those is named well.
//!
//! Mirrors `pkg/dra/admitter/dra_admitter.go` and `pkg/network/admitter/dra.go` of KubeVirt
//! d923fdb815. KubeVirt's messages name
//! the lists as `vmi.spec.domain.devices.gpus` and `vmi.spec.resourceClaims` whatever the
//! object; the findings keep its words.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::settings;
use crate::kubevirt::profile::{ClusterProfile, GateState};
use crate::model::names;
use crate::model::path;

type Found = Vec<(String, String)>;

/// The DRA checks on the spec at `at`.
pub(super) fn check(spec: &Value, at: &str, profile: &ClusterProfile, found: &mut Found) {
    super::grace::check(spec, at, profile, found);
    // Most specs have none of these: nothing to judge.
    let present = |p: &[&str]| path::get(spec, p).is_some_and(|v| !v.is_null());
    if !present(&["resourceClaims"])
        && !present(&["domain", "devices", "gpus"])
        && !present(&["domain", "devices", "hostDevices"])
        && !path::get(spec, &["networks"])
            .and_then(Value::as_array)
            .is_some_and(|n| n.iter().any(|n| n.get("resourceClaim").is_some()))
    {
        return;
    }
    let claims = path::get(spec, &["resourceClaims"]).and_then(Value::as_array);
    let claims = claims.map(Vec::as_slice).unwrap_or_default();
    resource_claims(claims, &format!("{at}.resourceClaims"), found);

    let devices = |key: &str| {
        path::get(spec, &["domain", "devices", key])
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    };
    let gpus = Kind {
        list: "gpus",
        name: "GPU",
        gate: "GPUsWithDRA",
        reject_mixed: true,
    };
    let host_devices = Kind {
        list: "hostDevices",
        name: "HostDevice",
        gate: "HostDevicesWithDRA",
        reject_mixed: false,
    };
    let (gpu_claims, gpu_pairs) = dra_devices(devices("gpus"), &gpus, at, profile, found);
    let (host_claims, host_pairs) =
        dra_devices(devices("hostDevices"), &host_devices, at, profile, found);

    // A claim request used twice across GPUs, host devices and (with their gate) networks.
    let mut owners: BTreeMap<String, (&str, usize)> = BTreeMap::new();
    // Without a configuration the alpha gate is unknown: what it guards is judged.
    let network_pairs = if settings::off(profile, "NetworkDevicesWithDRA", GateState::Alpha) {
        BTreeMap::new()
    } else {
        network_claim_pairs(spec)
    };
    dra_networks(spec, at, profile, found);
    for (source, pairs, list_at) in [
        ("GPUs", gpu_pairs, format!("{at}.domain.devices.gpus")),
        (
            "HostDevices",
            host_pairs,
            format!("{at}.domain.devices.hostDevices"),
        ),
        ("Networks", network_pairs, format!("{at}.networks")),
    ] {
        for (pair, index) in pairs {
            if let Some((first, first_index)) = owners.get(&pair) {
                found.push((
                    format!("{list_at}[{index}]"),
                    format!(
                        "duplicate claimName/requestName pair \"{pair}\" between \
                         {first}[{first_index}] and {source}[{index}]"
                    ),
                ));
            } else {
                owners.insert(pair, (source, index));
            }
        }
    }

    let listed: BTreeSet<&str> = claims
        .iter()
        .map(|c| path::str_at(c, &["name"]).unwrap_or(""))
        .collect();
    if gpu_claims
        .iter()
        .chain(&host_claims)
        .any(|c| !listed.contains(c.as_str()))
    {
        found.push((
            format!("{at}.resourceClaims"),
            "vmi.spec.resourceClaims must specify all claims used in vmi.spec.domain.devices.gpus \
             and vmi.spec.domain.devices.hostDevices"
                .into(),
        ));
    }
}

/// GPUs or host devices.
struct Kind {
    /// The list's key under `domain.devices`.
    list: &'static str,
    /// What KubeVirt calls one.
    name: &'static str,
    /// The feature gate (beta) DRA devices of this kind need.
    gate: &'static str,
    /// Whether a list may not mix DRA devices with others.
    reject_mixed: bool,
}

/// A device's claim request (`claimName`, `requestName`, inlined in the device), when it has
/// one. Go allocates it as soon as either key is there, but both are strings it leaves out when
/// empty, and KubeVirt's mutating webhooks write the spec back before it is validated: a
/// request with neither a claim nor a request name is gone by then. A spec judged `as_written`
/// (a pool's template) has one with any of the two keys given a string.
fn claim_request(device: &Value, as_written: bool) -> Option<(&str, &str)> {
    let has = |key: &str| path::str_at(device, &[key]).is_some_and(|s| as_written || !s.is_empty());
    (has("claimName") || has("requestName")).then(|| {
        (
            path::str_at(device, &["claimName"]).unwrap_or(""),
            path::str_at(device, &["requestName"]).unwrap_or(""),
        )
    })
}

/// A device list's checks; the claims its DRA devices use and the first index of each claim
/// request, both empty when they are not looked at.
fn dra_devices(
    devices: &[Value],
    kind: &Kind,
    at: &str,
    profile: &ClusterProfile,
    found: &mut Found,
) -> (BTreeSet<String>, BTreeMap<String, usize>) {
    let list_at = format!("{at}.domain.devices.{}", kind.list);
    let (list, name) = (kind.list, kind.name);
    let mut dra = Vec::new();
    let mut plain = Vec::new();
    for (i, device) in devices.iter().enumerate().filter(|(_, d)| d.is_object()) {
        let device_name = path::str_at(device, &["deviceName"]).unwrap_or("");
        match claim_request(device, profile.as_written) {
            Some(request) if device_name.is_empty() => dra.push((i, request)),
            request => plain.push((device_name, request.is_some())),
        }
    }
    let nothing = (BTreeSet::new(), BTreeMap::new());
    if kind.reject_mixed && !dra.is_empty() && !plain.is_empty() {
        found.push((
            list_at,
            format!(
                "vmi.spec.domain.devices.{list} contains both DRA and non-DRA {name}s; each \
                 {name} must be either DRA or non-DRA"
            ),
        ));
        return nothing;
    }
    for (device_name, has_request) in plain {
        if device_name.is_empty() {
            found.push((
                list_at.clone(),
                format!(
                    "vmi.spec.domain.devices.{list} contains {name}s without deviceName or \
                     claimRequest; each {name} must specify either a deviceName or a claimRequest"
                ),
            ));
        } else if has_request {
            found.push((
                list_at.clone(),
                format!(
                    "vmi.spec.domain.devices.{list} contains {name}s with both deviceName and \
                     claimRequest"
                ),
            ));
        }
    }
    if !dra.is_empty() && settings::off(profile, kind.gate, GateState::Beta) {
        found.push((
            list_at,
            format!(
                "vmi.spec.domain.devices.{list} contains DRA enabled {name}s but feature gate is \
                 not enabled"
            ),
        ));
        return nothing;
    }
    let (mut claims, mut pairs) = nothing;
    for (i, (claim, request)) in dra {
        if claim.is_empty() {
            found.push((
                format!("{list_at}[{i}].claimName"),
                format!("claimName is required for DRA {name}"),
            ));
        }
        if request.is_empty() {
            found.push((
                format!("{list_at}[{i}].requestName"),
                format!("requestName is required for DRA {name}"),
            ));
        }
        if claim.is_empty() || request.is_empty() {
            continue;
        }
        claims.insert(claim.to_string());
        let pair = format!("{claim}/{request}");
        match pairs.entry(pair) {
            std::collections::btree_map::Entry::Occupied(pair) => found.push((
                format!("{list_at}[{i}]"),
                format!("duplicate claimName/requestName pair \"{}\"", pair.key()),
            )),
            std::collections::btree_map::Entry::Vacant(slot) => {
                slot.insert(i);
            }
        }
    }
    (claims, pairs)
}

/// Networks from a resource claim (`validateNetworkDevicesWithDRA` of the network admitter):
/// behind the alpha gate `NetworkDevicesWithDRA`, not beside Multus networks, each on an SR-IOV
/// or binding plugin interface, with a claim and a request, the claim listed in
/// `resourceClaims`, and no claim request used twice.
fn dra_networks(spec: &Value, at: &str, profile: &ClusterProfile, found: &mut Found) {
    let networks = path::get(spec, &["networks"]).and_then(Value::as_array);
    let networks = networks.map(Vec::as_slice).unwrap_or_default();
    let is_dra = |n: &Value| n.get("resourceClaim").is_some_and(Value::is_object);
    if !networks.iter().any(is_dra) {
        return;
    }
    let networks_at = format!("{at}.networks");
    if settings::off(profile, "NetworkDevicesWithDRA", GateState::Alpha) {
        found.push((
            networks_at,
            "vmi.spec.networks contains DRA networks but NetworkDevicesWithDRA feature gate is \
             not enabled"
                .into(),
        ));
        return;
    }
    if networks
        .iter()
        .any(|n| n.get("multus").is_some_and(|m| !m.is_null()))
    {
        found.push((
            networks_at,
            "mixing Multus and DRA resourceClaim networks in the same VMI is not supported".into(),
        ));
        return;
    }
    let interfaces =
        path::get(spec, &["domain", "devices", "interfaces"]).and_then(Value::as_array);
    let claims = path::get(spec, &["resourceClaims"]).and_then(Value::as_array);
    let first = network_claim_pairs(spec);
    for (i, network) in networks.iter().enumerate() {
        let Some(claim @ Value::Object(_)) = network.get("resourceClaim") else {
            continue;
        };
        let name = path::str_at(network, &["name"]).unwrap_or("");
        let iface = interfaces
            .into_iter()
            .flatten()
            .find(|f| path::str_at(f, &["name"]).unwrap_or("") == name);
        let set = |f: &Value, key: &str| f.get(key).is_some_and(|v| !v.is_null());
        if let Some(iface) = iface
            && !set(iface, "sriov")
            && !set(iface, "binding")
        {
            found.push((
                format!("{at}.domain.devices.interfaces"),
                format!("DRA network \"{name}\" requires an SR-IOV or binding plugin interface"),
            ));
        }
        let claim_at = format!("{networks_at}[{i}].resourceClaim");
        let claim_name = path::str_at(claim, &["claimName"]).unwrap_or("");
        let request = path::str_at(claim, &["requestName"]).unwrap_or("");
        if claim_name.is_empty() {
            found.push((
                format!("{claim_at}.claimName"),
                "claimName is required for DRA network".into(),
            ));
        }
        if request.is_empty() {
            found.push((
                format!("{claim_at}.requestName"),
                "requestName is required for DRA network".into(),
            ));
        }
        if claim_name.is_empty() || request.is_empty() {
            continue;
        }
        let listed = claims
            .into_iter()
            .flatten()
            .any(|c| path::str_at(c, &["name"]).unwrap_or("") == claim_name);
        if !listed {
            found.push((
                format!("{claim_at}.claimName"),
                format!(
                    "network references resourceClaim \"{claim_name}\" which is not defined in \
                     spec.resourceClaims"
                ),
            ));
        }
        let pair = format!("{claim_name}/{request}");
        if first.get(&pair).is_some_and(|&j| j != i) {
            found.push((
                format!("{networks_at}[{i}]"),
                format!("duplicate claimName/requestName combination \"{pair}\""),
            ));
        }
    }
}

/// The claim requests of DRA networks, with the first index of each.
fn network_claim_pairs(spec: &Value) -> BTreeMap<String, usize> {
    let mut pairs = BTreeMap::new();
    let networks = path::get(spec, &["networks"]).and_then(Value::as_array);
    for (i, network) in networks.into_iter().flatten().enumerate() {
        let Some(claim @ Value::Object(_)) = network.get("resourceClaim") else {
            continue;
        };
        let claim_name = path::str_at(claim, &["claimName"]).unwrap_or("");
        let request = path::str_at(claim, &["requestName"]).unwrap_or("");
        if !claim_name.is_empty() && !request.is_empty() {
            pairs.entry(format!("{claim_name}/{request}")).or_insert(i);
        }
    }
    pairs
}

/// `resourceClaims`: each named (a DNS label, once) and with exactly one of a claim's or a
/// claim template's name, a DNS subdomain.
fn resource_claims(claims: &[Value], at: &str, found: &mut Found) {
    let mut seen = BTreeSet::new();
    for (i, claim) in claims.iter().enumerate().filter(|(_, c)| c.is_object()) {
        let claim_at = format!("{at}[{i}]");
        let name_at = format!("{claim_at}.name");
        let name = path::str_at(claim, &["name"]).unwrap_or("");
        if name.is_empty() {
            found.push((name_at.clone(), format!("{name_at} is a required field")));
        } else if !seen.insert(name) {
            found.push((name_at, format!("duplicate resourceClaims name \"{name}\"")));
        } else {
            let errors = names::dns_label_errors(name);
            if !errors.is_empty() {
                found.push((
                    name_at.clone(),
                    format!(
                        "{name_at} does not conform to the kubernetes DNS_LABEL rules: {}",
                        errors.join(", ")
                    ),
                ));
            }
        }
        let given = |key: &str| claim.get(key).filter(|v| !v.is_null());
        let (claim_name, template) = (
            given("resourceClaimName"),
            given("resourceClaimTemplateName"),
        );
        match (claim_name, template) {
            (Some(_), Some(_)) => found.push((
                claim_at.clone(),
                "at most one of resourceClaimName or resourceClaimTemplateName may be specified"
                    .into(),
            )),
            (None, None) => found.push((
                claim_at.clone(),
                "must specify one of: resourceClaimName, resourceClaimTemplateName".into(),
            )),
            _ => {}
        }
        for (key, value) in [
            ("resourceClaimName", claim_name),
            ("resourceClaimTemplateName", template),
        ] {
            let Some(value) = value.and_then(Value::as_str) else {
                continue;
            };
            for error in names::dns_subdomain_errors(value) {
                found.push((format!("{claim_at}.{key}"), error.to_string()));
            }
        }
    }
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
    fn resource_claims_are_named_once_with_one_source() {
        let spec = json!({"resourceClaims": [
            {"name": "gpu", "resourceClaimName": "claim-a"},
            {"name": "gpu", "resourceClaimTemplateName": "Template_A"},
            {"name": "", "resourceClaimName": "a", "resourceClaimTemplateName": "b"},
            {"name": "Big"},
        ]});
        let at = "spec.resourceClaims";
        assert_eq!(
            run(spec, &ClusterProfile::default()),
            [
                (
                    format!("{at}[1].name"),
                    "duplicate resourceClaims name \"gpu\"".to_string()
                ),
                (
                    format!("{at}[1].resourceClaimTemplateName"),
                    names::DNS_SUBDOMAIN_MSG.to_string()
                ),
                (
                    format!("{at}[2].name"),
                    format!("{at}[2].name is a required field")
                ),
                (
                    format!("{at}[2]"),
                    "at most one of resourceClaimName or resourceClaimTemplateName may be \
                     specified"
                        .to_string()
                ),
                (
                    format!("{at}[3].name"),
                    format!(
                        "{at}[3].name does not conform to the kubernetes DNS_LABEL rules: {}",
                        names::DNS_LABEL_MSG
                    )
                ),
                (
                    format!("{at}[3]"),
                    "must specify one of: resourceClaimName, resourceClaimTemplateName".to_string()
                ),
            ]
        );
    }

    #[test]
    fn gpus_and_host_devices_name_a_device_or_a_claim_request() {
        let spec = json!({
            "resourceClaims": [{"name": "c1", "resourceClaimName": "c1"}],
            "domain": {"devices": {
                "gpus": [
                    {"name": "g0", "claimName": "c1", "requestName": "r1"},
                    {"name": "g1", "claimName": "c1", "requestName": "r1"},
                    {"name": "g2", "claimName": "c2"},
                    {"name": "g3", "claimName": "c3", "requestName": "r3"},
                ],
                "hostDevices": [
                    {"name": "h0", "deviceName": "vendor.com/nic"},
                    {"name": "h1", "claimName": "c1", "requestName": "r1"},
                    {"name": "h2"},
                    {"name": "h3", "deviceName": "x", "claimName": "c1"},
                ],
            }},
        });
        let gpus = "spec.domain.devices.gpus";
        let hosts = "spec.domain.devices.hostDevices";
        assert_eq!(
            run(spec, &ClusterProfile::default()),
            [
                (
                    format!("{gpus}[1]"),
                    "duplicate claimName/requestName pair \"c1/r1\"".to_string()
                ),
                (
                    format!("{gpus}[2].requestName"),
                    "requestName is required for DRA GPU".to_string()
                ),
                (
                    hosts.to_string(),
                    "vmi.spec.domain.devices.hostDevices contains HostDevices without deviceName \
                     or claimRequest; each HostDevice must specify either a deviceName or a \
                     claimRequest"
                        .to_string()
                ),
                (
                    hosts.to_string(),
                    "vmi.spec.domain.devices.hostDevices contains HostDevices with both \
                     deviceName and claimRequest"
                        .to_string()
                ),
                (
                    format!("{hosts}[1]"),
                    "duplicate claimName/requestName pair \"c1/r1\" between GPUs[0] and \
                     HostDevices[1]"
                        .to_string()
                ),
                (
                    "spec.resourceClaims".to_string(),
                    "vmi.spec.resourceClaims must specify all claims used in \
                     vmi.spec.domain.devices.gpus and vmi.spec.domain.devices.hostDevices"
                        .to_string()
                ),
            ]
        );
    }

    #[test]
    fn mixed_gpus_and_the_gates() {
        let mixed = json!({"domain": {"devices": {"gpus": [
            {"name": "a", "deviceName": "nvidia.com/A100"},
            {"name": "b", "claimName": "c", "requestName": "r"},
        ]}}});
        assert_eq!(
            run(mixed, &ClusterProfile::default())[0].1,
            "vmi.spec.domain.devices.gpus contains both DRA and non-DRA GPUs; each GPU must be \
             either DRA or non-DRA"
        );
        // Empty names are no claim request once the mutating webhook has written them back.
        for empty in [
            json!({"claimName": ""}),
            json!({"claimName": null, "requestName": ""}),
        ] {
            let mut gpu = json!({"name": "d"});
            gpu.as_object_mut()
                .unwrap()
                .extend(empty.as_object().unwrap().clone());
            let spec = json!({"resourceClaims": [{"name": "c", "resourceClaimName": "c"}],
                              "domain": {"devices": {"gpus": [
                                  {"name": "b", "claimName": "c", "requestName": "r"}, gpu]}}});
            let found = run(spec, &ClusterProfile::default());
            assert_eq!(found.len(), 1, "{found:?}");
            assert!(
                found[0].1.contains("contains both DRA and non-DRA GPUs"),
                "{found:?}"
            );
        }
        let dra = json!({"resourceClaims": [{"name": "c", "resourceClaimName": "c"}],
                         "domain": {"devices": {"gpus": [{"name": "b", "claimName": "c", "requestName": "r"}]}}});
        assert_eq!(run(dra.clone(), &ClusterProfile::default()), []);
        let config = json!({"developerConfiguration": {"disabledFeatureGates": ["GPUsWithDRA"]}});
        let off = ClusterProfile::from_kubevirt(&config).expect("a configuration");
        assert_eq!(
            run(dra, &off),
            [(
                "spec.domain.devices.gpus".to_string(),
                "vmi.spec.domain.devices.gpus contains DRA enabled GPUs but feature gate is not \
                 enabled"
                    .to_string()
            )]
        );
    }

    #[test]
    fn dra_networks_need_their_gate_an_interface_and_a_listed_claim() {
        let spec = json!({
            "resourceClaims": [{"name": "nic", "resourceClaimName": "nic"}],
            "domain": {"devices": {"interfaces": [
                {"name": "a", "sriov": {}}, {"name": "b", "masquerade": {}}, {"name": "c", "sriov": {}}]}},
            "networks": [
                {"name": "a", "resourceClaim": {"claimName": "nic", "requestName": "r"}},
                {"name": "b", "resourceClaim": {"claimName": "gone", "requestName": "r"}},
                {"name": "c", "resourceClaim": {"claimName": "nic", "requestName": "r"}},
                {"name": "d", "resourceClaim": {"claimName": "nic"}},
            ],
        });
        let found = run(spec.clone(), &ClusterProfile::default());
        let messages: Vec<&str> = found.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(
            messages,
            [
                "DRA network \"b\" requires an SR-IOV or binding plugin interface",
                "network references resourceClaim \"gone\" which is not defined in \
                 spec.resourceClaims",
                "duplicate claimName/requestName combination \"nic/r\"",
                "requestName is required for DRA network",
            ]
        );
        let off = ClusterProfile::from_kubevirt(&json!({})).expect("a configuration");
        assert_eq!(
            run(spec, &off),
            [(
                "spec.networks".to_string(),
                "vmi.spec.networks contains DRA networks but NetworkDevicesWithDRA feature gate \
                 is not enabled"
                    .to_string()
            )]
        );
        let multus = json!({"networks": [
            {"name": "a", "resourceClaim": {"claimName": "nic", "requestName": "r"}},
            {"name": "m", "multus": {"networkName": "x"}}]});
        assert_eq!(
            run(multus, &ClusterProfile::default())[0].1,
            "mixing Multus and DRA resourceClaim networks in the same VMI is not supported"
        );
    }
}

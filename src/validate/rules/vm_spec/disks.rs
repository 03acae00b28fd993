//! The part of `KV034` that judges each disk's own settings beyond its name, target and bus: a
//! name that can name a container, its PCI address, serial number, cache and I/O modes, error
//! policy and custom block sizes.
//!
//! Mirrors `pkg/storage/admitters/disks.go` of KubeVirt d923fdb815. KubeVirt names a disk's PCI
//! address and its name in that message below `...disks.domain.devices.disks.disk[i]`, and its
//! I/O mode and name below `...disks.domain.devices.disks[i]`; the findings name the disk's
//! own fields.

use serde_json::Value;

use super::settings::Item;
use crate::model::names;
use crate::model::path;

type Found = Vec<(String, String)>;

/// The longest serial number, in characters.
const MAX_SERIAL: usize = 256;
/// The smallest and largest custom block sizes.
const MIN_BLOCK: u64 = 512;
const MAX_BLOCK: u64 = 2_097_152;

/// The checks on the disks of the spec at `at` (its mappings, with their index). `exact` says
/// the spec is what KubeVirt validates; otherwise a preference may still give a disk without a
/// bus one, and the PCI address of such a disk is not judged by its bus.
pub(super) fn check(at: &str, disks: &[(usize, &Value)], exact: bool, found: &mut Found) {
    for (i, disk) in disks {
        let Some(fields) = disk.as_object() else {
            continue;
        };
        // Written out only for a finding.
        let disk_at = Item {
            at,
            list: "domain.devices.disks",
            index: *i,
        };
        // One pass over the disk's few fields (most have none of these).
        let (mut name, mut target, mut serial, mut cache, mut io, mut policy, mut block) =
            ("", None, None, None, None, None, None);
        for (key, value) in fields {
            match key.as_str() {
                "name" => name = value.as_str().unwrap_or(""),
                "disk" => target = Some(value),
                "serial" => serial = value.as_str(),
                "cache" => cache = value.as_str(),
                "io" => io = value.as_str(),
                "errorPolicy" => policy = value.as_str(),
                "blockSize" => block = Some(value),
                _ => {}
            }
        }
        if let Some(target) = target {
            pci_address(target, disk_at, exact, found);
        }
        if let Some(serial) = serial.filter(|s| !s.is_empty()) {
            let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '+' | '-');
            if !serial.chars().all(allowed) {
                found.push((
                    format!("{disk_at}.serial"),
                    format!(
                        "{disk_at} must be made up of the following characters \
                         [A-Za-z0-9_.+-], if specified"
                    ),
                ));
            }
            if serial.chars().count() > MAX_SERIAL {
                found.push((
                    format!("{disk_at}.serial"),
                    format!(
                        "{disk_at} must be less than or equal to {MAX_SERIAL} in length, if \
                         specified"
                    ),
                ));
            }
        }
        if let Some(cache) = cache
            && !["", "none", "writethrough", "writeback"].contains(&cache)
        {
            let field = format!("{disk_at}.cache");
            let message = format!("{field} has invalid value {cache}");
            found.push((field, message));
        }
        if let Some(io) = io
            && !["", "native", "threads"].contains(&io)
        {
            found.push((
                format!("{disk_at}.io"),
                format!(
                    "Disk IO mode for {at}.domain.devices.disks is not supported. Supported modes \
                     are: native, threads."
                ),
            ));
        }
        if let Some(policy) = policy
            && !["stop", "ignore", "report", "enospace"].contains(&policy)
        {
            let field = format!("{disk_at}.errorPolicy");
            let message = format!("{field} has invalid value \"{policy}\"");
            found.push((field, message));
        }
        // A disk's name becomes a container's name.
        if !names::is_dns_label(name.as_bytes()) {
            for error in names::dns_label_errors(name) {
                found.push((format!("{disk_at}.name"), error.to_string()));
            }
        }
        if let Some(block) = block {
            block_size(disk, block, disk_at, found);
        }
    }
}

/// A hard disk's PCI address: on the virtio bus, and `dddd:bb:ss.f`.
fn pci_address(target: &Value, disk_at: Item<'_>, exact: bool, found: &mut Found) {
    if !target.is_object() {
        return;
    }
    let Some(pci) = path::str_at(target, &["pciAddress"]).filter(|p| !p.is_empty()) else {
        return;
    };
    let field = format!("{disk_at}.disk.pciAddress");
    let bus = path::str_at(target, &["bus"]).filter(|b| !b.is_empty());
    if bus.is_some_and(|b| b != "virtio") || (bus.is_none() && exact) {
        found.push((
            field.clone(),
            format!(
                "disk {disk_at}.name - setting a PCI address is only possible with bus type \
                 virtio."
            ),
        ));
    }
    if !super::interfaces::is_pci_address(pci) {
        found.push((
            field,
            format!("disk {disk_at}.name has malformed PCI address ({pci})."),
        ));
    }
}

/// A `uint` field: absent or `null` is 0; another type (or a negative number) is the API
/// server's to refuse, and `None`.
fn uint(v: &Value, key: &str) -> Option<u64> {
    match v.get(key) {
        None | Some(Value::Null) => Some(0),
        Some(n) => n.as_u64(),
    }
}

/// Custom block sizes: not with volume matching, logical at most physical (and 512 on SATA),
/// discard granularity a multiple of logical, each a power of two from 512 bytes to 2 MiB.
fn block_size(disk: &Value, block: &Value, disk_at: Item<'_>, found: &mut Found) {
    let Some(custom @ Value::Object(_)) = path::get(block, &["custom"]) else {
        return;
    };
    let matching = path::get(block, &["matchVolume"]);
    if let Some(matching @ Value::Object(_)) = matching
        && matches!(
            matching.get("enabled"),
            None | Some(Value::Null | Value::Bool(true))
        )
    {
        found.push((
            format!("{disk_at}.blockSize"),
            "Block size matching can't be enabled together with a custom value".into(),
        ));
        return;
    }
    let (Some(logical), Some(physical)) = (uint(custom, "logical"), uint(custom, "physical"))
    else {
        return;
    };
    let custom_at = format!("{disk_at}.blockSize.custom");
    // KubeVirt reads the bus of the first target the disk has.
    let bus = ["disk", "lun", "cdrom"]
        .into_iter()
        .find_map(|t| disk.get(t).filter(|v| v.is_object()))
        .and_then(|t| path::str_at(t, &["bus"]))
        .unwrap_or("");
    let granularity = match custom.get("discardGranularity") {
        None | Some(Value::Null) => None,
        Some(g) => match g.as_u64() {
            Some(g) => Some(g),
            None => return,
        },
    };
    if logical > physical {
        found.push((
            format!("{custom_at}.logical"),
            format!(
                "Logical size {logical} must be the same or less than the physical size of \
                 {physical}"
            ),
        ));
    } else if bus == "sata" && logical != MIN_BLOCK {
        found.push((
            format!("{custom_at}.logical"),
            format!("Logical size {logical} must be {MIN_BLOCK} for SATA devices"),
        ));
    } else if let Some(g) = granularity
        && logical != 0
        && g % logical != 0
    {
        found.push((
            format!("{custom_at}.discardGranularity"),
            format!("Discard granularity {g} must be multiples of logical size {logical}"),
        ));
    } else {
        for (kind, size) in [("logical", logical), ("physical", physical)] {
            let problem = if size < MIN_BLOCK {
                format!("is less than the supported minimum size of {MIN_BLOCK}")
            } else if size > MAX_BLOCK {
                format!("is greater than the supported maximum size of {MAX_BLOCK}")
            } else if !size.is_power_of_two() {
                "is not a power of 2".to_string()
            } else {
                continue;
            };
            found.push((
                format!("{custom_at}.{kind}"),
                format!("Provided size of {size} {problem}"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(disks: Value) -> Vec<(String, String)> {
        let disks: Vec<Value> = serde_json::from_value(disks).expect("a list");
        let items: Vec<(usize, &Value)> = disks.iter().enumerate().collect();
        let mut found = Vec::new();
        check("spec", &items, true, &mut found);
        found
    }

    #[test]
    fn disk_settings_in_kubevirts_words() {
        let found = run(json!([
            {"name": "rootDisk", "disk": {"bus": "sata", "pciAddress": "0000:81:00.9"},
             "serial": "a b", "cache": "unsafe", "io": "aio", "errorPolicy": "halt"},
        ]));
        let at = "spec.domain.devices.disks[0]";
        assert_eq!(
            found,
            [
                (
                    format!("{at}.disk.pciAddress"),
                    format!(
                        "disk {at}.name - setting a PCI address is only possible with bus type \
                         virtio."
                    )
                ),
                (
                    format!("{at}.disk.pciAddress"),
                    format!("disk {at}.name has malformed PCI address (0000:81:00.9).")
                ),
                (
                    format!("{at}.serial"),
                    format!(
                        "{at} must be made up of the following characters [A-Za-z0-9_.+-], if \
                         specified"
                    )
                ),
                (
                    format!("{at}.cache"),
                    format!("{at}.cache has invalid value unsafe")
                ),
                (
                    format!("{at}.io"),
                    "Disk IO mode for spec.domain.devices.disks is not supported. Supported \
                     modes are: native, threads."
                        .to_string()
                ),
                (
                    format!("{at}.errorPolicy"),
                    format!("{at}.errorPolicy has invalid value \"halt\"")
                ),
                (format!("{at}.name"), names::DNS_LABEL_MSG.to_string()),
            ]
        );
        let fine = json!([{"name": "root-disk", "disk": {"bus": "virtio", "pciAddress": "0000:81:00.1"},
                           "serial": "SN-1.2_3+4", "cache": "none", "io": "native", "errorPolicy": "report"}]);
        assert_eq!(run(fine), []);
        let long = json!([{"name": "a.b", "serial": "x".repeat(257)}]);
        let messages: Vec<String> = run(long).into_iter().map(|(_, m)| m).collect();
        assert_eq!(
            messages,
            [
                "spec.domain.devices.disks[0] must be less than or equal to 256 in length, if \
                 specified",
                "must not contain dots"
            ]
        );
    }

    #[test]
    fn custom_block_sizes() {
        let disk = |custom: Value, bus: &str| json!([{"name": "d", "disk": {"bus": bus}, "blockSize": {"custom": custom}}]);
        let messages =
            |disks: Value| -> Vec<String> { run(disks).into_iter().map(|(_, m)| m).collect() };
        assert_eq!(
            messages(disk(json!({"logical": 4096, "physical": 512}), "virtio")),
            ["Logical size 4096 must be the same or less than the physical size of 512"]
        );
        assert_eq!(
            messages(disk(json!({"logical": 4096, "physical": 4096}), "sata")),
            ["Logical size 4096 must be 512 for SATA devices"]
        );
        assert_eq!(
            messages(disk(
                json!({"logical": 4096, "physical": 4096, "discardGranularity": 1000}),
                "virtio"
            )),
            ["Discard granularity 1000 must be multiples of logical size 4096"]
        );
        assert_eq!(
            messages(disk(json!({"logical": 256, "physical": 3000000}), "virtio")),
            [
                "Provided size of 256 is less than the supported minimum size of 512",
                "Provided size of 3000000 is greater than the supported maximum size of 2097152"
            ]
        );
        assert_eq!(
            messages(disk(json!({"logical": 1000, "physical": 4096}), "scsi")),
            ["Provided size of 1000 is not a power of 2"]
        );
        assert_eq!(
            messages(disk(json!({"logical": 512, "physical": 4096}), "virtio")),
            Vec::<String>::new()
        );
        let both = json!([{"name": "d", "blockSize": {"custom": {"logical": 512, "physical": 512},
                                                      "matchVolume": {}}}]);
        assert_eq!(
            messages(both),
            ["Block size matching can't be enabled together with a custom value"]
        );
        let off = json!([{"name": "d", "blockSize": {"custom": {"logical": 512, "physical": 512},
                                                     "matchVolume": {"enabled": false}}}]);
        assert_eq!(messages(off), Vec::<String>::new());
    }
}

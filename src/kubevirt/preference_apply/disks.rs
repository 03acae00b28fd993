//! Disk preferences (mirrors `preference/apply/disk.go`). Every disk without a target (`disk`,
//! `cdrom` or `lun`) becomes a `disk: {}` so that preferences can reach it. A `disk` target gets
//! the preferred bus, block size, cache and io where unset, and the preferred dedicated IO
//! thread when unset and its bus (after the bus preference) is `virtio`. `cdrom` and `lun`
//! targets only get their preferred bus where the VM left it empty.

use serde_json::{Map, Value};

use super::{copy_go, fill_key, nonempty_str, present, ptr_unset};
use crate::model::path;
use crate::model::path::Fields;

/// Apply disk preferences to every disk; `prefs` is the preference's `devices` block.
pub(super) fn apply(prefs: &Value, spec: &mut Value) {
    let Some(disks) =
        path::get_mut(spec, &["domain", "devices", "disks"]).and_then(Value::as_array_mut)
    else {
        return;
    };
    // Looked up once for all disks.
    let prefs = DiskPrefs {
        bus: nonempty_str(prefs, &["preferredDiskBus"]),
        block_size: present(prefs, &["preferredDiskBlockSize"]),
        cache: nonempty_str(prefs, &["preferredDiskCache"]),
        io: nonempty_str(prefs, &["preferredDiskIO"]),
        dedicated_io_thread: present(prefs, &["preferredDiskDedicatedIoThread"]),
        cdrom_bus: nonempty_str(prefs, &["preferredCdromBus"]),
        lun_bus: nonempty_str(prefs, &["preferredLunBus"]),
    };
    for disk in disks.iter_mut().filter_map(Value::as_object_mut) {
        apply_one(&prefs, disk);
    }
}

/// The disk preferences of a preference's `devices` block.
struct DiskPrefs<'a> {
    bus: Option<&'a str>,
    block_size: Option<&'a Value>,
    cache: Option<&'a str>,
    io: Option<&'a str>,
    dedicated_io_thread: Option<&'a Value>,
    cdrom_bus: Option<&'a str>,
    lun_bus: Option<&'a str>,
}

fn apply_one(prefs: &DiskPrefs<'_>, disk: &mut Map<String, Value>) {
    let targets = ["disk", "cdrom", "lun"];
    if targets.iter().all(|t| ptr_unset(disk.field(t))) {
        disk.insert("disk".to_string(), Value::Object(Map::new()));
    }
    if !ptr_unset(disk.field("disk")) {
        let Some(target) = disk.field_mut("disk").and_then(Value::as_object_mut) else {
            return;
        };
        fill_key(target, "bus", prefs.bus);
        let virtio = target.field("bus").and_then(Value::as_str) == Some("virtio");
        if let Some(size) = prefs.block_size
            && ptr_unset(disk.field("blockSize"))
        {
            disk.insert(
                "blockSize".to_string(),
                copy_go(size, &["logical", "physical"]),
            );
        }
        fill_key(disk, "cache", prefs.cache);
        fill_key(disk, "io", prefs.io);
        if let Some(dedicated) = prefs.dedicated_io_thread
            && ptr_unset(disk.field("dedicatedIOThread"))
            && virtio
        {
            disk.insert("dedicatedIOThread".to_string(), dedicated.clone());
        }
    } else if !ptr_unset(disk.field("cdrom")) {
        if let Some(target) = disk.field_mut("cdrom").and_then(Value::as_object_mut) {
            fill_key(target, "bus", prefs.cdrom_bus);
        }
    } else if let Some(target) = disk.field_mut("lun").and_then(Value::as_object_mut) {
        fill_key(target, "bus", prefs.lun_bus);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn run(prefs: Value, disks: Value) -> Value {
        let mut s = json!({"domain": {"devices": {"disks": disks}}});
        apply(&prefs, &mut s);
        path::get(&s, &["domain", "devices", "disks"])
            .cloned()
            .expect("disks")
    }

    #[test]
    fn default_disk_gets_target_and_bus() {
        assert_eq!(
            run(
                json!({"preferredDiskBus": "virtio"}),
                json!([{"name": "a"}, {"name": "b", "disk": null}])
            ),
            json!([{"name": "a", "disk": {"bus": "virtio"}}, {"name": "b", "disk": {"bus": "virtio"}}])
        );
    }

    #[test]
    fn no_bus_preference_still_creates_empty_disk_target() {
        assert_eq!(
            run(json!({}), json!([{"name": "a"}])),
            json!([{"name": "a", "disk": {}}])
        );
    }

    #[test]
    fn cdrom_and_lun_keep_user_bus_and_fill_empty() {
        let prefs = json!({"preferredDiskBus": "virtio", "preferredCdromBus": "sata", "preferredLunBus": "scsi"});
        assert_eq!(
            run(
                prefs,
                json!([
                    {"name": "c1", "cdrom": {"bus": "scsi"}},
                    {"name": "c2", "cdrom": {}},
                    {"name": "l1", "lun": {"bus": "sata"}},
                    {"name": "l2", "lun": {"readonly": true}},
                    {"name": "d1", "disk": {"bus": "sata"}}
                ])
            ),
            json!([
                {"name": "c1", "cdrom": {"bus": "scsi"}},
                {"name": "c2", "cdrom": {"bus": "sata"}},
                {"name": "l1", "lun": {"bus": "sata"}},
                {"name": "l2", "lun": {"readonly": true, "bus": "scsi"}},
                {"name": "d1", "disk": {"bus": "sata"}}
            ])
        );
    }

    #[test]
    fn cache_io_block_size_fill_only_unset() {
        let prefs = json!({
            "preferredDiskCache": "none",
            "preferredDiskIO": "native",
            "preferredDiskBlockSize": {"custom": {"logical": 4096, "physical": 4096}}
        });
        assert_eq!(
            run(
                prefs,
                json!([
                    {"name": "a", "disk": {}, "cache": "writethrough", "io": "threads", "blockSize": {"matchVolume": {"enabled": true}}},
                    {"name": "b"},
                    {"name": "c", "cdrom": {}}
                ])
            ),
            json!([
                {"name": "a", "disk": {}, "cache": "writethrough", "io": "threads", "blockSize": {"matchVolume": {"enabled": true}}},
                {"name": "b", "disk": {}, "blockSize": {"custom": {"logical": 4096, "physical": 4096}}, "cache": "none", "io": "native"},
                {"name": "c", "cdrom": {}}
            ])
        );
    }

    #[test]
    fn dedicated_io_thread_needs_virtio_bus() {
        assert_eq!(
            run(
                json!({"preferredDiskDedicatedIoThread": false}),
                json!([{"name": "a"}, {"name": "b", "disk": {"bus": "virtio"}}, {"name": "c", "disk": {"bus": "virtio"}, "dedicatedIOThread": true}])
            ),
            json!([
                {"name": "a", "disk": {}},
                {"name": "b", "disk": {"bus": "virtio"}, "dedicatedIOThread": false},
                {"name": "c", "disk": {"bus": "virtio"}, "dedicatedIOThread": true}
            ])
        );
        assert_eq!(
            run(
                json!({"preferredDiskDedicatedIoThread": true, "preferredDiskBus": "virtio"}),
                json!([{"name": "a"}])
            ),
            json!([{"name": "a", "disk": {"bus": "virtio"}, "dedicatedIOThread": true}])
        );
    }
}

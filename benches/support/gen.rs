//! A deterministic generator of VirtualMachine manifests for benchmarks and load tests.
//!
//! The VMs name instancetypes and preferences of the common catalog (u1, o1, cx1, m1 and n1
//! sizes; fedora, ubuntu, rhel.9, windows.11, ...). Most use an instancetype and a preference;
//! some use only a preference and set their own cpu and memory; a few reference nothing. Some
//! set disk buses, interface models or extra disks themselves. Every VM is one the cluster
//! admits: it has the `domain` the schema requires, and a size that meets its preference's
//! requirements. A small linear congruential generator makes the output a pure function of the
//! count and the seed.

use std::fmt::Write;

/// A size of a family: its name, vCPUs and memory in MiB.
type Size = (&'static str, u32, u32);

/// Instancetype families and their sizes, as in the common catalog.
const SIZES: &[(&str, &[Size])] = &[
    (
        "u1",
        &[
            ("nano", 1, 512),
            ("micro", 1, 1024),
            ("small", 1, 2048),
            ("medium", 1, 4096),
            ("2xmedium", 2, 4096),
            ("large", 2, 8192),
            ("xlarge", 4, 16384),
            ("2xlarge", 8, 32768),
        ],
    ),
    (
        "o1",
        &[
            ("nano", 1, 512),
            ("micro", 1, 1024),
            ("small", 1, 2048),
            ("medium", 1, 4096),
            ("large", 2, 8192),
            ("xlarge", 4, 16384),
            ("2xlarge", 8, 32768),
        ],
    ),
    (
        "cx1",
        &[
            ("medium", 1, 2048),
            ("large", 2, 4096),
            ("xlarge", 4, 8192),
            ("2xlarge", 8, 16384),
            ("medium1gi", 1, 2048),
            ("large1gi", 2, 4096),
        ],
    ),
    (
        "m1",
        &[
            ("large", 2, 16384),
            ("xlarge", 4, 32768),
            ("2xlarge", 8, 65536),
            ("large1gi", 2, 16384),
        ],
    ),
    (
        "n1",
        &[
            ("medium", 4, 4096),
            ("large", 4, 8192),
            ("xlarge", 8, 16384),
            ("2xlarge", 16, 32768),
        ],
    ),
];

/// A preference of the common catalog, the container disk image a VM of that OS boots, and
/// the least vCPUs and memory (MiB) the preference requires: the cluster refuses a VM below.
struct Os {
    name: &'static str,
    image: &'static str,
    min_cpu: u32,
    min_mib: u32,
}

const fn os(name: &'static str, image: &'static str, min_cpu: u32, min_mib: u32) -> Os {
    Os {
        name,
        image,
        min_cpu,
        min_mib,
    }
}

const PREFERENCES: &[Os] = &[
    os("fedora", "quay.io/containerdisks/fedora:41", 1, 2048),
    os("ubuntu", "quay.io/containerdisks/ubuntu:24.04", 1, 2048),
    os("rhel.9", "registry.example.com/rhel9:latest", 1, 1536),
    os("rhel.10", "registry.example.com/rhel10:latest", 1, 1536),
    os(
        "centos.stream9",
        "quay.io/containerdisks/centos-stream:9",
        1,
        1536,
    ),
    os("debian", "quay.io/containerdisks/debian:12", 1, 512),
    os(
        "opensuse.tumbleweed",
        "quay.io/containerdisks/opensuse-tumbleweed:1.0.0",
        1,
        2048,
    ),
    os("alpine", "quay.io/containerdisks/alpine:3.20", 1, 512),
    os("windows.11", "registry.example.com/win11:latest", 2, 4096),
    os(
        "windows.2k22",
        "registry.example.com/win2k22:latest",
        1,
        2048,
    ),
    os("linux", "quay.io/containerdisks/cirros:0.6", 0, 0),
];

const BUSES: &[&str] = &["virtio", "sata", "scsi"];
const MODELS: &[&str] = &["virtio", "e1000e", "rtl8139"];

/// A 64-bit linear congruential generator (Knuth's MMIX constants).
pub struct Lcg(u64);

impl Lcg {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Self {
        Lcg(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    /// The next value below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        // The high bits of an LCG are the random-looking ones.
        ((self.0 >> 33) % n as u64) as usize
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    /// One element of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// `count` VirtualMachines as one YAML stream, the same bytes for the same arguments.
pub fn generate(count: usize, seed: u64) -> String {
    let mut rng = Lcg::new(seed);
    let mut out = String::with_capacity(count * 1200);
    for i in 0..count {
        vm(&mut out, i, &mut rng);
    }
    out
}

fn vm(out: &mut String, i: usize, rng: &mut Lcg) {
    // 70 %: instancetype and preference; 20 %: preference only (the VM sizes itself);
    // 10 %: neither.
    let shape = rng.below(10);
    let with_instancetype = shape < 7;
    let with_preference = shape < 9;
    let os = rng.pick(PREFERENCES);
    // Without a preference nothing is required of the VM's size.
    let (min_cpu, min_mib) = if with_preference {
        (os.min_cpu, os.min_mib)
    } else {
        (0, 0)
    };
    let ns = rng.below(20);
    let _ = write!(
        out,
        "---\napiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata:\n  name: vm-{i:06}\n  namespace: team-{ns:02}\n  labels:\n    app: app-{app}\n    tier: {tier}\nspec:\n  runStrategy: {run}\n",
        app = rng.below(200),
        tier = rng.pick(&["web", "db", "batch", "cache"]),
        run = rng.pick(&["Always", "Halted", "RerunOnFailure"]),
    );
    if with_instancetype {
        let (family, sizes) = *rng.pick(SIZES);
        // Every family has sizes that meet every preference's requirements.
        let fit: Vec<&str> = sizes
            .iter()
            .filter(|&&(_, cpu, mib)| cpu >= min_cpu && mib >= min_mib)
            .map(|&(size, _, _)| size)
            .collect();
        let size = rng.pick(&fit);
        let _ = write!(out, "  instancetype:\n    name: {family}.{size}\n");
    }
    if with_preference {
        let _ = write!(out, "  preference:\n    name: {}\n", os.name);
    }
    let _ = write!(
        out,
        "  template:\n    metadata:\n      labels:\n        kubevirt.io/domain: vm-{i:06}\n    spec:\n"
    );
    let user_bus = rng.chance(30);
    let data_disk = rng.chance(25);
    let user_nic = rng.chance(30);
    let multus = rng.chance(10);
    let user_cpu = !with_instancetype;
    // The API server requires `domain` and its `devices`, if only empty.
    out.push_str("      domain:\n");
    if user_cpu {
        let cores: Vec<u32> = [1, 2, 4].into_iter().filter(|&c| c >= min_cpu).collect();
        let gib: Vec<u32> = [1, 2, 4, 8]
            .into_iter()
            .filter(|&g| g * 1024 >= min_mib)
            .collect();
        let _ = write!(
            out,
            "        cpu:\n          cores: {}\n          sockets: 1\n        memory:\n          guest: {}Gi\n",
            rng.pick(&cores),
            rng.pick(&gib),
        );
    }
    if user_bus || data_disk || user_nic || multus {
        out.push_str("        devices:\n");
        if user_bus || data_disk {
            out.push_str("          disks:\n");
            if user_bus {
                let _ = write!(
                    out,
                    "          - name: rootdisk\n            disk:\n              bus: {}\n",
                    rng.pick(BUSES)
                );
            }
            if data_disk {
                out.push_str("          - name: data\n            disk: {}\n");
            }
        }
        if user_nic || multus {
            out.push_str(
                "          interfaces:\n          - name: default\n            masquerade: {}\n",
            );
            if user_nic {
                let _ = writeln!(out, "            model: {}", rng.pick(MODELS));
            }
            if multus {
                out.push_str("          - name: storage\n            bridge: {}\n");
            }
        }
    } else {
        out.push_str("        devices: {}\n");
    }
    if user_nic || multus {
        out.push_str("      networks:\n      - name: default\n        pod: {}\n");
        if multus {
            out.push_str(
                "      - name: storage\n        multus:\n          networkName: storage-net\n",
            );
        }
    }
    let _ = write!(
        out,
        "      volumes:\n      - name: rootdisk\n        containerDisk:\n          image: {}\n",
        os.image
    );
    if data_disk {
        let _ = write!(
            out,
            "      - name: data\n        persistentVolumeClaim:\n          claimName: vm-{i:06}-data\n"
        );
    }
    let _ = write!(
        out,
        "      - name: cloudinitdisk\n        cloudInitNoCloud:\n          userData: |\n            #cloud-config\n            hostname: vm-{i:06}\n            ssh_authorized_keys:\n            - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{key:016x} ops@example.com\n",
        key = rng.below(usize::MAX >> 1),
    );
}

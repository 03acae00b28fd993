//! `KV042` unmet-requirements.
//!
//! ## What it checks
//! That every preference's `spec.requirements` (`cpu.guest`, `memory.guest`) can be met by at
//! least one instancetype of the same catalog that a VM using the preference can name: one
//! instancetype with at least that many vCPUs and at least that much guest memory. A VM names
//! cluster-scoped instancetypes and those of its own namespace, so a namespaced preference is
//! met only by a cluster-scoped instancetype or one of its namespace; a cluster-scoped
//! preference, by any (a VM of the right namespace can pair them). The catalog is what
//! `kvrender build` rendered, or the inputs of `kvrender validate`, with the cluster-scoped
//! instancetypes of the `--catalog` files and of the embedded catalog (unless it is turned
//! off), which a VM can name as well; a set of objects without any instancetype is not checked
//! (its preferences are meant for instancetypes kept elsewhere).
//!
//! ## Why
//! KubeVirt refuses every VM that pairs the preference with an instancetype too small for it
//! (`KV033`). When no instancetype of the catalog is large enough, the preference can only be
//! used with VMs that set their CPU and memory themselves, which is rarely what a catalog
//! means.
//!
//! ## Example
//! A preference requiring 16 vCPUs in a catalog whose largest instancetype has 8.
//!
//! ## Fix
//! Lower the requirements, or add a size to a family that meets them.

use serde_json::Value;

use crate::diagnostic::{Diagnostic, Severity, codes};
use crate::model::quantity::Quantity;
use crate::model::{Kind, Object, path};
use crate::resolve::Index;
use crate::validate::Rule;

/// The rule.
pub const RULE: Rule = Rule {
    code: codes::UNMET_REQUIREMENTS,
    name: "unmet-requirements",
    summary: "No instancetype of the catalog meets a preference's cpu and memory requirements.",
    severity: Severity::Warning,
};

/// The vCPUs and guest memory of an instancetype spec.
pub struct Size {
    cpu: Option<i64>,
    memory: Option<Quantity>,
    /// The vCPUs or the guest memory are written but cannot be read (`"4 "`, `16GB`): the type
    /// checks report that, and what the instancetype offers is not known.
    unreadable: bool,
}

impl Size {
    /// Smaller first: by vCPUs, then by guest memory (a missing value first).
    pub fn cmp_size(&self, other: &Size) -> std::cmp::Ordering {
        self.cpu
            .cmp(&other.cpu)
            .then_with(|| match (&self.memory, &other.memory) {
                (Some(a), Some(b)) => a.cmp_value(b),
                (a, b) => a.is_some().cmp(&b.is_some()),
            })
    }

    /// Read from an instancetype's `spec`.
    pub fn of(spec: Option<&Value>) -> Size {
        let cpu_field = spec.and_then(|s| path::get(s, &["cpu", "guest"]));
        let memory_field = spec.and_then(|s| path::get(s, &["memory", "guest"]));
        let cpu = cpu_field.and_then(Value::as_i64);
        let memory = memory_field.and_then(Quantity::from_json);
        // Written but not readable, or with no place to be (`cpu: 4` where a mapping belongs).
        let unreadable = |field: Option<&Value>, at: &[&str]| {
            field.is_some_and(|v| !v.is_null()) || spec.is_some_and(|s| path::blocked(s, at))
        };
        Size {
            unreadable: (cpu.is_none() && unreadable(cpu_field, &["cpu", "guest"]))
                || (memory.is_none() && unreadable(memory_field, &["memory", "guest"])),
            cpu,
            memory,
        }
    }
}

/// A preference's `requirements`: at least this many vCPUs, at least this much guest memory.
pub struct Requirements {
    cpu: Option<i64>,
    memory: Option<Quantity>,
}

impl Requirements {
    /// Read from a preference's `spec`; `None` when it requires neither.
    pub fn of(spec: Option<&Value>) -> Option<Requirements> {
        let at = |p: &[&str]| spec.and_then(|s| path::get(s, p));
        let cpu = at(&["requirements", "cpu", "guest"])
            .and_then(Value::as_i64)
            .filter(|c| *c > 0);
        let memory = at(&["requirements", "memory", "guest"])
            .and_then(Quantity::from_json)
            .filter(|m| !m.is_zero());
        (cpu.is_some() || memory.is_some()).then_some(Requirements { cpu, memory })
    }

    /// A text that tells requirements apart, for remembering answers about them.
    pub fn key(&self) -> String {
        let memory = self.memory.as_ref().map(ToString::to_string);
        format!("{:?}/{:?}", self.cpu, memory)
    }

    /// Whether `size` gives at least what is required.
    pub fn met_by(&self, size: &Size) -> bool {
        self.cpu
            .is_none_or(|want| size.cpu.is_some_and(|have| have >= want))
            && self.memory.as_ref().is_none_or(|want| {
                size.memory
                    .as_ref()
                    .is_some_and(|have| have.cmp_value(want).is_ge())
            })
    }
}

/// Warn about every preference among `objects` whose requirements no instancetype among
/// `objects` meets, nor any cluster-scoped one that `elsewhere` answers for (the `--catalog`
/// files and the embedded catalog, which a VM can name as well). Nothing is reported when
/// `objects` holds no instancetype.
pub fn check<'a, I>(objects: I, elsewhere: Option<&Index<'_>>, out: &mut Vec<Diagnostic>)
where
    I: IntoIterator<Item = &'a Object> + Clone,
{
    // Each size with the namespace of its instancetype (`None`: cluster-scoped).
    let sizes: Vec<(Option<&str>, Size)> = objects
        .clone()
        .into_iter()
        .filter(|o| matches!(o.kind(), Kind::Instancetype | Kind::ClusterInstancetype))
        .map(|o| {
            let namespace = (o.kind() == Kind::Instancetype).then(|| o.effective_namespace());
            (namespace, Size::of(o.value.get("spec")))
        })
        .collect();
    if sizes.is_empty() {
        return;
    }
    // Read only for a preference the catalog's own instancetypes do not meet.
    let installed: std::cell::OnceCell<Vec<Size>> = std::cell::OnceCell::new();
    let installed = || {
        installed.get_or_init(|| {
            let Some(index) = elsewhere else {
                return Vec::new();
            };
            let kind = Kind::ClusterInstancetype;
            index
                .names(kind, "")
                .into_iter()
                .filter_map(|name| index.get_str(kind.as_str(), "", name))
                .map(|o| Size::of(o.value.get("spec")))
                .filter(|size| !size.unreadable)
                .collect()
        })
    };
    for pref in objects
        .into_iter()
        .filter(|o| matches!(o.kind(), Kind::Preference | Kind::ClusterPreference))
    {
        let Some(wanted) = Requirements::of(pref.value.get("spec")) else {
            continue;
        };
        let namespace = (pref.kind() == Kind::Preference).then(|| pref.effective_namespace());
        let usable = |of: Option<&str>| namespace.is_none() || of.is_none() || of == namespace;
        // Judged by the instancetypes whose size can be read; when none can (a template that
        // broke every size), nothing is claimed.
        let mut readable = sizes
            .iter()
            .filter(|(of, size)| usable(*of) && !size.unreadable)
            .peekable();
        let met = match readable.peek() {
            None => true,
            Some(_) => readable.any(|(_, size)| wanted.met_by(size)),
        };
        if met || installed().iter().any(|size| wanted.met_by(size)) {
            continue;
        }
        let catalog = match namespace {
            None => "in the catalog".to_string(),
            Some(ns) => format!(
                "in the catalog that a VM in namespace {ns:?} can name (cluster-scoped, or of \
                 that namespace)"
            ),
        };
        let catalog = if !elsewhere.is_some_and(Index::has_fallback) {
            catalog
        } else {
            format!(
                "{catalog}, nor any cluster-scoped one of the `--catalog` files or the embedded \
                 catalog,"
            )
        };
        let Requirements { cpu, memory } = wanted;
        let wanted = match (cpu, &memory) {
            (Some(c), Some(m)) => format!("{c} vCPUs and {m} of memory"),
            (Some(c), None) => format!("{c} vCPUs"),
            (None, Some(m)) => format!("{m} of memory"),
            (None, None) => unreachable!("skipped above"),
        };
        out.push(
            Diagnostic::warning(
                RULE.code,
                pref.field_origin("spec.requirements"),
                format!(
                    "no instancetype {catalog} meets the requirements (at least {wanted}); \
                     every VM pairing this preference with one of them would be refused"
                ),
            )
            .with_object(pref.object_ref())
            .with_field("spec.requirements"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;
    use serde_json::{Value, json};

    fn obj(kind: &str, name: &str, spec: Value) -> Object {
        Object::new(
            json!({"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": kind,
                   "metadata": {"name": name}, "spec": spec}),
            Origin::new("c.yaml", 0, Some(1)),
        )
    }

    fn run(objects: &[Object]) -> Vec<String> {
        let mut out = Vec::new();
        check(objects, None, &mut out);
        out.into_iter()
            .map(|d| format!("{} {}", d.object.unwrap(), d.message))
            .collect()
    }

    #[test]
    fn one_instancetype_must_meet_both_requirements() {
        let objects = [
            obj(
                "VirtualMachineClusterInstancetype",
                "big-cpu",
                json!({"cpu": {"guest": 16}, "memory": {"guest": "2Gi"}}),
            ),
            obj(
                "VirtualMachineInstancetype",
                "big-mem",
                json!({"cpu": {"guest": 1}, "memory": {"guest": "64Gi"}}),
            ),
            obj(
                "VirtualMachineClusterPreference",
                "cpu-only",
                json!({"requirements": {"cpu": {"guest": 16}}}),
            ),
            obj(
                "VirtualMachinePreference",
                "mem-only",
                json!({"requirements": {"memory": {"guest": "65536Mi"}}}),
            ),
            obj(
                "VirtualMachineClusterPreference",
                "both",
                json!({"requirements": {"cpu": {"guest": 8}, "memory": {"guest": "8Gi"}}}),
            ),
            obj(
                "VirtualMachineClusterPreference",
                "too-much",
                json!({"requirements": {"memory": {"guest": "128Gi"}}}),
            ),
        ];
        let out = run(&objects);
        assert_eq!(out.len(), 2, "{out:#?}");
        assert!(out[0].contains("/both") && out[0].contains("8 vCPUs and 8Gi"));
        assert!(out[1].contains("/too-much") && out[1].contains("128Gi of memory"));
    }

    /// Instancetypes whose vCPUs or memory cannot be read (the type checks say so) are left
    /// out; when no other one is there to judge by, nothing is claimed.
    #[test]
    fn an_unreadable_size_claims_nothing() {
        let preference = obj(
            "VirtualMachineClusterPreference",
            "p",
            json!({"requirements": {"cpu": {"guest": 4}, "memory": {"guest": "8Gi"}}}),
        );
        for spec in [
            json!({"cpu": 4, "memory": {"guest": "16Gi"}}),
            json!({"cpu": {"guest": "4 "}, "memory": {"guest": "16Gi"}}),
            json!({"cpu": {"guest": 4}, "memory": {"guest": "16GB"}}),
        ] {
            let objects = [
                obj("VirtualMachineClusterInstancetype", "t", spec.clone()),
                preference.clone(),
            ];
            assert!(run(&objects).is_empty(), "{spec}");
        }
        // Beside one that can be read and does not meet them, the warning stands.
        let objects = [
            obj(
                "VirtualMachineClusterInstancetype",
                "t",
                json!({"cpu": {"guest": "4 "}, "memory": {"guest": "16Gi"}}),
            ),
            obj(
                "VirtualMachineClusterInstancetype",
                "small",
                json!({"cpu": {"guest": 1}, "memory": {"guest": "1Gi"}}),
            ),
            preference.clone(),
        ];
        assert_eq!(run(&objects).len(), 1);
        // Unset is not unreadable: an instancetype without memory meets no memory requirement.
        let objects = [
            obj(
                "VirtualMachineClusterInstancetype",
                "t",
                json!({"cpu": {"guest": 4}, "memory": {"guest": null}}),
            ),
            preference,
        ];
        assert_eq!(run(&objects).len(), 1);
    }

    /// A namespaced preference counts only the instancetypes a VM of its namespace can name.
    #[test]
    fn a_namespaced_preference_is_met_only_by_what_its_namespace_can_name() {
        let in_ns = |kind: &str, name: &str, ns: Option<&str>, spec: Value| {
            let mut o = obj(kind, name, spec);
            if let Some(ns) = ns {
                o.value["metadata"]["namespace"] = json!(ns);
            }
            o
        };
        let big = json!({"cpu": {"guest": 64}, "memory": {"guest": "64Gi"}});
        let small = json!({"cpu": {"guest": 2}, "memory": {"guest": "2Gi"}});
        let wants = json!({"requirements": {"cpu": {"guest": 32}}});
        let objects = [
            in_ns("VirtualMachineInstancetype", "big", Some("team-a"), big),
            in_ns("VirtualMachineClusterInstancetype", "small", None, small),
            in_ns(
                "VirtualMachinePreference",
                "a",
                Some("team-a"),
                wants.clone(),
            ),
            in_ns(
                "VirtualMachinePreference",
                "b",
                Some("team-b"),
                wants.clone(),
            ),
            in_ns("VirtualMachineClusterPreference", "any", None, wants),
        ];
        let out = run(&objects);
        assert_eq!(out.len(), 1, "{out:#?}");
        assert!(
            out[0].contains("team-b/b")
                && out[0].contains("in the catalog that a VM in namespace \"team-b\" can name"),
            "{out:#?}"
        );
    }

    #[test]
    fn preferences_alone_are_not_checked() {
        let objects = [obj(
            "VirtualMachineClusterPreference",
            "p",
            json!({"requirements": {"cpu": {"guest": 64}}}),
        )];
        assert!(run(&objects).is_empty());
    }
}

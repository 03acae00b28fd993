//! Indexing objects by kind, namespace and name, and finding what a VirtualMachine points at.
//!
//! The index has layers: objects from the user's inputs first, then (optionally) the embedded
//! common catalog. A user object shadows an embedded one of the same kind and name, as applying
//! the user's manifests over the catalog would. Namespaced kinds without `metadata.namespace`
//! live in `default`, as they would once applied with `kubectl apply` in that namespace.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Mutex, OnceLock, RwLock};

use crate::model::scope::is_kubevirt_cluster_scoped;
use crate::model::{Kind, Object};

/// The lookup key: kind string, namespace (`""` for cluster-scoped kinds) and name.
/// Kind, namespace (empty for cluster-scoped kinds) and name.
type Key<'a> = (&'a str, &'a str, &'a str);

/// A last layer consulted only when a lookup misses every other one: kind, namespace (`""` for
/// cluster-scoped kinds) and name in, object out. It lets an expensive layer such as the
/// embedded catalog be built on the first miss instead of up front.
pub type Fallback = fn(&str, &str, &str) -> Option<&'static Object>;

/// The names the [`Fallback`] layer holds for a kind and namespace, to suggest from when a
/// lookup finds nothing.
pub type FallbackNames = fn(&str, &str) -> Vec<&'static str>;

/// The tables of the index. Keys are names from the user's own files, looked up once or
/// twice per VM: a multiply-and-rotate hash costs a fraction of SipHash on them, and a crafted
/// set of colliding names could only slow the run that reads them.
type Table<'a> = HashMap<Key<'a>, &'a Object, BuildHasherDefault<WordHasher>>;

/// An index of objects for lookups by kind, namespace and name.
#[derive(Debug, Default)]
pub struct Index<'a> {
    map: Table<'a>,
    /// The objects by the names kustomize gave them earlier in the build that is running
    /// ([`Object::previous_names`]), consulted when a name is not any object's current one;
    /// made on the first such miss.
    previous: OnceLock<Table<'a>>,
    duplicates: Vec<(&'a Object, &'a Object)>,
    /// The instancetypes and preferences of an apiVersion KubeVirt does not serve, which the
    /// cluster cannot hold: never found, only named when a lookup of their name misses
    /// ([`Index::unserved`]). The first of a kind, namespace and name.
    unserved: Table<'a>,
    fallback: Option<(Fallback, FallbackNames)>,
    /// The objects (by address) and checks (by function address) for which
    /// [`Index::passes_once`] has seen the check pass.
    passed: RwLock<HashSet<(usize, usize), BuildHasherDefault<WordHasher>>>,
    /// The names by kind and namespace, and the namespaces by kind and name, made on the first
    /// lookup that misses: a miss then reads the names of its kind, not every indexed object.
    names: OnceLock<NameTables<'a>>,
    /// The answers of [`Index::similar_name`] so far: thousands of VMs naming one misspelt
    /// instancetype are answered once.
    nearest: Mutex<HashMap<NearestKey, Option<&'a str>>>,
    /// The answers of [`Index::renamed`] so far, for the same reason.
    renamed: Mutex<HashMap<NearestKey, Option<&'a str>>>,
}

/// A question [`Index::similar_name`] answered: kind, namespace (`""` for cluster-scoped
/// kinds) and the name that was not found.
type NearestKey = (&'static str, String, String);

/// See [`Index::names`].
#[derive(Debug, Default)]
struct NameTables<'a> {
    /// (kind, namespace) to the names of that kind there.
    by_scope: HashMap<(&'a str, &'a str), Vec<&'a str>>,
    /// (kind, name) to the namespaces holding an object of that kind and name, sorted.
    by_name: HashMap<(&'a str, &'a str), Vec<&'a str>>,
}

/// A hasher that folds its input in eight bytes at a time with a rotate, a xor and a multiply
/// (the scheme of rustc's `FxHasher`): far cheaper than SipHash, and good enough for short keys
/// that nobody chose to collide.
#[derive(Default)]
pub(crate) struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        // The table takes its bucket from the low bits and a tag from the top ones; the
        // multiply leaves its best-mixed bits at the top, so spread them to both ends.
        self.0.rotate_left(26)
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for word in &mut words {
            let mut w = [0; 8];
            w.copy_from_slice(word);
            self.write_u64(u64::from_le_bytes(w));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut w = [0; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(w));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.write_u64(u64::from(n));
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

/// One lookup and its answer: kind, namespace (`""` for cluster-scoped kinds), name, object.
type Answer<'a, 'k> = (Kind, &'k str, &'k str, Option<&'a Object>);

/// The lookups made for one VM, kept so that asking again costs no second search. Cheap to
/// create; holds the last few answers.
#[derive(Debug, Default)]
pub struct Lookups<'a, 'k> {
    answers: [Option<Answer<'a, 'k>>; 2],
    next: usize,
}

impl<'a> Index<'a> {
    /// An empty index.
    pub fn new() -> Self {
        Index::default()
    }

    fn key(obj: &Object) -> Key<'_> {
        let kind = obj.kind_str();
        let ns = if is_kubevirt_cluster_scoped(kind) {
            ""
        } else {
            obj.effective_namespace()
        };
        (kind, ns, obj.name())
    }

    /// Add a layer of objects. Objects already present (from an earlier layer) win; within one
    /// layer, the first definition wins and the pair is remembered as a duplicate.
    pub fn add_layer(&mut self, objects: impl IntoIterator<Item = &'a Object>) {
        self.names = OnceLock::new();
        self.previous = OnceLock::new();
        self.nearest = Mutex::default();
        self.renamed = Mutex::default();
        let mut indexed_objects = Vec::new();
        for obj in objects {
            if obj.name().is_empty() {
                continue;
            }
            if indexed(obj) {
                indexed_objects.push(obj);
            } else if obj.kind().is_catalog() {
                self.unserved.entry(Self::key(obj)).or_insert(obj);
            }
        }
        let objects = indexed_objects;
        // Sized once: growing the tables rehashes every key.
        self.map.reserve(objects.len());
        let mut this_layer =
            Table::with_capacity_and_hasher(objects.len(), BuildHasherDefault::default());
        for obj in objects {
            let key = Self::key(obj);
            match this_layer.entry(key) {
                Entry::Occupied(first) => self.duplicates.push((first.get(), obj)),
                Entry::Vacant(entry) => {
                    entry.insert(obj);
                    self.map.entry(key).or_insert(obj);
                }
            }
        }
    }

    /// Whether a layer is consulted after every other one (the embedded catalog, unless it
    /// is turned off).
    pub fn has_fallback(&self) -> bool {
        self.fallback.is_some()
    }

    /// Set the layer consulted after every other one (see [`Fallback`]), and how to list its
    /// names.
    pub fn set_fallback(&mut self, fallback: Fallback, names: FallbackNames) {
        self.fallback = Some((fallback, names));
        self.nearest = Mutex::default();
        self.renamed = Mutex::default();
    }

    /// The table of earlier names ([`Index::previous`]), made on first use. In the order of
    /// the keys, so that of two objects that once had one name, the same one always answers.
    fn previous_names(&self) -> &Table<'a> {
        self.previous.get_or_init(|| {
            let mut current: Vec<(&Key<'a>, &&'a Object)> = self.map.iter().collect();
            current.sort_unstable_by(|a, b| a.0.cmp(b.0));
            let mut previous = Table::default();
            for (&(kind, ns, _), &obj) in current {
                for name in obj.previous_names() {
                    previous.entry((kind, ns, name)).or_insert(obj);
                }
            }
            previous
        })
    }

    /// The tables behind the lookups that missed, made on first use.
    fn name_tables(&self) -> &NameTables<'a> {
        self.names.get_or_init(|| {
            let mut tables = NameTables::default();
            for &(kind, ns, name) in self.map.keys() {
                tables.by_scope.entry((kind, ns)).or_default().push(name);
                tables.by_name.entry((kind, name)).or_default().push(ns);
            }
            for namespaces in tables.by_name.values_mut() {
                namespaces.sort_unstable();
            }
            tables
        })
    }

    /// A name of an object of `kind` in `namespace` near `name`, for a lookup of `name` that
    /// found nothing: "did you mean ...?". The names a running kustomize build recorded as an
    /// object's earlier ones count too: a VM still names an object by its name before the
    /// build's `namePrefix`, and finds it by that name.
    pub fn similar_name(&self, kind: Kind, namespace: &str, name: &str) -> Option<&'a str> {
        let kind = kind.as_str();
        let ns = if is_kubevirt_cluster_scoped(kind) {
            ""
        } else {
            namespace
        };
        let key = (kind, ns.to_string(), name.to_string());
        let known = self
            .nearest
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&key)
            .copied();
        if let Some(found) = known {
            return found;
        }
        let fallback = self
            .fallback
            .map(|(_, names)| names(kind, ns))
            .unwrap_or_default();
        let mine = self
            .name_tables()
            .by_scope
            .get(&(kind, ns))
            .into_iter()
            .flatten()
            .copied();
        let earlier = self
            .previous_names()
            .keys()
            .filter(|&&(k, n, _)| k == kind && n == ns)
            .map(|&(_, _, earlier)| earlier);
        let found = crate::diagnostic::nearest_name(name, mine.chain(earlier).chain(fallback));
        self.nearest
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(key, found);
        found
    }

    /// A name of an object of `kind` in `namespace` that kustomize's `namePrefix` or
    /// `nameSuffix` may have made of `name` (see [`renaming_of`]) without renaming the
    /// references to it that kustomize does not know of: for a lookup of `name` that found
    /// nothing. The fallback layer is left aside: its names are nobody's renaming.
    pub fn renamed(&self, kind: Kind, namespace: &str, name: &str) -> Option<&'a str> {
        let kind = kind.as_str();
        let ns = if is_kubevirt_cluster_scoped(kind) {
            ""
        } else {
            namespace
        };
        let key = (kind, ns.to_string(), name.to_string());
        let mut answers = self
            .renamed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        *answers.entry(key).or_insert_with(|| {
            renaming_of(
                self.name_tables()
                    .by_scope
                    .get(&(kind, ns))?
                    .iter()
                    .copied(),
                name,
            )
        })
    }

    /// The names of every object of `kind` in `namespace` (ignored for cluster-scoped kinds),
    /// the fallback layer's included, sorted and without repeats.
    pub fn names(&self, kind: Kind, namespace: &str) -> Vec<&'a str> {
        let kind = kind.as_str();
        let ns = if is_kubevirt_cluster_scoped(kind) {
            ""
        } else {
            namespace
        };
        let mut names: Vec<&'a str> = self
            .name_tables()
            .by_scope
            .get(&(kind, ns))
            .into_iter()
            .flatten()
            .copied()
            .chain(
                self.fallback
                    .map(|(_, names)| names(kind, ns))
                    .unwrap_or_default(),
            )
            .collect();
        names.sort_unstable();
        names.dedup();
        names
    }

    /// The first namespace (in sort order), other than `namespace`, whose objects of the
    /// namespaced `kind` include one named `name` (the fallback layer aside): for a lookup that
    /// found nothing.
    pub fn other_namespace(&self, kind: Kind, namespace: &str, name: &str) -> Option<&'a str> {
        if !kind.is_namespaced() {
            return None;
        }
        self.other_namespace_of(kind.as_str(), namespace, name)
    }

    /// [`Index::other_namespace`] for an object of any namespaced kind, named by its `kind`
    /// string (`PersistentVolumeClaim`, `DataSource`, ...).
    pub fn other_namespace_of(&self, kind: &str, namespace: &str, name: &str) -> Option<&'a str> {
        self.name_tables()
            .by_name
            .get(&(kind, name))?
            .iter()
            .copied()
            .find(|ns| *ns != namespace)
    }

    /// Look up a namespaced object (`namespace` ignored for cluster-scoped kinds).
    pub fn get(&self, kind: Kind, namespace: &str, name: &str) -> Option<&'a Object> {
        self.get_str(kind.as_str(), namespace, name)
            .filter(|o| o.is_kind(kind))
    }

    /// As [`Index::get`], answering from `lookups` when the same object was asked for there
    /// before, and remembering the answer otherwise.
    pub fn get_remembered<'k>(
        &self,
        lookups: &mut Lookups<'a, 'k>,
        kind: Kind,
        namespace: &'k str,
        name: &'k str,
    ) -> Option<&'a Object> {
        let namespace = if kind.is_namespaced() { namespace } else { "" };
        let asked = |a: &&Answer<'a, '_>| a.0 == kind && a.1 == namespace && a.2 == name;
        if let Some(answer) = lookups.answers.iter().flatten().find(asked) {
            return answer.3;
        }
        let found = self.get(kind, namespace, name);
        lookups.answers[lookups.next] = Some((kind, namespace, name, found));
        lookups.next = (lookups.next + 1) % lookups.answers.len();
        found
    }

    /// The instancetype or preference of `kind`, `namespace` (ignored for cluster-scoped kinds)
    /// and `name` that lookups do not find because KubeVirt does not serve its apiVersion
    /// ([`Object::is_served`]), to say so when the lookup misses.
    pub fn unserved(&self, kind: Kind, namespace: &str, name: &str) -> Option<&'a Object> {
        let namespace = if kind.is_namespaced() { namespace } else { "" };
        self.unserved
            .get(&(kind.as_str(), namespace, name))
            .copied()
    }

    /// Look up by kind string (for kinds outside KubeVirt, e.g. `PersistentVolumeClaim`).
    pub fn get_str(&self, kind: &str, namespace: &str, name: &str) -> Option<&'a Object> {
        let ns = if is_kubevirt_cluster_scoped(kind) {
            ""
        } else {
            namespace
        };
        // An empty table (VMs that only use the embedded catalog) needs no hashing of the key.
        let found = if self.map.is_empty() {
            None
        } else {
            self.map.get(&(kind, ns, name)).copied()
        };
        found
            .or_else(|| {
                // A reference a kustomize build has not renamed yet, to an object it has.
                if self.map.is_empty() {
                    None
                } else {
                    self.previous_names().get(&(kind, ns, name)).copied()
                }
            })
            .or_else(|| self.fallback.and_then(|(f, _)| f(kind, ns, name)))
    }

    /// Whether `check` holds for `obj`, computed once per object: a pass is remembered for the
    /// life of the index (the objects it hands out live as long, so an address names one object
    /// throughout), a failure is computed again each time it is asked.
    pub fn passes_once(&self, obj: &'a Object, check: fn(&Object) -> bool) -> bool {
        let key = (std::ptr::from_ref(obj) as usize, check as usize);
        let known = self.passed.read().is_ok_and(|passed| passed.contains(&key));
        if known {
            return true;
        }
        let passes = check(obj);
        if passes && let Ok(mut passed) = self.passed.write() {
            passed.insert(key);
        }
        passes
    }

    /// Pairs of objects with the same kind, namespace and name within one layer.
    pub fn duplicates(&self) -> &[(&'a Object, &'a Object)] {
        &self.duplicates
    }
}

/// The shortest of `names` (then the first in order) that is `name` with a prefix, a suffix
/// or both (see [`holds_renamed`]); none for a name of fewer than three characters, which any
/// name could hold.
pub fn renaming_of<'n>(names: impl IntoIterator<Item = &'n str>, name: &str) -> Option<&'n str> {
    const SHORTEST: usize = 3;
    if name.len() < SHORTEST {
        return None;
    }
    names
        .into_iter()
        .filter(|n| n.len() > name.len() && holds_renamed(n, name))
        .min_by_key(|n| (n.len(), *n))
}

/// Whether `renamed` is `name` with a prefix that ends in `-` or `.`, a suffix that starts
/// with one, or both: how kustomize's `namePrefix: prod-` and `nameSuffix: -v2` are written.
/// A name with a letter more (`team-small` for `team-smal`) is a typo's, not a renaming.
pub fn holds_renamed(renamed: &str, name: &str) -> bool {
    let separator = |c: Option<char>| matches!(c, Some('-' | '.'));
    renamed.match_indices(name).any(|(at, _)| {
        let (prefix, suffix) = (&renamed[..at], &renamed[at + name.len()..]);
        separator(prefix.chars().next_back()) || separator(suffix.chars().next())
    })
}

/// Whether lookups find `obj`: lookups ask for instancetypes, preferences and a few other
/// kinds, and an instancetype or preference of an apiVersion KubeVirt does not serve
/// ([`Object::is_served`]) is not found, as the cluster cannot hold it.
pub fn indexed(obj: &Object) -> bool {
    (obj.kind().is_catalog() && obj.is_served())
        || matches!(
            obj.kind_str(),
            "ControllerRevision"
                | "PersistentVolumeClaim"
                | "DataVolume"
                | "DataSource"
                | "VolumeSnapshot"
        )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;
    use serde_json::json;

    fn obj(kind: &str, ns: Option<&str>, name: &str, marker: i32) -> Object {
        let mut meta = json!({"name": name});
        if let Some(ns) = ns {
            meta["namespace"] = json!(ns);
        }
        Object::new(
            json!({"apiVersion": "instancetype.kubevirt.io/v1beta1", "kind": kind,
                   "metadata": meta, "spec": {"marker": marker}}),
            Origin::default(),
        )
    }

    /// Under a kustomize build, an object renamed by the build is found by the names
    /// kustomize recorded as its earlier ones, when no object has that name now; a name it had
    /// as another kind is not its.
    #[test]
    fn an_object_is_found_by_a_name_the_running_kustomize_build_gave_it_before() {
        let renamed = |kind: &str, name: &str, previous: &str, kinds: &str, marker| {
            let mut o = obj(kind, Some("prod"), name, marker);
            o.value["metadata"]["annotations"] = json!({
                "internal.config.kubernetes.io/previousNames": previous,
                "internal.config.kubernetes.io/previousKinds": kinds,
            });
            o
        };
        let objects = [
            renamed(
                "VirtualMachineInstancetype",
                "prod-small",
                "small,small",
                "VirtualMachineInstancetype,VirtualMachineInstancetype",
                1,
            ),
            renamed(
                "VirtualMachineInstancetype",
                "prod-large",
                "big,large",
                "VirtualMachinePreference,VirtualMachineInstancetype",
                2,
            ),
            // A current name wins over an earlier one.
            renamed(
                "VirtualMachineInstancetype",
                "prod-medium",
                "medium",
                "VirtualMachineInstancetype",
                3,
            ),
            obj("VirtualMachineInstancetype", Some("prod"), "medium", 4),
        ];
        let mut index = Index::new();
        index.add_layer(&objects);
        let marker = |name| {
            index
                .get(Kind::Instancetype, "prod", name)
                .map(|o| o.value["spec"]["marker"].as_i64().unwrap())
        };
        assert_eq!(marker("small"), Some(1));
        assert_eq!(marker("prod-small"), Some(1));
        assert_eq!(marker("large"), Some(2));
        assert_eq!(marker("big"), None, "recorded as another kind");
        assert_eq!(marker("medium"), Some(4));
        // A misspelt earlier name is told of the earlier name, which the VM may use.
        assert_eq!(
            index.similar_name(Kind::Instancetype, "prod", "smal"),
            Some("small")
        );
        assert_eq!(index.get(Kind::Instancetype, "default", "small"), None);
    }

    #[test]
    fn a_renamed_object_is_found_by_the_name_inside_its_own() {
        let objects = [
            obj(
                "VirtualMachineInstancetype",
                Some("prod"),
                "prod-db-large",
                1,
            ),
            obj(
                "VirtualMachineInstancetype",
                Some("prod"),
                "prod-db-large-v2",
                2,
            ),
            obj("VirtualMachineInstancetype", Some("dev"), "dev-web", 3),
            obj(
                "VirtualMachineClusterInstancetype",
                Some("x"),
                "web-blue",
                4,
            ),
            obj("VirtualMachineInstancetype", Some("prod"), "ab-c", 5),
        ];
        let mut idx = Index::new();
        idx.add_layer(&objects);
        // The shortest name holding the one asked for, in the VM's namespace only; asked twice,
        // the same answer.
        for _ in 0..2 {
            assert_eq!(
                idx.renamed(Kind::Instancetype, "prod", "db-large"),
                Some("prod-db-large")
            );
        }
        assert_eq!(idx.renamed(Kind::Instancetype, "prod", "web"), None);
        assert_eq!(
            idx.renamed(Kind::Instancetype, "dev", "web"),
            Some("dev-web")
        );
        // A cluster-scoped kind has no namespace; a suffix counts as a prefix does.
        assert_eq!(
            idx.renamed(Kind::ClusterInstancetype, "any", "web"),
            Some("web-blue")
        );
        // The name itself is no renaming, nor is a name too short to tell.
        assert_eq!(
            idx.renamed(Kind::Instancetype, "prod", "prod-db-large-v2"),
            None
        );
        assert_eq!(idx.renamed(Kind::Instancetype, "prod", "b-"), None);
        // A letter more is a typo's doing, not a prefix's or a suffix's.
        assert_eq!(
            idx.renamed(Kind::Instancetype, "prod", "prod-db-larg"),
            None
        );
        assert_eq!(idx.renamed(Kind::Instancetype, "dev", "ev-web"), None);
        assert_eq!(idx.renamed(Kind::Preference, "prod", "db-large"), None);
        // The fallback layer (the embedded catalog) renames nothing.
        fn nothing(_: &str, _: &str, _: &str) -> Option<&'static Object> {
            None
        }
        fn catalog_names(_: &str, _: &str) -> Vec<&'static str> {
            vec!["u1.medium"]
        }
        idx.set_fallback(nothing, catalog_names);
        assert_eq!(idx.renamed(Kind::ClusterInstancetype, "", "medium"), None);
        assert_eq!(
            idx.similar_name(Kind::ClusterInstancetype, "", "u1.mediun"),
            Some("u1.medium")
        );
    }

    #[test]
    fn what_a_miss_is_told_comes_from_its_kind_and_scope_only() {
        let first = [
            obj("VirtualMachineInstancetype", Some("team-b"), "web", 1),
            obj("VirtualMachineInstancetype", Some("team-a"), "web", 2),
            obj("VirtualMachineInstancetype", Some("dev"), "small", 3),
            obj("VirtualMachinePreference", Some("dev"), "smaal", 4),
        ];
        let mut idx = Index::new();
        idx.add_layer(&first);
        // The first other namespace in sort order, never the VM's own.
        assert_eq!(
            idx.other_namespace(Kind::Instancetype, "dev", "web"),
            Some("team-a")
        );
        assert_eq!(
            idx.other_namespace(Kind::Instancetype, "team-a", "web"),
            Some("team-b")
        );
        assert_eq!(idx.other_namespace(Kind::Instancetype, "dev", "db"), None);
        // Names of another kind or namespace are not suggested; asked twice, the same answer.
        for _ in 0..2 {
            assert_eq!(
                idx.similar_name(Kind::Instancetype, "dev", "smal"),
                Some("small")
            );
            assert_eq!(idx.similar_name(Kind::Instancetype, "team-a", "smal"), None);
            assert_eq!(
                idx.similar_name(Kind::Preference, "dev", "smal"),
                Some("smaal")
            );
        }
        assert_eq!(idx.names(Kind::Instancetype, "dev"), ["small"]);
        // A later layer is seen by the next miss.
        let later = [obj(
            "VirtualMachineInstancetype",
            Some("team-a"),
            "smal1",
            5,
        )];
        idx.add_layer(&later);
        assert_eq!(
            idx.similar_name(Kind::Instancetype, "team-a", "smal"),
            Some("smal1")
        );
        assert_eq!(
            idx.other_namespace(Kind::Instancetype, "dev", "smal1"),
            Some("team-a")
        );
    }

    #[test]
    fn earlier_layers_shadow_later_ones() {
        let user = [obj(
            "VirtualMachineClusterInstancetype",
            None,
            "u1.small",
            1,
        )];
        let embedded = [obj(
            "VirtualMachineClusterInstancetype",
            None,
            "u1.small",
            2,
        )];
        let mut idx = Index::new();
        idx.add_layer(&user);
        idx.add_layer(&embedded);
        let found = idx
            .get(Kind::ClusterInstancetype, "any", "u1.small")
            .unwrap();
        assert_eq!(found.value["spec"]["marker"], 1);
        assert!(idx.duplicates().is_empty());
    }

    #[test]
    fn namespaced_lookup_uses_default_for_unset_namespace() {
        let objs = [
            obj("VirtualMachineInstancetype", None, "a", 1),
            obj("VirtualMachineInstancetype", Some("other"), "b", 2),
        ];
        let mut idx = Index::new();
        idx.add_layer(&objs);
        assert!(idx.get(Kind::Instancetype, "default", "a").is_some());
        assert!(idx.get(Kind::Instancetype, "default", "b").is_none());
        assert!(idx.get(Kind::Instancetype, "other", "b").is_some());
    }

    fn fallback(kind: &str, ns: &str, name: &str) -> Option<&'static Object> {
        static OBJ: std::sync::OnceLock<Object> = std::sync::OnceLock::new();
        (kind == "VirtualMachineClusterInstancetype" && ns.is_empty() && name == "u1.small")
            .then(|| OBJ.get_or_init(|| obj("VirtualMachineClusterInstancetype", None, name, 2)))
    }

    #[test]
    fn the_fallback_answers_only_what_every_layer_misses() {
        let user = [obj(
            "VirtualMachineClusterInstancetype",
            None,
            "u1.small",
            1,
        )];
        let mut idx = Index::new();
        idx.set_fallback(fallback, |_, _| Vec::new());
        let found = idx
            .get(Kind::ClusterInstancetype, "ns", "u1.small")
            .unwrap();
        assert_eq!(found.value["spec"]["marker"], 2);
        idx.add_layer(&user);
        let found = idx
            .get(Kind::ClusterInstancetype, "ns", "u1.small")
            .unwrap();
        assert_eq!(found.value["spec"]["marker"], 1);
        assert!(idx.get(Kind::ClusterInstancetype, "", "u1.large").is_none());
    }

    /// The cluster cannot hold an instancetype or preference of an apiVersion KubeVirt does not
    /// serve: a lookup does not find it, nor does it shadow or double another definition, and
    /// the index can still say why its name is not found.
    #[test]
    fn an_apiversion_kubevirt_does_not_serve_is_not_found() {
        let of_version = |version: &str, kind: &str, marker| {
            let mut o = obj(kind, None, "small", marker);
            o.value["apiVersion"] = format!("instancetype.kubevirt.io/{version}").into();
            o
        };
        let objs = [
            of_version("v1alpha1", "VirtualMachineClusterInstancetype", 1),
            of_version("v1alpha2", "VirtualMachinePreference", 2),
        ];
        let served = [of_version(
            "v1beta1",
            "VirtualMachineClusterInstancetype",
            3,
        )];
        let mut idx = Index::new();
        idx.add_layer(&objs);
        assert!(idx.get(Kind::ClusterInstancetype, "", "small").is_none());
        assert!(idx.get(Kind::Preference, "default", "small").is_none());
        assert_eq!(
            idx.unserved(Kind::ClusterInstancetype, "any", "small")
                .map(|o| &o.value["spec"]["marker"]),
            Some(&serde_json::json!(1))
        );
        assert!(idx.unserved(Kind::Preference, "default", "small").is_some());
        assert!(idx.unserved(Kind::Preference, "other", "small").is_none());
        assert!(!indexed(&objs[0]) && indexed(&served[0]));
        idx.add_layer(&served);
        let found = idx.get(Kind::ClusterInstancetype, "", "small").unwrap();
        assert_eq!(found.value["spec"]["marker"], 3);
        assert!(idx.duplicates().is_empty());
    }

    #[test]
    fn duplicates_within_a_layer_are_reported() {
        let objs = [
            obj("VirtualMachinePreference", None, "p", 1),
            obj("VirtualMachinePreference", Some("default"), "p", 2),
        ];
        let mut idx = Index::new();
        idx.add_layer(&objs);
        assert_eq!(idx.duplicates().len(), 1);
    }
}

//! The namespace a kustomization gives the files kvrender reads as they are written.
//!
//! A kustomization's `namespace:` places every namespaced object it builds, the ones its files
//! leave without a namespace included. kvrender reads those files as written, where such an
//! object is in `default`. So in a repository of one folder per team, each with its own
//! `namespace:`, two teams' preferences of one name are the same object to kvrender, and a VM
//! looks for its instancetype in `default`. kvrender does not build the kustomizations (it
//! checks what kustomize builds when given it); a finding that the namespace may explain says
//! which kustomization sets it and how to check the build instead.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::kustomize::{self, Read};
use super::variables::shell_word;
use crate::diagnostic::{Diagnostic, codes};
use crate::model::scope::is_cluster_scoped;

/// Add to each finding that a kustomization's `namespace:` may explain which kustomization sets
/// it, and the command that checks what kustomize builds instead (`kubectl kustomize DIR |
/// kvrender COMMAND -`). Those findings are about an object written without a namespace: a
/// namespaced instancetype, preference or volume source not found in `default` (`KV011`,
/// `KV013`), or a namespaced object defined twice where the two files' kustomizations place
/// them in different namespaces (`KV020`).
pub fn note_kustomize_namespaces(diags: &mut [Diagnostic], command: &str) {
    let mut placed = Placed::default();
    for d in diags.iter_mut() {
        // The other way round: a VM of a namespace names an object the inputs hold in another
        // (written without one), in a file whose kustomization places it in the VM's.
        if d.code == codes::REFERENCE_NOT_FOUND
            && let Some(wanted) = d.object.as_ref().and_then(|o| o.namespace.clone())
            && let Some(elsewhere) = d.related.as_deref()
            && let Some(Setting {
                kustomization,
                folder,
                namespace,
            }) = placed.setting(&elsewhere.path)
            && namespace == wanted
        {
            d.message.push_str(&format!(
                "; {kustomization} sets `namespace: {namespace}` for {elsewhere}, which kvrender \
                 does not apply to the files it reads (an object written without a namespace is \
                 in \"default\" here): check what kustomize builds of it, with the VMs \
                 (`kubectl kustomize {}`)",
                shell_word(&folder)
            ));
            continue;
        }
        let Some(object) = d.object.as_ref().filter(|o| o.namespace.is_none()) else {
            continue;
        };
        let setting = match d.code {
            // Only a lookup in `default` is the namespace's doing; a cluster-scoped kind not
            // found is not. A volume's source is always looked up in the VM's namespace.
            codes::REFERENCE_NOT_FOUND if namespaced_lookup(&d.message) => {
                placed.setting(&d.origin.path)
            }
            codes::INFERENCE => placed.setting(&d.origin.path),
            codes::DUPLICATE if !is_cluster_scoped(&object.api_version, &object.kind) => {
                let Some(first) = d.related.as_deref() else {
                    continue;
                };
                let here = placed.setting(&d.origin.path);
                let there = placed.setting(&first.path);
                if here.as_ref().map(|s| &s.namespace) == there.as_ref().map(|s| &s.namespace) {
                    continue;
                }
                here.or(there)
            }
            _ => continue,
        };
        let Some(Setting {
            kustomization,
            folder,
            namespace,
        }) = setting
        else {
            continue;
        };
        if namespace == "default" {
            continue;
        }
        d.message.push_str(&format!(
            "; {kustomization} sets `namespace: {namespace}`, which kvrender does not apply to \
             the files it reads (an object written without a namespace is in \"default\" \
             here): check what kustomize builds instead (`kubectl kustomize {} | kvrender \
             {command} -`)",
            shell_word(&folder)
        ));
    }
}

/// A kustomization that places a file's objects in a namespace: its file and folder as shown
/// to the user, and the namespace.
#[derive(Clone)]
struct Setting {
    kustomization: String,
    folder: String,
    namespace: String,
}

/// The settings found so far, by file as the findings name it, and the kustomizations read, by
/// folder.
#[derive(Default)]
struct Placed {
    by_file: HashMap<Arc<str>, Option<Setting>>,
    by_folder: HashMap<PathBuf, Option<(PathBuf, kustomize::Named)>>,
    cwd: Option<PathBuf>,
}

impl Placed {
    /// The namespace kustomize gives the objects of `path` (a file as a finding names it),
    /// when a kustomization in its folder or above that builds it sets one.
    fn setting(&mut self, path: &Arc<str>) -> Option<Setting> {
        if let Some(known) = self.by_file.get(path) {
            return known.clone();
        }
        let found = self.find(path);
        self.by_file.insert(path.clone(), found.clone());
        found
    }

    fn find(&mut self, path: &str) -> Option<Setting> {
        // The outermost that sets a namespace has the last word, as in kustomize, where an
        // overlay's namespace replaces its base's.
        self.outermost(path, |named| named.namespace().map(str::to_string))
            .map(|(kustomization, folder, namespace)| Setting {
                kustomization,
                folder,
                namespace,
            })
    }

    /// Of the kustomizations that build the file `path` (innermost first: each lists the file,
    /// or the folder of the one before it, as a resource), the outermost for which `pick`
    /// gives something: its file and folder as the user would type them, and what `pick` gave.
    fn outermost<T>(
        &mut self,
        path: &str,
        pick: impl Fn(&kustomize::Named) -> Option<T>,
    ) -> Option<(String, String, T)> {
        // Standard input, kustomize's stream, a catalog's embedded files: no folder.
        if path == "-" || path.starts_with('<') || path.is_empty() {
            return None;
        }
        let cwd = self
            .cwd
            .get_or_insert_with(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")))
            .clone();
        let file = kustomize::normalize(&cwd.join(path));
        let mut target = file.clone();
        let mut found = None;
        for folder in file.ancestors().skip(1) {
            let Some((kustomization, named)) = self.kustomization(folder) else {
                continue;
            };
            if !named.builds(&target) {
                break;
            }
            if let Some(picked) = pick(named) {
                found = Some((shown(kustomization, &cwd), shown(folder, &cwd), picked));
            }
            target = folder.to_path_buf();
        }
        found
    }

    /// The kustomization of `folder` and what it names, read once.
    fn kustomization(&mut self, folder: &Path) -> Option<&(PathBuf, kustomize::Named)> {
        self.by_folder
            .entry(folder.to_path_buf())
            .or_insert_with(|| match kustomize::read(folder) {
                Read::Named(named) => kustomize::file_of(folder).map(|file| (file, named)),
                Read::Broken(_) | Read::Nothing => None,
            })
            .as_ref()
    }
}

/// The notes `build` gives for the files it read that a kustomization in their folder or above
/// builds with another name or namespace (`namespace:`, `namePrefix:`, `nameSuffix:`): `build`
/// prints them as written, and `kvrender build DIR | kubectl apply -f -` would apply them under
/// names kustomize does not give them. One note for each such kustomization, the outermost
/// that builds the file, in the order of the files.
pub fn notes_on_renaming(paths: &[Arc<str>]) -> Vec<String> {
    let mut placed = Placed::default();
    let mut notes = Vec::new();
    let mut said = std::collections::HashSet::new();
    for path in paths {
        let outermost = placed.outermost(path, |named| {
            (!named.renames().is_empty()).then(|| named.renames().to_vec())
        });
        if let Some((kustomization, folder, renames)) = outermost
            && said.insert(kustomization.clone())
        {
            let fields = renames
                .iter()
                .map(|f| format!("`{f}`"))
                .collect::<Vec<_>>()
                .join(", ");
            notes.push(format!(
                "note: {kustomization} sets {fields} for the files it builds, which `build` \
                 prints as they are written; to print what kustomize builds, run `kubectl \
                 kustomize {} | kvrender build -`",
                shell_word(&folder)
            ));
        }
    }
    notes
}

/// Whether a `KV011` message is about a lookup in a namespace: it names the namespaced kinds'
/// resources (as KubeVirt's `not found` errors do) or the namespace `default`.
fn namespaced_lookup(message: &str) -> bool {
    [
        "\"default\"",
        "virtualmachineinstancetypes.",
        "virtualmachinepreferences.",
    ]
    .iter()
    .any(|needle| message.contains(needle))
}

/// `path` as the user would type it from the working directory: relative below it, whole
/// elsewhere.
fn shown(path: &Path, cwd: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::kustomize::tests::tree;
    use crate::origin::{ObjectRef, Origin};

    fn finding(code: &'static str, path: &Path, kind: &str, message: &str) -> Diagnostic {
        let mut d = Diagnostic::error(
            code,
            Origin::new(path.to_string_lossy().as_ref(), 0, Some(1)),
            message,
        );
        d.object = Some(ObjectRef {
            api_version: "v1".into(),
            kind: kind.into(),
            namespace: None,
            name: "x".into(),
        });
        d
    }

    fn duplicate(dir: &Path, here: &str, first: &str, kind: &str) -> Diagnostic {
        let mut d = finding(codes::DUPLICATE, &dir.join(here), kind, "defined twice");
        d.related = Some(Box::new(Origin::new(
            dir.join(first).to_string_lossy().as_ref(),
            0,
            Some(1),
        )));
        d
    }

    #[test]
    fn a_team_folders_namespace_is_named_where_it_explains_a_finding() {
        let dir = tree(&[
            (
                "apps/a/kustomization.yaml",
                "namespace: team-a\nresources: [pref.yaml, vm.yaml]\n",
            ),
            (
                "apps/b/kustomization.yaml",
                "namespace: team-b\nresources: [pref.yaml]\n",
            ),
        ]);
        let d = dir.path();
        let mut diags = vec![
            finding(
                codes::REFERENCE_NOT_FOUND,
                &d.join("apps/a/vm.yaml"),
                "VirtualMachine",
                "virtualmachineinstancetypes.instancetype.kubevirt.io \"small\" not found",
            ),
            duplicate(
                d,
                "apps/b/pref.yaml",
                "apps/a/pref.yaml",
                "VirtualMachinePreference",
            ),
        ];
        note_kustomize_namespaces(&mut diags, "validate");
        let a = d.join("apps/a");
        assert!(
            diags[0].message.ends_with(&format!(
                "; {}/kustomization.yaml sets `namespace: team-a`, which kvrender does not \
                 apply to the files it reads (an object written without a namespace is in \
                 \"default\" here): check what kustomize builds instead (`kubectl kustomize \
                 {} | kvrender validate -`)",
                a.display(),
                shell_word(&a.to_string_lossy())
            )),
            "{}",
            diags[0].message
        );
        assert!(
            diags[1]
                .message
                .contains("apps/b/kustomization.yaml sets `namespace: team-b`"),
            "{}",
            diags[1].message
        );
    }

    #[test]
    fn no_note_where_the_namespace_explains_nothing() {
        let dir = tree(&[
            (
                "apps/kustomization.yaml",
                "namespace: all\nresources: [a, b]\n",
            ),
            (
                "apps/a/kustomization.yaml",
                "namespace: team-a\nresources: [pref.yaml]\n",
            ),
            (
                "apps/b/kustomization.yaml",
                "namespace: team-b\nresources: [pref.yaml]\n",
            ),
            (
                "lone/kustomization.yaml",
                "namespace: lone\nresources: [other.yaml]\n",
            ),
            (
                "dflt/kustomization.yaml",
                "namespace: default\nresources: [vm.yaml]\n",
            ),
        ]);
        let d = dir.path();
        let not_found = |path: &str, kind: &str, message: &str| {
            finding(codes::REFERENCE_NOT_FOUND, &d.join(path), kind, message)
        };
        let mut diags = vec![
            // The outer kustomization places both in `all`: a duplicate there too.
            duplicate(
                d,
                "apps/b/pref.yaml",
                "apps/a/pref.yaml",
                "VirtualMachinePreference",
            ),
            // Cluster-scoped objects have no namespace to differ in.
            duplicate(
                d,
                "apps/b/pref.yaml",
                "apps/a/pref.yaml",
                "VirtualMachineClusterPreference",
            ),
            // A cluster-scoped kind not found: the message names no namespace.
            not_found("apps/a/vm.yaml", "VirtualMachine", "\"small\" not found"),
            // Not a resource of the kustomization beside it.
            not_found("lone/vm.yaml", "VirtualMachine", "not found in \"default\""),
            // `namespace: default` changes nothing.
            not_found("dflt/vm.yaml", "VirtualMachine", "not found in \"default\""),
            not_found("-", "VirtualMachine", "not found in \"default\""),
        ];
        let before: Vec<String> = diags.iter().map(|d| d.message.clone()).collect();
        note_kustomize_namespaces(&mut diags, "build");
        let after: Vec<String> = diags.iter().map(|d| d.message.clone()).collect();
        assert_eq!(after, before);
    }

    #[test]
    fn the_outermost_namespace_that_builds_the_file_is_named() {
        let dir = tree(&[
            (
                "overlay/kustomization.yaml",
                "namespace: prod\nresources: [base]\n",
            ),
            (
                "overlay/base/kustomization.yaml",
                "namespace: dev\nresources: [vm.yaml]\n",
            ),
        ]);
        let mut diags = vec![finding(
            codes::INFERENCE,
            &dir.path().join("overlay/base/vm.yaml"),
            "VirtualMachine",
            "persistentvolumeclaims \"disk\" not found (looked at default/disk)",
        )];
        // A written namespace is the object's own: nothing to say.
        let mut placed = diags[0].clone();
        placed.object.as_mut().unwrap().namespace = Some("web".into());
        placed.message = "not found in \"default\"".into();
        diags.push(placed);
        note_kustomize_namespaces(&mut diags, "expand");
        assert!(
            diags[0].message.contains("sets `namespace: prod`"),
            "{}",
            diags[0].message
        );
        assert_eq!(diags[1].message, "not found in \"default\"");
    }

    #[test]
    fn an_object_a_kustomization_places_in_the_vms_namespace_is_named_the_other_way_round() {
        let dir = tree(&[(
            "cat/kustomization.yaml",
            "namespace: team\nresources: [it.yaml]\n",
        )]);
        let d = dir.path();
        let found_in = |namespace: &str| {
            let mut f = finding(
                codes::REFERENCE_NOT_FOUND,
                &d.join("vms/vm.yaml"),
                "VirtualMachine",
                "virtualmachineinstancetypes.instancetype.kubevirt.io \"small\" not found",
            );
            f.object.as_mut().unwrap().namespace = Some(namespace.into());
            f.with_related(Origin::new(
                d.join("cat/it.yaml").to_string_lossy(),
                0,
                Some(1),
            ))
        };
        let mut diags = vec![found_in("team"), found_in("other")];
        note_kustomize_namespaces(&mut diags, "validate");
        assert!(
            diags[0].message.contains(&format!(
                "; {}/kustomization.yaml sets `namespace: team` for {}:1, which kvrender does \
                 not apply",
                d.join("cat").display(),
                d.join("cat/it.yaml").display()
            )),
            "{}",
            diags[0].message
        );
        // A kustomization placing it in another namespace than the VM's explains nothing.
        assert!(
            !diags[1].message.contains("kustomization"),
            "{}",
            diags[1].message
        );
    }
}

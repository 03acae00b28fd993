//! Writing objects as files under a directory, all or nothing.
//!
//! File names follow `kustomize build -o DIR`: `<group>_<version>_<kind>_<name>.yaml` in lower
//! case (an empty group is left out), prefixed with `<namespace>_` for namespaced objects.
//! Every character outside `[a-z0-9._-]` becomes `_`, so no object name (`../x`, `a/b`, a NUL)
//! can reach outside DIR.
//!
//! Writing is atomic in the sense that matters for a CI step: every file is first written into
//! a staging folder inside DIR, and only when all of them are written are they moved into
//! place. A failure midway leaves DIR as it was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Result};

/// The file name kustomize would give `obj`.
pub fn kustomize_file_name(obj: &Value) -> String {
    let api_version = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    let meta = obj.get("metadata");
    let name = meta
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let namespace = meta
        .and_then(|m| m.get("namespace"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut parts: Vec<&str> = Vec::new();
    if !namespace.is_empty() {
        parts.push(namespace);
    }
    parts.extend(
        [group, version, kind, name]
            .into_iter()
            .filter(|p| !p.is_empty()),
    );
    let stem = sanitize(&parts.join("_"));
    format!("{stem}.yaml")
}

/// Lower-case and replace anything but `[a-z0-9._-]` with `_`; never `.` or `..` alone.
fn sanitize(s: &str) -> String {
    let mut out: String = s
        .chars()
        .flat_map(char::to_lowercase)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.trim_matches('.').is_empty() {
        out = format!("_{out}");
    }
    // Keep names within common file-system limits (255 bytes with the extension).
    out.truncate(240);
    out
}

/// Write `files` (relative names, already sanitized, to contents) under `dir`, all or nothing.
pub fn write_all(dir: &Path, files: &BTreeMap<String, String>) -> Result<()> {
    let write_err = |path: &Path, source| Error::Write {
        path: path.to_path_buf(),
        source,
    };
    if dir.exists() && !dir.is_dir() {
        return Err(Error::Usage(format!(
            "the output path `{}` exists and is not a directory",
            dir.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(|e| write_err(dir, e))?;
    let staging = dir.join(format!(".kvrender-staging-{}", std::process::id()));
    std::fs::create_dir_all(&staging).map_err(|e| write_err(&staging, e))?;
    let result = (|| {
        for (name, contents) in files {
            let path = staging.join(name);
            std::fs::write(&path, contents).map_err(|e| write_err(&path, e))?;
        }
        for name in files.keys() {
            let target: PathBuf = dir.join(name);
            if target.is_dir() {
                return Err(Error::Usage(format!(
                    "cannot write `{}`: a directory of that name exists",
                    target.display()
                )));
            }
        }
        for name in files.keys() {
            let from = staging.join(name);
            let to = dir.join(name);
            std::fs::rename(&from, &to).map_err(|e| write_err(&to, e))?;
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&staging);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_follow_kustomize() {
        let it = json!({"apiVersion": "instancetype.kubevirt.io/v1beta1",
            "kind": "VirtualMachineClusterInstancetype", "metadata": {"name": "u1.medium"}});
        assert_eq!(
            kustomize_file_name(&it),
            "instancetype.kubevirt.io_v1beta1_virtualmachineclusterinstancetype_u1.medium.yaml"
        );
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "x", "namespace": "Apps"}});
        assert_eq!(kustomize_file_name(&cm), "apps_v1_configmap_x.yaml");
    }

    #[test]
    fn hostile_names_stay_inside_the_directory() {
        for name in ["../../etc/passwd", "a/b", "..", "x\u{0}y", &"n".repeat(300)] {
            let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}});
            let file = kustomize_file_name(&obj);
            assert!(!file.contains('/') && !file.contains('\u{0}'), "{file}");
            assert!(file.len() <= 250, "{}", file.len());
        }
    }

    #[test]
    fn an_output_path_that_is_a_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out");
        std::fs::write(&file, "x").unwrap();
        let files = BTreeMap::from([("a.yaml".to_string(), "a: 1\n".to_string())]);
        assert!(write_all(&file, &files).is_err());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    }
}

//! `--exclude GLOB`: files and folders left out of the inputs, as a `.gitignore` names them.
//!
//! A repository holds more YAML than manifests: Ansible playbooks, `mkdocs.yml`, CI and editor
//! configuration. Each pattern leaves out what it matches:
//!
//! - a pattern without a `/` (other than a last one) matches the name of a file or folder at any
//!   depth: `mkdocs.yml`, `*.json`, `ansible`;
//! - a pattern with a `/` matches a path: the path as kvrender shows it (as given on the
//!   command line), or for a walked file its path from the directory walked: `docs/*.yaml`,
//!   `clusters/*/flux-system`; a leading `./` or `/` changes nothing, so a path copied from a
//!   finding works, and a pattern that is an absolute path also matches the absolute paths
//!   shown when an absolute PATH is walked, and a relative path that names the same file from
//!   the directory kvrender runs in (`--exclude "$PWD/docs/x.yaml"` leaves out `./docs/x.yaml`
//!   of a walk of `.`);
//! - a pattern ending in `/` matches only folders;
//! - `*` and `?` stay within one name, `**` crosses folders, `[abc]` and `{a,b}` work as in a
//!   shell.
//!
//! A folder that is left out is not walked, so nothing below it is read. A file named on the
//! command line is left out the same way. A directory named on the command line is always
//! walked, and standard input is never left out.

use std::path::{Component, Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::{Error, Result};
use crate::load::kustomize::normalize;

/// The compiled `--exclude` patterns.
#[derive(Debug, Clone)]
pub struct Exclude {
    /// Patterns with a `/`, matched against a path from the walked root.
    paths: GlobSet,
    /// Patterns without a `/`, matched against one name.
    names: GlobSet,
    /// As `paths` and `names`, for the patterns that end in `/`: folders only.
    folder_paths: GlobSet,
    folder_names: GlobSet,
    /// The absolute patterns alone (and those of folders only), matched against a relative
    /// path made absolute from each of `cwds`.
    absolute: GlobSet,
    folder_absolute: GlobSet,
    /// The directory kvrender runs in, as the system names it and as `$PWD` spells it (through
    /// a link, say): empty unless a pattern is absolute.
    cwds: Vec<PathBuf>,
}

impl Default for Exclude {
    fn default() -> Self {
        Exclude {
            paths: GlobSet::empty(),
            names: GlobSet::empty(),
            folder_paths: GlobSet::empty(),
            folder_names: GlobSet::empty(),
            absolute: GlobSet::empty(),
            folder_absolute: GlobSet::empty(),
            cwds: Vec::new(),
        }
    }
}

impl Exclude {
    /// Compile `patterns`; a pattern that is not a valid glob is a usage error naming it.
    pub fn new(patterns: &[String]) -> Result<Exclude> {
        // Only an absolute pattern is matched from the working directory: asked of the system
        // only then.
        if !patterns.iter().any(|p| p.starts_with('/')) {
            return Exclude::from_dirs(patterns, Vec::new());
        }
        let mut cwds: Vec<PathBuf> = std::env::current_dir().into_iter().collect();
        if let Some(pwd) = std::env::var_os("PWD").map(PathBuf::from)
            && pwd.is_absolute()
            && !cwds.contains(&pwd)
            && std::fs::canonicalize(&pwd).ok() == cwds.first().cloned()
        {
            cwds.push(pwd);
        }
        Exclude::from_dirs(patterns, cwds)
    }

    /// [`Exclude::new`], with `cwds` as the directory kvrender runs in.
    fn from_dirs(patterns: &[String], cwds: Vec<PathBuf>) -> Result<Exclude> {
        let mut sets = [
            GlobSetBuilder::new(),
            GlobSetBuilder::new(),
            GlobSetBuilder::new(),
            GlobSetBuilder::new(),
        ];
        let mut absolute_sets = [GlobSetBuilder::new(), GlobSetBuilder::new()];
        let mut any_absolute = false;
        for pattern in patterns {
            let bad = |why: &str| {
                Error::Usage(format!(
                    "--exclude {:?}: {why}",
                    crate::diagnostic::shortened(pattern)
                ))
            };
            let folder_only = pattern.ends_with('/');
            let trimmed = pattern.trim_end_matches('/');
            let anchored = trimmed.contains('/');
            // `./docs/x.yaml`, `docs/./x.yaml` and `docs//x.yaml` name `docs/x.yaml`, as the
            // paths findings show do.
            let parts: Vec<&str> = trimmed
                .split('/')
                .filter(|part| !part.is_empty() && *part != ".")
                .collect();
            if parts.is_empty() {
                return Err(bad(
                    "the pattern matches nothing (it is empty, only `/` or only `.`)",
                ));
            }
            let relative = parts.join("/");
            // An absolute pattern also matches the absolute paths findings show when an
            // absolute PATH is walked.
            let absolute = trimmed.starts_with('/').then(|| format!("/{relative}"));
            for text in std::iter::once(&relative).chain(absolute.as_ref()) {
                let glob = GlobBuilder::new(text)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .build()
                    .map_err(|e| bad(&format!("not a valid pattern: {}", e.kind())))?;
                if absolute.as_ref() == Some(text) {
                    absolute_sets[usize::from(folder_only)].add(glob.clone());
                    any_absolute = true;
                }
                sets[usize::from(folder_only) * 2 + usize::from(!anchored)].add(glob);
            }
        }
        // The patterns are compiled together only here, within the matcher's size limit.
        let build = |set: GlobSetBuilder| {
            set.build().map_err(|e| {
                Error::Usage(format!(
                    "--exclude: the patterns are too large to match with ({})",
                    e.kind()
                ))
            })
        };
        let [paths, names, folder_paths, folder_names] = sets.map(build);
        let [absolute, folder_absolute] = absolute_sets.map(build);
        let (paths, names, folder_paths, folder_names) =
            (paths?, names?, folder_paths?, folder_names?);
        let (absolute, folder_absolute) = (absolute?, folder_absolute?);
        Ok(Exclude {
            paths,
            names,
            folder_paths,
            folder_names,
            absolute,
            folder_absolute,
            cwds: if any_absolute { cwds } else { Vec::new() },
        })
    }

    /// Whether there are no patterns.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
            && self.names.is_empty()
            && self.folder_paths.is_empty()
            && self.folder_names.is_empty()
    }

    /// Whether the entry at `path` (see [`as_given`]) is left out; a walk also gives its path
    /// from the directory walked, `relative`. The folders above it are not looked at: a walk
    /// does not enter a folder that is left out.
    pub fn leaves_out_entry(&self, path: &Path, relative: Option<&Path>, is_folder: bool) -> bool {
        let Some(name) = path.file_name() else {
            return false;
        };
        let name = Path::new(name);
        let path_matches = |set: &GlobSet| {
            set.is_match(path) || relative.is_some_and(|relative| set.is_match(relative))
        };
        let from_cwd = |set: &GlobSet| {
            path.is_relative()
                && !set.is_empty()
                && self
                    .cwds
                    .iter()
                    .any(|cwd| set.is_match(normalize(&cwd.join(path))))
        };
        path_matches(&self.paths)
            || self.leaves_out_name(name, is_folder)
            || from_cwd(&self.absolute)
            || (is_folder && (path_matches(&self.folder_paths) || from_cwd(&self.folder_absolute)))
    }

    /// Whether a pattern without a `/` leaves out the entry named `name`: wherever the entry is
    /// met, by whatever path, it is left out.
    pub fn leaves_out_name(&self, name: &Path, is_folder: bool) -> bool {
        self.names.is_match(name) || (is_folder && self.folder_names.is_match(name))
    }

    /// Whether a file named on the command line is left out: the file itself, or a folder
    /// of its path as given.
    pub fn leaves_out_named(&self, path: &Path) -> bool {
        if self.is_empty() {
            return false;
        }
        // Each prefix of the path as given is a folder but the last.
        let path = as_given(path);
        let parts: Vec<Component<'_>> = path.components().collect();
        let mut prefix = std::path::PathBuf::new();
        for (i, part) in parts.iter().enumerate() {
            prefix.push(part.as_os_str());
            if matches!(part, Component::Normal(_))
                && self.leaves_out_entry(&prefix, None, i + 1 < parts.len())
            {
                return true;
            }
        }
        false
    }
}

/// `path` as patterns see it: as given, without its `.` parts (`./docs/x.yaml` is
/// `docs/x.yaml`).
pub fn as_given(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exclude(patterns: &[&str]) -> Exclude {
        Exclude::new(&patterns.iter().map(|p| p.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn a_name_pattern_matches_at_any_depth_and_a_path_pattern_the_whole_path() {
        let e = exclude(&["mkdocs.yml", "*.json", "docs/*.yaml"]);
        assert!(e.leaves_out_entry(Path::new("mkdocs.yml"), None, false));
        assert!(e.leaves_out_entry(Path::new("site/mkdocs.yml"), None, false));
        assert!(e.leaves_out_entry(Path::new("a/b/renovate.json"), None, false));
        assert!(e.leaves_out_entry(Path::new("docs/x.yaml"), None, false));
        // `*` does not cross a folder, and a path pattern is anchored at the root.
        assert!(!e.leaves_out_entry(Path::new("docs/deep/x.yaml"), None, false));
        assert!(!e.leaves_out_entry(Path::new("site/docs/x.yaml"), None, false));
        assert!(!e.leaves_out_entry(Path::new("vm.yaml"), None, false));
        // A walked file's path from the directory walked counts too.
        let walked = Path::new("/srv/repo/docs/x.yaml");
        assert!(!e.leaves_out_entry(walked, None, false));
        assert!(e.leaves_out_entry(walked, Some(Path::new("docs/x.yaml")), false));
    }

    #[test]
    fn double_stars_cross_folders_and_a_trailing_slash_means_folders_only() {
        let e = exclude(&["clusters/**/flux-system", "ansible/", "/top.yaml"]);
        assert!(e.leaves_out_entry(Path::new("clusters/prod/flux-system"), None, true));
        assert!(e.leaves_out_entry(Path::new("clusters/a/b/flux-system"), None, true));
        assert!(e.leaves_out_entry(Path::new("infra/ansible"), None, true));
        assert!(!e.leaves_out_entry(Path::new("infra/ansible"), None, false));
        assert!(e.leaves_out_entry(Path::new("top.yaml"), None, false));
        assert!(!e.leaves_out_entry(Path::new("sub/top.yaml"), None, false));
    }

    #[test]
    fn a_named_file_is_left_out_by_its_name_or_a_folder_of_its_path() {
        let e = exclude(&["ansible", "docs/*.yaml"]);
        assert!(e.leaves_out_named(Path::new("./ansible/play.yml")));
        assert!(e.leaves_out_named(Path::new("/srv/repo/ansible/play.yml")));
        assert!(e.leaves_out_named(Path::new("docs/x.yaml")));
        assert!(e.leaves_out_named(Path::new("./docs/x.yaml")));
        assert!(!e.leaves_out_named(Path::new("vms/vm.yaml")));
        assert!(!e.leaves_out_named(Path::new("../docs/x.yaml")));
        // A folder-only pattern does not match the file itself.
        let e = exclude(&["vm.yaml/"]);
        assert!(!e.leaves_out_named(Path::new("vm.yaml")));
        assert!(e.leaves_out_named(Path::new("vm.yaml/inner.yaml")));
    }

    #[test]
    fn a_path_copied_from_a_finding_matches_what_the_finding_names() {
        // Walking `.` shows `./sub/x.yaml`; walking `/srv/repo` shows `/srv/repo/top.yaml`.
        let e = exclude(&["./sub/*.yaml", "./top.yaml", "/srv/repo/deep/y.yaml"]);
        let walked = |path: &str, relative: &str| {
            e.leaves_out_entry(&as_given(Path::new(path)), Some(Path::new(relative)), false)
        };
        assert!(walked("./sub/x.yaml", "sub/x.yaml"));
        assert!(walked("./top.yaml", "top.yaml"));
        assert!(!walked("./other/top.yaml", "other/top.yaml"));
        assert!(walked("/srv/repo/deep/y.yaml", "deep/y.yaml"));
        // As any anchored pattern, it also matches that path from a walked directory.
        assert!(walked(
            "/elsewhere/srv/repo/deep/y.yaml",
            "srv/repo/deep/y.yaml"
        ));
        assert!(!walked("/srv/repo/y.yaml", "y.yaml"));
        assert!(e.leaves_out_named(Path::new("/srv/repo/deep/y.yaml")));
        assert!(e.leaves_out_named(Path::new("sub/x.yaml")));
    }

    #[test]
    fn bad_patterns_are_usage_errors_naming_them() {
        for (pattern, why) in [
            ("a[b", "not a valid pattern"),
            ("/", "matches nothing"),
            ("", "matches nothing"),
            ("./", "matches nothing"),
            (".", "matches nothing"),
        ] {
            let err = Exclude::new(&[pattern.to_string()]).unwrap_err();
            let text = err.to_string();
            assert!(
                text.contains(&format!("--exclude {pattern:?}")) && text.contains(why),
                "{text}"
            );
        }
        assert!(exclude(&[]).is_empty());
        assert!(!exclude(&["x"]).is_empty());
        // Each pattern parses; together they compile past the matcher's size limit.
        let huge = "*".repeat(100_000);
        let err = Exclude::new(&[huge]).unwrap_err();
        assert!(
            err.to_string()
                .contains("--exclude: the patterns are too large to match with"),
            "{err}"
        );
    }

    #[test]
    fn an_absolute_pattern_matches_a_relative_path_from_the_directory_kvrender_runs_in() {
        let patterns = ["/srv/repo/docs/x.yaml", "/srv/repo/ansible/"].map(String::from);
        let e = Exclude::from_dirs(
            &patterns,
            vec![PathBuf::from("/real/repo"), PathBuf::from("/srv/repo")],
        )
        .unwrap();
        let walked = |path: &str, relative: &str, folder: bool| {
            e.leaves_out_entry(
                &as_given(Path::new(path)),
                Some(Path::new(relative)),
                folder,
            )
        };
        // Walking `.` in /srv/repo (or /real/repo, the same folder through a link).
        assert!(walked("./docs/x.yaml", "docs/x.yaml", false));
        assert!(walked("./ansible", "ansible", true));
        assert!(!walked("./ansible", "ansible", false));
        assert!(!walked("./docs/y.yaml", "docs/y.yaml", false));
        assert!(e.leaves_out_named(Path::new("docs/x.yaml")));
        // Walking `../docs` from another folder of the repository.
        let e = Exclude::from_dirs(&patterns, vec![PathBuf::from("/srv/repo/vms")]).unwrap();
        assert!(e.leaves_out_entry(
            Path::new("../docs/x.yaml"),
            Some(Path::new("x.yaml")),
            false
        ));
        // Relative patterns are not made absolute.
        let e = Exclude::from_dirs(&["docs/x.yaml".to_string()], vec!["/srv".into()]).unwrap();
        assert!(!e.leaves_out_entry(Path::new("repo/docs/x.yaml"), None, false));
    }
}

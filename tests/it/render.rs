//! The catalog renderer: the shipped catalog against kustomize's build of upstream
//! common-instancetypes, determinism across thread counts, the embedded copy, and snapshots
//! of a small example catalog and of template errors.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kvrender::load::{self, Source};
use kvrender::model::Object;
use kvrender::render::{self, RenderError, RenderErrors, RenderOptions, Rendered};
use serde_json::Value;

/// A path inside the repository, relative (cargo runs tests from the package root), so
/// origins in snapshots do not depend on where the checkout lives.
fn repo(path: &str) -> PathBuf {
    assert!(
        Path::new(path).exists(),
        "run from the package root: {path} not found"
    );
    PathBuf::from(path)
}

/// Read and parse `paths`, failing the test on any load diagnostic.
fn load_paths(paths: &[PathBuf]) -> (Vec<Source>, Vec<Object>) {
    let sources = load::read_paths(paths).expect("inputs are readable");
    let loaded = load::parse_sources(&sources);
    assert!(
        loaded.diagnostics.is_empty(),
        "load diagnostics: {:?}",
        loaded.diagnostics
    );
    (sources, loaded.objects)
}

fn render_dir(dir: &str) -> Rendered {
    let (sources, objects) = load_paths(&[repo(dir)]);
    let options = RenderOptions {
        sources: &sources,
        ..RenderOptions::default()
    };
    match render::render(&objects, &options) {
        Ok(r) => r,
        Err(e) => panic!("{}", report(&e)),
    }
}

/// Every error with its causes, one per line, errors apart by a blank line.
fn report(errors: &RenderErrors) -> String {
    errors
        .iter()
        .map(report_one)
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// An error with its causes, one per line.
fn report_one(e: &RenderError) -> String {
    let mut out = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        out.push_str("\n  caused by: ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}

fn stream(objects: &[Object]) -> String {
    let mut out = String::new();
    for o in objects {
        out.push_str("---\n");
        out.push_str(&load::yaml::to_string(&o.value));
    }
    out
}

fn keyed(objects: &[Object]) -> BTreeMap<(String, String), &Object> {
    objects
        .iter()
        .map(|o| ((o.kind_str().to_string(), o.name().to_string()), o))
        .collect()
}

fn field<'v>(o: &'v Object, path: &[&str]) -> Option<&'v Value> {
    kvrender::model::path::get(&o.value, path)
}

#[test]
fn catalog_renders_the_upstream_bundle() {
    let rendered = render_dir("catalog");
    let (_, bundle) = load_paths(&[repo("testdata/anchors/common-instancetypes-bundle.yaml")]);
    assert_eq!(bundle.len(), 244);
    let ours = keyed(&rendered.objects);
    let theirs = keyed(&bundle);
    let mut problems = Vec::new();
    for key in theirs.keys() {
        if !ours.contains_key(key) {
            problems.push(format!("missing {}/{}", key.0, key.1));
        }
    }
    for key in ours.keys() {
        if !theirs.contains_key(key) {
            problems.push(format!("extra {}/{}", key.0, key.1));
        }
    }
    let mut equal = 0;
    for (key, want) in &theirs {
        let Some(got) = ours.get(key) else { continue };
        let before = problems.len();
        for path in [&["spec"][..], &["metadata", "labels"][..]] {
            if field(got, path) != field(want, path) {
                problems.push(format!(
                    "{}/{}: `{}` differs\n  ours:     {}\n  upstream: {}",
                    key.0,
                    key.1,
                    path.join("."),
                    serde_json::to_string(&field(got, path)).unwrap_or_default(),
                    serde_json::to_string(&field(want, path)).unwrap_or_default(),
                ));
            }
        }
        let annotation_keys = |o: &Object| -> Vec<String> {
            let mut keys: Vec<String> = field(o, &["metadata", "annotations"])
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            keys.sort();
            keys
        };
        if annotation_keys(got) != annotation_keys(want) {
            problems.push(format!(
                "{}/{}: annotation keys differ: ours {:?}, upstream {:?}",
                key.0,
                key.1,
                annotation_keys(got),
                annotation_keys(want)
            ));
        }
        // Annotation values match too, but for the prose (written in the project's own words)
        // and the two URLs, which upstream wraps in stray quotes and a newline.
        let is_compared = |k: &str| {
            !k.ends_with("/description")
                && !["openshift.io/documentation-url", "openshift.io/support-url"].contains(&k)
        };
        for k in annotation_keys(want).iter().filter(|k| is_compared(k)) {
            let path = ["metadata", "annotations", k.as_str()];
            if field(got, &path) != field(want, &path) {
                problems.push(format!(
                    "{}/{}: annotation `{k}` differs: ours {:?}, upstream {:?}",
                    key.0,
                    key.1,
                    field(got, &path),
                    field(want, &path)
                ));
            }
        }
        if got.api_version() != want.api_version() {
            problems.push(format!("{}/{}: apiVersion differs", key.0, key.1));
        }
        if problems.len() == before {
            equal += 1;
        }
    }
    assert!(
        problems.is_empty(),
        "{equal}/{} objects equal; differences:\n{}",
        theirs.len(),
        problems.join("\n")
    );
    assert_eq!(equal, 244);
    // Same order as kustomize's output: by kind, then name.
    let order = |objects: &[Object]| -> Vec<(String, String)> {
        objects
            .iter()
            .map(|o| (o.kind_str().to_string(), o.name().to_string()))
            .collect()
    };
    assert_eq!(order(&rendered.objects), order(&bundle));
}

#[test]
fn catalog_annotations_carry_no_stray_quotes_or_newlines() {
    let rendered = render_dir("catalog");
    for o in &rendered.objects {
        let Some(annotations) = field(o, &["metadata", "annotations"]).and_then(Value::as_object)
        else {
            continue;
        };
        for key in ["openshift.io/documentation-url", "openshift.io/support-url"] {
            if let Some(url) = annotations.get(key).and_then(Value::as_str) {
                assert!(
                    url.starts_with("https://") && !url.contains(['"', '\n']),
                    "{}: {key} = {url:?}",
                    o.name()
                );
            }
        }
    }
}

#[test]
fn output_is_byte_identical_at_any_thread_count() {
    let (sources, objects) = load_paths(&[repo("catalog")]);
    let run = |threads: usize| -> String {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("thread pool");
        pool.install(|| {
            let options = RenderOptions {
                sources: &sources,
                version: Some("v1.2.3"),
                ..RenderOptions::default()
            };
            let rendered = render::render(&objects, &options).expect("renders");
            stream(&rendered.objects)
        })
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(2));
    assert_eq!(one, run(1));
    assert!(one.contains("instancetype.kubevirt.io/common-instancetypes-version: v1.2.3"));
}

#[test]
fn embedded_lookup_finds_each_object_of_the_embedded_catalog() {
    for object in render::embedded_catalog() {
        let kind = object.kind_str();
        let namespaced = matches!(
            kind,
            "VirtualMachineInstancetype" | "VirtualMachinePreference"
        );
        let namespace = if namespaced { "default" } else { "" };
        let found = render::embedded_lookup(kind, namespace, object.name())
            .unwrap_or_else(|| panic!("{kind} {} is not found", object.name()));
        // The very object the catalog lists, not a second rendering of it.
        assert!(std::ptr::eq(found, *object), "{kind} {}", object.name());
        if namespaced {
            assert!(render::embedded_lookup(kind, "team-a", object.name()).is_none());
        }
    }
    // A name of the other side, an unknown kind or name: nothing.
    assert!(render::embedded_lookup("VirtualMachineClusterPreference", "", "u1.medium").is_none());
    assert!(render::embedded_lookup("VirtualMachineClusterInstancetype", "", "fedora").is_none());
    assert!(render::embedded_lookup("ConfigMap", "default", "fedora").is_none());
    assert!(render::embedded_lookup("VirtualMachineClusterInstancetype", "", "u1.huge").is_none());
}

#[test]
fn embedded_catalog_is_the_rendered_catalog_dir() {
    let rendered = render_dir("catalog");
    let embedded = render::embedded_catalog();
    assert_eq!(embedded.len(), 244);
    let embedded_values: Vec<&Value> = embedded.iter().map(|o| &o.value).collect();
    let rendered_values: Vec<&Value> = rendered.objects.iter().map(|o| &o.value).collect();
    assert_eq!(embedded_values, rendered_values);
    assert!(embedded.iter().any(|o| o.name() == "u1.medium"));
    assert!(embedded.iter().any(|o| o.name() == "fedora"));
    // Origins point into the embedded file, at the size row.
    let medium = embedded
        .iter()
        .find(|o| o.name() == "u1.medium")
        .expect("u1.medium");
    assert_eq!(medium.origin.path.as_ref(), "catalog/instancetypes/u.yaml");
    let text = std::fs::read_to_string(repo("catalog/instancetypes/u.yaml")).expect("readable");
    let line = medium.origin.line.expect("line") as usize;
    assert!(
        text.lines()
            .nth(line - 1)
            .unwrap_or("")
            .contains("[medium,")
    );
}

#[test]
fn other_objects_pass_through_untouched() {
    let (sources, mut objects) = load_paths(&[repo("examples/catalog")]);
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keep, namespace: ns}\ndata: {z: '1', a: '2'}\n";
    let extra = load::parse_text(&Arc::from("extra.yaml"), text).objects;
    objects.insert(1, extra[0].clone());
    let rendered = render::render(
        &objects,
        &RenderOptions {
            sources: &sources,
            ..RenderOptions::default()
        },
    )
    .expect("renders");
    // Its position among the inputs, which `render` only borrowed.
    assert_eq!(rendered.passthrough, [1]);
    assert!(rendered.objects.iter().all(|o| o.kind_str() != "ConfigMap"));
}

// ---- snapshots --------------------------------------------------------------------------

fn snapshot_settings() -> insta::internals::SettingsBindDropGuard {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings.bind_to_scope()
}

#[test]
fn example_catalog_output() {
    let _guard = snapshot_settings();
    let rendered = render_dir("examples/catalog");
    let mut out = String::new();
    for (object, combination) in rendered.objects.iter().zip(&rendered.combinations) {
        out.push_str(&format!("# {} ({combination})\n", object.origin));
        out.push_str("---\n");
        out.push_str(&load::yaml::to_string(&object.value));
    }
    insta::assert_snapshot!("render__example_catalog_output", out);
}

/// Render one in-memory catalog file, expecting an error; return the report with the file's
/// numbered lines around the reported one.
fn render_error(text: &str) -> String {
    let errors = render_at("bad/catalog.yaml", text).expect_err("the catalog is broken");
    let mut reports = Vec::new();
    for err in &errors {
        let mut out = report_one(err);
        if let Some(line) = err.location().line {
            let line = line as usize;
            out.push_str("\n\n");
            for (i, l) in text.lines().enumerate() {
                let n = i + 1;
                if n + 2 >= line && n <= line + 1 {
                    let mark = if n == line { ">" } else { " " };
                    out.push_str(&format!("{mark}{n:3} | {l}\n"));
                }
            }
        }
        reports.push(out);
    }
    reports.join("\n")
}

const FAMILY_HEAD: &str = "\
apiVersion: kvrender.io/v1alpha1
kind: InstancetypeFamily
metadata:
  name: t
spec:
  version: 1
  sizes:
    - [small, 1, 2Gi]
    - [large, 4, 8Gi, {disk: 10Gi}]
";

#[test]
fn template_error_undefined_size_field() {
    let _guard = snapshot_settings();
    let text = format!(
        "{FAMILY_HEAD}  template:\n    spec:\n      cpu:\n        guest: \"{{{{ size.cpu }}}}\"\n      disk: \"{{{{ size.disk }}}}\"\n"
    );
    insta::assert_snapshot!(
        "render__template_error_undefined_size_field",
        render_error(&text)
    );
}

/// Every mistake of a catalog is reported at once: two families and a preference that each
/// fail, one of them for every size (reported once), and nothing from a later step.
#[test]
fn several_template_errors_are_reported_together() {
    let _guard = snapshot_settings();
    let text = "\
apiVersion: kvrender.io/v1alpha1
kind: InstancetypeFamily
metadata: {name: a}
spec:
  version: 1
  sizes:
    - [small, 1, 2Gi]
    - [large, 4, 8Gi]
  template:
    spec:
      cpu:
        guest: \"{{ size.cpus }}\"
---
apiVersion: kvrender.io/v1alpha1
kind: InstancetypeFamily
metadata: {name: b}
spec:
  version: 1
  sizes:
    - [small, 1, 2Gi]
  template:
    spec:
      memory:
        guest: \"{{ size.memory | nosuchfilter }}\"
---
apiVersion: kvrender.io/v1alpha1
kind: Preference
metadata: {name: office}
spec:
  template:
    metadata:
      annotations:
        note: \"{{ vars.site }}\"
";
    let report = render_error(text);
    assert_eq!(
        report.matches("cannot render").count(),
        3,
        "one report per failing leaf:\n{report}"
    );
    insta::assert_snapshot!(
        "render__several_template_errors_are_reported_together",
        report
    );
}

/// A leaf that fails for some sizes only is reported once, for the first size it fails for,
/// naming the others; the sizes it renders for are not named.
#[test]
fn a_leaf_failing_for_some_sizes_names_each_of_them() {
    let family = |failing: &str| {
        format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {{name: t}}\n\
             spec:\n  version: 1\n  sizes:\n    - [small, 1, 2Gi]\n    - [medium, 2, 4Gi]\n    \
             - [large, 4, 8Gi]\n    - [xlarge, 8, 16Gi]\n    - [2xlarge, 16, 32Gi]\n    \
             - [4xlarge, 32, 64Gi]\n  template:\n    spec:\n      cpu:\n        \
             guest: \"{{{{ size.nosuch if size.name in {failing} else size.cpu }}}}\"\n      \
             memory: {{guest: 1Gi}}\n"
        )
    };
    for (failing, says) in [
        (
            "['medium', 'xlarge']",
            "size `medium` (and 1 more: size `xlarge`)",
        ),
        (
            "['small', 'medium', 'large', 'xlarge', '2xlarge', '4xlarge']",
            "size `small` (and 5 more: size `medium`, size `large`, size `xlarge`, …)",
        ),
        (
            "['large']",
            "size `large` (the size row has no field `nosuch`",
        ),
    ] {
        let report = render_error(&family(failing));
        assert_eq!(report.matches("cannot render").count(), 1, "{report}");
        assert!(
            report.contains(&format!(
                "cannot render `spec.template.spec.cpu.guest` for family `t1` {says}"
            )),
            "{report}"
        );
    }
}

/// A label or annotation that renders to a mapping or a list is refused at its own line, and
/// every such entry in one run, whether the preference's own `labels` or its template's
/// metadata holds it.
#[test]
fn every_label_of_the_wrong_type_is_reported_at_its_line() {
    let text = "\
apiVersion: kvrender.io/v1alpha1
kind: Preference
metadata: {name: lp}
spec:
  labels:
    example.com/ok: \"x\"
    example.com/map: \"{{ {'a': 1} }}\"
    example.com/list: \"{{ [1, 2] }}\"
  template:
    metadata:
      annotations:
        note: \"{{ ['a'] }}\"
    spec:
      devices: {preferredDiskBus: virtio}
";
    let report = render_error(text);
    for (line, field) in [
        (7, "metadata.labels[\"example.com/map\"]"),
        (8, "metadata.labels[\"example.com/list\"]"),
        (12, "metadata.annotations.note"),
    ] {
        assert!(
            report.contains(&format!("bad/catalog.yaml:{line}: cannot render `{field}`")),
            "no {field} at line {line}:\n{report}"
        );
    }
    assert_eq!(
        report
            .matches("must be a string, number or boolean")
            .count(),
        3,
        "{report}"
    );
}

/// A label or annotation of the wrong type written in a shared part is reported at the part's
/// line, once for every family and preference that uses the part, not at each user's size row.
#[test]
fn a_label_of_the_wrong_type_in_a_part_is_reported_at_the_part() {
    let text = "\
apiVersion: kvrender.io/v1alpha1
kind: Parts
metadata: {name: shared}
parts:
  base:
    metadata:
      labels: {example.com/list: [x]}
      annotations:
        note: {a: b}
    spec:
      cpu: {guest: \"{{ size.cpu }}\"}
      memory: {guest: \"{{ size.memory }}\"}
---
apiVersion: kvrender.io/v1alpha1
kind: InstancetypeFamily
metadata: {name: z}
spec:
  parts: [base]
  sizes: [[small, 2, 4Gi]]
";
    let report = render_error(text);
    for (line, field) in [
        (7, "metadata.labels[\"example.com/list\"]"),
        (9, "metadata.annotations.note"),
    ] {
        assert!(
            report.contains(&format!("bad/catalog.yaml:{line}: cannot render `{field}`")),
            "no {field} at line {line}:\n{report}"
        );
    }
}

/// A template or part cannot give the rendered objects another kind, API version or name: they
/// would be dropped without a word, so each is refused at its line.
#[test]
fn a_template_or_part_that_sets_the_identity_is_refused() {
    let family = |template: &str| {
        format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {{name: z}}\n\
             spec:\n  template:\n{template}    spec:\n      cpu: {{guest: 1}}\n      \
             memory: {{guest: 1Gi}}\n  sizes: [[small, 1, 1Gi]]\n"
        )
    };
    for (template, line, field) in [
        ("    kind: ConfigMap\n", 6, "template.kind"),
        ("    apiVersion: v1\n", 6, "template.apiVersion"),
        (
            "    metadata:\n      name: other\n",
            7,
            "template.metadata.name",
        ),
    ] {
        let report = render_error(&family(template));
        assert!(
            report.contains(&format!("bad/catalog.yaml:{line}: "))
                && report.contains(&format!("`{field}` cannot be set")),
            "{field}:\n{report}"
        );
    }
    let part = "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nmetadata: {name: p}\nparts:\n  \
                base:\n    metadata:\n      name: renamed\n";
    let report = render_error(part);
    assert!(
        report.contains("bad/catalog.yaml:7: ")
            && report.contains("`metadata.name` of part `base` cannot be set"),
        "{report}"
    );
}

/// Render one in-memory catalog file.
fn render_text(text: &str) -> Result<Rendered, RenderErrors> {
    render_at("ns/catalog.yaml", text)
}

/// Render one in-memory catalog file read from `path`.
fn render_at(path: &str, text: &str) -> Result<Rendered, RenderErrors> {
    let path: Arc<str> = Arc::from(path);
    let sources = [Source {
        path: path.clone(),
        bytes: text.as_bytes().to_vec(),
    }];
    let loaded = load::parse_text(&path, text);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    let options = RenderOptions {
        sources: &sources,
        ..RenderOptions::default()
    };
    render::render(&loaded.objects, &options)
}

fn preference_in(namespace: &str, scopes: &str) -> String {
    format!(
        "apiVersion: kvrender.io/v1alpha1\nkind: Preference\nmetadata: {{name: desk, namespace: {namespace}}}\n\
         spec:\n  scopes: [{scopes}]\n  template: {{spec: {{devices: {{preferredDiskBus: virtio}}}}}}\n"
    )
}

/// Each object's kind and namespace, in order.
fn kinds_and_namespaces(objects: &[kvrender::model::Object]) -> Vec<(&str, Option<&str>)> {
    objects
        .iter()
        .map(|o| (o.kind_str(), o.namespace()))
        .collect()
}

/// A catalog document's namespace (its own, or one kustomize's `namespace:` set) is its
/// namespaced objects' namespace; the cluster-scoped ones have none.
#[test]
fn a_catalog_documents_namespace_is_its_namespaced_objects() {
    let rendered = render_text(&preference_in("team-a", "cluster, namespaced")).expect("renders");
    assert_eq!(
        kinds_and_namespaces(&rendered.objects),
        [
            ("VirtualMachineClusterPreference", None),
            ("VirtualMachinePreference", Some("team-a"))
        ]
    );
    // A namespace the template names wins.
    let text = preference_in("team-a", "namespaced").replace(
        "template: {spec:",
        "template: {metadata: {namespace: team-b}, spec:",
    );
    let rendered = render_text(&text).expect("renders");
    assert_eq!(rendered.objects[0].namespace(), Some("team-b"));
}

#[test]
fn one_name_in_two_namespaces_is_two_objects_in_one_namespace_a_duplicate() {
    let two = format!(
        "{}---\n{}",
        preference_in("team-a", "namespaced"),
        preference_in("team-b", "namespaced")
    );
    let rendered = render_text(&two).expect("two namespaces, two objects");
    assert_eq!(rendered.objects.len(), 2);
    let same = format!(
        "{}---\n{}",
        preference_in("team-a", "namespaced"),
        preference_in("team-a", "namespaced")
    );
    let errors = render_text(&same).expect_err("one namespace, one object");
    assert_eq!(errors.len(), 1, "{errors}");
    assert_eq!(errors.first().code(), "KV020");
    // Cluster-scoped objects have no namespace to tell them apart.
    let both = format!(
        "{}---\n{}",
        preference_in("team-a", "cluster, namespaced"),
        preference_in("team-b", "cluster, namespaced")
    );
    let errors = render_text(&both).expect_err("one cluster-scoped name, twice");
    assert_eq!(errors.len(), 1, "{errors}");
    assert!(
        errors
            .to_string()
            .contains("VirtualMachineClusterPreference"),
        "{errors}"
    );
}

/// Objects of one kind and name in several namespaces come out by namespace, whatever the
/// order of the documents (and whether the document or its template names the namespace).
#[test]
fn one_name_in_several_namespaces_comes_out_by_namespace() {
    let templated = preference_in("team-x", "namespaced").replace(
        "template: {spec:",
        "template: {metadata: {namespace: team-a}, spec:",
    );
    let documents = [
        preference_in("team-c", "namespaced"),
        templated,
        preference_in("team-b", "namespaced"),
    ];
    let mut streams = Vec::new();
    for order in [[0, 1, 2], [2, 1, 0], [1, 2, 0]] {
        let text = order.map(|i| documents[i].as_str()).join("---\n");
        let rendered = render_text(&text).expect("three namespaces, three objects");
        assert_eq!(
            kinds_and_namespaces(&rendered.objects),
            [
                ("VirtualMachinePreference", Some("team-a")),
                ("VirtualMachinePreference", Some("team-b")),
                ("VirtualMachinePreference", Some("team-c")),
            ]
        );
        streams.push(stream(&rendered.objects));
    }
    assert!(streams.iter().all(|s| *s == streams[0]));
}

#[test]
fn a_namespace_that_is_not_a_string_is_refused() {
    let errors = render_text(&preference_in("[a]", "namespaced")).expect_err("a list");
    assert!(
        errors
            .to_string()
            .starts_with("ns/catalog.yaml:3: `metadata.namespace` must be a string"),
        "{errors}"
    );
}

/// Documents that do not follow the format are all reported, and rendering stops there.
#[test]
fn several_malformed_documents_are_reported_together() {
    let text = "\
apiVersion: kvrender.io/v1alpha1
kind: InstancetypeFamily
metadata: {name: a}
spec:
  version: 1
  sizes: 3
---
apiVersion: kvrender.io/v1alpha1
kind: Preference
metadata: {name: office}
spec:
  parts: [no-such-part]
---
apiVersion: kvrender.io/v1alpha1
kind: Parts
metadata: {name: p}
parts: [one, two]
";
    let errors = render_at("bad/catalog.yaml", text).expect_err("the catalog is broken");
    let lines: Vec<Option<u32>> = errors.iter().map(|e| e.location().line).collect();
    // The family's `sizes` and the Parts document's `parts`: the unknown part of the
    // preference belongs to the next step, which does not run.
    assert_eq!(lines, [Some(6), Some(17)], "{errors}");
    assert!(
        errors.to_string().ends_with("(and 1 more error)"),
        "{errors}"
    );
}

#[test]
fn template_error_in_a_block_scalar_of_a_part() {
    let _guard = snapshot_settings();
    let text = "\
apiVersion: kvrender.io/v1alpha1
kind: Parts
metadata: {name: p}
parts:
  notes:
    metadata:
      annotations:
        note: |
          Built for {{ preference.name }}
          on {{ vars.site }}.
---
apiVersion: kvrender.io/v1alpha1
kind: Preference
metadata: {name: office}
spec:
  parts: [notes]
";
    insta::assert_snapshot!(
        "render__template_error_in_a_block_scalar_of_a_part",
        render_error(text)
    );
}

#[test]
fn template_error_syntax() {
    let _guard = snapshot_settings();
    let text = format!(
        "{FAMILY_HEAD}  variants:\n    - suffix: \"\"\n    - suffix: hp\n  labels:\n    example.com/tier: \"{{% if size.cpu > 2 %}}big\"\n"
    );
    insta::assert_snapshot!("render__template_error_syntax", render_error(&text));
}

#[test]
fn catalog_error_unknown_part() {
    let _guard = snapshot_settings();
    let text = "\
apiVersion: kvrender.io/v1alpha1
kind: Parts
metadata: {name: p}
parts:
  linux: {spec: {annotations: {os: linux}}}
---
apiVersion: kvrender.io/v1alpha1
kind: Preference
metadata: {name: office}
spec:
  parts:
    - linux
    - linx
";
    insta::assert_snapshot!("render__catalog_error_unknown_part", render_error(text));
}

#[test]
fn catalog_error_unknown_trait() {
    let _guard = snapshot_settings();
    let text = "\
apiVersion: kvrender.io/v1alpha1
kind: Parts
metadata: {name: p}
parts:
  it: {defaults: {numa: false}}
---
apiVersion: kvrender.io/v1alpha1
kind: InstancetypeFamily
metadata: {name: t}
spec:
  parts: [it]
  traits:
    nmua: true
  sizes: [[small, 1, 1Gi]]
";
    insta::assert_snapshot!("render__catalog_error_unknown_trait", render_error(text));
}

/// A trait written on a variant itself, not under its `traits`, would change nothing.
#[test]
fn catalog_error_trait_outside_a_variants_traits() {
    let _guard = snapshot_settings();
    let text = "\
apiVersion: kvrender.io/v1alpha1
kind: Parts
metadata: {name: p}
parts:
  it: {defaults: {hugepages: null}}
---
apiVersion: kvrender.io/v1alpha1
kind: InstancetypeFamily
metadata: {name: t}
spec:
  parts: [it]
  variants:
    - suffix: \"\"
    - suffix: 1gi
      hugepages: 1Gi
    - suffix: 2mi
      traits: {hugepages: 2Mi}
      pageSize: 2Mi
  sizes: [[small, 1, 1Gi]]
";
    insta::assert_snapshot!(
        "render__catalog_error_trait_outside_a_variants_traits",
        render_error(text)
    );
}

/// A malformed size row names its family as well as its line.
#[test]
fn catalog_error_size_row_names_the_family() {
    let _guard = snapshot_settings();
    let text = "\
apiVersion: kvrender.io/v1alpha1
kind: InstancetypeFamily
metadata: {name: db}
spec:
  version: 1
  sizes:
    - [small, 2, 8Gi]
    - [medium, 4]
";
    insta::assert_snapshot!(
        "render__catalog_error_size_row_names_the_family",
        render_error(text)
    );
}

/// A row that forgot its memory, its extra fields in the memory's cell, is refused at that
/// cell when the table is read, not where a template reads the extra fields; so is a list
/// where the vCPUs belong.
#[test]
fn catalog_error_extra_fields_where_the_memory_belongs() {
    for (row, cell, said) in [
        (
            "[small, 4, {gpu: t4}]",
            "third",
            "its memory, not a mapping",
        ),
        ("[small, [4], 16Gi]", "second", "its cpu, not a list"),
    ] {
        let text = format!(
            "\
apiVersion: kvrender.io/v1alpha1
kind: InstancetypeFamily
metadata: {{name: g}}
spec:
  version: 2
  sizes:
    - [large, 16, 64Gi, {{gpu: a100}}]
    - {row}
  template:
    spec:
      gpus: [{{name: gpu0, deviceName: \"{{{{ size.gpu }}}}\"}}]
"
        );
        let report = render_error(&text);
        assert!(
            report.contains(&format!(
                "bad/catalog.yaml:8: family `g2`: the {cell} cell of a size row is {said}: a row \
                 is `[name, cpu, memory]` or `[name, cpu, memory, {{extra}}]`"
            )),
            "{row}: {report}"
        );
        assert!(!report.contains("undefined"), "{row}: {report}");
    }
}

/// A row's fourth cell adds fields; it may not say again what the positional cells say.
#[test]
fn catalog_error_extra_cell_repeating_a_positional_one() {
    let _guard = snapshot_settings();
    let text = "\
apiVersion: kvrender.io/v1alpha1
kind: InstancetypeFamily
metadata: {name: db}
spec:
  version: 1
  sizes:
    - [small, 2, 8Gi, {ratio: 2}]
    - [medium, 4, 16Gi, {cpu: 9}]
";
    insta::assert_snapshot!(
        "render__catalog_error_extra_cell_repeating_a_positional_one",
        render_error(text)
    );
}

/// YAML reads a bare `y` as a boolean: the name is there, but not as text.
#[test]
fn catalog_error_preference_name_that_is_not_text() {
    let _guard = snapshot_settings();
    let text = "\
apiVersion: kvrender.io/v1alpha1
kind: Preference
metadata:
  name: y
spec: {}
";
    insta::assert_snapshot!(
        "render__catalog_error_preference_name_that_is_not_text",
        render_error(text)
    );
}

#[test]
fn catalog_error_duplicate_name() {
    let _guard = snapshot_settings();
    let text = "\
apiVersion: kvrender.io/v1alpha1
kind: Preference
metadata: {name: same}
spec: {}
---
apiVersion: kvrender.io/v1alpha1
kind: Preference
metadata: {name: same}
spec: {}
";
    insta::assert_snapshot!("render__catalog_error_duplicate_name", render_error(text));
}

/// A catalog document without a namespace is in `default`, as kustomize and the API server
/// place what it renders: beside one that names `default`, it is the same definition twice.
#[test]
fn a_preference_in_default_twice_is_one_finding() {
    let text = "\
apiVersion: kvrender.io/v1alpha1
kind: Preference
metadata: {name: same}
spec: {}
---
apiVersion: kvrender.io/v1alpha1
kind: Preference
metadata: {name: same, namespace: default}
spec: {}
";
    let report = render_error(text);
    assert_eq!(report.matches("is defined twice").count(), 1, "{report}");
    assert!(!report.contains("rendered twice"), "{report}");
}

/// Two versions of one class written as two documents of one name: refused like any second
/// definition, with the way to write them; one version twice gets no such hint.
#[test]
fn two_versions_of_one_class_are_told_how_to_be_written() {
    let family = |version: &str| {
        format!(
            "---\napiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {{name: u}}\n\
             spec: {{version: {version}, sizes: [[small, 1, 1Gi]]}}\n"
        )
    };
    let report = render_error(&(family("1") + &family("2")));
    assert_eq!(report.matches("is defined twice").count(), 1, "{report}");
    assert!(
        report.contains("write `name: u1` and `name: u2` without `version`"),
        "{report}"
    );
    let report = render_error(&(family("1") + &family("1")));
    assert!(report.contains("is defined twice"), "{report}");
    assert!(!report.contains("without `version`"), "{report}");
}

/// Two families of other names that render one object (`t` at version 1 and `t1` without a
/// version both make `t1.small`): each object the two share is reported.
#[test]
fn catalog_error_rendered_twice() {
    let _guard = snapshot_settings();
    let text = format!(
        "{FAMILY_HEAD}  template:\n    spec: {{cpu: {{guest: 1}}, memory: {{guest: 1Gi}}}}\n---\n\
         apiVersion: {API}\nkind: InstancetypeFamily\nmetadata: {{name: t1}}\nspec:\n  \
         sizes: [[small, 1, 2Gi]]\n  \
         template: {{spec: {{cpu: {{guest: 1}}, memory: {{guest: 1Gi}}}}}}\n"
    );
    insta::assert_snapshot!("render__catalog_error_rendered_twice", render_error(&text));
}

const API: &str = "kvrender.io/v1alpha1";

/// A part whose `metadata` renders to a list would leave the object nowhere to hold its
/// name: a finding at the part's `metadata`, not a crash.
#[test]
fn catalog_error_part_metadata_not_a_mapping() {
    let _guard = snapshot_settings();
    let parts = "kind: Parts\nmetadata: {name: p}\n\
                 parts: {odd: {metadata: [a, b], spec: {devices: {preferredDiskBus: virtio}}}}";
    let preference = "kind: Preference\nmetadata: {name: office}\nspec: {parts: [odd]}";
    let text = format!("apiVersion: {API}\n{parts}\n---\napiVersion: {API}\n{preference}\n");
    insta::assert_snapshot!(
        "render__catalog_error_part_metadata_not_a_mapping",
        render_error(&text)
    );
}

/// The same for a family's own template, whose `metadata` renders to a string.
#[test]
fn catalog_error_template_metadata_not_a_mapping() {
    let _guard = snapshot_settings();
    let text = format!("{FAMILY_HEAD}  template:\n    metadata: \"{{{{ name }}}}\"\n");
    insta::assert_snapshot!(
        "render__catalog_error_template_metadata_not_a_mapping",
        render_error(&text)
    );
}

/// The worked example of the README's catalog section: its first YAML block renders to the
/// object shown in the second.
#[test]
fn documented_example_renders_as_shown() {
    let readme = std::fs::read_to_string(repo("README.md")).expect("readable");
    let doc = readme
        .split("## The catalog format")
        .nth(1)
        .expect("the README has a catalog section");
    let blocks: Vec<&str> = doc
        .split("```yaml\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .collect();
    let path: Arc<str> = Arc::from("README.md");
    let input = load::parse_text(&path, blocks[0]);
    assert!(input.diagnostics.is_empty(), "{:?}", input.diagnostics);
    let rendered = render::render(&input.objects, &RenderOptions::default())
        .unwrap_or_else(|e| panic!("{}", report(&e)));
    let names: Vec<String> = rendered
        .objects
        .iter()
        .map(|o| format!("{}/{}", o.kind_str(), o.name()))
        .collect();
    assert_eq!(rendered.objects.len(), 9, "{names:?}");
    let shown = load::parse_text(&path, blocks[1]).objects;
    let got = rendered
        .objects
        .iter()
        .find(|o| o.kind_str() == "VirtualMachineClusterInstancetype" && o.name() == "g2.largehp")
        .expect("g2.largehp");
    assert_eq!(got.value, shown[0].value);
}

/// The Parts section's example in the README, which names shipped parts only.
fn readme_parts_example() -> String {
    let readme = std::fs::read_to_string(repo("README.md")).unwrap();
    let start = readme
        .find("```yaml\napiVersion: kvrender.io/v1alpha1\nkind: Preference\nmetadata: {name: windows.11}")
        .expect("the README's Parts example");
    let body = &readme[start + "```yaml\n".len()..];
    body[..body.find("```").unwrap()].to_string()
}

/// Render `text` (at `user.yaml`) with `more` (at `more.yaml`) as `--catalog` parts and the
/// shipped parts when `shipped`.
fn render_borrowing(text: &str, more: &str, shipped: bool) -> Result<Rendered, RenderErrors> {
    let source = |path: &str, text: &str| Source {
        path: Arc::from(path),
        bytes: text.as_bytes().to_vec(),
    };
    let sources = [source("user.yaml", text)];
    let more_sources = [source("more.yaml", more)];
    let objects = load::parse_sources(&sources).objects;
    let more_parts = load::parse_sources(&more_sources).objects;
    let options = RenderOptions {
        sources: &sources,
        more_parts: &more_parts,
        more_sources: &more_sources,
        shipped_parts: shipped,
        ..RenderOptions::default()
    };
    render::render(&objects, &options)
}

/// A preference that names shipped parts without defining them renders as the shipped
/// catalog's own preference of the same parts does; without the shipped parts, every unknown
/// name is reported, naming the preference and that the shipped catalog, turned off, has it.
#[test]
fn a_catalog_borrows_the_shipped_parts() {
    let example = readme_parts_example();
    let rendered =
        render_borrowing(&example, "", true).unwrap_or_else(|e| panic!("{}", report(&e)));
    assert_eq!(rendered.objects.len(), 2);
    for object in &rendered.objects {
        let shipped = render::embedded_lookup(object.kind_str(), "default", object.name())
            .expect("the shipped catalog has windows.11");
        assert_eq!(object.value, shipped.value, "{}", object.kind_str());
    }

    let errors = render_borrowing(&example, "", false).unwrap_err();
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        messages,
        ["windows", "cores", "secureboot", "persistent-efi", "tpm"].map(|p| format!(
            "user.yaml:6: preference `windows.11`: unknown part `{p}`: the shipped catalog \
                 has it, but is turned off here (`--no-default-catalog`)"
        )),
    );
}

/// Parts come from the catalog itself first, then the `--catalog` files, then the shipped
/// catalog; a part of the catalog replaces a borrowed one of its name everywhere, also where
/// a borrowed part builds on it.
#[test]
fn a_catalogs_own_part_replaces_a_borrowed_one_everywhere() {
    let user = "\
apiVersion: kvrender.io/v1alpha1
kind: Parts
metadata: {name: mine}
parts:
  base:
    metadata: {labels: {example.com/base: mine}}
  tpm:
    spec: {devices: {preferredTPM: {persistent: false}}}
---
apiVersion: kvrender.io/v1alpha1
kind: Preference
metadata: {name: w}
spec:
  displayName: W
  scopes: [cluster]
  parts: [windows, tpm, team]
  vars: {cpu: 2, memory: 4Gi}
";
    let more = "\
apiVersion: kvrender.io/v1alpha1
kind: Parts
metadata: {name: theirs}
parts:
  team:
    defaults: {team: infra}
    metadata: {labels: {example.com/team: \"{{ vars.team }}\"}}
  tpm:
    spec: {devices: {preferredTPM: {persistent: true}}}
";
    let rendered = render_borrowing(user, more, true).unwrap_or_else(|e| panic!("{}", report(&e)));
    let [w] = rendered.objects.as_slice() else {
        panic!("one object expected");
    };
    // The user's `tpm` wins over the `--catalog` one; `team` comes from `--catalog`.
    assert_eq!(
        field(w, &["spec", "devices", "preferredTPM", "persistent"]),
        Some(&Value::Bool(false))
    );
    let labels = field(w, &["metadata", "labels"]).unwrap();
    assert_eq!(labels["example.com/team"], "infra");
    // The shipped `windows` builds on the user's `base`, which replaces the shipped one.
    assert_eq!(labels["example.com/base"], "mine");
    assert!(
        labels.get("instancetype.kubevirt.io/vendor").is_none(),
        "{labels}"
    );
    assert_eq!(labels["instancetype.kubevirt.io/os-type"], "windows");
}

/// A template error in the catalog's own part, rendered only because a borrowed part names a
/// part of its name, says how it got there.
#[test]
fn an_error_in_an_own_part_a_borrowed_part_names_says_so() {
    let user = "\
apiVersion: kvrender.io/v1alpha1
kind: Parts
metadata: {name: mine}
parts:
  base:
    metadata: {labels: {example.com/cpu: \"{{ size.cpu }}\"}}
---
apiVersion: kvrender.io/v1alpha1
kind: Preference
metadata: {name: w}
spec:
  scopes: [cluster]
  parts: [windows]
  vars: {cpu: 2, memory: 4Gi}
";
    let errors = render_borrowing(user, "", true).unwrap_err();
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].starts_with(
            "user.yaml:6: cannot render `parts.base.metadata.labels[\"example.com/cpu\"]` for \
             preference `w` (the part `windows` of <shipped>/catalog/preferences/parts.yaml \
             names `base`, and this catalog's own `base` stands in for its namesake there)"
        ),
        "{messages:?}"
    );
}

/// Every mistake inside one object is reported: each failing template leaf (in its parts, its
/// template and its labels), each undeclared trait (the family's and its variants'), each
/// unknown part.
#[test]
fn every_mistake_of_one_object_is_reported() {
    let leaves = "\
apiVersion: kvrender.io/v1alpha1
kind: Parts
metadata: {name: p}
parts:
  shape:
    spec: {ioThreadsPolicy: \"{{ traits.io }}\"}
---
apiVersion: kvrender.io/v1alpha1
kind: InstancetypeFamily
metadata: {name: t}
spec:
  parts: [shape]
  sizes: [[small, 1, 1Gi]]
  labels:
    example.com/disk: \"{{ size.disk }}\"
  template:
    spec:
      cpu: {guest: \"{{ size.cpus }}\"}
      memory: {guest: \"{{ size.memory }}\"}
";
    let errors = render_text(leaves).unwrap_err();
    let fields: Vec<String> = errors
        .iter()
        .map(|e| match e {
            RenderError::Template { field, .. } => field.clone(),
            other => panic!("not a template error: {other}"),
        })
        .collect();
    assert_eq!(
        fields,
        [
            "parts.shape.spec.ioThreadsPolicy",
            "spec.template.spec.cpu.guest",
            "spec.labels[\"example.com/disk\"]",
        ]
    );

    let traits = "\
apiVersion: kvrender.io/v1alpha1
kind: Parts
metadata: {name: p}
parts:
  it: {defaults: {numa: false}}
---
apiVersion: kvrender.io/v1alpha1
kind: InstancetypeFamily
metadata: {name: t}
spec:
  parts: [it, nope]
  traits: {nmua: true}
  variants:
    - {suffix: \"\"}
    - {suffix: x, traits: {hugepages: true}}
  sizes: [[small, 1, 1Gi]]
";
    let errors = render_text(traits).unwrap_err();
    assert_eq!(
        errors.len(),
        1,
        "an unknown part stops before traits: {errors}"
    );
    assert!(errors.first().to_string().contains("unknown part `nope`"));
    // The finding names the document that names the part, as the other catalog errors do.
    match errors.first() {
        RenderError::UnknownPart {
            object: Some(object),
            ..
        } => assert_eq!(object.to_string(), "InstancetypeFamily/t"),
        other => panic!("{other:?}"),
    }
    let errors = render_text(&traits.replace("[it, nope]", "[it]")).unwrap_err();
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].contains("unknown trait `nmua`"), "{messages:?}");
    assert!(
        messages[1].contains("unknown trait `hugepages`"),
        "{messages:?}"
    );
    // Nothing near it: how to add one is said.
    assert!(
        messages[1].ends_with(
            "the family's parts declare: numa; a new trait needs a default in a part's \
             `defaults` (`null` for none)"
        ),
        "{messages:?}"
    );
    assert!(!messages[0].contains("a new trait"), "{messages:?}");
}

/// A size or a variant listed twice names the first of the two.
#[test]
fn a_size_or_variant_listed_twice_names_the_first() {
    let family = |sizes: &str, variants: &str| {
        format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {{name: t}}\n\
             spec:\n  template:\n    spec: {{cpu: {{guest: 1}}, memory: {{guest: 1Gi}}}}\n\
             {variants}  sizes:\n{sizes}"
        )
    };
    let sizes = "  - [small, 1, 1Gi]\n  - [large, 2, 2Gi]\n  - [small, 4, 4Gi]\n";
    let errors = render_text(&family(sizes, "")).unwrap_err();
    assert!(
        errors
            .first()
            .to_string()
            .ends_with(":10: family `t`: size `small` is listed twice (first at line 8)"),
        "{errors}"
    );
    let variants = "  variants:\n  - {suffix: \"\"}\n  - {suffix: a}\n  - {}\n";
    let errors = render_text(&family("  - [small, 1, 1Gi]\n", variants)).unwrap_err();
    assert!(
        errors.first().to_string().ends_with(
            ":10: family `t`: the plain variant (no `suffix`) is listed twice (first at line 8)"
        ),
        "{errors}"
    );
}

/// A class prefix that makes every object name invalid is one error at the field to change,
/// not one per object at each size row.
#[test]
fn a_family_whose_every_name_is_invalid_is_told_once_where_to_change_it() {
    let family = |name: &str, version: &str| {
        format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata:\n  name: {name}\n\
             spec:\n  version: {version}\n  template:\n    spec: {{cpu: {{guest: 1}}, memory: {{guest: 1Gi}}}}\n\
             \x20 sizes:\n  - [small, 1, 1Gi]\n  - [large, 2, 2Gi]\n"
        )
    };
    let errors = render_text(&family("U", "\"1\"")).unwrap_err();
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].ends_with(
            ":4: family `U1`: every object it renders is named \"U1.\" and a size, which is not \
             a valid Kubernetes name: it contains an uppercase letter"
        ),
        "{messages:?}"
    );
    // The version at fault: its line.
    let errors = render_text(&family("u", "\"1_\"")).unwrap_err();
    assert!(
        errors.first().to_string().contains(":6: family `u1_`: "),
        "{errors}"
    );
    // A valid prefix renders.
    assert_eq!(render_text(&family("u", "\"1\"")).unwrap().objects.len(), 4);
    // So is a variant suffix no name may end with: once, at the suffix.
    let variant = |suffix: &str| {
        format!(
            "{}  variants:\n  - {{}}\n  - {{suffix: {suffix}}}\n",
            family("u", "\"1\"")
        )
    };
    for (suffix, why) in [
        ("/a100", "it contains `/`"),
        ("-gpu-", "each `.`-separated part"),
    ] {
        let errors = render_text(&variant(suffix)).unwrap_err();
        let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(
            messages[0].contains(&format!(
                ":14: family `u1`: every object of variant `{suffix}` is named \"u1.SIZE{suffix}\", \
                 which is not a valid Kubernetes name: {why}"
            )),
            "{messages:?}"
        );
    }
    assert_eq!(render_text(&variant("gpu")).unwrap().objects.len(), 8);
}

/// A misspelt field of a family's `spec` or of a part names the field meant.
#[test]
fn a_misspelt_catalog_field_gets_a_did_you_mean() {
    let family = "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata:\n  \
                  name: u\nspec:\n  version: 1\n  displayname: U\n  sizes: [[small, 1, 1Gi]]\n";
    let errors = render_text(family).unwrap_err();
    assert!(
        errors.first().to_string().contains(
            ":7: unknown field `spec.displayname` in InstancetypeFamily: did you mean \
             `displayName`? (expected one of "
        ),
        "{errors}"
    );
    let parts = "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nmetadata: {name: p}\nparts:\n  \
                 a: {defualts: {x: 1}}\n";
    let errors = render_text(parts).unwrap_err();
    assert!(
        errors.first().to_string().contains(
            ":5: unknown field `defualts` in part `a`: did you mean `defaults`? (expected one of "
        ),
        "{errors}"
    );
}

/// A parts library checked on its own: a part nothing uses is checked for unknown names and
/// cycles as a part in use is, each mistake once, and a part in use is not checked twice.
#[test]
fn parts_nothing_uses_are_checked_for_unknown_names_and_cycles() {
    let library = "\
apiVersion: kvrender.io/v1alpha1
kind: Parts
metadata: {name: team}
parts:
  pinned: {parts: [numa-pasthrough], spec: {cpu: {dedicatedCPUPlacement: true}}}
  loop1: {parts: [loop2]}
  loop2: {parts: [loop1]}
  fine: {parts: [base]}
  base: {spec: {cpu: {preferredCPUTopology: cores}}}
";
    let errors = render_text(library).unwrap_err();
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        messages,
        [
            "ns/catalog.yaml:5: part `pinned`: unknown part `numa-pasthrough`",
            "ns/catalog.yaml:7: parts include each other in a cycle: loop1 -> loop2 -> loop1",
        ]
    );
    // Used by a preference, `pinned` is reported for the preference, not again for itself.
    let used = format!(
        "{library}---\napiVersion: kvrender.io/v1alpha1\nkind: Preference\n\
         metadata: {{name: p}}\nspec: {{scopes: [cluster], parts: [pinned, fine]}}\n"
    );
    let errors = render_text(&used).unwrap_err();
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        messages,
        [
            "ns/catalog.yaml:5: part `pinned`: unknown part `numa-pasthrough`",
            "ns/catalog.yaml:7: parts include each other in a cycle: loop1 -> loop2 -> loop1",
        ]
    );
    // A library without mistakes renders (nothing).
    let sound = library
        .lines()
        .filter(|l| !l.contains("pinned") && !l.contains("loop"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(render_text(&sound).unwrap().objects.is_empty());
}

/// A part that cannot be found does not leave the parts it was named from behind: the next
/// name of the list is resolved afresh (no made-up cycle), and cycles name their true path.
/// A chain of parts deeper than the limit is an error, not a stack overflow.
#[test]
fn unknown_parts_and_cycles_are_reported_as_they_are() {
    let text = "\
apiVersion: kvrender.io/v1alpha1
kind: Parts
metadata: {name: c}
parts:
  x: {parts: [missing]}
  zz: {parts: [x]}
  a: {parts: [b]}
  b: {parts: [a]}
  self: {parts: [self]}
---
apiVersion: kvrender.io/v1alpha1
kind: Preference
metadata: {name: p1}
spec: {scopes: [cluster], parts: [x, zz, a, self]}
---
apiVersion: kvrender.io/v1alpha1
kind: Preference
metadata: {name: p2}
spec: {scopes: [cluster], parts: [b]}
";
    // The cycle met again from `b`, by another preference, is the same mistake: reported once.
    let errors = render_text(text).unwrap_err();
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        messages,
        [
            "ns/catalog.yaml:5: part `x`: unknown part `missing`",
            "ns/catalog.yaml:5: part `x`: unknown part `missing`",
            "ns/catalog.yaml:8: parts include each other in a cycle: a -> b -> a",
            "ns/catalog.yaml:9: parts include each other in a cycle: self -> self",
        ]
    );

    // A cycle met through a part outside it names that part apart from the cycle.
    let led = "\
apiVersion: kvrender.io/v1alpha1
kind: Parts
metadata: {name: c}
parts:
  lead: {parts: [a]}
  a: {parts: [b]}
  b: {parts: [a]}
---
apiVersion: kvrender.io/v1alpha1
kind: Preference
metadata: {name: p}
spec: {scopes: [cluster], parts: [lead]}
";
    let errors = render_text(led).unwrap_err();
    let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
    assert_eq!(
        messages,
        ["ns/catalog.yaml:7: parts include each other in a cycle: a -> b -> a (reached from lead)"]
    );

    let mut deep = String::from(
        "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nmetadata: {name: d}\nparts:\n",
    );
    for i in 0..5000 {
        deep.push_str(&format!("  p{i}: {{parts: [p{}]}}\n", i + 1));
    }
    deep.push_str(
        "  p5000: {}\n---\napiVersion: kvrender.io/v1alpha1\nkind: Preference\n\
                   metadata: {name: deep}\nspec: {parts: [p0]}\n",
    );
    let errors = render_text(&deep).unwrap_err();
    assert!(
        errors.first().to_string().contains("more than 64 deep"),
        "{errors}"
    );
}

/// A version, size name or variant suffix YAML reads as a fraction or a boolean would not be
/// what was written (`1.10` is the number 1.1), nor would a whole number written otherwise than
/// in decimal (`010` is 8): each says to quote it. A whole number in decimal is kept as written.
#[test]
fn catalog_error_names_yaml_reads_as_numbers_or_booleans() {
    let family = |version: &str, size: &str, suffix: &str| {
        format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {{name: g}}\n\
             spec:\n  version: {version}\n  variants:\n    - suffix: {suffix}\n  \
             sizes: [[{size}, 1, 1Gi]]\n"
        )
    };
    let first_message = |text: &str| {
        let errors = render_at("bad/catalog.yaml", text).expect_err("the catalog is broken");
        report_one(errors.iter().next().expect("one error"))
    };
    let version = first_message(&family("1.10", "small", "\"\""));
    assert!(
        version.contains("`version` must be a string; quote it"),
        "{version}"
    );
    assert!(version.contains("number 1.1"), "{version}");
    let size = first_message(&family("1", "1.10", "\"\""));
    assert!(
        size.contains("a size's `name` must be a string; quote it"),
        "{size}"
    );
    let size = first_message(&family("1", "on", "\"\""));
    assert!(size.contains("the boolean true"), "{size}");
    let suffix = first_message(&family("1", "small", "n"));
    assert!(
        suffix.contains("a variant's `suffix` must be a string; quote it"),
        "{suffix}"
    );
    assert!(suffix.contains("the boolean false"), "{suffix}");

    // A whole number written otherwise than in decimal is not kept as written either.
    for (version, size, suffix, what, token, number) in [
        ("010", "small", "\"\"", "`version`", "010", 8),
        ("0x10", "small", "\"\"", "`version`", "0x10", 16),
        ("1e1", "small", "\"\"", "`version`", "1e1", 10),
        ("1", "010", "\"\"", "a size's `name`", "010", 8),
        ("1", "small", "1_0", "a variant's `suffix`", "1_0", 10),
    ] {
        let message = first_message(&family(version, size, suffix));
        assert!(
            message.contains(&format!(
                "{what} must be a string; quote it (YAML reads `{token}` as the number {number}"
            )),
            "{message}"
        );
    }

    // Wherever the name or suffix is written: a mapping row's `name` below its first line, a
    // variant's `suffix` below its first line, a row whose other cells hold the decimal text.
    for (sizes, variants, token, number, line) in [
        (
            "    - cpu: 1\n      memory: 1Gi\n      name: 010\n",
            "    - suffix: a\n",
            "010",
            8,
            9,
        ),
        (
            "    - [small, 1, 1Gi]\n",
            "    - gpu: x\n      suffix: 0x1f\n",
            "0x1f",
            31,
            10,
        ),
        ("    - [020, 16, 16Gi]\n", "    - suffix: a\n", "020", 16, 7),
    ] {
        let text = format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {{name: g}}\n\
             spec:\n  version: 1\n  sizes:\n{sizes}  variants:\n{variants}"
        );
        let message = first_message(&text);
        assert!(
            message.starts_with(&format!("bad/catalog.yaml:{line}:"))
                && message.contains(&format!(
                    "quote it (YAML reads `{token}` as the number {number}"
                )),
            "{text}\n{message}"
        );
    }

    let rendered = render_at("ok/catalog.yaml", &family("1", "2", "\"\"")).unwrap();
    let names: Vec<&str> = rendered.objects.iter().map(|o| o.name()).collect();
    assert_eq!(names, ["g1.2", "g1.2"]);
}

/// A namespace a template sets reaches the namespaced object only: the cluster-scoped one has
/// none.
#[test]
fn a_template_namespace_stays_off_the_cluster_scoped_object() {
    let text = "\
apiVersion: kvrender.io/v1alpha1
kind: Preference
metadata: {name: mine}
spec:
  template:
    metadata: {namespace: team}
    spec: {devices: {preferredDiskBus: virtio}}
";
    let rendered = render_at("ok/catalog.yaml", text).unwrap();
    assert_eq!(
        kinds_and_namespaces(&rendered.objects),
        [
            ("VirtualMachineClusterPreference", None),
            ("VirtualMachinePreference", Some("team")),
        ]
    );
}

/// A template error in a block scalar is reported at the template's own line inside the block,
/// also when an anchor or a tag stands before the `|`.
#[test]
fn a_template_error_in_an_anchored_or_tagged_block_names_its_line() {
    let text = "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {name: t}\n\
                spec:\n  version: 1\n  sizes:\n    - [small, 1, 1Gi]\n  template:\n    metadata:\n      \
                annotations:\n        a: &x |\n          first\n          {{ size.r }}\n        \
                b: !!str |\n          first\n          {{ size.s }}\n        c: |\n          \
                {{ size.t }}\n    spec:\n      cpu: {guest: 1}\n      memory: {guest: 1Gi}\n";
    let errors = render_text(text).unwrap_err();
    let lines: Vec<String> = errors
        .iter()
        .map(|e| {
            e.to_string()
                .split(": ")
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(
        lines,
        [
            "ns/catalog.yaml:13",
            "ns/catalog.yaml:16",
            "ns/catalog.yaml:18"
        ],
        "{errors}"
    );
}

/// A `|` block keeps its final line break whether or not it holds a template, and a `|-` one
/// gets none: the value is what the YAML says, filled in.
#[test]
fn a_block_value_keeps_its_final_line_break() {
    let text = "\
apiVersion: kvrender.io/v1alpha1
kind: Preference
metadata: {name: mine}
spec:
  scopes: [cluster]
  template:
    metadata:
      annotations:
        templated: |
          for {{ preference.name }}
          only
        plain: |
          fixed
        stripped: |-
          for {{ preference.name }}
    spec: {devices: {preferredDiskBus: virtio}}
";
    let rendered = render_at("ok/catalog.yaml", text).unwrap();
    let annotation = |key: &str| {
        field(&rendered.objects[0], &["metadata", "annotations", key])
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    assert_eq!(annotation("templated").as_deref(), Some("for mine\nonly\n"));
    assert_eq!(annotation("plain").as_deref(), Some("fixed\n"));
    assert_eq!(annotation("stripped").as_deref(), Some("for mine"));
}

/// A var of a preference that no part declares and no template reads changes nothing: most
/// likely misspelt, it is refused. One its own template reads is fine.
#[test]
fn catalog_error_a_var_nothing_reads() {
    let text = |vars: &str| {
        format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nmetadata: {{name: p}}\nparts:\n  \
             sized: {{defaults: {{memory: 1Gi}}, spec: {{requirements: {{memory: {{guest: \
             \"{{{{ vars.memory }}}}\"}}}}}}}}\n---\napiVersion: kvrender.io/v1alpha1\n\
             kind: Preference\nmetadata: {{name: mine}}\nspec:\n  parts: [sized]\n  \
             vars: {vars}\n  template:\n    spec: {{cpu: {{preferredCPUTopology: \
             \"{{{{ vars.topology | default('preferSockets') }}}}\"}}}}\n"
        )
    };
    let errors = render_at("bad/catalog.yaml", &text("{memroy: 2Gi}")).expect_err("misspelt");
    let message = report_one(errors.iter().next().expect("one error"));
    assert!(
        message.contains(
            "unknown var `memroy` (did you mean `memory`?): no part declares it and no \
             template reads it; its parts declare: memory; its templates also read: topology"
        ),
        "{message}"
    );
    assert!(message.contains("bad/catalog.yaml:12"), "{message}");
    let rendered = render_at(
        "ok/catalog.yaml",
        &text("{memory: 2Gi, topology: preferCores}"),
    )
    .unwrap();
    let spec = &rendered.objects[0].value["spec"];
    assert_eq!(spec["requirements"]["memory"]["guest"], "2Gi");
    assert_eq!(spec["cpu"]["preferredCPUTopology"], "preferCores");
}

/// A var counts as read when a template names it as `vars.NAME`, `vars['NAME']` or
/// `vars["NAME"]` (spaces allowed), and only as a whole name: reading `vars.cpus` reads no var
/// `cpu`. A template that uses `vars` in any other way may read any var: none is refused.
#[test]
fn catalog_vars_are_read_by_every_form_and_only_whole() {
    let text = |vars: &str| {
        format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: Preference\nmetadata: {{name: mine}}\n\
             spec:\n  vars: {vars}\n  annotations:\n    a: \"{{{{ vars.cpus }}}}\"\n    \
             b: \"{{{{ vars['disk_bus'] }}}}-{{{{ vars[\\\"nic\\\"] }}}}\"\n    \
             c: \"{{{{ vars.tpm_on }}}}-{{{{ vars[ 'spaced' ] }}}}\"\n    \
             d: \"vars.plain is text, not a template\"\n"
        )
    };
    let rendered = render_at(
        "ok/catalog.yaml",
        &text("{cpus: 2, disk_bus: sata, nic: e1000e, tpm_on: \"yes\", spaced: s}"),
    )
    .unwrap();
    let annotations = &rendered.objects[0].value["metadata"]["annotations"];
    assert_eq!(annotations["a"], "2");
    assert_eq!(annotations["b"], "sata-e1000e");
    assert_eq!(annotations["c"], "yes-s");
    for (vars, unknown) in [
        (
            "{cpus: 2, disk_bus: sata, nic: e1000e, tpm_on: x, spaced: s, cpu: 1}",
            "cpu",
        ),
        (
            "{cpus: 2, disk_bus: sata, nic: e1000e, tpm_on: x, spaced: s, disk: 1}",
            "disk",
        ),
        (
            "{cpus: 2, disk_bus: sata, nic: e1000e, tpm_on: x, spaced: s, ni: 1}",
            "ni",
        ),
        (
            "{cpus: 2, disk_bus: sata, nic: e1000e, tpm_on: x, spaced: s, tpm: 1}",
            "tpm",
        ),
        (
            "{cpus: 2, disk_bus: sata, nic: e1000e, tpm_on: x, spaced: s, plain: 1}",
            "plain",
        ),
    ] {
        let errors = render_at("bad/catalog.yaml", &text(vars)).expect_err(unknown);
        let message = report_one(errors.iter().next().expect("one error"));
        assert!(
            message.contains(&format!("unknown var `{unknown}`")),
            "{unknown}: {message}"
        );
    }
    for whole in [
        "{{ vars | dictsort | first | last }}",
        "{{ (vars).cpu }}",
        "{% for k in vars %}{{ vars[k] }}{% endfor %}",
    ] {
        let doc = format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: Preference\nmetadata: {{name: mine}}\n\
             spec:\n  vars: {{cpu: 2}}\n  annotations:\n    a: \"{whole}\"\n"
        );
        let rendered = render_at("ok/catalog.yaml", &doc)
            .unwrap_or_else(|e| panic!("{whole}: {}", report_one(e.iter().next().unwrap())));
        assert_eq!(
            rendered.objects[0].value["metadata"]["annotations"]["a"], "2",
            "{whole}"
        );
    }
}

/// A misspelt trait names the declared one it is nearest to.
#[test]
fn catalog_error_an_unknown_trait_suggests_the_nearest() {
    let text = "\
apiVersion: kvrender.io/v1alpha1
kind: Parts
metadata: {name: p}
parts:
  it: {defaults: {hugepages: null, dedicatedCPUs: false}}
---
apiVersion: kvrender.io/v1alpha1
kind: InstancetypeFamily
metadata: {name: t}
spec:
  parts: [it]
  traits: {hugepage: 1Gi}
  sizes: [[small, 1, 1Gi]]
";
    let errors = render_at("bad/catalog.yaml", text).expect_err("misspelt");
    let message = report_one(errors.iter().next().expect("one error"));
    assert!(
        message.contains("unknown trait `hugepage` (did you mean `hugepages`?)"),
        "{message}"
    );
}

/// A preference whose parts set only metadata still has the `spec` the API requires: empty.
#[test]
fn a_preference_of_metadata_only_has_an_empty_spec() {
    let text = "\
apiVersion: kvrender.io/v1alpha1
kind: Parts
metadata: {name: p}
parts:
  labelled: {metadata: {labels: {team: a}}}
---
apiVersion: kvrender.io/v1alpha1
kind: Preference
metadata: {name: plain}
spec:
  parts: [labelled]
";
    let rendered = render_at("ok/catalog.yaml", text).unwrap();
    assert_eq!(rendered.objects.len(), 2);
    for object in &rendered.objects {
        assert_eq!(object.value["spec"], serde_json::json!({}));
        assert_eq!(object.value["metadata"]["labels"]["team"], "a");
    }
}

/// A part of the user's that takes a shipped part's name and names a shipped part that names
/// it back closes a cycle inside the shipped catalog: it is reported where the user's part
/// names the shipped one, a line the user can open, not in the shipped file, and named after
/// the user's `Parts` document.
#[test]
fn a_cycle_through_a_shipped_part_is_reported_in_the_users_file() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("p.yaml"),
        "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nmetadata: {name: mine}\nparts:\n\
         \x20 base:\n    parts: [windows]\n---\n\
         apiVersion: kvrender.io/v1alpha1\nkind: Preference\nmetadata: {name: my.win}\n\
         spec:\n  parts: [base]\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .current_dir(tmp.path())
        .args(["build", "p.yaml"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(
        stderr,
        "p.yaml:6: error[KV040] Parts/mine: parts include each other in a cycle: base -> windows \
         -> base\n"
    );
}

/// A catalog's families may render up to [`render::MAX_COMBINATIONS`] size × variant
/// combinations in all: a catalog at the limit is read (it fails a later step, here for a
/// part it does not define, before rendering anything), one past it is refused at the family
/// that passes it, while the documents are read.
#[test]
fn a_catalog_may_render_up_to_its_combinations() {
    let family = |name: &str, sizes: usize, variants: usize| {
        let rows: String = (0..sizes).map(|i| format!("[s{i}, 1, 1Gi], ")).collect();
        let suffixes: String = (0..variants)
            .map(|i| format!("{{suffix: v{i}}}, "))
            .collect();
        format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {{name: \
             {name}}}\nspec:\n  version: 1\n  parts: [missing]\n  sizes: [{rows}]\n  \
             variants: [{suffixes}]\n"
        )
    };
    let messages = |text: &str| -> Vec<String> {
        let errors = render_text(text).expect_err("the catalog is refused");
        errors.iter().map(report_one).collect()
    };
    assert_eq!(render::MAX_COMBINATIONS, 20_000);
    let at_the_limit = format!("{}---\n{}", family("a", 100, 100), family("b", 50, 200));
    let read = messages(&at_the_limit);
    assert!(
        read.iter().all(|m| m.contains("unknown part `missing`")),
        "{read:?}"
    );
    let past = format!("{}---\n{}", family("a", 100, 100), family("b", 50, 201));
    assert_eq!(
        messages(&past),
        [
            "ns/catalog.yaml:17: family `b1`: its 10050 size × variant combinations bring the \
             catalog's families to 20050, more than the 20000 a catalog may render"
        ]
    );
    assert_eq!(
        messages(&family("c", 20_001, 1)),
        [
            "ns/catalog.yaml:7: family `c1`: 20001 sizes × 1 variant are 20001 combinations, \
             more than the 20000 a catalog may render"
        ]
    );
}

/// A shared part's template that fails alike for two families is one error, at the part's
/// line, naming the other family; a name one slip away from one the size has is suggested.
#[test]
fn a_shared_parts_error_for_several_families_is_reported_once() {
    let catalog = |guest: &str| {
        format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nmetadata: {{name: p}}\nparts:\n  \
             it:\n    spec:\n      cpu: {{guest: \"{guest}\"}}\n      \
             memory: {{guest: \"{{{{ size.memory }}}}\"}}\n---\n\
             apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {{name: a}}\n\
             spec:\n  version: 1\n  parts: [it]\n  sizes:\n  - [small, 1, 1Gi]\n  \
             - [large, 2, 2Gi]\n---\napiVersion: kvrender.io/v1alpha1\n\
             kind: InstancetypeFamily\nmetadata: {{name: b}}\nspec:\n  version: 1\n  \
             parts: [it]\n  sizes:\n  - [small, 1, 1Gi]\n"
        )
    };
    let errors = render_at("bad/catalog.yaml", &catalog("{{ size.cpus }}")).expect_err("typo");
    assert_eq!(errors.len(), 1, "{}", report(&errors));
    let message = report_one(errors.first());
    assert!(
        message.starts_with(
            "bad/catalog.yaml:7: cannot render `parts.it.spec.cpu.guest` for family `a1` size \
             `small` (and 2 more: size `large`, family `b1` size `small`; family `b1` too) \
             (did you mean `size.cpu`?)"
        ),
        "{message}"
    );
    // A misspelt name of the context itself gets its hint too.
    for (typo, hint) in [
        ("{{ sze.cpu }}", "(did you mean `size`?)"),
        ("{{ trait.x }}", "(did you mean `traits`?)"),
        ("{{ nothing_near }}", ""),
    ] {
        let errors = render_at("bad/catalog.yaml", &catalog(typo)).expect_err(typo);
        let message = report_one(errors.first());
        assert_eq!(
            message.contains("did you mean"),
            !hint.is_empty(),
            "{typo}: {message}"
        );
        assert!(message.contains(hint), "{typo}: {message}");
    }
    // A syntax error is the same for every family too.
    let errors = render_at("bad/catalog.yaml", &catalog("{{ size.cpu }")).expect_err("syntax");
    assert_eq!(errors.len(), 1, "{}", report(&errors));
    assert!(
        report_one(errors.first()).contains("; family `b1` too)"),
        "{}",
        report(&errors)
    );
}

/// A template that reads a trait, size field or variant field nobody sets is told where to set
/// it: a trait under `spec.traits`, unless the family's parts declare trait defaults (then only
/// a declared trait may be set, and a new one needs a default first); a size field among the
/// row's extra fields; a variant field on the entries of `spec.variants`.
#[test]
fn an_undefined_trait_size_or_variant_field_is_told_where_to_set_it() {
    let catalog = |defaults: &str, read: &str| {
        format!(
            "apiVersion: kvrender.io/v1alpha1\nkind: Parts\nmetadata: {{name: p}}\nparts:\n  \
             it:\n{defaults}    spec:\n      cpu: {{guest: \"{{{{ size.cpu }}}}\"}}\n      \
             memory: {{guest: \"{{{{ size.memory }}}}\"}}\n---\n\
             apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {{name: a}}\n\
             spec:\n  version: 1\n  parts: [it]\n  sizes:\n  - [small, 1, 1Gi]\n  \
             annotations:\n    example.com/x: \"{read}\"\n"
        )
    };
    for (defaults, read, hint) in [
        (
            "",
            "{{ traits.gpus }}",
            "(the family sets no trait `gpus`: set it under `spec.traits`, or give it a default \
             in a part's `defaults`)",
        ),
        (
            "    defaults: {numa: false}\n",
            "{{ traits.gpus }}",
            "(no part of the family declares a trait `gpus`: give it a default in the \
             `defaults` of a part the family names, then set it under `spec.traits` where it \
             differs)",
        ),
        (
            "",
            "{{ size.tier }}",
            "(the size row has no field `tier`: give it one among the row's extra fields \
             (`[name, cpu, memory, {tier: …}]`))",
        ),
        (
            "",
            "{{ variant.tier }}",
            "(this variant has no field `tier`: set it on every entry of `spec.variants` \
             (without `variants`, the one variant has only `suffix`))",
        ),
    ] {
        let errors = render_at("bad/catalog.yaml", &catalog(defaults, read)).expect_err(read);
        let message = report_one(errors.first());
        assert!(message.contains(hint), "{read}: {message}");
    }
}

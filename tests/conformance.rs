//! The conformance corpora in `testdata/conformance/` and `testdata/oracle/`, produced by running
//! KubeVirt's own Go code, run against the `kvrender` binary: one named test per case.
//!
//! The pass rules are those of the corpora's READMEs (copied beside the cases): normalization of
//! Go's non-pointer-struct artifacts, comparison as data, and three allowances for values
//! kvrender did not compute (quantity spellings, zero values the user wrote, the `default`
//! namespace). `oracle/admit/` holds KubeVirt's whole answer to creating a VM, checked against
//! `validate`'s `KV034` findings ([`check_admit`]); `oracle/pool/` its answers to a
//! VirtualMachinePool and to the first VM the pool creates ([`check_pool`]); `oracle/rs/` to a
//! VirtualMachineInstanceReplicaSet and to the VMI it creates ([`check_replica_set`]);
//! `oracle/presetadmit/` to creating a VirtualMachineInstancePreset ([`check_preset_admit`]).
//! Every case also runs as `reordered::<mode>::<case>` ([`run_reordered`]): the documents before
//! the object under test in reverse order, every mapping's keys reversed, the same answer
//! required; and the cases of `expand`, `infer`, `presets`, `validate` and `vmi` as
//! `moved::<mode>::<case>` ([`run_moved`]): out of the `default` namespace, the same answer
//! there required; and every case as `split::<mode>::<case>` ([`run_split`]): the documents
//! before the object under test given with `--catalog`, the same answer required.
//!
//! Run one case with `cargo test --test conformance -- 0098`.

use std::path::{Path, PathBuf};
use std::process::Command;

use kvrender::model::Kind;
use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::{Map, Value, json};

fn main() {
    let args = Arguments::from_args();
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut trials = Vec::new();
    // `conformance/` holds the given corpora, `oracle/` cases of the same format made for
    // kvrender (see its README); their test names start with `oracle::`.
    for (corpus, mode) in ["conformance", "oracle"].into_iter().flat_map(|c| {
        [
            "expand",
            "infer",
            "presets",
            "validate",
            "vmi",
            "admit",
            "pool",
            "rs",
            "presetadmit",
        ]
        .map(|m| (c, m))
    }) {
        let dir = testdata.join(corpus).join(mode);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut cases: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.join("input.yaml").is_file())
            .collect();
        cases.sort();
        for case in cases {
            let prefix = if corpus == "oracle" { "oracle::" } else { "" };
            let name = format!(
                "{prefix}{mode}::{}",
                case.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .replace('-', "_")
            );
            // The same case changed in ways KubeVirt's answer cannot notice: its cluster listed
            // the other way round and every mapping's keys reversed (a cluster is a set and a
            // mapping has no order); moved out of the `default` namespace (nothing but the
            // namespace may change in the answer); and its cluster given as `--catalog`, the
            // object under test alone as the input.
            let movable = ["expand", "infer", "presets", "validate", "vmi"].contains(&mode);
            let variants: [(&str, Variant, bool); 3] = [
                ("reordered", run_reordered, true),
                ("moved", run_moved, movable),
                ("split", run_split, true),
            ];
            for (variant, run, applies) in variants {
                if applies {
                    let source = case.clone();
                    trials.push(Trial::test(
                        name.replacen("::", &format!("::{variant}::"), 1),
                        move || run(mode, &source),
                    ));
                }
            }
            trials.push(Trial::test(name, move || run_case(mode, &case)));
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run_kvrender(args: &[&str], input: &Path) -> Run {
    // A case may carry the cluster's configuration (a KubeVirt `spec.configuration`) beside its
    // input: the answer was worked out against it.
    let cluster = input.with_file_name("cluster.yaml");
    let cluster_args = cluster
        .is_file()
        .then(|| [std::ffi::OsString::from("--cluster-config"), cluster.into()]);
    // And the cluster's objects may be given apart, as `--catalog` ([`run_split`]).
    let catalog = input.with_file_name("catalog.yaml");
    let catalog_args = catalog.is_file().then(|| {
        [
            std::ffi::OsString::from("--catalog"),
            catalog.clone().into(),
        ]
    });
    let out = Command::new(env!("CARGO_BIN_EXE_kvrender"))
        .args(args)
        .args(cluster_args.iter().flatten())
        .args(catalog_args.iter().flatten())
        .arg(input)
        .output()
        .expect("kvrender runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        // The case path itself must not count as naming something ("testdata" holds "data").
        stderr: String::from_utf8_lossy(&out.stderr)
            .replace(&*input.to_string_lossy(), "<input>")
            .replace(&*catalog.to_string_lossy(), "<catalog>"),
    }
}

fn run_case(mode: &str, case: &Path) -> Result<(), Failed> {
    let input = case.join("input.yaml");
    if mode == "admit" {
        let run = run_kvrender(
            &["validate", "--no-default-catalog", "--format", "json"],
            &input,
        );
        let configured = case.join("cluster.yaml").is_file();
        let start = case.join("vmiadmit.yaml");
        let start = start.is_file().then(|| read_one(&start));
        if !case.join("admit.yaml").is_file() {
            let answer = start.ok_or("neither admit.yaml nor vmiadmit.yaml")?;
            return check_vmi_admit(&answer, configured, &run);
        }
        return check_admit(
            &read_one(&case.join("admit.yaml")),
            start.as_ref(),
            configured,
            &run,
        );
    }
    if mode == "pool" {
        let run = run_kvrender(
            &["validate", "--no-default-catalog", "--format", "json"],
            &input,
        );
        return check_pool(case, &run);
    }
    if mode == "presetadmit" {
        let run = run_kvrender(
            &["validate", "--no-default-catalog", "--format", "json"],
            &input,
        );
        return check_preset_admit(&read_one(&case.join("presetadmit.yaml")), &run);
    }
    if mode == "rs" {
        let run = run_kvrender(
            &["validate", "--no-default-catalog", "--format", "json"],
            &input,
        );
        return check_replica_set(case, &run);
    }
    let expected = read_one(&case.join("expected.yaml"));
    let input_vm = read_all(&input).pop().unwrap_or(Value::Null);
    match mode {
        "expand" => {
            let run = run_kvrender(&["expand", "--no-default-catalog"], &input);
            check_expand(&expected, &input_vm, &run)
        }
        "infer" => {
            let run = run_kvrender(&["expand", "--no-default-catalog"], &input);
            check_infer(&expected, &input_vm, &run)
        }
        "presets" => {
            let run = run_kvrender(
                &["vmi", "--no-default-catalog", "--stage", "presets"],
                &input,
            );
            check_presets(&expected, &input_vm, &run)
        }
        "validate" => {
            let run = run_kvrender(
                &["validate", "--no-default-catalog", "--format", "json"],
                &input,
            );
            check_validate(&expected, &run)
        }
        "vmi" => {
            // The whole VMI: the controller's, then presets, then the webhook's defaults. A
            // refusal (an instancetype conflict, conflicting presets) only has to fail: the
            // messages carry Go's formatting of pointers.
            let run = run_kvrender(&["vmi", "--no-default-catalog"], &input);
            if expected.get("error").is_some() {
                require_failure(&run, &[], "a refused VMI")
            } else {
                check_presets(&expected, &input_vm, &without_generation(run, &expected))
            }
        }
        _ => unreachable!(),
    }
}

/// A variant of [`run_case`]: the mode and the case directory, which it runs changed.
type Variant = fn(&str, &Path) -> Result<(), Failed>;

/// A temporary copy of the case directory `case`, for a [`Variant`] to change.
fn copied(case: &Path) -> Result<tempfile::TempDir, Failed> {
    let copy = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
    copy_case(case, copy.path()).map_err(|e| format!("copying {}: {e}", case.display()))?;
    Ok(copy)
}

/// Run `case` as [`run_case`] does, from a copy whose input lists the documents before the one
/// under test in reverse order and has every mapping's keys reversed, at every depth. The
/// other files of the case are copied as they are.
fn run_reordered(mode: &str, case: &Path) -> Result<(), Failed> {
    let copy = copied(case)?;
    let mut documents = read_all(&case.join("input.yaml"));
    let under_test = documents.pop().ok_or("input.yaml holds no document")?;
    documents.reverse();
    documents.push(under_test);
    let documents: Vec<Value> = documents.iter().map(reversed).collect();
    write_documents(&copy.path().join("input.yaml"), &documents)?;
    run_case(mode, copy.path())
}

/// The namespace [`run_moved`] moves a case into; no case uses it.
const MOVED: &str = "moved-here";

/// Run `case` as [`run_case`] does, from a copy in which every object of the `default`
/// namespace, named or implied, is in [`MOVED`] instead, and every `namespace: default` that
/// points at one (a DataVolume's source, say) points there too; the expected answer is moved
/// the same way.
fn run_moved(mode: &str, case: &Path) -> Result<(), Failed> {
    let copy = copied(case)?;
    let documents: Vec<Value> = read_all(&case.join("input.yaml"))
        .iter()
        .map(|d| {
            let mut d = renamed_default(d);
            if Kind::from_kind(d["kind"].as_str().unwrap_or_default()).is_namespaced()
                && let Some(metadata) = d.get_mut("metadata").and_then(Value::as_object_mut)
                && !metadata.contains_key("namespace")
            {
                metadata.insert("namespace".into(), json!(MOVED));
            }
            d
        })
        .collect();
    let under_test_moved = documents
        .last()
        .is_some_and(|d| d["metadata"]["namespace"] == MOVED);
    let mut expected = renamed_default(&read_one(&case.join("expected.yaml")));
    // An answer that is an object (or holds one as `expanded`) names the namespace the object
    // is in where the input named none; moved, it has one.
    let object = if expected.get("expanded").is_some() {
        &mut expected["expanded"]
    } else {
        &mut expected
    };
    if under_test_moved
        && object.get("kind").is_some()
        && let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut)
        && !metadata.contains_key("namespace")
    {
        metadata.insert("namespace".into(), json!(MOVED));
    }
    write_documents(&copy.path().join("input.yaml"), &documents)?;
    write_documents(&copy.path().join("expected.yaml"), &[expected])?;
    run_case(mode, copy.path())
}

/// Run `case` as [`run_case`] does, from a copy whose input holds only the object under test,
/// the documents before it given with `--catalog` (as `catalog.yaml`).
fn run_split(mode: &str, case: &Path) -> Result<(), Failed> {
    let copy = copied(case)?;
    let mut documents = read_all(&case.join("input.yaml"));
    let under_test = documents.pop().ok_or("input.yaml holds no document")?;
    write_documents(&copy.path().join("catalog.yaml"), &documents)?;
    write_documents(&copy.path().join("input.yaml"), &[under_test])?;
    run_case(mode, copy.path())
}

/// `value` with every `namespace: default` in it, at any depth, naming [`MOVED`] instead.
fn renamed_default(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let v = if k == "namespace" && v == "default" {
                        json!(MOVED)
                    } else {
                        renamed_default(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(renamed_default).collect()),
        other => other.clone(),
    }
}

/// Write `documents` to `path` as one YAML stream.
fn write_documents(path: &Path, documents: &[Value]) -> Result<(), Failed> {
    let mut text = String::new();
    for document in documents {
        text.push_str("---\n");
        text.push_str(&kvrender::load::yaml::to_string(document));
    }
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()).into())
}

/// Copy the files of a case directory, its subdirectories included, into `to`.
fn copy_case(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            std::fs::create_dir(&target)?;
            copy_case(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// `value` with the keys of every mapping in it in reverse order.
fn reversed(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .rev()
                .map(|(k, v)| (k.clone(), reversed(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(reversed).collect()),
        other => other.clone(),
    }
}

// ---------------------------------------------------------------------------------------------
// Reading

fn read_all(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("readable case file");
    kvrender::load::split::split(&text)
        .iter()
        .map(|c| kvrender::load::yaml::parse_document(c.text).expect("case files are valid YAML"))
        .filter(|v| !v.is_null())
        .collect()
}

fn read_one(path: &Path) -> Value {
    read_all(path).pop().unwrap_or(Value::Null)
}

fn one_doc(stdout: &str) -> Result<Value, Failed> {
    let docs: Vec<Value> = kvrender::load::split::split(stdout)
        .iter()
        .map(|c| kvrender::load::yaml::parse_document(c.text))
        .collect::<Result<_, _>>()
        .map_err(|e| Failed::from(format!("stdout is not YAML: {}", e.message)))?;
    let docs: Vec<Value> = docs.into_iter().filter(|v| !v.is_null()).collect();
    if docs.len() != 1 {
        return Err(format!("expected one YAML document on stdout, got {}", docs.len()).into());
    }
    Ok(docs.into_iter().next().unwrap())
}

// ---------------------------------------------------------------------------------------------
// Normalization (the corpus README's five artifact paths)

fn strip(node: &mut Value, path: &[&str]) {
    let Some((head, rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        if let Some(map) = node.as_object_mut()
            && map
                .get(*head)
                .is_some_and(|v| v.is_null() || v.as_object().is_some_and(Map::is_empty))
        {
            map.shift_remove(*head);
        }
        return;
    }
    if *head == "*" {
        if let Some(items) = node.as_array_mut() {
            for item in items {
                strip(item, rest);
            }
        }
    } else if let Some(next) = node.get_mut(*head) {
        strip(next, rest);
    }
}

fn normalize(vm: &Value) -> Value {
    let mut vm = vm.clone();
    for path in [
        &["status"][..],
        &["spec", "template", "metadata"],
        &["spec", "template", "spec", "domain", "resources"],
        &["spec", "template", "spec", "domain", "devices"],
        &[
            "spec",
            "dataVolumeTemplates",
            "*",
            "spec",
            "storage",
            "resources",
        ],
    ] {
        strip(&mut vm, path);
    }
    vm
}

fn strip_acpi(mut vm: Value, prefix: &[&str]) -> Value {
    let mut node = &mut vm;
    for k in prefix {
        match node.get_mut(*k) {
            Some(n) => node = n,
            None => return vm,
        }
    }
    if let Some(features) = node.get_mut("features").and_then(Value::as_object_mut)
        && features
            .get("acpi")
            .is_some_and(|a| a.is_null() || a.as_object().is_some_and(Map::is_empty))
    {
        features.shift_remove("acpi");
    }
    vm
}

// ---------------------------------------------------------------------------------------------
// Comparison with the allowances

/// An exact rational for quantity comparison: numerator and denominator.
fn quantity(v: &Value) -> Option<(i128, i128)> {
    let s = match v {
        Value::Number(n) => {
            return n.as_i64().map(|i| (i128::from(i), 1));
        }
        Value::String(s) => s.as_str(),
        _ => return None,
    };
    let re = regex::Regex::new(
        r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$",
    )
    .unwrap();
    let caps = re.captures(s)?;
    let num = caps.get(1)?.as_str();
    let (sign, num) = match num.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, num.strip_prefix('+').unwrap_or(num)),
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    let digits = format!("{int}{frac}");
    let mut n: i128 = if digits.is_empty() {
        0
    } else {
        digits.parse().ok()?
    };
    let mut d: i128 = 10i128.checked_pow(u32::try_from(frac.len()).ok()?)?;
    n *= sign;
    let suffix = caps.get(2).map_or("", |m| m.as_str());
    let pow = |b: i128, e: u32| b.checked_pow(e);
    match suffix {
        "" => {}
        "n" => d = d.checked_mul(pow(10, 9)?)?,
        "u" => d = d.checked_mul(pow(10, 6)?)?,
        "m" => d = d.checked_mul(1000)?,
        "k" => n = n.checked_mul(pow(10, 3)?)?,
        "M" => n = n.checked_mul(pow(10, 6)?)?,
        "G" => n = n.checked_mul(pow(10, 9)?)?,
        "T" => n = n.checked_mul(pow(10, 12)?)?,
        "P" => n = n.checked_mul(pow(10, 15)?)?,
        "E" => n = n.checked_mul(pow(10, 18)?)?,
        "Ki" => n = n.checked_mul(pow(2, 10)?)?,
        "Mi" => n = n.checked_mul(pow(2, 20)?)?,
        "Gi" => n = n.checked_mul(pow(2, 30)?)?,
        "Ti" => n = n.checked_mul(pow(2, 40)?)?,
        "Pi" => n = n.checked_mul(pow(2, 50)?)?,
        "Ei" => n = n.checked_mul(pow(2, 60)?)?,
        e => {
            let exp: i32 = e[1..].parse().ok()?;
            if exp >= 0 {
                n = n.checked_mul(pow(10, exp.unsigned_abs())?)?;
            } else {
                d = d.checked_mul(pow(10, exp.unsigned_abs())?)?;
            }
        }
    }
    Some((n, d))
}

fn same_quantity(a: &Value, b: &Value) -> bool {
    match (quantity(a), quantity(b)) {
        (Some((n1, d1)), Some((n2, d2))) => n1.checked_mul(d2) == n2.checked_mul(d1),
        _ => false,
    }
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
    }
}

fn show(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 100 {
        format!("{}...", &s[..97])
    } else {
        s
    }
}

fn diffs(exp: &Value, got: &Value, inp: Option<&Value>, path: &str, out: &mut Vec<String>) {
    if out.len() >= 5 {
        return;
    }
    let child = |k: &str| {
        if path.is_empty() {
            k.to_string()
        } else {
            format!("{path}.{k}")
        }
    };
    match (exp, got) {
        (Value::Object(e), Value::Object(g)) => {
            let inp_map = inp.and_then(Value::as_object);
            let mut keys: Vec<&String> = e.keys().chain(g.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = child(k);
                match (e.get(k), g.get(k)) {
                    (Some(ev), None) => {
                        if p == "metadata.namespace"
                            && ev == "default"
                            && inp_map.is_none_or(|m| !m.contains_key("namespace"))
                        {
                            continue;
                        }
                        out.push(format!("{p}: missing (expected {})", show(ev)));
                    }
                    (None, Some(gv)) => {
                        if is_zero(gv) && inp_map.and_then(|m| m.get(k)) == Some(gv) {
                            continue;
                        }
                        out.push(format!("{p}: unexpected {}", show(gv)));
                    }
                    (Some(ev), Some(gv)) => {
                        diffs(ev, gv, inp_map.and_then(|m| m.get(k)), &p, out);
                    }
                    (None, None) => {}
                }
            }
        }
        (Value::Array(e), Value::Array(g)) => {
            let inp_list = inp.and_then(Value::as_array);
            for i in 0..e.len().max(g.len()) {
                let p = format!("{path}[{i}]");
                match (e.get(i), g.get(i)) {
                    (Some(ev), None) => out.push(format!("{p}: missing (expected {})", show(ev))),
                    (None, Some(gv)) => out.push(format!("{p}: unexpected {}", show(gv))),
                    (Some(ev), Some(gv)) => {
                        diffs(ev, gv, inp_list.and_then(|l| l.get(i)), &p, out);
                    }
                    (None, None) => {}
                }
            }
        }
        _ => {
            let equal = match (exp, got) {
                (Value::Number(a), Value::Number(b)) => {
                    a.as_i64() == b.as_i64() && a.as_f64() == b.as_f64()
                }
                _ => exp == got,
            };
            if equal || (exp.is_string() && same_quantity(exp, got)) {
                return;
            }
            out.push(format!("{path}: expected {}, got {}", show(exp), show(got)));
        }
    }
}

fn compare(exp: &Value, got: &Value, inp: &Value) -> Result<(), Failed> {
    let mut out = Vec::new();
    diffs(exp, got, Some(inp), "", &mut out);
    if out.is_empty() {
        Ok(())
    } else {
        Err(out.join("\n").into())
    }
}

fn required_tokens(message: &str) -> Vec<String> {
    let mut toks = Vec::new();
    for (re, group) in [
        (r#""([^"]+)""#, 1),
        (r"(spec\.template\.spec\.[\w.]+|annotations\.[\w./-]+)", 1),
        (
            r"(instancetype\.kubevirt\.io/default-(?:instancetype|preference))",
            1,
        ),
        (r"unable to find volume (\S+) to infer", 1),
        (r"Invalid value '([^']+)'", 1),
    ] {
        let re = regex::Regex::new(re).unwrap();
        for c in re.captures_iter(message) {
            toks.push(c[group].to_string());
        }
    }
    toks.sort();
    toks.dedup();
    toks
}

fn require_failure(run: &Run, tokens: &[String], what: &str) -> Result<(), Failed> {
    if run.code == 0 {
        return Err(format!("expected {what}, but kvrender exited 0").into());
    }
    let missing: Vec<&String> = tokens.iter().filter(|t| !run.stderr.contains(*t)).collect();
    if !missing.is_empty() {
        return Err(format!(
            "{what}: stderr does not name {missing:?}\nstderr: {}",
            run.stderr
        )
        .into());
    }
    Ok(())
}

fn require_success(run: &Run) -> Result<Value, Failed> {
    if run.code != 0 {
        return Err(format!("kvrender exited {}: {}", run.code, run.stderr).into());
    }
    one_doc(&run.stdout)
}

// ---------------------------------------------------------------------------------------------
// Modes

fn check_expand(expected: &Value, input_vm: &Value, run: &Run) -> Result<(), Failed> {
    if let Some(err) = expected.get("error") {
        let kind = err["kind"].as_str().unwrap_or("");
        let tokens: Vec<String> = match kind {
            "conflict" => err["paths"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|p| p.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default(),
            "not-found" => required_tokens(err["message"].as_str().unwrap_or("")),
            _ => Vec::new(),
        };
        return require_failure(run, &tokens, &format!("a {kind} error"));
    }
    let got = require_success(run)?;
    compare(&normalize(expected), &normalize(&got), &normalize(input_vm))
}

fn check_infer(expected: &Value, input_vm: &Value, run: &Run) -> Result<(), Failed> {
    let what = expected
        .get("error")
        .and_then(|e| e.get("message"))
        .or_else(|| expected.get("expandError"));
    if expected.get("error").is_some() || expected.get("expandError").is_some() {
        let msg = what.and_then(Value::as_str).unwrap_or("");
        return require_failure(run, &required_tokens(msg), "a refusal");
    }
    let got = require_success(run)?;
    let prefix = ["spec", "template", "spec", "domain"];
    compare(
        &strip_acpi(normalize(&expected["expanded"]), &prefix),
        &strip_acpi(normalize(&got), &prefix),
        &strip_acpi(normalize(input_vm), &prefix),
    )
}

/// The annotation in which the VM controller records the generation of the VM it starts a VMI
/// of (`kubevirt.io/vm-generation`, `"1"` for a new VM), which `kvrender vmi` writes.
const GENERATION_ANNOTATION: &str = "kubevirt.io/vm-generation";

/// `run` with [`GENERATION_ANNOTATION`] taken out of the VMI it printed, where the answer has
/// none: the program that answered the `vmi` cases built the VMI from the VM as the controller
/// does but without that step (see `testdata/oracle/README.md`). Every other annotation is
/// compared.
fn without_generation(run: Run, expected: &Value) -> Run {
    let answered = |vmi: &Value| {
        vmi.pointer("/metadata/annotations")
            .and_then(|a| a.get(GENERATION_ANNOTATION))
            .is_some()
    };
    let any = expected
        .get("vmi")
        .into_iter()
        .chain(expected["vmiAnyOf"].as_array().into_iter().flatten())
        .any(answered);
    if any || run.code != 0 {
        return run;
    }
    let Ok(mut doc) = one_doc(&run.stdout) else {
        return run;
    };
    let Some(annotations) = doc
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    else {
        return run;
    };
    if annotations.remove(GENERATION_ANNOTATION).is_none() {
        return run;
    }
    if annotations.is_empty()
        && let Some(metadata) = doc.get_mut("metadata").and_then(Value::as_object_mut)
    {
        metadata.remove("annotations");
    }
    Run {
        stdout: serde_json::to_string(&doc).unwrap_or(run.stdout),
        ..run
    }
}

fn vmi_view(doc: &Value) -> Value {
    let mut view = Map::new();
    view.insert(
        "spec".into(),
        doc.get("spec")
            .cloned()
            .unwrap_or(Value::Object(Map::new())),
    );
    let mut meta = Map::new();
    for k in ["annotations", "labels"] {
        if let Some(v) = doc.get("metadata").and_then(|m| m.get(k))
            && !is_zero(v)
        {
            meta.insert(k.into(), v.clone());
        }
    }
    if !meta.is_empty() {
        view.insert("metadata".into(), Value::Object(meta));
    }
    let mut view = Value::Object(view);
    strip(&mut view, &["spec", "domain", "resources"]);
    strip(&mut view, &["spec", "domain", "devices"]);
    strip_acpi(view, &["spec", "domain"])
}

/// The words of kvrender's warning that the presets' order changes the VMI.
const ORDER_WARNING: &str = "in no fixed order (Go map order)";

fn check_presets(expected: &Value, input_vm: &Value, run: &Run) -> Result<(), Failed> {
    if let Some(err) = expected.get("error") {
        let mut named: Vec<String> = Vec::new();
        for c in err["presetConflicts"].as_array().into_iter().flatten() {
            for p in c["presets"].as_array().into_iter().flatten() {
                named.extend(p.as_str().map(String::from));
            }
        }
        for p in err["invalidSelectors"].as_array().into_iter().flatten() {
            named.extend(p.as_str().map(String::from));
        }
        require_failure(run, &named, "a refused VMI")?;
        // Stricter than the reference checker: KubeVirt's message itself (one of the possible
        // ones when it depends on Go's map order) must be in the diagnostic.
        let mut messages: Vec<&str> = err["messageAnyOf"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        messages.extend(err["message"].as_str());
        if !messages.is_empty() && !messages.iter().any(|m| run.stderr.contains(m)) {
            return Err(format!(
                "the refusal does not carry KubeVirt's message (one of {messages:?})\nstderr: {}",
                run.stderr
            )
            .into());
        }
        return Ok(());
    }
    let got = vmi_view(&require_success(run)?);
    let options: Vec<Value> = match expected.get("vmi") {
        Some(v) => vec![v.clone()],
        None => expected["vmiAnyOf"].as_array().cloned().unwrap_or_default(),
    };
    // KubeVirt tried every order of the presets: kvrender warns exactly when they gave
    // several VMIs.
    let warned = run.stderr.contains(ORDER_WARNING);
    if warned != (options.len() > 1) {
        return Err(if warned {
            format!(
                "every order of the presets gives one VMI, but kvrender warns: {}",
                run.stderr
            )
        } else {
            format!(
                "the VMI depends on the order of the presets, and kvrender does not warn: {}",
                run.stderr
            )
        }
        .into());
    }
    let inp = if input_vm["kind"] == "VirtualMachine" {
        input_vm
            .pointer("/spec/template")
            .cloned()
            .unwrap_or(Value::Null)
    } else {
        input_vm.clone()
    };
    let inp = vmi_view(&inp);
    let mut best: Option<Failed> = None;
    for opt in options {
        match compare(&vmi_view(&opt), &got, &inp) {
            Ok(()) => return Ok(()),
            Err(e) => best = best.or(Some(e)),
        }
    }
    Err(best.unwrap_or_else(|| "no expected VMI".into()))
}

fn check_validate(expected: &Value, run: &Run) -> Result<(), Failed> {
    if run.code != 0 && run.code != 1 {
        return Err(format!(
            "exit {} (0 = clean, 1 = findings): {}",
            run.code, run.stderr
        )
        .into());
    }
    let report: Value = serde_json::from_str(&run.stdout)
        .map_err(|e| Failed::from(format!("stdout is not JSON: {e}")))?;
    let findings = report["findings"]
        .as_array()
        .ok_or("no `findings` list in the report")?;
    let errors: Vec<&Value> = findings
        .iter()
        .filter(|f| {
            f["object"]["kind"] == expected["kind"]
                && f["object"]["name"] == expected["name"]
                && f["severity"] == "error"
        })
        .collect();
    if expected["allowed"] == true {
        if let Some(e) = errors.first() {
            return Err(format!("expected allowed, got error: {}", e["message"]).into());
        }
        let any_error = findings.iter().any(|f| f["severity"] == "error");
        if run.code != 0 && !any_error {
            return Err("exit 1 without any error finding".into());
        }
        return Ok(());
    }
    if errors.is_empty() {
        return Err(format!(
            "expected refused ({}), got no error finding",
            expected["causes"]
        )
        .into());
    }
    if run.code != 1 {
        return Err(format!("error findings but exit {}", run.code).into());
    }
    let text: String = errors
        .iter()
        .map(|f| {
            format!(
                "{} {} ",
                f["field"].as_str().unwrap_or(""),
                f["message"].as_str().unwrap_or("")
            )
        })
        .collect();
    let missing: Vec<&str> = expected["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["field"].as_str())
        .filter(|f| !text.contains(f))
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("refused, but no error names {missing:?}").into())
    }
}

/// Where a VirtualMachinePool keeps the VM `spec` of its template.
const POOL_TEMPLATE: &str = "spec.virtualMachineTemplate.spec.";

/// How the pool rule (`src/validate/rules/pool.rs`) ends a finding about the VMs a pool creates.
const POOL_VM_NOTE: &str = r#" \(about each VM the pool creates from its template, "([^"]*)" the first: KubeVirt admits the pool itself\)$"#;

/// A `validate` run that reported `findings` alone (exit 1 with an error among them), for the
/// checks that judge part of a run's findings.
fn view_of(findings: &[Value]) -> Run {
    Run {
        code: i32::from(findings.iter().any(|f| f["severity"] == "error")),
        stdout: json!({ "findings": findings }).to_string(),
        stderr: String::new(),
    }
}

/// How the replica set rule (`src/validate/rules/replica_set.rs`) ends a finding about the VMIs
/// a replica set creates.
const RS_VMI_NOTE: &str = r#" \(about each VMI the replica set creates from its template, named "([^"]*)" and five random characters: KubeVirt admits the replica set itself\)$"#;

/// A replica set case (`oracle/rs/`): KubeVirt's replica set webhook's answer (`rsadmit.yaml`,
/// with `controller: idle` when its controller then creates no VMI) and, when it creates one,
/// the whole answer to that VMI (`vmi/vmiadmit.yaml`: its presets and defaults applied), against
/// `validate`'s findings on the replica set. Those about the replica set itself are held to the
/// first: an admitted replica set has no error and no `KV034` finding of its own (`KV036` says
/// so when the controller stays idle, and only then); a refused one an error, and its `KV034`
/// findings are held to the causes as [`check_admit`] holds a VM's, and its `KV036` ones one by
/// one. Those about its VMI, taken back to the VMI's fields, are held to the second as
/// [`check_vmi_admit`] holds a VMI document's, and `kvrender vmi`'s VMI to the VMI the mutating
/// webhook made (`vmi/expected.yaml`) as [`check_presets`] holds it. A refused or idle replica
/// set has no finding about VMIs.
fn check_replica_set(case: &Path, run: &Run) -> Result<(), Failed> {
    let report = json_report(run)?;
    let note = regex::Regex::new(RS_VMI_NOTE).expect("a pattern");
    let (mut own, mut about_vmis) = (Vec::new(), Vec::new());
    for f in report["findings"]
        .as_array()
        .ok_or("no `findings` list in the report")?
        .iter()
        .filter(|f| f["object"]["kind"] == "VirtualMachineInstanceReplicaSet")
    {
        let mut f = f.clone();
        let message = f["message"].as_str().unwrap_or("").to_string();
        if let Some(found) = note.captures(&message) {
            f["object"]["kind"] = json!("VirtualMachineInstance");
            f["message"] = json!(&message[..found.get(0).expect("a match").start()]);
            let field = f["field"].as_str().unwrap_or("");
            let field = field.strip_prefix("spec.template.").unwrap_or(field);
            f["field"] = json!(field);
            about_vmis.push(f);
        } else {
            // The template's fields are where a VM keeps its template's.
            f["object"]["kind"] = json!("VirtualMachine");
            own.push(f);
        }
    }
    let configured = case.join("cluster.yaml").is_file();
    let answer = read_one(&case.join("rsadmit.yaml"));
    let idle = answer["controller"] == "idle";
    let said_idle = |f: &&Value| {
        f["code"] == "KV036"
            && f["message"]
                .as_str()
                .is_some_and(|m| m.contains("its controller creates no"))
    };
    let gated = answer["causes"].as_array().into_iter().flatten().any(|c| {
        c["message"]
            .as_str()
            .is_some_and(|m| m.contains(GATE_OFF) || m.contains(PERSISTENT_RESERVATION_OFF))
    });
    if answer["allowed"] == true {
        let refusing = own
            .iter()
            .filter(|f| !said_idle(f))
            .find(|f| f["severity"] == "error" || f["code"] == "KV034");
        if let Some(f) = refusing {
            return Err(format!("KubeVirt admits the replica set, but: {f}").into());
        }
        if idle != own.iter().any(|f| said_idle(&f)) {
            return Err(format!(
                "the controller {} VMIs, and KV036 says otherwise",
                if idle { "creates no" } else { "creates" }
            )
            .into());
        }
        if idle {
            return match about_vmis.first() {
                Some(f) => {
                    Err(format!("an idle replica set, yet a finding about VMIs: {f}").into())
                }
                None => Ok(()),
            };
        }
        let vmi = case.join("vmi").join("vmiadmit.yaml");
        if !vmi.is_file() {
            return Err("an admitted replica set with no answer about its VMI".into());
        }
        check_vmi_admit(&read_one(&vmi), configured, &view_of(&about_vmis))
            .map_err(|e| format!("the replica set's VMI: {e:?}"))?;
        // The VMI itself, as the mutating webhook leaves it, against `kvrender vmi`.
        let expected = case.join("vmi").join("expected.yaml");
        if !expected.is_file() {
            return Ok(());
        }
        let set = read_all(&case.join("input.yaml"))
            .pop()
            .unwrap_or(Value::Null);
        let template = &set["spec"]["template"];
        let written = json!({
            "kind": "VirtualMachineInstance",
            "metadata": template["metadata"],
            "spec": template["spec"],
        });
        let run = run_kvrender(&["vmi", "--no-default-catalog"], &case.join("input.yaml"));
        return check_presets(&read_one(&expected), &written, &run)
            .map_err(|e| format!("the replica set's VMI as printed: {e:?}").into());
    }
    // Refused: by the schema, the template's checks or the selector.
    if !own
        .iter()
        .any(|f| f["severity"] == "error" || f["code"] == "KV034")
        && (configured || !gated)
    {
        return Err(format!(
            "KubeVirt refuses the replica set, kvrender finds no refusal: {}",
            answer
        )
        .into());
    }
    check_admit(&answer, None, configured, &view_of(&own))
        .map_err(|e| format!("the replica set: {e:?}"))?;
    let causes = answer["causes"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    // The schema check names a field without its list indices.
    let indices = regex::Regex::new(r"\[[^\]]*\]").expect("a pattern");
    for c in causes {
        let (field, message) = (
            c["field"].as_str().unwrap_or(""),
            c["message"].as_str().unwrap_or(""),
        );
        // The schema's refusals name the field in the message: `KV004` and `KV022` report them
        // at the field, or `KV034` (the enumerations) as the causes' check above holds them.
        if let Some((named, rest)) = message.split_once(SCHEMA_REFUSAL) {
            let by_enum = rest.starts_with("should be one of");
            let at_field = |f: &Value| {
                let ours = f["field"].as_str().unwrap_or("");
                let unindexed = indices.replace_all(ours, "");
                unindexed == named || unindexed.starts_with(&format!("{named}."))
            };
            if !by_enum
                && !own
                    .iter()
                    .any(|f| (f["code"] == "KV004" || f["code"] == "KV022") && at_field(f))
            {
                return Err(format!(
                    "KubeVirt's schema refuses {named}: {message}, KV004 does not"
                )
                .into());
            }
            continue;
        }
        if field == "spec.selector" {
            let ours = own.iter().any(|f| {
                f["code"] == "KV036"
                    && f["field"] == "spec.selector"
                    && same_message(&words(f["message"].as_str().unwrap_or("")), &words(message))
            });
            if !ours {
                return Err(
                    format!("KubeVirt refuses the selector, KV036 does not: {message}").into(),
                );
            }
        }
    }
    if (configured || !gated)
        && let Some(f) = about_vmis.first()
    {
        return Err(
            format!("KubeVirt refuses the replica set, yet a finding about its VMIs: {f}").into(),
        );
    }
    Ok(())
}

/// The fields of the refusals of KubeVirt's pool webhook for the pool's own settings (`KV035`).
const POOL_FIELDS: &[&str] = &[
    "spec.selector",
    "spec.maxUnavailable",
    "spec.updateStrategy",
    "spec.scaleInStrategy",
];

/// A pool case (`oracle/pool/`): KubeVirt's pool webhook's answer (`pooladmit.yaml`) and, when
/// it admits the pool, the whole answer to the first VM its controller creates (`vm/admit.yaml`,
/// `vm/vmiadmit.yaml`), against `validate`'s findings on the pool. The findings about the
/// pool itself are held to the first as [`check_admit`] holds a VM's (`KV034`) and one by one
/// (`KV035`); those about its VMs, taken back to the VM's fields, to the second as
/// [`check_admit`] and [`check_validate`] hold a VM's. A refused pool has no finding about VMs.
fn check_pool(case: &Path, run: &Run) -> Result<(), Failed> {
    let report = json_report(run)?;
    let note = regex::Regex::new(POOL_VM_NOTE).expect("a pattern");
    let to_vm = |text: &str| text.replace(POOL_TEMPLATE, "spec.");
    let (mut own, mut about_vms, mut vm_name) = (Vec::new(), Vec::new(), String::new());
    for f in report["findings"]
        .as_array()
        .ok_or("no `findings` list in the report")?
        .iter()
        .filter(|f| f["object"]["kind"] == "VirtualMachinePool")
    {
        let mut f = f.clone();
        let message = f["message"].as_str().unwrap_or("").to_string();
        let field = f["field"].as_str().unwrap_or("").to_string();
        f["object"]["kind"] = json!("VirtualMachine");
        if let Some(found) = note.captures(&message) {
            vm_name = found[1].to_string();
            f["object"]["name"] = json!(vm_name);
            f["message"] = json!(&message[..found.get(0).expect("a match").start()]);
            f["field"] = json!(to_vm(&field));
            about_vms.push(f);
        } else {
            f["message"] = json!(to_vm(&message));
            f["field"] = json!(to_vm(&field));
            own.push(f);
        }
    }
    let configured = case.join("cluster.yaml").is_file();
    let mut answer = read_one(&case.join("pooladmit.yaml"));
    if let Some(causes) = answer["causes"].as_array_mut() {
        for c in causes {
            for key in ["field", "message"] {
                let text = to_vm(c[key].as_str().unwrap_or(""));
                c[key] = json!(text);
            }
        }
    }
    check_admit(&answer, None, configured, &view_of(&own))
        .map_err(|e| format!("the pool: {e:?}"))?;
    // The pool's own settings: every such cause a `KV035` finding, and no other.
    let theirs: Vec<(String, String)> = answer["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| {
            let (field, message) = (c["field"].as_str()?, c["message"].as_str()?);
            POOL_FIELDS
                .contains(&field)
                .then(|| (field.to_string(), words(message)))
        })
        .collect();
    let ours: Vec<(String, String)> = own
        .iter()
        .filter(|f| f["code"] == "KV035")
        .map(|f| {
            let message = f["message"].as_str().unwrap_or("");
            (
                f["field"].as_str().unwrap_or("").to_string(),
                words(message),
            )
        })
        .collect();
    for (field, message) in &theirs {
        if !ours
            .iter()
            .any(|(f, m)| f == field && same_message(m, message))
        {
            return Err(format!(
                "KubeVirt refuses the pool, KV035 does not report {field}: {message}"
            )
            .into());
        }
    }
    // KubeVirt lists ten causes at most, and none when it cannot decode the pool.
    let listed = answer["causes"].as_array().map_or(0, Vec::len);
    for (field, message) in ours.iter().filter(|_| (1..10).contains(&listed)) {
        if !theirs
            .iter()
            .any(|(f, m)| f == field && same_message(message, m))
        {
            return Err(format!("KV035 reports what KubeVirt does not: {field}: {message}").into());
        }
    }
    // Without a cluster configuration the alpha gates are unknown to kvrender: a pool KubeVirt
    // refuses for one of them alone may have its VMs judged.
    let gated = answer["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["message"].as_str().is_some_and(|m| m.contains(GATE_OFF)));
    if answer["allowed"] != true && (configured || !gated) {
        return match about_vms.first() {
            Some(f) => {
                Err(format!("KubeVirt refuses the pool, yet a finding about its VMs: {f}").into())
            }
            None => Ok(()),
        };
    }
    let vm = case.join("vm");
    if !vm.join("admit.yaml").is_file() {
        return Ok(());
    }
    let admit = read_one(&vm.join("admit.yaml"));
    let start = vm.join("vmiadmit.yaml");
    let start = start.is_file().then(|| read_one(&start));
    let run = view_of(&about_vms);
    check_admit(&admit, start.as_ref(), configured, &run)
        .map_err(|e| format!("the pool's VM: {e:?}"))?;
    // The instancetype steps, as `oracle/validate/` holds them: a refusal by another step
    // counts as admitted there.
    const STEPS: [&str; 3] = [
        "conflicts with selected instance type",
        "provided by the instance type are not divisible",
        "failure checking preference requirements",
    ];
    let causes: Vec<Value> = admit["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| {
            let message = c["message"].as_str().unwrap_or("");
            STEPS.iter().any(|s| message.contains(s))
        })
        .cloned()
        .collect();
    if vm_name.is_empty() {
        let pool = read_all(&case.join("input.yaml"))
            .pop()
            .unwrap_or(Value::Null);
        vm_name = format!("{}-0", pool["metadata"]["name"].as_str().unwrap_or(""));
    }
    // A refusal without causes (the defaults' own) stands as it is.
    let (allowed, causes) = match admit["causes"].as_array() {
        None if admit["allowed"] != true => (
            false,
            vec![json!({"field": "", "message": admit["message"]})],
        ),
        _ => (admit["allowed"] == true || causes.is_empty(), causes),
    };
    let expected = json!({
        "kind": "VirtualMachine",
        "name": vm_name,
        "allowed": allowed,
        "causes": causes,
    });
    check_validate(&expected, &run).map_err(|e| format!("the pool's VM: {e:?}").into())
}

/// A message with the strategies KubeVirt lists in map order sorted.
fn words(message: &str) -> String {
    const FOUND: &str = "but found ";
    match message.split_once(FOUND) {
        Some((head, rest)) => {
            let (list, tail) = rest.split_once(" strategies").unwrap_or((rest, ""));
            let mut names: Vec<&str> = list.split(", ").collect();
            names.sort_unstable();
            format!("{head}{FOUND}{} strategies{tail}", names.join(", "))
        }
        None => message.to_string(),
    }
}

/// The refusals of KubeVirt's VM webhook that `KV034` reports, by a part of their message.
const KV034_MESSAGES: &[&str] = &[
    // What the VMI webhook alone checks, on the VMI a VM starts.
    "no memory requested",
    "ContainerPath volume '",
    "which was disabled.",
    "Cannot explicitly set hyperV features",
    "vmx cpu feature",
    "unsupported architecture",
    "only supports I6300ESB watchdog",
    "only supports Diag288 watchdog",
    "is not supported on",
    "Arm64",
    "threads must not be greater than 1",
    // NVIDIA Grace GPU passthrough, and the gate of a discontinued binding still listed.
    "GraceIOVirtualization",
    DISCONTINUED_GATE,
    "RunStrategy",
    "Bus type virtio is invalid for CD-ROM",
    "IDE bus is not supported",
    "unrecognized bus",
    "hard-disks do not support read-only",
    "IOThreads are not supported for disks",
    "can only be mapped to a DataVolume",
    "DownwardMetrics volume must be mapped to",
    "quantities must match the regular expression",
    "must have a boot order > 0",
    "already set for a different device",
    "Input device can have only",
    "Number of sockets in CPU topology is greater",
    "SecureBoot requires SMM",
    "IsolateEmulatorThread should be only set",
    "exactly one binding method",
    "more than one interface is connected to a pod network",
    "Multus CNI should only have one default",
    "Pod network cannot be defined when Multus",
    "must not have the same Name",
    "can only have a single target type",
    "' not found",
    "exactly one source type",
    "every network must have a unique name",
    "Only one interface can be connected",
    "must be greater than or equal to",
    "' is greater than",
    "should be provided",
    // A pool template's DNS policy, which no schema check sees first.
    "DNSPolicy: ",
    "must be an interger",
    "must be equal to ",
    "DedicatedCPUPlacement is true",
    "when NUMA topology strategy is set",
    " is used",
    "page size",
    "Memory hotplug",
    "maxGuest memory",
    "aligned",
    "Guest memory must be configured",
    "DNS_LABEL rules",
    "DNS_SUBDOMAIN rules",
    "ACPI was set",
    "refers to Volume of unsupported type",
    "does not have a matching Volume",
    "that is not supported.",
    "unrecognized option",
    "Pausing VMI",
    "IOThreadsPolicy",
    "iothreads needs to be set",
    "mutually exclusive.",
    "Sound device",
    "Video configuration",
    "PanicDeviceModel",
    "panic devices are not supported",
    GATE_OFF,
    "One and only one launchSecurity",
    "No launchSecurity support",
    "requires OVMF",
    "does not work along with",
    "attestation requires",
    "does not work with bootable NICs",
    "is required for hostDisk volume",
    "allowed are 'Disk' or",
    "is allowed to pass only with",
    "machine.type is not supported",
    "evictionStrategy is set",
    "must have exactly one probe type",
    "must be set if a",
    "only allowed if the Pod Network",
    "kernel arguments cannot",
    "must be defined with",
    "must not point to root",
    "must be an absolute path",
    "DataVolume 'name' must be set",
    "is not a valid base64 value",
    "must have only one userdatasource",
    "must have only one networkdata",
    "byte limit",
    "must have at least one userdatasource",
    "is a required field",
    "must have max one",
    "requires a noCloud volume",
    "requires a configDrive volume",
    "requires at least one user",
    "must have exactly one source set",
    "must have exactly one propagationMethod",
    "must have exactly one access credential",
    "DataVolumeTemplate entry",
    "Missing Data volume PVC",
    "Duplicate storage definition",
    "External population is incompatible",
    "Data volume should have either",
    "Missing dataVolume valid source",
    "Multiple dataVolume sources",
    "should have a network type",
    "should have only one network type",
    "must have a networkName",
    "interface state value is unsupported",
    "is not supported for SR-IOV NICs",
    "is supported only for bridge binding",
    "is not supported on default networks",
    "Masquerade interface only implemented",
    "reserved for the in-pod bridge",
    "Bridge on pod network configuration",
    "PasstBinding",
    "Network interface name can only",
    "MAC address (",
    "malformed PCI address",
    "name of the port",
    "Port field",
    "Unknown protocol",
    SCHEMA_DNS_POLICY,
    "must provide `dnsConfig`",
    "at least one DNS nameserver",
    "nameservers:",
    "must be valid IP address",
    "search paths",
    "in the search list",
    "RFC 1123 subdomain",
    "must be no more than 253",
    "Option.Name must not be empty",
    "reserved kubevirt.io/ labels",
    PERSISTENT_RESERVATION_OFF,
    DISCONTINUED,
    "DHCPPrivateOptions",
    "NTP servers must be",
    "portRanges",
    "Start must be",
    "End must be",
    ".nodeAffinity.",
    ".podAffinity.",
    ".podAntiAffinity.",
    ".topologySpreadConstraints",
    "possible with bus type virtio",
    "must be made up of the following characters",
    "in length, if specified",
    "has invalid value",
    "Disk IO mode",
    "Block size matching",
    "Logical size",
    "Discard granularity",
    "Provided size of",
    "a lowercase RFC 1123 label",
    "must not contain dots",
    "must be no more than 63 characters",
    "resourceClaims",
    "claimName/requestName",
    "is required for DRA",
    "contains both DRA",
    "without deviceName or claimRequest",
    "with both deviceName and claimRequest",
    "contains DRA enabled",
    "contains DRA networks",
    "mixing Multus and DRA",
    "requires an SR-IOV or binding plugin interface",
    "at most one of resourceClaimName",
    "must specify one of: resourceClaimName",
    "a lowercase RFC 1123 subdomain",
    "must be no more than 253 characters",
    "utility volumes can only be added via hotplug",
    "differs from VM namespace",
];

/// KubeVirt's paths for a disk's PCI address and its name in that message, which repeat the
/// disk list's path and put the index after `disk`, as patterns and the fields they mean.
const THEIR_FIELD_PATTERNS: &[(&str, &str)] = &[
    (
        r"\.devices\.disks\.domain\.devices\.disks\.disk\[(\d+)\]\.pciAddress",
        ".devices.disks[$1].disk.pciAddress",
    ),
    (
        r"\.devices\.disks\.domain\.devices\.disks\.disk\[(\d+)\]\.name",
        ".devices.disks[$1].name",
    ),
];

/// KubeVirt's refusal of a SCSI persistent reservation the configuration does not allow: a
/// feature gate's refusal in other words.
const PERSISTENT_RESERVATION_OFF: &str = "persistent reservation is not enabled";

/// KubeVirt's refusal of a binding it no longer has, which it gives before every other check,
/// naming the interface below `spec` as if it were the VM's template spec.
const DISCONTINUED: &str = "has been discontinued since v1.3";
/// KubeVirt's refusal of a spec that uses a discontinued binding while the configuration still
/// lists its feature gate, which names no field; kvrender names the first interface using it.
const DISCONTINUED_GATE: &str = "network binding is discontinued since v1.3";
const DISCONTINUED_FIELD: (&str, &str) = (
    "spec.domain.devices.interfaces[",
    "spec.template.spec.domain.devices.interfaces[",
);

/// Fields KubeVirt names less exactly than kvrender, as patterns of kvrender's field (and of
/// the field where its message quotes it) and what KubeVirt writes instead: a DHCP private
/// option's spec, a reserving LUN's disk list, a spread constraint's label selector (below the
/// list), a pod affinity term's namespaces (`namespace`, without an index). A schema refusal
/// names its field without list indices.
const OUR_FIELD_FOLDS: &[(&str, &str)] = &[
    (
        r"^(spec\.template\.spec)\.domain\.devices\.interfaces\[\d+\]\.dhcpOptions\.privateOptions(\[\d+\]\.option)?$",
        "$1",
    ),
    (
        r"\.disks\[\d+\]\.lun\.reservation$",
        ".disks.luns.reservation",
    ),
    (
        r"\.topologySpreadConstraints\[\d+\]\.labelSelector",
        ".topologySpreadConstraints.labelSelector",
    ),
    (r"\.namespaces\[\d+\]$", ".namespace"),
];

/// How KubeVirt's refusals for a preference's requirements begin (`KV033` reports them).
const PREFERENCE_REQUIREMENTS: &str = "failure checking preference requirements";

/// KubeVirt's schema check's refusal of an unknown DNS policy, which names no field but its
/// message's first words. Any schema refusal stops the webhook before the spec checks.
const SCHEMA_DNS_POLICY: &str = "dnsPolicy in body should be one of";
const SCHEMA_REFUSAL: &str = " in body ";

/// KubeVirt's fields for the DNS configuration, and the fields' names.
const DNS_FIELDS: &[(&str, &str)] = &[
    ("nameservers", "spec.template.spec.dnsConfig.nameservers"),
    ("searchDomains", "spec.template.spec.dnsConfig.searches"),
    ("options", "spec.template.spec.dnsConfig.options"),
];

/// KubeVirt's path for a VM's `dataVolumeTemplates`, and the ends of its fields there that are
/// not the fields' names, with the names.
const DV_TEMPLATES: (&str, &str) = ("spec.dataVolumeTemplate[", "spec.dataVolumeTemplates[");
const DV_TEMPLATE_FIELDS: &[(&str, &str)] = &[
    ("].name", "].metadata.name"),
    ("].PVC.Storage", "].spec"),
    ("].source.sourceRef", "].spec"),
    ("].source", "].spec.source"),
];

/// What KubeVirt's refusals for a feature gate that is off say. Without a cluster
/// configuration kvrender does not know the alpha gates, and does not report them.
const GATE_OFF: &str = "feature gate is not enabled";

/// KubeVirt's field paths that are not where the setting lives, and where it does.
const FIELD_FIXES: &[(&str, &str)] = &[
    (".devices.disks.domain.devices.disks[", ".devices.disks["),
    (
        "spec.template.spec.acpi",
        "spec.template.spec.domain.firmware.acpi",
    ),
    (
        "spec.template.spec.Sound",
        "spec.template.spec.domain.devices.sound",
    ),
    (
        "spec.template.spec.video",
        "spec.template.spec.domain.devices.video",
    ),
    (
        "spec.template.spec.HostDevices",
        "spec.template.spec.domain.devices.hostDevices",
    ),
    (
        "spec.template.spec.launchSecurity",
        "spec.template.spec.domain.launchSecurity",
    ),
    (
        "spec.template.spec.domain.volumes[",
        "spec.template.spec.volumes[",
    ),
    (
        "domain.ioThreads.count",
        "domain.ioThreads.supplementalPoolThreadCount",
    ),
    (
        "spec.template.spec.nodeAffinity",
        "spec.template.spec.affinity.nodeAffinity",
    ),
    (
        "spec.template.spec.podAffinity",
        "spec.template.spec.affinity.podAffinity",
    ),
    (
        "spec.template.spec.podAntiAffinity",
        "spec.template.spec.affinity.podAntiAffinity",
    ),
];

/// kvrender's field and message with the field written as KubeVirt writes it
/// ([`OUR_FIELD_FOLDS`]).
fn fold_field(field: &str, message: &str) -> (String, String) {
    static FOLDS: std::sync::LazyLock<Vec<(regex::Regex, &str)>> = std::sync::LazyLock::new(|| {
        OUR_FIELD_FOLDS
            .iter()
            .map(|(pattern, to)| (regex::Regex::new(pattern).expect("a pattern"), *to))
            .collect()
    });
    if message.contains(SCHEMA_REFUSAL) {
        static INDEX: std::sync::LazyLock<regex::Regex> =
            std::sync::LazyLock::new(|| regex::Regex::new(r"\[\d+\]").expect("a pattern"));
        return (
            INDEX.replace_all(field, "").into_owned(),
            INDEX.replace_all(message, "").into_owned(),
        );
    }
    let (mut field, mut message) = (field.to_string(), message.to_string());
    for (pattern, to) in FOLDS.iter() {
        if pattern.is_match(&field) {
            let theirs = pattern.replace(&field, *to).into_owned();
            message = message.replace(&field, &theirs);
            field = theirs;
        }
    }
    (field, message)
}

/// Whether kvrender's message is KubeVirt's: the same, or followed by a few words of its own
/// (in parentheses, or after a colon in place of KubeVirt's closing full stop).
fn same_message(ours: &str, theirs: &str) -> bool {
    ours == theirs
        || ours.starts_with(&format!("{theirs} ("))
        || theirs
            .strip_suffix('.')
            .is_some_and(|t| ours.starts_with(&format!("{t}:")))
}

/// KubeVirt's whole answer to a VM (`admit.yaml`: the mutating webhook, then the validating
/// one) against `validate`'s `KV034` findings: an admitted VM has none, every refusal of a kind
/// `KV034` covers is one of them, with KubeVirt's field and message, and when KubeVirt got that
/// far and listed every cause (it lists ten at most), `KV034` reports nothing more. Without a
/// cluster configuration (`configured`), a refusal for a feature gate is not expected, and
/// what KubeVirt did not check behind it is not held against `KV034`.
///
/// `start` (`vmiadmit.yaml`), where there is one, is KubeVirt's answer to the VMI an admitted VM
/// starts (its presets and the VMI defaults applied, then the VMI webhook): the `KV034` findings
/// about that VMI (those ending in [`START_NOTE`]) are held to it the same way, its paths taken
/// to the VM's template.
fn check_admit(
    admit: &Value,
    start: Option<&Value>,
    configured: bool,
    run: &Run,
) -> Result<(), Failed> {
    let report = json_report(run)?;
    let (mut folded, mut at_start, mut at_start_maybe) = (Vec::new(), Vec::new(), Vec::new());
    for f in report["findings"]
        .as_array()
        .ok_or("no `findings` list in the report")?
        .iter()
        .filter(|f| f["code"] == "KV034" && f["object"]["kind"] == "VirtualMachine")
    {
        let (message, maybe) = strip_order_note(f["message"].as_str().unwrap_or(""));
        let pair = fold_field(f["field"].as_str().unwrap_or(""), message);
        match pair.1.strip_suffix(START_NOTE) {
            Some(m) if maybe => at_start_maybe.push((pair.0.clone(), m.to_string())),
            Some(m) => at_start.push((pair.0.clone(), m.to_string())),
            None if maybe => {
                return Err(format!("an order note on a finding about the VM: {message}").into());
            }
            None => folded.push(pair),
        }
    }
    let ours: Vec<(&str, &str)> = folded.iter().map(|(f, m)| (&**f, &**m)).collect();
    if admit["allowed"] == true {
        if let Some((field, message)) = ours.first() {
            return Err(
                format!("KubeVirt admits the VM, but KV034 reports {field}: {message}").into(),
            );
        }
        // The presets' refusal of the VMI the VM starts: the mutating webhook's answer with a
        // message of its own (its schema check's lists causes instead).
        let mutate = start.and_then(|s| s["mutate"]["message"].as_str());
        let by_presets: Vec<&str> = at_start
            .iter()
            .map(|(_, m)| m.as_str())
            .filter(|m| is_preset_refusal(m))
            .collect();
        if !by_presets.is_empty() || mutate.is_some() {
            return match (mutate, by_presets.as_slice()) {
                (Some(theirs), [ours])
                    if at_start.len() == 1 && same_preset_refusal(theirs, ours) =>
                {
                    Ok(())
                }
                _ => Err(format!(
                    "the presets' refusal of the VMI the VM starts: KubeVirt {mutate:?}, \
                     KV034 {at_start:?}"
                )
                .into()),
            };
        }
        let answer = start.map(|s| &s["vmi"]).filter(|a| a.is_object());
        let at_start: Vec<(&str, &str)> = at_start.iter().map(|(f, m)| (&**f, &**m)).collect();
        let maybe: Vec<(&str, &str)> = at_start_maybe.iter().map(|(f, m)| (&**f, &**m)).collect();
        return match answer {
            Some(answer) if answer["allowed"] == true => match at_start.first() {
                Some((field, message)) => Err(format!(
                    "KubeVirt admits the VMI the VM starts, but KV034 refuses it: \
                     {field}: {message}"
                )
                .into()),
                None => Ok(()),
            },
            Some(answer) => {
                let causes: Vec<Value> = answer["causes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(vmi_cause_at_template)
                    .collect();
                compare_causes(&causes, configured, &at_start, &maybe)
                    .map_err(|e| format!("the VMI the VM starts: {e:?}").into())
            }
            None => match at_start.first() {
                Some((field, message)) => Err(format!(
                    "KV034 refuses the VMI the VM starts, with no answer to compare: \
                     {field}: {message}"
                )
                .into()),
                None => Ok(()),
            },
        };
    }
    let causes = admit["causes"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    compare_causes(causes, configured, &ours, &[])
}

/// The JSON report of a `validate` run that found what it found (exit code 0 or 1).
fn json_report(run: &Run) -> Result<Value, Failed> {
    if run.code != 0 && run.code != 1 {
        return Err(format!("exit {}: {}", run.code, run.stderr).into());
    }
    serde_json::from_str(&run.stdout).map_err(|e| format!("stdout is not JSON: {e}").into())
}

/// What `KV014` adds around KubeVirt's message of a preset its webhook refuses.
const PRESET_REFUSED: (&str, &str) = (
    "KubeVirt's preset webhook refuses the preset: ",
    " (it is never created, so it selects no VirtualMachineInstance",
);

/// KubeVirt's answer to creating the preset of the input (`presetadmit.yaml`: `allowed`, and the
/// `causes` of a refusal) against `validate`'s `KV014` findings: one for each cause, with
/// KubeVirt's message, and none when KubeVirt admits the preset. KubeVirt's disk checks name a
/// disk by a path of their own (`disks.domain.devices.disks.disk[0]`); kvrender names the disk.
fn check_preset_admit(answer: &Value, run: &Run) -> Result<(), Failed> {
    let report = json_report(run)?;
    let mut ours: Vec<String> = report["findings"]
        .as_array()
        .ok_or("no `findings` list in the report")?
        .iter()
        .filter(|f| f["code"] == "KV014")
        .map(|f| {
            let message = f["message"].as_str().unwrap_or("");
            let message = message.strip_prefix(PRESET_REFUSED.0).unwrap_or(message);
            match message.rfind(PRESET_REFUSED.1) {
                Some(at) => message[..at].to_string(),
                None => message.to_string(),
            }
        })
        .collect();
    let mut theirs: Vec<String> = answer["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["message"].as_str())
        .map(|m| m.replace("disks.domain.devices.disks.disk[", "disks["))
        .collect();
    if answer["allowed"] == true && !theirs.is_empty() {
        return Err("an admitted preset with causes in presetadmit.yaml".into());
    }
    ours.sort();
    theirs.sort();
    if ours == theirs {
        Ok(())
    } else {
        Err(format!("KubeVirt {theirs:?}, KV014 {ours:?}").into())
    }
}

/// KubeVirt's messages when the VMI defaults refuse the cluster's default interface.
const DEFAULT_INTERFACE_REFUSALS: &[&str] = &[
    "slirp interface is deprecated as of v1.3",
    "bridge interface is not enabled in kubevirt-config",
];

/// How KubeVirt's message of a refusal by conflicting presets begins.
const PRESET_CONFLICTS: &str = "VirtualMachinePresets cannot be applied due to conflicts";

/// What kvrender adds to KubeVirt's message when a preset's selector does not parse.
const INVALID_SELECTOR: &str = "(invalid label selector in VirtualMachineInstancePreset ";

/// Whether a `KV034` message is the presets' refusal of a VMI.
fn is_preset_refusal(message: &str) -> bool {
    message.starts_with(PRESET_CONFLICTS) || message.contains(INVALID_SELECTOR)
}

/// Whether kvrender's message (`ours`) is the presets' refusal KubeVirt's (`theirs`) is: the
/// same pairs of presets in conflict (KubeVirt lists them in Go map order, and prints the
/// addresses of pointers), or the same selector error.
fn same_preset_refusal(theirs: &str, ours: &str) -> bool {
    static PAIR: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"presets '([^']*)' and '([^']*)' conflict").expect("a pattern")
    });
    let pairs = |m: &str| {
        let mut pairs: Vec<(String, String)> = PAIR
            .captures_iter(m)
            .map(|c| {
                let (a, b) = (c[1].to_string(), c[2].to_string());
                if a <= b { (a, b) } else { (b, a) }
            })
            .collect();
        pairs.sort();
        pairs
    };
    if theirs.starts_with(PRESET_CONFLICTS) {
        ours.starts_with(PRESET_CONFLICTS) && pairs(theirs) == pairs(ours)
    } else {
        // Several invalid selectors: KubeVirt names the error of the first it meets, in Go's
        // map order, and kvrender gives each of the others after its preset's name.
        ours.contains(INVALID_SELECTOR)
            && (ours.starts_with(theirs) || ours.contains(&format!("': {theirs}")))
    }
}

/// The notes `KV034` adds to a finding that holds in some orders of the presets only
/// (`src/validate/rules/vm_spec/start.rs`).
const ORDER_NOTES: [&str; 2] = [
    ". This holds with the VirtualMachineInstancePresets ",
    ". This holds when KubeVirt merges the VirtualMachineInstancePresets ",
];

/// `message` without the note that it holds in some orders of the presets only, and whether
/// it had one: KubeVirt's answer, from one order, may or may not give it.
fn strip_order_note(message: &str) -> (&str, bool) {
    ORDER_NOTES
        .iter()
        .find_map(|note| message.find(note).map(|at| (&message[..at], true)))
        .unwrap_or((message, false))
}

/// KubeVirt's answer to creating a VirtualMachineInstance (`vmiadmit.yaml`: its presets and
/// the VMI defaults applied, then the VMI webhook) against `validate`'s `KV034` findings about
/// it, as [`check_admit`] holds a VM's: both taken to a VM template's paths, where the field
/// fixes apply.
fn check_vmi_admit(answer: &Value, configured: bool, run: &Run) -> Result<(), Failed> {
    let report = json_report(run)?;
    // `mutate` is the answer when the mutating webhook already refuses the VMI (its schema
    // check); otherwise `vmi` holds the validating webhook's.
    let before_presets = answer["vmi"].is_null() && answer["mutate"]["allowed"] == false;
    let answer = answer["vmi"]
        .as_object()
        .or_else(|| answer["mutate"].as_object())
        .ok_or("no `vmi` or `mutate` answer")?;
    let (mut ours, mut maybe) = (Vec::new(), Vec::new());
    for f in report["findings"]
        .as_array()
        .ok_or("no `findings` list in the report")?
        .iter()
        .filter(|f| f["code"] == "KV034" && f["object"]["kind"] == "VirtualMachineInstance")
    {
        let mapped = vmi_cause_at_template(f);
        let (message, in_some_orders) = strip_order_note(mapped["message"].as_str().unwrap_or(""));
        let pair = fold_field(mapped["field"].as_str().unwrap_or(""), message);
        if in_some_orders {
            maybe.push(pair);
        } else {
            ours.push(pair);
        }
    }
    let ours: Vec<(&str, &str)> = ours.iter().map(|(f, m)| (&**f, &**m)).collect();
    let maybe: Vec<(&str, &str)> = maybe.iter().map(|(f, m)| (&**f, &**m)).collect();
    // The presets' refusal (the mutating webhook's answer with a message of its own, where its
    // schema check lists causes): the same presets in conflict, or the same selector error.
    let mutate = answer.get("message").and_then(Value::as_str);
    let by_presets: Vec<&str> = ours
        .iter()
        .map(|(_, m)| *m)
        .filter(|m| is_preset_refusal(m))
        .collect();
    // The defaults that come after the presets refuse the cluster's default interface: one
    // `KV034` finding at the spec (a template's, as every VMI path here) says so, beside what
    // the checks of the VMI as written find.
    if let Some(theirs) = mutate.filter(|m| DEFAULT_INTERFACE_REFUSALS.contains(m)) {
        let said: Vec<&(&str, &str)> = ours.iter().filter(|(_, m)| m.starts_with(theirs)).collect();
        return match said.as_slice() {
            [("spec.template.spec", _)] if by_presets.is_empty() => Ok(()),
            _ => Err(format!(
                "the default interface's refusal: KubeVirt {theirs:?}, KV034 {said:?} \
                 (and the presets' refusal {by_presets:?})"
            )
            .into()),
        };
    }
    // The webhook's schema check comes before the presets: when it refuses the VMI, KubeVirt
    // never gets to a refusal by the presets, which `KV034` may report beside the schema's.
    let ours: Vec<(&str, &str)> = if before_presets && mutate.is_none() {
        ours.into_iter()
            .filter(|(_, m)| !is_preset_refusal(m))
            .collect()
    } else if !by_presets.is_empty() || mutate.is_some() {
        return match (mutate, by_presets.as_slice()) {
            (Some(theirs), [ours]) if same_preset_refusal(theirs, ours) => Ok(()),
            _ => Err(format!(
                "the presets' refusal of the VMI: KubeVirt {mutate:?}, KV034 {by_presets:?}"
            )
            .into()),
        };
    } else {
        ours
    };
    if answer.get("allowed") == Some(&Value::Bool(true)) {
        return match ours.first() {
            Some((field, message)) => {
                Err(format!("KubeVirt admits the VMI, but KV034 reports {field}: {message}").into())
            }
            None => Ok(()),
        };
    }
    let causes: Vec<Value> = answer
        .get("causes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(vmi_cause_at_template)
        .collect();
    compare_causes(&causes, configured, &ours, &maybe)
}

/// What `KV034` adds to a finding about the VMI a VM starts (`src/validate/rules/vm_spec.rs`).
const START_NOTE: &str = " (KubeVirt admits the VirtualMachine, then refuses the \
     VirtualMachineInstance it starts, with its presets and defaults applied)";

/// A cause of the VMI webhook, its field and the paths in its message taken from the VMI's
/// spec to the VM's template. KubeVirt names no field for missing memory (the finding names the
/// domain) and repeats `domain.features.hyperv` in the paths of Hyper-V features (the findings
/// name each once).
fn vmi_cause_at_template(cause: &Value) -> Value {
    static SPEC: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new(r"\bspec([.\[])").expect("a pattern"));
    // The ContainerPath refusal names the filesystems' list in fixed words, not by its path.
    const LITERAL: &str = "defined in spec.domain.devices.filesystems";
    let to_template = |s: &str| {
        SPEC.replace_all(s, "spec.template.spec$1")
            .replace(
                ".domain.features.hyperv.domain.features.hyperv.",
                ".domain.features.hyperv.",
            )
            .replace(&LITERAL.replace("spec.", "spec.template.spec."), LITERAL)
    };
    let message = cause["message"].as_str().unwrap_or("");
    let mut field = to_template(cause["field"].as_str().unwrap_or(""));
    if field.is_empty() && message.starts_with("no memory requested") {
        field = "spec.template.spec.domain".into();
    }
    if field == "spec" {
        field = "spec.template.spec".into();
    }
    json!({"field": field, "message": to_template(message)})
}

/// KubeVirt's `causes` of refusal against `KV034`'s findings (`ours`, and `maybe`: those that
/// hold in some orders of the presets only): every cause of a kind `KV034` covers is one of
/// them, and when KubeVirt got that far and listed every cause, `KV034` reports nothing more
/// than `maybe`.
fn compare_causes(
    causes: &[Value],
    configured: bool,
    ours: &[(&str, &str)],
    maybe: &[(&str, &str)],
) -> Result<(), Failed> {
    let gated = |c: &Value| {
        let message = c["message"].as_str().unwrap_or("");
        !configured && (message.contains(GATE_OFF) || message.contains(PERSISTENT_RESERVATION_OFF))
    };
    let covered: Vec<(String, String)> = causes
        .iter()
        .filter(|c| !gated(c))
        .filter_map(|c| {
            let message = c["message"].as_str()?;
            // Preference requirements are `KV033`'s, whatever words they share with `KV034`'s
            // (an architecture named `Arm64`).
            let kv034 = KV034_MESSAGES.iter().any(|m| message.contains(m))
                && !message.starts_with(PREFERENCE_REQUIREMENTS);
            kv034.then(|| {
                // KubeVirt names some fields where they do not live (the I/O thread refusal
                // repeats the disk list's path, the ACPI tables miss the firmware's, ...);
                // kvrender names the field that holds the setting.
                let mut field = c["field"].as_str().unwrap_or("").to_string();
                let mut message = message.to_string();
                if field.is_empty()
                    && let Some((named, _)) = message.split_once(SCHEMA_REFUSAL)
                {
                    field = named.to_string();
                }
                if field.is_empty()
                    && message.contains(DISCONTINUED_GATE)
                    && let Some((named, _)) = ours.iter().find(|(_, m)| *m == message)
                {
                    field = named.to_string();
                }
                if message.contains(DISCONTINUED)
                    && let Some(rest) = field.strip_prefix(DISCONTINUED_FIELD.0)
                {
                    field = format!("{}{rest}", DISCONTINUED_FIELD.1);
                }
                if let Some((_, name)) = DNS_FIELDS.iter().find(|(theirs, _)| field == *theirs) {
                    field = name.to_string();
                }
                static PATTERNS: std::sync::LazyLock<Vec<(regex::Regex, &str)>> =
                    std::sync::LazyLock::new(|| {
                        THEIR_FIELD_PATTERNS
                            .iter()
                            .map(|(p, to)| (regex::Regex::new(p).expect("a pattern"), *to))
                            .collect()
                    });
                for (pattern, to) in PATTERNS.iter() {
                    field = pattern.replace_all(&field, *to).into_owned();
                    message = pattern.replace_all(&message, *to).into_owned();
                }
                for (theirs, real) in FIELD_FIXES {
                    if field.contains(theirs) {
                        field = field.replace(theirs, real);
                        message = message.replace(theirs, real);
                    }
                }
                if let Some(rest) = field.strip_prefix(DV_TEMPLATES.0) {
                    field = format!("{}{rest}", DV_TEMPLATES.1);
                    message = message.replace(DV_TEMPLATES.0, DV_TEMPLATES.1);
                    if let Some((end, name)) = DV_TEMPLATE_FIELDS
                        .iter()
                        .find(|(end, _)| field.ends_with(end))
                    {
                        field = format!("{}{name}", &field[..field.len() - end.len()]);
                    }
                }
                // Its field and message for an interface's boot order below 1 leave out the
                // interface list's path.
                if field.starts_with("spec.template.spec[") {
                    let to = "spec.template.spec.domain.devices.interfaces[";
                    let field = field.replacen("spec.template.spec[", to, 1);
                    return (field, message.replacen("spec.template.spec[", to, 1));
                }
                (field, message)
            })
        })
        .collect();
    // What `have` holds that `other` does not, as `field: message` lines; `ours_first` says
    // which side's messages are kvrender's.
    let unmatched = |have: &[(&str, &str)], other: &[(&str, &str)], ours_first: bool| {
        have.iter()
            .filter(|(f, m)| {
                !other.iter().any(|(of, om)| {
                    f == of
                        && if ours_first {
                            same_message(m, om)
                        } else {
                            same_message(om, m)
                        }
                })
            })
            .map(|(f, m)| format!("{f}: {m}"))
            .collect::<Vec<_>>()
    };
    let theirs: Vec<(&str, &str)> = covered.iter().map(|(f, m)| (f.as_str(), &**m)).collect();
    // A finding that holds in some orders of the presets only may stand for a refusal; it is
    // never one too many.
    let either: Vec<(&str, &str)> = ours.iter().chain(maybe).copied().collect();
    let missing = unmatched(&theirs, &either, false);
    if !missing.is_empty() {
        return Err(format!("KubeVirt refuses, and KV034 does not report: {missing:?}").into());
    }
    // A schema refusal or a discontinued binding stops KubeVirt before the spec checks.
    let schema = |c: &Value| {
        let message = c["message"].as_str().unwrap_or("");
        message.contains(SCHEMA_REFUSAL)
            || message.contains(DISCONTINUED)
            || message.contains(DISCONTINUED_GATE)
    };
    if !covered.is_empty()
        && causes.len() < 10
        && !causes.iter().any(gated)
        && !causes.iter().any(schema)
    {
        let extra = unmatched(ours, &theirs, true);
        if !extra.is_empty() {
            return Err(format!("KV034 reports what KubeVirt does not: {extra:?}").into());
        }
    }
    Ok(())
}

//! The presets conformance corpus (`testdata/conformance/presets/`), every case, with the pass
//! rules of `check.py --mode presets`, plus snapshots of the documented examples.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use kvrender::kubevirt::presets::{self, PresetOutcome, StagedVmi};
use kvrender::load;
use kvrender::model::Object;
use serde_json::{Map, Value, json};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/conformance/presets")
}

fn load_objects(path: &Path) -> Vec<Object> {
    let text = std::fs::read_to_string(path).expect("read input");
    let loaded = load::parse_text(&Arc::from(path.to_string_lossy().as_ref()), &text);
    assert!(
        loaded.diagnostics.is_empty(),
        "{}: {:?}",
        path.display(),
        loaded.diagnostics
    );
    loaded.objects
}

fn load_expected(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).expect("read expected");
    load::yaml::parse_document(&text).expect("expected.yaml parses")
}

// ---------------------------------------------------------------------------------------------
// The comparison of check.py (`_vmi_view`, `sem_diffs`, `quantity`).

/// An exact quantity value: `mantissa * 10^exp10`, normalised (no trailing zeros).
fn quantity(v: &Value) -> Option<(i128, i32)> {
    let s = match v {
        Value::Number(n) => return n.as_i64().map(|i| normalise(i128::from(i), 0)),
        Value::String(s) => s.as_str(),
        _ => return None,
    };
    let digits_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(digits_end);
    let (sign, num) = match num.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, num.strip_prefix('+').unwrap_or(num)),
    };
    let (int, frac) = num.split_once('.').unwrap_or((num, ""));
    if (int.is_empty() && frac.is_empty())
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let mut mantissa: i128 = format!("{int}{frac}").parse().ok()?;
    let mut exp10 = -i32::try_from(frac.len()).ok()?;
    let binary = |k: u32| Some(1i128 << (10 * k));
    let factor = match suffix {
        "" => Some(1),
        "n" => {
            exp10 -= 9;
            Some(1)
        }
        "u" => {
            exp10 -= 6;
            Some(1)
        }
        "m" => {
            exp10 -= 3;
            Some(1)
        }
        "k" => {
            exp10 += 3;
            Some(1)
        }
        "M" => {
            exp10 += 6;
            Some(1)
        }
        "G" => {
            exp10 += 9;
            Some(1)
        }
        "T" => {
            exp10 += 12;
            Some(1)
        }
        "P" => {
            exp10 += 15;
            Some(1)
        }
        "E" => {
            exp10 += 18;
            Some(1)
        }
        "Ki" => binary(1),
        "Mi" => binary(2),
        "Gi" => binary(3),
        "Ti" => binary(4),
        "Pi" => binary(5),
        "Ei" => binary(6),
        e if e.starts_with(['e', 'E']) => {
            exp10 += e[1..].parse::<i32>().ok()?;
            Some(1)
        }
        _ => None,
    }?;
    mantissa = mantissa.checked_mul(factor)?.checked_mul(sign)?;
    Some(normalise(mantissa, exp10))
}

fn normalise(mut m: i128, mut e: i32) -> (i128, i32) {
    if m == 0 {
        return (0, 0);
    }
    while m % 10 == 0 {
        m /= 10;
        e += 1;
    }
    (m, e)
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

fn same_type(a: &Value, b: &Value) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
        && match (a, b) {
            (Value::Number(x), Value::Number(y)) => x.is_f64() == y.is_f64(),
            _ => true,
        }
}

/// Differences between an expected and an actual value, with check.py's allowances: quantities
/// compare by value, and an extra zero value the input has at the same path passes.
fn sem_diffs(exp: &Value, got: &Value, inp: Option<&Value>, path: &str, out: &mut Vec<String>) {
    match (exp, got) {
        (Value::Object(e), Value::Object(g)) => {
            let mut keys: Vec<&String> = e.keys().chain(g.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = format!("{path}.{k}");
                let inp_k = inp.and_then(|i| i.get(k.as_str()));
                match (e.get(k), g.get(k)) {
                    (Some(_), None) => out.push(format!("{p}: missing")),
                    (None, Some(gv)) => {
                        let allowed =
                            is_zero(gv) && inp_k.is_some_and(|iv| iv == gv && same_type(iv, gv));
                        if !allowed {
                            out.push(format!("{p}: unexpected {gv}"));
                        }
                    }
                    (Some(ev), Some(gv)) => sem_diffs(ev, gv, inp_k, &p, out),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(e), Value::Array(g)) => {
            for i in 0..e.len().max(g.len()) {
                let p = format!("{path}[{i}]");
                let inp_i = inp.and_then(Value::as_array).and_then(|a| a.get(i));
                match (e.get(i), g.get(i)) {
                    (Some(ev), Some(gv)) => sem_diffs(ev, gv, inp_i, &p, out),
                    (Some(_), None) => out.push(format!("{p}: missing")),
                    (None, _) => out.push(format!("{p}: unexpected")),
                }
            }
        }
        _ => {
            if same_type(exp, got) && exp == got {
                return;
            }
            if exp.is_string()
                && let (Some(a), Some(b)) = (quantity(exp), quantity(got))
                && a == b
            {
                return;
            }
            out.push(format!("{path}: expected {exp}, got {got}"));
        }
    }
}

fn remove_if_empty(v: &mut Value, path: &[&str]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut node = v;
    for p in parents {
        match node.get_mut(*p) {
            Some(n) => node = n,
            None => return,
        }
    }
    if let Some(map) = node.as_object_mut()
        && map
            .get(*last)
            .is_some_and(|x| x.is_null() || x == &json!({}))
    {
        map.shift_remove(*last);
    }
}

/// check.py's `_vmi_view`: labels/annotations and spec, without empty artifacts.
fn vmi_view(doc: &Value) -> Value {
    let mut view = Map::new();
    view.insert(
        "spec".into(),
        doc.get("spec")
            .filter(|s| !s.is_null())
            .cloned()
            .unwrap_or_else(|| json!({})),
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
    remove_if_empty(&mut view, &["spec", "domain", "resources"]);
    remove_if_empty(&mut view, &["spec", "domain", "devices"]);
    remove_if_empty(&mut view, &["spec", "domain", "features", "acpi"]);
    view
}

fn str_list(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Run one case; `Err` describes why it fails.
fn run_case(dir: &Path) -> Result<(), String> {
    let objects = load_objects(&dir.join("input.yaml"));
    let expected = load_expected(&dir.join("expected.yaml"));
    let under_test = objects.last().ok_or("no object in input")?;
    if expected.get("kind").and_then(Value::as_str) != Some(under_test.kind_str())
        || expected.get("name").and_then(Value::as_str) != Some(under_test.name())
    {
        return Err("the answer is about another object".into());
    }
    let results = presets::vmi_stage_presets(&objects);
    let result = results.last().ok_or("no VMI built")?;

    if let Some(error) = expected.get("error") {
        let refusal = match result {
            Ok(staged) => {
                return Err(format!(
                    "expected a refusal, got a VMI with {:?}",
                    staged.outcome
                ));
            }
            Err((_, refusal)) => refusal,
        };
        let stderr = refusal.to_string();
        let mut named: Vec<String> = error
            .get("presetConflicts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .flat_map(|c| str_list(c.get("presets")))
            .collect();
        named.extend(str_list(error.get("invalidSelectors")));
        let missing: Vec<&String> = named.iter().filter(|n| !stderr.contains(*n)).collect();
        if !missing.is_empty() {
            return Err(format!("refusal does not name {missing:?}: {stderr}"));
        }
        // Stricter than check.py: the order-independent summaries must match exactly.
        let mut want_invalid = str_list(error.get("invalidSelectors"));
        let mut got_invalid = refusal.invalid_selectors.clone();
        want_invalid.sort();
        got_invalid.sort();
        if want_invalid != got_invalid {
            return Err(format!(
                "invalid selectors {got_invalid:?}, expected {want_invalid:?}"
            ));
        }
        let mut want_conflicts: Vec<(Vec<String>, Vec<String>)> = error
            .get("presetConflicts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|c| {
                let mut fields = str_list(c.get("fields"));
                fields.sort();
                (str_list(c.get("presets")), fields)
            })
            .collect();
        let mut got_conflicts: Vec<(Vec<String>, Vec<String>)> = refusal
            .conflicts
            .iter()
            .map(|(a, b, fields)| {
                let mut pair = vec![a.clone(), b.clone()];
                pair.sort();
                let mut fields = fields.clone();
                fields.sort();
                (pair, fields)
            })
            .collect();
        want_conflicts.sort();
        got_conflicts.sort();
        if want_conflicts != got_conflicts {
            return Err(format!(
                "conflicts {got_conflicts:?}, expected {want_conflicts:?}"
            ));
        }
        let mut messages = str_list(error.get("messageAnyOf"));
        messages.extend(
            error
                .get("message")
                .and_then(Value::as_str)
                .map(str::to_string),
        );
        if !messages.contains(&refusal.message) {
            return Err(format!(
                "message {:?}, expected one of {messages:?}",
                refusal.message
            ));
        }
        return Ok(());
    }

    let staged = match result {
        Ok(staged) => staged,
        Err((_, refusal)) => return Err(format!("refused: {refusal}")),
    };
    let got = vmi_view(&staged.vmi);
    let input = &under_test.value;
    let input_view = if under_test.kind_str() == "VirtualMachine" {
        vmi_view(
            input
                .get("spec")
                .and_then(|s| s.get("template"))
                .unwrap_or(input),
        )
    } else {
        vmi_view(input)
    };
    let options: Vec<&Value> = match expected.get("vmi") {
        Some(v) => vec![v],
        None => expected
            .get("vmiAnyOf")
            .and_then(Value::as_array)
            .map(|a| a.iter().collect())
            .unwrap_or_default(),
    };
    let mut best: Option<Vec<String>> = None;
    for option in options {
        let mut diffs = Vec::new();
        sem_diffs(&vmi_view(option), &got, Some(&input_view), "", &mut diffs);
        if diffs.is_empty() {
            best = None;
            break;
        }
        if best.as_ref().is_none_or(|b| diffs.len() < b.len()) {
            best = Some(diffs);
        }
    }
    if let Some(diffs) = best {
        return Err(diffs.join("; "));
    }
    let want_warnings = str_list(expected.get("warnings"));
    if staged.outcome.warnings != want_warnings {
        return Err(format!(
            "warnings {:?}, expected {want_warnings:?}",
            staged.outcome.warnings
        ));
    }
    Ok(())
}

#[test]
fn conformance_presets_every_case() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("corpus directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("expected.yaml").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 250, "corpus has {} cases", dirs.len());
    let failures: Vec<String> = dirs
        .iter()
        .filter_map(|dir| {
            run_case(dir).err().map(|why| {
                format!(
                    "{}: {why}",
                    dir.file_name().unwrap_or_default().to_string_lossy()
                )
            })
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} cases fail:\n{}",
        failures.len(),
        dirs.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// The documented examples.

fn stage(yaml: &str) -> StagedVmi {
    let loaded = load::parse_text(&Arc::from("example.yaml"), yaml);
    assert!(loaded.diagnostics.is_empty(), "{:?}", loaded.diagnostics);
    let mut results = presets::vmi_stage_presets(&loaded.objects);
    assert_eq!(results.len(), 1);
    match results.remove(0) {
        Ok(staged) => staged,
        Err((who, refusal)) => panic!("{who} refused: {refusal}"),
    }
}

fn report(staged: &StagedVmi) -> String {
    let PresetOutcome {
        applied,
        skipped,
        warnings,
        ..
    } = &staged.outcome;
    let mut out = load::yaml::to_string(&staged.vmi).expect("serialises");
    out.push_str(&format!("# applied: {applied:?}\n"));
    for s in skipped {
        out.push_str(&format!("# skipped: {s}\n"));
    }
    for w in warnings {
        out.push_str(&format!("# warning: {w}\n"));
    }
    out
}

fn snapshot_settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots"));
    settings.set_prepend_module_to_snapshot(false);
    settings
}

#[test]
fn windows_10_preset_features() {
    let staged = stage(
        r#"
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstancePreset
metadata:
  name: windows-10
spec:
  selector:
    matchLabels:
      kubevirt.io/flavor: windows-10
  domain:
    features:
      acpi: {}
      apic: {}
      hyperv:
        relaxed: {}
        vapic: {}
        spinlocks:
          spinlocks: 8191
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: win
  namespace: desktops
spec:
  runStrategy: Always
  template:
    metadata:
      labels:
        kubevirt.io/flavor: windows-10
    spec:
      domain:
        devices: {}
"#,
    );
    // The preset lives in `default`, the VM in `desktops`: not applied.
    assert!(staged.outcome.applied.is_empty());

    let staged = stage(
        r#"
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstancePreset
metadata:
  name: windows-10
spec:
  selector:
    matchLabels:
      kubevirt.io/flavor: windows-10
  domain:
    features:
      acpi: {}
      apic: {}
      hyperv:
        relaxed: {}
        vapic: {}
        spinlocks:
          spinlocks: 8191
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: win
spec:
  runStrategy: Always
  template:
    metadata:
      labels:
        kubevirt.io/flavor: windows-10
    spec:
      domain:
        devices: {}
"#,
    );
    assert_eq!(staged.outcome.applied, ["windows-10"]);
    assert_eq!(
        staged.vmi["spec"]["domain"]["features"]["hyperv"]["spinlocks"]["spinlocks"],
        8191
    );
    snapshot_settings().bind(|| insta::assert_snapshot!("presets_windows_10", report(&staged)));
}

#[test]
fn conflicting_cpu_cores_keeps_the_vm_value() {
    let staged = stage(
        r#"
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstancePreset
metadata:
  name: small-cpu
spec:
  selector:
    matchLabels:
      kubevirt.io/flavor: default-features
  domain:
    cpu:
      cores: 4
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: big
spec:
  runStrategy: Always
  template:
    metadata:
      labels:
        kubevirt.io/flavor: default-features
    spec:
      domain:
        cpu:
          cores: 6
        devices: {}
"#,
    );
    assert_eq!(staged.vmi["spec"]["domain"]["cpu"], json!({"cores": 6}));
    assert!(staged.outcome.applied.is_empty());
    assert_eq!(staged.outcome.skipped.len(), 1);
    assert_eq!(staged.outcome.skipped[0].preset, "small-cpu");
    assert_eq!(staged.outcome.skipped[0].field, "spec.cpu");
    assert!(staged.outcome.warnings.is_empty());
    snapshot_settings().bind(|| insta::assert_snapshot!("presets_cpu_conflict", report(&staged)));
}

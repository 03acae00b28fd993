//! The YAML layer round trip: strings that a YAML 1.1 reader would take for booleans, numbers,
//! nulls or times stay strings; integers stay integers; duplicate keys and alias bombs are errors.

use std::process::{Command, Output};

use kvrender::load::yaml;

use crate::common::{describe, kvrender, tool};
use serde_json::{Value, json};

const TRICKY: &[&str] = &[
    "on",
    "off",
    "yes",
    "no",
    "y",
    "n",
    "Y",
    "N",
    "ON",
    "Yes",
    "true",
    "True",
    "false",
    "0644",
    "1e3",
    "null",
    "Null",
    "~",
    "0x1A",
    "0o17",
    "12:30",
    "12:30:45",
    "1_000",
    ".5",
    "-",
    "",
    "2024-01-01",
    ".inf",
    ".NaN",
    "-.nan",
    "+.NaN",
    "=",
    "<<",
    "1.0",
    "+1",
    "0b101",
];

fn document() -> Value {
    let mut map = serde_json::Map::new();
    for (i, s) in TRICKY.iter().enumerate() {
        map.insert(format!("k{i}"), Value::String((*s).to_string()));
    }
    map.insert("int".into(), json!(42));
    map.insert("negative".into(), json!(-7));
    map.insert("big".into(), json!(9_007_199_254_740_993_u64));
    map.insert("float".into(), json!(1.5));
    map.insert("bool".into(), json!(true));
    map.insert("multiline".into(), json!("line one\nline two\n"));
    Value::Object(map)
}

#[test]
fn tricky_strings_survive_our_own_round_trip() {
    let doc = document();
    let text = yaml::to_string(&doc);
    let back = yaml::parse_document(&text).unwrap();
    assert_eq!(back, doc, "printed:\n{text}");
}

/// The documents of `text` as PyYAML reads them. PyYAML implements YAML 1.1, the dialect of
/// kubectl's and Go's yaml.v2 readers.
fn read_with_pyyaml(text: &str) -> Vec<Value> {
    let script = "import sys, json, yaml\n\
                  print(json.dumps(list(yaml.safe_load_all(sys.stdin.read()))))";
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 with PyYAML is needed for this test");
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "PyYAML failed to read our output: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_yaml_1_1_reader_reads_the_same_values() {
    let doc = document();
    let text = yaml::to_string(&doc);
    let read = read_with_pyyaml(&text).remove(0);
    for (i, s) in TRICKY.iter().enumerate() {
        assert_eq!(
            read[format!("k{i}")],
            Value::String((*s).to_string()),
            "a YAML 1.1 reader changed {s:?}; printed:\n{text}"
        );
    }
    assert_eq!(read["int"], json!(42));
    assert_eq!(read["big"], json!(9_007_199_254_740_993_u64));
    assert_eq!(read["bool"], json!(true));
}

/// NaN has no sign in YAML (1.1 or 1.2): `-.nan` and `+.nan` written plain are strings, as
/// kubectl and PyYAML read them, not a float the loader would refuse as non-finite.
#[test]
fn a_signed_nan_written_plain_is_a_string() {
    let text = "a: -.nan\nb: +.nan\nc: -.NaN\nd: +.NAN\n";
    let read = yaml::parse_document(text).unwrap();
    assert_eq!(
        read,
        json!({"a": "-.nan", "b": "+.nan", "c": "-.NaN", "d": "+.NAN"})
    );
    let pyyaml = read_with_pyyaml(text).remove(0);
    for key in ["a", "b", "c", "d"] {
        assert_eq!(pyyaml[key], read[key], "{key}");
    }
    // The unsigned spelling is NaN, which JSON cannot hold: refused with its line.
    let err = yaml::parse_document("x: 1\ne: .nan\n").unwrap_err();
    assert_eq!(err.line, Some(2), "{err:?}");
}

#[test]
fn duplicate_keys_are_an_error_with_a_line() {
    let err = yaml::parse_document("a: 1\nb: 2\na: 3\n").unwrap_err();
    assert!(err.message.contains("duplicate"), "{err:?}");
    assert_eq!(err.line, Some(3));
}

#[test]
fn alias_expansion_is_bounded() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let prev = i - 1;
        text.push_str(&format!(
            "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
        ));
    }
    let err = yaml::parse_document(&text).unwrap_err();
    assert!(err.message.contains("limits"), "{err:?}");
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    // The binary parses on worker threads with a 16 MiB stack; do the same here.
    std::thread::Builder::new()
        .stack_size(16 << 20)
        .spawn(deep_nesting)
        .unwrap()
        .join()
        .unwrap();
}

fn deep_nesting() {
    let text = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
    assert!(yaml::parse_document(&text).is_err());
    let block: String = (0..10_000)
        .map(|i| format!("{}k:\n", " ".repeat(i)))
        .collect();
    assert!(yaml::parse_document(&block).is_err());
}

/// Short strings over YAML's significant characters (digits, signs, dots, colons, indicators,
/// spaces, line breaks), from a fixed seed: every one must read back as the same string in a
/// YAML 1.1 reader, as a value and as a key.
#[test]
fn short_strings_over_yaml_syntax_read_back_in_yaml_1_1() {
    const ALPHABET: &[char] = &[
        '0', '1', '9', '+', '-', '.', '_', ':', 'e', 'E', 'x', 'o', 'b', 'n', 'y', 'N', 'Y', 'T',
        'Z', ' ', '\t', '\n', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ',', '?',
        '[', ']', '{', '}', '~', '<', '=', 'é',
    ];
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut doc = serde_json::Map::new();
    let mut strings = Vec::new();
    for i in 0..20_000 {
        let len = 1 + (next() % 7) as usize;
        let s: String = (0..len)
            .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize])
            .collect();
        doc.insert(format!("v{i}"), Value::String(s.clone()));
        strings.push(s);
    }
    let mut keys = serde_json::Map::new();
    for s in &strings {
        keys.insert(s.clone(), Value::Bool(true));
    }
    let text = format!(
        "{}---\n{}",
        yaml::to_string(&Value::Object(doc)),
        yaml::to_string(&Value::Object(keys.clone()))
    );
    let read = read_with_pyyaml(&text);
    for (i, s) in strings.iter().enumerate() {
        assert_eq!(
            read[0][format!("v{i}")],
            Value::String(s.clone()),
            "a YAML 1.1 reader changed the value {s:?}"
        );
    }
    assert_eq!(
        read[1],
        Value::Object(keys),
        "a YAML 1.1 reader changed a key"
    );
}

/// Plain numbers read as the Kubernetes tools read them: `defaultMode: 0644` is the octal 420
/// for `kubectl` and kustomize (YAML 1.1), so an object `build` passes through must carry 420,
/// not 644 (which the API server would refuse as a file mode). Checked against the real
/// `kubectl kustomize` on the same file.
#[test]
fn plain_numbers_read_as_kubectl_and_kustomize_read_them() {
    let spellings = [
        "0644", "0400", "010", "-010", "+010", "08", "-09", "018", "00", "0", "-0", "0o17", "0x1F",
        "-0x10", "0b101", "1_000", "0_7", "012_3", "7", "09.5", "00.5", "1e3",
    ];
    let fields: String = spellings
        .iter()
        .enumerate()
        .map(|(i, s)| format!("  k{i}: {s}\n"))
        .collect();
    let text =
        format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n{fields}");
    let [ours, theirs, _] = read_by_all_three("web.yaml", &text);
    assert!(ours.status.success(), "{}", describe(&ours));
    assert!(theirs.status.success(), "{}", describe(&theirs));
    let spec = |out: &Output| {
        let printed = String::from_utf8(out.stdout.clone()).unwrap();
        let body = printed.trim_start_matches("---\n");
        yaml::parse_document(body).unwrap()["spec"].clone()
    };
    let (ours, theirs) = (spec(&ours), spec(&theirs));
    for (i, s) in spellings.iter().enumerate() {
        assert_eq!(ours[format!("k{i}")], theirs[format!("k{i}")], "`{s}`");
    }
    assert_eq!(ours["k0"], json!(420));
    assert_eq!(ours["k3"], json!(-8));
}

/// `kvrender build` of a file `name` holding `text`, and the same file read by `kubectl
/// kustomize` (the only resource of a kustomization) and by `kpt fn source` (the only file of a
/// package).
fn read_by_all_three(name: &str, text: impl AsRef<[u8]>) -> [Output; 3] {
    let tmp = tempfile::tempdir().unwrap();
    let (kustomization, package) = (tmp.path().join("k"), tmp.path().join("p"));
    for dir in [&kustomization, &package] {
        std::fs::create_dir(dir).unwrap();
        std::fs::write(dir.join(name), text.as_ref()).unwrap();
    }
    std::fs::write(
        kustomization.join("kustomization.yaml"),
        format!("resources: [{name}]\n"),
    )
    .unwrap();
    let ours = kvrender()
        .arg("build")
        .arg(package.join(name))
        .output()
        .unwrap();
    let kustomize = Command::new(tool("kubectl"))
        .arg("kustomize")
        .arg(&kustomization)
        .output()
        .unwrap();
    let kpt = Command::new(tool("kpt"))
        .args(["fn", "source"])
        .arg(&package)
        .output()
        .unwrap();
    [ours, kustomize, kpt]
}

/// The objects of a stream are the ones the Kubernetes tools read from it: text after a `...`
/// document end marker with no `---` before it is skipped by `kubectl kustomize` and by kpt,
/// and `build` leaves it out too, with a warning at its first line. Checked against the real
/// tools on the same file.
#[test]
fn text_after_an_end_marker_is_skipped_as_kubectl_and_kpt_skip_it() {
    let config_map =
        |name: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n");
    let text = format!(
        "{}...\n{}---\n{}...\n# only a comment\n---\n{}",
        config_map("one"),
        config_map("lost"),
        config_map("two"),
        config_map("three")
    );
    let names = |out: &Output| -> Vec<String> {
        let printed = String::from_utf8(out.stdout.clone()).unwrap();
        let mut names: Vec<String> = printed
            .lines()
            .filter_map(|l| l.trim().strip_prefix("name: ").map(str::to_string))
            .filter(|n| ["one", "two", "three", "lost"].contains(&n.as_str()))
            .collect();
        names.sort();
        names
    };

    let [ours, kustomize, kpt] = read_by_all_three("cms.yaml", &text);
    assert!(ours.status.success(), "{}", describe(&ours));
    let stderr = String::from_utf8_lossy(&ours.stderr);
    assert!(
        stderr.contains("cms.yaml:6: warning[KV002]") && stderr.contains("on line 5"),
        "{stderr}"
    );
    assert!(kustomize.status.success(), "{}", describe(&kustomize));
    assert!(kpt.status.success(), "{}", describe(&kpt));
    assert_eq!(names(&ours), ["one", "three", "two"]);
    assert_eq!(names(&kustomize), names(&ours));
    assert_eq!(names(&kpt), names(&ours));

    // A `...` that ends no document, with text after it: the tools' YAML reader refuses the
    // file, and `build` stops on it.
    let [ours, kustomize, kpt] = read_by_all_three(
        "cms.yaml",
        format!("# a comment\n...\n{}", config_map("lost")),
    );
    assert_eq!(ours.status.code(), Some(1), "{}", describe(&ours));
    let stderr = String::from_utf8_lossy(&ours.stderr);
    assert!(stderr.contains("cms.yaml:2: error[KV001]"), "{stderr}");
    assert!(ours.stdout.is_empty(), "{}", describe(&ours));
    assert!(!kustomize.status.success(), "{}", describe(&kustomize));
    assert!(!kpt.status.success(), "{}", describe(&kpt));
}

/// A next line (U+0085), line separator (U+2028) or paragraph separator (U+2029) character
/// is a line break to the tools' YAML reader and an ordinary character to YAML 1.2: a header
/// comment ended by one hides the object after it from a YAML 1.2 reader, while kubectl
/// kustomize and kpt read the object. `build` refuses the file, at the character, and prints
/// nothing; a file with none of them (but other characters of those bytes) reads as before.
#[test]
fn unicode_line_breaks_are_refused_where_the_tools_read_them_as_breaks() {
    let config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: hidden\n";
    for (code, character) in [
        ("0085", "\u{85}"),
        ("2028", "\u{2028}"),
        ("2029", "\u{2029}"),
    ] {
        let text = format!("# Copyright header{character}{config_map}");
        let [ours, kustomize, kpt] = read_by_all_three("cm.yaml", &text);
        for theirs in [&kustomize, &kpt] {
            assert!(theirs.status.success(), "{code}: {}", describe(theirs));
            assert!(
                String::from_utf8_lossy(&theirs.stdout).contains("name: hidden"),
                "{code}: {}",
                describe(theirs)
            );
        }
        assert_eq!(ours.status.code(), Some(1), "{code}: {}", describe(&ours));
        assert!(ours.stdout.is_empty(), "{code}: {}", describe(&ours));
        let stderr = String::from_utf8_lossy(&ours.stderr);
        assert!(
            stderr.contains(&format!("cm.yaml:1:19: error[KV001] U+{code} (")),
            "{code}: {stderr}"
        );
    }
    // The same bytes ending other characters (`…` is `E2 80 A6`, `Å` is `C3 85`, `¨` is
    // `C2 A8`) are read as they are.
    let text = format!("# Copyright … Å ¨\n{config_map}");
    let [ours, ..] = read_by_all_three("cm.yaml", &text);
    assert!(ours.status.success(), "{}", describe(&ours));
    assert!(String::from_utf8_lossy(&ours.stdout).contains("name: hidden"));
}

/// What `build` prints, kubectl's and kustomize's reader reads back to the same strings:
/// multi-line strings with tabs leading a line, inside one, on a blank line, or after spaces.
/// Checked by feeding `build`'s output to the real `kubectl kustomize`.
#[test]
fn printed_multi_line_strings_read_back_in_kustomize() {
    let strings = [
        "\tindented\nsecond\n",
        "first\n\tsecond",
        "a\tb\nc\n",
        "x\n \t\ny",
        "\t",
        "  lead\n\ttab\n",
        "end\t\nnext\n",
        "\n\tafter a blank\n",
    ];
    let data: serde_json::Map<String, Value> = strings
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("k{i}"), Value::String((*s).to_string())))
        .collect();
    let config_map = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "tabs"},
        "data": data,
    });
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in.json");
    std::fs::write(&input, config_map.to_string()).unwrap();
    let ours = kvrender().arg("build").arg(&input).output().unwrap();
    assert!(ours.status.success(), "{}", describe(&ours));
    let printed = String::from_utf8(ours.stdout).unwrap();
    let [_, kustomize, _] = read_by_all_three("out.yaml", &printed);
    assert!(
        kustomize.status.success(),
        "{printed}\n{}",
        describe(&kustomize)
    );
    let back = yaml::parse_document(&String::from_utf8(kustomize.stdout).unwrap()).unwrap();
    assert_eq!(back["data"], config_map["data"], "{printed}");
}

/// A document that is only a null (`null`, `~`, as `yq` or `yaml.dump(None)` write one) is no
/// object to kubectl kustomize and kpt, and none to `build` either: no finding, the objects
/// around it read. Checked against the real tools on the same file.
#[test]
fn a_null_document_is_skipped_as_kustomize_and_kpt_skip_it() {
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: one}\n---\nnull\n\
                ---\n# nothing here\n~\n---\nNULL\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: two}\n";
    let [ours, kustomize, kpt] = read_by_all_three("cms.yaml", text);
    for out in [&ours, &kustomize, &kpt] {
        assert!(out.status.success(), "{}", describe(out));
        let printed = String::from_utf8_lossy(&out.stdout);
        let names: Vec<&str> = printed
            .lines()
            .filter(|l| l.contains("name: one") || l.contains("name: two"))
            .collect();
        assert_eq!(names.len(), 2, "{}", describe(out));
    }
    assert!(ours.stderr.is_empty(), "{}", describe(&ours));
}

/// A file saved as UTF-16 with a byte order mark (Windows PowerShell 5.1's `kubectl get -o yaml
/// > vm.yaml`) is read by kubectl kustomize and kpt, and by `build`, as the same objects.
#[test]
fn a_utf16_file_reads_as_kustomize_and_kpt_read_it() {
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: caf\u{e9}\ndata:\n  k: \"\u{1f600}\"\n";
    for big_endian in [false, true] {
        let bytes: Vec<u8> = "\u{feff}"
            .encode_utf16()
            .chain(text.encode_utf16())
            .flat_map(|u| {
                if big_endian {
                    u.to_be_bytes()
                } else {
                    u.to_le_bytes()
                }
            })
            .collect();
        let [ours, kustomize, kpt] = read_by_all_three("cm.yaml", &bytes);
        for out in [&ours, &kustomize, &kpt] {
            assert!(out.status.success(), "{}", describe(out));
            let printed = String::from_utf8(out.stdout.clone()).unwrap();
            assert!(printed.contains("caf\u{e9}"), "{printed}");
        }
        let back = yaml::parse_document(
            String::from_utf8(ours.stdout)
                .unwrap()
                .trim_start_matches("---\n"),
        )
        .unwrap();
        assert_eq!(back["data"]["k"], "\u{1f600}");
    }
}

/// A line that starts with `---` and holds more than a comment after the dashes (`--- !!map`,
/// `--- {...}`) opens a document in YAML, but kubectl kustomize and kpt refuse it as an invalid
/// document separator, and `build` stops on it with the line.
#[test]
fn a_separator_with_content_is_refused_as_kustomize_and_kpt_refuse_it() {
    for separator in ["--- !!map", "--- {a: 1}"] {
        let text = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: one}}\n{separator}\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: two}}\n"
        );
        let [ours, kustomize, kpt] = read_by_all_three("cms.yaml", text);
        assert_eq!(ours.status.code(), Some(1), "{}", describe(&ours));
        assert!(ours.stdout.is_empty(), "{}", describe(&ours));
        let stderr = String::from_utf8_lossy(&ours.stderr);
        assert!(
            stderr.contains("cms.yaml:4: error[KV001]") && stderr.contains(separator),
            "{stderr}"
        );
        assert!(!kustomize.status.success(), "{}", describe(&kustomize));
        assert!(!kpt.status.success(), "{}", describe(&kpt));
    }
}

/// A `---` line followed by nothing but white space and a comment is a separator to kubectl
/// kustomize and kpt even where YAML takes the rest of the line for content: a comment with no
/// blank before it (`---#c`), a no-break space, a vertical tab or an em space after the dashes.
/// `build` reads the objects on both sides of it, as they do. On the first line of a file none
/// of them cuts, and all refuse it.
#[test]
fn a_separator_with_odd_white_space_splits_as_kustomize_and_kpt_split_it() {
    for separator in [
        "---#c",
        "---\u{a0}",
        "--- \u{a0}# c",
        "---\u{b}",
        "---\u{2003}",
        "--- \u{85}\r",
    ] {
        let config_map =
            |name: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n");
        let text = format!(
            "# one\n{separator}\n{}{separator}\n{}{separator}\n",
            config_map("one"),
            config_map("two")
        );
        let [ours, kustomize, kpt] = read_by_all_three("cms.yaml", text);
        for out in [&ours, &kustomize, &kpt] {
            assert!(out.status.success(), "{separator:?}: {}", describe(out));
            let printed = String::from_utf8_lossy(&out.stdout);
            for name in ["one", "two"] {
                assert!(
                    printed.lines().any(|l| l.trim() == format!("name: {name}")),
                    "{separator:?}: {}",
                    describe(out)
                );
            }
        }
        assert!(ours.stderr.is_empty(), "{separator:?}: {}", describe(&ours));
        // On the first line the tools look for no separator, and refuse the line as YAML does
        // (but for U+0085, which their YAML 1.1 parser takes for a line break).
        if separator.contains('\u{85}') {
            continue;
        }
        let [ours, kustomize, kpt] =
            read_by_all_three("cm.yaml", format!("{separator}\n{}", config_map("one")));
        for out in [&ours, &kustomize, &kpt] {
            assert_eq!(
                out.status.code(),
                Some(1),
                "{separator:?}: {}",
                describe(out)
            );
        }
        let stderr = String::from_utf8_lossy(&ours.stderr);
        assert!(stderr.contains("error[KV001]"), "{separator:?}: {stderr}");
    }
}

/// A value such as `tRue` or `yEs` is text to kubectl, kustomize and kpt: only the lower-case,
/// capitalized and upper-case spellings are booleans. `build` reads and prints it as text.
#[test]
fn mixed_case_booleans_are_text_as_the_tools_read_them() {
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: tRue\n  \
                b: yEs\n  c: FaLSE\n";
    let [ours, kustomize, kpt] = read_by_all_three("cm.yaml", text);
    for out in [&ours, &kustomize, &kpt] {
        assert!(out.status.success(), "{}", describe(out));
    }
    let printed = String::from_utf8(ours.stdout).unwrap();
    for line in ["  a: \"tRue\"", "  b: \"yEs\"", "  c: \"FaLSE\""] {
        assert!(printed.lines().any(|l| l == line), "{line}\n{printed}");
    }
    // The tools print text as written: a boolean would be printed `true` or `false`.
    for out in [kustomize, kpt] {
        let printed = String::from_utf8(out.stdout).unwrap();
        for word in ["tRue", "yEs", "FaLSE"] {
            assert!(
                printed.contains(&format!(": {word}\n")),
                "{word}\n{printed}"
            );
        }
        assert!(!printed.contains(": true") && !printed.contains(": false"));
    }
}

/// A folded block (`>`) with a more-indented line after a line that is not is read by kubectl
/// kustomize and kpt with one more line break before it than YAML gives it, and than `build`
/// reads (as `kubectl apply -f` does): `build` warns at the field's line, and not for a literal
/// block or a folded one whose lines all start at its indentation.
#[test]
fn folded_blocks_with_more_indented_lines_are_told_as_kustomize_and_kpt_read_them_otherwise() {
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: >\n    one\n      \
                two\n    three\n  b: |\n    one\n      two\n  c: >\n    one\n    two\n";
    let [ours, kustomize, kpt] = read_by_all_three("cm.yaml", text);
    for out in [&ours, &kustomize, &kpt] {
        assert!(out.status.success(), "{}", describe(out));
    }
    let data = |printed: &[u8], items: bool| {
        let doc = yaml::parse_document(std::str::from_utf8(printed).unwrap()).unwrap();
        let doc = if items { doc["items"][0].clone() } else { doc };
        doc["data"]["a"].as_str().unwrap().to_string()
    };
    assert_eq!(data(&kustomize.stdout, false), "one\n\n  two\nthree\n");
    assert_eq!(data(&kpt.stdout, true), "one\n\n  two\nthree\n");
    let printed = String::from_utf8(ours.stdout).unwrap();
    let printed = printed.trim_start_matches("---\n");
    assert_eq!(data(printed.as_bytes(), false), "one\n  two\nthree\n");
    let stderr = String::from_utf8(ours.stderr).unwrap();
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("KV009")).collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains(
            "/cm.yaml:6: warning[KV009] ConfigMap/cm: data.a: in this folded block (`>`), a \
             more-indented line follows a line that is not: kustomize and kpt read one line \
             break more before it"
        ),
        "{stderr}"
    );
}

/// `yes`, `off` and `N` are booleans to `kubectl apply -f` (YAML 1.1), which kvrender reads as,
/// and text to kustomize and kpt (YAML 1.2): `build` says so for each, at its line and column,
/// and not for a quoted or tagged value or a key.
#[test]
fn yaml11_booleans_are_told_as_kustomize_reads_them_otherwise() {
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: yes\n  \
                b: \"on\"\n  c: !!str off\n  yes: x\nbinaryData: {}\nimmutable: N\n";
    let [ours, kustomize, _] = read_by_all_three("cm.yaml", text);
    assert!(ours.status.success(), "{}", describe(&ours));
    assert!(kustomize.status.success(), "{}", describe(&kustomize));
    let stderr = String::from_utf8(ours.stderr).unwrap();
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("KV008")).collect();
    assert_eq!(warnings.len(), 2, "{stderr}");
    assert!(
        warnings[0].contains(
            "/cm.yaml:6:6: warning[KV008] ConfigMap/cm: data.a: `yes` is the boolean true to \
             `kubectl apply -f` (YAML 1.1) and the string \"yes\" to kustomize"
        ),
        "{stderr}"
    );
    assert!(
        warnings[1].contains(
            "/cm.yaml:11:12: warning[KV008] ConfigMap/cm: immutable: `N` is the boolean false"
        ),
        "{stderr}"
    );
    let printed = String::from_utf8(ours.stdout).unwrap();
    assert!(
        printed.contains("  a: true\n") && printed.contains("immutable: false\n"),
        "{printed}"
    );
    // What the warning says of kustomize.
    let built = String::from_utf8(kustomize.stdout).unwrap();
    assert!(
        built.contains("  a: \"yes\"\n") && built.contains("immutable: \"N\"\n"),
        "{built}"
    );
}

/// A catalog document is tool configuration, but what it renders is applied: a YAML 1.1 word
/// in it renders as a boolean in `build` and as text under kpt or kustomize, so `build` and
/// `validate` warn at it as at any object's.
#[test]
fn yaml11_booleans_in_a_catalog_document_are_told() {
    let tmp = tempfile::tempdir().unwrap();
    let family = "apiVersion: kvrender.io/v1alpha1\nkind: InstancetypeFamily\nmetadata: {name: z}\n\
                  spec:\n  version: 1\n  displayName: N\n  labels: {example.com/gpu: yes}\n  \
                  sizes: [[small, 1, 2Gi]]\n  template:\n    metadata:\n      annotations:\n        \
                  example.com/name: \"{{ family.displayName }}\"\n    spec:\n      \
                  cpu: {guest: \"{{ size.cpu }}\"}\n      memory: {guest: \"{{ size.memory }}\"}\n";
    std::fs::write(tmp.path().join("family.yaml"), family).unwrap();
    let wanted = [
        "family.yaml:6:16: warning[KV008] InstancetypeFamily/z: spec.displayName: `N` is the \
         boolean false",
        "family.yaml:7:29: warning[KV008] InstancetypeFamily/z: spec.labels[\"example.com/gpu\"]: \
         `yes` is the boolean true",
    ];
    let built = kvrender()
        .current_dir(tmp.path())
        .args(["build", "--no-default-catalog", "family.yaml"])
        .output()
        .unwrap();
    assert!(built.status.success(), "{}", describe(&built));
    let stderr = String::from_utf8_lossy(&built.stderr);
    let printed = String::from_utf8_lossy(&built.stdout);
    assert!(
        printed.contains("example.com/gpu: \"true\"")
            && printed.contains("example.com/name: \"false\""),
        "{printed}"
    );
    let validated = kvrender()
        .current_dir(tmp.path())
        .args(["validate", "--no-default-catalog", "family.yaml"])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&validated.stdout);
    for w in wanted {
        assert!(stderr.contains(w), "{stderr}");
        assert!(report.contains(w), "{report}");
    }
}

/// kubectl, kustomize and kpt cut a stream at every `---` line, so a `%YAML` or `%TAG`
/// directive at the start of a stream is left without the document its `---` opens, and they
/// refuse the file; one after a `...` follows the document of its piece and is not read.
/// kvrender says the same, at the directive's line.
#[test]
fn directives_the_tools_cut_off_are_refused() {
    let config_map =
        |name: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n");
    for directive in ["%YAML 1.1", "%YAML 1.2", "%TAG !e! tag:example.com,2000:"] {
        let text = format!("# a header\n{directive}\n---\n{}", config_map("a"));
        let [ours, kustomize, kpt] = read_by_all_three("d.yaml", &text);
        for out in [&ours, &kustomize, &kpt] {
            assert_eq!(out.status.code(), Some(1), "{directive}: {}", describe(out));
        }
        let stderr = String::from_utf8(ours.stderr).unwrap();
        assert!(
            stderr.contains(&format!(
                "d.yaml:2: error[KV001] invalid YAML: the directive `{directive}` begins the \
                 stream"
            )),
            "{stderr}"
        );
    }
    let text = format!(
        "{}...\n%YAML 1.1\n---\n{}",
        config_map("a"),
        config_map("b")
    );
    for out in read_by_all_three("d.yaml", &text) {
        assert!(out.status.success(), "{}", describe(&out));
        let printed = String::from_utf8(out.stdout).unwrap();
        assert!(printed.contains("name: a\n") && printed.contains("name: b\n"));
    }
}

/// A byte order mark at the start of a line before the first content of a piece after a `---`
/// is read by kubectl, kustomize and kpt as one at the start of a file, and by `build` too. One
/// before a `---` that follows a document, or a `...`, makes the line no separator to them, and
/// they refuse the file: kvrender says so at the line.
#[test]
fn byte_order_marks_are_taken_where_the_tools_take_them() {
    let config_map =
        |name: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n");
    let (a, b) = (config_map("a"), config_map("b"));
    for text in [
        format!("{a}---\n\u{feff}{b}"),
        format!("{a}---\n# b\n\u{feff}{b}"),
        format!("{a}---\n\u{feff}# b\n{b}"),
        format!("{a}---\n\n\u{feff}{b}"),
        format!("{a}---\n\u{feff}---\n{b}"),
    ] {
        for out in read_by_all_three("m.yaml", &text) {
            assert!(out.status.success(), "{text:?}: {}", describe(&out));
            let printed = String::from_utf8(out.stdout).unwrap();
            assert!(
                printed.contains("name: a\n") && printed.contains("name: b\n"),
                "{text:?}: {printed}"
            );
        }
    }
    for text in [
        format!("{a}\u{feff}---\n{b}"),
        format!("{a}...\n\u{feff}---\n{b}"),
    ] {
        let [ours, kustomize, kpt] = read_by_all_three("m.yaml", &text);
        for out in [&kustomize, &kpt] {
            assert_eq!(out.status.code(), Some(1), "{text:?}: {}", describe(out));
        }
        assert_eq!(ours.status.code(), Some(1), "{text:?}: {}", describe(&ours));
        let stderr = String::from_utf8(ours.stderr).unwrap();
        let line = 5 + u32::from(text.contains("..."));
        assert!(
            stderr.contains(&format!(
                "m.yaml:{line}: error[KV001] invalid YAML: a byte order mark (U+FEFF) before \
                 this `---`"
            )),
            "{text:?}: {stderr}"
        );
    }
}

/// An emoji written as a pair of UTF-16 surrogate escapes in a double-quoted string, as
/// `json.dumps` writes it, is refused by kubectl's, kustomize's and kpt's YAML readers, and by
/// `build` with the escape to write instead; the same letters in single quotes or unquoted are
/// no escape, and every one of them reads them.
#[test]
fn surrogate_escapes_are_refused_as_the_tools_refuse_them() {
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: \"smile \
                \\ud83d\\ude00\"\n";
    let [ours, kustomize, kpt] = read_by_all_three("s.yaml", text);
    for out in [&ours, &kustomize, &kpt] {
        assert_eq!(out.status.code(), Some(1), "{}", describe(out));
    }
    let stderr = String::from_utf8(ours.stderr).unwrap();
    assert!(
        stderr.contains(
            "s.yaml:6:13: error[KV001] ConfigMap/a: invalid YAML: the escape `\\ud83d` is half \
             of a UTF-16 surrogate pair"
        ) && stderr.contains("or `\\U0001F600`"),
        "{stderr}"
    );
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: '\\ud83d'\n  \
                l: C:\\ude00\n  m: \"\\U0001F600\"\n";
    for out in read_by_all_three("s.yaml", text) {
        assert!(out.status.success(), "{}", describe(&out));
    }
}

/// A tab that YAML 1.2 takes as a blank and the reader of kubectl kustomize and kpt refuses: on
/// a line of blanks, before a comment at the start of a line, after a list entry's dash, in the
/// indentation of a block scalar, on the line after a `...`. `build` stops on each, at the
/// tab's line and column, as those tools stop on the file. Tabs they take, after a key, a value
/// or inside a flow collection or a quoted or block scalar, read as before.
#[test]
fn tabs_kustomize_and_kpt_refuse_are_refused_at_their_line() {
    let head = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n";
    let refused = [
        ("data:\n  k: v\n  \t\n  j: w\n", "7:3"),
        ("data:\n  k: \"v\"\n\t# a comment\n  j: w\n", "7:1"),
        ("data:\n  k: v\n\t# a comment\n  j: w\n", "7:1"),
        ("data:\n  k: |\n    a\n\t\n    b\n", "8:1"),
        ("data:\n  k: |\n    \tindented\n", "7:5"),
        (
            "\t\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\n",
            "5:1",
        ),
        ("---\n\t# nothing but a comment\n", "6:1"),
        ("...\n\t\n", "6:1"),
    ];
    for (rest, place) in refused {
        let text = format!("{head}{rest}");
        let [ours, kustomize, kpt] = read_by_all_three("cm.yaml", &text);
        assert!(
            !kustomize.status.success(),
            "{text:?}\n{}",
            describe(&kustomize)
        );
        assert!(!kpt.status.success(), "{text:?}\n{}", describe(&kpt));
        assert_eq!(ours.status.code(), Some(1), "{text:?}\n{}", describe(&ours));
        assert!(ours.stdout.is_empty(), "{}", describe(&ours));
        let stderr = String::from_utf8_lossy(&ours.stderr);
        assert!(
            stderr.contains(&format!("cm.yaml:{place}: error[KV001]"))
                && stderr.contains("invalid YAML: a tab"),
            "{text:?}\n{stderr}"
        );
    }
    // After a list entry's dash, the message names the dash.
    let text = format!("{head}data:\n  k: v\nlist:\n-\ta\n");
    let [ours, kustomize, kpt] = read_by_all_three("cm.yaml", &text);
    assert!(!kustomize.status.success() && !kpt.status.success());
    let stderr = String::from_utf8_lossy(&ours.stderr);
    assert!(
        stderr.contains("cm.yaml:8:2: error[KV001]")
            && stderr.contains("a tab after the `-` of a list entry"),
        "{stderr}"
    );

    let taken = [
        "data:\n  k:\tv\n  j: w\t# a comment\n",
        "data:\n  k: v\n    \t\n  j: w\n",
        "data:\n  k: \"a\n\tb\"\n",
        "data:\n  k: |\n    a\n    \tb\n",
        "data: {a: x,\n\tb: y}\n",
        "# a comment\n\t# another\n",
    ];
    for rest in taken {
        let text = format!("{head}{rest}");
        let [ours, kustomize, kpt] = read_by_all_three("cm.yaml", &text);
        for out in [&ours, &kustomize, &kpt] {
            assert!(out.status.success(), "{text:?}\n{}", describe(out));
        }
    }
}

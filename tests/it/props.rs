//! Properties checked on generated inputs (proptest), with modest case counts so the suite stays
//! fast:
//!
//! - any JSON-like value survives a trip through the YAML layer unchanged;
//! - a stream prints as its documents printed one by one, also when it holds cluster-scoped and
//!   namespaced twins (printed from each other) or near-twins;
//! - no input makes the loader or the expansion panic: arbitrary text, YAML-looking text, and
//!   VMs, instancetypes and preferences with arbitrary values in the fields the rules read;
//! - expansion is idempotent on an expanded VM. Re-adding the matchers and expanding again is
//!   *not* idempotent, and must not be: the instancetype now finds its own CPU and memory in the
//!   VM and reports conflicts, as KubeVirt would. What does hold, and is tested: an expanded VM
//!   has no matchers left and expands to itself; applying its preference again changes nothing
//!   (preferences only fill what is unset); applying the cluster defaults again changes nothing.

use std::sync::Arc;

use kvrender::kubevirt::expand::{self, has_matchers};
use kvrender::kubevirt::profile::ClusterProfile;
use kvrender::kubevirt::{defaults, preference_apply};
use kvrender::load::{self, yaml};
use kvrender::model::{Kind, Object, path};
use kvrender::resolve::Index;
use kvrender::{emit, pipeline, render};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::vm_gen;

/// Strings that stress a YAML printer: YAML 1.1 booleans and numbers, indicators, quotes,
/// line breaks, control characters and non-ASCII text, plus anything proptest makes up.
fn tricky_string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => any::<String>(),
        2 => "[a-zA-Z0-9 :#&*!|>'\"%@`,?{}\\[\\]\\-\\.\n\t\r]{0,24}",
        2 => prop::sample::select(vec![
            "", "~", "null", "Null", "true", "yes", "no", "on", "off", "y", "n", "0644", "1e3",
            "0x1F", ".inf", "-.inf", ".nan", "12:30", "2024-01-01", "- a", "a: b", "#c", "&a",
            "*a", "!tag", "|", ">", "---", "...", "'", "\"", "\\", " lead", "trail ", "\u{feff}x",
            "\u{85}", "\u{2028}", "é", "日本", "\u{0}", "\u{7f}", "\u{1b}[0m",
        ])
        .prop_map(str::to_string),
    ]
}

fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        tricky_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((tricky_string(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// 2^64, the first float past `u64::MAX`, and -2^63, `i64::MIN`: both exact as floats.
const U64_END: f64 = 18_446_744_073_709_551_616.0;
const I64_MIN: f64 = -9_223_372_036_854_775_808.0;

/// `v` with every whole float that fits a 64-bit integer made that integer: what a JSON
/// client sends for it, and what the YAML layer reads and prints.
fn whole_floats_as_integers(v: &Value) -> Value {
    match v {
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && (0.0..U64_END).contains(&f) => {
                json!(f as u64)
            }
            Some(f) if n.is_f64() && f.fract() == 0.0 && (I64_MIN..0.0).contains(&f) => {
                json!(f as i64)
            }
            _ => v.clone(),
        },
        Value::Array(items) => Value::Array(items.iter().map(whole_floats_as_integers).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), whole_floats_as_integers(v)))
                .collect(),
        ),
        _ => v.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn any_value_round_trips_through_yaml(v in any_value()) {
        let text = yaml::to_string(&v);
        let back = yaml::parse_document(&text)
            .map_err(|e| TestCaseError::fail(format!("{e:?}\n{text}")))?;
        prop_assert_eq!(back, whole_floats_as_integers(&v), "printed as:\n{}", text);
    }

    #[test]
    fn whole_floats_read_as_integers(
        f in prop_oneof![
            (-1_000_000i64..1_000_000).prop_map(|i| i as f64),
            prop::sample::select(vec![U64_END, I64_MIN, -0.0, 1e19, 1e21, 3e9, U64_END * 2.0]),
            any::<f64>().prop_filter("finite", |f| f.is_finite()),
        ],
    ) {
        // Printed the way YAML writes a float (`2.0`, `1.0e+300`), read back.
        let text = format!("a: {f:?}\n");
        let back = yaml::parse_document(&text)
            .map_err(|e| TestCaseError::fail(format!("{e:?}\n{text}")))?;
        let expected = whole_floats_as_integers(&json!({ "a": f }));
        prop_assert_eq!(&back, &expected, "{}", text);
        prop_assert_eq!(back["a"].is_f64(), f.fract() != 0.0 || !(I64_MIN..U64_END).contains(&f));
    }

    #[test]
    fn a_stream_prints_as_its_documents_one_by_one(
        specs in prop::collection::vec(any_value(), 1..4),
        pairs in prop::collection::vec(
            (0usize..4, 0usize..4, any::<(bool, bool, bool)>(), prop::sample::select(vec![
                ("VirtualMachineClusterInstancetype", "VirtualMachineInstancetype"),
                ("VirtualMachineClusterPreference", "VirtualMachinePreference"),
                ("VirtualMachineInstancetype", "VirtualMachineClusterInstancetype"),
            ])),
            1..24,
        ),
    ) {
        // Objects of twin kinds whose specs are often equal, sometimes not, named so that
        // names repeat, in an order that puts some twins before their pair and some in
        // another chunk of the parallel printer.
        let mut values = Vec::new();
        for (n, (a, b, (reorder_a, reorder_b, reverse_b), (first, second))) in pairs.into_iter().enumerate() {
            let object = |kind: &str, spec: &Value, reorder: bool| {
                let mut metadata = Map::new();
                metadata.insert("name".into(), Value::String(format!("o{}", n % 5)));
                let mut m = Map::new();
                m.insert("apiVersion".into(), json!("instancetype.kubevirt.io/v1beta1"));
                m.insert("kind".into(), json!(kind));
                if reorder {
                    m.insert("spec".into(), spec.clone());
                    m.insert("metadata".into(), Value::Object(metadata));
                } else {
                    m.insert("metadata".into(), Value::Object(metadata));
                    m.insert("spec".into(), spec.clone());
                }
                Value::Object(m)
            };
            values.push(object(first, &specs[a % specs.len()], reorder_a));
            // The same entries in another order print differently.
            let spec_b = match &specs[b % specs.len()] {
                Value::Object(m) if reverse_b => {
                    Value::Object(m.iter().rev().map(|(k, v)| (k.clone(), v.clone())).collect())
                }
                other => other.clone(),
            };
            values.push(object(second, &spec_b, reorder_b));
        }
        let one_by_one: String = values
            .iter()
            .map(|v| format!("---\n{}", yaml::to_string(v)))
            .collect();
        prop_assert_eq!(emit::yaml_stream(&values), one_by_one);
    }

    #[test]
    fn arbitrary_text_never_panics(text in prop_oneof![
        any::<String>(),
        "(apiVersion: kubevirt.io/v1\nkind: VirtualMachine\n|---\n|  |- |: |\\{|\\}|\\[|\\]|&a |\\*a|\
         name|spec|template|instancetype|preference|cpu|guest|[0-9]|\"|'|\t|\n  |#|%YAML 1.2\n){0,60}",
    ]) {
        expand_everything(&text);
    }
}

/// Parse `text`, expand every VM against the others and print the results, as `expand` does.
fn expand_everything(text: &str) {
    let loaded = load::parse_text(&Arc::from("p.yaml"), text);
    let mut index = Index::new();
    index.add_layer(&loaded.objects);
    let profile = ClusterProfile::default();
    for r in pipeline::expand_all(&loaded.objects, &index, &profile)
        .into_iter()
        .flatten()
    {
        match r {
            Ok(v) => {
                emit::stream_document(&v);
            }
            Err(d) => {
                let _ = emit::diagnostics::human_line(&d);
            }
        }
    }
}

/// Fields the rules read, in the VM template spec, the instancetype spec and the preference
/// spec.
const VM_FIELDS: &[&[&str]] = &[
    &["domain", "cpu"],
    &["domain", "cpu", "cores"],
    &["domain", "cpu", "sockets"],
    &["domain", "cpu", "threads"],
    &["domain", "memory"],
    &["domain", "memory", "guest"],
    &["domain", "resources", "requests"],
    &["domain", "devices"],
    &["domain", "devices", "disks"],
    &["domain", "devices", "interfaces"],
    &["domain", "features"],
    &["domain", "firmware"],
    &["domain", "machine"],
    &["domain", "clock"],
    &["networks"],
    &["volumes"],
    &["nodeSelector"],
    &["subdomain"],
];
const INSTANCETYPE_FIELDS: &[&[&str]] = &[
    &["cpu"],
    &["cpu", "guest"],
    &["cpu", "dedicatedCPUPlacement"],
    &["cpu", "numa"],
    &["memory"],
    &["memory", "guest"],
    &["memory", "hugepages"],
    &["memory", "overcommitPercent"],
    &["gpus"],
    &["hostDevices"],
    &["ioThreadsPolicy"],
    &["annotations"],
    &["nodeSelector"],
];
const PREFERENCE_FIELDS: &[&[&str]] = &[
    &["cpu"],
    &["cpu", "preferredCPUTopology"],
    &["cpu", "spreadOptions"],
    &["devices"],
    &["devices", "preferredDiskBus"],
    &["devices", "preferredInterfaceModel"],
    &["devices", "preferredAutoattachPodInterface"],
    &["features"],
    &["features", "preferredHyperv"],
    &["firmware"],
    &["clock"],
    &["machine"],
    &["preferredTerminationGracePeriodSeconds"],
    &["requirements"],
    &["annotations"],
];

fn scribble(
    fields: &'static [&'static [&'static str]],
) -> impl Strategy<Value = Vec<(&'static [&'static str], Value)>> {
    prop::collection::vec((prop::sample::select(fields), any_value()), 0..5)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn any_value_in_any_field_the_rules_read_never_panics(
        vm_fields in scribble(VM_FIELDS),
        it_fields in scribble(INSTANCETYPE_FIELDS),
        pref_fields in scribble(PREFERENCE_FIELDS),
    ) {
        let mut vm = json!({
            "apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
            "metadata": {"name": "vm"},
            "spec": {"instancetype": {"name": "it"}, "preference": {"name": "pref"},
                     "template": {"spec": {}}}});
        let mut it = json!({
            "apiVersion": "instancetype.kubevirt.io/v1beta1",
            "kind": "VirtualMachineClusterInstancetype",
            "metadata": {"name": "it"}, "spec": {"cpu": {"guest": 2}, "memory": {"guest": "2Gi"}}});
        let mut pref = json!({
            "apiVersion": "instancetype.kubevirt.io/v1beta1",
            "kind": "VirtualMachineClusterPreference",
            "metadata": {"name": "pref"}, "spec": {}});
        for (at, v) in vm_fields {
            let mut full = vec!["spec", "template", "spec"];
            full.extend_from_slice(at);
            path::set(&mut vm, &full, v);
        }
        for (at, v) in it_fields {
            let mut full = vec!["spec"];
            full.extend_from_slice(at);
            path::set(&mut it, &full, v);
        }
        for (at, v) in pref_fields {
            let mut full = vec!["spec"];
            full.extend_from_slice(at);
            path::set(&mut pref, &full, v);
        }
        // Through the YAML text too, as a user's file would come.
        let text = emit::yaml_stream([&it, &pref, &vm]);
        expand_everything(&text);
    }
}

/// The embedded catalog, indexed.
fn catalog_index() -> Index<'static> {
    let mut index = Index::new();
    index.add_layer(render::embedded_catalog().iter().copied());
    index
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn expansion_is_idempotent_on_an_expanded_vm(seed in any::<u64>()) {
        let index = catalog_index();
        let profile = ClusterProfile::default();
        let text = vm_gen::generate(4, seed);
        let loaded = load::parse_text(&Arc::from("g.yaml"), &text);
        prop_assert!(loaded.diagnostics.is_empty());
        for vm in &loaded.objects {
            let expanded = pipeline::expand_vm(vm, &index, &profile)
                .map_err(|d| TestCaseError::fail(d.message))?;
            prop_assert!(!has_matchers(&expanded));

            // 1. An expanded VM expands to itself.
            let again = expand::expand(&Object::new(expanded.clone(), vm.origin.clone()), &index, &profile)
                .map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&again, &expanded);

            // 2. Its preference, applied again, changes nothing.
            if let Some(name) = path::str_at(&vm.value, &["spec", "preference", "name"]) {
                let pref = index
                    .get(Kind::ClusterPreference, "", name)
                    .and_then(|p| p.value.get("spec"))
                    .expect("the generator names catalog preferences");
                let mut template = expanded["spec"]["template"].clone();
                preference_apply::apply(pref, &mut template);
                prop_assert_eq!(&template, &expanded["spec"]["template"], "preference {}", name);
            }

            // 3. The cluster defaults, applied again, change nothing (a VM that referenced
            // neither an instancetype nor a preference is returned as it was, without them).
            if !has_matchers(&vm.value) {
                continue;
            }
            let mut spec = expanded["spec"]["template"]["spec"].clone();
            defaults::apply(&profile, &mut spec).map_err(|e| TestCaseError::fail(e.0))?;
            prop_assert_eq!(&spec, &expanded["spec"]["template"]["spec"]);
        }
    }
}

/// Findings of the `quantity` fuzz target, kept as regression tests. None was a defect of the
/// port; each showed where "the printed form parses back to the same value" stops holding.
#[test]
fn quantity_round_trip_edge_cases_found_by_fuzzing() {
    use kvrender::model::quantity::Quantity;
    // Go prints a decimal-SI amount of 10^21 or more without a suffix, so `1000E` prints as
    // `1`; kept for fidelity.
    assert_eq!(Quantity::parse("1000E").unwrap().to_string(), "1");
    // A 17-digit mantissa with a huge exponent fits Go's int64 form; its canonical text has 19
    // digits, takes the arbitrary-precision path and is refused by the digit limit.
    let q = Quantity::parse("92233720368547588.E5872301").unwrap();
    assert_eq!(q.to_string(), "9223372036854758800e5872299");
    assert!(Quantity::parse(&q.to_string()).is_err());
    // A binary amount that is no whole multiple of 1024 prints without a suffix and reads back
    // as a decimal amount: same value, other text the second time.
    let q = Quantity::parse("023456789345687.5Ki").unwrap();
    assert_eq!(q.to_string(), "24019752289984000");
    let back = Quantity::parse(&q.to_string()).unwrap();
    assert!(back.eq_value(&q));
    assert_eq!(back.to_string(), "24019752289984k");
    // Go reads the exponent as an `int32` (this one wraps to 2^31 - 1) and adds the trailing
    // zeros of the mantissa to it when printing, wrapping again: the text printed is another
    // amount, which kvrender reads at once (rounded up to a nano-unit) where Go would build a
    // power of ten with two billion digits.
    let q = Quantity::parse("384000E-000000930516503755751425").unwrap();
    assert_eq!(q.to_string(), "384e-2147483646");
    let back = Quantity::parse(&q.to_string()).unwrap();
    assert_eq!(back.to_string(), "1e-9");
    // An exponent of -2^63 wraps to 0 as an `int32`; the text, judged canonical then, is kept
    // as it is and reads back to the same amount.
    let q = Quantity::parse("31E-9223372036854775808").unwrap();
    assert_eq!(q.to_string(), "31E-9223372036854775808");
    assert!(Quantity::parse(&q.to_string()).unwrap().eq_value(&q));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn quantities_print_to_text_that_parses_to_the_same_value(
        s in "[+-]?([0-9]{1,20}(\\.[0-9]{0,12})?|\\.[0-9]{1,12})(|n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|[eE][+-]?[0-9]{1,3})"
    ) {
        use kvrender::model::quantity::{Format, Quantity};
        let Ok(q) = Quantity::parse(&s) else { return Ok(()); };
        let shown = q.to_string();
        let back = Quantity::parse(&shown)
            .map_err(|_| TestCaseError::fail(format!("{s} printed as {shown}, which does not parse")))?;
        if q.format() == Format::DecimalSi && q.as_f64().abs() >= 1e21 {
            return Ok(());
        }
        prop_assert!(back.eq_value(&q), "{} printed as {}", s, shown);
    }
}

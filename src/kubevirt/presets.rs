//! VirtualMachineInstancePresets (`kubevirt.io/v1`, deprecated upstream), applied to a
//! VirtualMachineInstance the way KubeVirt's VMI mutating webhook does on create.
//!
//! Mirrors `pkg/virt-api/webhooks/mutating-webhook/mutators/preset.go` (and the deprecation
//! warning of `vmi-mutator.go`):
//!
//! 1. a VMI annotated `virtualmachineinstancepresets.admission.kubevirt.io/exclude: "true"` is
//!    left alone;
//! 2. every preset of the VMI's namespace has its label selector parsed with Kubernetes' rules;
//!    one that does not parse refuses the VMI, matching or not;
//! 3. the presets whose selector matches the VMI's labels are compared pairwise, and any
//!    conflict between two of them refuses the VMI;
//! 4. each matching preset is merged: seven parts of the domain (cpu, resource requests,
//!    firmware, clock offset and timer, features, watchdog, ioThreadsPolicy) are copied whole
//!    where the VMI has none. A preset with at least one part equal to the VMI's afterwards is
//!    *applied* and annotates the VMI; parts where the VMI differs are skipped silently;
//! 5. when an annotation key of the result mentions `virtualmachinepreset`, the deprecation
//!    warning is returned.
//!
//! KubeVirt walks the presets in Go map order, which is unspecified; we walk them sorted by
//! name, one of the orders KubeVirt may use. An index made with
//! [`PresetIndex::checking_order`] also merges them in the other orders and reports in
//! [`PresetOutcome::order_dependence`] when the VMI comes out otherwise.
//!
//! KubeVirt does steps 2 and 3 for each VMI. We index the presets once per run instead
//! ([`PresetIndex`]): grouped by namespace, sorted, each selector parsed once and each preset
//! filed under a label it requires, so that a VMI is tested only against the presets its labels
//! can match. The pairwise check of step 3 depends only on which presets match, so it is made
//! once per set of matching presets, and presets whose merged parts are written alike are
//! compared with the others once, as one class. The outcome is the same.
//!
//! Equality follows Go: the parts are compared as decoded Go structs (`equality.Semantic`), where
//! a zero non-pointer field equals an absent one and quantities compare by value; but two
//! presets' resource requests conflict when their parsed `resource.Quantity` structs differ, so
//! `1Gi` and `1024Mi` conflict there.

use std::fmt;

use foldhash::{HashMap, HashMapExt};

use serde_json::{Map, Value};

use crate::model::path;
use crate::model::path::Fields;
use crate::model::{Kind, Object};
use crate::origin::ObjectRef;

/// The annotation that keeps a VMI out of preset processing (value exactly `"true"`).
pub const EXCLUDE_ANNOTATION: &str = "virtualmachineinstancepresets.admission.kubevirt.io/exclude";

/// The prefix of the annotation an applied preset adds (`<prefix><preset name>`).
pub const APPLIED_ANNOTATION_PREFIX: &str = "virtualmachinepreset.kubevirt.io/";

/// The value of the applied-preset annotation.
pub const APPLIED_ANNOTATION_VALUE: &str = "kubevirt.io/v1";

/// The warning KubeVirt returns when the VMI carries a preset annotation.
pub const DEPRECATION_WARNING: &str =
    "kubevirt.io/v1 VirtualMachineInstancePresets is now deprecated and will be removed in v2.";

/// A part of a matching preset that was not applied because the VMI sets it differently.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedField {
    /// The preset's name.
    pub preset: String,
    /// The field, as KubeVirt names it (`spec.cpu`, `spec.resources.requests[memory]`, ...).
    pub field: String,
    /// The preset's value and the VMI's, `<preset> != <vmi>`, as Go's `%v` prints them.
    pub detail: String,
    /// The preset's value and the VMI's, as written (`None` where one is not set), for
    /// messages of kvrender's own: Go's `%v` of a struct (`&{ <ptr> <nil>}`) reads badly.
    pub values: (Option<Value>, Option<Value>),
}

impl SkippedField {
    /// The field's dotted path under the VMI's `domain`: KubeVirt names it after `spec.`
    /// (`spec.cpu`, `spec.resources.requests[memory]`), which is where a preset keeps it.
    pub fn domain_path(&self) -> String {
        let field = self.field.strip_prefix("spec.").unwrap_or(&self.field);
        field.replace('[', ".").replace(']', "")
    }

    /// The preset's value and the VMI's, as compact JSON: `the preset has
    /// {"bootloader":{"efi":{}}}, the VirtualMachineInstance {"uuid":"…"}`.
    pub fn values_text(&self) -> String {
        let show = |v: &Option<Value>| {
            v.as_ref()
                .map_or_else(|| "nothing".to_string(), Value::to_string)
        };
        format!(
            "the preset has {}, the VirtualMachineInstance {}",
            show(&self.values.0),
            show(&self.values.1)
        )
    }

    /// Whether KubeVirt's words print a struct of Go's (`&{ <ptr> <nil>}`), which say little
    /// of the values without [`Self::values_text`].
    pub fn detail_is_a_struct(&self) -> bool {
        self.detail.contains("&{")
    }
}

impl fmt::Display for SkippedField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "VirtualMachineInstancePreset '{}': {} not applied, the VMI sets it differently ({})",
            self.preset, self.field, self.detail
        )
    }
}

/// What the preset step did to an admitted VMI.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PresetOutcome {
    /// The VMI carries the exclusion annotation: nothing was looked at.
    pub excluded: bool,
    /// Matching presets that were applied (and annotated), in application order.
    pub applied: Vec<String>,
    /// Matching presets that contributed nothing (no annotation), in order.
    pub unapplied: Vec<String>,
    /// Parts of matching presets the VMI already sets differently.
    pub skipped: Vec<SkippedField>,
    /// The warnings KubeVirt's webhook returns (the deprecation warning).
    pub warnings: Vec<String>,
    /// Set when another order of the matching presets gives another VMI (only looked for by
    /// an index made with [`PresetIndex::checking_order`]).
    pub order_dependence: Option<OrderDependence>,
}

/// The annotation key KubeVirt marks a VMI with for applying the preset `name`, and what the
/// API server says is wrong with it (nothing for a name of at most 63 characters; a preset's
/// own create allows 253).
pub fn applied_annotation(name: &str) -> (String, Vec<String>) {
    let key = format!("{APPLIED_ANNOTATION_PREFIX}{name}");
    let errors = crate::model::names::qualified_name_errors(&key.to_ascii_lowercase());
    (key, errors)
}

impl PresetOutcome {
    /// Why the API server refuses the VMI for the annotations the applied presets left on it
    /// (`virtualmachinepreset.kubevirt.io/<name>`): a key's name part takes at most 63
    /// characters, so a preset with a longer name, which its own create allows (253), has
    /// every VMI it is applied to refused. In the API server's words, one message per preset.
    pub fn refused_annotations(&self) -> Vec<String> {
        self.applied
            .iter()
            .filter_map(|name| {
                let (key, errors) = applied_annotation(name);
                (!errors.is_empty()).then(|| {
                    format!(
                        "metadata.annotations: Invalid value: \"{key}\": {} (added for the \
                         VirtualMachineInstancePreset '{name}', whose name is {} characters)",
                        errors.join(", "),
                        name.len()
                    )
                })
            })
            .collect()
    }
}

/// Matching presets whose merge order changes the VMI. KubeVirt lists a namespace's presets in
/// Go map order, which is unspecified, so the cluster may create any of the VMIs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderDependence {
    /// The presets that set a part that comes out otherwise in another order, in name order.
    pub presets: Vec<String>,
    /// Those parts, as paths of the VMI (`spec.domain.resources.requests`, and
    /// `metadata.annotations` when the presets annotated as applied differ).
    pub fields: Vec<String>,
}

/// Presets named in a message: `'a'`, `'a' and 'b'`, `'a', 'b' and 'c'`; past
/// five, how many more.
pub fn named(presets: &[String]) -> String {
    let mut quoted: Vec<String> = presets
        .iter()
        .take(NAMED_AT_MOST)
        .map(|p| format!("'{p}'"))
        .collect();
    if presets.len() > NAMED_AT_MOST {
        quoted.push(format!("{} more", presets.len() - NAMED_AT_MOST));
    }
    and_list(&quoted)
}

impl fmt::Display for OrderDependence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "KubeVirt merges the VirtualMachineInstancePresets {} in no fixed order (Go map \
             order), and the VirtualMachineInstance depends on it: {} can come out otherwise. \
             kvrender shows the presets merged in name order, one of KubeVirt's orders; to make \
             the result certain, let one preset set each of these parts, or make them agree",
            named(&self.presets),
            and_list(&self.fields.iter().map(|f| describe(f)).collect::<Vec<_>>())
        )
    }
}

/// A part in words: the annotations say which presets were applied.
fn describe(field: &str) -> String {
    if field == "metadata.annotations" {
        "which presets the VMI is annotated with (metadata.annotations)".to_string()
    } else {
        field.to_string()
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Why the webhook refuses the VMI (HTTP 422).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PresetRefusal {
    /// KubeVirt's message (nested pointers, which Go prints as addresses, shown as `<ptr>`).
    pub message: String,
    /// Pairs of matching presets that conflict, with the fields they conflict on.
    pub conflicts: Vec<(String, String, Vec<String>)>,
    /// Presets of the namespace whose selector does not parse.
    pub invalid_selectors: Vec<String>,
    /// The error of each of [`Self::invalid_selectors`], in the same order; `message` is the
    /// first.
    pub selector_errors: Vec<String>,
}

impl fmt::Display for PresetRefusal {
    /// KubeVirt's message, followed by the presets whose selector does not parse (KubeVirt's
    /// message names only the error of the first one it meets, not the preset). KubeVirt lists
    /// the presets in Go's map order, so when their errors differ, the message may be any of
    /// them: each is given with its preset.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if self.invalid_selectors.is_empty() {
            return Ok(());
        }
        let names: Vec<String> = self
            .invalid_selectors
            .iter()
            .map(|n| format!("'{n}'"))
            .collect();
        write!(
            f,
            " (invalid label selector in VirtualMachineInstancePreset {}",
            names.join(", ")
        )?;
        let others: Vec<(&String, &String)> = self
            .invalid_selectors
            .iter()
            .zip(&self.selector_errors)
            .filter(|(_, e)| **e != self.message)
            .collect();
        if !others.is_empty() {
            f.write_str(
                "; KubeVirt meets them in no fixed order and names the error of the first, \
                 which may also be",
            )?;
            for (i, (name, error)) in others.iter().enumerate() {
                let sep = if i == 0 { "" } else { ";" };
                write!(f, "{sep} '{name}': {error}")?;
            }
        }
        f.write_str(")")
    }
}

impl std::error::Error for PresetRefusal {}

/// Apply the presets of `namespace` (among `presets`; other kinds and namespaces are ignored)
/// to `vmi`, a VirtualMachineInstance document, as KubeVirt's VMI mutating webhook does on
/// create. On refusal `vmi` is left unchanged. To apply the same presets to many VMIs, index
/// them once with [`PresetIndex`].
pub fn apply_presets(
    vmi: &mut Value,
    namespace: &str,
    presets: &[&Object],
) -> Result<PresetOutcome, PresetRefusal> {
    PresetIndex::new(presets).apply(vmi, namespace)
}

/// Whether `preset` has the `spec.domain` KubeVirt's preset webhook requires: one without it
/// never selects a VirtualMachineInstance. `kvrender vmi` applies every preset that has one,
/// as the given preset corpora do; `validate` also leaves out those [`refusals`] names.
pub fn is_admitted(preset: &Object) -> bool {
    path::get(&preset.value, &["spec", "domain"]).is_some_and(|d| !d.is_null())
}

/// Why KubeVirt's preset webhook refuses `preset` when it is created (a field and KubeVirt's
/// message each), in its order; empty when it takes it.
pub fn refusals(preset: &Object) -> Vec<(String, String)> {
    let spec = preset.value.get("spec").unwrap_or(&Value::Null);
    crate::validate::rules::vm_spec::preset_refusals(spec)
}

/// The presets of a run, grouped by namespace, in order and with their selectors parsed, so
/// that each VMI costs what its own labels and matching presets cost, not a pass over every
/// preset. It also remembers the conflict check of each set of matching presets it has seen.
#[derive(Debug, Default)]
pub struct PresetIndex<'a> {
    namespaces: HashMap<&'a str, NamespacePresets<'a>>,
    /// Whether [`PresetIndex::apply`] also tries the other orders of the matching presets.
    check_order: bool,
}

/// The presets of one namespace.
#[derive(Debug)]
struct NamespacePresets<'a> {
    /// Sorted by name (stable: namesakes keep their input order).
    presets: Vec<&'a Object>,
    /// The namespace's presets refuse every VMI: a selector does not parse.
    refusal: Option<PresetRefusal>,
    /// Each preset's selector; empty when `refusal` is set.
    selectors: Vec<selector::Selector>,
    /// Label key, then value: the presets (positions) that can only match a VMI with that
    /// label. A preset is filed under the values of one of its `matchLabels` or `In`
    /// requirements.
    by_label: HashMap<String, HashMap<String, Vec<usize>>>,
    /// The presets that have no such requirement: any VMI may match them.
    unfiled: Vec<usize>,
    /// Each preset's conflict class: presets of one class have the same parts where
    /// [`merge_conflicts`] looks, so they conflict with any other preset alike.
    classes: Vec<usize>,
    /// One domain per class.
    class_domains: Vec<&'a Value>,
    /// The conflict check of each set of matching presets (positions) seen so far.
    checked: HashMap<Vec<usize>, Result<(), PresetRefusal>>,
}

impl<'a> PresetIndex<'a> {
    /// Index the VirtualMachineInstancePresets among `presets` (other kinds are ignored).
    pub fn new(presets: &[&'a Object]) -> Self {
        let mut grouped: HashMap<&'a str, Vec<&'a Object>> = HashMap::new();
        for preset in presets {
            if preset.kind() == Kind::VirtualMachineInstancePreset {
                grouped
                    .entry(preset.effective_namespace())
                    .or_default()
                    .push(preset);
            }
        }
        let namespaces = grouped
            .into_iter()
            .map(|(namespace, presets)| (namespace, NamespacePresets::new(presets)))
            .collect();
        PresetIndex {
            namespaces,
            check_order: false,
        }
    }

    /// Have [`PresetIndex::apply`] also merge the matching presets in other orders and report
    /// in [`PresetOutcome::order_dependence`] when the VMI comes out otherwise.
    pub fn checking_order(mut self) -> Self {
        self.check_order = true;
        self
    }

    /// Whether there are presets in `namespace`.
    pub fn has_namespace(&self, namespace: &str) -> bool {
        self.namespaces.contains_key(namespace)
    }

    /// Apply the presets of `namespace` to `vmi`, a VirtualMachineInstance document, as
    /// KubeVirt's VMI mutating webhook does on create. On refusal `vmi` is left unchanged.
    pub fn apply(
        &mut self,
        vmi: &mut Value,
        namespace: &str,
    ) -> Result<PresetOutcome, PresetRefusal> {
        let (matching, classes) = self.selecting(vmi, namespace)?;
        Ok(self.merge_selected(vmi, &matching, &classes))
    }

    /// [`PresetIndex::apply`], and the VMIs that other orders of the same presets give, where
    /// they differ from the name order's, each once. The orders tried are those
    /// [`PresetOutcome::order_dependence`] tries; none when the order changes nothing. The
    /// presets are looked up, checked and merged in name order once for both.
    pub fn apply_in_other_orders(
        &mut self,
        vmi: &mut Value,
        namespace: &str,
    ) -> Result<(PresetOutcome, OtherOrders), PresetRefusal> {
        let (matching, classes) = self.selecting(vmi, namespace)?;
        let reordering = Reordering::of(&matching, &classes);
        let before = reordering.as_ref().map(|_| vmi.clone());
        let outcome = self.merge_selected(vmi, &matching, &classes);
        let others = match (reordering, before) {
            (Some(reordering), Some(before)) => reordering.other_orders(&before, vmi),
            _ => OtherOrders::default(),
        };
        Ok((outcome, others))
    }

    /// Merge `matching` (the presets that select `vmi`, in name order, of conflict classes
    /// `classes`) into `vmi`, and check their order when the index is made to.
    fn merge_selected(
        &self,
        vmi: &mut Value,
        matching: &[&Object],
        classes: &[usize],
    ) -> PresetOutcome {
        let mut outcome = PresetOutcome {
            excluded: is_excluded(vmi),
            ..PresetOutcome::default()
        };
        if !matching.is_empty() {
            let shared = if self.check_order {
                sharing_parts(matching)
            } else {
                Vec::new()
            };
            let before = (shared.len() > 1).then(|| vmi.clone());
            merge_presets(vmi, matching, &mut outcome);
            if let Some(before) = before {
                let presets: Vec<&Object> = shared.iter().map(|&i| matching[i]).collect();
                let classes: Vec<usize> = shared.iter().map(|&i| classes[i]).collect();
                outcome.order_dependence = order_dependence(&before, &presets, &classes);
            }
        }
        outcome.warnings = deprecation_warnings(vmi);
        outcome
    }

    /// The presets of `namespace` that select `vmi`, in name order, once KubeVirt's checks of
    /// them pass, and the conflict class of each: none for a VMI that excludes itself or a
    /// namespace without presets.
    fn selecting(&mut self, vmi: &Value, namespace: &str) -> Result<Selected<'a>, PresetRefusal> {
        if is_excluded(vmi) {
            return Ok(Selected::default());
        }
        let Some(in_namespace) = self.namespaces.get_mut(namespace) else {
            return Ok(Selected::default());
        };
        if let Some(refusal) = &in_namespace.refusal {
            return Err(refusal.clone());
        }
        let matching = in_namespace.matching(&vmi_labels(vmi));
        in_namespace.check_conflicts(&matching)?;
        Ok((
            matching.iter().map(|&i| in_namespace.presets[i]).collect(),
            matching.iter().map(|&i| in_namespace.classes[i]).collect(),
        ))
    }
}

/// The presets that select a VMI, in name order, and the conflict class of each.
type Selected<'a> = (Vec<&'a Object>, Vec<usize>);

/// What [`PresetIndex::apply_in_other_orders`] finds besides the name order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OtherOrders {
    /// The selecting presets that set a part another of them sets too, in name order: those
    /// whose order KubeVirt leaves open. Empty when no other order gives another VMI.
    pub presets: Vec<String>,
    /// The VMIs of other orders, unlike the name order's and each other.
    pub vmis: Vec<Value>,
}

/// The selecting presets of a VMI whose order KubeVirt leaves open, ready to be merged in
/// other orders.
struct Reordering<'o> {
    /// The presets that set a part another of them sets too, in name order.
    shared: Vec<&'o Object>,
    /// Those presets by kind (presets of a kind merge alike), each kind in name order.
    of_kind: Vec<Vec<&'o Object>>,
    /// The other selecting presets, in name order.
    alone: Vec<&'o Object>,
}

impl<'o> Reordering<'o> {
    /// The reordering of `matching` (in name order, of conflict classes `classes`); none when
    /// fewer than two kinds of presets share parts, so that every order gives one VMI.
    fn of(matching: &[&'o Object], classes: &[usize]) -> Option<Self> {
        let positions = sharing_parts(matching);
        let shared: Vec<&Object> = positions.iter().map(|&i| matching[i]).collect();
        let shared_classes: Vec<usize> = positions.iter().map(|&i| classes[i]).collect();
        let (reps, kind_of) = kinds(&shared, &shared_classes);
        if reps.len() < 2 {
            return None;
        }
        let mut is_shared = vec![false; matching.len()];
        for &i in &positions {
            is_shared[i] = true;
        }
        let alone = matching
            .iter()
            .zip(&is_shared)
            .filter(|(_, shared)| !**shared)
            .map(|(p, _)| *p)
            .collect();
        let mut of_kind: Vec<Vec<&Object>> = vec![Vec::new(); reps.len()];
        for (preset, &kind) in shared.iter().zip(&kind_of) {
            of_kind[kind].push(preset);
        }
        Some(Reordering {
            shared,
            of_kind,
            alone,
        })
    }

    /// The VMIs the other orders give when merged into `before`, unlike `name_order` (the
    /// name order's VMI) and each other. The presets that set no part in common with another
    /// come after the others: what they do is the same wherever they come.
    fn other_orders(&self, before: &Value, name_order: &Value) -> OtherOrders {
        let mut vmis: Vec<Value> = Vec::new();
        for order in orders(self.of_kind.len()) {
            let presets: Vec<&Object> = order
                .iter()
                .flat_map(|&kind| self.of_kind[kind].iter().copied())
                .chain(self.alone.iter().copied())
                .collect();
            let mut trial = before.clone();
            merge_presets(&mut trial, &presets, &mut PresetOutcome::default());
            if trial != *name_order && !vmis.contains(&trial) {
                vmis.push(trial);
            }
        }
        let presets = if vmis.is_empty() {
            Vec::new()
        } else {
            self.shared.iter().map(|p| p.name().to_string()).collect()
        };
        OtherOrders { presets, vmis }
    }
}

impl<'a> NamespacePresets<'a> {
    fn new(mut presets: Vec<&'a Object>) -> Self {
        presets.sort_by(|a, b| a.name().cmp(b.name()));
        let mut out = NamespacePresets {
            presets,
            refusal: None,
            selectors: Vec::new(),
            by_label: HashMap::new(),
            unfiled: Vec::new(),
            classes: Vec::new(),
            class_domains: Vec::new(),
            checked: HashMap::new(),
        };
        let mut invalid = Vec::new();
        let mut errors = Vec::new();
        for preset in &out.presets {
            match selector::parse(path::get(&preset.value, &["spec", "selector"])) {
                Ok(sel) => out.selectors.push(sel),
                Err(e) => {
                    invalid.push(preset.name().to_string());
                    errors.push(e);
                }
            }
        }
        if let Some(message) = errors.first() {
            out.selectors.clear();
            out.refusal = Some(PresetRefusal {
                message: message.clone(),
                conflicts: Vec::new(),
                invalid_selectors: invalid,
                selector_errors: errors,
            });
            return out;
        }

        for (i, sel) in out.selectors.iter().enumerate() {
            // The requirement with the fewest values files the preset under the fewest labels.
            let filing = sel
                .requirements
                .iter()
                .filter(|r| matches!(r.op, selector::Op::Equals | selector::Op::In))
                .min_by_key(|r| r.values.len());
            match filing {
                Some(r) => {
                    let by_value = out.by_label.entry(r.key.clone()).or_default();
                    for value in &r.values {
                        let filed = by_value.entry(value.clone()).or_default();
                        // A value listed twice files the preset once.
                        if filed.last() != Some(&i) {
                            filed.push(i);
                        }
                    }
                }
                None => out.unfiled.push(i),
            }
        }

        let mut class_of: HashMap<String, usize> = HashMap::new();
        for preset in &out.presets {
            let domain = preset_domain(preset);
            let next = class_of.len();
            let class = *class_of.entry(conflict_key(domain)).or_insert(next);
            if class == next {
                out.class_domains.push(domain);
            }
            out.classes.push(class);
        }
        out
    }

    /// The positions of the presets whose selector matches `labels`, in order.
    fn matching(&self, labels: &[(String, String)]) -> Vec<usize> {
        let mut candidates = self.unfiled.clone();
        for (key, value) in labels {
            if let Some(filed) = self.by_label.get(key).and_then(|v| v.get(value)) {
                candidates.extend_from_slice(filed);
            }
        }
        candidates.sort_unstable();
        candidates.dedup();
        let lookup = selector::Labels::new(labels);
        candidates.retain(|&i| self.selectors[i].matches_labels(&lookup));
        candidates
    }

    /// KubeVirt's pairwise check of the matching presets (positions, in order), remembered
    /// per set.
    fn check_conflicts(&mut self, matching: &[usize]) -> Result<(), PresetRefusal> {
        if matching.len() < 2 {
            return Ok(());
        }
        if let Some(result) = self.checked.get(matching) {
            return result.clone();
        }
        let presets: Vec<(&Object, usize)> = matching
            .iter()
            .map(|&i| (self.presets[i], self.classes[i]))
            .collect();
        let result = check_preset_conflicts(&presets, &self.class_domains);
        self.checked.insert(matching.to_vec(), result.clone());
        result
    }
}

/// The parts of a preset's domain that [`merge_conflicts`] reads, as text: two presets with
/// the same key conflict with every preset alike.
fn conflict_key(domain: &Value) -> String {
    let parts: Vec<Option<&Value>> = CONFLICT_PARTS
        .iter()
        .map(|at| path::get(domain, at))
        .collect();
    serde_json::to_string(&parts).unwrap_or_default()
}

/// Where [`merge_conflicts`] looks in a domain.
const CONFLICT_PARTS: [&[&str]; 7] = [
    &["resources", "requests"],
    &["cpu"],
    &["firmware"],
    &["clock"],
    &["features"],
    &["devices", "watchdog"],
    &["ioThreadsPolicy"],
];

/// Merge each matching preset, in order, into `vmi` and record what it did in `outcome`.
fn merge_presets(vmi: &mut Value, matching: &[&Object], outcome: &mut PresetOutcome) {
    // Go's domain is a plain struct: one that only a preset's unmerged parts reached stays
    // unwritten, as it was.
    let had_domain = path::get(vmi, &["spec", "domain"]).is_some();
    for preset in matching {
        let domain = preset_domain(preset);
        if path::ensure_map(vmi, &["spec", "domain"]).is_none() {
            // A VMI whose spec or domain is not a mapping has nothing a preset could merge into.
            outcome.unapplied.push(preset.name().to_string());
            continue;
        }
        let Some(vmi_domain) = path::get_mut(vmi, &["spec", "domain"]) else {
            continue;
        };
        let (applied, conflicts) = merge_domain(domain, vmi_domain);
        // A part the VMI sets differently is left as the VMI has it.
        let vmi_domain = &*vmi_domain;
        outcome
            .skipped
            .extend(conflicts.into_iter().map(|(field, detail)| {
                let mut skipped = SkippedField {
                    preset: preset.name().to_string(),
                    field,
                    detail,
                    values: (None, None),
                };
                let at = skipped.domain_path();
                let at: Vec<&str> = at.split('.').collect();
                skipped.values = (part_value(domain, &at), part_value(vmi_domain, &at));
                skipped
            }));
        if applied {
            if let Some(annotations) = path::ensure_map(vmi, &["metadata", "annotations"]) {
                annotations.insert(
                    format!("{APPLIED_ANNOTATION_PREFIX}{}", preset.name()),
                    Value::String(APPLIED_ANNOTATION_VALUE.to_string()),
                );
            }
            outcome.applied.push(preset.name().to_string());
        } else {
            outcome.unapplied.push(preset.name().to_string());
        }
    }
    if !had_domain
        && let Some(spec) = path::get_mut(vmi, &["spec"]).and_then(Value::as_object_mut)
        && spec
            .get("domain")
            .is_some_and(|d| d.as_object().is_some_and(Map::is_empty))
    {
        spec.remove("domain");
    }
}

/// The value of a domain's part at `at`, as a [`SkippedField`] names it: `clock.clockoffset`,
/// which Go's clock holds inline, is the clock's `utc` and `timezone`.
fn part_value(domain: &Value, at: &[&str]) -> Option<Value> {
    if at == ["clock", "clockoffset"] {
        let offset: Map<String, Value> = path::get(domain, &["clock"])?
            .as_object()?
            .iter()
            .filter(|(k, v)| matches!(k.as_str(), "utc" | "timezone") && !v.is_null())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        return (!offset.is_empty()).then_some(Value::Object(offset));
    }
    path::get(domain, at).cloned()
}

/// Up to this many presets that share parts, every order is tried; above, the reversed order
/// and a few rotations of the name order (each puts other presets first and last).
const EVERY_ORDER_UP_TO: usize = 5;

/// How many rotations of the name order are tried above [`EVERY_ORDER_UP_TO`].
const ROTATIONS: usize = 6;

/// How many presets an [`OrderDependence`] names before it counts the rest.
const NAMED_AT_MOST: usize = 5;

/// Whether a preset's domain has a part [`merge_domain`] would copy at `at`.
fn touches(domain: &Value, at: &[&str]) -> bool {
    if at == ["resources", "requests"] {
        requests(domain).is_some_and(|r| !r.is_empty())
    } else {
        set_at(domain, at).is_some()
    }
}

/// The positions of the matching presets (in name order) that set a part another matching
/// preset sets too. Only they can depend on the order: a part set by one preset alone is
/// copied, and counts for its annotation, the same way whenever that preset comes.
fn sharing_parts(matching: &[&Object]) -> Vec<usize> {
    let mut setters = [0usize; CONFLICT_PARTS.len()];
    for preset in matching {
        for (count, at) in setters.iter_mut().zip(CONFLICT_PARTS) {
            *count += usize::from(touches(preset_domain(preset), at));
        }
    }
    (0..matching.len())
        .filter(|&i| {
            setters
                .iter()
                .zip(CONFLICT_PARTS)
                .any(|(&count, at)| count > 1 && touches(preset_domain(matching[i]), at))
        })
        .collect()
}

/// Merge `shared` (presets that share parts, in name order, of conflict classes `classes`)
/// into copies of `before` in other orders and compare each result with the name order's.
/// Presets whose merged parts are alike act alike wherever they come (the first of them
/// merges, and each is applied exactly when the first is), so one of each kind is reordered.
fn order_dependence(
    before: &Value,
    shared: &[&Object],
    classes: &[usize],
) -> Option<OrderDependence> {
    let (reps, kind_of) = kinds(shared, classes);
    let n = reps.len();
    if n < 2 {
        return None;
    }
    let mut reference = before.clone();
    merge_presets(&mut reference, &reps, &mut PresetOutcome::default());
    let annotation = |v: &Value, name: &str| {
        path::get(v, &["metadata", "annotations"])
            .and_then(|a| a.field(&format!("{APPLIED_ANNOTATION_PREFIX}{name}")))
            .is_some()
    };
    let mut parts: Vec<&[&str]> = Vec::new();
    let mut annotated = vec![false; n];
    for order in orders(n) {
        let mut trial = before.clone();
        let presets: Vec<&Object> = order.iter().map(|&i| reps[i]).collect();
        merge_presets(&mut trial, &presets, &mut PresetOutcome::default());
        for part in differing_parts(&reference, &trial) {
            if !parts.contains(&part) {
                parts.push(part);
            }
        }
        for (i, preset) in reps.iter().enumerate() {
            annotated[i] |=
                annotation(&reference, preset.name()) != annotation(&trial, preset.name());
        }
    }
    let any_annotated = annotated.contains(&true);
    let annotated: Vec<bool> = kind_of.iter().map(|&k| annotated[k]).collect();
    if parts.is_empty() && !any_annotated {
        return None;
    }
    // The presets that set a part that differs, and those that set a part in common with a
    // preset annotated in one order and not in another.
    let annotated_parts: Vec<&[&str]> = CONFLICT_PARTS
        .iter()
        .copied()
        .filter(|at| {
            shared
                .iter()
                .zip(&annotated)
                .any(|(q, &a)| a && touches(preset_domain(q), at))
        })
        .collect();
    let presets = shared
        .iter()
        .filter(|p| {
            let domain = preset_domain(p);
            parts.iter().any(|at| touches(domain, at))
                || annotated_parts.iter().any(|at| touches(domain, at))
        })
        .map(|p| p.name().to_string())
        .collect();
    let mut fields: Vec<String> = parts
        .iter()
        .map(|at| format!("spec.domain.{}", at.join(".")))
        .collect();
    if any_annotated {
        fields.push("metadata.annotations".to_string());
    }
    Some(OrderDependence { presets, fields })
}

/// One preset of each kind among `shared` (presets of one conflict class, in `classes`, have
/// the same merged parts: they are of one kind), and the kind of each preset of `shared`.
fn kinds<'o>(shared: &[&'o Object], classes: &[usize]) -> (Vec<&'o Object>, Vec<usize>) {
    let mut kinds: HashMap<usize, usize> = HashMap::new();
    let mut reps: Vec<&Object> = Vec::new();
    let kind_of = shared
        .iter()
        .zip(classes)
        .map(|(p, &class)| {
            let next = reps.len();
            let kind = *kinds.entry(class).or_insert(next);
            if kind == next {
                reps.push(p);
            }
            kind
        })
        .collect();
    (reps, kind_of)
}

/// The orders of `n` kinds of presets to try besides the name order: every one up to
/// [`EVERY_ORDER_UP_TO`], else the reversed order and [`ROTATIONS`] rotations.
fn orders(n: usize) -> Vec<Vec<usize>> {
    let mut orders: Vec<Vec<usize>> = Vec::new();
    if n <= EVERY_ORDER_UP_TO {
        let mut order: Vec<usize> = (0..n).collect();
        while next_permutation(&mut order) {
            orders.push(order.clone());
        }
    } else {
        orders.push((0..n).rev().collect());
        let shifts = (1..=ROTATIONS)
            .map(|k| k * n / (ROTATIONS + 1))
            .filter(|&k| k > 0);
        orders.extend(shifts.map(|k| (0..n).map(|i| (i + k) % n).collect()));
        orders.dedup();
    }
    orders
}

/// The parts of the domain a preset merges (paths under the domain) that differ between two
/// VMIs, as Go compares them.
fn differing_parts(a: &Value, b: &Value) -> Vec<&'static [&'static str]> {
    let null = Value::Null;
    let domain = |v| path::get(v, &["spec", "domain"]).unwrap_or(&null);
    let (a, b) = (domain(a), domain(b));
    let typed: [(&'static [&'static str], &schema::Ty); 2] = [
        (&["resources", "requests"], &schema::REQUESTS),
        (&["clock"], &schema::CLOCK),
    ];
    typed
        .into_iter()
        .chain(POINTER_PARTS.iter().map(|&(_, at, ty)| (at, ty)))
        .filter(|(at, ty)| match (set_at(a, at), set_at(b, at)) {
            (None, None) => false,
            (Some(x), Some(y)) => !schema::semantic_eq(x, y, ty),
            _ => true,
        })
        .map(|(at, _)| at)
        .collect()
}

/// The next order of `order` in lexicographic order; false after the last.
fn next_permutation(order: &mut [usize]) -> bool {
    let Some(i) = order.windows(2).rposition(|w| w[0] < w[1]) else {
        return false;
    };
    let j = order.iter().rposition(|&x| x > order[i]).unwrap_or(i + 1);
    order.swap(i, j);
    order[i + 1..].reverse();
    true
}

/// One VMI produced by [`vmi_stage_presets`].
#[derive(Clone, Debug, PartialEq)]
pub struct StagedVmi {
    /// The VirtualMachine or VirtualMachineInstance it was built from.
    pub source: ObjectRef,
    /// The VirtualMachineInstance after the preset step.
    pub vmi: Value,
    /// What the preset step did.
    pub outcome: PresetOutcome,
}

/// The VirtualMachineInstancePresets among `own` (the inputs), then those among `cluster`
/// (objects given to resolve against only, as `--catalog` gives them) that no preset of `own`
/// shadows: as with instancetypes, an input object stands for the cluster's object of the
/// same kind, namespace and name. A cluster holds one preset of a namespace and name, so of
/// two such definitions among `own` only the first is kept, as expansion keeps the first
/// instancetype of a name (the caller reports the second).
pub fn with_cluster_presets<'a>(
    own: impl IntoIterator<Item = &'a Object>,
    cluster: impl IntoIterator<Item = &'a Object>,
) -> Vec<&'a Object> {
    let mut seen: std::collections::HashSet<(&str, &str)> = std::collections::HashSet::new();
    let mut presets: Vec<&'a Object> = Vec::new();
    for preset in own {
        if preset.kind() == Kind::VirtualMachineInstancePreset
            && seen.insert((preset.effective_namespace(), preset.name()))
        {
            presets.push(preset);
        }
    }
    for preset in cluster {
        if preset.kind() == Kind::VirtualMachineInstancePreset
            && !seen.contains(&(preset.effective_namespace(), preset.name()))
        {
            presets.push(preset);
        }
    }
    presets
}

/// For every VirtualMachine and VirtualMachineInstance of `objects`, in input order, the VMI
/// KubeVirt creates (see [`crate::kubevirt::vmi::vmi_for`]) after the presets of its namespace
/// found in `objects` were applied, or the webhook's refusal. Instancetypes and preferences are
/// not applied here (the full VMI pipeline applies them before this step), nor VMI defaults.
pub fn vmi_stage_presets(objects: &[Object]) -> Vec<Result<StagedVmi, (ObjectRef, PresetRefusal)>> {
    let presets: Vec<&Object> = objects
        .iter()
        .filter(|o| o.kind() == Kind::VirtualMachineInstancePreset)
        .collect();
    let mut presets = PresetIndex::new(&presets);
    objects
        .iter()
        .filter_map(|object| {
            let mut vmi = crate::kubevirt::vmi::vmi_for(object)?;
            let namespace = object.effective_namespace();
            Some(match presets.apply(&mut vmi, namespace) {
                Ok(outcome) => Ok(StagedVmi {
                    vmi: {
                        crate::kubevirt::vmi::omit_empty_resources_and_devices(&mut vmi);
                        crate::kubevirt::vmi::go_nulls_as_zero_values(&mut vmi);
                        vmi
                    },
                    source: object.object_ref(),
                    outcome,
                }),
                Err(refusal) => Err((object.object_ref(), refusal)),
            })
        })
        .collect()
}

fn is_excluded(vmi: &Value) -> bool {
    path::get(vmi, &["metadata", "annotations", EXCLUDE_ANNOTATION]).and_then(Value::as_str)
        == Some("true")
}

fn deprecation_warnings(vmi: &Value) -> Vec<String> {
    let annotated = path::get(vmi, &["metadata", "annotations"])
        .and_then(Value::as_object)
        .is_some_and(|a| a.keys().any(|k| k.contains("virtualmachinepreset")));
    if annotated {
        vec![DEPRECATION_WARNING.to_string()]
    } else {
        Vec::new()
    }
}

/// The labels of a VMI with a string value (as a preset's selector reads them).
pub(crate) fn vmi_labels(vmi: &Value) -> Vec<(String, String)> {
    path::get(vmi, &["metadata", "labels"])
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

const NULL: Value = Value::Null;

fn preset_domain(preset: &Object) -> &Value {
    path::get(&preset.value, &["spec", "domain"]).unwrap_or(&NULL)
}

/// The most conflicting pairs of presets a refusal names. KubeVirt names every pair, which for
/// thousands of presets that all conflict is a message of gigabytes.
const MOST_CONFLICTS_LISTED: usize = 100;

/// KubeVirt's pairwise check: each preset against every one before it. Each preset comes with
/// its conflict class, `class_domains` holds one domain per class: two presets conflict as
/// their classes do, so each pair of classes is compared once, and a preset is compared with
/// the presets before it one by one only when it conflicts with one of their classes. The
/// first [`MOST_CONFLICTS_LISTED`] conflicting pairs are named, in KubeVirt's order.
fn check_preset_conflicts(
    presets: &[(&Object, usize)],
    class_domains: &[&Value],
) -> Result<(), PresetRefusal> {
    let mut pairs = HashMap::new();
    let mut errors = Vec::new();
    let mut conflicts = Vec::new();
    let mut seen = SeenParts::default();
    let mut is_seen = vec![false; class_domains.len()];
    let mut more = false;
    'presets: for (i, &(preset, class)) in presets.iter().enumerate() {
        if seen.conflicts_with(class_domains[class]) {
            for &(visited, visited_class) in &presets[..i] {
                let Some(found) = class_conflicts(&mut pairs, class_domains, class, visited_class)
                else {
                    continue;
                };
                if errors.len() == MOST_CONFLICTS_LISTED {
                    more = true;
                    break 'presets;
                }
                errors.push(format!(
                    "presets '{}' and '{}' conflict: {}",
                    preset.name(),
                    visited.name(),
                    found.details
                ));
                conflicts.push((
                    preset.name().to_string(),
                    visited.name().to_string(),
                    found.fields.clone(),
                ));
            }
        }
        if !is_seen[class] {
            is_seen[class] = true;
            seen.add(class_domains[class]);
        }
    }
    if errors.is_empty() {
        return Ok(());
    }
    let unlisted = if more {
        format!(
            " and more pairs (KubeVirt names every conflicting pair; the first \
             {MOST_CONFLICTS_LISTED} are listed)"
        )
    } else {
        String::new()
    };
    Err(PresetRefusal {
        message: format!(
            "VirtualMachinePresets cannot be applied due to conflicts: {}{unlisted}",
            aggregate(&errors)
        ),
        conflicts,
        invalid_selectors: Vec::new(),
        selector_errors: Vec::new(),
    })
}

/// The values that the classes of presets seen so far give each part [`merge_conflicts`]
/// compares, to tell at once whether a new class conflicts with any of them. Each equality is
/// one of Go values, so values fall into groups of equals, and a part keeps one value of each
/// of at most two groups: a new value conflicts with a seen one unless it is equal to the only
/// group seen.
#[derive(Default)]
struct SeenParts<'v> {
    /// Per resource name, the requests.
    requests: HashMap<&'v str, Vec<&'v Value>>,
    /// Per entry of [`POINTER_PARTS`], the values.
    pointers: [Vec<&'v Value>; POINTER_PARTS.len()],
    /// The clocks, compared on their offset.
    clocks: Vec<&'v Value>,
    /// The timers of the clocks.
    timers: Vec<&'v Value>,
}

impl<'v> SeenParts<'v> {
    /// Whether `domain` conflicts with the domain of a class seen so far: whether
    /// [`merge_conflicts`] finds anything between them.
    fn conflicts_with(&self, domain: &Value) -> bool {
        fn differs(seen: &[&Value], value: &Value, eq: impl Fn(&Value, &Value) -> bool) -> bool {
            seen.iter().any(|s| !eq(value, s))
        }
        let requests = requests(domain).is_some_and(|requests| {
            requests.iter().any(|(key, value)| {
                self.requests
                    .get(key.as_str())
                    .is_some_and(|seen| differs(seen, value, quantity::struct_eq))
            })
        });
        requests
            || POINTER_PARTS
                .iter()
                .zip(&self.pointers)
                .any(|((_, at, ty), seen)| {
                    set_at(domain, at).is_some_and(|value| {
                        differs(seen, value, |a, b| schema::semantic_eq(a, b, ty))
                    })
                })
            || set_at(domain, &["clock"]).is_some_and(|clock| {
                differs(&self.clocks, clock, |a, b| {
                    schema::semantic_eq(a, b, &schema::CLOCK_OFFSET)
                }) || set_at(clock, &["timer"]).is_some_and(|timer| {
                    differs(&self.timers, timer, |a, b| {
                        schema::semantic_eq(a, b, &schema::TIMER)
                    })
                })
            })
    }

    /// Count the parts of `domain` among those seen.
    fn add(&mut self, domain: &'v Value) {
        fn keep<'v>(
            seen: &mut Vec<&'v Value>,
            value: &'v Value,
            eq: impl Fn(&Value, &Value) -> bool,
        ) {
            if seen.len() < 2 && !seen.iter().any(|s| eq(value, s)) {
                seen.push(value);
            }
        }
        if let Some(requests) = requests(domain) {
            for (key, value) in requests {
                keep(
                    self.requests.entry(key.as_str()).or_default(),
                    value,
                    quantity::struct_eq,
                );
            }
        }
        for ((_, at, ty), seen) in POINTER_PARTS.iter().zip(&mut self.pointers) {
            if let Some(value) = set_at(domain, at) {
                keep(seen, value, |a, b| schema::semantic_eq(a, b, ty));
            }
        }
        if let Some(clock) = set_at(domain, &["clock"]) {
            keep(&mut self.clocks, clock, |a, b| {
                schema::semantic_eq(a, b, &schema::CLOCK_OFFSET)
            });
            if let Some(timer) = set_at(clock, &["timer"]) {
                keep(&mut self.timers, timer, |a, b| {
                    schema::semantic_eq(a, b, &schema::TIMER)
                });
            }
        }
    }
}

/// What two classes of presets conflict on: the fields, and the details as KubeVirt words them.
struct ClassConflict {
    fields: Vec<String>,
    details: String,
}

/// The conflicts of a preset of class `a` with one of class `b`, worked out once per pair.
fn class_conflicts<'p>(
    pairs: &'p mut HashMap<(usize, usize), Option<ClassConflict>>,
    class_domains: &[&Value],
    a: usize,
    b: usize,
) -> Option<&'p ClassConflict> {
    pairs
        .entry((a, b))
        .or_insert_with(|| {
            let found = merge_conflicts(class_domains[a], class_domains[b]);
            (!found.is_empty()).then(|| {
                let details: Vec<String> = found.iter().map(|(f, d)| format!("{f}: {d}")).collect();
                ClassConflict {
                    fields: found.into_iter().map(|(f, _)| f).collect(),
                    details: aggregate(&details),
                }
            })
        })
        .as_ref()
}

/// Go's aggregate error text: the message itself, or `[a, b, ...]`.
fn aggregate(messages: &[String]) -> String {
    if messages.len() == 1 {
        messages[0].clone()
    } else {
        format!("[{}]", messages.join(", "))
    }
}

/// Go's `%v` of a non-nil pointer to a value of type `ty`.
fn pointer_format(v: &Value, ty: &schema::Ty) -> String {
    match ty {
        schema::Ty::Struct(_) => format!("&{}", schema::go_format(Some(v), ty)),
        _ => "<ptr>".to_string(),
    }
}

/// A pointer field of the domain: set when present and not null.
fn set_at<'a>(domain: &'a Value, at: &[&str]) -> Option<&'a Value> {
    path::get(domain, at).filter(|v| !v.is_null())
}

/// The pointer parts of the domain other than requests and clock: KubeVirt's field name, the
/// path under the domain and the Go type.
const POINTER_PARTS: [(&str, &[&str], &schema::Ty); 5] = [
    ("spec.cpu", &["cpu"], &schema::CPU),
    ("spec.firmware", &["firmware"], &schema::FIRMWARE),
    ("spec.features", &["features"], &schema::FEATURES),
    (
        "spec.devices.watchdog",
        &["devices", "watchdog"],
        &schema::WATCHDOG,
    ),
    (
        "spec.ioThreadsPolicy",
        &["ioThreadsPolicy"],
        &schema::Ty::Str,
    ),
];

/// The parts of `a` that conflict with `b` (KubeVirt's `checkMergeConflicts`), each with a
/// `<a> != <b>` detail. The order is KubeVirt's. Only the parts [`CONFLICT_PARTS`] lists are
/// read: presets are put in conflict classes by them.
fn merge_conflicts(a: &Value, b: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let a_requests = requests(a);
    let b_requests = requests(b);
    if let (Some(ar), Some(br)) = (a_requests, b_requests)
        && !ar.is_empty()
    {
        let mut keys: Vec<&String> = ar.keys().collect();
        keys.sort();
        for key in keys {
            if let Some(bv) = br.field(key)
                && !quantity::struct_eq(&ar[key], bv)
            {
                out.push((
                    format!("spec.resources.requests[{key}]"),
                    format!(
                        "{} != {}",
                        quantity::go_format(&ar[key]),
                        quantity::go_format(bv)
                    ),
                ));
            }
        }
    }
    for (name, at, ty) in &POINTER_PARTS[..2] {
        push_pointer_conflict(&mut out, a, b, name, at, ty);
    }
    if let (Some(ac), Some(bc)) = (set_at(a, &["clock"]), set_at(b, &["clock"])) {
        if !schema::semantic_eq(ac, bc, &schema::CLOCK_OFFSET) {
            out.push((
                "spec.clock.clockoffset".to_string(),
                format!(
                    "{} != {}",
                    schema::go_format(Some(ac), &schema::CLOCK_OFFSET),
                    schema::go_format(Some(bc), &schema::CLOCK_OFFSET)
                ),
            ));
        }
        if let (Some(at), Some(bt)) = (set_at(ac, &["timer"]), set_at(bc, &["timer"]))
            && !schema::semantic_eq(at, bt, &schema::TIMER)
        {
            out.push((
                "spec.clock.timer".to_string(),
                format!(
                    "{} != {}",
                    pointer_format(at, &schema::TIMER),
                    pointer_format(bt, &schema::TIMER)
                ),
            ));
        }
    }
    for (name, at, ty) in &POINTER_PARTS[2..] {
        push_pointer_conflict(&mut out, a, b, name, at, ty);
    }
    out
}

fn push_pointer_conflict(
    out: &mut Vec<(String, String)>,
    a: &Value,
    b: &Value,
    name: &str,
    at: &[&str],
    ty: &schema::Ty,
) {
    if let (Some(av), Some(bv)) = (set_at(a, at), set_at(b, at))
        && !schema::semantic_eq(av, bv, ty)
    {
        out.push((
            name.to_string(),
            format!("{} != {}", pointer_format(av, ty), pointer_format(bv, ty)),
        ));
    }
}

fn requests(domain: &Value) -> Option<&Map<String, Value>> {
    path::get(domain, &["resources", "requests"]).and_then(Value::as_object)
}

/// The offset part of a clock (`utc`, `timezone`).
fn clock_offset(clock: &Value) -> Value {
    let mut m = Map::new();
    if let Some(c) = clock.as_object() {
        for key in ["utc", "timezone"] {
            if let Some(v) = c.field(key).filter(|v| !v.is_null()) {
                m.insert(key.to_string(), v.clone());
            }
        }
    }
    Value::Object(m)
}

/// Merge one preset's domain into the VMI's (KubeVirt's `mergeDomainSpec`): whether the preset
/// counts as applied, and its conflicts with the VMI as it was before the merge.
fn merge_domain(preset: &Value, vmi: &mut Value) -> (bool, Vec<(String, String)>) {
    let conflicts = merge_conflicts(preset, vmi);
    let mut applied = false;

    if let Some(preset_requests) = requests(preset).filter(|r| !r.is_empty()) {
        if !path::is_set(vmi, &["resources", "requests"]) {
            let copy = schema::go_copy(&Value::Object(preset_requests.clone()), &schema::REQUESTS);
            path::set(vmi, &["resources", "requests"], copy);
        }
        if let Some(vmi_requests) = path::get(vmi, &["resources", "requests"])
            && schema::semantic_eq(
                vmi_requests,
                &Value::Object(preset_requests.clone()),
                &schema::REQUESTS,
            )
        {
            applied = true;
        }
    }

    for (_, at, ty) in &POINTER_PARTS[..2] {
        applied |= merge_pointer(preset, vmi, at, ty);
    }

    if let Some(preset_clock) = set_at(preset, &["clock"]) {
        if !path::is_set(vmi, &["clock"]) {
            let offset = schema::go_copy(&clock_offset(preset_clock), &schema::CLOCK_OFFSET);
            path::set(vmi, &["clock"], offset);
        }
        if let Some(vmi_clock) = set_at(vmi, &["clock"])
            && schema::semantic_eq(vmi_clock, preset_clock, &schema::CLOCK)
        {
            applied = true;
        }
        if let Some(preset_timer) = set_at(preset_clock, &["timer"]) {
            if set_at(vmi, &["clock"]).is_some_and(Value::is_object)
                && !path::is_set(vmi, &["clock", "timer"])
            {
                let copy = schema::go_copy(preset_timer, &schema::TIMER);
                path::set(vmi, &["clock", "timer"], copy);
            }
            if let Some(vmi_timer) = set_at(vmi, &["clock", "timer"])
                && schema::semantic_eq(vmi_timer, preset_timer, &schema::TIMER)
            {
                applied = true;
            }
        }
    }

    for (_, at, ty) in &POINTER_PARTS[2..] {
        applied |= merge_pointer(preset, vmi, at, ty);
    }

    (applied, conflicts)
}

/// Copy a pointer part when the VMI lacks it; whether the VMI's part then equals the preset's.
fn merge_pointer(preset: &Value, vmi: &mut Value, at: &[&str], ty: &schema::Ty) -> bool {
    let Some(preset_value) = set_at(preset, at) else {
        return false;
    };
    if !path::is_set(vmi, at) {
        path::set(vmi, at, schema::go_copy(preset_value, ty));
    }
    set_at(vmi, at).is_some_and(|v| schema::semantic_eq(v, preset_value, ty))
}

/// Resource quantities as the preset rules compare them.
mod quantity {
    use serde_json::Value;

    use crate::model::quantity::Quantity;

    /// Whether two quantities decode to equal Go structs (`==` on `resource.Quantity`).
    /// Values that do not decode compare as written.
    pub(super) fn struct_eq(a: &Value, b: &Value) -> bool {
        match (Quantity::from_json(a), Quantity::from_json(b)) {
            (Some(qa), Some(qb)) => qa.go_struct_eq(&qb),
            _ => a == b,
        }
    }

    /// Whether two quantities have the same value (`Quantity.Cmp` is 0).
    pub(super) fn value_eq(a: &Value, b: &Value) -> bool {
        match (Quantity::from_json(a), Quantity::from_json(b)) {
            (Some(qa), Some(qb)) => qa.eq_value(&qb),
            _ => a == b,
        }
    }

    /// Go's `%v` of the decoded `resource.Quantity` struct.
    pub(super) fn go_format(v: &Value) -> String {
        Quantity::from_json(v).map_or_else(|| v.to_string(), |q| q.go_struct_repr())
    }
}

/// The Go types of the merged domain parts: which fields exist, which are pointers.
mod schema {
    use serde_json::{Map, Value};

    use crate::model::path::Fields;

    /// A Go type, as far as decoding, encoding and semantic equality care.
    pub(super) enum Ty {
        /// A struct with its JSON fields.
        Struct(&'static [Field]),
        /// A string (or string-based type).
        Str,
        /// An integer.
        Int,
        /// A boolean.
        Bool,
        /// A `resource.Quantity`.
        Qty,
        /// A slice.
        List(&'static Ty),
        /// A map with string keys.
        Map(&'static Ty),
    }

    /// A struct field: JSON name, pointer or not, type.
    pub(super) struct Field {
        name: &'static str,
        pointer: bool,
        ty: &'static Ty,
    }

    const fn p(name: &'static str, ty: &'static Ty) -> Field {
        Field {
            name,
            pointer: true,
            ty,
        }
    }

    const fn v(name: &'static str, ty: &'static Ty) -> Field {
        Field {
            name,
            pointer: false,
            ty,
        }
    }

    /// An embedded struct whose fields sit in the parent's JSON mapping (`json:",inline"`).
    const fn inline(ty: &'static Ty) -> Field {
        Field {
            name: "",
            pointer: false,
            ty,
        }
    }

    /// The field `key` of a struct, looking through inline structs.
    fn find_field(fields: &'static [Field], key: &str) -> Option<&'static Field> {
        fields.iter().find_map(|f| match (f.name, f.ty) {
            ("", Ty::Struct(inner)) => find_field(inner, key),
            (name, _) if name == key => Some(f),
            _ => None,
        })
    }

    const S: Ty = Ty::Str;
    const I: Ty = Ty::Int;
    const B: Ty = Ty::Bool;
    const EMPTY: Ty = Ty::Struct(&[]);
    const FEATURE_STATE: Ty = Ty::Struct(&[p("enabled", &B)]);

    pub(super) const REQUESTS: Ty = Ty::Map(&Ty::Qty);

    const CPU_FEATURE: Ty = Ty::Struct(&[v("name", &S), v("policy", &S)]);
    pub(super) const CPU: Ty = Ty::Struct(&[
        v("cores", &I),
        v("sockets", &I),
        v("maxSockets", &I),
        v("threads", &I),
        v("model", &S),
        v("features", &Ty::List(&CPU_FEATURE)),
        v("dedicatedCpuPlacement", &B),
        p("numa", &Ty::Struct(&[p("guestMappingPassthrough", &EMPTY)])),
        v("isolateEmulatorThread", &B),
        p("realtime", &Ty::Struct(&[v("mask", &S)])),
    ]);

    pub(super) const FIRMWARE: Ty = Ty::Struct(&[
        v("uuid", &S),
        p(
            "bootloader",
            &Ty::Struct(&[
                p("bios", &Ty::Struct(&[p("useSerial", &B)])),
                p(
                    "efi",
                    &Ty::Struct(&[p("secureBoot", &B), p("persistent", &B)]),
                ),
            ]),
        ),
        v("serial", &S),
        p(
            "kernelBoot",
            &Ty::Struct(&[
                v("kernelArgs", &S),
                p(
                    "container",
                    &Ty::Struct(&[
                        v("image", &S),
                        v("imagePullSecret", &S),
                        v("imagePullPolicy", &S),
                        v("kernelPath", &S),
                        v("initrdPath", &S),
                    ]),
                ),
            ]),
        ),
        p(
            "acpi",
            &Ty::Struct(&[v("slicNameRef", &S), v("msdmNameRef", &S)]),
        ),
    ]);

    const UTC: Ty = Ty::Struct(&[p("offsetSeconds", &I)]);
    const TICKING: Ty = Ty::Struct(&[v("tickPolicy", &S), p("present", &B)]);
    const PRESENT: Ty = Ty::Struct(&[p("present", &B)]);
    pub(super) const TIMER: Ty = Ty::Struct(&[
        p("hpet", &TICKING),
        p("kvm", &PRESENT),
        p("pit", &TICKING),
        p(
            "rtc",
            &Ty::Struct(&[v("tickPolicy", &S), p("present", &B), v("track", &S)]),
        ),
        p("hyperv", &PRESENT),
    ]);
    pub(super) const CLOCK_OFFSET: Ty = Ty::Struct(&[p("utc", &UTC), p("timezone", &S)]);
    pub(super) const CLOCK: Ty = Ty::Struct(&[inline(&CLOCK_OFFSET), p("timer", &TIMER)]);

    const HYPERV: Ty = Ty::Struct(&[
        p("relaxed", &FEATURE_STATE),
        p("vapic", &FEATURE_STATE),
        p(
            "spinlocks",
            &Ty::Struct(&[inline(&FEATURE_STATE), p("spinlocks", &I)]),
        ),
        p("vpindex", &FEATURE_STATE),
        p("runtime", &FEATURE_STATE),
        p("synic", &FEATURE_STATE),
        p(
            "synictimer",
            &Ty::Struct(&[inline(&FEATURE_STATE), p("direct", &FEATURE_STATE)]),
        ),
        p("reset", &FEATURE_STATE),
        p(
            "vendorid",
            &Ty::Struct(&[inline(&FEATURE_STATE), v("vendorid", &S)]),
        ),
        p("frequencies", &FEATURE_STATE),
        p("reenlightenment", &FEATURE_STATE),
        p(
            "tlbflush",
            &Ty::Struct(&[
                inline(&FEATURE_STATE),
                p("direct", &FEATURE_STATE),
                p("extended", &FEATURE_STATE),
            ]),
        ),
        p("ipi", &FEATURE_STATE),
        p("evmcs", &FEATURE_STATE),
    ]);
    pub(super) const FEATURES: Ty = Ty::Struct(&[
        v("acpi", &FEATURE_STATE),
        p(
            "apic",
            &Ty::Struct(&[inline(&FEATURE_STATE), v("endOfInterrupt", &B)]),
        ),
        p("hypervPassthrough", &FEATURE_STATE),
        p("hyperv", &HYPERV),
        p("smm", &FEATURE_STATE),
        p("kvm", &Ty::Struct(&[v("hidden", &B)])),
        p("pvspinlock", &FEATURE_STATE),
    ]);

    const WATCHDOG_ACTION: Ty = Ty::Struct(&[v("action", &S)]);
    pub(super) const WATCHDOG: Ty = Ty::Struct(&[
        v("name", &S),
        inline(&Ty::Struct(&[
            p("i6300esb", &WATCHDOG_ACTION),
            p("diag288", &WATCHDOG_ACTION),
        ])),
    ]);

    /// What [`go_value`] prepares a value for.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Mode {
        /// Copying into the VMI: scalars as written.
        Copy,
        /// Comparison: integers in one numeric form.
        Compare,
    }

    /// The value as Go decodes it into `ty` and encodes it back: unknown fields dropped, zero
    /// non-pointer fields dropped, pointer fields kept even when empty. A value of the wrong
    /// JSON type is kept as it is.
    fn go_value(value: &Value, ty: &Ty, mode: Mode) -> Value {
        match (ty, value) {
            (Ty::Struct(fields), Value::Object(map)) => {
                let mut out = Map::new();
                for (key, field_value) in map {
                    let Some(field) = find_field(fields, key) else {
                        continue;
                    };
                    if field_value.is_null() {
                        continue;
                    }
                    let normalized = go_value(field_value, field.ty, mode);
                    if !field.pointer && crate::model::path::is_zero(Some(&normalized)) {
                        continue;
                    }
                    out.insert(key.clone(), normalized);
                }
                Value::Object(out)
            }
            (Ty::List(item), Value::Array(items)) => {
                Value::Array(items.iter().map(|i| go_value(i, item, mode)).collect())
            }
            (Ty::Map(item), Value::Object(map)) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.clone(), go_value(v, item, mode)))
                    .collect(),
            ),
            (Ty::Int, Value::Number(n)) if mode == Mode::Compare => {
                match n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15) {
                    #[allow(clippy::cast_possible_truncation)]
                    Some(f) => Value::from(f as i64),
                    None => value.clone(),
                }
            }
            (_, v) => v.clone(),
        }
    }

    /// The value as Go's `%v` prints the decoded struct, nested pointers shown as `<ptr>` (Go
    /// prints their address) and nil ones as `<nil>`.
    pub(super) fn go_format(value: Option<&Value>, ty: &Ty) -> String {
        let value = value.filter(|v| !v.is_null());
        match ty {
            Ty::Struct(fields) => {
                if let Some(other) = value.filter(|v| !v.is_object()) {
                    return other.to_string();
                }
                let parts: Vec<String> = fields
                    .iter()
                    .map(|f| {
                        if f.name.is_empty() {
                            return go_format(value, f.ty);
                        }
                        let fv = value.and_then(|v| v.field(f.name)).filter(|v| !v.is_null());
                        match (f.pointer, fv) {
                            (true, Some(_)) => "<ptr>".to_string(),
                            (true, None) => "<nil>".to_string(),
                            (false, fv) => go_format(fv, f.ty),
                        }
                    })
                    .collect();
                format!("{{{}}}", parts.join(" "))
            }
            Ty::Str => match value {
                Some(Value::String(s)) => s.clone(),
                Some(other) => other.to_string(),
                None => String::new(),
            },
            Ty::Int | Ty::Qty => value.map_or_else(|| "0".to_string(), ToString::to_string),
            Ty::Bool => value.map_or_else(|| "false".to_string(), ToString::to_string),
            Ty::List(item) => match value {
                Some(Value::Array(items)) => {
                    let parts: Vec<String> =
                        items.iter().map(|i| go_format(Some(i), item)).collect();
                    format!("[{}]", parts.join(" "))
                }
                Some(other) => other.to_string(),
                None => "[]".to_string(),
            },
            Ty::Map(item) => match value {
                Some(Value::Object(map)) => {
                    let mut keys: Vec<&String> = map.keys().collect();
                    keys.sort();
                    let parts: Vec<String> = keys
                        .into_iter()
                        .map(|k| format!("{k}:{}", go_format(map.field(k), item)))
                        .collect();
                    format!("map[{}]", parts.join(" "))
                }
                Some(other) => other.to_string(),
                None => "map[]".to_string(),
            },
        }
    }

    /// The value a preset part takes in the VMI when KubeVirt copies it.
    pub(super) fn go_copy(value: &Value, ty: &Ty) -> Value {
        go_value(value, ty, Mode::Copy)
    }

    /// `equality.Semantic.DeepEqual` on the decoded Go values.
    pub(super) fn semantic_eq(a: &Value, b: &Value, ty: &Ty) -> bool {
        typed_eq(
            &go_value(a, ty, Mode::Compare),
            &go_value(b, ty, Mode::Compare),
            ty,
        )
    }

    /// Equality of two normalised values, quantities compared by value.
    fn typed_eq(a: &Value, b: &Value, ty: &Ty) -> bool {
        match (ty, a, b) {
            (Ty::Qty, a, b) => super::quantity::value_eq(a, b),
            (Ty::Struct(fields), Value::Object(ma), Value::Object(mb)) => {
                ma.len() == mb.len()
                    && ma.iter().all(|(k, va)| {
                        mb.field(k).is_some_and(|vb| match find_field(fields, k) {
                            Some(f) => typed_eq(va, vb, f.ty),
                            None => va == vb,
                        })
                    })
            }
            (Ty::Map(item), Value::Object(ma), Value::Object(mb)) => {
                ma.len() == mb.len()
                    && ma
                        .iter()
                        .all(|(k, va)| mb.field(k).is_some_and(|vb| typed_eq(va, vb, item)))
            }
            (Ty::List(item), Value::Array(la), Value::Array(lb)) => {
                la.len() == lb.len() && la.iter().zip(lb).all(|(x, y)| typed_eq(x, y, item))
            }
            _ => a == b,
        }
    }
}

/// Kubernetes label selectors (`metav1.LabelSelectorAsSelector` and `labels.Requirement`).
pub mod selector {
    use foldhash::{HashMap, HashMapExt, HashSet};

    use serde_json::Value;

    use crate::kubevirt::go_text::{go_json, go_quote};
    use crate::model::names::{label_value_errors, qualified_name_errors};
    use crate::model::path::Fields;

    /// A selector operator.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Op {
        /// `matchLabels` entry: the label has exactly this value.
        Equals,
        /// The label is one of the values.
        In,
        /// The label is absent or none of the values.
        NotIn,
        /// The label is present.
        Exists,
        /// The label is absent.
        DoesNotExist,
    }

    /// One requirement of a selector.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Requirement {
        /// The label key.
        pub key: String,
        /// The operator.
        pub op: Op,
        /// The values.
        pub values: Vec<String>,
        /// The values again, hashed, when there are too many to compare one by one.
        value_set: Option<HashSet<String>>,
    }

    /// Above this many values a requirement looks a value up in a hash set: comparing a few
    /// short strings costs less than hashing one.
    const SCAN: usize = 12;

    impl Requirement {
        fn has_value(&self, value: &str) -> bool {
            match &self.value_set {
                Some(set) => set.contains(value),
                None => self.values.iter().any(|v| v == value),
            }
        }
    }

    /// The labels of an object, looked up by key. Where a key is listed twice, the first
    /// value counts.
    #[derive(Clone, Debug, Default)]
    pub struct Labels<'a> {
        by_key: HashMap<&'a str, &'a str>,
    }

    impl<'a> Labels<'a> {
        /// The lookup of `labels`, as key and value pairs.
        pub fn new(labels: &'a [(String, String)]) -> Self {
            let mut by_key = HashMap::with_capacity(labels.len());
            for (k, v) in labels {
                by_key.entry(k.as_str()).or_insert(v.as_str());
            }
            Labels { by_key }
        }

        /// The value of label `key`.
        pub fn get(&self, key: &str) -> Option<&'a str> {
            self.by_key.get(key).copied()
        }
    }

    /// A parsed selector: every requirement must hold (none = matches everything).
    #[derive(Clone, Debug, Default, PartialEq, Eq)]
    pub struct Selector {
        /// The requirements.
        pub requirements: Vec<Requirement>,
    }

    impl Selector {
        /// Whether the labels satisfy every requirement.
        pub fn matches(&self, labels: &[(String, String)]) -> bool {
            self.matches_labels(&Labels::new(labels))
        }

        /// Whether the labels satisfy every requirement, the labels already looked up by key.
        pub fn matches_labels(&self, labels: &Labels<'_>) -> bool {
            self.requirements.iter().all(|r| {
                let value = labels.get(&r.key);
                match r.op {
                    Op::Equals | Op::In => value.is_some_and(|v| r.has_value(v)),
                    Op::NotIn => value.is_none_or(|v| !r.has_value(v)),
                    Op::Exists => value.is_some(),
                    Op::DoesNotExist => value.is_none(),
                }
            })
        }
    }

    /// Parse a `metav1.LabelSelector` (absent or null = empty = everything). The error is
    /// Kubernetes' message for the first invalid requirement.
    pub fn parse(selector: Option<&Value>) -> Result<Selector, String> {
        let mut out = Selector::default();
        let Some(selector) = selector.filter(|s| !s.is_null()) else {
            return Ok(out);
        };
        let Some(map) = selector.as_object() else {
            return Err(format!(
                "selector: Invalid value: {}: must be a label selector",
                go_json(selector)
            ));
        };
        match map.field("matchLabels") {
            None | Some(Value::Null) => {}
            Some(Value::Object(labels)) => {
                for (key, value) in labels {
                    // Go reads `null` into a string as "".
                    let Some(value) = value.as_str().or(value.is_null().then_some("")) else {
                        return Err(format!(
                            "matchLabels[{key}]: Invalid value: {}: must be a string",
                            go_json(value)
                        ));
                    };
                    out.requirements
                        .push(requirement(key, Op::Equals, vec![value.to_string()])?);
                }
            }
            Some(other) => {
                return Err(format!(
                    "matchLabels: Invalid value: {}: must be a map of strings",
                    go_json(other)
                ));
            }
        }
        match map.field("matchExpressions") {
            None | Some(Value::Null) => {}
            Some(Value::Array(exprs)) => {
                for expr in exprs {
                    let key = expr.field("key").and_then(Value::as_str).unwrap_or("");
                    let op = match expr.field("operator").and_then(Value::as_str).unwrap_or("") {
                        "In" => Op::In,
                        "NotIn" => Op::NotIn,
                        "Exists" => Op::Exists,
                        "DoesNotExist" => Op::DoesNotExist,
                        other => {
                            return Err(format!(
                                "{} is not a valid label selector operator",
                                go_quote(other)
                            ));
                        }
                    };
                    let values = match expr.field("values") {
                        None | Some(Value::Null) => Vec::new(),
                        Some(Value::Array(vs)) => {
                            let mut values = Vec::new();
                            for v in vs {
                                let Some(s) = v.as_str().or(v.is_null().then_some("")) else {
                                    return Err(format!(
                                        "values: Invalid value: {}: must be strings",
                                        go_json(v)
                                    ));
                                };
                                values.push(s.to_string());
                            }
                            values
                        }
                        Some(other) => {
                            return Err(format!(
                                "values: Invalid value: {}: must be a list of strings",
                                go_json(other)
                            ));
                        }
                    };
                    out.requirements.push(requirement(key, op, values)?);
                }
            }
            Some(other) => {
                return Err(format!(
                    "matchExpressions: Invalid value: {}: must be a list",
                    go_json(other)
                ));
            }
        }
        Ok(out)
    }

    /// The values of a requirement as a field error prints them: Go builds the list by
    /// appending to a nil one, so no values is `null`.
    fn values_json(values: &[String]) -> String {
        if values.is_empty() {
            "null".to_string()
        } else {
            go_json(&Value::from(values.to_vec()))
        }
    }

    /// `labels.NewRequirement`: validate the key, the number of values and each value.
    fn requirement(key: &str, op: Op, values: Vec<String>) -> Result<Requirement, String> {
        let mut errors = Vec::new();
        let key_errors = qualified_name_errors(key);
        if !key_errors.is_empty() {
            errors.push(format!(
                "key: Invalid value: {}: {}",
                go_quote(key),
                key_errors.join("; ")
            ));
        }
        match op {
            Op::In | Op::NotIn if values.is_empty() => errors.push(format!(
                "values: Invalid value: {}: for 'in', 'notin' operators, values set can't be empty",
                values_json(&values)
            )),
            Op::Equals if values.len() != 1 => errors.push(format!(
                "values: Invalid value: {}: exact-match compatibility requires one single value",
                values_json(&values)
            )),
            Op::Exists | Op::DoesNotExist if !values.is_empty() => errors.push(format!(
                "values: Invalid value: {}: values set must be empty for exists and does not exist",
                values_json(&values)
            )),
            _ => {}
        }
        for (i, value) in values.iter().enumerate() {
            let value_errors = label_value_errors(value);
            if !value_errors.is_empty() {
                errors.push(format!(
                    "values[{i}][{key}]: Invalid value: {}: {}",
                    go_quote(value),
                    value_errors.join("; ")
                ));
            }
        }
        match errors.len() {
            0 => Ok(Requirement {
                key: key.to_string(),
                op,
                value_set: (values.len() > SCAN).then(|| values.iter().cloned().collect()),
                values,
            }),
            1 => Err(errors.remove(0)),
            _ => Err(format!("[{}]", errors.join(", "))),
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use serde_json::json;

        fn labels(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                .collect()
        }

        #[test]
        fn operators_match_like_kubernetes() {
            let sel = parse(Some(&json!({
                "matchLabels": {"app": "web"},
                "matchExpressions": [
                    {"key": "tier", "operator": "NotIn", "values": ["db"]},
                    {"key": "os", "operator": "Exists"},
                    {"key": "gpu", "operator": "DoesNotExist"},
                    {"key": "zone", "operator": "In", "values": ["a", "b"]}
                ]
            })))
            .unwrap();
            let ok = labels(&[("app", "web"), ("os", "x"), ("zone", "b")]);
            assert!(sel.matches(&ok));
            let mut bad = ok.clone();
            bad.push(("tier".into(), "db".into()));
            assert!(!sel.matches(&bad));
            assert!(!sel.matches(&labels(&[("app", "web"), ("os", "x")])));
            assert!(parse(None).unwrap().matches(&[]));
            assert!(parse(Some(&json!({}))).unwrap().matches(&[]));
        }

        #[test]
        fn many_values_match_as_few_do() {
            // More values than are compared one by one: the empty value and a value listed
            // twice count as they do in a short list.
            let mut values: Vec<String> = (0..40).map(|i| format!("v{i}")).collect();
            values.push(String::new());
            values.push("v7".to_string());
            let sel = |op: &str| {
                parse(Some(&json!({"matchExpressions": [
                    {"key": "app", "operator": op, "values": values}]})))
                .unwrap()
            };
            let (is_in, not_in) = (sel("In"), sel("NotIn"));
            for value in ["v0", "v7", "v39", ""] {
                let l = labels(&[("app", value)]);
                assert!(is_in.matches(&l), "{value}");
                assert!(!not_in.matches(&l), "{value}");
            }
            for value in ["v40", "V7", "v", " "] {
                let l = labels(&[("app", value)]);
                assert!(!is_in.matches(&l), "{value}");
                assert!(not_in.matches(&l), "{value}");
            }
            // Without the label, In fails and NotIn holds.
            assert!(!is_in.matches(&labels(&[("other", "v0")])));
            assert!(not_in.matches(&labels(&[("other", "v0")])));
        }

        #[test]
        fn a_label_listed_twice_counts_with_its_first_value() {
            let sel = parse(Some(&json!({"matchLabels": {"app": "web"}}))).unwrap();
            assert!(sel.matches(&labels(&[("app", "web"), ("app", "db")])));
            assert!(!sel.matches(&labels(&[("app", "db"), ("app", "web")])));
            let lookup = labels(&[("tier", "a"), ("app", "web")]);
            let lookup = Labels::new(&lookup);
            assert!(sel.matches_labels(&lookup));
            assert_eq!(lookup.get("tier"), Some("a"));
            assert_eq!(lookup.get("zone"), None);
        }

        #[test]
        fn a_null_label_value_is_the_empty_string() {
            let empty = labels(&[("app", "")]);
            let sel = parse(Some(&json!({"matchLabels": {"app": null}}))).unwrap();
            assert!(sel.matches(&empty));
            assert!(!sel.matches(&labels(&[("app", "web")])));
            let sel = parse(Some(&json!({"matchExpressions": [
                {"key": "app", "operator": "In", "values": [null, "web"]}]})))
            .unwrap();
            assert!(sel.matches(&empty));
            assert!(parse(Some(&json!({"matchLabels": {"app": 1}}))).is_err());
        }

        #[test]
        fn invalid_selectors_are_refused() {
            let e = parse(Some(&json!({"matchExpressions": [
                {"key": "team", "operator": "In", "values": []}]})))
            .unwrap_err();
            assert_eq!(
                e,
                "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"
            );
            let e = parse(Some(&json!({"matchExpressions": [
                {"key": "app", "operator": "Exists", "values": ["web"]}]})))
            .unwrap_err();
            assert_eq!(
                e,
                "values: Invalid value: [\"web\"]: values set must be empty for exists and does not exist"
            );
            assert!(parse(Some(&json!({"matchLabels": {"bad key": "v"}}))).is_err());
            assert!(parse(Some(&json!({"matchLabels": {"k": "bad value!"}}))).is_err());
            assert!(parse(Some(&json!({"matchLabels": {"Example.com/k": "v"}}))).is_err());
            assert!(parse(Some(&json!({"matchLabels": {"example.com/k": ""}}))).is_ok());
            assert!(
                parse(Some(
                    &json!({"matchExpressions": [{"key": "k", "operator": "Gt"}]})
                ))
                .unwrap_err()
                .contains("\"Gt\" is not a valid label selector operator")
            );
        }

        #[test]
        fn bad_values_are_written_as_go_writes_them() {
            // A string with `%q`: control characters as Go escapes them.
            let e = parse(Some(&json!({"matchExpressions": [
                {"key": "k", "operator": "Bad\u{1}\u{7}"}]})))
            .unwrap_err();
            assert_eq!(e, "\"Bad\\x01\\a\" is not a valid label selector operator");
            let e = parse(Some(&json!({"matchLabels": {"k\u{a0}": "v"}}))).unwrap_err();
            assert!(e.starts_with("key: Invalid value: \"k\\u00a0\": "), "{e}");
            let e = parse(Some(&json!({"matchLabels": {"k": "a\tb"}}))).unwrap_err();
            assert!(
                e.starts_with("values[0][k]: Invalid value: \"a\\tb\": "),
                "{e}"
            );
            // A list with `encoding/json`, which escapes `<`, `>` and `&`.
            let e = parse(Some(&json!({"matchExpressions": [
                {"key": "k", "operator": "Exists", "values": ["<a&b>"]}]})))
            .unwrap_err();
            assert!(e.starts_with("[values: Invalid value: [\"\\u003ca\\u0026b\\u003e\"]: values set must be empty"), "{e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::origin::Origin;
    use serde_json::json;

    fn preset(name: &str, namespace: Option<&str>, selector: Value, domain: Value) -> Object {
        let mut metadata = json!({"name": name});
        if let Some(ns) = namespace {
            metadata["namespace"] = json!(ns);
        }
        Object::new(
            json!({
                "apiVersion": "kubevirt.io/v1",
                "kind": "VirtualMachineInstancePreset",
                "metadata": metadata,
                "spec": {"selector": selector, "domain": domain}
            }),
            Origin::default(),
        )
    }

    fn vmi(labels: Value, domain: Value) -> Value {
        json!({
            "apiVersion": "kubevirt.io/v1",
            "kind": "VirtualMachineInstance",
            "metadata": {"name": "v", "labels": labels},
            "spec": {"domain": domain}
        })
    }

    fn web() -> Value {
        json!({"matchLabels": {"app": "web"}})
    }

    #[test]
    fn copies_missing_parts_and_annotates() {
        let p = preset(
            "p",
            None,
            web(),
            json!({
                "cpu": {"cores": 2, "model": "", "dedicatedCPUPlacement": true},
                "ioThreadsPolicy": "shared",
                "memory": {"guest": "1Gi"}
            }),
        );
        let mut v = vmi(json!({"app": "web"}), json!({}));
        let out = apply_presets(&mut v, "default", &[&p]).unwrap();
        assert_eq!(out.applied, ["p"]);
        assert_eq!(out.warnings, [DEPRECATION_WARNING]);
        // Unknown fields (wrong case) and zero values are dropped as Go's decoder and encoder
        // do; `memory` is not one of the merged parts.
        assert_eq!(
            v["spec"]["domain"],
            json!({"cpu": {"cores": 2}, "ioThreadsPolicy": "shared"})
        );
        assert_eq!(
            v["metadata"]["annotations"],
            json!({"virtualmachinepreset.kubevirt.io/p": "kubevirt.io/v1"})
        );
    }

    /// The annotation key's name part is the preset's name: 63 characters fit, 64 do not, and
    /// a preset that applies nothing leaves no annotation to refuse.
    #[test]
    fn a_preset_name_too_long_for_its_annotation_refuses_the_vmi() {
        let fits = preset(&"a".repeat(63), None, web(), json!({"cpu": {"cores": 2}}));
        let long = preset(
            &"b".repeat(64),
            None,
            web(),
            json!({"ioThreadsPolicy": "shared"}),
        );
        let idle = preset(&"c".repeat(200), None, web(), json!({}));
        let mut v = vmi(json!({"app": "web"}), json!({}));
        let out = apply_presets(&mut v, "default", &[&fits, &long, &idle]).unwrap();
        assert_eq!(out.applied.len(), 2);
        let refused = out.refused_annotations();
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert!(
            refused[0].starts_with(&format!(
                "metadata.annotations: Invalid value: \"virtualmachinepreset.kubevirt.io/{}\": \
                 name part must be no more than 63 characters",
                "b".repeat(64)
            )),
            "{}",
            refused[0]
        );
        let mut v = vmi(json!({"app": "web"}), json!({}));
        let out = apply_presets(&mut v, "default", &[&fits]).unwrap();
        assert!(out.refused_annotations().is_empty());
    }

    #[test]
    fn requests_equal_by_value_are_applied_but_reported_as_skipped() {
        let p = preset(
            "mem",
            None,
            web(),
            json!({"resources": {"requests": {"memory": "1024Mi"}}}),
        );
        let mut v = vmi(
            json!({"app": "web"}),
            json!({"resources": {"requests": {"memory": "1Gi"}}}),
        );
        let out = apply_presets(&mut v, "default", &[&p]).unwrap();
        assert_eq!(out.applied, ["mem"]);
        assert_eq!(out.skipped.len(), 1);
        assert_eq!(out.skipped[0].field, "spec.resources.requests[memory]");
        // Where the VMI and the preset hold it.
        assert_eq!(out.skipped[0].domain_path(), "resources.requests.memory");
        assert_eq!(
            v["spec"]["domain"]["resources"],
            json!({"requests": {"memory": "1Gi"}})
        );
    }

    #[test]
    fn clock_offset_and_timer_merge_separately() {
        let p = preset(
            "clock",
            None,
            web(),
            json!({"clock": {"utc": {}, "timer": {"rtc": {"tickPolicy": "catchup"}}}}),
        );
        let mut v = vmi(json!({"app": "web"}), json!({"clock": {"timezone": "UTC"}}));
        let out = apply_presets(&mut v, "default", &[&p]).unwrap();
        // The offset conflicts, the timer is still copied, so the preset counts as applied.
        assert_eq!(out.applied, ["clock"]);
        assert_eq!(out.skipped[0].field, "spec.clock.clockoffset");
        // The values shown are the offsets, which Go's clock holds inline.
        assert_eq!(
            out.skipped[0].values,
            (Some(json!({"utc": {}})), Some(json!({"timezone": "UTC"})))
        );
        assert_eq!(
            v["spec"]["domain"]["clock"],
            json!({"timezone": "UTC", "timer": {"rtc": {"tickPolicy": "catchup"}}})
        );
    }

    #[test]
    fn features_acpi_empty_equals_absent() {
        let p = preset(
            "f",
            None,
            web(),
            json!({"features": {"acpi": {}, "apic": {}}}),
        );
        let mut v = vmi(json!({"app": "web"}), json!({"features": {"apic": {}}}));
        let out = apply_presets(&mut v, "default", &[&p]).unwrap();
        assert_eq!(out.applied, ["f"]);
        assert!(out.skipped.is_empty());
    }

    #[test]
    fn conflicting_presets_refuse_the_vmi() {
        let a = preset("a", None, web(), json!({"cpu": {"cores": 1}}));
        let b = preset("b", None, json!({}), json!({"cpu": {"cores": 2}}));
        let mut v = vmi(json!({"app": "web"}), json!({}));
        let before = v.clone();
        let refusal = apply_presets(&mut v, "default", &[&b, &a]).unwrap_err();
        assert_eq!(
            refusal.message,
            "VirtualMachinePresets cannot be applied due to conflicts: presets 'b' and 'a' \
             conflict: spec.cpu: &{2 0 0 0  [] false <nil> false <nil>} != \
             &{1 0 0 0  [] false <nil> false <nil>}"
        );
        assert_eq!(
            refusal.conflicts,
            [(
                "b".to_string(),
                "a".to_string(),
                vec!["spec.cpu".to_string()]
            )]
        );
        assert_eq!(v, before);
    }

    #[test]
    fn invalid_selector_in_namespace_refuses_and_is_named() {
        let ok = preset("ok", Some("ns"), web(), json!({"cpu": {"cores": 1}}));
        let bad = preset(
            "bad",
            Some("ns"),
            json!({"matchExpressions": [{"key": "x", "operator": "In"}]}),
            json!({}),
        );
        let elsewhere = preset(
            "elsewhere",
            None,
            json!({"matchExpressions": [{"key": "x", "operator": "In"}]}),
            json!({}),
        );
        let mut v = vmi(json!({"app": "db"}), json!({}));
        let refusal = apply_presets(&mut v, "ns", &[&ok, &bad, &elsewhere]).unwrap_err();
        assert_eq!(refusal.invalid_selectors, ["bad"]);
        assert!(refusal.to_string().contains("'bad'"));
        // In the default namespace only `elsewhere` counts.
        let mut v = vmi(json!({"app": "web"}), json!({}));
        let refusal = apply_presets(&mut v, "default", &[&ok, &bad, &elsewhere]).unwrap_err();
        assert_eq!(refusal.invalid_selectors, ["elsewhere"]);
        // An excluded VMI is not refused.
        v["metadata"]["annotations"] = json!({EXCLUDE_ANNOTATION: "true"});
        let out = apply_presets(&mut v, "ns", &[&ok, &bad, &elsewhere]).unwrap();
        assert!(out.excluded);
    }

    /// KubeVirt names the error of the first invalid selector it meets, in Go's map order:
    /// when the errors differ, every one of them is given with its preset.
    #[test]
    fn every_error_of_several_invalid_selectors_is_given() {
        let in_without_values = json!({"matchExpressions": [{"key": "x", "operator": "In"}]});
        let a = preset("a", None, in_without_values.clone(), json!({}));
        let b = preset("b", None, in_without_values, json!({}));
        let exists_with_values = json!({"matchExpressions": [
            {"key": "x", "operator": "Exists", "values": ["v"]}]});
        let c = preset("c", None, exists_with_values, json!({}));
        let in_error =
            "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty";
        let exists_error = "values: Invalid value: [\"v\"]: values set must be empty for exists and does not exist";

        let mut v = vmi(json!({"app": "web"}), json!({}));
        let same = apply_presets(&mut v, "default", &[&b, &a]).unwrap_err();
        assert_eq!(same.message, in_error);
        assert_eq!(same.selector_errors, [in_error, in_error]);
        assert_eq!(
            same.to_string(),
            format!("{in_error} (invalid label selector in VirtualMachineInstancePreset 'a', 'b')")
        );

        let differ = apply_presets(&mut v, "default", &[&c, &b, &a]).unwrap_err();
        assert_eq!(differ.invalid_selectors, ["a", "b", "c"]);
        assert_eq!(
            differ.to_string(),
            format!(
                "{in_error} (invalid label selector in VirtualMachineInstancePreset 'a', 'b', \
                 'c'; KubeVirt meets them in no fixed order and names the error of the first, \
                 which may also be 'c': {exists_error})"
            )
        );
    }

    /// The index finds, for any labels, the presets a pass over every preset of the namespace
    /// finds, in the same order.
    #[test]
    fn the_index_matches_as_a_pass_over_every_preset() {
        let many: Vec<String> = (0..20)
            .map(|i| format!("v{i}"))
            .chain(["db".to_string()])
            .collect();
        let all = [
            preset("a", None, web(), json!({})),
            preset(
                "b",
                None,
                json!({"matchExpressions": [
                {"key": "app", "operator": "In", "values": ["web", "db", "web"]}]}),
                json!({}),
            ),
            // Filed under one requirement, refused by the other.
            preset(
                "c",
                None,
                json!({"matchLabels": {"app": "web", "tier": "db"}}),
                json!({}),
            ),
            preset(
                "d",
                None,
                json!({"matchExpressions": [
                {"key": "tier", "operator": "Exists"}]}),
                json!({}),
            ),
            preset("e", None, json!({}), json!({})),
            preset(
                "f",
                None,
                json!({"matchExpressions": [
                {"key": "app", "operator": "NotIn", "values": ["web"]}]}),
                json!({}),
            ),
            preset(
                "g",
                None,
                json!({"matchLabels": {"tier": ""}, "matchExpressions": [
                {"key": "app", "operator": "In", "values": [""]}]}),
                json!({}),
            ),
            preset(
                "h",
                None,
                json!({"matchExpressions": [
                {"key": "tier", "operator": "In", "values": many}]}),
                json!({}),
            ),
            // A namesake comes after the first, as in the input.
            preset("a", None, json!({"matchLabels": {"tier": "db"}}), json!({})),
            preset("a", Some("other"), json!({}), json!({})),
            preset(
                "i",
                None,
                json!({"matchExpressions": [
                {"key": "gpu", "operator": "DoesNotExist"}]}),
                json!({}),
            ),
        ];
        let refs: Vec<&Object> = all.iter().collect();
        let index = PresetIndex::new(&refs);
        let mut in_default: Vec<&Object> = all
            .iter()
            .filter(|p| p.effective_namespace() == "default")
            .collect();
        in_default.sort_by(|a, b| a.name().cmp(b.name()));
        let values = [None, Some("web"), Some("db"), Some(""), Some("v7")];
        for app in values {
            for tier in values {
                for gpu in [None, Some("x")] {
                    let labels: Vec<(String, String)> =
                        [("app", app), ("tier", tier), ("gpu", gpu)]
                            .into_iter()
                            .filter_map(|(k, v)| Some((k.to_string(), v?.to_string())))
                            .collect();
                    let expected: Vec<&Object> = in_default
                        .iter()
                        .copied()
                        .filter(|p| {
                            selector::parse(path::get(&p.value, &["spec", "selector"]))
                                .unwrap()
                                .matches(&labels)
                        })
                        .collect();
                    let found: Vec<&Object> = index.namespaces["default"]
                        .matching(&labels)
                        .into_iter()
                        .map(|i| index.namespaces["default"].presets[i])
                        .collect();
                    assert!(
                        found.len() == expected.len()
                            && found
                                .iter()
                                .zip(&expected)
                                .all(|(a, b)| std::ptr::eq(*a, *b)),
                        "{labels:?}"
                    );
                }
            }
        }
    }

    /// Fields and details two presets conflict on, as [`merge_conflicts`] gives them.
    type Found = Vec<(String, String)>;

    /// KubeVirt's pairwise check as written: every preset against every one before it.
    fn every_pair(presets: &[&Object]) -> Vec<(String, String, Found)> {
        let mut out = Vec::new();
        for (i, preset) in presets.iter().enumerate() {
            for visited in &presets[..i] {
                let found = merge_conflicts(preset_domain(preset), preset_domain(visited));
                if !found.is_empty() {
                    out.push((preset.name().to_string(), visited.name().to_string(), found));
                }
            }
        }
        out
    }

    /// Presets whose merged parts are written alike share a conflict class; the conflicts
    /// found class by class are those of every pair, in the same order and words.
    #[test]
    fn conflicts_by_class_are_those_of_every_pair() {
        let domains = [
            json!({"cpu": {"cores": 1}}),
            json!({"cpu": {"cores": 2}, "memory": {"guest": "1Gi"}}),
            // The same merged parts as the one before: the same class.
            json!({"cpu": {"cores": 2}}),
            // Another class, equal to the first in Go.
            json!({"cpu": {"cores": 1, "model": ""}}),
            json!({"firmware": {"serial": "s"}}),
            json!({"cpu": {"cores": 2}, "firmware": {"serial": "t"},
                   "resources": {"requests": {"memory": "1Gi"}}}),
            json!({"resources": {"requests": {"memory": "1024Mi"}}}),
            json!({"cpu": {"cores": 1}}),
        ];
        let all: Vec<Object> = domains
            .iter()
            .enumerate()
            .map(|(i, d)| preset(&format!("p{i}"), None, json!({}), d.clone()))
            .collect();
        let refs: Vec<&Object> = all.iter().collect();
        let index = PresetIndex::new(&refs);
        let ns = &index.namespaces["default"];
        assert_eq!(ns.classes, [0, 1, 1, 2, 3, 4, 5, 0]);
        let mut sets: Vec<Vec<usize>> = vec![(0..all.len()).collect()];
        sets.extend((0..all.len()).map(|skip| (0..all.len()).filter(|&i| i != skip).collect()));
        sets.extend([vec![1, 2], vec![0, 3, 7], vec![0, 4, 6], vec![5, 6]]);
        for set in sets {
            let presets: Vec<(&Object, usize)> = set
                .iter()
                .map(|&i| (ns.presets[i], ns.classes[i]))
                .collect();
            let objects: Vec<&Object> = presets.iter().map(|(p, _)| *p).collect();
            let expected = every_pair(&objects);
            match check_preset_conflicts(&presets, &ns.class_domains) {
                Ok(()) => assert!(expected.is_empty(), "{set:?}"),
                Err(refusal) => {
                    let details: Vec<String> = expected
                        .iter()
                        .map(|(a, b, found)| {
                            let found: Vec<String> =
                                found.iter().map(|(f, d)| format!("{f}: {d}")).collect();
                            format!("presets '{a}' and '{b}' conflict: {}", aggregate(&found))
                        })
                        .collect();
                    assert_eq!(
                        refusal.message,
                        format!(
                            "VirtualMachinePresets cannot be applied due to conflicts: {}",
                            aggregate(&details)
                        ),
                        "{set:?}"
                    );
                    let fields: Vec<(String, String, Vec<String>)> = expected
                        .into_iter()
                        .map(|(a, b, found)| (a, b, found.into_iter().map(|(f, _)| f).collect()))
                        .collect();
                    assert_eq!(refusal.conflicts, fields, "{set:?}");
                }
            }
        }
    }

    /// The check is remembered per set of matching presets: a second VMI matching the same
    /// presets is refused alike, and one matching other presets is checked anew.
    #[test]
    fn every_vmi_matching_conflicting_presets_is_refused() {
        let one = preset("one", None, web(), json!({"cpu": {"cores": 1}}));
        let two = preset(
            "two",
            None,
            json!({"matchLabels": {"tier": "a"}}),
            json!({"cpu": {"cores": 2}}),
        );
        let any = preset("any", None, json!({}), json!({"ioThreadsPolicy": "shared"}));
        let mut index = PresetIndex::new(&[&one, &two, &any]);
        let both = json!({"app": "web", "tier": "a"});
        let mut first = vmi(both.clone(), json!({}));
        let refused = index.apply(&mut first, "default").unwrap_err();
        assert_eq!(
            refused.conflicts,
            [(
                "two".to_string(),
                "one".to_string(),
                vec!["spec.cpu".to_string()]
            )]
        );
        let mut second = vmi(both, json!({"memory": {"guest": "1Gi"}}));
        let before = second.clone();
        assert_eq!(index.apply(&mut second, "default").unwrap_err(), refused);
        assert_eq!(second, before);
        let mut third = vmi(json!({"app": "web"}), json!({}));
        assert_eq!(
            index.apply(&mut third, "default").unwrap().applied,
            ["any", "one"]
        );
        let mut fourth = vmi(json!({"app": "web", "tier": "a"}), json!({}));
        assert_eq!(index.apply(&mut fourth, "default").unwrap_err(), refused);
    }

    /// [`merge_conflicts`] reads only the parts [`CONFLICT_PARTS`] lists: the domain cut down to
    /// them conflicts as the whole one does.
    #[test]
    fn conflicts_read_only_the_conflict_parts() {
        let whole = json!({
            "cpu": {"cores": 2}, "memory": {"guest": "1Gi"}, "machine": {"type": "q35"},
            "resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "2Gi"}},
            "firmware": {"serial": "s"}, "clock": {"utc": {}, "timer": {"hpet": {}}},
            "features": {"smm": {}}, "devices": {"watchdog": {"name": "w"}, "disks": []},
            "ioThreadsPolicy": "auto", "chassis": {"asset": "a"}
        });
        let mut cut = json!({});
        for at in CONFLICT_PARTS {
            if let Some(v) = path::get(&whole, at) {
                path::set(&mut cut, at, v.clone());
            }
        }
        let other = json!({
            "cpu": {"cores": 1}, "memory": {"guest": "2Gi"}, "machine": {"type": "pc"},
            "resources": {"requests": {"memory": "2Gi"}, "limits": {"memory": "3Gi"}},
            "firmware": {"serial": "t"}, "clock": {"timezone": "x", "timer": {"kvm": {}}},
            "features": {"smm": {"enabled": false}}, "devices": {"watchdog": {"name": "v"}},
            "ioThreadsPolicy": "shared", "chassis": {"asset": "b"}
        });
        assert_eq!(merge_conflicts(&whole, &other).len(), 8);
        assert_eq!(
            merge_conflicts(&whole, &other),
            merge_conflicts(&cut, &other)
        );
        assert_eq!(
            merge_conflicts(&other, &whole),
            merge_conflicts(&other, &cut)
        );
        assert_eq!(conflict_key(&whole), conflict_key(&cut));
    }

    #[test]
    fn exclusion_needs_the_exact_value() {
        let p = preset("p", None, json!({}), json!({"cpu": {"cores": 1}}));
        let mut v = vmi(json!({}), json!({}));
        v["metadata"]["annotations"] = json!({EXCLUDE_ANNOTATION: "true"});
        let out = apply_presets(&mut v, "default", &[&p]).unwrap();
        assert!(out.excluded && out.applied.is_empty());
        v["metadata"]["annotations"] = json!({EXCLUDE_ANNOTATION: "True"});
        let out = apply_presets(&mut v, "default", &[&p]).unwrap();
        assert_eq!(out.applied, ["p"]);
    }

    /// A preset selecting `app: web` in the default namespace.
    fn web_preset(name: &str, domain: Value) -> Object {
        preset(name, None, web(), domain)
    }

    fn order_check(presets: &[&Object], v: &mut Value) -> Option<OrderDependence> {
        PresetIndex::new(presets)
            .checking_order()
            .apply(v, "default")
            .unwrap()
            .order_dependence
    }

    #[test]
    fn requests_of_two_presets_depend_on_the_order() {
        // Different keys do not conflict, but the first preset's requests are copied whole
        // and the second's are then skipped: which one the VMI gets depends on the order.
        let a = web_preset("a", json!({"resources": {"requests": {"memory": "1Gi"}}}));
        let b = web_preset("b", json!({"resources": {"requests": {"cpu": "1"}}}));
        let c = web_preset("c", json!({"ioThreadsPolicy": "shared"}));
        let mut v = vmi(json!({"app": "web"}), json!({}));
        let order = order_check(&[&c, &b, &a], &mut v).expect("order-dependent");
        assert_eq!(order.presets, ["a", "b"]);
        assert_eq!(
            order.fields,
            ["spec.domain.resources.requests", "metadata.annotations"]
        );
        // The VMI printed is the name order's.
        assert_eq!(
            v["spec"]["domain"]["resources"]["requests"],
            json!({"memory": "1Gi"})
        );
        assert!(order.to_string().contains("'a' and 'b' in no fixed order"));
        // Without the check nothing is looked for.
        let mut v = vmi(json!({"app": "web"}), json!({}));
        let out = apply_presets(&mut v, "default", &[&a, &b]).unwrap();
        assert_eq!(out.order_dependence, None);
    }

    #[test]
    fn presets_that_agree_or_meet_a_set_field_do_not_depend_on_the_order() {
        // Equal parts, written differently but equal as quantities.
        let a = web_preset(
            "a",
            json!({"resources": {"requests": {"memory": "1024Mi"}}, "cpu": {"cores": 2}}),
        );
        let b = web_preset(
            "b",
            json!({"resources": {"requests": {"memory": "1048576Ki"}}, "cpu": {"cores": 2}}),
        );
        let mut v = vmi(json!({"app": "web"}), json!({}));
        assert_eq!(order_check(&[&a, &b], &mut v), None);
        // The VMI's own requests: neither preset's are copied, in any order.
        let c = web_preset("c", json!({"resources": {"requests": {"cpu": "1"}}}));
        let d = web_preset("d", json!({"resources": {"requests": {"memory": "1Gi"}}}));
        let mut v = vmi(
            json!({"app": "web"}),
            json!({"resources": {"requests": {"memory": "2Gi"}}}),
        );
        assert_eq!(order_check(&[&c, &d], &mut v), None);
    }

    #[test]
    fn a_clock_timer_changes_which_presets_are_annotated() {
        // Merged as a, b both are applied; as b, a the VMI's clock no longer equals a's.
        let a = web_preset("a", json!({"clock": {"utc": {}}}));
        let b = web_preset("b", json!({"clock": {"utc": {}, "timer": {"rtc": {}}}}));
        let mut v = vmi(json!({"app": "web"}), json!({}));
        let order = order_check(&[&a, &b], &mut v).expect("order-dependent");
        assert_eq!(order.presets, ["a", "b"]);
        assert_eq!(order.fields, ["metadata.annotations"]);
    }

    #[test]
    fn presets_alike_are_reordered_as_one() {
        // Four presets with the same parts act as one: the order among them changes nothing,
        // and with two others that request different resources, all six depend on it.
        let mut all: Vec<Object> = (0..4)
            .map(|i| web_preset(&format!("p{i}"), json!({"ioThreadsPolicy": "shared"})))
            .collect();
        assert_eq!(
            order_check(
                &all.iter().collect::<Vec<_>>(),
                &mut vmi(json!({"app": "web"}), json!({}))
            ),
            None
        );
        all.push(web_preset(
            "q",
            json!({"resources": {"requests": {"cpu": "1"}}}),
        ));
        all.push(web_preset(
            "r",
            json!({"resources": {"requests": {"memory": "1Gi"}}}),
        ));
        let refs: Vec<&Object> = all.iter().collect();
        let mut v = vmi(json!({"app": "web"}), json!({}));
        let order = order_check(&refs, &mut v).expect("order-dependent");
        assert_eq!(order.presets, ["q", "r"]);
    }

    #[test]
    fn many_presets_are_tried_in_rotations() {
        // Seven presets requesting seven resources: beyond every order, the reversed order and
        // the rotations find that each comes first in one of them.
        let all: Vec<Object> = (0..7)
            .map(|i| {
                web_preset(
                    &format!("p{i}"),
                    json!({"resources": {"requests": {format!("example.com/r{i}"): "1"}}}),
                )
            })
            .collect();
        let refs: Vec<&Object> = all.iter().collect();
        let mut v = vmi(json!({"app": "web"}), json!({}));
        let order = order_check(&refs, &mut v).expect("order-dependent");
        assert_eq!(order.presets.len(), 7);
        assert!(
            order
                .to_string()
                .contains("'p0', 'p1', 'p2', 'p3', 'p4' and 2 more in no fixed order")
        );
    }

    #[test]
    fn only_presets_that_share_a_part_are_reordered() {
        let a = web_preset(
            "a",
            json!({"cpu": {"cores": 2}, "resources": {"requests": {}}}),
        );
        let b = web_preset("b", json!({"resources": {"requests": {"cpu": "1"}}}));
        let c = web_preset("c", json!({"resources": {"requests": {"memory": "1Gi"}}}));
        let d = web_preset("d", json!({"ioThreadsPolicy": "shared"}));
        // An empty `requests` is not merged: `a` shares nothing.
        assert!(sharing_parts(&[&a, &b, &d]).is_empty());
        let all = [&a, &b, &c, &d];
        let shared: Vec<&str> = sharing_parts(&all).iter().map(|&i| all[i].name()).collect();
        assert_eq!(shared, ["b", "c"]);
    }

    #[test]
    fn other_orders_give_the_vmis_of_the_other_orders_in_full() {
        let a = web_preset("a", json!({"resources": {"requests": {"memory": "1Gi"}}}));
        let b = web_preset("b", json!({"resources": {"requests": {"cpu": "1"}}}));
        let c = web_preset("c", json!({"ioThreadsPolicy": "shared"}));
        let v = vmi(json!({"app": "web"}), json!({}));
        let mut name_order = v.clone();
        let (_, others) = PresetIndex::new(&[&c, &b, &a])
            .apply_in_other_orders(&mut name_order, "default")
            .unwrap();
        assert_eq!(
            name_order["spec"]["domain"],
            json!({"resources": {"requests": {"memory": "1Gi"}}, "ioThreadsPolicy": "shared"}),
            "the name order's VMI"
        );
        assert_eq!(others.presets, ["a", "b"]);
        let [other] = others.vmis.as_slice() else {
            panic!("one other VMI: {others:?}");
        };
        // b first: its requests, and c's part, which no order changes.
        assert_eq!(
            other["spec"]["domain"],
            json!({"resources": {"requests": {"cpu": "1"}}, "ioThreadsPolicy": "shared"})
        );
        let annotated: Vec<&String> = other["metadata"]["annotations"]
            .as_object()
            .map(|a| a.keys().collect())
            .unwrap_or_default();
        assert_eq!(
            annotated,
            [
                "virtualmachinepreset.kubevirt.io/b",
                "virtualmachinepreset.kubevirt.io/c"
            ]
        );
        // Nothing for presets whose order changes nothing; a refused VMI is left unchanged.
        assert_eq!(
            PresetIndex::new(&[&a, &c])
                .apply_in_other_orders(&mut v.clone(), "default")
                .unwrap()
                .1,
            OtherOrders::default()
        );
        let d = web_preset("d", json!({"ioThreadsPolicy": "auto"}));
        let mut refused = v.clone();
        assert!(
            PresetIndex::new(&[&a, &b, &c, &d])
                .apply_in_other_orders(&mut refused, "default")
                .is_err()
        );
        assert_eq!(refused, v);
    }

    #[test]
    fn other_orders_are_those_of_every_order_of_every_preset() {
        // Merging the presets in each of their orders, one by one, gives the name order's VMI
        // and exactly the VMIs `apply_in_other_orders` gives: presets alike counted as one and
        // those that share no part merged last change nothing.
        let domains = [
            json!({"resources": {"requests": {"memory": "1Gi"}}}),
            json!({"resources": {"requests": {"memory": "1Gi"}}}),
            json!({"resources": {"requests": {"cpu": "1"}}, "clock": {"utc": {}}}),
            json!({"clock": {"utc": {}, "timer": {"rtc": {}}}}),
            json!({"ioThreadsPolicy": "shared", "cpu": {"cores": 2}}),
            json!({"cpu": {"cores": 2}, "firmware": {"serial": "x"}}),
        ];
        let mut several = 0;
        for mask in 1u32..(1 << domains.len()) {
            let presets: Vec<Object> = domains
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(i, d)| web_preset(&format!("p{i}"), d.clone()))
                .collect();
            let refs: Vec<&Object> = presets.iter().collect();
            let v = vmi(json!({"app": "web"}), json!({}));
            let mut every: Vec<Value> = Vec::new();
            let mut order: Vec<usize> = (0..refs.len()).collect();
            loop {
                let mut merged = v.clone();
                let ordered: Vec<&Object> = order.iter().map(|&i| refs[i]).collect();
                merge_presets(&mut merged, &ordered, &mut PresetOutcome::default());
                if !every.contains(&merged) {
                    every.push(merged);
                }
                if !next_permutation(&mut order) {
                    break;
                }
            }
            let mut name_order = v.clone();
            PresetIndex::new(&refs)
                .apply(&mut name_order, "default")
                .unwrap();
            let mut both = v.clone();
            let (_, others) = PresetIndex::new(&refs)
                .apply_in_other_orders(&mut both, "default")
                .unwrap();
            assert_eq!(both, name_order, "presets {mask:b}");
            let mut found = others.vmis;
            found.insert(0, name_order);
            assert_eq!(found.len(), every.len(), "presets {mask:b}");
            assert!(found.iter().all(|f| every.contains(f)), "presets {mask:b}");
            several += usize::from(every.len() > 1);
        }
        assert!(
            several > 10,
            "{several} sets of presets depend on the order"
        );
    }

    #[test]
    fn next_permutation_visits_every_order_once() {
        let mut order = vec![0, 1, 2, 3];
        let mut seen = vec![order.clone()];
        while next_permutation(&mut order) {
            seen.push(order.clone());
        }
        assert_eq!(seen.len(), 24);
        seen.sort();
        seen.dedup();
        assert_eq!(seen.len(), 24);
    }
}

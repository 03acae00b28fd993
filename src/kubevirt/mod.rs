//! KubeVirt's semantics, reproduced offline. One module per upstream concept; each opens with
//! the upstream file it mirrors.

pub mod admission;
pub mod conflict;
pub mod defaults;
pub mod expand;
pub mod go_shape;
pub mod go_text;
pub mod infer;
pub mod instancetype_apply;
pub mod migrate;
pub mod pool;
pub mod preference_apply;
pub mod presets;
pub mod profile;
pub mod replica_set;
pub mod revision;
pub mod typecheck;
pub mod vmi;
pub mod vmi_defaults;

/// Whether Go's `strings.ToLower(s)` equals `lower`, an all-lower-case ASCII word: how KubeVirt
/// compares a matcher's `kind` with its resource names. Go lowers each character by its simple
/// mapping, so `İ` (U+0130) becomes a plain `i` (Rust's full mapping adds a combining dot) and
/// the Kelvin sign `K` a plain `k`; no other character lowers to ASCII.
pub fn go_lower_is(s: &str, lower: &str) -> bool {
    maps_to(s, lower, |c| match c {
        '\u{130}' => 'i',
        '\u{212a}' => 'k',
        c => c.to_ascii_lowercase(),
    })
}

/// Whether Go's `encoding/json` matches the key `s` to a field named `lower`, an all-lower-case
/// ASCII word: equal under Unicode simple case folding, in which the Kelvin sign folds to `k`
/// and the long `ſ` (U+017F) to `s`, and no other character to an ASCII letter.
pub fn go_equal_fold(s: &str, lower: &str) -> bool {
    maps_to(s, lower, |c| match c {
        '\u{212a}' => 'k',
        '\u{17f}' => 's',
        c => c.to_ascii_lowercase(),
    })
}

/// Whether `s`, each character mapped by `to_lower`, is `lower`.
fn maps_to(s: &str, lower: &str, to_lower: impl Fn(char) -> char) -> bool {
    if s.is_ascii() {
        return s.eq_ignore_ascii_case(lower);
    }
    let mut want = lower.chars();
    s.chars().all(|c| want.next() == Some(to_lower(c))) && want.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::go_lower_is;

    #[test]
    fn go_lower_is_lowers_each_character_by_its_simple_mapping() {
        assert!(go_lower_is("VirtualMachine", "virtualmachine"));
        assert!(go_lower_is("", ""));
        assert!(!go_lower_is("VirtualMachines", "virtualmachine"));
        assert!(!go_lower_is("VirtualMachine", "virtualmachines"));
        assert!(go_lower_is("\u{130}", "i"));
        assert!(go_lower_is("\u{212a}IND", "kind"));
        // Anything else that is not ASCII stays unequal to an ASCII word.
        assert!(!go_lower_is("\u{131}", "i"));
        assert!(!go_lower_is("i\u{307}", "i"));
        assert!(!go_lower_is("\u{ff36}", "v"));
    }
}

//! Shell patterns as Go's `path/filepath.Match` reads them, which KubeVirt uses for the machine
//! types a cluster allows (`q35*`, `pc-q35*`): `*` is any run of characters but `/`, `?` one
//! character but `/`, `[a-z]` and `[^a-z]` a class, `\` takes the next character as it is. A
//! malformed pattern matches nothing, as KubeVirt ignores `Match`'s error.

/// One step of a pattern.
#[derive(Debug, PartialEq)]
enum Token {
    Char(char),
    Any,
    Star,
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

/// The steps of `pattern`, or `None` when it is malformed.
fn tokens(pattern: &str) -> Option<Vec<Token>> {
    let mut out = Vec::new();
    let mut chars = pattern.chars().peekable();
    // A class bound: a character, `\` and the next one, never `-` or `]` as they are.
    let bound = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| match chars.next()? {
        '-' | ']' => None,
        '\\' => chars.next(),
        c => Some(c),
    };
    while let Some(c) = chars.next() {
        out.push(match c {
            '*' => Token::Star,
            '?' => Token::Any,
            '\\' => Token::Char(chars.next()?),
            '[' => {
                let negated = chars.next_if_eq(&'^').is_some();
                let mut ranges = Vec::new();
                loop {
                    if !ranges.is_empty() && chars.next_if_eq(&']').is_some() {
                        break;
                    }
                    let lo = bound(&mut chars)?;
                    let hi = if chars.next_if_eq(&'-').is_some() {
                        bound(&mut chars)?
                    } else {
                        lo
                    };
                    ranges.push((lo, hi));
                }
                Token::Class { negated, ranges }
            }
            c => Token::Char(c),
        });
    }
    Some(out)
}

/// Whether `name` matches `pattern` in whole.
pub fn matches(pattern: &str, name: &str) -> bool {
    // The usual patterns, a name or a prefix and `*`, need no steps.
    let plain = |p: &str| !p.contains(['*', '?', '[', '\\']);
    if plain(pattern) {
        return pattern == name;
    }
    if let Some(prefix) = pattern.strip_suffix('*')
        && plain(prefix)
    {
        return name
            .strip_prefix(prefix)
            .is_some_and(|rest| !rest.contains('/'));
    }
    let Some(tokens) = tokens(pattern) else {
        return false;
    };
    let name: Vec<char> = name.chars().collect();
    Positions::new(&name).matches(&tokens)
}

/// The positions `0..=name.len()` of a name as bits, for matching its pattern a token at a
/// time over all positions at once: bit `j` stands for "the tokens so far match the first `j`
/// characters". A token costs one pass over `name.len() / 64` words, so a hostile pattern and
/// name of many thousand characters each take milliseconds, not minutes.
struct Positions<'n> {
    name: &'n [char],
    words: usize,
    /// Bit `j` set where character `j - 1` is not `/`: where `?`, a class or `*` may step.
    not_slash: Vec<u64>,
}

impl<'n> Positions<'n> {
    fn new(name: &'n [char]) -> Self {
        let words = name.len() / 64 + 1;
        let mut positions = Positions {
            name,
            words,
            not_slash: Vec::new(),
        };
        positions.not_slash = positions.mask(|c| c != '/');
        positions
    }

    /// The bits of the positions `j` whose character `j - 1` satisfies `f`.
    fn mask(&self, f: impl Fn(char) -> bool) -> Vec<u64> {
        let mut bits = vec![0u64; self.words];
        for (i, &c) in self.name.iter().enumerate() {
            if f(c) {
                let j = i + 1;
                bits[j / 64] |= 1 << (j % 64);
            }
        }
        bits
    }

    fn matches(&self, tokens: &[Token]) -> bool {
        let mut can = vec![0u64; self.words];
        can[0] = 1;
        let mut next = vec![0u64; self.words];
        let mut chars: std::collections::HashMap<char, Vec<u64>> = Default::default();
        let mut after_star = false;
        for token in tokens {
            match token {
                // `**` matches what `*` does.
                Token::Star if after_star => continue,
                Token::Star => self.star(&can, &mut next),
                Token::Char(c) => {
                    let mask = chars.entry(*c).or_insert_with(|| self.mask(|x| x == *c));
                    step(&can, mask, &mut next);
                }
                Token::Any => step(&can, &self.not_slash, &mut next),
                Token::Class { negated, ranges } => {
                    let mask = self.mask(|c| {
                        c != '/'
                            && ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated
                    });
                    step(&can, &mask, &mut next);
                }
            }
            std::mem::swap(&mut can, &mut next);
            if can.iter().all(|w| *w == 0) {
                return false;
            }
            after_star = matches!(token, Token::Star);
        }
        let n = self.name.len();
        can[n / 64] >> (n % 64) & 1 == 1
    }

    /// `*`: from each position reached, every later one up to the next `/`.
    fn star(&self, can: &[u64], next: &mut [u64]) {
        let mut carry = false;
        for ((out, &seeds), &open) in next.iter_mut().zip(can).zip(&self.not_slash) {
            let mut reached = seeds | (u64::from(carry) & open);
            if open == u64::MAX {
                if reached != 0 {
                    reached = u64::MAX << reached.trailing_zeros();
                }
            } else {
                for bit in 1..64 {
                    if reached >> (bit - 1) & open >> bit & 1 == 1 {
                        reached |= 1 << bit;
                    }
                }
            }
            *out = reached;
            carry = reached >> 63 == 1;
        }
    }
}

/// One token that takes one character: each position reached moves one on, where `mask` lets it.
fn step(can: &[u64], mask: &[u64], next: &mut [u64]) {
    let mut carry = 0;
    for ((out, &reached), &allowed) in next.iter_mut().zip(can).zip(mask) {
        *out = (reached << 1 | carry) & allowed;
        carry = reached >> 63;
    }
}

#[cfg(test)]
mod tests {
    use super::{Token, matches, tokens};
    use proptest::prelude::*;

    /// Go's semantics, position by position: the tokens so far match the first `j` characters.
    fn reference(pattern: &str, name: &str) -> bool {
        let Some(tokens) = tokens(pattern) else {
            return false;
        };
        let name: Vec<char> = name.chars().collect();
        let mut can = vec![false; name.len() + 1];
        can[0] = true;
        for token in &tokens {
            let mut next = vec![false; name.len() + 1];
            for j in 0..=name.len() {
                next[j] = match token {
                    Token::Star => can[j] || (j > 0 && next[j - 1] && name[j - 1] != '/'),
                    _ if j == 0 => false,
                    Token::Char(c) => can[j - 1] && name[j - 1] == *c,
                    Token::Any => can[j - 1] && name[j - 1] != '/',
                    Token::Class { negated, ranges } => {
                        let c = name[j - 1];
                        let inside = ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c));
                        can[j - 1] && c != '/' && inside != *negated
                    }
                };
            }
            can = next;
        }
        can[name.len()]
    }

    proptest! {
        /// Over names long enough to span several words of positions, with `/` in them.
        #[test]
        fn matching_a_word_at_a_time_answers_as_position_by_position(
            pattern in "[ab/*?\\\\\\[\\]^-]{0,12}",
            name in "[ab/]{0,150}",
        ) {
            prop_assert_eq!(matches(&pattern, &name), reference(&pattern, &name));
        }

        #[test]
        fn a_star_reaches_across_words_up_to_a_slash(
            head in 0usize..140, tail in 0usize..140, slash in proptest::option::of(0usize..280),
        ) {
            let mut name: Vec<char> = "a".repeat(head + tail + 1).chars().collect();
            if let Some(at) = slash.filter(|at| *at < name.len()) {
                name[at] = '/';
            }
            let name: String = name.into_iter().collect();
            for pattern in ["a*a", "*", "?*?", "*a?", "a*/*a", "[a]*[^b]"] {
                prop_assert_eq!(matches(pattern, &name), reference(pattern, &name), "{}", pattern);
            }
        }
    }

    /// A hostile pattern and name of many thousand characters (`?` for each character, or a
    /// `*` and a long tail) are answered as the short ones are.
    #[test]
    fn long_patterns_and_names() {
        let name = "a".repeat(20_000);
        assert!(matches(&"?".repeat(20_000), &name));
        assert!(!matches(&format!("{}x0", "?".repeat(20_000)), &name));
        assert!(matches(&format!("*{}", "a?".repeat(5_000)), &name));
        assert!(!matches(&format!("*{}b", "a?".repeat(5_000)), &name));
    }

    #[test]
    fn machine_type_patterns_match_as_go_matches_them() {
        for (pattern, name) in [
            ("q35*", "q35"),
            ("q35*", "q35-rhel9.6.0"),
            ("pc-q35*", "pc-q35-rhel9.6.0"),
            ("virt-?.0", "virt-9.0"),
            ("pc-i440fx-[0-9]*", "pc-i440fx-2.12"),
            ("[^a]x", "bx"),
            ("a\\*", "a*"),
            ("virt", "virt"),
            ("q3?*", "q35"),
        ] {
            assert!(matches(pattern, name), "{pattern} {name}");
        }
        for (pattern, name) in [
            ("q35*", "pc-q35-rhel9.6.0"),
            ("q35*", "q35/x"),
            ("s390-ccw-virtio*", "q35"),
            ("[^a]x", "ax"),
            ("a\\*", "ab"),
            ("[", "["),
            ("[]a]", "a"),
            ("[a-]", "a"),
            ("x\\", "x"),
        ] {
            assert!(!matches(pattern, name), "{pattern} {name}");
        }
    }
}

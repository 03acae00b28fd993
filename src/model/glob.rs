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
    // `can[j]`: the tokens so far match the first `j` characters of the name.
    let mut can = vec![false; name.len() + 1];
    can[0] = true;
    for token in &tokens {
        let mut next = vec![false; name.len() + 1];
        for j in 0..=name.len() {
            match token {
                Token::Star => {
                    next[j] = can[j] || (j > 0 && next[j - 1] && name[j - 1] != '/');
                }
                _ if j == 0 => {}
                Token::Char(c) => next[j] = can[j - 1] && name[j - 1] == *c,
                Token::Any => next[j] = can[j - 1] && name[j - 1] != '/',
                Token::Class { negated, ranges } => {
                    let c = name[j - 1];
                    let inside = ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c));
                    next[j] = can[j - 1] && c != '/' && inside != *negated;
                }
            }
        }
        can = next;
    }
    can[name.len()]
}

#[cfg(test)]
mod tests {
    use super::matches;

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

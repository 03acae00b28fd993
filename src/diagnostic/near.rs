//! Names near a name that was not found, for "did you mean ...?" hints.
//!
//! A hint compares one name with every name of its kind and scope, so a run with thousands of
//! distinct misspelt names makes millions of comparisons. Each is bounded: [`Near`] first
//! counts, for an ASCII name of up to 256 bytes, the bytes of the other name that cannot be
//! matched without an edit, which rules out most names in a few steps a byte; then it counts
//! the edits of a name of up to 64 bytes a machine word at a time (one step per character of
//! the other name), and those of any other name in a band of the table no wider than the
//! edits allowed, giving up once every path is past them.

/// The longest name worth a hint: no Kubernetes name is longer than 253 characters, and a
/// longer one is not a typo of a real one.
const LONGEST: usize = 253;

/// Levenshtein distance between two strings, counted in characters: the whole table, kept as
/// the plain definition that [`Near::within`] must agree with.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// The longest ASCII name whose byte positions [`Near`] keeps, in words of 64 bits.
const WORDS: usize = 4;

/// For each ASCII byte, the bit set of the positions where a name has it.
type Positions = [[u64; WORDS]; 128];

/// A name made ready to be compared with many others.
pub struct Near<'n> {
    name: &'n str,
    /// Its characters.
    chars: Vec<char>,
    /// For an ASCII name of 1 to 256 bytes, the positions of each byte in it.
    positions: Option<Box<Positions>>,
}

impl<'n> Near<'n> {
    pub fn new(name: &'n str) -> Self {
        let positions = (name.is_ascii() && (1..=64 * WORDS).contains(&name.len())).then(|| {
            let mut table = Box::new([[0u64; WORDS]; 128]);
            for (i, b) in name.bytes().enumerate() {
                table[usize::from(b)][i / 64] |= 1 << (i % 64);
            }
            table
        });
        Near {
            name,
            chars: name.chars().collect(),
            positions,
        }
    }

    /// The number of characters of the name.
    pub fn char_count(&self) -> usize {
        self.chars.len()
    }

    /// The edit distance between the name and `other`, if it is at most `limit`.
    pub fn within(&self, other: &str, limit: usize) -> Option<usize> {
        if let (Some(positions), true) = (&self.positions, other.is_ascii()) {
            let (name, other) = (self.name.as_bytes(), other.as_bytes());
            if name.len().abs_diff(other.len()) > limit
                || foreign(positions, name.len(), other, limit) > limit
            {
                return None;
            }
            if name.len() > 64 {
                return banded_distance(name, other, limit);
            }
            let distance = word_distance(positions, name.len(), other);
            return (distance <= limit).then_some(distance);
        }
        let other: Vec<char> = other.chars().collect();
        banded_distance(&self.chars, &other, limit)
    }
}

/// How many bytes of `text` (stopping past `limit`) the pattern of `len` (1 to 256) ASCII
/// bytes, given by the positions of each byte in it, does not have within `limit` places of
/// the same position: a bound from below on the edits between the two when there are at most
/// `limit`. With that many edits, a byte of `text` that costs none is the same as a byte of
/// the pattern at most `limit` places away (no more insertions and deletions come before it),
/// and every other byte costs an edit of its own. It takes a few steps a byte, with no step
/// waiting for the one before, so it rules most names out before the exact count.
fn foreign(positions: &Positions, len: usize, text: &[u8], limit: usize) -> usize {
    // Whether the pattern has `byte` in the window of positions j - limit ..= j + limit.
    let nearby = |j: usize, byte: u8| {
        let low = j.saturating_sub(limit);
        let high = (j + limit).min(len - 1);
        if low > high {
            return false;
        }
        let at = &positions[usize::from(byte & 0x7f)];
        let (from, to) = (u64::MAX << (low % 64), u64::MAX >> (63 - high % 64));
        if low / 64 == high / 64 {
            at[low / 64] & from & to != 0
        } else {
            at[low / 64] & from != 0
                || at[low / 64 + 1..high / 64].iter().any(|&word| word != 0)
                || at[high / 64] & to != 0
        }
    };
    let mut count = 0;
    if len <= 64 {
        // The same in one word, as most names are.
        for (j, &byte) in text.iter().enumerate() {
            let low = j.saturating_sub(limit);
            let high = (j + limit).min(len - 1);
            let window = if low > high {
                0
            } else {
                (u64::MAX >> (63 - high)) & (u64::MAX << low)
            };
            count += usize::from(positions[usize::from(byte & 0x7f)][0] & window == 0);
            if count > limit {
                break;
            }
        }
        return count;
    }
    for (j, &byte) in text.iter().enumerate() {
        count += usize::from(!nearby(j, byte));
        if count > limit {
            break;
        }
    }
    count
}

/// The edit distance between a pattern of `len` (1 to 64) ASCII bytes, given by the positions
/// of each byte in it, and `text`: the columns of the table are computed one machine word at a
/// time, as the differences between neighbouring cells (Myers' bit-vector method, in the form
/// Hyyrö gives for the distance between two whole strings).
fn word_distance(positions: &Positions, len: usize, text: &[u8]) -> usize {
    let last = 1u64 << (len - 1);
    // Vertical differences, +1 and -1, down the current column: +1 everywhere in column 0.
    let mut plus = u64::MAX >> (64 - len);
    let mut minus = 0u64;
    let mut distance = len;
    for &byte in text {
        let equal = positions[usize::from(byte & 0x7f)][0];
        let crossed = equal | minus;
        let diagonal = ((equal & plus).wrapping_add(plus) ^ plus) | equal;
        let mut up = minus | !(diagonal | plus);
        let mut down = plus & diagonal;
        if up & last != 0 {
            distance += 1;
        } else if down & last != 0 {
            distance -= 1;
        }
        // Row 0 grows by one at every column.
        up = (up << 1) | 1;
        down <<= 1;
        plus = down | !(crossed | up);
        minus = up & crossed;
    }
    distance
}

/// The edit distance between `a` and `b` if it is at most `limit`: only the cells of the table
/// at most `limit` off its diagonal are computed, and the count stops once a whole row is past
/// `limit`.
fn banded_distance<T: PartialEq>(a: &[T], b: &[T], limit: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    const FAR: usize = usize::MAX / 2;
    let mut previous = vec![FAR; b.len() + 1];
    let mut current = vec![FAR; b.len() + 1];
    for (j, cell) in previous.iter_mut().enumerate().take(limit + 1) {
        *cell = j;
    }
    for (i, ca) in a.iter().enumerate() {
        let row = i + 1;
        let low = row.saturating_sub(limit);
        let high = (row + limit).min(b.len());
        let mut best = FAR;
        for j in low..=high {
            let cell = if j == 0 {
                row
            } else {
                let substitution = previous[j - 1] + usize::from(*ca != b[j - 1]);
                let insertion = if j > low { current[j - 1] + 1 } else { FAR };
                substitution.min(previous[j] + 1).min(insertion)
            };
            current[j] = cell;
            best = best.min(cell);
        }
        if best > limit {
            return None;
        }
        std::mem::swap(&mut previous, &mut current);
    }
    let distance = previous[b.len()];
    (distance <= limit).then_some(distance)
}

/// The candidate nearest to `name`, to suggest for a name that was not found: the same but
/// for case, or a few edits away (one for every four characters of the longer name, at most
/// three: none in names shorter than four). Ties go to the alphabetically first, so the answer
/// does not depend on the order of `candidates`.
pub fn nearest_name<'c>(
    name: &str,
    candidates: impl IntoIterator<Item = &'c str>,
) -> Option<&'c str> {
    // No Kubernetes name or field is longer than 253 characters, and counting the edits
    // between two hostile megabyte-long names would take hours.
    if name.len() > 4 * LONGEST {
        return None;
    }
    let near = Near::new(name);
    let n = near.char_count();
    if n > LONGEST {
        return None;
    }
    // The candidates whose length allows them to be near, each with the edits it is allowed.
    let mut near_enough = Vec::new();
    for candidate in candidates {
        if candidate == name || candidate.len() > 4 * LONGEST {
            continue;
        }
        let m = candidate.chars().count();
        let allowed = (n.max(m) / 4).min(3);
        if n.abs_diff(m) <= allowed && m <= LONGEST {
            near_enough.push((candidate, allowed));
        }
    }
    // Most typos are one edit: look for those first, where the quick bound rules out nearly
    // every other name, and for more edits only when no name is one edit away.
    for most in [1, 3] {
        let mut best: Option<(usize, &'c str)> = None;
        for &(candidate, allowed) in &near_enough {
            // A candidate further than the best so far cannot win.
            let limit = best.map_or(allowed, |(d, _)| allowed.min(d)).min(most);
            let distance = if candidate.eq_ignore_ascii_case(name) {
                0
            } else if limit >= 1 && swapped(name, candidate) {
                // Two letters typed the wrong way round (`memroy`): one slip of the hand,
                // though two edits.
                1
            } else {
                match near.within(candidate, limit) {
                    Some(distance) => distance,
                    None => continue,
                }
            };
            if best.is_none_or(|found| (distance, candidate) < found) {
                best = Some((distance, candidate));
            }
        }
        if best.is_some() {
            return best.map(|(_, candidate)| candidate);
        }
    }
    None
}

/// Whether `b` is `a` with two neighbouring characters swapped.
fn swapped(a: &str, b: &str) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let Some(first) = a.iter().zip(&b).position(|(x, y)| x != y) else {
        return false;
    };
    first + 1 < a.len()
        && a.len() == b.len()
        && a[first] == b[first + 1]
        && a[first + 1] == b[first]
        && a[first + 2..] == b[first + 2..]
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Two neighbouring letters swapped count as one slip, so a name with them is suggested.
    #[test]
    fn swapped_letters_are_one_slip() {
        assert!(swapped("memroy", "memory"));
        assert!(swapped("ab", "ba"));
        assert!(!swapped("memory", "memory"));
        assert!(!swapped("mmeroy", "memory"));
        assert!(!swapped("abc", "cba"));
        assert!(!swapped("memo", "memory"));
        assert_eq!(
            nearest_name("memroy", ["cpu", "memory", "icon"]),
            Some("memory")
        );
        assert_eq!(nearest_name("ipcu", ["cpu"]), None);
    }

    #[test]
    fn edit_distance_counts_characters() {
        assert_eq!(edit_distance("VirtualMachine", "VirtualMachin"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("é", "e"), 1);
    }

    #[test]
    fn the_nearest_name_is_close_and_chosen_the_same_whatever_the_order() {
        let names = ["u1.medium", "u1.large", "u1.small", "fedora", "rhel.9"];
        assert_eq!(nearest_name("u1.medum", names), Some("u1.medium"));
        assert_eq!(nearest_name("U1.Medium", names), Some("u1.medium"));
        assert_eq!(nearest_name("rhel9", names), Some("rhel.9"));
        assert_eq!(nearest_name("windows", names), None);
        // Two edits in a short name are too many to guess from.
        assert_eq!(nearest_name("fdra", names), None);
        // Equally near: the alphabetically first, in any order.
        let mut twins = ["ab.x", "ab.y"];
        assert_eq!(nearest_name("ab.z", twins.iter().copied()), Some("ab.x"));
        twins.reverse();
        assert_eq!(nearest_name("ab.z", twins.iter().copied()), Some("ab.x"));
        // Nearer wins over alphabetically first, in any order.
        let mut pair = ["team1.mediun", "team1.medium"];
        assert_eq!(nearest_name("team1.medim", pair), Some("team1.medium"));
        pair.reverse();
        assert_eq!(nearest_name("team1.medim", pair), Some("team1.medium"));
        // Nor is a one-letter difference in a name of one letter.
        assert_eq!(nearest_name("x", ["a"]), None);
        assert_eq!(nearest_name("cpuu", ["cpu", "memory"]), Some("cpu"));
        // Names longer than any Kubernetes name are not compared.
        let long = "a".repeat(100_000);
        let longer = format!("{long}b");
        assert_eq!(nearest_name(&longer, [long.as_str()]), None);
        let long = "a".repeat(254);
        let longer = format!("{long}b");
        assert_eq!(nearest_name(&longer, [long.as_str()]), None);
        // Up to that, any length and any characters.
        let long = "é".repeat(200);
        let near = format!("{long}e");
        assert_eq!(nearest_name(&near, [long.as_str()]), Some(long.as_str()));
        // The name itself is no suggestion.
        assert_eq!(nearest_name("fedora", names), None);
    }

    /// Short strings over a few letters, some of them not ASCII, so that near and far pairs
    /// are both common.
    fn word() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![Just('a'), Just('b'), Just('c'), Just('é')],
            0..12,
        )
        .prop_map(|chars| chars.into_iter().collect())
    }

    /// Longer ASCII strings, up to past a machine word and past the positions kept.
    fn ascii_word() -> impl Strategy<Value = String> {
        proptest::collection::vec(prop_oneof![Just('a'), Just('b'), Just('.')], 0..300)
            .prop_map(|chars| chars.into_iter().collect())
    }

    /// An ASCII string and the same with a few edits, so that long pairs are near too.
    fn ascii_pair() -> impl Strategy<Value = (String, String)> {
        let edit = (0usize..3, any::<prop::sample::Index>(), "[ab.]");
        (ascii_word(), proptest::collection::vec(edit, 0..5)).prop_map(|(a, edits)| {
            let mut b: Vec<u8> = a.clone().into_bytes();
            for (kind, at, byte) in edits {
                let byte = byte.as_bytes()[0];
                match kind {
                    0 => b.insert(at.index(b.len() + 1), byte),
                    1 if !b.is_empty() => {
                        b.remove(at.index(b.len()));
                    }
                    _ if !b.is_empty() => {
                        let i = at.index(b.len());
                        b[i] = byte;
                    }
                    _ => {}
                }
            }
            (a, String::from_utf8(b).expect("ASCII"))
        })
    }

    proptest! {
        #[test]
        fn near_agrees_with_the_whole_table(a in word(), b in word(), limit in 0usize..5) {
            let d = edit_distance(&a, &b);
            prop_assert_eq!(Near::new(&a).within(&b, limit), (d <= limit).then_some(d));
        }

        #[test]
        fn near_agrees_with_the_whole_table_on_long_ascii(
            a in ascii_word(),
            b in ascii_word(),
            limit in 0usize..300,
        ) {
            let d = edit_distance(&a, &b);
            prop_assert_eq!(Near::new(&a).within(&b, limit), (d <= limit).then_some(d));
        }

        #[test]
        fn near_agrees_with_the_whole_table_on_near_ascii(
            (a, b) in ascii_pair(),
            limit in 0usize..6,
        ) {
            let d = edit_distance(&a, &b);
            prop_assert_eq!(Near::new(&a).within(&b, limit), (d <= limit).then_some(d));
        }
    }
}

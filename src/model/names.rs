//! The shapes Kubernetes gives names: object names (DNS subdomains), namespaces (DNS labels),
//! and the name part of label keys and label values. Each is a yes-or-no check in one pass
//! over the bytes; the callers that explain a refusal say why in their own words (KubeVirt's
//! preset selectors in Kubernetes' own, the lints in shorter ones).
//!
//! The `matches_*` checks are the pattern alone, for callers that report the length apart from
//! the characters, as Kubernetes does; the `is_*` checks add the length limit.

/// The bytes a label key's name or a label value may hold.
static NAME_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || c == b'-' || c == b'_' || c == b'.';
        b += 1;
    }
    table
};

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`: letters, digits, `-`, `_` and `.`, starting and
/// ending with a letter or digit, of any length but not empty.
pub fn matches_name_part(text: &[u8]) -> bool {
    match (text.first(), text.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && text.iter().all(|&b| NAME_BYTES[usize::from(b)])
        }
        _ => false,
    }
}

/// A label key's name or a non-empty label value: [`matches_name_part`] in at most 63 bytes.
pub fn is_name_part(text: &[u8]) -> bool {
    text.len() <= 63 && matches_name_part(text)
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*`: a DNS subdomain (RFC
/// 1123) of any length but not empty.
pub fn matches_dns_subdomain(name: &str) -> bool {
    // The byte before the current one, `.` at the start: a label may not start or end with
    // `-`, nor be empty.
    let mut previous = b'.';
    for &b in name.as_bytes() {
        match b {
            b'a'..=b'z' | b'0'..=b'9' => {}
            b'-' if previous != b'.' => {}
            b'.' if previous != b'.' && previous != b'-' => {}
            _ => return false,
        }
        previous = b;
    }
    previous != b'.' && previous != b'-'
}

/// An object name: [`matches_dns_subdomain`] in at most 253 bytes.
pub fn is_dns_subdomain(name: &str) -> bool {
    name.len() <= 253 && matches_dns_subdomain(name)
}

/// What Kubernetes says of a string that is not a DNS subdomain (`validation.RegexError` for
/// `IsDNS1123Subdomain`).
pub const DNS_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case \
     alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character \
     (e.g. 'example.com', regex used for validation is \
     '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// Kubernetes' `IsDNS1123Subdomain`: what is wrong with `name` as a DNS subdomain, in its
/// words (nothing for a good one).
pub fn dns_subdomain_errors(name: &str) -> Vec<&'static str> {
    let mut errors = Vec::new();
    if name.len() > 253 {
        errors.push("must be no more than 253 characters");
    }
    if !matches_dns_subdomain(name) {
        errors.push(DNS_SUBDOMAIN_MSG);
    }
    errors
}

/// What Kubernetes says of a string that is not a DNS label (`validation.RegexError` for
/// `IsDNS1123Label`).
pub const DNS_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case \
     alphanumeric characters or '-', and must start and end with an alphanumeric character \
     (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/// Kubernetes' `IsDNS1123Label`: what is wrong with `name` as a DNS label, in its words (a
/// good subdomain that is not a label has dots).
pub fn dns_label_errors(name: &str) -> Vec<&'static str> {
    let mut errors = Vec::new();
    if name.len() > 63 {
        errors.push("must be no more than 63 characters");
    }
    if !matches_dns_label(name.as_bytes()) {
        errors.push(if matches_dns_subdomain(name) {
            "must not contain dots"
        } else {
            DNS_LABEL_MSG
        });
    }
    errors
}

/// What Kubernetes says of a label key's name part that does not match.
const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and \
     must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
     '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

/// What Kubernetes says of a label value that does not match.
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric \
     characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. \
     'MyValue',  or 'my_value',  or '12345', regex used for validation is \
     '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// Kubernetes' `IsQualifiedName` (a label key, a topology key): what is wrong with `value`,
/// in its words.
pub fn qualified_name_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let mut parts = value.split('/');
    let (first, second, more) = (parts.next(), parts.next(), parts.next());
    let name = match (first, second, more) {
        (Some(name), None, _) => name,
        (Some(prefix), Some(name), None) => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_string());
            } else {
                for error in dns_subdomain_errors(prefix) {
                    errors.push(format!("prefix part {error}"));
                }
            }
            name
        }
        _ => {
            errors.push(format!(
                "a qualified name {QUALIFIED_NAME_MSG} with an optional DNS subdomain prefix and \
                 '/' (e.g. 'example.com/MyName')"
            ));
            return errors;
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errors.push("name part must be no more than 63 characters".to_string());
    }
    if !matches_name_part(name.as_bytes()) {
        errors.push(format!("name part {QUALIFIED_NAME_MSG}"));
    }
    errors
}

/// Kubernetes' `IsValidLabelValue`: what is wrong with `value`, in its words.
pub fn label_value_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push("must be no more than 63 characters".to_string());
    }
    if !value.is_empty() && !matches_name_part(value.as_bytes()) {
        errors.push(LABEL_VALUE_MSG.to_string());
    }
    errors
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`: a DNS label (RFC 1123) of any length but not empty.
pub fn matches_dns_label(text: &[u8]) -> bool {
    let alnum = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    match (text.first(), text.last()) {
        (Some(first), Some(last)) => {
            alnum(first) && alnum(last) && text.iter().all(|b| alnum(b) || *b == b'-')
        }
        _ => false,
    }
}

/// A namespace: a DNS label (RFC 1123), 1 to 63 lowercase letters, digits and `-`, starting
/// and ending with a letter or digit.
pub fn is_dns_label(text: &[u8]) -> bool {
    text.len() <= 63 && matches_dns_label(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_parts_follow_the_pattern_and_the_length_limit_is_apart() {
        for good in ["a", "A9", "my.name", "my_value", "123-abc"] {
            assert!(is_name_part(good.as_bytes()), "{good}");
        }
        for bad in ["", "-a", "a-", "a b", "a/b", "é", "a\0"] {
            assert!(!matches_name_part(bad.as_bytes()), "{bad:?}");
        }
        let long = "a".repeat(64);
        assert!(matches_name_part(long.as_bytes()));
        assert!(!is_name_part(long.as_bytes()));
    }

    #[test]
    fn subdomains_and_labels() {
        for good in ["a", "a.b", "a-b.c0", "0"] {
            assert!(is_dns_subdomain(good), "{good}");
        }
        for bad in ["", ".", "a.", ".a", "a..b", "-a", "a-", "a-.b", "A", "a_b"] {
            assert!(!matches_dns_subdomain(bad), "{bad:?}");
        }
        assert!(is_dns_subdomain(&"a".repeat(253)));
        assert!(matches_dns_subdomain(&"a".repeat(254)));
        assert!(!is_dns_subdomain(&"a".repeat(254)));
        assert!(is_dns_label(b"team-a"));
        for bad in ["", "a.b", "Team", "-a", "a-"] {
            assert!(!is_dns_label(bad.as_bytes()), "{bad:?}");
        }
        assert!(!is_dns_label("n".repeat(64).as_bytes()));
    }
}

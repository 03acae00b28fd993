//! How Go writes a value into a message: `%q` of a string (`strconv.Quote`) and
//! `encoding/json` of anything else. Kubernetes' field errors (`field.Invalid` and the like)
//! print a string bad value with the first and a list or a map with the second.

use serde_json::Value;

/// Go's `%q` of a string: quoted, with Go's escapes for what is not printable.
pub fn go_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if c < ' ' || c == '\u{7f}' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() || (c.is_whitespace() && c != ' ') || is_format(c) => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Invisible formatting characters Go does not print as they are.
fn is_format(c: char) -> bool {
    matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{feff}')
}

/// Go's `json.Marshal` of a value: compact JSON in which `<`, `>`, `&`, U+2028 and U+2029 are
/// escaped as `\u003c` and so on, as Go does for any string it encodes. None of these can stand
/// outside a string in JSON, so replacing them in the whole text touches only strings.
pub fn go_json(value: &Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_default();
    if !text.contains(['<', '>', '&', '\u{2028}', '\u{2029}']) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 12);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Why client-go's request builder refuses `segment` as a name or a namespace, which it puts
/// in the URL's path (`IsValidPathSegmentName`), as Go's `%v` prints the list of reasons:
/// `[may not be '..']`, `[may not contain '/' may not contain '%']`. `None` when it is fine.
pub fn path_segment_problems(segment: &str) -> Option<String> {
    if segment == "." || segment == ".." {
        return Some(format!("[may not be '{segment}']"));
    }
    let reasons: Vec<String> = ["/", "%"]
        .iter()
        .filter(|bad| segment.contains(*bad))
        .map(|bad| format!("may not contain '{bad}'"))
        .collect();
    (!reasons.is_empty()).then(|| format!("[{}]", reasons.join(" ")))
}

/// The error client-go gives before it sends a GET for `name` in `namespace` (`""` for a
/// cluster-scoped object): the namespace is checked first, then the name.
pub fn refused_get(namespace: &str, name: &str) -> Option<String> {
    if let Some(why) = path_segment_problems(namespace) {
        return Some(format!("invalid namespace {}: {why}", go_quote(namespace)));
    }
    if name.is_empty() {
        return Some("resource name may not be empty".to_string());
    }
    path_segment_problems(name)
        .map(|why| format!("invalid resource name {}: {why}", go_quote(name)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{go_json, go_quote, path_segment_problems, refused_get};

    #[test]
    fn a_name_is_refused_as_client_go_refuses_a_path_segment() {
        assert_eq!(path_segment_problems("u1.medium"), None);
        assert_eq!(path_segment_problems("..."), None);
        assert_eq!(path_segment_problems("").as_deref(), None);
        assert_eq!(
            path_segment_problems("..").as_deref(),
            Some("[may not be '..']")
        );
        assert_eq!(
            path_segment_problems("a%/b").as_deref(),
            Some("[may not contain '/' may not contain '%']")
        );
        assert_eq!(refused_get("", "ok"), None);
        assert_eq!(
            refused_get("ns", "").as_deref(),
            Some("resource name may not be empty")
        );
        assert_eq!(
            refused_get("a/b", "").as_deref(),
            Some("invalid namespace \"a/b\": [may not contain '/']")
        );
        assert_eq!(
            refused_get("ns", "x\ny/").as_deref(),
            Some("invalid resource name \"x\\ny/\": [may not contain '/']")
        );
    }

    #[test]
    fn a_string_is_quoted_with_go_escapes() {
        assert_eq!(
            go_quote("a\"b\\c\n\u{1}\u{7}é\u{a0}\u{200b}"),
            "\"a\\\"b\\\\c\\n\\x01\\aé\\u00a0\\u200b\""
        );
        assert_eq!(go_quote(""), "\"\"");
    }

    #[test]
    fn json_escapes_what_go_escapes_in_strings_and_keys() {
        assert_eq!(go_json(&json!("a<b>&")), "\"a\\u003cb\\u003e\\u0026\"");
        assert_eq!(
            go_json(&json!({"k<": ["x\u{2028}", "y\u{2029}", 1]})),
            "{\"k\\u003c\":[\"x\\u2028\",\"y\\u2029\",1]}"
        );
        assert_eq!(go_json(&json!(["plain", null])), "[\"plain\",null]");
    }
}

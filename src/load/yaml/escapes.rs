//! Escapes that YAML allows and Go's YAML readers refuse.
//!
//! A double-quoted YAML string may spell a character outside the Basic Multilingual Plane as a
//! pair of UTF-16 surrogate escapes (`"\ud83d\ude00"`), as JSON does and as Python's
//! `json.dumps` writes every emoji. The readers of kubectl, kustomize and kpt refuse any escape
//! of a surrogate ("found invalid Unicode character escape code"): they take only `\U0001F600`
//! or the character itself.

use serde_saphyr::granit_parser::{Event, Parser, ScalarStyle};

use super::YamlError;

/// The first escape of a UTF-16 surrogate in a double-quoted scalar of `text`, as an error at
/// its position; `None` when there is none. A document without `\u` or `\U` has none, and is
/// not read again.
pub fn surrogate_escape(text: &str) -> Option<YamlError> {
    if memchr::memmem::find(text.as_bytes(), b"\\u").is_none()
        && memchr::memmem::find(text.as_bytes(), b"\\U").is_none()
    {
        return None;
    }
    for event in Parser::new_from_str(text) {
        let Ok((event, span)) = event else { break };
        let Event::Scalar(_, ScalarStyle::DoubleQuoted, _, _) = event else {
            continue;
        };
        let Some(raw) = span
            .byte_range()
            .and_then(|r| text.get(r.clone()).map(|s| (r, s)))
        else {
            continue;
        };
        let (range, raw) = raw;
        if let Some((at, code, next)) = first_surrogate(raw) {
            let offset = range.start + at;
            let line = text[..offset].matches('\n').count() + 1;
            let column = offset - text[..offset].rfind('\n').map_or(0, |i| i + 1) + 1;
            let written = &raw[at..at + if raw[at..].starts_with("\\U") { 10 } else { 6 }];
            let instead = match next {
                Some(low) if (0xD800..0xDC00).contains(&code) => {
                    let c = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                    format!("`\\U{c:08X}`")
                }
                // The parser lets only a pair through; said in general all the same.
                _ => "a `\\U` escape of the whole code point".to_string(),
            };
            return Some(YamlError {
                message: format!(
                    "the escape `{written}` is half of a UTF-16 surrogate pair, which kubectl, \
                     kustomize and kpt refuse in YAML (\"found invalid Unicode character escape \
                     code\"): write the character itself, or {instead}"
                ),
                line: u32::try_from(line).ok(),
                column: u32::try_from(column).ok(),
            });
        }
    }
    None
}

/// The first `\uXXXX` or `\UXXXXXXXX` escape in `raw` (a double-quoted scalar as written) of a
/// surrogate: its byte offset, its code, and the code of a `\u` escape right after it.
fn first_surrogate(raw: &str) -> Option<(usize, u32, Option<u32>)> {
    let bytes = raw.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            i += 1;
            continue;
        }
        let width = match bytes.get(i + 1) {
            Some(b'u') => 4,
            Some(b'U') => 8,
            // Any other escape is two characters long: `\\` among them, whose second
            // backslash must not start another escape.
            _ => {
                i += 2;
                continue;
            }
        };
        let code = raw
            .get(i + 2..i + 2 + width)
            .and_then(|h| u32::from_str_radix(h, 16).ok());
        if let Some(code) = code.filter(|c| (0xD800..0xE000).contains(c)) {
            let after = i + 2 + width;
            let next = raw
                .get(after..after + 6)
                .and_then(|e| e.strip_prefix("\\u"))
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .filter(|c| (0xDC00..0xE000).contains(c));
            return Some((i, code, next));
        }
        i += 2 + width;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_surrogate_escape_in_a_double_quoted_scalar_is_found_at_its_place() {
        let e = surrogate_escape("a: 1\nb: \"smile \\ud83d\\ude00\"\n").unwrap();
        assert_eq!((e.line, e.column), (Some(2), Some(11)));
        assert!(
            e.message
                .starts_with("the escape `\\ud83d` is half of a UTF-16 surrogate pair"),
            "{}",
            e.message
        );
        assert!(e.message.ends_with("or `\\U0001F600`"), "{}", e.message);
        let e = surrogate_escape("b: [\"\\uD83D\\uDE00 \\ud83d\\ude00\"]\n").unwrap();
        assert_eq!((e.line, e.column), (Some(1), Some(6)));
        assert!(e.message.contains("`\\uD83D`"), "{}", e.message);
        // A surrogate that is not half of a pair the parser refuses already.
        for text in [
            "b: [\"\\uDC00\"]\n",
            "b: \"\\U0000D800\"\n",
            "b: \"\\ud83d\"\n",
        ] {
            assert!(super::super::parse_document_full(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn other_escapes_and_other_styles_pass() {
        for text in [
            "a: \"\\u00e9 \\U0001F600 \\ud7ff \\ue000\"\n",
            "a: '\\ud83d'\nb: C:\\ud83d\n",
            "a: \"\\\\ud83d\"\n",
            "a: |\n  \\ud83d\n",
            "a: \"\\u12\"\n",
        ] {
            assert_eq!(surrogate_escape(text), None, "{text:?}");
        }
    }
}

//! Finding the line of a field inside a document's text, for diagnostics.
//!
//! The parser gives us values, not positions, so we scan the block-style YAML that people write
//! (and that every tool in the Kubernetes world prints): each `key:` line, its indentation, and
//! `- ` list items. The answer is the line of the deepest key of the path that exists, so a
//! missing leaf still points at its parent. Flow-style documents and JSON fall back to the
//! document's first line.

/// The 1-based line (in the whole file) of `field` (a dotted path like
/// `spec.template.spec.domain.cpu.cores`; `[n]` list indices are skipped), inside `text`, whose
/// first line is line `first_line` of the file.
pub fn field_line(text: &str, first_line: u32, field: &str) -> Option<u32> {
    let wanted: Vec<&str> = field
        .split('.')
        .map(|k| k.split('[').next().unwrap_or(k))
        .filter(|k| !k.is_empty())
        .collect();
    if wanted.is_empty() {
        return None;
    }
    // Stack of (indentation, key) for the mapping keys enclosing the current line.
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut best: Option<(usize, u32)> = None;
    let mut in_block_scalar: Option<usize> = None;
    for (i, raw) in text.lines().enumerate() {
        let line_no = first_line + u32::try_from(i).unwrap_or(u32::MAX - first_line);
        let trimmed = raw.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let mut indent = raw.len() - trimmed.len();
        if let Some(block_indent) = in_block_scalar {
            if indent > block_indent {
                continue;
            }
            in_block_scalar = None;
        }
        if trimmed.starts_with("---") || trimmed.starts_with("...") {
            stack.clear();
            continue;
        }
        // `- key: value` opens a mapping inside a list item, indented past the dash.
        let mut rest = trimmed;
        while let Some(after) = rest.strip_prefix("- ") {
            indent += 2;
            rest = after.trim_start();
        }
        let Some((key, value)) = split_key(rest) else {
            continue;
        };
        while stack.last().is_some_and(|(ind, _)| *ind >= indent) {
            stack.pop();
        }
        stack.push((indent, key.to_string()));
        let depth = stack.len();
        if depth <= wanted.len()
            && stack.iter().zip(&wanted).all(|((_, k), w)| k == w)
            && best.is_none_or(|(d, _)| depth > d)
        {
            best = Some((depth, line_no));
        }
        let v = value.trim();
        if v.starts_with('|') || v.starts_with('>') {
            in_block_scalar = Some(indent);
        }
    }
    best.map(|(_, line)| line)
}

/// `key: value` or `key:` → (key, value), unquoting simple quoted keys.
fn split_key(s: &str) -> Option<(&str, &str)> {
    let (key, value) = if let Some(stripped) = s.strip_prefix('"') {
        let end = stripped.find('"')?;
        let after = stripped[end + 1..].strip_prefix(':')?;
        (&stripped[..end], after)
    } else if let Some(stripped) = s.strip_prefix('\'') {
        let end = stripped.find('\'')?;
        let after = stripped[end + 1..].strip_prefix(':')?;
        (&stripped[..end], after)
    } else {
        let pos = s
            .find(": ")
            .or_else(|| s.strip_suffix(':').map(|k| k.len()))?;
        (&s[..pos], &s[pos + 1..])
    };
    if key.is_empty() || key.starts_with(['{', '[']) {
        return None;
    }
    Some((key, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    const VM: &str = "apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: vm
spec:
  template:
    metadata:
      annotations:
        a: b
    spec:
      domain:
        cpu:
          cores: 2
        devices:
          disks:
          - name: root
            disk:
              bus: virtio
";

    #[test]
    fn finds_nested_fields() {
        assert_eq!(
            field_line(VM, 1, "spec.template.spec.domain.cpu.cores"),
            Some(13)
        );
        assert_eq!(
            field_line(VM, 10, "spec.template.spec.domain.cpu"),
            Some(21)
        );
    }

    #[test]
    fn missing_leaf_points_at_its_parent() {
        assert_eq!(
            field_line(VM, 1, "spec.template.spec.domain.cpu.sockets"),
            Some(12)
        );
    }

    #[test]
    fn list_items_are_walked() {
        assert_eq!(
            field_line(VM, 1, "spec.template.spec.domain.devices.disks[0].disk.bus"),
            Some(18)
        );
    }

    #[test]
    fn same_key_elsewhere_does_not_match() {
        assert_eq!(
            field_line(VM, 1, "spec.template.metadata.annotations.a"),
            Some(9)
        );
        assert_eq!(field_line(VM, 1, "metadata.name"), Some(4));
    }
}
#[cfg(test)]
mod more_tests {
    #[test]
    fn after_a_marker() {
        let t = "---\napiVersion: v1\nspec:\n  instancetype:\n    name: x\n";
        assert_eq!(super::field_line(t, 9, "spec.instancetype.name"), Some(13));
    }
}

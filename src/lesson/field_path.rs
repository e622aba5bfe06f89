//! Finds which TOML field a byte offset belongs to, so that serde's errors (which carry a
//! span but not always the field's name) can say `field launch.block`.
//!
//! It reads the text the way a person does: the nearest `key =` at or above the offset, in
//! the nearest `[table]` or `[[array]]` header above that (counting array entries).

/// The dotted path of the field at `offset`, or the table when the offset is on a header.
pub fn field_at(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let line_index = text[..offset].matches('\n').count();
    let lines: Vec<&str> = text.lines().collect();
    let mut key: Option<String> = None;
    let mut table: Option<String> = None;
    for i in (0..=line_index.min(lines.len().saturating_sub(1))).rev() {
        let line = lines[i].trim();
        if let Some(header) = header_name(line) {
            let name = if line.starts_with("[[") {
                let index = lines[..i]
                    .iter()
                    .filter(|l| header_name(l.trim()).as_deref() == Some(header.as_str()) && l.trim().starts_with("[["))
                    .count();
                format!("{header}.{index}")
            } else {
                header
            };
            table = Some(name);
            break;
        }
        if key.is_none() {
            key = key_name(line);
        }
    }
    match (table, key) {
        (Some(t), Some(k)) => Some(format!("{t}.{k}")),
        (Some(t), None) => Some(t),
        (None, Some(k)) => Some(k),
        (None, None) => None,
    }
}

fn header_name(line: &str) -> Option<String> {
    let inner = line.strip_prefix('[')?;
    let inner = inner.strip_prefix('[').unwrap_or(inner);
    let end = inner.find(']')?;
    let name = inner[..end].trim();
    (!name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'))
    .then(|| name.to_string())
}

fn key_name(line: &str) -> Option<String> {
    let (key, _) = line.split_once('=')?;
    let key = key.trim();
    (!key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')).then(|| key.to_string())
}

#[cfg(test)]
mod tests {
    use super::field_at;

    #[test]
    fn finds_keys_in_tables_and_arrays_of_tables() {
        let text = "id = \"a\"\n[launch]\nblock = [\n  32, 8]\n[[files.variants]]\npath = \"x\"\n[[files.variants]]\npath = \"y\"\n";
        assert_eq!(field_at(text, 2).as_deref(), Some("id"));
        assert_eq!(
            field_at(text, text.find("8]").unwrap()).as_deref(),
            Some("launch.block")
        );
        assert_eq!(
            field_at(text, text.find("\"y\"").unwrap()).as_deref(),
            Some("files.variants.1.path")
        );
        assert_eq!(
            field_at(text, text.find("[launch]").unwrap() + 1).as_deref(),
            Some("launch")
        );
    }
}

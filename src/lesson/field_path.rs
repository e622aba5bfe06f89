//! Finds which TOML field a byte offset belongs to, so that serde's errors (which carry a
//! span but not always the field's name) can say `field launch.block`.

use toml::de::{DeTable, DeValue};

/// The dotted path of the innermost key whose key or value covers `offset`.
pub fn field_at(text: &str, offset: usize) -> Option<String> {
    let root = DeTable::parse(text).ok()?;
    let mut path = Vec::new();
    walk_table(root.get_ref(), offset, &mut path);
    (!path.is_empty()).then(|| path.join("."))
}

fn walk_table(table: &DeTable<'_>, offset: usize, path: &mut Vec<String>) -> bool {
    for (key, value) in table.iter() {
        let in_key = key.span().contains(&offset);
        let in_value = value.span().contains(&offset) || value.span().end == offset;
        if in_key || in_value {
            path.push(key.get_ref().to_string());
            if in_value {
                walk_value(value.get_ref(), offset, path);
            }
            return true;
        }
    }
    false
}

fn walk_value(value: &DeValue<'_>, offset: usize, path: &mut Vec<String>) {
    match value {
        DeValue::Table(table) => {
            walk_table(table, offset, path);
        }
        DeValue::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                if item.span().contains(&offset) {
                    if let DeValue::Table(table) = item.get_ref() {
                        path.push(index.to_string());
                        walk_table(table, offset, path);
                    }
                    return;
                }
            }
        }
        _ => {}
    }
}

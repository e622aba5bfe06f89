//! Two attempts side by side: their sources aligned line by line (a text diff, so an added
//! line does not shift every figure after it), each line with the sectors it issued in its
//! own run, and the difference per line.

use crate::report::RunReport;
use std::collections::BTreeMap;

/// One row of the side-by-side table: a line of either source or both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// (1-based line number, text, sectors) on each side; `None` where the line exists only
    /// on the other side.
    pub left: Option<(u32, String, u64)>,
    pub right: Option<(u32, String, u64)>,
}

impl Row {
    /// Right minus left, in sectors.
    pub fn delta(&self) -> i128 {
        let sectors = |side: &Option<(u32, String, u64)>| side.as_ref().map_or(0, |s| s.2 as i128);
        sectors(&self.right) - sectors(&self.left)
    }

    /// Whether the line's text differs between the sides.
    pub fn changed(&self) -> bool {
        match (&self.left, &self.right) {
            (Some(l), Some(r)) => l.1 != r.1,
            _ => true,
        }
    }
}

/// Sectors per source line of a report's profile (empty when it has none).
pub fn sectors_per_line(report: &RunReport) -> BTreeMap<u32, u64> {
    report
        .profile
        .iter()
        .flat_map(|p| p.per_line.iter())
        .map(|l| (l.line, l.sectors))
        .collect()
}

/// The two sources aligned, with each line's sectors.
pub fn align(
    left: &str,
    left_sectors: &BTreeMap<u32, u64>,
    right: &str,
    right_sectors: &BTreeMap<u32, u64>,
) -> Vec<Row> {
    let diff = similar::TextDiff::from_lines(left, right);
    let left_lines: Vec<&str> = left.lines().collect();
    let right_lines: Vec<&str> = right.lines().collect();
    let side = |lines: &[&str], sectors: &BTreeMap<u32, u64>, index: usize| {
        let line = index as u32 + 1;
        lines
            .get(index)
            .map(|t| (line, t.to_string(), sectors.get(&line).copied().unwrap_or(0)))
    };
    let mut rows = Vec::new();
    for op in diff.ops() {
        for change in diff.iter_changes(op) {
            let row = match change.tag() {
                similar::ChangeTag::Equal => Row {
                    left: change.old_index().and_then(|i| side(&left_lines, left_sectors, i)),
                    right: change.new_index().and_then(|i| side(&right_lines, right_sectors, i)),
                },
                similar::ChangeTag::Delete => Row {
                    left: change.old_index().and_then(|i| side(&left_lines, left_sectors, i)),
                    right: None,
                },
                similar::ChangeTag::Insert => Row {
                    left: None,
                    right: change.new_index().and_then(|i| side(&right_lines, right_sectors, i)),
                },
            };
            rows.push(row);
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inserted_line_keeps_the_others_aligned() {
        let left = "a\nb\nc\n";
        let right = "a\nnew\nb\nc\n";
        let ls = BTreeMap::from([(2, 10), (3, 5)]);
        let rs = BTreeMap::from([(2, 7), (3, 4), (4, 5)]);
        let rows = align(left, &ls, right, &rs);
        assert_eq!(rows.len(), 4);
        assert_eq!(rows[1].left, None);
        assert_eq!(rows[1].right, Some((2, "new".into(), 7)));
        // "b": line 2 on the left (10 sectors), line 3 on the right (4).
        assert_eq!(rows[2].left.as_ref().map(|l| l.0), Some(2));
        assert_eq!(rows[2].right.as_ref().map(|r| r.0), Some(3));
        assert_eq!(rows[2].delta(), -6);
        assert!(!rows[2].changed());
        assert_eq!(rows[3].delta(), 0);
    }
}

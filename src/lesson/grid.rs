//! How the harness derives the launch grid from the problem size n.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One dimension of the grid rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GridDim {
    /// `ceil(n / per)` blocks: one block per `per` elements along this axis.
    CeilDiv { per: u32 },
    /// A fixed count, independent of n (the 3D lesson's three z-chunks).
    Fixed { count: u32 },
}

impl GridDim {
    /// Parses `"ceil(n/32)"` or `"3"`; spaces are ignored.
    pub fn parse(text: &str) -> Result<GridDim, String> {
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        if let Some(inner) = compact.strip_prefix("ceil(n/").and_then(|r| r.strip_suffix(')')) {
            return match inner.parse::<u32>() {
                Ok(per) if per > 0 => Ok(GridDim::CeilDiv { per }),
                _ => Err(format!("`{text}`: the divisor in ceil(n/K) must be a positive integer")),
            };
        }
        match compact.parse::<u32>() {
            Ok(count) if count > 0 => Ok(GridDim::Fixed { count }),
            _ => Err(format!(
                "`{text}` is not a grid rule: write \"ceil(n/K)\" or a positive block count"
            )),
        }
    }

    pub fn blocks_for(self, n: u32) -> u32 {
        match self {
            GridDim::CeilDiv { per } => n.div_ceil(per),
            GridDim::Fixed { count } => count,
        }
    }
}

impl fmt::Display for GridDim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GridDim::CeilDiv { per } => write!(f, "ceil(n/{per})"),
            GridDim::Fixed { count } => write!(f, "{count}"),
        }
    }
}

/// The grid rule for all three dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GridRule(pub [GridDim; 3]);

impl GridRule {
    pub fn grid_for(&self, n: u32) -> [u32; 3] {
        [0, 1, 2].map(|d| self.0[d].blocks_for(n))
    }
}

impl fmt::Display for GridRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} x {} x {}", self.0[0], self.0[1], self.0[2])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_forms() {
        assert_eq!(GridDim::parse("ceil(n/32)"), Ok(GridDim::CeilDiv { per: 32 }));
        assert_eq!(GridDim::parse(" ceil( n / 8 ) "), Ok(GridDim::CeilDiv { per: 8 }));
        assert_eq!(GridDim::parse("3"), Ok(GridDim::Fixed { count: 3 }));
        assert!(GridDim::parse("ceil(n/0)").is_err());
        assert!(GridDim::parse("n/32").is_err());
        assert!(GridDim::parse("0").is_err());
    }
}

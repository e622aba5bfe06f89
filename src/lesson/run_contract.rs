//! The part of a lesson a run needs: the kernel's signature, its launch, the sizes it is checked
//! and measured at, and the computation the harness checks. The backends, the harness and the
//! GPU worker take this, not the whole `Lesson` with its text, hints and file paths: the worker
//! protocol carries a few hundred bytes per request instead of the lesson's Markdown.

use super::{GridRule, Param, Stencil};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contract {
    /// The lesson's id, for messages.
    pub lesson: String,
    pub entry: String,
    pub params: Vec<Param>,
    pub block: [u32; 3],
    pub grid: GridRule,
    pub dynamic_shared_bytes: u32,
    /// Thread-block cluster shape, when the lesson launches clusters (sm_90 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<[u32; 3]>,
    pub stencil: Stencil,
    pub verify_sizes: Vec<u32>,
    pub profile_size: u32,
    pub profile_launches: u32,
}

impl Contract {
    /// The launch grid at size `n`: the rule's, rounded up to whole clusters when the lesson
    /// launches clusters (the extra blocks lie outside the problem and must still take part
    /// in every cluster barrier).
    pub fn grid_for(&self, n: u32) -> [u32; 3] {
        let grid = self.grid.grid_for(n);
        match self.cluster {
            Some(c) => [0, 1, 2].map(|d| grid[d].div_ceil(c[d]) * c[d]),
            None => grid,
        }
    }

    /// The sizes the quick checks run at (`haloscope check`, the unoptimised build's check):
    /// the verification sizes below the profile size, where compute-sanitizer runs on the
    /// GPU in reasonable time; all of them when none is smaller.
    pub fn small_sizes(&self) -> Vec<u32> {
        let small: Vec<u32> = self
            .verify_sizes
            .iter()
            .copied()
            .filter(|&n| n < self.profile_size)
            .collect();
        if small.is_empty() {
            self.verify_sizes.clone()
        } else {
            small
        }
    }

    pub fn threads_per_block(&self) -> u32 {
        self.block.iter().product()
    }
}

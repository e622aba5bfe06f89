//! Thread-block clusters (sm_90): the blocks of a cluster run together on one host thread, so
//! that one can read and write another's shared memory (distributed shared memory: `mapa`,
//! `ld/st.shared::cluster`, generic addresses `mapa` made) and all of them meet at the
//! cluster barrier (`barrier.cluster.arrive` / `.wait`, `cluster.sync()`).
//!
//! This file holds the cluster's data (its shape, the parked blocks); the runner's methods
//! that run a cluster are in cluster_run.rs.
//!
//! The runner runs one block at a time: the running block's state is the runner's own
//! fields (as for a launch without clusters, which is a cluster of one block and takes no
//! detour through here); the others are parked in [`ClusterRun::blocks`] and swapped in
//! for their turn. A turn is one round of the block's scheduler (its warps run until they
//! wait or finish); blocks take turns until all are done. When no block can go on, the
//! cluster barrier is released if every thread of the cluster that has not exited arrived,
//! else the cluster is deadlocked.
//!
//! Two hazards are the cluster's own: an access to another block's shared memory that no
//! cluster barrier orders with that block's accesses (shared.rs, the races), and one that
//! nothing keeps ahead of that block's exit ([`FindingKind::SharedAfterExit`]): a block's
//! shared memory is gone once it has exited, so a block must not leave while a neighbour
//! may still read its tile (a `cluster.sync()` before the end).

use super::barrier::Barriers;
use super::mbarrier::{BulkCopy, Mbarriers};
use super::shared::SharedMemory;
use super::warp::Warp;

/// A launch's cluster shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterShape {
    pub dims: [u32; 3],
    /// Whether the launch or the kernel gave the shape (`%is_explicit_cluster`); without one
    /// every block is a cluster of its own.
    pub explicit: bool,
}

impl ClusterShape {
    pub const SINGLE: ClusterShape = ClusterShape {
        dims: [1, 1, 1],
        explicit: false,
    };

    pub fn size(&self) -> u32 {
        self.dims.iter().product()
    }

    /// The rank of block `ctaid` in its cluster (x fastest) and its position there.
    pub fn place(&self, ctaid: [u32; 3]) -> (u32, [u32; 3]) {
        let [dx, dy, dz] = self.dims;
        let at = [ctaid[0] % dx, ctaid[1] % dy, ctaid[2] % dz];
        (at[0] + at[1] * dx + at[2] * dx * dy, at)
    }

    /// The grid's shape in clusters.
    pub fn clusters(&self, grid: [u32; 3]) -> [u32; 3] {
        [0, 1, 2].map(|d| grid[d] / self.dims[d])
    }

    /// Block `rank` of cluster `index` (clusters numbered x fastest): its grid position.
    pub fn block(&self, grid: [u32; 3], index: u64, rank: u32) -> [u32; 3] {
        let [cx, cy, _] = self.clusters(grid);
        let (cx, cy) = (cx as u64, cy as u64);
        let cluster = [
            (index % cx) as u32,
            ((index / cx) % cy) as u32,
            (index / (cx * cy)) as u32,
        ];
        let [dx, dy, _] = self.dims;
        let at = [rank % dx, (rank / dx) % dy, rank / (dx * dy)];
        [0, 1, 2].map(|d| cluster[d] * self.dims[d] + at[d])
    }
}

/// Why a cluster shape cannot be used for a launch.
pub fn check_shape(shape: [u32; 3], grid: [u32; 3], declared: Option<[u32; 3]>) -> Result<(), String> {
    if shape.contains(&0) {
        return Err(format!("a cluster of {shape:?} blocks"));
    }
    if let Some(d) = declared.filter(|&d| d != shape) {
        return Err(format!(
            "the kernel declares __cluster_dims__({}, {}, {}) but is launched with clusters of {} x {} x {}",
            d[0], d[1], d[2], shape[0], shape[1], shape[2]
        ));
    }
    let size: u32 = shape.iter().product();
    if size > 16 {
        return Err(format!(
            "a cluster of {size} blocks (sm_90 allows at most 16, 8 portably)"
        ));
    }
    if (0..3).any(|d| !grid[d].is_multiple_of(shape[d])) {
        return Err(format!(
            "the grid of {} x {} x {} blocks is not a whole number of {} x {} x {} clusters",
            grid[0], grid[1], grid[2], shape[0], shape[1], shape[2]
        ));
    }
    Ok(())
}

/// A block of the running cluster while another block has its turn.
pub struct BlockState {
    pub warps: Vec<Warp>,
    pub shared: SharedMemory,
    pub barriers: Barriers,
    pub mbars: Mbarriers,
    pub bulk: Vec<BulkCopy>,
    pub ctaid: [u32; 3],
    pub block_index: u64,
    pub watching: bool,
    pub traced: Vec<u32>,
    pub last_exit: Option<(u32, [u32; 3])>,
    pub mbar_completions: u64,
    /// Whether all its warps are done, and the cluster barriers completed by then.
    pub done: bool,
    pub exit_phase: u32,
}

impl Default for BlockState {
    fn default() -> BlockState {
        BlockState {
            warps: Vec::new(),
            shared: SharedMemory::with_warp_size(0, false, 32),
            barriers: Barriers::default(),
            mbars: Mbarriers::default(),
            bulk: Vec::new(),
            ctaid: [0; 3],
            block_index: 0,
            watching: false,
            traced: Vec::new(),
            last_exit: None,
            mbar_completions: 0,
            done: false,
            exit_phase: 0,
        }
    }
}

/// The latest access of one block's shared memory from another block of the cluster.
#[derive(Debug, Clone, Copy)]
pub struct RemoteUse {
    /// Cluster barriers completed when it happened.
    pub phase: u32,
    pub block: [u32; 3],
    pub block_index: u64,
    pub thread: [u32; 3],
    pub pc: u32,
    pub byte: u64,
}

/// The cluster a runner is running.
pub struct ClusterRun {
    pub shape: ClusterShape,
    /// The running block's rank.
    pub rank: u32,
    /// Every block of the cluster by rank; the running block's entry is a placeholder
    /// (its state is the runner's own fields).
    pub blocks: Vec<BlockState>,
    /// Cluster barriers completed.
    pub phase: u32,
    /// Per block: the latest access another block made to its shared memory.
    pub remote_uses: Vec<Option<RemoteUse>>,
}

impl ClusterRun {
    pub fn new(shape: ClusterShape) -> ClusterRun {
        ClusterRun {
            shape,
            rank: 0,
            blocks: (0..shape.size()).map(|_| BlockState::default()).collect(),
            phase: 0,
            remote_uses: vec![None; shape.size() as usize],
        }
    }
}

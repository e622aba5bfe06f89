//! Counting a launch by classes of blocks that count alike.
//!
//! A stencil's blocks differ only in where they are: an interior block issues exactly the
//! sectors, lanes and instructions of any other interior block, moved by whole sectors. A
//! launch that only counts (checks off, nothing watched) runs one block of a class, follows
//! it with the affine tracker (affine.rs) to learn which other blocks provably count the
//! same (constraints.rs); the launch adds its counters once per member (class_launch.rs,
//! beside launch.rs: it runs blocks, which this module never does). A 2D stencil
//! at the profile size has 65,536 blocks and about nine classes (interior, edges, corners).
//!
//! Exact by construction, not sampled: a block joins a class only when every comparison,
//! widening and global address of the representative comes out the same for it. Anything
//! the tracker cannot follow leaves the launch to run every block as before.

mod affine;
mod constraints;

pub(crate) use affine::{AffineTracker, Operands};

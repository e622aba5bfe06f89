//! The blocks a representative block speaks for: linear conditions on the distance `Δ`
//! (in blocks, per dimension) from the representative to another block.
//!
//! Every condition is on one integer `t = k·Δ` for a coefficient vector `k` the tracker
//! (affine.rs) found: `t` in a closed range, `t` not one of some values, or (for a global
//! address) `t` a multiple of the sector size. Conditions on the same `k` are merged as they
//! arrive (ranges intersected), so a block is checked against a handful of them however many
//! lanes and instructions gave them.

use std::collections::BTreeSet;

/// Where `t = k·Δ` may lie for one `k`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Allowed {
    k: [i128; 3],
    lo: i128,
    hi: i128,
    /// Values `t` must not take (a `!=` that held in the representative): a set, since a
    /// loop's test of its counter adds one per iteration.
    not: BTreeSet<i128>,
}

/// The conditions a block must meet to be counted as the representative was.
///
/// Kept in short lists, not maps: a kernel gives a handful of distinct `k`, and the lanes of
/// one instruction nearly always share theirs, so the last one used is looked at first (the
/// conditions are noted once per lane of every instruction the representative runs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Constraints {
    ranges: Vec<Allowed>,
    last: usize,
    /// Address coefficients `c` whose shift `c·Δ` (mod 2^64) must be a multiple of the
    /// sector size: every lane's address moves by the same whole number of sectors, so the
    /// access covers as many sectors as the representative's.
    whole_sectors: Vec<[i64; 3]>,
}

/// The bytes of one sector, the unit the count is in.
const SECTOR: i64 = 32;

fn dot(k: &[i128; 3], delta: [i64; 3]) -> i128 {
    k[0] * delta[0] as i128 + k[1] * delta[1] as i128 + k[2] * delta[2] as i128
}

impl Constraints {
    /// The conditions on `k·Δ` (a new, unconstrained entry when there are none yet).
    fn on(&mut self, k: [i128; 3]) -> &mut Allowed {
        if self.ranges.get(self.last).is_none_or(|a| a.k != k) {
            self.last = match self.ranges.iter().position(|a| a.k == k) {
                Some(found) => found,
                None => {
                    self.ranges.push(Allowed {
                        k,
                        lo: i128::MIN,
                        hi: i128::MAX,
                        not: BTreeSet::new(),
                    });
                    self.ranges.len() - 1
                }
            };
        }
        &mut self.ranges[self.last]
    }

    /// `t = k·Δ` must lie in `lo..=hi`.
    pub fn within(&mut self, k: [i128; 3], lo: i128, hi: i128) {
        if k == [0; 3] {
            return; // t is 0 in every block: the representative met it.
        }
        let a = self.on(k);
        a.lo = a.lo.max(lo);
        a.hi = a.hi.min(hi);
    }

    /// `t = k·Δ` must not be `value`.
    pub fn not_equal(&mut self, k: [i128; 3], value: i128) {
        if k != [0; 3] {
            self.on(k).not.insert(value);
        }
    }

    /// `c·Δ` (wrapping, as an address is) must be a whole number of sectors.
    pub fn whole_sectors(&mut self, c: [i64; 3]) {
        if c.iter().any(|v| v % SECTOR != 0) && !self.whole_sectors.contains(&c) {
            self.whole_sectors.push(c);
        }
    }

    /// Whether the block `delta` blocks away from the representative meets every condition.
    pub fn admit(&self, delta: [i64; 3]) -> bool {
        let ranges_hold = self.ranges.iter().all(|a| {
            let t = dot(&a.k, delta);
            a.lo <= t && t <= a.hi && !a.not.contains(&t)
        });
        ranges_hold
            && self.whole_sectors.iter().all(|c| {
                let shift = c[0]
                    .wrapping_mul(delta[0])
                    .wrapping_add(c[1].wrapping_mul(delta[1]))
                    .wrapping_add(c[2].wrapping_mul(delta[2]));
                shift.rem_euclid(SECTOR) == 0
            })
    }

    /// How many conditions there are.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.ranges.len() + self.whole_sectors.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_on_one_coefficient_intersect_and_exclusions_hold() {
        let mut c = Constraints::default();
        c.within([32, 0, 0], -10, 1000);
        c.within([32, 0, 0], 0, 2000);
        c.not_equal([32, 0, 0], 64);
        assert!(c.admit([0, 0, 0]));
        assert!(c.admit([1, 5, 0]));
        assert!(!c.admit([2, 0, 0]), "t = 64 is excluded");
        assert!(!c.admit([-1, 0, 0]), "t = -32 is below 0");
        assert!(!c.admit([32, 0, 0]), "t = 1024 is above 1000");
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn an_address_shift_must_be_whole_sectors() {
        let mut c = Constraints::default();
        c.whole_sectors([128, 0, 0]);
        assert_eq!(c.len(), 0, "a shift of 128 bytes per block is always whole sectors");
        c.whole_sectors([4, 0, 0]);
        assert!(c.admit([8, 3, 0]));
        assert!(!c.admit([3, 0, 0]), "12 bytes is not a whole sector");
    }
}

//! Seeded random inputs. Every run draws a new seed unless one is given, so a kernel that
//! only works on yesterday's data (or on zeros) is caught.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// A seed from the clock and process id, for runs that were not given one.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    nanos ^ ((std::process::id() as u64) << 32) ^ 0x9E37_79B9_7F4A_7C15
}

/// The seed used for one size of a run, so each size gets different data from one run seed.
pub fn size_seed(run_seed: u64, n: u32) -> u64 {
    run_seed.wrapping_mul(0x2545_F491_4F6C_DD1D).wrapping_add(n as u64)
}

/// `count` floats with magnitude in [0.25, 1) and a random sign: never zero, never tiny,
/// so a kernel that drops a term or reads the wrong cell shows up.
pub fn random_inputs(count: usize, seed: u64) -> Vec<f32> {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let magnitude: f32 = rng.random_range(0.25..1.0);
            if rng.random::<bool>() { magnitude } else { -magnitude }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_seeded_and_never_zero() {
        let a = random_inputs(10_000, 7);
        assert_eq!(a, random_inputs(10_000, 7));
        assert_ne!(a, random_inputs(10_000, 8));
        assert!(a.iter().all(|v| v.abs() >= 0.25 && v.abs() < 1.0));
        assert!(a.iter().any(|v| *v < 0.0) && a.iter().any(|v| *v > 0.0));
    }
}

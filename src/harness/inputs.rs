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
///
/// Drawn on all cores, the same values as one sequential stream: each element takes exactly
/// two 64-bit steps of the generator (a float in a range is one `u32` in rand 0.9, a bool
/// another), so the chunk starting at element `s` jumps the generator `2 s` steps ahead.
/// The figures recorded from the H200 depend on these exact values (data-dependent
/// kernels); the test below holds the chunks to the sequential stream.
pub fn random_inputs(count: usize, seed: u64) -> Vec<f32> {
    let mut out = super::buffers::zeroed_f32(count);
    super::parallel::fill_in_chunks(&mut out, |start, part| {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        rng.advance(2 * start as u128);
        fill_sequentially(&mut rng, part);
    });
    out
}

fn fill_sequentially(rng: &mut Pcg64Mcg, out: &mut [f32]) {
    for value in out {
        let magnitude: f32 = rng.random_range(0.25..1.0);
        *value = if rng.random::<bool>() { magnitude } else { -magnitude };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_drawn_in_parallel_are_the_sequential_stream() {
        let count = 3 * (1 << 18) + 12_345; // several chunks, uneven
        for seed in [0, 7, u64::MAX] {
            let mut sequential = vec![0.0f32; count];
            fill_sequentially(&mut Pcg64Mcg::seed_from_u64(seed), &mut sequential);
            let parallel = random_inputs(count, seed);
            assert!(
                parallel
                    .iter()
                    .zip(&sequential)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "seed {seed}"
            );
        }
        // Pinned: the first inputs of seed 7, as every recorded figure was measured on
        // (a new rand or rand_pcg that changed them would change data-dependent figures).
        let first: Vec<u32> = random_inputs(4, 7).iter().map(|v| v.to_bits()).collect();
        assert_eq!(first, [3207545545, 3205371278, 3207322411, 3201885150]);
    }

    #[test]
    fn inputs_are_seeded_and_never_zero() {
        let a = random_inputs(10_000, 7);
        assert_eq!(a, random_inputs(10_000, 7));
        assert_ne!(a, random_inputs(10_000, 8));
        assert!(a.iter().all(|v| v.abs() >= 0.25 && v.abs() < 1.0));
        assert!(a.iter().any(|v| *v < 0.0) && a.iter().any(|v| *v > 0.0));
    }
}

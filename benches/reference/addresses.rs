//! The same-run reference of the emulator benchmark (issue 44): the 2D and 3D solutions'
//! global accesses enumerated by hand in plain Rust, one warp instruction at a time, each
//! counted as the distinct 32-byte sectors its active lanes touch. It is what a count costs
//! with no interpreter at all, so the emulator's time over it is a ratio that does not depend
//! on the machine. It must give the emulator's sectors exactly (the bench asserts it), which
//! keeps it honest: it enumerates the kernels' real accesses, not a formula.

/// Sectors of one warp instruction whose active lanes read or write the consecutive floats
/// `first .. first + lanes` (the buffers are 256-byte aligned, as cudaMalloc's are).
fn sectors(first: i64, lanes: i64) -> u64 {
    if lanes <= 0 {
        return 0;
    }
    ((first + lanes - 1).div_euclid(8) - first.div_euclid(8) + 1) as u64
}

/// Lanes `lo..hi` of the range `0..32` (empty when `hi <= lo`), as (first lane, count).
fn span(lo: i64, hi: i64) -> (i64, i64) {
    let (lo, hi) = (lo.max(0), hi.min(32));
    (lo, (hi - lo).max(0))
}

/// kernels/stencil-2d/solution.cu at size `n`: 32 x 8 blocks, one warp per tile row.
pub fn solution_2d(n: i64) -> u64 {
    let mut total = 0;
    for by in 0..(n + 7) / 8 {
        for bx in 0..(n + 31) / 32 {
            for ty in 0..8 {
                let (y, x0) = (by * 8 + ty, bx * 32);
                let row = y * n;
                // Lanes with x < n.
                let (_, in_x) = span(0, n - x0);
                if y < n {
                    total += sectors(row + x0, in_x); // centre
                }
                if ty == 0 && y > 0 {
                    total += sectors(row - n + x0, in_x); // the row above
                }
                if ty == 7 && y + 1 < n {
                    total += sectors(row + n + x0, in_x); // the row below
                }
                if y < n && x0 > 0 {
                    total += 1; // lane 0's left neighbour
                }
                if y < n && x0 + 32 < n {
                    total += 1; // lane 31's right neighbour
                }
                if y < n {
                    // Border outputs and interior outputs are two store instructions.
                    let border_row = y == 0 || y == n - 1;
                    let (first_in, interior) = if border_row { (0, 0) } else { span(1 - x0, n - 1 - x0) };
                    total += sectors(row + x0 + first_in, interior);
                    // The border lanes: the whole row, or lane x == 0 and lane x == n - 1.
                    if border_row {
                        total += sectors(row + x0, in_x);
                    } else {
                        let mut lanes = Vec::new();
                        if x0 == 0 {
                            lanes.push(row);
                        }
                        if (x0..x0 + in_x).contains(&(n - 1)) {
                            lanes.push(row + n - 1);
                        }
                        lanes.dedup_by_key(|a| a.div_euclid(8));
                        total += lanes.len() as u64;
                    }
                }
            }
        }
    }
    total
}

/// kernels/stencil-3d/solution.cu at size `n`: 32 x 16 blocks, 3 z chunks, a plane at a time.
pub fn solution_3d(n: i64) -> u64 {
    let depth = (n + 2) / 3;
    let plane = n * n;
    let mut total = 0;
    for bz in 0..3 {
        let (z0, z1) = (bz * depth, (bz * depth + depth).min(n));
        for by in 0..(n + 15) / 16 {
            for bx in 0..(n + 31) / 32 {
                for ty in 0..16 {
                    let (y, x0) = (by * 16 + ty, bx * 32);
                    let (_, in_x) = span(0, n - x0);
                    for z in z0..z1 {
                        let row = z * plane + y * n;
                        if y < n {
                            total += sectors(row + x0, in_x);
                        }
                        if ty == 0 && y > 0 {
                            total += sectors(row - n + x0, in_x);
                        }
                        if ty == 15 && y + 1 < n {
                            total += sectors(row + n + x0, in_x);
                        }
                        if y < n && x0 > 0 {
                            total += 1;
                        }
                        if y < n && x0 + 32 < n {
                            total += 1;
                        }
                        if y < n {
                            let border = y == 0 || y == n - 1 || z == 0 || z == n - 1;
                            if !border {
                                // behind and ahead, for the interior lanes 1 <= x <= n - 2
                                let (first, lanes) = span(1 - x0, n - 1 - x0);
                                total += sectors(row - plane + x0 + first, lanes);
                                total += sectors(row + plane + x0 + first, lanes);
                            }
                            total += sectors(row + x0, in_x); // one store per thread inside
                        }
                    }
                }
            }
        }
    }
    total
}

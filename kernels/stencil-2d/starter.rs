// stencil-2d starter, in Rust: one thread per output, and every read goes to global memory.
//
// Interior points: out = 0.5 * centre + 0.125 * (left + right + up + down).
// Border points (first/last row or column) are copied through unchanged.
// The harness launches 32 x 8 threads per block on a ceil(n/32) x ceil(n/8) grid.
use crate::gpu::*;

#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn stencil2d(input: *const f32, output: *mut f32, n: i32) {
    let x = block_idx().x * block_dim().x + thread_idx().x;
    let y = block_idx().y * block_dim().y + thread_idx().y;
    if x >= n || y >= n {
        return; // the last blocks of a row or column overhang the grid
    }
    let i = y as i64 * n as i64 + x as i64;
    let row = n as i64;

    if x == 0 || y == 0 || x == n - 1 || y == n - 1 {
        store!(output[i] = load!(input[i]));
        return;
    }

    // Five global loads for one output: each neighbour is loaded again by the threads
    // that own the cells around it.
    let centre = load!(input[i]);
    let left = load!(input[i - 1]);
    let right = load!(input[i + 1]);
    let up = load!(input[i - row]);
    let down = load!(input[i + row]);
    store!(output[i] = 0.5 * centre + 0.125 * (left + right + up + down));
}

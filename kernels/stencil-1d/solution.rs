// stencil-1d solution, in Rust: a 1D tile of 256 owned cells plus one halo cell at each end.
use crate::gpu::*;

const BLOCK: i32 = 256;

#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn stencil1d(input: *const f32, output: *mut f32, n: i32) {
    let tile = shared_tile!(tile1d, 1, 258);
    let t = thread_idx().x;
    let i = block_idx().x * BLOCK + t;
    let inside = i < n;

    tile!(tile[0][t + 1] = if inside { load!(input[i]) } else { 0.0 });
    if t == 0 {
        tile!(tile[0][0] = if i > 0 && i - 1 < n { load!(input[i - 1]) } else { 0.0 });
    }
    if t == BLOCK - 1 {
        tile!(tile[0][BLOCK + 1] = if i + 1 < n { load!(input[i + 1]) } else { 0.0 });
    }
    sync_threads();

    if !inside {
        return;
    }
    let centre = tile!(tile[0][t + 1]);
    if i == 0 || i == n - 1 {
        store!(output[i] = centre);
        return;
    }
    store!(output[i] = 0.5 * centre + 0.25 * (tile!(tile[0][t]) + tile!(tile[0][t + 2])));
}

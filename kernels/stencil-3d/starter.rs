// stencil-3d starter, in Rust: seven global loads per output. Each block owns a 32 x 16
// column and walks its share of the z planes; gridDim.z is fixed at 3 by the harness.
use crate::gpu::*;

#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn stencil3d(input: *const f32, output: *mut f32, n: i32) {
    let x = block_idx().x * block_dim().x + thread_idx().x;
    let y = block_idx().y * block_dim().y + thread_idx().y;
    if x >= n || y >= n {
        return;
    }
    // Three z-chunks cover the cube whatever n is: round the depth up.
    let depth = (n + grid_dim().z - 1) / grid_dim().z;
    let z_begin = block_idx().z * depth;
    let z_end = min(z_begin + depth, n);
    let row = n as i64;
    let plane = row * row;

    let mut z = z_begin;
    while z < z_end {
        let i = z as i64 * plane + y as i64 * row + x as i64;
        let result = if x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1 {
            load!(input[i])
        } else {
            let centre = load!(input[i]);
            let left = load!(input[i - 1]);
            let right = load!(input[i + 1]);
            let up = load!(input[i - row]);
            let down = load!(input[i + row]);
            let behind = load!(input[i - plane]);
            let ahead = load!(input[i + plane]);
            0.25 * centre + 0.125 * (left + right + up + down + behind + ahead)
        };
        store!(output[i] = result);
        z += 1;
    }
}

// stencil-3d solution, in Rust: stage each z plane of the block's column in an 18 x 34 tile.
// Behind and ahead stay global loads. Two barriers per plane.
use crate::gpu::*;

const TILE_W: i32 = 32;
const TILE_H: i32 = 16;

#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn stencil3d(input: *const f32, output: *mut f32, n: i32) {
    let tile = shared_tile!(tile3d, 18, 34);
    let tx = thread_idx().x;
    let ty = thread_idx().y;
    let x = block_idx().x * TILE_W + tx;
    let y = block_idx().y * TILE_H + ty;
    let inside = x < n && y < n;

    let depth = (n + grid_dim().z - 1) / grid_dim().z;
    let z_begin = block_idx().z * depth;
    let z_end = min(z_begin + depth, n);
    let row = n as i64;
    let plane = row * row;

    if ty == 0 && tx < 4 {
        let r = if tx % 2 == 1 { TILE_H + 1 } else { 0 };
        let c = if tx >= 2 { TILE_W + 1 } else { 0 };
        tile!(tile[r][c] = 0.0);
    }

    let mut z = z_begin;
    while z < z_end {
        let i = z as i64 * plane + y as i64 * row + x as i64;
        tile!(tile[ty + 1][tx + 1] = if inside { load!(input[i]) } else { 0.0 });
        if ty == 0 {
            tile!(tile[0][tx + 1] = if y > 0 && x < n { load!(input[i - row]) } else { 0.0 });
        }
        if ty == TILE_H - 1 {
            tile!(tile[TILE_H + 1][tx + 1] = if y + 1 < n && x < n { load!(input[i + row]) } else { 0.0 });
        }
        if tx == 0 {
            tile!(tile[ty + 1][0] = if x > 0 && y < n { load!(input[i - 1]) } else { 0.0 });
        }
        if tx == TILE_W - 1 {
            tile!(tile[ty + 1][TILE_W + 1] = if x + 1 < n && y < n { load!(input[i + 1]) } else { 0.0 });
        }
        sync_threads(); // the plane is staged

        if inside {
            let centre = tile!(tile[ty + 1][tx + 1]);
            let result = if x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1 {
                centre
            } else {
                let in_plane = tile!(tile[ty + 1][tx]) + tile!(tile[ty + 1][tx + 2]) + tile!(tile[ty][tx + 1]) + tile!(tile[ty + 2][tx + 1]);
                // The depth neighbours are whole sweeps of the cube: still global loads.
                0.25 * centre + 0.125 * (in_plane + load!(input[i - plane]) + load!(input[i + plane]))
            };
            store!(output[i] = result);
        }
        sync_threads(); // everyone has read the tile before the next plane overwrites it
        z += 1;
    }
}

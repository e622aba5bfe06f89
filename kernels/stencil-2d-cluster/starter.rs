// stencil-2d-cluster starter, in Rust: the stencil-2d solution as it stands. Launched in
// 4 x 2 clusters it still loads the whole halo ring from global memory. Two guards differ
// from stencil-2d's (`y - 1 < n` above, `x - 1 < n` on the left): the grid is rounded up to
// whole clusters, so a block can lie wholly past the grid's bottom or right edge.
use crate::gpu::*;

const TILE_W: i32 = 32;
const TILE_H: i32 = 8;

#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn stencil2d(input: *const f32, output: *mut f32, n: i32) {
    // Rows 0 and 9 and columns 0 and 33 are the halo ring; the block's cells are inside.
    let tile = shared_tile!(tile2d, 10, 34);

    let tx = thread_idx().x;
    let ty = thread_idx().y;
    let x = block_idx().x * TILE_W + tx;
    let y = block_idx().y * TILE_H + ty;
    let inside = x < n && y < n;
    let row = n as i64;
    let i = y as i64 * row + x as i64;

    tile!(tile[ty + 1][tx + 1] = if inside { load!(input[i]) } else { 0.0 });
    if ty == 0 {
        tile!(tile[0][tx + 1] = if y > 0 && y - 1 < n && x < n { load!(input[i - row]) } else { 0.0 });
    }
    if ty == TILE_H - 1 {
        tile!(tile[TILE_H + 1][tx + 1] = if y + 1 < n && x < n { load!(input[i + row]) } else { 0.0 });
    }
    if tx == 0 {
        tile!(tile[ty + 1][0] = if x > 0 && x - 1 < n && y < n { load!(input[i - 1]) } else { 0.0 });
    }
    if tx == TILE_W - 1 {
        tile!(tile[ty + 1][TILE_W + 1] = if x + 1 < n && y < n { load!(input[i + 1]) } else { 0.0 });
    }
    // The four corners are never read; give them a value so nothing can read them undefined.
    if ty == 0 && tx < 4 {
        let r = if tx % 2 == 1 { TILE_H + 1 } else { 0 };
        let c = if tx >= 2 { TILE_W + 1 } else { 0 };
        tile!(tile[r][c] = 0.0);
    }

    sync_threads();

    if !inside {
        return;
    }
    let centre = tile!(tile[ty + 1][tx + 1]);
    if x == 0 || y == 0 || x == n - 1 || y == n - 1 {
        store!(output[i] = centre);
        return;
    }
    let left = tile!(tile[ty + 1][tx]);
    let right = tile!(tile[ty + 1][tx + 2]);
    let up = tile!(tile[ty][tx + 1]);
    let down = tile!(tile[ty + 2][tx + 1]);
    store!(output[i] = 0.5 * centre + 0.125 * (left + right + up + down));
}

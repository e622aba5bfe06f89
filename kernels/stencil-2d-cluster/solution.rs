// stencil-2d-cluster solution, in Rust: the halo a cluster neighbour already holds comes from
// its tile. Rust has no cooperative-groups library for the GPU, so the cluster's three
// instructions are written as PTX through `asm!`: the block's place in the cluster
// (`%cluster_ctarank`, `%cluster_ctaid`), `mapa` + `ld.shared::cluster` to read another
// block's tile, and `barrier.cluster` as the cluster-wide barrier.
use crate::gpu::*;

const TILE_W: i32 = 32;
const TILE_H: i32 = 8;
const ROW: u32 = 34;

/// This block's rank in its cluster (x fastest), and its column and row there.
fn cluster_place() -> (u32, u32, u32) {
    let (rank, cx, cy): (u32, u32, u32);
    unsafe {
        asm!(
            "mov.u32 {0}, %cluster_ctarank;\n\tmov.u32 {1}, %cluster_ctaid.x;\n\tmov.u32 {2}, %cluster_ctaid.y;",
            out(reg32) rank,
            out(reg32) cx,
            out(reg32) cy,
            options(nostack, nomem)
        )
    };
    (rank, cx, cy)
}

/// `cluster.sync()`: every thread of every block of the cluster arrives, then waits.
fn cluster_sync() {
    unsafe { asm!("barrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;", options(nostack)) };
}

/// Cell (r, c) of block `rank`'s tile: the same offset mapped into that block's shared memory.
fn neighbour_cell(t: &SharedTile, r: i32, c: i32, rank: u32) -> f32 {
    let at: u32 = t.base + ((r as u32) * ROW + c as u32) * 4;
    let v: f32;
    unsafe {
        asm!(
            "{{ .reg .b32 remote;\n\tmapa.shared::cluster.u32 remote, {at}, {rank};\n\tld.shared::cluster.f32 {v}, [remote]; }}",
            at = in(reg32) at,
            rank = in(reg32) rank,
            v = out(reg32) v,
            options(nostack, readonly)
        )
    };
    v
}

#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn stencil2d(input: *const f32, output: *mut f32, n: i32) {
    let tile = shared_tile!(tile2d, 10, 34);

    let tx = thread_idx().x;
    let ty = thread_idx().y;
    let x = block_idx().x * TILE_W + tx;
    let y = block_idx().y * TILE_H + ty;
    let inside = x < n && y < n;
    let row = n as i64;
    let i = y as i64 * row + x as i64;
    // The contract's cluster is 4 x 2: ranks 0..3 on the top row, 4..7 below.
    let (rank, cx, cy) = cluster_place();
    let (left_edge, right_edge) = (cx == 0, cx == 3);
    let (top_edge, bottom_edge) = (cy == 0, cy == 1);

    // Phase 1, global memory: the owned cell, and the ring cells on the cluster's edge.
    tile!(tile[ty + 1][tx + 1] = if inside { load!(input[i]) } else { 0.0 });
    if ty == 0 && top_edge {
        tile!(tile[0][tx + 1] = if y > 0 && y - 1 < n && x < n { load!(input[i - row]) } else { 0.0 });
    }
    if ty == TILE_H - 1 && bottom_edge {
        tile!(tile[TILE_H + 1][tx + 1] = if y + 1 < n && x < n { load!(input[i + row]) } else { 0.0 });
    }
    if tx == 0 && left_edge {
        tile!(tile[ty + 1][0] = if x > 0 && x - 1 < n && y < n { load!(input[i - 1]) } else { 0.0 });
    }
    if tx == TILE_W - 1 && right_edge {
        tile!(tile[ty + 1][TILE_W + 1] = if x + 1 < n && y < n { load!(input[i + 1]) } else { 0.0 });
    }
    if ty == 0 && tx < 4 {
        let r = if tx % 2 == 1 { TILE_H + 1 } else { 0 };
        let c = if tx >= 2 { TILE_W + 1 } else { 0 };
        tile!(tile[r][c] = 0.0);
    }

    cluster_sync(); // every block's own cells are in its tile

    // Phase 2, the neighbours' tiles: their row 8 is our row 0, their column 32 our column 0.
    if ty == 0 && !top_edge {
        tile!(tile[0][tx + 1] = neighbour_cell(&tile, TILE_H, tx + 1, rank - 4));
    }
    if ty == TILE_H - 1 && !bottom_edge {
        tile!(tile[TILE_H + 1][tx + 1] = neighbour_cell(&tile, 1, tx + 1, rank + 4));
    }
    if tx == 0 && !left_edge {
        tile!(tile[ty + 1][0] = neighbour_cell(&tile, ty + 1, TILE_W, rank - 1));
    }
    if tx == TILE_W - 1 && !right_edge {
        tile!(tile[ty + 1][TILE_W + 1] = neighbour_cell(&tile, ty + 1, 1, rank + 1));
    }

    cluster_sync(); // the ring is complete, and no neighbour reads this tile any more

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

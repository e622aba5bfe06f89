// stencil-2d-cluster solution: the halo a cluster neighbour already holds comes from its tile.
//
// The blocks of a 4 x 2 cluster run at the same time, and each can read the others' shared
// memory (distributed shared memory). So a block loads from global memory only its own 256
// cells and the part of its halo ring that lies on the cluster's outer edge; the rest of the
// ring it copies from the neighbours' tiles, once every block's own cells are in place.

#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#define TILE_W 32
#define TILE_H 8
#define ROW (TILE_W + 2)

extern "C" __global__ void stencil2d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    // Row r, column c of the patch; the block's own cells are rows 1..8, columns 1..32.
    __shared__ float tile[TILE_H + 2][ROW];

    cg::cluster_group cluster = cg::this_cluster();
    dim3 at = cluster.block_index();     // this block's place in its cluster
    dim3 shape = cluster.dim_blocks();   // 4 x 2 x 1
    unsigned rank = cluster.block_rank();

    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * TILE_W + tx;
    int y = blockIdx.y * TILE_H + ty;
    bool inside = x < n && y < n;
    int i = y * n + x;
    bool left_edge = at.x == 0, right_edge = at.x == shape.x - 1;
    bool top_edge = at.y == 0, bottom_edge = at.y == shape.y - 1;

    // Phase 1, global memory: the owned cell, and the ring cells on the cluster's edge.
    tile[ty + 1][tx + 1] = inside ? in[i] : 0.0f;
    if (ty == 0 && top_edge) {
        tile[0][tx + 1] = (y > 0 && y - 1 < n && x < n) ? in[i - n] : 0.0f;
    }
    if (ty == TILE_H - 1 && bottom_edge) {
        tile[TILE_H + 1][tx + 1] = (y + 1 < n && x < n) ? in[i + n] : 0.0f;
    }
    if (tx == 0 && left_edge) {
        tile[ty + 1][0] = (x > 0 && x - 1 < n && y < n) ? in[i - 1] : 0.0f;
    }
    if (tx == TILE_W - 1 && right_edge) {
        tile[ty + 1][TILE_W + 1] = (x + 1 < n && y < n) ? in[i + 1] : 0.0f;
    }
    // The corners are never read; give them a value so no read can meet undefined memory.
    if (ty == 0 && tx < 4) {
        tile[(tx & 1) ? TILE_H + 1 : 0][(tx & 2) ? TILE_W + 1 : 0] = 0.0f;
    }

    // Every block of the cluster has its own cells in its tile before anyone reads them.
    cluster.sync();

    // Phase 2, the neighbours' tiles: the rest of the ring. Their row 8 is our row 0, their
    // column 32 our column 0, and so on. Blocks past the grid's edge hold zeros, never read.
    if (ty == 0 && !top_edge) {
        const float* above = cluster.map_shared_rank(&tile[0][0], rank - shape.x);
        tile[0][tx + 1] = above[TILE_H * ROW + tx + 1];
    }
    if (ty == TILE_H - 1 && !bottom_edge) {
        const float* below = cluster.map_shared_rank(&tile[0][0], rank + shape.x);
        tile[TILE_H + 1][tx + 1] = below[1 * ROW + tx + 1];
    }
    if (tx == 0 && !left_edge) {
        const float* left = cluster.map_shared_rank(&tile[0][0], rank - 1);
        tile[ty + 1][0] = left[(ty + 1) * ROW + TILE_W];
    }
    if (tx == TILE_W - 1 && !right_edge) {
        const float* right = cluster.map_shared_rank(&tile[0][0], rank + 1);
        tile[ty + 1][TILE_W + 1] = right[(ty + 1) * ROW + 1];
    }

    // The ring is complete for this block, and no neighbour reads this tile any more: after
    // this barrier a block may return (its shared memory goes with it).
    cluster.sync();

    if (!inside) {
        return;
    }
    float centre = tile[ty + 1][tx + 1];
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {
        out[i] = centre;
        return;
    }
    float left = tile[ty + 1][tx];
    float right = tile[ty + 1][tx + 2];
    float up = tile[ty][tx + 1];
    float down = tile[ty + 2][tx + 1];
    out[i] = 0.5f * centre + 0.125f * (left + right + up + down);
}

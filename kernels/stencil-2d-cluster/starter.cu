// stencil-2d-cluster starter: the stencil-2d solution as it stands. Each 32 x 8 block loads
// its 34 x 10 patch from global memory once: its own 256 cells and the ring of 80 around them.
//
// Launched in clusters of 4 x 2 blocks, it still loads every ring cell from global memory,
// although 6 of the 8 blocks' side columns and half of their halo rows are cells a
// neighbouring block of the same cluster already holds in its tile.
//
// Two guards differ from stencil-2d's: `y - 1 < n` above and `x - 1 < n` on the left. The grid
// is rounded up to whole clusters, so a block can lie wholly past the grid's bottom or right
// edge, and the cell above or left of its first thread with it.

#define TILE_W 32
#define TILE_H 8

extern "C" __global__ void stencil2d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    // Row r, column c of the patch; the block's own cells are rows 1..8, columns 1..32.
    __shared__ float tile[TILE_H + 2][TILE_W + 2];

    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * TILE_W + tx;
    int y = blockIdx.y * TILE_H + ty;
    bool inside = x < n && y < n;
    int i = y * n + x;

    // The owned cell.
    tile[ty + 1][tx + 1] = inside ? in[i] : 0.0f;

    // Halo rows above and below: one warp each, a whole coalesced row.
    if (ty == 0) {
        tile[0][tx + 1] = (y > 0 && y - 1 < n && x < n) ? in[i - n] : 0.0f;
    }
    if (ty == TILE_H - 1) {
        tile[TILE_H + 1][tx + 1] = (y + 1 < n && x < n) ? in[i + n] : 0.0f;
    }
    // Halo columns left and right: one lane per warp, a whole sector for one float.
    if (tx == 0) {
        tile[ty + 1][0] = (x > 0 && x - 1 < n && y < n) ? in[i - 1] : 0.0f;
    }
    if (tx == TILE_W - 1) {
        tile[ty + 1][TILE_W + 1] = (x + 1 < n && y < n) ? in[i + 1] : 0.0f;
    }
    // The four corners are never read by a five-point stencil; give them a value anyway so
    // no thread can ever read undefined shared memory.
    if (ty == 0 && tx < 4) {
        tile[(tx & 1) ? TILE_H + 1 : 0][(tx & 2) ? TILE_W + 1 : 0] = 0.0f;
    }

    __syncthreads();

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

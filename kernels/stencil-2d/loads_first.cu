// stencil-2d variant for the time section: the same tile and the same sectors as the
// solution, but every global load a thread makes is issued before any of its shared stores.
//
// The solution interleaves "load, store to the tile" five times; each store waits for its
// load, so a thread's halo loads start only after its own cell has arrived. Here the loads
// go into registers first, all in flight together, then the tile is written and the block
// meets at the barrier.

extern "C" __global__ void stencil2d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float tile[10][34];

    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * 32 + tx;
    int y = blockIdx.y * 8 + ty;
    bool inside = x < n && y < n;
    int i = y * n + x;

    // Issue every load first (a lane that has no halo cell keeps 0).
    float own = inside ? in[i] : 0.0f;
    float above = (ty == 0 && y > 0 && x < n) ? in[i - n] : 0.0f;
    float below = (ty == 7 && y + 1 < n && x < n) ? in[i + n] : 0.0f;
    float west = (tx == 0 && x > 0 && y < n) ? in[i - 1] : 0.0f;
    float east = (tx == 31 && x + 1 < n && y < n) ? in[i + 1] : 0.0f;

    // Then fill the tile; the corners get a constant so nothing in it is undefined.
    tile[ty + 1][tx + 1] = own;
    if (ty == 0) tile[0][tx + 1] = above;
    if (ty == 7) tile[9][tx + 1] = below;
    if (tx == 0) tile[ty + 1][0] = west;
    if (tx == 31) tile[ty + 1][33] = east;
    if (ty == 0 && tx < 4) tile[(tx & 1) ? 9 : 0][(tx & 2) ? 33 : 0] = 0.0f;
    __syncthreads();

    if (!inside) return;
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {
        out[i] = own;
        return;
    }
    float around = tile[ty + 1][tx] + tile[ty + 1][tx + 2] + tile[ty][tx + 1] + tile[ty + 2][tx + 1];
    out[i] = 0.5f * own + 0.125f * around;
}

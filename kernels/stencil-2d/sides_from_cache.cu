// stencil-2d variant for the time section: stage the rows, leave the side columns global.
//
// The two lone-lane side loads of each warp are the tile's expensive sectors (a whole 32-byte
// sector for one float) and the reason the halo needs extra branches before the barrier. Here
// each thread reads its left and right neighbour from global memory after the barrier
// instead: they sit in the same sectors as the row it already loaded, so the L1 cache serves
// most of them, but the metric counts every request. The tile keeps the up and down rows.

extern "C" __global__ void stencil2d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float tile[10][32];

    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * 32 + tx;
    int y = blockIdx.y * 8 + ty;
    bool inside = x < n && y < n;
    int i = y * n + x;

    float own = inside ? in[i] : 0.0f;
    tile[ty + 1][tx] = own;
    if (ty == 0) tile[0][tx] = (y > 0 && x < n) ? in[i - n] : 0.0f;
    if (ty == 7) tile[9][tx] = (y + 1 < n && x < n) ? in[i + n] : 0.0f;
    __syncthreads();

    if (!inside) return;
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {
        out[i] = own;
        return;
    }
    float around = in[i - 1] + in[i + 1] + tile[ty][tx] + tile[ty + 2][tx];
    out[i] = 0.5f * own + 0.125f * around;
}

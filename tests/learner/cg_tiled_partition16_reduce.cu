// lesson: stencil-3d
// Cooperative groups: tiled_partition<16>, cg::reduce (plus / greater) to find
// whether a half-warp is entirely interior in x, tile.sync(), block.sync().
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
extern "C" __global__ void stencil3d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    cg::thread_block block = cg::this_thread_block();
    auto half = cg::tiled_partition<16>(block);
    __shared__ float tile[18][34];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * 32 + tx, y = blockIdx.y * 16 + ty;
    bool inside = x < n && y < n;
    int depth = (n + gridDim.z - 1) / gridDim.z;
    int z0 = blockIdx.z * depth, z1 = min(z0 + depth, n);
    long plane = (long)n * n;
    int border_x = (x == 0 || x >= n - 1) ? 1 : 0;
    int any_border = cg::reduce(half, border_x, cg::plus<int>());
    int max_x = cg::reduce(half, x, cg::greater<int>());
    if (max_x != x - (int)half.thread_rank() + 15) __trap();
    if (ty == 0 && tx < 4) tile[(tx & 1) ? 17 : 0][(tx & 2) ? 33 : 0] = 0.f;
    for (int z = z0; z < z1; ++z) {
        long i = z * plane + (long)y * n + x;
        tile[ty + 1][tx + 1] = inside ? in[i] : 0.f;
        if (ty == 0) tile[0][tx + 1] = (y > 0 && x < n) ? in[i - n] : 0.f;
        if (ty == 15) tile[17][tx + 1] = (y + 1 < n && x < n) ? in[i + n] : 0.f;
        if (tx == 0) tile[ty + 1][0] = (x > 0 && y < n) ? in[i - 1] : 0.f;
        if (tx == 31) tile[ty + 1][33] = (x + 1 < n && y < n) ? in[i + 1] : 0.f;
        half.sync();
        block.sync();
        if (inside) {
            float c = tile[ty + 1][tx + 1], r = c;
            bool xb = any_border ? (x == 0 || x == n - 1) : false;
            if (!(xb || y == 0 || z == 0 || y == n - 1 || z == n - 1))
                r = 0.25f * c + 0.125f * (tile[ty + 1][tx] + tile[ty + 1][tx + 2] + tile[ty][tx + 1] + tile[ty + 2][tx + 1] + in[i - plane] + in[i + plane]);
            out[i] = r;
        }
        block.sync();
    }
}

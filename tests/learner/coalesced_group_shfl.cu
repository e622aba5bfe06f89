// lesson: stencil-1d
// The lanes that need a global halo cell (lane 0 and lane 31 of each warp) form a
// cg::coalesced_group inside the divergent branch; the group checks its size/rank with
// shfl and sync before loading. Neighbours otherwise by warp shuffles.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void stencil1d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int t = threadIdx.x, i = blockIdx.x * 256 + t;
    int lane = t & 31;
    float c = i < n ? in[i] : 0.f;
    float l = __shfl_up_sync(0xffffffffu, c, 1);
    float r = __shfl_down_sync(0xffffffffu, c, 1);
    if (lane == 0 || lane == 31) {
        cg::coalesced_group g = cg::coalesced_threads();
        if (g.size() != 2) __trap();
        int other = g.shfl(lane, 1 - (int)g.thread_rank());
        if (other != 31 - lane) __trap();
        g.sync();
        if (lane == 0 && i > 0 && i < n) l = in[i - 1];
        if (lane == 31 && i + 1 < n) r = in[i + 1];
    }
    if (i >= n) return;
    if (i == 0 || i == n - 1) { out[i] = c; return; }
    out[i] = 0.5f * c + 0.25f * (l + r);
}

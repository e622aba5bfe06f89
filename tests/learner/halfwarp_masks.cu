// lesson: stencil-1d
// The 1D tile solution, plus half-warp collectives whose member mask depends on the lane
// (0x0000ffff in lanes 0-15, 0xffff0000 in lanes 16-31), the masks cg::tiled_partition<16>
// builds. Each collective's answer is checked and a wrong one traps, so the run is right
// only if every one of them is.
extern "C" __global__ void stencil1d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float tile[258];
    int t = threadIdx.x, i = blockIdx.x * 256 + t;
    unsigned lane = t & 31;
    unsigned mask = 0xffffu << (lane & 16);
    if (__reduce_add_sync(mask, 1) != 16) __trap();
    if (__shfl_sync(mask, (int)lane, 0, 16) != (int)(lane & 16)) __trap();
    if (__ballot_sync(mask, 1) != mask) __trap();
    if (__match_any_sync(mask, lane >> 4) != mask) __trap();
    __syncwarp(mask);
    tile[t + 1] = i < n ? in[i] : 0.f;
    if (t == 0) tile[0] = (i > 0 && i - 1 < n) ? in[i - 1] : 0.f;
    if (t == 255) tile[257] = (i + 1 < n) ? in[i + 1] : 0.f;
    __syncthreads();
    if (i >= n) return;
    float c = tile[t + 1];
    if (i == 0 || i == n - 1) { out[i] = c; return; }
    out[i] = 0.5f * c + 0.25f * (tile[t] + tile[t + 2]);
}

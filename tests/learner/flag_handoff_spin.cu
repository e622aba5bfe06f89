// lesson: stencil-1d
// Learner-style: instead of __syncthreads, warps hand their edge cells to the neighbouring
// warp through shared slots guarded by volatile flags; the receiving lane spins with
// __nanosleep until the flag is up (__threadfence_block between data and flag).
// Terminates on a GPU (independent thread scheduling); the emulator lets a warp that sleeps
// in such a loop give way to the others, and reports the handoff as a race (its checks know
// barriers, not flags). Block-edge halos come from global.
extern "C" __global__ void stencil1d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float lastOf[8], firstOf[8];
    __shared__ volatile int flagLast[8], flagFirst[8];
    int t = threadIdx.x, i = blockIdx.x * 256 + t;
    int lane = t & 31, w = t >> 5;
    if (t < 8) { flagLast[t] = 0; flagFirst[t] = 0; }
    __syncthreads();
    float c = i < n ? in[i] : 0.f;
    float l = __shfl_up_sync(0xffffffffu, c, 1);
    float r = __shfl_down_sync(0xffffffffu, c, 1);
    if (lane == 31) { lastOf[w] = c; __threadfence_block(); flagLast[w] = 1; }
    if (lane == 0) { firstOf[w] = c; __threadfence_block(); flagFirst[w] = 1; }
    if (lane == 0) {
        if (w == 0) l = (i > 0 && i - 1 < n) ? in[i - 1] : 0.f;
        else { while (!flagLast[w - 1]) __nanosleep(32); __threadfence_block(); l = lastOf[w - 1]; }
    }
    if (lane == 31) {
        if (w == 7) r = (i + 1 < n) ? in[i + 1] : 0.f;
        else { while (!flagFirst[w + 1]) __nanosleep(32); __threadfence_block(); r = firstOf[w + 1]; }
    }
    if (i >= n) return;
    if (i == 0 || i == n - 1) { out[i] = c; return; }
    out[i] = 0.5f * c + 0.25f * (l + r);
}

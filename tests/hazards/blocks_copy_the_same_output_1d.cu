// lesson: stencil-1d
// Every block writes out[0], the first border element, with the same value: two blocks write
// one element, but the same bits, so the result does not depend on their order. No race.
extern "C" __global__ void stencil1d(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (threadIdx.x == 0) out[0] = in[0];
    if (i >= n) return;
    float m = in[i];
    out[i] = (i == 0 || i == n - 1) ? m : 0.5f * m + 0.25f * (in[i - 1] + in[i + 1]);
}

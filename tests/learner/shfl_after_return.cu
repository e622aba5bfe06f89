// lesson: stencil-2d
// Threads outside the grid return first; the rest shuffle with a full mask. In the last
// block of a row some lanes named in the mask have exited.
extern "C" __global__ void stencil2d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 8 + threadIdx.y;
    if (x >= n || y >= n) return;
    int i = y * n + x;
    float c = in[i];
    float l = __shfl_up_sync(0xffffffffu, c, 1);
    float r = __shfl_down_sync(0xffffffffu, c, 1);
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) { out[i] = c; return; }
    if (threadIdx.x == 0) l = in[i - 1];
    if (threadIdx.x == 31) r = in[i + 1];
    out[i] = 0.5f * c + 0.125f * (l + r + in[i - n] + in[i + n]);
}

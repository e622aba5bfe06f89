// lesson: stencil-1d
// Each block also writes the first output of the next block (its right halo's output), with
// a value of its own: two blocks write one element, and which lands last decides the result.
extern "C" __global__ void stencil1d(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float m = in[i];
    out[i] = (i == 0 || i == n - 1) ? m : 0.5f * m + 0.25f * (in[i - 1] + in[i + 1]);
    if (threadIdx.x == blockDim.x - 1 && i + 1 < n - 1) out[i + 1] = (float)blockIdx.x;
}

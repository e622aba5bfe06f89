// lesson: stencil-2d
// A recursive helper (sums the four neighbours by halving the list), non-inlined.
__device__ __noinline__ float sum(const float* v, int count)
{
    if (count == 1) return v[0];
    int half = count / 2;
    return sum(v, half) + sum(v + half, count - half);
}

extern "C" __global__ void stencil2d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= n || y >= n) return;
    int i = y * n + x;
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) { out[i] = in[i]; return; }
    float v[4] = {in[i - 1], in[i + 1], in[i - n], in[i + n]};
    out[i] = 0.5f * in[i] + 0.125f * sum(v, 4);
}

// lesson: stencil-2d
// Writes the result with an atomic exchange and counts the block's border cells with a
// shared-memory atomic (the count itself is only used to decide nothing).
extern "C" __global__ void stencil2d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ int borders;
    if (threadIdx.x == 0 && threadIdx.y == 0) borders = 0;
    __syncthreads();
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    bool inside = x < n && y < n;
    int i = y * n + x;
    bool border = inside && (x == 0 || y == 0 || x == n - 1 || y == n - 1);
    if (border) atomicAdd(&borders, 1);
    __syncthreads();
    if (!inside) return;
    float v = border ? in[i] : 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n]);
    if (borders >= 0) atomicExch(&out[i], v);
}

// lesson: stencil-2d
// Zeroes the output element, then accumulates the five weighted terms with atomicAdd (the
// return value is unused, so NVRTC emits red.global.add.f32).
extern "C" __global__ void stencil2d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= n || y >= n) return;
    int i = y * n + x;
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) { out[i] = in[i]; return; }
    out[i] = 0.0f;
    atomicAdd(&out[i], 0.5f * in[i]);
    atomicAdd(&out[i], 0.125f * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n]));
}

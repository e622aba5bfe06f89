// lesson: stencil-2d
// A printf whose argument is a load used nowhere else: the GPU must still count its sectors
// when the printf is skipped (the gated call of src/gpu/printf_gate.rs).
#include <cstdio>
extern "C" __global__ void stencil2d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= n || y >= n) return;
    int i = y * n + x;
    if (x < n - 2) printf("(%d,%d) right+1 = %f\n", x, y, in[i + 2]);
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) { out[i] = in[i]; return; }
    out[i] = 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n]);
}

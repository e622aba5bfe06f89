// lesson: stencil-2d
// The starter with the printf a learner adds to see what one thread reads.
#include <cstdio>

extern "C" __global__ void stencil2d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= n || y >= n) return;
    int i = y * n + x;
    if (x == 1 && y == 1) {
        printf("n=%d block=(%d,%d) centre>0: %d tag=%s hex=%x\n", n, blockIdx.x, blockIdx.y, in[i] > 0.0f, "dbg", 255);
    }
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {
        out[i] = in[i];
        return;
    }
    out[i] = 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n]);
}

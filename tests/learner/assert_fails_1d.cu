// A learner's invariant that is wrong for the last thread: "every thread has a right
// neighbour". The assert is checked before the border test, so thread n - 1 fails it.
#include <cassert>

extern "C" __global__ void stencil1d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    assert(i + 1 < n);
    if (i == 0) {
        out[i] = in[i];
        return;
    }
    out[i] = 0.5f * in[i] + 0.25f * (in[i - 1] + in[i + 1]);
}

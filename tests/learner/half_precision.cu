// lesson: stencil-2d
// Does the weighting in half precision and converts back: the result is off by more than
// the lesson's tolerance, so this is expected to fail with wrong results, not to crash.
#include <cuda_fp16.h>

extern "C" __global__ void stencil2d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= n || y >= n) return;
    int i = y * n + x;
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) { out[i] = in[i]; return; }
    __half c = __float2half(in[i]);
    __half s = __hadd(__hadd(__float2half(in[i - 1]), __float2half(in[i + 1])),
                      __hadd(__float2half(in[i - n]), __float2half(in[i + n])));
    __half r = __hfma(__float2half(0.125f), s, __hmul(__float2half(0.5f), c));
    out[i] = __half2float(r);
}

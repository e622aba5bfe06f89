// lesson: stencil-1d
// Each thread loads its element through a float4 view when it can, else scalar.
extern "C" __global__ void stencil1d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (i == 0 || i == n - 1) { out[i] = in[i]; return; }
    float c;
    int q = i & ~3;
    if (q + 3 < n) {
        float4 v = reinterpret_cast<const float4*>(in)[q >> 2];
        float a[4] = {v.x, v.y, v.z, v.w};
        c = a[i & 3];
    } else {
        c = in[i];
    }
    out[i] = 0.5f * c + 0.25f * (__ldg(in + i - 1) + __ldg(in + i + 1));
}

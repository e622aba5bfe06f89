// lesson: stencil-1d
// Each output written twice: a sentinel, then the value through a float atomic max built
// from atomicCAS, with a __threadfence between. Correct, and expensive in sectors.
__device__ float atomic_max_float(float* addr, float v)
{
    int* p = (int*)addr;
    int old = *p, assumed;
    do {
        assumed = old;
        if (__int_as_float(assumed) >= v) break;
        old = atomicCAS(p, assumed, __float_as_int(v));
    } while (assumed != old);
    return __int_as_float(old);
}
extern "C" __global__ void stencil1d(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = (i == 0 || i == n - 1) ? in[i] : 0.5f * in[i] + 0.25f * (in[i - 1] + in[i + 1]);
    out[i] = -1e30f;
    __threadfence();
    atomic_max_float(out + i, v);
}

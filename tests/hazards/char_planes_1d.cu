// lesson: stencil-1d
// A tile of bytes: each float is kept as four 1-byte cells in four arrays, so four
// neighbouring threads write the four bytes of one word. Exact results, no race.
extern "C" __global__ void stencil1d(const float* in, float* out, int n)
{
    __shared__ unsigned char b0[258], b1[258], b2[258], b3[258];
    int t = threadIdx.x, i = blockIdx.x * 256 + t;
    for (int k = t; k < 258; k += 256) {
        int g = blockIdx.x * 256 - 1 + k;
        unsigned v = __float_as_uint(g >= 0 && g < n ? in[g] : 0.0f);
        b0[k] = v; b1[k] = v >> 8; b2[k] = v >> 16; b3[k] = v >> 24;
    }
    __syncthreads();
    if (i >= n) return;
    auto at = [&](int k) { return __uint_as_float(b0[k] | (b1[k] << 8) | (b2[k] << 16) | ((unsigned)b3[k] << 24)); };
    out[i] = (i == 0 || i == n - 1) ? at(t + 1) : 0.5f * at(t + 1) + 0.25f * (at(t) + at(t + 2));
}

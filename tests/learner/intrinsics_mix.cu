// lesson: stencil-1d
// Not a stencil: a kernel for the 1D lesson's signature that calls the integer and float
// intrinsics and math functions a learner might reach for (24-bit and high multiplies, sums
// of absolute differences, halving adds, find-first-set, byte permutes, funnel shifts,
// directed rounding, fmodf, libdevice's transcendental functions). Some of them once stopped
// the emulator with "not supported"; tests/learner.rs wants it to run to a verdict.
// scripts/device/checks/learner-values.sh compares the values it writes on the GPU and the
// emulator. The `.approx` intrinsics (__expf, __fdividef) are left out: the emulator models
// them within the ISA's error bound, not bit for bit.
extern "C" __global__ void stencil1d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned u = __float_as_uint(in[i]);
    unsigned v = __float_as_uint(in[(i + 1) % n]);
    int s = (int)u, t = (int)v;
    unsigned acc = 0;
    acc += __umul24(u, v) + (unsigned)__mul24(s, t);
    acc ^= __umulhi(u, v) + (unsigned)__mulhi(s, t);
    acc += __sad(s, t, 3u) + __usad(u, v, 5u);
    acc ^= (unsigned)__hadd(s, t) + (unsigned)__rhadd(s, t) + __uhadd(u, v) + __urhadd(u, v);
    acc += __ffs(s) + __ffsll((long long)s << 7) + __clzll((long long)u) + __popcll((unsigned long long)u * v);
    acc ^= __byte_perm(u, v, 0x5140) + __brevll((unsigned long long)u) ;
    acc += __funnelshift_lc(u, v, t) + __funnelshift_rc(u, v, s);
    acc += (unsigned)abs(s) + (unsigned)llabs((long long)s * 3);
    float x = in[i], y = in[(i + 1) % n];
    float f = __saturatef(x) + fminf(x, y) + fmaxf(x, y) + copysignf(x, y);
    f += __fsqrt_rn(fabsf(x)) + __frcp_rn(y + 3.0f) + rintf(x * 10.f) + truncf(x * 7.f);
    f += floorf(y * 3.f) + ceilf(x * 5.f) + roundf(y * 9.f) + fmodf(x, 0.3f);
    f += (float)(double(x) * 1.5) + (float)__double2int_rn(double(y) * 100.0) + __int2float_rz(s >> 8) + __uint2float_rd(u >> 4);
    f += sinf(x) + cosf(y) + exp2f(x) + log2f(fabsf(x) + 1.f) + powf(fabsf(x), 0.5f) + tanhf(y) + erff(x) + cbrtf(y);
    f += (float)__popc(u & v) + (float)__clz(v);
    out[i] = f + __uint_as_float((acc & 0x007fffffu) | 0x3f800000u);
}

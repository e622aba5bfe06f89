// lesson: stencil-1d
// Two inline-asm helpers that each declare a predicate `p` and a temporary `t` in a
// `{ }` block of their own, the way PTX snippets are copied from forums. PTX scopes each
// declaration to its block; both helpers are inlined into one kernel, so the names repeat.

__device__ __forceinline__ float pick_if_positive(int flag, float a, float b)
{
    float r;
    asm("{\n\t.reg .pred p;\n\t.reg .f32 t;\n\tsetp.gt.s32 p, %1, 0;\n\tmov.f32 t, %3;\n\tselp.f32 %0, %2, t, p;\n\t}"
        : "=f"(r)
        : "r"(flag), "f"(a), "f"(b));
    return r;
}

__device__ __forceinline__ int is_edge(int i, int n)
{
    int r;
    asm("{\n\t.reg .pred p;\n\t.reg .pred q;\n\tsetp.eq.s32 p, %1, 0;\n\tsetp.eq.s32 q, %1, %2;\n\tor.pred p, p, q;\n\tselp.s32 %0, 1, 0, p;\n\t}"
        : "=r"(r)
        : "r"(i), "r"(n - 1));
    return r;
}

extern "C" __global__ void stencil1d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    int edge = is_edge(i, n);
    float centre = in[i];
    float interior = edge ? 0.0f : 0.5f * centre + 0.25f * (in[i - 1] + in[i + 1]);
    out[i] = pick_if_positive(edge, centre, interior);
}

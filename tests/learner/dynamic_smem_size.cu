// lesson: stencil-1d
// A learner checking, with inline PTX, how much dynamic shared memory the harness gave the
// launch before relying on it (the 1D contract gives none). The value is folded into every
// output, so any value but the H200's (0 bytes here) makes every element wrong.

extern "C" __global__ void stencil1d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    unsigned dynamic_bytes;
    asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dynamic_bytes));
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float extra = (float)dynamic_bytes;
    if (i == 0 || i == n - 1) {
        out[i] = in[i] + extra;
        return;
    }
    out[i] = 0.5f * in[i] + 0.25f * (in[i - 1] + in[i + 1]) + extra;
}

// Two st.global instructions to the same 4 sectors count as 8: instruction identity is kept.
extern "C" __global__ void k(const float* in, float* out, int n)
{
    volatile float* o = out;
    o[threadIdx.x] = 1.0f;
    o[threadIdx.x] = 2.0f;
}

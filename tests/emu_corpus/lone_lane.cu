// Only lane 0 is active: one float still costs one whole sector each way.
extern "C" __global__ void k(const float* in, float* out, int n)
{
    if (threadIdx.x == 0) {
        out[0] = in[0];
    }
}

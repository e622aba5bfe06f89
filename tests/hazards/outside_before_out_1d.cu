// lesson: stencil-1d
// fault: 8 bytes before the start of `out`
// Thread 5 of block 0 makes one bad access (after the comment below); every other thread does the lesson's
// work. Two floats before the output.
extern "C" __global__ void stencil1d(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float m = in[i];
    out[i] = (i == 0 || i == n - 1) ? m : 0.5f * m + 0.25f * (in[i - 1] + in[i + 1]);
    volatile float* p = out;
    if (i == 5) {
        // the bad access:
        out[-2] = 1.0f;
    }
}

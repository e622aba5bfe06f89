// lesson: stencil-1d
// fault: misaligned read of 4 bytes
// Thread 5 of block 0 makes one bad access (after the comment below); every other thread does the lesson's
// work. A float read two bytes into the input: misaligned.
extern "C" __global__ void stencil1d(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float m = in[i];
    out[i] = (i == 0 || i == n - 1) ? m : 0.5f * m + 0.25f * (in[i - 1] + in[i + 1]);
    volatile float* p = out;
    if (i == 5) {
        // the bad access:
        out[i] = *(const float*)((const char*)in + 2);
    }
}

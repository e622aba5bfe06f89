// lesson: stencil-1d
// fault: 12 bytes past the end of `in`
// Thread 5 of block 0 makes one bad access (after the comment below); every other thread does the lesson's
// work. Past the end of `in` (the buffers lie 1 MiB apart, so this is still in the gap).
extern "C" __global__ void stencil1d(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float m = in[i];
    out[i] = (i == 0 || i == n - 1) ? m : 0.5f * m + 0.25f * (in[i - 1] + in[i + 1]);
    volatile float* p = out;
    if (i == 5) {
        // the bad access:
        out[i] = in[n + 3];
    }
}

// lesson: stencil-1d
// fault: out-of-bounds local read
// Thread 5 of block 0 makes one bad access (after the comment below); every other thread does the lesson's
// work. Far past a local array. On the GPU a thread's local window is its stack (1 KiB by
// default), so only a read beyond that is a memcheck error there.
extern "C" __global__ void stencil1d(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float m = in[i];
    out[i] = (i == 0 || i == n - 1) ? m : 0.5f * m + 0.25f * (in[i - 1] + in[i + 1]);
    volatile float* p = out;
    if (i == 5) {
        // the bad access:
        float a[4]; for (int k = 0; k < 4; ++k) a[k] = in[k]; volatile int j = 100000; out[i] = a[j];
    }
}

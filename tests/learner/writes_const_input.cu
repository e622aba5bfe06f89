// lesson: stencil-1d
// The tiled 1D stencil, then each thread scribbles over its own input cell through a cast
// (learners reuse the input as scratch space). Only cells no other block reads are touched,
// so the output is right on the H200, whose input copy on the host never changes: the
// emulator must verify against the input the kernel was given, not the scribbled one.

#define BLOCK 256

extern "C" __global__ void stencil1d(const float* in, float* out, int n)
{
    __shared__ float tile[BLOCK + 2];
    int t = threadIdx.x;
    int i = blockIdx.x * BLOCK + t;
    bool inside = i < n;

    tile[t + 1] = inside ? in[i] : 0.0f;
    if (t == 0) {
        tile[0] = i > 0 ? in[i - 1] : 0.0f;
    }
    if (t == BLOCK - 1) {
        tile[BLOCK + 1] = i + 1 < n ? in[i + 1] : 0.0f;
    }
    __syncthreads();
    if (!inside) {
        return;
    }
    float centre = tile[t + 1];
    out[i] = (i == 0 || i == n - 1) ? centre : 0.5f * centre + 0.25f * (tile[t] + tile[t + 2]);
    if (t > 0 && t < BLOCK - 1) {
        ((float*)in)[i] = -1.0f;
    }
}

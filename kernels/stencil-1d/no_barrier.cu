// stencil-1d variant without the barrier: a thread may read its neighbour's tile cell before
// the neighbour has written it. On a GPU this can still come out right by luck of timing,
// so the emulator's race check is what catches it (a shared-memory race, line by line).

#define BLOCK 256

extern "C" __global__ void stencil1d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float tile[BLOCK + 2];

    int t = threadIdx.x;
    int i = blockIdx.x * BLOCK + t;
    bool inside = i < n;

    tile[t + 1] = inside ? in[i] : 0.0f;
    if (t == 0) {
        tile[0] = (i > 0 && i - 1 < n) ? in[i - 1] : 0.0f;
    }
    if (t == BLOCK - 1) {
        tile[BLOCK + 1] = (i + 1 < n) ? in[i + 1] : 0.0f;
    }
    // BUG: no __syncthreads() here.

    if (!inside) {
        return;
    }
    float centre = tile[t + 1];
    if (i == 0 || i == n - 1) {
        out[i] = centre;
        return;
    }
    out[i] = 0.5f * centre + 0.25f * (tile[t] + tile[t + 2]);
}

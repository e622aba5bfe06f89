// stencil-1d variant that stages the block's own cells but forgets the two halo cells:
// the first and last thread of every block read tile[0] / tile[BLOCK + 1], which nobody
// wrote. Their outputs are wrong, and the emulator reports the uninitialised reads.

#define BLOCK 256

extern "C" __global__ void stencil1d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float tile[BLOCK + 2];

    int t = threadIdx.x;
    int i = blockIdx.x * BLOCK + t;
    bool inside = i < n;

    tile[t + 1] = inside ? in[i] : 0.0f;
    __syncthreads();

    if (!inside) {
        return;
    }
    float centre = tile[t + 1];
    if (i == 0 || i == n - 1) {
        out[i] = centre;
        return;
    }
    out[i] = 0.5f * centre + 0.25f * (tile[t] + tile[t + 2]);  // BUG: tile[0], tile[BLOCK + 1]
}

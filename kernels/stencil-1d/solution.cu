// stencil-1d solution: a 1D tile of 256 owned cells plus one halo cell at each end.
//
// Each thread loads its own cell once; the first and last thread of the block also load the
// cell just outside the block. After one barrier, all three reads come from shared memory.

#define BLOCK 256

extern "C" __global__ void stencil1d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    // tile[0] and tile[BLOCK + 1] are the halo; tile[1..BLOCK] the block's own cells.
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
    __syncthreads();

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

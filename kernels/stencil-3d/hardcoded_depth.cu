// stencil-3d variant with a hard-coded depth: it computes the planes per block for the
// profile size once, by hand, as 256 / 3 = 85, instead of deriving them from n and gridDim.z.
// Three chunks of 85 planes cover z = 0..254, so at n = 256 the last plane is never written
// and the poisoned output gives it away. (Smaller sizes happen to be covered.)

#define TILE_W 32
#define TILE_H 16

extern "C" __global__ void stencil3d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float tile[TILE_H + 2][TILE_W + 2];

    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * TILE_W + tx;
    int y = blockIdx.y * TILE_H + ty;
    bool inside = x < n && y < n;

    const int depth = 85;  // BUG: 256 / 3, rounded down, and fixed for every n
    int z_begin = blockIdx.z * depth;
    int z_end = min(z_begin + depth, n);
    long plane = (long)n * n;

    if (ty == 0 && tx < 4) {
        tile[(tx & 1) ? TILE_H + 1 : 0][(tx & 2) ? TILE_W + 1 : 0] = 0.0f;
    }

    for (int z = z_begin; z < z_end; ++z) {
        long i = z * plane + (long)y * n + x;
        tile[ty + 1][tx + 1] = inside ? in[i] : 0.0f;
        if (ty == 0) {
            tile[0][tx + 1] = (y > 0 && x < n) ? in[i - n] : 0.0f;
        }
        if (ty == TILE_H - 1) {
            tile[TILE_H + 1][tx + 1] = (y + 1 < n && x < n) ? in[i + n] : 0.0f;
        }
        if (tx == 0) {
            tile[ty + 1][0] = (x > 0 && y < n) ? in[i - 1] : 0.0f;
        }
        if (tx == TILE_W - 1) {
            tile[ty + 1][TILE_W + 1] = (x + 1 < n && y < n) ? in[i + 1] : 0.0f;
        }
        __syncthreads();
        if (inside) {
            float centre = tile[ty + 1][tx + 1];
            float result = centre;
            if (!(x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1)) {
                float in_plane = tile[ty + 1][tx] + tile[ty + 1][tx + 2] + tile[ty][tx + 1] + tile[ty + 2][tx + 1];
                result = 0.25f * centre + 0.125f * (in_plane + in[i - plane] + in[i + plane]);
            }
            out[i] = result;
        }
        __syncthreads();
    }
}

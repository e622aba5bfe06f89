// stencil-3d-registers solution: sweep z with the column's three planes in registers.
//
// Each thread keeps behind, centre and ahead for its (x, y) in registers. At every z step it
// loads only `ahead` from global memory; the current plane is staged in the tile from the
// `centre` register (plus the halo ring, which neighbouring blocks own), the four in-plane
// neighbours come from the tile, and the depth neighbours are the two registers. Then the
// registers rotate: behind <- centre <- ahead. Each plane is read from global memory once.

#define TILE_W 32
#define TILE_H 16

extern "C" __global__ void stencil3d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float tile[TILE_H + 2][TILE_W + 2];

    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * TILE_W + tx;
    int y = blockIdx.y * TILE_H + ty;
    bool inside = x < n && y < n;

    int depth = (n + gridDim.z - 1) / gridDim.z;
    int z_begin = blockIdx.z * depth;
    int z_end = min(z_begin + depth, n);
    long plane = (long)n * n;
    long column = (long)y * n + x;  // this thread's offset inside every plane

    if (ty == 0 && tx < 4) {
        tile[(tx & 1) ? TILE_H + 1 : 0][(tx & 2) ? TILE_W + 1 : 0] = 0.0f;
    }

    // Prime the registers with the planes before and at the chunk's first z.
    float behind = 0.0f, centre = 0.0f, ahead = 0.0f;
    if (inside && z_begin < z_end) {
        centre = in[z_begin * plane + column];
        if (z_begin > 0) {
            behind = in[(z_begin - 1) * plane + column];
        }
    }

    for (int z = z_begin; z < z_end; ++z) {
        long i = z * plane + column;
        if (inside && z + 1 < n) {
            ahead = in[i + plane];  // the only load of this thread's own cells
        }

        tile[ty + 1][tx + 1] = centre;  // 0 for threads outside the grid
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
            float result = centre;
            if (!(x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1)) {
                float in_plane = tile[ty + 1][tx] + tile[ty + 1][tx + 2] + tile[ty][tx + 1] + tile[ty + 2][tx + 1];
                result = 0.25f * centre + 0.125f * (in_plane + behind + ahead);
            }
            out[i] = result;
        }
        __syncthreads();

        behind = centre;
        centre = ahead;
    }
}

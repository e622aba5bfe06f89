// stencil-2d variant for the time section: all 256 threads fill the 34 x 10 patch together,
// cell k of the patch by thread k, k + 256, ... (340 cells: two passes, the second with 84
// threads), so no warp has a lone-lane side load and there is one code path to the barrier.
// Each row of the patch starts one float left of a sector boundary, so a row costs 6
// sectors instead of 4 and a warp's 32 lanes can span two rows: more sectors than the
// solution, fewer branches.

extern "C" __global__ void stencil2d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float tile[10][34];

    int tx = threadIdx.x, ty = threadIdx.y;
    int x0 = blockIdx.x * 32 - 1;  // the patch's column 0 on the grid
    int y0 = blockIdx.y * 8 - 1;   // the patch's row 0 on the grid
    for (int k = ty * 32 + tx; k < 340; k += 256) {
        int r = k / 34, c = k % 34;
        int gx = x0 + c, gy = y0 + r;
        tile[r][c] = (gx >= 0 && gx < n && gy >= 0 && gy < n) ? in[gy * n + gx] : 0.0f;
    }
    __syncthreads();

    int x = x0 + 1 + tx, y = y0 + 1 + ty;
    if (x >= n || y >= n) return;
    int i = y * n + x;
    float centre = tile[ty + 1][tx + 1];
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {
        out[i] = centre;
        return;
    }
    float around = tile[ty + 1][tx] + tile[ty + 1][tx + 2] + tile[ty][tx + 1] + tile[ty + 2][tx + 1];
    out[i] = 0.5f * centre + 0.125f * around;
}

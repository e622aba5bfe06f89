// lesson: stencil-2d
// The tile is filled by all eight warps, but the barrier after it is __syncwarp(), which
// orders only the lanes of one warp: the up and down reads race with other warps' writes.
extern "C" __global__ void stencil2d(const float* in, float* out, int n)
{
    __shared__ float cells[10][34];
    int c = threadIdx.x + 1, r = threadIdx.y + 1;
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
    int at = y * n + x;
    bool mine = x < n && y < n;
    cells[r][c] = mine ? in[at] : 0.0f;
    if (c == 1) cells[r][0] = (mine && x > 0) ? in[at - 1] : 0.0f;
    if (c == 32) cells[r][33] = (x + 1 < n && y < n) ? in[at + 1] : 0.0f;
    if (r == 1) cells[0][c] = (x < n && y > 0) ? in[at - n] : 0.0f;
    if (r == 8) cells[9][c] = (x < n && y + 1 < n) ? in[at + n] : 0.0f;
    __syncwarp();
    if (!mine) return;
    float centre = cells[r][c];
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {
        out[at] = centre;
    } else {
        out[at] = 0.5f * centre + 0.125f * (cells[r][c - 1] + cells[r][c + 1] + cells[r - 1][c] + cells[r + 1][c]);
    }
}

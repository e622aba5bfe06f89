// lesson: stencil-2d
// Hopper's bulk copy, row by row: when every row starts on a 16-byte boundary (n a multiple
// of 4) one thread per row moves the block's 10 rows of 32 floats with cp.async.bulk into a
// tile whose rows are 16-byte aligned; otherwise plain loads. Side columns are plain loads.
#include <cuda/ptx>
namespace ptx = cuda::ptx;

extern "C" __global__ void stencil2d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    // Row r of the patch at tile[r][4..35]: column 3 is the left halo, 36 the right one.
    __shared__ alignas(16) float tile[10][40];
    __shared__ alignas(8) unsigned long long bar;
    int tx = threadIdx.x, ty = threadIdx.y;
    int x0 = blockIdx.x * 32, y0 = blockIdx.y * 8;
    int x = x0 + tx, y = y0 + ty;
    bool inside = x < n && y < n;
    int i = y * n + x;
    bool bulk = (n % 4 == 0) && x0 + 32 <= n && y0 + 8 <= n && y0 > 0 && y0 + 8 < n;
    if (tx == 0 && ty == 0) {
        ptx::mbarrier_init(&bar, 1);
        ptx::fence_proxy_async(ptx::space_shared);
    }
    __syncthreads();
    if (bulk) {
        if (tx == 0 && ty == 0) {
            ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar, 10 * 128);
        }
        __syncthreads();  // the expected bytes are set before any copy can complete
        if (tx == 0) {
            // Rows y0-1 .. y0+8: ty 0..7 take rows 1..8, and ty 0 and 7 also the halo rows.
            ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, &tile[ty + 1][4], in + (long)y * n + x0, 128, &bar);
            if (ty == 0) ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, &tile[0][4], in + (long)(y - 1) * n + x0, 128, &bar);
            if (ty == 7) ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, &tile[9][4], in + (long)(y + 1) * n + x0, 128, &bar);
        }
    } else {
        tile[ty + 1][tx + 4] = inside ? in[i] : 0.0f;
        if (ty == 0) tile[0][tx + 4] = (y > 0 && x < n) ? in[i - n] : 0.0f;
        if (ty == 7) tile[9][tx + 4] = (y + 1 < n && x < n) ? in[i + n] : 0.0f;
    }
    if (tx == 0) tile[ty + 1][3] = (x > 0 && y < n) ? in[i - 1] : 0.0f;
    if (tx == 31) tile[ty + 1][36] = (x + 1 < n && y < n) ? in[i + 1] : 0.0f;
    if (bulk) {
        while (!ptx::mbarrier_try_wait_parity(&bar, 0)) {}
    }
    __syncthreads();
    if (!inside) return;
    float c = tile[ty + 1][tx + 4];
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) { out[i] = c; return; }
    out[i] = 0.5f * c + 0.125f * (tile[ty + 1][tx + 3] + tile[ty + 1][tx + 5] + tile[ty][tx + 4] + tile[ty + 2][tx + 4]);
}

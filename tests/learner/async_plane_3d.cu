// lesson: stencil-3d
// The plane tile staged with __pipeline_memcpy_async, one plane at a time: each thread
// issues its copies, commits them, waits for its own, then the barrier makes everyone's
// visible. Behind and ahead stay global loads.
#include <cuda_pipeline.h>

extern "C" __global__ void stencil3d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float plane_tile[18][34];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * 32 + tx, y = blockIdx.y * 16 + ty;
    bool inside = x < n && y < n;
    int per_block = (n + gridDim.z - 1) / gridDim.z;
    int z0 = blockIdx.z * per_block, z1 = min(z0 + per_block, n);
    long plane = (long)n * n;
    if (ty == 0 && tx < 4) plane_tile[(tx & 1) ? 17 : 0][(tx & 2) ? 33 : 0] = 0.0f;
    for (int z = z0; z < z1; z++) {
        long i = z * plane + (long)y * n + x;
        if (inside) __pipeline_memcpy_async(&plane_tile[ty + 1][tx + 1], &in[i], 4);
        else plane_tile[ty + 1][tx + 1] = 0.0f;
        if (ty == 0) {
            if (y > 0 && x < n) __pipeline_memcpy_async(&plane_tile[0][tx + 1], &in[i - n], 4);
            else plane_tile[0][tx + 1] = 0.0f;
        }
        if (ty == 15) {
            if (y + 1 < n && x < n) __pipeline_memcpy_async(&plane_tile[17][tx + 1], &in[i + n], 4);
            else plane_tile[17][tx + 1] = 0.0f;
        }
        if (tx == 0) {
            if (x > 0 && y < n) __pipeline_memcpy_async(&plane_tile[ty + 1][0], &in[i - 1], 4);
            else plane_tile[ty + 1][0] = 0.0f;
        }
        if (tx == 31) {
            if (x + 1 < n && y < n) __pipeline_memcpy_async(&plane_tile[ty + 1][33], &in[i + 1], 4);
            else plane_tile[ty + 1][33] = 0.0f;
        }
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();
        if (inside) {
            float c = plane_tile[ty + 1][tx + 1];
            if (x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1) {
                out[i] = c;
            } else {
                float s = plane_tile[ty + 1][tx] + plane_tile[ty + 1][tx + 2] + plane_tile[ty][tx + 1] + plane_tile[ty + 2][tx + 1];
                out[i] = 0.25f * c + 0.125f * (s + in[i - plane] + in[i + plane]);
            }
        }
        __syncthreads();
    }
}

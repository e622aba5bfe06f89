// lesson: stencil-2d
// cuda::memcpy_async with a thread-scope cuda::pipeline from libcu++.
#include <cuda/pipeline>

extern "C" __global__ void stencil2d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float tile[10][34];
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * 32 + tx, y = blockIdx.y * 8 + ty;
    bool inside = x < n && y < n;
    int i = y * n + x;
    pipe.producer_acquire();
    if (inside) cuda::memcpy_async(&tile[ty + 1][tx + 1], &in[i], sizeof(float), pipe);
    else tile[ty + 1][tx + 1] = 0.0f;
    if (ty == 0) {
        if (y > 0 && x < n) cuda::memcpy_async(&tile[0][tx + 1], &in[i - n], sizeof(float), pipe);
        else tile[0][tx + 1] = 0.0f;
    }
    if (ty == 7) {
        if (y + 1 < n && x < n) cuda::memcpy_async(&tile[9][tx + 1], &in[i + n], sizeof(float), pipe);
        else tile[9][tx + 1] = 0.0f;
    }
    if (tx == 0) tile[ty + 1][0] = (x > 0 && y < n) ? in[i - 1] : 0.0f;
    if (tx == 31) tile[ty + 1][33] = (x + 1 < n && y < n) ? in[i + 1] : 0.0f;
    pipe.producer_commit();
    pipe.consumer_wait();
    __syncthreads();
    pipe.consumer_release();
    if (!inside) return;
    float c = tile[ty + 1][tx + 1];
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) { out[i] = c; return; }
    out[i] = 0.5f * c + 0.125f * (tile[ty + 1][tx] + tile[ty + 1][tx + 2] + tile[ty][tx + 1] + tile[ty + 2][tx + 1]);
}

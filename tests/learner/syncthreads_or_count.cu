// lesson: stencil-2d
// A tile kernel that asks its block questions at the barrier: `__syncthreads_or` (does any
// thread sit on the border?) and `__syncthreads_count` (how many are inside?). NVRTC wraps
// each in a `{ }` block that declares `%p1` and `%p2` again; the emulator once mixed those
// up with the function's own `%p1` and crashed. The answers feed an unreachable printf.
#include <cstdio>
extern "C" __global__ void stencil2d(const float* in, float* out, int n)
{
    __shared__ float t[8][32];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
    bool inside = x < n && y < n;
    t[threadIdx.y][threadIdx.x] = inside ? in[y * n + x] : 0.0f;
    int any_border = __syncthreads_or(inside && (x == 0 || y == 0 || x == n - 1 || y == n - 1));
    int count = __syncthreads_count(inside);
    if (!inside) return;
    int i = y * n + x;
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) { out[i] = in[i]; return; }
    float left = threadIdx.x > 0 ? t[threadIdx.y][threadIdx.x - 1] : in[i - 1];
    float right = threadIdx.x < 31 ? t[threadIdx.y][threadIdx.x + 1] : in[i + 1];
    float up = threadIdx.y > 0 ? t[threadIdx.y - 1][threadIdx.x] : in[i - n];
    float down = threadIdx.y < 7 ? t[threadIdx.y + 1][threadIdx.x] : in[i + n];
    if (count == 0 && any_border < 0) printf("never\n");
    out[i] = 0.5f * t[threadIdx.y][threadIdx.x] + 0.125f * (left + right + up + down);
}

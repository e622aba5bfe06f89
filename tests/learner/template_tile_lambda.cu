// lesson: stencil-2d
// The 2D tile written with C++ a learner might bring: a templated tile struct, a templated
// accessor, constexpr sizes, a capturing lambda that clamps its loads, `#pragma unroll` and
// `__launch_bounds__`.
template <int BX, int BY>
struct Tile {
    float v[BY + 2][BX + 2];
};

template <int BX, int BY>
__device__ __forceinline__ float at(const Tile<BX, BY>& t, int r, int c) { return t.v[r][c]; }

extern "C" __global__ void __launch_bounds__(256) stencil2d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    constexpr int BX = 32, BY = 8;
    __shared__ Tile<BX, BY> tile;
    const int x = blockIdx.x * BX + threadIdx.x;
    const int y = blockIdx.y * BY + threadIdx.y;
    auto load = [&](int gx, int gy) -> float {
        gx = max(0, min(gx, n - 1));
        gy = max(0, min(gy, n - 1));
        return in[gy * n + gx];
    };
    tile.v[threadIdx.y + 1][threadIdx.x + 1] = load(x, y);
    if (threadIdx.x == 0) tile.v[threadIdx.y + 1][0] = load(x - 1, y);
    if (threadIdx.x == BX - 1) tile.v[threadIdx.y + 1][BX + 1] = load(x + 1, y);
    if (threadIdx.y == 0) tile.v[0][threadIdx.x + 1] = load(x, y - 1);
    if (threadIdx.y == BY - 1) tile.v[BY + 1][threadIdx.x + 1] = load(x, y + 1);
    __syncthreads();
    if (x >= n || y >= n) return;
    const int i = y * n + x;
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) { out[i] = tile.v[threadIdx.y + 1][threadIdx.x + 1]; return; }
    const int r = threadIdx.y + 1, c = threadIdx.x + 1;
    float s = 0.f;
#pragma unroll
    for (int d = -1; d <= 1; d += 2) s += at(tile, r, c + d) + at(tile, r + d, c);
    out[i] = 0.5f * at(tile, r, c) + 0.125f * s;
}

// lesson: stencil-1d
// Hopper's bulk copy (TMA, one-dimensional): thread 0 moves the block's whole run of floats
// into shared memory with one cp.async.bulk, completed through a cuda::barrier that also
// counts the bytes; the two halo cells and a ragged tail are plain loads.
#include <cuda/barrier>
namespace cde = cuda::device::experimental;
using block_barrier = cuda::barrier<cuda::thread_scope_block>;

#define BLOCK 256

extern "C" __global__ void stencil1d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    // Own cells at tile[4 .. 4+BLOCK): 16-byte aligned, as the bulk copy needs.
    __shared__ alignas(16) float tile[BLOCK + 8];
    #pragma nv_diag_suppress static_var_with_dynamic_init
    __shared__ block_barrier bar;

    int t = threadIdx.x;
    int base = blockIdx.x * BLOCK;
    int i = base + t;
    int count = min(BLOCK, n - base);
    int bulk = count & ~3;               // whole 16-byte chunks
    if (t == 0) {
        init(&bar, blockDim.x);
        cde::fence_proxy_async_shared_cta();
    }
    __syncthreads();

    block_barrier::arrival_token token;
    if (t == 0) {
        if (bulk > 0) cde::cp_async_bulk_global_to_shared(&tile[4], in + base, bulk * sizeof(float), bar);
        token = cuda::device::barrier_arrive_tx(bar, 1, bulk * sizeof(float));
    } else {
        token = bar.arrive();
    }
    if (t >= bulk) tile[4 + t] = (i < n) ? in[i] : 0.0f;
    if (t == 0) tile[3] = (i > 0) ? in[i - 1] : 0.0f;
    if (t == BLOCK - 1) tile[4 + BLOCK] = (i + 1 < n) ? in[i + 1] : 0.0f;
    bar.wait(std::move(token));
    __syncthreads();

    if (i >= n) return;
    float c = tile[4 + t];
    if (i == 0 || i == n - 1) { out[i] = c; return; }
    out[i] = 0.5f * c + 0.25f * (tile[3 + t] + tile[5 + t]);
}

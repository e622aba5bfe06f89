// Device probe (nvcc on the lent H100/H200): facts the emulator's model of Hopper's async
// copies and clusters rests on, each kernel launched once so ncu and compute-sanitizer can
// look at it alone. Built and run by scripts/device/checks/probe-async-cluster.sh.
//   bulk      one cp.async.bulk of 4 KiB per block into shared memory (mbarrier completion),
//             then plain loads of the same bytes: does smsp__sass_sectors_mem_global count
//             the bulk copy?
//   cpasync   cp.async of 4 and 16 bytes per lane, and one with src-size 0 (zero fill)
//   early     a block of a cluster reads its neighbour's tile before cluster.sync (racecheck)
//   exitread  a block exits while its neighbour still reads its shared memory
//   assert    a failing device assert (what the card prints)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cassert>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); } } while (0)

__global__ void bulk(const float* in, float* out)
{
    __shared__ alignas(16) float buf[1024];
    __shared__ alignas(8) unsigned long long bar;
    unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
    unsigned d = (unsigned)__cvta_generic_to_shared(buf);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared.b64 [%0], 1;" :: "r"(b));
        asm volatile("fence.proxy.async.shared::cta;");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], 4096; }" :: "r"(b));
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 4096, [%2];"
                     :: "r"(d), "l"(in + blockIdx.x * 1024), "r"(b) : "memory");
    }
    unsigned done = 0;
    while (!done) {
        asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                     : "=r"(done) : "r"(b), "r"(0u) : "memory");
    }
    float s = 0;
    for (int k = threadIdx.x; k < 1024; k += blockDim.x) s += buf[k];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void cpasync(const float* in, float* out, int mode)
{
    __shared__ alignas(16) float buf[4 * 256];
    unsigned d = (unsigned)__cvta_generic_to_shared(&buf[threadIdx.x * 4]);
    const float* src = in + blockIdx.x * 1024 + threadIdx.x * 4;
    if (mode == 0) asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(d), "l"(src));
    if (mode == 1) asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(d), "l"(src));
    if (mode == 2) asm volatile("cp.async.ca.shared.global [%0], [%1], 4, 0;" :: "r"(d), "l"(src));
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = buf[threadIdx.x * 4];
}

__global__ void __cluster_dims__(2, 1, 1) early(const float* in, float* out)
{
    __shared__ float tile[256];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    tile[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
    // No cluster.sync here: the neighbour's tile may not be written yet.
    float* other = cluster.map_shared_rank(tile, rank ^ 1);
    float v = other[threadIdx.x];
    cluster.sync();
    out[blockIdx.x * 256 + threadIdx.x] = v;
}

__global__ void __cluster_dims__(2, 1, 1) exitread(const float* in, float* out)
{
    __shared__ float tile[256];
    cg::cluster_group cluster = cg::this_cluster();
    unsigned rank = cluster.block_rank();
    tile[threadIdx.x] = in[blockIdx.x * 256 + threadIdx.x];
    cluster.sync();
    if (rank == 1) return;   // block 1 leaves; block 0 still reads its tile
    for (int k = 0; k < 200; ++k) __nanosleep(1000);
    float* other = cluster.map_shared_rank(tile, 1);
    out[blockIdx.x * 256 + threadIdx.x] = other[threadIdx.x];
}

__global__ void asserting(const float* in, float* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(i < n);
    out[i] = in[i];
}

int main(int argc, char** argv)
{
    const char* which = argc > 1 ? argv[1] : "bulk";
    int blocks = 64;
    float *in, *out;
    CHECK(cudaMalloc(&in, blocks * 1024 * 4));
    CHECK(cudaMalloc(&out, blocks * 1024 * 4));
    CHECK(cudaMemset(in, 0, blocks * 1024 * 4));
    if (!strcmp(which, "bulk")) bulk<<<blocks, 256>>>(in, out);
    if (!strcmp(which, "cp4")) cpasync<<<blocks, 256>>>(in, out, 0);
    if (!strcmp(which, "cp16")) cpasync<<<blocks, 256>>>(in, out, 1);
    if (!strcmp(which, "cpzero")) cpasync<<<blocks, 256>>>(in, out, 2);
    if (!strcmp(which, "early")) early<<<blocks, 256>>>(in, out);
    if (!strcmp(which, "exitread")) exitread<<<blocks, 256>>>(in, out);
    if (!strcmp(which, "assert")) asserting<<<2, 256>>>(in, out, 300);
    CHECK(cudaGetLastError());
    cudaError_t e = cudaDeviceSynchronize();
    printf("%s: %s\n", which, cudaGetErrorString(e));
    return e == cudaSuccess ? 0 : 1;
}

// Where does the time of a printf in every thread go on the GPU? (issue 10)
// Built and run on the device machine by scripts/device/checks/printf-cost.sh:
//   nvcc -arch=sm_90 -o printf-cost scripts/device/checks/printf-cost.cu
//   ./printf-cost N FIFO_MIB PRINT > /dev/null   (or | wc -c)
// Launches the 2D printf kernel of tests/learner/printf_every_thread.cu once at n = N, with the
// printf FIFO set to FIFO_MIB, and reports on stderr: the kernel's own time (CUDA events,
// recorded before and after the launch; the FIFO is drained only at synchronisation) and the
// time cudaDeviceSynchronize takes to return after the end event (the host-side formatting of
// the FIFO into stdout). PRINT=0 runs the same kernel with the printf behind a false flag.
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <cuda_runtime.h>

__global__ void stencil2d(const float* in, float* out, int n, int print)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= n || y >= n) return;
    int i = y * n + x;
    if (print) printf("thread (%d,%d)\n", x, y);
    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {
        out[i] = in[i];
        return;
    }
    out[i] = 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n]);
}

int main(int argc, char** argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4096;
    size_t fifo = (argc > 2 ? atoi(argv[2]) : 1) << 20;
    int print = argc > 3 ? atoi(argv[3]) : 1;
    cudaDeviceSetLimit(cudaLimitPrintfFifoSize, fifo);
    float *in, *out;
    cudaMalloc(&in, sizeof(float) * n * n);
    cudaMalloc(&out, sizeof(float) * n * n);
    cudaMemset(in, 0, sizeof(float) * n * n);
    cudaEvent_t start, end;
    cudaEventCreate(&start);
    cudaEventCreate(&end);
    dim3 block(32, 8), grid((n + 31) / 32, (n + 7) / 8);
    cudaEventRecord(start);
    stencil2d<<<grid, block>>>(in, out, n, print);
    cudaEventRecord(end);
    auto t0 = std::chrono::steady_clock::now();
    cudaEventSynchronize(end);
    auto t1 = std::chrono::steady_clock::now();
    cudaError_t err = cudaDeviceSynchronize();
    auto t2 = std::chrono::steady_clock::now();
    float kernel_ms = 0;
    cudaEventElapsedTime(&kernel_ms, start, end);
    fflush(stdout);
    fprintf(stderr,
            "n=%d fifo=%zu MiB print=%d: kernel %.1f ms (events), wait for end event %.1f ms, "
            "synchronize after it %.1f ms, status %s\n",
            n, fifo >> 20, print, kernel_ms,
            std::chrono::duration<double, std::milli>(t1 - t0).count(),
            std::chrono::duration<double, std::milli>(t2 - t1).count(), cudaGetErrorString(err));
    return err == cudaSuccess ? 0 : 1;
}

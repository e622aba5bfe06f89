// lesson: stencil-2d
// A __syncthreads() inside a branch that only in-range threads take: out-of-range threads
// of the last blocks skip it and run on. Undefined in CUDA; the emulator must say so on the
// line, whatever the hardware happens to do.
extern "C" __global__ void stencil2d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    __shared__ float row[8][32];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 8 + threadIdx.y;
    if (x < n && y < n) {
        row[threadIdx.y][threadIdx.x] = in[y * n + x];
        __syncthreads();
        float c = row[threadIdx.y][threadIdx.x];
        int i = y * n + x;
        if (x == 0 || y == 0 || x == n - 1 || y == n - 1) { out[i] = c; }
        else { out[i] = 0.5f * c + 0.125f * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n]); }
    } else {
        row[threadIdx.y][threadIdx.x] = 0.0f;
        __syncthreads();
    }
}

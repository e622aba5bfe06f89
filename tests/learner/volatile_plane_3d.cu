// lesson: stencil-3d
// A 3D kernel that stages each z plane in a `volatile __shared__` array (a habit from old
// warp-synchronous code) and indexes with size_t.
extern "C" __global__ void stencil3d(const float* in, float* out, int n)
{
    volatile __shared__ float plane_s[16][32];
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int depth = (n + gridDim.z - 1) / gridDim.z;
    int z0 = blockIdx.z * depth, z1 = min(z0 + depth, n);
    size_t plane = (size_t)n * n;
    bool inside = x < n && y < n;
    for (int z = z0; z < z1; ++z) {
        size_t i = z * plane + (size_t)y * n + x;
        __syncthreads();
        plane_s[threadIdx.y][threadIdx.x] = inside ? in[i] : 0.0f;
        __syncthreads();
        if (!inside) continue;
        float c = plane_s[threadIdx.y][threadIdx.x];
        if (x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1) { out[i] = c; continue; }
        float l = threadIdx.x > 0 ? plane_s[threadIdx.y][threadIdx.x - 1] : in[i - 1];
        float r = threadIdx.x < 31 ? plane_s[threadIdx.y][threadIdx.x + 1] : in[i + 1];
        float u = threadIdx.y > 0 ? plane_s[threadIdx.y - 1][threadIdx.x] : in[i - n];
        float d = threadIdx.y < 15 ? plane_s[threadIdx.y + 1][threadIdx.x] : in[i + n];
        out[i] = 0.25f * c + 0.125f * (l + r + u + d + in[i - plane] + in[i + plane]);
    }
}

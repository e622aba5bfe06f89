// lesson: stencil-3d-registers
// The register-rotation idea with <cstdint> types: unsigned coordinates, int64_t
// offsets, the centre and the plane behind kept in registers along z.
#include <cstdint>
extern "C" __global__ void stencil3d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    const uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
    const uint32_t y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= (uint32_t)n || y >= (uint32_t)n) return;
    const int depth = (n + gridDim.z - 1) / gridDim.z;
    const int z0 = blockIdx.z * depth;
    const int z1 = min(z0 + depth, n);
    const int64_t plane = (int64_t)n * n;
    const bool edge_xy = x == 0 || y == 0 || x == (uint32_t)n - 1 || y == (uint32_t)n - 1;
    int64_t i = z0 * plane + (int64_t)y * n + x;
    float behind = z0 > 0 ? in[i - plane] : 0.0f;
    float centre = in[i];
    for (int z = z0; z < z1; ++z, i += plane) {
        float ahead = z + 1 < n ? in[i + plane] : 0.0f;
        if (edge_xy || z == 0 || z == n - 1) {
            out[i] = centre;
        } else {
            out[i] = 0.25f * centre + 0.125f * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n] + behind + ahead);
        }
        behind = centre;
        centre = ahead;
    }
}

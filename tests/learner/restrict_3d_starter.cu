// lesson: stencil-3d
// The 3D starter with __restrict__ on both pointers: ptxas keeps loaded values in registers
// across z steps, so the GPU counts fewer sectors than the PTX asks for (issue 11).
// stencil-3d starter: every read of every output goes to global memory.
//
// Interior points: out = 0.25 * centre + 0.125 * (left + right + up + down + behind + ahead),
// where behind/ahead are the same (x, y) one plane away in z. Points on any of the six faces
// of the n x n x n cube are copied through unchanged.
//
// The harness launches 32 x 16 threads per block on a ceil(n/32) x ceil(n/16) x 3 grid: each
// block owns a 32 x 16 column of the cube and walks its share of the z planes.

// No __restrict__ on purpose: with it, the compiler may prove that `out` never overlaps `in`
// and keep a plane's loads in registers for the next z step, which is the idea of a later
// lesson, not of this starter.
extern "C" __global__ void stencil3d(const float* __restrict__ in, float* __restrict__ out, int n)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= n || y >= n) {
        return;
    }
    // Three z-chunks cover the cube whatever n is: round the depth up.
    int depth = (n + gridDim.z - 1) / gridDim.z;
    int z_begin = blockIdx.z * depth;
    int z_end = min(z_begin + depth, n);
    long plane = (long)n * n;

    for (int z = z_begin; z < z_end; ++z) {
        long i = z * plane + (long)y * n + x;
        float result;
        if (x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1) {
            result = in[i];
        } else {
            float centre = in[i];
            float left = in[i - 1];
            float right = in[i + 1];
            float up = in[i - n];
            float down = in[i + n];
            float behind = in[i - plane];
            float ahead = in[i + plane];
            result = 0.25f * centre + 0.125f * (left + right + up + down + behind + ahead);
        }
        out[i] = result;
    }
}

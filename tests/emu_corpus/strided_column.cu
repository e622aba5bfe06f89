// A column: lane l reads float 32*l, 128 bytes apart, so every lane needs its own sector.
extern "C" __global__ void k(const float* in, float* out, int n) { out[threadIdx.x] = in[threadIdx.x * 32]; }

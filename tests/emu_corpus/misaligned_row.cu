// Shifted by one float: bytes 4..131 touch sectors 0..4, five sectors for 128 bytes.
extern "C" __global__ void k(const float* in, float* out, int n) { out[threadIdx.x] = in[threadIdx.x + 1]; }

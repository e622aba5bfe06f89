// Lanes 0..15 read floats 0..15 (2 sectors), lanes 16..31 read floats 48..63 (2 sectors),
// each half on its own side of the branch.
extern "C" __global__ void k(const float* in, float* out, int n)
{
    int t = threadIdx.x;
    float v;
    if (t < 16) {
        v = in[t];
    } else {
        v = in[t + 32] * 2.0f;
    }
    out[t] = v;
}

// stencil-1d starter, in Rust: one thread per output, three global loads per output.
use crate::gpu::*;

#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn stencil1d(input: *const f32, output: *mut f32, n: i32) {
    let i = block_idx().x * block_dim().x + thread_idx().x;
    if i >= n {
        return;
    }
    if i == 0 || i == n - 1 {
        store!(output[i] = load!(input[i]));
        return;
    }
    // input[i - 1] and input[i + 1] are the centres of the neighbouring threads.
    store!(output[i] = 0.5 * load!(input[i]) + 0.25 * (load!(input[i - 1]) + load!(input[i + 1])));
}

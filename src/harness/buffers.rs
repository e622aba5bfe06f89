//! Allocating the big per-size buffers (inputs, the device's copy of them, outputs: 64 MiB
//! each at the profile sizes). With 4 KiB pages each such buffer costs about 16,000 page
//! faults on first touch, a tenth of a 2-core run's CPU time; the kernel is asked for huge
//! pages instead (transparent huge pages in their default "madvise" mode honour the hint;
//! elsewhere it is ignored and nothing changes).

/// `len` zeroed floats, huge pages requested before any is touched.
pub fn zeroed_f32(len: usize) -> Vec<f32> {
    let buffer = vec![0.0f32; len];
    prefer_huge_pages(&buffer);
    buffer
}

/// `len` zeroed words, huge pages requested before any is touched.
pub fn zeroed_u32(len: usize) -> Vec<u32> {
    let buffer = vec![0u32; len];
    prefer_huge_pages(&buffer);
    buffer
}

/// Below this a buffer lies in the allocator's own pages: no hint.
const HUGE_FROM_BYTES: usize = 4 << 20;

fn prefer_huge_pages<T>(buffer: &[T]) {
    let bytes = std::mem::size_of_val(buffer);
    if bytes < HUGE_FROM_BYTES {
        return;
    }
    #[cfg(target_os = "linux")]
    {
        // madvise wants a page-aligned start: the whole pages inside the buffer.
        const PAGE: usize = 4096;
        let start = (buffer.as_ptr() as usize).next_multiple_of(PAGE);
        let end = (buffer.as_ptr() as usize + bytes) / PAGE * PAGE;
        if end > start {
            // SAFETY: the range lies inside a live allocation this process owns; the advice
            // changes only how its pages are backed, never their contents. A refusal (no
            // huge page support) is harmless and ignored.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
}

/// A copy of `inputs` and an output of poisoned words, both fresh and allocated as the app's
/// verification allocates them (huge pages asked for): what a benchmark lends a launch, so
/// that the launch meets the same memory as in a real Run rather than a clone's 4 KiB pages.
pub fn fresh_launch_buffers(inputs: &[f32]) -> (Vec<f32>, Vec<u32>) {
    let mut input = zeroed_f32(inputs.len());
    input.copy_from_slice(inputs);
    let mut words = zeroed_u32(inputs.len());
    words.fill(super::POISON_BITS);
    (input, words)
}

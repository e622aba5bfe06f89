//! Splitting a big buffer over the host's cores. At the profile sizes (16.7 million
//! elements) drawing the inputs and computing the reference took 150 to 220 ms each on one
//! core, on the GPU's critical path and the emulator's too.

/// Host threads to use: all cores, unless `HALOSCOPE_EMU_THREADS` says otherwise (grading
/// runs several processes at once and gives each its share).
pub fn host_threads() -> usize {
    std::env::var("HALOSCOPE_EMU_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Below this many elements one thread does it (starting threads costs more).
const PARALLEL_FROM: usize = 1 << 18;

/// Threads to split `len` elements over: one per [`PARALLEL_FROM`] elements, at most
/// `host_threads()`.
fn threads_for(len: usize) -> usize {
    host_threads().min(len / PARALLEL_FROM).max(1)
}

/// Calls `fill(start, chunk)` for consecutive chunks of `out` that together cover it, on
/// up to `host_threads()` threads; `start` is the chunk's first index in `out`.
pub fn fill_in_chunks<T: Send>(out: &mut [T], fill: impl Fn(usize, &mut [T]) + Sync) {
    let threads = threads_for(out.len());
    if threads == 1 {
        fill(0, out);
        return;
    }
    let chunk = out.len().div_ceil(threads);
    std::thread::scope(|scope| {
        for (i, part) in out.chunks_mut(chunk).enumerate() {
            let fill = &fill;
            scope.spawn(move || fill(i * chunk, part));
        }
    });
}

/// Calls `part(range)` for consecutive ranges that together cover `0..len`, on up to
/// `host_threads()` threads, and returns their results in order.
pub fn map_ranges<R: Send>(len: usize, part: impl Fn(std::ops::Range<usize>) -> R + Sync) -> Vec<R> {
    let threads = threads_for(len);
    if threads == 1 {
        return vec![part(0..len)];
    }
    let chunk = len.div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..len)
            .step_by(chunk)
            .map(|start| {
                let part = &part;
                scope.spawn(move || part(start..(start + chunk).min(len)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a worker thread panicked"))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_element_is_filled_once_with_its_own_index() {
        for len in [0, 1, PARALLEL_FROM - 1, 3 * PARALLEL_FROM + 7] {
            let mut out = vec![usize::MAX; len];
            fill_in_chunks(&mut out, |start, part| {
                for (k, v) in part.iter_mut().enumerate() {
                    assert_eq!(*v, usize::MAX);
                    *v = start + k;
                }
            });
            assert!(out.iter().enumerate().all(|(i, &v)| v == i), "len {len}");
        }
    }
}

//! Device `printf` in the GPU worker. The CUDA driver writes a kernel's printed text to the
//! process's fd 1 when it synchronises, so fd 1 cannot also carry the worker's replies. At
//! startup the worker keeps a duplicate of its original stdout for replies only and points
//! fd 1 at a pipe that a thread drains at once (the driver never blocks on it, and nothing
//! piles up beyond the caps of `KernelOutput`). After each request's synchronisation the
//! worker flushes C stdio and writes an end-of-launch marker into the same pipe: everything
//! before the marker was printed by that request's launches.

use crate::backend::KernelOutput;
use crate::report::output::MAX_BYTES;
use std::fs::File;
use std::io::{Read, Write};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

/// How long `collect` waits for the reader thread to reach its marker. The driver's writes
/// are done when synchronisation returns, so this is only the time to read what is left.
const COLLECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The printf FIFO the worker asks for per context (the driver's default is 1 MiB); what a
/// launch prints beyond it is dropped by the driver without a trace.
pub const PRINTF_FIFO_BYTES: usize = 8 << 20;

/// Splits the captured byte stream into lines and into launches. The stream is each
/// launch's text `T` followed by `"\n" + marker + "\n"`; the lines of one launch are exactly
/// those `KernelOutput::push_text(T)` gives (the `"\n"` before the marker terminates an
/// unterminated last fragment, or adds one empty line that is dropped), kept under the same
/// caps, without holding more than one line longer than `MAX_BYTES` in memory.
pub struct Splitter {
    /// A marker line is this prefix followed by the launch's sequence number.
    prefix: Vec<u8>,
    /// The unfinished line at the end of what was read so far.
    pending: Vec<u8>,
    /// Length of an unfinished line too long to be kept (its bytes are not held).
    overlong: Option<u64>,
    /// An empty line not yet pushed: the one before a marker is the marker's own `"\n"`.
    held_empty: bool,
    out: KernelOutput,
}

impl Splitter {
    pub fn new(prefix: &str) -> Splitter {
        Splitter {
            prefix: prefix.as_bytes().to_vec(),
            pending: Vec::new(),
            overlong: None,
            held_empty: false,
            out: KernelOutput::default(),
        }
    }

    /// The marker line (without newlines) that ends launch `seq`.
    pub fn marker(prefix: &str, seq: u64) -> String {
        format!("{prefix}{seq}")
    }

    /// Takes the next bytes of the stream; returns the launches they completed, each with
    /// its sequence number and its output (labelled by the caller).
    pub fn feed(&mut self, mut bytes: &[u8]) -> Vec<(u64, KernelOutput)> {
        let mut done = Vec::new();
        if !self.pending.is_empty() || self.overlong.is_some() {
            let Some(end) = bytes.iter().position(|&b| b == b'\n') else {
                self.extend_pending(bytes);
                return done;
            };
            self.extend_pending(&bytes[..end]);
            bytes = &bytes[end + 1..];
            match self.overlong.take() {
                Some(len) => self.not_shown(len),
                None => {
                    let mut line = std::mem::take(&mut self.pending);
                    match self.marker_seq(&line) {
                        Some(seq) => self.finish(seq, &mut done),
                        None => {
                            line.push(b'\n');
                            self.push_lines(&line);
                        }
                    }
                }
            }
        }
        let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let (lines, tail) = bytes.split_at(whole);
        // Whole lines are pushed in batches, one between markers (the caps are checked per
        // batch, not per line).
        let mut batch = 0;
        let mut start = 0;
        while start < lines.len() {
            let end = start
                + lines[start..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .expect("lines ends with a newline");
            if lines[start] == self.prefix.first().copied().unwrap_or(b'\n')
                && let Some(seq) = self.marker_seq(&lines[start..end])
            {
                self.push_lines(&lines[batch..start]);
                self.finish(seq, &mut done);
                batch = end + 1;
            }
            start = end + 1;
        }
        self.push_lines(&lines[batch..]);
        self.extend_pending(tail);
        done
    }

    fn marker_seq(&self, line: &[u8]) -> Option<u64> {
        let rest = line.strip_prefix(self.prefix.as_slice())?;
        std::str::from_utf8(rest).ok()?.parse().ok()
    }

    fn extend_pending(&mut self, bytes: &[u8]) {
        if let Some(len) = &mut self.overlong {
            *len += bytes.len() as u64;
            return;
        }
        self.pending.extend_from_slice(bytes);
        // A line longer than the byte cap is never kept; a marker is never that long.
        if self.pending.len() > MAX_BYTES {
            self.overlong = Some(self.pending.len() as u64);
            self.pending = Vec::new();
        }
    }

    /// Pushes whole lines (each ending in a newline), holding back a last empty one.
    fn push_lines(&mut self, lines: &[u8]) {
        if lines.is_empty() {
            return;
        }
        self.release_held();
        let mut lines = lines;
        if lines == b"\n" || lines.ends_with(b"\n\n") {
            self.held_empty = true;
            lines = &lines[..lines.len() - 1];
        }
        if !lines.is_empty() {
            self.out.push_text(&String::from_utf8_lossy(lines));
        }
    }

    fn release_held(&mut self) {
        if std::mem::take(&mut self.held_empty) {
            self.out.push_text("\n");
        }
    }

    /// A finished line of `len` bytes that was too long to keep.
    fn not_shown(&mut self, len: u64) {
        self.release_held();
        self.out.lines_not_shown += 1;
        self.out.bytes_not_shown += len + 1;
    }

    fn finish(&mut self, seq: u64, done: &mut Vec<(u64, KernelOutput)>) {
        self.held_empty = false; // the marker's own newline
        done.push((seq, std::mem::take(&mut self.out)));
    }
}

/// The worker's end of the capture: the pipe behind fd 1 and its reader thread's results.
pub struct Capture {
    /// The pipe's write end (fd 1 is a duplicate of it), for the markers.
    pipe: std::io::PipeWriter,
    prefix: String,
    seq: u64,
    done: Receiver<(u64, KernelOutput)>,
}

#[cfg(unix)]
unsafe extern "C" {
    fn dup2(old: std::ffi::c_int, new: std::ffi::c_int) -> std::ffi::c_int;
    fn fflush(stream: *mut std::ffi::c_void) -> std::ffi::c_int;
}

impl Capture {
    /// Points fd 1 at a pipe drained by a new thread; returns the capture and a file on the
    /// original stdout, for the replies.
    #[cfg(unix)]
    pub fn redirect_stdout() -> std::io::Result<(Capture, File)> {
        use std::os::fd::{AsRawFd, BorrowedFd};
        // SAFETY: fd 1 is this process's stdout, open for its whole life; the duplicate is
        // a new descriptor (close-on-exec) that we own.
        let replies = unsafe { BorrowedFd::borrow_raw(1) }.try_clone_to_owned()?;
        let (mut reader, pipe) = std::io::pipe()?;
        std::io::stdout().flush()?;
        // SAFETY: both descriptors are open; dup2 replaces fd 1 atomically.
        if unsafe { dup2(pipe.as_raw_fd(), 1) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let prefix = format!("\u{1b}haloscope end of launch {:x}.{nanos:x} ", std::process::id());
        let (tx, done) = channel();
        let mut splitter = Splitter::new(&prefix);
        std::thread::Builder::new()
            .name("printf capture".into())
            .spawn(move || {
                // Drains until the process ends: a full pipe would block the driver.
                let mut buf = vec![0u8; 1 << 16];
                loop {
                    match reader.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => {
                            for launch in splitter.feed(&buf[..n]) {
                                let _ = tx.send(launch);
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(_) => break,
                    }
                }
            })?;
        Ok((
            Capture {
                pipe,
                prefix,
                seq: 0,
                done,
            },
            File::from(replies),
        ))
    }

    #[cfg(not(unix))]
    pub fn redirect_stdout() -> std::io::Result<(Capture, File)> {
        Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "printf capture needs a Unix system",
        ))
    }

    /// What was printed since the last call (call it after the launches synchronised),
    /// labelled `launch`; None when nothing was printed or the reader did not answer.
    pub fn collect(&mut self, launch: &str) -> Option<KernelOutput> {
        // The driver may print through C stdio, which buffers fully on a pipe.
        #[cfg(unix)]
        // SAFETY: fflush(NULL) flushes every open output stream.
        unsafe {
            fflush(std::ptr::null_mut());
        }
        self.seq += 1;
        let marker = format!("\n{}\n", Splitter::marker(&self.prefix, self.seq));
        self.pipe.write_all(marker.as_bytes()).ok()?;
        let deadline = Instant::now() + COLLECT_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.done.recv_timeout(left) {
                Ok((seq, mut out)) if seq == self.seq => {
                    out.launch = launch.to_string();
                    return (!out.is_empty()).then_some(out);
                }
                Ok(_) => {} // an earlier request's, whose collect gave up waiting
                Err(_) => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::output::MAX_LINES;

    const PREFIX: &str = "\u{1b}end 1f.2 ";

    /// The stream `Capture` produces for these launch texts.
    fn stream(texts: &[&str]) -> Vec<u8> {
        let mut s = Vec::new();
        for (i, t) in texts.iter().enumerate() {
            s.extend_from_slice(t.as_bytes());
            s.extend_from_slice(format!("\n{}\n", Splitter::marker(PREFIX, i as u64 + 1)).as_bytes());
        }
        s
    }

    fn split(bytes: &[u8], chunk: usize) -> Vec<(u64, KernelOutput)> {
        let mut splitter = Splitter::new(PREFIX);
        bytes.chunks(chunk).flat_map(|c| splitter.feed(c)).collect()
    }

    fn expected(text: &str) -> KernelOutput {
        let mut out = KernelOutput::default();
        out.push_text(text);
        out
    }

    #[test]
    fn lines_are_those_of_push_text_in_any_chunking() {
        let texts = [
            "hello 42\n",
            "",
            "no newline",
            "a\n\n",
            "\n",
            "\n\n\nx\n\n",
            "two\nlines",
            "\u{1b}not a marker\n",
        ];
        let bytes = stream(&texts);
        for chunk in [1, 2, 3, 7, 64, bytes.len()] {
            let launches = split(&bytes, chunk);
            assert_eq!(launches.len(), texts.len(), "chunk {chunk}");
            for (i, ((seq, out), text)) in launches.iter().zip(texts).enumerate() {
                assert_eq!(*seq, i as u64 + 1);
                assert_eq!(*out, expected(text), "text {text:?}, chunk {chunk}");
            }
        }
        assert_eq!(split(&stream(&["a\n\n"]), 1)[0].1.lines, ["a", ""]);
        assert!(split(&stream(&[""]), 5)[0].1.is_empty());
    }

    #[test]
    fn a_launch_printing_in_every_thread_is_capped() {
        let text: String = (0..20_000).map(|i| format!("thread {i}\n")).collect();
        let launches = split(&stream(&[&text, "after\n"]), 1 << 16);
        let (_, out) = &launches[0];
        assert_eq!(out.lines.len(), MAX_LINES);
        assert_eq!(out.lines_not_shown, 20_000 - MAX_LINES as u64);
        assert_eq!(out.lines[0], "thread 0");
        assert_eq!(launches[1].1.lines, ["after"]);
    }

    #[test]
    fn an_overlong_line_is_counted_not_held() {
        let long = "y".repeat(MAX_BYTES + 10);
        let text = format!("short\n{long}\nend");
        let launches = split(&stream(&[&text]), 4096);
        let out = &launches[0].1;
        assert_eq!(out.lines, ["short", "end"]);
        assert_eq!(out.lines_not_shown, 1);
        assert_eq!(out.bytes_not_shown, long.len() as u64 + 1);
    }

    #[test]
    fn an_unfinished_launch_waits_for_its_marker() {
        let mut splitter = Splitter::new(PREFIX);
        assert!(splitter.feed(b"partial\nline").is_empty());
        let done = splitter.feed(format!(" done\n{}\n", Splitter::marker(PREFIX, 7)).as_bytes());
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].0, 7);
        assert_eq!(done[0].1.lines, ["partial", "line done"]);
    }

    /// The real redirection, in a child process (it takes over the process's fd 1): text
    /// written to fd 1 directly and through C stdio reaches the launch it belongs to, a flood
    /// larger than a pipe's buffer does not block, and the replies stay apart.
    #[cfg(unix)]
    #[test]
    fn redirects_fd_1_in_a_child_process() {
        const CHILD: &str = "HALOSCOPE_CAPTURE_TEST_CHILD";
        const NAME: &str = "backend::gpu::capture::tests::redirects_fd_1_in_a_child_process";
        if std::env::var_os(CHILD).is_some() {
            unsafe extern "C" {
                fn printf(format: *const std::ffi::c_char, ...) -> std::ffi::c_int;
            }
            let (mut capture, mut replies) = Capture::redirect_stdout().expect("redirect");
            let mut fd1 = std::io::stdout();
            let mut results = Vec::new();
            fd1.write_all(b"raw line\n").unwrap();
            fd1.flush().unwrap();
            // SAFETY: a C string literal and one int argument, as the format says.
            unsafe { printf(c"hello %d\n".as_ptr(), 42) };
            results.push(capture.collect("verify n=1"));
            results.push(capture.collect("empty"));
            let flood: String = (0..1_000_000).map(|i| format!("thread {i}\n")).collect();
            fd1.write_all(flood.as_bytes()).unwrap();
            fd1.flush().unwrap();
            results.push(capture.collect("flood"));
            // On a line of its own: libtest has printed `test NAME ... ` on the real stdout.
            writeln!(replies, "\nRESULTS {}", serde_json::to_string(&results).unwrap()).unwrap();
            return;
        }
        let child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&child.stdout);
        let line = stdout
            .lines()
            .find_map(|l| l.split_once("RESULTS ").map(|(_, json)| json))
            .unwrap_or_else(|| {
                let stderr = String::from_utf8_lossy(&child.stderr);
                panic!(
                    "no results in the child's stdout ({} bytes); stderr: {stderr}",
                    stdout.len()
                )
            });
        let results: Vec<Option<KernelOutput>> = serde_json::from_str(line).unwrap();
        let first = results[0].as_ref().expect("output of the first launch");
        assert_eq!(first.launch, "verify n=1");
        assert_eq!(first.lines, ["raw line", "hello 42"]);
        assert_eq!(results[1], None);
        let flood = results[2].as_ref().expect("the flood");
        assert_eq!(flood.lines.len(), MAX_LINES);
        assert_eq!(flood.total_lines(), 1_000_000);
        assert!(!stdout.contains("thread 5\n"), "printed text leaked into the replies");
    }
}

use clap::Parser;

#[cfg(unix)]
unsafe extern "C" {
    fn signal(signum: i32, handler: usize) -> usize;
}

fn main() {
    // First, before anything that the compiler may have built with AVX2 instructions runs.
    refuse_a_cpu_below_x86_64_v3();
    let _ = haloscope::PROCESS_START.set(std::time::Instant::now());
    // `haloscope lessons | head` should end quietly, as command-line tools do, not panic.
    #[cfg(unix)]
    // SAFETY: restores the default action for SIGPIPE (13) before any thread starts.
    unsafe {
        signal(13, 0);
    }
    let cli = haloscope::cli::Cli::parse();
    std::process::exit(haloscope::cli::main_with(cli));
}

/// `.cargo/config.toml` builds for x86-64-v3 (AVX2, FMA, BMI...): the emulator's lane loops
/// are its hot path. A CPU without them would die on the first such instruction with
/// "illegal instruction" and nothing else; say what is wrong and how to build for it instead.
///
/// `is_x86_feature_detected!` cannot be used here: in a build that targets AVX2 it is the
/// constant `true`. CPUID is asked directly. Everything on the way to the message must run on
/// an older CPU although this crate is compiled for v3, so the check uses only integer tests
/// against constant bits and the `write` system call: no Vec, iterator or formatting, whose
/// generic code would be compiled here with AVX (a `Vec` collect was, and died on a Westmere).
/// tests/cpu_features.rs runs the binary on emulated CPUs without AVX2 to keep it so.
fn refuse_a_cpu_below_x86_64_v3() {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2", unix))]
    cpu::refuse_unless_x86_64_v3();
}

#[cfg(all(target_arch = "x86_64", target_feature = "avx2", unix))]
mod cpu {
    use std::arch::x86_64::{__cpuid, __cpuid_count, _xgetbv};

    unsafe extern "C" {
        fn write(fd: i32, buf: *const u8, count: usize) -> isize;
    }

    fn say(text: &[u8]) {
        // SAFETY: writes `text.len()` bytes from a live slice to stderr.
        unsafe {
            write(2, text.as_ptr(), text.len());
        }
    }

    #[inline(never)]
    pub fn refuse_unless_x86_64_v3() {
        let mut ok = true;
        // `needs!(register, bit, name)`: one feature bit, tested against a constant.
        macro_rules! needs {
            ($register:expr, $bit:literal, $name:literal) => {
                if $register & (1 << $bit) == 0 {
                    if ok {
                        say(
                            b"haloscope: this build needs an x86-64-v3 CPU (AVX2; Intel Haswell, AMD Excavator \
                              or newer) and this one lacks",
                        );
                        ok = false;
                    }
                    say(concat!(" ", $name).as_bytes());
                }
            };
        }
        if __cpuid(0).eax < 7 || __cpuid(0x8000_0000).eax < 0x8000_0001 {
            needs!(0u32, 0, "AVX2 (CPUID has no leaf 7)");
        } else {
            let leaf1 = __cpuid(1).ecx;
            let leaf7 = __cpuid_count(7, 0).ebx;
            let extended = __cpuid(0x8000_0001).ecx;
            needs!(leaf7, 5, "AVX2");
            needs!(leaf1, 28, "AVX");
            needs!(leaf1, 12, "FMA");
            needs!(leaf1, 29, "F16C");
            needs!(leaf1, 22, "MOVBE");
            needs!(leaf7, 3, "BMI1");
            needs!(leaf7, 8, "BMI2");
            needs!(extended, 5, "LZCNT");
            needs!(leaf1, 27, "OSXSAVE");
            // XGETBV exists only with OSXSAVE; bits 1 and 2 say the OS saves the SSE and AVX
            // registers across context switches.
            // SAFETY: guarded by OSXSAVE (leaf 1, ECX bit 27), which makes XGETBV available.
            let saved = if leaf1 & (1 << 27) != 0 {
                unsafe { _xgetbv(0) }
            } else {
                0b110
            };
            let os_saves_avx = u32::from(saved & 0b110 == 0b110);
            needs!(os_saves_avx, 0, "(the OS does not save AVX state)");
        }
        if !ok {
            say(b". Build one for this CPU with `RUSTFLAGS=\"-C target-cpu=native\" cargo build --release`.\n");
            std::process::exit(1);
        }
    }
}

use clap::Parser;

#[cfg(unix)]
unsafe extern "C" {
    fn signal(signum: i32, handler: usize) -> usize;
}

fn main() {
    let _ = haloscope::PROCESS_START.set(std::time::Instant::now());
    refuse_a_cpu_without_avx2();
    // `haloscope lessons | head` should end quietly, as command-line tools do, not panic.
    #[cfg(unix)]
    // SAFETY: restores the default action for SIGPIPE (13) before any thread starts.
    unsafe {
        signal(13, 0);
    }
    let cli = haloscope::cli::Cli::parse();
    std::process::exit(haloscope::cli::main_with(cli));
}

/// `.cargo/config.toml` builds for x86-64-v3 (AVX2): the emulator's lane loops are its hot
/// path. A CPU without AVX2 would die on the first such instruction with "illegal
/// instruction"; say what is wrong and how to build for it instead.
fn refuse_a_cpu_without_avx2() {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    if !std::arch::is_x86_feature_detected!("avx2") {
        eprintln!(
            "haloscope: this build needs a CPU with AVX2 (x86-64-v3) and this one has none; \
             rebuild for this CPU with `RUSTFLAGS=\"-C target-cpu=native\" cargo build --release`"
        );
        std::process::exit(1);
    }
}

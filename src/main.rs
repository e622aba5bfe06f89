use clap::Parser;

#[cfg(unix)]
unsafe extern "C" {
    fn signal(signum: i32, handler: usize) -> usize;
}

fn main() {
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

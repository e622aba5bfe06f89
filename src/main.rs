use clap::Parser;

fn main() {
    let _ = haloscope::PROCESS_START.set(std::time::Instant::now());
    let cli = haloscope::cli::Cli::parse();
    std::process::exit(haloscope::cli::main_with(cli));
}

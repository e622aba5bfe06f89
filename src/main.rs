use clap::Parser;

fn main() {
    let cli = haloscope::cli::Cli::parse();
    std::process::exit(haloscope::cli::main_with(cli));
}

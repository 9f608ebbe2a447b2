//! The `ninjazero` command line: wiring only; the work lives in the workspace crates.

mod cli;

use clap::Parser;

fn main() {
    let args = cli::Cli::parse();
    if let Err(err) = cli::run(args) {
        eprintln!("error: {err}");
        std::process::exit(1);
    }
}

//! The `ninjazero` command line: wiring only; the work lives in the workspace crates.

mod cli;

use clap::Parser;

fn main() {
    // Die quietly when the reader of our output goes away (`ninjazero moves … | head`), as
    // command-line tools do, instead of panicking on the broken pipe.
    // SAFETY: restoring a default signal disposition at start-up, before any threads exist.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let args = cli::Cli::parse();
    if let Err(err) = cli::run(args) {
        eprintln!("error: {err}");
        std::process::exit(1);
    }
}

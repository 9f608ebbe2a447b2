//! The `ninjazero` command line: wiring only; the work lives in the workspace crates.

mod cli;

use clap::{CommandFactory, FromArgMatches};

fn main() {
    // Die quietly when the reader of our output goes away (`ninjazero moves … | head`), as
    // command-line tools do, instead of panicking on the broken pipe.
    // SAFETY: restoring a default signal disposition at start-up, before any threads exist.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // Before any tensor work: libtorch reads its kernel switches when it first runs one.
    if let Err(err) = ninjazero_model::select_cpu_kernels() {
        eprintln!("error: {err}");
        std::process::exit(1);
    }
    // The matches are kept: some commands need to know which options were given.
    let matches = cli::Cli::command().get_matches();
    let args = cli::Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if let Err(err) = cli::run(args, &matches) {
        // The whole chain: each context added on the way up, then the cause.
        eprintln!("error: {err:#}");
        std::process::exit(1);
    }
}

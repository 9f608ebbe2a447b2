//! Placeholder, filled in below.
use super::CliResult;
use clap::Args;
#[derive(Args, Debug)]
pub struct FuzzArgs {}
pub fn run(_args: FuzzArgs) -> CliResult {
    Ok(())
}

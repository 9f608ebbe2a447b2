//! `perft` and `moves`: the rules core on the command line.

use super::numbers::whole;
use super::parse_variant;
use anyhow::Context as _;
use clap::Args;
use ninjazero_rules::{perft_divide, Position, Variant};

#[derive(Args, Debug)]
pub struct PositionArgs {
    /// Variant id: chess, palace, palace-scepter, ninjutsu, asylum, asylum-ff,
    /// insane-ninja, insane-ninja-2 or insane-ninja-drops.
    #[arg(long, value_parser = parse_variant)]
    variant: Variant,
    /// Position in FEN (RULES.md section 8); the variant's start position if left out.
    #[arg(long)]
    fen: Option<String>,
}

impl PositionArgs {
    fn position(&self) -> anyhow::Result<Position> {
        match &self.fen {
            Some(fen) => Position::from_fen(self.variant, fen)
                .with_context(|| format!("invalid FEN for {}", self.variant)),
            None => Ok(Position::start(self.variant)),
        }
    }
}

#[derive(Args, Debug)]
pub struct PerftArgs {
    #[command(flatten)]
    position: PositionArgs,
    /// Plies to search. [range: 0 to 15]
    #[arg(long, value_parser = whole::<u32>(0, 15))]
    depth: u32,
    /// Print the count below each root move (`<move>: <count>`).
    #[arg(long)]
    divide: bool,
}

pub fn run_perft(args: PerftArgs) -> anyhow::Result<()> {
    let pos = args.position.position()?;
    let nodes = if args.divide && args.depth > 0 {
        let rows = perft_divide(&pos, args.depth);
        for (m, count) in &rows {
            println!("{m}: {count}");
        }
        rows.iter().map(|(_, count)| count).sum()
    } else {
        ninjazero_rules::perft(&pos, args.depth)
    };
    println!("Nodes searched: {nodes}");
    Ok(())
}

#[derive(Args, Debug)]
pub struct MovesArgs {
    #[command(flatten)]
    position: PositionArgs,
}

pub fn run_moves(args: MovesArgs) -> anyhow::Result<()> {
    let pos = args.position.position()?;
    for m in pos.legal_moves() {
        println!("{m}");
    }
    Ok(())
}

//! `bench search`: one game's MCTS with a network, simulations per second by the number of
//! leaves per network call (virtual loss), with capture-resolved leaves and with a learnt
//! evaluation mixed into the leaves, against one leaf at a time in the same run; and what
//! keeping the trees between moves (`reuse=1`) brings in a game.

use super::numbers::{whole, MAX_THREADS};
use super::{bench_nn::sample_positions, stage_bar};
use clap::Args;
use ninjazero_model::parse_device;
use ninjazero_rules::{Game, Variant};
use ninjazero_search::{
    BlendSpec, EngineSpec, Limits, MctsBudget, DEFAULT_BLEND_MIX, MAX_MCTS_BATCH,
};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use tch::Device;

#[derive(Args, Debug)]
pub struct BenchSearchArgs {
    /// Checkpoint (`.safetensors` with its `.json` sidecar) that evaluates the leaves.
    #[arg(long)]
    model: PathBuf,
    /// Variant of the checkpoint.
    #[arg(long, value_parser = super::parse_variant, default_value = "insane-ninja")]
    variant: Variant,
    /// Leaves per network call to measure (comma-separated; 1 is always measured, as the
    /// reference). [range: 1 to 1024]
    #[arg(long, value_delimiter = ',', value_parser = whole::<usize>(1, MAX_MCTS_BATCH as u64), default_value = "1,4,8,16,32")]
    batches: Vec<usize>,
    /// Simulations per search. [range: 1 to 1000000]
    #[arg(long, value_parser = whole::<u64>(1, 1_000_000), default_value_t = 800)]
    sims: u64,
    /// Positions searched (from random games), each once per batch size, interleaved so
    /// that the machine's load falls alike on every batch size. [range: 1 to 10000]
    #[arg(long, value_parser = whole::<usize>(1, 10_000), default_value_t = 12)]
    positions: usize,
    /// cpu, cuda, cuda:N or auto.
    #[arg(long, value_parser = parse_device, default_value = "cpu")]
    device: Device,
    /// Also measure every batch size with capture-resolved leaves at this logit (what the
    /// leaves' quiescence searches cost). [range: 0 to 10]
    #[arg(long, value_parser = super::numbers::real(0.0, 10.0, false))]
    captures: Option<f64>,
    /// Also measure every batch size with this learnt evaluation (`fit-eval --out`) mixed
    /// into the leaves' values at the spec's default share (and the captures of --captures,
    /// if given): what scoring every leaf with it costs.
    #[arg(long)]
    eval: Option<PathBuf>,
    /// Also play a game of this many plies (from the start position) between two engines
    /// with the last measured settings that keep their trees (`reuse=1`), and report how
    /// many of each search's root visits its kept subtree brought. [range: 2 to 1000]
    #[arg(long, value_parser = whole::<u32>(2, 1000))]
    reuse_plies: Option<u32>,
    /// Intra-op threads for libtorch (an arena gives each game one). [range: 1 to 1024]
    #[arg(long, value_parser = whole::<i32>(1, MAX_THREADS), default_value_t = 1)]
    threads: i32,
}

/// What one batch size did over every position.
#[derive(Default)]
struct Row {
    simulations: u64,
    time: Duration,
    /// Positions where it chose the move that one leaf at a time chose.
    agreements: usize,
}

pub fn run(args: BenchSearchArgs) -> anyhow::Result<()> {
    tch::set_num_threads(args.threads);
    let mut batches = args.batches.clone();
    batches.retain(|&b| b != 1);
    batches.insert(0, 1);
    // The settings of each measured search, by leaves per call, then with captures, then
    // with the learnt evaluation mixed in; the first is the reference.
    let with = |batch: usize, capture_logit: Option<f32>, blend: Option<BlendSpec>| MctsBudget {
        batch: Some(batch),
        capture_logit,
        blend,
        ..MctsBudget::simulations(args.sims)
    };
    let captures = args.captures.map(|logit| logit as f32);
    let mut searches: Vec<MctsBudget> = batches.iter().map(|&b| with(b, None, None)).collect();
    if captures.is_some() {
        searches.extend(batches.iter().map(|&b| with(b, captures, None)));
    }
    if let Some(path) = &args.eval {
        let blend = BlendSpec {
            path: path.clone(),
            mix: DEFAULT_BLEND_MIX,
        };
        searches.extend(
            batches
                .iter()
                .map(|&b| with(b, captures, Some(blend.clone()))),
        );
    }
    let mut engines = Vec::new();
    for budget in &searches {
        let spec = EngineSpec::Mcts {
            checkpoint: args.model.clone(),
            budget: budget.clone(),
        };
        engines.push(spec.build(args.variant, args.device, 0)?);
    }
    let positions = sample_positions(args.variant, args.positions);
    let mut rows: Vec<Row> = searches.iter().map(|_| Row::default()).collect();
    let bar = stage_bar((positions.len() * searches.len()) as u64, "search");
    let limits = Limits::simulations(args.sims);
    for position in &positions {
        let game = Game::from_position(position.clone());
        let mut reference = None;
        for (engine, row) in engines.iter_mut().zip(&mut rows) {
            let info = engine.search(&game, &limits, &AtomicBool::new(false), &mut |_| {})?;
            row.simulations += info.simulations.unwrap_or(info.nodes);
            row.time += info.elapsed;
            let best = *reference.get_or_insert(info.best);
            row.agreements += usize::from(info.best == best);
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    println!(
        "{} positions of {}, {} simulations each, {} libtorch thread(s) on {:?}",
        positions.len(),
        args.variant,
        args.sims,
        args.threads,
        args.device
    );
    println!(
        "{:>6} {:>9} {:>9} {:>12} {:>9} {:>22}",
        "batch", "captures", "eval mix", "sims/s", "vs 1", "same move as batch 1"
    );
    let rate = |row: &Row| row.simulations as f64 / row.time.as_secs_f64().max(1e-9);
    let reference = rate(&rows[0]);
    for (budget, row) in searches.iter().zip(&rows) {
        let batch = budget.batch.unwrap_or(1);
        let captures = budget
            .capture_logit
            .map_or("off".to_string(), |l| l.to_string());
        let mix = budget
            .blend
            .as_ref()
            .map_or("off".to_string(), |b| b.mix.to_string());
        println!(
            "{batch:>6} {captures:>9} {mix:>9} {:>12.0} {:>8.2}x {:>15} of {}",
            rate(row),
            rate(row) / reference,
            row.agreements,
            positions.len()
        );
    }
    if let Some(plies) = args.reuse_plies {
        let last = searches.last().expect("batch 1 is always measured");
        let (kept, visits, searched) = kept_visits(&args, last, plies)?;
        println!(
            "tree reuse with the last row's settings: {searched} searches of one game, {:.0} root visits each, {:.0} % of them kept from the engine's last search ({:.2}x the simulations)",
            visits as f64 / searched.max(1) as f64,
            100.0 * kept as f64 / visits.max(1) as f64,
            visits as f64 / (visits - kept).max(1) as f64,
        );
    }
    Ok(())
}

/// Root visits kept from the last search, root visits in all, and searches, over a game
/// of up to `plies` plies between two engines with `budget` that keep their trees.
fn kept_visits(
    args: &BenchSearchArgs,
    budget: &MctsBudget,
    plies: u32,
) -> anyhow::Result<(u64, u64, u32)> {
    let spec = EngineSpec::Mcts {
        checkpoint: args.model.clone(),
        budget: MctsBudget {
            reuse: true,
            ..budget.clone()
        },
    };
    let mut players = [
        spec.build(args.variant, args.device, 0)?,
        spec.build(args.variant, args.device, 1)?,
    ];
    let limits = Limits::simulations(args.sims);
    let mut game = Game::new(args.variant);
    let (mut kept, mut visits, mut searched) = (0, 0, 0);
    let bar = stage_bar(u64::from(plies), "reuse game");
    for ply in 0..plies {
        if game.outcome().is_some() {
            break;
        }
        let engine = &mut players[ply as usize % 2];
        let info = engine.search(&game, &limits, &AtomicBool::new(false), &mut |_| {})?;
        // A root's visits are its children's and its own first one.
        let root: u64 = 1 + info
            .root_visits
            .iter()
            .map(|&(_, v)| u64::from(v))
            .sum::<u64>();
        kept += root.saturating_sub(info.simulations.unwrap_or(0));
        visits += root;
        searched += 1;
        game.play(info.best)?;
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok((kept, visits, searched))
}

//! `values`: what each piece is worth, in Pawns with 95 % intervals, by outcome
//! regression over self-play games, handicap matches and (with a model) a value-network
//! probe; written as Markdown, CSV and a PNG chart.

use super::numbers::{whole, MAX_THREADS};
use super::{available_threads, load_evaluator, parse_variant, stage_bar, CliResult};
use clap::Args;
use ninjazero_data::{read_games, GameRecord};
use ninjazero_model::{parse_device, Evaluator};
use ninjazero_rules::{Color, Position, Role, Variant};
use ninjazero_search::EngineSpec;
use ninjazero_values::matches::{
    match_estimates, play_handicap_games, HandicapScores, HandicapSettings,
};
use ninjazero_values::probe::probe;
use ninjazero_values::regression::outcome_regression;
use ninjazero_values::{reference, verdicts, Estimate, Measurement, Method, PieceKind};
use rand::rngs::StdRng;
use rand::seq::index::sample;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;
use tch::Device;

#[derive(Args, Debug)]
pub struct ValuesArgs {
    /// Variant id (see `ninjazero perft --help`).
    #[arg(long, value_parser = parse_variant)]
    variant: Variant,
    /// Self-play dataset for the outcome regression (and the probe's positions).
    #[arg(long)]
    data: PathBuf,
    /// Checkpoint: the handicap matches search with it, and the value-network probe runs.
    /// Without one the matches use the model-free search and there is no probe.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Player of the handicap matches, as for `arena` (e.g. alphabeta:depth=3). Default:
    /// MCTS with --model at --sims simulations, or the model-free MCTS.
    #[arg(long)]
    player: Option<EngineSpec>,
    /// Output directory: values.md, values.csv, values.png, match-values.txt (the match
    /// values as an alpha-beta `values=` option) and the match results under matches/ (a
    /// rerun keeps the games already played). Default: values-VARIANT.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Games per handicap (Pawn odds and each piece), half with each colour handicapped;
    /// 0 skips the matches. [range: 0 to 10000000]
    #[arg(long, value_parser = whole::<usize>(0, 10_000_000), default_value_t = 400)]
    games: usize,
    /// Simulations per move of the default (MCTS) match player. [range: 1 to 1000000]
    #[arg(long, value_parser = whole::<u64>(1, 1_000_000), default_value_t = 64)]
    sims: u64,
    /// Self-consistent rounds for an alpha-beta --player: round 1 plays with every piece
    /// worth 1, each later round with the values the previous round measured, so that the
    /// engine is told nothing about the answer. [range: 1 to 20]
    #[arg(long, value_parser = whole::<usize>(1, 20), default_value_t = 1)]
    rounds: usize,
    /// Random plies from the handicap position that open each match game. [range: 0 to 200]
    #[arg(long, value_parser = whole::<usize>(0, 200), default_value_t = 4)]
    opening_plies: usize,
    /// Handicap games longer than this are drawn (adjudicating them on material would
    /// presuppose the values being measured). [range: 1 to 10000]
    #[arg(long, value_parser = whole::<u32>(1, 10_000), default_value_t = 400)]
    max_plies: u32,
    /// Match games played at once, one per thread (default: one per core). [range: 1 to 1024]
    #[arg(long, value_parser = whole::<usize>(1, MAX_THREADS))]
    threads: Option<usize>,
    /// Positions sampled from the data for the probe. [range: 1 to 10000000]
    #[arg(long, value_parser = whole::<usize>(1, 10_000_000), default_value_t = 4000)]
    positions: usize,
    /// Bootstrap replicates behind each interval. [range: 20 to 100000]
    #[arg(long, value_parser = whole::<usize>(20, 100_000), default_value_t = 500)]
    bootstrap: usize,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// cpu, cuda, cuda:N or auto.
    #[arg(long, value_parser = parse_device, default_value = "auto")]
    device: Device,
}

/// One method's results, or why it has none, and what it cost.
struct MethodRun {
    method: Method,
    estimates: Result<Measurement, String>,
    seconds: f64,
    /// Extra lines for the report (the Pawn-odds score, the data used).
    notes: Vec<String>,
}

pub fn run(args: ValuesArgs) -> CliResult {
    if args.bootstrap < 20 {
        return Err("--bootstrap must be at least 20 for a 95 % interval".to_string());
    }
    let player = match_player(&args);
    let tunable = player.starts_with("alphabeta:") && !player.contains("values=");
    if args.rounds > 1 && !tunable {
        return Err(format!(
            "--rounds {} feeds measured values back into an alpha-beta player: --player must be alphabeta:... without values= (got '{player}')",
            args.rounds
        ));
    }
    let variant = args.variant;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("values-{variant}")));
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let kinds = PieceKind::of_variant(variant);
    let games = read_games(&args.data, Some(variant)).map_err(|e| e.to_string())?;
    if games.is_empty() {
        return Err(format!("{}: no games in the dataset", args.data.display()));
    }
    let mut runs = vec![regression(&games, &kinds, &args)];
    if args.games > 0 {
        runs.push(handicap_matches(&kinds, &args, &out)?);
    }
    if let Some(model) = &args.model {
        let (mut evaluator, _) = load_evaluator(Some(model), variant, args.device)?;
        runs.push(network_probe(&games, &kinds, &args, evaluator.as_mut()));
    }
    // Only the values the data backs go on: into the CSV, the chart and the verdicts.
    let estimates: Vec<Estimate> = runs
        .iter()
        .filter_map(|r| r.estimates.as_ref().ok())
        .flat_map(|m| m.estimates.iter().cloned())
        .collect();
    super::write_atomically(&out.join("values.csv"), csv(variant, &estimates).as_bytes())?;
    let report = markdown(variant, &args, &games, &runs, &estimates);
    super::write_atomically(&out.join("values.md"), report.as_bytes())?;
    plot(&out.join("values.png"), variant, &kinds, &estimates)?;
    println!("{report}");
    println!(
        "wrote {}, values.csv and values.png",
        out.join("values.md").display()
    );
    Ok(())
}

fn regression(games: &[GameRecord], kinds: &[PieceKind], args: &ValuesArgs) -> MethodRun {
    let started = Instant::now();
    let estimates = outcome_regression(games, kinds, args.bootstrap, args.seed);
    MethodRun {
        method: Method::Regression,
        estimates,
        seconds: started.elapsed().as_secs_f64(),
        notes: vec![format!(
            "{} games from {} (quiet positions only: the move played kept the material).",
            games.len(),
            args.data.display()
        )],
    }
}

/// The player of the handicap matches: --player, else MCTS with the model (or without one).
fn match_player(args: &ValuesArgs) -> String {
    match (&args.player, &args.model) {
        (Some(spec), _) => spec.to_string(),
        (None, Some(model)) => format!("mcts:{}:sims={}", model.display(), args.sims),
        (None, None) => format!("uniform:sims={}", args.sims),
    }
}

/// Pawn odds (pawns given, scores) and each other board kind's scores, from one round.
type RoundScores = (
    Vec<(usize, HandicapScores)>,
    Vec<(PieceKind, HandicapScores)>,
);

/// Plays (or reads back from `dir`) the handicap games of every board kind, Pawn odds of
/// 1 to [`PAWN_ODDS`] Pawns included, with `player` on both sides.
fn play_round(
    kinds: &[PieceKind],
    args: &ValuesArgs,
    dir: &Path,
    player: &str,
) -> Result<RoundScores, String> {
    let settings = HandicapSettings {
        player: player.to_string(),
        games: args.games,
        opening_plies: args.opening_plies,
        max_plies: args.max_plies,
        seed: args.seed,
    };
    let spec: EngineSpec = player.parse().map_err(|e| format!("{e}"))?;
    let make_player = spec.factory(args.variant, args.device, args.seed);
    let threads = args.threads.unwrap_or_else(available_threads).max(1);
    if threads > 1 {
        // Batch-1 searches: one libtorch thread per game beats threads that synchronise.
        tch::set_num_threads(1);
    }
    let pawn = PieceKind::Board(Role::Pawn);
    let pawns_in_army = Position::start(args.variant).count(Color::White, Role::Pawn) as usize;
    let handicaps = (1..=PAWN_ODDS.min(pawns_in_army))
        .map(|count| (pawn, count))
        .chain(
            kinds
                .iter()
                .filter(|&&k| k != pawn && matches!(k, PieceKind::Board(_)))
                .map(|&k| (k, 1)),
        );
    let (mut pawn_odds, mut scores) = (Vec::new(), Vec::new());
    for (kind, count) in handicaps {
        let name = kind.name().to_lowercase().replace(' ', "-");
        let path = dir.join(format!("{name}-x{count}.json"));
        let saved: Option<SavedMatch> = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .filter(|saved: &SavedMatch| saved.settings == settings);
        let points = match saved {
            Some(saved) => saved.scores,
            None => {
                let bar = stage_bar(args.games as u64, "matches");
                bar.set_message(format!("{count} x {} odds, {player}", kind.name()));
                let played = play_handicap_games(
                    &make_player,
                    args.variant,
                    kind,
                    count,
                    &settings,
                    threads,
                    &|| bar.inc(1),
                )?;
                bar.finish_and_clear();
                let saved = SavedMatch {
                    settings: settings.clone(),
                    scores: played,
                };
                let json = serde_json::to_string_pretty(&saved).map_err(|e| e.to_string())?;
                super::write_atomically(&path, json.as_bytes())?;
                saved.scores
            }
        };
        if kind == pawn {
            pawn_odds.push((count, points));
        } else {
            scores.push((kind, points));
        }
    }
    Ok((pawn_odds, scores))
}

/// `:values=P=1,N=3.05,...` for an alpha-beta spec: flat (every piece 1) before the first
/// round, else the previous round's values.
fn values_option(kinds: &[PieceKind], previous: Option<&[Estimate]>) -> String {
    let values: Vec<String> = kinds
        .iter()
        .filter_map(|&kind| {
            let PieceKind::Board(role) = kind else {
                return None;
            };
            let value = previous
                .and_then(|estimates| estimates.iter().find(|e| e.piece == kind))
                .map_or(1.0, |e| e.value);
            Some(format!("{}={value:.2}", role.upper_char()))
        })
        .collect();
    format!(":values={}", values.join(","))
}

/// The handicap matches: one round with the match player, or with `--rounds R` the
/// self-consistent values of an alpha-beta player (round 1 with every piece worth 1, each
/// later round with the values the previous one measured).
fn handicap_matches(
    kinds: &[PieceKind],
    args: &ValuesArgs,
    out: &Path,
) -> Result<MethodRun, String> {
    let started = Instant::now();
    let base = match_player(args);
    let rounds = args.rounds.max(1);
    let mut notes = vec![format!(
        "{} games per handicap, half with each colour handicapped, {} random opening plies, a draw at {} plies; the scale is the log-odds per Pawn fitted over Pawn odds of 1 to {PAWN_ODDS} Pawns.",
        args.games, args.opening_plies, args.max_plies
    )];
    let mut previous: Option<Vec<Estimate>> = None;
    for round in 1..=rounds {
        let (player, dir) = if rounds > 1 {
            (
                base.clone() + &values_option(kinds, previous.as_deref()),
                out.join("matches").join(format!("round-{round}")),
            )
        } else {
            (base.clone(), out.join("matches"))
        };
        let (pawn_odds, scores) = play_round(kinds, args, &dir, &player)?;
        let odds: Vec<String> = pawn_odds
            .iter()
            .map(|(count, s)| (format!("{count} Pawn(s)"), s))
            .chain(scores.iter().map(|(k, s)| (k.name(), s)))
            .map(|(name, s)| format!("{name} {:.3}", s.score()))
            .collect();
        let estimates = match_estimates(&scores, &pawn_odds, args.bootstrap, args.seed);
        let measured = match &estimates {
            Ok(measured) => measured
                .estimates
                .iter()
                .map(|e| format!("{} {:.2}", e.piece.name(), e.value))
                .chain(measured.not_enough.iter().map(|n| n.line()))
                .collect::<Vec<_>>()
                .join(", "),
            Err(why) => why.clone(),
        };
        notes.push(format!(
            "Round {round}: `{player}`; score of the side that kept the material: {}; values: {measured}.",
            odds.join(", ")
        ));
        // The last round's values are the result; a round without them ends the rounds
        // (the next would have no values to play with) and is the result too.
        let estimates = match estimates {
            Ok(measured) if round < rounds => {
                // A piece without a value plays the next round at 1, as in round 1.
                previous = Some(measured.estimates);
                continue;
            }
            Err(why) if rounds > 1 => Err(format!("round {round}: {why}")),
            last => last,
        };
        // The measured values in the form an alpha-beta spec takes, for the next experiment
        // (e.g. `selfplay --player alphabeta:depth=2:values=...`): only when every piece
        // has one, else an old file would pass for this run's values.
        let path = out.join("match-values.txt");
        match &estimates {
            Ok(measured) if measured.not_enough.is_empty() => {
                let option = values_option(kinds, Some(&measured.estimates));
                super::write_atomically(
                    &path,
                    format!("{}\n", &option[":values=".len()..]).as_bytes(),
                )?;
            }
            _ => {
                match std::fs::remove_file(&path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(format!("{}: {e}", path.display()))
                    }
                    _ => {}
                }
                notes.push(format!(
                    "No {} written: not every piece has a value.",
                    path.display()
                ));
            }
        }
        return Ok(MethodRun {
            method: Method::Matches,
            estimates,
            seconds: started.elapsed().as_secs_f64(),
            notes,
        });
    }
    Err("no handicap round was played".to_string())
}

/// Pawn odds are played with 1 to this many Pawns, which sets the scale.
const PAWN_ODDS: usize = 3;

/// The games of one handicap as saved in `out/matches/`: reused when the settings match.
#[derive(Serialize, Deserialize)]
struct SavedMatch {
    settings: HandicapSettings,
    scores: HandicapScores,
}

/// The probe over positions sampled (seeded) from the dataset.
fn network_probe(
    games: &[GameRecord],
    kinds: &[PieceKind],
    args: &ValuesArgs,
    evaluator: &mut dyn Evaluator,
) -> MethodRun {
    let started = Instant::now();
    let fens: Vec<&str> = games
        .iter()
        .flat_map(|g| g.positions.iter().map(|p| p.fen.as_str()))
        .collect();
    let mut rng = StdRng::seed_from_u64(args.seed);
    let picked = sample(&mut rng, fens.len(), args.positions.min(fens.len()));
    let positions: Vec<Position> = picked
        .iter()
        .filter_map(|i| Position::from_fen(args.variant, fens[i]).ok())
        .collect();
    let bar = stage_bar(0, "probe");
    let estimates = probe(
        evaluator,
        &positions,
        kinds,
        args.bootstrap,
        args.seed,
        &|done, total| {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        },
    );
    bar.finish_and_clear();
    MethodRun {
        method: Method::Probe,
        estimates,
        seconds: started.elapsed().as_secs_f64(),
        notes: vec![format!(
            "{} positions sampled from the data; a piece of the side to move taken off.",
            positions.len()
        )],
    }
}

/// One estimate's fields: piece, method, value, low, high, samples, unit, reference.
fn fields(variant: Variant, e: &Estimate) -> [String; 8] {
    [
        e.piece.name(),
        e.method.name().to_string(),
        format!("{:.3}", e.value),
        format!("{:.3}", e.low),
        format!("{:.3}", e.high),
        e.samples.to_string(),
        e.method.unit().to_string(),
        reference(variant, e.piece).unwrap_or("").to_string(),
    ]
}

fn csv(variant: Variant, estimates: &[Estimate]) -> String {
    let mut text = String::from("variant,piece,method,value,low,high,samples,unit,reference\n");
    for e in estimates {
        let [piece, method, value, low, high, samples, unit, reference] = fields(variant, e);
        let _ = writeln!(
            text,
            "{variant},{piece},{method},{value},{low},{high},{samples},{unit},\"{reference}\""
        );
    }
    text
}

fn markdown(
    variant: Variant,
    args: &ValuesArgs,
    games: &[GameRecord],
    runs: &[MethodRun],
    estimates: &[Estimate],
) -> String {
    let mut text = format!("# Piece values: {variant}\n\n");
    let _ = writeln!(
        text,
        "Values in Pawns with 95 % bootstrap intervals ({} replicates). Data: {} ({} games){}.\n",
        args.bootstrap,
        args.data.display(),
        games.len(),
        args.model
            .as_ref()
            .map_or(String::new(), |m| format!(", model {}", m.display()))
    );
    let _ = writeln!(
        text,
        "| piece | method | value | 95 % interval | sample | reference |"
    );
    let _ = writeln!(text, "| --- | --- | --- | --- | --- | --- |");
    for measured in runs.iter().filter_map(|run| run.estimates.as_ref().ok()) {
        for e in &measured.estimates {
            let [piece, method, _, _, _, samples, unit, reference] = fields(variant, e);
            let _ = writeln!(
                text,
                "| {piece} | {method} | {:.2} | [{:.2}, {:.2}] | {samples} {unit} | {reference} |",
                e.value, e.low, e.high
            );
        }
        for n in &measured.not_enough {
            let _ = writeln!(
                text,
                "| {} | {} | not enough data ({}) | | | {} |",
                n.piece.name(),
                n.method.name(),
                n.reason,
                reference(variant, n.piece).unwrap_or("")
            );
        }
    }
    let _ = writeln!(text, "\n## Methods\n");
    for run in runs {
        let status = match &run.estimates {
            Ok(_) => String::new(),
            Err(why) => format!(" No result: {why}."),
        };
        let _ = writeln!(
            text,
            "- **{}** ({:.0} s): {}{status}",
            run.method.name(),
            run.seconds,
            run.notes.join(" ")
        );
    }
    let _ = writeln!(text, "\n## Which pieces the data tells apart\n");
    let verdicts = verdicts(estimates);
    if verdicts.is_empty() {
        let _ = writeln!(
            text,
            "No method has values for two pieces besides the Pawn: nothing to compare."
        );
    }
    for verdict in verdicts {
        let _ = writeln!(text, "- {}", verdict.line());
    }
    text
}

/// Values with their intervals, one row per piece, one colour per method; reference values
/// (AlphaZero's, for chess) as black marks.
fn plot(
    path: &Path,
    variant: Variant,
    kinds: &[PieceKind],
    estimates: &[Estimate],
) -> Result<(), String> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let text = ninjazero_train::register_plot_font();
    let finite = |x: f64| x.is_finite().then_some(x);
    let high = estimates
        .iter()
        .filter_map(|e| finite(e.high).or(finite(e.value)))
        .fold(1.0f64, f64::max)
        .min(30.0)
        + 0.5;
    let low = estimates
        .iter()
        .filter_map(|e| finite(e.low))
        .fold(0.0f64, f64::min)
        .max(-5.0)
        - 0.5;
    let rows = kinds.len();
    let root = BitMapBackend::new(path, (900, 120 + 60 * rows as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut builder = ChartBuilder::on(&root);
    builder
        .margin(20)
        .x_label_area_size(40)
        .y_label_area_size(170);
    if text {
        builder.caption(
            format!("{variant}: piece values in Pawns (95 % intervals)"),
            ("sans-serif", 22),
        );
    }
    let mut chart = builder
        .build_cartesian_2d(low..high, -0.5f64..rows as f64 - 0.5)
        .map_err(|e| err(&e))?;
    let mut mesh = chart.configure_mesh();
    let label = |y: &f64| {
        let row = y.round();
        if (y - row).abs() < 1e-6 && row >= 0.0 && (row as usize) < rows {
            kinds[rows - 1 - row as usize].name()
        } else {
            String::new()
        }
    };
    if text {
        mesh.x_desc("Pawns")
            .y_labels(rows * 4 + 1)
            .y_label_formatter(&label);
    } else {
        mesh.x_labels(0).y_labels(0);
    }
    mesh.disable_y_mesh().draw().map_err(|e| err(&e))?;
    let colours = [
        (Method::Regression, RGBColor(31, 119, 180), -0.2),
        (Method::Matches, RGBColor(214, 39, 40), 0.0),
        (Method::Probe, RGBColor(44, 160, 44), 0.2),
    ];
    let row_of = |kind: PieceKind| {
        let i = kinds.iter().position(|&k| k == kind).unwrap_or(0);
        (rows - 1 - i) as f64
    };
    for (method, colour, offset) in colours {
        let series: Vec<&Estimate> = estimates
            .iter()
            .filter(|e| e.method == method && e.low.is_finite() && e.high.is_finite())
            .collect();
        let drawn = chart
            .draw_series(series.iter().map(|e| {
                let y = row_of(e.piece) + offset;
                ErrorBar::new_horizontal(
                    y,
                    e.low.clamp(low, high),
                    e.value.clamp(low, high),
                    e.high.clamp(low, high),
                    colour.filled(),
                    8,
                )
            }))
            .map_err(|e| err(&e))?;
        if text {
            drawn.label(method.name()).legend(move |(x, y)| {
                Rectangle::new([(x, y - 4), (x + 16, y + 4)], colour.filled())
            });
        }
    }
    let published: Vec<(f64, f64)> = kinds
        .iter()
        .filter_map(|&k| {
            let value: f64 = reference(variant, k)?.split(' ').next()?.parse().ok()?;
            Some((value, row_of(k)))
        })
        .collect();
    let marks = chart
        .draw_series(
            published
                .iter()
                .map(|&(x, y)| Cross::new((x, y), 6, BLACK.stroke_width(2))),
        )
        .map_err(|e| err(&e))?;
    if text && !published.is_empty() {
        marks
            .label("AlphaZero (published)")
            .legend(|(x, y)| Cross::new((x + 8, y), 5, BLACK.stroke_width(2)));
    }
    if text {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::LowerRight)
            .draw()
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))
}

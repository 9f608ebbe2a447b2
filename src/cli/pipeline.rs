//! `pipeline`: the closed loop. Each generation: self-play with the current best model →
//! train a candidate from it → arena against the best → promote it unless it is
//! measurably worse.
//!
//! Promotion is the AlphaZero rule (the newest network plays) with a safety net: a
//! candidate is only held back when its whole Elo interval against the best lies below
//! zero. Gating at "scores over 50 %" on a few dozen games would reject improvements by
//! the coin flip of a noisy arena.
//!
//! Every stage reads and writes files in the run directory and is skipped when its output
//! is already there, so killing the pipeline and running the same command again continues
//! where it stopped (self-play and training also resume inside a stage).

use super::numbers::whole;
use super::{
    available_threads, load_evaluator, parse_variant, stage_bar, write_atomically, CliResult,
};
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, ValueEnum};
use ninjazero_arena::{run_arena, ArenaConfig, ArenaResult};
use ninjazero_data::{finished_game_ids, FlushPolicy, DEFAULT_FLUSH_SECONDS};
use ninjazero_model::{parse_device, Model, Preset};
use ninjazero_rules::seed::{derive_seed, SeedStream};
use ninjazero_rules::{Position, Variant};
use ninjazero_search::{EngineSpec, MctsBudget, SearchConfig};
use ninjazero_selfplay::{play_dataset, SelfPlayOptions};
use ninjazero_train::{train, RunControl, TrainConfig, TrainJob};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tch::Device;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PipelinePreset {
    /// Minutes on a laptop CPU: tiny network, few games.
    Demo,
    /// Hours on a CPU machine.
    Cpu,
    /// A GPU machine.
    Gpu,
}

#[derive(Args, Debug)]
pub struct PipelineArgs {
    #[arg(long, value_parser = parse_variant, default_value = "insane-ninja")]
    variant: Variant,
    /// Run directory (created if needed; an existing one is continued).
    #[arg(long)]
    run: PathBuf,
    #[arg(long, value_enum, default_value = "demo")]
    preset: PipelinePreset,
    /// Generations to train (counting from 1; generation 0 is the initial network). [range: 1 to 1000]
    #[arg(long, value_parser = whole::<u32>(1, 1000))]
    generations: Option<u32>,
    /// cpu, cuda, cuda:N or auto.
    #[arg(long, value_parser = parse_device, default_value = "auto")]
    device: Device,
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

/// Everything a run needs to continue: written once as `run.toml`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct RunConfig {
    variant: String,
    preset: PipelinePreset,
    seed: u64,
    generations: u32,
    network: Preset,
    selfplay_games: u64,
    concurrency: usize,
    search: SearchConfig,
    train: String,
    arena_pairs: usize,
    arena_simulations: u64,
    /// Self-play generations whose data the trainer reads.
    window_generations: u32,
}

impl RunConfig {
    fn new(
        variant: Variant,
        preset: PipelinePreset,
        seed: u64,
        generations: Option<u32>,
    ) -> RunConfig {
        let (network, games, concurrency, sims, cheap, pairs, arena_sims, default_generations) =
            match preset {
                PipelinePreset::Demo => (Preset::Tiny, 1000, 256, 32, 8, 16, 128, 2),
                PipelinePreset::Cpu => (Preset::Cpu, 1024, 256, 128, 32, 50, 128, 10),
                PipelinePreset::Gpu => (Preset::Gpu, 8192, 1024, 400, 100, 100, 400, 30),
            };
        RunConfig {
            variant: variant.id().to_string(),
            preset,
            seed,
            generations: generations.unwrap_or(default_generations),
            network,
            selfplay_games: games,
            concurrency,
            search: SearchConfig {
                simulations: sims,
                cheap_simulations: cheap,
                max_plies: if preset == PipelinePreset::Demo {
                    120
                } else {
                    300
                },
                ..SearchConfig::default()
            },
            train: format!("{preset:?}").to_lowercase(),
            arena_pairs: pairs,
            arena_simulations: arena_sims,
            window_generations: 4,
        }
    }
}

/// Paths inside a run directory.
struct RunDir(PathBuf);

impl RunDir {
    fn model(&self, generation: u32) -> PathBuf {
        self.0
            .join("models")
            .join(format!("gen-{generation:04}.safetensors"))
    }
    fn selfplay(&self, generation: u32) -> PathBuf {
        self.0.join("selfplay").join(format!("gen-{generation:04}"))
    }
    fn train_work(&self, generation: u32) -> PathBuf {
        self.0.join("train").join(format!("gen-{generation:04}"))
    }
    fn arena(&self, name: &str) -> PathBuf {
        self.0.join("arena").join(format!("{name}.json"))
    }
}

fn generation_name(generation: u32) -> String {
    format!("gen-{generation:04}")
}

/// `matches`: the command line's, which tell the options given from clap's defaults.
pub fn run(args: PipelineArgs, matches: &ArgMatches) -> CliResult {
    let run = RunDir(args.run.clone());
    std::fs::create_dir_all(&run.0).map_err(|e| format!("{}: {e}", run.0.display()))?;
    let config = load_or_create_config(&run.0, &args, matches)?;
    let variant = parse_variant(&config.variant)?;
    let started = Instant::now();
    log(&format!(
        "pipeline: {variant}, preset {:?}, {} generations, run {}",
        config.preset,
        config.generations,
        run.0.display()
    ));
    if !run.model(0).exists() {
        tch::manual_seed(config.seed as i64);
        Model::new(variant, &config.network.config(), Device::Cpu)
            .save(&run.model(0))
            .map_err(|e| e.to_string())?;
        log(&format!("generation 0: initial {} network", config.network));
    }
    let mut best = 0;
    let mut history = Vec::new();
    for generation in 1..=config.generations {
        // Generation 0's network knows nothing: its games would teach nothing, so the first
        // data comes from the model-free search (uniform priors, material value).
        let data_model = (best > 0).then(|| run.model(best));
        self_play(
            &run,
            &config,
            variant,
            generation - 1,
            data_model.as_deref(),
            args.device,
        )?;
        train_candidate(&run, &config, variant, generation, best, args.device)?;
        let versus_best = arena(
            &run,
            &config,
            variant,
            &format!(
                "{}-vs-{}",
                generation_name(generation),
                generation_name(best)
            ),
            &mcts_spec(&run, generation, &config),
            &mcts_spec(&run, best, &config),
            args.device,
        )?;
        let promoted = !measurably_worse(&versus_best);
        let versus_zero = if best == 0 {
            (versus_best.elo, versus_best.elo_low, versus_best.elo_high)
        } else {
            let result = arena(
                &run,
                &config,
                variant,
                &format!("{}-vs-{}", generation_name(generation), generation_name(0)),
                &mcts_spec(&run, generation, &config),
                &mcts_spec(&run, 0, &config),
                args.device,
            )?;
            (result.elo, result.elo_low, result.elo_high)
        };
        log(&format!(
            "generation {generation}: vs best (gen {best}) {}; {}",
            versus_best.summary_line(),
            if promoted { "promoted" } else { "not promoted" }
        ));
        if promoted {
            best = generation;
        }
        history.push(GenerationRow {
            generation,
            promoted,
            versus_best: versus_best.summary_line(),
            elo_vs_zero: versus_zero,
        });
    }
    let baselines = [
        ("random", EngineSpec::Random { seed: None }),
        (
            "uniform",
            EngineSpec::Uniform(MctsBudget::simulations(config.arena_simulations)),
        ),
        ("alphabeta", EngineSpec::alphabeta(2)),
    ];
    let mut baseline_rows = Vec::new();
    for (name, spec) in baselines {
        let result = arena(
            &run,
            &config,
            variant,
            &format!("{}-vs-{name}", generation_name(best)),
            &mcts_spec(&run, best, &config),
            &spec,
            args.device,
        )?;
        baseline_rows.push((name, result.summary_line()));
    }
    let best_vs_zero = if best == 0 {
        None
    } else {
        Some(arena(
            &run,
            &config,
            variant,
            &format!("{}-vs-{}", generation_name(best), generation_name(0)),
            &mcts_spec(&run, best, &config),
            &mcts_spec(&run, 0, &config),
            args.device,
        )?)
    };
    write_summary(
        &run,
        &config,
        best,
        &history,
        best_vs_zero.as_ref(),
        &baseline_rows,
    )?;
    plot_elo(&run.0.join("elo.png"), &history)?;
    log(&format!(
        "pipeline done in {:.1} min: best generation {best}; summary in {}",
        started.elapsed().as_secs_f64() / 60.0,
        run.0.join("summary.md").display()
    ));
    Ok(())
}

/// A candidate whose whole 95 % Elo interval against the best lies below zero.
fn measurably_worse(versus_best: &ArenaResult) -> bool {
    versus_best.elo_high < 0.0
}

fn log(line: &str) {
    println!("[{}] {line}", chrono_like_now());
}

/// Seconds since the epoch as HH:MM:SS UTC (no time-zone dependency).
fn chrono_like_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format!(
        "{:02}:{:02}:{:02}",
        secs / 3600 % 24,
        secs / 60 % 60,
        secs % 60
    )
}

/// The run.toml settings an option sets, by the option's clap id (= the field's name).
/// `--generations` is not among them: it is how far to take the run, and may be changed to
/// extend it.
const OPTION_SETTINGS: [&str; 3] = ["variant", "preset", "seed"];

/// The run's settings: run.toml if the run exists, which every option given on the command
/// line must agree with (an option left out takes the stored value); else the options',
/// written as run.toml. A `--generations` given replaces the stored one.
fn load_or_create_config(
    dir: &Path,
    args: &PipelineArgs,
    matches: &ArgMatches,
) -> Result<RunConfig, String> {
    let path = dir.join("run.toml");
    let wanted = RunConfig::new(args.variant, args.preset, args.seed, args.generations);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            save_config(&path, &wanted)?;
            return Ok(wanted);
        }
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let mut stored: RunConfig =
        toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let given: Vec<&str> = OPTION_SETTINGS
        .into_iter()
        .filter(|id| {
            matches
                .value_source(id)
                .is_some_and(|source| source != ValueSource::DefaultValue)
        })
        .collect();
    let differing = differences(&stored, &wanted, &given)?;
    if !differing.is_empty() {
        return Err(format!(
            "{} holds a run with other settings (stored → given): {}. Give the stored values (or leave those options out) to continue it, or use another --run directory",
            path.display(),
            differing.join(", ")
        ));
    }
    if let Some(generations) = args.generations.filter(|&g| g != stored.generations) {
        stored.generations = generations;
        save_config(&path, &stored)?;
    }
    Ok(stored)
}

/// `--name stored → given` for each of `names` whose value differs between the configs.
fn differences(
    stored: &RunConfig,
    given: &RunConfig,
    names: &[&str],
) -> Result<Vec<String>, String> {
    let table = |config: &RunConfig| toml::Value::try_from(config).map_err(|e| e.to_string());
    let (stored, given) = (table(stored)?, table(given)?);
    let show = |value: Option<&toml::Value>| match value {
        Some(toml::Value::String(text)) => text.clone(),
        Some(value) => value.to_string(),
        None => "(none)".to_string(),
    };
    Ok(names
        .iter()
        .filter(|&&name| stored.get(name) != given.get(name))
        .map(|&name| {
            format!(
                "--{name} {} → {}",
                show(stored.get(name)),
                show(given.get(name))
            )
        })
        .collect())
}

fn save_config(path: &Path, config: &RunConfig) -> Result<(), String> {
    let text = toml::to_string_pretty(config).map_err(|e| e.to_string())?;
    write_atomically(path, text.as_bytes())
}

/// Self-play data for training generation `generation + 1`.
fn self_play(
    run: &RunDir,
    config: &RunConfig,
    variant: Variant,
    generation: u32,
    model: Option<&Path>,
    device: Device,
) -> Result<(), String> {
    let dir = run.selfplay(generation);
    let done = finished_game_ids(&dir).map_err(|e| e.to_string())?;
    if done.len() as u64 >= config.selfplay_games {
        return Ok(());
    }
    let (mut evaluator, model_id) = load_evaluator(model, variant, device)?;
    let options = SelfPlayOptions {
        start: Position::start(variant),
        games: config.selfplay_games,
        concurrency: config.concurrency,
        seed: derive_seed(config.seed, SeedStream::Generation, generation.into()),
        config: config.search.clone(),
        model_id,
    };
    let progress = stage_bar(config.selfplay_games, "selfplay");
    let (_, stats) = play_dataset(
        &dir,
        &options,
        evaluator.as_mut(),
        FlushPolicy {
            games_per_file: 64,
            max_age: Some(Duration::from_secs(DEFAULT_FLUSH_SECONDS)),
        },
        &|already, s| {
            progress.set_position(already + s.games);
            progress.set_message(format!("{} positions", s.positions));
        },
    )
    .map_err(|e| e.to_string())?;
    progress.finish_and_clear();
    log(&format!(
        "self-play for generation {}: {} games, {} positions, {:.0} positions/s",
        generation + 1,
        stats.games,
        stats.positions,
        stats.positions as f64 / stats.wall.as_secs_f64().max(1e-9)
    ));
    Ok(())
}

fn train_candidate(
    run: &RunDir,
    config: &RunConfig,
    variant: Variant,
    generation: u32,
    parent: u32,
    device: Device,
) -> Result<(), String> {
    let out = run.model(generation);
    if out.exists() {
        return Ok(());
    }
    let first = generation.saturating_sub(config.window_generations);
    let data: Vec<PathBuf> = (first..generation).map(|g| run.selfplay(g)).collect();
    let train_config = TrainConfig::preset(&config.train).ok_or("unknown training preset")?;
    let progress = stage_bar(train_config.steps, "train");
    let job = TrainJob {
        variant,
        data_dirs: data,
        init: run.model(parent),
        out,
        work_dir: run.train_work(generation),
        config: train_config,
        device,
    };
    let show = |step, total, line: &str| {
        progress.set_length(total);
        progress.set_position(step);
        progress.set_message(line.to_string());
    };
    let report = train(&job, &show, &RunControl::default()).map_err(|e| e.to_string())?;
    progress.finish_and_clear();
    log(&format!(
        "training generation {generation} from {parent}: {} steps, policy loss {:.3}, value loss {:.3}, {:.0} samples/s, loader wait {:.1} %",
        report.steps_done,
        report.final_policy_loss,
        report.final_value_loss,
        report.samples_per_s,
        100.0 * report.loader_wait_share
    ));
    Ok(())
}

fn mcts_spec(run: &RunDir, generation: u32, config: &RunConfig) -> EngineSpec {
    EngineSpec::mcts(run.model(generation), config.arena_simulations)
}

/// Plays (or reads back) the arena `name` between two player specs.
fn arena(
    run: &RunDir,
    config: &RunConfig,
    variant: Variant,
    name: &str,
    a: &EngineSpec,
    b: &EngineSpec,
    device: Device,
) -> Result<ArenaResult, String> {
    let path = run.arena(name);
    if let Ok(text) = std::fs::read_to_string(&path) {
        if let Ok(result) = serde_json::from_str::<ArenaResult>(&text) {
            return Ok(result);
        }
    }
    let arena_config = ArenaConfig {
        pairs: config.arena_pairs,
        opening_plies: 4,
        max_plies: config.search.max_plies,
        seed: config.seed,
        sprt: None,
    };
    let progress = stage_bar(2 * config.arena_pairs as u64, "arena");
    // Arena players search one leaf at a time: one game per core, each with a single
    // libtorch thread, beats several threads synchronising for every batch-1 operation.
    tch::set_num_threads(1);
    let result = run_arena(
        &a.factory(variant, device, config.seed),
        &b.factory(variant, device, config.seed + 1),
        variant,
        &arena_config,
        available_threads(),
        &|done, total, partial| {
            progress.set_length(total as u64);
            progress.set_position(done as u64);
            progress.set_message(format!("{name}: score {:.3}", partial.score));
        },
    );
    tch::set_num_threads(available_threads() as i32);
    let result = result?;
    progress.finish_and_clear();
    std::fs::create_dir_all(path.parent().expect("arena files live in a folder"))
        .map_err(|e| e.to_string())?;
    result
        .save(&path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    log(&format!("arena {name}: {}", result.summary_line()));
    Ok(result)
}

struct GenerationRow {
    generation: u32,
    promoted: bool,
    versus_best: String,
    elo_vs_zero: (f64, f64, f64),
}

fn write_summary(
    run: &RunDir,
    config: &RunConfig,
    best: u32,
    history: &[GenerationRow],
    best_vs_zero: Option<&ArenaResult>,
    baselines: &[(&str, String)],
) -> Result<(), String> {
    let mut md = format!(
        "# NinjaZero run: {}\n\nPreset {:?}, {} generations, {} {} network, {} self-play games per generation \
         ({} / {} simulations), arenas of {} paired games at {} simulations.\n\n",
        config.variant,
        config.preset,
        config.generations,
        config.network,
        "preset",
        config.selfplay_games,
        config.search.simulations,
        config.search.cheap_simulations,
        2 * config.arena_pairs,
        config.arena_simulations
    );
    md.push_str("## Generations\n\n| generation | against the best so far | promoted | Elo vs generation 0 (95 %) |\n| --- | --- | --- | --- |\n");
    for row in history {
        let (elo, low, high) = row.elo_vs_zero;
        md.push_str(&format!(
            "| {} | {} | {} | {elo:+.0} [{low:+.0}, {high:+.0}] |\n",
            row.generation,
            row.versus_best,
            if row.promoted { "yes" } else { "no" }
        ));
    }
    md.push_str(&format!(
        "\n## Where it ended\n\nBest: generation {best}.\n\n"
    ));
    match best_vs_zero {
        Some(result) => md.push_str(&format!(
            "- against generation 0: {}\n",
            result.summary_line()
        )),
        None => md.push_str(
            "- every candidate was measurably worse than generation 0: nothing was promoted\n",
        ),
    }
    for (name, line) in baselines {
        md.push_str(&format!("- against the {name} baseline: {line}\n"));
    }
    md.push_str("\nScores are from the first-named player's view; Elo intervals are 95 % (normal approximation over paired games). A candidate is promoted unless its interval against the best lies wholly below zero.\n");
    write_atomically(&run.0.join("summary.md"), md.as_bytes())
}

/// `elo.png`: each generation's Elo against generation 0 with its 95 % interval.
fn plot_elo(path: &Path, history: &[GenerationRow]) -> Result<(), String> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let text = ninjazero_train::register_plot_font();
    let points: Vec<(u32, f64, f64, f64)> = std::iter::once((0, 0.0, 0.0, 0.0))
        .chain(history.iter().map(|r| {
            (
                r.generation,
                r.elo_vs_zero.0,
                r.elo_vs_zero.1,
                r.elo_vs_zero.2,
            )
        }))
        .collect();
    let low = points.iter().map(|p| p.2).fold(0.0, f64::min) - 50.0;
    let high = points.iter().map(|p| p.3).fold(0.0, f64::max) + 50.0;
    let last = points.last().map_or(1, |p| p.0).max(1);
    let root = BitMapBackend::new(path, (900, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut builder = ChartBuilder::on(&root);
    builder
        .margin(20)
        .x_label_area_size(40)
        .y_label_area_size(60);
    if text {
        builder.caption(
            "Elo against generation 0 (95 % interval)",
            ("sans-serif", 22),
        );
    }
    let mut chart = builder
        .build_cartesian_2d(-0.5f64..last as f64 + 0.5, low..high)
        .map_err(|e| err(&e))?;
    let mut mesh = chart.configure_mesh();
    if text {
        mesh.x_desc("generation")
            .y_desc("Elo")
            .x_labels(last as usize + 2)
            .x_label_formatter(&|x| format!("{x:.0}"));
    } else {
        mesh.x_labels(0).y_labels(0);
    }
    mesh.draw().map_err(|e| err(&e))?;
    let blue = RGBColor(31, 119, 180);
    chart
        .draw_series(points.iter().map(|&(g, elo, lo, hi)| {
            ErrorBar::new_vertical(g as f64, lo, elo, hi, blue.filled(), 10)
        }))
        .map_err(|e| err(&e))?;
    chart
        .draw_series(LineSeries::new(
            points.iter().map(|&(g, elo, _, _)| (g as f64, elo)),
            blue.stroke_width(2),
        ))
        .map_err(|e| err(&e))?;
    chart
        .draw_series(
            points
                .iter()
                .map(|&(g, elo, _, _)| Circle::new((g as f64, elo), 5, blue.filled())),
        )
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cli;
    use clap::{CommandFactory, FromArgMatches};

    /// `pipeline ARGS`: the parsed options and their matches.
    fn parse(args: &[&str]) -> (PipelineArgs, ArgMatches) {
        let matches = Cli::command()
            .try_get_matches_from(["ninjazero", "pipeline"].iter().chain(args))
            .expect("valid options");
        let sub = matches
            .subcommand_matches("pipeline")
            .expect("the pipeline command")
            .clone();
        let args = PipelineArgs::from_arg_matches(&sub).expect("pipeline options");
        (args, sub)
    }

    #[test]
    fn a_run_refuses_other_settings_and_continues_with_its_own() {
        let tmp = ninjazero_testkit::temp_dir();
        let dir = tmp.path();
        let run = ninjazero_testkit::text(dir);
        let load = |extra: &[&str]| {
            let options: Vec<&str> = ["--run", run].iter().chain(extra).copied().collect();
            let (args, matches) = parse(&options);
            load_or_create_config(dir, &args, &matches)
        };
        let created = load(&["--variant", "chess", "--seed", "0"]).unwrap();
        assert_eq!((created.variant.as_str(), created.seed), ("chess", 0));

        let refused = load(&["--variant", "chess", "--seed", "5"]).unwrap_err();
        assert!(refused.contains("--seed 0 → 5"), "{refused}");
        assert!(!refused.contains("--variant"), "{refused}");
        // Every differing setting in one message; the defaults of options left out
        // (variant insane-ninja, seed 0) are no mismatch.
        let refused = load(&["--preset", "cpu", "--seed", "5"]).unwrap_err();
        assert!(
            refused.contains("--preset demo → cpu, --seed 0 → 5"),
            "{refused}"
        );
        assert!(refused.contains("another --run"), "{refused}");

        assert_eq!(
            load(&["--variant", "chess", "--seed", "0"]).unwrap(),
            created
        );
        assert_eq!(load(&[]).unwrap(), created);
        // --generations extends the run, and the run remembers it.
        let extended = load(&["--generations", "5"]).unwrap();
        assert_eq!(extended.generations, 5);
        assert_eq!(load(&[]).unwrap(), extended);
    }
}

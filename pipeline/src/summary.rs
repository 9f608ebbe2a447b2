//! The run's report: `summary.md` and `elo.png`.
//!
//! Every generation is put on one Elo scale with the random mover at 0: a Bradley–Terry fit
//! of every arena the run played (each candidate against the best before it and against
//! generation 0, the best network against the baselines), as the ladder fits its anchors
//! ([`ninjazero_arena::rating`]). The baselines play fixed simulations or a fixed depth, so
//! the scale does not depend on the machine. Each generation is also put against the
//! compute spent until its arena was played ([`crate::cost`]).

use crate::cost::Cost;
use crate::{ModelKind, PipelineError, RunConfig, EVALUATION_DEPTH};
use ninjazero_arena::ladder::VIRTUAL_DRAWS;
use ninjazero_arena::{fit_ratings, ArenaResult, PairingScore, Rating};
use ninjazero_data::atomic::write_atomically;
use std::collections::BTreeMap;
use std::path::Path;

/// One generation of the run's history.
#[derive(Clone, Debug, PartialEq)]
pub struct GenerationRow {
    pub generation: u32,
    /// Whether the candidate became the best network.
    pub promoted: bool,
    /// The candidate's arena against the best so far ([`ArenaResult::summary_line`]).
    pub versus_best: String,
    /// Elo against generation 0 with its 95 % interval: (Elo, low, high).
    pub elo_vs_zero: (f64, f64, f64),
    /// Compute spent from the start of the run until this generation was decided (its
    /// self-play data, its training and its arenas included); `None` when a job's cost is
    /// not stored (a run made before costs were recorded).
    pub spent: Option<Cost>,
}

/// Every player of the run (`gen-0002`, `random`, …) on one Elo scale, random at 0.
pub type Scale = BTreeMap<String, Rating>;

/// The random mover's label: the scale's zero.
const RANDOM: &str = "random";

/// Fits the scale from every arena of the run (see the module docs).
pub fn ladder_scale(arenas: &[ArenaResult]) -> Result<Scale, PipelineError> {
    let mut players = vec![RANDOM.to_string()];
    let mut index = |label: &str| match players.iter().position(|p| p == label) {
        Some(i) => i,
        None => {
            players.push(label.to_string());
            players.len() - 1
        }
    };
    let scores: Vec<PairingScore> = arenas
        .iter()
        .map(|r| PairingScore {
            a: index(&r.player_a),
            b: index(&r.player_b),
            wins: r.wins,
            draws: r.draws,
            losses: r.losses,
        })
        .collect();
    let ratings = fit_ratings(players.len(), &scores, VIRTUAL_DRAWS)
        .map_err(|e| PipelineError::Arena(format!("the run's Elo scale: {e}")))?;
    Ok(players.into_iter().zip(ratings).collect())
}

/// What the report shows.
pub struct RunReport<'a> {
    pub config: &'a RunConfig,
    /// The best generation.
    pub best: u32,
    pub history: &'a [GenerationRow],
    /// The best generation against generation 0 (`None`: nothing was promoted).
    pub best_vs_zero: Option<&'a ArenaResult>,
    /// Each named baseline's arena line.
    pub baselines: &'a [(&'a str, String)],
    pub scale: &'a Scale,
    /// What the games against the baselines cost.
    pub baselines_spent: Option<Cost>,
}

impl RunReport<'_> {
    /// A player's rating on the scale, as `+123 [+80, +170]`.
    fn rating(&self, label: &str) -> String {
        match self.scale.get(label) {
            Some(r) => format!("{:+.0} [{:+.0}, {:+.0}]", r.elo, r.low, r.high),
            None => "—".to_string(),
        }
    }

    /// Generation 0 (nothing spent) and every decided generation, with what each cost.
    fn generations(&self) -> impl Iterator<Item = (u32, Option<Cost>)> + '_ {
        std::iter::once((0, Some(Cost::default())))
            .chain(self.history.iter().map(|row| (row.generation, row.spent)))
    }
}

/// `1 generation`, `2 generations`: a count with its noun, plural unless one.
pub fn counted(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    format!("{n} {noun}{}", if n == 1 { "" } else { "s" })
}

/// `; generation 0's 15000 games by PLAYER, the first network trained with the imitate
/// preset` for a network run with a first player, else nothing.
fn first_players_games(config: &RunConfig) -> String {
    let Some(player) = &config.first_player else {
        return String::new();
    };
    let training = config.first_train.as_deref().unwrap_or(&config.train);
    format!(
        "; generation 0's {} games by {player}, the first network trained with the {training} preset{}",
        config.selfplay_games_of(0),
        if config.player_values { " on the player's search values too" } else { "" }
    )
}

/// Writes `path` (the run's `summary.md`): the settings, each generation's arena against
/// the best so far, its Elo against generation 0 and on the run's scale, where the run
/// ended (the best generation against generation 0 and each baseline), and the compute each
/// generation took.
pub fn write_summary(path: &Path, report: &RunReport) -> Result<(), PipelineError> {
    let config = report.config;
    let generations = match config.hours {
        Some(hours) => format!(
            "{} (as many as fitted a budget of {hours} wall {} on this machine)",
            counted(config.generations, "generation"),
            if hours == 1.0 { "hour" } else { "hours" }
        ),
        None => counted(config.generations, "generation"),
    };
    let learner = match config.model {
        ModelKind::Network => format!(
            "{} preset network, {} self-play games per generation ({} / {} simulations){}, arenas of {} paired games at {} simulations",
            config.network,
            config.selfplay_games,
            config.search.simulations,
            config.search.cheap_simulations,
            first_players_games(config),
            2 * config.arena_pairs,
            config.arena_simulations
        ),
        ModelKind::Evaluation => format!(
            "a learnt piece-square evaluation searched by alpha-beta at depth {EVALUATION_DEPTH} (generation 0: {}), \
             fitted to the last {} generations' games (twice as many after a candidate held back), {} self-play games per generation, arenas of {} paired games \
             (the baselines' MCTS at {} simulations)",
            config.first_player.as_deref().unwrap_or("none"),
            config.window_generations,
            config.selfplay_games,
            2 * config.arena_pairs,
            config.arena_simulations
        ),
    };
    let mut md = format!(
        "# NinjaZero run: {}\n\nPreset {:?}, {generations}, {learner}.\n\n",
        config.variant, config.preset,
    );
    md.push_str("## Generations\n\n| generation | against the best so far | promoted | Elo vs generation 0 (95 %) | Elo, random = 0 (95 %) |\n| --- | --- | --- | --- | --- |\n");
    md.push_str(&format!(
        "| 0 | — | — | — | {} |\n",
        report.rating(&crate::generation_name(0))
    ));
    for row in report.history {
        let (elo, low, high) = row.elo_vs_zero;
        md.push_str(&format!(
            "| {} | {} | {} | {elo:+.0} [{low:+.0}, {high:+.0}] | {} |\n",
            row.generation,
            row.versus_best,
            if row.promoted { "yes" } else { "no" },
            report.rating(&crate::generation_name(row.generation))
        ));
    }
    md.push_str(&format!(
        "\n## Where it ended\n\nBest: generation {}.\n\n",
        report.best
    ));
    match report.best_vs_zero {
        Some(result) => md.push_str(&format!(
            "- against generation 0: {}\n",
            result.summary_line()
        )),
        None => md.push_str(
            "- every candidate was measurably worse than generation 0: nothing was promoted\n",
        ),
    }
    for (name, line) in report.baselines {
        md.push_str(&format!(
            "- against the {name} baseline ({} with random = 0): {line}\n",
            report.rating(name)
        ));
    }
    md.push_str("\nScores are from the first-named player's view; Elo intervals are 95 % (normal approximation over paired games). A candidate is promoted unless its interval against the best lies wholly below zero. \"Elo, random = 0\" is one Bradley–Terry fit of every arena of the run (candidates against the best and generation 0, the best against the baselines), as `ninjazero ladder` fits its anchors; the baselines play fixed simulations or a fixed depth, so the scale holds on any machine.\n");
    md.push_str(&compute_section(report));
    write_atomically(path, md.as_bytes()).map_err(|error| PipelineError::Io {
        path: path.to_path_buf(),
        error,
    })
}

/// `## Compute`: each generation against the compute spent until it was decided. Last in
/// the report, as the only part that differs between two runs of the same seed.
fn compute_section(report: &RunReport) -> String {
    let hours = |seconds: f64| format!("{:.3}", seconds / 3600.0);
    let mut md = String::from("\n## Compute\n\n| generation | CPU hours | wall hours | GPU hours | Elo, random = 0 (95 %) |\n| --- | --- | --- | --- | --- |\n");
    for (generation, spent) in report.generations() {
        let [cpu, wall, gpu] = match spent {
            Some(c) => [c.cpu_seconds, c.wall_seconds, c.gpu_seconds].map(hours),
            None => ["—", "—", "—"].map(String::from),
        };
        md.push_str(&format!(
            "| {generation} | {cpu} | {wall} | {gpu} | {} |\n",
            report.rating(&crate::generation_name(generation))
        ));
    }
    if let Some(c) = report.baselines_spent {
        md.push_str(&format!(
            "\nThe games against the baselines took {} CPU hours more ({} wall).\n",
            hours(c.cpu_seconds),
            hours(c.wall_seconds)
        ));
    }
    md.push_str("\nCumulative from the start of the run, summed over every job that stored a result (self-play shards, trainings, arena shards): CPU time of the job's process, every thread included; GPU hours are the wall time of jobs run on a GPU.\n");
    md
}

/// Draws `path` (the run's `elo.png`): each generation's Elo on the run's scale (random =
/// 0) with its 95 % interval, against the CPU hours spent (against the generation where a
/// cost is not stored), and the baselines as horizontal lines.
pub fn plot_elo(path: &Path, report: &RunReport) -> Result<(), PipelineError> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Display| PipelineError::Plot {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    let text = ninjazero_train::register_plot_font();
    let by_hours = report.generations().all(|(_, spent)| spent.is_some());
    let points: Vec<(f64, Rating)> = report
        .generations()
        .filter_map(|(generation, spent)| {
            let rating = *report.scale.get(&crate::generation_name(generation))?;
            let x = match spent {
                Some(c) if by_hours => c.cpu_seconds / 3600.0,
                _ => f64::from(generation),
            };
            Some((x, rating))
        })
        .collect();
    let lines: Vec<(&str, f64)> = report
        .baselines
        .iter()
        .filter_map(|(name, _)| Some((*name, report.scale.get(*name)?.elo)))
        .collect();
    let low = points
        .iter()
        .map(|p| p.1.low)
        .chain(lines.iter().map(|l| l.1))
        .fold(0.0, f64::min)
        - 50.0;
    let high = points
        .iter()
        .map(|p| p.1.high)
        .chain(lines.iter().map(|l| l.1))
        .fold(0.0, f64::max)
        + 50.0;
    let right = points.iter().map(|p| p.0).fold(0.0, f64::max);
    let (left, right) = if by_hours {
        (-0.05 * right.max(1e-3), 1.05 * right.max(1e-3))
    } else {
        (-0.5, right.max(1.0) + 0.5)
    };
    let root = BitMapBackend::new(path, (900, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let mut builder = ChartBuilder::on(&root);
    builder
        .margin(20)
        .x_label_area_size(40)
        .y_label_area_size(60);
    if text {
        builder.caption(
            "Elo with the random mover at 0 (95 % interval)",
            ("sans-serif", 22),
        );
    }
    let mut chart = builder
        .build_cartesian_2d(left..right, low..high)
        .map_err(|e| err(&e))?;
    let mut mesh = chart.configure_mesh();
    if text {
        mesh.x_desc(if by_hours {
            "CPU hours spent"
        } else {
            "generation"
        })
        .y_desc("Elo");
    } else {
        mesh.x_labels(0).y_labels(0);
    }
    mesh.draw().map_err(|e| err(&e))?;
    let grey = RGBColor(150, 150, 150);
    for &(name, elo) in &lines {
        chart
            .draw_series(LineSeries::new([(left, elo), (right, elo)], grey))
            .map_err(|e| err(&e))?;
        if text {
            chart
                .draw_series([Text::new(
                    name.to_string(),
                    (left, elo),
                    ("sans-serif", 14).into_font().color(&grey),
                )])
                .map_err(|e| err(&e))?;
        }
    }
    let blue = RGBColor(31, 119, 180);
    chart
        .draw_series(
            points
                .iter()
                .map(|&(x, r)| ErrorBar::new_vertical(x, r.low, r.elo, r.high, blue.filled(), 10)),
        )
        .map_err(|e| err(&e))?;
    chart
        .draw_series(LineSeries::new(
            points.iter().map(|&(x, r)| (x, r.elo)),
            blue.stroke_width(2),
        ))
        .map_err(|e| err(&e))?;
    chart
        .draw_series(
            points
                .iter()
                .map(|&(x, r)| Circle::new((x, r.elo), 5, blue.filled())),
        )
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_of_one_is_singular() {
        assert_eq!(counted(1u32, "part"), "1 part");
        assert_eq!(counted(0u64, "part"), "0 parts");
        assert_eq!(counted(2u64, "generation"), "2 generations");
    }

    fn arena(a: &str, b: &str, wins: usize, draws: usize, losses: usize) -> ArenaResult {
        ArenaResult {
            variant: "chess".to_string(),
            player_a: a.to_string(),
            player_b: b.to_string(),
            games: wins + draws + losses,
            wins,
            draws,
            losses,
            score: 0.0,
            elo: 0.0,
            elo_low: 0.0,
            elo_high: 0.0,
            sprt: None,
            game_results: Vec::new(),
        }
    }

    #[test]
    fn the_scale_puts_every_generation_against_random_through_the_arenas() {
        let arenas = [
            arena("gen-0001", "gen-0000", 24, 0, 8),
            arena("gen-0002", "gen-0001", 16, 0, 16),
            arena("gen-0002", "random", 30, 0, 2),
            arena("gen-0002", "uniform", 16, 0, 16),
        ];
        let scale = ladder_scale(&arenas).unwrap();
        assert_eq!(scale["random"].elo, 0.0);
        let (zero, one, two) = (&scale["gen-0000"], &scale["gen-0001"], &scale["gen-0002"]);
        assert!(two.elo > 300.0 && two.low > 0.0, "{two:?}");
        assert!(
            (one.elo - two.elo).abs() < 30.0,
            "an even arena: {one:?} {two:?}"
        );
        assert!(
            zero.elo < one.elo - 100.0,
            "gen 1 beat gen 0 3:1: {zero:?} {one:?}"
        );
        assert!((scale["uniform"].elo - two.elo).abs() < 30.0);
        // Generation 0 is rated only through generation 1: its interval is the widest.
        assert!(zero.high - zero.low > two.high - two.low);
    }
}

//! The run's report: `summary.md` and `elo.png`.

use crate::{PipelineError, RunConfig};
use ninjazero_arena::ArenaResult;
use ninjazero_data::atomic::write_atomically;
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
}

/// Writes `path` (the run's `summary.md`): the settings, each generation's arena against
/// the best so far and its Elo against generation 0, and where the run ended: the best
/// generation against generation 0 (`None`: nothing was promoted) and each named baseline's
/// arena line.
pub fn write_summary(
    path: &Path,
    config: &RunConfig,
    best: u32,
    history: &[GenerationRow],
    best_vs_zero: Option<&ArenaResult>,
    baselines: &[(&str, String)],
) -> Result<(), PipelineError> {
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
    write_atomically(path, md.as_bytes()).map_err(|error| PipelineError::Io {
        path: path.to_path_buf(),
        error,
    })
}

/// Draws `path` (the run's `elo.png`): each generation's Elo against generation 0 with its
/// 95 % interval.
pub fn plot_elo(path: &Path, history: &[GenerationRow]) -> Result<(), PipelineError> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Display| PipelineError::Plot {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
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

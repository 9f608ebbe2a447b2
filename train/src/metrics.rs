//! Per-step metrics (`metrics.jsonl`) and the loss-curve plot (`loss.png`).

use crate::StepStats;
use crate::TrainError;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// One line of `metrics.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricsRecord {
    /// The step just done (1-based: the first line is step 1).
    pub step: u64,
    /// Losses and statistics of the step (flattened: the JSON keeps one flat object).
    #[serde(flatten)]
    pub stats: StepStats,
    pub learning_rate: f64,
    /// Batch size over the step's wall time (loader wait included).
    pub samples_per_s: f64,
    /// Time this step waited for its batch.
    pub loader_wait_s: f64,
    /// Wall time of the step.
    pub step_s: f64,
}

/// Appends records to `metrics.jsonl`, one JSON object per line, flushed per step.
pub(crate) struct MetricsWriter {
    file: std::io::BufWriter<std::fs::File>,
    path: PathBuf,
}

impl MetricsWriter {
    pub fn append_to(path: &Path) -> Result<MetricsWriter, TrainError> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| TrainError::io(path, e))?;
        Ok(MetricsWriter {
            file: std::io::BufWriter::new(file),
            path: path.to_path_buf(),
        })
    }

    pub fn write(&mut self, record: &MetricsRecord) -> Result<(), TrainError> {
        let line = serde_json::to_string(record).expect("metrics serialise");
        writeln!(self.file, "{line}")
            .and_then(|()| self.file.flush())
            .map_err(|e| TrainError::io(&self.path, e))
    }
}

/// The records of a metrics file (unreadable lines, such as one cut by a kill, are dropped).
pub fn read_metrics(path: &Path) -> Vec<MetricsRecord> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// Keeps only the records up to `step` (a resumed job redoes the steps after its
/// checkpoint, so their lines are written again).
pub(crate) fn truncate_metrics(path: &Path, step: u64) -> Result<(), TrainError> {
    if !path.exists() {
        return Ok(());
    }
    let mut text = String::new();
    for record in read_metrics(path).into_iter().filter(|r| r.step <= step) {
        text.push_str(&serde_json::to_string(&record).expect("metrics serialise"));
        text.push('\n');
    }
    crate::state::write_atomically(path, text.as_bytes())
}

/// A font for the plot's text: the TrueType file named by `NINJAZERO_PLOT_FONT` (`none`:
/// no text), else one from the usual system locations; without one the plot is drawn
/// without text.
pub fn register_plot_font() -> bool {
    static FONT: OnceLock<bool> = OnceLock::new();
    *FONT.get_or_init(|| {
        let chosen = std::env::var("NINJAZERO_PLOT_FONT").ok();
        if chosen.as_deref() == Some("none") {
            return false;
        }
        const CANDIDATES: [&str; 6] = [
            "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
            "/usr/share/fonts/TTF/DejaVuSans.ttf",
            "/usr/share/fonts/dejavu/DejaVuSans.ttf",
            "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
            "/usr/share/fonts/truetype/freefont/FreeSans.ttf",
            "/System/Library/Fonts/Supplemental/Arial.ttf",
        ];
        for path in chosen.as_deref().into_iter().chain(CANDIDATES) {
            if let Ok(bytes) = std::fs::read(path) {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font(
                    "sans-serif",
                    plotters::style::FontStyle::Normal,
                    bytes,
                )
                .is_ok()
                {
                    return true;
                }
            }
        }
        false
    })
}

/// Exponential moving average, to show the trend through the batch noise.
fn smooth(values: &[f64], span: usize) -> Vec<f64> {
    let alpha = 2.0 / (span as f64 + 1.0);
    let mut out = Vec::with_capacity(values.len());
    let mut acc = None;
    for &v in values {
        let next = match acc {
            None => v,
            Some(a) => a + alpha * (v - a),
        };
        acc = Some(next);
        out.push(next);
    }
    out
}

/// Draws `path` (PNG, 1000x800): the policy, value and total loss on top, the policy
/// accuracy and value MSE below, each raw (light) and smoothed (solid).
pub fn plot_metrics(records: &[MetricsRecord], path: &Path) -> Result<(), TrainError> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Display| TrainError::Plot(format!("{}: {e}", path.display()));
    let text = register_plot_font();
    let root = BitMapBackend::new(path, (1000, 800)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let (top, bottom) = root.split_vertically(400);
    let steps: Vec<f64> = records.iter().map(|r| r.step as f64).collect();
    let last_step = steps.last().copied().unwrap_or(1.0).max(1.0);
    let first_step = steps.first().copied().unwrap_or(0.0).min(last_step - 1.0);
    let span = (records.len() / 20).clamp(1, 200);

    type Series<'a> = (&'a str, RGBColor, Vec<f64>);
    let panels: [(
        &DrawingArea<BitMapBackend, plotters::coord::Shift>,
        &str,
        Vec<Series>,
    ); 2] = [
        (
            &top,
            "loss",
            vec![
                (
                    "total",
                    RGBColor(40, 40, 40),
                    records.iter().map(|r| r.stats.loss).collect(),
                ),
                (
                    "policy",
                    RGBColor(31, 119, 180),
                    records.iter().map(|r| r.stats.policy_loss).collect(),
                ),
                (
                    "value",
                    RGBColor(214, 39, 40),
                    records.iter().map(|r| r.stats.value_loss).collect(),
                ),
            ],
        ),
        (
            &bottom,
            "accuracy / error",
            vec![
                (
                    "policy top-1 accuracy",
                    RGBColor(44, 160, 44),
                    records.iter().map(|r| r.stats.policy_accuracy).collect(),
                ),
                (
                    "value MSE",
                    RGBColor(148, 103, 189),
                    records.iter().map(|r| r.stats.value_mse).collect(),
                ),
            ],
        ),
    ];
    for (area, title, series) in panels {
        let finite = series
            .iter()
            .flat_map(|s| s.2.iter().copied())
            .filter(|v| v.is_finite());
        let (lo, hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        let (lo, hi) = if lo.is_finite() && hi > lo {
            (lo.min(0.0), hi * 1.05)
        } else {
            (0.0, 1.0)
        };
        let mut builder = ChartBuilder::on(area);
        builder.margin(12);
        if text {
            builder
                .caption(title, ("sans-serif", 22))
                .x_label_area_size(36)
                .y_label_area_size(56);
        }
        let mut chart = builder
            .build_cartesian_2d(first_step..last_step, lo..hi)
            .map_err(|e| err(&e))?;
        let mut mesh = chart.configure_mesh();
        mesh.light_line_style(RGBColor(235, 235, 235));
        if text {
            mesh.x_desc("step")
                .x_label_formatter(&|x| format!("{x:.0}"))
                .label_style(("sans-serif", 14));
        } else {
            mesh.disable_x_axis().disable_y_axis();
        }
        mesh.draw().map_err(|e| err(&e))?;
        for (name, color, values) in series {
            let raw = steps.iter().copied().zip(values.iter().copied());
            chart
                .draw_series(LineSeries::new(raw, color.mix(0.25)))
                .map_err(|e| err(&e))?;
            let smoothed = smooth(&values, span);
            let drawn = chart
                .draw_series(LineSeries::new(
                    steps.iter().copied().zip(smoothed),
                    color.stroke_width(2),
                ))
                .map_err(|e| err(&e))?;
            if text {
                drawn.label(name).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            }
        }
        if text {
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(RGBColor(200, 200, 200))
                .label_font(("sans-serif", 14))
                .position(SeriesLabelPosition::UpperRight)
                .draw()
                .map_err(|e| err(&e))?;
        }
    }
    root.present().map_err(|e| err(&e))?;
    Ok(())
}

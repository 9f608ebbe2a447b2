//! A study's report: the values as CSV, the whole study as Markdown, and a chart.

use crate::study::{datasets, Study, ValuesError};
use crate::{reference, verdicts, Estimate, Measurement, Method, PieceKind};
use ninjazero_rules::Variant;
use std::fmt::Write as _;
use std::path::Path;

/// One method's results, or why it has none, and what it cost.
#[derive(Debug)]
pub struct MethodRun {
    pub method: Method,
    pub estimates: Result<Measurement, String>,
    pub seconds: f64,
    /// Extra lines for the report (the Pawn-odds score, the data used).
    pub notes: Vec<String>,
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

/// `values.csv`: one line per value, with its interval, sample and published reference.
pub fn csv(variant: Variant, estimates: &[Estimate]) -> String {
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

/// `values.md`: the values of every method (and the pieces each could not value), how each
/// method went, and which pieces the data tells apart. `games`: the dataset's games.
pub fn markdown(study: &Study, games: usize, runs: &[MethodRun], estimates: &[Estimate]) -> String {
    let variant = study.variant;
    let mut text = format!("# Piece values: {variant}\n\n");
    let _ = writeln!(
        text,
        "Values in Pawns with 95 % bootstrap intervals ({} replicates). Data: {}{}.\n",
        study.bootstrap,
        if study.data.is_empty() {
            "none (matches only)".to_string()
        } else {
            format!("{} ({games} games)", datasets(study))
        },
        study
            .model
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

/// `values.png`: values with their intervals, one row per piece of `kinds`, one colour per
/// method; reference values (AlphaZero's, for chess) as black marks.
pub fn plot(
    path: &Path,
    variant: Variant,
    kinds: &[PieceKind],
    estimates: &[Estimate],
) -> Result<(), ValuesError> {
    use plotters::prelude::*;
    let err = |e: &dyn std::fmt::Display| ValuesError::Plot {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
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

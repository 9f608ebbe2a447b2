//! `fit-eval`: a piece-square evaluation fitted to a dataset's game results
//! ([`ninjazero_train::piece_square`]), for `alphabeta:PATH.eval.json`.

use super::numbers::{real, whole};
use super::{parse_variant, StageBars};
use anyhow::{bail, Context as _};
use clap::Args;
use ninjazero_model::PieceSquareEval;
use ninjazero_rules::{Role, Variant};
use ninjazero_search::{CENTIPAWNS_PER_LOG_ODDS, PIECE_SQUARE_SUFFIX};
use ninjazero_train::{fit_piece_squares_on, FitConfig, SquarePenalties};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct FitEvalArgs {
    /// Variant id.
    #[arg(long, value_parser = parse_variant)]
    variant: Variant,
    /// Dataset directory (Arrow files from `selfplay`, or a pipeline generation's
    /// directory of shards); repeat for several. Every game is read.
    #[arg(long = "data", required = true)]
    data: Vec<PathBuf>,
    /// Where to write the evaluation; the name must end in .eval.json (what
    /// `alphabeta:PATH.eval.json:ms=T` recognises).
    #[arg(long)]
    out: PathBuf,
    /// Full passes over the positions per stage (tempo; material; squares and king zones). [range: 1 to 100000]
    #[arg(long, value_parser = whole::<usize>(1, 100_000), default_value_t = FitConfig::default().epochs)]
    epochs: usize,
    /// Adam's starting learning rate. [range: above 0 to 10]
    #[arg(long, value_parser = real(0.0, 10.0, true), default_value_t = FitConfig::default().learning_rate)]
    learning_rate: f64,
    /// L2 penalty on each square bonus and king-zone weight: larger keeps the evaluation
    /// closer to plain piece values. Several, separated by commas, are each fitted and the
    /// one with the lowest loss on the held-out games is kept; auto tries 0.01,0.03,0.1,0.3
    /// (on the windows measured its choice was never the weaker evaluation). Each penalty
    /// 0 to 100, at most 16 of them.
    #[arg(long, default_value_t = SquarePenalties(FitConfig::default().square_l2))]
    square_l2: SquarePenalties,
    /// The share of the player's search value in each fitted position's target, the rest
    /// the game's result (0: the results alone). The search values are those alpha-beta
    /// players store (`selfplay --player alphabeta…`, an evaluation run's self-play), read
    /// back as the centipawns they were; the held-out loss measures the results whatever
    /// the share. [range: 0 to 1]
    #[arg(long, value_parser = real(0.0, 1.0, false), default_value_t = FitConfig::default().value_target_mix)]
    value_target_mix: f64,
}

pub fn run(args: FitEvalArgs) -> anyhow::Result<()> {
    let out_name = args.out.to_string_lossy();
    if !out_name.ends_with(PIECE_SQUARE_SUFFIX) {
        bail!("--out {out_name}: the name must end in {PIECE_SQUARE_SUFFIX}, so that alphabeta:PATH{PIECE_SQUARE_SUFFIX} recognises it");
    }
    ninjazero_data::atomic::check_file_writable(&args.out)
        .with_context(|| format!("--out {out_name}"))?;
    let config = FitConfig {
        epochs: args.epochs,
        learning_rate: args.learning_rate,
        square_l2: args.square_l2.0,
        value_target_mix: args.value_target_mix,
    };
    let eval = fit_piece_squares_on(args.variant, &args.data, &config, &StageBars::default())?;
    eval.save(&args.out)
        .with_context(|| "the fitted evaluation was not written")?;
    print!("{}", describe(&eval));
    println!("written to {out_name}; play it as alphabeta:{out_name}:ms=100");
    Ok(())
}

/// The fit's quality and the learnt values, for a person.
fn describe(eval: &PieceSquareEval) -> String {
    let fit = &eval.fit;
    let mut text = format!(
        "fitted on {} quiet positions of {} games ({} held out); held-out loss: tempo alone {:.4}, material {:.4}, with squares and king zones {:.4}\n",
        fit.positions, fit.games, fit.validation_positions, fit.validation_loss_tempo, fit.validation_loss_material, fit.validation_loss
    );
    if !fit.square_l2_tried.is_empty() {
        let tried: Vec<String> = fit
            .square_l2_tried
            .iter()
            .map(|[penalty, loss]| format!("{penalty} {loss:.4}"))
            .collect();
        text += &format!(
            "square penalty {} kept (held-out loss by penalty: {})\n",
            fit.square_l2,
            tried.join(", ")
        );
    }
    if fit.value_target_mix > 0.0 {
        text += &format!(
            "fitted targets: {} of the search value, the rest the game's result\n",
            fit.value_target_mix
        );
    }
    let values = eval.piece_values();
    let pawn = values[Role::Pawn];
    text += "piece               log-odds   Pawns   centipawns\n";
    for role in Role::ALL {
        let v = values[role];
        if role == Role::King || v.abs() < 1e-4 {
            continue;
        }
        let pawns = if pawn > 0.0 {
            format!("{:7.2}", v / pawn)
        } else {
            "      -".into()
        };
        text += &format!(
            "{:<20}{v:8.3}  {pawns}  {:9.0}\n",
            role.name(),
            v * CENTIPAWNS_PER_LOG_ODDS
        );
    }
    text += &format!(
        "tempo {:.3}, mobility {:.4} per move, Ninja Pawn in hand {:.3} (log-odds)\n",
        eval.tempo(),
        eval.mobility(),
        eval.hand_value()
    );
    text
}

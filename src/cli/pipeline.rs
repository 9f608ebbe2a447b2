//! `pipeline`: the closed loop of [`ninjazero_pipeline`] (self-play → train → arena →
//! promote, generation after generation) on the command line. Rerunning the same command
//! continues a run where it stopped.

use super::numbers::whole;
use super::{parse_variant, StageBars};
use anyhow::Context as _;
use clap::parser::ValueSource;
use clap::{ArgMatches, Args, ValueEnum};
use ninjazero_model::parse_device;
use ninjazero_pipeline::{
    PipelineError, PipelinePreset, Progress as _, RunConfig, RunDir, Setting,
};
use ninjazero_rules::Variant;
use std::path::PathBuf;
use std::time::Instant;
use tch::Device;

/// The presets of [`PipelinePreset`], as clap shows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PresetArg {
    /// Minutes on a laptop CPU: tiny network, few games.
    Demo,
    /// Hours on a CPU machine.
    Cpu,
    /// A GPU machine.
    Gpu,
}

impl From<PresetArg> for PipelinePreset {
    fn from(preset: PresetArg) -> PipelinePreset {
        match preset {
            PresetArg::Demo => PipelinePreset::Demo,
            PresetArg::Cpu => PipelinePreset::Cpu,
            PresetArg::Gpu => PipelinePreset::Gpu,
        }
    }
}

#[derive(Args, Debug)]
pub struct PipelineArgs {
    #[arg(long, value_parser = parse_variant, default_value = "insane-ninja")]
    variant: Variant,
    /// Run directory (created if needed; an existing one is continued).
    #[arg(long)]
    run: PathBuf,
    #[arg(long, value_enum, default_value = "demo")]
    preset: PresetArg,
    /// Generations to train (counting from 1; generation 0 is the initial network). [range: 1 to 1000]
    #[arg(long, value_parser = whole::<u32>(1, 1000))]
    generations: Option<u32>,
    /// cpu, cuda, cuda:N or auto.
    #[arg(long, value_parser = parse_device, default_value = "auto")]
    device: Device,
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

/// `matches`: the command line's, which tell the options given from clap's defaults.
pub fn run(args: PipelineArgs, matches: &ArgMatches) -> anyhow::Result<()> {
    let run = RunDir::new(&args.run);
    std::fs::create_dir_all(run.root()).with_context(|| run.root().display().to_string())?;
    let config = load_or_create_config(&run, &args, matches)?;
    let progress = StageBars::default();
    let started = Instant::now();
    progress.log(&format!(
        "pipeline: {}, preset {:?}, {} generations, run {}",
        config.variant()?,
        config.preset,
        config.generations,
        run.root().display()
    ));
    let outcome = ninjazero_pipeline::run(&run, &config, args.device, &progress)?;
    progress.log(&format!(
        "pipeline done in {:.1} min: best generation {}; summary in {}",
        started.elapsed().as_secs_f64() / 60.0,
        outcome.best,
        run.summary().display()
    ));
    Ok(())
}

/// The run's settings ([`ninjazero_pipeline::load_or_create`]): the options given on the
/// command line are the chosen settings, which a stored run must agree with.
/// `--generations` is not among them: it is how far to take the run, and may be changed to
/// extend it.
fn load_or_create_config(
    run: &RunDir,
    args: &PipelineArgs,
    matches: &ArgMatches,
) -> anyhow::Result<RunConfig> {
    let wanted = RunConfig::new(
        args.variant,
        args.preset.into(),
        args.seed,
        args.generations,
    );
    // An option's clap id is its setting's key.
    let chosen: Vec<Setting> = Setting::ALL
        .into_iter()
        .filter(|setting| {
            matches
                .value_source(setting.key())
                .is_some_and(|source| source != ValueSource::DefaultValue)
        })
        .collect();
    match ninjazero_pipeline::load_or_create(&run.config(), &wanted, &chosen, args.generations) {
        Err(PipelineError::OtherSettings { path, differences }) => {
            let options: Vec<String> = differences.iter().map(|d| format!("--{d}")).collect();
            anyhow::bail!(
                "{} holds a run with other settings (stored → given): {}. Give the stored values (or leave those options out) to continue it, or use another --run directory",
                path.display(),
                options.join(", ")
            )
        }
        result => Ok(result?),
    }
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
            load_or_create_config(&RunDir::new(dir), &args, &matches).map_err(|e| format!("{e:#}"))
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

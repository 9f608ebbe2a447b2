//! Where long library work reports how it goes: the pipeline's stages, a values study's
//! matches and probe. The libraries print nothing; the binary draws these reports as
//! progress bars and log lines.

/// One step's progress at a time, and log lines. Called from worker threads, hence `Sync`.
pub trait Progress: Sync {
    /// A step begins: `what` (`selfplay`, `train`, `arena`, `matches`, `probe`, …) of
    /// `len` units (0: not known yet).
    fn stage_started(&self, what: &str, len: u64);
    /// The step has done `done` of `total` units; `message` says how it goes.
    fn stage_progress(&self, done: u64, total: u64, message: &str);
    /// The step is over (also when it failed).
    fn stage_finished(&self);
    /// A line for the log (a stage's result, a promotion). Steps without one say nothing.
    fn log(&self, _line: &str) {}
}

/// A [`Progress`] that reports nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Progress for Silent {
    fn stage_started(&self, _: &str, _: u64) {}
    fn stage_progress(&self, _: u64, _: u64, _: &str) {}
    fn stage_finished(&self) {}
}

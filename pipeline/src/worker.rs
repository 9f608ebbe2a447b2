//! Stateless self-play workers on a [`Store`]: everything a worker needs is in the store
//! (the generation's [`Manifest`] and the model), and everything it makes goes back with
//! create-only puts, so any number of workers on any hosts may run any shards, twice or
//! after a crash, and a generation still holds each game exactly once.
//!
//! Object layout of a generation's self-play (keys relative to the run):
//!
//! ```text
//! selfplay/gen-NNNN/MANIFEST.json                   shards K, games per shard M, seed, search
//! selfplay/gen-NNNN/shard-KKKK/part-PPPP.arrow      games [K·M + P·p, …) of the shard, one Arrow file
//! selfplay/gen-NNNN/shard-KKKK/DONE                 the shard is complete (written after its parts)
//! models/gen-NNNN.safetensors (+ .json)             a network, given to workers by key
//! ```
//!
//! A part's games are fixed by the manifest (game ids, and their seeds derived from the
//! run's seed, the generation and the id), so a part played twice is the same games, and
//! a preempted worker loses at most the part it was playing.

use crate::stages::self_play_seed;
use crate::{generation_name, PipelineError, Progress, Store, StoreError};
use ninjazero_arena::{play_player_dataset, PlayerGamesOptions};
use ninjazero_data::atomic::{remove_abandoned_scratch_dirs, scratch_dir};
use ninjazero_data::{dataset_files, FlushPolicy};
use ninjazero_model::{load_evaluator, OneTorchThread};
use ninjazero_rules::{Position, Variant};
use ninjazero_search::{EngineSpec, SearchConfig, PIECE_SQUARE_SUFFIX};
use ninjazero_selfplay::{play_dataset, SelfPlayOptions, MAX_CONCURRENCY, MIN_CONCURRENCY};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use tch::Device;

/// The version of [`Manifest`]'s format.
pub const MANIFEST_FORMAT: u32 = 1;

/// What a generation's self-play is: written once (create-only) by whoever plans the
/// generation, read by every worker and by the trainer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    /// Variant id.
    pub variant: String,
    pub generation: u32,
    /// Shards K: shard `k` plays the game ids `[k·M, (k+1)·M)`.
    pub shards: u32,
    /// Games per shard M.
    pub games_per_shard: u64,
    /// Games per part: a shard is stored as parts of this many games (the last may hold
    /// fewer), so a preempted worker loses at most one part.
    pub games_per_part: u64,
    /// The run's seed; a game's seed derives from it, the generation and the game id.
    pub seed: u64,
    /// Games played at once by a worker.
    pub concurrency: usize,
    pub search: SearchConfig,
    /// The model that plays: a network (a key such as `models/gen-0003.safetensors`) or a
    /// learnt evaluation that [`Manifest::player`] searches with (`models/gen-0003.eval.json`);
    /// none: the model-free search, or the player alone.
    pub model: Option<String>,
    /// A player spec (`alphabeta:depth=1:…`) whose games these are instead of the MCTS
    /// self-play: its move is each position's policy target after the opening plies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player: Option<String>,
}

/// Random plies that open each game of a [`Manifest::player`] (which may be deterministic).
pub const PLAYER_OPENING_PLIES: usize = 4;

impl Manifest {
    /// Whether these are the run's first player's games: a player's, searching with no
    /// learnt model (generation 0, and an evaluation run's later ones while nothing is
    /// promoted).
    pub fn played_by_the_first_player(&self) -> bool {
        self.player.is_some() && self.model.is_none()
    }

    /// `selfplay/gen-NNNN/MANIFEST.json`.
    pub fn key(generation: u32) -> String {
        format!("{}MANIFEST.json", generation_prefix(generation))
    }

    /// The game ids of `shard`.
    pub fn game_ids(&self, shard: u32) -> Range<u64> {
        let first = u64::from(shard) * self.games_per_shard;
        first..first + self.games_per_shard
    }

    /// Parts per shard.
    pub fn parts(&self) -> u64 {
        self.games_per_shard.div_ceil(self.games_per_part.max(1))
    }

    /// The game ids of part `part` of `shard`.
    pub fn part_ids(&self, shard: u32, part: u64) -> Range<u64> {
        let shard_ids = self.game_ids(shard);
        let first = shard_ids.start + part * self.games_per_part;
        first..(first + self.games_per_part).min(shard_ids.end)
    }

    pub fn variant(&self) -> Result<Variant, PipelineError> {
        Ok(self.variant.parse()?)
    }

    /// Checks the numbers a worker relies on.
    fn validate(&self, key: &str) -> Result<(), PipelineError> {
        let bad = |reason: &str| {
            Err(PipelineError::Manifest {
                key: key.to_string(),
                reason: reason.to_string(),
            })
        };
        if self.format != MANIFEST_FORMAT {
            return bad(&format!(
                "manifest format {}, this build reads {MANIFEST_FORMAT}",
                self.format
            ));
        }
        if self.shards == 0 || self.games_per_shard == 0 || self.games_per_part == 0 {
            return bad("shards, games per shard and games per part must be at least 1");
        }
        if u64::from(self.shards)
            .checked_mul(self.games_per_shard)
            .is_none()
        {
            return bad("shards × games per shard overflows the game ids");
        }
        if !(MIN_CONCURRENCY..=MAX_CONCURRENCY).contains(&self.concurrency) {
            return bad(&format!(
                "concurrency {} is not {MIN_CONCURRENCY} to {MAX_CONCURRENCY}",
                self.concurrency
            ));
        }
        if let Err(reason) = self.search.validate() {
            return bad(&format!("search: {reason}"));
        }
        if let Some(model) = &self.model {
            if !is_evaluation(model) && sidecar_key(model).is_err() {
                return bad(&format!(
                    "model {model}: a model key ends in .safetensors (a network) or {PIECE_SQUARE_SUFFIX} (a learnt evaluation)"
                ));
            }
        }
        self.variant().map(drop)
    }

    /// Stores the manifest unless the generation has one. Returns whether it was written;
    /// an existing manifest with other settings is an error (it is left as it is).
    pub fn publish(&self, store: &Store) -> Result<bool, PipelineError> {
        let key = Manifest::key(self.generation);
        self.validate(&key)?;
        let json =
            serde_json::to_string_pretty(self).map_err(|e| PipelineError::Encode(e.to_string()))?;
        match store.put_new(&key, (json + "\n").into_bytes()) {
            Ok(()) => Ok(true),
            Err(StoreError::AlreadyExists { .. }) => {
                let stored = Manifest::load(store, self.generation)?;
                if &stored == self {
                    Ok(false)
                } else {
                    Err(PipelineError::Manifest {
                        key: format!("{}/{key}", store.url()),
                        reason: "exists with other settings (it is kept; plan another generation or use the stored settings)".to_string(),
                    })
                }
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The manifest of `generation`.
    pub fn load(store: &Store, generation: u32) -> Result<Manifest, PipelineError> {
        let key = Manifest::key(generation);
        let bytes =
            match store.get(&key) {
                Err(StoreError::NotFound { url, key }) => return Err(PipelineError::NotYet {
                    key: format!("{url}/{key}"),
                    reason:
                        "no such manifest (plan the generation first: `ninjazero worker manifest`)"
                            .to_string(),
                }),
                other => other?,
            };
        let manifest: Manifest =
            serde_json::from_slice(&bytes).map_err(|e| PipelineError::Manifest {
                key: format!("{}/{key}", store.url()),
                reason: format!("not a manifest: {e}"),
            })?;
        manifest.validate(&format!("{}/{key}", store.url()))?;
        Ok(manifest)
    }
}

/// `selfplay/gen-NNNN/`.
pub fn generation_prefix(generation: u32) -> String {
    format!("selfplay/{}/", generation_name(generation))
}

/// `selfplay/gen-NNNN/shard-KKKK/`.
pub fn shard_prefix(generation: u32, shard: u32) -> String {
    format!("{}shard-{shard:04}/", generation_prefix(generation))
}

/// The key of part `part` of a shard.
pub fn part_key(generation: u32, shard: u32, part: u64) -> String {
    format!("{}part-{part:04}.arrow", shard_prefix(generation, shard))
}

/// The key of a shard's completion marker.
pub fn done_key(generation: u32, shard: u32) -> String {
    format!("{}DONE", shard_prefix(generation, shard))
}

/// What a shard's worker is asked to do.
#[derive(Clone, Debug)]
pub struct ShardJob<'a> {
    pub generation: u32,
    pub shard: u32,
    /// The model key; none: the manifest's.
    pub model: Option<&'a str>,
    /// The variant the caller expects the run to be of; none: the manifest's.
    pub variant: Option<Variant>,
    pub device: Device,
    /// Where fetched models are kept.
    pub cache: &'a Path,
}

/// What a shard's worker did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShardOutcome {
    /// The shard was complete already: nothing was played or stored.
    AlreadyDone,
    /// The missing parts were played and stored, then the marker.
    Played {
        /// Parts this worker stored.
        parts_stored: u64,
        /// Parts found stored already (by an earlier or a concurrent worker).
        parts_found: u64,
        games: u64,
        positions: u64,
    },
}

/// Plays the missing parts of a shard and stores them, then its `DONE` marker. A shard
/// already complete is left alone.
pub fn selfplay_shard(
    store: &Store,
    job: &ShardJob,
    progress: &dyn Progress,
) -> Result<ShardOutcome, PipelineError> {
    let manifest = Manifest::load(store, job.generation)?;
    let variant = checked_variant(store, &manifest, job)?;
    if store.exists(&done_key(job.generation, job.shard))? {
        return Ok(ShardOutcome::AlreadyDone);
    }
    let key = job.model.or(manifest.model.as_deref());
    let model = match key {
        Some(key) => Some(fetch_model(store, key, job.cache)?),
        None => None,
    };
    let evaluation = model.as_deref().filter(|_| key.is_some_and(is_evaluation));
    let network = model.as_deref().filter(|_| evaluation.is_none());
    let (mut evaluator, model_id) = load_evaluator(network, variant, job.device)?;
    let player = manifest_player(store, &manifest, evaluation)?;
    // A player's batch-1 searches: one libtorch thread per game, until the shard is done.
    let _one_thread = player.is_some().then(OneTorchThread::new);
    let stored: Vec<String> = store
        .list(&shard_prefix(job.generation, job.shard))?
        .into_iter()
        .map(|o| o.key)
        .collect();
    let mut outcome = (0, 0, 0, 0);
    progress.stage_started("selfplay", manifest.games_per_shard);
    for part in 0..manifest.parts() {
        let key = part_key(job.generation, job.shard, part);
        let ids = manifest.part_ids(job.shard, part);
        if stored.contains(&key) {
            outcome.1 += 1;
            continue;
        }
        let options = SelfPlayOptions {
            start: Position::start(variant),
            game_ids: ids.clone(),
            concurrency: manifest.concurrency,
            seed: self_play_seed(manifest.seed, job.generation),
            config: manifest.search.clone(),
            model_id: model_id.clone(),
        };
        let scratch = shard_scratch_dir()?;
        let policy = FlushPolicy {
            games_per_file: ids.clone().count(),
            max_age: None,
        };
        let done_before = ids.start - manifest.game_ids(job.shard).start;
        let (games, positions) = match &player {
            Some(spec) => {
                let options = PlayerGamesOptions {
                    start: Position::start(variant),
                    game_ids: ids.clone(),
                    opening_plies: PLAYER_OPENING_PLIES,
                    max_plies: manifest.search.max_plies,
                    seed: self_play_seed(manifest.seed, job.generation),
                    player: spec.to_string(),
                };
                let make_player = spec.factory(variant, job.device, options.seed);
                play_player_dataset(
                    scratch.path(),
                    &options,
                    &make_player,
                    crate::stages::available_threads(),
                    policy,
                    &|done| {
                        progress.stage_progress(
                            done_before + done,
                            manifest.games_per_shard,
                            &format!("part {part}"),
                        )
                    },
                )
                .map_err(PipelineError::Arena)?
            }
            None => {
                let (_, stats) = play_dataset(
                    scratch.path(),
                    &options,
                    evaluator.as_mut(),
                    policy,
                    &|_, s| {
                        progress.stage_progress(
                            done_before + s.games,
                            manifest.games_per_shard,
                            &format!("part {part}: {} positions", s.positions),
                        )
                    },
                )?;
                (stats.games, stats.positions)
            }
        };
        let files = dataset_files(scratch.path())?;
        let [file] = files.as_slice() else {
            return Err(PipelineError::Manifest {
                key: key.clone(),
                reason: format!("a part should be one file, the writer made {}", files.len()),
            });
        };
        match store.put_new_file(&key, file) {
            Ok(()) => outcome.0 += 1,
            // A concurrent worker stored the same games first.
            Err(StoreError::AlreadyExists { .. }) => outcome.1 += 1,
            Err(e) => return Err(e.into()),
        }
        outcome.2 += games;
        outcome.3 += positions;
    }
    progress.stage_finished();
    mark_done(store, &manifest, job)?;
    let (parts_stored, parts_found, games, positions) = outcome;
    Ok(ShardOutcome::Played {
        parts_stored,
        parts_found,
        games,
        positions,
    })
}

/// The name of a shard part's scratch directories in the system's temporary directory.
const SCRATCH_PREFIX: &str = "ninjazero-shard";

/// A scratch directory for one part's games in the system's temporary directory, after
/// removing those that killed workers on this machine left there (a preempted cluster job
/// gets no chance to remove its own).
fn shard_scratch_dir() -> Result<tempfile::TempDir, PipelineError> {
    let parent = std::env::temp_dir();
    let io = |error| PipelineError::Io {
        path: parent.clone(),
        error,
    };
    remove_abandoned_scratch_dirs(&parent, SCRATCH_PREFIX).map_err(io)?;
    scratch_dir(&parent, SCRATCH_PREFIX).map_err(io)
}

/// The run's variant, checked against the caller's and the shard against the manifest.
fn checked_variant(
    store: &Store,
    manifest: &Manifest,
    job: &ShardJob,
) -> Result<Variant, PipelineError> {
    let key = format!("{}/{}", store.url(), Manifest::key(job.generation));
    let variant = manifest.variant()?;
    if let Some(expected) = job.variant.filter(|&v| v != variant) {
        return Err(PipelineError::Manifest {
            key,
            reason: format!(
                "the generation is planned for {}, not {}",
                variant.id(),
                expected.id()
            ),
        });
    }
    if job.shard >= manifest.shards {
        return Err(PipelineError::Manifest {
            key,
            reason: format!(
                "shard {} asked for, the generation has shards 0 to {}",
                job.shard,
                manifest.shards - 1
            ),
        });
    }
    Ok(variant)
}

/// The shard's `DONE` marker: its parts, written after all of them (create-only; a
/// concurrent worker's marker is as good).
fn mark_done(store: &Store, manifest: &Manifest, job: &ShardJob) -> Result<(), PipelineError> {
    let parts: Vec<String> = (0..manifest.parts())
        .map(|p| part_key(job.generation, job.shard, p))
        .collect();
    let ids = manifest.game_ids(job.shard);
    let marker = serde_json::json!({ "parts": parts, "game_ids": [ids.start, ids.end] });
    match store.put_new(
        &done_key(job.generation, job.shard),
        (marker.to_string() + "\n").into_bytes(),
    ) {
        Ok(()) | Err(StoreError::AlreadyExists { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// The manifest's player, searching with `evaluation` when the manifest's model is one.
fn manifest_player(
    store: &Store,
    manifest: &Manifest,
    evaluation: Option<&Path>,
) -> Result<Option<EngineSpec>, PipelineError> {
    let refused = |reason: String| PipelineError::Manifest {
        key: format!("{}/{}", store.url(), Manifest::key(manifest.generation)),
        reason,
    };
    let player = match &manifest.player {
        Some(text) => Some(
            text.parse::<EngineSpec>()
                .map_err(|e| refused(format!("not a player: {e}")))?,
        ),
        None => None,
    };
    match (player, evaluation) {
        (player, None) => Ok(player),
        (Some(player), Some(evaluation)) => match player.with_evaluation(evaluation) {
            Some(searching) => Ok(Some(searching)),
            None => Err(refused(format!(
                "its model is a learnt evaluation, which {player} cannot search with (alpha-beta without a network can)"
            ))),
        },
        (None, Some(_)) => Err(refused(
            "its model is a learnt evaluation, and it names no alpha-beta player to search with it".to_string(),
        )),
    }
}

/// The key of a model's `.json` sidecar.
pub(crate) fn sidecar_key(key: &str) -> Result<String, PipelineError> {
    match key.strip_suffix(".safetensors") {
        Some(stem) => Ok(format!("{stem}.json")),
        None => Err(PipelineError::Manifest {
            key: key.to_string(),
            reason: "a model key ends in .safetensors".to_string(),
        }),
    }
}

/// The model at `key` (a network with its `.json` sidecar, or a learnt evaluation),
/// fetched into the cache; the local path of the model.
pub(crate) fn fetch_model(
    store: &Store,
    key: &str,
    cache: &Path,
) -> Result<std::path::PathBuf, PipelineError> {
    if !is_evaluation(key) {
        store.get_to_cache(&sidecar_key(key)?, cache)?;
    }
    Ok(store.get_to_cache(key, cache)?)
}

/// Whether a model key names a learnt evaluation, not a network.
pub(crate) fn is_evaluation(key: &str) -> bool {
    key.ends_with(PIECE_SQUARE_SUFFIX)
}

/// A shard as the stored objects show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShardState {
    Done,
    /// Some parts stored, no marker yet.
    Partial {
        parts: u64,
    },
    Missing,
}

/// A generation's self-play as the stored objects show it.
#[derive(Clone, Debug, PartialEq)]
pub struct GenerationStatus {
    pub generation: u32,
    /// None: objects without a manifest (such as a single-machine run's dataset).
    pub manifest: Option<Manifest>,
    /// One state per shard of the manifest.
    pub shards: Vec<ShardState>,
    /// Objects of the generation outside the manifest's shards.
    pub other_objects: usize,
}

/// Every generation with self-play objects in the run, in order.
pub fn generation_status(store: &Store) -> Result<Vec<GenerationStatus>, PipelineError> {
    let mut by_generation: BTreeMap<u32, Vec<String>> = BTreeMap::new();
    for object in store.list("selfplay/")? {
        let mut parts = object.key.splitn(3, '/');
        let (_, generation, rest) = (parts.next(), parts.next(), parts.next());
        let Some(generation) = generation
            .and_then(|g| g.strip_prefix("gen-"))
            .and_then(|g| g.parse().ok())
        else {
            continue;
        };
        by_generation
            .entry(generation)
            .or_default()
            .push(rest.unwrap_or("").to_string());
    }
    let mut statuses = Vec::new();
    for (generation, keys) in by_generation {
        let manifest = if keys.iter().any(|k| k == "MANIFEST.json") {
            Some(Manifest::load(store, generation)?)
        } else {
            None
        };
        statuses.push(shard_states(generation, manifest, &keys));
    }
    Ok(statuses)
}

/// The shards' states from a generation's keys (relative to `selfplay/gen-NNNN/`).
fn shard_states(generation: u32, manifest: Option<Manifest>, keys: &[String]) -> GenerationStatus {
    let shards = manifest.as_ref().map_or(0, |m| m.shards);
    let mut states = vec![ShardState::Missing; shards as usize];
    let mut other_objects = 0;
    for key in keys.iter().filter(|k| *k != "MANIFEST.json") {
        let shard = key
            .split_once('/')
            .and_then(|(dir, file)| Some((dir.strip_prefix("shard-")?.parse::<u32>().ok()?, file)));
        match shard {
            Some((k, file)) if k < shards => {
                let state = &mut states[k as usize];
                match (file, *state) {
                    ("DONE", _) => *state = ShardState::Done,
                    (_, ShardState::Done) => {}
                    (_, ShardState::Partial { parts }) => {
                        *state = ShardState::Partial { parts: parts + 1 }
                    }
                    (_, ShardState::Missing) => *state = ShardState::Partial { parts: 1 },
                }
            }
            _ => other_objects += 1,
        }
    }
    GenerationStatus {
        generation,
        manifest,
        shards: states,
        other_objects,
    }
}

impl std::fmt::Display for GenerationStatus {
    /// One line: the generation, its manifest's K, M and seed, and its shards' states.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: ", generation_name(self.generation))?;
        let Some(m) = &self.manifest else {
            return write!(f, "no manifest, {} objects", self.other_objects);
        };
        let count =
            |wanted: fn(&ShardState) -> bool| self.shards.iter().filter(|s| wanted(s)).count();
        let done = count(|s| *s == ShardState::Done);
        let partial = count(|s| matches!(s, ShardState::Partial { .. }));
        let missing = count(|s| *s == ShardState::Missing);
        write!(
            f,
            "{} shards × {} games, seed {}, {}: {done} done, {partial} partial, {missing} missing",
            m.shards, m.games_per_shard, m.seed, m.variant
        )?;
        if self.other_objects > 0 {
            write!(f, ", {} other objects", self.other_objects)?;
        }
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A manifest of generation 2's self-play on chess, by the model-free search.
    pub(crate) fn manifest() -> Manifest {
        Manifest {
            format: MANIFEST_FORMAT,
            variant: "chess".to_string(),
            generation: 2,
            shards: 3,
            games_per_shard: 5,
            games_per_part: 2,
            seed: 9,
            concurrency: 4,
            search: SearchConfig::default(),
            model: None,
            player: None,
        }
    }

    #[test]
    fn shards_and_parts_cover_the_game_ids_once() {
        let m = manifest();
        assert_eq!(m.parts(), 3);
        let mut ids = Vec::new();
        for shard in 0..m.shards {
            for part in 0..m.parts() {
                ids.extend(m.part_ids(shard, part));
            }
        }
        assert_eq!(ids, (0..15).collect::<Vec<u64>>());
        assert_eq!(m.part_ids(1, 2), 9..10);
        assert_eq!(
            part_key(2, 1, 0),
            "selfplay/gen-0002/shard-0001/part-0000.arrow"
        );
        assert_eq!(Manifest::key(2), "selfplay/gen-0002/MANIFEST.json");
    }

    #[test]
    fn a_manifest_naming_no_model_or_a_bad_concurrency_is_not_stored() {
        let tmp = ninjazero_testkit::temp_dir();
        let store = Store::open(ninjazero_testkit::text(tmp.path())).unwrap();
        let refused = Manifest {
            model: Some("run.toml".to_string()),
            ..manifest()
        }
        .publish(&store)
        .unwrap_err()
        .to_string();
        assert!(
            refused.contains("model run.toml: a model key ends in .safetensors"),
            "{refused}"
        );
        assert!(!store.exists(&Manifest::key(2)).unwrap());
        for concurrency in [1, MAX_CONCURRENCY + 1] {
            let refused = Manifest {
                concurrency,
                ..manifest()
            }
            .publish(&store)
            .unwrap_err()
            .to_string();
            assert!(
                refused.contains(&format!("concurrency {concurrency} is not 2 to 65536")),
                "{refused}"
            );
        }
        assert!(!store.exists(&Manifest::key(2)).unwrap());
        let network = Manifest {
            model: Some("models/gen-0001.safetensors".to_string()),
            ..manifest()
        };
        assert!(network.publish(&store).unwrap());
    }

    #[test]
    fn the_status_counts_done_partial_and_missing_shards() {
        let keys: Vec<String> = [
            "MANIFEST.json",
            "shard-0000/part-0000.arrow",
            "shard-0000/DONE",
            "shard-0002/part-0001.arrow",
            "shard-0002/part-0000.arrow",
            "shard-0007/part-0000.arrow",
        ]
        .map(String::from)
        .to_vec();
        let status = shard_states(2, Some(manifest()), &keys);
        assert_eq!(
            status.shards,
            [
                ShardState::Done,
                ShardState::Missing,
                ShardState::Partial { parts: 2 }
            ]
        );
        assert_eq!(
            status.to_string(),
            "gen-0002: 3 shards × 5 games, seed 9, chess: 1 done, 1 partial, 1 missing, 1 other objects"
        );
    }

    #[test]
    fn manifests_are_created_once_and_never_replaced() {
        let tmp = ninjazero_testkit::temp_dir();
        let store = Store::open(tmp.path().to_str().unwrap()).unwrap();
        let m = manifest();
        assert!(m.publish(&store).unwrap());
        assert!(
            !m.publish(&store).unwrap(),
            "the same manifest again is no change"
        );
        let other = Manifest {
            seed: 10,
            ..manifest()
        };
        let error = other.publish(&store).unwrap_err().to_string();
        assert!(error.contains("exists with other settings"), "{error}");
        assert_eq!(Manifest::load(&store, 2).unwrap(), m);
        let missing = Manifest::load(&store, 3).unwrap_err().to_string();
        assert!(
            missing.contains("gen-0003/MANIFEST.json: no such manifest"),
            "{missing}"
        );
        let bad = Manifest {
            shards: 0,
            generation: 4,
            ..manifest()
        };
        assert!(bad.publish(&store).is_err());
    }
}

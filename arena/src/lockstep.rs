//! An arena's games all at once, their network leaves batched.
//!
//! Played one per core, an arena game of an MCTS player sends its network one position at
//! a time, which leaves a GPU nearly idle. When no player has a time limit (so that a
//! searched move does not depend on the clock), the arena plays its games in lockstep
//! instead, as self-play does: each step, every game whose mover is an MCTS player
//! searches on to its next leaves, and each such player's leaves of all the games go to its
//! network in one call; a game whose mover is another engine (random, alpha-beta) plays
//! that move in the step. The batches are made in game order, so an arena repeats game for
//! game on one machine. Its games are those of one game per core where the evaluator's
//! outputs do not depend on the batch; a network's outputs move in the last bits with the
//! batch size, which could turn a close choice of move (not seen in the demo's arenas).

use crate::arena::{
    game_over, opening, pair_game_seed, play_own_move, play_searched, ArenaConfig, ArenaGame,
    GameEnd,
};
use ninjazero_model::{EvalRequest, Evaluation};
use ninjazero_rules::{Color, Game, Position, Variant};
use ninjazero_search::{
    Engine, EngineFactory, MctsEngine, MctsMoveSearch, MctsSearch, SearchError,
};
use rand::rngs::StdRng;
use rayon::prelude::*;
use std::collections::HashMap;
use std::ops::Range;
use std::time::Duration;

/// Games played at once at most: full network batches on a GPU, the trees' memory bounded.
const GAMES_AT_ONCE: usize = 256;

/// Whether two players suit lockstep: at least one MCTS player, and neither limited by time.
pub(crate) fn suits(a: &mut dyn Engine, b: &mut dyn Engine) -> bool {
    let untimed = |e: &dyn Engine| e.limits().time.is_none();
    (a.as_mcts().is_some() || b.as_mcts().is_some()) && untimed(&*a) && untimed(&*b)
}

/// One side of every game: A or B.
enum Side<'f> {
    /// An MCTS engine, whose network evaluates the leaves of all the games.
    Mcts(Box<dyn Engine>),
    /// Any other engine: each game gets its own from the factory.
    PerGame(&'f EngineFactory<'f>),
}

/// What a game holds of one side.
enum Player {
    /// The game's random stream of an MCTS side.
    Mcts(Box<StdRng>),
    Engine(Box<dyn Engine>),
}

/// A game under way.
struct LiveGame {
    /// The arena's pair number (0 for its first pair).
    pair: usize,
    a_is_white: bool,
    opening: Vec<String>,
    game: Game,
    /// A's and B's.
    players: [Player; 2],
    /// The MCTS search of the mover's move, while it lasts.
    search: Option<MctsSearch>,
    /// A's and B's last search, for a player that keeps its trees.
    kept: [Option<MctsSearch>; 2],
    /// Leaves of that search waiting for the network.
    waiting: usize,
    end: Option<GameEnd>,
}

impl LiveGame {
    /// Game `index` of the arena: pair `index / 2`, A as White in the first of the pair.
    fn new(
        sides: &mut [Side; 2],
        start: &Position,
        config: &ArenaConfig,
        index: usize,
    ) -> Result<LiveGame, String> {
        let (pair, a_is_white) = (index / 2, index % 2 == 0);
        let number = config.first_pair + pair;
        let moves = opening(start, config.opening_plies, config.seed, number);
        let seed = pair_game_seed(config, number, a_is_white);
        let player = |side: &mut Side| -> Result<Player, String> {
            Ok(match side {
                Side::Mcts(engine) => Player::Mcts(Box::new(mcts(engine).game_rng(seed))),
                Side::PerGame(factory) => {
                    let mut engine = factory()?;
                    engine.new_game(seed);
                    Player::Engine(engine)
                }
            })
        };
        let [a, b] = sides;
        let players = [player(a)?, player(b)?];
        let mut game = Game::from_position(start.clone());
        for &m in &moves {
            game.play_unchecked(m);
        }
        Ok(LiveGame {
            pair,
            a_is_white,
            opening: moves.iter().map(|m| m.to_string()).collect(),
            game,
            players,
            search: None,
            kept: [None, None],
            waiting: 0,
            end: None,
        })
    }

    fn into_record(self) -> ArenaGame {
        let end = self.end.expect("the game ended");
        ArenaGame::new(self.opening, self.a_is_white, end, &self.game)
    }

    /// The side to move: 0 for A, 1 for B.
    fn mover(&self) -> usize {
        usize::from((self.game.position().turn() == Color::White) != self.a_is_white)
    }

    /// Plays on until the game ends or its MCTS mover's leaves wait for the network.
    fn advance(
        &mut self,
        sides: &[Option<MctsMoveSearch>; 2],
        names: &[String; 2],
        max_plies: u32,
    ) {
        while self.end.is_none() {
            if let Some(end) = game_over(&self.game, max_plies, true) {
                self.end = Some(end);
                return;
            }
            let mover = self.mover();
            let played = match &mut self.players[mover] {
                Player::Engine(engine) => play_own_move(&mut self.game, engine.as_mut()),
                Player::Mcts(rng) => {
                    let settings = sides[mover]
                        .as_ref()
                        .expect("an MCTS side has its settings");
                    let kept = &mut self.kept[mover];
                    let search = self
                        .search
                        .get_or_insert_with(|| settings.start(&self.game, rng, kept.take()));
                    if !search.is_finished() {
                        self.waiting =
                            search.gather(self.game.hashes(), settings.leaves_per_call());
                        if self.waiting > 0 {
                            return;
                        }
                    }
                    let search = self.search.take().expect("a search is under way");
                    let searched = if search.root_is_terminal() {
                        Err(SearchError::GameOver)
                    } else {
                        Ok(search.info(Duration::ZERO))
                    };
                    if settings.keeps_trees() {
                        self.kept[mover] = Some(search);
                    }
                    play_searched(&mut self.game, searched, || names[mover].clone())
                }
            };
            if let Err(end) = played {
                self.end = Some(end);
            }
        }
    }

    /// Takes the evaluations of the waiting leaves.
    fn complete(&mut self, evaluations: &[Evaluation]) {
        let mover = self.mover();
        if let (Some(search), Player::Mcts(rng)) = (&mut self.search, &mut self.players[mover]) {
            search.complete_leaves(evaluations, rng);
        }
        self.waiting = 0;
    }
}

/// Plays the arena's pairs (openings `first_pair..first_pair + pairs`) in lockstep, at most
/// [`GAMES_AT_ONCE`] games at a time, started in pair order: each player is its engine
/// (named in the results) and the factory of its engines for other games. `on_pair(pair,
/// games)` gets each finished pair (numbered from 0, A as White first) and returns true
/// once no more are wanted.
pub(crate) fn play(
    players: [(Box<dyn Engine>, &EngineFactory); 2],
    variant: Variant,
    config: &ArenaConfig,
    on_pair: &mut dyn FnMut(usize, [ArenaGame; 2]) -> bool,
) -> Result<(), String> {
    let names = [players[0].0.name(), players[1].0.name()];
    let [(search_a, side_a), (search_b, side_b)] =
        players.map(|(mut engine, factory)| {
            match engine.as_mcts().map(|mcts| mcts.move_search()) {
                Some(search) => (Some(search), Side::Mcts(engine)),
                None => (None, Side::PerGame(factory)),
            }
        });
    let searches = [search_a, search_b];
    let mut sides = [side_a, side_b];
    let start = Position::start(variant);
    let mut live: Vec<LiveGame> = Vec::new();
    let mut started = 0;
    let mut first_halves: HashMap<usize, ArenaGame> = HashMap::new();
    let mut evaluations: [Vec<Evaluation>; 2] = [Vec::new(), Vec::new()];
    loop {
        while live.len() < GAMES_AT_ONCE && started < 2 * config.pairs {
            live.push(LiveGame::new(&mut sides, &start, config, started)?);
            started += 1;
        }
        if live.is_empty() {
            return Ok(());
        }
        live.par_iter_mut()
            .for_each(|game| game.advance(&searches, &names, config.max_plies));
        evaluate_waiting_leaves(&mut sides, &live, &mut evaluations);
        complete_waiting_leaves(&mut live, &evaluations);
        let (ended, playing): (Vec<_>, Vec<_>) = live.into_iter().partition(|g| g.end.is_some());
        live = playing;
        for game in ended {
            let pair = game.pair;
            let record = game.into_record();
            let Some(other) = first_halves.remove(&pair) else {
                first_halves.insert(pair, record);
                continue;
            };
            let games = if record.a_is_white {
                [record, other]
            } else {
                [other, record]
            };
            if on_pair(pair, games) {
                return Ok(());
            }
        }
    }
}

/// Each MCTS side's waiting leaves of all the games, in game order, in one network call
/// into that side's `evaluations`.
fn evaluate_waiting_leaves(
    sides: &mut [Side; 2],
    live: &[LiveGame],
    evaluations: &mut [Vec<Evaluation>; 2],
) {
    for (mover, (side, out)) in sides.iter_mut().zip(evaluations).enumerate() {
        if let Side::Mcts(engine) = side {
            let requests: Vec<EvalRequest> = live
                .iter()
                .filter(|g| g.waiting > 0 && g.mover() == mover)
                .flat_map(|g| g.search.as_ref().expect("a search waits").requests())
                .collect();
            if !requests.is_empty() {
                mcts(engine).evaluate(&requests, out);
            }
        }
    }
}

/// Hands each game with waiting leaves its share of its mover's `evaluations`.
fn complete_waiting_leaves(live: &mut [LiveGame], evaluations: &[Vec<Evaluation>; 2]) {
    let mut next = [0, 0];
    let shares: Vec<Option<(usize, Range<usize>)>> = live
        .iter()
        .map(|g| {
            (g.waiting > 0).then(|| {
                let mover = g.mover();
                next[mover] += g.waiting;
                (mover, next[mover] - g.waiting..next[mover])
            })
        })
        .collect();
    live.par_iter_mut().zip(shares).for_each(|(game, share)| {
        if let Some((mover, leaves)) = share {
            game.complete(&evaluations[mover][leaves]);
        }
    });
}

/// The MCTS engine of an MCTS side.
fn mcts(engine: &mut Box<dyn Engine>) -> &mut MctsEngine {
    engine
        .as_mcts()
        .expect("an MCTS side's engine is an MCTS engine")
}

//! One self-play game: the search of its current move, and its records.
//!
//! The search is the core of `ninjazero-search` ([`MctsSearch`]); this module adds what
//! self-play needs around it: playout cap randomization (a full or a cheap search for each
//! move), the root policy of each (Dirichlet noise on full PUCT searches, or the Gumbel
//! root), the move choice (the Gumbel root's, or visit-proportional sampling in the opening),
//! the records with their policy targets, resignation and adjudication.
//!
//! The scheduler drives many games in lock step: [`SelfPlayGame::prepare_leaf`] runs the
//! search until it needs a network evaluation (simulations ending in a terminal node are
//! finished at once, and moves are played whenever a search is complete), and
//! [`SelfPlayGame::complete_leaf`] takes the evaluation back.

use ninjazero_data::{GameRecord, PolicyEntry, PositionRecord};
use ninjazero_model::{move_index, BoardShape, EvalRequest, Evaluation};
use ninjazero_rules::seed::{derive_seed, SeedStream};
use ninjazero_rules::{Color, Game, Position};
use ninjazero_search::{MctsSearch, RootPolicy, SearchConfig};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::time::Duration;

pub struct SelfPlayGame {
    pub id: u64,
    shape: BoardShape,
    /// The game's random stream: playout cap randomization, the root policy's noise, the
    /// opening's move sampling, in the order the game needs them.
    rng: StdRng,
    game: Game,
    search: MctsSearch,
    /// Whether the current move gets a full search (its policy is a training target).
    full_search: bool,
    records: Vec<PositionRecord>,
    resign_disabled: bool,
    low_value_streak: [u32; 2],
    would_resign: Option<(Color, u16)>,
    result: Option<(Option<Color>, String)>,
}

impl SelfPlayGame {
    /// A new game from `start`, with its own random stream derived from `seed` and `id`.
    pub fn new(id: u64, start: Position, seed: u64, config: &SearchConfig) -> SelfPlayGame {
        let mut rng = StdRng::seed_from_u64(derive_seed(seed, SeedStream::Game, id));
        let resign_disabled = rng.random_bool(config.resign_disabled_fraction);
        let mut game = SelfPlayGame {
            id,
            shape: BoardShape::of(start.variant()),
            search: MctsSearch::new(start.clone(), config),
            game: Game::from_position(start),
            full_search: false,
            rng,
            records: Vec::new(),
            resign_disabled,
            low_value_streak: [0; 2],
            would_resign: None,
            result: None,
        };
        game.begin_move(config);
        game
    }

    /// Positions recorded so far (one per move played).
    pub fn positions_played(&self) -> usize {
        self.records.len()
    }

    pub fn is_finished(&self) -> bool {
        self.result.is_some()
    }

    /// Time spent generating legal moves at leaves.
    pub fn movegen(&self) -> Duration {
        self.search.movegen()
    }

    /// The evaluation request of the pending leaf, if any.
    pub fn request(&self) -> Option<EvalRequest<'_>> {
        self.search.request()
    }

    /// Searches until a leaf needs the network (true) or the game is over (false).
    pub fn prepare_leaf(&mut self, config: &SearchConfig) -> bool {
        while self.result.is_none() {
            if self.search.next_leaf(self.game.hashes()) {
                return true;
            }
            self.play_searched_move(config);
        }
        false
    }

    /// Takes the network's evaluation of the pending leaf.
    pub fn complete_leaf(&mut self, evaluation: &Evaluation) {
        self.search.complete_leaf(evaluation, &mut self.rng);
    }

    /// Starts the search of the next move (playout cap randomization decides its size).
    fn begin_move(&mut self, config: &SearchConfig) {
        let full = self.rng.random_bool(config.full_search_probability);
        self.full_search = full;
        let budget = if full {
            config.simulations
        } else {
            config.cheap_simulations
        };
        self.search
            .start(budget, RootPolicy::of(config, full), &mut self.rng);
    }

    /// Picks the move from the finished search, records the position, and plays it (or
    /// resigns).
    fn play_searched_move(&mut self, config: &SearchConfig) {
        let position = self.search.root_position().clone();
        let root_value = self.search.root_value();
        let edges = self.search.root_edges().to_vec();
        let visits = self.search.visits();
        let target = self.search.policy_target();
        let choice = match self.search.gumbel_choice() {
            Some(choice) => choice,
            None => self.visit_choice(&visits, config),
        };
        if self.resigns(position.turn(), root_value, config) {
            self.result = Some((Some(!position.turn()), "resignation".to_string()));
            return;
        }
        let ply = self.game.moves().len() as u16;
        self.records.push(PositionRecord {
            ply,
            fen: position.to_fen(),
            side_to_move: position.turn(),
            policy: edges
                .iter()
                .zip(&visits)
                .zip(&target)
                .map(|((edge, &visits), &probability)| PolicyEntry {
                    index: move_index(&self.shape, &position, edge.mv) as u32,
                    move_text: edge.mv.to_string(),
                    visits,
                    probability,
                })
                .collect(),
            root_value,
            full_search: self.full_search,
            material: position.material(),
            hand: [position.hand(Color::White), position.hand(Color::Black)],
            move_played: edges[choice].mv.to_string(),
        });
        self.game.play_unchecked(edges[choice].mv);
        self.search.advance(choice);
        self.check_end(root_value, config);
        if self.result.is_none() {
            self.begin_move(config);
        }
    }

    /// Visit-proportional sampling in the opening; afterwards sampling at the endgame
    /// temperature, or the most visited move when it is 0.
    fn visit_choice(&mut self, visits: &[u32], config: &SearchConfig) -> usize {
        let most_visited = (0..visits.len())
            .max_by_key(|&i| (visits[i], std::cmp::Reverse(i)))
            .unwrap_or(0);
        let total: u32 = visits.iter().sum();
        if total == 0 {
            return most_visited;
        }
        if (self.game.moves().len() as u32) < config.temperature_plies {
            let mut pick = self.rng.random_range(0..total);
            for (i, &v) in visits.iter().enumerate() {
                if pick < v {
                    return i;
                }
                pick -= v;
            }
            return most_visited;
        }
        if config.temperature_endgame <= 0.0 {
            return most_visited;
        }
        // Weights relative to the most visited move, so that a low temperature cannot
        // overflow.
        let top = f64::from(visits[most_visited]);
        let exponent = 1.0 / f64::from(config.temperature_endgame);
        let weights: Vec<f64> = visits
            .iter()
            .map(|&v| (f64::from(v) / top).powf(exponent))
            .collect();
        let mut pick = self.rng.random::<f64>() * weights.iter().sum::<f64>();
        for (i, &w) in weights.iter().enumerate() {
            if pick < w {
                return i;
            }
            pick -= w;
        }
        most_visited
    }

    /// Resignation: the root value stayed below the threshold for enough own moves. In
    /// games with resignation disabled, the first such moment is remembered instead.
    fn resigns(&mut self, side: Color, value: f32, config: &SearchConfig) -> bool {
        let streak = &mut self.low_value_streak[side.index()];
        *streak = if value < config.resign_threshold {
            *streak + 1
        } else {
            0
        };
        if *streak < config.resign_consecutive {
            return false;
        }
        if self.resign_disabled {
            let ply = self.game.moves().len() as u16;
            self.would_resign.get_or_insert((side, ply));
            return false;
        }
        true
    }

    /// Ends the game if the new position is over, or adjudicates at the ply cap on the
    /// value the mover's search saw (or as a draw, if so configured).
    fn check_end(&mut self, mover_value: f32, config: &SearchConfig) {
        if let Some(outcome) = self.game.outcome() {
            self.result = Some((outcome.winner, outcome.termination.to_string()));
        } else if self.game.moves().len() as u32 >= config.max_plies {
            let mover = !self.game.position().turn();
            let winner = if !config.adjudicate_on_value {
                None
            } else if mover_value > 0.5 {
                Some(mover)
            } else if mover_value < -0.5 {
                Some(!mover)
            } else {
                None
            };
            self.result = Some((winner, "adjudication".to_string()));
        }
    }

    /// The finished game as a data record.
    pub fn into_record(self, model_id: &str) -> GameRecord {
        let (winner, termination) = self.result.unwrap_or((None, "unfinished".to_string()));
        GameRecord {
            game_id: self.id,
            variant: self.game.start().variant(),
            start_fen: self.game.start().to_fen(),
            positions: self.records,
            winner,
            termination,
            model_id: model_id.to_string(),
            resignation_disabled: self.resign_disabled,
            would_resign: self.would_resign,
        }
    }
}

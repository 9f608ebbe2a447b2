//! One self-play game: its tree, the search of the current move, and its records.
//!
//! The scheduler drives many games in lock step: [`SelfPlayGame::prepare_leaf`] runs the
//! search until it needs a network evaluation (simulations ending in a terminal node are
//! finished at once, and moves are played whenever a search is complete), and
//! [`SelfPlayGame::complete_leaf`] takes the evaluation back.

use ninjazero_data::{GameRecord, PolicyEntry, PositionRecord};
use ninjazero_model::{move_index, BoardShape, EvalRequest, Evaluation};
use ninjazero_rules::seed::{derive_seed, SeedStream};
use ninjazero_rules::{Color, Game, MoveList, Position};
use ninjazero_search::gumbel::{improved_policy, GumbelRoot};
use ninjazero_search::mcts::{repetitions, terminal_value};
use ninjazero_search::tree::{NodeState, Puct, Tree};
use ninjazero_search::{RootSearch, SearchConfig};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Gamma};
use std::time::{Duration, Instant};

/// A leaf waiting for the network.
#[derive(Debug)]
pub struct PendingLeaf {
    path: Vec<u32>,
    moves: MoveList,
    repetitions: u32,
}

/// The search of the move to play now.
#[derive(Debug)]
struct MoveSearch {
    /// Simulations to run for this move (on top of what the reused tree holds).
    target: u32,
    done: u32,
    /// A full search gives a policy training target; a cheap one does not.
    full: bool,
    /// Set up once the root is expanded: noise or the Gumbel schedule.
    ready: bool,
    noisy_priors: Option<Vec<f32>>,
    gumbel: Option<GumbelRoot>,
}

pub struct SelfPlayGame {
    pub id: u64,
    shape: BoardShape,
    rng: StdRng,
    game: Game,
    tree: Tree,
    search: MoveSearch,
    leaf: Option<PendingLeaf>,
    records: Vec<PositionRecord>,
    resign_disabled: bool,
    low_value_streak: [u32; 2],
    would_resign: Option<(Color, u16)>,
    result: Option<(Option<Color>, String)>,
    /// Time spent generating legal moves at leaves.
    pub movegen: Duration,
}

impl SelfPlayGame {
    /// A new game from `start`, with its own random stream derived from `seed` and `id`.
    pub fn new(id: u64, start: Position, seed: u64, config: &SearchConfig) -> SelfPlayGame {
        let mut rng = StdRng::seed_from_u64(derive_seed(seed, SeedStream::Game, id));
        let resign_disabled = rng.random_bool(config.resign_disabled_fraction);
        let mut game = SelfPlayGame {
            id,
            shape: BoardShape::of(start.variant()),
            tree: Tree::new(start.clone()),
            game: Game::from_position(start),
            search: MoveSearch {
                target: 0,
                done: 0,
                full: false,
                ready: false,
                noisy_priors: None,
                gumbel: None,
            },
            rng,
            leaf: None,
            records: Vec::new(),
            resign_disabled,
            low_value_streak: [0; 2],
            would_resign: None,
            result: None,
            movegen: Duration::ZERO,
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

    /// The evaluation request of the pending leaf, if any.
    pub fn request(&self) -> Option<EvalRequest<'_>> {
        let leaf = self.leaf.as_ref()?;
        let node = *leaf.path.last().expect("a path holds the root");
        Some(EvalRequest {
            position: &self.tree.node(node).position,
            moves: &leaf.moves,
            repetitions: leaf.repetitions,
        })
    }

    /// Searches until a leaf needs the network (true) or the game is over (false).
    pub fn prepare_leaf(&mut self, config: &SearchConfig) -> bool {
        while self.result.is_none() {
            if self.search.ready && self.search.done >= self.search.target {
                self.play_searched_move(config);
                continue;
            }
            let path = self.descend(config);
            let node = *path.last().expect("a path holds the root");
            match self.tree.node(node).state {
                NodeState::Terminal(value) => self.finish_simulation(&path, value),
                _ => {
                    let started = Instant::now();
                    let moves = self.tree.node(node).position.legal_moves();
                    self.movegen += started.elapsed();
                    let repetitions = repetitions(self.game.hashes(), &self.tree, &path);
                    match terminal_value(&self.tree.node(node).position, &moves, repetitions) {
                        Some(value) => {
                            self.tree.nodes[node as usize].state = NodeState::Terminal(value);
                            self.finish_simulation(&path, value);
                        }
                        None => {
                            self.leaf = Some(PendingLeaf {
                                path,
                                moves,
                                repetitions,
                            });
                            return true;
                        }
                    }
                }
            }
        }
        false
    }

    /// Takes the network's evaluation of the pending leaf.
    pub fn complete_leaf(&mut self, evaluation: &Evaluation, config: &SearchConfig) {
        let Some(leaf) = self.leaf.take() else {
            return;
        };
        let node = *leaf.path.last().expect("a path holds the root");
        self.tree.expand(node, &leaf.moves, &evaluation.priors);
        self.finish_simulation(&leaf.path, evaluation.value());
        if !self.search.ready {
            self.set_up_root(config);
        }
    }

    fn finish_simulation(&mut self, path: &[u32], value: f32) {
        self.tree.backup(path, value);
        self.search.done += 1;
    }

    /// Root to leaf: the root's choice follows the root search, below it PUCT.
    fn descend(&mut self, config: &SearchConfig) -> Vec<u32> {
        let puct = Puct {
            c_puct: config.c_puct,
            fpu_reduction: config.fpu_reduction,
        };
        let mut node = self.tree.root;
        let mut path = vec![node];
        while self.tree.node(node).state == NodeState::Expanded {
            let edge = if node == self.tree.root {
                self.root_edge(puct)
            } else {
                self.tree.select_edge(node, puct, None)
            };
            node = self.tree.child(node, edge);
            path.push(node);
        }
        path
    }

    fn root_edge(&mut self, puct: Puct) -> usize {
        let tree = &self.tree;
        let edges = tree.edges(tree.root);
        match self.search.gumbel.as_mut() {
            Some(gumbel) => gumbel.next_action(
                |a| tree.child_q(&edges[a]),
                |a| tree.child_visits(&edges[a]),
                tree.root().value(),
            ),
            None => tree.select_edge(tree.root, puct, self.search.noisy_priors.as_deref()),
        }
    }

    /// Starts the search of the next move (playout cap randomization decides its size).
    fn begin_move(&mut self, config: &SearchConfig) {
        let full = self.rng.random_bool(config.full_search_probability);
        self.search = MoveSearch {
            target: if full {
                config.simulations
            } else {
                config.cheap_simulations
            }
            .max(1),
            done: 0,
            full,
            ready: false,
            noisy_priors: None,
            gumbel: None,
        };
        if self.tree.root().state == NodeState::Expanded {
            self.set_up_root(config);
        }
    }

    /// Root exploration, once the root has priors: Dirichlet noise for full PUCT
    /// searches, or the Gumbel schedule.
    fn set_up_root(&mut self, config: &SearchConfig) {
        let priors: Vec<f32> = self
            .tree
            .edges(self.tree.root)
            .iter()
            .map(|e| e.prior)
            .collect();
        match config.root_search {
            RootSearch::Gumbel => {
                let budget = self.search.target;
                self.search.gumbel = Some(GumbelRoot::new(
                    &priors,
                    config.gumbel_actions,
                    budget,
                    &mut self.rng,
                ));
            }
            RootSearch::Puct if self.search.full && priors.len() > 1 => {
                let alpha = (config.dirichlet_alpha_total / priors.len() as f64).max(1e-3);
                let gamma = Gamma::new(alpha, 1.0).expect("alpha is positive");
                let noise: Vec<f64> = priors.iter().map(|_| gamma.sample(&mut self.rng)).collect();
                let sum: f64 = noise.iter().sum::<f64>().max(1e-12);
                let eps = config.dirichlet_epsilon;
                self.search.noisy_priors = Some(
                    priors
                        .iter()
                        .zip(&noise)
                        .map(|(&p, &n)| (1.0 - eps) * p + eps * (n / sum) as f32)
                        .collect(),
                );
            }
            RootSearch::Puct => {}
        }
        self.search.ready = true;
    }

    /// Picks the move from the finished search, records the position, and plays it (or
    /// resigns).
    fn play_searched_move(&mut self, config: &SearchConfig) {
        let root = self.tree.root;
        let position = self.tree.root().position.clone();
        let root_value = self.tree.root().value();
        let edges = self.tree.edges(root).to_vec();
        let visits: Vec<u32> = edges.iter().map(|e| self.tree.child_visits(e)).collect();
        let q: Vec<Option<f32>> = edges.iter().map(|e| self.tree.child_q(e)).collect();
        let (choice, target) = match &self.search.gumbel {
            Some(gumbel) => {
                let priors: Vec<f32> = edges.iter().map(|e| e.prior).collect();
                let choice = gumbel.chosen(|a| q[a], |a| visits[a], root_value);
                (choice, improved_policy(&priors, &q, &visits, root_value))
            }
            None => {
                let total = visits.iter().sum::<u32>().max(1) as f32;
                let target: Vec<f32> = visits.iter().map(|&v| v as f32 / total).collect();
                (self.visit_choice(&visits, config), target)
            }
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
            full_search: self.search.full,
            material: position.material(),
            hand: [position.hand(Color::White), position.hand(Color::Black)],
            move_played: edges[choice].mv.to_string(),
        });
        self.game.play_unchecked(edges[choice].mv);
        self.tree.advance(choice);
        self.check_end(root_value, config);
        if self.result.is_none() {
            self.begin_move(config);
        }
    }

    /// Visit-proportional sampling in the opening, the most visited move afterwards.
    fn visit_choice(&mut self, visits: &[u32], config: &SearchConfig) -> usize {
        let most_visited = (0..visits.len())
            .max_by_key(|&i| (visits[i], std::cmp::Reverse(i)))
            .unwrap_or(0);
        let total: u32 = visits.iter().sum();
        if self.game.moves().len() as u32 >= config.temperature_plies || total == 0 {
            return most_visited;
        }
        let mut pick = self.rng.random_range(0..total);
        for (i, &v) in visits.iter().enumerate() {
            if pick < v {
                return i;
            }
            pick -= v;
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

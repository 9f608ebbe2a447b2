//! Search and self-play settings. They are stored (as JSON) in every data file.

use crate::mcts::RootPolicy;
use crate::tree::Puct;
use serde::{Deserialize, Serialize};

/// How the root chooses which move to search next (see [`SearchConfig::root_policy`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RootSearch {
    /// PUCT, with Dirichlet noise on full self-play searches (AlphaZero).
    Puct,
    /// Gumbel top-k sampling with Sequential Halving (Danihelka et al., ICLR 2022): better
    /// policy targets at low simulation counts.
    Gumbel,
}

impl std::str::FromStr for RootSearch {
    type Err = String;
    fn from_str(text: &str) -> Result<RootSearch, String> {
        match text {
            "puct" => Ok(RootSearch::Puct),
            "gumbel" => Ok(RootSearch::Gumbel),
            _ => Err(format!(
                "unknown root search '{text}' (expected puct or gumbel)"
            )),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchConfig {
    pub root_search: RootSearch,
    /// Simulations of a full search (its policy is a training target).
    pub simulations: u32,
    /// Simulations of a cheap search (playout cap randomization, KataGo).
    pub cheap_simulations: u32,
    /// Share of moves that get a full search.
    pub full_search_probability: f64,
    /// Exploration constant of PUCT.
    pub c_puct: f32,
    /// First-play urgency: an unvisited child is valued at the parent's value minus this.
    pub fpu_reduction: f32,
    /// Dirichlet noise at the root of full PUCT searches: alpha = total / legal moves.
    pub dirichlet_alpha_total: f64,
    pub dirichlet_epsilon: f32,
    /// Moves are sampled in proportion to visits for this many plies, then the most
    /// visited move is played.
    pub temperature_plies: u32,
    /// Actions considered by the Gumbel root (top-k).
    pub gumbel_actions: usize,
    /// Resign when the root value stays below this for `resign_consecutive` own moves.
    pub resign_threshold: f32,
    pub resign_consecutive: u32,
    /// Share of games with resignation disabled (to measure false resignations).
    pub resign_disabled_fraction: f64,
    /// Games longer than this are adjudicated on the root value (or drawn, see below).
    pub max_plies: u32,
    /// Whether a game at `max_plies` is adjudicated on the mover's root value; when false
    /// it is a draw (for experiments that must not lean on the evaluator's judgement).
    #[serde(default = "adjudicate_by_default")]
    pub adjudicate_on_value: bool,
}

impl SearchConfig {
    /// The exploration settings of PUCT.
    pub fn puct(&self) -> Puct {
        Puct {
            c_puct: self.c_puct,
            fpu_reduction: self.fpu_reduction,
        }
    }

    /// The root policy of a search: Gumbel for [`RootSearch::Gumbel`]; for
    /// [`RootSearch::Puct`], PUCT with Dirichlet noise when `exploring` (full self-play
    /// searches), plain PUCT otherwise (cheap self-play searches, playing strength).
    pub fn root_policy(&self, exploring: bool) -> RootPolicy {
        match self.root_search {
            RootSearch::Gumbel => RootPolicy::Gumbel {
                actions: self.gumbel_actions,
            },
            RootSearch::Puct if exploring => RootPolicy::DirichletPuct {
                alpha_total: self.dirichlet_alpha_total,
                epsilon: self.dirichlet_epsilon,
            },
            RootSearch::Puct => RootPolicy::Puct,
        }
    }
}

fn adjudicate_by_default() -> bool {
    true
}

impl Default for SearchConfig {
    fn default() -> SearchConfig {
        SearchConfig {
            root_search: RootSearch::Puct,
            simulations: 128,
            cheap_simulations: 32,
            full_search_probability: 0.25,
            c_puct: 1.5,
            fpu_reduction: 0.2,
            dirichlet_alpha_total: 10.0,
            dirichlet_epsilon: 0.25,
            temperature_plies: 20,
            gumbel_actions: 16,
            resign_threshold: -0.9,
            resign_consecutive: 3,
            resign_disabled_fraction: 0.1,
            max_plies: 300,
            adjudicate_on_value: true,
        }
    }
}

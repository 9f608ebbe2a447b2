//! The search tree of one game: an arena of nodes, each owning a contiguous run of edges.
//! Values are stored from the view of the side to move at the node.

use crate::SearchConfig;
use ninjazero_rules::{Move, Position};

pub const NO_CHILD: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
pub struct Edge {
    pub mv: Move,
    pub prior: f32,
    pub child: u32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NodeState {
    /// Not evaluated yet.
    Leaf,
    Expanded,
    /// The game is over here; the value is for the side to move.
    Terminal(f32),
}

#[derive(Clone, Debug)]
pub struct Node {
    pub position: Position,
    pub visits: u32,
    /// Sum of simulation values; f64 so that long searches (millions of visits) stay exact.
    pub value_sum: f64,
    /// Simulations through here waiting for a leaf's evaluation (batched search): each
    /// counts as a visit lost by the side that moved here, so that the next descents of
    /// the batch spread out (virtual loss).
    pub in_flight: u32,
    edges_start: u32,
    edges_len: u32,
    pub state: NodeState,
}

impl Node {
    fn new(position: Position) -> Node {
        Node {
            position,
            visits: 0,
            value_sum: 0.0,
            in_flight: 0,
            edges_start: 0,
            edges_len: 0,
            state: NodeState::Leaf,
        }
    }

    /// Mean value for the side to move here.
    pub fn value(&self) -> f32 {
        if self.visits == 0 {
            0.0
        } else {
            (self.value_sum / self.visits as f64) as f32
        }
    }
}

#[derive(Clone, Debug)]
pub struct Tree {
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
    pub root: u32,
}

/// Exploration settings for one descent.
#[derive(Clone, Copy, Debug)]
pub struct Puct {
    pub c_puct: f32,
    pub fpu_reduction: f32,
}

impl From<&SearchConfig> for Puct {
    /// The exploration settings of `config`.
    fn from(config: &SearchConfig) -> Puct {
        Puct {
            c_puct: config.c_puct,
            fpu_reduction: config.fpu_reduction,
        }
    }
}

impl Tree {
    pub fn new(position: Position) -> Tree {
        Tree {
            nodes: vec![Node::new(position)],
            edges: Vec::new(),
            root: 0,
        }
    }

    pub fn root(&self) -> &Node {
        &self.nodes[self.root as usize]
    }

    pub fn node(&self, index: u32) -> &Node {
        &self.nodes[index as usize]
    }

    pub fn edges(&self, node: u32) -> &[Edge] {
        let n = &self.nodes[node as usize];
        &self.edges[n.edges_start as usize..(n.edges_start + n.edges_len) as usize]
    }

    /// Visits of the child behind an edge (0 when it was never created).
    pub fn child_visits(&self, edge: &Edge) -> u32 {
        if edge.child == NO_CHILD {
            0
        } else {
            self.nodes[edge.child as usize].visits
        }
    }

    /// The value of an edge's child for the side to move at the parent, if visited.
    pub fn child_q(&self, edge: &Edge) -> Option<f32> {
        (edge.child != NO_CHILD && self.nodes[edge.child as usize].visits > 0)
            .then(|| -self.nodes[edge.child as usize].value())
    }

    /// Like [`Tree::child_q`], with the simulations in flight counted as losses of the
    /// side to move at the parent (the same value when none are).
    fn child_q_with_virtual_loss(&self, edge: &Edge) -> Option<f32> {
        if edge.child == NO_CHILD || self.nodes[edge.child as usize].in_flight == 0 {
            return self.child_q(edge);
        }
        let child = &self.nodes[edge.child as usize];
        let visits = f64::from(child.visits + child.in_flight);
        Some(((-child.value_sum - f64::from(child.in_flight)) / visits) as f32)
    }

    fn child_visits_with_in_flight(&self, edge: &Edge) -> u32 {
        if edge.child == NO_CHILD {
            0
        } else {
            let child = &self.nodes[edge.child as usize];
            child.visits + child.in_flight
        }
    }

    /// Adds (`+1`) or withdraws (`-1`) a simulation in flight along `path`.
    pub fn set_in_flight(&mut self, path: &[u32], change: i32) {
        for &node in path {
            let n = &mut self.nodes[node as usize];
            n.in_flight = n.in_flight.saturating_add_signed(change);
        }
    }

    /// The PUCT choice among `node`'s edges; `priors` overrides the stored priors (the
    /// root's noisy priors). Ties (common among unvisited moves with uniform priors) go to
    /// the first edge counting from a start that depends on the position: always taking
    /// the first generated move would make the search prefer whatever move generation
    /// lists first, which differs by colour.
    pub fn select_edge(&self, node: u32, puct: Puct, priors: Option<&[f32]>) -> usize {
        let parent = &self.nodes[node as usize];
        let edges = self.edges(node);
        let sqrt_visits = ((parent.visits + parent.in_flight).max(1) as f32).sqrt();
        let fpu = parent.value() - puct.fpu_reduction;
        let start = (parent.position.hash() % edges.len().max(1) as u64) as usize;
        let mut best = (f32::NEG_INFINITY, 0);
        for offset in 0..edges.len() {
            let i = (start + offset) % edges.len();
            let edge = &edges[i];
            let prior = priors.map_or(edge.prior, |p| p[i]);
            let q = self.child_q_with_virtual_loss(edge).unwrap_or(fpu);
            let visits = self.child_visits_with_in_flight(edge);
            let u = puct.c_puct * prior * sqrt_visits / (1 + visits) as f32;
            if q + u > best.0 {
                best = (q + u, i);
            }
        }
        best.1
    }

    /// Follows `edge` of `node`, creating the child when it does not exist yet.
    pub fn child(&mut self, node: u32, edge: usize) -> u32 {
        let index = (self.nodes[node as usize].edges_start as usize) + edge;
        let existing = self.edges[index].child;
        if existing != NO_CHILD {
            return existing;
        }
        let mut position = self.nodes[node as usize].position.clone();
        position.play_unchecked(self.edges[index].mv);
        let child = self.nodes.len() as u32;
        self.nodes.push(Node::new(position));
        self.edges[index].child = child;
        child
    }

    /// Gives an evaluated leaf its edges.
    pub fn expand(&mut self, node: u32, moves: &[Move], priors: &[f32]) {
        let start = self.edges.len() as u32;
        self.edges
            .extend(moves.iter().zip(priors).map(|(&mv, &prior)| Edge {
                mv,
                prior,
                child: NO_CHILD,
            }));
        let n = &mut self.nodes[node as usize];
        n.edges_start = start;
        n.edges_len = moves.len() as u32;
        n.state = NodeState::Expanded;
    }

    /// Adds a simulation's result along `path` (root first); `value` is for the side to
    /// move at the last node.
    pub fn backup(&mut self, path: &[u32], mut value: f32) {
        for &node in path.iter().rev() {
            let n = &mut self.nodes[node as usize];
            n.visits += 1;
            n.value_sum += f64::from(value);
            value = -value;
        }
    }

    /// Makes the child behind the root's `edge` the new root, keeping its subtree (tree
    /// reuse) and dropping everything else.
    pub fn advance(&mut self, edge: usize) {
        let child = self.child(self.root, edge);
        let mut fresh = Tree {
            nodes: Vec::with_capacity(self.nodes.len() / 2),
            edges: Vec::with_capacity(self.edges.len() / 2),
            root: 0,
        };
        let mut stack = vec![(child, NO_CHILD, 0usize)];
        while let Some((old, parent, parent_edge)) = stack.pop() {
            let new = fresh.nodes.len() as u32;
            let mut node = self.nodes[old as usize].clone();
            let (start, len) = (node.edges_start as usize, node.edges_len as usize);
            node.edges_start = fresh.edges.len() as u32;
            fresh.nodes.push(node);
            fresh
                .edges
                .extend(self.edges[start..start + len].iter().map(|e| Edge {
                    child: NO_CHILD,
                    ..*e
                }));
            if parent != NO_CHILD {
                let slot = fresh.nodes[parent as usize].edges_start as usize + parent_edge;
                fresh.edges[slot].child = new;
            }
            for (i, e) in self.edges[start..start + len].iter().enumerate() {
                if e.child != NO_CHILD {
                    stack.push((e.child, new, i));
                }
            }
        }
        *self = fresh;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ninjazero_rules::Variant;

    fn expand_uniform(tree: &mut Tree, node: u32) {
        let moves = tree.node(node).position.legal_moves();
        let priors = vec![1.0 / moves.len() as f32; moves.len()];
        tree.expand(node, &moves, &priors);
    }

    #[test]
    fn advancing_keeps_the_subtree_of_the_move_played() {
        let mut tree = Tree::new(Position::start(Variant::Palace));
        expand_uniform(&mut tree, 0);
        tree.backup(&[0], 0.0);
        let child = tree.child(0, 3);
        expand_uniform(&mut tree, child);
        tree.backup(&[0, child], 0.5);
        let grandchild = tree.child(child, 1);
        tree.backup(&[0, child, grandchild], -0.25);
        let sibling = tree.child(0, 4);
        tree.backup(&[0, sibling], 0.1);
        let played = tree.edges(0)[3].mv;
        let expected = tree.node(child).position.clone();

        tree.advance(3);
        assert_eq!(tree.root().position, expected);
        assert_eq!(tree.root().visits, 2);
        assert!((tree.root().value_sum - 0.75).abs() < 1e-6);
        assert_eq!(tree.nodes.len(), 2, "the sibling's subtree is dropped");
        let kept = tree.edges(tree.root)[1];
        assert_eq!(tree.node(kept.child).visits, 1);
        assert!((tree.child_q(&kept).unwrap() - 0.25).abs() < 1e-6);
        assert_ne!(played, kept.mv);
    }
}

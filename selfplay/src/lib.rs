//! Placeholder: MCTS self-play workers (issue 3).

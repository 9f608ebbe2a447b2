//! Placeholder: the training loop and piece-value estimation (issues 4, 5).

//! The closed loop: the run directory, the run's settings and presets, the stages
//! (self-play, training, arena) and the promotion rule.

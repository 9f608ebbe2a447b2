//! libtorch's intra-op thread count for a stretch of batch-1 work.

/// While alive, libtorch runs each operation on one thread; dropping it restores the count
/// it found. Batch-1 searches (arena games, a player's games) run one game per core, and a
/// single thread each beats threads that synchronise for every small operation; a training
/// that follows in the same process must get its threads back.
#[must_use = "the count is restored when this is dropped"]
pub struct OneTorchThread {
    before: i32,
}

impl OneTorchThread {
    pub fn new() -> OneTorchThread {
        let before = tch::get_num_threads();
        tch::set_num_threads(1);
        OneTorchThread { before }
    }
}

impl Default for OneTorchThread {
    fn default() -> OneTorchThread {
        OneTorchThread::new()
    }
}

impl Drop for OneTorchThread {
    fn drop(&mut self) {
        tch::set_num_threads(self.before);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_count_comes_back_when_the_guard_is_dropped() {
        tch::set_num_threads(2);
        let one = OneTorchThread::new();
        assert_eq!(tch::get_num_threads(), 1);
        drop(one);
        assert_eq!(tch::get_num_threads(), 2);
    }
}

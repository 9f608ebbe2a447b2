//! What each stage job spent, stored beside the run so that the report can put every
//! generation against the compute it took, whichever machines ran the jobs: the CPU time of
//! the job's process (every thread, libtorch's included) and its wall time, which counts as
//! GPU time when the job ran on one. Only the attempt that stored the job's output is
//! counted (a retried job's lost attempt is not), and a job that found its output stored
//! records nothing.

use crate::{PipelineError, Store, StoreError};
use serde::{Deserialize, Serialize};
use std::time::Instant;
use tch::Device;

/// A job's (or a sum of jobs') compute.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    pub cpu_seconds: f64,
    pub wall_seconds: f64,
    /// Wall seconds of jobs that ran on a GPU.
    pub gpu_seconds: f64,
}

impl std::ops::Add for Cost {
    type Output = Cost;

    fn add(self, other: Cost) -> Cost {
        Cost {
            cpu_seconds: self.cpu_seconds + other.cpu_seconds,
            wall_seconds: self.wall_seconds + other.wall_seconds,
            gpu_seconds: self.gpu_seconds + other.gpu_seconds,
        }
    }
}

/// Measures one job from its start.
pub struct Meter {
    cpu_seconds: f64,
    started: Instant,
    device: Device,
}

impl Meter {
    pub fn start(device: Device) -> Meter {
        Meter {
            cpu_seconds: process_cpu_seconds(),
            started: Instant::now(),
            device,
        }
    }

    /// The job's cost so far.
    pub fn cost(&self) -> Cost {
        let wall_seconds = self.started.elapsed().as_secs_f64();
        Cost {
            cpu_seconds: (process_cpu_seconds() - self.cpu_seconds).max(0.0),
            wall_seconds,
            gpu_seconds: if self.device.is_cuda() {
                wall_seconds
            } else {
                0.0
            },
        }
    }

    /// Stores the job's cost at `key` (under `cost/`, see [`crate::layout`]), unless a racing attempt of
    /// the same job stored its own first.
    pub fn record(&self, store: &Store, key: &str) -> Result<(), PipelineError> {
        let json = serde_json::to_vec_pretty(&self.cost())
            .map_err(|e| PipelineError::Encode(e.to_string()))?;
        match store.put_new(key, json) {
            Ok(()) | Err(StoreError::AlreadyExists { .. }) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

/// The sum of the costs stored under `prefix` (a stage's folder of `cost/`), or
/// `None` when none is (a run made before costs were recorded).
pub fn stored_costs(store: &Store, prefix: &str) -> Result<Option<Cost>, PipelineError> {
    let mut total = None;
    for object in store.list(prefix)? {
        let cost: Cost = serde_json::from_slice(&store.get(&object.key)?).map_err(|e| {
            PipelineError::Manifest {
                key: format!("{}/{}", store.url(), object.key),
                reason: format!("not a job's cost: {e}"),
            }
        })?;
        total = Some(total.unwrap_or_default() + cost);
    }
    Ok(total)
}

/// CPU seconds (user and system) this process has used, every thread included.
fn process_cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        if libc::getrusage(libc::RUSAGE_SELF, &mut usage) != 0 {
            return 0.0;
        }
        usage
    };
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_costs_the_cpu_time_it_burns_and_costs_add_up() {
        let meter = Meter::start(Device::Cpu);
        let mut x = 0u64;
        let (spin, burnt) = (Instant::now(), process_cpu_seconds());
        // 200 ms and 0.1 CPU seconds whatever else the machine runs meanwhile.
        while spin.elapsed().as_millis() < 200 || process_cpu_seconds() - burnt < 0.1 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let cost = meter.cost();
        assert!(cost.cpu_seconds >= 0.1, "{cost:?}");
        assert!(
            cost.wall_seconds >= 0.2 && cost.gpu_seconds == 0.0,
            "{cost:?}"
        );

        let dir = ninjazero_testkit::temp_dir();
        let store = Store::open(dir.path().to_str().unwrap()).unwrap();
        meter.record(&store, "cost/a/shard-0000.json").unwrap();
        meter.record(&store, "cost/a/shard-0001.json").unwrap();
        // A second attempt of a job keeps the first one's record.
        meter.record(&store, "cost/a/shard-0001.json").unwrap();
        let total = stored_costs(&store, "cost/a/").unwrap().unwrap();
        assert!(total.cpu_seconds >= 2.0 * cost.cpu_seconds, "{total:?}");
        assert!(
            total.cpu_seconds < 2.0 * cost.cpu_seconds + 0.5,
            "two jobs: {total:?}"
        );
        assert_eq!(stored_costs(&store, "cost/none/").unwrap(), None);
    }
}

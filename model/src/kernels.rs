//! Which vector instructions libtorch's CPU kernels use.
//!
//! A network's outputs on a CPU depend on them: wider vectors add up a sum in another order,
//! so an AVX-512 machine and an AVX2 machine train different networks from the same games
//! and then play different games. NinjaZero therefore asks libtorch for AVX2 kernels by
//! default (every x86-64 server of the last decade has AVX2), so that a run on one CPU
//! repeats on another with the same number of cores; [`CPU_KERNELS_VAR`]`=native` trades
//! that for the machine's widest kernels.
//!
//! libtorch reads its switches from the environment when it first runs a kernel, so
//! [`select_cpu_kernels`] must run before any tensor work: the binary calls it first thing.

use std::fmt;
use std::str::FromStr;

/// The environment variable that chooses the kernels: `avx2` (default) or `native`.
pub const CPU_KERNELS_VAR: &str = "NINJAZERO_CPU_KERNELS";

/// libtorch's own switches and their AVX2 values: ATen's element-wise kernels, oneDNN's
/// (convolutions) and MKL's (matrix products). Not `MKL_CBWR`: its strict mode sums in yet
/// another order, and the ISA limits alone already repeat across machines (measured: an
/// AVX-512 machine so pinned replayed an AVX2 machine's demo run exactly).
pub const AVX2_SWITCHES: [(&str, &str); 3] = [
    ("ATEN_CPU_CAPABILITY", "avx2"),
    ("ONEDNN_MAX_CPU_ISA", "AVX2"),
    ("MKL_ENABLE_INSTRUCTIONS", "AVX2"),
];

/// The CPU kernels asked of libtorch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuKernels {
    /// AVX2 on every x86-64 machine that has it: the same results on every such machine.
    Avx2,
    /// The widest the machine has (libtorch's own choice): faster on AVX-512 machines, but
    /// results repeat only on the same CPU model.
    Native,
}

/// A [`CPU_KERNELS_VAR`] value that is neither `avx2` nor `native`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{CPU_KERNELS_VAR}={0:?}: expected avx2 (the default: the same results on every x86-64 machine with AVX2) or native (the machine's widest kernels)")]
pub struct UnknownCpuKernels(pub String);

impl FromStr for CpuKernels {
    type Err = UnknownCpuKernels;

    fn from_str(text: &str) -> Result<CpuKernels, UnknownCpuKernels> {
        match text {
            "avx2" => Ok(CpuKernels::Avx2),
            "native" => Ok(CpuKernels::Native),
            _ => Err(UnknownCpuKernels(text.to_string())),
        }
    }
}

impl fmt::Display for CpuKernels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CpuKernels::Avx2 => "avx2",
            CpuKernels::Native => "native",
        })
    }
}

/// The kernels [`CPU_KERNELS_VAR`] asks for (AVX2 when it is not set).
fn requested_cpu_kernels() -> Result<CpuKernels, UnknownCpuKernels> {
    match std::env::var(CPU_KERNELS_VAR) {
        Ok(text) => text.parse(),
        Err(_) => Ok(CpuKernels::Avx2),
    }
}

/// Sets libtorch's switches for the kernels [`CPU_KERNELS_VAR`] asks for, and returns the
/// kernels in effect: AVX2 only where the CPU has it (elsewhere libtorch's choice stands).
/// A switch already set in the environment is left as the user set it. Call it before any
/// tensor work and before threads start (it changes the process environment).
pub fn select_cpu_kernels() -> Result<CpuKernels, UnknownCpuKernels> {
    let requested = requested_cpu_kernels()?;
    if requested == CpuKernels::Native || !cpu_has_avx2() {
        return Ok(CpuKernels::Native);
    }
    for (name, value) in AVX2_SWITCHES {
        if std::env::var_os(name).is_none() {
            std::env::set_var(name, value);
        }
    }
    Ok(CpuKernels::Avx2)
}

#[cfg(target_arch = "x86_64")]
fn cpu_has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

#[cfg(not(target_arch = "x86_64"))]
fn cpu_has_avx2() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_parse_and_print() {
        for kernels in [CpuKernels::Avx2, CpuKernels::Native] {
            assert_eq!(kernels.to_string().parse::<CpuKernels>(), Ok(kernels));
        }
        let error = "avx512".parse::<CpuKernels>().unwrap_err();
        assert!(error.to_string().contains("expected avx2"), "{error}");
    }
}

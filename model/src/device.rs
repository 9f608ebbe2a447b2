//! Where the networks run: `--device` parsing, and libtorch's CUDA backend loaded on demand.

use std::sync::OnceLock;
use tch::Device;

/// Parses `--device`: `cpu`, `cuda`, `cuda:N` or `auto` (CUDA when available).
pub fn parse_device(text: &str) -> Result<Device, String> {
    let cuda = |index: usize| {
        load_cuda_backend().map_err(|why| {
            format!("device '{text}' asked for, but this machine has no CUDA device ({why})")
        })?;
        let count = tch::Cuda::device_count();
        if index < count as usize {
            Ok(Device::Cuda(index))
        } else {
            Err(format!(
                "device '{text}' asked for, but this machine has {count} CUDA device(s)"
            ))
        }
    };
    match text {
        "cpu" => Ok(Device::Cpu),
        "auto" => Ok(match load_cuda_backend() {
            Ok(()) => Device::cuda_if_available(),
            Err(_) => Device::Cpu,
        }),
        "cuda" => cuda(0),
        _ => match text.strip_prefix("cuda:").and_then(|n| n.parse().ok()) {
            Some(index) => cuda(index),
            None => Err(format!(
                "unknown device '{text}' (expected cpu, cuda, cuda:N or auto)"
            )),
        },
    }
}

/// The `--device` text of `device`, which [`parse_device`] reads back: what workers and
/// the Python references are given.
pub fn device_text(device: Device) -> String {
    match device {
        Device::Cpu => "cpu".to_string(),
        Device::Cuda(index) => format!("cuda:{index}"),
        // Never made by `parse_device`; its name is refused there rather than replaced.
        other => format!("{other:?}").to_lowercase(),
    }
}

/// Waits until `device` has finished its queued work (CUDA runs asynchronously), so that a
/// timing ends when the work does.
pub fn synchronize(device: Device) {
    if let Device::Cuda(index) = device {
        tch::Cuda::synchronize(index as i64);
    }
}

/// libtorch keeps its CUDA kernels in `libtorch_cuda.so`, which registers them with the CPU
/// library when it is loaded. Nothing of ours calls into it, so the linker drops it
/// (`--as-needed`) and libtorch would answer "no CUDA" on every GPU machine. Linking it
/// always would cost every CPU-only command about 0.2 s and 400 MB of mappings (measured),
/// so it is loaded here, once, when a CUDA device is asked for and the NVIDIA driver is
/// there. `Err` says why there is no CUDA backend.
fn load_cuda_backend() -> Result<(), String> {
    static LOADED: OnceLock<Result<(), String>> = OnceLock::new();
    LOADED
        .get_or_init(|| {
            // The driver first: on a machine without one, libtorch's CUDA library (and its
            // gigabytes of cuBLAS and cuDNN) are not worth loading.
            load_for_good("libcuda.so.1").map_err(|e| format!("no NVIDIA driver: {e}"))?;
            // Found the way libtorch_cpu.so was found (the binary's runpath, LD_LIBRARY_PATH).
            load_for_good("libtorch_cuda.so")
                .map_err(|e| format!("libtorch's CUDA library did not load: {e}"))
        })
        .clone()
}

/// Loads a shared library for the rest of the process, its symbols global (as the CUDA
/// library's static registration with libtorch needs).
#[cfg(unix)]
fn load_for_good(name: &str) -> Result<(), libloading::Error> {
    use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
    // SAFETY: both libraries are plain C/C++ shared objects whose initialisers only register
    // kernels and hooks; they are never unloaded (forgotten below), so no symbol dangles.
    let library = unsafe { Library::open(Some(name), RTLD_NOW | RTLD_GLOBAL) }?;
    std::mem::forget(library);
    Ok(())
}

/// Elsewhere libtorch's own linking decides; `tch::Cuda::is_available` answers.
#[cfg(not(unix))]
fn load_for_good(_name: &str) -> Result<(), std::convert::Infallible> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_parse_and_bad_ones_are_named() {
        assert_eq!(parse_device("cpu"), Ok(Device::Cpu));
        let error = parse_device("gpu").unwrap_err();
        assert!(error.contains("unknown device 'gpu'"), "{error}");
        let error = parse_device("cuda:x").unwrap_err();
        assert!(error.contains("unknown device 'cuda:x'"), "{error}");
        // No machine has 10^6 GPUs; without a driver the reason is the driver.
        let error = parse_device("cuda:1000000").unwrap_err();
        assert!(error.contains("device 'cuda:1000000' asked for"), "{error}");
        for device in [Device::Cpu, Device::Cuda(3)] {
            let text = device_text(device);
            match device {
                Device::Cpu => assert_eq!(parse_device(&text), Ok(device)),
                _ => assert_eq!(text, "cuda:3"),
            }
        }
        let auto = parse_device("auto");
        let expected = match tch::Cuda::is_available() {
            true => Device::Cuda(0),
            false => Device::Cpu,
        };
        assert_eq!(auto, Ok(expected));
    }
}

//! A model: the network's parameters plus what they mean. Saved as `NAME.safetensors` with a
//! `NAME.json` sidecar (variant, architecture, encoding version, training step, parent).

use crate::encoding::{plane, BoardShape, ENCODING_VERSION};
use crate::net::{NetConfig, PolicyValueNet};
use crate::policy::policy_len;
use ninjazero_data::atomic;
use ninjazero_rules::{with_article, Variant};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use tch::{nn, Device, Tensor};

const FORMAT: &str = "ninjazero-checkpoint";

/// The sidecar: everything needed to rebuild the network and to refuse a mismatched one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointMeta {
    pub format: String,
    pub variant: String,
    pub encoding_version: u32,
    pub architecture: NetConfig,
    pub input_planes: usize,
    /// The bounding rectangle the planes cover.
    pub board_height: usize,
    pub board_width: usize,
    pub policy_len: usize,
    pub training_step: u64,
    /// File name of the checkpoint this one was trained from.
    pub parent: Option<String>,
}

/// Why a checkpoint could not be saved or loaded. Each message is complete (it says the
/// underlying I/O or libtorch error in words), so no variant also reports that error as its
/// `source()`: a caller printing the chain (anyhow's `{:#}`) says nothing twice.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path} is {what}, not a checkpoint file")]
    NotAFile { path: PathBuf, what: &'static str },
    #[error(
        "{checkpoint} has no sidecar: {sidecar} is missing (every checkpoint is saved with one)"
    )]
    MissingSidecar {
        checkpoint: PathBuf,
        sidecar: PathBuf,
    },
    #[error("{path}: not a NinjaZero checkpoint sidecar: {reason}")]
    Sidecar { path: PathBuf, reason: String },
    #[error(
        "{path} is {} model, but {expected} was asked for",
        with_article(found)
    )]
    WrongVariant {
        path: PathBuf,
        found: String,
        expected: Variant,
    },
    #[error("{path} uses input encoding version {found}; this build reads version {expected}")]
    WrongEncoding {
        path: PathBuf,
        found: u32,
        expected: u32,
    },
    /// A sidecar whose architecture no network can have (see [`NetConfig::check`]).
    #[error("{path}: {reason}")]
    BadArchitecture { path: PathBuf, reason: String },
    /// A sidecar whose board or input description is not what its variant's encoding gives:
    /// the file is damaged or was edited, and its numbers must not be reported as facts.
    #[error("{path} says {field} {found}, but {variant}'s encoding has {expected}")]
    WrongShape {
        path: PathBuf,
        field: &'static str,
        found: usize,
        expected: usize,
        variant: Variant,
    },
    #[error("{path}: {}", torch_message(error))]
    Torch { path: PathBuf, error: tch::TchError },
}

/// A libtorch or safetensors error in words for a user: a file that is no safetensors
/// checkpoint named as such, and only the first line of a libtorch message (whose C++
/// backtrace, "Exception raised from ..." and its frames, helps nobody at a prompt). The
/// path is left out: every caller names it already.
pub fn torch_message(error: &tch::TchError) -> String {
    use safetensors::SafeTensorError as E;
    match error {
        tch::TchError::SafeTensorError { err, .. } => match err {
            E::IoError(e) => e.to_string(),
            E::HeaderTooLarge => "not a safetensors checkpoint (header too large)".to_string(),
            E::HeaderTooSmall | E::InvalidHeaderLength => {
                "not a safetensors checkpoint (too short for a header)".to_string()
            }
            E::InvalidHeader
            | E::InvalidHeaderStart
            | E::InvalidHeaderDeserialization
            | E::JsonError(_) => "not a safetensors checkpoint (unreadable header)".to_string(),
            E::TensorNotFound(name) => format!(
                "the checkpoint has no tensor '{name}': it was saved by a different network"
            ),
            other => format!("a damaged safetensors checkpoint ({other:?})"),
        },
        tch::TchError::Torch(text) => first_line(text),
        other => first_line(&other.to_string()),
    }
}

/// The first line of a message, without libtorch's backtrace after it.
fn first_line(text: &str) -> String {
    let text = text
        .split("Exception raised from")
        .next()
        .unwrap_or_default();
    text.lines()
        .next()
        .unwrap_or_default()
        .trim_end()
        .to_string()
}

/// A network with its parameter store and metadata.
#[derive(Debug)]
pub struct Model {
    pub vs: nn::VarStore,
    pub net: PolicyValueNet,
    pub meta: CheckpointMeta,
}

/// A checkpoint's id: the first 8 bytes of the SHA-256 of its weights file, in hex. Self-play
/// stores it with every position the network played, so a dataset tells which network made it.
pub fn checkpoint_id(path: &Path) -> Result<String, ModelError> {
    use sha2::{Digest, Sha256};
    let bytes = std::fs::read(path).map_err(|error| ModelError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    let digest = Sha256::digest(&bytes);
    Ok(digest[..8].iter().map(|b| format!("{b:02x}")).collect())
}

/// libtorch's random generator is process-wide: building models holds this lock, so a seeded
/// build's draws are never interleaved with another thread's (tests run in parallel).
fn hold_generator() -> std::sync::MutexGuard<'static, ()> {
    static GENERATOR: std::sync::Mutex<()> = std::sync::Mutex::new(());
    GENERATOR
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The sidecar path of a checkpoint: the same name with `.json`.
pub fn sidecar_path(checkpoint: &Path) -> PathBuf {
    checkpoint.with_extension("json")
}

impl Model {
    /// A freshly initialised network for `variant`. `config` must pass [`NetConfig::check`]
    /// (the presets do; [`Model::load`] checks a sidecar's).
    pub fn new(variant: Variant, config: &NetConfig, device: Device) -> Model {
        let _held = hold_generator();
        Model::initialised(variant, config, device)
    }

    /// [`Model::new`] drawn from libtorch's generator seeded with `seed`: the same network
    /// for the same seed and config, whatever other threads build meanwhile.
    pub fn seeded(variant: Variant, config: &NetConfig, device: Device, seed: i64) -> Model {
        let _held = hold_generator();
        tch::manual_seed(seed);
        Model::initialised(variant, config, device)
    }

    fn initialised(variant: Variant, config: &NetConfig, device: Device) -> Model {
        let shape = BoardShape::of(variant);
        let vs = nn::VarStore::new(device);
        let net = PolicyValueNet::new(&vs.root(), config, shape);
        crate::net::use_channels_last(&vs);
        let meta = CheckpointMeta {
            format: FORMAT.to_string(),
            variant: variant.id().to_string(),
            encoding_version: ENCODING_VERSION,
            architecture: config.clone(),
            input_planes: plane::COUNT,
            board_height: shape.height,
            board_width: shape.width,
            policy_len: policy_len(&shape),
            training_step: 0,
            parent: None,
        };
        Model { vs, net, meta }
    }

    pub fn variant(&self) -> Variant {
        self.net.shape.variant
    }

    /// Writes `path` (safetensors; the name should end in `.safetensors`) and its sidecar,
    /// each atomically and the sidecar first, so a reader that finds the weights finds their
    /// description. Creates the directory.
    pub fn save(&self, path: &Path) -> Result<(), ModelError> {
        let io = |path: &Path, error| ModelError::Io {
            path: path.to_path_buf(),
            error,
        };
        let sidecar = sidecar_path(path);
        let json = serde_json::to_string_pretty(&self.meta).expect("metadata serialises");
        atomic::write_atomically(&sidecar, (json + "\n").as_bytes())
            .map_err(|e| io(&sidecar, e))?;
        // Weights are stored channels-last in memory; the file holds plain contiguous ones.
        let named: Vec<(String, Tensor)> = self
            .vs
            .variables()
            .into_iter()
            .map(|(name, tensor)| (name, tensor.contiguous()))
            .collect();
        let file = atomic::AtomicFile::create(path).map_err(|e| io(path, e))?;
        Tensor::write_safetensors(&named, file.path()).map_err(|error| ModelError::Torch {
            path: path.to_path_buf(),
            error,
        })?;
        file.commit().map_err(|e| io(path, e))
    }

    /// Loads a checkpoint, refusing one made for another variant (when `expected` is given)
    /// or another input encoding, and a sidecar whose architecture cannot be built or whose
    /// board and input sizes are not the variant's.
    pub fn load(
        path: &Path,
        expected: Option<Variant>,
        device: Device,
    ) -> Result<Model, ModelError> {
        check_is_file(path)?;
        let meta = read_sidecar(path)?;
        let variant: Variant =
            meta.variant
                .parse()
                .map_err(|e: ninjazero_rules::UnknownVariant| ModelError::Sidecar {
                    path: sidecar_path(path),
                    reason: e.to_string(),
                })?;
        if let Some(expected) = expected.filter(|&v| v != variant) {
            return Err(ModelError::WrongVariant {
                path: path.to_path_buf(),
                found: meta.variant,
                expected,
            });
        }
        if meta.encoding_version != ENCODING_VERSION {
            return Err(ModelError::WrongEncoding {
                path: path.to_path_buf(),
                found: meta.encoding_version,
                expected: ENCODING_VERSION,
            });
        }
        check_shape(&meta, variant, &sidecar_path(path))?;
        let mut model = Model::new(variant, &meta.architecture, device);
        model.vs.load(path).map_err(|error| ModelError::Torch {
            path: path.to_path_buf(),
            error,
        })?;
        model.meta = meta;
        Ok(model)
    }
}

/// The sidecar's input planes, board and policy sizes must be those `variant`'s encoding
/// gives: the network is built from the encoding, so a sidecar that says otherwise would be
/// printed (`model info`) as fact while describing nothing.
fn check_shape(meta: &CheckpointMeta, variant: Variant, sidecar: &Path) -> Result<(), ModelError> {
    let shape = BoardShape::of(variant);
    let fields = [
        ("input_planes", meta.input_planes, plane::COUNT),
        ("board_height", meta.board_height, shape.height),
        ("board_width", meta.board_width, shape.width),
        ("policy_len", meta.policy_len, policy_len(&shape)),
    ];
    match fields
        .into_iter()
        .find(|&(_, found, expected)| found != expected)
    {
        Some((field, found, expected)) => Err(ModelError::WrongShape {
            path: sidecar.to_path_buf(),
            field,
            found,
            expected,
            variant,
        }),
        None => Ok(()),
    }
}

/// The checkpoint the user named must be a regular file: a missing one is named as such
/// (not its sidecar), and libtorch is never handed a directory.
fn check_is_file(path: &Path) -> Result<(), ModelError> {
    let metadata = std::fs::metadata(path).map_err(|error| ModelError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    if metadata.is_file() {
        return Ok(());
    }
    let what = if metadata.is_dir() {
        "a directory"
    } else {
        "a special file"
    };
    Err(ModelError::NotAFile {
        path: path.to_path_buf(),
        what,
    })
}

fn read_sidecar(checkpoint: &Path) -> Result<CheckpointMeta, ModelError> {
    let path = sidecar_path(checkpoint);
    let text = std::fs::read_to_string(&path).map_err(|error| {
        if error.kind() == std::io::ErrorKind::NotFound {
            ModelError::MissingSidecar {
                checkpoint: checkpoint.to_path_buf(),
                sidecar: path.clone(),
            }
        } else {
            ModelError::Io {
                path: path.clone(),
                error,
            }
        }
    })?;
    let meta: CheckpointMeta = serde_json::from_str(&text).map_err(|e| ModelError::Sidecar {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    if meta.format != FORMAT {
        return Err(ModelError::Sidecar {
            path,
            reason: format!("format is '{}', expected '{FORMAT}'", meta.format),
        });
    }
    meta.architecture
        .check()
        .map_err(|reason| ModelError::BadArchitecture { path, reason })?;
    Ok(meta)
}

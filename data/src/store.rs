//! Storage behind one URL, through the Apache Arrow project's `object_store`: a plain path
//! or `file:///abs/path` (a local disk or a shared filesystem) and `s3://bucket/prefix` (any
//! S3-compatible store; built with the `s3` feature) are the same layout of keys under a
//! prefix, read and written by one code path. A pipeline run, a ladder's games and a
//! piece-value study's matches each live in one, so the jobs of a cluster can share them.
//!
//! Objects are written once: [`Store::put_new`] is a create-only put, so two workers that
//! race for one object leave the first one's and the second learns it
//! ([`StoreError::AlreadyExists`]); the data a run is made of is never overwritten. Only
//! what is rewritten by design (the settings when a run is extended, a report, the growing
//! prefix of a series of match games) goes through [`Store::put`].
//!
//! `object_store` is async; the store owns a current-thread tokio runtime and blocks on it,
//! so callers stay synchronous (a worker does one thing at a time anyway).

use futures::TryStreamExt as _;
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt as _, PutMode, PutOptions, PutPayload};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why the run's storage could not do what was asked. Each message is one line naming the
/// cause and the store URL or object.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "{url}: not a storage location ({reason}); give a path, file:///abs/path or s3://bucket/prefix"
    )]
    BadUrl { url: String, reason: String },
    #[error("the storage location is empty; give a path, file:///abs/path or s3://bucket/prefix")]
    EmptyUrl,
    #[error("{url}: this build has no s3:// support (build with the `s3` feature)")]
    NoS3 { url: String },
    #[error(
        "{}: already exists (stored objects are never overwritten)",
        object(url, key)
    )]
    AlreadyExists { url: String, key: String },
    #[error("{}: no such object", object(url, key))]
    NotFound { url: String, key: String },
    #[error("{url}: no such directory, so nothing is stored here")]
    NoDirectory { url: String },
    #[error("{url}: is a file, not a directory")]
    NotADirectory { url: String },
    #[error("{url}: the bucket does not exist ({detail})")]
    NoBucket { url: String, detail: String },
    #[error("{url}: access denied, check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY ({detail})")]
    Denied { url: String, detail: String },
    #[error("{url}: no credentials, set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (no instance metadata service gave any: {detail})")]
    NoCredentials { url: String, detail: String },
    #[error("{url}: cannot reach the store, check AWS_ENDPOINT_URL and that the server is up ({detail})")]
    Unreachable { url: String, detail: String },
    #[error("NINJAZERO_S3_RETRY_SECONDS={value}: not a whole number of seconds from 0 to {MAX_RETRY_SECONDS}")]
    BadRetrySeconds { value: String },
    #[error("{}: {detail}", object(url, key))]
    Other {
        url: String,
        key: String,
        detail: String,
    },
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// What tells one stored object from another stored later under the same key.
fn object_version(meta: &object_store::ObjectMeta) -> String {
    match &meta.e_tag {
        Some(tag) => format!("etag {tag}"),
        None => format!(
            "size {} modified {}",
            meta.size,
            meta.last_modified.to_rfc3339()
        ),
    }
}

/// `URL/KEY`, or the URL alone for the run itself (an empty key).
fn object(url: &str, key: &str) -> String {
    if key.is_empty() {
        url.to_string()
    } else {
        format!("{url}/{key}")
    }
}

/// An object in the store: its key relative to the run, and its size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredObject {
    pub key: String,
    pub size: u64,
}

/// A run's (or a ladder's, or a study's) storage: a prefix in an object store, with the
/// runtime that drives it.
pub struct Store {
    /// The URL as given, for messages.
    url: String,
    store: Arc<dyn ObjectStore>,
    prefix: Key,
    runtime: tokio::runtime::Runtime,
    /// A local directory when the run is one (a plain path or `file://`).
    local_root: Option<PathBuf>,
    /// How long a request that broke mid-way is tried again.
    retry_time: Duration,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("url", &self.url).finish()
    }
}

impl Store {
    /// Opens the storage at `url`: a plain path or `file:///abs/path` (the directory is created),
    /// or `s3://bucket/prefix` (endpoint and credentials from the `AWS_*` environment
    /// variables; the bucket is checked, so a store that is down, a wrong key or a missing
    /// bucket is reported here, once).
    pub fn open(url: &str) -> Result<Store, StoreError> {
        Store::open_as(url, true)
    }

    /// Opens the storage at `url` to read what is there: as [`Store::open`], but a local
    /// path that does not exist is [`StoreError::NoDirectory`], and nothing is created.
    pub fn open_existing(url: &str) -> Result<Store, StoreError> {
        Store::open_as(url, false)
    }

    fn open_as(url: &str, create: bool) -> Result<Store, StoreError> {
        // An empty path would be the working directory to some calls and nothing to others.
        if url.is_empty() {
            return Err(StoreError::EmptyUrl);
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| StoreError::Io {
                path: PathBuf::from(url),
                error,
            })?;
        let bad = |reason: &str| StoreError::BadUrl {
            url: url.to_string(),
            reason: reason.to_string(),
        };
        let backend = match url.split_once("://") {
            None => local(Path::new(url), url, create)?,
            Some(("file", rest)) => {
                if !rest.starts_with('/') {
                    return Err(bad("a file:// URL needs an absolute path"));
                }
                local(Path::new(rest), url, create)?
            }
            Some(("s3", rest)) => s3(url, rest)?,
            Some((scheme, _)) => return Err(bad(&format!("unknown scheme {scheme}://"))),
        };
        let run = Store {
            url: url.trim_end_matches('/').to_string(),
            store: backend.store,
            prefix: backend.prefix,
            runtime,
            local_root: backend.local_root,
            retry_time: backend.retry_time,
        };
        if run.local_root.is_none() {
            run.probe()?;
        }
        Ok(run)
    }

    /// The URL the store was opened with.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The run's directory when it is on a local or shared filesystem.
    pub fn local_root(&self) -> Option<&Path> {
        self.local_root.as_deref()
    }

    /// Stores `bytes` at `key` unless an object is there already: then
    /// [`StoreError::AlreadyExists`], and the stored one is left as it is.
    ///
    /// A put whose connection breaks after it was sent (the server restarting mid-request)
    /// is tried again; when a later try finds the key taken, the broken one may have stored
    /// it: the put succeeded if the stored bytes are these.
    pub fn put_new(&self, key: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        let location = self.key(key);
        let payload = PutPayload::from(bytes);
        let (put, broke_before) = self.retrying_broken(|| {
            let options = PutOptions {
                mode: PutMode::Create,
                ..PutOptions::default()
            };
            self.runtime
                .block_on(self.store.put_opts(&location, payload.clone(), options))
        });
        match put {
            Ok(_) => Ok(()),
            Err(
                object_store::Error::AlreadyExists { .. }
                | object_store::Error::Precondition { .. },
            ) if broke_before && payload.iter().flatten().eq(self.get(key)?.iter()) => Ok(()),
            Err(e) => Err(self.error(key, e)),
        }
    }

    /// `request` again while it fails after it was sent (a connection reset, a timeout),
    /// until the retry time runs out: object_store retries only idempotent requests so, and
    /// a create-only put or a delete is not marked so. Returns the last try's outcome and
    /// whether a try broke before it.
    fn retrying_broken<T>(
        &self,
        mut request: impl FnMut() -> object_store::Result<T>,
    ) -> (object_store::Result<T>, bool) {
        let deadline = Instant::now() + self.retry_time;
        let mut pause = Duration::from_millis(100);
        let mut broke = false;
        loop {
            match request() {
                Err(e) if broke_after_sending(&e) && Instant::now() < deadline => {
                    broke = true;
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_secs(2));
                }
                outcome => return (outcome, broke),
            }
        }
    }

    /// Stores `bytes` at `key`, replacing what is there: for the few objects that are
    /// rewritten by design (`run.toml` when a run is extended, the report).
    pub fn put(&self, key: &str, bytes: Vec<u8>) -> Result<(), StoreError> {
        let location = self.key(key);
        let put = self
            .runtime
            .block_on(self.store.put(&location, PutPayload::from(bytes)));
        put.map(drop).map_err(|e| self.error(key, e))
    }

    /// [`Store::put_new`] of a local file's contents.
    pub fn put_new_file(&self, key: &str, file: &Path) -> Result<(), StoreError> {
        let bytes = std::fs::read(file).map_err(|error| StoreError::Io {
            path: file.to_path_buf(),
            error,
        })?;
        self.put_new(key, bytes)
    }

    /// The object at `key`.
    pub fn get(&self, key: &str) -> Result<Vec<u8>, StoreError> {
        let location = self.key(key);
        let bytes = self.runtime.block_on(async {
            let result = self.store.get(&location).await?;
            result.bytes().await
        });
        bytes.map(|b| b.to_vec()).map_err(|e| self.error(key, e))
    }

    /// The object at `key` as a local file under `cache`, fetched unless the cached copy
    /// is of the object stored now. Objects never change while a run lives, but a run
    /// deleted and started again at the same URL stores new ones under the old keys, so a
    /// copy is kept with the object's version (`KEY.version`: its ETag, else its size and
    /// time) and checked against the store's. The file keeps the key's path, so an object
    /// and its sidecars (`NAME.safetensors`, `NAME.json`) land side by side.
    pub fn get_to_cache(&self, key: &str, cache: &Path) -> Result<PathBuf, StoreError> {
        let path = cache.join(key);
        let version_path = cache.join(format!("{key}.version"));
        let location = self.key(key);
        let stored = self
            .runtime
            .block_on(self.store.head(&location))
            .map_err(|e| self.error(key, e))?;
        let cached = std::fs::read_to_string(&version_path).ok();
        if path.is_file() && cached.as_deref() == Some(object_version(&stored).as_str()) {
            return Ok(path);
        }
        let (meta, bytes) = self
            .runtime
            .block_on(async {
                let result = self.store.get(&location).await?;
                let meta = result.meta.clone();
                Ok::<_, object_store::Error>((meta, result.bytes().await?))
            })
            .map_err(|e| self.error(key, e))?;
        let write = |path: &Path, bytes: &[u8]| {
            crate::atomic::write_atomically(path, bytes).map_err(|error| StoreError::Io {
                path: path.to_path_buf(),
                error,
            })
        };
        // The copy first, its version last: a copy without its version is fetched again.
        write(&path, &bytes)?;
        write(&version_path, object_version(&meta).as_bytes())?;
        Ok(path)
    }

    /// Removes the object at `key`, if there is one: for a rewritten result that no longer
    /// holds (a study's `match-values.txt` when a piece has no value).
    pub fn delete(&self, key: &str) -> Result<(), StoreError> {
        let location = self.key(key);
        let (deleted, _) =
            self.retrying_broken(|| self.runtime.block_on(self.store.delete(&location)));
        match deleted {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.error(key, e)),
        }
    }

    /// Whether an object is stored at `key`.
    pub fn exists(&self, key: &str) -> Result<bool, StoreError> {
        let location = self.key(key);
        match self.runtime.block_on(self.store.head(&location)) {
            Ok(_) => Ok(true),
            Err(object_store::Error::NotFound { .. }) => Ok(false),
            Err(e) => Err(self.error(key, e)),
        }
    }

    /// Every object under `prefix` (a key prefix ending at a `/`, or empty for the whole
    /// run), sorted by key.
    pub fn list(&self, prefix: &str) -> Result<Vec<StoredObject>, StoreError> {
        let location = self.key(prefix);
        let listed: Result<Vec<_>, _> = self
            .runtime
            .block_on(self.store.list(Some(&location)).try_collect());
        let mut objects: Vec<StoredObject> = listed
            .map_err(|e| self.error(prefix, e))?
            .into_iter()
            .filter_map(|meta| {
                let key = meta.location.prefix_match(&self.prefix)?;
                let key: Vec<String> = key.map(|part| part.as_ref().to_string()).collect();
                Some(StoredObject {
                    key: key.join("/"),
                    size: meta.size,
                })
            })
            .collect();
        objects.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(objects)
    }

    /// The full location of the run's `key`.
    fn key(&self, key: &str) -> Key {
        key.split('/')
            .filter(|part| !part.is_empty())
            .fold(self.prefix.clone(), |location, part| location.join(part))
    }

    /// One list call at the run's prefix: the bucket exists, the server answers and the
    /// credentials are good.
    fn probe(&self) -> Result<(), StoreError> {
        let listed = self
            .runtime
            .block_on(self.store.list_with_delimiter(Some(&self.prefix)));
        listed.map(drop).map_err(|e| self.error("", e))
    }

    /// `error` of an operation on `key`, put into one line.
    fn error(&self, key: &str, error: object_store::Error) -> StoreError {
        let url = self.url.clone();
        let key = key.to_string();
        let detail = error_chain(&error);
        match error {
            object_store::Error::AlreadyExists { .. }
            | object_store::Error::Precondition { .. } => StoreError::AlreadyExists { url, key },
            // object_store asks the EC2 metadata service when the environment has no key.
            _ if detail.contains("169.254.169.254") => StoreError::NoCredentials {
                url,
                detail: short(&detail),
            },
            _ if detail.contains("NoSuchBucket") => StoreError::NoBucket {
                url,
                detail: s3_code(&detail).unwrap_or_else(|| short(&detail)),
            },
            object_store::Error::NotFound { .. } => StoreError::NotFound { url, key },
            object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. } => StoreError::Denied {
                url,
                detail: s3_code(&detail).unwrap_or_else(|| short(&detail)),
            },
            _ if denied(&detail) => StoreError::Denied {
                url,
                detail: s3_code(&detail).unwrap_or_else(|| short(&detail)),
            },
            _ if unreachable(&detail) => StoreError::Unreachable {
                url,
                detail: short(&detail),
            },
            _ => StoreError::Other {
                url,
                key,
                detail: short(&detail),
            },
        }
    }
}

/// An opened object store, the run's prefix in it, and its directory when it is local.
struct Backend {
    store: Arc<dyn ObjectStore>,
    prefix: Key,
    local_root: Option<PathBuf>,
    retry_time: Duration,
}

/// A local directory as a store: created if needed and `create` (the store needs it to
/// exist).
fn local(dir: &Path, url: &str, create: bool) -> Result<Backend, StoreError> {
    let io = |error| StoreError::Io {
        path: dir.to_path_buf(),
        error,
    };
    if dir.exists() && !dir.is_dir() {
        return Err(StoreError::NotADirectory {
            url: url.to_string(),
        });
    }
    if create {
        std::fs::create_dir_all(dir).map_err(io)?;
    } else if !dir.is_dir() {
        return Err(StoreError::NoDirectory {
            url: url.to_string(),
        });
    }
    let root = dir.canonicalize().map_err(io)?;
    let store = object_store::local::LocalFileSystem::new_with_prefix(&root).map_err(|e| {
        StoreError::BadUrl {
            url: url.to_string(),
            reason: error_chain(&e),
        }
    })?;
    Ok(Backend {
        store: Arc::new(store),
        prefix: Key::default(),
        local_root: Some(root),
        retry_time: Duration::ZERO,
    })
}

/// The most `NINJAZERO_S3_RETRY_SECONDS` may ask for: a day.
const MAX_RETRY_SECONDS: u64 = 86_400;

/// How long an S3 request is retried (a server restarting, a network blip) before its error
/// is reported: `NINJAZERO_S3_RETRY_SECONDS`, 30 by default.
#[cfg(feature = "s3")]
fn retry_time() -> Result<Duration, StoreError> {
    let Some(value) = std::env::var_os("NINJAZERO_S3_RETRY_SECONDS") else {
        return Ok(Duration::from_secs(30));
    };
    let value = value.to_string_lossy().into_owned();
    match value.trim().parse::<u64>() {
        Ok(seconds) if seconds <= MAX_RETRY_SECONDS => Ok(Duration::from_secs(seconds)),
        _ => Err(StoreError::BadRetrySeconds { value }),
    }
}

#[cfg(feature = "s3")]
fn s3(url: &str, rest: &str) -> Result<Backend, StoreError> {
    use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
    use object_store::{BackoffConfig, ClientConfigKey, RetryConfig};
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        return Err(StoreError::BadUrl {
            url: url.to_string(),
            reason: "no bucket".to_string(),
        });
    }
    let retry_time = retry_time()?;
    // Bounded by time alone: object_store's default of 10 retries gives up after about 3 s
    // of a server restarting.
    let retry = RetryConfig {
        retry_timeout: retry_time,
        max_retries: usize::MAX,
        backoff: BackoffConfig {
            max_backoff: Duration::from_secs(2),
            ..BackoffConfig::default()
        },
    };
    let mut builder = AmazonS3Builder::from_env()
        .with_bucket_name(bucket)
        .with_retry(retry)
        // A key, not with_client_options, which would drop AWS_ALLOW_HTTP from the environment.
        .with_config(
            AmazonS3ConfigKey::Client(ClientConfigKey::ConnectTimeout),
            "5s",
        );
    // Path-style requests (http://host/bucket/key): what S3-compatible servers on an
    // endpoint of their own answer; AWS answers them too.
    if std::env::var_os("AWS_ENDPOINT_URL").is_some() || std::env::var_os("AWS_ENDPOINT").is_some()
    {
        builder = builder.with_virtual_hosted_style_request(false);
    }
    let store = builder.build().map_err(|e| StoreError::BadUrl {
        url: url.to_string(),
        reason: short(&error_chain(&e)),
    })?;
    let prefix = Key::parse(prefix.trim_matches('/')).map_err(|e| StoreError::BadUrl {
        url: url.to_string(),
        reason: e.to_string(),
    })?;
    Ok(Backend {
        store: Arc::new(store),
        prefix,
        local_root: None,
        retry_time,
    })
}

/// Whether a request failed after it was sent, so the server may have carried it out: its
/// connection was reset or it timed out.
#[cfg(feature = "s3")]
fn broke_after_sending(error: &object_store::Error) -> bool {
    use object_store::client::{HttpError, HttpErrorKind};
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(cause) = source {
        if let Some(http) = cause.downcast_ref::<HttpError>() {
            return matches!(
                http.kind(),
                HttpErrorKind::Interrupted | HttpErrorKind::Timeout
            );
        }
        source = cause.source();
    }
    false
}

/// A local store's requests do not break mid-way.
#[cfg(not(feature = "s3"))]
fn broke_after_sending(_error: &object_store::Error) -> bool {
    false
}

#[cfg(not(feature = "s3"))]
fn s3(url: &str, _rest: &str) -> Result<Backend, StoreError> {
    Err(StoreError::NoS3 {
        url: url.to_string(),
    })
}

/// An error and its sources, joined: object_store's top-level messages leave the cause
/// (connection refused, the server's error code) to the sources.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let line = cause.to_string();
        if !text.contains(&line) {
            text.push_str(": ");
            text.push_str(&line);
        }
        source = cause.source();
    }
    text
}

/// Whether an error's text is the server refusing the credentials (list requests report
/// 401 and 403 as generic errors).
fn denied(detail: &str) -> bool {
    [
        "403 Forbidden",
        "401 Unauthorized",
        "SignatureDoesNotMatch",
        "InvalidAccessKeyId",
        "AccessDenied",
    ]
    .iter()
    .any(|needle| detail.contains(needle))
}

/// The S3 error code in a response body quoted by `detail` (`<Code>NoSuchBucket</Code>`),
/// with its message when there is one.
fn s3_code(detail: &str) -> Option<String> {
    let tag = |name: &str| {
        let open = format!("<{name}>");
        let start = detail.find(&open)? + open.len();
        let end = start + detail[start..].find(&format!("</{name}>"))?;
        Some(detail[start..end].trim().to_string())
    };
    let code = tag("Code")?;
    Some(match tag("Message") {
        Some(message) => format!("{code}: {message}"),
        None => code,
    })
}

/// Whether an error's text says the server could not be reached at all.
fn unreachable(detail: &str) -> bool {
    let detail = detail.to_ascii_lowercase();
    [
        "connection refused",
        "error sending request",
        "dns error",
        "timed out",
        "connect",
    ]
    .iter()
    .any(|needle| detail.contains(needle))
}

/// `text` on one line, at most 300 characters.
fn short(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(300) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stores(dir: &Path) -> [Store; 2] {
        let plain = dir.join("plain");
        let url = format!("file://{}", dir.join("url").display());
        [
            Store::open(plain.to_str().unwrap()).unwrap(),
            Store::open(&url).unwrap(),
        ]
    }

    #[test]
    fn create_only_puts_never_overwrite() {
        let tmp = ninjazero_testkit::temp_dir();
        for store in stores(tmp.path()) {
            store.put_new("a/b/one.json", b"first".to_vec()).unwrap();
            let again = store
                .put_new("a/b/one.json", b"second".to_vec())
                .unwrap_err();
            assert!(matches!(again, StoreError::AlreadyExists { .. }), "{again}");
            assert!(
                again.to_string().ends_with(
                    "a/b/one.json: already exists (stored objects are never overwritten)"
                ),
                "{again}"
            );
            assert_eq!(store.get("a/b/one.json").unwrap(), b"first");
            assert!(store.exists("a/b/one.json").unwrap());
            assert!(!store.exists("a/b/two.json").unwrap());
            let missing = store.get("a/b/two.json").unwrap_err();
            assert!(matches!(missing, StoreError::NotFound { .. }), "{missing}");
            store.delete("a/b/one.json").unwrap();
            assert!(!store.exists("a/b/one.json").unwrap());
            store.delete("a/b/one.json").unwrap();
        }
    }

    #[test]
    fn lists_and_fetches_under_a_prefix() {
        let tmp = ninjazero_testkit::temp_dir();
        for store in stores(tmp.path()) {
            for key in ["s/gen-0001/x", "s/gen-0000/b", "s/gen-0000/a", "t/c"] {
                store.put_new(key, key.as_bytes().to_vec()).unwrap();
            }
            let keys: Vec<String> = store
                .list("s/")
                .unwrap()
                .into_iter()
                .map(|o| o.key)
                .collect();
            assert_eq!(keys, ["s/gen-0000/a", "s/gen-0000/b", "s/gen-0001/x"]);
            assert_eq!(store.list("").unwrap().len(), 4);
            assert!(store.list("none/").unwrap().is_empty());
            assert_eq!(store.list("t/").unwrap()[0].size, 3);

            let cache = tmp.path().join("cache");
            let file = store.get_to_cache("s/gen-0000/a", &cache).unwrap();
            assert_eq!(file, cache.join("s/gen-0000/a"));
            assert_eq!(std::fs::read(&file).unwrap(), b"s/gen-0000/a");
            // A run started again at the same URL stores another object under the key;
            // the cached copy of the old one must not stand in for it.
            store.delete("s/gen-0000/a").unwrap();
            store
                .put_new("s/gen-0000/a", b"a new run!!!".to_vec())
                .unwrap();
            let file = store.get_to_cache("s/gen-0000/a", &cache).unwrap();
            assert_eq!(std::fs::read(&file).unwrap(), b"a new run!!!");
            let missing = store.get_to_cache("s/none", &cache).unwrap_err();
            assert!(matches!(missing, StoreError::NotFound { .. }), "{missing}");
            std::fs::remove_dir_all(&cache).unwrap();
        }
    }

    #[test]
    fn reading_where_no_directory_is_creates_nothing() {
        let tmp = ninjazero_testkit::temp_dir();
        let dir = tmp.path().join("missing");
        for url in [
            dir.display().to_string(),
            format!("file://{}", dir.display()),
        ] {
            let error = Store::open_existing(&url).unwrap_err();
            assert!(matches!(error, StoreError::NoDirectory { .. }), "{error}");
            assert_eq!(
                error.to_string(),
                format!("{url}: no such directory, so nothing is stored here")
            );
            assert!(!dir.exists());
        }
        let file = tmp.path().join("file");
        std::fs::write(&file, b"").unwrap();
        for open in [Store::open, Store::open_existing] {
            let error = open(ninjazero_testkit::text(&file)).unwrap_err();
            assert!(matches!(error, StoreError::NotADirectory { .. }), "{error}");
        }
        Store::open(ninjazero_testkit::text(&dir)).unwrap();
        let store = Store::open_existing(ninjazero_testkit::text(&dir)).unwrap();
        assert!(store.list("").unwrap().is_empty());
    }

    #[test]
    fn urls_that_name_no_run_are_refused() {
        for (url, expected) in [
            ("http://host/x", "unknown scheme http://"),
            ("file://relative/x", "needs an absolute path"),
        ] {
            let error = Store::open(url).unwrap_err().to_string();
            assert!(
                error.starts_with(url) && error.contains(expected),
                "{error}"
            );
        }
        for open in [Store::open, Store::open_existing] {
            assert!(matches!(open(""), Err(StoreError::EmptyUrl)));
        }
        let body = "403 Forbidden: <Error><Code>NoSuchBucket</Code><Message>gone</Message></Error>";
        assert_eq!(s3_code(body).as_deref(), Some("NoSuchBucket: gone"));
        assert!(denied(body) && s3_code("plain").is_none());
        #[cfg(not(feature = "s3"))]
        assert!(Store::open("s3://b/p")
            .unwrap_err()
            .to_string()
            .contains("`s3` feature"));
    }
}

//! `catalog-admin download`: a dataset's Parquet file through the public API, as any client
//! gets it (the data endpoint, then the presigned URL), written only once its SHA-256 matches
//! the one the API states; a version of many files (or a `--split`/`--partition` filter) through
//! the data endpoint's listing, every file to `DIR/<path>` ([`files`]).

pub mod files;

use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error("{0}")]
    Usage(String),
    /// The API answered with an error body.
    #[error("the API answered {status}: {message} (code {code}, request {request_id})")]
    Api {
        status: u16,
        code: String,
        message: String,
        request_id: String,
    },
    #[error("{0}")]
    Http(String),
    #[error(
        "the downloaded file's SHA-256 is {actual}, not {expected} as the API states: nothing was written"
    )]
    Checksum { expected: String, actual: String },
    #[error(
        "file '{path}': its SHA-256 is {actual}, not {expected} as the API states: it was not kept"
    )]
    FileChecksum {
        path: String,
        expected: String,
        actual: String,
    },
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
}

/// The parts of the download descriptor this command uses.
#[derive(Debug, Deserialize)]
pub struct Descriptor {
    pub slug: String,
    pub url: String,
    pub version: u64,
    pub sha256: String,
    pub size_bytes: u64,
}

#[derive(Deserialize)]
struct ErrorBody {
    error: String,
    #[serde(default)]
    code: String,
    #[serde(default)]
    request_id: String,
}

/// What was downloaded.
#[derive(Debug)]
pub struct Downloaded {
    pub descriptor: Descriptor,
    pub path: PathBuf,
}

/// HTTPS (rustls on ring, the platform's roots) or plain HTTP to loopback, HTTP/1.1. No
/// redirect is followed (the `x-api-key` header would go along to wherever it points) and no
/// proxy is read from the environment.
fn client() -> Result<reqwest::Client, DownloadError> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .map_err(|e| DownloadError::Http(format!("TLS setup: {e}")))
}

/// Refuses to send a key in clear text: the API URL must be `https://`, or `http://` to a
/// loopback address (the local stack).
pub fn check_transport(api_url: &str) -> Result<(), DownloadError> {
    let bad = |why: &str| DownloadError::Usage(format!("bad API URL '{api_url}': {why}"));
    let url = reqwest::Url::parse(api_url).map_err(|e| bad(&format!("{e}")))?;
    let host = url.host_str().ok_or_else(|| bad("it names no host"))?;
    match url.scheme() {
        "https" => Ok(()),
        "http" if is_loopback(host) => Ok(()),
        "http" => Err(DownloadError::Usage(format!(
            "refusing plain http to {host}: the API key would travel in clear text; use an \
             https:// API URL (plain http is allowed only to loopback addresses, for a local stack)"
        ))),
        _ => Err(bad("use an https:// URL")),
    }
}

fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// What `catalog-admin download` was asked for.
#[derive(Debug, Default)]
pub struct Wanted<'a> {
    /// The API's base URL, ending in `/api/v1`.
    pub api_url: &'a str,
    pub slug: &'a str,
    pub version: Option<u64>,
    /// Sent in `x-api-key` when given.
    pub key: Option<&'a str>,
    /// One file: where to write it (default `<slug>-v<version>.parquet`, in `dir` if given).
    pub output: Option<&'a Path>,
    /// Many files: the directory they go to (default `<slug>-v<version>`).
    pub dir: Option<&'a Path>,
    /// Many files: the listing's filters (given either, the listing is asked for at once).
    pub split: Option<&'a str>,
    pub partitions: &'a [String],
    /// Many files: downloads at once.
    pub parallel: usize,
    pub progress: bool,
}

/// What was downloaded: one file, or the files of a listing.
#[derive(Debug)]
pub enum Outcome {
    One(Downloaded),
    Many(files::FilesDownloaded),
}

/// Fetches what `wanted` names through the API. A version of one file (asked without filters)
/// goes to `<output>.part` first, hashed on the way, and is renamed into place
/// only if the hash matches (removed otherwise); a listing (a version of many files, or filters given) as
/// [`files::download_files`] says.
pub async fn download_any(wanted: &Wanted<'_>) -> Result<Outcome, DownloadError> {
    check_transport(wanted.api_url)?;
    let client = client()?;
    let url = format!(
        "{}/datasets/{}/data",
        wanted.api_url.trim_end_matches('/'),
        wanted.slug
    );
    let mut query = Vec::new();
    if let Some(v) = wanted.version {
        query.push(("version".to_owned(), v.to_string()));
    }
    let filtered = wanted.split.is_some() || !wanted.partitions.is_empty();
    let listing = files::listing_query(wanted.split, wanted.partitions);
    let first_query = if filtered {
        [query.clone(), listing.clone()].concat()
    } else {
        query.clone()
    };
    let body = get_json(&client, &url, &first_query, wanted.key).await?;
    let value: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|e| DownloadError::Http(format!("{url}: not JSON: {e}")))?;
    if value.get("files").is_some() {
        let first: files::Listing = serde_json::from_value(value)
            .map_err(|e| DownloadError::Http(format!("{url}: not a listing page: {e}")))?;
        let pages_query = [query, listing].concat();
        let done = files::download_files(
            &client,
            &url,
            &pages_query,
            wanted.key,
            first,
            wanted.dir,
            wanted.parallel,
        )
        .await?;
        return Ok(Outcome::Many(done));
    }
    let descriptor: Descriptor = serde_json::from_value(value)
        .map_err(|e| DownloadError::Http(format!("{url}: not a download descriptor: {e}")))?;
    let default_name = format!("{}-v{}.parquet", descriptor.slug, descriptor.version);
    let path = match (wanted.output, wanted.dir) {
        (Some(output), _) => output.to_path_buf(),
        (None, Some(dir)) => {
            tokio::fs::create_dir_all(dir)
                .await
                .map_err(|e| DownloadError::Io(dir.to_path_buf(), e))?;
            dir.join(default_name)
        }
        (None, None) => PathBuf::from(default_name),
    };
    Ok(Outcome::One(
        write_verified(&client, descriptor, path, wanted.progress).await?,
    ))
}

/// GETs `url` with `query` (JSON, `x-api-key` when given): the body of a 200, else the API's
/// error.
pub(crate) async fn get_json(
    client: &reqwest::Client,
    url: &str,
    query: &[(String, String)],
    key: Option<&str>,
) -> Result<Vec<u8>, DownloadError> {
    let mut request = client
        .get(url)
        .query(query)
        .header("accept", "application/json");
    if let Some(key) = key {
        request = request.header("x-api-key", key);
    }
    let response = request.send().await.map_err(|e| {
        if e.is_builder() {
            DownloadError::Usage(format!("bad API URL '{url}': {e}"))
        } else {
            DownloadError::Http(format!("{url}: {e}"))
        }
    })?;
    let status = response.status().as_u16();
    let body = response
        .bytes()
        .await
        .map_err(|e| DownloadError::Http(format!("{url}: {e}")))?;
    if status != 200 {
        return Err(match serde_json::from_slice::<ErrorBody>(&body) {
            Ok(e) => DownloadError::Api {
                status,
                code: e.code,
                message: e.error,
                request_id: e.request_id,
            },
            Err(_) => DownloadError::Http(format!(
                "{url} answered {status}: {}",
                String::from_utf8_lossy(&body)
                    .chars()
                    .take(200)
                    .collect::<String>()
            )),
        });
    }
    Ok(body.to_vec())
}

/// The descriptor's file, to `path` through `<path>.part`, kept only if its SHA-256 matches.
async fn write_verified(
    client: &reqwest::Client,
    descriptor: Descriptor,
    path: PathBuf,
    progress: bool,
) -> Result<Downloaded, DownloadError> {
    let part = path.with_extension("parquet.part");
    let result = fetch(client, &descriptor, &part, progress).await;
    let actual = match result {
        Ok(actual) => actual,
        Err(e) => {
            let _ = tokio::fs::remove_file(&part).await;
            return Err(e);
        }
    };
    if actual != descriptor.sha256 {
        let _ = tokio::fs::remove_file(&part).await;
        return Err(DownloadError::Checksum {
            expected: descriptor.sha256,
            actual,
        });
    }
    tokio::fs::rename(&part, &path)
        .await
        .map_err(|e| DownloadError::Io(path.clone(), e))?;
    Ok(Downloaded { descriptor, path })
}

/// Streams the presigned URL into `part`, returning the SHA-256 of what arrived.
async fn fetch(
    client: &reqwest::Client,
    descriptor: &Descriptor,
    part: &Path,
    progress: bool,
) -> Result<String, DownloadError> {
    let mut response = client.get(&descriptor.url).send().await.map_err(|e| {
        if e.is_builder() {
            DownloadError::Http(format!("bad download URL: {e}"))
        } else {
            DownloadError::Http(format!("download: {e}"))
        }
    })?;
    let status = response.status().as_u16();
    if status != 200 {
        return Err(DownloadError::Http(format!(
            "the download URL answered {status} (expired? ask the API again)"
        )));
    }
    let bar = progress.then(|| {
        let bar = indicatif::ProgressBar::new(descriptor.size_bytes);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar.tick(); // drawn at once, even for a file that arrives in one piece
        bar
    });
    let mut file = tokio::fs::File::create(part)
        .await
        .map_err(|e| DownloadError::Io(part.to_path_buf(), e))?;
    let mut hasher = Sha256::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| DownloadError::Http(format!("download cut off: {e}")))?
    {
        hasher.update(&chunk);
        file.write_all(&chunk)
            .await
            .map_err(|e| DownloadError::Io(part.to_path_buf(), e))?;
        if let Some(bar) = &bar {
            bar.inc(chunk.len() as u64);
        }
    }
    file.flush()
        .await
        .map_err(|e| DownloadError::Io(part.to_path_buf(), e))?;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(hex::encode(hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_travel_only_over_https_or_to_loopback() {
        for ok in [
            "https://abc.execute-api.eu-west-1.amazonaws.com/api/v1",
            "http://127.0.0.1:3000/api/v1",
            "http://127.8.9.10/api/v1",
            "http://localhost:3000/api/v1",
            "http://[::1]:3000/api/v1",
        ] {
            assert!(check_transport(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://example.com/api/v1",
            "http://10.0.0.1/api/v1",
            "http://localhost.example.com/api/v1",
            "ftp://127.0.0.1/api/v1",
            "/api/v1",
        ] {
            assert!(
                matches!(check_transport(bad), Err(DownloadError::Usage(_))),
                "{bad}"
            );
        }
        let err = check_transport("http://example.com/api/v1").unwrap_err();
        assert!(err.to_string().contains("clear text"), "{err}");
    }
}

//! `catalog-admin download` of a version of many files: the data endpoint's listing, page by
//! page, each page's files fetched in parallel (bounded) to `DIR/<path>` before the next page is
//! asked for (its URLs are fresh), each checked against its SHA-256. Resumable: a file already
//! there with the listed size and SHA-256 is skipped; a download goes to `<path>.part` and is
//! renamed into place only once its SHA-256 is the listed one.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::{get_json, DownloadError};

/// The parts of a listing page this command uses.
#[derive(Debug, Deserialize)]
pub struct Listing {
    pub slug: String,
    pub version: u64,
    pub file_count: u64,
    pub files: Vec<Listed>,
    pub next_page_token: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Listed {
    pub path: String,
    pub size_bytes: u64,
    pub sha256: String,
    pub url: String,
}

/// What a download of many files came to.
#[derive(Debug, Default)]
pub struct FilesDownloaded {
    pub slug: String,
    pub version: u64,
    pub dir: PathBuf,
    /// Files fetched, and already there (verified, skipped).
    pub fetched: u64,
    pub skipped: u64,
    /// Bytes of every file listed.
    pub bytes: u64,
}

/// The listing's query: the filters, and the page size.
pub fn listing_query(split: Option<&str>, partitions: &[String]) -> Vec<(String, String)> {
    let mut query = vec![("page_size".to_owned(), "1000".to_owned())];
    if let Some(split) = split {
        query.push(("split".to_owned(), split.to_owned()));
    }
    for p in partitions {
        query.push(("partition".to_owned(), p.clone()));
    }
    query
}

/// Downloads every file the listing whose first page is `first` names into `dir` (default
/// `<slug>-v<version>`), asking `url` (the data endpoint, with `query`) for the next pages.
pub async fn download_files(
    client: &reqwest::Client,
    url: &str,
    query: &[(String, String)],
    key: Option<&str>,
    first: Listing,
    dir: Option<&Path>,
    parallel: usize,
) -> Result<FilesDownloaded, DownloadError> {
    let dir = dir
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(format!("{}-v{}", first.slug, first.version)));
    let mut done = FilesDownloaded {
        slug: first.slug.clone(),
        version: first.version,
        dir: dir.clone(),
        ..FilesDownloaded::default()
    };
    let mut page = first;
    loop {
        fetch_page(client, &dir, &page.files, parallel.max(1), &mut done).await?;
        let Some(token) = page.next_page_token.take() else {
            return Ok(done);
        };
        let mut next_query = query.to_vec();
        next_query.push(("page_token".to_owned(), token));
        let body = get_json(client, url, &next_query, key).await?;
        page = serde_json::from_slice(&body)
            .map_err(|e| DownloadError::Http(format!("{url}: not a listing page: {e}")))?;
    }
}

/// The page's files, at most `parallel` at a time; the first failure stops the page (what is
/// verified stays: a run again skips it).
async fn fetch_page(
    client: &reqwest::Client,
    dir: &Path,
    files: &[Listed],
    parallel: usize,
    done: &mut FilesDownloaded,
) -> Result<(), DownloadError> {
    let mut running = tokio::task::JoinSet::new();
    let mut queue = files.iter().cloned();
    loop {
        while running.len() < parallel {
            let Some(file) = queue.next() else { break };
            let target = target(dir, &file.path)?;
            done.bytes += file.size_bytes;
            let client = client.clone();
            running.spawn(async move { fetch_one(&client, &file, &target).await });
        }
        let Some(joined) = running.join_next().await else {
            return Ok(());
        };
        match joined {
            Ok(Ok(true)) => done.fetched += 1,
            Ok(Ok(false)) => done.skipped += 1,
            Ok(Err(e)) => return Err(e),
            Err(e) => return Err(DownloadError::Http(format!("a download task failed: {e}"))),
        }
    }
}

/// Where a listed file goes: `dir/<path>`, the path checked as the catalog checks published
/// paths (relative, no `.` or `..` segment), so that an answer cannot write outside `dir`.
fn target(dir: &Path, path: &str) -> Result<PathBuf, DownloadError> {
    let rel = catalog::files::RelPath::parse(path)
        .map_err(|e| DownloadError::Http(format!("the listing names a bad path: {e}")))?;
    Ok(rel
        .as_str()
        .split('/')
        .fold(dir.to_path_buf(), |p, s| p.join(s)))
}

/// The SHA-256 of the file at `path`, if it is there with `size` bytes.
async fn existing_sha256(path: &Path, size: u64) -> Option<String> {
    let meta = tokio::fs::metadata(path).await.ok()?;
    if !meta.is_file() || meta.len() != size {
        return None;
    }
    let mut file = tokio::fs::File::open(path).await.ok()?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).await.ok()?;
        if n == 0 {
            return Some(hex::encode(hasher.finalize()));
        }
        hasher.update(&buf[..n]);
    }
}

/// One file: skipped (`false`) when already there and verified, else fetched to `.part`,
/// verified and renamed (`true`).
async fn fetch_one(
    client: &reqwest::Client,
    file: &Listed,
    target: &Path,
) -> Result<bool, DownloadError> {
    if existing_sha256(target, file.size_bytes).await.as_deref() == Some(file.sha256.as_str()) {
        return Ok(false);
    }
    if let Some(parent) = target.parent() {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|e| DownloadError::Io(parent.to_path_buf(), e))?;
    }
    let mut part = target.as_os_str().to_owned();
    part.push(".part");
    let part = PathBuf::from(part);
    let result = stream_to(client, &file.url, &part).await;
    let actual = match result {
        Ok(actual) => actual,
        Err(e) => {
            let _ = tokio::fs::remove_file(&part).await;
            return Err(e);
        }
    };
    if actual != file.sha256 {
        let _ = tokio::fs::remove_file(&part).await;
        return Err(DownloadError::FileChecksum {
            path: file.path.clone(),
            expected: file.sha256.clone(),
            actual,
        });
    }
    tokio::fs::rename(&part, target)
        .await
        .map_err(|e| DownloadError::Io(target.to_path_buf(), e))?;
    Ok(true)
}

/// Streams `url` into `part`, returning the SHA-256 of what arrived.
async fn stream_to(
    client: &reqwest::Client,
    url: &str,
    part: &Path,
) -> Result<String, DownloadError> {
    let mut response = client
        .get(url)
        .send()
        .await
        .map_err(|e| DownloadError::Http(format!("download: {e}")))?;
    let status = response.status().as_u16();
    if status != 200 {
        return Err(DownloadError::Http(format!(
            "a file's download URL answered {status} (expired? run the command again)"
        )));
    }
    let mut out = tokio::fs::File::create(part)
        .await
        .map_err(|e| DownloadError::Io(part.to_path_buf(), e))?;
    let mut hasher = Sha256::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| DownloadError::Http(format!("download cut off: {e}")))?
    {
        hasher.update(&chunk);
        out.write_all(&chunk)
            .await
            .map_err(|e| DownloadError::Io(part.to_path_buf(), e))?;
    }
    out.flush()
        .await
        .map_err(|e| DownloadError::Io(part.to_path_buf(), e))?;
    Ok(hex::encode(hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_path_stays_inside_the_directory() {
        let dir = Path::new("/tmp/d");
        assert_eq!(
            target(dir, "train/year=2024/a.parquet").unwrap(),
            Path::new("/tmp/d/train/year=2024/a.parquet")
        );
        for bad in ["../x.parquet", "/etc/passwd", "a/../../x", "a//b", ""] {
            assert!(target(dir, bad).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn a_file_already_there_counts_only_with_its_size_and_sha256() {
        let dir = std::env::temp_dir().join(format!("download-files-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.parquet");
        std::fs::write(&path, b"abc").unwrap();
        let sha = hex::encode(Sha256::digest(b"abc"));
        assert_eq!(
            existing_sha256(&path, 3).await.as_deref(),
            Some(sha.as_str())
        );
        assert_eq!(existing_sha256(&path, 4).await, None);
        assert_eq!(existing_sha256(&dir.join("none"), 3).await, None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

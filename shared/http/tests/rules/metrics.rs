//! What the handlers count in CloudWatch metrics (catalog::metrics): URLs issued by route,
//! refusals and failures by code, a key's use that could not be recorded; and a HEAD on the data
//! route, which signs and counts nothing.

use catalog::metrics::capture::metrics_of;
use catalog::metrics::{Metric, UrlRoute};
use catalog::ports::{DownloadReader, GrantReader, KeyUsage};

use super::*;

async fn download(path: &str, headers: &[(&str, &str)]) -> Response<Body> {
    let signer = FakeSigner {
        ttl: Duration::minutes(15),
    };
    catalog_http::api::download(&get(path, headers), &catalog(), &signer, now()).await
}

#[tokio::test]
async fn each_url_handed_out_is_counted_under_its_route() {
    let (resp, got) = metrics_of(data(
        "/api/v1/datasets/gated/data",
        &[("x-api-key", READ_KEY)],
    ))
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(got, [Metric::UrlIssued(UrlRoute::Data)]);

    let (resp, got) = metrics_of(download("/api/v1/datasets/open-window/download", &[])).await;
    assert_eq!(resp.status(), 302);
    assert_eq!(got, [Metric::UrlIssued(UrlRoute::Download)]);
}

#[tokio::test]
async fn a_head_on_the_data_route_answers_the_gates_status_and_signs_nothing() {
    let head = |path: &'static str, headers: Vec<(&'static str, &'static str)>| async move {
        let signer = FakeSigner {
            ttl: Duration::minutes(15),
        };
        let req = request("HEAD", path, &headers);
        catalog_http::api::data(&req, &catalog(), &signer, now()).await
    };
    let (resp, got) = metrics_of(head(
        "/api/v1/datasets/gated/data",
        vec![("x-api-key", READ_KEY)],
    ))
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    assert_eq!(resp.headers()["cache-control"], "no-store");
    assert!(resp.body().is_empty());
    assert_eq!(got, [], "no URL was signed, none is counted");

    // The gate still decides: the same refusals as a GET.
    let (resp, got) = metrics_of(head("/api/v1/datasets/gated/data", vec![])).await;
    assert_eq!(resp.status(), 401);
    assert_eq!(got, [Metric::Refused("missing_key")]);
    let (resp, _) = metrics_of(head("/api/v1/datasets/nope/data", vec![])).await;
    assert_eq!(resp.status(), 404);

    // The download route's HEAD delivers its URL in `Location`, so it signs and counts one.
    let signer = FakeSigner {
        ttl: Duration::minutes(15),
    };
    let req = request("HEAD", "/api/v1/datasets/open-window/download", &[]);
    let (resp, got) = metrics_of(catalog_http::api::download(
        &req,
        &catalog(),
        &signer,
        now(),
    ))
    .await;
    assert_eq!(resp.status(), 302);
    assert!(resp.headers().contains_key("location"));
    assert_eq!(got, [Metric::UrlIssued(UrlRoute::Download)]);
}

#[tokio::test]
async fn refusals_and_failures_are_counted_by_their_code() {
    for (path, headers, status, code) in [
        ("/api/v1/datasets/gated/data", vec![], 401, "missing_key"),
        (
            "/api/v1/datasets/gated/data",
            vec![("x-api-key", UNKNOWN_KEY)],
            401,
            "invalid_key",
        ),
        (
            "/api/v1/datasets/gated/data",
            vec![("x-api-key", WRITE_ONLY_KEY)],
            403,
            "insufficient_scope",
        ),
        ("/api/v1/datasets/nope/data", vec![], 404, "not_found"),
        (
            "/api/v1/datasets/gated/data?format=csv",
            vec![("x-api-key", READ_KEY)],
            400,
            "bad_request",
        ),
    ] {
        let (resp, got) = metrics_of(data(path, &headers)).await;
        assert_eq!(resp.status(), status, "{path} {headers:?}");
        assert_eq!(got, [Metric::Refused(code)], "{path} {headers:?}");
    }

    let c = catalog();
    c.unavailable.store(true, Ordering::SeqCst);
    let (resp, got) = metrics_of(data_with(&c, "/api/v1/datasets/gated/data", &[])).await;
    assert_eq!(resp.status(), 503);
    assert_eq!(got, [Metric::Failed("rate_limited")], "throttled: 503");
}

/// The catalog, except that recording a key's use fails.
struct UsageFails(MemoryCatalog);

impl DownloadReader for UsageFails {
    async fn get_download(
        &self,
        dataset: &catalog::input::DatasetRef,
        key: Option<&KeyHash>,
    ) -> Result<
        (Option<catalog::records::DownloadTarget>, Option<KeyRecord>),
        catalog::error::StoreError,
    > {
        self.0.get_download(dataset, key).await
    }
}

impl GrantReader for UsageFails {
    async fn grant(
        &self,
        owner: &catalog::keys::Owner,
        dataset: &Uuid,
    ) -> Result<Option<catalog::policy::Grant>, catalog::error::StoreError> {
        self.0.grant(owner, dataset).await
    }

    async fn standing(
        &self,
        owner: &catalog::keys::Owner,
        dataset: &Uuid,
        org: &catalog::orgs::OrgName,
    ) -> Result<catalog::ports::Standing, catalog::error::StoreError> {
        self.0.standing(owner, dataset, org).await
    }
}

impl catalog::ports::ManifestReader for UsageFails {
    async fn read_chunks(
        &self,
        slug: &catalog::input::Slug,
        version: u64,
        summary: &catalog::files::Summary,
        chunks: &[usize],
        stats: bool,
    ) -> Result<Option<Vec<catalog::files::FileChunk>>, catalog::error::StoreError> {
        self.0
            .read_chunks(slug, version, summary, chunks, stats)
            .await
    }
}

impl KeyUsage for UsageFails {
    async fn record_use(
        &self,
        _key: &KeyHash,
        _now: DateTime<Utc>,
    ) -> Result<(), catalog::error::StoreError> {
        Err(catalog::error::StoreError::Unavailable("throttled".into()))
    }
}

#[tokio::test]
async fn a_key_use_that_cannot_be_recorded_is_counted_and_the_url_still_issued() {
    let store = UsageFails(catalog());
    let signer = FakeSigner {
        ttl: Duration::minutes(15),
    };
    let req = get("/api/v1/datasets/gated/data", &[("x-api-key", READ_KEY)]);
    let (resp, got) = metrics_of(catalog_http::api::data(&req, &store, &signer, now())).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        got,
        [Metric::KeyUseNotRecorded, Metric::UrlIssued(UrlRoute::Data)]
    );
}

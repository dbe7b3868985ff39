//! Who may read what, on the real stack: the rule of `catalog::access::authorize` as one matrix
//! over the data route (and its listing form) and rows routes and Delta Sharing's query (DynamoDB on moto, S3 on s3s-fs; every data 200 is downloaded
//! and its SHA-256 checked, every rows 200 holds rows of the same version), what it costs on the wire, and the operators' commands that set levels,
//! grant and revoke.

use catalog::grants::Decision;
use catalog::input::Slug;
use catalog::keys::{NewKey, Owner, Scope};
use catalog::policy::{AccessLevel, ApprovalPolicy};
use catalog::ports::{AccessStore, Decided};
use catalog_dev::cognito::sign_up_confirmed;
use catalog_tests::{admin_command, run_admin, Wire};
use sha2::{Digest, Sha256};

use super::*;

pub(super) const OPERATOR: &str =
    "dcat_access_operator_00000000000000000000000000000000000000000000";
pub(super) const GRANTED: &str =
    "dcat_access_granted_000000000000000000000000000000000000000000000";
pub(super) const UNGRANTED: &str =
    "dcat_access_ungranted_0000000000000000000000000000000000000000000";
pub(super) const LAPSED: &str = "dcat_access_lapsed_0000000000000000000000000000000000000000000000";
pub(super) const ONLY_AIR: &str =
    "dcat_access_only_air_00000000000000000000000000000000000000000000";
pub(super) const ONLY_BIRDS: &str =
    "dcat_access_only_birds_000000000000000000000000000000000000000000";
const UNKNOWN: &str = "dcat_access_unknown_000000000000000000000000000000000000000000000";

/// An account's `sub` for the tests that need no user pool.
fn account(n: u8) -> Owner {
    Owner::parse(&format!("00000000-0000-4000-8000-0000000000{n:02}")).unwrap()
}

fn slug(s: &str) -> Slug {
    Slug::parse(s).unwrap()
}

/// Stores a read key, an account's (`owner`) or an operator's, limited to `datasets` or not.
async fn put_key(g: &Given, secret: &str, owner: Option<Owner>, datasets: Option<&[&str]>) {
    let mut key = NewKey::for_secret(secret, vec![Scope::Read], "access", Utc::now(), None);
    key.owner = owner;
    key.datasets = datasets.map(|d| d.iter().map(|s| slug(s)).collect());
    g.stack.writer().put_key(&key).await.expect("put key");
}

/// The status and error code of a data request (`ok` for a 200, whose file is downloaded and
/// checked against the descriptor's SHA-256), and the same for a rows request (`ok` for a 200
/// that holds the first rows of the version the data route serves).
pub(super) async fn outcome(g: &Given, dataset: &str, key: Option<&str>) -> String {
    let headers: Vec<(&str, &str)> = key.iter().map(|k| ("x-api-key", *k)).collect();
    let resp = g
        .data(&format!("/api/v1/datasets/{dataset}/data"), &headers)
        .await;
    let body = json_body(&resp);
    let rows = g
        .rows_answer(
            &format!("/api/v1/datasets/{dataset}/rows?length=3"),
            &headers,
        )
        .await;
    let rows_body = json_body(&rows);
    let rows_outcome = if rows.status() == 200 {
        assert_eq!(
            rows_body["rows"].as_array().map(Vec::len),
            Some(3),
            "{dataset}"
        );
        assert_eq!(rows_body["version"], body["version"], "{dataset}");
        "ok".to_owned()
    } else {
        status_and_code(&rows, &rows_body)
    };
    let data_outcome = if resp.status() != 200 {
        status_and_code(&resp, &body)
    } else {
        let (status, bytes) = http_get(body["url"].as_str().unwrap()).await;
        assert_eq!(status, 200, "download of {dataset}");
        assert_eq!(
            hex::encode(Sha256::digest(&bytes)),
            body["sha256"].as_str().unwrap(),
            "{dataset}: the file is the descriptor's"
        );
        "ok".to_owned()
    };
    // The data route's listing form (its parameters): the same rule, and the same file.
    let listed = g
        .data(
            &format!("/api/v1/datasets/{dataset}/data?page_size=1"),
            &headers,
        )
        .await;
    let listed_body = json_body(&listed);
    let listed_outcome = if listed.status() == 200 {
        let file = &listed_body["files"][0];
        let (status, bytes) = http_get(file["url"].as_str().unwrap()).await;
        assert_eq!(status, 200, "listed download of {dataset}");
        assert_eq!(
            Some(hex::encode(Sha256::digest(&bytes)).as_str()),
            body["sha256"].as_str(),
            "{dataset}: the listing's file is the data route's"
        );
        "ok".to_owned()
    } else {
        status_and_code(&listed, &listed_body)
    };
    // The originals a conversion kept (`format=original`): the same rule first; these samples,
    // published as Parquet, kept none, so whoever may read the data is told so (404).
    let original = g
        .data(
            &format!("/api/v1/datasets/{dataset}/data?format=original"),
            &headers,
        )
        .await;
    let original_body = json_body(&original);
    let data_says = status_and_code_or_ok(&resp, &body);
    assert_eq!(
        status_and_code(&original, &original_body),
        if data_says == "ok" {
            "404 not_found".to_owned()
        } else {
            data_says
        },
        "format=original and data disagree on {dataset} with {key:?}"
    );
    // One rule for every route: the listing and the rows route answer as the data route does.
    assert_eq!(
        listed_outcome,
        status_and_code_or_ok(&resp, &body),
        "listing and data disagree on {dataset} with {key:?}"
    );
    assert_eq!(
        rows_outcome, data_outcome,
        "rows and data disagree on {dataset} with {key:?}"
    );
    // And the download route (Croissant's contentUrl), the key sent as HTTP Basic's password:
    // a 302 to the data route's file.
    let basic = key.map(|k| {
        format!(
            "Basic {}",
            aws_smithy_types::base64::encode(format!("key:{k}"))
        )
    });
    let basic_headers: Vec<(&str, &str)> = basic
        .iter()
        .map(|b| ("authorization", b.as_str()))
        .collect();
    let redirect = g
        .download(
            &format!("/api/v1/datasets/{dataset}/download"),
            &basic_headers,
        )
        .await;
    let download_outcome = if redirect.status() == 302 {
        let location = redirect.headers()["location"].to_str().unwrap().to_owned();
        let (status, bytes) = http_get(&location).await;
        assert_eq!(status, 200, "redirected download of {dataset}");
        assert_eq!(
            Some(hex::encode(Sha256::digest(&bytes)).as_str()),
            body["sha256"].as_str(),
            "{dataset}: the download route's file is the data route's"
        );
        "ok".to_owned()
    } else {
        status_and_code(&redirect, &json_body(&redirect))
    };
    assert_eq!(
        download_outcome, data_outcome,
        "download and data disagree on {dataset} with {key:?}"
    );
    // And Delta Sharing's query, for a key (a recipient always has one): its file is the
    // data route's.
    if let Some(key) = key {
        let signer = g.stack.signer(std::time::Duration::from_secs(900));
        let path =
            format!("/api/v1/delta-sharing/shares/catalog/schemas/datasets/tables/{dataset}/query");
        let req = catalog_http::testing::V2Event::new("POST", &path)
            .header("authorization", &format!("Bearer {key}"))
            .body("{}")
            .request();
        let shared = api::sharing(&req, &g.catalog, &signer, Utc::now()).await;
        let sharing_outcome = if shared.status() == 200 {
            let text = String::from_utf8(shared.body().to_vec()).unwrap();
            let file: Value =
                serde_json::from_str(text.lines().nth(2).expect("a file line")).unwrap();
            assert_eq!(
                file["file"]["id"], body["sha256"],
                "{dataset}: the data route's file"
            );
            "ok".to_owned()
        } else {
            status_and_code(&shared, &json_body(&shared))
        };
        assert_eq!(
            sharing_outcome, data_outcome,
            "Delta Sharing and data disagree on {dataset} with {key:?}"
        );
    }
    data_outcome
}

/// `ok` for a 200, else [`status_and_code`].
fn status_and_code_or_ok(resp: &lambda_http::Response<lambda_http::Body>, body: &Value) -> String {
    if resp.status() == 200 {
        "ok".to_owned()
    } else {
        status_and_code(resp, body)
    }
}

fn status_and_code(resp: &lambda_http::Response<lambda_http::Body>, body: &Value) -> String {
    format!(
        "{} {}",
        resp.status().as_u16(),
        body["code"].as_str().unwrap_or("?")
    )
}

/// GIVEN the sample catalog with bird-sightings (gated) and city-bikes (in an open keyless
/// window) at the approval level, account 1 granted bird-sightings, account 3 granted it until
/// a minute ago, account 2 granted nothing, and keys of each kind.
pub(super) async fn given_levels() -> Given {
    let g = given().await;
    let writer = g.stack.writer();
    let now = Utc::now();
    for dataset in ["bird-sightings", "city-bikes"] {
        writer
            .set_access(
                &slug(dataset),
                AccessLevel::Approval,
                &ApprovalPolicy::default(),
                now,
            )
            .await
            .expect("set access");
    }
    let access = g.stack.access();
    let birds = access
        .dataset_access(&slug("bird-sightings"))
        .await
        .expect("read the dataset")
        .expect("bird-sightings");
    access
        .grant(&birds, &account(1), "one@example.com", None, "ops", now)
        .await
        .expect("grant");
    access
        .grant(
            &birds,
            &account(3),
            "three@example.com",
            Some(now - TimeDelta::minutes(1)),
            "ops",
            now - TimeDelta::hours(1),
        )
        .await
        .expect("lapsed grant");
    put_key(&g, OPERATOR, None, None).await;
    put_key(&g, GRANTED, Some(account(1)), None).await;
    put_key(&g, UNGRANTED, Some(account(2)), None).await;
    put_key(&g, LAPSED, Some(account(3)), None).await;
    put_key(
        &g,
        ONLY_AIR,
        Some(account(1)),
        Some(&["air-quality-hourly"]),
    )
    .await;
    put_key(&g, ONLY_BIRDS, None, Some(&["bird-sightings"])).await;
    g
}

#[tokio::test]
async fn the_access_rule_holds_on_every_dataset_and_key_as_one_matrix() {
    let g = given_levels().await;
    // WHEN each key asks for each dataset's data, THEN each gets what the rule says
    #[rustfmt::skip]
    let cases: [(&str, Option<&str>, &str); 22] = [
        // approval, outside any keyless window
        ("bird-sightings", None, "401 missing_key"),
        ("bird-sightings", Some(UNKNOWN), "401 invalid_key"),
        ("bird-sightings", Some(OPERATOR), "ok"),
        ("bird-sightings", Some(GRANTED), "ok"),
        ("bird-sightings", Some(UNGRANTED), "403 access_required"),
        ("bird-sightings", Some(LAPSED), "403 access_required"),
        ("bird-sightings", Some(ONLY_AIR), "403 key_not_for_dataset"),
        ("bird-sightings", Some(ONLY_BIRDS), "ok"),
        // approval, inside its keyless window: anyone, but a key is still judged as a key
        ("city-bikes", None, "ok"),
        ("city-bikes", Some(UNKNOWN), "401 invalid_key"),
        ("city-bikes", Some(UNGRANTED), "ok"),
        ("city-bikes", Some(ONLY_AIR), "403 key_not_for_dataset"),
        // registered: any valid read key
        ("air-quality-hourly", None, "401 missing_key"),
        ("air-quality-hourly", Some(UNKNOWN), "401 invalid_key"),
        ("air-quality-hourly", Some(OPERATOR), "ok"),
        ("air-quality-hourly", Some(UNGRANTED), "ok"),
        ("air-quality-hourly", Some(ONLY_AIR), "ok"),
        ("air-quality-hourly", Some(ONLY_BIRDS), "403 key_not_for_dataset"),
        ("river-levels", None, "401 missing_key"),
        ("river-levels", Some(UNGRANTED), "ok"),
        ("river-levels", Some(ONLY_BIRDS), "403 key_not_for_dataset"),
        ("river-levels", Some(WRITE_KEY), "403 insufficient_scope"),
    ];
    let mut failures = Vec::new();
    for (dataset, key, expected) in cases {
        // (Both routes, which must answer alike: see `outcome`.)
        let got = outcome(&g, dataset, key).await;
        if got != expected {
            failures.push(format!(
                "{dataset} with {key:?}: {got}, expected {expected}"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[tokio::test]
async fn a_revoked_grant_and_a_changed_level_take_effect_on_the_next_request() {
    let g = given_levels().await;
    let writer = g.stack.writer();
    let access = g.stack.access();
    let birds = slug("bird-sightings");
    let id = access
        .dataset_access(&birds)
        .await
        .expect("read the dataset")
        .expect("bird-sightings")
        .id;
    let one = account(1);
    let revoke = || access.decide(&id, &one, &Decision::Revoke, None, "ops", Utc::now());
    assert_eq!(outcome(&g, "bird-sightings", Some(GRANTED)).await, "ok");
    // WHEN the grant is revoked, THEN the very next request is refused
    assert!(matches!(revoke().await.expect("revoke"), Decided::Done(_)));
    assert_eq!(
        outcome(&g, "bird-sightings", Some(GRANTED)).await,
        "403 access_required"
    );
    // Revoking again finds nothing in force
    assert!(matches!(
        revoke().await.expect("revoke again"),
        Decided::Conflict(_)
    ));
    // WHEN the dataset goes back to registered, THEN any read key reads it at once
    writer
        .set_access(
            &birds,
            AccessLevel::Registered,
            &ApprovalPolicy::default(),
            Utc::now(),
        )
        .await
        .expect("set access");
    assert_eq!(outcome(&g, "bird-sightings", Some(UNGRANTED)).await, "ok");
    // AND lists and metadata say so
    let page = json_body(&g.list("/api/v1/datasets").await);
    let levels: Vec<(String, String)> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            let level = i["access_level"].as_str().unwrap().to_owned();
            (i["slug"].as_str().unwrap().to_owned(), level)
        })
        .collect();
    assert!(levels.contains(&("bird-sightings".into(), "registered".into())));
    assert!(levels.contains(&("city-bikes".into(), "approval".into())));
    let meta = json_body(&g.metadata("/api/v1/datasets/city-bikes").await);
    assert_eq!(meta["access"]["level"], "approval");
    assert_eq!(meta["access"]["approval"], "manual");
    assert_eq!(meta["access"]["form"], serde_json::json!([]));
}

#[tokio::test]
async fn an_approval_dataset_costs_one_more_read_only_for_an_accounts_key() {
    let g = given_levels().await;
    let dynamo = Wire::default();
    let s3 = Wire::default();
    let (catalog, signer) = g.stack.wired(&dynamo, &s3);
    let cost = |dataset: &'static str, key: &'static str| {
        let catalog = &catalog;
        let signer = &signer;
        let dynamo = &dynamo;
        async move {
            let path = format!("/api/v1/datasets/{dataset}/data");
            // The first use of a key records it (one UpdateItem, at most once an hour): the
            // second request is the steady state.
            for _ in 0..2 {
                dynamo.take();
                let resp = api::data(
                    &v2_request(&path, &[("x-api-key", key)]),
                    catalog,
                    signer,
                    Utc::now(),
                )
                .await;
                assert_eq!(resp.status(), 200, "{dataset}: {}", json_body(&resp));
            }
            dynamo.take()
        }
    };
    // THEN a registered dataset and an operator's key stay at one round trip; an account's key
    // on an approval dataset reads its grant (one strongly consistent GetItem) and no more
    assert_eq!(
        cost("air-quality-hourly", GRANTED).await,
        ["DynamoDB.BatchGetItem"]
    );
    assert_eq!(
        cost("bird-sightings", OPERATOR).await,
        ["DynamoDB.BatchGetItem"]
    );
    assert_eq!(
        cost("bird-sightings", GRANTED).await,
        ["DynamoDB.BatchGetItem", "DynamoDB.GetItem"]
    );
    assert!(s3.take().is_empty(), "signing is local: no S3 call");
}

#[tokio::test]
async fn operators_set_levels_grant_revoke_and_list_with_the_cli() {
    let g = given().await;
    let pool = g.stack.user_pool().await;
    let email = "partner@example.com";
    let sub = sign_up_confirmed(&g.stack.cognito(), &pool, email, "Correct-Horse-9-battery")
        .await
        .expect("sign up");
    put_key(&g, GRANTED, Some(Owner::parse(&sub).unwrap()), None).await;
    let admin = |args: &[&str]| {
        let mut cmd = admin_command();
        cmd.envs(g.stack.function_env())
            .env("USER_POOL_ID", &pool.pool_id)
            .env(
                "AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER",
                &g.stack.dynamo_url,
            )
            .env("CATALOG_OPERATOR", "ops-alice")
            .args(args);
        run_admin(&mut cmd)
    };
    let ok = |out: &std::process::Output| {
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };

    ok(&admin(&["access", "level", "bird-sightings", "approval"]));
    assert_eq!(
        outcome(&g, "bird-sightings", Some(GRANTED)).await,
        "403 access_required"
    );
    ok(&admin(&[
        "access",
        "grant",
        "bird-sightings",
        email,
        "--expires",
        "+1d",
    ]));
    assert_eq!(outcome(&g, "bird-sightings", Some(GRANTED)).await, "ok");
    let list = ok(&admin(&["access", "list", "bird-sightings"]));
    let line = list.lines().find(|l| l.contains(email)).expect(&list);
    assert!(line.contains(&sub) && line.contains("granted") && line.contains("ops-alice"));

    ok(&admin(&["access", "revoke", "bird-sightings", email]));
    assert_eq!(
        outcome(&g, "bird-sightings", Some(GRANTED)).await,
        "403 access_required"
    );
    let list = ok(&admin(&["access", "list", "bird-sightings"]));
    assert!(
        list.lines()
            .any(|l| l.contains(email) && l.contains("revoked")),
        "{list}"
    );
    // Revoking what is not in force, an unknown level or account: exit 2, naming it
    for args in [
        &["access", "revoke", "bird-sightings", email][..],
        &["access", "level", "bird-sightings", "secret"],
        &["access", "grant", "bird-sightings", "nobody@example.com"],
        &[
            "keys",
            "create",
            "--scope",
            "read",
            "--dataset",
            "no-such-dataset",
        ],
    ] {
        let out = admin(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
    }
    // A key limited to one dataset reads it and nothing else
    let out = ok(&admin(&[
        "keys",
        "create",
        "--scope",
        "read",
        "--dataset",
        "air-quality-hourly",
    ]));
    let secret = out.trim();
    let prefix = &secret[..9];
    let keys = ok(&admin(&["keys", "list"]));
    let line = keys.lines().find(|l| l.contains(prefix)).expect(&keys);
    assert!(line.contains(" air-quality-hourly "), "{line}");
    assert_eq!(outcome(&g, "air-quality-hourly", Some(secret)).await, "ok");
    assert_eq!(
        outcome(&g, "river-levels", Some(secret)).await,
        "403 key_not_for_dataset"
    );
}

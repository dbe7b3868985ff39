//! Who may read an organisation's datasets, on the real stack (DynamoDB on moto, S3 on
//! s3s-fs): the rule of `catalog::access::authorize` for `private` and `approval` datasets of an
//! organisation as one matrix over every route that serves a dataset (metadata, Croissant,
//! data and its listing form, download, rows, Delta Sharing's query, through
//! `access_rule::outcome`), and that a private dataset answers a stranger exactly as a slug that
//! names nothing does.

use catalog::keys::{NewKey, Owner, Scope};
use catalog::orgs::{Membership, Org, OrgName, Role};
use catalog::policy::AccessLevel;
use catalog::ports::{AccessStore, OrgStore};
use catalog_aws::dynamo::orgs::DynamoOrgs;
use catalog_tests::samples_dir;

use super::access_rule::outcome;
use super::*;

const PRIVATE: &str = "acme~ledger";
const GATED: &str = "acme~trials";
/// A slug of the same organisation that names no dataset.
const NOTHING: &str = "acme~nothing";

const OPERATOR: &str = "dcat_orgs_operator_000000000000000000000000000000000000000000000";
const OPERATOR_ELSEWHERE: &str =
    "dcat_orgs_operator_elsewhere_00000000000000000000000000000000000000";
const ADMIN: &str = "dcat_orgs_admin_000000000000000000000000000000000000000000000000";
const MEMBER: &str = "dcat_orgs_member_00000000000000000000000000000000000000000000000";
const MEMBER_ELSEWHERE: &str = "dcat_orgs_member_elsewhere_000000000000000000000000000000000000000";
const OUTSIDER: &str = "dcat_orgs_outsider_000000000000000000000000000000000000000000000";
const GRANTED: &str = "dcat_orgs_granted_0000000000000000000000000000000000000000000000";
const UNKNOWN: &str = "dcat_orgs_unknown_0000000000000000000000000000000000000000000000";

fn account(n: u8) -> Owner {
    Owner::parse(&format!("00000000-0000-4000-8000-0000000001{n:02}")).unwrap()
}

fn org(name: &str) -> OrgName {
    OrgName::parse(name).unwrap()
}

fn membership(name: &str, who: u8, role: Role) -> Membership {
    Membership {
        org: org(name),
        account: account(who).to_string(),
        role,
        email: Some(format!("{who}@example.com")),
        added_at: Utc::now(),
        added_by: "ops".into(),
    }
}

async fn put_key(g: &Given, secret: &str, owner: Option<Owner>, datasets: Option<&[&str]>) {
    let mut key = NewKey::for_secret(secret, vec![Scope::Read], "orgs", Utc::now(), None);
    key.owner = owner;
    key.datasets = datasets.map(|d| {
        d.iter()
            .map(|s| catalog::input::Slug::parse(s).unwrap())
            .collect()
    });
    g.stack.writer().put_key(&key).await.expect("put key");
}

/// GIVEN the sample catalog, and the organisation `acme` (account 1 its admin, account 2 a
/// member) with a private dataset and an approval one (account 4 granted it), the organisation
/// `beta` (account 3 its admin), and keys of each kind.
async fn given_orgs() -> (Given, DynamoOrgs) {
    let g = given().await;
    let now = Utc::now();
    let dir = samples_dir();
    let sample = manifest()
        .datasets
        .into_iter()
        .find(|d| d.slug.as_str() == "river-levels")
        .expect("the river-levels sample");
    for (slug, level) in [
        (PRIVATE, AccessLevel::Private),
        (GATED, AccessLevel::Approval),
    ] {
        let mut one = sample.clone();
        one.slug = catalog::input::Slug::parse(slug).unwrap();
        one.keyless_offset_hours = None;
        g.stack.seed_one(&dir, &one, now).await;
        g.stack
            .writer()
            .set_access(&one.slug, level, &Default::default(), now)
            .await
            .expect("set the level");
    }
    let orgs = DynamoOrgs::new(g.stack.dynamo.clone(), &g.stack.target.keys_table);
    for (name, admin) in [("acme", 1), ("beta", 3)] {
        let made = Org {
            name: org(name),
            display_name: name.to_uppercase(),
            members: 1,
            created_at: now,
            created_by: "ops".into(),
        };
        orgs.create_org(&made, &membership(name, admin, Role::Admin))
            .await
            .expect("create the organisation");
    }
    orgs.add_member(&membership("acme", 2, Role::Member))
        .await
        .expect("add a member");
    let access = g.stack.access();
    let gated = access
        .dataset_access(&catalog::input::Slug::parse(GATED).unwrap())
        .await
        .expect("read")
        .expect("the gated dataset");
    access
        .grant(&gated, &account(4), "4@example.com", None, "ops", now)
        .await
        .expect("grant");
    put_key(&g, OPERATOR, None, None).await;
    put_key(&g, OPERATOR_ELSEWHERE, None, Some(&["river-levels"])).await;
    put_key(&g, ADMIN, Some(account(1)), None).await;
    put_key(&g, MEMBER, Some(account(2)), None).await;
    put_key(&g, MEMBER_ELSEWHERE, Some(account(2)), Some(&[GATED])).await;
    put_key(&g, OUTSIDER, Some(account(3)), None).await;
    put_key(&g, GRANTED, Some(account(4)), None).await;
    (g, orgs)
}

/// The metadata and Croissant answers for this key: status and code, `ok` for a 200.
async fn described(g: &Given, dataset: &str, key: Option<&str>) -> [(u16, Value); 2] {
    let headers: Vec<(&str, &str)> = key.iter().map(|k| ("x-api-key", *k)).collect();
    let metadata = api::metadata(
        &v2_request(&format!("/api/v1/datasets/{dataset}"), &headers),
        &g.catalog,
        Utc::now(),
    )
    .await;
    let croissant = api::croissant(
        &v2_request(&format!("/api/v1/datasets/{dataset}/croissant"), &headers),
        &g.catalog,
        Utc::now(),
    )
    .await;
    [
        (metadata.status().as_u16(), json_body(&metadata)),
        (croissant.status().as_u16(), json_body(&croissant)),
    ]
}

#[tokio::test]
async fn the_access_rule_holds_on_an_organisations_datasets_as_one_matrix() {
    let (g, _) = given_orgs().await;
    #[rustfmt::skip]
    let cases: [(&str, Option<&str>, &str); 21] = [
        // private: members and operators only; anyone else is told there is no such dataset
        (PRIVATE, None, "404 not_found"),
        (PRIVATE, Some(UNKNOWN), "401 invalid_key"),
        (PRIVATE, Some(OUTSIDER), "404 not_found"),
        (PRIVATE, Some(GRANTED), "404 not_found"),
        (PRIVATE, Some(ADMIN), "ok"),
        (PRIVATE, Some(MEMBER), "ok"),
        (PRIVATE, Some(MEMBER_ELSEWHERE), "403 key_not_for_dataset"),
        (PRIVATE, Some(OPERATOR), "ok"),
        (PRIVATE, Some(OPERATOR_ELSEWHERE), "403 key_not_for_dataset"),
        (PRIVATE, Some(WRITE_KEY), "403 insufficient_scope"),
        // approval: members read without a grant
        (GATED, None, "401 missing_key"),
        (GATED, Some(OUTSIDER), "403 access_required"),
        (GATED, Some(GRANTED), "ok"),
        (GATED, Some(MEMBER), "ok"),
        (GATED, Some(ADMIN), "ok"),
        (GATED, Some(MEMBER_ELSEWHERE), "ok"),
        (GATED, Some(OPERATOR), "ok"),
        // a slug of the organisation that names nothing
        (NOTHING, None, "404 not_found"),
        (NOTHING, Some(OUTSIDER), "404 not_found"),
        (NOTHING, Some(MEMBER), "404 not_found"),
        (NOTHING, Some(UNKNOWN), "401 invalid_key"),
    ];
    let mut failures = Vec::new();
    for (dataset, key, expected) in cases {
        let got = outcome(&g, dataset, key).await;
        if got != expected {
            failures.push(format!(
                "{dataset} with {key:?}: {got}, expected {expected}"
            ));
        }
        // The metadata and Croissant: a private dataset is described to those who may read
        // it, and to no one else (not even its name, size or columns).
        if dataset == PRIVATE {
            let shown = expected == "ok" || expected.contains("key_not_for_dataset");
            for (status, body) in described(&g, dataset, key).await {
                let visible = status == 200;
                let expect_visible = shown && !expected.contains("key_not_for_dataset");
                if visible != expect_visible {
                    failures.push(format!(
                        "{dataset} described with {key:?}: {status} {body}, expected visible={expect_visible}"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A private dataset and a slug that names nothing, asked by a stranger on each route: the same
/// status, the same body but for the slug each names, the same caching.
#[tokio::test]
async fn a_private_dataset_answers_a_stranger_exactly_as_a_slug_that_names_nothing() {
    let (g, _) = given_orgs().await;
    let same = |private: (u16, Option<String>, Value), nothing: (u16, Option<String>, Value)| {
        let text = serde_json::to_string(&private.2)
            .unwrap()
            .replace(PRIVATE, NOTHING);
        let request_id = |v: &str| {
            let mut v: Value = serde_json::from_str(v).unwrap();
            if let Some(o) = v.as_object_mut() {
                o.remove("request_id");
            }
            v
        };
        ((private.0, private.1), request_id(&text))
            == (
                (nothing.0, nothing.1),
                request_id(&serde_json::to_string(&nothing.2).unwrap()),
            )
    };
    let parts = |r: &lambda_http::Response<lambda_http::Body>| {
        (
            r.status().as_u16(),
            r.headers()
                .get("cache-control")
                .map(|v| v.to_str().unwrap().to_owned()),
            json_body(r),
        )
    };
    let mut differ = Vec::new();
    for key in [None, Some(OUTSIDER), Some(GRANTED)] {
        let headers: Vec<(&str, &str)> = key.iter().map(|k| ("x-api-key", *k)).collect();
        for route in [
            "",
            "/croissant",
            "/data",
            "/data?page_size=1",
            "/rows?length=3",
            "/download",
        ] {
            let ask = |dataset: &str| {
                let path = format!("/api/v1/datasets/{dataset}{route}");
                let headers = headers.clone();
                let g = &g;
                async move {
                    let req = v2_request(&path, &headers);
                    let signer = g.stack.signer(Duration::from_secs(900));
                    let now = Utc::now();
                    match route {
                        "" => api::metadata(&req, &g.catalog, now).await,
                        "/croissant" => api::croissant(&req, &g.catalog, now).await,
                        "/rows?length=3" => api::rows(&req, &g.catalog, &g.rows, now).await,
                        "/download" => api::download(&req, &g.catalog, &signer, now).await,
                        _ => api::data(&req, &g.catalog, &signer, now).await,
                    }
                }
            };
            let private = parts(&ask(PRIVATE).await);
            let nothing = parts(&ask(NOTHING).await);
            if private.0 != 404 || !same(private.clone(), nothing.clone()) {
                differ.push(format!("{route} with {key:?}: {private:?} vs {nothing:?}"));
            }
        }
        if let Some(key) = key {
            let signer = g.stack.signer(Duration::from_secs(900));
            let ask = |dataset: &str| {
                catalog_http::testing::V2Event::new(
                    "POST",
                    &format!(
                        "/api/v1/delta-sharing/shares/catalog/schemas/datasets/tables/{dataset}/query"
                    ),
                )
                .header("authorization", &format!("Bearer {key}"))
                .body("{}")
                .request()
            };
            let private =
                parts(&api::sharing(&ask(PRIVATE), &g.catalog, &signer, Utc::now()).await);
            let nothing =
                parts(&api::sharing(&ask(NOTHING), &g.catalog, &signer, Utc::now()).await);
            if private.0 != 404 || !same(private.clone(), nothing.clone()) {
                differ.push(format!("sharing with {key:?}: {private:?} vs {nothing:?}"));
            }
        }
    }
    assert!(differ.is_empty(), "{differ:#?}");
}

/// A member removed from the organisation reads nothing private from the next request on, with
/// the same key; an added one reads at once.
#[tokio::test]
async fn membership_changes_take_effect_on_the_next_request() {
    let (g, orgs) = given_orgs().await;
    assert_eq!(outcome(&g, PRIVATE, Some(MEMBER)).await, "ok");
    orgs.remove_member(&org("acme"), &account(2))
        .await
        .expect("remove the member");
    assert_eq!(outcome(&g, PRIVATE, Some(MEMBER)).await, "404 not_found");
    assert_eq!(
        outcome(&g, GATED, Some(MEMBER)).await,
        "403 access_required"
    );
    assert_eq!(outcome(&g, PRIVATE, Some(OUTSIDER)).await, "404 not_found");
    orgs.add_member(&membership("acme", 3, Role::Editor))
        .await
        .expect("add the outsider");
    assert_eq!(outcome(&g, PRIVATE, Some(OUTSIDER)).await, "ok");
}

/// A dataset moved between `approval`, `private` and `registered`: keys and grants are judged
/// by the level on the next request (a grant is kept, and counts again once the dataset is
/// `approval` again); a signed URL handed out before is the object's until it expires.
#[tokio::test]
async fn a_level_change_applies_to_keys_and_grants_on_the_next_request_and_not_to_urls_handed_out()
{
    let (g, _) = given_orgs().await;
    let writer = g.stack.writer();
    let gated = catalog::input::Slug::parse(GATED).unwrap();
    let level = |l| {
        let writer = &writer;
        let gated = &gated;
        async move {
            writer
                .set_access(gated, l, &Default::default(), Utc::now())
                .await
                .expect("set the level")
        }
    };
    assert_eq!(outcome(&g, GATED, Some(GRANTED)).await, "ok");
    let handed_out = json_body(
        &g.data(
            &format!("/api/v1/datasets/{GATED}/data"),
            &[("x-api-key", GRANTED)],
        )
        .await,
    );
    let url = handed_out["url"].as_str().expect("a signed URL").to_owned();

    level(AccessLevel::Private).await;
    assert_eq!(outcome(&g, GATED, Some(GRANTED)).await, "404 not_found");
    assert_eq!(outcome(&g, GATED, Some(OUTSIDER)).await, "404 not_found");
    assert_eq!(outcome(&g, GATED, Some(MEMBER)).await, "ok");
    let (status, _) = http_get(&url).await;
    assert_eq!(
        status, 200,
        "a URL handed out before is the object's until it expires"
    );

    level(AccessLevel::Approval).await;
    assert_eq!(
        outcome(&g, GATED, Some(GRANTED)).await,
        "ok",
        "the grant was kept"
    );
    assert_eq!(
        outcome(&g, GATED, Some(OUTSIDER)).await,
        "403 access_required"
    );

    level(AccessLevel::Registered).await;
    assert_eq!(outcome(&g, GATED, Some(OUTSIDER)).await, "ok");
    assert_eq!(outcome(&g, GATED, None).await, "401 missing_key");
}

/// A dataset, a key, the status and the DynamoDB calls (operation, items) the request costs.
type CostCase<'a> = (&'a str, Option<&'a str>, u16, &'a [(&'a str, usize)]);

/// What an organisation's dataset costs on the wire, per request to the data route: as any
/// dataset (one BatchGetItem of it and the key), and for an account's key on a private or
/// approval dataset of an organisation one more, the grant and the membership together; a
/// stranger's key costs the same (and gets the 404); no key, one GetItem. Keys are used once
/// first, so that recording a key's use (once an hour) is not counted here.
#[tokio::test]
async fn an_organisations_dataset_costs_one_more_batch_read_only_for_an_accounts_key() {
    let (g, _) = given_orgs().await;
    for key in [MEMBER, OUTSIDER, OPERATOR, GRANTED] {
        for dataset in [PRIVATE, GATED] {
            outcome(&g, dataset, Some(key)).await;
        }
    }
    let dynamo = catalog_tests::Wire::default();
    let s3 = catalog_tests::Wire::default();
    let (catalog, signer) = g.stack.wired(&dynamo, &s3);
    let (get, batch) = ("DynamoDB.GetItem", "DynamoDB.BatchGetItem");
    #[rustfmt::skip]
    let cases: [CostCase; 8] = [
        (PRIVATE, Some(MEMBER), 200, &[(batch, 2), (batch, 1)]),
        (PRIVATE, Some(OUTSIDER), 404, &[(batch, 2), (batch, 0)]),
        (PRIVATE, Some(OPERATOR), 200, &[(batch, 2)]),
        (PRIVATE, None, 404, &[(get, 1)]),
        (GATED, Some(MEMBER), 200, &[(batch, 2), (batch, 1)]),
        (GATED, Some(GRANTED), 200, &[(batch, 2), (batch, 1)]),
        (GATED, Some(OPERATOR), 200, &[(batch, 2)]),
        (NOTHING, Some(MEMBER), 404, &[(batch, 1)]),
    ];
    let mut wrong = Vec::new();
    for (dataset, key, status, expected) in cases {
        let headers: Vec<(&str, &str)> = key.iter().map(|k| ("x-api-key", *k)).collect();
        let req = v2_request(&format!("/api/v1/datasets/{dataset}/data"), &headers);
        let resp = api::data(&req, &catalog, &signer, Utc::now()).await;
        let calls: Vec<(String, usize)> = dynamo
            .take_calls()
            .into_iter()
            .map(|c| (c.operation, c.items))
            .collect();
        let want: Vec<(String, usize)> = expected
            .iter()
            .map(|(o, n)| ((*o).to_owned(), *n))
            .collect();
        if resp.status().as_u16() != status || calls != want {
            wrong.push(format!(
                "{dataset} with {key:?}: {} {calls:?}, want {status} {want:?}",
                resp.status()
            ));
        }
        assert!(s3.take().is_empty(), "no S3 call");
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

//! Access requests and grants for `approval` datasets, through the local API (the JWT
//! authorizer, then the accounts function's handler) and `catalog-admin access`: a person asks,
//! an operator decides on the site's routes or on the command line, the data endpoint follows
//! at once.

use catalog::grants::Decision;
use catalog::policy::{AccessLevel, Approval, ApprovalPolicy, FormField};
use catalog::ports::{AccessStore, Decided};
use sha2::{Digest, Sha256};

use super::*;

/// The approval dataset the journeys ask for (a sample, set to `approval` by the test).
pub(super) const TRIALS: &str = "bird-sightings";

impl Site {
    /// `catalog-admin` against this stack and its user pool.
    pub(super) fn admin(&self) -> Command {
        let mut cmd = admin_command();
        cmd.envs(self.stack.function_env())
            .env("USER_POOL_ID", &self.pool.pool_id)
            .env("CATALOG_OPERATOR", "ops@example.com");
        cmd
    }

    pub(super) fn admin_ok(&self, args: &[&str]) -> String {
        let out = run_admin(self.admin().args(args));
        assert!(
            out.status.success(),
            "catalog-admin {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Sets a sample dataset's level and policy, as `access level` and publish do.
    pub(super) async fn set_level(&self, slug: &str, level: AccessLevel, policy: ApprovalPolicy) {
        self.stack
            .writer()
            .set_access(
                &catalog::input::Slug::parse(slug).unwrap(),
                level,
                &policy,
                Utc::now(),
            )
            .await
            .expect("set access");
    }

    /// A person with a read key of their own: (sub, tokens, key).
    pub(super) async fn reader(&self, email: &str) -> (String, Tokens, String) {
        let (sub, tokens) = self.person(email).await;
        let (status, created) = self.create(&tokens.access_token, "notebook").await;
        assert_eq!(status, 201, "{created}");
        let secret = created["secret"].as_str().unwrap().to_owned();
        (sub, tokens, secret)
    }

    /// An operator: signed up, added to the operators' group with the CLI, signed in again (the
    /// group is in tokens issued after).
    pub(super) async fn operator(&self, email: &str) -> Tokens {
        self.person(email).await;
        let said = self.admin_ok(&["accounts", "operator", email]);
        assert!(said.contains("operators"), "{said}");
        sign_in(&self.stack.cognito(), &self.pool, email, PASSWORD)
            .await
            .expect("sign in again")
    }

    /// The data endpoint's status for this key and, on 200, whether the downloaded file's
    /// SHA-256 is the one the answer names.
    pub(super) async fn fetch(&self, slug: &str, key: &str) -> u16 {
        let (status, _, body) = http_request(
            "GET",
            &format!("{}/datasets/{slug}/data", self.base),
            &[("x-api-key", key)],
        )
        .await;
        if status == 200 {
            let descriptor: Value = serde_json::from_slice(&body).expect("JSON");
            let (file_status, bytes) =
                catalog_tests::http_get(descriptor["url"].as_str().unwrap()).await;
            assert_eq!(file_status, 200);
            assert_eq!(
                hex::encode(Sha256::digest(&bytes)),
                descriptor["sha256"].as_str().unwrap(),
                "the file downloaded is the one published"
            );
        } else {
            let error: Value = serde_json::from_slice(&body).expect("JSON");
            assert!(error["code"].is_string(), "{error}");
        }
        status
    }

    /// The caller's record for a dataset, from `GET /account/access` (the owner index may be a
    /// moment behind: asked again for up to two seconds).
    pub(super) async fn own_record(&self, token: &str, slug: &str, status: &str) -> Value {
        let mut last = Value::Null;
        for _ in 0..20 {
            let (code, listed) = self.call("GET", "/account/access", token, "").await;
            assert_eq!(code, 200, "{listed}");
            last = listed["access"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["dataset"] == slug)
                .cloned()
                .unwrap_or(Value::Null);
            if last["status"] == status {
                return last;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        panic!("no {status} record for {slug}: {last}");
    }
}

/// Requests approved at once, no form.
pub(super) fn automatic() -> ApprovalPolicy {
    ApprovalPolicy {
        approval: Approval::Automatic,
        ..ApprovalPolicy::default()
    }
}

pub(super) fn form() -> ApprovalPolicy {
    ApprovalPolicy {
        approval: Approval::Manual,
        form: vec![FormField {
            name: "affiliation".into(),
            label: "Your organisation".into(),
            max_length: 40,
            required: true,
        }],
        terms: Some("No redistribution.".into()),
    }
}

pub(super) fn code(body: &Value) -> &str {
    body["code"].as_str().unwrap_or("")
}

#[tokio::test]
async fn a_person_asks_an_operator_approves_on_the_site_they_download_and_a_revocation_refuses_the_next_request(
) {
    let site = Site::start().await;
    site.set_level(TRIALS, AccessLevel::Approval, form()).await;
    let (sub, tokens, key) = site.reader("ada@example.com").await;
    let token = &tokens.access_token;
    let ops = site.operator("olga@example.com").await;

    // Without a grant, the key is refused with the code that says how to ask.
    assert_eq!(site.fetch(TRIALS, &key).await, 403);

    // The form is checked: a required answer, its limit, the terms.
    for (body, expected) in [
        (
            json!({"dataset": TRIALS, "accept_terms": true}),
            "invalid_answers",
        ),
        (
            json!({"dataset": TRIALS, "answers": {"affiliation": "x".repeat(41)}, "accept_terms": true}),
            "invalid_answers",
        ),
        (
            json!({"dataset": TRIALS, "answers": {"affiliation": "Acme"}}),
            "terms_not_accepted",
        ),
        (json!({"dataset": "no-such-dataset"}), "not_found"),
        (json!({"dataset": GATED}), "request_not_needed"),
    ] {
        let (status, body) = site
            .call("POST", "/account/access", token, &body.to_string())
            .await;
        assert!(status == 400 || status == 404 || status == 409, "{body}");
        assert_eq!(code(&body), expected, "{body}");
    }

    // WHEN they ask properly, THEN the request is pending, once.
    let ask =
        json!({"dataset": TRIALS, "answers": {"affiliation": " Acme Labs "}, "accept_terms": true})
            .to_string();
    let (status, created) = site.call("POST", "/account/access", token, &ask).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["access"]["status"], "pending");
    assert_eq!(
        created["access"]["answers"],
        json!({"affiliation": "Acme Labs"})
    );
    assert_eq!(created["access"]["terms_accepted"], true);
    let (status, again) = site.call("POST", "/account/access", token, &ask).await;
    assert_eq!((status, code(&again)), (409, "request_pending"), "{again}");
    site.own_record(token, TRIALS, "pending").await;
    assert_eq!(
        site.fetch(TRIALS, &key).await,
        403,
        "pending is not granted"
    );

    // Nobody outside the operators' group sees or decides requests.
    let (status, refused) = site.call("GET", "/operator/access", token, "").await;
    assert_eq!((status, code(&refused)), (403, "not_an_operator"));
    let decide_path = format!("/operator/access/{TRIALS}/{sub}");
    let (status, refused) = site
        .call("POST", &decide_path, token, r#"{"decision": "approve"}"#)
        .await;
    assert_eq!((status, code(&refused)), (403, "not_an_operator"));

    // THEN the operator sees it, with who asked and what they answered.
    let ops_token = &ops.access_token;
    let mut pending = Value::Null;
    for _ in 0..20 {
        let (status, listed) = site
            .call(
                "GET",
                &format!("/operator/access?dataset={TRIALS}"),
                ops_token,
                "",
            )
            .await;
        assert_eq!(status, 200, "{listed}");
        if let Some(r) = listed["access"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["grantee"] == sub.as_str())
        {
            pending = r.clone();
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(pending["status"], "pending", "{pending}");
    assert_eq!(pending["email"], "ada@example.com");
    assert_eq!(pending["answers"]["affiliation"], "Acme Labs");
    let rev = pending["rev"].as_u64().unwrap();

    // A decision on a revision that is not the record's is refused, and changes nothing.
    let (status, stale) = site
        .call(
            "POST",
            &decide_path,
            ops_token,
            &json!({"decision": "approve", "rev": rev + 7}).to_string(),
        )
        .await;
    assert_eq!(
        (status, code(&stale)),
        (409, "decision_conflict"),
        "{stale}"
    );

    // WHEN the operator approves on the site, THEN the very next download works.
    let (status, approved) = site
        .call(
            "POST",
            &decide_path,
            ops_token,
            &json!({"decision": "approve", "rev": rev}).to_string(),
        )
        .await;
    assert_eq!(status, 200, "{approved}");
    assert_eq!(approved["access"]["status"], "granted");
    assert_eq!(approved["access"]["decided_by"], "olga@example.com");
    assert_eq!(site.fetch(TRIALS, &key).await, 200);
    let mine = site.own_record(token, TRIALS, "granted").await;
    assert!(
        mine.get("decided_by").is_none(),
        "operators' names stay with operators"
    );
    let (status, again) = site.call("POST", "/account/access", token, &ask).await;
    assert_eq!((status, code(&again)), (409, "already_granted"), "{again}");

    // The CLI reports who has access, and who decided.
    let report = site.admin_ok(&["access", "list", TRIALS]);
    assert!(
        report.contains("ada@example.com")
            && report.contains("granted")
            && report.contains("olga@example.com"),
        "{report}"
    );

    // WHEN the grant is revoked with the CLI, THEN the next request is refused.
    site.admin_ok(&["access", "revoke", TRIALS, "ada@example.com"]);
    assert_eq!(site.fetch(TRIALS, &key).await, 403);
    site.own_record(token, TRIALS, "revoked").await;

    // A revoked person may ask again, and withdraw: once.
    let (status, _) = site.call("POST", "/account/access", token, &ask).await;
    assert_eq!(status, 201);
    let (status, _) = site
        .call("DELETE", &format!("/account/access/{TRIALS}"), token, "")
        .await;
    assert_eq!(status, 204);
    let (status, gone) = site
        .call("DELETE", &format!("/account/access/{TRIALS}"), token, "")
        .await;
    assert_eq!((status, code(&gone)), (404, "request_not_found"));
    site.own_record(token, TRIALS, "withdrawn").await;

    // Another account never sees Ada's records.
    let (_, eve, _) = site.reader("eve@example.com").await;
    let (status, listed) = site
        .call("GET", "/account/access", &eve.access_token, "")
        .await;
    assert_eq!(status, 200);
    assert_eq!(listed["access"], json!([]));
}

#[tokio::test]
async fn the_cli_approves_with_an_expiry_rejects_with_a_reason_and_says_what_it_cannot_decide() {
    let site = Site::start().await;
    site.set_level(TRIALS, AccessLevel::Approval, form()).await;
    let (_, tokens, key) = site.reader("bo@example.com").await;
    let token = &tokens.access_token;
    let ask = json!({"dataset": TRIALS, "answers": {"affiliation": "Uni"}, "accept_terms": true})
        .to_string();

    // Rejected, with a reason the person reads.
    assert_eq!(
        site.call("POST", "/account/access", token, &ask).await.0,
        201
    );
    let pending = site.admin_ok(&["access", "requests", TRIALS]);
    assert!(
        pending.contains("bo@example.com") && pending.contains("affiliation=\"Uni\""),
        "{pending}"
    );
    site.admin_ok(&[
        "access",
        "reject",
        TRIALS,
        "bo@example.com",
        "--reason",
        "partners only",
    ]);
    let mine = site.own_record(token, TRIALS, "rejected").await;
    assert_eq!(mine["reason"], "partners only");
    assert_eq!(site.fetch(TRIALS, &key).await, 403);
    // Nothing is pending now: the CLI says so, and fails.
    let out = run_admin(
        site.admin()
            .args(["access", "approve", TRIALS, "bo@example.com"]),
    );
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("rejected"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Asked again, approved until two seconds from now: then expired, and asked for again.
    assert_eq!(
        site.call("POST", "/account/access", token, &ask).await.0,
        201
    );
    site.admin_ok(&[
        "access",
        "approve",
        TRIALS,
        "bo@example.com",
        "--expires",
        "+2s",
    ]);
    assert_eq!(site.fetch(TRIALS, &key).await, 200);
    // The moment the data path calls the grant expired (403), asking again is allowed: both
    // judge the stored expiry the same way.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while site.fetch(TRIALS, &key).await == 200 {
        assert!(
            std::time::Instant::now() < deadline,
            "the grant never expired"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    site.own_record(token, TRIALS, "expired").await;
    assert_eq!(
        site.call("POST", "/account/access", token, &ask).await.0,
        201,
        "an expired grant may be asked for again"
    );
    site.own_record(token, TRIALS, "pending").await;
}

#[tokio::test]
async fn an_automatic_dataset_grants_at_once_records_the_request_and_a_revocation_holds() {
    let site = Site::start().await;
    site.set_level(TRIALS, AccessLevel::Approval, automatic())
        .await;
    let (sub, tokens, key) = site.reader("cy@example.com").await;
    assert_eq!(site.fetch(TRIALS, &key).await, 403);
    let (status, created) = site
        .call(
            "POST",
            "/account/access",
            &tokens.access_token,
            &json!({"dataset": TRIALS}).to_string(),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["access"]["status"], "granted");
    assert!(created["access"]["requested_at"].is_string());
    assert_eq!(site.fetch(TRIALS, &key).await, 200);
    // A key limited to another dataset still reads nothing else, grant or not.
    let (_, limited) = site
        .call(
            "POST",
            "/account/keys",
            &tokens.access_token,
            &json!({"label": "air only", "datasets": [GATED]}).to_string(),
        )
        .await;
    assert_eq!(
        site.fetch(TRIALS, limited["secret"].as_str().unwrap())
            .await,
        403
    );
    // Operators see it as a decided request.
    let granted = site.admin_ok(&["access", "requests", TRIALS, "--status", "granted"]);
    assert!(
        granted.contains(&sub) && granted.contains("automatic"),
        "{granted}"
    );
    // Revoked by an operator: asking again does not grant it back.
    site.admin_ok(&["access", "revoke", TRIALS, "cy@example.com"]);
    assert_eq!(site.fetch(TRIALS, &key).await, 403);
    let ask_again = json!({"dataset": TRIALS}).to_string();
    let (status, again) = site
        .call("POST", "/account/access", &tokens.access_token, &ask_again)
        .await;
    assert_eq!((status, code(&again)), (409, "access_revoked"), "{again}");
    assert_eq!(site.fetch(TRIALS, &key).await, 403);
    site.admin_ok(&["access", "grant", TRIALS, "cy@example.com"]);
    assert_eq!(site.fetch(TRIALS, &key).await, 200);
}

#[tokio::test]
async fn a_disabled_account_cannot_ask_its_grants_end_and_its_requests_close() {
    let site = Site::start().await;
    site.set_level(TRIALS, AccessLevel::Approval, automatic())
        .await;
    site.set_level(
        "river-levels",
        AccessLevel::Approval,
        ApprovalPolicy::default(),
    )
    .await;
    let (sub, tokens, key) = site.reader("dee@example.com").await;
    let ask = json!({"dataset": TRIALS}).to_string();
    assert_eq!(
        site.call("POST", "/account/access", &tokens.access_token, &ask)
            .await
            .0,
        201
    );
    assert_eq!(site.fetch(TRIALS, &key).await, 200);
    // A request pending on a dataset approved by hand...
    let pending = json!({"dataset": "river-levels"}).to_string();
    let (status, _) = site
        .call("POST", "/account/access", &tokens.access_token, &pending)
        .await;
    assert_eq!(status, 201);
    let said = site.admin_ok(&["accounts", "disable", "dee@example.com"]);
    assert!(said.contains("1 grant(s) revoked"), "{said}");
    // ...is closed with the account, so that nobody approves it while it is disabled.
    let access = site.stack.access();
    let river = access
        .dataset_access(&catalog::input::Slug::parse("river-levels").unwrap())
        .await
        .unwrap()
        .unwrap();
    let record = access
        .record(&Owner::parse(&sub).unwrap(), &river.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(record.status, catalog::grants::AccessStatus::Rejected);
    assert_eq!(record.reason.as_deref(), Some("the account was disabled"));
    let out =
        run_admin(
            site.admin()
                .args(["access", "approve", "river-levels", "dee@example.com"]),
        );
    assert!(
        !out.status.success(),
        "approving a disabled account's request"
    );
    // The access token stays valid until it expires; the account's item refuses the request.
    let (status, refused) = site
        .call("POST", "/account/access", &tokens.access_token, &ask)
        .await;
    assert_eq!(
        (status, code(&refused)),
        (403, "account_disabled"),
        "{refused}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_approval_and_a_revocation_racing_leave_one_consistent_state() {
    let site = Site::start().await;
    site.set_level(TRIALS, AccessLevel::Approval, form()).await;
    let access = site.stack.access();
    let dataset = access
        .dataset_access(&catalog::input::Slug::parse(TRIALS).unwrap())
        .await
        .unwrap()
        .unwrap();
    // DynamoDB applies each conditional write atomically; moto's threads do not, so the racing
    // decisions go through a proxy that forwards one request at a time (in whatever order
    // they arrive).
    let (client, _proxy) = site.stack.serialized_client().await;
    let racing = catalog_aws::dynamo::access::DynamoAccess::new(
        client,
        &site.stack.target.keys_table,
        &site.stack.target.datasets_table,
    );
    for round in 0..3 {
        let (sub, tokens, key) = site.reader(&format!("race{round}@example.com")).await;
        let ask = json!({"dataset": TRIALS, "answers": {"affiliation": "R"}, "accept_terms": true})
            .to_string();
        assert_eq!(
            site.call("POST", "/account/access", &tokens.access_token, &ask)
                .await
                .0,
            201
        );
        let grantee = Owner::parse(&sub).unwrap();
        // WHEN five approvals and five revocations are sent at once
        let mut tasks = Vec::new();
        for i in 0..10 {
            let access = racing.clone();
            let grantee = grantee.clone();
            let id = dataset.id;
            tasks.push(tokio::spawn(async move {
                let decision = if i % 2 == 0 {
                    Decision::Approve { expires_at: None }
                } else {
                    Decision::Revoke
                };
                let decided = access
                    .decide(
                        &id,
                        &grantee,
                        &decision,
                        None,
                        &format!("op{i}"),
                        Utc::now(),
                    )
                    .await
                    .expect("decide");
                (decision, decided)
            }));
        }
        let mut approvals = 0;
        let mut revocations = 0;
        for task in tasks {
            match task.await.unwrap() {
                (Decision::Revoke, Decided::Done(_)) => revocations += 1,
                (_, Decided::Done(_)) => approvals += 1,
                (_, Decided::Conflict(_)) => {}
                (_, Decided::NotFound) => panic!("the record exists"),
            }
        }
        // THEN exactly one approval applied, at most one revocation (after it), and the stored
        // record, its revision and the data endpoint all agree.
        assert_eq!(approvals, 1, "round {round}");
        assert!(revocations <= 1, "round {round}");
        let record = access.record(&grantee, &dataset.id).await.unwrap().unwrap();
        assert_eq!(
            record.rev,
            1 + approvals + revocations,
            "one revision per applied write"
        );
        let expected = if revocations == 1 {
            (catalog::grants::AccessStatus::Revoked, 403)
        } else {
            (catalog::grants::AccessStatus::Granted, 200)
        };
        assert_eq!(record.status, expected.0, "round {round}");
        assert_eq!(site.fetch(TRIALS, &key).await, expected.1, "round {round}");
    }
}

/// The DynamoDB requests behind each access route, counted on the wire (docs/data-model.md's
/// table): the dataset's policy is one GetItem; asking is one transaction (with its notice);
/// listing one Query of an index; withdrawing one UpdateItem; deciding reads the record, then
/// writes it and its notice in one transaction. None grows with the catalog.
#[tokio::test]
async fn each_access_route_costs_the_requests_the_cost_table_states() {
    let stack = Stack::start().await;
    let now = Utc::now();
    stack.seed_samples(now).await;
    let wire = catalog_tests::Wire::default();
    let access = catalog_aws::dynamo::access::DynamoAccess::new(
        stack.dynamo_client(&wire),
        &stack.target.keys_table,
        &stack.target.datasets_table,
    );
    let owner = Owner::parse("7a0c2e4f-1111-4222-8333-944455556666").unwrap();
    let count = |what: &str, expected: &[&str]| {
        let sent: Vec<String> = wire
            .take_calls()
            .into_iter()
            .map(|c| c.operation.replace("DynamoDB.", ""))
            .collect();
        assert_eq!(sent, expected, "{what}");
    };
    let slug = catalog::input::Slug::parse(TRIALS).unwrap();
    let dataset = access.dataset_access(&slug).await.unwrap().unwrap();
    count("a dataset's policy", &["GetItem"]);
    let ask = catalog::grants::AccessAsk::parse(br#"{"dataset": "bird-sightings"}"#).unwrap();
    let record = ask.record(
        dataset.id,
        &owner,
        None,
        Default::default(),
        false,
        false,
        now,
    );
    access.ask(&record, now).await.unwrap();
    count("ask", &["TransactWriteItems"]);
    access.ask(&record, now).await.unwrap();
    count(
        "ask again: refused, then the record read to say why",
        &["TransactWriteItems", "GetItem"],
    );
    access.access_of(&owner).await.unwrap();
    count("an account's records", &["Query"]);
    access
        .access_by_status(catalog::grants::AccessStatus::Pending, Some(&dataset.id))
        .await
        .unwrap();
    count("operators' list", &["Query"]);
    access
        .decide(
            &dataset.id,
            &owner,
            &Decision::Approve { expires_at: None },
            Some(1),
            "op",
            now,
        )
        .await
        .unwrap();
    count("a decision", &["GetItem", "TransactWriteItems"]);
    access
        .decide(
            &dataset.id,
            &owner,
            &Decision::Reject { reason: "x".into() },
            None,
            "op",
            now,
        )
        .await
        .unwrap();
    count(
        "a decision that does not apply: the record read says so",
        &["GetItem"],
    );
    assert!(!access.withdraw(&owner, &dataset.id, now).await.unwrap());
    count("withdraw", &["UpdateItem"]);
}

/// `catalog-admin access approve|reject` decide on the revision the operator saw: `access
/// requests` lists it, `--rev` sends it, and a request withdrawn and asked again (other answers,
/// a later revision) meanwhile is not decided on; without `--rev`, the revision read just before.
#[tokio::test]
async fn the_cli_decides_only_on_the_revision_it_was_shown() {
    let site = Site::start().await;
    site.set_level(TRIALS, AccessLevel::Approval, form()).await;
    let (sub, tokens, key) = site.reader("fay@example.com").await;
    let token = &tokens.access_token;
    let ask = |affiliation: &str| {
        json!({"dataset": TRIALS, "answers": {"affiliation": affiliation}, "accept_terms": true})
            .to_string()
    };
    assert_eq!(
        site.call("POST", "/account/access", token, &ask("Uni"))
            .await
            .0,
        201
    );
    // The operator's view: the request, at its revision.
    let shown = site.admin_ok(&["access", "requests", TRIALS]);
    let line = shown
        .lines()
        .find(|l| l.contains(&sub))
        .unwrap_or_else(|| panic!("{shown}"));
    let fields: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        &fields[..4],
        [TRIALS, "fay@example.com", sub.as_str(), "pending"]
    );
    let seen: u64 = fields[4].parse().expect("the revision");
    // Meanwhile the person withdraws and asks again, with other answers.
    let (status, _) = site
        .call("DELETE", &format!("/account/access/{TRIALS}"), token, "")
        .await;
    assert_eq!(status, 204);
    assert_eq!(
        site.call("POST", "/account/access", token, &ask("Rival Corp"))
            .await
            .0,
        201
    );
    // WHEN the operator approves what they saw THEN nothing is decided, and they are told why.
    let out = run_admin(site.admin().args([
        "access",
        "approve",
        TRIALS,
        "fay@example.com",
        "--rev",
        &seen.to_string(),
    ]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("not pending at revision {seen}"))
            && stderr.contains("access requests"),
        "{stderr}"
    );
    assert_eq!(site.fetch(TRIALS, &key).await, 403);
    site.own_record(token, TRIALS, "pending").await;
    // The same with reject.
    let out = run_admin(site.admin().args([
        "access",
        "reject",
        TRIALS,
        &sub,
        "--rev",
        &seen.to_string(),
        "--reason",
        "stale",
    ]));
    assert_eq!(out.status.code(), Some(2));
    // Listed again: the new revision, which approves (by account id).
    let shown = site.admin_ok(&["access", "requests", TRIALS]);
    let line = shown.lines().find(|l| l.contains(&sub)).unwrap();
    let current: u64 = line.split_whitespace().nth(4).unwrap().parse().unwrap();
    assert!(current > seen);
    let said = site.admin_ok(&[
        "access",
        "approve",
        TRIALS,
        &sub,
        "--rev",
        &current.to_string(),
    ]);
    assert!(said.contains(&format!("(revision {current})")), "{said}");
    assert_eq!(site.fetch(TRIALS, &key).await, 200);
}

/// `GET /operator/access` comes a page at a time (`page`, `page_size`, with the `total`), newest
/// first across pages, so that its answer never grows with the number of requests.
#[tokio::test]
async fn the_operators_list_comes_a_page_at_a_time() {
    let site = Site::start().await;
    site.set_level(
        "river-levels",
        AccessLevel::Approval,
        ApprovalPolicy::default(),
    )
    .await;
    let ops = site.operator("olga@example.com").await;
    let mut asked = Vec::new();
    for i in 0..5 {
        let (sub, tokens) = site.person(&format!("p{i}@example.com")).await;
        let (status, body) = site
            .call(
                "POST",
                "/account/access",
                &tokens.access_token,
                &json!({"dataset": "river-levels"}).to_string(),
            )
            .await;
        assert_eq!(status, 201, "{body}");
        asked.push(sub);
        // Requests a second apart: newest first is a strict order.
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    }
    let page = |n: u64| {
        let site = &site;
        let token = ops.access_token.clone();
        async move {
            site.call(
                "GET",
                &format!("/operator/access?dataset=river-levels&page={n}&page_size=2"),
                &token,
                "",
            )
            .await
        }
    };
    let mut seen = Vec::new();
    // The status index may be a moment behind: asked again until it holds all five.
    for _ in 0..20 {
        let (status, first) = page(1).await;
        assert_eq!(status, 200, "{first}");
        if first["total"] == 5 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    for n in 1..=3 {
        let (status, body) = page(n).await;
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            (
                body["total"].as_u64(),
                body["page"].as_u64(),
                body["page_size"].as_u64()
            ),
            (Some(5), Some(n), Some(2)),
            "{body}"
        );
        let access = body["access"].as_array().unwrap();
        assert_eq!(access.len(), if n < 3 { 2 } else { 1 }, "{body}");
        seen.extend(
            access
                .iter()
                .map(|r| r["grantee"].as_str().unwrap().to_owned()),
        );
    }
    let (_, past) = page(4).await;
    assert_eq!(past["access"], json!([]));
    asked.reverse();
    assert_eq!(seen, asked, "every record once, newest first");
    // A bad page is the API's usual 400.
    let (status, bad) = site
        .call("GET", "/operator/access?page=0", &ops.access_token, "")
        .await;
    assert_eq!((status, code(&bad)), (400, "bad_request"), "{bad}");
}

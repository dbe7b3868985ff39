//! The emails about access (catalog::notices), end to end against moto: requests and decisions
//! made through the local API write their notices; the mailer (its handler in-process, with its
//! clock and SES endpoint given) sends them through moto's SES v2, and moto's record of what it
//! sent (`/moto-api/data.json`, the SES backend's messages) is read back: recipients, subjects,
//! the link to the page, and no key, token or `dcat_` in any of them.

use catalog::notices::{MailerConfig, NoticeQueue, Operators};
use catalog::policy::{AccessLevel, Approval, ApprovalPolicy};
use catalog_aws::dynamo::access::notices::DynamoNotices;
use catalog_aws::mailer::{Mailroom, OrgDeciders, SesMailer};
use chrono::{DateTime, Duration, Utc};

use super::access_requests::TRIALS;
use super::*;

/// The verified identity the emails come from.
pub(super) const SENDER: &str = "catalog@example.org";
/// The deciders' address (the template's OperatorsEmail).
pub(super) const DESK: &str = "access-desk@example.org";
pub(super) const SITE: &str = "https://data.example.org";

/// One email as moto's SES recorded it.
#[derive(Debug, Clone)]
pub(super) struct Sent {
    pub to: Vec<String>,
    pub from: String,
    pub subject: String,
    pub body: String,
}

/// Every email moto's SES has sent so far, in order.
pub(super) async fn sent(stack: &Stack) -> Vec<Sent> {
    let (status, bytes) =
        catalog_tests::http_get(&format!("{}/moto-api/data.json", stack.dynamo_url)).await;
    assert_eq!(status, 200);
    let data: Value = serde_json::from_slice(&bytes).expect("moto's data.json");
    data["ses"]["Message"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|m| Sent {
            to: m["destinations"]["ToAddresses"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_owned())
                .collect(),
            from: m["source"].as_str().unwrap().to_owned(),
            subject: m["subject"].as_str().unwrap().to_owned(),
            body: m["body"].as_str().unwrap().to_owned(),
        })
        .collect()
}

/// SES in moto knows the sender (SES sends only from a verified identity).
pub(super) async fn verify_sender(stack: &Stack) {
    let ses = aws_sdk_sesv2::Client::from_conf(
        aws_sdk_sesv2::config::Builder::from(&stack.sdk)
            .endpoint_url(&stack.dynamo_url)
            .build(),
    );
    ses.create_email_identity()
        .email_identity(SENDER)
        .send()
        .await
        .expect("the sender's identity");
}

/// The mailer against this stack, with SES at `ses` and a digest window of 15 minutes.
fn mailroom(stack: &Stack, ses: &str) -> Mailroom {
    Mailroom {
        notices: DynamoNotices::new(stack.dynamo.clone(), &stack.target.keys_table),
        deciders: OrgDeciders {
            operators: Operators::parse(DESK),
            orgs: catalog_aws::dynamo::orgs::DynamoOrgs::new(
                stack.dynamo.clone(),
                &stack.target.keys_table,
            ),
            notices: DynamoNotices::new(stack.dynamo.clone(), &stack.target.keys_table),
        },
        ses: Some(SesMailer::new(&stack.sdk, SENDER, Some(ses))),
        config: MailerConfig::new(SITE),
    }
}

fn manual() -> ApprovalPolicy {
    ApprovalPolicy {
        approval: Approval::Manual,
        ..ApprovalPolicy::default()
    }
}

fn to(mail: &[Sent], address: &str) -> Vec<Sent> {
    mail.iter()
        .filter(|m| m.to.iter().any(|t| t == address))
        .cloned()
        .collect()
}

impl Site {
    async fn ask(&self, token: &str) {
        let (status, body) = self
            .call(
                "POST",
                "/account/access",
                token,
                &json!({ "dataset": TRIALS }).to_string(),
            )
            .await;
        assert_eq!(status, 201, "{body}");
    }

    async fn decide(&self, ops: &str, sub: &str, body: Value) {
        let (status, answer) = self
            .call(
                "POST",
                &format!("/operator/access/{TRIALS}/{sub}"),
                ops,
                &body.to_string(),
            )
            .await;
        assert_eq!(status, 200, "{answer}");
    }
}

/// Runs the mailer at `at`, with SES at `ses`.
async fn run(stack: &Stack, ses: &str, at: DateTime<Utc>) -> catalog::notices::RunReport {
    mailroom(stack, ses).run_at(at).await.expect("a mailer run")
}

#[tokio::test]
async fn requests_reach_the_deciders_as_a_digest_and_each_decision_its_person_without_a_secret() {
    let site = Site::start().await;
    let stack = &site.stack;
    verify_sender(stack).await;
    site.set_level(TRIALS, AccessLevel::Approval, manual())
        .await;
    let moto = stack.dynamo_url.clone();
    let (ann, ann_tokens, ann_key) = site.reader("ann@example.org").await;
    let ops = site.operator("olga@example.org").await;
    let start = Utc::now();

    // A request: the deciders get one email naming the dataset, with the link to their page.
    site.ask(&ann_tokens.access_token).await;
    let report = run(stack, &moto, start).await;
    assert_eq!((report.digests, report.sent), (1, 0), "{report:?}");
    let mail = sent(stack).await;
    assert_eq!(mail.len(), 1);
    assert_eq!(mail[0].to, [DESK]);
    assert_eq!(mail[0].from, SENDER);
    assert_eq!(mail[0].subject, format!("Access request for {TRIALS}"));
    assert!(mail[0].body.contains("ann@example.org"), "{}", mail[0].body);
    assert!(
        mail[0].body.contains(&format!("{SITE}/operators.html")),
        "{}",
        mail[0].body
    );

    // Five more within the window: none until the window has passed, then ONE listing all five.
    let mut others = Vec::new();
    for i in 1..=5 {
        let email = format!("asker{i}@example.org");
        let (sub, tokens) = site.person(&email).await;
        site.ask(&tokens.access_token).await;
        others.push((email, sub, tokens));
    }
    let report = run(stack, &moto, start + Duration::minutes(5)).await;
    assert_eq!((report.digests, report.held), (0, 5), "{report:?}");
    assert_eq!(sent(stack).await.len(), 1, "nothing within the window");
    let report = run(stack, &moto, start + Duration::minutes(15)).await;
    assert_eq!(report.digests, 1, "{report:?}");
    let desk = to(&sent(stack).await, DESK);
    assert_eq!(desk.len(), 2, "one digest, not five emails");
    assert_eq!(desk[1].subject, "5 new access requests");
    for (email, _, _) in &others {
        assert!(desk[1].body.contains(email.as_str()), "{}", desk[1].body);
    }
    let report = run(stack, &moto, start + Duration::minutes(16)).await;
    assert_eq!(report.read, 0, "every request told: {report:?}");

    // Approve with an expiry: the person is told until when.
    let until = "2031-06-30T12:00:00Z";
    site.decide(
        &ops.access_token,
        &ann,
        json!({"decision": "approve", "expires_at": until, "rev": 1}),
    )
    .await;
    // Reject with a reason; revoke a grant without expiry.
    let (bob_email, bob, _) = &others[0];
    site.decide(
        &ops.access_token,
        bob,
        json!({"decision": "reject", "reason": "Only for clinicians", "rev": 1}),
    )
    .await;
    let (cy_email, cy, _) = &others[1];
    site.decide(
        &ops.access_token,
        cy,
        json!({"decision": "approve", "rev": 1}),
    )
    .await;
    let report = run(stack, &moto, start + Duration::minutes(17)).await;
    assert_eq!(report.sent, 3, "{report:?}");
    site.decide(&ops.access_token, cy, json!({"decision": "revoke"}))
        .await;
    run(stack, &moto, start + Duration::minutes(18)).await;
    let mail = sent(stack).await;
    let ann_mail = to(&mail, "ann@example.org");
    assert_eq!(ann_mail.len(), 1);
    assert_eq!(ann_mail[0].subject, format!("Access to {TRIALS} approved"));
    assert!(
        ann_mail[0].body.contains(&format!("until {until}")),
        "{}",
        ann_mail[0].body
    );
    assert!(ann_mail[0].body.contains(&format!("{SITE}/account.html")));
    let bob_mail = to(&mail, bob_email);
    assert_eq!(bob_mail.len(), 1);
    assert!(
        bob_mail[0]
            .body
            .contains("The reason given: Only for clinicians"),
        "{}",
        bob_mail[0].body
    );
    let cy_mail = to(&mail, cy_email);
    let subjects: Vec<&str> = cy_mail.iter().map(|m| m.subject.as_str()).collect();
    assert_eq!(
        subjects,
        [
            format!("Access to {TRIALS} approved"),
            format!("Access to {TRIALS} revoked")
        ]
    );
    assert!(
        cy_mail[0].body.contains("until revoked"),
        "{}",
        cy_mail[0].body
    );

    // No email carries a key, a token or anything that looks like a key.
    let mut secrets = vec![
        ann_key.clone(),
        ann_tokens.access_token.clone(),
        ann_tokens.id_token.clone(),
        ops.access_token.clone(),
        ops.id_token.clone(),
    ];
    for (_, _, tokens) in &others {
        secrets.push(tokens.access_token.clone());
    }
    for m in sent(stack).await {
        for text in [&m.subject, &m.body] {
            assert!(!text.contains("dcat_"), "{text}");
            for secret in &secrets {
                assert!(!text.contains(secret.as_str()), "a secret in: {text}");
            }
        }
    }
}

#[tokio::test]
async fn emails_off_means_none_and_a_failing_ses_keeps_the_notice_and_the_decision() {
    let site = Site::start().await;
    let stack = &site.stack;
    verify_sender(stack).await;
    site.set_level(TRIALS, AccessLevel::Approval, manual())
        .await;
    let moto = stack.dynamo_url.clone();
    let ops = site.operator("olga@example.org").await;
    let start = Utc::now();

    // Someone who turned emails off on their page gets none.
    let (quiet, quiet_tokens) = site.person("quiet@example.org").await;
    let token = &quiet_tokens.access_token;
    let (status, prefs) = site.call("GET", "/account/preferences", token, "").await;
    assert_eq!((status, prefs), (200, json!({"emails": true})));
    let (status, prefs) = site
        .call("PUT", "/account/preferences", token, r#"{"emails": false}"#)
        .await;
    assert_eq!((status, prefs), (200, json!({"emails": false})));
    let (status, prefs) = site.call("GET", "/account/preferences", token, "").await;
    assert_eq!((status, prefs), (200, json!({"emails": false})));
    let (status, refused) = site
        .call("PUT", "/account/preferences", token, r#"{"emails": "no"}"#)
        .await;
    assert_eq!(
        (status, refused["code"].as_str()),
        (400, Some("invalid_body"))
    );
    site.ask(token).await;
    site.decide(
        &ops.access_token,
        &quiet,
        json!({"decision": "approve", "rev": 1}),
    )
    .await;
    let report = run(stack, &moto, start).await;
    assert_eq!((report.unwanted, report.sent), (1, 0), "{report:?}");
    assert!(to(&sent(stack).await, "quiet@example.org").is_empty());

    // SES unreachable (a closed port) for one run: the notice stays pending, with its attempt
    // counted, and the decision stands; the next run sends it.
    let (dee, dee_tokens) = site.person("dee@example.org").await;
    site.ask(&dee_tokens.access_token).await;
    site.decide(
        &ops.access_token,
        &dee,
        json!({"decision": "reject", "reason": "Incomplete", "rev": 1}),
    )
    .await;
    let before = sent(stack).await.len();
    let closed = format!("http://127.0.0.1:{}", catalog_tests::free_port());
    let report = run(stack, &closed, start + Duration::minutes(1)).await;
    // (dee's request waits for the deciders' window, which quiet's request opened)
    assert_eq!(
        (report.sent, report.retried, report.held),
        (0, 1, 1),
        "{report:?}"
    );
    assert_eq!(sent(stack).await.len(), before);
    let notices = DynamoNotices::new(stack.dynamo.clone(), &stack.target.keys_table);
    let pending = notices.pending(10).await.unwrap();
    let rejected = pending
        .iter()
        .find(|n| n.account == dee && n.reason.is_some())
        .expect("the rejection's notice is still pending");
    assert_eq!(rejected.attempts, 1);
    let record = site
        .own_record(&dee_tokens.access_token, TRIALS, "rejected")
        .await;
    assert_eq!(record["reason"], "Incomplete");
    let report = run(stack, &moto, start + Duration::minutes(20)).await;
    assert_eq!((report.sent, report.digests), (1, 1), "{report:?}");
    let dee_mail = to(&sent(stack).await, "dee@example.org");
    assert_eq!(dee_mail.len(), 1);
    assert!(dee_mail[0].body.contains("Incomplete"));
    assert!(notices.pending(10).await.unwrap().is_empty());
}

/// IAM's `StringLike`: `*` any run of characters, `?` one.
fn iam_like(pattern: &str, value: &str) -> bool {
    fn go(p: &[char], v: &[char]) -> bool {
        match p.split_first() {
            None => v.is_empty(),
            Some(('*', rest)) => (0..=v.len()).any(|i| go(rest, &v[i..])),
            Some(('?', rest)) => !v.is_empty() && go(rest, &v[1..]),
            Some((c, rest)) => v.first() == Some(c) && go(rest, &v[1..]),
        }
    }
    go(
        &pattern.chars().collect::<Vec<_>>(),
        &value.chars().collect::<Vec<_>>(),
    )
}

/// The template's mailer: every minute, its environment from the parameters, and a role that
/// reaches the notices (the index, then NOTICE# and DIGEST# items), reads the accounts' email
/// preference, touches no access record, key or other item, and sends from `MailSender` only;
/// the keys table's `by-notice` index is the one the code queries.
#[test]
fn the_mailers_role_reaches_its_items_only_and_sends_from_the_sender_alone() {
    use catalog_aws::dynamo::access::notices::{notice_item, DIGEST_PREFIX, NOTICES_INDEX, QUEUE};
    use catalog_aws::dynamo::layout::{account_key, api_key_key, grant_key};
    let text = std::fs::read_to_string(catalog_tests::repo_root().join("template.yaml")).unwrap();
    let template: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let tag = |v: &serde_norway::Value, name: &str| match v {
        serde_norway::Value::Tagged(t) if t.tag == name => Some(t.value.clone()),
        _ => None,
    };
    let mailer = &template["Resources"]["CatalogMailerFunction"]["Properties"];
    assert_eq!(
        mailer["Events"]["EveryMinute"]["Properties"]["Schedule"].as_str(),
        Some("rate(1 minute)")
    );
    let env = &mailer["Environment"]["Variables"];
    for (variable, parameter) in [
        ("MAIL_SENDER", "MailSender"),
        ("OPERATORS_EMAIL", "OperatorsEmail"),
        ("DIGEST_MINUTES", "NoticeDigestMinutes"),
    ] {
        assert_eq!(
            tag(&env[variable], "Ref").and_then(|v| v.as_str().map(str::to_owned)),
            Some(parameter.to_owned()),
            "{variable}"
        );
        assert!(!template["Parameters"][parameter].is_null(), "{parameter}");
    }
    assert!(!env["SITE_URL"].is_null() && !env["KEYS_TABLE"].is_null());

    let sub = "7a0c2e4f-1111-4222-8333-944455556666";
    let pk = |item: catalog_aws::dynamo::attr::Item| item["key_hash"].as_s().unwrap().to_owned();
    let record = catalog::grants::AccessRecord {
        slug: TRIALS.into(),
        dataset: uuid::Uuid::new_v4(),
        grantee: sub.into(),
        email: Some("ann@example.org".into()),
        status: catalog::grants::AccessStatus::Pending,
        requested_at: None,
        answers: Default::default(),
        terms_accepted: false,
        expires_at: None,
        decided_by: None,
        decided_at: None,
        reason: None,
        rev: 1,
    };
    let notice = pk(notice_item(
        &catalog::notices::Notice::for_record(&record, Utc::now()).unwrap(),
    ));
    let digest = format!("{DIGEST_PREFIX}{DESK}");
    let account = pk(account_key(sub));
    let never = [
        pk(grant_key(sub, &record.dataset)),
        pk(api_key_key(
            catalog::keys::KeyHash::of(&generate_key()).as_str(),
        )),
        format!("IDEMPOTENCY#{sub}#{}", "a".repeat(64)),
        format!("CREATIONS#{sub}#2026-11-28"),
    ];
    let mut sends = 0;
    for statement in mailer["Policies"][0]["Statement"].as_sequence().unwrap() {
        let actions: Vec<&str> = statement["Action"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        if actions.contains(&"ses:SendEmail") {
            sends += 1;
            assert_eq!(actions, ["ses:SendEmail"]);
            assert_eq!(
                tag(
                    &statement["Condition"]["StringEquals"]["ses:FromAddress"],
                    "Ref"
                )
                .and_then(|v| v.as_str().map(str::to_owned)),
                Some("MailSender".to_owned())
            );
            continue;
        }
        if actions == ["dynamodb:Query"] {
            // The pending notices' index, and the id index (an organisation's memberships'
            // keys, for its admins): no other index, never the table itself.
            let indexes: Vec<String> = statement["Resource"]
                .as_sequence()
                .unwrap()
                .iter()
                .map(|r| tag(r, "Sub").unwrap().as_str().unwrap().to_owned())
                .collect();
            assert_eq!(
                indexes,
                [
                    format!("${{KeysTable.Arn}}/index/{NOTICES_INDEX}"),
                    "${KeysTable.Arn}/index/by-id".to_owned()
                ]
            );
            continue;
        }
        let patterns: Vec<&str> = statement["Condition"]["ForAllValues:StringLike"]
            ["dynamodb:LeadingKeys"]
            .as_sequence()
            .unwrap_or_else(|| panic!("every item statement is confined: {statement:?}"))
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let allows = |key: &str| patterns.iter().any(|p| iam_like(p, key));
        for other in &never {
            assert!(!allows(other), "{actions:?} reaches {other}");
        }
        let writes = actions
            .iter()
            .any(|a| *a == "dynamodb:UpdateItem" || *a == "dynamodb:DeleteItem");
        if writes {
            assert!(allows(&notice) && allows(&digest), "{actions:?}");
            assert!(!allows(&account), "{actions:?} writes an account item");
        } else if actions == ["dynamodb:BatchGetItem"] {
            // An organisation's admins: its memberships, and nothing else.
            assert_eq!(patterns, ["MEMBER#*"], "{actions:?}");
        } else {
            assert_eq!(actions, ["dynamodb:GetItem"]);
            assert!(allows(&digest) && allows(&account));
        }
    }
    assert_eq!(sends, 1);

    // The index the mailer queries, on the keys table: queue, then key_hash.
    let indexes = template["Resources"]["KeysTable"]["Properties"]["GlobalSecondaryIndexes"]
        .as_sequence()
        .unwrap();
    let by_notice = indexes
        .iter()
        .find(|i| i["IndexName"].as_str() == Some(NOTICES_INDEX))
        .expect("the by-notice index");
    let schema: Vec<(&str, &str)> = by_notice["KeySchema"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["AttributeName"].as_str().unwrap(),
                k["KeyType"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(schema, [(QUEUE, "HASH"), ("key_hash", "RANGE")]);
}

/// An organisation's admins are deciders of its datasets' requests: they are told, in the same
/// digests, unless they turned emails off; its members are not; a catalog dataset's requests
/// reach the operators alone.
#[tokio::test]
async fn an_organisations_admins_are_told_of_its_datasets_requests_unless_they_said_no() {
    let site = Site::start().await;
    let stack = &site.stack;
    verify_sender(stack).await;
    let acme_trials = "acme~trials";
    site.seed_as(acme_trials, AccessLevel::Approval, manual())
        .await;
    site.set_level(TRIALS, AccessLevel::Approval, manual())
        .await;
    let moto = stack.dynamo_url.clone();
    site.person("alice@example.org").await;
    let (_, bob) = site.person("bob@example.org").await;
    site.person("carol@example.org").await;
    site.admin_ok(&["orgs", "create", "acme", "--admin", "alice@example.org"]);
    site.admin_ok(&["orgs", "add", "acme", "bob@example.org", "--role", "admin"]);
    site.admin_ok(&[
        "orgs",
        "add",
        "acme",
        "carol@example.org",
        "--role",
        "editor",
    ]);
    let (status, body) = site
        .call(
            "PUT",
            "/account/preferences",
            &bob.access_token,
            &json!({"emails": false}).to_string(),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (_, ann) = site.person("ann@example.org").await;
    let start = Utc::now();

    let (status, body) = site
        .call(
            "POST",
            "/account/access",
            &ann.access_token,
            &json!({ "dataset": acme_trials }).to_string(),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let report = run(stack, &moto, start).await;
    assert_eq!(report.digests, 2, "the operators and alice: {report:?}");
    let mail = sent(stack).await;
    let mut told: Vec<String> = mail.iter().flat_map(|m| m.to.clone()).collect();
    told.sort();
    assert_eq!(told, [DESK, "alice@example.org"], "{mail:?}");
    let alice = to(&mail, "alice@example.org");
    assert_eq!(
        alice[0].subject,
        format!("Access request for {acme_trials}")
    );
    assert!(
        alice[0].body.contains(&format!("{SITE}/operators.html")),
        "{}",
        alice[0].body
    );

    // A catalog dataset's request: the operators alone.
    site.ask(&ann.access_token).await;
    let report = run(stack, &moto, start + Duration::minutes(20)).await;
    assert_eq!(report.digests, 1, "{report:?}");
    let mail = sent(stack).await;
    assert_eq!(to(&mail, DESK).len(), 2);
    assert_eq!(to(&mail, "alice@example.org").len(), 1);
}

/// An invitation is emailed to the address invited, recorded with it (one transaction) and sent
/// by the mailer: which organisation, as what, until when, and the account page to accept on;
/// no key or token. The invited person needs no account yet.
#[tokio::test]
async fn an_invitation_is_emailed_to_the_address_invited_without_a_secret() {
    let site = Site::start().await;
    let stack = &site.stack;
    verify_sender(stack).await;
    let moto = stack.dynamo_url.clone();
    let (_, alice) = site.person("alice@example.org").await;
    site.admin_ok(&["orgs", "create", "acme", "--admin", "alice@example.org"]);
    let (status, body) = site
        .call(
            "POST",
            "/orgs/acme/invitations",
            &alice.access_token,
            &json!({"email": "Dan@Example.org", "role": "editor"}).to_string(),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let report = run(stack, &moto, Utc::now()).await;
    assert_eq!((report.sent, report.failed), (1, 0), "{report:?}");
    let mail = sent(stack).await;
    assert_eq!(mail.len(), 1, "{mail:?}");
    assert_eq!(mail[0].to, ["dan@example.org"]);
    assert_eq!(mail[0].subject, "You are invited to join acme");
    assert!(mail[0].body.contains("as editor"), "{}", mail[0].body);
    assert!(
        mail[0].body.contains(&format!("{SITE}/account.html")),
        "{}",
        mail[0].body
    );
    for secret in [
        alice.access_token.as_str(),
        alice.id_token.as_str(),
        "dcat_",
    ] {
        assert!(!mail[0].body.contains(secret) && !mail[0].subject.contains(secret));
    }
    let report = run(stack, &moto, Utc::now()).await;
    assert_eq!(report.read, 0, "sent once: {report:?}");
}

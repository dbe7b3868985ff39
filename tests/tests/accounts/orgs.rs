//! Organisations through `catalog-admin orgs` and the access routes (moto's DynamoDB and
//! Cognito, s3s-fs): made and managed from the command line within their limits, and an
//! organisation's admins deciding its datasets' requests, and no other's.

use catalog::policy::{AccessLevel, ApprovalPolicy};
use catalog_tests::{manifest, samples_dir};

use super::access_requests::{code, TRIALS};
use super::*;

/// The approval dataset of the organisation `acme` the journeys ask for.
const ACME_TRIALS: &str = "acme~trials";
/// Its private one.
const ACME_LEDGER: &str = "acme~ledger";

impl Site {
    /// `catalog-admin` with these arguments: (exit code, stdout, stderr).
    fn admin_exit(&self, args: &[&str]) -> (Option<i32>, String, String) {
        let out = run_admin(self.admin().args(args));
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// The command fails as the operator's mistake (exit 2), saying `says`.
    fn admin_refused(&self, args: &[&str], says: &str) {
        let (status, out, err) = self.admin_exit(args);
        assert_eq!(status, Some(2), "catalog-admin {args:?}: {out} {err}");
        assert!(err.contains(says), "catalog-admin {args:?}: {err}");
    }

    /// A copy of the river-levels sample published as `slug`, at `level`.
    pub(super) async fn seed_as(&self, slug: &str, level: AccessLevel, policy: ApprovalPolicy) {
        self.seed_sample_as("river-levels", slug).await;
        self.set_level(slug, level, policy).await;
    }

    /// A sample published as (the next version of) `slug`.
    async fn seed_sample_as(&self, sample: &str, slug: &str) {
        let mut sample = manifest()
            .datasets
            .into_iter()
            .find(|d| d.slug.as_str() == sample)
            .expect("the sample");
        sample.slug = catalog::input::Slug::parse(slug).unwrap();
        sample.keyless_offset_hours = None;
        self.stack
            .seed_one(&samples_dir(), &sample, Utc::now())
            .await;
    }

    /// Sets an attribute of a keys-table item, as a long history would have left it.
    async fn set_count(&self, key_hash: &str, attribute: &str, value: u64) {
        self.stack
            .dynamo
            .update_item()
            .table_name(&self.stack.target.keys_table)
            .key(
                "key_hash",
                aws_sdk_dynamodb::types::AttributeValue::S(key_hash.into()),
            )
            .update_expression("SET #a = :v")
            .expression_attribute_names("#a", attribute)
            .expression_attribute_values(
                ":v",
                aws_sdk_dynamodb::types::AttributeValue::N(value.to_string()),
            )
            .send()
            .await
            .expect("UpdateItem");
    }
}

#[tokio::test]
async fn organisations_are_made_and_managed_from_the_command_line_within_their_limits() {
    let site = Site::start().await;
    let (alice, _) = site.person("alice@example.com").await;
    let (bob, _) = site.person("bob@example.com").await;
    let (carol, _) = site.person("carol@example.com").await;

    let said = site.admin_ok(&[
        "orgs",
        "create",
        "acme",
        "--admin",
        "alice@example.com",
        "--display-name",
        "Acme Labs",
    ]);
    assert!(
        said.contains("created acme") && said.contains(&alice),
        "{said}"
    );
    site.admin_refused(
        &["orgs", "create", "acme", "--admin", "bob@example.com"],
        "organisation 'acme' already exists",
    );
    site.admin_refused(
        &["orgs", "create", "Acme", "--admin", "bob@example.com"],
        "invalid organisation 'Acme'",
    );
    site.admin_refused(
        &["orgs", "create", "admin", "--admin", "bob@example.com"],
        "'admin' is a reserved name",
    );
    site.admin_refused(
        &["orgs", "add", "nobody-here", "bob@example.com"],
        "organisation 'nobody-here' does not exist",
    );
    site.admin_refused(
        &["orgs", "add", "acme", "bob@example.com", "--role", "owner"],
        "role must be member, editor or admin, got 'owner'",
    );

    site.admin_ok(&["orgs", "add", "acme", "bob@example.com", "--role", "editor"]);
    site.admin_refused(
        &["orgs", "add", "acme", "bob@example.com"],
        "is already a member of 'acme'",
    );
    // The last admin stays: neither removed nor demoted.
    site.admin_refused(
        &["orgs", "remove", "acme", "alice@example.com"],
        "'acme' must keep at least one admin",
    );
    site.admin_refused(
        &["orgs", "role", "acme", "alice@example.com", "member"],
        "'acme' must keep at least one admin",
    );
    site.admin_ok(&["orgs", "role", "acme", "bob@example.com", "admin"]);
    site.admin_ok(&["orgs", "role", "acme", "alice@example.com", "member"]);
    let members = site.admin_ok(&["orgs", "members", "acme"]);
    let line = |who: &str| {
        members
            .lines()
            .find(|l| l.contains(who))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(line(&alice).ends_with("\tmember"), "{members}");
    assert!(line(&bob).ends_with("\tadmin"), "{members}");
    assert!(line(&bob).starts_with("bob@example.com\t"), "{members}");
    let listed = site.admin_ok(&["orgs", "list"]);
    assert!(listed.contains("acme\t2 members\tAcme Labs"), "{listed}");
    site.admin_ok(&["orgs", "rename", "acme", "--display-name", "Acme Research"]);
    let listed = site.admin_ok(&["orgs", "list"]);
    assert!(
        listed.contains("acme\t2 members\tAcme Research"),
        "{listed}"
    );
    site.admin_refused(
        &["orgs", "rename", "nothing-here", "--display-name", "X"],
        "organisation 'nothing-here' does not exist",
    );
    site.admin_refused(
        &["orgs", "remove", "acme", "carol@example.com"],
        "is not a member of 'acme'",
    );

    // An organisation at its members' limit takes no one more.
    site.set_count("ORG#acme", "members", 500).await;
    site.admin_refused(
        &["orgs", "add", "acme", "carol@example.com"],
        "organisation 'acme' has 500 members, its limit",
    );
    site.set_count("ORG#acme", "members", 2).await;
    // An account in 20 organisations joins no more.
    site.set_count(&format!("ORGS#{carol}"), "members", 20)
        .await;
    site.admin_refused(
        &["orgs", "add", "acme", "carol@example.com"],
        "this account belongs to 20 organisations, the limit",
    );
    site.set_count(&format!("ORGS#{carol}"), "members", 1).await;
    site.admin_ok(&["orgs", "add", "acme", "carol@example.com"]);
    let said = site.admin_ok(&["orgs", "remove", "acme", "carol@example.com"]);
    assert!(said.contains("removed carol@example.com"), "{said}");
}

#[tokio::test]
async fn an_organisations_admins_decide_its_datasets_requests_and_no_others() {
    let site = Site::start().await;
    let gated = ApprovalPolicy::default();
    site.seed_as(ACME_TRIALS, AccessLevel::Approval, gated.clone())
        .await;
    site.seed_as(ACME_LEDGER, AccessLevel::Private, gated.clone())
        .await;
    site.set_level(TRIALS, AccessLevel::Approval, gated).await;
    let (_, alice) = site.person("alice@example.com").await;
    let (_, bob) = site.person("bob@example.com").await;
    let (carol_sub, carol, carol_key) = site.reader("carol@example.com").await;
    site.admin_ok(&["orgs", "create", "acme", "--admin", "alice@example.com"]);
    site.admin_ok(&["orgs", "add", "acme", "bob@example.com"]);

    // Carol asks for both approval datasets; asking for the private one is asking for nothing.
    for dataset in [ACME_TRIALS, TRIALS] {
        let ask = json!({"dataset": dataset}).to_string();
        let (status, body) = site
            .call("POST", "/account/access", &carol.access_token, &ask)
            .await;
        assert_eq!(status, 201, "{dataset}: {body}");
    }
    let (status, body) = site
        .call(
            "POST",
            "/account/access",
            &carol.access_token,
            &json!({"dataset": ACME_LEDGER}).to_string(),
        )
        .await;
    assert_eq!((status, code(&body)), (404, "not_found"), "{body}");
    let (status, nothing) = site
        .call(
            "POST",
            "/account/access",
            &carol.access_token,
            &json!({"dataset": "acme~nothing"}).to_string(),
        )
        .await;
    assert_eq!(
        (
            status,
            body["message"]
                .as_str()
                .map(|m| m.replace(ACME_LEDGER, "acme~nothing"))
        ),
        (404, nothing["message"].as_str().map(str::to_owned)),
        "a private dataset is asked for as one that does not exist"
    );

    // Alice, acme's admin, sees acme's requests only, and must say which organisation.
    let mut listed = Value::Null;
    for _ in 0..20 {
        let (status, body) = site
            .call("GET", "/operator/access?org=acme", &alice.access_token, "")
            .await;
        assert_eq!(status, 200, "{body}");
        listed = body;
        if listed["total"] == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(listed["total"], 1, "{listed}");
    assert_eq!(listed["access"][0]["dataset"], ACME_TRIALS, "{listed}");
    let (status, by_dataset) = site
        .call(
            "GET",
            &format!("/operator/access?dataset={ACME_TRIALS}"),
            &alice.access_token,
            "",
        )
        .await;
    assert_eq!(status, 200, "{by_dataset}");
    for path in [
        "/operator/access".to_owned(),
        format!("/operator/access?dataset={TRIALS}"),
        "/operator/access?org=beta".to_owned(),
    ] {
        let (status, body) = site.call("GET", &path, &alice.access_token, "").await;
        assert_eq!(
            (status, code(&body)),
            (403, "not_an_operator"),
            "{path}: {body}"
        );
    }
    let (status, body) = site
        .call(
            "GET",
            &format!("/operator/access?org=beta&dataset={ACME_TRIALS}"),
            &alice.access_token,
            "",
        )
        .await;
    assert_eq!((status, code(&body)), (400, "invalid_org"), "{body}");

    // Bob, a member, neither sees nor decides.
    let (status, body) = site
        .call("GET", "/operator/access?org=acme", &bob.access_token, "")
        .await;
    assert_eq!((status, code(&body)), (403, "not_an_operator"), "{body}");
    let approve = json!({"decision": "approve"}).to_string();
    let acme_path = format!("/operator/access/{ACME_TRIALS}/{carol_sub}");
    let (status, body) = site
        .call("POST", &acme_path, &bob.access_token, &approve)
        .await;
    assert_eq!((status, code(&body)), (403, "not_an_operator"), "{body}");
    assert_eq!(site.fetch(ACME_TRIALS, &carol_key).await, 403);

    // Alice decides acme's request, not the catalog's.
    let (status, body) = site
        .call(
            "POST",
            &format!("/operator/access/{TRIALS}/{carol_sub}"),
            &alice.access_token,
            &approve,
        )
        .await;
    assert_eq!((status, code(&body)), (403, "not_an_operator"), "{body}");
    let rev = listed["access"][0]["rev"]
        .as_u64()
        .expect("the request's revision");
    let (status, body) = site
        .call(
            "POST",
            &acme_path,
            &alice.access_token,
            &json!({"decision": "approve", "rev": rev}).to_string(),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["access"]["status"], "granted");
    assert_eq!(body["access"]["decided_by"], "alice@example.com");
    assert_eq!(site.fetch(ACME_TRIALS, &carol_key).await, 200);
    assert_eq!(site.fetch(TRIALS, &carol_key).await, 403);

    // Once no longer acme's admin, Alice decides nothing, from the next request.
    site.admin_ok(&["orgs", "role", "acme", "bob@example.com", "admin"]);
    site.admin_ok(&["orgs", "remove", "acme", "alice@example.com"]);
    let revoke = json!({"decision": "revoke"}).to_string();
    let (status, body) = site
        .call("POST", &acme_path, &alice.access_token, &revoke)
        .await;
    assert_eq!((status, code(&body)), (403, "not_an_operator"), "{body}");
    let (status, body) = site
        .call("POST", &acme_path, &bob.access_token, &revoke)
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(site.fetch(ACME_TRIALS, &carol_key).await, 403);
}

/// Waits until the caller's organisations (the owner index, a moment behind) show `count`.
async fn my_orgs(site: &Site, token: &str, count: usize) -> Value {
    let mut last = Value::Null;
    for _ in 0..20 {
        let (status, body) = site.call("GET", "/account/orgs", token, "").await;
        assert_eq!(status, 200, "{body}");
        if body["orgs"].as_array().map(Vec::len) == Some(count) {
            return body;
        }
        last = body;
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("expected {count} organisations: {last}");
}

#[tokio::test]
async fn an_organisation_is_managed_on_its_routes_by_its_admins_and_the_operators() {
    let site = Site::start().await;
    let olga = site.operator("olga@example.com").await;
    let (alice_sub, alice) = site.person("alice@example.com").await;
    let (bob_sub, bob) = site.person("bob@example.com").await;
    let (_, carol) = site.person("carol@example.com").await;
    let (olga, alice, bob, carol) = (
        olga.access_token.as_str(),
        alice.access_token.as_str(),
        bob.access_token.as_str(),
        carol.access_token.as_str(),
    );

    // Operators create organisations; nobody else does.
    let create = json!({"name": "acme", "display_name": "Acme Labs"}).to_string();
    let (status, body) = site.call("POST", "/orgs", alice, &create).await;
    assert_eq!((status, code(&body)), (403, "not_an_operator"), "{body}");
    let (status, body) = site.call("POST", "/orgs", olga, &create).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["org"]["display_name"], "Acme Labs");
    let (status, body) = site.call("POST", "/orgs", olga, &create).await;
    assert_eq!((status, code(&body)), (409, "org_exists"), "{body}");
    for (bad, expected) in [
        (json!({"name": "Acme"}), "invalid_org"),
        (json!({"name": "api"}), "invalid_org"),
        (
            json!({"name": "beta", "display_name": ""}),
            "invalid_display_name",
        ),
        (json!({"name": "beta", "owner": "x"}), "bad_request"),
    ] {
        let (status, body) = site.call("POST", "/orgs", olga, &bad.to_string()).await;
        assert_eq!((status, code(&body)), (400, expected), "{bad}: {body}");
    }
    let (status, listed) = site.call("GET", "/orgs", olga, "").await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["orgs"][0]["name"], "acme", "{listed}");

    // The operator invites Alice as an admin; only Alice's verified address sees and accepts it.
    let invite = json!({"email": " Alice@Example.com ", "role": "admin"}).to_string();
    let (status, invited) = site
        .call("POST", "/orgs/acme/invitations", olga, &invite)
        .await;
    assert_eq!(status, 201, "{invited}");
    assert_eq!(invited["invitation"]["email"], "alice@example.com");
    let (_, none) = site.call("GET", "/account/invitations", bob, "").await;
    assert_eq!(none["invitations"], json!([]), "{none}");
    let (status, body) = site
        .call("POST", "/account/invitations/acme", bob, "")
        .await;
    assert_eq!(
        (status, code(&body)),
        (404, "invitation_not_found"),
        "{body}"
    );
    let (_, mine) = site.call("GET", "/account/invitations", alice, "").await;
    assert_eq!(mine["invitations"][0]["org"], "acme", "{mine}");
    assert_eq!(mine["invitations"][0]["role"], "admin", "{mine}");
    let (status, joined) = site
        .call("POST", "/account/invitations/acme", alice, "")
        .await;
    assert_eq!(status, 201, "{joined}");
    assert_eq!(joined["membership"]["role"], "admin");
    let (status, body) = site
        .call("POST", "/account/invitations/acme", alice, "")
        .await;
    assert_eq!(
        (status, code(&body)),
        (404, "invitation_not_found"),
        "{body}"
    );
    let orgs = my_orgs(&site, alice, 1).await;
    assert_eq!(orgs["orgs"][0]["org"], "acme", "{orgs}");

    // Alice invites Bob; an address that is a member's already is refused.
    let (status, body) = site
        .call(
            "POST",
            "/orgs/acme/invitations",
            alice,
            &json!({"email": "bob@example.com"}).to_string(),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["invitation"]["role"], "member");
    let (status, body) = site
        .call(
            "POST",
            "/orgs/acme/invitations",
            alice,
            &json!({"email": "ALICE@example.com"}).to_string(),
        )
        .await;
    assert_eq!((status, code(&body)), (409, "already_member"), "{body}");
    for bad in [
        json!({"email": "not-an-address"}),
        json!({"email": "x@y.z", "role": "owner"}),
    ] {
        let (status, body) = site
            .call("POST", "/orgs/acme/invitations", alice, &bad.to_string())
            .await;
        assert_eq!(status, 400, "{bad}: {body}");
    }
    let (status, _) = site
        .call("POST", "/account/invitations/acme", bob, "")
        .await;
    assert_eq!(status, 201);

    // Bob, a member, sees the organisation and its members, not its invitations, and manages
    // nothing.
    let (status, page) = site.call("GET", "/orgs/acme", bob, "").await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(page["role"], "member");
    assert_eq!(page["members"].as_array().map(Vec::len), Some(3), "{page}");
    assert!(page.get("invitations").is_none(), "{page}");
    let (status, body) = site
        .call(
            "POST",
            "/orgs/acme/invitations",
            bob,
            &json!({"email": "carol@example.com"}).to_string(),
        )
        .await;
    assert_eq!((status, code(&body)), (403, "not_an_admin"), "{body}");
    let alice_path = format!("/orgs/acme/members/{alice_sub}");
    let bob_path = format!("/orgs/acme/members/{bob_sub}");
    let (status, body) = site
        .call(
            "PUT",
            &alice_path,
            bob,
            &json!({"role": "member"}).to_string(),
        )
        .await;
    assert_eq!((status, code(&body)), (403, "not_an_admin"), "{body}");

    // Its settings: the display name, an admin's (a member is refused, a blank name too).
    let (status, body) = site
        .call(
            "PATCH",
            "/orgs/acme",
            bob,
            &json!({"display_name": "Bob's"}).to_string(),
        )
        .await;
    assert_eq!((status, code(&body)), (403, "not_an_admin"), "{body}");
    let (status, body) = site
        .call(
            "PATCH",
            "/orgs/acme",
            alice,
            &json!({"display_name": " Acme Research "}).to_string(),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["org"]["display_name"], "Acme Research");
    for (bad, expected) in [
        (json!({"display_name": " "}), (400, "invalid_display_name")),
        (json!({"name": "other"}), (400, "bad_request")),
    ] {
        let (status, body) = site
            .call("PATCH", "/orgs/acme", alice, &bad.to_string())
            .await;
        assert_eq!((status, code(&body)), expected, "{bad}: {body}");
    }

    // Carol, a stranger, cannot tell the organisation from one that does not exist.
    let (status, acme) = site.call("GET", "/orgs/acme", carol, "").await;
    let (_, nothing) = site.call("GET", "/orgs/nothing-here", carol, "").await;
    assert_eq!((status, code(&acme)), (404, "not_found"), "{acme}");
    assert_eq!(
        acme["error"]
            .as_str()
            .map(|m| m.replace("acme", "nothing-here")),
        nothing["error"].as_str().map(str::to_owned)
    );

    // Alice makes Bob an editor; the page shows her the open invitations.
    let (status, body) = site
        .call(
            "PUT",
            &bob_path,
            alice,
            &json!({"role": "editor"}).to_string(),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["membership"]["role"], "editor");
    let (status, body) = site
        .call(
            "PUT",
            &bob_path,
            alice,
            &json!({"role": "owner"}).to_string(),
        )
        .await;
    assert_eq!((status, code(&body)), (400, "invalid_role"), "{body}");
    let (status, body) = site
        .call(
            "POST",
            "/orgs/acme/invitations",
            alice,
            &json!({"email": "carol@example.com"}).to_string(),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let carol_invitation = body["invitation"]["id"].as_str().unwrap().to_owned();
    let (_, page) = site.call("GET", "/orgs/acme", alice, "").await;
    assert_eq!(
        page["invitations"][0]["email"], "carol@example.com",
        "{page}"
    );
    let (status, _) = site
        .call(
            "DELETE",
            &format!("/orgs/acme/invitations/{carol_invitation}"),
            alice,
            "",
        )
        .await;
    assert_eq!(status, 204);
    let (_, none) = site.call("GET", "/account/invitations", carol, "").await;
    assert_eq!(none["invitations"], json!([]), "{none}");

    // Bob leaves; the operator leaves; the last admin cannot.
    let (status, _) = site.call("DELETE", &bob_path, bob, "").await;
    assert_eq!(status, 204);
    let (status, _) = site.call("GET", "/orgs/acme", bob, "").await;
    assert_eq!(status, 404);
    let (status, page) = site.call("GET", "/orgs/acme", olga, "").await;
    assert_eq!(status, 200, "{page}");
    let olga_sub = page["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["email"] == "olga@example.com")
        .map(|m| m["account"].as_str().unwrap().to_owned())
        .expect("the operator, the organisation's first admin");
    let (status, _) = site
        .call(
            "DELETE",
            &format!("/orgs/acme/members/{olga_sub}"),
            olga,
            "",
        )
        .await;
    assert_eq!(status, 204);
    let (status, body) = site.call("DELETE", &alice_path, alice, "").await;
    assert_eq!((status, code(&body)), (409, "last_admin"), "{body}");

    // A method a route does not take.
    let (status, body) = site.call("GET", "/orgs/acme/invitations", alice, "").await;
    assert_eq!((status, code(&body)), (405, "method_not_allowed"), "{body}");
}

#[tokio::test]
async fn an_organisations_editors_describe_and_roll_back_its_datasets_and_its_members_read_the_history(
) {
    let site = Site::start().await;
    // GIVEN acme~ledger, private, version 1 the river-levels sample, version 2 the air
    // quality one (other columns, other rows).
    site.seed_sample_as("river-levels", ACME_LEDGER).await;
    site.seed_sample_as("air-quality-hourly", ACME_LEDGER).await;
    site.set_level(ACME_LEDGER, AccessLevel::Private, ApprovalPolicy::default())
        .await;
    let operator_key = "dcat_editor_operator_00000000000000000000000000000000000000000000";
    site.stack
        .add_key(operator_key, &["read"], Utc::now(), None)
        .await;
    let (_, alice) = site.person("alice@example.com").await;
    let (_, bob) = site.person("bob@example.com").await;
    let (_, carol) = site.person("carol@example.com").await;
    let (_, dave) = site.person("dave@example.com").await;
    let (_, eve) = site.person("eve@example.com").await;
    site.admin_ok(&["orgs", "create", "acme", "--admin", "alice@example.com"]);
    site.admin_ok(&["orgs", "add", "acme", "bob@example.com", "--role", "editor"]);
    site.admin_ok(&["orgs", "add", "acme", "carol@example.com"]);
    site.admin_ok(&["orgs", "create", "beta", "--admin", "eve@example.com"]);
    let (bob, carol, dave, eve) = (
        bob.access_token.as_str(),
        carol.access_token.as_str(),
        dave.access_token.as_str(),
        eve.access_token.as_str(),
    );
    let _ = alice;

    // A member lists the organisation's datasets, the private one included; strangers and
    // another organisation's admin get the 404 of a name that names nothing.
    let (status, listed) = site.call("GET", "/orgs/acme/datasets", carol, "").await;
    assert_eq!(status, 200, "{listed}");
    let entry = listed["datasets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["slug"] == ACME_LEDGER)
        .cloned()
        .expect("the private dataset is listed to a member");
    assert_eq!(entry["access_level"], "private");
    for stranger in [dave, eve] {
        for (method, path, body) in [
            ("GET", "/orgs/acme/datasets", ""),
            ("GET", "/orgs/acme/datasets/ledger/versions", ""),
            ("PUT", "/orgs/acme/datasets/ledger", r#"{"name": "x"}"#),
            ("POST", "/orgs/acme/datasets/ledger/versions/1/activate", ""),
        ] {
            let (status, body) = site.call(method, path, stranger, body).await;
            assert_eq!(
                (status, code(&body)),
                (404, "not_found"),
                "{method} {path}: {body}"
            );
        }
    }

    // The history and what changed from one version to the next.
    let (status, history) = site
        .call("GET", "/orgs/acme/datasets/ledger/versions", carol, "")
        .await;
    assert_eq!(status, 200, "{history}");
    let versions = history["versions"].as_array().unwrap();
    assert_eq!(versions.len(), 2, "{history}");
    assert_eq!(
        (
            versions[0]["version"].as_u64(),
            versions[0]["active"].as_bool()
        ),
        (Some(1), Some(false))
    );
    assert_eq!(
        (
            versions[1]["version"].as_u64(),
            versions[1]["active"].as_bool()
        ),
        (Some(2), Some(true))
    );
    assert_eq!(versions[0]["row_count"], 500);
    assert_eq!(versions[0]["columns"][0]["name"], "gauge");
    assert!(versions[0]["columns"][0]["dtype"].is_string());
    let (status, changes) = site
        .call(
            "GET",
            "/orgs/acme/datasets/ledger/diff?from=1&to=2",
            carol,
            "",
        )
        .await;
    assert_eq!(status, 200, "{changes}");
    assert_eq!(
        (changes["rows_from"].as_u64(), changes["rows_to"].as_u64()),
        (Some(500), Some(720))
    );
    assert_eq!(changes["rows_change"], 220);
    let names = |list: &Value| -> Vec<String> {
        list.as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(
        names(&changes["columns_added"]).contains(&"station_id".to_owned()),
        "{changes}"
    );
    assert!(
        names(&changes["columns_removed"]).contains(&"gauge".to_owned()),
        "{changes}"
    );
    for (path, expected) in [
        (
            "/orgs/acme/datasets/ledger/diff?from=1&to=9",
            (404, "version_not_found"),
        ),
        (
            "/orgs/acme/datasets/ledger/diff?from=one&to=2",
            (400, "bad_request"),
        ),
        ("/orgs/acme/datasets/ledger/diff?to=2", (400, "bad_request")),
        ("/orgs/acme/datasets/nothing/versions", (404, "not_found")),
    ] {
        let (status, body) = site.call("GET", path, carol, "").await;
        assert_eq!((status, code(&body)), expected, "{path}: {body}");
    }

    // A member neither describes nor rolls back.
    let (status, body) = site
        .call(
            "PUT",
            "/orgs/acme/datasets/ledger",
            carol,
            r#"{"description": "x"}"#,
        )
        .await;
    assert_eq!((status, code(&body)), (403, "not_an_editor"), "{body}");
    let (status, body) = site
        .call(
            "POST",
            "/orgs/acme/datasets/ledger/versions/1/activate",
            carol,
            "",
        )
        .await;
    assert_eq!((status, code(&body)), (403, "not_an_editor"), "{body}");

    // The editor describes it: the metadata shows it to a key that may read it, and it stays
    // private and out of the public list.
    let edit = json!({"description": "Edited from the site", "tags": ["ledger", "money"], "readme": "# The ledger"});
    let (status, body) = site
        .call("PUT", "/orgs/acme/datasets/ledger", bob, &edit.to_string())
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, _, bytes) = catalog_tests::http_request(
        "GET",
        &format!("{}/datasets/{ACME_LEDGER}", site.base),
        &[("x-api-key", operator_key)],
    )
    .await;
    let shown: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(status, 200, "{shown}");
    assert_eq!(shown["description"], "Edited from the site");
    assert_eq!(shown["tags"], json!(["ledger", "money"]));
    assert_eq!(shown["readme"], "# The ledger");
    assert_eq!(shown["access"]["level"], "private", "{shown}");
    let (_, _, bytes) =
        catalog_tests::http_request("GET", &format!("{}/datasets?q=ledger", site.base), &[]).await;
    let public: Value = serde_json::from_slice(&bytes).unwrap();
    assert!(
        !public.to_string().contains(ACME_LEDGER),
        "a private dataset described is still in no public list: {public}"
    );
    for (bad, what) in [
        (r#"{"name": "  "}"#, "a blank name"),
        (
            r#"{"access_level": "registered"}"#,
            "a field editors do not set",
        ),
        (r#"not json"#, "not JSON"),
    ] {
        let (status, body) = site
            .call("PUT", "/orgs/acme/datasets/ledger", bob, bad)
            .await;
        assert_eq!(
            (status, code(&body)),
            (400, "invalid_edit"),
            "{what}: {body}"
        );
    }
    let (status, body) = site
        .call(
            "PUT",
            "/orgs/acme/datasets/nothing",
            bob,
            r#"{"name": "x"}"#,
        )
        .await;
    assert_eq!((status, code(&body)), (404, "not_found"), "{body}");

    // The editor rolls back to version 1: the data route serves it at once.
    let (status, body) = site
        .call(
            "POST",
            "/orgs/acme/datasets/ledger/versions/1/activate",
            bob,
            "",
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let (status, _, bytes) = catalog_tests::http_request(
        "GET",
        &format!("{}/datasets/{ACME_LEDGER}/data", site.base),
        &[("x-api-key", operator_key)],
    )
    .await;
    let served: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(
        (status, served["version"].as_u64()),
        (200, Some(1)),
        "{served}"
    );
    let (status, body) = site
        .call(
            "POST",
            "/orgs/acme/datasets/ledger/versions/9/activate",
            bob,
            "",
        )
        .await;
    assert_eq!((status, code(&body)), (404, "version_not_found"), "{body}");
    let (status, body) = site
        .call(
            "GET",
            "/orgs/acme/datasets/ledger/versions/1/activate",
            bob,
            "",
        )
        .await;
    assert_eq!((status, code(&body)), (405, "method_not_allowed"), "{body}");
}

//! Accounts the user pool no longer holds, and operators who lost their standing: a person
//! deleted from Cognito keeps a valid-looking access token (until it expires) and the keys and
//! grants they made, which the keys table still holds under their `sub`. The token mints no new
//! key; operators find such accounts (`accounts orphans`) and reach them by id.

use super::access_requests::{automatic, code, TRIALS};
use super::*;
use catalog::policy::AccessLevel;

impl Site {
    /// `catalog-admin` with these arguments: (exit code, stdout, stderr).
    fn admin_run(&self, args: &[&str]) -> (Option<i32>, String, String) {
        let out = run_admin(self.admin().args(args));
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Deletes the user from the pool, as an operator in the console (AdminDeleteUser) or the
    /// person themselves (DeleteUser, which moto 5.2.5 does not emulate) would.
    async fn delete_user(&self, email: &str) {
        self.stack
            .cognito()
            .admin_delete_user()
            .user_pool_id(&self.pool.pool_id)
            .username(email)
            .send()
            .await
            .expect("AdminDeleteUser");
    }
}

/// The line `accounts orphans` prints for this account, if any.
fn orphan_line<'a>(listed: &'a str, sub: &str) -> Option<&'a str> {
    listed.lines().find(|l| l.starts_with(sub))
}

#[tokio::test]
async fn an_account_deleted_from_the_user_pool_mints_no_key_and_operators_reach_its_keys_and_grants_by_id(
) {
    let site = Site::start().await;
    site.set_level(TRIALS, AccessLevel::Approval, automatic())
        .await;
    // GIVEN a person with a key and a grant
    let (sub, tokens, key) = site.reader("ada@example.com").await;
    let token = &tokens.access_token;
    let (status, asked) = site
        .call(
            "POST",
            "/account/access",
            token,
            &json!({ "dataset": TRIALS }).to_string(),
        )
        .await;
    assert_eq!(status, 201, "{asked}");
    assert_eq!(site.fetch(TRIALS, &key).await, 200);
    let (_, listed, _) = site.admin_run(&["accounts", "orphans"]);
    assert!(orphan_line(&listed, &sub).is_none(), "{listed}");

    // WHEN the user is deleted from the pool
    site.delete_user("ada@example.com").await;

    // THEN the token the authorizer still accepts mints nothing: 401 account_unknown
    let (status, headers, body) = site
        .call_raw(
            "POST",
            "/account/keys",
            token,
            &json!({ "label": "after" }).to_string(),
        )
        .await;
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!((status, code(&body)), (401, "account_unknown"), "{body}");
    assert!(
        headers["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("error=\"invalid_token\""),
        "{headers:?}"
    );
    // (listing what it holds still works until the token expires: it creates nothing)
    let (status, mine) = site.call("GET", "/account/keys", token, "").await;
    assert_eq!((status, mine["total"].as_u64()), (200, Some(1)), "{mine}");
    // but the key made before works on, until an operator acts
    assert_eq!(site.fetch(TRIALS, &key).await, 200);

    // The email no longer names anyone...
    let (exit, _, stderr) = site.admin_run(&["accounts", "disable", "ada@example.com"]);
    assert_eq!(exit, Some(2), "{stderr}");
    assert!(stderr.contains("no account with the email"), "{stderr}");
    // ...its id does
    let (exit, shown, stderr) = site.admin_run(&["accounts", "show", &sub]);
    assert_eq!(exit, Some(0), "{stderr}");
    assert!(
        shown.contains("not in the user pool (deleted)") && shown.contains("active"),
        "{shown}"
    );
    // and `accounts orphans` finds it, with its last known email, key and grant
    let listed = site.admin_ok(&["accounts", "orphans"]);
    let line = orphan_line(&listed, &sub).unwrap_or_else(|| panic!("{listed}"));
    let fields: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(fields, [sub.as_str(), "ada@example.com", "1", "1", "no"]);
    assert!(
        listed.contains("1 account(s) no longer in the user pool"),
        "{listed}"
    );

    // The grant is revoked by id
    let said = site.admin_ok(&["access", "revoke", TRIALS, &sub]);
    assert!(said.contains("revoked"), "{said}");
    assert_eq!(site.fetch(TRIALS, &key).await, 403);
    // (a deleted account cannot be granted access again)
    let (exit, _, stderr) = site.admin_run(&["access", "grant", TRIALS, &sub]);
    assert_eq!(exit, Some(2), "{stderr}");
    assert!(stderr.contains("no longer in the user pool"), "{stderr}");

    // A new account with the same email is another account, and no orphan
    let (new_sub, new_tokens) = site.person("ada@example.com").await;
    assert_ne!(new_sub, sub);
    assert_eq!(site.create(&new_tokens.access_token, "new").await.0, 201);

    // `--disable` revokes the orphan's keys, and leaves the new account alone
    let said = site.admin_ok(&["accounts", "orphans", "--disable"]);
    assert!(
        said.contains(&format!("disabled {sub}: 1 key(s) revoked")),
        "{said}"
    );
    assert!(orphan_line(&said, &new_sub).is_none(), "{said}");
    assert_eq!(site.fetch(TRIALS, &key).await, 401, "the orphan's key");
    let (status, mine) = site
        .call("GET", "/account/keys", &new_tokens.access_token, "")
        .await;
    assert_eq!((status, mine["active"].as_u64()), (200, Some(1)), "{mine}");
    let listed = site.admin_ok(&["accounts", "orphans"]);
    let line = orphan_line(&listed, &sub).unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(
        line.split_whitespace().collect::<Vec<_>>(),
        [sub.as_str(), "ada@example.com", "0", "0", "yes"]
    );
}

#[tokio::test]
async fn disable_by_id_reaches_an_account_deleted_from_the_user_pool() {
    let site = Site::start().await;
    let (sub, _, key) = site.reader("bo@example.com").await;
    site.delete_user("bo@example.com").await;
    assert_eq!(site.download(GATED, &key).await.0, 200);
    let said = site.admin_ok(&["accounts", "disable", &sub]);
    assert!(
        said.contains("not in the user pool (deleted)") && said.contains("1 key(s) revoked"),
        "{said}"
    );
    assert_eq!(site.download(GATED, &key).await.0, 401);
    // Commands that need the user in the pool say why they cannot run
    let (exit, _, stderr) = site.admin_run(&["accounts", "enable", &sub]);
    assert_eq!(exit, Some(2), "{stderr}");
    assert!(stderr.contains("no longer in the user pool"), "{stderr}");
    let (exit, _, stderr) = site.admin_run(&["accounts", "show", "not a sub"]);
    assert_eq!(exit, Some(2), "{stderr}");
    assert!(
        stderr.contains("neither an email nor an account id"),
        "{stderr}"
    );
}

#[tokio::test]
async fn a_disabled_operator_sees_and_decides_nothing_from_the_next_request() {
    let site = Site::start().await;
    site.set_level(
        TRIALS,
        AccessLevel::Approval,
        super::access_requests::form(),
    )
    .await;
    let (sub, tokens, _) = site.reader("cy@example.com").await;
    let ask = json!({"dataset": TRIALS, "answers": {"affiliation": "Uni"}, "accept_terms": true})
        .to_string();
    assert_eq!(
        site.call("POST", "/account/access", &tokens.access_token, &ask)
            .await
            .0,
        201
    );
    let ops = site.operator("olga@example.com").await;
    let (status, listed) = site
        .call("GET", "/operator/access", &ops.access_token, "")
        .await;
    assert_eq!(status, 200, "{listed}");
    // WHEN the operator's account is disabled, its token (valid for up to 15 minutes) still
    // passes the authorizer
    site.admin_ok(&["accounts", "disable", "olga@example.com"]);
    // THEN the operators' routes refuse it at once
    let (status, refused) = site
        .call("GET", "/operator/access", &ops.access_token, "")
        .await;
    assert_eq!(
        (status, code(&refused)),
        (403, "account_disabled"),
        "{refused}"
    );
    let (status, refused) = site
        .call(
            "POST",
            &format!("/operator/access/{TRIALS}/{sub}"),
            &ops.access_token,
            &json!({"decision": "approve", "rev": 1}).to_string(),
        )
        .await;
    assert_eq!(
        (status, code(&refused)),
        (403, "account_disabled"),
        "{refused}"
    );
    site.own_record(&tokens.access_token, TRIALS, "pending")
        .await;
}

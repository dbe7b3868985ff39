//! Who may call the account routes: every bad token refused as API Gateway's JWT authorizer
//! refuses it (minted with moto's own signing key), and a disabled account.

use super::*;

/// A token signed with moto's own key (from its package), with these claims.
fn mint(claims: &Value) -> String {
    let script = r#"
import gzip, json, sys, pathlib, moto
from joserfc import jwt, jwk
raw = (pathlib.Path(moto.__file__).parent / "cognitoidp/resources/jwks-private.json.gz").read_bytes()
key = jwk.RSAKey.import_key(json.loads(gzip.decompress(raw)))
print(jwt.encode({"alg": "RS256", "kid": "dummy"}, json.loads(sys.argv[1]), key))
"#;
    let out = Command::new(tool("PYTHON", ".venv/bin/python"))
        .args(["-c", script, &claims.to_string()])
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[tokio::test]
async fn every_bad_token_is_refused_as_api_gateway_refuses_it() {
    let site = Site::start().await;
    let (sub, tokens) = site.person("ada@example.com").await;
    let now = Utc::now().timestamp();
    let issuer = format!(
        "https://cognito-idp.us-east-1.amazonaws.com/{}",
        site.pool.pool_id
    );
    let claims = |changes: Value| {
        let mut c = json!({
            "iss": issuer, "sub": sub, "client_id": site.pool.client_id,
            "token_use": "access", "iat": now, "exp": now + 600,
        });
        for (k, v) in changes.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    };
    // A token minted here with the pool's key and the right claims passes: the checks below
    // fail for the one claim each changes.
    let good = mint(&claims(json!({})));
    assert_eq!(site.call("GET", "/account/keys", &good, "").await.0, 200);

    let (status, headers, body) = site.call_raw("GET", "/account/keys", "", "").await;
    assert_eq!(status, 401);
    assert_eq!(headers["www-authenticate"], "Bearer");
    assert_eq!(&body[..], br#"{"message":"Unauthorized"}"#);

    let mut tampered = tokens.access_token.clone();
    let payload_start = tampered.find('.').unwrap() + 1;
    let flipped = if &tampered[payload_start + 5..payload_start + 6] == "A" {
        "B"
    } else {
        "A"
    };
    tampered.replace_range(payload_start + 5..payload_start + 6, flipped);
    let cases = [
        ("garbage", "not-a-jwt".to_owned(), "the token is invalid"),
        ("tampered", tampered, "the token's signature is invalid"),
        (
            "expired",
            mint(&claims(json!({"exp": now - 5}))),
            "the token has expired",
        ),
        (
            "wrong audience",
            mint(&claims(json!({"client_id": "someone-elses-client"}))),
            "the token does not have a valid audience",
        ),
        (
            "wrong issuer",
            mint(&claims(
                json!({"iss": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_other"}),
            )),
            "the token does not have a valid issuer",
        ),
        (
            "not yet valid",
            mint(&claims(json!({"nbf": now + 600}))),
            "the token is not valid yet",
        ),
    ];
    for (what, token, description) in cases {
        for (method, path) in [
            ("GET", "/account/keys"),
            ("POST", "/account/keys"),
            ("DELETE", "/account/keys/key_0000000000000000"),
        ] {
            let (status, headers, body) = site
                .call_raw(method, path, &token, "{\"label\":\"x\"}")
                .await;
            assert_eq!(status, 401, "{what} {method}");
            assert_eq!(
                headers["www-authenticate"],
                format!(
                    "Bearer scope=\"\" error=\"invalid_token\" error_description=\"{description}\""
                )
                .as_str(),
                "{what}"
            );
            assert_eq!(&body[..], br#"{"message":"Unauthorized"}"#, "{what}");
        }
    }

    // An ID token passes the authorizer (its `aud` is the client) but opens nothing: the
    // handler takes access tokens only.
    let (status, headers, body) = site
        .call_raw("GET", "/account/keys", &tokens.id_token, "")
        .await;
    assert_eq!(status, 401);
    let error: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(error["code"], "invalid_token");
    assert!(headers["www-authenticate"]
        .to_str()
        .unwrap()
        .contains("error=\"invalid_token\""));
    // Nothing was created by any of these.
    let (_, listed) = site
        .call("GET", "/account/keys", &tokens.access_token, "")
        .await;
    assert_eq!(listed["keys"], json!([]));
}

#[tokio::test]
async fn a_disabled_account_loses_its_keys_and_its_sign_in() {
    let site = Site::start().await;
    let (sub, tokens) = site.person("eve@example.com").await;
    let (_, created) = site.create(&tokens.access_token, "eve's").await;
    let secret = created["secret"].as_str().unwrap().to_owned();
    assert_eq!(site.download(GATED, &secret).await.0, 200);

    let env = || {
        let mut cmd = admin_command();
        cmd.envs(site.stack.function_env())
            .env("USER_POOL_ID", &site.pool.pool_id)
            .env(
                "AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER",
                &site.stack.dynamo_url,
            );
        cmd
    };
    let out = run_admin(env().args(["accounts", "disable", "eve@example.com"]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&sub) && said.contains("1 key(s) revoked"),
        "{said}"
    );

    assert_eq!(
        site.download(GATED, &secret).await.0,
        401,
        "its keys are revoked"
    );
    let cognito = site.stack.cognito();
    assert!(
        sign_in(&cognito, &site.pool, "eve@example.com", PASSWORD)
            .await
            .is_err(),
        "sign-in is blocked"
    );
    // An access token issued before stays valid until it expires; it mints nothing.
    let (status, error) = site.create(&tokens.access_token, "after").await;
    assert_eq!(
        (status, error["code"].as_str()),
        (403, Some("account_disabled")),
        "{error}"
    );

    let out = run_admin(env().args(["accounts", "show", "eve@example.com"]));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("enabled   false") && shown.contains("revoked"),
        "{shown}"
    );
    // An email typed in capitals names the same account (its id, its keys): the CLI lowercases
    // what is typed.
    let capitals = run_admin(env().args(["accounts", "show", "Eve@Example.COM"]));
    let account = |text: &str| text.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(
        account(&String::from_utf8_lossy(&capitals.stdout)),
        account(&shown),
        "the CLI lowercases what is typed"
    );

    let out = run_admin(env().args(["accounts", "enable", "eve@example.com"]));
    assert!(out.status.success());
    let tokens = sign_in(&cognito, &site.pool, "eve@example.com", PASSWORD)
        .await
        .expect("sign-in works again");
    assert_eq!(
        site.download(GATED, &secret).await.0,
        401,
        "revoked keys stay revoked"
    );
    assert_eq!(site.create(&tokens.access_token, "new").await.0, 201);

    let out = run_admin(env().args(["accounts", "disable", "nobody@example.com"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("no account with the email nobody@example.com"));
}

#[tokio::test]
async fn disabling_an_account_never_reports_success_while_an_active_key_was_not_revoked() {
    // GIVEN an account with a key, and a second active key on the account's item that the
    // owner index does not show (as while the index lags behind a creation)
    let site = Site::start().await;
    let (sub, tokens) = site.person("mallory@example.com").await;
    let (_, created) = site.create(&tokens.access_token, "mallory's").await;
    let secret = created["secret"].as_str().unwrap().to_owned();
    let unseen = "key_00000000deadbeef";
    site.stack
        .dynamo
        .update_item()
        .table_name(&site.stack.target.keys_table)
        .set_key(Some(catalog_aws::dynamo::layout::account_key(&sub)))
        .update_expression(format!(
            "ADD {} :slot",
            catalog_aws::dynamo::layout::name::ACTIVE_KEYS
        ))
        .expression_attribute_values(
            ":slot",
            aws_sdk_dynamodb::types::AttributeValue::Ss(vec![format!("{}/{unseen}", i64::MAX)]),
        )
        .send()
        .await
        .expect("add a slot");
    // WHEN an operator disables the account
    let mut cmd = admin_command();
    cmd.envs(site.stack.function_env())
        .env("USER_POOL_ID", &site.pool.pool_id)
        .env(
            "AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER",
            &site.stack.dynamo_url,
        )
        .args(["accounts", "disable", "mallory@example.com"]);
    let out = run_admin(&mut cmd);
    // THEN the command fails, naming the key it could not revoke, and says no success
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(unseen), "{stderr}");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("disabled"),
        "no success line"
    );
    // AND the key it could resolve is revoked all the same
    assert_eq!(site.download(GATED, &secret).await.0, 401);
}

//! The account routes (the keys function), measured on their own table after the API cases.

use catalog_http::testing::V2Event;
use catalog_tests::{json_body, Stack, Wire};
use chrono::Utc;

/// The account routes' DynamoDB requests, through the keys function's handler and store: one
/// account creates three keys, lists them, and revokes one twice. Prints their table and a note
/// on revoking; returns how many requests missed their target.
pub(super) async fn measure(stack: &Stack) -> Result<usize, String> {
    let wire = Wire::default();
    let accounts = catalog_aws::dynamo::accounts::DynamoAccounts::new(
        stack.dynamo_client(&wire),
        &stack.target.keys_table,
    );
    let sub = "5d7c9e1a-2b3c-4d5e-8f9a-0b1c2d3e4f5a";
    let call = |method: &str, path: &str, body: Option<&str>| {
        let mut event = V2Event::new(method, path).claims([("sub", sub), ("token_use", "access")]);
        if let Some(body) = body {
            event = event.body(body);
        }
        event.request()
    };
    let now = Utc::now();
    println!("Account routes (the keys function), one account holding a few keys:");
    println!();
    println!("| request | status | DynamoDB requests | operations | target | met |");
    println!("|---|---|---|---|---|---|");
    let mut misses = 0;
    let mut report = |what: &str, status: u16, expected: u16, target: usize| {
        let ops = wire.take_calls();
        let names: Vec<String> = ops
            .iter()
            .map(|c| c.operation.trim_start_matches("DynamoDB.").to_owned())
            .collect();
        let met = ops.len() <= target && status == expected;
        if !met {
            misses += 1;
        }
        println!(
            "| {what} | {status} | {} | {} | ≤ {target} | {} |",
            ops.len(),
            names.join(", "),
            if met { "yes" } else { "NO" }
        );
    };
    let mut id = String::new();
    for n in 0..3 {
        let resp = catalog_http::api::account::account_keys(
            &call(
                "POST",
                "/api/v1/account/keys",
                Some(&format!(r#"{{"label": "k{n}"}}"#)),
            ),
            &accounts,
            now,
        )
        .await;
        let status = resp.status().as_u16();
        id = json_body(&resp)["key"]["id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        report("`POST /api/v1/account/keys`", status, 201, 1);
    }
    let resp = catalog_http::api::account::account_keys(
        &call("GET", "/api/v1/account/keys", None),
        &accounts,
        now,
    )
    .await;
    report(
        "`GET /api/v1/account/keys` (3 keys)",
        resp.status().as_u16(),
        200,
        1,
    );
    let path = format!("/api/v1/account/keys/{id}");
    for what in [
        "`DELETE /api/v1/account/keys/{id}`",
        "`DELETE` again (idempotent)",
    ] {
        let resp =
            catalog_http::api::account::account_keys(&call("DELETE", &path, None), &accounts, now)
                .await;
        report(what, resp.status().as_u16(), 204, 2);
    }
    println!();
    println!(
        "Revoking finds the key's hash (the table's key) through the owner index, then marks it"
    );
    println!(
        "and frees its slot in one transaction: two round trips (docs/data-model.md, Cost per request, says why)."
    );
    println!();
    Ok(misses)
}

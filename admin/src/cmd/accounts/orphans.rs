//! `catalog-admin accounts orphans`: the accounts the keys table names that the user pool no
//! longer holds, with what they still hold, closed on request.

use std::collections::{BTreeMap, HashSet};

use catalog::keys::Owner;
use chrono::{DateTime, Utc};

use super::{attribute, close};
use crate::cmd::{Aws, CliError};

/// What the keys table holds for one account.
#[derive(Default)]
struct Holdings {
    /// Keys neither revoked nor expired.
    keys: usize,
    /// Requests pending and grants in force.
    access: usize,
    email: Option<String>,
    disabled: bool,
}

/// `accounts orphans`: every account id the keys table names (a strongly consistent scan, then
/// the pool's users, in that order: an account created meanwhile is in the pool's list), less
/// those the pool holds.
pub(super) async fn orphans(
    aws: &Aws,
    pool: &str,
    disable: bool,
    now: DateTime<Utc>,
) -> Result<(), CliError> {
    use catalog_aws::dynamo::attr::time;
    use catalog_aws::dynamo::layout::name::{
        DISABLED_AT, EMAIL, EXPIRES_AT, ID, KEY_HASH, OWNER, REVOKED_AT, STATUS,
    };
    use catalog_aws::dynamo::layout::ACCESS_ID_PREFIX;
    let items = catalog_aws::dynamo::requests::scan_all(
        aws.dynamo
            .scan()
            .table_name(&aws.config.keys_table)
            .filter_expression("attribute_exists(#owner)")
            .projection_expression("#kh, #owner, #id, #revoked, #exp, #st, #email, #disabled")
            .expression_attribute_names("#kh", KEY_HASH)
            .expression_attribute_names("#owner", OWNER)
            .expression_attribute_names("#id", ID)
            .expression_attribute_names("#revoked", REVOKED_AT)
            .expression_attribute_names("#exp", EXPIRES_AT)
            .expression_attribute_names("#st", STATUS)
            .expression_attribute_names("#email", EMAIL)
            .expression_attribute_names("#disabled", DISABLED_AT)
            .consistent_read(true),
    )
    .await?;
    let text = |item: &catalog_aws::dynamo::attr::Item, name: &str| {
        item.get(name).and_then(|v| v.as_s().ok()).cloned()
    };
    let now_text = time(&now);
    let now_text = now_text.as_s().map(String::as_str).unwrap_or_default();
    let mut owners: BTreeMap<String, Holdings> = BTreeMap::new();
    for item in &items {
        let Some(owner) = text(item, OWNER) else {
            continue;
        };
        let held = owners.entry(owner).or_default();
        let id = text(item, ID).unwrap_or_default();
        // Stored times are whole seconds in one format: they compare as text.
        let in_force = text(item, EXPIRES_AT).is_none_or(|t| t.as_str() > now_text);
        if id.starts_with("key_") {
            if !item.contains_key(REVOKED_AT) && in_force {
                held.keys += 1;
            }
        } else if id.starts_with(ACCESS_ID_PREFIX) {
            let status = text(item, STATUS).unwrap_or_default();
            if status == "pending" || (status == "granted" && in_force) {
                held.access += 1;
            }
            held.email = held.email.take().or_else(|| text(item, EMAIL));
        }
        if text(item, KEY_HASH).is_some_and(|k| k.starts_with("ACCOUNT#"))
            && item.contains_key(DISABLED_AT)
        {
            held.disabled = true;
        }
    }
    let mut known = HashSet::new();
    let mut token: Option<String> = None;
    loop {
        let page = aws
            .cognito()
            .list_users()
            .user_pool_id(pool)
            .attributes_to_get("sub")
            .set_pagination_token(token.take())
            .send()
            .await
            .map_err(|e| CliError::Cognito(Box::new(e)))?;
        for user in page.users() {
            if let Some(sub) = attribute(user.attributes(), "sub") {
                known.insert(sub.to_owned());
            }
        }
        match page.pagination_token() {
            Some(next) if !next.is_empty() => token = Some(next.to_owned()),
            _ => break,
        }
    }
    let orphans: Vec<(&String, &Holdings)> = owners
        .iter()
        .filter(|(sub, _)| !known.contains(sub.as_str()))
        .collect();
    if orphans.is_empty() {
        println!("no orphaned accounts: every account the keys table names is in the user pool");
        return Ok(());
    }
    println!(
        "{:<36} {:<32} {:>5} {:>6} disabled",
        "account", "last known email", "keys", "access"
    );
    for (sub, held) in &orphans {
        println!(
            "{:<36} {:<32} {:>5} {:>6} {}",
            sub,
            held.email.as_deref().unwrap_or("-"),
            held.keys,
            held.access,
            if held.disabled { "yes" } else { "no" }
        );
    }
    println!(
        "{} account(s) no longer in the user pool{}",
        orphans.len(),
        if disable {
            ""
        } else {
            " (--disable revokes their keys and grants)"
        }
    );
    if disable {
        for (sub, _) in &orphans {
            let owner = Owner::parse(sub)
                .ok_or_else(|| CliError::Usage(format!("'{sub}' is not an account id")))?;
            let (keys, grants) = close(aws, &owner, now).await?;
            println!("disabled {sub}: {keys} key(s) revoked, {grants} grant(s) revoked");
        }
    }
    Ok(())
}

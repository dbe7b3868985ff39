//! The outbox of access notices in the keys table ([`DynamoNotices`]), and the write that puts a
//! notice beside the record it tells of ([`notice_put`]), in the record's own transaction.
//!
//! | item | key_hash | holds |
//! |---|---|---|
//! | notice | `NOTICE#<time-ordered id>` | `queue` (`pending`, or `failed` once set aside), `kind`, `dataset`, `slug`, `account`, `email`, `expires_at`, `reason`, `created_at`, `attempts`, `sent_to` (the deciders a request reached), `failed_at`, `purge_at` (a failed notice's end) |
//! | digest mark | `DIGEST#<address, lower case>` | `last_sent_at`: when the last digest went to that decider |
//! | account | `ACCOUNT#<sub>` | `emails`: `false` when the person turned emails off |
//!
//! The sparse index [`NOTICES_INDEX`] (`queue`, then `key_hash`) holds notices only (no other
//! item has a `queue`), oldest first. A notice holds no key, token or secret.

use std::collections::{BTreeSet, HashMap};

use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem};
use aws_sdk_dynamodb::Client;
use chrono::{DateTime, Duration, Utc};

use crate::dynamo::attr::{get_s, get_s_opt, get_time_opt, get_uuid, n, opt_s, opt_time, s, time};
use crate::dynamo::layout::account_key;
use crate::dynamo::layout::name::{DATASET, EXPIRES_AT, KEY_HASH, PURGE_AT, REASON, SLUG};
use crate::dynamo::layout::Item;
use crate::dynamo::requests::classify;
use crate::dynamo::tx::build;
use catalog::error::StoreError;
use catalog::keys::Owner;
use catalog::notices::{EmailPreferences, Notice, NoticeKind, NoticeQueue};

use super::DynamoAccess;

/// The sparse index of notices: `queue`, then `key_hash`.
pub const NOTICES_INDEX: &str = "by-notice";
pub const NOTICE_PREFIX: &str = "NOTICE#";
pub const DIGEST_PREFIX: &str = "DIGEST#";
/// A notice's place: [`PENDING`] or [`FAILED`].
pub const QUEUE: &str = "queue";
pub const PENDING: &str = "pending";
pub const FAILED: &str = "failed";
pub const KIND: &str = "kind";
pub const ACCOUNT: &str = "account";
pub const NOTICE_EMAIL: &str = "email";
pub const CREATED_AT: &str = "created_at";
pub const ATTEMPTS: &str = "attempts";
pub const SENT_TO: &str = "sent_to";
pub const FAILED_AT: &str = "failed_at";
pub const LAST_SENT_AT: &str = "last_sent_at";
/// On an account's item: `false` when the person turned emails off.
pub const EMAILS: &str = "emails";
/// How long a failed notice is kept for operators to read.
pub const FAILED_KEPT_DAYS: i64 = 30;

fn key(key_hash: String) -> Item {
    HashMap::from([(KEY_HASH.to_owned(), s(key_hash))])
}

fn notice_key(id: &str) -> Item {
    key(format!("{NOTICE_PREFIX}{id}"))
}

fn digest_key(recipient: &str) -> Item {
    key(format!(
        "{DIGEST_PREFIX}{}",
        recipient.trim().to_lowercase()
    ))
}

/// The notice's item.
pub fn notice_item(notice: &Notice) -> Item {
    let mut item = notice_key(&notice.id);
    item.extend([
        (QUEUE.to_owned(), s(PENDING)),
        (KIND.to_owned(), s(notice.kind.as_str())),
        (DATASET.to_owned(), s(notice.dataset.to_string())),
        (SLUG.to_owned(), s(&notice.slug)),
        (ACCOUNT.to_owned(), s(&notice.account)),
        (NOTICE_EMAIL.to_owned(), opt_s(notice.email.as_deref())),
        (EXPIRES_AT.to_owned(), opt_time(notice.expires_at.as_ref())),
        (REASON.to_owned(), opt_s(notice.reason.as_deref())),
        (CREATED_AT.to_owned(), time(&notice.created_at)),
        (ATTEMPTS.to_owned(), n(u64::from(notice.attempts))),
    ]);
    item
}

/// The notice as stored.
pub fn notice_from_item(item: &Item) -> Result<Notice, StoreError> {
    let corrupt = |name: &str| StoreError::Corrupt(format!("notice: {name}"));
    let id = get_s(item, KEY_HASH)?
        .strip_prefix(NOTICE_PREFIX)
        .ok_or_else(|| corrupt(KEY_HASH))?
        .to_owned();
    let sent_to = match item.get(SENT_TO) {
        None | Some(AttributeValue::Null(_)) => BTreeSet::new(),
        Some(AttributeValue::Ss(list)) => list.iter().cloned().collect(),
        Some(_) => return Err(corrupt(SENT_TO)),
    };
    let attempts = match item.get(ATTEMPTS) {
        Some(AttributeValue::N(v)) => v.parse().map_err(|_| corrupt(ATTEMPTS))?,
        _ => 0,
    };
    Ok(Notice {
        id,
        kind: NoticeKind::parse(&get_s(item, KIND)?).ok_or_else(|| corrupt(KIND))?,
        dataset: get_uuid(item, DATASET)?,
        slug: get_s(item, SLUG)?,
        account: get_s(item, ACCOUNT)?,
        email: get_s_opt(item, NOTICE_EMAIL)?,
        expires_at: get_time_opt(item, EXPIRES_AT)?,
        reason: get_s_opt(item, REASON)?,
        created_at: get_time_opt(item, CREATED_AT)?.ok_or_else(|| corrupt(CREATED_AT))?,
        attempts,
        sent_to,
    })
}

/// The notice's Put, for the transaction that writes its record.
pub fn notice_put(table: &str, notice: &Notice) -> Result<TransactWriteItem, StoreError> {
    let put = Put::builder()
        .table_name(table)
        .set_item(Some(notice_item(notice)))
        .condition_expression(format!("attribute_not_exists({KEY_HASH})"));
    Ok(TransactWriteItem::builder()
        .put(build(put.build())?)
        .build())
}

/// The outbox, the digest marks and the accounts' email preference, in the keys table.
#[derive(Clone, Debug)]
pub struct DynamoNotices {
    client: Client,
    keys_table: String,
}

impl DynamoNotices {
    pub fn new(client: Client, keys_table: impl Into<String>) -> Self {
        Self {
            client,
            keys_table: keys_table.into(),
        }
    }

    /// The notices in one queue (`pending` or `failed`), oldest first, at most `limit`.
    pub async fn in_queue(&self, queue: &str, limit: usize) -> Result<Vec<Notice>, StoreError> {
        let out = self
            .client
            .query()
            .table_name(&self.keys_table)
            .index_name(NOTICES_INDEX)
            .key_condition_expression("#q = :q")
            .expression_attribute_names("#q", QUEUE)
            .expression_attribute_values(":q", s(queue))
            .limit(i32::try_from(limit.max(1)).unwrap_or(i32::MAX))
            .send()
            .await
            .map_err(classify)?;
        out.items().iter().map(notice_from_item).collect()
    }

    /// Sets the account's email preference (creating its item's attribute).
    pub async fn set_emails(&self, owner: &Owner, wanted: bool) -> Result<(), StoreError> {
        self.client
            .update_item()
            .table_name(&self.keys_table)
            .set_key(Some(account_key(owner.as_str())))
            .update_expression("SET #e = :e")
            .expression_attribute_names("#e", EMAILS)
            .expression_attribute_values(":e", AttributeValue::Bool(wanted))
            .send()
            .await
            .map_err(classify)?;
        Ok(())
    }

    /// Whether the account wants emails: one GetItem of its item (absent: yes).
    pub async fn emails(&self, owner: &Owner) -> Result<bool, StoreError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.keys_table)
            .set_key(Some(account_key(owner.as_str())))
            .projection_expression("#e")
            .expression_attribute_names("#e", EMAILS)
            .consistent_read(true)
            .send()
            .await
            .map_err(classify)?;
        Ok(!matches!(
            out.item().and_then(|i| i.get(EMAILS)),
            Some(AttributeValue::Bool(false))
        ))
    }
}

impl NoticeQueue for DynamoNotices {
    async fn pending(&self, limit: usize) -> Result<Vec<Notice>, StoreError> {
        self.in_queue(PENDING, limit).await
    }

    async fn done(&self, id: &str) -> Result<(), StoreError> {
        self.client
            .delete_item()
            .table_name(&self.keys_table)
            .set_key(Some(notice_key(id)))
            .send()
            .await
            .map_err(classify)?;
        Ok(())
    }

    async fn reached(&self, id: &str, recipient: &str) -> Result<(), StoreError> {
        self.client
            .update_item()
            .table_name(&self.keys_table)
            .set_key(Some(notice_key(id)))
            .update_expression("ADD #to :to")
            .condition_expression(format!("attribute_exists({KEY_HASH})"))
            .expression_attribute_names("#to", SENT_TO)
            .expression_attribute_values(":to", AttributeValue::Ss(vec![recipient.to_owned()]))
            .send()
            .await
            .map(|_| ())
            .or_else(gone_is_fine)
    }

    async fn attempt_failed(
        &self,
        id: &str,
        attempts: u32,
        give_up: bool,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let mut update = self
            .client
            .update_item()
            .table_name(&self.keys_table)
            .set_key(Some(notice_key(id)))
            .condition_expression(format!("attribute_exists({KEY_HASH})"))
            .expression_attribute_names("#n", ATTEMPTS)
            .expression_attribute_values(":n", n(u64::from(attempts)));
        update = if give_up {
            let purge = (now + Duration::days(FAILED_KEPT_DAYS)).timestamp().max(0) as u64;
            update
                .update_expression("SET #n = :n, #q = :failed, #at = :now, #purge = :purge")
                .expression_attribute_names("#q", QUEUE)
                .expression_attribute_names("#at", FAILED_AT)
                .expression_attribute_names("#purge", PURGE_AT)
                .expression_attribute_values(":failed", s(FAILED))
                .expression_attribute_values(":now", time(&now))
                .expression_attribute_values(":purge", n(purge))
        } else {
            update.update_expression("SET #n = :n")
        };
        update.send().await.map(|_| ()).or_else(gone_is_fine)
    }

    async fn emails_wanted(&self, account: &str) -> Result<bool, StoreError> {
        match Owner::parse(account) {
            Some(owner) => self.emails(&owner).await,
            None => Err(StoreError::Corrupt(format!("notice: {ACCOUNT}"))),
        }
    }

    async fn last_digest(&self, recipient: &str) -> Result<Option<DateTime<Utc>>, StoreError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.keys_table)
            .set_key(Some(digest_key(recipient)))
            .consistent_read(true)
            .send()
            .await
            .map_err(classify)?;
        match out.item() {
            Some(item) => get_time_opt(item, LAST_SENT_AT),
            None => Ok(None),
        }
    }

    async fn digest_sent(&self, recipient: &str, at: DateTime<Utc>) -> Result<(), StoreError> {
        self.client
            .update_item()
            .table_name(&self.keys_table)
            .set_key(Some(digest_key(recipient)))
            .update_expression("SET #at = :at")
            .expression_attribute_names("#at", LAST_SENT_AT)
            .expression_attribute_values(":at", time(&at))
            .send()
            .await
            .map_err(classify)?;
        Ok(())
    }
}

/// The accounts function's side of the preference (the same item and attribute).
impl EmailPreferences for DynamoAccess {
    async fn emails(&self, owner: &Owner) -> Result<bool, StoreError> {
        DynamoNotices::new(self.client.clone(), &self.keys_table)
            .emails(owner)
            .await
    }

    async fn set_emails(&self, owner: &Owner, wanted: bool) -> Result<(), StoreError> {
        DynamoNotices::new(self.client.clone(), &self.keys_table)
            .set_emails(owner, wanted)
            .await
    }
}

/// A notice another run finished meanwhile: nothing left to do.
fn gone_is_fine<E>(
    err: aws_sdk_dynamodb::error::SdkError<
        E,
        aws_smithy_runtime_api::client::orchestrator::HttpResponse,
    >,
) -> Result<(), StoreError>
where
    E: aws_sdk_dynamodb::error::ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    if err.as_service_error().and_then(|e| e.code()) == Some("ConditionalCheckFailedException") {
        return Ok(());
    }
    Err(classify(err))
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn a_notice_reads_back_as_written_and_holds_nothing_but_its_fields() {
        let at = Utc.with_ymd_and_hms(2026, 11, 29, 10, 0, 0).unwrap();
        let mut notice = Notice {
            id: Notice::id_at(at),
            kind: NoticeKind::Approved,
            dataset: uuid::Uuid::new_v4(),
            slug: "river-levels".into(),
            account: "7a0c2e4f-1111-4222-8333-944455556666".into(),
            email: Some("ann@example.org".into()),
            expires_at: Some(at + Duration::days(30)),
            reason: None,
            created_at: at,
            attempts: 0,
            sent_to: BTreeSet::new(),
        };
        let item = notice_item(&notice);
        assert_eq!(notice_from_item(&item).unwrap(), notice);
        assert_eq!(item[QUEUE], s(PENDING), "in the pending notices");
        assert!(get_s(&item, KEY_HASH).unwrap().starts_with(NOTICE_PREFIX));
        let mut names: Vec<&str> = item.keys().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                ACCOUNT,
                ATTEMPTS,
                CREATED_AT,
                DATASET,
                NOTICE_EMAIL,
                EXPIRES_AT,
                KEY_HASH,
                KIND,
                QUEUE,
                REASON,
                SLUG
            ],
            "no owner, id or status: the notice is in no index but by-notice"
        );
        // As the mailer leaves it: attempts counted, deciders reached.
        let mut item = item;
        item.insert(ATTEMPTS.into(), n(3));
        item.insert(
            SENT_TO.into(),
            AttributeValue::Ss(vec!["a@example.org".into()]),
        );
        notice.attempts = 3;
        notice.sent_to.insert("a@example.org".into());
        assert_eq!(notice_from_item(&item).unwrap(), notice);
        item.insert(KIND.into(), s("maybe"));
        assert!(notice_from_item(&item).is_err());
    }
}

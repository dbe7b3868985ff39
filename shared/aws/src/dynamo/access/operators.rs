//! What operators' tools do beside the routes: grant directly, report a dataset's records, and
//! close every record of an account that is disabled.

use aws_sdk_dynamodb::types::{TransactWriteItem, Update};
use chrono::{DateTime, SubsecRound, Utc};
use uuid::Uuid;

use crate::dynamo::attr::s;
use crate::dynamo::codec::prelude::*;
use crate::dynamo::layout::name::{GRANTEE, STATUS};
use crate::dynamo::requests::scan_all;
use crate::dynamo::tx::{build, transact_retrying};
use catalog::error::StoreError;
use catalog::grants::{AccessRecord, AccessStatus, Decision};
use catalog::keys::Owner;
use catalog::notices::Notice;
use catalog::ports::{AccessStore, DatasetAccess, Decided};

use super::notices::notice_put;
use super::{newest_first, DynamoAccess, Expression};

impl DynamoAccess {
    /// Grants an account access directly (an operator, by email): the record becomes a grant
    /// until `expires_at` whatever it was, keeping the request it holds. One GetItem, one
    /// TransactWriteItems (the record and its notice to the person).
    pub async fn grant(
        &self,
        dataset: &DatasetAccess,
        grantee: &Owner,
        email: &str,
        expires_at: Option<DateTime<Utc>>,
        by: &str,
        now: DateTime<Utc>,
    ) -> Result<AccessRecord, StoreError> {
        let mut record = self
            .record(grantee, &dataset.id)
            .await?
            .unwrap_or_else(|| AccessRecord {
                slug: String::new(),
                dataset: dataset.id,
                grantee: grantee.to_string(),
                email: None,
                status: AccessStatus::Granted,
                requested_at: None,
                answers: Default::default(),
                terms_accepted: false,
                expires_at: None,
                decided_by: None,
                decided_at: None,
                reason: None,
                rev: 0,
            });
        record.slug = dataset.slug.to_string();
        record.email = Some(email.to_owned());
        record.status = AccessStatus::Granted;
        record.expires_at = expires_at;
        record.decided_by = Some(by.to_owned());
        record.decided_at = Some(now);
        record.reason = None;
        let e = Expression::setting(record.attributes());
        let update = Update::builder()
            .table_name(&self.keys_table)
            .set_key(Some(record.key()?))
            .update_expression(e.update())
            .set_expression_attribute_names(Some(e.names))
            .set_expression_attribute_values(Some(e.values));
        // The record as written (times as stored: whole seconds) and its notice, in one write.
        record.rev += 1;
        record.decided_at = Some(now.trunc_subsecs(0));
        record.expires_at = expires_at.map(|t| t.trunc_subsecs(0));
        let mut items = vec![TransactWriteItem::builder()
            .update(build(update.build())?)
            .build()];
        if let Some(notice) = Notice::for_record(&record, now) {
            items.push(notice_put(&self.keys_table, &notice)?);
        }
        match transact_retrying(&self.client, items).await? {
            Ok(()) => Ok(record),
            Err(_) => Err(StoreError::Corrupt(
                "a grant without a condition was refused".into(),
            )),
        }
    }

    /// Every record of the dataset in these statuses (operators' reports), newest first.
    pub async fn records_of(
        &self,
        dataset: &Uuid,
        statuses: &[AccessStatus],
    ) -> Result<Vec<AccessRecord>, StoreError> {
        let mut all = Vec::new();
        for status in statuses {
            all.extend(self.query_status(*status, Some(dataset)).await?);
        }
        newest_first(&mut all);
        Ok(all)
    }

    /// Revokes every grant in force of an account (when it is disabled), and rejects its pending
    /// requests; how many grants. Its records are found by a strongly consistent scan (operators only, rarely): the owner index may be
    /// behind, and nothing reports success while a grant may still work.
    pub async fn revoke_all(
        &self,
        grantee: &Owner,
        by: &str,
        now: DateTime<Utc>,
    ) -> Result<usize, StoreError> {
        let items = scan_all(
            self.client
                .scan()
                .table_name(&self.keys_table)
                .filter_expression("#grantee = :grantee AND (#st = :granted OR #st = :pending)")
                .expression_attribute_names("#grantee", GRANTEE)
                .expression_attribute_names("#st", STATUS)
                .expression_attribute_values(":grantee", s(grantee.as_str()))
                .expression_attribute_values(":granted", s(AccessStatus::Granted.as_str()))
                .expression_attribute_values(":pending", s(AccessStatus::Pending.as_str()))
                .consistent_read(true),
        )
        .await?;
        let mut revoked = 0;
        for item in &items {
            let record = AccessRecord::from_item(item)?;
            // Pending requests are closed too, so that none is approved while it is disabled.
            let decision = match record.status {
                AccessStatus::Pending => Decision::Reject {
                    reason: "the account was disabled".to_owned(),
                },
                _ => Decision::Revoke,
            };
            let decided = self
                .decide(&record.dataset, grantee, &decision, None, by, now)
                .await?;
            if matches!(decided, Decided::Done(_)) && decision == Decision::Revoke {
                revoked += 1;
            }
        }
        Ok(revoked)
    }
}

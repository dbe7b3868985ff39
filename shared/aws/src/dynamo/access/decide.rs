//! An operator's decision and its notice, in one write.

use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem, Update};
use chrono::{DateTime, SubsecRound, Utc};
use uuid::Uuid;

use super::notices::notice_put;
use super::{DynamoAccess, Expression};
use crate::dynamo::attr::{s, time};
use crate::dynamo::codec::prelude::*;
use crate::dynamo::layout::name::{DECIDED_AT, DECIDED_BY, EXPIRES_AT, REASON, STATUS};
use crate::dynamo::tx::{build, transact_retrying};
use catalog::error::StoreError;
use catalog::grants::{AccessRecord, AccessStatus, Decision};
use catalog::keys::Owner;
use catalog::notices::Notice;
use catalog::ports::Decided;

/// The record once the decision applies (times as stored: whole seconds).
fn decided(
    current: &AccessRecord,
    decision: &Decision,
    by: &str,
    now: DateTime<Utc>,
) -> AccessRecord {
    let mut after = current.clone();
    after.status = match decision {
        Decision::Approve { .. } => AccessStatus::Granted,
        Decision::Reject { .. } => AccessStatus::Rejected,
        Decision::Revoke => AccessStatus::Revoked,
    };
    after.decided_by = Some(by.to_owned());
    after.decided_at = Some(now.trunc_subsecs(0));
    match decision {
        Decision::Approve { expires_at } => {
            after.expires_at = expires_at.map(|t| t.trunc_subsecs(0))
        }
        Decision::Reject { reason } => after.reason = Some(reason.clone()),
        Decision::Revoke => {}
    }
    after.rev = current.rev + 1;
    after
}

impl DynamoAccess {
    /// Reads the record (strongly consistent) and, if the decision applies to it, writes the
    /// decision and its notice in one TransactWriteItems conditional on the record being as
    /// read; a record that changed in between is read and judged again.
    pub(super) async fn decide_noticed(
        &self,
        dataset: &Uuid,
        grantee: &Owner,
        decision: &Decision,
        rev: Option<u64>,
        by: &str,
        now: DateTime<Utc>,
    ) -> Result<Decided, StoreError> {
        for _ in 0..3 {
            let Some(current) = self.record(grantee, dataset).await? else {
                return Ok(Decided::NotFound);
            };
            if current.status != decision.applies_to() || rev.is_some_and(|r| r != current.rev) {
                return Ok(Decided::Conflict(current));
            }
            let after = decided(&current, decision, by, now);
            let mut attributes = vec![
                (STATUS, s(after.status.as_str())),
                (DECIDED_BY, s(by)),
                (DECIDED_AT, time(&now)),
            ];
            match decision {
                Decision::Approve { expires_at } => attributes.push((
                    EXPIRES_AT,
                    expires_at.map_or(AttributeValue::Null(true), |t| time(&t)),
                )),
                Decision::Reject { reason } => attributes.push((REASON, s(reason))),
                Decision::Revoke => {}
            }
            let mut e = Expression::setting(attributes);
            e.name("#st", STATUS);
            e.value(":from", s(decision.applies_to().as_str()));
            e.value(":rev", AttributeValue::N(current.rev.to_string()));
            let condition = if current.rev == 0 {
                "#st = :from AND (attribute_not_exists(#rev) OR #rev = :rev)"
            } else {
                "#st = :from AND #rev = :rev"
            };
            let update = Update::builder()
                .table_name(&self.keys_table)
                .set_key(Some(current.key()?))
                .update_expression(e.update())
                .condition_expression(condition)
                .set_expression_attribute_names(Some(e.names))
                .set_expression_attribute_values(Some(e.values));
            let mut items = vec![TransactWriteItem::builder()
                .update(build(update.build())?)
                .build()];
            if let Some(notice) = Notice::for_record(&after, now) {
                items.push(notice_put(&self.keys_table, &notice)?);
            }
            match transact_retrying(&self.client, items).await? {
                Ok(()) => return Ok(Decided::Done(after)),
                // Changed since it was read: read and judge again.
                Err(_) => continue,
            }
        }
        Err(StoreError::Unavailable(
            "the access record kept changing while it was decided".into(),
        ))
    }
}

//! Grants: an account's access to an `approval` dataset, in the keys table (one item per
//! account and dataset, `GRANT#<dataset uuid>#<sub>`). The data path reads the item strongly
//! consistent, so a revocation takes effect on the next request, whatever the clocks say.

use catalog::dynamo::attr::{
    get_s, get_s_opt, get_time, get_time_opt, get_uuid, opt_time, s, time,
};
use catalog::dynamo::codec::{GRANTED, REVOKED};
use catalog::dynamo::layout::name::{
    DATASET, DECIDED_AT, DECIDED_BY, EMAIL, EXPIRES_AT, GRANTEE, KEY_HASH, SLUG, STATUS,
};
use catalog::dynamo::layout::{api_key_key, grant_key, grant_prefix, Item};
use catalog::dynamo::requests::{classify, scan_all};
use catalog::error::StoreError;
use catalog::input::Slug;
use catalog::keys::Owner;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::{DynamoWriter, WriteError};

/// A grant as operators see it: who has (or had) access, until when, and who decided.
#[derive(Debug, Clone, PartialEq)]
pub struct GrantInfo {
    pub slug: String,
    pub dataset: Uuid,
    pub grantee: String,
    pub email: Option<String>,
    /// `granted` or `revoked`.
    pub status: String,
    pub expires_at: Option<DateTime<Utc>>,
    pub decided_by: String,
    pub decided_at: DateTime<Utc>,
}

impl GrantInfo {
    /// In force at `now`: granted and not past its expiry.
    pub fn is_active_at(&self, now: DateTime<Utc>) -> bool {
        self.status == GRANTED && self.expires_at.is_none_or(|t| now < t)
    }
}

impl TryFrom<&Item> for GrantInfo {
    type Error = StoreError;

    fn try_from(item: &Item) -> Result<Self, StoreError> {
        Ok(Self {
            slug: get_s(item, SLUG)?,
            dataset: get_uuid(item, DATASET)?,
            grantee: get_s(item, GRANTEE)?,
            email: get_s_opt(item, EMAIL)?,
            status: get_s(item, STATUS)?,
            expires_at: get_time_opt(item, EXPIRES_AT)?,
            decided_by: get_s(item, DECIDED_BY)?,
            decided_at: get_time(item, DECIDED_AT)?,
        })
    }
}

impl DynamoWriter {
    /// Grants `grantee` access to the dataset until `expires_at` (`None`: until revoked),
    /// replacing any earlier decision for the pair.
    pub async fn grant(
        &self,
        slug: &Slug,
        grantee: &Owner,
        email: &str,
        expires_at: Option<DateTime<Utc>>,
        by: &str,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        let dataset = self.stored_dataset(slug).await?;
        let mut item = grant_key(grantee.as_str(), &dataset.id);
        item.extend(
            [
                (SLUG, s(slug.as_str())),
                (DATASET, s(dataset.id.to_string())),
                (GRANTEE, s(grantee.as_str())),
                (EMAIL, s(email)),
                (STATUS, s(GRANTED)),
                (EXPIRES_AT, opt_time(expires_at.as_ref())),
                (DECIDED_BY, s(by)),
                (DECIDED_AT, time(&now)),
            ]
            .map(|(k, v)| (k.to_owned(), v)),
        );
        self.client
            .put_item()
            .table_name(&self.keys_table)
            .set_item(Some(item))
            .send()
            .await
            .map_err(classify)?;
        Ok(())
    }

    /// Revokes `grantee`'s grant for the dataset: `false` when there was none in force.
    pub async fn revoke_grant(
        &self,
        slug: &Slug,
        grantee: &Owner,
        by: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, WriteError> {
        let dataset = self.stored_dataset(slug).await?;
        self.revoke_grant_item(grant_key(grantee.as_str(), &dataset.id), by, now)
            .await
    }

    async fn revoke_grant_item(
        &self,
        key: Item,
        by: &str,
        now: DateTime<Utc>,
    ) -> Result<bool, WriteError> {
        let result = self
            .client
            .update_item()
            .table_name(&self.keys_table)
            .set_key(Some(key))
            .update_expression("SET #status = :revoked, #by = :by, #at = :at")
            .condition_expression("#status = :granted")
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_names("#by", DECIDED_BY)
            .expression_attribute_names("#at", DECIDED_AT)
            .expression_attribute_values(":revoked", s(REVOKED))
            .expression_attribute_values(":granted", s(GRANTED))
            .expression_attribute_values(":by", s(by))
            .expression_attribute_values(":at", time(&now))
            .send()
            .await;
        match result {
            Ok(_) => Ok(true),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(false)
            }
            Err(e) => Err(classify(e).into()),
        }
    }

    /// Every grant ever decided for the dataset (operators only: a filtered scan of the keys
    /// table), by email.
    pub async fn grants_of(&self, slug: &Slug) -> Result<Vec<GrantInfo>, WriteError> {
        let dataset = self.stored_dataset(slug).await?;
        let items = scan_all(
            self.client
                .scan()
                .table_name(&self.keys_table)
                .filter_expression(format!("begins_with({KEY_HASH}, :prefix)"))
                .expression_attribute_values(":prefix", s(grant_prefix(&dataset.id)))
                .consistent_read(true),
        )
        .await?;
        let mut grants = items
            .iter()
            .map(GrantInfo::try_from)
            .collect::<Result<Vec<_>, _>>()?;
        grants.sort_by(|a, b| a.email.cmp(&b.email).then(a.grantee.cmp(&b.grantee)));
        Ok(grants)
    }

    /// Revokes every grant in force of an account (when it is disabled); how many.
    pub async fn revoke_grants_of(
        &self,
        grantee: &Owner,
        by: &str,
        now: DateTime<Utc>,
    ) -> Result<usize, WriteError> {
        let items = scan_all(
            self.client
                .scan()
                .table_name(&self.keys_table)
                .filter_expression("#grantee = :grantee AND #status = :granted")
                .expression_attribute_names("#grantee", GRANTEE)
                .expression_attribute_names("#status", STATUS)
                .expression_attribute_values(":grantee", s(grantee.as_str()))
                .expression_attribute_values(":granted", s(GRANTED))
                .consistent_read(true),
        )
        .await?;
        let mut revoked = 0;
        for item in items {
            let key = api_key_key(&get_s(&item, KEY_HASH)?);
            if self.revoke_grant_item(key, by, now).await? {
                revoked += 1;
            }
        }
        Ok(revoked)
    }
}

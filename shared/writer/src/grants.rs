//! Grants: an account's access to an `approval` dataset, in the keys table (one item per
//! account and dataset, `GRANT#<dataset uuid>#<sub>`). The data path reads the item strongly
//! consistent, so a revocation takes effect on the next request, whatever the clocks say.

use catalog::dynamo::attr::{get_s, s, time};
use catalog::dynamo::codec::{GRANTED, REVOKED};
use catalog::dynamo::layout::name::{DECIDED_AT, DECIDED_BY, GRANTEE, KEY_HASH, STATUS};
use catalog::dynamo::layout::{api_key_key, grant_key, grant_prefix, Item};
use catalog::dynamo::requests::{classify, scan_all};
use catalog::input::Slug;
use catalog::keys::Owner;
use chrono::{DateTime, Utc};

pub use catalog::policy::GrantInfo;

use crate::{DynamoWriter, WriteError};

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
        let grant = GrantInfo {
            slug: slug.to_string(),
            dataset: dataset.id,
            grantee: grantee.to_string(),
            email: Some(email.to_owned()),
            status: GRANTED.to_owned(),
            expires_at,
            decided_by: by.to_owned(),
            decided_at: now,
        };
        self.client
            .put_item()
            .table_name(&self.keys_table)
            .set_item(Some(grant.to_item()))
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

//! Uploads from the site in the keys table ([`DynamoUploads`], `catalog::uploads`).
//!
//! | item | `key_hash` | holds |
//! |---|---|---|
//! | upload | `UPLOAD#<org>#<id>` | `org`, `dataset` (the name within the organisation), `filename`, `size`, `sha256`, `uploaded_by` (the account), `created_at`, `updated_at`, `state` (`uploading`, `publishing`, `published`, `failed`), `s3_upload_id`, `part_size`, `version` (once published), `reason` (once failed), `purge_at` (30 days on: DynamoDB's time to live removes it) |
//! | upload's claim | `UPLOAD#<org>#<id>#claim` | `purge_at`: put once, by the one invocation of the publishing function that publishes it |
//!
//! None of the keys table's index attributes (`owner`, `id`, `status`, `queue`) is written, so
//! an upload is in no index: it is read by its key alone, which the route's path and the
//! object's key both give. Each move between states is one PutItem conditioned on the stored
//! `state`.

use aws_sdk_dynamodb::operation::delete_item::DeleteItemError;
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::Client;

use super::attr::{corrupt, get_s, get_s_opt, get_time, get_u64, n, s, time, Item};
use super::layout::api_key_key;
use super::requests::{classify, get_consistent};
use catalog::error::StoreError;
use catalog::orgs::OrgName;
use catalog::uploads::{Limits, Upload, UploadState, UploadStore};

const STATE: &str = "state";

/// The upload records, in the keys table.
#[derive(Clone)]
pub struct DynamoUploads {
    client: Client,
    table: String,
}

impl DynamoUploads {
    pub fn new(client: Client, keys_table: impl Into<String>) -> Self {
        Self {
            client,
            table: keys_table.into(),
        }
    }
}

fn upload_key(org: &OrgName, id: &str) -> Item {
    api_key_key(&format!("UPLOAD#{org}#{id}"))
}

fn item_of(u: &Upload) -> Item {
    let mut item = upload_key(&u.org, &u.id);
    item.extend([
        ("org".to_owned(), s(u.org.as_str())),
        ("upload_id".to_owned(), s(&u.id)),
        ("dataset".to_owned(), s(&u.dataset)),
        ("filename".to_owned(), s(&u.filename)),
        ("size".to_owned(), n(u.size)),
        ("sha256".to_owned(), s(&u.sha256)),
        ("uploaded_by".to_owned(), s(&u.by)),
        ("created_at".to_owned(), time(&u.created_at)),
        ("updated_at".to_owned(), time(&u.updated_at)),
        (STATE.to_owned(), s(u.state.as_str())),
        ("s3_upload_id".to_owned(), s(&u.s3_upload_id)),
        ("part_size".to_owned(), n(u.part_size)),
        (
            "purge_at".to_owned(),
            n((u.created_at + chrono::Duration::days(Limits::RECORD_DAYS))
                .timestamp()
                .max(0) as u64),
        ),
    ]);
    if let Some(v) = u.version {
        item.insert("version".to_owned(), n(v));
    }
    if let Some(r) = &u.reason {
        item.insert("reason".to_owned(), s(r));
    }
    item
}

fn upload_of(item: &Item) -> Result<Upload, StoreError> {
    let org = OrgName::parse(&get_s(item, "org")?).map_err(|_| corrupt("org"))?;
    let state = UploadState::parse(&get_s(item, STATE)?).ok_or_else(|| corrupt(STATE))?;
    Ok(Upload {
        id: get_s(item, "upload_id")?,
        org,
        dataset: get_s(item, "dataset")?,
        filename: get_s(item, "filename")?,
        size: get_u64(item, "size")?,
        sha256: get_s(item, "sha256")?,
        by: get_s(item, "uploaded_by")?,
        created_at: get_time(item, "created_at")?,
        updated_at: get_time(item, "updated_at")?,
        state,
        s3_upload_id: get_s(item, "s3_upload_id")?,
        part_size: get_u64(item, "part_size")?,
        version: item
            .contains_key("version")
            .then(|| get_u64(item, "version"))
            .transpose()?,
        reason: get_s_opt(item, "reason")?,
    })
}

impl UploadStore for DynamoUploads {
    async fn create_upload(&self, upload: &Upload) -> Result<(), StoreError> {
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item_of(upload)))
            .condition_expression("attribute_not_exists(key_hash)")
            .send()
            .await
            .map_err(classify)?;
        Ok(())
    }

    async fn upload(&self, org: &OrgName, id: &str) -> Result<Option<Upload>, StoreError> {
        get_consistent(&self.client, &self.table, upload_key(org, id))
            .await?
            .map(|item| upload_of(&item))
            .transpose()
    }

    async fn move_upload(&self, upload: &Upload, from: UploadState) -> Result<bool, StoreError> {
        let sent = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item_of(upload)))
            .condition_expression("#state = :from")
            .expression_attribute_names("#state", STATE)
            .expression_attribute_values(":from", s(from.as_str()))
            .send()
            .await;
        match sent {
            Ok(_) => Ok(true),
            Err(e)
                if matches!(
                    e.as_service_error(),
                    Some(PutItemError::ConditionalCheckFailedException(_))
                ) =>
            {
                Ok(false)
            }
            Err(e) => Err(classify(e)),
        }
    }

    async fn delete_upload(&self, upload: &Upload, from: UploadState) -> Result<bool, StoreError> {
        self.delete_if(upload, from).await
    }

    async fn claim_upload(&self, upload: &Upload) -> Result<bool, StoreError> {
        let mut item = api_key_key(&format!("UPLOAD#{}#{}#claim", upload.org, upload.id));
        item.insert(
            "purge_at".to_owned(),
            n(
                (upload.created_at + chrono::Duration::days(Limits::RECORD_DAYS))
                    .timestamp()
                    .max(0) as u64,
            ),
        );
        let sent = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression("attribute_not_exists(key_hash)")
            .send()
            .await;
        match sent {
            Ok(_) => Ok(true),
            Err(e)
                if matches!(
                    e.as_service_error(),
                    Some(PutItemError::ConditionalCheckFailedException(_))
                ) =>
            {
                Ok(false)
            }
            Err(e) => Err(classify(e)),
        }
    }
}

impl DynamoUploads {
    /// One conditional DeleteItem of the upload's item.
    async fn delete_if(&self, upload: &Upload, from: UploadState) -> Result<bool, StoreError> {
        let sent = self
            .client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(upload_key(&upload.org, &upload.id)))
            .condition_expression("#state = :from")
            .expression_attribute_names("#state", STATE)
            .expression_attribute_values(":from", s(from.as_str()))
            .send()
            .await;
        match sent {
            Ok(_) => Ok(true),
            Err(e)
                if matches!(
                    e.as_service_error(),
                    Some(DeleteItemError::ConditionalCheckFailedException(_))
                ) =>
            {
                Ok(false)
            }
            Err(e) => Err(classify(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_upload_round_trips_and_touches_no_index() {
        let at = chrono::DateTime::parse_from_rfc3339("2026-11-29T06:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let mut upload = Upload {
            id: "0123456789abcdef0123456789abcdef".into(),
            org: OrgName::parse("acme").unwrap(),
            dataset: "sales".into(),
            filename: "sales.parquet".into(),
            size: 123,
            sha256: "ab".repeat(32),
            by: "sub-1".into(),
            created_at: at,
            updated_at: at,
            state: UploadState::Uploading,
            s3_upload_id: "s3-id".into(),
            part_size: 8 << 20,
            version: None,
            reason: None,
        };
        assert_eq!(upload_of(&item_of(&upload)).unwrap(), upload);
        upload.state = UploadState::Failed;
        upload.reason = Some("not Parquet or CSV".into());
        upload.version = Some(3);
        let item = item_of(&upload);
        assert_eq!(upload_of(&item).unwrap(), upload);
        for index_key in ["owner", "id", "status", "queue"] {
            assert!(!item.contains_key(index_key), "{index_key}");
        }
    }
}

//! The writer behind an organisation's editors ([`catalog::ports::DatasetEditor`]): the
//! description re-activates the active version with it, a rollback activates another version,
//! each the one activation every publish ends with (so that lists, facets, the text index and
//! the kept orders follow, and a concurrent publish wins or loses whole).

use aws_sdk_dynamodb::types::AttributeValue;
use catalog::edits::EditFailure;
use catalog::error::StoreError;
use catalog::orgs::OrgName;
use catalog::ports::DatasetEditor;
use catalog::records::{ActiveVersion, DatasetMeta, OrgDataset};
use catalog::slug::Slug;
use catalog::versions::VersionSummary;
use catalog_aws::dynamo::codec::schema_from;
use catalog_aws::dynamo::layout::dataset_pk;
use catalog_aws::dynamo::layout::name::{PK, SK};
use catalog_aws::dynamo::requests::query_all;
use catalog_aws::dynamo::DatasetsTable;
use chrono::{DateTime, Utc};

use crate::error::WriteError;
use crate::writer::DynamoWriter;
use catalog_aws::dynamo::codec::prelude::*;

fn failure(slug: &Slug, e: WriteError) -> EditFailure {
    match e {
        WriteError::NoSuchVersion(slug, version) => EditFailure::NoSuchVersion { slug, version },
        WriteError::NoSuchDataset(_) | WriteError::Unpublished(_) => {
            EditFailure::NotEditable(e.to_string())
        }
        WriteError::Conflict(_)
        | WriteError::Contended { .. }
        | WriteError::Raced(_)
        | WriteError::Busy(_) => EditFailure::Conflict(e.to_string()),
        WriteError::Invalid(_) | WriteError::TooLarge(_) => EditFailure::Refused(e.to_string()),
        WriteError::Store(e) => EditFailure::Store(e),
        // The change is served; lists that could not follow are put in order by reindex.
        WriteError::FacetLists(_) => {
            tracing::warn!(slug = %slug, error = %e, "an editor's change is served, its lists lag");
            EditFailure::Store(StoreError::Other(e.to_string().into()))
        }
        other => EditFailure::Store(StoreError::Other(other.to_string().into())),
    }
}

impl DynamoWriter {
    /// The version active now, or why there is nothing to edit.
    async fn active_version(&self, slug: &Slug) -> Result<u64, EditFailure> {
        let stored = self
            .stored_dataset(slug)
            .await
            .map_err(|e| failure(slug, e))?;
        if stored.unpublished {
            return Err(EditFailure::NotEditable(format!(
                "dataset '{slug}' was unpublished by the catalog's operators"
            )));
        }
        stored
            .current
            .ok_or_else(|| EditFailure::NotEditable(format!("dataset '{slug}' has no version yet")))
    }
}

impl DatasetEditor for DynamoWriter {
    /// One Query of the datasets table's organisation index.
    async fn org_datasets(&self, org: &OrgName) -> Result<Vec<OrgDataset>, StoreError> {
        DatasetsTable::new(self.client.clone(), &self.datasets_table)
            .org_datasets(org)
            .await
    }

    async fn meta(&self, slug: &Slug) -> Result<Option<DatasetMeta>, StoreError> {
        match self.dataset_meta(slug).await {
            Ok(meta) => Ok(meta),
            Err(WriteError::Store(e)) => Err(e),
            Err(e) => Err(StoreError::Other(e.to_string().into())),
        }
    }

    /// One strongly consistent Query of the dataset's version items (with their schemas),
    /// after the dataset's item (which names the active one).
    async fn history(&self, slug: &Slug) -> Result<Vec<VersionSummary>, StoreError> {
        let current = match self.stored_dataset(slug).await {
            Ok(stored) => stored.current,
            Err(WriteError::NoSuchDataset(_)) => return Ok(Vec::new()),
            Err(WriteError::Store(e)) => return Err(e),
            Err(e) => return Err(StoreError::Other(e.to_string().into())),
        };
        let items = query_all(
            self.client
                .query()
                .table_name(&self.datasets_table)
                .key_condition_expression("#pk = :pk AND begins_with(#sk, :v)")
                .expression_attribute_names("#pk", PK)
                .expression_attribute_names("#sk", SK)
                .expression_attribute_values(":pk", AttributeValue::S(dataset_pk(slug.as_str())))
                .expression_attribute_values(":v", AttributeValue::S("V#".into()))
                .consistent_read(true),
        )
        .await?;
        let mut history = Vec::new();
        for item in &items {
            if let Some(version) = ActiveVersion::from_item(item)? {
                let schema = schema_from(item)?;
                let active = current == Some(version.version);
                history.push(
                    VersionSummary::of(&version, &schema, active).map_err(StoreError::Corrupt)?,
                );
            }
        }
        Ok(history)
    }

    async fn describe(
        &self,
        slug: &Slug,
        meta: &DatasetMeta,
        now: DateTime<Utc>,
    ) -> Result<(), EditFailure> {
        let active = self.active_version(slug).await?;
        self.activate(slug, active, Some(active).into(), Some(meta), now)
            .await
            .map_err(|e| failure(slug, e))
    }

    async fn activate(
        &self,
        slug: &Slug,
        version: u64,
        now: DateTime<Utc>,
    ) -> Result<(), EditFailure> {
        let active = self.active_version(slug).await?;
        DynamoWriter::activate(self, slug, version, Some(active).into(), None, now)
            .await
            .map_err(|e| failure(slug, e))
    }
}

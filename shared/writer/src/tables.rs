//! Creating the two tables (the local stack and the tests; template.yaml declares them on AWS),
//! with their indexes and the keys table's time to live.

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection,
    ProjectionType, ScalarAttributeType, TimeToLiveSpecification,
};
use aws_sdk_dynamodb::Client;
use catalog::error::StoreError;
use catalog_aws::dynamo::access::notices::{NOTICES_INDEX, QUEUE};
use catalog_aws::dynamo::layout::name::{
    DATASET, ID, KEY_HASH, ORG, OWNER, PK, PURGE_AT, SK, SLUG, STATUS,
};
use catalog_aws::dynamo::layout::{
    ACCESS_BY_STATUS_INDEX, DATASETS_BY_ORG_INDEX, KEYS_BY_ID_INDEX, KEYS_BY_OWNER_INDEX,
};
use catalog_aws::dynamo::org_datasets::ORG_INDEX_PROJECTION;
use catalog_aws::dynamo::requests::classify;

pub async fn create_tables(
    client: &Client,
    datasets_table: &str,
    keys_table: &str,
) -> Result<(), StoreError> {
    let attr = |name: &str| {
        AttributeDefinition::builder()
            .attribute_name(name)
            .attribute_type(ScalarAttributeType::S)
            .build()
            .map_err(|e| StoreError::Other(Box::new(e)))
    };
    let key = |name: &str, kind: KeyType| {
        KeySchemaElement::builder()
            .attribute_name(name)
            .key_type(kind)
            .build()
            .map_err(|e| StoreError::Other(Box::new(e)))
    };
    // An organisation's datasets (`org`, then `slug`), with what a short entry shows.
    let by_org = GlobalSecondaryIndex::builder()
        .index_name(DATASETS_BY_ORG_INDEX)
        .key_schema(key(ORG, KeyType::Hash)?)
        .key_schema(key(SLUG, KeyType::Range)?)
        .projection(
            Projection::builder()
                .projection_type(ProjectionType::Include)
                .set_non_key_attributes(Some(
                    ORG_INDEX_PROJECTION.iter().map(|a| a.to_string()).collect(),
                ))
                .build(),
        )
        .build()
        .map_err(|e| StoreError::Other(Box::new(e)))?;
    client
        .create_table()
        .table_name(datasets_table)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(attr(PK)?)
        .attribute_definitions(attr(SK)?)
        .attribute_definitions(attr(ORG)?)
        .attribute_definitions(attr(SLUG)?)
        .key_schema(key(PK, KeyType::Hash)?)
        .key_schema(key(SK, KeyType::Range)?)
        .global_secondary_indexes(by_org)
        .send()
        .await
        .map_err(classify)?;
    // An index of the keys table: its keys (hash, then range if any) and what it projects.
    let index = |name: &str, hash: &str, range: Option<&str>, projection: ProjectionType| {
        let mut builder = GlobalSecondaryIndex::builder()
            .index_name(name)
            .key_schema(key(hash, KeyType::Hash)?);
        if let Some(range) = range {
            builder = builder.key_schema(key(range, KeyType::Range)?);
        }
        builder
            .projection(Projection::builder().projection_type(projection).build())
            .build()
            .map_err(|e| StoreError::Other(Box::new(e)))
    };
    let by_id = index(KEYS_BY_ID_INDEX, ID, None, ProjectionType::KeysOnly)?;
    let by_owner = index(KEYS_BY_OWNER_INDEX, OWNER, Some(ID), ProjectionType::All)?;
    let by_status = index(
        ACCESS_BY_STATUS_INDEX,
        STATUS,
        Some(DATASET),
        ProjectionType::All,
    )?;
    // The mailer's outbox: notices only (`queue`, then `key_hash`; no other item has a queue).
    let by_notice = index(NOTICES_INDEX, QUEUE, Some(KEY_HASH), ProjectionType::All)?;
    client
        .create_table()
        .table_name(keys_table)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(attr(KEY_HASH)?)
        .attribute_definitions(attr(ID)?)
        .attribute_definitions(attr(OWNER)?)
        .attribute_definitions(attr(STATUS)?)
        .attribute_definitions(attr(DATASET)?)
        .attribute_definitions(attr(QUEUE)?)
        .key_schema(key(KEY_HASH, KeyType::Hash)?)
        .global_secondary_indexes(by_id)
        .global_secondary_indexes(by_owner)
        .global_secondary_indexes(by_status)
        .global_secondary_indexes(by_notice)
        .send()
        .await
        .map_err(classify)?;
    // Keys that stopped working leave the table after the retention (as template.yaml says).
    client
        .update_time_to_live()
        .table_name(keys_table)
        .time_to_live_specification(
            TimeToLiveSpecification::builder()
                .attribute_name(PURGE_AT)
                .enabled(true)
                .build()
                .map_err(|e| StoreError::Other(Box::new(e)))?,
        )
        .send()
        .await
        .map_err(classify)?;
    Ok(())
}

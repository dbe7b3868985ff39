//! Private datasets mixed into the seeded catalog (`roundtrips --private N`, issue 40: "private
//! datasets must not make a public listing read more than it reads today"). One is published
//! through the writer's publish (the operators' path: a private dataset's activation writes its
//! item and alias, no list entry); the other N − 1 are copies of its items (dataset, alias,
//! version) under their own slugs `acme~private-NNNNNN` and UUIDs, written with
//! BatchWriteItem, so that they have exactly the shape the writer gives. None is in any list,
//! counter, text index or kept order: the cases then run on the same lists as without them,
//! and the listing's `total` check (`cases::measure`) proves they are not counted. Last, the
//! organisation's index is read (`DatasetsTable::org_datasets`): one Query, paged.

use std::collections::HashMap;
use std::time::Instant;

use aws_sdk_dynamodb::types::{AttributeValue, PutRequest, WriteRequest};
use catalog::input::Slug;
use catalog::policy::AccessLevel;
use catalog::records::{ActiveVersion, DatasetMeta};
use catalog::slug::OrgName;
use catalog_aws::dynamo::codec::prelude::*;
use catalog_aws::dynamo::layout::name::{ID, NAME, ORG, PK, SEQ, SLUG};
use catalog_aws::dynamo::layout::{alias_pk, dataset_pk, key_of, version_sk, DATASET_SK};
use catalog_aws::dynamo::DatasetsTable;
use catalog_tests::Stack;
use catalog_writer::{NewVersion, Publication, Staged, WriteError};
use chrono::Utc;
use uuid::Uuid;

use super::seed::write_batch;

type Item = HashMap<String, AttributeValue>;

/// The published dataset whose version the private ones point at (its object exists).
const TEMPLATE: &str = "air-quality-hourly";

fn slug(i: u64) -> String {
    format!("acme~private-{i:06}")
}

/// Publishes `private` private datasets of the organisation `acme` (see the module's
/// documentation), and prints how long it took and what reading the organisation's index
/// cost.
pub(super) async fn seed(stack: &Stack, private: u64) -> Result<(), String> {
    let started = Instant::now();
    let table = &stack.target.datasets_table;
    let get = |pk: String, sk: String| async move {
        stack
            .dynamo
            .get_item()
            .table_name(table)
            .set_key(Some(key_of(pk, &sk)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| format!("get: {e:?}"))?
            .item
            .ok_or_else(|| "missing item".to_string())
    };
    // The template's stored metadata and active version, published again as a private
    // dataset of `acme` through the writer.
    let template = get(dataset_pk(TEMPLATE), DATASET_SK.to_owned()).await?;
    let active = ActiveVersion::from_item(&template)
        .map_err(|e| e.to_string())?
        .ok_or("the template has no active version")?;
    let mut meta = DatasetMeta::from_item(&template).map_err(|e| e.to_string())?;
    meta.card.access_level = AccessLevel::Private;
    meta.card.name = "Private dataset 1".into();
    let first = Slug::parse(&slug(1)).map_err(|e| e.to_string())?;
    let writer = stack.writer();
    let publication = Publication {
        slug: &first,
        meta: &meta,
        id: None,
        new_only: true,
        now: Utc::now(),
    };
    let meta_for_upload = meta.clone();
    writer
        .publish(publication, |reserved| async move {
            let mut active = active;
            active.version = reserved.version;
            Ok::<_, WriteError>(Staged {
                version: NewVersion {
                    active,
                    schema_json: "[]".into(),
                },
                meta: meta_for_upload,
            })
        })
        .await
        .map_err(|e| format!("publishing {first}: {e}"))?;
    // Its items, as the writer wrote them: the templates of the copies.
    let dataset = get(dataset_pk(first.as_str()), DATASET_SK.to_owned()).await?;
    if dataset.contains_key(SEQ) && !matches!(dataset.get(SEQ), Some(AttributeValue::Null(_))) {
        return Err(format!("{first} was listed: {:?}", dataset.get(SEQ)));
    }
    let id = dataset
        .get(ID)
        .and_then(|v| v.as_s().ok())
        .ok_or("no id")?
        .clone();
    let id = Uuid::parse_str(&id).map_err(|e| e.to_string())?;
    let alias = get(alias_pk(&id), DATASET_SK.to_owned()).await?;
    let version = get(dataset_pk(first.as_str()), version_sk(1)).await?;

    let copy = |i: u64| -> Vec<Item> {
        let id = Uuid::new_v4();
        let s = |v: String| AttributeValue::S(v);
        let mut d = dataset.clone();
        d.insert(PK.into(), s(dataset_pk(&slug(i))));
        d.insert(SLUG.into(), s(slug(i)));
        d.insert(ID.into(), s(id.to_string()));
        d.insert(NAME.into(), s(format!("Private dataset {i}")));
        let mut a = alias.clone();
        a.insert(PK.into(), s(alias_pk(&id)));
        a.insert(SLUG.into(), s(slug(i)));
        a.insert(ID.into(), s(id.to_string()));
        a.insert(NAME.into(), s(format!("Private dataset {i}")));
        debug_assert!(!a.contains_key(ORG));
        let mut v = version.clone();
        v.insert(PK.into(), s(dataset_pk(&slug(i))));
        vec![d, a, v]
    };
    // 8 datasets (24 items) per BatchWriteItem, 8 at once.
    const PER_BATCH: u64 = 8;
    const CONCURRENCY: usize = 8;
    let mut next = 2;
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        while tasks.len() < CONCURRENCY && next <= private {
            let last = (next + PER_BATCH - 1).min(private);
            let mut batch = Vec::new();
            for i in next..=last {
                for item in copy(i) {
                    let put = PutRequest::builder()
                        .set_item(Some(item))
                        .build()
                        .map_err(|e| e.to_string())?;
                    batch.push(WriteRequest::builder().put_request(put).build());
                }
            }
            next = last + 1;
            let client = stack.dynamo.clone();
            let table = table.to_owned();
            tasks.spawn(async move { write_batch(&client, &table, batch).await });
        }
        match tasks.join_next().await {
            Some(result) => result.map_err(|e| e.to_string())??,
            None => break,
        }
    }
    println!(
        "Private: {private} datasets of acme (1 published by the writer, {} copies of its items) in {:.1} s; in no list.",
        private - 1,
        started.elapsed().as_secs_f64()
    );
    // The organisation's index: every one of them, in one Query (paged past 1 MB).
    let wire = catalog_tests::Wire::default();
    let reader = DatasetsTable::new(stack.dynamo_client(&wire), table);
    let started = Instant::now();
    let listed = reader
        .org_datasets(&OrgName::parse("acme").map_err(|e| e.to_string())?)
        .await
        .map_err(|e| e.to_string())?;
    let ms = started.elapsed().as_millis();
    if listed.len() as u64 != private {
        return Err(format!(
            "org_datasets(acme): {} datasets, not {private}",
            listed.len()
        ));
    }
    let calls = wire.take_calls();
    let bytes: usize = calls.iter().map(|c| c.bytes).sum();
    println!(
        "org_datasets(acme): {} datasets, {} Query pages, {:.2} MB, {ms} ms.",
        listed.len(),
        calls.len(),
        bytes as f64 / 1e6
    );
    Ok(())
}

//! Keeping the listings' orders by name, update and downloads ([`catalog_search::order`], stored as
//! [`catalog_search::orders`]).
//!
//! - **A change** to a listed dataset (an activation, a keyless window, an access level, a
//!   download count) moves it in the orders after the change's transaction, before the
//!   catalog's `rev` is bumped: [`DynamoWriter::index_orders`] reads its list entry, the three
//!   manifests and where it is (its `at#` item) in one request; for each order its key moved
//!   in, the chunks it leaves and joins; then it writes their replacements under the next
//!   generation's ids, and moves the manifests and its `at#` item in one transaction
//!   conditioned on what it read. It reads and writes a few chunks whatever the catalog's
//!   size. Two writers at once: one loses the condition, deletes what it wrote and starts
//!   again. Then what the new generation replaced is deleted.
//! - **`reindex`** (and so every take-down) builds the orders whole from the catalog list
//!   ([`DynamoWriter::rebuild_orders`]), then deletes what earlier generations left and the
//!   `at#` items of positions past the list's end.
//!
//! A catalog listed before the orders existed has no manifests and no `orders_indexed` mark on
//! its counter: changes leave it alone until `reindex` builds them (sorted listings read a
//! whole list meanwhile). A catalog whose first listing came with the orders is marked, and its
//! first change creates them.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{AttributeValue, Put, TransactWriteItem};
use catalog::error::StoreError;
use catalog::input::Slug;
use catalog::records::DatasetSummary;
use catalog_aws::dynamo::layout::name::{ORDERS_INDEXED, PK, SK};
use catalog_aws::dynamo::layout::{counter_key, key_of, list_sk, Item, COUNTER_PK, LIST_PK};
use catalog_aws::dynamo::requests::{classify, query_all};
use catalog_aws::dynamo::retry::Attempt;
use catalog_search::order::{self, Chunk, Key, Sorted};
use catalog_search::orders::{
    at_item, at_keys, at_seq, at_sk, blob_generation, chunk_items, order_error, ChunkRef,
    OrderManifest, ORDER_PK,
};

use crate::error::WriteError;
use crate::text::nonce;
use crate::tx::{is_condition_failure, other, put_request};
use crate::writer::DynamoWriter;
use catalog_aws::dynamo::codec::prelude::*;

/// What `rebuild_orders` reports when a change moved a manifest while it built from the list
/// as read: `reindex` reads the list again and builds again.
pub(crate) const MOVED_WHILE_BUILT: &str =
    "the kept orders (a change moved them while reindex built them)";

/// What building the orders whole did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OrdersRebuilt {
    /// How many datasets each order holds, and in how many chunks.
    pub datasets: u64,
    pub chunks: usize,
    /// How many items of earlier generations (and `at#` items past the list) were deleted.
    pub swept: usize,
}

/// One order's next generation, not yet committed.
struct Next {
    manifest: OrderManifest,
    read: OrderManifest,
    replaced: Vec<Item>,
}

impl DynamoWriter {
    /// Puts a listed dataset where its list entry, as it is now, belongs in every order: see
    /// the module's documentation. Retried when another writer moved a manifest first.
    pub async fn index_orders(&self, slug: &Slug) -> Result<(), WriteError> {
        crate::patience::RACE
            .run(
                (),
                |()| async {
                    let stored = self.stored_dataset(slug).await?;
                    let Some(seq) = stored.seq.filter(|_| !stored.unpublished) else {
                        return Ok(Attempt::Done(()));
                    };
                    Ok(match self.index_orders_once(seq).await? {
                        true => Attempt::Done(()),
                        false => Attempt::Retry(()),
                    })
                },
                |()| WriteError::Raced("the kept orders".into()),
            )
            .await
    }

    /// One attempt: `false` when another writer moved a manifest first.
    async fn index_orders_once(&self, seq: u64) -> Result<bool, WriteError> {
        let mut keys = vec![
            key_of(LIST_PK, &list_sk(seq)),
            counter_key(COUNTER_PK),
            key_of(ORDER_PK, &at_sk(seq)),
        ];
        keys.extend(Sorted::ALL.map(OrderManifest::key));
        let found = self.get_keys(keys).await?;
        let get = |pk: &str, sk: &str| {
            found.iter().find(|item| {
                matches!(item.get(PK), Some(AttributeValue::S(v)) if v == pk)
                    && matches!(item.get(SK), Some(AttributeValue::S(v)) if v == sk)
            })
        };
        let Some(entry) = get(LIST_PK, &list_sk(seq)) else {
            return Ok(true);
        };
        let mut summary = DatasetSummary::from_item(entry)?;
        summary.seq = seq;
        let read: Vec<Option<OrderManifest>> = Sorted::ALL
            .iter()
            .map(|sort| {
                get(ORDER_PK, sort.as_str())
                    .map(OrderManifest::from_item)
                    .transpose()
            })
            .collect::<Result<_, _>>()?;
        let read: Vec<OrderManifest> = match read.iter().filter(|m| m.is_some()).count() {
            0 => {
                let marked =
                    get(COUNTER_PK, catalog_aws::dynamo::layout::COUNTER_SK).is_some_and(|c| {
                        matches!(c.get(ORDERS_INDEXED), Some(AttributeValue::Bool(true)))
                    });
                if !marked {
                    tracing::warn!(
                        "the catalog keeps no orders yet: run `catalog-admin datasets reindex`"
                    );
                    return Ok(true);
                }
                Sorted::ALL.map(OrderManifest::empty).to_vec()
            }
            3 => read.into_iter().flatten().collect(),
            _ => {
                return Err(StoreError::Corrupt(
                    "order: a manifest is missing (run `catalog-admin datasets reindex`)".into(),
                )
                .into())
            }
        };
        let at = get(ORDER_PK, &at_sk(seq));
        let old: Option<Vec<Key>> = at.map(at_keys).transpose()?;
        let new: Vec<Key> = Sorted::ALL.iter().map(|s| s.key(&summary)).collect();
        if old.as_ref() == Some(&new) {
            return Ok(true);
        }
        // The chunks each moved order rewrites, in one read.
        let mut wanted = Vec::new();
        let mut touched: Vec<Vec<usize>> = Vec::new();
        for (i, manifest) in read.iter().enumerate() {
            let was = old.as_ref().map(|o| &o[i]);
            let t = match was == Some(&new[i]) {
                true => Vec::new(),
                false => order::touched(&manifest.bounds(), was, &new[i]),
            };
            wanted.extend(
                t.iter()
                    .flat_map(|c| manifest.chunks[*c].keys.keys_in(ORDER_PK)),
            );
            touched.push(t);
        }
        let chunks = self.get_keys(wanted).await?;
        let nonce = nonce();
        let mut items = Vec::new();
        let mut next = Vec::new();
        for (i, manifest) in read.into_iter().enumerate() {
            let was = old.as_ref().map(|o| &o[i]);
            if was == Some(&new[i]) {
                continue;
            }
            let mut loaded = BTreeMap::new();
            for c in &touched[i] {
                let Some(bytes) = manifest.chunks[*c].keys.join_in(ORDER_PK, &chunks)? else {
                    return Ok(false);
                };
                loaded.insert(*c, Chunk::from_keys_bytes(&bytes).map_err(order_error)?);
            }
            let replacements = order::edit(&manifest.bounds(), loaded, seq, was, new[i].clone())
                .map_err(order_error)?;
            let (step, written) = successor(&manifest, replacements, &nonce)?;
            items.extend(written);
            next.push(step);
        }
        if !self.commit_orders(&next, items, seq, at, &new).await? {
            return Ok(false);
        }
        let replaced: Vec<Item> = next.into_iter().flat_map(|n| n.replaced).collect();
        if let Err(e) = self.delete_keys(replaced).await {
            tracing::warn!(error = %e, "the kept orders' replaced chunks were not all deleted");
        }
        Ok(true)
    }

    /// Writes a generation's chunks, then moves the manifests and the `at#` item of `seq` to
    /// `keys` in one transaction, conditioned on the manifests' generations and the `at#` item
    /// as read. `false` (its chunks deleted again) when another writer moved one first.
    async fn commit_orders(
        &self,
        next: &[Next],
        items: Vec<Item>,
        seq: u64,
        at: Option<&Item>,
        keys: &[Key],
    ) -> Result<bool, StoreError> {
        let mut transaction = Vec::new();
        for step in next {
            transaction.push(self.manifest_put(&step.manifest, &step.read)?);
        }
        let mut put = Put::builder()
            .table_name(&self.datasets_table)
            .set_item(Some(at_item(seq, keys)?));
        put = match at.and_then(|item| item.get("keys")) {
            Some(was) => put
                .condition_expression("#keys = :was")
                .expression_attribute_names("#keys", "keys")
                .expression_attribute_values(":was", was.clone()),
            None => put.condition_expression(format!("attribute_not_exists({PK})")),
        };
        transaction.push(
            TransactWriteItem::builder()
                .put(put.build().map_err(other)?)
                .build(),
        );
        self.write_then_commit(items, transaction).await
    }

    /// Writes `items`, then sends `transaction`; when one of its conditions fails (another
    /// writer moved first), deletes the items again and answers `false`.
    async fn write_then_commit(
        &self,
        items: Vec<Item>,
        transaction: Vec<TransactWriteItem>,
    ) -> Result<bool, StoreError> {
        let written: Vec<Item> = items.iter().cloned().map(key_only).collect();
        let puts = items
            .into_iter()
            .map(put_request)
            .collect::<Result<Vec<_>, _>>()?;
        self.batch_write(puts).await?;
        match self
            .client
            .transact_write_items()
            .client_request_token(crate::tx::token())
            .set_transact_items(Some(transaction))
            .send()
            .await
        {
            Ok(_) => Ok(true),
            Err(e) if is_condition_failure(e.code()) => {
                self.delete_keys(written).await?;
                Ok(false)
            }
            Err(e) => Err(classify(e)),
        }
    }

    /// Builds every order whole from these list entries (every listed dataset): writes every
    /// dataset's `at#` item, then the chunks, moves the manifests to them, then deletes what
    /// earlier generations left.
    pub async fn rebuild_orders(
        &self,
        listed: &[DatasetSummary],
    ) -> Result<OrdersRebuilt, WriteError> {
        let built: Vec<Vec<Chunk>> = Sorted::ALL
            .iter()
            .map(|sort| order::build(listed.iter().map(|s| (sort.key(s), s.seq)).collect()))
            .collect();
        // Where each dataset is, as built, before the manifests name the build: a change in
        // between finds its `at#` item ahead of the manifest it reads and fails (`reindex`
        // again repairs it), where the other way round an interrupted build would leave
        // datasets with no `at#` item, which a later change would put in twice.
        let ats = listed
            .iter()
            .map(|s| {
                let keys: Vec<Key> = Sorted::ALL.iter().map(|sort| sort.key(s)).collect();
                at_item(s.seq, &keys).and_then(put_request)
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.batch_write(ats).await?;
        let generations = crate::patience::RACE
            .run(
                (),
                |()| async {
                    let read = self.get_keys(Sorted::ALL.map(OrderManifest::key).to_vec()).await?;
                    let nonce = nonce();
                    let mut items = Vec::new();
                    let mut transaction = Vec::new();
                    let mut generations = Vec::new();
                    for (sort, chunks) in Sorted::ALL.iter().zip(&built) {
                        let stored = read
                            .iter()
                            .find(|item| {
                                matches!(item.get(SK), Some(AttributeValue::S(v)) if v == sort.as_str())
                            })
                            .map(OrderManifest::from_item)
                            .transpose()?
                            .unwrap_or_else(|| OrderManifest::empty(*sort));
                        let generation = stored.generation + 1;
                        let mut refs = Vec::with_capacity(chunks.len());
                        for (i, chunk) in chunks.iter().enumerate() {
                            if let Some((r, written)) =
                                chunk_items(*sort, generation, &nonce, i, chunk)?
                            {
                                refs.push(r);
                                items.extend(written);
                            }
                        }
                        let manifest = OrderManifest {
                            sort: *sort,
                            generation,
                            datasets: listed.len() as u64,
                            chunks: refs,
                        };
                        transaction.push(self.manifest_put(&manifest, &stored)?);
                        generations.push(generation);
                    }
                    // The build is from the list as read: a writer that moved a manifest since
                    // (a change committed before `reindex` took the list) may have moved a
                    // dataset it holds elsewhere, so it is not committed over that.
                    match self.write_then_commit(items, transaction).await? {
                        true => Ok(Attempt::Done(generations)),
                        false => Err(WriteError::Raced(MOVED_WHILE_BUILT.into())),
                    }
                },
                |()| WriteError::Raced("the kept orders".into()),
            )
            .await?;
        let swept = match self.sweep_orders(&generations, listed.len() as u64).await {
            Ok(swept) => swept,
            Err(e) => {
                tracing::warn!(error = %e, "the kept orders' stale items were not all deleted");
                0
            }
        };
        Ok(OrdersRebuilt {
            datasets: listed.len() as u64,
            chunks: built.iter().map(Vec::len).sum(),
            swept,
        })
    }

    /// The put of `manifest` in a transaction, on the condition that the stored manifest is
    /// still `read`.
    fn manifest_put(
        &self,
        manifest: &OrderManifest,
        read: &OrderManifest,
    ) -> Result<TransactWriteItem, StoreError> {
        let (condition, value) = read.condition();
        let mut put = Put::builder()
            .table_name(&self.datasets_table)
            .set_item(Some(manifest.to_item()?))
            .condition_expression(condition);
        if let Some(value) = value {
            put = put.expression_attribute_values(":generation", value);
        }
        Ok(TransactWriteItem::builder()
            .put(put.build().map_err(other)?)
            .build())
    }

    /// Deletes every chunk of a generation up to the one built that no manifest names, and
    /// the `at#` items of positions past `listed`.
    async fn sweep_orders(&self, built: &[u64], listed: u64) -> Result<usize, StoreError> {
        let mut named = BTreeSet::new();
        for item in self
            .get_keys(Sorted::ALL.map(OrderManifest::key).to_vec())
            .await?
        {
            let manifest = OrderManifest::from_item(&item)?;
            named.extend(
                manifest
                    .blobs()
                    .flat_map(|b| b.keys_in(ORDER_PK))
                    .filter_map(|k| match k.get(SK) {
                        Some(AttributeValue::S(sk)) => Some(sk.clone()),
                        _ => None,
                    }),
            );
        }
        let stored = query_all(
            self.client
                .query()
                .table_name(&self.datasets_table)
                .key_condition_expression(format!("{PK} = :pk"))
                .expression_attribute_values(":pk", catalog_aws::dynamo::attr::s(ORDER_PK))
                .projection_expression(format!("{PK}, {SK}"))
                .consistent_read(true),
        )
        .await?;
        // Each order's generations drift apart: a chunk is stale up to its own order's build.
        let built_by_order: HashMap<Sorted, u64> =
            Sorted::ALL.into_iter().zip(built.iter().copied()).collect();
        let stale: Vec<Item> = stored
            .iter()
            .filter_map(|item| match item.get(SK) {
                Some(AttributeValue::S(sk)) => Some(sk.clone()),
                _ => None,
            })
            .filter(|sk| match (blob_generation(sk), at_seq(sk)) {
                (Some((sort, g)), _) => {
                    !named.contains(sk) && built_by_order.get(&sort).is_some_and(|b| g <= *b)
                }
                (None, Some(seq)) => seq > listed,
                (None, None) => false,
            })
            .map(|sk| key_of(ORDER_PK, &sk))
            .collect();
        let swept = stale.len();
        self.delete_keys(stale).await?;
        Ok(swept)
    }
}

/// An item's key alone.
fn key_only(mut item: Item) -> Item {
    item.retain(|name, _| name == PK || name == SK);
    item
}

/// The next generation of `read`, with `replacements` spliced in: the manifest, the items it
/// writes, and the keys of the chunks it replaces.
fn successor(
    read: &OrderManifest,
    replacements: order::Replacements,
    nonce: &str,
) -> Result<(Next, Vec<Item>), StoreError> {
    let generation = read.generation + 1;
    let mut chunks: Vec<ChunkRef> = read.chunks.clone();
    let mut items = Vec::new();
    let mut replaced = Vec::new();
    for (at, with) in replacements.into_iter().rev() {
        let mut refs = Vec::new();
        for (k, chunk) in with.iter().enumerate() {
            if let Some((r, written)) =
                chunk_items(read.sort, generation, nonce, at * 4 + k, chunk)?
            {
                refs.push(r);
                items.extend(written);
            }
        }
        match chunks.get(at) {
            Some(old) => {
                replaced.extend(old.seqs.keys_in(ORDER_PK));
                replaced.extend(old.keys.keys_in(ORDER_PK));
                chunks.splice(at..=at, refs);
            }
            None => chunks.extend(refs),
        }
    }
    let datasets = chunks.iter().map(|c| u64::from(c.bounds.len)).sum();
    Ok((
        Next {
            manifest: OrderManifest {
                sort: read.sort,
                generation,
                datasets,
                chunks,
            },
            read: read.clone(),
            replaced,
        },
        items,
    ))
}

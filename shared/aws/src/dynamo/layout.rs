//! The datasets and keys tables' layout: item keys, shared by the functions (which read) and
//! `catalog-writer` (which writes). docs/data-model.md states the invariants these items keep.
//!
//! Datasets table (`pk`, `sk`, both strings):
//!
//! | item | pk | sk | holds |
//! |---|---|---|---|
//! | dataset | `DS#<slug>` | `DATASET` | metadata, `keyless_until`, the active version (`active` map) and its `schema`, `id` (UUID), `seq` |
//! | dataset alias | `ID#<uuid>` | `DATASET` | the same attributes, so a UUID resolves in one strongly consistent read |
//! | version | `DS#<slug>` | `V#<version, 10 digits>` | one immutable published version |
//! | manifest part | `DS#<slug>` | `M#<version, 10 digits>#F#<chunk, 6 digits>#<part>` (files) or `…#S#…` (statistics) | `bytes`: part of a many-file version's chunk, deflated JSON ([`super::manifest`]) |
//! | list entry | `LIST` | `SEQ#<seq, 12 digits>` | the summary shown by the list endpoint |
//! | counter | `CATALOG` | `COUNTER` | `total`: how many datasets are listed; `rev`: bumped by every write to a list |
//! | catalog list mark | `CATALOG` | `REBUILD` | `rebuild_until` while a renumbering holds the catalog list |
//! | facet list entry | `LIST#<facet>#<value>` | `SEQ#<position, 12 digits>` | the summary, and `seq`, its position in `LIST` |
//! | facet counter | `CATALOG#<facet>#<value>` | `COUNTER` | `total`: how many datasets the facet list holds; `rebuild_until`: a rewrite's mark |
//! | facet summary | `CATALOG` | `FACETS` | per facet value, `n#<facet>#<value>`: its facet counter's `total`, and `d#<facet>#<value>`: its display form when not the value itself; `complete` once it holds every value; `full` when it could not ([`catalog::query::FacetCounts`]) |
//!
//! Keys table (`key_hash`, string):
//!
//! | item | key_hash | holds |
//! |---|---|---|
//! | API key | SHA-256 of the key, 64 hex digits | `id`, `prefix`, `label`, `scopes`, `created_at`, `expires_at`, `revoked_at`, `last_used_at`; `owner` (a Cognito `sub`) for an account's key |
//! | account | `ACCOUNT#<sub>` | `owner`; `active_keys`: one `<expiry, unix seconds>/<key id>` per active key, at most [`catalog::accounts::MAX_ACTIVE_KEYS`] |
//! | idempotency | `IDEMPOTENCY#<sub>#<SHA-256 of the Idempotency-Key>` | `issued`: the hash of the key's current secret; `fingerprint`: the request's; `purge_at`: a day later |
//! | creations | `CREATIONS#<sub>#<UTC day>` | `creations`: keys the account created that day, at most [`catalog::accounts::MAX_KEYS_PER_DAY`]; `purge_at`: two days later |
//! | access record | `GRANT#<dataset uuid>#<sub>` | `dataset`, `slug`, `grantee`, `owner` (the same `sub`), `id` (`access#<dataset uuid>`), `email`, `status`, `requested_at`, `answers`, `terms_accepted`, `expires_at`, `decided_by`, `decided_at`, `reason`, `rev`: an account's request for and grant of an `approval` dataset ([`catalog::grants`]) |
//!
//! Indexes: [`KEYS_BY_ID_INDEX`] (`id`, keys only) for operators' revocation by id;
//! [`KEYS_BY_OWNER_INDEX`] (`owner`, `id`, all attributes) for an account's keys (ids
//! `key_…`) and its access records (ids `access#…`), each in one Query;
//! [`ACCESS_BY_STATUS_INDEX`] (`status`, `dataset`, all attributes) for operators' lists of
//! requests and grants. Account items have no `id` and no `status`, so no index holds them.

use std::collections::HashMap;

use uuid::Uuid;

pub use super::attr::Item;
use super::attr::{get_s, s};
use catalog::error::StoreError;
use catalog::query::Facet;

/// Attribute names, spelled here and nowhere else: readers and writers name attributes through
/// these (and the item codecs in [`super::codec`]).
pub mod name {
    // Keys of the datasets table.
    pub const PK: &str = "pk";
    pub const SK: &str = "sk";
    // A dataset item (and its alias), list entries and facet list entries.
    pub const SLUG: &str = "slug";
    pub const ID: &str = "id";
    /// A dataset's (or a facet entry's) position in the catalog list.
    pub const SEQ: &str = "seq";
    pub const CREATED_AT: &str = "created_at";
    pub const UPDATED_AT: &str = "updated_at";
    pub const KEYLESS_UNTIL: &str = "keyless_until";
    /// On a dataset item (and its alias): when an operator unpublished it. Every route then
    /// answers 410 `unpublished`; its versions are kept, so that it can be restored.
    pub const UNPUBLISHED_AT: &str = "unpublished_at";
    /// On a dataset item, its alias and its list entries: its downloads over the last 30 days,
    /// as the daily count last set it (absent: none).
    pub const DOWNLOADS: &str = "downloads_30d";
    /// On a catalog list entry: its dataset left the catalog (unpublished or deleted), and the
    /// renumbering that closes the gap it leaves has not run yet.
    pub const WITHDRAWN: &str = "withdrawn";
    /// On a dataset item (and its alias): the versions that may be read by number, each
    /// activated and not withdrawn since, as ranges (`1-3,5`), set by every activation
    /// ([`super::super::codec::ServedVersions`]; absent: the active version alone).
    pub const SERVED_VERSIONS: &str = "served_versions";
    /// The last version number reserved.
    pub const LATEST_VERSION: &str = "latest_version";
    /// The active version, as a map (on a version item: the version itself) of the fields
    /// below, from `VERSION` to `PUBLISHED_AT`, and `SIZE`, `ROW_COUNT`, `COLUMN_COUNT`.
    pub const ACTIVE: &str = "active";
    pub const VERSION: &str = "version";
    pub const S3_KEY: &str = "s3_key";
    pub const COLUMNS: &str = "columns";
    pub const SHA256: &str = "sha256";
    pub const PUBLISHED_AT: &str = "published_at";
    /// The schema as text, or deflate-compressed ([`super::super::codec::schema_attributes`]).
    pub const SCHEMA: &str = "schema";
    pub const SCHEMA_Z: &str = "schema_z";
    pub const NAME: &str = "name";
    pub const DESCRIPTION: &str = "description";
    pub const CATEGORY: &str = "category";
    pub const TAGS: &str = "tags";
    pub const LICENSE: &str = "license";
    pub const SOURCE: &str = "source";
    pub const INSIGHTS: &str = "insights";
    /// Discussions, as JSON text.
    pub const DISCUSSIONS: &str = "discussions";
    /// On a dataset item and its alias only (never a list entry): the dataset's card, its
    /// Markdown README (`catalog::readme`, at most 32 KiB); absent or NULL: no card.
    pub const README: &str = "readme";
    pub const SIZE: &str = "size";
    /// On a many-file version's item: its manifest's summary (deflated JSON,
    /// [`catalog::files::Summary`]; [`super::super::manifest::summary_value`]).
    pub const FILES: &str = "files";
    /// On a list entry: a version of many files in brief (JSON text of
    /// `catalog::files::FilesBrief`); NULL or absent for a version of one file.
    pub const FILES_BRIEF: &str = "files_brief";
    /// On a manifest part item: up to [`super::super::manifest::PART_BYTES`] of a chunk's
    /// deflated files or statistics.
    pub const BYTES: &str = "bytes";
    pub const ROW_COUNT: &str = "row_count";
    pub const COLUMN_COUNT: &str = "column_count";
    /// Who may read the data (`approval`; absent: `registered`), on the dataset, its alias and
    /// its list entries.
    pub const ACCESS_LEVEL: &str = "access_level";
    /// An `approval` dataset's policy (approval mode, request form, terms), as JSON text.
    pub const ACCESS_POLICY: &str = "access_policy";
    // Counters.
    /// How many entries a list holds.
    pub const TOTAL: &str = "total";
    /// The catalog's revision, bumped by every write to a list; on an access record, bumped by
    /// every write to it.
    pub const REV: &str = "rev";
    /// On the catalog counter: the facet lists were built (first listing, or `reindex`).
    pub const FACETS_INDEXED: &str = "facets_indexed";
    /// On the catalog counter: the text index follows every listing from the first (set by a
    /// catalog's first listing; a catalog listed before the index has none until `reindex`
    /// builds it).
    pub const TEXT_INDEXED: &str = "text_indexed";
    /// On the catalog counter: the kept orders follow every listing from the first (likewise).
    pub const ORDERS_INDEXED: &str = "orders_indexed";
    /// On a facet counter, and on the catalog list's mark item: until when a rewrite holds the
    /// list.
    pub const REBUILD_UNTIL: &str = "rebuild_until";
    /// On the facet summary: it holds every facet value (set by a catalog's first listing and
    /// by `reindex`).
    pub const COMPLETE: &str = "complete";
    /// On the facet summary: it could not hold every value within its budget, and writers
    /// leave it alone (until `reindex` finds that it fits again).
    pub const FULL: &str = "full";
    // The keys table.
    /// Its partition key: a key's SHA-256, or `ACCOUNT#<sub>` for an account's item.
    pub const KEY_HASH: &str = "key_hash";
    pub const PREFIX: &str = "prefix";
    pub const LABEL: &str = "label";
    pub const SCOPES: &str = "scopes";
    pub const EXPIRES_AT: &str = "expires_at";
    pub const REVOKED_AT: &str = "revoked_at";
    pub const LAST_USED_AT: &str = "last_used_at";
    /// When DynamoDB's time to live deletes a key that stopped working (unix seconds).
    pub const PURGE_AT: &str = "purge_at";
    /// The only datasets a key reads (their slugs), when it is limited to some.
    pub const DATASETS: &str = "datasets";
    // Grants, in the keys table.
    /// The dataset's UUID.
    pub const DATASET: &str = "dataset";
    /// The account (a Cognito `sub`) the grant is for.
    pub const GRANTEE: &str = "grantee";
    /// The account's email when the decision was made, for operators' reports.
    pub const EMAIL: &str = "email";
    /// `pending`, `granted`, `rejected`, `revoked` or `withdrawn` ([`catalog::grants::AccessStatus`]).
    pub const STATUS: &str = "status";
    /// When the account asked (absent on a grant made without a request).
    pub const REQUESTED_AT: &str = "requested_at";
    /// The answers to the dataset's request form: a map of strings.
    pub const ANSWERS: &str = "answers";
    /// Whether the dataset's terms were accepted when asking.
    pub const TERMS_ACCEPTED: &str = "terms_accepted";
    /// Why a request was rejected.
    pub const REASON: &str = "reason";
    /// Who made the last decision (an operator's name or `catalog-admin`), and when.
    pub const DECIDED_BY: &str = "decided_by";
    pub const DECIDED_AT: &str = "decided_at";
    /// An account key's owner (a Cognito `sub`); on an account's item, the account.
    pub const OWNER: &str = "owner";
    /// On an account item: the string set of its active keys' slots ([`super::key_slot`]).
    pub const ACTIVE_KEYS: &str = "active_keys";
    /// On an account item: when an operator disabled it.
    pub const DISABLED_AT: &str = "disabled_at";
    /// On a day's creations item: how many keys the account created that day.
    pub const CREATIONS: &str = "creations";
    /// On an idempotency item: the hash of the key's current secret, and the request's
    /// fingerprint.
    pub const ISSUED: &str = "issued";
    pub const FINGERPRINT: &str = "fingerprint";
    // Organisations and memberships, in the keys table (docs/organisations.md).
    /// On an organisation's item and a membership: the organisation's name.
    pub const ORG: &str = "org";
    /// On an organisation's item: how the site titles it.
    pub const DISPLAY_NAME: &str = "display_name";
    /// On an organisation's item: how many members it has.
    pub const MEMBERS: &str = "members";
    /// On a membership: `member`, `editor` or `admin` ([`catalog::orgs::Role`]).
    pub const ROLE: &str = "role";
    /// Who made the organisation or the membership, and when.
    pub const CREATED_BY: &str = "created_by";
    pub const ADDED_BY: &str = "added_by";
    pub const ADDED_AT: &str = "added_at";
}

pub const DATASET_SK: &str = "DATASET";
pub const LIST_PK: &str = "LIST";
pub const COUNTER_PK: &str = "CATALOG";
pub const COUNTER_SK: &str = "COUNTER";
/// The catalog list's mark item (`CATALOG`, `REBUILD`): `rebuild_until` while a renumbering
/// holds the list. Apart from the counter, so that marking never conflicts with the counter's
/// updates.
pub const LIST_MARK_SK: &str = "REBUILD";
/// The facet summary's sort key, beside the catalog counter (pk [`COUNTER_PK`]).
pub const FACETS_SK: &str = "FACETS";
/// The datasets table's index of organisations' datasets (`org`, then `slug`), projecting
/// what a short entry shows (`catalog::records::OrgDataset`): an organisation's datasets,
/// private ones included, in one Query. Only a dataset item of an organisation's dataset has
/// an `org` (not its alias, versions or list entries), so it holds nothing else.
pub const DATASETS_BY_ORG_INDEX: &str = "by-org";
/// The keys table's index by public key id (`id`), keys only: revocation by id reads it.
pub const KEYS_BY_ID_INDEX: &str = "by-id";
/// The keys table's index by owner (`owner`, then `id`), all attributes: an account's keys in
/// one Query.
pub const KEYS_BY_OWNER_INDEX: &str = "by-owner";
/// The keys table's index of access records by status (`status`, then `dataset`), all
/// attributes: the requests pending, the grants of a dataset. Only access records have a
/// `status`.
pub const ACCESS_BY_STATUS_INDEX: &str = "by-status";
/// What an access record's `id` begins with in the owner index (a key's is `key_`).
pub const ACCESS_ID_PREFIX: &str = "access#";
/// What a membership's `id` begins with in the owner index.
pub const MEMBERSHIP_ID_PREFIX: &str = "org#";

/// An access record's `id`: its dataset, within the account's records.
pub fn access_id(dataset: &Uuid) -> String {
    format!("{ACCESS_ID_PREFIX}{dataset}")
}

pub fn dataset_pk(slug: &str) -> String {
    format!("DS#{slug}")
}

pub fn alias_pk(id: &Uuid) -> String {
    format!("ID#{id}")
}

pub fn version_sk(version: u64) -> String {
    format!("V#{version:010}")
}

/// What every manifest item of version `version` starts its sort key with: `M#<version, 10
/// digits>#` (not `V#`, so that a Query of a dataset's versions does not read its manifests).
pub fn manifest_prefix(version: u64) -> String {
    format!("M#{version:010}#")
}

/// A part of chunk `chunk`'s files (`F`) or statistics (`S`) of version `version`'s manifest:
/// `M#<version, 10 digits>#F#<chunk, 6 digits>#<part>`.
pub fn manifest_part_sk(version: u64, stats: bool, chunk: usize, part: u32) -> String {
    let kind = if stats { 'S' } else { 'F' };
    format!("{}{kind}#{chunk:06}#{part}", manifest_prefix(version))
}

/// The statistics (Column objects) of split `split` (its index in the summary's splits) of
/// version `version`: `M#<version, 10 digits>#T#<split, 4 digits>`.
pub fn split_stats_sk(version: u64, split: usize) -> String {
    format!("{}T#{split:04}", manifest_prefix(version))
}

pub fn list_sk(seq: u64) -> String {
    format!("SEQ#{seq:012}")
}

pub fn facet_list_pk(facet: &Facet) -> String {
    format!("{LIST_PK}#{}", facet.key())
}

pub fn facet_counter_pk(facet: &Facet) -> String {
    format!("{COUNTER_PK}#{}", facet.key())
}

/// The key of the facet summary (`CATALOG`, `FACETS`).
pub fn facet_summary_key() -> Item {
    key_of(COUNTER_PK, FACETS_SK)
}

/// What a facet summary attribute holds of its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryPart {
    /// `n#<facet>#<value>`: how many listed datasets have it (its facet counter's `total`).
    Count,
    /// `d#<facet>#<value>`: its display form, when that is not the value itself.
    Display,
}

impl SummaryPart {
    fn prefix(self) -> &'static str {
        match self {
            Self::Count => "n#",
            Self::Display => "d#",
        }
    }
}

/// A facet value's attribute in the facet summary (`n#tag#birds`, `d#category#biology`).
pub fn summary_attribute(part: SummaryPart, facet: &Facet) -> String {
    format!("{}{}", part.prefix(), facet.key())
}

/// The part and facet a facet summary attribute names; `None` for its marks and keys.
pub fn summary_attribute_of(name: &str) -> Option<(SummaryPart, Facet)> {
    [SummaryPart::Count, SummaryPart::Display]
        .into_iter()
        .find_map(|part| Some((part, Facet::from_key(name.strip_prefix(part.prefix())?)?)))
}

/// The primary key `{pk, sk}` of a datasets-table item.
pub fn key_of(pk: impl Into<String>, sk: &str) -> Item {
    HashMap::from([(name::PK.to_owned(), s(pk)), (name::SK.to_owned(), s(sk))])
}

/// The key of a counter item (`CATALOG` or a facet's).
pub fn counter_key(pk: impl Into<String>) -> Item {
    key_of(pk, COUNTER_SK)
}

/// The key of a keys-table item.
pub fn api_key_key(hash: &str) -> Item {
    HashMap::from([(name::KEY_HASH.to_owned(), s(hash))])
}

/// The key of an account's item in the keys table (never a hash: it is not 64 hex digits).
pub fn account_key(owner: &str) -> Item {
    api_key_key(&format!("ACCOUNT#{owner}"))
}

/// The key of the item remembering an account's creation under an `Idempotency-Key` (its
/// SHA-256).
pub fn idempotency_key(owner: &str, key_hash: &str) -> Item {
    api_key_key(&format!("IDEMPOTENCY#{owner}#{key_hash}"))
}

/// The key of the item counting an account's key creations on a UTC day (`2026-11-25`): it
/// leaves the table two days later (time to live).
pub fn creations_key(owner: &str, day: &str) -> Item {
    api_key_key(&format!("CREATIONS#{owner}#{day}"))
}

/// The key of an organisation's item in the keys table.
pub fn org_key(org: &str) -> Item {
    api_key_key(&format!("ORG#{org}"))
}

/// The key of an account's membership of an organisation in the keys table: beside the
/// account's grants, so that the data path reads both in one BatchGetItem.
pub fn member_key(org: &str, owner: &str) -> Item {
    api_key_key(&format!("MEMBER#{org}#{owner}"))
}

/// A membership's `id` in the owner index: the account's organisations in one Query.
pub fn membership_id(org: &str) -> String {
    format!("{MEMBERSHIP_ID_PREFIX}{org}")
}

/// The key of an account's access record for a dataset in the keys table (never a hash either).
pub fn grant_key(owner: &str, dataset: &Uuid) -> Item {
    api_key_key(&format!("{}{owner}", grant_prefix(dataset)))
}

/// What every grant for `dataset` begins with in the keys table.
pub fn grant_prefix(dataset: &Uuid) -> String {
    format!("GRANT#{dataset}#")
}

/// A key's element of its account's [`name::ACTIVE_KEYS`] set: its expiry (unix seconds) and id, so
/// that expired keys can be told from the set alone.
pub fn key_slot(id: &str, expires_at: Option<&chrono::DateTime<chrono::Utc>>) -> String {
    format!("{}/{id}", expires_at.map_or(i64::MAX, |t| t.timestamp()))
}

/// The expiry (unix seconds) of a [`key_slot`].
pub fn slot_expiry(slot: &str) -> Option<i64> {
    slot.split_once('/')?.0.parse().ok()
}

/// The position in `sk` (`SEQ#000000000042` is 42).
pub fn position_of(item: &Item) -> Result<u64, StoreError> {
    get_s(item, name::SK)?
        .strip_prefix("SEQ#")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| super::attr::corrupt(name::SK))
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog::query::FacetKind;

    #[test]
    fn a_summary_attribute_names_its_value_even_one_holding_the_separator() {
        for raw in ["Birds", "a#b", "n#tag#x"] {
            let facet = Facet::new(FacetKind::Tag, raw).unwrap();
            for part in [SummaryPart::Count, SummaryPart::Display] {
                let name = summary_attribute(part, &facet);
                assert_eq!(summary_attribute_of(&name), Some((part, facet.clone())));
            }
        }
        assert_eq!(
            summary_attribute(
                SummaryPart::Count,
                &Facet::new(FacetKind::License, "CC0-1.0").unwrap()
            ),
            "n#license#cc0-1.0"
        );
        for other in [
            name::PK,
            name::SK,
            name::COMPLETE,
            name::FULL,
            "x#tag#a",
            "n#colour#red",
        ] {
            assert_eq!(summary_attribute_of(other), None, "{other}");
        }
    }
}

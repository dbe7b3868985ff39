//! Small traits, one per capability, so each function links only what it uses and the logic can
//! be tested against in-memory adapters.

use std::future::Future;

use chrono::{DateTime, Utc};

use uuid::Uuid;

use crate::grants::{AccessRecord, AccessStatus, Decision};
use crate::input::DatasetRef;
use crate::keys::{KeyHash, KeyInfo, KeyRecord, NewKey, Owner};
use crate::orgs::{Invitation, Membership, Org, OrgName, OrgStoreError, Role};
use crate::policy::Grant;
use crate::query::CatalogPage;
use crate::query::ListQuery;
use crate::records::{DatasetRecord, DownloadTarget, TableRead};
use crate::slug::Slug;
use crate::store::StoreError;

/// Reads one page of the catalog, or of the datasets matching a query, in the query's order.
pub trait CatalogPager: Send + Sync {
    /// `offset` is the zero-based position of the first item; `None` means past any end.
    /// `total` counts every match; a facet value no dataset has is simply no match.
    fn page(
        &self,
        query: &ListQuery,
        offset: Option<u64>,
        limit: u64,
    ) -> impl Future<Output = Result<CatalogPage, StoreError>> + Send;
}

/// Reads one dataset's full metadata.
pub trait DatasetReader: Send + Sync {
    fn get_dataset(
        &self,
        dataset: &DatasetRef,
    ) -> impl Future<Output = Result<Option<DatasetRecord>, StoreError>> + Send;
}

/// Reads what the data endpoint needs: the dataset's active version and, when a key was
/// presented, the key's record, together (one round trip where the store allows it).
pub trait DownloadReader: Send + Sync {
    fn get_download(
        &self,
        dataset: &DatasetRef,
        key: Option<&KeyHash>,
    ) -> impl Future<Output = Result<(Option<DownloadTarget>, Option<KeyRecord>), StoreError>> + Send;
}

/// Reads an account's grant for a dataset, strongly consistent (a revocation shows on the next
/// request); for an organisation's dataset, its membership with it.
pub trait GrantReader: Send + Sync {
    fn grant(
        &self,
        owner: &Owner,
        dataset: &Uuid,
    ) -> impl Future<Output = Result<Option<Grant>, StoreError>> + Send;

    /// The account's grant for `dataset` and its role in `org` (the dataset's organisation),
    /// both strongly consistent, in one round trip where the store allows it (a removal from
    /// the organisation shows on the next request).
    fn standing(
        &self,
        owner: &Owner,
        dataset: &Uuid,
        org: &OrgName,
    ) -> impl Future<Output = Result<Standing, StoreError>> + Send;
}

/// What an account holds towards one dataset of an organisation ([`GrantReader::standing`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Standing {
    pub grant: Option<Grant>,
    /// Its role in the dataset's organisation (`None`: not a member).
    pub role: Option<Role>,
}

/// Reads one dataset's full metadata together with a presented key's record (one round trip
/// where the store allows it): the metadata endpoint, when a key is sent, shows an `approval`
/// dataset's statistics to those [`crate::access::authorize`] admits.
pub trait MetadataReader: DatasetReader + GrantReader {
    fn get_dataset_and_key(
        &self,
        dataset: &DatasetRef,
        key: &KeyHash,
    ) -> impl Future<Output = Result<(Option<DatasetRecord>, Option<KeyRecord>), StoreError>> + Send;
}

/// Reads a presented key's record alone (the Delta Sharing routes that list tables).
pub trait KeyReader: Send + Sync {
    fn read_key(
        &self,
        key: &KeyHash,
    ) -> impl Future<Output = Result<Option<KeyRecord>, StoreError>> + Send;
}

/// Reads what a Delta Sharing table request needs in one round trip: the dataset with its
/// schema, the version item `version` names (when given), and the key's record.
pub trait TableReader: Send + Sync {
    fn read_table(
        &self,
        slug: &Slug,
        version: Option<u64>,
        key: &KeyHash,
    ) -> impl Future<Output = Result<TableRead, StoreError>> + Send;
}

/// Reads the datasets a key is limited to (at most [`crate::keys::MAX_DATASETS`]), in one round
/// trip: what the gate judges of each that exists.
pub trait TargetsReader: Send + Sync {
    fn read_targets(
        &self,
        slugs: &[Slug],
    ) -> impl Future<Output = Result<Vec<DownloadTarget>, StoreError>> + Send;
}

/// An account's grants, by dataset UUID, in one round trip (an index: a decision made a moment
/// ago may show a moment later). Lists use it; a table's data is always judged on
/// [`GrantReader`]'s strongly consistent read.
pub trait GrantLister: Send + Sync {
    fn grants_of(
        &self,
        owner: &Owner,
    ) -> impl Future<Output = Result<Vec<(Uuid, Grant)>, StoreError>> + Send;

    /// Every organisation the account belongs to, with its role there.
    fn roles_of(
        &self,
        owner: &Owner,
    ) -> impl Future<Output = Result<Vec<(OrgName, Role)>, StoreError>> + Send;
}

/// A URL that grants a GET of one object until `expires_at`.
#[derive(Debug, Clone, PartialEq)]
pub struct SignedUrl {
    pub url: String,
    pub expires_at: DateTime<Utc>,
}

/// Signs download URLs. Signing is local: no network call.
pub trait UrlSigner: Send + Sync {
    /// A GET of `object_key`, which a browser saves as `filename` (the URL asks S3 for
    /// `Content-Disposition: attachment; filename="…"`).
    fn sign(
        &self,
        object_key: &str,
        filename: &str,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<SignedUrl, StoreError>> + Send;
}

/// Records that a key opened a download. Called at most once per key per
/// [`crate::keys::LAST_USED_GRANULARITY`]; a failure is logged, never the request's.
pub trait KeyUsage: Send + Sync {
    fn record_use(
        &self,
        key: &KeyHash,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// What a key creation came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Created {
    Created,
    /// The account already holds [`crate::accounts::MAX_ACTIVE_KEYS`] active keys.
    LimitReached,
    /// An operator disabled the account.
    AccountDisabled,
    /// The account created [`crate::accounts::MAX_KEYS_PER_DAY`] keys today (UTC).
    DailyLimitReached,
    /// A retry of a creation (the same `Idempotency-Key` and request): the key it created,
    /// re-issued for the new secret (the first secret, never received, no longer works).
    Replayed(Box<KeyInfo>),
    /// The `Idempotency-Key` was used with another request, or its key was revoked since: why.
    IdempotencyConflict(crate::accounts::IdempotencyConflict),
}

/// An account's own keys: the keys function's storage.
pub trait AccountKeyStore: Send + Sync {
    /// Stores the key unless its owner already holds the maximum of active keys; concurrent
    /// creations never take an account past it.
    fn create_key(
        &self,
        key: &NewKey,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<Created, StoreError>> + Send;

    /// As [`Self::create_key`], remembering the creation under the client's `Idempotency-Key`
    /// for [`crate::accounts::IDEMPOTENCY_WINDOW`]: a retry with the same key and request re-issues
    /// the key first created (same id, label and expiry) for the new secret, taking no second
    /// place and no second count.
    fn create_key_once(
        &self,
        key: &NewKey,
        replay: &crate::accounts::Replay,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<Created, StoreError>> + Send;

    /// The owner's keys, revoked and expired ones included, newest first.
    fn list_keys(
        &self,
        owner: &Owner,
    ) -> impl Future<Output = Result<Vec<KeyInfo>, StoreError>> + Send;

    /// Revokes the owner's key `id` as of `at` (a revoked key stays revoked, with its first
    /// time). `false`: the owner has no key with that id.
    fn revoke_key(
        &self,
        owner: &Owner,
        id: &str,
        at: DateTime<Utc>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}

/// What the access routes need of a dataset: its identity and its access policy.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetAccess {
    pub id: Uuid,
    pub slug: crate::slug::Slug,
    pub level: crate::policy::AccessLevel,
    pub policy: crate::policy::ApprovalPolicy,
}

/// What asking for access came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Asked {
    /// Recorded as given (pending, or granted at once by an automatic approval).
    Recorded,
    /// A request for the dataset is already pending.
    AlreadyPending,
    /// The account already holds a grant in force.
    AlreadyGranted,
    /// An operator revoked the account's grant of a dataset approved automatically: asking
    /// again would undo the revocation.
    Revoked,
    /// An operator disabled the account.
    AccountDisabled,
}

/// What a decision came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Decided {
    /// Made: the record as it now stands.
    Done(AccessRecord),
    /// The record is not in the state the decision applies to (or not at the revision given):
    /// as it stands.
    Conflict(AccessRecord),
    /// The account has no record for the dataset.
    NotFound,
}

/// Access requests and grants ([`crate::grants`]): the accounts function's and the operators'
/// storage. Reads of one record are strongly consistent; lists come from indexes.
pub trait AccessStore: Send + Sync {
    /// Whether an operator disabled the account (`catalog-admin accounts disable`): its item's
    /// `disabled_at`, read strongly consistent, so that it applies from the next request.
    fn account_disabled(
        &self,
        owner: &Owner,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// The account's role in an organisation (`None`: not a member), read strongly consistent,
    /// so that a removal applies from the next request.
    fn role(
        &self,
        org: &OrgName,
        owner: &Owner,
    ) -> impl Future<Output = Result<Option<Role>, StoreError>> + Send;

    /// A dataset's identity and policy, by slug (`None`: no such dataset).
    fn dataset_access(
        &self,
        slug: &crate::slug::Slug,
    ) -> impl Future<Output = Result<Option<DatasetAccess>, StoreError>> + Send;

    /// Records a request (replacing a rejected, withdrawn, revoked or expired record), unless
    /// one is pending or a grant is in force, or the account is disabled.
    fn ask(
        &self,
        record: &AccessRecord,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<Asked, StoreError>> + Send;

    /// An account's records, every dataset and status.
    fn access_of(
        &self,
        owner: &Owner,
    ) -> impl Future<Output = Result<Vec<AccessRecord>, StoreError>> + Send;

    /// Withdraws the account's pending request for the dataset: `false` when none is pending.
    fn withdraw(
        &self,
        owner: &Owner,
        dataset: &Uuid,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// Records in one status, of one dataset or of all, newest first.
    fn access_by_status(
        &self,
        status: AccessStatus,
        dataset: Option<&Uuid>,
    ) -> impl Future<Output = Result<Vec<AccessRecord>, StoreError>> + Send;

    /// Applies an operator's decision, on the condition that the record is in the state it
    /// applies to (and, given `rev`, still at that revision): concurrent decisions cannot both
    /// apply to one state.
    fn decide(
        &self,
        dataset: &Uuid,
        grantee: &Owner,
        decision: &Decision,
        rev: Option<u64>,
        by: &str,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<Decided, StoreError>> + Send;
}

/// Who a signed-in person is, beyond the token's `sub`: whether the user pool still knows them,
/// and their verified email (asked with their own access token, so no permission is needed).
pub trait Directory: Send + Sync {
    /// The user the token names, or `None` when the pool no longer accepts the token for anyone:
    /// the user was deleted (by an operator, or by themselves with Cognito's `DeleteUser`), is
    /// disabled, or was signed out everywhere.
    fn user(
        &self,
        access_token: &str,
    ) -> impl Future<Output = Result<Option<KnownUser>, StoreError>> + Send;

    /// The user's email (`None` too when the pool no longer knows them).
    fn email(
        &self,
        access_token: &str,
    ) -> impl Future<Output = Result<Option<String>, StoreError>> + Send {
        async move { Ok(self.user(access_token).await?.and_then(|u| u.email)) }
    }
}

/// A user the pool still knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownUser {
    /// Its `email` attribute, if it has one.
    pub email: Option<String>,
}

/// Reads the chunks of a many-file version's manifest ([`crate::files`]). The version's
/// [`crate::files::Summary`] is read with its dataset or version item and says which chunks a
/// page, a row offset or a partition filter needs; this reads those alone.
pub trait ManifestReader: Send + Sync {
    /// Chunks `chunks` (indexes into `summary.chunks`) of version `version` of `slug`, in the
    /// order asked, with each file's statistics when `stats` (else [`crate::files::FileEntry`]'s
    /// `stats` is empty). One round trip for up to 100 stored items (a chunk's files take one
    /// item, usually; its statistics one or more); `Ok(None)` when an item is missing (a
    /// version whose manifest was deleted).
    fn read_chunks(
        &self,
        slug: &Slug,
        version: u64,
        summary: &crate::files::Summary,
        chunks: &[usize],
        stats: bool,
    ) -> impl Future<Output = Result<Option<Vec<crate::files::FileChunk>>, StoreError>> + Send;
}

/// Reads the statistics of one split of a many-file version: its Column objects, as the
/// version's `schema` is stored ([`crate::files::Summary`]'s `splits`, by index). One GetItem.
pub trait SplitStatsReader: Send + Sync {
    /// `None` when the version has no statistics stored for that split (a version published
    /// before they were, or no such split).
    fn split_schema(
        &self,
        slug: &Slug,
        version: u64,
        split: usize,
    ) -> impl Future<Output = Result<Option<Box<serde_json::value::RawValue>>, StoreError>> + Send;
}

/// Organisations and their members (docs/organisations.md): every change keeps the limits and
/// the rule that an organisation keeps at least one admin, checked by the store in the write
/// itself, so that two changes at once cannot break them.
pub trait OrgStore: Send + Sync {
    /// A new organisation and its first admin, together.
    fn create_org(
        &self,
        org: &Org,
        admin: &Membership,
    ) -> impl Future<Output = Result<(), OrgStoreError>> + Send;

    fn org(&self, name: &OrgName) -> impl Future<Output = Result<Option<Org>, StoreError>> + Send;

    /// Every organisation, by name.
    fn orgs(&self) -> impl Future<Output = Result<Vec<Org>, StoreError>> + Send;

    /// Changes an organisation's display name (its settings); the organisation as it now is.
    fn set_display_name(
        &self,
        org: &OrgName,
        display_name: &str,
    ) -> impl Future<Output = Result<Org, OrgStoreError>> + Send;

    fn add_member(
        &self,
        membership: &Membership,
    ) -> impl Future<Output = Result<(), OrgStoreError>> + Send;

    /// Changes a member's role; the membership as it now is.
    fn set_role(
        &self,
        org: &OrgName,
        account: &Owner,
        role: Role,
    ) -> impl Future<Output = Result<Membership, OrgStoreError>> + Send;

    /// Removes a member; the membership as it was.
    fn remove_member(
        &self,
        org: &OrgName,
        account: &Owner,
    ) -> impl Future<Output = Result<Membership, OrgStoreError>> + Send;

    /// An organisation's members, by account.
    fn members(
        &self,
        org: &OrgName,
    ) -> impl Future<Output = Result<Vec<Membership>, StoreError>> + Send;

    /// One account's membership, strongly consistent.
    fn membership(
        &self,
        org: &OrgName,
        account: &Owner,
    ) -> impl Future<Output = Result<Option<Membership>, StoreError>> + Send;

    /// Every organisation one account belongs to.
    fn memberships_of(
        &self,
        account: &Owner,
    ) -> impl Future<Output = Result<Vec<Membership>, StoreError>> + Send;

    /// Records an invitation (replacing an earlier one for the same address).
    fn invite(
        &self,
        invitation: &Invitation,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// An organisation's invitations, open or not.
    fn invitations(
        &self,
        org: &OrgName,
    ) -> impl Future<Output = Result<Vec<Invitation>, StoreError>> + Send;

    /// Every invitation made for an address, open or not.
    fn invitations_for(
        &self,
        email: &str,
    ) -> impl Future<Output = Result<Vec<Invitation>, StoreError>> + Send;

    /// Accepts the invitation as `membership` says (its role, account and address): the
    /// membership made and the invitation gone together, within the limits.
    fn accept(
        &self,
        invitation: &Invitation,
        membership: &Membership,
    ) -> impl Future<Output = Result<(), OrgStoreError>> + Send;

    /// Removes an invitation: `false` when there was none.
    fn drop_invitation(
        &self,
        org: &OrgName,
        id: &str,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}

/// What an organisation's editors do to its datasets from the site (docs/organisations.md),
/// through the writer's one activation: a description re-activates the active version with
/// it; a rollback activates another version. Reads are strongly consistent.
pub trait DatasetEditor: Send + Sync {
    /// The organisation's datasets, private ones included.
    fn org_datasets(
        &self,
        org: &OrgName,
    ) -> impl Future<Output = Result<Vec<crate::records::OrgDataset>, StoreError>> + Send;

    /// The dataset's description (`None`: no such dataset).
    fn meta(
        &self,
        slug: &Slug,
    ) -> impl Future<Output = Result<Option<crate::records::DatasetMeta>, StoreError>> + Send;

    /// Every version of the dataset, oldest first.
    fn history(
        &self,
        slug: &Slug,
    ) -> impl Future<Output = Result<Vec<crate::versions::VersionSummary>, StoreError>> + Send;

    /// Gives the dataset this description, re-activating its active version with it.
    fn describe(
        &self,
        slug: &Slug,
        meta: &crate::records::DatasetMeta,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<(), crate::edits::EditFailure>> + Send;

    /// Makes `version` the active one (a rollback, or forward again).
    fn activate(
        &self,
        slug: &Slug,
        version: u64,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<(), crate::edits::EditFailure>> + Send;
}

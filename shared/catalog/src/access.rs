//! Who may read a dataset's data, decided in one place ([`authorize`]) for every route and
//! protocol that serves it: the key's own limits (scope, datasets), the keyless window, the
//! dataset's access level and, for `approval` datasets, the account's grant; for an
//! organisation's `private` and `approval` datasets, the account's membership
//! (docs/organisations.md). What is stored of each is in [`crate::policy`].

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::keys::{KeyRecord, Scope};
use crate::policy::{is_keyless, AccessLevel};
use crate::ports::{GrantReader, Standing};
use crate::records::{DatasetRecord, DatasetSummary, DownloadTarget};
use crate::slug::Slug;
use crate::store::StoreError;

/// A dataset as [`authorize`] judges it.
#[derive(Debug, Clone, Copy)]
pub struct Guarded<'a> {
    pub slug: &'a Slug,
    pub id: Uuid,
    pub level: AccessLevel,
    pub keyless_until: Option<DateTime<Utc>>,
}

/// A dataset as the gate reads it (the data routes, Delta Sharing's query and metadata).
impl<'a> From<&'a DownloadTarget> for Guarded<'a> {
    fn from(target: &'a DownloadTarget) -> Self {
        Self {
            slug: &target.slug,
            id: target.id,
            level: target.level,
            keyless_until: target.keyless_until,
        }
    }
}

/// A dataset as a listing shows it (Delta Sharing's list of tables).
impl<'a> From<&'a DatasetSummary> for Guarded<'a> {
    fn from(summary: &'a DatasetSummary) -> Self {
        Self {
            slug: &summary.slug,
            id: summary.id,
            level: summary.card.access_level,
            keyless_until: summary.keyless_until,
        }
    }
}

/// A dataset as its whole record has it (the metadata endpoint's statistics).
impl<'a> From<&'a DatasetRecord> for Guarded<'a> {
    fn from(record: &'a DatasetRecord) -> Self {
        Self {
            slug: &record.slug,
            id: record.id,
            level: record.meta.card.access_level,
            keyless_until: record.keyless_until,
        }
    }
}

/// Why a request may not read a dataset's data: the one rule's refusals, whatever the route or
/// protocol ([`authorize`], [`verify_key`], and a key that cannot be parsed).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("an API key is required for this dataset: send it in the x-api-key header or as Authorization: Bearer <key>")]
    MissingKey,
    #[error("the API key is invalid, expired or revoked")]
    InvalidKey,
    #[error("the API key does not have the read scope required to download data")]
    InsufficientScope,
    #[error("this API key is limited to other datasets: it cannot read '{0}'")]
    KeyNotForDataset(Slug),
    #[error("dataset '{0}' is shared by approval, and this key's account holds no active grant for it: ask the catalog's operators for access")]
    AccessRequired(Slug),
    /// A `private` dataset, to a request that may not know it exists: every route answers it
    /// exactly as it answers a slug that names no dataset (the caller maps it so).
    #[error("dataset '{0}' does not exist")]
    Hidden(Slug),
}

impl Refusal {
    /// The stable code clients can match on.
    pub fn code(&self) -> &'static str {
        match self {
            Self::MissingKey => "missing_key",
            Self::InvalidKey => "invalid_key",
            Self::InsufficientScope => "insufficient_scope",
            Self::KeyNotForDataset(_) => "key_not_for_dataset",
            Self::AccessRequired(_) => "access_required",
            Self::Hidden(_) => "not_found",
        }
    }

    /// Whether the refusal is of the key itself (missing, invalid or without the scope), which
    /// fails a request whatever it asks, rather than of one dataset for a key that is good.
    pub fn of_the_key(&self) -> bool {
        matches!(
            self,
            Self::MissingKey | Self::InvalidKey | Self::InsufficientScope
        )
    }
}

/// What [`authorize`] answers other than a let-through: the rule's refusal, or a failure to read
/// the account's grant.
#[derive(Debug, thiserror::Error)]
pub enum Denied {
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why a request was let through: logged with every download.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allowed {
    /// Inside the keyless window.
    Keyless,
    /// A valid read key (a `registered` dataset, or an operator's key).
    Key,
    /// A valid read key whose account holds an active grant.
    Grant,
    /// A valid read key whose account is a member of the dataset's organisation.
    Member,
}

impl Allowed {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Keyless => "keyless",
            Self::Key => "key",
            Self::Grant => "grant",
            Self::Member => "member",
        }
    }
}

/// A presented key as stored, checked for use at `now`: unknown, revoked or expired is 401
/// (whatever the dataset, keyless or not), without the read scope 403.
pub fn verify_key(record: Option<KeyRecord>, now: DateTime<Utc>) -> Result<KeyRecord, Refusal> {
    match record {
        Some(record) if record.is_usable_at(now) => {
            if record.has_scope(&Scope::Read) {
                Ok(record)
            } else {
                Err(Refusal::InsufficientScope)
            }
        }
        _ => Err(Refusal::InvalidKey),
    }
}

/// The rule, for every route and protocol that serves a dataset's data. `key` is the caller's
/// key, already verified ([`verify_key`]); `None` when none was sent.
///
/// 1. A `private` dataset: an operator's key (it has no account), or a key whose account is a
///    member of the dataset's organisation (one more strongly consistent read), goes on to the
///    rules below without the keyless window; anyone else is refused as [`Refusal::Hidden`],
///    which every route answers as an unknown slug.
/// 2. A key limited to named datasets reads nothing else (403 `key_not_for_dataset`), keyless
///    window or not.
/// 3. Inside the keyless window, anyone reads.
/// 4. Outside it a key is needed (401 `missing_key`).
/// 5. A `registered` dataset: any such key. An `approval` dataset: an operator's key, or an
///    account's key whose account holds an active grant or, for an organisation's dataset, is
///    its member (one more strongly consistent read, only here: the grant and the membership
///    together); else 403 `access_required`.
pub async fn authorize(
    dataset: &Guarded<'_>,
    key: Option<&KeyRecord>,
    grants: &impl GrantReader,
    now: DateTime<Utc>,
) -> Result<Allowed, Denied> {
    if dataset.level == AccessLevel::Private {
        return private(dataset, key, grants).await;
    }
    if let Some(key) = key {
        if !key.may_read(dataset.slug) {
            return Err(Refusal::KeyNotForDataset(dataset.slug.clone()).into());
        }
    }
    if is_keyless(dataset.keyless_until, now) {
        return Ok(Allowed::Keyless);
    }
    let key = key.ok_or(Refusal::MissingKey)?;
    let Some(owner) = &key.owner else {
        return Ok(Allowed::Key);
    };
    if dataset.level == AccessLevel::Registered {
        return Ok(Allowed::Key);
    }
    let standing = match dataset.slug.org() {
        Some(org) => grants.standing(owner, &dataset.id, &org).await?,
        None => Standing {
            grant: grants.grant(owner, &dataset.id).await?,
            role: None,
        },
    };
    if standing.role.is_some() {
        Ok(Allowed::Member)
    } else if standing.grant.is_some_and(|g| g.is_active_at(now)) {
        Ok(Allowed::Grant)
    } else {
        Err(Refusal::AccessRequired(dataset.slug.clone()).into())
    }
}

/// Rule 1: a `private` dataset shows itself to an operator's key and to its organisation's
/// members' keys only; the key's own limits apply after that (so that a limit never tells a
/// stranger that the dataset exists).
async fn private(
    dataset: &Guarded<'_>,
    key: Option<&KeyRecord>,
    grants: &impl GrantReader,
) -> Result<Allowed, Denied> {
    let hidden = || Denied::from(Refusal::Hidden(dataset.slug.clone()));
    let key = key.ok_or_else(hidden)?;
    let allowed = match (&key.owner, dataset.slug.org()) {
        (None, _) => Allowed::Key,
        (Some(owner), Some(org)) => {
            let standing = grants.standing(owner, &dataset.id, &org).await?;
            if standing.role.is_none() {
                return Err(hidden());
            }
            Allowed::Member
        }
        // A catalog dataset has no members: only operators' keys read it.
        (Some(_), None) => return Err(hidden()),
    };
    if !key.may_read(dataset.slug) {
        return Err(Refusal::KeyNotForDataset(dataset.slug.clone()).into());
    }
    Ok(allowed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::Owner;
    use crate::orgs::{OrgName, Role};
    use crate::policy::Grant;
    use crate::store::StoreError;
    use chrono::Duration;
    use std::collections::HashMap;
    use std::sync::Mutex;

    /// Grants by (owner, dataset) and roles by (owner, organisation), counting reads (a
    /// standing, grant and role together, is one read).
    #[derive(Default)]
    struct Grants {
        held: HashMap<(String, Uuid), Grant>,
        roles: HashMap<(String, String), Role>,
        reads: Mutex<usize>,
    }

    impl GrantReader for Grants {
        async fn grant(&self, owner: &Owner, dataset: &Uuid) -> Result<Option<Grant>, StoreError> {
            *self.reads.lock().unwrap() += 1;
            Ok(self
                .held
                .get(&(owner.as_str().to_owned(), *dataset))
                .cloned())
        }

        async fn standing(
            &self,
            owner: &Owner,
            dataset: &Uuid,
            org: &OrgName,
        ) -> Result<Standing, StoreError> {
            let grant = self.grant(owner, dataset).await?;
            let role = self
                .roles
                .get(&(owner.as_str().to_owned(), org.as_str().to_owned()))
                .copied();
            Ok(Standing { grant, role })
        }
    }

    fn key(owner: Option<&str>, datasets: Option<&[&str]>) -> KeyRecord {
        KeyRecord {
            id: "key_0000000000000001".into(),
            scopes: vec![Scope::Read],
            expires_at: None,
            revoked_at: None,
            last_used_at: None,
            owner: owner.map(|o| Owner::parse(o).unwrap()),
            datasets: datasets.map(|d| d.iter().map(|s| Slug::parse(s).unwrap()).collect()),
        }
    }

    fn code(result: Result<Allowed, Denied>) -> String {
        match result {
            Ok(allowed) => allowed.as_str().to_owned(),
            Err(Denied::Refused(refusal)) => refusal.code().to_owned(),
            Err(Denied::Store(e)) => panic!("the grant could not be read: {e}"),
        }
    }

    /// Level, keyless window, key, and the outcome: what let the request through, or the code.
    type Case<'a> = (
        AccessLevel,
        Option<DateTime<Utc>>,
        Option<&'a KeyRecord>,
        &'a str,
    );

    /// Every case of the rule, as one table: level, keyless window, key, grant -> outcome.
    #[tokio::test]
    async fn the_rule_as_one_matrix() {
        let now = Utc::now();
        let slug = Slug::parse("river-levels").unwrap();
        let id = Uuid::new_v4();
        let mut grants = Grants::default();
        let granted = |expires_at| Grant {
            granted: true,
            expires_at,
        };
        grants.held.insert(("granted".into(), id), granted(None));
        grants.held.insert(
            ("lapsed".into(), id),
            granted(Some(now - Duration::seconds(1))),
        );
        grants.held.insert(
            ("revoked".into(), id),
            Grant {
                granted: false,
                expires_at: None,
            },
        );
        let operator = key(None, None);
        let limited_here = key(None, Some(&["river-levels"]));
        let limited_elsewhere = key(Some("granted"), Some(&["other"]));
        let with_grant = key(Some("granted"), None);
        let lapsed = key(Some("lapsed"), None);
        let revoked = key(Some("revoked"), None);
        let none = key(Some("nobody"), None);
        let window = Some(now + Duration::hours(1));
        let closed = Some(now - Duration::hours(1));
        #[rustfmt::skip]
        let cases: [Case; 20] = [
            (AccessLevel::Registered, None, None, "missing_key"),
            (AccessLevel::Registered, closed, None, "missing_key"),
            (AccessLevel::Registered, window, None, "keyless"),
            (AccessLevel::Registered, None, Some(&none), "key"),
            (AccessLevel::Registered, None, Some(&operator), "key"),
            (AccessLevel::Registered, None, Some(&limited_here), "key"),
            (AccessLevel::Registered, None, Some(&limited_elsewhere), "key_not_for_dataset"),
            (AccessLevel::Registered, window, Some(&limited_elsewhere), "key_not_for_dataset"),
            (AccessLevel::Approval, None, None, "missing_key"),
            (AccessLevel::Approval, window, None, "keyless"),
            (AccessLevel::Approval, window, Some(&none), "keyless"),
            (AccessLevel::Approval, None, Some(&none), "access_required"),
            (AccessLevel::Approval, closed, Some(&none), "access_required"),
            (AccessLevel::Approval, None, Some(&with_grant), "grant"),
            (AccessLevel::Approval, None, Some(&lapsed), "access_required"),
            (AccessLevel::Approval, None, Some(&revoked), "access_required"),
            (AccessLevel::Approval, None, Some(&operator), "key"),
            (AccessLevel::Approval, None, Some(&limited_here), "key"),
            (AccessLevel::Approval, None, Some(&limited_elsewhere), "key_not_for_dataset"),
            (AccessLevel::Approval, window, Some(&limited_elsewhere), "key_not_for_dataset"),
        ];
        for (level, keyless_until, key, expected) in cases {
            let dataset = Guarded {
                slug: &slug,
                id,
                level,
                keyless_until,
            };
            let got = code(authorize(&dataset, key, &grants, now).await);
            assert_eq!(
                got, expected,
                "{level:?}, window {keyless_until:?}, {key:?}"
            );
        }
    }

    /// The rule for an organisation's datasets, as one table: level, keyless window, key
    /// (whose account is a member, a member holding a grant elsewhere, an editor of another
    /// organisation, or nobody) -> outcome. A private dataset shows itself to members and
    /// operators only, and to anyone else answers as an unknown slug (`not_found`),
    /// whatever key, limit or window.
    #[tokio::test]
    async fn the_rule_for_an_organisations_datasets_as_one_matrix() {
        let now = Utc::now();
        let slug = Slug::parse("acme~ledger").unwrap();
        let id = Uuid::new_v4();
        let mut grants = Grants::default();
        for (owner, org, role) in [
            ("member", "acme", Role::Member),
            ("editor", "acme", Role::Editor),
            ("admin", "acme", Role::Admin),
            ("outsider", "beta", Role::Admin),
        ] {
            grants.roles.insert((owner.into(), org.into()), role);
        }
        grants.held.insert(
            ("granted".into(), id),
            Grant {
                granted: true,
                expires_at: None,
            },
        );
        let operator = key(None, None);
        let operator_elsewhere = key(None, Some(&["other"]));
        let member = key(Some("member"), None);
        let editor = key(Some("editor"), None);
        let admin = key(Some("admin"), None);
        let member_elsewhere = key(Some("member"), Some(&["acme~other"]));
        let outsider = key(Some("outsider"), None);
        let granted = key(Some("granted"), None);
        let nobody = key(Some("nobody"), None);
        let window = Some(now + Duration::hours(1));
        #[rustfmt::skip]
        let cases: [Case; 24] = [
            (AccessLevel::Private, None, None, "not_found"),
            (AccessLevel::Private, window, None, "not_found"),
            (AccessLevel::Private, None, Some(&nobody), "not_found"),
            (AccessLevel::Private, window, Some(&nobody), "not_found"),
            (AccessLevel::Private, None, Some(&outsider), "not_found"),
            (AccessLevel::Private, None, Some(&granted), "not_found"),
            (AccessLevel::Private, None, Some(&member), "member"),
            (AccessLevel::Private, window, Some(&member), "member"),
            (AccessLevel::Private, None, Some(&editor), "member"),
            (AccessLevel::Private, None, Some(&admin), "member"),
            (AccessLevel::Private, None, Some(&member_elsewhere), "key_not_for_dataset"),
            (AccessLevel::Private, None, Some(&operator), "key"),
            (AccessLevel::Private, None, Some(&operator_elsewhere), "key_not_for_dataset"),
            (AccessLevel::Approval, None, None, "missing_key"),
            (AccessLevel::Approval, window, None, "keyless"),
            (AccessLevel::Approval, None, Some(&nobody), "access_required"),
            (AccessLevel::Approval, None, Some(&outsider), "access_required"),
            (AccessLevel::Approval, None, Some(&granted), "grant"),
            (AccessLevel::Approval, None, Some(&member), "member"),
            (AccessLevel::Approval, None, Some(&operator), "key"),
            (AccessLevel::Approval, None, Some(&member_elsewhere), "key_not_for_dataset"),
            (AccessLevel::Registered, None, None, "missing_key"),
            (AccessLevel::Registered, None, Some(&outsider), "key"),
            (AccessLevel::Registered, None, Some(&member), "key"),
        ];
        for (level, keyless_until, key, expected) in cases {
            let dataset = Guarded {
                slug: &slug,
                id,
                level,
                keyless_until,
            };
            let got = code(authorize(&dataset, key, &grants, now).await);
            assert_eq!(
                got, expected,
                "{level:?}, window {keyless_until:?}, {key:?}"
            );
        }
    }

    #[tokio::test]
    async fn a_private_catalog_dataset_shows_itself_to_operators_keys_only() {
        let now = Utc::now();
        let slug = Slug::parse("ledger").unwrap();
        let mut grants = Grants::default();
        grants
            .roles
            .insert(("someone".into(), "acme".into()), Role::Admin);
        let dataset = Guarded {
            slug: &slug,
            id: Uuid::new_v4(),
            level: AccessLevel::Private,
            keyless_until: None,
        };
        let operator = key(None, None);
        let account = key(Some("someone"), None);
        assert_eq!(
            code(authorize(&dataset, Some(&operator), &grants, now).await),
            "key"
        );
        assert_eq!(
            code(authorize(&dataset, Some(&account), &grants, now).await),
            "not_found"
        );
        assert_eq!(*grants.reads.lock().unwrap(), 0);
    }

    #[tokio::test]
    async fn only_an_accounts_key_on_an_approval_dataset_reads_a_grant() {
        let now = Utc::now();
        let slug = Slug::parse("river-levels").unwrap();
        let grants = Grants::default();
        let mut dataset = Guarded {
            slug: &slug,
            id: Uuid::new_v4(),
            level: AccessLevel::Registered,
            keyless_until: None,
        };
        for k in [key(Some("someone"), None), key(None, None)] {
            let _ = authorize(&dataset, Some(&k), &grants, now).await;
        }
        dataset.level = AccessLevel::Approval;
        let _ = authorize(&dataset, Some(&key(None, None)), &grants, now).await;
        assert_eq!(*grants.reads.lock().unwrap(), 0);
        let _ = authorize(&dataset, Some(&key(Some("someone"), None)), &grants, now).await;
        assert_eq!(*grants.reads.lock().unwrap(), 1);
    }

    #[test]
    fn a_key_that_fails_verification_is_401_and_one_without_read_is_403() {
        let now = Utc::now();
        let mut k = key(None, None);
        assert!(verify_key(Some(k.clone()), now).is_ok());
        assert_eq!(verify_key(None, now).unwrap_err().code(), "invalid_key");
        k.expires_at = Some(now);
        assert_eq!(
            verify_key(Some(k.clone()), now).unwrap_err().code(),
            "invalid_key"
        );
        k.expires_at = None;
        k.revoked_at = Some(now + Duration::hours(1));
        assert_eq!(
            verify_key(Some(k.clone()), now).unwrap_err().code(),
            "invalid_key"
        );
        k.revoked_at = None;
        k.scopes = vec![Scope::parse("write")];
        assert_eq!(
            verify_key(Some(k), now).unwrap_err().code(),
            "insufficient_scope"
        );
    }
}

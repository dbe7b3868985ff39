//! Who may read a dataset's data, decided in one place ([`authorize`]) for every route and
//! protocol that serves it: the keyless window, the dataset's access level, the key's own
//! limits (scope, datasets) and, for `approval` datasets, the account's grant. Also what the
//! metadata's `access` object says of it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::error::ApiError;
use crate::input::Slug;
use crate::keys::{KeyRecord, Scope};
use crate::ports::GrantReader;

/// A dataset is keyless while the current time is before the end of its window.
pub fn is_keyless(keyless_until: Option<DateTime<Utc>>, now: DateTime<Utc>) -> bool {
    keyless_until.is_some_and(|until| now < until)
}

/// Who may read a dataset's data outside its keyless window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessLevel {
    /// Any valid read key (the default).
    #[default]
    Registered,
    /// A valid read key whose account holds an active grant for the dataset (or an
    /// operator's key: operators decide whom they give one to).
    Approval,
}

impl AccessLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Registered => "registered",
            Self::Approval => "approval",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "registered" => Some(Self::Registered),
            "approval" => Some(Self::Approval),
            _ => None,
        }
    }
}

/// How an `approval` dataset's requests are decided.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    /// By an operator (the default).
    #[default]
    Manual,
    /// At once; still recorded as a request.
    Automatic,
}

/// One question of an `approval` dataset's request form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormField {
    /// The answer's key: 1 to 40 lowercase letters, digits and underscores.
    pub name: String,
    /// The question as the page shows it: 1 to 200 characters.
    pub label: String,
    /// Longest answer, in characters: 1 to [`FormField::MAX_ANSWER`] (default 500).
    #[serde(default = "FormField::default_max_length")]
    pub max_length: usize,
    /// Whether an answer is needed (default true).
    #[serde(default = "FormField::default_required")]
    pub required: bool,
}

impl FormField {
    pub const MAX_ANSWER: usize = 2000;

    fn default_max_length() -> usize {
        500
    }

    fn default_required() -> bool {
        true
    }
}

/// What an `approval` dataset asks of a request: how it is decided, the form's questions and
/// the terms a requester accepts. Ignored at the `registered` level.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalPolicy {
    #[serde(default)]
    pub approval: Approval,
    #[serde(default)]
    pub form: Vec<FormField>,
    #[serde(default)]
    pub terms: Option<String>,
}

impl ApprovalPolicy {
    /// Most questions in a form.
    pub const MAX_FIELDS: usize = 10;
    /// Longest terms text, in characters.
    pub const MAX_TERMS: usize = 10_000;

    /// The policy as publish accepts it; the message names what is wrong.
    pub fn check(&self) -> Result<(), String> {
        if self.form.len() > Self::MAX_FIELDS {
            return Err(format!(
                "access.form has at most {} questions",
                Self::MAX_FIELDS
            ));
        }
        let mut names = std::collections::HashSet::new();
        for field in &self.form {
            let name_ok = (1..=40).contains(&field.name.len())
                && field
                    .name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
            if !name_ok {
                return Err(format!(
                    "access.form: a question's name is 1 to 40 lowercase letters, digits and \
                     underscores, got '{}'",
                    crate::input::echo(&field.name)
                ));
            }
            if !names.insert(field.name.as_str()) {
                return Err(format!("access.form: '{}' is asked twice", field.name));
            }
            if !(1..=200).contains(&field.label.trim().chars().count()) {
                return Err(format!(
                    "access.form: the label of '{}' is 1 to 200 characters",
                    field.name
                ));
            }
            if !(1..=FormField::MAX_ANSWER).contains(&field.max_length) {
                return Err(format!(
                    "access.form: max_length of '{}' is 1 to {}",
                    field.name,
                    FormField::MAX_ANSWER
                ));
            }
        }
        if self
            .terms
            .as_ref()
            .is_some_and(|t| t.trim().is_empty() || t.chars().count() > Self::MAX_TERMS)
        {
            return Err(format!(
                "access.terms is 1 to {} characters",
                Self::MAX_TERMS
            ));
        }
        Ok(())
    }
}

/// A dataset's access settings as a metadata file gives them (`access:`), as a whole.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessSettings {
    #[serde(default)]
    pub level: AccessLevel,
    #[serde(default)]
    pub approval: Approval,
    #[serde(default)]
    pub form: Vec<FormField>,
    #[serde(default)]
    pub terms: Option<String>,
}

impl AccessSettings {
    pub fn new(level: AccessLevel, policy: ApprovalPolicy) -> Self {
        Self {
            level,
            approval: policy.approval,
            form: policy.form,
            terms: policy.terms,
        }
    }

    pub fn policy(&self) -> ApprovalPolicy {
        ApprovalPolicy {
            approval: self.approval,
            form: self.form.clone(),
            terms: self.terms.clone(),
        }
    }
}

/// Whether the data endpoint needs a key: serialized as `keyless` or `key_required`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessMode {
    Keyless,
    KeyRequired,
}

/// What the data endpoint requires right now (a presented key is verified in either mode).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Access {
    pub mode: AccessMode,
    #[serde(serialize_with = "crate::time::rfc3339_opt")]
    pub keyless_until: Option<DateTime<Utc>>,
    /// The scope a key needs; `null` while no key is needed.
    pub required_scope: Option<Scope>,
    /// Who may read outside the keyless window.
    pub level: AccessLevel,
    /// At the `approval` level: how requests are decided, the form and the terms (`null` at
    /// the `registered` level).
    #[serde(flatten)]
    pub policy: Option<ApprovalPolicy>,
}

impl Access {
    pub fn at(
        keyless_until: Option<DateTime<Utc>>,
        level: AccessLevel,
        policy: &ApprovalPolicy,
        now: DateTime<Utc>,
    ) -> Self {
        let keyless = is_keyless(keyless_until, now);
        Self {
            policy: (level == AccessLevel::Approval).then(|| policy.clone()),
            mode: if keyless {
                AccessMode::Keyless
            } else {
                AccessMode::KeyRequired
            },
            keyless_until,
            required_scope: (!keyless).then_some(Scope::Read),
            level,
        }
    }
}

/// A dataset as [`authorize`] judges it.
#[derive(Debug, Clone, Copy)]
pub struct Guarded<'a> {
    pub slug: &'a Slug,
    pub id: Uuid,
    pub level: AccessLevel,
    pub keyless_until: Option<DateTime<Utc>>,
}

/// An account's standing for one dataset, as the data path reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Grant {
    pub granted: bool,
    /// When a grant ends (`None`: until revoked).
    pub expires_at: Option<DateTime<Utc>>,
}

impl Grant {
    /// Granted, and not past its expiry. Revocation clears `granted` itself, so it takes effect
    /// on the next request whatever the clocks say.
    pub fn is_active_at(&self, now: DateTime<Utc>) -> bool {
        self.granted && self.expires_at.is_none_or(|t| now < t)
    }
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
}

impl Allowed {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Keyless => "keyless",
            Self::Key => "key",
            Self::Grant => "grant",
        }
    }
}

/// A presented key as stored, checked for use at `now`: unknown, revoked or expired is 401
/// (whatever the dataset, keyless or not), without the read scope 403.
pub fn verify_key(record: Option<KeyRecord>, now: DateTime<Utc>) -> Result<KeyRecord, ApiError> {
    match record {
        Some(record) if record.is_usable_at(now) => {
            if record.has_scope(&Scope::Read) {
                Ok(record)
            } else {
                Err(ApiError::InsufficientScope)
            }
        }
        _ => Err(ApiError::InvalidKey),
    }
}

/// The rule, for every route and protocol that serves a dataset's data. `key` is the caller's
/// key, already verified ([`verify_key`]); `None` when none was sent.
///
/// 1. A key limited to named datasets reads nothing else (403 `key_not_for_dataset`), keyless
///    window or not.
/// 2. Inside the keyless window, anyone reads.
/// 3. Outside it a key is needed (401 `missing_key`).
/// 4. A `registered` dataset: any such key. An `approval` dataset: an operator's key (it has no
///    account), or an account's key whose account holds an active grant (one more strongly
///    consistent read, only here); else 403 `access_required`.
pub async fn authorize(
    dataset: &Guarded<'_>,
    key: Option<&KeyRecord>,
    grants: &impl GrantReader,
    now: DateTime<Utc>,
) -> Result<Allowed, ApiError> {
    if let Some(key) = key {
        if !key.may_read(dataset.slug) {
            return Err(ApiError::KeyNotForDataset(dataset.slug.to_string()));
        }
    }
    if is_keyless(dataset.keyless_until, now) {
        return Ok(Allowed::Keyless);
    }
    let key = key.ok_or(ApiError::MissingKey)?;
    match (dataset.level, &key.owner) {
        (AccessLevel::Registered, _) | (AccessLevel::Approval, None) => Ok(Allowed::Key),
        (AccessLevel::Approval, Some(owner)) => {
            let grant = grants.grant(owner, &dataset.id).await?;
            if grant.is_some_and(|g| g.is_active_at(now)) {
                Ok(Allowed::Grant)
            } else {
                Err(ApiError::AccessRequired(dataset.slug.to_string()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::StoreError;
    use crate::keys::Owner;
    use chrono::Duration;
    use std::collections::HashMap;
    use std::sync::Mutex;

    /// Grants by (owner, dataset), counting reads.
    #[derive(Default)]
    struct Grants {
        held: HashMap<(String, Uuid), Grant>,
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

    fn code(result: Result<Allowed, ApiError>) -> String {
        match result {
            Ok(allowed) => allowed.as_str().to_owned(),
            Err(e) => e.code().to_owned(),
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

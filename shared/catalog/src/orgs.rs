//! Organisations: their members' roles, what each role may do, and the limits
//! (docs/organisations.md). Who may read what is decided in [`crate::access`]; this module says
//! what a role is and what it allows.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

pub use crate::slug::{OrgName, OrgNameError};

/// A member's role in an organisation, from the least to the most powerful.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Reads the organisation's datasets, private ones included.
    Member,
    /// And publishes, edits metadata and manages versions.
    Editor,
    /// And manages members, roles and invitations, and decides access requests.
    Admin,
}

impl Role {
    pub const ALL: [Role; 3] = [Role::Member, Role::Editor, Role::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Member => "member",
            Self::Editor => "editor",
            Self::Admin => "admin",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == raw)
    }

    /// Reads the organisation's datasets, private and `approval` ones included.
    pub fn may_read(self) -> bool {
        true
    }

    /// Publishes, edits metadata and manages versions of the organisation's datasets.
    pub fn may_publish(self) -> bool {
        self >= Self::Editor
    }

    /// Manages members and invitations, and decides access requests.
    pub fn may_administer(self) -> bool {
        self == Self::Admin
    }
}

/// The limits an organisation is held to (docs/organisations.md#limits).
pub struct Limits;

impl Limits {
    /// Members (and open invitations) of one organisation.
    pub const MEMBERS_PER_ORG: u64 = 500;
    /// Organisations one account belongs to.
    pub const ORGS_PER_ACCOUNT: usize = 20;
    /// The longest display name, in characters.
    pub const DISPLAY_NAME: usize = 100;
    /// How long an invitation may be accepted.
    pub const INVITATION_DAYS: i64 = 14;
}

/// An organisation as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Org {
    pub name: OrgName,
    /// How the site titles it (1 to [`Limits::DISPLAY_NAME`] characters).
    pub display_name: String,
    /// Members, all roles.
    pub members: u64,
    #[serde(serialize_with = "crate::time::rfc3339")]
    pub created_at: DateTime<Utc>,
    pub created_by: String,
}

/// An account's membership of an organisation, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Membership {
    pub org: OrgName,
    /// The account (its Cognito `sub`).
    pub account: String,
    pub role: Role,
    /// The address the membership was made for (the invitation's, or the operator's command).
    pub email: Option<String>,
    #[serde(serialize_with = "crate::time::rfc3339")]
    pub added_at: DateTime<Utc>,
    pub added_by: String,
}

/// An invitation to join an organisation, made for an email address: the person who signs in
/// with that (verified) address accepts or declines it. It holds no secret: the address is the
/// credential, as Cognito verified it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Invitation {
    pub org: OrgName,
    /// [`invitation_id`] of the address.
    pub id: String,
    pub email: String,
    pub role: Role,
    pub invited_by: String,
    #[serde(serialize_with = "crate::time::rfc3339")]
    pub invited_at: DateTime<Utc>,
    #[serde(serialize_with = "crate::time::rfc3339")]
    pub expires_at: DateTime<Utc>,
}

impl Invitation {
    /// An invitation of `email` (as [`email`] accepts it) to `org` as `role`, until
    /// [`Limits::INVITATION_DAYS`] from `now`.
    pub fn new(org: OrgName, email: String, role: Role, by: &str, now: DateTime<Utc>) -> Self {
        Self {
            org,
            id: invitation_id(&email),
            email,
            role,
            invited_by: by.to_owned(),
            invited_at: now,
            expires_at: now + chrono::Duration::days(Limits::INVITATION_DAYS),
        }
    }

    pub fn is_open_at(&self, now: DateTime<Utc>) -> bool {
        now < self.expires_at
    }
}

/// An address as an invitation keeps it: trimmed and lowercased (Cognito's accounts are named
/// in lowercase), at most 254 characters, one `@` with something on each side, no spaces or
/// control characters.
pub fn email(raw: &str) -> Result<String, OrgError> {
    let email = raw.trim().to_lowercase();
    let valid = email.chars().count() <= 254
        && !email.chars().any(|c| c.is_whitespace() || c.is_control())
        && matches!(email.split_once('@'), Some((local, domain))
            if !local.is_empty() && !domain.is_empty() && !domain.contains('@'));
    if valid {
        Ok(email)
    } else {
        Err(OrgError::Email)
    }
}

/// What names an invitation within its organisation: the first 32 hex digits of the SHA-256 of
/// its address (so that paths and logs never carry the address).
pub fn invitation_id(email: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(email.as_bytes()))[..32].to_owned()
}

/// Why a change to an organisation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OrgError {
    #[error(transparent)]
    Name(#[from] OrgNameError),
    #[error("organisation '{0}' already exists")]
    Exists(OrgName),
    #[error("organisation '{0}' does not exist")]
    NotFound(String),
    #[error("the display name is 1 to {} characters", Limits::DISPLAY_NAME)]
    DisplayName,
    #[error("role must be member, editor or admin, got '{0}'")]
    Role(String),
    #[error(
        "organisation '{org}' has {} members, its limit",
        Limits::MEMBERS_PER_ORG
    )]
    TooManyMembers { org: OrgName },
    #[error(
        "this account belongs to {} organisations, the limit",
        Limits::ORGS_PER_ACCOUNT
    )]
    TooManyOrgs,
    #[error("account '{account}' is already a member of '{org}'")]
    AlreadyMember { org: OrgName, account: String },
    #[error("account '{account}' is not a member of '{org}'")]
    NotMember { org: OrgName, account: String },
    #[error("'{org}' must keep at least one admin")]
    LastAdmin { org: OrgName },
    #[error("an email address is one '@' with text on each side, at most 254 characters, without spaces")]
    Email,
    #[error("'{email}' already belongs to a member of '{org}'")]
    AddressIsMember { org: OrgName, email: String },
    #[error("no open invitation to '{org}' for this account's email address")]
    NoInvitation { org: OrgName },
    /// A member who is not an admin, asking for what admins do.
    #[error("only the admins of '{org}' (and the catalog's operators) may do this")]
    NotAdmin { org: OrgName },
    /// Creating an organisation, by anyone outside the operators' group.
    #[error("organisations are created by the catalog's operators")]
    NotOperator,
}

impl OrgError {
    /// The stable code clients can match on.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Name(_) => "invalid_org",
            Self::Exists(_) => "org_exists",
            Self::NotFound(_) => "not_found",
            Self::DisplayName => "invalid_display_name",
            Self::Role(_) => "invalid_role",
            Self::TooManyMembers { .. } => "too_many_members",
            Self::TooManyOrgs => "too_many_orgs",
            Self::AlreadyMember { .. } | Self::AddressIsMember { .. } => "already_member",
            Self::NotMember { .. } => "not_member",
            Self::LastAdmin { .. } => "last_admin",
            Self::Email => "invalid_email",
            Self::NoInvitation { .. } => "invitation_not_found",
            Self::NotAdmin { .. } => "not_an_admin",
            Self::NotOperator => "not_an_operator",
        }
    }
}

/// What an organisation's store answers besides the thing asked: a refusal of the change, or a
/// failure of the store itself.
#[derive(Debug, thiserror::Error)]
pub enum OrgStoreError {
    #[error(transparent)]
    Refused(#[from] OrgError),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

/// A display name as given: trimmed, 1 to [`Limits::DISPLAY_NAME`] characters, no control
/// characters.
pub fn display_name(raw: &str) -> Result<String, OrgError> {
    let trimmed = raw.trim();
    let chars = trimmed.chars().count();
    if chars == 0 || chars > Limits::DISPLAY_NAME || trimmed.chars().any(char::is_control) {
        return Err(OrgError::DisplayName);
    }
    Ok(trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_role_may_what_the_roles_below_it_may_and_more() {
        assert!(Role::ALL.iter().all(|r| r.may_read()));
        assert_eq!(
            Role::ALL.map(|r| (r.may_publish(), r.may_administer())),
            [(false, false), (true, false), (true, true)]
        );
    }

    #[test]
    fn roles_round_trip_by_name_and_nothing_else_parses() {
        for role in Role::ALL {
            assert_eq!(Role::parse(role.as_str()), Some(role));
        }
        for raw in ["", "Admin", "owner", "operator"] {
            assert_eq!(Role::parse(raw), None);
        }
    }

    #[test]
    fn addresses_are_trimmed_lowercased_and_checked_and_named_by_a_hash() {
        assert_eq!(email(" Bob@Example.COM ").unwrap(), "bob@example.com");
        for raw in [
            "",
            "bob",
            "@example.com",
            "bob@",
            "bob@@example.com",
            "b ob@x.y",
            &format!("{}@x.y", "b".repeat(251)),
        ] {
            assert_eq!(email(raw), Err(OrgError::Email), "{raw:?}");
        }
        let id = invitation_id("bob@example.com");
        assert_eq!(id.len(), 32);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(id, invitation_id("carol@example.com"));
        assert!(!id.contains("bob"));
    }

    #[test]
    fn an_invitation_is_open_for_its_days() {
        let now = Utc::now();
        let org = OrgName::parse("acme").unwrap();
        let invitation = Invitation::new(org, "bob@example.com".into(), Role::Editor, "ops", now);
        assert!(invitation.is_open_at(now + chrono::Duration::days(13)));
        assert!(!invitation.is_open_at(now + chrono::Duration::days(14)));
    }

    #[test]
    fn display_names_are_trimmed_and_bounded() {
        assert_eq!(display_name("  Acme Labs ").unwrap(), "Acme Labs");
        assert_eq!(display_name(&"é".repeat(100)).unwrap().chars().count(), 100);
        for raw in ["", "   ", "a\nb", &"é".repeat(101)] {
            assert_eq!(display_name(raw), Err(OrgError::DisplayName), "{raw:?}");
        }
    }
}

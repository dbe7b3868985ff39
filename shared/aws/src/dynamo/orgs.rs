//! Organisations and memberships in the keys table ([`DynamoOrgs`], docs/organisations.md).
//!
//! | item | `key_hash` | holds |
//! |---|---|---|
//! | organisation | `ORG#<org>` | `org`, `display_name`, `members`, `admins`, `created_at`, `created_by`; `owner` = [`ORGS_OWNER`] and `id` = `org#<org>`, so that the owner index lists every organisation in one Query |
//! | membership | `MEMBER#<org>#<sub>` | `org`, `owner` (the account), `id` = `org#<org>` (the account's organisations in one Query of the owner index; the organisation's members in one Query of the id index), `role`, `email`, `added_at`, `added_by` |
//! | account's count | `ORGS#<sub>` | `members`: how many organisations the account belongs to |
//! | invitation | `INVITE#<org>#<id>` | `org`, `email`, `role`, `added_by` (who invited), `added_at`, `expires_at`, `purge_at` (a day after it expires: DynamoDB's time to live removes it); `id` = `invite#<id>` (an address's invitations through the id index) and `owner` = `@invite#<org>` (an organisation's invitations in one Query of the owner index) |
//!
//! The limits ([`Limits`]) and the last admin are kept by the conditions of each change's one
//! transaction: the organisation's `members` and `admins` counters, the account's count.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::{
    AttributeValue, Delete, KeysAndAttributes, Put, TransactWriteItem, Update,
};
use aws_sdk_dynamodb::Client;

use super::attr::{corrupt, get_s, get_s_opt, get_time, get_u64, n, opt_s, s, time, Item};
use super::layout::name::{
    ADDED_AT, ADDED_BY, CREATED_AT, CREATED_BY, DISPLAY_NAME, EMAIL, EXPIRES_AT, ID, KEY_HASH,
    MEMBERS, ORG, OWNER, PURGE_AT, ROLE,
};
use super::layout::{
    api_key_key, member_key, membership_id, org_key, KEYS_BY_ID_INDEX, KEYS_BY_OWNER_INDEX,
    MEMBERSHIP_ID_PREFIX,
};
use super::requests::{batch_get_all, classify, get_consistent, query_all};
use super::tx::{build, transact_retrying};
use catalog::error::StoreError;
use catalog::keys::Owner;
use catalog::orgs::{
    invitation_id, Invitation, Limits, Membership, Org, OrgError, OrgName, OrgStoreError, Role,
};
use catalog::ports::OrgStore;

/// The `owner` of every organisation's item: not a Cognito `sub` (those are UUIDs).
pub const ORGS_OWNER: &str = "@organisations";
/// The organisation's count of admins.
const ADMINS: &str = "admins";
/// What a membership's `key_hash` begins with, within its organisation.
const MEMBER_PREFIX: &str = "MEMBER#";

/// What an invitation's `owner` is: its organisation's invitations share it.
fn invitations_owner(org: &OrgName) -> String {
    format!("@invite#{org}")
}

/// An invitation's `id` in the id index: every invitation made for one address shares it.
fn invitation_index_id(id: &str) -> String {
    format!("invite#{id}")
}

fn invitation_key(org: &OrgName, id: &str) -> Item {
    api_key_key(&format!("INVITE#{org}#{id}"))
}

fn invitation_item(i: &Invitation) -> Item {
    let mut item = invitation_key(&i.org, &i.id);
    item.extend([
        (ORG.to_owned(), s(i.org.as_str())),
        (OWNER.to_owned(), s(invitations_owner(&i.org))),
        (ID.to_owned(), s(invitation_index_id(&i.id))),
        (EMAIL.to_owned(), s(&i.email)),
        (ROLE.to_owned(), s(i.role.as_str())),
        (ADDED_BY.to_owned(), s(&i.invited_by)),
        (ADDED_AT.to_owned(), time(&i.invited_at)),
        (EXPIRES_AT.to_owned(), time(&i.expires_at)),
        (
            PURGE_AT.to_owned(),
            n((i.expires_at + chrono::Duration::days(1))
                .timestamp()
                .max(0) as u64),
        ),
    ]);
    item
}

fn invitation_of(item: &Item) -> Result<Invitation, StoreError> {
    let email = get_s(item, EMAIL)?;
    Ok(Invitation {
        org: OrgName::parse(&get_s(item, ORG)?).map_err(|_| corrupt(ORG))?,
        id: invitation_id(&email),
        role: Role::parse(&get_s(item, ROLE)?).ok_or_else(|| corrupt(ROLE))?,
        invited_by: get_s(item, ADDED_BY)?,
        invited_at: get_time(item, ADDED_AT)?,
        expires_at: get_time(item, EXPIRES_AT)?,
        email,
    })
}

/// The key of the item counting an account's organisations.
fn count_key(account: &str) -> Item {
    api_key_key(&format!("ORGS#{account}"))
}

/// Organisations and memberships, in the keys table.
#[derive(Clone, Debug)]
pub struct DynamoOrgs {
    client: Client,
    table: String,
}

fn org_of(item: &Item) -> Result<Org, StoreError> {
    Ok(Org {
        name: OrgName::parse(&get_s(item, ORG)?).map_err(|_| corrupt(ORG))?,
        display_name: get_s(item, DISPLAY_NAME)?,
        members: get_u64(item, MEMBERS)?,
        created_at: get_time(item, CREATED_AT)?,
        created_by: get_s(item, CREATED_BY)?,
    })
}

fn membership_of(item: &Item) -> Result<Membership, StoreError> {
    Ok(Membership {
        org: OrgName::parse(&get_s(item, ORG)?).map_err(|_| corrupt(ORG))?,
        account: get_s(item, OWNER)?,
        role: Role::parse(&get_s(item, ROLE)?).ok_or_else(|| corrupt(ROLE))?,
        email: get_s_opt(item, EMAIL)?,
        added_at: get_time(item, ADDED_AT)?,
        added_by: get_s(item, ADDED_BY)?,
    })
}

fn membership_item(m: &Membership) -> Item {
    let mut item = member_key(m.org.as_str(), &m.account);
    item.extend([
        (ORG.to_owned(), s(m.org.as_str())),
        (OWNER.to_owned(), s(&m.account)),
        (ID.to_owned(), s(membership_id(m.org.as_str()))),
        (ROLE.to_owned(), s(m.role.as_str())),
        (EMAIL.to_owned(), opt_s(m.email.as_deref())),
        (ADDED_AT.to_owned(), time(&m.added_at)),
        (ADDED_BY.to_owned(), s(&m.added_by)),
    ]);
    item
}

/// `1` if the role is admin's, else `0`: what a change adds to the organisation's admins.
fn admins(role: Role) -> i64 {
    i64::from(role == Role::Admin)
}

fn number(v: i64) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

impl DynamoOrgs {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self {
            client,
            table: table.into(),
        }
    }

    /// The items whose `id` is `id` and whose `key_hash` begins with `prefix`: their keys from
    /// the id index (keys only), then the items themselves, a BatchGetItem per 100.
    async fn by_id(&self, id: &str, prefix: &str) -> Result<Vec<Item>, StoreError> {
        let keys = query_all(
            self.client
                .query()
                .table_name(&self.table)
                .index_name(KEYS_BY_ID_INDEX)
                .key_condition_expression("#id = :id")
                .expression_attribute_names("#id", ID)
                .expression_attribute_values(":id", s(id)),
        )
        .await?;
        let wanted: Vec<Item> = keys
            .iter()
            .filter_map(|k| match k.get(KEY_HASH) {
                Some(AttributeValue::S(hash)) if hash.starts_with(prefix) => {
                    Some(api_key_key(hash))
                }
                _ => None,
            })
            .collect();
        let mut items = Vec::with_capacity(wanted.len());
        for batch in wanted.chunks(100) {
            let request = build(
                KeysAndAttributes::builder()
                    .set_keys(Some(batch.to_vec()))
                    .consistent_read(true)
                    .build(),
            )?;
            let mut found =
                batch_get_all(&self.client, HashMap::from([(self.table.clone(), request)])).await?;
            items.extend(found.remove(&self.table).unwrap_or_default());
        }
        Ok(items)
    }

    /// The write that counts one more organisation for an account, under its limit.
    fn count_up(&self, account: &str) -> Result<TransactWriteItem, StoreError> {
        let update = build(
            Update::builder()
                .table_name(&self.table)
                .set_key(Some(count_key(account)))
                .update_expression("ADD #m :one")
                .condition_expression("attribute_not_exists(#m) OR #m < :max")
                .expression_attribute_names("#m", MEMBERS)
                .expression_attribute_values(":one", number(1))
                .expression_attribute_values(":max", n(Limits::ORGS_PER_ACCOUNT as u64))
                .build(),
        )?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    fn count_down(&self, account: &str) -> Result<TransactWriteItem, StoreError> {
        let update = build(
            Update::builder()
                .table_name(&self.table)
                .set_key(Some(count_key(account)))
                .update_expression("ADD #m :minus")
                .expression_attribute_names("#m", MEMBERS)
                .expression_attribute_values(":minus", number(-1))
                .build(),
        )?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// The write that changes an organisation's counters by `members` and `admins`, under its
    /// members' limit (when adding) and keeping an admin (when taking one away).
    fn counters(
        &self,
        org: &OrgName,
        members: i64,
        admins: i64,
    ) -> Result<TransactWriteItem, StoreError> {
        let mut condition = vec!["attribute_exists(#k)".to_owned()];
        let mut update = Update::builder()
            .table_name(&self.table)
            .set_key(Some(org_key(org.as_str())))
            .update_expression("ADD #m :dm, #a :da")
            .expression_attribute_names("#k", KEY_HASH)
            .expression_attribute_names("#m", MEMBERS)
            .expression_attribute_names("#a", ADMINS)
            .expression_attribute_values(":dm", number(members))
            .expression_attribute_values(":da", number(admins));
        if members > 0 {
            condition.push("#m < :max".to_owned());
            update = update.expression_attribute_values(":max", n(Limits::MEMBERS_PER_ORG));
        }
        if admins < 0 {
            condition.push("#a > :one".to_owned());
            update = update.expression_attribute_values(":one", number(1));
        }
        let update = build(update.condition_expression(condition.join(" AND ")).build())?;
        Ok(TransactWriteItem::builder().update(update).build())
    }

    /// Why a membership change's transaction failed, from the position of its failed
    /// condition: the membership, the organisation's counters, or the account's count.
    async fn refusal(
        &self,
        at: usize,
        org: &OrgName,
        account: &str,
        membership: OrgError,
        adding: bool,
    ) -> OrgStoreError {
        match at {
            0 => membership.into(),
            1 => match self.org(org).await {
                Err(e) => e.into(),
                Ok(None) => OrgError::NotFound(org.to_string()).into(),
                Ok(Some(_)) if adding => OrgError::TooManyMembers { org: org.clone() }.into(),
                Ok(Some(_)) => OrgError::LastAdmin { org: org.clone() }.into(),
            },
            _ => {
                tracing::info!(account, "an account at its organisations' limit");
                OrgError::TooManyOrgs.into()
            }
        }
    }
}

impl OrgStore for DynamoOrgs {
    /// One transaction: the organisation's item (if no other has the name), its first admin,
    /// and the admin's count.
    async fn create_org(&self, org: &Org, admin: &Membership) -> Result<(), OrgStoreError> {
        let mut item = org_key(org.name.as_str());
        item.extend([
            (ORG.to_owned(), s(org.name.as_str())),
            (OWNER.to_owned(), s(ORGS_OWNER)),
            (ID.to_owned(), s(membership_id(org.name.as_str()))),
            (DISPLAY_NAME.to_owned(), s(&org.display_name)),
            (MEMBERS.to_owned(), n(1)),
            (ADMINS.to_owned(), n(1)),
            (CREATED_AT.to_owned(), time(&org.created_at)),
            (CREATED_BY.to_owned(), s(&org.created_by)),
        ]);
        let put = |item: Item| -> Result<TransactWriteItem, StoreError> {
            let put = build(
                Put::builder()
                    .table_name(&self.table)
                    .set_item(Some(item))
                    .condition_expression("attribute_not_exists(#k)")
                    .expression_attribute_names("#k", KEY_HASH)
                    .build(),
            )?;
            Ok(TransactWriteItem::builder().put(put).build())
        };
        let items = vec![
            put(item)?,
            put(membership_item(admin))?,
            self.count_up(&admin.account)?,
        ];
        match transact_retrying(&self.client, items).await? {
            Ok(()) => Ok(()),
            Err(0) => Err(OrgError::Exists(org.name.clone()).into()),
            Err(_) => Err(OrgError::TooManyOrgs.into()),
        }
    }

    async fn org(&self, name: &OrgName) -> Result<Option<Org>, StoreError> {
        get_consistent(&self.client, &self.table, org_key(name.as_str()))
            .await?
            .as_ref()
            .map(org_of)
            .transpose()
    }

    /// One Query of the owner index (every organisation's item has the same owner).
    async fn orgs(&self) -> Result<Vec<Org>, StoreError> {
        let items = query_all(
            self.client
                .query()
                .table_name(&self.table)
                .index_name(KEYS_BY_OWNER_INDEX)
                .key_condition_expression("#o = :o AND begins_with(#id, :p)")
                .expression_attribute_names("#o", OWNER)
                .expression_attribute_names("#id", ID)
                .expression_attribute_values(":o", s(ORGS_OWNER))
                .expression_attribute_values(":p", s(MEMBERSHIP_ID_PREFIX)),
        )
        .await?;
        items.iter().map(org_of).collect()
    }

    /// One UpdateItem of the organisation's item, if it exists.
    async fn set_display_name(
        &self,
        org: &OrgName,
        display_name: &str,
    ) -> Result<Org, OrgStoreError> {
        let out = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(org_key(org.as_str())))
            .update_expression("SET #d = :d")
            .condition_expression("attribute_exists(#k)")
            .expression_attribute_names("#d", DISPLAY_NAME)
            .expression_attribute_names("#k", KEY_HASH)
            .expression_attribute_values(":d", s(display_name))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::AllNew)
            .send()
            .await;
        match out {
            Ok(out) => Ok(org_of(out.attributes().ok_or_else(|| corrupt(ORG))?)?),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Err(OrgError::NotFound(org.to_string()).into())
            }
            Err(e) => Err(classify(e).into()),
        }
    }

    /// One transaction: the membership (if the account is not a member yet), the
    /// organisation's counters (under its limit), the account's count (under its own).
    async fn add_member(&self, m: &Membership) -> Result<(), OrgStoreError> {
        let put = build(
            Put::builder()
                .table_name(&self.table)
                .set_item(Some(membership_item(m)))
                .condition_expression("attribute_not_exists(#k)")
                .expression_attribute_names("#k", KEY_HASH)
                .build(),
        )?;
        let items = vec![
            TransactWriteItem::builder().put(put).build(),
            self.counters(&m.org, 1, admins(m.role))?,
            self.count_up(&m.account)?,
        ];
        match transact_retrying(&self.client, items).await? {
            Ok(()) => Ok(()),
            Err(at) => {
                let already = OrgError::AlreadyMember {
                    org: m.org.clone(),
                    account: m.account.clone(),
                };
                Err(self.refusal(at, &m.org, &m.account, already, true).await)
            }
        }
    }

    /// One read, then one transaction conditioned on the role read (a concurrent change makes
    /// it fail, and it is tried again on what that change left), and on an admin remaining.
    async fn set_role(
        &self,
        org: &OrgName,
        account: &Owner,
        role: Role,
    ) -> Result<Membership, OrgStoreError> {
        let not_member = || OrgError::NotMember {
            org: org.clone(),
            account: account.to_string(),
        };
        for _ in 0..3 {
            let mut current = self
                .membership(org, account)
                .await?
                .ok_or_else(not_member)?;
            if current.role == role {
                return Ok(current);
            }
            let update = build(
                Update::builder()
                    .table_name(&self.table)
                    .set_key(Some(member_key(org.as_str(), account.as_str())))
                    .update_expression("SET #r = :new")
                    .condition_expression("#r = :old")
                    .expression_attribute_names("#r", ROLE)
                    .expression_attribute_values(":new", s(role.as_str()))
                    .expression_attribute_values(":old", s(current.role.as_str()))
                    .build(),
            )?;
            let items = vec![
                TransactWriteItem::builder().update(update).build(),
                self.counters(org, 0, admins(role) - admins(current.role))?,
            ];
            match transact_retrying(&self.client, items).await? {
                Ok(()) => {
                    current.role = role;
                    return Ok(current);
                }
                Err(0) => continue,
                Err(at) => {
                    return Err(self
                        .refusal(at, org, account.as_str(), not_member(), false)
                        .await)
                }
            }
        }
        Err(
            StoreError::Unavailable("the membership kept changing while its role was set".into())
                .into(),
        )
    }

    async fn remove_member(
        &self,
        org: &OrgName,
        account: &Owner,
    ) -> Result<Membership, OrgStoreError> {
        let not_member = || OrgError::NotMember {
            org: org.clone(),
            account: account.to_string(),
        };
        for _ in 0..3 {
            let current = self
                .membership(org, account)
                .await?
                .ok_or_else(not_member)?;
            let delete = build(
                Delete::builder()
                    .table_name(&self.table)
                    .set_key(Some(member_key(org.as_str(), account.as_str())))
                    .condition_expression("#r = :old")
                    .expression_attribute_names("#r", ROLE)
                    .expression_attribute_values(":old", s(current.role.as_str()))
                    .build(),
            )?;
            let items = vec![
                TransactWriteItem::builder().delete(delete).build(),
                self.counters(org, -1, -admins(current.role))?,
                self.count_down(account.as_str())?,
            ];
            match transact_retrying(&self.client, items).await? {
                Ok(()) => return Ok(current),
                Err(0) => continue,
                Err(at) => {
                    return Err(self
                        .refusal(at, org, account.as_str(), not_member(), false)
                        .await)
                }
            }
        }
        Err(
            StoreError::Unavailable("the membership kept changing while it was removed".into())
                .into(),
        )
    }

    /// One Query of the id index (an organisation's item and its memberships share the `id`
    /// `org#<org>`; the index holds keys only), then their items by BatchGetItem: no index of
    /// its own, so that the keys table's indexes stay as they were (CloudFormation adds one
    /// index to a table per update).
    async fn members(&self, org: &OrgName) -> Result<Vec<Membership>, StoreError> {
        let prefix = format!("{MEMBER_PREFIX}{org}#");
        let items = self.by_id(&membership_id(org.as_str()), &prefix).await?;
        let mut members = items
            .iter()
            .map(membership_of)
            .collect::<Result<Vec<_>, _>>()?;
        members.sort_by(|a, b| a.account.cmp(&b.account));
        Ok(members)
    }

    async fn membership(
        &self,
        org: &OrgName,
        account: &Owner,
    ) -> Result<Option<Membership>, StoreError> {
        get_consistent(
            &self.client,
            &self.table,
            member_key(org.as_str(), account.as_str()),
        )
        .await?
        .as_ref()
        .map(membership_of)
        .transpose()
    }

    /// One Query of the owner index.
    async fn memberships_of(&self, account: &Owner) -> Result<Vec<Membership>, StoreError> {
        let items = query_all(super::access::owner_items_query(
            &self.client,
            &self.table,
            account,
            MEMBERSHIP_ID_PREFIX,
        ))
        .await?;
        items.iter().map(membership_of).collect()
    }

    /// One transaction: the invitation (replacing an earlier one for the address) and its
    /// notice in the outbox, so that the email is recorded with it and sent by the mailer.
    async fn invite(&self, invitation: &Invitation) -> Result<(), StoreError> {
        let put = build(
            Put::builder()
                .table_name(&self.table)
                .set_item(Some(invitation_item(invitation)))
                .build(),
        )?;
        let notice = catalog::notices::Notice::for_invitation(invitation, invitation.invited_at);
        let items = vec![
            TransactWriteItem::builder().put(put).build(),
            super::access::notices::notice_put(&self.table, &notice)?,
        ];
        match transact_retrying(&self.client, items).await? {
            Ok(()) => Ok(()),
            Err(at) => Err(StoreError::Other(
                format!("an invitation's write was refused by its condition at {at}").into(),
            )),
        }
    }

    /// One Query of the owner index (an organisation's invitations share their `owner`).
    async fn invitations(&self, org: &OrgName) -> Result<Vec<Invitation>, StoreError> {
        let items = query_all(
            self.client
                .query()
                .table_name(&self.table)
                .index_name(KEYS_BY_OWNER_INDEX)
                .key_condition_expression("#o = :o")
                .expression_attribute_names("#o", OWNER)
                .expression_attribute_values(":o", s(invitations_owner(org))),
        )
        .await?;
        items.iter().map(invitation_of).collect()
    }

    /// One Query of the id index, then the items.
    async fn invitations_for(&self, email: &str) -> Result<Vec<Invitation>, StoreError> {
        let items = self
            .by_id(&invitation_index_id(&invitation_id(email)), "INVITE#")
            .await?;
        items.iter().map(invitation_of).collect()
    }

    /// One transaction: the invitation deleted (if still there), the membership put (if the
    /// account is not a member yet), the organisation's counters (under its limit), the
    /// account's count (under its own).
    async fn accept(&self, invitation: &Invitation, m: &Membership) -> Result<(), OrgStoreError> {
        let delete = build(
            Delete::builder()
                .table_name(&self.table)
                .set_key(Some(invitation_key(&invitation.org, &invitation.id)))
                .condition_expression("attribute_exists(#k)")
                .expression_attribute_names("#k", KEY_HASH)
                .build(),
        )?;
        let put = build(
            Put::builder()
                .table_name(&self.table)
                .set_item(Some(membership_item(m)))
                .condition_expression("attribute_not_exists(#k)")
                .expression_attribute_names("#k", KEY_HASH)
                .build(),
        )?;
        let items = vec![
            TransactWriteItem::builder().put(put).build(),
            self.counters(&m.org, 1, admins(m.role))?,
            self.count_up(&m.account)?,
            TransactWriteItem::builder().delete(delete).build(),
        ];
        match transact_retrying(&self.client, items).await? {
            Ok(()) => Ok(()),
            Err(3) => Err(OrgError::NoInvitation { org: m.org.clone() }.into()),
            Err(at) => {
                let already = OrgError::AlreadyMember {
                    org: m.org.clone(),
                    account: m.account.clone(),
                };
                Err(self.refusal(at, &m.org, &m.account, already, true).await)
            }
        }
    }

    async fn drop_invitation(&self, org: &OrgName, id: &str) -> Result<bool, StoreError> {
        let out = self
            .client
            .delete_item()
            .table_name(&self.table)
            .set_key(Some(invitation_key(org, id)))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::AllOld)
            .send()
            .await
            .map_err(classify)?;
        Ok(out.attributes().is_some_and(|a| !a.is_empty()))
    }
}

impl super::access::DynamoAccess {
    /// Organisations and memberships, in the same keys table (the accounts function's routes
    /// reach them through this adapter).
    pub fn orgs(&self) -> DynamoOrgs {
        let (client, table) = self.keys_table();
        DynamoOrgs::new(client.clone(), table)
    }
}

/// The accounts function reaches organisations through its access adapter (the same table).
impl OrgStore for super::access::DynamoAccess {
    async fn create_org(&self, org: &Org, admin: &Membership) -> Result<(), OrgStoreError> {
        self.orgs().create_org(org, admin).await
    }

    async fn org(&self, name: &OrgName) -> Result<Option<Org>, StoreError> {
        self.orgs().org(name).await
    }

    async fn orgs(&self) -> Result<Vec<Org>, StoreError> {
        OrgStore::orgs(&self.orgs()).await
    }

    async fn set_display_name(
        &self,
        org: &OrgName,
        display_name: &str,
    ) -> Result<Org, OrgStoreError> {
        self.orgs().set_display_name(org, display_name).await
    }

    async fn add_member(&self, membership: &Membership) -> Result<(), OrgStoreError> {
        self.orgs().add_member(membership).await
    }

    async fn set_role(
        &self,
        org: &OrgName,
        account: &Owner,
        role: Role,
    ) -> Result<Membership, OrgStoreError> {
        self.orgs().set_role(org, account, role).await
    }

    async fn remove_member(
        &self,
        org: &OrgName,
        account: &Owner,
    ) -> Result<Membership, OrgStoreError> {
        self.orgs().remove_member(org, account).await
    }

    async fn members(&self, org: &OrgName) -> Result<Vec<Membership>, StoreError> {
        self.orgs().members(org).await
    }

    async fn membership(
        &self,
        org: &OrgName,
        account: &Owner,
    ) -> Result<Option<Membership>, StoreError> {
        self.orgs().membership(org, account).await
    }

    async fn memberships_of(&self, account: &Owner) -> Result<Vec<Membership>, StoreError> {
        self.orgs().memberships_of(account).await
    }

    async fn invite(&self, invitation: &Invitation) -> Result<(), StoreError> {
        self.orgs().invite(invitation).await
    }

    async fn invitations(&self, org: &OrgName) -> Result<Vec<Invitation>, StoreError> {
        self.orgs().invitations(org).await
    }

    async fn invitations_for(&self, email: &str) -> Result<Vec<Invitation>, StoreError> {
        self.orgs().invitations_for(email).await
    }

    async fn accept(&self, invitation: &Invitation, m: &Membership) -> Result<(), OrgStoreError> {
        self.orgs().accept(invitation, m).await
    }

    async fn drop_invitation(&self, org: &OrgName, id: &str) -> Result<bool, StoreError> {
        self.orgs().drop_invitation(org, id).await
    }
}

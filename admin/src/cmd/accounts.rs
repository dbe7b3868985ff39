//! `catalog-admin accounts`: the people who sign up on the web page (a Cognito user pool) and
//! the read keys they mint.

use aws_sdk_cognitoidentityprovider::error::{ProvideErrorMetadata, SdkError};
use catalog::keys::{KeyInfo, KeyStatus, Owner};
use catalog::ports::AccountKeyStore;
use catalog::time::format_time;
use catalog_aws::dynamo::accounts::DynamoAccounts;
use chrono::{DateTime, Utc};

use aws_sdk_cognitoidentityprovider::types::AttributeType;

use super::{Aws, CliError, Context};

mod orphans;

use orphans::orphans;

/// Show, invite, disable and enable accounts, and name operators (by email, or by account id:
/// the Cognito `sub`, which still names an account deleted from the user pool); find the keys
/// and grants of accounts the pool no longer knows. Needs USER_POOL_ID.
///
/// Example: catalog-admin accounts disable someone@example.com
#[derive(clap::Subcommand)]
pub enum Command {
    /// An account's id (its Cognito `sub`), status and keys.
    ///
    /// Example: catalog-admin accounts show someone@example.com
    Show {
        /// An email, or an account id (a Cognito `sub`).
        account: String,
    },
    /// Blocks sign-in (Cognito), signs the account out everywhere, refuses its new keys and
    /// revokes all of its keys and grants. By account id, also an account deleted from the user
    /// pool: its keys and grants.
    ///
    /// Example: catalog-admin accounts disable someone@example.com
    Disable {
        /// An email, or an account id (a Cognito `sub`).
        account: String,
    },
    /// Allows sign-in and new keys again; revoked keys stay revoked.
    ///
    /// Example: catalog-admin accounts enable someone@example.com
    Enable {
        /// An email, or an account id (a Cognito `sub`).
        account: String,
    },
    /// Invites a person (SignUpMode invite, or any mode): creates the account with its email
    /// verified, and Cognito emails a temporary password. The first sign-in on the site asks
    /// for a new password.
    ///
    /// Example: catalog-admin accounts invite someone@example.com
    Invite {
        email: String,
        /// Send the invitation again (a new temporary password) to an account that has not
        /// signed in yet.
        #[arg(long)]
        resend: bool,
    },
    /// Adds the account to the operators' group (OPERATORS_GROUP, default `operators`, the
    /// template's OperatorsGroupName): it decides access requests on the site once it signs
    /// in again. `--remove` takes it out.
    ///
    /// Example: catalog-admin accounts operator someone@example.com
    Operator {
        /// An email, or an account id (a Cognito `sub`).
        account: String,
        #[arg(long)]
        remove: bool,
    },
    /// Accounts that hold keys or access records in the keys table but are no longer in the
    /// user pool (deleted by an operator, or by the person with Cognito's DeleteUser): their
    /// id, last known email, keys in force and open requests or grants. `--disable` disables
    /// each as `accounts disable` would (its keys and grants revoked).
    ///
    /// Example: catalog-admin accounts orphans --disable
    Orphans {
        #[arg(long)]
        disable: bool,
    },
}

/// `accounts invite`: AdminCreateUser with the email verified (the person proves it by
/// signing in with the emailed password), Cognito's invitation email.
async fn invite(aws: &Aws, pool: &str, email: &str, resend: bool) -> Result<(), CliError> {
    // Accounts are named in lowercase (the sign-up trigger refuses capitals).
    let email = &email.trim().to_lowercase();
    use aws_sdk_cognitoidentityprovider::types::{
        AttributeType, DeliveryMediumType, MessageActionType,
    };
    let attribute = |name: &str, value: &str| {
        AttributeType::builder()
            .name(name)
            .value(value)
            .build()
            .map_err(|e| CliError::Usage(e.to_string()))
    };
    let mut request = aws
        .cognito()
        .admin_create_user()
        .user_pool_id(pool)
        .username(email)
        .user_attributes(attribute("email", email)?)
        .user_attributes(attribute("email_verified", "true")?)
        .desired_delivery_mediums(DeliveryMediumType::Email);
    if resend {
        request = request.message_action(MessageActionType::Resend);
    }
    let created = request.send().await.map_err(|e| {
        if e.code() == Some("UsernameExistsException") {
            CliError::Usage(format!(
                "{email} already has an account (--resend sends a new temporary password to one that has not signed in yet)"
            ))
        } else {
            cognito_error(email, e)
        }
    })?;
    let sub = created
        .user()
        .into_iter()
        .flat_map(|u| u.attributes())
        .find(|a| a.name() == "sub")
        .and_then(|a| a.value())
        .unwrap_or("-");
    println!(
        "invited {email} ({sub}): Cognito emailed a temporary password, valid for 3 days; the \
         first sign-in on the site asks for a new one"
    );
    Ok(())
}

/// The operators' group: OPERATORS_GROUP, else the template's default.
fn operators_group() -> String {
    std::env::var("OPERATORS_GROUP")
        .ok()
        .filter(|g| !g.trim().is_empty())
        .unwrap_or_else(|| "operators".to_owned())
}

fn cognito_error<E, R>(email: &str, err: SdkError<E, R>) -> CliError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    if err.code() == Some("UserNotFoundException") {
        return CliError::Usage(format!("no account with the email {email}"));
    }
    CliError::Cognito(Box::new(err))
}

/// An account as the user pool holds it.
pub(super) struct PoolUser {
    username: String,
    enabled: bool,
    status: Option<String>,
    email: Option<String>,
}

/// An account named on the command line: its id (Cognito `sub`), and its user in the pool
/// (`None`: the pool no longer holds it, but its keys and records may remain).
pub(super) struct Account {
    pub sub: Owner,
    pub user: Option<PoolUser>,
    /// The email, else the id: how messages name it.
    pub name: String,
}

impl Account {
    /// Its email as the pool holds it.
    pub fn email(&self) -> Option<&str> {
        self.user.as_ref().and_then(|u| u.email.as_deref())
    }

    /// The user in the pool, or why a command that needs one cannot run.
    fn in_pool(&self) -> Result<&PoolUser, CliError> {
        self.user.as_ref().ok_or_else(|| {
            CliError::Usage(format!(
                "the account {} is no longer in the user pool (deleted): only `accounts show`, \
                 `accounts disable`, `access reject` and `access revoke` reach it",
                self.sub
            ))
        })
    }
}

fn attribute<'a>(attributes: &'a [AttributeType], name: &str) -> Option<&'a str> {
    attributes
        .iter()
        .find(|a| a.name() == name)
        .and_then(|a| a.value())
}

/// An account by its email (any case; accounts are named in lowercase) or by its id (a Cognito
/// `sub`, which also names an account the pool no longer holds).
pub(super) async fn find(aws: &Aws, who: &str) -> Result<Account, CliError> {
    let who = who.trim();
    let pool = aws.config.user_pool_id()?.to_owned();
    if !who.contains('@') {
        let sub = Owner::parse(who).ok_or_else(|| {
            CliError::Usage(format!(
                "'{who}' is neither an email nor an account id (a Cognito sub)"
            ))
        })?;
        // A sub is letters, digits and hyphens (Owner::parse): nothing to escape.
        let found = aws
            .cognito()
            .list_users()
            .user_pool_id(&pool)
            .filter(format!("sub = \"{sub}\""))
            .limit(1)
            .send()
            .await
            .map_err(|e| cognito_error(who, e))?;
        let user = found.users().first().map(|u| PoolUser {
            username: u.username().unwrap_or_default().to_owned(),
            enabled: u.enabled(),
            status: u.user_status().map(|s| s.as_str().to_owned()),
            email: attribute(u.attributes(), "email").map(str::to_owned),
        });
        let name = user
            .as_ref()
            .and_then(|u| u.email.clone())
            .unwrap_or_else(|| sub.to_string());
        return Ok(Account { sub, user, name });
    }
    let get = |name: String| {
        aws.cognito()
            .admin_get_user()
            .user_pool_id(&pool)
            .username(name)
            .send()
    };
    // Accounts are named in lowercase; one made before that rule keeps the case it was made with.
    let lower = who.to_lowercase();
    let user = match get(lower.clone()).await {
        Ok(user) => user,
        Err(e) if e.code() == Some("UserNotFoundException") && lower != who => get(who.to_owned())
            .await
            .map_err(|e| cognito_error(who, e))?,
        Err(e) => return Err(cognito_error(who, e)),
    };
    let sub = attribute(user.user_attributes(), "sub")
        .and_then(Owner::parse)
        .ok_or_else(|| CliError::Usage(format!("the account {who} has no sub attribute")))?;
    Ok(Account {
        sub,
        user: Some(PoolUser {
            username: user.username().to_owned(),
            enabled: user.enabled(),
            status: user.user_status().map(|s| s.as_str().to_owned()),
            email: attribute(user.user_attributes(), "email").map(str::to_owned),
        }),
        name: who.to_owned(),
    })
}

/// Refuses the account's new keys, revokes its keys and its grants (closing its pending
/// requests): how many keys and grants.
async fn close(aws: &Aws, sub: &Owner, now: DateTime<Utc>) -> Result<(usize, usize), CliError> {
    let accounts: DynamoAccounts = aws.writer().accounts();
    // An access token issued before stays valid until it expires (15 minutes at most): the
    // account's item refuses its new keys, requests and decisions from now on.
    accounts.set_disabled(sub, Some(now)).await?;
    let keys = accounts.revoke_all(sub, now).await?;
    let grants = aws
        .access()
        .revoke_all(sub, &super::operator(), now)
        .await?;
    Ok((keys, grants))
}

pub async fn run(command: Command, ctx: &Context) -> Result<(), CliError> {
    let aws = ctx.aws().await?;
    let pool = aws.config.user_pool_id()?.to_owned();
    let cognito = aws.cognito();
    let accounts: DynamoAccounts = aws.writer().accounts();
    let who = match &command {
        // The commands for an account that does not exist yet, and for those that no longer do.
        Command::Invite { email, resend } => return invite(&aws, &pool, email, *resend).await,
        Command::Orphans { disable } => return orphans(&aws, &pool, *disable, ctx.now).await,
        Command::Show { account }
        | Command::Disable { account }
        | Command::Enable { account }
        | Command::Operator { account, .. } => account.clone(),
    };
    let account = find(&aws, &who).await?;
    let (sub, email) = (account.sub.clone(), account.name.clone());
    match command {
        Command::Show { .. } => {
            println!("account {email}");
            println!("  id (sub)  {sub}");
            match &account.user {
                Some(user) => {
                    println!("  enabled   {}", user.enabled);
                    println!("  status    {}", user.status.as_deref().unwrap_or("-"));
                }
                None => println!("  status    not in the user pool (deleted)"),
            }
            print_keys(&accounts.list_keys(&sub).await?, ctx.now);
        }
        Command::Disable { .. } => {
            if let Some(user) = &account.user {
                let username = &user.username;
                cognito
                    .admin_disable_user()
                    .user_pool_id(&pool)
                    .username(username)
                    .send()
                    .await
                    .map_err(|e| cognito_error(&email, e))?;
                cognito
                    .admin_user_global_sign_out()
                    .user_pool_id(&pool)
                    .username(username)
                    .send()
                    .await
                    .map_err(|e| cognito_error(&email, e))?;
            }
            let (revoked, grants) = close(&aws, &sub, ctx.now).await?;
            let signed_out = if account.user.is_some() {
                "sign-in blocked, signed out"
            } else {
                "not in the user pool (deleted)"
            };
            println!(
                "disabled {email} ({sub}): {signed_out}, {revoked} key(s) revoked, {grants} \
                 grant(s) revoked"
            );
        }
        Command::Enable { .. } => {
            let username = &account.in_pool()?.username;
            cognito
                .admin_enable_user()
                .user_pool_id(&pool)
                .username(username)
                .send()
                .await
                .map_err(|e| cognito_error(&email, e))?;
            accounts.set_disabled(&sub, None).await?;
            println!("enabled {email} ({sub}); its revoked keys stay revoked");
        }
        Command::Invite { .. } | Command::Orphans { .. } => {
            unreachable!("answered before the account is looked up")
        }
        Command::Operator { remove, .. } => {
            let username = &account.in_pool()?.username;
            let group = operators_group();
            if remove {
                cognito
                    .admin_remove_user_from_group()
                    .user_pool_id(&pool)
                    .username(username)
                    .group_name(&group)
                    .send()
                    .await
                    .map_err(|e| cognito_error(&email, e))?;
                println!("removed {email} ({sub}) from the group {group}");
            } else {
                cognito
                    .admin_add_user_to_group()
                    .user_pool_id(&pool)
                    .username(username)
                    .group_name(&group)
                    .send()
                    .await
                    .map_err(|e| cognito_error(&email, e))?;
                println!(
                    "added {email} ({sub}) to the group {group}: it decides access requests \
                     once it signs in again"
                );
            }
        }
    }
    Ok(())
}
fn print_keys(keys: &[KeyInfo], now: DateTime<Utc>) {
    let t = |t: Option<DateTime<Utc>>| t.map_or("-".to_owned(), |t| format_time(&t));
    println!(
        "  {:<22} {:<10} {:<8} {:<21} {:<21} {:<21} label",
        "key", "prefix", "status", "created", "expires", "last used"
    );
    for k in keys {
        let status = match k.status_at(now) {
            KeyStatus::Active => "active",
            KeyStatus::Expired => "expired",
            KeyStatus::Revoked => "revoked",
        };
        println!(
            "  {:<22} {:<10} {:<8} {:<21} {:<21} {:<21} {}",
            k.id,
            k.prefix,
            status,
            format_time(&k.created_at),
            t(k.expires_at),
            t(k.last_used_at),
            k.label
        );
    }
}

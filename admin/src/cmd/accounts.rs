//! `catalog-admin accounts`: the people who sign up on the web page (a Cognito user pool) and
//! the read keys they mint.

use aws_sdk_cognitoidentityprovider::error::{ProvideErrorMetadata, SdkError};
use catalog::dynamo::accounts::DynamoAccounts;
use catalog::keys::{KeyInfo, KeyStatus, Owner};
use catalog::ports::AccountKeyStore;
use catalog::time::format_time;
use chrono::{DateTime, Utc};

use aws_sdk_cognitoidentityprovider::operation::admin_get_user::AdminGetUserOutput;

use super::{Aws, CliError, Context};

/// Show, invite, disable and enable accounts, and name operators (by email). Needs USER_POOL_ID.
///
/// Example: catalog-admin accounts disable someone@example.com
#[derive(clap::Subcommand)]
pub enum Command {
    /// An account's id (its Cognito `sub`), status and keys.
    ///
    /// Example: catalog-admin accounts show someone@example.com
    Show { email: String },
    /// Blocks sign-in (Cognito), signs the account out everywhere, refuses its new keys and
    /// revokes all of its keys and grants.
    ///
    /// Example: catalog-admin accounts disable someone@example.com
    Disable { email: String },
    /// Allows sign-in and new keys again; revoked keys stay revoked.
    ///
    /// Example: catalog-admin accounts enable someone@example.com
    Enable { email: String },
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
        email: String,
        #[arg(long)]
        remove: bool,
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

/// An account by its email: its id (Cognito `sub`) and the user as Cognito holds it.
pub(super) async fn find(aws: &Aws, email: &str) -> Result<(Owner, AdminGetUserOutput), CliError> {
    let pool = aws.config.user_pool_id()?.to_owned();
    let get = |name: String| {
        aws.cognito()
            .admin_get_user()
            .user_pool_id(&pool)
            .username(name)
            .send()
    };
    // Accounts are named in lowercase; one made before that rule keeps the case it was made with.
    let lower = email.trim().to_lowercase();
    let user = match get(lower.clone()).await {
        Ok(user) => user,
        Err(e) if e.code() == Some("UserNotFoundException") && lower != email.trim() => {
            get(email.trim().to_owned())
                .await
                .map_err(|e| cognito_error(email, e))?
        }
        Err(e) => return Err(cognito_error(email, e)),
    };
    let sub = user
        .user_attributes()
        .iter()
        .find(|a| a.name() == "sub")
        .and_then(|a| a.value())
        .and_then(Owner::parse)
        .ok_or_else(|| CliError::Usage(format!("the account {email} has no sub attribute")))?;
    Ok((sub, user))
}

pub async fn run(command: Command, ctx: &Context) -> Result<(), CliError> {
    let aws = ctx.aws().await?;
    let pool = aws.config.user_pool_id()?.to_owned();
    let cognito = aws.cognito();
    let accounts: DynamoAccounts = aws.writer().accounts();
    let email = match &command {
        // The one command for an account that does not exist yet.
        Command::Invite { email, resend } => return invite(&aws, &pool, email, *resend).await,
        Command::Show { email }
        | Command::Disable { email }
        | Command::Enable { email }
        | Command::Operator { email, .. } => email.clone(),
    };
    let (sub, user) = find(&aws, &email).await?;
    let username = user.username().to_owned();
    match command {
        Command::Show { .. } => {
            println!("account {email}");
            println!("  id (sub)  {sub}");
            println!("  enabled   {}", user.enabled());
            println!(
                "  status    {}",
                user.user_status().map_or("-", |s| s.as_str())
            );
            print_keys(&accounts.list_keys(&sub).await?, ctx.now);
        }
        Command::Disable { .. } => {
            cognito
                .admin_disable_user()
                .user_pool_id(&pool)
                .username(&username)
                .send()
                .await
                .map_err(|e| cognito_error(&email, e))?;
            cognito
                .admin_user_global_sign_out()
                .user_pool_id(&pool)
                .username(&username)
                .send()
                .await
                .map_err(|e| cognito_error(&email, e))?;
            // An access token issued before stays valid until it expires (15 minutes at most):
            // the account's item refuses its new keys from now on.
            accounts.set_disabled(&sub, Some(ctx.now)).await?;
            let revoked = accounts.revoke_all(&sub, ctx.now).await?;
            let grants = aws
                .access()
                .revoke_all(&sub, &super::operator(), ctx.now)
                .await?;
            println!(
                "disabled {email} ({sub}): sign-in blocked, signed out, {revoked} key(s) \
                 revoked, {grants} grant(s) revoked"
            );
        }
        Command::Enable { .. } => {
            cognito
                .admin_enable_user()
                .user_pool_id(&pool)
                .username(&username)
                .send()
                .await
                .map_err(|e| cognito_error(&email, e))?;
            accounts.set_disabled(&sub, None).await?;
            println!("enabled {email} ({sub}); its revoked keys stay revoked");
        }
        Command::Invite { .. } => unreachable!("answered before the account is looked up"),
        Command::Operator { remove, .. } => {
            let group = operators_group();
            if remove {
                cognito
                    .admin_remove_user_from_group()
                    .user_pool_id(&pool)
                    .username(&username)
                    .group_name(&group)
                    .send()
                    .await
                    .map_err(|e| cognito_error(&email, e))?;
                println!("removed {email} ({sub}) from the group {group}");
            } else {
                cognito
                    .admin_add_user_to_group()
                    .user_pool_id(&pool)
                    .username(&username)
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

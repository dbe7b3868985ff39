//! The accounts' user pool on a local Cognito (moto's server mode), set up as template.yaml
//! declares it, and the steps a person takes on the web page: sign up, confirm, sign in.

use aws_sdk_cognitoidentityprovider::types::{
    AttributeType, AuthFlowType, ExplicitAuthFlowsType, PasswordPolicyType, TimeUnitsType,
    TokenValidityUnitsType, UserPoolMfaType, UserPoolPolicyType, UsernameAttributeType,
    VerifiedAttributeType,
};
use aws_sdk_cognitoidentityprovider::Client;

use crate::DevError;

/// The user pool and the web page's app client.
#[derive(Debug, Clone)]
pub struct UserPool {
    pub pool_id: String,
    pub client_id: String,
}

/// A signed-in user's tokens.
#[derive(Debug, Clone)]
pub struct Tokens {
    pub access_token: String,
    pub id_token: String,
}

/// Creates the user pool (email as the user name, verified email, the template's password
/// policy) and a public app client (no secret; password and SRP sign-in), unless a pool of that
/// name exists.
pub async fn ensure_user_pool(cognito: &Client, name: &str) -> Result<UserPool, DevError> {
    let pools = cognito.list_user_pools().max_results(60).send().await?;
    let existing = pools
        .user_pools()
        .iter()
        .find(|p| p.name() == Some(name))
        .and_then(|p| p.id().map(str::to_owned));
    let pool_id = match existing {
        Some(id) => id,
        None => cognito
            .create_user_pool()
            .pool_name(name)
            .username_attributes(UsernameAttributeType::Email)
            .auto_verified_attributes(VerifiedAttributeType::Email)
            // As template.yaml's default (AccountMfa): each person may turn an app on.
            .mfa_configuration(UserPoolMfaType::Optional)
            .policies(
                UserPoolPolicyType::builder()
                    .password_policy(
                        PasswordPolicyType::builder()
                            .minimum_length(12)
                            .require_lowercase(true)
                            .require_uppercase(true)
                            .require_numbers(true)
                            .require_symbols(false)
                            .build(),
                    )
                    .build(),
            )
            .send()
            .await?
            .user_pool()
            .and_then(|p| p.id().map(str::to_owned))
            .ok_or("CreateUserPool returned no id")?,
    };
    let clients = cognito
        .list_user_pool_clients()
        .user_pool_id(&pool_id)
        .max_results(60)
        .send()
        .await?;
    let existing = clients
        .user_pool_clients()
        .iter()
        .find(|c| c.client_name() == Some("web"))
        .and_then(|c| c.client_id().map(str::to_owned));
    let client_id = match existing {
        Some(id) => id,
        None => cognito
            .create_user_pool_client()
            .user_pool_id(&pool_id)
            .client_name("web")
            .generate_secret(false)
            .explicit_auth_flows(ExplicitAuthFlowsType::AllowUserPasswordAuth)
            .explicit_auth_flows(ExplicitAuthFlowsType::AllowUserSrpAuth)
            .explicit_auth_flows(ExplicitAuthFlowsType::AllowRefreshTokenAuth)
            // As template.yaml's web client: 15-minute access and ID tokens.
            .access_token_validity(15)
            .id_token_validity(15)
            .token_validity_units(
                TokenValidityUnitsType::builder()
                    .access_token(TimeUnitsType::Minutes)
                    .id_token(TimeUnitsType::Minutes)
                    .build(),
            )
            .send()
            .await?
            .user_pool_client()
            .and_then(|c| c.client_id().map(str::to_owned))
            .ok_or("CreateUserPoolClient returned no id")?,
    };
    // The operators' group (template.yaml's OperatorsGroup), once.
    let groups = cognito.list_groups().user_pool_id(&pool_id).send().await?;
    if !groups
        .groups()
        .iter()
        .any(|g| g.group_name() == Some(OPERATORS_GROUP))
    {
        cognito
            .create_group()
            .user_pool_id(&pool_id)
            .group_name(OPERATORS_GROUP)
            .description("May decide access requests on the site")
            .send()
            .await?;
    }
    Ok(UserPool { pool_id, client_id })
}

/// The operators' group of the local stack (template.yaml's default `OperatorsGroupName`).
pub const OPERATORS_GROUP: &str = "operators";

/// Adds an account to the operators' group, as `catalog-admin accounts operator` does.
pub async fn make_operator(cognito: &Client, pool_id: &str, email: &str) -> Result<(), DevError> {
    cognito
        .admin_add_user_to_group()
        .user_pool_id(pool_id)
        .username(email)
        .group_name(OPERATORS_GROUP)
        .send()
        .await?;
    Ok(())
}

/// Signs a user up as the web page does, then confirms the account as the emailed code would
/// (the emulator sends no email); returns the user's `sub`.
pub async fn sign_up_confirmed(
    cognito: &Client,
    pool: &UserPool,
    email: &str,
    password: &str,
) -> Result<String, DevError> {
    let signed_up = cognito
        .sign_up()
        .client_id(&pool.client_id)
        .username(email)
        .password(password)
        .user_attributes(
            AttributeType::builder()
                .name("email")
                .value(email)
                .build()?,
        )
        .send()
        .await?;
    cognito
        .admin_confirm_sign_up()
        .user_pool_id(&pool.pool_id)
        .username(email)
        .send()
        .await?;
    Ok(signed_up.user_sub().to_owned())
}

/// Signs in with email and password (`USER_PASSWORD_AUTH`).
pub async fn sign_in(
    cognito: &Client,
    pool: &UserPool,
    email: &str,
    password: &str,
) -> Result<Tokens, DevError> {
    let out = cognito
        .initiate_auth()
        .client_id(&pool.client_id)
        .auth_flow(AuthFlowType::UserPasswordAuth)
        .auth_parameters("USERNAME", email)
        .auth_parameters("PASSWORD", password)
        .send()
        .await?;
    let result = out
        .authentication_result()
        .ok_or("InitiateAuth returned a challenge, not tokens")?;
    Ok(Tokens {
        access_token: result.access_token().ok_or("no access token")?.to_owned(),
        id_token: result.id_token().ok_or("no id token")?.to_owned(),
    })
}

//! `catalog-local-init`: creates the tables and the bucket on the local emulators, as
//! template.yaml declares them, unless they exist; then the accounts' user pool and its web
//! client on the local Cognito, its operators' group, and a confirmed demo account in that group. Configured like the functions:
//! DATASETS_TABLE, KEYS_TABLE, DATA_BUCKET and the SDK's own variables
//! (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER,
//! ...); DEMO_EMAIL and DEMO_PASSWORD name the demo account. Datasets and keys are then written
//! with `catalog-admin`.
//!
//! Prints `USER_POOL_ID=...` and `USER_POOL_CLIENT_ID=...` lines for the shell to export.

use catalog_aws::config::DataConfig;
use catalog_dev::cognito::{ensure_user_pool, make_operator, sign_up_confirmed};
use catalog_dev::{ensure_resources, DevError, Target};

#[tokio::main]
async fn main() -> Result<(), DevError> {
    let config = DataConfig::from_env()?;
    let sdk = catalog_aws::aws::load_sdk_config().await;
    let dynamo = aws_sdk_dynamodb::Client::new(&sdk);
    let s3 = aws_sdk_s3::Client::from_conf(catalog_aws::aws::s3_config(
        &sdk,
        config.s3_force_path_style,
    ));
    let target = Target {
        datasets_table: config.datasets_table,
        keys_table: config.keys_table,
        bucket: config.bucket,
        downloads_table: std::env::var("DOWNLOADS_TABLE")
            .unwrap_or_else(|_| "catalog-downloads".into()),
    };
    ensure_resources(&dynamo, &s3, &target).await?;

    let cognito = aws_sdk_cognitoidentityprovider::Client::new(&sdk);
    let pool = ensure_user_pool(&cognito, "catalog-accounts").await?;
    if let (Ok(email), Ok(password)) = (std::env::var("DEMO_EMAIL"), std::env::var("DEMO_PASSWORD"))
    {
        let exists = cognito
            .admin_get_user()
            .user_pool_id(&pool.pool_id)
            .username(&email)
            .send()
            .await
            .is_ok();
        if !exists {
            sign_up_confirmed(&cognito, &pool, &email, &password).await?;
            // The demo account decides access requests too (the site's Access requests page).
            make_operator(&cognito, &pool.pool_id, &email).await?;
        }
    }
    println!("USER_POOL_ID={}", pool.pool_id);
    println!("USER_POOL_CLIENT_ID={}", pool.client_id);
    Ok(())
}

//! The data bucket's CORS rule in front of the local S3 server ([`catalog_dev::s3_cors`]), as
//! `dev/run` runs it: listens on S3_CORS_ADDR (127.0.0.1:8014), forwards to S3_UPSTREAM (the
//! S3 server, e.g. http://127.0.0.1:8015), and allows SITE_ORIGIN (http://127.0.0.1:3000).

use catalog_dev::s3_cors::S3Cors;
use catalog_dev::DevError;
use tokio::net::TcpListener;

#[tokio::main]
async fn main() -> Result<(), DevError> {
    lambda_http::tracing::init_default_subscriber();
    let var = |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.into());
    let addr = var("S3_CORS_ADDR", "127.0.0.1:8014");
    let upstream =
        std::env::var("S3_UPSTREAM").map_err(|_| "S3_UPSTREAM must name the S3 server")?;
    let origin = var("SITE_ORIGIN", "http://127.0.0.1:3000");
    let listener = TcpListener::bind(&addr).await?;
    tracing::info!(%addr, %upstream, %origin, "S3 with the data bucket's CORS rule");
    let proxy = S3Cors::new(&upstream, Some(&origin));
    tokio::select! {
        served = proxy.serve(listener) => served?,
        _ = tokio::signal::ctrl_c() => {}
    }
    Ok(())
}

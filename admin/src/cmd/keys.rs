//! `catalog-admin keys`: API keys, of which only the hash is stored.

use catalog::keys::{Scope, MAX_DATASETS};
use catalog::time::format_time;
use catalog_writer::{generate_key, NewKey};
use chrono::{DateTime, Utc};

use super::{CliError, Context};
use crate::parse_when;

/// Create, list and revoke API keys.
///
/// Example: catalog-admin keys create --scope read --label notebook
#[derive(clap::Subcommand)]
pub enum Command {
    /// Create a key and print it once (only its hash is stored).
    ///
    /// Example: catalog-admin keys create --scope read --label "team notebook" --expires +90d
    Create {
        /// Scope of the key (repeatable); `read` allows downloads.
        #[arg(long = "scope", required = true)]
        scopes: Vec<String>,
        #[arg(long, default_value = "")]
        label: String,
        /// Expiry: RFC 3339 time or +<n><s|m|h|d>.
        #[arg(long)]
        expires: Option<String>,
        /// Limit the key to this dataset (repeatable, at most 20): it reads nothing else.
        #[arg(long = "dataset")]
        datasets: Vec<String>,
        /// Also write a Delta Sharing profile file for the key here (a new file, readable by
        /// its owner only), to hand to a recipient: the endpoint, the key, its expiry.
        #[arg(long, requires = "api_url")]
        sharing_profile: Option<std::path::PathBuf>,
        /// The API's base URL, ending in /api/v1 (the stack's ApiBaseUrl output, or the site's
        /// URL followed by api/v1), for --sharing-profile.
        #[arg(long, env = "CATALOG_API_URL")]
        api_url: Option<String>,
    },
    /// List keys: id, prefix, scopes, created, expiry, revoked, last used, owner (an account's
    /// id, or `-` for an operator's key), the datasets it is limited to (`-`: none), label.
    /// Never the secret.
    ///
    /// Example: catalog-admin keys list
    List,
    /// Revoke a key by id; the next request with it is refused.
    ///
    /// Example: catalog-admin keys revoke key_3f9a0c1b2d4e5f60
    Revoke { id: String },
}

pub async fn run(command: Command, ctx: &Context) -> Result<(), CliError> {
    let writer = ctx.aws().await?.writer();
    let now = ctx.now;
    match command {
        Command::Create {
            scopes,
            label,
            expires,
            datasets,
            sharing_profile,
            api_url,
        } => {
            let expires_at = expires
                .map(|e| parse_when(&e, now).map_err(CliError::Usage))
                .transpose()?;
            if expires_at.is_some_and(|t| t <= now) {
                return Err(CliError::Usage("--expires must be in the future".into()));
            }
            if let Some(bad) = scopes.iter().find(|s| s.as_str() != "read") {
                return Err(CliError::Usage(format!(
                    "unknown scope '{bad}': the only scope is 'read'"
                )));
            }
            if datasets.len() > MAX_DATASETS {
                return Err(CliError::Usage(format!(
                    "a key can be limited to at most {MAX_DATASETS} datasets"
                )));
            }
            let mut limit = Vec::new();
            for raw in &datasets {
                let slug = super::slug(raw)?;
                // A typo would make a key that reads nothing: the dataset must exist.
                if writer.dataset_meta(&slug).await?.is_none() {
                    return Err(CliError::Usage(format!("no dataset '{slug}'")));
                }
                if !limit.contains(&slug) {
                    limit.push(slug);
                }
            }
            let secret = generate_key();
            let mut key = NewKey::for_secret(
                &secret,
                scopes.iter().map(|s| Scope::parse(s)).collect(),
                &label,
                now,
                expires_at,
            );
            key.datasets = (!limit.is_empty()).then_some(limit);
            let id = key.id.clone();
            // The profile's file is created before the key, so that a file that cannot be
            // written leaves no key behind.
            let profile_file = match &sharing_profile {
                Some(path) => Some(new_private_file(path)?),
                None => None,
            };
            writer.put_key(&key).await?;
            eprintln!("created {id}; the key is shown once, store it now:");
            println!("{secret}");
            if let (Some(mut file), Some(path), Some(api)) =
                (profile_file, &sharing_profile, &api_url)
            {
                let profile = catalog_http::sharing::profile(api, &secret, expires_at);
                use std::io::Write;
                writeln!(file, "{profile:#}")
                    .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))?;
                eprintln!(
                    "wrote the Delta Sharing profile {} (it holds the key)",
                    path.display()
                );
            }
        }
        Command::List => {
            println!(
                "{:<22} {:<10} {:<6} {:<21} {:<21} {:<21} {:<21} {:<36} {:<24} label",
                "id",
                "prefix",
                "scopes",
                "created",
                "expires",
                "revoked",
                "last used",
                "owner",
                "datasets"
            );
            let t = |t: Option<DateTime<Utc>>| t.map_or("-".to_owned(), |t| format_time(&t));
            for k in writer.list_keys().await? {
                println!(
                    "{:<22} {:<10} {:<6} {:<21} {:<21} {:<21} {:<21} {:<36} {:<24} {}",
                    k.id,
                    k.prefix,
                    k.scopes.join(","),
                    format_time(&k.created_at),
                    t(k.expires_at),
                    t(k.revoked_at),
                    t(k.last_used_at),
                    k.owner.as_deref().unwrap_or("-"),
                    k.datasets.as_ref().map_or("-".to_owned(), |d| d
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(",")),
                    k.label
                );
            }
        }
        Command::Revoke { id } => {
            writer.revoke_key_by_id(&id, now).await?;
            println!("revoked {id}");
        }
    }
    Ok(())
}

/// A new file only its owner may read (it will hold a key); an existing file is left alone.
fn new_private_file(path: &std::path::Path) -> Result<std::fs::File, CliError> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
        .open(path)
        .map_err(|e| CliError::Usage(format!("cannot create {}: {e}", path.display())))
}

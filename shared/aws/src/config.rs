//! Typed configuration, read once from the environment: at cold start by the functions, at
//! start by the operators' CLI, with one parser per kind of value, so that a variable means the
//! same to both. AWS endpoints and credentials come from the SDK's own variables
//! (`AWS_ENDPOINT_URL_DYNAMODB`, `AWS_ENDPOINT_URL_S3`, `AWS_REGION`, ...), not from here.

use std::time::Duration;

/// Default life of a presigned URL: 15 minutes.
pub const DEFAULT_URL_TTL_SECONDS: u64 = 900;
/// SigV4 presigned URLs cannot live longer than 7 days.
pub const MAX_URL_TTL_SECONDS: u64 = 7 * 24 * 3600;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("environment variable {0} is required")]
    Missing(&'static str),
    #[error("environment variable {name} is invalid: {reason}")]
    Invalid { name: &'static str, reason: String },
}

/// Configuration of the list function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogConfig {
    pub datasets_table: String,
}

/// Configuration of the metadata function: the datasets table, and the keys table, read for a
/// key sent for an `approval` dataset's statistics (its grant too).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetadataConfig {
    pub datasets_table: String,
    pub keys_table: String,
}

impl MetadataConfig {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&env_lookup)
    }

    pub fn from_lookup(lookup: Lookup) -> Result<Self, ConfigError> {
        Ok(Self {
            datasets_table: required(lookup, "DATASETS_TABLE")?,
            keys_table: required(lookup, "KEYS_TABLE")?,
        })
    }
}

/// Configuration of the keys (accounts) function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeysConfig {
    pub keys_table: String,
    /// Read for a dataset's access policy when someone asks for access.
    pub datasets_table: String,
    /// The Cognito group whose members use the operators' routes (`OPERATORS_GROUP`; unset or
    /// blank: nobody).
    pub operators_group: Option<String>,
}

/// Configuration of the editor function: an organisation's datasets for its members and
/// editors (the writer's tables, and who the operators are).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditorConfig {
    pub datasets_table: String,
    pub keys_table: String,
    /// `OPERATORS_GROUP`, as the keys function reads it.
    pub operators_group: Option<String>,
}

impl EditorConfig {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&env_lookup)
    }

    pub fn from_lookup(lookup: Lookup) -> Result<Self, ConfigError> {
        Ok(Self {
            datasets_table: required(lookup, "DATASETS_TABLE")?,
            keys_table: required(lookup, "KEYS_TABLE")?,
            operators_group: optional(lookup, "OPERATORS_GROUP").map(|g| g.trim().to_owned()),
        })
    }
}

/// Configuration of the sign-up function (the user pool's pre-sign-up trigger).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignUpConfig {
    /// `ALLOWED_DOMAINS`: the email domains that may sign up, comma-separated (SignUpMode
    /// `domains`); unset or blank: any domain, unless `SIGN_UP_MODE` is `domains`: then none
    /// (an empty list, which refuses every sign-up: the template's rule refuses that stack,
    /// and the function does not fall back to "anyone").
    pub allowed_domains: Option<catalog::signup::AllowedDomains>,
}

impl SignUpConfig {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&env_lookup)
    }

    pub fn from_lookup(lookup: Lookup) -> Result<Self, ConfigError> {
        let allowed_domains = optional(lookup, "ALLOWED_DOMAINS")
            .map(|raw| {
                catalog::signup::AllowedDomains::parse(&raw).map_err(|reason| {
                    ConfigError::Invalid {
                        name: "ALLOWED_DOMAINS",
                        reason,
                    }
                })
            })
            .transpose()?;
        let domains_mode = optional(lookup, "SIGN_UP_MODE").is_some_and(|m| m.trim() == "domains");
        let allowed_domains = match allowed_domains {
            None if domains_mode => Some(catalog::signup::AllowedDomains::none()),
            listed => listed,
        };
        Ok(Self { allowed_domains })
    }
}

/// Configuration of the audit function (the download log and the daily counts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditConfig {
    pub datasets_table: String,
    pub keys_table: String,
    pub downloads_table: String,
    /// `DOWNLOAD_LOG_RETENTION_DAYS` (1 to 3650, default 90): how long a download's record is
    /// kept (its day counts too).
    pub retention_days: u32,
}

impl AuditConfig {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&env_lookup)
    }

    pub fn from_lookup(lookup: Lookup) -> Result<Self, ConfigError> {
        let retention_days = match optional(lookup, "DOWNLOAD_LOG_RETENTION_DAYS") {
            None => 90,
            Some(raw) => raw
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|d| (1..=3650).contains(d))
                .ok_or_else(|| ConfigError::Invalid {
                    name: "DOWNLOAD_LOG_RETENTION_DAYS",
                    reason: format!("'{raw}' is not a number of days from 1 to 3650"),
                })?,
        };
        Ok(Self {
            datasets_table: required(lookup, "DATASETS_TABLE")?,
            keys_table: required(lookup, "KEYS_TABLE")?,
            downloads_table: required(lookup, "DOWNLOADS_TABLE")?,
            retention_days,
        })
    }
}

/// Configuration of the data function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataConfig {
    pub datasets_table: String,
    pub keys_table: String,
    pub bucket: String,
    pub url_ttl: Duration,
    /// Path-style S3 URLs (`http://host/bucket/key`), for local S3 servers.
    pub s3_force_path_style: bool,
    /// A role to assume for signing. Its credentials carry an expiry, so `expires_at` can be
    /// exact; without it, URLs are signed with the function's own credentials.
    pub signing_role_arn: Option<String>,
    /// How long each assumed signing session lasts.
    pub signing_session: Duration,
}

/// Configuration of the rows function: the tables the data endpoint's gate reads, and the
/// bucket it reads the Parquet objects from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowsConfig {
    pub datasets_table: String,
    pub keys_table: String,
    pub bucket: String,
    /// Path-style S3 requests (`http://host/bucket/key`), for local S3 servers.
    pub s3_force_path_style: bool,
}

impl RowsConfig {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&env_lookup)
    }

    pub fn from_lookup(lookup: Lookup) -> Result<Self, ConfigError> {
        Ok(Self {
            datasets_table: required(lookup, "DATASETS_TABLE")?,
            keys_table: required(lookup, "KEYS_TABLE")?,
            bucket: required(lookup, "DATA_BUCKET")?,
            s3_force_path_style: flag(lookup, "S3_FORCE_PATH_STYLE")?,
        })
    }
}

/// Configuration of the per-file statistics function (`catalog-file-stats`): the bucket whose
/// staged files it reads and whose `stats/` prefix it writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStatsConfig {
    pub bucket: String,
    /// Path-style S3 requests (`http://host/bucket/key`), for local S3 servers.
    pub s3_force_path_style: bool,
}

impl FileStatsConfig {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&env_lookup)
    }

    pub fn from_lookup(lookup: Lookup) -> Result<Self, ConfigError> {
        Ok(Self {
            bucket: required(lookup, "DATA_BUCKET")?,
            s3_force_path_style: flag(lookup, "S3_FORCE_PATH_STYLE")?,
        })
    }
}

/// Default signing session: 1 hour.
pub const DEFAULT_SIGNING_SESSION_SECONDS: u64 = 3600;
/// The longest signing session: the data function assumes the signing role with its own role's
/// credentials, and AWS caps such chained sessions at one hour.
pub const MAX_SIGNING_SESSION_SECONDS: u64 = 3600;
/// A signing session is renewed when it would end less than this long after a new URL's
/// expiry: a URL's lifetime must leave this much of the session, or every URL would need a new
/// session (and get a shorter life).
pub const SIGNING_MARGIN_SECONDS: u64 = 60;

/// Configuration of the operators' CLI (`catalog-admin`): the same tables and bucket the
/// functions use, read from the same variables.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminConfig {
    pub datasets_table: String,
    pub keys_table: String,
    /// Only publishing writes to the bucket, so only publishing requires it: see
    /// [`AdminConfig::bucket`].
    pub bucket: Option<String>,
    /// Path-style S3 URLs (`http://host/bucket/key`), for local S3 servers.
    pub s3_force_path_style: bool,
    /// The Cognito user pool of the accounts (`USER_POOL_ID`): only `accounts` commands need it.
    pub user_pool_id: Option<String>,
    /// The download log's table (`DOWNLOADS_TABLE`): only `audit` needs it.
    pub downloads_table: Option<String>,
}

type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The variable's value, if it is set and not blank.
fn optional(lookup: Lookup, name: &str) -> Option<String> {
    lookup(name).filter(|v| !v.trim().is_empty())
}

fn required(lookup: Lookup, name: &'static str) -> Result<String, ConfigError> {
    optional(lookup, name).ok_or(ConfigError::Missing(name))
}

/// `true`/`1` or `false`/`0`; unset or blank is false, anything else is refused.
fn flag(lookup: Lookup, name: &'static str) -> Result<bool, ConfigError> {
    match lookup(name).as_deref().map(str::trim) {
        None | Some("") | Some("false") | Some("0") => Ok(false),
        Some("true") | Some("1") => Ok(true),
        Some(other) => Err(ConfigError::Invalid {
            name,
            reason: format!("'{other}' is not true or false"),
        }),
    }
}

/// A whole number of seconds within `range`, or `default` when the variable is unset.
fn seconds(
    lookup: Lookup,
    name: &'static str,
    default: u64,
    range: std::ops::RangeInclusive<u64>,
) -> Result<Duration, ConfigError> {
    let value = match lookup(name) {
        None => default,
        Some(raw) => raw
            .trim()
            .parse::<u64>()
            .ok()
            .filter(|s| range.contains(s))
            .ok_or_else(|| ConfigError::Invalid {
                name,
                reason: format!(
                    "'{raw}' is not a whole number of seconds from {} to {}",
                    range.start(),
                    range.end()
                ),
            })?,
    };
    Ok(Duration::from_secs(value))
}

fn env_lookup(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

impl CatalogConfig {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&env_lookup)
    }

    pub fn from_lookup(lookup: Lookup) -> Result<Self, ConfigError> {
        Ok(Self {
            datasets_table: required(lookup, "DATASETS_TABLE")?,
        })
    }
}

impl KeysConfig {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&env_lookup)
    }

    pub fn from_lookup(lookup: Lookup) -> Result<Self, ConfigError> {
        Ok(Self {
            keys_table: required(lookup, "KEYS_TABLE")?,
            datasets_table: required(lookup, "DATASETS_TABLE")?,
            operators_group: optional(lookup, "OPERATORS_GROUP").map(|g| g.trim().to_owned()),
        })
    }
}

impl DataConfig {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&env_lookup)
    }

    pub fn from_lookup(lookup: Lookup) -> Result<Self, ConfigError> {
        let url_ttl = seconds(
            lookup,
            "URL_TTL_SECONDS",
            DEFAULT_URL_TTL_SECONDS,
            1..=MAX_URL_TTL_SECONDS,
        )?;
        let path_style = flag(lookup, "S3_FORCE_PATH_STYLE")?;
        let signing_session = seconds(
            lookup,
            "SIGNING_SESSION_SECONDS",
            DEFAULT_SIGNING_SESSION_SECONDS,
            900..=MAX_SIGNING_SESSION_SECONDS,
        )?;
        let signing_role_arn = optional(lookup, "SIGNING_ROLE_ARN");
        // A deployed stack (template.yaml sets SIGNING_ROLE_REQUIRED) signs only with the
        // signing role, whose credentials carry their expiry, never with credentials whose
        // expiry is unknown.
        if signing_role_arn.is_none() && flag(lookup, "SIGNING_ROLE_REQUIRED")? {
            return Err(ConfigError::Missing("SIGNING_ROLE_ARN"));
        }
        // A URL cannot outlive the session that signed it, and a session is renewed a margin
        // before a new URL would outlive it.
        let longest = signing_session.saturating_sub(Duration::from_secs(SIGNING_MARGIN_SECONDS));
        if signing_role_arn.is_some() && url_ttl > longest {
            return Err(ConfigError::Invalid {
                name: "URL_TTL_SECONDS",
                reason: format!(
                    "{} s leaves less than {SIGNING_MARGIN_SECONDS} s of the signing session \
                     (SIGNING_SESSION_SECONDS, {} s): no URL can outlive the session that \
                     signed it; at most {} s",
                    url_ttl.as_secs(),
                    signing_session.as_secs(),
                    longest.as_secs()
                ),
            });
        }
        Ok(Self {
            datasets_table: required(lookup, "DATASETS_TABLE")?,
            keys_table: required(lookup, "KEYS_TABLE")?,
            bucket: required(lookup, "DATA_BUCKET")?,
            url_ttl,
            s3_force_path_style: path_style,
            signing_role_arn,
            signing_session,
        })
    }
}

impl AdminConfig {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&env_lookup)
    }

    pub fn from_lookup(lookup: Lookup) -> Result<Self, ConfigError> {
        Ok(Self {
            datasets_table: required(lookup, "DATASETS_TABLE")?,
            keys_table: required(lookup, "KEYS_TABLE")?,
            bucket: optional(lookup, "DATA_BUCKET"),
            s3_force_path_style: flag(lookup, "S3_FORCE_PATH_STYLE")?,
            user_pool_id: optional(lookup, "USER_POOL_ID"),
            downloads_table: optional(lookup, "DOWNLOADS_TABLE"),
        })
    }

    /// The download log's table, for `audit`.
    pub fn downloads_table(&self) -> Result<&str, ConfigError> {
        self.downloads_table
            .as_deref()
            .ok_or(ConfigError::Missing("DOWNLOADS_TABLE"))
    }

    /// The user pool, for the commands on accounts.
    pub fn user_pool_id(&self) -> Result<&str, ConfigError> {
        self.user_pool_id
            .as_deref()
            .ok_or(ConfigError::Missing("USER_POOL_ID"))
    }

    /// The bucket, for the commands that write to it.
    pub fn bucket(&self) -> Result<&str, ConfigError> {
        self.bucket
            .as_deref()
            .ok_or(ConfigError::Missing("DATA_BUCKET"))
    }
}

#[cfg(test)]
mod tests;

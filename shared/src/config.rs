//! Typed configuration, read once at cold start from the environment. AWS endpoints and
//! credentials come from the SDK's own variables (`AWS_ENDPOINT_URL_DYNAMODB`,
//! `AWS_ENDPOINT_URL_S3`, `AWS_REGION`, ...), not from here.

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

/// Configuration of the list and metadata functions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogConfig {
    pub datasets_table: String,
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

/// Default signing session: 1 hour (the default maximum of an IAM role).
pub const DEFAULT_SIGNING_SESSION_SECONDS: u64 = 3600;

type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

fn required(lookup: Lookup, name: &'static str) -> Result<String, ConfigError> {
    lookup(name)
        .filter(|v| !v.trim().is_empty())
        .ok_or(ConfigError::Missing(name))
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
        let path_style = match lookup("S3_FORCE_PATH_STYLE").as_deref().map(str::trim) {
            None | Some("") | Some("false") | Some("0") => false,
            Some("true") | Some("1") => true,
            Some(other) => {
                return Err(ConfigError::Invalid {
                    name: "S3_FORCE_PATH_STYLE",
                    reason: format!("'{other}' is not true or false"),
                })
            }
        };
        let signing_session = seconds(
            lookup,
            "SIGNING_SESSION_SECONDS",
            DEFAULT_SIGNING_SESSION_SECONDS,
            900..=43200,
        )?;
        Ok(Self {
            datasets_table: required(lookup, "DATASETS_TABLE")?,
            keys_table: required(lookup, "KEYS_TABLE")?,
            bucket: required(lookup, "DATA_BUCKET")?,
            url_ttl,
            s3_force_path_style: path_style,
            signing_role_arn: lookup("SIGNING_ROLE_ARN").filter(|v| !v.trim().is_empty()),
            signing_session,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    const BASE: [(&str, &str); 3] = [
        ("DATASETS_TABLE", "d"),
        ("KEYS_TABLE", "k"),
        ("DATA_BUCKET", "b"),
    ];

    #[test]
    fn url_ttl_defaults_to_15_minutes() {
        let c = DataConfig::from_lookup(&lookup(&BASE)).unwrap();
        assert_eq!(c.url_ttl, Duration::from_secs(900));
        assert!(!c.s3_force_path_style);
    }

    #[test]
    fn url_ttl_is_configurable_and_validated() {
        let mut vars = BASE.to_vec();
        vars.push(("URL_TTL_SECONDS", "60"));
        assert_eq!(
            DataConfig::from_lookup(&lookup(&vars)).unwrap().url_ttl,
            Duration::from_secs(60)
        );
        for bad in ["0", "-5", "abc", "604801"] {
            let mut vars = BASE.to_vec();
            vars.push(("URL_TTL_SECONDS", bad));
            assert!(matches!(
                DataConfig::from_lookup(&lookup(&vars)),
                Err(ConfigError::Invalid {
                    name: "URL_TTL_SECONDS",
                    ..
                })
            ));
        }
    }

    #[test]
    fn signing_role_is_optional_and_its_session_bounded() {
        let c = DataConfig::from_lookup(&lookup(&BASE)).unwrap();
        assert_eq!(c.signing_role_arn, None);
        assert_eq!(c.signing_session, Duration::from_secs(3600));
        let mut vars = BASE.to_vec();
        vars.push(("SIGNING_ROLE_ARN", "arn:aws:iam::1:role/s"));
        vars.push(("SIGNING_SESSION_SECONDS", "900"));
        let c = DataConfig::from_lookup(&lookup(&vars)).unwrap();
        assert_eq!(c.signing_role_arn.as_deref(), Some("arn:aws:iam::1:role/s"));
        assert_eq!(c.signing_session, Duration::from_secs(900));
        let mut vars = BASE.to_vec();
        vars.push(("SIGNING_SESSION_SECONDS", "60"));
        assert!(DataConfig::from_lookup(&lookup(&vars)).is_err());
    }

    #[test]
    fn missing_variables_are_named() {
        assert_eq!(
            DataConfig::from_lookup(&lookup(&BASE[..2])),
            Err(ConfigError::Missing("DATA_BUCKET"))
        );
        assert_eq!(
            CatalogConfig::from_lookup(&lookup(&[])),
            Err(ConfigError::Missing("DATASETS_TABLE"))
        );
    }
}

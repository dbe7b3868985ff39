//! The operators' CLI (`catalog-admin`): publishing Parquet datasets with computed column
//! statistics, API keys, keyless windows, and version history. It writes the same tables and
//! bucket the functions read, through `catalog_writer::DynamoWriter`. No Lambda binary links this
//! crate; the publishing function links `catalog-publish-core`, whose `publish` and `ingest`
//! this crate re-exports.
//!
//! [`cmd`] is the command line, one module per subcommand; [`publish`], [`ingest`] and
//! [`download`] do the work behind the commands of those names; the statistics are the
//! `catalog-stats` crate's (shared/stats).

pub mod cmd;
pub mod download;
/// `publish` and `ingest` live in `catalog-publish-core` (shared/publish), which the publishing
/// function links too; re-exported here so every path `catalog_admin::publish::…` stays.
pub use catalog_publish_core::{ingest, publish};
pub mod remove;

use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};

/// An instant given as RFC 3339 (`2026-12-01T00:00:00Z`) or as a duration from now, ahead
/// (`+7d`, `+12h`, `+30m`, `+90s`) or back (`-7d`).
pub fn parse_when(raw: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    let relative = match raw.as_bytes().first() {
        Some(b'+') => Some((1, &raw[1..])),
        Some(b'-') => Some((-1, &raw[1..])),
        _ => None,
    };
    if let Some((sign, rest)) = relative {
        let expected = || format!("'{raw}': expected +<number><s|m|h|d> or -<number><s|m|h|d>");
        let (digits, unit) = rest.split_at(rest.len().saturating_sub(1));
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(expected());
        }
        let amount: i64 = digits.parse().map_err(|_| expected())?;
        let amount = sign * amount;
        let delta = match unit {
            "s" => TimeDelta::try_seconds(amount),
            "m" => TimeDelta::try_minutes(amount),
            "h" => TimeDelta::try_hours(amount),
            "d" => TimeDelta::try_days(amount),
            _ => None,
        }
        .ok_or_else(expected)?;
        return now
            .checked_add_signed(delta)
            .ok_or_else(|| format!("'{raw}' is too far from now"));
    }
    DateTime::parse_from_rfc3339(raw)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| format!("'{raw}' is neither an RFC 3339 time nor +<number><s|m|h|d>"))
}

/// Human-readable byte counts for progress output.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// The SDK configuration for operators: more patient than the functions' (which must answer
/// within an API request), since uploads of large parts take time.
pub async fn load_sdk_config() -> aws_config::SdkConfig {
    use aws_config::retry::RetryConfig;
    use aws_config::timeout::TimeoutConfig;
    aws_config::defaults(aws_config::BehaviorVersion::latest())
        .http_client(catalog_aws::aws::http_client(
            catalog_aws::aws::RootCertificates::Platform,
        ))
        .retry_config(RetryConfig::standard().with_max_attempts(5))
        .timeout_config(
            TimeoutConfig::builder()
                .connect_timeout(Duration::from_secs(5))
                .operation_attempt_timeout(Duration::from_secs(300))
                .build(),
        )
        .load()
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn when_accepts_rfc3339_and_relative_durations() {
        assert_eq!(
            parse_when("2026-02-01T12:00:00Z", now())
                .unwrap()
                .to_rfc3339(),
            "2026-02-01T12:00:00+00:00"
        );
        assert_eq!(
            parse_when("+7d", now()).unwrap(),
            now() + TimeDelta::days(7)
        );
        assert_eq!(
            parse_when("+90s", now()).unwrap(),
            now() + TimeDelta::seconds(90)
        );
        assert_eq!(
            parse_when("-7d", now()).unwrap(),
            now() - TimeDelta::days(7)
        );
        for bad in [
            "",
            "+",
            "-",
            "+7",
            "-7w",
            "tomorrow",
            "+-3d",
            "--3d",
            "2026-13-01",
        ] {
            assert!(parse_when(bad, now()).is_err(), "{bad}");
        }
    }

    #[test]
    fn generated_keys_are_prefixed_long_and_distinct() {
        use catalog_writer::generate_key;
        let a = generate_key();
        let b = generate_key();
        assert!(a.starts_with("dcat_"));
        assert_eq!(a.len(), 5 + 64);
        assert_ne!(a, b);
    }
}

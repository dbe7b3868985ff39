//! How times go out: RFC 3339 in UTC with a `Z` and whole seconds, in answers and in stored
//! items alike. Imports nothing else of the crate.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serializer;

/// A time as every answer and stored item writes it: `2026-11-23T10:00:00Z`.
pub fn format_time(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// `#[serde(serialize_with = "crate::time::rfc3339")]`: a time as [`format_time`] writes it.
pub fn rfc3339<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_time(t))
}

/// `#[serde(serialize_with = "crate::time::rfc3339_opt")]`: a time, or `null`.
pub fn rfc3339_opt<S: Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => rfc3339(t, s),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_utc_with_z_and_whole_seconds() {
        let t = DateTime::parse_from_rfc3339("2026-11-23T11:00:00.750+01:00")
            .unwrap()
            .with_timezone(&Utc);
        assert_eq!(format_time(&t), "2026-11-23T10:00:00Z");
    }
}

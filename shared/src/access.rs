//! What the data endpoint requires of a request for a dataset right now: a key, or nothing
//! while the dataset is inside its keyless window. A presented key is verified in either case.

use chrono::{DateTime, Utc};
use serde::Serialize;

use crate::keys::Scope;

/// A dataset is keyless while the current time is before the end of its window.
pub fn is_keyless(keyless_until: Option<DateTime<Utc>>, now: DateTime<Utc>) -> bool {
    keyless_until.is_some_and(|until| now < until)
}

/// Whether the data endpoint needs a key: serialized as `keyless` or `key_required`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessMode {
    Keyless,
    KeyRequired,
}

/// What the data endpoint requires right now (a presented key is verified in either mode).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Access {
    pub mode: AccessMode,
    #[serde(serialize_with = "crate::time::rfc3339_opt")]
    pub keyless_until: Option<DateTime<Utc>>,
    /// The scope a key needs; `null` while no key is needed.
    pub required_scope: Option<Scope>,
}

impl Access {
    pub fn at(keyless_until: Option<DateTime<Utc>>, now: DateTime<Utc>) -> Self {
        if is_keyless(keyless_until, now) {
            Self {
                mode: AccessMode::Keyless,
                keyless_until,
                required_scope: None,
            }
        } else {
            Self {
                mode: AccessMode::KeyRequired,
                keyless_until,
                required_scope: Some(Scope::Read),
            }
        }
    }
}

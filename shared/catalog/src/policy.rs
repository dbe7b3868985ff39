//! A dataset's access policy as stored and shown: its keyless window, its access level
//! (`registered`, `approval` or `private`) and an `approval` dataset's request policy, an account's grant,
//! and the metadata's `access` object. The rule that applies them is [`crate::access`].

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::keys::Scope;

/// A dataset is keyless while the current time is before the end of its window.
pub fn is_keyless(keyless_until: Option<DateTime<Utc>>, now: DateTime<Utc>) -> bool {
    keyless_until.is_some_and(|until| now < until)
}

/// When a dataset's answers change, for their `Last-Modified` and `max-age`: at its last write,
/// and by themselves when its access turns without one (today, at the end of its keyless
/// window: its `keyless` and `access` fields, and whether its statistics' values are public,
/// change then). Every answer's freshness derives from this one value, so a new moment of that
/// kind is added where a record builds it ([`crate::records::DatasetRecord::freshness`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Freshness {
    updated_at: DateTime<Utc>,
    turns_at: Option<DateTime<Utc>>,
}

impl Freshness {
    /// A dataset last written at `updated_at` whose access turns by itself at `turns_at`.
    pub fn new(updated_at: DateTime<Utc>, turns_at: Option<DateTime<Utc>>) -> Self {
        Self {
            updated_at,
            turns_at,
        }
    }

    /// When its answer last changed: its last write, or a turn that has passed since.
    pub fn changed_at(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        match self.turns_at {
            Some(at) if at <= now && at > self.updated_at => at,
            _ => self.updated_at,
        }
    }

    /// Its next turn after `now`, if there is one.
    pub fn next_turn(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.turns_at.filter(|at| *at > now)
    }
}

/// Who may read a dataset's data outside its keyless window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessLevel {
    /// Any valid read key (the default).
    #[default]
    Registered,
    /// A valid read key whose account holds an active grant for the dataset (or an
    /// operator's key: operators decide whom they give one to).
    Approval,
    /// Only the dataset's organisation's members (and the operators): to anyone else it does
    /// not exist (docs/organisations.md).
    Private,
}

impl AccessLevel {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Registered => "registered",
            Self::Approval => "approval",
            Self::Private => "private",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "registered" => Some(Self::Registered),
            "approval" => Some(Self::Approval),
            "private" => Some(Self::Private),
            _ => None,
        }
    }
}

/// How an `approval` dataset's requests are decided.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    /// By an operator (the default).
    #[default]
    Manual,
    /// At once; still recorded as a request.
    Automatic,
}

/// One question of an `approval` dataset's request form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormField {
    /// The answer's key: 1 to 40 lowercase letters, digits and underscores.
    pub name: String,
    /// The question as the page shows it: 1 to 200 characters.
    pub label: String,
    /// Longest answer, in characters: 1 to [`FormField::MAX_ANSWER`] (default 500).
    #[serde(default = "FormField::default_max_length")]
    pub max_length: usize,
    /// Whether an answer is needed (default true).
    #[serde(default = "FormField::default_required")]
    pub required: bool,
}

impl FormField {
    pub const MAX_ANSWER: usize = 2000;

    fn default_max_length() -> usize {
        500
    }

    fn default_required() -> bool {
        true
    }
}

/// What an `approval` dataset asks of a request: how it is decided, the form's questions and
/// the terms a requester accepts. Ignored at the `registered` level.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalPolicy {
    #[serde(default)]
    pub approval: Approval,
    #[serde(default)]
    pub form: Vec<FormField>,
    #[serde(default)]
    pub terms: Option<String>,
}

impl ApprovalPolicy {
    /// Most questions in a form.
    pub const MAX_FIELDS: usize = 10;
    /// Longest terms text, in characters.
    pub const MAX_TERMS: usize = 10_000;

    /// The policy as publish accepts it; the message names what is wrong.
    pub fn check(&self) -> Result<(), String> {
        if self.form.len() > Self::MAX_FIELDS {
            return Err(format!(
                "access.form has at most {} questions",
                Self::MAX_FIELDS
            ));
        }
        let mut names = std::collections::HashSet::new();
        for field in &self.form {
            let name_ok = (1..=40).contains(&field.name.len())
                && field
                    .name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
            if !name_ok {
                return Err(format!(
                    "access.form: a question's name is 1 to 40 lowercase letters, digits and \
                     underscores, got '{}'",
                    crate::input::echo(&field.name)
                ));
            }
            if !names.insert(field.name.as_str()) {
                return Err(format!("access.form: '{}' is asked twice", field.name));
            }
            if !(1..=200).contains(&field.label.trim().chars().count()) {
                return Err(format!(
                    "access.form: the label of '{}' is 1 to 200 characters",
                    field.name
                ));
            }
            if !(1..=FormField::MAX_ANSWER).contains(&field.max_length) {
                return Err(format!(
                    "access.form: max_length of '{}' is 1 to {}",
                    field.name,
                    FormField::MAX_ANSWER
                ));
            }
        }
        if self
            .terms
            .as_ref()
            .is_some_and(|t| t.trim().is_empty() || t.chars().count() > Self::MAX_TERMS)
        {
            return Err(format!(
                "access.terms is 1 to {} characters",
                Self::MAX_TERMS
            ));
        }
        Ok(())
    }
}

/// A dataset's access settings as a metadata file gives them (`access:`), as a whole.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessSettings {
    #[serde(default)]
    pub level: AccessLevel,
    #[serde(default)]
    pub approval: Approval,
    #[serde(default)]
    pub form: Vec<FormField>,
    #[serde(default)]
    pub terms: Option<String>,
}

impl AccessSettings {
    pub fn new(level: AccessLevel, policy: ApprovalPolicy) -> Self {
        Self {
            level,
            approval: policy.approval,
            form: policy.form,
            terms: policy.terms,
        }
    }

    pub fn policy(&self) -> ApprovalPolicy {
        ApprovalPolicy {
            approval: self.approval,
            form: self.form.clone(),
            terms: self.terms.clone(),
        }
    }
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
    /// Who may read outside the keyless window.
    pub level: AccessLevel,
    /// At the `approval` level: how requests are decided, the form and the terms (`null` at
    /// the `registered` level).
    #[serde(flatten)]
    pub policy: Option<ApprovalPolicy>,
}

impl Access {
    pub fn at(
        keyless_until: Option<DateTime<Utc>>,
        level: AccessLevel,
        policy: &ApprovalPolicy,
        now: DateTime<Utc>,
    ) -> Self {
        let keyless = is_keyless(keyless_until, now);
        Self {
            policy: (level == AccessLevel::Approval).then(|| policy.clone()),
            mode: if keyless {
                AccessMode::Keyless
            } else {
                AccessMode::KeyRequired
            },
            keyless_until,
            required_scope: (!keyless).then_some(Scope::Read),
            level,
        }
    }
}

/// An account's standing for one dataset, as the data path reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Grant {
    pub granted: bool,
    /// When a grant ends (`None`: until revoked).
    pub expires_at: Option<DateTime<Utc>>,
}

impl Grant {
    /// Granted, and not past its expiry. Revocation clears `granted` itself, so it takes effect
    /// on the next request whatever the clocks say.
    pub fn is_active_at(&self, now: DateTime<Utc>) -> bool {
        self.granted && self.expires_at.is_none_or(|t| now < t)
    }
}

/// What a Column object of the statistics keeps when the values drawn from the rows are
/// withheld: the column's name and type, and counts (never a value of a row).
pub const COLUMN_FIELDS_KEPT: [&str; 6] = [
    "name",
    "dtype",
    "null_count",
    "null_percent",
    "unique_count",
    "approximate",
];

/// Whether the public sees the values a dataset's statistics draw from its rows
/// (`sample_values`, `top_values` and `top_counts`, `min`, `max`, `median`, `mean`, `std`, the
/// histogram): yes at the `registered` level (the spec's public metadata: anyone may sign up for
/// a key), and while a keyless window is open (anyone reads the file then); not at the
/// `approval` level, where only those [`crate::access::authorize`] admits see them.
pub fn values_public(
    level: AccessLevel,
    keyless_until: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> bool {
    level == AccessLevel::Registered || is_keyless(keyless_until, now)
}

/// `schema` (the Column objects as stored) without any value drawn from the rows: each column
/// keeps [`COLUMN_FIELDS_KEPT`]; the numeric statistics are `null`, `top_values`,
/// `top_counts` and `sample_values` empty, and every other field (the histogram, and any field
/// added later) is left out. An allowlist, so that a new statistic is withheld until someone
/// decides otherwise.
pub fn without_row_values(
    schema: &serde_json::value::RawValue,
) -> Result<Box<serde_json::value::RawValue>, serde_json::Error> {
    use serde_json::{Map, Value};
    let columns: Vec<Map<String, Value>> = serde_json::from_str(schema.get())?;
    let withheld: Vec<Map<String, Value>> = columns
        .into_iter()
        .map(|mut column| {
            let mut kept: Map<String, Value> = COLUMN_FIELDS_KEPT
                .iter()
                .filter_map(|&name| column.remove(name).map(|v| (name.to_owned(), v)))
                .collect();
            for name in ["mean", "std", "min", "max", "median"] {
                kept.insert(name.to_owned(), Value::Null);
            }
            for name in ["top_values", "top_counts", "sample_values"] {
                kept.insert(name.to_owned(), Value::Array(Vec::new()));
            }
            kept
        })
        .collect();
    serde_json::value::to_raw_value(&withheld)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn withheld_statistics_keep_names_types_and_counts_only() {
        let stored = serde_json::value::RawValue::from_string(
            r#"[{"name":"x","dtype":"int64","null_count":1,"null_percent":50.0,"unique_count":1,"mean":7.0,"std":null,"min":7,"max":7,"median":7.0,"top_values":[7],"top_counts":[1],"sample_values":[7],"approximate":false,"histogram":{"bin_edges":[7,8],"counts":[1]},"later":"a value"}]"#
                .to_owned(),
        )
        .unwrap();
        let shown: serde_json::Value =
            serde_json::from_str(without_row_values(&stored).unwrap().get()).unwrap();
        assert_eq!(
            shown,
            serde_json::json!([{"name":"x","dtype":"int64","null_count":1,"null_percent":50.0,
                "unique_count":1,"approximate":false,"mean":null,"std":null,"min":null,
                "max":null,"median":null,"top_values":[],"top_counts":[],"sample_values":[]}])
        );
    }

    #[test]
    fn values_are_public_at_the_registered_level_and_in_a_keyless_window_only() {
        let now = Utc::now();
        let open = Some(now + chrono::Duration::hours(1));
        let closed = Some(now - chrono::Duration::hours(1));
        assert!(values_public(AccessLevel::Registered, None, now));
        assert!(values_public(AccessLevel::Approval, open, now));
        assert!(!values_public(AccessLevel::Approval, closed, now));
        assert!(!values_public(AccessLevel::Approval, None, now));
    }

    #[test]
    fn an_answer_changed_at_its_last_write_or_at_a_turn_passed_since_and_turns_next_at_a_future_one(
    ) {
        let now = Utc::now();
        let hours = |h: i64| now + chrono::Duration::hours(h);
        let written = hours(-5);
        let never = Freshness::new(written, None);
        assert_eq!(never.changed_at(now), written);
        assert_eq!(never.next_turn(now), None);
        let passed = Freshness::new(written, Some(hours(-1)));
        assert_eq!(passed.changed_at(now), hours(-1));
        assert_eq!(passed.next_turn(now), None);
        let before_the_write = Freshness::new(written, Some(hours(-6)));
        assert_eq!(before_the_write.changed_at(now), written);
        let ahead = Freshness::new(written, Some(hours(2)));
        assert_eq!(ahead.changed_at(now), written);
        assert_eq!(ahead.next_turn(now), Some(hours(2)));
    }
}

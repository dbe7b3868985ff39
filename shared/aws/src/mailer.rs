//! The mailer function's adapters (feature `ses`): Amazon SES v2 behind `catalog`'s
//! [`Mailer`] port, and [`Mailroom`], what one run needs (the outbox in the keys table, the
//! deciders, SES and the configuration).

use aws_config::SdkConfig;
use aws_sdk_sesv2::types::{Body, Content, Destination, EmailContent, Message};
use chrono::{DateTime, Duration, Utc};

use crate::config::ConfigError;
use crate::dynamo::access::notices::DynamoNotices;
use catalog::error::StoreError;
use catalog::notices::{
    run, Email, Mailer, MailerConfig, NoticeQueue, Operators, RunReport, SendError,
};

/// Sends through SES v2's SendEmail, from one verified identity.
#[derive(Clone, Debug)]
pub struct SesMailer {
    client: aws_sdk_sesv2::Client,
    from: String,
}

impl SesMailer {
    /// SES with the SDK's configuration; `endpoint`, when given, replaces SES's address (the
    /// tests' moto).
    pub fn new(sdk: &SdkConfig, from: impl Into<String>, endpoint: Option<&str>) -> Self {
        let mut config = aws_sdk_sesv2::config::Builder::from(sdk);
        if let Some(endpoint) = endpoint {
            config = config.endpoint_url(endpoint);
        }
        Self {
            client: aws_sdk_sesv2::Client::from_conf(config.build()),
            from: from.into(),
        }
    }
}

fn content(text: &str) -> Result<Content, SendError> {
    Content::builder()
        .data(text)
        .charset("UTF-8")
        .build()
        .map_err(|e| SendError(e.to_string()))
}

impl Mailer for SesMailer {
    async fn send(&self, email: &Email) -> Result<(), SendError> {
        let message = Message::builder()
            .subject(content(&email.subject)?)
            .body(Body::builder().text(content(&email.text)?).build())
            .build();
        self.client
            .send_email()
            .from_email_address(&self.from)
            .destination(Destination::builder().to_addresses(&email.to).build())
            .content(EmailContent::builder().simple(message).build())
            .send()
            .await
            .map_err(|e| {
                let e = aws_sdk_sesv2::error::DisplayErrorContext(e);
                SendError(e.to_string())
            })?;
        Ok(())
    }
}

/// The mailer function's configuration, from its environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailroomConfig {
    pub keys_table: String,
    /// `MAIL_SENDER`: the verified SES identity emails come from (unset or blank: no email is
    /// sent, and the notices are dropped).
    pub sender: Option<String>,
    /// `OPERATORS_EMAIL`: the deciders' addresses, comma-separated (blank: no digests).
    pub operators: String,
    /// `SITE_URL`, `DIGEST_MINUTES` (default 15), `MAX_ATTEMPTS` (default 10).
    pub run: MailerConfig,
    /// `SES_ENDPOINT_URL`: another address for SES (local runs and tests).
    pub ses_endpoint: Option<String>,
}

type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

fn optional(lookup: Lookup, name: &str) -> Option<String> {
    lookup(name).filter(|v| !v.trim().is_empty())
}

fn required(lookup: Lookup, name: &'static str) -> Result<String, ConfigError> {
    optional(lookup, name).ok_or(ConfigError::Missing(name))
}

fn number(lookup: Lookup, name: &'static str, default: i64) -> Result<i64, ConfigError> {
    match optional(lookup, name) {
        None => Ok(default),
        Some(raw) => match raw.trim().parse::<i64>() {
            Ok(v) if v >= 1 => Ok(v),
            _ => Err(ConfigError::Invalid {
                name,
                reason: format!("a whole number of at least 1 is needed, got '{raw}'"),
            }),
        },
    }
}

impl MailroomConfig {
    pub fn from_env() -> Result<Self, ConfigError> {
        Self::from_lookup(&|name| std::env::var(name).ok())
    }

    pub fn from_lookup(lookup: Lookup) -> Result<Self, ConfigError> {
        let site = required(lookup, "SITE_URL")?;
        if !(site.starts_with("https://") || site.starts_with("http://")) {
            return Err(ConfigError::Invalid {
                name: "SITE_URL",
                reason: format!("an http(s):// address is needed, got '{site}'"),
            });
        }
        let mut run = MailerConfig::new(site.trim());
        run.digest = Duration::minutes(number(
            lookup,
            "DIGEST_MINUTES",
            MailerConfig::DIGEST_MINUTES,
        )?);
        run.max_attempts = u32::try_from(number(
            lookup,
            "MAX_ATTEMPTS",
            i64::from(MailerConfig::MAX_ATTEMPTS),
        )?)
        .unwrap_or(MailerConfig::MAX_ATTEMPTS);
        Ok(Self {
            keys_table: required(lookup, "KEYS_TABLE")?,
            sender: optional(lookup, "MAIL_SENDER").map(|s| s.trim().to_owned()),
            operators: optional(lookup, "OPERATORS_EMAIL").unwrap_or_default(),
            run,
            ses_endpoint: optional(lookup, "SES_ENDPOINT_URL"),
        })
    }
}

/// Who decides a dataset's requests: the operators' configured addresses for every dataset,
/// and for an organisation's dataset its admins' addresses too (their memberships' emails),
/// unless an admin turned emails off on their page (docs/organisations.md).
pub struct OrgDeciders {
    pub operators: Operators,
    pub orgs: crate::dynamo::orgs::DynamoOrgs,
    /// The admins' email preferences (their accounts' items).
    pub notices: DynamoNotices,
}

impl catalog::notices::Deciders for OrgDeciders {
    /// The operators' addresses; for an organisation's dataset, one Query of the id index and
    /// a BatchGetItem of its memberships, and a GetItem of each admin's preference.
    async fn deciders(&self, dataset: &uuid::Uuid, slug: &str) -> Result<Vec<String>, StoreError> {
        use catalog::ports::OrgStore;
        let mut addresses = self.operators.deciders(dataset, slug).await?;
        let Some(org) = catalog::slug::Slug::parse(slug).ok().and_then(|s| s.org()) else {
            return Ok(addresses);
        };
        for admin in self.orgs.members(&org).await? {
            if !admin.role.may_administer() {
                continue;
            }
            let Some(email) = admin.email else { continue };
            let wanted = match catalog::keys::Owner::parse(&admin.account) {
                Some(owner) => self.notices.emails(&owner).await?,
                None => false,
            };
            let email = email.to_lowercase();
            if wanted && !addresses.iter().any(|a| a.eq_ignore_ascii_case(&email)) {
                addresses.push(email);
            }
        }
        Ok(addresses)
    }
}

/// What a run needs: the outbox, the deciders, SES, and how to run.
pub struct Mailroom {
    pub notices: DynamoNotices,
    pub deciders: OrgDeciders,
    /// `None`: no sender configured, no email sent.
    pub ses: Option<SesMailer>,
    pub config: MailerConfig,
}

impl Mailroom {
    pub fn new(sdk: &SdkConfig, config: &MailroomConfig) -> Self {
        Self {
            notices: DynamoNotices::new(aws_sdk_dynamodb::Client::new(sdk), &config.keys_table),
            deciders: OrgDeciders {
                operators: Operators::parse(&config.operators),
                orgs: crate::dynamo::orgs::DynamoOrgs::new(
                    aws_sdk_dynamodb::Client::new(sdk),
                    &config.keys_table,
                ),
                notices: DynamoNotices::new(aws_sdk_dynamodb::Client::new(sdk), &config.keys_table),
            },
            ses: config
                .sender
                .as_ref()
                .map(|from| SesMailer::new(sdk, from, config.ses_endpoint.as_deref())),
            config: config.run.clone(),
        }
    }

    /// From the function's environment.
    pub async fn from_env() -> Result<Self, ConfigError> {
        let config = MailroomConfig::from_env()?;
        Ok(Self::new(&crate::aws::load_sdk_config().await, &config))
    }

    /// One run at `now`.
    pub async fn run_at(&self, now: DateTime<Utc>) -> Result<RunReport, StoreError> {
        let Some(ses) = &self.ses else {
            return self.drop_all().await;
        };
        let report = run(&self.notices, &self.deciders, ses, &self.config, now).await?;
        tracing::info!(
            read = report.read,
            sent = report.sent,
            digests = report.digests,
            unwanted = report.unwanted,
            held = report.held,
            retried = report.retried,
            failed = report.failed,
            "mailer run"
        );
        Ok(report)
    }

    /// Without a sender: the pending notices are dropped unsent (a stack that sends no email
    /// keeps no outbox).
    async fn drop_all(&self) -> Result<RunReport, StoreError> {
        let pending = self.notices.pending(self.config.batch).await?;
        for notice in &pending {
            self.notices.done(&notice.id).await?;
        }
        tracing::info!(
            dropped = pending.len(),
            "no MAIL_SENDER: notices dropped unsent"
        );
        Ok(RunReport {
            read: pending.len(),
            unwanted: pending.len(),
            ..RunReport::default()
        })
    }

    /// The schedule's event (its content is not read): one run now.
    pub async fn handle<E>(&self, _event: E) -> Result<serde_json::Value, StoreError> {
        let report = self.run_at(Utc::now()).await?;
        serde_json::to_value(report).map_err(|e| StoreError::Other(Box::new(e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(vars: &[(&str, &str)]) -> Result<MailroomConfig, ConfigError> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        MailroomConfig::from_lookup(&move |name| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn the_mailers_environment_is_read_with_its_defaults_and_refusals_named() {
        let base = [
            ("KEYS_TABLE", "keys"),
            ("SITE_URL", "https://data.example.org"),
            ("MAIL_SENDER", " catalog@example.org "),
            ("OPERATORS_EMAIL", "a@example.org, b@example.org"),
        ];
        let c = config(&base).unwrap();
        assert_eq!(c.sender.as_deref(), Some("catalog@example.org"));
        assert_eq!(c.run.digest, Duration::minutes(15));
        assert_eq!(c.run.max_attempts, MailerConfig::MAX_ATTEMPTS);
        assert_eq!(c.ses_endpoint, None);
        assert_eq!(
            Operators::parse(&c.operators).0,
            ["a@example.org", "b@example.org"]
        );
        let mut more = base.to_vec();
        more.extend([("DIGEST_MINUTES", "5"), ("MAX_ATTEMPTS", "3")]);
        let c = config(&more).unwrap();
        assert_eq!(
            (c.run.digest, c.run.max_attempts),
            (Duration::minutes(5), 3)
        );
        // No sender: emails off, not an error.
        assert_eq!(config(&base[..2]).unwrap().sender, None);
        for (name, value, said) in [
            ("DIGEST_MINUTES", "0", "DIGEST_MINUTES"),
            ("DIGEST_MINUTES", "soon", "DIGEST_MINUTES"),
            ("MAX_ATTEMPTS", "-1", "MAX_ATTEMPTS"),
            ("SITE_URL", "data.example.org", "SITE_URL"),
        ] {
            let mut vars = base.to_vec();
            vars.retain(|(k, _)| *k != name);
            vars.push((name, value));
            let e = config(&vars).unwrap_err().to_string();
            assert!(e.contains(said), "{name}={value}: {e}");
        }
        let e = config(&base[1..]).unwrap_err().to_string();
        assert!(e.contains("KEYS_TABLE"), "{e}");
    }
}

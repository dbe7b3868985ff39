//! Who may sign up: the user pool's pre-sign-up trigger (the sign-up function) accepts an email
//! only in lowercase (one mailbox, one account: the pool compares names case-sensitively) and,
//! when the stack's `SignUpMode` is `domains`, only at one of the listed domains.
//!
//! An email change follows the same rules: the pool's custom-message trigger (the same
//! function) refuses to send the code that confirms a new address unless the address is in
//! lowercase and, with `domains`, at one of them ([`custom_message`]).
//!
//! The `invite` mode is the pool's `AllowAdminCreateUserOnly` (`catalog-admin accounts invite`).

use serde_json::Value;

/// The email domains that may sign up (`ALLOWED_DOMAINS`, comma-separated), lowercase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedDomains(Vec<String>);

/// Why a sign-up is refused. The message reaches the person (Cognito passes it on): it names
/// no domain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SignUpRefused {
    #[error("sign-up is limited to the email domains this catalog serves")]
    Domain,
    #[error("the sign-up names no email address")]
    NoEmail,
    /// The user pool compares names case-sensitively (a pool's setting fixed when it was
    /// created): an address with capitals could become a second account of the same mailbox.
    /// The site and `catalog-admin` send addresses in lowercase.
    #[error("sign up with the email address in lowercase")]
    NotLowercase,
    /// SignUpMode `domains` with no domain listed (a stack the template's rule would refuse):
    /// nobody may sign up, rather than everybody.
    #[error("sign-up is closed: this catalog lists no email domain that may sign up; ask its operators for an invitation")]
    NoDomainListed,
    /// An email change to an address at a domain that may not sign up.
    #[error(
        "an account's email can change only to an address at the email domains this catalog serves"
    )]
    ChangeDomain,
    /// An email change to an address with capitals (it could be a second account's mailbox).
    #[error("change the email to the address in lowercase")]
    ChangeNotLowercase,
}

impl AllowedDomains {
    /// `example.com, Partner.org`: at least one domain, each made of letters, digits, hyphens
    /// and dots, with a dot, at most 253 characters.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let mut domains = Vec::new();
        for part in raw.split(',') {
            let domain = part.trim().trim_start_matches('@').to_lowercase();
            if domain.is_empty() {
                continue;
            }
            let valid = domain.len() <= 253
                && domain.contains('.')
                && domain.split('.').all(|label| {
                    !label.is_empty()
                        && label.len() <= 63
                        && !label.starts_with('-')
                        && !label.ends_with('-')
                        && label
                            .bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                });
            if !valid {
                return Err(format!("'{domain}' is not an email domain"));
            }
            if !domains.contains(&domain) {
                domains.push(domain);
            }
        }
        if domains.is_empty() {
            return Err("no email domain is listed".into());
        }
        Ok(Self(domains))
    }

    /// Whether the address's domain (after its last `@`, any case) is one of the listed ones,
    /// exactly: a subdomain is another domain.
    pub fn allows(&self, email: &str) -> bool {
        email.rsplit_once('@').is_some_and(|(local, domain)| {
            !local.is_empty() && self.0.iter().any(|d| d.eq_ignore_ascii_case(domain))
        })
    }

    pub fn as_slice(&self) -> &[String] {
        &self.0
    }

    /// No domain at all: SignUpMode `domains` deployed without SignUpDomains. Every sign-up is
    /// refused ([`SignUpRefused::NoDomainListed`]).
    pub fn none() -> Self {
        Self(Vec::new())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The email a pre-sign-up event is for: its `email` attribute, else a user name that is one.
pub fn email_of(event: &Value) -> Option<&str> {
    event["request"]["userAttributes"]["email"]
        .as_str()
        .or_else(|| event["userName"].as_str().filter(|u| u.contains('@')))
}

/// Cognito's pre-sign-up event, judged: the event back (unchanged: the person still confirms
/// their email) to accept, an error to refuse. Every sign-up's address is in lowercase, so that
/// one mailbox is one account whatever case it is typed in. With `domains` (SignUpMode
/// `domains`), only those domains sign up, but an operator's invitation
/// (`PreSignUp_AdminCreateUser`) is accepted from anywhere: operators decide whom they invite.
/// With `domains` and no domain listed, no sign-up is accepted (invitations still are).
pub fn pre_sign_up(event: Value, domains: Option<&AllowedDomains>) -> Result<Value, SignUpRefused> {
    let email = email_of(&event).ok_or(SignUpRefused::NoEmail)?;
    if email != email.to_lowercase() {
        return Err(SignUpRefused::NotLowercase);
    }
    if event["triggerSource"].as_str() == Some("PreSignUp_AdminCreateUser") {
        return Ok(event);
    }
    match domains {
        Some(domains) if domains.is_empty() => Err(SignUpRefused::NoDomainListed),
        Some(domains) if !domains.allows(email) => Err(SignUpRefused::Domain),
        _ => Ok(event),
    }
}

/// The custom-message events that send a code to an address an account is moving to.
const EMAIL_CHANGES: [&str; 2] = [
    "CustomMessage_UpdateUserAttribute",
    "CustomMessage_VerifyUserAttribute",
];

/// Cognito's custom-message event, judged: where it sends the code that confirms a new email
/// address (an email change, or the code sent again), the new address must follow the sign-up
/// rules (lowercase; with `domains`, one of them, whoever invited the account), or the trigger
/// fails, Cognito fails the call and sends no code, and the address never takes effect (the
/// pool applies a new email only once its code is confirmed). Every other message (sign-up
/// codes, invitations, password resets) is passed back unchanged: Cognito's own text.
pub fn custom_message(
    event: Value,
    domains: Option<&AllowedDomains>,
) -> Result<Value, SignUpRefused> {
    let source = event["triggerSource"].as_str().unwrap_or("");
    if !EMAIL_CHANGES.contains(&source) {
        return Ok(event);
    }
    let email = email_of(&event).ok_or(SignUpRefused::NoEmail)?;
    if email != email.to_lowercase() {
        return Err(SignUpRefused::ChangeNotLowercase);
    }
    match domains {
        Some(domains) if !domains.allows(email) => Err(SignUpRefused::ChangeDomain),
        _ => Ok(event),
    }
}

/// What the function is invoked for: a sign-up ([`pre_sign_up`]) or a message
/// ([`custom_message`]), by the event's `triggerSource`.
pub fn judge(event: Value, domains: Option<&AllowedDomains>) -> Result<Value, SignUpRefused> {
    match event["triggerSource"].as_str() {
        Some(source) if source.starts_with("CustomMessage_") => custom_message(event, domains),
        _ => pre_sign_up(event, domains),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(source: &str, email: &str) -> Value {
        json!({
            "version": "1", "triggerSource": source, "region": "us-east-1",
            "userPoolId": "us-east-1_Example00", "userName": "3c1f8e2a-7b4d-4e6f-9a0b-1c2d3e4f5a6b",
            "callerContext": {"awsSdkVersion": "aws-sdk-unknown-unknown", "clientId": "client"},
            "request": {"userAttributes": {"email": email}, "validationData": null},
            "response": {"autoConfirmUser": false, "autoVerifyEmail": false, "autoVerifyPhone": false}
        })
    }

    #[test]
    fn only_listed_domains_sign_up_and_operators_invite_anyone() {
        let domains = AllowedDomains::parse(" example.com, @Partner.ORG ,example.com").unwrap();
        assert_eq!(domains.as_slice(), ["example.com", "partner.org"]);
        for ok in ["ada@example.com", "bo@partner.org", "a.b+c@example.com"] {
            let e = event("PreSignUp_SignUp", ok);
            assert_eq!(pre_sign_up(e.clone(), Some(&domains)), Ok(e), "{ok}");
        }
        for refused in [
            "eve@evil.example",
            "eve@sub.example.com",
            "eve@example.com.evil.net",
            "@example.com",
            "example.com",
        ] {
            assert_eq!(
                pre_sign_up(event("PreSignUp_SignUp", refused), Some(&domains)),
                Err(SignUpRefused::Domain),
                "{refused}"
            );
        }
        let invited = event("PreSignUp_AdminCreateUser", "guest@elsewhere.net");
        assert_eq!(pre_sign_up(invited.clone(), Some(&domains)), Ok(invited));
        let mut nameless = event("PreSignUp_SignUp", "x");
        nameless["request"]["userAttributes"] = json!({});
        assert_eq!(
            pre_sign_up(nameless, Some(&domains)),
            Err(SignUpRefused::NoEmail)
        );
        // The refusal names no domain.
        assert!(!SignUpRefused::Domain.to_string().contains("example"));
    }

    #[test]
    fn every_sign_up_is_in_lowercase_in_every_mode() {
        let domains = AllowedDomains::parse("example.com").unwrap();
        for source in ["PreSignUp_SignUp", "PreSignUp_AdminCreateUser"] {
            for domains in [None, Some(&domains)] {
                assert_eq!(
                    pre_sign_up(event(source, "Ada@example.com"), domains),
                    Err(SignUpRefused::NotLowercase),
                    "{source}"
                );
            }
        }
        // Open and invite modes: any domain.
        let e = event("PreSignUp_SignUp", "eve@elsewhere.example");
        assert_eq!(pre_sign_up(e.clone(), None), Ok(e));
    }

    #[test]
    fn a_domain_list_is_checked() {
        for bad in [
            "",
            " , ",
            "localhost",
            "exa mple.com",
            "-a.com",
            "a..com",
            "ex_ample.com",
        ] {
            assert!(AllowedDomains::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_email_change_follows_the_sign_up_rules_and_other_messages_pass() {
        let domains = AllowedDomains::parse("example.com").unwrap();
        for source in EMAIL_CHANGES {
            let to = |email: &str| judge(event(source, email), Some(&domains));
            assert!(to("ada@example.com").is_ok(), "{source}");
            assert_eq!(to("ada@elsewhere.net"), Err(SignUpRefused::ChangeDomain));
            assert_eq!(
                to("Ada@example.com"),
                Err(SignUpRefused::ChangeNotLowercase)
            );
            // Without domains, any lowercase address
            let open = judge(event(source, "ada@elsewhere.net"), None);
            assert!(open.is_ok(), "{source}");
            assert_eq!(
                judge(event(source, "Ada@elsewhere.net"), None),
                Err(SignUpRefused::ChangeNotLowercase)
            );
            // Domains mode with no domain: no address may be moved to
            let closed = AllowedDomains::none();
            assert_eq!(
                judge(event(source, "ada@example.com"), Some(&closed)),
                Err(SignUpRefused::ChangeDomain)
            );
        }
        // The other messages pass unchanged, whatever the address
        for source in [
            "CustomMessage_SignUp",
            "CustomMessage_AdminCreateUser",
            "CustomMessage_ForgotPassword",
            "CustomMessage_ResendCode",
        ] {
            let e = event(source, "Guest@elsewhere.net");
            assert_eq!(judge(e.clone(), Some(&domains)), Ok(e), "{source}");
        }
        // Sign-ups are judged as before
        assert_eq!(
            judge(
                event("PreSignUp_SignUp", "ada@elsewhere.net"),
                Some(&domains)
            ),
            Err(SignUpRefused::Domain)
        );
    }
}

//! The emails' words: a subject, a plain-text body and the link back to the page. Built from a
//! notice alone, which holds no key, token or secret, so no email can carry one.

use super::{told, Notice, NoticeKind};

/// One email: to one address, a subject and a plain-text body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Email {
    pub to: String,
    pub subject: String,
    pub text: String,
}

/// The site's page at `path` (`site` with or without its final `/`).
fn page(site: &str, path: &str) -> String {
    format!("{}/{path}", site.trim_end_matches('/'))
}

/// The email a decision's notice sends to the person (`None`: a request, which goes to the
/// deciders, or no address to send to).
pub fn personal_email(notice: &Notice, site: &str) -> Option<Email> {
    let to = notice.email.clone().filter(|e| !e.trim().is_empty())?;
    let slug = &notice.slug;
    let link = page(site, "account.html");
    if notice.kind == NoticeKind::Invited {
        let org = slug;
        let role = notice.reason.as_deref().unwrap_or("member");
        let until = notice
            .expires_at
            .as_ref()
            .map(|t| format!(" It is open until {}.", told(t)))
            .unwrap_or_default();
        return Some(Email {
            to: to.clone(),
            subject: format!("You are invited to join {org}"),
            text: format!(
                "You are invited to join the organisation {org} on the dataset catalog, as \
                 {role}.{until}\n\nTo accept or decline, sign in with this address ({to}) and \
                 open your account page: {link}\n\n\
                 You receive this email because an admin of {org} invited this address. If you \
                 do not know them, ignore it: nothing happens unless you accept.\n"
            ),
        });
    }
    let (subject, said) = match notice.kind {
        NoticeKind::Requested | NoticeKind::Invited => return None,
        NoticeKind::Approved => (
            format!("Access to {slug} approved"),
            match &notice.expires_at {
                Some(until) => format!(
                    "Your request for access to the dataset {slug} was approved.\n\
                     Your access lasts until {}.",
                    told(until)
                ),
                None => format!(
                    "Your request for access to the dataset {slug} was approved.\n\
                     Your access lasts until revoked."
                ),
            },
        ),
        NoticeKind::Rejected => (
            format!("Access to {slug} not approved"),
            format!(
                "Your request for access to the dataset {slug} was rejected.\n\
                 The reason given: {}",
                notice.reason.as_deref().unwrap_or("none given")
            ),
        ),
        NoticeKind::Revoked => (
            format!("Access to {slug} revoked"),
            format!("Your access to the dataset {slug} was revoked: your keys no longer read it."),
        ),
    };
    Some(Email {
        to,
        subject,
        text: format!(
            "{said}\n\nYour requests and keys: {link}\n\n\
             You receive this email because you asked for access to a dataset. \
             To stop these emails, turn them off on that page.\n"
        ),
    })
}

/// One email to a decider listing every request given (oldest first).
pub fn digest_email(to: &str, requests: &[&Notice], site: &str) -> Email {
    let link = page(site, "operators.html");
    let subject = match requests {
        [one] => format!("Access request for {}", one.slug),
        many => format!("{} new access requests", many.len()),
    };
    // Some may have been decided or withdrawn since they arrived: the page shows where each
    // stands now.
    let mut text = String::from("New access requests since the last email:\n\n");
    for n in requests {
        let who = n.email.as_deref().unwrap_or(&n.account);
        text.push_str(&format!(
            "- {}: {who}, asked {}\n",
            n.slug,
            told(&n.created_at)
        ));
    }
    text.push_str(&format!(
        "\nWhere each stands now, and the decision: {link}\n\n\
         You receive this email as a decider of these datasets; \
         docs/operations.md says how to stop it.\n"
    ));
    Email {
        to: to.to_owned(),
        subject,
        text,
    }
}

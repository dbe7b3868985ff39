use std::collections::BTreeMap;
use std::sync::Mutex;

use chrono::TimeZone;

use super::*;
use crate::metrics::{capture, Metric};

fn at(minute: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 29, 10, minute, 0).unwrap()
}

fn record(status: AccessStatus) -> AccessRecord {
    AccessRecord {
        slug: "trials".into(),
        dataset: Uuid::nil(),
        grantee: "abc-1".into(),
        email: Some("ann@example.org".into()),
        status,
        requested_at: Some(at(0)),
        answers: Default::default(),
        terms_accepted: false,
        expires_at: None,
        decided_by: None,
        decided_at: None,
        reason: None,
        rev: 1,
    }
}

#[derive(Default)]
struct Queue {
    notices: Mutex<BTreeMap<String, Notice>>,
    failed: Mutex<Vec<String>>,
    off: Vec<String>,
    digests: Mutex<BTreeMap<String, DateTime<Utc>>>,
}

impl Queue {
    fn add(&self, n: Notice) {
        self.notices.lock().unwrap().insert(n.id.clone(), n);
    }
    fn left(&self) -> Vec<Notice> {
        self.notices.lock().unwrap().values().cloned().collect()
    }
}

impl NoticeQueue for Queue {
    async fn pending(&self, limit: usize) -> Result<Vec<Notice>, StoreError> {
        Ok(self.left().into_iter().take(limit).collect())
    }
    async fn done(&self, id: &str) -> Result<(), StoreError> {
        self.notices.lock().unwrap().remove(id);
        Ok(())
    }
    async fn reached(&self, id: &str, to: &str) -> Result<(), StoreError> {
        if let Some(n) = self.notices.lock().unwrap().get_mut(id) {
            n.sent_to.insert(to.to_owned());
        }
        Ok(())
    }
    async fn attempt_failed(
        &self,
        id: &str,
        attempts: u32,
        give_up: bool,
        _now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let mut notices = self.notices.lock().unwrap();
        if give_up {
            notices.remove(id);
            self.failed.lock().unwrap().push(id.to_owned());
        } else if let Some(n) = notices.get_mut(id) {
            n.attempts = attempts;
        }
        Ok(())
    }
    async fn emails_wanted(&self, account: &str) -> Result<bool, StoreError> {
        Ok(!self.off.iter().any(|a| a == account))
    }
    async fn last_digest(&self, to: &str) -> Result<Option<DateTime<Utc>>, StoreError> {
        Ok(self.digests.lock().unwrap().get(to).copied())
    }
    async fn digest_sent(&self, to: &str, at: DateTime<Utc>) -> Result<(), StoreError> {
        self.digests.lock().unwrap().insert(to.to_owned(), at);
        Ok(())
    }
}

#[derive(Default)]
struct Outbox {
    sent: Mutex<Vec<Email>>,
    /// Sends to these addresses fail.
    down: Mutex<Vec<String>>,
}

impl Mailer for Outbox {
    async fn send(&self, email: &Email) -> Result<(), SendError> {
        if self.down.lock().unwrap().contains(&email.to) {
            return Err(SendError("unreachable".into()));
        }
        self.sent.lock().unwrap().push(email.clone());
        Ok(())
    }
}

fn config() -> MailerConfig {
    MailerConfig::new("https://data.example.org/")
}

fn operators() -> Operators {
    Operators::parse(" ops@example.org, , boss@example.org ")
}

fn block_on<F: Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
        .block_on(f)
}

#[test]
fn a_record_calls_for_the_notice_of_its_status_and_a_withdrawal_for_none() {
    let mut approved = record(AccessStatus::Granted);
    approved.expires_at = Some(at(30));
    approved.reason = Some("old".into());
    let n = Notice::for_record(&approved, at(1)).unwrap();
    assert_eq!(n.kind, NoticeKind::Approved);
    assert_eq!(n.expires_at, Some(at(30)));
    assert_eq!(n.reason, None, "an approval carries no reason");
    assert_eq!(
        Notice::for_record(&record(AccessStatus::Pending), at(1))
            .unwrap()
            .kind,
        NoticeKind::Requested
    );
    assert!(Notice::for_record(&record(AccessStatus::Withdrawn), at(1)).is_none());
    let (a, b) = (Notice::id_at(at(1)), Notice::id_at(at(2)));
    assert!(a < b, "ids are time-ordered: {a} {b}");
    for kind in NoticeKind::ALL {
        assert_eq!(NoticeKind::parse(kind.as_str()), Some(kind));
    }
}

#[test]
fn the_persons_emails_say_until_when_why_or_revoked_and_link_their_page() {
    let site = "https://data.example.org";
    let mut approved = record(AccessStatus::Granted);
    approved.expires_at = Some(at(30));
    let e = personal_email(&Notice::for_record(&approved, at(1)).unwrap(), site).unwrap();
    assert_eq!(e.to, "ann@example.org");
    assert_eq!(e.subject, "Access to trials approved");
    assert!(e.text.contains("until 2026-11-29T10:30:00Z"), "{}", e.text);
    assert!(e.text.contains("https://data.example.org/account.html"));
    approved.expires_at = None;
    let e = personal_email(&Notice::for_record(&approved, at(1)).unwrap(), site).unwrap();
    assert!(e.text.contains("until revoked"), "{}", e.text);
    let mut rejected = record(AccessStatus::Rejected);
    rejected.reason = Some("not a clinician".into());
    let e = personal_email(&Notice::for_record(&rejected, at(1)).unwrap(), site).unwrap();
    assert!(
        e.text.contains("The reason given: not a clinician"),
        "{}",
        e.text
    );
    let e = personal_email(
        &Notice::for_record(&record(AccessStatus::Revoked), at(1)).unwrap(),
        site,
    )
    .unwrap();
    assert_eq!(e.subject, "Access to trials revoked");
    let mut nobody = record(AccessStatus::Revoked);
    nobody.email = None;
    assert!(personal_email(&Notice::for_record(&nobody, at(1)).unwrap(), site).is_none());
}

#[test]
fn requests_reach_each_decider_as_one_digest_per_window() {
    let queue = Queue::default();
    let mail = Outbox::default();
    queue.add(Notice::for_record(&record(AccessStatus::Pending), at(0)).unwrap());
    let report = block_on(run(&queue, &operators(), &mail, &config(), at(0))).unwrap();
    assert_eq!(report.digests, 2);
    assert!(queue.left().is_empty(), "both deciders reached: done");
    let sent = mail.sent.lock().unwrap().clone();
    let to: Vec<&str> = sent.iter().map(|e| e.to.as_str()).collect();
    assert_eq!(to, ["boss@example.org", "ops@example.org"]);
    assert_eq!(sent[0].subject, "Access request for trials");
    assert!(sent[0]
        .text
        .contains("https://data.example.org/operators.html"));
    // Five more within the window: held, then one email each listing all five.
    for minute in 1..6 {
        let mut r = record(AccessStatus::Pending);
        r.grantee = format!("abc-{minute}");
        queue.add(Notice::for_record(&r, at(minute)).unwrap());
    }
    let report = block_on(run(&queue, &operators(), &mail, &config(), at(10))).unwrap();
    assert_eq!((report.digests, report.held), (0, 10));
    assert_eq!(queue.left().len(), 5);
    let report = block_on(run(&queue, &operators(), &mail, &config(), at(15))).unwrap();
    assert_eq!(report.digests, 2);
    let sent = mail.sent.lock().unwrap().clone();
    assert_eq!(sent.len(), 4);
    assert_eq!(sent[3].subject, "5 new access requests");
    assert!(queue.left().is_empty());
}

#[test]
fn a_failed_send_is_retried_then_set_aside_and_counted() {
    let queue = Queue::default();
    let mail = Outbox::default();
    mail.down.lock().unwrap().push("ann@example.org".into());
    let notice = Notice::for_record(&record(AccessStatus::Revoked), at(0)).unwrap();
    let id = notice.id.clone();
    queue.add(notice);
    let config = MailerConfig {
        max_attempts: 3,
        ..config()
    };
    for round in 1..3 {
        let report = block_on(run(&queue, &operators(), &mail, &config, at(round))).unwrap();
        assert_eq!(report.retried, 1);
        assert_eq!(queue.left()[0].attempts, round);
    }
    let (report, metrics) = block_on(capture::metrics_of(run(
        &queue,
        &operators(),
        &mail,
        &config,
        at(3),
    )));
    assert_eq!(report.unwrap().failed, 1);
    assert_eq!(metrics, [Metric::NoticeFailed]);
    assert_eq!(*queue.failed.lock().unwrap(), [id]);
    assert!(mail.sent.lock().unwrap().is_empty());
}

#[test]
fn a_decider_whose_send_fails_gets_the_request_later_and_the_other_once() {
    let queue = Queue::default();
    let mail = Outbox::default();
    mail.down.lock().unwrap().push("ops@example.org".into());
    queue.add(Notice::for_record(&record(AccessStatus::Pending), at(0)).unwrap());
    let report = block_on(run(&queue, &operators(), &mail, &config(), at(0))).unwrap();
    assert_eq!((report.digests, report.retried), (1, 1));
    let left = queue.left();
    assert_eq!(
        left[0].sent_to.iter().collect::<Vec<_>>(),
        ["boss@example.org"]
    );
    mail.down.lock().unwrap().clear();
    block_on(run(&queue, &operators(), &mail, &config(), at(1))).unwrap();
    let to: Vec<String> = mail
        .sent
        .lock()
        .unwrap()
        .iter()
        .map(|e| e.to.clone())
        .collect();
    assert_eq!(to, ["boss@example.org", "ops@example.org"]);
    assert!(queue.left().is_empty());
}

#[test]
fn a_person_who_turned_emails_off_gets_none() {
    let queue = Queue {
        off: vec!["abc-1".into()],
        ..Queue::default()
    };
    let mail = Outbox::default();
    queue.add(Notice::for_record(&record(AccessStatus::Revoked), at(0)).unwrap());
    let report = block_on(run(&queue, &operators(), &mail, &config(), at(0))).unwrap();
    assert_eq!(report.unwanted, 1);
    assert!(mail.sent.lock().unwrap().is_empty());
    assert!(queue.left().is_empty());
}

use super::*;
use crate::policy::FormField;

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-25T10:00:00Z")
        .unwrap()
        .with_timezone(&Utc)
}

fn policy() -> ApprovalPolicy {
    ApprovalPolicy {
        form: vec![
            FormField {
                name: "affiliation".into(),
                label: "Your organisation".into(),
                max_length: 10,
                required: true,
            },
            FormField {
                name: "purpose".into(),
                label: "What for".into(),
                max_length: 500,
                required: false,
            },
        ],
        terms: Some("Be nice.".into()),
        ..ApprovalPolicy::default()
    }
}

fn ask(body: &str) -> Result<BTreeMap<String, String>, FieldError> {
    AccessAsk::parse(body.as_bytes())?.answers_for(&policy())
}

#[test]
fn a_request_answers_the_form_within_its_limits_and_accepts_the_terms() {
    let answers =
        ask(r#"{"dataset": "trials", "answers": {"affiliation": " Acme "}, "accept_terms": true}"#)
            .unwrap();
    assert_eq!(
        answers,
        BTreeMap::from([("affiliation".into(), "Acme".into())])
    );
    let field_of = |body: &str| ask(body).unwrap_err().field;
    assert_eq!(
        field_of(r#"{"dataset": "trials", "answers": {}, "accept_terms": true}"#),
        "answers"
    );
    assert_eq!(
        field_of(
            r#"{"dataset": "trials", "answers": {"affiliation": "   "}, "accept_terms": true}"#
        ),
        "answers"
    );
    assert_eq!(
        field_of(
            r#"{"dataset": "trials", "answers": {"affiliation": "12345678901"}, "accept_terms": true}"#
        ),
        "answers"
    );
    assert_eq!(
        field_of(
            r#"{"dataset": "trials", "answers": {"affiliation": "A", "other": "x"}, "accept_terms": true}"#
        ),
        "answers"
    );
    assert_eq!(
        field_of(r#"{"dataset": "trials", "answers": {"affiliation": 5}, "accept_terms": true}"#),
        "answers"
    );
    assert_eq!(
        field_of(r#"{"dataset": "trials", "answers": {"affiliation": "A"}}"#),
        "accept_terms"
    );
    assert_eq!(
        field_of(
            r#"{"dataset": "trials", "answers": {"affiliation": "A"}, "accept_terms": "yes"}"#
        ),
        "body"
    );
    assert_eq!(field_of(r#"{"answers": {}}"#), "dataset");
    assert_eq!(field_of(r#"{"dataset": "Not A Slug"}"#), "dataset");
    assert_eq!(field_of(r#"{"dataset": "t", "extra": 1}"#), "body");
    assert_eq!(field_of("[]"), "body");
    // Ten characters is the limit, counted as characters, not bytes.
    assert!(ask(
        r#"{"dataset": "t", "answers": {"affiliation": "éééééééééé"}, "accept_terms": true}"#
    )
    .is_ok());
}

#[test]
fn an_automatic_approval_is_recorded_as_a_decided_request() {
    let request = AccessAsk::parse(br#"{"dataset": "trials", "accept_terms": true}"#).unwrap();
    let owner = Owner::parse("abc").unwrap();
    let id = Uuid::nil();
    let auto = request.record(id, &owner, None, BTreeMap::new(), true, true, now());
    assert_eq!(auto.status, AccessStatus::Granted);
    assert_eq!(auto.requested_at, Some(now()));
    assert_eq!(auto.decided_by.as_deref(), Some(AUTOMATIC));
    assert!(auto.is_active_at(now()));
    let manual = request.record(id, &owner, None, BTreeMap::new(), false, false, now());
    assert_eq!(manual.status, AccessStatus::Pending);
    assert!(
        !manual.terms_accepted,
        "a dataset without terms records none accepted"
    );
    assert_eq!((&manual.decided_by, manual.decided_at), (&None, None));
    assert!(!manual.is_active_at(now()));
}

#[test]
fn one_open_request_per_dataset() {
    let request = AccessAsk::parse(br#"{"dataset": "trials"}"#).unwrap();
    let owner = Owner::parse("abc").unwrap();
    let mut r = request.record(
        Uuid::nil(),
        &owner,
        None,
        BTreeMap::new(),
        false,
        false,
        now(),
    );
    assert!(!r.may_ask_again(now()), "pending");
    r.status = AccessStatus::Granted;
    assert!(!r.may_ask_again(now()), "granted until revoked");
    r.expires_at = Some(now());
    assert!(r.may_ask_again(now()), "expired");
    assert_eq!(r.shown_status(now()), "expired");
    for status in [
        AccessStatus::Rejected,
        AccessStatus::Revoked,
        AccessStatus::Withdrawn,
    ] {
        r.status = status;
        assert!(r.may_ask_again(now()), "{status:?}");
    }
}

#[test]
fn decisions_are_parsed_and_checked() {
    let parse = |body: &str| DecisionRequest::parse(body.as_bytes(), now());
    assert_eq!(
        parse(r#"{"decision": "approve", "rev": 3}"#).unwrap(),
        DecisionRequest {
            decision: Decision::Approve { expires_at: None },
            rev: Some(3)
        }
    );
    assert_eq!(
        parse(r#"{"decision": "approve", "expires_at": "2027-01-01T00:00:00Z", "rev": 1}"#)
            .unwrap()
            .decision,
        Decision::Approve {
            expires_at: Some("2027-01-01T00:00:00Z".parse().unwrap())
        }
    );
    assert_eq!(
        parse(r#"{"decision": "reject", "reason": " not a partner ", "rev": 2}"#)
            .unwrap()
            .decision,
        Decision::Reject {
            reason: "not a partner".into()
        }
    );
    assert_eq!(
        parse(r#"{"decision": "revoke"}"#).unwrap().decision,
        Decision::Revoke
    );
    let field_of = |body: &str| parse(body).unwrap_err().field;
    assert_eq!(field_of(r#"{"decision": "approve"}"#), "rev");
    assert_eq!(field_of(r#"{"decision": "reject", "reason": "x"}"#), "rev");
    assert_eq!(field_of(r#"{"decision": "reject"}"#), "reason");
    assert_eq!(
        field_of(&format!(
            r#"{{"decision": "reject", "reason": "{}"}}"#,
            "x".repeat(501)
        )),
        "reason"
    );
    assert_eq!(
        field_of(r#"{"decision": "approve", "expires_at": "2020-01-01T00:00:00Z"}"#),
        "expires_at"
    );
    assert_eq!(
        field_of(r#"{"decision": "approve", "expires_at": "tomorrow"}"#),
        "expires_at"
    );
    assert_eq!(
        field_of(r#"{"decision": "approve", "reason": "x"}"#),
        "body"
    );
    assert_eq!(field_of(r#"{"decision": "grant"}"#), "decision");
    assert_eq!(field_of(r#"{"decision": "approve", "rev": -1}"#), "rev");
    assert_eq!(field_of(r#"{"decision": "approve", "who": 1}"#), "body");
}

#[test]
fn the_operators_group_is_read_from_the_claim_as_api_gateway_passes_it() {
    let claims = |groups: &str| {
        std::collections::HashMap::from([("cognito:groups".to_owned(), groups.to_owned())])
    };
    assert!(in_group(&claims("[operators]"), "operators"));
    assert!(in_group(&claims("[readers operators]"), "operators"));
    assert!(in_group(&claims("operators"), "operators"));
    assert!(!in_group(&claims("[operators-x]"), "operators"));
    assert!(!in_group(&claims("[readers]"), "operators"));
    assert!(!in_group(&std::collections::HashMap::new(), "operators"));
    // Exact names only: a group named `x,operators` or `"operators"` is another group.
    assert!(!in_group(&claims("[x,operators]"), "operators"));
    assert!(!in_group(&claims("[\"operators\"]"), "operators"));
}

use super::*;
use crate::keys::{generate_key, is_key_id, KeyHash};

fn claims(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn the_caller_is_the_sub_of_an_access_token() {
    let sub = "6b1c2a9e-3b7d-4c5e-9a8f-0d1e2f3a4b5c";
    let owner = caller(Some(&claims(&[("sub", sub), ("token_use", "access")]))).unwrap();
    assert_eq!(owner.as_str(), sub);
    assert_eq!(caller(None), Err(ClaimsError::Missing));
    assert_eq!(
        caller(Some(&claims(&[("sub", sub), ("token_use", "id")]))),
        Err(ClaimsError::NotAccessToken)
    );
    assert_eq!(
        caller(Some(&claims(&[("sub", sub)]))),
        Err(ClaimsError::NotAccessToken)
    );
    for bad in ["", "a b", "ACCOUNT#x", &"a".repeat(129)] {
        assert_eq!(
            caller(Some(&claims(&[("sub", bad), ("token_use", "access")]))),
            Err(ClaimsError::NoSubject),
            "{bad}"
        );
    }
}

fn field_of(body: &str) -> Field {
    KeyRequest::parse(body.as_bytes()).unwrap_err().field
}

#[test]
fn a_key_request_may_limit_the_key_to_datasets() {
    let r = KeyRequest::parse(br#"{"label": "l", "datasets": ["b", "a", "b"]}"#).unwrap();
    let names: Vec<&str> = r.datasets.iter().flatten().map(Slug::as_str).collect();
    assert_eq!(names, ["b", "a"]);
    let null = KeyRequest::parse(br#"{"label": "l", "datasets": null}"#).unwrap();
    assert_eq!(null.datasets, None);
    let many = format!(
        r#"{{"label": "l", "datasets": [{}]}}"#,
        (0..=MAX_DATASETS)
            .map(|i| format!("\"d{i}\""))
            .collect::<Vec<_>>()
            .join(",")
    );
    for bad in [
        r#"{"label": "l", "datasets": []}"#,
        r#"{"label": "l", "datasets": "a"}"#,
        r#"{"label": "l", "datasets": ["Not A Slug"]}"#,
        r#"{"label": "l", "datasets": [1]}"#,
        many.as_str(),
    ] {
        let e = KeyRequest::parse(bad.as_bytes()).unwrap_err();
        assert_eq!(e.field, "datasets", "{bad}");
    }
}

#[test]
fn a_key_request_has_a_label_and_an_expiry_in_days() {
    assert_eq!(
        KeyRequest::parse(br#"{"label": "laptop"}"#).unwrap(),
        KeyRequest {
            label: "laptop".into(),
            expires_in_days: 90,
            datasets: None,
        }
    );
    let r = KeyRequest::parse(br#"{"label": "CI \u00e9t\u00e9", "expires_in_days": 365}"#).unwrap();
    assert_eq!((r.label.as_str(), r.expires_in_days), ("CI été", 365));
    let r = KeyRequest::parse(br#"{"label": "x", "expires_in_days": 30.0}"#).unwrap();
    assert_eq!(r.expires_in_days, 30);
    // null is "not given": the default.
    let r = KeyRequest::parse(br#"{"label": "x", "expires_in_days": null}"#).unwrap();
    assert_eq!(r.expires_in_days, 90);
    assert_eq!(
        KeyRequest::parse(format!(r#"{{"label": "{}"}}"#, "é".repeat(64)).as_bytes())
            .unwrap()
            .label
            .chars()
            .count(),
        64
    );
}

#[test]
fn a_bad_key_request_names_its_field() {
    assert_eq!(field_of(""), "body");
    assert_eq!(field_of("[]"), "body");
    assert_eq!(field_of("{"), "body");
    assert_eq!(field_of(r#"{"label": "x", "scopes": ["admin"]}"#), "body");
    assert!(KeyRequest::parse(br#"{"label": "x", "scopes": 1}"#)
        .unwrap_err()
        .message
        .contains("scopes"));
    assert_eq!(field_of("{}"), "label");
    assert_eq!(field_of(r#"{"label": null}"#), "label");
    assert_eq!(field_of(r#"{"label": 7}"#), "label");
    assert_eq!(field_of(r#"{"label": ""}"#), "label");
    assert_eq!(field_of(r#"{"label": "   "}"#), "label");
    assert_eq!(field_of(r#"{"label": "a\nb"}"#), "label");
    assert_eq!(field_of(r#"{"label": "a\u0000"}"#), "label");
    for invisible in ["\\u2028", "\\u202e", "\\u200b", "\\ufeff", "\\u0085"] {
        assert_eq!(
            field_of(&format!(r#"{{"label": "a{invisible}b"}}"#)),
            "label",
            "{invisible}"
        );
    }
    assert_eq!(
        field_of(&format!(r#"{{"label": "{}"}}"#, "x".repeat(65))),
        "label"
    );
    for days in ["0", "366", "-1", "1.5", "\"90\"", "1e9", "[]"] {
        assert_eq!(
            field_of(&format!(r#"{{"label": "x", "expires_in_days": {days}}}"#)),
            "expires_in_days",
            "{days}"
        );
    }
}

#[test]
fn the_daily_count_starts_again_at_utc_midnight() {
    let at = |t: &str| DateTime::parse_from_rfc3339(t).unwrap().with_timezone(&Utc);
    assert_eq!(creation_day(at("2026-11-25T23:59:59Z")), "2026-11-25");
    assert_eq!(creation_day(at("2026-11-25T23:59:59-05:00")), "2026-11-26");
    assert_eq!(seconds_to_next_day(at("2026-11-25T23:59:59Z")), 1);
    assert_eq!(seconds_to_next_day(at("2026-11-25T00:00:00Z")), 86_400);
    assert_eq!(seconds_to_next_day(at("2026-12-31T12:00:00Z")), 43_200);
}

#[test]
fn an_account_key_is_a_read_key_that_expires() {
    let now = DateTime::parse_from_rfc3339("2026-11-23T10:00:00Z")
        .unwrap()
        .with_timezone(&Utc);
    let secret = generate_key();
    let owner = Owner::parse("abc-123").unwrap();
    let request = KeyRequest {
        label: "laptop".into(),
        expires_in_days: 30,
        datasets: Some(vec![Slug::parse("river-levels").unwrap()]),
    };
    let key = request.key_for(&secret, owner.clone(), now);
    assert_eq!(key.owner, Some(owner));
    assert_eq!(key.datasets, request.datasets);
    assert_eq!(key.scopes, vec![Scope::Read]);
    assert_eq!(key.expires_at, Some(now + Duration::days(30)));
    assert_eq!(key.hash, KeyHash::of(&secret));
    assert!(is_key_id(&key.id), "{}", key.id);
    assert!(secret.starts_with(&key.prefix) && key.prefix.len() == 9);
}

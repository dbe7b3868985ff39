use super::*;
use std::collections::HashMap;

fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| map.get(name).cloned()
}

const BASE: [(&str, &str); 3] = [
    ("DATASETS_TABLE", "d"),
    ("KEYS_TABLE", "k"),
    ("DATA_BUCKET", "b"),
];

#[test]
fn the_rows_function_needs_both_tables_and_the_bucket() {
    let c = RowsConfig::from_lookup(&lookup(&BASE)).unwrap();
    assert_eq!(
        (
            c.datasets_table.as_str(),
            c.keys_table.as_str(),
            c.bucket.as_str()
        ),
        ("d", "k", "b")
    );
    assert!(!c.s3_force_path_style);
    for missing in ["DATASETS_TABLE", "KEYS_TABLE", "DATA_BUCKET"] {
        let vars: Vec<_> = BASE
            .iter()
            .copied()
            .filter(|(k, _)| *k != missing)
            .collect();
        assert_eq!(
            RowsConfig::from_lookup(&lookup(&vars)),
            Err(ConfigError::Missing(missing))
        );
    }
}

#[test]
fn the_file_stats_function_needs_the_bucket_alone() {
    let c = FileStatsConfig::from_lookup(&lookup(&[("DATA_BUCKET", "b")])).unwrap();
    assert_eq!((c.bucket.as_str(), c.s3_force_path_style), ("b", false));
    let local = FileStatsConfig::from_lookup(&lookup(&[
        ("DATA_BUCKET", "b"),
        ("S3_FORCE_PATH_STYLE", "true"),
    ]))
    .unwrap();
    assert!(local.s3_force_path_style);
    assert_eq!(
        FileStatsConfig::from_lookup(&lookup(&[("DATASETS_TABLE", "d")])),
        Err(ConfigError::Missing("DATA_BUCKET"))
    );
}

#[test]
fn url_ttl_defaults_to_15_minutes() {
    let c = DataConfig::from_lookup(&lookup(&BASE)).unwrap();
    assert_eq!(c.url_ttl, Duration::from_secs(900));
    assert!(!c.s3_force_path_style);
}

#[test]
fn url_ttl_is_configurable_and_validated() {
    let mut vars = BASE.to_vec();
    vars.push(("URL_TTL_SECONDS", "60"));
    assert_eq!(
        DataConfig::from_lookup(&lookup(&vars)).unwrap().url_ttl,
        Duration::from_secs(60)
    );
    for bad in ["0", "-5", "abc", "604801"] {
        let mut vars = BASE.to_vec();
        vars.push(("URL_TTL_SECONDS", bad));
        assert!(matches!(
            DataConfig::from_lookup(&lookup(&vars)),
            Err(ConfigError::Invalid {
                name: "URL_TTL_SECONDS",
                ..
            })
        ));
    }
}

#[test]
fn signing_role_is_optional_and_its_session_bounded() {
    let c = DataConfig::from_lookup(&lookup(&BASE)).unwrap();
    assert_eq!(c.signing_role_arn, None);
    assert_eq!(c.signing_session, Duration::from_secs(3600));
    let mut vars = BASE.to_vec();
    vars.push(("SIGNING_ROLE_ARN", "arn:aws:iam::1:role/s"));
    vars.push(("SIGNING_SESSION_SECONDS", "900"));
    // A 900 s session serves URLs of at most 840 s.
    vars.push(("URL_TTL_SECONDS", "600"));
    let c = DataConfig::from_lookup(&lookup(&vars)).unwrap();
    assert_eq!(c.signing_role_arn.as_deref(), Some("arn:aws:iam::1:role/s"));
    assert_eq!(c.signing_session, Duration::from_secs(900));
    let mut vars = BASE.to_vec();
    vars.push(("SIGNING_SESSION_SECONDS", "60"));
    assert!(DataConfig::from_lookup(&lookup(&vars)).is_err());
}

#[test]
fn path_style_is_true_false_1_0_or_unset_for_functions_and_operators_alike() {
    for (raw, expected) in [
        (None, Some(false)),
        (Some(""), Some(false)),
        (Some(" "), Some(false)),
        (Some("false"), Some(false)),
        (Some("0"), Some(false)),
        (Some("true"), Some(true)),
        (Some(" 1 "), Some(true)),
        (Some("yes"), None),
        (Some("TRUE"), None),
    ] {
        let mut vars = BASE.to_vec();
        vars.extend(raw.map(|v| ("S3_FORCE_PATH_STYLE", v)));
        let data = DataConfig::from_lookup(&lookup(&vars)).map(|c| c.s3_force_path_style);
        let admin = AdminConfig::from_lookup(&lookup(&vars)).map(|c| c.s3_force_path_style);
        assert_eq!(data, admin, "{raw:?}");
        match expected {
            Some(flag) => assert_eq!(admin, Ok(flag), "{raw:?}"),
            None => assert!(
                matches!(
                    admin,
                    Err(ConfigError::Invalid {
                        name: "S3_FORCE_PATH_STYLE",
                        ..
                    })
                ),
                "{raw:?}"
            ),
        }
    }
}

#[test]
fn operators_need_the_tables_and_the_bucket_only_to_publish() {
    let c = AdminConfig::from_lookup(&lookup(&BASE[..2])).unwrap();
    assert_eq!(
        c,
        AdminConfig {
            datasets_table: "d".into(),
            keys_table: "k".into(),
            bucket: None,
            s3_force_path_style: false,
            user_pool_id: None,
            downloads_table: None,
        }
    );
    assert_eq!(c.bucket(), Err(ConfigError::Missing("DATA_BUCKET")));
    assert_eq!(
        c.downloads_table(),
        Err(ConfigError::Missing("DOWNLOADS_TABLE"))
    );
    assert_eq!(c.user_pool_id(), Err(ConfigError::Missing("USER_POOL_ID")));
    assert_eq!(
        c.bucket().unwrap_err().to_string(),
        "environment variable DATA_BUCKET is required"
    );
    let mut vars = BASE.to_vec();
    vars.push(("S3_FORCE_PATH_STYLE", "true"));
    let c = AdminConfig::from_lookup(&lookup(&vars)).unwrap();
    assert_eq!(c.bucket(), Ok("b"));
    assert!(c.s3_force_path_style);
    let mut vars = BASE[..2].to_vec();
    vars.push(("DATA_BUCKET", ""));
    assert_eq!(
        AdminConfig::from_lookup(&lookup(&vars)).unwrap().bucket,
        None
    );
    assert_eq!(
        AdminConfig::from_lookup(&lookup(&BASE[..1])),
        Err(ConfigError::Missing("KEYS_TABLE"))
    );
    assert_eq!(
        AdminConfig::from_lookup(&lookup(&[("KEYS_TABLE", "k")])),
        Err(ConfigError::Missing("DATASETS_TABLE"))
    );
}

#[test]
fn a_signing_session_is_at_most_an_hour_and_no_url_outlives_it() {
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut vars = BASE.to_vec();
        vars.push(("SIGNING_ROLE_ARN", "arn:aws:iam::1:role/s"));
        vars.extend_from_slice(extra);
        DataConfig::from_lookup(&lookup(&vars))
    };
    // Role chaining caps sessions at 3600 s: a longer one would fail every AssumeRole.
    assert!(with(&[("SIGNING_SESSION_SECONDS", "3600")]).is_ok());
    assert!(matches!(
        with(&[("SIGNING_SESSION_SECONDS", "3601")]),
        Err(ConfigError::Invalid {
            name: "SIGNING_SESSION_SECONDS",
            ..
        })
    ));
    // The TTL leaves a minute of the session (when it is renewed), no less.
    let ok = with(&[
        ("SIGNING_SESSION_SECONDS", "900"),
        ("URL_TTL_SECONDS", "840"),
    ]);
    assert_eq!(ok.unwrap().url_ttl, Duration::from_secs(840));
    assert!(matches!(
        with(&[
            ("SIGNING_SESSION_SECONDS", "900"),
            ("URL_TTL_SECONDS", "841")
        ]),
        Err(ConfigError::Invalid {
            name: "URL_TTL_SECONDS",
            ..
        })
    ));
    assert!(matches!(
        with(&[("URL_TTL_SECONDS", "7200")]),
        Err(ConfigError::Invalid {
            name: "URL_TTL_SECONDS",
            ..
        })
    ));
}

#[test]
fn a_deployed_stack_refuses_to_start_without_its_signing_role() {
    let mut vars = BASE.to_vec();
    vars.push(("SIGNING_ROLE_REQUIRED", "true"));
    assert_eq!(
        DataConfig::from_lookup(&lookup(&vars)),
        Err(ConfigError::Missing("SIGNING_ROLE_ARN"))
    );
    vars.push(("SIGNING_ROLE_ARN", "arn:aws:iam::1:role/s"));
    assert!(DataConfig::from_lookup(&lookup(&vars)).is_ok());
    // Locally (no requirement), the function's own credentials sign.
    assert!(DataConfig::from_lookup(&lookup(&BASE)).is_ok());
}

#[test]
fn missing_variables_are_named() {
    assert_eq!(
        DataConfig::from_lookup(&lookup(&BASE[..2])),
        Err(ConfigError::Missing("DATA_BUCKET"))
    );
    assert_eq!(
        CatalogConfig::from_lookup(&lookup(&[])),
        Err(ConfigError::Missing("DATASETS_TABLE"))
    );
}

fn signup_event(source: &str, email: &str) -> serde_json::Value {
    serde_json::json!({
        "version": "1", "triggerSource": source, "region": "us-east-1",
        "userPoolId": "us-east-1_Example00", "userName": "3c1f8e2a-7b4d-4e6f-9a0b-1c2d3e4f5a6b",
        "callerContext": {"awsSdkVersion": "aws-sdk-unknown-unknown", "clientId": "client"},
        "request": {"userAttributes": {"email": email}, "validationData": null},
        "response": {"autoConfirmUser": false, "autoVerifyEmail": false, "autoVerifyPhone": false}
    })
}

#[test]
fn domains_mode_with_no_domain_listed_refuses_every_sign_up() {
    use catalog::signup::{pre_sign_up, AllowedDomains, SignUpRefused};
    let config = |vars: &[(&str, &str)]| {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        SignUpConfig::from_lookup(&move |name: &str| {
            vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
        })
        .unwrap()
        .allowed_domains
    };
    // As the template sets them: SignUpMode domains, SignUpDomains left at its default ''.
    let closed = config(&[("SIGN_UP_MODE", "domains"), ("ALLOWED_DOMAINS", "")]);
    assert_eq!(closed, Some(AllowedDomains::none()));
    for email in ["ada@example.com", "eve@evil.example", "a@b.c"] {
        assert_eq!(
            pre_sign_up(signup_event("PreSignUp_SignUp", email), closed.as_ref()),
            Err(SignUpRefused::NoDomainListed),
            "{email}"
        );
    }
    assert!(SignUpRefused::NoDomainListed.to_string().contains("closed"));
    // An operator's invitation is still accepted.
    let invited = signup_event("PreSignUp_AdminCreateUser", "guest@elsewhere.net");
    assert_eq!(pre_sign_up(invited.clone(), closed.as_ref()), Ok(invited));
    // The other modes: any domain, as before; domains with a list: that list.
    assert_eq!(
        config(&[("SIGN_UP_MODE", "open"), ("ALLOWED_DOMAINS", "")]),
        None
    );
    assert_eq!(config(&[]), None);
    assert_eq!(
        config(&[
            ("SIGN_UP_MODE", "domains"),
            ("ALLOWED_DOMAINS", "example.com")
        ]),
        Some(AllowedDomains::parse("example.com").unwrap())
    );
}

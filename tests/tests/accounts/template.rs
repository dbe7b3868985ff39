//! template.yaml against what the keys function does.

use super::*;

/// template.yaml against what the keys function does: its fifteen routes are the ones its
/// routers accept, all behind the JWT authorizer (and no catalog route is); its policy allows every
/// DynamoDB operation it sends, over the keys' create (a full account included), list and revoke
/// the access requests' ask, list, decide and withdraw, and the organisations' changes and
/// reads; the data function may update
/// `last_used_at` alone.
#[tokio::test]
async fn the_template_gives_the_keys_function_its_routes_and_only_its_operations() {
    use catalog::grants::{AccessAsk, AccessStatus, Decision};
    use catalog::ports::AccessStore;
    use catalog_aws::dynamo::access::DynamoAccess;
    use catalog_http::api::access::AccessRoute;
    use catalog_http::api::account::AccountRoute;
    let text = std::fs::read_to_string(catalog_tests::repo_root().join("template.yaml")).unwrap();
    let template: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let resources = &template["Resources"];
    let events = resources["CatalogKeysFunction"]["Properties"]["Events"]
        .as_mapping()
        .unwrap();
    let mut paths = Vec::new();
    for event in events.values() {
        let p = &event["Properties"];
        assert_eq!(p["Method"].as_str(), Some("ANY"));
        assert_eq!(p["Auth"]["Authorizer"].as_str(), Some("AccountJwt"));
        let path = p["Path"].as_str().unwrap();
        let concrete = path
            .replace("{id}", "key_0123456789abcdef")
            .replace("{slug}", "river-levels")
            .replace("{account}", "7a0c2e4f-1111-4222-8333-944455556666")
            .replace("{org}", "acme");
        assert!(
            AccountRoute::parse(&concrete).is_some()
                || AccessRoute::parse(&concrete).is_some()
                || catalog_http::api::orgs::OrgRoute::parse(&concrete).is_some()
                || catalog_http::api::preferences::is_preferences(&concrete)
                || catalog_http::api::uploads::is_upload_route(&concrete),
            "{path}"
        );
        paths.push(path.to_owned());
    }
    paths.sort();
    assert_eq!(
        paths,
        [
            "/api/v1/account/access",
            "/api/v1/account/access/{slug}",
            "/api/v1/account/invitations",
            "/api/v1/account/invitations/{org}",
            "/api/v1/account/keys",
            "/api/v1/account/keys/{id}",
            "/api/v1/account/orgs",
            "/api/v1/account/preferences",
            "/api/v1/operator/access",
            "/api/v1/operator/access/{slug}/{account}",
            "/api/v1/orgs",
            "/api/v1/orgs/{org}",
            "/api/v1/orgs/{org}/invitations",
            "/api/v1/orgs/{org}/invitations/{id}",
            "/api/v1/orgs/{org}/members/{account}",
            "/api/v1/orgs/{org}/uploads",
            "/api/v1/orgs/{org}/uploads/{id}",
            "/api/v1/orgs/{org}/uploads/{id}/complete",
        ]
    );
    // The operators' group the function checks is the group the template creates.
    let group = &resources["CatalogKeysFunction"]["Properties"]["Environment"]["Variables"]
        ["OPERATORS_GROUP"];
    assert!(!group.is_null());
    assert_eq!(
        group,
        &resources["OperatorsGroup"]["Properties"]["GroupName"]
    );
    for function in [
        "CatalogListFunction",
        "CatalogMetadataFunction",
        "CatalogDataFunction",
    ] {
        for event in resources[function]["Properties"]["Events"]
            .as_mapping()
            .unwrap()
            .values()
        {
            assert!(
                event["Properties"]["Auth"].is_null(),
                "{function}: no authorizer"
            );
        }
    }
    let jwt = &resources["HttpApi"]["Properties"]["Auth"]["Authorizers"]["AccountJwt"];
    assert_eq!(
        jwt["IdentitySource"].as_str(),
        Some("$request.header.Authorization")
    );
    assert!(resources["HttpApi"]["Properties"]["Auth"]["DefaultAuthorizer"].is_null());

    // Every operation the keys store sends...
    let stack = Stack::start().await;
    let wire = catalog_tests::Wire::default();
    let accounts = DynamoAccounts::new(stack.dynamo_client(&wire), &stack.target.keys_table);
    let owner = Owner::parse("7a0c2e4f-1111-4222-8333-944455556666").unwrap();
    let request = KeyRequest {
        label: "x".into(),
        expires_in_days: 1,
        datasets: None,
    };
    let then = Utc::now() - chrono::Duration::days(2);
    for _ in 0..MAX_ACTIVE_KEYS {
        let key = request.key_for(&generate_key(), owner.clone(), then);
        accounts.create_key(&key, then).await.unwrap();
    }
    let now = Utc::now();
    let key = request.key_for(&generate_key(), owner.clone(), now);
    assert_eq!(
        accounts.create_key(&key, now).await.unwrap(),
        Created::Created
    );
    accounts.list_keys(&owner).await.unwrap();
    assert!(accounts.revoke_key(&owner, &key.id, now).await.unwrap());
    // ...a creation with an Idempotency-Key, and its retry (the re-issue deletes an item)
    let request = KeyRequest {
        label: "once".into(),
        expires_in_days: 1,
        datasets: None,
    };
    let replay = catalog::accounts::Replay::new("retry-1", &request).unwrap();
    for _ in 0..2 {
        let key = request.key_for(&generate_key(), owner.clone(), now);
        accounts.create_key_once(&key, &replay, now).await.unwrap();
    }
    // ...and every operation the access store sends (ask twice: the refusal reads the record)
    stack.seed_samples(now).await;
    let access = DynamoAccess::new(
        stack.dynamo_client(&wire),
        &stack.target.keys_table,
        &stack.target.datasets_table,
    );
    let river = catalog::input::Slug::parse("river-levels").unwrap();
    let dataset = access.dataset_access(&river).await.unwrap().unwrap();
    let ask = AccessAsk::parse(br#"{"dataset": "river-levels"}"#).unwrap();
    let record = ask.record(
        dataset.id,
        &owner,
        None,
        Default::default(),
        false,
        false,
        now,
    );
    access.ask(&record, now).await.unwrap();
    access.ask(&record, now).await.unwrap();
    access.access_of(&owner).await.unwrap();
    access
        .access_by_status(AccessStatus::Pending, Some(&dataset.id))
        .await
        .unwrap();
    access
        .decide(&dataset.id, &owner, &Decision::Revoke, None, "op", now)
        .await
        .unwrap();
    access.withdraw(&owner, &dataset.id, now).await.unwrap();
    // ...and the email preference, read and set.
    {
        use catalog::notices::EmailPreferences;
        access.set_emails(&owner, false).await.unwrap();
        assert!(!access.emails(&owner).await.unwrap());
    }
    // ...and every operation the organisations' routes send (through the same adapter).
    {
        use catalog::orgs::{Invitation, Membership, Org, OrgName, Role};
        use catalog::ports::OrgStore;
        let org = OrgName::parse("acme").unwrap();
        let other = Owner::parse("7a0c2e4f-1111-4222-8333-944455550000").unwrap();
        let member = |who: &Owner, role| Membership {
            org: org.clone(),
            account: who.to_string(),
            role,
            email: Some(format!("{who}@example.com")),
            added_at: now,
            added_by: "ops".into(),
        };
        let made = Org {
            name: org.clone(),
            display_name: "Acme".into(),
            members: 1,
            created_at: now,
            created_by: "ops".into(),
        };
        access
            .create_org(&made, &member(&owner, Role::Admin))
            .await
            .unwrap();
        OrgStore::orgs(&access).await.unwrap();
        access.org(&org).await.unwrap();
        let invitation = Invitation::new(
            org.clone(),
            "b@example.com".into(),
            Role::Editor,
            "ops",
            now,
        );
        access.invite(&invitation).await.unwrap();
        access.invitations(&org).await.unwrap();
        access.invitations_for("b@example.com").await.unwrap();
        access
            .accept(&invitation, &member(&other, Role::Editor))
            .await
            .unwrap();
        access.set_role(&org, &other, Role::Member).await.unwrap();
        access.members(&org).await.unwrap();
        access.memberships_of(&owner).await.unwrap();
        access.role(&org, &owner).await.unwrap();
        access.remove_member(&org, &other).await.unwrap();
        access.drop_invitation(&org, "none").await.unwrap();
    }
    let mut sent: Vec<String> = wire
        .take_calls()
        .into_iter()
        .map(|c| c.operation.replace("DynamoDB.", ""))
        .collect();
    sent.sort();
    sent.dedup();
    assert_eq!(
        sent,
        [
            "BatchGetItem",
            "DeleteItem",
            "GetItem",
            "Query",
            "TransactWriteItems",
            "UpdateItem"
        ]
    );
    // ...is allowed: a transaction needs the actions of its parts (Put, Update, ConditionCheck).
    let mut allowed = Vec::new();
    for policy in resources["CatalogKeysFunction"]["Properties"]["Policies"]
        .as_sequence()
        .unwrap()
    {
        for statement in policy["Statement"].as_sequence().into_iter().flatten() {
            for action in statement["Action"].as_sequence().into_iter().flatten() {
                allowed.push(action.as_str().unwrap().to_owned());
            }
        }
    }
    for needed in [
        "GetItem",
        "Query",
        "PutItem",
        "UpdateItem",
        "ConditionCheckItem",
        "BatchGetItem",
        "DeleteItem",
    ] {
        assert!(
            allowed.contains(&format!("dynamodb:{needed}")),
            "dynamodb:{needed} is not in the keys function's policy: {allowed:?}"
        );
    }
    // No Scan (the request path never reads a whole table); DeleteItem only for a retried
    // creation's re-issue, exercised above.
    assert!(!allowed.iter().any(|a| a.contains("Scan")));
    assert!(allowed.contains(&"dynamodb:DeleteItem".to_owned()));

    // The data function: an UpdateItem of last_used_at alone.
    let statements = resources["CatalogDataPolicy"]["Properties"]["PolicyDocument"]["Statement"]
        .as_sequence()
        .unwrap();
    let update: Vec<_> = statements
        .iter()
        .filter(|s| {
            s["Action"]
                .as_sequence()
                .into_iter()
                .flatten()
                .any(|a| a.as_str() == Some("dynamodb:UpdateItem"))
        })
        .collect();
    assert_eq!(update.len(), 1);
    let attributes: Vec<&str> = update[0]["Condition"]["ForAllValues:StringEquals"]
        ["dynamodb:Attributes"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(attributes, ["key_hash", "last_used_at"]);
}

/// Sessions are short and every answer through the distribution is hardened: access (and ID)
/// tokens live 15 minutes, and the `/api/*` behaviour sends HSTS and `nosniff` as the site's
/// pages do.
#[test]
fn tokens_live_fifteen_minutes_and_api_answers_carry_hsts_and_nosniff() {
    let text = std::fs::read_to_string(catalog_tests::repo_root().join("template.yaml")).unwrap();
    let template: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let resources = &template["Resources"];
    let client = resources
        .as_mapping()
        .unwrap()
        .values()
        .find(|r| r["Type"].as_str() == Some("AWS::Cognito::UserPoolClient"))
        .expect("a user pool client");
    let p = &client["Properties"];
    assert_eq!(
        p["TokenValidityUnits"]["AccessToken"].as_str(),
        Some("minutes")
    );
    assert_eq!(p["AccessTokenValidity"].as_u64(), Some(15));
    assert_eq!(p["TokenValidityUnits"]["IdToken"].as_str(), Some("minutes"));
    assert_eq!(p["IdTokenValidity"].as_u64(), Some(15));

    let behaviours = resources["SiteDistribution"]["Properties"]["DistributionConfig"]
        ["CacheBehaviors"]
        .as_sequence()
        .unwrap();
    let api = behaviours
        .iter()
        .find(|b| b["PathPattern"].as_str() == Some("/api/*"))
        .expect("the /api/* behaviour");
    // `!Ref Name`: a tagged value.
    let policy = match &api["ResponseHeadersPolicyId"] {
        serde_norway::Value::Tagged(tagged) if tagged.tag == "Ref" => tagged.value.as_str(),
        _ => None,
    }
    .expect("a response headers policy of this template");
    let headers =
        &resources[policy]["Properties"]["ResponseHeadersPolicyConfig"]["SecurityHeadersConfig"];
    assert!(
        headers["StrictTransportSecurity"]["AccessControlMaxAgeSec"].as_u64() >= Some(31_536_000)
    );
    assert_eq!(
        headers["StrictTransportSecurity"]["Override"].as_bool(),
        Some(true)
    );
    assert_eq!(
        headers["ContentTypeOptions"]["Override"].as_bool(),
        Some(true)
    );
}

/// The local user pool (dev/run's, the tests') is the template's: MFA as `AccountMfa`'s default,
/// and the web client's 15-minute access and ID tokens.
#[tokio::test]
async fn the_local_user_pool_is_set_up_as_the_template_declares_it() {
    let text = std::fs::read_to_string(catalog_tests::repo_root().join("template.yaml")).unwrap();
    let template: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let mfa = template["Parameters"]["AccountMfa"]["Default"]
        .as_str()
        .expect("AccountMfa's default");
    let stack = Stack::start().await;
    let pool = stack.user_pool().await;
    let cognito = stack.cognito();
    let described = cognito
        .describe_user_pool()
        .user_pool_id(&pool.pool_id)
        .send()
        .await
        .expect("describe the pool");
    let configured = described.user_pool().and_then(|p| p.mfa_configuration());
    assert_eq!(configured.map(|m| m.as_str()), Some(mfa));
    let client = cognito
        .describe_user_pool_client()
        .user_pool_id(&pool.pool_id)
        .client_id(&pool.client_id)
        .send()
        .await
        .expect("describe the client");
    let client = client.user_pool_client().expect("the client");
    assert_eq!(client.access_token_validity(), Some(15));
    assert_eq!(client.id_token_validity(), Some(15));
    let units = client.token_validity_units().expect("units");
    assert_eq!(units.access_token().map(|u| u.as_str()), Some("minutes"));
}

/// What the pool lets a token or a setting do to an account: an email change waits for the new
/// address's code, and MFA cannot be set to ON (the site cannot take a person through setting an
/// app up at sign-in, so ON would lock everyone out).
#[test]
fn an_email_change_needs_its_code_and_mfa_cannot_lock_everyone_out() {
    let text = std::fs::read_to_string(catalog_tests::repo_root().join("template.yaml")).unwrap();
    let template: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let pool = &template["Resources"]["UserPool"]["Properties"];
    let verified: Vec<&str> = pool["UserAttributeUpdateSettings"]
        ["AttributesRequireVerificationBeforeUpdate"]
        .as_sequence()
        .expect("AttributesRequireVerificationBeforeUpdate")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert_eq!(verified, ["email"]);
    let allowed: Vec<&str> = template["Parameters"]["AccountMfa"]["AllowedValues"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert_eq!(allowed, ["OFF", "OPTIONAL"]);
}

/// What a `!Tag value` holds, when the value is that tag.
fn tagged<'v>(value: &'v serde_norway::Value, tag: &str) -> Option<&'v serde_norway::Value> {
    match value {
        serde_norway::Value::Tagged(t) if t.tag == tag => Some(&t.value),
        _ => None,
    }
}

/// The sign-up modes, as the template sets them up: `open` by default; `invite` turns on the
/// pool's AllowAdminCreateUserOnly; the sign-up function (the compiled binary events.rs drives
/// with Cognito's event) is the pool's pre-sign-up trigger in every mode (lowercase addresses),
/// with the domains in `domains`, and Cognito's permission to invoke it. Each mode changes the pool in place (CloudFormation
/// updates AdminCreateUserConfig and LambdaConfig without replacing a pool).
#[test]
fn the_sign_up_mode_parameter_sets_up_open_invite_and_domains() {
    let text = std::fs::read_to_string(catalog_tests::repo_root().join("template.yaml")).unwrap();
    let template: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let mode = &template["Parameters"]["SignUpMode"];
    assert_eq!(mode["Default"].as_str(), Some("open"));
    let values: Vec<&str> = mode["AllowedValues"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(values, ["open", "invite", "domains"]);
    let condition = |name: &str| {
        let equals = tagged(&template["Conditions"][name], "Equals").expect(name);
        let [left, right] = equals.as_sequence().unwrap().as_slice() else {
            panic!("{name}")
        };
        assert_eq!(
            tagged(left, "Ref").and_then(|v| v.as_str()),
            Some("SignUpMode")
        );
        right.as_str().unwrap().to_owned()
    };
    assert_eq!(condition("InviteOnly"), "invite");
    assert_eq!(condition("DomainsOnly"), "domains");

    let resources = &template["Resources"];
    let pool = &resources["UserPool"]["Properties"];
    let admin_only = tagged(
        &pool["AdminCreateUserConfig"]["AllowAdminCreateUserOnly"],
        "If",
    )
    .and_then(|v| v.as_sequence())
    .expect("AllowAdminCreateUserOnly: !If");
    assert_eq!(admin_only[0].as_str(), Some("InviteOnly"));
    assert_eq!(
        (admin_only[1].as_bool(), admin_only[2].as_bool()),
        (Some(true), Some(false))
    );
    // The trigger judges every sign-up (lowercase in every mode, domains in `domains`), and
    // every email change, as the custom-message trigger that sends its code
    for trigger in ["PreSignUp", "CustomMessage"] {
        assert_eq!(
            tagged(&pool["LambdaConfig"][trigger], "GetAtt").and_then(|v| v.as_str()),
            Some("CatalogSignUpFunction.Arn"),
            "{trigger}"
        );
    }

    let function = &resources["CatalogSignUpFunction"];
    assert!(function["Condition"].is_null(), "deployed in every mode");
    assert_eq!(
        function["Metadata"]["BuildProperties"]["Binary"].as_str(),
        Some("catalog-signup")
    );
    let domains = tagged(
        &function["Properties"]["Environment"]["Variables"]["ALLOWED_DOMAINS"],
        "If",
    )
    .and_then(|v| v.as_sequence())
    .expect("ALLOWED_DOMAINS: !If");
    assert_eq!(domains[0].as_str(), Some("DomainsOnly"));
    let joined = tagged(&domains[1], "Join")
        .and_then(|v| v.as_sequence())
        .expect("the domains joined");
    assert_eq!(
        tagged(&joined[1], "Ref").and_then(|v| v.as_str()),
        Some("SignUpDomains")
    );
    assert_eq!(
        domains[2].as_str(),
        Some(""),
        "any domain in the other modes"
    );
    assert!(
        function["Properties"]["Events"].is_null(),
        "no route: Cognito invokes it"
    );
    assert!(
        function["Properties"]["Policies"].is_null(),
        "it calls nothing"
    );
    let permission = &resources["CatalogSignUpPermission"];
    assert_eq!(
        permission["Properties"]["Principal"].as_str(),
        Some("cognito-idp.amazonaws.com")
    );
    assert_eq!(
        tagged(&permission["Properties"]["SourceArn"], "GetAtt").and_then(|v| v.as_str()),
        Some("UserPool.Arn")
    );
}

/// No template change replaces the user pool of a deployed stack (which would leave every
/// account behind): the settings Cognito fixes when a pool is created — how people sign in
/// (`UsernameAttributes`, `AliasAttributes`), whether names are case-sensitive
/// (`UsernameConfiguration`), the required attributes (`Schema`) — and the web client's secret
/// stay as the first release deployed them. Case-insensitivity is therefore the application's:
/// the sign-up trigger takes lowercase addresses only, and the site and `catalog-admin` send
/// them so (docs/operations.md, "Email addresses and case").
#[test]
fn an_update_never_replaces_the_user_pool() {
    let text = std::fs::read_to_string(catalog_tests::repo_root().join("template.yaml")).unwrap();
    let template: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let pool = &template["Resources"]["UserPool"]["Properties"];
    let released: serde_norway::Value = serde_norway::from_str(
        "UsernameAttributes: [email]\n\
         Schema:\n  - {Name: email, AttributeDataType: String, Required: true, Mutable: true}\n",
    )
    .unwrap();
    assert_eq!(pool["UsernameAttributes"], released["UsernameAttributes"]);
    assert_eq!(pool["Schema"], released["Schema"]);
    for fixed in ["AliasAttributes", "UsernameConfiguration"] {
        assert!(
            pool[fixed].is_null(),
            "{fixed} replaces a deployed pool: see docs/operations.md, Email addresses and case"
        );
    }
    let client = &template["Resources"]["UserPoolWebClient"]["Properties"];
    assert_eq!(client["GenerateSecret"].as_bool(), Some(false));
    assert_eq!(
        template["Resources"]["UserPool"]["DeletionPolicy"].as_str(),
        Some("Retain")
    );
}

/// SignUpMode `domains` with SignUpDomains at its default lists no domain: the template's rule
/// refuses that stack (evaluated here as CloudFormation evaluates a rule: its condition, then
/// its assertions, over the parameters' values; a CommaDelimitedList of '' is `[""]`), and the
/// sign-up function is told the mode, so that it refuses every sign-up rather than accepting
/// any domain (`catalog::signup::tests::domains_mode_with_no_domain_listed_refuses_every_sign_up`).
#[test]
fn sign_up_mode_domains_without_a_domain_is_refused_by_a_rule() {
    use serde_norway::Value as Yaml;
    let text = std::fs::read_to_string(catalog_tests::repo_root().join("template.yaml")).unwrap();
    let template: Yaml = serde_norway::from_str(&text).unwrap();
    // A rule's intrinsic functions, as far as this rule uses them.
    #[derive(Debug, PartialEq)]
    enum V {
        S(String),
        L(Vec<String>),
        B(bool),
    }
    fn eval(value: &Yaml, params: &[(&str, V)]) -> V {
        let Yaml::Tagged(t) = value else {
            return V::S(value.as_str().expect("a string").to_owned());
        };
        let args = || t.value.as_sequence().expect("arguments").as_slice();
        match t.tag.to_string().trim_start_matches('!') {
            "Ref" => {
                let name = t.value.as_str().unwrap();
                match params.iter().find(|(n, _)| *n == name) {
                    Some((_, V::S(s))) => V::S(s.clone()),
                    Some((_, V::L(l))) => V::L(l.clone()),
                    other => panic!("parameter {name}: {other:?}"),
                }
            }
            "Equals" => {
                let [a, b] = args() else { panic!("Equals") };
                V::B(eval(a, params) == eval(b, params))
            }
            "Not" => {
                let [a] = args() else { panic!("Not") };
                let V::B(b) = eval(a, params) else {
                    panic!("Not of a non-boolean")
                };
                V::B(!b)
            }
            "Contains" => {
                let [list, item] = args() else {
                    panic!("Contains")
                };
                let (V::L(list), V::S(item)) = (eval(list, params), eval(item, params)) else {
                    panic!("Contains: a list and a string")
                };
                V::B(list.contains(&item))
            }
            other => panic!("a rule function this test does not evaluate: {other}"),
        }
    }
    // Whether a stack with these parameters passes every rule.
    let passes = |mode: &str, domains: &str| {
        let params = [
            ("SignUpMode", V::S(mode.to_owned())),
            // CloudFormation splits a CommaDelimitedList on commas: '' is [""].
            (
                "SignUpDomains",
                V::L(domains.split(',').map(str::to_owned).collect()),
            ),
        ];
        let rules = template["Rules"].as_mapping().expect("a Rules section");
        rules.values().all(|rule| {
            let applies = rule
                .get("RuleCondition")
                .is_none_or(|c| eval(c, &params) == V::B(true));
            !applies
                || rule["Assertions"].as_sequence().unwrap().iter().all(|a| {
                    assert!(a["AssertDescription"]
                        .as_str()
                        .is_some_and(|d| !d.is_empty()));
                    eval(&a["Assert"], &params) == V::B(true)
                })
        })
    };
    let default = template["Parameters"]["SignUpDomains"]["Default"]
        .as_str()
        .expect("SignUpDomains' default");
    assert!(!passes("domains", default), "domains with the default list");
    assert!(!passes("domains", "example.com,"), "an empty item");
    assert!(passes("domains", "example.com"));
    assert!(passes("domains", "example.com,partner.org"));
    for mode in ["open", "invite"] {
        assert!(passes(mode, default), "{mode} needs no domain");
    }
    // The function knows the mode, not only the (possibly empty) list.
    let variables =
        &template["Resources"]["CatalogSignUpFunction"]["Properties"]["Environment"]["Variables"];
    assert_eq!(
        tagged(&variables["SIGN_UP_MODE"], "Ref").and_then(|v| v.as_str()),
        Some("SignUpMode")
    );
}

/// An IAM `StringLike` pattern (`*` any run, `?` one character) against a value.
fn iam_like(pattern: &str, value: &str) -> bool {
    fn go(p: &[char], v: &[char]) -> bool {
        match p.split_first() {
            None => v.is_empty(),
            Some(('*', rest)) => (0..=v.len()).any(|i| go(rest, &v[i..])),
            Some(('?', rest)) => !v.is_empty() && go(rest, &v[1..]),
            Some((c, rest)) => v.first() == Some(c) && go(rest, &v[1..]),
        }
    }
    go(
        &pattern.chars().collect::<Vec<_>>(),
        &value.chars().collect::<Vec<_>>(),
    )
}

/// The partition keys of the datasets table that the writes sent through this client name
/// (PutItem, UpdateItem, DeleteItem, BatchWriteItem and the Put, Update and Delete parts of a
/// TransactWriteItems; not its ConditionChecks, which write nothing).
#[derive(Debug, Clone, Default)]
struct WrittenPartitions {
    table: String,
    seen: std::sync::Arc<std::sync::Mutex<std::collections::BTreeSet<String>>>,
}

impl aws_smithy_runtime_api::client::interceptors::Intercept for WrittenPartitions {
    fn name(&self) -> &'static str {
        "WrittenPartitions"
    }

    fn read_before_transmit(
        &self,
        context: &aws_smithy_runtime_api::client::interceptors::context::BeforeTransmitInterceptorContextRef<'_>,
        _components: &aws_smithy_runtime_api::client::runtime_components::RuntimeComponents,
        _cfg: &mut aws_smithy_types::config_bag::ConfigBag,
    ) -> Result<(), aws_smithy_runtime_api::box_error::BoxError> {
        let request = context.request();
        let target = request.headers().get("x-amz-target").unwrap_or("");
        let Some(body) = request.body().bytes() else {
            return Ok(());
        };
        let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let pk = |item: &Value| item["pk"]["S"].as_str().map(str::to_owned);
        let mut found = Vec::new();
        let ours = |table: &Value| table.as_str() == Some(self.table.as_str());
        match target.rsplit('.').next().unwrap_or("") {
            "PutItem" | "UpdateItem" | "DeleteItem" if ours(&body["TableName"]) => {
                found.extend(pk(&body["Item"]).or_else(|| pk(&body["Key"])));
            }
            "TransactWriteItems" => {
                for part in body["TransactItems"].as_array().into_iter().flatten() {
                    for kind in ["Put", "Update", "Delete"] {
                        let w = &part[kind];
                        if ours(&w["TableName"]) {
                            found.extend(pk(&w["Item"]).or_else(|| pk(&w["Key"])));
                        }
                    }
                }
            }
            "BatchWriteItem" => {
                let requests = &body["RequestItems"][self.table.as_str()];
                for r in requests.as_array().into_iter().flatten() {
                    found.extend(
                        pk(&r["PutRequest"]["Item"]).or_else(|| pk(&r["DeleteRequest"]["Key"])),
                    );
                }
            }
            _ => {}
        }
        catalog::lock(&self.seen).extend(found);
        Ok(())
    }
}

/// The `dynamodb:LeadingKeys` patterns of a policy statement's condition operator.
fn leading_keys<'t>(statement: &'t serde_norway::Value, operator: &str) -> Vec<&'t str> {
    statement["Condition"][operator]["dynamodb:LeadingKeys"]
        .as_sequence()
        .unwrap_or_else(|| panic!("{operator} on dynamodb:LeadingKeys: {statement:?}"))
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

/// The IAM the audit found broader than docs/security.md said, narrowed: the data, rows and
/// Delta Sharing functions may batch-read (and, for Delta Sharing, get) key items of the keys
/// table only, not an account's, grant, idempotency or creations item (the grants have their
/// own GetItem, `GRANT#*`); the audit function writes only the partitions a download count
/// changes, as found by running a count (with the kept orders) and capturing every partition
/// its writes name.
#[tokio::test]
async fn the_key_reads_and_the_audit_functions_writes_are_confined_to_their_items() {
    use catalog_aws::dynamo::layout::{account_key, api_key_key, grant_key, member_key};
    let text = std::fs::read_to_string(catalog_tests::repo_root().join("template.yaml")).unwrap();
    let template: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let resources = &template["Resources"];
    let statements = |resource: &str| -> Vec<serde_norway::Value> {
        let r = &resources[resource]["Properties"];
        let doc = if r["PolicyDocument"].is_null() {
            &r["Policies"][0]
        } else {
            &r["PolicyDocument"]
        };
        doc["Statement"].as_sequence().unwrap().clone()
    };
    let on = |statement: &serde_norway::Value, table: &str| {
        tagged(&statement["Resource"], "GetAtt").and_then(|v| v.as_str())
            == Some(&format!("{table}.Arn"))
    };
    let actions = |statement: &serde_norway::Value| -> Vec<String> {
        statement["Action"]
            .as_sequence()
            .into_iter()
            .flatten()
            .map(|a| a.as_str().unwrap().to_owned())
            .collect()
    };
    let hash_pk =
        |item: catalog_aws::dynamo::attr::Item| item["key_hash"].as_s().unwrap().to_owned();
    let key = hash_pk(api_key_key(
        catalog::keys::KeyHash::of(&generate_key()).as_str(),
    ));
    let sub = "7a0c2e4f-1111-4222-8333-944455556666";
    let others = [
        hash_pk(account_key(sub)),
        hash_pk(grant_key(sub, &uuid::Uuid::new_v4())),
        format!("IDEMPOTENCY#{sub}#{}", "a".repeat(64)),
        format!("CREATIONS#{sub}#2026-11-28"),
        // A 64-character account item (a sub of 56 characters) is refused too.
        format!("ACCOUNT#{}", "b".repeat(56)),
    ];
    let membership = hash_pk(member_key("acme", sub));
    for function in [
        "CatalogDataPolicy",
        "CatalogRowsFunction",
        "CatalogMetadataFunction",
        "CatalogSharingPolicy",
    ] {
        let mut key_batches = 0;
        for statement in statements(function) {
            if !on(&statement, "KeysTable") {
                continue;
            }
            let acts = actions(&statement);
            let allows = |pk: &str| {
                let like = leading_keys(&statement, "ForAllValues:StringLike");
                let not_like = statement["Condition"]["ForAllValues:StringNotLike"]
                    ["dynamodb:LeadingKeys"]
                    .as_sequence()
                    .map(|s| s.iter().map(|v| v.as_str().unwrap()).collect::<Vec<_>>())
                    .unwrap_or_default();
                like.iter().any(|p| iam_like(p, pk)) && !not_like.iter().any(|p| iam_like(p, pk))
            };
            if acts.iter().any(|a| a == "dynamodb:BatchGetItem") {
                // Every key-table BatchGetItem is confined to key items (with the dataset), or
                // to an account's grant and membership (an organisation's dataset: read
                // together, catalog::ports::GrantReader::standing); never an account's,
                // idempotency or creations item.
                let grants = allows(&others[1]) && allows(&membership);
                assert!(
                    allows(&key) != grants,
                    "{function}: key items, or grants and memberships"
                );
                key_batches += usize::from(allows(&key));
                for other in [&others[0], &others[2], &others[3], &others[4]] {
                    assert!(!allows(other), "{function}: {other}");
                }
            }
            if acts.iter().any(|a| a == "dynamodb:GetItem") {
                // Every GetItem: key items, or grant items (their own statement); never an
                // account's, idempotency or creations item.
                for other in [&others[0], &others[2], &others[3], &others[4]] {
                    assert!(!allows(other), "{function}: GetItem of {other}");
                }
            }
        }
        assert_eq!(key_batches, 1, "{function} batch-reads key items");
    }

    // The audit function: its writes to the datasets table carry the partitions a count
    // changes, and nothing else.
    let audit = statements("CatalogAuditFunction");
    let write_actions = [
        "dynamodb:PutItem",
        "dynamodb:UpdateItem",
        "dynamodb:BatchWriteItem",
    ];
    let mut writing: Vec<&serde_norway::Value> = audit
        .iter()
        .filter(|s| on(s, "DatasetsTable"))
        .filter(|s| {
            actions(s)
                .iter()
                .any(|a| write_actions.contains(&a.as_str()))
        })
        .collect();
    assert_eq!(writing.len(), 1, "one statement writes the datasets table");
    let writes = writing.pop().unwrap();
    assert!(actions(writes)
        .iter()
        .all(|a| write_actions.contains(&a.as_str())));
    let allowed = leading_keys(writes, "ForAllValues:StringLike");
    assert!(
        !allowed.iter().any(|p| iam_like(p, "TEXT")),
        "the text index is not the audit's"
    );

    let stack = Stack::start().await;
    let now = Utc::now();
    stack.seed_samples(now).await;
    stack
        .writer()
        .reindex()
        .await
        .expect("reindex: the kept orders");
    let captured = WrittenPartitions {
        table: stack.target.datasets_table.clone(),
        ..Default::default()
    };
    let client = aws_sdk_dynamodb::Client::from_conf(
        aws_sdk_dynamodb::config::Builder::from(&stack.sdk)
            .endpoint_url(&stack.dynamo_url)
            .interceptor(captured.clone())
            .build(),
    );
    let writer = catalog_writer::DynamoWriter::new(
        client,
        &stack.target.datasets_table,
        &stack.target.keys_table,
    );
    for (slug, count) in [("river-levels", 40), ("city-bikes", 7), ("river-levels", 3)] {
        writer
            .set_downloads(&catalog::input::Slug::parse(slug).unwrap(), count, now)
            .await
            .expect("set a count");
    }
    let written = catalog::lock(&captured.seen).clone();
    for must in ["DS#river-levels", "LIST", "ORDER"] {
        assert!(written.contains(must), "{must} not written: {written:?}");
    }
    for pk in &written {
        assert!(
            allowed.iter().any(|p| iam_like(p, pk)),
            "the audit function writes {pk}, which its policy does not allow ({allowed:?})"
        );
    }
}

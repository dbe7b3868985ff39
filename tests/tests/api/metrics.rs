//! template.yaml's alarms and dashboard against the metrics the code writes
//! (`catalog::metrics::DEFINITIONS`): no alarm or graph on a metric nobody writes, or under
//! dimensions it is not written with; every function watched for errors and throttles; every
//! alarm on the dashboard and notifying the topic. The lines themselves are parsed from the
//! compiled functions' output in the events test (events.rs).

use std::collections::BTreeSet;

use catalog::metrics::DEFINITIONS;
use serde_norway::Value;

fn template() -> Value {
    let text = std::fs::read_to_string(catalog_tests::repo_root().join("template.yaml")).unwrap();
    serde_norway::from_str(&text).unwrap()
}

/// The argument of a `!Tag`, or `None`.
fn tagged<'a>(value: &'a Value, tag: &str) -> Option<&'a Value> {
    match value {
        Value::Tagged(t) if t.tag == tag => Some(&t.value),
        _ => None,
    }
}

/// The template's `${...}` references in a `!Sub` text, replaced as a deployed stack would
/// resolve them: the stack's name as `stack`, every other reference as `<Name>`.
fn substituted(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find('}').expect("a closed ${...}") + start;
        let name = &rest[start + 2..end];
        out.push_str(&match name {
            "AWS::StackName" => "stack".to_owned(),
            other => format!("<{other}>"),
        });
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

/// A metric an alarm or a graph reads: its namespace (resolved), name and dimension names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Watched {
    namespace: String,
    name: String,
    dimensions: BTreeSet<String>,
    /// Where: the resource, and the widget when on the dashboard.
    place: String,
}

fn text_of(value: &Value) -> String {
    match tagged(value, "Sub") {
        Some(v) => substituted(v.as_str().expect("a !Sub text")),
        None => match tagged(value, "Ref") {
            Some(v) => format!("<{}>", v.as_str().unwrap()),
            None => value.as_str().unwrap_or_default().to_owned(),
        },
    }
}

fn alarm_metrics(name: &str, props: &Value) -> Vec<Watched> {
    let dims = |d: &Value| -> BTreeSet<String> {
        d.as_sequence()
            .map(|s| s.iter().map(|d| text_of(&d["Name"])).collect())
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    if !props["MetricName"].is_null() {
        out.push(Watched {
            namespace: text_of(&props["Namespace"]),
            name: text_of(&props["MetricName"]),
            dimensions: dims(&props["Dimensions"]),
            place: name.to_owned(),
        });
    }
    for query in props["Metrics"].as_sequence().into_iter().flatten() {
        let metric = &query["MetricStat"]["Metric"];
        if !metric.is_null() {
            out.push(Watched {
                namespace: text_of(&metric["Namespace"]),
                name: text_of(&metric["MetricName"]),
                dimensions: dims(&metric["Dimensions"]),
                place: name.to_owned(),
            });
        } else {
            out.extend(expression_metrics(&text_of(&query["Expression"]), name));
        }
    }
    out
}

/// The metrics a metric-math expression reads: a `SEARCH('{"namespace",Dim} MetricName="M"', …)`
/// or a Metrics Insights `SELECT f(M) FROM SCHEMA("namespace", Dim, …)`. Arithmetic on other
/// queries' ids reads none itself.
fn expression_metrics(expression: &str, place: &str) -> Vec<Watched> {
    let between = |text: &str, open: &str, close: char| -> Option<String> {
        let start = text.find(open)? + open.len();
        let end = text[start..].find(close)? + start;
        Some(text[start..end].to_owned())
    };
    let names = |list: &str| -> (String, BTreeSet<String>) {
        let mut parts = list
            .split(',')
            .map(|p| p.trim().trim_matches('"').to_owned());
        let namespace = parts.next().unwrap();
        (namespace, parts.collect())
    };
    if let Some(schema) = between(expression, "SEARCH('{", '}') {
        let (namespace, dimensions) = names(&schema.replace("\\\"", "\""));
        let name = between(expression, "MetricName=\"", '"').expect("a SEARCH names its metric");
        return vec![Watched {
            namespace,
            name,
            dimensions,
            place: place.to_owned(),
        }];
    }
    if expression.starts_with("SELECT") {
        let (namespace, dimensions) = names(&between(expression, "SCHEMA(", ')').unwrap());
        let function = between(expression, "SELECT ", ')').unwrap();
        let name = function.split('(').nth(1).unwrap().to_owned();
        return vec![Watched {
            namespace,
            name,
            dimensions,
            place: place.to_owned(),
        }];
    }
    Vec::new()
}

fn dashboard_metrics(body: &serde_json::Value) -> Vec<Watched> {
    let mut out = Vec::new();
    for widget in body["widgets"].as_array().unwrap() {
        let title = widget["properties"]["title"].as_str().unwrap_or_default();
        let place = format!("Dashboard, widget '{title}'");
        for metric in widget["properties"]["metrics"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let Some(expression) = metric
                .as_array()
                .and_then(|m| m.first())
                .and_then(|m| m["expression"].as_str())
                .or_else(|| metric["expression"].as_str())
            {
                out.extend(expression_metrics(expression, &place));
                continue;
            }
            let parts = metric.as_array().expect("a metric array");
            let texts: Vec<&str> = parts.iter().filter_map(|p| p.as_str()).collect();
            out.push(Watched {
                namespace: texts[0].to_owned(),
                name: texts[1].to_owned(),
                dimensions: texts[2..]
                    .iter()
                    .step_by(2)
                    .map(|d| (*d).to_owned())
                    .collect(),
                place: place.clone(),
            });
        }
    }
    out
}

#[test]
fn every_alarm_and_graph_reads_a_metric_that_is_written_with_those_dimensions() {
    let template = template();
    let resources = template["Resources"].as_mapping().unwrap();
    // The functions write in the namespace the stack gives them.
    let namespace =
        text_of(&template["Globals"]["Function"]["Environment"]["Variables"]["METRICS_NAMESPACE"]);
    assert_eq!(namespace, "DatasetCatalog/stack");

    let mut watched = Vec::new();
    let mut alarms = BTreeSet::new();
    for (name, resource) in resources {
        let name = name.as_str().unwrap();
        if resource["Type"] == "AWS::CloudWatch::Alarm" {
            let props = &resource["Properties"];
            watched.extend(alarm_metrics(name, props));
            alarms.insert(name.to_owned());
            for actions in ["AlarmActions", "OKActions"] {
                let targets: Vec<String> = props[actions]
                    .as_sequence()
                    .unwrap_or_else(|| panic!("{name}: no {actions}"))
                    .iter()
                    .map(text_of)
                    .collect();
                assert_eq!(targets, ["<AlarmTopic>"], "{name}: {actions}");
            }
            assert_eq!(props["TreatMissingData"], "notBreaching", "{name}");
        }
    }
    let body = text_of(&resources[&Value::from("Dashboard")]["Properties"]["DashboardBody"]);
    let body: serde_json::Value = serde_json::from_str(&body).expect("the dashboard is JSON");
    watched.extend(dashboard_metrics(&body));

    // Each of the catalog's own metrics is one the code writes, under a set it writes.
    let mut own = BTreeSet::new();
    for w in &watched {
        if w.namespace != namespace {
            assert!(w.namespace.starts_with("AWS/"), "{w:?}");
            continue;
        }
        let definition = DEFINITIONS
            .iter()
            .find(|d| d.name == w.name)
            .unwrap_or_else(|| panic!("{}: no code writes {}", w.place, w.name));
        assert!(
            definition.dimension_sets.iter().any(|set| {
                set.iter().map(|d| (*d).to_owned()).collect::<BTreeSet<_>>() == w.dimensions
            }),
            "{}: {} is not written with the dimensions {:?}",
            w.place,
            w.name,
            w.dimensions
        );
        own.insert(w.name.clone());
    }
    // And the dashboard shows every one of them.
    let shown: BTreeSet<String> = dashboard_metrics(&body)
        .into_iter()
        .filter(|w| w.namespace == namespace)
        .map(|w| w.name)
        .collect();
    let declared: BTreeSet<String> = DEFINITIONS.iter().map(|d| d.name.to_owned()).collect();
    assert_eq!(
        shown, declared,
        "the dashboard graphs every metric the code writes"
    );
    assert!(own.contains("SigningUnavailable") && own.contains("KeyUseNotRecorded"));

    // Every function behind the API or Cognito is watched for errors and throttles, and the
    // API's 5xx rate and both tables' throttles and system errors are alarmed.
    for (name, resource) in resources {
        if resource["Type"] != "AWS::Serverless::Function" {
            continue;
        }
        let name = name.as_str().unwrap();
        for metric in ["Errors", "Throttles"] {
            assert!(
                watched.iter().any(|w| w.namespace == "AWS/Lambda"
                    && w.name == metric
                    && alarms.contains(&w.place)
                    && text_of(
                        &resources[&Value::from(w.place.as_str())]["Properties"]["Dimensions"][0]
                            ["Value"]
                    ) == format!("<{name}>")),
                "{name}: no {metric} alarm"
            );
        }
    }
    let alarmed = |namespace: &str, metric: &str, dimension: &str| {
        watched.iter().any(|w| {
            alarms.contains(&w.place)
                && w.namespace == namespace
                && w.name == metric
                && w.dimensions.contains(dimension)
        })
    };
    assert!(alarmed("AWS/ApiGateway", "5xx", "ApiId"));
    assert!(alarmed("AWS/ApiGateway", "Count", "ApiId"));
    for table in ["DatasetsTable", "KeysTable"] {
        for metric in ["ThrottledRequests", "SystemErrors"] {
            let place = format!("{table}{metric}Alarm");
            assert!(
                watched.iter().any(|w| w.place == place
                    && w.namespace == "AWS/DynamoDB"
                    && w.name == metric
                    && w.dimensions.contains("TableName")),
                "{place}"
            );
            let expression = text_of(
                &resources[&Value::from(place.as_str())]["Properties"]["Metrics"][0]["Expression"],
            );
            assert!(
                expression.ends_with(&format!("TableName = '<{table}>'")),
                "{expression}"
            );
        }
    }

    // The dashboard's alarm widget shows every alarm.
    let on_dashboard: BTreeSet<String> = body["widgets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["type"] == "alarm")
        .flat_map(|w| w["properties"]["alarms"].as_array().unwrap().clone())
        .map(|a| {
            a.as_str()
                .unwrap()
                .trim_start_matches('<')
                .trim_end_matches(".Arn>")
                .to_owned()
        })
        .collect();
    assert_eq!(on_dashboard, alarms);
}

#[test]
fn expressions_name_the_metrics_they_read() {
    let search = expression_metrics(
        r#"SEARCH('{"DatasetCatalog/stack",Route} MetricName="UrlsIssued"', 'Sum', 300)"#,
        "w",
    );
    assert_eq!(search[0].namespace, "DatasetCatalog/stack");
    assert_eq!(search[0].name, "UrlsIssued");
    assert_eq!(search[0].dimensions, BTreeSet::from(["Route".to_owned()]));
    let insights = expression_metrics(
        r#"SELECT SUM(SystemErrors) FROM SCHEMA("AWS/DynamoDB", Operation, TableName) WHERE TableName = 't'"#,
        "w",
    );
    assert_eq!(insights[0].namespace, "AWS/DynamoDB");
    assert_eq!(insights[0].name, "SystemErrors");
    assert_eq!(
        insights[0].dimensions,
        BTreeSet::from(["Operation".to_owned(), "TableName".to_owned()])
    );
    assert!(expression_metrics("IF(requests >= 10, 100 * errors / requests, 0)", "w").is_empty());
}

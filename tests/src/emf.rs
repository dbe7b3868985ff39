//! CloudWatch's embedded metric format, read back from a captured log: every line that carries
//! an `_aws` member is checked against the format's specification
//! (<https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html>)
//! and turned into the data points CloudWatch Logs would extract from it.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// The units a metric definition may name.
const UNITS: &[&str] = &[
    "Seconds",
    "Microseconds",
    "Milliseconds",
    "Bytes",
    "Kilobytes",
    "Megabytes",
    "Gigabytes",
    "Terabytes",
    "Bits",
    "Kilobits",
    "Megabits",
    "Gigabits",
    "Terabits",
    "Percent",
    "Count",
    "Bytes/Second",
    "Kilobytes/Second",
    "Megabytes/Second",
    "Gigabytes/Second",
    "Terabytes/Second",
    "Bits/Second",
    "Kilobits/Second",
    "Megabits/Second",
    "Gigabits/Second",
    "Terabits/Second",
    "Count/Second",
    "None",
];

/// One data point of one metric, under one dimension set.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub namespace: String,
    pub name: String,
    pub unit: String,
    /// The dimension set's names and their values on the line (empty: the metric's total).
    pub dimensions: BTreeMap<String, String>,
    pub value: f64,
}

/// The points of every EMF line in `log` (other lines, the JSON log's or plain text, are
/// skipped). Panics, naming the line and the rule, on a line that breaks the specification.
pub fn points(log: &str) -> Vec<Point> {
    let mut points = Vec::new();
    for line in log.lines() {
        let Ok(Value::Object(root)) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if !root.contains_key("_aws") {
            continue;
        }
        points.extend(read_line(&root).unwrap_or_else(|e| panic!("not EMF ({e}): {line}")));
    }
    points
}

fn read_line(root: &Map<String, Value>) -> Result<Vec<Point>, String> {
    let meta = root["_aws"].as_object().ok_or("_aws is not an object")?;
    match meta.get("Timestamp") {
        Some(Value::Number(n)) if n.is_u64() => {}
        _ => return Err("_aws.Timestamp is not a number of milliseconds".into()),
    }
    let directives = meta
        .get("CloudWatchMetrics")
        .and_then(Value::as_array)
        .ok_or("_aws.CloudWatchMetrics is not an array")?;
    let mut points = Vec::new();
    for directive in directives {
        let namespace = directive["Namespace"]
            .as_str()
            .filter(|n| !n.is_empty() && n.len() <= 1024)
            .ok_or("a directive without a Namespace")?;
        let sets = directive["Dimensions"]
            .as_array()
            .ok_or("a directive's Dimensions is not an array")?;
        let metrics = directive["Metrics"]
            .as_array()
            .filter(|m| m.len() <= 100)
            .ok_or("a directive's Metrics is not an array of at most 100")?;
        for definition in metrics {
            let name = definition["Name"]
                .as_str()
                .filter(|n| !n.is_empty() && n.len() <= 1024)
                .ok_or("a metric definition without a Name")?;
            let unit = match &definition["Unit"] {
                Value::Null => "None",
                Value::String(u) if UNITS.contains(&u.as_str()) => u,
                other => return Err(format!("{name}: unit {other} is not one of CloudWatch's")),
            };
            let values: Vec<f64> = match root.get(name) {
                Some(Value::Number(n)) => vec![n.as_f64().unwrap()],
                Some(Value::Array(a)) if a.len() <= 100 => a
                    .iter()
                    .map(|v| v.as_f64().ok_or(format!("{name}: a value is not a number")))
                    .collect::<Result<_, _>>()?,
                _ => return Err(format!("{name}: no numeric member on the root")),
            };
            for set in sets {
                let set = set
                    .as_array()
                    .filter(|s| s.len() <= 30)
                    .ok_or("a dimension set is not an array of at most 30 names")?;
                let mut dimensions = BTreeMap::new();
                for dimension in set {
                    let dimension = dimension.as_str().ok_or("a dimension name is not text")?;
                    let value = root
                        .get(dimension)
                        .and_then(Value::as_str)
                        .ok_or(format!("dimension {dimension}: no text member on the root"))?;
                    dimensions.insert(dimension.to_owned(), value.to_owned());
                }
                for value in &values {
                    points.push(Point {
                        namespace: namespace.to_owned(),
                        name: name.to_owned(),
                        unit: unit.to_owned(),
                        dimensions: dimensions.clone(),
                        value: *value,
                    });
                }
            }
        }
    }
    Ok(points)
}

/// Checks each point against the metrics the code declares (`catalog::metrics::DEFINITIONS`):
/// its namespace, a declared name and unit, and a declared dimension set.
pub fn assert_declared(points: &[Point], namespace: &str) {
    for point in points {
        assert_eq!(point.namespace, namespace, "{point:?}");
        let definition = catalog::metrics::DEFINITIONS
            .iter()
            .find(|d| d.name == point.name)
            .unwrap_or_else(|| panic!("an undeclared metric: {point:?}"));
        assert_eq!(point.unit, definition.unit.as_str(), "{point:?}");
        let names: Vec<&str> = point.dimensions.keys().map(String::as_str).collect();
        assert!(
            definition.dimension_sets.iter().any(|set| {
                let mut set = set.to_vec();
                set.sort_unstable();
                set == names
            }),
            "an undeclared dimension set: {point:?}"
        );
    }
}

/// Whether `points` hold one of `name` with these dimension values (none: the total).
pub fn has(points: &[Point], name: &str, dimensions: &[(&str, &str)]) -> bool {
    let wanted: BTreeMap<String, String> = dimensions
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    points
        .iter()
        .any(|p| p.name == name && p.dimensions == wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_gives_one_point_per_dimension_set_and_others_are_skipped() {
        let log = concat!(
            "plain text\n",
            r#"{"level":"INFO","fields":{"message":"hello"}}"#,
            "\n",
            r#"{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["Route"],[]],"Metrics":[{"Name":"UrlsIssued","Unit":"Count"}]}]},"Route":"data","UrlsIssued":1}"#,
            "\n"
        );
        let got = points(log);
        assert_eq!(got.len(), 2);
        assert!(has(&got, "UrlsIssued", &[("Route", "data")]));
        assert!(has(&got, "UrlsIssued", &[]));
        assert!(!has(&got, "UrlsIssued", &[("Route", "rows")]));
    }

    #[test]
    fn a_line_that_breaks_the_format_is_refused() {
        for (line, why) in [
            (r#"{"_aws":{"CloudWatchMetrics":[]}}"#, "Timestamp"),
            (
                r#"{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["Route"]],"Metrics":[{"Name":"M"}]}]},"M":1}"#,
                "dimension Route",
            ),
            (
                r#"{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[{"Name":"M","Unit":"Things"}]}]},"M":1}"#,
                "unit",
            ),
            (
                r#"{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[{"Name":"M"}]}]},"M":"one"}"#,
                "numeric",
            ),
        ] {
            let message = std::panic::catch_unwind(|| points(line))
                .expect_err(line)
                .downcast::<String>()
                .map(|s| *s)
                .unwrap_or_default();
            assert!(message.contains(why), "{line}: {message}");
        }
    }
}

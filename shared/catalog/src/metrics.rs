//! The functions' own CloudWatch metrics, written as lines in CloudWatch's embedded metric format
//! (EMF) on standard output: Lambda sends standard output to the function's log group, and
//! CloudWatch Logs turns each such line into metric data points, with no API call on the request
//! path (<https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html>).
//!
//! Every metric is one [`Metric`]; [`DEFINITIONS`] lists each name, unit and dimension sets,
//! which template.yaml's alarms and dashboard are checked against (tests/tests/api/metrics.rs).
//! Dimensions are low-cardinality by construction: a route (three values) or an error code (the
//! fixed set of [`crate::error::ApiError::code`]), never a dataset, key or account. Each metric
//! is also written without dimensions, the total that alarms watch.
//!
//! The namespace is `METRICS_NAMESPACE` (the stack sets `DatasetCatalog/<stack name>`), read
//! once; [`DEFAULT_NAMESPACE`] without it.

use std::io::Write;
use std::sync::OnceLock;

use serde_json::{json, Map, Value};

/// The namespace when `METRICS_NAMESPACE` is not set (the local stack, tests).
pub const DEFAULT_NAMESPACE: &str = "DatasetCatalog";

/// The route that issued a presigned URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlRoute {
    /// `GET /datasets/{slug}/data`
    Data,
    /// `GET /datasets/{slug}/download`
    Download,
    /// Delta Sharing's table query.
    Sharing,
}

impl UrlRoute {
    pub const ALL: [UrlRoute; 3] = [UrlRoute::Data, UrlRoute::Download, UrlRoute::Sharing];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Data => "data",
            Self::Download => "download",
            Self::Sharing => "sharing",
        }
    }

    /// The download log's name for the route.
    pub fn audit(self) -> crate::audit::Route {
        match self {
            Self::Data => crate::audit::Route::Data,
            Self::Download => crate::audit::Route::Download,
            Self::Sharing => crate::audit::Route::Sharing,
        }
    }
}

/// One data point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// A presigned URL handed out (a HEAD on the data route signs none).
    UrlIssued(UrlRoute),
    /// A request refused with a 4xx answer, by its error `code`.
    Refused(&'static str),
    /// A request that failed with a 5xx answer, by its error `code`.
    Failed(&'static str),
    /// The bytes the rows API read from S3 for one answer.
    RowsBytesRead(u64),
    /// A key's `last_used_at` could not be written (the request was answered all the same).
    KeyUseNotRecorded,
    /// The URL-signing credentials could not be fetched or renewed: no URL could be signed.
    SigningUnavailable,
    /// A listing found the catalog's filter index not built or its facet summary full: an
    /// operator should run `catalog-admin datasets reindex` (docs/operations.md).
    IndexIncomplete,
    /// The mailer set a notice aside after its sends kept failing (`catalog::notices`): an
    /// email about someone's access was not sent.
    NoticeFailed,
}

/// A CloudWatch unit, as EMF names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Count,
    Bytes,
}

impl Unit {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Count => "Count",
            Self::Bytes => "Bytes",
        }
    }
}

/// A metric's name, unit and the dimension sets it is written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Definition {
    pub name: &'static str,
    pub unit: Unit,
    /// Each set is one CloudWatch metric (one series per value combination); the empty set
    /// is the total.
    pub dimension_sets: &'static [&'static [&'static str]],
}

const URLS_ISSUED: Definition = Definition {
    name: "UrlsIssued",
    unit: Unit::Count,
    dimension_sets: &[&["Route"], &[]],
};
const REFUSALS: Definition = Definition {
    name: "Refusals",
    unit: Unit::Count,
    dimension_sets: &[&["Code"], &[]],
};
const SERVER_ERRORS: Definition = Definition {
    name: "ServerErrors",
    unit: Unit::Count,
    dimension_sets: &[&["Code"], &[]],
};
const ROWS_BYTES_READ: Definition = Definition {
    name: "RowsBytesRead",
    unit: Unit::Bytes,
    dimension_sets: &[&[]],
};
const KEY_USE_NOT_RECORDED: Definition = Definition {
    name: "KeyUseNotRecorded",
    unit: Unit::Count,
    dimension_sets: &[&[]],
};
const SIGNING_UNAVAILABLE: Definition = Definition {
    name: "SigningUnavailable",
    unit: Unit::Count,
    dimension_sets: &[&[]],
};
const INDEX_INCOMPLETE: Definition = Definition {
    name: "IndexIncomplete",
    unit: Unit::Count,
    dimension_sets: &[&[]],
};

const NOTICES_FAILED: Definition = Definition {
    name: "NoticesFailed",
    unit: Unit::Count,
    dimension_sets: &[&[]],
};

/// Every metric the functions write.
pub const DEFINITIONS: &[Definition] = &[
    URLS_ISSUED,
    REFUSALS,
    SERVER_ERRORS,
    ROWS_BYTES_READ,
    KEY_USE_NOT_RECORDED,
    SIGNING_UNAVAILABLE,
    INDEX_INCOMPLETE,
    NOTICES_FAILED,
];

impl Metric {
    pub fn definition(&self) -> &'static Definition {
        match self {
            Self::UrlIssued(_) => &URLS_ISSUED,
            Self::Refused(_) => &REFUSALS,
            Self::Failed(_) => &SERVER_ERRORS,
            Self::RowsBytesRead(_) => &ROWS_BYTES_READ,
            Self::KeyUseNotRecorded => &KEY_USE_NOT_RECORDED,
            Self::SigningUnavailable => &SIGNING_UNAVAILABLE,
            Self::IndexIncomplete => &INDEX_INCOMPLETE,
            Self::NoticeFailed => &NOTICES_FAILED,
        }
    }

    /// The values of the definition's dimensions.
    fn dimensions(&self) -> Vec<(&'static str, &'static str)> {
        match self {
            Self::UrlIssued(route) => vec![("Route", route.as_str())],
            Self::Refused(code) | Self::Failed(code) => vec![("Code", code)],
            _ => Vec::new(),
        }
    }

    fn value(&self) -> u64 {
        match self {
            Self::RowsBytesRead(bytes) => *bytes,
            _ => 1,
        }
    }

    /// The EMF document for this data point, one JSON object on one line.
    pub fn emf_line(&self, namespace: &str, timestamp_ms: i64) -> String {
        let definition = self.definition();
        let mut root = Map::new();
        root.insert(
            "_aws".into(),
            json!({
                "Timestamp": timestamp_ms,
                "CloudWatchMetrics": [{
                    "Namespace": namespace,
                    "Dimensions": definition.dimension_sets,
                    "Metrics": [{"Name": definition.name, "Unit": definition.unit.as_str()}],
                }],
            }),
        );
        for (name, value) in self.dimensions() {
            root.insert(name.into(), Value::from(value));
        }
        root.insert(definition.name.into(), Value::from(self.value()));
        Value::Object(root).to_string()
    }
}

/// The namespace metrics are written in, read from the environment once.
fn namespace() -> &'static str {
    static NAMESPACE: OnceLock<String> = OnceLock::new();
    NAMESPACE.get_or_init(|| {
        std::env::var("METRICS_NAMESPACE")
            .ok()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| DEFAULT_NAMESPACE.to_owned())
    })
}

/// Writes one data point: an EMF line on standard output, in one write (a line never
/// interleaves with the log's). Never fails the request: a closed standard output loses the
/// point, as it would lose a log line.
pub fn record(metric: Metric) {
    #[cfg(any(test, feature = "capture"))]
    if capture::push(metric) {
        return;
    }
    let mut line = metric.emf_line(namespace(), chrono::Utc::now().timestamp_millis());
    line.push('\n');
    let _ = std::io::stdout().lock().write_all(line.as_bytes());
}

/// For logic tests: the metrics a piece of code records on this thread, instead of writing them.
#[cfg(any(test, feature = "capture"))]
pub mod capture {
    use std::cell::RefCell;
    use std::future::Future;

    use super::Metric;

    thread_local! {
        static CAPTURED: RefCell<Option<Vec<Metric>>> = const { RefCell::new(None) };
    }

    /// Whether a capture on this thread took `metric`.
    pub(super) fn push(metric: Metric) -> bool {
        CAPTURED.with(|c| match c.borrow_mut().as_mut() {
            Some(captured) => {
                captured.push(metric);
                true
            }
            None => false,
        })
    }

    /// Runs `future` to completion, returning its output and the metrics it recorded. The
    /// future must run on this thread (a current-thread runtime, as `#[tokio::test]`'s).
    pub async fn metrics_of<F: Future>(future: F) -> (F::Output, Vec<Metric>) {
        CAPTURED.with(|c| *c.borrow_mut() = Some(Vec::new()));
        let output = future.await;
        let captured = CAPTURED.with(|c| c.borrow_mut().take()).unwrap_or_default();
        (output, captured)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(metric: Metric) -> Value {
        serde_json::from_str(&metric.emf_line("DatasetCatalog/test", 1_700_000_000_000)).unwrap()
    }

    #[test]
    fn a_url_is_counted_by_route_and_in_total() {
        let doc = parsed(Metric::UrlIssued(UrlRoute::Sharing));
        assert_eq!(
            doc,
            json!({
                "_aws": {
                    "Timestamp": 1_700_000_000_000_i64,
                    "CloudWatchMetrics": [{
                        "Namespace": "DatasetCatalog/test",
                        "Dimensions": [["Route"], []],
                        "Metrics": [{"Name": "UrlsIssued", "Unit": "Count"}],
                    }],
                },
                "Route": "sharing",
                "UrlsIssued": 1,
            })
        );
    }

    #[test]
    fn rows_bytes_are_a_bytes_value_without_dimensions() {
        let doc = parsed(Metric::RowsBytesRead(123_456));
        assert_eq!(doc["RowsBytesRead"], 123_456);
        assert_eq!(
            doc["_aws"]["CloudWatchMetrics"][0]["Metrics"][0]["Unit"],
            "Bytes"
        );
        assert_eq!(
            doc["_aws"]["CloudWatchMetrics"][0]["Dimensions"],
            json!([[]])
        );
    }

    #[test]
    fn every_dimension_a_metric_declares_has_its_value_on_the_line() {
        let samples = [
            Metric::UrlIssued(UrlRoute::Data),
            Metric::Refused("missing_key"),
            Metric::Failed("unavailable"),
            Metric::RowsBytesRead(1),
            Metric::KeyUseNotRecorded,
            Metric::SigningUnavailable,
            Metric::IndexIncomplete,
            Metric::NoticeFailed,
        ];
        let mut names: Vec<&str> = samples.iter().map(|m| m.definition().name).collect();
        names.dedup();
        assert_eq!(
            names,
            DEFINITIONS.iter().map(|d| d.name).collect::<Vec<_>>(),
            "one sample of each definition"
        );
        for metric in samples {
            let doc = parsed(metric);
            for set in metric.definition().dimension_sets {
                for dimension in *set {
                    assert!(doc[dimension].is_string(), "{metric:?}: {dimension}");
                }
            }
            assert!(doc[metric.definition().name].is_u64(), "{metric:?}");
        }
    }

    #[tokio::test]
    async fn a_capture_takes_what_the_code_records_on_its_thread() {
        let ((), got) = capture::metrics_of(async {
            record(Metric::KeyUseNotRecorded);
            record(Metric::Refused("invalid_key"));
        })
        .await;
        assert_eq!(
            got,
            [Metric::KeyUseNotRecorded, Metric::Refused("invalid_key")]
        );
    }
}

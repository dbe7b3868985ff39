//! What the audit function receives: a batch of the functions' log events, delivered by a
//! CloudWatch Logs subscription filter (`{"awslogs": {"data": <base64 of gzip of JSON>}}`), or
//! the daily schedule (an EventBridge scheduled event). [`batch`] builds the former, for the
//! local pipeline and the tests.

use std::io::{Read, Write};

use base64::Engine;
use catalog::audit::Download;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One log event of a subscription batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogEvent {
    /// CloudWatch Logs' id of the event (unique): a redelivered event keeps it.
    pub id: String,
    /// Milliseconds since the epoch.
    pub timestamp: i64,
    /// The line the function wrote.
    pub message: String,
}

/// What the audit function is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditEvent {
    /// Record the downloads among these log events.
    Logs(Vec<LogEvent>),
    /// Count the last 30 days' downloads (the daily schedule).
    Daily,
}

#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct Batch {
    message_type: String,
    #[serde(default)]
    log_group: String,
    #[serde(default)]
    log_events: Vec<LogEvent>,
}

/// Reads the function's event: a subscription batch (its control message, sent once when the
/// filter is created, holds no events) or a scheduled event. Anything else is refused, saying
/// what it is not.
pub fn parse(event: &Value) -> Result<AuditEvent, String> {
    if let Some(data) = event.pointer("/awslogs/data").and_then(Value::as_str) {
        let zipped = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| format!("awslogs.data is not base64: {e}"))?;
        let mut json = String::new();
        flate2::read::GzDecoder::new(zipped.as_slice())
            .read_to_string(&mut json)
            .map_err(|e| format!("awslogs.data is not gzip of text: {e}"))?;
        let batch: Batch = serde_json::from_str(&json)
            .map_err(|e| format!("awslogs.data is not a subscription batch: {e}"))?;
        return Ok(AuditEvent::Logs(match batch.message_type.as_str() {
            "DATA_MESSAGE" => batch.log_events,
            _ => Vec::new(),
        }));
    }
    if event.get("detail-type").and_then(Value::as_str) == Some("Scheduled Event") {
        return Ok(AuditEvent::Daily);
    }
    Err("neither a CloudWatch Logs subscription batch nor a scheduled event".into())
}

/// The downloads among `events`, each with its event's id.
pub fn downloads(events: &[LogEvent]) -> Vec<(String, Download)> {
    events
        .iter()
        .filter_map(|e| {
            Download::from_log_event(&e.message, e.timestamp).map(|d| (e.id.clone(), d))
        })
        .collect()
}

/// A subscription batch of `events` from `log_group`, as CloudWatch Logs delivers it.
pub fn batch(log_group: &str, events: &[LogEvent]) -> Value {
    let batch = Batch {
        message_type: "DATA_MESSAGE".into(),
        log_group: log_group.into(),
        log_events: events.to_vec(),
    };
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    // Writing to a Vec cannot fail.
    let _ = gz.write_all(serde_json::to_string(&batch).unwrap_or_default().as_bytes());
    let zipped = gz.finish().unwrap_or_default();
    serde_json::json!({
        "awslogs": {"data": base64::engine::general_purpose::STANDARD.encode(zipped)}
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_reads_back_and_only_download_events_are_downloads() {
        let download = r#"{"level":"INFO","fields":{"message":"served rows","audit":"download","slug":"d","version":1,"key_id":"-","account":"-","route":"rows"}}"#;
        let events = vec![
            LogEvent {
                id: "1".into(),
                timestamp: 1_795_692_687_847,
                message: download.into(),
            },
            LogEvent {
                id: "2".into(),
                timestamp: 1_795_692_687_900,
                message: r#"{"level":"INFO","fields":{"message":"request"}}"#.into(),
            },
        ];
        let AuditEvent::Logs(read) = parse(&batch("/aws/lambda/x", &events)).unwrap() else {
            panic!("not a batch")
        };
        assert_eq!(read, events);
        let found = downloads(&read);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].0, "1");
        assert_eq!(found[0].1.slug, "d");
    }

    #[test]
    fn the_schedule_control_messages_and_strangers_are_told_apart() {
        let scheduled = serde_json::json!({"source": "aws.events", "detail-type": "Scheduled Event", "detail": {}});
        assert_eq!(parse(&scheduled), Ok(AuditEvent::Daily));
        let control = {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            gz.write_all(br#"{"messageType":"CONTROL_MESSAGE","logEvents":[]}"#)
                .unwrap();
            let data = base64::engine::general_purpose::STANDARD.encode(gz.finish().unwrap());
            serde_json::json!({"awslogs": {"data": data}})
        };
        assert_eq!(parse(&control), Ok(AuditEvent::Logs(vec![])));
        for bad in [
            serde_json::json!({"awslogs": {"data": "%%%"}}),
            serde_json::json!({"awslogs": {"data": "aGVsbG8="}}),
            serde_json::json!({"hello": 1}),
        ] {
            assert!(parse(&bad).is_err(), "{bad}");
        }
    }
}

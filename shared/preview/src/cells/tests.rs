use super::*;
use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::{
    BinaryArray, Decimal128Array, Float64Array, StringArray, TimestampMillisecondArray,
};
use serde_json::json;
use std::sync::Arc;

/// Each cell as serde_json's value (for `json!` comparisons), and its flag.
fn show(array: &dyn Array) -> Vec<(serde_json::Value, bool)> {
    (0..array.len())
        .map(|i| {
            let (v, cut) = cell(array, i, &Limits::default());
            (serde_json::from_str(&v.to_json()).unwrap(), cut)
        })
        .collect()
}

#[test]
fn struct_fields_and_map_entries_keep_their_order() {
    let v = Value::Object(vec![
        ("z".into(), Value::from(1)),
        ("a".into(), Value::Null),
    ]);
    assert_eq!(v.to_json(), r#"{"z":1,"a":null}"#);
}

#[test]
fn timestamps_carry_their_zone() {
    let utc = TimestampMillisecondArray::from(vec![1_700_000_000_123]).with_timezone("UTC");
    assert_eq!(show(&utc)[0].0, json!("2023-11-14T22:13:20.123Z"));
    let paris =
        TimestampMillisecondArray::from(vec![1_700_000_000_000]).with_timezone("Europe/Paris");
    assert_eq!(show(&paris)[0].0, json!("2023-11-14T23:13:20+01:00"));
    let naive = TimestampMillisecondArray::from(vec![1_700_000_000_000]);
    assert_eq!(show(&naive)[0].0, json!("2023-11-14T22:13:20"));
}

#[test]
fn decimals_are_exact_strings_and_floats_json_cannot_hold_are_named() {
    let d = Decimal128Array::from(vec![123450, -5])
        .with_precision_and_scale(10, 2)
        .unwrap();
    assert_eq!(show(&d)[0].0, json!("1234.50"));
    assert_eq!(show(&d)[1].0, json!("-0.05"));
    let f = Float64Array::from(vec![f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.5]);
    let shown: Vec<serde_json::Value> = show(&f).into_iter().map(|c| c.0).collect();
    assert_eq!(
        shown,
        [
            json!("NaN"),
            json!("Infinity"),
            json!("-Infinity"),
            json!(0.5)
        ]
    );
}

#[test]
fn long_strings_and_binary_are_cut_and_flagged() {
    let long = "é".repeat(1_500);
    let s = StringArray::from(vec![Some(long.as_str()), Some("short"), None]);
    let shown = show(&s);
    assert_eq!(shown[0].0.as_str().unwrap().chars().count(), 1_000);
    assert!(shown[0].1);
    assert_eq!(shown[1], (json!("short"), false));
    assert_eq!(shown[2], (serde_json::Value::Null, false));
    let bytes = vec![7u8; 100];
    let b = BinaryArray::from(vec![bytes.as_slice(), b"ab".as_slice()]);
    let shown = show(&b);
    assert_eq!(
        shown[0],
        (
            json!(base64::engine::general_purpose::STANDARD.encode(&bytes[..64])),
            true
        )
    );
    assert_eq!(shown[1], (json!("YWI="), false));
}

#[test]
fn nested_values_are_json_and_big_ones_are_cut() {
    let mut builder = ListBuilder::new(StringBuilder::new());
    builder.values().append_value("a");
    builder.values().append_null();
    builder.append(true);
    for n in 0..150 {
        builder.values().append_value(format!("v{n}"));
    }
    builder.append(true);
    let list = Arc::new(builder.finish()) as ArrayRef;
    let shown = show(list.as_ref());
    assert_eq!(shown[0], (json!(["a", null]), false));
    assert_eq!(shown[1].0.as_array().unwrap().len(), 100);
    assert!(shown[1].1);
}

#[test]
fn durations_read_as_iso_8601() {
    assert_eq!(
        duration(90, TimeUnit::Second),
        Value::String("PT90S".into())
    );
    assert_eq!(
        duration(250, TimeUnit::Millisecond),
        Value::String("PT0.25S".into())
    );
    assert_eq!(
        duration(-3_000_000, TimeUnit::Microsecond),
        Value::String("-PT3S".into())
    );
}

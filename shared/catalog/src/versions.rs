//! A dataset's versions as its page shows them to the organisation's members: the history, and
//! what changed between two versions (rows, columns added or removed, types changed), read from
//! each version's stored Column objects (docs/organisations.md).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::records::ActiveVersion;

/// A column as the history shows it: its name and type (`dtype`, as the metadata's Column).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ColumnType {
    pub name: String,
    pub dtype: String,
}

/// One version in a dataset's history.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VersionSummary {
    pub version: u64,
    #[serde(serialize_with = "crate::time::rfc3339")]
    pub published_at: DateTime<Utc>,
    pub row_count: u64,
    pub size: u64,
    pub sha256: String,
    /// Whether it is the version served.
    pub active: bool,
    pub columns: Vec<ColumnType>,
}

impl VersionSummary {
    /// A stored version and its Column objects (as stored JSON text).
    pub fn of(version: &ActiveVersion, schema: &RawValue, active: bool) -> Result<Self, String> {
        let columns: Vec<ColumnType> = serde_json::from_str::<Vec<Named>>(schema.get())
            .map_err(|e| format!("the schema of version {}: {e}", version.version))?
            .into_iter()
            .map(|c| ColumnType {
                name: c.name,
                dtype: c.dtype,
            })
            .collect();
        Ok(Self {
            version: version.version,
            published_at: version.published_at,
            row_count: version.row_count,
            size: version.size,
            sha256: version.sha256.clone(),
            active,
            columns,
        })
    }
}

/// What a Column object holds that the history shows (the rest is ignored).
#[derive(Deserialize)]
struct Named {
    name: String,
    dtype: String,
}

/// A column whose type changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TypeChange {
    pub name: String,
    pub from: String,
    pub to: String,
}

/// What changed from one version to another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VersionDiff {
    pub from: u64,
    pub to: u64,
    pub rows_from: u64,
    pub rows_to: u64,
    /// `rows_to - rows_from`.
    pub rows_change: i128,
    /// In the newer's order.
    pub columns_added: Vec<ColumnType>,
    /// In the older's order.
    pub columns_removed: Vec<ColumnType>,
    /// In the newer's order.
    pub types_changed: Vec<TypeChange>,
}

/// What changed from `from` to `to` (either may be the older): columns are matched by name.
pub fn diff(from: &VersionSummary, to: &VersionSummary) -> VersionDiff {
    let find = |list: &[ColumnType], name: &str| list.iter().find(|c| c.name == name).cloned();
    VersionDiff {
        from: from.version,
        to: to.version,
        rows_from: from.row_count,
        rows_to: to.row_count,
        rows_change: i128::from(to.row_count) - i128::from(from.row_count),
        columns_added: to
            .columns
            .iter()
            .filter(|c| find(&from.columns, &c.name).is_none())
            .cloned()
            .collect(),
        columns_removed: from
            .columns
            .iter()
            .filter(|c| find(&to.columns, &c.name).is_none())
            .cloned()
            .collect(),
        types_changed: to
            .columns
            .iter()
            .filter_map(|c| {
                let before = find(&from.columns, &c.name)?;
                (before.dtype != c.dtype).then(|| TypeChange {
                    name: c.name.clone(),
                    from: before.dtype,
                    to: c.dtype.clone(),
                })
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(n: u64, rows: u64, columns: &[(&str, &str)]) -> VersionSummary {
        VersionSummary {
            version: n,
            published_at: Utc::now(),
            row_count: rows,
            size: 1,
            sha256: String::new(),
            active: false,
            columns: columns
                .iter()
                .map(|(name, dtype)| ColumnType {
                    name: (*name).into(),
                    dtype: (*dtype).into(),
                })
                .collect(),
        }
    }

    #[test]
    fn a_diff_names_rows_columns_added_removed_and_types_changed() {
        let one = version(
            1,
            100,
            &[("id", "int64"), ("name", "string"), ("level", "int32")],
        );
        let two = version(
            2,
            90,
            &[("id", "int64"), ("level", "double"), ("site", "string")],
        );
        let d = diff(&one, &two);
        assert_eq!((d.rows_from, d.rows_to, d.rows_change), (100, 90, -10));
        assert_eq!(
            d.columns_added,
            vec![ColumnType {
                name: "site".into(),
                dtype: "string".into()
            }]
        );
        assert_eq!(
            d.columns_removed
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>(),
            ["name"]
        );
        assert_eq!(
            d.types_changed,
            vec![TypeChange {
                name: "level".into(),
                from: "int32".into(),
                to: "double".into()
            }]
        );
        let back = diff(&two, &one);
        assert_eq!(back.rows_change, 10);
        assert_eq!(back.columns_added[0].name, "name");
        assert_eq!(back.columns_removed[0].name, "site");
        assert_eq!(back.types_changed[0].from, "double");
    }

    #[test]
    fn a_version_against_itself_changes_nothing() {
        let one = version(1, 5, &[("id", "int64")]);
        let d = diff(&one, &one);
        assert_eq!(d.rows_change, 0);
        assert!(d.columns_added.is_empty() && d.columns_removed.is_empty());
        assert!(d.types_changed.is_empty());
    }

    #[test]
    fn the_history_reads_each_columns_name_and_type_from_the_stored_schema() {
        let stored = ActiveVersion {
            version: 3,
            s3_key: "k".into(),
            size: 10,
            row_count: 2,
            columns: vec!["id".into()],
            sha256: "ab".into(),
            published_at: Utc::now(),
            files: None,
            ingested: None,
        };
        let schema = RawValue::from_string(
            r#"[{"name":"id","dtype":"int64","null_count":0,"mean":1.5}]"#.into(),
        )
        .unwrap();
        let summary = VersionSummary::of(&stored, &schema, true).unwrap();
        assert_eq!(
            summary.columns,
            vec![ColumnType {
                name: "id".into(),
                dtype: "int64".into()
            }]
        );
        assert!(summary.active);
        let bad = RawValue::from_string(r#"{"not":"a list"}"#.into()).unwrap();
        assert!(VersionSummary::of(&stored, &bad, true).is_err());
    }
}

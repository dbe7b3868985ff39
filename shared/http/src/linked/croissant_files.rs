//! The Croissant description of a version of many files (issue 38): one `cr:FileSet` for its
//! Parquet files, the splits as Croissant's split record set, and the Hive partition columns as
//! fields read from each file's path. Built from the version's summary alone (no manifest read).
//!
//! **Where the files are.** `mlcroissant` 1.1.1 reads the columns of a `cr:FileSet`'s files only
//! from a directory on disk (a FileSet without `containedIn`: the directory holding the
//! document) or from a git clone of GitHub, GitLab or Hugging Face; a FileSet contained in plain
//! (non-archive) FileObjects yields file names, not rows, and a downloaded FileObject is stored
//! under a hash of its URL, so its path (the split, the partitions) is lost. Presigned URLs
//! expire within minutes and must not appear in this public, cacheable document. So the
//! FileSet describes a local copy: the document saved in a directory, each file under it at
//! `<split>/<path as published>` (`files/<path>` when the version has no splits), as the data
//! endpoint's listing (`GET /datasets/{slug}/data?split=NAME`) gives each file's split, path and
//! a presigned URL. `includes` holds one glob per split (`train/*`), or `files/*`.
//!
//! **Splits.** A record set `<slug>_splits` of data type `cr:Split`, keyed by its `name` field,
//! with one record per split; the rows' record set has a `split` field (data type `sc:Text` and
//! `cr:Split`) read from each file's relative path by the regex `^([^/]+)/.*$` and referencing
//! the split names, so `mlcroissant` filters a split (`records(slug, filters={"<slug>/split":
//! "train"})`) by rewriting `includes` and reads only that split's files.
//!
//! **Partition columns** are fields of the rows' record set whose value is the directory
//! segment `key=value` of the file's path (`extract: {fileProperty: filepath}` and the regex
//! `^.*/key=([^/]*)/.*$`), typed as the manifest types them (`int64` as `cr:Int64`, `date` as
//! `sc:Date`, `string` as `sc:Text`). The value is the directory name as written (a
//! percent-encoded character stays encoded); a partition column holding Hive's null
//! (`__HIVE_DEFAULT_PARTITION__`) is described as `sc:Text`, that name being its text.

use serde_json::{json, Value};

use catalog::files::{PartitionColumn, PartitionType, Summary};
use catalog::slug::Slug;

use super::{escape_segment, Links};

/// The directory of a version without splits in the local layout.
pub const NO_SPLIT_DIR: &str = "files";

/// The FileSet's `@id`: `<slug>_files` (no slug holds `_`, so it names nothing else).
pub fn file_set_id(slug: &Slug) -> String {
    format!("{slug}_files")
}

/// The split record set's `@id`: `<slug>_splits`.
pub fn splits_id(slug: &Slug) -> String {
    format!("{slug}_splits")
}

/// The FileSet of the version's files.
pub fn file_set(slug: &Slug, summary: &Summary, links: &Links) -> Value {
    let includes: Vec<String> = match summary.splits.is_empty() {
        true => vec![format!("{NO_SPLIT_DIR}/*")],
        false => summary
            .splits
            .iter()
            .map(|s| format!("{}/*", s.name.as_str()))
            .collect(),
    };
    let layout = match summary.splits.is_empty() {
        true => format!("{NO_SPLIT_DIR}/<path>"),
        false => "<split>/<path>".to_owned(),
    };
    json!({
        "@type": "cr:FileSet",
        "@id": file_set_id(slug),
        "name": file_set_id(slug),
        "description": format!(
            "The version's {} Parquet files ({} B), paths as published. GET {}/data?split=NAME lists each file's split, path and a short-lived signed URL (a read key is needed outside a keyless window); save this document in a directory and each file under it at {layout} to read the records with mlcroissant.",
            summary.files,
            summary.bytes,
            links.dataset(slug),
        ),
        "encodingFormat": "application/x-parquet",
        "includes": includes,
    })
}

/// The source of a field read from column `name` of the FileSet's files.
pub fn column_source(slug: &Slug, name: &str) -> Value {
    json!({"fileSet": {"@id": file_set_id(slug)}, "extract": {"column": name}})
}

/// The field of partition column `column`, in record set `record_set`; `nulls`: whether a file
/// holds Hive's null for it.
pub fn partition_field(
    record_set: &str,
    slug: &Slug,
    column: &PartitionColumn,
    nulls: bool,
    statistics: Value,
) -> Value {
    let data_type = match (column.kind, nulls) {
        (_, true) | (PartitionType::String, _) => "sc:Text",
        (PartitionType::Int64, false) => "cr:Int64",
        (PartitionType::Date, false) => "sc:Date",
    };
    json!({
        "@type": "cr:Field",
        "@id": format!("{record_set}/{}", escape_segment(&column.name)),
        "name": column.name,
        "dataType": data_type,
        "source": {
            "fileSet": {"@id": file_set_id(slug)},
            "extract": {"fileProperty": "filepath"},
            "transform": {"regex": format!("^.*/{}=([^/]*)/.*$", regex_escape(&column.name))},
        },
        "statistics": statistics,
    })
}

/// The `split` field of the rows' record set, with `@id` `id`.
pub fn split_field(slug: &Slug, id: String) -> Value {
    json!({
        "@type": "cr:Field",
        "@id": id,
        "name": "split",
        "description": "The split the record's file belongs to.",
        "dataType": ["sc:Text", "cr:Split"],
        "source": {
            "fileSet": {"@id": file_set_id(slug)},
            "extract": {"fileProperty": "fullpath"},
            "transform": {"regex": "^([^/]+)/.*$"},
        },
        "references": {"field": {"@id": format!("{}/name", splits_id(slug))}},
    })
}

/// The split record set: one record per split, with its name.
pub fn splits_record_set(slug: &Slug, summary: &Summary) -> Value {
    let id = splits_id(slug);
    let name_id = format!("{id}/name");
    let data: Vec<Value> = summary
        .splits
        .iter()
        .map(|s| json!({ name_id.clone(): s.name.as_str() }))
        .collect();
    json!({
        "@type": "cr:RecordSet",
        "@id": id,
        "name": id,
        "description": "The version's splits: each file belongs to one.",
        "dataType": "cr:Split",
        "key": {"@id": name_id},
        "field": [{"@type": "cr:Field", "@id": name_id, "name": "name", "dataType": "sc:Text"}],
        "data": data,
    })
}

/// Whether some file holds Hive's null for partition column `index`.
pub fn partition_has_nulls(summary: &Summary, index: usize) -> bool {
    summary
        .chunks
        .iter()
        .any(|c| c.partitions.get(index).is_some_and(|r| r.nulls))
}

/// `text` with every character a regular expression gives a meaning escaped.
fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if "\\.^$|?*+()[]{}-/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_keys_are_escaped_in_their_regex() {
        assert_eq!(regex_escape("a.b(c)"), "a\\.b\\(c\\)");
        assert_eq!(regex_escape("year"), "year");
    }
}

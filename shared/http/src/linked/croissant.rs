//! A dataset as MLCommons Croissant 1.1 JSON-LD (`GET /datasets/{slug}/croissant`), the
//! description Hugging Face and Kaggle serve, which `mlcroissant` validates and loads.
//!
//! - The dataset: name, description, license, creator (the organisation `source` names),
//!   source (`isBasedOn`), keywords, version and dates, and how to cite it.
//! - One `cr:FileObject`: the active version's Parquet file, with its SHA-256 and size. Its
//!   `contentUrl` is the download route of that version, which redirects to a presigned URL
//!   after the same rule as the data endpoint ([`catalog::access::authorize`]).
//! - One `cr:RecordSet` whose fields are the file's columns, each typed from its stored
//!   `dtype` ([`field_type`]), and carrying that column's statistics in the `statistics`
//!   extension property (a JSON literal: the Column object of the metadata endpoint).
//!
//! Columns Croissant cannot describe so that `mlcroissant` reads them (maps, durations, lists of
//! anything but scalars, structs of anything but scalars) are left out of the record set and
//! named in its `omittedColumns` extension property; the file keeps them.

use serde_json::{json, Map, Value};

use super::croissant_files as files;
use super::{escape_segment, license_iri, source_url, Links};
use catalog::records::{ActiveVersion, DatasetRecord};

/// The extension terms' namespace. The project has no domain of its own: a URN keeps the
/// terms stable across deployments.
pub const EXTENSION: &str = "urn:dataset-catalog:croissant:";

/// The version of Croissant the documents conform to.
pub const CONFORMS_TO: &str = "http://mlcommons.org/croissant/1.1";

/// Croissant 1.1's `@context` (as `mlcroissant` writes it), with the two extension terms.
fn context() -> Value {
    let mut context = json!({
        "@language": "en",
        "@vocab": "https://schema.org/",
        "citeAs": "cr:citeAs",
        "column": "cr:column",
        "conformsTo": "dct:conformsTo",
        "cr": "http://mlcommons.org/croissant/",
        "rai": "http://mlcommons.org/croissant/RAI/",
        "data": {"@id": "cr:data", "@type": "@json"},
        "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
        "dct": "http://purl.org/dc/terms/",
        "description": {"@container": "@language"},
        "equivalentProperty": "cr:equivalentProperty",
        "examples": {"@id": "cr:examples", "@type": "@json"},
        "extract": "cr:extract",
        "field": "cr:field",
        "fileProperty": "cr:fileProperty",
        "fileObject": "cr:fileObject",
        "fileSet": "cr:fileSet",
        "format": "cr:format",
        "includes": "cr:includes",
        "isArray": "cr:isArray",
        "isLiveDataset": "cr:isLiveDataset",
        "jsonPath": "cr:jsonPath",
        "key": "cr:key",
        "md5": "cr:md5",
        "name": {"@container": "@language"},
        "parentField": "cr:parentField",
        "path": "cr:path",
        "recordSet": "cr:recordSet",
        "references": "cr:references",
        "regex": "cr:regex",
        "repeated": "cr:repeated",
        "replace": "cr:replace",
        "samplingRate": "cr:samplingRate",
        "sc": "https://schema.org/",
        "separator": "cr:separator",
        "source": "cr:source",
        "subField": "cr:subField",
        "transform": "cr:transform",
    });
    for term in ["statistics", "omittedColumns"] {
        context[term] = json!({"@id": format!("{EXTENSION}{term}"), "@type": "@json"});
    }
    context
}

/// How a column is described in the record set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldType {
    /// One value of this Croissant data type.
    Scalar(&'static str),
    /// A list of values of this type (`isArray`).
    List(&'static str),
    /// A struct of scalar fields, in order: (name, type).
    Struct(Vec<(String, &'static str)>),
}

/// The Croissant type of a column whose pyarrow type name is `dtype`, or `None` when it has
/// none that `mlcroissant` reads.
///
/// | dtype | dataType |
/// |---|---|
/// | `bool` | `sc:Boolean` |
/// | `int8` … `int64`, `uint8` … `uint64` | `cr:Int8` … `cr:Int64`, `cr:UInt8` … `cr:UInt64` |
/// | `halffloat`, `float`, `double` | `cr:Float16`, `cr:Float32`, `cr:Float64` |
/// | `decimal128(p, s)`, `decimal256(p, s)` | `sc:Float` |
/// | `string`, `large_string`, binary types | `sc:Text` |
/// | `date32[day]`, `date64[ms]` | `sc:Date` |
/// | `timestamp[…]` | `sc:DateTime` |
/// | `time32[…]`, `time64[…]` | `sc:Time` |
/// | `dictionary<values=T, …>` | T's |
/// | `list<…: T>` (and large, fixed-size) of a scalar T | T's, with `isArray` |
/// | `struct<a: T, …>` of scalars | one `subField` per field |
/// | anything else (maps, durations, nested lists or structs, `null`) | none: omitted |
pub fn field_type(dtype: &str) -> Option<FieldType> {
    let dtype = dtype.trim();
    if let Some(scalar) = scalar_type(dtype) {
        return Some(FieldType::Scalar(scalar));
    }
    if let Some(inner) = ["list<", "large_list<", "fixed_size_list<"]
        .iter()
        .find_map(|open| dtype.strip_prefix(open))
    {
        let inner = inner
            .strip_suffix('>')
            .or_else(|| inner.rsplit_once(">[").map(|(inner, _)| inner))?;
        let (_, element) = inner.split_once(": ")?;
        return scalar_type(element.trim_end_matches(" not null")).map(FieldType::List);
    }
    let body = dtype.strip_prefix("struct<")?.strip_suffix('>')?;
    let mut fields = Vec::new();
    for part in top_level_parts(body) {
        let (name, ty) = part.rsplit_once(": ")?;
        fields.push((
            name.to_owned(),
            scalar_type(ty.trim_end_matches(" not null"))?,
        ));
    }
    (!fields.is_empty()).then_some(FieldType::Struct(fields))
}

fn scalar_type(dtype: &str) -> Option<&'static str> {
    if let Some(rest) = dtype.strip_prefix("dictionary<values=") {
        let values = rest.split(", indices=").next()?;
        return scalar_type(values);
    }
    let name = dtype.split(['[', '(']).next().unwrap_or(dtype);
    Some(match name {
        "bool" => "sc:Boolean",
        "int8" => "cr:Int8",
        "int16" => "cr:Int16",
        "int32" => "cr:Int32",
        "int64" => "cr:Int64",
        "uint8" => "cr:UInt8",
        "uint16" => "cr:UInt16",
        "uint32" => "cr:UInt32",
        "uint64" => "cr:UInt64",
        "halffloat" => "cr:Float16",
        "float" => "cr:Float32",
        "double" => "cr:Float64",
        "decimal128" | "decimal256" | "decimal32" | "decimal64" => "sc:Float",
        "string" | "large_string" | "utf8" | "large_utf8" | "string_view" | "binary"
        | "large_binary" | "binary_view" | "fixed_size_binary" => "sc:Text",
        "date32" | "date64" => "sc:Date",
        "timestamp" => "sc:DateTime",
        "time32" | "time64" => "sc:Time",
        _ => return None,
    })
}

/// `a: int64, b: list<item: string>` split at its top-level commas.
fn top_level_parts(body: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in body.char_indices() {
        match c {
            '<' | '[' | '(' => depth += 1,
            '>' | ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(body[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(body[start..].trim());
    parts
}

/// The Croissant document of `record`'s active version `active`.
pub fn document(record: &DatasetRecord, active: &ActiveVersion, links: &Links) -> Value {
    let slug = &record.slug;
    let card = &record.meta.card;
    let file_id = crate::routes::download_name(slug, active.version);
    let columns: Vec<Map<String, Value>> =
        serde_json::from_str(record.schema.get()).unwrap_or_default();
    let files = active.files.as_deref();
    let source = |name: &str| match files {
        None => json!({"fileObject": {"@id": file_id}, "extract": {"column": name}}),
        Some(_) => files::column_source(slug, name),
    };
    let mut fields = Vec::new();
    let mut omitted = Vec::new();
    for column in &columns {
        let name = column
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let dtype = column
            .get("dtype")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let partition = files.and_then(|s| {
            let i = s.partitions.iter().position(|p| p.name == name)?;
            Some((&s.partitions[i], files::partition_has_nulls(s, i)))
        });
        if let Some((partition, nulls)) = partition {
            let statistics = Value::Object(column.clone());
            fields.push(files::partition_field(
                slug.as_str(),
                slug,
                partition,
                nulls,
                statistics,
            ));
            continue;
        }
        match field_type(dtype) {
            Some(ty) => fields.push(field(slug.as_str(), &source, name, &ty, column)),
            None => omitted.push(json!({"name": name, "dtype": dtype})),
        }
    }
    if files.is_some_and(|s| !s.splits.is_empty()) {
        let taken = |id: &str| fields.iter().any(|f| f["@id"] == id);
        let mut id = format!("{slug}/split");
        while taken(&id) {
            id.push('_');
        }
        fields.push(files::split_field(slug, id));
    }
    let mut record_set = json!({
        "@type": "cr:RecordSet",
        "@id": slug.as_str(),
        "name": slug.as_str(),
        "description": format!("The rows of {}, one record per row, version {}.", card.name, active.version),
        "field": fields,
    });
    if !omitted.is_empty() {
        record_set["omittedColumns"] = Value::Array(omitted);
    }
    let mut keywords = vec![card.category.clone()];
    keywords.extend(card.tags.iter().cloned());
    let source = record.meta.source.trim();
    let creator = match source_url(source) {
        Some(url) => json!({
            "@type": "Organization",
            "name": url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_owned)).unwrap_or_else(|| url.to_owned()),
            "url": url,
        }),
        None => json!({"@type": "Organization", "name": source}),
    };
    let based_on = match source_url(source) {
        Some(url) => json!(url),
        None => json!({"@type": "CreativeWork", "name": source}),
    };
    let distribution = match files {
        Some(summary) => files::file_set(slug, summary, links),
        None => json!({
            "@type": "cr:FileObject",
            "@id": file_id,
            "name": file_id,
            "description": "The dataset's Parquet file. contentUrl redirects to a short-lived signed URL; outside a keyless window it needs a read key: send it as the password of HTTP Basic authentication (mlcroissant: CROISSANT_BASIC_AUTH_USERNAME=key, CROISSANT_BASIC_AUTH_PASSWORD=<key>).",
            "contentUrl": links.download(slug, active.version),
            "encodingFormat": "application/x-parquet",
            "contentSize": format!("{} B", active.size),
            "sha256": active.sha256,
        }),
    };
    let mut record_sets = vec![record_set];
    if let Some(summary) = files.filter(|s| !s.splits.is_empty()) {
        record_sets.insert(0, files::splits_record_set(slug, summary));
    }
    json!({
        "@context": context(),
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": card.name,
        "alternateName": slug.as_str(),
        "description": card.description.clone().unwrap_or_else(|| card.name.clone()),
        "license": license_iri(&card.license).unwrap_or_else(|| card.license.clone()),
        "url": links.landing_page(slug),
        "identifier": record.id.to_string(),
        "creator": creator,
        "isBasedOn": based_on,
        "keywords": keywords,
        "version": format!("{}.0.0", active.version),
        "datePublished": catalog::time::format_time(&record.created_at),
        "dateModified": catalog::time::format_time(&active.published_at.max(record.updated_at)),
        "citeAs": format!(
            "{}, version {}. {}",
            card.name,
            active.version,
            links.landing_page(slug)
        ),
        "isAccessibleForFree": true,
        "distribution": [distribution],
        "recordSet": record_sets,
    })
}

fn field(
    record_set: &str,
    column_source: &dyn Fn(&str) -> Value,
    name: &str,
    ty: &FieldType,
    statistics: &Map<String, Value>,
) -> Value {
    let id = format!("{record_set}/{}", escape_segment(name));
    let source = |path: Option<&str>| {
        let mut source = column_source(name);
        if let Some(path) = path {
            source["transform"] = json!({"jsonPath": path});
        }
        source
    };
    let mut field = json!({
        "@type": "cr:Field",
        "@id": id,
        "name": name,
        "source": source(None),
        "statistics": Value::Object(statistics.clone()),
    });
    match ty {
        FieldType::Scalar(data_type) => field["dataType"] = json!(data_type),
        FieldType::List(data_type) => {
            field["dataType"] = json!(data_type);
            field["isArray"] = json!(true);
        }
        FieldType::Struct(members) => {
            let sub: Vec<Value> = members
                .iter()
                .map(|(member, data_type)| {
                    json!({
                        "@type": "cr:Field",
                        "@id": format!("{id}/{}", escape_segment(member)),
                        "name": member,
                        "dataType": data_type,
                        "source": source(Some(member)),
                    })
                })
                .collect();
            field["subField"] = Value::Array(sub);
        }
    }
    field
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_types_map_to_croissant_types() {
        let scalar = |d| field_type(d);
        assert_eq!(scalar("int64"), Some(FieldType::Scalar("cr:Int64")));
        assert_eq!(scalar("uint8"), Some(FieldType::Scalar("cr:UInt8")));
        assert_eq!(scalar("double"), Some(FieldType::Scalar("cr:Float64")));
        assert_eq!(scalar("bool"), Some(FieldType::Scalar("sc:Boolean")));
        assert_eq!(
            scalar("decimal128(10, 2)"),
            Some(FieldType::Scalar("sc:Float"))
        );
        assert_eq!(
            scalar("timestamp[us, tz=UTC]"),
            Some(FieldType::Scalar("sc:DateTime"))
        );
        assert_eq!(
            scalar("timestamp[ms]"),
            Some(FieldType::Scalar("sc:DateTime"))
        );
        assert_eq!(scalar("date32[day]"), Some(FieldType::Scalar("sc:Date")));
        assert_eq!(scalar("time64[us]"), Some(FieldType::Scalar("sc:Time")));
        assert_eq!(scalar("large_binary"), Some(FieldType::Scalar("sc:Text")));
        assert_eq!(
            scalar("dictionary<values=string, indices=int32, ordered=0>"),
            Some(FieldType::Scalar("sc:Text"))
        );
    }

    #[test]
    fn lists_of_scalars_are_arrays() {
        assert_eq!(
            field_type("list<element: int64>"),
            Some(FieldType::List("cr:Int64"))
        );
        assert_eq!(
            field_type("large_list<item: string>"),
            Some(FieldType::List("sc:Text"))
        );
        assert_eq!(
            field_type("fixed_size_list<item: float>[3]"),
            Some(FieldType::List("cr:Float32"))
        );
        assert_eq!(field_type("list<element: list<element: int64>>"), None);
    }

    #[test]
    fn structs_of_scalars_have_sub_fields() {
        assert_eq!(
            field_type("struct<a: int64, b: string not null>"),
            Some(FieldType::Struct(vec![
                ("a".to_owned(), "cr:Int64"),
                ("b".to_owned(), "sc:Text")
            ]))
        );
        assert_eq!(field_type("struct<a: struct<b: int64>>"), None);
        assert_eq!(field_type("struct<a: list<item: int64>, b: int8>"), None);
    }

    #[test]
    fn what_mlcroissant_cannot_read_is_omitted() {
        for dtype in [
            "map<string, int64>",
            "duration[s]",
            "null",
            "",
            "nonsense<",
            "struct<>",
        ] {
            assert_eq!(field_type(dtype), None, "{dtype}");
        }
    }
}

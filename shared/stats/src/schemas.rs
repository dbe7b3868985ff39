//! Schema agreement: the files of a version share one schema, the same column names and types
//! in any order. Each file is compared with the first, so that only the first's schema is kept
//! whatever the number of files; the error names each file and column that disagrees.

use std::fmt;

use arrow_schema::{DataType, Schema};

use super::values::column_dtype;

/// Disagreements listed in an error at most; the rest are counted.
pub const LISTED_DISAGREEMENTS: usize = 20;

/// The files do not share one schema: one line per disagreement (at most
/// [`LISTED_DISAGREEMENTS`], in file order), and how many more there were.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaMismatch {
    pub disagreements: Vec<String>,
    pub more: usize,
}

impl fmt::Display for SchemaMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the files do not share one schema: {}",
            self.disagreements.join("; ")
        )?;
        if self.more > 0 {
            write!(f, "; and {} more", self.more)?;
        }
        Ok(())
    }
}

impl std::error::Error for SchemaMismatch {}

/// The first file's schema, against which every other file is checked.
pub struct SchemaCheck<'a> {
    name: &'a str,
    schema: &'a Schema,
}

impl<'a> SchemaCheck<'a> {
    /// Checks files against `schema`, the schema of the file called `name`.
    pub fn new(name: &'a str, schema: &'a Schema) -> Self {
        Self { name, schema }
    }

    /// How the file called `name` disagrees with the first: empty when it has the same columns
    /// of the same types (in any order; nested field names and metadata aside, as Arrow's
    /// `equals_datatype` compares them).
    pub fn disagreements(&self, name: &str, schema: &Schema) -> Vec<String> {
        let mut found = duplicates(name, schema);
        for field in self.schema.fields() {
            match schema.field_with_name(field.name()) {
                Err(_) => found.push(format!("{name} lacks column {}", field.name())),
                Ok(other) if !same_type(field.data_type(), other.data_type()) => {
                    found.push(format!(
                        "{} has column {} {}, {name} has {} {}",
                        self.name,
                        field.name(),
                        column_dtype(field.name(), field.data_type()),
                        other.name(),
                        column_dtype(other.name(), other.data_type()),
                    ))
                }
                Ok(_) => {}
            }
        }
        for other in schema.fields() {
            if self.schema.field_with_name(other.name()).is_err() {
                found.push(format!(
                    "{name} has column {} {}, which {} lacks",
                    other.name(),
                    column_dtype(other.name(), other.data_type()),
                    self.name
                ));
            }
        }
        found
    }
}

fn same_type(a: &DataType, b: &DataType) -> bool {
    a.equals_datatype(b)
}

/// "`name` has two columns named x": a column name must name one column.
pub fn duplicates(name: &str, schema: &Schema) -> Vec<String> {
    let mut names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    names.sort_unstable();
    let mut found: Vec<String> = names
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| format!("{name} has two columns named {}", w[0]))
        .collect();
    found.dedup();
    found
}

/// Gathers disagreements in file order, keeping at most [`LISTED_DISAGREEMENTS`] of them.
#[derive(Default)]
pub struct Disagreements {
    listed: Vec<String>,
    more: usize,
}

impl Disagreements {
    pub fn extend(&mut self, found: Vec<String>) {
        for line in found {
            if self.listed.len() < LISTED_DISAGREEMENTS {
                self.listed.push(line);
            } else {
                self.more += 1;
            }
        }
    }

    pub fn finish(self) -> Result<(), SchemaMismatch> {
        if self.listed.is_empty() {
            Ok(())
        } else {
            Err(SchemaMismatch {
                disagreements: self.listed,
                more: self.more,
            })
        }
    }
}

/// Checks that the files, each `(name, schema)`, share one schema: the same column names with
/// the same types, in any order. The error names each file and column that disagrees with the
/// first file (`b.parquet has column x int64, c.parquet has x string`, `c.parquet lacks column
/// y`, `d.parquet has column z string, which b.parquet lacks`, `e.parquet has two columns named
/// x`). No files, or one, agree.
pub fn check_schemas<'a, I>(files: I) -> Result<(), SchemaMismatch>
where
    I: IntoIterator<Item = (&'a str, &'a Schema)>,
{
    let mut files = files.into_iter();
    let Some((first_name, first)) = files.next() else {
        return Ok(());
    };
    let mut found = Disagreements::default();
    found.extend(duplicates(first_name, first));
    let check = SchemaCheck::new(first_name, first);
    for (name, schema) in files {
        found.extend(check.disagreements(name, schema));
    }
    found.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::{Field, TimeUnit};

    fn schema(fields: &[(&str, DataType)]) -> Schema {
        Schema::new(
            fields
                .iter()
                .map(|(n, t)| Field::new(*n, t.clone(), true))
                .collect::<Vec<_>>(),
        )
    }

    #[test]
    fn the_same_columns_in_any_order_agree() {
        let a = schema(&[("x", DataType::Int64), ("y", DataType::Utf8)]);
        let b = schema(&[("y", DataType::Utf8), ("x", DataType::Int64)]);
        let c = Schema::new(vec![
            Field::new("y", DataType::Utf8, false),
            Field::new("x", DataType::Int64, false),
        ]);
        assert_eq!(
            check_schemas([("a.parquet", &a), ("b.parquet", &b), ("c.parquet", &c)]),
            Ok(())
        );
        assert_eq!(check_schemas([("a.parquet", &a)]), Ok(()));
        assert_eq!(check_schemas(std::iter::empty()), Ok(()));
    }

    #[test]
    fn a_column_of_another_type_is_named_with_both_types() {
        let a = schema(&[("x", DataType::Int64), ("y", DataType::Utf8)]);
        let b = schema(&[("x", DataType::Utf8), ("y", DataType::Utf8)]);
        let err = check_schemas([("a.parquet", &a), ("b.parquet", &b)]).unwrap_err();
        assert_eq!(
            err.disagreements,
            ["a.parquet has column x int64, b.parquet has x string"]
        );
        let t = schema(&[(
            "t",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        )]);
        let u = schema(&[("t", DataType::Timestamp(TimeUnit::Millisecond, None))]);
        let err = check_schemas([("t.parquet", &t), ("u.parquet", &u)]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the files do not share one schema: t.parquet has column t timestamp[us, tz=UTC], \
             u.parquet has t timestamp[ms]"
        );
    }

    #[test]
    fn a_missing_or_extra_column_is_named_with_its_file() {
        let a = schema(&[("x", DataType::Int64), ("y", DataType::Utf8)]);
        let c = schema(&[("x", DataType::Int64)]);
        let d = schema(&[
            ("x", DataType::Int64),
            ("y", DataType::Utf8),
            ("z", DataType::Float64),
        ]);
        let err =
            check_schemas([("a.parquet", &a), ("c.parquet", &c), ("d.parquet", &d)]).unwrap_err();
        assert_eq!(
            err.disagreements,
            [
                "c.parquet lacks column y",
                "d.parquet has column z double, which a.parquet lacks"
            ]
        );
        assert_eq!(err.more, 0);
    }

    #[test]
    fn a_column_named_twice_is_refused() {
        let a = schema(&[("x", DataType::Int64), ("x", DataType::Int64)]);
        let b = schema(&[("x", DataType::Int64)]);
        let err = check_schemas([("a.parquet", &a), ("b.parquet", &b)]).unwrap_err();
        assert_eq!(err.disagreements, ["a.parquet has two columns named x"]);
        let err = check_schemas([("b.parquet", &b), ("a.parquet", &a)]).unwrap_err();
        assert_eq!(err.disagreements, ["a.parquet has two columns named x"]);
    }

    #[test]
    fn many_disagreements_are_listed_up_to_the_limit_and_counted() {
        let a = schema(&[("x", DataType::Int64)]);
        let b = schema(&[("x", DataType::Int32)]);
        let names: Vec<String> = (0..30).map(|i| format!("part-{i}.parquet")).collect();
        let files =
            std::iter::once(("a.parquet", &a)).chain(names.iter().map(|n| (n.as_str(), &b)));
        let err = check_schemas(files).unwrap_err();
        assert_eq!(err.disagreements.len(), LISTED_DISAGREEMENTS);
        assert_eq!(err.more, 30 - LISTED_DISAGREEMENTS);
        assert_eq!(
            err.disagreements[0],
            "a.parquet has column x int64, part-0.parquet has x int32"
        );
        assert!(err.to_string().ends_with("; and 10 more"), "{err}");
    }
}

//! A column's Delta (Spark SQL) type, from its stored `dtype`: the type name as pyarrow prints it
//! (`int64`, `timestamp[us, tz=UTC]`, `list<element: int64>`, `struct<a: int64, b: string not
//! null>`, `map<string, int64>`), which `catalog-admin publish` stores for every column
//! (`catalog_preview::dtype`). Deriving it here, at request time, serves every version ever
//! published without a migration.
//!
//! | dtype | Delta type |
//! |---|---|
//! | `bool` | `boolean` |
//! | `int8`, `int16`, `int32`, `int64` | `byte`, `short`, `integer`, `long` |
//! | `uint8`, `uint16`, `uint32` | `short`, `integer`, `long` (the next signed type holds every value) |
//! | `uint64` | `decimal(20,0)` |
//! | `halffloat`, `float`, `double` | `float`, `float`, `double` |
//! | `string`, `large_string` | `string` |
//! | `binary`, `large_binary`, `fixed_size_binary[n]` | `binary` |
//! | `date32[day]`, `date64[ms]` | `date` |
//! | `timestamp[…]`, with or without a zone | `timestamp` |
//! | `decimal128(p, s)`, `decimal256(p, s)` with p ≤ 38 | `decimal(p,s)` |
//! | `time32[…]`, `time64[…]`, `duration[…]` | `integer`, `long`, `long`: Delta has no such types; these are how Parquet stores them |
//! | `list<…>`, `large_list<…>`, `fixed_size_list<…>[n]` | `array` |
//! | `struct<…>` | `struct` |
//! | `map<K, V>` | `map` |
//! | anything else (`null`, intervals, wider decimals, a name this code does not know) | `string` |
//!
//! Naive timestamps are declared `timestamp`, not `timestamp_ntz`: `timestamp_ntz` needs Delta's
//! `timestampNtz` reader feature, which the parquet response format cannot announce, and the
//! reference Python connector refuses the name. The files keep their own Parquet types, so a
//! reader that reads the file (pandas, pyarrow) gets the stored values and zone unchanged.

use serde_json::{json, Value};

/// The Delta type of a column whose dtype is `dtype`; `string` for a name it cannot read.
pub fn delta_type(dtype: &str) -> Value {
    let mut parser = Parser { rest: dtype.trim() };
    match parser.data_type() {
        Some(t) if parser.rest.is_empty() => t,
        _ => json!("string"),
    }
}

/// The Delta schema (a `struct` of nullable fields) of columns given as (name, dtype).
pub fn delta_schema<'a>(columns: impl IntoIterator<Item = (&'a str, &'a str)>) -> Value {
    let fields: Vec<Value> = columns
        .into_iter()
        .map(|(name, dtype)| field(name, delta_type(dtype), true))
        .collect();
    json!({ "type": "struct", "fields": fields })
}

fn field(name: &str, data_type: Value, nullable: bool) -> Value {
    json!({ "name": name, "type": data_type, "nullable": nullable, "metadata": {} })
}

/// A recursive-descent reader of pyarrow's type names.
struct Parser<'a> {
    rest: &'a str,
}

impl<'a> Parser<'a> {
    fn eat(&mut self, token: &str) -> bool {
        match self.rest.strip_prefix(token) {
            Some(rest) => {
                self.rest = rest;
                true
            }
            None => false,
        }
    }

    /// A type's name: letters, digits and underscores.
    fn ident(&mut self) -> &'a str {
        let end = self
            .rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(self.rest.len());
        let (ident, rest) = self.rest.split_at(end);
        self.rest = rest;
        ident
    }

    /// What follows `open` up to its matching `close` (bracketed parameters: `[us, tz=UTC]`,
    /// `(10, 2)`).
    fn bracketed(&mut self, open: char, close: char) -> Option<&'a str> {
        let inner = self.rest.strip_prefix(open)?;
        let end = inner.find(close)?;
        self.rest = &inner[end + close.len_utf8()..];
        Some(&inner[..end])
    }

    fn data_type(&mut self) -> Option<Value> {
        let name = self.ident();
        let simple = |t: &str| Some(json!(t));
        match name {
            "bool" => simple("boolean"),
            "int8" => simple("byte"),
            "int16" | "uint8" => simple("short"),
            "int32" | "uint16" => simple("integer"),
            "int64" | "uint32" => simple("long"),
            "uint64" => simple("decimal(20,0)"),
            "halffloat" | "float" => simple("float"),
            "double" => simple("double"),
            "string" | "large_string" | "utf8" | "large_utf8" | "string_view" => simple("string"),
            "binary" | "large_binary" | "binary_view" => simple("binary"),
            "fixed_size_binary" => {
                self.bracketed('[', ']')?;
                simple("binary")
            }
            "date32" | "date64" => {
                self.bracketed('[', ']')?;
                simple("date")
            }
            "timestamp" => {
                self.bracketed('[', ']')?;
                simple("timestamp")
            }
            "time32" => {
                self.bracketed('[', ']')?;
                simple("integer")
            }
            "time64" | "duration" => {
                self.bracketed('[', ']')?;
                simple("long")
            }
            "decimal128" | "decimal256" | "decimal" => {
                let params = self.bracketed('(', ')')?;
                let (p, s) = params.split_once(',')?;
                let (p, s): (u32, i64) = (p.trim().parse().ok()?, s.trim().parse().ok()?);
                if (1..=38).contains(&p) && (0..=i64::from(p)).contains(&s) {
                    Some(json!(format!("decimal({p},{s})")))
                } else {
                    simple("string")
                }
            }
            "list" | "large_list" | "list_view" | "large_list_view" => {
                self.eat("<").then_some(())?;
                let (element, nullable) = self.named_field()?;
                self.eat(">").then_some(())?;
                Some(array(element, nullable))
            }
            "fixed_size_list" => {
                self.eat("<").then_some(())?;
                let (element, nullable) = self.named_field()?;
                self.eat(">").then_some(())?;
                self.bracketed('[', ']')?;
                Some(array(element, nullable))
            }
            "struct" => {
                self.eat("<").then_some(())?;
                let mut fields = Vec::new();
                if !self.eat(">") {
                    loop {
                        let name = self.field_name()?;
                        let data_type = self.data_type()?;
                        let nullable = !self.eat(" not null");
                        fields.push(field(name, data_type, nullable));
                        if self.eat(">") {
                            break;
                        }
                        self.eat(", ").then_some(())?;
                    }
                }
                Some(json!({ "type": "struct", "fields": fields }))
            }
            "map" => {
                self.eat("<").then_some(())?;
                let key = self.data_type()?;
                self.eat(", ").then_some(())?;
                let value = self.data_type()?;
                let value_nullable = !self.eat(" not null");
                // pyarrow names a map's entries when they are not called `entries`.
                if self.rest.starts_with(" ('") {
                    let close = self.rest.find("')>")?;
                    self.rest = &self.rest[close + 2..];
                }
                self.eat(">").then_some(())?;
                Some(json!({
                    "type": "map",
                    "keyType": key,
                    "valueType": value,
                    "valueContainsNull": value_nullable,
                }))
            }
            // An unknown name with parameters: skip them whole, so the rest still parses.
            _ if !name.is_empty() => {
                for (open, close) in [('[', ']'), ('(', ')')] {
                    if self.rest.starts_with(open) {
                        self.bracketed(open, close)?;
                    }
                }
                if self.rest.starts_with('<') {
                    self.skip_angle()?;
                }
                simple("string")
            }
            _ => None,
        }
    }

    /// `name: ` of a nested field: up to the first `: `.
    fn field_name(&mut self) -> Option<&'a str> {
        let (name, rest) = self.rest.split_once(": ")?;
        self.rest = rest;
        Some(name)
    }

    /// A list's item, `name: type` with ` not null` when it cannot be null.
    fn named_field(&mut self) -> Option<(Value, bool)> {
        self.field_name()?;
        let data_type = self.data_type()?;
        Some((data_type, !self.eat(" not null")))
    }

    /// Skips a balanced `<…>`.
    fn skip_angle(&mut self) -> Option<()> {
        let mut depth = 0usize;
        for (i, c) in self.rest.char_indices() {
            match c {
                '<' => depth += 1,
                '>' => {
                    depth -= 1;
                    if depth == 0 {
                        self.rest = &self.rest[i + 1..];
                        return Some(());
                    }
                }
                _ => {}
            }
        }
        None
    }
}

fn array(element: Value, contains_null: bool) -> Value {
    json!({ "type": "array", "elementType": element, "containsNull": contains_null })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_types_map_to_deltas() {
        for (dtype, delta) in [
            ("bool", "boolean"),
            ("int8", "byte"),
            ("int16", "short"),
            ("int32", "integer"),
            ("int64", "long"),
            ("uint8", "short"),
            ("uint16", "integer"),
            ("uint32", "long"),
            ("uint64", "decimal(20,0)"),
            ("halffloat", "float"),
            ("float", "float"),
            ("double", "double"),
            ("string", "string"),
            ("large_string", "string"),
            ("binary", "binary"),
            ("fixed_size_binary[16]", "binary"),
            ("date32[day]", "date"),
            ("date64[ms]", "date"),
            ("timestamp[us]", "timestamp"),
            ("timestamp[ms, tz=UTC]", "timestamp"),
            ("timestamp[ns, tz=Europe/Paris]", "timestamp"),
            ("timestamp[s, tz=+01:00]", "timestamp"),
            ("time32[ms]", "integer"),
            ("time64[us]", "long"),
            ("duration[s]", "long"),
            ("decimal128(10, 2)", "decimal(10,2)"),
            ("decimal256(38, 0)", "decimal(38,0)"),
            ("decimal256(60, 5)", "string"),
            ("null", "string"),
            ("month_day_nano_interval", "string"),
            (
                "dictionary<values=string, indices=int32, ordered=0>",
                "string",
            ),
        ] {
            assert_eq!(delta_type(dtype), json!(delta), "{dtype}");
        }
    }

    #[test]
    fn nested_types_keep_their_shape_names_and_nullability() {
        assert_eq!(
            delta_type("list<element: int64>"),
            json!({"type": "array", "elementType": "long", "containsNull": true})
        );
        assert_eq!(
            delta_type("large_list<item: string not null>"),
            json!({"type": "array", "elementType": "string", "containsNull": false})
        );
        assert_eq!(
            delta_type("fixed_size_list<item: float>[3]"),
            json!({"type": "array", "elementType": "float", "containsNull": true})
        );
        assert_eq!(
            delta_type("struct<a: int64, b name: list<element: timestamp[us, tz=UTC]> not null>"),
            json!({"type": "struct", "fields": [
                {"name": "a", "type": "long", "nullable": true, "metadata": {}},
                {"name": "b name", "type": {"type": "array", "elementType": "timestamp", "containsNull": true},
                 "nullable": false, "metadata": {}},
            ]})
        );
        assert_eq!(
            delta_type("map<string, struct<x: double>>"),
            json!({"type": "map", "keyType": "string",
                   "valueType": {"type": "struct", "fields": [
                       {"name": "x", "type": "double", "nullable": true, "metadata": {}}]},
                   "valueContainsNull": true})
        );
        assert_eq!(
            delta_type("map<string, int64 ('counts')>"),
            json!({"type": "map", "keyType": "string", "valueType": "long", "valueContainsNull": true})
        );
        assert_eq!(
            delta_type("struct<>"),
            json!({"type": "struct", "fields": []})
        );
    }

    #[test]
    fn what_does_not_parse_is_a_string_column_never_a_panic() {
        for dtype in [
            "",
            "list<",
            "list<element int64>",
            "struct<a: int64",
            "map<string>",
            "decimal128(x, y)",
            "timestamp[us",
            "int64 trailing",
            "<>",
            "map<string, int64 ('x",
        ] {
            assert_eq!(delta_type(dtype), json!("string"), "{dtype:?}");
        }
    }

    #[test]
    fn a_schema_is_a_struct_of_nullable_columns_in_order() {
        let schema = delta_schema([("id", "int64"), ("when", "timestamp[us, tz=UTC]")]);
        assert_eq!(
            schema,
            json!({"type": "struct", "fields": [
                {"name": "id", "type": "long", "nullable": true, "metadata": {}},
                {"name": "when", "type": "timestamp", "nullable": true, "metadata": {}},
            ]})
        );
    }

    proptest::proptest! {
        #[test]
        fn any_text_maps_to_some_type(dtype in ".{0,60}") {
            let _ = delta_type(&dtype);
        }
    }
}

//! The list endpoint's `sort` parameter.

use super::QueryError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortField {
    /// Publication order (when the dataset was first published).
    Created,
    /// `updated_at`.
    Updated,
    /// `name`, case-insensitively, then slug.
    Name,
    /// Downloads over the last 30 days, then publication order.
    Downloads,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sort {
    pub field: SortField,
    pub descending: bool,
}

impl Sort {
    /// Newest published first: the plain listing's order.
    pub const DEFAULT: Self = Self {
        field: SortField::Created,
        descending: true,
    };

    /// `created`, `updated`, `name` or `downloads`, optionally with `:asc` or `:desc`. Without
    /// a direction, dates sort newest first, names A to Z, downloads most first.
    pub fn parse(raw: Option<&str>) -> Result<Self, QueryError> {
        let Some(raw) = raw else {
            return Ok(Self::DEFAULT);
        };
        let bad = || QueryError::Sort(crate::input::echo(raw));
        let (field, direction) = match raw.split_once(':') {
            Some((field, direction)) => (field, Some(direction)),
            None => (raw, None),
        };
        let field = match field {
            "created" => SortField::Created,
            "updated" => SortField::Updated,
            "name" => SortField::Name,
            "downloads" => SortField::Downloads,
            _ => return Err(bad()),
        };
        let descending = match direction {
            None => field != SortField::Name,
            Some("desc") => true,
            Some("asc") => false,
            Some(_) => return Err(bad()),
        };
        Ok(Self { field, descending })
    }
}

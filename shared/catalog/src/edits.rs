//! What an organisation's editor changes of a dataset's description from the site: a patch
//! over its stored metadata, checked by the rules publishing checks (docs/organisations.md).

use serde::Deserialize;

use crate::input::{Description, Tag};
use crate::readme::Readme;
use crate::records::DatasetMeta;

/// The fields an editor may change; each one absent keeps its stored value. `readme` set to
/// `""` removes the card. The access level is not here: it is an admin's decision (the
/// operators' `access level` command for now).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetaEdit {
    pub name: Option<String>,
    pub description: Option<String>,
    pub category: Option<String>,
    pub tags: Option<Vec<String>>,
    pub license: Option<String>,
    pub source: Option<String>,
    pub readme: Option<String>,
}

/// Why an edit was refused: the field and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct EditError {
    pub field: &'static str,
    pub message: String,
}

fn required(field: &'static str, value: String) -> Result<String, EditError> {
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(EditError {
            field,
            message: "must not be blank".into(),
        });
    }
    Ok(trimmed.to_owned())
}

impl MetaEdit {
    /// Parses a request body (JSON).
    pub fn parse(body: &[u8]) -> Result<Self, EditError> {
        serde_json::from_slice(body).map_err(|e| EditError {
            field: "body",
            message: format!("not a metadata edit: {e}"),
        })
    }

    /// Whether it changes nothing at all.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }

    /// The stored metadata with this edit applied, checked.
    pub fn apply(self, stored: &DatasetMeta) -> Result<DatasetMeta, EditError> {
        let mut meta = stored.clone();
        if let Some(name) = self.name {
            meta.card.name = required("name", name)?;
        }
        if let Some(description) = self.description {
            Description::parse(&description).map_err(|e| EditError {
                field: "description",
                message: e.to_string(),
            })?;
            meta.card.description = Some(description).filter(|d| !d.trim().is_empty());
        }
        if let Some(category) = self.category {
            meta.card.category = required("category", category)?;
        }
        if let Some(tags) = self.tags {
            Tag::parse_all(&tags).map_err(|e| EditError {
                field: "tags",
                message: e.to_string(),
            })?;
            meta.card.tags = tags;
        }
        if let Some(license) = self.license {
            meta.card.license = required("license", license)?;
        }
        if let Some(source) = self.source {
            meta.source = required("source", source)?;
        }
        if let Some(readme) = self.readme {
            meta.readme = if readme.is_empty() {
                None
            } else {
                Some(
                    Readme::parse(&readme)
                        .map_err(|e| EditError {
                            field: "readme",
                            message: e.to_string(),
                        })?
                        .into_string(),
                )
            };
        }
        Ok(meta)
    }
}

/// Why an editor's change did not apply.
#[derive(Debug, thiserror::Error)]
pub enum EditFailure {
    /// The dataset has no such version (or it cannot be activated).
    #[error("dataset '{slug}' has no version {version}")]
    NoSuchVersion { slug: String, version: u64 },
    /// The dataset has no version yet, or was unpublished by the operators: nothing to edit.
    #[error("{0}")]
    NotEditable(String),
    /// Another write changed the dataset first: nothing was changed, and asking again is safe.
    #[error("{0}")]
    Conflict(String),
    /// What the writer refuses (too large to store, or not valid), in its words.
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

impl EditFailure {
    /// The stable code clients can match on.
    pub fn code(&self) -> &'static str {
        match self {
            Self::NoSuchVersion { .. } => "version_not_found",
            Self::NotEditable(_) => "not_editable",
            Self::Conflict(_) => "edit_conflict",
            Self::Refused(_) => "invalid_edit",
            Self::Store(_) => "unavailable",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::Card;

    fn stored() -> DatasetMeta {
        DatasetMeta {
            card: Card {
                name: "Ledger".into(),
                description: Some("Old".into()),
                category: "finance".into(),
                tags: vec!["money".into()],
                license: "CC-BY-4.0".into(),
                access_level: Default::default(),
            },
            source: "Acme".into(),
            insights: "kept".into(),
            discussions: Vec::new(),
            access: Default::default(),
            readme: Some("# Old".into()),
        }
    }

    #[test]
    fn an_edit_changes_what_it_names_and_keeps_the_rest() {
        let edit =
            MetaEdit::parse(br##"{"name": " New name ", "tags": ["a", "b"], "readme": "# New"}"##)
                .unwrap();
        let meta = edit.apply(&stored()).unwrap();
        assert_eq!(meta.card.name, "New name");
        assert_eq!(meta.card.tags, ["a", "b"]);
        assert_eq!(meta.readme.as_deref(), Some("# New"));
        assert_eq!(meta.card.description.as_deref(), Some("Old"));
        assert_eq!(
            (meta.source.as_str(), meta.insights.as_str()),
            ("Acme", "kept")
        );
        let cleared = MetaEdit::parse(br#"{"readme": "", "description": ""}"#)
            .unwrap()
            .apply(&stored())
            .unwrap();
        assert_eq!((cleared.readme, cleared.card.description), (None, None));
    }

    #[test]
    fn edits_outside_the_rules_are_refused_naming_the_field() {
        for (body, field) in [
            (r#"{"name": "  "}"#.to_owned(), "name"),
            (
                format!(r#"{{"description": "{}"}}"#, "d".repeat(4097)),
                "description",
            ),
            (r#"{"tags": [""]}"#.to_owned(), "tags"),
            (r#"{"license": ""}"#.to_owned(), "license"),
            (r#"{"access_level": "private"}"#.to_owned(), "body"),
            (r#"{"readme": "   "}"#.to_owned(), "readme"),
        ] {
            let refused = MetaEdit::parse(body.as_bytes()).and_then(|e| e.apply(&stored()));
            assert_eq!(refused.map_err(|e| e.field), Err(field), "{body}");
        }
    }
}

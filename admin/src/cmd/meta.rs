//! The dataset a publish makes a version of, and its descriptive fields, as `publish` and
//! `stage publish` take them.

use std::path::PathBuf;

use super::{slug, CliError};
use crate::publish::MetaInput;
use catalog::input::Slug;

#[derive(clap::Args)]
pub struct MetaArgs {
    /// The dataset's slug: lowercase letters, digits and hyphens.
    #[arg(long)]
    slug: String,
    /// Descriptive fields from a YAML (.yaml/.yml) or JSON file: name, description, license,
    /// source, category, tags, insights, discussions ([{id, title, slug, path}]). Flags override
    /// it. On re-publish, anything not given keeps its stored value.
    #[arg(long, value_name = "FILE")]
    metadata: Option<PathBuf>,
    /// Refuse to publish if the slug already exists (guards against overwriting another dataset).
    #[arg(long)]
    new: bool,
    /// Display name (required for a new dataset).
    #[arg(long)]
    name: Option<String>,
    /// Free-text description, at most 4096 bytes.
    #[arg(long)]
    description: Option<String>,
    /// License identifier, e.g. CC-BY-4.0 (required for a new dataset).
    #[arg(long)]
    license: Option<String>,
    /// Who produced the data (required for a new dataset).
    #[arg(long)]
    source: Option<String>,
    /// Category, e.g. environment (required for a new dataset).
    #[arg(long)]
    category: Option<String>,
    /// A tag (repeat for several).
    #[arg(long = "tag")]
    tags: Vec<String>,
    /// A short note on what the data shows.
    #[arg(long)]
    insights: Option<String>,
}

/// What [`MetaArgs`] ask for, checked.
pub struct Meta {
    pub slug: Slug,
    /// The flags over the metadata file's fields.
    pub input: MetaInput,
    /// `--new`: refuse a slug that already serves a version.
    pub new_only: bool,
}

impl MetaArgs {
    /// The slug checked and the metadata file read (flags win over it).
    pub fn resolve(self) -> Result<Meta, CliError> {
        let slug = slug(&self.slug)?;
        let from_file = match &self.metadata {
            Some(path) => MetaInput::from_file(path)?,
            None => MetaInput::default(),
        };
        let flags = MetaInput {
            name: self.name,
            description: self.description,
            license: self.license,
            source: self.source,
            category: self.category,
            tags: (!self.tags.is_empty()).then_some(self.tags),
            insights: self.insights,
            discussions: None,
            access: None,
        };
        Ok(Meta {
            slug,
            input: flags.over(from_file),
            new_only: self.new,
        })
    }
}

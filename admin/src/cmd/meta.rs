//! The dataset a publish makes a version of, and its descriptive fields, as `publish` and
//! `stage publish` take them; and `catalog-admin meta`, which changes a published dataset's
//! card without a new version.

use std::path::{Path, PathBuf};

use super::{slug, CliError, Context};
use crate::publish::MetaInput;
use catalog::input::Slug;
use catalog::readme::Readme;

#[derive(clap::Args)]
pub struct MetaArgs {
    /// The dataset's slug: lowercase letters, digits and hyphens.
    #[arg(long)]
    slug: String,
    /// Descriptive fields from a YAML (.yaml/.yml) or JSON file: name, description, license,
    /// source, category, tags, insights, discussions ([{id, title, slug, path}]), access,
    /// readme (the card's Markdown). Flags override it. On re-publish, anything not given keeps its stored value.
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
    /// The dataset's card: a Markdown file (UTF-8, at most 32 KiB), shown on its page.
    #[arg(long, value_name = "FILE.md")]
    readme: Option<PathBuf>,
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
            readme: self.readme.as_deref().map(read_readme).transpose()?,
        };
        Ok(Meta {
            slug,
            input: flags.over(from_file),
            new_only: self.new,
        })
    }
}

/// A card's Markdown file, read and checked (UTF-8, not blank, at most 32 KiB).
fn read_readme(path: &Path) -> Result<String, CliError> {
    let bytes = std::fs::read(path)
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        CliError::Usage(format!(
            "{}: the card is not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })?;
    Readme::parse(&text)
        .map(Readme::into_string)
        .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))
}

/// Change a published dataset's descriptive metadata without a new version.
///
/// Example: catalog-admin meta readme river-levels README.md
#[derive(clap::Subcommand)]
pub enum Command {
    /// Set the dataset's card from a Markdown file (UTF-8, at most 32 KiB), or remove it
    /// with --clear. The dataset page renders it, sanitised, below the description; the
    /// metadata endpoint answers it as `readme`.
    ///
    /// Example: catalog-admin meta readme river-levels README.md
    Readme {
        /// The dataset's slug.
        slug: String,
        /// The card's Markdown file.
        #[arg(value_name = "FILE.md", required_unless_present = "clear")]
        file: Option<PathBuf>,
        /// Remove the card.
        #[arg(long, conflicts_with = "file")]
        clear: bool,
    },
}

pub async fn run(command: Command, ctx: &Context) -> Result<(), CliError> {
    match command {
        Command::Readme {
            slug: raw,
            file,
            clear: _,
        } => {
            let slug = slug(&raw)?;
            // Read and checked before anything is asked of the tables.
            let readme = file.as_deref().map(read_readme).transpose()?;
            let writer = ctx.aws().await?.writer();
            writer.set_readme(&slug, readme.as_deref(), ctx.now).await?;
            match readme {
                Some(text) => println!("{slug}: card set ({} bytes)", text.len()),
                None => println!("{slug}: card removed"),
            }
        }
    }
    Ok(())
}

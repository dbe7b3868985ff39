//! `catalog-admin keyless`: a dataset anyone may download, without a key, for a while.

use catalog::time::format_time;

use super::{slug, CliError, Context};
use crate::parse_when;

/// Open or close a dataset's keyless window.
///
/// Example: catalog-admin keyless set city-bikes --until +7d
#[derive(clap::Subcommand)]
pub enum Command {
    /// Let anyone download the dataset, without a key, until a time.
    ///
    /// Example: catalog-admin keyless set city-bikes --until +7d
    Set {
        slug: String,
        /// RFC 3339 time or +<n><s|m|h|d>.
        #[arg(long)]
        until: String,
    },
    /// Close the keyless window now.
    ///
    /// Example: catalog-admin keyless clear city-bikes
    Clear { slug: String },
}

pub async fn run(command: Command, ctx: &Context) -> Result<(), CliError> {
    let writer = ctx.aws().await?.writer();
    let now = ctx.now;
    match command {
        Command::Set { slug: raw, until } => {
            let slug = slug(&raw)?;
            let until = parse_when(&until, now).map_err(CliError::Usage)?;
            writer.set_keyless(&slug, Some(until), now).await?;
            println!(
                "{slug} is keyless until {}{}",
                format_time(&until),
                if until <= now {
                    " (already past: the window is closed)"
                } else {
                    ""
                }
            );
        }
        Command::Clear { slug: raw } => {
            let slug = slug(&raw)?;
            writer.set_keyless(&slug, None, now).await?;
            println!("{slug} requires a key");
        }
    }
    Ok(())
}

//! `catalog-admin`: the operators' command line. See `catalog-admin --help`; each subcommand is
//! a module of `catalog_admin::cmd`.

use std::process::ExitCode;

use catalog_admin::cmd::{self, Cli};
use clap::Parser;

#[tokio::main]
async fn main() -> ExitCode {
    match cmd::run(Cli::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{}", e.report());
            ExitCode::from(e.exit_code())
        }
    }
}

//! `catalog-bench`: the figures of bench/run. Each command prints a Markdown table.
//!
//! ```text
//! catalog-bench lambda --bootstraps target/lambda [--rounds 20] [--warm 1000]
//! catalog-bench init-costs [--rounds 15] [--no-jitter-bench PATH]
//! catalog-bench roundtrips [--datasets 100000] [--private N]
//! catalog-bench handler [--requests 20000]
//! catalog-bench load --api PATH [--requests 20000] [--concurrency 32]
//! catalog-bench cache-memory [--datasets 100000] [--unbounded]
//! catalog-bench rows [--small]
//! catalog-bench rows-many [--files 100000] [--rows N]
//! catalog-bench index [--datasets 1000000]
//! catalog-bench text [--datasets 1000000]
//! catalog-bench orders [--datasets 1000000]
//! catalog-bench manifest [--files N] [--columns N]
//! catalog-bench data-listing [--files 100000] [--rounds 20]
//! catalog-bench sharing-many [--files 100000] [--rounds 10]
//! catalog-bench list-memory --bootstrap PATH [--datasets 1000000]
//! ```
//!
//! `lambda`, `roundtrips` and `rows` start moto (dev/moto_server.py) and s3s-fs like the tests do (S3S_FS,
//! PYTHON, SAMPLES_DIR).

mod args;
mod cache;
mod data_listing;
mod handler;
mod index;
mod lambda;
mod listmem;
mod load;
mod manifest;
mod orders;
mod probe;
mod proxy;
mod roundtrips;
mod rows;
mod rows_many;
mod runtime;
mod sharing_many;
mod stats;
mod synthetic;
mod text;

use std::path::PathBuf;
use std::process::ExitCode;

use args::{number, option};

fn usage() -> ExitCode {
    eprintln!(
        "usage: catalog-bench lambda --bootstraps DIR [--rounds N] [--warm N]\n\
         \x20      catalog-bench init-costs [--rounds N] [--no-jitter-bench PATH]\n\
         \x20      catalog-bench roundtrips [--datasets N] [--private N]\n\
         \x20      catalog-bench handler [--requests N]\n\
         \x20      catalog-bench load --api PATH [--requests N] [--concurrency N]\n\
         \x20      catalog-bench cache-memory [--datasets N] [--unbounded]\n\
         \x20      catalog-bench rows [--small]\n\
         \x20      catalog-bench rows-many [--files N] [--rows N]\n\
         \x20      catalog-bench index [--datasets N]\n\
         \x20      catalog-bench text [--datasets N]\n\
         \x20      catalog-bench orders [--datasets N]\n\
         \x20      catalog-bench manifest [--files N] [--columns N]\n\
         \x20      catalog-bench data-listing [--files N] [--rounds N]\n\
         \x20      catalog-bench sharing-many [--files N] [--rounds N]\n\
         \x20      catalog-bench list-memory --bootstrap PATH [--datasets N]"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(command) = args.first() else {
        return usage();
    };
    if command == "probe" {
        // A child process of init-costs: nothing else may run before the probe.
        return match args.get(1).map(|name| probe::probe(name)) {
            Some(Ok(())) => ExitCode::SUCCESS,
            Some(Err(e)) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
            None => usage(),
        };
    }
    let rest = &args[1..];
    let result = (|| -> Result<(), String> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        match command.as_str() {
            "lambda" => {
                let bootstraps = option(rest, "bootstraps")
                    .map(PathBuf::from)
                    .ok_or("--bootstraps DIR is required")?;
                rt.block_on(lambda::run(lambda::Options {
                    bootstraps,
                    rounds: number(rest, "rounds", 20)?,
                    warm: number(rest, "warm", 1000)?,
                }))
            }
            "init-costs" => probe::run(
                number(rest, "rounds", 15)?,
                option(rest, "no-jitter-bench")
                    .map(PathBuf::from)
                    .as_deref(),
            ),
            "roundtrips" => {
                let private = match option(rest, "private") {
                    Some(_) => number(rest, "private", 1)? as u64,
                    None => 0,
                };
                rt.block_on(roundtrips::run(
                    number(rest, "datasets", 100_000)? as u64,
                    private,
                ))
            }
            "handler" => {
                let requests = number(rest, "requests", 20_000)?;
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| e.to_string())?
                    .block_on(handler::run(requests))
            }
            "load" => {
                let api = option(rest, "api")
                    .map(PathBuf::from)
                    .ok_or("--api PATH (the catalog-local-api binary) is required")?;
                rt.block_on(load::run(load::Options {
                    api,
                    requests: number(rest, "requests", 20_000)?,
                    concurrency: number(rest, "concurrency", 32)?,
                }))
            }
            "cache-memory" => cache::run(
                number(rest, "datasets", 100_000)?,
                rest.iter().any(|a| a == "--unbounded"),
            ),
            "rows" => rt.block_on(rows::run(!rest.iter().any(|a| a == "--small"))),
            "rows-many" => {
                let rows = option(rest, "rows")
                    .map(|_| number(rest, "rows", 1))
                    .transpose()?;
                rt.block_on(rows_many::run(
                    number(rest, "files", 100_000)? as u64,
                    &rows.map_or(vec![1_000, 3], |n| vec![n as u64]),
                ))
            }
            "index" => index::run(number(rest, "datasets", 1_000_000)?),
            "text" => text::run(number(rest, "datasets", 1_000_000)?),
            "orders" => orders::run(number(rest, "datasets", 1_000_000)?),
            "manifest" => {
                let files = option(rest, "files")
                    .map(|_| number(rest, "files", 1))
                    .transpose()?;
                let columns = option(rest, "columns")
                    .map(|_| number(rest, "columns", 1))
                    .transpose()?;
                manifest::run(
                    &files.map_or(vec![1_000, 10_000, 100_000], |n| vec![n]),
                    &columns.map_or(vec![10, 50], |n| vec![n]),
                )
            }
            "sharing-many" => rt.block_on(sharing_many::run(
                number(rest, "files", 100_000)? as u64,
                number(rest, "rounds", 10)?,
            )),
            "data-listing" => rt.block_on(data_listing::run(
                number(rest, "files", 100_000)? as u64,
                number(rest, "rounds", 20)?,
            )),
            "list-memory" => {
                let bootstrap = option(rest, "bootstrap")
                    .map(PathBuf::from)
                    .ok_or("--bootstrap PATH (the list function's) is required")?;
                rt.block_on(listmem::run(listmem::Options {
                    bootstrap,
                    datasets: number(rest, "datasets", 1_000_000)?,
                }))
            }
            // A child process of rows: one file's reads, its own peak memory.
            "rows-read" => rt.block_on(rows::read(rest)),
            other => Err(format!("unknown command {other:?}")),
        }
    })();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("catalog-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

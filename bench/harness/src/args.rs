//! The command line's `--name value` options.

/// `--name value` pairs after the command.
pub fn option(args: &[String], name: &str) -> Option<String> {
    args.windows(2)
        .find(|w| w[0] == format!("--{name}"))
        .map(|w| w[1].clone())
}

pub fn number(args: &[String], name: &str, default: usize) -> Result<usize, String> {
    match option(args, name) {
        None => Ok(default),
        Some(v) => v
            .parse()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("--{name} must be a positive integer, not {v:?}")),
    }
}

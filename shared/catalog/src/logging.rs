//! The functions' log output, set up once per cold start by every function (the HTTP ones and
//! the sign-up and audit triggers alike).

/// Sets up the functions' log output as Lambda's advanced logging controls ask: JSON lines when
/// `AWS_LAMBDA_LOG_FORMAT` is `JSON` (text otherwise), at the level `AWS_LAMBDA_LOG_LEVEL` names,
/// else `RUST_LOG`'s, else INFO. The format is lambda_http's default subscriber's (no time, no
/// target, no colours); the level is one level for every module, not an `EnvFilter` directive
/// list, which would link a regex engine into every function (docs/performance.md).
pub fn init_logging() {
    let format = std::env::var("AWS_LAMBDA_LOG_FORMAT").unwrap_or_default();
    let level = std::env::var("AWS_LAMBDA_LOG_LEVEL")
        .or_else(|_| std::env::var("RUST_LOG"))
        .ok();
    let builder = tracing_subscriber::fmt()
        .with_target(false)
        .without_time()
        .with_ansi(false)
        .with_max_level(log_level(level.as_deref()))
        .with_writer(std::io::stdout);
    if format.eq_ignore_ascii_case("json") {
        builder.json().init();
    } else {
        builder.init();
    }
}

/// The level a log-level setting names (`info`, `DEBUG`, `off`, ...); INFO when it names none.
pub fn log_level(setting: Option<&str>) -> tracing_subscriber::filter::LevelFilter {
    setting
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(tracing_subscriber::filter::LevelFilter::INFO)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_level_is_the_one_named_or_info() {
        use tracing_subscriber::filter::LevelFilter;
        assert_eq!(log_level(Some("DEBUG")), LevelFilter::DEBUG);
        assert_eq!(log_level(Some("warn")), LevelFilter::WARN);
        assert_eq!(log_level(Some("off")), LevelFilter::OFF);
        assert_eq!(log_level(None), LevelFilter::INFO);
        // A directive list names no single level: INFO, as lambda_http's default does.
        assert_eq!(log_level(Some("catalog=debug,info")), LevelFilter::INFO);
    }
}

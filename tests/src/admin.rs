//! The operators' CLI, `catalog-admin`, run as a test runs it: built next to the test, its
//! output kept for the log scan.

use std::path::PathBuf;
use std::process::Command;

use uuid::Uuid;

use crate::process::built_binary;

/// Runs `catalog-admin` (a command made with [`admin_command`]) to completion and keeps what
/// it printed, like the other spawned binaries' logs: its stdout and stderr go to a fresh
/// `catalog-admin-*.log` under `$CATALOG_TEST_LOGS` when set, which dev/check-logs scans for
/// keys, key hashes and URL signatures.
///
/// One line is left out, and only it: the line `keys create` prints the new key on (its
/// stdout, a single line), which is that command's purpose (the operator sees the key once).
/// It is replaced by a marker; anything else `keys create` printed on stdout fails the test.
/// (`tests/tests/admin/statistics.rs` runs `inspect` on fixtures outside this: binary columns
/// print as hex, which the scan would read as hashes.)
pub fn run_admin(cmd: &mut Command) -> std::process::Output {
    let args: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let out = cmd.output().expect("run catalog-admin");
    let Some(dir) = std::env::var_os("CATALOG_TEST_LOGS") else {
        return out;
    };
    let mut stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let creates_a_key = args.len() >= 2
        && args[0] == "keys"
        && args[1] == "create"
        && !args.iter().any(|a| a == "--help" || a == "-h");
    if creates_a_key && out.status.success() {
        let lines: Vec<&str> = stdout.lines().collect();
        assert!(
            lines.len() == 1 && lines[0].starts_with("dcat_"),
            "keys create prints the key alone on stdout: {stdout:?}"
        );
        stdout = "[the line keys create prints the new key on: not kept]\n".to_owned();
    }
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).expect("log directory");
    let text = format!(
        "$ catalog-admin {}\n{stdout}{}[{}]\n",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr),
        out.status
    );
    std::fs::write(
        dir.join(format!("catalog-admin-{}.log", Uuid::new_v4())),
        text,
    )
    .expect("log file");
    out
}

/// `catalog-admin`, built next to the running test, to run with [`run_admin`].
pub fn admin_command() -> Command {
    Command::new(built_binary("catalog-admin"))
}

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

/// `catalog-admin keyless set SLUG --until +<hours>h` on `env`'s stack (a negative `hours`: a
/// window that ended).
pub fn set_keyless(env: &[(String, String)], slug: &str, hours: &str) {
    let out = run_admin(admin_command().envs(env.iter().cloned()).args([
        "keyless",
        "set",
        slug,
        "--until",
        &format!("+{hours}h"),
    ]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One dataset of the showcase catalog as [`publish_showcase`] left it: its slug, the file its
/// active version holds, and whether it is in an open keyless window.
#[derive(Debug, Clone)]
pub struct Showcased {
    pub slug: String,
    pub file: PathBuf,
    pub keyless: bool,
}

/// Publishes the showcase catalog (`dev/showcase.py`, generated into `dir`) on `env`'s stack
/// through `catalog-admin`, as `dev/run` does: every publication in order (a corrected file
/// becomes version 2) and the keyless windows.
pub fn publish_showcase(env: &[(String, String)], dir: &std::path::Path) -> Vec<Showcased> {
    let made = Command::new(crate::tool("PYTHON", ".venv/bin/python"))
        .arg(crate::repo_root().join("dev/showcase.py"))
        .arg("--out")
        .arg(dir)
        .output()
        .expect("run dev/showcase.py");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let plan = std::fs::read_to_string(dir.join("plan.tsv")).expect("plan.tsv");
    let mut published: Vec<Showcased> = Vec::new();
    for line in plan.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        let [slug, file, meta, hours] = fields[..] else {
            panic!("plan line {line:?}");
        };
        let out = run_admin(admin_command().envs(env.iter().cloned()).args([
            "publish",
            &dir.join(file).to_string_lossy(),
            "--slug",
            slug,
            "--metadata",
            &dir.join(meta).to_string_lossy(),
        ]));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        if hours != "-" {
            set_keyless(env, slug, hours);
        }
        published.retain(|s| s.slug != slug);
        published.push(Showcased {
            slug: slug.to_owned(),
            file: dir.join(file),
            keyless: hours != "-" && !hours.starts_with('-'),
        });
    }
    published
}

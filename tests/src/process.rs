//! The processes the tests start: where the repository and its tools are, free loopback ports,
//! waiting until a server listens (on the port it was given, itself), killing it when dropped,
//! where a spawned binary's output goes, and the workspace binaries built next to the test.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use uuid::Uuid;

/// The repository's root (tests/ is in it).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// A tool installed by dev/setup: `$var` if set, else `default` under the repository root.
pub fn tool(var: &str, default: &str) -> PathBuf {
    let path = std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(default));
    assert!(
        path.exists(),
        "{} not found at {}: run `dev/test` (it installs the tools) or set {var}",
        default,
        path.display()
    );
    path
}

/// A free port on 127.0.0.1.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Waits until `child` listens on `port`; panics if it exits first or takes over 60 s.
pub fn wait_for_port(port: u16, child: &mut Child, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited early with {status}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("{what} did not listen on 127.0.0.1:{port} within 60 s");
}

/// Whether process `pid` itself holds a socket listening on 127.0.0.1:`port` (Linux: the
/// socket's inode in /proc/net/tcp among the process's file descriptors). Connecting is not
/// enough: another test's server may have taken the port between `free_port` and the spawn.
fn listens_itself(pid: u32, port: u16) -> bool {
    let Ok(table) = std::fs::read_to_string("/proc/net/tcp") else {
        return TcpStream::connect(("127.0.0.1", port)).is_ok();
    };
    let local = format!("0100007F:{port:04X}");
    let inodes: Vec<String> = table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // local address, state 0A (LISTEN), inode
            (fields.get(1) == Some(&local.as_str()) && fields.get(3) == Some(&"0A"))
                .then(|| fields.get(9).map(|i| format!("socket:[{i}]")))
                .flatten()
        })
        .collect();
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    fds.flatten().any(|fd| {
        std::fs::read_link(fd.path())
            .is_ok_and(|target| inodes.iter().any(|i| target.as_os_str() == i.as_str()))
    })
}

/// Spawns a server on a free loopback port (`command(port)`) and waits until it listens there
/// itself; if the port was taken meanwhile (the server exits, or never owns it), tries again on
/// another. Returns the running child and its port.
pub fn start_on_free_port(what: &str, command: impl Fn(u16) -> Command) -> (Child, u16) {
    for _ in 0..5 {
        let port = free_port();
        let mut child = command(port)
            .spawn()
            .unwrap_or_else(|e| panic!("start {what}: {e}"));
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if listens_itself(child.id(), port) {
                return (child, port);
            }
            let exited = matches!(child.try_wait(), Ok(Some(_)));
            if exited || Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    panic!("{what} could not listen on a free loopback port in 5 tries");
}

/// A child process that is killed when dropped.
pub struct Guard(pub Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Where a spawned binary's stdout and stderr go: a fresh file under `$CATALOG_TEST_LOGS` when
/// set (dev/test sets it, then scans every file for secrets), else nowhere.
pub fn log_files(name: &str) -> (Stdio, Stdio) {
    let Some(dir) = std::env::var_os("CATALOG_TEST_LOGS") else {
        return (Stdio::null(), Stdio::null());
    };
    let dir = PathBuf::from(dir);
    std::fs::create_dir_all(&dir).expect("log directory");
    let file = std::fs::File::create(dir.join(format!("{name}-{}.log", Uuid::new_v4())))
        .expect("log file");
    let err = file.try_clone().expect("log file");
    (Stdio::from(file), Stdio::from(err))
}

/// A file for a spawned binary's stdout and stderr that the test reads back: under
/// `$CATALOG_TEST_LOGS` when set (so that dev/check-logs scans it too), else under the
/// temporary directory.
pub fn kept_log(name: &str) -> (PathBuf, Stdio, Stdio) {
    let dir = std::env::var_os("CATALOG_TEST_LOGS")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("catalog-test-logs"));
    std::fs::create_dir_all(&dir).expect("log directory");
    let path = dir.join(format!("{name}-{}.log", Uuid::new_v4()));
    let file = std::fs::File::create(&path).expect("log file");
    let err = file.try_clone().expect("log file");
    (path, Stdio::from(file), Stdio::from(err))
}

/// A workspace binary, built next to the running test (target/<profile>/).
pub fn built_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is not built: run `cargo build --workspace --bins` first (dev/test does)",
        path.display()
    );
    path
}

/// Runs `script` (a path under the repository root) with the Python at `python`, feeding
/// `input` as JSON on stdin, with `envs` set; the JSON it prints. Fails the test, with what the
/// script wrote on stderr, if it fails.
pub fn python_json(
    python: &Path,
    script: &str,
    input: &serde_json::Value,
    envs: &[(&str, &std::ffi::OsStr)],
) -> serde_json::Value {
    use std::io::Write;
    let mut child = Command::new(python)
        .arg(repo_root().join(script))
        .envs(envs.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{} ({e}): run dev/setup", python.display()));
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.to_string().as_bytes())
        .expect("write the script's input");
    let out = child.wait_with_output().expect("run the script");
    assert!(
        out.status.success(),
        "{script} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the script's JSON")
}

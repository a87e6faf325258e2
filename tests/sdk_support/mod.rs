//! A `strata serve` process on a free loopback port and the process helpers the SDK suites
//! share (`sdk_conformance.rs` drives it with the Python SDK, `sdk_js_conformance.rs` with the
//! JavaScript SDK).

#![allow(dead_code, clippy::unwrap_used)]

pub mod venv;

use std::fs::File;
use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// How long a freshly started server may take to accept connections.
const SERVER_START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a server may take to exit after SIGTERM (graceful shutdown).
const SERVER_STOP_TIMEOUT: Duration = Duration::from_secs(15);

/// A finished process's status and both of its outputs, for a failure message.
pub fn output_text(out: &Output) -> String {
    format!(
        "status: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `cmd`, failing the test with its output unless it succeeds.
pub fn run_checked(cmd: &mut Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}",
        output_text(&out)
    );
}

/// An address on loopback that was free a moment ago.
fn free_loopback_addr() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
}

/// A running `strata serve`; dropped without `stop` it is killed so no server outlives a test.
pub struct Server {
    child: Child,
    addr: SocketAddr,
    log: PathBuf,
}

impl Server {
    /// Starts `strata serve` on `db`, its output going to `log`, and waits until it listens.
    pub fn start(db: &Path, log: &Path) -> Self {
        let addr = free_loopback_addr();
        let log_file = File::create(log).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_strata"))
            .arg("serve")
            .arg("--db")
            .arg(db)
            .arg("--addr")
            .arg(addr.to_string())
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().unwrap())
            .stderr(log_file)
            .spawn()
            .unwrap();
        let mut server = Self {
            child,
            addr,
            log: log.to_path_buf(),
        };
        let deadline = Instant::now() + SERVER_START_TIMEOUT;
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            if let Some(status) = server.child.try_wait().unwrap() {
                panic!(
                    "strata serve exited at start ({status}):\n{}",
                    server.log_text()
                );
            }
            assert!(
                Instant::now() < deadline,
                "strata serve did not listen on {addr} within {SERVER_START_TIMEOUT:?}:\n{}",
                server.log_text()
            );
            thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// The account's table endpoint.
    pub fn endpoint(&self) -> String {
        format!("http://{}/devstoreaccount1", self.addr)
    }

    /// What the server wrote so far.
    pub fn log_text(&self) -> String {
        let mut text = String::new();
        if let Ok(mut f) = File::open(&self.log) {
            let _ = f.read_to_string(&mut text);
        }
        text
    }

    /// Runs `suite` (pointed at this server), fails the test with its output and this server's
    /// log if it fails, prints its output otherwise, then stops the server.
    pub fn expect_passes(self, what: &str, suite: &mut Command) {
        let out = suite
            .output()
            .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
        let report = output_text(&out);
        if !out.status.success() {
            panic!(
                "{what} failed against strata serve:\n{report}\n--- server log ---\n{}",
                self.log_text()
            );
        }
        println!("{report}");
        self.stop();
    }

    /// SIGTERM, then the exit status must be success within the timeout (graceful shutdown).
    pub fn stop(mut self) {
        let pid = self.child.id().to_string();
        run_checked(Command::new("kill").args(["-TERM", &pid]), "kill -TERM");
        let deadline = Instant::now() + SERVER_STOP_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(
                    status.success(),
                    "strata serve exited with {status} after SIGTERM:\n{}",
                    self.log_text()
                );
                return;
            }
            assert!(
                Instant::now() < deadline,
                "strata serve ignored SIGTERM for {SERVER_STOP_TIMEOUT:?}:\n{}",
                self.log_text()
            );
            thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

//! Running the `strata` binary in a scratch directory.

#![allow(dead_code, clippy::unwrap_used)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A scratch directory with a database path.
pub struct Scratch {
    /// Keeps the directory alive.
    pub dir: tempfile::TempDir,
    /// `dir/test.db`.
    pub db: PathBuf,
}

impl Scratch {
    /// A fresh directory.
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("test.db");
        Self { dir, db }
    }

    /// A path inside the directory.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes `text` to `name` and returns its path.
    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    /// Runs `strata --db DB ARGS`.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_stdin(args, "")
    }

    /// Runs `strata --db DB ARGS` with `stdin` as standard input. A refusal because the file
    /// is locked is retried for up to a second: a child process another test thread is
    /// spawning holds a copy of every descriptor of this process (the engine's locked file
    /// included) until it execs, which on a loaded machine can outlast an `Engine::close`
    /// followed at once by a run.
    pub fn run_stdin(&self, args: &[&str], stdin: &str) -> Run {
        let mut run = self.run_once(args, stdin);
        for _ in 0..40 {
            if !run.stderr().contains("is locked by another process") {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
            run = self.run_once(args, stdin);
        }
        run
    }

    fn run_once(&self, args: &[&str], stdin: &str) -> Run {
        let mut child = Command::new(env!("CARGO_BIN_EXE_strata"))
            .arg("--db")
            .arg(&self.db)
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        Run(child.wait_with_output().unwrap())
    }
}

/// The outcome of one run.
pub struct Run(pub Output);

impl Run {
    /// Exit status code.
    pub fn code(&self) -> i32 {
        self.0.status.code().unwrap_or(-1)
    }

    /// Standard output.
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.0.stdout).into_owned()
    }

    /// Standard error.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.0.stderr).into_owned()
    }

    /// Asserts success and returns stdout.
    #[track_caller]
    pub fn ok(&self) -> String {
        assert_eq!(
            self.code(),
            0,
            "failed: {}\n{}",
            self.stdout(),
            self.stderr()
        );
        self.stdout()
    }

    /// Asserts exit status `code` and that stderr contains `needle`.
    #[track_caller]
    pub fn fails(&self, code: i32, needle: &str) {
        assert_eq!(
            self.code(),
            code,
            "exit status; stdout {}\nstderr {}",
            self.stdout(),
            self.stderr()
        );
        assert!(
            self.stderr().contains(needle),
            "stderr lacks {needle:?}: {}",
            self.stderr()
        );
    }

    /// stdout parsed as JSON.
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.ok()).unwrap()
    }
}

/// Whether `path` exists.
pub fn exists(path: &Path) -> bool {
    path.exists()
}

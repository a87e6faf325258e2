//! Shared fixtures of the HTTP server tests: a server over an account of its own, and the
//! SharedKey signature of the emulator account.
#![allow(dead_code, clippy::unwrap_used)]

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use strata::server::auth::shared_key::sign;
use strata::server::limits::DEFAULT_KEY;
use strata::server::{Auth, Server};
use strata::{Account, Options};

/// The emulator account every request names.
pub const ACCOUNT: &str = "devstoreaccount1";

/// A server on a free loopback port with the emulator's accounts, over an account in a
/// temporary directory that lives as long as it.
pub struct TestServer {
    _dir: tempfile::TempDir,
    pub server: Server,
    /// The account key requests are signed with.
    pub key: Vec<u8>,
}

impl TestServer {
    /// Opens a fresh account with `options`, lets `fill` load it, then serves it.
    pub fn start(options: Options, fill: impl FnOnce(&Account)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let account = Account::open_with(dir.path().join("db.strata"), options).unwrap();
        fill(&account);
        let server =
            Server::start(account, Auth::emulator(), "127.0.0.1:0".parse().unwrap()).unwrap();
        Self {
            _dir: dir,
            server,
            key: STANDARD.decode(DEFAULT_KEY).unwrap(),
        }
    }

    /// The URL of `path_and_query` under the account.
    pub fn url(&self, path_and_query: &str) -> String {
        format!("http://{}/{ACCOUNT}{path_and_query}", self.server.addr())
    }

    /// The `Authorization` header signing `message` (a SharedKey string-to-sign).
    pub fn authorization(&self, message: &str) -> String {
        format!("SharedKey {ACCOUNT}:{}", sign(&self.key, message))
    }
}
pub mod signed;

//! The Azure Table REST API over one strata file: `strata serve`.
//!
//! A thin layer: routing ([`route`]), authentication ([`auth`]), the JSON and multipart wire
//! forms ([`json`], [`batch`]) and the response format ([`reply`]); every semantic rule comes
//! from the table layer. Wire facts follow the service as the official SDKs see it
//! (docs/WIRE.md of the team).
//!
//! ```no_run
//! use strata::Account;
//! use strata::server::{Auth, Server};
//! let account = Account::open("strata.db")?;
//! let server = Server::start(account, Auth::emulator(), "127.0.0.1:0".parse()?)?;
//! println!("listening on {}", server.addr());
//! server.stop();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod acl;
pub mod auth;
pub mod batch;
mod combine;
pub mod error;
mod handlers;
mod idle;
pub mod json;
pub mod limits;
pub mod reply;
mod request_headers;
pub mod route;
mod service;
mod service_properties;
mod xml;

/// Runs `future` to completion on a current-thread runtime with timers (unit tests of the
/// server's deadlines and watchdogs).
#[cfg(test)]
fn block_on_with_timers<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime builds")
        .block_on(future)
}

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::oneshot;

pub use error::{Result, ServerError};
pub use service::State;

use crate::table::Account;
use limits::{
    DEFAULT_ACCOUNT, DEFAULT_KEY, IDLE_CHECK_INTERVAL, IDLE_CHECKS, READ_BUFFER_MAX_BYTES,
    SHUTDOWN_GRACE,
};

/// Most blocking worker threads running table operations at once.
const MAX_BLOCKING_THREADS: usize = 64;

/// Threads of the HTTP side when not configured. One is enough: parsing, authenticating and
/// writing a response cost tens of microseconds, every table operation runs on the blocking
/// pool, and a single thread avoids the cross-thread wake-ups of a work-stealing pool
/// (3.5 instead of 5.5 context switches per point read).
pub const DEFAULT_IO_THREADS: usize = 1;

/// The account name and key requests are authenticated against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Auth {
    /// Account name (first path segment, signed in every string-to-sign).
    pub account: String,
    /// The decoded account key.
    pub key: Vec<u8>,
}

impl Auth {
    /// The storage emulator's well-known account and key.
    #[must_use]
    pub fn emulator() -> Self {
        Self {
            account: DEFAULT_ACCOUNT.to_owned(),
            key: STANDARD.decode(DEFAULT_KEY).unwrap_or_default(),
        }
    }

    /// An account with a base64 key.
    ///
    /// # Errors
    /// [`ServerError::InvalidInput`] if the key is not base64 or the name is empty.
    pub fn new(account: &str, key_base64: &str) -> Result<Self> {
        if account.is_empty() {
            return Err(ServerError::invalid("the account name is empty"));
        }
        let key = STANDARD
            .decode(key_base64)
            .map_err(|_| ServerError::invalid("the account key is not base64"))?;
        Ok(Self {
            account: account.to_owned(),
            key,
        })
    }
}

/// Accepts connections on `listener` until `shutdown` completes, then lets in-flight
/// requests finish (up to [`SHUTDOWN_GRACE`]).
pub async fn serve(listener: TcpListener, state: Arc<State>, shutdown: impl Future<Output = ()>) {
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else {
                    // Out of descriptors or a reset during accept: back off briefly.
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let state = Arc::clone(&state);
                let open = state.open_connection();
                let connection = open.id();
                let mut builder = http1::Builder::new();
                // The header read timeout is the connection's idle watchdog (`idle`): hyper's
                // arms a timer per request.
                builder
                    .header_read_timeout(None)
                    .max_buf_size(READ_BUFFER_MAX_BYTES);
                let activity = Arc::new(idle::Activity::default());
                let requests = Arc::clone(&activity);
                let connection = builder.serve_connection(
                    TokioIo::new(stream),
                    service_fn(move |request| {
                        requests.begin();
                        service::handle(Arc::clone(&state), connection, Arc::clone(&requests), request)
                    }),
                );
                let connection = graceful.watch(connection);
                tokio::spawn(async move {
                    let _ = idle::close_when_idle(
                        connection,
                        &activity,
                        IDLE_CHECK_INTERVAL,
                        IDLE_CHECKS,
                    )
                    .await;
                    drop(open);
                });
            }
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await;
}

/// The server's runtime: `io_threads` threads for HTTP (1 = a current-thread runtime) plus
/// the blocking pool that runs table operations.
fn runtime(io_threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = if io_threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder.worker_threads(io_threads);
        builder
    };
    builder
        .enable_all()
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .thread_name("strata-serve")
        .build()
}

/// Serves `account` on `addr` with `io_threads` HTTP threads until Ctrl-C or SIGTERM, then
/// finishes in-flight requests and closes the account.
///
/// # Errors
/// I/O errors of the runtime or of binding `addr`.
pub fn run_until_signal(
    account: Account,
    auth: Auth,
    addr: SocketAddr,
    io_threads: usize,
) -> std::io::Result<()> {
    let runtime = runtime(io_threads)?;
    runtime.block_on(async move {
        let listener = TcpListener::bind(addr).await?;
        eprintln!(
            "strata: serving account {} on http://{}",
            auth.account,
            listener.local_addr()?
        );
        let state = Arc::new(State::new(account, auth.account, auth.key));
        serve(listener, state, shutdown_signal()).await;
        Ok::<(), std::io::Error>(())
    })?;
    // Dropping the runtime joins its blocking workers, so the last handle on the account
    // goes with it and the file is closed cleanly.
    drop(runtime);
    Ok(())
}

/// Completes on Ctrl-C or (on Unix) SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}

/// A server running on a background thread (tests, embedding). Stopped by
/// [`Server::stop`] or on drop.
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    /// Binds `addr` (port 0 picks a free one) and serves `account` on a background thread.
    ///
    /// # Errors
    /// I/O errors of binding or of starting the runtime.
    pub fn start(account: Account, auth: Auth, addr: SocketAddr) -> std::io::Result<Self> {
        let std_listener = std::net::TcpListener::bind(addr)?;
        std_listener.set_nonblocking(true)?;
        let addr = std_listener.local_addr()?;
        let runtime = runtime(DEFAULT_IO_THREADS)?;
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("strata-server".to_owned())
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = TcpListener::from_std(std_listener) else {
                        return;
                    };
                    let state = Arc::new(State::new(account, auth.account, auth.key));
                    serve(listener, state, async {
                        let _ = stopped.await;
                    })
                    .await;
                });
            })?;
        Ok(Self {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The address the server listens on.
    #[must_use]
    pub const fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops accepting, finishes in-flight requests and waits for the server thread.
    pub fn stop(mut self) {
        self.shut_down();
    }

    fn shut_down(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shut_down();
    }
}

//! Limits and fixed values of the REST server, in one place.

use std::time::Duration;

/// Largest request body accepted for a single entity or table request. An entity may hold
/// 1 MiB by the service's count, and its JSON form (base64, escapes) is larger, so the body
/// cap sits above that; the table layer enforces the 1 MiB entity rule itself.
pub const ENTITY_BODY_MAX_BYTES: usize = 4 * 1024 * 1024;

/// Largest `$batch` request body, as the service documents (4 MiB).
pub const BATCH_BODY_MAX_BYTES: usize = 4 * 1024 * 1024;

/// Most bytes of a refused (over-limit) body read and dropped after the 413 is sent: a client
/// still uploading it then reads the 413, not a connection reset; a larger one is cut off.
pub const REFUSED_BODY_DISCARD_MAX_BYTES: usize = 16 * 1024 * 1024;

/// Longest wait for the next piece of a refused body before the connection is closed.
pub const REFUSED_BODY_IDLE_TIMEOUT: Duration = Duration::from_secs(2);

/// Longest time a refused body is read at all: a client trickling it piece by piece within
/// the idle timeout is cut off here, not only by the connection's idle watchdog (the 413 has
/// been answered, so the connection counts as idle), and cannot hold back a shutdown longer.
pub const REFUSED_BODY_DRAIN_MAX: Duration = Duration::from_secs(10);

/// Most distinct property names one `$select` may name: the service projects at most 255
/// properties, the most an entity has. It also bounds the per-row work of a projection,
/// which compares each property with the names and writes the missing ones as `null`.
pub const SELECT_MAX_NAMES: usize = 255;

/// Longest `x-ms-client-request-id` the service records (1 KiB); a longer one is not echoed.
pub const CLIENT_REQUEST_ID_MAX_BYTES: usize = 1024;

/// Largest Set Table ACL body: five policies of XML are a few KiB.
pub const ACL_BODY_MAX_BYTES: usize = 64 * 1024;

/// Longest request target (path and query) accepted. Long `$filter`s travel in the URL, so
/// this is generous; the emulator's small header limit is a known gap we must not have.
pub const URL_MAX_BYTES: usize = 32 * 1024;

/// hyper's read buffer: bounds the request line plus all headers of one request, and holds
/// an SDK batch of 100 typical entities (~80 KB) whole, so its body arrives as one piece read
/// in one `recv` instead of being gathered from two (at 64 KiB every such batch was copied).
pub const READ_BUFFER_MAX_BYTES: usize = 128 * 1024;

/// A client must send all request headers within this time. Enforced per connection (see
/// `idle`): a connection with no request begun and no response left to send is closed after
/// [`IDLE_CHECKS`] checks [`IDLE_CHECK_INTERVAL`] apart, i.e. 30 to 40 s after it fell idle.
pub const HEADER_READ_TIMEOUT: Duration = IDLE_CHECK_INTERVAL.saturating_mul(IDLE_CHECKS);

/// Time between two idle checks of a connection.
pub const IDLE_CHECK_INTERVAL: Duration = Duration::from_secs(10);

/// Idle checks in a row after which a connection is closed.
pub const IDLE_CHECKS: u32 = 3;

/// A client must send the whole body within this time.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(60);

/// How long shutdown waits for in-flight requests before closing anyway.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// Accepted distance between a request's `x-ms-date`/`Date` and the server clock.
pub const CLOCK_SKEW: Duration = Duration::from_secs(15 * 60);

/// Longest a query page scans on the I/O thread (when it is the only request in flight)
/// before it is handed to a blocking worker: a 1,000-entity page of a 1-in-10 filter over
/// memtable rows takes ~1 ms, and a single-entity write run there holds the thread for its
/// sync, a few ms.
pub const INLINE_QUERY_BUDGET: Duration = Duration::from_millis(2);

/// Most table names in one Query Tables page.
pub const TABLES_PAGE_MAX: usize = 1000;

/// Most stored access policies per table (the service's limit).
pub const ACL_MAX_POLICIES: usize = 5;

/// Longest stored access policy id (the service's limit).
pub const ACL_ID_MAX_CHARS: usize = 64;

/// The `x-ms-version` the server answers with.
pub const SERVICE_VERSION: &str = "2019-02-02";

/// The default account: the storage emulator's well-known account.
pub const DEFAULT_ACCOUNT: &str = "devstoreaccount1";

/// The storage emulator's well-known (public) key of [`DEFAULT_ACCOUNT`].
pub const DEFAULT_KEY: &str =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

/// The default listening address: the emulator's table port on loopback.
pub const DEFAULT_ADDR: &str = "127.0.0.1:10002";

/// Most operations of one changeset.
pub const BATCH_MAX_PARTS: usize = 100;

/// Most header lines in one multipart part or embedded request.
pub const PART_MAX_HEADERS: usize = 64;

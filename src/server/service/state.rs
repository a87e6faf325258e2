//! The server's shared state: the account, connection and in-flight counts, request ids.

use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use parking_lot::Mutex;

use super::super::combine::Combiner;
use crate::table::{Account, Table};

/// Length of a request id (`8-4-4-4-12` hex digits).
const REQUEST_ID_LEN: usize = 36;

/// Requests in a row from one connection after which the other open connections count as
/// idle: a write then skips the yield that looks for requests on them (see
/// [`State::surely_alone`]).
const SAME_CONNECTION_RUN: u64 = 64;

/// What every request handler shares.
#[derive(Debug)]
pub struct State {
    /// The account being served.
    pub account: Account,
    /// Its name in URLs and signatures.
    pub name: String,
    /// Its key (decoded), for SharedKey and SAS.
    pub key: Vec<u8>,
    /// Random per process, so request ids differ across restarts.
    seed: u64,
    /// Requests seen so far.
    requests: AtomicU64,
    /// Requests whose headers are parsed and whose response is not yet built.
    in_flight: AtomicUsize,
    /// Requests of `in_flight` still waiting for the rest of their body.
    reading_body: AtomicUsize,
    /// Open client connections.
    connections: AtomicUsize,
    /// Connections opened so far: the next connection's number.
    connection_ids: AtomicU64,
    /// The connection of the request started last.
    last_connection: AtomicU64,
    /// The number of the last request that came from another connection than the request
    /// before it.
    switched_at: AtomicU64,
    /// Concurrent single-entity writes, committed in groups.
    pub(crate) combiner: Combiner,
    /// The handle of the table named last, resolved: requests mostly name the table the one
    /// before named, and a fresh handle validates the name and looks the table up in the
    /// locked, hashed catalog (~600 instructions per request).
    last_table: Mutex<Option<Table>>,
    /// The OData service root of the host named last (`http://{host}/{account}`): clients
    /// name the same host in every request, and building it cost each request an allocation.
    last_base: Mutex<Option<Arc<str>>>,
}

/// One request counted in a gauge of [`State`] (in flight, reading its body) until dropped.
pub(super) struct Counted<'a>(&'a AtomicUsize);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One connection counted as open until dropped.
pub(crate) struct OpenConnection(Arc<State>, u64);

impl OpenConnection {
    /// The connection's number, distinct among the server's connections.
    pub(crate) const fn id(&self) -> u64 {
        self.1
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::Relaxed);
    }
}

impl State {
    /// Shared state serving `account` as `name` with `key`.
    #[must_use]
    pub fn new(account: Account, name: String, key: Vec<u8>) -> Self {
        Self {
            account,
            name,
            key,
            seed: RandomState::new().hash_one(std::process::id()),
            requests: AtomicU64::new(0),
            in_flight: AtomicUsize::new(0),
            reading_body: AtomicUsize::new(0),
            connections: AtomicUsize::new(0),
            connection_ids: AtomicU64::new(0),
            last_connection: AtomicU64::new(u64::MAX),
            switched_at: AtomicU64::new(0),
            combiner: Combiner::default(),
            last_table: Mutex::new(None),
            last_base: Mutex::new(None),
        }
    }

    /// The OData service root for requests to `host`: `http://{host}/{account}`.
    pub(crate) fn base(&self, host: &str) -> Arc<str> {
        let mut last = self.last_base.lock();
        if let Some(base) = last.as_ref()
            && base
                .strip_prefix("http://")
                .and_then(|rest| rest.strip_suffix(self.name.as_str()))
                .and_then(|rest| rest.strip_suffix('/'))
                == Some(host)
        {
            return Arc::clone(base);
        }
        let base: Arc<str> = format!("http://{host}/{}", self.name).into();
        *last = Some(Arc::clone(&base));
        base
    }

    /// A handle on table `name` of the account, as [`Account::table`] makes it: the handle
    /// kept from the last request when it has the same spelling and its table is still live.
    ///
    /// # Errors
    /// As [`Account::table`] (an invalid name).
    pub(crate) fn table(&self, name: &str) -> crate::table::Result<Table> {
        let mut last = self.last_table.lock();
        if let Some(table) = last.as_ref()
            && table.name().as_str() == name
            && table.is_resolved()
        {
            return Ok(table.clone());
        }
        let table = self.account.table(name)?;
        // Resolved before it is kept, so that its clones skip the lookup; a table that does
        // not exist is not resolved, and its operations report that as they would.
        let _ = table.state();
        *last = Some(table.clone());
        Ok(table)
    }

    /// Counts a request in flight until the guard is dropped.
    pub(super) fn enter(&self) -> Counted<'_> {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        Counted(&self.in_flight)
    }

    /// Counts a request as waiting for its body until the guard is dropped.
    pub(super) fn reading_body(&self) -> Counted<'_> {
        self.reading_body.fetch_add(1, Ordering::Relaxed);
        Counted(&self.reading_body)
    }

    /// Counts a connection as open until the guard is dropped.
    pub(crate) fn open_connection(self: &Arc<Self>) -> OpenConnection {
        self.connections.fetch_add(1, Ordering::Relaxed);
        let id = self.connection_ids.fetch_add(1, Ordering::Relaxed);
        OpenConnection(Arc::clone(self), id)
    }

    /// Whether the calling request is the only one in flight.
    pub(crate) fn alone(&self) -> bool {
        self.in_flight() == 1
    }

    /// Whether the calling request is the only one in flight and no other is expected before
    /// it is answered, so that it needs no yield to find out: its connection is the only one
    /// open (HTTP/1 reads a connection's next request only after the response), or the last
    /// [`SAME_CONNECTION_RUN`] requests all came from it (the others are idle keep-alive
    /// connections). A request that does arrive on an idle connection meanwhile waits for
    /// this one write, as one arriving during any sync does, and its arrival ends the run.
    pub(crate) fn surely_alone(&self) -> bool {
        if !self.alone() {
            return false;
        }
        let run = self
            .requests
            .load(Ordering::Relaxed)
            .saturating_sub(self.switched_at.load(Ordering::Relaxed));
        self.connections.load(Ordering::Relaxed) <= 1 || run > SAME_CONNECTION_RUN
    }

    /// Notes that request number `n` came from `connection`.
    pub(super) fn note_connection(&self, connection: u64, n: u64) {
        if self.last_connection.swap(connection, Ordering::Relaxed) != connection {
            self.switched_at.store(n, Ordering::Relaxed);
        }
    }

    /// Requests whose headers are parsed and whose response is not yet built.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Requests in flight that have their whole body and wait for this thread to run them.
    /// One still reading its body cannot run before the rest arrives, which a sync on this
    /// thread does not delay: it is served after the sync, as if it had arrived then.
    pub(crate) fn ready_in_flight(&self) -> usize {
        self.in_flight()
            .saturating_sub(self.reading_body.load(Ordering::Relaxed))
    }

    /// A fresh request id in GUID form: the seed's 64 bits, then the counter's mixed with it,
    /// as `8-4-4-4-12` lower-case hex digits.
    pub(super) fn next_request_id(&self) -> (RequestId, u64) {
        let n = self.requests.fetch_add(1, Ordering::Relaxed);
        (RequestId::new(self.seed, n ^ self.seed.rotate_left(17)), n)
    }
}

/// A request id (`8-4-4-4-12` lower-case hex digits), kept on the stack: it is made for every
/// request, and a `String` of it cost an allocation and a copy into the header value.
#[derive(Clone, Copy)]
pub(super) struct RequestId([u8; REQUEST_ID_LEN]);

impl RequestId {
    /// The id of the 128 bits `high`, `low`.
    fn new(high: u64, low: u64) -> Self {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        /// Where each group of `8-4-4-4-12` digits starts in the digits and in the id.
        const GROUPS: [(usize, usize, usize); 5] =
            [(0, 0, 8), (8, 9, 4), (12, 14, 4), (16, 19, 4), (20, 24, 12)];
        // Two digits per byte, then the groups placed around the dashes: a digit at a time
        // with a dash test per digit cost ~320 instructions per request.
        let mut digits = [0_u8; 32];
        let bytes = high.to_be_bytes().into_iter().chain(low.to_be_bytes());
        for (pair, byte) in digits.chunks_exact_mut(2).zip(bytes) {
            let high_digit = HEX.get(usize::from(byte >> 4)).copied().unwrap_or(b'0');
            let low_digit = HEX.get(usize::from(byte & 0xf)).copied().unwrap_or(b'0');
            pair.copy_from_slice(&[high_digit, low_digit]);
        }
        let mut id = [b'-'; REQUEST_ID_LEN];
        for (from, to, len) in GROUPS {
            if let (Some(slot), Some(group)) =
                (id.get_mut(to..to + len), digits.get(from..from + len))
            {
                slot.copy_from_slice(group);
            }
        }
        Self(id)
    }

    /// The id as text.
    pub(super) fn as_str(&self) -> &str {
        debug_assert!(self.0.is_ascii());
        // SAFETY: the bytes are private and only `new` writes them, all ASCII hex digits and
        // dashes. (A UTF-8 check of the 36 bytes cost every request ~100 instructions.)
        unsafe { std::str::from_utf8_unchecked(&self.0) }
    }

    /// The id's bytes (ASCII).
    pub(super) fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn state() -> State {
        let dir = tempfile::tempdir().unwrap();
        let account = Account::open(dir.path().join("db.strata")).unwrap();
        State::new(account, "acct".to_owned(), vec![1; 32])
    }

    #[test]
    fn a_kept_table_handle_serves_only_its_spelling_and_only_while_its_table_lives() {
        let state = state();
        assert!(state.table("bad name").is_err());
        state.account.create_table("Items").unwrap();
        let first = state.table("Items").unwrap();
        assert!(first.is_resolved());
        assert!(state.table("Items").unwrap().is_resolved());
        // Another spelling of the same table gets its own handle, with its own spelling.
        assert_eq!(state.table("ITEMS").unwrap().name().as_str(), "ITEMS");
        assert_eq!(state.table("Items").unwrap().name().as_str(), "Items");
        state.account.delete_table("Items").unwrap();
        let gone = state.table("Items").unwrap();
        assert!(!gone.is_resolved());
        assert!(matches!(
            gone.get_row("p", "r", |_| ()),
            Err(crate::table::TableError::TableNotFound { .. })
        ));
        state.account.create_table("Items").unwrap();
        let again = state.table("Items").unwrap();
        assert!(again.is_resolved());
        assert!(matches!(
            again.get_row("p", "r", |_| ()),
            Err(crate::table::TableError::ResourceNotFound { .. })
        ));
    }

    #[test]
    fn the_service_root_is_the_one_of_the_host_asked_for() {
        let state = state();
        for host in [
            "127.0.0.1:1",
            "127.0.0.1:1",
            "h",
            "127.0.0.1:1",
            "",
            "a/acct",
        ] {
            assert_eq!(&*state.base(host), format!("http://{host}/acct"), "{host}");
        }
    }

    #[test]
    fn request_ids_are_distinct_lower_case_guids() {
        let state = state();
        let first = state.next_request_id().0.as_str().to_owned();
        let second = state.next_request_id().0.as_str().to_owned();
        assert_ne!(first, second);
        for id in [first, second] {
            assert_eq!(id.len(), REQUEST_ID_LEN);
            for (at, c) in id.chars().enumerate() {
                if matches!(at, 8 | 13 | 18 | 23) {
                    assert_eq!(c, '-', "{id}");
                } else {
                    assert!(c.is_ascii_hexdigit() && !c.is_ascii_uppercase(), "{id}");
                }
            }
        }
    }

    #[test]
    fn a_request_id_spells_its_128_bits_in_order_as_8_4_4_4_12_hex() {
        let id = RequestId::new(0x0123_4567_89ab_cdef, 0xfedc_ba98_7654_3210);
        assert_eq!(id.as_str(), "01234567-89ab-cdef-fedc-ba9876543210");
        assert_eq!(
            RequestId::new(u64::MAX, 0).as_str(),
            "ffffffff-ffff-ffff-0000-000000000000"
        );
    }

    #[test]
    fn a_request_is_alone_only_while_no_other_is_in_flight() {
        let state = state();
        let first = state.enter();
        assert!(state.alone());
        let second = state.enter();
        assert!(!state.alone());
        drop(first);
        assert!(state.alone());
        drop(second);
        assert_eq!(state.in_flight.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_request_still_reading_its_body_is_in_flight_but_not_ready() {
        let state = state();
        let writer = state.enter();
        let reader = state.enter();
        let reading = state.reading_body();
        assert_eq!((state.in_flight(), state.ready_in_flight()), (2, 1));
        assert!(
            !state.alone(),
            "a request reading its body still counts as in flight"
        );
        drop(reading);
        assert_eq!(state.ready_in_flight(), 2);
        drop((reader, writer));
        assert_eq!(state.ready_in_flight(), 0);
    }

    #[test]
    fn a_request_is_surely_alone_only_on_the_sole_open_connection() {
        let state = Arc::new(state());
        let request = state.enter();
        assert!(state.surely_alone(), "no connection counted (direct calls)");
        let first = state.open_connection();
        assert!(state.surely_alone());
        let second = state.open_connection();
        assert!(state.alone());
        assert!(!state.surely_alone());
        drop(first);
        assert!(state.surely_alone());
        let other = state.enter();
        assert!(!state.surely_alone());
        drop((other, request, second));
        assert_eq!(state.connections.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_request_is_surely_alone_after_a_run_of_requests_from_its_connection_only() {
        let state = Arc::new(state());
        let (active, idle) = (state.open_connection(), state.open_connection());
        let request = |connection: &OpenConnection| {
            let (_, n) = state.next_request_id();
            state.note_connection(connection.id(), n);
        };
        request(&idle);
        let _in_flight = state.enter();
        for _ in 0..SAME_CONNECTION_RUN {
            request(&active);
            assert!(!state.surely_alone());
        }
        request(&active);
        assert!(state.surely_alone());
        // One request from the other connection ends the run.
        request(&idle);
        request(&active);
        assert!(!state.surely_alone());
    }
}

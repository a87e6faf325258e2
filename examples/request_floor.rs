//! The floor of a request on this machine: the least server CPU any HTTP/1.1 server can spend
//! on the SDK's point reads, durable merge upserts and batches, with no storage engine, no
//! authentication and no JSON. It answers every `GET` with a fixed entity (strata's bytes for a
//! bench entity), every `POST` to `$batch` with strata's answer to a batch of 100 creates after
//! one durable write of [`BATCH_PAGES`] pages (what the WAL writes for such a batch), and every
//! other request with `204 No Content` and an ETag after one durable write of a 4 KiB page,
//! made the way the WAL makes it; it parses only what frames a request (the end of the head and
//! `Content-Length`; connections are kept alive).
//!
//! ```sh
//! cargo build --release --example request_floor
//! target/release/examples/request_floor --addr 127.0.0.1:10002 --io epoll --sync direct \
//!     --blocks written --file /var/tmp/floor.journal
//! target/sdk-venv/bin/python benches/request_floor.py --floor target/release/examples/request_floor
//! ```
//!
//! `benches/request_floor.py` drives it with the SDK calls of `benches/emulator_compare.py` and
//! meters its threads' CPU as that bench does. Choices, one server layout and one write each:
//! - `--io threads`: a blocking thread per connection; `epoll`: one thread, level-triggered
//!   epoll, and one durable write for all the writes parsed in one wake-up (group commit for
//!   free); `tokio-current`: a current-thread runtime, a task per connection (strata's default
//!   layout when a write commits on the HTTP thread); `tokio-current-timer`: the same with
//!   timers on and one always pending, as strata's idle watchdog keeps one per connection (the
//!   runtime then parks in `epoll_wait` with a timeout); `tokio-multi`: a two-worker runtime.
//! - `--sync direct`: `pwrite` of an aligned page on an `O_DIRECT | O_DSYNC` descriptor (the
//!   WAL's durable append); `fdatasync`: buffered `pwrite` then `fdatasync`; `none`: no write,
//!   the network alone.
//! - `--blocks written`: the journal's blocks are written and synced before serving (the WAL's
//!   prewritten zeroes); `unwritten`: only `fallocate`d, so every durable write also converts
//!   an extent (each write goes to the next page, so none lands on a converted one).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::io::AsyncRead;

/// The unit of a durable write: one page, as the WAL's direct appends.
const PAGE: usize = 4096;
/// Journal size; writes wrap around it.
const JOURNAL_BYTES: u64 = 64 << 20;
/// Most bytes taken by one `recv`: hyper's read buffer in strata (`READ_BUFFER_MAX_BYTES`), so
/// a batch's 77 KB body arrives in as many reads as strata makes.
const READ_CHUNK: usize = 128 * 1024;
/// Pages of the durable write of an SDK batch of 100 bench entities: 16.4 KB of WAL frames plus
/// the tail page's earlier bytes (batch15: one 20 KiB `pwrite64` per batch).
const BATCH_PAGES: usize = 5;
/// Most pages one durable write covers (a wake-up's batches share it).
const MAX_PAGES: usize = 64;
/// Entities in the batch the floor answers: the bench's `BATCH`.
const BATCH_ENTITIES: usize = 100;
/// Most events taken per `epoll_wait`.
const EPOLL_EVENTS: usize = 64;
/// Period of the always-pending timer of `tokio-current-timer` (strata's idle check interval).
const IDLE_TIMER: std::time::Duration = std::time::Duration::from_secs(10);
/// The epoll token of the listener (connections use their descriptor).
const LISTENER_TOKEN: u64 = u64::MAX;

/// The headers strata sends on every answer, byte for byte, after a status line.
macro_rules! common_headers {
    ($request_id:literal) => {
        concat!(
            "x-ms-request-id: ",
            $request_id,
            "\r\n",
            "x-ms-client-request-id: 361deb06-e7b7-11f1-96c9-02fc00000001\r\n",
            "x-ms-version: 2019-02-02\r\n",
            "dataserviceversion: 3.0;\r\n",
            "x-content-type-options: nosniff\r\n",
            "cache-control: no-cache\r\n",
            "server: Windows-Azure-Table/1.0 Microsoft-HTTPAPI/2.0\r\n",
        )
    };
}

/// The headers of an entity answer: the common ones and the entity's ETag.
macro_rules! entity_headers {
    ($request_id:literal) => {
        concat!(
            common_headers!($request_id),
            "etag: W/\"datetime'2026-11-23T10%3A56%3A35.7899185Z'\"\r\n",
        )
    };
}

/// The `date` header and the blank line that end a head.
macro_rules! date_and_end {
    () => {
        "date: Mon, 23 Nov 2026 10:56:35 GMT\r\n\r\n"
    };
}

/// The answer to a merge upsert: strata's headers, byte for byte, with a fixed id and date.
const UPSERT_RESPONSE: &str = concat!(
    "HTTP/1.1 204 No Content\r\n",
    entity_headers!("acbdb3b4-6b82-81e8-6768-d70503d1597a"),
    date_and_end!()
);

/// The body of a point read's answer: strata's entity of the bench, byte for byte.
const ENTITY_BODY: &str = concat!(
    r#"{"odata.metadata":"http://127.0.0.1:10002/devstoreaccount1/$metadata#bench/@Element","#,
    r#""odata.etag":"W/\"datetime'2026-11-23T10%3A56%3A35.7899185Z'\"","#,
    r#""PartitionKey":"p0001","RowKey":"00000007","Timestamp":"2026-11-23T10:56:35.7899185Z","#,
    r#""Group":"g7","N":7,"Payload":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"#,
    r#"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}"#
);

/// The answer to a point read (head and body in one buffer, one `send`).
fn read_response() -> Vec<u8> {
    let mut out = format!(
        concat!(
            "HTTP/1.1 200 OK\r\n",
            entity_headers!("acbdb3b4-6b82-81e8-6768-d70503d15979"),
            "content-type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n",
            "content-length: {}\r\n",
            date_and_end!()
        ),
        ENTITY_BODY.len()
    )
    .into_bytes();
    out.extend_from_slice(ENTITY_BODY.as_bytes());
    out
}

/// The answer to an SDK batch of [`BATCH_ENTITIES`] creates of bench entities in partition
/// `p0001`: strata's bytes (202, a changeset of `201 Created` parts with each entity), with a
/// fixed id, time and port.
fn batch_response() -> Vec<u8> {
    const ID: &str = "bc53fa3e-fcb6-d4e2-f47d-f96da9c578a6";
    const ETAG: &str = r#"W/"datetime'2026-11-24T03%3A29%3A09.8198228Z'""#;
    const BASE: &str = "http://127.0.0.1:10002/devstoreaccount1/";
    let mut body = format!(
        "--batchresponse_{ID}\r\nContent-Type: multipart/mixed; boundary=changesetresponse_{ID}\r\n\r\n"
    );
    for i in 0..BATCH_ENTITIES {
        body.push_str(&format!(
            concat!(
                "--changesetresponse_{id}\r\nContent-Type: application/http\r\n",
                "Content-Transfer-Encoding: binary\r\n\r\nHTTP/1.1 201 Created\r\n",
                "Content-ID: {i}\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\n",
                "DataServiceVersion: 3.0;\r\nETag: {etag}\r\n",
                "Content-Type: application/json;odata=minimalmetadata;streaming=true;charset=utf-8\r\n",
                "Location: {base}bench(PartitionKey='p0001',RowKey='{i:08}')\r\n\r\n",
                r#"{{"odata.metadata":"{base}$metadata#bench/@Element","odata.etag":"{etag_json}","#,
                r#""PartitionKey":"p0001","RowKey":"{i:08}","Timestamp":"2026-11-24T03:29:09.8198228Z","#,
                r#""Group":"g{g}","N":{i},"Payload":"{payload}"}}"#,
                "\r\n"
            ),
            id = ID,
            i = i,
            g = i % 10,
            etag = ETAG,
            etag_json = ETAG.replace('"', "\\\""),
            base = BASE,
            payload = "x".repeat(100),
        ));
    }
    body.push_str(&format!(
        "--changesetresponse_{ID}--\r\n--batchresponse_{ID}--\r\n"
    ));
    let mut out = format!(
        concat!(
            "HTTP/1.1 202 Accepted\r\n",
            common_headers!("bc53fa3e-fcb6-d4e2-f47d-f96da9c578a6"),
            "content-type: multipart/mixed; boundary=batchresponse_{}\r\n",
            "content-length: {}\r\n",
            date_and_end!()
        ),
        ID,
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// The canned answers, built once.
struct Answers {
    read: Vec<u8>,
    batch: Vec<u8>,
}

impl Answers {
    fn new() -> Self {
        Self {
            read: read_response(),
            batch: batch_response(),
        }
    }
}

/// How the server reads and answers its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Io {
    Threads,
    Epoll,
    TokioCurrent,
    TokioCurrentTimer,
    TokioMulti,
}

/// How a write request is made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SyncMode {
    Direct,
    Fdatasync,
    None,
}

/// The state of the journal's blocks before serving.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Blocks {
    Written,
    Unwritten,
}

/// [`MAX_PAGES`] page-aligned pages of constant bytes, the source of every durable write.
struct AlignedPage {
    ptr: *mut u8,
}

// SAFETY: the page is written once, in `new`, and only read afterwards.
unsafe impl Send for AlignedPage {}
// SAFETY: as above; shared reads of immutable bytes.
unsafe impl Sync for AlignedPage {}

impl AlignedPage {
    fn layout() -> std::alloc::Layout {
        std::alloc::Layout::from_size_align(PAGE * MAX_PAGES, PAGE)
            .expect("pages are a valid layout")
    }

    fn new() -> Self {
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(Self::layout()) };
        assert!(!ptr.is_null(), "out of memory");
        // SAFETY: `ptr` points at PAGE * MAX_PAGES writable bytes just allocated.
        unsafe { std::ptr::write_bytes(ptr, 0xA5, PAGE * MAX_PAGES) };
        Self { ptr }
    }

    fn bytes(&self, pages: usize) -> &[u8] {
        // SAFETY: `ptr` holds PAGE * MAX_PAGES initialised bytes for the life of `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, PAGE * pages.clamp(1, MAX_PAGES)) }
    }
}

impl Drop for AlignedPage {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with the same layout.
        unsafe { std::alloc::dealloc(self.ptr, Self::layout()) };
    }
}

/// The file every acknowledged write is made durable in, one page per durable write.
struct Journal {
    file: File,
    mode: SyncMode,
    page: AlignedPage,
    next: AtomicU64,
}

impl Journal {
    fn create(path: &PathBuf, mode: SyncMode, blocks: Blocks) -> io::Result<Self> {
        let _ = std::fs::remove_file(path);
        let setup = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)?;
        match blocks {
            Blocks::Written => {
                let zeroes = vec![0u8; 1 << 20];
                for chunk in 0..JOURNAL_BYTES / zeroes.len() as u64 {
                    setup.write_all_at(&zeroes, chunk * zeroes.len() as u64)?;
                }
            }
            Blocks::Unwritten => {
                let len = libc::off_t::try_from(JOURNAL_BYTES).expect("journal size fits off_t");
                // SAFETY: plain system call on a descriptor we own.
                if unsafe { libc::fallocate(setup.as_raw_fd(), 0, 0, len) } != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
        }
        setup.sync_all()?;
        let file = match mode {
            SyncMode::Direct => OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_DIRECT | libc::O_DSYNC)
                .open(path)?,
            SyncMode::Fdatasync | SyncMode::None => setup,
        };
        Ok(Self {
            file,
            mode,
            page: AlignedPage::new(),
            next: AtomicU64::new(0),
        })
    }

    /// Makes `pages` pages (at most [`MAX_PAGES`]) durable in one write; every write request
    /// acknowledged after it is covered.
    fn commit(&self, pages: usize) -> io::Result<()> {
        if self.mode == SyncMode::None || pages == 0 {
            return Ok(());
        }
        let bytes = self.page.bytes(pages);
        let len = bytes.len() as u64;
        let mut offset = self.next.fetch_add(len, Ordering::Relaxed) % JOURNAL_BYTES;
        if offset + len > JOURNAL_BYTES {
            offset = 0;
        }
        self.file.write_all_at(bytes, offset)?;
        if self.mode == SyncMode::Fdatasync {
            self.file.sync_data()?;
        }
        Ok(())
    }
}

/// What a complete request at the start of a buffer asks for.
#[derive(Debug, PartialEq, Eq)]
enum Request {
    Read,
    Write,
    Batch,
}

/// The first complete request in `buf` and its length, or `None` until more bytes arrive.
fn frame(buf: &[u8]) -> io::Result<Option<(Request, usize)>> {
    let Some(head_end) = memchr::memmem::find(buf, b"\r\n\r\n") else {
        return Ok(None);
    };
    let head = &buf[..head_end];
    let mut body_len = 0usize;
    for line in head.split(|&b| b == b'\n').skip(1) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        if line[..colon].eq_ignore_ascii_case(b"content-length") {
            body_len = std::str::from_utf8(&line[colon + 1..])
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "bad Content-Length"))?;
        }
    }
    let total = head_end + 4 + body_len;
    if buf.len() < total {
        return Ok(None);
    }
    let line_end = memchr::memchr(b'\n', head).unwrap_or(head.len());
    let request = if head.starts_with(b"GET ") {
        Request::Read
    } else if head.starts_with(b"POST ")
        && memchr::memmem::find(&head[..line_end], b"$batch").is_some()
    {
        Request::Batch
    } else {
        Request::Write
    };
    Ok(Some((request, total)))
}

/// What the answers of one wake-up wait for: one durable write covering [`Durable::pages`].
#[derive(Debug, Default, Clone, Copy)]
struct Durable {
    /// A single-entity write was parsed.
    single: bool,
    /// Pages of the batches parsed.
    batch_pages: usize,
}

impl Durable {
    /// Adds the writes of another connection's requests (they share the durable write).
    fn add(&mut self, other: Self) {
        self.single |= other.single;
        self.batch_pages += other.batch_pages;
    }

    /// Pages of the durable write (0: none): single writes share one page, as the WAL's group
    /// commit packs their frames; each batch adds [`BATCH_PAGES`].
    fn pages(self) -> usize {
        self.batch_pages.max(usize::from(self.single))
    }
}

/// User time spent per read answered (`--spin-us`), nanoseconds.
static SPIN_NANOS: AtomicU64 = AtomicU64::new(0);

/// Spins in user space for [`SPIN_NANOS`]: a server's own work per read, without its calls,
/// to see whether a longer stay on the CPU alone changes the kernel's share.
fn spin_user_time() {
    let nanos = SPIN_NANOS.load(Ordering::Relaxed);
    if nanos == 0 {
        return;
    }
    let start = std::time::Instant::now();
    while start.elapsed().as_nanos() < u128::from(nanos) {
        std::hint::spin_loop();
    }
}

/// Takes every complete request off the front of `input`, appending its answer to `out`;
/// returns the durable write their answers wait for.
fn answer_all(input: &mut Vec<u8>, out: &mut Vec<u8>, answers: &Answers) -> io::Result<Durable> {
    let mut consumed = 0;
    let mut durable = Durable::default();
    while let Some((request, len)) = frame(&input[consumed..])? {
        consumed += len;
        match request {
            Request::Read => {
                spin_user_time();
                out.extend_from_slice(&answers.read);
            }
            Request::Write => {
                durable.single = true;
                out.extend_from_slice(UPSERT_RESPONSE.as_bytes());
            }
            Request::Batch => {
                durable.batch_pages += BATCH_PAGES;
                out.extend_from_slice(&answers.batch);
            }
        }
    }
    input.drain(..consumed);
    Ok(durable)
}

/// Blocking thread per connection; each write request commits on its own.
fn serve_threads(listener: &TcpListener, journal: &Arc<Journal>) -> io::Result<()> {
    let answers = Arc::new(Answers::new());
    for stream in listener.incoming() {
        let mut stream = stream?;
        stream.set_nodelay(true)?;
        let journal = Arc::clone(journal);
        let answers = Arc::clone(&answers);
        std::thread::spawn(move || {
            let _ = serve_blocking_connection(&mut stream, &journal, &answers);
        });
    }
    Ok(())
}

fn serve_blocking_connection(
    stream: &mut TcpStream,
    journal: &Journal,
    answers: &Answers,
) -> io::Result<()> {
    let mut input = Vec::with_capacity(READ_CHUNK);
    let mut out = Vec::with_capacity(READ_CHUNK);
    let mut chunk = vec![0u8; READ_CHUNK];
    loop {
        let n = stream.read(&mut chunk)?;
        if n == 0 {
            return Ok(());
        }
        input.extend_from_slice(&chunk[..n]);
        let durable = answer_all(&mut input, &mut out, answers)?;
        journal.commit(durable.pages())?;
        if !out.is_empty() {
            stream.write_all(&out)?;
            out.clear();
        }
    }
}

/// A connection of the epoll server.
struct EpollConnection {
    stream: TcpStream,
    input: Vec<u8>,
    out: Vec<u8>,
}

fn epoll_add(epoll: i32, fd: i32, token: u64) -> io::Result<()> {
    let mut event = libc::epoll_event {
        events: libc::EPOLLIN as u32,
        u64: token,
    };
    // SAFETY: plain system call; `event` outlives it.
    if unsafe { libc::epoll_ctl(epoll, libc::EPOLL_CTL_ADD, fd, &raw mut event) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// One thread, level-triggered epoll: per wake-up, one `recv` per ready connection, then one
/// durable write for all the write requests completed, then the answers.
fn serve_epoll(listener: &TcpListener, journal: &Journal) -> io::Result<()> {
    let answers = Answers::new();
    listener.set_nonblocking(true)?;
    // SAFETY: plain system call.
    let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    if epoll < 0 {
        return Err(io::Error::last_os_error());
    }
    epoll_add(epoll, listener.as_raw_fd(), LISTENER_TOKEN)?;
    let mut connections = std::collections::HashMap::<u64, EpollConnection>::new();
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; EPOLL_EVENTS];
    let mut answered = Vec::with_capacity(EPOLL_EVENTS);
    let mut chunk = vec![0u8; READ_CHUNK];
    loop {
        let max = i32::try_from(EPOLL_EVENTS).expect("event count fits i32");
        // SAFETY: `events` holds `max` entries.
        let ready = unsafe { libc::epoll_wait(epoll, events.as_mut_ptr(), max, -1) };
        if ready < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        let mut durable = Durable::default();
        answered.clear();
        for event in &events[..usize::try_from(ready).unwrap_or(0)] {
            let token = event.u64;
            if token == LISTENER_TOKEN {
                while let Ok((stream, _)) = listener.accept() {
                    stream.set_nodelay(true)?;
                    stream.set_nonblocking(true)?;
                    let fd = stream.as_raw_fd();
                    let token = u64::try_from(fd).expect("descriptors are non-negative");
                    epoll_add(epoll, fd, token)?;
                    let connection = EpollConnection {
                        stream,
                        input: Vec::with_capacity(READ_CHUNK),
                        out: Vec::with_capacity(READ_CHUNK),
                    };
                    connections.insert(token, connection);
                }
                continue;
            }
            let Some(connection) = connections.get_mut(&token) else {
                continue;
            };
            let closed = match connection.stream.read(&mut chunk) {
                Ok(0) => true,
                Ok(n) => {
                    connection.input.extend_from_slice(&chunk[..n]);
                    match answer_all(&mut connection.input, &mut connection.out, &answers) {
                        Ok(d) => {
                            durable.add(d);
                            answered.push(token);
                            false
                        }
                        Err(_) => true,
                    }
                }
                Err(err) => err.kind() != io::ErrorKind::WouldBlock,
            };
            if closed {
                // Closing the descriptor removes it from the epoll set.
                connections.remove(&token);
            }
        }
        journal.commit(durable.pages())?;
        for token in &answered {
            let Some(connection) = connections.get_mut(token) else {
                continue;
            };
            if connection.out.is_empty() {
                continue;
            }
            // A full send buffer is an anomaly (answers are a few hundred bytes, a batch's
            // 86 KB fit loopback's buffer), met by blocking rather than tracking readiness.
            if let Err(err) = connection.stream.write_all(&connection.out) {
                if err.kind() != io::ErrorKind::WouldBlock {
                    connections.remove(token);
                    continue;
                }
                connection.stream.set_nonblocking(false)?;
                let result = connection.stream.write_all(&connection.out);
                connection.stream.set_nonblocking(true)?;
                if result.is_err() {
                    connections.remove(token);
                    continue;
                }
            }
            connection.out.clear();
        }
    }
}

/// A task per connection on a tokio runtime; a write request commits on the runtime's thread
/// (as strata's inline group commit), holding it for the device's round trips.
fn serve_tokio(
    listener: TcpListener,
    journal: Arc<Journal>,
    workers: usize,
    timer: bool,
) -> io::Result<()> {
    let runtime = if workers <= 1 {
        let mut builder = tokio::runtime::Builder::new_current_thread();
        if timer {
            builder.enable_all();
        } else {
            builder.enable_io();
        }
        builder.build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(workers)
            .enable_io()
            .build()?
    };
    let answers = Arc::new(Answers::new());
    runtime.block_on(async move {
        if timer {
            tokio::spawn(async {
                loop {
                    tokio::time::sleep(IDLE_TIMER).await;
                }
            });
        }
        listener.set_nonblocking(true)?;
        let listener = tokio::net::TcpListener::from_std(listener)?;
        loop {
            let (stream, _) = listener.accept().await?;
            stream.set_nodelay(true)?;
            let journal = Arc::clone(&journal);
            let answers = Arc::clone(&answers);
            tokio::spawn(async move {
                let _ = serve_tokio_connection(stream, &journal, &answers).await;
            });
        }
    })
}

async fn serve_tokio_connection(
    stream: tokio::net::TcpStream,
    journal: &Journal,
    answers: &Answers,
) -> io::Result<()> {
    let mut input = Vec::with_capacity(READ_CHUNK);
    let mut out = Vec::with_capacity(READ_CHUNK);
    let mut chunk = vec![0u8; READ_CHUNK];
    let mut stream = stream;
    loop {
        // `poll_read`, not `readable` + `try_read`: it clears the readiness after a short
        // read, as hyper's reads do, which saves the `recv` that would meet EAGAIN.
        let n = std::future::poll_fn(|cx| {
            let mut buf = tokio::io::ReadBuf::new(&mut chunk);
            std::pin::Pin::new(&mut stream)
                .poll_read(cx, &mut buf)
                .map_ok(|()| buf.filled().len())
        })
        .await?;
        if n == 0 {
            return Ok(());
        }
        input.extend_from_slice(&chunk[..n]);
        let durable = answer_all(&mut input, &mut out, answers)?;
        journal.commit(durable.pages())?;
        let mut sent = 0;
        while sent < out.len() {
            match stream.try_write(&out[sent..]) {
                Ok(n) => sent += n,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => stream.writable().await?,
                Err(err) => return Err(err),
            }
        }
        out.clear();
    }
}

/// Command-line options.
struct Args {
    addr: SocketAddr,
    io: Io,
    sync: SyncMode,
    blocks: Blocks,
    file: PathBuf,
    spin_us: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        addr: "127.0.0.1:10002".parse().expect("a valid address"),
        io: Io::Epoll,
        sync: SyncMode::Direct,
        blocks: Blocks::Written,
        file: std::env::temp_dir().join("request_floor.journal"),
        spin_us: 0,
    };
    let mut argv = std::env::args().skip(1);
    while let Some(flag) = argv.next() {
        let value = argv.next().ok_or(format!("{flag} needs a value"))?;
        match (flag.as_str(), value.as_str()) {
            ("--addr", v) => args.addr = v.parse().map_err(|e| format!("--addr {v}: {e}"))?,
            ("--io", "threads") => args.io = Io::Threads,
            ("--io", "epoll") => args.io = Io::Epoll,
            ("--io", "tokio-current") => args.io = Io::TokioCurrent,
            ("--io", "tokio-current-timer") => args.io = Io::TokioCurrentTimer,
            ("--io", "tokio-multi") => args.io = Io::TokioMulti,
            ("--sync", "direct") => args.sync = SyncMode::Direct,
            ("--sync", "fdatasync") => args.sync = SyncMode::Fdatasync,
            ("--sync", "none") => args.sync = SyncMode::None,
            ("--blocks", "written") => args.blocks = Blocks::Written,
            ("--blocks", "unwritten") => args.blocks = Blocks::Unwritten,
            ("--file", v) => args.file = PathBuf::from(v),
            ("--spin-us", v) => {
                args.spin_us = v.parse().map_err(|e| format!("--spin-us {v}: {e}"))?
            }
            _ => return Err(format!("unknown option {flag} {value}")),
        }
    }
    Ok(args)
}

fn main() -> io::Result<()> {
    let args = match parse_args() {
        Ok(args) => args,
        Err(message) => {
            eprintln!(
                "request_floor: {message}\nusage: request_floor [--addr A] \
                 [--io threads|epoll|tokio-current|tokio-current-timer|tokio-multi] [--sync direct|fdatasync|none] \
                 [--blocks written|unwritten] [--file PATH] [--spin-us N]"
            );
            std::process::exit(2);
        }
    };
    SPIN_NANOS.store(args.spin_us.saturating_mul(1000), Ordering::Relaxed);
    let journal = Arc::new(Journal::create(&args.file, args.sync, args.blocks)?);
    let listener = TcpListener::bind(args.addr)?;
    eprintln!(
        "request_floor: {:?} / {:?} / {:?} on http://{}",
        args.io,
        args.sync,
        args.blocks,
        listener.local_addr()?
    );
    match args.io {
        Io::Threads => serve_threads(&listener, &journal),
        Io::Epoll => serve_epoll(&listener, &journal),
        Io::TokioCurrent => serve_tokio(listener, journal, 1, false),
        Io::TokioCurrentTimer => serve_tokio(listener, journal, 1, true),
        Io::TokioMulti => serve_tokio(listener, journal, 2, false),
    }
}

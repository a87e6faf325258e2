//! A request body over its cap: the 413 `RequestBodyTooLarge` reaches a client that sends the
//! whole body before it reads (Node's http, which `@azure/data-tables` uses), and one that waits
//! for `100 Continue` is answered without being asked for the body.
#![allow(clippy::unwrap_used)]

mod server_support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, SystemTime};

use server_support::{ACCOUNT, TestServer};
use strata::Options;

const DECLARED: usize = 5 * 1024 * 1024;

/// A server with table `Big`, and a connection to it.
fn connect() -> (TestServer, TcpStream) {
    let served = TestServer::start(Options::default(), |account| {
        account.create_table("Big").unwrap();
    });
    let stream = TcpStream::connect(served.server.addr()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    (served, stream)
}

/// The head of a signed insert into `Big` declaring a [`DECLARED`]-byte body.
fn insert_head(served: &TestServer, extra: &str) -> String {
    let date = httpdate::fmt_http_date(SystemTime::now());
    let message = format!("POST\n\napplication/json\n{date}\n/{ACCOUNT}/{ACCOUNT}/Big");
    format!(
        "POST /{ACCOUNT}/Big HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
         x-ms-date: {date}\r\nAuthorization: {}\r\n{extra}Content-Length: {DECLARED}\r\n\r\n",
        served.authorization(&message)
    )
}

/// Reads the server's answer and checks it is the service's 413 `RequestBodyTooLarge`.
fn assert_refused(stream: &mut TcpStream) {
    let answer = answer(stream);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("RequestBodyTooLarge"), "{answer}");
}

/// What the server has answered once its error code arrived (or the connection ended).
fn answer(stream: &mut TcpStream) -> String {
    let mut answer = Vec::new();
    let mut piece = [0_u8; 4096];
    while !String::from_utf8_lossy(&answer).contains("RequestBodyTooLarge") {
        match stream.read(&mut piece) {
            Ok(0) | Err(_) => break,
            Ok(read) => answer.extend_from_slice(&piece[..read]),
        }
    }
    String::from_utf8_lossy(&answer).into_owned()
}

#[test]
fn a_body_declared_over_the_limit_is_answered_413_before_any_of_it_is_sent() {
    let (served, mut stream) = connect();
    stream
        .write_all(insert_head(&served, "").as_bytes())
        .unwrap();
    // No body byte is sent: the answer must come without it.
    assert_refused(&mut stream);
}

#[test]
fn a_body_over_the_limit_sent_in_full_is_answered_413_not_reset() {
    let (served, mut stream) = connect();
    stream
        .write_all(insert_head(&served, "").as_bytes())
        .unwrap();
    // A server that closed on the unread body would reset the connection under this write.
    stream
        .write_all(&vec![b' '; DECLARED])
        .expect("the server reads a refused body instead of resetting the connection");
    assert_refused(&mut stream);
}

#[test]
fn a_body_over_the_limit_awaiting_100_continue_is_refused_without_asking_for_it() {
    let (served, mut stream) = connect();
    let head = insert_head(&served, "Expect: 100-continue\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    // Everything the server sends until it closes the connection (an end of stream, not the
    // client's read timeout): the 413 and no `100 Continue`.
    let mut transcript = Vec::new();
    stream
        .read_to_end(&mut transcript)
        .expect("the server closes the connection after its 413");
    let transcript = String::from_utf8_lossy(&transcript);
    assert!(transcript.starts_with("HTTP/1.1 413"), "{transcript}");
    assert!(transcript.contains("RequestBodyTooLarge"), "{transcript}");
    assert!(!transcript.contains("100 Continue"), "{transcript}");
}

//! Fuzz target: the `$batch` multipart parser of the REST server.

use crate::server::batch::parse;
use crate::server::limits::BATCH_MAX_PARTS;
use crate::server::route;

/// The first line of `data` is the multipart boundary, the rest the body. Parsing never
/// panics and reads exactly what the delimiter search reads (`parse_by_search`: the same
/// operations, or the same error); what it accepts is at most 100 operations, each with a
/// verb and an origin-form path, whose routes also parse without panicking.
pub fn batch_parse(data: &[u8]) {
    let (boundary, body) = match memchr::memchr(b'\n', data) {
        Some(at) => (
            data.get(..at).unwrap_or_default(),
            data.get(at + 1..).unwrap_or_default(),
        ),
        None => (data, &[][..]),
    };
    let content_type = format!(
        "multipart/mixed; boundary={}",
        String::from_utf8_lossy(boundary).trim()
    );
    let parsed = parse::parse(&content_type, body);
    let searched = parse::parse_by_search(&content_type, body);
    let operations = match (parsed, searched) {
        (Ok(operations), Ok(reference)) => {
            assert_eq!(
                operations, reference,
                "the length skip read other operations"
            );
            operations
        }
        (Err(error), Err(reference)) => {
            assert_eq!(
                (error.to_string(), error.batch_index()),
                (reference.to_string(), reference.batch_index()),
                "the length skip failed otherwise"
            );
            return;
        }
        (parsed, searched) => panic!("the length skip disagrees: {parsed:?} vs {searched:?}"),
    };
    assert!(
        !operations.is_empty(),
        "an accepted batch holds an operation"
    );
    assert!(
        operations.len() <= BATCH_MAX_PARTS,
        "more than 100 operations accepted"
    );
    for operation in &operations {
        assert!(!operation.method.is_empty(), "an operation without a verb");
        assert!(operation.path.starts_with('/'), "a path not in origin form");
        let _ = route::parse(operation.path, operation.query);
        let _ = crate::server::json::parse_entity(operation.body, None);
    }
}

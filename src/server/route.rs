//! Request targets: which account and resource a path names, and its query parameters.
//!
//! Path-style addressing as the storage emulator uses it: `/{account}/Tables`,
//! `/{account}/Tables('name')`, `/{account}/{table}()`,
//! `/{account}/{table}(PartitionKey='pk',RowKey='rk')`, `/{account}/$batch`. Keys are
//! single-quoted with `'` doubled, and percent-encoded.

use std::borrow::Cow;

use compact_str::CompactString;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC};

use super::error::{Result, ServerError};

/// Characters percent-encoded in a key written into a URL (`odata.id`, `Location`).
pub const KEY_ENCODE_SET: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~')
    .remove(b'\'');

/// Longest path excerpt kept in an error.
pub(super) const PATH_EXCERPT_CHARS: usize = 128;

/// The resource a request path names, below the account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resource {
    /// `/{account}` or `/{account}/`: the service itself (properties, stats).
    Service,
    /// `/{account}/Tables`: the collection of tables.
    Tables,
    /// `/{account}/Tables('name')`: one table, as a member of the collection.
    Table(CompactString),
    /// `/{account}/{table}` or `/{account}/{table}()`: the entities of a table.
    Entities(CompactString),
    /// `/{account}/{table}(PartitionKey='pk',RowKey='rk')`: one entity.
    Entity {
        /// Table name.
        table: CompactString,
        /// PartitionKey.
        partition_key: CompactString,
        /// RowKey.
        row_key: CompactString,
    },
    /// `/{account}/$batch`: an entity group transaction.
    Batch,
    /// `/{account}/{table}/{rest}`: a path below a table's, as an account URL that wrongly
    /// ends with a table name yields (`/{account}/{table}/Tables`). The service reads the first
    /// segment as the table and answers in its terms.
    BelowTable {
        /// The first segment, read as a table name.
        table: CompactString,
        /// The path after it.
        rest: CompactString,
    },
}

impl Resource {
    /// The table this resource belongs to, if any.
    #[must_use]
    pub fn table(&self) -> Option<&str> {
        match self {
            Self::Table(table)
            | Self::Entities(table)
            | Self::Entity { table, .. }
            | Self::BelowTable { table, .. } => Some(table),
            Self::Service | Self::Tables | Self::Batch => None,
        }
    }
}

/// A parsed request target. Names and keys up to 24 bytes are held inline (every request
/// parses one to four of them; as `String`s they were as many allocations).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The account named by the first path segment.
    pub account: CompactString,
    /// The resource below it.
    pub resource: Resource,
    /// Query parameters, percent-decoded, in order.
    pub query: Vec<(String, String)>,
}

impl Target {
    /// The first value of query parameter `name`.
    #[must_use]
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The `$filter` option, or `None` when it is absent or empty.
    ///
    /// The service ignores an empty `$filter=` (the JavaScript SDK sends one for a filter of
    /// `""`) and returns every row, so it must not reach the parser as a syntax error.
    pub fn filter(&self) -> Option<&str> {
        self.param("$filter").filter(|text| !text.is_empty())
    }
}

/// Parses a request path (still percent-encoded) and query string.
///
/// # Errors
/// [`ServerError::InvalidUri`] for a path that names no resource (bad percent-encoding, bad
/// key predicate, extra segments).
pub fn parse(path: &str, query: Option<&str>) -> Result<Target> {
    let invalid = || invalid_uri(path);
    let rest = path.strip_prefix('/').ok_or_else(invalid)?;
    let (account, resource) = split_at_byte(rest, b'/').unwrap_or((rest, ""));
    let account = CompactString::new(decode_cow(account).ok_or_else(invalid)?);
    if account.is_empty() {
        return Err(invalid());
    }
    let resource = decode_cow(resource).ok_or_else(invalid)?;
    let resource = parse_resource(&resource).ok_or_else(invalid)?;
    Ok(Target {
        account,
        resource,
        query: parse_query(query.unwrap_or(""))?,
    })
}

/// Parses the path and query of a request line inside a batch to the resource it names. A
/// path of one segment names its resource relative to the account (`/{table}`,
/// `/{table}(PartitionKey='pk',RowKey='rk')`), as host-style addressing writes it: the
/// legacy SDKs' batches carry such lines even when the batch itself was sent path-style
/// (recorded service traffic of `azure-cosmosdb-table`: `POST /table194014d4 HTTP/1.1`).
/// Longer paths are read as [`parse`] reads them and must name `account`, the account the
/// batch was sent to: a batch is one account's transaction. The query is checked either way.
///
/// # Errors
/// [`ServerError::InvalidUri`] as [`parse`]; [`ServerError::InvalidInput`] for a line naming
/// another account.
pub fn parse_batch_operation(path: &str, query: Option<&str>, account: &str) -> Result<Resource> {
    let relative = path
        .strip_prefix('/')
        .filter(|below| memchr::memchr(b'/', below.as_bytes()).is_none());
    let Some(relative) = relative else {
        let target = parse(path, query)?;
        if !target.account.eq_ignore_ascii_case(account) {
            return Err(ServerError::invalid(format!(
                "the batch operation {} names account {:?}, not {account:?}, the batch's",
                path.chars().take(PATH_EXCERPT_CHARS).collect::<String>(),
                target.account.as_str()
            )));
        }
        return Ok(target.resource);
    };
    let invalid = || invalid_uri(path);
    let resource = decode_cow(relative).ok_or_else(invalid)?;
    let resource = parse_resource(&resource).ok_or_else(invalid)?;
    parse_query(query.unwrap_or(""))?;
    Ok(resource)
}

/// The error of a path that names no resource, with an excerpt of it.
fn invalid_uri(path: &str) -> ServerError {
    ServerError::InvalidUri {
        path: path.chars().take(PATH_EXCERPT_CHARS).collect(),
    }
}

/// Percent-decodes a query component as UTF-8, `+` first becoming a space.
fn decode_form(text: &str) -> Option<String> {
    if memchr::memchr(b'+', text.as_bytes()).is_some() {
        decode_cow(&text.replace('+', " ")).map(Cow::into_owned)
    } else {
        decode_cow(text).map(Cow::into_owned)
    }
}

/// Percent-decodes `text` as UTF-8, borrowing it when it has no `%`. As
/// `percent_encoding::percent_decode_str(text).decode_utf8()` (a `%` not followed by two hex
/// digits stays as it is), but copying the runs between escapes whole: every request's path
/// is decoded, and the generic byte-by-byte decoder cost a thousand instructions per path.
fn decode_cow(text: &str) -> Option<Cow<'_, str>> {
    let bytes = text.as_bytes();
    let Some(first) = memchr::memchr(b'%', bytes) else {
        return Some(Cow::Borrowed(text));
    };
    let mut out = Vec::with_capacity(bytes.len());
    out.extend_from_slice(bytes.get(..first)?);
    let mut at = first;
    while let Some(rest) = bytes.get(at..).filter(|rest| !rest.is_empty()) {
        let escaped = match rest {
            [b'%', high, low, ..] => hex_value(*high).zip(hex_value(*low)),
            _ => None,
        };
        if let Some((high, low)) = escaped {
            out.push((high << 4) | low);
            at += 3;
        } else {
            // A literal byte: the `%` of an invalid escape, or the run up to the next `%`.
            let run = 1 + memchr::memchr(b'%', rest.get(1..)?).unwrap_or(rest.len() - 1);
            out.extend_from_slice(rest.get(..run)?);
            at += run;
        }
    }
    String::from_utf8(out).ok().map(Cow::Owned)
}

/// The value of one hex digit.
const fn hex_value(digit: u8) -> Option<u8> {
    match digit {
        b'0'..=b'9' => Some(digit - b'0'),
        b'a'..=b'f' => Some(digit - b'a' + 10),
        b'A'..=b'F' => Some(digit - b'A' + 10),
        _ => None,
    }
}

/// Parses a query string into decoded pairs. A `+` is a space, as the service reads it: the
/// JavaScript SDK sends a SAS request's `$filter` form-encoded (`TableName+eq+'t'`), and
/// every SDK escapes a literal `+` as `%2B`.
fn parse_query(query: &str) -> Result<Vec<(String, String)>> {
    // A point read has no query: `split` would still set up a char searcher (~170
    // instructions) to find nothing.
    if query.is_empty() {
        return Ok(Vec::new());
    }
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = split_at_byte(pair, b'=').unwrap_or((pair, ""));
            match (decode_form(key), decode_form(value)) {
                (Some(key), Some(value)) => Ok((key, value)),
                _ => Err(ServerError::invalid(format!(
                    "query parameter {:?} is not valid percent-encoded UTF-8",
                    pair.chars().take(PATH_EXCERPT_CHARS).collect::<String>()
                ))),
            }
        })
        .collect()
}

/// Parses the decoded path below the account.
fn parse_resource(resource: &str) -> Option<Resource> {
    let resource = resource.strip_suffix('/').unwrap_or(resource);
    if resource.is_empty() {
        return Some(Resource::Service);
    }
    // The whole rest of the path (~40 bytes for an entity): long enough for `memchr` to beat
    // the byte loop of the short pieces below.
    if memchr::memchr(b'/', resource.as_bytes()).is_some() {
        let (table, rest) = split_at_byte(resource, b'/')?;
        let names_a_table = !table.is_empty()
            && table != "Tables"
            && table != "$batch"
            && find_byte(table, b'(').is_none();
        return names_a_table.then(|| Resource::BelowTable {
            table: table.into(),
            rest: rest.into(),
        });
    }
    if resource == "$batch" {
        return Some(Resource::Batch);
    }
    let Some((name, args)) = split_at_byte(resource, b'(') else {
        return Some(if resource == "Tables" {
            Resource::Tables
        } else {
            Resource::Entities(resource.into())
        });
    };
    let args = args.strip_suffix(')')?;
    if name.is_empty() {
        return None;
    }
    if name == "Tables" {
        if args.is_empty() {
            return Some(Resource::Tables);
        }
        let table = parse_quoted(args)?;
        return Some(Resource::Table(table));
    }
    if args.is_empty() {
        return Some(Resource::Entities(name.into()));
    }
    let (partition_key, row_key) = parse_key_predicate(args)?;
    Some(Resource::Entity {
        table: name.into(),
        partition_key,
        row_key,
    })
}

/// Parses `PartitionKey='a',RowKey='b'` (either order); a quote inside a key is doubled.
pub fn parse_key_predicate(args: &str) -> Option<(CompactString, CompactString)> {
    let mut partition_key = None;
    let mut row_key = None;
    let mut rest = args;
    loop {
        let (name, after) = split_at_byte(rest, b'=')?;
        let (value, after) = split_quoted(after)?;
        let slot = match name.trim() {
            "PartitionKey" => &mut partition_key,
            "RowKey" => &mut row_key,
            _ => return None,
        };
        if slot.replace(value).is_some() {
            return None;
        }
        let after = after.trim_start();
        if after.is_empty() {
            break;
        }
        rest = after.strip_prefix(',')?;
    }
    Some((partition_key?, row_key?))
}

/// The whole of `text` as one quoted literal.
fn parse_quoted(text: &str) -> Option<CompactString> {
    let (value, rest) = split_quoted(text)?;
    rest.is_empty().then_some(value)
}

/// Offset of the first `byte` (ASCII, so a char boundary) in `text`. The pieces of a path
/// searched here are a few bytes long: a byte loop beats `str::find(char)`, which set up a
/// `memchr` for each of the ~7 searches of an entity path (~600 instructions a request).
fn find_byte(text: &str, byte: u8) -> Option<usize> {
    debug_assert!(byte.is_ascii());
    text.bytes().position(|b| b == byte)
}

/// `text.split_once(byte as char)` for an ASCII `byte`, by [`find_byte`].
pub(crate) fn split_at_byte(text: &str, byte: u8) -> Option<(&str, &str)> {
    let at = find_byte(text, byte)?;
    Some((text.get(..at)?, text.get(at + 1..)?))
}

/// Splits a leading `'...'` literal (with `''` as an escaped quote) off `text`.
fn split_quoted(text: &str) -> Option<(CompactString, &str)> {
    let mut rest = text.trim_start().strip_prefix('\'')?;
    // Copied in runs between quotes: every entity request parses two of these, and pushing
    // character by character into a growing string cost more than the rest of the route.
    let mut quote = find_byte(rest, b'\'')?;
    let mut value = CompactString::with_capacity(quote);
    loop {
        value.push_str(rest.get(..quote)?);
        let after = rest.get(quote + 1..)?;
        match after.strip_prefix('\'') {
            Some(more) => {
                value.push('\'');
                rest = more;
                quote = find_byte(rest, b'\'')?;
            }
            None => return Some((value, after)),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn byte_splits_are_str_splits() {
        for text in [
            "",
            "=",
            "a=b",
            "=b",
            "a=",
            "a=b=c",
            "é=ü",
            "x",
            "päth/with(pa=ren's)",
        ] {
            for byte in [b'=', b'/', b'(', b'\'', b'x'] {
                let ch = char::from(byte);
                assert_eq!(
                    split_at_byte(text, byte),
                    text.split_once(ch),
                    "{text:?} {ch:?}"
                );
                assert_eq!(find_byte(text, byte), text.find(ch), "{text:?} {ch:?}");
            }
        }
    }

    #[test]
    fn route_an_empty_filter_is_no_filter() {
        let target = parse("/acct/t()", Some("$filter=&$top=5")).unwrap();
        assert_eq!(target.filter(), None);
        let target = parse("/acct/t()", Some("$filter=a+eq+1")).unwrap();
        assert_eq!(target.filter(), Some("a eq 1"));
        assert_eq!(parse("/acct/t()", None).unwrap().filter(), None);
    }

    #[test]
    fn route_query_plus_is_a_space_and_escaped_plus_is_a_plus() {
        let target = parse(
            "/acct/Tables",
            Some("$filter=TableName+eq+'a%2Bb'&$top=5&sp+ace=x+%2B+y&empty="),
        )
        .unwrap();
        assert_eq!(target.param("$filter"), Some("TableName eq 'a+b'"));
        assert_eq!(target.param("$top"), Some("5"));
        assert_eq!(target.param("sp ace"), Some("x + y"));
        assert_eq!(target.param("empty"), Some(""));
        // A `+` in the path is a literal character of the key.
        let target = parse("/acct/t(PartitionKey='a+b',RowKey='%2B')", None).unwrap();
        assert_eq!(
            target.resource,
            Resource::Entity {
                table: "t".into(),
                partition_key: "a+b".into(),
                row_key: "+".into(),
            }
        );
    }

    #[test]
    fn route_entity_key_predicate_with_doubled_quote_is_decoded() {
        let target = parse(
            "/devstoreaccount1/people(PartitionKey='a%27%27b',RowKey='x%20y')",
            Some("$select=Name"),
        )
        .unwrap();
        assert_eq!(
            target.resource,
            Resource::Entity {
                table: "people".into(),
                partition_key: "a'b".into(),
                row_key: "x y".into()
            }
        );
        assert_eq!(target.param("$select"), Some("Name"));
    }

    #[test]
    fn route_quoted_literals_undouble_quotes_and_need_a_closing_quote() {
        let cases: [(&str, Option<(&str, &str)>); 9] = [
            ("''", Some(("", ""))),
            ("''''", Some(("'", ""))),
            ("'a''''b',x", Some(("a''b", ",x"))),
            (" 'é''ü' rest", Some(("é'ü", " rest"))),
            ("'ab'", Some(("ab", ""))),
            ("'a''", None),
            ("'unterminated", None),
            ("no quote", None),
            ("'", None),
        ];
        for (text, expected) in cases {
            let got = split_quoted(text);
            assert_eq!(
                got.as_ref().map(|(value, rest)| (value.as_str(), *rest)),
                expected,
                "{text:?}"
            );
        }
    }

    #[test]
    fn route_decoding_matches_percent_encoding_on_valid_invalid_and_partial_escapes() {
        for text in [
            "",
            "plain",
            "%27a%27%27b%27",
            "a%20b%2Fc",
            "%e2%82%ac and %E2%82%AC",
            "%",
            "%2",
            "x%G1y",
            "%%41",
            "100%",
            "%41%",
            "%FF",
            "a%C3",
            "é%C3%A9",
        ] {
            let expected = percent_encoding::percent_decode_str(text)
                .decode_utf8()
                .ok()
                .map(Cow::into_owned);
            assert_eq!(decode_cow(text).map(Cow::into_owned), expected, "{text:?}");
        }
        assert!(matches!(decode_cow("no-escape"), Some(Cow::Borrowed(_))));
    }

    #[test]
    fn route_tables_forms_are_recognised() {
        assert_eq!(parse("/a/Tables", None).unwrap().resource, Resource::Tables);
        assert_eq!(
            parse("/a/Tables('t1')", None).unwrap().resource,
            Resource::Table("t1".into())
        );
        assert_eq!(
            parse("/a/t1()", None).unwrap().resource,
            Resource::Entities("t1".into())
        );
        assert_eq!(parse("/a/$batch", None).unwrap().resource, Resource::Batch);
    }

    #[test]
    fn route_a_path_below_a_table_names_that_table() {
        for (path, table, rest) in [
            ("/a/t/extra", "t", "extra"),
            (
                "/a/mytable/Tables('mytable')",
                "mytable",
                "Tables('mytable')",
            ),
            ("/a/a//", "a", ""),
        ] {
            assert_eq!(
                parse(path, None).unwrap().resource,
                Resource::BelowTable {
                    table: table.into(),
                    rest: rest.into()
                },
                "{path}"
            );
        }
    }

    #[test]
    fn route_malformed_paths_are_invalid_uri() {
        for path in [
            "/a/t(PartitionKey='x')",
            "/a/t(PartitionKey='x,RowKey='y')",
            "/a/t(Foo='x',RowKey='y')",
            "/a/Tables/extra",
            "/a/t()/extra",
            "/%FF/t",
            "//t",
        ] {
            assert!(parse(path, None).is_err(), "{path}");
        }
    }

    #[test]
    fn batch_operation_of_one_segment_is_relative_to_the_account_and_checks_its_query() {
        assert_eq!(
            parse_batch_operation("/T", None, "acct").unwrap(),
            Resource::Entities("T".into())
        );
        assert_eq!(
            parse_batch_operation("/acct/T", None, "acct").unwrap(),
            Resource::Entities("T".into())
        );
        for (path, query) in [("/T", Some("%FF")), ("/acct/T", Some("%FF")), ("T", None)] {
            assert!(
                parse_batch_operation(path, query, "acct").is_err(),
                "{path} {query:?}"
            );
        }
    }

    #[test]
    fn batch_operation_naming_another_account_is_invalid_input() {
        let refused = parse_batch_operation("/other/T(PartitionKey='p',RowKey='r')", None, "acct");
        assert!(
            matches!(&refused, Err(ServerError::InvalidInput { reason }) if reason.contains("\"other\"")),
            "{refused:?}"
        );
    }
}

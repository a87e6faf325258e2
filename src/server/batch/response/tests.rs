//! Tests of the batch response writer.
#![allow(clippy::unwrap_used)]
use super::{SuccessParts, VERBATIM_KEY_BYTES, reason, write_address_keys, write_part_status};
use crate::model::{DateTime, Entity, PartitionKey, PropertyName, RowKey, Value};
use crate::server::State;
use crate::server::auth::Principal;
use crate::server::batch::parse::{BatchOperation, parse};
use crate::server::handlers::{Context, prefer_content};
use crate::server::json::{EntityWriter, Links, Metadata, write_etag_text, write_key_predicate};
use crate::server::route;
use crate::table::{Account, ETag, StoredEntity, Written};

/// A part as the writer wrote it before created heads were formatted once: piece by
/// piece, in the order the part reads.
fn part_in_pieces(
    ctx: &Context<'_>,
    links: &Links<'_>,
    written: Written<'_>,
    op: &BatchOperation<'_>,
    insert: bool,
) -> String {
    let mut out = format!(
        "--changesetresponse_{}\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n",
        ctx.request_id
    );
    let entity = written.entity;
    let Some(etag) = written.etag else {
        write_part_status(&mut out, op.echoed_content_id(), 204);
        out.push_str("\r\n\r\n");
        return out;
    };
    let (pk, rk) = (entity.partition_key().as_str(), entity.row_key().as_str());
    let address = |out: &mut String| {
        out.push_str(&format!("{}/{}(", ctx.base, links.table));
        write_key_predicate(out, pk, rk);
        out.push_str(")\r\n");
    };
    let prefer = prefer_content(op.header("prefer"));
    let content = insert && prefer != Some(false);
    write_part_status(
        &mut out,
        op.echoed_content_id(),
        if content { 201 } else { 204 },
    );
    out.push_str("ETag: ");
    write_etag_text(&mut out, etag.timestamp());
    out.push_str("\r\n");
    if !insert {
        out.push_str("DataServiceId: ");
        address(&mut out);
        out.push_str("\r\n\r\n");
        return out;
    }
    if content {
        if prefer == Some(true) {
            out.push_str("Preference-Applied: return-content\r\n");
        }
        out.push_str("Content-Type: ");
        out.push_str(ctx.metadata.content_type());
        out.push_str("\r\nLocation: ");
        address(&mut out);
        out.push_str("\r\n");
        let mut entity = entity.clone();
        entity.set_timestamp(etag.timestamp());
        EntityWriter::new(ctx.metadata, links, false, None)
            .write_entity(&mut out, &StoredEntity { entity, etag });
        out.push_str("\r\n");
    } else {
        out.push_str("Preference-Applied: return-no-content\r\nDataServiceId: ");
        address(&mut out);
        out.push_str("Location: ");
        address(&mut out);
        out.push_str("\r\n\r\n");
    }
    out
}

#[test]
fn batch_parts_written_from_created_heads_are_the_parts_written_in_pieces() {
    let dir = tempfile::tempdir().unwrap();
    let state = State::new(
        Account::open(dir.path().join("db.strata")).unwrap(),
        "acct".to_owned(),
        vec![1; 32],
    );
    let target = route::parse("/acct/$batch", None).unwrap();
    let headers = hyper::HeaderMap::new();
    let prefers = [
        "",
        "Prefer: return-content\r\n",
        "Prefer: return-no-content\r\n",
    ];
    let mut body =
        String::from("--batch_1\r\nContent-Type: multipart/mixed; boundary=changeset_2\r\n\r\n");
    for (index, prefer) in prefers.iter().enumerate() {
        for content_id in ["", "Content-ID: 12\r\n", "Content-ID: x y\r\n"] {
            body.push_str(&format!(
                "--changeset_2\r\nContent-Type: application/http\r\n{content_id}\r\n\
                 POST http://h/acct/t HTTP/1.1\r\n{prefer}Content-Type: application/json\r\n\r\n\
                 {{\"PartitionKey\":\"p\",\"RowKey\":\"{index}\"}}\r\n"
            ));
        }
    }
    body.push_str("--changeset_2--\r\n--batch_1--\r\n");
    let ops = parse("multipart/mixed; boundary=batch_1", body.as_bytes()).unwrap();
    assert_eq!(ops.len(), 9);
    let keys = [("p", "r1"), ("p", "it's"), ("p q", "a b"), ("x", "é")];
    let entities: Vec<Entity> = keys
        .iter()
        .map(|(pk, rk)| {
            let mut entity =
                Entity::new(PartitionKey::new(*pk).unwrap(), RowKey::new(*rk).unwrap());
            entity
                .set(PropertyName::new("N").unwrap(), Value::Int32(7))
                .unwrap();
            entity
        })
        .collect();
    let stamps = [
        DateTime::from_ticks(638_000_000_000_000_000).unwrap(),
        DateTime::from_ticks(638_000_000_000_000_001).unwrap(),
    ];
    for metadata in [Metadata::None, Metadata::Minimal, Metadata::Full] {
        let ctx = Context {
            state: &state,
            method: "POST",
            target: &target,
            headers: &headers,
            principal: &Principal::Key,
            base: "http://h/acct",
            metadata,
            request_id: "rid-1",
        };
        let links = Links {
            base: ctx.base,
            account: "acct",
            table: "t",
        };
        // One writer through every part, as a changeset's parts go: its heads are
        // reused across parts and remade when the Timestamp changes.
        let mut parts = SuccessParts::new(&ctx, &links);
        for stamp in stamps {
            for (op, entity) in ops.iter().zip(entities.iter().cycle()) {
                for (insert, etag) in [
                    (true, Some(ETag::from_timestamp(stamp))),
                    (false, Some(ETag::from_timestamp(stamp))),
                    (false, None),
                ] {
                    let written = Written {
                        entity,
                        row: None,
                        etag,
                    };
                    let mut ours = String::new();
                    parts.write(&mut ours, written, op, insert).unwrap();
                    let expected = part_in_pieces(&ctx, &links, written, op, insert);
                    assert_eq!(ours, expected, "{metadata:?} {insert} {:?}", op.content_id);
                }
            }
        }
    }
}

#[test]
fn batch_part_status_lines_name_the_status_and_its_reason_then_the_content_id() {
    for status in [200, 201, 204, 404, 409] {
        let mut out = String::new();
        write_part_status(&mut out, Some("3"), status);
        assert_eq!(
            out,
            format!(
                "\r\nHTTP/1.1 {status} {}\r\nContent-ID: 3\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-cache\r\nDataServiceVersion: 3.0;\r\n",
                reason(status)
            )
        );
    }
}

#[test]
fn batch_verbatim_key_bytes_are_ascii_letters_digits_and_four_marks() {
    for byte in 0..=u8::MAX {
        assert_eq!(
            VERBATIM_KEY_BYTES.get(usize::from(byte)),
            Some(&(byte.is_ascii_alphanumeric() || b"-_.~".contains(&byte))),
            "{byte}"
        );
    }
}

#[test]
fn batch_address_keys_are_the_key_predicate() {
    let keys = [
        "",
        "p0000",
        "a-b_c.d~e",
        "it's",
        "a b",
        "x/y",
        "é",
        "100%",
        "a+b",
        "q?#&=",
    ];
    for pk in keys {
        for rk in keys {
            let (mut ours, mut general) = (String::new(), String::new());
            write_address_keys(&mut ours, pk, rk);
            write_key_predicate(&mut general, pk, rk);
            assert_eq!(ours, general, "{pk:?} {rk:?}");
        }
    }
}

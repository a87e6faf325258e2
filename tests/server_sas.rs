//! Shared access signatures and table ACLs over HTTP: a table SAS's permissions and
//! PartitionKey range, and a stored access policy backing a SAS by its id.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod server_support;

use server_support::ACCOUNT;
use server_support::signed::Fixture;
use strata::server::auth::shared_key::sign;

fn table_sas(f: &Fixture, table: &str, sp: &str, spk: &str, epk: &str) -> String {
    let se = "2099-01-01T00:00:00Z";
    let sv = "2019-02-02";
    let message = format!(
        "{sp}\n\n{se}\n/table/{ACCOUNT}/{}\n\n\n\n{sv}\n{spk}\n\n{epk}\n",
        table.to_ascii_lowercase()
    );
    let sig = sign(&f.served.key, &message);
    let sig: String =
        percent_encoding::utf8_percent_encode(&sig, percent_encoding::NON_ALPHANUMERIC).to_string();
    format!("sv={sv}&tn={table}&sp={sp}&se={se}&spk={spk}&epk={epk}&sig={sig}")
}

#[test]
fn server_table_sas_enforces_permissions_and_partition_range() {
    let f = Fixture::new();
    f.create_table("Ranged");
    for pk in ["a", "m", "z"] {
        f.insert(
            "Ranged",
            &format!(r#"{{"PartitionKey":"{pk}","RowKey":"r"}}"#),
        );
    }
    let sas = table_sas(&f, "Ranged", "ra", "b", "n");
    let query = f.send("GET", &format!("/Ranged()?{sas}"), &[], None, false);
    assert_eq!(query.status, 200, "{}", query.body);
    let pks: Vec<String> = query.json()["value"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["PartitionKey"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(pks, ["m"]);
    let inside = f.send(
        "POST",
        &format!("/Ranged?{sas}"),
        &[("Content-Type", "application/json")],
        Some(br#"{"PartitionKey":"c","RowKey":"r"}"#),
        false,
    );
    assert_eq!(inside.status, 201, "{}", inside.body);
    let outside = f.send(
        "POST",
        &format!("/Ranged?{sas}"),
        &[("Content-Type", "application/json")],
        Some(br#"{"PartitionKey":"x","RowKey":"r"}"#),
        false,
    );
    assert_eq!(outside.status, 403);
    let delete = f.send(
        "DELETE",
        &format!("/Ranged(PartitionKey='m',RowKey='r')?{sas}"),
        &[("If-Match", "*")],
        None,
        false,
    );
    assert_eq!(delete.status, 403, "sp=ra grants no delete");
    let other = f.send("GET", &format!("/Tables?{sas}"), &[], None, false);
    assert_eq!(other.status, 403);
    let tampered = sas.replace("epk=n", "epk=zz");
    let tampered = f.send("GET", &format!("/Ranged()?{tampered}"), &[], None, false);
    assert_eq!(
        (tampered.status, tampered.error_code().as_str()),
        (403, "AuthenticationFailed")
    );
}

#[test]
fn server_table_acl_round_trips_and_backs_a_sas_by_policy_id() {
    let f = Fixture::new();
    f.create_table("Guarded");
    let xml = "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers><SignedIdentifier><Id>readers</Id><AccessPolicy><Expiry>2099-01-01T00:00:00Z</Expiry><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>";
    let set = f.send(
        "PUT",
        "/Guarded?comp=acl",
        &[("Content-Type", "application/xml")],
        Some(xml.as_bytes()),
        true,
    );
    assert_eq!(set.status, 204, "{}", set.body);
    let got = f.send("GET", "/Guarded?comp=acl", &[], None, true);
    assert!(got.body.contains("<Id>readers</Id>"), "{}", got.body);
    let message = format!("\n\n\n/table/{ACCOUNT}/guarded\nreaders\n\n\n2019-02-02\n\n\n\n");
    let sig = percent_encoding::utf8_percent_encode(
        &sign(&f.served.key, &message),
        percent_encoding::NON_ALPHANUMERIC,
    )
    .to_string();
    let sas = format!("sv=2019-02-02&tn=Guarded&si=readers&sig={sig}");
    let read = f.send("GET", &format!("/Guarded()?{sas}"), &[], None, false);
    assert_eq!(read.status, 200, "{}", read.body);
    let write = f.send(
        "POST",
        &format!("/Guarded?{sas}"),
        &[("Content-Type", "application/json")],
        Some(br#"{"PartitionKey":"p","RowKey":"r"}"#),
        false,
    );
    assert_eq!(write.status, 403);
    let listed = f.send("GET", "/Tables", &[], None, true);
    assert_eq!(
        listed.json()["value"].as_array().unwrap().len(),
        1,
        "ACL table hidden"
    );
}

#[test]
fn server_table_sas_batch_reaches_only_its_table_through_relative_request_lines() {
    // The legacy SDKs name the table relative to the account in a batch's request lines; a
    // table SAS must bind those exactly as it binds full paths.
    let f = Fixture::new();
    f.create_table("Ranged");
    f.create_table("Other");
    let sas = table_sas(&f, "Ranged", "raud", "a", "z");
    let batch = |line: &str| {
        format!(
            "--batch_b\r\nContent-Type: multipart/mixed; boundary=changeset_c\r\n\r\n\
             --changeset_c\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n\r\n\
             {line} HTTP/1.1\r\nContent-Type: application/json\r\n\r\n\
             {{\"PartitionKey\":\"k\",\"RowKey\":\"r\"}}\r\n--changeset_c--\r\n--batch_b--\r\n"
        )
    };
    let send = |line: &str| {
        f.send(
            "POST",
            &format!("/$batch?{sas}"),
            &[("Content-Type", "multipart/mixed; boundary=batch_b")],
            Some(batch(line).as_bytes()),
            false,
        )
    };
    let own = send("POST /Ranged");
    assert_eq!(own.status, 202, "{}", own.body);
    assert!(own.body.contains("201 Created"), "{}", own.body);
    for line in ["POST /Other", "POST http://x/Other", "POST /Ranged%2FOther"] {
        // Refused whole (403) or in its one failing part (a path below a table).
        let refused = send(line);
        assert!(
            !refused.body.contains("201 Created"),
            "{line}: {}",
            refused.body
        );
    }
    let nothing = f.send(
        "GET",
        "/Other(PartitionKey='k',RowKey='r')",
        &[],
        None,
        true,
    );
    assert_eq!(nothing.status, 404, "{}", nothing.body);
}

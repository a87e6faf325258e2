//! `strata demo`: a file-less tour of the data model and the codecs.

use std::time::Instant;

use strata::codec::{key, property};
use strata::model::{DateTime, Entity, Guid, PartitionKey, PropertyName, RowKey, Value};

use super::CliError;

fn data_err(what: &str, err: impl std::fmt::Display) -> CliError {
    CliError::Data(format!("{what}: {err}"))
}

/// Builds an IoT reading entity, encodes key and value, decodes both back and prints them.
pub fn run(args: &[String]) -> Result<(), CliError> {
    if let Some(extra) = args.first() {
        return Err(CliError::Usage(format!(
            "demo takes no arguments (got '{extra}')"
        )));
    }
    let pk = PartitionKey::new("device-0042").map_err(|e| data_err("PartitionKey", e))?;
    let rk = RowKey::new("2518061445599999999").map_err(|e| data_err("RowKey", e))?;
    let mut entity = Entity::new(pk.clone(), rk.clone());
    let properties = [
        ("Temperature", Value::Double(21.375)),
        ("Humidity", Value::Int32(48)),
        ("Reading", Value::Int64(9_007_199_254_740_993)),
        ("Online", Value::Boolean(true)),
        (
            "SampledAt",
            Value::DateTime(
                DateTime::parse("2026-11-22T06:00:00.1234567Z")
                    .map_err(|e| data_err("DateTime", e))?,
            ),
        ),
        (
            "Batch",
            Value::Guid(
                Guid::parse("6f9619ff-8b86-d011-b42d-00cf4fc964ff")
                    .map_err(|e| data_err("Guid", e))?,
            ),
        ),
        (
            "Site",
            Value::string("Oslo/Harbour").map_err(|e| data_err("String", e))?,
        ),
        (
            "Raw",
            Value::binary(vec![0x0a, 0x1b, 0x2c]).map_err(|e| data_err("Binary", e))?,
        ),
    ];
    for (name, value) in properties {
        let name = PropertyName::new(name).map_err(|e| data_err("property name", e))?;
        entity.set(name, value).map_err(|e| data_err("entity", e))?;
    }
    entity.set_timestamp(DateTime::now());

    let started = Instant::now();
    let key_bytes = key::encode(7, &pk, &rk);
    let value_bytes = property::encode(&entity);
    let (table_id, pk2, rk2) = key::decode(&key_bytes).map_err(|e| data_err("key decode", e))?;
    let decoded =
        property::decode(pk2, rk2, &value_bytes).map_err(|e| data_err("value decode", e))?;
    let elapsed = started.elapsed();
    if decoded != entity {
        return Err(CliError::Data(
            "decoded entity differs from the original".to_owned(),
        ));
    }

    println!("entity in table #{table_id}:");
    println!("  PartitionKey = {}", decoded.partition_key().as_str());
    println!("  RowKey       = {}", decoded.row_key().as_str());
    if let Some(ts) = decoded.timestamp() {
        println!("  Timestamp    = {}", ts.to_iso8601());
    }
    for (name, value) in decoded.properties() {
        println!(
            "  {:<12} = {:<40} ({})",
            name.as_str(),
            value.to_wire(),
            value.edm_type().name()
        );
    }
    println!();
    println!(
        "engine key   : {} bytes  {}",
        key_bytes.len(),
        hex(&key_bytes)
    );
    println!(
        "stored value : {} bytes (entity size as the service counts it: {} bytes)",
        value_bytes.len(),
        entity.size()
    );
    println!("encode + decode round trip: {elapsed:?}, bit-exact");
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

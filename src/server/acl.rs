//! Stored access policies (Get/Set Table ACL): their XML form and where they are kept.
//!
//! The table layer has no ACL slot in its catalog yet, so the server keeps each table's
//! policies in one entity of its own reserved table [`ACL_TABLE`] (PartitionKey = the table
//! name lower-cased, RowKey = [`ACL_ROW_KEY`], property `SignedIdentifiers` = the policies'
//! canonical XML). That table is hidden from Query Tables and refused to REST clients; it also
//! holds the account's service properties (see `service_properties.rs`).

use super::error::{Result, ServerError};
use super::limits::{ACL_ID_MAX_CHARS, ACL_MAX_POLICIES};
use super::xml::{element, escape, unescape, without_declaration};
use crate::model::{DateTime, Entity, PartitionKey, PropertyName, RowKey, Value};
use crate::table::{Account, TableError};

/// The reserved table holding every table's stored access policies.
pub const ACL_TABLE: &str = "StrataAccessPolicies";
/// The RowKey of a table's policy entity.
const ACL_ROW_KEY: &str = "acl";
/// The property holding the policies' XML.
const ACL_PROPERTY: &str = "SignedIdentifiers";

/// One stored access policy: fields a table SAS naming it by `si` inherits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccessPolicy {
    /// The policy id (`si`), at most 64 characters.
    pub id: String,
    /// Start of validity (ISO 8601), if set.
    pub start: Option<String>,
    /// End of validity (ISO 8601), if set.
    pub expiry: Option<String>,
    /// Permission letters (`raud`), if set.
    pub permission: Option<String>,
}

/// Whether `name` is the server's reserved ACL table (compared as table names are).
#[must_use]
pub fn is_reserved_table(name: &str) -> bool {
    name.eq_ignore_ascii_case(ACL_TABLE)
}

/// Parses a `<SignedIdentifiers>` document; an empty body clears the policies.
///
/// # Errors
/// [`ServerError::InvalidXmlDocument`] for malformed XML, more than five policies, an id
/// over 64 characters or a time that is not ISO 8601.
pub fn parse_xml(body: &str) -> Result<Vec<AccessPolicy>> {
    let invalid = |reason: &str| ServerError::InvalidXmlDocument {
        reason: reason.to_owned(),
    };
    let body = body.trim();
    if body.is_empty() {
        return Ok(Vec::new());
    }
    let body = without_declaration(body)?;
    if body == "<SignedIdentifiers/>" || body == "<SignedIdentifiers />" {
        return Ok(Vec::new());
    }
    let inner = element(body, "SignedIdentifiers")?
        .ok_or_else(|| invalid("the root element is not SignedIdentifiers"))?;
    let mut policies = Vec::new();
    let mut rest = inner;
    while let Some(start) = rest.find("<SignedIdentifier>") {
        let (block, after) = rest
            .get(start..)
            .and_then(|tail| {
                let end = tail.find("</SignedIdentifier>")?;
                Some((
                    tail.get(..end)?,
                    tail.get(end + "</SignedIdentifier>".len()..)?,
                ))
            })
            .ok_or_else(|| invalid("unterminated SignedIdentifier"))?;
        rest = after;
        let id = element(block, "Id")?.ok_or_else(|| invalid("a SignedIdentifier has no Id"))?;
        let id = unescape(id.trim());
        if id.is_empty() || id.chars().count() > ACL_ID_MAX_CHARS {
            return Err(invalid("a policy Id must have 1 to 64 characters"));
        }
        let field = |name: &str| -> Result<Option<String>> {
            Ok(element(block, name)?
                .map(|text| unescape(text.trim()))
                .filter(|text| !text.is_empty()))
        };
        let policy = AccessPolicy {
            id,
            start: field("Start")?,
            expiry: field("Expiry")?,
            permission: field("Permission")?,
        };
        let mut policy = policy;
        // Kept in the service's form (seven fractional digits), as Get Table ACL returns it.
        for time in [&mut policy.start, &mut policy.expiry]
            .into_iter()
            .flatten()
        {
            *time = DateTime::parse(time)
                .map_err(|_| invalid("a policy time is not ISO 8601"))?
                .to_string();
        }
        policies.push(policy);
        if policies.len() > ACL_MAX_POLICIES {
            return Err(invalid("more than 5 stored access policies"));
        }
    }
    Ok(policies)
}

/// The canonical XML of `policies`, as Get Table ACL returns it.
#[must_use]
pub fn to_xml(policies: &[AccessPolicy]) -> String {
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers>");
    for policy in policies {
        xml.push_str("<SignedIdentifier><Id>");
        xml.push_str(&escape(&policy.id));
        xml.push_str("</Id>");
        let fields = [
            ("Start", &policy.start),
            ("Expiry", &policy.expiry),
            ("Permission", &policy.permission),
        ];
        // An identifier with no policy fields has no AccessPolicy element, as the service
        // answers (the SDKs then report the identifier's policy as absent).
        if fields.iter().any(|(_, value)| value.is_some()) {
            xml.push_str("<AccessPolicy>");
            for (name, value) in fields {
                if let Some(value) = value {
                    xml.push_str(&format!("<{name}>{}</{name}>", escape(value)));
                }
            }
            xml.push_str("</AccessPolicy>");
        }
        xml.push_str("</SignedIdentifier>");
    }
    xml.push_str("</SignedIdentifiers>");
    xml
}

/// The policies of `table` (none if never set).
///
/// # Errors
/// Table-layer failures; [`ServerError::Internal`] if the stored XML no longer parses.
pub fn load(account: &Account, table: &str) -> Result<Vec<AccessPolicy>> {
    match load_text(
        account,
        &table.to_ascii_lowercase(),
        ACL_ROW_KEY,
        ACL_PROPERTY,
    )? {
        Some(xml) => parse_xml(&xml).map_err(|error| ServerError::Internal {
            reason: format!("stored policies of table {table:?} are corrupt: {error}"),
        }),
        None => Ok(Vec::new()),
    }
}

/// Replaces the policies of `table`.
///
/// # Errors
/// Table-layer failures.
pub fn store(account: &Account, table: &str, policies: &[AccessPolicy]) -> Result<()> {
    store_text(
        account,
        &table.to_ascii_lowercase(),
        ACL_ROW_KEY,
        ACL_PROPERTY,
        to_xml(policies),
    )
}

/// The String property `property` of the reserved table's entity (`partition`, `row`); `None`
/// if the table, the entity or the property is absent.
///
/// # Errors
/// Table-layer failures.
pub(super) fn load_text(
    account: &Account,
    partition: &str,
    row: &str,
    property: &str,
) -> Result<Option<String>> {
    if !account.table_exists(ACL_TABLE) {
        return Ok(None);
    }
    match account.table(ACL_TABLE)?.get(partition, row, None) {
        Ok(mut stored) => match stored.entity.remove(property) {
            Some(Value::String(text)) => Ok(Some(text)),
            _ => Ok(None),
        },
        Err(TableError::ResourceNotFound { .. }) => Ok(None),
        Err(error) => Err(error.into()),
    }
}

/// Writes `text` as the String property `property` of the reserved table's entity
/// (`partition`, `row`), replacing the entity; creates the table on first use.
///
/// # Errors
/// Table-layer failures.
pub(super) fn store_text(
    account: &Account,
    partition: &str,
    row: &str,
    property: &str,
    text: String,
) -> Result<()> {
    if !account.table_exists(ACL_TABLE) {
        match account.create_table(ACL_TABLE) {
            Ok(_) | Err(TableError::TableAlreadyExists { .. }) => {}
            Err(error) => return Err(error.into()),
        }
    }
    let mut entity = Entity::new(PartitionKey::new(partition)?, RowKey::new(row)?);
    entity.set(PropertyName::new(property)?, Value::string(text)?)?;
    account.table(ACL_TABLE)?.insert_or_replace(&entity)?;
    Ok(())
}

/// Forgets the policies of a deleted table.
///
/// # Errors
/// Table-layer failures.
pub fn forget(account: &Account, table: &str) -> Result<()> {
    if !account.table_exists(ACL_TABLE) {
        return Ok(());
    }
    match account.table(ACL_TABLE)?.delete(
        &table.to_ascii_lowercase(),
        ACL_ROW_KEY,
        crate::table::IfMatch::Any,
    ) {
        Ok(()) | Err(TableError::ResourceNotFound { .. }) => Ok(()),
        Err(error) => Err(error.into()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn acl_xml_round_trips_through_parse_and_format() {
        let policies = vec![AccessPolicy {
            id: "read-only".into(),
            start: Some("2024-01-01T00:00:00.0000000Z".into()),
            expiry: Some("2030-01-01T00:00:00.0000000Z".into()),
            permission: Some("r".into()),
        }];
        assert_eq!(parse_xml(&to_xml(&policies)).unwrap(), policies);
    }

    #[test]
    fn acl_identifier_without_fields_has_no_access_policy_and_times_take_seven_digits() {
        let xml = "<SignedIdentifiers><SignedIdentifier><Id>empty</Id></SignedIdentifier>\
                   <SignedIdentifier><Id>t</Id><AccessPolicy><Start>2024-01-01T00:00:00Z</Start>\
                   </AccessPolicy></SignedIdentifier></SignedIdentifiers>";
        let policies = parse_xml(xml).unwrap();
        assert_eq!(
            policies.get(1).and_then(|policy| policy.start.as_deref()),
            Some("2024-01-01T00:00:00.0000000Z")
        );
        let written = to_xml(&policies);
        assert!(
            written.contains("<Id>empty</Id></SignedIdentifier>"),
            "{written}"
        );
        assert_eq!(parse_xml(&written).unwrap(), policies);
    }

    #[test]
    fn acl_more_than_five_policies_is_rejected() {
        let policies: Vec<AccessPolicy> = (0..6)
            .map(|i| AccessPolicy {
                id: format!("p{i}"),
                ..AccessPolicy::default()
            })
            .collect();
        assert!(matches!(
            parse_xml(&to_xml(&policies)),
            Err(ServerError::InvalidXmlDocument { .. })
        ));
    }
}

//! The little XML the table service speaks (ACLs, service properties): flat documents of known
//! elements, read by name. No attributes, namespaces or mixed content are needed, and a
//! general XML parser would accept far more than the service does.

use super::error::{Result, ServerError};

/// `body` without its leading `<?xml ...?>` declaration, trimmed.
///
/// # Errors
/// [`ServerError::InvalidXmlDocument`] if the declaration is not closed.
pub fn without_declaration(body: &str) -> Result<&str> {
    let body = body.trim();
    match body.strip_prefix("<?xml") {
        Some(rest) => Ok(rest
            .split_once("?>")
            .ok_or_else(|| ServerError::InvalidXmlDocument {
                reason: "unterminated XML declaration".to_owned(),
            })?
            .1
            .trim()),
        None => Ok(body),
    }
}

/// The text between `<name>` and `</name>` in `xml` (empty for `<name/>`), if the element is
/// there.
pub fn element<'x>(xml: &'x str, name: &str) -> Result<Option<&'x str>> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let Some(start) = xml.find(&open) else {
        let empty = [format!("<{name}/>"), format!("<{name} />")];
        return Ok(empty.iter().any(|tag| xml.contains(tag)).then_some(""));
    };
    let after = xml.get(start + open.len()..).unwrap_or("");
    let end = after
        .find(&close)
        .ok_or_else(|| ServerError::InvalidXmlDocument {
            reason: format!("element {name} is not closed"),
        })?;
    Ok(after.get(..end))
}

/// Resolves the five predefined XML entities.
pub fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Escapes text for an XML element.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// `xml` with its first `name` element (open to close tag) cut out, so a child element of the
/// same name as one of its parent's (`Enabled` in `RetentionPolicy`) is not read as the parent's.
pub fn without_element(xml: &str, name: &str) -> String {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    match (xml.find(&open), xml.find(&close)) {
        (Some(start), Some(end)) if end >= start => {
            let mut out = String::with_capacity(xml.len());
            out.push_str(xml.get(..start).unwrap_or(""));
            out.push_str(xml.get(end + close.len()..).unwrap_or(""));
            out
        }
        _ => xml.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn xml_element_reads_open_close_and_self_closing_forms() {
        let xml = "<A><B>x</B><C/><D /></A>";
        assert_eq!(element(xml, "B").unwrap(), Some("x"));
        assert_eq!(element(xml, "C").unwrap(), Some(""));
        assert_eq!(element(xml, "D").unwrap(), Some(""));
        assert_eq!(element(xml, "E").unwrap(), None);
        assert!(matches!(
            element("<B>x", "B"),
            Err(ServerError::InvalidXmlDocument { .. })
        ));
    }

    #[test]
    fn xml_without_element_hides_a_childs_same_named_field() {
        let xml = "<R><Enabled>true</Enabled></R><Enabled>false</Enabled>";
        let own = without_element(xml, "R");
        assert_eq!(element(&own, "Enabled").unwrap(), Some("false"));
        assert_eq!(without_element("<X>1</X>", "R"), "<X>1</X>");
    }

    #[test]
    fn xml_escape_and_unescape_round_trip() {
        let text = "a<b>&'\"c";
        assert_eq!(unescape(&escape(text)), text);
        assert_eq!(
            without_declaration("<?xml version=\"1.0\"?> <A/>").unwrap(),
            "<A/>"
        );
    }
}

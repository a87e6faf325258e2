//! Table service properties (Get/Set Table Service Properties): the account's analytics
//! logging, hour and minute metrics and CORS rules, their XML form and where they are kept.
//!
//! strata writes no analytics logs or metrics and answers no CORS pre-flight: the settings are
//! validated, stored and returned as the service does, so SDK code that configures them runs
//! unchanged. They live in the server's reserved table ([`super::acl::ACL_TABLE`]) as one
//! entity, PartitionKey [`PROPERTIES_PARTITION`] (no table name can collide: `$` is not a
//! table-name character), property `StorageServiceProperties` = the canonical XML.

use super::acl;
use super::error::{Result, ServerError};
use super::xml::{element, escape, unescape, without_declaration, without_element};
use crate::table::Account;

/// PartitionKey of the properties entity in the reserved table.
const PROPERTIES_PARTITION: &str = "$service";
/// RowKey of the properties entity.
const PROPERTIES_ROW_KEY: &str = "properties";
/// The property holding the properties' XML.
const PROPERTIES_PROPERTY: &str = "StorageServiceProperties";
/// Most CORS rules an account may have.
const MAX_CORS_RULES: usize = 5;
/// Longest retention a logging or metrics policy may ask for, in days.
const MAX_RETENTION_DAYS: u32 = 365;
/// Methods a CORS rule may allow.
const CORS_METHODS: [&str; 8] = [
    "DELETE", "GET", "HEAD", "MERGE", "POST", "OPTIONS", "PUT", "PATCH",
];

/// How long logs or metrics are kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RetentionPolicy {
    /// Whether a retention limit applies.
    pub enabled: bool,
    /// Days kept (1..=365), present exactly when `enabled`.
    pub days: Option<u32>,
}

/// Analytics logging settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Logging {
    /// Analytics version (`1.0`).
    pub version: String,
    /// Whether delete requests are logged.
    pub delete: bool,
    /// Whether read requests are logged.
    pub read: bool,
    /// Whether write requests are logged.
    pub write: bool,
    /// How long logs are kept.
    pub retention: RetentionPolicy,
}

/// Hour or minute metrics settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metrics {
    /// Analytics version (`1.0`).
    pub version: String,
    /// Whether metrics are collected.
    pub enabled: bool,
    /// Whether per-API metrics are collected, present exactly when `enabled`.
    pub include_apis: Option<bool>,
    /// How long metrics are kept.
    pub retention: RetentionPolicy,
}

/// One CORS rule; lists are kept as the comma-separated text the service returns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CorsRule {
    /// `AllowedOrigins`.
    pub allowed_origins: String,
    /// `AllowedMethods`.
    pub allowed_methods: String,
    /// `MaxAgeInSeconds`.
    pub max_age_seconds: u32,
    /// `ExposedHeaders`.
    pub exposed_headers: String,
    /// `AllowedHeaders`.
    pub allowed_headers: String,
}

/// The account's service properties.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceProperties {
    /// `Logging`.
    pub logging: Logging,
    /// `HourMetrics`.
    pub hour_metrics: Metrics,
    /// `MinuteMetrics`.
    pub minute_metrics: Metrics,
    /// `Cors`.
    pub cors: Vec<CorsRule>,
}

impl Default for ServiceProperties {
    /// A new account's: nothing logged, no metrics, no CORS rules.
    fn default() -> Self {
        let metrics = Metrics {
            version: "1.0".to_owned(),
            enabled: false,
            include_apis: None,
            retention: RetentionPolicy::default(),
        };
        Self {
            logging: Logging {
                version: "1.0".to_owned(),
                delete: false,
                read: false,
                write: false,
                retention: RetentionPolicy::default(),
            },
            hour_metrics: metrics.clone(),
            minute_metrics: metrics,
            cors: Vec::new(),
        }
    }
}

fn invalid(reason: impl Into<String>) -> ServerError {
    ServerError::InvalidXmlDocument {
        reason: reason.into(),
    }
}

/// The trimmed, unescaped text of the required element `name` of `section`.
fn required(xml: &str, section: &str, name: &str) -> Result<String> {
    element(xml, name)?
        .map(|text| unescape(text.trim()))
        .ok_or_else(|| invalid(format!("{section} has no {name} element")))
}

/// A boolean element, its case ignored: the legacy Python SDKs write Python's `True` and
/// `False`, and the service accepts them (recorded traffic of `azure-storage` 0.34).
fn boolean(xml: &str, section: &str, name: &str) -> Result<bool> {
    let text = required(xml, section, name)?;
    if text.eq_ignore_ascii_case("true") {
        Ok(true)
    } else if text.eq_ignore_ascii_case("false") {
        Ok(false)
    } else {
        Err(invalid(format!(
            "{section}/{name} is {text:?}, not true or false"
        )))
    }
}

fn version(xml: &str, section: &str) -> Result<String> {
    let version = required(xml, section, "Version")?;
    if version == "1.0" {
        Ok(version)
    } else {
        Err(invalid(format!("{section}/Version {version:?} is not 1.0")))
    }
}

fn retention(xml: &str, section: &str) -> Result<RetentionPolicy> {
    let policy = element(xml, "RetentionPolicy")?
        .ok_or_else(|| invalid(format!("{section} has no RetentionPolicy element")))?;
    let section = format!("{section}/RetentionPolicy");
    let enabled = boolean(policy, &section, "Enabled")?;
    let days = match element(policy, "Days")?.map(str::trim) {
        Some(text) if enabled => {
            let days = text
                .parse::<u32>()
                .ok()
                .filter(|days| (1..=MAX_RETENTION_DAYS).contains(days))
                .ok_or_else(|| invalid(format!("{section}/Days {text:?} is not 1 to 365")))?;
            Some(days)
        }
        None if enabled => return Err(invalid(format!("{section} is enabled without Days"))),
        _ => None,
    };
    Ok(RetentionPolicy { enabled, days })
}

fn logging(xml: &str) -> Result<Logging> {
    let own = without_element(xml, "RetentionPolicy");
    Ok(Logging {
        version: version(&own, "Logging")?,
        delete: boolean(&own, "Logging", "Delete")?,
        read: boolean(&own, "Logging", "Read")?,
        write: boolean(&own, "Logging", "Write")?,
        retention: retention(xml, "Logging")?,
    })
}

fn metrics(xml: &str, section: &str) -> Result<Metrics> {
    let own = without_element(xml, "RetentionPolicy");
    let enabled = boolean(&own, section, "Enabled")?;
    let include_apis = match element(&own, "IncludeAPIs")? {
        Some(_) if enabled => Some(boolean(&own, section, "IncludeAPIs")?),
        None if enabled => {
            return Err(invalid(format!("{section} is enabled without IncludeAPIs")));
        }
        _ => None,
    };
    Ok(Metrics {
        version: version(&own, section)?,
        enabled,
        include_apis,
        retention: retention(xml, section)?,
    })
}

fn cors_rule(xml: &str) -> Result<CorsRule> {
    let section = "CorsRule";
    let allowed_methods = required(xml, section, "AllowedMethods")?;
    for method in allowed_methods.split(',').map(str::trim) {
        if !CORS_METHODS.contains(&method) {
            return Err(invalid(format!(
                "CorsRule/AllowedMethods has {method:?}, not one of {}",
                CORS_METHODS.join(", ")
            )));
        }
    }
    let allowed_origins = required(xml, section, "AllowedOrigins")?;
    if allowed_origins.is_empty() {
        return Err(invalid("CorsRule/AllowedOrigins is empty"));
    }
    let max_age = required(xml, section, "MaxAgeInSeconds")?;
    let max_age_seconds = max_age.parse::<u32>().map_err(|_| {
        invalid(format!(
            "CorsRule/MaxAgeInSeconds {max_age:?} is not a number"
        ))
    })?;
    Ok(CorsRule {
        allowed_origins,
        allowed_methods,
        max_age_seconds,
        exposed_headers: required(xml, section, "ExposedHeaders")?,
        allowed_headers: required(xml, section, "AllowedHeaders")?,
    })
}

fn cors(xml: &str) -> Result<Vec<CorsRule>> {
    let mut rules = Vec::new();
    let mut rest = xml;
    while let Some(start) = rest.find("<CorsRule>") {
        let tail = rest.get(start + "<CorsRule>".len()..).unwrap_or("");
        let end = tail
            .find("</CorsRule>")
            .ok_or_else(|| invalid("element CorsRule is not closed"))?;
        rules.push(cors_rule(tail.get(..end).unwrap_or(""))?);
        if rules.len() > MAX_CORS_RULES {
            return Err(invalid("more than 5 CORS rules"));
        }
        rest = tail.get(end + "</CorsRule>".len()..).unwrap_or("");
    }
    Ok(rules)
}

/// Applies a Set Table Service Properties body to `current`: each of `Logging`,
/// `HourMetrics`, `MinuteMetrics` and `Cors` the body has replaces the stored one; the ones it
/// leaves out are kept, as the service does.
///
/// # Errors
/// [`ServerError::InvalidXmlDocument`] for malformed XML, a missing required field, a version
/// other than 1.0, a retention outside 1 to 365 days or a bad CORS rule.
pub fn apply_xml(current: &ServiceProperties, body: &str) -> Result<ServiceProperties> {
    let body = without_declaration(body)?;
    let root = element(body, "StorageServiceProperties")?
        .ok_or_else(|| invalid("the root element is not StorageServiceProperties"))?;
    let mut next = current.clone();
    if let Some(xml) = element(root, "Logging")? {
        next.logging = logging(xml)?;
    }
    if let Some(xml) = element(root, "HourMetrics")? {
        next.hour_metrics = metrics(xml, "HourMetrics")?;
    }
    if let Some(xml) = element(root, "MinuteMetrics")? {
        next.minute_metrics = metrics(xml, "MinuteMetrics")?;
    }
    if let Some(xml) = element(root, "Cors")? {
        next.cors = cors(xml)?;
    }
    Ok(next)
}

fn push_element(xml: &mut String, name: &str, text: &str) {
    xml.push('<');
    xml.push_str(name);
    xml.push('>');
    xml.push_str(&escape(text));
    xml.push_str("</");
    xml.push_str(name);
    xml.push('>');
}

fn push_retention(xml: &mut String, policy: &RetentionPolicy) {
    xml.push_str("<RetentionPolicy>");
    push_element(xml, "Enabled", bool_text(policy.enabled));
    if let Some(days) = policy.days {
        push_element(xml, "Days", &days.to_string());
    }
    xml.push_str("</RetentionPolicy>");
}

fn push_metrics(xml: &mut String, name: &str, metrics: &Metrics) {
    xml.push('<');
    xml.push_str(name);
    xml.push('>');
    push_element(xml, "Version", &metrics.version);
    push_element(xml, "Enabled", bool_text(metrics.enabled));
    if let Some(include) = metrics.include_apis {
        push_element(xml, "IncludeAPIs", bool_text(include));
    }
    push_retention(xml, &metrics.retention);
    xml.push_str("</");
    xml.push_str(name);
    xml.push('>');
}

const fn bool_text(value: bool) -> &'static str {
    if value { "true" } else { "false" }
}

/// The canonical XML of `properties`, as Get Table Service Properties returns it.
#[must_use]
pub fn to_xml(properties: &ServiceProperties) -> String {
    let mut xml =
        String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties>");
    let logging = &properties.logging;
    xml.push_str("<Logging>");
    push_element(&mut xml, "Version", &logging.version);
    push_element(&mut xml, "Delete", bool_text(logging.delete));
    push_element(&mut xml, "Read", bool_text(logging.read));
    push_element(&mut xml, "Write", bool_text(logging.write));
    push_retention(&mut xml, &logging.retention);
    xml.push_str("</Logging>");
    push_metrics(&mut xml, "HourMetrics", &properties.hour_metrics);
    push_metrics(&mut xml, "MinuteMetrics", &properties.minute_metrics);
    xml.push_str("<Cors>");
    for rule in &properties.cors {
        xml.push_str("<CorsRule>");
        push_element(&mut xml, "AllowedOrigins", &rule.allowed_origins);
        push_element(&mut xml, "AllowedMethods", &rule.allowed_methods);
        push_element(
            &mut xml,
            "MaxAgeInSeconds",
            &rule.max_age_seconds.to_string(),
        );
        push_element(&mut xml, "ExposedHeaders", &rule.exposed_headers);
        push_element(&mut xml, "AllowedHeaders", &rule.allowed_headers);
        xml.push_str("</CorsRule>");
    }
    xml.push_str("</Cors></StorageServiceProperties>");
    xml
}

/// The account's service properties (a new account's defaults if never set).
///
/// # Errors
/// Table-layer failures; [`ServerError::Internal`] if the stored XML no longer parses.
pub fn load(account: &Account) -> Result<ServiceProperties> {
    let defaults = ServiceProperties::default();
    match acl::load_text(
        account,
        PROPERTIES_PARTITION,
        PROPERTIES_ROW_KEY,
        PROPERTIES_PROPERTY,
    )? {
        Some(xml) => apply_xml(&defaults, &xml).map_err(|error| ServerError::Internal {
            reason: format!("stored service properties are corrupt: {error}"),
        }),
        None => Ok(defaults),
    }
}

/// Replaces the account's service properties.
///
/// # Errors
/// Table-layer failures.
pub fn store(account: &Account, properties: &ServiceProperties) -> Result<()> {
    acl::store_text(
        account,
        PROPERTIES_PARTITION,
        PROPERTIES_ROW_KEY,
        PROPERTIES_PROPERTY,
        to_xml(properties),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn full() -> ServiceProperties {
        ServiceProperties {
            logging: Logging {
                version: "1.0".into(),
                delete: true,
                read: false,
                write: true,
                retention: RetentionPolicy {
                    enabled: true,
                    days: Some(7),
                },
            },
            hour_metrics: Metrics {
                version: "1.0".into(),
                enabled: true,
                include_apis: Some(true),
                retention: RetentionPolicy {
                    enabled: true,
                    days: Some(30),
                },
            },
            minute_metrics: ServiceProperties::default().minute_metrics,
            cors: vec![CorsRule {
                allowed_origins: "https://a.example,https://b.example".into(),
                allowed_methods: "GET,PUT".into(),
                max_age_seconds: 3600,
                exposed_headers: "x-ms-meta-*".into(),
                allowed_headers: String::new(),
            }],
        }
    }

    #[test]
    fn service_properties_xml_round_trips_through_apply_and_format() {
        let properties = full();
        let parsed = apply_xml(&ServiceProperties::default(), &to_xml(&properties)).unwrap();
        assert_eq!(parsed, properties);
    }

    #[test]
    fn service_properties_sections_left_out_are_kept() {
        let stored = full();
        let body = "<?xml version=\"1.0\"?><StorageServiceProperties><MinuteMetrics>\
                    <Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>false</IncludeAPIs>\
                    <RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics>\
                    </StorageServiceProperties>";
        let next = apply_xml(&stored, body).unwrap();
        assert_eq!(next.logging, stored.logging);
        assert_eq!(next.hour_metrics, stored.hour_metrics);
        assert_eq!(next.cors, stored.cors);
        assert!(next.minute_metrics.enabled);
        assert_eq!(next.minute_metrics.include_apis, Some(false));
    }

    #[test]
    fn service_properties_empty_cors_clears_the_rules() {
        for cors in ["<Cors/>", "<Cors />", "<Cors></Cors>"] {
            let body = format!("<StorageServiceProperties>{cors}</StorageServiceProperties>");
            assert!(apply_xml(&full(), &body).unwrap().cors.is_empty(), "{cors}");
        }
    }

    #[test]
    fn service_properties_invalid_documents_are_rejected() {
        let retention_off = "<RetentionPolicy><Enabled>false</Enabled></RetentionPolicy>";
        let logging = |fields: &str| {
            format!(
                "<StorageServiceProperties><Logging>{fields}</Logging></StorageServiceProperties>"
            )
        };
        let rule = |methods: &str| {
            format!(
                "<CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>{methods}</AllowedMethods>\
                 <MaxAgeInSeconds>5</MaxAgeInSeconds><ExposedHeaders/><AllowedHeaders/></CorsRule>"
            )
        };
        let bad = [
            "<NotProperties/>".to_owned(),
            "<StorageServiceProperties><Logging><Version>1.0</Version>".to_owned(),
            logging(&format!(
                "<Version>2.0</Version><Delete>true</Delete><Read>true</Read><Write>true</Write>{retention_off}"
            )),
            logging(&format!(
                "<Version>1.0</Version><Delete>yes</Delete><Read>true</Read><Write>true</Write>{retention_off}"
            )),
            logging(
                "<Version>1.0</Version><Delete>true</Delete><Read>true</Read><Write>true</Write>",
            ),
            logging(
                "<Version>1.0</Version><Delete>true</Delete><Read>true</Read><Write>true</Write>\
                 <RetentionPolicy><Enabled>true</Enabled><Days>366</Days></RetentionPolicy>",
            ),
            logging(
                "<Version>1.0</Version><Delete>true</Delete><Read>true</Read><Write>true</Write>\
                 <RetentionPolicy><Enabled>true</Enabled></RetentionPolicy>",
            ),
            format!(
                "<StorageServiceProperties><HourMetrics><Version>1.0</Version><Enabled>true</Enabled>\
                 {retention_off}</HourMetrics></StorageServiceProperties>"
            ),
            format!(
                "<StorageServiceProperties><Cors>{}</Cors></StorageServiceProperties>",
                rule("GET,FETCH")
            ),
            format!(
                "<StorageServiceProperties><Cors>{}</Cors></StorageServiceProperties>",
                rule("GET").repeat(6)
            ),
        ];
        for body in bad {
            assert!(
                matches!(
                    apply_xml(&ServiceProperties::default(), &body),
                    Err(ServerError::InvalidXmlDocument { .. })
                ),
                "{body}"
            );
        }
    }

    #[test]
    fn service_properties_booleans_are_read_whatever_their_case_as_the_service_reads_them() {
        let body = "<?xml version='1.0' encoding='utf-8'?>\n<StorageServiceProperties><Logging>\
<Version>1.0</Version><Delete>True</Delete><Read>FALSE</Read><Write>true</Write>\
<RetentionPolicy><Enabled>False</Enabled></RetentionPolicy></Logging><HourMetrics>\
<Version>1.0</Version><Enabled>True</Enabled><IncludeAPIs>False</IncludeAPIs>\
<RetentionPolicy><Enabled>True</Enabled><Days>7</Days></RetentionPolicy></HourMetrics>\
<Cors /></StorageServiceProperties>";
        let applied = apply_xml(&ServiceProperties::default(), body).unwrap();
        assert!(applied.logging.delete && !applied.logging.read && applied.logging.write);
        assert!(applied.hour_metrics.enabled);
        let refused = apply_xml(
            &ServiceProperties::default(),
            &body.replace("<Delete>True</Delete>", "<Delete>yes</Delete>"),
        );
        assert!(matches!(
            refused,
            Err(ServerError::InvalidXmlDocument { .. })
        ));
    }
}

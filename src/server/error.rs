//! Errors of the REST server: every way a request can fail, each with the service's error
//! code and HTTP status.

use crate::model::ModelError;
use crate::table::TableError;

/// Result alias of the server.
pub type Result<T, E = ServerError> = std::result::Result<T, E>;

/// Why a request failed. Each variant maps to one Azure error code ([`ServerError::code`])
/// and HTTP status ([`ServerError::status`]); the table layer's errors pass through unchanged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// The table layer refused the operation.
    #[error(transparent)]
    Table(#[from] TableError),
    /// Missing, malformed, expired or wrong credentials.
    #[error("server failed to authenticate the request: {reason}")]
    AuthenticationFailed {
        /// What was wrong with the credentials.
        reason: String,
    },
    /// Valid credentials that do not grant this operation (SAS permission, table or key range).
    #[error("this request is not authorized to perform this operation: {reason}")]
    AuthorizationPermissionMismatch {
        /// What the credentials lack.
        reason: String,
    },
    /// An account SAS that does not grant the table service (`ss` without `t`).
    #[error("this request is not authorized to use this service: {reason}")]
    AuthorizationServiceMismatch {
        /// What the SAS grants instead.
        reason: String,
    },
    /// An account SAS whose resource types (`srt`) do not cover the operation.
    #[error("this request is not authorized for this resource type: {reason}")]
    AuthorizationResourceTypeMismatch {
        /// The resource type the operation needs.
        reason: String,
    },
    /// Delete Table of a table that does not exist: the service answers `ResourceNotFound`
    /// there, not the `TableNotFound` of operations inside a table.
    #[error("table {table:?} does not exist")]
    TableToDeleteNotFound {
        /// The name asked for.
        table: String,
    },
    /// A write sent to the read-only secondary location (`/{account}-secondary/...`).
    #[error("the secondary location of {account:?} is read-only")]
    SecondaryIsReadOnly {
        /// The account.
        account: String,
    },
    /// A path below a table's (`/{account}/{table}/...`) that is not an insert: the service
    /// reads the rest as a key predicate of the wrong arity.
    #[error("the path {path:?} names a resource below table {table:?}")]
    KeyCountMismatch {
        /// The table the first segment names.
        table: String,
        /// The offending path (cut short).
        path: String,
    },
    /// A body of a media type the operation cannot read (a batch posted below a table).
    #[error("the media type {content_type:?} is not supported here")]
    MediaTypeNotSupported {
        /// The request's `Content-Type`.
        content_type: String,
    },
    /// A query parameter whose value the resource does not take (`restype=service` below the
    /// account).
    #[error("query parameter {name}={value:?} does not apply to this resource")]
    InvalidQueryParameterValue {
        /// The parameter.
        name: String,
        /// Its value.
        value: String,
    },
    /// The path names no resource of the service.
    #[error("the requested URI does not represent any resource on the server: {path:?}")]
    InvalidUri {
        /// The offending path (cut short).
        path: String,
    },
    /// The request target is longer than [`URL_MAX_BYTES`](super::limits::URL_MAX_BYTES).
    #[error("the request URL is {len} bytes, over the {limit}-byte limit")]
    UrlTooLong {
        /// Its length.
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// The HTTP verb is not allowed on this resource.
    #[error("the HTTP verb {method} is not supported on this resource")]
    UnsupportedHttpVerb {
        /// The verb.
        method: String,
    },
    /// A malformed request: bad JSON, a bad query parameter, a bad multipart body.
    #[error("{reason}")]
    InvalidInput {
        /// What was wrong.
        reason: String,
    },
    /// A header value that cannot be read.
    #[error("the value of HTTP header {header} is invalid: {reason}")]
    InvalidHeaderValue {
        /// The header name.
        header: &'static str,
        /// What was wrong.
        reason: String,
    },
    /// An inserted entity lacks a key property.
    #[error("the entity has no {key}")]
    PropertiesNeedValue {
        /// `PartitionKey` or `RowKey`.
        key: &'static str,
    },
    /// A header the operation requires is absent (`If-Match` on delete).
    #[error("the required HTTP header {header} is missing")]
    MissingRequiredHeader {
        /// The header name.
        header: &'static str,
    },
    /// A malformed XML body (Set Table ACL).
    #[error("the XML body is not valid: {reason}")]
    InvalidXmlDocument {
        /// What was wrong.
        reason: String,
    },
    /// The body is over the limit of its request kind; it was not read past the limit.
    #[error("the request body is over the {limit}-byte limit")]
    RequestBodyTooLarge {
        /// The limit that applies.
        limit: usize,
    },
    /// The client did not send its body in time, or the connection broke mid-body.
    #[error("the request body could not be read: {reason}")]
    BodyReadFailed {
        /// What happened.
        reason: String,
    },
    /// A stored row could not be written out (its property bytes are corrupt).
    #[error(
        "the stored entity ({partition_key:?}, {row_key:?}) of table {table:?} is corrupt: {source}"
    )]
    CorruptRow {
        /// The table.
        table: String,
        /// The row's PartitionKey.
        partition_key: String,
        /// The row's RowKey.
        row_key: String,
        /// What is wrong with its bytes.
        source: Box<crate::codec::CodecError>,
    },
    /// The server failed (a worker died): never the client's fault.
    #[error("internal server error: {reason}")]
    Internal {
        /// What failed.
        reason: String,
    },
}

impl ServerError {
    /// A [`ServerError::InvalidInput`] with this reason.
    pub fn invalid(reason: impl Into<String>) -> Self {
        Self::InvalidInput {
            reason: reason.into(),
        }
    }

    /// The Azure error code (`x-ms-error-code`).
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::Table(error) => error.azure_code(),
            Self::AuthenticationFailed { .. } => "AuthenticationFailed",
            Self::AuthorizationPermissionMismatch { .. } | Self::SecondaryIsReadOnly { .. } => {
                "AuthorizationPermissionMismatch"
            }
            Self::AuthorizationServiceMismatch { .. } => "AuthorizationServiceMismatch",
            Self::TableToDeleteNotFound { .. } => "ResourceNotFound",
            Self::AuthorizationResourceTypeMismatch { .. } => "AuthorizationResourceTypeMismatch",
            Self::InvalidUri { .. } | Self::UrlTooLong { .. } => "InvalidUri",
            Self::UnsupportedHttpVerb { .. } => "UnsupportedHttpVerb",
            Self::InvalidInput { .. }
            | Self::BodyReadFailed { .. }
            | Self::KeyCountMismatch { .. } => "InvalidInput",
            Self::MediaTypeNotSupported { .. } => "MediaTypeNotSupported",
            Self::InvalidQueryParameterValue { .. } => "InvalidQueryParameterValue",
            Self::InvalidHeaderValue { .. } => "InvalidHeaderValue",
            Self::InvalidXmlDocument { .. } => "InvalidXmlDocument",
            Self::MissingRequiredHeader { .. } => "MissingRequiredHeader",
            Self::PropertiesNeedValue { .. } => "PropertiesNeedValue",
            Self::RequestBodyTooLarge { .. } => "RequestBodyTooLarge",
            Self::Internal { .. } | Self::CorruptRow { .. } => "InternalError",
        }
    }

    /// The HTTP status.
    #[must_use]
    pub fn status(&self) -> u16 {
        match self {
            Self::Table(error) => error.http_status(),
            Self::AuthenticationFailed { .. }
            | Self::AuthorizationPermissionMismatch { .. }
            | Self::AuthorizationServiceMismatch { .. }
            | Self::AuthorizationResourceTypeMismatch { .. }
            | Self::SecondaryIsReadOnly { .. } => 403,
            Self::TableToDeleteNotFound { .. } => 404,
            Self::UrlTooLong { .. } => 414,
            Self::UnsupportedHttpVerb { .. } => 405,
            Self::RequestBodyTooLarge { .. } => 413,
            Self::MediaTypeNotSupported { .. } => 415,
            Self::Internal { .. } | Self::CorruptRow { .. } => 500,
            Self::KeyCountMismatch { .. }
            | Self::InvalidQueryParameterValue { .. }
            | Self::InvalidUri { .. }
            | Self::InvalidInput { .. }
            | Self::InvalidHeaderValue { .. }
            | Self::InvalidXmlDocument { .. }
            | Self::MissingRequiredHeader { .. }
            | Self::PropertiesNeedValue { .. }
            | Self::BodyReadFailed { .. } => 400,
        }
    }

    /// The sentence the service words this error's code with: messages start with it, and
    /// the SDKs match some of them (the Python SDK turns a table-name or missing-key error
    /// into its own `ValueError`, and adds hints to authentication and missing-table errors).
    #[must_use]
    pub fn service_sentence(&self) -> &'static str {
        // Errors that share a code with others but are worded apart (the official SDK's tests
        // look for these words).
        match self {
            Self::SecondaryIsReadOnly { .. } => return "Write operations are not allowed.",
            Self::KeyCountMismatch { .. } => {
                return "The number of keys specified in the URI does not match number of key \
                        properties for the resource.";
            }
            _ => {}
        }
        let mut table_error = match self {
            Self::Table(error) => Some(error),
            _ => None,
        };
        // A batch operation's error is worded as the operation's own (the SDK matches the
        // name-length sentence in a failed batch too).
        while let Some(TableError::BatchOperationFailed { source, .. }) = table_error {
            table_error = Some(source.as_ref());
        }
        if let Some(TableError::Model(ModelError::TableNameLength { .. })) = table_error {
            return "The specified resource name length is not within the permissible limits.";
        }
        code_sentence(self.code())
    }

    /// What strata knows about this error beyond the service's sentence.
    #[must_use]
    pub fn detail(&self) -> String {
        match self {
            Self::AuthenticationFailed { reason }
            | Self::AuthorizationPermissionMismatch { reason }
            | Self::AuthorizationServiceMismatch { reason }
            | Self::AuthorizationResourceTypeMismatch { reason } => reason.clone(),
            other => other.to_string(),
        }
    }

    /// The index of the failing batch operation, if this error is about one.
    #[must_use]
    pub fn batch_index(&self) -> Option<usize> {
        match self {
            Self::Table(error) => error.batch_index(),
            _ => None,
        }
    }
}

impl From<ModelError> for ServerError {
    fn from(error: ModelError) -> Self {
        Self::Table(TableError::from(error))
    }
}

/// The service's sentence for error `code` (its documented wording; `InvalidResourceName`
/// keeps the service's own misspelling, which the Python SDK matches).
fn code_sentence(code: &str) -> &'static str {
    match code {
        "AuthenticationFailed" => {
            "Server failed to authenticate the request. Make sure the value of the Authorization \
             header is formed correctly including the signature."
        }
        "AuthorizationPermissionMismatch" => {
            "This request is not authorized to perform this operation using this permission."
        }
        "AuthorizationServiceMismatch" => {
            "This request is not authorized to perform this operation using this service."
        }
        "AuthorizationResourceTypeMismatch" => {
            "This request is not authorized to perform this operation using this resource type."
        }
        "InvalidUri" => "The requested URI does not represent any resource on the server.",
        "UnsupportedHttpVerb" => "The resource doesn't support specified Http Verb.",
        "InvalidInput" => "One of the request inputs is not valid.",
        "MediaTypeNotSupported" => "None of the provided media types are supported.",
        "InvalidQueryParameterValue" => {
            "Value for one of the query parameters specified in the request URI is invalid."
        }
        "InvalidHeaderValue" => {
            "The value for one of the HTTP headers is not in the correct format."
        }
        "InvalidXmlDocument" => "XML specified is not syntactically valid.",
        "MissingRequiredHeader" => {
            "An HTTP header that's mandatory for this request is not specified."
        }
        "RequestBodyTooLarge" => {
            "The request body is too large and exceeds the maximum permissible limit."
        }
        "InternalError" => "The server encountered an internal error. Please retry the request.",
        "TableAlreadyExists" => "The table specified already exists.",
        "TableNotFound" => "The table specified does not exist.",
        "EntityAlreadyExists" => "The specified entity already exists.",
        "ResourceNotFound" => "The specified resource does not exist.",
        "UpdateConditionNotSatisfied" => {
            "The update condition specified in the request was not satisfied."
        }
        "PropertiesNeedValue" => "The values are not specified for all properties in the entity.",
        "PropertyValueTooLarge" => {
            "The property value exceeds the maximum allowed size (64KB). If the property value is \
             a string, it is UTF-16 encoded and the maximum number of characters should be 32K or \
             less."
        }
        "EntityTooLarge" => "The entity is larger than the maximum allowed size (1MB).",
        "TooManyProperties" => {
            "The entity contains more properties than allowed. Each entity can include up to 252 \
             properties to store data. Each entity also has 3 system properties."
        }
        "InvalidResourceName" => "The specifed resource name contains invalid characters.",
        "OutOfRangeInput" => "One of the request inputs is out of range.",
        "KeyValueTooLarge" => "The key value is larger than the maximum allowed size (1KB).",
        "PropertyNameInvalid" => "The property name is invalid.",
        "PropertyNameTooLong" => "The property name exceeds the maximum allowed length (255).",
        "DuplicatePropertiesSpecified" => "A property is specified more than one time.",
        "InvalidValueType" => "The value specified is invalid.",
        "InvalidDuplicateRow" => {
            "The batch request contains multiple changes with same row key. An entity can appear \
             only once in a batch request."
        }
        "CommandsInBatchActOnDifferentPartitions" => {
            "All commands in a batch must operate on same entity group."
        }
        _ => "The request failed.",
    }
}

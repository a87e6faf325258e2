//! The text (wire) forms of values, as the Table service's JSON carries them: Int64 as a
//! decimal string, Binary as base64, Guid hyphenated, DateTime as ISO 8601, Double specials as
//! `"NaN"`, `"Infinity"`, `"-Infinity"`.

use base64::Engine as _;
use base64::alphabet::STANDARD;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};

use super::{DateTime, EdmType, Guid, ModelError, Result, Value};

/// Standard base64; decoding accepts input with or without its `=` padding, encoding pads.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Wire form of a double NaN.
const DOUBLE_NAN: &str = "NaN";
/// Wire form of a double +∞.
const DOUBLE_INFINITY: &str = "Infinity";
/// Wire form of a double −∞.
const DOUBLE_NEG_INFINITY: &str = "-Infinity";

impl Value {
    /// Parses the wire form `text` of a value of type `edm`.
    ///
    /// | type | wire form |
    /// |---|---|
    /// | Binary | base64 (standard alphabet, padding optional) |
    /// | Boolean | `true` / `false`, in any case |
    /// | DateTime | ISO 8601 UTC, see [`DateTime::parse`]; without a designator, UTC |
    /// | Double | a decimal number (exponent allowed), `NaN`, `Infinity`, `-Infinity` |
    /// | Guid | `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` |
    /// | Int32, Int64 | decimal, optional leading `-` |
    /// | String | the text itself |
    ///
    /// ```
    /// use strata::model::{EdmType, Value};
    /// assert_eq!(Value::from_wire(EdmType::Int64, "-42")?, Value::Int64(-42));
    /// assert_eq!(Value::from_wire(EdmType::Binary, "AQID")?, Value::Binary(vec![1, 2, 3]));
    /// assert!(Value::from_wire(EdmType::Int32, "2147483648").is_err());
    /// # Ok::<(), strata::model::ModelError>(())
    /// ```
    ///
    /// # Errors
    /// [`ModelError::Parse`] for text that is not of the type's form (including integers out
    /// of range), the size errors of String and Binary, and
    /// [`ModelError::DateTimeOutOfRange`].
    pub fn from_wire(edm: EdmType, text: &str) -> Result<Self> {
        let fail = |reason| ModelError::parse(edm, text, reason);
        match edm {
            EdmType::Binary => {
                let bytes = BASE64.decode(text).map_err(|_| fail("not valid base64"))?;
                Self::binary(bytes)
            }
            // The service reads a Boolean's text in any case (`"False"`, as the official SDK's
            // tests send it).
            EdmType::Boolean if text.eq_ignore_ascii_case("true") => Ok(Self::Boolean(true)),
            EdmType::Boolean if text.eq_ignore_ascii_case("false") => Ok(Self::Boolean(false)),
            EdmType::Boolean => Err(fail("expected 'true' or 'false' (in any case)")),
            EdmType::DateTime => DateTime::parse_unzoned_as_utc(text).map(Self::DateTime),
            EdmType::Double => parse_double(text).map(Self::Double).ok_or_else(|| {
                fail("not a decimal number in the Double range, 'NaN', 'Infinity' or '-Infinity'")
            }),
            EdmType::Guid => Guid::parse(text).map(Self::Guid),
            EdmType::Int32 => {
                check_decimal(text).ok_or_else(|| fail("not a decimal integer"))?;
                text.parse()
                    .map(Self::Int32)
                    .map_err(|_| fail("outside the Int32 range"))
            }
            EdmType::Int64 => {
                check_decimal(text).ok_or_else(|| fail("not a decimal integer"))?;
                text.parse()
                    .map(Self::Int64)
                    .map_err(|_| fail("outside the Int64 range"))
            }
            EdmType::String => Self::string(text),
        }
    }

    /// The wire form of this value; [`Value::from_wire`] with [`Value::edm_type`] reads it back
    /// to an equal value (Doubles bit-exactly except for NaN payloads, which the wire form
    /// cannot carry: every NaN is written `NaN` and read back as the canonical NaN).
    ///
    /// ```
    /// use strata::model::Value;
    /// assert_eq!(Value::Int64(7).to_wire(), "7");
    /// assert_eq!(Value::Double(f64::NEG_INFINITY).to_wire(), "-Infinity");
    /// assert_eq!(Value::Binary(vec![1, 2, 3]).to_wire(), "AQID");
    /// ```
    #[must_use]
    pub fn to_wire(&self) -> String {
        match self {
            Self::Binary(b) => BASE64.encode(b),
            Self::Boolean(b) => b.to_string(),
            Self::DateTime(d) => d.to_wire_text(),
            Self::Double(d) => format_double(*d),
            Self::Guid(g) => g.to_string(),
            Self::Int32(i) => i.to_string(),
            Self::Int64(i) => i.to_string(),
            Self::String(s) => s.clone(),
        }
    }
}

/// `Some` if `text` is an optional `-` followed by one or more ASCII digits.
fn check_decimal(text: &str) -> Option<()> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(())
}

/// Parses a JSON-style number or one of the three special names. Rust's own spellings of
/// the specials (`inf`, `nan`, ...) are not wire forms and are refused, and so is a number
/// beyond the Double range (`"1.797693134862316e308"`): the service refuses it rather than
/// store an infinity nobody sent (Azurite issue 2387, checked against the service).
fn parse_double(text: &str) -> Option<f64> {
    match text {
        DOUBLE_NAN => Some(f64::NAN),
        DOUBLE_INFINITY => Some(f64::INFINITY),
        DOUBLE_NEG_INFINITY => Some(f64::NEG_INFINITY),
        _ if text
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E')) =>
        {
            text.parse().ok().filter(|d: &f64| d.is_finite())
        }
        _ => None,
    }
}

/// The shortest decimal form that reads back to the same bits (`-0.0` keeps its sign), or a
/// special name.
fn format_double(d: f64) -> String {
    if d.is_nan() {
        DOUBLE_NAN.to_owned()
    } else if d == f64::INFINITY {
        DOUBLE_INFINITY.to_owned()
    } else if d == f64::NEG_INFINITY {
        DOUBLE_NEG_INFINITY.to_owned()
    } else {
        // `Debug` is Rust's shortest round-trip form and switches to an exponent for very
        // large or small magnitudes instead of printing hundreds of digits.
        format!("{d:?}")
    }
}

//! SPEC §2 rules for EDM values: types, size limits, Double specials, wire forms.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use strata::model::{DateTime, EdmType, Guid, ModelError, Value};

#[test]
fn edm_type_names_and_tags_are_stable() {
    let expected = [
        (EdmType::Binary, "Edm.Binary", 1),
        (EdmType::Boolean, "Edm.Boolean", 2),
        (EdmType::DateTime, "Edm.DateTime", 3),
        (EdmType::Double, "Edm.Double", 4),
        (EdmType::Guid, "Edm.Guid", 5),
        (EdmType::Int32, "Edm.Int32", 6),
        (EdmType::Int64, "Edm.Int64", 7),
        (EdmType::String, "Edm.String", 8),
    ];
    for (edm, name, tag) in expected {
        assert_eq!(edm.name(), name);
        assert_eq!(edm.to_string(), name);
        assert_eq!(edm.tag(), tag);
        assert_eq!(EdmType::from_name(name), Some(edm));
        assert_eq!(EdmType::from_tag(tag), Some(edm));
    }
    assert_eq!(EdmType::from_tag(0), None);
    assert_eq!(EdmType::from_tag(9), None);
    assert_eq!(EdmType::from_name("edm.int64"), None);
    assert_eq!(EdmType::from_name("Edm.Single"), None);
}

#[test]
fn untyped_value_is_edm_string() {
    assert_eq!(EdmType::from_annotation(None), Ok(EdmType::String));
    assert_eq!(EdmType::UNTYPED, EdmType::String);
    assert_eq!(
        EdmType::from_annotation(Some("Edm.Guid")),
        Ok(EdmType::Guid)
    );
    let err = EdmType::from_annotation(Some("Edm.Decimal")).unwrap_err();
    assert_eq!(
        err,
        ModelError::UnknownEdmType {
            name: "Edm.Decimal".to_owned()
        }
    );
    assert_eq!(err.azure_code(), "InvalidValueType");
}

#[test]
fn value_edm_type_matches_variant() {
    let values = [
        (Value::Binary(vec![]), EdmType::Binary),
        (Value::Boolean(true), EdmType::Boolean),
        (Value::DateTime(DateTime::MIN), EdmType::DateTime),
        (Value::Double(1.5), EdmType::Double),
        (Value::Guid(Guid([0; 16])), EdmType::Guid),
        (Value::Int32(1), EdmType::Int32),
        (Value::Int64(1), EdmType::Int64),
        (Value::String(String::new()), EdmType::String),
    ];
    for (value, edm) in values {
        assert_eq!(value.edm_type(), edm);
    }
}

#[test]
fn string_of_64_kib_is_accepted_and_one_more_unit_rejected() {
    assert!(Value::string("a".repeat(32 * 1024)).is_ok());
    // 16 Ki surrogate pairs are 32 Ki UTF-16 units: exactly 64 KiB.
    assert!(Value::string("😀".repeat(16 * 1024)).is_ok());
    let err = Value::string("a".repeat(32 * 1024 + 1)).unwrap_err();
    assert_eq!(
        err,
        ModelError::StringTooLarge {
            len_bytes: 65536 + 2
        }
    );
    assert_eq!(err.azure_code(), "PropertyValueTooLarge");
    // 32 Ki 'é' are 64 KiB of UTF-8 but also 64 KiB of UTF-16: accepted.
    assert!(Value::string("é".repeat(32 * 1024)).is_ok());
    assert!(Value::string("é".repeat(32 * 1024 + 1)).is_err());
}

#[test]
fn binary_of_64_kib_is_accepted_and_65537_rejected() {
    assert!(Value::binary(vec![7; 65536]).is_ok());
    let err = Value::binary(vec![7; 65537]).unwrap_err();
    assert_eq!(err, ModelError::BinaryTooLarge { len_bytes: 65537 });
    assert_eq!(err.azure_code(), "PropertyValueTooLarge");
    assert!(Value::Binary(vec![0; 65537]).validate().is_err());
}

#[test]
fn value_size_follows_service_estimate() {
    assert_eq!(Value::String("abc".to_owned()).size(), 4 + 6);
    assert_eq!(Value::String("😀".to_owned()).size(), 4 + 4);
    assert_eq!(Value::Binary(vec![1, 2, 3]).size(), 4 + 3);
    assert_eq!(Value::Boolean(false).size(), 1);
    assert_eq!(Value::Int32(0).size(), 4);
    assert_eq!(Value::Int64(0).size(), 8);
    assert_eq!(Value::Double(0.0).size(), 8);
    assert_eq!(Value::DateTime(DateTime::MAX).size(), 8);
    assert_eq!(Value::Guid(Guid([1; 16])).size(), 16);
}

#[test]
fn double_keeps_nan_infinities_and_negative_zero() {
    let payload_nan = f64::from_bits(0x7ff8_0000_dead_beef);
    assert_eq!(Value::Double(payload_nan), Value::Double(payload_nan));
    assert_ne!(Value::Double(payload_nan), Value::Double(f64::NAN));
    assert_eq!(Value::Double(f64::INFINITY), Value::Double(f64::INFINITY));
    assert_ne!(
        Value::Double(f64::INFINITY),
        Value::Double(f64::NEG_INFINITY)
    );
    assert_ne!(Value::Double(-0.0), Value::Double(0.0));
    match Value::Double(-0.0) {
        Value::Double(d) => assert!(d.is_sign_negative()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn values_of_different_types_are_never_equal() {
    assert_ne!(Value::Int32(1), Value::Int64(1));
    assert_ne!(Value::String("1".to_owned()), Value::Int32(1));
}

#[test]
fn double_wire_specials_round_trip() {
    for (text, check) in [
        ("NaN", f64::is_nan as fn(f64) -> bool),
        ("Infinity", |d: f64| d == f64::INFINITY),
        ("-Infinity", |d: f64| d == f64::NEG_INFINITY),
    ] {
        match Value::from_wire(EdmType::Double, text).unwrap() {
            Value::Double(d) => {
                assert!(check(d), "{text}");
                assert_eq!(Value::Double(d).to_wire(), text);
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(Value::Double(-0.0).to_wire(), "-0.0");
    let back = Value::from_wire(EdmType::Double, "-0.0").unwrap();
    assert_eq!(back, Value::Double(-0.0));
}

#[test]
fn double_wire_rejects_non_json_spellings() {
    for bad in ["inf", "nan", "infinity", "NAN", "", "1,5", "0x10", " 1"] {
        let err = Value::from_wire(EdmType::Double, bad).unwrap_err();
        assert!(
            matches!(
                err,
                ModelError::Parse {
                    what: EdmType::Double,
                    ..
                }
            ),
            "{bad:?}"
        );
        assert_eq!(err.azure_code(), "InvalidInput");
    }
    assert_eq!(
        Value::from_wire(EdmType::Double, "1e300").unwrap(),
        Value::Double(1e300)
    );
    assert_eq!(Value::Double(1e300).to_wire(), "1e300");
}

#[test]
fn double_wire_refuses_a_number_beyond_the_double_range() {
    for bad in ["1.797693134862316e308", "-1.797693134862316e308", "1e309"] {
        let err = Value::from_wire(EdmType::Double, bad).unwrap_err();
        assert_eq!(err.azure_code(), "InvalidInput", "{bad}");
    }
    assert_eq!(
        Value::from_wire(EdmType::Double, "1.797693134862315e308").unwrap(),
        Value::Double(1.797_693_134_862_315e308)
    );
    // Underflow is not an error: the value rounds to zero, as .NET parses it.
    assert_eq!(
        Value::from_wire(EdmType::Double, "1e-400").unwrap(),
        Value::Double(0.0)
    );
}

#[test]
fn int64_wire_form_is_a_decimal_string() {
    assert_eq!(
        Value::from_wire(EdmType::Int64, "9223372036854775807").unwrap(),
        Value::Int64(i64::MAX)
    );
    assert_eq!(
        Value::from_wire(EdmType::Int64, "-9223372036854775808").unwrap(),
        Value::Int64(i64::MIN)
    );
    assert_eq!(Value::Int64(i64::MIN).to_wire(), "-9223372036854775808");
    for bad in [
        "9223372036854775808",
        "",
        "-",
        "+1",
        "1.0",
        "1e3",
        " 1",
        "0x1",
    ] {
        assert!(
            matches!(
                Value::from_wire(EdmType::Int64, bad),
                Err(ModelError::Parse {
                    what: EdmType::Int64,
                    ..
                })
            ),
            "{bad:?}"
        );
    }
}

#[test]
fn int32_wire_form_range_is_checked() {
    assert_eq!(
        Value::from_wire(EdmType::Int32, "-2147483648").unwrap(),
        Value::Int32(i32::MIN)
    );
    let err = Value::from_wire(EdmType::Int32, "2147483648").unwrap_err();
    assert_eq!(
        err,
        ModelError::Parse {
            what: EdmType::Int32,
            input: "2147483648".to_owned(),
            reason: "outside the Int32 range"
        }
    );
}

#[test]
fn boolean_wire_form_is_true_or_false_read_in_any_case() {
    assert_eq!(
        Value::from_wire(EdmType::Boolean, "true").unwrap(),
        Value::Boolean(true)
    );
    assert_eq!(Value::Boolean(false).to_wire(), "false");
    // The service reads `"False"` (the official SDK's encoder tests send it).
    assert_eq!(
        Value::from_wire(EdmType::Boolean, "False").unwrap(),
        Value::Boolean(false)
    );
    assert_eq!(
        Value::from_wire(EdmType::Boolean, "TRUE").unwrap(),
        Value::Boolean(true)
    );
    assert!(Value::from_wire(EdmType::Boolean, "1").is_err());
    assert!(Value::from_wire(EdmType::Boolean, " true").is_err());
}

#[test]
fn binary_wire_form_is_base64_with_optional_padding() {
    let bytes = vec![0xfb, 0xff, 0x00, 0x10];
    let wire = Value::Binary(bytes.clone()).to_wire();
    assert_eq!(wire, "+/8AEA==");
    assert_eq!(
        Value::from_wire(EdmType::Binary, &wire).unwrap(),
        Value::Binary(bytes.clone())
    );
    assert_eq!(
        Value::from_wire(EdmType::Binary, "+/8AEA").unwrap(),
        Value::Binary(bytes)
    );
    assert!(Value::from_wire(EdmType::Binary, "-_8AEA").is_err());
    assert!(Value::from_wire(EdmType::Binary, "!!!!").is_err());
    assert_eq!(
        Value::from_wire(EdmType::Binary, "").unwrap(),
        Value::Binary(vec![])
    );
}

#[test]
fn binary_wire_form_over_64_kib_is_rejected() {
    let wire = Value::Binary(vec![1; 65537]).to_wire();
    assert_eq!(
        Value::from_wire(EdmType::Binary, &wire).unwrap_err(),
        ModelError::BinaryTooLarge { len_bytes: 65537 }
    );
}

#[test]
fn string_wire_form_is_the_text_and_limited() {
    assert_eq!(
        Value::from_wire(EdmType::String, "héllo").unwrap(),
        Value::String("héllo".to_owned())
    );
    assert!(matches!(
        Value::from_wire(EdmType::String, &"a".repeat(32 * 1024 + 1)),
        Err(ModelError::StringTooLarge { .. })
    ));
}

#[test]
fn guid_and_datetime_wire_forms_delegate_to_their_parsers() {
    let g = "00112233-4455-6677-8899-aabbccddeeff";
    assert_eq!(
        Value::from_wire(EdmType::Guid, g).unwrap().to_wire(),
        g.to_owned()
    );
    let t = "2024-01-01T00:00:00.1234567Z";
    assert_eq!(Value::from_wire(EdmType::DateTime, t).unwrap().to_wire(), t);
    let whole = "2024-01-01T00:00:00.0000000Z";
    assert_eq!(
        Value::from_wire(EdmType::DateTime, whole)
            .unwrap()
            .to_wire(),
        "2024-01-01T00:00:00Z"
    );
    assert!(matches!(
        Value::from_wire(EdmType::DateTime, "1600-01-01T00:00:00Z"),
        Err(ModelError::DateTimeOutOfRange { .. })
    ));
}

#[test]
fn datetime_value_without_a_designator_is_read_as_utc() {
    // The service stores `2008-07-10T00:00:00` as that UTC instant (official SDK's
    // test_entity_with_edmtypes); a bad value still names the text as sent.
    assert_eq!(
        Value::from_wire(EdmType::DateTime, "2008-07-10T00:00:00")
            .unwrap()
            .to_wire(),
        "2008-07-10T00:00:00Z"
    );
    match Value::from_wire(EdmType::DateTime, "2008-13-10T00:00:00") {
        Err(ModelError::Parse { input, .. }) => assert_eq!(input, "2008-13-10T00:00:00"),
        other => panic!("{other:?}"),
    }
}

//! `Edm.Guid`: byte order and the hyphenated wire form.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use proptest::prelude::*;
use strata::model::{EdmType, Guid, ModelError};

#[test]
fn guid_bytes_are_in_textual_order() {
    let g = Guid::parse("00112233-4455-6677-8899-aabbccddeeff").unwrap();
    let expected: Vec<u8> = (0..16).map(|i| i * 0x11).collect();
    assert_eq!(g.0.to_vec(), expected);
}

#[test]
fn guid_parse_accepts_either_case_and_displays_lower_case() {
    let g = Guid::parse("ABCDEF01-2345-6789-ABCD-EF0123456789").unwrap();
    assert_eq!(g.to_string(), "abcdef01-2345-6789-abcd-ef0123456789");
}

#[test]
fn guid_parse_rejects_other_forms() {
    for (bad, reason) in [
        ("", "not 36 characters long"),
        ("00112233445566778899aabbccddeeff", "not 36 characters long"),
        (
            "{00112233-4455-6677-8899-aabbccddeeff}",
            "not 36 characters long",
        ),
        (
            "00112233-4455-6677-8899-aabbccddeefg",
            "contains a non-hex digit",
        ),
        (
            "001122334-455-6677-8899-aabbccddeeff",
            "expected '-' between groups 8-4-4-4-12",
        ),
        (
            "00112233-4455-6677-8899+aabbccddeeff",
            "expected '-' between groups 8-4-4-4-12",
        ),
        (
            "00112233-4455-6677-8899-aabbccddeeé",
            "contains a non-hex digit",
        ),
    ] {
        assert_eq!(
            Guid::parse(bad).unwrap_err(),
            ModelError::Parse {
                what: EdmType::Guid,
                input: bad.to_owned(),
                reason
            },
            "{bad:?}"
        );
    }
}

proptest! {
    #[test]
    fn guid_wire_form_round_trips(bytes in any::<[u8; 16]>()) {
        let g = Guid(bytes);
        let text = g.to_string();
        prop_assert_eq!(text.len(), 36);
        prop_assert_eq!(Guid::parse(&text).unwrap(), g);
        prop_assert_eq!(Guid::parse(&text.to_uppercase()).unwrap(), g);
    }

    #[test]
    fn guid_text_order_matches_byte_order(a in any::<[u8; 16]>(), b in any::<[u8; 16]>()) {
        prop_assert_eq!(Guid(a).to_string().cmp(&Guid(b).to_string()), a.cmp(&b));
    }

    #[test]
    fn guid_parse_never_panics(s in "\\PC{0,40}") {
        let _ = Guid::parse(&s);
    }
}

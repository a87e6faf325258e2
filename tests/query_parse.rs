//! The `$filter` grammar: precedence, parentheses, every literal form, escaped quotes, and
//! errors that name the position of the bad token.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use strata::model::{DateTime, Guid};
use strata::query::{
    CompareOp, Comparison, Expr, Field, Filter, Literal, QueryError, SyntaxError,
    limits::{MAX_FILTER_BYTES, MAX_NESTING},
};

fn parse(text: &str) -> Expr {
    Filter::parse(text)
        .unwrap_or_else(|e| panic!("{:?}: {e}", text.get(..80).unwrap_or(text)))
        .expr()
        .clone()
}

fn error(text: &str) -> QueryError {
    let error = Filter::parse(text).unwrap_err();
    assert!(error.position <= text.len(), "{error}");
    error
}

fn cmp(field: &str, op: CompareOp, literal: Literal) -> Expr {
    Expr::Compare(Comparison {
        field: Field::from_name(field),
        op,
        literal,
    })
}

fn int(name: &str, value: i32) -> Expr {
    cmp(name, CompareOp::Eq, Literal::Int32(value))
}

fn literal_of(text: &str) -> Literal {
    match parse(&format!("P eq {text}")) {
        Expr::Compare(comparison) => comparison.literal,
        other => panic!("{other:?}"),
    }
}

#[test]
fn precedence_and_binds_tighter_than_or() {
    assert_eq!(
        parse("A eq 1 or B eq 2 and C eq 3"),
        Expr::Or(vec![int("A", 1), Expr::And(vec![int("B", 2), int("C", 3)])])
    );
    assert_eq!(
        parse("A eq 1 and B eq 2 or C eq 3"),
        Expr::Or(vec![Expr::And(vec![int("A", 1), int("B", 2)]), int("C", 3)])
    );
}

#[test]
fn precedence_not_binds_tighter_than_and() {
    assert_eq!(
        parse("not A eq 1 and B eq 2"),
        Expr::And(vec![Expr::Not(Box::new(int("A", 1))), int("B", 2)])
    );
    assert_eq!(
        parse("not not A eq 1"),
        Expr::Not(Box::new(Expr::Not(Box::new(int("A", 1)))))
    );
}

#[test]
fn parentheses_override_precedence() {
    assert_eq!(
        parse("(A eq 1 or B eq 2) and C eq 3"),
        Expr::And(vec![Expr::Or(vec![int("A", 1), int("B", 2)]), int("C", 3)])
    );
    assert_eq!(
        parse("not (A eq 1 or B eq 2)"),
        Expr::Not(Box::new(Expr::Or(vec![int("A", 1), int("B", 2)])))
    );
    assert_eq!(parse("((((A eq 1))))"), int("A", 1));
    assert_eq!(parse("(A eq 1)and(B eq 2)"), parse("A eq 1 and B eq 2"));
}

#[test]
fn chains_of_one_operator_are_flat() {
    assert_eq!(
        parse("A eq 1 and B eq 2 and C eq 3"),
        Expr::And(vec![int("A", 1), int("B", 2), int("C", 3)])
    );
    let long = vec!["A eq 1"; 5_000].join(" or ");
    match parse(&long) {
        Expr::Or(operands) => assert_eq!(operands.len(), 5_000),
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_operator_parses() {
    for op in CompareOp::ALL {
        assert_eq!(
            parse(&format!("A {} 1", op.word())),
            cmp("A", op, Literal::Int32(1))
        );
    }
}

#[test]
fn literal_on_the_left_is_mirrored() {
    assert_eq!(
        parse("5 lt Age"),
        cmp("Age", CompareOp::Gt, Literal::Int32(5))
    );
    assert_eq!(
        parse("'a' le RowKey"),
        cmp("RowKey", CompareOp::Ge, Literal::String("a".into()))
    );
    assert_eq!(parse("true eq Flag"), parse("Flag eq true"));
}

#[test]
fn system_properties_are_fields() {
    assert_eq!(
        Filter::parse(
            "PartitionKey eq 'a' and RowKey eq 'b' and Timestamp gt datetime'2024-01-01T00:00:00Z'"
        )
        .unwrap()
        .fields(),
        vec![&Field::PartitionKey, &Field::RowKey, &Field::Timestamp]
    );
    assert_eq!(
        Field::from_name("partitionkey"),
        Field::Property("partitionkey".into())
    );
}

#[test]
fn string_literal_with_doubled_quotes_is_unescaped() {
    assert_eq!(literal_of("'O''Brien'"), Literal::String("O'Brien".into()));
    assert_eq!(literal_of("''''"), Literal::String("'".into()));
    assert_eq!(literal_of("''"), Literal::String("".into()));
    assert_eq!(
        literal_of("'a and b or not (c)'"),
        Literal::String("a and b or not (c)".into())
    );
    assert_eq!(literal_of("'héllo 😀'"), Literal::String("héllo 😀".into()));
}

#[test]
fn integer_literal_is_int32_unless_suffixed_l() {
    assert_eq!(literal_of("123"), Literal::Int32(123));
    assert_eq!(literal_of("-5"), Literal::Int32(-5));
    assert_eq!(literal_of("-2147483648"), Literal::Int32(i32::MIN));
    assert_eq!(literal_of("123L"), Literal::Int64(123));
    assert_eq!(literal_of("123l"), Literal::Int64(123));
    assert_eq!(
        literal_of("-9223372036854775808L"),
        Literal::Int64(i64::MIN)
    );
}

#[test]
fn double_literal_forms() {
    assert_eq!(literal_of("1.5"), Literal::Double(1.5));
    assert_eq!(literal_of("2.0"), Literal::Double(2.0));
    assert_eq!(literal_of("1e10"), Literal::Double(1e10));
    assert_eq!(literal_of("-1.5E-3"), Literal::Double(-1.5e-3));
    assert_eq!(literal_of("1.5D"), Literal::Double(1.5));
    assert_eq!(literal_of("2d"), Literal::Double(2.0));
    assert_eq!(literal_of("NaN"), Literal::Double(f64::NAN));
    assert_eq!(literal_of("INF"), Literal::Double(f64::INFINITY));
    assert_eq!(literal_of("-INF"), Literal::Double(f64::NEG_INFINITY));
}

#[test]
fn boolean_literals() {
    assert_eq!(literal_of("true"), Literal::Boolean(true));
    assert_eq!(literal_of("false"), Literal::Boolean(false));
}

#[test]
fn datetime_literal() {
    assert_eq!(
        literal_of("datetime'2024-05-01T12:00:00.1234567Z'"),
        Literal::DateTime(DateTime::parse("2024-05-01T12:00:00.1234567Z").unwrap())
    );
    assert_eq!(
        literal_of("DateTime'2024-05-01T12:00:00Z'"),
        literal_of("datetime'2024-05-01T12:00:00Z'")
    );
}

#[test]
fn datetime_literal_without_a_zone_designator_is_utc() {
    assert_eq!(
        literal_of("datetime'2008-07-10T00:00:00'"),
        literal_of("datetime'2008-07-10T00:00:00Z'")
    );
    assert_eq!(
        literal_of("datetime'2008-07-10T00:00:00.5'"),
        literal_of("datetime'2008-07-10T00:00:00.5Z'")
    );
    let error = error("Timestamp gt datetime'2008-07-10T00:00:00+02:00'");
    assert!(error.to_string().contains("Edm.DateTime"), "{error}");
}

#[test]
fn datetime_literal_seconds_are_optional_as_in_odata() {
    for (short, full) in [
        (
            "datetime'2008-07-10T12:30'",
            "datetime'2008-07-10T12:30:00Z'",
        ),
        (
            "datetime'2008-07-10T12:30Z'",
            "datetime'2008-07-10T12:30:00Z'",
        ),
    ] {
        assert_eq!(literal_of(short), literal_of(full), "{short}");
    }
    for bad in [
        "X eq datetime'2008-07-10T12:30.5'",
        "X eq datetime'2008-07-10T12:3'",
        "X eq datetime'2008-07-10T12'",
    ] {
        let error = error(bad);
        assert!(error.to_string().contains("Edm.DateTime"), "{bad}: {error}");
    }
}

#[test]
fn guid_literal() {
    let text = "00112233-4455-6677-8899-aabbccddeeff";
    assert_eq!(
        literal_of(&format!("guid'{}'", text.to_uppercase())),
        Literal::Guid(Guid::parse(text).unwrap())
    );
}

#[test]
fn binary_literal_both_prefixes() {
    let expected = Literal::Binary(vec![0x0A, 0x1B, 0xFF].into());
    assert_eq!(literal_of("X'0A1Bff'"), expected);
    assert_eq!(literal_of("binary'0a1bFF'"), expected);
    assert_eq!(literal_of("BINARY'0a1bFF'"), expected);
    assert_eq!(literal_of("X''"), Literal::Binary(Vec::new().into()));
}

#[test]
fn display_round_trips_every_literal() {
    for text in [
        "'O''Brien'",
        "-5",
        "9223372036854775807L",
        "1.5",
        "-0.0",
        "1e300",
        "NaN",
        "-INF",
        "true",
        "datetime'1601-01-01T00:00:00.0000000Z'",
        "guid'00112233-4455-6677-8899-aabbccddeeff'",
        "X'00FF'",
    ] {
        let literal = literal_of(text);
        assert_eq!(literal_of(&literal.to_string()), literal, "{text}");
    }
}

#[test]
fn display_round_trips_structure() {
    let text = "(A eq 1 or not (B lt 2L)) and C ne 'x' or D ge X'01'";
    let filter = Filter::parse(text).unwrap();
    let printed = filter.to_string();
    assert_eq!(Filter::parse(&printed).unwrap(), filter, "{printed}");
}

#[test]
fn error_empty_filter() {
    assert_eq!(error("").kind, SyntaxError::Empty);
    let blank = error("   ");
    assert_eq!((blank.position, &blank.kind), (3, &SyntaxError::Empty));
    assert_eq!(blank.azure_code(), "InvalidInput");
}

#[test]
fn error_position_points_at_the_bad_token() {
    let cases: &[(&str, usize)] = &[
        ("Age eq", 6),              // missing literal at the end
        ("Age eq 'abc", 7),         // unterminated string at its quote
        ("Age EQ 5", 4),            // uppercase operator
        ("Age eq 5 AND B eq 1", 9), // uppercase keyword
        ("Age eq 5 and", 12),       // dangling and
        ("(Age eq 5", 9),           // missing ')'
        ("Age eq 5)", 8),           // extra ')'
        ("Age eq 99999999999", 7),  // Int32 overflow
        ("Age eq 1.5L", 7),         // suffix on a double
        ("Age eq 12abc", 7),        // number runs into a word
        ("Age eq foo'12'", 7),      // unknown literal prefix
        ("Age eq x'12'", 7),        // X is case-sensitive
        ("Age eq X'123'", 7),       // odd hex digits
        ("Age eq X'zz'", 7),        // non-hex
        ("Age eq datetime'2024-13-01T00:00:00Z'", 7),
        ("Age eq guid'nope'", 7),
        ("Age eq Other", 7),         // property vs property
        ("1 eq 2", 5),               // literal vs literal
        ("Age eq 1 Name eq 'x'", 9), // missing connective
        ("Age # 1", 4),              // unexpected character
        ("Age eq 1e999", 7),         // double overflow
        ("Age eq -", 7),             // sign without digits
        ("not", 3),
        ("Age eq eq", 7),
    ];
    for (text, position) in cases {
        let error = error(text);
        assert_eq!(error.position, *position, "{text:?}: {error}");
    }
}

#[test]
fn error_nesting_deeper_than_the_limit_is_rejected() {
    let ok = format!(
        "{}A eq 1{}",
        "(".repeat(MAX_NESTING - 1),
        ")".repeat(MAX_NESTING - 1)
    );
    assert!(Filter::parse(&ok).is_ok());
    let deep = format!(
        "{}A eq 1{}",
        "(".repeat(MAX_NESTING + 1),
        ")".repeat(MAX_NESTING + 1)
    );
    assert_eq!(error(&deep).kind, SyntaxError::TooDeep);
    let nots = format!("{}A eq 1", "not ".repeat(10_000));
    assert_eq!(error(&nots).kind, SyntaxError::TooDeep);
}

#[test]
fn error_filter_longer_than_the_limit_is_rejected() {
    let long = format!("A eq '{}'", "x".repeat(MAX_FILTER_BYTES));
    let error = error(&long);
    assert_eq!(error.kind, SyntaxError::TooLong { len: long.len() });
}

#[test]
fn error_message_names_the_token() {
    let message = error("Age EQ 5").to_string();
    assert!(
        message.contains("EQ") && message.contains("byte 4"),
        "{message}"
    );
}

#[test]
fn bare_property_is_a_boolean_condition_eq_true() {
    let active = cmp("IsActive", CompareOp::Eq, Literal::Boolean(true));
    assert_eq!(parse("IsActive"), active);
    assert_eq!(parse("(IsActive)"), active);
    assert_eq!(parse("not IsActive"), Expr::Not(Box::new(active.clone())));
    assert_eq!(
        parse("IsActive and Count gt 5"),
        Expr::And(vec![
            active.clone(),
            cmp("Count", CompareOp::Gt, Literal::Int32(5))
        ])
    );
    assert_eq!(
        parse("Count gt 5 or IsActive"),
        Expr::Or(vec![cmp("Count", CompareOp::Gt, Literal::Int32(5)), active])
    );
}

#[test]
fn bare_non_boolean_literal_or_dangling_property_is_still_an_error() {
    for (text, position) in [
        ("NaN", 3),
        ("INF", 3),
        ("IsActive Count", 9),
        ("5", 1),
        ("'a'", 3),
        ("true false", 5),
    ] {
        assert_eq!(error(text).position, position, "{text:?}");
    }
}

#[test]
fn bare_boolean_literal_is_a_constant_condition() {
    assert_eq!(parse("true"), Expr::Const(true));
    assert_eq!(parse("false"), Expr::Const(false));
    assert_eq!(parse(" ( false ) "), Expr::Const(false));
    assert_eq!(parse("not true"), Expr::Not(Box::new(Expr::Const(true))));
    assert_eq!(
        parse("PartitionKey eq 'a' and true"),
        Expr::And(vec![
            cmp("PartitionKey", CompareOp::Eq, Literal::String("a".into())),
            Expr::Const(true)
        ])
    );
    assert_eq!(
        parse("false or A eq 1"),
        Expr::Or(vec![Expr::Const(false), int("A", 1)])
    );
}

#[test]
fn boolean_literal_beside_an_operator_is_still_a_comparison() {
    assert_eq!(
        parse("true eq Flag"),
        cmp("Flag", CompareOp::Eq, Literal::Boolean(true))
    );
    assert_eq!(
        parse("Flag ne false"),
        cmp("Flag", CompareOp::Ne, Literal::Boolean(false))
    );
}

#[test]
fn constants_print_and_parse_back() {
    for text in [
        "true",
        "false",
        "not (true)",
        "true and A eq 1",
        "(false or A eq 1) and true",
    ] {
        let filter = Filter::parse(text).unwrap();
        assert_eq!(
            Filter::parse(&filter.to_string()).unwrap(),
            filter,
            "{text}"
        );
    }
}

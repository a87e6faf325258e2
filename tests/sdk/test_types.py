"""Every EDM type round-trips through the wire exactly, and typed filters compare by type."""

import math
import uuid
from datetime import datetime, timezone

import pytest
from azure.core.exceptions import HttpResponseError
from azure.data.tables import EdmType, EntityProperty

from conftest import code_of

GUID = uuid.UUID("c9da6455-213d-42c9-9a79-3e9149a57833")
DT7 = "2024-02-29T13:14:15.1234567Z"


def typed_entity(rk="r1"):
    return {
        "PartitionKey": "p1",
        "RowKey": rk,
        "I64": EntityProperty(2**62 + 7, EdmType.INT64),
        "I64Neg": EntityProperty(-(2**63), EdmType.INT64),
        "I64Small": EntityProperty(5, EdmType.INT64),
        "Bin": b"\x00\x01\xfe\xffbinary",
        "BinEmpty": EntityProperty(b"", EdmType.BINARY),
        "Dt": datetime(2024, 2, 29, 13, 14, 15, 123456, tzinfo=timezone.utc),
        "Dt7": EntityProperty(DT7, EdmType.DATETIME),
        "DtMin": EntityProperty("1601-01-01T00:00:00.0000000Z", EdmType.DATETIME),
        "DtMax": EntityProperty("9999-12-31T23:59:59.9999999Z", EdmType.DATETIME),
        "G": GUID,
        "D": 3.25,
        "DWhole": 2.0,
        "DTiny": 5e-324,
        "DHuge": 1.7976931348623157e308,
        "DNaN": float("nan"),
        "DInf": float("inf"),
        "DNegInf": float("-inf"),
        "B": True,
        "BFalse": False,
        "I32": 2**31 - 1,
        "I32Min": -(2**31),
        "S": "text ✓ \U0001f600 \"quoted\" \\ back",
        "SEmpty": "",
        "SNumeric": EntityProperty("42", EdmType.STRING),
    }


def check_typed(got):
    assert got["I64"] == EntityProperty(2**62 + 7, EdmType.INT64)
    assert got["I64Neg"] == EntityProperty(-(2**63), EdmType.INT64)
    assert got["I64Small"] == EntityProperty(5, EdmType.INT64)
    assert got["Bin"] == b"\x00\x01\xfe\xffbinary"
    assert got["Dt"] == datetime(2024, 2, 29, 13, 14, 15, 123456, tzinfo=timezone.utc)
    assert got["Dt7"].tables_service_value == DT7
    assert got["DtMin"] == datetime(1601, 1, 1, tzinfo=timezone.utc)
    assert got["DtMax"].tables_service_value == "9999-12-31T23:59:59.9999999Z"
    assert got["G"] == GUID
    assert got["D"] == 3.25 and isinstance(got["D"], float)
    assert got["DWhole"] == 2.0 and isinstance(got["DWhole"], float)
    assert got["DTiny"] == 5e-324
    assert got["DHuge"] == 1.7976931348623157e308
    assert math.isnan(got["DNaN"])
    assert got["DInf"] == float("inf")
    assert got["DNegInf"] == float("-inf")
    assert got["B"] is True and got["BFalse"] is False
    assert got["I32"] == 2**31 - 1 and isinstance(got["I32"], int)
    assert got["I32Min"] == -(2**31)
    assert got["S"] == "text ✓ \U0001f600 \"quoted\" \\ back"
    assert got["SEmpty"] == ""
    assert got["SNumeric"] == "42"


def test_types_every_edm_type_roundtrips_point_read(table, azurite_gap):
    table.create_entity(typed_entity())
    got = table.get_entity("p1", "r1")
    if got.get("BinEmpty") is None:
        azurite_gap("drops an empty Edm.Binary value")
    else:
        assert got["BinEmpty"] == b""
    check_typed(got)


def test_types_every_edm_type_roundtrips_query(table):
    table.create_entity(typed_entity("r2"))
    [got] = list(table.query_entities("RowKey eq @rk", parameters={"rk": "r2"}))
    check_typed(got)


def test_types_every_edm_type_roundtrips_upsert_and_batch(table):
    from azure.data.tables import UpdateMode

    table.upsert_entity(typed_entity("r3"), mode=UpdateMode.REPLACE)
    table.submit_transaction([("upsert", typed_entity("r4"), {"mode": UpdateMode.MERGE})])
    check_typed(table.get_entity("p1", "r3"))
    check_typed(table.get_entity("p1", "r4"))


def test_types_roundtrip_after_read_modify_write(table):
    # A read entity written back unchanged keeps every type (the SDK re-sends DateTime's 7 digits).
    table.create_entity(typed_entity())
    got = table.get_entity("p1", "r1")
    table.update_entity(got)
    check_typed(table.get_entity("p1", "r1"))


def seed_typed(table):
    rows = [
        ("a", {"N": 1, "L": EntityProperty(10, EdmType.INT64), "D": 1.5, "Flag": True, "G": GUID}),
        ("b", {"N": 2, "L": EntityProperty(20, EdmType.INT64), "D": 2.5, "Flag": False}),
        ("c", {"N": "2", "L": EntityProperty(2**40, EdmType.INT64), "Dt": datetime(2030, 1, 1, tzinfo=timezone.utc)}),
        ("d", {"Bin": b"\x0a\x1b"}),
    ]
    for rk, props in rows:
        table.create_entity({"PartitionKey": "p", "RowKey": rk, **props})


def rks(table, flt, **params):
    return [e["RowKey"] for e in table.query_entities(flt, parameters=params or None)]


def test_types_filter_by_each_type(table):
    seed_typed(table)
    assert rks(table, "N eq @n", n=2) == ["b"]
    assert rks(table, "L ge @l", l=2**40) == ["c"]
    assert rks(table, "L lt 15L") == ["a"]
    assert rks(table, "D gt @d", d=2.0) == ["b"]
    assert rks(table, "Flag eq @f", f=True) == ["a"]
    assert rks(table, "G eq @g", g=GUID) == ["a"]
    assert rks(table, "Dt ge @t", t=datetime(2029, 1, 1, tzinfo=timezone.utc)) == ["c"]
    assert rks(table, "Bin eq @b", b=b"\x0a\x1b") == ["d"]
    assert rks(table, "N eq '2'") == ["c"]


def test_types_filter_literal_of_other_type_does_not_match(table, azurite_gap):
    azurite_gap("compares across types (Int32 property vs string/Int64 literal)")
    seed_typed(table)
    # 'N' is Int32 2 in b and String "2" in c: each literal matches only its own type.
    assert rks(table, "N eq 2") == ["b"]
    assert rks(table, "N eq 2L") == []
    assert rks(table, "L eq 10") == []


def test_types_filter_missing_property_never_matches_even_ne(table, azurite_gap):
    azurite_gap("'ne' matches entities without the property")
    seed_typed(table)
    assert rks(table, "Flag ne true") == ["b"]


def test_types_boolean_text_is_read_in_any_case_and_datetime_without_designator_as_utc(table):
    # The official suite's test_encoder_*_tuples/_raw and test_entity_with_edmtypes send these.
    table.upsert_entity(
        {
            "PartitionKey": "p1",
            "RowKey": "r1",
            "B": EntityProperty("False", EdmType.BOOLEAN),
            "BUpper": EntityProperty("TRUE", EdmType.BOOLEAN),
            "Since": EntityProperty("2008-07-10T00:00:00", EdmType.DATETIME),
        }
    )
    got = table.get_entity("p1", "r1")
    assert got["B"] is False
    assert got["BUpper"] is True
    assert got["Since"] == datetime(2008, 7, 10, tzinfo=timezone.utc)
    with pytest.raises(HttpResponseError) as err:
        table.upsert_entity({"PartitionKey": "p1", "RowKey": "r2", "B": EntityProperty("yes", EdmType.BOOLEAN)})
    assert err.value.status_code == 400


def test_types_keys_annotated_other_than_string_refuse_an_insert_not_an_upsert(table, azurite_gap):
    # The official suite's test_encoder_*_complex_keys: a DateTime/Guid-typed key in an insert
    # body is a 400; an upsert names its keys in the URL and succeeds.
    azurite_gap("accepts keys annotated with other types")
    key_time = datetime(2022, 4, 1, 9, 30, 45, tzinfo=timezone.utc)
    with pytest.raises(HttpResponseError) as err:
        table.create_entity({"PartitionKey": key_time, "RowKey": GUID})
    assert err.value.status_code == 400
    assert code_of(err.value) == "InvalidInput"
    table.upsert_entity({"PartitionKey": key_time, "RowKey": GUID, "Data": True})
    (stored,) = list(table.list_entities())
    assert stored["PartitionKey"] == "2022-04-01T09:30:45.000000Z"
    assert stored["RowKey"] == str(GUID)

"""The rules of SPEC section 2 surface as the SDK's typed exceptions with the service's codes."""

import pytest

from conftest import code_of
from azure.core.exceptions import HttpResponseError
from azure.data.tables import EdmType, EntityProperty, UpdateMode


def ent(**props):
    return {"PartitionKey": "p", "RowKey": "r", **props}


def rejected(table, entity, *codes, status=400):
    with pytest.raises(HttpResponseError) as err:
        table.create_entity(entity)
    assert err.value.status_code == status, err.value.message
    if codes:
        assert code_of(err.value) in codes, err.value.message
    return err.value


@pytest.mark.parametrize("bad", ["a/b", "a\\b", "a#b", "a?b", "tab\tkey", "nul\x00", "del\x7f", "c1\x85"])
def test_limits_key_with_forbidden_character_is_rejected(table, bad, azurite_gap):
    if bad in ("tab\tkey", "nul\x00", "del\x7f", "c1\x85"):
        azurite_gap("accepts control characters in keys")
    with pytest.raises((HttpResponseError, ValueError)) as err:
        table.create_entity({"PartitionKey": "p", "RowKey": bad})
    if isinstance(err.value, HttpResponseError):
        assert err.value.status_code == 400, err.value.message
    with pytest.raises((HttpResponseError, ValueError)):
        table.create_entity({"PartitionKey": bad, "RowKey": "r"})
    assert list(table.list_entities()) == []


def test_limits_key_over_1kib_is_rejected(table, azurite_gap):
    azurite_gap("accepts keys over 1 KiB")
    # 513 UTF-16 code units = 1026 bytes, over the 1 KiB key limit.
    rejected(table, {"PartitionKey": "p", "RowKey": "k" * 513}, "OutOfRangeInput", "InvalidInput", "KeyValueTooLarge")


def test_limits_key_at_1kib_is_accepted(table):
    table.create_entity({"PartitionKey": "p", "RowKey": "k" * 512})
    assert table.get_entity("p", "k" * 512)["RowKey"] == "k" * 512


def test_limits_string_over_64kib_is_property_value_too_large(table):
    rejected(table, ent(S="x" * 32 * 1024 + "x"), "PropertyValueTooLarge")


def test_limits_string_at_64kib_is_accepted(table):
    table.create_entity(ent(S="x" * 32 * 1024))
    assert len(table.get_entity("p", "r")["S"]) == 32 * 1024


def test_limits_binary_over_64kib_is_property_value_too_large(table):
    rejected(table, ent(B=b"\x01" * (64 * 1024 + 1)), "PropertyValueTooLarge")


def test_limits_binary_at_64kib_is_accepted(table):
    table.create_entity(ent(B=b"\x01" * (64 * 1024)))
    assert len(table.get_entity("p", "r")["B"]) == 64 * 1024


def test_limits_too_many_properties_is_rejected(table, azurite_gap):
    azurite_gap("does not enforce 255 properties")
    rejected(table, ent(**{f"P{i}": i for i in range(253)}), "TooManyProperties")


def test_limits_252_custom_properties_are_accepted(table):
    table.create_entity(ent(**{f"P{i}": i for i in range(252)}))
    assert len(table.get_entity("p", "r")) == 254


def test_limits_entity_over_1mib_is_entity_too_large(table, azurite_gap):
    azurite_gap("does not enforce 1 MiB on insert")
    # 17 binary properties of 64 KiB = 1.06 MiB of property data.
    with pytest.raises(HttpResponseError) as err:
        table.create_entity(ent(**{f"B{i}": b"\x02" * (64 * 1024) for i in range(17)}))
    assert err.value.status_code in (400, 413), err.value.message
    assert code_of(err.value) in ("EntityTooLarge", "RequestBodyTooLarge"), err.value.message
    assert list(table.list_entities()) == []


def test_limits_entity_over_1mib_by_merge_is_rejected(table, azurite_gap):
    azurite_gap("does not enforce 1 MiB on merge")
    table.create_entity(ent(**{f"A{i}": b"\x03" * (64 * 1024) for i in range(10)}))
    with pytest.raises(HttpResponseError) as err:
        table.upsert_entity(ent(**{f"B{i}": b"\x03" * (64 * 1024) for i in range(10)}), mode=UpdateMode.MERGE)
    assert err.value.status_code in (400, 413), err.value.message
    assert len(table.get_entity("p", "r")) == 12


def test_limits_property_name_over_255_is_rejected(table, azurite_gap):
    azurite_gap("does not enforce 255-character property names")
    rejected(table, ent(**{"N" * 256: 1}), "PropertyNameTooLong")


def test_limits_property_name_invalid_is_rejected(table, azurite_gap):
    azurite_gap("accepts property names that are not C# identifiers")
    rejected(table, ent(**{"has-dash": 1}), "PropertyNameInvalid", "InvalidInput")
    rejected(table, ent(**{"1digit": 1}), "PropertyNameInvalid", "InvalidInput")


def test_limits_datetime_before_1601_is_rejected(table, azurite_gap):
    azurite_gap("accepts DateTime values before 1601")
    rejected(table, ent(D=EntityProperty("1600-12-31T23:59:59Z", EdmType.DATETIME)))


def test_limits_malformed_typed_values_are_rejected(table, azurite_gap):
    azurite_gap("stores a malformed Edm.Guid / Edm.DateTime value")
    # The SDK passes Guid and DateTime strings through unchecked, so the server must check them.
    rejected(table, ent(G=EntityProperty("not-a-guid", EdmType.GUID)))
    rejected(table, ent(D=EntityProperty("2024-13-45T99:00:00Z", EdmType.DATETIME)))
    assert list(table.list_entities()) == []


def test_limits_request_body_over_4mib_batch_is_rejected(table):
    from azure.data.tables import RequestTooLargeError, TableTransactionError

    big = b"\x04" * (60 * 1024)
    ops = [("create", {"PartitionKey": "p", "RowKey": f"{i:03}", **{f"B{j}": big for j in range(2)}}) for i in range(40)]
    with pytest.raises((RequestTooLargeError, TableTransactionError, HttpResponseError)) as err:
        table.submit_transaction(ops)
    assert err.value.status_code in (400, 413)
    assert list(table.list_entities()) == []

"""Single-entity operations: insert, upserts, updates and deletes with ETags, point reads."""

import pytest

from conftest import code_of
from azure.core import MatchConditions
from azure.core.exceptions import ResourceExistsError, ResourceModifiedError, ResourceNotFoundError
from azure.data.tables import UpdateMode


def entity(rk="r1", pk="p1", **props):
    return {"PartitionKey": pk, "RowKey": rk, **props}


def user_props(e):
    return {k: v for k, v in e.items() if k not in ("PartitionKey", "RowKey")}


def test_entity_create_then_get_returns_properties_and_etag(table):
    meta = table.create_entity(entity(Name="ann", Age=30))
    assert meta["etag"].startswith('W/"datetime\'')
    got = table.get_entity("p1", "r1")
    assert got["Name"] == "ann"
    assert got["Age"] == 30
    assert got.metadata["etag"] == meta["etag"]
    assert got.metadata["timestamp"] is not None


def test_entity_create_existing_is_entity_already_exists(table):
    table.create_entity(entity())
    with pytest.raises(ResourceExistsError) as err:
        table.create_entity(entity(X=1))
    assert code_of(err.value) == "EntityAlreadyExists"
    assert err.value.status_code == 409


def test_entity_get_missing_is_resource_not_found(table):
    with pytest.raises(ResourceNotFoundError) as err:
        table.get_entity("p1", "nope")
    assert code_of(err.value) == "ResourceNotFound"
    assert err.value.status_code == 404


def test_entity_get_with_select_projects(table):
    table.create_entity(entity(A="a", B="b", C=3))
    got = table.get_entity("p1", "r1", select=["A", "C"])
    # Only what is named, as the service answers: no keys unless selected.
    assert dict(got) == {"A": "a", "C": 3}
    assert got.metadata["etag"]


def test_entity_get_with_select_of_system_properties_returns_them(table):
    table.create_entity(entity(A="a", B="b"))
    got = table.get_entity("p1", "r1", select=["RowKey", "B", "Timestamp"])
    assert dict(got) == {"RowKey": "r1", "B": "b"}
    assert got.metadata["timestamp"] is not None
    everything = table.get_entity("p1", "r1", select=["*"])
    assert dict(everything) == {"PartitionKey": "p1", "RowKey": "r1", "A": "a", "B": "b"}


def test_entity_upsert_replace_drops_other_properties(table):
    table.create_entity(entity(A="a", B="b"))
    table.upsert_entity(entity(C="c"), mode=UpdateMode.REPLACE)
    assert user_props(table.get_entity("p1", "r1")) == {"C": "c"}


def test_entity_upsert_merge_keeps_other_properties(table):
    table.create_entity(entity(A="a", B="b"))
    table.upsert_entity(entity(B="B2", C="c"), mode=UpdateMode.MERGE)
    assert user_props(table.get_entity("p1", "r1")) == {"A": "a", "B": "B2", "C": "c"}


@pytest.mark.parametrize("mode", [UpdateMode.REPLACE, UpdateMode.MERGE])
def test_entity_upsert_missing_inserts(table, mode):
    table.upsert_entity(entity(A=1), mode=mode)
    assert table.get_entity("p1", "r1")["A"] == 1


def test_entity_update_replace_with_matching_etag_succeeds(table):
    meta = table.create_entity(entity(A="a", B="b"))
    new = table.update_entity(
        entity(B="b2"), mode=UpdateMode.REPLACE, etag=meta["etag"], match_condition=MatchConditions.IfNotModified
    )
    assert new["etag"] != meta["etag"]
    assert user_props(table.get_entity("p1", "r1")) == {"B": "b2"}


def test_entity_update_merge_with_matching_etag_succeeds(table):
    meta = table.create_entity(entity(A="a", B="b"))
    table.update_entity(
        entity(B="b2"), mode=UpdateMode.MERGE, etag=meta["etag"], match_condition=MatchConditions.IfNotModified
    )
    assert user_props(table.get_entity("p1", "r1")) == {"A": "a", "B": "b2"}


@pytest.mark.parametrize("mode", [UpdateMode.REPLACE, UpdateMode.MERGE])
def test_entity_update_with_stale_etag_is_precondition_failed(table, mode):
    first = table.create_entity(entity(A="a"))
    table.update_entity(entity(A="b"), mode=mode)
    with pytest.raises(ResourceModifiedError) as err:
        table.update_entity(entity(A="c"), mode=mode, etag=first["etag"], match_condition=MatchConditions.IfNotModified)
    assert err.value.status_code == 412
    assert code_of(err.value) == "UpdateConditionNotSatisfied"
    assert table.get_entity("p1", "r1")["A"] == "b"


@pytest.mark.parametrize("mode", [UpdateMode.REPLACE, UpdateMode.MERGE])
def test_entity_update_missing_is_resource_not_found(table, mode):
    with pytest.raises(ResourceNotFoundError):
        table.update_entity(entity(A="a"), mode=mode)


def test_entity_update_unconditional_ignores_etag(table):
    table.create_entity(entity(A="a"))
    table.update_entity(entity(A="b"), mode=UpdateMode.REPLACE, match_condition=MatchConditions.Unconditionally)
    assert table.get_entity("p1", "r1")["A"] == "b"


def test_entity_etag_changes_on_every_write(table):
    etags = {table.create_entity(entity(N=0))["etag"]}
    for n in range(1, 6):
        etags.add(table.upsert_entity(entity(N=n), mode=UpdateMode.MERGE)["etag"])
    assert len(etags) == 6


def test_entity_delete_with_matching_etag_deletes(table):
    meta = table.create_entity(entity())
    table.delete_entity("p1", "r1", etag=meta["etag"], match_condition=MatchConditions.IfNotModified)
    with pytest.raises(ResourceNotFoundError):
        table.get_entity("p1", "r1")


def test_entity_delete_with_stale_etag_is_precondition_failed(table):
    meta = table.create_entity(entity(A=1))
    table.upsert_entity(entity(A=2))
    with pytest.raises(ResourceModifiedError) as err:
        table.delete_entity("p1", "r1", etag=meta["etag"], match_condition=MatchConditions.IfNotModified)
    assert err.value.status_code == 412
    assert table.get_entity("p1", "r1")["A"] == 2


def test_entity_delete_via_entity_uses_its_etag(table):
    table.create_entity(entity(A=1))
    got = table.get_entity("p1", "r1")
    table.upsert_entity(entity(A=2))
    with pytest.raises(ResourceModifiedError):
        table.delete_entity(got, match_condition=MatchConditions.IfNotModified)
    fresh = table.get_entity("p1", "r1")
    table.delete_entity(fresh, match_condition=MatchConditions.IfNotModified)
    assert list(table.list_entities()) == []


def test_entity_delete_missing_is_silent_in_sdk(table):
    # The SDK swallows 404 on delete; this checks the server answers 404 rather than an error it would surface.
    table.delete_entity("p1", "missing")


def test_entity_timestamp_supplied_by_client_is_ignored(table):
    table.create_entity(entity(Timestamp="2000-01-01T00:00:00Z"))
    got = table.get_entity("p1", "r1")
    assert got.metadata["timestamp"].year >= 2024
    assert "Timestamp" not in got


def test_entity_empty_string_keys_are_valid(table):
    table.create_entity(entity(rk="", pk="", V=1))
    assert table.get_entity("", "")["V"] == 1


@pytest.mark.parametrize("key", ["quote'd", "sp ace", "pct%25", "unicodé✓", "plus+amp&eq=", "colon:semi;"])
def test_entity_keys_with_url_special_characters_roundtrip(table, key):
    table.create_entity(entity(rk=key, pk=key, V=key))
    got = table.get_entity(key, key)
    assert got["V"] == key and got["RowKey"] == key and got["PartitionKey"] == key
    table.delete_entity(key, key)
    with pytest.raises(ResourceNotFoundError):
        table.get_entity(key, key)


def test_entity_null_property_is_not_stored(table):
    table.create_entity(entity(A=None, B="b"))
    got = table.get_entity("p1", "r1")
    assert "A" not in got and got["B"] == "b"


@pytest.mark.parametrize("missing", ["PartitionKey", "RowKey"])
def test_entity_without_a_key_is_the_sdks_value_error(table, missing, azurite_gap):
    # The service answers PropertiesNeedValue with its sentence; the SDK turns it into ValueError.
    azurite_gap("answers a missing key with another code")
    entity = {"PartitionKey": "p", "RowKey": "r", "N": 1}
    del entity[missing]
    with pytest.raises(ValueError, match=missing):
        table.create_entity(entity)

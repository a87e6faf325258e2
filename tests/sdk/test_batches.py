"""Entity group transactions: success, atomicity, and each failure kind with its index."""

import pytest

from conftest import code_of
from azure.core import MatchConditions
from azure.data.tables import TableTransactionError, UpdateMode
from azure.data.tables._table_batch import TableBatchOperations


def ent(rk, pk="p", **props):
    return {"PartitionKey": pk, "RowKey": rk, **props}


def keys(table):
    return [e["RowKey"] for e in table.list_entities()]


def test_batch_mixed_operations_apply_together(table):
    table.create_entity(ent("upd", A="a", B="b"))
    table.create_entity(ent("mrg", A="a", B="b"))
    table.create_entity(ent("del"))
    result = table.submit_transaction(
        [
            ("create", ent("new", A=1)),
            ("update", ent("upd", C="c"), {"mode": UpdateMode.REPLACE}),
            ("update", ent("mrg", C="c"), {"mode": UpdateMode.MERGE}),
            ("delete", ent("del")),
            ("upsert", ent("ups1", X=1), {"mode": UpdateMode.REPLACE}),
            ("upsert", ent("ups2", X=2), {"mode": UpdateMode.MERGE}),
        ]
    )
    assert len(result) == 6
    assert all("etag" in r for i, r in enumerate(result) if i != 3)
    assert keys(table) == ["mrg", "new", "upd", "ups1", "ups2"]
    upd = table.get_entity("p", "upd")
    assert "A" not in upd and upd["C"] == "c"
    mrg = table.get_entity("p", "mrg")
    assert mrg["A"] == "a" and mrg["C"] == "c"


def test_batch_etags_match_subsequent_reads(table):
    result = table.submit_transaction([("create", ent(f"r{i}")) for i in range(3)])
    for i, meta in enumerate(result):
        assert table.get_entity("p", f"r{i}").metadata["etag"] == meta["etag"]


def test_batch_of_100_inserts_succeeds(table):
    table.submit_transaction([("create", ent(f"{i:03}", N=i)) for i in range(100)])
    assert len(keys(table)) == 100


def test_batch_update_with_etag_condition(table):
    meta = table.create_entity(ent("r", A=1))
    table.submit_transaction(
        [("update", ent("r", A=2), {"etag": meta["etag"], "match_condition": MatchConditions.IfNotModified})]
    )
    assert table.get_entity("p", "r")["A"] == 2


def assert_failed_atomically(table, before, err, index, code):
    assert isinstance(err, TableTransactionError)
    assert err.index == index, err.message
    assert code_of(err) == code, err.message
    assert keys(table) == before


def test_batch_insert_existing_fails_with_its_index(table):
    table.create_entity(ent("r2"))
    with pytest.raises(TableTransactionError) as err:
        table.submit_transaction([("create", ent("r0")), ("create", ent("r1")), ("create", ent("r2"))])
    assert_failed_atomically(table, ["r2"], err.value, 2, "EntityAlreadyExists")


def test_batch_update_missing_fails_with_its_index(table):
    with pytest.raises(TableTransactionError) as err:
        table.submit_transaction([("create", ent("r0")), ("update", ent("missing"), {"mode": UpdateMode.MERGE})])
    assert_failed_atomically(table, [], err.value, 1, "ResourceNotFound")


def test_batch_delete_missing_fails_with_its_index(table):
    with pytest.raises(TableTransactionError) as err:
        table.submit_transaction([("upsert", ent("r0")), ("upsert", ent("r1")), ("delete", ent("missing"))])
    assert_failed_atomically(table, [], err.value, 2, "ResourceNotFound")


def test_batch_precondition_failed_with_its_index(table):
    meta = table.create_entity(ent("r", A=1))
    table.upsert_entity(ent("r", A=2))
    with pytest.raises(TableTransactionError) as err:
        table.submit_transaction(
            [
                ("create", ent("a")),
                ("update", ent("r", A=3), {"etag": meta["etag"], "match_condition": MatchConditions.IfNotModified}),
            ]
        )
    assert_failed_atomically(table, ["r"], err.value, 1, "UpdateConditionNotSatisfied")
    assert table.get_entity("p", "r")["A"] == 2


def test_batch_different_partitions_rejected_by_sdk(table):
    with pytest.raises(ValueError):
        table.submit_transaction([("create", ent("a", pk="p1")), ("create", ent("b", pk="p2"))])


def test_batch_different_partitions_rejected_by_server_with_index(table, monkeypatch, azurite_gap):
    azurite_gap("accepts a batch spanning partitions")
    # Bypass the SDK's own check so the request reaches the server, as other SDKs' requests would.
    monkeypatch.setattr(TableBatchOperations, "_verify_partition_key", lambda self, entity: None)
    with pytest.raises(TableTransactionError) as err:
        table.submit_transaction(
            [("create", ent("a", pk="p1")), ("create", ent("b", pk="p1")), ("create", ent("c", pk="p2"))]
        )
    assert_failed_atomically(table, [], err.value, 2, "CommandsInBatchActOnDifferentPartitions")


def test_batch_duplicate_row_rejected_with_index(table):
    with pytest.raises(TableTransactionError) as err:
        table.submit_transaction([("create", ent("a")), ("create", ent("b")), ("upsert", ent("a"))])
    assert_failed_atomically(table, [], err.value, 2, "InvalidDuplicateRow")


def test_batch_over_100_operations_rejected(table, azurite_gap):
    azurite_gap("answers over 100 operations with a malformed batch response")
    with pytest.raises(TableTransactionError) as err:
        table.submit_transaction([("create", ent(f"{i:03}")) for i in range(101)])
    assert code_of(err.value) == "InvalidInput", err.value.message
    # The service reports the last allowed operation (index 99), as recorded in the SDK's tests.
    assert err.value.index == 99, err.value.message
    assert keys(table) == []


def test_batch_empty_is_a_no_op(table, azurite_gap):
    # The service answers an empty changeset with 400, which the SDK turns into an empty result.
    azurite_gap("answers an empty changeset with an error the SDK cannot map")
    assert table.submit_transaction([]) == []


def test_batch_on_missing_table_fails(service):
    from conftest import unique_table_name

    client = service.get_table_client(unique_table_name("nob"))
    with pytest.raises(TableTransactionError) as err:
        client.submit_transaction([("create", ent("a"))])
    assert code_of(err.value) == "TableNotFound"
    # As the service: an error of no one operation is the first one's, its message indexed.
    assert err.value.index == 0
    assert err.value.message.startswith("0:The table specified does not exist."), err.value.message

"""Create, delete, list and query tables; table names; stored access policies (ACL)."""

from datetime import datetime, timedelta, timezone

import pytest
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.data.tables import TableAccessPolicy

from conftest import code_of, unique_table_name


def test_table_create_then_list_and_delete(service):
    name = unique_table_name("crud")
    created = service.create_table(name)
    assert created.table_name == name
    assert name in {t.name for t in service.list_tables()}
    service.delete_table(name)
    assert name not in {t.name for t in service.list_tables()}


def test_table_create_existing_is_resource_exists(service, table):
    with pytest.raises(ResourceExistsError) as err:
        service.create_table(table.table_name)
    assert code_of(err.value) == "TableAlreadyExists"
    assert err.value.status_code == 409


def test_table_create_existing_other_case_is_resource_exists(service, table):
    with pytest.raises(ResourceExistsError):
        service.create_table(table.table_name.upper())


def test_table_create_if_not_exists_returns_existing(service, table):
    again = service.create_table_if_not_exists(table.table_name)
    assert again.table_name == table.table_name


def test_table_name_case_is_preserved(service):
    name = "Mixed" + unique_table_name("Case")
    service.create_table(name)
    try:
        assert name in {t.name for t in service.list_tables()}
    finally:
        service.delete_table(name)


def test_table_delete_missing_is_silent_in_sdk_and_404_on_wire(service):
    # The SDK swallows 404 on delete_table; the table client's own delete surfaces the code.
    name = unique_table_name("gone")
    service.delete_table(name)
    with pytest.raises(ResourceNotFoundError) as err:
        service.get_table_client(name).get_entity("p", "r")
    assert code_of(err.value) in ("TableNotFound", "ResourceNotFound")


def test_table_entity_op_on_missing_table_is_table_not_found(service):
    client = service.get_table_client(unique_table_name("none"))
    with pytest.raises(ResourceNotFoundError) as err:
        client.create_entity({"PartitionKey": "p", "RowKey": "r"})
    assert code_of(err.value) == "TableNotFound"


def test_table_query_by_name_filter(service):
    prefix = unique_table_name("q")[:12]
    names = [f"{prefix}{i}" for i in range(3)]
    for name in names:
        service.create_table(name)
    try:
        found = [
            t.name
            for t in service.query_tables(
                "TableName ge @lo and TableName lt @hi",
                parameters={"lo": prefix, "hi": prefix + "~"},
            )
        ]
        assert sorted(found) == names
        exact = [t.name for t in service.query_tables("TableName eq @n", parameters={"n": names[1]})]
        assert exact == [names[1]]
    finally:
        for name in names:
            service.delete_table(name)


def test_table_list_pages_with_next_table_name(service):
    prefix = unique_table_name("pg")[:12]
    names = [f"{prefix}{i:02}" for i in range(7)]
    for name in names:
        service.create_table(name)
    try:
        pages = service.query_tables(
            "TableName ge @lo and TableName lt @hi",
            parameters={"lo": prefix, "hi": prefix + "~"},
            results_per_page=3,
        ).by_page()
        sizes = []
        seen = []
        for page in pages:
            items = [t.name for t in page]
            sizes.append(len(items))
            seen.extend(items)
        assert seen == names
        assert max(sizes) <= 3
        assert len(sizes) >= 3
    finally:
        for name in names:
            service.delete_table(name)


@pytest.mark.parametrize(
    "name",
    ["ab", "1abc", "has-dash", "has_underscore", "a" * 64, "sp ace"],
)
def test_table_name_invalid_is_rejected(service, name, target):
    # The SDK turns the service's InvalidResourceName / OutOfRangeInput, worded as the service
    # words them, into a ValueError naming the rule.
    expected = ValueError if target == "strata" else (ValueError, HttpResponseError)
    with pytest.raises(expected) as err:
        service.create_table(name)
    if isinstance(err.value, HttpResponseError):
        assert err.value.status_code == 400
    assert name not in {t.name for t in service.list_tables()}


@pytest.mark.parametrize("name", ["1table", "aa", "a" * 64, "my_table"])
def test_table_name_invalid_is_rejected_by_acl_and_batch_too(service, name, azurite_gap):
    # The official suite's test_table_name_errors: every operation on a badly named table is
    # the name-rule error (which the SDK turns into its ValueError), not a missing table.
    azurite_gap("answers a missing table for a bad name")
    client = service.get_table_client(name)
    with pytest.raises(ValueError, match="Storage table names must be alphanumeric"):
        client.get_table_access_policy()
    with pytest.raises(ValueError, match="Storage table names must be alphanumeric"):
        client.submit_transaction([("upsert", {"PartitionKey": "A", "RowKey": "B"})])


def test_table_account_url_ending_with_a_table_name_gets_the_services_answers(
    endpoint, credential, azurite_gap
):
    # The official suite's test_client_with_url_ends_with_table_name (client, batch, service
    # properties): the service reads /{account}/{table}/... as that table's, and the SDK adds
    # "Please check your account URL." to its answers.
    azurite_gap("answers InvalidUri for paths below a table")
    from azure.data.tables import TableClient, TableServiceClient

    name = unique_table_name("urltable")
    bad_url = f"{endpoint}/{name}"
    wrong = TableClient(bad_url, name, credential=credential)
    with pytest.raises(ResourceNotFoundError, match="Please check your account URL"):
        wrong.create_table()
    with TableClient(endpoint, name, credential=credential) as right:
        right.create_table()
        try:
            with pytest.raises(HttpResponseError, match="values are not specified") as err:
                wrong.create_table()
            assert "Please check your account URL" in str(err.value)
            with pytest.raises(HttpResponseError, match="does not match number of key properties"):
                wrong.delete_table()
            with pytest.raises(HttpResponseError) as err:
                wrong.submit_transaction([("upsert", {"PartitionKey": "p", "RowKey": "r"})])
            assert err.value.status_code == 415
            assert err.value.error_code == "MediaTypeNotSupported"
            with pytest.raises(HttpResponseError, match="URI is invalid"):
                TableServiceClient(bad_url, credential=credential).get_service_properties()
            # An entity sent below a table is refused, never committed into that table.
            misplaced = TableClient(bad_url, "others", credential=credential)
            with pytest.raises(HttpResponseError, match="does not match number of key properties"):
                misplaced.create_entity({"PartitionKey": "p", "RowKey": "r"})
            assert list(right.list_entities()) == []
        finally:
            right.delete_table()


def test_table_name_reserved_tables_is_rejected(service, azurite_gap):
    azurite_gap("creates a table named 'Tables'")
    with pytest.raises((ValueError, HttpResponseError)) as err:
        service.create_table("Tables")
    if isinstance(err.value, HttpResponseError):
        assert err.value.status_code == 400


def test_table_acl_set_then_get_roundtrips(table):
    start = datetime(2024, 1, 1, tzinfo=timezone.utc)
    expiry = datetime(2035, 1, 1, tzinfo=timezone.utc)
    table.set_table_access_policy(
        {
            "readers": TableAccessPolicy(permission="r", start=start, expiry=expiry),
            "writers": TableAccessPolicy(permission="raud", start=start, expiry=expiry),
        }
    )
    got = table.get_table_access_policy()
    assert set(got) == {"readers", "writers"}
    assert got["readers"].permission == "r"
    assert got["writers"].permission == "raud"
    assert got["readers"].start == start
    assert got["readers"].expiry == expiry


def test_table_acl_empty_clears_policies(table):
    now = datetime.now(timezone.utc).replace(microsecond=0)
    table.set_table_access_policy(
        {"p1": TableAccessPolicy(permission="r", start=now, expiry=now + timedelta(hours=1))}
    )
    table.set_table_access_policy({})
    assert table.get_table_access_policy() == {}


def test_table_acl_more_than_five_policies_is_rejected(table):
    now = datetime.now(timezone.utc).replace(microsecond=0)
    policies = {
        f"id{i}": TableAccessPolicy(permission="r", start=now, expiry=now + timedelta(hours=1))
        for i in range(6)
    }
    # The SDK maps the service's InvalidXmlDocument for > 5 identifiers to a ValueError.
    with pytest.raises((ValueError, HttpResponseError)):
        table.set_table_access_policy(policies)


def test_table_acl_on_missing_table_is_not_found(service):
    client = service.get_table_client(unique_table_name("noacl"))
    with pytest.raises(ResourceNotFoundError):
        client.get_table_access_policy()


def test_table_acl_identifier_without_a_policy_reads_back_as_none(table, azurite_gap):
    azurite_gap("answers an identifier without a policy with an empty policy")
    table.set_table_access_policy({"empty": None})
    acl = table.get_table_access_policy()
    assert "empty" in acl
    assert acl["empty"] is None

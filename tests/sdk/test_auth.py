"""SharedKey and SAS (account and table, permissions, times, key ranges, stored policies)."""

import urllib.error
import urllib.request
from datetime import datetime, timedelta, timezone

import pytest
from azure.core.credentials import AzureNamedKeyCredential, AzureSasCredential
from azure.core.exceptions import ClientAuthenticationError, HttpResponseError
from azure.data.tables import (
    AccountSasPermissions,
    ResourceTypes,
    TableAccessPolicy,
    TableClient,
    TableSasPermissions,
    TableServiceClient,
    generate_account_sas,
    generate_table_sas,
)

from conftest import code_of, unique_table_name

ALL_RESOURCES = ResourceTypes(service=True, container=True, object=True)


def now():
    return datetime.now(timezone.utc).replace(microsecond=0)


def assert_refused(call):
    with pytest.raises(HttpResponseError) as err:
        call()
    assert err.value.status_code == 403, err.value.message
    return err.value


def sas_table(endpoint, table_name, sas):
    return TableClient(endpoint=endpoint, table_name=table_name, credential=AzureSasCredential(sas))


def test_auth_shared_key_connection_string_works(service, table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r"})
    assert table.table_name in {t.name for t in service.list_tables()}


def test_auth_shared_key_named_credential_works(endpoint, credential, table):
    with TableClient(endpoint=endpoint, table_name=table.table_name, credential=credential) as client:
        client.create_entity({"PartitionKey": "p", "RowKey": "r"})
        assert len(list(client.list_entities())) == 1


def test_auth_wrong_key_is_authentication_failed(endpoint, account_name, table, target):
    bad = AzureNamedKeyCredential(account_name, "AAAA" + "A" * 84)
    with TableClient(endpoint=endpoint, table_name=table.table_name, credential=bad) as client:
        with pytest.raises(HttpResponseError) as err:
            client.create_entity({"PartitionKey": "p", "RowKey": "r"})
    assert err.value.status_code == 403
    if target != "azurite":  # azurite answers AuthorizationFailure in an XML body
        assert code_of(err.value) == "AuthenticationFailed"
    with TableClient(endpoint=endpoint, table_name=table.table_name, credential=bad) as client:
        # Reads go through the SDK's error decoding, which types AuthenticationFailed.
        with pytest.raises((ClientAuthenticationError, HttpResponseError)) as err:
            client.get_entity("p", "r")
    assert err.value.status_code == 403
    if target != "azurite":
        assert isinstance(err.value, ClientAuthenticationError)
    assert list(table.list_entities()) == []


def test_auth_anonymous_is_refused(endpoint, table):
    # The SDK refuses to send without a credential, so this one request is raw HTTP.
    request = urllib.request.Request(
        f"{endpoint}/{table.table_name}()",
        headers={"Accept": "application/json;odata=nometadata", "x-ms-version": "2019-02-02"},
    )
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=10)
    assert err.value.code == 403


def test_auth_missing_credential_is_refused_by_sdk(endpoint, table):
    with pytest.raises(ValueError):
        TableClient(endpoint=endpoint, table_name=table.table_name).create_entity({"PartitionKey": "p", "RowKey": "r"})


def test_auth_account_sas_allows_listed_permissions(endpoint, credential, table):
    sas = generate_account_sas(
        credential,
        resource_types=ALL_RESOURCES,
        permission=AccountSasPermissions(read=True, write=True, list=True, add=True, update=True, delete=True),
        expiry=now() + timedelta(hours=1),
        start=now() - timedelta(minutes=5),
    )
    with TableServiceClient(endpoint=endpoint, credential=AzureSasCredential(sas)) as svc:
        assert table.table_name in {t.name for t in svc.list_tables()}
        client = svc.get_table_client(table.table_name)
        client.create_entity({"PartitionKey": "p", "RowKey": "r", "V": 1})
        assert client.get_entity("p", "r")["V"] == 1
        client.delete_entity("p", "r")


def test_auth_account_sas_read_only_refuses_writes(endpoint, credential, table):
    table.create_entity({"PartitionKey": "p", "RowKey": "r"})
    sas = generate_account_sas(
        credential,
        resource_types=ALL_RESOURCES,
        permission=AccountSasPermissions(read=True, list=True),
        expiry=now() + timedelta(hours=1),
    )
    client = sas_table(endpoint, table.table_name, sas)
    assert len(list(client.list_entities())) == 1
    assert_refused(lambda: client.create_entity({"PartitionKey": "p", "RowKey": "x"}))
    assert_refused(lambda: client.upsert_entity({"PartitionKey": "p", "RowKey": "r", "V": 2}))
    assert_refused(lambda: client.delete_entity("p", "r"))
    assert len(list(table.list_entities())) == 1


def test_auth_account_sas_without_the_resource_type_is_resource_type_mismatch(endpoint, credential, table):
    # Listing tables is a container ("c") operation; reading entities an object ("o") one.
    sas = generate_account_sas(
        credential,
        resource_types=ResourceTypes(object=True),
        permission=AccountSasPermissions(read=True, list=True),
        expiry=now() + timedelta(hours=1),
    )
    service = TableServiceClient(endpoint=endpoint, credential=AzureSasCredential(sas))
    refused = assert_refused(lambda: list(service.list_tables()))
    assert code_of(refused) == "AuthorizationResourceTypeMismatch"
    assert list(sas_table(endpoint, table.table_name, sas).list_entities()) == []


def test_auth_account_sas_without_the_table_service_is_service_mismatch(endpoint, account_name, account_key, table):
    # The SDK always signs ss=t; a SAS for the blob service alone is signed here by hand.
    import base64
    import hashlib
    import hmac
    from urllib.parse import quote

    expiry = (now() + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    fields = {"sp": "rl", "ss": "b", "srt": "sco", "se": expiry, "sv": "2019-02-02"}
    to_sign = f"{account_name}\nrl\nb\nsco\n\n{expiry}\n\n\n2019-02-02\n"
    key = base64.b64decode(account_key)
    fields["sig"] = base64.b64encode(hmac.new(key, to_sign.encode(), hashlib.sha256).digest()).decode()
    query = "&".join(f"{name}={quote(value, safe='')}" for name, value in fields.items())
    request = urllib.request.Request(
        f"{endpoint}/{table.table_name}()?{query}", headers={"Accept": "application/json;odata=nometadata"}
    )
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=10)
    assert err.value.code == 403
    assert err.value.headers["x-ms-error-code"] == "AuthorizationServiceMismatch"


def test_auth_account_sas_expired_is_refused(endpoint, credential, table):
    sas = generate_account_sas(
        credential,
        resource_types=ALL_RESOURCES,
        permission=AccountSasPermissions(read=True, list=True),
        start=now() - timedelta(hours=2),
        expiry=now() - timedelta(hours=1),
    )
    assert_refused(lambda: list(sas_table(endpoint, table.table_name, sas).list_entities()))


def test_auth_table_sas_grants_its_table_only(endpoint, credential, service, table):
    other = service.create_table(unique_table_name("other"))
    try:
        sas = generate_table_sas(
            credential,
            table.table_name,
            permission=TableSasPermissions(read=True, add=True, update=True, delete=True),
            expiry=now() + timedelta(hours=1),
        )
        mine = sas_table(endpoint, table.table_name, sas)
        mine.create_entity({"PartitionKey": "p", "RowKey": "r"})
        assert len(list(mine.list_entities())) == 1
        theirs = sas_table(endpoint, other.table_name, sas)
        assert_refused(lambda: theirs.create_entity({"PartitionKey": "p", "RowKey": "r"}))
        assert list(other.list_entities()) == []
    finally:
        service.delete_table(other.table_name)


def test_auth_table_sas_read_only_refuses_add(endpoint, credential, table):
    sas = generate_table_sas(credential, table.table_name, permission="r", expiry=now() + timedelta(hours=1))
    client = sas_table(endpoint, table.table_name, sas)
    assert list(client.list_entities()) == []
    assert_refused(lambda: client.create_entity({"PartitionKey": "p", "RowKey": "r"}))


def test_auth_table_sas_not_yet_valid_is_refused(endpoint, credential, table):
    sas = generate_table_sas(
        credential,
        table.table_name,
        permission="r",
        start=now() + timedelta(hours=1),
        expiry=now() + timedelta(hours=2),
    )
    assert_refused(lambda: list(sas_table(endpoint, table.table_name, sas).list_entities()))


def test_auth_table_sas_tampered_signature_is_refused(endpoint, credential, table):
    sas = generate_table_sas(credential, table.table_name, permission="r", expiry=now() + timedelta(hours=1))
    # Widening the permission without re-signing must fail the signature check.
    tampered = sas.replace("sp=r", "sp=raud")
    assert tampered != sas
    assert_refused(lambda: sas_table(endpoint, table.table_name, tampered).create_entity(
        {"PartitionKey": "p", "RowKey": "r"}
    ))


def test_auth_table_sas_partition_range_refuses_outside(endpoint, credential, table, azurite_gap):
    azurite_gap("signs but does not enforce SAS PartitionKey/RowKey ranges")
    for pk in ("a", "b", "c", "d"):
        table.create_entity({"PartitionKey": pk, "RowKey": "r"})
    sas = generate_table_sas(
        credential,
        table.table_name,
        permission="raud",
        expiry=now() + timedelta(hours=1),
        start_pk="b",
        end_pk="c",
    )
    client = sas_table(endpoint, table.table_name, sas)
    client.create_entity({"PartitionKey": "b", "RowKey": "new"})
    client.upsert_entity({"PartitionKey": "c", "RowKey": "r", "V": 1})
    assert client.get_entity("b", "r")["PartitionKey"] == "b"
    for pk in ("a", "d"):
        assert_refused(lambda: client.create_entity({"PartitionKey": pk, "RowKey": "new"}))
        assert_refused(lambda: client.upsert_entity({"PartitionKey": pk, "RowKey": "r", "V": 1}))
        assert_refused(lambda: client.get_entity(pk, "r"))
        assert_refused(lambda: client.delete_entity(pk, "r"))
    assert_refused(lambda: client.submit_transaction([("create", {"PartitionKey": "d", "RowKey": "x"})]))
    # A scan through the range-limited SAS sees only rows inside the range, or is refused; never others.
    try:
        seen = {e["PartitionKey"] for e in client.list_entities()}
        assert seen <= {"b", "c"}
    except HttpResponseError as err:
        assert err.status_code == 403
    assert {e["PartitionKey"] for e in table.list_entities()} == {"a", "b", "c", "d"}
    assert "V" not in table.get_entity("d", "r")


def test_auth_table_sas_row_range_refuses_outside(endpoint, credential, table, azurite_gap):
    azurite_gap("signs but does not enforce SAS PartitionKey/RowKey ranges")
    sas = generate_table_sas(
        credential,
        table.table_name,
        permission="raud",
        expiry=now() + timedelta(hours=1),
        start_pk="p",
        start_rk="m",
        end_pk="p",
        end_rk="n",
    )
    client = sas_table(endpoint, table.table_name, sas)
    client.create_entity({"PartitionKey": "p", "RowKey": "m1"})
    assert_refused(lambda: client.create_entity({"PartitionKey": "p", "RowKey": "z"}))
    assert_refused(lambda: client.create_entity({"PartitionKey": "p", "RowKey": "a"}))
    assert [e["RowKey"] for e in table.list_entities()] == ["m1"]


def test_auth_table_sas_with_stored_policy(endpoint, credential, table):
    table.set_table_access_policy(
        {"readonly": TableAccessPolicy(permission="r", start=now() - timedelta(minutes=5), expiry=now() + timedelta(hours=1))}
    )
    table.create_entity({"PartitionKey": "p", "RowKey": "r"})
    sas = generate_table_sas(credential, table.table_name, policy_id="readonly")
    client = sas_table(endpoint, table.table_name, sas)
    assert len(list(client.list_entities())) == 1
    assert_refused(lambda: client.create_entity({"PartitionKey": "p", "RowKey": "x"}))


def test_auth_table_sas_with_unknown_policy_is_refused(endpoint, credential, table, azurite_gap):
    sas = generate_table_sas(credential, table.table_name, policy_id="nosuchpolicy")
    assert_refused(lambda: list(sas_table(endpoint, table.table_name, sas).list_entities()))

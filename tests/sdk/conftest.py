"""Fixtures of the SDK conformance suite: one server, reached only through the official SDK.

The server under test is named by environment variables, so the same suite runs against
`strata serve` (the default, started by tests/sdk_conformance.rs) and against the Azurite
emulator (to prove the suite itself is right):

- STRATA_TABLE_ENDPOINT: e.g. http://127.0.0.1:10002/devstoreaccount1 (required)
- STRATA_ACCOUNT_NAME / STRATA_ACCOUNT_KEY: default to the emulator's well-known account
- STRATA_SDK_TARGET: "strata" (default) or "azurite"; Azurite's known deviations from the
  service are skipped only under "azurite", never under strata.
"""

import os
import uuid

import pytest
from azure.core.credentials import AzureNamedKeyCredential
from azure.data.tables import TableServiceClient

EMULATOR_ACCOUNT = "devstoreaccount1"
EMULATOR_KEY = (
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
)


def _endpoint() -> str:
    endpoint = os.environ.get("STRATA_TABLE_ENDPOINT")
    if not endpoint:
        pytest.exit("STRATA_TABLE_ENDPOINT is not set: start a server and point the suite at it", 2)
    return endpoint.rstrip("/")


@pytest.fixture(scope="session")
def target() -> str:
    return os.environ.get("STRATA_SDK_TARGET", "strata")


@pytest.fixture(scope="session")
def endpoint() -> str:
    return _endpoint()


@pytest.fixture(scope="session")
def account_name() -> str:
    return os.environ.get("STRATA_ACCOUNT_NAME", EMULATOR_ACCOUNT)


@pytest.fixture(scope="session")
def account_key() -> str:
    return os.environ.get("STRATA_ACCOUNT_KEY", EMULATOR_KEY)


@pytest.fixture(scope="session")
def credential(account_name, account_key) -> AzureNamedKeyCredential:
    return AzureNamedKeyCredential(account_name, account_key)


@pytest.fixture(scope="session")
def connection_string(endpoint, account_name, account_key) -> str:
    return (
        f"DefaultEndpointsProtocol=http;AccountName={account_name};"
        f"AccountKey={account_key};TableEndpoint={endpoint};"
    )


@pytest.fixture(scope="session")
def service(connection_string):
    with TableServiceClient.from_connection_string(connection_string) as client:
        yield client


@pytest.fixture
def azurite_gap(target):
    """Call with a reason where the emulator deviates from the service; skips only on Azurite."""

    def skip(reason: str) -> None:
        if target == "azurite":
            pytest.skip(f"azurite deviates from the service: {reason}")

    return skip


def unique_table_name(prefix: str = "t") -> str:
    return f"{prefix}{uuid.uuid4().hex[:20]}"


@pytest.fixture
def table(service):
    """A fresh, empty table for one test, deleted afterwards."""
    name = unique_table_name()
    client = service.create_table(name)
    yield client
    service.delete_table(name)


def code_of(err) -> str:
    """The service error code of an SDK exception.

    The SDK sets `error_code` only on some paths (it re-raises the raw error on inserts), so this
    falls back to the `x-ms-error-code` header and then to the `odata.error` body.
    """
    code = getattr(err, "error_code", None)
    if code:
        return getattr(code, "value", code)
    response = getattr(err, "response", None)
    if response is None:
        return ""
    header = response.headers.get("x-ms-error-code")
    if header:
        return header
    try:
        return response.json()["odata.error"]["code"]
    except Exception:  # noqa: BLE001 - any undecodable body means "no code"
        return ""

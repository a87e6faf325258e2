"""pytest plugin (`-p strata_official_plugin`): the official azure-data-tables suite, live, emulator-style.

- The server: STRATA_TABLE_ENDPOINT, e.g. http://127.0.0.1:10002/devstoreaccount1 (required).
  The suite's `TableTestCase.account_url` builds `https://{account}.table.core.windows.net`; here it
  becomes the path-style `http://127.0.0.1:PORT/{account}` of the emulators.
- The account: TABLES_STORAGE_ACCOUNT_NAME / TABLES_PRIMARY_STORAGE_ACCOUNT_KEY, as the real
  preparer reads them, defaulting to the emulator's well-known devstoreaccount1.
- Sleeps: the suite waits 10-45 s in live mode for the service's propagation delays; they are
  capped at STRATA_OFFICIAL_MAX_SLEEP seconds (default 0).
- Skips: SKIPPED_FILES and SKIPPED_TESTS below, each with its reason.
"""

import os
import sys
import time
import types
from urllib.parse import urlsplit

import pytest

EMULATOR_ACCOUNT = "devstoreaccount1"
EMULATOR_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

# Whole files not collected, with the reason.
SKIPPED_FILES = {
    "_cosmos": "Cosmos DB Table API tests: they need a Cosmos account (and azure-mgmt-cosmosdb); strata "
    "implements the Storage table service only",
    "test_table_aad.py": "Entra ID (AAD) bearer-token auth: needs a real tenant and an account with RBAC",
    "test_table_aad_async.py": "Entra ID (AAD) bearer-token auth: needs a real tenant and an account with RBAC",
    "test_challenge_auth.py": "Entra ID challenge-based auth: needs a real tenant (and a second one)",
    "test_challenge_auth_async.py": "Entra ID challenge-based auth: needs a real tenant (and a second one)",
    "perfstress_tests": "perf-stress programs of the SDK's perf harness, not tests",
}

# Single tests skipped: "file::Class::test" -> reason.
SKIPPED_TESTS = {}


def _endpoint():
    endpoint = os.environ.get("STRATA_TABLE_ENDPOINT")
    if not endpoint:
        pytest.exit("STRATA_TABLE_ENDPOINT is not set: start a server and point the suite at it", 2)
    return endpoint.rstrip("/")


def _account_url(self, account, endpoint_type):
    # Path-style emulator address: the account is the first path segment, not a host label.
    parts = urlsplit(_endpoint())
    name = getattr(account, "name", account)
    return "{}://{}/{}".format(parts.scheme, parts.netloc, name)


class _CappedSleepTime(types.ModuleType):
    """The `time` module as a test module sees it, with `sleep` capped (see the module doc)."""

    def __init__(self):
        super().__init__("time")

    def __getattr__(self, name):
        return getattr(time, name)

    def sleep(self, seconds):
        from devtools_testutils.recorded_testcase import max_sleep_seconds

        time.sleep(min(seconds, max_sleep_seconds()))


def pytest_configure(config):
    # The SDK repo's root conftest registers these; live_test_only tests run here (we are live).
    config.addinivalue_line("markers", "live_test_only: runs only against a live server")
    config.addinivalue_line("markers", "playback_test_only: runs only against recordings")
    os.environ.setdefault("TABLES_STORAGE_ACCOUNT_NAME", os.environ.get("STRATA_ACCOUNT_NAME", EMULATOR_ACCOUNT))
    os.environ.setdefault("TABLES_PRIMARY_STORAGE_ACCOUNT_KEY", os.environ.get("STRATA_ACCOUNT_KEY", EMULATOR_KEY))
    # The cosmos preparer's variables, so an un-skipped cosmos test fails on the server, not here.
    os.environ.setdefault("TABLES_COSMOS_ACCOUNT_NAME", os.environ["TABLES_STORAGE_ACCOUNT_NAME"])
    os.environ.setdefault("TABLES_PRIMARY_COSMOS_ACCOUNT_KEY", os.environ["TABLES_PRIMARY_STORAGE_ACCOUNT_KEY"])
    _endpoint()


def pytest_ignore_collect(collection_path, config):
    name = collection_path.name
    for pattern in SKIPPED_FILES:
        if pattern in name:
            return True
    return None


def pytest_collection_modifyitems(session, config, items):
    testcase = sys.modules.get("_shared.testcase")
    if testcase is not None:
        testcase.TableTestCase.account_url = _account_url
    capped = _CappedSleepTime()
    for module in {item.module for item in items if getattr(item, "module", None) is not None}:
        if getattr(module, "time", None) is time:
            module.time = capped
    for item in items:
        reason = SKIPPED_TESTS.get(item.nodeid.split("[")[0])
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))

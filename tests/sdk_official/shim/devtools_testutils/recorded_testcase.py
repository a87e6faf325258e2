"""`AzureRecordedTestCase` and `is_live`, always live: the suite runs against a real server."""

import os
import time
import zlib


def is_live():
    """Always True: this shim has no playback mode, every request reaches the server."""
    return True


def is_live_and_not_recording():
    """Always True: live, and no test proxy records the traffic."""
    return True


def max_sleep_seconds():
    """The longest sleep a test may take (STRATA_OFFICIAL_MAX_SLEEP, default 0).

    The suite sleeps 10 to 45 s in live mode to wait for the service's replication and
    propagation delays (table deletion, service properties, the geo secondary); a server whose
    writes are visible at once needs none of it, and the waits would make a run take hours.
    """
    return float(os.environ.get("STRATA_OFFICIAL_MAX_SLEEP", "0"))


def get_credential(**kwargs):
    """An Entra ID credential, as the real helper returns in live mode (only AAD tests use it)."""
    is_async = kwargs.pop("is_async", False)
    if is_async:
        from azure.identity.aio import DefaultAzureCredential
    else:
        from azure.identity import DefaultAzureCredential
    return DefaultAzureCredential(**kwargs)


def _resource_name(prefix, identifier):
    # The real tooling's naming: the prefix plus a checksum of the test id, so each test gets its
    # own table names and a rerun gets the same ones.
    checksum = zlib.adler32(identifier) & 0xFFFFFFFF
    return "{}{}".format(prefix, hex(checksum)[2:])


class AzureRecordedTestCase(object):
    """Base class of the suite's test classes: names, sleeps and SAS helpers, live only."""

    @property
    def is_live(self):
        return is_live()

    @property
    def in_recording(self):
        return self.is_live

    @property
    def recording_processors(self):
        return []

    def is_playback(self):
        return not self.is_live

    def get_settings_value(self, key):
        value = os.environ.get("AZURE_" + key)
        if value is None:
            raise KeyError("AZURE_" + key)
        return value

    def create_random_name(self, name):
        identifier = os.environ["PYTEST_CURRENT_TEST"].encode("utf-8")
        return _resource_name(name, identifier)

    def get_resource_name(self, name):
        return self.create_random_name(name)

    def get_preparer_resource_name(self, prefix):
        return self.get_resource_name(prefix)

    def get_credential(self, client_class, **kwargs):
        return get_credential(**kwargs)

    def sleep(self, seconds):
        if self.is_live:
            time.sleep(min(seconds, max_sleep_seconds()))

    def generate_sas(self, *args, **kwargs):
        sas_func = args[0]
        kwargs.pop("fake_value", None)
        return sas_func(*args[1:], **kwargs)

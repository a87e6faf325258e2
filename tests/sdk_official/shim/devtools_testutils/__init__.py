"""A stand-in for azure-sdk-for-python's `devtools_testutils` that runs tests LIVE only.

The official azure-data-tables test suite imports this package (the SDK repo's own test tooling,
not on PyPI). Here every recording hook is a pass-through: no test proxy, no recordings, no
sanitizers; tests talk straight to the server the `strata_official_plugin` names. Signatures follow
the real package (tools/azure-sdk-tools/devtools_testutils) so the suite runs unmodified.
"""

from .callbacks import ResponseCallback, RetryCounter
from .preparers import (
    AbstractPreparer,
    AzureMgmtPreparer,
    AzureTestError,
    EnvironmentVariableLoader,
    PowerShellPreparer,
)
from .proxy import (
    add_body_key_sanitizer,
    add_body_regex_sanitizer,
    add_general_regex_sanitizer,
    add_general_string_sanitizer,
    add_header_regex_sanitizer,
    add_oauth_response_sanitizer,
    add_remove_header_sanitizer,
    add_uri_regex_sanitizer,
    recorded_by_proxy,
    remove_batch_sanitizers,
    set_bodiless_matcher,
    set_custom_default_matcher,
    set_default_session_settings,
    test_proxy,
    variable_recorder,
)
from .recorded_testcase import (
    AzureRecordedTestCase,
    get_credential,
    is_live,
    is_live_and_not_recording,
)

__all__ = [
    "AbstractPreparer",
    "AzureMgmtPreparer",
    "AzureRecordedTestCase",
    "AzureTestError",
    "EnvironmentVariableLoader",
    "PowerShellPreparer",
    "ResponseCallback",
    "RetryCounter",
    "add_body_key_sanitizer",
    "add_body_regex_sanitizer",
    "add_general_regex_sanitizer",
    "add_general_string_sanitizer",
    "add_header_regex_sanitizer",
    "add_oauth_response_sanitizer",
    "add_remove_header_sanitizer",
    "add_uri_regex_sanitizer",
    "get_credential",
    "is_live",
    "is_live_and_not_recording",
    "recorded_by_proxy",
    "remove_batch_sanitizers",
    "set_bodiless_matcher",
    "set_custom_default_matcher",
    "set_default_session_settings",
    "test_proxy",
    "variable_recorder",
]

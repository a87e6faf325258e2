"""The test-proxy hooks, all pass-through: no proxy runs, so nothing is recorded or sanitized."""

import functools

import pytest

from .preparers import trim_kwargs_from_test_function


def recorded_by_proxy(test_func):
    """Calls the test directly, as the real decorator does in live mode without recording."""

    @functools.wraps(test_func)
    def record_wrap(*args, **kwargs):
        trimmed = dict(kwargs)
        trim_kwargs_from_test_function(test_func, trimmed)
        return test_func(*args, **trimmed)

    return record_wrap


@pytest.fixture(scope="session")
def test_proxy():
    """The real fixture starts the test proxy; there is none here."""
    yield


@pytest.fixture
def variable_recorder():
    """The real fixture records variables for playback; live runs keep them in a plain dict."""
    yield {}


def _no_op(*args, **kwargs):
    return None


set_custom_default_matcher = _no_op
set_bodiless_matcher = _no_op
set_default_session_settings = _no_op
add_body_key_sanitizer = _no_op
add_body_regex_sanitizer = _no_op
add_general_regex_sanitizer = _no_op
add_general_string_sanitizer = _no_op
add_header_regex_sanitizer = _no_op
add_oauth_response_sanitizer = _no_op
add_remove_header_sanitizer = _no_op
add_uri_regex_sanitizer = _no_op
remove_batch_sanitizers = _no_op

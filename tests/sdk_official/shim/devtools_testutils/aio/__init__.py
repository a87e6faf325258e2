"""The async test-proxy decorator, pass-through like its sync twin."""

import functools

from ..preparers import trim_kwargs_from_test_function


def recorded_by_proxy_async(test_func):
    """Awaits the test directly, as the real decorator does in live mode without recording."""

    @functools.wraps(test_func)
    async def record_wrap(*args, **kwargs):
        trimmed = dict(kwargs)
        trim_kwargs_from_test_function(test_func, trimmed)
        return await test_func(*args, **trimmed)

    return record_wrap


__all__ = ["recorded_by_proxy_async"]

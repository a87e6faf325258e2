"""Preparers: decorators that hand a test the account it runs against, read from the environment."""

import asyncio
import inspect
import os


class AzureTestError(Exception):
    """A test's environment is not set up (a variable the preparer needs is missing)."""


def trim_kwargs_from_test_function(fn, kwargs):
    """Drops the keyword arguments `fn` does not take (unless it takes **kwargs or is a preparer)."""
    if getattr(fn, "__is_preparer", False):
        return
    spec = inspect.getfullargspec(fn)
    if spec.varkw is None:
        for key in [k for k in kwargs if k not in spec.args and k not in spec.kwonlyargs]:
            del kwargs[key]


class AbstractPreparer(object):
    """Wraps a test so it is called with the keyword arguments `create_resource` returns."""

    def __init__(self, name_prefix, name_len, disable_recording=False, **kwargs):
        self.name_prefix = name_prefix
        self.name_len = name_len
        self.disable_recording = disable_recording
        self.test_class_instance = None

    def create_resource(self, name, **kwargs):
        return {}

    def remove_resource(self, name, **kwargs):
        pass

    def __call__(self, fn):
        def _preparer_wrapper(test_class_instance, **kwargs):
            self.test_class_instance = test_class_instance
            kwargs.update(self.create_resource(self.name_prefix, **kwargs) or {})
            trimmed = dict(kwargs)
            trim_kwargs_from_test_function(fn, trimmed)
            try:
                # As the real preparer: the wrapper is synchronous and runs an async test itself.
                if asyncio.iscoroutinefunction(fn):
                    asyncio.run(fn(test_class_instance, **trimmed))
                else:
                    fn(test_class_instance, **trimmed)
            finally:
                self.remove_resource(self.name_prefix, **kwargs)

        setattr(_preparer_wrapper, "__is_preparer", True)
        # pytest reads fixture names from the innermost signature (`__wrapped__`): the suite's
        # decorators take only *args/**kwargs there, so no fixture is requested.
        _preparer_wrapper.__wrapped__ = fn
        _preparer_wrapper.__name__ = getattr(fn, "__name__", "_preparer_wrapper")
        _preparer_wrapper.__doc__ = getattr(fn, "__doc__", None)
        return _preparer_wrapper


class AzureMgmtPreparer(AbstractPreparer):
    """The management-plane preparer base; here only the live, read-from-environment part."""

    def __init__(
        self,
        name_prefix,
        name_len,
        disable_recording=True,
        playback_fake_resource=None,
        client_kwargs=None,
        random_name_enabled=False,
    ):
        super(AzureMgmtPreparer, self).__init__(name_prefix, name_len, disable_recording=disable_recording)
        self.client_kwargs = client_kwargs or {}
        self.random_name_enabled = random_name_enabled

    @property
    def is_live(self):
        return True


class EnvironmentVariableLoader(AzureMgmtPreparer):
    """Supplies each `<directory>_...` keyword from the environment variable of its upper-cased name.

    As the real loader in live mode: `@EnvironmentVariableLoader("tables",
    tables_storage_account_name="fake")` calls the test with
    `tables_storage_account_name=os.environ["TABLES_STORAGE_ACCOUNT_NAME"]`.
    """

    def __init__(
        self,
        directory,
        name_prefix="",
        disable_recording=True,
        client_kwargs=None,
        random_name_enabled=False,
        use_cache=True,
        preparers=None,
        **kwargs
    ):
        super(EnvironmentVariableLoader, self).__init__(
            name_prefix,
            24,
            disable_recording=disable_recording,
            client_kwargs=client_kwargs,
            random_name_enabled=random_name_enabled,
        )
        self.directory = directory
        self.fake_values = {k: v for k, v in kwargs.items() if directory in k}

    def create_resource(self, name, **kwargs):
        real_values = {}
        for key in self.fake_values:
            variable = key.upper()
            if variable not in os.environ:
                raise AzureTestError("environment variable {} is not set (needed for {})".format(variable, key))
            real_values[key.lower()] = os.environ[variable]
        return real_values


PowerShellPreparer = EnvironmentVariableLoader

"""Global settings of lrank, read and changed like scikit-learn's ``config_context``.

``one_query``: when True, ``fit(X, y)`` without ``qid`` / ``group`` treats all rows as one query
(the caller says so explicitly); when False (the default) it is an error, because ranking data almost
never is one query and a silent single query enumerates every pair of the whole set.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_DEFAULTS = {"one_query": False}
_local = threading.local()


def _config() -> dict:
    if not hasattr(_local, "config"):
        _local.config = dict(_DEFAULTS)
    return _local.config


def get_config() -> dict:
    """A copy of the current settings."""
    return dict(_config())


def set_config(*, one_query: bool | None = None) -> None:
    """Change settings for the rest of the thread (``None`` leaves a setting as it is)."""
    if one_query is not None:
        _config()["one_query"] = bool(one_query)


@contextmanager
def config_context(*, one_query: bool | None = None) -> Iterator[None]:
    """Change settings inside a ``with`` block only.

    >>> import lrank
    >>> with lrank.config_context(one_query=True):   # fit(X, y) = all rows are one query
    ...     pass
    """
    old = get_config()
    set_config(one_query=one_query)
    try:
        yield
    finally:
        _config().update(old)

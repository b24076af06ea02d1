"""The one numba policy of lrank.

Every kernel in ``lrank/_kernels`` is decorated with :func:`njit` from this module, so the fastmath
policy is set in exactly one place.  ``FASTMATH`` deliberately excludes ``nnan`` and ``ninf``:
ranking code relies on NaN features (the RankBoost paper's "unranked" value), ``-inf`` sentinels and
exact ties.  It also excludes ``reassoc`` so that a reduction's result depends only on the data, never
on how the compiler chose to vectorise it (same seed, same bits).

Where compiled kernels are cached (``cache=True``), decided here before any kernel is decorated:

1. ``NUMBA_CACHE_DIR`` when it is set (numba's own variable, honoured as it is);
2. else numba's default, ``lrank/_kernels/__pycache__``, when that folder can be written (a checkout,
   an editable or a per-user install);
3. else (a read-only or shared install) a user cache folder, ``$XDG_CACHE_HOME/lrank/numba`` or
   ``~/.cache/lrank/numba`` (``%LOCALAPPDATA%\\lrank\\numba`` on Windows), created if needed;
4. else, when no home folder can be written either, ``<tmp>/lrank-numba-<user>``.

In cases 3 and 4 ``NUMBA_CACHE_DIR`` is set for this process (and its children) and numba's config is
updated, so kernels compile once per user instead of on every start. `cache_dir()` tells which folder
is in use.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

_KERNELS = Path(__file__).resolve().parent


def _can_write(folder: Path) -> bool:
    """Whether a file can be created in ``folder`` (created if missing); tried, not guessed from modes
    (root ignores permission bits, not read-only mounts or immutable folders)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
        return True
    except OSError:
        return False


def _user_cache_root() -> Path:
    if sys.platform.startswith("win"):
        return Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")


def _choose_cache_dir() -> tuple[Path, str]:
    """``(folder, reason)`` of numba's cache for lrank's kernels; sets ``NUMBA_CACHE_DIR`` when needed."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        return Path(given), "NUMBA_CACHE_DIR"
    if _can_write(_KERNELS / "__pycache__"):
        return _KERNELS / "__pycache__", "package folder"
    candidates = []
    try:
        candidates.append((_user_cache_root() / "lrank" / "numba", "user cache folder"))
    except RuntimeError:  # no home folder
        pass
    user = str(os.getuid()) if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    candidates.append((Path(tempfile.gettempdir()) / f"lrank-numba-{user}", "temporary folder"))
    for folder, reason in candidates:
        if _can_write(folder):
            os.environ["NUMBA_CACHE_DIR"] = str(folder)
            return folder, reason
    return _KERNELS / "__pycache__", "none writable: kernels compile on every start"


CACHE_DIR, CACHE_REASON = _choose_cache_dir()

import numba  # noqa: E402 - after NUMBA_CACHE_DIR is decided
import numba.core.config  # noqa: E402

if os.environ.get("NUMBA_CACHE_DIR") and numba.core.config.CACHE_DIR != os.environ["NUMBA_CACHE_DIR"]:
    numba.core.config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]  # numba was imported before lrank


def cache_dir() -> tuple[Path, str]:
    """Where numba caches lrank's compiled kernels, and why (see the module docstring)."""
    return CACHE_DIR, CACHE_REASON

FASTMATH: frozenset[str] = frozenset({"nsz", "arcp", "contract"})


def njit(*args, cache: bool = True, parallel: bool = False, **kwargs):
    """``numba.njit`` with lrank's fastmath policy.

    Use as ``@njit(cache=True)`` (serial, cached) or ``@njit(cache=False, parallel=True)`` (parallel
    kernels are never cached: numba has open bugs with ``cache=True`` plus ``parallel=True``).
    Passing ``fastmath=`` is an error: the policy lives here.
    """
    if "fastmath" in kwargs:
        raise TypeError("lrank kernels take the fastmath policy from lrank._kernels._jit.FASTMATH")
    options = dict(cache=cache and not parallel, parallel=parallel, fastmath=set(FASTMATH), **kwargs)
    if args and callable(args[0]):
        return numba.njit(**options)(args[0])
    return numba.njit(*args, **options)

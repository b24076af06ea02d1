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

What a first fit compiles (issue 15.5): only the kernels it calls, lazily, one specialisation per
argument-type tuple. Two rules keep that to one compile per kernel:

* **No literal specialisations.** numba types a constant argument of a call between kernels
  (``f(x, 0)``, or a variable initialised to ``0`` and widened later) as ``Literal[int](0)`` and
  compiles the callee once for the literal and once more for ``int64``. Every lrank kernel is a
  :class:`LrankDispatcher`, which compiles a call between kernels for the non-literal types only
  (``types.unliteral``); the literal call then converts to that one signature. No lrank kernel
  dispatches on a literal value, so nothing is lost (``tests/kernels/test_jit.py`` checks the bits).
* **A kernel's cache is stale when any kernel module changed.** numba stamps a cached function with
  its own file's content only, so a kernel calling a kernel of another file kept running the callee's
  old code from the cache after that file changed (an upgrade, a checkout, an edit). Here the stamp of
  every function in ``lrank/_kernels`` also holds a digest of all the modules of that folder
  (:func:`kernels_digest`), so any change there recompiles what calls it.
* **Parallel kernels are cached too** (numba 0.68 caches ``parallel=True`` code and the cached
  code runs on any thread count; tested). A kernel must not read ``numba.get_num_threads()``
  inside (numba refuses to cache that, a dynamic global): the caller passes the block count.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import os
import sys
import tempfile
from collections.abc import Iterator
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
from numba.core import types  # noqa: E402
from numba.core.registry import CPUDispatcher  # noqa: E402

if os.environ.get("NUMBA_CACHE_DIR") and numba.core.config.CACHE_DIR != os.environ["NUMBA_CACHE_DIR"]:
    numba.core.config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]  # numba was imported before lrank


def kernels_digest(folder: Path = _KERNELS) -> str:
    """SHA-256 over the names and contents of the ``*.py`` modules in ``folder`` (``lrank/_kernels``)."""
    h = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


KERNELS_DIGEST = kernels_digest()


def _whole_folder_locator(base: type) -> type:
    """numba cache locator ``base``, restricted to ``lrank/_kernels`` and stamping each function with its
    file's stamp and `KERNELS_DIGEST` (read at stamp time), so a change in any kernel module makes every
    cached lrank kernel stale."""

    class Locator(base):
        def get_source_stamp(self):
            return super().get_source_stamp(), _digest_now()

        @classmethod
        def from_function(cls, py_func, py_file):
            if Path(py_file).resolve().parent != _KERNELS:
                return None
            return super().from_function(py_func, py_file)

    Locator.__name__ = Locator.__qualname__ = "Lrank" + base.__name__
    return Locator


def _digest_now() -> str:
    """`KERNELS_DIGEST`, read through the module at stamp time (a test changes it to see a stale cache)."""
    return sys.modules[__name__].KERNELS_DIGEST


def _install_locators() -> bool:
    """Put the whole-folder locators in front of numba's own (numba's private list; if a numba version
    lacks it, lrank falls back to numba's per-file stamps and says so in `cache_dir`'s reason)."""
    try:
        from numba.core import caching

        impl = caching.CacheImpl
        bases = [caching.UserProvidedCacheLocator, caching.InTreeCacheLocator, caching.UserWideCacheLocator]
    except (ImportError, AttributeError):
        return False
    if not any(getattr(c, "__name__", "").startswith("Lrank") for c in impl._locator_classes):
        impl._locator_classes[:0] = [_whole_folder_locator(b) for b in bases]
    return True


if not _install_locators():  # pragma: no cover - another numba
    CACHE_REASON += "; numba's per-file cache stamps (a changed callee module may leave callers stale)"


def cache_dir() -> tuple[Path, str]:
    """Where numba caches lrank's compiled kernels, and why (see the module docstring)."""
    return CACHE_DIR, CACHE_REASON


FASTMATH: frozenset[str] = frozenset({"nsz", "arcp", "contract"})


class LrankDispatcher(CPUDispatcher):
    """numba's CPU dispatcher, compiling calls from other kernels for non-literal argument types only, with
    Python's cyclic garbage collector paused while it compiles."""

    def get_call_template(self, args, kws):
        args = tuple(types.unliteral(a) for a in args)
        kws = {k: types.unliteral(v) for k, v in kws.items()}
        return super().get_call_template(args, kws)

    def compile(self, sig):
        """numba's ``compile`` (or its cache load) with the cyclic garbage collector paused (issue 15.5).

        Compiling allocates objects by the million, so the collector runs again and again, and each full
        pass walks every object of the process (after ``import sklearn``, scipy and pandas, hundreds of
        thousands): ~0.9 s of a 6.3 s cold LambdaMART fit's compilation, measured. Paused, the objects
        compilation leaves are collected by the collector's first pass after it. Only the outermost
        compile (a kernel called from another compiles inside its caller) switches it, and only if it
        was on.
        """
        if not gc.isenabled():
            return super().compile(sig)
        gc.disable()
        try:
            return super().compile(sig)
        finally:
            gc.enable()


def njit(*args, cache: bool = True, parallel: bool = False, **kwargs):
    """``numba.njit`` with lrank's fastmath policy, caching, no literal specialisations, and no C-callable
    wrapper (``no_cfunc_wrapper``: numba emits one per compiled function for passing it as a first-class
    function value, which no lrank kernel does; ~0.01 s of compilation each, measured).

    Use as ``@njit(cache=True)`` (serial) or ``@njit(cache=True, parallel=True)``; both are cached
    (see the module docstring). Passing ``fastmath=`` is an error: the policy lives here.
    """
    if "fastmath" in kwargs:
        raise TypeError("lrank kernels take the fastmath policy from lrank._kernels._jit.FASTMATH")
    options = dict(cache=cache, parallel=parallel, fastmath=set(FASTMATH), no_cfunc_wrapper=True, **kwargs)

    def decorate(fn):
        dispatcher = numba.njit(*signatures, **options)(fn)
        if type(dispatcher) is CPUDispatcher:  # not under NUMBA_DISABLE_JIT=1 (plain Python functions)
            dispatcher.__class__ = LrankDispatcher
        return dispatcher

    if args and callable(args[0]):
        signatures = ()
        return decorate(args[0])
    signatures = args
    return decorate


def set_threads(n_jobs: int) -> int:
    """Set numba's number of threads for ``n_jobs`` (1: one thread; -1 or more than numba has: all of
    them) and return it."""
    most = numba.config.NUMBA_NUM_THREADS
    k = min(int(n_jobs), most) if n_jobs > 0 else most
    if numba.get_num_threads() != k:
        numba.set_num_threads(k)
    return k


@contextlib.contextmanager
def threads(n_jobs: int) -> Iterator[int]:
    """Numba's threads set for ``n_jobs`` (`set_threads`) inside the block, restored after it; yields the
    number set. The validating functions of the kernel modules and the tree grower run their parallel
    kernels inside it."""
    old = numba.get_num_threads()
    try:
        yield set_threads(n_jobs)
    finally:
        if numba.get_num_threads() != old:
            numba.set_num_threads(old)

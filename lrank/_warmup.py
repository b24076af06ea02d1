"""Compile (or load from numba's on-disk cache) every kernel: each ``lrank._kernels`` module's ``warmup``.

``python -m lrank warmup`` runs it once after an install (or an upgrade), so that no fit pays numba's
compilation: a first fit then loads its kernels from the cache (`lrank._kernels._jit.cache_dir`).
"""

from __future__ import annotations

import importlib
import pkgutil
import time
from collections.abc import Iterable

import lrank._kernels as kernels


def kernel_modules() -> list[str]:
    """The kernel modules (``lrank._kernels``' public-named modules), sorted."""
    return sorted(m.name for m in pkgutil.iter_modules(kernels.__path__) if not m.name.startswith("_"))


def _with_warmup() -> list[str]:
    return [n for n in kernel_modules() if hasattr(importlib.import_module(f"lrank._kernels.{n}"), "warmup")]


def run(only: Iterable[str] | None = None, progress: bool = False) -> dict[str, float]:
    """Call ``warmup()`` of every kernel module that defines one (or of the modules ``only`` names).

    Parameters
    ----------
    only : iterable of str, optional
        Kernel module names (``lambdas``, ``trees``, ...); default every module with a ``warmup``.
    progress : bool
        Show a progress bar (tqdm) over the modules.

    Returns
    -------
    dict
        Module name -> seconds its warmup took (compiling, or loading from the cache).

    Raises
    ------
    ValueError
        If ``only`` names a module without a ``warmup`` (the message lists the known ones).
    """
    names = _with_warmup()
    if only is not None:
        wanted = list(only)
        unknown = [n for n in wanted if n not in names]
        if unknown:
            raise ValueError(f"only: no kernel module {', '.join(map(repr, unknown))} with a warmup; "
                             f"known: {', '.join(names)}")
        names = [n for n in names if n in wanted]
    if progress:
        from tqdm import tqdm

        names = tqdm(names, desc="kernels", unit="module")
    seconds = {}
    for name in names:
        if progress:
            names.set_postfix_str(name)
        t0 = time.perf_counter()
        importlib.import_module(f"lrank._kernels.{name}").warmup()
        seconds[name] = time.perf_counter() - t0
    return seconds

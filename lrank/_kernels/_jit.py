"""The one numba policy of lrank.

Every kernel in ``lrank/_kernels`` is decorated with :func:`njit` from this module, so the fastmath
policy is set in exactly one place.  ``FASTMATH`` deliberately excludes ``nnan`` and ``ninf``:
ranking code relies on NaN features (the RankBoost paper's "unranked" value), ``-inf`` sentinels and
exact ties.  It also excludes ``reassoc`` so that a reduction's result depends only on the data, never
on how the compiler chose to vectorise it (same seed, same bits).
"""

from __future__ import annotations

import numba

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

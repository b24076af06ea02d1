"""Critical pairs within queries: documents ``hi``, ``lo`` of one query with ``y[hi] > y[lo]``."""

from __future__ import annotations

import numpy as np

from ._jit import njit


@njit(cache=True)
def _count(y, qptr, out):
    """``out[q]`` = number of critical pairs of query ``q``; ``out`` (int64, n_queries) is passed in and
    every entry is written."""
    for q in range(qptr.size - 1):
        a, b = qptr[q], qptr[q + 1]
        c = 0
        for i in range(a, b):
            yi = y[i]
            for j in range(a, b):
                if yi > y[j]:
                    c += 1
        out[q] = c
    return out


@njit(cache=True)
def _fill(y, qptr, hi, lo, qof):
    """Write every critical pair into ``hi``, ``lo``, ``qof`` (int64, passed in with exactly one entry per
    pair, the total of `_count`), ordered by query, then ``hi``, then ``lo``."""
    k = 0
    for q in range(qptr.size - 1):
        a, b = qptr[q], qptr[q + 1]
        for i in range(a, b):
            yi = y[i]
            for j in range(a, b):
                if yi > y[j]:
                    hi[k] = i
                    lo[k] = j
                    qof[k] = q
                    k += 1
    return hi, lo, qof


def _inputs(y: np.ndarray, qptr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    y = np.ascontiguousarray(y)
    qptr = np.ascontiguousarray(qptr, dtype=np.int64)
    if y.ndim != 1 or qptr.ndim != 1 or qptr.size < 1:
        raise ValueError(f"y must be 1-d and qptr 1-d non-empty, got shapes {y.shape} and {qptr.shape}")
    return y, qptr


def count_critical_pairs(y: np.ndarray, qptr: np.ndarray) -> np.ndarray:
    """Number of critical pairs of each query.

    Parameters
    ----------
    y : ndarray (n_docs,)
        Labels.
    qptr : ndarray (n_queries + 1,) of int
        Query boundaries: query ``q`` is documents ``qptr[q]:qptr[q + 1]``.

    Returns
    -------
    ndarray (n_queries,) of int64
    """
    y, qptr = _inputs(y, qptr)
    return _count(y, qptr, np.empty(qptr.size - 1, dtype=np.int64))


def critical_pairs(y: np.ndarray, qptr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All critical pairs ``(hi, lo, query)`` (int64), ordered by query, then ``hi``, then ``lo``.

    Parameters
    ----------
    y : ndarray (n_docs,)
        Labels; ``y[hi] > y[lo]`` within a query.
    qptr : ndarray (n_queries + 1,) of int
        Query boundaries.

    Returns
    -------
    hi, lo, query : ndarray (n_pairs,) of int64
    """
    y, qptr = _inputs(y, qptr)
    m = int(_count(y, qptr, np.empty(qptr.size - 1, dtype=np.int64)).sum())
    hi, lo, qof = (np.empty(m, dtype=np.int64) for _ in range(3))
    return _fill(y, qptr, hi, lo, qof)


def warmup() -> None:
    """Compile this module's kernels on a toy query."""
    critical_pairs(np.array([1, 0, 2], dtype=np.int32), np.array([0, 3], dtype=np.int64))

"""Critical pairs within queries: documents ``hi``, ``lo`` of one query with ``y[hi] > y[lo]``."""

from __future__ import annotations

import numpy as np

from ._jit import njit


@njit(cache=True)
def _count(y, qptr):
    nq = qptr.size - 1
    out = np.zeros(nq, dtype=np.int64)
    for q in range(nq):
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
def _fill(y, qptr, counts):
    m = 0
    for q in range(counts.size):
        m += counts[q]
    hi = np.empty(m, dtype=np.int64)
    lo = np.empty(m, dtype=np.int64)
    qof = np.empty(m, dtype=np.int64)
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


def count_critical_pairs(y: np.ndarray, qptr: np.ndarray) -> np.ndarray:
    """Number of critical pairs of each query (int64, length n_queries)."""
    return _count(np.ascontiguousarray(y), np.ascontiguousarray(qptr, dtype=np.int64))


def critical_pairs(y: np.ndarray, qptr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All critical pairs ``(hi, lo, query)``, ordered by query, then ``hi``, then ``lo``."""
    y = np.ascontiguousarray(y)
    qptr = np.ascontiguousarray(qptr, dtype=np.int64)
    return _fill(y, qptr, _count(y, qptr))


def warmup() -> None:
    """Compile this module's kernels on a toy query."""
    critical_pairs(np.array([1, 0, 2], dtype=np.int32), np.array([0, 3], dtype=np.int64))

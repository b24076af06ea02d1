"""Map raw feature values to bin codes: 0 for missing, ``1 + #{thresholds < x}`` otherwise."""

from __future__ import annotations

import numpy as np

from ._jit import njit


@njit(cache=True, nogil=True)
def _apply_thresholds(X, thresholds, n_thresholds, out, r0, r1):
    """Fill ``out[i, f]`` for rows ``r0 <= i < r1`` with the code of ``X[i, f]`` given feature ``f``'s
    sorted thresholds (row by row: the row-major ``X`` and ``out`` are read and written in order).

    ``thresholds[f, :n_thresholds[f]]`` are increasing; code 0 is missing (NaN), code ``c >= 1`` means
    exactly ``c - 1`` thresholds lie strictly below the value, so ``x > theta_j`` iff ``code > j``
    (1-based ``j``). ``nogil``: row blocks run on Python threads without a parallel (uncacheable) kernel.
    """
    F = X.shape[1]
    for i in range(r0, r1):
        for f in range(F):
            x = X[i, f]
            if x != x:
                out[i, f] = 0
                continue
            lo, hi = 0, n_thresholds[f]
            while lo < hi:  # number of thresholds strictly below x
                mid = (lo + hi) >> 1
                if thresholds[f, mid] < x:
                    lo = mid + 1
                else:
                    hi = mid
            out[i, f] = lo + 1
    return out


def apply_thresholds(X: np.ndarray, thresholds: np.ndarray, n_thresholds: np.ndarray, out: np.ndarray,
                     n_jobs: int = 1) -> np.ndarray:
    """Bin codes of ``X`` (float32, (n, F)) into ``out`` (uint8/uint16, (n, F)); returns ``out``.

    ``thresholds`` is (F, k) float64 padded with +inf, ``n_thresholds`` (F,) int64. ``n_jobs > 1``
    splits the rows into blocks on that many threads (the same codes whatever ``n_jobs``).
    """
    if X.ndim != 2 or out.shape != X.shape or thresholds.shape[0] != X.shape[1] \
            or n_thresholds.shape != (X.shape[1],):
        raise ValueError(f"apply_thresholds: shapes disagree: X {X.shape}, out {out.shape}, "
                         f"thresholds {thresholds.shape}, n_thresholds {n_thresholds.shape}")
    n = X.shape[0]
    n_jobs = max(1, min(int(n_jobs), n // 50_000))
    if n_jobs == 1:
        return _apply_thresholds(X, thresholds, n_thresholds, out, 0, n)
    from concurrent.futures import ThreadPoolExecutor

    cuts = np.linspace(0, n, n_jobs + 1).astype(np.int64)
    with ThreadPoolExecutor(n_jobs) as ex:
        list(ex.map(lambda t: _apply_thresholds(X, thresholds, n_thresholds, out, cuts[t], cuts[t + 1]),
                    range(n_jobs)))
    return out


def warmup() -> None:
    """Compile this module's kernels on a toy matrix, for uint8 and uint16 codes (more than 255
    thresholds on a feature)."""
    X = np.array([[0.0, np.nan], [1.0, 2.0]], dtype=np.float32)
    for dt in (np.uint8, np.uint16):
        apply_thresholds(X, np.array([[0.5], [np.inf]]), np.array([1, 0], dtype=np.int64),
                         np.empty(X.shape, dtype=dt))

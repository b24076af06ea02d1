"""Map raw feature values to bin codes: 0 for missing, ``1 + #{thresholds < x}`` otherwise."""

from __future__ import annotations

import numpy as np

from ._jit import njit


@njit(cache=True)
def apply_thresholds(X, thresholds, n_thresholds, out):
    """Fill ``out[i, f]`` with the code of ``X[i, f]`` given feature ``f``'s sorted thresholds.

    ``thresholds[f, :n_thresholds[f]]`` are increasing; code 0 is missing (NaN), code ``c >= 1`` means
    exactly ``c - 1`` thresholds lie strictly below the value, so ``x > theta_j`` iff ``code > j``
    (1-based ``j``).
    """
    n, F = X.shape
    for f in range(F):
        k = n_thresholds[f]
        for i in range(n):
            x = X[i, f]
            if x != x:
                out[i, f] = 0
                continue
            lo, hi = 0, k
            while lo < hi:  # number of thresholds strictly below x
                mid = (lo + hi) >> 1
                if thresholds[f, mid] < x:
                    lo = mid + 1
                else:
                    hi = mid
            out[i, f] = lo + 1
    return out


def warmup() -> None:
    """Compile this module's kernels on a toy matrix."""
    X = np.array([[0.0, np.nan], [1.0, 2.0]], dtype=np.float32)
    apply_thresholds(X, np.array([[0.5], [np.inf]]), np.array([1, 0], dtype=np.int64),
                     np.empty(X.shape, dtype=np.uint8))

"""The float32 cast of float64 features in one pass, with what it loses (`lrank.data.container.as_float32`).

lrank stores features as float32. Casting a float64 matrix can overflow a finite value to infinity, flush
a non-zero value to 0, or round distinct values onto one; `cast_float32` casts and notes all three while
it reads each value once (NumPy needs a pass over the matrix for the cast and one for each check).
"""

from __future__ import annotations

import numpy as np

from ._jit import njit

#: ``stats`` entries of `_cast_float32`: infinite inputs, overflows (count, first flat index), flushes
N_INF, N_OVER, FIRST_OVER, N_FLUSHED, FIRST_FLUSHED = range(5)


@njit(cache=True)
def _cast_float32(X, step, out, changed, stats):
    """``out = float32(X)`` for a C-contiguous float64 ``X`` (n, F), one pass.

    ``stats`` (int64, 5; every entry written): the infinities of ``X``; the finite values that became
    infinite (count, first flat index ``i * F + j`` or -1); the non-zero values that became 0 (count, first
    flat index or -1). ``changed[j]`` (bool, F; zeroed by the caller) is set when the cast changes a value
    of column ``j`` on a row ``i`` with ``i % step == 0`` (NaN stays NaN: not a change).
    """
    n, F = X.shape
    n_inf = 0
    n_over = 0
    first_over = -1
    n_flushed = 0
    first_flushed = -1
    for i in range(n):
        sampled = i % step == 0
        for j in range(F):
            x = X[i, j]
            v = np.float32(x)
            out[i, j] = v
            if v == x:  # exact (an infinity included: NaN never compares equal)
                if v - v != 0.0:
                    n_inf += 1
                continue
            if x != x:  # NaN
                continue
            if sampled:
                changed[j] = True
            if v - v != 0.0:  # a finite value became infinite
                if first_over < 0:
                    first_over = i * F + j
                n_over += 1
            elif v == 0.0:  # a non-zero value became 0
                if first_flushed < 0:
                    first_flushed = i * F + j
                n_flushed += 1
    stats[0] = n_inf
    stats[1] = n_over
    stats[2] = first_over
    stats[3] = n_flushed
    stats[4] = first_flushed
    return out


def cast_float32(X: np.ndarray, step: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``X`` (2-d float64) as C-contiguous float32, and what the cast lost, in one pass (`_cast_float32`).

    Parameters
    ----------
    X : ndarray (n, F) of float64
        Feature values; NaN and infinities pass through. Copied to C order first when it is not (the
        caller passes C-ordered input: reading another order in place is NumPy's cast's job).
    step : int, default 1
        ``changed`` looks at the rows ``0, step, 2 * step, ...`` only.

    Returns
    -------
    X32 : ndarray (n, F) of float32
    changed : ndarray (F,) of bool
        Columns with a value the cast changes on the rows looked at (rounded, overflowed or flushed).
    stats : ndarray (5,) of int64
        At `N_INF`, `N_OVER`, `FIRST_OVER`, `N_FLUSHED`, `FIRST_FLUSHED`: the infinite values of ``X``, the
        finite values that overflow float32 and the non-zero values that become 0 (counts; the first of
        each as a flat row-major index, -1 when there is none).
    """
    X = np.ascontiguousarray(X)
    if X.ndim != 2 or X.dtype != np.float64:
        raise ValueError(f"X must be a 2-d float64 array, got {X.dtype} of shape {X.shape}")
    step = int(step)
    if step < 1:
        raise ValueError(f"step must be at least 1, got {step}")
    out = np.empty(X.shape, dtype=np.float32)
    changed = np.zeros(X.shape[1], dtype=np.bool_)
    stats = np.empty(5, dtype=np.int64)
    _cast_float32(X, step, out, changed, stats)
    return out, changed, stats


def warmup() -> None:
    """Compile the cast on a toy matrix."""
    cast_float32(np.array([[0.5, np.nan], [1e-300, np.inf]]), 1)

"""Plain-NumPy references for the data kernels: critical pairs and bin codes."""

import numpy as np


def critical_pairs(y, qptr):
    hi, lo = [], []
    for q in range(len(qptr) - 1):
        idx = np.arange(qptr[q], qptr[q + 1])
        for i in idx:
            for j in idx:
                if y[i] > y[j]:
                    hi.append(i)
                    lo.append(j)
    return np.array(hi, dtype=np.int64), np.array(lo, dtype=np.int64)


def bin_codes(X, thresholds):
    out = np.zeros(X.shape, dtype=np.int64)
    for f, thr in enumerate(thresholds):
        col = X[:, f].astype(np.float64)
        known = ~np.isnan(col)
        out[known, f] = 1 + (col[known][:, None] > np.asarray(thr)[None, :]).sum(axis=1)
    return out


def merged(col: np.ndarray) -> tuple[int, int, tuple[float, float] | None]:
    """``(distinct float64 values, distinct after the float32 cast, an example pair merged)`` of one column
    (NaN ignored; non-zero values that become 0 are not merges): the column-by-column reference of
    `lrank.data.container._merged_columns`."""
    c = np.sort(col[~np.isnan(col)])
    if c.size == 0:
        return 0, 0, None
    new64 = c[1:] != c[:-1]
    c32 = c.astype(np.float32)
    lost = new64 & (c32[1:] == c32[:-1]) & (c32[1:] != 0)  # values that became 0: as_float32's other warning
    d64 = int(np.count_nonzero(new64)) + 1
    if not lost.any():
        return d64, d64, None
    i = int(np.flatnonzero(lost)[0])
    return d64, d64 - int(np.count_nonzero(lost)), (float(c[i]), float(c[i + 1]))


def cast_float32(X, step=1):
    """`lrank._kernels.cast.cast_float32` in NumPy, one pass per check: ``(X32, changed, stats)``."""
    X = np.asarray(X, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        X32 = X.astype(np.float32)
        over = np.isinf(X32) & np.isfinite(X)
        flushed = (X32 == 0) & (X != 0) & ~np.isnan(X)
        changed = ((X32[::step] != X[::step]) & ~np.isnan(X[::step])).any(axis=0)

    def first(mask):
        hit = np.flatnonzero(mask.ravel())
        return int(hit[0]) if hit.size else -1

    stats = [np.isinf(X).sum(), over.sum(), first(over), flushed.sum(), first(flushed)]
    stats = np.array(stats, dtype=np.int64)
    return X32, changed, stats

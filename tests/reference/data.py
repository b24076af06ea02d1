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

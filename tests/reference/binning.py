"""The binning as it was first written (one feature at a time, ``np.unique`` then a second sort for the
quantiles, a column-by-column coding loop): the reference the faster `lrank.data.bin_features` must match
bit for bit on sets no larger than its row sample."""

from __future__ import annotations

import numpy as np


def bin_features_v1(X, max_thresholds=254, strategy="subsample", random_state=None):
    """(codes, thresholds) of the original implementation."""
    X = np.ascontiguousarray(X, dtype=np.float32)
    rng = np.random.default_rng(random_state)
    thresholds = []
    for f in range(X.shape[1]):
        v = np.unique(X[:, f][~np.isnan(X[:, f])].astype(np.float64))
        cand = (v[:-1] + v[1:]) / 2.0 if v.size >= 2 else np.zeros(0)
        if strategy != "all" and cand.size > max_thresholds:
            if strategy == "subsample":
                cand = np.sort(rng.choice(cand, size=max_thresholds, replace=False))
            else:
                known = np.sort(X[:, f][~np.isnan(X[:, f])].astype(np.float64))
                qs = np.quantile(known, np.linspace(0, 1, max_thresholds + 2)[1:-1])
                pos = np.clip(np.searchsorted(cand, qs), 0, cand.size - 1)
                cand = np.unique(cand[pos])
        thresholds.append(cand)
    kmax = max((t.size for t in thresholds), default=0)
    codes = np.empty(X.shape, dtype=np.uint8 if kmax + 2 <= 256 else np.uint16)
    for f, t in enumerate(thresholds):
        col = X[:, f].astype(np.float64)
        c = np.searchsorted(t, col, side="left") + 1  # thresholds strictly below x
        c[np.isnan(col)] = 0
        codes[:, f] = c
    return codes, thresholds

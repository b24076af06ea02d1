"""Plain-NumPy AdaRank straight from Xu & Li (2007), Fig. 1 and Sec. 3.6: every round re-ranks every feature.

This is the oracle for `lrank.models.adarank.AdaRank`, which computes the feature x query metric matrix
once. The metric itself is lrank.metrics' (the reference re-ranks, it does not re-implement NDCG/MAP).
"""

from __future__ import annotations

import math

import numpy as np

from lrank.metrics import evaluate


def weighted_performance(M: np.ndarray, P: np.ndarray) -> np.ndarray:
    """varphi_c = sum_i P(i) M[c, i], one Python loop per candidate."""
    return np.array([sum(P[i] * M[c, i] for i in range(M.shape[1])) for c in range(M.shape[0])])


def per_query(y, scores, qptr, metric, opts):
    return np.asarray(evaluate(y, np.asarray(scores, dtype=np.float64), qptr, [metric], per_query=True,
                               **opts)[metric])


def weak_values(X: np.ndarray, directions: str = "positive") -> np.ndarray:
    """Min-max scaled single-feature values z (reversed: -z); NaN -> the lowest training value."""
    X = np.asarray(X, dtype=np.float64)
    cols = []
    for sign in ([1] if directions == "positive" else [1, -1]):
        for k in range(X.shape[1]):
            x = X[:, k]
            ok = ~np.isnan(x)
            lo = x[ok].min() if ok.any() else 0.0
            hi = x[ok].max() if ok.any() else 0.0
            z = (x - lo) / (hi - lo) if hi > lo else np.zeros_like(x)
            h = z if sign == 1 else -z
            low = 0.0 if (sign == 1 or hi == lo) else -1.0
            cols.append(np.where(ok, h, low))
    return np.column_stack(cols)


def adarank(data, metric: str = "map", n_estimators: int = 10, directions: str = "positive",
            metric_options: dict | None = None) -> dict:
    """Fig. 1 without early stopping: chosen candidates, alphas, train E and the Theorem 1 bound per round."""
    opts = dict(metric_options or {})
    opts.setdefault("empty", "skip")
    H = weak_values(data.X, directions)
    y, qptr = data.y, data.qptr
    E0 = per_query(y, H[:, 0], qptr, metric, opts)
    keep = ~np.isnan(E0)
    m = int(keep.sum())
    P = np.full(m, 1.0 / m)
    f = np.zeros(data.n_docs)
    E_prev = np.zeros(m)
    prod = 1.0
    out = {"candidate": [], "alpha": [], "varphi": [], "train_E": [], "bound": [], "delta_min": []}
    for _ in range(n_estimators):
        # Sec. 3.6: rank every query by every feature, this round
        Eh_all = np.array([per_query(y, H[:, c], qptr, metric, opts)[keep] for c in range(H.shape[1])])
        phis = Eh_all @ P
        c = int(np.flatnonzero(phis >= phis.max() - 1e-10)[0])  # the kernel's rule: near-ties to the lowest
        Eh = Eh_all[c]
        varphi = float(np.sum(P * Eh))
        if varphi <= 0:
            break
        alpha = 0.5 * math.log(np.sum(P * (1 + Eh)) / np.sum(P * (1 - Eh)))
        f = f + alpha * H[:, c]
        E = per_query(y, f, qptr, metric, opts)[keep]
        delta = E - E_prev - alpha * Eh
        prod *= math.exp(-delta.min()) * math.sqrt(1 - varphi ** 2)
        P = np.exp(-E) / np.exp(-E).sum()
        E_prev = E
        for key, v in zip(out, (c, alpha, varphi, E.mean(), 1 - prod, delta.min())):
            out[key].append(v)
    return {k: np.asarray(v) for k, v in out.items()}

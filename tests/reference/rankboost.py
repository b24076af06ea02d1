"""Plain-NumPy RankBoost, straight from the paper (Freund et al. 2003), to test the kernels against.

Everything here works on raw feature values and explicit pairs: O(n F |Phi|) and slow on purpose.
"""

from __future__ import annotations

import numpy as np


def potentials(hi, lo, D, n):
    """pi(x) = sum_x' D(x', x) - D(x, x')  (Eq. 10)."""
    pi = np.zeros(n)
    np.add.at(pi, hi, D)
    np.add.at(pi, lo, -D)
    return pi


def stump(x, theta, q):
    """Eq. (9): 1 if x > theta, 0 if x <= theta, q if x is missing."""
    return np.where(np.isnan(x), float(q), (x > theta).astype(float))


def candidates(thresholds_f):
    """Fig. 3's thresholds for one feature: +inf, the candidate thresholds descending, -inf."""
    return np.r_[np.inf, np.sort(thresholds_f)[::-1], -np.inf]


def all_stumps(X, thresholds, hi, lo, D, q_values=(0, 1)):
    """Every candidate (f, theta, q) with r (Eq. 5), W_-, W_0, W_+ (Sec. 3.2) computed pair by pair."""
    rows = []
    for f in range(X.shape[1]):
        for theta in candidates(thresholds[f]):
            for q in q_values:
                h = stump(X[:, f], theta, q)
                d = h[lo] - h[hi]  # h(x_0) - h(x_1)
                wm = D[d < 0].sum()
                wp = D[d > 0].sum()
                w0 = D[d == 0].sum()
                rows.append((f, theta, q, wm - wp, wm, w0, wp))
    return rows


#: the kernels' tie rule (lrank._kernels.stumps.TIE_TOL): |r| or Z this close are equally good
TIE_TOL = 1e-10


def weaklearn_fig3(X, thresholds, pi, q_def=None):
    """Fig. 3 as printed: per feature L, R, scan thresholds from +inf down, step 6 picks q.

    Comparisons as the kernels make them: a later stump replaces the best only when its |r| is larger
    by more than ``TIE_TOL``.
    """
    best = (-1, np.nan, 0, 0.0)
    rstar = 0.0
    for i in range(X.shape[1]):
        x = X[:, i]
        known = ~np.isnan(x)
        R = pi[known].sum()
        L = 0.0
        th = candidates(thresholds[i])
        prev = np.inf
        for j, theta in enumerate(th):
            if j > 0:
                sel = known & (x <= prev) & (x > theta)
                L += pi[sel].sum()
            prev = theta
            if q_def is None:
                q = 0 if abs(L) > abs(L - R) else 1
            else:
                q = q_def
            if abs(L - q * R) > abs(rstar) + TIE_TOL:
                rstar = L - q * R
                best = (i, theta, q, rstar)
    return best


def rankboost(X, thresholds, hi, lo, D, T, method="third", q_def=None):
    """Fig. 1 with a brute-force weak learner over all stumps: alphas, stumps, scores."""
    D = D.copy()
    H = np.zeros(X.shape[0])
    out = []
    qv = (0, 1) if q_def is None else (q_def,)
    for _ in range(T):
        rows = all_stumps(X, thresholds, hi, lo, D, qv)
        if method == "third":
            f, theta, q, r, wm, w0, wp = max(rows, key=lambda t: abs(t[3]))
            alpha = 0.5 * np.log((1 + r) / (1 - r))  # Eq. (6)
        else:
            rows = [t for t in rows if t[3] != 0]
            f, theta, q, r, wm, w0, wp = min(rows, key=lambda t: t[5] + 2 * np.sqrt(t[4] * t[6]))
            eps = 1.0 / (2 * hi.size)  # smoothing (Schapire and Singer 1999) when W_- or W_+ is 0
            alpha = 0.5 * np.log(wm / wp) if min(wm, wp) > 0 else 0.5 * np.log((wm + eps) / (wp + eps))
        h = stump(X[:, f], theta, q)
        D = D * np.exp(alpha * (h[lo] - h[hi]))
        Z = D.sum()
        D /= Z
        H += alpha * h
        out.append((f, theta, q, alpha, Z))
    return out, H


def rloss(hi, lo, D, H):
    """Eq. (21): misordered pairs count 1, ties 1/2."""
    return float(D[H[hi] < H[lo]].sum() + 0.5 * D[H[hi] == H[lo]].sum())

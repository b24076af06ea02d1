"""Plain references for the BoostingTree notebook: brute-force METAMAX selection, brute-force stumps,
NDCGBoost's gammas and alpha straight from the reconstructed NDCGBoost box (double loops)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np


def select_brute(x, y, virtual=True):
    """Eq. (1) by exact rational arithmetic over every pair: is there c > 0 making i strictly best?"""
    X = [Fraction(float(v)) for v in x]
    Y = [Fraction(float(v)) for v in y]
    if virtual:
        X.append(Fraction(0))
        Y.append(max(Y[: len(x)]))
    out = []
    for i in range(len(x)):
        lo, hi, ok = Fraction(0), None, True
        for j in range(len(X)):
            if X[j] == X[i] and Y[j] == Y[i]:
                continue
            if X[j] == X[i]:
                ok = ok and Y[i] > Y[j]
            elif X[j] < X[i]:
                lo = max(lo, (Y[j] - Y[i]) / (X[i] - X[j]))
            else:
                b = (Y[i] - Y[j]) / (X[j] - X[i])
                hi = b if hi is None else min(hi, b)
        out.append(ok and (hi is None or lo < hi))
    return np.array(out, dtype=bool)


def select_grid(x, y, cs):
    """Eq. (1) checked on a grid of c values (strict maximiser of y + c x among distinct points)."""
    x = np.asarray(x, float)
    y = np.asarray(y, float)
    sel = np.zeros(x.size, bool)
    F = y.max()
    for c in cs:
        v = y + c * x
        for i in range(x.size):
            other = ~((x == x[i]) & (y == y[i]))
            if (v[i] > v[other]).all() and v[i] > F:
                sel[i] = True
    return sel


def best_stump_errors(X, y, D):
    """Every (error, direction, feature, threshold) of a stump, by direct evaluation."""
    out = []
    for j in range(X.shape[1]):
        u = np.where(np.isnan(X[:, j]), -np.inf, X[:, j])
        vals = np.unique(u)
        for a, b in zip(vals[:-1], vals[1:]):
            th = a + (b - a) / 2 if np.isfinite(a) else a
            inside = u <= th
            for d, h in ((0, np.where(inside, 1, -1)), (1, np.where(inside, -1, 1))):
                out.append((float(D[h != y].sum()), d, j, th))
    return out


def ndcgboost_gamma(F, g, qptr, Z):
    """reconstructed NDCGBoost box step (a), double loop: sig, pibar, beta, theta and gamma per document."""
    n = F.size
    gamma = np.zeros(n)
    for q in range(qptr.size - 1):
        a, b = qptr[q], qptr[q + 1]
        m = b - a
        sig = np.zeros((m, m))
        for j in range(m):
            for k in range(m):
                if j != k:
                    sig[j, k] = 1.0 / (1.0 + np.exp(2.0 * (F[a + j] - F[a + k])))
        pibar = 1.0 + sig.sum(axis=1)
        beta = g[a:b] / (Z[q] * (1.0 + pibar) * np.log(1.0 + pibar) ** 2) if Z[q] > 0 else np.zeros(m)
        for j in range(m):
            s = 0.0
            for k in range(m):
                if j != k:
                    s += beta[j] * sig[j, k] * (1 - sig[j, k]) - beta[k] * sig[k, j] * (1 - sig[k, j])
            gamma[a + j] = s
    return gamma


def ndcgboost_AB(F, g, qptr, Z, fx):
    """reconstructed NDCGBoost box step (c): A = sum theta [f_j > f_k], B = sum theta [f_j < f_k]."""
    A = B = 0.0
    for q in range(qptr.size - 1):
        a, b = qptr[q], qptr[q + 1]
        m = b - a
        if Z[q] <= 0:
            continue
        sig = np.zeros((m, m))
        for j in range(m):
            for k in range(m):
                if j != k:
                    sig[j, k] = 1.0 / (1.0 + np.exp(2.0 * (F[a + j] - F[a + k])))
        pibar = 1.0 + sig.sum(axis=1)
        beta = g[a:b] / (Z[q] * (1.0 + pibar) * np.log(1.0 + pibar) ** 2)
        for j in range(m):
            for k in range(m):
                if j == k:
                    continue
                th = beta[j] * sig[j, k] * (1 - sig[j, k])
                if fx[a + j] > fx[a + k]:
                    A += th
                elif fx[a + j] < fx[a + k]:
                    B += th
    return A, B


def se_stump(col, col0, lam, hess, nb, nb0, md, min_hess):
    """The one-feature SE stump of BoostingTree's LambdaMART base in plain NumPy (the pre-kernel
    ``LambdaMARTStep._stump``): ``(j, gain, leaf_of, children)`` with ``children[c - 1] = (G, H, N)`` of
    child ``c``, or ``j = -1`` / no children when no split is made. Histograms by ``np.add.at`` (in
    document order), totals by ``np.cumsum`` (left to right), the scan by ``np.argmax``."""
    n = lam.size
    vals = np.stack([-lam, hess, np.ones(n)], axis=1)

    def hist(codes, rows, m):
        h = np.zeros((m, 3))
        np.add.at(h, codes[rows], vals[rows])
        return h.T

    def seq(a):
        return float(np.cumsum(a)[-1]) if a.size else 0.0

    tot0 = hist(col0, np.arange(n), nb0)
    G, H, N = (seq(tot0[c]) for c in range(3))
    h = hist(col, np.arange(n), nb)
    full = h[2, :-1] != 0.0
    gl, hl, nl = np.cumsum(h[0, :-1] * full), np.cumsum(h[1, :-1] * full), np.cumsum(h[2, :-1])
    nr, hr, gr = N - nl, H - hl, G - gl
    ok = (nl >= md) & (nr >= md) & (hl >= min_hess) & (hr >= min_hess)
    if not ok.any():
        return -1, -np.inf, None, None
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.where(ok, gl * gl / nl + gr * gr / nr, -np.inf)
    j = int(np.argmax(g))
    gain = float(g[j]) - (G * G / N if N > 0 else 0.0)
    if not gain > 0.0:
        return j, gain, None, None
    right = col > j
    leaf_of = right.astype(np.int64) + 1
    mid = n - int(right.sum())
    small = 1 if mid <= n - mid else 2
    hs = hist(col0, np.flatnonzero(leaf_of == small), nb0)
    hl_ = tot0 - hs
    children = {small: tuple(seq(hs[c]) for c in range(3)), 3 - small: tuple(seq(hl_[c]) for c in range(3))}
    return j, gain, leaf_of, (children[1], children[2])


def classifier_split(col, nb, s, tol=0.0):
    """NDCGBoost's one-feature classifier stump in plain NumPy (the pre-kernel ``_classifier_stump``):
    ``(j, gain)``: the first bin whose ``max(0, S_L) + max(0, S_R) - max(0, S)`` is within ``tol`` of the
    largest, ``(-1, -inf)`` if no valid bin."""
    n = col.size
    S = s.sum()
    SL = np.cumsum(np.bincount(col, weights=s, minlength=nb)[:nb])[:-1]
    NL = np.cumsum(np.bincount(col, minlength=nb)[:nb].astype(np.float64))[:-1]
    ok = (NL > 0) & (n - NL > 0)
    gain = np.where(ok, np.maximum(SL, 0) + np.maximum(S - SL, 0) - max(S, 0.0), -np.inf)
    if not ok.any():
        return -1, -np.inf
    if np.isnan(gain).any():
        j = int(np.argmax(gain))                    # np.argmax: the first NaN wins
    else:
        j = int(np.argmax(gain >= gain.max() - tol))
    return j, float(gain[j])

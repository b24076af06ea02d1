"""Plain references for the BoostingTree notebook: brute-force METAMAX selection, brute-force stumps,
NDCGBoost's gammas and alpha straight from ALGORITHMS.md 7 (double loops)."""

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
    """ALGORITHMS.md 7 step (a), double loop: sig, pibar, beta, theta and gamma per document."""
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
    """ALGORITHMS.md 7 step (c): A = sum theta [f_j > f_k], B = sum theta [f_j < f_k]."""
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

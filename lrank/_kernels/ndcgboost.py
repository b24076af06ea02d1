"""NDCGBoost kernels (Valizadegan et al. 2009; ALGORITHMS.md 7): document weights, A/B sums, histograms."""

from __future__ import annotations

import numpy as np

from ._jit import njit


@njit(cache=True)
def gamma_kernel(F, g, qptr, invZ, poff, gamma, beta, P):
    """NDCGBoost's document weights gamma (ALGORITHMS.md 7 step (a)); O(sum n_q^2), one exp per pair.

    Fills ``beta`` and, for every unordered pair ``j < k`` of a query, ``P = sig_jk (1 - sig_jk)``
    (symmetric, since ``sig_kj = 1 - sig_jk``) at ``poff[q] + index``, for `ab_kernel` to reuse.
    """
    for q in range(qptr.size - 1):
        lo, hi = qptr[q], qptr[q + 1]
        for j in range(lo, hi):
            gamma[j] = 0.0
            beta[j] = 0.0
        if invZ[q] == 0.0 or hi - lo < 2:
            continue
        # pibar_j - 1 = sum_k sig_jk, accumulated in gamma as scratch
        p = poff[q]
        for j in range(lo, hi):
            for k in range(j + 1, hi):
                sg = 1.0 / (1.0 + np.exp(2.0 * (F[j] - F[k])))
                gamma[j] += sg
                gamma[k] += 1.0 - sg
                P[p] = sg * (1.0 - sg)
                p += 1
        for j in range(lo, hi):
            L = np.log(2.0 + gamma[j])                       # ln(1 + pibar_j)
            beta[j] = g[j] * invZ[q] / ((2.0 + gamma[j]) * L * L)
            gamma[j] = 0.0
        p = poff[q]
        for j in range(lo, hi):
            for k in range(j + 1, hi):
                d = P[p] * (beta[j] - beta[k])
                gamma[j] += d
                gamma[k] -= d
                p += 1


@njit(cache=True)
def ab_kernel(qptr, invZ, poff, fx, beta, P):
    """``A`` and ``B`` of ALGORITHMS.md 7 step (c) for classifier outputs ``fx`` (after `gamma_kernel`)."""
    A = 0.0
    B = 0.0
    for q in range(qptr.size - 1):
        lo, hi = qptr[q], qptr[q + 1]
        if invZ[q] == 0.0 or hi - lo < 2:
            continue
        p = poff[q]
        for j in range(lo, hi):
            for k in range(j + 1, hi):
                if fx[j] > fx[k]:          # theta_jk counts in A, theta_kj in B
                    A += beta[j] * P[p]
                    B += beta[k] * P[p]
                elif fx[j] < fx[k]:
                    A += beta[k] * P[p]
                    B += beta[j] * P[p]
                p += 1
    return A, B


@njit(cache=True)
def histogram3(codes, s, c, rows, hist):
    """``hist[0|1|2, f, b]``: sums of ``s``, ``c`` and counts over ``rows`` by bin code of feature f."""
    F = codes.shape[1]
    for k in range(rows.size):
        i = rows[k]
        for f in range(F):
            b = codes[i, f]
            hist[0, f, b] += s[i]
            hist[1, f, b] += c[i]
            hist[2, f, b] += 1.0


def warmup() -> None:
    """Compile the NDCGBoost kernels on a toy query."""
    from lrank.models.ndcgboost import warmup as _warm

    _warm()

"""NDCGBoost kernels (Valizadegan et al. 2009; ALGORITHMS.md 7): document weights, A/B sums, histograms.

The ``@njit`` kernels are private (``_name``); each is called through one validating function:
`gamma_pairs` (step (a): gamma, beta and the pair terms), `ab_sums` (step (c): A and B) and
`histograms` (per-feature sums for the classifier tree of step (b)). Nothing here imports from the
layers above.
"""

from __future__ import annotations

import numpy as np

from lrank._kernels.histograms import _histogram

from ._jit import njit


@njit(cache=True)
def _gamma_kernel(F, g, qptr, invZ, poff, gamma, beta, P):
    """NDCGBoost's document weights gamma (ALGORITHMS.md 7 step (a)); O(sum n_q^2), one exp per pair.

    Fills ``beta`` and, for every unordered pair ``j < k`` of a query, ``P = sig_jk (1 - sig_jk)``
    (symmetric, since ``sig_kj = 1 - sig_jk``) at ``poff[q] + index``, for `_ab_kernel` to reuse.
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
def _ab_kernel(qptr, invZ, poff, fx, beta, P):
    """``A`` and ``B`` of ALGORITHMS.md 7 step (c) for classifier outputs ``fx`` (after `_gamma_kernel`)."""
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


def pair_offsets(qptr: np.ndarray) -> np.ndarray:
    """Start of each query's unordered pairs in the flat pair buffer (``n_q (n_q - 1) / 2`` per query)."""
    n = np.diff(np.asarray(qptr, dtype=np.int64))
    return np.concatenate([[0], np.cumsum(n * (n - 1) // 2)]).astype(np.int64)


def _f64(name: str, a: np.ndarray, n: int | None = None) -> np.ndarray:
    a = np.ascontiguousarray(a, dtype=np.float64)
    if a.ndim != 1 or (n is not None and a.size != n):
        raise ValueError(f"{name} must be 1-d with {n} entries, got shape {a.shape}")
    return a


def _check_queries(qptr: np.ndarray, n_docs: int, invZ: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    qptr = np.ascontiguousarray(qptr, dtype=np.int64)
    if qptr.ndim != 1 or qptr.size < 1 or qptr[0] != 0 or qptr[-1] != n_docs or np.any(np.diff(qptr) < 0):
        raise ValueError(f"qptr must be non-decreasing offsets from 0 to {n_docs}")
    invZ = _f64("invZ", invZ, qptr.size - 1)
    return qptr, invZ


def gamma_pairs(F: np.ndarray, g: np.ndarray, qptr: np.ndarray, invZ: np.ndarray,
                poff: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NDCGBoost step (a): per-document ``gamma`` and ``beta``, and ``P = sig (1 - sig)`` per pair.

    ``F`` are the current scores, ``g = 2^l - 1`` the gains, ``invZ`` ``1 / maxDCG`` per query (0 for a
    query without a relevant document: it contributes nothing), ``poff`` from `pair_offsets`.
    """
    F = _f64("F", F)
    g = _f64("g", g, F.size)
    qptr, invZ = _check_queries(qptr, F.size, invZ)
    poff = pair_offsets(qptr) if poff is None else np.ascontiguousarray(poff, dtype=np.int64)
    if poff.size != qptr.size:
        raise ValueError("poff must hold one offset per query plus one (pair_offsets(qptr))")
    gamma, beta, P = np.empty(F.size), np.empty(F.size), np.empty(int(poff[-1]))
    _gamma_kernel(F, g, qptr, invZ, poff, gamma, beta, P)
    return gamma, beta, P


def ab_sums(qptr: np.ndarray, invZ: np.ndarray, poff: np.ndarray, fx: np.ndarray, beta: np.ndarray,
            P: np.ndarray) -> tuple[float, float]:
    """NDCGBoost step (c): ``A = sum theta [f(x_j) > f(x_j')]`` and ``B`` (after `gamma_pairs`)."""
    fx = _f64("fx", fx)
    beta = _f64("beta", beta, fx.size)
    qptr, invZ = _check_queries(qptr, fx.size, invZ)
    poff = np.ascontiguousarray(poff, dtype=np.int64)
    P = _f64("P", P, int(poff[-1]))
    A, B = _ab_kernel(qptr, invZ, poff, fx, beta, P)
    return float(A), float(B)


def histograms(codes: np.ndarray, s: np.ndarray, c: np.ndarray, rows: np.ndarray, n_bins: int) -> np.ndarray:
    """``hist[0|1|2, f, b]``: sums of ``s``, ``c`` and counts over ``rows`` by bin of feature ``f``."""
    codes = np.ascontiguousarray(codes)
    if codes.ndim != 2 or codes.dtype.kind != "u":
        raise ValueError(f"codes must be a 2-d unsigned integer matrix, got {codes.dtype} {codes.shape}")
    n = codes.shape[0]
    s, c = _f64("s", s, n), _f64("c", c, n)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if rows.size and (rows.min() < 0 or rows.max() >= n):
        raise ValueError(f"rows must index 0..{n - 1}")
    width = max(int(n_bins), int(codes.max(initial=0)) + 1)
    F = codes.shape[1]
    # the trees' histogram kernel with channels (s, c, 1): the same sums in the same row order
    vals = np.empty((n, 3))
    vals[:, 0], vals[:, 1], vals[:, 2] = s, c, 1.0
    flat = np.zeros((F * width, 3))
    _histogram(codes, vals, rows, 0, rows.size, np.arange(F, dtype=np.int64) * width, flat)
    return np.ascontiguousarray(flat.reshape(F, width, 3).transpose(2, 0, 1))


def warmup() -> None:
    """Compile the NDCGBoost kernels on a toy query."""
    F = np.array([0.1, 0.0, -0.2])
    g = np.array([3.0, 0.0, 1.0])
    qptr = np.array([0, 3], dtype=np.int64)
    invZ = np.array([0.25])
    poff = pair_offsets(qptr)
    _, beta, P = gamma_pairs(F, g, qptr, invZ, poff)
    ab_sums(qptr, invZ, poff, np.array([1.0, 0.0, 1.0]), beta, P)
    histograms(np.array([[0, 1], [2, 1]], dtype=np.uint8), np.ones(2), np.ones(2), np.arange(2), 3)

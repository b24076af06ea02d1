"""eps+, eps-, eps0 of every binary stump ``h = [code > j]`` at once (RankBoost+ Eq. 8).

For a critical pair ``i`` (document ``hi[i]`` preferred to ``lo[i]``) with weight ``D_i`` and a stump
``h``, the pair outcome is ``u_i = h(hi) - h(lo)`` in ``{-1, 0, +1}``. With codes ``c`` (0 = missing,
below every value) and ``h = [c > j]``:

* ``eps+ - eps- = sum_i D_i ([c_hi > j] - [c_lo > j]) = sum_x pi(x) [c_x > j]`` with the potential
  ``pi(x) = sum_{i: hi=x} D_i - sum_{i: lo=x} D_i`` (a histogram over documents);
* ``eps+ + eps- = sum_i D_i ([max > j] - [min > j]) = sum_x s(x) [c_x > j] - 2 sum_i D_i [min_i > j]``
  with the pair mass ``s(x) = sum_{i: x in i} D_i`` and ``min_i = min(c_hi, c_lo)``; the last sum is a
  weighted histogram over pairs of the bin of ``min`` (precomputed once per feature);
* ``eps0 = sum_i D_i - (eps+ + eps-)``.

One round costs O(n F + m F), with no loop over candidate thresholds. The same suffix histogram with
``uint64`` values (wrapping arithmetic) hashes every stump's pattern over the pairs, and with ``int64``
unit weights counts the pairs a stump does not tie (exact all-tie detection).
"""

from __future__ import annotations

import numpy as np

from ._jit import njit
from .stumps import _potentials_from_pairs as potentials_from_pairs


@njit(cache=True)
def _pair_min_codes(codes, hi, lo):
    """``out[f, i] = min(codes[hi[i], f], codes[lo[i], f])`` (feature-major, same dtype as codes)."""
    m = hi.size
    F = codes.shape[1]
    out = np.empty((F, m), dtype=codes.dtype)
    for i in range(m):
        a = hi[i]
        b = lo[i]
        for f in range(F):
            ca = codes[a, f]
            cb = codes[b, f]
            out[f, i] = ca if ca < cb else cb
    return out


@njit(cache=True)
def _doc_suffix(codes, values, n_bins):
    """``out[f, j] = sum_x values[x] [codes[x, f] > j]`` for ``j = 0..n_bins-2`` (any numeric dtype).

    ``values`` may be float64 (sums), int64 (counts) or uint64 (wrapping hashes).
    """
    n, F = codes.shape
    hist = np.zeros((F, n_bins), dtype=values.dtype)
    for x in range(n):
        v = values[x]
        for f in range(F):
            hist[f, codes[x, f]] += v
    out = np.zeros((F, n_bins - 1), dtype=values.dtype)
    for f in range(F):
        acc = hist[f, n_bins - 1]
        for j in range(n_bins - 2, -1, -1):
            out[f, j] = acc
            acc += hist[f, j]
    return out


@njit(cache=True)
def _pair_suffix(minc, weights, n_bins):
    """``out[f, j] = sum_i weights[i] [minc[f, i] > j]`` for ``j = 0..n_bins-2``.

    Four interleaved histograms break the store-to-load chain when neighbouring pairs share a bin.
    """
    F, m = minc.shape
    out = np.zeros((F, n_bins - 1), dtype=weights.dtype)
    h = np.zeros((4, n_bins), dtype=weights.dtype)
    m4 = m - m % 4
    for f in range(F):
        row = minc[f]
        h[:] = 0
        for i in range(0, m4, 4):
            h[0, row[i]] += weights[i]
            h[1, row[i + 1]] += weights[i + 1]
            h[2, row[i + 2]] += weights[i + 2]
            h[3, row[i + 3]] += weights[i + 3]
        for i in range(m4, m):
            h[0, row[i]] += weights[i]
        acc = (h[0, n_bins - 1] + h[1, n_bins - 1]) + (h[2, n_bins - 1] + h[3, n_bins - 1])
        for j in range(n_bins - 2, -1, -1):
            out[f, j] = acc
            acc += (h[0, j] + h[1, j]) + (h[2, j] + h[3, j])
    return out


@njit(cache=True)
def _potentials(hi, lo, D, n):
    """Potential ``pi(x)`` (RankBoost's Eq. 10, the one kernel `potentials_from_pairs` of
    ``stumps.py``) and pair mass ``s(x)`` of every document under the pair weights ``D``."""
    pi = potentials_from_pairs(hi, lo, D, n)
    s = np.zeros(n)
    for i in range(hi.size):
        w = D[i]
        s[hi[i]] += w
        s[lo[i]] += w
    return pi, s


@njit(cache=True)
def _stump_eps(codes, minc, hi, lo, D, n_bins):
    """eps+, eps-, eps0 (each ``(F, n_bins-1)``) of every stump ``[code > j]``, RankBoost+ Eq. 8.

    Tiny negative values from rounding are clipped to 0.
    """
    n = codes.shape[0]
    pi, s = _potentials(hi, lo, D, n)
    P = _doc_suffix(codes, pi, n_bins)  # eps+ - eps-
    S = _doc_suffix(codes, s, n_bins)
    M = _pair_suffix(minc, D, n_bins)
    total = 0.0
    for i in range(D.size):
        total += D[i]
    F = codes.shape[1]
    ep = np.empty((F, n_bins - 1))
    em = np.empty((F, n_bins - 1))
    e0 = np.empty((F, n_bins - 1))
    for f in range(F):
        for j in range(n_bins - 1):
            split = S[f, j] - 2.0 * M[f, j]  # eps+ + eps-
            a = 0.5 * (split + P[f, j])
            b = 0.5 * (split - P[f, j])
            a = a if a > 0.0 else 0.0
            b = b if b > 0.0 else 0.0
            z = total - a - b
            ep[f, j] = a
            em[f, j] = b
            e0[f, j] = z if z > 0.0 else 0.0
    return ep, em, e0


@njit(cache=True)
def _stump_pattern(codes, hi, lo, f, j):
    """Pattern ``u_i = [c_hi > j] - [c_lo > j]`` (int8) of stump ``[code_f > j]`` over the pairs."""
    m = hi.size
    u = np.empty(m, dtype=np.int8)
    for i in range(m):
        a = 1 if codes[hi[i], f] > j else 0
        b = 1 if codes[lo[i], f] > j else 0
        u[i] = a - b
    return u


@njit(cache=True)
def _patterns_equal(codes, hi, lo, f1, j1, f2, j2):
    """For each k: are the patterns of stumps ``(f1[k], j1[k])`` and ``(f2[k], j2[k])`` equal, or negated?

    Returns int8: 1 equal, -1 negated, 0 neither (an all-tie pattern counts as equal).
    """
    K = f1.size
    out = np.empty(K, dtype=np.int8)
    for k in range(K):
        same = True
        neg = True
        for i in range(hi.size):
            ua = (1 if codes[hi[i], f1[k]] > j1[k] else 0) - (1 if codes[lo[i], f1[k]] > j1[k] else 0)
            ub = (1 if codes[hi[i], f2[k]] > j2[k] else 0) - (1 if codes[lo[i], f2[k]] > j2[k] else 0)
            if ua != ub:
                same = False
            if ua != -ub:
                neg = False
            if not same and not neg:
                break
        out[k] = 1 if same else (-1 if neg else 0)
    return out


@njit(cache=True)
def _scale_pairs(D, u, w_plus, w_minus, w_zero):
    """``D_i *= w_plus / w_minus / w_zero`` by outcome ``u_i = +1 / -1 / 0``; returns the new sum (Z)."""
    z = 0.0
    for i in range(D.size):
        if u[i] > 0:
            D[i] *= w_plus
        elif u[i] < 0:
            D[i] *= w_minus
        else:
            D[i] *= w_zero
        z += D[i]
    return z


def warmup() -> None:
    """Compile the kernels on a toy set (uint8 and uint16 codes)."""
    hi = np.array([0, 0, 1], dtype=np.int64)
    lo = np.array([1, 2, 2], dtype=np.int64)
    D = np.full(3, 1.0 / 3.0)
    for dt in (np.uint8, np.uint16):
        codes = np.array([[3, 1], [2, 0], [1, 2]], dtype=dt)
        minc = _pair_min_codes(codes, hi, lo)
        _stump_eps(codes, minc, hi, lo, D, 4)
        _doc_suffix(codes, np.ones(3, dtype=np.int64), 4)
        _doc_suffix(codes, np.ones(3, dtype=np.uint64), 4)
        _pair_suffix(minc, np.ones(3, dtype=np.int64), 4)
        _stump_pattern(codes, hi, lo, 0, 1)
        idx = np.zeros(1, dtype=np.int64)
        _patterns_equal(codes, hi, lo, idx, idx + 1, idx, idx + 1)
    _scale_pairs(D.copy(), np.array([1, 0, -1], dtype=np.int8), 0.5, 2.0, 1.0)

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

from typing import NamedTuple

import numpy as np

from ._jit import njit
from .stumps import _codes, _in_place, _pairs, _potentials_from_pairs, _vector

# Every array a kernel below fills or works in is passed in, allocated by the module's Python functions in
# NumPy: a kernel allocating it would compile numba's own np.zeros / np.empty implementations (one per
# dtype and shape) into a first fit (issue 15.5). Scalar min / max are conditional expressions for the same
# reason (numba's builtins; ``b if b < a else a`` is numba's own select for ``min(a, b)``).


@njit(cache=True)
def _pair_min_codes(codes, hi, lo, out):
    """``out[f, i] = min(codes[hi[i], f], codes[lo[i], f])`` (feature-major, same dtype as codes).

    ``out`` ``(F, m)`` is passed in; every entry is written.
    """
    m = hi.size
    F = codes.shape[1]
    for i in range(m):
        a = hi[i]
        b = lo[i]
        for f in range(F):
            ca = codes[a, f]
            cb = codes[b, f]
            out[f, i] = ca if ca < cb else cb
    return out


@njit(cache=True)
def _doc_suffix(codes, values, hist, out):
    """``out[f, j] = sum_x values[x] [codes[x, f] > j]`` for ``j = 0..n_bins-2`` (any numeric dtype).

    ``values`` may be float64 (sums), int64 (counts) or uint64 (wrapping hashes). ``hist`` ``(F, n_bins)``
    (a workspace, zeroed here) and ``out`` ``(F, n_bins - 1)`` (every entry written), both of ``values``'
    dtype, are passed in.
    """
    n, F = codes.shape
    n_bins = hist.shape[1]
    hist[:] = 0
    for x in range(n):
        v = values[x]
        for f in range(F):
            hist[f, codes[x, f]] += v
    for f in range(F):
        acc = hist[f, n_bins - 1]
        for j in range(n_bins - 2, -1, -1):
            out[f, j] = acc
            acc += hist[f, j]
    return out


@njit(cache=True)
def _doc_suffix_rows(col, vals, out):
    """``out[c] = sum_x vals[x] [col[x] >= c]`` for ``c = 0..n_bins-1``: rows of ``r`` values, ``(n_bins, r)``
    (RankBoost+'s stump vectors ``L v`` in the pair space, `lrank.models.rankboost_plus._PairSpace`).

    Each code's rows are summed in document order, then the suffix adds the codes from the top: the
    order of ``np.add.at`` into zeros followed by a cumulative sum from the highest code, so the same bits.
    ``out`` (float64, ``(n_bins, r)``) is passed in zeroed by the caller.
    """
    n, r = vals.shape
    n_bins = out.shape[0]
    for x in range(n):
        c = col[x]
        for k in range(r):
            out[c, k] += vals[x, k]
    for c in range(n_bins - 2, -1, -1):
        for k in range(r):
            out[c, k] += out[c + 1, k]
    return out


@njit(cache=True)
def _pair_suffix(minc, weights, h, out):
    """``out[f, j] = sum_i weights[i] [minc[f, i] > j]`` for ``j = 0..n_bins-2``.

    Four interleaved histograms break the store-to-load chain when neighbouring pairs share a bin.
    ``h`` ``(4, n_bins)`` (a workspace, zeroed here for each feature) and ``out`` ``(F, n_bins - 1)``
    (every entry written), both of ``weights``' dtype, are passed in.
    """
    F, m = minc.shape
    n_bins = h.shape[1]
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
def _potentials(hi, lo, D, pi, s):
    """Potential ``pi(x)`` (RankBoost's Eq. 10, the one kernel `_potentials_from_pairs` of
    ``stumps.py``) and pair mass ``s(x)`` of every document under the pair weights ``D``.

    ``pi`` and ``s`` (float64, n_docs) are passed in zeroed by the caller.
    """
    _potentials_from_pairs(hi, lo, D, pi)
    for i in range(hi.size):
        w = D[i]
        s[hi[i]] += w
        s[lo[i]] += w
    return pi, s


@njit(cache=True)
def _stump_eps(codes, minc, hi, lo, D, pot, hist, h, psm, out):
    """eps+, eps-, eps0 (``out[0]``, ``out[1]``, ``out[2]``, each ``(F, n_bins-1)``) of every stump
    ``[code > j]``, RankBoost+ Eq. 8.

    Passed in (`stump_eps`): ``pot`` ``(2, n)`` zeroed by the caller (pi and s of `_potentials`); the
    workspaces ``hist`` ``(F, n_bins)`` of `_doc_suffix`, ``h`` ``(4, n_bins)`` of `_pair_suffix` and
    ``psm`` ``(3, F, n_bins-1)`` (P, S, M); ``out`` ``(3, F, n_bins-1)``, every entry written, returned.
    Tiny negative values from rounding are clipped to 0.
    """
    pi, s = _potentials(hi, lo, D, pot[0], pot[1])
    P = _doc_suffix(codes, pi, hist, psm[0])  # eps+ - eps-
    S = _doc_suffix(codes, s, hist, psm[1])
    M = _pair_suffix(minc, D, h, psm[2])
    total = 0.0
    for i in range(D.size):
        total += D[i]
    F = codes.shape[1]
    n_bins = hist.shape[1]
    ep = out[0]
    em = out[1]
    e0 = out[2]
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
    return out


@njit(cache=True)
def _stump_pattern(codes, hi, lo, f, j, u):
    """Pattern ``u_i = [c_hi > j] - [c_lo > j]`` (int8) of stump ``[code_f > j]`` over the pairs.

    ``u`` (int8, n_pairs) is passed in; every entry is written.
    """
    for i in range(hi.size):
        a = 1 if codes[hi[i], f] > j else 0
        b = 1 if codes[lo[i], f] > j else 0
        u[i] = a - b
    return u


@njit(cache=True)
def _patterns_equal(codes, hi, lo, f1, j1, f2, j2, need, ends, out):
    """For each k: are the patterns of stumps ``(f1[k], j1[k])`` and ``(f2[k], j2[k])`` equal, or negated?

    ``out[k]`` (int8, passed in, every entry written): 1 equal, -1 negated, 0 neither (an all-tie pattern
    counts as equal). Passed in too: ``need`` (bool, ``(F,)``) zeroed by the caller, and ``ends``
    (``(2, F, m)`` of the codes' dtype), whose rows of the features the stumps use are written here
    before they are read (the others are never read).
    """
    K = f1.size
    m = hi.size
    F = codes.shape[1]
    for k in range(K):
        need[f1[k]] = True
        need[f2[k]] = True
    c_hi = ends[0]  # the codes of both ends of each pair, feature-major
    c_lo = ends[1]
    for i in range(m):
        a = hi[i]
        b = lo[i]
        for f in range(F):
            if need[f]:
                c_hi[f, i] = codes[a, f]
                c_lo[f, i] = codes[b, f]
    for k in range(K):
        ra, la, ja = c_hi[f1[k]], c_lo[f1[k]], j1[k]
        rb, lb, jb = c_hi[f2[k]], c_lo[f2[k]], j2[k]
        same = True
        neg = True
        for s in range(0, m, 512):  # blocks without a branch inside, an early exit between them
            n_diff = 0
            n_opp = 0
            e = s + 512
            e = m if m < e else e  # min(s + 512, m)
            for i in range(s, e):
                ua = (1 if ra[i] > ja else 0) - (1 if la[i] > ja else 0)
                ub = (1 if rb[i] > jb else 0) - (1 if lb[i] > jb else 0)
                n_diff += 1 if ua != ub else 0
                n_opp += 1 if ua != -ub else 0
            same = same and n_diff == 0
            neg = neg and n_opp == 0
            if not same and not neg:
                break
        out[k] = 1 if same else (-1 if neg else 0)
    return out


@njit(cache=True)
def _scale_pairs(D, u, w):
    """``D_i *= w[u_i + 1]``: the factors ``w = (w_minus, w_zero, w_plus)`` (float64, passed in) by
    outcome ``u_i = -1 / 0 / +1``, no branch on the data; returns the new sum (Z).

    The normalisation ``D /= Z`` stays with the caller, in NumPy: the fastmath policy allows ``arcp``,
    under which a kernel may divide by multiplying with ``1 / Z`` (other bits).
    """
    z = 0.0
    for i in range(D.size):
        D[i] *= w[u[i] + 1]
        z += D[i]
    return z


# --------------------------------------------------------------------------------------------------
# One boosting round on the candidates only (RankBoost+ Sec. 4 per round, issue 15): the statistics of
# the distinct candidate stumps, the chosen stump's outcomes, the reweighting and the training losses.
# Each sum runs in the order of the full-table kernels above, so results are the same bits.
# --------------------------------------------------------------------------------------------------
@njit(cache=True)
def _candidate_eps(codes_c, minc_b, hi, lo, D, cptr, corder, cj, pot, hps, h, psm, out):
    """eps+, eps-, eps0 (``out[0]``, ``out[1]``, ``out[2]``) of the candidate stumps only (RankBoost+
    Eq. 8), the bits of `_stump_eps`.

    ``codes_c`` (n, Fc) holds the codes of the Fc features that have candidates; ``minc_b``
    (n_blocks, m, B) their pair min codes by block of B features (the last block padded). For each
    block, one pass over the documents and one over the pairs update every feature's histograms
    (independent additions: no dependency chain between neighbouring pairs). Every sum per (feature,
    lane, bin) runs in increasing document / pair order as in `_doc_suffix` / `_pair_suffix` (pair
    ``i`` in lane ``i % 4``, the tail in lane 0), so every value is the same bits. Candidates of
    compact feature ``g`` are ``corder[cptr[g]:cptr[g+1]]``, with bins ``cj``.

    Passed in (`candidate_eps`): ``pot`` ``(2, n)`` zeroed by the caller (pi and s of `_potentials`);
    the workspaces ``hps`` ``(2, B, n_bins)`` (document histograms of pi and s) and ``h``
    ``(B, 4, n_bins)`` (pair histograms), zeroed here for each block, and ``psm`` ``(3, n_bins)`` (suffix
    sums P, S, M, written down to the lowest candidate bin before they are read); ``out`` ``(3, K)``,
    every entry written, returned.
    """
    n, Fc = codes_c.shape
    n_blocks, m, B = minc_b.shape
    n_bins = h.shape[2]
    m4 = m - m % 4
    pi, s = _potentials(hi, lo, D, pot[0], pot[1])
    total = 0.0
    for i in range(D.size):
        total += D[i]
    ep = out[0]
    em = out[1]
    e0 = out[2]
    hp = hps[0]
    hs = hps[1]
    P = psm[0]
    S = psm[1]
    M = psm[2]
    for bk in range(n_blocks):
        f0 = bk * B
        nf = Fc - f0 if Fc - f0 < B else B  # min(B, Fc - f0)
        hp[:] = 0.0
        hs[:] = 0.0
        h[:] = 0.0
        for x in range(n):  # document histograms of pi (eps+ - eps-) and s (pair mass)
            a = pi[x]
            b = s[x]
            for g in range(nf):
                c = codes_c[x, f0 + g]
                hp[g, c] += a
                hs[g, c] += b
        blk = minc_b[bk]
        for i in range(m):  # pair histograms of min codes, lane i % 4 (the tail in lane 0)
            d = D[i]
            ln = i % 4 if i < m4 else 0
            for g in range(nf):
                h[g, ln, blk[i, g]] += d
        for g in range(nf):
            f = f0 + g
            lo_j = cj[corder[cptr[f]]]
            for t in range(cptr[f], cptr[f + 1]):
                if cj[corder[t]] < lo_j:
                    lo_j = cj[corder[t]]
            accp = hp[g, n_bins - 1]
            accs = hs[g, n_bins - 1]
            accm = (h[g, 0, n_bins - 1] + h[g, 1, n_bins - 1]) + (h[g, 2, n_bins - 1] + h[g, 3, n_bins - 1])
            for j in range(n_bins - 2, lo_j - 1, -1):
                P[j] = accp
                S[j] = accs
                M[j] = accm
                accp += hp[g, j]
                accs += hs[g, j]
                accm += (h[g, 0, j] + h[g, 1, j]) + (h[g, 2, j] + h[g, 3, j])
            for t in range(cptr[f], cptr[f + 1]):
                k = corder[t]
                j = cj[k]
                split = S[j] - 2.0 * M[j]  # eps+ + eps-
                a = 0.5 * (split + P[j])
                b = 0.5 * (split - P[j])
                a = a if a > 0.0 else 0.0
                b = b if b > 0.0 else 0.0
                z = total - a - b
                ep[k] = a
                em[k] = b
                e0[k] = z if z > 0.0 else 0.0
    return out


@njit(cache=True)
def _stump_outcomes(codes, hi, lo, f, j, D, u, out):
    """Pattern ``u`` of stump ``[code_f > j]`` and its ``(eps-, eps0, eps+)`` under ``D`` (Eq. 8).

    The three sums run over the pairs in order (as ``np.bincount(u + 1, weights=D)``). ``u`` (int8,
    n_pairs; every entry written) and ``out`` (float64, 3; the sums, zeroed by the caller) are passed in.
    """
    for i in range(hi.size):
        a = 1 if codes[hi[i], f] > j else 0
        b = 1 if codes[lo[i], f] > j else 0
        u[i] = a - b
        out[a - b + 1] += D[i]
    return u, out[0], out[1], out[2]


@njit(cache=True)
def _add_log_terms_many(lt, U, tables):
    """``lt_i += tables[k, U[k, i] + 1]`` for ``k = 0, 1, ...`` in order (several weights changed)."""
    K, m = U.shape
    for i in range(m):
        acc = lt[i]
        for k in range(K):
            acc += tables[k, U[k, i] + 1]
        lt[i] = acc
    return lt


@njit(cache=True)
def _margin_losses(margins, u, alpha, w1):
    """``margins += alpha u``, then train ``R1`` (Eq. 3) and ``R2`` (Eq. 4) under the weights ``w1``."""
    r1 = 0.0
    r2 = 0.0
    for i in range(margins.size):  # w * 0 adds +0.0 where a branch would skip: the same sums
        g = margins[i] + alpha * u[i]
        margins[i] = g
        r1 += w1[i] * (1.0 if g <= 0.0 else 0.0)
        r2 += w1[i] * (1.0 if g < 0.0 else (0.5 if g == 0.0 else 0.0))
    return r1, r2


@njit(cache=True)
def _add_log_terms(lt, u, table):
    """``lt_i += table[u_i + 1]`` (Eq. 25 in the log domain: one ranker's weight changed)."""
    for i in range(lt.size):
        lt[i] += table[u[i] + 1]


def warmup() -> None:
    """Compile the kernels on a toy set (uint8 and uint16 codes)."""
    hi = np.array([0, 0, 1], dtype=np.int64)
    lo = np.array([1, 2, 2], dtype=np.int64)
    D = np.full(3, 1.0 / 3.0)
    for dt in (np.uint8, np.uint16):
        codes = np.array([[3, 1], [2, 0], [1, 2]], dtype=dt)
        minc = pair_min_codes(codes, hi, lo)
        stump_eps(codes, minc, hi, lo, D, 4)  # also _potentials and the float64 suffixes
        doc_suffix(codes, np.ones(3, dtype=np.int64), 4)
        doc_suffix(codes, np.ones(3, dtype=np.uint64), 4)
        pair_suffix(minc, np.ones(3, dtype=np.int64), 4)
        doc_suffix_rows(codes[:, 0], np.ones((3, 2)), 4)
        stump_pattern(codes, hi, lo, 0, 1)
        idx = np.zeros(1, dtype=np.int64)
        patterns_equal(codes, hi, lo, idx, idx + 1, idx, idx + 1)
        stump_outcomes(codes, hi, lo, 0, 1, D)
        pick = np.array([0, 1], dtype=np.int64)
        plan = candidate_plan(codes, minc, pick, pick[::-1].copy(), 4)
        candidate_eps(plan, hi, lo, D)
    u = np.array([1, 0, -1], dtype=np.int8)
    scale_pairs(D.copy(), u, 0.5, 2.0, 1.0)
    _margin_losses(np.zeros(3), u, 0.5, D)
    _add_log_terms(np.zeros(3), u, np.array([0.5, 0.1, -0.5]))
    _add_log_terms_many(np.zeros(3), np.stack([u, u]), np.array([[0.5, 0.1, -0.5], [0.2, 0.0, -0.2]]))


class CandidatePlan(NamedTuple):
    """What `candidate_eps` needs besides the pair weights, built once per fit by `candidate_plan`."""

    codes_c: np.ndarray  # (n, Fc) codes of the features that have candidates
    minc_b: np.ndarray  # (n_blocks, m, B) their pair min codes, by block of B features
    n_bins: int
    cptr: np.ndarray  # candidates of compact feature g: corder[cptr[g]:cptr[g+1]]
    corder: np.ndarray
    cj: np.ndarray

    @staticmethod
    def block_size(n_bins: int) -> int:
        """Features per block: their 4-lane pair histograms fill about 32 KB (one L1 data cache)."""
        return max(1, 1024 // n_bins)


def candidate_plan(codes: np.ndarray, minc: np.ndarray, cf: np.ndarray, cj: np.ndarray,
                   n_bins: int) -> CandidatePlan:
    """Check the inputs of `candidate_eps` once and lay its data out (features with candidates only).

    Parameters
    ----------
    codes : ndarray (n_docs, n_features) of uint8 / uint16
        Bin codes.
    minc : ndarray (n_features, n_pairs)
        ``pair_min_codes(codes, hi, lo)``.
    cf, cj : ndarray of int
        The candidate stumps ``[code_cf > cj]``.
    n_bins : int
        Codes per feature (``> codes.max()``).
    """
    codes = np.ascontiguousarray(codes)
    if codes.ndim != 2 or codes.dtype not in (np.uint8, np.uint16):
        raise ValueError(f"codes must be 2-d uint8 or uint16, got {codes.dtype} of shape {codes.shape}")
    F = codes.shape[1]
    minc = np.asarray(minc)
    if minc.ndim != 2 or minc.shape[0] != F or minc.dtype != codes.dtype:
        raise ValueError(f"minc must be ({F}, n_pairs) of {codes.dtype}, got {minc.dtype} {minc.shape}")
    cf = np.ascontiguousarray(cf, dtype=np.int64)
    cj = np.ascontiguousarray(cj, dtype=np.int64)
    n_bins = int(n_bins)
    if cf.shape != cj.shape or cf.ndim != 1 or (cf.size and (cf.min() < 0 or cf.max() >= F or cj.min() < 0
                                                             or cj.max() > n_bins - 2)):
        raise ValueError("candidates (cf, cj) out of range")
    if codes.size and int(codes.max()) >= n_bins:
        raise ValueError(f"a code exceeds n_bins - 1 = {n_bins - 1}")
    feats = np.unique(cf)
    compact = np.searchsorted(feats, cf)
    B = max(1, min(CandidatePlan.block_size(n_bins), feats.size))
    n_blocks = -(-feats.size // B)
    minc_b = np.zeros((n_blocks, minc.shape[1], B), dtype=codes.dtype)
    for k in range(n_blocks):
        sel = feats[k * B:(k + 1) * B]
        minc_b[k, :, :sel.size] = minc[sel].T
    corder = np.argsort(compact, kind="stable").astype(np.int64)
    cptr = np.r_[0, np.cumsum(np.bincount(compact, minlength=feats.size))].astype(np.int64)
    return CandidatePlan(np.ascontiguousarray(codes[:, feats]), minc_b, n_bins, cptr, corder, cj)


def candidate_eps(plan: CandidatePlan, hi: np.ndarray, lo: np.ndarray, D: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """eps+, eps-, eps0 (RankBoost+ Eq. 8) of every candidate of ``plan`` under the pair weights ``D``.

    The same bits as ``stump_eps(codes, minc, hi, lo, D, n_bins)[k][cf, cj]``, with histograms only
    for the features that have candidates and suffix sums only down to their lowest candidate bin.

    Parameters
    ----------
    plan : CandidatePlan
        From `candidate_plan` (checked there once per fit).
    hi, lo : ndarray (n_pairs,) of int64
        Critical pairs, as given to `pair_min_codes` for the plan's ``minc``.
    D : ndarray (n_pairs,)
        Pair weights.

    Returns
    -------
    eps_plus, eps_minus, eps_zero : ndarray (n_candidates,) of float64
    """
    hi, lo, D = _pairs(hi, lo, D)
    n_blocks, m, B = plan.minc_b.shape
    if hi.size != m:
        raise ValueError(f"the plan has {m} pairs, got {hi.size}")
    nb = plan.n_bins
    out = _candidate_eps(plan.codes_c, plan.minc_b, hi, lo, D, plan.cptr, plan.corder, plan.cj,
                         np.zeros((2, plan.codes_c.shape[0])), np.empty((2, B, nb)), np.empty((B, 4, nb)),
                         np.empty((3, nb)), np.empty((3, plan.cj.size)))
    return out[0], out[1], out[2]


def doc_suffix_rows(col: np.ndarray, vals: np.ndarray, n_bins: int) -> np.ndarray:
    """Sums of the rows of ``vals`` over the documents whose code is at least ``c``, for every code ``c``.

    Parameters
    ----------
    col : ndarray (n,) of uint8 / uint16
        One feature's bin codes (0 = missing).
    vals : ndarray (n, r)
        A row of values per document (float64).
    n_bins : int
        Codes of the feature (``> col.max()``).

    Returns
    -------
    ndarray (n_bins, r)
        ``out[c] = sum_x vals[x] [col[x] >= c]``; row ``j + 1`` is the sum for the stump ``[code > j]``.
        The same bits as ``np.add.at`` of the rows into per-code zeros and a cumulative sum from the top.
    """
    col = np.ascontiguousarray(col)
    if col.ndim != 1 or col.dtype not in (np.uint8, np.uint16):
        raise ValueError(f"col must be 1-d uint8 or uint16, got {col.dtype} of shape {col.shape}")
    vals = np.ascontiguousarray(vals, dtype=np.float64)
    if vals.ndim != 2 or vals.shape[0] != col.size:
        raise ValueError(f"vals must be ({col.size}, r), got shape {vals.shape}")
    n_bins = int(n_bins)
    largest = int(col.max()) if col.size else -1
    if n_bins < 1 or largest >= n_bins:
        raise ValueError(f"n_bins={n_bins} must exceed every code (largest {largest})")
    return _doc_suffix_rows(col, vals, np.zeros((n_bins, vals.shape[1])))


# -------------------------------------------------------------------- the other validating functions
# Shapes and dtypes are checked in O(1) (some run every boosting round); that codes lie below ``n_bins``
# and pair indices below ``n_docs`` is the caller's (`stump_statistics` and `candidate_plan` check it).
def _bins(n_bins: int) -> int:
    n_bins = int(n_bins)
    if n_bins < 2:
        raise ValueError(f"n_bins must be at least 2, got {n_bins}")
    return n_bins


def pair_min_codes(codes: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """The lower code of each pair's two documents, feature-major.

    Parameters
    ----------
    codes : ndarray (n_docs, n_features) of uint8 / uint16
        Bin codes.
    hi, lo : ndarray (n_pairs,) of int
        Critical pairs.

    Returns
    -------
    ndarray (n_features, n_pairs), the dtype of ``codes``
        ``out[f, i] = min(codes[hi[i], f], codes[lo[i], f])``.
    """
    codes = _codes("codes", codes, 2)
    hi = _vector("hi", hi, np.int64)
    lo = _vector("lo", lo, np.int64)
    if hi.size != lo.size:
        raise ValueError(f"hi and lo must have one length, got {hi.size}, {lo.size}")
    return _pair_min_codes(codes, hi, lo, np.empty((codes.shape[1], hi.size), dtype=codes.dtype))


def doc_suffix(codes: np.ndarray, values: np.ndarray, n_bins: int) -> np.ndarray:
    """``out[f, j] = sum_x values[x] [codes[x, f] > j]`` for ``j = 0..n_bins-2``.

    Parameters
    ----------
    codes : ndarray (n_docs, n_features) of uint8 / uint16
        Bin codes, each below ``n_bins``.
    values : ndarray (n_docs,) of float64, int64 or uint64
        A value per document (sums, counts, or wrapping hashes: uint64 arithmetic wraps).
    n_bins : int
        Codes per feature.

    Returns
    -------
    ndarray (n_features, n_bins - 1), the dtype of ``values``
    """
    codes = _codes("codes", codes, 2)
    values = np.ascontiguousarray(values)
    if values.dtype not in (np.float64, np.int64, np.uint64) or values.shape != (codes.shape[0],):
        raise ValueError(f"values must be ({codes.shape[0]},) float64, int64 or uint64, got {values.dtype} "
                         f"{values.shape}")
    n_bins = _bins(n_bins)
    F = codes.shape[1]
    return _doc_suffix(codes, values, np.empty((F, n_bins), dtype=values.dtype),
                       np.empty((F, n_bins - 1), dtype=values.dtype))


def pair_suffix(minc: np.ndarray, weights: np.ndarray, n_bins: int) -> np.ndarray:
    """``out[f, j] = sum_i weights[i] [minc[f, i] > j]`` for ``j = 0..n_bins-2``.

    Parameters
    ----------
    minc : ndarray (n_features, n_pairs) of uint8 / uint16
        `pair_min_codes`, each below ``n_bins``.
    weights : ndarray (n_pairs,) of float64 or int64
        A weight per pair.
    n_bins : int
        Codes per feature.

    Returns
    -------
    ndarray (n_features, n_bins - 1), the dtype of ``weights``
    """
    minc = _codes("minc", minc, 2)
    weights = np.ascontiguousarray(weights)
    if weights.dtype not in (np.float64, np.int64) or weights.shape != (minc.shape[1],):
        raise ValueError(f"weights must be ({minc.shape[1]},) float64 or int64, got {weights.dtype} "
                         f"{weights.shape}")
    n_bins = _bins(n_bins)
    return _pair_suffix(minc, weights, np.empty((4, n_bins), dtype=weights.dtype),
                        np.empty((minc.shape[0], n_bins - 1), dtype=weights.dtype))


def stump_eps(codes: np.ndarray, minc: np.ndarray, hi: np.ndarray, lo: np.ndarray, D: np.ndarray,
              n_bins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """eps+, eps-, eps0 of every stump ``[code_f > j]`` (RankBoost+ Eq. 8), without a loop over stumps.

    Parameters
    ----------
    codes : ndarray (n_docs, n_features) of uint8 / uint16
        Bin codes, each below ``n_bins``.
    minc : ndarray (n_features, n_pairs)
        ``pair_min_codes(codes, hi, lo)``.
    hi, lo : ndarray (n_pairs,) of int
        Critical pairs.
    D : ndarray (n_pairs,)
        Pair weights.
    n_bins : int
        Codes per feature.

    Returns
    -------
    eps_plus, eps_minus, eps_zero : ndarray (n_features, n_bins - 1) of float64
        Tiny negative values from rounding are clipped to 0 (`lrank.weak.pair_patterns.stump_statistics`
        checks the data and calls this).
    """
    codes = _codes("codes", codes, 2)
    n, F = codes.shape
    minc = _codes("minc", minc, 2)
    hi, lo, D = _pairs(hi, lo, D)
    if minc.shape != (F, hi.size) or minc.dtype != codes.dtype:
        raise ValueError(f"minc must be ({F}, {hi.size}) of {codes.dtype}, got {minc.dtype} {minc.shape}")
    n_bins = _bins(n_bins)
    out = _stump_eps(codes, minc, hi, lo, D, np.zeros((2, n)), np.empty((F, n_bins)), np.empty((4, n_bins)),
                     np.empty((3, F, n_bins - 1)), np.empty((3, F, n_bins - 1)))
    return out[0], out[1], out[2]


def _stump(codes: np.ndarray, hi: np.ndarray, lo: np.ndarray, f: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    codes = _codes("codes", codes, 2)
    hi = _vector("hi", hi, np.int64)
    lo = _vector("lo", lo, np.int64)
    f = int(f)
    if hi.size != lo.size or not 0 <= f < codes.shape[1]:
        raise ValueError(f"hi and lo must have one length and 0 <= f < {codes.shape[1]}, got {hi.size}, "
                         f"{lo.size}, f={f}")
    return codes, hi, lo, f


def stump_pattern(codes: np.ndarray, hi: np.ndarray, lo: np.ndarray, f: int, j: int) -> np.ndarray:
    """Pattern ``u_i = [c_hi > j] - [c_lo > j]`` of the stump ``[code_f > j]`` over the pairs.

    Parameters
    ----------
    codes : ndarray (n_docs, n_features) of uint8 / uint16
        Bin codes.
    hi, lo : ndarray (n_pairs,) of int
        Critical pairs.
    f, j : int
        The stump's feature and threshold bin.

    Returns
    -------
    ndarray (n_pairs,) of int8
        -1, 0 or +1 per pair.
    """
    codes, hi, lo, f = _stump(codes, hi, lo, f)
    return _stump_pattern(codes, hi, lo, f, int(j), np.empty(hi.size, dtype=np.int8))


def stump_outcomes(codes: np.ndarray, hi: np.ndarray, lo: np.ndarray, f: int, j: int, D: np.ndarray
                   ) -> tuple[np.ndarray, float, float, float]:
    """Pattern of the stump ``[code_f > j]`` and its ``(eps-, eps0, eps+)`` under ``D`` (Eq. 8).

    Parameters
    ----------
    codes : ndarray (n_docs, n_features) of uint8 / uint16
        Bin codes.
    hi, lo : ndarray (n_pairs,) of int
        Critical pairs.
    f, j : int
        The stump's feature and threshold bin.
    D : ndarray (n_pairs,)
        Pair weights.

    Returns
    -------
    u : ndarray (n_pairs,) of int8
        `stump_pattern`.
    eps_minus, eps_zero, eps_plus : float
        Sums of ``D`` over the pairs with ``u = -1, 0, +1``, each in pair order.
    """
    codes, hi, lo, f = _stump(codes, hi, lo, f)
    D = _vector("D", D, np.float64)
    if D.size != hi.size:
        raise ValueError(f"D must have one weight per pair ({hi.size}), got {D.size}")
    return _stump_outcomes(codes, hi, lo, f, int(j), D, np.empty(hi.size, dtype=np.int8), np.zeros(3))


def patterns_equal(codes: np.ndarray, hi: np.ndarray, lo: np.ndarray, f1: np.ndarray, j1: np.ndarray,
                   f2: np.ndarray, j2: np.ndarray) -> np.ndarray:
    """For each ``k``: are the patterns of the stumps ``(f1[k], j1[k])`` and ``(f2[k], j2[k])`` equal, or
    negated?

    Parameters
    ----------
    codes : ndarray (n_docs, n_features) of uint8 / uint16
        Bin codes.
    hi, lo : ndarray (n_pairs,) of int
        Critical pairs.
    f1, j1, f2, j2 : ndarray (K,) of int
        The stumps compared, ``[code_f1 > j1]`` with ``[code_f2 > j2]``.

    Returns
    -------
    ndarray (K,) of int8
        1 equal, -1 negated, 0 neither (an all-tie pattern counts as equal).
    """
    codes = _codes("codes", codes, 2)
    hi = _vector("hi", hi, np.int64)
    lo = _vector("lo", lo, np.int64)
    f1, j1 = _vector("f1", f1, np.int64), _vector("j1", j1, np.int64)
    f2, j2 = _vector("f2", f2, np.int64), _vector("j2", j2, np.int64)
    F = codes.shape[1]
    if hi.size != lo.size or not f1.size == j1.size == f2.size == j2.size:
        raise ValueError("hi and lo must have one length, and f1, j1, f2, j2 one length")
    if f1.size and (min(f1.min(), f2.min()) < 0 or max(f1.max(), f2.max()) >= F):
        raise ValueError(f"features must lie in [0, {F})")
    return _patterns_equal(codes, hi, lo, f1, j1, f2, j2, np.zeros(F, dtype=np.bool_),
                           np.empty((2, F, hi.size), dtype=codes.dtype), np.empty(f1.size, dtype=np.int8))


def scale_pairs(D: np.ndarray, u: np.ndarray, w_plus: float, w_minus: float, w_zero: float) -> float:
    """``D_i *= w_plus / w_minus / w_zero`` by outcome ``u_i = +1 / -1 / 0``, in place; returns the new
    sum Z (the caller divides, ``D /= Z``, in NumPy).

    Parameters
    ----------
    D : ndarray (n_pairs,) of float64
        Pair weights, C-contiguous (updated in place).
    u : ndarray (n_pairs,) of int8
        Outcomes in {-1, 0, +1}.
    w_plus, w_minus, w_zero : float
        Factors by outcome.

    Returns
    -------
    float
    """
    D = _in_place("D", D, np.float64)
    u = _vector("u", u, np.int8)
    if u.size != D.size:
        raise ValueError(f"u must have one outcome per pair ({D.size}), got {u.size}")
    return _scale_pairs(D, u, np.array([w_minus, w_zero, w_plus], dtype=np.float64))


# ------------------------------------------------------------------ RankBoost+'s per-round updates
def _check_pair_arrays(name: str, lt: np.ndarray, u: np.ndarray) -> None:
    if not (isinstance(lt, np.ndarray) and lt.dtype == np.float64 and lt.ndim == 1 and lt.flags.writeable):
        raise ValueError(f"{name}: the first array must be a writeable 1-d float64 array")
    if not (isinstance(u, np.ndarray) and u.dtype.kind == "i" and u.shape[-1] == lt.size):
        raise ValueError(f"{name}: the pattern must be an integer array with {lt.size} entries per row, "
                         f"got shape {getattr(u, 'shape', None)}")


def add_log_terms(lt: np.ndarray, u: np.ndarray, table: np.ndarray) -> None:
    """``lt_i += table[u_i + 1]`` in place (Eq. 25 in the log domain: one ranker's weight changed).

    ``lt`` float64 (n_pairs,), ``u`` the ranker's pattern in {-1, 0, 1} (n_pairs,), ``table`` float64 (3,):
    the change for ``u = -1, 0, 1``.
    """
    _check_pair_arrays("add_log_terms", lt, u)
    table = np.asarray(table, dtype=np.float64)
    if u.ndim != 1 or table.shape != (3,):
        raise ValueError(f"add_log_terms: u must be 1-d and table of shape (3,), got {u.shape}, "
                         f"{table.shape}")
    _add_log_terms(lt, u, table)


def add_log_terms_many(lt: np.ndarray, U: np.ndarray, tables: np.ndarray) -> None:
    """``lt_i += tables[k, U[k, i] + 1]`` in place, for ``k = 0, 1, ...`` in order (several weights
    changed): ``U`` (K, n_pairs) patterns, ``tables`` float64 (K, 3)."""
    _check_pair_arrays("add_log_terms_many", lt, U)
    tables = np.asarray(tables, dtype=np.float64)
    if U.ndim != 2 or tables.shape != (U.shape[0], 3):
        raise ValueError(f"add_log_terms_many: U must be (K, n_pairs) and tables (K, 3), got {U.shape}, "
                         f"{tables.shape}")
    _add_log_terms_many(lt, U, tables)


def margin_losses(margins: np.ndarray, u: np.ndarray, alpha: float, w1: np.ndarray) -> tuple[float, float]:
    """``margins += alpha u`` in place, then the training ``R1`` (Eq. 3) and ``R2`` (Eq. 4) under the pair
    weights ``w1`` (float64, n_pairs)."""
    _check_pair_arrays("margin_losses", margins, u)
    if u.ndim != 1 or not (isinstance(w1, np.ndarray) and w1.dtype == np.float64 and w1.shape == u.shape):
        raise ValueError("margin_losses: u and w1 must be 1-d with one entry per pair (w1 float64)")
    return _margin_losses(margins, u, float(alpha), w1)

"""The splitter of the tree engine: one score per criterion, the node score, and the split scans.

A split ``(f, j)`` sends a document left when its bin code on feature ``f`` is ``<= j`` and right when
it is ``> j`` (the raw-feature test ``x > theta_j``; missing values, code 0, always go left). With
``G``, ``H``, ``N`` the sums of gradient ``L'``, hessian ``L''`` and count over a side, and ``Q`` the sum
of ``w r^2``, the gain of a split is ``score(left) + score(right) - score(node)`` where a side's score is
the criterion's (Xia, Zhai & Wang):

* SE (Eq. 3), `_score_se`: ``G^2 / N`` (least squares on the pseudo-responses ``r = -L'``);
* WSE (Eq. 7-8), `_score_wse`: ``G^2 / H - Q`` (``S = -G``, ``W = H``, ``Q = sum w r^2``; numerically
  fragile, as the paper says, when ``w`` is near 0);
* RWSE (Eq. 9), `_score_rwse`: ``G^2 / H``. For a derivative-additive loss OLE is RWSE (Theorem 1);
* OLE with a pair list (Eq. 13, Example 3-4), `_score_ole`: ``G^2 / h`` on the side's exact second
  derivative ``h = H - 2 P``, ``P`` the weight of the pairs whose two documents share the side (they
  cancel);
* NDCGBoost's classifier rule (Valizadegan et al. 2009), `_score_classify`: ``max(0, S)`` with ``S`` the
  side's sum of the document weights ``gamma`` (a leaf outputs 1 iff its ``S > 0``).

Candidates need ``N >= min_data`` and ``H >= min_hess`` on both sides (the exact ``h`` for OLE, one
document for NDCGBoost). Ties go to the first candidate in (feature order, bin) order, and so do
near-ties (`_beats`): a later candidate wins only when its gain is larger by more than `TIE_RTOL` times
``|best| + |score(node)|`` (within one feature's SE/RWSE scan, whose sums leave the node score out:
``|best|``). Two features that split the documents alike have gains equal in exact arithmetic but summed
over other bins; the gradients' last bits differ between CPUs (McRank's softmax through numpy's SIMD
``exp``), and a strict comparison let the CPU choose the feature: with numpy's AVX-512 paths on or off, 13
of the 20 McRank fits of notebook 04 (MSLR sample, 15 iterations) grew different trees. NDCGBoost's rule
is the same idea on its own scale (`_scan_classify`): gains within ``tol = TIE_RTOL sum |gamma|`` (a bound
on every term of a gain) of a node's largest are ties won by the first, and a gain at or below ``tol`` is
no gain (its sums round differently with and without fused multiply-adds). One scan per
criterion family, each over a node's flat histogram (feature ``f`` owns rows ``off[f]:off[f+1]``):
`_scan_fast` (SE, RWSE), `_scan_wse`, `_scan_ole` (with the pair histograms) and `_scan_classify`; and for
symmetric trees `_scan_cosine`, one split for all the leaves of a level by CatBoost's Cosine score.

The bar. The SE/RWSE and OLE scans skip a threshold without dividing when products prove its score
below the best found so far by the relative margin `BAR_MARGIN` (every rounding error here is ~1e-15);
products then need normal numbers, so no bar is used below `BAR_MIN`. A threshold skipped that way could
not have won, so each scan returns the bits of the scan without a bar (tested against the references in
``tests/reference/trees.py``).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import njit

SE, WSE, RWSE, CLASSIFY = 0, 1, 2, 3

#: the bar's relative margin: a threshold is skipped when the products prove its score below the bar by
#: this much (their rounding is ~1e-15 relative)
BAR_MARGIN = 1e-9
#: below this, products may lose relative precision (subnormal numbers): no bar
BAR_MIN = 1e-200
_MARGIN = 1.0 + BAR_MARGIN
#: split gains closer than this fraction of ``|best| + |score(node)|`` are ties (module docstring); below
#: the bar's margin, so a threshold the bar skips could not have won
TIE_RTOL = 1e-10


@njit(inline="always")
def _beats(g, best, scale):
    """Whether a split of gain ``g`` replaces the best so far: larger by more than ``TIE_RTOL * scale``
    (any finite ``g`` beats ``best = -inf``; NaN never wins)."""
    return g > best and (best == -np.inf or g - best > TIE_RTOL * scale)


# ----------------------------------------------------------------------------- one score per criterion
@njit(inline="always")
def _score_se(G, N):
    """SE (Eq. 3): a side's ``G^2 / N``; ``SE = sum r^2 - score(l) - score(r)``, so minimising Eq. 3 is
    maximising the gain."""
    return G * G / N


@njit(inline="always")
def _score_wse(G, H, Q):
    """WSE (Eq. 7-8): a side's ``S^2 / W - Q`` with ``S = -G``, ``W = H`` (0 for ``H <= 0``)."""
    return G * G / H - Q if H > 0.0 else 0.0


@njit(inline="always")
def _score_rwse(G, H):
    """RWSE (Eq. 9), and OLE for a derivative-additive loss (Theorem 1): a side's ``G^2 / H``."""
    return G * G / H


@njit(inline="always")
def _score_ole(G, H, P):
    """OLE (Eq. 13) with pairs: ``G^2 / h`` on the side's exact second derivative ``h = H - 2 P``
    (Example 3-4: the pairs inside the side cancel; 0 for ``h <= 0``)."""
    h = H - 2.0 * P
    return G * G / h if h > 0.0 else 0.0


@njit(inline="always")
def _score_classify(S):
    """NDCGBoost's classifier: a side's ``max(0, S)`` (its leaf outputs 1 iff ``S > 0``); NaN stays NaN."""
    return S if (S > 0.0 or S != S) else 0.0


@njit(inline="always")
def _node_score(crit, G, H, N, Q, P, min_hess, lam):
    """A node's own score (the gain's ``score(node)``): SE's ``G^2 / N``; WSE's, RWSE's or OLE's on the
    node's (exact, ``H - 2 P``; ``P = 0`` without pairs) second derivative when it reaches ``min_hess``,
    else 0 (RWSE's on ``h + lam``, the L2 leaf penalty; the caller passes ``lam = 0`` for the others);
    NDCGBoost's ``max(0, G)`` (``G`` holds the node's ``S``)."""
    if crit == SE:
        return _score_se(G, N) if N > 0.0 else 0.0
    if crit == CLASSIFY:
        return _score_classify(G)
    h = H - 2.0 * P
    if h >= min_hess and h > 0.0:
        return _score_wse(G, h, Q) if crit == WSE else _score_rwse(G, h + lam)
    return 0.0


# ------------------------------------------------------------------------------------ the scans
@njit(inline="always", error_model="numpy")
def _fast_feature(hist, o, nb, se, md, min_hess, G, H, N, inv_unit, floor, buf, lam):
    """SE (``se``) or RWSE on the bins ``o:o+nb`` of one feature: the largest ``score(l) + score(r)``
    and its bin, ``(-inf, -1)`` if none is valid. Three passes over the scratch ``buf`` ((4, >= nb)):

    1. the prefix sums ``G_l``, ``H_l``, ``N_l`` in bin order. An empty bin gives the partition of
       threshold ``b - 1`` again: its sums are masked to zero (a histogram made by subtraction may hold
       a rounding residue in an empty bin's gradient), it scores like the previous bin and never wins.
       With two channels (a constant hessian ``1 / inv_unit``) the count is ``H_l * inv_unit``;
    2. which thresholds need their score (no dependency between bins: SIMD lanes): the valid ones
       (``N_l, N_r >= md``, ``H_l, H_r >= min_hess``) whose score ``(G_l^2 D_r + G_r^2 D_l) / (D_l D_r)``
       (``D`` = count for SE, hessian for RWSE) the products cannot prove below the bar ``floor``;
    3. the exact score of those, in bin order, and the first strict maximum.

    A threshold skipped in pass 2 scores below ``floor``: the result is the scan's without a bar (bits
    included) whenever the feature's best reaches ``floor``; below it, the feature may return another
    threshold or none, which the caller discards. ``floor = -inf``: no bar. RWSE's ``D`` is ``H + lam``
    (the L2 leaf penalty, 0 for SE): ``G^2 / (H + lam)`` per side (the validity test stays on ``H``).
    ``inline="always"``: one copy in each scan that calls it (no call per feature)."""
    m = nb - 1
    GL = buf[0]
    HL = buf[1]
    NL = buf[2]
    NEED = buf[3]
    gl = 0.0
    hl = 0.0
    nl = 0.0
    two = hist.shape[1] == 2  # constant hessian: the count is H / h_unit (up to rounding)
    for b in range(m):  # pass 1 (`two` is loop-invariant: the compiler makes one loop per layout)
        if two:
            hb = hist[o + b, 1]
            hl += hb
            nl = hl * inv_unit
            gl += hist[o + b, 0] * (hb != 0.0)  # an empty bin adds nothing (see above)
        else:
            cb = hist[o + b, 2]
            full = cb != 0.0
            hl += hist[o + b, 1] * full  # an empty bin adds nothing (see above)
            nl += cb
            gl += hist[o + b, 0] * full
        GL[b] = gl
        HL[b] = hl
        NL[b] = nl
    bar = floor if floor > BAR_MIN else np.inf  # np.inf: no bar (products may underflow below BAR_MIN)
    for b in range(m):  # pass 2
        gl = GL[b]
        hl = HL[b]
        nl = NL[b]
        nr = N - nl
        hr = H - hl
        gr = G - gl
        dl = nl if se else hl + lam
        dr = nr if se else hr + lam
        bad = (nl < md) | (nr < md) | (hl < min_hess) | (hr < min_hess)
        below = (bar < np.inf) & (dl > 0.0) & (dr > 0.0) & \
            ((gl * gl * dr + gr * gr * dl) * _MARGIN < bar * (dl * dr))
        NEED[b] = 0.0 if bad | below else 1.0
    best = -np.inf
    bj = -1
    for b in range(m):  # pass 3
        if NEED[b] != 0.0:
            gl = GL[b]
            gr = G - gl
            if se:
                g = _score_se(gl, NL[b]) + _score_se(gr, N - NL[b])
            else:
                g = _score_rwse(gl, HL[b] + lam) + _score_rwse(gr, H - HL[b] + lam)
            if _beats(g, best, abs(best)):
                best = g
                bj = b
    return best, bj


@njit(cache=True, error_model="numpy")  # as _fast_feature, inlined here
def _scan_fast(hist, off, feats, crit, min_data, min_hess, G, H, N, score, h_unit, buf, lam):
    """The best SE or RWSE (L2 leaf penalty ``lam``, 0 for SE) split of a node over the features ``feats``
    (positions in ``off``):
    ``(gain, position, j)``, position -1 when no split is valid. ``buf``: float64 (4, >= the widest
    feature's bins), the scan's prefix sums and flags, from the caller. A feature scanned after the best
    so far gets that best (less the margin) as its bar."""
    best = -np.inf
    bf = -1
    bj = -1
    md = min_data - 0.5  # counts are integers (or H / h_unit, exact up to rounding)
    inv_unit = 1.0 / h_unit if h_unit > 0.0 else 0.0
    se = crit == SE
    for t in range(feats.size):
        f = feats[t]
        # a score below best + score (less a margin for the rounding of both sums) cannot make this feature
        # win: its scan may skip it
        floor = best + score - BAR_MARGIN * (abs(best) + abs(score)) if best > -np.inf else -np.inf
        g, j = _fast_feature(hist, off[f], off[f + 1] - off[f], se, md, min_hess, G, H, N, inv_unit, floor,
                             buf, lam)
        g = g - score
        if j >= 0 and _beats(g, best, abs(best) + abs(score)):
            best = g
            bf = f
            bj = j
    return best, bf, bj


@njit(inline="always")
def _wse_feature(hist, o, nb, md, min_hess, G, H, N, Q, score):
    """WSE on the bins ``o:o+nb`` of one feature (four channels: ``G``, ``H``, ``N``, ``Q``): the best
    ``(gain, j)``, ``(-inf, -1)`` if none is valid. An empty bin (no document, no hessian) is skipped; the
    scan stops at the first threshold leaving fewer than ``md`` documents on the right."""
    gl = 0.0
    hl = 0.0
    nl = 0.0
    ql = 0.0
    best = -np.inf
    bj = -1
    for b in range(nb - 1):
        if hist[o + b, 1] == 0.0 and hist[o + b, 2] == 0.0:
            continue  # empty bin: the same partition as threshold b - 1, already evaluated
        gl += hist[o + b, 0]
        hl += hist[o + b, 1]
        nl += hist[o + b, 2]
        ql += hist[o + b, 3]
        nr = N - nl
        if nl < md:
            continue
        if nr < md:
            break
        hr = H - hl
        if hl < min_hess or hr < min_hess:
            continue
        g = _score_wse(gl, hl, ql) + _score_wse(G - gl, hr, Q - ql) - score
        if _beats(g, best, abs(best) + abs(score)):
            best = g
            bj = b
    return best, bj


@njit(cache=True)
def _scan_wse(hist, off, feats, min_data, min_hess, G, H, N, Q, score):
    """The best WSE split of a node over the features ``feats``: ``(gain, position, j)``."""
    best = -np.inf
    bf = -1
    bj = -1
    md = min_data - 0.5
    for t in range(feats.size):
        f = feats[t]
        g, j = _wse_feature(hist, off[f], off[f + 1] - off[f], md, min_hess, G, H, N, Q, score)
        if j >= 0 and _beats(g, best, abs(best) + abs(score)):
            best = g
            bf = f
            bj = j
    return best, bf, bj


@njit(inline="always", error_model="numpy")
def _ole_feature(hist, o, nb, md, min_hess, G, H, N, inv_unit, pmax, pmin, p_total, score, floor):
    """OLE with pairs on the bins ``o:o+nb`` of one feature: the best ``(gain, j)`` of ``score_ole(l) +
    score_ole(r) - score``, with ``h_l = H_l - 2 pmax_l`` and ``h_r = H_r - 2 (P - pmin_l)`` (prefix sums
    of the node's pair histograms by larger and smaller code, ``P`` = ``p_total`` the node's pair weight).
    An empty bin is skipped; the scan stops at the first threshold leaving fewer than ``md`` documents on
    the right. A valid threshold's two divisions run only when products cannot prove its gain at or below
    the bar ``max(floor, best so far)``: ``(G_l^2 h_r + G_r^2 h_l) (1 + BAR_MARGIN) < (bar + score) h_l h_r``
    (normal numbers only: rounding is then ~1e-15 relative). A feature whose best gain is above ``floor``
    gives the scan-without-bar's ``(gain, j)``, bits included; one at or below ``floor`` gives a gain at or
    below it (or none), which the caller discards. On the MSLR sample a node's scan divides at ~100 of its
    ~16,000 thresholds."""
    two = hist.shape[1] == 2  # constant hessian h_unit: the count is H / h_unit (up to rounding)
    ci = 1 if two else 2  # the count column (with two channels the hessian's: the same emptiness test)
    gl = 0.0
    hl = 0.0
    nl = 0.0
    bl = 0.0
    cmin = 0.0
    best = -np.inf
    bj = -1
    bar = floor + score
    use_bar = bar > BAR_MIN and bar < np.inf
    mh2 = min_hess * min_hess  # valid thresholds have h_l, h_r >= min_hess: the bar's factors are normal
    safe = use_bar and mh2 > BAR_MIN and bar * min_hess > BAR_MIN and bar * mh2 > BAR_MIN
    ou = np.uint64(o)  # unsigned indices: no negative-index wrap-around arithmetic per access
    for b in range(nb - 1):
        k = ou + np.uint64(b)
        h1 = hist[k, 1]
        c2 = hist[k, ci]
        if h1 == 0.0 and c2 == 0.0:
            continue  # empty bin: the same partition as threshold b - 1, already evaluated
        gl += hist[k, 0]
        hl += h1
        if two:
            nl = hl * inv_unit
        else:
            nl += c2
        bl += pmax[k]
        cmin += pmin[k]
        if nl < md:
            continue
        if N - nl < md:
            break
        hle = hl - 2.0 * bl  # Example 3-4: pairs inside the left child cancel
        hre = (H - hl) - 2.0 * (p_total - cmin)
        if hle < min_hess or hre < min_hess:
            continue
        gr = G - gl
        dd = hle * hre
        rhs = bar * dd
        if use_bar and (gl * gl * hre + gr * gr * hle) * _MARGIN < rhs and (safe or (
                dd > BAR_MIN and bar * hle > BAR_MIN and bar * hre > BAR_MIN and rhs > BAR_MIN)):
            continue  # proven at or below the bar: no division
        g = _score_ole(gl, hl, bl) + _score_ole(gr, H - hl, p_total - cmin) - score
        if _beats(g, best, abs(best) + abs(score)):
            best = g
            bj = b
            bar = (best if best > floor else floor) + score  # max(floor, best) as numba's select
            use_bar = bar > BAR_MIN and bar < np.inf
            safe = use_bar and mh2 > BAR_MIN and bar * min_hess > BAR_MIN and bar * mh2 > BAR_MIN
    return best, bj


@njit(cache=True, error_model="numpy")  # as _ole_feature, inlined here
def _scan_ole(hist, off, feats, min_data, min_hess, G, H, N, pmax, pmin, p_total, score, h_unit):
    """The best OLE split (with pairs) of a node over the features ``feats``: ``(gain, position, j)``; a
    feature scanned after the best so far gets it as its bar."""
    best = -np.inf
    bf = -1
    bj = -1
    md = min_data - 0.5
    inv_unit = 1.0 / h_unit if h_unit > 0.0 else 0.0
    for t in range(feats.size):
        f = feats[t]
        g, j = _ole_feature(hist, off[f], off[f + 1] - off[f], md, min_hess, G, H, N, inv_unit, pmax, pmin,
                            p_total, score, best)
        if j >= 0 and _beats(g, best, abs(best) + abs(score)):
            best = g
            bf = f
            bj = j
    return best, bf, bj


@njit(cache=True)
def _scan_classify(hist, off, feats, S, N, tol):
    """NDCGBoost's best split of a node over the features ``feats`` (channels: ``gamma``, then ones: the
    count; a third channel, when there is one, is not read):
    ``max(0, S_l) + max(0, S_r) - max(0, S)`` with a document on each side, ``S_l`` summed over the bins
    left to right, ``S_r = S - S_l`` (``S`` the node's sum, given). Non-finite gains are not candidates.
    The first candidate in (feature, bin) order whose gain is within ``tol`` of the node's largest wins
    (two sweeps: the largest, then the first within ``tol`` of it; ``tol = 0``: the first maximum).
    Returns ``(gain, position, j)``."""
    top = _score_classify(S)
    best = -np.inf
    for sweep in range(2):
        for t in range(feats.size):
            f = feats[t]
            o = off[f]
            sl = 0.0
            nl = 0.0
            for b in range(off[f + 1] - o - 1):
                sl += hist[o + b, 0]
                nl += hist[o + b, 1]
                if nl > 0.0 and N - nl > 0.0:
                    g = _score_classify(sl) + _score_classify(S - sl) - top
                    if g < np.inf and g > -np.inf:  # finite (NaN fails both)
                        if sweep == 0:
                            if g > best:
                                best = g
                        elif g >= best - tol:
                            return g, f, b
        if best == -np.inf:
            break
    return -np.inf, -1, -1


@njit(cache=True, parallel=True)
def _scan_parallel(hist, off, feats, crit, min_data, min_hess, G, H, N, Q, score, h_unit, pmax, pmin, p_total,
                   gains, js, bufs, lam):
    """Parallel twin of the scans of SE, RWSE, WSE and OLE (``pmax`` None: without pairs): each feature
    scanned on its own (``prange``, no bar from the others), then the serial reduction in feature order,
    so the same ``(gain, position, j)`` whatever the number of threads. ``gains`` (float64), ``js``
    (int64) hold at least ``feats.size`` entries, ``bufs`` (float64, (>= feats.size, 4, >= the widest
    feature's bins)) one scan buffer per feature: from the caller; ``lam`` RWSE's L2 leaf penalty."""
    m = feats.size
    md = min_data - 0.5
    inv_unit = 1.0 / h_unit if h_unit > 0.0 else 0.0
    for t in prange(m):
        f = feats[t]
        o = off[f]
        nb = off[f + 1] - o
        if pmax is not None:
            g, j = _ole_feature(hist, o, nb, md, min_hess, G, H, N, inv_unit, pmax, pmin, p_total, score,
                                -np.inf)
        elif crit == WSE:
            g, j = _wse_feature(hist, o, nb, md, min_hess, G, H, N, Q, score)
        else:
            g, j = _fast_feature(hist, o, nb, crit == SE, md, min_hess, G, H, N, inv_unit, -np.inf, bufs[t],
                                 lam)
            g = g - score
        gains[t] = g
        js[t] = j
    best = -np.inf
    bf = -1
    bj = -1
    for t in range(m):
        if js[t] >= 0 and _beats(gains[t], best, abs(best) + abs(score)):
            best = gains[t]
            bf = feats[t]
            bj = js[t]
    return best, bf, bj


@njit(cache=True)
def _pairwise_sum(s, rows, lo, n):
    """``s[rows[lo:lo + n]].sum()`` as NumPy sums it, bit for bit: blocks of up to 128 summed in eight
    interleaved accumulators, longer runs split in halves (a multiple of 8) and the halves added. NDCGBoost
    reads a node's weight sum ``S`` this way (its leaf outputs are the signs of such sums)."""
    if n < 8:
        res = -0.0
        for i in range(n):
            res += s[rows[lo + i]]
        return res
    if n <= 128:
        r0 = s[rows[lo]]
        r1 = s[rows[lo + 1]]
        r2 = s[rows[lo + 2]]
        r3 = s[rows[lo + 3]]
        r4 = s[rows[lo + 4]]
        r5 = s[rows[lo + 5]]
        r6 = s[rows[lo + 6]]
        r7 = s[rows[lo + 7]]
        i = 8
        m = n - n % 8
        while i < m:
            k = lo + i
            r0 += s[rows[k]]
            r1 += s[rows[k + 1]]
            r2 += s[rows[k + 2]]
            r3 += s[rows[k + 3]]
            r4 += s[rows[k + 4]]
            r5 += s[rows[k + 5]]
            r6 += s[rows[k + 6]]
            r7 += s[rows[k + 7]]
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res += s[rows[lo + i]]
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pairwise_sum(s, rows, lo, n2) + _pairwise_sum(s, rows, lo + n2, n - n2)


# ------------------------------------------------------------------------ symmetric (oblivious) trees
@njit(inline="always")
def _cosine_feature(hist, off, t, L, tot, acc, min_hess, lam, sigma, noise, d, scores):
    """The Cosine scores of histogram feature ``t``'s candidates ``j < nb_t - 1`` into ``scores[off[t] +
    j]`` (`_scan_cosine`; ``acc`` (>= L, 2) the leaves' left sums, scratch)."""
    o = off[t]
    for l in range(L):
        acc[l, 0] = 0.0
        acc[l, 1] = 0.0
    for j in range(off[t + 1] - o - 1):
        num = 0.0
        den = 0.0
        for l in range(L):
            acc[l, 0] += hist[l, o + j, 0]
            acc[l, 1] += hist[l, o + j, 1]
            gg = acc[l, 0]
            hh = acc[l, 1]
            if hh > min_hess:
                a = gg / (hh + lam)
                num += gg * a
                den += hh * a * a
            gg = tot[l, 0] - acc[l, 0]
            hh = tot[l, 1] - acc[l, 1]
            if hh > min_hess:
                a = gg / (hh + lam)
                num += gg * a
                den += hh * a * a
        s = num / np.sqrt(den) if den > 0.0 else 0.0  # Cosine score (CatBoost's score_function)
        if noise is not None:
            s += sigma * noise[d, o + j]  # random_strength (CatBoost's NormalWithModelSizeDecrease)
        scores[o + j] = s


@njit(inline="always")
def _pick_cosine(off, scores):
    """The first best candidate over ``scores`` in (feature, bin) order, near-ties to the first
    (`_beats`): ``(score, t, j)``, ``(-inf, -1, -1)`` when no feature has two bins."""
    best = -np.inf
    bt = -1
    bj = -1
    for t in range(off.size - 1):
        o = off[t]
        for j in range(off[t + 1] - o - 1):
            s = scores[o + j]
            if _beats(s, best, abs(best)):
                best = s
                bt = t
                bj = j
    return best, bt, bj


@njit(cache=True)
def _scan_cosine(hist, off, L, tot, acc, min_hess, lam, sigma, noise, d, scores):
    """The split ``(t, j)`` shared by the ``L`` leaves of one level of a symmetric tree (CatBoost's
    oblivious trees): the largest Cosine score over the candidates ``j < nb_t - 1`` of every histogram
    feature ``t`` (``hist`` (>= L, bins, 2) per leaf, ``tot`` the leaves' totals, ``acc`` (>= L, 2)
    scratch, ``scores`` (>= bins) each candidate's score, scratch). A candidate scores ``sum G a / sqrt(sum
    H a^2)``, ``a = G / (H + lam)``, summed over both sides of every leaf whose ``H > min_hess`` (0 when
    the denominator is 0); with ``noise`` (the normals of each level, (depth, bins)) plus ``sigma
    noise[d, off[t] + j]``. Ties and near-ties (`_beats`) go to the first candidate in (feature, bin)
    order. Returns ``(score, t, j)``, ``(-inf, -1, -1)`` when no feature has two bins."""
    for t in range(off.size - 1):
        _cosine_feature(hist, off, t, L, tot, acc, min_hess, lam, sigma, noise, d, scores)
    return _pick_cosine(off, scores)


@njit(cache=True, parallel=True)
def _scan_cosine_parallel(hist, off, L, tot, acc, min_hess, lam, sigma, noise, d, scores):
    """Parallel twin of :func:`_scan_cosine`: the candidates' scores by ``prange`` over ``acc.shape[0]``
    blocks of features (``acc`` (blocks, >= L, 2), one scratch per block; each score computed as the serial
    scan does), then the serial pick in (feature, bin) order: the same split and score whatever the
    number of blocks."""
    m = off.size - 1
    nblk = acc.shape[0]
    for blk in prange(nblk):
        for t in range(blk * m // nblk, (blk + 1) * m // nblk):
            _cosine_feature(hist, off, t, L, tot, acc[blk], min_hess, lam, sigma, noise, d, scores)
    return _pick_cosine(off, scores)


# ----------------------------------------------------------------------------- the criteria's source
def criterion_source() -> str:
    """The lines that carry Eq. 3 (SE), 7 (WSE), 9 (RWSE) and 13 (OLE, on the exact pairwise second
    derivative: the pairs inside a node cancel, Example 3-4): each criterion's one score function as it is
    compiled, and the lines of the OLE scan that give each side its exact second derivative and the gain it
    runs."""
    import inspect

    scores = "".join(inspect.getsource(fn.py_func) for fn in (_score_se, _score_wse, _score_rwse, _score_ole))
    lines = [ln for ln in inspect.getsource(_ole_feature.py_func).splitlines()
             if "2.0 *" in ln or "_score_ole(" in ln]
    return scores + "\n".join(lines)


def warmup() -> None:
    """Compile the scans on a toy node (two and three channels; pairs; WSE's four; NDCGBoost's)."""
    off = np.array([0, 3, 6], dtype=np.int64)
    feats = np.arange(2, dtype=np.int64)
    buf = np.empty((4, 3))
    for C in (2, 3, 4):
        hist = np.ones((6, C))
        for crit in (SE, RWSE):
            _scan_fast(hist, off, feats, crit, 1.0, 0.0, 3.0, 3.0, 3.0, 0.0, 1.0 if C == 2 else 0.0, buf, 0.0)
    _scan_wse(np.ones((6, 4)), off, feats, 1.0, 0.0, 3.0, 3.0, 3.0, 1.0, 0.0)
    for C in (2, 3):
        _scan_ole(np.ones((6, C)), off, feats, 1.0, 0.0, 3.0, 3.0, 3.0, np.zeros(6), np.zeros(6), 0.0, 0.5,
                  1.0 if C == 2 else 0.0)
    _scan_classify(np.ones((6, 3)), off, feats, 1.0, 3.0, 0.0)
    for crit in (SE, RWSE, WSE):
        _node_score(crit, 1.0, 2.0, 3.0, 0.5, 0.0, 0.0, 0.0)
    _pairwise_sum(np.ones(300), np.arange(300, dtype=np.int64), 0, 300)

"""Regression-tree kernels: the split search of Xia, Zhai & Wang's criteria, row/pair partitioning,
and prediction of tree ensembles.

A split ``(f, j)`` sends a document left when its bin code on feature ``f`` is ``<= j`` and right when
it is ``> j`` (the raw-feature test ``x > theta_j``; missing values, code 0, always go left). For each
criterion the search maximises ``gain = score(left) + score(right) - score(node)`` where, with ``G``,
``H``, ``N`` the sums of gradient ``L'``, hessian ``L''`` and count, and ``Q`` the sum of ``w r^2``:

* SE  (criterion 0, Eq. 3):  ``score = G^2 / N``; ``SE(v) = sum r^2 - score(l) - score(r)`` with
  ``r = -L'``, so minimising Eq. 3 is maximising the gain.
* WSE (criterion 1, Eq. 7-8): ``score = S^2 / W - Q`` with ``S = sum w r = -G``, ``W = H`` and
  ``Q = sum w r^2``; the gain is ``-WSE(v)`` computed through ``Q`` (numerically fragile, as the paper
  says, when ``w`` is near 0).
* RWSE / OLE (criterion 2, Eq. 9 and 13): ``score = G^2 / H``. For a derivative-additive loss ``H`` is
  the sum of the per-document ``L''`` (Theorem 1: OLE = RWSE). With a pair list (LambdaMART) ``H`` is
  the node's exact second derivative ``sum_d L''_d - 2 sum_{pairs inside} w_ij`` (Example 3-4): the
  pairs whose two documents share the node cancel.

Candidates need ``N >= min_data`` and ``H >= min_hess`` on both sides (exact ``H`` for OLE with pairs).
Ties go to the first candidate in (feature order, bin) order, and so do near-ties: a later candidate
wins only when its gain is larger by more than ``_TIE_RTOL = 1e-10`` times ``|best| + |score(node)|``
(`_beats`). Two features that split the documents alike have gains equal in exact arithmetic but summed
over other bins; the gradients' last bits differ between CPUs (McRank's softmax through numpy's SIMD
``exp``), and a strict comparison let the CPU choose the feature: with numpy's AVX-512 paths on or off,
13 of the 20 McRank fits of notebook 04 (MSLR sample, 15 iterations) grew different trees, their test
scores differing by up to 0.056.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import njit
from .histograms import _child_histogram_global, _histogram_global

SE, WSE, RWSE = 0, 1, 2
# the split scan's bar (see _fast_feature_best): a threshold is skipped when the products prove its score
# below the bar by this relative margin (its rounding errors are ~1e-15); bars below _BAR_MIN (where
# products may underflow) skip nothing
_BAR_MARGIN = 1.0 + 1e-9
_BAR_MARGIN_ABS = 1e-9
_BAR_MIN = 1e-200
# split gains closer than this fraction of |best| + |score(node)| are ties (module docstring); below the
# bar's margin, so a threshold the bar skips could not have won
_TIE_RTOL = 1e-10


@njit(inline="always")
def _beats(g, best, scale):
    """Whether a split of gain ``g`` replaces the best so far: larger by more than ``_TIE_RTOL * scale``
    (any finite ``g`` beats ``best = -inf``; NaN never wins)."""
    return g > best and (best == -np.inf or g - best > _TIE_RTOL * scale)


@njit(cache=True)
def _score(crit, G, H, N, Q):
    if crit == 0:
        return G * G / N if N > 0.0 else 0.0
    if crit == 1:
        return G * G / H - Q if H > 0.0 else 0.0
    return G * G / H if H > 0.0 else 0.0


@njit(inline="always", error_model="numpy")
def _fast_feature_best(hist, o, nb, crit, md, min_hess, G, H, N, inv_unit, floor, buf):
    """The scan of :func:`_feature_best` for SE (crit 0) and RWSE/OLE without pairs: the largest
    ``G_l^2/D_l + G_r^2/D_r`` (``D`` = count for SE, hessian for RWSE) over the bins of one feature
    (rows ``o:o+nb``). Returns (score, j) with j = -1 if none is valid.

    Three passes over the scratch ``buf`` (shape (4, >= nb)):

    1. the prefix sums ``G_l``, ``H_l``, ``N_l`` in bin order. An empty bin gives the partition of
       threshold ``b - 1`` again: its sums are masked to zero (a histogram made by subtraction may hold
       a rounding residue in an empty bin's gradient), it scores like the previous bin and never wins;
    2. which thresholds need their score (no dependency between bins: SIMD lanes): the valid ones
       (``N_l, N_r >= md``, ``H_l, H_r >= min_hess``; counts only decrease on the right, so this is a
       left-to-right scan's ``continue`` / ``break``) whose score ``(G_l^2 D_r + G_r^2 D_l) / (D_l D_r)``
       the products (no division) cannot prove below the bar ``floor`` by a relative margin of 1e-9
       (their rounding costs ~1e-15);
    3. the exact score ``G_l^2 / D_l + G_r^2 / D_r`` of those, in bin order, and the first strict
       maximum.

    A threshold skipped in pass 2 has a score below ``floor``, so the result is the scan's without a
    bar (bits included) for any ``floor`` at or below the best score; above it, a feature whose best
    score is below ``floor`` may return another threshold or none (the caller then discards it: see
    :func:`_best_split_fast`). ``floor = -inf`` skips nothing by the bar.

    ``inline="always"``: merged into its two callers before typing (issue 15.5: with `_split_node` merged
    into `_grow_tree`, a cold LambdaMART fit compiles 10 functions instead of 12, ~0.6 s less, measured;
    the callers take its ``error_model="numpy"``)."""
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
    bar = floor if floor > _BAR_MIN else np.inf  # np.inf: no bar (products may underflow below _BAR_MIN)
    se = crit == 0
    for b in range(m):  # pass 2
        gl = GL[b]
        hl = HL[b]
        nl = NL[b]
        nr = N - nl
        hr = H - hl
        gr = G - gl
        dl = nl if se else hl
        dr = nr if se else hr
        bad = (nl < md) | (nr < md) | (hl < min_hess) | (hr < min_hess)
        below = (bar < np.inf) & (dl > 0.0) & (dr > 0.0) & \
            ((gl * gl * dr + gr * gr * dl) * _BAR_MARGIN < bar * (dl * dr))
        NEED[b] = 0.0 if bad | below else 1.0
    best = -np.inf
    bj = -1
    for b in range(m):  # pass 3
        if NEED[b] != 0.0:
            gl = GL[b]
            dl = NL[b] if se else HL[b]
            dr = (N - NL[b]) if se else (H - HL[b])
            gr = G - gl
            g = gl * gl / dl + gr * gr / dr  # Eq. 3 (SE, D = N) or Eq. 9 (RWSE, D = H)
            if _beats(g, best, abs(best)):
                best = g
                bj = b
    return best, bj


@njit(cache=True, error_model="numpy")  # as _fast_feature_best, inlined here
def _feature_best(hist, off, f, crit, min_data, min_hess, use_pairs, pmax, pmin, p_total, tot, parent_score,
                  h_unit, buf):
    """Best bin threshold ``j`` on feature ``f``: returns (gain, j) with j = -1 if none is valid. ``buf``
    is :func:`_fast_feature_best`'s scratch (float64, (4, >= the feature's bins)), read by SE and RWSE
    without pairs only."""
    C = hist.shape[1]
    o = off[f]
    nb = off[f + 1] - o
    G, H, N = tot[0], tot[1], tot[2]
    Q = tot[3] if C > 3 else 0.0
    gl = 0.0
    hl = 0.0
    nl = 0.0
    ql = 0.0
    bl = 0.0
    cmin = 0.0
    best = -np.inf
    bj = -1
    md = min_data - 0.5  # counts are integers (or H / h_unit, exact up to rounding)
    inv_unit = 1.0 / h_unit if h_unit > 0.0 else 0.0
    if crit != 1 and not use_pairs:
        # fast path, SE or RWSE/OLE: maximise G_l^2/D_l + G_r^2/D_r with D = N (SE) or H (RWSE)
        best, bj = _fast_feature_best(hist, o, nb, crit, md, min_hess, G, H, N, inv_unit, -np.inf, buf)
        return best - parent_score, bj
    for b in range(nb - 1):
        if hist[o + b, 1] == 0.0 and (C == 2 or hist[o + b, 2] == 0.0):
            continue  # empty bin: the same partition as threshold b - 1, already evaluated
        gl += hist[o + b, 0]
        hl += hist[o + b, 1]
        if C == 2:  # constant hessian h_unit: the count is H / h_unit (up to rounding)
            nl = hl * inv_unit
        else:
            nl += hist[o + b, 2]
        if C > 3:
            ql += hist[o + b, 3]
        if use_pairs:
            bl += pmax[o + b]
            cmin += pmin[o + b]
        nr = N - nl
        if nl < md:
            continue
        if nr < md:
            break
        hr = H - hl
        hle = hl
        hre = hr
        if use_pairs:
            hle = hl - 2.0 * bl  # Example 3-4: pairs inside the left child cancel
            hre = hr - 2.0 * (p_total - cmin)
        if hle < min_hess or hre < min_hess:
            continue
        g = _score(crit, gl, hle, nl, ql) + _score(crit, G - gl, hre, nr, Q - ql) - parent_score
        if _beats(g, best, abs(best) + abs(parent_score)):
            best = g
            bj = b
    return best, bj


@njit(cache=True, error_model="numpy")  # as _fast_feature_best, inlined here
def _best_split_fast(hist, off, features, crit, min_data, min_hess, tot, parent_score, h_unit, buf):
    """:func:`_best_split` for SE and RWSE/OLE without pairs (the scan :func:`_fast_feature_best` per
    feature): the whole-tree kernel calls it directly, so a fit without WSE or pairs compiles neither
    :func:`_feature_best` nor :func:`_best_split`. ``buf`` (float64, (4, >= the widest feature's bins)):
    the scan's prefix sums and flags, reused by every feature; from the caller, once per tree or
    workspace (issue 15.5: no NumPy constructor compiled in the split search)."""
    best = -np.inf
    bf = -1
    bj = -1
    md = min_data - 0.5
    inv_unit = 1.0 / h_unit if h_unit > 0.0 else 0.0
    for t in range(features.size):
        f = features[t]
        # a score below best + parent_score (less a margin for the rounding of both sums) cannot make
        # this feature win: its scan may skip it (see _fast_feature_best)
        floor = best + parent_score - _BAR_MARGIN_ABS * (abs(best) + abs(parent_score)) if best > -np.inf \
            else -np.inf
        g, j = _fast_feature_best(hist, off[f], off[f + 1] - off[f], crit, md, min_hess, tot[0], tot[1],
                                  tot[2], inv_unit, floor, buf)
        g = g - parent_score
        if j >= 0 and _beats(g, best, abs(best) + abs(parent_score)):
            best = g
            bf = f
            bj = j
    return best, bf, bj


@njit(cache=True)
def _best_split(hist, off, features, crit, min_data, min_hess, use_pairs, pmax, pmin, p_total, tot,
               parent_score, h_unit, buf):
    """Best ``(gain, feature, j)`` over ``features`` for one node (feature -1 when no split is valid);
    ``buf`` as for :func:`_best_split_fast`."""
    if crit != 1 and not use_pairs:  # the fast scan directly (the same numbers as _feature_best's)
        return _best_split_fast(hist, off, features, crit, min_data, min_hess, tot, parent_score, h_unit,
                                buf)
    best = -np.inf
    bf = -1
    bj = -1
    for t in range(features.size):
        f = features[t]
        g, j = _feature_best(hist, off, f, crit, min_data, min_hess, use_pairs, pmax, pmin, p_total,
                             tot, parent_score, h_unit, buf)
        if j >= 0 and _beats(g, best, abs(best) + abs(parent_score)):
            best = g
            bf = f
            bj = j
    return best, bf, bj


@njit(cache=True, parallel=True)
def _best_split_parallel(hist, off, features, crit, min_data, min_hess, use_pairs, pmax, pmin, p_total,
                         tot, parent_score, h_unit, gains, js, bufs):
    """Parallel twin of :func:`best_split`: per-feature search in ``prange``, serial reduction. ``gains``
    (float64) and ``js`` (int64) hold at least ``features.size`` entries, ``bufs`` (float64, C-contiguous,
    ``(>= features.size, 4, >= the widest feature's bins)``) one scan buffer per feature for the fast scan
    (SE, RWSE without pairs): from the caller (`lrank.weak.tree.TreeWorkspace.parallel_scan`), so the
    kernel allocates nothing (issue 15.5)."""
    m = features.size
    for t in prange(m):
        f = features[t]
        g, j = _feature_best(hist, off, f, crit, min_data, min_hess, use_pairs, pmax, pmin, p_total, tot,
                             parent_score, h_unit, bufs[t])
        gains[t] = g
        js[t] = j
    best = -np.inf
    bf = -1
    bj = -1
    for t in range(m):
        if js[t] >= 0 and _beats(gains[t], best, abs(best) + abs(parent_score)):
            best = gains[t]
            bf = features[t]
            bj = js[t]
    return best, bf, bj


@njit(cache=True)
def _partition_rows(codes, rows, start, end, f, j, tmp, leaf_of, left_id, right_id):
    """Stable partition of ``rows[start:end]`` into ``code <= j`` then ``code > j``; returns the boundary.

    Without a branch on the side (a coin flip for the branch predictor): each row is written to the next
    left place and to the next right place and only its side's count moves on (a left place never passes
    the row being read); as `lrank._kernels.column_tree._partition_column`, 2.5x faster at 200k rows."""
    nl = 0
    nr = 0
    for k in range(start, end):
        i = rows[k]
        s = np.int64(codes[i, f] <= j)
        rows[start + nl] = i
        tmp[nr] = i
        leaf_of[i] = right_id + s * (left_id - right_id)
        nl += s
        nr += 1 - s
    for k in range(nr):
        rows[start + nl + k] = tmp[k]
    return start + nl


@njit(cache=True)
def _node_totals(hist, off, f, out):
    """Sum the channels of feature ``f``'s histogram rows (the node totals) into ``out``."""
    for c in range(hist.shape[1]):
        s = 0.0
        for b in range(off[f], off[f + 1]):
            s += hist[b, c]
        out[c] = s
    return out


@njit(cache=True)
def _node_summary(hist, off, crit, h_unit, use_pairs, p_total, min_hess, tot, k):
    """Finish node ``k``: its totals (G, H, N[, Q]) from feature 0's histogram rows into ``tot[k]`` (the
    count ``round(H / h_unit)`` for a two-channel histogram), and return its own score (as
    :func:`_score`; for OLE with pairs, on the exact second derivative ``H - 2 p_total``)."""
    t = tot[k]
    for c in range(hist.shape[1]):  # feature 0's rows, as _node_totals sums them
        acc = 0.0
        for b in range(off[0], off[1]):
            acc += hist[b, c]
        t[c] = acc
    if hist.shape[1] == 2:
        t[2] = np.floor(t[1] / h_unit + 0.5)
    G = t[0]
    H = t[1]
    N = t[2]
    h = H - 2.0 * p_total if use_pairs else H
    if crit == 0:
        return G * G / N if N > 0.0 else 0.0
    if h >= min_hess and h > 0.0:
        return G * G / h - (t[3] if crit == 1 else 0.0)
    return 0.0


@njit(inline="always")
def _split_node(codes, gbin, vals, off, crit, h_unit, min_hess, hist, rows, tmp, leaf_of, node,
                f, j, g, n_nodes, n_leaves, feature, jbin, left, right, gain, tot, start, end, slot,
                parent_score, last):
    """Split ``node`` on ``code_f <= j``: children ``n_nodes`` (left) and ``n_nodes + 1`` (right), rows
    partitioned stably, the smaller child's histogram built into the free slot ``n_leaves`` and the larger
    child's by subtraction in the parent's slot; both children's totals and scores. The histograms read
    the global bin indices ``gbin`` (``off[f] + code``), the partition ``codes``. ``last``:
    the split that completes the tree, whose children are never searched: only feature 0's bins (the
    children's totals) are made, each summed as in the full histogram (the same bits).
    ``inline="always"``: merged into its one caller, `_grow_tree` (see `_fast_feature_best`)."""
    lt = n_nodes
    rt = n_nodes + 1
    s0 = start[node]
    s1 = end[node]
    mid = _partition_rows(codes, rows, s0, s1, f, j, tmp, leaf_of, lt, rt)  # (also with gbin: one type)
    start[lt] = s0
    end[lt] = mid
    start[rt] = mid
    end[rt] = s1
    if mid - s0 <= s1 - mid:
        small, large = lt, rt
    else:
        small, large = rt, lt
    slot[large] = slot[node]
    slot[small] = n_leaves  # slots 0..n_leaves-1 are in use
    if last:  # feature 0 owns the histogram rows 0:off[1]: its bins only, each summed in row order as in
        # the full histogram (the same bits as _child_histogram_features on feature 0)
        out = hist[n_leaves]
        par = hist[slot[node]]
        C = vals.shape[1]
        out[:off[1]] = 0.0
        for k in range(start[small], end[small]):
            i = rows[k]
            b = codes[i, 0]
            for c in range(C):
                out[b, c] += vals[i, c]
        for b in range(off[1]):
            for c in range(C):
                par[b, c] -= out[b, c]
    else:
        _child_histogram_global(gbin, vals, rows, start[small], end[small], hist[n_leaves], hist[slot[node]])
    feature[node] = f
    jbin[node] = j
    left[node] = lt
    right[node] = rt
    gain[node] = g
    for c in (lt, rt):
        parent_score[c] = _node_summary(hist[slot[c]], off, crit, h_unit, False, 0.0, min_hess, tot, c)


@njit(cache=True)
def _grow_tree(codes, gbin, vals, off, crit, h_unit, num_leaves, min_data, min_hess, breadth_first,
               hist, rows, tmp, leaf_of, feature, jbin, left, right, gain, tot, start, end, slot,
               parent_score, features, bg, bf, bj, is_open, buf):
    """Grow one unconstrained tree without pair lists in one call (no per-node Python).

    The same kernels in the same order as `lrank.weak.tree.RegressionTree`'s node-by-node path, so the
    same bits: the root histogram, then per split the partition, the smaller child's histogram plus the
    subtraction, and the children's split search (best first: the open leaf with the largest positive
    gain, ties to the smaller node id; breadth first: level order). ``rows`` and ``leaf_of`` (n each)
    are set here; node arrays have ``2 num_leaves - 1`` entries, ``feature``/``jbin``/``left``/``right``
    filled with -1, the rest with zeros. Histograms read the global bin indices ``gbin = off[f] + codes``
    (`_global_bins`, uint16 or, past 65,536 histogram rows, uint32; no offset per entry, the same bits as
    summing ``codes`` with offsets), partitions read ``codes``: no histogram kernel over ``codes`` is
    compiled for a whole-tree fit. SE and RWSE only (WSE grows node by node): the split search is
    :func:`_best_split_fast`.
    ``features`` is ``arange(F)``; ``bg`` (float), ``bf``, ``bj``, ``is_open`` (int64) are scratch of
    ``2 num_leaves - 1`` entries and ``buf`` :func:`_best_split_fast`'s scan buffer (from the caller: no
    array constructors in the compiled chain).
    Returns ``(n_nodes, n_leaves)``.
    """
    n = rows.size
    for i in range(n):
        rows[i] = i
        leaf_of[i] = 0
    hist[0][:] = 0.0
    _histogram_global(gbin, vals, rows, 0, n, hist[0])
    end[0] = n
    parent_score[0] = _node_summary(hist[0], off, crit, h_unit, False, 0.0, min_hess, tot, 0)
    max_nodes = 2 * num_leaves - 1
    for nd in range(max_nodes):
        bg[nd] = -np.inf
        bf[nd] = -1
        bj[nd] = -1
        is_open[nd] = 0
    n_nodes = 1
    n_leaves = 1
    queue = bf  # breadth first: the level-order queue (its nodes are searched when taken, not stored)
    q0 = 0
    q1 = 1
    queue[0] = 0
    if not breadth_first:
        is_open[0] = 1
        bg[0], bf[0], bj[0] = _best_split_fast(hist[0], off, features, crit, min_data, min_hess, tot[0],
                                               parent_score[0], h_unit, buf)
    while n_leaves < num_leaves:  # one split per pass, one _split_node call site for both growths
        if breadth_first:
            if q0 >= q1:
                break
            node = queue[q0]
            q0 += 1
            if end[node] - start[node] < 2.0 * min_data:
                continue  # no split leaves min_data documents on both sides: not searched
            g, f, j = _best_split_fast(hist[slot[node]], off, features, crit, min_data, min_hess, tot[node],
                                       parent_score[node], h_unit, buf)
            if f < 0 or not g > 0.0:
                continue
        else:
            node = -1
            for nd in range(n_nodes):  # the largest positive gain; ties to the smaller node id
                if is_open[nd] != 0 and bf[nd] >= 0 and bg[nd] > 0.0 and (node < 0 or bg[nd] > bg[node]):
                    node = nd
            if node < 0:
                break
            is_open[node] = 0
            g, f, j = bg[node], bf[node], bj[node]
        _split_node(codes, gbin, vals, off, crit, h_unit, min_hess, hist, rows, tmp, leaf_of,
                    node, f, j, g, n_nodes, n_leaves, feature, jbin, left, right, gain, tot, start, end,
                    slot, parent_score, n_leaves + 1 == num_leaves)
        if breadth_first:
            queue[q1] = n_nodes
            queue[q1 + 1] = n_nodes + 1
            q1 += 2
        else:
            for c in (n_nodes, n_nodes + 1):
                is_open[c] = 1
                if n_leaves + 1 < num_leaves and end[c] - start[c] >= 2.0 * min_data:  # else never split
                    bg[c], bf[c], bj[c] = _best_split_fast(hist[slot[c]], off, features, crit, min_data,
                                                           min_hess, tot[c], parent_score[c], h_unit, buf)
        n_nodes += 2
        n_leaves += 1
    return n_nodes, n_leaves


@njit(cache=True)
def _predict_add(X, feature, theta, left, right, value, tree_ids, scale, out):
    """``out[i] += scale * sum_t value[t, leaf_t(X[i])]`` over ``tree_ids``; raw features, NaN goes left."""
    n = X.shape[0]
    for s in range(tree_ids.size):
        t = tree_ids[s]
        for i in range(n):
            node = 0
            while left[t, node] >= 0:
                if X[i, feature[t, node]] > theta[t, node]:
                    node = right[t, node]
                else:
                    node = left[t, node]
            out[i] += scale * value[t, node]
    return out


@njit(cache=True)
def _apply_codes(codes, feature, jbin, left, right, out):
    """Leaf node of every row of the binned matrix ``codes`` for one tree (1-d node arrays)."""
    for i in range(codes.shape[0]):
        node = 0
        while left[node] >= 0:
            if codes[i, feature[node]] > jbin[node]:
                node = right[node]
            else:
                node = left[node]
        out[i] = node
    return out


def warmup() -> None:
    """Compile the tree kernels on a toy node."""
    hist = np.ones((6, 3))
    tot = np.empty(4)
    off = np.array([0, 3, 6], dtype=np.int64)
    _node_totals(hist, off, 0, tot)
    for C in (2, 3, 4):
        for crit in (SE, WSE, RWSE):
            _node_summary(np.ones((6, C)), off, crit, 1.0, crit == RWSE, 0.5, 0.0, np.zeros((2, 4)), 1)
    feats = np.arange(2, dtype=np.int64)
    pm = np.zeros(6)
    buf = np.empty((4, 3))
    for crit in (SE, RWSE):
        _best_split(hist, off, feats, crit, 1.0, 0.0, False, pm, pm, 0.0, np.ones(4), 0.0, 0.0, buf)
        _best_split(np.ones((6, 2)), off, feats, crit, 1.0, 0.0, False, pm, pm, 0.0, np.ones(4), 0.0, 1.0,
                    buf)
    _best_split(np.ones((6, 4)), off, feats, WSE, 1.0, 0.0, True, pm, pm, 0.0, np.ones(4), 0.0, 0.0, buf)
    codes = np.array([[1, 2], [2, 1], [0, 1]], dtype=np.uint8)
    rows = np.arange(3, dtype=np.int64)
    leaf_of = np.zeros(3, dtype=np.int64)
    _partition_rows(codes, rows, 0, 3, 0, 1, np.empty(3, dtype=np.int64), leaf_of, 1, 2)
    f = np.zeros((1, 3), dtype=np.int64)
    lr = np.array([[1, -1, -1]], dtype=np.int64)
    _predict_add(np.zeros((2, 2), dtype=np.float32), f, np.zeros((1, 3)), lr, lr + 1, np.zeros((1, 3)),
                np.zeros(1, dtype=np.int64), 1.0, np.zeros(2))
    _apply_codes(codes, f[0], f[0], lr[0], lr[0] + 1, np.empty(3, dtype=np.int64))
    gbin = (codes + off[:-1]).astype(np.uint16)
    for breadth_first in (True, False):  # one specialisation: the flag is a value, not a type
        ints = [np.full(3, -1, dtype=np.int64) for _ in range(7)]  # rows, tmp, leaf_of, 4 node arrays
        idx = [np.zeros(3, dtype=np.int64) for _ in range(3)]  # start, end, slot
        scratch = [np.zeros(3, dtype=np.int64) for _ in range(3)]  # bf, bj, is_open
        _grow_tree(codes, gbin, np.ones((3, 2)), off, SE, 1.0, 2, 1.0, 0.0, breadth_first,
                   np.zeros((2, 6, 2)), *ints, np.zeros(3), np.zeros((3, 4)), *idx, np.zeros(3),
                   np.arange(2, dtype=np.int64), np.zeros(3), *scratch, buf)

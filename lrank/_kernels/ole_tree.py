"""One OLE tree in one kernel call: LambdaMART's exact pairwise second derivative (Xia, Zhai & Wang,
Eq. 13 with Example 3-4) grown without per-node Python.

`lrank.weak.tree.RegressionTree` grows an OLE tree with a pair list node by node (`_NodePairs`); this
kernel runs the same steps in the same order, so the tree structure and leaf values are the same bits
(``tests/test_ole_tree.py``):

1. the root's gradient histogram and its pair histograms (``pmax``/``pmin``: pair weights by the larger
   and the smaller code of each pair, :mod:`lrank._kernels.pair_histograms`) and its exact second
   derivative ``H - 2 sum_{pairs inside} w`` (Example 3-4);
2. per split: the stable row partition, the smaller child's gradient histogram and the larger child's by
   subtraction; the stable pair partition (left, right, crossing) and the children's pair histograms the
   cheaper way: the smaller child's pairs plus the crossing ones subtracted from the parent's when there
   are fewer crossing pairs than the larger child's, else both children directly; a child that will never
   be searched (fewer than ``2 min_data`` documents, or the split that completes the tree) gets no pair
   histogram unless its sibling's subtraction needs it;
3. the split search of the RWSE score ``G^2 / h`` on the exact ``h`` (`lrank._kernels.trees._best_split`
   with pairs); best-first (largest positive gain, ties to the smaller node id) or breadth-first.

A node's pair weight total is summed as NumPy sums a contiguous float64 slice (pairwise, blocks of 8
accumulators up to 128 entries: :func:`_pair_total`), the node-by-node path's ``pw[lo:hi].sum()``.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit
from .histograms import (
    _child_histogram,
    _child_histogram_features,
    _child_histogram_global,
    _histogram,
    _histogram_global,
)
from .pair_histograms import _pair_histograms, _pair_histograms_global, _partition_pairs, _pmin_from_weights
from .trees import RWSE, _best_split, _node_summary, _partition_rows


@njit(cache=True)
def _pair_total(x, lo, hi):
    """``x[lo:hi].sum()`` with NumPy's pairwise summation (the same bits): below 8 entries one after
    another; up to 128 in 8 interleaved accumulators combined as ``((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7))``
    then the tail; above, the halves (the first rounded down to a multiple of 8) summed apart."""
    n = hi - lo
    if n < 8:
        r = 0.0
        for i in range(lo, hi):
            r += x[i]
        return r
    if n <= 128:
        r0, r1, r2, r3 = x[lo], x[lo + 1], x[lo + 2], x[lo + 3]
        r4, r5, r6, r7 = x[lo + 4], x[lo + 5], x[lo + 6], x[lo + 7]
        i = lo + 8
        stop = hi - n % 8
        while i < stop:
            r0 += x[i]
            r1 += x[i + 1]
            r2 += x[i + 2]
            r3 += x[i + 3]
            r4 += x[i + 4]
            r5 += x[i + 5]
            r6 += x[i + 6]
            r7 += x[i + 7]
            i += 8
        r = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < hi:
            r += x[i]
            i += 1
        return r
    n2 = n // 2
    n2 -= n2 % 8
    return _pair_total(x, lo, lo + n2) + _pair_total(x, lo + n2, hi)


@njit(cache=True)
def _node_pairs(codes, gbin, use_gbin, off, pa, pb, pw, lo, hi, pmax, pmin, sign):
    """Add ``sign * w`` of the pairs ``lo:hi`` into a node's ``pmax`` (global bin indices when
    ``use_gbin``; the same bins in the same order either way); ``pmin`` is scratch (made afterwards by
    `_pmin_from_weights`)."""
    if use_gbin:
        _pair_histograms_global(gbin, pa, pb, pw, lo, hi, pmax, pmin, sign, False)
    else:
        _pair_histograms(codes, pa, pb, pw, lo, hi, None, off, pmax, pmin, sign)


@njit(cache=True)
def _grow_ole_tree(codes, gbin, use_gbin, vals, off, h_unit, num_leaves, min_data, min_hess, breadth_first,
                   hist, rows, tmp, leaf_of, pa, pb, pw, ta, tb, tw, n_pairs, pmax, pmin, feature, jbin, left,
                   right, gain, tot, start, end, slot, parent_score):
    """Grow one unconstrained OLE tree with a pair list in one call (module docstring).

    ``pa``/``pb``/``pw`` hold the ``n_pairs`` pairs (reordered here, node-contiguous); ``ta``/``tb``/``tw``
    are the pair partition's scratch (as long); ``pmax``/``pmin`` are (num_leaves, total bins) slots as
    ``hist``. Node arrays as `lrank._kernels.trees._grow_tree`'s (``feature``/``jbin``/``left``/``right``
    filled with -1, the rest zeros). Returns ``(n_nodes, n_leaves)``."""
    n = rows.size
    for i in range(n):
        rows[i] = i
        leaf_of[i] = 0
    F = off.size - 1
    TB = off[F]
    features = np.arange(F)
    max_nodes = 2 * num_leaves - 1
    pstart = np.zeros(max_nodes, dtype=np.int64)
    pend = np.zeros(max_nodes, dtype=np.int64)
    ptot = np.zeros(max_nodes)
    built = np.zeros(max_nodes, dtype=np.bool_)
    # root: gradient histogram, pair histograms, totals and score (Example 3-4: h = H - 2 sum w)
    hist[0][:] = 0.0
    if use_gbin:
        _histogram_global(gbin, vals, rows, 0, n, hist[0])
    else:
        _histogram(codes, vals, rows, 0, n, off, hist[0])
    end[0] = n
    pend[0] = n_pairs
    u = np.zeros(n)  # each document's weight in its node's pairs (pmax + pmin = its histogram)
    for p in range(n_pairs):
        u[pa[p]] += pw[p]
    for p in range(n_pairs):
        u[pb[p]] += pw[p]
    ptot[0] = _build(codes, gbin, use_gbin, off, pa, pb, pw, 0, n_pairs, u, rows, 0, n, pmax[0], pmin[0], TB)
    built[0] = True
    parent_score[0] = _node_summary(hist[0], off, RWSE, h_unit, True, ptot[0], min_hess, tot, 0)
    bg = np.full(max_nodes, -np.inf)
    bf = np.full(max_nodes, -1, dtype=np.int64)
    bj = np.full(max_nodes, -1, dtype=np.int64)
    queue = np.zeros(max_nodes, dtype=np.int64)  # breadth first: the nodes in level order
    q0 = 0
    q1 = 1
    is_open = np.zeros(max_nodes, dtype=np.bool_)  # best first: the leaves
    is_open[0] = True
    if not breadth_first:
        bg[0], bf[0], bj[0] = _best_split(hist[0], off, features, RWSE, min_data, min_hess, True, pmax[0],
                                          pmin[0], ptot[0], tot[0], parent_score[0], h_unit)
    n_nodes = 1
    n_leaves = 1
    while n_leaves < num_leaves:
        if breadth_first:
            if q0 == q1:
                break
            node = queue[q0]
            q0 += 1
            if not built[node]:
                continue  # never searched (too small, or the tree was complete at its split)
            s = slot[node]
            g, f, j = _best_split(hist[s], off, features, RWSE, min_data, min_hess, True, pmax[s], pmin[s],
                                  ptot[node], tot[node], parent_score[node], h_unit)
            if f < 0 or not g > 0.0:
                continue
        else:
            node = -1
            for nd in range(n_nodes):  # the largest positive gain; ties to the smaller node id
                if is_open[nd] and bf[nd] >= 0 and bg[nd] > 0.0 and (node < 0 or bg[nd] > bg[node]):
                    node = nd
            if node < 0:
                break
            is_open[node] = False
            g, f, j = bg[node], bf[node], bj[node]
        # rows: stable partition, smaller child's histogram, the larger one's by subtraction
        lt = n_nodes
        rt = n_nodes + 1
        s0 = start[node]
        s1 = end[node]
        if use_gbin:  # code <= j iff off[f] + code <= off[f] + j
            mid = _partition_rows(gbin, rows, s0, s1, f, off[f] + j, tmp, leaf_of, lt, rt)
        else:
            mid = _partition_rows(codes, rows, s0, s1, f, j, tmp, leaf_of, lt, rt)
        start[lt] = s0
        end[lt] = mid
        start[rt] = mid
        end[rt] = s1
        if mid - s0 <= s1 - mid:
            small, large = lt, rt
        else:
            small, large = rt, lt
        sl = slot[node]
        ss = n_leaves  # slots 0..n_leaves-1 are in use
        slot[large] = sl
        slot[small] = ss
        last = n_leaves + 1 == num_leaves
        if last:  # children never searched: feature 0's bins (their totals) only, summed as in the full one
            f0 = np.zeros(1, dtype=np.int64)
            b1 = off[1]
            _child_histogram_features(codes, vals, rows, start[small], end[small], f0, off[:2], hist[ss][:b1],
                                      hist[sl][:b1])
        elif use_gbin:
            _child_histogram_global(gbin, vals, rows, start[small], end[small], hist[ss], hist[sl])
        else:
            _child_histogram(codes, vals, rows, start[small], end[small], off, hist[ss], hist[sl])
        # pairs: the children that will be searched get their pair histograms
        need_small = not last and end[small] - start[small] >= 2.0 * min_data
        need_large = not last and end[large] - start[large] >= 2.0 * min_data
        if need_small or need_large:
            lo = pstart[node]
            hi = pend[node]
            pmid, pnew = _partition_pairs(pa, pb, pw, lo, hi, leaf_of, lt, rt, ta, tb, tw)
            pstart[lt] = lo
            pend[lt] = pmid
            pstart[rt] = pmid
            pend[rt] = pnew
            for p in range(pnew, hi):  # the crossing pairs leave both documents' nodes
                u[pa[p]] -= pw[p]
            for p in range(pnew, hi):
                u[pb[p]] -= pw[p]
            if hi - pnew < pend[large] - pstart[large]:  # larger child = parent - crossing - smaller
                if need_large:
                    pmax[ss][:TB] = 0.0
                    _node_pairs(codes, gbin, use_gbin, off, pa, pb, pw, pstart[small], pend[small], pmax[ss],
                                pmin[ss], 1.0)
                    _node_pairs(codes, gbin, use_gbin, off, pa, pb, pw, pnew, hi, pmax[sl], pmin[sl], -1.0)
                    for t in range(TB):
                        pmax[sl][t] -= pmax[ss][t]
                    _pmin_from_weights(codes, gbin, use_gbin, off, None, u, rows, start[small], end[small],
                                       pmax[ss], pmin[ss])
                    _pmin_from_weights(codes, gbin, use_gbin, off, None, u, rows, start[large], end[large],
                                       pmax[sl], pmin[sl])
                    ptot[small] = _pair_total(pw, pstart[small], pend[small])
                    ptot[large] = _pair_total(pw, pstart[large], pend[large])
                    built[small] = True
                    built[large] = True
                else:
                    ptot[small] = _build(codes, gbin, use_gbin, off, pa, pb, pw, pstart[small], pend[small],
                                         u, rows, start[small], end[small], pmax[ss], pmin[ss], TB)
                    built[small] = True
            else:
                if need_small:
                    ptot[small] = _build(codes, gbin, use_gbin, off, pa, pb, pw, pstart[small], pend[small],
                                         u, rows, start[small], end[small], pmax[ss], pmin[ss], TB)
                    built[small] = True
                if need_large:
                    ptot[large] = _build(codes, gbin, use_gbin, off, pa, pb, pw, pstart[large], pend[large],
                                         u, rows, start[large], end[large], pmax[sl], pmin[sl], TB)
                    built[large] = True
        feature[node] = f
        jbin[node] = j
        left[node] = lt
        right[node] = rt
        gain[node] = g
        for c in (lt, rt):
            parent_score[c] = _node_summary(hist[slot[c]], off, RWSE, h_unit, True, ptot[c], min_hess, tot, c)
        if breadth_first:
            queue[q1] = lt
            queue[q1 + 1] = rt
            q1 += 2
        else:
            for c in (lt, rt):
                is_open[c] = True
                if built[c]:
                    s = slot[c]
                    bg[c], bf[c], bj[c] = _best_split(hist[s], off, features, RWSE, min_data, min_hess, True,
                                                      pmax[s], pmin[s], ptot[c], tot[c], parent_score[c],
                                                      h_unit)
        n_nodes += 2
        n_leaves += 1
    return n_nodes, n_leaves


@njit(cache=True)
def _build(codes, gbin, use_gbin, off, pa, pb, pw, lo, hi, u, rows, r0, r1, pmax, pmin, TB):
    """A node's pair histograms from its own pairs ``lo:hi`` (``pmax``) and documents ``rows[r0:r1]``
    (``pmin = U - pmax``); returns their total weight."""
    pmax[:TB] = 0.0
    _node_pairs(codes, gbin, use_gbin, off, pa, pb, pw, lo, hi, pmax, pmin, 1.0)
    _pmin_from_weights(codes, gbin, use_gbin, off, None, u, rows, r0, r1, pmax, pmin)
    return _pair_total(pw, lo, hi)

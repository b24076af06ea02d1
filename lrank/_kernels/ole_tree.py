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

Each node's ``pmin`` is ``U - pmax`` (`lrank._kernels.pair_histograms._pmin_from_weights`): ``U`` bins the
weight each document has in the node's pairs, so every pair is binned once per feature (its larger code),
not twice. A node's pair weight total is summed in pair order (the node-by-node path's ``cumsum``).

The kernel reads the global bin indices ``gbin = off[f] + code`` only (`lrank.weak.tree.TreeWorkspace.
global_bins`); without them (more than 65,536 histogram rows or a large matrix) the node-by-node path grows
the tree. One layout keeps the kernel's first compilation short (issue 15.5).
"""

from __future__ import annotations

import numpy as np

from ._jit import njit
from .histograms import _child_histogram_global, _histogram_global
from .pair_histograms import _pair_histograms_global, _partition_pairs, _pmin_from_weights
from .trees import RWSE, _feature_best, _node_summary, _partition_rows


@njit(cache=True)
def _grow_ole_tree(gbin, vals, off, h_unit, num_leaves, min_data, min_hess, breadth_first,
                   hist, rows, tmp, leaf_of, pa, pb, pw, ta, tb, tw, n_pairs, pmax, pmin, feature, jbin, left,
                   right, gain, tot, start, end, slot, parent_score):
    """Grow one unconstrained OLE tree with a pair list in one call (module docstring).

    ``pa``/``pb``/``pw`` hold the ``n_pairs`` pairs (reordered here, node-contiguous); ``ta``/``tb``/``tw``
    are the pair partition's scratch (as long); ``pmax``/``pmin`` are (num_leaves, total bins) slots as
    ``hist``. Node arrays as `lrank._kernels.trees._grow_tree`'s (``feature``/``jbin``/``left``/``right``
    filled with -1, the rest zeros). Returns ``(n_nodes, n_leaves)``.

    Each kernel it calls is called from one place (a node's pair histograms, its summary, its search), so
    the compiler inlines each once: a new node is built, summed up and searched as soon as it exists (in
    breadth-first growth too: a node's histograms do not change until it is split, so its search gives the
    same split whenever it runs)."""
    n = rows.size
    for i in range(n):
        rows[i] = i
        leaf_of[i] = 0
    F = off.size - 1
    TB = off[F]
    max_nodes = 2 * num_leaves - 1
    pstart = np.zeros(max_nodes, dtype=np.int64)
    pend = np.zeros(max_nodes, dtype=np.int64)
    ptot = np.zeros(max_nodes)
    built = np.zeros(max_nodes, dtype=np.bool_)
    bg = np.empty(max_nodes)  # each node's best split: gain, feature, bin (no np.full: one less compile)
    bf = np.empty(max_nodes, dtype=np.int64)
    bj = np.empty(max_nodes, dtype=np.int64)
    for c in range(max_nodes):
        bg[c] = -np.inf
        bf[c] = -1
        bj[c] = -1
    queue = np.zeros(max_nodes, dtype=np.int64)  # breadth first: the nodes in level order
    q0 = 0
    q1 = 1
    is_open = np.zeros(max_nodes, dtype=np.bool_)  # best first: the leaves
    is_open[0] = True
    u = np.zeros(n)  # each document's weight in its node's pairs (pmax + pmin = its histogram)
    for p in range(n_pairs):
        u[pa[p]] += pw[p]
    for p in range(n_pairs):
        u[pb[p]] += pw[p]
    # the root: gradient histogram; then, as for every new node, pair histograms, summary, search
    hist[0][:] = 0.0
    _histogram_global(gbin, vals, rows, 0, n, hist[0])
    end[0] = n
    pend[0] = n_pairs
    to_build = np.zeros(2, dtype=np.int64)
    n_build = 1
    sib_slot = -1  # >= 0: the larger child (in this slot) = parent - crossing - smaller child
    sib_node = 0
    cross_lo = 0
    cross_hi = 0
    new0 = 0  # the new nodes are new0 (the root) or new0, new0 + 1
    new1 = 1
    n_nodes = 1
    n_leaves = 1
    while True:
        for t in range(n_build):  # pair histograms of the nodes that will be searched (Example 3-4)
            c = to_build[t]
            s = slot[c]
            pmax[s][:TB] = 0.0
            _pair_histograms_global(gbin, pa, pb, pw, pstart[c], pend[c], pmax[s], pmin[s], 1.0, False)
            _pmin_from_weights(gbin, gbin, True, off, None, u, rows, start[c], end[c], pmax[s], pmin[s])
            built[c] = True
        if sib_slot >= 0:
            sm = to_build[0]
            _pair_histograms_global(gbin, pa, pb, pw, cross_lo, cross_hi, pmax[sib_slot], pmin[sib_slot],
                                    -1.0, False)
            for t in range(TB):
                pmax[sib_slot][t] -= pmax[slot[sm]][t]
            _pmin_from_weights(gbin, gbin, True, off, None, u, rows, start[sib_node], end[sib_node],
                               pmax[sib_slot], pmin[sib_slot])
            built[sib_node] = True
        for c in range(new0, new1):
            if built[c]:
                for p in range(pstart[c], pend[c]):  # in pair order
                    ptot[c] += pw[p]
            parent_score[c] = _node_summary(hist[slot[c]], off, RWSE, h_unit, True, ptot[c], min_hess, tot, c)
            if built[c]:  # the search of `_best_split` with pairs: every feature, ties to the first
                s = slot[c]
                for f in range(F):
                    g, jj = _feature_best(hist[s], off, f, RWSE, min_data, min_hess, True, pmax[s], pmin[s],
                                          ptot[c], tot[c], parent_score[c], h_unit)
                    if jj >= 0 and g > bg[c]:
                        bg[c] = g
                        bf[c] = f
                        bj[c] = jj
        if n_leaves >= num_leaves:
            break
        node = -1
        if breadth_first:
            while q0 < q1:
                c = queue[q0]
                q0 += 1
                if bf[c] >= 0 and bg[c] > 0.0:
                    node = c
                    break
        else:
            for nd in range(n_nodes):  # the largest positive gain; ties to the smaller node id
                if is_open[nd] and bf[nd] >= 0 and bg[nd] > 0.0 and (node < 0 or bg[nd] > bg[node]):
                    node = nd
        if node < 0:
            break
        is_open[node] = False
        f = bf[node]
        j = bj[node]
        # rows: stable partition, smaller child's histogram, the larger one's by subtraction
        lt = n_nodes
        rt = n_nodes + 1
        s0 = start[node]
        s1 = end[node]
        mid = _partition_rows(gbin, rows, s0, s1, f, off[f] + j, tmp, leaf_of, lt, rt)  # code <= j
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
        last = n_leaves + 1 == num_leaves  # its children are never searched: no pair histograms
        _child_histogram_global(gbin, vals, rows, start[small], end[small], hist[ss], hist[sl])
        # pairs: the children that will be searched get their pair histograms the cheaper way
        need_small = not last and end[small] - start[small] >= 2.0 * min_data
        need_large = not last and end[large] - start[large] >= 2.0 * min_data
        n_build = 0
        sib_slot = -1
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
            subtract = hi - pnew < pend[large] - pstart[large]
            if need_small or (subtract and need_large):
                to_build[n_build] = small
                n_build += 1
            if need_large:
                if subtract:  # the larger child = parent - crossing pairs - smaller child
                    sib_slot = sl
                    sib_node = large
                    cross_lo = pnew
                    cross_hi = hi
                else:
                    to_build[n_build] = large
                    n_build += 1
        feature[node] = f
        jbin[node] = j
        left[node] = lt
        right[node] = rt
        gain[node] = bg[node]
        is_open[lt] = True
        is_open[rt] = True
        queue[q1] = lt
        queue[q1 + 1] = rt
        q1 += 2
        new0 = lt
        new1 = rt + 1
        n_nodes += 2
        n_leaves += 1
    return n_nodes, n_leaves


def warmup() -> None:
    """Compile the OLE whole-tree kernel on a toy set (the types `lrank.weak.tree` passes)."""
    codes = np.array([[1, 2], [2, 1], [0, 1], [2, 2]], dtype=np.uint8)
    off = np.array([0, 3, 6], dtype=np.int64)
    gbin = (codes + off[:-1]).astype(np.uint16)
    n, L = codes.shape[0], 3
    vals = np.ones((n, 3))
    pa, pb, pw = np.array([0, 1], dtype=np.int64), np.array([2, 3], dtype=np.int64), np.ones(2)
    ints = [np.empty(n, dtype=np.int64) for _ in range(3)]  # rows, tmp, leaf_of
    scratch = [np.empty(2, dtype=np.int64), np.empty(2, dtype=np.int64), np.empty(2)]
    nodes = [np.full(2 * L - 1, -1, dtype=np.int64) for _ in range(4)]  # feature, bin, left, right
    idx = [np.zeros(2 * L - 1, dtype=np.int64) for _ in range(3)]  # start, end, slot
    _grow_ole_tree(gbin, vals, off, 0.0, L, 1.0, 0.0, False, np.zeros((L, 6, 3)), *ints, pa, pb, pw,
                   *scratch, 2, np.zeros((L, 6)), np.zeros((L, 6)), *nodes, np.zeros(2 * L - 1),
                   np.zeros((2 * L - 1, 4)), *idx, np.zeros(2 * L - 1))

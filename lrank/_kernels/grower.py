"""The tree engine's growth loop: one tree in one kernel call, for every criterion and layout.

`_grow` grows a tree from a root holding every document, splitting one node per pass until ``num_leaves``
leaves (or no positive gain), in one of three orders (``growth``): best first (the open leaf with the
largest positive gain; ties and near-ties, within the criterion's ``tol``, to the smaller node id),
breadth first (level order, the "width-first" growth of Xia, Zhai & Wang's tables: a queue) or depth
first (pre-order, a node's left subtree before its right one: a stack). A gain must exceed ``tol`` (0 but
for NDCGBoost's rule, ``lrank._kernels.splitting``). A feature constraint (BoostingTree's feature trees)
names the feature of each split in split order: in best-first growth the ``k``-th split is the best split
on feature ``constraint[k]`` over all open leaves; in breadth- and depth-first growth the next node in
their order that can split on it takes it (a node that cannot stays a leaf and the entry passes to the
next node). Node ids follow split order. With a row sample (bagging) the root holds the sample's rows only
and the other rows are sent down the finished tree by their codes (`_route_out_of_bag`).

Per split: the stable partition of the node's rows (`_partition_rows` over row-major codes, writing each
row's node, or `_partition_column` over the split feature's column), the smaller child's histogram and the
larger child's by subtraction in the parent's buffer (``lrank._kernels.histograms``; for the split that
completes the tree, whose children are never searched, feature 0's bins only: their totals; NDCGBoost's
classifier none), and with a pair list (OLE) the stable partition of the node's pairs (`_partition_pairs`:
left, right, crossing) and the children's pair histograms the cheaper way. Over the columns on one thread the
split that completes the tree is `_last_split_columns`: the partition's pass labels the two leaves and leaves
the row list unmerged, then the smaller child's feature 0 bins (the tree's other leaves are labelled at the
end, as always). A node's totals are its feature 0's bins summed left to right (the count ``round(H /
h_unit)`` with two channels; NDCGBoost's weight sum as NumPy sums the node's rows, its counts the number of
rows); its search is the criterion's scan (``lrank._kernels.splitting``).

What the tree reads is chosen by the arguments that are None or not: numba prunes the branches of a None
argument before compiling, so a fit compiles the code of its own layout and criterion only (issue 15.5:
every compiled function costs a first fit time).

* layout: ``codes`` (row-major, the partitions) with global bin indices ``gbin`` (the histograms read
  them, no offsets), or with the histograms over a subset of features ``feats`` (a constrained tree: its
  constraint's features and feature 0, NDCGBoost's without), or over every feature with offsets; or
  ``cols`` (column-major codes at scale and for constrained trees), with ``counts`` the root's count cache;
* criterion: ``scan`` (SE, RWSE: the fast scan's buffer), ``wse`` (WSE), ``pairs`` (OLE with LambdaMART's
  pair list) or ``cls`` (NDCGBoost's classifier, the document weights);
* ``cons`` the constraint (histogram positions per split), ``par`` the parallel twins' buffers.

Symmetric (oblivious) trees, CatBoost's default shape, have a loop of their own (`_grow_symmetric`, checked
by `grow_symmetric`): per level the leaves' histograms (``_histogram_leaves``: the smaller child of each
parent built, its sibling by subtraction), one split for every leaf of the level (``_scan_cosine``:
CatBoost's Cosine score, optionally with its split-score noise), every row moved to leaf ``2 l + [code >
j]``; both have parallel twins over blocks of features (the same bits); the node record is made in
``lrank.trees.grower`` (heap order).

Every path sums each histogram bin in row order and each pair histogram bin in pair order, so a tree has
the same bits whatever its layout and number of threads (``tests/reference/tree_paths.py`` grows the
node-by-node reference; tested).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import njit
from .histograms import (
    CHUNK_ROWS,
    _column_direct,
    _columns,
    _feature0_child,
    _histogram,
    _histogram_features,
    _histogram_global,
    _histogram_leaves,
    _histogram_leaves_parallel,
    _histogram_parallel,
    _pair_histograms,
    _pair_histograms_global,
    _pair_histograms_parallel,
    _pmin_from_weights,
    _root_histogram_columns,
    _row,
    _subtract,
    _symmetric_root,
)
from .splitting import (
    CLASSIFY,
    RWSE,
    SE,
    WSE,
    _node_score,
    _pairwise_sum,
    _scan_classify,
    _scan_cosine,
    _scan_cosine_parallel,
    _scan_fast,
    _scan_ole,
    _scan_parallel,
    _scan_wse,
)

# the node record: int64 columns of ``ni`` and float64 columns of ``nf`` (one row per node)
(FEATURE, BIN, LEFT, RIGHT, START, END, SLOT, BEST_F, BEST_J, OPEN, BUILT, PAIR_START, PAIR_END,
 QUEUE) = range(14)
GAIN, SCORE, SUM_G, SUM_H, COUNT, SUM_Q, PAIR_W, BEST_GAIN, VALUE = range(9)
NI, NF = 14, 9

#: blocks of row positions `_label_leaves` hands to the threads
LABEL_BLOCKS = 8


# ------------------------------------------------------------------------------------- partitions
@njit(inline="always")
def _split_pass(col, rows, start, end, j, tmp, leaf_of, left_id, right_id):
    """The partitions' pass over ``rows[start:end]``: the rows with ``col[row] <= j`` to
    ``rows[start:start + nl]`` and the others to ``tmp[:nr]``, each in order, and with ``leaf_of`` (not
    None) each row's node. Without a branch on the side (a coin flip for the branch predictor): each row is
    written to the next left place and to the next right place and only its side's count moves on (a left
    place never passes the row being read). Returns ``(nl, nr)``."""
    nl = 0
    nr = 0
    for k in range(start, end):
        i = rows[k]
        s = np.int64(col[i] <= j)
        rows[start + nl] = i
        tmp[nr] = i
        if leaf_of is not None:
            leaf_of[i] = right_id + s * (left_id - right_id)
        nl += s
        nr += 1 - s
    return nl, nr


@njit(cache=True)
def _partition_rows(codes, rows, start, end, f, j, tmp, leaf_of, left_id, right_id):
    """Stable partition of ``rows[start:end]`` into ``code <= j`` then ``code > j`` (`_split_pass` over
    feature ``f``'s codes, the right side then moved back from ``tmp``), each row's node in ``leaf_of``;
    returns the boundary. 2.5x faster at 200k rows than with a branch on the side."""
    nl, nr = _split_pass(codes[:, f], rows, start, end, j, tmp, leaf_of, left_id, right_id)
    for k in range(nr):
        rows[start + nl + k] = tmp[k]
    return start + nl


@njit(cache=True)
def _partition_column(col, rows, start, end, j, tmp):
    """`_partition_rows` over the split feature's column ``col`` (``codes_t[f]``), without ``leaf_of``
    (`_label_leaves` labels the leaves once). 0.66 ms for 200,000 rows against 1.67 ms with a branch on
    the side (and 5.1 ms for 1M rows on two threads with a counting pass: one thread partitions)."""
    nl, nr = _split_pass(col, rows, start, end, j, tmp, None, 0, 0)
    for k in range(nr):
        rows[start + nl + k] = tmp[k]
    return start + nl


@njit(inline="always")
def _last_split_columns(col, col0, j, grad, hess, h_unit, rows, start, end, tmp, leaf_of, left_id, right_id,
                        out, nb0):
    """The split that completes a tree over the column-major codes (its children are never searched: they
    need only feature 0's bins, their totals). The partitions' pass (`_split_pass`), writing each row's leaf
    (``code <= j``: ``left_id``), but without moving the right side's rows back from
    ``tmp`` (no later split reads the row list; the caller labels no leaf of these two); then the smaller
    child's rows (the left one on a tie), from ``rows[start:]`` or ``tmp``, added into feature 0's ``nb0``
    bins of ``out`` (zeroed here; ``col0`` is feature 0's column), each bin in row order (the same bits).
    Returns the boundary ``start + (rows going left)``. Over the 135 features of BoostingTree stumps on
    10,000 rows, 0.021 ms against 0.029 ms for the partition, the smaller child's histogram and the
    labelling one after the other."""
    nl, nr = _split_pass(col, rows, start, end, j, tmp, leaf_of, left_id, right_id)
    C = out.shape[1]
    for b in range(nb0):
        for c in range(C):
            out[b, c] = 0.0
    flat = out.reshape(out.size)
    if nl <= nr:
        _column_direct(col0, grad, hess, h_unit, rows, start, start + nl, 0, flat, C)
    else:
        _column_direct(col0, grad, hess, h_unit, tmp, 0, nr, 0, flat, C)
    return start + nl


@njit(cache=True)
def _partition_pairs(pa, pb, pw, start, end, leaf_of, left_id, right_id, ta, tb, tw):
    """Stable partition of the pairs ``start:end`` (all three arrays alike): inside the left child, inside
    the right child, then the crossing ones; ``ta``/``tb``/``tw`` are scratch of the slice's length.
    Returns ``(mid, new_end)``: left ``start:mid``, right ``mid:new_end``, crossing ``new_end:end``."""
    nl = 0
    nr = 0
    nc = 0
    m = end - start
    us = np.uint64(start)  # unsigned indices: no negative-index wrap-around arithmetic (~1.5x faster)
    um = np.uint64(m)
    for kk in range(m):
        k = us + np.uint64(kk)
        a = pa[k]
        b = pb[k]
        wt = pw[k]
        la = leaf_of[np.uint64(a)]
        if la != leaf_of[np.uint64(b)]:
            nc += 1  # crossing pairs fill the scratch from the back
            j = um - np.uint64(nc)
            ta[j] = a
            tb[j] = b
            tw[j] = wt
        elif la == left_id:
            j = us + np.uint64(nl)
            pa[j] = a
            pb[j] = b
            pw[j] = wt
            nl += 1
        elif la == right_id:
            j = np.uint64(nr)
            ta[j] = a
            tb[j] = b
            tw[j] = wt
            nr += 1
    for k in range(nr):
        pa[start + nl + k] = ta[k]
        pb[start + nl + k] = tb[k]
        pw[start + nl + k] = tw[k]
    for k in range(nc):
        pa[start + nl + nr + k] = ta[m - 1 - k]
        pb[start + nl + nr + k] = tb[m - 1 - k]
        pw[start + nl + nr + k] = tw[m - 1 - k]
    return start + nl, start + nl + nr


@njit(cache=True, parallel=True)
def _label_leaves(rows, ni, n_nodes, leaf_of):
    """``leaf_of[i]`` = the leaf holding row ``i``: each leaf ``nd`` owns ``rows[start:end]`` (one pass over
    the rows at the end of a tree, instead of a write per row in every partition). The positions are cut
    into `LABEL_BLOCKS` equal blocks on the threads: one parallel launch per tree."""
    n = rows.size
    for blk in prange(LABEL_BLOCKS):
        k0 = blk * n // LABEL_BLOCKS
        k1 = (blk + 1) * n // LABEL_BLOCKS
        for nd in range(n_nodes):
            if ni[nd, LEFT] < 0:
                lo = ni[nd, START] if ni[nd, START] > k0 else k0  # (selects: no max() / min() to compile)
                hi = ni[nd, END] if ni[nd, END] < k1 else k1
                for k in range(lo, hi):
                    leaf_of[rows[k]] = nd


@njit(inline="always")
def _descend(codes, codes_t, ni, i):
    """The leaf the finished tree sends row ``i`` to by its codes (row-major ``codes`` or column-major
    ``codes_t``, the other None): ``code <= bin`` to the left, as the partitions sent the in-bag rows."""
    nd = 0
    while ni[nd, LEFT] >= 0:
        f = ni[nd, FEATURE]
        go = False
        if codes is not None:
            go = codes[i, f] <= ni[nd, BIN]
        if codes_t is not None:
            go = codes_t[f, i] <= ni[nd, BIN]
        nd = ni[nd, LEFT] if go else ni[nd, RIGHT]
    return nd


@njit(inline="always")
def _route_out_of_bag(codes, codes_t, ni, leaf_of):
    """Every row outside the sample (``leaf_of`` -1: bagging) down the finished tree (`_descend`): its leaf
    in ``leaf_of``."""
    for i in range(leaf_of.size):
        if leaf_of[i] < 0:
            leaf_of[i] = _descend(codes, codes_t, ni, i)


@njit(cache=True, parallel=True)
def _route_out_of_bag_threads(codes, codes_t, ni, leaf_of):
    """`_route_out_of_bag` on the threads (a tree grown with ``par``): the rows cut into `LABEL_BLOCKS`
    equal blocks, one parallel launch per tree. Each row's leaf depends on that row only: the same
    ``leaf_of`` as the serial pass."""
    n = leaf_of.size
    for blk in prange(LABEL_BLOCKS):
        for i in range(blk * n // LABEL_BLOCKS, (blk + 1) * n // LABEL_BLOCKS):
            if leaf_of[i] < 0:
                leaf_of[i] = _descend(codes, codes_t, ni, i)


@njit(cache=True, parallel=True)
def _identity_rows(rows):
    """``rows[i] = i`` on the threads (the root's row list at scale)."""
    for i in prange(rows.size):
        rows[i] = i


# ------------------------------------------------------------------------------ layout dispatch
@njit(inline="always")
def _build(codes, gbin, feats, rowoff, vals, rows, lo, hi, off, out, par):
    """Add the rows ``lo:hi`` into ``out`` in the row-major layout the arguments name: global bin indices
    ``gbin``, the subset of features ``feats``, or every feature with the offsets ``rowoff`` (exactly one
    of the three is not None)."""
    if gbin is not None:
        if par is not None and (hi - lo) * gbin.shape[1] >= par[1]:
            _histogram_parallel(gbin, vals, rows, lo, hi, par[3], out, par[0])
        else:
            _histogram_global(gbin, vals, rows, lo, hi, out)
    if feats is not None:
        _histogram_features(codes, vals, rows, lo, hi, feats, off, out)
    if rowoff is not None:
        if par is not None and (hi - lo) * codes.shape[1] >= par[1]:
            _histogram_parallel(codes, vals, rows, lo, hi, rowoff, out, par[0])
        else:
            _histogram(codes, vals, rows, lo, hi, rowoff, out)


@njit(inline="always")
def _child_histograms(codes, gbin, cols, feats, rowoff, vals, h_unit, rows, lo, hi, off, TB, out, parent,
                      last, par):
    """The smaller child's histogram (its rows ``lo:hi``) into ``out`` and the larger child's by subtraction
    in ``parent``; the first histogram feature's bins only when ``last``."""
    if cols is not None:
        nfeat = 1 if last else cols[1].size
        nb = off[nfeat]
        out[:nb] = 0.0
        _columns(cols[0], cols[1], cols[2], cols[3], h_unit, rows, lo, hi, off, out, cols[4], nfeat, par)
        _subtract(parent, out, nb)
    if codes is not None:
        if last:
            f0 = 0
            if feats is not None:  # a feature subset: its first feature is histogram position 0
                f0 = feats[0]
            _feature0_child(codes, vals, rows, lo, hi, off, out, parent, f0)
        else:
            out[:TB] = 0.0
            _build(codes, gbin, feats, rowoff, vals, rows, lo, hi, off, out, par)
            _subtract(parent, out, TB)


@njit(cache=True)
def _build_pairs(codes, gbin, feats, rowoff, off, TB, rows, ni, nf, c, s, pairs, par):
    """Node ``c``'s pair histograms from its own pairs into slot ``s`` (``pmax`` by larger code, ``pmin =
    U - pmax``) and its pair weight, summed in pair order."""
    pa, pb, pw, pmax, cbins, gbins = pairs[0], pairs[1], pairs[2], pairs[7], pairs[9], pairs[10]
    lo = ni[c, PAIR_START]
    hi = ni[c, PAIR_END]
    pmax[s][:TB] = 0.0
    if gbin is not None:
        _pair_histograms_global(gbin, pa, pb, pw, lo, hi, pmax[s], None, 1.0, gbins)
    if feats is not None:
        _pair_histograms(codes, pa, pb, pw, lo, hi, feats, off, pmax[s], None, 1.0, cbins)
    if rowoff is not None:
        if par is not None and (hi - lo) * codes.shape[1] >= par[1]:
            _pair_histograms_parallel(codes, pa, pb, pw, lo, hi, rowoff, pmax[s], None, par[0], par[7])
        else:
            _pair_histograms(codes, pa, pb, pw, lo, hi, None, rowoff, pmax[s], None, 1.0, cbins)
    _pair_total(codes, gbin, feats, rowoff, off, rows, ni, nf, c, s, pairs)


@njit(cache=True)
def _pair_total(codes, gbin, feats, rowoff, off, rows, ni, nf, c, s, pairs):
    """Node ``c``'s ``pmin = U - pmax`` in slot ``s`` from its documents, and its pair weight."""
    pw, u, pmax, pmin = pairs[2], pairs[6], pairs[7], pairs[8]
    _pmin_from_weights(codes, gbin, feats, rowoff, off, u, rows, ni[c, START], ni[c, END], pmax[s], pmin[s])
    w = 0.0
    for p in range(ni[c, PAIR_START], ni[c, PAIR_END]):  # in pair order
        w += pw[p]
    nf[c, PAIR_W] = w
    ni[c, BUILT] = 1


@njit(cache=True)
def _split_pairs(codes, gbin, feats, rowoff, off, TB, rows, leaf_of, ni, nf, node, lt, rt, small, large,
                 need_small, need_large, pairs, par):
    """The children's pairs after a split (documents already moved in ``leaf_of``): the node's pairs
    partitioned (left, right, crossing; the crossing pairs leave both documents' ``u``), then the pair
    histograms of the children that will be searched: the larger child's as its parent's (in its slot)
    minus the crossing pairs minus the smaller child's when there are fewer crossing pairs than the larger
    child's, else directly (the smaller child's is then also built when the subtraction needs it)."""
    pa, pb, pw, ta, tb, tw, u, pmax = pairs[:8]
    cbins, gbins = pairs[9], pairs[10]
    lo = ni[node, PAIR_START]
    hi = ni[node, PAIR_END]
    pmid, pnew = _partition_pairs(pa, pb, pw, lo, hi, leaf_of, lt, rt, ta, tb, tw)
    ni[lt, PAIR_START] = lo
    ni[lt, PAIR_END] = pmid
    ni[rt, PAIR_START] = pmid
    ni[rt, PAIR_END] = pnew
    for p in range(pnew, hi):  # the crossing pairs leave both documents' nodes
        u[pa[p]] -= pw[p]
    for p in range(pnew, hi):
        u[pb[p]] -= pw[p]
    subtract = hi - pnew < ni[large, PAIR_END] - ni[large, PAIR_START]
    ss = ni[small, SLOT]
    sl = ni[large, SLOT]
    if need_small or (subtract and need_large):
        _build_pairs(codes, gbin, feats, rowoff, off, TB, rows, ni, nf, small, ss, pairs, par)
    if need_large:
        if subtract:  # parent - crossing pairs - smaller child
            if gbin is not None:
                _pair_histograms_global(gbin, pa, pb, pw, pnew, hi, pmax[sl], None, -1.0, gbins)
            if feats is not None:
                _pair_histograms(codes, pa, pb, pw, pnew, hi, feats, off, pmax[sl], None, -1.0, cbins)
            if rowoff is not None:
                _pair_histograms(codes, pa, pb, pw, pnew, hi, None, rowoff, pmax[sl], None, -1.0, cbins)
            for t in range(TB):
                pmax[sl][t] -= pmax[ss][t]
            _pair_total(codes, gbin, feats, rowoff, off, rows, ni, nf, large, sl, pairs)
        else:
            _build_pairs(codes, gbin, feats, rowoff, off, TB, rows, ni, nf, large, sl, pairs, par)


@njit(inline="always")
def _summarize(hist, off, crit, h_unit, min_hess, ni, nf, c, rows, cls, lam):
    """Node ``c``'s totals (G, H, N[, Q]) from feature 0's bins of its histogram ``hist``, left to right
    (the count ``round(H / h_unit)`` with two channels), and its own score. With ``cls`` (NDCGBoost) no
    histogram is read: ``G`` is the node's weight sum as NumPy sums its rows, ``H`` and ``N`` its number of
    rows (what the ones and count channels sum to, exactly) and ``Q`` 0, so the tree's last split needs no
    child histogram and a constrained tree no feature 0."""
    if cls is not None:  # NDCGBoost: S as NumPy sums it; H and N exact counts (Q stays 0)
        cnt = ni[c, END] - ni[c, START]
        nf[c, SUM_G] = _pairwise_sum(cls, rows, ni[c, START], cnt)
        nf[c, SUM_H] = float(cnt)
        nf[c, COUNT] = float(cnt)
    else:
        C = hist.shape[1]
        for ch in range(C):
            acc = 0.0
            for b in range(off[0], off[1]):
                acc += hist[b, ch]
            nf[c, SUM_G + ch] = acc
        if C == 2:
            nf[c, COUNT] = np.floor(nf[c, SUM_H] / h_unit + 0.5)
    nf[c, SCORE] = _node_score(crit, nf[c, SUM_G], nf[c, SUM_H], nf[c, COUNT], nf[c, SUM_Q], nf[c, PAIR_W],
                               min_hess, lam)


@njit(inline="always")
def _search(hist, off, fsel, crit, min_data, min_hess, h_unit, nf, c, s, scan, wse, pairs, cls, par, tol,
            lam):
    """The best split ``(gain, position, j)`` of node ``c`` (its histograms in slot ``s``) over the
    histogram positions ``fsel``, by the criterion's scan (the parallel twin with ``par`` on a large
    histogram)."""
    G = nf[c, SUM_G]
    H = nf[c, SUM_H]
    N = nf[c, COUNT]
    score = nf[c, SCORE]
    big = False
    if par is not None:
        big = off[off.size - 1] >= par[2]
    if scan is not None:
        if big:
            return _scan_parallel(hist, off, fsel, crit, min_data, min_hess, G, H, N, 0.0, score, h_unit,
                                  None, None, 0.0, par[4], par[5], par[6], lam)
        return _scan_fast(hist, off, fsel, crit, min_data, min_hess, G, H, N, score, h_unit, scan, lam)
    if wse is not None:
        if big:
            return _scan_parallel(hist, off, fsel, WSE, min_data, min_hess, G, H, N, nf[c, SUM_Q], score,
                                  h_unit, None, None, 0.0, par[4], par[5], par[6], 0.0)  # no leaf penalty
        return _scan_wse(hist, off, fsel, min_data, min_hess, G, H, N, nf[c, SUM_Q], score)
    if pairs is not None:
        pmax = pairs[7]
        pmin = pairs[8]
        if big:
            return _scan_parallel(hist, off, fsel, RWSE, min_data, min_hess, G, H, N, 0.0, score, h_unit,
                                  pmax[s], pmin[s], nf[c, PAIR_W], par[4], par[5], par[6], 0.0)
        return _scan_ole(hist, off, fsel, min_data, min_hess, G, H, N, pmax[s], pmin[s], nf[c, PAIR_W], score,
                         h_unit)
    if cls is not None:
        return _scan_classify(hist, off, fsel, G, N, tol)
    return -np.inf, -1, -1


# ------------------------------------------------------------------------------------ the loop
@njit(cache=True)
def _grow(spec, ni, nf, work, fmap, codes, gbin, cols, counts, feats, rowoff, vals, scan, wse, pairs, cls,
          cons, par, rootc, sample):
    """Grow one tree (module docstring); returns ``(n_nodes, n_leaves)``.

    ``spec`` is ``(crit, h_unit, num_leaves, min_data, min_hess, growth, tol, lam)`` (``growth``: 0 best
    first, 1 breadth first, 2 depth first; ``tol`` the criterion's gain tolerance; ``lam`` the L2 leaf
    penalty, RWSE only: ``G^2 / (H + lam)`` per side, leaf values ``-G / (H + lam)``); ``ni``/``nf`` the node
    record (``(2 num_leaves - 1, NI)`` int64 and ``(., NF)`` float64, any contents: set here); ``work``
    ``(off, hist, rows, tmp, leaf_of, positions)``: the histogram offsets of the ``m`` histogram features
    and their positions ``arange(m)``, the histogram slots ``(num_leaves, >= off[m], C)``, the row list and
    its partition scratch (int64; int32 with ``cols``) and each row's leaf; ``fmap`` maps a histogram
    position to its feature. ``cols = (codes_t, fmap, grad, hess, og)``; ``pairs = (pa, pb, pw, ta, tb,
    tw, u, pmax, pmin, cbins, gbins)`` with the pair count in ``ni[0, PAIR_END]`` on entry; ``par = (nblk,
    min_work, min_bins, zero_off, gains, js, bufs, pair_bins)``. ``sample`` (bagging; int64, increasing,
    distinct): the in-bag rows, the root's row list (``rows`` is then as long as the sample): histograms,
    totals, counts, split search and leaf values (Eq. 11) see those rows only; ``leaf_of`` (every row) gives
    the others the leaf the finished tree sends their codes to (`_route_out_of_bag`). Workspaces may hold
    anything."""
    crit, h_unit, L, min_data, min_hess, growth, tol, lam = spec
    off, hist, rows, tmp, leaf_of, positions = work
    n = rows.size
    m = positions.size
    TB = off[m]
    max_nodes = 2 * L - 1
    n_pairs = ni[0, PAIR_END] if pairs is not None else 0
    for k in range(max_nodes):
        for c in range(NI):
            ni[k, c] = 0
        for c in range(NF):
            nf[k, c] = 0.0
        ni[k, FEATURE] = -1
        ni[k, BIN] = -1
        ni[k, LEFT] = -1
        ni[k, RIGHT] = -1
        ni[k, BEST_F] = -1
        ni[k, BEST_J] = -1
        nf[k, BEST_GAIN] = -np.inf
    # the root: every row (or the sample's), its histogram (and pair histograms), totals and score
    if sample is not None:
        for i in range(leaf_of.size):  # out of bag until routed
            leaf_of[i] = -1
    if cols is not None:
        if sample is not None:
            for k in range(n):
                rows[k] = sample[k]
            _root_histogram_columns(cols[0], cols[1], cols[2], cols[3], h_unit, rows, off, hist[0], cols[4],
                                    counts, par, rootc)
        if sample is None:  # every row in order: the histogram reads no row list (the partition does)
            if par is not None:
                _identity_rows(rows)
            else:
                for i in range(n):
                    rows[i] = i
            _root_histogram_columns(cols[0], cols[1], cols[2], cols[3], h_unit, None, off, hist[0], cols[4],
                                    counts, par, rootc)
    if codes is not None:
        if sample is not None:
            for k in range(n):
                rows[k] = sample[k]
                leaf_of[sample[k]] = 0
        if sample is None:
            for i in range(n):
                rows[i] = i
                leaf_of[i] = 0
        hist[0][:TB] = 0.0
        _build(codes, gbin, feats, rowoff, vals, rows, 0, n, off, hist[0], par)
    ni[0, END] = n
    ni[0, OPEN] = 1
    if pairs is not None:
        pa, pb, pw, u = pairs[0], pairs[1], pairs[2], pairs[6]
        for i in range(n):  # each document's weight in its node's pairs (pmax + pmin = its histogram)
            u[i] = 0.0
        for p in range(n_pairs):
            u[pa[p]] += pw[p]
        for p in range(n_pairs):
            u[pb[p]] += pw[p]
        ni[0, PAIR_END] = n_pairs
        _build_pairs(codes, gbin, feats, rowoff, off, TB, rows, ni, nf, 0, 0, pairs, par)
    _summarize(hist[0], off, crit, h_unit, min_hess, ni, nf, 0, rows, cls, lam)
    n_nodes = 1
    n_leaves = 1
    n_splits = 0
    fused = False  # the last split made by `_last_split_columns`
    q0 = 0  # breadth first: the level-order queue ni[q0:q1, QUEUE]; depth first: the stack ni[:q1, QUEUE]
    q1 = 1
    ni[0, QUEUE] = 0
    while n_leaves < L:  # one split per pass
        node = -1
        fsel = positions if cons is None else cons[n_splits:n_splits + 1]
        if growth != 0:
            while q0 < q1:
                if growth == 1:
                    c = ni[q0, QUEUE]
                    q0 += 1
                else:
                    q1 -= 1
                    c = ni[q1, QUEUE]
                if ni[c, END] - ni[c, START] < 2.0 * min_data or (pairs is not None and ni[c, BUILT] == 0):
                    continue  # no split leaves min_data documents on both sides (or never searched: OLE)
                s = ni[c, SLOT]
                g, f, j = _search(hist[s], off, fsel, crit, min_data, min_hess, h_unit, nf, c, s, scan, wse,
                                  pairs, cls, par, tol, lam)
                if f >= 0 and g > tol:
                    nf[c, BEST_GAIN] = g
                    ni[c, BEST_F] = f
                    ni[c, BEST_J] = j
                    node = c
                    break
        else:
            for c in range(n_nodes):  # search the open leaves not searched yet (constrained: every one)
                if ni[c, OPEN] == 0 or (cons is None and ni[c, OPEN] == 2):
                    continue
                ni[c, OPEN] = 2
                if ni[c, END] - ni[c, START] < 2.0 * min_data or (pairs is not None and ni[c, BUILT] == 0):
                    ni[c, BEST_F] = -1
                    continue
                s = ni[c, SLOT]
                g, f, j = _search(hist[s], off, fsel, crit, min_data, min_hess, h_unit, nf, c, s, scan, wse,
                                  pairs, cls, par, tol, lam)
                nf[c, BEST_GAIN] = g
                ni[c, BEST_F] = f
                ni[c, BEST_J] = j
            for c in range(n_nodes):  # the largest gain above tol; (near-)ties to the smaller node id
                if ni[c, OPEN] != 0 and ni[c, BEST_F] >= 0 and nf[c, BEST_GAIN] > tol and \
                        (node < 0 or nf[c, BEST_GAIN] > nf[node, BEST_GAIN] + tol):
                    node = c
        if node < 0:
            break
        # split node: rows (stable partition), histograms (the smaller child's, the larger by subtraction)
        f = fmap[ni[node, BEST_F]]
        j = ni[node, BEST_J]
        lt = n_nodes
        rt = n_nodes + 1
        s0 = ni[node, START]
        s1 = ni[node, END]
        mid = s0
        last = n_leaves + 1 == L  # its children are never searched
        # the last split over the columns on one thread: the partition's pass labels the two leaves, the row
        # list is not merged back (`_last_split_columns`)
        fused = False
        if cols is not None:
            if last and par is None and cls is None:
                fused = True
                mid = _last_split_columns(cols[0][f], cols[0][cols[1][0]], j, cols[2], cols[3], h_unit, rows,
                                          s0, s1, tmp, leaf_of, lt, rt, hist[n_leaves], off[1])
            else:
                mid = _partition_column(cols[0][f], rows, s0, s1, j, tmp)
        if codes is not None:
            mid = _partition_rows(codes, rows, s0, s1, f, j, tmp, leaf_of, lt, rt)
        ni[lt, START] = s0
        ni[lt, END] = mid
        ni[rt, START] = mid
        ni[rt, END] = s1
        if mid - s0 <= s1 - mid:
            small, large = lt, rt
        else:
            small, large = rt, lt
        ni[large, SLOT] = ni[node, SLOT]
        ni[small, SLOT] = n_leaves  # slots 0..n_leaves-1 are in use
        if fused:  # the smaller child's feature 0 bins made (in its slot), the larger one's by subtraction
            _subtract(hist[ni[node, SLOT]], hist[n_leaves], off[1])
        else:
            if not (last and cls is not None):  # NDCGBoost's totals need no histogram (`_summarize`)
                _child_histograms(codes, gbin, cols, feats, rowoff, vals, h_unit, rows, ni[small, START],
                                  ni[small, END], off, TB, hist[n_leaves], hist[ni[node, SLOT]], last, par)
        if pairs is not None:  # the children that will be searched get their pair histograms
            need_small = not last and ni[small, END] - ni[small, START] >= 2.0 * min_data
            need_large = not last and ni[large, END] - ni[large, START] >= 2.0 * min_data
            if need_small or need_large:
                _split_pairs(codes, gbin, feats, rowoff, off, TB, rows, leaf_of, ni, nf, node, lt, rt, small,
                             large, need_small, need_large, pairs, par)
        ni[node, FEATURE] = f
        ni[node, BIN] = j
        ni[node, LEFT] = lt
        ni[node, RIGHT] = rt
        nf[node, GAIN] = nf[node, BEST_GAIN]
        ni[node, OPEN] = 0
        ni[lt, OPEN] = 1
        ni[rt, OPEN] = 1
        for c in (lt, rt):
            _summarize(hist[ni[c, SLOT]], off, crit, h_unit, min_hess, ni, nf, c, rows, cls, lam)
        if growth == 2:  # the stack: the left child on top
            ni[q1, QUEUE] = rt
            ni[q1 + 1, QUEUE] = lt
        else:
            ni[q1, QUEUE] = lt
            ni[q1 + 1, QUEUE] = rt
        q1 += 2
        n_nodes += 2
        n_leaves += 1
        n_splits += 1
    if cols is not None:
        if par is not None:
            _label_leaves(rows, ni, n_nodes, leaf_of)
        else:
            for nd in range(n_nodes):
                if ni[nd, LEFT] < 0 and not (fused and nd >= n_nodes - 2):  # (fused: labelled there)
                    for k in range(ni[nd, START], ni[nd, END]):
                        leaf_of[rows[k]] = nd
    if sample is not None:
        if par is None:
            if cols is not None:
                _route_out_of_bag(None, cols[0], ni, leaf_of)
            else:
                _route_out_of_bag(codes, None, ni, leaf_of)
        else:
            if cols is not None:
                _route_out_of_bag_threads(None, cols[0], ni, leaf_of)
            else:
                _route_out_of_bag_threads(codes, None, ni, leaf_of)
    for c in range(n_nodes):  # the leaves' outputs: one Newton step -G / H (Eq. 11), or NDCGBoost's [S > 0]
        v = 0.0
        if ni[c, LEFT] < 0:
            if cls is not None:
                v = 1.0 if nf[c, SUM_G] > 0.0 else 0.0
            if cls is None and nf[c, SUM_H] > 0.0:
                v = -nf[c, SUM_G] / (nf[c, SUM_H] + lam)  # Eq. 11; lam: the L2 leaf penalty (0: Eq. 11)
        nf[c, VALUE] = v
    return n_nodes, n_leaves


# ------------------------------------------------------------------------ symmetric (oblivious) trees
@njit(cache=True)
def _grow_symmetric(codes_t, feats, off, grad, hs, hess, rows, leaf_of, hist, tot, acc, lev, og, scores,
                    depth, min_hess, lam, sigma, noise, split, score, leaf_sums, par):
    """Grow a symmetric tree of at most ``depth`` levels (`grow_symmetric`): per level the leaves'
    histograms over the rows ``rows`` (None: every row in order; `_histogram_leaves` over the column-major
    codes ``codes_t``, its workspace ``lev``: per parent the smaller child's built and its sibling's by
    subtraction, in place over the parents' in ``hist``; the root level by `_symmetric_root`, its chunks'
    values gathered into ``og``), the one split of the level
    (`_scan_cosine`: feature position ``split[d, 0]``, bin ``split[d, 1]``, its score ``score[d]``), then
    every row (in the sample or not) moves to leaf ``2 l + [code > j]``. With ``par`` the histograms and
    the scan run their parallel twins on ``acc.shape[0]`` blocks of features (``og.shape[0]`` for the
    root's; the same bits). Stops early when no feature has two bins. Then ``leaf_sums[l]`` = (sum grad,
    sum hess, count) over the rows of each leaf (in row order) and ``leaf_of`` the node index of each row's
    leaf in heap order (``2^D - 1 + l``). Returns ``D``, the levels grown."""
    N = leaf_of.size
    for i in range(N):
        leaf_of[i] = 0
    done = 0
    for d in range(depth):
        L = 1 << d
        if d == 0:  # the root by the column kernels (no row list to read over every row; the same bits)
            _symmetric_root(codes_t, feats, off, grad, hs, rows, hist[0], tot, og, par)
        elif par:
            _histogram_leaves_parallel(codes_t, feats, off, grad, hs, rows, leaf_of, L, hist, tot, lev,
                                       acc.shape[0])
        else:
            _histogram_leaves(codes_t, feats, off, grad, hs, rows, leaf_of, L, hist, tot, lev)
        if par:
            best, t, j = _scan_cosine_parallel(hist, off, L, tot, acc, min_hess, lam, sigma, noise, d, scores)
        else:
            best, t, j = _scan_cosine(hist, off, L, tot, acc[0], min_hess, lam, sigma, noise, d, scores)
        if t < 0:
            break
        split[d, 0] = t
        split[d, 1] = j
        score[d] = best
        col = codes_t[feats[t]]
        for i in range(N):
            leaf_of[i] = 2 * leaf_of[i] + (1 if col[i] > j else 0)  # oblivious: one test per level
        done += 1
    Lf = 1 << done
    for lf in range(Lf):
        leaf_sums[lf, 0] = 0.0
        leaf_sums[lf, 1] = 0.0
        leaf_sums[lf, 2] = 0.0
    n = N if rows is None else rows.size
    for k in range(n):
        i = _row(rows, k)
        lf = leaf_of[i]
        leaf_sums[lf, 0] += grad[i]
        leaf_sums[lf, 1] += hess[i]
        leaf_sums[lf, 2] += 1.0
    base = Lf - 1
    for i in range(N):
        leaf_of[i] += base
    return done


def grow_symmetric(codes_t: np.ndarray, feats: np.ndarray, off: np.ndarray, grad: np.ndarray, hs: np.ndarray,
                   hess: np.ndarray, rows: np.ndarray | None, leaf_of: np.ndarray, work: tuple, depth: int, *,
                   min_hess: float, reg_lambda: float = 0.0, sigma: float = 0.0,
                   noise: np.ndarray | None = None,
                   parallel: bool = False) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """Grow one symmetric (oblivious) tree with `_grow_symmetric` after checking its inputs.

    Parameters
    ----------
    codes_t : uint8/uint16 array (F, N)
        Column-major bin codes of every row (``codes.T``, C-contiguous).
    feats, off : int64 arrays (m,), (m + 1,)
        The candidate features (their rows of ``codes_t``) and their histogram offsets (feature
        ``feats[t]`` owns the histogram rows ``off[t]:off[t+1]``, its number of bins).
    grad, hs, hess : float64 arrays (N,)
        Gradient, the hessian the split score sums (the hessian, or ones for SE) and the hessian of the
        leaf sums.
    rows : int64 array (n,) or None
        The rows the tree is grown on (increasing: a sample), or None for every row (no row list is read:
        the bits of ``arange(N)``, faster).
    leaf_of : int64 array (N,)
        Filled with each row's leaf node (heap order).
    work : (hist, tot, acc, scores, brows, bvals, count, bhist, btot, og)
        Workspaces, any contents: hist (>= 2^(depth-1), >= off[-1], 2) and tot (>= 2^(depth-1), 2), the
        level's histograms and totals, each level's overwriting its parents' in place; acc (blocks,
        >= 2^(depth-1), 2), the scan's left sums, one per block of features (``blocks >= 1``; one block
        used without ``parallel``); scores (>= off[-1]) float64, each candidate's score; the level's
        built rows: brows (2, >= n) int64 (row, parent), bvals (>= n, 2) float64, count (>= 2^depth)
        int64; the built children's histograms bhist (>= P, >= off[-1], 2) and totals btot (>= P, 2),
        ``P = max(1, 2^(depth-2))``; og (blocks, >= min(n, CHUNK_ROWS), 2) float64, the root's chunk of
        gathered values per block (``og.shape[0]`` blocks with ``parallel``).
    depth : int
        Levels to grow (>= 1).
    min_hess, reg_lambda : float
        A side with ``H <= min_hess`` adds nothing to a score; ``reg_lambda`` the L2 leaf penalty.
    sigma, noise : float, float64 array (depth, >= off[-1]) or None
        The score noise: ``sigma noise[d, off[t] + j]`` added to candidate ``(t, j)`` of level ``d``.
    parallel : bool
        Run the parallel twins of the histograms and the scan (``prange`` over ``acc.shape[0]`` blocks of
        features, on numba's current threads): the same bits as the serial kernels.

    Returns
    -------
    depth_grown : int
    split : int64 array (depth, 2)
        Per level grown: the feature's position in ``feats`` and the bin.
    score : float64 array (depth,)
        Per level grown: the chosen split's score (with its noise).
    leaf_sums : float64 array (2^depth_grown, 3)
        Per leaf: sum of ``grad``, sum of ``hess``, count over ``rows``.
    """
    D = int(depth)
    if D < 1:
        raise ValueError(f"depth must be >= 1, got {depth!r}")
    _c_array("codes_t", codes_t, (np.uint8, np.uint16), 2)
    N = codes_t.shape[1]
    _c_array("feats", feats, np.int64, 1)
    _c_array("off", off, np.int64, 1)
    m = feats.size
    if off.size != m + 1 or off[0] != 0 or (m and (np.diff(off).min() < 1 or feats.min() < 0
                                                   or feats.max() >= codes_t.shape[0])):
        raise ValueError("feats must be rows of codes_t and off their increasing histogram offsets")
    for name, a in (("grad", grad), ("hs", hs), ("hess", hess)):
        _c_array(name, a, np.float64, 1)
        if a.size != N:
            raise ValueError(f"{name} must hold one value per row ({N})")
    if rows is not None:
        _c_array("rows", rows, np.int64, 1)
    n = N if rows is None else rows.size
    _c_array("leaf_of", leaf_of, np.int64, 1)
    if leaf_of.size != N or not 0 < n <= N or (rows is not None and (rows.min() < 0 or rows.max() >= N)):
        raise ValueError("rows must be at least one row index of codes_t, leaf_of one entry per row")
    if len(work) != 10:
        raise ValueError("work must be (hist, tot, acc, scores, brows, bvals, count, bhist, btot, og)")
    hist, tot, acc, scores, brows, bvals, count, bhist, btot, og = work
    if not isinstance(parallel, (bool, np.bool_)):
        raise ValueError(f"parallel must be a bool, got {parallel!r}")
    half = 1 << (D - 1)
    P = max(half // 2, 1)
    _c_array("brows", brows, np.int64, 2)
    _c_array("bvals", bvals, np.float64, 2)
    _c_array("count", count, np.int64, 1)
    _c_array("bhist", bhist, np.float64, 3)
    _c_array("btot", btot, np.float64, 2)
    if brows.shape[0] != 2 or brows.shape[1] < n or bvals.shape[0] < n \
            or bvals.shape[1] != 2 or count.size < 2 * half or bhist.shape[0] < P \
            or bhist.shape[1] < off[-1] or bhist.shape[2] != 2 or btot.shape[0] < P or btot.shape[1] != 2:
        raise ValueError(f"work's level buffers must be brows (2, >= {n}), bvals (>= {n}, "
                         f"2), count (>= {2 * half}), bhist (>= {P}, >= {off[-1]}, 2) and btot (>= {P}, 2)")
    _c_array("og", og, np.float64, 3)
    if og.shape[0] < 1 or og.shape[1] < min(n, CHUNK_ROWS) or og.shape[2] != 2:
        raise ValueError(f"work's og must be (>= 1 blocks, >= {min(n, CHUNK_ROWS)}, 2)")
    _c_array("hist", hist, np.float64, 3)
    _c_array("tot", tot, np.float64, 2)
    _c_array("acc", acc, np.float64, 3)
    _c_array("scores", scores, np.float64, 1)
    if hist.shape[0] < half or hist.shape[1] < off[-1] or hist.shape[2] != 2 or tot.shape[0] < half \
            or tot.shape[1] != 2 or acc.shape[0] < 1 or acc.shape[1] < half or acc.shape[2] != 2 \
            or scores.size < off[-1]:
        raise ValueError(f"work must be hist (>= {half}, >= {off[-1]}, 2), tot (>= {half}, 2), acc (>= 1 "
                         f"blocks, >= {half}, 2) and scores (>= {off[-1]})")
    lam, mh, sg = float(reg_lambda), float(min_hess), float(sigma)
    for name, v in (("reg_lambda", lam), ("min_hess", mh), ("sigma", sg)):
        if not (v >= 0.0 and v < np.inf):
            raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
    if noise is not None:
        _c_array("noise", noise, np.float64, 2)
        if noise.shape[0] < D or noise.shape[1] < off[-1]:
            raise ValueError(f"noise must be ({D}, >= {off[-1]})")
    split = np.full((D, 2), -1, dtype=np.int64)
    score = np.zeros(D)
    leaf_sums = np.empty((1 << D, 3))
    done = _grow_symmetric(codes_t, feats, off, grad, hs, hess, rows, leaf_of, hist, tot, acc,
                           (brows, bvals, count, bhist, btot), og, scores, D, mh, lam, sg, noise, split,
                           score, leaf_sums, bool(parallel))
    done = int(done)
    return done, split[:done], score[:done], leaf_sums[:1 << done]


# ----------------------------------------------------------------------------- checked entry point
_CRITERIA = {"se": SE, "wse": WSE, "rwse": RWSE, "ole": RWSE, "classify": CLASSIFY}
_GROWTH = {"best_first": 0, "breadth_first": 1, "depth_first": 2}


def _c_array(name: str, a: object, dtype: tuple | type, ndim: int) -> None:
    dtypes = dtype if isinstance(dtype, tuple) else (dtype,)
    if type(a) is not np.ndarray or a.dtype.type not in dtypes or a.ndim != ndim or not a.flags.c_contiguous:
        want = "/".join(np.dtype(d).name for d in dtypes)
        raise ValueError(f"{name} must be a C-contiguous {ndim}-d {want} array")


def grow(nodes: tuple[np.ndarray, np.ndarray], work: tuple, fmap: np.ndarray, *, criterion: str,
         h_unit: float, num_leaves: int, min_data: float, min_hess: float, growth: str = "best_first",
         tol: float = 0.0,
         codes: np.ndarray | None = None, gbin: np.ndarray | None = None, cols: tuple | None = None,
         counts: tuple | None = None, feats: np.ndarray | None = None, rowoff: np.ndarray | None = None,
         vals: np.ndarray | None = None,
         scan: np.ndarray | None = None, pairs: tuple | None = None, n_pairs: int = 0,
         cls: np.ndarray | None = None, constraint: np.ndarray | None = None,
         par: tuple | None = None, rootc: tuple | None = None, reg_lambda: float = 0.0,
         sample: np.ndarray | None = None) -> tuple[int, int]:
    """Grow one tree with `_grow` (module docstring) after checking what it cannot: the criterion and its
    scan's inputs, the layout's arrays (dtypes, shapes, contiguity), the workspaces' sizes. O(1) checks
    (the node record and workspaces are the caller's, reused from tree to tree; their contents do not
    matter). ``reg_lambda``: the L2 leaf penalty ``lam`` of criterion ``"rwse"`` (`_grow`'s ``spec``; 0, the
    default, is Eq. 9 and 11 as printed). ``sample``: the in-bag rows (bagging; int64, increasing and
    distinct: the caller checks), as many as ``rows``; ``leaf_of``, ``codes``/``codes_t``, ``vals`` and the
    derivatives hold every row. Returns ``(n_nodes, n_leaves)``; the node record
    ``nodes = (ni, nf)`` holds the tree."""
    if criterion not in _CRITERIA:
        raise ValueError(f"criterion must be one of {sorted(_CRITERIA)}, got {criterion!r}")
    crit = _CRITERIA[criterion]
    ni, nf = nodes
    L = int(num_leaves)
    if L < 2:
        raise ValueError(f"num_leaves must be >= 2, got {num_leaves}")
    _c_array("ni", ni, np.int64, 2)
    _c_array("nf", nf, np.float64, 2)
    if ni.shape[0] < 2 * L - 1 or ni.shape[1] != NI or nf.shape != (ni.shape[0], NF):
        raise ValueError(f"the node record needs ({2 * L - 1}, {NI}) int64 and ({2 * L - 1}, {NF}) float64 "
                         "rows")
    off, hist, rows, tmp, leaf_of, positions = work
    _c_array("off", off, np.int64, 1)
    _c_array("positions", positions, np.int64, 1)
    m = positions.size
    if off.size != m + 1 or fmap.shape != (m,) or fmap.dtype != np.int64:
        raise ValueError("off, positions and fmap must describe the same histogram features")
    _c_array("hist", hist, np.float64, 3)
    if hist.shape[0] < L or hist.shape[1] < off[-1] or hist.shape[2] not in (2, 3, 4):
        raise ValueError(f"hist must have shape (>= {L}, >= {off[-1]}, 2..4)")
    n = rows.size
    N = leaf_of.size  # every row; the row list is the sample's with one
    for name, a in (("rows", rows), ("tmp", tmp)):
        _c_array(name, a, (np.int64, np.int32), 1)
        if a.size != n or a.dtype != rows.dtype:
            raise ValueError("rows and tmp must be one row list's length and dtype")
    _c_array("leaf_of", leaf_of, np.int64, 1)
    if sample is None and N != n:
        raise ValueError("leaf_of must hold one entry per row")
    if sample is not None:
        _c_array("sample", sample, np.int64, 1)
        if sample.size != n or not 0 < n <= N:
            raise ValueError("sample must hold the row list's rows (at least one, at most every row)")
        if pairs is not None or rootc is not None or counts is not None:
            raise ValueError("sample cannot be grown with pairs, a root cache or the root's counts")
    kinds = [scan is not None, criterion == "wse", pairs is not None, cls is not None]
    if sum(kinds) != 1 or (criterion in ("se", "rwse", "ole") and pairs is None and scan is None) or \
            (criterion == "classify") != (cls is not None) or (pairs is not None and criterion != "ole"):
        raise ValueError(f"criterion {criterion!r} needs exactly its own scan input (scan, pairs or cls)")
    if (cols is None) == (codes is None):
        raise ValueError("give the row-major codes or the columns, one of them")
    if cols is not None:
        codes_t, cfmap, grad, hess, og = cols
        _c_array("codes_t", codes_t, (np.uint8, np.uint16), 2)
        if codes_t.shape[1] != N or cfmap is not fmap or og.ndim != 3 or og.shape[2] != hist.shape[2] \
                or grad.shape != (N,) or hess.shape != (N,) or hist.shape[2] not in (2, 4):
            raise ValueError("cols must be (codes_t (F, n), fmap, grad (n,), hess (n,), og (B, rows, C=2|4))")
        if pairs is not None or criterion == "wse" or gbin is not None or feats is not None \
                or rowoff is not None:
            raise ValueError("the column layout serves SE, RWSE and NDCGBoost's trees only")
        F = codes_t.shape[0]
        if rootc is not None and (counts is not None or rootc[0].shape[1] != hist.shape[2]
                                  or rootc[1].size < F or rootc[2].size != F + 1):
            raise ValueError("rootc must be (cache (total bins, C), built (F,), offsets (F + 1,)), no counts")
    else:
        _c_array("codes", codes, (np.uint8, np.uint16), 2)
        if codes.shape[0] != N or vals is None or vals.shape != (N, hist.shape[2]) \
                or vals.dtype != np.float64:
            raise ValueError(f"codes and vals must have {N} rows, vals {hist.shape[2]} float64 channels")
        if (gbin is not None) + (feats is not None) + (rowoff is not None) != 1:
            raise ValueError("the row-major layout needs exactly one of gbin, feats and rowoff")
        if gbin is not None and gbin.shape != codes.shape:
            raise ValueError("gbin must be shaped as codes (every feature)")
        if feats is not None and feats is not fmap:
            raise ValueError("with a feature subset, fmap is feats")
        if rowoff is not None and rowoff is not off:
            raise ValueError("rowoff is the histogram's offsets (every feature)")
    if scan is not None:
        _c_array("scan", scan, np.float64, 2)
        if scan.shape[0] != 4 or (scan.shape[1] < off[-1] and scan.shape[1] < np.diff(off).max(initial=1)):
            raise ValueError("scan must be (4, >= the widest feature's bins)")
    if pairs is not None:
        if len(pairs) != 11 or pairs[7].shape[0] < L or pairs[7].shape[1] < off[-1] \
                or n_pairs > pairs[0].size:
            raise ValueError("pairs must be (pa, pb, pw, ta, tb, tw, u, pmax, pmin, cbins, gbins) of room")
        ni[0, PAIR_END] = n_pairs
    if cls is not None and cls.shape != (N,):
        raise ValueError("cls must hold one weight per row")
    cl = None if constraint is None else constraint.tolist()  # a few positions: Python's min/max
    if constraint is not None and (constraint.dtype != np.int64 or constraint.size < L - 1
                                   or not 0 <= min(cl, default=0) <= max(cl, default=0) < m):
        raise ValueError(f"constraint must name {L - 1} histogram positions below {m}")
    if growth not in _GROWTH:
        raise ValueError(f"growth must be one of {sorted(_GROWTH)}, got {growth!r}")
    tol = float(tol)
    if not (tol >= 0.0 and tol < np.inf):
        raise ValueError(f"tol must be a finite number >= 0, got {tol!r}")
    lam = float(reg_lambda)
    if not (lam >= 0.0 and lam < np.inf):
        raise ValueError(f"reg_lambda must be a finite number >= 0, got {reg_lambda!r}")
    if lam != 0.0 and criterion != "rwse":
        raise ValueError(f"reg_lambda (the L2 leaf penalty) needs criterion 'rwse', got {criterion!r}")
    spec = (crit, float(h_unit), L, float(min_data), float(min_hess), _GROWTH[growth], tol, lam)
    wse = True if criterion == "wse" else None
    n_nodes, n_leaves = _grow(spec, ni, nf, work, fmap, codes, gbin, cols, counts, feats, rowoff, vals, scan,
                              wse, pairs, cls, constraint, par, rootc, sample)
    return int(n_nodes), int(n_leaves)


def _toy(C: int, cols: bool, L: int = 3, sample: bool = False) -> dict:
    """The arrays `grow` takes, for a toy matrix of 4 rows x 2 features (3 bins each), shaped and typed as
    the tree engine passes them (``lrank.trees.grower``); with ``sample``, a tree grown on rows 0, 1 and 3
    (bagging)."""
    codes = np.array([[1, 2], [2, 1], [0, 1], [2, 2]], dtype=np.uint8)
    n, F = codes.shape
    off = np.array([0, 3, 6], dtype=np.int64)
    positions = np.arange(F, dtype=np.int64)
    rdt = np.int32 if cols else np.int64
    k = 3 if sample else n
    work = (off, np.zeros((L, 6, C)), np.empty(k, dtype=rdt), np.empty(k, dtype=rdt),
            np.empty(n, dtype=np.int64), positions)
    kw = dict(nodes=(np.empty((2 * L - 1, NI), dtype=np.int64), np.empty((2 * L - 1, NF))), work=work,
              fmap=positions, h_unit=1.0 if C == 2 else 0.0, num_leaves=L, min_data=1.0, min_hess=0.0)
    if sample:
        kw["sample"] = np.array([0, 1, 3], dtype=np.int64)
    grad = np.array([1.0, -2.0, 0.5, -0.25])
    if cols:
        og = np.empty((1, 16, C))
        kw["cols"] = (np.ascontiguousarray(codes.T), positions, grad, np.ones(n), og)
    else:
        kw.update(codes=codes, gbin=(codes + off[:-1]).astype(np.uint16), vals=np.ones((n, C)))
    return kw


def warmup() -> None:
    """Compile the growth loop for what the trees of lrank's estimators read (``lrank.trees.grower``):
    global bin indices (SE/RWSE with two and three channels, OLE with pairs, WSE, NDCGBoost's classifier)
    and the column-major codes (constrained SE and NDCGBoost trees, two and four channels; unconstrained
    trees at scale with the root's count cache, on one thread and on the threads), and the sampled trees
    of bagging in both layouts."""
    scan = np.empty((4, 3))
    pa, pb, pw = np.array([0, 1], dtype=np.int64), np.array([2, 3], dtype=np.int64), np.ones(2)
    for C in (2, 3):
        grow(criterion="se", scan=scan, **_toy(C, False))
    pairs = (pa.copy(), pb.copy(), pw.copy(), np.empty(2, dtype=np.int64), np.empty(2, dtype=np.int64),
             np.empty(2), np.empty(4), np.zeros((3, 6)), np.zeros((3, 6)), np.empty((3, 2), dtype=np.uint32),
             np.empty((2, 2), dtype=np.uint16))
    grow(criterion="ole", pairs=pairs, n_pairs=2, **_toy(3, False))
    grow(criterion="wse", **_toy(4, False))
    s = np.array([1.0, -2.0, 0.5, -0.25])
    grow(criterion="classify", cls=s, **_toy(3, False))
    cons = np.array([1, 0], dtype=np.int64)
    for C in (2, 4):
        cache = (np.zeros((6, C)), np.zeros(2, dtype=np.int64), np.array([0, 3, 6], dtype=np.int64))
        for rootc in (None, cache):
            grow(criterion="se", scan=scan, constraint=cons, rootc=rootc, **_toy(C, True))
            if C == 4:
                grow(criterion="classify", cls=s, constraint=cons, rootc=rootc, **_toy(4, True))
    grow(criterion="se", scan=scan, **_toy(2, True))
    counts = (np.zeros(7), np.empty((1, 16, 2)), np.zeros((6, 2)))
    grow(criterion="se", scan=scan, counts=counts, **_toy(4, True))
    par = (2, 200_000, 50_000, np.zeros(3, dtype=np.int64), np.empty(2), np.empty(2, dtype=np.int64),
           np.empty((2, 4, 3)), np.empty((2, 3, 2), dtype=np.uint32))  # on the threads (n_jobs != 1)
    for C in (2, 4):
        grow(criterion="se", scan=scan, counts=counts if C == 4 else None, par=par, **_toy(C, True))
    # bagging (``subsample``): the sampled trees of the row-major global bins and of the columns (at scale
    # and with a feature subset), on one thread and on the threads
    grow(criterion="se", scan=scan, **_toy(2, False, sample=True))
    for p in (None, par):
        grow(criterion="se", scan=scan, par=p, **_toy(2, True, sample=True))
    # symmetric (oblivious) trees, without and with the split-score noise, serial and on the threads
    codes_t = np.array([[1, 2, 0, 2], [2, 1, 1, 2]], dtype=np.uint8)
    g = np.array([1.0, -2.0, 0.5, -0.25])
    work = (np.zeros((2, 6, 2)), np.zeros((2, 2)), np.zeros((2, 2, 2)), np.zeros(6),
            np.empty((2, 4), dtype=np.int64), np.empty((4, 2)), np.empty(4, dtype=np.int64),
            np.zeros((1, 6, 2)), np.zeros((1, 2)), np.empty((2, 4, 2)))
    feats, off = np.arange(2, dtype=np.int64), np.array([0, 3, 6], dtype=np.int64)
    rows, leaf_of = np.arange(4, dtype=np.int64), np.empty(4, dtype=np.int64)
    for nz in (None, np.zeros((2, 6))):
        for parallel in (False, True):
            for r in (None, rows):  # every row (no row list), a sample's rows
                grow_symmetric(codes_t, feats, off, g, np.ones(4), np.ones(4), r, leaf_of, work, 2,
                               min_hess=0.0, sigma=0.0 if nz is None else 1.0, noise=nz, parallel=parallel)

"""Tree growth at scale on the threads: histograms over fixed ROW blocks and a parallel stable partition.

A node of ``m >= 2 min_rows`` documents sums its gradient histogram over ``K`` equal blocks of its row
list, ``K`` the largest power of two with ``K <= m / min_rows``, at most ``MAX_BLOCKS`` = 4 (block ``p`` holds
the entries ``m p / K`` to ``m (p + 1) / K``): block 0 into the node's histogram, block ``p > 0`` into its
own buffer, then ``hist += buf_1``, ``hist += buf_2``, ... in block order, bin by bin. ``K`` follows from
the node's size only (never from the number of threads), so each bin has one summation order whatever the
number of threads (also on one thread) and a tree has the same bits for any ``n_jobs``; ``K`` even gives
two (or four) threads equal shares (LightGBM's row-wise multi-value bin histograms, with a fixed split).
A node of fewer than ``2 min_rows`` documents is one block: the serial kernels' bits
(`lrank._kernels.histograms._histogram`).

The partition is stable (the left rows, then the right rows, each in their old order), so its result does
not depend on the blocking: per block, count the rows going left (and note each row's side), prefix sums,
then each block scatters its rows to their final places.

A partition reads one byte of each of its rows' matrix rows: on one thread it prefetches the line
``PARTITION_PREFETCH`` rows ahead (`_partition_rows_prefetch`; 1.5x faster at 1M documents), and no
partition writes ``leaf_of``: the tree's leaves label their rows once at the end (`_label_leaves`).

`_grow_tree_blocked` is `lrank._kernels.trees._grow_tree` with these kernels: the whole tree in one call,
on numba's current number of threads (the caller sets it). It lives in its own module so that the serial
whole-tree kernel's compile chain holds no parallel kernel (first-fit compile time).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import njit
from ._simd import _prefetch
from .histograms import _histogram, _histogram_features
from .trees import _best_split_fast, _node_summary

#: the smallest histogram block (rows): a node of at least twice as many rows is summed in 2 or 4 blocks
BLOCK_ROWS = 12288
#: the most blocks of one node (buffers: MAX_BLOCKS - 1 histograms). On one thread each block after the
#: first costs its buffer's cache misses and one pass adding (and re-zeroing) it: the root histogram of
#: 201,172 x 136 took +1-2% at 2 blocks, +2-2.5% at 4, +4-5.5% at 8 and +17-20% at 16 (1 thread, C = 2
#: and 3; the buffers then no longer fit in the 2 MB L2), and 2 or 4 blocks give 2 threads equal shares.
MAX_BLOCKS = 4


@njit(cache=True)
def _n_blocks(m, min_rows):
    """The number of blocks of a node of ``m`` rows: the largest power of two ``K <= m / min_rows``, at
    least 1 and at most ``MAX_BLOCKS``."""
    K = 1
    while 2 * K <= MAX_BLOCKS and 2 * K * min_rows <= m:
        K *= 2
    return K


@njit(cache=True)
def _block_sum(codes, vals, rows, k0, k1, off, out, feats, nf):
    """Serial sums of ``rows[k0:k1]`` into ``out``: all features (``nf == F``) or the first ``nf``."""
    if nf == codes.shape[1]:
        _histogram(codes, vals, rows, k0, k1, off, out)
    else:
        _histogram_features(codes, vals, rows, k0, k1, feats[:nf], off, out)


@njit(cache=True, parallel=True)
def _histogram_blocked(codes, vals, rows, start, end, off, hist, bufs, min_rows, feats, nf):
    """Add the histogram of ``rows[start:end]`` into ``hist`` (zeroed by the caller) over the first ``nf``
    features (their rows ``0:off[nf]``), summed in ``K = _n_blocks(end - start, min_rows)`` equal blocks:
    block 0 into ``hist``, block ``b`` into ``bufs[b - 1]``, then ``hist += bufs[0]``, ``hist += bufs[1]``,
    ... bin by bin in block order. ``bufs`` (at least ``MAX_BLOCKS - 1`` histograms) must be all zeros and
    is left so: the reduction zeroes what it read (one pass over the buffers per call). ``feats`` is
    ``arange(F)``. The threads take whole blocks (``prange``), then chunks of bins for the reduction."""
    m = end - start
    nb = _n_blocks(m, min_rows)
    if nb <= 1:
        _block_sum(codes, vals, rows, start, end, off, hist, feats, nf)
        return
    TB = off[nf]
    C = hist.shape[1]
    for blk in prange(nb):
        k0 = start + blk * m // nb
        k1 = start + (blk + 1) * m // nb
        if blk == 0:
            _block_sum(codes, vals, rows, k0, k1, off, hist, feats, nf)
        else:
            _block_sum(codes, vals, rows, k0, k1, off, bufs[blk - 1], feats, nf)
    nch = min(TB, 64)
    for ch in prange(nch):
        for b in range(ch * TB // nch, (ch + 1) * TB // nch):
            for c in range(C):
                acc = hist[b, c]
                for blk in range(1, nb):  # block order: one summation order per bin
                    acc += bufs[blk - 1, b, c]
                    bufs[blk - 1, b, c] = 0.0  # zero again for the next call
                hist[b, c] = acc


@njit(cache=True)
def _child_histogram_blocked(codes, vals, rows, start, end, off, out, parent, bufs, min_rows, feats, nf):
    """The smaller child's histogram into ``out`` (its first ``nf`` features' rows, zeroed here) by
    :func:`_histogram_blocked`, and the larger child's by subtraction: ``parent -= out`` on those rows."""
    TB = off[nf]
    out[:TB] = 0.0
    _histogram_blocked(codes, vals, rows, start, end, off, out, bufs, min_rows, feats, nf)
    for b in range(TB):
        for c in range(out.shape[1]):
            parent[b, c] -= out[b, c]


#: rows ahead whose partition byte `_partition_rows_prefetch` prefetches (one line per row: a row of the
#: matrix is read for one byte, so the loop waits on memory unless the line is asked for early)
PARTITION_PREFETCH = 32


@njit(cache=True)
def _partition_rows_prefetch(codes, rows, start, end, f, j, tmp):
    """The stable partition of :func:`lrank._kernels.trees._partition_rows` (the same rows and boundary;
    no ``leaf_of``: `_grow_tree_blocked` labels the leaves' rows once, `_label_leaves`), prefetching the
    line of ``codes[rows[k + PARTITION_PREFETCH], f]`` while row ``k`` is placed."""
    nl = 0
    nr = 0
    pf_end = end - PARTITION_PREFETCH
    for k in range(start, end):
        if k < pf_end:
            _prefetch(codes[rows[k + PARTITION_PREFETCH]], f)
        i = rows[k]
        if codes[i, f] <= j:
            rows[start + nl] = i
            nl += 1
        else:
            tmp[nr] = i
            nr += 1
    for k in range(nr):
        rows[start + nl + k] = tmp[k]
    return start + nl


@njit(cache=True, parallel=True)
def _partition_rows_blocked(codes, rows, start, end, f, j, tmp, side, counts, nblk):
    """:func:`lrank._kernels.trees._partition_rows` on the threads, the same result: ``nblk`` blocks of
    the node's rows count their left rows (``code_f <= j``) and note each row's side in ``side`` (uint8,
    n), prefix sums give each block's first left and right place, then each block scatters its rows into
    ``tmp[0:end - start]``, copied back into ``rows[start:end]`` (no ``leaf_of``: see
    `_partition_rows_prefetch`); the counting pass prefetches rows as that kernel does. ``counts``: int64
    (at most ``counts.size`` blocks are used). Returns the boundary."""
    m = end - start
    nblk = max(1, min(nblk, m, counts.size))
    for blk in prange(nblk):
        k0 = start + blk * m // nblk
        k1 = start + (blk + 1) * m // nblk
        c = 0
        pf_end = k1 - PARTITION_PREFETCH
        for k in range(k0, k1):
            if k < pf_end:
                _prefetch(codes[rows[k + PARTITION_PREFETCH]], f)
            s = 1 if codes[rows[k], f] <= j else 0
            side[k] = s
            c += s
        counts[blk] = c
    nl = 0
    for blk in range(nblk):  # exclusive prefix sums of the left counts
        c = counts[blk]
        counts[blk] = nl
        nl += c
    for blk in prange(nblk):
        k0 = start + blk * m // nblk
        k1 = start + (blk + 1) * m // nblk
        lo = counts[blk]
        hi = nl + (k0 - start) - counts[blk]  # right rows of the earlier blocks come first
        for k in range(k0, k1):
            i = rows[k]
            if side[k] != 0:
                tmp[lo] = i
                lo += 1
            else:
                tmp[hi] = i
                hi += 1
    for k in prange(m):
        rows[start + k] = tmp[k]
    return start + nl


@njit(cache=True)
def _split_node_blocked(codes, vals, off, crit, h_unit, min_hess, hist, rows, tmp, node, f, j, g,
                        n_nodes, n_leaves, feature, jbin, left, right, gain, tot, start, end, slot,
                        parent_score, last, bufs, min_rows, feats, side, counts, nthr):
    """`lrank._kernels.trees._split_node` with the row-block kernels: the partition on the threads when
    ``nthr > 1`` (the same rows either way), the smaller child's histogram per row block (only feature 0's
    rows on the ``last`` split, whose children are never searched: their totals)."""
    lt = n_nodes
    rt = n_nodes + 1
    s0 = start[node]
    s1 = end[node]
    if nthr > 1 and s1 - s0 >= 2 * min_rows:
        mid = _partition_rows_blocked(codes, rows, s0, s1, f, j, tmp, side, counts, nthr)
    else:
        mid = _partition_rows_prefetch(codes, rows, s0, s1, f, j, tmp)
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
    nf = 1 if last else codes.shape[1]
    _child_histogram_blocked(codes, vals, rows, start[small], end[small], off, hist[n_leaves],
                             hist[slot[node]], bufs, min_rows, feats, nf)
    feature[node] = f
    jbin[node] = j
    left[node] = lt
    right[node] = rt
    gain[node] = g
    for c in (lt, rt):
        parent_score[c] = _node_summary(hist[slot[c]], off, crit, h_unit, False, 0.0, min_hess, tot, c)


@njit(cache=True)
def _grow_tree_blocked(codes, vals, off, crit, h_unit, num_leaves, min_data, min_hess, breadth_first, hist,
                       rows, tmp, leaf_of, feature, jbin, left, right, gain, tot, start, end, slot,
                       parent_score, features, bg, bf, bj, is_open, bufs, min_rows, side, counts, nthr):
    """`lrank._kernels.trees._grow_tree` (same arguments, same growth, same split search) with the
    row-block histograms and the parallel partition of this module; ``bufs`` (``MAX_BLOCKS - 1`` zeroed
    histograms), ``min_rows`` the smallest block, ``side`` (uint8, n), ``counts`` (int64, at least ``nthr``),
    ``nthr`` numba's number of threads. Returns ``(n_nodes, n_leaves)``."""
    n = rows.size
    _identity_rows(rows)
    F = codes.shape[1]
    hist[0][:] = 0.0
    _histogram_blocked(codes, vals, rows, 0, n, off, hist[0], bufs, min_rows, features, F)
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
                                               parent_score[0], h_unit)
    while n_leaves < num_leaves:  # one split per pass (as _grow_tree)
        if breadth_first:
            if q0 >= q1:
                break
            node = queue[q0]
            q0 += 1
            if end[node] - start[node] < 2.0 * min_data:
                continue
            g, f, j = _best_split_fast(hist[slot[node]], off, features, crit, min_data, min_hess, tot[node],
                                       parent_score[node], h_unit)
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
        _split_node_blocked(codes, vals, off, crit, h_unit, min_hess, hist, rows, tmp, node, f, j, g,
                            n_nodes, n_leaves, feature, jbin, left, right, gain, tot, start, end, slot,
                            parent_score, n_leaves + 1 == num_leaves, bufs, min_rows, features, side, counts,
                            nthr)
        if breadth_first:
            queue[q1] = n_nodes
            queue[q1 + 1] = n_nodes + 1
            q1 += 2
        else:
            for c in (n_nodes, n_nodes + 1):
                is_open[c] = 1
                if n_leaves + 1 < num_leaves and end[c] - start[c] >= 2.0 * min_data:  # else never split
                    bg[c], bf[c], bj[c] = _best_split_fast(hist[slot[c]], off, features, crit, min_data,
                                                           min_hess, tot[c], parent_score[c], h_unit)
        n_nodes += 2
        n_leaves += 1
    _label_leaves(rows, start, end, left, n_nodes, leaf_of)
    return n_nodes, n_leaves


@njit(cache=True, parallel=True)
def _label_leaves(rows, start, end, left, n_nodes, leaf_of):
    """``leaf_of[i]`` = the leaf holding row ``i``: each leaf ``nd`` (``left[nd] < 0``) owns
    ``rows[start[nd]:end[nd]]`` (one pass over the rows at the end of a tree, instead of a write per row
    in every partition); each leaf's rows on the threads (every row written once)."""
    for nd in range(n_nodes):
        if left[nd] < 0:
            for k in prange(start[nd], end[nd]):
                leaf_of[rows[k]] = nd


@njit(cache=True, parallel=True)
def _identity_rows(rows):
    """``rows[i] = i`` on the threads (the root's row list)."""
    for i in prange(rows.size):
        rows[i] = i


def warmup() -> None:
    """Compile the row-block kernels on a toy matrix (one-row blocks: the reduction runs)."""
    codes = np.array([[1, 2], [2, 1], [0, 1]], dtype=np.uint8)
    off = np.array([0, 3, 6], dtype=np.int64)
    feats = np.arange(2, dtype=np.int64)
    side, counts = np.zeros(3, dtype=np.uint8), np.zeros(2, dtype=np.int64)
    _partition_rows_prefetch(codes, np.arange(3, dtype=np.int64), 0, 3, 0, 1, np.empty(3, dtype=np.int64))
    for C in (2, 3, 4):
        bufs = np.zeros((MAX_BLOCKS - 1, 6, C))
        _child_histogram_blocked(codes, np.ones((3, C)), np.arange(3, dtype=np.int64), 0, 3, off,
                                 np.zeros((6, C)), np.ones((6, C)), bufs, 1, feats, 2)
    for C in (2, 3):
        ints = [np.full(3, -1, dtype=np.int64) for _ in range(7)]  # rows, tmp, leaf_of, 4 node arrays
        idx = [np.zeros(3, dtype=np.int64) for _ in range(3)]  # start, end, slot
        scratch = [np.zeros(3, dtype=np.int64) for _ in range(3)]  # bf, bj, is_open
        _grow_tree_blocked(codes, np.ones((3, C)), off, 0, 1.0, 2, 1.0, 0.0, False, np.zeros((2, 6, C)),
                           *ints, np.zeros(3), np.zeros((3, 4)), *idx, np.zeros(3), feats, np.zeros(3),
                           *scratch, np.zeros((MAX_BLOCKS - 1, 6, C)), 1, side, counts, 2)

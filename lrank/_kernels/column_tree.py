"""Tree growth at scale over a column-major copy of the bin codes: feature-group histograms on the threads.

A set of at least `lrank.weak.tree.RegressionTree._column_min_docs` documents grows its unconstrained SE
and RWSE trees here, in one kernel call (`_grow_tree_columns`), reading ``codes_t = codes.T`` (F, n),
made once per tree workspace:

* the histogram of a node (`_histogram_columns`) cuts the feature groups into one block per thread;
  a block takes the node's rows in chunks of `CHUNK_ROWS`, gathers a chunk's values in row order into
  its own buffer (``og[b]``: in its core's cache), then each group of `GROUP` features adds the chunk's
  rows into its bins in one pass (4 features x 256 bins x 4 channels x 8 bytes = 32 KB stays in L1; the
  row-wise loop of `lrank._kernels.histograms._histogram` touches every feature's bins per row, a
  0.5-1 MB histogram, and waits on L2 for most additions). The groups run on the threads (``prange``).
  This is LightGBM's col-wise histogram (``DenseBin::ConstructHistogram`` over ordered gradients, one
  feature group per thread). A bin's values are one vector add: two lanes (gradient, hessian: a
  constant hessian) or four (gradient, hessian, count and a fourth channel, all zeros unless WSE's
  ``w r^2``): the caller gives a varying hessian four channels, so that the count is not a second,
  scalar read-modify-write. On 201,172 x 136 codes of ~256 bins each (one thread) the root histogram
  took 35 ms row-wise and 21-30 ms by groups of four with two channels; with a varying hessian the
  four-lane add took 185 ns per row against 239 for a pair add and a scalar count;
* the partition reads the split feature's column only (`_partition_column`, without a branch on the
  side: faster on one thread than a threaded partition on two), not a line of the row-major matrix
  per row.

Every bin is summed over the node's rows in row-list order, one row after another, with the additions of
`_histogram`; the partitions are stable (the left rows, then the right rows, each in their old order), as
`lrank._kernels.trees._partition_rows`. A tree grown here therefore has the bits of the serial whole-tree
kernel `lrank._kernels.trees._grow_tree` (the same split search, `_best_split_fast`, and node summaries),
whatever the number of threads (tested).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import njit
from ._simd import _add_pair, _add_quad
from .trees import _best_split_fast, _node_summary

#: features per histogram pass (their bins: 4 x 256 x 4 x 8 bytes = 32 KB at most, in L1)
GROUP = 4
#: rows gathered per chunk (32,768 x 4 x 8 bytes = 1 MB of values at most: in L2 while the groups pass over
#: them; each chunk is one parallel launch)
CHUNK_ROWS = 32768
#: blocks of row positions `_label_leaves` hands to the threads
LABEL_BLOCKS = 8
#: rows per block of `_transpose` (256 rows x 136 codes = 34 KB)
TRANSPOSE_ROWS = 256

_ONE = np.uint64(1)
_TWO = np.uint64(2)


@njit(inline="always")
def _gather(grad, hess, h_unit, rows, k0, k1, og):
    """The chunk's values in row order: ``og[k - k0] = (grad, hess)`` of row ``rows[k]`` (two channels;
    ``h_unit`` for every hessian when it is > 0, a constant hessian: ``hess`` is not read) or
    ``(grad, hess, 1, 0)`` (four channels: the count and a zero lane), for ``k0 <= k < k1``."""
    four = og.shape[1] == 4
    for k in range(k0, k1):
        i = rows[k]
        og[k - k0, 0] = grad[i]
        og[k - k0, 1] = h_unit if h_unit > 0.0 else hess[i]
        if four:
            og[k - k0, 2] = 1.0
            og[k - k0, 3] = 0.0


@njit(inline="always")
def _four_c2(codes_t, og, rows, k0, k1, off, flat, f):
    """Features ``f..f+3``, two channels: ``(gradient, hessian)`` of each row into its bin, in row order."""
    c0 = codes_t[f]
    c1 = codes_t[f + 1]
    c2 = codes_t[f + 2]
    c3 = codes_t[f + 3]
    o0 = np.uint64(off[f])
    o1 = np.uint64(off[f + 1])
    o2 = np.uint64(off[f + 2])
    o3 = np.uint64(off[f + 3])
    for k in range(k0, k1):
        r = rows[k]
        g = og[k - k0, 0]
        h = og[k - k0, 1]
        _add_pair(flat, (o0 + np.uint64(c0[r])) << _ONE, g, h)
        _add_pair(flat, (o1 + np.uint64(c1[r])) << _ONE, g, h)
        _add_pair(flat, (o2 + np.uint64(c2[r])) << _ONE, g, h)
        _add_pair(flat, (o3 + np.uint64(c3[r])) << _ONE, g, h)


@njit(inline="always")
def _four_c4(codes_t, og, rows, k0, k1, off, flat, f):
    """Features ``f..f+3``, four channels (gradient, hessian, count and WSE's ``w r^2`` or zeros): each
    row's four values as one four-lane vector add into its bin, in row order."""
    c0 = codes_t[f]
    c1 = codes_t[f + 1]
    c2 = codes_t[f + 2]
    c3 = codes_t[f + 3]
    o0 = np.uint64(off[f])
    o1 = np.uint64(off[f + 1])
    o2 = np.uint64(off[f + 2])
    o3 = np.uint64(off[f + 3])
    for k in range(k0, k1):
        r = rows[k]
        g = og[k - k0, 0]
        h = og[k - k0, 1]
        n = og[k - k0, 2]
        q = og[k - k0, 3]
        _add_quad(flat, (o0 + np.uint64(c0[r])) << _TWO, g, h, n, q)
        _add_quad(flat, (o1 + np.uint64(c1[r])) << _TWO, g, h, n, q)
        _add_quad(flat, (o2 + np.uint64(c2[r])) << _TWO, g, h, n, q)
        _add_quad(flat, (o3 + np.uint64(c3[r])) << _TWO, g, h, n, q)


@njit(inline="always")
def _one_feature(codes_t, og, rows, k0, k1, off, flat, f):
    """Feature ``f`` alone, two or four channels."""
    col = codes_t[f]
    o = np.uint64(off[f])
    if og.shape[1] == 2:
        for k in range(k0, k1):
            _add_pair(flat, (o + np.uint64(col[rows[k]])) << _ONE, og[k - k0, 0], og[k - k0, 1])
    else:
        for k in range(k0, k1):
            _add_quad(flat, (o + np.uint64(col[rows[k]])) << _TWO, og[k - k0, 0], og[k - k0, 1],
                      og[k - k0, 2], og[k - k0, 3])


@njit(cache=True, parallel=True)
def _histogram_columns(codes_t, grad, hess, h_unit, rows, start, end, off, hist, og, nf):
    """Add the rows ``rows[start:end]`` into ``hist`` (total bins, C; C-contiguous) over the first ``nf``
    features, reading ``codes_t`` (F, n). The feature groups (`GROUP` features each, the rest one by one)
    are cut into ``B = og.shape[0]`` blocks on the threads (one parallel launch); each block walks the
    node's rows in chunks of `CHUNK_ROWS`, gathers a chunk's values into its own ``og[b]`` (at least
    (CHUNK_ROWS, C); `_gather`: C = 2 is (gradient, hessian), C = 4 (gradient, hessian, 1, 0)), so they
    stay in its core's cache, then passes over the chunk once per group. Each bin is summed in row order
    by one thread: `lrank._kernels.histograms._histogram`'s bits on those values, for any ``B``."""
    flat = hist.reshape(hist.size)
    n4 = nf // GROUP
    tasks = n4 + (nf - GROUP * n4)
    two = og.shape[2] == 2
    nblk = og.shape[0]
    for blk in prange(nblk):
        ob = og[blk]
        t0 = blk * tasks // nblk
        t1 = (blk + 1) * tasks // nblk
        if t1 > t0:
            for k0 in range(start, end, CHUNK_ROWS):
                k1 = end if end < k0 + CHUNK_ROWS else k0 + CHUNK_ROWS  # (a select: no min() to compile)
                _gather(grad, hess, h_unit, rows, k0, k1, ob)
                for t in range(t0, t1):
                    if t < n4:
                        if two:
                            _four_c2(codes_t, ob, rows, k0, k1, off, flat, GROUP * t)
                        else:
                            _four_c4(codes_t, ob, rows, k0, k1, off, flat, GROUP * t)
                    else:
                        _one_feature(codes_t, ob, rows, k0, k1, off, flat, GROUP * n4 + (t - n4))


@njit(cache=True)
def _child_histogram_columns(codes_t, grad, hess, h_unit, rows, start, end, off, out, parent, og, nf):
    """The smaller child's histogram into ``out`` (its first ``nf`` features' rows, zeroed here) by
    `_histogram_columns`, and the larger child's by subtraction: ``parent -= out`` on those rows."""
    TB = off[nf]
    out[:TB] = 0.0
    _histogram_columns(codes_t, grad, hess, h_unit, rows, start, end, off, out, og, nf)
    po = out.reshape(out.size)
    pp = parent.reshape(parent.size)
    for b in range(TB * out.shape[1]):  # histogram subtraction (the flat loop of histograms._subtract)
        pp[b] -= po[b]


@njit(cache=True)
def _partition_column(col, rows, start, end, j, tmp):
    """Stable partition of ``rows[start:end]`` into ``col[row] <= j`` then ``> j`` (``col`` the split
    feature's codes, ``codes_t[f]``): `lrank._kernels.trees._partition_rows`' rows and boundary, no
    ``leaf_of`` (`_label_leaves` labels the leaves once). Returns the boundary.

    Without a branch on the side: each row is written to the next left place and to the next right
    place, and only the count of its side moves on (a left place never passes the row being read). The
    side of a row is a coin flip for the branch predictor; this loop took 0.66 ms for 200,000 rows
    against 1.67 ms with the branch (3.4 against 8.6 ms for 1M rows, and 5.1 ms on two threads with a
    counting pass, a prefix sum and a scatter: one thread partitions)."""
    nl = 0
    nr = 0
    for k in range(start, end):
        i = rows[k]
        s = np.int64(col[i] <= j)
        rows[start + nl] = i
        tmp[nr] = i
        nl += s
        nr += 1 - s
    for k in range(nr):
        rows[start + nl + k] = tmp[k]
    return start + nl


@njit(cache=True)
def _split_node_columns(codes_t, grad, hess, off, crit, h_unit, min_hess, hist, rows, tmp, node, f, j, g,
                        n_nodes, n_leaves, feature, jbin, left, right, gain, tot, start, end, slot,
                        parent_score, last, og):
    """`lrank._kernels.trees._split_node` with this module's kernels: the partition of the split
    feature's column, the smaller child's histogram by feature groups (only feature 0's rows on the
    ``last`` split, whose children are never searched: their totals) and the larger child's by
    subtraction."""
    lt = n_nodes
    rt = n_nodes + 1
    s0 = start[node]
    s1 = end[node]
    mid = _partition_column(codes_t[f], rows, s0, s1, j, tmp)
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
    nf = 1 if last else codes_t.shape[0]
    _child_histogram_columns(codes_t, grad, hess, h_unit, rows, start[small], end[small], off,
                             hist[n_leaves], hist[slot[node]], og, nf)
    feature[node] = f
    jbin[node] = j
    left[node] = lt
    right[node] = rt
    gain[node] = g
    for c in (lt, rt):
        parent_score[c] = _node_summary(hist[slot[c]], off, crit, h_unit, False, 0.0, min_hess, tot, c)


@njit(cache=True)
def _root_histogram(codes_t, grad, hess, h_unit, rows, off, hist, og, root_n, og2, h2):
    """The root's histogram (every row) into ``hist[0]``. With four channels (a varying hessian) the
    count channel is the same for every tree of a workspace (the same codes, every row): the first tree
    adds all four channels and keeps its counts in ``root_n[:TB]`` (``root_n[TB] = 1``: kept); a later
    tree adds only (gradient, hessian), two lanes into ``h2`` (TB, 2) through ``og2`` (B, CHUNK_ROWS, 2),
    and takes the counts kept. The same additions in the same order, so the same bits (each lane of
    `_add_quad` is its own IEEE addition; counts are exact integers); about 1.1x faster on 1M x 136
    rows, whose 16-byte bins stay in L1 better than 32-byte ones."""
    n = rows.size
    F = codes_t.shape[0]
    TB = off[F]
    h0 = hist[0]
    four = h0.shape[1] == 4
    if four and root_n[TB] == 1.0:
        h2[:TB] = 0.0
        _histogram_columns(codes_t, grad, hess, h_unit, rows, 0, n, off, h2, og2, F)
        for b in range(TB):
            h0[b, 0] = h2[b, 0]
            h0[b, 1] = h2[b, 1]
            h0[b, 2] = root_n[b]
            h0[b, 3] = 0.0
        return
    h0[:] = 0.0
    _histogram_columns(codes_t, grad, hess, h_unit, rows, 0, n, off, h0, og, F)
    if four:
        for b in range(TB):
            root_n[b] = h0[b, 2]
        root_n[TB] = 1.0


@njit(cache=True)
def _grow_tree_columns(codes_t, grad, hess, off, crit, h_unit, num_leaves, min_data, min_hess, breadth_first,
                       hist, rows, tmp, leaf_of, feature, jbin, left, right, gain, tot, start, end, slot,
                       parent_score, features, bg, bf, bj, is_open, og, root_n, og2, h2, buf):
    """`lrank._kernels.trees._grow_tree` (the same growth and split search, the same bits) over
    ``codes_t`` (F, n) with this module's kernels, reading the derivatives ``grad`` and ``hess`` (not read
    when ``h_unit > 0``: a constant hessian, two channels; else four: `_gather`); ``og`` (at least
    (B, CHUNK_ROWS, C): one buffer per block of features, B the threads to use) the gathered values; on
    numba's current number of threads (the caller sets it, B of them). ``root_n`` (TB + 1), ``og2``
    (B, CHUNK_ROWS, 2) and ``h2`` (TB, 2): the root's kept counts and two-lane buffers
    (`_root_histogram`; ``root_n`` all zeros for a new workspace). ``buf``: the split search's scan buffer
    (`lrank._kernels.trees._best_split_fast`).
    ``leaf_of`` is written once, at the end.
    Returns ``(n_nodes, n_leaves)``."""
    n = rows.size
    _identity_rows(rows)
    _root_histogram(codes_t, grad, hess, h_unit, rows, off, hist, og, root_n, og2, h2)
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
    while n_leaves < num_leaves:  # one split per pass (as _grow_tree)
        if breadth_first:
            if q0 >= q1:
                break
            node = queue[q0]
            q0 += 1
            if end[node] - start[node] < 2.0 * min_data:
                continue
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
        _split_node_columns(codes_t, grad, hess, off, crit, h_unit, min_hess, hist, rows, tmp, node, f, j, g,
                            n_nodes, n_leaves, feature, jbin, left, right, gain, tot, start, end, slot,
                            parent_score, n_leaves + 1 == num_leaves, og)
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
    _label_leaves(rows, start, end, left, n_nodes, leaf_of)
    return n_nodes, n_leaves


@njit(cache=True, parallel=True)
def _label_leaves(rows, start, end, left, n_nodes, leaf_of):
    """``leaf_of[i]`` = the leaf holding row ``i``: each leaf ``nd`` (``left[nd] < 0``) owns
    ``rows[start[nd]:end[nd]]`` (one pass over the rows at the end of a tree, instead of a write per row
    in every partition). The positions are cut into `LABEL_BLOCKS` equal blocks on the threads, each
    labelling the parts of the leaves it covers: one parallel launch per tree (a launch costs ~70 us on
    this kind of host with passive waiting threads; one per leaf made this 1.7 ms at 200k rows)."""
    n = rows.size
    for blk in prange(LABEL_BLOCKS):
        k0 = blk * n // LABEL_BLOCKS
        k1 = (blk + 1) * n // LABEL_BLOCKS
        for nd in range(n_nodes):
            if left[nd] < 0:
                lo = start[nd] if start[nd] > k0 else k0  # (selects: no max() / min() to compile)
                hi = end[nd] if end[nd] < k1 else k1
                for k in range(lo, hi):
                    leaf_of[rows[k]] = nd


@njit(cache=True, parallel=True)
def _transpose(codes, out):
    """``out[f, i] = codes[i, f]``: the column-major copy, blocks of `TRANSPOSE_ROWS` rows on the threads
    (a block's rows stay in L1 while each feature's run of its codes is written; NumPy's strided copy
    ``np.ascontiguousarray(codes.T)`` took ~0.4 s for 1M x 136 on one thread)."""
    n, F = codes.shape
    nb = (n + TRANSPOSE_ROWS - 1) // TRANSPOSE_ROWS
    for b in prange(nb):
        r0 = b * TRANSPOSE_ROWS
        r1 = n if n < r0 + TRANSPOSE_ROWS else r0 + TRANSPOSE_ROWS  # (a select: no min() to compile)
        for f in range(F):
            for r in range(r0, r1):
                out[f, r] = codes[r, f]


@njit(cache=True, parallel=True)
def _identity_rows(rows):
    """``rows[i] = i`` on the threads (the root's row list)."""
    for i in prange(rows.size):
        rows[i] = i


def warmup() -> None:
    """Compile the column kernels on a toy matrix (two and four channels)."""
    codes_t = np.array([[1, 2, 0], [2, 1, 1]], dtype=np.uint8)
    off = np.array([0, 3, 6], dtype=np.int64)
    feats = np.arange(2, dtype=np.int64)
    _transpose(codes_t.T.copy(), np.empty_like(codes_t))
    for C, h_unit in ((2, 1.0), (4, 0.0)):
        ints = [np.full(3, -1, dtype=np.int32) for _ in range(2)]  # rows, tmp
        ints += [np.full(3, -1, dtype=np.int64) for _ in range(5)]  # leaf_of, 4 node arrays
        idx = [np.zeros(3, dtype=np.int64) for _ in range(3)]  # start, end, slot
        scratch = [np.zeros(3, dtype=np.int64) for _ in range(3)]  # bf, bj, is_open
        _grow_tree_columns(codes_t, np.ones(3), np.ones(3), off, 0, h_unit, 2, 1.0, 0.0, False,
                           np.zeros((2, 6, C)), *ints, np.zeros(3), np.zeros((3, 4)), *idx, np.zeros(3),
                           feats, np.zeros(3), *scratch, np.zeros((2, CHUNK_ROWS, C)), np.zeros(7),
                           np.zeros((2, CHUNK_ROWS, 2)), np.zeros((6, 2)), np.empty((4, 3)))

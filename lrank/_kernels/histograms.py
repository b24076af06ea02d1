"""The tree engine's histograms: building and subtraction, over each layout of the binned matrix, and
OLE's pair histograms (LightGBM-style; Xia, Zhai & Wang, Example 3-4).

Gradient histograms. ``hist[off[t] + b, c]`` sums channel ``c`` of the documents' values over a node's
documents whose code on the ``t``-th histogram feature is ``b``: gradient, hessian, count, and for WSE the
weighted squared response (four channels); with a constant hessian ``h0`` only gradient and hessian (the
count is ``H / h0``). Feature ``t`` owns the rows ``off[t]:off[t+1]`` (its number of bins), which keeps a
histogram small enough for the cache when features have few distinct values. Four layouts, each a kernel
of its own and every bin summed over the node's rows in row-list order, so all give the same bits:

* row-major codes with per-feature offsets (`_histogram`: two rows per pass, a bin's (gradient, hessian)
  pair as one two-lane vector add, the rows `PREFETCH_ROWS` ahead prefetched), or a subset of the
  features (`_histogram_features`: a constrained tree builds only its constraint's features, plus
  feature 0, whose bins give the node totals);
* global bin indices ``gbin = off[f] + code`` made once per matrix (`_global_bins`, LightGBM's multi-value
  bin with the offsets added once): `_histogram_global`, no offset per entry;
* column-major codes ``codes_t`` (F, n) by groups of `GROUP` features (`_histogram_columns`): a block of
  feature groups per thread, a chunk of `CHUNK_ROWS` rows gathered into the block's buffer, then each group
  adds the chunk's rows into its bins in one pass (4 features x 256 bins x 4 channels x 8 bytes = 32 KB
  stays in L1; the row-wise loop touches every feature's bins per row and waits on L2). LightGBM's
  col-wise histogram. On 201,172 x 136 codes of ~256 bins (one thread) the root took 35 ms row-wise and
  21-30 ms by groups of four;
* `_histogram_parallel`: ``prange`` over blocks of features of the row-major layouts;
* `_histogram_leaves`: the histograms of every leaf of one level below the root of a symmetric tree at once,
  with each leaf's totals (the root's: `_symmetric_root`); the smaller child of each parent is built (one pass
  over the rows picks them, in row order) and its sibling is the parent's minus it, in place over the parents'
  buffer; the built children are summed over the column-major codes a group of features at a time, like
  `_histogram_columns`, every built child's bins of the group in cache. `_histogram_leaves_parallel`, its
  twin, ``prange`` over blocks of feature groups (each thread reads its own columns).

A sibling's histogram is its parent's minus the other child's (`_subtract`): the smaller child is built,
the larger one takes the parent's buffer.

Pair histograms. With a pairwise loss the exact second derivative of a node is ``sum_d L''_d - 2 sum w``
over the pairs whose two documents share the node. A split ``code <= j`` on feature ``f`` keeps a pair on
the left iff its larger code is ``<= j`` and on the right iff its smaller code is ``> j``, so the OLE
scan needs per feature and bin ``pmax`` (the node's pair weights by larger code) and ``pmin`` (by smaller
code). A node's pairs are kept contiguous, structure of arrays (``pa``, ``pb``, ``pw``). `_pair_histograms`
bins each pair by its larger code; a pair puts its weight at both its codes, that is at the codes of its
two documents, so ``pmax + pmin`` is the histogram of ``u`` (each document's weight in the node's pairs)
and `_pmin_from_weights` makes ``pmin = U - pmax`` from one pass over the node's documents (``n F``
additions instead of ``m F``; ``m / n`` is about 5 for NDCG@10 pairs on the MSLR sample). The larger
child's ``pmax`` is its parent's minus the crossing pairs' minus the smaller child's when that is fewer
pairs (one kernel adds ``sign * w``: ``sign = -1`` removes, the same bits as ``-= w``). Every bin is
summed in pair order whatever the loop layout: the bits of a sequential ``numpy.add.at`` in pair order
(``tests/reference/pair_histograms.py``), and for the parallel twin on any number of threads.

The kernels are private; `global_bins`, `transpose`, `pair_histograms` and `pmin_from_weights` are the
validating functions for callers outside ``lrank._kernels``.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import njit
from ._simd import _add_pair, _add_quad, _prefetch

#: rows ahead whose matrix row and values `_histogram` prefetches (a child's rows are scattered over the
#: matrix; at 1M x 136 a 30% child took 1.2x less time with 8-16 rows ahead, the root the same)
PREFETCH_ROWS = 8
#: features per column histogram pass (their bins: 4 x 256 x 4 x 8 bytes = 32 KB at most, in L1)
GROUP = 4
#: rows gathered per chunk of the column histograms (32,768 x 4 x 8 bytes = 1 MB of values at most: in L2
#: while the groups pass over them)
CHUNK_ROWS = 32768
#: built rows per chunk of a symmetric tree's level histograms (`_leaves_block`: 4,096 x (16 + 16) bytes of
#: rows, slots and values, and a group's bins of the 16 built children of a depth-6 tree, 256 KB at most,
#: in L2 while the groups pass over them)
LEAF_CHUNK = 32768
#: rows per block of `_transpose` (256 rows x 136 codes = 34 KB)
TRANSPOSE_ROWS = 256

_ONE = np.uint64(1)
_TWO = np.uint64(2)


# ------------------------------------------------------------------------- row-major codes, offsets
@njit(cache=True, inline="always")
def _prefetch_rows(codes, vals, p, p2):
    """Prefetch matrix rows ``p`` and ``p2`` (their first, middle and last bytes' lines: a row of up to
    ~190 codes) and their values: a hint, no value changes."""
    F = codes.shape[1]
    h = F >> 1
    _prefetch(codes[p], 0)
    _prefetch(codes[p], h)
    _prefetch(codes[p], F - 1)
    _prefetch(codes[p2], 0)
    _prefetch(codes[p2], h)
    _prefetch(codes[p2], F - 1)
    _prefetch(vals[p], 0)
    _prefetch(vals[p2], 0)


@njit(cache=True)
def _histogram(codes, vals, rows, start, end, off, hist):
    """Add ``vals[rows[start:end]]`` into the flat ``hist`` (total bins, C); ``codes`` is (n, F)."""
    F = codes.shape[1]
    C = vals.shape[1]
    # C = 2 and 3 (the hot paths): two rows per pass over the features, sharing the offset load; in each
    # bin the earlier row is still added first (a bin belongs to one feature): the one-row loop's bits.
    # The (gradient, hessian) pair of a bin is one two-lane vector add (`_add_pair`: the same IEEE adds),
    # and the rows PREFETCH_ROWS ahead are prefetched (a child's rows are scattered).
    flat = hist.reshape(hist.size)
    k = start
    if C == 2:  # gradient, hessian (a constant hessian: counts follow from it)
        while k + 1 < end:
            i = rows[k]
            i2 = rows[k + 1]
            if k + PREFETCH_ROWS + 1 < end:
                _prefetch_rows(codes, vals, rows[k + PREFETCH_ROWS], rows[k + PREFETCH_ROWS + 1])
            g, h = vals[i, 0], vals[i, 1]
            g2, h2 = vals[i2, 0], vals[i2, 1]
            for f in range(F):
                o = off[f]
                b = np.uint64(o + codes[i, f]) << np.uint64(1)  # unsigned index: no wrap-around fix-up
                b2 = np.uint64(o + codes[i2, f]) << np.uint64(1)
                _add_pair(flat, b, g, h)
                _add_pair(flat, b2, g2, h2)
            k += 2
    elif C == 3:  # gradient, hessian, count
        while k + 1 < end:
            i = rows[k]
            i2 = rows[k + 1]
            if k + PREFETCH_ROWS + 1 < end:
                _prefetch_rows(codes, vals, rows[k + PREFETCH_ROWS], rows[k + PREFETCH_ROWS + 1])
            g, h, n = vals[i, 0], vals[i, 1], vals[i, 2]
            g2, h2, n2 = vals[i2, 0], vals[i2, 1], vals[i2, 2]
            for f in range(F):
                o = off[f]
                b = np.uint64(o + codes[i, f]) * np.uint64(3)
                b2 = np.uint64(o + codes[i2, f]) * np.uint64(3)
                _add_pair(flat, b, g, h)
                flat[b + np.uint64(2)] += n
                _add_pair(flat, b2, g2, h2)
                flat[b2 + np.uint64(2)] += n2
            k += 2
    for kk in range(k, end):  # the last row of C = 2 or 3; every row of other C
        i = rows[kk]
        for f in range(F):
            b = np.uint64(off[f] + codes[i, f])
            for c in range(C):
                hist[b, c] += vals[i, c]


@njit(cache=True)
def _histogram_features(codes, vals, rows, start, end, feats, off, hist):
    """:func:`_histogram` restricted to the features ``feats``: feature ``feats[t]`` owns the flat rows
    ``off[t]:off[t+1]``. Every bin is summed in the same row order as in the full histogram, so each
    feature's rows are bit-identical to it."""
    m = feats.size
    C = vals.shape[1]
    for k in range(start, end):
        i = rows[k]
        for t in range(m):
            b = np.uint64(off[t] + codes[i, feats[t]])
            for c in range(C):
                hist[b, c] += vals[i, c]


@njit(inline="always")
def _row(rows, k):
    """Row ``rows[k]`` of a node's row list, or ``k`` itself when ``rows`` is None: the root's rows in order,
    ``0..n-1``. numba compiles a None row list as its own specialisation with the branch gone, so the root's
    loops read the codes and values in order with no row index to load first (a dependent load per row:
    on 1M x 136 codes, one thread, the root took 121 ms with the row list and 78 ms without; the same
    bits, the same additions in the same order)."""
    return k if rows is None else rows[k]


@njit(inline="always")
def _built_rows(rows, leaf_of, L, grad, hs, tot, brows, bvals, count, btot):
    """The rows of one level ``L >= 2`` of a symmetric tree whose histograms are built, in row order:
    ``brows[0, k]`` the row, ``brows[1, k]`` its parent's slot, ``bvals[k] = (grad, hs)``; returns how
    many. ``rows`` None: every row in order (`_row`: no row index to load). Per parent ``p`` the child with
    fewer rows (the left one ``2 p`` on a tie; `count[L + l]` is ``p`` for the built child ``l``, -1 for
    the other, after its rows are counted in ``count[l]``). Also each leaf's totals ``tot[l] = (sum grad,
    sum hs)``: every built child's summed over its rows in row order (``btot[p]``), the sibling's its
    parent's (``tot[p]``) minus it, in place, the parents from the last down (a child's slot ``2 p`` or
    ``2 p + 1`` holds a parent already done, or none). The root level is `_symmetric_root`'s."""
    n = leaf_of.size if rows is None else rows.size
    P = L // 2
    for lf in range(L):
        count[lf] = 0
    for k in range(n):
        count[leaf_of[_row(rows, k)]] += 1
    for p in range(P):
        c0 = 2 * p
        s = c0 if count[c0] <= count[c0 + 1] else c0 + 1
        count[L + c0] = -1
        count[L + c0 + 1] = -1
        count[L + s] = p
        btot[p, 0] = 0.0
        btot[p, 1] = 0.0
    m = 0
    for k in range(n):
        i = _row(rows, k)
        p = count[L + leaf_of[i]]
        if p >= 0:
            g = grad[i]
            h = hs[i]
            brows[0, m] = i
            brows[1, m] = p
            bvals[m, 0] = g
            bvals[m, 1] = h
            btot[p, 0] += g
            btot[p, 1] += h
            m += 1
    for p in range(P - 1, -1, -1):
        s = 2 * p if count[L + 2 * p] == p else 2 * p + 1
        o = 4 * p + 1 - s
        q0 = tot[p, 0]
        q1 = tot[p, 1]
        tot[s, 0] = btot[p, 0]
        tot[s, 1] = btot[p, 1]
        tot[o, 0] = q0 - btot[p, 0]
        tot[o, 1] = q1 - btot[p, 1]
    return m


@njit(inline="always")
def _four_columns(codes_t, feats, off, t):
    """The columns of features ``t..t+3`` (``codes_t[feats[t + i]]``) and their histogram offsets
    (``off[t + i]``, as ``uint64``): what every four-feature histogram loop reads before its rows."""
    return (codes_t[feats[t]], codes_t[feats[t + 1]], codes_t[feats[t + 2]], codes_t[feats[t + 3]],
            np.uint64(off[t]), np.uint64(off[t + 1]), np.uint64(off[t + 2]), np.uint64(off[t + 3]))


@njit(inline="always")
def _leaves_four(codes_t, feats, brows, bvals, k0, k1, off, flat, stride, t):
    """Histogram features ``t..t+3`` of the built rows ``k0:k1``: each row's ``(grad, hs)`` into its
    parent's slot (``stride`` entries each) at its bin, one two-lane add per feature, in row order."""
    c0, c1, c2, c3, o0, o1, o2, o3 = _four_columns(codes_t, feats, off, t)
    for k in range(k0, k1):
        r = brows[0, k]
        base = np.uint64(brows[1, k]) * stride
        g = bvals[k, 0]
        h = bvals[k, 1]
        _add_pair(flat, base + ((o0 + np.uint64(c0[r])) << _ONE), g, h)
        _add_pair(flat, base + ((o1 + np.uint64(c1[r])) << _ONE), g, h)
        _add_pair(flat, base + ((o2 + np.uint64(c2[r])) << _ONE), g, h)
        _add_pair(flat, base + ((o3 + np.uint64(c3[r])) << _ONE), g, h)


@njit(inline="always")
def _leaves_one(codes_t, feats, brows, bvals, k0, k1, off, flat, stride, t):
    """Histogram feature ``t`` alone (`_leaves_four`)."""
    col = codes_t[feats[t]]
    o = np.uint64(off[t])
    for k in range(k0, k1):
        _add_pair(flat, np.uint64(brows[1, k]) * stride + ((o + np.uint64(col[brows[0, k]])) << _ONE),
                  bvals[k, 0], bvals[k, 1])


@njit(inline="always")
def _leaves_block(codes_t, feats, off, brows, bvals, m, L, hist, bhist, count, g0, g1, n4):
    """The feature groups ``g0:g1`` (`GROUP` features each below ``n4``, then one by one) of every leaf's
    histogram of one level ``L >= 2`` (`_histogram_leaves`), over their bins only. The built rows
    (`_built_rows`) in chunks of `LEAF_CHUNK`, each chunk added group after group (a group's bins of every
    built child stay in cache), each bin in row order, into ``bhist[p]``; then per parent ``p`` from the
    last down the built child ``hist[s] = bhist[p]`` and its sibling ``hist[o] = hist[p] - bhist[p]``
    (sibling subtraction, in place over the parents': slot ``2 p`` or ``2 p + 1`` is a parent already
    done, or none)."""
    fa = GROUP * g0 if g0 < n4 else GROUP * n4 + (g0 - n4)
    fb = GROUP * g1 if g1 < n4 else GROUP * n4 + (g1 - n4)
    b0 = off[fa]
    b1 = off[fb]
    P = L // 2
    for p in range(P):
        for b in range(b0, b1):
            bhist[p, b, 0] = 0.0
            bhist[p, b, 1] = 0.0
    flat = bhist.reshape(bhist.size)
    stride = np.uint64(2 * bhist.shape[1])
    for k0 in range(0, m, LEAF_CHUNK):
        k1 = m if m < k0 + LEAF_CHUNK else k0 + LEAF_CHUNK  # (a select: no min() to compile)
        for t in range(g0, g1):
            if t < n4:
                _leaves_four(codes_t, feats, brows, bvals, k0, k1, off, flat, stride, GROUP * t)
            else:
                _leaves_one(codes_t, feats, brows, bvals, k0, k1, off, flat, stride, GROUP * n4 + (t - n4))
    for p in range(P - 1, -1, -1):
        s = 2 * p if count[L + 2 * p] == p else 2 * p + 1
        o = 4 * p + 1 - s
        for b in range(b0, b1):
            x0 = bhist[p, b, 0]
            x1 = bhist[p, b, 1]
            q0 = hist[p, b, 0]
            q1 = hist[p, b, 1]
            hist[s, b, 0] = x0
            hist[s, b, 1] = x1
            hist[o, b, 0] = q0 - x0
            hist[o, b, 1] = q1 - x1


@njit(cache=True)
def _histogram_leaves(codes_t, feats, off, grad, hs, rows, leaf_of, L, hist, tot, lev):
    """The per-leaf histograms of one level of a symmetric (oblivious) tree: ``hist[l, off[t] + b]`` sums
    ``(grad, hs)`` over the rows ``rows`` (None: every row in order) in leaf ``l = leaf_of[row]`` whose code
    on feature ``feats[t]`` (column ``codes_t[feats[t]]``) is ``b``, and ``tot[l]`` the leaf's totals, for the
    first ``L >= 2`` leaves (the root level, ``L = 1``, is `_symmetric_root`'s). ``hist[:L // 2]`` and
    ``tot[:L // 2]`` must hold the previous level's (leaf ``l``'s children are ``2 l``, ``2 l + 1``): they are
    overwritten by this level's, in place. Per parent the child with fewer rows (the left one on a tie) is
    built from its rows alone and its sibling is the parent's minus it (half the rows or fewer are read per
    level below the root). ``lev = (brows, bvals, count, bhist, btot)``: the built rows (2, >= n) int64 and
    their values (>= n, 2), the leaves' counts (>= 2 L) int64, the built children's histograms (>= L // 2, >=
    off[-1], 2) and totals (>= L // 2, 2).

    One pass over the rows in row order picks the built rows (`_built_rows`); then the column-major codes
    are read a group of features at a time over a chunk of them (`_leaves_block`; LightGBM's col-wise
    histogram): every built child's bins of one group stay in cache, each column is read in increasing
    row order. Every bin is summed over its leaf's rows in the order of ``rows``."""
    brows, bvals, count, bhist, btot = lev
    m = _built_rows(rows, leaf_of, L, grad, hs, tot, brows, bvals, count, btot)
    n4 = feats.size // GROUP
    tasks = n4 + (feats.size - GROUP * n4)
    _leaves_block(codes_t, feats, off, brows, bvals, m, L, hist, bhist, count, 0, tasks, n4)


@njit(cache=True, parallel=True)
def _histogram_leaves_parallel(codes_t, feats, off, grad, hs, rows, leaf_of, L, hist, tot, lev, nblk):
    """Parallel twin of :func:`_histogram_leaves`: ``prange`` over ``nblk`` blocks of its feature groups
    (clipped to 1..groups), each thread reading only its own columns; each bin is summed over the same
    rows in the same order and subtracted alike: the same bits whatever ``nblk``. The pass picking the
    built rows stays serial (``O(n)``)."""
    brows, bvals, count, bhist, btot = lev
    m = _built_rows(rows, leaf_of, L, grad, hs, tot, brows, bvals, count, btot)
    n4 = feats.size // GROUP
    tasks = n4 + (feats.size - GROUP * n4)
    nblk = tasks if tasks < nblk else nblk  # max(1, min(tasks, nblk)) as selects
    nblk = nblk if nblk > 1 else 1
    for blk in prange(nblk):
        _leaves_block(codes_t, feats, off, brows, bvals, m, L, hist, bhist, count, blk * tasks // nblk,
                      (blk + 1) * tasks // nblk, n4)


@njit(cache=True)
def _global_bins(codes, off, out):
    """``out[i, f] = off[f] + codes[i, f]``: each entry's row of the flat histogram (LightGBM's
    multi-value bin with its offsets added once), uint16 or (past 65,536 histogram rows) uint32."""
    F = codes.shape[1]
    for i in range(codes.shape[0]):
        for f in range(F):
            out[i, f] = off[f] + codes[i, f]
    return out


@njit(cache=True)
def _histogram_global(gbin, vals, rows, start, end, hist):
    """:func:`_histogram` over global bin indices (:func:`_global_bins`): no offset per entry; each bin
    summed in the same row order (the same bits). A bin's (gradient, hessian) pair is one two-lane vector
    add: on the MSLR sample the root's histogram takes ~1.5x (two channels) and ~1.3x (three) less time."""
    F = gbin.shape[1]
    C = vals.shape[1]
    flat = hist.reshape(hist.size)
    if C == 2:  # the (gradient, hessian) pair as one vector add (`_add_pair`: the same bits)
        for k in range(start, end):
            i = rows[k]
            g = vals[i, 0]
            h = vals[i, 1]
            for f in range(F):
                _add_pair(flat, np.uint64(gbin[i, f]) << np.uint64(1), g, h)
        return
    if C == 3:
        for k in range(start, end):
            i = rows[k]
            g = vals[i, 0]
            h = vals[i, 1]
            n = vals[i, 2]
            for f in range(F):
                b = np.uint64(gbin[i, f]) * np.uint64(3)
                _add_pair(flat, b, g, h)
                flat[b + np.uint64(2)] += n
        return
    for k in range(start, end):
        i = rows[k]
        for f in range(F):
            b = np.int64(gbin[i, f]) * C
            for c in range(C):
                flat[b + c] += vals[i, c]


@njit(cache=True, parallel=True)
def _histogram_parallel(codes, vals, rows, start, end, off, hist, nblk):
    """Parallel twin of :func:`_histogram` and :func:`_histogram_global`: ``prange`` over blocks of
    features, each block summed row by row as the serial kernels do (the same order for every bin, so
    the same bits). For global bin indices pass ``codes = gbin`` and ``off`` all zeros."""
    F = codes.shape[1]
    C = vals.shape[1]
    # blocking does not change any bin's summation order; max(1, min(F, nblk)) as selects
    nblk = F if F < nblk else nblk
    nblk = nblk if nblk > 1 else 1
    for blk in prange(nblk):
        f0 = blk * F // nblk
        f1 = (blk + 1) * F // nblk
        if C == 2:
            for k in range(start, end):
                i = rows[k]
                g = vals[i, 0]
                h = vals[i, 1]
                for f in range(f0, f1):
                    b = np.uint64(off[f] + codes[i, f])  # unsigned index: no wrap-around fix-up
                    hist[b, 0] += g
                    hist[b, 1] += h
        elif C == 3:
            for k in range(start, end):
                i = rows[k]
                g = vals[i, 0]
                h = vals[i, 1]
                n = vals[i, 2]
                for f in range(f0, f1):
                    b = np.uint64(off[f] + codes[i, f])
                    hist[b, 0] += g
                    hist[b, 1] += h
                    hist[b, 2] += n
        else:
            for k in range(start, end):
                i = rows[k]
                for f in range(f0, f1):
                    b = np.uint64(off[f] + codes[i, f])
                    for c in range(C):
                        hist[b, c] += vals[i, c]


@njit(inline="always")
def _subtract(parent, out, nb):
    """Histogram subtraction ``parent[:nb] -= out[:nb]`` (both C-contiguous, the same shape) over the
    flat arrays: one SIMD loop instead of a loop over the channels of each bin (the same differences; at
    20,746 bins x 2-3 channels, 60-100 -> ~20 us with the zeroing, per split)."""
    pp = parent.reshape(parent.size)
    po = out.reshape(out.size)
    for b in range(nb * out.shape[1]):
        pp[b] -= po[b]


@njit(inline="always")
def _feature0_child(codes, vals, rows, start, end, off, out, parent, f0):
    """The smaller child's bins of the first histogram feature only (rows ``0:off[1]``, zeroed here; it is
    the feature ``f0`` of ``codes``: 0, or a feature subset's first) and the larger child's by subtraction in
    ``parent``: the split that completes a tree, whose children are never searched and need only their
    totals. Each bin summed in row order, as in the full histogram (the same bits)."""
    C = vals.shape[1]
    out[:off[1]] = 0.0
    for k in range(start, end):
        i = rows[k]
        b = codes[i, f0]
        for c in range(C):
            out[b, c] += vals[i, c]
    for b in range(off[1]):
        for c in range(C):
            parent[b, c] -= out[b, c]


# ---------------------------------------------------------------------------- column-major codes
@njit(inline="always")
def _gather(grad, hess, h_unit, rows, k0, k1, og):
    """The chunk's values in row order: ``og[k - k0] = (grad, hess)`` of row ``_row(rows, k)`` (two
    channels; ``h_unit`` for every hessian when it is > 0, a constant hessian: ``hess`` is not read) or
    ``(grad, hess, 1, 0)`` (four channels: the count and a zero lane), for ``k0 <= k < k1``."""
    four = og.shape[1] == 4
    for k in range(k0, k1):
        i = _row(rows, k)
        og[k - k0, 0] = grad[i]
        og[k - k0, 1] = h_unit if h_unit > 0.0 else hess[i]
        if four:
            og[k - k0, 2] = 1.0
            og[k - k0, 3] = 0.0


@njit(inline="always")
def _four_c2(codes_t, feats, og, rows, k0, k1, off, flat, t):
    """Histogram features ``t..t+3`` (columns ``feats[t..t+3]``), two channels: ``(gradient, hessian)`` of
    each row into its bin, in row order."""
    c0, c1, c2, c3, o0, o1, o2, o3 = _four_columns(codes_t, feats, off, t)
    for k in range(k0, k1):
        r = _row(rows, k)
        g = og[k - k0, 0]
        h = og[k - k0, 1]
        _add_pair(flat, (o0 + np.uint64(c0[r])) << _ONE, g, h)
        _add_pair(flat, (o1 + np.uint64(c1[r])) << _ONE, g, h)
        _add_pair(flat, (o2 + np.uint64(c2[r])) << _ONE, g, h)
        _add_pair(flat, (o3 + np.uint64(c3[r])) << _ONE, g, h)


@njit(inline="always")
def _four_c4(codes_t, feats, og, rows, k0, k1, off, flat, t):
    """Histogram features ``t..t+3``, four channels (gradient, hessian, count and a fourth lane): each row's
    four values as one four-lane vector add into its bin, in row order."""
    c0, c1, c2, c3, o0, o1, o2, o3 = _four_columns(codes_t, feats, off, t)
    for k in range(k0, k1):
        r = _row(rows, k)
        g = og[k - k0, 0]
        h = og[k - k0, 1]
        n = og[k - k0, 2]
        q = og[k - k0, 3]
        _add_quad(flat, (o0 + np.uint64(c0[r])) << _TWO, g, h, n, q)
        _add_quad(flat, (o1 + np.uint64(c1[r])) << _TWO, g, h, n, q)
        _add_quad(flat, (o2 + np.uint64(c2[r])) << _TWO, g, h, n, q)
        _add_quad(flat, (o3 + np.uint64(c3[r])) << _TWO, g, h, n, q)


@njit(inline="always")
def _one_feature(codes_t, feats, og, rows, k0, k1, off, flat, t):
    """Histogram feature ``t`` alone, two or four channels."""
    col = codes_t[feats[t]]
    o = np.uint64(off[t])
    if og.shape[1] == 2:
        for k in range(k0, k1):
            _add_pair(flat, (o + np.uint64(col[_row(rows, k)])) << _ONE, og[k - k0, 0], og[k - k0, 1])
    else:
        for k in range(k0, k1):
            _add_quad(flat, (o + np.uint64(col[_row(rows, k)])) << _TWO, og[k - k0, 0], og[k - k0, 1],
                      og[k - k0, 2], og[k - k0, 3])


@njit(inline="always")
def _columns_block(codes_t, feats, grad, hess, h_unit, rows, start, end, off, flat, ob, t0, t1, n4, two):
    """One block's feature groups ``t0:t1`` (`GROUP` features each below ``n4``, then one by one): the node's
    rows in chunks of `CHUNK_ROWS`, each chunk's values gathered into ``ob`` (`_gather`), then added into
    the bins group after group, each bin in row order."""
    for k0 in range(start, end, CHUNK_ROWS):
        k1 = end if end < k0 + CHUNK_ROWS else k0 + CHUNK_ROWS  # (a select: no min() to compile)
        _gather(grad, hess, h_unit, rows, k0, k1, ob)
        for t in range(t0, t1):
            if t < n4:
                if two:
                    _four_c2(codes_t, feats, ob, rows, k0, k1, off, flat, GROUP * t)
                else:
                    _four_c4(codes_t, feats, ob, rows, k0, k1, off, flat, GROUP * t)
            else:
                _one_feature(codes_t, feats, ob, rows, k0, k1, off, flat, GROUP * n4 + (t - n4))


@njit(cache=True, parallel=True)
def _histogram_columns(codes_t, feats, grad, hess, h_unit, rows, start, end, off, hist, og, nf):
    """Add the rows ``rows[start:end]`` (None: the rows ``start:end`` themselves, `_row`) into ``hist``
    (total bins, C; C-contiguous) over the first ``nf`` histogram features (feature ``t`` is column
    ``feats[t]`` of ``codes_t`` (F, n) and owns the rows ``off[t]:off[t+1]``). The feature groups (`GROUP`
    features each, the rest one by one) are cut into ``B = og.shape[0]`` blocks on the threads (one
    parallel launch); each block walks the node's rows in chunks of `CHUNK_ROWS`, gathers a chunk's values
    into its own ``og[b]`` (at least (CHUNK_ROWS, C); `_gather`), so they stay in its core's cache, then
    passes over the chunk once per group. Each bin is summed in row order by one thread: `_histogram`'s
    bits on those values, for any ``B``."""
    flat = hist.reshape(hist.size)
    n4 = nf // GROUP
    tasks = n4 + (nf - GROUP * n4)
    two = og.shape[2] == 2
    nblk = og.shape[0]
    for blk in prange(nblk):
        t0 = blk * tasks // nblk
        t1 = (blk + 1) * tasks // nblk
        if t1 > t0:
            _columns_block(codes_t, feats, grad, hess, h_unit, rows, start, end, off, flat, og[blk], t0, t1,
                           n4, two)


@njit(inline="always")
def _column_direct(col, grad, hess, h_unit, rows, start, end, o, flat, C):
    """One column's rows ``start:end`` added into the bins from ``o`` on without gathering them first (a
    few features: the gather would cost more than it saves): the values `_gather` makes, in row order."""
    ou = np.uint64(o)
    if C == 2:
        for k in range(start, end):
            i = _row(rows, k)
            _add_pair(flat, (ou + np.uint64(col[i])) << _ONE, grad[i], h_unit if h_unit > 0.0 else hess[i])
    else:
        for k in range(start, end):
            i = _row(rows, k)
            _add_quad(flat, (ou + np.uint64(col[i])) << _TWO, grad[i], h_unit if h_unit > 0.0 else hess[i],
                      1.0, 0.0)


@njit(inline="always")
def _two_columns_direct(col_a, col_b, grad, hess, h_unit, rows, start, end, o_a, o_b, flat, C):
    """`_column_direct` of two columns in one pass over the rows: each row's values added into its bin of
    either. A bin of few-valued features takes row after row, and every add then waits for the previous
    one's store; two columns' adds interleave, so the waits overlap (the root of a BoostingTree stump on
    the MSLR sample's 10,000 rows, feature 0 and each of the others: 0.024 ms against 0.035 ms for two
    passes). Each bin's sum is taken in row order as there: the same bits."""
    ua = np.uint64(o_a)
    ub = np.uint64(o_b)
    if C == 2:
        for k in range(start, end):
            i = _row(rows, k)
            g = grad[i]
            h = h_unit if h_unit > 0.0 else hess[i]
            _add_pair(flat, (ua + np.uint64(col_a[i])) << _ONE, g, h)
            _add_pair(flat, (ub + np.uint64(col_b[i])) << _ONE, g, h)
    else:
        for k in range(start, end):
            i = _row(rows, k)
            g = grad[i]
            h = h_unit if h_unit > 0.0 else hess[i]
            _add_quad(flat, (ua + np.uint64(col_a[i])) << _TWO, g, h, 1.0, 0.0)
            _add_quad(flat, (ub + np.uint64(col_b[i])) << _TWO, g, h, 1.0, 0.0)


@njit(cache=True)
def _histogram_columns_serial(codes_t, feats, grad, hess, h_unit, rows, start, end, off, hist, og, nf):
    """:func:`_histogram_columns` on the calling thread, no parallel launch (which costs more than a small
    node's histogram): one block over ``og[0]``, or below `GROUP` features the columns added directly, two
    at a time (`_two_columns_direct`; an odd one alone, `_column_direct`). The same bits."""
    flat = hist.reshape(hist.size)
    if nf < GROUP:
        C = og.shape[2]
        for t in range(0, nf - 1, 2):
            _two_columns_direct(codes_t[feats[t]], codes_t[feats[t + 1]], grad, hess, h_unit, rows, start,
                                end, off[t], off[t + 1], flat, C)
        if nf % 2 == 1:
            _column_direct(codes_t[feats[nf - 1]], grad, hess, h_unit, rows, start, end, off[nf - 1], flat, C)
        return
    n4 = nf // GROUP
    tasks = n4 + (nf - GROUP * n4)
    _columns_block(codes_t, feats, grad, hess, h_unit, rows, start, end, off, flat, og[0], 0, tasks, n4,
                   og.shape[2] == 2)


@njit(inline="always")
def _columns(codes_t, feats, grad, hess, h_unit, rows, start, end, off, hist, og, nf, par):
    """`_histogram_columns` on the threads with ``par`` (not None), else `_histogram_columns_serial`."""
    if par is not None:
        _histogram_columns(codes_t, feats, grad, hess, h_unit, rows, start, end, off, hist, og, nf)
    if par is None:
        _histogram_columns_serial(codes_t, feats, grad, hess, h_unit, rows, start, end, off, hist, og, nf)


@njit(cache=True)
def _root_histogram_columns(codes_t, feats, grad, hess, h_unit, rows, off, hist, og, counts, par, rootc):
    """The root's histogram (every row) into ``hist``, over the column-major codes (on the threads with
    ``par``). ``rows`` is the root's row list (a row sample's), or None for every row in order (`_row`: no
    row index to load). With four channels (a varying hessian) and ``counts = (root_n, og2, h2)`` (every
    feature, one matrix) the count channel is the same for every tree: the first tree adds all four
    channels and keeps its counts in ``root_n[:TB]`` (``root_n[TB] = 1``: kept); a later tree adds only
    (gradient, hessian), two lanes into ``h2`` (TB, 2) through ``og2`` (B, CHUNK_ROWS, 2), and takes the
    counts kept. The same additions in the same order, so the same bits (each lane of `_add_quad` is its
    own IEEE addition; counts are exact integers); about 1.1x faster on 1M x 136 rows, whose 16-byte bins
    stay in L1 better.

    ``rootc = (cache, built, full_off)`` (one set of derivatives grown from again and again: BoostingTree's
    constrained steps on a node's kept weights) keeps every feature's root rows once made, in the
    every-feature layout ``full_off``; ``built[f]`` says which (the same bits: each made as here)."""
    n = codes_t.shape[1] if rows is None else rows.size
    nf = feats.size
    TB = off[nf]
    four = hist.shape[1] == 4
    if rootc is not None:
        cache, built, full_off = rootc
        flat = cache.reshape(cache.size)
        C = cache.shape[1]
        for t in range(nf):
            f = feats[t]
            a = full_off[f]
            if built[f] == 0:
                for k in range(a, full_off[f + 1]):
                    for c in range(C):
                        cache[k, c] = 0.0
                _column_direct(codes_t[f], grad, hess, h_unit, rows, 0, n, a, flat, C)
                built[f] = 1
            o = off[t]
            for k in range(off[t + 1] - o):  # element by element: a slice copy compiles numba's own checks
                for c in range(C):
                    hist[o + k, c] = cache[a + k, c]
        return
    if counts is not None:
        root_n, og2, h2 = counts
        if four and root_n[TB] == 1.0:
            h2[:TB] = 0.0
            _columns(codes_t, feats, grad, hess, h_unit, rows, 0, n, off, h2, og2, nf, par)
            for b in range(TB):
                hist[b, 0] = h2[b, 0]
                hist[b, 1] = h2[b, 1]
                hist[b, 2] = root_n[b]
                hist[b, 3] = 0.0
            return
    hist[:TB] = 0.0
    _columns(codes_t, feats, grad, hess, h_unit, rows, 0, n, off, hist, og, nf, par)
    if counts is not None and four:
        root_n = counts[0]
        for b in range(TB):
            root_n[b] = hist[b, 2]
        root_n[TB] = 1.0


@njit(cache=True)
def _symmetric_root(codes_t, feats, off, grad, hs, rows, hist, tot, og, par):
    """The root level of a symmetric tree (the levels below it: `_histogram_leaves`) by the column kernels:
    ``tot[0]`` the sums of ``(grad, hs)`` over the rows ``rows`` (None: every row in order, `_row`) in row
    order and ``hist`` (>= off[-1], 2) the root's histogram (`_histogram_columns` on ``og.shape[0]``
    blocks with ``par``, else `_histogram_columns_serial`; ``og`` (blocks, >= min(n, CHUNK_ROWS), 2)). The
    same additions in the same order as a build over the row list (each bin summed in row order), without
    copying every row into a built-row list first: on 1M x 136 codes of 255 bins, one thread, 85 ms with no
    row list against 173 for that copy and build."""
    n = codes_t.shape[1] if rows is None else rows.size
    g_sum = 0.0
    h_sum = 0.0
    for k in range(n):
        i = _row(rows, k)
        g_sum += grad[i]
        h_sum += hs[i]
    tot[0, 0] = g_sum
    tot[0, 1] = h_sum
    nf = feats.size
    for b in range(off[nf]):
        hist[b, 0] = 0.0
        hist[b, 1] = 0.0
    if par:
        _histogram_columns(codes_t, feats, grad, hs, 0.0, rows, 0, n, off, hist, og, nf)
    else:
        _histogram_columns_serial(codes_t, feats, grad, hs, 0.0, rows, 0, n, off, hist, og, nf)


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


# -------------------------------------------------------------------------------- pair histograms
@njit(cache=True)
def _pair_histograms(codes, pa, pb, pw, start, end, feats, off, pmax, pmin, sign, bins):
    """Add ``sign * pw[p]`` at each pair's larger code into ``pmax`` and (``pmin`` not None) at its smaller
    into ``pmin`` for the pairs ``start:end``; ``feats`` None means every feature (feature ``f`` owns rows
    ``off[f]:off[f+1]``), else the features ``feats`` (``feats[t]`` owns ``off[t]:off[t+1]``).

    Two phases per pair: the flat bins of every feature first (a loop the compiler vectorises), then the
    scattered additions, in pair order. ``bins`` is a uint32 (3, >= m) workspace (m features) with any
    contents: the pair's larger and smaller flat bins and the offsets (unsigned: no wrap-around)."""
    m = codes.shape[1] if feats is None else feats.size
    hi_bin = bins[0]
    lo_bin = bins[1]
    offu = bins[2]
    for t in range(m):
        offu[t] = np.uint32(off[t])
    for p in range(start, end):
        wt = sign * pw[p]  # exact: a sign flip
        ra = codes[pa[p]]
        rb = codes[pb[p]]
        for t in range(m):
            f = t if feats is None else feats[t]
            ca = ra[f]
            cb = rb[f]
            hi_bin[t] = offu[t] + np.uint32(ca if ca >= cb else cb)  # the pair's larger code
            lo_bin[t] = offu[t] + np.uint32(cb if ca >= cb else ca)  # and its smaller one
        for t in range(m):
            pmax[np.uint64(hi_bin[t])] += wt
        if pmin is not None:
            for t in range(m):
                pmin[np.uint64(lo_bin[t])] += wt


@njit(cache=True)
def _pair_histograms_global(gbin, pa, pb, pw, start, end, pmax, pmin, sign, bins):
    """:func:`_pair_histograms` over global bin indices ``gbin = off[f] + code`` (`_global_bins`): a
    pair's larger global bin on feature ``f`` is ``off[f]`` plus its larger code, so no offset per entry;
    the same bins in the same pair order (the same bits). ``bins``: uint16/uint32 (2, >= F), any
    contents."""
    F = gbin.shape[1]
    hi_bin = bins[0]
    lo_bin = bins[1]
    for p in range(start, end):
        wt = sign * pw[p]  # exact: a sign flip
        ra = gbin[pa[p]]
        rb = gbin[pb[p]]
        if pmin is not None:
            for f in range(F):
                ca = ra[f]
                cb = rb[f]
                hi_bin[f] = ca if ca >= cb else cb
                lo_bin[f] = cb if ca >= cb else ca
            for f in range(F):
                pmax[np.uint64(hi_bin[f])] += wt
                pmin[np.uint64(lo_bin[f])] += wt
        else:
            for f in range(F):
                ca = ra[f]
                cb = rb[f]
                hi_bin[f] = ca if ca >= cb else cb
            for f in range(F):
                pmax[np.uint64(hi_bin[f])] += wt


@njit(cache=True, parallel=True)
def _pair_histograms_parallel(codes, pa, pb, pw, start, end, off, pmax, pmin, nblk, bins):
    """Parallel twin of :func:`_pair_histograms` (every feature, ``sign = 1``): ``prange`` over blocks of
    features, each block in two phases per pair as the serial kernel, so every bin is summed in pair
    order (the same bits whatever the number of threads). ``nblk`` blocks (clipped to 1..F); ``bins`` is a
    uint32 (>= blocks, 3, >= F) workspace with any contents, one buffer per block."""
    F = codes.shape[1]
    nblk = nblk if nblk < F else F  # min(F, nblk), max(1, .) as selects
    nblk = nblk if nblk > 1 else 1
    for blk in prange(nblk):
        f0 = blk * F // nblk
        f1 = (blk + 1) * F // nblk
        hi_bin = bins[blk, 0]
        lo_bin = bins[blk, 1]
        offu = bins[blk, 2]
        for t in range(f1 - f0):
            offu[t] = np.uint32(off[f0 + t])
        for p in range(start, end):
            wt = pw[p]
            ra = codes[pa[p]]
            rb = codes[pb[p]]
            for t in range(f1 - f0):
                ca = ra[f0 + t]
                cb = rb[f0 + t]
                hi_bin[t] = offu[t] + np.uint32(ca if ca >= cb else cb)
                lo_bin[t] = offu[t] + np.uint32(cb if ca >= cb else ca)
            for t in range(f1 - f0):
                pmax[np.uint64(hi_bin[t])] += wt
            if pmin is not None:
                for t in range(f1 - f0):
                    pmin[np.uint64(lo_bin[t])] += wt


@njit(cache=True)
def _pmin_from_weights(codes, gbin, feats, rowoff, off, u, rows, start, end, pmax, pmin):
    """``pmin = U - pmax`` over the ``off[-1]`` histogram rows of ``pmax``: ``U[off[t] + b]`` sums ``u[d]``
    over the node's documents ``rows[start:end]`` with code ``b`` on histogram feature ``t`` (each bin in
    row order), ``u[d]`` the weight of the node's pairs that hold ``d``. Reads the global bin indices
    ``gbin``, or ``codes`` over the features ``feats`` (offsets ``off``), or ``codes`` over every feature
    with the offsets ``rowoff``: exactly one of the three is not None. A document with ``u = 0`` is skipped
    (adding ``+0.0`` to a sum that starts at ``+0.0`` changes no bit)."""
    nb = off[off.size - 1]
    pmin[:nb] = 0.0
    for k in range(start, end):
        i = rows[k]
        x = u[i]
        if x == 0.0:
            continue
        if gbin is not None:
            g = gbin[i]
            for f in range(g.size):
                pmin[np.int64(g[f])] += x
        if feats is not None:
            c = codes[i]
            for t in range(feats.size):
                pmin[off[t] + c[feats[t]]] += x
        if rowoff is not None:
            c = codes[i]
            for f in range(c.size):
                pmin[rowoff[f] + c[f]] += x
    for t in range(nb):
        pmin[t] -= pmax[t]


# ----------------------------------------------------------------------------- checked entry points
def _check_codes(name: str, codes: np.ndarray) -> np.ndarray:
    if not isinstance(codes, np.ndarray) or codes.ndim != 2 or codes.dtype not in (np.uint8, np.uint16) \
            or not codes.flags.c_contiguous:
        raise ValueError(f"{name} must be a C-contiguous 2-d uint8/uint16 array of bin codes")
    return codes


def _offsets(n_bins: np.ndarray, F: int) -> np.ndarray:
    n_bins = np.asarray(n_bins)
    if n_bins.shape != (F,) or n_bins.dtype.kind not in "iu" or (F and n_bins.min() < 1):
        raise ValueError(f"n_bins must hold one positive bin count per feature ({F})")
    off = np.zeros(F + 1, dtype=np.int64)
    off[1:] = np.cumsum(n_bins)
    return off


def global_bins(codes: np.ndarray, n_bins: np.ndarray) -> np.ndarray:
    """``off[f] + codes[:, f]`` for every entry, ``off`` the running sum of ``n_bins``: uint16 when the
    histogram has at most 65,536 rows, else uint32 (`_global_bins`)."""
    codes = _check_codes("codes", codes)
    off = _offsets(n_bins, codes.shape[1])
    if codes.size and np.any(codes.max(axis=0) >= np.asarray(n_bins)):
        raise ValueError("every code must lie below its feature's n_bins")
    dtype = np.uint16 if off[-1] <= 65536 else np.uint32
    return _global_bins(codes, off, np.empty(codes.shape, dtype=dtype))


def transpose(codes: np.ndarray) -> np.ndarray:
    """``codes.T`` as a C-contiguous (F, n) array, on numba's current threads (`_transpose`)."""
    codes = _check_codes("codes", codes)
    out = np.empty((codes.shape[1], codes.shape[0]), dtype=codes.dtype)
    _transpose(codes, out)
    return out


def _check_pairs(n: int, pa: np.ndarray, pb: np.ndarray, pw: np.ndarray, start: int, end: int) -> None:
    if not (pa.shape == pb.shape == pw.shape and pa.ndim == 1):
        raise ValueError("pa, pb and pw must be 1-d arrays of one length")
    if pa.dtype != np.int64 or pb.dtype != np.int64 or pw.dtype != np.float64:
        raise ValueError("pa, pb must be int64 and pw float64")
    if not 0 <= start <= end <= pa.size:
        raise ValueError(f"pairs {start}:{end} outside 0:{pa.size}")
    if end > start and (min(pa[start:end].min(), pb[start:end].min()) < 0
                        or max(pa[start:end].max(), pb[start:end].max()) >= n):
        raise ValueError("pair documents must index rows of codes")


def _check_buffers(size: int, *bufs: np.ndarray | None) -> None:
    for buf in bufs:
        if buf is not None and (not isinstance(buf, np.ndarray) or buf.dtype != np.float64 or buf.ndim != 1
                                or buf.size < size or not buf.flags.c_contiguous):
            raise ValueError(f"histogram buffers must be C-contiguous float64 with at least {size} bins")


def pair_histograms(codes: np.ndarray, pa: np.ndarray, pb: np.ndarray, pw: np.ndarray, start: int,
                    end: int, pmax: np.ndarray, pmin: np.ndarray | None = None, *,
                    n_bins: np.ndarray | None = None, gbin: np.ndarray | None = None,
                    sign: float = 1.0) -> None:
    """Add the pairs ``start:end`` into ``pmax`` (by their larger code) and ``pmin`` (by their smaller
    one; None: ``pmax`` only), every feature (module docstring).

    Parameters
    ----------
    codes : uint8/uint16 array (n, F)
        Bin codes.
    pa, pb : int64 arrays (m,)
        The two documents of each pair.
    pw : float64 array (m,)
        Pair weights (LambdaMART's pairwise second derivatives).
    start, end : int
        The pairs to add.
    pmax, pmin : float64 arrays (total bins,)
        Histograms, added into.
    n_bins : int array (F,), optional
        Bins per feature (the flat offsets are their running sum); needed without ``gbin``.
    gbin : uint16/uint32 array (n, F), optional
        Global bin indices (`global_bins`): read instead of ``codes`` (the same bins, the same bits).
    sign : float
        ``1.0`` adds, ``-1.0`` removes the pairs (the same bits as subtracting the weights).
    """
    if sign not in (1.0, -1.0):
        raise ValueError("sign must be 1.0 or -1.0")
    codes = _check_codes("codes", codes)
    _check_pairs(codes.shape[0], pa, pb, pw, start, end)
    if gbin is not None:
        if gbin.shape != codes.shape or gbin.dtype not in (np.uint16, np.uint32) \
                or not gbin.flags.c_contiguous:
            raise ValueError("gbin must be C-contiguous uint16/uint32 global bin indices shaped as codes")
        _check_buffers(int(gbin.max()) + 1 if gbin.size else 0, pmax, pmin)
        _pair_histograms_global(gbin, pa, pb, pw, int(start), int(end), pmax, pmin, float(sign),
                                np.empty((2, max(gbin.shape[1], 1)), dtype=gbin.dtype))
        return
    if n_bins is None:
        raise ValueError("pair_histograms needs n_bins (or gbin)")
    off = _offsets(n_bins, codes.shape[1])
    _check_buffers(int(off[-1]), pmax, pmin)
    _pair_histograms(codes, pa, pb, pw, int(start), int(end), None, off, pmax, pmin, float(sign),
                     np.empty((3, max(codes.shape[1], 1)), dtype=np.uint32))


def pmin_from_weights(codes: np.ndarray, u: np.ndarray, rows: np.ndarray, start: int, end: int,
                      pmax: np.ndarray, pmin: np.ndarray, *, n_bins: np.ndarray | None = None,
                      gbin: np.ndarray | None = None) -> None:
    """A node's ``pmin`` from its ``pmax`` and its documents: ``pmin = U - pmax`` (module docstring).

    Parameters
    ----------
    codes : uint8/uint16 array (n, F)
        Bin codes.
    u : float64 array (n,)
        Each document's weight in the node's pairs (the sum of ``w`` over the node's pairs that hold it).
    rows : int64 array
        The node's documents are ``rows[start:end]``.
    pmax : float64 array
        The node's pair histogram by larger code.
    pmin : float64 array
        Overwritten (its first ``total bins`` entries).
    n_bins, gbin
        As for `pair_histograms`.
    """
    codes = _check_codes("codes", codes)
    u = np.ascontiguousarray(u, dtype=np.float64)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if u.shape != (codes.shape[0],) or not 0 <= start <= end <= rows.size:
        raise ValueError("u must hold one weight per document and rows must contain start:end")
    if end > start and (rows[start:end].min() < 0 or rows[start:end].max() >= codes.shape[0]):
        raise ValueError("rows must index documents")
    if gbin is not None:
        if gbin.shape != codes.shape or gbin.dtype not in (np.uint16, np.uint32):
            raise ValueError("gbin must be uint16/uint32 global bin indices shaped as codes")
        if n_bins is None:
            raise ValueError("pmin_from_weights needs n_bins (the histogram's size)")
    elif n_bins is None:
        raise ValueError("pmin_from_weights needs n_bins (or gbin with n_bins)")
    off = _offsets(n_bins, codes.shape[1])
    _check_buffers(int(off[-1]), pmax, pmin)
    rowoff = None if gbin is not None else off
    _pmin_from_weights(codes, gbin, None, rowoff, off, u, rows, int(start), int(end), pmax, pmin)


def warmup() -> None:
    """Compile the histogram kernels on a toy matrix (the layouts and channels the trees use)."""
    codes = np.array([[1, 2], [2, 1], [0, 1]], dtype=np.uint8)
    rows = np.arange(3, dtype=np.int64)
    off = np.array([0, 3, 6], dtype=np.int64)
    gbin = _global_bins(codes, off, np.empty(codes.shape, dtype=np.uint16))
    feats = np.array([1], dtype=np.int64)
    for C in (2, 3, 4):
        vals = np.ones((3, C))
        _histogram(codes, vals, rows, 0, 3, off, np.zeros((6, C)))
        _histogram_global(gbin, vals, rows, 0, 3, np.zeros((6, C)))
        _histogram_features(codes, vals, rows, 0, 3, feats, off[:2], np.zeros((3, C)))
    transpose(codes)
    pa, pb, pw = np.array([0, 2], dtype=np.int64), np.array([1, 1], dtype=np.int64), np.ones(2)
    n_bins = np.array([3, 3])
    pair_histograms(codes, pa, pb, pw, 0, 2, np.zeros(6), np.zeros(6), n_bins=n_bins)
    pair_histograms(codes, pa, pb, pw, 0, 2, np.zeros(6), None, gbin=gbin)
    pmin_from_weights(codes, np.ones(3), rows, 0, 3, np.zeros(6), np.zeros(6), n_bins=n_bins)

"""Gradient histograms over the binned feature matrix (LightGBM-style); OLE's pair histograms are in
:mod:`lrank._kernels.pair_histograms`.

``hist[off[f] + b, c]`` sums channel ``c`` of ``vals`` (per document: gradient, hessian, count, and for
WSE the weighted squared response; with a constant hessian ``h0`` only gradient and hessian, the count
being ``H / h0``) over the node's documents whose feature ``f`` has bin code ``b``;
feature ``f`` owns the rows ``off[f]:off[f+1]`` of the flat histogram (its number of bins), which keeps
the histogram small enough for the cache when features have few distinct values.
A sibling's histogram is its parent's minus the other child's (histogram subtraction, done by the
caller with ``numpy.subtract``).

`_histogram` (the trees' kernel at every size) adds a bin's (gradient, hessian) pair as one two-lane
vector add and prefetches the rows ``PREFETCH_ROWS`` ahead (`lrank._kernels._simd`: the same IEEE adds,
the same bits): at 1M x 136 the root's histogram took 1.1x (C = 2) to 1.25x (C = 3) less time and a
scattered child's 1.2-1.4x. The loop is then bound by the histogram's cache misses (each entry lands in
a random line of the 0.5-0.8 MB histogram); row tiles over 4-16 features, a column-wise pass and a
masked three-lane add for C = 3 were measured slower.

Serial kernels are cached; each ``*_parallel`` twin runs ``prange`` over features (blocks of features
for the gradient _histogram), each thread writing its own features' rows, and sums in the same document
order, so the result is bit-identical to the serial one whatever the number of threads.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import njit
from ._simd import _add_pair, _prefetch

#: rows ahead whose matrix row and values `_histogram` prefetches (a child's rows are scattered over the
#: matrix; at 1M x 136 a 30% child took 1.2x less time with 8-16 rows ahead, the root the same)
PREFETCH_ROWS = 8


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


@njit(inline="always")
def _subtract(parent, out):
    """Histogram subtraction ``parent -= out`` (both C-contiguous, the same shape) over the flat arrays:
    one SIMD loop instead of a loop over the channels of each bin (the same differences; at 20,746 bins
    x 2-3 channels, 60-100 -> ~20 us with the zeroing, per split)."""
    pp = parent.reshape(parent.size)
    po = out.reshape(out.size)
    for b in range(po.size):
        pp[b] -= po[b]


@njit(cache=True)
def _child_histogram(codes, vals, rows, start, end, off, out, parent):
    """Histogram of the smaller child into ``out`` (zeroed here) and the larger child's by subtraction:
    ``parent -= out`` in place."""
    out[:] = 0.0
    _histogram(codes, vals, rows, start, end, off, out)
    _subtract(parent, out)


@njit(cache=True)
def _global_bins(codes, off, out):
    """``out[i, f] = off[f] + codes[i, f]``: each entry's row of the flat histogram (LightGBM's
    multi-value bin with its offsets added once), uint16; the caller checks ``off[-1] <= 65536``."""
    F = codes.shape[1]
    for i in range(codes.shape[0]):
        for f in range(F):
            out[i, f] = off[f] + codes[i, f]
    return out


@njit(cache=True)
def _histogram_global(gbin, vals, rows, start, end, hist):
    """:func:`_histogram` over global bin indices (:func:`_global_bins`): no offset per entry. ``hist``
    is the flat (total bins, C) histogram; each bin is summed in the same row order as :func:`_histogram`
    (the same bits). A bin's (gradient, hessian) pair is one two-lane vector add (`_add_pair`, the same
    IEEE additions): on the MSLR sample the root's histogram takes ~1.5x (two channels) and ~1.3x
    (three) less time."""
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


@njit(cache=True)
def _child_histogram_global(gbin, vals, rows, start, end, out, parent):
    """:func:`_child_histogram` over global bin indices."""
    out[:] = 0.0
    _histogram_global(gbin, vals, rows, start, end, out)
    _subtract(parent, out)


@njit(cache=True)
def _histogram_features(codes, vals, rows, start, end, feats, off, hist):
    """:func:`histogram` restricted to the features ``feats``: feature ``feats[t]`` owns the flat rows
    ``off[t]:off[t+1]`` (``off`` indexed by position in ``feats``). Every bin is summed in the same row
    order as in the full _histogram, so each feature's rows are bit-identical to it."""
    m = feats.size
    C = vals.shape[1]
    for k in range(start, end):
        i = rows[k]
        for t in range(m):
            b = np.uint64(off[t] + codes[i, feats[t]])
            for c in range(C):
                hist[b, c] += vals[i, c]


@njit(cache=True)
def _child_histogram_features(codes, vals, rows, start, end, feats, off, out, parent):
    """:func:`child_histogram` restricted to the features ``feats`` (as :func:`histogram_features`)."""
    out[:] = 0.0
    _histogram_features(codes, vals, rows, start, end, feats, off, out)
    _subtract(parent, out)


@njit(cache=True, parallel=True)
def _histogram_parallel(codes, vals, rows, start, end, off, hist, nblk):
    """Parallel twin of :func:`_histogram` and :func:`_histogram_global`: ``prange`` over blocks of
    features, each block summed row by row as the serial kernels do (the same order for every bin, so
    the same bits). For global bin indices pass ``codes = gbin`` and ``off`` all zeros (a uint16
    specialisation; the one block loop serves both layouts)."""
    F = codes.shape[1]
    C = vals.shape[1]
    # blocking does not change any bin's summation order; max(1, min(F, nblk)) without the builtins'
    # implementations to compile (issue 15.5)
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
                    b = np.uint64(off[f] + codes[i, f])  # unsigned index: no wrap-around fix-up
                    hist[b, 0] += g
                    hist[b, 1] += h
                    hist[b, 2] += n
        else:
            for k in range(start, end):
                i = rows[k]
                for f in range(f0, f1):
                    b = np.uint64(off[f] + codes[i, f])  # unsigned index: no wrap-around fix-up
                    for c in range(C):
                        hist[b, c] += vals[i, c]


def warmup() -> None:
    """Compile the histogram kernels on a toy matrix."""
    codes = np.array([[1, 2], [2, 1], [0, 1]], dtype=np.uint8)
    vals = np.ones((3, 3))
    rows = np.arange(3, dtype=np.int64)
    off = np.array([0, 3, 6], dtype=np.int64)
    gbin = _global_bins(codes, off, np.empty(codes.shape, dtype=np.uint16))
    for C in (2, 3, 4):
        _child_histogram_global(gbin, np.ones((3, C)), rows, 0, 2, np.zeros((6, C)), np.ones((6, C)))
    _histogram(codes, vals, rows, 0, 3, off, np.zeros((6, 3)))
    _histogram(codes, np.ones((3, 2)), rows, 0, 3, off, np.zeros((6, 2)))
    for C in (2, 3, 4):
        _child_histogram(codes, np.ones((3, C)), rows, 0, 2, off, np.zeros((6, C)), np.ones((6, C)))
    _histogram(codes, np.ones((3, 4)), rows, 0, 3, off, np.zeros((6, 4)))
    feats = np.array([1], dtype=np.int64)
    off1 = np.array([0, 3], dtype=np.int64)
    for C in (2, 3, 4):
        _child_histogram_features(codes, np.ones((3, C)), rows, 0, 2, feats, off1, np.zeros((3, C)),
                                 np.ones((3, C)))
        _histogram_features(codes, np.ones((3, C)), rows, 0, 3, feats, off1, np.zeros((3, C)))

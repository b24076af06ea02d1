"""OLE's pair histograms (Xia, Zhai & Wang, Example 3-4): the pair weights of a node by the larger and
the smaller bin code of each pair, and the stable partition of a node's pairs between its children.

With a pairwise loss (LambdaMART) the exact second derivative of a node is ``sum_d L''_d - 2 sum w_ij``
over the pairs ``(i, j)`` whose two documents share the node. For a split ``code <= j`` on feature
``f`` a pair stays on the left iff its larger code is ``<= j`` and on the right iff its smaller code is
``> j``; so the split scan needs, per feature and bin,

* ``pmax[off[f] + b]``: the weights of the node's pairs whose larger code on ``f`` is ``b``;
* ``pmin[off[f] + b]``: those whose smaller code is ``b``.

A node's pairs are kept **contiguous and structure-of-arrays**: ``pa[start:end]``, ``pb[start:end]``,
``pw[start:end]`` (the two documents and the weight of each pair). A split reorders its node's slice
into the pairs inside the left child, those inside the right child, then the crossing pairs (one
document in each child, which leave the tree's pair lists), each group in its original order
(:func:`partition_pairs`), as the rows are partitioned.

Histogram subtraction for the sibling (:func:`sibling_pair_histograms`): the pairs inside the parent
are those inside either child plus the crossing ones, so the larger child's histograms are the
parent's minus the crossing pairs' minus the smaller child's. One kernel adds ``sign * w`` for both
jobs (``sign = -1`` removes the crossing pairs), with the same bits as a plain ``-= w``.

Half the work (:func:`pmin_from_weights`): a pair puts its weight at its larger and at its smaller code,
that is at the codes of its two documents, so ``pmax + pmin`` is the histogram of ``u``, each document's
weight in the node's pairs (``u`` starts as every pair's weight added at both documents and loses the
crossing pairs at each split). The trees bin each pair by its larger code only (``with_min`` False) and
take ``pmin = U - pmax`` from one pass over the node's documents: ``n_node F`` additions instead of
``m_node F``, with ``m / n`` about 5 for NDCG@10 pairs on the MSLR sample (rounding differs from the pairs'
own ``pmin`` at ~1e-16 relative).

Every bin is summed in pair order, one pair after another, whatever the loop layout: the results are
bit-identical to a sequential ``numpy.add.at`` in pair order (``tests/reference/pair_histograms.py``)
and, for the parallel twin, whatever the number of threads.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import njit


@njit(cache=True)
def _pair_histograms(codes, pa, pb, pw, start, end, feats, off, pmax, pmin, sign, bins):
    """Add ``sign * pw[p]`` at each pair's larger code into ``pmax`` and at its smaller into ``pmin``
    for the pairs ``start:end``; ``feats`` None means every feature (feature ``f`` owns rows
    ``off[f]:off[f+1]``), else the features ``feats`` (``feats[t]`` owns ``off[t]:off[t+1]``).

    Two phases per pair: the flat bins of every feature first (a loop the compiler vectorises), then
    the scattered additions; the additions run in pair order, so the bits do not depend on it.
    ``bins`` is a uint32 (3, >= m) workspace (m features), which may hold anything: the pair's larger and
    smaller flat bins and the offsets as uint32 (written here; unsigned: no negative-index wrap-around in
    the scatter), so that no kernel allocates (issue 15.5)."""
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
            pmin[np.uint64(lo_bin[t])] += wt


@njit(cache=True)
def _pair_histograms_global(gbin, pa, pb, pw, start, end, pmax, pmin, sign, with_min, bins):
    """:func:`_pair_histograms` over global bin indices ``gbin = off[f] + code`` (uint16, the gradient
    histograms' `lrank._kernels.histograms._global_bins`): a pair's larger global bin on feature ``f`` is
    ``off[f]`` plus its larger code, so no offset per entry; the same bins in the same pair order (the
    same bits). ``with_min`` False fills ``pmax`` only (``pmin`` untouched; :func:`_pmin_from_weights`
    gives it from the documents). ``bins`` is a uint16 (2, >= F) workspace that may hold anything (each
    pair's larger and smaller global bins, written here)."""
    F = gbin.shape[1]
    hi_bin = bins[0]
    lo_bin = bins[1]
    for p in range(start, end):
        wt = sign * pw[p]  # exact: a sign flip
        ra = gbin[pa[p]]
        rb = gbin[pb[p]]
        if with_min:
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


@njit(cache=True)
def _pmin_from_weights(codes, gbin, use_gbin, off, feats, u, rows, start, end, pmax, pmin):
    """``pmin = U - pmax`` over the histogram rows of ``pmax``: ``U[off[f] + b]`` is the sum of ``u[d]``
    over the node's documents ``rows[start:end]`` with code ``b`` on feature ``f`` (each bin summed in row
    order), ``u[d]`` the weight of the node's pairs that hold ``d``. A pair puts its weight at its larger
    and at its smaller code, that is at the codes of its two documents, so ``pmax + pmin = U`` bin by
    bin. Reads global bin indices ``gbin`` with ``use_gbin`` (every feature), else ``codes`` with the
    offsets ``off`` of every feature (``feats`` None) or of the features ``feats``. A document with
    ``u = 0`` is skipped (adding ``+0.0`` to a sum that starts at ``+0.0`` changes no bit)."""
    nb = off[off.size - 1]
    pmin[:nb] = 0.0
    for k in range(start, end):
        i = rows[k]
        x = u[i]
        if x == 0.0:
            continue
        if use_gbin:
            g = gbin[i]
            for f in range(g.size):
                pmin[np.int64(g[f])] += x
        elif feats is None:
            c = codes[i]
            for f in range(c.size):
                pmin[off[f] + c[f]] += x
        else:
            c = codes[i]
            for t in range(feats.size):
                pmin[off[t] + c[feats[t]]] += x
    for t in range(nb):
        pmin[t] -= pmax[t]


@njit(cache=True)
def _sibling_pair_histograms(codes, pa, pb, pw, s_lo, s_hi, c_lo, c_hi, feats, off, pmax_s, pmin_s,
                            pmax_p, pmin_p, bins):
    """Both children's pair histograms from the parent's: the smaller child's pairs ``s_lo:s_hi`` are
    added into ``pmax_s``/``pmin_s``; the parent's buffers become the other child's, parent - crossing
    pairs ``c_lo:c_hi`` - smaller child (costs the smaller child's and the crossing pairs). ``bins`` is
    :func:`_pair_histograms`' workspace (uint32 (3, >= m), any contents)."""
    _pair_histograms(codes, pa, pb, pw, s_lo, s_hi, feats, off, pmax_s, pmin_s, 1.0, bins)
    _pair_histograms(codes, pa, pb, pw, c_lo, c_hi, feats, off, pmax_p, pmin_p, -1.0, bins)
    m = codes.shape[1] if feats is None else feats.size
    for t in range(off[m]):
        pmax_p[t] -= pmax_s[t]
        pmin_p[t] -= pmin_s[t]


@njit(cache=True, parallel=True)
def _pair_histograms_parallel(codes, pa, pb, pw, start, end, off, pmax, pmin, nblk, bins):
    """Parallel twin of :func:`_pair_histograms` (every feature, ``sign = 1``): ``prange`` over blocks of
    features, each block in two phases per pair as the serial kernel, so every bin is summed in pair
    order (the same bits whatever the number of threads). ``nblk`` blocks (clipped to 1..F); ``bins`` is a
    uint32 (>= blocks, 3, >= F) workspace that may hold anything: block ``b`` writes its features' larger
    and smaller flat bins and offsets into ``bins[b]`` (one buffer per block: no allocation in the loop,
    no cache line written by two threads)."""
    F = codes.shape[1]
    nblk = nblk if nblk < F else F  # min(F, nblk), max(1, .) as numba's selects: no builtin compiled
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
                pmin[np.uint64(lo_bin[t])] += wt


@njit(cache=True)
def _partition_pairs(pa, pb, pw, start, end, leaf_of, left_id, right_id, ta, tb, tw):
    """Stable partition of the pairs ``start:end`` (all three arrays alike): inside the left child,
    inside the right child, then the crossing ones; ``ta``/``tb``/``tw`` are scratch of the slice's
    length. Returns ``(mid, new_end)``: left ``start:mid``, right ``mid:new_end``, crossing
    ``new_end:end``."""
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


# ------------------------------------------------------------------------------- checked entry points
def _check_pairs(codes: np.ndarray, pa: np.ndarray, pb: np.ndarray, pw: np.ndarray, start: int,
                 end: int) -> None:
    if codes.ndim != 2 or codes.dtype not in (np.uint8, np.uint16) or not codes.flags.c_contiguous:
        raise ValueError("codes must be a C-contiguous 2-d uint8/uint16 array of bin codes")
    if not (pa.shape == pb.shape == pw.shape and pa.ndim == 1):
        raise ValueError("pa, pb and pw must be 1-d arrays of one length")
    if pa.dtype != np.int64 or pb.dtype != np.int64 or pw.dtype != np.float64:
        raise ValueError("pa, pb must be int64 and pw float64")
    if not 0 <= start <= end <= pa.size:
        raise ValueError(f"pairs {start}:{end} outside 0:{pa.size}")
    if end > start and (min(pa[start:end].min(), pb[start:end].min()) < 0
                        or max(pa[start:end].max(), pb[start:end].max()) >= codes.shape[0]):
        raise ValueError("pair documents must index rows of codes")


def _check_bins(codes: np.ndarray, feats: np.ndarray | None, off: np.ndarray, *bufs: np.ndarray) -> None:
    m = codes.shape[1] if feats is None else feats.size
    if off.dtype != np.int64 or off.shape != (m + 1,) or np.any(np.diff(off) < 0) or off[-1] >= 2**32:
        raise ValueError("off must be non-decreasing int64 offsets (< 2**32), one per feature plus one")
    if feats is not None and (feats.dtype != np.int64 or (m and (feats.min() < 0
                                                                or feats.max() >= codes.shape[1]))):
        raise ValueError("feats must be int64 feature indices")
    for buf in bufs:
        if buf.dtype != np.float64 or buf.ndim != 1 or buf.size < off[-1]:
            raise ValueError(f"histogram buffers must be float64 with at least {off[-1]} bins")


def _bins_workspace(m: int) -> np.ndarray:
    """:func:`_pair_histograms`' workspace for ``m`` features: uint32 (3, m), any contents."""
    return np.empty((3, max(m, 1)), dtype=np.uint32)


def pair_histograms(codes: np.ndarray, pa: np.ndarray, pb: np.ndarray, pw: np.ndarray, start: int,
                    end: int, off: np.ndarray, pmax: np.ndarray, pmin: np.ndarray,
                    feats: np.ndarray | None = None, sign: float = 1.0) -> None:
    """Add the pairs ``start:end`` into ``pmax``/``pmin`` (by their larger/smaller code; module docstring).

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
    off : int64 array (F + 1,) or (len(feats) + 1,)
        Flat histogram offsets of the features.
    pmax, pmin : float64 arrays
        Histograms, added into.
    feats : int64 array, optional
        Only these features (``off`` indexed by position in ``feats``).
    sign : float
        ``1.0`` adds, ``-1.0`` removes the pairs (the same bits as subtracting the weights).
    """
    if sign not in (1.0, -1.0):
        raise ValueError("sign must be 1.0 or -1.0")
    _check_pairs(codes, pa, pb, pw, start, end)
    _check_bins(codes, feats, off, pmax, pmin)
    _pair_histograms(codes, pa, pb, pw, int(start), int(end), feats, off, pmax, pmin, float(sign),
                     _bins_workspace(off.size - 1))


def pair_histograms_parallel(codes: np.ndarray, pa: np.ndarray, pb: np.ndarray, pw: np.ndarray, start: int,
                             end: int, off: np.ndarray, pmax: np.ndarray, pmin: np.ndarray, n_blocks: int,
                             bins: np.ndarray | None = None) -> None:
    """:func:`pair_histograms` over every feature (``sign = 1``) in ``n_blocks`` blocks of features on
    numba's threads: the same bits whatever the blocks and threads.

    Parameters
    ----------
    codes, pa, pb, pw, start, end, off, pmax, pmin
        As :func:`pair_histograms` (every feature).
    n_blocks : int
        Blocks of features (clipped to ``1..F``), one ``prange`` iteration each.
    bins : uint32 array (>= blocks, 3, >= F), optional
        The kernel's workspace (any contents; `lrank.weak.tree.TreeWorkspace.pair_bins`); made here if
        None.
    """
    _check_pairs(codes, pa, pb, pw, start, end)
    _check_bins(codes, None, off, pmax, pmin)
    F = codes.shape[1]
    blocks = max(1, min(F, int(n_blocks)))
    if bins is None:
        bins = np.empty((blocks, 3, max(F, 1)), dtype=np.uint32)
    if bins.dtype != np.uint32 or bins.ndim != 3 or bins.shape[0] < blocks or bins.shape[1] != 3 \
            or bins.shape[2] < F or not bins.flags.c_contiguous:
        raise ValueError(f"bins must be a C-contiguous uint32 array (>= {blocks}, 3, >= {F})")
    _pair_histograms_parallel(codes, pa, pb, pw, int(start), int(end), off, pmax, pmin, int(n_blocks), bins)


def pair_histograms_global(gbin: np.ndarray, pa: np.ndarray, pb: np.ndarray, pw: np.ndarray, start: int,
                           end: int, pmax: np.ndarray, pmin: np.ndarray, sign: float = 1.0) -> None:
    """:func:`pair_histograms` over every feature of global bin indices ``gbin`` (uint16 (n, F),
    ``off[f] + code``; `lrank.weak.tree.TreeWorkspace.global_bins`): the same bins, the same bits."""
    if sign not in (1.0, -1.0):
        raise ValueError("sign must be 1.0 or -1.0")
    if gbin.dtype != np.uint16:
        raise ValueError("gbin must be uint16 global bin indices")
    _check_pairs(gbin, pa, pb, pw, start, end)
    top = int(gbin.max()) + 1 if gbin.size else 0
    for buf in (pmax, pmin):
        if buf.dtype != np.float64 or buf.ndim != 1 or buf.size < top:
            raise ValueError(f"histogram buffers must be float64 with at least {top} bins")
    _pair_histograms_global(gbin, pa, pb, pw, int(start), int(end), pmax, pmin, float(sign), True,
                            np.empty((2, max(gbin.shape[1], 1)), dtype=np.uint16))


def pmin_from_weights(codes: np.ndarray, u: np.ndarray, rows: np.ndarray, start: int, end: int,
                      off: np.ndarray, pmax: np.ndarray, pmin: np.ndarray, feats: np.ndarray | None = None,
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
    off, feats
        As :func:`pair_histograms`.
    pmax : float64 array
        The node's pair histogram by larger code.
    pmin : float64 array
        Overwritten (its first ``off[-1]`` bins).
    gbin : uint16 array (n, F), optional
        Global bin indices ``off[f] + codes[:, f]`` (every feature): read instead of ``codes``.
    """
    _check_bins(codes, feats, off, pmax, pmin)
    u = np.ascontiguousarray(u, dtype=np.float64)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    if u.shape != (codes.shape[0],) or not 0 <= start <= end <= rows.size:
        raise ValueError("u must hold one weight per document and rows must contain start:end")
    if end > start and (rows[start:end].min() < 0 or rows[start:end].max() >= codes.shape[0]):
        raise ValueError("rows must index documents")
    use_gbin = gbin is not None
    if use_gbin and (gbin.dtype != np.uint16 or gbin.shape != codes.shape or feats is not None):
        raise ValueError("gbin must be uint16 global bin indices of every feature, shaped as codes")
    g = gbin if use_gbin else np.zeros((1, 1), dtype=np.uint16)
    _pmin_from_weights(codes, g, use_gbin, off, feats, u, rows, int(start), int(end), pmax, pmin)


def sibling_pair_histograms(codes: np.ndarray, pa: np.ndarray, pb: np.ndarray, pw: np.ndarray,
                            small: tuple[int, int], crossing: tuple[int, int], off: np.ndarray,
                            pmax_s: np.ndarray, pmin_s: np.ndarray, pmax_p: np.ndarray,
                            pmin_p: np.ndarray, feats: np.ndarray | None = None) -> None:
    """The smaller child's pair histograms (``small`` = its pair range, added into ``pmax_s``/``pmin_s``)
    and the larger child's in place of the parent's: parent - ``crossing`` pairs - smaller child."""
    _check_pairs(codes, pa, pb, pw, *small)
    _check_pairs(codes, pa, pb, pw, *crossing)
    _check_bins(codes, feats, off, pmax_s, pmin_s, pmax_p, pmin_p)
    _sibling_pair_histograms(codes, pa, pb, pw, int(small[0]), int(small[1]), int(crossing[0]),
                             int(crossing[1]), feats, off, pmax_s, pmin_s, pmax_p, pmin_p,
                             _bins_workspace(off.size - 1))


def partition_pairs(pa: np.ndarray, pb: np.ndarray, pw: np.ndarray, start: int, end: int,
                    leaf_of: np.ndarray, left_id: int, right_id: int) -> tuple[int, int]:
    """Reorder the pairs ``start:end`` in place: left child's, right child's, crossing (module docstring).

    ``leaf_of`` gives each document's node after the split. Returns ``(mid, new_end)``."""
    if not (pa.shape == pb.shape == pw.shape) or not 0 <= start <= end <= pa.size:
        raise ValueError("pa, pb, pw must have one length and contain start:end")
    if end > start and (min(pa[start:end].min(), pb[start:end].min()) < 0
                        or max(pa[start:end].max(), pb[start:end].max()) >= leaf_of.size):
        raise ValueError("pair documents must index leaf_of")
    n = end - start
    ta, tb, tw = np.empty(n, dtype=pa.dtype), np.empty(n, dtype=pb.dtype), np.empty(n, dtype=pw.dtype)
    mid, new_end = _partition_pairs(pa, pb, pw, int(start), int(end), leaf_of, int(left_id), int(right_id),
                                    ta, tb, tw)
    return int(mid), int(new_end)


def warmup() -> None:
    """Compile the pair-histogram kernels on a toy matrix."""
    codes = np.array([[1, 2], [2, 1], [0, 1]], dtype=np.uint8)
    pa = np.array([0, 2], dtype=np.int64)
    pb = np.array([1, 1], dtype=np.int64)
    pw = np.ones(2)
    off = np.array([0, 3, 6], dtype=np.int64)
    pm = np.zeros(6)
    pair_histograms(codes, pa, pb, pw, 0, 2, off, pm, pm.copy())
    feats = np.array([1], dtype=np.int64)
    pair_histograms(codes, pa, pb, pw, 0, 2, off[:2], pm, pm.copy(), feats=feats, sign=-1.0)
    sibling_pair_histograms(codes, pa, pb, pw, (0, 1), (1, 2), off, pm, pm.copy(), np.ones(6), np.ones(6))
    sibling_pair_histograms(codes, pa, pb, pw, (0, 1), (1, 2), off[:2], pm, pm.copy(), np.ones(6),
                            np.ones(6), feats=feats)
    partition_pairs(pa, pb, pw, 0, 2, np.array([1, 1, 2], dtype=np.int64), 1, 2)
    gbin = (codes + off[:-1]).astype(np.uint16)
    pair_histograms_global(gbin, pa, pb, pw, 0, 2, pm, pm.copy())
    rows = np.arange(3, dtype=np.int64)
    pmin_from_weights(codes, np.ones(3), rows, 0, 3, off, pm, pm.copy())
    pmin_from_weights(codes, np.ones(3), rows, 0, 3, off[:2], pm, pm.copy(), feats=feats)

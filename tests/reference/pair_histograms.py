"""Plain-NumPy references for OLE's pair histograms and the partition of a node's pairs.

``numpy.add.at`` adds in index order, one term after another, so these sums have the kernels' bits
(each bin summed in pair order), not merely their values.
"""

from __future__ import annotations

import numpy as np


def pair_histograms(codes, pa, pb, pw, start, end, off, feats=None, sign=1.0, pmax=None, pmin=None):
    """``pmax[off[t] + max(code_a, code_b)] += sign * w`` and ``pmin`` at the smaller code, for every pair
    ``start:end`` and feature ``feats[t]`` (all features when None), added into the given buffers."""
    feats = np.arange(codes.shape[1]) if feats is None else np.asarray(feats)
    pmax = np.zeros(off[-1]) if pmax is None else pmax
    pmin = np.zeros(off[-1]) if pmin is None else pmin
    a, b, w = pa[start:end], pb[start:end], sign * pw[start:end]
    idx_max = np.empty((end - start, feats.size), dtype=np.int64)
    idx_min = np.empty_like(idx_max)
    for t, f in enumerate(feats):
        ca, cb = codes[a, f].astype(np.int64), codes[b, f].astype(np.int64)
        idx_max[:, t] = off[t] + np.maximum(ca, cb)
        idx_min[:, t] = off[t] + np.minimum(ca, cb)
    # pair by pair, every feature of a pair before the next pair: the order of the kernels
    np.add.at(pmax, idx_max.ravel(), np.repeat(w, feats.size))
    np.add.at(pmin, idx_min.ravel(), np.repeat(w, feats.size))
    return pmax, pmin


def partition_pairs(pa, pb, pw, start, end, leaf_of, left_id, right_id):
    """The pairs ``start:end`` reordered: both documents in ``left_id``, both in ``right_id``, then the
    rest (crossing), each group in its original order; returns the three arrays and (mid, new_end)."""
    sl = slice(start, end)
    la, lb = leaf_of[pa[sl]], leaf_of[pb[sl]]
    groups = [(la == lb) & (la == left_id), (la == lb) & (la == right_id), la != lb]
    order = np.concatenate([np.flatnonzero(g) for g in groups])
    n_l, n_r = int(groups[0].sum()), int(groups[1].sum())
    return (pa[sl][order], pb[sl][order], pw[sl][order]), (start + n_l, start + n_l + n_r)

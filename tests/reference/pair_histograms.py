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


def ole_feature_best(hist, off, f, min_data, min_hess, pmax, pmin, p_total, tot, parent_score, h_unit):
    """OLE's best threshold on feature ``f`` with pairs, one bin after another in plain Python floats:
    the gain ``G_l^2 / h_l + G_r^2 / h_r - parent_score`` on the exact second derivatives
    ``h_l = H_l - 2 pmax_l``, ``h_r = H_r - 2 (p_total - pmin_l)`` (Example 3-4), for thresholds with at
    least ``min_data`` documents and ``min_hess`` on each side; an empty bin is skipped, the scan stops at
    the first counted bin whose right side is too small; the first strict maximum. Returns ``(gain, j)``,
    ``j = -1`` when no threshold is valid."""
    o, nb = int(off[f]), int(off[f + 1] - off[f])
    two = hist.shape[1] == 2
    G, H, N = float(tot[0]), float(tot[1]), float(tot[2])
    md = min_data - 0.5
    inv_unit = 1.0 / h_unit if h_unit > 0.0 else 0.0
    gl = hl = nl = bl = cmin = 0.0
    best, bj = -np.inf, -1
    for b in range(nb - 1):
        h1 = float(hist[o + b, 1])
        if h1 == 0.0 and (two or float(hist[o + b, 2]) == 0.0):
            continue
        gl += float(hist[o + b, 0])
        hl += h1
        nl = hl * inv_unit if two else nl + float(hist[o + b, 2])
        bl += float(pmax[o + b])
        cmin += float(pmin[o + b])
        if nl < md:
            continue
        if N - nl < md:
            break
        hle = hl - 2.0 * bl
        hre = (H - hl) - 2.0 * (p_total - cmin)
        if hle < min_hess or hre < min_hess:
            continue
        gr = G - gl
        g = ((gl * gl / hle if hle > 0.0 else 0.0) + (gr * gr / hre if hre > 0.0 else 0.0)) - parent_score
        if g > best:
            best, bj = g, b
    return best, bj

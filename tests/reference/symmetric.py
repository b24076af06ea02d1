"""Symmetric (oblivious) trees grown in plain Python and NumPy, loops only: the oracle of
``lrank.trees.grower.TreeGrower.grow_symmetric`` and its kernels.

Per level ``d`` (``2^d`` leaves, every row starting in leaf 0): each leaf's histogram of ``(grad, h)`` per
candidate feature and bin (``h`` the hessian for "rwse", 1 for "se"), and each leaf's totals. The root's
are summed over the tree's rows in increasing row order; below it, of the two children ``2p, 2p + 1`` of
each leaf ``p`` of the level above, the one with fewer of the tree's rows (the left one on a tie) is
summed so, and its sibling's is its parent's minus it, per bin and channel (sibling subtraction: the
kernels' arithmetic, so the histograms agree bit for bit; `level_histograms`). For every candidate
``(f, j)`` with ``j < n_bins[f] - 1`` (features in increasing order, bins in order) the Cosine score
(CatBoost) ``sum G a / sqrt(sum H a^2)``, ``a = G / (H + lam)``, over both sides of every leaf with ``H >
min_hess`` (the left side's sums cumulated bin by bin, the right side's the leaf total minus the left),
plus ``sigma noise[d, k]`` (``k`` the candidate's histogram row among the candidate features' bins); a later
candidate wins only when larger by more than ``TIE_RTOL |best|``. Then every row moves to leaf ``2 l +
[code > j]``. Leaves: ``-G / (H + lam)`` over the tree's rows (the hessian), 0 where ``H <= min_hess``.
"""

from __future__ import annotations

import math

import numpy as np

from tests.reference.trees import TIE_RTOL


def _beats(g, best, scale):
    return g > best and (best == -math.inf or g - best > TIE_RTOL * scale)


def _build(codes, feats, off, g, hs, rows):
    """One leaf's histogram and totals summed over ``rows`` in their order."""
    hist = [[0.0, 0.0] for _ in range(off[-1])]
    tot = [0.0, 0.0]
    for r in rows:
        tot[0] += g[r]
        tot[1] += hs[r]
        for t, f in enumerate(feats):
            b = off[t] + int(codes[r, f])
            hist[b][0] += g[r]
            hist[b][1] += hs[r]
    return hist, tot


def level_histograms(codes, feats, off, g, hs, rows, leaf, L, parent=None, parent_tot=None):
    """The ``L`` leaves' histograms and totals of one level (lists: ``hist[l][b] = [G, H]``, ``tot[l] =
    [G, H]``) over the rows ``rows`` (their order), ``leaf[r]`` each row's leaf; ``L >= 2`` needs the
    level above's ``parent``, ``parent_tot``: per parent the child with fewer rows (left on a tie) is
    built, its sibling is the parent's minus it."""
    if L == 1:
        h, t = _build(codes, feats, off, g, hs, rows)
        return [h], [t]
    hist = [None] * L
    tot = [None] * L
    for p in range(L // 2):
        kids = ([r for r in rows if leaf[r] == 2 * p], [r for r in rows if leaf[r] == 2 * p + 1])
        s = 0 if len(kids[0]) <= len(kids[1]) else 1
        h, t = _build(codes, feats, off, g, hs, kids[s])
        hist[2 * p + s], tot[2 * p + s] = h, t
        hist[2 * p + 1 - s] = [[parent[p][b][0] - h[b][0], parent[p][b][1] - h[b][1]] for b in range(off[-1])]
        tot[2 * p + 1 - s] = [parent_tot[p][0] - t[0], parent_tot[p][1] - t[1]]
    return hist, tot


def grow_symmetric(codes, n_bins, grad, hess, depth, *, criterion="rwse", min_hess=1e-3, lam=0.0,
                   features=None, sample=None, sigma=0.0, noise=None, levels=None):
    """Return ``(splits, values, leaf_of)``: the ``(feature, bin)`` of each level grown, the leaf values
    (``2^levels``, heap order from the first leaf) and each row's leaf node (``2^levels - 1 + leaf``).
    ``levels``, a list, gets each level's ``(hist, tot)`` (`level_histograms`)."""
    n, F = codes.shape
    feats = list(range(F)) if features is None else sorted(set(int(f) for f in features))
    rows = list(range(n)) if sample is None else sorted(int(r) for r in sample)
    hs = [1.0] * n if criterion == "se" else [float(v) for v in hess]
    g = [float(v) for v in grad]
    off = [0]
    for f in feats:
        off.append(off[-1] + int(n_bins[f]))
    leaf = [0] * n
    splits = []
    hist = tot = None
    for d in range(depth):
        L = 1 << d
        hist, tot = level_histograms(codes, feats, off, g, hs, rows, leaf, L, hist if d else None,
                                     tot if d else None)
        if levels is not None:
            levels.append((hist, tot))
        best, choice = -math.inf, None
        for t, f in enumerate(feats):
            acc = [[0.0, 0.0] for _ in range(L)]
            for j in range(int(n_bins[f]) - 1):
                num = den = 0.0
                for lf in range(L):
                    acc[lf][0] += hist[lf][off[t] + j][0]
                    acc[lf][1] += hist[lf][off[t] + j][1]
                    for gg, hh in ((acc[lf][0], acc[lf][1]),
                                   (tot[lf][0] - acc[lf][0], tot[lf][1] - acc[lf][1])):
                        if hh > min_hess:
                            a = gg / (hh + lam)
                            num += gg * a
                            den += hh * a * a
                s = num / math.sqrt(den) if den > 0.0 else 0.0
                if noise is not None:
                    s += sigma * float(noise[d, off[t] + j])
                if _beats(s, best, abs(best)):
                    best, choice = s, (f, j)
        if choice is None:
            break
        splits.append(choice)
        f, j = choice
        leaf = [2 * leaf[i] + (1 if int(codes[i, f]) > j else 0) for i in range(n)]
    Lf = 1 << len(splits)
    G = [0.0] * Lf
    H = [0.0] * Lf
    for r in rows:
        G[leaf[r]] += g[r]
        H[leaf[r]] += float(hess[r])
    values = np.array([-G[k] / (H[k] + lam) if H[k] > min_hess else 0.0 for k in range(Lf)])
    return splits, values, np.array(leaf, dtype=np.int64) + (Lf - 1)

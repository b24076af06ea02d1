"""Plain-NumPy references for the tree-fitting kernels, written straight from the papers.

* :func:`lambdas` — LambdaMART lambdas and weights (Burges' lambdas of NDCG@k), one pair at a time.
* :func:`criterion` — SE (Eq. 3), WSE (Eq. 7-8), RWSE (Eq. 9) and OLE (Eq. 13) of one candidate split,
  each computed literally from its formula (OLE's exact second derivative from the pairwise Hessian
  ``sum_ij w_ij ([i in D_l] - [j in D_l])^2``, a different route from the kernel's cancellation).
* :func:`fit_tree` — a whole tree grown by brute force over every (feature, threshold) of every leaf.
* :func:`histogram_split_scan` — the kernels' split scan over a flat histogram, bin by bin in the
  kernels' summation order, every valid threshold's score divided out (no bar).
"""

from __future__ import annotations

import numpy as np


def lambdas(y, qptr, scores, k=10, sigma=1.0, gains=None):
    """Lambdas, weights and the pair list ``[(i, j, w_ij)]`` for the current scores; ``gains`` the gain of
    each label ``0, 1, ...`` (a table: ``g(y) = gains[y]``; None: ``g(y) = 2^y - 1``)."""

    def gain(v):
        return 2 ** v - 1 if gains is None else float(gains[int(v)])

    n = len(y)
    lam = np.zeros(n)
    w = np.zeros(n)
    pairs = []
    for q in range(len(qptr) - 1):
        lo, hi = qptr[q], qptr[q + 1]
        m = hi - lo
        if m < 2:
            continue
        s = scores[lo:hi]
        yy = y[lo:hi].astype(float)
        order = sorted(range(m), key=lambda t: (-s[t], t))  # stable: ties by document order
        rank = np.empty(m, dtype=int)
        rank[order] = np.arange(m)
        kk = m if k <= 0 else min(k, m)
        disc = np.array([1 / np.log2(r + 2) if r < kk else 0.0 for r in rank])
        ideal = sorted(yy, reverse=True)
        max_dcg = sum(gain(ideal[r]) / np.log2(r + 2) for r in range(kk))
        if max_dcg == 0:
            continue
        for a in range(m):
            for b in range(m):
                if yy[a] > yy[b]:
                    dz = abs((disc[a] - disc[b]) * (gain(yy[a]) - gain(yy[b]))) / max_dcg
                    if dz == 0:
                        continue
                    rho = 1 / (1 + np.exp(sigma * (s[a] - s[b])))
                    lam[lo + a] += sigma * dz * rho
                    lam[lo + b] -= sigma * dz * rho
                    h = sigma**2 * dz * rho * (1 - rho)
                    w[lo + a] += h
                    w[lo + b] += h
                    pairs.append((lo + a, lo + b, h))
    return lam, w, pairs


def criterion(name, grad, hess, in_left, in_node, pairs=None, reg_lambda=0.0):
    """The error of one split (smaller is better), each criterion from its own equation.

    ``in_left`` and ``in_node`` are boolean masks over all documents; the right side is
    ``in_node & ~in_left``.
    """
    L = in_left & in_node
    R = in_node & ~in_left
    if name == "se":  # Eq. 3 with r = -L'
        r = -grad
        return ((r[L] - r[L].mean()) ** 2).sum() + ((r[R] - r[R].mean()) ** 2).sum()
    if name == "wse":  # Eq. 6-8
        w = hess
        r = -grad / np.maximum(hess, 1e-12)

        def part(M):
            rb = (w[M] * r[M]).sum() / w[M].sum()
            return (w[M] * (r[M] - rb) ** 2).sum()

        return part(L) + part(R) - part(in_node)
    if name == "rwse" and reg_lambda:  # Eq. 9 with an L2 penalty: each side's penalised second-order
        def obj(M):  # objective sum_i (g_i v + h_i v^2 / 2) + reg_lambda v^2 / 2 at its minimiser v
            v = -grad[M].sum() / (hess[M].sum() + reg_lambda)
            return (grad[M] * v + hess[M] * v * v / 2).sum() + reg_lambda * v * v / 2

        return 2.0 * (obj(L) + obj(R) - obj(in_node))
    if name == "rwse":  # Eq. 9
        S = lambda M: (hess[M] * (-grad[M] / hess[M])).sum() ** 2 / hess[M].sum()  # noqa: E731
        return -(S(L) + S(R)) + S(in_node)
    if name == "ole":  # Eq. 13
        if pairs is None:
            h = lambda M: hess[M].sum()  # noqa: E731
        else:
            def h(M):
                return sum(wt * (float(M[a]) - float(M[b])) ** 2 for a, b, wt in pairs)
        return -(grad[L].sum() ** 2 / h(L) + grad[R].sum() ** 2 / h(R))
    raise ValueError(name)


def _hess_of(M, hess, pairs):
    if pairs is None:
        return hess[M].sum()
    return sum(wt * (float(M[a]) - float(M[b])) ** 2 for a, b, wt in pairs)


def best_split(codes, grad, hess, in_node, crit, min_data=1, min_hess=0.0, pairs=None, features=None,
               reg_lambda=0.0):
    """Brute force: ``(error, f, j)`` minimising ``criterion`` over valid splits ``code <= j``."""
    best = (np.inf, -1, -1)
    F = codes.shape[1]
    for f in range(F) if features is None else features:
        for j in range(int(codes[:, f].max()) + 1):
            left = codes[:, f] <= j
            L, R = left & in_node, in_node & ~left
            if L.sum() < min_data or R.sum() < min_data:
                continue
            p = pairs if crit == "ole" else None
            if _hess_of(L, hess, p) < min_hess or _hess_of(R, hess, p) < min_hess:
                continue
            e = criterion(crit, grad, hess, left, in_node, p, reg_lambda)
            if e < best[0] - 1e-12 * max(1.0, abs(e)):
                best = (e, f, j)
    return best


def fit_tree(codes, grad, hess, max_leaves, crit="se", min_data=1, min_hess=0.0, pairs=None,
             growth="breadth_first", reg_lambda=0.0):
    """Grow a tree by brute force; returns the list of leaves as boolean masks and their Newton values.

    Best-first splits the leaf whose split lowers the criterion the most relative to not splitting
    (for SE: ``SE(node) - SE(v)``), breadth-first splits leaves in level order, depth-first in
    pre-order (a node's left child and all its descendants before its right child). ``reg_lambda``
    (``"rwse"``): the L2 penalty on the leaf values, in the split's objective and the values.
    """
    n = codes.shape[0]
    leaves = [np.ones(n, bool)]

    def gain(M):
        e, f, j = best_split(codes, grad, hess, M, crit, min_data, min_hess, pairs, reg_lambda=reg_lambda)
        if f < 0:
            return -np.inf, f, j
        if crit == "se":
            r = -grad[M]
            base = ((r - r.mean()) ** 2).sum()
        elif crit == "wse":
            base = 0.0
        elif crit == "rwse":
            base = 0.0
        else:
            p = pairs if crit == "ole" else None
            hh = _hess_of(M, hess, p)
            base = -(grad[M].sum() ** 2 / hh) if hh >= max(min_hess, 1e-300) else 0.0
        return base - e, f, j

    if growth in ("breadth_first", "depth_first"):
        queue = [0]  # leaf indices; the left child keeps its parent's index
        while queue and len(leaves) < max_leaves:
            i = queue.pop(0) if growth == "breadth_first" else queue.pop()
            g, f, j = gain(leaves[i])
            if f < 0 or not g > 1e-12:
                continue
            M = leaves[i]
            leaves[i] = M & (codes[:, f] <= j)
            leaves.append(M & (codes[:, f] > j))
            queue += [i, len(leaves) - 1] if growth == "breadth_first" else [len(leaves) - 1, i]
    else:
        while len(leaves) < max_leaves:
            cands = [(gain(M), i) for i, M in enumerate(leaves)]
            cands = [(g, i, f, j) for (g, f, j), i in cands if f >= 0 and g > 1e-12]
            if not cands:
                break
            g, i, f, j = max(cands, key=lambda c: c[0])
            M = leaves[i]
            leaves[i] = M & (codes[:, f] <= j)
            leaves.append(M & (codes[:, f] > j))
    values = [(-grad[M].sum() / (hess[M].sum() + reg_lambda)) if hess[M].sum() > 0 else 0.0 for M in leaves]
    return leaves, values


#: the kernels' near-tie rule (lrank._kernels.splitting.TIE_RTOL)
TIE_RTOL = 1e-10


def histogram_split_scan(hist, off, crit, min_data, min_hess, tot, parent_score, h_unit, reg_lambda=0.0):
    """``(gain, feature, j)`` of the best split read from a flat histogram (rows ``off[f]:off[f+1]`` per
    feature; channels G, H[, N]), SE (crit 0, Eq. 3) or RWSE (crit 2, Eq. 9): prefix sums in bin order,
    an empty bin's sums masked, ``N_l, N_r >= min_data`` and ``H_l, H_r >= min_hess``, the first maximum
    per feature, then over features (feature order), a later candidate winning only when larger by more
    than ``TIE_RTOL`` times ``|best|`` (within a feature) or ``|best| + |parent_score|`` (over features), as
    the kernels do. Every valid score is computed. RWSE with ``reg_lambda``: ``G^2 / (H + reg_lambda)`` per
    side (the L2 leaf penalty), the ``min_hess`` test on ``H``."""
    C = hist.shape[1]
    G, H, N = (np.float64(v) for v in tot[:3])
    md = min_data - 0.5
    inv_unit = 1.0 / h_unit if h_unit > 0.0 else 0.0
    best, bf, bj = -np.inf, -1, -1
    with np.errstate(all="ignore"):
        for f in range(len(off) - 1):
            gl = hl = nl = np.float64(0.0)
            fb, fj = -np.inf, -1
            for b in range(off[f], off[f + 1] - 1):
                if C == 2:
                    hb = hist[b, 1]
                    hl += hb
                    nl = hl * inv_unit
                    gl += hist[b, 0] * (hb != 0.0)
                else:
                    full = hist[b, 2] != 0.0
                    hl += hist[b, 1] * full
                    nl += hist[b, 2]
                    gl += hist[b, 0] * full
                nr, hr, gr = N - nl, H - hl, G - gl
                if nl < md:
                    continue
                if nr < md:
                    break
                if hl < min_hess or hr < min_hess:
                    continue
                g = gl * gl / nl + gr * gr / nr if crit == 0 else \
                    gl * gl / (hl + reg_lambda) + gr * gr / (hr + reg_lambda)
                if g > fb and (fb == -np.inf or g - fb > TIE_RTOL * abs(fb)):
                    fb, fj = g, b - off[f]
            if fj >= 0 and fb - parent_score > best and (
                    best == -np.inf or fb - parent_score - best > TIE_RTOL * (abs(best) + abs(parent_score))):
                best, bf, bj = fb - parent_score, f, fj
    return best, bf, bj


def walk_layout(feature, split, left, right):
    """`lrank._kernels.predictor.walk_layout` in NumPy: ``(feature, split, base)``, or a ValueError naming the
    first internal node (row-major) whose children are not side by side after it."""
    internal = left >= 0
    node = np.arange(left.shape[1])
    bad = internal & ((right != left + 1) | (left <= node))
    if bad.any():
        t, n = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"tree {t}, node {n}")
    base = np.where(internal, left, node)
    return (np.where(internal, feature, 0).astype(np.int64),
            np.where(internal, split, np.inf).astype(np.float64), base.astype(np.int64))

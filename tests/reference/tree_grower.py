"""The tree engine grown node by node in plain NumPy: the oracle of ``lrank._kernels.grower``, bit for bit.

The engine's path before it became one kernel call (Python picks each node, NumPy does each step), with
every sum in the order the kernels promise, so its trees have the kernels' bits whatever their layout:

* a node's histogram: per feature and channel ``numpy.add.at`` over the node's rows in row order (repeated
  indices are added one after another); the larger child's is its parent's minus the smaller child's;
* a node's totals: feature 0's bins summed left to right from 0.0 (the count ``floor(H / h + 0.5)`` for
  a constant hessian ``h``); NDCGBoost's weight sum ``S``: ``numpy.sum`` of the node's weights in row order;
* OLE's pair histograms: ``numpy.add.at`` of each pair's weight at its larger code, in pair order, and
  ``pmin = U - pmax`` with ``U`` the node's documents' pair weights (``add.at`` in row order); the larger
  child's ``pmax`` by subtraction (parent, minus the crossing pairs, minus the smaller child) when fewer
  crossing pairs than its own, as the engine chooses; a node's pair weight summed in pair order;
* the scans without any bar: every valid threshold's score computed (`histogram_split_scan` of
  ``tests/reference/trees.py`` for SE and RWSE; WSE, OLE and NDCGBoost's rule written out here), a later
  candidate winning only when larger by more than ``TIE_RTOL`` times ``|best| + |score(node)|``; NDCGBoost:
  the first candidate within ``tol = TIE_RTOL sum |gamma|`` of the node's largest gain;
* growth: best first (the largest gain above ``tol``, 0 but for NDCGBoost, near-ties within ``tol`` to
  the smaller node id; with a constraint every open leaf searched again for each split's feature),
  breadth first (level order, searched when taken) or depth first (pre-order: a stack, the left child on
  top), node ids in split order, leaf values ``-G / H``;
* bagging (``sample``): the root holds the sampled rows in increasing order, everything above sees those
  only (NDCGBoost's ``tol`` their weights'); every other row is sent down the finished tree, ``code <= bin``
  to the left, one row and one node at a time.
"""

from __future__ import annotations

import numpy as np

from tests.reference.trees import TIE_RTOL, histogram_split_scan


def _beats(g, best, scale):
    return g > best and (best == -np.inf or g - best > TIE_RTOL * scale)


def _hist(codes, vals, rows, feats, off):
    out = np.zeros((off[-1], vals.shape[1]))
    for t, f in enumerate(feats):
        for c in range(vals.shape[1]):
            np.add.at(out[:, c], off[t] + codes[rows, f].astype(np.int64), vals[rows, c])
    return out


def _totals(h, off, h_unit, f0=0):
    t = np.zeros(4)
    for c in range(h.shape[1]):
        acc = 0.0
        for b in range(off[f0], off[f0 + 1]):
            acc += h[b, c]
        t[c] = acc
    if h.shape[1] == 2:
        t[2] = np.floor(t[1] / h_unit + 0.5)
    return t


def _node_score(crit, t, P, min_hess, reg_lambda=0.0):
    G, H, N, Q = t
    if crit == "se":
        return G * G / N if N > 0.0 else 0.0
    if crit == "classify":
        return G if (G > 0.0 or G != G) else 0.0
    h = H - 2.0 * P
    if h >= min_hess and h > 0.0:
        return G * G / h - Q if crit == "wse" else G * G / (h + reg_lambda)
    return 0.0


def _wse_scan(h, off, md, min_hess, t, score):
    G, H, N, Q = t
    best, bf, bj = -np.inf, -1, -1
    for f in range(len(off) - 1):
        gl = hl = nl = ql = 0.0
        fb, fj = -np.inf, -1
        for b in range(off[f], off[f + 1] - 1):
            if h[b, 1] == 0.0 and h[b, 2] == 0.0:
                continue
            gl += h[b, 0]
            hl += h[b, 1]
            nl += h[b, 2]
            ql += h[b, 3]
            if nl < md:
                continue
            if N - nl < md:
                break
            hr = H - hl
            if hl < min_hess or hr < min_hess:
                continue
            sl = gl * gl / hl - ql if hl > 0.0 else 0.0
            gr = G - gl
            sr = gr * gr / hr - (Q - ql) if hr > 0.0 else 0.0
            g = sl + sr - score
            if _beats(g, fb, abs(fb) + abs(score)):
                fb, fj = g, b - off[f]
        if fj >= 0 and _beats(fb, best, abs(best) + abs(score)):
            best, bf, bj = fb, f, fj
    return best, bf, bj


def _ole_scan(h, off, md, min_hess, t, pmax, pmin, P, score, h_unit):
    G, H, N, _ = t
    inv = 1.0 / h_unit if h_unit > 0.0 else 0.0
    two = h.shape[1] == 2
    best, bf, bj = -np.inf, -1, -1
    for f in range(len(off) - 1):
        gl = hl = nl = bl = cm = 0.0
        fb, fj = -np.inf, -1
        for b in range(off[f], off[f + 1] - 1):
            if h[b, 1] == 0.0 and h[b, 1 if two else 2] == 0.0:
                continue
            gl += h[b, 0]
            hl += h[b, 1]
            nl = hl * inv if two else nl + h[b, 2]
            bl += pmax[b]
            cm += pmin[b]
            if nl < md:
                continue
            if N - nl < md:
                break
            hle = hl - 2.0 * bl
            hre = (H - hl) - 2.0 * (P - cm)
            if hle < min_hess or hre < min_hess:
                continue
            gr = G - gl
            sl = gl * gl / hle if hle > 0.0 else 0.0
            sr = gr * gr / hre if hre > 0.0 else 0.0
            g = sl + sr - score
            if _beats(g, fb, abs(fb) + abs(score)):
                fb, fj = g, b - off[f]
        if fj >= 0 and _beats(fb, best, abs(best) + abs(score)):
            best, bf, bj = fb, f, fj
    return best, bf, bj


def _classify_scan(h, off, S, N, tol):
    top = S if (S > 0.0 or S != S) else 0.0
    mx = lambda x: x if (x > 0.0 or x != x) else 0.0  # noqa: E731
    cands = []  # (gain, feature, j) of every valid threshold with a finite gain, in (feature, bin) order
    for f in range(len(off) - 1):
        sl = nl = 0.0
        for b in range(off[f], off[f + 1] - 1):
            sl += h[b, 0]
            nl += h[b, 2]
            if nl > 0.0 and N - nl > 0.0:
                g = mx(sl) + mx(S - sl) - top
                if np.isfinite(g):
                    cands.append((g, f, b - off[f]))
    if not cands:
        return -np.inf, -1, -1
    top_gain = max(c[0] for c in cands)
    return next(c for c in cands if c[0] >= top_gain - tol)


def grow(codes, grad, hess, *, num_leaves, criterion="se", min_data=20, min_hess=1e-3, growth="best_first",
         pairs=None, constraint=None, n_bins=None, reg_lambda=0.0, features=None, sample=None):
    """Grow one tree; returns ``dict(feature, bin, left, right, gain, value, count, sum_grad, sum_hess,
    leaf_of)`` (node arrays in split order). ``criterion`` "se", "wse", "rwse", "ole" (with ``pairs`` the
    exact second derivatives) or "classify" (NDCGBoost: ``grad`` holds ``gamma``). ``reg_lambda`` (RWSE): the
    L2 leaf penalty, ``G^2 / (H + reg_lambda)`` per side and leaf values ``-G / (H + reg_lambda)``.
    ``features``: the features the tree may split on (feature subsampling); a node's totals are then the
    smallest of them's bins summed, as the engine sums its first histogram feature. ``sample``: the rows the
    tree is grown on (bagging); the others get the leaf their codes lead to."""
    codes = np.ascontiguousarray(codes)
    n, F = codes.shape
    grad = np.asarray(grad, dtype=np.float64)
    classify = criterion == "classify"
    hess = np.ones(n) if classify else np.asarray(hess, dtype=np.float64)
    if n_bins is None:
        n_bins = codes.max(axis=0).astype(np.int64) + 1
    use_pairs = pairs is not None and criterion == "ole"
    h0 = float(hess[0])
    const_h = not (criterion == "wse" or classify) and h0 > 0.0 and bool(np.all(hess == h0))
    h_unit = h0 if const_h else 0.0
    root = np.arange(n) if sample is None else np.sort(np.asarray(sample, dtype=np.int64))
    tol = TIE_RTOL * float(np.abs(grad[root]).sum()) if classify else 0.0
    C = 4 if criterion == "wse" else (2 if const_h else 3)
    vals = np.zeros((n, C))
    vals[:, 0] = grad
    vals[:, 1] = hess
    if C >= 3:
        vals[:, 2] = 1.0
    if C == 4:
        vals[:, 3] = grad * grad / np.maximum(hess, 1e-12)
    L = int(num_leaves)
    cons = None
    if constraint is not None:
        c = np.atleast_1d(np.asarray(constraint, dtype=np.int64))
        cons = np.repeat(c, L - 1) if np.ndim(constraint) == 0 else c
    feats = np.arange(F)  # every feature's histogram (a subset's bins are the same sums)
    allowed = feats if features is None else np.unique(np.asarray(features, dtype=np.int64))
    f0 = int(allowed[0])
    off = np.r_[0, np.cumsum(n_bins)].astype(np.int64)
    md = min_data - 0.5
    rows_of = {0: root}
    hist = {0: _hist(codes, vals, rows_of[0], feats, off)}
    tot = {0: _totals(hist[0], off, h_unit, f0)}
    if classify:
        tot[0][0] = np.sum(grad[rows_of[0]])
    ptot = {0: 0.0}
    built = {}
    pw_of = {}
    if use_pairs:
        pa, pb, pw = (np.asarray(a) for a in pairs)
        u = np.zeros(n)
        np.add.at(u, pa, pw)
        np.add.at(u, pb, pw)
        pw_of[0] = (pa.astype(np.int64), pb.astype(np.int64), pw.astype(np.float64))

    def pair_hist_into(pmax, pl):
        """``pmax`` plus each pair's weight at its larger code, pair after pair (per feature)."""
        a, b, w = pl
        for t, f in enumerate(feats):
            ca, cb = codes[a, f].astype(np.int64), codes[b, f].astype(np.int64)
            np.add.at(pmax, off[t] + np.maximum(ca, cb), w)
        return pmax

    def pair_hist(node, pl):
        return pair_hist_into(np.zeros(off[-1]), pl)

    def finish_pairs(node, pmax):
        U = np.zeros(off[-1])
        r = rows_of[node]
        for t, f in enumerate(feats):
            np.add.at(U, off[t] + codes[r, f].astype(np.int64), u[r])
        acc = 0.0
        for x in pw_of[node][2]:
            acc += x
        ptot[node] = acc
        built[node] = (pmax, U - pmax)

    if use_pairs:
        finish_pairs(0, pair_hist(0, pw_of[0]))
    score = {0: _node_score(criterion, tot[0], ptot[0], min_hess, reg_lambda)}
    nodes = {"feature": [-1], "bin": [-1], "left": [-1], "right": [-1], "gain": [0.0]}

    def search(node, fs):
        if len(rows_of[node]) < 2 * min_data or (use_pairs and node not in built):
            return -np.inf, -1, -1
        h, t = hist[node], tot[node]
        sub_off = np.r_[0, np.cumsum(n_bins[fs])].astype(np.int64)
        hs = np.concatenate([h[off[f]:off[f + 1]] for f in fs])
        if criterion in ("se", "rwse", "ole") and not use_pairs:
            g, f, j = histogram_split_scan(hs, sub_off, 0 if criterion == "se" else 2, min_data, min_hess, t,
                                           score[node], h_unit, reg_lambda)
        elif criterion == "wse":
            g, f, j = _wse_scan(hs, sub_off, md, min_hess, t, score[node])
        elif classify:
            g, f, j = _classify_scan(hs, sub_off, t[0], t[2], tol)
        else:
            pmax, pmin = built[node]
            pm = np.concatenate([pmax[off[f]:off[f + 1]] for f in fs])
            pn = np.concatenate([pmin[off[f]:off[f + 1]] for f in fs])
            g, f, j = _ole_scan(hs, sub_off, md, min_hess, t, pm, pn, ptot[node], score[node], h_unit)
        return g, (fs[f] if f >= 0 else -1), j

    def split(node, f, j, g):
        lt, rt = len(nodes["feature"]), len(nodes["feature"]) + 1
        r = rows_of.pop(node)
        go = codes[r, f] <= j
        rows_of[lt], rows_of[rt] = r[go], r[~go]
        small, large = (lt, rt) if go.sum() <= (~go).sum() else (rt, lt)
        hist[small] = _hist(codes, vals, rows_of[small], feats, off)
        hist[large] = hist[node] - hist[small]
        for c in (lt, rt):
            tot[c] = _totals(hist[c], off, h_unit, f0)
            if classify:
                tot[c][0] = np.sum(grad[rows_of[c]])
            ptot[c] = 0.0
        for k in ("feature", "bin", "left", "right", "gain"):
            nodes[k] += [-1, -1] if k != "gain" else [0.0, 0.0]
        nodes["feature"][node], nodes["bin"][node] = f, j
        nodes["left"][node], nodes["right"][node], nodes["gain"][node] = lt, rt, g
        if use_pairs:
            more = n_leaves + 1 < L
            need = {c: more and len(rows_of[c]) >= 2 * min_data for c in (lt, rt)}
            if need[lt] or need[rt]:
                a, b, w = pw_of[node]
                la = np.where(np.isin(a, rows_of[lt]), lt, rt)
                lb = np.where(np.isin(b, rows_of[lt]), lt, rt)
                inside = {c: (la == c) & (lb == c) for c in (lt, rt)}
                cross = la != lb
                for c in (lt, rt):
                    pw_of[c] = (a[inside[c]], b[inside[c]], w[inside[c]])
                np.subtract.at(u, a[cross], w[cross])
                np.subtract.at(u, b[cross], w[cross])
                if cross.sum() < len(pw_of[large][0]):
                    if need[large]:  # (parent - crossing pairs, one by one) - smaller child
                        ps = pair_hist(small, pw_of[small])
                        pl = pair_hist_into(built[node][0].copy(), (a[cross], b[cross], -w[cross]))
                        finish_pairs(small, ps)
                        finish_pairs(large, pl - ps)
                    else:
                        finish_pairs(small, pair_hist(small, pw_of[small]))
                else:
                    for c in (small, large):
                        if need[c]:
                            finish_pairs(c, pair_hist(c, pw_of[c]))
        for c in (lt, rt):
            score[c] = _node_score(criterion, tot[c], ptot[c], min_hess, reg_lambda)
        return lt, rt

    n_leaves, n_splits = 1, 0
    if growth == "best_first":
        open_leaves, best = [0], {}
        while n_leaves < L:
            fs = allowed if cons is None else cons[n_splits:n_splits + 1]
            for nd in open_leaves:
                if cons is not None or nd not in best:
                    best[nd] = search(nd, fs)
            node = None
            for nd in sorted(open_leaves):  # the largest gain above tol, (near-)ties to the smaller id
                g = best[nd][0]
                if best[nd][1] >= 0 and g > tol and (node is None or g > best[node][0] + tol):
                    node = nd
            if node is None:
                break
            g, f, j = best.pop(node)
            open_leaves.remove(node)
            open_leaves += list(split(node, f, j, g))
            n_leaves += 1
            n_splits += 1
    else:
        depth = growth == "depth_first"
        queue = [0]  # breadth first: a FIFO queue (level order); depth first: a stack (pre-order)
        while queue and n_leaves < L:
            node = queue.pop() if depth else queue.pop(0)
            fs = allowed if cons is None else cons[n_splits:n_splits + 1]
            g, f, j = search(node, fs)
            if f < 0 or not g > tol:
                continue
            lt, rt = split(node, f, j, g)
            queue += [rt, lt] if depth else [lt, rt]
            n_leaves += 1
            n_splits += 1
    k = len(nodes["feature"])
    left = np.array(nodes["left"], dtype=np.int64)
    G = np.array([tot[c][0] for c in range(k)])
    H = np.array([tot[c][1] for c in range(k)])
    if classify:
        value = np.where(G > 0, 1.0, 0.0)
    else:
        value = np.where(H > 0, -G / np.where(H > 0, H + reg_lambda, 1.0), 0.0)
    value[left >= 0] = 0.0
    leaf_of = np.full(n, -1, dtype=np.int64)
    for c, r in rows_of.items():
        leaf_of[r] = c
    for i in np.flatnonzero(leaf_of < 0):  # out of bag: down the tree by its codes
        nd = 0
        while left[nd] >= 0:
            f = nodes["feature"][nd]
            nd = left[nd] if codes[i, f] <= nodes["bin"][nd] else nodes["right"][nd]
        leaf_of[i] = nd
    count = np.array([0] * k, dtype=np.int64)
    for c in range(k):  # a node's documents: its leaves' documents
        stack = [c]
        while stack:
            d = stack.pop()
            if left[d] < 0:
                count[c] += len(rows_of[d])
            else:
                stack += [left[d], nodes["right"][d]]
    return dict(feature=np.array(nodes["feature"], dtype=np.int64),
                bin=np.array(nodes["bin"], dtype=np.int64), left=left,
                right=np.array(nodes["right"], dtype=np.int64), gain=np.array(nodes["gain"]),
                value=value, count=count, sum_grad=G, sum_hess=H, leaf_of=leaf_of)

"""One-feature stumps of BoostingTree's constrained steps: LambdaMART's SE stump (ALGORITHMS.md 6) and
NDCGBoost's classifier stump (ALGORITHMS.md 7, `_classifier_split`).

A constrained LambdaMART step with two leaves splits on one given feature ``f`` only. The general tree
(`lrank.weak.tree.RegressionTree`) fits it by histograms of every channel and a scan; these kernels
fit the same stump from two binned columns (feature ``f`` and feature 0, whose histogram gives the
node totals), with every sum taken in the order the tree takes it, so the fitted stump is the tree's
bit for bit (``tests/test_boostingtree.py``):

* channels per document: ``(-lambda_i, w_i, 1)``, the gradient ``L' = -lambda``, the hessian and a count;
* a histogram bin sums its documents in document order; node totals ``G, H, N`` sum the bins of
  feature 0 left to right, starting from the first bin (``np.cumsum`` order);
* the SE scan (Xia, Zhai & Wang Eq. 3): threshold bin ``j`` (code ``<= j`` goes left) maximises
  ``G_l^2 / N_l + G_r^2 / N_r`` over bins with at least ``min_data`` documents and ``min_hess`` hessian
  on each side, an empty bin adding ``0 * G`` (``np.cumsum(hist * full)`` order), the first maximum
  winning (``np.argmax``: a NaN wins at once); the gain subtracts the parent's ``G^2 / N``;
* the children's totals: feature 0's histogram of the smaller child (its documents in document
  order), the larger child's as the parent's minus it, each summed left to right.

Leaf values (Eq. 11, one Newton step ``-G / H``) are set by the tree's ``_finish``. Two kernels: the
root (`_stump_root`: once per set of weights, kept while BoostingTree extends the same node) and the
split (`_stump_split`: once per constrained step). NDCGBoost's classifier stump needs only the scan
(`_classifier_split`); its node and leaf sums stay NumPy's (``s.sum()`` adds pairwise, and only the
signs of the leaf sums are used).
"""

from __future__ import annotations

import numpy as np

from ._jit import njit


@njit(cache=True)
def _stump_root(col0, lam, hess, tot0):
    """Feature 0's histogram of the channels ``(-lam, hess, 1)`` into ``tot0`` (``nb0 x 3``, zeroed here)
    and the node totals. Returns ``(G, H, N, usable)``: ``usable`` is False where the general tree must
    decide (a non-finite lambda or hessian; a constant positive hessian, which the tree counts as
    ``H / h``)."""
    n = col0.size
    tot0[:] = 0.0
    h0 = hess[0] if n > 0 else 0.0
    const = True
    finite = True
    for i in range(n):
        a = lam[i]
        h = hess[i]
        if not (np.isfinite(a) and np.isfinite(h)):
            finite = False
        if h != h0:
            const = False
        b = col0[i]
        tot0[b, 0] += -a
        tot0[b, 1] += h
        tot0[b, 2] += 1.0
    usable = finite and not (h0 > 0.0 and const)
    return _first_sum(tot0, 0), _first_sum(tot0, 1), _first_sum(tot0, 2), usable


@njit(cache=True)
def _stump_split(col, nb, col0, lam, hess, tot0, G, H, N, same, md, min_hess, hist, hs, leaf_of, tot):
    """The SE stump on the binned column ``col`` of ``nb`` bins (``same``: it is feature 0's, whose
    histogram is ``tot0``).

    ``hist`` (at least ``nb x 3``) and ``hs`` (``nb0 x 3``) are scratch; ``leaf_of`` (int64, n) receives
    1 (left) or 2 (right) per document when a split is made; ``tot`` (``3 x 4``) receives the children's
    ``(G, H, N)`` in rows 1 and 2. Returns ``(j, gain, mid)``: the threshold bin (``-1``: no valid
    threshold), the split's gain and the number of documents going left; no split is made unless
    ``j >= 0`` and ``gain > 0``.
    """
    n = col.size
    if same:
        h = tot0
    else:
        h = hist
        for b in range(nb):
            h[b, 0] = 0.0
            h[b, 1] = 0.0
            h[b, 2] = 0.0
        for i in range(n):
            b = col[i]
            h[b, 0] += -lam[i]
            h[b, 1] += hess[i]
            h[b, 2] += 1.0
    j, best = _se_scan(h, nb, G, H, N, md, min_hess)
    parent_score = G * G / N if N > 0.0 else 0.0               # SE: G^2 / N
    gain = best - parent_score
    if j < 0 or not gain > 0.0:
        return j, gain, n
    right = 0
    for i in range(n):
        r = col[i] > j                                            # code <= j goes left
        leaf_of[i] = 2 if r else 1
        right += 1 if r else 0
    mid = n - right
    small = 1 if mid <= n - mid else 2                            # the child whose histogram is made
    nb0 = tot0.shape[0]
    for b in range(nb0):
        hs[b, 0] = 0.0
        hs[b, 1] = 0.0
        hs[b, 2] = 0.0
    for i in range(n):
        if leaf_of[i] == small:
            b = col0[i]
            hs[b, 0] += -lam[i]
            hs[b, 1] += hess[i]
            hs[b, 2] += 1.0
    large = 3 - small
    for c in range(3):
        tot[small, c] = _first_sum(hs, c)
        s = tot0[0, c] - hs[0, c]                                 # the larger child by subtraction
        for b in range(1, nb0):
            s += tot0[b, c] - hs[b, c]
        tot[large, c] = s
    return j, gain, mid


@njit(cache=True)
def _se_scan(h, nbins, G, H, N, md, min_hess):
    """First bin ``j < nbins - 1`` maximising ``G_l^2 / N_l + G_r^2 / N_r`` under the side limits (see the
    module docstring); ``(-1, -inf)`` if none is valid."""
    gl = 0.0
    hl = 0.0
    nl = 0.0
    j = -1
    best = -np.inf
    for b in range(nbins - 1):
        full = 1.0 if h[b, 2] != 0.0 else 0.0                    # an empty bin adds nothing
        if b == 0:
            gl = h[b, 0] * full
            hl = h[b, 1] * full
            nl = h[b, 2]
        else:
            gl += h[b, 0] * full
            hl += h[b, 1] * full
            nl += h[b, 2]
        nr = N - nl
        hr = H - hl
        if nl >= md and nr >= md and hl >= min_hess and hr >= min_hess:
            gr = G - gl
            g = gl * gl / nl + gr * gr / nr
            if g != g:                                            # np.argmax: the first NaN wins
                return b, g
            if j < 0 or g > best:                                 # the first maximum
                j = b
                best = g
    return j, best


@njit(cache=True)
def _first_sum(h, c):
    """``h[0, c] + h[1, c] + ...`` left to right, starting from the first bin (``np.cumsum(h[:, c])[-1]``)."""
    if h.shape[0] == 0:
        return 0.0
    s = h[0, c]
    for b in range(1, h.shape[0]):
        s += h[b, c]
    return s


@njit(cache=True)
def _classifier_split(col, nb, s, S, hist):
    """NDCGBoost's one-feature classifier stump (ALGORITHMS.md 7 step (b)) on the binned column ``col`` of
    ``nb`` bins: the first bin ``j < nb - 1`` maximising ``max(0, S_L) + max(0, S_R) - max(0, S)`` with a
    document on each side (``S`` the node's sum of ``s``, given). ``S_L`` sums the bins left to right, a
    bin summing its documents in document order (``np.bincount`` and ``np.cumsum`` order). ``hist``
    (``nb x 2``) is scratch. Returns ``(j, gain)``, ``(-1, -inf)`` when no threshold is valid."""
    n = col.size
    for b in range(nb):
        hist[b, 0] = 0.0
        hist[b, 1] = 0.0
    for i in range(n):
        b = col[i]
        if b < nb:                                                # `np.bincount(...)[:nb]`
            hist[b, 0] += s[i]
            hist[b, 1] += 1.0
    top = S if S > 0.0 else 0.0
    sl = 0.0
    nl = 0.0
    j = -1
    best = -np.inf
    for b in range(nb - 1):
        if b == 0:
            sl = hist[b, 0]
            nl = hist[b, 1]
        else:
            sl += hist[b, 0]
            nl += hist[b, 1]
        sr = S - sl
        if nl > 0.0 and n - nl > 0.0:
            g = _max0(sl) + _max0(sr) - top
            if g != g:                                            # np.argmax: the first NaN wins
                return b, g
            if j < 0 or g > best:                                 # the first maximum
                j = b
                best = g
    return j, best


@njit(cache=True)
def _max0(x):
    """``np.maximum(x, 0)``: NaN stays NaN."""
    return x if (x > 0.0 or x != x) else 0.0


def warmup() -> None:
    """Compile the kernels on a toy pair of binned columns (uint8 and uint16 codes), as BoostingTree's
    constrained LambdaMART step (`_stump_root`, `_stump_split`) and NDCGBoost's classifier stump
    (`_classifier_split`) call them."""
    lam = np.array([1.0, -0.5, 0.25, -0.75])
    hess = np.array([0.5, 0.25, 1.0, 0.75])
    s = np.array([1.0, -2.0, 0.5, 0.25])
    for dt in (np.uint8, np.uint16):
        cols = np.array([[0, 1, 2, 1], [2, 0, 1, 2]], dtype=dt)  # F x n, C order: a row is one feature
        tot0 = np.empty((3, 3))
        G, H, N, _ = _stump_root(cols[0], lam, hess, tot0)
        _stump_split(cols[1], 3, cols[0], lam, hess, tot0, G, H, N, False, 0.5, 0.0, np.empty((3, 3)),
                     np.empty((3, 3)), np.empty(4, dtype=np.int64), np.zeros((3, 4)))
        _classifier_split(cols[1], 3, s, float(s.sum()), np.empty((3, 2)))

"""One-feature stumps of BoostingTree's constrained steps: LambdaMART's SE stump (the LambdaMART box) and
NDCGBoost's classifier stump (reconstructed NDCGBoost box, `_classifier_split`).

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

The kernels are private; callers use the validating functions `stump_root`, `stump_split` and
`classifier_split`, which check dtypes, shapes and contiguity in O(1) and then call them.
"""

from __future__ import annotations

import numpy as np

from ._jit import njit
from .stumps import _codes, _in_place, _vector


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
def _classifier_split(col, nb, s, S, tol, hist):
    """NDCGBoost's one-feature classifier stump (NDCGBoost box, step (b)) on the binned column ``col`` of
    ``nb`` bins: the first bin ``j < nb - 1`` whose gain ``max(0, S_L) + max(0, S_R) - max(0, S)`` (with a
    document on each side) is within ``tol`` of the largest (``S`` the node's sum of ``s``, given; a near-tie
    goes to the lowest bin, so the choice does not hang on the last bits of the sums; ``tol = 0`` is
    ``np.argmax``). ``S_L`` sums the bins left to right, a bin summing its documents in document order
    (``np.bincount`` and ``np.cumsum`` order). ``hist`` (``nb x 2``) is scratch. Returns ``(j, gain)``,
    ``(-1, -inf)`` when no threshold is valid."""
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
    best = -np.inf
    found = False
    for sweep in range(2):              # the largest gain, then the first bin within tol of it
        sl = 0.0
        nl = 0.0
        for b in range(nb - 1):
            if b == 0:                                            # `np.cumsum` starts from the first bin
                sl = hist[b, 0]
                nl = hist[b, 1]
            else:
                sl += hist[b, 0]
                nl += hist[b, 1]
            if nl > 0.0 and n - nl > 0.0:
                g = _max0(sl) + _max0(S - sl) - top
                if g != g:                                        # np.argmax: the first NaN wins
                    return b, g
                if sweep == 0:
                    if not found or g > best:
                        best = g
                        found = True
                elif g >= best - tol:
                    return b, g
    return -1, -np.inf


@njit(cache=True)
def _max0(x):
    """``np.maximum(x, 0)``: NaN stays NaN."""
    return x if (x > 0.0 or x != x) else 0.0


# ----------------------------------------------------------------- the validating Python functions
# One per kernel. Each checks dtypes, shapes and contiguity by attributes only (they run on every
# constrained step): the read-only inputs are made C-contiguous of the kernel's dtype (`_codes`, `_vector`:
# no copy when they are already), the arrays a kernel writes must already be (`_in_place`); the contents
# (every code below its column's bin count) are the caller's.
def _real_vector(name: str, a: np.ndarray, n: int) -> np.ndarray:
    """``a`` as a C-contiguous float64 vector of ``n`` entries (`_vector`); a non-real dtype is refused."""
    a = np.asarray(a)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers (float64), got dtype {a.dtype}")
    a = _vector(name, a, np.float64)
    if a.size != n:
        raise ValueError(f"{name} must have shape ({n},) (one entry per document), got {a.shape}")
    return a


def _written(name: str, a: np.ndarray, dtype: type, shape: tuple[int, ...], rows_at_least: bool = False
             ) -> np.ndarray:
    """``a`` itself, a workspace or output the kernel writes: a writeable C-contiguous ``dtype`` array
    (`_in_place`) of shape ``shape``, or with at least ``shape[0]`` rows if ``rows_at_least``."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{name} must be a numpy array (updated in place), got {type(a).__name__}")
    try:
        a = _in_place(name, a, dtype, len(shape))
    except ValueError as exc:
        layout = ("" if a.flags.c_contiguous else ", not C-contiguous") + ("" if a.flags.writeable else
                                                                           ", read-only")
        raise ValueError(f"{exc}, got {a.dtype} of shape {a.shape}{layout}") from None
    if a.shape[1:] != shape[1:] or (a.shape[0] < shape[0] if rows_at_least else a.shape[0] != shape[0]):
        want = f"(>= {shape[0]}, {', '.join(map(str, shape[1:]))})" if rows_at_least else str(shape)
        raise ValueError(f"{name} must have shape {want}, got {a.shape}")
    return a


def stump_root(col0: np.ndarray, lam: np.ndarray, hess: np.ndarray, n_bins0: int
               ) -> tuple[np.ndarray, float, float, float, bool]:
    """Feature 0's histogram of the channels ``(-lam, hess, 1)`` and the node totals (`_stump_root`).

    Parameters
    ----------
    col0 : ndarray (n_docs,) of uint8 / uint16
        Feature 0's bin codes, each below ``n_bins0``.
    lam : ndarray (n_docs,)
        The lambdas (the gradient is ``-lam``); used as float64.
    hess : ndarray (n_docs,)
        The weights (hessians); used as float64.
    n_bins0 : int
        Feature 0's bins (at least 1).

    Returns
    -------
    tot0 : ndarray (n_bins0, 3) of float64
        Feature 0's histogram: the sums of ``-lam``, ``hess`` and 1 per bin (`stump_split`'s ``tot0``).
    G, H, N : float
        The node totals, the bins summed left to right.
    usable : bool
        False where the general tree must decide: a non-finite lambda or hessian, or a constant positive
        hessian (the tree then counts documents as ``H / h``).
    """
    col0 = _codes("col0", col0, 1)
    n = col0.size
    lam = _real_vector("lam", lam, n)
    hess = _real_vector("hess", hess, n)
    n_bins0 = int(n_bins0)
    if n_bins0 < 1:
        raise ValueError(f"n_bins0 must be at least 1, got {n_bins0}")
    tot0 = np.empty((n_bins0, 3))
    G, H, N, usable = _stump_root(col0, lam, hess, tot0)
    return tot0, G, H, N, bool(usable)


def stump_split(col: np.ndarray, nb: int, col0: np.ndarray, lam: np.ndarray, hess: np.ndarray,
                tot0: np.ndarray, G: float, H: float, N: float, same: bool, md: float, min_hess: float,
                hist: np.ndarray, hs: np.ndarray, leaf_of: np.ndarray, tot: np.ndarray
                ) -> tuple[int, float, int]:
    """The SE stump on one binned column (`_stump_split`), from `stump_root`'s histogram and totals.

    Parameters
    ----------
    col : ndarray (n_docs,) of uint8 / uint16
        The split feature's bin codes, each below ``nb``.
    nb : int
        The split feature's bins: at least 1 and at most ``hist``'s rows (``tot0``'s rows if ``same``).
    col0 : ndarray (n_docs,) of uint8 / uint16
        Feature 0's bin codes, each below ``tot0``'s rows.
    lam, hess : ndarray (n_docs,)
        The weights `stump_root` was given; used as float64.
    tot0 : ndarray (n_bins0, 3) of float64
        `stump_root`'s histogram (read only).
    G, H, N : float
        `stump_root`'s node totals.
    same : bool
        ``col`` is feature 0's (``col0``): its histogram is ``tot0``.
    md : float
        Documents on each side at least (``min_child_samples - 0.5``).
    min_hess : float
        Hessian on each side at least.
    hist : ndarray (>= nb, 3) of float64
        Scratch (unused when ``same``); C-contiguous, writeable.
    hs : ndarray (n_bins0, 3) of float64
        Scratch, ``tot0``'s shape; C-contiguous, writeable.
    leaf_of : ndarray (n_docs,) of int64
        Receives 1 (left) or 2 (right) per document when a split is made; C-contiguous, writeable.
    tot : ndarray (3, 4) of float64
        Receives the children's ``(G, H, N)`` in rows 1 and 2 (columns 0-2) when a split is made; the rest
        is left as it is. C-contiguous, writeable.

    Returns
    -------
    j : int
        The threshold bin (code ``<= j`` goes left); -1 when no threshold is valid.
    gain : float
        The split's gain (the parent's ``G^2 / N`` subtracted).
    mid : int
        The documents going left. No split is made (``leaf_of`` and ``tot`` untouched) unless ``j >= 0``
        and ``gain > 0``.
    """
    col = _codes("col", col, 1)
    n = col.size
    col0 = _codes("col0", col0, 1)
    if col0.size != n:
        raise ValueError(f"col0 must have shape ({n},) like col, got {col0.shape}")
    lam = _real_vector("lam", lam, n)
    hess = _real_vector("hess", hess, n)
    tot0 = _vector("tot0", tot0, np.float64, 2)
    if tot0.shape[0] < 1 or tot0.shape[1] != 3:
        raise ValueError(f"tot0 must have shape (n_bins0 >= 1, 3) (stump_root's), got {tot0.shape}")
    same = bool(same)
    nb = int(nb)
    if nb < 1:
        raise ValueError(f"nb must be at least 1, got {nb}")
    if same and nb != tot0.shape[0]:
        raise ValueError(f"nb must be tot0's rows ({tot0.shape[0]}) when same (col is feature 0's), got {nb}")
    hist = _written("hist", hist, np.float64, (nb, 3), rows_at_least=True)
    hs = _written("hs", hs, np.float64, tot0.shape)
    leaf_of = _written("leaf_of", leaf_of, np.int64, (n,))
    tot = _written("tot", tot, np.float64, (3, 4))
    return _stump_split(col, nb, col0, lam, hess, tot0, float(G), float(H), float(N), same, float(md),
                        float(min_hess), hist, hs, leaf_of, tot)


def classifier_split(col: np.ndarray, nb: int, s: np.ndarray, S: float,
                     tol: float = 0.0) -> tuple[int, float]:
    """NDCGBoost's one-feature classifier stump (`_classifier_split`) on one binned column.

    Parameters
    ----------
    col : ndarray (n_docs,) of uint8 / uint16
        The feature's bin codes (codes from ``nb`` on are left out, as ``np.bincount(...)[:nb]``).
    nb : int
        The feature's bins (at least 1).
    s : ndarray (n_docs,)
        The document weights (NDCGBoost's ``gamma``); used as float64.
    S : float
        The node's sum of ``s`` (the caller's, in the caller's order).
    tol : float, default 0
        Gains within ``tol`` of the largest are ties, won by the lowest bin (0: ``np.argmax``'s first
        maximum).

    Returns
    -------
    j : int
        The first bin whose gain ``max(0, S_L) + max(0, S_R) - max(0, S)`` (with a document on each side)
        is within ``tol`` of the largest (code ``<= j`` goes left); -1 when no threshold is valid.
    gain : float
        Its gain; ``-inf`` when ``j = -1``.
    """
    col = _codes("col", col, 1)
    s = _real_vector("s", s, col.size)
    nb = int(nb)
    if nb < 1:
        raise ValueError(f"nb must be at least 1, got {nb}")
    tol = float(tol)
    if not tol >= 0.0:
        raise ValueError(f"tol must be a number >= 0, got {tol}")
    return _classifier_split(col, nb, s, float(S), tol, np.empty((nb, 2)))


def warmup() -> None:
    """Compile the kernels on a toy pair of binned columns (uint8 and uint16 codes), through the validating
    functions, as BoostingTree's constrained LambdaMART step (`stump_root`, `stump_split`) and NDCGBoost's
    classifier stump (`classifier_split`) call them."""
    lam = np.array([1.0, -0.5, 0.25, -0.75])
    hess = np.array([0.5, 0.25, 1.0, 0.75])
    s = np.array([1.0, -2.0, 0.5, 0.25])
    for dt in (np.uint8, np.uint16):
        cols = np.array([[0, 1, 2, 1], [2, 0, 1, 2]], dtype=dt)  # F x n, C order: a row is one feature
        tot0, G, H, N, _ = stump_root(cols[0], lam, hess, 3)
        stump_split(cols[1], 3, cols[0], lam, hess, tot0, G, H, N, False, 0.5, 0.0, np.empty((3, 3)),
                    np.empty((3, 3)), np.empty(4, dtype=np.int64), np.zeros((3, 4)))
        classifier_split(cols[1], 3, s, float(s.sum()), 0.0)

"""One OLE tree in one kernel call: LambdaMART's exact pairwise second derivative (Xia, Zhai & Wang,
Eq. 13 with Example 3-4) grown without per-node Python.

`lrank.weak.tree.RegressionTree` grows an OLE tree with a pair list node by node (`_NodePairs`); this
kernel runs the same steps in the same order, so the tree structure and leaf values are the same bits
(``tests/test_ole_tree.py``):

1. the root's gradient histogram and its pair histograms (``pmax``/``pmin``: pair weights by the larger
   and the smaller code of each pair, :mod:`lrank._kernels.pair_histograms`) and its exact second
   derivative ``H - 2 sum_{pairs inside} w`` (Example 3-4);
2. per split: the stable row partition, the smaller child's gradient histogram and the larger child's by
   subtraction; the stable pair partition (left, right, crossing) and the children's pair histograms the
   cheaper way: the smaller child's pairs plus the crossing ones subtracted from the parent's when there
   are fewer crossing pairs than the larger child's, else both children directly; a child that will never
   be searched (fewer than ``2 min_data`` documents, or the split that completes the tree) gets no pair
   histogram unless its sibling's subtraction needs it;
3. the split search of the RWSE score ``G^2 / h`` on the exact ``h`` (`lrank._kernels.trees._best_split`
   with pairs: its result, bits included) by :func:`_ole_feature_best`, which divides only where products
   cannot prove a threshold below the node's best so far; best-first (largest positive gain, ties to the
   smaller node id) or breadth-first.

Each node's ``pmin`` is ``U - pmax`` (`lrank._kernels.pair_histograms._pmin_from_weights`): ``U`` bins the
weight each document has in the node's pairs, so every pair is binned once per feature (its larger code),
not twice. A node's pair weight total is summed in pair order (the node-by-node path's ``cumsum``).

The kernel reads the global bin indices ``gbin = off[f] + code`` only (`lrank.weak.tree.TreeWorkspace.
global_bins`); without them (more than 65,536 histogram rows or a large matrix) the node-by-node path grows
the tree. One layout keeps the kernel's first compilation short (issue 15.5).
"""

from __future__ import annotations

import numpy as np

from ._jit import njit
from .histograms import _child_histogram_global, _histogram_global
from .pair_histograms import _pair_histograms_global, _partition_pairs, _pmin_from_weights
from .trees import RWSE, _beats, _node_summary, _partition_rows

# the bar of the scan below (:func:`_ole_feature_best`): a threshold is skipped when products prove its gain
# at or below the node's best so far by this relative margin (every rounding error is below ~1e-15); the
# products and the bar's factors must be normal numbers (above _BAR_MIN) for that relative bound (an
# underflowed square then errs by < 1e-300 absolute, far below the margin)
_BAR_MARGIN = 1.0 + 1e-9
_BAR_MIN = 1e-280


@njit(cache=True, error_model="numpy")
def _ole_feature_best(hist, o, nb, md, min_hess, G, H, N, inv_unit, pmax, pmin, p_total, parent_score,
                      floor):
    """The OLE scan of one feature with pairs: `lrank._kernels.trees._feature_best` with ``use_pairs``
    and criterion RWSE over rows ``o:o+nb`` of the node's histograms (``md = min_data - 0.5``), which
    returns the same ``(gain, j)``, bits included, whenever that gain is above ``floor`` (the node's best
    gain over the features before; ``-inf`` for the first). Returns ``(gain, j)``, ``j = -1`` if no
    threshold is valid (or, possibly, when none beats ``floor``).

    The gain of threshold ``b`` is ``G_l^2 / h_l + G_r^2 / h_r - score(node)`` (Eq. 9 on the exact second
    derivatives of Example 3-4: ``h_l = H_l - 2 pmax_l``, ``h_r = H_r - 2 (P - pmin_l)``, with prefix sums
    ``pmax_l``, ``pmin_l`` of the pair histograms and ``P`` the node's pair weight). `_feature_best`'s
    loop, its prefix sums, validity tests and ``break``, but a valid threshold's two divisions run only
    when products cannot prove its gain at or below the bar ``max(floor, best so far)``:
    ``(G_l^2 h_r + G_r^2 h_l) m < (bar + score(node)) h_l h_r`` with ``m = 1 + 1e-9`` implies that the
    computed gain is at most the bar (its roundings are ~1e-15 relative, and rounding is monotone), so
    `_feature_best` would not take it (at or below its best so far) or the caller would discard it (at or
    below ``floor``). On the MSLR sample a node's scan then divides at ~100 of its ~16,000 thresholds.

    A feature whose best gain is above ``floor`` gives `_feature_best`'s ``(gain, j)`` (only thresholds
    below its best were skipped); one whose best is at or below ``floor`` gives a gain at or below
    ``floor`` (or none), which the caller discards as it would discard `_feature_best`'s."""
    two = hist.shape[1] == 2  # constant hessian h_unit: the count is H / h_unit (up to rounding)
    ci = 1 if two else 2  # the count column (with two channels the hessian's: the same emptiness test)
    gl = 0.0
    hl = 0.0
    nl = 0.0
    bl = 0.0
    cmin = 0.0
    best = -np.inf
    bj = -1
    bar = floor + parent_score
    use_bar = bar > _BAR_MIN and bar < np.inf
    mh2 = min_hess * min_hess  # valid thresholds have h_l, h_r >= min_hess: the bar's factors are normal
    safe = use_bar and mh2 > _BAR_MIN and bar * min_hess > _BAR_MIN and bar * mh2 > _BAR_MIN
    ou = np.uint64(o)  # unsigned indices: no negative-index wrap-around arithmetic per access
    for b in range(nb - 1):
        k = ou + np.uint64(b)
        h1 = hist[k, 1]
        c2 = hist[k, ci]
        if h1 == 0.0 and c2 == 0.0:
            continue  # empty bin: the same partition as threshold b - 1, already evaluated
        gl += hist[k, 0]
        hl += h1
        if two:
            nl = hl * inv_unit
        else:
            nl += c2
        bl += pmax[k]
        cmin += pmin[k]
        if nl < md:
            continue
        if N - nl < md:
            break
        hle = hl - 2.0 * bl  # Example 3-4: pairs inside the left child cancel
        hre = (H - hl) - 2.0 * (p_total - cmin)
        if hle < min_hess or hre < min_hess:
            continue
        gr = G - gl
        dd = hle * hre
        rhs = bar * dd
        if use_bar and (gl * gl * hre + gr * gr * hle) * _BAR_MARGIN < rhs and (safe or (
                dd > _BAR_MIN and bar * hle > _BAR_MIN and bar * hre > _BAR_MIN and rhs > _BAR_MIN)):
            continue  # proven at or below the bar: no division (normal numbers: relative roundings)
        sl = gl * gl / hle if hle > 0.0 else 0.0  # `_score` on both sides (Eq. 9), as `_feature_best`
        sr = gr * gr / hre if hre > 0.0 else 0.0
        g = sl + sr - parent_score
        if _beats(g, best, abs(best) + abs(parent_score)):  # near-ties to the first (lrank._kernels.trees)
            best = g
            bj = b
            bar = (best if best > floor else floor) + parent_score  # max(floor, best) as numba's select
            use_bar = bar > _BAR_MIN and bar < np.inf
            safe = use_bar and mh2 > _BAR_MIN and bar * min_hess > _BAR_MIN and bar * mh2 > _BAR_MIN
    return best, bj


@njit(cache=True)
def _grow_ole_tree(gbin, vals, off, h_unit, num_leaves, min_data, min_hess, breadth_first,
                   hist, rows, tmp, leaf_of, pa, pb, pw, ta, tb, tw, n_pairs, pmax, pmin, feature, jbin, left,
                   right, gain, tot, start, end, slot, parent_score, u, iscr, fscr, bins):
    """Grow one unconstrained OLE tree with a pair list in one call (module docstring).

    ``pa``/``pb``/``pw`` hold the ``n_pairs`` pairs (reordered here, node-contiguous); ``ta``/``tb``/``tw``
    are the pair partition's scratch (as long); ``pmax``/``pmin`` are (num_leaves, total bins) slots as
    ``hist``. Node arrays as `lrank._kernels.trees._grow_tree`'s (``feature``/``jbin``/``left``/``right``
    filled with -1, the rest zeros). Returns ``(n_nodes, n_leaves)``.

    Workspaces from the caller, any contents (set here: no array constructor in the compiled chain, issue
    15.5): ``u`` float64 (n,), each document's weight in its node's pairs; ``iscr`` int64
    (8, >= max(2 num_leaves - 1, 2)), the nodes' pair ranges, best features and bins, the breadth-first
    queue, the open and built flags, and the nodes to build; ``fscr`` float64 (2, >= 2 num_leaves - 1), the
    nodes' pair weights and best gains; ``bins`` uint16 (2, >= F), `_pair_histograms_global`'s.

    Each kernel it calls is called from one place (a node's pair histograms, its summary, its search), so
    the compiler inlines each once: a new node is built, summed up and searched as soon as it exists (in
    breadth-first growth too: a node's histograms do not change until it is split, so its search gives the
    same split whenever it runs)."""
    n = rows.size
    for i in range(n):
        rows[i] = i
        leaf_of[i] = 0
    F = off.size - 1
    TB = off[F]
    max_nodes = 2 * num_leaves - 1
    pstart = iscr[0]
    pend = iscr[1]
    bf = iscr[2]  # each node's best split: gain (in fscr), feature, bin
    bj = iscr[3]
    queue = iscr[4]  # breadth first: the nodes in level order
    is_open = iscr[5]  # best first: the leaves (1)
    built = iscr[6]  # 1: the node's pair histograms exist
    to_build = iscr[7]  # the new nodes whose pair histograms are built directly (at most 2)
    ptot = fscr[0]
    bg = fscr[1]
    for c in range(max_nodes):
        pstart[c] = 0
        pend[c] = 0
        bf[c] = -1
        bj[c] = -1
        queue[c] = 0
        is_open[c] = 0
        built[c] = 0
        ptot[c] = 0.0
        bg[c] = -np.inf
    q0 = 0
    q1 = 1
    is_open[0] = 1
    md = min_data - 0.5  # counts are integers (or H / h_unit, exact up to rounding), as `_feature_best`
    inv_unit = 1.0 / h_unit if h_unit > 0.0 else 0.0
    for i in range(n):  # each document's weight in its node's pairs (pmax + pmin = its histogram)
        u[i] = 0.0
    for p in range(n_pairs):
        u[pa[p]] += pw[p]
    for p in range(n_pairs):
        u[pb[p]] += pw[p]
    # the root: gradient histogram; then, as for every new node, pair histograms, summary, search
    hist[0][:] = 0.0
    _histogram_global(gbin, vals, rows, 0, n, hist[0])
    end[0] = n
    pend[0] = n_pairs
    to_build[0] = 0  # the root
    n_build = 1
    sib_slot = -1  # >= 0: the larger child (in this slot) = parent - crossing - smaller child
    sib_node = 0
    cross_lo = 0
    cross_hi = 0
    new0 = 0  # the new nodes are new0 (the root) or new0, new0 + 1
    new1 = 1
    n_nodes = 1
    n_leaves = 1
    while True:
        for t in range(n_build):  # pair histograms of the nodes that will be searched (Example 3-4)
            c = to_build[t]
            s = slot[c]
            pmax[s][:TB] = 0.0
            _pair_histograms_global(gbin, pa, pb, pw, pstart[c], pend[c], pmax[s], pmin[s], 1.0, False, bins)
            _pmin_from_weights(gbin, gbin, True, off, None, u, rows, start[c], end[c], pmax[s], pmin[s])
            built[c] = 1
        if sib_slot >= 0:
            sm = to_build[0]
            _pair_histograms_global(gbin, pa, pb, pw, cross_lo, cross_hi, pmax[sib_slot], pmin[sib_slot],
                                    -1.0, False, bins)
            for t in range(TB):
                pmax[sib_slot][t] -= pmax[slot[sm]][t]
            _pmin_from_weights(gbin, gbin, True, off, None, u, rows, start[sib_node], end[sib_node],
                               pmax[sib_slot], pmin[sib_slot])
            built[sib_node] = 1
        for c in range(new0, new1):
            if built[c] != 0:
                for p in range(pstart[c], pend[c]):  # in pair order
                    ptot[c] += pw[p]
            parent_score[c] = _node_summary(hist[slot[c]], off, RWSE, h_unit, True, ptot[c], min_hess, tot, c)
            if built[c] != 0:  # the search of `_best_split` with pairs: every feature, ties to the first
                s = slot[c]
                for f in range(F):
                    g, jj = _ole_feature_best(hist[s], off[f], off[f + 1] - off[f], md, min_hess, tot[c, 0],
                                              tot[c, 1], tot[c, 2], inv_unit, pmax[s], pmin[s], ptot[c],
                                              parent_score[c], bg[c])
                    if jj >= 0 and _beats(g, bg[c], abs(bg[c]) + abs(parent_score[c])):
                        bg[c] = g
                        bf[c] = f
                        bj[c] = jj
        if n_leaves >= num_leaves:
            break
        node = -1
        if breadth_first:
            while q0 < q1:
                c = queue[q0]
                q0 += 1
                if bf[c] >= 0 and bg[c] > 0.0:
                    node = c
                    break
        else:
            for nd in range(n_nodes):  # the largest positive gain; ties to the smaller node id
                if is_open[nd] != 0 and bf[nd] >= 0 and bg[nd] > 0.0 and (node < 0 or bg[nd] > bg[node]):
                    node = nd
        if node < 0:
            break
        is_open[node] = 0
        f = bf[node]
        j = bj[node]
        # rows: stable partition, smaller child's histogram, the larger one's by subtraction
        lt = n_nodes
        rt = n_nodes + 1
        s0 = start[node]
        s1 = end[node]
        mid = _partition_rows(gbin, rows, s0, s1, f, off[f] + j, tmp, leaf_of, lt, rt)  # code <= j
        start[lt] = s0
        end[lt] = mid
        start[rt] = mid
        end[rt] = s1
        if mid - s0 <= s1 - mid:
            small, large = lt, rt
        else:
            small, large = rt, lt
        sl = slot[node]
        ss = n_leaves  # slots 0..n_leaves-1 are in use
        slot[large] = sl
        slot[small] = ss
        last = n_leaves + 1 == num_leaves  # its children are never searched: no pair histograms
        _child_histogram_global(gbin, vals, rows, start[small], end[small], hist[ss], hist[sl])
        # pairs: the children that will be searched get their pair histograms the cheaper way
        need_small = not last and end[small] - start[small] >= 2.0 * min_data
        need_large = not last and end[large] - start[large] >= 2.0 * min_data
        n_build = 0
        sib_slot = -1
        if need_small or need_large:
            lo = pstart[node]
            hi = pend[node]
            pmid, pnew = _partition_pairs(pa, pb, pw, lo, hi, leaf_of, lt, rt, ta, tb, tw)
            pstart[lt] = lo
            pend[lt] = pmid
            pstart[rt] = pmid
            pend[rt] = pnew
            for p in range(pnew, hi):  # the crossing pairs leave both documents' nodes
                u[pa[p]] -= pw[p]
            for p in range(pnew, hi):
                u[pb[p]] -= pw[p]
            subtract = hi - pnew < pend[large] - pstart[large]
            if need_small or (subtract and need_large):
                to_build[n_build] = small
                n_build += 1
            if need_large:
                if subtract:  # the larger child = parent - crossing pairs - smaller child
                    sib_slot = sl
                    sib_node = large
                    cross_lo = pnew
                    cross_hi = hi
                else:
                    to_build[n_build] = large
                    n_build += 1
        feature[node] = f
        jbin[node] = j
        left[node] = lt
        right[node] = rt
        gain[node] = bg[node]
        is_open[lt] = 1
        is_open[rt] = 1
        queue[q1] = lt
        queue[q1 + 1] = rt
        q1 += 2
        new0 = lt
        new1 = rt + 1
        n_nodes += 2
        n_leaves += 1
    return n_nodes, n_leaves


def ole_feature_best(hist: np.ndarray, off: np.ndarray, f: int, min_data: float, min_hess: float,
                     pmax: np.ndarray, pmin: np.ndarray, p_total: float, tot: np.ndarray, parent_score: float,
                     h_unit: float, floor: float = -np.inf) -> tuple[float, int]:
    """OLE's best threshold on feature ``f`` of a node with pairs (the whole-tree kernel's scan).

    Parameters
    ----------
    hist : float64 array (total bins, C), C = 2 (constant hessian ``h_unit``) or >= 3 (counts in column 2)
        The node's gradient histogram (gradient, hessian[, count, ...]).
    off : int64 array (F + 1,)
        Flat histogram offsets: feature ``f`` owns rows ``off[f]:off[f + 1]``.
    f : int
        The feature.
    min_data, min_hess : float
        At least ``min_data`` documents and an exact second derivative of at least ``min_hess`` on each
        side.
    pmax, pmin : float64 arrays (total bins,)
        The node's pair weights by the larger / the smaller code of each pair.
    p_total : float
        The node's pair weight.
    tot : float64 array (>= 3,)
        The node's ``G``, ``H``, ``N``.
    parent_score : float
        The node's own score ``G^2 / (H - 2 p_total)``.
    h_unit : float
        The constant hessian of a two-channel histogram (0 otherwise).
    floor : float
        The best gain found so far on other features; thresholds proven at or below it are skipped.

    Returns
    -------
    (gain, j) : (float, int)
        `lrank._kernels.trees._feature_best`'s result, bits included, when its gain is above ``floor``;
        otherwise a gain at or below ``floor`` or ``j = -1``.
    """
    hist = np.asarray(hist)
    if hist.dtype != np.float64 or hist.ndim != 2 or hist.shape[1] < 2:
        raise ValueError("hist must be a float64 array (total bins, >= 2 channels)")
    if off.dtype != np.int64 or off.ndim != 1 or not 0 <= f < off.size - 1 or np.any(np.diff(off) < 0) \
            or off[-1] > hist.shape[0]:
        raise ValueError("off must be non-decreasing int64 offsets within hist, f one of its features")
    for buf in (pmax, pmin):
        if buf.dtype != np.float64 or buf.ndim != 1 or buf.size < off[-1]:
            raise ValueError(f"pmax and pmin must be float64 with at least {off[-1]} bins")
    if np.asarray(tot).size < 3:
        raise ValueError("tot must hold G, H, N")
    md = float(min_data) - 0.5
    inv_unit = 1.0 / h_unit if h_unit > 0.0 else 0.0
    g, j = _ole_feature_best(hist, int(off[f]), int(off[f + 1] - off[f]), md, float(min_hess),
                             float(tot[0]), float(tot[1]), float(tot[2]), inv_unit, pmax, pmin,
                             float(p_total), float(parent_score), float(floor))
    return float(g), int(j)


def warmup() -> None:
    """Compile the OLE whole-tree kernel on a toy set (the types `lrank.weak.tree` passes)."""
    codes = np.array([[1, 2], [2, 1], [0, 1], [2, 2]], dtype=np.uint8)
    off = np.array([0, 3, 6], dtype=np.int64)
    gbin = (codes + off[:-1]).astype(np.uint16)
    n, L = codes.shape[0], 3
    vals = np.ones((n, 3))
    pa, pb, pw = np.array([0, 1], dtype=np.int64), np.array([2, 3], dtype=np.int64), np.ones(2)
    ints = [np.empty(n, dtype=np.int64) for _ in range(3)]  # rows, tmp, leaf_of
    scratch = [np.empty(2, dtype=np.int64), np.empty(2, dtype=np.int64), np.empty(2)]
    nodes = [np.full(2 * L - 1, -1, dtype=np.int64) for _ in range(4)]  # feature, bin, left, right
    idx = [np.zeros(2 * L - 1, dtype=np.int64) for _ in range(3)]  # start, end, slot
    work = (np.empty(n), np.empty((8, 2 * L - 1), dtype=np.int64), np.empty((2, 2 * L - 1)),
            np.empty((2, codes.shape[1]), dtype=np.uint16))  # u, iscr, fscr, bins
    _grow_ole_tree(gbin, vals, off, 0.0, L, 1.0, 0.0, False, np.zeros((L, 6, 3)), *ints, pa, pb, pw,
                   *scratch, 2, np.zeros((L, 6)), np.zeros((L, 6)), *nodes, np.zeros(2 * L - 1),
                   np.zeros((2 * L - 1, 4)), *idx, np.zeros(2 * L - 1), *work)

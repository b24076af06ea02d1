"""Histogram regression trees with the split criteria of Xia, Zhai & Wang (SE, WSE, RWSE, OLE).

A `RegressionTree` is grown over the binned feature matrix (``lrank.data.binning``: uint8 codes,
0 = missing, ``x > theta_j`` iff ``code > j``) from per-document first and second derivatives of the
boosting loss at ``o = 0`` (``grad = L'``, ``hess = L''``):

* histograms of (gradient, hessian, count) per feature and bin, the larger child's histogram obtained by
  subtraction (parent - smaller child), as LightGBM does;
* growth ``"best_first"`` (leaf-wise: split the leaf with the largest gain until ``num_leaves``),
  ``"breadth_first"`` (level order, the paper's "width-first" search, which its tables use) or
  ``"depth_first"`` (pre-order: a node's left subtree is grown before its right one, until
  ``num_leaves``; the order the paper reports as running poorly, grown node by node);
* criteria ``"se"`` (Eq. 3, least squares on the pseudo-responses ``r = -L'``), ``"wse"`` (Eq. 7-8,
  ``r = -L'/L''``, ``w = L''``), ``"rwse"`` (Eq. 9) and ``"ole"`` (Eq. 13). For a derivative-additive
  loss OLE is RWSE (Theorem 1). Given ``pairs=(pa, pb, pw)`` (LambdaMART's pairwise second derivatives),
  OLE uses the node's exact second derivative, in which the pairs inside a node cancel (Example 3-4),
  updated incrementally over the sorted bins through pair histograms (`lrank._kernels.pair_histograms`:
  node-contiguous pair lists; each pair binned by its larger code only, the smaller code's histogram
  being the node's documents' pair weights minus it; the larger child's by subtracting the smaller
  child's and the crossing pairs' from the parent's when that is fewer pairs);
* leaf values by one Newton step ``-sum L' / sum L''`` (Eq. 11; for LambdaMART ``sum lambda / sum w``,
  Wu et al.'s line 11, with the additive denominator whatever the criterion, so SE and OLE trees differ
  only in their splits, as in the paper's experiments);
* ``feature_constraint``: the BoostingTree paper's feature tree. Internal nodes are numbered in the order
  they are split (0 = root; breadth-first growth makes this the level order); split ``t`` may use only
  feature ``feature_constraint[t]``. A single int constrains every split (a stump's constraint).
  In breadth-first growth a node that cannot split on the feature due next stays a leaf and the entry
  passes to the next node. A constrained tree builds histograms only for the features its constraint
  names (plus feature 0, whose bins give the node totals): a stump on one feature costs O(n), not
  O(n F), with the same bits as the all-features histograms (each bin is summed in the same order).

An unconstrained SE or RWSE tree without pair lists is grown in one kernel call
(`lrank._kernels.trees._grow_tree`: no per-node Python), its histograms over global bin indices
``off[f] + code`` while these fit in cache (`TreeWorkspace.global_bins`); so is an unconstrained OLE tree
with pair lists while those indices exist (`lrank._kernels.ole_tree._grow_ole_tree`). The node-by-node
path below serves constraints, WSE, threads at scale and OLE without global bin indices. Each kernel
gives the node-by-node path's bits (tested).

A set of at least `RegressionTree._column_min_docs` (24,576) documents grows its unconstrained SE/RWSE
trees in `lrank._kernels.column_tree._grow_tree_columns` on ``n_jobs`` threads, over a column-major copy
of the codes made once per workspace (`TreeWorkspace.columns`): histograms by groups of four features
(their bins stay in L1; the groups on the threads) and partitions that read the split feature's column
only. Every bin is still summed in row order, so these trees have the serial kernel's bits for any
``n_jobs``; the node-by-node path sums its nodes with the serial (or feature-parallel) kernels, the same
bits.

Fitted arrays are indexed by node (root 0, children appended in split order): ``feature_``, ``bin_``
(the ``j`` of ``code > j``), ``threshold_`` (the raw ``theta_j``; ``-inf`` for the split "missing vs
known"), ``children_left_``/``children_right_`` (-1 at leaves), ``value_`` (leaf outputs), ``gain_``.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator, Sequence
from typing import Any

import numba
import numpy as np

from lrank._kernels import column_tree as _ct
from lrank._kernels import histograms as _hk
from lrank._kernels import ole_tree as _ot
from lrank._kernels import pair_histograms as _ph
from lrank._kernels import trees as _tk

_NO_GBIN = np.zeros((1, 1), dtype=np.uint16)
CRITERIA = {"se": _tk.SE, "wse": _tk.WSE, "rwse": _tk.RWSE, "ole": _tk.RWSE}
GROWTH = ("best_first", "breadth_first", "depth_first")


class TreeWorkspace:
    """Buffers reused across the trees of one boosting run (histograms are the large part).

    It refers to its ``codes`` weakly (``fits`` is False once they are gone), so a cache of workspaces
    keyed by the codes does not keep them alive.
    """

    def __init__(self, codes: np.ndarray, n_bins: np.ndarray, max_leaves: int, n_channels: int = 3,
                 n_pairs: int = 0, n_jobs: int = 1):
        n, F = codes.shape
        self.offsets = np.zeros(F + 1, dtype=np.int64)  # feature f owns histogram rows off[f]:off[f+1]
        self.offsets[1:] = np.cumsum(n_bins)
        TB = max(int(self.offsets[-1]), 1)
        self._codes = weakref.ref(codes)
        self.n_bins = np.ascontiguousarray(n_bins, dtype=np.int64)
        self.hist = np.zeros((max_leaves, TB, n_channels))
        self.n_docs = n
        self._rows = None  # a node-contiguous row list and the partition's scratch, int64 (`rows`, `tmp`)
        self.leaf_of = np.empty(n, dtype=np.int64)
        self._vals = None  # (n, n_channels) per-document channels, made on first use (`vals`)
        self.pmax = np.zeros((max_leaves, TB)) if n_pairs else np.zeros((1, 1))
        self.pmin = np.zeros_like(self.pmax)
        # OLE's pair lists, node-contiguous (structure of arrays), and the partition's scratch
        P = max(n_pairs, 1)
        self.pa, self.pb, self.pw = np.empty(P, dtype=np.int64), np.empty(P, dtype=np.int64), np.empty(P)
        self.ta, self.tb, self.tw = np.empty(P, dtype=np.int64), np.empty(P, dtype=np.int64), np.empty(P)
        # the pair-histogram kernels' bin buffers, made here once so that no kernel allocates them (issue
        # 15.5): per thread block a pair's larger and smaller flat bins and the offsets (uint32; block 0 for
        # `_pair_histograms`), and a pair's larger and smaller global bins (uint16, `_pair_histograms_global`)
        B = numba.config.NUMBA_NUM_THREADS if n_pairs else 1
        self.pair_bins = np.empty((B, 3, max(F, 1) if n_pairs else 1), dtype=np.uint32)
        self.pair_bins_global = np.empty((2, max(F, 1) if n_pairs else 1), dtype=np.uint16)
        self.n_jobs = n_jobs
        self.max_leaves = max_leaves
        self.n_pairs = n_pairs
        self._gbin = None  # global bin indices off[f] + code, made on first use (`global_bins`)
        self._gbin_any = None  # the same past `global_bins`'s limits (`whole_tree_bins`)
        self._n_bins_seen = None  # the last n_bins array found equal to ours (`fits`)
        self.features = np.arange(F, dtype=np.int64)
        self._columns = None  # the column kernels' codes and scratch (`columns`)
        # the split search's scan buffer (`lrank._kernels.trees._best_split_fast`: prefix sums and flags of
        # one feature at a time), made here once so that no kernel allocates it (issue 15.5)
        self.scan = np.empty((4, max(int(self.n_bins.max(initial=1)), 1)))
        self._parallel_scan = None  # `_best_split_parallel`'s per-feature buffers (`parallel_scan`)

    def parallel_scan(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The parallel split search's gains, thresholds and per-feature scan buffers
        (`lrank._kernels.trees._best_split_parallel`), made on first use."""
        if self._parallel_scan is None:
            F, width = self.features.size, self.scan.shape[1]
            self._parallel_scan = (np.empty(F), np.empty(F, dtype=np.int64), np.empty((F, 4, width)))
        return self._parallel_scan

    #: largest global-bin matrix (bytes) made; above it the trees read ``codes`` and add offsets per entry.
    #: The saving is the offset load per entry, which only shows while the matrix is cache-sized: 1.2-1.4x
    #: per tree at 5,000 x 136 (1.4 MB), 1.13x at 23,000 x 136 (6 MB), none at 200,000 x 136 (54 MB).
    global_bins_max_bytes = 16 * 2**20

    def global_bins(self) -> np.ndarray | None:
        """``off[f] + codes[:, f]`` as uint16 (n, F), made once per workspace: the histogram rows of every
        entry, so the histogram loop adds no offsets (the same bits). None when the histogram has more
        than 65,536 rows or the matrix would exceed `global_bins_max_bytes`."""
        codes = self.codes
        if self._gbin is None and codes is not None and self.offsets[-1] <= 65536 \
                and 2 * codes.size <= self.global_bins_max_bytes:
            self._gbin = _hk._global_bins(codes, self.offsets, np.empty(codes.shape, dtype=np.uint16))
        return self._gbin

    def whole_tree_bins(self) -> np.ndarray:
        """The global bin indices the whole-tree kernel `_grow_tree` reads: `global_bins` when it exists,
        else made here whatever their size (the kernel serves sets below `RegressionTree._column_min_docs`
        rows), uint32 past 65,536 histogram rows. `_grow_tree` then compiles no histogram kernel over
        ``codes`` (the same bits: each bin summed in the same row order)."""
        gbin = self.global_bins()
        if gbin is None:
            if self._gbin_any is None:
                dtype = np.uint16 if self.offsets[-1] <= 65536 else np.uint32
                self._gbin_any = _hk._global_bins(self.codes, self.offsets, np.empty(self.codes.shape, dtype))
            gbin = self._gbin_any
        return gbin

    def columns(self) -> tuple[np.ndarray, ...]:
        """What `lrank._kernels.column_tree` reads and writes, made on first use: the codes column-major
        (``codes.T``, C-contiguous (F, n), one copy per workspace: n F bytes), a chunk's gathered values
        (one (`CHUNK_ROWS`, C) buffer per thread numba may use; pages never touched cost no memory), the
        row list and partition scratch as int32 (half the bytes of `rows` and `tmp`), and with four
        channels the root's counts kept by the first tree with two-lane buffers for the later roots
        (`lrank._kernels.column_tree._root_histogram`)."""
        if self._columns is None:
            n = self.n_docs
            codes = self.codes
            codes_t = np.empty((codes.shape[1], n), dtype=codes.dtype)
            with _threads(self.n_jobs):
                _ct._transpose(codes, codes_t)
            B, TB, C = numba.config.NUMBA_NUM_THREADS, self.hist.shape[1], self.hist.shape[2]
            self._columns = (codes_t, np.empty((B, _ct.CHUNK_ROWS, C)),
                             np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int32),
                             np.zeros(TB + 1),  # the root's counts, kept by the first tree (four channels)
                             np.empty((B, _ct.CHUNK_ROWS, 2) if C == 4 else (B, 0, 2)),
                             np.zeros((TB, 2) if C == 4 else (0, 2)))
        return self._columns

    @property
    def vals(self) -> np.ndarray:
        """The per-document channels the histogram kernels add, (n, n_channels), made on first use (the
        column kernels at scale read the derivatives themselves and never need them)."""
        if self._vals is None:
            self._vals = np.empty((self.n_docs, self.hist.shape[2]))
        return self._vals

    @property
    def rows(self) -> np.ndarray:
        """Row list (int64, n), node-contiguous during a tree, made on first use."""
        if self._rows is None:
            self._rows = (np.empty(self.n_docs, dtype=np.int64), np.empty(self.n_docs, dtype=np.int64))
        return self._rows[0]

    @property
    def tmp(self) -> np.ndarray:
        """The partitions' scratch (int64, n), made with `rows`."""
        self.rows  # noqa: B018 - makes both
        return self._rows[1]

    @property
    def codes(self) -> np.ndarray | None:
        """The bin codes the buffers were made for (None once freed)."""
        return self._codes()

    def fits(self, codes: np.ndarray, max_leaves: int, n_channels: int, n_pairs: int, n_jobs: int,
             n_bins: np.ndarray | None = None) -> bool:
        if n_bins is not None and n_bins is not self._n_bins_seen:  # a boosting run passes one array
            if not np.array_equal(n_bins, self.n_bins):
                return False
            self._n_bins_seen = n_bins
        return (self.codes is codes and self.max_leaves >= max_leaves and self.hist.shape[2] == n_channels
                and self.n_pairs >= n_pairs and self.n_jobs == n_jobs)


def _set_threads(n_jobs: int) -> int:
    """Set numba's number of threads for ``n_jobs`` (1: one thread; -1 or more than numba has: all of
    them) and return it."""
    most = numba.config.NUMBA_NUM_THREADS
    k = min(int(n_jobs), most) if n_jobs > 0 else most
    if numba.get_num_threads() != k:
        numba.set_num_threads(k)
    return k


@contextlib.contextmanager
def _threads(n_jobs: int) -> Iterator[int]:
    """Numba's threads set for ``n_jobs`` (`_set_threads`) inside the block, restored after it."""
    old = numba.get_num_threads()
    try:
        yield _set_threads(n_jobs)
    finally:
        if numba.get_num_threads() != old:
            numba.set_num_threads(old)


def _constraint_array(feature_constraint: Any, max_leaves: int, n_features: int) -> np.ndarray | None:
    if feature_constraint is None:
        return None
    scalar = np.ndim(feature_constraint) == 0
    c = np.atleast_1d(np.asarray(feature_constraint))
    if c.dtype.kind not in "iu" or c.ndim != 1 or c.size == 0:
        raise ValueError("feature_constraint must be an int or a 1-d sequence of feature indices")
    if scalar:
        c = np.repeat(c, max(max_leaves - 1, 1))
    if c.size < max_leaves - 1:
        raise ValueError(f"feature_constraint names {c.size} features; a {max_leaves}-leaf tree needs "
                         f"{max_leaves - 1} (one per internal node)")
    if (c < 0).any() or (c >= n_features).any():
        raise ValueError(f"feature_constraint entries must lie in [0, {n_features})")
    return c.astype(np.int64)


class _NodePairs:
    """OLE's pairs for one tree (Example 3-4): node-contiguous pair lists and per-slot pair histograms.

    Node ``k`` owns the pairs ``start[k]:end[k]`` of the workspace's ``pa``/``pb``/``pw`` (both documents
    inside the node); ``total[k]`` is their weight and ``built[k]`` says whether its pair histograms
    (``pmax[slot]``, ``pmin[slot]``) were made. A split partitions the node's pairs once
    (:func:`lrank._kernels.pair_histograms.partition_pairs`: left, right, crossing) and makes the
    children's histograms the cheaper way, with the same choice (so the same bits) as always: the
    smaller child's pairs plus the crossing ones subtracted from the parent's when there are fewer of
    them than the larger child's pairs, else both children directly. A child that will never be
    searched (fewer than ``2 * min_child_samples`` documents, or the split that completes the tree) gets
    no histogram, unless its sibling's subtraction needs it.
    """

    def __init__(self, ws: TreeWorkspace, codes: np.ndarray, pairs: tuple, max_nodes: int,
                 sub: np.ndarray | None, off: np.ndarray, TB: int, parallel: bool, min_work: int,
                 row_start: np.ndarray, row_end: np.ndarray):
        m = int(pairs[0].size)
        self.pa, self.pb, self.pw = ws.pa, ws.pb, ws.pw
        self.pa[:m], self.pb[:m], self.pw[:m] = pairs
        # u[d]: the weight of the pairs of d's node that hold d (pmin = U - pmax), first by pa then by pb
        self.u = np.zeros(codes.shape[0])
        np.add.at(self.u, self.pa[:m], self.pw[:m])
        np.add.at(self.u, self.pb[:m], self.pw[:m])
        self.rows, self.row_start, self.row_end = ws.rows, row_start, row_end
        self.ws, self.codes, self.sub, self.off = ws, codes, sub, off
        self.pmax = [ws.pmax[s][:TB] for s in range(ws.pmax.shape[0])]
        self.pmin = [ws.pmin[s][:TB] for s in range(ws.pmin.shape[0])]
        self.start = np.zeros(max_nodes, dtype=np.int64)
        self.end = np.zeros(max_nodes, dtype=np.int64)
        self.total = np.zeros(max_nodes)
        self.built = np.zeros(max_nodes, dtype=bool)
        self.end[0] = m
        self.parallel, self.min_work = parallel, min_work

    def _total(self, node: int, slot: int) -> None:
        """The node's pair weight (summed in pair order), and its ``pmin`` made again as ``U - pmax`` from
        its documents' ``u`` (`lrank._kernels.pair_histograms.pmin_from_weights`): the whole-tree kernel's
        bits."""
        w = self.pw[self.start[node]:self.end[node]]
        self.total[node] = float(np.cumsum(w)[-1]) if w.size else 0.0  # in pair order, as the kernel
        _ph._pmin_from_weights(self.codes, _NO_GBIN, False, self.off, self.sub, self.u, self.rows,
                               self.row_start[node], self.row_end[node], self.pmax[slot], self.pmin[slot])

    def build(self, node: int, slot: int) -> None:
        """The node's pair histograms from its own pairs, into ``slot``."""
        pmax, pmin = self.pmax[slot], self.pmin[slot]
        pmax.fill(0.0)
        pmin.fill(0.0)
        lo, hi = int(self.start[node]), int(self.end[node])
        if self.sub is None and self.parallel and (hi - lo) * self.codes.shape[1] >= self.min_work:
            _ph._pair_histograms_parallel(self.codes, self.pa, self.pb, self.pw, lo, hi, self.off, pmax, pmin,
                                          numba.get_num_threads(), self.ws.pair_bins)
        else:
            _ph._pair_histograms(self.codes, self.pa, self.pb, self.pw, lo, hi, self.sub, self.off,
                                 pmax, pmin, 1.0, self.ws.pair_bins[0])
        self._total(node, slot)
        self.built[node] = True

    def split(self, node: int, lt: int, rt: int, small: int, slot_small: int, slot_large: int,
              leaf_of: np.ndarray, need: tuple[bool, bool]) -> None:
        """Children ``lt``, ``rt`` of ``node`` (documents already moved in ``leaf_of``); ``need`` says
        which of (``lt``, ``rt``) will be searched; the larger child takes the parent's slot."""
        large = rt if small == lt else lt
        need_small, need_large = (need[0], need[1]) if small == lt else (need[1], need[0])
        if not (need_small or need_large):
            return
        ws = self.ws
        lo, hi = int(self.start[node]), int(self.end[node])
        mid, new_end = _ph._partition_pairs(self.pa, self.pb, self.pw, lo, hi, leaf_of, lt, rt, ws.ta, ws.tb,
                                            ws.tw)
        self.start[lt], self.end[lt], self.start[rt], self.end[rt] = lo, mid, mid, new_end
        np.subtract.at(self.u, self.pa[new_end:hi], self.pw[new_end:hi])  # crossing pairs leave both nodes
        np.subtract.at(self.u, self.pb[new_end:hi], self.pw[new_end:hi])
        n_cross = hi - new_end
        if n_cross < self.end[large] - self.start[large]:  # (the same choice on any thread count)
            if need_large:  # the larger child: parent - crossing pairs - smaller child
                self.pmax[slot_small].fill(0.0)
                self.pmin[slot_small].fill(0.0)
                _ph._sibling_pair_histograms(self.codes, self.pa, self.pb, self.pw, self.start[small],
                                             self.end[small], new_end, hi, self.sub, self.off,
                                             self.pmax[slot_small], self.pmin[slot_small],
                                             self.pmax[slot_large], self.pmin[slot_large], ws.pair_bins[0])
                for c, sc in ((small, slot_small), (large, slot_large)):
                    self._total(c, sc)
                    self.built[c] = True
            else:
                self.build(small, slot_small)
        else:
            if need_small:
                self.build(small, slot_small)
            if need_large:
                self.build(large, slot_large)


def _node_arrays(max_nodes: int) -> tuple[np.ndarray, ...]:
    """A whole-tree kernel's node arrays: ``feature``, ``jbin``, ``left``, ``right`` (-1), ``start``,
    ``end``, ``slot`` (0), ``gain``, ``parent_score`` (0.0) and ``tot`` (G, H, N, Q per node)."""
    feature, jbin, left, right = (np.full(max_nodes, -1, dtype=np.int64) for _ in range(4))
    start, end, slot = (np.zeros(max_nodes, dtype=np.int64) for _ in range(3))
    return (feature, jbin, left, right, start, end, slot, np.zeros(max_nodes), np.zeros(max_nodes),
            np.zeros((max_nodes, 4)))


class RegressionTree:
    """A histogram regression tree fitted to first/second derivatives with the paper's criteria.

    Parameters
    ----------
    num_leaves : int, default 10
        Number of leaves to grow to (fewer if no valid split remains).
    min_child_samples : int, default 20
        Minimum number of documents in a leaf.
    min_child_weight : float, default 1e-3
        Minimum second-derivative sum in a leaf (exact second derivative for OLE with pairs).
    growth : {"best_first", "breadth_first", "depth_first"}
        Leaf-wise (LightGBM), level-order ("width-first", the paper's choice) or pre-order (left subtree
        first) growth. With enough leaves for every valid split the three give the same tree; below that
        they differ in which nodes are split.
    criterion : {"se", "wse", "rwse", "ole"}
        The split criterion (module docstring).
    feature_constraint : int or sequence of int, optional
        The feature allowed at each internal node, in split order (module docstring).
    n_jobs : int, default 1
        1 runs the serial kernels; otherwise the parallel twins on numba's threads (same results).
    """

    _parallel_min_work = 200_000  # rows x features of a histogram worth a parallel launch
    # a constrained tree builds histograms only for its constraint's features (plus feature 0, whose bins
    # give the node totals); False builds them for all features (the same bits, kept for the tests)
    _subset_histograms = True
    _parallel_min_bins = 50_000  # histogram rows (all features' bins) worth a parallel split search
    # an unconstrained serial tree without pair lists grows in one kernel call (`_grow_tree`); False grows
    # it node by node from Python (the same kernels in the same order: the same bits, kept for the tests)
    _whole_tree_kernel = True
    # an unconstrained OLE tree with pair lists grows in one kernel call (`lrank._kernels.ole_tree`) under
    # the same conditions while the global bin indices exist; False grows it node by node (`_NodePairs`;
    # the same bits, kept for the tests)
    _ole_tree_kernel = True
    # the node-by-node and OLE paths read the workspace's global bin indices (`TreeWorkspace.global_bins`;
    # the same bits; `_grow_tree` reads them always, `TreeWorkspace.whole_tree_bins`)
    _use_global_bins = True
    # documents x features below which a tree asked to use threads is grown serially in one kernel call
    # anyway (a node-by-node parallel tree costs more there; the results are identical)
    _parallel_min_tree_work = 1_000_000
    # the fewest documents whose unconstrained SE/RWSE trees grow over the column-major codes
    # (`lrank._kernels.column_tree`, any n_jobs; the same bits as the serial kernel)
    _column_min_docs = 24_576
    # False: ``leaf_of_`` is the workspace's array (no copy), valid until the workspace grows another tree
    # (`lrank.models.gbrt` reads it at once: one array of n int64 less per tree)
    _own_leaf_of = True

    def __init__(self, num_leaves: int = 10, min_child_samples: int = 20,
                 min_child_weight: float = 1e-3, growth: str = "best_first", criterion: str = "se",
                 feature_constraint: int | Sequence[int] | None = None, n_jobs: int = 1):
        self.num_leaves = num_leaves
        self.min_child_samples = min_child_samples
        self.min_child_weight = min_child_weight
        self.growth = growth
        self.criterion = criterion
        self.feature_constraint = feature_constraint
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------ checks
    def _check_params(self) -> None:
        if self.criterion not in CRITERIA:
            raise ValueError(f"criterion must be one of {sorted(CRITERIA)}, got {self.criterion!r}")
        if self.growth not in GROWTH:
            raise ValueError(f"growth must be one of {GROWTH}, got {self.growth!r}")
        for name, low in (("num_leaves", 2), ("min_child_samples", 1)):
            v = getattr(self, name)
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < low:
                raise ValueError(f"{name} must be an int >= {low}, got {v!r}")
        v = self.min_child_weight
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)) \
                or not v >= 0:
            raise ValueError(f"min_child_weight must be a number >= 0, got {v!r}")
        v = self.n_jobs
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or not (v >= 1 or v == -1):
            raise ValueError(f"n_jobs must be an int >= 1 or -1 (all threads), got {v!r}")

    # ------------------------------------------------------------------ fitting
    def fit(self, X: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None,
            max_thresholds: int = 254) -> RegressionTree:
        """Least-squares regression of ``y`` on raw ``X`` (bins ``X`` first): ``L = sum w (f - y)^2 / 2``."""
        from lrank.data.binning import bin_features

        X = np.ascontiguousarray(X, dtype=np.float32)
        y = np.asarray(y, dtype=np.float64)
        w = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        bins = bin_features(X, max_thresholds=max_thresholds, strategy="quantile")
        return self.fit_gradients(bins.codes, -w * y, w, n_bins=bins.n_bins, thresholds=bins.thresholds)

    def fit_gradients(self, codes: np.ndarray, grad: np.ndarray, hess: np.ndarray, *,
                      n_bins: np.ndarray | None = None, thresholds: Sequence[np.ndarray] | None = None,
                      pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                      workspace: TreeWorkspace | None = None) -> RegressionTree:
        """Grow the tree from per-document ``grad = L'(o=0)`` and ``hess = L''(o=0)``.

        Parameters
        ----------
        codes : uint8/uint16 array (n, F)
            Bin codes (``FeatureBins.codes``).
        grad, hess : float arrays (n,)
            First and second derivatives of the loss with respect to each document's score.
        n_bins : int array (F,), optional
            Codes in use per feature (``FeatureBins.n_bins``); default ``codes.max(axis=0) + 1``.
        thresholds : list of arrays, optional
            ``FeatureBins.thresholds``, to express the splits on raw features (``predict``).
        pairs : (pa, pb, pw), optional
            Pair list with the pairwise second derivatives (OLE with a pairwise loss only).
        workspace : TreeWorkspace, optional
            Buffers to reuse between trees.
        """
        self._check_params()
        codes = np.ascontiguousarray(codes)
        if codes.ndim != 2 or codes.dtype not in (np.uint8, np.uint16):
            raise ValueError("codes must be a 2-d uint8/uint16 array of bin codes")
        n, F = codes.shape
        grad = np.asarray(grad, dtype=np.float64)
        hess = np.asarray(hess, dtype=np.float64)
        if grad.shape != (n,) or hess.shape != (n,):
            raise ValueError(f"grad and hess must have shape ({n},)")
        # a NaN or an infinity makes the sum non-finite: one reduction each; the element test only then
        # (finite values may overflow the sum)
        with np.errstate(over="ignore", invalid="ignore"):
            sums_finite = bool(np.isfinite(grad.sum()) and np.isfinite(hess.sum()))
        if not sums_finite and not (np.isfinite(grad).all() and np.isfinite(hess).all()):
            raise ValueError("grad and hess must be finite")
        if n_bins is None:
            n_bins = codes.max(axis=0).astype(np.int64) + 1 if n else np.ones(F, dtype=np.int64)
        n_bins = np.ascontiguousarray(n_bins, dtype=np.int64)
        crit = CRITERIA[self.criterion]
        use_pairs = pairs is not None and self.criterion == "ole"
        h0 = float(hess[0]) if n else 0.0
        const_h = crit != _tk.WSE and h0 > 0.0 and bool(np.all(hess == h0))  # e.g. MART: L'' = 1
        L = int(self.num_leaves)
        cons = _constraint_array(self.feature_constraint, L, F)
        # the column kernels at scale (`_grow_whole_columns`): a varying hessian takes four channels, the
        # fourth all zeros, so that a bin's (gradient, hessian, count) is one four-lane vector add
        # the whole-tree kernels grow in level or leaf order; depth-first trees grow node by node below
        whole = self._whole_tree_kernel and self.growth != "depth_first"
        columns = cons is None and not use_pairs and crit != _tk.WSE and whole and n >= self._column_min_docs
        C = 4 if crit == _tk.WSE else (2 if const_h else (4 if columns else 3))
        h_unit = h0 if const_h else 0.0
        m = int(pairs[0].size) if use_pairs else 0
        ws = workspace
        need_p = max(m, int(use_pairs))  # OLE keeps pair buffers even with no pair
        if ws is None or not ws.fits(codes, L, C, need_p, self.n_jobs, n_bins):
            ws = TreeWorkspace(codes, n_bins, L, C, need_p + m // 2, self.n_jobs)  # room for more pairs later
        # features whose histograms are built: all, or (constrained) those the constraint names + feature 0
        sub = None
        if cons is not None and self._subset_histograms:
            used = np.unique(np.concatenate((cons[:max(L - 1, 1)], np.zeros(1, dtype=np.int64))))
            if used.size < F:
                sub = used

        if columns:  # column-major codes, any n_jobs: the same bits; the kernel reads grad and hess itself
            grad = np.ascontiguousarray(grad)
            hess = grad if const_h else np.ascontiguousarray(hess)  # a constant hessian is h_unit
            return self._grow_whole_columns(codes, ws, grad, hess, crit, h_unit, thresholds)
        vals = ws.vals
        vals[:, 0] = grad
        vals[:, 1] = hess
        if C >= 3:
            vals[:, 2] = 1.0
        if C == 4:  # WSE (the column path returned above): w r^2 = L'^2 / L'' (Eq. 6); L'' floored at 1e-12
            vals[:, 3] = grad * grad / np.maximum(hess, 1e-12)
        if use_pairs and cons is None and self._ole_tree_kernel and self._use_global_bins and whole \
                and (self.n_jobs == 1 or n * F < self._parallel_min_tree_work) \
                and ws.global_bins() is not None:
            return self._grow_whole_ole(codes, ws, pairs, h_unit, thresholds)
        if cons is None and not use_pairs and crit != _tk.WSE and whole:
            if self.n_jobs == 1 or n * F < self._parallel_min_tree_work:
                return self._grow_whole(codes, ws, crit, h_unit, thresholds)
        par = self.n_jobs != 1
        if par:
            _set_threads(self.n_jobs)
        # below these sizes a parallel launch costs more than it saves (results are identical anyway)
        min_work = self._parallel_min_work
        split_fn = (_tk._best_split_parallel if par and ws.offsets[-1] >= self._parallel_min_bins
                    and sub is None else _tk._best_split)
        scan = ws.parallel_scan() if split_fn is _tk._best_split_parallel else (ws.scan,)  # scan buffers
        if sub is None:
            off = ws.offsets
            TB = ws.hist.shape[1]
        else:  # feature sub[t] owns the rows off[t]:off[t+1] of the first TB rows of each buffer
            off = np.zeros(sub.size + 1, dtype=np.int64)
            off[1:] = np.cumsum(ws.n_bins[sub])
            TB = max(int(off[-1]), 1)
            cons = np.searchsorted(sub, cons)  # positions in sub
        hists = [ws.hist[s][:TB] for s in range(L)]

        gbin = ws.global_bins() if sub is None and self._use_global_bins else None  # the same bits
        zero_off = np.zeros_like(off)

        def hist_fn(lo: int, hi: int, out: np.ndarray) -> None:
            if sub is not None:
                _hk._histogram_features(codes, vals, rows, lo, hi, sub, off, out)
            elif par and (hi - lo) * F >= min_work:
                nblk = numba.get_num_threads()  # an argument: a kernel reading it could not be cached
                if gbin is not None:  # global bin indices: no offsets to add
                    _hk._histogram_parallel(gbin, vals, rows, lo, hi, zero_off, out, nblk)
                else:
                    _hk._histogram_parallel(codes, vals, rows, lo, hi, off, out, nblk)
            elif gbin is not None:
                _hk._histogram_global(gbin, vals, rows, lo, hi, out)
            else:
                _hk._histogram(codes, vals, rows, lo, hi, off, out)

        rows, leaf_of = ws.rows, ws.leaf_of
        rows[:] = np.arange(n)
        leaf_of[:] = 0
        max_nodes = 2 * L - 1
        feature = np.full(max_nodes, -1, dtype=np.int64)
        jbin = np.full(max_nodes, -1, dtype=np.int64)
        left = np.full(max_nodes, -1, dtype=np.int64)
        right = np.full(max_nodes, -1, dtype=np.int64)
        gain = np.zeros(max_nodes)
        tot = np.zeros((max_nodes, 4))  # G, H, N, Q per node
        start = np.zeros(max_nodes, dtype=np.int64)
        end = np.zeros(max_nodes, dtype=np.int64)
        ole = _NodePairs(ws, codes, pairs, max_nodes, sub, off, TB, par, min_work, start, end) \
            if use_pairs else None
        ptot = ole.total if use_pairs else np.zeros(max_nodes)
        slot = np.zeros(max_nodes, dtype=np.int64)
        parent_score = np.zeros(max_nodes)
        best = {}  # node -> (gain, f, j)
        all_features = np.arange(F if sub is None else sub.size, dtype=np.int64)
        min_data = float(self.min_child_samples)
        min_hess = float(self.min_child_weight)
        dummy = ws.pmax[0]

        def finish_node(node: int) -> None:
            # totals from feature 0's rows (sub[0] == 0) and the node's own score, in one kernel call
            parent_score[node] = _tk._node_summary(hists[slot[node]], off, crit, h_unit, use_pairs,
                                                  float(ptot[node]), min_hess, tot, node)

        def search(node: int, features: np.ndarray) -> tuple[float, int, int]:
            s = slot[node]
            if use_pairs and not ole.built[node]:  # OLE: never searched (too small, or the tree is complete)
                return -np.inf, -1, -1
            pm = ole.pmax[s] if use_pairs else dummy
            pn = ole.pmin[s] if use_pairs else dummy
            g, f, j = split_fn(hists[s], off, features, crit, min_data, min_hess, use_pairs, pm, pn,
                               ptot[node], tot[node], parent_score[node], h_unit, *scan)
            if sub is not None and f >= 0:
                f = sub[f]
            return float(g), int(f), int(j)

        # root
        hists[0].fill(0.0)
        hist_fn(0, n, hists[0])
        end[0] = n
        if use_pairs:
            ole.build(0, 0)
        finish_node(0)
        n_nodes = 1
        n_leaves = 1
        n_splits = 0

        def split(node: int, f: int, j: int, g: float) -> tuple[int, int]:
            nonlocal n_nodes, n_leaves, n_splits
            lt, rt = n_nodes, n_nodes + 1
            n_nodes += 2
            mid = _tk._partition_rows(codes, rows, start[node], end[node], f, j, ws.tmp, leaf_of, lt, rt)
            start[lt], end[lt], start[rt], end[rt] = start[node], mid, mid, end[node]
            small, large = (lt, rt) if mid - start[node] <= end[node] - mid else (rt, lt)
            new_slot = n_leaves  # slots 0..n_leaves-1 are in use
            slot[large] = slot[node]
            slot[small] = new_slot
            hs = hists[new_slot]
            hp = hists[slot[node]]
            if sub is not None:
                _hk._child_histogram_features(codes, vals, rows, start[small], end[small], sub, off, hs, hp)
            elif par and (end[small] - start[small]) * F >= min_work:
                hs.fill(0.0)
                hist_fn(start[small], end[small], hs)
                np.subtract(hp, hs, out=hp)  # histogram subtraction
            elif gbin is not None:  # the same in one kernel call: smaller child, then parent - smaller
                _hk._child_histogram_global(gbin, vals, rows, start[small], end[small], hs, hp)
            else:
                _hk._child_histogram(codes, vals, rows, start[small], end[small], off, hs, hp)
            if use_pairs:  # OLE: only children that can still be split are searched
                more = n_leaves + 1 < L
                ole.split(node, lt, rt, small, slot[small], slot[large], leaf_of,
                          tuple(more and end[c] - start[c] >= 2 * self.min_child_samples for c in (lt, rt)))
            feature[node], jbin[node], left[node], right[node], gain[node] = f, j, lt, rt, g
            finish_node(lt)
            finish_node(rt)
            n_leaves += 1
            n_splits += 1
            return lt, rt

        if self.growth == "best_first":
            open_leaves = [0]
            if cons is None:
                best[0] = search(0, all_features)
            while n_leaves < L:
                if cons is not None:
                    fs = cons[n_splits: n_splits + 1]
                    for node in open_leaves:
                        best[node] = search(node, fs)
                cand = [(best[nd][0], -nd) for nd in open_leaves if best[nd][1] >= 0 and best[nd][0] > 0.0]
                if not cand:
                    break
                node = -max(cand)[1]
                g, f, j = best.pop(node)
                open_leaves.remove(node)
                lt, rt = split(node, f, j, g)
                open_leaves += [lt, rt]
                if cons is None:
                    best[lt] = search(lt, all_features)
                    best[rt] = search(rt, all_features)
        else:
            depth = self.growth == "depth_first"
            queue = [0]  # breadth first: a FIFO queue (level order); depth first: a stack (pre-order)
            while queue and n_leaves < L:
                node = queue.pop() if depth else queue.pop(0)
                fs = all_features if cons is None else cons[n_splits: n_splits + 1]
                g, f, j = search(node, fs)
                if f < 0 or not g > 0.0:
                    continue
                lt, rt = split(node, f, j, g)
                queue += [rt, lt] if depth else [lt, rt]

        return self._finish(n_nodes, n_leaves, feature, jbin, left, right, gain, tot, start, end, leaf_of,
                            thresholds, F, ws)

    def _grow_whole(self, codes: np.ndarray, ws: TreeWorkspace, crit: int, h_unit: float,
                    thresholds: Sequence[np.ndarray] | None) -> RegressionTree:
        """The unconstrained serial SE/RWSE tree without pair lists: grown in one `_grow_tree` call."""
        L = int(self.num_leaves)
        max_nodes = 2 * L - 1
        feature, jbin, left, right, start, end, slot, gain, parent_score, tot = _node_arrays(max_nodes)
        scratch = np.empty((3, max_nodes), dtype=np.int64)  # the kernel's bf, bj, is_open
        n_nodes, n_leaves = _tk._grow_tree(
            codes, ws.whole_tree_bins(), ws.vals, ws.offsets, crit, h_unit, L,
            float(self.min_child_samples), float(self.min_child_weight), self.growth == "breadth_first",
            ws.hist, ws.rows, ws.tmp, ws.leaf_of, feature, jbin, left, right, gain, tot, start, end, slot,
            parent_score, ws.features, np.empty(max_nodes), scratch[0], scratch[1], scratch[2], ws.scan)
        return self._finish(n_nodes, n_leaves, feature, jbin, left, right, gain, tot, start, end, ws.leaf_of,
                            thresholds, codes.shape[1], ws)

    def _grow_whole_columns(self, codes: np.ndarray, ws: TreeWorkspace, grad: np.ndarray,
                            hess: np.ndarray, crit: int, h_unit: float,
                            thresholds: Sequence[np.ndarray] | None) -> RegressionTree:
        """`_grow_whole` for sets of at least `_column_min_docs` documents: one `_grow_tree_columns` call
        over the workspace's column-major codes on ``n_jobs`` threads (the same bits for any ``n_jobs``)."""
        L = int(self.num_leaves)
        max_nodes = 2 * L - 1
        feature, jbin, left, right, start, end, slot, gain, parent_score, tot = _node_arrays(max_nodes)
        scratch = np.empty((3, max_nodes), dtype=np.int64)  # the kernel's bf, bj, is_open
        codes_t, og, rows, tmp, root_n, og2, h2 = ws.columns()
        with _threads(self.n_jobs) as nthr:
            n_nodes, n_leaves = _ct._grow_tree_columns(
                codes_t, grad, hess, ws.offsets, crit, h_unit, L, float(self.min_child_samples),
                float(self.min_child_weight), self.growth == "breadth_first", ws.hist, rows, tmp,
                ws.leaf_of, feature, jbin, left, right, gain, tot, start, end, slot, parent_score,
                ws.features, np.empty(max_nodes), scratch[0], scratch[1], scratch[2], og[:nthr], root_n,
                og2[:nthr], h2, ws.scan)
        return self._finish(n_nodes, n_leaves, feature, jbin, left, right, gain, tot, start, end, ws.leaf_of,
                            thresholds, codes.shape[1], ws)

    def _grow_whole_ole(self, codes: np.ndarray, ws: TreeWorkspace, pairs: tuple, h_unit: float,
                        thresholds: Sequence[np.ndarray] | None) -> RegressionTree:
        """The unconstrained OLE tree with pair lists, while the global bin indices exist: grown in one
        `_grow_ole_tree` call (the same bits as the node-by-node path with `_NodePairs`)."""
        L = int(self.num_leaves)
        max_nodes = 2 * L - 1
        m = int(pairs[0].size)
        ws.pa[:m], ws.pb[:m], ws.pw[:m] = pairs
        feature, jbin, left, right = (np.full(max_nodes, -1, dtype=np.int64) for _ in range(4))
        start, end, slot = (np.zeros(max_nodes, dtype=np.int64) for _ in range(3))
        gain, parent_score = np.zeros(max_nodes), np.zeros(max_nodes)
        tot = np.zeros((max_nodes, 4))  # G, H, N, Q per node
        # the kernel's scratch (set there): u per document, eight int64 and two float rows per node
        u, iscr, fscr = np.empty(codes.shape[0]), np.empty((8, max(max_nodes, 2)), dtype=np.int64), \
            np.empty((2, max_nodes))
        n_nodes, n_leaves = _ot._grow_ole_tree(
            ws.global_bins(), ws.vals, ws.offsets, h_unit, L,
            float(self.min_child_samples), float(self.min_child_weight), self.growth == "breadth_first",
            ws.hist, ws.rows, ws.tmp, ws.leaf_of, ws.pa, ws.pb, ws.pw, ws.ta, ws.tb, ws.tw, m, ws.pmax,
            ws.pmin, feature, jbin, left, right, gain, tot, start, end, slot, parent_score, u, iscr, fscr,
            ws.pair_bins_global)
        return self._finish(n_nodes, n_leaves, feature, jbin, left, right, gain, tot, start, end, ws.leaf_of,
                            thresholds, codes.shape[1], ws)

    def _finish(self, k: int, n_leaves: int, feature: np.ndarray, jbin: np.ndarray, left: np.ndarray,
                right: np.ndarray, gain: np.ndarray, tot: np.ndarray, start: np.ndarray, end: np.ndarray,
                leaf_of: np.ndarray, thresholds: Sequence[np.ndarray] | None, F: int,
                ws: TreeWorkspace) -> RegressionTree:
        """Store the fitted node arrays of the first ``k`` nodes (leaf values by Eq. 11)."""
        self.feature_ = feature[:k]
        self.bin_ = jbin[:k]
        self.children_left_ = left[:k]
        self.children_right_ = right[:k]
        self.gain_ = gain[:k]
        self.n_leaves_ = n_leaves
        self.n_node_samples_ = (end[:k] - start[:k]).copy()
        self.sum_grad_ = tot[:k, 0].copy()
        self.sum_hess_ = tot[:k, 1].copy()
        H = tot[:k, 1]
        value = np.where(H > 0, -tot[:k, 0] / np.where(H > 0, H, 1.0), 0.0)  # Eq. 11: one Newton step
        value[left[:k] >= 0] = 0.0
        self.value_ = value
        # a boosting loop that reads the labels before its next tree may take the workspace's own array
        self.leaf_of_ = leaf_of.copy() if self._own_leaf_of else leaf_of
        theta = np.full(k, np.nan)
        if thresholds is not None:  # internal nodes only, on Python ints (no NumPy scalar per node)
            internal = np.flatnonzero(left[:k] >= 0)
            for nd, f, jj in zip(internal.tolist(), feature[internal].tolist(), jbin[internal].tolist()):
                theta[nd] = -np.inf if jj == 0 else thresholds[f][jj - 1]
        self.threshold_ = theta
        self.n_features_in_ = F
        self.workspace_ = ws
        return self

    # ------------------------------------------------------------------ prediction
    def _check_fitted(self) -> None:
        if not hasattr(self, "value_"):
            raise RuntimeError("RegressionTree is not fitted yet")

    def apply_codes(self, codes: np.ndarray) -> np.ndarray:
        """Leaf node index of every row of a binned matrix."""
        self._check_fitted()
        codes = np.ascontiguousarray(codes)
        out = np.empty(codes.shape[0], dtype=np.int64)
        return _tk._apply_codes(codes, self.feature_, self.bin_, self.children_left_, self.children_right_,
                               out)

    def predict_codes(self, codes: np.ndarray) -> np.ndarray:
        """Leaf values for the rows of a binned matrix."""
        return self.value_[self.apply_codes(codes)]

    def predict(self, X: np.ndarray) -> np.ndarray:
        """Leaf values for raw features (needs the ``thresholds`` given at fit time)."""
        self._check_fitted()
        if np.isnan(self.threshold_[self.children_left_ >= 0]).any():
            raise RuntimeError("the tree was fitted without thresholds; use predict_codes")
        X = np.ascontiguousarray(X, dtype=np.float32)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X must have shape (n, {self.n_features_in_})")
        a = lambda v: v[None, :]  # noqa: E731
        out = np.zeros(X.shape[0])
        return _tk._predict_add(X, a(np.maximum(self.feature_, 0)), a(self.threshold_),
                                a(self.children_left_), a(self.children_right_), a(self.value_),
                                np.zeros(1, dtype=np.int64), 1.0, out)

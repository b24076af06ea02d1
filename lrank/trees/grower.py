"""The tree engine's grower: histogram trees over one binned matrix, with the workspace it owns.

A `TreeGrower` is made once per binned matrix (a boosting run, a BoostingTree step object) with the
tree parameters, and grows one tree per call of `TreeGrower.grow` from per-document first and second
derivatives of the loss at ``o = 0`` (``grad = L'``, ``hess = L''``), in one call of the growth kernel
(``lrank._kernels.grower``): histograms of (gradient, hessian, count) per feature and bin, the larger
child's by subtraction; the split of each criterion (``lrank._kernels.splitting``: SE, WSE, RWSE, OLE
with LambdaMART's pair list, NDCGBoost's classifier rule); best-first, breadth-first or depth-first
growth (one growth loop, the order an argument); an
optional feature constraint (BoostingTree's feature trees) or feature subset (feature subsampling:
the histograms of those features only); an optional row sample (bagging: the tree grown on those rows,
the others sent down it by their codes); leaf values by one Newton step
``-sum L' / sum L''`` (Xia, Zhai & Wang Eq. 11; for LambdaMART ``sum lambda / sum w``), or NDCGBoost's
``[sum gamma > 0]``. ``growth="symmetric"`` grows CatBoost's oblivious trees instead, one split per level
chosen by the Cosine score over all the level's leaves (`TreeGrower.grow_symmetric`, its own kernels:
per-leaf histograms over the column-major codes, the smaller child's built and its sibling's by
subtraction, one scan per level; on ``n_jobs`` threads from ``n F + num_leaves B >=
parallel_min_tree_work``, ``n`` the tree's rows, ``B`` its features' bins). Its buffers
(histograms, the row list, global bin indices, the column-major codes, pair buffers) are made on first use
and reused by every tree it grows: nothing is cached elsewhere.

The layout each tree reads is chosen here; every layout gives the same bits (each bin summed in row
order), so the choice is a matter of speed:

* ``n >= column_min_docs`` documents, unconstrained, without pairs, not WSE: the column-major codes
  (``codes.T``, made once), feature groups on ``n_jobs`` threads;
* a constraint without pairs and not WSE: the column-major codes of the constraint's features and
  feature 0 (a BoostingTree stump reads two columns; NDCGBoost's classifier stump one); a feature subset
  likewise, its own columns (the row-major subset path reads every row's codes without global bins:
  1.3-1.5x slower per tree at 8,000 x 136 with 80% of the features);
* otherwise the row-major codes: over global bin indices ``off[f] + code`` when they fit
  (`global_bins_max_bytes`, 65,536 histogram rows), else with offsets; a constraint builds only its
  features' histograms (with pairs or WSE), a feature subset its own features'; with ``n_jobs != 1`` and
  ``n F >= parallel_min_tree_work`` the histograms, pair histograms and (from ``parallel_min_bins``
  histogram rows) split scans run on the threads.
"""

from __future__ import annotations

import bisect
import contextlib
import mmap
from collections.abc import Sequence
from typing import Any

import numba
import numpy as np

from lrank._kernels import grower as _gk
from lrank._kernels import histograms as _hk
from lrank._kernels._jit import threads
from lrank._kernels.splitting import TIE_RTOL
from lrank.trees.predictor import Tree

CRITERIA = ("se", "wse", "rwse", "ole")
GROWTH = ("best_first", "breadth_first", "depth_first", "symmetric")
#: the criteria of symmetric (oblivious) trees: their Cosine score sums the hessian (RWSE) or the count (SE)
SYMMETRIC_CRITERIA = ("se", "rwse")


def check_tree_params(num_leaves: Any, min_child_samples: Any, min_child_weight: Any, growth: Any,
                      criterion: Any, n_jobs: Any, criteria: Sequence[str] = CRITERIA,
                      reg_lambda: Any = 0.0) -> None:
    """Raise a ValueError naming the first tree parameter out of its range."""
    if criterion not in criteria:
        raise ValueError(f"criterion must be one of {sorted(criteria)}, got {criterion!r}")
    if growth not in GROWTH:
        raise ValueError(f"growth must be one of {GROWTH}, got {growth!r}")
    for name, v, low in (("num_leaves", num_leaves, 2), ("min_child_samples", min_child_samples, 1)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < low:
            raise ValueError(f"{name} must be an int >= {low}, got {v!r}")
    if growth == "symmetric":
        if num_leaves & (num_leaves - 1):
            raise ValueError(f"num_leaves must be a power of two >= 2 with growth='symmetric' (a symmetric "
                             f"tree of depth D has 2^D leaves), got {num_leaves!r}")
        if criterion not in SYMMETRIC_CRITERIA:
            raise ValueError(f"growth='symmetric' needs criterion 'se' or 'rwse' (its Cosine score sums "
                             f"counts or hessians), got {criterion!r}")
    v = min_child_weight
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)) \
            or not v >= 0:
        raise ValueError(f"min_child_weight must be a number >= 0, got {v!r}")
    v = n_jobs
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or not (v >= 1 or v == -1):
        raise ValueError(f"n_jobs must be an int >= 1 or -1 (all threads), got {v!r}")
    v = reg_lambda
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)) \
            or not 0 <= v < np.inf:
        raise ValueError(f"reg_lambda must be a finite number >= 0, got {v!r}")
    if v != 0 and criterion != "rwse":
        raise ValueError(f"reg_lambda (the L2 leaf penalty) needs criterion='rwse', got {criterion!r}")


def constraint_array(constraint: Any, num_leaves: int, n_features: int) -> np.ndarray | None:
    """The feature of each split in split order (int64, ``num_leaves - 1`` of them at least); an int
    constrains every split; None: unconstrained."""
    if constraint is None:
        return None
    scalar = np.ndim(constraint) == 0
    c = np.atleast_1d(np.asarray(constraint))
    if c.dtype.kind not in "iu" or c.ndim != 1 or c.size == 0:
        raise ValueError("feature_constraint must be an int or a 1-d sequence of feature indices")
    if scalar:
        c = np.repeat(c, max(num_leaves - 1, 1))
    if c.size < num_leaves - 1:
        raise ValueError(f"feature_constraint names {c.size} features; a {num_leaves}-leaf tree needs "
                         f"{num_leaves - 1} (one per internal node)")
    if (c < 0).any() or (c >= n_features).any():
        raise ValueError(f"feature_constraint entries must lie in [0, {n_features})")
    return c.astype(np.int64)


def _indices(name: str, a: Any, bound: int, what: str) -> np.ndarray:
    """``a`` as an array if it is a non-empty 1-d integer sequence of indices in ``[0, bound)``, else a
    ValueError naming ``name``."""
    a = np.asarray(a)
    if a.ndim != 1 or a.size == 0 or a.dtype.kind not in "iu":
        raise ValueError(f"{name} must be a non-empty 1-d sequence of {what} indices (an integer dtype)")
    if a.min() < 0 or a.max() >= bound:
        raise ValueError(f"{name} entries must lie in [0, {bound})")
    return a


#: From this size up a root cache (`Derivatives.root_cache`) is an anonymous mapping of its own
ROOT_CACHE_MAP_BYTES = 1 << 16


def _sparse_empty(rows: int, C: int) -> np.ndarray:
    """An uninitialised C-contiguous float64 ``(rows, C)`` array whose pages are written only where it is
    used. From `ROOT_CACHE_MAP_BYTES` up it is an anonymous mapping (`mmap`, unmapped with the array), not
    a block of the C allocator's heap: glibc serves such a block from its heap once its dynamic mmap
    threshold has risen (after a larger block was freed), and BoostingTree keeps a root cache, most of it
    never written, with every node it extends. On the heap those blocks grew each fit's heap past glibc's
    trim threshold, so the heap was returned to the system at the end of a fit and the next fit faulted its
    pages in again (on the MSLR sample, 10,000 documents x 136 features: about 50 page faults per
    BoostingTree iteration, with `lrank.models.boostingtree.LambdaMARTStep`'s former copy of the lambdas)."""
    nbytes = rows * C * 8
    if nbytes < ROOT_CACHE_MAP_BYTES:
        return np.empty((rows, C))
    return np.frombuffer(mmap.mmap(-1, nbytes), dtype=np.float64).reshape(rows, C)


class Derivatives:
    """A tree's per-document derivatives checked once by their grower (`TreeGrower.derivatives`): ``grad``,
    ``hess`` (float64, C-contiguous), ``h_unit`` (the constant hessian, 0 when it varies), ``tol`` (the
    split gains' tie tolerance: ``TIE_RTOL sum |gamma|`` for NDCGBoost's classifier, a bound on every term
    of its gains; 0 for the other criteria, whose scans scale their own), and what trees grown from them
    share (each feature's root histogram for the column layout)."""

    def __init__(self, grower: TreeGrower, grad: np.ndarray, hess: np.ndarray, h_unit: float,
                 tol: float = 0.0, copied: int = 0, share_roots: bool = True) -> None:
        self.grower, self.grad, self.hess, self.h_unit, self.tol = grower, grad, hess, h_unit, tol
        self._copied = int(copied)  # bytes of the arrays converted here (not the caller's own)
        self.share_roots = bool(share_roots)  # constrained trees keep each feature's root rows (`root_cache`)
        self._root = None
        self._ones = None

    def root_cache(self, C: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(cache, built, offsets)``: the root's histogram rows of the features made so far (``built``),
        every feature's layout (`_root_histogram_columns`). The cache's pages are touched feature by
        feature, so its memory follows the features made: from `ROOT_CACHE_MAP_BYTES` up it is an
        anonymous mapping of its own (`_sparse_empty`), never a block of the allocator's heap."""
        if self._root is None or self._root[0].shape[1] != C:
            g = self.grower
            cache = _sparse_empty(max(int(g.off[-1]), 1), C)
            self._root = (cache, np.zeros(g.codes.shape[1], dtype=np.int64), g.off)
        return self._root

    @property
    def nbytes(self) -> int:
        """The memory these derivatives hold beyond the arrays they were given: the converted copies and
        the root histogram rows made so far."""
        own = self._copied
        if self._root is not None:
            cache, built, off = self._root
            own += int(np.diff(off)[built != 0].sum()) * cache.shape[1] * 8
        return own

    def ones(self) -> np.ndarray:
        """A hessian of ones (the symmetric trees' SE criterion: its count channel), made once."""
        if self._ones is None:
            self._ones = np.ones(self.grad.size)
        return self._ones


class TreeGrower:
    """Grows the trees of one binned matrix with fixed parameters (module docstring).

    Parameters
    ----------
    codes : uint8/uint16 array (n, F)
        Bin codes (``FeatureBins.codes``); kept (not copied when C-contiguous).
    n_bins : int array (F,), optional
        Codes in use per feature (``FeatureBins.n_bins``); default ``codes.max(axis=0) + 1``.
    thresholds : list of arrays, optional
        ``FeatureBins.thresholds``: the trees' raw thresholds (`Tree.predict` on raw features).
    num_leaves : int, default 10
        Leaves to grow to (fewer if no valid split remains).
    min_child_samples : int, default 20
        Fewest documents in a leaf.
    min_child_weight : float, default 1e-3
        Smallest second-derivative sum in a leaf (exact second derivative for OLE with pairs).
    growth : {"best_first", "breadth_first", "depth_first", "symmetric"}
        Leaf-wise (LightGBM), level-order ("width-first", Xia, Zhai & Wang's choice) or pre-order (a node's
        left subtree before its right one) growth, or symmetric (oblivious) trees, CatBoost's default shape
        (`grow_symmetric`: ``num_leaves`` a power of two, criterion ``"se"`` or ``"rwse"``,
        ``min_child_samples`` not applied).
    criterion : {"se", "wse", "rwse", "ole", "classify"}
        The split criterion (``"classify"``: NDCGBoost's classifier tree, grown from the document weights
        ``gamma`` given as ``grad``; its leaves output ``[sum gamma > 0]``).
    n_jobs : int, default 1
        Threads of the kernels that have a parallel twin (-1: all numba threads); results do not depend
        on it.
    reg_lambda : float, default 0.0
        L2 penalty on the leaf values (XGBoost's ``reg_lambda``, LightGBM's ``lambda_l2``), criterion
        ``"rwse"`` only: the split gain scores each side ``G^2 / (H + reg_lambda)`` and a leaf outputs
        ``-G / (H + reg_lambda)``; 0 is Eq. 9 and Eq. 11 as printed. ``min_child_weight`` still bounds
        ``H`` itself.
    """

    #: the fewest documents whose unconstrained SE/RWSE trees read the column-major codes
    column_min_docs = 24_576
    #: largest global-bin matrix (bytes) made; above it the trees read ``codes`` and add offsets per entry.
    #: The saving is the offset load per entry, which only shows while the matrix is cache-sized: 1.2-1.4x
    #: per tree at 5,000 x 136 (1.4 MB), 1.13x at 23,000 x 136 (6 MB), none at 200,000 x 136 (54 MB)
    global_bins_max_bytes = 16 * 2**20
    #: documents x features from which a tree asked to use threads runs the parallel row-major kernels
    parallel_min_tree_work = 1_000_000
    #: rows x features of a histogram (or pairs x features) worth a parallel launch
    parallel_min_work = 200_000
    #: histogram rows (all features' bins) worth a parallel split scan
    parallel_min_bins = 50_000

    def __init__(self, codes: np.ndarray, n_bins: np.ndarray | None = None,
                 thresholds: Sequence[np.ndarray] | None = None, *, num_leaves: int = 10,
                 min_child_samples: int = 20, min_child_weight: float = 1e-3, growth: str = "best_first",
                 criterion: str = "se", n_jobs: int = 1, reg_lambda: float = 0.0) -> None:
        check_tree_params(num_leaves, min_child_samples, min_child_weight, growth, criterion, n_jobs,
                          (*CRITERIA, "classify"), reg_lambda)
        codes = np.ascontiguousarray(codes)
        if codes.ndim != 2 or codes.dtype not in (np.uint8, np.uint16):
            raise ValueError("codes must be a 2-d uint8/uint16 array of bin codes")
        n, F = codes.shape
        if n_bins is None:
            n_bins = codes.max(axis=0).astype(np.int64) + 1 if n else np.ones(F, dtype=np.int64)
        n_bins = np.ascontiguousarray(n_bins, dtype=np.int64)
        if n_bins.shape != (F,) or (F and n_bins.min() < 1):
            raise ValueError(f"n_bins must hold one positive bin count per feature ({F})")
        self.codes = codes
        self.n_bins = n_bins
        self.thresholds = thresholds
        self.num_leaves = int(num_leaves)
        self.min_child_samples = int(min_child_samples)
        self.min_child_weight = float(min_child_weight)
        self.growth = growth
        self.criterion = criterion
        self.n_jobs = int(n_jobs)
        self.reg_lambda = float(reg_lambda)
        self.off = np.zeros(F + 1, dtype=np.int64)  # feature f owns histogram rows off[f]:off[f+1]
        self.off[1:] = np.cumsum(n_bins)
        self.positions = np.arange(F, dtype=np.int64)
        L = self.num_leaves
        self.nodes = (np.empty((2 * L - 1, _gk.NI), dtype=np.int64), np.empty((2 * L - 1, _gk.NF)))
        self.leaf_of = np.empty(n, dtype=np.int64)
        self.scan = np.empty((4, max(int(n_bins.max(initial=1)), 1)))
        self._hist = None  # (L, TB, C) histogram slots, made for the channels in use
        self._rows = None  # the row list and its partition scratch (int64)
        self._vals = None  # (n, C) per-document channels of the row-major layouts
        self._gbin = None  # global bin indices off[f] + code, False when past the limits (`global_bins`)
        self._gbin_any = None  # the same whatever their size (`whole_tree_bins`)
        self._cols = None  # the column layout's codes, row list and buffers (`columns`)
        self._pairs = None  # OLE's pair buffers (`pair_buffers`)
        self._par = None  # the parallel twins' buffers (`parallel`)
        self._layouts: dict = {}  # constraint -> its histogram layout (`_layout`)
        self._n_bins_list: list[int] | None = None  # n_bins as Python ints (`_plain_layout`)
        self._sym = None  # symmetric trees' workspaces (`_symmetric_buffers`)
        self._tmp = None  # `_scratch`
        # NDCGBoost's node totals are counts and a row sum, not feature 0's bins: a constrained tree reads
        # its constraint's columns only
        self._no_totals_feature = criterion == "classify"

    # -------------------------------------------------------------------------------- buffers
    def _scratch(self, n: int) -> np.ndarray:
        """``n`` float64 of scratch for a temporary of the derivatives' checks (made once)."""
        if self._tmp is None or self._tmp.size != n:
            self._tmp = np.empty(n)
        return self._tmp

    def _histograms(self, C: int) -> np.ndarray:
        TB = max(int(self.off[-1]), 1)
        if self._hist is None or self._hist.shape[2] != C:
            self._hist = np.zeros((self.num_leaves, TB, C))
        return self._hist

    def _row_list(self) -> tuple[np.ndarray, np.ndarray]:
        if self._rows is None:
            n = self.codes.shape[0]
            self._rows = (np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64))
        return self._rows

    def _values(self, C: int) -> np.ndarray:
        if self._vals is None or self._vals.shape[1] != C:
            self._vals = np.empty((self.codes.shape[0], C))
        return self._vals

    def global_bins(self) -> np.ndarray | None:
        """``off[f] + codes[:, f]`` as uint16 (n, F), made once: the histogram rows of every entry, so the
        histogram loop adds no offsets (the same bits). None when the histogram has more than 65,536 rows
        or the matrix would exceed `global_bins_max_bytes`."""
        if self._gbin is None:
            ok = self.off[-1] <= 65536 and 2 * self.codes.size <= self.global_bins_max_bytes
            self._gbin = _hk.global_bins(self.codes, self.n_bins) if ok else False
        return self._gbin if self._gbin is not False else None

    def whole_tree_bins(self) -> np.ndarray:
        """`global_bins`, or past its limits the same indices made anyway (uint32 past 65,536 histogram
        rows): the serial unconstrained trees read them below `column_min_docs` documents."""
        gbin = self.global_bins()
        if gbin is None:
            if self._gbin_any is None:
                self._gbin_any = _hk.global_bins(self.codes, self.n_bins)
            gbin = self._gbin_any
        return gbin

    def columns(self) -> tuple[np.ndarray, ...]:
        """The column layout's codes ``codes.T`` (C-contiguous (F, n), one copy: n F bytes), its row list
        and partition scratch (int32), made on first use."""
        if self._cols is None:
            n = self.codes.shape[0]
            with threads(self.n_jobs):
                codes_t = _hk.transpose(self.codes)
            self._cols = (codes_t, np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int32), {})
        return self._cols

    def _gather_buffers(self, C: int, nthr: int, full: bool) -> tuple[np.ndarray, tuple | None]:
        """One (CHUNK_ROWS, C) buffer per thread numba may use (pages never touched cost no memory) and,
        for every feature with four channels, the root's count cache (`_root_histogram_columns`)."""
        bufs = self.columns()[3]
        key = ("og", C)
        if key not in bufs:
            bufs[key] = np.empty((numba.config.NUMBA_NUM_THREADS, _hk.CHUNK_ROWS, C))
        counts = None
        if full and C == 4:
            if "counts" not in bufs:
                TB = int(self.off[-1])
                B = numba.config.NUMBA_NUM_THREADS
                bufs["counts"] = (np.zeros(TB + 1), np.empty((B, _hk.CHUNK_ROWS, 2)), np.zeros((TB, 2)))
            counts = bufs["counts"]
            counts = (counts[0], counts[1][:nthr], counts[2])
        return bufs[key][:nthr], counts

    def pair_buffers(self, m: int) -> tuple:
        """OLE's buffers for ``m`` pairs (room for half as many more): the pair lists and the partition's
        scratch, each document's weight ``u``, the pair histogram slots and the kernels' bin scratch."""
        if self._pairs is None or self._pairs[0].size < max(m, 1):
            P = max(m + m // 2, 1)
            n, F = self.codes.shape
            TB = max(int(self.off[-1]), 1)
            gdt = self.global_bins().dtype if self.global_bins() is not None else np.uint32
            self._pairs = (np.empty(P, dtype=np.int64), np.empty(P, dtype=np.int64), np.empty(P),
                           np.empty(P, dtype=np.int64), np.empty(P, dtype=np.int64), np.empty(P),
                           np.empty(n), np.zeros((self.num_leaves, TB)), np.zeros((self.num_leaves, TB)),
                           np.empty((3, max(F, 1)), dtype=np.uint32), np.empty((2, max(F, 1)), dtype=gdt))
        return self._pairs

    def parallel(self, nblk: int) -> tuple:
        """The parallel twins' arguments: block count, the work thresholds, zero offsets (global bins),
        the split scans' per-feature results and buffers, the pair histograms' per-block bin scratch."""
        F = self.codes.shape[1]
        if self._par is None:
            B = numba.config.NUMBA_NUM_THREADS
            self._par = (np.zeros(F + 1, dtype=np.int64), np.empty(F), np.empty(F, dtype=np.int64),
                         np.empty((F, 4, self.scan.shape[1])), np.empty((B, 3, max(F, 1)), dtype=np.uint32))
        z, gains, js, bufs, pbins = self._par
        return (int(nblk), int(self.parallel_min_work), int(self.parallel_min_bins), z, gains, js, bufs,
                pbins)

    # ---------------------------------------------------------------------------------- growing
    def derivatives(self, grad: np.ndarray, hess: np.ndarray | None = None, *,
                    share_roots: bool = True) -> Derivatives:
        """``grad`` and ``hess`` checked once (shape, finiteness, a constant hessian) for one or more trees
        (`grow` takes them instead of the arrays): BoostingTree extends one model with several constrained
        trees, which then also share each feature's root histogram (made for the first tree that needs it;
        the same bits). ``share_roots=False``: derivatives for one tree (a step that reweights itself), whose
        root histograms are made straight into the tree's own (no cache to fill; the same bits). The arrays
        are kept, not copied: they must not change while in use."""
        n = self.codes.shape[0]
        classify = self.criterion == "classify"
        given = (grad, hess)
        grad = np.ascontiguousarray(grad, dtype=np.float64)
        hess = grad if classify else np.ascontiguousarray(hess, dtype=np.float64)
        copied = (grad.nbytes if grad is not given[0] else 0) + (
            hess.nbytes if hess is not grad and hess is not given[1] else 0)
        if grad.shape != (n,) or hess.shape != (n,):
            raise ValueError(f"grad and hess must have shape ({n},)")
        # a NaN or an infinity makes the sum non-finite: one reduction each; the element test only then
        # (finite values may overflow the sum)
        with np.errstate(over="ignore", invalid="ignore"):
            sums_finite = bool(np.isfinite(grad.sum()) and (hess is grad or np.isfinite(hess.sum())))
        if not sums_finite and not (np.isfinite(grad).all() and np.isfinite(hess).all()):
            raise ValueError("grad and hess must be finite")
        h0 = float(hess[0]) if n else 0.0
        # constant: every entry h0 (the last one tested first, a varying hessian then costs no pass)
        const = not (self.criterion == "wse" or classify) and h0 > 0.0 and float(hess[-1]) == h0 \
            and bool(np.all(hess == h0))
        tol = TIE_RTOL * float(np.abs(grad, out=self._scratch(n)).sum()) if classify else 0.0
        return Derivatives(self, grad, hess, h0 if const else 0.0, tol, copied,  # constant hessian: MART's 1
                           share_roots)

    def _subset_layout(self, features: Any) -> tuple:
        """``_layout``'s tuple for a tree that may split on ``features`` only (feature subsampling): the
        histograms are built for those features (sorted), unconstrained; every feature: the full layout.
        Not cached (a boosting run draws a new subset per tree)."""
        F = self.codes.shape[1]
        used = np.unique(_indices("features", features, F, "feature")).astype(np.int64)
        if used.size == F:
            return self._layout(None)
        return None, used, self._offsets(used), np.arange(used.size, dtype=np.int64), None

    def _sample(self, sample: Any) -> np.ndarray | None:
        """The in-bag rows of ``sample`` (bagging) checked and in increasing order (int64: each bin is then
        summed in row order, as without a sample); None when it holds every row (the unrestricted tree)."""
        n = self.codes.shape[0]
        s = np.ascontiguousarray(_indices("sample", sample, n, "row"), dtype=np.int64)
        if not (s[1:] > s[:-1]).all():  # not increasing: sorted (a copy), then no two alike
            s = np.sort(s)
            if (s[1:] == s[:-1]).any():
                raise ValueError("sample must not repeat a row (a draw without replacement)")
        return None if s.size == n else s

    def _offsets(self, used: np.ndarray) -> np.ndarray:
        """The histogram offsets of the features ``used``, in that order (``off[-1]`` bins in all)."""
        off = np.zeros(used.size + 1, dtype=np.int64)
        off[1:] = np.cumsum(self.n_bins[used])
        return off

    def _layout(self, constraint: Any) -> tuple:
        """``(cons, used, off, positions, cons_pos)`` of a constraint (made once per constraint): its
        features in split order (the first ``max(num_leaves - 1, 1)``: a tree makes no more splits, so
        entries past them are checked but not read), the features a constrained tree builds histograms of
        (those and feature 0, sorted; NDCGBoost's classifier reads no totals from a histogram, so not
        feature 0 there), their histogram offsets and positions, and the constraint as positions among
        them."""
        plain = type(constraint) is tuple and all(type(c) is int for c in constraint)  # BoostingTree's
        key = constraint if plain or constraint is None else (
            tuple(constraint) if np.ndim(constraint) else int(constraint))
        got = self._layouts.get(key)
        if got is None and plain:
            got = self._plain_layout(constraint)
        if got is None:
            cons = constraint_array(constraint, self.num_leaves, self.codes.shape[1])
            if cons is None:
                got = (None, None, self.off, self.positions, None)
            else:
                cons = cons[:max(self.num_leaves - 1, 1)]
                used = np.unique(cons if self._no_totals_feature else
                                 np.concatenate((cons, np.zeros(1, dtype=np.int64))))
                got = (cons, used, self._offsets(used), np.arange(used.size, dtype=np.int64),
                       np.searchsorted(used, cons).astype(np.int64))
            if len(self._layouts) < 4096:
                self._layouts[key] = got
        return got

    def _plain_layout(self, constraint: tuple[int, ...]) -> tuple | None:
        """`_layout`'s tuple of a constraint given as a tuple of Python ints (what BoostingTree's steps
        pass, a new one on most steps of a short fit), built on Python lists: the same arrays as the NumPy
        route (`np.unique` is ``sorted(set(.))``, `np.searchsorted` is `bisect.bisect_left`), at a
        fraction of its fixed cost for a few features. None when the constraint is short, empty or out of
        range: the NumPy route then says why."""
        L1, F = self.num_leaves - 1, self.codes.shape[1]
        if not constraint or len(constraint) < L1 or min(constraint) < 0 or max(constraint) >= F:
            return None
        constraint = constraint[:max(L1, 1)]  # the splits a tree makes
        used = sorted({*constraint} if self._no_totals_feature else {0, *constraint})
        if self._n_bins_list is None:
            self._n_bins_list = self.n_bins.tolist()
        nb, off = self._n_bins_list, [0]
        for f in used:
            off.append(off[-1] + nb[f])
        k, u = len(constraint), len(used)
        pos = [bisect.bisect_left(used, c) for c in constraint]
        a = np.array([*constraint, *used, *off, *range(u), *pos], dtype=np.int64)  # five contiguous slices
        return a[:k], a[k:k + u], a[k + u:k + 2 * u + 1], a[k + 2 * u + 1:k + 3 * u + 1], a[k + 3 * u + 1:]

    def grow(self, grad: np.ndarray | Derivatives, hess: np.ndarray | None = None, *,
             pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
             constraint: int | Sequence[int] | None = None,
             features: Sequence[int] | np.ndarray | None = None,
             sample: Sequence[int] | np.ndarray | None = None, score_noise: float = 0.0,
             rng: np.random.Generator | None = None) -> tuple[Tree, np.ndarray]:
        """Grow one tree from ``grad = L'(o=0)`` and ``hess = L''(o=0)`` per document.

        Parameters
        ----------
        grad, hess : float arrays (n,), or grad a `Derivatives` (`derivatives`) and hess None
            First and second derivatives of the loss at each document's score (for ``"classify"``: the
            document weights ``gamma`` as ``grad``, ``hess`` not read).
        pairs : (pa, pb, pw), optional
            The pair list with the pairwise second derivatives (OLE with a pairwise loss only).
        constraint : int or sequence of int, optional
            The feature of each split, in split order (an int: every split); at least ``num_leaves - 1``
            entries, all in range; those past the first ``num_leaves - 1`` are not used.
        features : sequence of int, optional
            The features this tree may split on (feature subsampling, LightGBM's ``feature_fraction``):
            its histograms are built and searched for these only. None (and every feature): all of them.
            Not with ``constraint``.
        sample : int array, optional
            The rows this tree is grown on (bagging: LightGBM's ``bagging_fraction``, XGBoost's
            ``subsample``): distinct row indices, in any order (taken in increasing order). The histograms,
            node totals and counts (``min_child_samples``), the split search and the leaf values (Eq. 11)
            see these rows only; every other row is sent down the finished tree by its codes (``code <=
            bin`` to the left) to its leaf in ``leaf_of``. None (and every row): all of them, the same bits.
            Not with OLE's pair list.
        score_noise : float, default 0.0
            Symmetric trees only (`grow_symmetric`): the split-score noise's scale ``s``; every candidate's
            score at every level gets ``+ sigma z``, ``z`` standard normal drawn from ``rng`` and ``sigma = s
            sqrt(mean grad^2)`` over the tree's rows (CatBoost's ``random_strength``, the caller's ``s``
            holding its model-size decrease). 0: no noise, nothing drawn.
        rng : numpy.random.Generator, optional
            The normals' generator (needed when ``score_noise > 0``): ``(levels, histogram bins)`` normals
            per tree.

        Returns
        -------
        tree : Tree
            The node record (leaf values by Eq. 11, or NDCGBoost's 0/1).
        leaf_of : int64 array (n,)
            Each document's leaf (in the sample or not): the grower's own array, valid until its next tree.
        """
        d = grad if isinstance(grad, Derivatives) else self.derivatives(grad, hess)
        if d.grower is not self:
            raise ValueError("the derivatives were checked by another grower")
        if self.growth == "symmetric":
            return self.grow_symmetric(d, pairs=pairs, constraint=constraint, features=features,
                                       sample=sample, score_noise=score_noise, rng=rng)
        if score_noise != 0.0:
            raise ValueError(f"score_noise (random_strength) needs growth='symmetric', got {self.growth!r}")
        grad, hess, h_unit = d.grad, d.hess, d.h_unit
        codes = self.codes
        n, F = codes.shape
        crit = self.criterion
        classify, wse = crit == "classify", crit == "wse"
        use_pairs = pairs is not None and crit == "ole"
        if features is not None and constraint is not None:
            raise ValueError("give a feature constraint or a feature subset, not both")
        cons, used, off, positions, cons_pos = (self._layout(constraint) if features is None
                                                else self._subset_layout(features))
        kw: dict[str, Any] = dict(constraint=cons_pos, tol=d.tol)
        if sample is not None:
            if use_pairs:
                raise ValueError("sample (bagging) cannot grow OLE's tree with a pair list: the pairs of "
                                 "out-of-bag documents")
            sample = kw["sample"] = self._sample(sample)
            if sample is None:
                del kw["sample"]
            elif classify:  # the tie tolerance of the in-bag weights (a bound on every term of their gains)
                kw["tol"] = TIE_RTOL * float(np.abs(grad[sample]).sum())
        if classify:
            kw["cls"] = grad
        elif use_pairs:
            m = int(pairs[0].size)
            buf = self.pair_buffers(m)
            buf[0][:m], buf[1][:m], buf[2][:m] = pairs
            kw.update(pairs=buf, n_pairs=m)
        elif not wse:
            kw["scan"] = self.scan
        if not (use_pairs or wse) and (used is not None or n >= self.column_min_docs):
            # NDCGBoost's classifier: the constant "hessian" 1, whose sums are its counts (no array read)
            h_unit = 1.0 if classify else h_unit
            C = 2 if h_unit > 0.0 else 4
            fmap = self.positions if used is None else used
            codes_t, rows, tmp, _ = self.columns()
            if sample is not None:  # the row list of the in-bag rows
                rows, tmp = rows[:sample.size], tmp[:sample.size]
            hess_c = grad if h_unit > 0.0 else hess  # a constant hessian: h_unit, hess_c not read
            with contextlib.nullcontext(1) if self.n_jobs == 1 else threads(self.n_jobs) as nthr:
                # the root's counts are kept for every tree of all rows only
                og, counts = self._gather_buffers(C, nthr, used is None and sample is None)
                work = (off, self._histograms(C), rows, tmp, self.leaf_of, positions)
                par = self.parallel(nthr) if nthr > 1 else None  # one thread: no parallel launch at all
                # the root histograms are kept for the next tree on these derivatives only under a
                # constraint (BoostingTree's candidate trees); a feature subset gets new derivatives
                rootc = d.root_cache(C) if (cons is not None and d.share_roots and par is None
                                            and sample is None) else None
                n_nodes, n_leaves = self._grow(work, fmap, h_unit, cols=(codes_t, fmap, grad, hess_c, og),
                                               counts=counts, par=par, rootc=rootc, **kw)
            return self._finish(n_nodes, classify), self.leaf_of
        C = 4 if wse else (2 if h_unit > 0.0 or classify else 3)  # NDCGBoost's: (gamma, ones = counts)
        vals = self._values(C)
        vals[:, 0] = grad
        vals[:, 1] = 1.0 if classify else hess
        if C >= 3:
            vals[:, 2] = 1.0
        if C == 4:  # WSE: w r^2 = L'^2 / L'' (Eq. 6); L'' floored at 1e-12
            vals[:, 3] = grad * grad / np.maximum(hess, 1e-12)
        serial = self.n_jobs == 1 or n * F < self.parallel_min_tree_work
        feats = used if used is not None and used.size < F else None
        gbin = rowoff = None
        if feats is None:
            off, positions = self.off, self.positions
            gbin = self.whole_tree_bins() if not (use_pairs or wse) and cons is None and serial \
                else self.global_bins()
            if gbin is None:
                rowoff = self.off
        fmap = self.positions if feats is None else feats
        rows, tmp = self._row_list()
        if sample is not None:
            rows, tmp = rows[:sample.size], tmp[:sample.size]
        work = (off, self._histograms(C), rows, tmp, self.leaf_of, positions)
        with contextlib.nullcontext(1) if serial else threads(self.n_jobs) as nthr:
            par = None if serial else self.parallel(nthr)
            n_nodes, n_leaves = self._grow(work, fmap, h_unit, codes=codes, gbin=gbin, feats=feats,
                                           rowoff=rowoff, vals=vals, par=par, **kw)
        return self._finish(n_nodes, classify), self.leaf_of

    def _symmetric_buffers(self, nblk: int) -> tuple[np.ndarray, ...]:
        """The symmetric trees' workspaces (`lrank._kernels.grower.grow_symmetric`'s ``work``: histograms of
        the deepest level's leaves over every feature's bins, each level's overwriting its parents' in
        place; the leaves' totals; the scan's left sums, one per block of features, ``nblk`` blocks; the
        candidates' scores; a level's built rows, their values and the leaves' counts; the built children's
        histograms and totals; the root's gathered chunk of values per block), made once (the blocks'
        buffers again for more blocks)."""
        half = self.num_leaves // 2
        P = max(half // 2, 1)
        TB = max(int(self.off[-1]), 1)
        n = self.codes.shape[0]
        if self._sym is None:
            self._sym = (np.zeros((half, TB, 2)), np.zeros((half, 2)), np.zeros((1, half, 2)), np.zeros(TB),
                         np.empty((2, n), dtype=np.int64), np.empty((n, 2)),
                         np.empty(2 * half, dtype=np.int64), np.zeros((P, TB, 2)), np.zeros((P, 2)),
                         np.empty((1, min(n, _hk.CHUNK_ROWS), 2)))
        if self._sym[2].shape[0] < nblk:
            self._sym = (*self._sym[:2], np.zeros((nblk, half, 2)), *self._sym[3:9],
                         np.empty((nblk, min(n, _hk.CHUNK_ROWS), 2)))
        return (*self._sym[:2], self._sym[2][:nblk], *self._sym[3:9], self._sym[9][:nblk])

    def grow_symmetric(self, d: Derivatives, *, pairs: Any = None, constraint: Any = None,
                       features: Sequence[int] | np.ndarray | None = None,
                       sample: Sequence[int] | np.ndarray | None = None, score_noise: float = 0.0,
                       rng: np.random.Generator | None = None) -> tuple[Tree, np.ndarray]:
        """A symmetric (oblivious) tree, CatBoost's default shape (`grow` with ``growth="symmetric"``).

        Depth ``D = log2(num_leaves)``; each level has ONE split ``(f, j)`` (right when ``code > j``) shared
        by all its nodes: the candidate of largest Cosine score (CatBoost's default ``score_function``)
        summed over the level's leaves and both sides, ``sum G a / sqrt(sum H a^2)`` with ``a = G / (H +
        reg_lambda)``, a side with ``H <= min_child_weight`` adding nothing (``H`` the hessian sum for
        ``"rwse"``, the count for ``"se"``); with ``reg_lambda = 0`` it is the square root of the summed
        Newton gain ``sum G^2 / H``. Ties and near-ties (``TIE_RTOL``) go to the first candidate in
        (feature, bin) order. Leaves: ``-G / (H + reg_lambda)`` on the hessian (Eq. 11), 0 where ``H <=
        min_child_weight``. ``min_child_samples`` is not applied (CatBoost's ``min_data_in_leaf`` applies
        to its non-symmetric policies only). Growth stops early (fewer levels) only when no candidate
        feature has two bins. ``features`` restricts the candidates, ``sample`` the rows of the histograms
        and leaf values (the others are routed down the tree); no pair list (OLE), no constraint.

        The tree is the ordinary node record in heap order (internal node ``i`` has children ``2i + 1``,
        ``2i + 2``; leaves ``2^D - 1 ...``), its ``gain`` the criterion's ``score(l) + score(r) -
        score(node)`` per node (``G^2 / (H + reg_lambda)``, or ``G^2 / N`` for SE), ``count``, ``sum_grad``
        and ``sum_hess`` over the tree's rows; ``leaf_of`` each row's leaf node.
        """
        if pairs is not None:
            raise ValueError("growth='symmetric' grows no tree from a pair list (criterion 'ole')")
        if constraint is not None:
            raise ValueError("growth='symmetric' takes no feature constraint (one split per level, searched "
                             "over every candidate feature)")
        score_noise = float(score_noise)
        if not (score_noise >= 0.0 and score_noise < np.inf):
            raise ValueError(f"score_noise must be a finite number >= 0, got {score_noise!r}")
        if score_noise > 0.0 and not isinstance(rng, np.random.Generator):
            raise ValueError("score_noise > 0 needs rng, a numpy.random.Generator")
        F = self.codes.shape[1]
        if features is None:
            feats, off = self.positions, self.off
        else:
            feats = np.unique(_indices("features", features, F, "feature")).astype(np.int64)
            off = self._offsets(feats)
        rows = None if sample is None else self._sample(sample)  # None: every row, read with no row list
        D = self.num_leaves.bit_length() - 1
        lam = self.reg_lambda
        mh = self.min_child_weight
        se = self.criterion == "se"
        sigma, noise = 0.0, None
        if score_noise > 0.0:
            g = d.grad if rows is None else d.grad[rows]
            sigma = score_noise * float(np.sqrt(np.mean(g * g)))  # CatBoost's random_strength scale
            noise = rng.standard_normal((D, max(int(off[-1]), 1)))
        # the parallel twins (blocks of feature groups, one per thread: the same bits) from n F + 2^D B >=
        # parallel_min_tree_work, n the tree's rows, F its candidate features and B their bins: the levels'
        # histogram zeroing, subtraction and scans cost ~2^D B whatever n (at 2,400 x 136 codes of ~255
        # bins and 32 leaves a tree took 9 ms on two threads against 10.5-14.6 on one)
        n = self.codes.shape[0] if rows is None else rows.size
        work_size = n * feats.size + self.num_leaves * int(off[-1])
        serial = self.n_jobs == 1 or work_size < self.parallel_min_tree_work
        codes_t = self.columns()[0]
        with contextlib.nullcontext(1) if serial else threads(self.n_jobs) as nthr:
            work = self._symmetric_buffers(nthr)
            depth, split, score, sums = _gk.grow_symmetric(
                codes_t, feats, off, d.grad, d.ones() if se else d.hess, d.hess, rows, self.leaf_of, work, D,
                min_hess=mh, reg_lambda=lam, sigma=sigma, noise=noise, parallel=nthr > 1)
        Lf = 1 << depth
        M = 2 * Lf - 1
        G, H, N = np.zeros(M), np.zeros(M), np.zeros(M)
        G[Lf - 1:], H[Lf - 1:], N[Lf - 1:] = sums[:, 0], sums[:, 1], sums[:, 2]
        for lev in range(depth - 1, -1, -1):  # a node sums its two children
            a, b = (1 << lev) - 1, (1 << (lev + 1)) - 1
            kids = np.arange(2 * a + 1, 2 * b + 1, 2)
            G[a:b], H[a:b], N[a:b] = G[kids] + G[kids + 1], H[kids] + H[kids + 1], N[kids] + N[kids + 1]
        value = np.zeros(M)
        leaf_h = H[Lf - 1:]
        ok = leaf_h > mh
        value[Lf - 1:][ok] = -G[Lf - 1:][ok] / (leaf_h[ok] + lam)  # Eq. 11 (Newton), the L2 penalty
        hs = N if se else H
        with np.errstate(divide="ignore", invalid="ignore"):
            side = np.where(hs > mh, G * G / (hs + lam), 0.0)  # SE (Eq. 3) / RWSE (Eq. 9) side scores
        feature = np.full(M, -1, dtype=np.int64)
        jbin = np.full(M, -1, dtype=np.int64)
        left = np.full(M, -1, dtype=np.int64)
        right = np.full(M, -1, dtype=np.int64)
        theta = np.full(M, np.nan)
        gain = np.zeros(M)
        for lev in range(depth):
            a, b = (1 << lev) - 1, (1 << (lev + 1)) - 1
            f, j = int(feats[split[lev, 0]]), int(split[lev, 1])
            feature[a:b], jbin[a:b] = f, j
            idx = np.arange(a, b)
            left[a:b], right[a:b] = 2 * idx + 1, 2 * idx + 2
            gain[a:b] = side[2 * idx + 1] + side[2 * idx + 2] - side[a:b]
            if self.thresholds is not None:
                theta[a:b] = -np.inf if j == 0 else self.thresholds[f][j - 1]
        tree = Tree(feature, jbin, theta, left, right, value, gain=gain, count=N.astype(np.int64), sum_grad=G,
                    sum_hess=H)
        return tree, self.leaf_of

    def _grow(self, work: tuple, fmap: np.ndarray, h_unit: float, **kw: Any) -> tuple[int, int]:
        """One growth-kernel call."""
        return _gk.grow(self.nodes, work, fmap, criterion=self.criterion, h_unit=h_unit,
                        num_leaves=self.num_leaves, min_data=float(self.min_child_samples),
                        min_hess=self.min_child_weight, growth=self.growth, reg_lambda=self.reg_lambda, **kw)

    def _finish(self, k: int, classify: bool) -> Tree:
        """The `Tree` of the first ``k`` nodes of the node record (leaf values by Eq. 11, or NDCGBoost's
        ``[S > 0]``, made by the kernel); raw thresholds from the grower's ``thresholds``."""
        ni, nf = self.nodes
        ints, floats = ni[:k].T.copy(), nf[:k].T.copy()  # one copy each, rows by column
        feature, jbin, left = ints[_gk.FEATURE], ints[_gk.BIN], ints[_gk.LEFT]
        theta = np.empty(k)
        theta.fill(np.nan)
        if self.thresholds is not None:  # internal nodes only, on Python ints (no NumPy scalar per node)
            for nd, (f, jj) in enumerate(zip(feature.tolist(), jbin.tolist())):
                if f >= 0:
                    theta[nd] = -np.inf if jj == 0 else self.thresholds[f][jj - 1]
        return Tree.of_record(feature, jbin, theta, left, ints[_gk.RIGHT], floats[_gk.VALUE],
                              floats[_gk.GAIN], ints[_gk.END] - ints[_gk.START], floats[_gk.SUM_G],
                              floats[_gk.SUM_H])

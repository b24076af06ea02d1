"""One node record and one predictor for every tree and ensemble of lrank.

A `Tree` is the node record of one tree, indexed by node (root 0, children appended in split order):
``feature`` (-1 at leaves), ``bin`` (the ``j`` of the test ``code > j``), ``threshold`` (the raw
``theta_j``; ``-inf`` for the split "missing vs known"; NaN at leaves, or everywhere for a tree grown
without thresholds), ``left`` / ``right`` (-1 at leaves), ``value`` (the leaf outputs, 0 at internal
nodes), and what the grower knew of each node: ``gain`` (of its split), ``count`` (its training
documents), ``sum_grad`` and ``sum_hess``. A row goes right when its value is ``> threshold`` (its code
``> bin``), left otherwise: NaN goes left. ``scale`` multiplies every output (NDCGBoost's ``alpha``).

An ensemble (MART, LambdaMART, McRank) stacks its trees' ``(feature, threshold, left, right, value)`` into
``(n_trees, nodes)`` arrays (`stack`) and adds their leaf values with `predict_add`. Every prediction runs
through ``lrank._kernels.predictor``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from lrank._kernels import predictor as _pk
from lrank._kernels._jit import threads


class Tree:
    """One fitted tree: its node record and its predictor (module docstring).

    Parameters
    ----------
    feature, bin, threshold, left, right, value : ndarray (n_nodes,)
        The node record.
    gain, count, sum_grad, sum_hess : ndarray (n_nodes,), optional
        What the grower knew of each node (zeros when not given).
    scale : float, default 1.0
        Multiplies every output (`predict`).
    """

    def __init__(self, feature: np.ndarray, bin: np.ndarray, threshold: np.ndarray, left: np.ndarray,
                 right: np.ndarray, value: np.ndarray, gain: np.ndarray | None = None,
                 count: np.ndarray | None = None, sum_grad: np.ndarray | None = None,
                 sum_hess: np.ndarray | None = None, scale: float = 1.0) -> None:
        self.feature = np.asarray(feature, dtype=np.int64)
        self.bin = np.asarray(bin, dtype=np.int64)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        self.left = np.asarray(left, dtype=np.int64)
        self.right = np.asarray(right, dtype=np.int64)
        self.value = np.asarray(value, dtype=np.float64)
        k = self.value.size
        zeros = np.zeros(k)
        self.gain = zeros if gain is None else np.asarray(gain, dtype=np.float64)
        self.count = np.zeros(k, dtype=np.int64) if count is None else np.asarray(count, dtype=np.int64)
        self.sum_grad = zeros if sum_grad is None else np.asarray(sum_grad, dtype=np.float64)
        self.sum_hess = zeros if sum_hess is None else np.asarray(sum_hess, dtype=np.float64)
        self.scale = float(scale)

    @classmethod
    def of_record(cls, feature: np.ndarray, bin: np.ndarray, threshold: np.ndarray, left: np.ndarray,
                  right: np.ndarray, value: np.ndarray, gain: np.ndarray, count: np.ndarray,
                  sum_grad: np.ndarray, sum_hess: np.ndarray) -> Tree:
        """The tree of a node record whose arrays have the record's dtypes already (int64 ``feature``,
        ``bin``, ``left``, ``right``, ``count``; float64 the others; one length), kept as given: the
        grower's `lrank.trees.grower.TreeGrower._finish`, once per tree, where the conversions of
        ``__init__`` would be checks of what holds. ``scale`` 1."""
        tree = cls.__new__(cls)
        tree.feature, tree.bin, tree.threshold, tree.left, tree.right = feature, bin, threshold, left, right
        tree.value, tree.gain, tree.count = value, gain, count
        tree.sum_grad, tree.sum_hess = sum_grad, sum_hess
        tree.scale = 1.0
        return tree

    @property
    def n_nodes(self) -> int:
        return int(self.value.size)

    @property
    def n_leaves(self) -> int:
        return int((self.left < 0).sum())

    @property
    def num_leaves(self) -> int:
        """The number of leaves (the name of the trees' parameter)."""
        return self.n_leaves

    def record(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``(feature, threshold, left, right, value)``, the part of the record an ensemble stacks (the
        outputs with ``scale`` applied)."""
        value = self.value if self.scale == 1.0 else self.value * self.scale
        return self.feature, self.threshold, self.left, self.right, value

    # ------------------------------------------------------------------------------ prediction
    def apply(self, X: np.ndarray) -> np.ndarray:
        """The leaf node of every row of the raw features ``X`` (float32; NaN goes left)."""
        if self.n_nodes > 1 and np.isnan(self.threshold[self.left >= 0]).any():
            raise RuntimeError("the tree was grown without thresholds; use apply_codes")
        X = np.ascontiguousarray(X, dtype=np.float32)
        return _pk.apply(X, self.feature, self.threshold, self.left, self.right)

    def apply_codes(self, codes: np.ndarray) -> np.ndarray:
        """The leaf node of every row of a binned matrix (``lrank.data.binning`` codes)."""
        codes = np.ascontiguousarray(codes)
        if codes.ndim != 2 or codes.dtype not in (np.uint8, np.uint16):
            raise ValueError("codes must be a 2-d uint8/uint16 array of bin codes")
        return _pk.apply(codes, self.feature, self.bin, self.left, self.right)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """``scale * value`` of each row's leaf (raw features)."""
        return self.scale * self.value[self.apply(X)]

    def predict_codes(self, codes: np.ndarray) -> np.ndarray:
        """``scale * value`` of each row's leaf (bin codes)."""
        return self.scale * self.value[self.apply_codes(codes)]


def stack(records: Sequence[tuple[np.ndarray, ...]], n_nodes: int) -> tuple[np.ndarray, ...]:
    """Stack per-tree ``(feature, threshold, left, right, value)`` records (`Tree.record`) into five
    ``(n_trees, n_nodes)`` arrays, padded after each tree's own nodes (feature 0, threshold 0, no
    children, value 0); ``feature`` -1 at a leaf is stored as 0 (never read: a leaf has no test)."""
    T = len(records)
    f = np.zeros((T, n_nodes), dtype=np.int64)
    th = np.zeros((T, n_nodes))
    lt = np.full((T, n_nodes), -1, dtype=np.int64)
    rt = np.full((T, n_nodes), -1, dtype=np.int64)
    v = np.zeros((T, n_nodes))
    for t, (ft, tht, ltt, rtt, vt) in enumerate(records):
        m = vt.size
        f[t, :m] = ft
        th[t, :m] = tht
        lt[t, :m] = ltt
        rt[t, :m] = rtt
        v[t, :m] = vt
    np.maximum(f, 0, out=f)
    return f, th, lt, rt, v


#: `predict_add` shares the rows among ``n_jobs`` threads from this many rows (16 blocks of
#: ``lrank._kernels.predictor.PREDICT_BLOCK``) and `PARALLEL_MIN_PREDICT_WORK` rows x trees: below either,
#: a second thread saves little or loses. Measured on two cores, 31-leaf trees, 136 features
#: (2 threads against 1, two runs): 256 rows x 16 trees 0.53-0.82x, 1,024 x 1 0.68-0.93x, 4,096 x 1
#: 1.06-1.38x, 1,024 x 16 0.90-1.23x, 4,096 x 16 1.19-1.21x, 1,024 x 100 1.75-1.84x.
PARALLEL_MIN_PREDICT_ROWS = 1024
#: rows x trees from which `predict_add` shares the rows among threads (`PARALLEL_MIN_PREDICT_ROWS`)
PARALLEL_MIN_PREDICT_WORK = 16384


def predict_add(X: np.ndarray, trees: tuple[np.ndarray, ...], tree_ids: np.ndarray | Sequence[int],
                out: np.ndarray, n_jobs: int = 1) -> np.ndarray:
    """``out += sum`` of the leaf values of the stacked trees ``tree_ids`` on the raw features ``X``
    (float32), each row adding its trees in the order of ``tree_ids``; ``out`` (float64, C-contiguous) is
    returned. ``n_jobs`` threads (-1: all of numba's) from `PARALLEL_MIN_PREDICT_ROWS` rows and
    `PARALLEL_MIN_PREDICT_WORK` rows x trees; the result does not depend on it."""
    ids = np.asarray(tree_ids, dtype=np.int64)
    n = X.shape[0]
    if n_jobs == 1 or n < PARALLEL_MIN_PREDICT_ROWS or n * ids.size < PARALLEL_MIN_PREDICT_WORK:
        return _pk.predict_add(X, trees, ids, out)
    with threads(n_jobs) as k:
        return _pk.predict_add(X, trees, ids, out, parallel=k > 1)

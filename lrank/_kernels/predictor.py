"""The tree engine's predictor: the leaf of each row, and the sum of an ensemble's leaf values.

A tree is the node record ``(feature, split, left, right, value)`` (one entry per node, root 0): an
internal node sends a row right when its value on ``feature`` is ``> split`` and left otherwise, NaN
(missing) included; a leaf has ``left = -1``. ``split`` is the raw threshold over raw features or the bin
``j`` of ``code > j`` over binned codes: one kernel serves both (the comparison is typed by the
arguments). An ensemble stacks its trees' records into ``(n_trees, nodes)`` arrays.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ._jit import njit


@njit(inline="always")
def _leaf(X, i, feature, split, left, right):
    """The leaf of row ``i`` in the tree of the 1-d node arrays."""
    node = 0
    while left[node] >= 0:
        if X[i, feature[node]] > split[node]:
            node = right[node]
        else:
            node = left[node]
    return node


@njit(cache=True)
def _apply(X, feature, split, left, right, out):
    """``out[i]`` = the leaf of row ``i`` (raw features and thresholds, or codes and bins)."""
    for i in range(X.shape[0]):
        out[i] = _leaf(X, i, feature, split, left, right)
    return out


#: rows per block of `_predict_add`: a block's feature rows stay in cache while every tree passes over them
PREDICT_BLOCK = 64


@njit(inline="always")
def _leaf_of_tree(X, i, t, feature, split, left, right):
    """The leaf of row ``i`` in tree ``t`` of the stacked ``(n_trees, nodes)`` node arrays."""
    node = 0
    while left[t, node] >= 0:
        if X[i, feature[t, node]] > split[t, node]:
            node = right[t, node]
        else:
            node = left[t, node]
    return node


@njit(inline="always")
def _add_block(X, feature, split, left, right, value, tree_ids, scale, out, b0, b1):
    """``out[i] += scale * value[t, leaf_t(X[i])]`` for the rows ``b0 <= i < b1``, tree after tree; four
    rows walk each tree side by side (independent loads the CPU overlaps), the rest one at a time."""
    for s in range(tree_ids.size):
        t = tree_ids[s]
        i = b0
        while i + 4 <= b1:
            n0 = 0
            n1 = 0
            n2 = 0
            n3 = 0
            walking = True
            while walking:  # a step for each of the four rows not yet at a leaf
                walking = False
                if left[t, n0] >= 0:
                    n0 = right[t, n0] if X[i, feature[t, n0]] > split[t, n0] else left[t, n0]
                    walking = True
                if left[t, n1] >= 0:
                    n1 = right[t, n1] if X[i + 1, feature[t, n1]] > split[t, n1] else left[t, n1]
                    walking = True
                if left[t, n2] >= 0:
                    n2 = right[t, n2] if X[i + 2, feature[t, n2]] > split[t, n2] else left[t, n2]
                    walking = True
                if left[t, n3] >= 0:
                    n3 = right[t, n3] if X[i + 3, feature[t, n3]] > split[t, n3] else left[t, n3]
                    walking = True
            out[i] += scale * value[t, n0]
            out[i + 1] += scale * value[t, n1]
            out[i + 2] += scale * value[t, n2]
            out[i + 3] += scale * value[t, n3]
            i += 4
        while i < b1:
            out[i] += scale * value[t, _leaf_of_tree(X, i, t, feature, split, left, right)]
            i += 1


@njit(cache=True)
def _predict_add(X, feature, split, left, right, value, tree_ids, scale, out):
    """``out[i] += scale * value[t, leaf_t(X[i])]`` for the trees ``t`` of ``tree_ids`` (the ensemble's
    ``(n_trees, nodes)`` records). Rows go in blocks of `PREDICT_BLOCK`, every tree over a block before the
    next block (one pass over ``X``, not one per tree); each row still adds its trees in the order of
    ``tree_ids``, so the sums do not depend on the blocking."""
    n = X.shape[0]
    for b in range((n + PREDICT_BLOCK - 1) // PREDICT_BLOCK):
        b0 = b * PREDICT_BLOCK
        b1 = b0 + PREDICT_BLOCK if b0 + PREDICT_BLOCK < n else n
        _add_block(X, feature, split, left, right, value, tree_ids, scale, out, b0, b1)
    return out


@njit(cache=True, parallel=True)
def _predict_add_threads(X, feature, split, left, right, value, tree_ids, scale, out):
    """`_predict_add` with its row blocks shared among numba's threads: each row is summed by one thread,
    in the order of ``tree_ids``, so the result has the same bits on any number of threads."""
    n = X.shape[0]
    for b in prange((n + PREDICT_BLOCK - 1) // PREDICT_BLOCK):
        b0 = b * PREDICT_BLOCK
        b1 = b0 + PREDICT_BLOCK if b0 + PREDICT_BLOCK < n else n
        _add_block(X, feature, split, left, right, value, tree_ids, scale, out, b0, b1)
    return out


def _check_tree(X: np.ndarray, arrays: tuple[np.ndarray, ...], ndim: int, feature: np.ndarray) -> None:
    """O(1) checks of the layout, and ``feature`` (the used trees' features) against ``X``'s columns."""
    if not isinstance(X, np.ndarray) or X.ndim != 2:
        raise ValueError("X must be a 2-d array")
    shape = arrays[0].shape
    if any(not isinstance(a, np.ndarray) or a.ndim != ndim or a.shape != shape for a in arrays):
        raise ValueError(f"the node arrays must be {ndim}-d arrays of one shape")
    if feature.size and feature.max() >= X.shape[1]:
        raise ValueError(f"the tree splits on feature {int(feature.max())}, X has {X.shape[1]} columns")


def apply(X: np.ndarray, feature: np.ndarray, split: np.ndarray, left: np.ndarray, right: np.ndarray
          ) -> np.ndarray:
    """The leaf of every row of ``X`` in one tree (`_apply`): raw features (float32) with raw thresholds,
    or binned codes with bins."""
    _check_tree(X, (feature, split, left, right), 1, feature)
    return _apply(np.ascontiguousarray(X), feature, split, left, right, np.empty(X.shape[0], dtype=np.int64))


def predict_add(X: np.ndarray, trees: tuple[np.ndarray, ...], tree_ids: np.ndarray, out: np.ndarray,
                scale: float = 1.0, parallel: bool = False) -> np.ndarray:
    """``out += scale * sum`` of the leaf values of the ensemble's trees ``tree_ids`` (`_predict_add`);
    ``trees`` is ``(feature, threshold, left, right, value)``, each ``(n_trees, nodes)``; ``X`` raw
    float32 features (NaN goes left). ``out`` (float64, C-contiguous) is added into and returned.
    ``parallel``: share the rows among numba's current threads (`_predict_add_threads`; same bits)."""
    tree_ids = np.ascontiguousarray(tree_ids, dtype=np.int64)
    if tree_ids.size and (tree_ids.min() < 0 or tree_ids.max() >= trees[0].shape[0]):
        raise ValueError(f"tree_ids must lie in [0, {trees[0].shape[0]})")
    _check_tree(X, trees, 2, trees[0][tree_ids] if tree_ids.size < trees[0].shape[0] else trees[0])
    if not isinstance(out, np.ndarray) or out.dtype != np.float64 or out.shape != (X.shape[0],) \
            or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous float64 array of shape ({X.shape[0]},)")
    kernel = _predict_add_threads if parallel else _predict_add
    return kernel(X, *trees, tree_ids, float(scale), out)


def warmup() -> None:
    """Compile the predictor on a toy stump (raw float32 features; uint8 codes), its parallel twin included
    (an ensemble's ``predict`` with ``n_jobs`` above 1 on many rows)."""
    f = np.zeros((1, 3), dtype=np.int64)
    lr = np.array([[1, -1, -1]], dtype=np.int64)
    for parallel in (False, True):
        predict_add(np.zeros((2, 2), dtype=np.float32), (f, np.zeros((1, 3)), lr, lr + 1, np.zeros((1, 3))),
                    np.zeros(1, dtype=np.int64), np.zeros(2), parallel=parallel)
    apply(np.zeros((2, 2), dtype=np.float32), f[0], np.zeros(3), lr[0], lr[0] + 1)
    apply(np.zeros((2, 2), dtype=np.uint8), f[0], f[0], lr[0], lr[0] + 1)

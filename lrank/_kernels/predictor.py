"""The tree engine's predictor: the leaf of each row, and the sum of an ensemble's leaf values.

A tree is the node record ``(feature, split, left, right, value)`` (one entry per node, root 0): an
internal node sends a row right when its value on ``feature`` is ``> split`` and left otherwise, NaN
(missing) included; a leaf has ``left = -1``. ``split`` is the raw threshold over raw features or the bin
``j`` of ``code > j`` over binned codes: one kernel serves both (the comparison is typed by the
arguments). An ensemble stacks its trees' records into ``(n_trees, nodes)`` arrays; its sums walk them in
the branch-free layout of `walk_layout` (the right child beside the left one, a leaf stepping to itself).
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
def _step(X, i, t, n, feature, split, base):
    """Row ``i``'s next node after node ``n`` of tree ``t`` in the walk layout (`walk_layout`): the left
    child plus one when the row's value is ``> split`` (the right child, beside it); a leaf gives itself."""
    return base[t, n] + (1 if X[i, feature[t, n]] > split[t, n] else 0)


@njit(inline="always")
def _add_block(X, feature, split, base, value, tree_ids, scale, out, b0, b1):
    """``out[i] += scale * value[t, leaf_t(X[i])]`` for the rows ``b0 <= i < b1``, tree after tree. Eight
    rows walk each tree side by side, every one a step per round without a branch on its own path (a
    leaf steps to itself), until a round moves none of them: their loads overlap and no branch on a
    row's direction is mispredicted. The rest of the block walks one row at a time."""
    nodes = base.shape[1]
    for s in range(tree_ids.size):
        t = tree_ids[s]
        i = b0
        while i + 8 <= b1:
            n0 = 0
            n1 = 0
            n2 = 0
            n3 = 0
            n4 = 0
            n5 = 0
            n6 = 0
            n7 = 0
            for _ in range(nodes):  # a path is shorter than the tree's node count: the bound never binds
                m0 = _step(X, i, t, n0, feature, split, base)
                m1 = _step(X, i + 1, t, n1, feature, split, base)
                m2 = _step(X, i + 2, t, n2, feature, split, base)
                m3 = _step(X, i + 3, t, n3, feature, split, base)
                m4 = _step(X, i + 4, t, n4, feature, split, base)
                m5 = _step(X, i + 5, t, n5, feature, split, base)
                m6 = _step(X, i + 6, t, n6, feature, split, base)
                m7 = _step(X, i + 7, t, n7, feature, split, base)
                moved = (m0 != n0) | (m1 != n1) | (m2 != n2) | (m3 != n3) | (m4 != n4) | (m5 != n5) \
                    | (m6 != n6) | (m7 != n7)
                n0 = m0
                n1 = m1
                n2 = m2
                n3 = m3
                n4 = m4
                n5 = m5
                n6 = m6
                n7 = m7
                if not moved:
                    break
            out[i] += scale * value[t, n0]
            out[i + 1] += scale * value[t, n1]
            out[i + 2] += scale * value[t, n2]
            out[i + 3] += scale * value[t, n3]
            out[i + 4] += scale * value[t, n4]
            out[i + 5] += scale * value[t, n5]
            out[i + 6] += scale * value[t, n6]
            out[i + 7] += scale * value[t, n7]
            i += 8
        while i < b1:
            n0 = 0
            for _ in range(nodes):
                m0 = _step(X, i, t, n0, feature, split, base)
                if m0 == n0:
                    break
                n0 = m0
            out[i] += scale * value[t, n0]
            i += 1


@njit(cache=True)
def _predict_add(X, feature, split, base, value, tree_ids, scale, out):
    """``out[i] += scale * value[t, leaf_t(X[i])]`` for the trees ``t`` of ``tree_ids``, over the walk
    layout of the ensemble's ``(n_trees, nodes)`` records (`walk_layout`). Rows go in blocks of
    `PREDICT_BLOCK`, every tree over a block before the next block (one pass over ``X``, not one per
    tree); each row still adds its trees in the order of ``tree_ids``, so the sums do not depend on the
    blocking."""
    n = X.shape[0]
    for b in range((n + PREDICT_BLOCK - 1) // PREDICT_BLOCK):
        b0 = b * PREDICT_BLOCK
        b1 = b0 + PREDICT_BLOCK if b0 + PREDICT_BLOCK < n else n
        _add_block(X, feature, split, base, value, tree_ids, scale, out, b0, b1)
    return out


@njit(cache=True, parallel=True)
def _predict_add_threads(X, feature, split, base, value, tree_ids, scale, out):
    """`_predict_add` with its row blocks shared among numba's threads: each row is summed by one thread,
    in the order of ``tree_ids``, so the result has the same bits on any number of threads."""
    n = X.shape[0]
    for b in prange((n + PREDICT_BLOCK - 1) // PREDICT_BLOCK):
        b0 = b * PREDICT_BLOCK
        b1 = b0 + PREDICT_BLOCK if b0 + PREDICT_BLOCK < n else n
        _add_block(X, feature, split, base, value, tree_ids, scale, out, b0, b1)
    return out


@njit(cache=True)
def _walk_layout(feature, split, left, right, f_out, s_out, base):
    """`walk_layout`'s arrays in one pass (``f_out``, ``s_out``, ``base``: every entry written); returns the
    flat index ``t * nodes + n`` of the first internal node whose children are not side by side after it,
    or -1 (the outputs are then complete)."""
    n_trees, nodes = left.shape
    for t in range(n_trees):
        for n in range(nodes):
            lc = left[t, n]
            if lc >= 0:  # internal: the left child, the right one beside it
                if right[t, n] != lc + 1 or lc <= n:
                    return t * nodes + n
                base[t, n] = lc
                f_out[t, n] = feature[t, n]
                s_out[t, n] = split[t, n]
            else:  # a leaf steps to itself: no value is above +inf
                base[t, n] = n
                f_out[t, n] = 0
                s_out[t, n] = np.inf
    return -1


def walk_layout(feature: np.ndarray, split: np.ndarray, left: np.ndarray, right: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(feature, split, base)`` of `_predict_add`'s walk from ``(n_trees, nodes)`` node records whose
    internal nodes have their two children side by side after them (``right = left + 1 > node``, as the
    grower appends them): ``base`` is the left child, or the node itself at a leaf, where ``split`` is
    ``+inf`` (no value is above it: the walk stays) and ``feature`` 0 (`_walk_layout`). ``feature`` and
    ``base`` come back as int64 and ``split`` as float64 (a float32 threshold is exact in float64: the
    same comparisons). Raises a ValueError naming a node that breaks the layout."""
    arrays = (feature, split, left, right)
    if any(not isinstance(a, np.ndarray) or a.ndim != 2 or a.shape != left.shape for a in arrays):
        raise ValueError("feature, split, left and right must be 2-d arrays of one shape")
    feature, left, right = (np.ascontiguousarray(a, dtype=np.int64) for a in (feature, left, right))
    split = np.ascontiguousarray(split, dtype=np.float64)
    f_out, base = np.empty(left.shape, dtype=np.int64), np.empty(left.shape, dtype=np.int64)
    s_out = np.empty(left.shape, dtype=np.float64)
    bad = _walk_layout(feature, split, left, right, f_out, s_out, base)
    if bad >= 0:
        t, n = divmod(int(bad), left.shape[1])
        raise ValueError(f"tree {t}, node {n}: children ({int(left[t, n])}, {int(right[t, n])}) are not "
                         "side by side after their parent (right = left + 1 > node), as the predictor needs")
    return f_out, s_out, base


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
    ``trees`` is ``(feature, threshold, left, right, value)``, each ``(n_trees, nodes)``, with each internal
    node's children side by side after it (`walk_layout`); ``X`` raw float32 features (NaN goes left).
    ``out`` (float64, C-contiguous) is added into and returned. ``parallel``: share the rows among numba's
    current threads (`_predict_add_threads`; same bits)."""
    tree_ids = np.ascontiguousarray(tree_ids, dtype=np.int64)
    if tree_ids.size and (tree_ids.min() < 0 or tree_ids.max() >= trees[0].shape[0]):
        raise ValueError(f"tree_ids must lie in [0, {trees[0].shape[0]})")
    _check_tree(X, trees, 2, trees[0][tree_ids] if tree_ids.size < trees[0].shape[0] else trees[0])
    if not isinstance(out, np.ndarray) or out.dtype != np.float64 or out.shape != (X.shape[0],) \
            or not out.flags.c_contiguous:
        raise ValueError(f"out must be a C-contiguous float64 array of shape ({X.shape[0]},)")
    if tree_ids.size == 1:  # the walk layout of the trees used only (staged_predict, eval sets: one)
        t = int(tree_ids[0])
        trees, tree_ids = tuple(a[t:t + 1] for a in trees), np.zeros(1, dtype=np.int64)
    elif tree_ids.size < trees[0].shape[0]:
        used, tree_ids = np.unique(tree_ids, return_inverse=True)
        trees = tuple(a[used] for a in trees)
    feature, threshold, left, right, value = trees
    feature, split, base = walk_layout(feature, threshold, left, right)
    kernel = _predict_add_threads if parallel else _predict_add
    return kernel(X, feature, split, base, np.ascontiguousarray(value, dtype=np.float64),
                  np.ascontiguousarray(tree_ids, dtype=np.int64), float(scale), out)


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

"""The tree engine's predictor (`lrank.trees.predictor`, ``lrank._kernels.predictor``): one tree's leaves
and an ensemble's sums against a plain NumPy walk of the node record."""

import numpy as np
import pytest

from lrank.trees.grower import TreeGrower
from lrank.trees.predictor import Tree, predict_add, stack


def _walk(X, feature, split, left, right):
    """Each row's leaf, one node at a time (NaN compares False: it goes left)."""
    out = np.empty(X.shape[0], dtype=np.int64)
    for i in range(X.shape[0]):
        node = 0
        while left[node] >= 0:
            node = right[node] if X[i, feature[node]] > split[node] else left[node]
        out[i] = node
    return out


def _trees(seed, k=4):
    from lrank.data.binning import bin_features

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(200, 5)).astype(np.float32)
    X[rng.random(X.shape) < 0.15] = np.nan
    X[:, 2] = np.round(X[:, 2])
    bins = bin_features(X)
    g = TreeGrower(bins.codes, bins.n_bins, bins.thresholds, num_leaves=6, min_child_samples=5)
    trees = [g.grow(rng.normal(size=200), rng.uniform(0.1, 1.0, 200))[0] for _ in range(k)]
    trees.append(Tree(np.array([-1]), np.array([-1]), np.array([np.nan]), np.array([-1]), np.array([-1]),
                      np.array([0.5])))  # a single leaf
    return X, bins, trees


@pytest.mark.kernel
@pytest.mark.parametrize("seed", [0, 1])
def test_apply_and_predict_match_a_plain_walk(seed):
    """Raw features (NaN left, ties at a threshold) and binned codes reach the same leaves as the walk;
    ``predict`` is ``scale * value`` of the leaf."""
    X, bins, trees = _trees(seed)
    for t in trees:
        leaf = _walk(X, t.feature, t.threshold, t.left, t.right)
        np.testing.assert_array_equal(t.apply(X), leaf)
        np.testing.assert_array_equal(t.apply_codes(bins.codes), _walk(bins.codes, t.feature, t.bin, t.left,
                                                                       t.right))
        np.testing.assert_array_equal(t.apply_codes(bins.codes), leaf)
        t.scale = -0.75
        assert t.predict(X).tobytes() == (-0.75 * t.value[leaf]).tobytes()


@pytest.mark.kernel
def test_ensemble_sums_trees_in_order():
    """``predict_add`` over stacked trees adds each tree's leaf value after the other (the padding is never
    reached), the same bits as adding them one by one in NumPy."""
    X, bins, trees = _trees(3, k=6)
    records = [t.record() for t in trees]
    M = max(r[4].size for r in records) + 3
    stacked = stack(records, M)
    assert all(a.shape == (len(trees), M) for a in stacked)
    want = np.zeros(X.shape[0])
    for t in trees:
        want += t.value[_walk(X, t.feature, t.threshold, t.left, t.right)]
    got = predict_add(X, stacked, np.arange(len(trees)), np.zeros(X.shape[0]))
    assert got.tobytes() == want.tobytes()
    some = predict_add(X, stacked, [4, 1], np.ones(X.shape[0]))
    np.testing.assert_array_equal(some, 1.0 + trees[4].value[trees[4].apply(X)]
                                  + trees[1].value[trees[1].apply(X)])
    for n in (0, 1, 63, 64, 65, 129):  # whole and partial row blocks of the kernel (PREDICT_BLOCK = 64)
        ids = [2, 0, 5, 2]  # any order, a tree twice: each row adds them in this order
        want = np.full(n, 0.25)
        for i in ids:
            t = trees[i]
            want += t.value[_walk(X[:n], t.feature, t.threshold, t.left, t.right)]
        assert predict_add(X[:n], stacked, ids, np.full(n, 0.25)).tobytes() == want.tobytes()
    with pytest.raises(ValueError, match="tree_ids"):
        predict_add(X, stacked, [len(trees)], np.zeros(X.shape[0]))
    with pytest.raises(ValueError, match="columns"):
        predict_add(X[:, :2], stacked, [0], np.zeros(X.shape[0]))
    with pytest.raises(ValueError, match="out"):
        predict_add(X, stacked, [0], np.zeros(3))


def _caterpillar(rng, depth, F):
    """A chain tree (each right child splits again) of ``depth`` internal nodes, thresholds drawn from
    ``rng``, children side by side after their parent."""
    n = 2 * depth + 1
    feature, threshold = np.full(n, -1), np.full(n, np.nan)
    left, right, value = np.full(n, -1), np.full(n, -1), rng.normal(size=n)
    node = 0
    for d in range(depth):
        feature[node], threshold[node] = rng.integers(F), rng.normal()
        left[node], right[node] = 2 * d + 1, 2 * d + 2
        node = 2 * d + 2
    return Tree(feature, feature, threshold, left, right, value)


@pytest.mark.kernel
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_branch_free_walk_matches_a_plain_walk(seed):
    """The kernel's branch-free walk (eight rows per round, a leaf stepping to itself) against the NumPy
    walk, tree by tree in the order of ``tree_ids``: ties at a threshold (go left), NaN (left), +-inf, deep
    chain trees and a single leaf, every row count around the eight-row rounds and the 64-row blocks, one
    tree and a subset of trees (their own layout), serial and parallel kernels."""
    from lrank._kernels import predictor as pk

    rng = np.random.default_rng(seed)
    X, bins, trees = _trees(seed, k=5)
    trees += [_caterpillar(rng, 30, X.shape[1]), _caterpillar(rng, 3, X.shape[1])]
    X = np.repeat(X, 2, axis=0)
    for t in trees[:3]:  # rows exactly at a threshold
        for node in np.flatnonzero(t.left >= 0)[:3]:
            X[rng.integers(X.shape[0], size=5), t.feature[node]] = t.threshold[node]
    X[rng.random(X.shape) < 0.02] = np.inf
    X[rng.random(X.shape) < 0.02] = -np.inf
    stacked = stack([t.record() for t in trees], max(t.n_nodes for t in trees) + 2)
    for ids in ([0, 1, 2, 3, 4, 5, 6, 7], [6], [5], [7, 6, 6, 0]):
        for n in (1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 72, 200, X.shape[0]):
            want = np.full(n, -0.5)
            for i in ids:
                t = trees[i]
                want += t.value[_walk(X[:n], t.feature, t.threshold, t.left, t.right)]
            for parallel in (False, True):
                got = pk.predict_add(X[:n], stacked, ids, np.full(n, -0.5), parallel=parallel)
                assert got.tobytes() == want.tobytes(), (ids, n, parallel)


def test_the_walk_layout_refuses_children_apart():
    """The branch-free walk needs each internal node's children side by side after it; a record that
    breaks this (not one lrank writes) is refused, naming the tree and node, not walked wrongly."""
    from lrank._kernels.predictor import walk_layout

    f = np.zeros((2, 5), dtype=np.int64)
    th = np.zeros((2, 5))
    left = np.array([[1, -1, -1, -1, -1], [1, 3, -1, -1, -1]])
    right = np.array([[2, -1, -1, -1, -1], [2, 4, -1, -1, -1]])
    feature, split, base = walk_layout(f, th, left, right)
    np.testing.assert_array_equal(base, [[1, 1, 2, 3, 4], [1, 3, 2, 3, 4]])
    assert np.isinf(split[left < 0]).all() and (split[left >= 0] == 0).all()
    apart = right.copy()
    apart[1, 1] = 2  # node 1's children 3 and 2
    with pytest.raises(ValueError, match="tree 1, node 1"):
        walk_layout(f, th, left, apart)
    before = left.copy()
    before[1, 1], apart[1, 1] = 0, 1  # node 1's children 0 and 1: not after it
    with pytest.raises(ValueError, match="tree 1, node 1"):
        walk_layout(f, th, before, apart)


def test_a_tree_without_thresholds_predicts_codes_only():
    _, bins, _ = _trees(0)
    rng = np.random.default_rng(0)
    t, leaf_of = TreeGrower(bins.codes, bins.n_bins, num_leaves=4).grow(rng.normal(size=200), np.ones(200))
    np.testing.assert_array_equal(t.apply_codes(bins.codes), leaf_of)
    with pytest.raises(RuntimeError, match="apply_codes"):
        t.apply(np.zeros((3, 5), dtype=np.float32))


@pytest.mark.kernel
def test_threads_give_the_same_bits(monkeypatch):
    """From `PARALLEL_MIN_PREDICT_ROWS` rows and `PARALLEL_MIN_PREDICT_WORK` rows x trees ``n_jobs`` threads
    share the row blocks (the parallel kernel): every row's sum is the serial one, bit for bit, and so is a
    fitted ensemble's ``predict``. Below either bound one thread runs."""
    from lrank._kernels import predictor as pk
    from lrank.models.gbrt import LambdaMART
    from lrank.trees.predictor import PARALLEL_MIN_PREDICT_ROWS, PARALLEL_MIN_PREDICT_WORK

    X, bins, trees = _trees(5, k=6)
    ids = [3, 1, 4, 1, 5]
    rows = max(PARALLEL_MIN_PREDICT_ROWS, PARALLEL_MIN_PREDICT_WORK // len(ids))
    Xb = np.tile(X, (rows // X.shape[0] + 2, 1))
    stacked = stack([t.record() for t in trees], max(t.n_nodes for t in trees))
    one = predict_add(Xb, stacked, ids, np.zeros(Xb.shape[0]))
    calls = []
    kernel = pk.predict_add
    monkeypatch.setattr(pk, "predict_add",
                        lambda *a, **k: calls.append(k.get("parallel", False)) or kernel(*a, **k))
    assert predict_add(Xb, stacked, ids, np.zeros(Xb.shape[0]), n_jobs=2).tobytes() == one.tobytes()
    assert predict_add(Xb, stacked, ids, np.zeros(Xb.shape[0]), n_jobs=-1).tobytes() == one.tobytes()
    small = PARALLEL_MIN_PREDICT_WORK // len(ids) - 1  # enough rows, too few rows x trees
    predict_add(Xb[:small], stacked, ids, np.zeros(small), n_jobs=2)
    few = PARALLEL_MIN_PREDICT_ROWS - 1
    predict_add(Xb[:few], stacked, ids * 10, np.zeros(few), n_jobs=2)  # enough work, too few rows
    import numba

    assert calls == [numba.config.NUMBA_NUM_THREADS > 1] * 2 + [False, False]
    monkeypatch.undo()
    rng = np.random.default_rng(0)
    y, qid = rng.integers(0, 3, Xb.shape[0]), np.repeat(np.arange(Xb.shape[0] // 20 + 1), 20)[:Xb.shape[0]]
    m = LambdaMART(n_estimators=5, num_leaves=8).fit(Xb, y, qid=qid)
    p1 = m.predict(Xb)
    assert m.set_params(n_jobs=2).predict(Xb).tobytes() == p1.tobytes()


@pytest.mark.kernel
def test_the_walk_layout_is_the_numpy_one():
    """`walk_layout` (one kernel pass) against the NumPy reference: the stacked trees of real grows (leaves,
    a single-leaf tree, padding), float32 thresholds and int32 features (read as int64 and float64: the
    same comparisons), and records that break the layout, refused at the same node."""
    from lrank._kernels.predictor import walk_layout
    from tests.reference.trees import walk_layout as reference

    for seed in (0, 1, 2):
        _, _, trees = _trees(seed)
        records = [t.record() for t in trees]
        feature, threshold, left, right, _ = stack(records, max(t.n_nodes for t in trees) + 2)
        for f, th in ((feature, threshold), (feature.astype(np.int32), threshold.astype(np.float32))):
            got, want = walk_layout(f, th, left, right), reference(f, th, left, right)
            for a, b in zip(got, want):
                assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), seed
        rng = np.random.default_rng(seed)
        for _ in range(20):
            bad_l, bad_r = left.copy(), right.copy()
            t, n = np.argwhere(left >= 0)[rng.integers(0, int((left >= 0).sum()))]
            if rng.random() < 0.5:
                bad_r[t, n] = bad_l[t, n] + 2
            else:
                bad_l[t, n], bad_r[t, n] = n, n + 1
            with pytest.raises(ValueError) as want_exc:
                reference(feature, threshold, bad_l, bad_r)
            with pytest.raises(ValueError, match=str(want_exc.value)):
                walk_layout(feature, threshold, bad_l, bad_r)

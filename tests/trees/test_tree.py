"""Histogram regression trees: kernels against the brute-force reference, criteria and theorems."""

import numpy as np
import pytest

from lrank._kernels.lambdas import lambdamart_gradients
from lrank.trees.tree import RegressionTree
from tests.reference import trees as ref


def _data(seed, n=60, F=4, max_code=6):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, max_code, size=(n, F)).astype(np.uint8)
    grad = rng.normal(size=n)
    hess = rng.uniform(0.1, 1.0, size=n)
    return codes, grad, hess


def _leaf_masks(tree, n):
    return sorted(tuple(np.flatnonzero(tree.leaf_of_ == nd)) for nd in np.unique(tree.leaf_of_))


def _ranking(seed, sizes=(12, 9, 1, 15)):
    rng = np.random.default_rng(seed)
    qptr = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    n = int(qptr[-1])
    y = rng.integers(0, 4, n).astype(np.int32)
    s = rng.normal(size=n)
    codes = rng.integers(0, 5, size=(n, 3)).astype(np.uint8)
    return codes, y, qptr, s


@pytest.mark.kernel
@pytest.mark.parametrize("crit", ["se", "wse", "rwse", "ole"])
@pytest.mark.parametrize("growth", ["breadth_first", "best_first", "depth_first"])
def test_tree_matches_reference(crit, growth):
    codes, grad, hess = _data(hash((crit, growth)) % 1000)
    tree = RegressionTree(num_leaves=5, min_child_samples=3, min_child_weight=0.0, growth=growth,
                          criterion=crit).fit_gradients(codes, grad, hess)
    leaves, values = ref.fit_tree(codes, grad, hess, 5, crit, min_data=3, growth=growth)
    assert _leaf_masks(tree, len(grad)) == sorted(tuple(np.flatnonzero(M)) for M in leaves)
    got = {tuple(np.flatnonzero(tree.leaf_of_ == nd)): tree.value_[nd] for nd in np.unique(tree.leaf_of_)}
    for M, v in zip(leaves, values):
        assert got[tuple(np.flatnonzero(M))] == pytest.approx(v, rel=1e-10, abs=1e-12)


@pytest.mark.kernel
@pytest.mark.parametrize("growth", ["breadth_first", "best_first", "depth_first"])
def test_ole_pairwise_matches_reference(growth):
    codes, y, qptr, s = _ranking(3)
    lam, w, pairs = lambdamart_gradients(y, qptr, s, k=5, with_pairs=True)
    plist = list(zip(pairs[0], pairs[1], pairs[2]))
    tree = RegressionTree(num_leaves=4, min_child_samples=2, min_child_weight=1e-9, growth=growth,
                          criterion="ole").fit_gradients(codes, -lam, w, pairs=pairs)
    leaves, _ = ref.fit_tree(codes, -lam, w, 4, "ole", min_data=2, min_hess=1e-9, pairs=plist, growth=growth)
    assert _leaf_masks(tree, len(y)) == sorted(tuple(np.flatnonzero(M)) for M in leaves)


def test_ole_pairwise_differs_from_additive():
    """Example 3-4: with the pair cancellation the root split criterion is not RWSE's."""
    codes, y, qptr, s = _ranking(5, sizes=(20, 20, 20))
    lam, w, pairs = lambdamart_gradients(y, qptr, s, k=0, with_pairs=True)
    plist = list(zip(pairs[0], pairs[1], pairs[2]))
    left = codes[:, 0] <= 1
    node = np.ones(len(y), bool)
    e_pair = ref.criterion("ole", -lam, w, left, node, plist)
    e_add = ref.criterion("ole", -lam, w, left, node, None)
    assert e_pair < e_add  # exact second derivatives are smaller: the inner pairs cancel


def test_theorem1_and_theorem2_same_splits():
    """MART: SE, WSE, RWSE and OLE grow the same tree (Theorem 2); a logistic (derivative-additive) loss:
    OLE and RWSE grow the same tree (Theorem 1)."""
    rng = np.random.default_rng(7)
    codes = rng.integers(0, 20, size=(300, 6)).astype(np.uint8)
    f = rng.normal(size=300)
    y = rng.normal(size=300)
    trees = [RegressionTree(num_leaves=8, criterion=c, min_child_samples=5).fit_gradients(codes, f - y,
                                                                                       np.ones(300))
             for c in ("se", "wse", "rwse", "ole")]
    for t in trees[1:]:
        np.testing.assert_array_equal(t.leaf_of_, trees[0].leaf_of_)
        np.testing.assert_allclose(t.value_, trees[0].value_, rtol=1e-12)
    p = 1 / (1 + np.exp(-f))
    lab = (y > 0).astype(float)
    a = RegressionTree(num_leaves=8, criterion="ole").fit_gradients(codes, p - lab, p * (1 - p))
    b = RegressionTree(num_leaves=8, criterion="rwse").fit_gradients(codes, p - lab, p * (1 - p))
    np.testing.assert_array_equal(a.leaf_of_, b.leaf_of_)


def test_feature_constraint():
    codes, grad, hess = _data(11, n=200, F=5)
    stump = RegressionTree(num_leaves=2, min_child_samples=1, feature_constraint=3).fit_gradients(codes, grad,
                                                                                                 hess)
    assert stump.feature_[0] == 3 and stump.n_leaves_ == 2
    cons = [4, 0, 2]
    for growth in ("breadth_first", "best_first"):
        t = RegressionTree(num_leaves=4, min_child_samples=1, feature_constraint=cons,
                           growth=growth).fit_gradients(codes, grad, hess)
        internal = np.flatnonzero(t.children_left_ >= 0)
        assert list(t.feature_[internal]) == cons[: internal.size]  # node ids follow split order
    with pytest.raises(ValueError):
        RegressionTree(num_leaves=4, feature_constraint=[1]).fit_gradients(codes, grad, hess)
    with pytest.raises(ValueError):
        RegressionTree(num_leaves=2, feature_constraint=[9]).fit_gradients(codes, grad, hess)


def test_raw_features_nan_and_predict():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 4)).astype(np.float32)
    X[rng.random(X.shape) < 0.2] = np.nan
    X[:, 2] = np.round(X[:, 2])  # ties
    y = np.nan_to_num(X[:, 0]) * 2 + np.isnan(X[:, 1]) + rng.normal(scale=0.1, size=300)
    t = RegressionTree(num_leaves=6, min_child_samples=5).fit(X, y)
    np.testing.assert_array_equal(t.predict(X), t.value_[t.leaf_of_])
    assert np.mean((t.predict(X) - y) ** 2) < np.var(y)


def test_one_row_and_constant_gradients():
    codes = np.zeros((1, 2), dtype=np.uint8)
    one = np.array([1.0])
    t = RegressionTree(num_leaves=4, min_child_samples=1).fit_gradients(codes, one, one)
    assert t.n_leaves_ == 1 and t.value_[0] == -1.0
    codes, _, hess = _data(2)
    t = RegressionTree(num_leaves=4).fit_gradients(codes, np.full(60, 0.5), hess)
    assert t.n_leaves_ == 1  # SE: nothing to gain


def test_bad_input():
    codes, grad, hess = _data(0)
    with pytest.raises(ValueError):
        RegressionTree(criterion="gini").fit_gradients(codes, grad, hess)
    with pytest.raises(ValueError):
        RegressionTree(growth="depth").fit_gradients(codes, grad, hess)
    with pytest.raises(ValueError):
        RegressionTree().fit_gradients(codes, grad[:-1], hess)
    with pytest.raises(ValueError):
        RegressionTree().fit_gradients(codes.astype(np.int64), grad, hess)
    g = grad.copy()
    g[0] = np.nan
    with pytest.raises(ValueError):
        RegressionTree().fit_gradients(codes, g, hess)


@pytest.mark.parametrize("param,bad", [("num_leaves", 1), ("num_leaves", 2.5), ("num_leaves", True),
                                       ("min_child_samples", 0), ("min_child_weight", -1.0),
                                       ("n_jobs", 0), ("criterion", "xx"), ("growth", "depth")])
def test_bad_parameters_named(param, bad):
    codes = np.zeros((4, 1), dtype=np.uint8)
    with pytest.raises(ValueError, match=param if param not in ("criterion", "growth") else param):
        RegressionTree(**{param: bad}).fit_gradients(codes, np.ones(4), np.ones(4))


@pytest.mark.parametrize("bad", ["nan_grad", "inf_hess", "neg_inf_grad", "overflow_sum"])
def test_fit_gradients_rejects_non_finite(bad):
    """NaN or infinite derivatives raise a clear error; finite ones whose sum overflows do not (the
    check sums first and tests the elements only when the sum is not finite)."""
    codes, grad, hess = _data(3, n=40)
    if bad == "nan_grad":
        grad[7] = np.nan
    elif bad == "inf_hess":
        hess[39] = np.inf
    elif bad == "neg_inf_grad":
        grad[0] = -np.inf
    else:
        grad[:4] = 1.5e308  # finite values, an infinite sum
    t = RegressionTree(num_leaves=4, min_child_samples=2)
    if bad == "overflow_sum":
        t.fit_gradients(codes, grad, hess)
        assert t.n_leaves_ >= 1
    else:
        with pytest.raises(ValueError, match="grad and hess must be finite"):
            t.fit_gradients(codes, grad, hess)


def test_leaf_labels_are_the_trees_own_and_a_grower_is_reused():
    """A fitted tree keeps its own copy of the rows' leaves (the grower's array serves its next tree); a
    grower passed in is reused when it fits the codes and parameters, else a new one is made."""
    codes, grad, hess = _data(6)
    a = RegressionTree(num_leaves=4, min_child_samples=3).fit_gradients(codes, grad, hess)
    before = a.leaf_of_.copy()
    b = RegressionTree(num_leaves=4, min_child_samples=3).fit_gradients(codes, -grad, hess, grower=a.grower_)
    assert b.grower_ is a.grower_ and a.leaf_of_ is not a.grower_.leaf_of
    np.testing.assert_array_equal(a.leaf_of_, before)
    c = RegressionTree(num_leaves=5, min_child_samples=3).fit_gradients(codes, grad, hess, grower=a.grower_)
    assert c.grower_ is not a.grower_
    np.testing.assert_array_equal(c.predict_codes(codes), c.value_[c.leaf_of_])
def test_depth_first_grows_the_left_subtree_first():
    """Pre-order growth: with 3 leaves the second split is in the root's left child even where the right
    child's split gains more (best-first takes the right one); with room for every valid split the three
    orders give the same partition."""
    n = 40
    x0 = np.repeat([0, 1], n // 2).astype(np.uint8)          # the root split: left half | right half
    x1 = np.tile([0, 1], n // 2).astype(np.uint8)            # splits both halves
    codes = np.column_stack([x0, x1])
    r = np.where(x0 == 0, 10.0, -10.0) + np.where(x1 == 1, 1.0, -1.0) * np.where(x0 == 0, 0.5, 3.0)
    grad, hess = -r, np.ones(n)
    kw = dict(min_child_samples=2, min_child_weight=0.0)
    trees = {g: RegressionTree(num_leaves=3, growth=g, **kw).fit_gradients(codes, grad, hess)
             for g in ("depth_first", "best_first", "breadth_first")}
    left_half = tuple(np.flatnonzero(x0 == 0))
    assert left_half in _leaf_masks(trees["best_first"], n)       # best-first split the right half
    assert left_half not in _leaf_masks(trees["depth_first"], n)  # depth-first split the left half
    assert tuple(np.flatnonzero(x0 == 1)) in _leaf_masks(trees["depth_first"], n)
    full = [_leaf_masks(RegressionTree(num_leaves=8, growth=g, **kw).fit_gradients(codes, grad, hess), n)
            for g in ("depth_first", "best_first", "breadth_first")]
    assert full[0] == full[1] == full[2] and len(full[0]) == 4

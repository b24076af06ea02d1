"""Symmetric (oblivious) trees: the kernel path against the plain-Python reference, and the node record."""

import numpy as np
import pytest

from lrank.trees.grower import TreeGrower
from lrank.trees.predictor import Tree
from tests.reference import symmetric as ref


def _levels(tree: Tree) -> list[tuple[int, int]]:
    """The ``(feature, bin)`` of each level of a heap-ordered symmetric tree."""
    out, lev = [], 0
    while (1 << lev) - 1 < tree.n_nodes and tree.feature[(1 << lev) - 1] >= 0:
        out.append((int(tree.feature[(1 << lev) - 1]), int(tree.bin[(1 << lev) - 1])))
        lev += 1
    return out


def _case(seed, n=80, F=5, max_code=4):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, max_code, size=(n, F)).astype(np.uint8)
    codes[:, 1] = codes[:, 0]  # a duplicate feature: every score of feature 1 ties feature 0's
    codes[:, 3] = 0  # a constant feature (one bin)
    n_bins = codes.max(axis=0).astype(np.int64) + 1
    n_bins[2] += 2  # two bins no row uses: candidates with an empty side
    grad = rng.normal(size=n)
    hess = rng.uniform(0.05, 1.0, size=n)
    return codes, n_bins, grad, hess


CASES = {
    "plain": dict(),
    "se": dict(criterion="se"),
    "lam": dict(reg_lambda=0.7),
    "equal_grad": dict(equal=True),
    "features": dict(features=[4, 0, 2]),
    "sample": dict(sample=True),
    "sample_features_se": dict(sample=True, features=[1, 2, 3], criterion="se"),
    "one_doc": dict(n=1),
    "two_docs": dict(n=2),
    "deep": dict(num_leaves=64),
    "min_hess": dict(min_child_weight=2.0),
    "se_count_at_min": dict(criterion="se", num_leaves=64, min_child_weight=1.0),  # sides of one row: N == 1
}


def _grow_both(name, seed, noise_scale=0.0, noise_seed=0):
    kw = CASES[name]
    n = kw.get("n", 80)
    codes, n_bins, grad, hess = _case(seed, n=n)
    if kw.get("equal"):
        grad[:] = 0.25
    crit = kw.get("criterion", "rwse")
    L = kw.get("num_leaves", 8)
    lam = kw.get("reg_lambda", 0.0)
    mh = kw.get("min_child_weight", 1e-3)
    sample = None
    if kw.get("sample"):
        sample = np.random.default_rng(seed + 1).choice(n, n // 2 + 1, replace=False)  # any order
    feats = kw.get("features")
    g = TreeGrower(codes, n_bins, num_leaves=L, min_child_weight=mh, growth="symmetric", criterion=crit,
                   reg_lambda=lam)
    rng = np.random.default_rng(noise_seed) if noise_scale > 0 else None
    tree, leaf_of = g.grow(grad, hess, features=feats, sample=sample, score_noise=noise_scale, rng=rng)
    sigma, noise = 0.0, None
    if noise_scale > 0:
        rows = np.arange(n) if sample is None else np.sort(sample)
        used = range(codes.shape[1]) if feats is None else sorted(set(feats))
        noise = np.random.default_rng(noise_seed).standard_normal((L.bit_length() - 1,
                                                                   int(n_bins[list(used)].sum())))
        sigma = noise_scale * float(np.sqrt(np.mean(grad[rows] ** 2)))
    want = ref.grow_symmetric(codes, n_bins, grad, hess, L.bit_length() - 1, criterion=crit, min_hess=mh,
                              lam=lam, features=feats, sample=sample, sigma=sigma, noise=noise)
    return tree, leaf_of.copy(), want


def _assert_same(tree, leaf_of, want):
    splits, values, ref_leaf_of = want
    assert _levels(tree) == splits
    D = len(splits)
    assert tree.n_nodes == 2 ** (D + 1) - 1
    np.testing.assert_allclose(tree.value[2 ** D - 1:], values, rtol=1e-12, atol=1e-12)
    assert np.array_equal(leaf_of, ref_leaf_of)


@pytest.mark.kernel
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_symmetric_matches_reference(name, seed):
    _assert_same(*_grow_both(name, seed))


@pytest.mark.kernel
@pytest.mark.parametrize("name", ["plain", "se", "features", "sample"])
def test_symmetric_noise_matches_reference(name):
    # the same normals: the grower's draws (rng seeded alike) given to the reference
    tree, leaf_of, want = _grow_both(name, 5, noise_scale=0.8, noise_seed=11)
    _assert_same(tree, leaf_of, want)
    plain, _, _ = _grow_both(name, 5)
    assert _levels(plain) != _levels(tree)  # the noise moved at least one split on this case


def test_symmetric_tree_record():
    codes, n_bins, grad, hess = _case(3, n=200, F=6, max_code=8)
    thresholds = [np.arange(nb - 1, dtype=np.float64) + 1.5 for nb in n_bins]  # code c > j iff x > j + 0.5
    g = TreeGrower(codes, n_bins, thresholds, num_leaves=16, growth="symmetric", criterion="rwse")
    tree, leaf_of = g.grow(grad, hess)
    assert tree.n_nodes == 31 and tree.n_leaves == 16
    internal = np.arange(15)
    assert np.array_equal(tree.left[internal], 2 * internal + 1)
    assert np.array_equal(tree.right[internal], 2 * internal + 2)
    # every node of a level splits alike; the raw thresholds route the raw features as the codes do
    X = np.where(codes == 0, np.nan, codes.astype(np.float64))  # code 0: missing
    assert np.array_equal(tree.apply_codes(codes), leaf_of)
    assert np.array_equal(tree.apply(X), leaf_of)
    np.testing.assert_array_equal(tree.predict(X), tree.value[leaf_of])
    # honest node statistics: leaves' sums over their rows, internal nodes the sums of their children
    for nd in range(15, 31):
        rows = leaf_of == nd
        assert tree.count[nd] == rows.sum()
        np.testing.assert_allclose(tree.sum_grad[nd], grad[rows].sum(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(tree.sum_hess[nd], hess[rows].sum(), rtol=1e-12, atol=1e-12)
    for nd in internal:
        assert tree.count[nd] == tree.count[2 * nd + 1] + tree.count[2 * nd + 2]
        G, H = tree.sum_grad, tree.sum_hess
        want = (G[2 * nd + 1] ** 2 / H[2 * nd + 1] + G[2 * nd + 2] ** 2 / H[2 * nd + 2] - G[nd] ** 2 / H[nd])
        np.testing.assert_allclose(tree.gain[nd], want, rtol=1e-9, atol=1e-12)
    assert tree.count[0] == 200


def test_symmetric_equals_summed_newton_gain_choice():
    # reg_lambda = 0: the Cosine score is sqrt(sum G^2 / H), so the root split is RWSE's best split
    codes, n_bins, grad, hess = _case(4, n=150)
    sym, _ = TreeGrower(codes, n_bins, num_leaves=2, min_child_samples=1, min_child_weight=1e-3,
                        growth="symmetric", criterion="rwse").grow(grad, hess)
    bf, _ = TreeGrower(codes, n_bins, num_leaves=2, min_child_samples=1, min_child_weight=1e-3,
                       growth="best_first", criterion="rwse").grow(grad, hess)
    assert (sym.feature[0], sym.bin[0]) == (bf.feature[0], bf.bin[0])
    np.testing.assert_allclose(sym.value, bf.value, rtol=1e-12)


def test_symmetric_stops_when_no_feature_splits():
    codes = np.zeros((5, 2), dtype=np.uint8)
    tree, leaf_of = TreeGrower(codes, growth="symmetric", num_leaves=4).grow(np.ones(5), np.ones(5))
    assert tree.n_nodes == 1 and np.array_equal(leaf_of, np.zeros(5))
    np.testing.assert_allclose(tree.value, [-1.0])


@pytest.mark.parametrize("num_leaves", [3, 6, 10, 12])
def test_symmetric_needs_a_power_of_two(num_leaves):
    with pytest.raises(ValueError, match="num_leaves must be a power of two"):
        TreeGrower(np.zeros((4, 2), dtype=np.uint8), growth="symmetric", num_leaves=num_leaves)


@pytest.mark.parametrize("criterion", ["wse", "ole", "classify"])
def test_symmetric_refuses_other_criteria(criterion):
    with pytest.raises(ValueError, match="growth='symmetric' needs criterion"):
        TreeGrower(np.zeros((4, 2), dtype=np.uint8), growth="symmetric", num_leaves=4, criterion=criterion)


def test_symmetric_refuses_pairs_and_constraints_and_noise_elsewhere():
    codes, n_bins, grad, hess = _case(0, n=20)
    g = TreeGrower(codes, n_bins, growth="symmetric", num_leaves=4)
    pairs = (np.array([0], dtype=np.int64), np.array([1], dtype=np.int64), np.ones(1))
    with pytest.raises(ValueError, match="pair list"):
        g.grow(grad, hess, pairs=pairs)
    with pytest.raises(ValueError, match="feature constraint"):
        g.grow(grad, hess, constraint=0)
    with pytest.raises(ValueError, match="needs rng"):
        g.grow(grad, hess, score_noise=1.0)
    with pytest.raises(ValueError, match="needs growth='symmetric'"):
        TreeGrower(codes, n_bins, num_leaves=4).grow(grad, hess, score_noise=1.0,
                                                     rng=np.random.default_rng(0))


def test_regression_tree_grows_symmetric_trees():
    from lrank.trees.tree import RegressionTree

    codes, n_bins, grad, hess = _case(6, n=120)
    t = RegressionTree(num_leaves=8, growth="symmetric", criterion="rwse").fit_gradients(codes, grad, hess,
                                                                                         n_bins=n_bins)
    splits, values, leaf_of = ref.grow_symmetric(codes, n_bins, grad, hess, 3)
    assert _levels(t.tree_) == splits
    np.testing.assert_allclose(t.tree_.value[7:], values, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(t.tree_.apply_codes(codes), leaf_of)
    with pytest.raises(ValueError, match="feature constraint"):
        RegressionTree(num_leaves=4, growth="symmetric", feature_constraint=0).fit_gradients(codes, grad,
                                                                                             hess)

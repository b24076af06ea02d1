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


# ------------------------------------------------------------- sibling subtraction and the parallel twins
def _levels_case(seed, n, F, rows_kind, grad_kind):
    """Codes with missing values (code 0), a constant feature, a gradient kind, rows (all, a sample,
    none of a leaf) and per level a random leaf assignment that refines the level above's (row ``i`` in
    leaf ``l`` moves to ``2 l`` or ``2 l + 1``), with leaves left empty and children of equal sizes."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 6, size=(n, F)).astype(np.uint8)
    codes[rng.random((n, F)) < 0.2] = 0  # missing: code 0
    codes[:, F - 1] = 0  # a constant feature (one bin)
    n_bins = codes.max(axis=0).astype(np.int64) + 1
    n_bins[0] += 1  # a bin no row uses
    grad = {"normal": rng.normal(size=n), "equal": np.full(n, 0.25),
            "rounded": np.round(rng.normal(size=n), 1)}[grad_kind]
    hs = rng.uniform(0.05, 1.0, size=n)
    rows = {"all": np.arange(n), "sample": np.sort(rng.choice(n, max(n // 2, 1), replace=False)),
            "first": np.arange(min(n, 2))}[rows_kind].astype(np.int64)
    D = 5
    leaf_levels = [np.zeros(n, dtype=np.int64)]
    for d in range(1, D):
        bit = rng.integers(0, 2, size=n)
        if d == 1:
            bit[:] = np.arange(n) % 2  # the root's children of equal sizes (n even): the tie rule
        if d == 3:
            bit[leaf_levels[-1] == 1] = 0  # leaf 3 of level 3 (and its children) empty
        leaf_levels.append(2 * leaf_levels[-1] + bit)
    return codes, n_bins, grad, hs, rows, leaf_levels


def _full_level(codes, feats, off, grad, hs, rows, leaf, L):
    """Every leaf's histogram built in full (NumPy, np.add.at in row order), and its totals."""
    hist = np.zeros((L, off[-1], 2))
    tot = np.zeros((L, 2))
    for t, f in enumerate(feats):
        b = off[t] + codes[rows, f].astype(np.int64)
        np.add.at(hist, (leaf[rows], b, 0), grad[rows])
        np.add.at(hist, (leaf[rows], b, 1), hs[rows])
    np.add.at(tot, (leaf[rows], 0), grad[rows])
    np.add.at(tot, (leaf[rows], 1), hs[rows])
    return hist, tot


def _level_work(n, half, TB):
    """`_histogram_leaves`'s level buffers (brows, bvals, count, bhist, btot), filled with garbage."""
    P = max(half // 2, 1)
    return (np.full((2, n), -7, dtype=np.int64), np.full((n, 2), np.nan),
            np.full(2 * half, -7, dtype=np.int64), np.full((P, TB, 2), np.nan), np.full((P, 2), np.nan))


def _og(blocks, n):
    """`_symmetric_root`'s chunk buffer for ``blocks`` blocks of up to ``n`` rows, filled with garbage."""
    from lrank._kernels import histograms as hk

    return np.full((blocks, max(min(n, hk.CHUNK_ROWS), 1), 2), np.nan)


LEVEL_CASES = [(n, rows, gk) for n, rows, gk in (
    (60, "all", "normal"), (60, "sample", "normal"), (60, "all", "equal"), (61, "sample", "rounded"),
    (1, "all", "normal"), (2, "first", "equal"), (40, "first", "normal"))]


@pytest.mark.kernel
@pytest.mark.parametrize("n,rows_kind,grad_kind", LEVEL_CASES)
@pytest.mark.parametrize("features", [None, [3, 0, 2]])
def test_level_histograms_subtract_the_smaller_child(n, rows_kind, grad_kind, features):
    """The root by `_symmetric_root`, then `_histogram_leaves` level by level (in place over the parents'):
    the reference's bits (the smaller child built, the left on a tie, its sibling by subtraction), the
    full build's values to a tight tolerance, and the parallel twins' bits on 1 and 2 threads and any
    number of blocks."""
    import numba

    from lrank._kernels import histograms as hk

    codes, n_bins, grad, hs, rows, leaf_levels = _levels_case(n, n, 5, rows_kind, grad_kind)
    feats = np.arange(5, dtype=np.int64) if features is None else np.array(sorted(features), dtype=np.int64)
    off = np.r_[0, np.cumsum(n_bins[feats])].astype(np.int64)
    D = len(leaf_levels)
    half = 1 << (D - 1)
    serial = (np.full((half, off[-1], 2), np.nan), np.full((half, 2), np.nan))
    twins = {(th, nb): (np.full((half, off[-1], 2), np.nan), np.full((half, 2), np.nan))
             for th in (1, 2) for nb in (1, 2, 3, 9)}
    codes_t = np.ascontiguousarray(codes.T)
    lev = _level_work(n, half, off[-1])
    g_list, h_list = [float(v) for v in grad], [float(v) for v in hs]
    ref_hist = ref_tot = None
    try:
        for d in range(D):
            L = 1 << d
            leaf = leaf_levels[d]
            if d == 0:
                hk._symmetric_root(codes_t, feats, off, grad, hs, rows, serial[0][0], serial[1], _og(1, n),
                                   False)
            else:
                hk._histogram_leaves(codes_t, feats, off, grad, hs, rows, leaf, L, *serial, lev)
            ref_hist, ref_tot = ref.level_histograms(codes, feats.tolist(), off.tolist(), g_list, h_list,
                                                     rows.tolist(), leaf.tolist(), L, ref_hist, ref_tot)
            got_h, got_t = serial[0][:L], serial[1][:L]
            assert got_h.tobytes() == np.array(ref_hist).tobytes(), d
            assert got_t.tobytes() == np.array(ref_tot).tobytes(), d
            full_h, full_t = _full_level(codes, feats, off, grad, hs, rows, leaf, L)
            np.testing.assert_allclose(got_h, full_h, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(got_t, full_t, rtol=1e-12, atol=1e-12)
            for (th, nb), (h2, t2) in twins.items():
                numba.set_num_threads(min(th, numba.config.NUMBA_NUM_THREADS))
                if d == 0:
                    hk._symmetric_root(codes_t, feats, off, grad, hs, rows, h2[0], t2, _og(nb, n), True)
                else:
                    hk._histogram_leaves_parallel(codes_t, feats, off, grad, hs, rows, leaf, L, h2, t2, lev,
                                                  nb)
                assert h2[:L].tobytes() == got_h.tobytes(), (d, th, nb)
                assert t2[:L].tobytes() == got_t.tobytes(), (d, th, nb)
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


@pytest.mark.kernel
@pytest.mark.parametrize("n,grad_kind", [(60, "normal"), (60, "equal"), (61, "rounded"), (1, "normal"),
                                         (2, "equal"), (70_000, "normal")])
@pytest.mark.parametrize("features", [None, [3, 0, 2]])
def test_level_histograms_without_a_row_list(n, grad_kind, features):
    """Every row in order with no row list (``rows`` None): the root level by `_symmetric_root` (the column
    kernels, serial and on 1-9 blocks on 1 and 2 threads; 70,000 rows: three chunks), the levels below by
    `_histogram_leaves` and its twin: the bits of the row list ``arange(n)``, level by level, and at the
    root the reference's; and `_symmetric_root` with a sample's row list the reference's root."""
    import numba

    from lrank._kernels import histograms as hk

    codes, n_bins, grad, hs, rows, leaf_levels = _levels_case(n, n, 5, "all", grad_kind)
    feats = np.arange(5, dtype=np.int64) if features is None else np.array(sorted(features), dtype=np.int64)
    off = np.r_[0, np.cumsum(n_bins[feats])].astype(np.int64)
    half = 1 << (len(leaf_levels) - 1)
    codes_t = np.ascontiguousarray(codes.T)
    TB = off[-1]
    with_list = (np.full((half, TB, 2), np.nan), np.full((half, 2), np.nan), _level_work(n, half, TB))
    paths = {(th, nb): (np.full((half, off[-1], 2), np.nan), np.full((half, 2), np.nan),
                        _level_work(n, half, off[-1]), np.full((nb, min(n, hk.CHUNK_ROWS), 2), np.nan))
             for th, nb in ((0, 1), (1, 1), (1, 3), (2, 1), (2, 2), (2, 9))}  # th 0: serial
    try:
        for d, leaf in enumerate(leaf_levels):
            L = 1 << d
            if d == 0:
                hk._symmetric_root(codes_t, feats, off, grad, hs, rows, with_list[0][0], with_list[1],
                                   _og(1, n), False)
                ref_h, ref_t = ref.level_histograms(codes, feats.tolist(), off.tolist(), grad.tolist(),
                                                    hs.tolist(), rows.tolist(), leaf.tolist(), 1)
                assert with_list[0][0].tobytes() == np.array(ref_h[0]).tobytes()
                assert with_list[1][0].tobytes() == np.array(ref_t[0]).tobytes()
            else:
                hk._histogram_leaves(codes_t, feats, off, grad, hs, rows, leaf, L, *with_list)
            want_h, want_t = with_list[0][:L].tobytes(), with_list[1][:L].tobytes()
            for (th, nb), (h2, t2, lev, og) in paths.items():
                numba.set_num_threads(max(1, min(th, numba.config.NUMBA_NUM_THREADS)))
                if d == 0:
                    hk._symmetric_root(codes_t, feats, off, grad, hs, None, h2[0], t2, og, th > 0)
                elif th == 0:
                    hk._histogram_leaves(codes_t, feats, off, grad, hs, None, leaf, L, h2, t2, lev)
                else:
                    hk._histogram_leaves_parallel(codes_t, feats, off, grad, hs, None, leaf, L, h2, t2, lev,
                                                  nb)
                assert h2[:L].tobytes() == want_h, (d, th, nb)
                assert t2[:L].tobytes() == want_t, (d, th, nb)
        sample = np.sort(np.random.default_rng(n).choice(n, max(n // 3, 1), replace=False))
        ref_h, ref_t = ref.level_histograms(codes, feats.tolist(), off.tolist(), grad.tolist(), hs.tolist(),
                                            sample.tolist(), leaf_levels[0].tolist(), 1)
        for (th, nb), (h2, t2, _, og) in paths.items():
            numba.set_num_threads(max(1, min(th, numba.config.NUMBA_NUM_THREADS)))
            hk._symmetric_root(codes_t, feats, off, grad, hs, sample, h2[0], t2, og, th > 0)
            assert h2[0].tobytes() == np.array(ref_h[0]).tobytes(), ("sample", th, nb)
            assert t2[0].tobytes() == np.array(ref_t[0]).tobytes(), ("sample", th, nb)
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


@pytest.mark.kernel
@pytest.mark.parametrize("parallel", [False, True])
def test_grow_symmetric_every_row_without_a_row_list(parallel):
    """`grow_symmetric` with ``rows`` None grows the tree of ``rows = arange(N)``, bit for bit (splits,
    scores, leaf sums, leaves), with and without the score noise, serial and on the threads."""
    from lrank._kernels import grower as gk

    codes, n_bins, grad, hess = _case(9, n=300, F=6, max_code=7)
    feats = np.arange(6, dtype=np.int64)
    off = np.r_[0, np.cumsum(n_bins)].astype(np.int64)
    TB = off[-1]
    codes_t = np.ascontiguousarray(codes.T)
    for noise in (None, np.random.default_rng(2).standard_normal((3, TB))):
        out = []
        for rows in (np.arange(300, dtype=np.int64), None):
            work = (np.full((4, TB, 2), np.nan), np.zeros((4, 2)), np.zeros((2, 4, 2)), np.zeros(TB),
                    *_level_work(300, 4, TB), np.full((2, 300, 2), np.nan))
            leaf_of = np.full(300, -5, dtype=np.int64)
            got = gk.grow_symmetric(codes_t, feats, off, grad, hess, hess, rows, leaf_of, work, 3,
                                    min_hess=1e-3, sigma=0.0 if noise is None else 0.4, noise=noise,
                                    parallel=parallel)
            assert got[0] == 3
            out.append(tuple(np.asarray(a).tobytes() for a in got) + (leaf_of.tobytes(),))
        assert out[0] == out[1]


@pytest.mark.kernel
def test_level_histograms_build_the_smaller_child_only():
    """The larger child's rows are never read: NaN gradients there leave the built child's bins finite
    (and the sibling's NaN through the parent), and a tie builds the left child."""
    from lrank._kernels import histograms as hk

    codes_t = np.array([[1, 0, 1, 2, 2]], dtype=np.uint8)
    off = np.array([0, 3], dtype=np.int64)
    feats = np.array([0], dtype=np.int64)
    rows = np.arange(5, dtype=np.int64)
    lev = _level_work(5, 2, 3)
    og = _og(1, 5)
    hist, tot = np.zeros((2, 3, 2)), np.zeros((2, 2))
    hs = np.ones(5)
    grad = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    hk._symmetric_root(codes_t, feats, off, grad, hs, rows, hist[0], tot, og, False)
    leaf = np.array([1, 1, 0, 0, 1], dtype=np.int64)  # leaf 0 has two rows, leaf 1 three: leaf 0 built
    hk._histogram_leaves(codes_t, feats, off, grad, hs, rows, leaf, 2, hist, tot, lev)
    assert hist[0, :, 0].tolist() == [0.0, 3.0, 4.0] and tot[0].tolist() == [7.0, 2.0]
    assert hist[1, :, 0].tolist() == [2.0, 1.0, 5.0] and tot[1].tolist() == [8.0, 3.0]
    # the same by the sibling: the built child (leaf 1, fewer rows) then leaf 0 = root - leaf 1
    hk._symmetric_root(codes_t, feats, off, grad, hs, rows, hist[0], tot, og, False)
    bad = grad.copy()
    bad[[1, 3, 4]] = np.nan  # rows of the larger child: not read when building leaf 1 = {0, 2}
    hist_root = hist.copy()
    leaf = np.array([1, 0, 1, 0, 0], dtype=np.int64)
    hk._histogram_leaves(codes_t, feats, off, bad, hs, rows, leaf, 2, hist, tot, lev)
    assert hist[1, :, 0].tolist() == [0.0, 4.0, 0.0]  # rows 0 and 2 (code 1) only
    assert hist[0, :, 0].tolist() == (hist_root[0, :, 0] - [0.0, 4.0, 0.0]).tolist()
    # a tie (two rows each of four): the left child is built, so NaN in the right child's rows stays out
    leaf = np.array([0, 1, 0, 1, 0], dtype=np.int64)
    rows4 = np.arange(4, dtype=np.int64)
    hk._symmetric_root(codes_t, feats, off, grad, hs, rows4, hist[0], tot, og, False)
    bad = grad.copy()
    bad[[1, 3]] = np.nan
    hk._histogram_leaves(codes_t, feats, off, bad, hs, rows4, leaf, 2, hist, tot, lev)
    assert hist[0, :, 0].tolist() == [0.0, 4.0, 0.0] and tot[0].tolist() == [4.0, 2.0]


def _tree_bits(tree, leaf_of):
    return tuple(a.tobytes() for a in (tree.feature, tree.bin, tree.value, tree.gain, tree.count,
                                       tree.sum_grad, tree.sum_hess, leaf_of))


@pytest.mark.parametrize("name", ["plain", "se", "lam", "equal_grad", "features", "sample",
                                  "sample_features_se", "one_doc", "two_docs", "deep"])
def test_symmetric_parallel_path_same_bits(name, symmetric_paths):
    """n_jobs = 2 with the parallel threshold lowered on the instance (the parallel twins, 2 threads) grows
    the bits of n_jobs = 1, with and without the score noise."""
    import numba

    taken = symmetric_paths
    kw = CASES[name]
    n = kw.get("n", 80)
    codes, n_bins, grad, hess = _case(7, n=n)
    if kw.get("equal"):
        grad[:] = 0.25
    sample = np.random.default_rng(8).choice(n, n // 2 + 1, replace=False) if kw.get("sample") else None
    out = {}
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    try:
        for jobs in (1, 2):
            g = TreeGrower(codes, n_bins, num_leaves=kw.get("num_leaves", 16), growth="symmetric",
                           criterion=kw.get("criterion", "rwse"), reg_lambda=kw.get("reg_lambda", 0.0),
                           n_jobs=jobs)
            g.parallel_min_tree_work = 0
            for noise in (0.0, 0.5):
                rng = np.random.default_rng(3) if noise else None
                tree, leaf_of = g.grow(grad, hess, features=kw.get("features"), sample=sample,
                                       score_noise=noise, rng=rng)
                out[jobs, noise] = _tree_bits(tree, leaf_of)
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    assert taken == [False, False, True, True] or numba.config.NUMBA_NUM_THREADS < 2
    assert out[1, 0.0] == out[2, 0.0] and out[1, 0.5] == out[2, 0.5]


@pytest.mark.kernel
def test_cosine_scan_parallel_twin_same_split():
    """`_scan_cosine_parallel` on 1-9 blocks: the serial scan's split and score bits, with duplicate
    features (exact ties: the first wins) and the noise."""
    import numba

    from lrank._kernels import splitting as sk

    rng = np.random.default_rng(4)
    L, nbs = 4, [5, 1, 5, 3, 5, 2]
    off = np.r_[0, np.cumsum(nbs)].astype(np.int64)
    hist = np.round(rng.normal(size=(L, off[-1], 2)), 1)
    hist[..., 1] = np.abs(hist[..., 1]) + 0.1
    hist[:, off[4]:off[5]] = hist[:, off[0]:off[1]]  # feature 4 ties feature 0
    tot = hist.sum(axis=1)
    noise = rng.normal(size=(2, off[-1]))
    try:
        for nz in (None, noise):
            want = sk._scan_cosine(hist, off, L, tot, np.zeros((L, 2)), 1e-3, 0.0, 0.3, nz, 1,
                                   np.zeros(off[-1]))
            assert want[1] >= 0
            for th in (1, 2):
                numba.set_num_threads(min(th, numba.config.NUMBA_NUM_THREADS))
                for nb in (1, 2, 3, 9):
                    got = sk._scan_cosine_parallel(hist, off, L, tot, np.zeros((nb, L, 2)), 1e-3, 0.0, 0.3,
                                                   nz, 1, np.zeros(off[-1]))
                    assert (np.float64(got[0]).tobytes(), got[1], got[2]) == \
                        (np.float64(want[0]).tobytes(), want[1], want[2])
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)


def test_grow_symmetric_checks_its_workspace():
    from lrank._kernels import grower as gk

    codes, n_bins, grad, hess = _case(0, n=20)
    feats = np.arange(5, dtype=np.int64)
    off = np.r_[0, np.cumsum(n_bins)].astype(np.int64)
    rows = np.arange(20, dtype=np.int64)
    work = (np.zeros((2, off[-1], 2)), np.zeros((2, 2)), np.zeros((1, 2, 2)), np.zeros(off[-1]),
            *_level_work(20, 2, off[-1]), np.zeros((1, 20, 2)))
    args = (np.ascontiguousarray(codes.T), feats, off, grad, hess, hess, rows, np.empty(20, dtype=np.int64))
    assert gk.grow_symmetric(*args, work, 2, min_hess=1e-3)[0] == 2
    with pytest.raises(ValueError, match="scores"):
        gk.grow_symmetric(*args, (*work[:3], np.zeros(off[-1] - 1), *work[4:]), 2, min_hess=1e-3)
    with pytest.raises(ValueError, match="acc"):
        gk.grow_symmetric(*args, (*work[:2], np.zeros((2, 2)), *work[3:]), 2, min_hess=1e-3)
    with pytest.raises(ValueError, match="acc"):
        gk.grow_symmetric(*args, (*work[:2], np.zeros((0, 2, 2)), *work[3:]), 2, min_hess=1e-3)
    with pytest.raises(ValueError, match=r"work must be \(hist, tot, acc, scores, brows, bvals, count"):
        gk.grow_symmetric(*args, work[:9], 2, min_hess=1e-3)
    for bad in (np.zeros((0, 20, 2)), np.zeros((1, 19, 2)), np.zeros((1, 20, 3)), np.zeros((1, 20))):
        with pytest.raises(ValueError, match="og"):
            gk.grow_symmetric(*args, (*work[:9], bad), 2, min_hess=1e-3)
    assert gk.grow_symmetric(*args[:6], None, args[7], work, 2, min_hess=1e-3)[0] == 2
    for k, bad in ((4, np.empty((2, 19), dtype=np.int64)), (5, np.empty((20, 3))),
                   (6, np.empty(3, dtype=np.int64)), (7, np.zeros((1, off[-1] - 1, 2))),
                   (8, np.zeros((0, 2)))):
        with pytest.raises(ValueError, match="level buffers must be brows"):
            gk.grow_symmetric(*args, (*work[:k], bad, *work[k + 1:]), 2, min_hess=1e-3)
    with pytest.raises(ValueError, match="codes_t must be a C-contiguous"):
        gk.grow_symmetric(codes.T, *args[1:], work, 2, min_hess=1e-3)
    with pytest.raises(ValueError, match="parallel must be a bool"):
        gk.grow_symmetric(*args, work, 2, min_hess=1e-3, parallel=2)
